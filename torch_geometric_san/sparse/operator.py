r"""A sparse operator that derives its other forms once and keeps them."""
from typing import Any, Callable, Dict, Optional, Tuple, Union

import numpy as np
import scipy.sparse as sp
import torch
from scipy.linalg import eigh_tridiagonal
from scipy.linalg.blas import daxpy, ddot, dnrm2, dscal
from threadpoolctl import ThreadpoolController
from torch import Tensor
from torch.autograd import forward_ad

from torch_geometric.typing import SparseTensor
from torch_geometric.utils import is_torch_sparse_tensor, to_edge_index
from torch_geometric.utils.sparse import index2ptr

from torch_geometric_san.sparse.compiled import available_for
from torch_geometric_san.utils.validation import (FLOAT_DTYPE_NAMES, FLOAT_DTYPES,
                                                  check_bool, check_float_dtype,
                                                  check_has_data,
                                                  check_int, check_real, check_slope,
                                                  check_sparse_precision)
from torch_geometric_san.sparse.kernels import (_attention, _attention_composite,
                                               _grouped_matmul, _grouped_sddmm, _sddmm,
                                               _spmm, _spmm_power)

__all__ = ["SparseOperator", "to_index_weight", "largest_eigenvalue",
           "DENSE_EIGEN_LIMIT", "EIGEN_TOL"]

#: The derived forms that depend on the pattern alone, not on the values.
_PATTERN_FORMS = ('structure', 'expand')

#: The shifted forms an operator keeps, the latest for as many values of eps
#: (layers sharing the operator with different eps each find theirs; a sweep of
#: eps keeps no more).
_SHIFTED_KEPT = 4
#: Matrices up to this size get their largest eigenvalue from a dense solver.
DENSE_EIGEN_LIMIT = 512
#: Relative tolerance of the Lanczos solver for larger matrices in single
#: precision.
EIGEN_TOL = 1e-6
#: Its tolerance in double precision: a few units of float64 rounding.
_DOUBLE_TOL = 8 * float(np.finfo(np.float64).eps)
#: Rows longer than this get the single-precision Lanczos products in double
#: precision: a sum of that many float32 terms rounds beyond EIGEN_TOL.
_LONG_ROW = 1024
#: The BLAS libraries loaded with NumPy and SciPy (scanning them takes milliseconds).
_THREADPOOLS = ThreadpoolController()

Shape = Union[int, Tuple[int, int]]


class _Immutable:
    # Attributes (the class's _FIELDS) are set once, when the object is made: a
    # value may be shared (data.operators(k) keeps its value; the forms derived from
    # an operator are kept on it), so a change in place would reach every holder,
    # and leave the kept forms stale. No attribute is added or deleted either.
    _FIELDS: frozenset = frozenset()

    def __setattr__(self, name: str, value: Any) -> None:
        if name in self.__dict__ or name not in self._FIELDS:
            raise AttributeError(f"{type(self).__name__} is immutable (it may be "
                                 f"shared, and its derived forms are kept on it): "
                                 f"build a new one instead of setting '{name}'")
        super().__setattr__(name, value)

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable (it may be shared, "
                             f"and its derived forms are kept on it): '{name}' cannot "
                             f"be deleted")

    def _replace(self, name: str, value: Any) -> None:
        # For the class's own methods, on a value they have just made.
        object.__setattr__(self, name, value)


