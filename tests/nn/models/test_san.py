
import io
import math
import pickle

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from torch_geometric.data import Data
from torch_geometric.loader import DataLoader

from torch_geometric_san.nn import SANConv, SATConv, SCNConv, SCNNConv, SNNConv
from torch_geometric_san.nn.models import MultiOrderSAN, SAN, SAT, SCN, SCNN, SNN
from torch_geometric_san.sparse import SimplicialOperators


def with_signal(data, k=1, channels=3, batch=None, seed=0):
    torch.manual_seed(seed)
    shape = (data.num_simplices(k), channels) if batch is None else (
        batch, data.num_simplices(k), channels)
    data[f'x_{k}'] = torch.randn(*shape, dtype=torch.float64)
    return data


def test_per_simplex_model_stacks_its_layers(kit):
    data = with_signal(kit.delaunay(12))
    torch.manual_seed(0)
    model = SAN(3, 8, num_layers=2, out_channels=2,
                conv_kwargs=dict(J_up=2, J_down=2, J_harmonic=3, heads=2)).double()
    out = model(data)
    assert out.shape == (data.num_simplices(1), 2)
    first, second = model.convs
    assert second.concat is False and second.in_channels == 16
    ops = kit.operators(data, 1)
    assert torch.allclose(out, second(F.relu(first(data.x_1, ops)), ops))
    assert torch.allclose(model(data.x_1, ops), out)  # tensors directly


@pytest.mark.parametrize('k', [0, 2])
def test_other_orders(kit, k):
    data = with_signal(kit.delaunay(12), k=k)
    model = SAN(3, 8, num_layers=2, out_channels=1, order=k,
                conv_kwargs=dict(J_up=2, J_down=2, J_harmonic=2)).double()
    out = model(data)
    assert out.shape == (data.num_simplices(k), 1) and torch.isfinite(out).all()


@pytest.mark.parametrize('readout', ['sum', 'mean', 'max'])
def test_readout_over_a_batch_of_complexes(kit, readout):
    complexes = [with_signal(kit.delaunay(n, seed=n), seed=n) for n in (9, 12, 10)]
    model = SAN(3, 8, num_layers=2, out_channels=2, readout=readout).double().eval()
    batch = next(iter(DataLoader(complexes, batch_size=3)))
    out = model(batch)
    assert out.shape == (3, 2)
    alone = torch.cat([model(data) for data in complexes])
    assert torch.allclose(out, alone, atol=1e-12)


def test_readout_over_signals_on_one_complex(kit):
    data = with_signal(kit.delaunay(12), batch=5)
    model = SAN(3, 4, num_layers=1, out_channels=2, readout='sum').double().eval()
    out = model(data)
    assert out.shape == (5, 2)
    ops = kit.operators(data, 1)
    for b in range(5):
        assert torch.allclose(out[b], model(data.x_1[b], ops)[0], atol=1e-12)


def test_trajectory_configuration_trains(kit):
    # The paper's trajectory set-up: one layer, 4 features, J_u = J_d = 3,
    # eps = 0.9, J_h = 5, MLP readout (logits + cross-entropy), dropout 0.6.
    data = kit.delaunay(16, seed=3, dtype=torch.float32)
    n = data.num_simplices(1)
    torch.manual_seed(0)
    pattern = torch.randn(n, 1)
    x = torch.randn(64, n, 1) * 0.1
    y = torch.randint(0, 2, (64, ))
    x[y == 1] += pattern  # class 1 carries a fixed flow
    model = SAN(1, 4, num_layers=1, out_channels=2, readout='sum', act='tanh',
                dropout=0.6, conv_kwargs=dict(J_up=3, J_down=3, J_harmonic=5,
                                              eps=0.9))
    ops = kit.operators(data, 1)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=0.003)
    losses = []
    for _ in range(40):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x, ops), y)
        loss.backward()
        optimizer.step()
        losses.append(float(loss))
    assert losses[-1] < 0.5 * losses[0]
    model.eval()
    assert (model(x, ops).argmax(dim=-1) == y).float().mean() > 0.9


