r"""Lifting a graph to its clique complex."""
from typing import Any, Dict

import gudhi
import numpy as np
import torch
from torch import Tensor
from torch_geometric.data import Data
from torch_geometric.transforms import BaseTransform

from torch_geometric_san.data import SimplicialComplexData, algebra
from torch_geometric_san.utils.validation import check_float_dtype, check_int


class LiftToCliqueComplex(BaseTransform):
    r"""Lifts a graph to its clique complex up to order :obj:`max_order` (every
    :math:`(k+1)`-clique becomes a k-simplex), built with GUDHI
    (:meth:`gudhi.SimplexTree.insert_batch` and :meth:`~gudhi.SimplexTree.expansion`),
    and returns a :class:`~torch_geometric_san.data.SimplicialComplexData`.

    * Nodes stay nodes: ``x`` becomes ``x_0`` (a 1-D ``x`` becomes a column).
    * Each undirected edge :math:`\{i, j\}`, :math:`i < j`, becomes the 1-simplex
      :math:`[i, j]` and ``edge_attr`` becomes ``x_1`` (rows in the order of
      ``simplices_1``, a 1-D ``edge_attr`` becomes a column), sign-flipped where the
      graph edge ran from the higher to the lower id, as an edge flow is. Where the
      graph holds an edge more than once (e.g. both directions of an undirected
      graph), ``x_1`` takes the first occurrence running from the lower to the higher
      id, or else the first occurrence.
    * Self-loops are not simplices and are dropped, as are other edge-level attributes
      (named ``edge_*``). Every other attribute (``y``, ``pos``, masks, ...) is copied.
      A graph without ``edge_index`` has no edges.

    The complex is padded to :obj:`max_order` (with empty orders) when the graph has no
    cliques that large, so lifted graphs can always be batched together. An empty
    order costs a few tensors and well under a millisecond: ``max_order=2000`` on a
    triangle lifts in about half a second.

    Args:
        max_order (int, optional): The largest order :math:`K` of the complex.
            (default: :obj:`2`)
        dtype (torch.dtype, optional): Floating type of the operator weights.
            (default: :obj:`torch.float32`)

    Example:
        >>> from torch_geometric.data import Data
        >>> edge_index = torch.tensor([[0, 0, 0, 1, 1, 2], [1, 2, 3, 2, 3, 3]])
        >>> graph = Data(edge_index=edge_index, num_nodes=4)
        >>> complex = LiftToCliqueComplex(max_order=3)(graph)
        >>> [complex.num_simplices(k) for k in range(4)]
        [4, 6, 4, 1]
    """
    def __init__(self, max_order: int = 2, dtype: torch.dtype = torch.float32) -> None:
        self.max_order = check_int(max_order, 'max_order', minimum=1)
        self.dtype = check_float_dtype(dtype)

    def forward(self, data: Data) -> SimplicialComplexData:
        r"""Lifts :obj:`data` (also run by calling the transform).

        Args:
            data (torch_geometric.data.Data): A graph with :obj:`edge_index`
                :obj:`[2, E]` (or none) and optional :obj:`x` :obj:`[N_0, F_0]`,
                :obj:`edge_attr` :obj:`[E, F_1]` and other attributes; not modified.

        Returns:
            SimplicialComplexData: Its clique complex of order :obj:`max_order`.
        """
        if not isinstance(data, Data):
            raise TypeError(f"LiftToCliqueComplex expects a torch_geometric.data.Data, "
                            f"not {type(data).__name__}")
        num_nodes = data.num_nodes
        if num_nodes is None:
            raise ValueError("the number of nodes cannot be inferred; set "
                             "data.num_nodes")
        edge_index = (np.empty((2, 0), dtype=np.int64) if data.edge_index is None else
                      _check_edge_index(data.edge_index, num_nodes))
        src, dst = edge_index
        keep = src != dst
        low, high = np.minimum(src, dst)[keep], np.maximum(src, dst)[keep]
        # The tree is dropped once its simplices are arrays, before the algebra.
        simplices = algebra.simplex_tree_to_arrays(
            _clique_tree(low, high, self.max_order), self.max_order)

        features: Dict[str, Any] = {
            key: value for key, value in data.items()
            if key not in ('x', 'edge_index', 'edge_attr', 'num_nodes')
            and not key.startswith('edge_')
        }
        if data.x is not None:
            features['x_0'] = _as_column(data.x)
        if data.edge_attr is not None:
            features['x_1'] = _edge_features(data.edge_attr, low, high, keep, num_nodes,
                                             forward=(src < dst)[keep])
        return SimplicialComplexData.from_simplices(
            simplices, num_nodes=num_nodes, order=self.max_order, dtype=self.dtype,
            **features)

    def __repr__(self) -> str:
        return f'{self.__class__.__name__}(max_order={self.max_order})'


