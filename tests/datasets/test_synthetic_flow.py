import numpy as np
import pytest
import scipy.sparse

from torch_geometric_san.datasets.synthetic_flow import (
    END_REGION,
    HOLES,
    START_REGION,
    WAYPOINT_REGIONS,
    make_holey_triangulation,
    sample_trajectory,
)


def _inside(point, region):
    return bool(np.all((point >= region[0]) & (point <= region[1])))


def _edges(triangles):
    return np.unique(np.concatenate([triangles[:, [0, 1]],
                                     triangles[:, [0, 2]],
                                     triangles[:, [1, 2]]]), axis=0)


def _adjacency(num_vertices, edges):
    a = scipy.sparse.coo_matrix((np.ones(len(edges)), (edges[:, 0],
                                                       edges[:, 1])),
                                shape=(num_vertices, num_vertices))
    return (a + a.T).tocsr()


@pytest.fixture(scope="module")
def triangulation():
    return make_holey_triangulation(400, np.random.default_rng(0))


def test_make_holey_triangulation(triangulation):
    points, triangles = triangulation
    assert points.shape[1] == 2 and 300 < len(points) < 400
    assert (np.diff(triangles, axis=1) > 0).all()
    # every vertex is used, none lies in a hole, no triangle touches a hole
    assert np.array_equal(np.unique(triangles), np.arange(len(points)))
    for hole in HOLES:
        assert not any(_inside(p, hole) for p in points)
    # both holes are real holes: Euler characteristic V - E + T = 1 - 2
    edges = _edges(triangles)
    assert len(points) - len(edges) + len(triangles) == -1


def test_make_holey_triangulation_seeded():
    a = make_holey_triangulation(400, np.random.default_rng(1))
    b = make_holey_triangulation(400, np.random.default_rng(1))
    c = make_holey_triangulation(400, np.random.default_rng(2))
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
    assert a[0].shape != c[0].shape or not np.array_equal(a[0], c[0])


@pytest.mark.parametrize("label", [0, 1])
def test_sample_trajectory(triangulation, label):
    points, triangles = triangulation
    edges = _edges(triangles)
    adjacency = _adjacency(len(points), edges)
    edge_set = {tuple(e) for e in edges}
    rng = np.random.default_rng(label)
    for _ in range(20):
        path = sample_trajectory(points, adjacency, label, rng)
        assert _inside(points[path[0]], START_REGION)
        assert _inside(points[path[-1]], END_REGION)
        assert any(_inside(points[v], WAYPOINT_REGIONS[label]) for v in path)
        assert not any(_inside(points[v], WAYPOINT_REGIONS[1 - label])
                       for v in path[1:-1])
        assert len(set(path.tolist())) == len(path)  # self-avoiding
        assert all((min(u, v), max(u, v)) in edge_set
                   for u, v in zip(path[:-1], path[1:]))


def test_sample_trajectory_needs_vertices_in_regions():
    points = np.array([[0.5, 0.5], [0.5, 0.6]])
    adjacency = _adjacency(2, np.array([[0, 1]]))
    with pytest.raises(ValueError, match="No vertex lies in the region"):
        sample_trajectory(points, adjacency, 0, np.random.default_rng(0))
