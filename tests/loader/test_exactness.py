"""With every neighbour of as many hops as the model's receptive field, the seeds'
outputs on a sampled batch equal their full-batch outputs."""
import pytest
import torch

from torch_geometric_san.data import SimplicialComplexData
from torch_geometric_san.loader import SimplicialNeighborLoader
from torch_geometric_san.nn.conv import SANConv, SCNNConv
from torch_geometric_san.nn.models import SAN, MultiOrderSAN

CHANNELS = 3


def models(k):
    # (name, model, receptive field in hops of the union adjacency)
    torch.manual_seed(0)
    return [
        ('SANConv', SANConv(CHANNELS, 4, J_up=2, J_down=2, J_harmonic=3, heads=2), 3),
        ('SCNNConv', SCNNConv(CHANNELS, 4, J_up=2, J_down=2, normalize=True), 2),
        ('SAN', SAN(CHANNELS, 8, num_layers=2, out_channels=4,
                    order=k, conv_kwargs=dict(J_up=1, J_down=1, J_harmonic=1)), 2),
    ]


def seeds_of(data, k, count=12):
    return torch.randperm(data.num_simplices(k),
                          generator=torch.Generator().manual_seed(1))[:count]


@pytest.mark.parametrize('k', [1, 2])
@pytest.mark.parametrize('case', range(3))
def test_seed_outputs_are_exact(planar, spatial, k, case):
    data = planar if k == 1 else spatial
    name, model, hops = models(k)[case]
    model = model.double().eval()
    full = model(data[f'x_{k}'], data.operators(k))
    loader = SimplicialNeighborLoader(data, [-1] * hops, order=k,
                                      input_simplices=seeds_of(data, k), batch_size=4)
    sampled = 0
    for batch in loader:
        out = model(batch[f'x_{k}'], batch.operators(k))[:batch.batch_size]
        torch.testing.assert_close(out, full[batch.n_id[:batch.batch_size]],
                                   rtol=1e-10, atol=1e-12)
        if name == 'SAN':  # the model reads x_k and operators(k) itself
            torch.testing.assert_close(model(batch)[:batch.batch_size], out)
        sampled = max(sampled, batch.n_id.numel())
    assert sampled < data.num_simplices(k)  # a real sample, not the whole complex


@pytest.mark.parametrize('k', [1, 2])
def test_too_few_hops_are_not_exact(planar, spatial, k):
    # The check above is not vacuous: one hop short, the seeds' outputs change.
    data = planar if k == 1 else spatial
    model = SANConv(CHANNELS, 4, J_up=2, J_down=2, J_harmonic=3).double()
    full = model(data[f'x_{k}'], data.operators(k))
    loader = SimplicialNeighborLoader(data, [-1] * 2, order=k,
                                      input_simplices=seeds_of(data, k), batch_size=12)
    batch = next(iter(loader))
    out = model(batch[f'x_{k}'], batch.operators(k))[:batch.batch_size]
    assert not torch.allclose(out, full[batch.n_id[:batch.batch_size]])


@pytest.mark.parametrize('dangling', [False, True])
def test_a_multi_order_model_is_exact_where_the_lower_orders_are_faces(dangling):
    # A sample of all triangles holds every vertex and edge that is a face of one:
    # a multi-order model is then exact. An edge on no triangle is missing from
    # every sample of triangles, and the outputs change (documented).
    triangles = [[0, 1, 2], [1, 2, 3], [2, 3, 4], [0, 2, 5]]
    simplices = triangles + ([[4, 6]] if dangling else [])
    data = SimplicialComplexData.from_simplices(simplices, close=True,
                                                dtype=torch.float64)
    torch.manual_seed(0)
    for j in range(3):
        data[f'x_{j}'] = torch.randn(data.num_simplices(j), CHANNELS,
                                     dtype=torch.float64)
    model = MultiOrderSAN(CHANNELS, 8, num_layers=2, out_channels=2, readout=None,
                          order=2).double().eval()
    batch = next(iter(SimplicialNeighborLoader(data, [-1] * 4, order=2,
                                               batch_size=len(triangles))))
    assert batch.num_simplices(1) == data.num_simplices(1) - dangling
    out, full = model(batch), model(data)[batch.n_id]
    assert torch.allclose(out, full, rtol=1e-10, atol=1e-12) is not dangling
