r"""Renumbering the simplices of a complex along a locality order."""
import copy
from typing import Dict, List, Optional, Tuple

import numpy as np
import scipy.sparse as sp
import torch
from scipy.sparse.csgraph import reverse_cuthill_mckee
from torch import Tensor
from torch_geometric.transforms import BaseTransform

from torch_geometric_san.data import SimplicialComplexData
from torch_geometric_san.data.simplicial_complex_data import (_OPERATOR_INDEX,
                                                           _check_complex_arg)
from torch_geometric_san.data.attributes import (_check_attr_orders,
                                                 _select_attr_rows, simplex_attr_orders)
from torch_geometric_san.utils.validation import range_problem


class ReorderSimplices(BaseTransform):
    r"""Renumbers the k-simplices of every order :math:`k \geq 1` along a
    locality order, so that simplices that share faces or cofaces get nearby
    indices, and returns the same complex with its simplices, features and
    operators permuted accordingly.

    The locality order comes from the vertices: they are ranked by the reverse
    Cuthill-McKee ordering of the 1-skeleton
    (:func:`scipy.sparse.csgraph.reverse_cuthill_mckee`, which keeps adjacent
    vertices close), and the k-simplices are sorted lexicographically by the
    ranks of their vertices. Sparse products over the Laplacians then read
    neighbouring rows of the features from nearby memory, which makes
    :class:`~torch_geometric_san.nn.conv.SANConv` markedly faster on large complexes
    whose simplices come in a scattered order (e.g. built from points in random
    order). The cost is one sparse ordering of the vertices and one sort per
    order, paid once per complex.

    It is a pure renumbering of the k-simplices: vertex ids, the simplices'
    vertex tuples and hence their reference orientations stay as they are, so
    every operator is only permuted (:math:`\mathbf{L}_k \mapsto
    \mathbf{P}_k \mathbf{L}_k \mathbf{P}_k^\top`, :math:`\mathbf{B}_k \mapsto
    \mathbf{P}_{k-1} \mathbf{B}_k \mathbf{P}_k^\top`), the normalised Hodge
    Laplacians keep their weights, and any permutation-equivariant layer gives
    the permuted outputs. Nodes are not renumbered (that would change the
    orientations); order-0 attributes are copied.

    Rows of ``simplices_k`` and ``x_k`` move with their simplices, and so do
    those of every other tensor whose first dimension is :math:`N_k` for one
    order :math:`k \geq 1` only (labels and masks, e.g. the ``y``,
    ``train_mask`` and ``test_mask`` of
    :class:`~torch_geometric_san.datasets.CitationComplexDataset`), as PyG's
    transforms move node attributes by their size; the rule is
    :func:`~torch_geometric_san.data.simplex_attr_orders`, which the neighbour
    loader follows too. An attribute whose length is that of several orders
    (including the vertices, e.g. ``pos`` of a cycle, which has as many edges as
    vertices) is ambiguous: it is copied unchanged with a warning, and
    :obj:`attrs` settles it. Attributes of the vertices, and those with a row
    per column of a kept graph ``edge_index`` (a key containing ``edge`` where
    the length also matches an order, as PyG tells edge attributes), are copied
    unchanged, as is every other attribute. The input is not modified. Apply the
    transform to single complexes, before batching, and to a large complex before
    :class:`~torch_geometric_san.loader.SimplicialNeighborLoader` (a sampled
    sub-complex keeps its seeds in its first ``batch_size`` rows, which a
    renumbering would scatter: it is refused). :func:`reorder_simplices` also
    returns the permutations.

    Args:
        attrs (Dict[str, int], optional): The order of attributes whose first
            dimension alone does not tell it: :math:`k \geq 1` moves the
            attribute with the k-simplices (first dimension :math:`N_k`), e.g.
            :obj:`{'train_mask': 1}`; :obj:`0` copies it (vertex attributes).
            (default: :obj:`None`)

    Example:
        >>> from torch_geometric_san.data import SimplicialComplexData
        >>> data = SimplicialComplexData.from_simplices(
        ...     [[0, 3], [1, 2], [0, 4], [1, 3]], x_1=torch.arange(4.).view(-1, 1))
        >>> out = ReorderSimplices()(data)
        >>> out.simplices_1.tolist()  # the path 4-0-3-1-2, edge after edge
        [[0, 4], [0, 3], [1, 3], [1, 2]]
        >>> out.x_1.view(-1).tolist()
        [2.0, 0.0, 3.0, 1.0]
    """
    def __init__(self, attrs: Optional[Dict[str, int]] = None) -> None:
        self.attrs = _check_attr_orders(attrs)

    def forward(self, data: SimplicialComplexData) -> SimplicialComplexData:
        return reorder_simplices(data, self.attrs)[0]

    def __repr__(self) -> str:
        attrs = f'attrs={self.attrs}' if self.attrs else ''
        return f'{self.__class__.__name__}({attrs})'


