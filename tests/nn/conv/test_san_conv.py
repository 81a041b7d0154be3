import os
import pickle
import subprocess
import sys
import warnings

import numpy as np
import pytest
import torch

from torch_geometric.loader import DataLoader
from torch_geometric.nn import GATConv
from torch_geometric.typing import WITH_TORCH_SPARSE, SparseTensor
from torch_geometric.utils import scatter

from torch_geometric_san.data import SimplicialComplexData
from torch_geometric_san.nn import (SANConv, SATConv, SCNConv, SCNNConv, SNNConv,
                                   dense_san_conv)

CONFIGS = [
    dict(),
    dict(J_up=2, J_down=3, J_harmonic=2, heads=2),
    dict(J_up=3, J_down=1, J_harmonic=5, eps=0.5, heads=3, concat=False),
    dict(J_up=2, J_down=2, J_harmonic=None, add_self_loops=False),
    dict(J_up=2, J_down=2, J_harmonic=1, attention='shared', heads=2),
    dict(J_up=2, J_down=2, J_harmonic=2, attention=None),
    dict(J_up=1, J_down=1, J_harmonic=None, attention=None, shared_weights=True),
    dict(J_up=2, J_down=2, J_harmonic=3, orientation_equivariant=True, heads=2),
    dict(J_up=0, J_down=2, J_harmonic=0, negative_slope=0.05),
]


def make_conv(in_channels=3, out_channels=4, **kwargs):
    torch.manual_seed(12345)
    return SANConv(in_channels, out_channels, **kwargs).double()


# Every propagation path against the dense equations: input channels below the
# output channels propagate the input and apply the filter weights after (1 or 3),
# above (6) Horner's rule on the filter taps; with several heads, attention
# coefficients per head are applied by gathering for one feature per head (1
# input channel, or 1 output channel) and through the block-diagonal operator
# above; fixed values in one product over all heads.
@pytest.mark.parametrize('config', CONFIGS)
@pytest.mark.parametrize('in_channels,out_channels', [(1, 4), (3, 4), (6, 4), (6, 1)])
def test_matches_dense_equations(kit, config, in_channels, out_channels):
    data = kit.delaunay(14, seed=1)
    x = torch.randn(data.num_simplices(1), in_channels, dtype=torch.float64)
    conv = make_conv(in_channels, out_channels, **config)
    out = conv(x, kit.operators(data, 1))
    expected = dense_san_conv(conv, x, *kit.dense_operators(data, 1))
    heads = conv.heads if conv.concat else 1
    assert out.shape == (x.size(0), out_channels * heads)
    assert torch.allclose(out, expected, atol=1e-12)


@pytest.mark.parametrize('conv_cls', [SCNNConv, SNNConv, SCNConv])
def test_fixed_layers_normalise_per_complex(kit, conv_cls):
    # Each complex of a batch is scaled by its own largest eigenvalues, as alone.
    complexes = [kit.delaunay(9, seed=3), kit.clique(8, 0.6, seed=4, max_order=2)]
    for data in complexes:
        data.x_1 = torch.randn(data.num_simplices(1), 3, dtype=torch.float64)
    torch.manual_seed(0)
    conv = conv_cls(3, 4).double()
    batch = next(iter(DataLoader(complexes, batch_size=2)))
    out = conv(batch.x_1, batch.operators(1))
    alone = [conv(d.x_1, d.operators(1)) for d in complexes]
    assert torch.allclose(out, torch.cat(alone), atol=1e-12)
    up, down, hodge = kit.dense_operators(complexes[0], 1)
    expected = dense_san_conv(conv, complexes[0].x_1, up, down, hodge)
    assert torch.allclose(alone[0], expected, atol=1e-12)
    raw = conv_cls(3, 4, normalize=False).double()
    raw.load_state_dict(conv.state_dict())
    assert not torch.allclose(raw(complexes[0].x_1, complexes[0].operators(1)),
                              alone[0])


@pytest.mark.parametrize('k', [0, 1, 2, 3])
def test_every_order(kit, k):
    data = kit.clique(10, 0.7, seed=1)  # order 3: nodes have no down, tetrahedra no up
    x = torch.randn(data.num_simplices(k), 3, dtype=torch.float64)
    conv = make_conv(J_up=2, J_down=2, J_harmonic=3, heads=2)
    out = conv(x, kit.operators(data, k))
    assert torch.allclose(out, dense_san_conv(conv, x, *kit.dense_operators(data, k)),
                          atol=1e-12)


def test_missing_operator_contributes_zero(kit):
    data = kit.delaunay(10)
    up_index, up_weight, _, _, hodge_index, hodge_weight = kit.legacy(data, 0)
    x = torch.randn(data.num_simplices(0), 3, dtype=torch.float64)
    conv = make_conv(J_up=2, J_down=2, J_harmonic=2)
    empty = torch.empty(2, 0, dtype=torch.long), torch.empty(0, dtype=torch.float64)
    out_none = conv(x, up_index, up_weight, None, None, hodge_index, hodge_weight)
    out_empty = conv(x, up_index, up_weight, *empty, hodge_index, hodge_weight)
    no_down = make_conv(J_up=2, J_down=0, J_harmonic=2)
    no_down.lin.weight.data.copy_(conv.lin.weight.data[torch.cat(
        [torch.arange(8), torch.arange(16, 20)])])
    no_down.att['up_src'].data.copy_(conv.att['up_src'].data)
    no_down.att['up_dst'].data.copy_(conv.att['up_dst'].data)
    expected = no_down(x, up_index, up_weight, hodge_index=hodge_index,
                       hodge_weight=hodge_weight)
    assert torch.allclose(out_none, expected)
    assert torch.allclose(out_empty, expected)


@pytest.mark.parametrize('add_self_loops', [True, False])
def test_empty_neighbourhoods_give_zero_messages(kit, add_self_loops):
    # No triangles at all: the upper Laplacian of the edges is [2, 0].
    data = kit.delaunay(10, drop_triangles=10 ** 6)
    assert data.num_simplices(2) == 0
    up_index, up_weight, down_index, down_weight, *_ = kit.legacy(data, 1)
    assert up_index.shape == (2, 0)
    x = torch.randn(data.num_simplices(1), 3, dtype=torch.float64)
    conv = make_conv(J_up=2, J_down=1, J_harmonic=None, bias=False,
                     add_self_loops=add_self_loops)
    out, (up, down) = conv(x, up_index, up_weight, down_index, down_weight,
                           return_attention_weights=True)
    only_down = conv(x, None, None, down_index, down_weight)
    assert torch.isfinite(out).all()
    assert torch.equal(out, only_down)
    assert up[1].shape == (0, 1)
    # An isolated simplex (no lower neighbour either): a zero row, never NaN.
    diagonal = torch.tensor([[0, 1], [0, 1]]), torch.tensor([2., 2.]).double()
    x = torch.randn(3, 3, dtype=torch.float64)
    out = conv(x, down_index=diagonal[0], down_weight=diagonal[1])
    assert torch.isfinite(out).all()
    assert torch.equal(out[2], torch.zeros(4, dtype=torch.float64))
    assert out[0].abs().sum() > 0 if add_self_loops else out[0].abs().sum() == 0