class SparseOperator(_Immutable):
    r"""A sparse matrix :math:`\mathbf{A}` of shape :obj:`(rows, cols)` acting on
    signals :math:`\mathbf{X}` of :obj:`cols` rows, :math:`\mathbf{A}\mathbf{X}`.

    It holds entries in PyG's :obj:`edge_index` style (row 0 of :obj:`index` the
    source :math:`j`, a column; row 1 the target :math:`i`, a row), coalesced and
    sorted by target, then source, with optional fixed values. Every other form a
    layer needs is derived on first use, once, and kept on the operator: the
    compressed rows of the operator and of its transpose (``int32`` where they
    fit), the transpose :meth:`t`, the attention :meth:`neighbourhood` with or
    without self-loops, the harmonic shift :meth:`shifted`
    :math:`\mathbf{I} - \epsilon\mathbf{A}`, the spectral normalisation
    :meth:`scaled` :math:`\mathbf{A} / \lambda_{\max}` and the block-diagonal
    copies of :meth:`expand`. An operator is immutable (setting an attribute
    raises an :class:`AttributeError`); :meth:`to` gives a copy
    on another device, and pickling (:func:`torch.save`, :func:`copy.deepcopy`)
    keeps the entries and drops the derived forms, which are derived again on
    use. Its tensors are not copied (except a non-contiguous index): after a
    change of them in place the forms are derived again (seen by their version
    counters, as :meth:`~torch_geometric_san.data.SimplicialComplexData.operators`
    sees them; not between the calls of a compiled function).

    The constructor trusts its input (that is what makes an operator cheap to
    build from a :class:`~torch_geometric_san.data.SimplicialComplexData`);
    :meth:`from_index` and :meth:`from_adj` validate and coalesce arbitrary
    input. Deriving the compressed rows (:meth:`structure`, on which the products
    rest) checks, once, that the entries are in range and sorted by target, so
    that entries that break them raise a :class:`ValueError` instead of making
    the kernels read or write outside their arrays.

    Args:
        index (torch.Tensor): Coalesced indices :obj:`[2, nnz]`, sorted by target
            (row 1), then source (row 0).
        weight (torch.Tensor, optional): Fixed values :obj:`[nnz]` in the same
            order, or :obj:`None` for a pattern.
        shape (int or (int, int)): :obj:`(rows, cols)`, or :obj:`n` for a square
            operator.
        eigenvalue (torch.Tensor, optional): For a square operator with fixed
            values, the largest eigenvalue of the block (complex) of each row,
            :obj:`[rows]`, used by :meth:`scaled`; computed from the whole
            operator where not given. (default: :obj:`None`)
    """
    _FIELDS = frozenset({'index', 'weight', 'shape', 'eigenvalue', '_cache'})

    def __init__(self, index: Tensor, weight: Optional[Tensor], shape: Shape,
                 eigenvalue: Optional[Tensor] = None):
        # (contiguous: the compressed rows read it as laid out in memory; a view
        # such as pairs.t() gave wrong products, or writes outside the arrays)
        self.index = index.contiguous()
        self.weight = weight
        self.shape = (shape, shape) if isinstance(shape, int) else tuple(shape)
        self.eigenvalue = eigenvalue
        self._cache: Dict[Any, Any] = {}
        if not torch.compiler.is_compiling():  # (else stamped where first derived)
            self._cache['_stamp'] = self._stamp()

    # Construction ----------------------------------------------------------------

    @classmethod
    def from_index(cls, index: Tensor, weight: Optional[Tensor],
                   shape: Shape) -> 'SparseOperator':
        r"""Validates and coalesces (sorts, sums duplicates) an operator given as
        :obj:`(index, weight)`.

        Args:
            index (torch.Tensor): Indices :obj:`[2, nnz]` (source, target).
            weight (torch.Tensor, optional): Values :obj:`[nnz]`.
            shape (int or (int, int)): :obj:`(rows, cols)` or :obj:`n`.

        Raises:
            TypeError: An index that is not of :obj:`torch.long` (PyG's
                convention for indices) or a non-floating weight.
            ValueError: Wrong shapes, non-finite weights, indices out of range, or
                tensors on 'meta'.
        """
        rows, cols = _check_shape(shape)
        if not isinstance(index, Tensor) or index.dtype != torch.long or \
                index.layout != torch.strided or index.is_nested:
            raise TypeError(f"expected a dense torch.long index tensor of shape "
                            f"[2, nnz], got {_describe(index)}")
        if index.dim() != 2 or index.size(0) != 2:
            raise ValueError(f"expected an index of shape [2, nnz], got "
                             f"{list(index.shape)}")
        check_has_data(index, 'the index')
        if weight is not None:
            if not isinstance(weight, Tensor) or weight.dtype not in FLOAT_DTYPES or \
                    weight.layout != torch.strided or weight.is_nested:
                raise TypeError(f"expected a dense floating-point weight tensor, got "
                                f"{_describe(weight)}")
            check_has_data(weight, 'the weight')
            if weight.shape != (index.size(1), ):
                raise ValueError(f"expected a weight of shape [{index.size(1)}] "
                                 f"matching the index, got {list(weight.shape)}")
            if not bool(torch.isfinite(weight).all()):
                raise ValueError("the weight has NaN or infinite entries")
            weight = weight.to(index.device)
        for row, bound, what in ((0, cols, 'source'), (1, rows, 'target')):
            if index.numel() > 0 and (int(index[row].min()) < 0
                                      or int(index[row].max()) >= bound):
                raise ValueError(
                    f"the index holds {what} entries outside [0, {bound}) (min "
                    f"{int(index[row].min())}, max {int(index[row].max())}); it does "
                    f"not match the {bound} simplices of x")
        index, weight = _coalesce(index, weight, max(rows, cols, 1))
        return cls(index, weight, (rows, cols))

    @classmethod
    def from_adj(cls, adj: Union['SparseOperator', Tensor, SparseTensor],
                 weight: Optional[Tensor], shape: Shape) -> 'SparseOperator':
        r"""An operator from any input a layer accepts: a :class:`SparseOperator`
        (returned as it is), an index with optional :obj:`weight`, a
        :class:`torch_sparse.SparseTensor` or a :mod:`torch.sparse` tensor
        (PyG's transposed adjacency, see :func:`to_index_weight`), checked
        against :obj:`shape`."""
        shape = _check_shape(shape)
        if isinstance(adj, SparseOperator):
            if weight is not None:
                raise ValueError("a SparseOperator carries its own values; pass "
                                 "its weight as None")
            if adj.shape != shape:
                raise ValueError(f"the operator has shape {adj.shape} but x needs "
                                 f"{shape}")
            return adj
        declared = _declared_shape(adj)
        if declared is not None and declared != shape:
            raise ValueError(f"the sparse operator is declared {declared[0]} x "
                             f"{declared[1]} but x needs {shape[0]} x {shape[1]}")
        index, weight = to_index_weight(adj, weight)
        return cls.from_index(index, weight, shape)

    # Derived forms ---------------------------------------------------------------

    def _derived(self, key: Any, make: Callable[[], Any]) -> Any:
        # Under torch.compile the lookup is traced (a form derived before is a
        # graph input) and only deriving a missing form runs eagerly. A form made
        # from values that autograd tracks is neither kept nor taken from what was
        # kept: kept, it would carry one step's graph into the next (or none, if
        # made under no_grad), and one kept before the values turned learnable
        # (requires_grad_() in place) would give them no gradient.
        if (key[0] if isinstance(key, tuple) else key) not in _PATTERN_FORMS and any(
                t is not None and t.requires_grad for t in (self.weight, self.eigenvalue)):
            return make()
        if not torch.compiler.is_compiling():
            self._check_stamp()
        derived = self._cache.get(key)
        if derived is not None:
            return derived
        if self.index.device.type == 'meta':  # (torch's meta kernels fail inside)
            raise ValueError("the operator is on 'meta', which holds no entries: the "
                             "forms derived from them (compressed rows, scaled, "
                             "shifted, ...) need a real device")
        return self._derive(key, make)

    def _make_room(self, key: Tuple[Any, ...], kept: int) -> None:
        # Before a form of a kind with an argument (expand's groups, shifted's eps)
        # is derived anew, the earliest kept forms of that kind are dropped until
        # fewer than `kept` remain, so that calls with ever new arguments do not
        # keep a copy of the values each. (Over a copy of the keys, each popped if
        # still there: threads sharing the operator evicted the same key twice, or
        # changed the dict meanwhile.)
        if key in self._cache:
            return
        same_kind = [other for other in list(self._cache)
                     if isinstance(other, tuple) and other[0] == key[0]]
        for other in same_kind[:max(0, len(same_kind) - kept + 1)]:
            self._cache.pop(other, None)

    def _stamp(self) -> Tuple[int, ...]:
        # The version counters of the tensors the forms are derived from, which
        # every change in place advances (not one through .data or a NumPy view,
        # and inference tensors have none: a change of one inside inference mode
        # is not seen).
        return tuple(-1 if t is None or t.is_inference() else t._version
                     for t in (self.index, self.weight, self.eigenvalue))

    def _check_stamp(self) -> None:
        # The tensors may be the caller's, changed in place since the forms were
        # derived (the products read the new values, the kept transposed values of
        # the backward the old ones): the forms of the values are derived again,
        # those of the pattern too where the index changed (an optimiser's step on
        # learnable values keeps the compressed rows).
        stamp = self._stamp()
        kept = self._cache.setdefault('_stamp', stamp)
        if kept != stamp:
            same_index = kept[0] == stamp[0]
            for key in list(self._cache):  # (popped: threads may share the operator)
                if not same_index or (key[0] if isinstance(key, tuple)
                                      else key) not in _PATTERN_FORMS:
                    self._cache.pop(key, None)
            self._cache['_stamp'] = stamp

    @torch.compiler.disable
    def _derive(self, key: Any, make: Callable[[], Any]) -> Any:
        # Made as normal tensors also under torch.inference_mode: an inference
        # tensor kept here would fail any later use that autograd records. (Eager
        # also under torch.compile, whose lookup does not check the stamp.)
        self._check_stamp()
        with torch.inference_mode(False):
            value = self._cache[key] = make()
        return value  # (not read back: another thread may evict it meanwhile)

    @property
    def nnz(self) -> int:
        r"""The number of stored entries."""
        return self.index.size(1)

    @property
    def is_empty(self) -> bool:
        r"""Whether the operator has no entries."""
        return self.index.size(1) == 0

    def structure(self) -> Tuple[Tensor, ...]:
        r"""The compressed rows of the operator and of its transpose,
        :obj:`(ptr, col, t_ptr, t_col, t_perm, t_perm_inv)`, where :obj:`t_perm`
        maps the entries of the transpose to this operator's entries and
        :obj:`t_perm_inv` back (what the product kernels take)."""
        return self._derived('structure', self._structure)

    def _structure(self) -> Tuple[Tensor, ...]:
        rows, cols = self.shape
        # (int64: the transpose's sort key src * rows + dst wraps in an int32 index)
        src, dst = self.index[0].long(), self.index[1].long()
        _check_entries(src, dst, rows, cols)
        ptr = _compressed(index2ptr(dst, rows), max(rows, cols))
        t_perm = torch.argsort(src * rows + dst)
        t_perm_inv = torch.empty_like(t_perm)
        t_perm_inv[t_perm] = torch.arange(t_perm.numel(), device=src.device)
        t_ptr = index2ptr(src[t_perm], cols)
        dtype = ptr.dtype  # (fits the entries, the rows and the columns)
        return (ptr, src.to(dtype), t_ptr.to(dtype), dst[t_perm].to(dtype), t_perm,
                t_perm_inv)

    def _checked_index(self) -> Tensor:
        # The index, its entries checked as the compressed rows check them (once:
        # they are kept), for the gathering products, which would otherwise
        # accept entries that the kernels refuse.
        self.structure()
        return self.index

    def _checked_entries(self) -> Tensor:
        # The index, its entries checked as _checked_index checks them, without the
        # compressed rows, for the forms derived once from the entries (which
        # indexed or coalesced an id out of range silently).
        _check_entries(self.index[0], self.index[1], *self.shape)
        return self.index

    def transpose_values(self, value: Tensor) -> Tensor:
        r"""The entries :obj:`value` :obj:`[nnz, ...]` of this operator in the
        order of its transpose (kept for the fixed values)."""
        self._check_values('value', value)
        perm = self.structure()[4]
        if value is self.weight:
            return self._derived('t_weight', lambda: value[perm])
        return value[perm]

    def t(self) -> 'SparseOperator':
        r"""The transpose :math:`\mathbf{A}^{\top}`, shape :obj:`(cols, rows)`."""
        def make() -> 'SparseOperator':
            perm = self.structure()[4]
            # (a copy of its own: as the transposed values of this operator's
            # backward, kept, a change of the transpose's values in place gave
            # this operator wrong gradients)
            weight = None if self.weight is None else self.weight[perm]
            # (a square block-diagonal operator's transpose has its blocks'
            # eigenvalues; scaled() on it divided each block by the largest)
            square = self.shape[0] == self.shape[1]
            # (no link back to this operator: the pair would be a reference
            # cycle, which only Python's cycle collector frees, with the forms
            # both keep)
            return SparseOperator(self.index[:, perm].flip(0), weight, self.shape[::-1],
                                  self.eigenvalue if square else None)
        return self._derived('t', make)

    def neighbourhood(self, self_loops: bool) -> 'SparseOperator':
        r"""The attention neighbourhood of a square operator: its off-diagonal
        non-zero pattern, plus a self-loop on every simplex whose row has a
        non-zero entry if :obj:`self_loops` is set (which reproduces the pattern
        of a Laplacian). The values are the signs of the entries (self-loops:
        :math:`+1`), or :obj:`None` if this operator has no values."""
        self_loops = check_bool(self_loops, "'self_loops'")
        return self._derived(('neighbourhood', self_loops),
                             lambda: self._neighbourhood(self_loops))

    def _neighbourhood(self, self_loops: bool) -> 'SparseOperator':
        n = self._square()
        src, dst = self._checked_entries()
        diag = src == dst
        nonzero = None if self.weight is None else self.weight != 0
        keep = ~diag if nonzero is None else nonzero & ~diag
        if self_loops:  # rows with a non-zero entry keep or get a self-loop
            has_row = torch.zeros(n, dtype=torch.bool, device=dst.device)
            has_row[dst if nonzero is None else dst[nonzero]] = True
            keep |= diag & has_row[dst]
        index = self.index[:, keep]
        sign = None
        if self.weight is not None:
            sign = torch.where(diag[keep], 1.0, self.weight[keep].sign()).to(
                self.weight.dtype)
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

    def abs(self) -> 'SparseOperator':
        r"""The operator :math:`|\mathbf{A}|` with the absolute values of the
        entries, on the same pattern (its compressed rows shared with this one's),
        e.g. the unsigned incidence of faces and cofaces."""
        def make() -> 'SparseOperator':
            out = SparseOperator(self.index, self._fixed('abs()').abs(), self.shape)
            out._cache['structure'] = self.structure()  # (the same entries)
            return out
        return self._derived('abs', make)

    def shifted(self, eps: float) -> 'SparseOperator':
        r"""The operator :math:`\mathbf{I} - \epsilon\mathbf{A}` of a square
        operator with fixed values (the harmonic filter's step)."""
        eps = check_real(eps, "'eps'")
        key = ('shifted', eps)
        self._make_room(key, _SHIFTED_KEPT)
        return self._derived(key, lambda: self._shifted(eps))

    def _shifted(self, eps: float) -> 'SparseOperator':
        n = self._square()
        self._checked_entries()
        weight = self._fixed('the harmonic shift')
        diag = self.index[0] == self.index[1]
        value = -eps * weight
        if int(diag.sum()) == n:  # the diagonal is there: same pattern
            return SparseOperator(self.index, value + diag.to(value.dtype), n)
        loops = torch.arange(n, device=self.index.device)
        index = torch.cat([self.index, loops.expand(2, -1)], dim=1)
        value = torch.cat([value, value.new_ones(n)])
        return SparseOperator(*_coalesce(index, value, n), n)

    def scaled(self) -> 'SparseOperator':
        r"""The operator divided by its largest eigenvalue,
        :math:`\mathbf{A} / \lambda_{\max}(\mathbf{A})`, per block (complex)
        where :attr:`eigenvalue` gives the eigenvalue of each row's block,
        else of the whole operator (:func:`largest_eigenvalue`, on the CPU),
        which must then be symmetric (a :class:`ValueError` says so otherwise).
        A zero operator stays zero. The fixed normalisation of the SCNN, SNN
        and SCN layers, whose filter powers it keeps bounded. The eigenvalue is a
        constant for autograd: values that require a gradient get that of
        :math:`\mathbf{A} / \lambda` with :math:`\lambda` held fixed, not the
        derivative of :math:`\lambda_{\max}` itself."""
        return self._derived('scaled', self._scaled)

    def _scaled(self) -> 'SparseOperator':
        n = self._square()
        weight = self._fixed('the spectral normalisation')
        self._checked_entries()
        if self.eigenvalue is not None:  # (one per row: of each entry's row)
            given = self.eigenvalue.to(weight.device)[self.index[1]]
        else:
            matrix = sp.csr_array((weight.detach().double().cpu().numpy(),
                                   (self.index[1].cpu().numpy(),
                                    self.index[0].cpu().numpy())), shape=(n, n))
            given = torch.tensor([largest_eigenvalue(matrix, weight.dtype)],
                                 dtype=torch.float64, device=weight.device)
        lam = given.to(weight.dtype)
        overflowed = given[torch.isinf(lam) & torch.isfinite(given)]
        if overflowed.numel():  # (the values divided by it were 0)
            raise ValueError(f"the largest eigenvalue of the operator, "
                             f"{float(overflowed[0]):g}, exceeds the range of its "
                             f"values' dtype {weight.dtype}; scale the values, or use "
                             f"a wider dtype, for the spectral normalisation")
        return SparseOperator(self.index, weight / torch.where(lam > 0, lam, 1.0), n)

    def expand(self, groups: int) -> 'SparseOperator':
        r"""The block-diagonal operator of :obj:`groups` copies of the pattern
        (one per head and signal), so that one product applies a different set
        of values to each group; :obj:`groups=1` gives this operator."""
        groups = check_int(groups, "'groups'", minimum=0)
        if groups == 1:
            return self
        key = ('expand', groups)
        self._make_room(key, 1)  # one expansion kept: each is groups x as large
        return self._derived(key, lambda: self._expand(groups))

    def _expand(self, groups: int) -> 'SparseOperator':
        rows, cols = self.shape
        offset = torch.arange(groups, device=self.index.device)
        shift = torch.stack([offset * cols, offset * rows]).unsqueeze(-1)  # [2, G, 1]
        index = (self.index.unsqueeze(1) + shift).view(2, -1)
        op = SparseOperator(index, None, (groups * rows, groups * cols))
        ptr, col, t_ptr, t_col, t_perm, t_perm_inv = self.structure()
        step = (offset * self.nnz).view(-1, 1)

        def blocks(ptr: Tensor, col: Tensor, width: int) -> Tuple[Tensor, Tensor]:
            ptr = torch.cat([(ptr[:-1].long().unsqueeze(0) + step).view(-1),
                             ptr.new_full((1, ), groups * self.nnz).long()])
            col = (col.long().unsqueeze(0) + (offset * width).view(-1, 1)).view(-1)
            ptr = _compressed(ptr, groups * max(rows, cols))
            return ptr, col.to(ptr.dtype)

        op._cache['structure'] = (*blocks(ptr, col, cols), *blocks(t_ptr, t_col, rows),
                                  (t_perm.unsqueeze(0) + step).view(-1),
                                  (t_perm_inv.unsqueeze(0) + step).view(-1))
        return op

    # Products --------------------------------------------------------------------

    def matmul(self, x: Tensor, value: Optional[Tensor] = None, hops: int = 1,
               t_value: Optional[Tensor] = None) -> Tensor:
        r"""The product :math:`\mathbf{A}^{hops}\mathbf{X}` of :obj:`x`
        :obj:`[cols, F]` with the fixed values, or with the entries :obj:`value`
        :obj:`[nnz]` (in this operator's order; gradients flow to them). Pass
        :obj:`t_value` (:meth:`transpose_values`) to share it between products
        with the same values. Values that need no gradient take :obj:`hops`
        products in two buffers each way, forward and backward, keeping none of
        the intermediate powers."""
        if isinstance(hops, np.integer):  # (as the package's other int arguments)
            hops = int(hops)
        if not isinstance(hops, int) or isinstance(hops, bool) or hops < 0:
            raise ValueError(f"'hops' must be an int >= 0 (got {hops!r})")
        self._check_operand('x', x, 2, self.shape[1])
        check_sparse_precision(x)  # (failed deep inside torch)
        if hops != 1:  # (A^0 X = X for a square A only)
            self._square(f"'hops' = {hops}")
        if value is None:
            value = self._fixed('matmul without values')
            if value.dtype != x.dtype:  # the fixed values in the signal's dtype
                value, t_value = value.to(x.dtype), None
        elif not isinstance(value, Tensor) or value.shape != (self.nnz,) or \
                value.dtype != x.dtype:
            raise ValueError(f"'value' must hold the {self.nnz} entries in the dtype "
                             f"of 'x', {x.dtype} (got {_describe(value)})")
        if t_value is None:
            t_value = self.transpose_values(value)
        elif not isinstance(t_value, Tensor) or t_value.shape != value.shape:
            raise ValueError(f"'t_value' must be transpose_values(value), of shape "
                             f"{list(value.shape)}")
        if not hops:  # (A^0 x = x, whose tangent stays)
            return x
        _refuse_transforms('matmul', x, value)
        try:
            if hops > 1 and not value.requires_grad:
                return _spmm_power(*self.structure(), value, t_value, x, hops)
            for _ in range(hops):
                x = _spmm(*self.structure(), value, t_value, x)
            return x
        except RuntimeError as error:
            _refuse_old_transforms('matmul', error)
            raise

    def sddmm(self, a: Tensor, b: Tensor) -> Tensor:
        r"""The sampled product :math:`\langle \mathbf{a}_i, \mathbf{b}_j
        \rangle` for every entry :math:`(i, j)`, returned as :obj:`[nnz]`."""
        self._check_operand('a', a, 2, self.shape[0])
        self._check_operand('b', b, 2, self.shape[1])
        if a.size(1) != b.size(1) or a.dtype != b.dtype:
            raise ValueError(f"'a' and 'b' must have the same width and dtype (got "
                             f"{list(a.shape)} {a.dtype} and {list(b.shape)} {b.dtype})")
        check_sparse_precision(a)
        _refuse_transforms('sddmm', a, b)
        try:
            return _sddmm(*self.structure(), a, b)
        except RuntimeError as error:
            _refuse_old_transforms('sddmm', error)
            raise

    def matmul_grouped(self, value: Tensor, x: Tensor) -> Tensor:
        r"""The products of :math:`G` operators with this pattern, each with
        its own entries, :obj:`value` :obj:`[nnz, G]`, and its own features,
        :obj:`x` :obj:`[cols, F, G]` (groups last), returned as
        :obj:`[rows, F, G]`: on the CPU by the compiled kernel
        (:mod:`~torch_geometric_san.sparse.compiled`), elsewhere by gathering the
        source rows and summing them per target."""
        self._check_operand('x', x, 3, self.shape[1])
        n, features, groups = x.shape
        if not isinstance(value, Tensor) or value.shape != (self.nnz, groups) or \
                value.dtype != x.dtype:
            raise ValueError(f"'value' must hold {self.nnz} entries of {groups} groups "
                             f"in the dtype of 'x', {x.dtype} (got {_describe(value)})")
        if available_for(x):
            ptr, col = self.structure()[:2]
            return _grouped_matmul(ptr, col, value, x)
        src, dst = self._checked_index()
        msg = x.reshape(n, features * groups).index_select(0, src)
        # One feature: [nnz, G] products, without broadcasting (nor, in the
        # backward, summing) over a feature dimension of size 1.
        msg = (msg * value if features == 1 else
               msg.view(msg.size(0), features, groups) * value.unsqueeze(1))
        out = msg.new_zeros(self.shape[0], *msg.shape[1:]).index_add_(0, dst, msg)
        return out.view(self.shape[0], features, groups)

    def sddmm_grouped(self, a: Tensor, b: Tensor) -> Tensor:
        r"""The sampled products :math:`\langle \mathbf{a}_i, \mathbf{b}_j
        \rangle` of every entry :math:`(i, j)` and group, from :obj:`a`
        :obj:`[rows, F, G]` and :obj:`b` :obj:`[cols, F, G]`, as :obj:`[nnz, G]`
        (on the CPU by the compiled kernel, as :meth:`matmul_grouped`)."""
        self._check_operand('a', a, 3, self.shape[0])
        self._check_operand('b', b, 3, self.shape[1])
        if a.shape[1:] != b.shape[1:] or a.dtype != b.dtype:
            raise ValueError(f"'a' and 'b' must have the same features, groups and "
                             f"dtype (got {list(a.shape)}, {a.dtype} and "
                             f"{list(b.shape)}, {b.dtype})")
        if available_for(a):
            ptr, col = self.structure()[:2]
            return _grouped_sddmm(ptr, col, a, b)
        src, dst = self._checked_index()
        if a.size(1) == 1:
            a, b = a.squeeze(1), b.squeeze(1)
        product = a.index_select(0, dst) * b.index_select(0, src)
        return product if product.dim() == 2 else product.sum(dim=1)

    def attention(self, negative_slope: float, score: Optional[Tensor] = None,
                  target: Optional[Tensor] = None,
                  source: Optional[Tensor] = None) -> Tensor:
        r"""The attention coefficients of :math:`G` operators with this pattern,
        :obj:`[nnz, G]`: the softmax over the entries of each row of
        :math:`\mathrm{LeakyReLU}(e_{ij})` (slope :obj:`negative_slope`) of the
        scores :math:`e_{ij}`, given as :obj:`score` :obj:`[nnz, G]` or as
        :math:`t_i + s_j` from :obj:`target` :obj:`[rows, G]` and :obj:`source`
        :obj:`[cols, G]`. Scores that overflowed are replaced by the largest
        finite values (:func:`torch.nan_to_num`), which keeps the softmax
        defined (the slope lies in :math:`[-1, 1]`, so the LeakyReLU of a
        finite score stays finite); a NaN score, e.g. a sum whose terms
        overflowed to both infinities (bilinear scores of features near the
        square root of the dtype's largest value), counts as 0. On the CPU one
        pass each way in the compiled kernel (as :meth:`matmul_grouped`),
        elsewhere gathers and :func:`~torch_geometric_san.sparse.segment_softmax`."""
        negative_slope = check_slope(negative_slope)
        if (score is None) == (target is None or source is None) or \
                (score is not None and (target is not None or source is not None)):
            raise ValueError("pass either 'score' or both 'target' and 'source'")
        if score is not None:
            if not isinstance(score, Tensor) or score.layout != torch.strided or \
                    score.dim() != 2 or score.size(0) != self.nnz or \
                    not score.is_floating_point():
                raise ValueError(f"'score' must be a dense floating-point tensor [nnz={self.nnz}, "
                                 f"G] (got {score.dtype if isinstance(score, Tensor) else type(score).__name__}"
                                 f"{list(score.shape) if isinstance(score, Tensor) else ''})")
        else:
            self._check_operand('target', target, 2, self.shape[0])
            self._check_operand('source', source, 2, self.shape[1])
            if target.shape[1:] != source.shape[1:] or target.dtype != source.dtype:
                raise ValueError(f"'target' and 'source' must have the same groups and "
                                 f"dtype (got {list(target.shape)}, {target.dtype} and "
                                 f"{list(source.shape)}, {source.dtype})")
        reference = score if score is not None else target
        if available_for(reference):
            ptr, col = self.structure()[:2]
            return _attention(ptr, col, score, target, source, negative_slope)
        src, dst = self._checked_index()
        return _attention_composite(dst, src, self.shape[0], score, target, source,
                                    negative_slope)

    def to_dense(self) -> Tensor:
        r"""The dense matrix :obj:`[rows, cols]` (for tests and small examples:
        it allocates :math:`O(\text{rows} \cdot \text{cols})`)."""
        weight = self.weight
        if weight is None:
            weight = torch.ones(self.nnz, device=self.index.device)
        index = self._checked_entries()
        out = weight.new_zeros(self.shape)
        return out.index_put_((index[1], index[0]), weight, accumulate=True)

    # Devices, pickling -----------------------------------------------------------

    def to(self, *args, **kwargs) -> 'SparseOperator':
        r"""A copy on another device (:meth:`torch.Tensor.to` arguments, also a
        tensor whose device and dtype to take; a dtype applies to the values only,
        and must be a floating-point one)."""
        # (parsed as torch.nn.Module.to parses them)
        device, dtype, non_blocking, _ = torch._C._nn._parse_to(*args, **kwargs)
        if dtype is not None and dtype not in FLOAT_DTYPES:
            raise TypeError(f"the values of an operator must be floating-point, got "
                            f"{dtype} ({FLOAT_DTYPE_NAMES} are)")
        index = self.index.to(device=device, non_blocking=non_blocking)
        convert = (lambda t: None if t is None else t.to(
            device=device, dtype=dtype, non_blocking=non_blocking))
        return SparseOperator(index, convert(self.weight), self.shape,
                              convert(self.eigenvalue))

    def __getstate__(self) -> Dict[str, Any]:
        return dict(self.__dict__, _cache={})

    def __repr__(self) -> str:
        return (f"{self.__class__.__name__}(shape={self.shape}, nnz={self.nnz}, "
                f"weighted={self.weight is not None})")

    def _square(self, what: str = 'this form') -> int:
        if self.shape[0] != self.shape[1]:
            raise ValueError(f"{what} needs a square operator (shape "
                             f"{self.shape})")
        return self.shape[0]

    @staticmethod
    def _check_operand(name: str, x: Any, dim: int, rows: int) -> None:
        # A dense operand of a product: a floating-point tensor of `dim`
        # dimensions with one row per row (or column) of the operator it meets.
        if not isinstance(x, Tensor) or x.dim() != dim or not x.is_floating_point() \
                or x.layout != torch.strided:
            layout = '' if not isinstance(x, Tensor) or x.layout == torch.strided \
                else f' {x.layout}'
            what = (f'a {x.dim()}-D {x.dtype}{layout} tensor' if isinstance(x, Tensor)
                    else type(x).__name__)
            raise ValueError(f"'{name}' must be a dense {dim}-D floating-point "
                             f"tensor (got {what})")
        if x.size(0) != rows:
            raise ValueError(f"'{name}' must have {rows} rows, one per row or column "
                             f"of the operator it meets (got {x.size(0)})")

    def _check_values(self, name: str, value: Any) -> None:
        # Entries of this operator, [nnz, ...].
        if not isinstance(value, Tensor) or value.dim() == 0 or \
                value.size(0) != self.nnz:
            got = list(value.shape) if isinstance(value, Tensor) else type(value).__name__
            raise ValueError(f"'{name}' must hold the operator's {self.nnz} entries "
                             f"along its first dimension (got {got})")

    def _fixed(self, what: str) -> Tensor:
        if self.weight is None:
            raise ValueError(f"{what} needs an operator with values (this one is a "
                             f"pattern without weights)")
        return self.weight