def test_citation_configuration(kit):
    # 4 layers (h, h, h, 1), J = 2, J_h = 0, ReLU, Xavier gain sqrt(2).
    data = with_signal(kit.delaunay(12), channels=1)
    torch.manual_seed(0)
    model = SAN(1, 16, num_layers=4, out_channels=1,
                conv_kwargs=dict(J_up=2, J_down=2, J_harmonic=0, gain=math.sqrt(2))
                ).double()
    assert [conv.out_channels for conv in model.convs] == [16, 16, 16, 1]
    bound = math.sqrt(2) * math.sqrt(6 / (16 + 16))
    weight = model.convs[1].lin.weight
    assert bound * 0.8 < weight.abs().max() <= bound
    assert model(data).shape == (data.num_simplices(1), 1)


@pytest.mark.parametrize('cls,conv_cls', [(SAN, SANConv), (SAT, SATConv),
                                          (SCNN, SCNNConv), (SNN, SNNConv),
                                          (SCN, SCNConv)])
def test_baselines_are_the_same_network(kit, cls, conv_cls):
    data = with_signal(kit.delaunay(12))
    model = cls(3, 8, num_layers=2, out_channels=2, readout='mean').double()
    assert all(type(conv) is conv_cls for conv in model.convs)
    out = model(data)
    assert out.shape == (1, 2) and torch.isfinite(out).all()
    model.reset_parameters()


def test_orientation_equivariant_network(kit):
    data = kit.delaunay(14, seed=4)
    ops = kit.legacy(data, 1)
    n = data.num_simplices(1)
    torch.manual_seed(1)
    x = torch.randn(n, 3, dtype=torch.float64)
    d = torch.where(torch.rand(n) < 0.5, -1.0, 1.0).double()
    flipped = []
    for i in (0, 2, 4):
        flipped += [ops[i], ops[i + 1] * d[ops[i][0]] * d[ops[i][1]]]
    model = SAN(3, 8, num_layers=3, out_channels=2, act='tanh',
                conv_kwargs=dict(J_up=2, J_down=2, J_harmonic=2, bias=False,
                                 orientation_equivariant=True)).double()
    assert torch.allclose(model(d[:, None] * x, *flipped), d[:, None] * model(x, *ops),
                          atol=1e-12)


def test_flatten_readout(kit):
    # The MLP sees the features of every simplex at its position: one linear
    # map of the concatenated [N * C] features per signal / complex.
    data = with_signal(kit.delaunay(12), batch=5)
    n = data.num_simplices(1)
    model = SAN(3, 4, num_layers=1, out_channels=2, readout='flatten',
                readout_layers=1, num_simplices=n).double().eval()
    ops = kit.operators(data, 1)
    out = model(data)
    assert out.shape == (5, 2)
    hidden = F.relu(model.convs[0](data.x_1, ops))  # [5, n, 4]
    lin = model.mlp.lins[0]
    assert lin.in_channels == 4 * n
    assert torch.allclose(out, hidden.reshape(5, -1) @ lin.weight.t() + lin.bias)
    assert torch.allclose(model(data.x_1[2], ops), out[2:3])  # one signal
    # A batch of copies of the complex: one row per complex.
    complexes = [with_signal(kit.delaunay(12), seed=s) for s in range(3)]
    batch = next(iter(DataLoader(complexes, batch_size=3)))
    alone = torch.cat([model(c) for c in complexes])
    assert torch.allclose(model(batch), alone)
    deep = SAN(3, 4, num_layers=1, out_channels=2, readout='flatten',
               num_simplices=n)
    assert [lin.in_channels for lin in deep.mlp.lins] == [4 * n, 4]


