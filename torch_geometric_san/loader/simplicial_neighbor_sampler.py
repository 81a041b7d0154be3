r"""Neighbour sampling over the upper and lower adjacency of the k-simplices."""
from typing import List, Sequence, Tuple

import torch
from torch import Tensor

from torch_geometric_san.data import SimplicialComplexData
from torch_geometric_san.utils.validation import check_int

__all__ = ["SimplicialNeighborSampler"]


class SimplicialNeighborSampler:
    r"""Samples the neighbourhood of seed k-simplices hop by hop, as PyG's
    :class:`~torch_geometric.sampler.NeighborSampler` does for nodes.

    Two k-simplices are neighbours when they share a (k-1)-face or are faces of a
    common (k+1)-simplex: the union of the patterns of
    :math:`\mathbf{L}_k^{(d)}` and :math:`\mathbf{L}_k^{(u)}` without the diagonal,
    which holds the pattern of the Hodge Laplacian and of every attention
    neighbourhood of the layers. It is built once, in compressed rows
    (:obj:`indptr`, :obj:`indices`). In hop :math:`h`, each simplex reached in hop
    :math:`h-1` (the seeds for :math:`h = 1`) draws :obj:`num_neighbors[h - 1]` of its
    neighbours uniformly without replacement (all of them where it has fewer, or for
    :obj:`-1`); the simplices not reached before are the next hop's frontier. All of
    it is vectorised over the frontier (random keys sorted within each row), with
    :mod:`torch`'s default generator.

    Args:
        data (SimplicialComplexData): The complex (one complex, not a batch).
        order (int): The order :math:`k` of the sampled simplices.
        num_neighbors (Sequence[int]): The number of neighbours drawn per simplex in
            each hop; :obj:`-1` takes all of them.

    Raises:
        TypeError: If :obj:`data` is not a single
            :class:`~torch_geometric_san.data.SimplicialComplexData` or an argument
            has the wrong type.
        ValueError: If :obj:`order` is out of range or a number of neighbours is
            below :obj:`-1`.

    Example:
        >>> from torch_geometric_san.data import SimplicialComplexData
        >>> data = SimplicialComplexData.from_simplices([[0, 1, 2], [1, 2, 3]],
        ...                                             close=True)
        >>> sampler = SimplicialNeighborSampler(data, order=1, num_neighbors=[-1])
        >>> sampler.indptr  # edges 01, 02, 12, 13, 23
        tensor([ 0,  3,  6, 10, 13, 16])
        >>> sampler.indices
        tensor([1, 2, 3, 0, 2, 4, 0, 1, 3, 4, 0, 2, 4, 1, 2, 3])
        >>> n_id, num_sampled = sampler.sample(torch.tensor([0]))
        >>> n_id, num_sampled
        (tensor([0, 1, 2, 3]), [1, 3])
    """
    def __init__(self, data: SimplicialComplexData, order: int,
                 num_neighbors: Sequence[int]):
        if not isinstance(data, SimplicialComplexData):
            raise TypeError(f"data must be a SimplicialComplexData, not "
                            f"{type(data).__name__}")
        if hasattr(data, 'num_graphs'):
            raise TypeError("data is a batch of complexes; sample one complex")
        self.order = check_int(order, 'order', minimum=0, maximum=data.order)
        if isinstance(num_neighbors, (str, bytes, Tensor)) or \
                not isinstance(num_neighbors, Sequence):
            raise TypeError(f"num_neighbors must be a list of ints, not "
                            f"{type(num_neighbors).__name__}")
        self.num_neighbors = [check_int(n, f'num_neighbors[{hop}]', minimum=-1)
                              for hop, n in enumerate(num_neighbors)]
        self.num_simplices = data.num_simplices(order)
        self.indptr, self.indices = _union_pattern(data, order)

    def sample(self, seeds: Tensor) -> Tuple[Tensor, List[int]]:
        r"""Samples the neighbourhood of :obj:`seeds`.

        Args:
            seeds (torch.Tensor): Distinct ids of k-simplices :obj:`[B]`
                (:obj:`torch.long`), not checked (the loader checks its input once).

        Returns:
            (torch.Tensor, List[int]): The sampled ids :obj:`n_id` :obj:`[M]`: the
            seeds in their order, then the simplices first reached in hop 1, hop 2,
            ..., each hop in ascending order of id; and the number of simplices of
            each of these groups (seeds included).
        """
        indptr, indices = self.indptr, self.indices
        seen = torch.zeros(self.num_simplices, dtype=torch.bool, device=seeds.device)
        seen[seeds] = True
        groups, frontier = [seeds], seeds
        for fanout in self.num_neighbors:
            start = indptr[frontier]
            degree = indptr[frontier + 1] - start
            total = int(degree.sum())
            row = torch.repeat_interleave(
                torch.arange(frontier.numel(), device=seeds.device), degree,
                output_size=total)
            first = torch.cumsum(degree, 0) - degree  # of each row's entries
            slot = torch.arange(total, device=seeds.device) - first[row]
            if fanout >= 0 and total and int(degree.max()) > fanout:
                # A random order within each row: rows stay contiguous (the integer
                # part of the key), random keys order each row's entries.
                key = row.to(torch.float64) + torch.rand(total, dtype=torch.float64,
                                                         device=seeds.device)
                # Sorted, a row keeps its place, so `slot` ranks its entries.
                chosen = torch.argsort(key)[slot < fanout]
                row, slot = row[chosen], slot[chosen]
            candidates = indices[start[row] + slot]
            candidates = torch.unique(candidates[~seen[candidates]])
            seen[candidates] = True
            groups.append(candidates)
            frontier = candidates
        return torch.cat(groups), [group.numel() for group in groups]


def _union_pattern(data: SimplicialComplexData, order: int) -> Tuple[Tensor, Tensor]:
    # The compressed rows (indptr [N + 1], indices) of the pattern of L_k^(d) + L_k^(u)
    # without the diagonal, each row's columns ascending.
    n = data.num_simplices(order)
    index = torch.cat([data.down_laplacian(order)[0], data.up_laplacian(order)[0]], 1)
    index = index[:, index[0] != index[1]]
    key = torch.unique(index[1] * n + index[0])
    row, col = key // n, key % n
    indptr = torch.zeros(n + 1, dtype=torch.long, device=key.device)
    indptr[1:] = torch.cumsum(torch.bincount(row, minlength=n), 0)
    return indptr, col
