r"""The kernels of sparse products with trainable values.

A product :math:`\mathbf{A}\mathbf{X}` whose values :math:`\mathbf{A}` change at
every call (attention coefficients) is differentiated without ever forming a dense
matrix:

.. math::
    \frac{\partial \ell}{\partial \mathbf{X}} = \mathbf{A}^{\top}
    \frac{\partial \ell}{\partial \mathbf{Y}}, \qquad
    \frac{\partial \ell}{\partial a_{ij}} = \left\langle
    \left[\frac{\partial \ell}{\partial \mathbf{Y}}\right]_i,
    \mathbf{X}_j \right\rangle,

a transposed sparse-dense product and a sampled dense-dense product (SDDMM).
Both run as PyTorch sparse CSR kernels on the compressed rows of the operator and
of its transpose, and are registered as custom operators
(:func:`torch.library.custom_op`), so they work under :func:`torch.compile` and
support double backward. :func:`segment_softmax` is the softmax of the entries of
each row, with a hand-written backward.

The products of operators with one pattern and their own values per group (one per
signal and head) and their attention coefficients have CPU kernels in C++
(:mod:`~torch_geometric_san.sparse.compiled`), wrapped here as autograd functions
whose backward is made of the same kernels (and, for double backward, of
differentiable operations).
"""
import warnings
from types import ModuleType
from typing import Optional

import torch
import torch.nn.functional as F
from torch import Tensor

from torch_geometric.typing import OptTensor

from torch_geometric_san.sparse.compiled import grouped_kernels
from torch_geometric_san.utils.validation import check_has_data, check_int

__all__ = ["segment_softmax"]


def _csr(ptr: Tensor, col: Tensor, value: Tensor, num_cols: int) -> Tensor:
    return torch.sparse_csr_tensor(ptr, col, value, (ptr.numel() - 1, num_cols),
                                   check_invariants=False)


# PyTorch warns once per process that "Sparse CSR tensor support is in beta": here,
# at import, not at a user's first product. (A filter around every product, as
# before, was not thread-safe, and reset the once-per-location record of every
# other warning at each call.)
with warnings.catch_warnings():
    warnings.filterwarnings("ignore", "Sparse CSR tensor support", UserWarning)
    _csr(torch.zeros(1, dtype=torch.long), torch.zeros(0, dtype=torch.long),
         torch.zeros(0), 0)


@torch.library.custom_op("torch_geometric_san::spmm", mutates_args=())
def _spmm(ptr: Tensor, col: Tensor, t_ptr: Tensor, t_col: Tensor, t_perm: Tensor,
          t_perm_inv: Tensor, value: Tensor, t_value: Tensor, x: Tensor) -> Tensor:
    # A @ x for A = CSR(ptr, col, value); t_value = value[t_perm] holds the
    # values of the transpose, for the backward.
    if col.numel() == 0:
        return x.new_zeros(ptr.numel() - 1, x.size(1))
    # Into a fresh output with beta = 0: `A @ x` would zero an output, multiply
    # into a second one and copy it over (two extra passes over [N, F]).
    out = x.new_empty(ptr.numel() - 1, x.size(1))
    return torch.addmm(out, _csr(ptr, col, value, x.size(0)), x, beta=0.0, out=out)


@_spmm.register_fake
def _(ptr, col, t_ptr, t_col, t_perm, t_perm_inv, value, t_value, x):
    return x.new_empty(ptr.size(0) - 1, x.size(1))


@torch.library.custom_op("torch_geometric_san::spmm_power", mutates_args=())
def _spmm_power(ptr: Tensor, col: Tensor, t_ptr: Tensor, t_col: Tensor,
                t_perm: Tensor, t_perm_inv: Tensor, value: Tensor, t_value: Tensor,
                x: Tensor, hops: int) -> Tensor:
    # A^hops @ x for fixed values (no gradient for them), alternating between
    # two buffers: no backward keeps the intermediate powers.
    if col.numel() == 0:
        return x.new_zeros(ptr.numel() - 1, x.size(1))
    a = _csr(ptr, col, value, x.size(0))
    out, spare = x.new_empty(ptr.numel() - 1, x.size(1)), None
    torch.addmm(out, a, x, beta=0.0, out=out)
    for _ in range(hops - 1):
        spare = out.new_empty(out.shape) if spare is None else spare
        torch.addmm(spare, a, out, beta=0.0, out=spare)
        out, spare = spare, out
    return out


