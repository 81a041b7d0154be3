"""Small random complexes and operator helpers for the layer and model tests."""
from typing import Optional, Tuple

import numpy as np
import pytest
import scipy.spatial
import torch
from torch import Tensor

from torch_geometric.data import Data
from torch_geometric.utils import erdos_renyi_graph

from torch_geometric_san.data import SimplicialComplexData
from torch_geometric_san.sparse import SimplicialOperators
from torch_geometric_san.transforms import LiftToCliqueComplex


class Kit:
    """Builders of test complexes (through the package's data model) and of
    dense copies of their operators."""

    @staticmethod
    def delaunay(num_points: int = 14, seed: int = 0, drop_triangles: int = 0,
                 dtype: torch.dtype = torch.float64, **features) -> SimplicialComplexData:
        """The Delaunay 2-complex of random points in the unit square, less
        its first `drop_triangles` triangles (their edges stay)."""
        points = np.random.default_rng(seed).random((num_points, 2))
        triangles = np.sort(scipy.spatial.Delaunay(points).simplices, axis=1)
        edges = np.unique(np.concatenate([triangles[:, [0, 1]], triangles[:, [0, 2]],
                                          triangles[:, [1, 2]]]), axis=0)
        return SimplicialComplexData.from_simplices(
            [edges, triangles[drop_triangles:]], close=True, order=2, dtype=dtype,
            **features)

    @staticmethod
    def clique(num_nodes: int = 9, p: float = 0.6, seed: int = 0, max_order: int = 3,
               dtype: torch.dtype = torch.float64) -> SimplicialComplexData:
        """The clique complex of an Erdős–Rényi graph."""
        torch.manual_seed(seed)
        graph = Data(edge_index=erdos_renyi_graph(num_nodes, p), num_nodes=num_nodes)
        return LiftToCliqueComplex(max_order=max_order, dtype=dtype)(graph)

    @staticmethod
    def operators(data: SimplicialComplexData, k: int) -> SimplicialOperators:
        """The order-k operators, as the layers take them."""
        return data.operators(k)

    @staticmethod
    def legacy(data: SimplicialComplexData, k: int) -> Tuple[Tensor, ...]:
        """(up_index, up_weight, down_index, down_weight, hodge_index,
        hodge_weight) of order k, the layers' earlier (still accepted) input."""
        return (*data.up_laplacian(k), *data.down_laplacian(k),
                *data.hodge_laplacian(k))

    @staticmethod
    def dense(index: Tensor, weight: Optional[Tensor], n: int) -> Tensor:
        """The dense matrix M[target, source] of an (index, weight) pair."""
        if weight is None:
            weight = torch.ones(index.size(1), dtype=torch.float64)
        return torch.sparse_coo_tensor(index.flip(0), weight, (n, n),
                                       check_invariants=True).to_dense()

    @staticmethod
    def scaled(laplacian: Tensor) -> Tensor:
        """A dense Laplacian divided by its largest eigenvalue (the fixed
        layers' normalisation)."""
        return laplacian / torch.linalg.eigvalsh(laplacian)[-1]

    @staticmethod
    def tap_weights(conv) -> Tuple[Tensor, ...]:
        """The filter weights W_p [F_in, F_out] of each tap block of a
        single-head layer, in the order of `conv.lin`."""
        blocks = conv.lin.weight.view(conv.num_taps, -1, conv.in_channels)
        return tuple(w.t() for w in blocks)

    @classmethod
    def setup_edges(cls, seed: int = 0):
        """A complex with some edges in no triangle, a signal on its edges and
        its order-1 operators (as the layers take them, and dense)."""
        torch.manual_seed(seed)
        data = cls.delaunay(13, seed=seed, drop_triangles=2)
        x = torch.randn(data.num_simplices(1), 3, dtype=torch.float64)
        return x, data.operators(1), cls.dense_operators(data, 1)

    @classmethod
    def dense_operators(cls, data: SimplicialComplexData, k: int) -> Tuple[Tensor, ...]:
        """Dense (L_up, L_down, L_hodge) of order k."""
        n, ops = data.num_simplices(k), cls.legacy(data, k)
        return tuple(cls.dense(ops[i], ops[i + 1], n) for i in (0, 2, 4))


@pytest.fixture
def kit() -> Kit:
    return Kit()
