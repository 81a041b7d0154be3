"""An :class:`~torch_geometric.data.InMemoryDataset` whose items share one
simplicial complex."""
import copy
import os
import re
from typing import Any, Callable, Dict, Optional, Tuple, Union

import numpy as np
import scipy.sparse as sp
import torch
from torch import Tensor
from torch_geometric.data import InMemoryDataset
from torch_geometric.data.dataset import IndexType, files_exist

from torch_geometric_san.data import SimplicialComplexData, algebra
from torch_geometric_san.data.simplicial_complex_data import _OPERATOR_INDEX
from torch_geometric_san.datasets.io import (_check_processed_tensor,
                                              atomic_torch_save, damaged_file,
                                              load_processed)
from torch_geometric_san.utils.validation import check_bool
from torch_geometric_san.utils.warn import warn_user

#: The stored values of a complex's operators: their weights and spectra.
_OPERATOR_VALUES = re.compile(r'(?:(boundary|down|up|hodge)_weight|spectrum)_\d+')


def _computed_keys(order: int) -> Tuple[str, ...]:
    # The attributes the constructors store for a complex of this order, with its
    # Laplacians (the vertices have no simplices, boundary or lower Laplacian).
    keys = ['num_nodes']
    for k in range(order + 1):
        operators = ('boundary', 'down', 'up', 'hodge') if k else ('up', 'hodge')
        keys += [f'simplices_{k}'] if k else []
        keys += [f'{name}_{part}_{k}' for name in operators
                 for part in ('index', 'weight')]
        keys.append(f'spectrum_{k}')
    return tuple(keys)


def _check_operators(complex: SimplicialComplexData, dtype: Optional[torch.dtype],
                     edge_signs: Union[int, np.ndarray, None] = None) -> None:
    # The operator weights and spectra of a valid complex (one weight per entry of
    # its index, validate() checks that): dense, of the floating dtype of the complex
    # (of spectrum_0 where the dtype is not given), finite, the boundaries' +-1 and
    # the largest eigenvalues >= 0; the boundaries' signs where edge_signs is given
    # (_check_laplacians).
    dtype = dtype or complex.spectrum_0.dtype
    if not dtype.is_floating_point:
        raise ValueError(f"'spectrum_0' must be a floating tensor (got {dtype})")
    for key in complex.keys():
        match = _OPERATOR_VALUES.fullmatch(key)
        if match is None:
            continue
        spectrum, boundary = match.group(1) is None, match.group(1) == 'boundary'
        _check_processed_tensor(key, complex[key], dtype,
                                (1, 2) if spectrum else (None, ),
                                values=(-1, 1) if boundary else None)
        if spectrum and bool((complex[key] < 0).any()):
            raise ValueError(f"'{key}' holds a negative eigenvalue")
    # (as the constructors write them: a uint8 simplex wrapped around in a batch, a
    # float num_nodes failed inside torch)
    num_nodes = complex._store.get('num_nodes')
    if type(num_nodes) is not int:
        raise ValueError(f"'num_nodes' must be an int (got {num_nodes!r})")
    for key in complex.keys():
        if (key.startswith('simplices_') or _OPERATOR_INDEX.fullmatch(key)) and \
                complex[key].dtype != torch.long:
            raise ValueError(f"'{key}' must be torch.int64 (got {complex[key].dtype})")
    _check_laplacians(complex, torch.finfo(dtype).eps, edge_signs)


#: How far a stored eigenvalue may lie outside the bounds of its Laplacian's entries
#: (relative, well above the tolerance EIGEN_TOL of the constructors' eigensolvers),
#: and a normalised Laplacian's weights from those recomputed (absolute: they are at
#: most 1), at least; both are widened to a few roundings of a half-precision dtype.
_EIGENVALUE_SLACK, _HODGE_TOL = 1e-4, 1e-5


