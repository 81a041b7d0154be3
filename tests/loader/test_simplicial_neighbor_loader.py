"""SimplicialNeighborLoader: batches, seeds, shuffling, workers, a split over ranks,
training, and bad input."""
from operator import eq

import pytest
import torch
from torch.utils.data import DistributedSampler

from torch_geometric.data import Batch, Data
from torch_geometric.utils import erdos_renyi_graph

from torch_geometric_san.data import SimplicialComplexData
from torch_geometric_san.loader import (PermutationSampler, SimplicialNeighborLoader,
                                        edge_rows)
from torch_geometric_san.nn.models import SAN
from torch_geometric_san.transforms import LiftToCliqueComplex


def seeds_seen(loader):
    return torch.cat([batch.n_id[:batch.batch_size] for batch in loader])


def test_batches(planar):
    planar.y = torch.arange(planar.num_simplices(1))
    loader = SimplicialNeighborLoader(planar, [4, 2], order=1, batch_size=32)
    assert len(loader) == -(-planar.num_simplices(1) // 32)
    assert repr(loader) == 'SimplicialNeighborLoader(order=1, num_neighbors=[4, 2])'
    for batch in loader:
        assert isinstance(batch, SimplicialComplexData) and batch.validate()
        assert batch.batch_size == batch.num_sampled_simplices[0] <= 32
        assert sum(batch.num_sampled_simplices) == batch.n_id.numel() == batch.x_1.size(0)
        assert torch.equal(batch.y, batch.n_id)
    assert torch.equal(seeds_seen(loader), torch.arange(planar.num_simplices(1)))


def test_batch_size_none_samples_one_seed_at_a_time(planar):
    # (the DataLoader hands the sampler one position, not a list of them)
    loader = SimplicialNeighborLoader(planar, [-1], order=1, batch_size=None)
    batched = SimplicialNeighborLoader(planar, [-1], order=1, batch_size=1)
    for batch, expected in zip(loader, batched, strict=True):
        assert batch.batch_size == 1
        assert torch.equal(batch.n_id, expected.n_id)
        assert torch.equal(batch.down_index_1, expected.down_index_1)


def test_batches_of_a_lifted_graph_keep_its_induced_subgraph():
    torch.manual_seed(0)
    graph = Data(edge_index=erdos_renyi_graph(80, 0.1), num_nodes=80,
                 pos=torch.randn(80, 2))
    data = LiftToCliqueComplex(max_order=2)(graph)
    loader = SimplicialNeighborLoader(data, [3, 3], order=1, batch_size=16)
    assert loader.edge_rows is not None
    for batch in loader:
        assert batch.validate()
        kept = torch.isin(data.edge_index, batch.n_id_0).all(0)
        assert torch.equal(batch.n_id_0[batch.edge_index], data.edge_index[:, kept])
        assert torch.equal(batch.pos, data.pos[batch.n_id_0])


def test_input_simplices_and_shuffle(planar):
    mask = torch.arange(planar.num_simplices(1)) % 3 == 0
    torch.manual_seed(0)
    loader = SimplicialNeighborLoader(planar, [2], input_simplices=mask, batch_size=7,
                                      shuffle=True)
    seen = seeds_seen(loader)
    assert not torch.equal(seen, mask.nonzero().view(-1))
    assert torch.equal(seen.sort().values, mask.nonzero().view(-1))
    ids = torch.tensor([9, 3, 40], dtype=torch.int32)
    loader = SimplicialNeighborLoader(planar, [2], input_simplices=ids, batch_size=2)
    assert seeds_seen(loader).tolist() == [9, 3, 40]


def test_shuffle_draws_a_permutation_tensor(planar):
    # shuffle=True: the seeds' positions come from one permutation tensor, not from
    # RandomSampler's Python list of all of them; a generator makes them repeatable
    loader = SimplicialNeighborLoader(planar, [2], batch_size=5, shuffle=True,
                                      generator=torch.Generator().manual_seed(3))
    assert isinstance(loader.sampler, PermutationSampler)
    first = seeds_seen(loader)
    assert torch.equal(first.sort().values, torch.arange(planar.num_simplices(1)))
    assert not torch.equal(first, seeds_seen(loader))  # a new order on every pass
    again = SimplicialNeighborLoader(planar, [2], batch_size=5, shuffle=True,
                                     generator=torch.Generator().manual_seed(3))
    assert torch.equal(seeds_seen(again), first)
    # a sampler of the user's is kept, as without shuffle
    assert isinstance(SimplicialNeighborLoader(planar, [2]).sampler,
                      torch.utils.data.SequentialSampler)


def test_permutation_sampler():
    sampler = PermutationSampler(200_000, torch.Generator().manual_seed(0))
    order = list(sampler)
    assert len(sampler) == 200_000 and sorted(order) == list(range(200_000))
    assert order != list(range(200_000)) and list(PermutationSampler(0)) == []
    with pytest.raises(TypeError, match="generator must be a torch.Generator, not int"):
        PermutationSampler(3, 0)
    with pytest.raises(ValueError, match="n"):
        PermutationSampler(-1)


def test_workers_and_transform(planar):
    def transform(batch):
        batch.tag = 1
        return batch

    loader = SimplicialNeighborLoader(planar, [-1], order=2, batch_size=16,
                                      num_workers=2, transform=transform)
    batches = list(loader)
    assert all(batch.tag == 1 for batch in batches)
    assert torch.equal(torch.cat([b.n_id[:b.batch_size] for b in batches]),
                       torch.arange(planar.num_simplices(2)))


def test_split_over_ranks(planar):
    # DistributedDataParallel: each rank iterates over its own share of the seeds.
    seeds = torch.arange(planar.num_simplices(1))
    shares = []
    for rank in range(3):
        sampler = DistributedSampler(range(seeds.numel()), num_replicas=3, rank=rank,
                                     shuffle=True, seed=0, drop_last=True)
        loader = SimplicialNeighborLoader(planar, [3], batch_size=8, sampler=sampler)
        shares.append(seeds_seen(loader))
    assert len({share.numel() for share in shares}) == 1
    union = torch.cat(shares)
    assert union.unique().numel() == union.numel() >= seeds.numel() - 2


def test_training_step(planar):
    # A loss on the seeds, backpropagated through the sampled operators.
    model = SAN(3, 8, num_layers=2, out_channels=1).double()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    target = planar.x_1.sum(1, keepdim=True)
    for batch in SimplicialNeighborLoader(planar, [5, 5], batch_size=64, shuffle=True):
        optimizer.zero_grad()
        out = model(batch)[:batch.batch_size]
        loss = (out - target[batch.n_id[:batch.batch_size]]).pow(2).mean()
        loss.backward()
        optimizer.step()
        assert torch.isfinite(loss)


def test_bad_input(planar, delaunay):
    n = planar.num_simplices(1)
    with pytest.raises(TypeError, match='tensor'):
        SimplicialNeighborLoader(planar, [2], input_simplices=[0, 1])
    with pytest.raises(TypeError, match='1-D integer'):
        SimplicialNeighborLoader(planar, [2], input_simplices=torch.ones(3))
    with pytest.raises(ValueError, match=rf'shape \[{n}\]'):
        SimplicialNeighborLoader(planar, [2], input_simplices=torch.ones(3, dtype=bool))
    with pytest.raises(ValueError, match='outside'):
        SimplicialNeighborLoader(planar, [2], input_simplices=torch.tensor([0, n]))
    with pytest.raises(ValueError, match='repeated'):
        SimplicialNeighborLoader(planar, [2], input_simplices=torch.tensor([1, 1]))
    with pytest.raises(TypeError, match="sets 'collate_fn'"):
        SimplicialNeighborLoader(planar, [2], collate_fn=list)
    with pytest.raises(TypeError, match='callable'):
        SimplicialNeighborLoader(planar, [2], transform=3)
    with pytest.raises(TypeError, match='must be a SimplicialComplexData, not Data'):
        SimplicialNeighborLoader(Data(num_nodes=3), [2])
    with pytest.raises(TypeError, match='batch of complexes'):
        SimplicialNeighborLoader(Batch.from_data_list([delaunay(10), delaunay(12)]), [2])
    old = planar.clone()
    del old['spectrum_1']
    with pytest.raises(ValueError, match="no 'spectrum_1'"):
        SimplicialNeighborLoader(old, [2])
    # features with a row too many were sampled misaligned (too few: IndexError)
    for rows in (n + 1, n - 1):
        wrong = planar.clone()
        wrong.x_1 = torch.randn(rows, 2)
        with pytest.raises(ValueError, match=f"'x_1' needs one row per 1-simplex, "
                           f"{n} \\(found \\[{rows}, 2\\]\\)"):
            SimplicialNeighborLoader(wrong, [2])


@pytest.mark.parametrize('name, sampler', [
    ('sampler', torch.utils.data.WeightedRandomSampler(torch.ones(4), 4)),
    ('sampler', torch.utils.data.RandomSampler(range(4), replacement=True)),
    ('batch_sampler', torch.utils.data.BatchSampler(
        torch.utils.data.RandomSampler(range(4), replacement=True), 1, False)),
])
def test_a_sampler_with_replacement_is_refused_when_the_loader_is_made(name, sampler):
    # It was refused only when a batch happened to repeat a seed: never with
    # batches of one, and otherwise in the middle of an epoch, by chance.
    data = SimplicialComplexData.from_simplices(
        [[0, 1, 2], [1, 2, 3], [2, 3, 4], [0, 2, 5]], close=True)
    with pytest.raises(ValueError, match=f"the {name} draws with replacement"):
        SimplicialNeighborLoader(data, [-1], order=2, **{name: sampler})


@pytest.mark.parametrize('sampler', [[0, 1, 2, 0], [3, 3, 1, 0]])
def test_a_seed_twice_in_a_batch_is_refused(sampler):
    # The sub-complex held the simplex twice, and MultiOrderSAN's messages to its
    # faces counted it twice (silently wrong outputs).
    data = SimplicialComplexData.from_simplices(
        [[0, 1, 2], [1, 2, 3], [2, 3, 4], [0, 2, 5]], close=True)
    loader = SimplicialNeighborLoader(data, [-1], order=2, batch_size=4, sampler=sampler)
    with pytest.raises(ValueError, match='the sampler gave a seed twice in one batch'):
        next(iter(loader))
    distinct = SimplicialNeighborLoader(data, [-1], order=2, batch_size=2,
                                        sampler=[3, 1, 0, 2])
    assert [batch.n_id[:2].tolist() for batch in distinct] == [[3, 1], [0, 2]]


def test_attributes_set_after_the_loader_is_made_follow_their_simplices(planar):
    # They were copied whole into every batch (batch.y[:batch_size] were the labels
    # of simplices 0..B-1), where PyG's NeighborLoader slices them.
    loader = SimplicialNeighborLoader(planar, [3], order=1, batch_size=8, shuffle=True)
    n = planar.num_simplices(1)
    planar.y = torch.arange(n)
    planar.train_mask = torch.arange(n) % 2 == 0
    planar.pos = torch.randn(planar.num_nodes, 2)
    batch = next(iter(loader))
    assert torch.equal(batch.y, batch.n_id)
    assert torch.equal(batch.train_mask, planar.train_mask[batch.n_id])
    assert torch.equal(batch.pos, planar.pos[batch.n_id_0])
    del planar.y
    assert 'y' not in next(iter(loader))


def test_boundaries_of_another_layout_are_refused(planar):
    # Entries sorted by face (the order of a COO matrix from SciPy's CSR) passed
    # validate() and the loader read the faces of each simplex wrongly (vertex -1).
    other = planar.clone()
    index, weight = planar.boundary(1)
    perm = torch.argsort(index[0] * index.size(1) + index[1])
    other.boundary_index_1, other.boundary_weight_1 = index[:, perm], weight[perm]
    with pytest.raises(ValueError, match="'boundary_index_1' are not sorted by row 1"):
        other.validate()
    with pytest.raises(ValueError, match="boundary entries of order 1 are not 2 per "
                                         "1-simplex in the order of the simplices"):
        SimplicialNeighborLoader(other, [-1], order=1, batch_size=4)


def test_spawned_workers_with_a_generator(planar):
    # The collate function was a method of the loader, so the whole loader went to
    # each worker, with its generator, which a spawned worker cannot rebuild: the
    # workers died. (PyTorch's own DataLoader sends no sampler to its workers.)
    def seeds(**kwargs):
        loader = SimplicialNeighborLoader(
            planar, [2], order=1, batch_size=16, shuffle=True,
            generator=torch.Generator().manual_seed(0), **kwargs)
        return [batch.n_id[:batch.batch_size].tolist() for batch in loader]

    assert seeds(num_workers=1, multiprocessing_context='spawn') == seeds()


def test_a_replaced_graph_is_followed():
    # The graph's rows were cached by id(edge_index): a new edge_index landing on a
    # freed one's id (as the second of two replacements between batches does) kept
    # the old rows: missing edges, or local ids of -1.
    data = SimplicialComplexData.from_simplices([[0, 1, 2], [2, 3], [3, 4]], close=True)
    data.edge_index = torch.tensor([[0, 1], [1, 0]])
    seed = data.simplices_1.tolist().index([2, 3])  # vertices 2 and 3 kept
    loader = SimplicialNeighborLoader(data, [0], order=1,
                                      input_simplices=torch.tensor([seed]))
    assert loader.collate_fn([0]).edge_index.numel() == 0
    data.edge_index = data.edge_index + 2
    data.edge_index = data.edge_index.flip(0)  # [[3, 2], [2, 3]]
    batch = loader.collate_fn([0])
    assert batch.n_id_0[batch.edge_index].tolist() == [[3, 2], [2, 3]]


def test_an_inference_graph_is_followed():
    # Reading the version counter of an inference tensor raised a RuntimeError.
    with torch.inference_mode():
        graph = Data(edge_index=torch.tensor([[0, 1], [1, 0]]), num_nodes=3)
        data = LiftToCliqueComplex(max_order=1)(graph)
        loader = SimplicialNeighborLoader(data, [-1], order=0, batch_size=3)
        batch = next(iter(loader))
    assert batch.n_id[batch.edge_index].tolist() == [[0, 1], [1, 0]]


def _induced_edges(data, batch):
    # The graph edges between the batch's vertices, by brute force.
    vertices = batch.n_id_0 if batch.order > 0 else batch.n_id
    kept = torch.isin(data.edge_index, vertices).all(0)
    return data.edge_index[:, kept]


def test_spawned_workers_follow_a_graph_edited_in_place(planar):
    # The version counter recorded for the graph's rows was compared with that of
    # the spawned worker's copy of the graph, an unrelated number: after an in-place
    # edit, the worker paired the old rows with the new edges (local ids of -1).
    data = planar.clone()
    data.edge_index = data.simplices_1.t().contiguous()
    data.edge_index.add_(0)  # (one in-place operation before the loader is made)
    loader = SimplicialNeighborLoader(data, [-1], order=1, batch_size=64,
                                      num_workers=1, multiprocessing_context='spawn')
    data.edge_index[1] = data.edge_index[1].roll(7)
    for batch in loader:
        edges = batch.n_id_0[batch.edge_index]
        assert torch.equal(edges, _induced_edges(data, batch))


def test_persistent_workers_follow_the_complex_and_the_transform(planar):
    # Persistent workers kept the transform and the complex they had started with:
    # a new transform, and attributes set between epochs, never reached the batches.
    def tag(value):
        def transform(batch):
            batch.tag = value
            return batch
        return transform

    data = planar.clone()
    loader = SimplicialNeighborLoader(data, [-1], order=1, batch_size=64,
                                      num_workers=2, persistent_workers=True,
                                      transform=tag(1))
    assert {batch.tag for batch in loader} == {1}
    workers = loader._iterator
    assert {batch.tag for batch in loader} == {1} and loader._iterator is workers
    loader.transform = tag(2)
    assert {batch.tag for batch in loader} == {2}
    data.y = torch.arange(data.num_simplices(1))
    assert all(torch.equal(batch.y, batch.n_id) for batch in loader)
    data.y.mul_(2)
    assert all(torch.equal(batch.y, 2 * batch.n_id) for batch in loader)


def test_a_batch_holds_its_own_spectra_and_the_class_of_the_complex(planar):
    # An in-place edit of a batch's spectrum changed the complex's (and so every
    # later batch's normalisation); the batches of a subclass were the base class.
    class MyComplex(SimplicialComplexData):
        def __init__(self, name='complex', **kwargs):  # (a default the batches must
            super().__init__(**kwargs)                 # not take: the complex's is
            self.task = torch.tensor(0)                # copied)

    data = MyComplex.from_dict(planar.to_dict())
    data.task = torch.tensor(7)
    before = data.spectrum_1.clone()
    for batch in SimplicialNeighborLoader(data, [-1], order=1, batch_size=64):
        assert type(batch) is MyComplex and int(batch.task) == 7
        batch.spectrum_1.mul_(2)
    assert torch.equal(data.spectrum_1, before)


def test_permutation_sampler_draws_as_random_sampler():
    # Without a generator it drew the permutation from the global generator (about n
    # draws), where RandomSampler draws one seed for a generator of its own.
    from torch.utils.data import RandomSampler
    states = []
    for sampler in (PermutationSampler(50), RandomSampler(range(50))):
        torch.manual_seed(0)
        states.append((list(sampler), torch.get_rng_state()))
    assert states[0][0] == states[1][0] and torch.equal(states[0][1], states[1][1])


def test_collate_fn_and_the_public_properties():
    torch.manual_seed(0)
    graph = Data(edge_index=erdos_renyi_graph(30, 0.2), num_nodes=30)
    data = LiftToCliqueComplex(max_order=2)(graph)
    loader = SimplicialNeighborLoader(data, [-1], order=1, batch_size=8)
    for i, batch in enumerate(loader):  # (seeds in order: no shuffle)
        direct = loader.collate_fn(list(range(8 * i, 8 * i + batch.batch_size)))
        assert sorted(direct.keys()) == sorted(batch.keys())
        for key in batch.keys():
            same = torch.equal if isinstance(batch[key], torch.Tensor) else eq
            assert same(direct[key], batch[key]), key
    rows = edge_rows(data.edge_index, data.num_simplices(0))
    assert all(torch.equal(a, b) for a, b in zip(loader.edge_rows, rows))
    data.z = torch.zeros(data.num_simplices(2))  # (set after the loader was made)
    assert loader.attr_orders['z'] == 2
    loader.transform = lambda batch: batch.update(dict(tag=torch.ones(1)))
    assert torch.equal(next(iter(loader)).tag, torch.ones(1))
    with pytest.raises(TypeError, match="transform"):
        loader.transform = 5
