"""Fixtures for the data tests: small complexes with known topology, random ones, and
dense versions of the stored operators."""
import gudhi
import numpy as np
import pytest
import torch

from torch_geometric_san.data import SimplicialComplexData


def _dense(index: torch.Tensor, weight: torch.Tensor, shape) -> np.ndarray:
    out = torch.zeros(shape, dtype=torch.float64)
    out.index_put_((index[0].cpu(), index[1].cpu()), weight.double().cpu(),
                   accumulate=True)
    return out.numpy()


@pytest.fixture
def dense():
    r"""``dense(index, weight, shape)``: the dense matrix with entries ``weight`` at
    ``(index[0], index[1])``."""
    return _dense


def _assert_data_equal(a, b) -> None:
    assert type(a) is type(b)
    assert sorted(a.keys()) == sorted(b.keys())
    for key in a.keys():
        if isinstance(a[key], torch.Tensor):
            assert a[key].dtype == b[key].dtype, key
            assert torch.equal(a[key], b[key]), key
        else:
            assert a[key] == b[key], key


@pytest.fixture
def assert_data_equal():
    r"""``assert_data_equal(a, b)``: same class, same keys, equal values."""
    return _assert_data_equal


@pytest.fixture
def annulus() -> np.ndarray:
    r"""Triangles of an annulus (b = 1, 1, 0): two 5-cycles (outer 0..4, inner 5..9)
    joined by a band of triangles."""
    n = 5
    j = np.arange(n)
    outer, inner = j, n + j
    nxt = (j + 1) % n
    tri = np.concatenate([np.stack([outer, outer[nxt], inner], 1),
                          np.stack([outer[nxt], inner, inner[nxt]], 1)])
    return np.sort(tri, axis=1)


@pytest.fixture
def hollow_tetrahedron() -> np.ndarray:
    r"""The four triangles of the boundary of a tetrahedron (b = 1, 0, 1)."""
    return np.array([[0, 1, 2], [0, 1, 3], [0, 2, 3], [1, 2, 3]])


def _rips_tree(seed: int, num_points: int, max_order: int,
               radius: float) -> gudhi.SimplexTree:
    points = np.random.default_rng(seed).random((num_points, 2))
    rips = gudhi.RipsComplex(points=points, max_edge_length=radius)
    return rips.create_simplex_tree(max_dimension=max_order)


@pytest.fixture
def rips_tree():
    r"""``rips_tree(seed, num_points, max_order, radius)``: the Vietoris-Rips complex
    of random points in the unit square, as a GUDHI simplex tree."""
    return _rips_tree


@pytest.fixture(params=[(0, 12, 2, 0.35), (1, 25, 3, 0.35), (2, 40, 3, 0.25),
                        (3, 60, 4, 0.2)],
                ids=lambda p: f"seed{p[0]}-n{p[1]}-K{p[2]}")
def random_tree(request) -> gudhi.SimplexTree:
    return _rips_tree(*request.param)


@pytest.fixture(params=['cpu', pytest.param('cuda', marks=pytest.mark.skipif(
    not torch.cuda.is_available(), reason="needs a CUDA device"))])
def device(request) -> str:
    return request.param


@pytest.fixture
def random_complex(random_tree) -> SimplicialComplexData:
    return SimplicialComplexData.from_simplex_tree(random_tree)