@_spmm_power.register_fake
def _(ptr, col, t_ptr, t_col, t_perm, t_perm_inv, value, t_value, x, hops):
    return x.new_empty(ptr.size(0) - 1, x.size(1))


@torch.library.custom_op("torch_geometric_san::sddmm", mutates_args=())
def _sddmm(ptr: Tensor, col: Tensor, t_ptr: Tensor, t_col: Tensor, t_perm: Tensor,
           t_perm_inv: Tensor, a: Tensor, b: Tensor) -> Tensor:
    # <a_i, b_j> for every entry (i, j) of the pattern, in its order.
    if col.numel() == 0:
        return a.new_zeros(0)
    if a.device.type == 'cpu' and 1 < a.size(1) < 8:
        # The CPU kernel is several times slower for 2-7 features than for 8
        # (found when profiling SANConv at 4 features); zero columns leave the
        # products unchanged.
        pad = (0, 8 - a.size(1))
        a, b = torch.nn.functional.pad(a, pad), torch.nn.functional.pad(b, pad)
    # Written into the values of the pattern itself (out=), so that the kernel
    # does not copy the compressed indices into a new result; zeros, since it
    # scales the values it overwrites by beta.
    value = a.new_zeros(col.numel())
    pattern = _csr(ptr, col, value, b.size(0))
    torch.sparse.sampled_addmm(pattern, a, b.t(), beta=0.0, out=pattern)
    return value


@_sddmm.register_fake
def _(ptr, col, t_ptr, t_col, t_perm, t_perm_inv, a, b):
    return a.new_empty(col.size(0))


def _setup_context(ctx, inputs, output):
    ctx.save_for_backward(*inputs)


def _spmm_setup_context(ctx, inputs, output):
    # x is needed only for the gradient of the values, the values only for
    # that of x: fixed operators (the harmonic filter) keep no features.
    *structure, value, t_value, x = inputs
    needs_value, needs_x = ctx.needs_input_grad[6], ctx.needs_input_grad[8]
    ctx.save_for_backward(*structure, value if needs_x else None,
                          t_value if needs_x else None, x if needs_value else None)


def _spmm_backward(ctx, grad_out):
    ptr, col, t_ptr, t_col, t_perm, t_perm_inv, value, t_value, x = ctx.saved_tensors
    grad_value = grad_x = None
    grad_out = grad_out.contiguous()  # made contiguous once for both kernels
    if ctx.needs_input_grad[6]:
        grad_value = _sddmm(ptr, col, t_ptr, t_col, t_perm, t_perm_inv, grad_out, x)
    if ctx.needs_input_grad[8]:
        grad_x = _spmm(t_ptr, t_col, ptr, col, t_perm_inv, t_perm, t_value, value,
                       grad_out)
    # The output does not depend on t_value (a copy of value, for the backward).
    return None, None, None, None, None, None, grad_value, None, grad_x


def _sddmm_backward(ctx, grad_out):
    ptr, col, t_ptr, t_col, t_perm, t_perm_inv, a, b = ctx.saved_tensors
    grad_a = grad_b = None
    t_grad_out = grad_out[t_perm]
    if ctx.needs_input_grad[6]:
        grad_a = _spmm(ptr, col, t_ptr, t_col, t_perm, t_perm_inv, grad_out,
                       t_grad_out, b)
    if ctx.needs_input_grad[7]:
        grad_b = _spmm(t_ptr, t_col, ptr, col, t_perm_inv, t_perm, t_grad_out,
                       grad_out, a)
    return None, None, None, None, None, None, grad_a, grad_b


def _spmm_power_setup_context(ctx, inputs, output):
    *structure, value, t_value, x, hops = inputs
    ctx.save_for_backward(*structure, value, t_value)
    ctx.hops = hops


def _spmm_power_backward(ctx, grad_out):
    # (A^T)^hops grad_out; the values are fixed (SparseOperator.matmul).
    ptr, col, t_ptr, t_col, t_perm, t_perm_inv, value, t_value = ctx.saved_tensors
    grad_x = _spmm_power(t_ptr, t_col, ptr, col, t_perm_inv, t_perm, t_value, value,
                         grad_out.contiguous(), ctx.hops)
    return None, None, None, None, None, None, None, None, grad_x, None