def test_flatten_readout_checks_sizes(kit):
    data = with_signal(kit.delaunay(12))
    with pytest.raises(ValueError, match="num_simplices"):
        SAN(3, 4, 1, 2, readout='flatten')
    model = SAN(3, 4, 1, 2, readout='flatten', num_simplices=7).double()
    with pytest.raises(ValueError, match="7 simplices per complex"):
        model(data)
    other = with_signal(kit.delaunay(13, seed=1))
    batch = next(iter(DataLoader([data, other], batch_size=2)))
    model = SAN(3, 4, 1, 2, readout='flatten',
                num_simplices=data.num_simplices(1)).double()
    with pytest.raises(ValueError, match="simplices per complex"):
        model(batch)
    # simplices of two complexes interleaved were flattened as if in blocks
    n = data.num_simplices(1)
    ops = SimplicialOperators(2 * n)
    x = torch.randn(2 * n, 3, dtype=torch.float64)
    interleaved = torch.arange(2).repeat(n)
    with pytest.raises(ValueError, match="simplices of each complex in one block"):
        model(x, ops, batch=interleaved)
    assert model(x, ops, batch=interleaved.sort().values).shape == (2, 2)


@pytest.mark.parametrize('act', ['identity', 'Identity', None])
def test_identity_activation(kit, act):
    data = with_signal(kit.delaunay(12))
    model = SAN(3, 8, num_layers=2, out_channels=2, act=act, readout='sum',
                conv_kwargs=dict(J_up=2, J_down=2)).double().eval()
    ops = kit.operators(data, 1)
    first, second = model.convs
    pooled = second(first(data.x_1, ops), ops).sum(dim=0, keepdim=True)
    assert torch.allclose(model(data), model.mlp(pooled))
    assert model.mlp.act is None  # a linear readout


@pytest.mark.parametrize('act,odd_act,invariant', [
    ('tanh', False, True), ('identity', False, True), ('relu', False, False),
    ('relu', True, True), ('elu', True, True), ('tanh', True, True)])
def test_invariant_readout(kit, act, odd_act, invariant):
    # Orientation-equivariant layers, an odd activation and the absolute-value
    # readout give logits that do not depend on the edge orientations; ReLU
    # (not odd) breaks it unless applied as odd_activation, and so does the
    # plain sum readout.
    data = kit.delaunay(14, seed=4)
    ops = kit.legacy(data, 1)
    n = data.num_simplices(1)
    torch.manual_seed(1)
    x = torch.randn(6, n, 1, dtype=torch.float64)
    d = torch.where(torch.rand(n) < 0.5, -1.0, 1.0).double()
    flipped = []
    for i in (0, 2, 4):
        flipped += [ops[i], ops[i + 1] * d[ops[i][0]] * d[ops[i][1]]]
    conv_kwargs = dict(J_up=3, J_down=3, J_harmonic=5, bias=False,
                       orientation_equivariant=True)
    model = SAN(1, 4, num_layers=2, out_channels=2, readout='sum', act=act,
                conv_kwargs=conv_kwargs, invariant_readout=True,
                odd_act=odd_act).double().eval()
    out, out_flipped = model(x, *ops), model(d[:, None] * x, *flipped)
    assert out.shape == (6, 2)
    assert torch.allclose(out, out_flipped, atol=1e-12) is invariant
    if odd_act and act == 'tanh':  # odd already: the same network
        model.odd_act = False
        assert torch.allclose(model(x, *ops), out, atol=1e-14)
    plain = SAN(1, 4, num_layers=1, out_channels=2, readout='sum', act=act,
                conv_kwargs=conv_kwargs).double().eval()
    assert not torch.allclose(plain(x, *ops), plain(d[:, None] * x, *flipped))
    with pytest.raises(ValueError, match="invariant_readout"):
        SAN(1, 4, 1, 2, invariant_readout=True)