def test_partially_empty_up_neighbourhood(kit):
    # Some edges lie in no triangle: their upper rows are empty (no self-loop).
    data = kit.delaunay(12, drop_triangles=6)
    ops = kit.legacy(data, 1)
    x = torch.randn(data.num_simplices(1), 3, dtype=torch.float64)
    conv = make_conv(J_up=2, J_down=0, J_harmonic=None, bias=False)
    out = conv(x, *ops)
    lonely = kit.dense(ops[0], ops[1], x.size(0)).abs().sum(dim=1) == 0
    assert lonely.any() and not lonely.all()
    assert torch.isfinite(out).all()
    assert torch.equal(out[lonely], torch.zeros_like(out[lonely]))
    assert (out[~lonely].abs().sum(dim=1) > 0).all()


@pytest.mark.parametrize('heads,concat', [(1, True), (3, True), (2, False)])
def test_gat_is_a_special_case(heads, concat):
    torch.manual_seed(0)
    x = torch.randn(7, 5)
    edge_index = torch.tensor([[0, 1, 2, 3, 4, 5, 6, 1, 2, 0, 3],
                               [1, 0, 3, 2, 5, 4, 0, 6, 0, 2, 6]])
    gat = GATConv(5, 4, heads=heads, concat=concat, add_self_loops=False, bias=False)
    conv = SANConv(5, 4, J_up=1, J_down=0, J_harmonic=None, heads=heads,
                   concat=concat, add_self_loops=False, bias=False)
    conv.lin.weight.data.copy_(gat.lin.weight.data)
    conv.att['up_src'].data.copy_(gat.att_src.data)
    conv.att['up_dst'].data.copy_(gat.att_dst.data)
    out, (index, alpha) = gat(x, edge_index, return_attention_weights=True)
    out_san, (up, down) = conv(x, up_index=edge_index, return_attention_weights=True)
    assert down is None
    assert torch.allclose(out, out_san, atol=1e-6)
    # Same coefficients, edge by edge:
    n = x.size(0)
    order = (index[1] * n + index[0]).argsort()
    order_san = (up[0][1] * n + up[0][0]).argsort()
    assert torch.equal(index[:, order], up[0][:, order_san])
    assert torch.allclose(alpha[order], up[1][order_san], atol=1e-6)


@pytest.mark.parametrize('orientation_equivariant', [False, True])
def test_attention_sums_to_one_per_neighbourhood(kit, orientation_equivariant):
    data = kit.delaunay(14, drop_triangles=4)
    ops = kit.legacy(data, 1)
    x = torch.randn(2, data.num_simplices(1), 3, dtype=torch.float64)
    conv = make_conv(J_up=2, J_down=2, heads=3,
                     orientation_equivariant=orientation_equivariant)
    _, attention = conv(x, *ops, return_attention_weights=True)
    for (index, alpha), (lap_index, lap_weight) in zip(attention, (ops[:2], ops[2:4])):
        assert alpha.shape == (2, index.size(1), 3)
        assert (alpha >= 0).all()
        total = scatter(alpha, index[1], dim=1, dim_size=x.size(1), reduce='sum')
        rows = kit.dense(lap_index, lap_weight, x.size(1)).abs().sum(dim=1) > 0
        assert torch.allclose(total[:, rows], torch.ones_like(total[:, rows]))
        assert torch.equal(total[:, ~rows], torch.zeros_like(total[:, ~rows]))


def test_permutation_equivariance(kit):
    data = kit.delaunay(14, seed=3)
    n = data.num_simplices(1)
    ops = kit.legacy(data, 1)
    x = torch.randn(n, 3, dtype=torch.float64)
    conv = make_conv(J_up=2, J_down=2, J_harmonic=3, heads=2)
    perm = torch.randperm(n)
    inverse = torch.empty_like(perm)
    inverse[perm] = torch.arange(n)  # simplex i becomes inverse[i]
    permuted = [inverse[t] if t.dtype == torch.long else t for t in ops]
    out = conv(x, *ops)
    out_perm = conv(x[perm], *permuted)
    assert torch.allclose(out_perm, out[perm], atol=1e-12)


def _hops(kit, data, k, n_hops):
    up, _, down, _, _, _ = kit.legacy(data, k)
    n = data.num_simplices(k)
    adj = (kit.dense(up, None, n) + kit.dense(down, None, n) + torch.eye(n)) > 0
    reach = torch.eye(n, dtype=torch.bool)
    for _ in range(n_hops):
        reach = (reach.double() @ adj.double()) > 0
    return reach


@pytest.mark.parametrize('J', [1, 2])
def test_locality(kit, J):
    data = kit.delaunay(30, seed=2)
    n = data.num_simplices(1)
    ops = kit.operators(data, 1)
    conv = make_conv(J_up=J, J_down=J, J_harmonic=None)
    reach = _hops(kit, data, 1, J)
    i = 0
    outside = (~reach[i]).nonzero().view(-1)
    inside = (reach[i] & ~_hops(kit, data, 1, J - 1)[i]).nonzero().view(-1)
    assert outside.numel() > 0 and inside.numel() > 0
    x = torch.randn(n, 3, dtype=torch.float64)
    out = conv(x, ops)
    changed = x.clone()
    changed[outside] += torch.randn(outside.numel(), 3, dtype=torch.float64)
    assert torch.allclose(conv(changed, ops)[i], out[i], atol=1e-12)
    changed = x.clone()
    changed[inside[0]] += 1.0  # J hops away: must matter
    assert not torch.allclose(conv(changed, ops)[i], out[i])


def test_batch_of_two_complexes_equals_each_alone(kit):
    complexes = []
    for seed, points in ((4, 12), (5, 9)):
        data = kit.delaunay(points, seed=seed)
        data.x_1 = torch.randn(data.num_simplices(1), 3, dtype=torch.float64)
        complexes.append(data)
    batch = next(iter(DataLoader(complexes, batch_size=2)))
    conv = make_conv(J_up=2, J_down=2, J_harmonic=3, heads=2)
    out = conv(batch.x_1, kit.operators(batch, 1))
    alone = torch.cat([conv(d.x_1, kit.operators(d, 1)) for d in complexes])
    assert torch.allclose(out, alone, atol=1e-12)


# 1 input channel below 4 output channels: the signals and heads are propagated
# side by side (SparseOperator.matmul_grouped); 2 and 3: block-diagonal operator
# on the input; 6: on the filter taps.
@pytest.mark.parametrize('config', [CONFIGS[0], CONFIGS[1], CONFIGS[4], CONFIGS[5],
                                    CONFIGS[7]])
@pytest.mark.parametrize('in_channels', [1, 2, 3, 6])
def test_batched_signals_equal_separate_runs(kit, config, in_channels):
    data = kit.delaunay(12, seed=6)
    ops = kit.operators(data, 1)
    x = torch.randn(4, data.num_simplices(1), in_channels, dtype=torch.float64)
    conv = make_conv(in_channels, **config)
    attention = conv.attention is not None or None
    result = conv(x, ops, return_attention_weights=attention)
    out = result[0] if isinstance(result, tuple) else result
    for b in range(x.size(0)):
        single = conv(x[b], ops, return_attention_weights=attention)
        if isinstance(single, tuple):
            for (index, alpha), (index_b, alpha_b) in zip(result[1], single[1]):
                assert torch.equal(index, index_b)
                assert torch.allclose(alpha[b], alpha_b, atol=1e-12)
            single = single[0]
        assert torch.allclose(out[b], single, atol=1e-12)


