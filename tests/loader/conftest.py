"""Random complexes for the loader tests: Delaunay triangulations of random points in
the plane (order 2) and in space (order 3, so that triangles have both neighbourhoods)."""
import numpy as np
import pytest
import scipy.spatial
import torch
from torch import Tensor

from torch_geometric_san.data import SimplicialComplexData


def delaunay(num_points: int, dim: int = 2, seed: int = 0, channels: int = 3,
             dtype: torch.dtype = torch.float64) -> SimplicialComplexData:
    """The Delaunay complex of random points in the unit square or cube, with random
    features ``x_k`` on every order and labels ``y`` on the edges."""
    rng = np.random.default_rng(seed)
    cells = np.sort(scipy.spatial.Delaunay(rng.random((num_points, dim))).simplices, 1)
    data = SimplicialComplexData.from_simplices(cells, close=True, dtype=dtype)
    generator = torch.Generator().manual_seed(seed)
    for k in range(data.order + 1):
        data[f'x_{k}'] = torch.randn(data.num_simplices(k), channels, dtype=dtype,
                                     generator=generator)
    return data


def dense(index: Tensor, weight: Tensor, shape) -> Tensor:
    """The dense matrix M[target, source] of an (index, weight) pair."""
    out = torch.zeros(shape, dtype=torch.float64)
    out.index_put_((index[1], index[0]), weight.double(), accumulate=True)
    return out


@pytest.fixture(name='delaunay')
def delaunay_fixture():
    """``delaunay(num_points, dim=2, seed=0, ...)``, the builder above."""
    return delaunay


@pytest.fixture(name='dense')
def dense_fixture():
    """``dense(index, weight, shape)``, the helper above."""
    return dense


@pytest.fixture
def planar() -> SimplicialComplexData:
    return delaunay(80)


@pytest.fixture
def spatial() -> SimplicialComplexData:
    return delaunay(120, dim=3)