def largest_eigenvalue(matrix: sp.sparray, dtype: torch.dtype = torch.float32) -> float:
    r"""The largest eigenvalue of a symmetric positive semi-definite sparse matrix.

    Dense and exact up to :data:`DENSE_EIGEN_LIMIT` rows; above, the Lanczos
    recurrence from a fixed start vector, without restarts or reorthogonalisation:
    for single precision to relative tolerance :data:`EIGEN_TOL` with products in
    the matrix's precision (in double precision where a row holds more than 1,024
    entries, whose float32 sums round beyond it: a star's hub row of 16,000 entries
    gave about :math:`3 \cdot 10^{-5}`), for :obj:`torch.float64` to machine
    precision with products in double precision. Both run on one BLAS thread.
    The tolerance bounds the residual of the recurrence, which does not see the
    rounding of the float32 products: where a row's terms cancel (a hub's row of
    a Laplacian) that rounding can leave a larger error, e.g. about
    :math:`2 \cdot 10^{-5}` relative for a star of 700 leaves (float64 data gets
    machine precision), and a start vector nearly orthogonal to the top
    eigenvector can stop the recurrence on a slightly smaller eigenvalue.

    The recurrence :math:`\beta_j \mathbf{v}_{j+1} = \mathbf{A} \mathbf{v}_j -
    \alpha_j \mathbf{v}_j - \beta_{j-1} \mathbf{v}_{j-1}` keeps three float64
    vectors; the largest eigenvalue :math:`\theta` of the tridiagonal
    :math:`\mathbf{T}_j` is a Ritz value that converges to :math:`\lambda_{\max}`
    from below, and the loss of orthogonality only adds copies of converged Ritz
    values. It stops once the residual bound :math:`\beta_j |s_j| \le
    \mathrm{tol} \cdot \theta` (:math:`s_j` the last entry of :math:`\theta`'s
    eigenvector of :math:`\mathbf{T}_j`), checked every five steps. On the clustered
    top of a mesh's spectrum it needs far fewer products than ARPACK's restarted
    Lanczos (``benchmarks/eigenvalue.py``).

    Args:
        matrix (scipy.sparse.sparray): A symmetric positive semi-definite matrix.
        dtype (torch.dtype, optional): The precision the result is needed in.

    Returns:
        float: :math:`\lambda_{\max}`, or ``0.0`` for a matrix without non-zeros.

    Raises:
        TypeError: If :obj:`matrix` is not a real SciPy sparse matrix, or
            :obj:`dtype` not a floating :class:`torch.dtype`.
        ValueError: If :obj:`matrix` is not square, not symmetric, or has NaN or
            infinite entries.
    """
    if not sp.issparse(matrix) or matrix.ndim != 2:
        raise TypeError(f"expected a SciPy sparse matrix, got "
                        f"{type(matrix).__name__}")
    if matrix.format in ('lil', 'dok', 'dia'):  # (no array of entries to check)
        matrix = matrix.tocsr()
    if matrix.shape[0] != matrix.shape[1]:
        raise ValueError(f"expected a square matrix, got shape {matrix.shape}")
    if not np.issubdtype(matrix.dtype, np.floating) and \
            not np.issubdtype(matrix.dtype, np.integer):
        raise TypeError(f"expected a real matrix, got {matrix.dtype}")
    if not np.isfinite(matrix.data).all():
        raise ValueError("the matrix has NaN or infinite entries")
    check_float_dtype(dtype, "'dtype'")
    _check_symmetric(matrix, dtype)
    return _largest_eigenvalue(matrix, dtype)


