"""The synthetic flow dataset of Bodnar et al. (2021), used by the SAN paper."""
from typing import Tuple

import numpy as np
import scipy.sparse
import scipy.spatial

# Regions as [[x_min, y_min], [x_max, y_max]] in the unit square.
HOLES = (np.array([[0.2, 0.2], [0.4, 0.4]]), np.array([[0.6, 0.6], [0.8, 0.8]]))
START_REGION = np.array([[0.0, 0.8], [0.2, 1.0]])  # top-left corner
END_REGION = np.array([[0.8, 0.0], [1.0, 0.2]])  # bottom-right corner
# Waypoint regions, one per class: next to the bottom-left hole (class 0) and
# next to the top-right hole (class 1).
WAYPOINT_REGIONS = (np.array([[0.0, 0.0], [0.2, 0.2]]),
                    np.array([[0.8, 0.8], [1.0, 1.0]]))
RANDOM_STEP_PROB = 0.1


def _inside(points: np.ndarray, region: np.ndarray) -> np.ndarray:
    return np.all((points >= region[0]) & (points <= region[1]), axis=-1)


def make_holey_triangulation(
    num_points: int,
    rng: np.random.Generator,
) -> Tuple[np.ndarray, np.ndarray]:
    r"""Samples :obj:`num_points` points uniformly in the unit square,
    triangulates them with :class:`scipy.spatial.Delaunay` and cuts the two
    square :data:`HOLES` out: the points inside a hole and every triangle
    touching one are removed, as are points left in no triangle. Vertices
    are renumbered consecutively in their sampling order.

    Returns:
        (numpy.ndarray, numpy.ndarray): The vertex positions, shape
        :obj:`[N, 2]`, and the triangles, shape :obj:`[T, 3]`, rows ascending.
    """
    points = rng.uniform(0.0, 1.0, size=(num_points, 2))
    triangles = scipy.spatial.Delaunay(points).simplices
    in_hole = np.zeros(num_points, dtype=bool)
    for hole in HOLES:
        in_hole |= _inside(points, hole)
    triangles = triangles[~in_hole[triangles].any(axis=1)]
    keep = np.zeros(num_points, dtype=bool)
    keep[triangles.ravel()] = True
    new_id = np.cumsum(keep) - 1
    return points[keep], np.sort(new_id[triangles], axis=1)


def _sample_vertex(points: np.ndarray, region: np.ndarray,
                   rng: np.random.Generator) -> int:
    candidates = np.flatnonzero(_inside(points, region))
    if len(candidates) == 0:
        raise ValueError(f"No vertex lies in the region {region.tolist()}; "
                         f"use more points")
    return int(rng.choice(candidates))


def sample_trajectory(
    points: np.ndarray,
    adjacency: scipy.sparse.csr_matrix,
    label: int,
    rng: np.random.Generator,
    max_attempts: int = 1000,
) -> np.ndarray:
    r"""Samples one trajectory of class :obj:`label`.

    A start vertex, an end vertex and a waypoint vertex are drawn uniformly
    from :data:`START_REGION`, :data:`END_REGION` and
    :data:`WAYPOINT_REGIONS[label] <WAYPOINT_REGIONS>`. The walk is
    self-avoiding: at each step it moves to an unvisited neighbour, with
    probability :data:`RANDOM_STEP_PROB` a uniformly random one, otherwise
    the one closest to its current target (the waypoint until it is reached,
    then the end vertex); it ends when it reaches the end vertex after the
    waypoint. A walk that gets stuck is discarded and a new one
    (with new start, waypoint and end) is drawn.

    Args:
        points (numpy.ndarray): Vertex positions, shape :obj:`[N, 2]`.
        adjacency (scipy.sparse.csr_matrix): The vertex adjacency.
        label (int): The class, 0 (bottom-left hole) or 1 (top-right hole).
        rng (numpy.random.Generator): The random generator.
        max_attempts (int, optional): Walks to try before giving up.

    Returns:
        numpy.ndarray: The vertex path, shape :obj:`[L]`.
    """
    for _ in range(max_attempts):
        start = _sample_vertex(points, START_REGION, rng)
        end = _sample_vertex(points, END_REGION, rng)
        waypoint = _sample_vertex(points, WAYPOINT_REGIONS[label], rng)
        path = [start]
        visited = {start}
        vertex, target = start, waypoint
        while True:
            if vertex == target:
                if target == end:
                    return np.asarray(path, dtype=np.int64)
                target = end
            nbrs = adjacency.indices[adjacency.indptr[vertex]:
                                     adjacency.indptr[vertex + 1]]
            nbrs = np.array([u for u in nbrs if u not in visited])
            if len(nbrs) == 0:
                break  # stuck: draw a new walk
            if rng.uniform() < RANDOM_STEP_PROB:
                vertex = int(rng.choice(nbrs))
            else:
                dist = np.sum((points[nbrs] - points[target])**2, axis=1)
                vertex = int(nbrs[np.argmin(dist)])
            path.append(vertex)
            visited.add(vertex)
    raise RuntimeError(f"No trajectory reached the end within {max_attempts} "
                       f"attempts")
