"""The co-authorship (citation) complex of Ebli et al. (2020)."""
import math
import os
from typing import Callable, Dict, List, Optional, Tuple

import numpy as np
import torch
from torch import Tensor

from torch_geometric_san.data import SimplicialComplexData
from torch_geometric_san.datasets.base import SharedComplexDataset
from torch_geometric_san.datasets.io import (
    _check_processed_tensor,
    check_sha256,
    fetch_raw_file,
    load_npy,
)
from torch_geometric_san.utils.progress import progress_bar
from torch_geometric_san.utils.validation import check_int, check_real


_INT64_MIN, _INT64_MAX = -2**63, 2**63 - 1


def _is_count(value: object) -> bool:
    # A citation count: a whole number (an int, or a float of whole value; not a bool)
    # of the int64 range, which a float32 holds finite.
    return (type(value) is int or type(value) is float and value.is_integer()) \
        and 0 <= value <= _INT64_MAX


def read_citation_raw(simplices_path: str,
                      cochains_path: str) -> Tuple[List[dict], List[dict]]:
    r"""Reads ``*_simplices.npy`` and ``*_cochains.npy`` with the restricted
    unpickler of :func:`~torch_geometric_san.datasets.io.load_npy` and checks
    their structure: one dict per order :math:`k`, with
    :class:`frozenset` keys of :math:`k + 1` author ids; the simplex dict
    maps them to the indices :math:`0, \ldots, N_k - 1` and the cochain dict
    (same keys) to citation counts, whole numbers from 0.

    Args:
        simplices_path (str): The ``*_simplices.npy`` file.
        cochains_path (str): The ``*_cochains.npy`` file.

    Returns:
        (list, list): The simplex dicts and the cochain dicts.
    """
    simplices, cochains = load_npy(simplices_path), load_npy(cochains_path)
    for name, value, path in (("simplices", simplices, simplices_path),
                              ("cochains", cochains, cochains_path)):
        if value.ndim != 1 or not all(isinstance(d, dict) for d in value):
            raise ValueError(f"The {name} file '{path}' must hold a 1-D array "
                             f"of dicts, one per order")
    if len(simplices) != len(cochains):
        raise ValueError(f"The simplices file '{simplices_path}' has "
                         f"{len(simplices)} orders but the cochains file "
                         f"'{cochains_path}' has {len(cochains)}")
    for k, (simp, coch) in enumerate(zip(simplices, cochains)):
        # (Python ints, not bools, which sort and compare as 0 and 1, of the range
        # of the int64 array that holds them)
        if not all(isinstance(s, frozenset) and len(s) == k + 1
                   and all(type(a) is int and _INT64_MIN <= a <= _INT64_MAX for a in s)
                   for s in simp):
            raise ValueError(f"'{simplices_path}': the keys of order {k} must be "
                             f"frozensets of {k + 1} author ids (ints of the int64 "
                             f"range)")
        if not all(type(i) is int for i in simp.values()) or \
                sorted(simp.values()) != list(range(len(simp))):
            raise ValueError(f"'{simplices_path}': the indices of the "
                             f"{k}-simplices must be 0..{len(simp) - 1}")
        if simp.keys() != coch.keys():
            raise ValueError(f"The simplices and cochains of order {k} "
                             f"('{simplices_path}', '{cochains_path}') are not "
                             f"given on the same simplices")
        if not all(_is_count(c) for c in coch.values()):
            raise ValueError(f"'{cochains_path}': the citation counts of the "
                             f"{k}-simplices must be whole numbers from 0 to "
                             f"{_INT64_MAX}")
    return list(simplices), list(cochains)