def _largest_eigenvalue(matrix: sp.sparray, dtype: torch.dtype) -> float:
    # largest_eigenvalue of a matrix known to suit it (the Gram matrices a
    # complex is built from): the checks of a user's matrix cost a transposed
    # copy, as much as several Lanczos products.
    if matrix.nnz == 0:
        return 0.0
    # The solvers' BLAS calls are too small to gain from threads, and on a busy machine
    # waiting for a second thread made them several times slower (e.g. the dense
    # solves of many small complexes lifted beside another job).
    with _THREADPOOLS.limit(limits=1, user_api='blas'):
        if matrix.shape[0] <= DENSE_EIGEN_LIMIT:
            return float(np.linalg.eigvalsh(matrix.toarray().astype(np.float64))[-1])
        if dtype == torch.float64 or matrix.dtype not in (np.float32, np.float64) \
                or _longest_row(matrix) > _LONG_ROW:
            return _lanczos_largest(matrix.astype(np.float64), _DOUBLE_TOL
                                    if dtype == torch.float64 else EIGEN_TOL)
        return _lanczos_largest(matrix, EIGEN_TOL)


def _check_symmetric(matrix: sp.sparray, dtype: torch.dtype) -> None:
    # What the eigenvalue solvers assume of a matrix given by a user (one that a
    # complex builds is a Laplacian): entries equal to their transposes' up to
    # the rounding of dtype.
    gap = abs(matrix - matrix.T)
    if gap.nnz and gap.max() > 8 * torch.finfo(dtype).eps * abs(matrix).max():
        raise ValueError("the largest eigenvalue (and the spectral normalisation, "
                         "scaled(), which divides by it) needs a symmetric positive "
                         "semi-definite matrix, such as a Laplacian; this one is not "
                         "symmetric")


