r"""Filters of a sparse operator on signals in groups: the propagation interface
of the layers.

Signals are :obj:`[B, N, G, W]`: :math:`B` signals on one complex, :math:`N`
simplices, :math:`G` groups per signal (attention heads) of :math:`W` features.
The values of the operator are either :obj:`[nnz]`, the same for every signal
and group (fixed operators: one product over :obj:`[N, B G W]`), or
:obj:`[nnz, B G]`, one set per signal and group (attention coefficients,
computed side by side on the shared pattern). Per-group values are applied
through the block-diagonal operator of :math:`B G` copies of the pattern (one
product), or, for narrow groups (:data:`GATHER_MAX_WIDTH` features, and
:data:`GATHER_MAX_WIDTH_COMPILED` where the compiled CPU kernel does it), by
gathering the features of each entry for all groups at once
(:meth:`~torch_geometric_san.sparse.SparseOperator.matmul_grouped`), which is
also the way for several groups under :func:`torch.compile`;
``benchmarks/propagation.py`` measures both ways and the choice between them.

:func:`polynomial` evaluates :math:`\sum_{p=1}^{J}\mathbf{A}^p\mathbf{H}_p` by
Horner's rule, :math:`\mathbf{A}(\mathbf{H}_1 + \mathbf{A}(\mathbf{H}_2 + \dots
+ \mathbf{A}\mathbf{H}_J))`; :func:`powers` gives
:math:`\mathbf{A}\mathbf{X}, \dots, \mathbf{A}^J\mathbf{X}`; :func:`sddmm` the
sampled products :math:`\langle \mathbf{a}_i, \mathbf{b}_j\rangle` per entry and
group.
"""
from typing import List, Optional, Sequence

import torch
from torch import Tensor

from torch_geometric_san.sparse.compiled import available_for
from torch_geometric_san.sparse.operator import SparseOperator
from torch_geometric_san.utils.validation import check_int

__all__ = ["prepare", "polynomial", "powers", "sddmm", "accumulate",
           "GATHER_MAX_WIDTH", "GATHER_MAX_WIDTH_COMPILED"]

#: Groups of at most this many features are propagated by gathering
#: (:meth:`SparseOperator.matmul_grouped`), wider ones through the
#: block-diagonal operator, where the gathering runs as a composite of PyTorch
#: operations.
GATHER_MAX_WIDTH = 1
#: The same limit where the gathering runs in the compiled CPU kernel
#: (:func:`~torch_geometric_san.sparse.compiled.available_for`).
GATHER_MAX_WIDTH_COMPILED = 8


class _Layout:
    # How signals [B, N, G, W] meet one operator with values [nnz] ('wide':
    # [N, B*G*W]) or [nnz, B*G] ('block': [B*G*N, W] against the block-diagonal
    # operator; 'gather': [N, W, B*G], gathered entry by entry).
    def __init__(self, op: SparseOperator, x: Tensor, per_group: bool,
                 gather: Optional[bool]):
        B, _, G, W = shape = tuple(x.shape)
        self.op, self.shape, self.dtype = op, shape, x.dtype
        if gather is None:
            # Several groups are always gathered under torch.compile: Inductor
            # fuses the gather, product and sum, and (torch 2.13) computed wrong
            # input gradients through block-diagonal products in the same graph
            # as their coefficients.
            limit = GATHER_MAX_WIDTH_COMPILED if available_for(x) else GATHER_MAX_WIDTH
            gather = B * G > 1 and (W <= limit or torch.compiler.is_compiling())
        self.mode = 'wide' if not per_group else 'gather' if gather else 'block'

    def to_layout(self, x: Tensor) -> Tensor:
        B, N, G, W = x.shape
        if self.mode == 'wide':
            return x.transpose(0, 1).reshape(N, B * G * W)
        if self.mode == 'block':
            return x.transpose(1, 2).reshape(B * G * N, W)
        return x.permute(1, 3, 0, 2).reshape(N, W, B * G).contiguous()

    def from_layout(self, y: Tensor) -> Tensor:
        B, _, G, W = self.shape
        R = self.op.shape[0]
        if self.mode == 'wide':
            return y.view(R, B, G, W).transpose(0, 1)
        if self.mode == 'block':
            return y.view(B, G, R, W).transpose(1, 2)
        return y.view(R, W, B, G).permute(2, 0, 3, 1)

    def product(self, value: Optional[Tensor]):
        # y -> A^hops y in this layout, the transposed values shared by every
        # product's backward.
        op = self.op
        if self.mode == 'gather':
            def gathered(y: Tensor, hops: int = 1) -> Tensor:
                for _ in range(hops):
                    y = op.matmul_grouped(value, y)
                return y
            return gathered
        if self.mode == 'block':
            op, value = op.expand(value.size(1)), value.t().reshape(-1)
        if value is None:  # (the fixed values in the signals' dtype, as matmul takes them)
            value = op._fixed('products with value None').to(self.dtype)
        t_value = op.transpose_values(value)
        return lambda y, hops=1: op.matmul(y, value, hops, t_value)


@torch.compiler.disable
def prepare(op: SparseOperator) -> None:
    r"""Derives now the compressed rows of :obj:`op` and of its transpose, and the
    transposed fixed values, so that a caller compiled with :func:`torch.compile`
    finds them on the operator (as inputs of its graph) instead of breaking its
    graph where they are first needed (per-group products gather under
    :func:`torch.compile`, so they need no block-diagonal copies).

    Args:
        op (SparseOperator): The operator.
    """
    op.structure()
    if op.weight is not None:
        op.transpose_values(op.weight)


