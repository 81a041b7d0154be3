r"""Lifting a graph to its clique complex."""
from typing import Any, List

import gudhi
import numpy as np
import torch
from torch import Tensor
from torch_geometric.data import Data

from torch_geometric_san.data import SimplicialComplexData, algebra
from torch_geometric_san.transforms._lifting import _as_column, _Lifting
from torch_geometric_san.utils.validation import (check_dense, check_edge_index,
                                                  check_num_nodes)

#: The ways ``edge_attr`` is lifted.
EDGE_ATTRS = ('flow', 'feature')


class LiftToCliqueComplex(_Lifting):
    r"""Lifts a graph to its clique complex up to order :obj:`max_order` (every
    :math:`(k+1)`-clique becomes a k-simplex) and returns a
    :class:`~torch_geometric_san.data.SimplicialComplexData`.

    * Nodes stay nodes: ``x`` becomes ``x_0`` (a 1-D ``x`` becomes a column). With
      :obj:`lift_x`, every k-simplex also gets the mean (or sum) of the features of its
      vertices as ``x_k``, :math:`k = 1..K`.
    * Each undirected edge :math:`\{i, j\}`, :math:`i < j`, becomes the 1-simplex
      :math:`[i, j]` and ``edge_attr`` becomes ``x_1`` (rows in the order of
      ``simplices_1``, a 1-D ``edge_attr`` becomes a column), placed after the lifted
      node features where both are given. With :obj:`edge_attr="flow"` it is
      sign-flipped where the graph edge ran from the higher to the lower id, as an edge
      flow is; with :obj:`edge_attr="feature"` it is copied as it is. Where the graph
      holds an edge more than once (e.g. both directions of an undirected graph),
      ``x_1`` takes the first occurrence running from the lower to the higher id, or
      else the first occurrence.
    * Self-loops are not simplices. The graph's ``edge_index`` (as given, self-loops
      and both directions included, as :obj:`torch.long`) and every other attribute
      (``y``, ``pos``, ``edge_weight``, masks, ...) are kept (a numeric NumPy array
      as a tensor, as
      :meth:`~torch_geometric_san.data.SimplicialComplexData.from_simplices` stores
      it), so PyG tools such as
      :func:`torch_geometric.utils.to_networkx` still see the graph, and batching
      shifts ``edge_index`` as for a graph. A graph without ``edge_index`` has no edges
      (one that stores them as a sparse ``adj_t`` or ``adj`` instead is refused).
    * A graph's own ``x_0`` beside ``x``, or ``x_1`` beside ``edge_attr``, is refused
      (the lifting makes them). Its other ``x_k`` are kept as features of order
      :math:`k`, their rows taken to follow ``simplices_k``, and placed after the
      lifted node features with :obj:`lift_x`, both in the type
      :func:`torch.promote_types` gives for the two (given integer features become
      floating, rounded beyond the floating type's exact integers, as integer edge
      attributes are); lifted features that overflow their type are refused.

    The complex is padded to :obj:`max_order` (with empty orders) when the graph has no
    cliques that large, so lifted graphs can always be batched together. The cliques
    are found by GUDHI's clique expansion (:meth:`gudhi.SimplexTree.insert_batch` and
    :meth:`~gudhi.SimplexTree.expansion`) and read from the tree with NumPy
    (:func:`~torch_geometric_san.data.algebra.simplex_tree_to_arrays`), in
    lexicographic order.

    Feature counts: :attr:`~torch_geometric_san.data.SimplicialComplexData.num_features`
    of the result (and so :attr:`torch_geometric.data.Dataset.num_features` of a dataset
    with this transform) is :math:`F_0`, the node features, which is also the count on
    every order :math:`k \geq 2` with :obj:`lift_x`;
    :attr:`~torch_geometric_san.data.SimplicialComplexData.num_edge_features` is
    :math:`F_1` and
    :meth:`~torch_geometric_san.data.SimplicialComplexData.num_simplex_features` gives
    any order.

    Args:
        max_order (int, optional): The largest order :math:`K` of the complex.
            (default: :obj:`2`)
        edge_attr (str, optional): How ``edge_attr`` is lifted: :obj:`"flow"`, an
            oriented signal whose sign follows the edge direction (it must be a signed
            numeric tensor), or :obj:`"feature"`, an unoriented one, copied without
            sign flips. Integer and bool attributes (e.g. one-hot bond types) are
            converted to :obj:`dtype` in both. (default: :obj:`"flow"`)
        lift_x (bool, optional): Lift the node features ``x`` to every order
            :math:`k \geq 1`. (default: :obj:`False`)
        reduce (str, optional): How :obj:`lift_x` combines the features of the
            :math:`k + 1` vertices of a k-simplex: :obj:`"mean"`, which keeps them on
            the scale of ``x`` at every order, or :obj:`"sum"`
            (:math:`|\mathbf{B}_1|^\top \mathbf{x}` for edges). Integer and bool ``x``
            is converted to :obj:`dtype` first. (default: :obj:`"mean"`)
        dtype (torch.dtype, optional): Floating type of the operator weights and of
            converted features. (default: :obj:`torch.float32`)
        laplacians (bool, optional): Store the Laplacians, as
            :meth:`~torch_geometric_san.data.SimplicialComplexData.from_simplices`
            does; without them the complex keeps its simplices, boundaries and
            ``spectrum_k``, what
            :class:`~torch_geometric_san.loader.SimplicialNeighborLoader` needs, in
            far less memory where vertices have many edges (the lower Laplacian of
            the edges has the square of each degree). (default: :obj:`True`)

    Example:
        >>> from torch_geometric.data import Data
        >>> edge_index = torch.tensor([[0, 0, 0, 1, 1, 2], [1, 2, 3, 2, 3, 3]])
        >>> graph = Data(edge_index=edge_index, num_nodes=4)
        >>> complex = LiftToCliqueComplex(max_order=3)(graph)
        >>> [complex.num_simplices(k) for k in range(4)]
        [4, 6, 4, 1]
        >>> graph.x = torch.eye(4)
        >>> complex = LiftToCliqueComplex(lift_x=True)(graph)
        >>> complex.x_2  # the mean of the one-hot features of the vertices
        tensor([[0.3333, 0.3333, 0.3333, 0.0000],
                [0.3333, 0.3333, 0.0000, 0.3333],
                [0.3333, 0.0000, 0.3333, 0.3333],
                [0.0000, 0.3333, 0.3333, 0.3333]])
        >>> complex.num_features, complex.num_simplex_features(2)
        (4, 4)
    """
    def __init__(self, max_order: int = 2, edge_attr: str = 'flow',
                 lift_x: bool = False, reduce: str = 'mean',
                 dtype: torch.dtype = torch.float32, laplacians: bool = True) -> None:
        super().__init__(max_order, lift_x, reduce, dtype, laplacians)
        if edge_attr not in EDGE_ATTRS:
            raise ValueError(f"edge_attr must be one of {EDGE_ATTRS}, got {edge_attr!r}")
        self.edge_attr = edge_attr

    def forward(self, data: Data) -> SimplicialComplexData:
        r"""Lifts :obj:`data` (also run by calling the transform).

        Args:
            data (torch_geometric.data.Data): A graph with :obj:`edge_index`
                :obj:`[2, E]` (or none) and optional :obj:`x` :obj:`[N_0, F_0]`,
                :obj:`edge_attr` :obj:`[E, F_1]` and other attributes; not modified.

        Returns:
            SimplicialComplexData: Its clique complex of order :obj:`max_order`.
        """
        self._check_data(data)
        given = data._store.get('num_nodes')  # (a bad type is named, not inferred)
        num_nodes = data.num_nodes if given is None else given
        if num_nodes is None:
            raise ValueError("the number of nodes cannot be inferred; set "
                             "data.num_nodes")
        num_nodes = check_num_nodes(num_nodes)
        if data.edge_index is None:
            stored = [key for key in ('adj_t', 'adj') if key in data]
            if stored:
                raise ValueError(f"the graph stores its edges as '{stored[0]}' (e.g. "
                                 f"after ToSparseTensor), which the lifting does not "
                                 f"read: lift the graph with its edge_index, before "
                                 f"ToSparseTensor")
        # The graph's edge_index is kept in PyG's dtype: batching a narrower one shifts
        # its ids in that dtype, where they wrap.
        kept = {} if data.edge_index is None else {
            'edge_index': check_edge_index(data.edge_index, num_nodes)}
        src, dst = (kept['edge_index'].cpu().numpy() if kept else
                    np.empty((2, 0), dtype=np.int64))
        keep = src != dst
        low, high = np.minimum(src, dst)[keep], np.maximum(src, dst)[keep]
        features = {}
        if data.edge_attr is not None:
            features['x_1'] = self._edge_features(data.edge_attr, low, high, keep,
                                                  num_nodes, forward=(src < dst)[keep])
        return self._complex(data, _cliques(low, high, num_nodes, self.max_order),
                             num_nodes, consumed=('edge_attr', 'edge_index'), **kept,
                             **features)

    def _edge_features(self, edge_attr: Any, low: np.ndarray, high: np.ndarray,
                       keep: np.ndarray, num_nodes: int, forward: np.ndarray) -> Tensor:
        # One row per undirected edge in lexicographic order, oriented low -> high.
        if not isinstance(edge_attr, Tensor):
            raise TypeError(f"edge_attr must be a tensor, not {type(edge_attr).__name__}")
        check_dense(edge_attr, 'edge_attr')
        flow = self.edge_attr == 'flow'
        if edge_attr.dim() not in (1, 2) or (flow and not edge_attr.is_signed()) or \
                edge_attr.is_complex():
            kind = ("a signed numeric tensor [num_edges, F] (its sign follows the edge "
                    "orientation; pass edge_attr='feature' for unoriented attributes)"
                    if flow else "a real tensor [num_edges, F]")
            raise TypeError(f"edge_attr must be {kind}, got {edge_attr.dtype} of shape "
                            f"{list(edge_attr.shape)}")
        if edge_attr.size(0) != len(keep):
            raise ValueError(f"edge_attr has {edge_attr.size(0)} rows but edge_index has "
                             f"{len(keep)} edges")
        attr = _as_column(edge_attr)[torch.from_numpy(np.flatnonzero(keep))]
        key = low * num_nodes + high
        order = np.lexsort((np.arange(len(key)), ~forward, key))
        first = order[np.r_[True, key[order][1:] != key[order][:-1]]] if len(key) else order
        rows = attr[torch.from_numpy(first).to(attr.device)]
        if not rows.is_floating_point():  # (an integer flow's sign flip could overflow)
            rows = rows.to(self.dtype)
        if not flow:
            return rows
        sign = torch.from_numpy(np.where(forward[first], 1, -1)).to(rows.device, rows.dtype)
        return rows * sign.view(-1, *([1] * (rows.dim() - 1)))

    def _options(self) -> List[str]:
        options = super()._options()
        return options[:1] + [f'edge_attr={self.edge_attr!r}'] + options[1:]