torch.library.register_autograd("torch_geometric_san::spmm_power",
                                _spmm_power_backward,
                                setup_context=_spmm_power_setup_context)
torch.library.register_autograd("torch_geometric_san::spmm", _spmm_backward,
                                setup_context=_spmm_setup_context)
torch.library.register_autograd("torch_geometric_san::sddmm", _sddmm_backward,
                                setup_context=_setup_context)


# The compiled kernels (compiled.py) of operators with one pattern (compressed
# rows ptr, col) and their own entries for each of G groups, [nnz, G], as
# autograd functions (lighter to call than custom operators; these run in eager
# mode only, torch.compile takes the composites). The three grouped products are
# each other's backward, so that double backward works. Each takes the kernels'
# module, and its backward uses the one its forward used (the kernels may be
# turned off in between, TGSAN_COMPILED_KERNELS being read at every call).

class _GroupedSpmm(torch.autograd.Function):
    # out[i] = sum_e value[e] * x[col[e]] over the entries e of row i, [rows, F, G]
    @staticmethod
    def forward(ctx, kernels: ModuleType, ptr: Tensor, col: Tensor, value: Tensor,
                x: Tensor) -> Tensor:
        ctx.save_for_backward(ptr, col, value, x)
        ctx.kernels = kernels
        return kernels.grouped_spmm(ptr, col, value, x)

    @staticmethod
    def backward(ctx, grad_out: Tensor):
        ptr, col, value, x = ctx.saved_tensors
        grad_out = grad_out.contiguous()
        grad_value = _GroupedSddmm.apply(ctx.kernels, ptr, col, grad_out, x) \
            if ctx.needs_input_grad[3] else None
        grad_x = _GroupedSpmmT.apply(ctx.kernels, ptr, col, value, grad_out, x.size(0)) \
            if ctx.needs_input_grad[4] else None
        return None, None, None, grad_value, grad_x


class _GroupedSpmmT(torch.autograd.Function):
    # The transposed product, out[col[e]] += value[e] * y[i], [cols, F, G]
    @staticmethod
    def forward(ctx, kernels: ModuleType, ptr: Tensor, col: Tensor, value: Tensor,
                y: Tensor, cols: int) -> Tensor:
        ctx.save_for_backward(ptr, col, value, y)
        ctx.kernels = kernels
        return kernels.grouped_spmm_t(ptr, col, value, y, cols)

    @staticmethod
    def backward(ctx, grad_out: Tensor):
        ptr, col, value, y = ctx.saved_tensors
        grad_out = grad_out.contiguous()
        grad_value = _GroupedSddmm.apply(ctx.kernels, ptr, col, y, grad_out) \
            if ctx.needs_input_grad[3] else None
        grad_y = _GroupedSpmm.apply(ctx.kernels, ptr, col, value, grad_out) \
            if ctx.needs_input_grad[4] else None
        return None, None, None, grad_value, grad_y, None


class _GroupedSddmm(torch.autograd.Function):
    # out[e] = sum_f a[i, f] * b[col[e], f] for the entries e of row i, [nnz, G]
    @staticmethod
    def forward(ctx, kernels: ModuleType, ptr: Tensor, col: Tensor, a: Tensor,
                b: Tensor) -> Tensor:
        ctx.save_for_backward(ptr, col, a, b)
        ctx.kernels = kernels
        return kernels.grouped_sddmm(ptr, col, a, b)

    @staticmethod
    def backward(ctx, grad_out: Tensor):
        ptr, col, a, b = ctx.saved_tensors
        grad_out = grad_out.contiguous()
        grad_a = _GroupedSpmm.apply(ctx.kernels, ptr, col, grad_out, b) \
            if ctx.needs_input_grad[3] else None
        grad_b = _GroupedSpmmT.apply(ctx.kernels, ptr, col, grad_out, a, b.size(0)) \
            if ctx.needs_input_grad[4] else None
        return None, None, None, grad_a, grad_b


