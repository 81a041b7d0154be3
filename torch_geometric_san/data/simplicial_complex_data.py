r"""The data object of a simplicial complex."""
import copy
import re
from itertools import chain
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import gudhi
import numpy as np
import scipy.sparse as sp
import torch
from torch import Tensor
from torch_geometric.data import Batch, Data
from torch_geometric.data.data import DataEdgeAttr, DataTensorAttr
from torch_geometric.data.storage import GlobalStorage

from torch_geometric_san.data import _interop, algebra
from torch_geometric_san.sparse import SimplicialOperators, SparseOperator
from torch_geometric_san.utils.validation import (check_arithmetic_dtype, check_batch,
                                                  check_bool, check_dense,
                                                  check_float_dtype, check_has_data,
                                                  check_edge_index, check_int,
                                                  check_num_nodes,
                                                  check_simplex_ids, is_index_tensor,
                                                  is_integer_tensor, range_problem,
                                                  rows_problem)
from torch_geometric_san.utils.warn import warn_user

#: Where a complex keeps the values operators(k) returned, with what they were built
#: from (in its __dict__, beside PyG's storage: neither collated nor saved).
_OPERATORS_CACHE = '_operators_cache'

#: Attributes the constructors compute; the name of a feature cannot be one of them.
_COMPUTED = re.compile(r'(simplices|spectrum|(boundary|down|up|hodge)_(index|weight))_(\d+)')
_INCREMENTED = re.compile(r'(simplices|boundary_index|down_index|up_index|'
                          r'hodge_index)_(\d+)')
_FEATURE = re.compile(r'x_(\d+)')
#: Integer dtypes of ids that batching cannot shift (SimplicialComplexData.__inc__).
_UNSHIFTABLE_IDS = (torch.uint8, torch.int8, torch.int16, torch.uint16, torch.uint32,
                    torch.uint64)
_OPERATOR_INDEX = re.compile(r'(boundary|down|up|hodge)_index_(\d+)')
_OPERATOR_WEIGHT = re.compile(r'(boundary|down|up|hodge)_weight_(\d+)')
_PER_ORDER = re.compile(r'.+_(\d+)')


class MixedOrderError(KeyError, ValueError):
    r"""Raised when a complex is asked for an attribute of an order above its own,
    which happens when PyG batches it after a complex of higher order. It is a
    :class:`KeyError`, as PyG's own storage raises for a missing attribute (so that
    :obj:`in`, :meth:`get` and :func:`hasattr` answer as before), and a
    :class:`ValueError`, with a message that says how to batch such complexes.

    Args:
        message (str): What is missing, and how to batch such complexes.
    """

    def __str__(self) -> str:
        return str(self.args[0])


class _ComplexStorage(GlobalStorage):
    # PyG's storage of a complex's attributes, which tells a missing attribute of an
    # order the complex does not have (MixedOrderError) from any other (KeyError).
    def __getitem__(self, key: str) -> Any:
        try:
            return self._mapping[key]
        except KeyError:
            match = _PER_ORDER.fullmatch(key) if isinstance(key, str) else None
            k = int(match.group(1)) if match else 0
            if k == 0 or f'simplices_{k}' in self._mapping:
                raise
            raise MixedOrderError(
                f"this complex has no {k}-simplices, so no attribute '{key}', which "
                "the first complex of its batch has: PyG batches the attributes of the "
                "first complex of a list, so all need the same order; give the "
                "complexes one order (the `order` argument of the constructors and "
                "liftings, or torch_geometric_san.data.pad_order), or batch them with "
                "torch_geometric_san.data.batch_complexes") from None

    # (Membership read off the mapping, not by catching the KeyError above: under
    # torch.compile, torch 2.9's Dynamo failed on the raised MixedOrderError.)
    def __contains__(self, key: object) -> bool:
        return key in self._mapping

    # PyG tells node from edge attributes by their sizes, which the attributes of the
    # complex itself can share by chance (B_1 has two entries per edge, as many as
    # the columns of a lifted graph's edge_index; x_1 may have N_0 rows): they are
    # neither, so that PyG's functions and transforms that select, pad or extend
    # node and edge attributes leave the operators and higher orders alone.
    def is_node_attr(self, key: str) -> bool:
        return not _of_higher_order(key) and super().is_node_attr(key)

    def is_edge_attr(self, key: str) -> bool:
        return not _of_higher_order(key) and super().is_edge_attr(key)

    # PyG's cache of those answers (keyed by its AttrType enum, rebuilt on demand) is
    # left out of saves and deep copies, as PyG's __copy__ leaves it out: saved (after
    # ToUndirected or node_attrs(), say) it made torch.load(weights_only=True) refuse
    # the file, and a deep copy shared it, so that what one learnt of its attributes
    # changed the other's answers.
    def __getstate__(self) -> Dict[str, Any]:
        out = super().__getstate__()
        out.pop('_cached_attr', None)
        return out

    def __deepcopy__(self, memo: Optional[Dict[int, Any]]) -> '_ComplexStorage':
        out = super().__deepcopy__(memo)
        out.__dict__.pop('_cached_attr', None)
        return out


def _of_higher_order(key: str) -> bool:
    # Whether key is computed by the constructors or a feature x_k of order k >= 1.
    feature = _FEATURE.fullmatch(key)
    return bool(_COMPUTED.fullmatch(key)) or (feature is not None and
                                              int(feature.group(1)) >= 1)

OperatorPair = Tuple[Tensor, Tensor]
SimplexInput = Union[np.ndarray, Tensor, Sequence[Any]]
IncidenceInput = Union[np.ndarray, Tensor, sp.spmatrix, sp.sparray]