def _member(conv: SANConv, member: int, **config) -> SANConv:
    # A plain layer with the parameters of one member of an ensemble.
    single = SANConv(conv.in_channels, conv.out_channels, **config).double()
    single.load_state_dict({key: value[member:member + 1] if key.startswith('att')
                            else value[member] for key, value in conv.state_dict().items()})
    return single


# Every path (input or taps propagated, gathered or block-diagonal coefficients,
# fixed values, bilinear scores) with one parameter set per member: each member
# computes, and gets the gradients of, a plain layer with its parameters.
@pytest.mark.parametrize('config', CONFIGS)
@pytest.mark.parametrize('in_channels,out_channels', [(1, 4), (6, 4), (6, 1)])
def test_ensemble_members_equal_separate_layers(kit, config, in_channels, out_channels):
    data = kit.delaunay(12, seed=6)
    ops = kit.operators(data, 1)
    torch.manual_seed(3)
    conv = SANConv(in_channels, out_channels, ensemble=3, **config).double()
    assert conv.lin.weight.shape[0] == 3 and 'ensemble=3' in repr(conv)
    x = torch.randn(3, data.num_simplices(1), in_channels, dtype=torch.float64,
                    requires_grad=True)
    out = conv(x, ops)
    out.pow(2).sum().backward()
    # Members are drawn independently.
    assert not torch.equal(conv.lin.weight[0], conv.lin.weight[1])
    for member in range(3):
        single = _member(conv, member, **config)
        x_m = x.detach()[member].clone().requires_grad_()
        out_m = single(x_m, ops)
        out_m.pow(2).sum().backward()
        assert torch.allclose(out[member], out_m, atol=1e-12)
        assert torch.allclose(x.grad[member], x_m.grad, atol=1e-12)
        for (key, param), param_m in zip(conv.named_parameters(), single.parameters()):
            assert torch.allclose(param.grad[member].view_as(param_m.grad), param_m.grad,
                                  atol=1e-12), key


def test_ensemble_needs_one_signal_per_member(kit):
    data = kit.delaunay(8)
    ops = kit.operators(data, 1)
    conv = SANConv(2, 4, ensemble=3).double()
    n = data.num_simplices(1)
    for shape in [(n, 2), (2, n, 2), (4, n, 2)]:
        with pytest.raises(ValueError, match="ensemble of 3"):
            conv(torch.randn(*shape, dtype=torch.float64), ops)
    with pytest.raises(ValueError, match="ensemble"):
        SANConv(2, 4, ensemble=0)
    with pytest.raises(TypeError, match="ensemble"):
        SANConv(2, 4, ensemble=2.0)


@pytest.mark.parametrize('config', [
    dict(J_up=2, J_down=2, J_harmonic=2, heads=2),
    dict(J_up=2, J_down=1, J_harmonic=1, orientation_equivariant=True),
    dict(J_up=2, J_down=2, J_harmonic=0, attention=None),
])
@pytest.mark.parametrize('shape', [(), (2, )])  # (2, ): two signals, one channel
def test_gradcheck(kit, config, shape):
    data = kit.delaunay(7, seed=7)
    ops = kit.operators(data, 1)
    in_channels = 1 if shape else 2
    x = torch.randn(*shape, data.num_simplices(1), in_channels, dtype=torch.float64,
                    requires_grad=True)
    conv = make_conv(in_channels, 2, **config)
    params = tuple(conv.parameters())

    def fn(x, *params):
        return conv(x, ops)

    assert torch.autograd.gradcheck(fn, (x, *params))


def test_gradgradcheck(kit):
    data = kit.delaunay(6, seed=8)
    ops = kit.operators(data, 1)
    x = torch.randn(data.num_simplices(1), 2, dtype=torch.float64, requires_grad=True)
    conv = make_conv(2, 2, J_up=2, J_down=1, J_harmonic=1)
    assert torch.autograd.gradgradcheck(lambda x: conv(x, ops), (x, ), fast_mode=True)


@pytest.mark.parametrize('kwargs', [dict(), dict(attention=None), dict(heads=2),
                                    dict(orientation_equivariant=True)])
def test_cpu_autocast_runs_the_layer_in_its_parameters_dtype(kit, kwargs):
    # (session 28: a narrower input was refused with a message about internal
    # 'value' arguments, the equivariant one about 'a' and 'b', attention=None ran
    # in bfloat16, a wider input got the half-precision refusal)
    data = kit.delaunay(6, seed=8)
    ops = kit.operators(data, 1)
    x = torch.randn(data.num_simplices(1), 3)
    torch.manual_seed(0)
    conv = SANConv(3, 8, **kwargs)
    with torch.autocast('cpu', dtype=torch.bfloat16):
        out, half = conv(x, ops), conv(x.bfloat16(), ops)
    assert out.dtype == torch.float32 and torch.equal(out, conv(x, ops))
    assert torch.equal(half, conv(x.bfloat16().float(), ops))

    class Doubling(SANConv):  # (a subclass's forward ran twice under autocast)
        def forward(self, x, ops):
            return super().forward(2 * x, ops)

    torch.manual_seed(0)
    doubling = Doubling(3, 8, **kwargs)
    with torch.autocast('cpu', dtype=torch.bfloat16):
        assert torch.equal(doubling(x, ops), conv(2 * x, ops))
    with pytest.raises(TypeError, match="'x' must be a floating-point tensor"):
        conv([[1.0]], ops)  # (an AttributeError on x.device)
    # (failed inside torch, after advice to convert the layer to float8)
    with pytest.raises(TypeError, match="'x' is torch.float8_e4m3fn, in which torch "
                                        "has no arithmetic"):
        conv(x.to(torch.float8_e4m3fn), ops)
    with pytest.raises(TypeError, match="'x' must be a dense tensor \\(got a nested"):
        conv(torch.nested.nested_tensor([x[0], x[1]]), ops)


def test_a_lazy_layer_whose_first_call_is_interrupted_is_made_at_the_next(kit,
                                                                        monkeypatch):
    # A Ctrl-C between making the weight and initialising it left the layer unusable
    # (with in_channels=-1 and a weight made, every later call raised that the lazy
    # weight was lost to another device type).
    from torch_geometric_san.nn.conv import san_conv
    data = kit.delaunay(10, seed=3)
    ops = kit.operators(data, 1)
    x = torch.randn(data.num_simplices(1), 3)
    torch.manual_seed(0)
    conv = SANConv(-1, 8, J_up=2, J_down=2, J_harmonic=2)
    torch.manual_seed(0)
    alone = SANConv(-1, 8, J_up=2, J_down=2, J_harmonic=2)

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(san_conv, 'reset_weight_', interrupted)
    with pytest.raises(KeyboardInterrupt):
        conv(x, ops)
    monkeypatch.undo()
    assert conv.lin.in_channels == -1
    torch.manual_seed(1)
    out = conv(x, ops)
    torch.manual_seed(1)
    assert torch.equal(out, alone(x, ops))