class _Attention(torch.autograd.Function):
    # softmax over each row of LeakyReLU(nan_to_num(score)), [nnz, G], with the
    # scores given [nnz, G] or target[i] + source[col[e]] ([N, G] each).
    @staticmethod
    def forward(ctx, kernels: ModuleType, ptr: Tensor, col: Tensor,
                score: Optional[Tensor], target: Optional[Tensor],
                source: Optional[Tensor], slope: float) -> Tensor:
        alpha = kernels.attention(ptr, col, score, target, source, slope)
        ctx.save_for_backward(ptr, col, score, target, source, alpha)
        ctx.slope, ctx.kernels = slope, kernels
        return alpha

    @staticmethod
    def backward(ctx, grad_alpha: Tensor):
        ptr, col, score, target, source, alpha = ctx.saved_tensors
        tensors = (score, target, source)
        if torch.is_grad_enabled():
            # Double backward: the gradient of the composite, which is differentiable,
            # for the inputs that need one (autograd.grad refuses the others).
            needed = [t is not None and ctx.needs_input_grad[3 + i]
                      for i, t in enumerate(tensors)]
            row = torch.repeat_interleave(
                torch.arange(ptr.numel() - 1, device=ptr.device),
                (ptr[1:] - ptr[:-1]).long())
            grads = iter(torch.autograd.grad(
                _attention_composite(row, col.long(), ptr.numel() - 1, score, target,
                                     source, ctx.slope),
                [t for t, need in zip(tensors, needed) if need], grad_alpha,
                create_graph=True))
            return (None, None, None, *(next(grads) if need else None
                                        for need in needed), None)
        grads = iter(ctx.kernels.attention_backward(
            ptr, col, score, target, source, ctx.slope, alpha, grad_alpha.contiguous()))
        return (None, None, None, *(None if t is None else next(grads)
                                    for t in tensors), None)


def _attention_composite(row: Tensor, col: Tensor, num_rows: int, score: OptTensor,
                         target: OptTensor, source: OptTensor, slope: float) -> Tensor:
    # The attention coefficients (SparseOperator.attention) of the entries (row,
    # col) in PyTorch operations: from the scores, or from target[row] +
    # source[col]; nan_to_num, LeakyReLU and the softmax of each row.
    if score is None:
        assert target is not None and source is not None
        score = target.index_select(0, row) + source.index_select(0, col)
    score = F.leaky_relu(torch.nan_to_num(score), slope)
    _refuse_functorch('SparseOperator.attention')
    return _SegmentSoftmax.apply(score, row, num_rows)  # (rows checked by the operator)


def _refuse_functorch(what: str) -> None:
    # The autograd functions above and _SegmentSoftmax are written in the style
    # (forward with ctx) that torch.func's transforms do not run: they stopped on
    # torch's message about overriding setup_context. (Not asked while Dynamo traces:
    # torch.compile takes these functions as they are.)
    if not torch.compiler.is_compiling() and torch._C._are_functorch_transforms_active():
        raise NotImplementedError(
            f"{what} does not run under torch.func's transforms (grad, vjp, jacrev, "
            f"vmap, functional_call inside them, ...): use loss.backward() or "
            f"torch.autograd.grad (torch.autograd.functional.jacobian for a "
            f"Jacobian), and SANConv(ensemble=E) for E networks side by side")


def _grouped_matmul(ptr: Tensor, col: Tensor, value: Tensor, x: Tensor) -> Tensor:
    # The compiled grouped product (SparseOperator.matmul_grouped).
    _refuse_functorch('SparseOperator.matmul_grouped')
    return _GroupedSpmm.apply(grouped_kernels(), ptr, col, value.contiguous(),
                              x.contiguous())


def _grouped_sddmm(ptr: Tensor, col: Tensor, a: Tensor, b: Tensor) -> Tensor:
    # The compiled grouped sampled product (SparseOperator.sddmm_grouped).
    _refuse_functorch('SparseOperator.sddmm_grouped')
    return _GroupedSddmm.apply(grouped_kernels(), ptr, col, a.contiguous(),
                               b.contiguous())


def _attention(ptr: Tensor, col: Tensor, score: Optional[Tensor], target: Optional[Tensor],
              source: Optional[Tensor], slope: float) -> Tensor:
    # The compiled attention coefficients (SparseOperator.attention).
    _refuse_functorch('SparseOperator.attention')
    contiguous = (lambda t: None if t is None else t.contiguous())
    return _Attention.apply(grouped_kernels(), ptr, col, contiguous(score),
                            contiguous(target), contiguous(source), float(slope))


