r"""Neighbour sampling over the upper and lower adjacency of the k-simplices."""
from typing import List, Optional, Sequence, Tuple

import torch
from torch import Tensor

from torch_geometric_san.data import SimplicialComplexData
from torch_geometric_san.loader.utils import (SimplicialAdjacency, _check_one_complex,
                                              _ScratchTables)
from torch_geometric_san.utils.validation import check_int

__all__ = ["SimplicialNeighborSampler"]


class SimplicialNeighborSampler(_ScratchTables):
    r"""Samples the neighbourhood of seed k-simplices hop by hop, as PyG's
    :class:`~torch_geometric.sampler.NeighborSampler` does for nodes.

    Two k-simplices are neighbours when they share a (k-1)-face or are faces of a
    common (k+1)-simplex: the union of the patterns of
    :math:`\mathbf{L}_k^{(d)}` and :math:`\mathbf{L}_k^{(u)}` without the diagonal,
    which holds the pattern of the Hodge Laplacian and of every attention
    neighbourhood of the layers. It comes from the boundary matrices
    (:class:`~torch_geometric_san.loader.SimplicialAdjacency`, built once, in
    compressed rows :obj:`indptr`, :obj:`indices`), so the complex need not store
    its Laplacians. In hop :math:`h`, each simplex reached in hop
    :math:`h-1` (the seeds for :math:`h = 1`) draws :obj:`num_neighbors[h - 1]` of its
    neighbours uniformly without replacement (all of them where it has fewer, or for
    :obj:`-1`); the simplices not reached before are the next hop's frontier. All of
    it is vectorised over the frontier, with :mod:`torch`'s default generator. A row
    with more neighbours than the fan-out :math:`f` draws by Floyd's algorithm where
    :math:`f^2 \le 2d` for its degree :math:`d` (work :math:`O(f^2)`, whatever the
    degree: a hub costs what any row costs), else by a partial Fisher-Yates shuffle
    (work :math:`O(d + f)`), one vectorised step per draw.

    Args:
        data (SimplicialComplexData): The complex (one complex, not a batch).
        order (int): The order :math:`k` of the sampled simplices.
        num_neighbors (Sequence[int]): The number of neighbours drawn per simplex in
            each hop; :obj:`-1` takes all of them.
        adjacency (SimplicialAdjacency, optional): The adjacency of the
            k-simplices of :obj:`data`, where it is already built.

    Raises:
        TypeError: If :obj:`data` is not a single
            :class:`~torch_geometric_san.data.SimplicialComplexData` or an argument
            has the wrong type.
        ValueError: If :obj:`order` is out of range, a number of neighbours is
            below :obj:`-1`, or :obj:`adjacency` is of another order or size.

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
                 num_neighbors: Sequence[int],
                 adjacency: Optional[SimplicialAdjacency] = None):
        _check_one_complex(data)
        self.order = check_int(order, 'order', minimum=0, maximum=data.order)
        if isinstance(num_neighbors, (str, bytes, Tensor)) or \
                not isinstance(num_neighbors, Sequence):
            raise TypeError(f"num_neighbors must be a list of ints, not "
                            f"{type(num_neighbors).__name__}")
        self.num_neighbors = [check_int(n, f'num_neighbors[{hop}]', minimum=-1)
                              for hop, n in enumerate(num_neighbors)]
        self.num_simplices = data.num_simplices(order)
        if adjacency is None:
            adjacency = SimplicialAdjacency(data, self.order)
        elif not isinstance(adjacency, SimplicialAdjacency):
            raise TypeError(f"adjacency must be a SimplicialAdjacency, not "
                            f"{type(adjacency).__name__}")
        elif (adjacency.order, adjacency.num_simplices) != (order, self.num_simplices):
            # (the neighbours were read from another order's table)
            raise ValueError(f"adjacency is of order {adjacency.order} with "
                             f"{adjacency.num_simplices} simplices, but the sampler's "
                             f"order {order} has {self.num_simplices}")
        self.adjacency = adjacency
        self.indptr, self.indices = adjacency.indptr, adjacency.indices
        # whether a simplex is sampled (reset after each call), and the scratch of
        # the deduplication (only entries written in a call are read)
        self._scratch()

    _SCRATCH = ('_seen', '_owner')

    def _scratch(self) -> None:
        self._seen = torch.zeros(self.num_simplices, dtype=torch.bool)
        self._owner = torch.empty(self.num_simplices, dtype=torch.long)

    def sample(self, seeds: Tensor) -> Tuple[Tensor, List[int]]:
        r"""Samples the neighbourhood of :obj:`seeds`.

        Args:
            seeds (torch.Tensor): Distinct ids of k-simplices :obj:`[B]`
                (:obj:`torch.long`), not checked (the loader checks its input once).

        Returns:
            (torch.Tensor, List[int]): The sampled ids :obj:`n_id` :obj:`[M]`: the
            seeds in their order, then the simplices first reached in hop 1, hop 2,
            ..., each hop in the order its simplices were drawn; and the number of
            simplices of each of these groups (seeds included).
        """
        seen, groups = self._seen, [seeds]
        seen[seeds] = True
        try:
            self._hops(seeds, groups)
            n_id = torch.cat(groups)
            seen[n_id] = False  # (one statement: an interrupt cannot split it)
        except BaseException:  # (e.g. Ctrl-C: flags left set hid simplices later)
            self._scratch()
            raise
        return n_id, [group.numel() for group in groups]

    def _hops(self, frontier: Tensor, groups: List[Tensor]) -> None:
        # Appends the simplices first reached in each hop to `groups`.
        indptr, indices, seen, owner = self.indptr, self.indices, self._seen, \
            self._owner
        for fanout in self.num_neighbors:
            start = indptr.index_select(0, frontier)
            degree = indptr.index_select(0, frontier + 1) - start
            # Rows with no more neighbours than the fan-out give all of them, the
            # others `fanout` drawn by `_draw`.
            take = degree if fanout < 0 else degree.clamp(max=fanout)
            total = int(take.sum())
            first = torch.cumsum(take, 0) - take  # of each row's draws in `pos`
            pos = torch.arange(total) + torch.repeat_interleave(start - first, take,
                                                                output_size=total)
            big = (degree > take).nonzero().view(-1)
            if big.numel():
                drawn = _draw(degree.index_select(0, big), fanout) + \
                    start.index_select(0, big)[:, None]
                slots = first.index_select(0, big)[:, None] + torch.arange(fanout)
                pos[slots.view(-1)] = drawn.view(-1)
            candidates = indices.index_select(0, pos)
            candidates = candidates.masked_select(
                ~seen.index_select(0, candidates))
            # Deduplication without a sort: each candidate writes its position into
            # `owner`, and the last one stands for its simplex (a maximum, which
            # does not depend on the order of the writes: an assignment with
            # repeated indices keeps any of them on several threads, and the batches
            # of a seed differed from run to run).
            place = torch.arange(candidates.numel())
            owner.scatter_reduce_(0, candidates, place, 'amax', include_self=False)
            frontier = candidates.masked_select(
                owner.index_select(0, candidates) == place)
            seen[frontier] = True
            groups.append(frontier)


def _draw(degree: Tensor, count: int) -> Tensor:
    # `count` distinct offsets in [0, degree) per row [R, count], uniformly, each row
    # by the cheaper of two draws, all rows of one kind at once (a loop over the
    # draws, not over the rows): Floyd's algorithm, count^2 / 2 comparisons per row
    # whatever its degree (a hub's), or a partial Fisher-Yates shuffle, which lays out
    # the row's offsets (its degree) but costs only a few passes per draw.
    drawn = torch.empty(degree.numel(), count, dtype=torch.long, device=degree.device)
    floyd = count * count <= 2 * degree
    for rows, draw in ((floyd, _floyd), (~floyd, _shuffle)):
        rows = rows.nonzero().view(-1)
        if rows.numel():
            drawn[rows] = draw(degree.index_select(0, rows), count)
    return drawn


def _floyd(degree: Tensor, count: int) -> Tensor:
    # Floyd's algorithm: for top = degree - count, ..., degree - 1, draw an offset
    # uniformly in [0, top] and keep it, or `top` where the row holds it already.
    drawn = torch.empty(degree.numel(), count, dtype=torch.long, device=degree.device)
    for step in range(count):
        top = degree - count + step
        pick = (torch.rand(degree.numel(), dtype=torch.float64, device=degree.device)
                * (top + 1)).long().clamp_(max=top)
        if step:
            pick = torch.where((drawn[:, :step] == pick[:, None]).any(1), top, pick)
        drawn[:, step] = pick
    return drawn


def _shuffle(degree: Tensor, count: int) -> Tensor:
    # The first `count` steps of a Fisher-Yates shuffle of each row's offsets.
    first = torch.cumsum(degree, 0) - degree
    offset = torch.repeat_interleave(first, degree)
    perm = torch.arange(offset.numel(), device=degree.device) - offset  # row offsets
    for step in range(count):
        # swap slot `step` of each row with a uniform slot in [step, degree)
        pick = (torch.rand(degree.numel(), dtype=torch.float64, device=degree.device)
                * (degree - step)).long().clamp_(max=degree - step - 1) + step
        a, b = first + step, first + pick
        at_a, at_b = perm.index_select(0, a), perm.index_select(0, b)
        perm.index_put_((a, ), at_b)
        perm.index_put_((b, ), at_a)
    slots = first[:, None] + torch.arange(count, device=degree.device)
    return perm.index_select(0, slots.view(-1)).view(degree.numel(), count)