def reorder_simplices(
    data: SimplicialComplexData,
    attrs: Optional[Dict[str, int]] = None,
) -> Tuple[SimplicialComplexData, List[Tensor]]:
    r"""The complex :obj:`data` with its k-simplices (:math:`k \geq 1`)
    renumbered along a locality order, as :class:`ReorderSimplices` returns
    it, and the permutations.

    Args:
        data (SimplicialComplexData): A single complex (not a batch); not
            modified.
        attrs (Dict[str, int], optional): The order of attributes whose first
            dimension alone does not tell it (0: copied). (default: :obj:`None`)

    Returns:
        (SimplicialComplexData, List[torch.Tensor]): The renumbered complex and
        :obj:`perms`, where :obj:`perms[k]` (:obj:`[N_k]`, on the device of the
        complex) holds the old index of each new k-simplex, so that
        :obj:`out.x_k == data.x_k[perms[k]]`; :obj:`perms[0]` is the identity.

    Raises:
        TypeError: If :obj:`data` is not a
            :class:`~torch_geometric_san.data.SimplicialComplexData`, or is a
            batch.
        ValueError: If :obj:`data` is a sampled sub-complex (it has a
            ``batch_size``), lacks a boundary or holds ids out of range in its
            simplices or operators, or if an attribute of :obj:`attrs` is missing
            or does not have :math:`N_k` rows.
    """
    _check_complex_arg(data, 'data', "ReorderSimplices renumbers the simplices of "
                      "one complex: apply it to each complex before batching")
    if 'batch_size' in data:
        raise ValueError("ReorderSimplices got a sampled sub-complex (it has a "
                         "'batch_size'), whose first batch_size rows are the seeds "
                         "that the loss is taken on: reorder the whole complex "
                         "before SimplicialNeighborLoader instead")
    order = data.order
    counts = [data.num_simplices(k) for k in range(order + 1)]
    _check_ids(data, counts)
    moved = simplex_attr_orders(data, attrs, 'ReorderSimplices')

    rank = _vertex_rank(data, counts[0])
    device = data._device()
    perms = [torch.arange(counts[0], device=device)]
    inverses: List[Optional[Tensor]] = [None]  # vertices keep their ids
    for k in range(1, order + 1):
        ranks = np.sort(rank[data[f'simplices_{k}'].cpu().numpy()], axis=1)
        perm = torch.from_numpy(np.lexsort(ranks.T[::-1])).to(device)
        perms.append(perm)
        inverses.append(torch.empty_like(perm).scatter_(
            0, perm, torch.arange(perm.numel(), device=device)))

    out = copy.copy(data)
    for k in range(1, order + 1):
        out[f'simplices_{k}'] = data[f'simplices_{k}'][perms[k]]
        out[f'boundary_index_{k}'], sort = _permute_index(
            data[f'boundary_index_{k}'], inverses[k - 1], inverses[k], counts[k - 1])
        out[f'boundary_weight_{k}'] = data[f'boundary_weight_{k}'][sort]
    for k in range(order + 1):
        # The Hodge index may be the very tensor of the up or down index:
        # renumber it once and keep the sharing.
        done: Dict[int, Tuple[Tensor, Tensor]] = {}
        for name in ('down', 'up', 'hodge'):
            key = f'{name}_index_{k}'
            if inverses[k] is None or key not in data:
                continue
            index = data[key]
            if id(index) not in done:
                new, sort = _permute_index(index, inverses[k], inverses[k], counts[k])
                done[id(index)] = (new, sort)
            out[key], sort = done[id(index)]
            out[f'{name}_weight_{k}'] = data[f'{name}_weight_{k}'][sort]
    out.update(_select_attr_rows(data, moved, dict(enumerate(perms[1:], start=1))))
    return out, perms


def _check_ids(data: SimplicialComplexData, counts: List[int]) -> None:
    # The ids the renumbering reads: a negative one would index from the end and
    # give a valid-looking complex (validate() checks the rest).
    checks = []
    for k in range(1, len(counts)):
        if f'boundary_index_{k}' not in data:
            raise ValueError(f"ReorderSimplices needs 'boundary_index_{k}' and "
                             f"'boundary_weight_{k}' of the {k}-simplices, which the "
                             f"complex lacks; build it with a constructor or lifting")
        checks.append((f"'simplices_{k}'", data[f'simplices_{k}'], counts[0]))
    for key in data.keys():
        operator = _OPERATOR_INDEX.fullmatch(key)
        if operator is not None and int(operator.group(2)) < len(counts):
            kind, k = operator.group(1), int(operator.group(2))
            checks += [(f"row 0 of '{key}'", data[key][0],
                        counts[k - 1] if kind == 'boundary' else counts[k]),
                       (f"row 1 of '{key}'", data[key][1], counts[k])]
    for what, ids, bound in checks:
        problem = range_problem(what, ids, bound)
        if problem:
            raise ValueError(problem)


def _vertex_rank(data: SimplicialComplexData, num_nodes: int) -> np.ndarray:
    # The position of each vertex in the reverse Cuthill-McKee order of the
    # 1-skeleton (identity without edges).
    if data.order == 0 or data.num_simplices(1) == 0:
        return np.arange(num_nodes)
    edges = data.simplices_1.cpu().numpy()
    ones = np.ones(len(edges), dtype=np.int8)
    adjacency = sp.csr_matrix((ones, (edges[:, 0], edges[:, 1])),
                              shape=(num_nodes, num_nodes))
    order = reverse_cuthill_mckee(adjacency + adjacency.T, symmetric_mode=True)
    rank = np.empty(num_nodes, dtype=np.int64)
    rank[order] = np.arange(num_nodes)
    return rank


def _permute_index(index: Tensor, source: Optional[Tensor], target: Optional[Tensor],
                   num_sources: int) -> Tuple[Tensor, Tensor]:
    # Renumbers row 0 by `source` and row 1 by `target` (None: unchanged), and
    # returns the index sorted by (target, source) and the sorting permutation.
    rows = [row if new is None else new[row] for row, new in zip(index, (source,
                                                                          target))]
    sort = torch.argsort(rows[1] * num_sources + rows[0])
    return torch.stack(rows)[:, sort], sort