def citation_simplices(
    simplices: List[dict],
    cochains: List[dict],
    max_order: int,
    progress: bool = False,
) -> Tuple[List[np.ndarray], List[np.ndarray], np.ndarray]:
    r"""Turns the raw dicts of orders :math:`0..` :obj:`max_order` into
    arrays, in the raw files' index order.

    Authors are renumbered by the index of their 0-simplex, so vertex
    :math:`v` is the author of the :math:`v`-th 0-simplex.

    Args:
        simplices (list): The simplex dicts of :func:`read_citation_raw`.
        cochains (list): The cochain dicts of :func:`read_citation_raw`.
        max_order (int): The largest order to convert.
        progress (bool, optional): Show a progress bar over the orders.
            (default: :obj:`False`)

    Returns:
        (list, list, numpy.ndarray): Per order :math:`k`, the
        :math:`k`-simplices (:obj:`[N_k, k + 1]`, rows ascending, row
        :math:`i` = raw index :math:`i`) and their citation counts
        (:obj:`[N_k]`), and the author ids of the vertices (:obj:`[N_0]`).
    """
    if max_order >= len(simplices):
        raise ValueError(f"The raw files hold orders up to "
                         f"{len(simplices) - 1}, order {max_order} was asked")
    author_ids = np.empty(len(simplices[0]), dtype=np.int64)
    for key, i in simplices[0].items():
        (author_ids[i], ) = key
    vertex_of = {int(a): v for v, a in enumerate(author_ids)}
    arrays, counts = [], []
    for k in progress_bar(range(max_order + 1), "Reading simplices",
                          enabled=progress):
        array = np.empty((len(simplices[k]), k + 1), dtype=np.int64)
        count = np.empty(len(simplices[k]), dtype=np.float64)
        for key, i in simplices[k].items():
            try:
                array[i] = sorted(vertex_of[a] for a in key)
            except KeyError as e:
                raise ValueError(f"A {k}-simplex has the author {e.args[0]}, "
                                 f"who has no 0-simplex") from None
            count[i] = cochains[k][key]
        arrays.append(array)
        counts.append(count)
    return arrays, counts, author_ids


def _check_missing_rate(missing_rate: float) -> float:
    # (the checked value, a Python float: a float16 one overflowed in the counts)
    rate = check_real(missing_rate, "'missing_rate'")
    if not 0.0 < rate < 1.0:
        raise ValueError(f"'missing_rate' must be a fraction in (0, 1) "
                         f"(e.g. 0.3 for 30 %), got {missing_rate!r}")
    return rate


def imputation_masks(
    num_simplices: int,
    missing_rate: float,
    num_masks: int,
    seed: int,
) -> np.ndarray:
    r"""Seeded masks of hidden simplices for the imputation protocol.

    Mask :math:`m` hides the first :math:`\lceil r N \rceil` entries of a
    random permutation drawn by ``numpy.random.default_rng([seed, m])``, so
    mask :math:`m` does not depend on :obj:`num_masks`, and for one
    :obj:`seed` and :math:`m` the hidden set of a lower rate is contained in
    that of a higher rate.

    Args:
        num_simplices (int): :math:`N`, the number of simplices (at least 1).
        missing_rate (float): :math:`r`, the fraction hidden, in :math:`(0, 1)`;
            at least one simplex must stay known (:math:`\lceil r N \rceil < N`).
        num_masks (int): The number of masks.
        seed (int): The seed.

    Returns:
        numpy.ndarray: Boolean, shape :obj:`[num_masks, num_simplices]`,
        :obj:`True` where the value is hidden.
    """
    num_simplices = check_int(num_simplices, "'num_simplices'", minimum=1)
    missing_rate = _check_missing_rate(missing_rate)
    num_masks = check_int(num_masks, "'num_masks'", minimum=1)
    seed = check_int(seed, "'seed'", minimum=0)
    # Rounding first keeps e.g. 0.1 * 5000 = 500.00000000000006 at 500.
    num_hidden = math.ceil(round(missing_rate * num_simplices, 6))
    if num_hidden == num_simplices:
        raise ValueError(
            f"missing_rate={missing_rate} hides all {num_simplices} simplices "
            f"(ceil(rate * N) = N), which leaves no known value to train on or "
            f"to fill the hidden ones with; the rate must be below "
            f"{(num_simplices - 1) / num_simplices:.6g} for {num_simplices} "
            f"simplices")
    hidden = np.zeros((num_masks, num_simplices), dtype=bool)
    for m in range(num_masks):
        perm = np.random.default_rng([seed, m]).permutation(num_simplices)
        hidden[m, perm[:num_hidden]] = True
    return hidden