def _check_laplacians(complex: SimplicialComplexData, eps: float,
                      edge_signs: Union[int, np.ndarray, None] = None) -> None:
    # The boundaries and Laplacians of a complex with finite operator values, as the
    # constructors compute them: B_k with the faces of simplices_k as its entries
    # (and, where edge_signs is given, with the constructors' signs, each simplex
    # oriented by its ascending vertices, except the edges, flipped by edge_signs:
    # B_1 S and S B_2 with S = diag(edge_signs)), a chain complex (B_1's columns sum
    # to zero, B_k B_{k+1} = 0), L_k^(d) = B_k^T B_k,
    # L_k^(u) = B_{k+1} B_{k+1}^T, the normalised (L_k^(d) + L_k^(u)) / lambda with
    # lambda the larger of spectrum_k, and spectrum_k within the bounds of the
    # Laplacians' entries on their largest eigenvalues (at least the largest diagonal
    # entry, at most the largest absolute row sum). A product is formed only where
    # the stored Laplacian has as many entries as it will (two simplices share at
    # most one face and one coface, so none cancel): the check is linear in the size
    # of the file (a Laplacian cut short made it quadratic).
    order = complex.order
    sizes = [complex.num_simplices(k) for k in range(order + 1)] + [0]
    slack, hodge_tol = max(_EIGENVALUE_SLACK, 4 * eps), max(_HODGE_TOL, 4 * eps)
    exact = 0.0 if eps < 2 ** -20 else 4 * eps  # (integers, rounded in half precision)

    def stored(name: str, k: int, columns: int) -> sp.csr_array:
        # Rows: row 1 of the index (a Laplacian's target, a boundary's simplex), each
        # entry once (SciPy sums duplicates: an entry split in two passed).
        index = complex[f'{name}_index_{k}'].numpy()
        key = index[1] * max(columns, 1) + index[0]
        if key.size and not bool((np.diff(key) > 0).all()):
            raise ValueError(f"'{name}_index_{k}' holds an entry twice, or out of order")
        weight = complex[f'{name}_weight_{k}'].double().numpy()
        return sp.csr_array((weight, (index[1], index[0])), shape=(sizes[k], columns))

    # B_k^T for k = 0..K+1 (none below the vertices and above the order)
    transposed = [sp.csr_array((sizes[0], 0))] + [
        stored('boundary', k, sizes[k - 1]) for k in range(1, order + 1)
    ] + [sp.csr_array((0, sizes[order]))]
    faces, expected = np.arange(sizes[0])[:, None], [None]
    for k in range(1, order + 1):
        simplices = complex[f'simplices_{k}'].numpy()
        expected.append(algebra.boundary_matrix(simplices, faces).T)
        if _differs(abs(transposed[k]), abs(expected[k])):
            raise ValueError(f"'boundary_index_{k}' does not hold the faces of "
                             f"'simplices_{k}'")
        faces = simplices
    if order and bool(transposed[1].sum(axis=1).any()):
        raise ValueError("'boundary_weight_1' does not orient every edge from one "
                         "vertex to the other")
    for k in range(1, order):
        if (transposed[k + 1] @ transposed[k]).count_nonzero():
            raise ValueError(f"'boundary_weight_{k}' and 'boundary_weight_{k + 1}' do "
                             f"not make a chain complex (B_{k} B_{k + 1} is not zero)")
    if edge_signs is not None and order:  # B_1 S and S B_2, transposed
        flip = sp.diags_array(np.broadcast_to(np.asarray(edge_signs, dtype=np.float64),
                                              (sizes[1], )))
        expected[1] = flip @ expected[1]
        if order > 1:
            expected[2] = expected[2] @ flip
        for k in range(1, order + 1):
            if _differs(transposed[k], expected[k]):
                raise ValueError(f"'boundary_weight_{k}' orients a {k}-simplex "
                                 f"otherwise than the dataset writes it")
    for k in range(order + 1):
        if f'hodge_index_{k}' not in complex:  # (a complex without its Laplacians)
            continue
        # entries: each simplex with a face (coface) once, and each ordered pair of
        # simplices sharing one
        faces = np.bincount(transposed[k].indices, minlength=transposed[k].shape[1])
        cofaces = np.diff(transposed[k + 1].tocsc().indptr)
        entries = {'down': int((np.diff(transposed[k].indptr) > 0).sum()
                               + (faces * (faces - 1)).sum()),
                   'up': int((cofaces > 0).sum() + (k + 2) * (k + 1) * sizes[k + 1])}
        for name, count in entries.items():
            stored_count = complex[f'{name}_index_{k}'].size(1) \
                if f'{name}_index_{k}' in complex else 0
            if stored_count != count:
                raise ValueError(f"'{name}_index_{k}' has {stored_count} entries, but "
                                 f"the {name} Laplacian of the boundaries has {count}")
        laplacians = {'down': transposed[k] @ transposed[k].T,
                      'up': transposed[k + 1].T @ transposed[k + 1]}
        spectrum = complex[f'spectrum_{k}'][0].double().tolist()
        for (name, laplacian), eigenvalue in zip(laplacians.items(), spectrum):
            if f'{name}_index_{k}' in complex and \
                    _differs(stored(name, k, sizes[k]), laplacian, exact):
                raise ValueError(f"'{name}_weight_{k}' is not the {name} Laplacian of "
                                 f"the boundaries")
            low = laplacian.diagonal().max(initial=0.0)
            high = abs(laplacian).sum(axis=1).max(initial=0.0)
            if not low * (1 - slack) <= eigenvalue <= high * (1 + slack):
                raise ValueError(f"'spectrum_{k}' gives {eigenvalue:g} as the largest "
                                 f"eigenvalue of the {name} Laplacian, which its "
                                 f"entries bound to [{low:g}, {high:g}]")
        scale = max(spectrum)
        hodge = (laplacians['down'] + laplacians['up']) / (scale if scale > 0 else 1.0)
        if _differs(stored('hodge', k, sizes[k]), hodge, hodge_tol):
            raise ValueError(f"'hodge_weight_{k}' is not the normalised Hodge Laplacian "
                             f"of the boundaries and 'spectrum_{k}'")