class SimplicialComplexData(Data):
    r"""A simplicial complex of order :math:`K` with signals on its simplices, as a
    :class:`torch_geometric.data.Data` object.

    A k-simplex is a sorted tuple of :math:`k + 1` vertex ids, and that order is its
    reference orientation. Vertex ids are node indices ``0..num_nodes - 1``, as in PyG,
    so the 0-simplices are the nodes and ``simplices_0`` is not stored. Per order
    ``k = 0..K`` the object holds flat attributes (so that batching, :meth:`to` and
    :func:`torch.save` work unchanged):

    * ``num_nodes``: :math:`N_0`;
    * ``x_k`` ``[N_k, F_k]``: signal on the k-simplices (optional, passed by the user);
    * ``simplices_k`` ``[N_k, k + 1]`` (``k >= 1``): vertex ids, ascending;
    * ``boundary_index_k``, ``boundary_weight_k`` (``k >= 1``): :math:`\mathbf{B}_k`,
      row 0 of the index the (k-1)-face, row 1 the k-simplex, weights :math:`\pm 1`;
    * ``down_index_k``, ``down_weight_k`` (``k >= 1``):
      :math:`\mathbf{L}_k^{(d)} = \mathbf{B}_k^\top \mathbf{B}_k`;
    * ``up_index_k``, ``up_weight_k``:
      :math:`\mathbf{L}_k^{(u)} = \mathbf{B}_{k+1} \mathbf{B}_{k+1}^\top` (empty for
      ``k = K``);
    * ``hodge_index_k``, ``hodge_weight_k``: the normalised Hodge Laplacian
      :math:`\tilde{\mathbf{L}}_k = \mathbf{L}_k / \lambda_{\max}(\mathbf{L}_k)` with
      :math:`\mathbf{L}_k = \mathbf{L}_k^{(d)} + \mathbf{L}_k^{(u)}`.

    Operators are stored in :obj:`edge_index` style: row 0 of an index is the source
    :math:`j`, row 1 the target :math:`i` of entry :math:`(i, j)`, entries sorted by
    target. For the boundary that is the operator :math:`\mathbf{B}_k^\top` (faces to
    simplices): index pairs ``(f, s)`` are the entries of :math:`\mathbf{B}_k`, sorted
    by simplex. Laplacian indices include the diagonal and leave out exact zeros (in
    :math:`\mathbf{L}_k` the lower and upper entries of two faces of a common
    :math:`(k+1)`-simplex cancel). Weights are ``float32`` unless another ``dtype`` is
    asked for; they are exact except for the normalised Hodge Laplacian, whose
    :math:`\lambda_{\max}` comes from a dense solver up to
    :data:`~torch_geometric_san.sparse.operator.DENSE_EIGEN_LIMIT` rows and from Lanczos
    above: to the relative tolerance
    :data:`~torch_geometric_san.sparse.operator.EIGEN_TOL` in single precision, up
    to the rounding of float32 products (see
    :func:`~torch_geometric_san.sparse.largest_eigenvalue`), and to machine
    precision in double. A
    zero Laplacian (e.g. of isolated vertices) has no entries, and its normalised form
    is zero too (no division). Where one of :math:`\mathbf{L}_k^{(d)}`,
    :math:`\mathbf{L}_k^{(u)}` is zero, ``hodge_index_k`` is the same tensor as the
    other's index (no copy).

    Batching: :meth:`__inc__` shifts ``simplices_k`` by :math:`N_0`, the rows of
    ``boundary_index_k`` by :math:`N_{k-1}` and its columns by :math:`N_k`, and the
    Laplacian indices by :math:`N_k`; index tensors are concatenated along their last
    dimension and everything else along the first (PyG's default
    :meth:`__cat_dim__`). A :class:`torch_geometric.loader.DataLoader` therefore turns
    complexes into their disjoint union with no extra arguments, except that each
    complex keeps its own Hodge normalisation (the block-diagonal of the normalised
    Laplacians), so that batching does not change what a model computes on a complex.
    :meth:`simplex_batch` maps the simplices of each order to their complex.

    All complexes of a batch need the same attributes, so the same order: PyG collates
    the attributes of the first complex of a list (it has no hook that sees the whole
    list). Batched before a complex of lower order, a complex makes PyG look up
    attributes the other does not have, which raises
    :class:`~torch_geometric_san.data.MixedOrderError` (a :class:`ValueError`) saying
    so; batched after one, its higher orders are left out of the batch,
    and the batch refuses (:class:`ValueError`) any access to its top order (where
    the upper Laplacian of such a complex, kept, is not empty) instead of answering
    without them. Build the complexes with the same order (the ``order`` arguments
    pad a complex with empty orders), pad them with
    :func:`~torch_geometric_san.data.pad_order`, or batch them with
    :func:`~torch_geometric_san.data.batch_complexes`, which does both.

    Args:
        **kwargs: The attributes, as for :class:`torch_geometric.data.Data`. Build a
            complex with :meth:`from_simplices`, :meth:`from_simplex_tree` or
            :meth:`from_incidence` (or
            :class:`~torch_geometric_san.transforms.LiftToCliqueComplex`), which compute
            and check the operators; the plain constructor stores what it is given, as
            PyG's batching needs.

    Example:
        >>> data = SimplicialComplexData.from_simplices([[0, 1, 2]], close=True,
        ...                                             x_1=torch.ones(3, 4))
        >>> data.order, [data.num_simplices(k) for k in range(3)]
        (2, [3, 3, 1])
        >>> data.simplices_1
        tensor([[0, 1],
                [0, 2],
                [1, 2]])
        >>> data.boundary(2)
        (tensor([[0, 1, 2],
                [0, 0, 0]]), tensor([ 1., -1.,  1.]))
        >>> index, weight = data.hodge_laplacian(1)  # L_1 = 3 I, normalised
        >>> index, weight
        (tensor([[0, 1, 2],
                [0, 1, 2]]), tensor([1., 1., 1.]))
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # PyG's storage, with everything Data.__init__ put in it, as a
        # _ComplexStorage (which only adds to how a missing attribute is reported;
        # the storage's own __setattr__ would keep `__class__` as an entry)
        object.__setattr__(self._store, '__class__', _ComplexStorage)

    # Constructors ------------------------------------------------------------------

    @classmethod
    def from_simplices(
        cls,
        simplices: SimplexInput,
        close: bool = False,
        num_nodes: Optional[int] = None,
        order: Optional[int] = None,
        dtype: torch.dtype = torch.float32,
        laplacians: bool = True,
        **kwargs: Any,
    ) -> 'SimplicialComplexData':
        r"""Builds a complex from its simplices.

        Within each order the simplices keep the order they were given in, which is the
        row order of ``simplices_k`` and of the features ``x_k``.

        Args:
            simplices: A 2-D integer array or tensor ``[N, k + 1]`` of k-simplices, a
                sequence of such arrays (any orders), or a sequence of simplices, each
                a sequence of vertex ids. Vertex ids of a simplex must be distinct and
                ascending. 0-simplices may be listed but need not be: every id in
                ``0..num_nodes - 1`` is a vertex, in the order of the ids (which the
                rows of ``x_0`` follow, whatever order the 0-simplices are listed in).
            close (bool, optional): Add missing faces (appended after the given
                simplices of their order, in lexicographic order). Without it a missing
                face is an error. (default: :obj:`False`)
            num_nodes (int, optional): :math:`N_0`; at least the largest vertex id plus
                one, which is the default.
            order (int, optional): The order :math:`K` to store, padding empty orders
                above the largest simplex. (default: dimension of the largest simplex)
            dtype (torch.dtype, optional): Floating type of the operator weights.
                (default: :obj:`torch.float32`)
            laplacians (bool, optional): Store the Laplacians. Without them the
                complex holds its simplices, boundaries and ``spectrum_k`` (computed
                from the boundaries) and is meant for
                :class:`~torch_geometric_san.loader.SimplicialNeighborLoader`, which
                derives the operators of each sampled batch from the boundaries
                (the Laplacians hold several times the entries of the boundaries);
                :meth:`operators` refuses it.
                (default: :obj:`True`)
            **kwargs: Features ``x_k`` ``[N_k, F_k]`` (tensors or arrays) and any other
                attributes, stored as given, except numeric NumPy arrays (plain or
                memory-mapped) of the dtypes torch has, stored as tensors on their
                memory, as
                :func:`torch.from_numpy` makes them (a read-only array, such as a
                memory map, as a copy), so that attributes per simplex move with
                their simplices.

        Raises:
            TypeError: Non-integer vertex ids, a :obj:`bool` or float where an int is
                meant, a :obj:`close` other than :obj:`True`/:obj:`False`, or bad
                features (not dense numeric tensors or arrays).
            ValueError: Negative, repeated or unsorted vertex ids, duplicated simplices,
                missing faces (unless :obj:`close`), ids beyond :obj:`num_nodes`,
                simplices above :obj:`order`, a :obj:`num_nodes` (or largest vertex id)
                whose arrays cannot fit in this machine's memory, or features of the
                wrong size or with NaN/inf entries.
        """
        check_bool(laplacians, 'laplacians')
        groups = _parse_simplices(simplices)
        return cls._from_groups(groups, close, num_nodes, order, dtype, kwargs,
                                laplacians)

    @classmethod
    def from_simplex_tree(
        cls,
        simplex_tree: gudhi.SimplexTree,
        num_nodes: Optional[int] = None,
        order: Optional[int] = None,
        dtype: torch.dtype = torch.float32,
        **kwargs: Any,
    ) -> 'SimplicialComplexData':
        r"""Builds a complex from a GUDHI :class:`~gudhi.SimplexTree`.

        The k-simplices are stored in lexicographic order. The tree is not modified.

        Args:
            simplex_tree (gudhi.SimplexTree): The complex; vertex ids must be
                non-negative.
            num_nodes (int, optional): :math:`N_0`; at least the largest vertex id plus
                one, which is the default.
            order (int, optional): Keep the skeleton up to this order, padding empty
                orders if the tree has a lower dimension. (default: the tree's
                dimension)
            dtype (torch.dtype, optional): Floating type of the operator weights.
                (default: :obj:`torch.float32`)
            **kwargs: Features ``x_k`` and other attributes, and
                :obj:`laplacians`, as in :meth:`from_simplices`.
        """
        if not isinstance(simplex_tree, gudhi.SimplexTree):
            raise TypeError(f"simplex_tree must be a gudhi.SimplexTree, not "
                            f"{type(simplex_tree).__name__}")
        if order is None:
            order = max(simplex_tree.dimension(), 0)
        order = check_int(order, 'order', minimum=0)
        return cls.from_simplices(algebra.simplex_tree_to_arrays(simplex_tree, order),
                                  num_nodes=num_nodes, order=order, dtype=dtype,
                                  **kwargs)

    @classmethod
    def from_incidence(
        cls,
        incidence: Sequence[IncidenceInput],
        num_nodes: Optional[int] = None,
        dtype: torch.dtype = torch.float32,
        laplacians: bool = True,
        **kwargs: Any,
    ) -> 'SimplicialComplexData':
        r"""Builds a complex from its boundary (incidence) matrices
        :math:`\mathbf{B}_1, \ldots, \mathbf{B}_K`.

        Column :math:`j` of :math:`\mathbf{B}_k` is the j-th k-simplex, with
        :math:`k + 1` entries :math:`\pm 1` on its faces. Its vertex set is recovered
        from the faces (``simplices_k``, ascending), and its orientation is the one of
        the column: the stored boundary equals the given matrix, so signals keep the
        meaning they had with respect to it.

        Args:
            incidence (Sequence): :math:`\mathbf{B}_k` of shape ``[N_{k-1}, N_k]`` for
                ``k = 1..K``, each a dense NumPy array, a SciPy sparse matrix/array or
                a dense or sparse torch tensor.
            num_nodes (int, optional): :math:`N_0`; needed only when no matrix is
                given, otherwise it must equal the rows of :math:`\mathbf{B}_1`.
            dtype (torch.dtype, optional): Floating type of the operator weights.
                (default: :obj:`torch.float32`)
            laplacians (bool, optional): Store the Laplacians, as for
                :meth:`from_simplices` (without them, what the neighbour loader
                needs). (default: :obj:`True`)
            **kwargs: Features ``x_k`` and other attributes, as in
                :meth:`from_simplices`.

        Raises:
            TypeError: If a matrix is of an unsupported type or dtype.
            ValueError: Entries other than :math:`0, \pm 1`, a column with the wrong
                number of entries, shapes that do not chain, an edge without one
                :math:`+1` and one :math:`-1`,
                :math:`\mathbf{B}_k \mathbf{B}_{k+1} \neq 0`, duplicated simplices, or
                bad features.
        """
        if not isinstance(incidence, (list, tuple)):
            raise TypeError(f"incidence must be a list of matrices B_1..B_K, not "
                            f"{type(incidence).__name__}")
        given = sorted({'order', 'close', 'simplices'} & kwargs.keys())
        if given:  # (arguments of from_simplices, stored as attributes silently)
            raise TypeError(f"from_incidence takes no '{given[0]}' (an argument of "
                            f"from_simplices): the matrices give the complex")
        boundaries = [_as_incidence(B, k) for k, B in enumerate(incidence, start=1)]
        for k in range(1, len(boundaries)):
            if boundaries[k].shape[0] != boundaries[k - 1].shape[1]:
                raise ValueError(
                    f"B_{k + 1} has {boundaries[k].shape[0]} rows but B_{k} has "
                    f"{boundaries[k - 1].shape[1]} columns; B_{k + 1} must map onto "
                    f"the {k}-simplices of B_{k}")
        if boundaries:
            if num_nodes is not None and check_int(num_nodes, 'num_nodes') != \
                    boundaries[0].shape[0]:
                raise ValueError(f"num_nodes={num_nodes} but B_1 has "
                                 f"{boundaries[0].shape[0]} rows")
            num_nodes = boundaries[0].shape[0]
        elif num_nodes is None:
            raise ValueError("num_nodes is needed when no incidence matrix is given")
        num_nodes = check_num_nodes(num_nodes)
        algebra.check_chain_complex(boundaries)
        simplices = algebra.incidence_to_simplices(boundaries)
        simplices[0] = np.arange(num_nodes)[:, None]
        for k in range(1, len(simplices)):
            algebra.check_distinct(simplices[k], k, num_nodes)
        attrs = _check_attributes(kwargs, [len(rows) for rows in simplices], dtype)
        return cls._build(simplices, boundaries, dtype, attrs,
                          check_bool(laplacians, 'laplacians'))

    # Interoperability ----------------------------------------------------------------

    @classmethod
    def from_toponetx(
        cls,
        complex: Any,
        signal: Optional[str] = 'x',
        order: Optional[int] = None,
        dtype: torch.dtype = torch.float32,
    ) -> 'SimplicialComplexData':
        r"""Builds a complex from a TopoNetX :class:`toponetx.SimplicialComplex`
        (TopoNetX is an optional dependency: ``pip install ".[toponetx]"`` in a clone
        of the repository).

        The node labels, sorted, become the vertex ids ``0..N_0 - 1`` (integer
        labels ``0..N_0 - 1`` stay as they are). TopoNetX orients a
        simplex by its sorted labels (its signed incidence matrices use the signs
        :math:`(-1)^i`), which is this package's reference orientation too, so the
        boundary matrices agree with TopoNetX's
        ``incidence_matrix(k, signed=True)`` and signals keep their meaning. The
        k-simplices keep TopoNetX's order (``complex.skeleton(k)``, the order of the
        rows and columns of its matrices).

        Args:
            complex (toponetx.SimplicialComplex): The complex (not modified).
            signal (str, optional): The simplex attribute read as the signals
                ``x_k``: on every k-simplex of an order or on none (a scalar per
                simplex gives one channel); :obj:`None` reads none. The empty
                signals of orders without simplices are read from the complex
                attribute ``complex.complex[signal + "_of_empty_orders"]``, where
                :meth:`to_toponetx` records them. (default: :obj:`"x"`)
            order (int, optional): Keep the skeleton up to this order, padding empty
                orders above the complex's dimension. (default: its dimension, or the
                order :meth:`to_toponetx` recorded as
                ``complex.complex["padded_order"]`` where it is larger)
            dtype (torch.dtype, optional): Floating type of the operator weights.
                (default: :obj:`torch.float32`)

        Raises:
            ImportError: If TopoNetX is not installed.
            TypeError: If :obj:`complex` is not a TopoNetX simplicial complex, its
                node labels cannot be sorted (e.g. ints and strings mixed),
                :obj:`signal` is not a str or :obj:`None`, or the attribute holds
                other values than numbers.
            ValueError: If :obj:`signal` is set on only some simplices of an order,
                or its values of one order differ in shape.
        """
        return _interop._from_toponetx(cls, complex, signal, order, dtype)

    def to_toponetx(self, signal: Optional[str] = 'x', oriented: bool = True) -> Any:
        r"""The complex as a TopoNetX :class:`toponetx.SimplicialComplex` (TopoNetX is
        an optional dependency: ``pip install ".[toponetx]"`` in a clone of the
        repository), with vertex labels ``0..N_0 - 1``.

        What TopoNetX holds is kept: the simplices, and the signals ``x_k`` as the
        simplex attribute :obj:`signal` (one NumPy row per simplex; bfloat16, which
        NumPy lacks, as float32). The signal of an order without simplices (e.g.
        ``x_2`` of a lifted graph without triangles) has no simplex to carry it: its
        shape and dtype are recorded as ``{k: ([0, F], dtype)}`` in the complex
        attribute ``complex.complex[signal + "_of_empty_orders"]``, and the order of
        a complex whose top orders have no simplices (a lifting pads them) as
        ``complex.complex["padded_order"]``. TopoNetX orients
        every simplex by its ascending vertex ids; a complex built by
        :meth:`from_incidence` may orient some simplices the other way, and with
        :obj:`oriented` their signal rows are negated so that they mean the same in
        TopoNetX's orientation. Other attributes (``y``, ``pos``, the operators,
        which TopoNetX recomputes) and the order of the simplices (TopoNetX keeps its
        own) are not carried; :meth:`from_toponetx` of the result gives back this
        complex for a complex in lexicographic order with reference orientations,
        such as the liftings build.

        Args:
            signal (str, optional): The attribute name of the signals; :obj:`None`
                carries none. (default: :obj:`"x"`)
            oriented (bool, optional): The signals are oriented (flows, ...), so they
                change sign with the orientation; :obj:`False` for unoriented features,
                copied as they are. (default: :obj:`True`)

        Returns:
            toponetx.SimplicialComplex: A new complex (its signals are copies).

        Raises:
            ImportError: If TopoNetX is not installed.
            TypeError: If :obj:`signal` is not a str or :obj:`None`, or
                :obj:`oriented` not a bool, or an unsigned or bool signal would
                be negated (:obj:`oriented=True` with simplices stored in the
                opposite orientation).
            ValueError: If a signal ``x_k`` has not one row per k-simplex (or
                :math:`k` is above the complex's order), or a signed integer one
                would be negated where it holds its type's minimum.
        """
        return _interop._to_toponetx(self, signal, oriented)

    def to_networkx(self, signal: Optional[str] = 'x', oriented: bool = True) -> Any:
        r"""The 1-skeleton as a :class:`networkx.Graph`: nodes ``0..N_0 - 1`` and the
        edges ``simplices_1``, with ``x_0`` and ``x_1`` rows (NumPy) as the node and
        edge attribute :obj:`signal` where they are given (:obj:`None`: no
        attributes). An undirected graph records no orientation: with
        :obj:`oriented`, an edge's ``x_1`` row is its flow from the lower vertex id
        to the higher (the reference orientation, as in :meth:`to_toponetx`),
        negated for an edge stored the other way (possible with
        :meth:`from_incidence`). For the graph a complex was lifted from, use
        :func:`torch_geometric.utils.to_networkx` on its kept ``edge_index``.

        Args:
            signal (str, optional): The attribute name of the signals.
                (default: :obj:`"x"`)
            oriented (bool, optional): ``x_1`` is oriented (flows, ...), so it
                changes sign with the orientation; :obj:`False` for unoriented
                edge features, copied as they are. (default: :obj:`True`)

        Returns:
            networkx.Graph: A new undirected graph (its attributes are copies).

        Raises:
            TypeError: If :obj:`signal` is not a str or :obj:`None`, or
                :obj:`oriented` not a bool, or an unsigned or bool ``x_1`` would be
                negated.
            ValueError: If ``x_0`` or ``x_1`` has not one row per simplex, a
                signal ``x_k`` is of an order above the complex's, or a signed
                integer ``x_1`` would be negated where it holds its type's
                minimum.
        """
        return _interop._to_networkx(self, signal, oriented)

    @classmethod
    def _from_groups(cls, groups: Dict[int, np.ndarray], close: bool,
                     num_nodes: Optional[int], order: Optional[int], dtype: torch.dtype,
                     kwargs: Dict[str, Any],
                     laplacians: bool = True) -> 'SimplicialComplexData':
        # groups maps k + 1 to the k-simplices, rows as given.
        check_bool(close, 'close')
        top = max(groups, default=1) - 1
        if order is None:
            order = top
        order = check_int(order, 'order', minimum=0)
        if top > order:
            raise ValueError(f"simplices of order {top} are given but order={order}")
        for width, rows in groups.items():
            algebra.check_simplex_rows(rows, width - 1)
        needed = max((int(rows.max(initial=-1)) for rows in groups.values()),
                     default=-1) + 1
        if num_nodes is None:
            num_nodes = needed
        num_nodes = check_num_nodes(num_nodes)
        if needed > num_nodes:
            raise ValueError(f"vertex id {needed - 1} is out of range for "
                             f"num_nodes={num_nodes}")
        simplices = [np.arange(num_nodes)[:, None]] + [
            groups.get(k + 1, np.empty((0, k + 1), dtype=np.int64))
            for k in range(1, order + 1)
        ]
        if 1 in groups:  # the 0-simplices listed (the vertices are all the ids)
            algebra.check_distinct(groups[1], 0, num_nodes)
        for k in range(1, order + 1):
            algebra.check_distinct(simplices[k], k, num_nodes)
        if close:
            simplices = algebra.close_under_faces(simplices)
        attrs = _check_attributes(kwargs, [len(rows) for rows in simplices], dtype)
        boundaries = [algebra.boundary_matrix(simplices[k], simplices[k - 1])
                      for k in range(1, order + 1)]
        return cls._build(simplices, boundaries, dtype, attrs, laplacians)

    @classmethod
    def _build(cls, simplices: List[np.ndarray], boundaries: List[sp.csc_array],
               dtype: torch.dtype, attrs: Dict[str, Any],
               laplacians: bool = True) -> 'SimplicialComplexData':
        # From validated simplices[k] (k = 0..K), B_1..B_K and user attributes.
        attrs = dict(attrs, num_nodes=len(simplices[0]))
        for k, B in enumerate(boundaries, start=1):
            attrs[f'simplices_{k}'] = torch.from_numpy(
                np.ascontiguousarray(simplices[k], dtype=np.int64))
            attrs[f'boundary_index_{k}'] = _index(B)
            attrs[f'boundary_weight_{k}'] = _weight(B, dtype)
        if not laplacians:  # the spectra alone, from the boundaries
            eigenvalues = [0.0] + algebra.boundary_eigenvalues(boundaries, dtype) + [0.0]
            for k in range(len(boundaries) + 1):
                attrs[f'spectrum_{k}'] = torch.tensor(
                    [eigenvalues[k:k + 2]], dtype=dtype)
            return cls(**attrs)
        for k, down, up, hodge, s_down, s_up in algebra.hodge_laplacians(
                boundaries, len(simplices[0]), dtype):
            # the top order stores its (empty) upper Laplacian too, so that a batch
            # can tell when PyG dropped the higher orders of a member (_check_k)
            stored = {'down': down if k > 0 else None, 'up': up}
            for name, matrix in stored.items():
                if matrix is not None:
                    attrs[f'{name}_index_{k}'] = _index(matrix)
                    attrs[f'{name}_weight_{k}'] = _weight(matrix, dtype)
            same = [name for name, matrix in stored.items() if matrix is hodge]
            attrs[f'hodge_index_{k}'] = (attrs[f'{same[0]}_index_{k}'] if same else
                                         _index(hodge))
            lam = max(s_down, s_up)
            attrs[f'hodge_weight_{k}'] = _weight(hodge, dtype,
                                                 1.0 / lam if lam > 0 else 1.0)
            attrs[f'spectrum_{k}'] = torch.tensor([[s_down, s_up]], dtype=dtype)
        return cls(**attrs)

    # Accessors ---------------------------------------------------------------------

    @property
    def order(self) -> int:
        r"""The order :math:`K` of the complex (of its stored attributes)."""
        orders = [int(m.group(1)) for key in self.keys()
                  if (m := re.fullmatch(r'simplices_(\d+)', key))]
        return max(orders, default=0)

    def num_simplices(self, k: int) -> int:
        r"""The number :math:`N_k` of k-simplices."""
        k = self._check_k(k)
        if k > 0:
            return self[f'simplices_{k}'].size(0)
        if self.num_nodes is None:  # (the plain constructor stores what it is given)
            raise ValueError("the complex has no 'num_nodes' (N_0); build it with a "
                             "constructor (from_simplices, ...) or set data.num_nodes")
        return int(self.num_nodes)

    def boundary(self, k: int) -> OperatorPair:
        r"""The boundary :math:`\mathbf{B}_k` as ``(index [2, nnz], weight [nnz])``;
        row 0 of the index is the (k-1)-face, row 1 the k-simplex. Empty for
        ``k = 0``."""
        return self._operator('boundary', k)

    def down_laplacian(self, k: int) -> OperatorPair:
        r"""The lower Laplacian :math:`\mathbf{L}_k^{(d)}` as ``(index, weight)``;
        empty for ``k = 0``."""
        return self._operator('down', k)

    def up_laplacian(self, k: int) -> OperatorPair:
        r"""The upper Laplacian :math:`\mathbf{L}_k^{(u)}` as ``(index, weight)``;
        empty for ``k = K``."""
        return self._operator('up', k)

    def hodge_laplacian(self, k: int) -> OperatorPair:
        r"""The normalised Hodge Laplacian :math:`\tilde{\mathbf{L}}_k` (largest
        eigenvalue 1) as ``(index, weight)``."""
        return self._operator('hodge', k)

    @torch.compiler.disable
    def operators(self, k: int) -> SimplicialOperators:
        r"""The operators of the k-simplices as one value (upper, lower and
        normalised Hodge Laplacians, boundary :math:`\mathbf{B}_k` and coboundary
        :math:`\mathbf{B}_{k+1}^{\top}`), which every layer takes:
        ``conv(data.x_1, data.operators(1))``.

        Building it costs a few references; the forms the layers derive from it
        (compressed rows, neighbourhoods, ...) are computed on first use and kept on
        the value, and the complex returns the same value again while the tensors it
        is built from are unchanged (the same objects, not modified in place, with
        the same ``requires_grad``), so calling ``data.operators(k)`` at every step
        of a training loop derives them once. The value is not copied with the
        complex, nor saved. On a batch the operators are block-diagonal, and the
        spectral normalisation of the fixed layers
        (:meth:`~torch_geometric_san.sparse.SparseOperator.scaled`) uses the largest
        eigenvalue of each complex (``spectrum_k``), which a batch of several
        complexes must hold (a :class:`ValueError` names it otherwise). The stored
        ``spectrum_k`` is a constant computed when the complex was built: after
        the Laplacians' values are replaced or edited, delete it from one complex
        (:meth:`~torch_geometric_san.sparse.SparseOperator.scaled` then computes
        the largest eigenvalue of the values it finds) or store the new one.

        Args:
            k (int): The order.

        Returns:
            SimplicialOperators: The operators; absent ones (the lower Laplacian and
            boundary of order 0, the upper Laplacian and coboundary of order
            :math:`K`) are empty.
        """
        k = self._check_k(k)
        inputs = self._operator_inputs(k)
        if inputs is None:
            return self._build_operators(k)
        cache = self.__dict__.setdefault(_OPERATORS_CACHE, {})
        kept = cache.get(k)
        if kept is not None and _same_inputs(kept[0], inputs):
            return kept[1]
        with torch.inference_mode(False):  # kept: no inference tensors of its own
            ops = self._build_operators(k)
        cache[k] = (inputs, ops)
        return ops

    def _operator_inputs(self, k: int) -> Optional[List[Any]]:
        # What operators(k) reads: the tensors (as objects with their in-place
        # version counters, and whether autograd tracks them: requires_grad_()
        # leaves the counter as it is, and the kept forms of values that turned
        # learnable would give them no gradient) and sizes that decide the value;
        # None where a tensor has no version counter (made in
        # torch.inference_mode), so that the value is not kept.
        store = self._store
        slices = store.__dict__.get('_slice_dict') or {}  # a batch's
        names = [f'{name}_{part}_{k}' for name in ('up', 'down', 'hodge', 'boundary')
                 for part in ('index', 'weight')]
        names += [f'boundary_index_{k + 1}', f'boundary_weight_{k + 1}', f'spectrum_{k}',
                  f'simplices_{k - 1}', f'simplices_{k}', f'simplices_{k + 1}',
                  'hodge_weight_0', 'spectrum_0', 'batch']
        values = [store.get(name) for name in names]
        values += [slices.get(f'simplices_{k}'), store.get('num_nodes')]
        if any(isinstance(v, Tensor) and v.is_inference() for v in values):
            return None
        return [(v, (v._version, v.requires_grad) if isinstance(v, Tensor) else None)
                for v in values]

    def _build_operators(self, k: int) -> SimplicialOperators:
        n = self.num_simplices(k)
        eigenvalues = self._row_eigenvalues(k)

        def square(name: str, column: int) -> SparseOperator:
            index, weight = self._operator(name, k)
            return SparseOperator(index, weight, n, eigenvalues[:, column]
                                  if eigenvalues is not None and column >= 0 else None)

        def incidence(j: int) -> SparseOperator:
            # B_j^T, [N_j, N_{j-1}] (faces to simplices), as stored; empty for
            # j = 0 and j = K + 1.
            index, weight = (self._operator('boundary', j) if 1 <= j <= self.order
                             else self._operator('boundary', 0))
            shape = (self.num_simplices(j) if j <= self.order else 0,
                     self.num_simplices(j - 1) if j >= 1 else 0)
            return SparseOperator(index, weight, shape)

        return SimplicialOperators.from_transposed_boundary(
            n, incidence(k), up=square('up', 1), down=square('down', 0),
            hodge=square('hodge', -1), coboundary=incidence(k + 1))

    def _row_eigenvalues(self, k: int) -> Optional[Tensor]:
        # (lambda_max(L_k^(d)), lambda_max(L_k^(u))) of each k-simplex's complex,
        # [N_k, 2]; None for one complex made without them (scaled() then computes
        # its own). A batch of several needs them: scaled() would divide every
        # complex by the largest eigenvalue of the whole batch.
        if f'spectrum_{k}' not in self:
            if isinstance(self, Batch) and self.num_graphs > 1:
                raise ValueError(_missing_spectrum(k))
            return None
        problem = self._spectrum_problem(k)
        if problem:
            raise ValueError(problem)
        spectrum = self[f'spectrum_{k}']
        if spectrum.size(0) == 1:
            return spectrum.expand(self.num_simplices(k), 2)
        return spectrum[self.simplex_batch(k)]

    def _spectrum_problem(self, k: int) -> Optional[str]:
        # What is wrong with a stored spectrum_k: one row [1, 2] for a complex, one
        # per complex for a batch (a batch turned into one complex, e.g. by
        # from_dict(batch.to_dict()), kept its rows, and scaled() then divided
        # every block by the eigenvalues of the first complex).
        spectrum = self._store.get(f'spectrum_{k}')
        batch = isinstance(self, Batch)
        rows = self.num_graphs if batch else 1
        if isinstance(spectrum, Tensor) and spectrum.shape == (rows, 2):
            return None
        shape = list(spectrum.shape) if isinstance(spectrum, Tensor) else spectrum
        return (f"'spectrum_{k}' must have shape [{rows}, 2], the largest eigenvalues "
                f"of the lower and upper Laplacians of "
                f"{'each complex of the batch' if batch else 'the complex'} (got "
                f"{shape})" + ('' if batch else "; a batch made into one complex keeps "
                               "one row per complex: split it with to_data_list(), or "
                               "build the complex again"))

    def simplex_batch(self, k: int) -> Tensor:
        r"""The vector ``[N_k]`` mapping each k-simplex to the index of its complex in
        a batch (all zeros outside a batch)."""
        n = self.num_simplices(k)
        device = self._device()
        if not isinstance(self, Batch):
            return torch.zeros(n, dtype=torch.long, device=device)
        if k == 0:  # (PyG's own vector, checked: one changed since failed inside
            # scatter or indexing, or pooled the vertices into other complexes)
            batch = self.batch
            check_batch(batch, n, self.num_graphs)
            ptr = self._store.get('ptr')
            if isinstance(ptr, Tensor) and (
                    not is_integer_tensor(ptr) or ptr.shape != (self.num_graphs + 1, ) or int(ptr[0]) != 0
                    or int(ptr[-1]) != n or bool((ptr.diff() < 0).any())):
                raise ValueError(f"the batch's 'ptr' must hold the {self.num_graphs + 1} "
                                 f"ascending offsets of each complex's vertices, from 0 "
                                 f"to {n} (changed after batching?)")
            if isinstance(ptr, Tensor) and not torch.equal(
                    batch, torch.repeat_interleave(torch.arange(
                        self.num_graphs, device=device), ptr.diff().to(device),
                        output_size=n)):
                raise ValueError("the batch's 'batch' vector does not give each vertex "
                                 "the complex its 'ptr' puts it in (changed after "
                                 "batching?)")
            return batch
        counts = self._slice_dict[f'simplices_{k}'].diff().to(device)
        return torch.repeat_interleave(torch.arange(self.num_graphs, device=device),
                                       counts, output_size=n)

    # Feature counts ----------------------------------------------------------------

    def num_simplex_features(self, k: int) -> int:
        r"""The number :math:`F_k` of features per k-simplex: the columns of ``x_k``,
        ``0`` where the complex has no ``x_k``."""
        k = self._check_k(k)
        x = self[f'x_{k}'] if f'x_{k}' in self else None
        if isinstance(x, Tensor) and x.dim() == 0:  # (validate() says what is wrong)
            raise ValueError(f"'x_{k}' is a scalar, not one row per {k}-simplex")
        return 0 if x is None else (1 if x.dim() == 1 else int(x.size(-1)))

    @property
    def num_node_features(self) -> int:
        r"""The number :math:`F_0` of features per node (0-simplex), as PyG's
        :attr:`torch_geometric.data.Data.num_node_features` gives for ``x``; read by
        :attr:`torch_geometric.data.Dataset.num_node_features`."""
        return self.num_simplex_features(0)

    @property
    def num_features(self) -> int:
        r"""Alias of :attr:`num_node_features`, as in PyG; read by
        :attr:`torch_geometric.data.Dataset.num_features`. A complex lifted with
        :obj:`lift_x` (e.g. by
        :class:`~torch_geometric_san.transforms.LiftToCliqueComplex`) carries this
        many features on every order except where other features are appended (edge
        attributes on order 1); :meth:`num_simplex_features` gives each order."""
        return self.num_node_features

    @property
    def num_edge_features(self) -> int:
        r"""The number :math:`F_1` of features per edge (1-simplex), ``x_1``'s columns
        (PyG's :attr:`torch_geometric.data.Data.num_edge_features` reads
        ``edge_attr``, which a lifted complex holds as ``x_1``); read by
        :attr:`torch_geometric.data.Dataset.num_edge_features`. (:attr:`num_edges`
        stays PyG's count, by which PyG tells edge attributes: the columns of a kept
        graph's ``edge_index``, or the size of another tensor whose name contains
        "edge"; the complex's edges are :meth:`num_simplices` ``(1)``.)"""
        return self.num_simplex_features(1) if self.order >= 1 else 0

    def _operator(self, name: str, k: int) -> OperatorPair:
        k = self._check_k(k)
        if f'{name}_index_{k}' in self._store:  # O(1); `in self` lists every key
            index = self[f'{name}_index_{k}']
            if not is_index_tensor(index):
                # (set after construction; it failed inside torch's conversions)
                found = index.dtype if isinstance(index, Tensor) else type(index).__name__
                raise ValueError(f"'{name}_index_{k}' needs int64 or int32 ids (found "
                                 f"{found}): build the complex again, or check it with "
                                 f"validate()")
            return index, self[f'{name}_weight_{k}']
        weight = self._operator_tensor()
        if weight is None or (name != 'boundary' and 'hodge_index_0' not in self._store):
            raise ValueError(f"the complex holds no Laplacians (built with "
                             f"laplacians=False), so it has no {name} operator of "
                             f"order {k}; sample it with SimplicialNeighborLoader or "
                             f"build it with laplacians=True")
        # Absent and empty: the boundary and lower Laplacian of the vertices, and the
        # upper Laplacian of the top order where it is not stored (older complexes,
        # sampled sub-complexes). Any other operator was deleted or never stored.
        if not ((k == 0 and name in ('boundary', 'down')) or
                (name == 'up' and k == self.order)):
            raise ValueError(f"the complex has no '{name}_index_{k}' (deleted, or "
                             f"never stored?): build the complex again")
        return (torch.empty((2, 0), dtype=torch.long, device=weight.device),
                weight.new_empty((0, )))

    def _check_k(self, k: int) -> int:
        # k as a Python int (a NumPy one wrapped in k - 1 for k = np.uint8(0))
        if not isinstance(k, (int, np.integer)) or isinstance(k, bool):
            raise TypeError(f"the order k must be an int, not {type(k).__name__}")
        k = int(k)
        # (k-simplices are stored for every k up to the order: one look-up, where
        # self.order would scan every key)
        if not (k == 0 or (k > 0 and f'simplices_{k}' in self._store)):
            self._check_stored_orders(k)
            raise ValueError(f"order k={k} is out of range for a complex of order "
                             f"{self.order}")
        if f'simplices_{k + 1}' not in self._store and isinstance(self, Batch):
            self._check_stored_orders(k + 1)
            # k is the top order of the batch: its upper Laplacian is empty unless a
            # member of higher order lost its (k+1)-simplices in PyG's collation, or
            # a member is a sub-complex sampled at its top order (batch_complexes
            # pads those).
            up = self._store.get(f'up_index_{k}')
            if up is not None and up.size(-1) > 0:
                entries = self._slice_dict[f'up_index_{k}'].diff()
                lost = entries.nonzero().view(-1).tolist()
                raise ValueError(
                    f"this batch is of order {k} (the order of its first complex), but "
                    f"its complexes {lost} have an upper Laplacian of order {k}: "
                    f"either they have {k + 1}-simplices, which PyG's collation left "
                    "out (it keeps the attributes of the first complex of a list, and "
                    "drops those named in `exclude_keys`), or they are sub-complexes "
                    "sampled at their top order "
                    "(simplicial_subcomplex, SimplicialNeighborLoader), which keep the "
                    "restriction of their complex's. Batch them with "
                    "torch_geometric_san.data.batch_complexes (also as the collate_fn "
                    "of a torch DataLoader), or pad each with "
                    f"torch_geometric_san.data.pad_order(data, {k + 1}) (or give the "
                    "complexes one order: the `order` argument of the constructors and "
                    "liftings)")
        return k

    def _check_stored_orders(self, k: int) -> None:
        # The k-simplices are missing: fine above the order K, a gap below it (a
        # key deleted or left out of a batch), which would otherwise read as a
        # complex of lower order.
        order = self.order
        if 0 < k < order:
            raise ValueError(f"the complex has {order}-simplices but no "
                             f"'simplices_{k}' (deleted, or left out of a batch with "
                             f"`exclude_keys`?): the simplices of every order up to "
                             f"{order} must be stored")

    # Validation --------------------------------------------------------------------

    def validate(self, raise_on_error: bool = True) -> bool:
        r"""Validates the complex, as :meth:`torch_geometric.data.Data.validate`
        validates a graph: besides PyG's checks (``num_nodes``, a kept graph
        ``edge_index``), every ``simplices_k`` is :math:`[N_k, k + 1]` with vertex
        ids (:obj:`torch.long`, or :obj:`torch.int32`) in :math:`[0, N_0)`,
        distinct and ascending in each row, and no row
        twice (every order up to :math:`K` present), every feature ``x_k`` has
        :math:`N_k` rows (and :math:`k` is an order of the complex), every stored
        operator has indices in range, of the orders it maps between, and one value
        per entry, sorted by its row 1 (target), every boundary :math:`k + 1` entries
        per k-simplex, and a batch
        of several complexes holds every ``spectrum_k`` (each complex's largest
        eigenvalues, for the per-complex normalisation of its operators). A graph's
        ``x`` set on a complex is a problem too: the models, exports and feature
        counts read the features of each order, ``x_0`` for the vertices, and would
        ignore it.
        The constructors and liftings check all this; attributes set or changed
        afterwards are what it finds.

        Args:
            raise_on_error (bool, optional): If :obj:`True`, raises a
                :class:`ValueError` at the first problem; otherwise warns about each.
                (default: :obj:`True`)

        Returns:
            bool: Whether the complex passed every check.
        """
        # (a string such as 'False' was taken as true)
        raise_on_error = check_bool(raise_on_error, 'raise_on_error')
        status = super().validate(raise_on_error)
        name = type(self).__name__

        def problem(message: str) -> None:
            nonlocal status
            status = False
            if raise_on_error:  # (as PyG's warn_or_raise; warned at the user's line)
                raise ValueError(f"{message} in '{name}'")
            warn_user(f"{message} in '{name}'")

        if 'x' in self:
            problem("'x' is set, but a complex holds its features per order: the "
                    "models, exports and feature counts read x_0 for the vertices "
                    "(x_k for the k-simplices) and ignore 'x'; store it as x_0")
        for key in list(self.keys()):  # (the checks below read them as tensors)
            if _COMPUTED.fullmatch(key) and not isinstance(self[key], Tensor):
                problem(f"'{key}' must be a tensor (found {type(self[key]).__name__})")
        if not status:
            return status
        order, num_nodes = self.order, self.num_nodes or 0
        sizes = [num_nodes]
        for k in range(1, order + 1):
            simplices = self._store.get(f'simplices_{k}')
            if simplices is None:  # (the batching error it raised named no cause)
                problem(f"'simplices_{k}' is missing, but the complex has order "
                        f"{order} ('simplices_{order}'); an order without simplices "
                        f"needs an empty [0, {k + 1}] tensor")
                sizes.append(0)
                continue
            sizes.append(simplices.size(0) if simplices.dim() else 0)
            if simplices.dim() != 2 or simplices.size(1) != k + 1:
                problem(f"'simplices_{k}' needs shape [N_{k}, {k + 1}] (found "
                        f"{list(simplices.shape)})")
            elif not is_index_tensor(simplices):
                # (batching shifts the ids in their own dtype: narrower ones wrap)
                problem(f"'simplices_{k}' needs int64 (or int32) vertex ids (found "
                        f"{simplices.dtype})")
            elif message := range_problem(f"'simplices_{k}'", simplices, num_nodes,
                                          'vertex ids'):
                problem(message)
            elif not bool((simplices[:, 1:] > simplices[:, :-1]).all()):
                row = int((simplices[:, 1:] <= simplices[:, :-1]).any(1).nonzero()[0])
                problem(f"'simplices_{k}' needs the vertex ids of each simplex "
                        f"distinct and ascending, the order that orients it (found "
                        f"{simplices[row].tolist()} in row {row})")
            elif torch.unique(simplices, dim=0).size(0) != simplices.size(0):
                problem(f"'simplices_{k}' lists a {k}-simplex more than once")
        for k in range(order + 1):
            if f'spectrum_{k}' in self._store:
                message = self._spectrum_problem(k)
                if message:
                    problem(message)
            elif isinstance(self, Batch) and self.num_graphs > 1:
                problem(_missing_spectrum(k))
        for key in list(self.keys()):
            feature = _FEATURE.fullmatch(key)
            operator = _OPERATOR_INDEX.fullmatch(key)
            if feature is not None:
                k = int(feature.group(1))
                message = (f"'{key}' is given but the complex has order {order}"
                           if k > order else rows_problem(key, self[key], k, sizes[k]))
                if message:
                    problem(message)
            elif operator is not None and int(operator.group(2)) <= order:
                kind, k = operator.group(1), int(operator.group(2))
                index, weight = self[key], self._store.get(f'{kind}_weight_{k}')
                # rows index the (k-1)-faces for a boundary, the k-simplices otherwise
                bounds = (sizes[k - 1] if kind == 'boundary' and k >= 1 else sizes[k],
                          sizes[k])
                if not is_index_tensor(index) or index.layout != torch.strided:
                    found = (f'{index.dtype}, {index.layout}' if isinstance(index, Tensor)
                             else type(index).__name__)
                    problem(f"'{key}' needs int64 or int32 ids in a dense tensor (found "
                            f"{found})")
                    continue
                if index.dim() != 2 or index.size(0) != 2:
                    problem(f"'{key}' needs shape [2, nnz] (found {list(index.shape)})")
                    continue
                in_range = True
                for row, bound in enumerate(bounds):
                    message = range_problem(f"row {row} of '{key}'", index[row], bound)
                    if message:
                        in_range = False
                        problem(message)
                counts = (torch.bincount(index[1], minlength=sizes[k])
                          if kind == 'boundary' and in_range else None)
                if counts is not None and not bool((counts == k + 1).all()):
                    problem(f"'{key}' needs {k + 1} entries per {k}-simplex (found "
                            f"{int(counts.min())} to {int(counts.max())})")
                elif in_range and index.size(1) and not bool(
                        (index[1, 1:] >= index[1, :-1]).all()):
                    problem(f"the entries of '{key}' are not sorted by row 1 (the "
                            f"simplex of a boundary entry, the target of an "
                            f"operator's), as the constructors store them and the "
                            f"operators and the neighbour loader read them")
                if weight is None or weight.shape != (index.size(1), ):
                    found = 'none' if weight is None else list(weight.shape)
                    problem(f"'{kind}_weight_{k}' needs one value per entry of "
                            f"'{key}', [{index.size(1)}] (found {found})")
            elif _OPERATOR_WEIGHT.fullmatch(key) and \
                    key.replace('_weight_', '_index_') not in self._store:
                problem(f"'{key}' is given without its index "
                        f"'{key.replace('_weight_', '_index_')}'")
        return status

    # Sub-complexes -----------------------------------------------------------------

    def subgraph(self, subset: Tensor,
                 attrs: Optional[Dict[str, int]] = None) -> 'SimplicialComplexData':
        r"""The sub-complex induced by the vertices :obj:`subset`: the simplices of
        every order all of whose vertices are kept, as PyG's
        :meth:`~torch_geometric.data.Data.subgraph` keeps the edges between kept
        nodes (so PyG's transforms that call it, such as
        :class:`~torch_geometric.transforms.LargestConnectedComponents`, work on a
        complex).

        Vertices and the simplices of each order keep their order and orientation
        (the kept entries of every :math:`\mathbf{B}_k`), relabelled. The operators
        and spectra are those of the sub-complex, computed from its boundaries as
        the constructors compute them (unlike
        :func:`~torch_geometric_san.loader.simplicial_subcomplex`, which restricts
        the full complex's operators to a sample); a complex built without
        Laplacians stays without. Attributes of the simplices
        (:func:`~torch_geometric_san.data.simplex_attr_orders`: ``x_k``, labels,
        masks, ...) keep the rows of the kept simplices, a graph's ``edge_index``
        becomes its subgraph induced by the kept vertices (with the rows of its edge
        attributes), and everything else is copied. The complex is not modified.

        Args:
            subset (torch.Tensor): A boolean mask :obj:`[N_0]` of the vertices to
                keep, or their distinct ids (any order).
            attrs (Dict[str, int], optional): The orders of attributes whose length
                alone does not tell it (as for
                :func:`~torch_geometric_san.data.simplex_attr_orders`, which warns
                about them). (default: :obj:`None`)

        Returns:
            SimplicialComplexData: The induced sub-complex, of the same order.

        Raises:
            TypeError: If the complex is a batch, :obj:`subset` is not a mask
                or a 1-D integer tensor, or :obj:`attrs` not a dict of names to ints.
            ValueError: If :obj:`subset` is a mask of the wrong size, or holds ids
                out of range or repeated, or an attribute of :obj:`attrs` does not
                have the rows of its order, or the complex is a sampled sub-complex
                (it has a ``batch_size``; its seeds and operators are not its
                own).

        Example:
            >>> data = SimplicialComplexData.from_simplices([[0, 1, 2], [1, 2, 3]],
            ...                                             close=True)
            >>> sub = data.subgraph(torch.tensor([1, 2, 3]))
            >>> sub.simplices_1.tolist(), sub.simplices_2.tolist()
            ([[0, 1], [0, 2], [1, 2]], [[0, 1, 2]])
        """
        from torch_geometric_san.data.attributes import (GRAPH_EDGES, _select_attr_rows,
                                                         simplex_attr_orders)
        _check_complex_arg(self, 'the complex', 'take the subgraph of each of its '
                           'complexes (batch.get_example(i)) before batching')
        if 'batch_size' in self:
            raise ValueError("subgraph got a sampled sub-complex (it has a "
                             "'batch_size'), whose first batch_size rows are the seeds "
                             "that the loss is taken on and whose operators are the full "
                             "complex's, restricted: take the subgraph of the whole "
                             "complex before SimplicialNeighborLoader instead")
        n = self.num_simplices(0)
        keep = torch.zeros(n, dtype=torch.bool)
        keep[check_simplex_ids(subset, n, 0, 'subset').cpu()] = True
        masks, new_ids, simplices, boundaries = self._induced(keep)
        rows: Dict[Union[int, str], Tensor] = dict(enumerate(masks))
        values: Dict[str, Any] = {}
        if isinstance(self.edge_index, Tensor):
            edge_index = check_edge_index(self.edge_index, self.num_nodes)
            rows[GRAPH_EDGES] = keep[edge_index[0].cpu()] & keep[edge_index[1].cpu()]
            values['edge_index'] = new_ids[0].to(edge_index.device)[
                edge_index[:, rows[GRAPH_EDGES].to(edge_index.device)]]
        owners = simplex_attr_orders(self, attrs, who='subgraph')
        values.update(_select_attr_rows(self, owners, rows))
        for key, value in self._store.items():
            if not (key in owners or _COMPUTED.fullmatch(key) or
                    key in ('num_nodes', 'edge_index')):
                values[key] = value
        out = self._build(simplices, boundaries, self._weight_dtype(), values,
                          laplacians='hodge_index_0' in self._store)
        device = next((value.device for key, value in self._store.items()
                       if _COMPUTED.fullmatch(key)), keep.device)
        return out.to(device) if device != keep.device else out

    def _induced(self, keep: Tensor) -> Tuple[List[Tensor], List[Tensor],
                                               List[np.ndarray], List[sp.csc_array]]:
        # The sub-complex induced by the vertex mask `keep` (on the CPU): per order
        # the mask of kept simplices and the new id of each kept one, the kept
        # simplices relabelled (k >= 0) and the kept entries of B_1..B_K.
        masks, new_ids = [keep], [torch.cumsum(keep, 0) - 1]
        simplices, boundaries = [np.arange(int(keep.sum()))[:, None]], []
        for k in range(1, self.order + 1):
            rows = self[f'simplices_{k}'].cpu()
            masks.append(keep[rows].all(dim=1))
            new_ids.append(torch.cumsum(masks[k], 0) - 1)
            simplices.append(new_ids[0][rows[masks[k]]].numpy())
            index, weight = self.boundary(k)
            index, weight = index.cpu(), weight.detach().cpu()
            kept = masks[k][index[1]]  # the faces of a kept simplex are kept
            boundaries.append(sp.csc_array(
                (weight[kept].double().numpy(), (new_ids[k - 1][index[0, kept]].numpy(),
                                                 new_ids[k][index[1, kept]].numpy())),
                shape=(len(simplices[k - 1]), len(simplices[k]))))
        return masks, new_ids, simplices, boundaries

    def edge_subgraph(self, subset: Tensor) -> 'SimplicialComplexData':
        r"""Not defined for a complex: its edges are 1-simplices, faces of its
        triangles, so keeping some of them and every vertex is no operation on
        complexes. Take :meth:`subgraph` (the sub-complex induced by vertices) or
        :func:`~torch_geometric_san.loader.simplicial_subcomplex` (chosen simplices
        of one order and all their faces).

        Raises:
            NotImplementedError: Always.
        """
        raise NotImplementedError(
            "SimplicialComplexData.edge_subgraph is not defined: a complex's edges are "
            "faces of its triangles; take data.subgraph(vertices), the sub-complex "
            "induced by vertices, or torch_geometric_san.loader.simplicial_subcomplex("
            "data, 1, edge_ids), the chosen edges and their vertices")

    def concat(self, data: Data) -> 'SimplicialComplexData':
        r"""Not defined for complexes: PyG's :meth:`~torch_geometric.data.Data.concat`
        joins attributes without shifting ids, which makes no complex. The disjoint
        union of complexes is their batch,
        :meth:`Batch.from_data_list([a, b]) <torch_geometric.data.Batch.from_data_list>`
        or :func:`~torch_geometric_san.data.batch_complexes`.

        Raises:
            NotImplementedError: Always.
        """
        raise NotImplementedError(
            "SimplicialComplexData.concat is not defined: joining the attributes of "
            "two complexes without shifting their ids makes no complex; their "
            "disjoint union is Batch.from_data_list([a, b]) or "
            "torch_geometric_san.data.batch_complexes([a, b])")

    def _operator_tensor(self) -> Optional[Tensor]:
        # A tensor of the operators' dtype and device, which every complex the
        # constructors build stores (spectrum_0 also without Laplacians); None for a
        # bare complex.
        return self._store.get('spectrum_0', self._store.get('hodge_weight_0'))

    def _weight_dtype(self) -> torch.dtype:
        # The floating type of the operators (the default dtype for a bare complex).
        tensor = self._operator_tensor()
        return torch.get_default_dtype() if tensor is None else tensor.dtype

    def _device(self) -> torch.device:
        # The device of the operators (the CPU for a bare complex).
        tensor = self._operator_tensor()
        return torch.device('cpu') if tensor is None else tensor.device

    # Batching ----------------------------------------------------------------------

    def __inc__(self, key: str, value: Any, *args: Any, **kwargs: Any) -> Any:
        r"""What batching adds to :obj:`value` of :obj:`key` (as in PyG): the
        vertex count for ``simplices_k``, the simplex counts for the operators'
        indices, PyG's increments for the rest.

        Raises:
            ValueError: If ids that it shifts are of another integer dtype than
                :obj:`torch.int64` or :obj:`torch.int32`: PyG shifts them in their
                own dtype, where narrower ones wrap (silently) and wider unsigned
                ones fail inside torch.
        """
        inc = self._increment(key, value, *args, **kwargs)
        if isinstance(value, Tensor) and value.dtype in _UNSHIFTABLE_IDS and (
                bool(inc.any()) if isinstance(inc, Tensor) else inc != 0):
            raise ValueError(f"'{key}' holds ids in {value.dtype}, which batching "
                             f"shifts by the counts before them in that dtype (where "
                             f"they wrap, or fail): store them as torch.long")
        return inc

    def _increment(self, key: str, value: Any, *args: Any, **kwargs: Any) -> Any:
        match = _INCREMENTED.fullmatch(key)
        if match is None:
            return super().__inc__(key, value, *args, **kwargs)
        name, k = match.group(1), int(match.group(2))
        if name == 'simplices':
            return self.num_nodes
        if name == 'boundary_index':
            return torch.tensor([[self.num_simplices(k - 1)], [self.num_simplices(k)]])
        return self.num_simplices(k)

    # Saving ------------------------------------------------------------------------

    def __reduce_ex__(self, protocol: Any) -> Any:
        # PyG pickles a batch through a callable object that torch.load(weights_only=
        # True) refuses; a batch of complexes is rebuilt by an allow-listed function
        # instead, from the class of its complexes (a subclass is named, so that a
        # weights-only load asks for it and its batch class to be allow-listed), and
        # the state is restored by Data.__setstate__, as PyG does.
        if isinstance(self, Batch):
            base = next(cls for cls in type(self).__bases__
                        if issubclass(cls, SimplicialComplexData)
                        and not issubclass(cls, Batch))
            return _empty_batch, (base, ), self.__getstate__()
        return super().__reduce_ex__(protocol)

    def apply(self, func: Callable, *args: str) -> 'SimplicialComplexData':
        # (PyG's, under .to(), .cpu(), .cuda(), .pin_memory(), ...) It replaces
        # the tensors, so the kept operators are dropped now rather than held,
        # with the tensors they were built from, until the next operators(k).
        self.__dict__.pop(_OPERATORS_CACHE, None)
        return super().apply(func, *args)

    def __getstate__(self) -> Dict[str, Any]:
        # Without the kept operators (derived again on use).
        return {key: value for key, value in self.__dict__.items()
                if key != _OPERATORS_CACHE}

    def __copy__(self) -> 'SimplicialComplexData':
        out = super().__copy__()
        out.__dict__.pop(_OPERATORS_CACHE, None)  # a copy's tensors may be replaced
        return out

    def __deepcopy__(self, memo: Dict[int, Any]) -> 'SimplicialComplexData':
        out = self.__class__.__new__(self.__class__)
        for key, value in self.__getstate__().items():
            out.__dict__[key] = copy.deepcopy(value, memo)
        out._store._parent = out
        return out


def _missing_spectrum(k: int) -> str:
    return (f"the batch has no 'spectrum_{k}' (excluded from it, e.g. by the loader's "
            f"exclude_keys, or its complexes were made without it): the operators of a "
            f"batch of several complexes read each complex's largest eigenvalues from "
            f"it, for the per-complex normalisation (SparseOperator.scaled); keep it "
            f"in the batch")


def _same_inputs(kept: List[Any], inputs: List[Any]) -> bool:
    # Whether operators(k) would build its kept value again: the same tensor
    # objects at the same versions (and requires_grad), and the same sizes.
    return all(a is b and va == vb if isinstance(a, Tensor) or isinstance(b, Tensor)
               else a == b for (a, va), (b, vb) in zip(kept, inputs))


def _check_complex_arg(data: Any, name: str, batch_hint: str) -> None:
    r"""Checks that :obj:`data` is one
    :class:`~torch_geometric_san.data.SimplicialComplexData`, not a batch of them.

    Args:
        data (Any): The argument.
        name (str): Its name, for the messages.
        batch_hint (str): What to do instead, for the message about a batch.

    Raises:
        TypeError: If it is another object or a batch.
    """
    if not isinstance(data, SimplicialComplexData):
        raise TypeError(f"{name} must be a SimplicialComplexData, not "
                        f"{type(data).__name__}")
    if isinstance(data, Batch):
        raise TypeError(f"{name} is a batch of complexes; {batch_hint}")


def _empty_batch(base_cls: type = SimplicialComplexData) -> Batch:
    # An empty batch of complexes of base_cls (files of earlier versions name none),
    # whose state torch.load then sets.
    return Batch(_base_cls=base_cls)


# What a saved complex or batch refers to, so that torch.load loads it with its
# default weights_only=True: the class, PyG's storage classes, _empty_batch and the
# class of its result (PyG's batch class of complexes, made once and cached by PyG).
torch.serialization.add_safe_globals([SimplicialComplexData, GlobalStorage,
                                      _ComplexStorage, DataEdgeAttr, DataTensorAttr,
                                      _empty_batch, type(_empty_batch())])


def _as_int_array(value: Any, what: str) -> np.ndarray:
    if isinstance(value, Tensor):
        if value.layout != torch.strided:
            raise TypeError(f"{what} must be a dense tensor, not {value.layout}")
        value = check_has_data(value, what).detach().cpu().numpy()
    value = np.asarray(value)
    empty_of_floats = value.size == 0 and value.dtype.kind == 'f'  # np.empty((0, 3))
    if value.dtype.kind not in 'iu' and not empty_of_floats:
        raise TypeError(f"{what} must hold integer vertex ids, got dtype {value.dtype}")
    # (compared as uint64: NumPy 1.x compared a uint64 with a Python int in float64,
    # where 2**63 + 5 equals 2**63 - 1)
    if value.dtype == np.uint64 and value.size and \
            value.max() > np.uint64(np.iinfo(np.int64).max):
        raise ValueError(f"{what} holds the vertex id {value.max()}, beyond the int64 "
                         f"range of vertex ids")
    return np.array(value, dtype=np.int64)


def _parse_simplices(simplices: SimplexInput) -> Dict[int, np.ndarray]:
    # Maps k + 1 to the k-simplices in the order given.
    if isinstance(simplices, (np.ndarray, Tensor)):
        blocks = [_as_int_array(simplices, 'simplices')]
    elif isinstance(simplices, (str, bytes)) or not hasattr(simplices, '__iter__'):
        raise TypeError(f"simplices must be an array or a sequence of simplices, not "
                        f"{type(simplices).__name__}")
    else:
        items = list(simplices)
        blocks_given = [isinstance(item, (np.ndarray, Tensor)) and item.ndim == 2
                        for item in items]
        if items and all(blocks_given):
            blocks = [_as_int_array(item, 'simplices') for item in items]
        elif any(blocks_given):
            raise TypeError("simplices mixes 2-D arrays of simplices with single "
                            "simplices; pass one kind only")
        else:
            blocks = _simplex_list_blocks(items)
    groups: Dict[int, List[np.ndarray]] = {}
    for block in blocks:
        if block.ndim != 2 or block.shape[1] == 0:
            raise ValueError(f"an array of simplices must have shape [N, k + 1], got "
                             f"{list(block.shape)}")
        groups.setdefault(block.shape[1], []).append(block)
    return {width: np.concatenate(rows) for width, rows in groups.items()}


def _simplex_list_blocks(items: List[Any]) -> List[np.ndarray]:
    # One array per simplex length, from a list of simplices.
    try:
        lengths = np.fromiter(map(len, items), dtype=np.int64, count=len(items))
        values = list(chain.from_iterable(items))
        flat = np.array(values)
    except (TypeError, ValueError) as error:
        raise TypeError(f"each simplex must be a flat sequence of integer vertex ids "
                        f"({error})") from None
    if (lengths == 0).any():
        raise ValueError(f"simplex {np.flatnonzero(lengths == 0)[0]} is empty")
    if flat.ndim != 1:
        raise TypeError("each simplex must be a flat sequence of integer vertex ids")
    if flat.dtype.kind != 'b' and any(map(_is_bool, values)):
        # (NumPy took [True, 2] for [1, 2])
        raise TypeError("each simplex must be a flat sequence of integer vertex ids, "
                        "not bools")
    flat = _as_int_array(flat, 'simplices') if flat.size else flat.astype(np.int64)
    return list(algebra.group_by_length(flat, lengths).values())


def _is_bool(value: Any) -> bool:
    # A bool scalar of Python, NumPy or torch (0-d arrays and tensors included).
    dtype = getattr(value, 'dtype', None)
    return (isinstance(value, (bool, np.bool_)) or dtype == torch.bool
            or getattr(dtype, 'kind', None) == 'b')


def _as_incidence(matrix: IncidenceInput, k: int) -> sp.csc_array:
    # A canonical float32 CSC copy of B_k, checked entry by entry.
    name = f"B_{k}"
    if isinstance(matrix, Tensor):
        if matrix.is_nested:
            raise TypeError(f"{name} must be a dense or sparse matrix, not a nested "
                            f"tensor")
        check_has_data(matrix, name)
        if matrix.is_floating_point():  # (NumPy has no bfloat16, SciPy no float16)
            matrix = matrix.double()
        if matrix.layout != torch.strided:
            matrix = matrix.detach().cpu().to_sparse_coo().coalesce()
            if matrix.dim() != 2:
                raise ValueError(f"{name} must be 2-D, got shape {list(matrix.shape)}")
            if matrix.sparse_dim() != 2:  # (a hybrid tensor: dense values per entry)
                raise ValueError(f"{name} must be 2-D with two sparse dimensions, got "
                                 f"shape {list(matrix.shape)} with "
                                 f"{matrix.sparse_dim()} (use .to_dense() first)")
            row, col = matrix.indices().numpy()
            matrix = sp.coo_array((matrix.values().numpy(), (row, col)),
                                  shape=tuple(matrix.shape))
        else:
            matrix = matrix.detach().cpu().numpy()
    if isinstance(matrix, np.ndarray):
        if matrix.ndim != 2:
            raise ValueError(f"{name} must be 2-D, got shape {list(matrix.shape)}")
        if matrix.dtype.kind not in 'biuf':
            raise TypeError(f"{name} must be numeric, got dtype {matrix.dtype}")
        # (SciPy has no float16, nor non-native byte orders; the entries are checked
        # to be 0 and +-1 below, exact in float64)
        matrix = sp.coo_array(matrix.astype(np.float64))
    elif not sp.issparse(matrix):
        raise TypeError(f"{name} must be a NumPy array, a SciPy sparse matrix or a "
                        f"torch tensor, not {type(matrix).__name__}")
    if matrix.dtype.kind not in 'biuf':
        raise TypeError(f"{name} must be numeric, got dtype {matrix.dtype}")
    out = sp.csc_array(matrix.astype(np.float64), copy=True)
    out.sum_duplicates()
    out.eliminate_zeros()
    bad = np.flatnonzero(np.abs(out.data) != 1)
    if bad.size:
        row = out.indices[bad[0]]
        col = np.searchsorted(out.indptr, bad[0], side='right') - 1
        raise ValueError(f"{name} may only hold 0, 1 and -1, but entry ({row}, {col}) "
                         f"is {out.data[bad[0]]}")
    counts = np.diff(out.indptr)
    if (counts != k + 1).any():
        col = np.flatnonzero(counts != k + 1)[0]
        raise ValueError(f"column {col} of {name} has {counts[col]} non-zeros; the "
                         f"boundary of a {k}-simplex has {k + 1} faces")
    return out.astype(np.float32)


def _check_attributes(kwargs: Dict[str, Any], sizes: List[int],
                      dtype: torch.dtype) -> Dict[str, Any]:
    # Checks the weight dtype and the x_k among kwargs against N_k; returns kwargs with
    # numeric arrays as tensors (so that the attributes per simplex among them follow
    # their simplices: an array stayed in place when they were reordered or cut).
    check_float_dtype(dtype)
    out = {}
    for key, value in kwargs.items():
        # (plain arrays and memory maps; a masked array, whose mask a tensor would
        # lose, stays as given)
        if type(value) in (np.ndarray, np.memmap) and value.dtype.kind in 'biufc':
            converted = _from_numpy(value)
            if converted is None and _FEATURE.fullmatch(key):  # (else kept as given)
                raise TypeError(f"{key} is of a dtype torch has not, {value.dtype}: "
                                f"convert it (e.g. to float64)")
            value = value if converted is None else converted
        if _COMPUTED.fullmatch(key) or key == 'num_nodes':
            raise ValueError(f"'{key}' is computed by the constructor and cannot be "
                             f"passed")
        if key == 'x':
            raise ValueError("a complex holds features per order: pass the vertices' "
                             "features as x_0 (x_k for the k-simplices), which "
                             "num_features, the models and the exports read")
        match = _FEATURE.fullmatch(key)
        if match is not None and value is not None:
            k = int(match.group(1))
            if k >= len(sizes):
                raise ValueError(f"{key} is given but the complex has order "
                                 f"{len(sizes) - 1}")
            if isinstance(value, np.ndarray):  # (left by the conversion above)
                raise TypeError(
                    f"{key} must be numeric, got dtype {value.dtype}"
                    if value.dtype.kind not in 'biufc' else
                    f"{key} must be a tensor or a plain array, not a "
                    f"{type(value).__name__} (fill its mask first)")
            if not isinstance(value, Tensor):
                raise TypeError(f"{key} must be a tensor or an array, not "
                                f"{type(value).__name__}")
            check_dense(value, key)
            check_arithmetic_dtype(value, key)
            if value.dim() != 2:
                raise ValueError(f"{key} must have shape [N_{k}, F] = [{sizes[k]}, F], "
                                 f"got {list(value.shape)} (use .view(-1, 1) for one "
                                 f"channel)")
            if value.size(0) != sizes[k]:
                raise ValueError(f"{key} has {value.size(0)} rows but the complex has "
                                 f"{sizes[k]} {k}-simplices")
            if (value.is_floating_point() or value.is_complex()) and \
                    not torch.isfinite(value).all():
                raise ValueError(f"{key} has NaN or infinite entries")
        out[key] = value
    return out


def _from_numpy(value: np.ndarray) -> Optional[Tensor]:
    # A numeric array as a tensor on its memory (None for a dtype torch has not, e.g.
    # np.longdouble); torch takes neither negative strides nor other byte orders, and
    # a read-only array (a memmap, a bytes buffer) is copied: a tensor on it would
    # write where nothing may be written.
    array = np.ascontiguousarray(value, dtype=value.dtype.newbyteorder('=')).reshape(
        value.shape)  # (ascontiguousarray makes a 0-d array 1-d)
    try:
        return torch.from_numpy(array if array.flags.writeable else array.copy())
    except TypeError:
        return None


def _index(matrix: Union[sp.csr_array, sp.csc_array]) -> Tensor:
    # The [2, nnz] index of a compressed matrix with sorted indices: row 0 holds the
    # minor index (column of a CSR, row of a CSC), row 1 the major one, written in
    # place (a +1 where each major row starts, summed up) with no nnz-sized temporary.
    # Allocated by torch, not NumPy: NumPy advises the kernel to back large arrays with
    # huge pages, whose faults can stall on memory compaction.
    out = torch.empty((2, matrix.nnz), dtype=torch.int64)
    index = out.numpy()
    index[0] = matrix.indices
    major = index[1]
    major[:] = 0
    starts = matrix.indptr[1:-1]
    np.add.at(major, starts[starts < matrix.nnz], 1)
    np.cumsum(major, out=major)
    return out


def _weight(matrix: Union[sp.csr_array, sp.csc_array], dtype: torch.dtype,
            scale: float = 1.0) -> Tensor:
    # Scaled in double precision (the integer entries are exact in float32) and
    # rounded once to dtype, chunk by chunk by NumPy's buffered loop (no float64
    # copy of the whole array).
    if scale == 1.0:
        return torch.from_numpy(matrix.data).to(dtype)
    if dtype == torch.bfloat16:  # which NumPy lacks
        return torch.from_numpy(matrix.data * np.float64(scale)).to(dtype)
    out = torch.empty(len(matrix.data), dtype=dtype)
    np.multiply(matrix.data, scale, out=out.numpy(), dtype=np.float64,
                casting='unsafe')
    return out
