r"""Sparse operators on the simplices of one order, and their products.

A :class:`SparseOperator` holds the sparsity pattern of an operator such as a
Laplacian :math:`\mathbf{L}_k^{(u)}` in compressed-row form, together with the
compressed-row form of its transpose, so that a product
:math:`\mathbf{A}\mathbf{X}` whose values :math:`\mathbf{A}` change at every
call (attention coefficients) can be differentiated without ever forming a
dense matrix:

.. math::
    \frac{\partial \ell}{\partial \mathbf{X}} = \mathbf{A}^{\top}
    \frac{\partial \ell}{\partial \mathbf{Y}}, \qquad
    \frac{\partial \ell}{\partial a_{ij}} = \left\langle
    \left[\frac{\partial \ell}{\partial \mathbf{Y}}\right]_i,
    \mathbf{X}_j \right\rangle,

a transposed sparse-dense product and a sampled dense-dense product (SDDMM).
Both run as PyTorch sparse CSR kernels and are registered as custom operators
(:func:`torch.library.custom_op`), so they work under :func:`torch.compile`
and support double backward.

Index pairs follow PyG's ``edge_index`` convention: row 0 holds the source
:math:`j`, row 1 the target :math:`i` of the entry :math:`a_{ij}`.
"""
import warnings
from typing import Dict, Optional, Tuple, Union

import torch
from torch import Tensor

from torch_geometric.typing import SparseTensor
from torch_geometric.utils import is_torch_sparse_tensor, to_edge_index

__all__ = ["SparseOperator", "segment_softmax", "to_index_weight"]