def _differs(a: sp.sparray, b: sp.sparray, tol: float = 0.0) -> bool:
    # Whether two sparse matrices of one shape differ by more than tol (relative to
    # the largest entry, at least 1) in an entry.
    difference = (a - b).data
    scale = max(1.0, float(abs(b).max())) if b.nnz else 1.0
    return bool(difference.size) and float(np.abs(difference).max()) > tol * scale


class SharedComplexDataset(InMemoryDataset):
    r"""Base class of datasets whose items are signals on one shared
    :class:`~torch_geometric_san.data.SimplicialComplexData`.

    The processed file holds the complex once plus the per-item attributes
    stacked along a leading item dimension (e.g. :obj:`x_1` of shape
    :obj:`[num_items, N_1, 1]`). Indexing returns a complete data object: a
    shallow copy of the complex (its tensors are shared, not copied) with the
    item's attributes set, so items batch with
    :class:`torch_geometric.loader.DataLoader` like any other data objects.
    Alternatively, :attr:`complex` and the stacked attributes
    (:meth:`stacked`, e.g. :obj:`dataset.stacked('x_1')`; the trajectory
    datasets also name theirs :obj:`dataset.x_1` and :obj:`dataset.y`) feed all
    items at once as a :obj:`[B, N_k, F]` signal on one complex.

    Subclasses implement :meth:`process` and save with :meth:`save_shared`.
    :obj:`pre_transform` and :obj:`pre_filter` are not supported: they would
    act on items one by one and break the sharing.

    No file the dataset reads can run code: the processed file is read with
    :obj:`weights_only=True` (:func:`~torch_geometric_san.datasets.io.load_processed`),
    and PyG's ``processed/pre_transform.pt`` and ``pre_filter.pt``, which PyG
    unpickles with :obj:`weights_only=False`, are neither read nor written. A
    damaged processed file (not a regular file, empty, truncated, of another
    layout, without what :meth:`process` writes or with keys it does not write,
    with a complex or items that are not valid, with tensors of other layouts,
    dtypes or shapes than it writes, or with values it cannot write: NaN or
    infinite, operators that are not those of the complex's simplices or that
    orient a simplex otherwise than :meth:`process` does, another
    number of items where the dataset knows it) is named in a warning and
    processed again. (The checks of the tensors against what :meth:`process`
    writes, their dtypes, shapes and finite values, and of the orientation are
    the dataset's own, :meth:`_check_processed` and :meth:`_processed_complex`:
    the package's datasets have them; a subclass of this class that does not
    define them gets the checks of the file's structure and of the complex's
    validity only.)

    Args:
        root (str or os.PathLike): Root directory of the dataset.
        transform (callable, optional): Applied to each item on access.
        log (bool, optional): Print progress. (default: :obj:`True`)
        force_reload (bool, optional): Re-process. (default: :obj:`False`)
    """
    def __init__(
        self,
        root: Optional[Union[str, os.PathLike]] = None,
        transform: Optional[Callable] = None,
        log: bool = True,
        force_reload: bool = False,
    ) -> None:
        if not isinstance(root, (str, os.PathLike)):
            raise TypeError(f"'root' must be a directory path (str or os.PathLike), "
                            f"not {type(root).__name__}")
        if transform is not None and not callable(transform):
            raise TypeError(f"'transform' must be callable or None, not "
                            f"{type(transform).__name__}")
        super().__init__(os.fspath(root), transform, log=check_bool(log, "'log'"),
                         force_reload=check_bool(force_reload, "'force_reload'"))
        try:
            out, self._complex = self._load_processed()
        except ValueError as error:
            # A damaged or foreign cache: processed again, once.
            warn_user(f"{error}; processing the dataset again")
            self._process_files()
            out, self._complex = self._load_processed()
        self._items: Dict[str, Tensor] = out["items"]
        self._extra: Dict[str, Any] = out["extra"]

    def _processed_layout(self) -> Dict[str, Tuple[str, ...]]:
        r"""The keys :meth:`process` writes into each part of the processed file
        (:obj:`"complex"`, besides the attributes the constructors compute,
        :obj:`"items"`, :obj:`"extra"`), checked on loading: a part named here holds
        these keys and no others (the complex where :meth:`_processed_complex` is
        known)."""
        return {}

    def _processed_complex(self) -> Optional[Tuple[int, torch.dtype]]:
        r"""The order and the dtype of the operators of the complex :meth:`process`
        builds (with its Laplacians), or :obj:`None` where they are not known: the
        complex of the processed file is checked to hold exactly the attributes the
        constructors compute for that order, in that dtype."""
        return None

    def _check_processed(self, out: Dict[str, Any],
                         complex: SimplicialComplexData) -> None:
        r"""Checks the tensors of the processed file :obj:`out` (its valid
        :obj:`complex` built) against what :meth:`process` writes, raising a
        :class:`ValueError` that names the first that differs."""

    def _edge_signs(self, out: Dict[str, Any]) -> Union[int, np.ndarray]:
        r"""The orientation of the edges of the processed complex :obj:`out`
        relative to the constructors' (each simplex oriented by its ascending
        vertices), :math:`\pm 1` per edge or :obj:`1` for all, against which the
        signs of its boundaries are checked on loading where
        :meth:`_processed_complex` is known (every other simplex as the
        constructors orient it)."""
        return 1

    def _load_processed(self) -> Tuple[Dict[str, Any], SimplicialComplexData]:
        # The processed file, checked: its parts hold what process() writes, and its
        # complex is a valid one as the constructors build it (spectrum_0), with the
        # operator values they store.
        path = self.processed_paths[0]
        layout, built = self._processed_layout(), self._processed_complex()
        computed = _computed_keys(built[0]) if built else ('spectrum_0', )
        keys = dict(layout, complex=(*layout.get('complex', ()), *computed))
        out = load_processed(path, **keys)
        for part in keys if built else sorted(layout.keys() - {'complex'}):
            unexpected = sorted(out[part].keys() - set(keys[part]))
            if unexpected:
                raise damaged_file(path, f"its {part} hold {unexpected}, which the "
                                   f"dataset does not write")
        try:
            complex = SimplicialComplexData.from_dict(out["complex"])
            complex.validate()
        except (ValueError, TypeError, KeyError, AttributeError) as error:
            raise damaged_file(path, f"its complex: {error}") from None
        items = out["items"]
        if items and next(iter(items.values())).size(0):
            # stacked, so the first item has the shapes of them all
            item = copy.copy(complex)
            for key, value in items.items():
                item[key] = value[0]
            try:
                item.validate()
            except (ValueError, TypeError) as error:
                raise damaged_file(path, f"its items: {error}") from None
        try:
            # (the dataset's own checks first: they bound num_nodes, e.g. by pos, where
            # the operators' are of its size)
            self._check_processed(out, complex)
            _check_operators(complex, *((built[1], self._edge_signs(out)) if built
                                        else (None, )))
        except ValueError as error:
            raise damaged_file(path, str(error)) from None
        return out, complex

    def _process(self) -> None:
        # Replaces PyG's Dataset._process, which unpickles processed/pre_transform.pt
        # and pre_filter.pt with weights_only=False (a planted file there would run
        # code). These datasets take no pre_transform or pre_filter, so they neither
        # read nor write those files.
        if self.force_reload or not files_exist(self.processed_paths):
            self._process_files()

    def _process_files(self) -> None:
        # The folders made here (processed/, and the root where it was missing) are
        # removed again where process() refuses its arguments and leaves them empty.
        made, path = [], os.path.abspath(self.processed_dir)
        while not os.path.exists(path):
            made.append(path)
            path = os.path.dirname(path)
        os.makedirs(self.processed_dir, exist_ok=True)
        try:
            self.process()
        except BaseException:
            for folder in made:  # (innermost first)
                if os.listdir(folder):
                    break
                os.rmdir(folder)
            raise

    @staticmethod
    def save_shared(
        path: str,
        complex: SimplicialComplexData,
        items: Dict[str, Tensor],
        extra: Optional[Dict[str, Any]] = None,
    ) -> None:
        r"""Atomically saves the shared :obj:`complex`, the per-item tensors
        :obj:`items` (all with the same leading dimension) and
        :obj:`extra` (tensors, numbers, strings) to :obj:`path`."""
        sizes = {key: value.size(0) for key, value in items.items()}
        if len(set(sizes.values())) > 1:
            raise ValueError(f"Per-item tensors differ in their number of "
                             f"items: {sizes}")
        atomic_torch_save(
            {
                "complex": complex.to_dict(),
                "items": items,
                "extra": extra or {}
            }, path)

    def len(self) -> int:
        return next(iter(self._items.values())).size(0)

    def get(self, idx: int) -> SimplicialComplexData:
        data = copy.copy(self._complex)
        for key, value in self._items.items():
            data[key] = value[idx]
        return data

    @property
    def complex(self) -> SimplicialComplexData:
        r"""The complex shared by all items, without per-item attributes (a
        shallow copy: its tensors are the dataset's, do not modify them in
        place)."""
        return copy.copy(self._complex)

    def stacked(self, key: str) -> Tensor:
        r"""The per-item attribute :obj:`key` of all items of this dataset
        (or of the subset it references), stacked along dimension 0."""
        if key not in self._items:
            raise KeyError(f"'{key}' is not a per-item attribute of this dataset; "
                           f"it has {sorted(self._items)}")
        value = self._items[key]
        if self._indices is None:
            return value
        return value[torch.as_tensor(self.indices(), dtype=torch.long)]

    @property
    def num_classes(self) -> int:
        r"""Inferred from :obj:`y` by PyG's rule (number of classes for
        integer labels); as for PyG's datasets, from the labels of the whole
        dataset, also on a subset of it (unless a :obj:`transform` is set, when
        the items of the subset, transformed, are read)."""
        if self.transform is not None:
            return super().num_classes
        y = (self._items["y"].view(-1) if "y" in self._items else
             self._complex.get("y"))
        return self._infer_num_classes(y)

    def copy(self, idx: Optional[IndexType] = None) -> "SharedComplexDataset":
        r"""A deep copy of the dataset, or of its items :obj:`idx` (anything
        :meth:`index_select` takes), as
        :meth:`torch_geometric.data.InMemoryDataset.copy`: the complex and the
        selected items are copied, so changing the copy leaves this dataset alone.
        """
        selected = self if idx is None else self.index_select(idx)
        indices = torch.as_tensor(selected.indices(), dtype=torch.long)
        dataset = copy.copy(self)
        dataset._indices = None
        dataset._complex = self._complex.clone()
        dataset._items = {key: value.index_select(0, indices.to(value.device))
                          for key, value in self._items.items()}
        dataset._extra = copy.deepcopy(self._extra)
        return dataset

    def to(self, device: Union[int, str, torch.device]) -> "SharedComplexDataset":
        r"""Moves the shared complex and the per-item tensors to
        :obj:`device`."""
        self._complex = self._complex.to(device)
        self._items = {k: v.to(device) for k, v in self._items.items()}
        return self
