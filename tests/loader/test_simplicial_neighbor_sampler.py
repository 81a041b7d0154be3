"""SimplicialNeighborSampler: the union pattern, fan-outs, hops and uniform draws."""
import pytest
import torch

from torch_geometric.data import Batch

from torch_geometric_san.data import SimplicialComplexData
from torch_geometric_san.loader import SimplicialAdjacency, SimplicialNeighborSampler


@pytest.fixture
def adjacency(dense):
    return lambda data, k: _adjacency(data, k, dense)


def _adjacency(data, k, dense):
    """Dense boolean union of the upper and lower adjacency, without the diagonal."""
    n = data.num_simplices(k)
    pattern = torch.zeros(n, n, dtype=torch.bool)
    for index, weight in (data.down_laplacian(k), data.up_laplacian(k)):
        pattern |= dense(index, weight, (n, n)) != 0
    pattern.fill_diagonal_(False)
    return pattern


@pytest.mark.parametrize('k', [0, 1, 2])
def test_union_pattern(planar, adjacency, k):
    sampler = SimplicialNeighborSampler(planar, k, [-1])
    n = planar.num_simplices(k)
    row = torch.repeat_interleave(torch.arange(n), sampler.indptr.diff())
    built = torch.zeros(n, n, dtype=torch.bool)
    built[row, sampler.indices] = True
    assert torch.equal(built, adjacency(planar, k))
    assert sampler.indices.numel() == int(adjacency(planar, k).sum())


def test_all_neighbours_give_the_ball(spatial, adjacency):
    k, seeds = 2, torch.tensor([5, 70, 3])
    pattern = adjacency(spatial, k)
    n_id, num_sampled = SimplicialNeighborSampler(spatial, k, [-1, -1]).sample(seeds)
    reached = torch.zeros(pattern.size(0), dtype=torch.bool)
    reached[seeds] = True
    expected = [seeds]
    for _ in range(2):
        new = pattern[reached].any(0) & ~reached
        expected.append(new.nonzero().view(-1))
        reached |= new
    assert num_sampled == [len(group) for group in expected]
    groups = n_id.split(num_sampled)
    assert torch.equal(groups[0], seeds)  # seeds first, as given
    for group, want in zip(groups[1:], expected[1:]):  # then each hop, as drawn
        assert torch.equal(group.sort().values, want)


def test_fanout_draws_without_replacement(planar, adjacency):
    k, fanout = 1, 3
    pattern = adjacency(planar, k)
    torch.manual_seed(0)
    n_id, num_sampled = SimplicialNeighborSampler(planar, k, [fanout, fanout]).sample(
        torch.arange(10))
    assert n_id.unique().numel() == n_id.numel()
    assert torch.equal(n_id[:10], torch.arange(10))
    groups = n_id.split(num_sampled)
    for hop in (1, 2):
        frontier, new = groups[hop - 1], groups[hop]
        # each new simplex is a neighbour of the previous hop, and the hop holds at
        # most `fanout` per frontier simplex
        assert pattern[frontier][:, new].any(0).all()
        assert new.numel() <= fanout * frontier.numel()


def test_draws_are_uniform(planar):
    # One seed with d neighbours, f drawn: each neighbour is drawn with probability f/d.
    k, fanout, draws = 1, 2, 3000
    sampler = SimplicialNeighborSampler(planar, k, [fanout])
    degree = sampler.indptr.diff()
    seed = int(torch.argmax(degree))
    d = int(degree[seed])
    torch.manual_seed(0)
    counts = torch.zeros(planar.num_simplices(k))
    for _ in range(draws):
        n_id, num_sampled = sampler.sample(torch.tensor([seed]))
        assert num_sampled == [1, fanout]
        counts[n_id[1:]] += 1
    neighbours = sampler.indices[sampler.indptr[seed]:sampler.indptr[seed + 1]]
    assert counts.sum() == counts[neighbours].sum()
    expected = draws * fanout / d
    assert (counts[neighbours] - expected).abs().max() < 5 * expected ** 0.5


def test_fanout_above_some_degrees(planar):
    # Rows with fewer neighbours than the fan-out give all of them, the others
    # exactly the fan-out: with one hop from seeds far apart, the count is exact.
    sampler = SimplicialNeighborSampler(planar, 1, [6])
    degree = sampler.indptr.diff()
    seeds = torch.tensor([int(degree.argmin()), int(degree.argmax())])
    n_id, num_sampled = sampler.sample(seeds)
    reached = torch.unique(sampler.indices[torch.cat([
        torch.arange(sampler.indptr[s], sampler.indptr[s + 1]) for s in seeds])])
    assert set(n_id[2:].tolist()) <= set(reached.tolist()) - set(seeds.tolist())
    assert num_sampled[1] <= int(degree.min()) + 6


