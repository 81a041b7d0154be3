r"""The sub-complex of a sample of simplices, with the operators of the full complex
restricted to it."""
import re
from typing import Dict, List, Optional, Tuple

import torch
from torch import Tensor

from torch_geometric_san.data import SimplicialComplexData
from torch_geometric_san.sparse import compressed_rows

__all__ = ["simplicial_subcomplex", "operator_rowptr"]

#: Attributes the sub-complex builds per order; the full complex's are not copied.
_PER_ORDER = re.compile(r'(simplices|spectrum|x|(boundary|down|up|hodge)_(index|weight))'
                        r'_(\d+)')
_LAPLACIANS = ('down', 'up', 'hodge')


def simplicial_subcomplex(data: SimplicialComplexData, order: int, n_id: Tensor,
                          rowptr: Optional[Dict[str, Tensor]] = None
                          ) -> SimplicialComplexData:
    r"""The sub-complex spanned by the k-simplices :obj:`n_id` of :obj:`data`
    (:math:`k` = :obj:`order`) and all their faces, relabelled, with the operators of
    the full complex restricted to it.

    Order :math:`k` keeps the order of :obj:`n_id` (local simplex :math:`i` is
    :obj:`n_id[i]`); the faces of orders :math:`j < k` (vertices included) are
    numbered in the order of their ids in :obj:`data`, and their ids are stored as
    ``n_id_j``. Per order :math:`j \le k` the result holds

    * ``simplices_j`` (vertex ids relabelled, still ascending) and ``x_j`` (rows);
    * the boundary :math:`\mathbf{B}_j` of the sub-complex (exact: every face of a
      kept simplex is kept);
    * ``up``, ``down`` and ``hodge`` Laplacians: the rows and columns of the
      full complex's operators for the kept simplices, with the full complex's
      values (the normalised Hodge Laplacian keeps the full complex's scale) and its
      ``spectrum_j``, which
      :meth:`~torch_geometric_san.data.SimplicialComplexData.operators` hands to the spectral normalisation. They are not the Laplacians of the
      sub-complex: the upper Laplacian counts the (k+1)-simplices of the full complex,
      which the sub-complex (of order :math:`k`) does not hold. A row is the full
      complex's row wherever all the neighbours of that simplex are kept.

    Other attributes whose first dimension is :math:`N_k` (labels, masks) are
    indexed by :obj:`n_id`; the remaining ones (and those of orders above :math:`k`)
    are copied as they are, or dropped for the computed attributes and features of
    orders above :math:`k`. Nothing of :obj:`data` is modified.

    Args:
        data (SimplicialComplexData): One complex (not a batch), with its
            ``spectrum_j``.
        order (int): The order :math:`k` of :obj:`n_id`.
        n_id (torch.Tensor): Distinct ids of k-simplices :obj:`[M]`
            (:obj:`torch.long`).
        rowptr (Dict[str, torch.Tensor], optional): The compressed rows of the
            Laplacians of orders :math:`\le k`, by the name of their index (e.g.
            ``'down_index_1'``), as :func:`operator_rowptr` gives them; computed
            where missing (a loader computes them once).

    Returns:
        SimplicialComplexData: The sub-complex of order :math:`k`, with ``n_id``
        (:obj:`n_id`) and ``n_id_j`` for :math:`j < k`.

    Example:
        >>> data = SimplicialComplexData.from_simplices([[0, 1, 2], [1, 2, 3]],
        ...                                             close=True)
        >>> sub = simplicial_subcomplex(data, 1, torch.tensor([4, 0]))
        >>> sub.simplices_1, sub.n_id_0
        (tensor([[2, 3],
                [0, 1]]), tensor([0, 1, 2, 3]))
        >>> sub.down_laplacian(1)  # the edges 23 and 01 share no vertex
        (tensor([[0, 1],
                [0, 1]]), tensor([2., 2.]))
    """
    ids = _closure(data, order, n_id)
    if rowptr is None:
        rowptr = operator_rowptr(data, order)
    out = SimplicialComplexData(num_nodes=ids[0].numel())
    locals_ = [_local_map(index, data.num_simplices(j)) for j, index in enumerate(ids)]
    num_rows = data.num_simplices(order)
    for key, value in data._store.items():
        match = _PER_ORDER.fullmatch(key)
        if match is not None:
            j = int(match.group(4))
            if match.group(1) == 'spectrum' and j <= order:
                out[key] = value
            elif match.group(1) == 'x' and j <= order:
                out[key] = value[ids[j]] if isinstance(value, Tensor) else value
        elif key != 'num_nodes':
            per_simplex = isinstance(value, Tensor) and value.dim() > 0 and \
                value.size(0) == num_rows
            out[key] = value[n_id] if per_simplex else value
    for j in range(order + 1):
        if j > 0:
            out[f'simplices_{j}'] = locals_[0][data[f'simplices_{j}'][ids[j]]]
            index, weight = data.boundary(j)
            faces = index[0].view(-1, j + 1)[ids[j]]
            simplex = torch.arange(ids[j].numel(), device=faces.device)
            out[f'boundary_index_{j}'] = torch.stack([
                locals_[j - 1][faces].view(-1), simplex.repeat_interleave(j + 1)])
            out[f'boundary_weight_{j}'] = weight.view(-1, j + 1)[ids[j]].view(-1)
        for name in _LAPLACIANS:
            if f'{name}_index_{j}' in data._store:
                out[f'{name}_index_{j}'], out[f'{name}_weight_{j}'] = _restrict(
                    data[f'{name}_index_{j}'], data[f'{name}_weight_{j}'],
                    rowptr[f'{name}_index_{j}'], ids[j], locals_[j], sort=j == order)
    out.n_id = n_id
    for j in range(order):
        out[f'n_id_{j}'] = ids[j]
    return out