def test_a_lazy_layer_first_called_by_several_threads(kit):
    # (session 28: threads computed with a weight made but not initialised, made it
    # twice, or failed on the uninitialised parameter)
    import threading
    data = kit.delaunay(10, seed=3)
    ops = kit.operators(data, 1)
    x = torch.randn(data.num_simplices(1), 3)
    for seed in range(10):
        torch.manual_seed(seed)
        conv = SANConv(-1, 8, heads=2, J_up=2, J_down=2, J_harmonic=2).eval()
        torch.manual_seed(seed)
        alone = SANConv(-1, 8, heads=2, J_up=2, J_down=2, J_harmonic=2).eval()
        state = torch.get_rng_state()  # (the first call draws the lazy weight)
        barrier, outputs = threading.Barrier(4), []

        def work():
            barrier.wait()
            with torch.no_grad():
                outputs.append(conv(x, ops))

        threads = [threading.Thread(target=work) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        torch.set_rng_state(state)
        with torch.no_grad():
            expected = alone(x, ops)  # (the same initialisation, made alone)
        assert len(outputs) == 4 and all(torch.equal(out, expected) for out in outputs)


@pytest.mark.parametrize('kernels', ['1', '0'])
def test_torch_func_transforms_of_attention_are_refused(kit, kernels, monkeypatch):
    # They stopped on torch's message about overriding setup_context, which names
    # the package's internals (session 28); reverse mode by autograd stays.
    from torch.func import functional_call, grad, vmap
    monkeypatch.setenv('TGSAN_COMPILED_KERNELS', kernels)
    data = kit.delaunay(6, seed=8)
    ops = kit.operators(data, 1)
    x = torch.randn(data.num_simplices(1), 2, dtype=torch.float64)
    conv = make_conv(2, 2)
    params = dict(conv.named_parameters())
    match = (r"does not run under torch.func's transforms \(grad, vjp, jacrev, vmap, "
             r"functional_call inside them, ...\): use loss.backward\(\) or "
             r"torch.autograd.grad")
    with pytest.raises(NotImplementedError, match=match):
        grad(lambda p: functional_call(conv, p, (x, ops)).sum())(params)
    with pytest.raises(NotImplementedError, match=match):
        vmap(lambda x: conv(x, ops))(x.expand(3, -1, -1))
    conv(x, ops).sum().backward()
    assert all(p.grad is not None for p in conv.parameters())


@pytest.mark.parametrize('config', CONFIGS)
def test_operators_first_used_in_inference_mode_train(config):
    # The forms a layer derives are kept on the operators (and data.operators(k)
    # keeps the operators): made in inference mode they were inference tensors,
    # and the first training step failed inside autograd ("Inference tensors
    # cannot be saved for backward").
    data = SimplicialComplexData.from_simplices([[0, 1, 2], [1, 2, 3]], close=True)
    conv = make_conv(**config)
    x = torch.randn(data.num_simplices(1), 3, dtype=torch.float64, requires_grad=True)
    with torch.inference_mode():
        expected = conv(x, data.operators(1))
    out = conv(x, data.operators(1))
    out.sum().backward()
    assert torch.allclose(out, expected) and x.grad is not None


# Compiled: the same outputs and gradients, also when the operators' forms were
# derived by an eager call before (they are then inputs of the compiled graph).
@pytest.mark.parametrize('config,in_channels', [(CONFIGS[1], 3), (CONFIGS[7], 6),
                                                (CONFIGS[0], 6), (CONFIGS[5], 3)])
def test_torch_compile_gives_the_same_output(kit, config, in_channels,
                                            inductor_compiles_the_layer):
    data = kit.delaunay(8, seed=9)
    ops = kit.operators(data, 1)
    x = torch.randn(data.num_simplices(1), in_channels, dtype=torch.float64,
                    requires_grad=True)
    conv = make_conv(in_channels, **config)
    expected = conv(x, ops)
    grad = torch.randn_like(expected)
    expected_grads = torch.autograd.grad(expected, (x, *conv.parameters()), grad)
    compiled = torch.compile(conv)
    out = compiled(x, ops)
    assert torch.allclose(out, expected, atol=1e-10)
    grads = torch.autograd.grad(out, (x, *conv.parameters()), grad)
    for actual, wanted in zip(grads, expected_grads):
        assert torch.allclose(actual, wanted, atol=1e-10)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device here")
def test_cuda_matches_cpu(kit):
    data = kit.delaunay(12, seed=10)
    ops = kit.operators(data, 1)
    x = torch.randn(2, data.num_simplices(1), 3, dtype=torch.float64)
    conv = make_conv(J_up=2, J_down=2, J_harmonic=3, heads=2)
    expected = conv(x, ops)
    out = conv.cuda()(x.cuda(), ops.to('cuda'))
    assert out.is_cuda
    assert torch.allclose(out.cpu(), expected, atol=1e-10)
    out.sum().backward()


def test_sparse_tensor_inputs(kit):
    data = kit.delaunay(12, seed=11)
    ops = kit.legacy(data, 1)
    n = data.num_simplices(1)
    x = torch.randn(n, 3, dtype=torch.float64)
    conv = make_conv(J_up=2, J_down=2, J_harmonic=2, orientation_equivariant=True)
    expected = conv(x, *ops)

    def adj_t(index, weight):
        return torch.sparse_coo_tensor(index.flip(0), weight, (n, n),
                                       check_invariants=True)

    coo = [adj_t(*ops[i:i + 2]) for i in (0, 2, 4)]
    out = conv(x, coo[0], None, coo[1], None, coo[2], None)
    assert torch.allclose(out, expected, atol=1e-12)
    csr = [a.to_sparse_csr() for a in coo]
    out = conv(x, csr[0], None, csr[1], None, csr[2], None)
    assert torch.allclose(out, expected, atol=1e-12)


@pytest.mark.skipif(not WITH_TORCH_SPARSE, reason="torch_sparse is not installed "
                    "(or blocked by TGSAN_WITHOUT_EXTENSIONS=1)")
def test_torch_sparse_inputs(kit):
    data = kit.delaunay(12, seed=11)
    ops = kit.legacy(data, 1)
    n = data.num_simplices(1)
    x = torch.randn(n, 3, dtype=torch.float64)
    conv = make_conv(J_up=2, J_down=2, J_harmonic=2, orientation_equivariant=True)
    sparse = [SparseTensor(row=ops[i][1], col=ops[i][0], value=ops[i + 1],
                           sparse_sizes=(n, n)) for i in (0, 2, 4)]
    out = conv(x, sparse[0], None, sparse[1], None, sparse[2], None)
    assert torch.allclose(out, conv(x, *ops), atol=1e-12)


def test_layers_keep_no_operator_state(kit):
    # The derived forms live on the operators: a layer pickles after a forward
    # pass, and two complexes in turn give each its own output.
    first, second = kit.delaunay(10, seed=12), kit.delaunay(11, seed=13)
    conv = make_conv(J_up=2, J_down=2, J_harmonic=2)
    ops = kit.operators(first, 1)
    x = torch.randn(first.num_simplices(1), 3, dtype=torch.float64)
    out = conv(x, ops)
    assert ops.up._cache and ops.hodge._cache  # derived once, kept on the value
    copy = pickle.loads(pickle.dumps(conv))
    assert torch.equal(copy(x, ops), out)
    y = torch.randn(second.num_simplices(1), 3, dtype=torch.float64)
    assert torch.allclose(conv(y, kit.operators(second, 1)),
                          dense_san_conv(conv, y, *kit.dense_operators(second, 1)))
    assert torch.equal(conv(x, ops), out)


def test_legacy_inputs_equal_the_operators_value(kit):
    data = kit.delaunay(10, seed=12)
    x = torch.randn(data.num_simplices(1), 3, dtype=torch.float64)
    for config in (dict(J_harmonic=2), dict(attention=None, normalize=True)):
        conv = make_conv(J_up=2, J_down=2, **config)
        expected = conv(x, data.operators(1))
        assert torch.allclose(conv(x, *kit.legacy(data, 1)), expected, atol=1e-12)
        ups, downs, hodges = (kit.legacy(data, 1)[i:i + 2] for i in (0, 2, 4))
        named = conv(x, up_index=ups[0], up_weight=ups[1], down_index=downs[0],
                     down_weight=downs[1], hodge_index=hodges[0],
                     hodge_weight=hodges[1])
        assert torch.allclose(named, expected, atol=1e-12)


def test_attention_dropout(kit):
    data = kit.delaunay(12, seed=14)
    ops = kit.operators(data, 1)
    x = torch.randn(data.num_simplices(1), 3, dtype=torch.float64)
    conv = make_conv(J_up=2, J_down=2, dropout=0.5)
    conv.eval()
    assert torch.equal(conv(x, ops), conv(x, ops))
    conv.train()
    assert not torch.allclose(conv(x, ops), conv(x, ops))


def test_reset_parameters_and_gain():
    torch.manual_seed(0)
    conv = SANConv(16, 8, J_up=2, J_down=2, J_harmonic=0, heads=2)
    bound = (6 / (16 + 16)) ** 0.5  # Glorot of one [heads * out, in] tap block
    assert conv.lin.weight.abs().max() <= bound
    assert conv.lin.weight.abs().max() > 0.9 * bound
    conv = SANConv(16, 8, J_up=2, J_down=2, J_harmonic=0, heads=2, gain=2.0)
    assert conv.lin.weight.abs().max() > 1.8 * bound
    assert torch.equal(conv.bias, torch.zeros(16))
    assert str(conv) == ("SANConv(16, 8, J_up=2, J_down=2, J_harmonic=0, heads=2, "
                         "attention='separate')")


@pytest.mark.parametrize('orientation_equivariant', [False, True])
def test_huge_signals_give_finite_outputs(kit, orientation_equivariant):
    # Scores of signals near 1e20 overflow float32 (the bilinear ones square them).
    data = kit.delaunay(10, dtype=torch.float32)
    torch.manual_seed(0)
    conv = SANConv(3, 4, J_up=2, J_down=2, J_harmonic=2, heads=2,
                   orientation_equivariant=orientation_equivariant)
    x = torch.randn(data.num_simplices(1), 3) * 1e20
    out = conv(x, data.operators(1))
    assert torch.isfinite(out).all()


def test_explainers_are_refused(kit):
    data = kit.delaunay(8)
    conv = make_conv()
    conv.explain = True
    with pytest.raises(NotImplementedError, match="explainers"):
        conv(torch.randn(data.num_simplices(1), 3, dtype=torch.float64),
             data.operators(1))


def test_cached_was_removed():
    with pytest.raises(TypeError, match="'cached' was removed"):
        SANConv(3, 4, cached=True)


@pytest.mark.parametrize('cls,kwargs,match', [
    (SNNConv, dict(J_up=2), "SNNConv fixes J_up=1;"),
    (SNNConv, dict(shared_weights=False), "SNNConv fixes shared_weights=True;"),
    (SATConv, dict(J_up=2, attention=None), "SATConv fixes J_up=1, attention='shared';"),
    (SCNNConv, dict(attention='shared'), "SCNNConv fixes attention=None;"),
    (SCNConv, dict(J_harmonic=1), "SCNConv fixes J_harmonic=0;"),
    (SCNConv, dict(attention='shared'), "SCNConv fixes attention=None;"),
])
def test_special_cases_refuse_what_they_fix(cls, kwargs, match):
    with pytest.raises(TypeError, match=match + " use SANConv"):
        cls(3, 4, **kwargs)


def test_repr_names_the_settings_that_differ_from_their_defaults():
    # (session 28: SANConv printed none of its settings beyond these five, so that
    # layers computing different functions printed the same)
    base = "SANConv(3, 4, J_up=1, J_down=1, J_harmonic=0, heads=1, attention='separate'"
    assert str(SANConv(3, 4)) == base + ")"
    assert str(SANConv(3, 4, J_harmonic=2, eps=0.5)) == base.replace(
        'J_harmonic=0', 'J_harmonic=2') + ", eps=0.5)"
    assert str(SANConv(3, 4, J_harmonic=2, eps=np.float32(0.9))) == base.replace(
        'J_harmonic=0', 'J_harmonic=2') + ", eps=0.8999999761581421)"
    assert str(SANConv(3, 4, concat=False, dropout=0.5, add_self_loops=False)) == \
        base + ", concat=False, dropout=0.5, add_self_loops=False)"
    assert str(SANConv(3, 4, negative_slope=0.1, orientation_equivariant=True)) == \
        base + ", negative_slope=0.1, orientation_equivariant=True)"
    assert str(SANConv(3, 4, shared_weights=True)) == base + ", shared_weights=True)"
    assert str(SANConv(3, 4, attention=None, normalize=True)) == base.replace(
        "'separate'", 'None') + ", normalize=True)"
    assert str(SANConv(3, 4, bias=False)) == base + ", bias=False)"
    # the special cases show their free settings too
    assert str(SATConv(3, 4, concat=False, dropout=0.5, add_self_loops=False)) == \
        'SATConv(3, 4, heads=1, concat=False, dropout=0.5, add_self_loops=False)'
    assert str(SCNNConv(3, 4, J_harmonic=2, eps=0.5)) == \
        'SCNNConv(3, 4, J_up=1, J_down=1, J_harmonic=2, eps=0.5)'
    assert str(SNNConv(3, 4, bias=False)) == 'SNNConv(3, 4, bias=False)'


@pytest.mark.parametrize('kwargs,error,match', [
    (dict(J_up=-1), ValueError, "J_up"),
    (dict(J_harmonic=1.5), TypeError, "J_harmonic"),
    (dict(eps=0.0), ValueError, "eps"),
    (dict(eps=2.5), ValueError, "eps"),
    (dict(heads=0), ValueError, "heads"),
    (dict(heads=True), TypeError, "heads"),
    (dict(J_up=True), TypeError, "J_up"),
    (dict(negative_slope=float('nan')), ValueError, "negative_slope"),
    (dict(eps=float('nan')), ValueError, "eps"),
    (dict(dropout='0.1'), TypeError, "dropout"),
    (dict(bias='no'), TypeError, "bias"),
    (dict(concat=1), TypeError, "concat"),
    (dict(dropout=1.0), ValueError, "dropout"),
    # (integers beyond the floats raised an OverflowError)
    (dict(eps=10 ** 400), ValueError, "eps must be finite, got 1000"),
    (dict(dropout=10 ** 400), ValueError, "dropout' must be finite, got 1000"),
    (dict(attention='both'), ValueError, "attention"),
    # accepted and ignored (session 28): a step without a harmonic filter, and the
    # scaling of fixed-weight branches on a layer whose branches attend
    (dict(eps=0.5), ValueError, r"'eps' is the step of the harmonic filter, which "
     r"J_harmonic=0 does not have \(got eps=0.5\)"),
    (dict(eps=0.5, J_harmonic=None), ValueError, "J_harmonic=None does not have"),
    (dict(normalize=True), ValueError, r"'normalize' scales the operators of "
     r"fixed-weight branches \(attention=None\); with attention='separate'"),
    (dict(normalize=True, attention='shared'), ValueError, "attention='shared'"),
    (dict(attention='shared', J_up=2, J_down=1), ValueError, "J_up == J_down"),
    (dict(shared_weights=True, J_up=1, J_down=2), ValueError, "J_up == J_down"),
    (dict(shared_weights=True, J_up=0, J_down=0), ValueError, "J_up == J_down >= 1"),
    # MessagePassing's arguments were accepted and had no effect (node_dim failed
    # with Python's "multiple values" error)
    (dict(aggr='mean'), TypeError, "unexpected arguments \\['aggr'\\]: SANConv sums"),
    (dict(flow='target_to_source', node_dim=0), TypeError,
     "unexpected arguments \\['flow', 'node_dim'\\]"),
    # (a misspelt argument was said to be one of MessagePassing's)
    (dict(J_hamonic=2, aggr='add'), TypeError,
     "^SANConv got unexpected arguments \\['J_hamonic'\\]$"),
])
def test_invalid_configuration(kwargs, error, match):
    with pytest.raises(error, match=match):
        SANConv(3, 4, **kwargs)


def test_invalid_inputs(kit):
    data = kit.delaunay(10)
    ops = kit.legacy(data, 1)
    n = data.num_simplices(1)
    x = torch.randn(n, 3, dtype=torch.float64)
    conv = make_conv(J_harmonic=2)
    with pytest.raises(ValueError, match="shape"):
        conv(torch.randn(n, 5, dtype=torch.float64), *ops)
    with pytest.raises(TypeError, match="floating-point"):
        conv(torch.ones(n, 3, dtype=torch.long), *ops)
    with pytest.raises(ValueError, match="outside"):
        conv(x[:5], *ops)
    with pytest.raises(TypeError, match=r"no operators given: .*data.operators\(k\)"):
        conv(x)  # gave the skip connection alone, silently
    with pytest.raises(TypeError, match="torch.long"):
        conv(x, ops[0].int(), *ops[1:])
    with pytest.raises(ValueError, match=r"\[2, nnz\]"):
        conv(x, ops[0].t().contiguous(), *ops[1:])
    with pytest.raises(ValueError, match="weight of shape"):
        conv(x, ops[0], ops[1][:-1], *ops[2:])
    with pytest.raises(ValueError, match="J_harmonic=2 needs"):
        conv(x, *ops[:4])
    with pytest.raises(ValueError, match="hodge_weight"):
        conv(x, *ops[:5], None)
    fixed = make_conv(attention=None)
    with pytest.raises(ValueError, match=r"values of the 'up' operator \('up_weight'\)"):
        fixed(x, ops[0], None, *ops[2:])
    with pytest.raises(ValueError, match="needs attention"):
        fixed(x, *ops, return_attention_weights=True)
    equivariant = make_conv(orientation_equivariant=True)
    with pytest.raises(ValueError, match=r"signs of the 'down' operator"):
        equivariant(x, *ops[:3], None, *ops[4:])
    with pytest.raises(ValueError, match="carries its own values"):
        conv(x, torch.sparse_coo_tensor(ops[0].flip(0), ops[1], (n, n),
                                        check_invariants=True), ops[1], *ops[2:])
    with pytest.raises(TypeError, match="index tensor"):
        conv(x, ops[0].tolist(), *ops[1:])
    # A sparse operator declared for another number of simplices than x has:
    small = torch.sparse_coo_tensor(torch.tensor([[0, 1], [1, 0]]), torch.ones(2),
                                    (3, 3)).double()
    with pytest.raises(ValueError, match="declared 3 x 3"):
        conv(x[:5], small)
    with pytest.raises(ValueError, match="operators are for"):
        conv(x[:5], data.operators(1))
    with pytest.raises(TypeError, match="further operator arguments"):
        conv(x, data.operators(1), ops[1])
    with pytest.raises(TypeError, match="unexpected operator arguments"):
        conv(x, up=ops[0])
    with pytest.raises(TypeError, match="given twice"):
        conv(x, ops[0], up_index=ops[0])
    with pytest.raises(TypeError, match="float32"):
        conv(x.float(), data.operators(1))
    with pytest.raises(TypeError, match="not supported on the CPU"):
        conv.to(torch.bfloat16)(x.bfloat16(), data.operators(1))
    # parameters and data on different devices (a layer made on 'meta' returned
    # uninitialised memory)
    with torch.device('meta'):
        deferred = make_conv()
    with pytest.raises(ValueError, match="'x' is on cpu but the layer's parameters "
                       "are on meta.*to_empty\\(\\) and reset_parameters"):
        deferred(x, data.operators(1))
    with pytest.raises(ValueError, match="'x' is on meta but the layer's parameters "
                       "are on cpu"):
        make_conv()(x.to('meta'), data.operators(1))
    # all on 'meta' (failed inside torch's meta kernels)
    ops = data.to('meta').operators(1)
    with pytest.raises(ValueError, match="the layer and 'x' are on 'meta', which holds "
                       "no data"):
        make_conv().to('meta')(x.to('meta'), ops)
    with pytest.raises(ValueError, match="the operator is on 'meta', which holds no "
                       "entries"):
        ops.hodge.shifted(0.9)


@pytest.mark.parametrize('config', CONFIGS)
def test_zero_simplices_give_an_empty_output(kit, config):
    # A complex without triangles has no 2-simplices: x_2 is [0, F].
    data = kit.delaunay(8, drop_triangles=10 ** 6)
    assert data.num_simplices(2) == 0
    conv = make_conv(**config)
    x = torch.zeros(0, 3, dtype=torch.float64, requires_grad=True)
    out = conv(x, data.operators(2))
    heads = conv.heads if conv.concat else 1
    assert out.shape == (0, 4 * heads)
    out.sum().backward()  # every parameter gets a (zero) gradient
    assert all(p.grad is not None for p in conv.parameters())



@pytest.mark.parametrize('config', CONFIGS)
@pytest.mark.parametrize('in_channels', [1, 6])
def test_zero_signals_give_an_empty_batch(kit, config, in_channels):
    # B = 0 signals (an empty index of a batch of signals), with the attention
    # weights and a per-signal orientation of no rows.
    data = kit.delaunay(8)
    N = data.num_simplices(1)
    conv = make_conv(in_channels, **config)
    heads = conv.heads if conv.concat else 1
    ops = data.operators(1).reoriented(torch.ones(0, N))
    x = torch.zeros(0, N, in_channels, dtype=torch.float64, requires_grad=True)
    if conv.attention is None:
        out = conv(x, ops)
    else:
        out, weights = conv(x, ops, return_attention_weights=True)
        for branch in weights:
            assert branch is None or branch[1].shape[:2] == (0, branch[0].size(1))
    assert out.shape == (0, N, 4 * heads)
    out.sum().backward()
    assert x.grad.shape == x.shape

def _flip(ops, d):
    """Flips the reference orientation of the simplices where d = -1: the
    entry (i, j) of each Laplacian becomes d_i d_j L_ij."""
    out = []
    for i in (0, 2, 4):
        index, weight = ops[i], ops[i + 1]
        out += [index, weight * d[index[0]] * d[index[1]]]
    return out


@pytest.mark.parametrize('k,seed', [(1, 0), (1, 1), (2, 2), (2, 3)])
def test_orientation_equivariance(kit, k, seed):
    data = kit.clique(10, 0.7, seed=seed) if k == 2 else kit.delaunay(14, seed=seed)
    ops = kit.legacy(data, k)
    n = data.num_simplices(k)
    assert ops[0].numel() > 0 and ops[2].numel() > 0  # both branches present
    torch.manual_seed(seed)
    x = torch.randn(n, 3, dtype=torch.float64)
    d = torch.where(torch.rand(n) < 0.5, -1.0, 1.0).double()
    flipped = _flip(ops, d)
    assert (d < 0).any() and (d > 0).any()

    def net(conv1, conv2, x, ops):  # two layers with an odd activation
        return conv2(torch.tanh(conv1(x, *ops)), *ops)

    kwargs = dict(J_up=2, J_down=2, J_harmonic=3, heads=2, bias=False)
    convs = [make_conv(3, 4, orientation_equivariant=True, **kwargs),
             make_conv(8, 2, orientation_equivariant=True, **kwargs)]
    out = net(*convs, x, ops)
    assert torch.allclose(net(*convs, d[:, None] * x, flipped), d[:, None] * out,
                          atol=1e-12)
    # Plain attention is not equivariant (the test can fail):
    plain = [make_conv(3, 4, **kwargs), make_conv(8, 2, **kwargs)]
    assert not torch.allclose(net(*plain, d[:, None] * x, flipped),
                              d[:, None] * net(*plain, x, ops))



@pytest.mark.parametrize('ensemble', [None, 3])
@pytest.mark.parametrize('attention', ['separate', 'shared'])
def test_gradients_are_laid_out_as_the_parameters(kit, attention, ensemble):
    # DistributedDataParallel copies (and warns about) gradients whose strides
    # differ from their parameters': the attention vectors' came out of a stack.
    data = kit.delaunay(10)
    conv = make_conv(1, 4, heads=2, attention=attention, ensemble=ensemble)
    x = torch.randn(ensemble or 2, data.num_simplices(1), 1, dtype=torch.float64)
    conv(x, data.operators(1)).sum().backward()
    assert [name for name, p in conv.named_parameters()
            if p.grad.stride() != p.stride()] == []


@pytest.mark.parametrize('config', [
    dict(J_up=2, J_down=2, J_harmonic=2, heads=2),
    dict(J_up=1, J_down=1, J_harmonic=None, attention='shared'),
    dict(J_up=2, J_down=1, J_harmonic=0, orientation_equivariant=True),
    dict(J_up=1, J_down=1, J_harmonic=None, attention=None),
])
@pytest.mark.parametrize('case,missing', [('nodes', {'down'}),
                                          ('no triangles', {'up'}),
                                          ('no operators', {'up', 'down'})])
def test_every_parameter_gets_a_gradient(kit, config, case, missing):
    # DistributedDataParallel needs a gradient for every parameter in every step:
    # the parameters of branches without any neighbour get a zero one.
    if case == 'nodes':  # order 0: the lower Laplacian is empty
        k, data = 0, kit.delaunay(10)
    else:
        k, data = 1, kit.delaunay(10, drop_triangles=10 ** 6)
    ops = list(kit.legacy(data, k))
    if case == 'no operators':
        ops[:4] = [None] * 4
    x = torch.randn(data.num_simplices(k), 3, dtype=torch.float64)
    conv = make_conv(**config)
    out = conv(x, *ops)
    (out * torch.randn_like(out)).sum().backward()
    grads = {name: p.grad for name, p in conv.named_parameters()}
    assert all(grad is not None for grad in grads.values()), grads
    idle = [name for name in grads if name.startswith('att.') and (
        missing == {'up', 'down'} if 'shared' in name else
        name[4:].split('_')[0] in missing)]
    if case == 'no operators' and config['J_harmonic'] is None:
        idle.append('lin.weight')  # the output is the bias alone
    for name, grad in grads.items():
        assert (grad.abs().sum() == 0) == (name in idle), name


# The compiled CPU kernels (sparse.compiled) and the composites of PyTorch
# operations: the same outputs and gradients on every path (batched signals of one
# feature gather; the coefficients of every attention mode).
@pytest.mark.parametrize('config', CONFIGS)
@pytest.mark.parametrize('in_channels', [1, 6])
def test_compiled_kernels_match_composites(kit, monkeypatch, config, in_channels):
    data = kit.delaunay(10, seed=9)
    ops = kit.operators(data, 1)
    x = torch.randn(3, data.num_simplices(1), in_channels, dtype=torch.float64,
                    requires_grad=True)
    conv = make_conv(in_channels, **config)
    results = []
    for flag in ('1', '0'):
        monkeypatch.setenv('TGSAN_COMPILED_KERNELS', flag)
        out = conv(x, ops)
        grads = torch.autograd.grad(out.square().sum(), [x, *conv.parameters()])
        results.append((out, *grads))
    for kernel, composite in zip(*results):
        assert torch.allclose(kernel, composite, atol=1e-12)


@pytest.mark.parametrize('cls,config', [(SANConv, CONFIGS[1]), (SANConv, CONFIGS[7]),
                                        (SATConv, {}), (SCNNConv, {}), (SNNConv, {}),
                                        (SCNConv, {})])
def test_lazy_in_channels(kit, cls, config):
    # in_channels=-1 takes the size from the first input, as PyG's layers do; the
    # materialised layer computes what a layer of that size computes with the same
    # parameters, and its state loads into a layer of either kind.
    data = kit.delaunay(10)
    ops = data.operators(1).to(torch.float64)
    x = torch.randn(3, data.num_simplices(1), 5, dtype=torch.float64)
    torch.manual_seed(0)
    lazy = cls(-1, 4, **config).double()
    assert 'lin.weight' in lazy.state_dict()  # (uninitialised, as PyG's Linear)
    out = lazy(x, ops)
    assert lazy.lin.weight.shape[-1] == 5
    assert repr(lazy).startswith(f'{cls.__name__}(-1, 4')
    eager = cls(5, 4, **config).double()
    eager.load_state_dict(lazy.state_dict())
    assert torch.equal(eager(x, ops), out)
    again = cls(-1, 4, **config).double()
    again.load_state_dict(lazy.state_dict())
    assert torch.equal(again(x, ops), out)
    # The filter weights are initialised as reset_parameters() does (Glorot per tap
    # and gain), not by PyG's Linear (Kaiming).
    rows = lazy.heads * lazy.out_channels
    largest = float(lazy.lin.weight.detach().abs().max())
    assert 5 ** -0.5 < largest <= (6.0 / (rows + 5)) ** 0.5  # (Kaiming's: 5 ** -0.5)
    with pytest.raises(ValueError, match=r"must have shape \[N, 5\]"):
        lazy(x[..., :2], ops)


def test_lazy_in_channels_refusals(kit):
    data = kit.delaunay(10)
    ops = data.operators(1)
    with pytest.raises(ValueError, match=r"\[N, F\] or \[B, N, F\] with F >= 1"):
        SANConv(-1, 4)(torch.randn(data.num_simplices(1), 0), ops)
    with pytest.raises(ValueError, match="an ensemble needs its 'in_channels'"):
        SANConv(-1, 4, ensemble=2)
    for bad in (0, -2):
        with pytest.raises(ValueError, match="at least 1, or -1"):
            SANConv(bad, 4)


def test_lazy_weight_takes_the_dtype_of_the_layer(kit):
    # A lazy weight loses its dtype in a pickle and in PyG's state-dict loading: it
    # was materialised in float32 beside float64 attention vectors and bias, and a
    # float32 input then failed inside torch.
    import io
    data = kit.delaunay(10)
    ops = data.operators(1).to(torch.float64)
    x = torch.randn(data.num_simplices(1), 5, dtype=torch.float64)
    buffer = io.BytesIO()
    torch.save(SANConv(-1, 4, J_harmonic=1).double(), buffer)
    buffer.seek(0)
    saved = torch.load(buffer, weights_only=False)
    loaded = SANConv(-1, 4, J_harmonic=1).double()
    loaded.load_state_dict(SANConv(-1, 4, J_harmonic=1).state_dict())
    for conv in (saved, loaded):
        assert conv(x, ops).dtype == torch.float64
        assert {p.dtype for p in conv.parameters()} == {torch.float64}
    # filter_taps takes the size of its input too, and checks it afterwards.
    lazy = SANConv(-1, 4, J_up=2).double()
    assert lazy.filter_taps(x)['up'][0].shape == (data.num_simplices(1), 1, 4)
    with pytest.raises(ValueError, match=r"\[\.\.\., N, 5\]"):
        lazy.filter_taps(x[:, :2])
    # An input of too few dimensions fixes no size.
    fresh = SANConv(-1, 4).double()
    with pytest.raises(ValueError, match=r"\[\.\.\., N, F\] with F >= 1"):
        fresh.filter_taps(x[0])
    assert fresh.filter_taps(x)['up'][0].shape == (data.num_simplices(1), 1, 4)


def test_lazy_layer_moved_to_meta_says_what_to_do(kit):
    # torch replaces an uninitialised parameter moved to 'meta' by an empty one: the
    # layer then refused inputs of the shape its message named, and to_empty() with
    # reset_parameters() failed inside torch.
    data = kit.delaunay(10)
    conv = SANConv(-1, 4).to('meta').to_empty(device='cpu')
    conv.reset_parameters()
    with pytest.raises(ValueError, match="lost its uninitialised weight .* 'meta'"):
        conv(torch.randn(data.num_simplices(1), 3), data.operators(1))


@pytest.mark.parametrize('kernels', ['1', '0'])
@pytest.mark.parametrize('config', [
    dict(in_channels=10, out_channels=2), dict(in_channels=1, out_channels=4),
    dict(in_channels=10, out_channels=2, heads=2, concat=False),
    dict(in_channels=3, out_channels=2, attention=None, J_harmonic=2),
])
def test_the_output_is_contiguous(kernels, config, monkeypatch):
    # The gathering layout (taken for narrow outputs with the compiled kernels)
    # returned a permuted view: `out.view(-1)` failed with the kernels only.
    monkeypatch.setenv('TGSAN_COMPILED_KERNELS', kernels)
    data = SimplicialComplexData.from_simplices([[0, 1, 2], [1, 2, 3], [2, 3, 4]],
                                                close=True)
    conv = SANConv(**config)
    for x in (torch.randn(2, 7, config['in_channels']),
              torch.randn(7, config['in_channels'])):
        out = conv(x, data.operators(1))
        assert out.is_contiguous()
        out.view(-1)


def test_sparse_signals_and_filter_taps_of_another_dtype_are_refused():
    # A sparse x passed the checks and failed inside torch (reshape of a sparse
    # tensor); filter_taps took a float64 x on a float32 layer into F.linear.
    data = SimplicialComplexData.from_simplices([[0, 1, 2], [1, 2, 3]], close=True)
    conv = SANConv(3, 4)
    x = torch.randn(data.num_simplices(1), 3)
    with pytest.raises(TypeError, match="'x' must be a dense tensor .*to_dense"):
        conv(x.to_sparse(), data.operators(1))
    with pytest.raises(TypeError, match="'x' must be a dense tensor"):
        conv.filter_taps(x.to_sparse())
    with pytest.raises(TypeError, match="'x' is torch.float64 but the layer's "
                       "parameters are torch.float32"):
        conv.filter_taps(x.double())
    with pytest.raises(ValueError, match="'x' must be a dense 2-D floating-point"):
        data.operators(1).up.matmul(x.to_sparse())


def test_return_attention_weights_takes_a_bool(kit):
    # (a truthy 'False' returned the weights)
    data = kit.delaunay(8)
    conv = make_conv(2)
    x = torch.randn(data.num_simplices(1), 2, dtype=torch.float64)
    with pytest.raises(TypeError, match="'return_attention_weights' must be True or "
                                        "False, not str"):
        conv(x, kit.operators(data, 1), return_attention_weights='False')
    assert isinstance(conv(x, kit.operators(data, 1), return_attention_weights=False),
                      torch.Tensor)


def test_layers_leave_no_files_in_the_temporary_directory(tmp_path):
    # (PyG's MessagePassing wrote two generated modules per layer class and process
    # into the temporary directory and never removed them)
    script = ("import pickle, torch\n"
              "from torch_geometric_san.nn import SANConv, SATConv, SCNConv, SCNNConv, "
              "SNNConv\n"
              "for cls in (SANConv, SATConv, SCNConv, SCNNConv, SNNConv):\n"
              "    pickle.loads(pickle.dumps(cls(2, 3)))\n")
    env = dict(os.environ, TMPDIR=str(tmp_path), TORCHINDUCTOR_CACHE_DIR=str(
        tmp_path.parent / 'inductor'))
    subprocess.run([sys.executable, '-c', script], env=env, check=True, timeout=120)
    assert list(tmp_path.iterdir()) == []


def test_layers_leave_the_warning_filters_alone(monkeypatch):
    # (a filter set around every sparse product reset Python's once-per-location
    # record at each call: a user's warning in a training loop showed at every
    # step; and it was not thread-safe)
    monkeypatch.setenv('TGSAN_COMPILED_KERNELS', '0')  # (the products of PyTorch's CSR)
    data = SimplicialComplexData.from_simplices([[0, 1, 2], [1, 2, 3]], close=True)
    conv, x = SANConv(3, 4, J_harmonic=1), torch.randn(data.num_simplices(1), 3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('default')
        filters = list(warnings.filters)
        for _ in range(3):
            warnings.warn('a user warning', UserWarning)  # shown once: one location
            conv(x, data.operators(1)).sum().backward()
        assert warnings.filters == filters
    assert [str(w.message) for w in caught] == ['a user warning']
