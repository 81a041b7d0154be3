"""The ocean drifters dataset (Madagascar) of Schaub et al. (2020), in the
protocol of Bodnar et al. (2021) followed by the SAN paper."""
import os
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np
import torch

from torch_geometric_san.data import SimplicialComplexData
from torch_geometric_san.datasets.io import (
    _regular_file,
    check_sha256,
    fetch_raw_file,
)
from torch_geometric_san.datasets.trajectory import (
    ORIENTATIONS,
    TrajectoryDataset,
    _int_array,
)
from torch_geometric_san.utils.validation import check_int, check_real


def _import_h5py():
    try:
        import h5py
    except ImportError as e:
        raise ImportError(
            "Reading the ocean drifters raw file needs 'h5py'; install the "
            "'datasets' extra from the root of a clone of the repository "
            "with `pip install \".[datasets]\"` (or `pip install h5py`)"
        ) from e
    return h5py


def _values(f, key, path: str, limit: int) -> np.ndarray:
    # The values of the dataset f[key] (a name or an object reference), read only
    # where they fit in the file of limit bytes: h5py fills in a chunked dataset
    # declared larger, in memory.
    dataset = f[key]
    if not isinstance(dataset, _import_h5py().Dataset):
        raise ValueError(f"'{dataset.name}' in '{path}' is not a dataset")
    if (dataset.size or 0) * dataset.dtype.itemsize > limit:
        raise ValueError(f"'{dataset.name}' in '{path}' declares {dataset.size} values "
                         f"of {dataset.dtype}, more than the file's {limit} bytes hold")
    return dataset[()]


def _vertex_ids(values, what: str, path: str, num_vertices: int) -> np.ndarray:
    # The 1-based integer vertex ids values of the raw file, 0-based.
    values = np.asarray(values)
    if values.dtype.kind not in "iu":
        raise ValueError(f"{what} in '{path}' must hold integer vertex ids (found "
                         f"{values.dtype})")
    if values.size and (values.min() < 1 or values.max() > num_vertices):
        raise ValueError(f"{what} in '{path}' must hold 1-based vertex ids, 1 to "
                         f"{num_vertices} (the rows of 'HexcentersXY'), found "
                         f"{values.min()} to {values.max()}")
    return values.astype(np.int64) - 1


def _simplices(values, key: str, width: int, path: str,
               num_vertices: int) -> np.ndarray:
    # The simplices of elist or tlist, one column each, as 0-based rows.
    values = np.asarray(values)
    if values.ndim != 2 or values.shape[0] != width:
        raise ValueError(f"'{key}' in '{path}' must have shape [{width}, *], one "
                         f"column per simplex (found {list(values.shape)})")
    return _vertex_ids(values, f"'{key}'", path, num_vertices).T


def _positions(xy: np.ndarray, path: str) -> np.ndarray:
    # HexcentersXY: one (x, y) record per vertex.
    names = xy.dtype.names or ()
    if xy.ndim != 1 or len(names) != 2 or \
            any(xy.dtype[name].kind not in "iuf" for name in names):
        raise ValueError(f"'HexcentersXY' in '{path}' must be a 1-D compound dataset "
                         f"of (x, y) numbers (found {xy.dtype} of shape "
                         f"{list(xy.shape)})")
    pos = np.stack([xy[name] for name in names], axis=1).astype(np.float64)
    return _finite_positions(pos, f"'HexcentersXY' in '{path}'")


def _finite_positions(pos, what: str) -> np.ndarray:
    # Vertex positions [N, 2], finite (a NaN gave a label of its own).
    pos = np.asarray(pos)
    if pos.ndim != 2 or pos.shape[1] != 2 or pos.dtype.kind not in "iuf":
        raise ValueError(f"{what} must be vertex positions of shape [N, 2] (found "
                         f"{pos.dtype} of shape {list(pos.shape)})")
    if not np.isfinite(pos).all():
        raise ValueError(f"{what} holds NaN or infinite positions")
    return pos


def _vertex_path(path: Sequence[int], num_vertices: int) -> np.ndarray:
    # A path of the vertex ids 0..num_vertices - 1 (a negative id indexed the
    # positions from the end, a larger one failed in NumPy).
    path = _int_array(path, "path", ndim=1, shape="[L]")
    outside = path[(path < 0) | (path >= num_vertices)]
    if len(outside):
        raise ValueError(f"A path holds the vertex id {outside[0]}, out of range for "
                         f"{num_vertices} vertices")
    return path