def operator_rowptr(data: SimplicialComplexData, order: int) -> Dict[str, Tensor]:
    r"""The compressed rows of the upper, lower and Hodge Laplacians of the orders
    :math:`0..k` of :obj:`data`, which :func:`simplicial_subcomplex` reads.

    Args:
        data (SimplicialComplexData): The complex.
        order (int): The highest order :math:`k`.

    Returns:
        Dict[str, torch.Tensor]: :obj:`rowptr` :obj:`[N_j + 1]` of each stored
        Laplacian, by the name of its index (``'up_index_j'``, ...): the entries of
        row :math:`i` are :obj:`rowptr[i]:rowptr[i + 1]`.
    """
    out = {}
    for j in range(order + 1):
        for name in _LAPLACIANS:
            if f'{name}_index_{j}' in data._store:
                out[f'{name}_index_{j}'] = compressed_rows(
                    data[f'{name}_index_{j}'][1], data.num_simplices(j))
    return out


def _closure(data: SimplicialComplexData, order: int, n_id: Tensor) -> List[Tensor]:
    # The ids of the kept simplices of each order 0..k: n_id on order k, the sorted
    # faces of the order above on the others.
    ids = [n_id]
    for j in range(order, 0, -1):
        faces = data.boundary(j)[0][0].view(-1, j + 1)[ids[0]]
        ids.insert(0, torch.unique(faces))
    return ids


def _local_map(ids: Tensor, size: int) -> Tensor:
    # Global id -> local id (-1 where not kept), [size].
    local = torch.full((size, ), -1, dtype=torch.long, device=ids.device)
    local[ids] = torch.arange(ids.numel(), device=ids.device)
    return local


def _restrict(index: Tensor, weight: Tensor, rowptr: Tensor, ids: Tensor,
              local: Tensor, sort: bool) -> Tuple[Tensor, Tensor]:
    # The entries (i, j) of an operator (index sorted by target, compressed rows
    # `rowptr`) with both i and j kept, relabelled and sorted by target, then source.
    # Without `sort` the local ids must increase with the global ones.
    start = rowptr[ids]
    count = rowptr[ids + 1] - start
    total = int(count.sum())
    rows = torch.repeat_interleave(torch.arange(ids.numel(), device=ids.device), count,
                                   output_size=total)
    shift = torch.repeat_interleave(start - (torch.cumsum(count, 0) - count), count,
                                    output_size=total)
    pos = torch.arange(total, device=ids.device) + shift
    cols = local.index_select(0, index[0].index_select(0, pos))
    keep = (cols >= 0).nonzero().view(-1)
    rows, cols, pos = rows[keep], cols[keep], pos[keep]
    if sort:
        perm = torch.argsort(rows * ids.numel() + cols)
        rows, cols, pos = rows[perm], cols[perm], pos[perm]
    return torch.stack([cols, rows]), weight.index_select(0, pos)