def test_invalid_arguments(kit):
    with pytest.raises(TypeError, match="odd_act"):
        SAN(3, 8, 2, 1, odd_act='yes')
    # (accepted and ignored, unchecked: -7 was kept)
    with pytest.raises(ValueError, match=r"'num_simplices' is for readout='flatten' "
                       r"\(got readout='sum', which takes complexes of any size\)"):
        SAN(3, 8, 2, 1, readout='sum', num_simplices=-7)
    with pytest.raises(ValueError, match="got readout=None"):
        SAN(3, 8, 2, 1, num_simplices=5)
    with pytest.raises(ValueError, match="'readout' must be None, 'flatten'"):
        SAN(3, 8, 2, 1, readout='median')
    with pytest.raises(ValueError, match="num_layers"):
        SAN(3, 8, 0, 1)
    with pytest.raises(TypeError, match="'num_layers' must be an int"):
        SAN(3, 8, 1.5, 1)
    # Sizes are checked where they are given, under their own names.
    with pytest.raises(ValueError, match="'hidden_channels' must be at least 1, got 0"):
        SAN(3, 0, 2, 1)
    with pytest.raises(ValueError, match="'in_channels' must be at least 1"):
        SAN(0, 8, 1, 1)
    with pytest.raises(ValueError, match="'out_channels' must be at least 1"):
        SAN(3, 8, 1, 0, readout='sum')
    with pytest.raises(ValueError, match="'readout_layers' must be at least 1, got 0"):
        SAN(3, 8, 1, 1, readout='sum', readout_layers=0)
    with pytest.raises(ValueError, match="'order' must be at least 0"):
        SAN(3, 8, 1, 1, order=-1)
    with pytest.raises(ValueError, match="dropout"):
        SAN(3, 8, 1, 1, dropout=1.5)
    with pytest.raises(TypeError, match="'dropout' must be a real number"):
        SAN(3, 8, 1, 1, dropout='0.5')
    with pytest.raises(ValueError, match="ensemble"):
        SAN(3, 8, 1, 1, readout='sum', conv_kwargs=dict(ensemble=2))
    # (each of these failed later, or deep inside, or was taken for another value)
    with pytest.raises(TypeError, match="'act' must be an activation's name"):
        SAN(3, 8, 1, 1, act=3)
    with pytest.raises(TypeError, match="'conv_kwargs' must be a dict"):
        SAN(3, 8, 1, 1, conv_kwargs=[('J_up', 2)])
    with pytest.raises(TypeError, match="'num_simplices' must be an int, not bool"):
        SAN(3, 8, 1, 1, readout='flatten', num_simplices=True)
    assert SAN(3, 8, 1, 1, readout='flatten', num_simplices=np.int64(18)).num_simplices \
        == 18
    model = SAN(3, 8, 1, 1, order=2)
    with pytest.raises(ValueError, match="x_2"):
        model(with_signal(kit.delaunay(10)))
    with pytest.raises(TypeError, match="SimplicialComplexData"):
        model(Data(x=torch.randn(3, 3)))
    assert str(model) == "SAN(3, 1, num_layers=1, order=2, readout=None)"


