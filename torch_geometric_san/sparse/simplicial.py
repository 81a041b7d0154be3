r"""The operators of one order of a simplicial complex, as one value."""
from typing import Any, Dict, Optional, Tuple, Union

import torch
from torch import Tensor

from torch_geometric.data.data import BaseData
from torch_geometric.typing import SparseTensor

from torch_geometric_san.sparse.operator import SparseOperator, _Immutable
from torch_geometric_san.utils.validation import check_int

__all__ = ["SimplicialOperators", "as_operators"]

Adj = Union[SparseOperator, Tensor, SparseTensor]

#: The legacy positional operator arguments of the layers, in order.
LEGACY_ARGUMENTS = ('up_index', 'up_weight', 'down_index', 'down_weight',
                    'hodge_index', 'hodge_weight')


class SimplicialOperators(_Immutable):
    r"""The operators of the :math:`k`-simplices of a complex (or of a batch of
    complexes), as one value that every layer of a model takes.

    It holds, each as a :class:`~torch_geometric_san.sparse.SparseOperator` (or
    :obj:`None` where absent):

    * :attr:`up`: the upper Laplacian :math:`\mathbf{L}_k^{(u)} =
      \mathbf{B}_{k+1}\mathbf{B}_{k+1}^{\top}`, :obj:`[N_k, N_k]`;
    * :attr:`down`: the lower Laplacian :math:`\mathbf{L}_k^{(d)} =
      \mathbf{B}_k^{\top}\mathbf{B}_k`, :obj:`[N_k, N_k]`;
    * :attr:`hodge`: the Hodge Laplacian scaled to largest eigenvalue 1 (per
      complex), :math:`\widetilde{\mathbf{L}}_k`, :obj:`[N_k, N_k]`;
    * :attr:`boundary`: :math:`\mathbf{B}_k`, from :math:`k`-chains to
      :math:`(k-1)`-chains, :obj:`[N_{k-1}, N_k]`;
    * :attr:`coboundary`: :math:`\mathbf{B}_{k+1}^{\top}`, from :math:`k`-chains
      to :math:`(k+1)`-chains, :obj:`[N_{k+1}, N_k]`;
    * :attr:`orientation`: optionally, a reference orientation of the
      :math:`k`-simplices per signal, :obj:`[B, N_k]` of :math:`\pm 1`
      (:meth:`reoriented`), or :obj:`None`: every signal in the operators' own.

    **Per-signal orientation.** Signal :math:`b` with orientation
    :math:`\mathbf{D}_b = \mathrm{diag}(s_b)` lives on the complex whose
    order-:math:`k` Laplacians are :math:`\mathbf{D}_b \mathbf{L}
    \mathbf{D}_b` (the re-oriented complex of
    :func:`~torch_geometric_san.datasets.trajectory.reorient_edges`), without
    a copy of the operators per signal: a layer applies what depends on the
    signs (fixed-value products, signed attention) as
    :math:`\mathbf{D}_b f(\mathbf{D}_b \mathbf{x}_b)`, which equals :math:`f`
    on the re-oriented operators for every part that is linear in the
    operator's values or sees only their signs relative to the signals;
    what uses only the sparsity pattern (plain attention) is unchanged.
    The boundary and coboundary are not re-oriented (layers of one order do
    not use them).

    Every operator derives its other forms (compressed rows, transpose,
    attention neighbourhood, harmonic shift, spectral normalisation) on first
    use and keeps them on itself, so all the layers of a model that get the
    same value share them: each is built once per batch. Building the value
    itself costs nothing but a few references. It is immutable, as its
    operators are (setting an attribute raises an :class:`AttributeError`:
    the value may be shared, e.g. kept by
    :meth:`~torch_geometric_san.data.SimplicialComplexData.operators`). It moves
    with :meth:`to`, and
    pickles (:func:`torch.save`, :func:`copy.deepcopy`) without its derived
    forms.

    Get it from :meth:`~torch_geometric_san.data.SimplicialComplexData.operators`
    (also on a :class:`~torch_geometric.data.Batch`), or build it from
    :obj:`(index, weight)` pairs with :meth:`from_inputs`.

    Args:
        num_simplices (int): :math:`N_k`.
        up (SparseOperator, optional): :math:`\mathbf{L}_k^{(u)}`.
        down (SparseOperator, optional): :math:`\mathbf{L}_k^{(d)}`.
        hodge (SparseOperator, optional): :math:`\widetilde{\mathbf{L}}_k`.
        boundary (SparseOperator, optional): :math:`\mathbf{B}_k`, kept as its
            transpose :math:`\mathbf{B}_k^{\top}` (made here, with the values
            :math:`\mathbf{B}_k` has now).
        coboundary (SparseOperator, optional): :math:`\mathbf{B}_{k+1}^{\top}`.

    Raises:
        TypeError: If an operator is not a
            :class:`~torch_geometric_san.sparse.SparseOperator` (or :obj:`None`),
            or :obj:`num_simplices` not an int.
        ValueError: If an operator's shape does not fit :obj:`num_simplices`
            (:obj:`[N_k, N_k]` for the Laplacians, :obj:`N_k` columns for the
            boundary and coboundary), or the boundary's entries are not sorted by
            target (they are read once, to keep its transpose
            :math:`\mathbf{B}_k^{\top}`); the other operators' entries are not
            read.

    Example:
        >>> from torch_geometric_san.data import SimplicialComplexData
        >>> data = SimplicialComplexData.from_simplices([[0, 1, 2]], close=True)
        >>> ops = data.operators(1)
        >>> ops
        SimplicialOperators(num_simplices=3, up=9, down=9, hodge=3, boundary=6, coboundary=3)
        >>> ops.boundary.shape, ops.coboundary.shape
        ((3, 3), (1, 3))
    """
    _FIELDS = frozenset({'num_simplices', 'up', 'down', 'hodge', 'coboundary',
                         '_boundary_t', 'orientation'})

    def __init__(self, num_simplices: int, up: Optional[SparseOperator] = None,
                 down: Optional[SparseOperator] = None,
                 hodge: Optional[SparseOperator] = None,
                 boundary: Optional[SparseOperator] = None,
                 coboundary: Optional[SparseOperator] = None):
        self.num_simplices = check_int(num_simplices, 'num_simplices', minimum=0)
        for name, op, square in (('up', up, True), ('down', down, True),
                                 ('hodge', hodge, True), ('boundary', boundary, False),
                                 ('coboundary', coboundary, False)):
            _check_operator(op, name, num_simplices, square)
        self.orientation: Optional[Tensor] = None
        self.up = up
        self.down = down
        self.hodge = hodge
        self.coboundary = coboundary
        # B_k is kept as stored, B_k^T (faces to simplices); the transpose is
        # derived on first use of `boundary`.
        self._boundary_t = None if boundary is None else boundary.t()

    @property
    def boundary(self) -> Optional[SparseOperator]:
        r"""The boundary :math:`\mathbf{B}_k`, :obj:`[N_{k-1}, N_k]`."""
        return None if self._boundary_t is None else self._boundary_t.t()

    @classmethod
    def from_transposed_boundary(cls, num_simplices: int,
                                 boundary_t: Optional[SparseOperator],
                                 **operators: Optional[SparseOperator]
                                 ) -> 'SimplicialOperators':
        r"""The value with :math:`\mathbf{B}_k` given as its transpose
        :math:`\mathbf{B}_k^{\top}` :obj:`[N_k, N_{k-1}]` (the stored form of a
        complex's boundary), without transposing it until it is used."""
        out = cls(num_simplices, **operators)
        if boundary_t is not None:  # (as the constructor checks the boundary)
            if not isinstance(boundary_t, SparseOperator):
                raise TypeError(f"'boundary_t' must be a SparseOperator or None, not "
                                f"{type(boundary_t).__name__}")
            if boundary_t.shape[0] != out.num_simplices:
                raise ValueError(f"'boundary_t' must have shape [N_k, *] = "
                                 f"[{out.num_simplices}, *], got "
                                 f"{list(boundary_t.shape)}")
        out._replace('_boundary_t', boundary_t)
        return out

    @classmethod
    def from_inputs(
        cls,
        num_simplices: int,
        up_index: Optional[Adj] = None,
        up_weight: Optional[Tensor] = None,
        down_index: Optional[Adj] = None,
        down_weight: Optional[Tensor] = None,
        hodge_index: Optional[Adj] = None,
        hodge_weight: Optional[Tensor] = None,
    ) -> 'SimplicialOperators':
        r"""The value of the operators given as the layers took them before
        (each an index with optional weights, a :class:`torch_sparse.SparseTensor`
        or a :mod:`torch.sparse` tensor, see
        :func:`~torch_geometric_san.sparse.to_index_weight`), validated and
        checked against :obj:`num_simplices`. Absent operators are :obj:`None`.
        Without per-complex eigenvalues, :meth:`SparseOperator.scaled` divides
        by the largest eigenvalue of the whole operator."""
        def convert(adj: Optional[Adj], weight: Optional[Tensor],
                    name: str) -> Optional[SparseOperator]:
            if adj is None:
                if weight is not None:
                    raise ValueError(f"'{name}_weight' is given without "
                                     f"'{name}_index'")
                return None
            return SparseOperator.from_adj(adj, weight, num_simplices)

        return cls(num_simplices, up=convert(up_index, up_weight, 'up'),
                   down=convert(down_index, down_weight, 'down'),
                   hodge=convert(hodge_index, hodge_weight, 'hodge'))

    def reoriented(self, orientation: Optional[Tensor]) -> 'SimplicialOperators':
        r"""The same operators (shared, with the forms they derived) for
        signals that each have their own reference orientation of the
        simplices: :obj:`orientation[b, i] = -1` where signal :math:`b` flips
        simplex :math:`i` relative to these operators (see the class
        description); :obj:`None` removes it.

        Args:
            orientation (torch.Tensor, optional): :math:`\pm 1`, shape
                :obj:`[B, N_k]`, one row per signal of the layers' input
                :obj:`[B, N_k, F]` (any real dtype).

        Returns:
            SimplicialOperators: A new value; :obj:`self` is unchanged.

        Example:
            >>> import torch
            >>> from torch_geometric_san.data import SimplicialComplexData
            >>> data = SimplicialComplexData.from_simplices([[0, 1, 2]], close=True)
            >>> signs = torch.tensor([[1, -1, 1], [-1, -1, 1]])
            >>> data.operators(1).reoriented(signs).orientation.shape
            torch.Size([2, 3])
        """
        if orientation is not None:
            if not isinstance(orientation, Tensor):
                raise TypeError(f"'orientation' must be a tensor or None, not "
                                f"{type(orientation).__name__}")
            if orientation.dtype == torch.bool or orientation.is_complex():
                raise TypeError(f"'orientation' must be a real tensor of +1 and -1, "
                                f"not {orientation.dtype}")
            if orientation.dim() != 2 or orientation.size(1) != self.num_simplices:
                raise ValueError(f"'orientation' must have shape [B, "
                                 f"{self.num_simplices}], got {list(orientation.shape)}")
            if not bool((orientation.abs() == 1).all()):
                raise ValueError("'orientation' must hold only +1 and -1")
        out = self.from_transposed_boundary(
            self.num_simplices, self._boundary_t, up=self.up, down=self.down,
            hodge=self.hodge, coboundary=self.coboundary)
        out._replace('orientation', orientation)
        return out

    def signs(self, x: Tensor) -> Optional[Tensor]:
        r"""The orientation per signal as a factor of the signals :obj:`x`
        :obj:`[B, N_k, F]`, :obj:`[B, N_k, 1]` in their dtype, or :obj:`None`
        without one."""
        if self.orientation is None:
            return None
        if x.dim() != 3 or x.size(0) != self.orientation.size(0):
            raise ValueError(f"the operators carry an orientation for "
                             f"{self.orientation.size(0)} signals, but the input has "
                             f"shape {list(x.shape)} (expected [{self.orientation.size(0)}, "
                             f"{self.num_simplices}, F])")
        return self.orientation.to(device=x.device, dtype=x.dtype).unsqueeze(-1)

    def to(self, *args, **kwargs) -> 'SimplicialOperators':
        r"""A copy with every operator moved (:meth:`SparseOperator.to`)."""
        def move(op: Optional[SparseOperator]) -> Optional[SparseOperator]:
            return None if op is None else op.to(*args, **kwargs)
        out = self.from_transposed_boundary(
            self.num_simplices, move(self._boundary_t), up=move(self.up),
            down=move(self.down), hodge=move(self.hodge),
            coboundary=move(self.coboundary))
        moved = [op for op in (out.up, out.down, out.hodge, out.coboundary,
                               out._boundary_t) if op is not None]
        if self.orientation is not None:
            # To the operators' device, in its own dtype (the signs stay exact).
            out._replace('orientation', self.orientation.to(moved[0].index.device)
                         if moved else self.orientation)
        return out

    def __repr__(self) -> str:
        parts = [f'num_simplices={self.num_simplices}']
        for name in ('up', 'down', 'hodge', 'boundary', 'coboundary'):
            op = self._boundary_t if name == 'boundary' else getattr(self, name)
            if op is not None:
                parts.append(f'{name}={op.nnz}')
        if self.orientation is not None:
            parts.append(f'orientation={list(self.orientation.shape)}')
        return f"{self.__class__.__name__}({', '.join(parts)})"