def _longest_row(matrix: sp.sparray) -> int:
    # The most entries of a row of a sparse matrix.
    counts = np.diff(matrix.indptr) if matrix.format == 'csr' else \
        np.bincount(matrix.tocoo().row, minlength=matrix.shape[0])
    return int(counts.max()) if len(counts) else 0


#: Matrices whose largest entry lies beyond 2 ** +-_SCALE_EXPONENT are scaled towards
#: 1 for Lanczos.
_SCALE_EXPONENT = 64


def _lanczos_largest(matrix: sp.sparray, tol: float, check: int = 5) -> float:
    """See :func:`largest_eigenvalue`; raises if the bound is not met in
    ``max(10 n, 1000)`` steps."""
    n = matrix.shape[0]
    # Entries far from 1 are scaled by a power of two first (exactly), and the
    # eigenvalue back: LAPACK's tridiagonal solver under- or overflowed on the
    # squares of the recurrence's values beyond about 1e+-150.
    shift = int(np.frexp(np.abs(matrix.data).max(initial=0.0))[1])
    if abs(shift) > _SCALE_EXPONENT:
        matrix = matrix.copy()
        matrix.data = np.ldexp(matrix.data, -shift)
        return float(np.ldexp(_lanczos_largest(matrix, tol, check), shift))
    v = np.random.default_rng(0).uniform(0.5, 1.5, n)
    v /= np.linalg.norm(v)
    v_prev, beta = np.zeros(n), 0.0
    # The products take v in the matrix's precision; the recurrence runs in float64
    # with in-place BLAS calls (no temporaries of size n besides the product).
    low = None if matrix.dtype == np.float64 else np.empty(n, matrix.dtype)
    alphas, betas = [], []
    for step in range(1, max(10 * n, 1000) + 1):
        if low is not None:
            np.copyto(low, v)
        w = np.asarray(matrix @ (v if low is None else low), dtype=np.float64)
        w = daxpy(v_prev, w, a=-beta)
        alpha = float(ddot(w, v))
        w = daxpy(v, w, a=-alpha)
        beta = float(dnrm2(w))
        alphas.append(alpha)
        betas.append(beta)
        if step % check == 0 or beta == 0.0:
            values, vectors = eigh_tridiagonal(
                np.array(alphas), np.array(betas[:-1]), select='i',
                select_range=(step - 1, step - 1))
            theta = float(values[0])
            if beta == 0.0 or beta * abs(vectors[-1, 0]) <= tol * abs(theta):
                return theta
        v_prev, v = v, dscal(1.0 / beta, w)
    raise RuntimeError(f"Lanczos did not reach the relative tolerance {tol:g} for "
                       f"the largest eigenvalue of a {n} x {n} matrix in {step} steps")


