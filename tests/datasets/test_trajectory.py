import numpy as np
import pytest
import torch

from torch_geometric_san.data import SimplicialComplexData
from torch_geometric_san.datasets.trajectory import (
    path_to_flow,
    random_orientation,
    reorient_edges,
)

EDGES = np.array([[0, 1], [0, 2], [1, 2], [2, 3]])


def test_path_to_flow_signs_follow_reference_orientation():
    flow = path_to_flow(np.array([3, 2, 0, 1]), EDGES)
    np.testing.assert_array_equal(flow, [1.0, -1.0, 0.0, -1.0])
    assert flow.dtype == np.float32


def test_path_to_flow_sums_repeated_edges():
    # 0 -> 1 -> 2 -> 0 -> 1: the edge {0, 1} is traversed twice forwards.
    flow = path_to_flow(np.array([0, 1, 2, 0, 1]), EDGES)
    np.testing.assert_array_equal(flow, [2.0, -1.0, 1.0, 0.0])
    # Back and forth cancels.
    np.testing.assert_array_equal(path_to_flow([2, 3, 2], EDGES), np.zeros(4))


def test_path_to_flow_edge_order_does_not_matter():
    perm = np.array([2, 0, 3, 1])
    flow = path_to_flow([3, 2, 0, 1], EDGES[perm])
    np.testing.assert_array_equal(flow, path_to_flow([3, 2, 0, 1],
                                                     EDGES)[perm])


def test_path_to_flow_rejects_non_edges():
    with pytest.raises(ValueError, match="from vertex 1 to 3"):
        path_to_flow([0, 1, 3], EDGES)
    with pytest.raises(ValueError, match="with edges"):
        path_to_flow([0, 1], np.zeros((0, 2), dtype=np.int64))


def test_path_to_flow_short_paths():
    np.testing.assert_array_equal(path_to_flow([2], EDGES), np.zeros(4))


def test_random_orientation_is_seeded():
    a = random_orientation(1000, np.random.default_rng(3))
    b = random_orientation(1000, np.random.default_rng(3))
    c = random_orientation(1000, np.random.default_rng(4))
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    assert set(np.unique(a)) == {-1, 1}
    assert 400 < (a == -1).sum() < 600


def test_reorient_edges(dense):
    complex = SimplicialComplexData.from_simplices(
        [[0, 1, 2], [1, 2, 3], [2, 3, 4]], close=True,
        pos=torch.rand(5, 2))
    n0, n1, n2 = (complex.num_simplices(k) for k in range(3))
    signs = torch.tensor([1, -1, -1, 1, 1, -1, 1])
    flipped = reorient_edges(complex, signs)
    s = torch.diag(signs.double())
    assert torch.equal(flipped.simplices_1, complex.simplices_1)
    assert torch.equal(flipped.simplices_2, complex.simplices_2)
    assert torch.equal(flipped.pos, complex.pos)
    assert torch.equal(dense(*flipped.boundary(1), (n0, n1)),
                       dense(*complex.boundary(1), (n0, n1)) @ s)
    assert torch.equal(dense(*flipped.boundary(2), (n1, n2)),
                       s @ dense(*complex.boundary(2), (n1, n2)))
    for op in ("down_laplacian", "up_laplacian", "hodge_laplacian"):
        assert torch.allclose(dense(*getattr(flipped, op)(1), (n1, n1)),
                              s @ dense(*getattr(complex, op)(1),
                                        (n1, n1)) @ s)
    # vertex and triangle operators do not change
    for k, n in ((0, n0), (2, n2)):
        assert torch.allclose(dense(*flipped.hodge_laplacian(k), (n, n)),
                              dense(*complex.hodge_laplacian(k), (n, n)))
    with pytest.raises(ValueError, match="for each of the 7 edges"):
        reorient_edges(complex, torch.ones(6))
    with pytest.raises(ValueError, match=r"\+1 or -1"):
        reorient_edges(complex, torch.zeros(7))
    with pytest.raises(TypeError, match="tensor"):
        reorient_edges(complex, np.ones(7))


@pytest.mark.parametrize("order", [1, 2, 3])
def test_reorient_edges_without_triangles(order, dense):
    # A path of edges, padded to `order` (no triangles: an empty B_2 if order > 1).
    complex = SimplicialComplexData.from_simplices([[0, 1], [1, 2]], order=order)
    signs = torch.tensor([-1, 1])
    flipped = reorient_edges(complex, signs)
    assert flipped.order == order
    assert [flipped.num_simplices(k) for k in range(order + 1)] == [3, 2] + [0] * (
        order - 1)
    s = torch.diag(signs.double())
    assert torch.equal(dense(*flipped.boundary(1), (3, 2)),
                       dense(*complex.boundary(1), (3, 2)) @ s)
    assert torch.equal(dense(*flipped.hodge_laplacian(1), (2, 2)),
                       s @ dense(*complex.hodge_laplacian(1), (2, 2)) @ s)


@pytest.mark.parametrize('rng', [None, 0, np.random.RandomState(0)])
def test_random_orientation_needs_a_generator(rng):
    # (an AttributeError inside it)
    with pytest.raises(TypeError, match="'rng' must be a numpy.random.Generator"):
        random_orientation(3, rng)
