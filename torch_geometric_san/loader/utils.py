r"""The neighbours of the simplices of a complex, from its boundary matrices, and the
sub-complex of a sample of simplices with the operators of the full complex
restricted to it."""
from typing import Any, Callable, Dict, List, Optional, Tuple, Union

import numpy as np
import scipy.sparse as sp
import torch
from torch import Tensor

from torch_geometric_san.data import SimplicialComplexData
from torch_geometric_san.data.simplicial_complex_data import _COMPUTED, _check_complex_arg
from torch_geometric_san.data.attributes import (GRAPH_EDGES, _select_attr_rows,
                                                 simplex_attr_orders)
from torch_geometric_san.utils.validation import (check_edge_index,
                                                  check_float_dtype, check_int,
                                                  check_simplex_ids, is_index_tensor,
                                                  is_integer_tensor, range_problem)

__all__ = ["SimplicialAdjacency", "simplicial_subcomplex", "edge_rows"]

# About how many entries a row must exceed the bisections of a sample's members in it
# by before searching it pays: a search costs a few Python-level calls, reading a row
# a few nanoseconds per entry.
_SEARCH_CALL = 10_000

#: What :func:`edge_rows` gives: ``ptr``, ``perm`` and the targets in that order.
GraphRows = Tuple[Tensor, Tensor, Tensor]