def test_zero_fanout_and_no_hops(planar):
    seeds = torch.tensor([4, 2])
    assert SimplicialNeighborSampler(planar, 1, []).sample(seeds)[0].tolist() == [4, 2]
    n_id, num_sampled = SimplicialNeighborSampler(planar, 1, [0]).sample(seeds)
    assert n_id.tolist() == [4, 2] and num_sampled == [2, 0]


def test_isolated_simplices():
    data = SimplicialComplexData.from_simplices([[0, 1], [2, 3]])
    n_id, num_sampled = SimplicialNeighborSampler(data, 1, [2, -1]).sample(
        torch.tensor([1]))
    assert n_id.tolist() == [1] and num_sampled == [1, 0, 0]


def test_bad_arguments(planar, delaunay):
    with pytest.raises(TypeError, match='SimplicialComplexData'):
        SimplicialNeighborSampler(planar.to_dict(), 1, [2])
    with pytest.raises(ValueError, match='order must be at most 2'):
        SimplicialNeighborSampler(planar, 3, [2])
    with pytest.raises(TypeError, match='list of ints'):
        SimplicialNeighborSampler(planar, 1, 2)
    with pytest.raises(TypeError, match=r'num_neighbors\[1\] must be an int'):
        SimplicialNeighborSampler(planar, 1, [2, 1.5])
    with pytest.raises(ValueError, match=r'num_neighbors\[0\] must be at least -1'):
        SimplicialNeighborSampler(planar, 1, [-2])
    batch = Batch.from_data_list([delaunay(10), delaunay(12)])
    with pytest.raises(TypeError, match='batch of complexes'):
        SimplicialNeighborSampler(batch, 1, [2])
    # another order's adjacency was read as this order's (wrong neighbours)
    with pytest.raises(ValueError, match='adjacency is of order 0 with'):
        SimplicialNeighborSampler(planar, 1, [2], adjacency=SimplicialAdjacency(planar, 0))
    with pytest.raises(TypeError, match='adjacency must be a SimplicialAdjacency'):
        SimplicialNeighborSampler(planar, 1, [2], adjacency=planar)


def test_samples_of_a_seed_do_not_depend_on_the_threads(delaunay):
    # The deduplication of the candidates assigned their positions with repeated
    # indices, which keeps any of the writes on several threads: the same seed gave
    # other samples from run to run. (Large enough for torch to split the writes.)
    data = delaunay(3000, dim=3, channels=1)
    sampler = SimplicialNeighborSampler(data, 1, [-1, 8])
    seeds = torch.arange(0, data.num_simplices(1), 3)
    threads = torch.get_num_threads()
    samples = []
    try:
        for count in (1, 2, 2, 2):
            torch.set_num_threads(count)
            torch.manual_seed(0)
            samples.append(sampler.sample(seeds))
    finally:
        torch.set_num_threads(threads)
    for n_id, sizes in samples[1:]:
        assert sizes == samples[0][1] and torch.equal(n_id, samples[0][0])


def test_the_adjacency_methods_check_their_arguments():
    # local_ids read a negative id as the last simplex's position, restrict cut the
    # Hodge weights to integers for an integer dtype, and out-of-range ids failed
    # inside torch.
    data = SimplicialComplexData.from_simplices([[0, 1, 2], [1, 2, 3]], close=True)
    adjacency = SimplicialAdjacency(data, 1)
    ids = torch.tensor([0, 2, 4])
    assert adjacency.local_ids(ids, torch.tensor([4, 1])).tolist() == [2, -1]
    with pytest.raises(ValueError, match="'ids' holds ids outside"):
        adjacency.local_ids(torch.tensor([-1]), torch.tensor([4]))
    with pytest.raises(ValueError, match="'queries' holds ids outside"):
        adjacency.local_ids(ids, torch.tensor([5]))
    with pytest.raises(TypeError, match="'queries' must be an integer tensor"):
        adjacency.local_ids(ids, torch.tensor([1.0]))
    with pytest.raises(TypeError, match="'dtype'"):
        adjacency.restrict(ids, torch.int64)
    with pytest.raises(ValueError, match="'ids' .*repeat|'ids' .*twice|'ids' .*distinct"):
        adjacency.restrict(torch.tensor([1, 1]), torch.float32)
    assert set(adjacency.restrict(ids, torch.float64)) >= {'down', 'up'}