def _refuse_transforms(product: str, *operands: Tensor) -> None:
    # The custom operators of matmul and sddmm (kernels.py) have a backward for
    # autograd only. torch.func's gradient transforms by an operand stopped on
    # torch's message about setup_context, and forward-mode AD passed the operands'
    # tangents by: torch.func.jvp and jacfwd gave zero derivatives. (Forward mode is
    # on where a dual level is open; the operands' tangents are read only then.)
    if not torch.compiler.is_compiling() and any(map(_tracks_gradient, operands)):
        raise NotImplementedError(
            f"SparseOperator.{product} does not run under torch.func's gradient "
            f"transforms (grad, vjp, jacrev) by its operands: use loss.backward() or "
            f"torch.autograd.grad (torch.autograd.functional.jacobian for a "
            f"Jacobian)")
    if getattr(forward_ad, '_current_level', 0) < 0:
        return
    try:
        dual = any(forward_ad.unpack_dual(_unbatched(t)).tangent is not None
                   for t in operands)
    except RuntimeError:  # (a wrapper it cannot see through: refused, not dropped)
        dual = True
    if dual:
        raise NotImplementedError(
            f"SparseOperator.{product} has no forward-mode derivative (torch.func.jvp, "
            f"jacfwd, torch.autograd.forward_ad): its operands carry tangents that it "
            f"would drop; use reverse mode (loss.backward(), torch.autograd.grad, "
            f"torch.autograd.functional.jacobian)")