class _ScratchTables:
    # Tables written on every call, made anew in each process (`_scratch`, named in
    # `_SCRATCH`): a pickled copy, as a spawned loader worker gets, would otherwise
    # share them through shared memory, and the workers would write into each
    # other's tables.
    _SCRATCH: Tuple[str, ...] = ()

    def _scratch(self) -> None:
        raise NotImplementedError

    def __getstate__(self) -> Dict[str, Any]:
        return {key: value for key, value in self.__dict__.items()
                if key not in self._SCRATCH}

    def __setstate__(self, state: Dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._scratch()


class SimplicialAdjacency(_ScratchTables):
    r"""The neighbours of the j-simplices of a complex and the entries of its
    Laplacians between them, derived from the boundary matrices alone (the stored
    Laplacians are not read, and need not be stored).

    Two j-simplices are neighbours when they share a (j-1)-face or are faces of a
    common (j+1)-simplex: the off-diagonal pattern of
    :math:`\mathbf{L}_j^{(d)} + \mathbf{L}_j^{(u)}` with
    :math:`\mathbf{L}_j^{(d)} = \mathbf{B}_j^\top \mathbf{B}_j` and
    :math:`\mathbf{L}_j^{(u)} = \mathbf{B}_{j+1} \mathbf{B}_{j+1}^\top`. Two distinct
    simplices share at most one face and one coface, so each off-diagonal entry of
    either Laplacian is :math:`0` or :math:`\pm 1` (held as ``int8``). It is built
    once (two SciPy products of the boundaries) and holds

    * :obj:`indptr` :obj:`[N_j + 1]`, :obj:`indices` :obj:`[nnz]`: the neighbours
      of each simplex in compressed rows, ascending within a row, no diagonal;
    * :obj:`down`, :obj:`up` :obj:`[nnz]`: the entries of
      :math:`\mathbf{L}_j^{(d)}` and :math:`\mathbf{L}_j^{(u)}` there (``int8``);
    * :obj:`down_diagonal`, :obj:`up_diagonal` :obj:`[N_j]`: their diagonals (the
      numbers of faces and of cofaces, ``int32``);
    * :obj:`has_down`, :obj:`has_up`: whether the complex stores these operators
      (:math:`j \ge 1`, :math:`j < K`);
    * :obj:`hodge_scale`: :math:`1 / \lambda_{\max}(\mathbf{L}_j)` from the
      complex's ``spectrum_j`` (:obj:`None` without it), the normalisation of the
      Hodge Laplacian.

    :meth:`restrict` gives the rows and columns of the three Laplacians of a set of
    simplices, :meth:`local_ids` relabels simplices. They use a lookup table of
    :math:`N_j` entries kept on the object, so one object serves one caller at a time;
    each worker of a data loader has its own (a forked worker by the fork, a
    spawned one because an unpickled copy makes a new table).

    Args:
        data (SimplicialComplexData): One complex, with its boundaries (it is not
            modified).
        order (int): The order :math:`j`.

    Raises:
        TypeError: If :obj:`data` is not one
            :class:`~torch_geometric_san.data.SimplicialComplexData` (a batch is
            refused) or :obj:`order` is not an int.
        ValueError: If :obj:`order` is out of range, or the complex is not on the
            CPU.
    """
    def __init__(self, data: SimplicialComplexData, order: int):
        _check_one_complex(data)
        n = data.num_simplices(order)
        self.order = order
        self.has_down, self.has_up = order >= 1, order < data.order
        self.hodge_scale = None
        if f'spectrum_{order}' in data._store:
            lam = float(data[f'spectrum_{order}'].max())
            self.hodge_scale = 1.0 / lam if lam > 0 else 1.0
        # C = L^(d) + 4 L^(u) (exact in float32): an off-diagonal entry is decoded as
        # u = round(C / 4), d = C - 4 u since |d| <= 1; it is zero only where both
        # are (SciPy's products and sums drop zeros).
        combined = sp.csr_array((n, n), dtype=np.float32)
        diagonals = [np.zeros(n, dtype=np.int32), np.zeros(n, dtype=np.int32)]
        for which, j in enumerate((order, order + 1)):
            if (which == 0 and not self.has_down) or (which == 1 and not self.has_up):
                continue
            boundary = _boundary(data, j)  # CSC, [N_{j-1}, N_j]
            if which == 0:
                gram = boundary.T @ boundary.tocsr()
            else:
                rows = boundary.tocsr()
                gram = rows @ rows.T
            del boundary
            diagonals[which] = np.rint(gram.diagonal()).astype(np.int32)
            combined = combined + gram * (4.0 if which else 1.0)
            del gram
        combined = combined - sp.diags_array(combined.diagonal()).tocsr()
        combined.sort_indices()
        up = np.rint(combined.data / 4.0)
        self.indptr = torch.from_numpy(combined.indptr.astype(np.int64))
        self.indices = torch.from_numpy(combined.indices.astype(np.int64))
        self.down = torch.from_numpy((combined.data - 4.0 * up).astype(np.int8))
        self.up = torch.from_numpy(up.astype(np.int8))
        del combined, up
        self.down_diagonal = torch.from_numpy(diagonals[0])
        self.up_diagonal = torch.from_numpy(diagonals[1])
        self._num_simplices = n
        self._scratch()

    _SCRATCH = ('_local', )

    def _scratch(self) -> None:
        self._local = torch.full((self._num_simplices, ), -1, dtype=torch.long)

    @property
    def num_simplices(self) -> int:
        r"""The number :math:`N_j` of j-simplices."""
        return self._num_simplices

    def local_ids(self, ids: Tensor, queries: Tensor) -> Tensor:
        r"""The positions in :obj:`ids` of the j-simplices :obj:`queries`
        (:obj:`-1` where absent).

        Args:
            ids (torch.Tensor): Distinct ids of j-simplices :obj:`[M]`.
            queries (torch.Tensor): Ids of j-simplices, any shape.

        Returns:
            torch.Tensor: The local ids, shaped as :obj:`queries`.

        Raises:
            TypeError: If :obj:`ids` or :obj:`queries` are not integer tensors.
            ValueError: If ids are out of range, or :obj:`ids` repeats one.
        """
        n = self.num_simplices
        ids = check_simplex_ids(ids, n, self.order, "'ids'")
        if not is_integer_tensor(queries):
            got = queries.dtype if isinstance(queries, Tensor) else \
                type(queries).__name__
            raise TypeError(f"'queries' must be an integer tensor of ids of "
                            f"{self.order}-simplices (got {got})")
        queries = queries.long()
        problem = range_problem("'queries'", queries, n)
        if problem:
            raise ValueError(problem)
        return self._local_ids(ids, queries)

    def _local_ids(self, ids: Tensor, queries: Tensor) -> Tensor:
        # local_ids of checked ids (the sampler's own, on every batch)
        local = self._local
        local[ids] = torch.arange(ids.numel())
        try:
            return local.index_select(0, queries.reshape(-1)).view(queries.shape)
        finally:
            local[ids] = -1

    def restrict(self, ids: Tensor, dtype: torch.dtype
                 ) -> Dict[str, Tuple[Tensor, Tensor]]:
        r"""The rows and columns :obj:`ids` of the Laplacians of order :math:`j`.

        Args:
            ids (torch.Tensor): Distinct ids of j-simplices :obj:`[M]`; local id
                :math:`i` is :obj:`ids[i]`.
            dtype (torch.dtype): The floating type of the weights.

        Returns:
            Dict[str, (torch.Tensor, torch.Tensor)]: ``(index [2, nnz], weight
            [nnz])`` by name (``'down'`` and ``'up'`` where the complex has them,
            ``'hodge'`` where it has ``spectrum_j``), in local ids, sorted by target,
            then source, without zeros; the Hodge Laplacian normalised with the full
            complex's :math:`\lambda_{\max}`.

        Raises:
            TypeError: If :obj:`ids` is not an integer tensor, or :obj:`dtype` not
                a floating :class:`torch.dtype`.
            ValueError: If ids are out of range or repeated.
        """
        return self._restrict(check_simplex_ids(ids, self.num_simplices, self.order,
                                                "'ids'"),
                              check_float_dtype(dtype, "'dtype'"))

    def _restrict(self, ids: Tensor, dtype: torch.dtype
                  ) -> Dict[str, Tuple[Tensor, Tensor]]:
        # restrict of checked ids (the sampler's own, on every batch)
        m = ids.numel()
        rows, cols, pos = _entries_among(self.indptr, self.indices, ids,
                                         lambda queries: self._local_ids(ids, queries),
                                         symmetric=True)
        diagonal = torch.arange(m)
        rows, cols = torch.cat([rows, diagonal]), torch.cat([cols, diagonal])
        perm = torch.argsort(rows * m + cols)
        rows, cols = rows.index_select(0, perm), cols.index_select(0, perm)
        down, up = (torch.cat([values.index_select(0, pos).to(torch.int32),
                               diagonal_values.index_select(0, ids)]).index_select(0, perm)
                    for values, diagonal_values in ((self.down, self.down_diagonal),
                                                    (self.up, self.up_diagonal)))
        values = {}
        if self.has_down:
            values['down'] = (down, 1.0)
        if self.has_up:
            values['up'] = (up, 1.0)
        if self.hodge_scale is not None:
            values['hodge'] = (down + up, self.hodge_scale)
        out = {}
        for name, (value, scale) in values.items():
            nonzero = (value != 0).nonzero().view(-1)
            weight = value.index_select(0, nonzero)
            weight = (weight.double() * scale).to(dtype) if scale != 1.0 else \
                weight.to(dtype)
            out[name] = (torch.stack([cols.index_select(0, nonzero),
                                      rows.index_select(0, nonzero)]), weight)
        return out


def simplicial_subcomplex(data: SimplicialComplexData, order: int, n_id: Tensor,
                          adjacency: Optional[List[SimplicialAdjacency]] = None,
                          graph_rows: Optional[GraphRows] = None,
                          attr_orders: Optional[Dict[str, Union[int, str]]] = None,
                          ) -> SimplicialComplexData:
    r"""The sub-complex spanned by the k-simplices :obj:`n_id` of :obj:`data`
    (:math:`k` = :obj:`order`) and all their faces, relabelled, with the operators of
    the full complex restricted to it.

    Order :math:`k` keeps the order of :obj:`n_id` (local simplex :math:`i` is
    :obj:`n_id[i]`); the faces of orders :math:`j < k` (vertices included) are
    numbered in the order of their ids in :obj:`data`, and their ids are stored as
    ``n_id_j``. Per order :math:`j \le k` the result holds

    * ``simplices_j`` (vertex ids relabelled, still ascending) and ``x_j`` (rows);
    * the boundary :math:`\mathbf{B}_j` of the sub-complex (exact: every face of a
      kept simplex is kept);
    * ``up``, ``down`` and ``hodge`` Laplacians: the rows and columns of the
      full complex's operators for the kept simplices, with the full complex's
      values (the normalised Hodge Laplacian keeps the full complex's scale; below
      float64 its values can differ from the stored ones by a rounding, as the
      scale is read from ``spectrum_j``, stored in the complex's dtype) and its
      ``spectrum_j``, which
      :meth:`~torch_geometric_san.data.SimplicialComplexData.operators` hands to the
      spectral normalisation. They are not the Laplacians of the sub-complex: the
      upper Laplacian counts the (k+1)-simplices of the full complex, which the
      sub-complex (of order :math:`k`) does not hold. A row is the full complex's
      row wherever all the neighbours of that simplex are kept.

    The Laplacians are computed from the boundary matrices of :obj:`data`
    (:class:`SimplicialAdjacency`), so a complex built without its Laplacians
    (``laplacians=False``) can be sampled. The graph's ``edge_index``, where the
    complex keeps one (a lifted graph), becomes the subgraph induced by the kept
    vertices, relabelled. Other attributes that belong to simplices (told by
    :func:`~torch_geometric_san.data.simplex_attr_orders`, the rule
    :class:`~torch_geometric_san.transforms.ReorderSimplices` follows too: ``x_j``,
    and tensors with :math:`N_j` rows for one order :math:`j`, such as labels, masks
    or a vertex ``pos``, or with a row per column of ``edge_index``) keep the rows of
    the kept j-simplices (of :obj:`n_id` for :math:`j = k`) or of the kept graph
    edges, and are dropped for orders above :math:`k`; the computed attributes of
    orders above :math:`k` are dropped too, and everything else is copied as it is.
    Nothing of :obj:`data` is modified.

    Args:
        data (SimplicialComplexData): One complex (not a batch), with its
            ``spectrum_j``.
        order (int): The order :math:`k` of :obj:`n_id`.
        n_id (torch.Tensor): Distinct ids of k-simplices :obj:`[M]` (any integer
            dtype), or a boolean mask :obj:`[N_k]` of them.
        adjacency (List[SimplicialAdjacency], optional): The adjacency of each order
            :math:`0..k` of :obj:`data`; built where missing (a loader builds them
            once).
        graph_rows (Tuple[torch.Tensor, torch.Tensor, torch.Tensor], optional): The
            columns of ``data.edge_index`` by source vertex, :func:`edge_rows`, so
            that the induced subgraph costs in proportion to the kept vertices'
            edges; built where missing (a loader builds it once). Its sizes are
            checked against the graph, its contents are not (that would cost what
            building it costs).
        attr_orders (Dict[str, Union[int, str]], optional): The per-simplex
            attributes of :obj:`data`,
            :func:`~torch_geometric_san.data.simplex_attr_orders`; built where
            missing (a loader builds it once).

    Returns:
        SimplicialComplexData: The sub-complex of order :math:`k`, with ``n_id``
        (:obj:`n_id`) and ``n_id_j`` for :math:`j < k`.

    Raises:
        TypeError: If :obj:`data` is not one
            :class:`~torch_geometric_san.data.SimplicialComplexData` (a batch is
            refused), :obj:`n_id` is not a mask or a 1-D integer tensor, or
            :obj:`adjacency`, :obj:`graph_rows` or :obj:`attr_orders` is not what
            its helper gives.
        ValueError: If :obj:`order` is out of range, :obj:`data` is not on the
            CPU, :obj:`n_id` holds ids out of range or repeated, or is a mask of
            the wrong size, a table of
            :obj:`adjacency` is of another order or size than :obj:`data`'s,
            :obj:`graph_rows` is of another graph's size, :obj:`attr_orders` names
            an attribute :obj:`data` has not, an order out of range, or an
            attribute whose rows are not those of its simplices, or the boundary
            entries are not laid out as the constructors store them (:math:`j + 1`
            per j-simplex, in the order of the simplices).

    Example:
        >>> data = SimplicialComplexData.from_simplices([[0, 1, 2], [1, 2, 3]],
        ...                                             close=True)
        >>> sub = simplicial_subcomplex(data, 1, torch.tensor([4, 0]))
        >>> sub.simplices_1, sub.n_id_0
        (tensor([[2, 3],
                [0, 1]]), tensor([0, 1, 2, 3]))
        >>> sub.down_laplacian(1)  # the edges 23 and 01 share no vertex
        (tensor([[0, 1],
                [0, 1]]), tensor([2., 2.]))
    """
    _check_one_complex(data)
    order = check_int(order, 'order', minimum=0, maximum=data.order)
    n_id = check_simplex_ids(n_id, data.num_simplices(order), order, 'n_id')
    _check_boundaries(data, order)
    if adjacency is not None:  # (the wrong tables gave a wrong sub-complex, silently)
        if not isinstance(adjacency, (list, tuple)) or len(adjacency) != order + 1 or \
                not all(isinstance(a, SimplicialAdjacency) for a in adjacency):
            raise TypeError(f"adjacency must be a list of the {order + 1} "
                            f"SimplicialAdjacency of orders 0..{order} of data")
        for j, table in enumerate(adjacency):
            if table.order != j or table.num_simplices != data.num_simplices(j):
                raise ValueError(f"adjacency[{j}] is the table of order {table.order} "
                                 f"with {table.num_simplices} simplices; data's order "
                                 f"{j} has {data.num_simplices(j)}")
    if graph_rows is not None:
        _check_graph_rows(data, graph_rows)
    if attr_orders is not None:
        _check_attr_orders(data, attr_orders)
    return _subcomplex(data, order, n_id, adjacency, graph_rows, attr_orders)


def _check_graph_rows(data: SimplicialComplexData, graph_rows: Any) -> None:
    # graph_rows of the graph of data, by their types and sizes (rows of another
    # graph gave a wrong subgraph, silently).
    if not (isinstance(graph_rows, tuple) and len(graph_rows) == 3
            and all(is_index_tensor(t) and t.dim() == 1 for t in graph_rows)):
        raise TypeError("graph_rows must be the three integer tensors edge_rows() gives "
                        "(torch.long, or torch.int32)")
    graph = data.edge_index
    if not isinstance(graph, Tensor):
        raise ValueError("graph_rows were given, but data keeps no graph edge_index")
    ptr, perm, target = graph_rows
    num_edges = graph.size(-1)
    if ptr.numel() != data.num_simplices(0) + 1 or perm.numel() != num_edges or \
            target.numel() != num_edges or int(ptr[-1]) != num_edges:
        raise ValueError(f"graph_rows are not those of data's graph ({data.num_simplices(0)} "
                         f"vertices, {num_edges} edges): build them with "
                         f"edge_rows(data.edge_index, data.num_simplices(0))")


def _check_attr_orders(data: SimplicialComplexData, attr_orders: Any) -> None:
    # attr_orders of data: each attribute present, with the rows of its owner (a
    # wrong table gave a sub-complex that passes validate()).
    if not isinstance(attr_orders, dict):
        raise TypeError(f"attr_orders must be the dict simplex_attr_orders() gives, "
                        f"not {type(attr_orders).__name__}")
    for key, owner in attr_orders.items():
        value = data._store.get(key) if isinstance(key, str) else None
        if not isinstance(value, Tensor):
            raise ValueError(f"attr_orders names {key!r}, which is not a tensor "
                             f"attribute of data")
        if owner == GRAPH_EDGES:
            graph = data.edge_index
            rows = graph.size(-1) if isinstance(graph, Tensor) else None
        elif isinstance(owner, int) and not isinstance(owner, bool) and \
                0 <= owner <= data.order:
            rows = data.num_simplices(owner)
        else:
            raise ValueError(f"attr_orders[{key!r}] must be an order in [0, "
                             f"{data.order}] or {GRAPH_EDGES!r} (got {owner!r})")
        if rows is None or value.dim() == 0 or value.size(0) != rows:
            raise ValueError(f"attr_orders gives {key!r} to {owner!r}, but its rows "
                             f"({list(value.shape)}) are not those of "
                             f"{'the graph' if owner == GRAPH_EDGES else 'its simplices'}: "
                             f"build the table with simplex_attr_orders(data)")


def _check_boundaries(data: SimplicialComplexData, order: int) -> None:
    r"""Checks that the boundary entries of orders :math:`1..k` of :obj:`data` are
    laid out as the constructors store them, :math:`j + 1` faces per j-simplex in
    the order of the simplices, which the sampled faces are read by (one pass over
    the entries).

    Raises:
        ValueError: If they are not.
    """
    for j in range(1, order + 1):
        index = data.boundary(j)[0]
        n = data.num_simplices(j)
        if index.size(1) != (j + 1) * n or not bool(
                (index[1].view(n, j + 1) == torch.arange(n).view(-1, 1)).all()):
            raise ValueError(f"the boundary entries of order {j} are not {j + 1} per "
                             f"{j}-simplex in the order of the simplices, as the "
                             f"constructors store them (the faces would be read "
                             f"wrongly): build the complex with a constructor of "
                             f"SimplicialComplexData")


def _subcomplex(data: SimplicialComplexData, order: int, n_id: Tensor,
                adjacency: Optional[List[SimplicialAdjacency]],
                graph_rows: Optional[GraphRows],
                attr_orders: Optional[Dict[str, Union[int, str]]]
                ) -> SimplicialComplexData:
    # simplicial_subcomplex without the checks of its input (the loader's n_id
    # come from its sampler, valid by construction).
    ids = _closure(data, order, n_id)
    if adjacency is None:
        adjacency = [SimplicialAdjacency(data, j) for j in range(order + 1)]
    # A subclass stays itself, as in PyG, without its __init__ (which may need
    # arguments, or set defaults that the copy below would keep)
    out = type(data).__new__(type(data))
    SimplicialComplexData.__init__(out, num_nodes=ids[0].numel())
    if attr_orders is None:
        attr_orders = simplex_attr_orders(data, who='simplicial_subcomplex',
                                          settle='attr_orders')
    rows: Dict[Union[int, str], Tensor] = dict(enumerate(ids))
    if isinstance(data.edge_index, Tensor):
        edge_index = data.edge_index
        if graph_rows is None:
            graph_rows = edge_rows(edge_index, data.num_simplices(0))
        # the columns out of the kept vertices whose targets are kept, ascending
        ptr, perm, target = graph_rows
        pos = _entries_among(ptr, target, ids[0],
                             lambda queries: adjacency[0]._local_ids(ids[0], queries),
                             symmetric=False)[2]
        kept = perm.index_select(0, pos).sort().values
        out.edge_index = adjacency[0]._local_ids(
            ids[0], edge_index.index_select(1, kept).long())  # (as edge_rows reads it)
        rows[GRAPH_EDGES] = kept
    for key, value in data._store.items():
        match = _COMPUTED.fullmatch(key)  # built per order; spectra of orders <= k kept
        if match is not None:
            if match.group(1) == 'spectrum' and int(match.group(4)) <= order:
                out[key] = value.clone()  # (a batch's, as its computed operators)
        elif key not in attr_orders and key not in out._store:
            out[key] = value
    out.update(_select_attr_rows(data, attr_orders, rows))  # dropped above order k
    dtype = data._weight_dtype()
    for j in range(order + 1):
        if j > 0:
            out[f'simplices_{j}'] = adjacency[0]._local_ids(
                ids[0], data[f'simplices_{j}'].index_select(0, ids[j]))
            index, weight = data.boundary(j)
            faces = index[0].view(-1, j + 1).index_select(0, ids[j])
            simplex = torch.arange(ids[j].numel())
            out[f'boundary_index_{j}'] = torch.stack([
                adjacency[j - 1]._local_ids(ids[j - 1], faces).view(-1),
                simplex.repeat_interleave(j + 1)])
            out[f'boundary_weight_{j}'] = weight.view(-1, j + 1).index_select(
                0, ids[j]).view(-1)
        for name, (index, weight) in adjacency[j]._restrict(ids[j], dtype).items():
            out[f'{name}_index_{j}'], out[f'{name}_weight_{j}'] = index, weight
    if f'up_index_{order}' not in out._store:  # (its top order: stored empty, as the
        # constructors store it, so that it batches with sub-complexes sampled below
        # the top of theirs)
        out[f'up_index_{order}'] = torch.empty((2, 0), dtype=torch.long)
        out[f'up_weight_{order}'] = torch.empty((0, ), dtype=dtype)
    out.n_id = n_id
    for j in range(order):
        out[f'n_id_{j}'] = ids[j]
    return out


def _check_one_complex(data: Any) -> None:
    # The sampled complex: one SimplicialComplexData, not a batch, on the CPU.
    _check_complex_arg(data, 'data', 'sample one complex')
    if 'batch_size' in data:
        raise ValueError("data is a sampled sub-complex (it has a 'batch_size'), whose "
                         "ids and operators are those of its sample: sample the whole "
                         "complex instead")
    devices = {value.device for value in data._store.values()
               if isinstance(value, Tensor)}
    if devices - {torch.device('cpu')}:
        raise ValueError(f"the complex must be on the CPU to be sampled (it is on "
                         f"{sorted(map(str, devices))}); move each sampled batch "
                         f"to the device instead")


def edge_rows(edge_index: Tensor, num_nodes: int) -> GraphRows:
    r"""The columns of a graph's :obj:`edge_index` grouped by source vertex and
    sorted by target within each group, for :func:`simplicial_subcomplex`: built
    once, they let it find the edges between the kept vertices in proportion to
    their number of edges, or by bisection in the rows of vertices with many more
    edges than the sample has vertices (hubs).

    Args:
        edge_index (torch.Tensor): The graph :obj:`[2, E]` (kept by a lifting).
        num_nodes (int): The number of vertices.

    Returns:
        (torch.Tensor, torch.Tensor, torch.Tensor): :obj:`ptr` :obj:`[num_nodes + 1]`,
        :obj:`perm` :obj:`[E]` and :obj:`target` :obj:`[E]`: the columns out of vertex
        :math:`v` are :obj:`perm[ptr[v]:ptr[v + 1]]`, by ascending target, then
        ascending column, and :obj:`target` is :obj:`edge_index[1, perm]`.

    Raises:
        TypeError: If :obj:`edge_index` is not a tensor of integers.
        ValueError: If it is not :obj:`[2, E]` or holds ids out of
            :math:`[0, \text{num_nodes})`.
    """
    source, target = check_edge_index(edge_index, num_nodes).long()
    ptr = torch.zeros(num_nodes + 1, dtype=torch.long)
    ptr[1:] = torch.cumsum(torch.bincount(source, minlength=num_nodes), 0)
    perm = torch.argsort(target, stable=True)
    perm = perm.index_select(0, torch.argsort(source.index_select(0, perm), stable=True))
    return ptr, perm, target.index_select(0, perm)


def _entries_among(indptr: Tensor, indices: Tensor, rows: Tensor,
                   local_ids: Callable[[Tensor], Tensor], symmetric: bool
                   ) -> Tuple[Tensor, Tensor, Tensor]:
    # The entries of the rows `rows` (distinct) of a compressed matrix (`indices`
    # ascending within each row) whose column is also one of `rows` (`local_ids`: its
    # index into `rows`, or -1): the index into `rows` of the row and of the column
    # of each, and its position (for a `symmetric` matrix, that of its transpose
    # where it comes from there), in no particular order.
    # A row much longer than the sample (a hub's) is not read whole, so that the cost
    # follows the sample, not the degrees of its simplices: in a symmetric matrix
    # its entries are those of the other rows' columns that name it, and the
    # entries between such rows are found by bisection; otherwise every member of
    # the sample is found in it by bisection (two per member).
    start = indptr.index_select(0, rows)
    degree = indptr.index_select(0, rows + 1) - start
    m = rows.numel()
    steps = int(degree.max()).bit_length() if m else 0
    search = degree > (m if symmetric else 2 * steps * m) + _SEARCH_CALL
    whole = (~search).nonzero().view(-1)
    pos, count = _row_positions(start.index_select(0, whole), degree.index_select(0, whole))
    owner = torch.repeat_interleave(whole, count, output_size=pos.numel())
    col = local_ids(indices.index_select(0, pos))
    keep = (col >= 0).nonzero().view(-1)
    pos, owner, col = (t.index_select(0, keep) for t in (pos, owner, col))
    long = search.nonzero().view(-1)
    if not long.numel():
        return owner, col, pos
    found = [(owner, col, pos)]
    if symmetric:
        named = search.index_select(0, col).nonzero().view(-1)
        found.append((col.index_select(0, named), owner.index_select(0, named),
                      pos.index_select(0, named)))
        targets = long  # (only the long rows' entries among themselves are left)
    else:
        targets = torch.arange(m)
    ids = rows.index_select(0, targets)
    ids, order = ids.sort()  # (ascending queries: the bisections share their paths)
    targets = targets.index_select(0, order)
    for row in long.tolist():
        begin, end = int(start[row]), int(start[row] + degree[row])
        first = torch.searchsorted(indices[begin:end], ids)
        count = torch.searchsorted(indices[begin:end], ids, right=True) - first
        at, _ = _row_positions(first + begin, count)
        found.append((torch.full_like(at, row),
                      torch.repeat_interleave(targets, count, output_size=at.numel()), at))
    return tuple(torch.cat(parts) for parts in zip(*found))


def _row_positions(start: Tensor, count: Tensor) -> Tuple[Tensor, Tensor]:
    # The positions start[i] .. start[i] + count[i] - 1 of every row i, one row after
    # the other, and the counts.
    total = int(count.sum())
    first = torch.cumsum(count, 0) - count
    return torch.arange(total) + torch.repeat_interleave(start - first, count,
                                                         output_size=total), count


def _boundary(data: SimplicialComplexData, j: int) -> sp.csc_array:
    # B_j [N_{j-1}, N_j] as a SciPy CSC array of float32 (its entries are +-1, exact
    # in every floating type; SciPy has no float16 or bfloat16), from views of the
    # stored tensors where the entries are sorted by simplex, as the constructors
    # store them.
    index, weight = data.boundary(j)
    shape = (data.num_simplices(j - 1), data.num_simplices(j))
    return sp.coo_array((weight.float().numpy(), (index[0].numpy(), index[1].numpy())),
                        shape=shape).tocsc()


def _closure(data: SimplicialComplexData, order: int, n_id: Tensor) -> List[Tensor]:
    # The ids of the kept simplices of each order 0..k: n_id on order k, the sorted
    # faces of the order above on the others.
    ids = [n_id]
    for j in range(order, 0, -1):
        faces = data.boundary(j)[0][0].view(-1, j + 1).index_select(0, ids[0])
        ids.insert(0, torch.unique(faces))
    return ids