def _read_path(f, ref, path: str, limit: int) -> np.ndarray:
    # JLD2 stores a `Vector{Any}` of integers as an array of references to
    # scalar datasets; a typed vector is a plain integer array.
    h5py = _import_h5py()
    values = np.atleast_1d(_values(f, ref, path, limit))
    if values.dtype == h5py.ref_dtype or values.dtype == object:
        values = np.array([_values(f, r, path, limit) for r in values])
    return values.reshape(-1)


def read_drifter_raw(path: str) -> Dict[str, object]:
    r"""Reads the parts of ``dataBuoys.jld2`` the dataset uses.

    The file is HDF5 (JLD2 with a 512-byte user block) and is read with
    :obj:`h5py`. Vertex ids are converted from 1-based to 0-based.

    Args:
        path (str): The ``dataBuoys.jld2`` file.

    Returns:
        dict: :obj:`edges` (:obj:`[E, 2]`, from ``elist``), :obj:`triangles`
        (:obj:`[T, 3]`, from ``tlist``), :obj:`pos` (:obj:`[N, 2]`, from
        ``HexcentersXY``) and :obj:`paths` (list of vertex paths, from the
        object references in ``TrajectoriesNodes``).

    Raises:
        ValueError: If the file is not a regular file, lacks a dataset, or holds
            one larger than the file, vertex ids that are not integers from 1 to
            the number of positions, or positions that are not a compound dataset
            of finite (x, y) numbers; the message names the file.
    """
    h5py = _import_h5py()
    resolved = _regular_file(path)
    limit = os.path.getsize(resolved)
    with h5py.File(resolved, "r") as f:
        missing = [key for key in ("elist", "tlist", "HexcentersXY",
                                   "TrajectoriesNodes") if key not in f]
        if missing:
            raise ValueError(f"'{path}' lacks the datasets {missing}")
        pos = _positions(_values(f, "HexcentersXY", path, limit), path)
        edges = _simplices(_values(f, "elist", path, limit), "elist", 2, path,
                           len(pos))
        triangles = _simplices(_values(f, "tlist", path, limit), "tlist", 3, path,
                               len(pos))
        paths = [_vertex_ids(_read_path(f, ref, path, limit), f"Trajectory {i}",
                             path, len(pos))
                 for i, ref in enumerate(_values(f, "TrajectoriesNodes", path, limit))]
    return {"edges": edges, "triangles": triangles, "pos": pos, "paths": paths}


def strip_backtracks(path: Sequence[int]) -> List[int]:
    r"""Removes immediate back-and-forth steps from a path, repeatedly:
    ``a b a -> a`` and ``a b c b a -> a``.

    Args:
        path (Sequence[int]): The vertex path.

    Returns:
        List[int]: The path without back-and-forth steps.

    Example:
        >>> strip_backtracks([1, 2, 3, 4, 3, 4, 5])
        [1, 2, 3, 4, 5]
    """
    out: List[int] = []
    for vertex in path:
        if len(out) >= 2 and vertex == out[-2]:
            out.pop()
        else:
            out.append(int(vertex))
    return out


def clockwise_label(path: Sequence[int], pos: np.ndarray) -> int:
    r"""Returns 0 if the triangle (island centre, first vertex, last vertex)
    is oriented clockwise and 1 if counter-clockwise, where the island
    centre is :math:`(\bar x - 0.03, \bar y)` over all vertex positions.

    Args:
        path (Sequence[int]): The vertex path (its first and last vertex are
            used).
        pos (numpy.ndarray): Vertex positions, shape :obj:`[N, 2]`.

    Returns:
        int: The label, 0 (clockwise) or 1 (counter-clockwise).

    Raises:
        TypeError: If the path holds ids that are not integers.
        ValueError: If the path is empty or holds ids out of range, the positions
            are not finite, or the three points are collinear.
    """
    pos = _finite_positions(pos, "'pos'")
    path = _vertex_path(path, len(pos))
    if not len(path):
        raise ValueError("An empty path has no first and last vertex")
    centre = np.array([pos[:, 0].mean() - 0.03, pos[:, 1].mean()])
    a = pos[path[0]] - centre
    b = pos[path[-1]] - pos[path[0]]
    cross = a[0] * b[1] - a[1] * b[0]
    if cross == 0:
        raise ValueError(f"The island centre and the first and last vertices "
                         f"({path[0]}, {path[-1]}) of a path are collinear")
    return 0 if cross < 0 else 1