def as_operators(num_simplices: int, ops: Any, args: Tuple[Any, ...],
                 kwargs: Dict[str, Any]) -> SimplicialOperators:
    r"""The operators of a layer call: a :class:`SimplicialOperators` as it is
    (its size checked against :obj:`num_simplices`), or the legacy arguments
    converted by :meth:`SimplicialOperators.from_inputs`.

    Args:
        num_simplices (int): The rows of the layer's input.
        ops (Any): The second argument of the call: a
            :class:`SimplicialOperators`, or the first legacy argument
            (:obj:`up_index`), or :obj:`None`.
        args (tuple): The further positional legacy arguments
            (:obj:`up_weight, down_index, down_weight, hodge_index,
            hodge_weight`).
        kwargs (dict): The legacy arguments given by name.

    Returns:
        SimplicialOperators: The operators.

    Raises:
        TypeError: No operators at all, a data object instead of its
            operators, legacy arguments beside a :class:`SimplicialOperators`,
            unknown names, or an argument given twice.
        ValueError: Operators of another size than :obj:`x`.
    """
    if isinstance(ops, SimplicialOperators):
        if args or kwargs:
            raise TypeError(f"operators are given as SimplicialOperators; further "
                            f"operator arguments are not allowed (got "
                            f"{len(args)} more and {sorted(kwargs)})")
        if ops.num_simplices != num_simplices:
            raise ValueError(f"the operators are for {ops.num_simplices} simplices "
                             f"but x has {num_simplices}")
        return ops
    if isinstance(ops, BaseData):
        raise TypeError(f"the operators must be SimplicialOperators, e.g. "
                        f"data.operators(k) of the complex, not the "
                        f"{type(ops).__name__} itself")
    if ops is None and not args and not kwargs:
        raise TypeError("no operators given: pass the operators of the simplices, "
                        "e.g. data.operators(k) of the complex (None only by name, "
                        "for a legacy operator that is absent)")
    unknown = set(kwargs) - set(LEGACY_ARGUMENTS)
    if unknown:
        raise TypeError(f"unexpected operator arguments {sorted(unknown)}; expected "
                        f"SimplicialOperators or {LEGACY_ARGUMENTS}")
    positional = (ops, *args) if ops is not None or args else ()
    if len(positional) > len(LEGACY_ARGUMENTS):
        raise TypeError(f"expected at most {len(LEGACY_ARGUMENTS)} operator "
                        f"arguments {LEGACY_ARGUMENTS}, got {len(positional)}")
    named = dict(zip(LEGACY_ARGUMENTS, positional))
    for key, value in kwargs.items():
        if key in named:
            raise TypeError(f"operator argument '{key}' given twice")
        named[key] = value
    return SimplicialOperators.from_inputs(num_simplices, **named)


torch.serialization.add_safe_globals([SimplicialOperators, SparseOperator])


def _check_operator(op: Any, name: str, n: int, square: bool) -> None:
    # An operator of the value: None, or a SparseOperator of shape [N, N] (square)
    # or [*, N] (the boundary B_k and the coboundary B_{k+1}^T act on k-chains).
    if op is None:
        return
    if not isinstance(op, SparseOperator):
        raise TypeError(f"'{name}' must be a SparseOperator or None, not "
                        f"{type(op).__name__}")
    expected = (n, n) if square else (op.shape[0], n)
    if tuple(op.shape) != expected:
        shape = '[N_k, N_k]' if square else '[*, N_k]'
        raise ValueError(f"'{name}' must have shape {shape} = {list(expected)} for "
                         f"num_simplices={n}, got {list(op.shape)}")