def _refuse_old_transforms(product: str, error: RuntimeError) -> None:
    # PyTorch 2.4 runs the custom operators' autograd Function under any of
    # torch.func's transforms but vmap, where the Function stops on PyTorch's
    # message about setup_context even when nothing is differentiated by the
    # operands (from PyTorch 2.5 it runs them without autograd then).
    if 'setup_context' in str(error):
        raise NotImplementedError(
            f"SparseOperator.{product} does not run under torch.func's transforms "
            f"other than vmap with PyTorch {torch.__version__} (its custom operators "
            f"cannot); they run where no operand is differentiated from PyTorch 2.5. "
            f"Use loss.backward() or torch.autograd.grad "
            f"(torch.autograd.functional.jacobian for a Jacobian)") from error


def _tracks_gradient(tensor: Tensor) -> bool:
    # Whether a torch.func gradient transform (grad, vjp, jacrev) differentiates by
    # the tensor, also inside vmap's batching wrappers. (Its wrapper needs a
    # gradient: the transforms also wrap tensors that they do not differentiate by.)
    tensor = _unbatched(tensor)
    return torch._C._functorch.is_gradtrackingtensor(tensor) and tensor.requires_grad


def _unbatched(tensor: Tensor) -> Tensor:
    # The tensor inside vmap's batching wrappers, whose tangents unpack_dual reads
    # (it has no batching rule).
    functorch = torch._C._functorch
    while functorch.is_batchedtensor(tensor):
        tensor = functorch.get_unwrapped(tensor)
    return tensor


