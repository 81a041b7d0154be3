import io

import numpy as np
import pytest
import torch
from torch_geometric.loader import DataLoader

from torch_geometric_san.data import SimplicialComplexData

K = 2


def with_features(data, seed):
    gen = torch.Generator().manual_seed(seed)
    data.x_0 = torch.randn(data.num_simplices(0), 3, generator=gen)
    data.x_1 = torch.randn(data.num_simplices(1), 2, generator=gen)
    return data


@pytest.fixture
def complexes(annulus, hollow_tetrahedron, rips_tree):
    out = [
        SimplicialComplexData.from_simplices(annulus, close=True),
        SimplicialComplexData.from_simplex_tree(rips_tree(5, 30, K, 0.3)),
        SimplicialComplexData.from_simplices([[0, 1], [1, 2], [0, 2]], order=K),
        SimplicialComplexData.from_simplices([], num_nodes=1, order=K),
        SimplicialComplexData.from_simplices(hollow_tetrahedron, close=True),
    ]
    return [with_features(data, seed) for seed, data in enumerate(out)]


def block_diagonal(complexes):
    r"""The disjoint union, built from scratch: simplices shifted by vertex offsets."""
    offsets = np.cumsum([0] + [data.num_nodes for data in complexes])
    blocks = [data[f'simplices_{k}'].numpy() + offset
              for k in range(1, K + 1) for data, offset in zip(complexes, offsets)]
    blocks = sorted(blocks, key=lambda b: b.shape[1])  # order by order, stable
    return SimplicialComplexData.from_simplices(
        [b for b in blocks if len(b)], num_nodes=int(offsets[-1]), order=K,
        x_0=torch.cat([data.x_0 for data in complexes]),
        x_1=torch.cat([data.x_1 for data in complexes]))


def test_batch_equals_block_diagonal_complex(complexes):
    batch = next(iter(DataLoader(complexes, batch_size=len(complexes))))
    union = block_diagonal(complexes)
    assert set(batch.keys()) == set(union.keys()) | {'batch', 'ptr'}
    for key in union.keys():
        if key == 'num_nodes':
            assert batch.num_nodes == union.num_nodes
        elif key.startswith('spectrum'):  # one row of eigenvalues per complex
            assert torch.equal(batch[key], torch.cat([d[key] for d in complexes])), key
        elif not key.startswith('hodge_weight'):
            assert torch.equal(batch[key], union[key]), key
    # Each complex keeps its own Hodge normalisation: per complex, the batch's weights
    # are the union's up to one positive factor (the ratio of largest eigenvalues).
    for k in range(K + 1):
        index, weight = batch.hodge_laplacian(k)
        assert torch.equal(index, union[f'hodge_index_{k}'])
        owner = batch.simplex_batch(k)[index[1]]
        ratio = weight / union[f'hodge_weight_{k}']
        for i in owner.unique():
            assert torch.allclose(ratio[owner == i], ratio[owner == i][0])
            assert ratio[owner == i][0] > 0


def test_simplex_batch_per_order(complexes):
    batch = next(iter(DataLoader(complexes, batch_size=len(complexes))))
    for k in range(K + 1):
        sizes = torch.tensor([data.num_simplices(k) for data in complexes])
        expected = torch.repeat_interleave(torch.arange(len(complexes)), sizes)
        assert torch.equal(batch.simplex_batch(k), expected)
        assert batch.num_simplices(k) == int(sizes.sum())


def test_to_data_list_gives_back_the_originals(complexes, assert_data_equal):
    batches = list(DataLoader(complexes, batch_size=2))
    assert len(batches) == 3
    recovered = [data for batch in batches for data in batch.to_data_list()]
    for original, data in zip(complexes, recovered, strict=True):
        assert_data_equal(data, original)


def test_batch_to_device_and_save_load(complexes, device, assert_data_equal):
    batch = next(iter(DataLoader(complexes, batch_size=len(complexes)))).to(device)
    buffer = io.BytesIO()
    torch.save(batch, buffer)
    buffer.seek(0)
    loaded = torch.load(buffer)  # the default weights_only=True: no code runs
    assert type(loaded) is type(batch)
    for k in range(K + 1):
        assert loaded.simplex_batch(k).device.type == device
        assert torch.equal(loaded.simplex_batch(k), batch.simplex_batch(k))
    for original, data in zip(complexes, loaded.to_data_list(), strict=True):
        assert_data_equal(data.to('cpu'), original)