@pytest.mark.parametrize('change, error, pattern', [
    (lambda n: dict(x=torch.randn(n, dtype=torch.float64)), ValueError,
     r"'x' must have shape \[N, 3\] or \[B, N, 3\] \(got \[\d+\]\)"),
    (lambda n: dict(x=torch.randn(n, 3)), TypeError,
     r"'x' is torch.float32 but the model's parameters are torch.float64; .* "
     r"model.to\(torch.float32\)"),
    (lambda n: dict(batch=torch.zeros(3, dtype=torch.long)), ValueError,
     r"'batch' must have shape \[\d+\], one complex id per simplex \(got \[3\]\)"),
    (lambda n: dict(batch=torch.zeros(n)), TypeError,
     r"'batch' must be a torch.long \(or torch.int32\) tensor \(got torch.float32\)"),
    # (failed inside the readout's scatter)
    (lambda n: dict(batch=torch.zeros(n, dtype=torch.int16)), TypeError,
     r"'batch' must be a torch.long .*\(got torch.int16\)"),
    (lambda n: dict(batch=torch.full((n, ), -1)), ValueError, "negative complex id"),
    (lambda n: dict(num_graphs=0), ValueError, "num_graphs must be at least 1, got 0"),
    (lambda n: dict(batch=torch.arange(n), num_graphs=5), ValueError,
     "'batch' holds complex id \\d+, but num_graphs is 5"),
    # (one row came back, num_graphs ignored)
    (lambda n: dict(batch=None, num_graphs=3), ValueError,
     "'num_graphs' is 3 but no 'batch' vector is given"),
])
def test_bad_signals_and_batch_vectors_are_refused(kit, assert_rejected, change, error,
                                                   pattern):
    # Before, these failed inside torch: an IndexError for a 1-D x, and scatter's
    # own errors for the batch vector and num_graphs of the readout.
    data = with_signal(kit.delaunay(10))
    n = data.num_simplices(1)
    model = SAN(3, 8, 1, 2, readout='sum').double()
    args = dict(x=data.x_1, batch=torch.zeros(n, dtype=torch.long), num_graphs=None)
    args.update(change(n))
    assert_rejected(model, (args['x'], data.operators(1)),
                    dict(batch=args['batch'], num_graphs=args['num_graphs']), error,
                    pattern)
    model(data.x_1, data.operators(1), batch=torch.zeros(n, dtype=torch.long))


def test_ensemble_members_are_independent_networks(kit):
    data = kit.delaunay(10, seed=2)
    ops = data.operators(1)
    x = torch.randn(2, data.num_simplices(1), 3, dtype=torch.float64)
    model = SAN(3, 8, num_layers=2, out_channels=1,
                conv_kwargs=dict(J_up=2, J_down=2, ensemble=2)).double()
    out = model(x, ops)
    for member in range(2):
        single = SAN(3, 8, num_layers=2, out_channels=1,
                     conv_kwargs=dict(J_up=2, J_down=2)).double()
        single.load_state_dict({key: value[member:member + 1] if '.att.' in key
                                else value[member]
                                for key, value in model.state_dict().items()})
        assert torch.allclose(out[member], single(x[member], ops), atol=1e-12)


@pytest.mark.parametrize('readout', ['sum', 'mean', 'max'])
def test_readout_has_a_row_for_a_complex_without_simplices(kit, readout):
    # The last complex of the batch has no triangles: it still gets its row.
    complexes = [kit.delaunay(10, seed=1), kit.delaunay(9, drop_triangles=10 ** 6)]
    for data in complexes:
        data.x_2 = torch.randn(data.num_simplices(2), 3, dtype=torch.float64)
    assert complexes[1].num_simplices(2) == 0
    batch = next(iter(DataLoader(complexes, batch_size=2)))
    model = SAN(3, 4, num_layers=2, out_channels=2, order=2, readout=readout).double()
    out = model(batch)
    assert out.shape == (2, 2)
    assert torch.allclose(out[0], model(complexes[0])[0], atol=1e-12)
    # the same complex alone (no batch vector) got NaN (mean) or an IndexError (max)
    alone = model(complexes[1])
    assert alone.shape == (1, 2) and torch.allclose(alone[0], out[1], atol=1e-12)
    ops, x = complexes[1].operators(2), torch.zeros(3, 0, 3, dtype=torch.float64)
    signals = model(x, ops)  # B signals on the complex: one row each
    assert signals.shape == (3, 2) and torch.allclose(signals, out[1].expand(3, 2),
                                                       atol=1e-12)


def test_reset_parameters_resets_a_learnable_activation(kit):
    for model in (SAN(3, 4, 2, 2, act='prelu', readout='sum'),
                  MultiOrderSAN(3, 4, 2, 2, act='prelu')):
        with torch.no_grad():
            for parameter in model.parameters():
                parameter.fill_(7.0)
        model.reset_parameters()
        assert [name for name, p in model.named_parameters()
                if bool((p == 7.0).all())] == []


