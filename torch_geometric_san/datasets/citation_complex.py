"""The co-authorship (citation) complex of Ebli et al. (2020)."""
import math
from typing import List, Tuple

import numpy as np

from torch_geometric_san.datasets.io import load_npy

MAX_ORDER = 10


def read_citation_raw(simplices_path: str,
                      cochains_path: str) -> Tuple[List[dict], List[dict]]:
    r"""Reads ``*_simplices.npy`` and ``*_cochains.npy`` with the restricted
    unpickler of :func:`~torch_geometric_san.datasets.io.load_npy` and checks
    their structure: one dict per order :math:`k`, with
    :class:`frozenset` keys of :math:`k + 1` author ids; the simplex dict
    maps them to the indices :math:`0, \ldots, N_k - 1` and the cochain dict
    (same keys) to citation counts.

    Returns:
        (list, list): The simplex dicts and the cochain dicts.
    """
    simplices, cochains = load_npy(simplices_path), load_npy(cochains_path)
    for name, value in (("simplices", simplices), ("cochains", cochains)):
        if value.ndim != 1 or not all(isinstance(d, dict) for d in value):
            raise ValueError(f"The {name} file must hold a 1-D array of "
                             f"dicts, one per order")
    if len(simplices) != len(cochains):
        raise ValueError(f"The simplices file has {len(simplices)} orders "
                         f"but the cochains file has {len(cochains)}")
    for k, (simp, coch) in enumerate(zip(simplices, cochains)):
        if not all(isinstance(s, frozenset) and len(s) == k + 1
                   for s in simp):
            raise ValueError(f"The keys of order {k} must be frozensets of "
                             f"{k + 1} author ids")
        if sorted(simp.values()) != list(range(len(simp))):
            raise ValueError(f"The indices of the {k}-simplices must be "
                             f"0..{len(simp) - 1}")
        if simp.keys() != coch.keys():
            raise ValueError(f"The simplices and cochains of order {k} are "
                             f"not given on the same simplices")
    return list(simplices), list(cochains)


def citation_simplices(
    simplices: List[dict],
    cochains: List[dict],
    max_order: int,
) -> Tuple[List[np.ndarray], List[np.ndarray], np.ndarray]:
    r"""Turns the raw dicts of orders :math:`0..` :obj:`max_order` into
    arrays, in the raw files' index order.

    Authors are renumbered by the index of their 0-simplex, so vertex
    :math:`v` is the author of the :math:`v`-th 0-simplex.

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
    for k in range(max_order + 1):
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

    Returns:
        numpy.ndarray: Boolean, shape :obj:`[num_masks, num_simplices]`,
        :obj:`True` where the value is hidden.
    """
    if not 0.0 < missing_rate < 1.0:
        raise ValueError(f"'missing_rate' must be a fraction in (0, 1) "
                         f"(e.g. 0.3 for 30 %), got {missing_rate}")
    # Rounding first keeps e.g. 0.1 * 5000 = 500.00000000000006 at 500.
    num_hidden = math.ceil(round(missing_rate * num_simplices, 6))
    hidden = np.zeros((num_masks, num_simplices), dtype=bool)
    for m in range(num_masks):
        perm = np.random.default_rng([seed, m]).permutation(num_simplices)
        hidden[m, perm[:num_hidden]] = True
    return hidden
