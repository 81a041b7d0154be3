"""Helpers shared by the trajectory datasets: edge flows of vertex paths and
random re-orientations."""
import numpy as np

__all__ = ["path_to_flow", "random_orientation"]


def path_to_flow(path: np.ndarray, edges: np.ndarray) -> np.ndarray:
    r"""Returns the edge flow (1-chain) of a vertex path.

    Every step :math:`u \to v` of the path adds :math:`+1` to the edge
    :math:`\{u, v\}` if it runs along the edge's reference orientation (from
    the lower to the higher vertex id) and :math:`-1` otherwise; a path that
    uses an edge several times gets the sum.

    Args:
        path (numpy.ndarray): Vertex ids, shape :obj:`[L]`.
        edges (numpy.ndarray): The edges, shape :obj:`[E, 2]`, each row
            ascending (the reference orientation).

    Returns:
        numpy.ndarray: The flow, shape :obj:`[E]`, dtype float32.

    Example:
        >>> edges = np.array([[0, 1], [0, 2], [1, 2]])
        >>> path_to_flow(np.array([0, 1, 2, 0]), edges)
        array([ 1., -1.,  1.], dtype=float32)
    """
    path = np.asarray(path, dtype=np.int64)
    edges = np.asarray(edges, dtype=np.int64)
    flow = np.zeros(len(edges), dtype=np.float32)
    if len(path) < 2:
        return flow
    if len(edges) == 0:
        raise ValueError("A path with steps needs a complex with edges")
    u, v = path[:-1], path[1:]
    lo, hi = np.minimum(u, v), np.maximum(u, v)
    base = int(max(edges.max(initial=0), path.max())) + 1
    keys = edges[:, 0] * base + edges[:, 1]
    order = np.argsort(keys)
    step_keys = lo * base + hi
    pos = np.searchsorted(keys[order], step_keys).clip(max=len(keys) - 1)
    idx = order[pos]
    missing = keys[idx] != step_keys
    if missing.any():
        i = int(np.flatnonzero(missing)[0])
        raise ValueError(f"The path steps from vertex {u[i]} to {v[i]}, "
                         f"which is not an edge of the complex")
    np.add.at(flow, idx, np.where(u < v, 1.0, -1.0).astype(np.float32))
    return flow


def random_orientation(num_simplices: int,
                       rng: np.random.Generator) -> np.ndarray:
    r"""Draws a random change of reference orientation: each simplex keeps
    (:math:`+1`) or flips (:math:`-1`) its orientation with probability 1/2.

    Args:
        num_simplices (int): Number of simplices.
        rng (numpy.random.Generator): The random generator.

    Returns:
        numpy.ndarray: Signs in :math:`\{-1, +1\}`, shape
        :obj:`[num_simplices]`, dtype int64.
    """
    return rng.integers(0, 2, size=num_simplices) * 2 - 1