class _SegmentSoftmax(torch.autograd.Function):
    # Softmax of the entries of each row, with the gradient
    # out * (g - sum_row(g * out)): two entry-sized arrays each way where the
    # composite of gathers, scatters and divisions allocates about ten.

    @staticmethod
    def forward(ctx, src: Tensor, index: Tensor, num_nodes: int) -> Tensor:
        size = (num_nodes, *src.shape[1:])
        expanded = index.view(-1, *(1, ) * (src.dim() - 1)).expand_as(src)
        row_max = src.new_empty(size).scatter_reduce_(0, expanded, src, 'amax',
                                                      include_self=False)
        if torch.compiler.is_compiling():
            # Out of place: Dynamo (torch 2.11) saved the tensor as it was before
            # the in-place steps below, and the backward was wrong; Inductor
            # fuses these steps anyway.
            out = (src - row_max.index_select(0, index)).exp()
            out = out / src.new_zeros(size).index_add(0, index, out).index_select(0, index)
        else:
            out = row_max.index_select(0, index)
            torch.sub(src, out, out=out).exp_()
            row_sum = src.new_zeros(size).index_add_(0, index, out)
            out.div_(row_sum.index_select(0, index))
        ctx.save_for_backward(out, index)
        ctx.num_nodes = num_nodes
        return out

    @staticmethod
    def backward(ctx, grad_out: Tensor):
        out, index = ctx.saved_tensors
        size = (ctx.num_nodes, *out.shape[1:])
        row_dot = out.new_zeros(size).index_add(0, index, grad_out * out)
        if torch.is_grad_enabled():  # double backward: differentiable ops only
            return out * (grad_out - row_dot.index_select(0, index)), None, None
        grad = row_dot.index_select(0, index)
        return torch.sub(grad_out, grad, out=grad).mul_(out), None, None


def segment_softmax(src: Tensor, index: Tensor, num_nodes: int) -> Tensor:
    r"""The softmax of the entries :obj:`src` :obj:`[nnz, ...]` over each row
    :math:`i` of the pattern, :math:`\exp(s_{ij}) / \sum_{k} \exp(s_{ik})`,
    as :func:`torch_geometric.utils.softmax` by :obj:`index` (the targets,
    :obj:`[nnz]`), with a hand-written backward that allocates two arrays
    of the size of :obj:`src` instead of about ten. Supports double backward.

    Args:
        src (torch.Tensor): The scores :obj:`[nnz, ...]`.
        index (torch.Tensor): The row of each entry, :obj:`[nnz]`.
        num_nodes (int): The number of rows; every entry of :obj:`index` in
            :math:`[0, \text{num\_nodes})`.

    Returns:
        torch.Tensor: The coefficients, shaped as :obj:`src`; every non-empty
        row of finite scores sums to one (a row whose scores are all
        :math:`-\infty`, or hold NaN, gives NaN, as :func:`torch.softmax`;
        :meth:`SparseOperator.attention
        <torch_geometric_san.sparse.SparseOperator.attention>` replaces such
        scores first).
    """
    num_nodes = check_int(num_nodes, 'num_nodes', minimum=0)
    for name, value in (('src', src), ('index', index)):
        if not isinstance(value, Tensor):  # (an AttributeError below otherwise)
            raise TypeError(f"'{name}' must be a tensor, not {type(value).__name__}")
        if value.layout != torch.strided:  # (failed inside ATen's sparse kernels)
            raise TypeError(f"'{name}' must be a dense tensor, not {value.layout}")
    check_has_data(index, "'index'")
    if src.device != index.device:
        raise ValueError(f"'src' is on {src.device} but 'index' on {index.device}")
    if index.dtype != torch.long or index.dim() != 1 or src.dim() == 0 \
            or index.numel() != src.size(0):
        raise ValueError(f"expected a torch.long index [nnz] with one row per "
                         f"entry of src (got an index of {index.dtype}, shape "
                         f"{list(index.shape)}, for src of shape {list(src.shape)})")
    if not src.is_floating_point():
        raise TypeError(f"expected floating-point scores src, got {src.dtype}")
    if index.numel() and (int(index.min()) < 0 or int(index.max()) >= num_nodes):
        raise ValueError(f"index holds rows outside [0, {num_nodes}) (found "
                         f"{int(index.min())} to {int(index.max())})")
    _refuse_functorch('segment_softmax')
    return _SegmentSoftmax.apply(src, index, num_nodes)