def test_draw_gives_uniform_subsets_of_every_row():
    # Every 3-subset of 5 offsets equally likely, distinct offsets in range, rows of
    # different degrees drawn together; a row of 2**40 neighbours costs what any row
    # costs (its offsets were laid out one by one: an allocation of 2**40 entries).
    from itertools import combinations

    from torch_geometric_san.loader.simplicial_neighbor_sampler import _draw
    torch.manual_seed(0)
    draws = 6000
    degree = torch.tensor([5, 3, 9, 2 ** 40]).repeat(draws)
    drawn = _draw(degree, 3)
    assert drawn.shape == (4 * draws, 3)
    assert ((drawn >= 0) & (drawn < degree[:, None])).all()
    ordered = drawn.sort(dim=1).values
    assert (ordered.diff(dim=1) > 0).all()
    counts = {subset: 0 for subset in combinations(range(5), 3)}
    for row in ordered[0::4].tolist():
        counts[tuple(row)] += 1
    expected = draws / len(counts)
    assert all(abs(count - expected) < 5 * expected ** 0.5 for count in counts.values())
    assert (ordered[1::4] == torch.tensor([0, 1, 2])).all()  # all of a row of 3


def test_copies_have_their_own_scratch(planar):
    # A spawned loader worker gets the sampler by pickling through shared memory;
    # the tables written on every batch were shared by all the workers, which
    # corrupted each other's batches.
    from multiprocessing.reduction import ForkingPickler

    import torch.multiprocessing  # noqa: F401 (registers the reductions of tensors)
    sampler = SimplicialNeighborSampler(planar, 1, [-1])
    copy = ForkingPickler.loads(ForkingPickler.dumps(sampler))
    expected = sampler.sample(torch.tensor([0]))[0]
    assert torch.equal(copy.sample(torch.tensor([0]))[0], expected)
    copy._seen.fill_(True)
    copy.adjacency._local.fill_(0)
    assert not sampler._seen.any() and (sampler.adjacency._local == -1).all()
    assert torch.equal(sampler.sample(torch.tensor([0]))[0], expected)


def test_draw_costs_the_cheaper_of_floyd_and_a_shuffle(monkeypatch):
    # Floyd's algorithm alone compared count^2 / 2 pairs per row: a fan-out of 2,000
    # among 4,000 neighbours wrote hundreds of millions of elements. Each row now
    # takes Floyd only where count^2 <= 2 * degree, else the shuffle.
    from torch_geometric_san.loader import simplicial_neighbor_sampler as module
    calls = []
    for name in ('_floyd', '_shuffle'):
        real = getattr(module, name)
        monkeypatch.setattr(module, name, lambda degree, count, real=real, name=name: (
            calls.append((name, degree.tolist())), real(degree, count))[1])
    torch.manual_seed(0)
    for count, degree, expected in (
            (40, [4000, 2 ** 40, 60, 3999], [('_floyd', [4000, 2 ** 40, 3999]),
                                             ('_shuffle', [60])]),
            (2000, [4000, 2 ** 40], [('_floyd', [2 ** 40]), ('_shuffle', [4000])])):
        calls.clear()
        degree = torch.tensor(degree)
        drawn = module._draw(degree, count)
        assert sorted(calls) == expected
        assert ((drawn >= 0) & (drawn < degree[:, None])).all()
        assert (drawn.sort(1).values.diff(dim=1) > 0).all()


def test_an_interrupted_sample_leaves_no_simplex_marked_seen(planar, monkeypatch):
    # The flags were cleared group by group in a Python loop, where a Ctrl-C lands:
    # the simplices left marked were never drawn again (smaller samples, silently).
    class Interrupt:  # (a group whose clearing is interrupted)
        def __index__(self):
            raise KeyboardInterrupt

    sampler = SimplicialNeighborSampler(planar, 1, [-1])
    expected = sampler.sample(torch.tensor([0]))[0]

    def hops(frontier, groups):
        sampler._seen[expected[1:]] = True
        groups += [Interrupt(), expected[1:]]

    monkeypatch.setattr(sampler, '_hops', hops)
    with pytest.raises((KeyboardInterrupt, TypeError)):
        sampler.sample(torch.tensor([0]))
    monkeypatch.undo()
    assert not sampler._seen.any()
    assert torch.equal(sampler.sample(torch.tensor([0]))[0], expected)