#: The vertex ids GUDHI's simplex tree holds (signed 32-bit handles).
_GUDHI_VERTICES = 2 ** 31


def _cliques(low: np.ndarray, high: np.ndarray, num_nodes: int,
             max_order: int) -> List[np.ndarray]:
    # The k-cliques of the edges (low, high), k = 1..max_order, lexicographic order,
    # by GUDHI's clique expansion (the tree is dropped once read). The edges are
    # deduplicated first, by sorting their keys (NumPy's hash-based np.unique is far
    # slower on integer keys), which halves GUDHI's insertions for a graph that holds
    # both directions of each edge.
    if num_nodes > _GUDHI_VERTICES:  # (GUDHI wraps larger ids to negative ones)
        raise ValueError(f"a graph of {num_nodes} nodes has vertex ids beyond the "
                         f"{_GUDHI_VERTICES} of GUDHI's 32-bit vertex handles")
    keys = np.sort(low * num_nodes + high)
    keys = keys[np.r_[True, keys[1:] != keys[:-1]]] if len(keys) else keys
    tree = gudhi.SimplexTree()
    tree.insert_batch(np.stack([keys // num_nodes, keys % num_nodes]),
                      np.zeros(len(keys)))
    tree.expansion(max_order)
    return algebra.simplex_tree_to_arrays(tree, max_order, copy=False)[1:]
