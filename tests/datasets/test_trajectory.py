import numpy as np
import pytest

from torch_geometric_san.datasets.trajectory import (
    path_to_flow,
    random_orientation,
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