def test_model_pickles_after_a_forward_pass_and_builds_operators_once(kit):
    data = with_signal(kit.delaunay(12))
    model = SAN(3, 4, num_layers=4, out_channels=2,
                conv_kwargs=dict(J_up=2, J_down=2, J_harmonic=2)).double()
    ops = data.operators(1)
    out = model(data.x_1, ops)
    derived = {key: value for key, value in ops.up._cache.items()}
    assert model(data.x_1, ops).equal(out)
    for key, value in ops.up._cache.items():  # the second pass derived nothing
        assert derived[key] is value
    restored = pickle.loads(pickle.dumps(model))
    assert torch.equal(restored(data), out)
    buffer = io.BytesIO()
    torch.save(model, buffer)
    buffer.seek(0)
    assert torch.equal(torch.load(buffer, weights_only=False)(data), out)


def test_compiled_model_does_not_recompile_per_batch(kit):
    # Complexes of different sizes: after the first batches have marked the
    # sizes dynamic, new batches reuse the compiled graphs.
    from torch._dynamo.testing import CompileCounter

    complexes = [with_signal(kit.delaunay(8 + i, seed=i), seed=i) for i in range(12)]
    for i, data in enumerate(complexes):
        data.y = torch.tensor([i % 2])
    torch.manual_seed(0)
    model = SAN(3, 4, num_layers=1, out_channels=2, readout='sum',
                conv_kwargs=dict(J_up=2, J_down=2, J_harmonic=2)).double()
    counter = CompileCounter()
    compiled = torch.compile(model, backend=counter)
    counts = []
    for batch in DataLoader(complexes, batch_size=3):
        out = compiled(batch)
        assert torch.allclose(out, model(batch), atol=1e-10)
        out.sum().backward()
        counts.append(counter.frame_count)
    assert counts[1] == counts[-1], counts  # no graph compiled after the second batch


def test_a_compiled_model_breaks_its_graph_only_where_operators_are_derived(kit):
    # (session 28: the input check called the eager _materialize of a layer that
    # was not lazy, one more graph break per call)
    import torch._dynamo
    data = with_signal(kit.delaunay(8, seed=0), seed=0)
    model = SAN(3, 4, num_layers=2, out_channels=2).double()
    model(data.x_1, data.operators(1))
    explained = torch._dynamo.explain(model)(data.x_1, data.operators(1))
    frames = {frame.name for reason in explained.break_reasons
              for frame in reason.user_stack[-1:]}
    assert frames == {'_forward'}, frames  # (SANConv's: _branch_operators)


TRAJECTORY_MODELS = {  # the rows of Table 1 (benchmarks/trajectory.py)
    'SAN': (SAN, dict(J_up=3, J_down=3, J_harmonic=5), {}),
    'SAN (J_h = 0)': (SAN, dict(J_up=3, J_down=3, J_harmonic=0), {}),
    'SAN (orientation-equivariant)': (SAN, dict(J_up=3, J_down=3, J_harmonic=5, bias=False,
                                                orientation_equivariant=True),
                                      dict(invariant_readout=True, odd_act=True)),
    'SAT': (SAT, {}, {}), 'SCNN': (SCNN, dict(J_up=3, J_down=3), {}),
    'SNN': (SNN, {}, {}), 'SCN': (SCN, {}, {}),
}