def _compressed(index: Tensor, size: int) -> Tensor:
    # Compressed-row indices as int32 where they and the column ids of an
    # operator with `size` rows and columns fit, which the CPU (MKL) sparse
    # kernels take without a conversion on every call.
    fits = size < 2**31 - 1 and (index.numel() == 0 or int(index.max()) < 2**31 - 1)
    return index.int() if fits else index


def _coalesce(index: Tensor, value: Optional[Tensor],
              base: int) -> Tuple[Tensor, Optional[Tensor]]:
    # Sorts entries by (target, source) and sums duplicates; a no-op (one
    # pass) on input that is already sorted and free of duplicates.
    key = index[1] * base + index[0]
    if key.numel() > 1 and not bool((key[1:] > key[:-1]).all()):
        key, perm = torch.sort(key)
        index = index[:, perm]
        value = None if value is None else value[perm]
        if bool((key[1:] == key[:-1]).any()):
            key, inverse = torch.unique_consecutive(key, return_inverse=True)
            index = torch.stack([key % base, key // base])
            if value is not None:
                value = value.new_zeros(key.numel()).index_add_(0, inverse, value)
    return index, value


def _check_entries(src: Tensor, dst: Tensor, rows: int, cols: int) -> None:
    # What the compressed rows assume of an operator's entries: torch's
    # conversion and the kernels index arrays with them unchecked.
    if src.numel() == 0:
        return
    if not bool((dst[1:] >= dst[:-1]).all()):
        raise ValueError("the operator's entries are not sorted by target (row 1 of "
                         "its index); build it with SparseOperator.from_index")
    low, high = torch.aminmax(src)
    if int(dst[0]) < 0 or int(dst[-1]) >= rows or int(low) < 0 or int(high) >= cols:
        raise ValueError(f"the operator's index holds entries outside its shape "
                         f"{(rows, cols)}; build it with SparseOperator.from_index")


def _check_shape(shape: Any) -> Tuple[int, int]:
    # (rows, cols) of an operator given as n or (rows, cols).
    if isinstance(shape, (tuple, list, torch.Size)) and len(shape) == 2:
        rows, cols = shape
    elif isinstance(shape, (tuple, list, torch.Size)):
        raise ValueError(f"the shape must be n or (rows, cols), got {tuple(shape)}")
    else:
        rows = cols = shape
    return (check_int(rows, "the operator's rows", minimum=0),
            check_int(cols, "the operator's columns", minimum=0))


def _declared_shape(adj: Any) -> Optional[Tuple[int, int]]:
    if isinstance(adj, SparseTensor):
        return tuple(adj.sparse_sizes())
    if is_torch_sparse_tensor(adj):
        _check_sparse_matrix(adj)
        return tuple(adj.shape)
    return None


def _check_sparse_matrix(adj: Any) -> None:
    # A torch.sparse operator is a matrix: 2 sparse dimensions and no dense ones.
    if is_torch_sparse_tensor(adj) and (adj.dim() != 2 or adj.dense_dim() != 0):
        raise ValueError(f"a torch.sparse operator must be a matrix (2 sparse "
                         f"dimensions, no dense ones), got shape {list(adj.shape)}")


def to_index_weight(
    adj: Union[Tensor, SparseTensor],
    weight: Optional[Tensor] = None,
) -> Tuple[Tensor, Optional[Tensor]]:
    r"""Normalises an operator given as an :obj:`edge_index`-style index with
    optional weights, a :class:`torch_sparse.SparseTensor` or a
    :mod:`torch.sparse` tensor into :obj:`(index, weight)`.

    Sparse inputs follow PyG's convention of the *transposed* adjacency
    :obj:`adj_t` (sparse row = target :math:`i`, column = source :math:`j`)
    and carry their own values, so :obj:`weight` must then be :obj:`None`.

    Args:
        adj (torch.Tensor or SparseTensor): An index :obj:`[2, nnz]` (row 0
            source, row 1 target), a :class:`torch_sparse.SparseTensor` or a
            :mod:`torch.sparse` tensor.
        weight (torch.Tensor, optional): The values :obj:`[nnz]` of an index
            input. (default: :obj:`None`)

    Returns:
        (torch.Tensor, torch.Tensor or None): The index :obj:`[2, nnz]` and
        the values :obj:`[nnz]` (a sparse input's in floating point; an index
        input's :obj:`weight` as given, which
        :meth:`SparseOperator.from_index` then checks), or :obj:`None` where
        none were given.
    """
    if isinstance(adj, SparseTensor) or is_torch_sparse_tensor(adj):
        if weight is not None:
            raise ValueError("a sparse operator carries its own values; pass "
                             "its weight as None")
        _check_sparse_matrix(adj)
        if isinstance(adj, SparseTensor):
            row, col, weight = adj.coo()
            index = torch.stack([col, row])
        else:
            if adj.layout == torch.sparse_coo and not adj.is_coalesced():
                # (PyG's to_edge_index flags the tensor it is given as coalesced,
                # which left the caller's duplicates unsummed for torch.sparse)
                adj = adj.coalesce()
            index, weight = to_edge_index(adj)
            index = index.flip(0)
        if weight is not None and weight.is_complex():  # (cast: imaginary part lost)
            raise TypeError(f"the sparse operator's values are complex "
                            f"({weight.dtype}); the layers take real operators")
        if weight is not None and not weight.is_floating_point():
            weight = weight.to(torch.get_default_dtype())
        return index, weight
    if isinstance(adj, Tensor) and adj.layout != torch.strided:  # (BSR, BSC, ...)
        raise TypeError(f"a torch.sparse operator of layout {adj.layout} is not taken; "
                        f"convert it with .to_sparse_coo() or .to_sparse_csr()")
    if isinstance(adj, Tensor):
        return adj, weight
    raise TypeError(f"expected an index tensor, a SparseTensor or a torch.sparse "
                    f"tensor, got {_describe(adj)}")


def _describe(obj: Any) -> str:
    if isinstance(obj, Tensor):
        layout = '' if obj.layout == torch.strided else f' {obj.layout}'
        return f"a {obj.dtype}{layout} tensor of shape {list(obj.shape)}"
    return f"an object of type {type(obj).__name__}"