def _clique_tree(low: np.ndarray, high: np.ndarray, max_order: int) -> gudhi.SimplexTree:
    # The clique complex of the edges (low, high) up to max_order, with GUDHI.
    tree = gudhi.SimplexTree()
    tree.insert_batch(np.stack([low, high]), np.zeros(len(low)))
    tree.expansion(max_order)
    return tree


def _check_edge_index(edge_index: Any, num_nodes: int) -> np.ndarray:
    if not isinstance(edge_index, Tensor):
        raise TypeError(f"edge_index must be a tensor, not {type(edge_index).__name__}")
    if edge_index.is_floating_point() or edge_index.is_complex() or \
            edge_index.dtype == torch.bool:
        raise TypeError(f"edge_index must hold integers, got {edge_index.dtype}")
    if edge_index.dim() != 2 or edge_index.size(0) != 2:
        raise ValueError(f"edge_index must have shape [2, num_edges], got "
                         f"{list(edge_index.shape)}")
    out = edge_index.detach().cpu().numpy().astype(np.int64)
    if out.size and (out.min() < 0 or out.max() >= num_nodes):
        bad = out[(out < 0) | (out >= num_nodes)][0]
        raise ValueError(f"edge_index holds node {bad}, out of range for "
                         f"{num_nodes} nodes")
    return out


def _as_column(value: Tensor) -> Tensor:
    return value.view(-1, 1) if isinstance(value, Tensor) and value.dim() == 1 else value


def _edge_features(edge_attr: Any, low: np.ndarray, high: np.ndarray, keep: np.ndarray,
                   num_nodes: int, forward: np.ndarray) -> Tensor:
    # One row per undirected edge in lexicographic order, oriented low -> high.
    if not isinstance(edge_attr, Tensor):
        raise TypeError(f"edge_attr must be a tensor, not {type(edge_attr).__name__}")
    if not edge_attr.is_signed() or edge_attr.dim() == 0:
        raise TypeError(f"edge_attr must be a signed numeric tensor [num_edges, F] (its "
                        f"sign follows the edge orientation), got {edge_attr.dtype} of "
                        f"shape {list(edge_attr.shape)}")
    if edge_attr.size(0) != len(keep):
        raise ValueError(f"edge_attr has {edge_attr.size(0)} rows but edge_index has "
                         f"{len(keep)} edges")
    if edge_attr.is_floating_point() and not torch.isfinite(edge_attr).all():
        raise ValueError("edge_attr has NaN or infinite entries")
    attr = _as_column(edge_attr)[torch.from_numpy(np.flatnonzero(keep))]
    key = low * num_nodes + high
    order = np.lexsort((np.arange(len(key)), ~forward, key))
    first = order[np.r_[True, key[order][1:] != key[order][:-1]]] if len(key) else order
    sign = torch.from_numpy(np.where(forward[first], 1, -1)).to(attr.device, attr.dtype)
    rows = attr[torch.from_numpy(first).to(attr.device)]
    return rows * sign.view(-1, *([1] * (rows.dim() - 1)))
