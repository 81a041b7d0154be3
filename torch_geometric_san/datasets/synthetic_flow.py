"""The synthetic flow dataset of Bodnar et al. (2021), used by the SAN paper."""
from typing import Callable, List, Optional, Tuple

import numpy as np
import scipy.sparse
import scipy.spatial
import torch

from torch_geometric_san.data import SimplicialComplexData
from torch_geometric_san.datasets.trajectory import (
    ORIENTATIONS,
    TrajectoryDataset,
)
from torch_geometric_san.utils.progress import progress_bar
from torch_geometric_san.utils.validation import check_int

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

    Args:
        num_points (int): Points sampled before cutting the holes.
        rng (numpy.random.Generator): The random generator.

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
    adjacency: scipy.sparse.csr_array,
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
        adjacency (scipy.sparse.csr_array): The symmetric vertex adjacency.
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


class SyntheticFlowDataset(TrajectoryDataset):
    r"""The synthetic flow dataset of Bodnar et al., "Weisfeiler and Lehman
    Go Topological: Message Passing Simplicial Networks" (ICML 2021), in the
    setting of the SAN paper (Giusti et al. 2022): 400 points, 1000 training
    and 200 test trajectories.

    The complex: :obj:`num_points` points uniform in the unit square (as the
    SAN paper states; the code of Bodnar et al. samples 1000 points in
    :math:`[-0.05, 1.05]^2`), triangulated with
    :class:`scipy.spatial.Delaunay`; the square holes :math:`[0.2, 0.4]^2`
    and :math:`[0.6, 0.8]^2` are cut out (:func:`make_holey_triangulation`;
    removing the triangles that touch a point in a hole makes the holes
    somewhat larger than the squares). The edges are stored in lexicographic
    order, the triangles in Delaunay's order. Each trajectory runs from the
    top-left to the bottom-right corner through a waypoint next to the
    bottom-left hole (label 0) or the top-right hole (label 1), as a biased
    self-avoiding random walk (:func:`sample_trajectory`). Its input is the
    edge flow :obj:`x_1` (:func:`~torch_geometric_san.datasets.trajectory.path_to_flow`).
    Labels are balanced exactly (:math:`\lfloor n/2 \rfloor` zeros) and
    shuffled.

    The data are generated locally (no download) and are a function of
    :obj:`seed` and the size arguments only: the complex depends on
    :obj:`seed` and :obj:`num_points`, the trajectories of a split on
    :obj:`seed`, the split and its size. Both splits share the complex.
    See :class:`~torch_geometric_san.datasets.base.SharedComplexDataset` for
    the two ways to read the items, and
    :class:`~torch_geometric_san.datasets.trajectory.TrajectoryDataset` for
    :obj:`orientation`.

    Source and license: generated by this package (MIT); the protocol
    follows the MIT-licensed code of Bodnar et al.

    Args:
        root (str): Root directory; processed files go to
            :obj:`root/processed`.
        split (str, optional): :obj:`"train"` or :obj:`"test"`.
        orientation (str, optional): :obj:`"default"`,
            :obj:`"random_per_trajectory"` (each trajectory its own random
            orientation, as the SAN authors' released test split) or
            :obj:`"random"` (one for the split). (default: :obj:`"default"`)
        num_points (int, optional): Points sampled before cutting the holes:
            400 as the paper's text says; the SAN authors' released data is a
            complex of about 200 points (186 vertices, 527 edges, 340
            triangles), which :obj:`num_points=200` resembles.
            (default: :obj:`400`)
        num_train (int, optional): Training trajectories. (default: :obj:`1000`)
        num_test (int, optional): Test trajectories. (default: :obj:`200`)
        seed (int, optional): Random seed. (default: :obj:`0`)
        transform (callable, optional): Applied to each item on access.
        log (bool, optional): Print progress. (default: :obj:`True`)
        force_reload (bool, optional): Re-process. (default: :obj:`False`)

    Example:
        >>> import tempfile
        >>> from torch_geometric.loader import DataLoader
        >>> tmp = tempfile.TemporaryDirectory()
        >>> dataset = SyntheticFlowDataset(tmp.name, split="test", num_test=4,
        ...                                log=False)
        >>> len(dataset), dataset.num_classes
        (4, 2)
        >>> num_edges = dataset.complex.num_simplices(1)
        >>> dataset[0].x_1.shape == (num_edges, 1)
        True
        >>> # Path 1: items batch into one block-diagonal complex.
        >>> batch = next(iter(DataLoader(dataset, batch_size=4)))
        >>> batch.x_1.shape == (4 * num_edges, 1), batch.y.shape
        (True, torch.Size([4]))
        >>> # Path 2: all signals at once on the shared complex.
        >>> dataset.x_1.shape == (4, num_edges, 1), dataset.y.shape
        (True, torch.Size([4]))
        >>> tmp.cleanup()
    """
    def __init__(
        self,
        root: str,
        split: str = "train",
        orientation: str = "default",
        num_points: int = 400,
        num_train: int = 1000,
        num_test: int = 200,
        seed: int = 0,
        transform: Optional[Callable] = None,
        log: bool = True,
        force_reload: bool = False,
    ) -> None:
        self.split = self._check_choice("split", split, ("train", "test"))
        self.orientation = self._check_choice("orientation", orientation,
                                              ORIENTATIONS)
        self.num_points = check_int(num_points, "'num_points'", minimum=3)
        num_train = check_int(num_train, "'num_train'", minimum=1)
        num_test = check_int(num_test, "'num_test'", minimum=1)
        self.num_items = num_train if split == "train" else num_test
        self.seed = check_int(seed, "'seed'", minimum=0)
        super().__init__(root, transform, log=log, force_reload=force_reload)

    @property
    def raw_file_names(self) -> List[str]:
        return []

    @property
    def processed_file_names(self) -> List[str]:
        return [f"synthetic_flow_{self.split}_{self.orientation}_points"
                f"{self.num_points}_n{self.num_items}_seed{self.seed}.pt"]

    def _num_trajectories(self) -> Optional[int]:
        return self.num_items

    def process(self) -> None:
        complex_seed, train_seed, test_seed = np.random.SeedSequence(
            self.seed).spawn(3)
        walk_seed, orientation_seed = (train_seed if self.split == "train"
                                       else test_seed).spawn(2)
        points, triangles = make_holey_triangulation(
            self.num_points, np.random.default_rng(complex_seed))
        complex = SimplicialComplexData.from_simplices(
            torch.from_numpy(triangles), close=True,
            pos=torch.from_numpy(points).float())
        edges = complex.simplices_1.numpy()
        adjacency = scipy.sparse.coo_array(
            (np.ones(len(edges)), (edges[:, 0], edges[:, 1])),
            shape=(len(points), len(points)))
        adjacency = (adjacency + adjacency.T).tocsr()

        rng = np.random.default_rng(walk_seed)
        num_zeros = self.num_items // 2
        labels = rng.permutation(
            np.repeat([0, 1], [num_zeros, self.num_items - num_zeros]))
        paths = [
            sample_trajectory(points, adjacency, int(label), rng)
            for label in progress_bar(labels, "Sampling trajectories",
                                      enabled=self.log)
        ]
        self.save_trajectories(self.processed_paths[0], complex, paths,
                               labels, np.random.default_rng(orientation_seed))
