"""The trajectory datasets' common part: edge flows of vertex paths, random
re-orientations and :class:`TrajectoryDataset`."""
from typing import Dict, Optional, Sequence, Tuple, Union

import copy

import numpy as np
import torch
from torch import Tensor

from torch_geometric_san.data import SimplicialComplexData
from torch_geometric_san.datasets.base import SharedComplexDataset
from torch_geometric_san.datasets.io import _check_processed_tensor
from torch_geometric_san.utils.progress import progress_bar
from torch_geometric_san.utils.validation import check_int

__all__ = [
    "path_to_flow",
    "random_orientation",
    "reorient_edges",
    "TrajectoryDataset",
]

ORIENTATIONS = ("default", "random", "random_per_trajectory")


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
    path = _int_array(path, "path", ndim=1, shape="[L]")
    edges = _int_array(edges, "edges", ndim=2, shape="[E, 2]")
    if edges.shape[1] != 2:
        raise ValueError(f"'edges' must have shape [E, 2], got {list(edges.shape)}")
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


def _int_array(value, name: str, ndim: int, shape: str) -> np.ndarray:
    # An integer array of ndim dimensions (a float path would be truncated).
    array = np.asarray(value.cpu() if isinstance(value, Tensor) else value)
    if array.size and array.dtype.kind not in "iu":
        raise TypeError(f"'{name}' must hold integer vertex ids, got dtype "
                        f"{array.dtype}")
    if array.ndim != ndim:
        raise ValueError(f"'{name}' must have shape {shape}, got "
                         f"{list(array.shape)}")
    return array.astype(np.int64)


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

    Raises:
        TypeError: If :obj:`rng` is not a :class:`numpy.random.Generator`, or
            :obj:`num_simplices` not an int.
        ValueError: If :obj:`num_simplices` is negative.
    """
    num_simplices = check_int(num_simplices, "'num_simplices'", minimum=0)
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"'rng' must be a numpy.random.Generator (e.g. "
                        f"numpy.random.default_rng(seed)), not {type(rng).__name__}")
    return rng.integers(0, 2, size=num_simplices) * 2 - 1


def reorient_edges(complex: SimplicialComplexData,
                   signs: Tensor) -> SimplicialComplexData:
    r"""Returns :obj:`complex` with the reference orientation of edge
    :math:`e` multiplied by :obj:`signs[e]`.

    The boundaries become :math:`\mathbf{B}_1 \mathbf{S}` and :math:`\mathbf{S}
    \mathbf{B}_2` (:math:`\mathbf{S} = \mathrm{diag}(s)`, higher boundaries
    unchanged) and the order-1 Laplacians (upper, lower, normalised Hodge)
    :math:`\mathbf{S} \mathbf{L} \mathbf{S}`, by flipping the signs of their
    stored values (:math:`O(\mathrm{nnz})`; the sparsity patterns, the
    spectra and the operators of the other orders do not change). Simplex
    order and vertex ids (:obj:`simplices_k`, ascending) are unchanged, and
    so are all other attributes (e.g. :obj:`pos`), except the features
    :obj:`x_k`, which are not carried over.

    Args:
        complex (SimplicialComplexData): A complex of order at least 1.
        signs (torch.Tensor): :math:`\pm 1` per edge, shape :obj:`[N_1]`.

    Returns:
        SimplicialComplexData: The re-oriented complex (a new object; the
        tensors it shares with :obj:`complex` are not modified).
    """
    if not isinstance(complex, SimplicialComplexData):
        raise TypeError(f"'complex' must be a SimplicialComplexData, not "
                        f"{type(complex).__name__}")
    if complex.order < 1:
        raise ValueError("'complex' has no edges to re-orient (order 0)")
    if not isinstance(signs, Tensor):
        raise TypeError(f"'signs' must be a tensor, not {type(signs).__name__}")
    if signs.dtype == torch.bool or signs.is_complex():
        raise TypeError(f"'signs' must be a real tensor of +1 and -1, not "
                        f"{signs.dtype}")
    num_edges = complex.num_simplices(1)
    if signs.shape != (num_edges, ) or not bool((signs.abs() == 1).all()):
        raise ValueError(f"'signs' must hold +1 or -1 for each of the "
                         f"{num_edges} edges")
    out = copy.copy(complex)
    for key in [key for key in out.keys() if key.startswith("x_")]:
        del out[key]
    # B_1 S flips columns (row 1 of the index), S B_2 rows (row 0), S L S both.
    flips = [("boundary", 1, (1, )), ("boundary", 2, (0, ))] + [
        (name, 1, (0, 1)) for name in ("up", "down", "hodge")]
    for name, k, rows in flips:
        if f"{name}_weight_{k}" not in complex:
            continue
        index, weight = complex[f"{name}_index_{k}"], complex[f"{name}_weight_{k}"]
        factor = signs.to(device=weight.device, dtype=weight.dtype)
        for row in rows:
            weight = weight * factor[index[row]]
        out[f"{name}_weight_{k}"] = weight
    return out


class TrajectoryDataset(SharedComplexDataset):
    r"""Base class of the trajectory classification datasets: each item is
    the edge flow :obj:`x_1` (shape :obj:`[N_1, 1]`) of one trajectory on the
    shared 2-complex, with its class :obj:`y` (shape :obj:`[1]`).

    :obj:`orientation` selects the reference orientation of the edges:

    * :obj:`"default"`: every edge points from its lower to its higher vertex
      id.
    * :obj:`"random_per_trajectory"`: each trajectory has its own seeded
      random orientation (each edge flipped with probability 1/2), as in the
      SAN authors' released data and Bodnar et al.'s code. The complex stays
      the default one; trajectory :math:`b` flips its flow values on the
      edges with :math:`s_{b,e} = -1`, and its operators are :math:`\mathbf{D}_b
      \mathbf{L} \mathbf{D}_b` (:math:`\mathbf{D}_b = \mathrm{diag}(s_b)`):
      :attr:`signal_orientation` :obj:`[num_items, N_1]` holds the signs, and
      :obj:`complex.operators(1).reoriented(signal_orientation[batch])`
      (:meth:`~torch_geometric_san.sparse.SimplicialOperators.reoriented`)
      gives the layers those operators for signals side by side on the shared
      pattern, with no copy of the complex per trajectory. An item taken by
      index (:obj:`dataset[i]`, e.g. through a
      :class:`~torch_geometric.loader.DataLoader`) is built on access with
      its own re-oriented operators (:func:`reorient_edges`, a sign flip of
      the stored values).
    * :obj:`"random"`: one seeded random orientation for the whole split: its
      complex carries the flipped operators (:func:`reorient_edges`) and all
      flows are flipped to match.

    Flipping edge :math:`e` negates its flow value :math:`x_1[e]`, column
    :math:`e` of :math:`B_1` and row :math:`e` of :math:`B_2`, so every
    order-1 Laplacian becomes :math:`S L S`. :attr:`edge_orientation` holds
    the signs relative to the default orientation (:math:`s_e = -1` for a
    flipped edge).

    Args:
        root (str): Root directory of the dataset.
        transform (callable, optional): Applied to each item on access.
        log (bool, optional): Print progress. (default: :obj:`True`)
        force_reload (bool, optional): Re-process. (default: :obj:`False`)
    """
    @staticmethod
    def _check_choice(name: str, value: str, choices: Tuple[str, ...]) -> str:
        if value not in choices:
            raise ValueError(f"'{name}' must be one of {list(choices)}, got "
                             f"{value!r}")
        return value

    def save_trajectories(
        self,
        path: str,
        complex: SimplicialComplexData,
        paths: Sequence[np.ndarray],
        labels: np.ndarray,
        orientation_rng: np.random.Generator,
    ) -> None:
        r"""Computes the edge flows of :obj:`paths`, applies
        :obj:`self.orientation` and saves the split to :obj:`path`."""
        edges = complex.simplices_1.numpy()
        flows = np.stack([
            path_to_flow(p, edges)
            for p in progress_bar(paths, "Edge flows", enabled=self.log)
        ])
        items = {
            "y": torch.as_tensor(labels, dtype=torch.long).view(-1, 1),
        }
        extra = {}
        if self.orientation == "random_per_trajectory":
            signs = np.stack([random_orientation(len(edges), orientation_rng)
                              for _ in range(len(flows))])
            items["edge_orientation"] = torch.from_numpy(signs)
        else:
            signs = np.ones(len(edges), dtype=np.int64)
            if self.orientation == "random":
                signs = random_orientation(len(edges), orientation_rng)
                complex = reorient_edges(complex, torch.from_numpy(signs))
            extra["edge_orientation"] = torch.from_numpy(signs)
        items["x_1"] = torch.from_numpy(flows * signs).float().unsqueeze(-1)
        self.save_shared(path, complex, items=items, extra=extra)

    def _processed_layout(self) -> Dict[str, Tuple[str, ...]]:
        orientation = ("edge_orientation", )
        per_item = self.orientation == "random_per_trajectory"
        return dict(complex=("pos", ),
                    items=("x_1", "y", *(orientation if per_item else ())),
                    extra=() if per_item else orientation)

    def _processed_complex(self) -> Optional[Tuple[int, torch.dtype]]:
        return 2, torch.float32

    def _num_trajectories(self) -> Optional[int]:
        r"""The number of trajectories :meth:`process` writes, checked on loading;
        :obj:`None` where it is not known without processing."""
        return None

    def _check_processed(self, out: Dict[str, Tensor],
                         complex: SimplicialComplexData) -> None:
        items, edges = out["items"], complex.num_simplices(1)
        count, expected = items["y"].size(0), self._num_trajectories()
        if expected is not None and count != expected:
            raise ValueError(f"it holds {count} trajectories, the dataset writes "
                             f"{expected}")
        _check_processed_tensor("pos", complex.pos, torch.float32,
                                (complex.num_nodes, 2))
        _check_processed_tensor("x_1", items["x_1"], torch.float32, (count, edges, 1))
        _check_processed_tensor("y", items["y"], torch.long, (count, 1), values=(0, 1))
        per_item = "edge_orientation" in items
        _check_processed_tensor(
            "edge_orientation", (items if per_item else out["extra"])["edge_orientation"],
            torch.long, (count, edges) if per_item else (edges, ), values=(-1, 1))

    def _edge_signs(self, out: Dict[str, Dict[str, Tensor]]) -> Union[int, np.ndarray]:
        # The shared complex in the split's orientation ("random"), or the default
        # one (the items' own orientations are applied on access).
        if "edge_orientation" in out["items"]:
            return 1
        return out["extra"]["edge_orientation"].numpy()

    def get(self, idx: int) -> SimplicialComplexData:
        data = super().get(idx)
        if "edge_orientation" not in self._items:
            return data
        # The item's own operators, D L D, from the shared complex.
        out = reorient_edges(data, data.edge_orientation)
        for key, value in self._items.items():
            out[key] = data[key]
        return out

    @property
    def x_1(self) -> Tensor:
        r"""The edge flows of all items, shape :obj:`[num_items, N_1, 1]`."""
        return self.stacked("x_1")

    @property
    def y(self) -> Tensor:
        r"""The labels of all items, shape :obj:`[num_items]`."""
        return self.stacked("y").view(-1)

    @property
    def edge_orientation(self) -> Tensor:
        r"""The orientation of each edge relative to the default one
        (:math:`+1` kept, :math:`-1` flipped): shape :obj:`[N_1]` for the
        split, or :obj:`[num_items, N_1]`, one row per trajectory, with
        :obj:`orientation="random_per_trajectory"`."""
        if "edge_orientation" in self._items:
            return self.stacked("edge_orientation")
        return self._extra["edge_orientation"]

    @property
    def signal_orientation(self) -> Optional[Tensor]:
        r"""The orientation of each trajectory relative to :attr:`complex`,
        :obj:`[num_items, N_1]`, for
        :meth:`SimplicialOperators.reoriented
        <torch_geometric_san.sparse.SimplicialOperators.reoriented>`; :obj:`None`
        where all items share the complex's orientation (:obj:`"default"`,
        :obj:`"random"`)."""
        if "edge_orientation" in self._items:
            return self.stacked("edge_orientation")
        return None
