"""An :class:`~torch_geometric.data.InMemoryDataset` whose items share one
simplicial complex."""
import copy
import os
import warnings
from typing import Any, Callable, Dict, Optional, Tuple, Union

import torch
from torch import Tensor
from torch_geometric.data import InMemoryDataset
from torch_geometric.data.dataset import IndexType, files_exist

from torch_geometric_san.data import SimplicialComplexData
from torch_geometric_san.datasets.io import (atomic_torch_save, damaged_file,
                                              load_processed)
from torch_geometric_san.utils.validation import check_bool


class SharedComplexDataset(InMemoryDataset):
    r"""Base class of datasets whose items are signals on one shared
    :class:`~torch_geometric_san.data.SimplicialComplexData`.

    The processed file holds the complex once plus the per-item attributes
    stacked along a leading item dimension (e.g. :obj:`x_1` of shape
    :obj:`[num_items, N_1, 1]`). Indexing returns a complete data object: a
    shallow copy of the complex (its tensors are shared, not copied) with the
    item's attributes set, so items batch with
    :class:`torch_geometric.loader.DataLoader` like any other data objects.
    Alternatively, :attr:`complex` and the stacked attributes (e.g.
    :obj:`dataset.x_1`) feed all items at once as a :obj:`[B, N_k, F]` signal
    on one complex.

    Subclasses implement :meth:`process` and save with :meth:`save_shared`.
    :obj:`pre_transform` and :obj:`pre_filter` are not supported: they would
    act on items one by one and break the sharing.

    No file the dataset reads can run code: the processed file is read with
    :obj:`weights_only=True` (:func:`~torch_geometric_san.datasets.io.load_processed`),
    and PyG's ``processed/pre_transform.pt`` and ``pre_filter.pt``, which PyG
    unpickles with :obj:`weights_only=False`, are neither read nor written. A
    damaged processed file (empty, truncated, of another layout, without what
    :meth:`process` writes, with a complex or items that are not valid, or with
    tensors of other layouts, dtypes, shapes or values than it writes) is named
    in a warning and processed again.

    Args:
        root (str or os.PathLike): Root directory of the dataset.
        transform (callable, optional): Applied to each item on access.
        log (bool, optional): Print progress. (default: :obj:`True`)
        force_reload (bool, optional): Re-process. (default: :obj:`False`)
    """
    def __init__(
        self,
        root: Optional[str] = None,
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
            warnings.warn(f"{error}; processing the dataset again", stacklevel=2)
            self._process_files()
            out, self._complex = self._load_processed()
        self._items: Dict[str, Tensor] = out["items"]
        self._extra: Dict[str, Any] = out["extra"]

    def _processed_layout(self) -> Dict[str, Tuple[str, ...]]:
        r"""The keys :meth:`process` writes into each part of the processed file
        (:obj:`"complex"`, :obj:`"items"`, :obj:`"extra"`), checked on loading."""
        return {}

    def _check_processed(self, out: Dict[str, Any],
                         complex: SimplicialComplexData) -> None:
        r"""Checks the tensors of the processed file :obj:`out` (its valid
        :obj:`complex` built) against what :meth:`process` writes, raising a
        :class:`ValueError` that names the first that differs."""

    def _load_processed(self) -> Tuple[Dict[str, Any], SimplicialComplexData]:
        # The processed file, checked: its parts hold what process() writes, and its
        # complex is a valid one as the constructors build it (spectrum_0).
        path = self.processed_paths[0]
        layout = self._processed_layout()
        out = load_processed(path, **dict(layout, complex=(*layout.get('complex', ()),
                                                           'spectrum_0')))
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
            self._check_processed(out, complex)
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
