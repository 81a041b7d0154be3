"""Every layer and model on a CUDA device against the same one on the CPU: outputs
and gradients (the CUDA sparse kernels, the device placement of the derived
operators, batches moved with ``.to``). Skipped where there is no CUDA device."""
import copy
from typing import Callable, Sequence, Tuple

import pytest
import torch
from torch import Tensor

from torch_geometric.loader import DataLoader

from torch_geometric_san.nn import SANConv, SATConv, SCNConv, SCNNConv, SNNConv
from torch_geometric_san.nn.models import SAN, SAT, SCN, SCNN, SNN, MultiOrderSAN

DEVICE = 'cuda'
pytestmark = pytest.mark.skipif(not torch.cuda.is_available(),
                                reason='needs a CUDA device (none here)')

LAYERS = {
    'SANConv': lambda: SANConv(3, 4, J_up=2, J_down=2, J_harmonic=3, heads=2),
    'SANConv (shared attention)': lambda: SANConv(3, 4, J_up=2, J_down=2, J_harmonic=1,
                                                  attention='shared', heads=2),
    'SANConv (orientation-equivariant)': lambda: SANConv(
        6, 4, J_up=3, J_down=1, J_harmonic=5, orientation_equivariant=True, heads=3,
        concat=False),
    'SANConv (no attention)': lambda: SANConv(3, 4, J_up=2, J_down=2, J_harmonic=2,
                                              attention=None),
    'SCNNConv': lambda: SCNNConv(3, 4, J_up=2, J_down=3, J_harmonic=2),
    'SNNConv': lambda: SNNConv(3, 4),
    'SCNConv': lambda: SCNConv(3, 4),
    'SATConv': lambda: SATConv(3, 4),
}


def outputs_and_grads(module: torch.nn.Module, run: Callable[[torch.nn.Module], Tensor],
                      inputs: Sequence[Tensor]) -> Tuple[Tensor, ...]:
    """The output of :obj:`run(module)`, and the gradients of a fixed random
    projection of it with respect to :obj:`inputs` and the parameters, on the CPU."""
    out = run(module)
    weight = torch.randn(out.shape, dtype=out.dtype,
                         generator=torch.Generator().manual_seed(1)).to(out.device)
    grads = torch.autograd.grad((out * weight).sum(), (*inputs, *module.parameters()))
    return tuple(t.detach().cpu() for t in (out, *grads))


def assert_same_on_cuda(module: torch.nn.Module, inputs: Sequence[Tensor],
                        run: Callable[[torch.nn.Module, Sequence[Tensor]], Tensor],
                        atol: float = 1e-10) -> None:
    """:obj:`run(module, inputs)` gives the same output and gradients on the CPU
    and, with copies of the module and inputs, on :data:`DEVICE`."""
    inputs = [x.detach().requires_grad_(x.is_floating_point()) for x in inputs]
    expected = outputs_and_grads(module, lambda m: run(m, inputs), inputs)
    moved = [x.detach().to(DEVICE).requires_grad_(x.is_floating_point()) for x in inputs]
    other = copy.deepcopy(module).to(DEVICE)
    actual = outputs_and_grads(other, lambda m: run(m, moved), moved)
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        assert a.shape == e.shape and torch.allclose(a, e, atol=atol), (a - e).abs().max()


@pytest.mark.parametrize('name', list(LAYERS))
def test_layer(kit, name):
    data = kit.delaunay(14, seed=4)
    torch.manual_seed(0)
    layer = LAYERS[name]().double()
    x = torch.randn(data.num_simplices(1), layer.in_channels, dtype=torch.float64)
    ops = data.operators(1)
    assert_same_on_cuda(layer, [x], lambda m, inputs: m(inputs[0], ops.to(
        inputs[0].device)))


def test_layer_in_single_precision_on_a_larger_complex(kit):
    # float32, where the CUDA sparse kernels (cuSPARSE) take other paths.
    data = kit.delaunay(300, seed=5, dtype=torch.float32)
    torch.manual_seed(0)
    layer = SANConv(8, 16, J_up=2, J_down=2, J_harmonic=5, heads=2)
    x = torch.randn(data.num_simplices(1), 8)
    ops = data.operators(1)
    assert_same_on_cuda(layer, [x], lambda m, inputs: m(inputs[0], ops.to(
        inputs[0].device)), atol=1e-4)


@pytest.mark.parametrize('cls', [SAN, SAT, SCNN, SNN, SCN])
def test_model_over_a_batch_of_complexes(kit, cls):
    complexes = [kit.delaunay(n, seed=n) for n in (9, 12, 10)]
    for i, data in enumerate(complexes):
        data.x_1 = torch.randn(data.num_simplices(1), 3, dtype=torch.float64,
                               generator=torch.Generator().manual_seed(i))
    batch = next(iter(DataLoader(complexes, batch_size=3)))
    torch.manual_seed(0)
    model = cls(3, 8, num_layers=2, out_channels=2, readout='sum').double().eval()

    def run(m, inputs):
        moved = batch.to(inputs[0].device)
        moved.x_1 = inputs[0]
        return m(moved)

    assert_same_on_cuda(model, [batch.x_1], run)


def test_multi_order_model_with_empty_orders(kit):
    # The second and third complexes have no triangles.
    complexes = [kit.delaunay(10, seed=1), kit.delaunay(9, drop_triangles=10 ** 6),
                 kit.delaunay(8, seed=2, drop_triangles=10 ** 6)]
    for i, data in enumerate(complexes):
        for k, c in enumerate((3, 4, 2)):
            data[f'x_{k}'] = torch.randn(data.num_simplices(k), c, dtype=torch.float64,
                                         generator=torch.Generator().manual_seed(i))
    batch = next(iter(DataLoader(complexes, batch_size=3)))
    torch.manual_seed(0)
    model = MultiOrderSAN([3, 4, 2], 8, num_layers=2, out_channels=2, readout='mean',
                          conv_kwargs=dict(J_up=2, J_down=2, J_harmonic=2)).double().eval()

    def run(m, inputs):
        moved = batch.to(inputs[0].device)
        for k, x in enumerate(inputs):
            moved[f'x_{k}'] = x
        return m(moved)

    assert_same_on_cuda(model, [batch[f'x_{k}'] for k in range(3)], run)


@pytest.mark.parametrize('act,odd_act', [('tanh', False), ('relu', True)])
def test_signals_with_their_own_orientations(kit, act, odd_act):
    # The trajectory setting: B signals on one complex, each with its own edge
    # orientation as signs on the shared operators (ReLU through odd_activation).
    data = kit.delaunay(14, seed=3)
    n, B = data.num_simplices(1), 4
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(B, n, 1, dtype=torch.float64, generator=generator)
    signs = torch.where(torch.rand(B, n, generator=generator) < 0.5, -1, 1)
    torch.manual_seed(0)
    model = SAN(1, 4, num_layers=2, out_channels=2, readout='flatten', num_simplices=n,
                act=act, conv_kwargs=dict(J_up=3, J_down=3, J_harmonic=5,
                                          orientation_equivariant=True, bias=False),
                invariant_readout=True, odd_act=odd_act).double().eval()
    ops = data.operators(1)
    assert_same_on_cuda(model, [x], lambda m, inputs: m(inputs[0], ops.to(
        inputs[0].device).reoriented(signs.to(inputs[0].device))))