def _csr(ptr: Tensor, col: Tensor, value: Tensor, num_cols: int) -> Tensor:
    with warnings.catch_warnings():  # "Sparse CSR tensor support is in beta"
        warnings.simplefilter("ignore", UserWarning)
        return torch.sparse_csr_tensor(ptr, col, value, (ptr.numel() - 1, num_cols),
                                       check_invariants=False)


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
        # (measured: 7 ms at 4 features, 1.2 ms at 8, on 370k entries); zero
        # columns leave the products unchanged.
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
        num_nodes (int): The number of rows.

    Returns:
        torch.Tensor: The coefficients, shaped as :obj:`src`; every non-empty
        row sums to one.
    """
    if index.dtype != torch.long or index.dim() != 1 or src.dim() == 0 \
            or index.numel() != src.size(0):
        raise ValueError(f"expected a torch.long index [nnz] with one row per "
                         f"entry of src (got an index of {index.dtype}, shape "
                         f"{list(index.shape)}, for src of shape {list(src.shape)})")
    return _SegmentSoftmax.apply(src, index, num_nodes)


def _compressed(index: Tensor) -> Tensor:
    # Compressed-row indices as int32 where they fit, which the CPU (MKL)
    # sparse kernels take without a conversion on every call.
    fits = index.numel() == 0 or int(index.max()) < 2**31 - 1
    return index.int() if fits else index


class SparseOperator:
    r"""The sparsity pattern (and optional fixed values) of a square operator on
    :obj:`num_nodes` simplices, in compressed-row form together with its
    transpose.

    Entries are coalesced (duplicates summed) and sorted by target, then
    source; the compressed indices are ``int32`` where they fit, which the CPU
    sparse kernels take without converting them on every call. Build one with
    :meth:`from_index`; it is immutable afterwards.

    Args:
        index (torch.Tensor): Coalesced indices :obj:`[2, nnz]`, sorted by
            target (row 1), then source (row 0).
        weight (torch.Tensor, optional): Fixed values :obj:`[nnz]` in the same
            order. (default: :obj:`None`)
        num_nodes (int): The number of simplices.
    """
    def __init__(self, index: Tensor, weight: Optional[Tensor], num_nodes: int):
        self.index = index
        self.weight = weight
        self.num_nodes = num_nodes
        ptr = torch._convert_indices_from_coo_to_csr(index[1], num_nodes)
        self.ptr = _compressed(ptr)
        self.col = index[0].to(self.ptr.dtype)
        self._transposed: Optional[Tuple[Tensor, Tensor, Tensor, Tensor]] = None
        self._t_weight: Optional[Tensor] = None
        self._expanded: Dict[int, 'SparseOperator'] = {1: self}

    def transposed(self) -> Tuple[Tensor, Tensor, Tensor, Tensor]:
        r"""The compressed rows of the transpose, computed on first use:
        :obj:`(t_ptr, t_col, t_perm, t_perm_inv)`, where :obj:`t_perm` maps the
        entries of the transpose to this operator's entries and
        :obj:`t_perm_inv` back."""
        if self._transposed is None:
            src, dst = self.index[0], self.index[1]
            t_perm = torch.argsort(src * self.num_nodes + dst)
            t_perm_inv = torch.empty_like(t_perm)
            t_perm_inv[t_perm] = torch.arange(t_perm.numel(), device=src.device)
            t_ptr = torch._convert_indices_from_coo_to_csr(src[t_perm], self.num_nodes)
            self._transposed = (t_ptr.to(self.ptr.dtype), dst[t_perm].to(self.ptr.dtype),
                                t_perm, t_perm_inv)
        return self._transposed

    def transpose_values(self, value: Tensor) -> Tensor:
        r"""The entries :obj:`value` of this operator, in the order of its
        transpose (cached for the fixed weights)."""
        if value is self.weight:
            if self._t_weight is None:
                self._t_weight = value[self.transposed()[2]]
            return self._t_weight
        return value[self.transposed()[2]]

    @classmethod
    def from_index(cls, index: Tensor, weight: Optional[Tensor],
                   num_nodes: int) -> 'SparseOperator':
        r"""Validates and coalesces an operator given as :obj:`(index, weight)`.

        Args:
            index (torch.Tensor): Indices :obj:`[2, nnz]` (source, target).
            weight (torch.Tensor, optional): Values :obj:`[nnz]`.
            num_nodes (int): The number of simplices.

        Returns:
            SparseOperator: The coalesced operator.
        """
        if not isinstance(index, Tensor) or index.dtype != torch.long:
            raise TypeError(f"expected a torch.long index tensor of shape "
                            f"[2, nnz], got {_describe(index)}")
        if index.dim() != 2 or index.size(0) != 2:
            raise ValueError(f"expected an index of shape [2, nnz], got "
                             f"{list(index.shape)}")
        if weight is not None:
            if not isinstance(weight, Tensor) or not weight.is_floating_point():
                raise TypeError(f"expected a floating-point weight tensor, got "
                                f"{_describe(weight)}")
            if weight.shape != (index.size(1), ):
                raise ValueError(f"expected a weight of shape [{index.size(1)}] "
                                 f"matching the index, got {list(weight.shape)}")
            if not bool(torch.isfinite(weight).all()):
                raise ValueError("the weight has NaN or infinite entries")
        if index.numel() > 0 and (int(index.min()) < 0
                                  or int(index.max()) >= num_nodes):
            raise ValueError(f"index holds entries outside [0, {num_nodes}) "
                             f"(min {int(index.min())}, max {int(index.max())}); "
                             f"it does not match the {num_nodes} simplices of x")
        index, weight = _coalesce(index, weight, num_nodes)
        return cls(index, weight, num_nodes)

    @property
    def nnz(self) -> int:
        r"""The number of stored entries."""
        return self.index.size(1)

    def neighbourhood(self, self_loops: bool) -> 'SparseOperator':
        r"""The attention neighbourhood: the off-diagonal non-zero pattern,
        plus a self-loop on every simplex whose row has a non-zero entry if
        :obj:`self_loops` is set (which reproduces the pattern of a
        Laplacian). The values become the signs of the entries (self-loops:
        +1), or :obj:`None` if this operator has no values.
        """
        src, dst = self.index
        n, device = self.num_nodes, dst.device
        diag = src == dst
        keep = ~diag if self.weight is None else (self.weight != 0) & ~diag
        if self_loops:  # rows with a non-zero entry keep or get a self-loop
            has_row = torch.zeros(n, dtype=torch.bool, device=device)
            has_row[dst if self.weight is None else dst[self.weight != 0]] = True
            keep |= diag & has_row[dst]
        index = self.index[:, keep]
        sign = None
        if self.weight is not None:
            sign = torch.where(diag[keep], 1.0, self.weight[keep].sign())
        if self_loops:
            missing = has_row.clone()
            missing[index[0][index[0] == index[1]]] = False
            if bool(missing.any()):
                loops = missing.nonzero().view(-1)
                index = torch.cat([index, loops.expand(2, -1)], dim=1)
                if sign is not None:
                    sign = torch.cat([sign, sign.new_ones(loops.numel())])
                index, sign = _coalesce(index, sign, n)
        return SparseOperator(index, sign, n)

    def shifted(self, eps: float) -> 'SparseOperator':
        r"""The operator :math:`\mathbf{I} - \epsilon\mathbf{A}` (requires
        fixed values)."""
        assert self.weight is not None
        n = self.num_nodes
        diag = self.index[0] == self.index[1]
        value = -eps * self.weight
        if int(diag.sum()) == n:  # the diagonal is there: same pattern
            return SparseOperator(self.index, value + diag.to(value.dtype), n)
        loops = torch.arange(n, device=self.index.device)
        index = torch.cat([self.index, loops.expand(2, -1)], dim=1)
        value = torch.cat([value, value.new_ones(n)])
        return SparseOperator(*_coalesce(index, value, n), n)

    @torch.compiler.disable
    def expand(self, groups: int) -> 'SparseOperator':
        r"""The block-diagonal operator of :obj:`groups` copies of the pattern
        (one per head and signal), so that one product applies a different set
        of values to each group (:obj:`groups=1`: this operator), with its
        transpose ready. Cached per number of groups.

        Runs eagerly under :func:`torch.compile` (index bookkeeping only)."""
        if groups not in self._expanded:
            n, nnz = self.num_nodes, self.nnz
            offset = torch.arange(groups, device=self.index.device)
            shift = (offset * n).view(-1, 1)
            step = (offset * nnz).view(-1, 1)
            index = (self.index.unsqueeze(1) + shift.view(1, -1, 1)).view(2, -1)
            op = SparseOperator(index, None, groups * n)
            t_ptr, t_col, t_perm, t_perm_inv = self.transposed()
            t_ptr = torch.cat([(t_ptr[:-1].long().unsqueeze(0) + step).view(-1),
                               t_ptr.new_full((1, ), groups * nnz).long()])
            t_col = (t_col.long().unsqueeze(0) + shift).view(-1)
            op._transposed = (_compressed(t_ptr), t_col.to(_compressed(t_ptr).dtype),
                              (t_perm.unsqueeze(0) + step).view(-1),
                              (t_perm_inv.unsqueeze(0) + step).view(-1))
            self._expanded[groups] = op
        op = self._expanded[groups]
        op.transposed()
        return op

    def _structure(self) -> Tuple[Tensor, ...]:
        return (self.ptr, self.col, *self.transposed())

    def matmul(self, value: Tensor, x: Tensor, t_value: Optional[Tensor] = None,
               hops: int = 1) -> Tensor:
        r"""The product :math:`\mathbf{A}^{hops}\mathbf{X}` with entries
        :obj:`value` :obj:`[nnz]` (in this operator's order) and :obj:`x`
        :obj:`[N, F]`; pass :obj:`t_value` (:meth:`transpose_values`) to share
        it between products with the same values. Values that need no gradient
        (fixed operators) take :obj:`hops` products in two buffers each way,
        forward and backward, keeping none of the intermediate powers."""
        if not isinstance(hops, int) or hops < 0:
            raise ValueError(f"'hops' must be an int >= 0 (got {hops!r})")
        if t_value is None:
            t_value = self.transpose_values(value)
        if hops > 1 and not value.requires_grad:
            return _spmm_power(*self._structure(), value, t_value, x, hops)
        for _ in range(hops):
            x = _spmm(*self._structure(), value, t_value, x)
        return x

    def sddmm(self, a: Tensor, b: Tensor) -> Tensor:
        r"""The sampled product :math:`\langle \mathbf{a}_i, \mathbf{b}_j
        \rangle` for every entry :math:`(i, j)`, returned as :obj:`[nnz]`."""
        return _sddmm(*self._structure(), a, b)

    def matmul_grouped(self, value: Tensor, x: Tensor) -> Tensor:
        r"""The products of :math:`G` operators with this pattern, each with
        its own entries, :obj:`value` :obj:`[nnz, G]`, and its own features,
        :obj:`x` :obj:`[N, F, G]` (groups last), returned as :obj:`[N, F, G]`.
        Computed by gathering the source rows and summing them per target,
        which beats :meth:`expand` for one or two features per group."""
        src, dst = self.index
        n, features, groups = x.shape
        msg = x.reshape(n, features * groups).index_select(0, src)
        # One feature: [nnz, G] products, without broadcasting (nor, in the
        # backward, summing) over a feature dimension of size 1.
        msg = (msg * value if features == 1 else
               msg.view(-1, features, groups) * value.unsqueeze(1))
        out = msg.new_zeros(n, *msg.shape[1:]).index_add_(0, dst, msg)
        return out.view(x.shape)

    def sddmm_grouped(self, a: Tensor, b: Tensor) -> Tensor:
        r"""The sampled products :math:`\langle \mathbf{a}_i, \mathbf{b}_j
        \rangle` of every entry :math:`(i, j)` and group, from :obj:`a` and
        :obj:`b` :obj:`[N, F, G]`, returned as :obj:`[nnz, G]`."""
        src, dst = self.index
        if a.size(1) == 1:
            a, b = a.squeeze(1), b.squeeze(1)
        product = a.index_select(0, dst) * b.index_select(0, src)
        return product if product.dim() == 2 else product.sum(dim=1)

    def __repr__(self) -> str:
        return (f"{self.__class__.__name__}(num_nodes={self.num_nodes}, "
                f"nnz={self.nnz}, weighted={self.weight is not None})")


def _coalesce(index: Tensor, value: Optional[Tensor],
              num_nodes: int) -> Tuple[Tensor, Optional[Tensor]]:
    # Sorts entries by (target, source) and sums duplicates; a no-op (one
    # pass) on input that is already sorted and free of duplicates.
    key = index[1] * num_nodes + index[0]
    if key.numel() > 1 and not bool((key[1:] > key[:-1]).all()):
        key, perm = torch.sort(key)
        index = index[:, perm]
        value = None if value is None else value[perm]
        if bool((key[1:] == key[:-1]).any()):
            key, inverse = torch.unique_consecutive(key, return_inverse=True)
            index = torch.stack([key % num_nodes, key // num_nodes])
            if value is not None:
                value = value.new_zeros(key.numel()).index_add_(0, inverse, value)
    return index, value


def to_index_weight(
    adj: Union[Tensor, SparseTensor],
    weight: Optional[Tensor] = None,
) -> Tuple[Tensor, Optional[Tensor]]:
    r"""Normalises an operator given as an :obj:`edge_index`-style index with
    optional weights, a :class:`torch_sparse.SparseTensor` or a
    :class:`torch.sparse` tensor into :obj:`(index, weight)`.

    Sparse inputs follow PyG's convention of the *transposed* adjacency
    :obj:`adj_t` (sparse row = target :math:`i`, column = source :math:`j`)
    and carry their own values, so :obj:`weight` must then be :obj:`None`.

    Args:
        adj (torch.Tensor or SparseTensor): An index :obj:`[2, nnz]` (row 0
            source, row 1 target), a :class:`torch_sparse.SparseTensor` or a
            :class:`torch.sparse` tensor.
        weight (torch.Tensor, optional): The values :obj:`[nnz]` of an index
            input. (default: :obj:`None`)

    Returns:
        (torch.Tensor, torch.Tensor or None): The index :obj:`[2, nnz]` and
        the values :obj:`[nnz]` (floating point), or :obj:`None` where none
        were given.
    """
    if isinstance(adj, SparseTensor) or is_torch_sparse_tensor(adj):
        if weight is not None:
            raise ValueError("a sparse operator carries its own values; pass "
                             "its weight as None")
        if isinstance(adj, SparseTensor):
            row, col, weight = adj.coo()
            index = torch.stack([col, row])
        else:
            index, weight = to_edge_index(adj)
            index = index.flip(0)
        if weight is not None and not weight.is_floating_point():
            weight = weight.to(torch.get_default_dtype())
        return index, weight
    if isinstance(adj, Tensor):
        return adj, weight
    raise TypeError(f"expected an index tensor, a SparseTensor or a torch.sparse "
                    f"tensor, got {_describe(adj)}")


def _describe(obj) -> str:
    if isinstance(obj, Tensor):
        return f"a {obj.dtype} tensor of shape {list(obj.shape)}"
    return f"an object of type {type(obj).__name__}"