@pytest.mark.parametrize('name', list(TRAJECTORY_MODELS))
@pytest.mark.parametrize('in_channels', [1, 3])
def test_per_signal_orientation_is_each_signals_own_complex(kit, name, in_channels):
    # Signals side by side, each with its own orientation of the edges on the
    # shared operators, give what each gives alone on its own re-oriented
    # complex (reorient_edges builds it from D B_1 and D B_2).
    from torch_geometric_san.datasets.trajectory import reorient_edges
    data = kit.delaunay(14, seed=3)
    n, B = data.num_simplices(1), 4
    torch.manual_seed(0)
    x = torch.randn(B, n, in_channels, dtype=torch.float64)
    signs = torch.where(torch.rand(B, n) < 0.5, -1, 1)
    signs[0] = 1  # one signal in the operators' own orientation
    cls, conv, extra = TRAJECTORY_MODELS[name]
    model = cls(in_channels, 4, num_layers=1, out_channels=2, readout='flatten',
                num_simplices=n, act='tanh', conv_kwargs=conv, **extra).double().eval()
    ops = data.operators(1)
    batched = model(x, ops.reoriented(signs))
    layer = model.convs[0](x, ops.reoriented(signs))
    for b in range(B):
        own = reorient_edges(data, signs[b]).operators(1)
        assert torch.allclose(batched[b], model(x[b:b + 1], own)[0], atol=1e-12)
        assert torch.allclose(layer[b], model.convs[0](x[b], own), atol=1e-12)
    # Without the orientation, the flipped signals differ for the models that
    # see the signs (all but plain attention on the pattern alone is still
    # different through its harmonic filter or skip weights).
    if name not in ('SAT', 'SAN (J_h = 0)'):
        assert not torch.allclose(model.convs[0](x, ops)[1:], layer[1:], atol=1e-6)


def test_per_signal_orientation_checks_the_signals(kit):
    data = kit.delaunay(10)
    n = data.num_simplices(1)
    model = SAN(1, 4, num_layers=1, out_channels=2, conv_kwargs=dict(J_harmonic=2)).double()
    ops = data.operators(1).reoriented(torch.ones(3, n))
    with pytest.raises(ValueError, match='orientation for 3 signals'):
        model(torch.randn(2, n, 1, dtype=torch.float64), ops)
    with pytest.raises(ValueError, match='orientation for 3 signals'):
        model(torch.randn(n, 1, dtype=torch.float64), ops)


@pytest.mark.parametrize('cls, kwargs', [
    (SAT, {}), (SNN, {}), (SAN, dict(conv_kwargs=dict(J_harmonic=None))), (SAN, {})])
def test_every_parameter_gets_a_gradient_on_a_batch_without_triangles(cls, kwargs):
    # At the top order without triangles no branch is present: the layer's output
    # did not depend on its input, so the layers before it got no gradient, and
    # DistributedDataParallel failed on the next step.
    from torch_geometric_san.data import SimplicialComplexData
    complexes = []
    for n in (4, 6):
        data = SimplicialComplexData.from_simplices([[i, i + 1] for i in range(n - 1)],
                                                    order=2)
        data.x_2 = torch.zeros(0, 3)
        complexes.append(data)
    batch = next(iter(DataLoader(complexes, batch_size=2)))
    torch.manual_seed(0)
    net = cls(3, 4, num_layers=2, out_channels=2, order=2, readout='sum', **kwargs)
    net(batch).pow(2).sum().backward()
    assert [name for name, p in net.named_parameters() if p.grad is None] == []


@pytest.mark.parametrize('cls', [SAN, SAT, SCNN, SNN, SCN])
def test_lazy_in_channels(kit, cls):
    # in_channels=-1: the first layer takes the size of the first input; the model
    # then computes what the model of that size computes with the same parameters.
    complexes = [with_signal(kit.delaunay(n, seed=n), seed=n) for n in (9, 12)]
    batch = next(iter(DataLoader(complexes, batch_size=2)))
    lazy = cls(-1, 8, num_layers=2, out_channels=2, readout='mean').double().eval()
    out = lazy(batch)
    eager = cls(3, 8, num_layers=2, out_channels=2, readout='mean').double().eval()
    eager.load_state_dict(lazy.state_dict())
    assert torch.equal(eager(batch), out)
    assert lazy.in_channels == -1 and lazy.convs[0].lin.in_channels == 3
    with pytest.raises(ValueError, match=r"must have shape \[N, 3\]"):
        lazy(batch.x_1[:, :2], batch.operators(1), batch=batch.simplex_batch(1))
    with pytest.raises(ValueError, match="'in_channels' must be at least 1, or -1"):
        cls(-3, 8, 1, 1)