class CitationComplexDataset(SharedComplexDataset):
    r"""The co-authorship complex with citation counts of Ebli et al.,
    "Simplicial Neural Networks" (TDA & Beyond workshop, NeurIPS 2020), for
    missing-data imputation on the :math:`k`-simplices as in the SAN paper.

    A :math:`k`-simplex is a paper's set of :math:`k + 1` co-authors (and
    all its subsets); its value is the number of citations. The complex is
    the one of the published files (built from a sample of the Semantic
    Scholar corpus), with :math:`N_k = 352, 1474, 3285, 5019, 5559, 4547` for
    :math:`k = 0, \ldots, 5`. For :obj:`order` :math:`k` it holds the
    simplices of orders :math:`0, \ldots, k + 1`, so that the Laplacians of
    order :math:`k` are complete. The raw simplices are closed under faces
    (this is checked, not repaired), vertex :math:`v` is the author of the
    :math:`v`-th 0-simplex (:attr:`author_ids`), and row :math:`i` of
    :obj:`simplices_k` is the simplex of raw index :math:`i` (in the
    published files that is also the lexicographic order).

    The dataset has :obj:`num_masks` items that share this complex: item
    :math:`m` hides :math:`\lceil r N_k \rceil` random :math:`k`-simplices
    (:func:`imputation_masks`, seeded by :obj:`(seed, m)`) and holds

    * :obj:`x_<k>` (:obj:`[N_k, 1]`): the citation counts, the hidden ones
      replaced by the median of the known ones;
    * :obj:`y` (:obj:`[N_k, 1]`): the true counts (shared by all items);
    * :obj:`train_mask` (:obj:`[N_k]`): the known simplices (train on these);
    * :obj:`test_mask` (:obj:`[N_k]`): the hidden ones (evaluate on these).

    :obj:`dataset.stacked("x_<k>")` (:obj:`[num_masks, N_k, 1]`) and
    :obj:`dataset.stacked("test_mask")` give all masks at once on
    :attr:`complex`.

    The raw files are downloaded from :attr:`urls` (or taken from
    :obj:`root/raw`) and checked against :attr:`sha256`; they are pickled
    NumPy arrays, read by a restricted unpickler
    (:func:`~torch_geometric_san.datasets.io.load_npy`).

    Source and license: the files of
    https://github.com/stefaniaebli/simplicial_neural_networks, produced by
    code under the MIT license (Copyright (c) 2020 Stefania Ebli, Michaël
    Defferrard, Gard Spreemann) from the Semantic Scholar Open Research
    Corpus, whose Semantic Scholar Dataset License Agreement allows
    non-commercial use only.

    Args:
        root (str): Root directory; the raw files live in :obj:`root/raw`.
        order (int, optional): The order :math:`k` of the imputed simplices,
            0 to 5. (default: :obj:`0`)
        missing_rate (float, optional): Fraction of hidden simplices, in
            :math:`(0, 1)`; the paper uses 0.1 to 0.5. (default: :obj:`0.3`)
        num_masks (int, optional): Number of masks (items).
            (default: :obj:`10`)
        seed (int, optional): Seed of the masks. (default: :obj:`0`)
        transform (callable, optional): Applied to each item on access.
        log (bool, optional): Print progress. (default: :obj:`True`)
        force_reload (bool, optional): Re-process. (default: :obj:`False`)
    """
    urls = {
        "150250_simplices.npy":
        "https://github.com/stefaniaebli/simplicial_neural_networks/raw/main/"
        "data/s2_3_collaboration_complex/150250_simplices.npy",
        "150250_cochains.npy":
        "https://github.com/stefaniaebli/simplicial_neural_networks/raw/main/"
        "data/s2_3_collaboration_complex/150250_cochains.npy",
    }
    sha256 = {
        "150250_simplices.npy":
        "0777e3bff7d5d2b9226ed5bb786db852006680354575eb5b30251ff9abb14121",
        "150250_cochains.npy":
        "d583d5ec7a151d819081d481394f46e345bb5a6d119650f339360605ca37f516",
    }
    max_imputation_order = 5

    def __init__(
        self,
        root: str,
        order: int = 0,
        missing_rate: float = 0.3,
        num_masks: int = 10,
        seed: int = 0,
        transform: Optional[Callable] = None,
        log: bool = True,
        force_reload: bool = False,
    ) -> None:
        self.order = check_int(order, "'order'", minimum=0,
                               maximum=self.max_imputation_order)
        self.missing_rate = _check_missing_rate(missing_rate)
        self.num_masks = check_int(num_masks, "'num_masks'", minimum=1)
        self.seed = check_int(seed, "'seed'", minimum=0)
        super().__init__(root, transform, log=log, force_reload=force_reload)
        counts = self._complex.y.view(-1).numpy()
        hidden = imputation_masks(len(counts), self.missing_rate, self.num_masks,
                                  self.seed)
        inputs = np.tile(counts, (self.num_masks, 1))
        for m in range(self.num_masks):
            inputs[m, hidden[m]] = np.median(counts[~hidden[m]])
        self._items = {
            f"x_{self.order}": torch.from_numpy(inputs).float().unsqueeze(-1),
            "train_mask": torch.from_numpy(~hidden),
            "test_mask": torch.from_numpy(hidden),
        }

    @property
    def raw_file_names(self) -> List[str]:
        return list(self.urls)

    @property
    def processed_file_names(self) -> List[str]:
        return [f"citation_complex_order{self.order}.pt"]

    def download(self) -> None:
        for name, path in zip(self.raw_file_names, self.raw_paths):
            if not os.path.exists(path):
                fetch_raw_file(self.urls[name], self.raw_dir, name,
                               self.sha256[name], log=self.log)

    def process(self) -> None:
        for name, path in zip(self.raw_file_names, self.raw_paths):
            check_sha256(path, self.sha256[name],
                         hint=f"(upstream: {self.urls[name]})")
        simplices, cochains = read_citation_raw(*self.raw_paths)
        arrays, counts, author_ids = citation_simplices(
            simplices, cochains, self.order + 1, progress=self.log)
        # The constructor keeps the given (raw index) order within each
        # order, and raises if a face is missing (close=False).
        complex = SimplicialComplexData.from_simplices(
            [torch.from_numpy(a) for a in arrays[1:]],
            num_nodes=len(author_ids), y=torch.from_numpy(
                counts[self.order]).float().view(-1, 1))
        self.save_shared(self.processed_paths[0], complex, items={},
                         extra={"author_ids": torch.from_numpy(author_ids)})

    def _processed_layout(self) -> Dict[str, Tuple[str, ...]]:
        return dict(complex=("y", ), items=(), extra=("author_ids", ))

    def _processed_complex(self) -> Optional[Tuple[int, torch.dtype]]:
        return self.order + 1, torch.float32

    def _check_processed(self, out: Dict[str, Tensor],
                         complex: SimplicialComplexData) -> None:
        _check_processed_tensor("y", complex.y, torch.float32,
                                (complex.num_simplices(self.order), 1))
        _check_processed_tensor("author_ids", out["extra"]["author_ids"], torch.long,
                                (complex.num_nodes, ))

    @property
    def author_ids(self) -> Tensor:
        r"""The raw author id of each vertex, shape :obj:`[N_0]`."""
        return self._extra["author_ids"]