def polynomial(op: SparseOperator, value: Optional[Tensor],
               taps: Sequence[Tensor], gather: Optional[bool] = None) -> Tensor:
    r"""The filter :math:`\sum_{p=1}^{J}\mathbf{A}^p\mathbf{H}_p` by Horner's rule:
    :math:`J` products with the same values.

    Args:
        op (SparseOperator): The operator :math:`\mathbf{A}`.
        value (torch.Tensor, optional): Its values, :obj:`[nnz]` or
            :obj:`[nnz, B G]`; :obj:`None`: the operator's fixed values.
        taps (Sequence[torch.Tensor]): :math:`\mathbf{H}_1, \dots,
            \mathbf{H}_J`, :obj:`[B, N, G, W]` each.
        gather (bool, optional): Whether per-group values are applied by
            gathering (:obj:`True`) or through the block-diagonal operator
            (:obj:`False`). (default: by width, :data:`GATHER_MAX_WIDTH` or
            :data:`GATHER_MAX_WIDTH_COMPILED`)

    Returns:
        torch.Tensor: The filtered signals, :obj:`[B, rows, G, W]`.
    """
    if len(taps) == 0:
        raise ValueError("the filter needs at least one tap H_1")
    for tap in taps[1:]:
        if tap.shape != taps[0].shape:
            raise ValueError(f"the taps must have one shape, got "
                             f"{[list(t.shape) for t in taps]}")
    if len(taps) > 1:  # (A's products are taken again: it must be square)
        op._square(f'a filter of {len(taps)} taps')
    layout = _layout_for(op, value, taps[0], gather)
    product = layout.product(value)
    taps = [layout.to_layout(t) for t in taps]
    out = product(taps[-1])
    for tap in reversed(taps[:-1]):
        out = product(accumulate(out, tap))
    return layout.from_layout(out)


def powers(op: SparseOperator, value: Optional[Tensor], x: Tensor, num: int,
           hops: int = 1, gather: Optional[bool] = None) -> List[Tensor]:
    r"""The powers :math:`[\mathbf{A}^{h}\mathbf{X}, \mathbf{A}^{2h}\mathbf{X},
    \dots]`. Fixed values take the :math:`h` products of each power in two
    buffers each way.

    Args:
        op (SparseOperator): The (square) operator :math:`\mathbf{A}`.
        value (torch.Tensor, optional): Its values, as in :func:`polynomial`.
        x (torch.Tensor): The signals :math:`\mathbf{X}`, :obj:`[B, N, G, W]`.
        num (int): The number of powers.
        hops (int, optional): :math:`h`, the products per power. (default: 1)
        gather (bool, optional): As in :func:`polynomial`.

    Returns:
        List[torch.Tensor]: :obj:`num` tensors :obj:`[B, N, G, W]`.
    """
    num = check_int(num, "'num'", minimum=1)
    hops = check_int(hops, "'hops'", minimum=1)
    if num * hops > 1:  # (A's products are taken again: it must be square)
        op._square(f'{num} powers of {hops} products')
    layout = _layout_for(op, value, x, gather)
    product = layout.product(value)
    out = [product(layout.to_layout(x), hops)]
    for _ in range(num - 1):
        out.append(product(out[-1], hops))
    return [layout.from_layout(y) for y in out]


def sddmm(op: SparseOperator, a: Tensor, b: Tensor,
          gather: Optional[bool] = None) -> Tensor:
    r"""The sampled products :math:`\langle \mathbf{a}_i, \mathbf{b}_j\rangle`
    of every entry :math:`(i, j)`, signal and group.

    Args:
        op (SparseOperator): The pattern.
        a (torch.Tensor): :obj:`[B, rows, G, W]`.
        b (torch.Tensor): :obj:`[B, cols, G, W]`.
        gather (bool, optional): As in :func:`polynomial`.

    Returns:
        torch.Tensor: :obj:`[nnz, B G]`.
    """
    rows, cols = op.shape
    if (a.dim() != 4 or b.dim() != 4 or a.size(1) != rows or b.size(1) != cols
            or a.shape[:1] + a.shape[2:] != b.shape[:1] + b.shape[2:]):
        raise ValueError(f"expected a [B, {rows}, G, W] and b [B, {cols}, G, W], got "
                         f"{list(a.shape)} and {list(b.shape)}")
    B, _, G, _ = b.shape
    if op.nnz == 0:  # (the block products' view had no size to infer)
        return a.new_zeros(0, B * G)
    layout = _Layout(op, b, True, gather)
    a, b = layout.to_layout(a), layout.to_layout(b)
    if layout.mode == 'gather':
        return op.sddmm_grouped(a, b)
    return op.expand(B * G).sddmm(a, b).view(-1, op.nnz).t()


def _layout_for(op: SparseOperator, value: Optional[Tensor], x: Tensor,
                gather: Optional[bool]) -> _Layout:
    if x.dim() != 4 or x.size(1) != op.shape[1]:
        raise ValueError(f"expected signals [B, {op.shape[1]}, G, W], got "
                         f"{list(x.shape)}")
    B, _, G, _ = x.shape
    per_group = value is not None and value.dim() == 2
    if per_group and value.shape != (op.nnz, B * G):
        raise ValueError(f"expected values [{op.nnz}, {B * G}] (one per entry, "
                         f"signal and group), got {list(value.shape)}")
    return _Layout(op, x, per_group, gather)


def accumulate(out: Tensor, other: Tensor) -> Tensor:
    r""":obj:`out + other`, in place where :obj:`out` is a tensor of its own
    (a product's output, which no backward keeps: the filters' outputs are);
    an in-place sum into a view would make the backward copy the gradient of
    the view's base, so views are summed out of place.

    Args:
        out (torch.Tensor): The sum so far.
        other (torch.Tensor): The term to add (broadcast to :obj:`out`).

    Returns:
        torch.Tensor: The sum.
    """
    return out + other if out._base is not None else out.add_(other)