def test_num_graphs_of_a_complex_or_batch_is_checked(kit):
    # Given a complex, num_graphs=3 gave one row; given a batch, it was overwritten.
    data = with_signal(kit.delaunay(10))
    model = SAN(3, 8, 1, 2, readout='sum').double()
    assert model(data, num_graphs=1).shape == (1, 2)
    with pytest.raises(ValueError, match="'num_graphs' is 3 but no 'batch' vector"):
        model(data, num_graphs=3)
    batch = next(iter(DataLoader([data, data], batch_size=2)))
    assert model(batch, num_graphs=2).shape == (2, 2)
    with pytest.raises(ValueError, match="'num_graphs' is 3 but the batch holds 2"):
        model(batch, num_graphs=3)


def test_a_complex_brings_its_own_operators_and_batch_vector(kit):
    # Beside a complex, a batch vector split it into several readout rows (or
    # failed inside torch's scatter), and operators of another complex were
    # silently replaced by its own.
    data = with_signal(kit.delaunay(10))
    other = with_signal(kit.delaunay(12))
    model = SAN(3, 8, 1, 2, readout='sum').double()
    n = data.num_simplices(1)
    batch = next(iter(DataLoader([data, data], batch_size=2)))
    for x, extra in [(data, dict(batch=torch.zeros(n, dtype=torch.long))),
                     (data, dict(ops=other.operators(1))),
                     (batch, dict(batch=batch.simplex_batch(1)))]:
        with pytest.raises(TypeError, match="a complex given as 'x' supplies its "
                           "operators and batch vector"):
            model(x, **extra)
    assert model(data).shape == (1, 2) and model(batch).shape == (2, 2)


@pytest.mark.parametrize('cls', ['SAN', 'MultiOrderSAN'])
def test_a_lazy_model_compiles_without_an_eager_pass(kit, cls):
    # Materialising the weight inside Dynamo's trace failed with an internal
    # error ("'UserDefinedObjectVariable' object has no attribute 'proxy'"); PyG's
    # Linear(-1) and torch's lazy modules compile as they are.
    from torch_geometric_san.nn.models import MultiOrderSAN
    data = with_signal(kit.delaunay(10))
    for k in (0, 2):
        data[f'x_{k}'] = torch.randn(data.num_simplices(k), 3, dtype=torch.float64)
    make = (lambda: SAN(-1, 8, 1, 2, readout='sum')) if cls == 'SAN' else \
        (lambda: MultiOrderSAN(-1, 8, 1, 2))
    torch.manual_seed(0)
    lazy = make().double()
    out = torch.compile(lazy, backend='eager')(data)
    torch.manual_seed(0)
    eager = make().double()
    assert torch.allclose(out, eager(data))


@pytest.mark.parametrize('cls', ['SAN', 'MultiOrderSAN'])
def test_numpy_numbers_and_integer_dropout_are_taken(kit, cls):
    # dropout=0 (an int) or a NumPy float went to PyG's MLP, which took it for a
    # list of rates (TypeError inside PyG); NumPy ints as sizes failed in torch's
    # split. The checked Python values are kept instead.
    import numpy as np
    from torch_geometric_san.nn.models import MultiOrderSAN
    data = with_signal(kit.delaunay(10))
    for k in (0, 2):
        data[f'x_{k}'] = torch.randn(data.num_simplices(k), 3, dtype=torch.float64)
    make = SAN if cls == 'SAN' else MultiOrderSAN
    for dropout in (0, np.float32(0.25)):
        model = make(3, np.int64(8), np.int64(1), np.int64(2), readout='sum',
                     dropout=dropout).double()
        assert model(data).shape == (1, 2)
        assert type(model.dropout) is float and type(model.hidden_channels) is int
    conv = SANConv(3, np.int64(4), heads=np.int64(2)).double()
    assert conv(data.x_1, data.operators(1)).shape == (data.num_simplices(1), 8)