def drifter_protocol(
    paths: Sequence[np.ndarray],
    pos: np.ndarray,
    min_length: int = 5,
) -> Tuple[List[np.ndarray], np.ndarray]:
    r"""Applies the published preprocessing to the raw drifter paths: strip
    back-and-forth steps (:func:`strip_backtracks`), keep the paths with at
    least :obj:`min_length` vertices, drop the final vertex of a path that
    returns to its first vertex, and label each path with
    :func:`clockwise_label`.

    Args:
        paths (Sequence[numpy.ndarray]): The raw vertex paths (0-based).
        pos (numpy.ndarray): Vertex positions, shape :obj:`[N, 2]`.
        min_length (int, optional): The shortest path kept, in vertices.
            (default: :obj:`5`)

    Returns:
        (list, numpy.ndarray): The kept paths and their labels.

    Raises:
        TypeError: If a path holds ids that are not integers.
        ValueError: If a path holds ids out of range (also one it drops) or the
            positions are not finite, or as :func:`clockwise_label`.
    """
    pos = _finite_positions(pos, "'pos'")
    kept, labels = [], []
    for path in paths:
        path = strip_backtracks(_vertex_path(path, len(pos)))
        if len(path) < min_length:
            continue
        if path[-1] == path[0]:
            path = path[:-1]
        kept.append(np.asarray(path, dtype=np.int64))
        labels.append(clockwise_label(path, pos))
    return kept, np.asarray(labels, dtype=np.int64)


def train_test_mask(num_items: int, seed: int,
                    train_ratio: float = 0.8) -> np.ndarray:
    r"""Returns a boolean training mask with :math:`\mathrm{round}(r n)`
    entries set, shuffled by :class:`numpy.random.RandomState` with
    :obj:`seed`. With :obj:`seed=1` this is the split of the published code
    (Bodnar et al. 2021).

    Args:
        num_items (int): :math:`n`, the number of items.
        seed (int): The seed of the shuffle.
        train_ratio (float, optional): :math:`r`, the fraction of training items,
            in :math:`[0, 1]`. (default: :obj:`0.8`)

    Returns:
        numpy.ndarray: Boolean, shape :obj:`[n]`, :obj:`True` for training items.

    Raises:
        TypeError: If an argument is not a number of its kind.
        ValueError: If :obj:`num_items` is negative, :obj:`seed` outside
            :math:`[0, 2^{32} - 1]` (NumPy's) or :obj:`train_ratio` outside
            :math:`[0, 1]`.
    """
    num_items = check_int(num_items, "'num_items'", minimum=0)
    seed = check_int(seed, "'seed'", minimum=0, maximum=2**32 - 1)
    ratio = check_real(train_ratio, "'train_ratio'")  # (a Python float)
    if not 0.0 <= ratio <= 1.0:
        raise ValueError(f"'train_ratio' must lie in [0, 1] (got {train_ratio})")
    num_train = round(num_items * ratio)
    mask = np.array([1] * num_train + [0] * (num_items - num_train))
    np.random.RandomState(seed).shuffle(mask)
    return mask.astype(bool)


class OceanDriftersDataset(TrajectoryDataset):
    r"""Ocean drifter trajectories around Madagascar (Schaub et al.,
    "Random walks on simplicial complexes and the normalized Hodge
    1-Laplacian", SIAM Review 2020), in the protocol of Bodnar et al. (ICML
    2021) followed by the SAN paper: 200 trajectories (160 train / 40 test)
    on a complex of 133 vertices (hexagon centres), 320 edges and 186
    triangles, labelled clockwise (0) or counter-clockwise (1) around the
    island.

    The raw file ``dataBuoys.jld2`` is downloaded from :attr:`url` (or taken
    from :obj:`root/raw` if present) and checked against :attr:`sha256`.
    Processing (:func:`drifter_protocol`): strip back-and-forth steps, keep
    paths with at least 5 vertices, drop the final vertex of a path that
    returns to its start, label by :func:`clockwise_label`, split 80/20 with
    :func:`train_test_mask` (:obj:`seed=1`, the default, gives the split of
    the published code). Each item's input is its edge flow :obj:`x_1`
    (:func:`~torch_geometric_san.datasets.trajectory.path_to_flow`), its
    target :obj:`y`. Reading the raw file needs :obj:`h5py` (the
    ``datasets`` extra). See
    :class:`~torch_geometric_san.datasets.trajectory.TrajectoryDataset` for
    :obj:`orientation` (with :obj:`"random_per_trajectory"` or
    :obj:`"random"`, the signs are drawn from :obj:`seed` and the split).

    Test item 17 (path 72 of the 200 kept) is the only one whose label (the
    published rule above) disagrees with the sign of its winding around the
    island: it turns about 0.58 of a circle clockwise but is labelled
    counter-clockwise, so 97.5 % is the highest test accuracy of a
    classifier of the rotation direction.

    Source and license: ``dataBuoys.jld2`` of the SCoNe repository
    (https://github.com/nglaze00/SCoNe_GCN), MIT license, Copyright (c) 2021
    Nicholas Glaze: drifter tracks near Madagascar from 2011 to 2018 on the
    hexagonal discretisation of Schaub et al.

    Args:
        root (str): Root directory; the raw file lives in :obj:`root/raw`.
        split (str, optional): :obj:`"train"` or :obj:`"test"`.
        orientation (str, optional): :obj:`"default"`,
            :obj:`"random_per_trajectory"` or :obj:`"random"` (one for the
            split). (default: :obj:`"default"`)
        seed (int, optional): Seed of the train/test split and of the random
            orientation. (default: :obj:`1`)
        transform (callable, optional): Applied to each item on access.
        log (bool, optional): Print progress. (default: :obj:`True`)
        force_reload (bool, optional): Re-process. (default: :obj:`False`)
    """
    url = ("https://github.com/nglaze00/SCoNe_GCN/raw/master/"
           "ocean_drifters_data/dataBuoys.jld2")
    sha256 = "4b312f54fb451d989629b5330cd4633c61f23dc90ea7e1bff6e6fb00a3ed5caa"
    # What that file gives, which a processed file is checked against: the simplices
    # of orders 0, 1, 2 and the trajectories of each split.
    simplex_counts = (133, 320, 186)
    split_sizes = {"train": 160, "test": 40}

    def __init__(
        self,
        root: str,
        split: str = "train",
        orientation: str = "default",
        seed: int = 1,
        transform: Optional[Callable] = None,
        log: bool = True,
        force_reload: bool = False,
    ) -> None:
        self.split = self._check_choice("split", split, ("train", "test"))
        self.orientation = self._check_choice("orientation", orientation,
                                              ORIENTATIONS)
        self.seed = check_int(seed, "'seed'", minimum=0, maximum=2**32 - 1)
        super().__init__(root, transform, log=log, force_reload=force_reload)

    @property
    def raw_file_names(self) -> List[str]:
        return ["dataBuoys.jld2"]

    @property
    def processed_file_names(self) -> List[str]:
        return [f"ocean_drifters_{self.split}_{self.orientation}_"
                f"seed{self.seed}.pt"]

    def _num_trajectories(self) -> Optional[int]:
        return self.split_sizes[self.split]

    def _check_processed(self, out: Dict[str, torch.Tensor],
                         complex: SimplicialComplexData) -> None:
        counts = [complex.num_simplices(k) for k in range(3)]
        if counts != list(self.simplex_counts):
            raise ValueError(f"its complex has {counts} simplices of orders 0 to 2, "
                             f"the raw file's {list(self.simplex_counts)}")
        super()._check_processed(out, complex)

    def download(self) -> None:
        fetch_raw_file(self.url, self.raw_dir, self.raw_file_names[0],
                       self.sha256, log=self.log)

    def process(self) -> None:
        check_sha256(self.raw_paths[0], self.sha256,
                     hint=f"(upstream: {self.url})")
        raw = read_drifter_raw(self.raw_paths[0])
        # Edges and triangles keep the raw file's order.
        complex = SimplicialComplexData.from_simplices(
            [torch.from_numpy(raw["edges"]),
             torch.from_numpy(raw["triangles"])],
            num_nodes=len(raw["pos"]),
            pos=torch.from_numpy(raw["pos"]).float())
        paths, labels = drifter_protocol(raw["paths"], raw["pos"])
        train = train_test_mask(len(paths), self.seed)
        keep = train if self.split == "train" else ~train
        orientation_seed = np.random.SeedSequence(self.seed).spawn(2)[
            0 if self.split == "train" else 1]
        self.save_trajectories(
            self.processed_paths[0], complex,
            [p for p, k in zip(paths, keep) if k], labels[keep],
            np.random.default_rng(orientation_seed))
