import pytest
import torch
import torch.nn.functional as F

from torch_geometric.data import Data
from torch_geometric.loader import DataLoader

from torch_geometric_san.data import SimplicialComplexData
from torch_geometric_san.nn import SANConv
from torch_geometric_san.nn.models import MultiOrderSAN

CONV = dict(J_up=2, J_down=2, J_harmonic=2)


def with_signals(data, channels=(3, 4, 2), seed=0):
    torch.manual_seed(seed)
    for k, c in enumerate(channels):
        data[f'x_{k}'] = torch.randn(data.num_simplices(k), c, dtype=torch.float64)
    return data


def model(*args, seed=0, **kwargs):
    torch.manual_seed(seed)
    kwargs.setdefault('conv_kwargs', CONV)
    return MultiOrderSAN(*args, **kwargs).double()


@pytest.mark.parametrize('combine', ['cat', 'sum'])
@pytest.mark.parametrize('readout', ['sum', 'mean', 'max'])
def test_readout_shapes_and_batch_equals_each_complex(kit, readout, combine):
    complexes = [with_signals(kit.delaunay(n, seed=n), seed=n) for n in (9, 12, 10)]
    net = model([3, 4, 2], 8, num_layers=2, out_channels=5, readout=readout,
                combine=combine).eval()
    batch = next(iter(DataLoader(complexes, batch_size=3)))
    out = net(batch)
    assert out.shape == (3, 5)
    alone = torch.cat([net(data) for data in complexes])
    assert torch.allclose(out, alone, atol=1e-12)
    assert net.mlp.channel_list[0] == 8 * (3 if combine == 'cat' else 1)


@pytest.mark.parametrize('k', [0, 1, 2])
def test_per_simplex_output_and_batch(kit, k):
    complexes = [with_signals(kit.delaunay(n, seed=n), seed=n) for n in (9, 12)]
    net = model([3, 4, 2], 8, num_layers=3, out_channels=2, readout=None, order=k,
                conv_kwargs=dict(CONV, heads=2))
    batch = next(iter(DataLoader(complexes, batch_size=2)))
    out = net(batch)
    assert out.shape == (batch.num_simplices(k), 2)
    alone = torch.cat([net(data) for data in complexes])
    assert torch.allclose(out, alone, atol=1e-12)


def test_layer_is_san_conv_plus_messages_through_unsigned_boundaries(kit):
    data = with_signals(kit.delaunay(11))
    net = model([3, 4, 2], 6, num_layers=1, out_channels=1, readout='sum')
    layer = net.layers[0]
    B1 = data.operators(1).boundary.to_dense().abs()  # [N_0, N_1]
    B2 = data.operators(2).boundary.to_dense().abs()  # [N_1, N_2]
    ops = data.operators(1)
    expected = (layer.convs['1'](data.x_1, ops)
                + layer.from_below['1'](B1.t() @ data.x_0)
                + layer.from_above['1'](B2 @ data.x_2))
    out = layer({k: data[f'x_{k}'] for k in range(3)},
                {k: data.operators(k) for k in range(3)},
                {k: data.operators(k - 1).coboundary.abs() for k in (1, 2)})
    assert torch.allclose(out[1], expected, atol=1e-12)
    assert set(out) == {0, 1, 2} and '0' not in layer.from_below
    assert '2' not in layer.from_above
    # No lower branch on the nodes, no upper one on the triangles.
    assert layer.convs['0'].J_down == 0 and layer.convs['0'].J_up == 2
    assert layer.convs['2'].J_up == 0 and layer.convs['2'].J_down == 2


def test_the_unsigned_incidences_are_kept_on_the_operators(kit):
    # |B_k|^T was built anew on every forward (its compressed rows and transpose
    # derived again each time); it is kept on the operators value as they are.
    data = with_signals(kit.delaunay(10))
    net = model([3, 4, 2], 6, num_layers=2, out_channels=1, readout='sum')
    first = net(data)
    kept = {k: data.operators(k - 1).coboundary.abs() for k in (1, 2)}
    assert all(kept[k].t() is data.operators(k - 1).coboundary.abs().t() for k in kept)
    assert torch.equal(net(data), first)
    assert all(data.operators(k - 1).coboundary.abs() is kept[k] for k in kept)


def test_without_inter_order_messages_it_is_san_per_order(kit):
    data = with_signals(kit.delaunay(11))
    net = model([3, 4, 2], 6, num_layers=2, out_channels=2, readout=None, order=1,
                inter_order=False, readout_layers=1)
    # Only order 1 is computed: the layers of SAN and a linear head.
    assert [list(layer.convs) for layer in net.layers] == [['1'], ['1']]
    first, second = (layer.convs['1'] for layer in net.layers)
    ops = data.operators(1)
    expected = net.mlp(F.relu(second(F.relu(first(data.x_1, ops)), ops)))
    assert torch.allclose(net(data), expected, atol=1e-12)
    assert isinstance(first, SANConv)


def test_per_simplex_output_computes_only_what_reaches_its_order(kit):
    net = model(3, 4, num_layers=3, out_channels=1, max_order=3, readout=None,
                order=0)
    assert [sorted(layer.convs) for layer in net.layers] == [
        ['0', '1', '2'], ['0', '1'], ['0']]
    data = with_signals(kit.clique(9, max_order=3), channels=(3, 3, 3, 3))
    assert net(data).shape == (data.num_simplices(0), 1)


@pytest.mark.parametrize('readout', ['sum', 'mean', 'max'])
def test_empty_orders_in_a_batch(kit, readout):
    # The second complex has no triangles, a third only nodes and edges of a
    # path; the batch of the last two has no triangles at all.
    complexes = [kit.delaunay(10, seed=1), kit.delaunay(9, drop_triangles=10 ** 6),
                 kit.delaunay(8, seed=2, drop_triangles=10 ** 6)]
    for i, data in enumerate(complexes):
        with_signals(data, seed=i)
    assert complexes[1].num_simplices(2) == 0
    net = model([3, 4, 2], 4, num_layers=2, out_channels=2, readout=readout,
                jk='lstm').eval()
    for size in (3, 2):
        batch = next(iter(DataLoader(complexes[3 - size:], batch_size=size)))
        out = net(batch)
        assert out.shape == (size, 2) and torch.isfinite(out).all()
        alone = torch.cat([net(data) for data in complexes[3 - size:]])
        assert torch.allclose(out, alone, atol=1e-12)
    per_triangle = model([3, 4, 2], 4, num_layers=2, out_channels=2, readout=None,
                         order=2)
    assert per_triangle(complexes[1]).shape == (0, 2)


def standardise(h, groups):
    # (h - mean) / sqrt(biased var + eps) per column, within each group of rows.
    out = torch.empty_like(h)
    for rows in groups:
        part = h[rows]
        out[rows] = (part - part.mean(0)) / (part.var(0, unbiased=False) + 1e-5).sqrt()
    return out


@pytest.mark.parametrize('norm', ['batch_norm', 'graph_norm'])
def test_normalisation_of_each_layer_and_order(kit, norm):
    # One layer, no activation: the output is the MLP of the sum readouts of
    # norm_k(layer_k), with batch normalisation over the whole batch and graph
    # normalisation over each complex's k-simplices (both at initialisation,
    # in training mode).
    complexes = [with_signals(kit.delaunay(n, seed=n), seed=n) for n in (9, 12, 10)]
    batch = next(iter(DataLoader(complexes, batch_size=3)))
    net = model([3, 4, 2], 6, num_layers=1, out_channels=2, act='identity',
                norm=norm)
    assert sorted(net.norms[0]) == ['0', '1', '2']
    assert net.supports_norm_batch == (norm == 'graph_norm')
    layer = net.layers[0]
    hs = layer({k: batch[f'x_{k}'] for k in range(3)},
               {k: batch.operators(k) for k in range(3)},
               {k: batch.operators(k - 1).coboundary.abs() for k in (1, 2)})
    pooled = []
    for k in range(3):
        owner = batch.simplex_batch(k)
        groups = [owner == g for g in range(3)] if norm == 'graph_norm' else [
            torch.ones_like(owner, dtype=torch.bool)]
        z = standardise(hs[k], groups)
        pooled.append(torch.stack([z[owner == g].sum(0) for g in range(3)]))
    expected = net.mlp(torch.cat(pooled, dim=-1))
    assert torch.allclose(net(batch), expected, atol=1e-10)
    # Batch normalisation tracked the batch's statistics; in evaluation mode
    # graph normalisation still treats each complex on its own.
    if norm == 'batch_norm':
        assert torch.allclose(net.norms[0]['1'].module.running_mean,
                              0.1 * hs[1].mean(0), atol=1e-10)
    else:
        net.eval()
        alone = torch.cat([net(data) for data in complexes])
        assert torch.allclose(net(batch), alone, atol=1e-10)


def test_normalisation_with_an_order_empty_in_the_batch(kit):
    complexes = [with_signals(kit.delaunay(n, seed=n, drop_triangles=10 ** 6), seed=n)
                 for n in (9, 8)]
    batch = next(iter(DataLoader(complexes, batch_size=2)))
    assert batch.num_simplices(2) == 0
    net = model([3, 4, 2], 4, num_layers=2, out_channels=2, norm='batch_norm')
    out = net(batch)
    assert out.shape == (2, 2) and torch.isfinite(out).all()
    # The empty order left the triangles' statistics as they were.
    assert torch.equal(net.norms[0]['2'].module.running_mean, torch.zeros(4).double())
    # One triangle: batch statistics need two, unless single elements are allowed
    # (documented).
    single = with_signals(SimplicialComplexData.from_simplices(
        [[0, 1, 2], [1, 3]], close=True), seed=3)
    assert single.num_simplices(2) == 1
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        net(single)
    allowed = model([3, 4, 2], 4, num_layers=2, out_channels=2, norm='batch_norm',
                    norm_kwargs=dict(allow_single_element=True))
    assert torch.isfinite(allowed(single)).all()


@pytest.mark.parametrize('jk', ['cat', 'max'])
def test_jumping_knowledge_combines_every_layer(kit, jk):
    complexes = [with_signals(kit.delaunay(n, seed=n), seed=n) for n in (9, 12)]
    batch = next(iter(DataLoader(complexes, batch_size=2)))
    net = model([3, 4, 2], 6, num_layers=2, out_channels=2, jk=jk).eval()
    ops = {k: batch.operators(k) for k in range(3)}
    incidence = {k: batch.operators(k - 1).coboundary.abs() for k in (1, 2)}
    first = {k: F.relu(z) for k, z in net.layers[0](
        {k: batch[f'x_{k}'] for k in range(3)}, ops, incidence).items()}
    second = {k: F.relu(z) for k, z in net.layers[1](first, ops, incidence).items()}
    combined = [torch.cat([first[k], second[k]], dim=-1) if jk == 'cat' else
                torch.maximum(first[k], second[k]) for k in range(3)]
    pooled = [torch.stack([z[batch.simplex_batch(k) == g].sum(0) for g in range(2)])
              for k, z in enumerate(combined)]
    assert net.mlp.channel_list[0] == 3 * 6 * (2 if jk == 'cat' else 1)
    assert torch.allclose(net(batch), net.mlp(torch.cat(pooled, dim=-1)), atol=1e-10)
    # Per simplex: the JK of the output order only.
    per_edge = model([3, 4, 2], 6, num_layers=2, out_channels=2, jk=jk, readout=None,
                     order=1)
    assert list(per_edge.jk) == ['1']
    assert per_edge(batch).shape == (batch.num_simplices(1), 2)


def test_readout_of_the_inputs(kit):
    complexes = [with_signals(kit.delaunay(n, seed=n), seed=n) for n in (9, 12)]
    batch = next(iter(DataLoader(complexes, batch_size=2)))
    net = model([3, 4, 2], 6, num_layers=1, out_channels=2, readout_input=True).eval()
    assert net.mlp.channel_list[0] == 3 * 6 + 3 + 4 + 2
    ops = {k: batch.operators(k) for k in range(3)}
    incidence = {k: batch.operators(k - 1).coboundary.abs() for k in (1, 2)}
    inputs = {k: batch[f'x_{k}'] for k in range(3)}
    layer = {k: F.relu(z) for k, z in net.layers[0](inputs, ops, incidence).items()}

    def pool(z, k):
        return torch.stack([z[batch.simplex_batch(k) == g].sum(0) for g in range(2)])

    pooled = [pool(layer[k], k) for k in range(3)] + [pool(inputs[k], k) for k in range(3)]
    assert torch.allclose(net(batch), net.mlp(torch.cat(pooled, dim=-1)), atol=1e-10)
    for kwargs in (dict(readout=None, order=1), dict(combine='sum')):
        with pytest.raises(ValueError, match="'readout_input' needs a readout with "
                                             "combine='cat'"):
            MultiOrderSAN(3, 8, 2, 1, readout_input=True, **kwargs)


def test_gradients_reach_every_parameter(kit):
    complexes = [with_signals(kit.delaunay(n, seed=n), seed=n) for n in (9, 12)]
    batch = next(iter(DataLoader(complexes, batch_size=2)))
    for kwargs, conv in ((dict(readout='mean'), dict(CONV, heads=2)),
                         (dict(readout=None, order=1), dict(CONV, heads=2)),
                         (dict(readout='max'), dict(CONV, attention='shared')),
                         (dict(readout='sum'), dict(CONV, shared_weights=True))):
        net = model([3, 4, 2], 4, num_layers=3, out_channels=2, conv_kwargs=conv,
                    **kwargs)
        net(batch).pow(2).sum().backward()
        missing = [name for name, p in net.named_parameters()
                   if p.grad is None or not bool(p.grad.abs().sum() > 0)]
        # Shared filter weights keep both branches, whose attention vectors
        # are separate: the absent branches' ones are unused (documented).
        assert missing == ([] if 'shared_weights' not in conv else [
            f'layers.{layer}.convs.{k}.att.{branch}_{role}' for layer in range(3)
            for k, branch in ((0, 'down'), (2, 'up')) for role in ('src', 'dst')])


@pytest.fixture
def one_thread():
    # Small sparse products: one thread is faster than several on a busy CPU.
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def test_learns_a_toy_task(kit, one_thread):
    # Label: whether the complex has more triangles per node than the median
    # complex. The features are all ones, so only the orders' sizes and their
    # connections tell it.
    complexes = []
    for seed in range(24):
        data = kit.delaunay(8 + seed % 7, seed=seed, drop_triangles=(seed % 4) * 3)
        with_signals(data, channels=(1, 1, 1), seed=seed)
        for k in range(3):
            data[f'x_{k}'] = torch.ones_like(data[f'x_{k}'])
        complexes.append(data)
    ratios = torch.tensor([d.num_simplices(2) / d.num_nodes for d in complexes])
    for data, ratio in zip(complexes, ratios):
        data.y = (ratio > ratios.median()).long().view(1)
    batch = next(iter(DataLoader(complexes, batch_size=len(complexes))))
    assert int(batch.y.sum()) == 12
    net = model(1, 8, num_layers=2, out_channels=2, readout='sum')
    optimizer = torch.optim.Adam(net.parameters(), lr=0.03)
    for _ in range(40):
        optimizer.zero_grad()
        F.cross_entropy(net(batch), batch.y).backward()
        optimizer.step()
    accuracy = (net(batch).argmax(-1) == batch.y).float().mean()
    assert accuracy >= 0.9, float(accuracy)


@pytest.mark.parametrize('conv_kwargs, invariant', [
    (dict(J_up=2, J_down=2, J_harmonic=0), True),
    (dict(J_harmonic=2), False), (dict(attention=None), False),
    (dict(J_harmonic=0, orientation_equivariant=True), False)])
def test_lifted_graph_output_and_the_numbering_of_its_vertices(conv_kwargs, invariant):
    # Lifted node features carry no orientation: the attention branches and the
    # messages through |B| read no signs, the harmonic filter, the fixed-weight
    # branches and the orientation-equivariant scores read the signed Laplacians (as
    # the docstring says).
    from torch_geometric_san.transforms import LiftToCliqueComplex
    torch.manual_seed(0)
    edge_index = torch.tensor([[0, 0, 1, 1, 2, 3, 4], [1, 2, 2, 3, 3, 4, 5]])
    x = torch.randn(6, 3, dtype=torch.float64)
    perm = torch.tensor([3, 1, 5, 0, 2, 4])  # vertex i becomes perm[i]
    lift = LiftToCliqueComplex(max_order=2, lift_x=True, dtype=torch.float64)
    graph = lift(Data(x=x, edge_index=edge_index, num_nodes=6))
    renumbered = lift(Data(x=x[torch.argsort(perm)], edge_index=perm[edge_index],
                           num_nodes=6))
    net = model(3, 8, num_layers=2, out_channels=2, conv_kwargs=conv_kwargs).eval()
    same = torch.allclose(net(graph), net(renumbered), atol=1e-12)
    assert same == invariant


def test_input_is_not_modified_and_reset_parameters(kit):
    data = with_signals(kit.delaunay(10))
    before = {key: value.clone() for key, value in data.items()
              if isinstance(value, torch.Tensor)}
    net = model([3, 4, 2], 4, num_layers=2, out_channels=2, dropout=0.3,
                norm='graph_norm', jk='lstm')
    out = net.eval()(data)
    for key, value in before.items():
        assert torch.equal(data[key], value), key
    with torch.no_grad():
        for p in net.parameters():
            p.fill_(7.0)
    net.reset_parameters()
    kept = [name for name, p in net.named_parameters() if bool((p == 7.0).any())]
    assert kept == []
    assert not torch.allclose(net(data), out)
    # (session 28: the parameters of a norm inside a container were kept)
    net = model([3, 4, 2], 4, num_layers=2, out_channels=2,
                norm=torch.nn.Sequential(torch.nn.Sequential(torch.nn.LayerNorm(4))))
    with torch.no_grad():
        for p in net.parameters():
            p.fill_(7.0)
    net.reset_parameters()
    assert [name for name, p in net.named_parameters() if bool((p == 7.0).any())] == []
    torch.manual_seed(1)
    net.reset_parameters()
    first = [p.clone() for p in net.parameters()]
    torch.manual_seed(1)
    net.reset_parameters()
    assert all(torch.equal(a, b) for a, b in zip(first, net.parameters()))


def test_repr():
    net = MultiOrderSAN(3, 8, num_layers=2, out_channels=2)
    assert str(net) == ("MultiOrderSAN([3, 3, 3], 2, num_layers=2, max_order=2, "
                        "readout='sum', order=None, inter_order=True, norm=None, "
                        "jk=None)")
    net = MultiOrderSAN(3, 8, num_layers=2, out_channels=2, norm='batch_norm', jk='cat')
    assert str(net).endswith("norm='batch_norm', jk='cat')")
    from torch_geometric.nn import PairNorm  # (a module given printed norm=None)
    net = MultiOrderSAN(3, 8, num_layers=2, out_channels=2, norm=PairNorm())
    assert "norm='PairNorm()'" in str(net) and 'norm' not in net._modules


@pytest.mark.parametrize('norm', [None, 'module'])
def test_norm_kwargs_without_a_norm_name_are_refused(norm):
    # (PyG's resolver ignored them: PairNorm(scale=1.0) kept its scale)
    from torch_geometric.nn import PairNorm
    with pytest.raises(ValueError, match=r"'norm_kwargs' are the arguments of a "
                       r"normalisation given by name; with norm="
                       f"{'None' if norm is None else 'a module'} they would have no "
                       r"effect \(got \['scale'\]\)"):
        MultiOrderSAN(3, 8, num_layers=2, out_channels=2,
                      norm=None if norm is None else PairNorm(scale=1.0),
                      norm_kwargs=dict(scale=50.0))


def test_invalid_arguments_and_input(kit):
    with pytest.raises(ValueError, match="one size per order 0..2"):
        MultiOrderSAN([3, 3], 8, 2, 1)
    with pytest.raises(TypeError, match="in_channels"):
        MultiOrderSAN('3', 8, 2, 1)
    with pytest.raises(ValueError, match="num_layers"):
        MultiOrderSAN(3, 8, 0, 1)
    with pytest.raises(ValueError, match="needs the 'order'"):
        MultiOrderSAN(3, 8, 2, 1, readout=None)
    with pytest.raises(ValueError, match="order"):
        MultiOrderSAN(3, 8, 2, 1, readout=None, order=3)
    with pytest.raises(ValueError, match="cannot be given with a readout"):
        MultiOrderSAN(3, 8, 2, 1, order=1)
    with pytest.raises(ValueError, match="'readout' must be None or one of"):
        MultiOrderSAN(3, 8, 2, 1, readout='flatten')
    with pytest.raises(ValueError, match="'combine'"):
        MultiOrderSAN(3, 8, 2, 1, combine='max')
    with pytest.raises(ValueError, match="dropout"):
        MultiOrderSAN(3, 8, 2, 1, dropout=1.0)
    with pytest.raises(TypeError, match="inter_order"):
        MultiOrderSAN(3, 8, 2, 1, inter_order='yes')
    with pytest.raises(ValueError, match="concat"):
        MultiOrderSAN(3, 8, 2, 1, conv_kwargs=dict(concat=False))
    with pytest.raises(ValueError, match="'jk' must be one of"):
        MultiOrderSAN(3, 8, 2, 1, jk='sum')
    # (each of these failed later, or deep inside torch or PyG)
    with pytest.raises(ValueError, match="'readout' must be None or one of"):
        MultiOrderSAN(3, 8, 2, 1, readout=['sum'])
    with pytest.raises(ValueError, match="MultiOrderSAN takes no ensemble"):
        MultiOrderSAN(3, 8, 2, 1, conv_kwargs=dict(ensemble=2))
    with pytest.raises(TypeError, match="'conv_kwargs' must be a dict"):
        MultiOrderSAN(3, 8, 2, 1, conv_kwargs=[('J_up', 2)])
    with pytest.raises(TypeError, match="'act' must be an activation's name"):
        MultiOrderSAN(3, 8, 2, 1, act=3)
    with pytest.raises(ValueError, match="jk='lstm' needs at least 2 features"):
        MultiOrderSAN(3, 1, num_layers=1, out_channels=2, jk='lstm')
    with pytest.raises(ValueError, match="Could not resolve 'foo_norm'"):
        MultiOrderSAN(3, 8, 2, 1, norm='foo_norm')
    with pytest.raises(ValueError, match="eps"):  # conv_kwargs reach SANConv
        MultiOrderSAN(3, 8, 2, 1, conv_kwargs=dict(eps=3.0))

    net = model([3, 4, 2], 4, num_layers=1, out_channels=2)
    data = with_signals(kit.delaunay(10))
    with pytest.raises(TypeError, match="SimplicialComplexData"):
        net(Data(x=torch.randn(3, 3)))
    with pytest.raises(TypeError, match="SimplicialComplexData"):
        net(data.x_0)
    with pytest.raises(ValueError, match="order 3 .got order 2; lift with max_order=3"):
        model(3, 4, num_layers=1, out_channels=2, max_order=3)(data)
    with pytest.raises(ValueError, match="max_order"):
        MultiOrderSAN(3, 8, 2, 1, max_order=0)
    del data.x_2
    with pytest.raises(ValueError, match="x_2"):
        net(data)
    data.x_2 = torch.randn(data.num_simplices(2), 5, dtype=torch.float64)
    with pytest.raises(ValueError, match=r"'x_2' must have shape \[N_2, 2\]"):
        net(data)
    # Signals of another dtype than the model's: also x_1 of a per-vertex model, which
    # its first layer reads through a linear map only (no SANConv of order 1).
    data = with_signals(kit.delaunay(10))
    data.x_1 = data.x_1.float()
    for net in (model([3, 4, 2], 4, num_layers=1, out_channels=2),
                model([3, 4, 2], 4, num_layers=1, out_channels=2, readout=None, order=0)):
        assert '1' not in net.layers[0].convs or net.readout is not None
        with pytest.raises(TypeError, match=r"'x_1' is torch.float32 but the model's "
                                            r"parameters are torch.float64"):
            net(data)
    data.x_1 = data.x_1.long()
    with pytest.raises(TypeError, match="x_1"):
        net(data)
    data.x_1 = data.x_1.tolist()  # not a tensor: failed in x.dim() before the check
    with pytest.raises(TypeError, match="'x_1' must be a floating-point tensor"):
        net(data)


def without_triangles(n, seed):
    # a path of n vertices, lifted to order 2 (no triangles), with signals
    data = SimplicialComplexData.from_simplices([[i, i + 1] for i in range(n - 1)],
                                                order=2, dtype=torch.float64)
    return with_signals(data, seed=seed)


@pytest.mark.parametrize('kwargs', [
    dict(norm='batch_norm'), dict(norm='layer_norm'), dict(norm='graph_norm'),
    dict(norm='graph_norm', jk='cat'), dict(readout=None, order=2, norm='layer_norm'),
    dict(inter_order=False, conv_kwargs=dict(J_harmonic=None))])
def test_every_parameter_gets_a_gradient_on_a_batch_without_triangles(kwargs):
    # DistributedDataParallel (find_unused_parameters=False) expects a gradient for
    # every parameter in every step: the norms of the empty order got none, and
    # without a harmonic tap the layers before an empty order got none.
    batch = next(iter(DataLoader([without_triangles(n, n) for n in (4, 6)],
                                 batch_size=2)))
    net = model([3, 4, 2], 4, num_layers=2, out_channels=2, **kwargs)
    out = net(batch)
    (out.pow(2).sum() if out.numel() else out.sum()).backward()
    assert [name for name, p in net.named_parameters() if p.grad is None] == []


@pytest.mark.parametrize('in_channels', [-1, [-1, 4, -1]])
def test_lazy_in_channels(kit, in_channels):
    # -1 takes an order's size from the first input (its SANConv and the linear maps
    # of its messages to the neighbouring orders); the model then computes what the
    # model of those sizes computes with the same parameters.
    complexes = [with_signals(kit.delaunay(n, seed=n), seed=n) for n in (9, 12)]
    batch = next(iter(DataLoader(complexes, batch_size=2)))
    lazy = model(in_channels, 8, num_layers=2, out_channels=2).eval()
    out = lazy(batch)
    assert [lazy.layers[0].input_size(k) for k in range(3)] == [3, 4, 2]
    eager = model([3, 4, 2], 8, num_layers=2, out_channels=2).eval()
    eager.load_state_dict(lazy.state_dict())
    assert torch.equal(eager(batch), out)
    other = batch.clone()
    other.x_2 = other.x_2[:, :1]
    with pytest.raises(ValueError, match=r"'x_2' must have shape \[N_2, 2\]"):
        lazy(other)
    # A per-simplex output reads x_k of the orders that reach it only.
    lazy = model(-1, 8, num_layers=1, out_channels=2, readout=None, order=0)
    assert lazy(batch).shape == (batch.num_simplices(0), 2)
    assert lazy.layers[0].input_size(2) == -1  # (never read)


def test_lazy_in_channels_refusals(kit):
    data = with_signals(kit.delaunay(9))
    with pytest.raises(ValueError, match="'readout_input' needs every order's"):
        model(-1, 8, num_layers=1, out_channels=2, readout_input=True)
    data.x_1 = data.x_1[:, :0]
    with pytest.raises(ValueError, match=r"'x_1' must have shape \[N_1, F\] with F >= 1"):
        model(-1, 8, num_layers=1, out_channels=2)(data)


def test_norm_names_that_take_no_width_first_are_refused(kit):
    # A name is built as norm(width, **norm_kwargs), as PyG's GIN builds it:
    # PairNorm took the width as its `scale` (silently), others failed inside PyG.
    from torch_geometric.nn import DiffGroupNorm, PairNorm
    with pytest.raises(ValueError, match="first argument is 'scale'.*norm=PairNorm()"):
        MultiOrderSAN(3, 8, 1, 2, norm='pair_norm')
    for name in ('graph_size_norm', 'mean_subtraction_norm', 'diff_group_norm'):
        with pytest.raises(ValueError, match=f"norm='{name}' cannot be built as "
                                             f"norm\\(channels, \\*\\*norm_kwargs\\)"):
            MultiOrderSAN(3, 8, 1, 2, norm=name)
    net = MultiOrderSAN(3, 8, 1, 2, norm='diff_group_norm', norm_kwargs=dict(groups=2))
    assert isinstance(net.norms[0]['0'], DiffGroupNorm)
    net = MultiOrderSAN(3, 8, 1, 2, norm=PairNorm(scale=2.0))  # a module: copied
    norms = [net.norms[0][str(k)] for k in range(3)]
    assert all(isinstance(n, PairNorm) and n.scale == 2.0 for n in norms)
    assert len({id(n) for n in norms}) == 3
    data = with_signals(kit.delaunay(9), channels=(3, 3, 3))
    assert net.double()(data).shape == (1, 2)


def test_lazy_maps_take_the_dtype_of_the_model(kit):
    # The linear maps of the messages between orders (PyG's Linear(-1)) and the
    # layers' filter weights are materialised in the model's dtype, also where a
    # pickle lost the dtype of their uninitialised weights.
    import io
    complexes = [with_signals(kit.delaunay(n, seed=n), seed=n) for n in (9, 12)]
    batch = next(iter(DataLoader(complexes, batch_size=2)))
    buffer = io.BytesIO()
    torch.save(MultiOrderSAN(-1, 8, num_layers=2, out_channels=2).double(), buffer)
    buffer.seek(0)
    net = torch.load(buffer, weights_only=False)
    assert net(batch).dtype == torch.float64
    assert {p.dtype for p in net.parameters()} == {torch.float64}


def test_norm_must_be_a_name_a_module_or_none():
    # a class or a function failed inside torch's ModuleDict
    from torch_geometric.nn import GraphNorm
    for norm, name in ((GraphNorm, 'GraphNorm'), (123, 'int'), (abs, 'builtin_function')):
        with pytest.raises(TypeError, match=f"norm must be a name, a module or None, "
                                            f"not {name}"):
            MultiOrderSAN(3, 8, 1, 2, norm=norm)


@pytest.mark.parametrize('change, message', [
    (lambda b: b[:-1], r"'batch' must have shape \[\d+\]"),
    (lambda b: b + 5, "'batch' holds complex id"),
    (torch.zeros_like, "does not give each vertex the complex its 'ptr' puts it in"),
])
def test_a_changed_batch_vector_is_refused(kit, change, message):
    # It reached PyG's scatter or an index (errors inside them), or, of the right
    # length, pooled the vertices into other complexes than their simplices.
    complexes = [with_signals(kit.delaunay(n, seed=n), seed=n) for n in (9, 12)]
    batch = next(iter(DataLoader(complexes, batch_size=2)))
    batch.batch = change(batch.batch)
    with pytest.raises(ValueError, match=message):
        model([3, 4, 2], 8, num_layers=1, out_channels=2, readout='sum')(batch)


@pytest.mark.parametrize('change', [lambda p: p[:-1], lambda p: p * 2,
                                    lambda p: p.flip(0), lambda p: p.float()])
def test_a_changed_ptr_is_refused(kit, change):
    # (a wrong last offset failed inside repeat_interleave; others blamed 'batch')
    complexes = [with_signals(kit.delaunay(n, seed=n), seed=n) for n in (9, 12)]
    batch = next(iter(DataLoader(complexes, batch_size=2)))
    batch.ptr = change(batch.ptr)
    with pytest.raises(ValueError, match="the batch's 'ptr' must hold the 3 ascending "
                                         "offsets"):
        batch.simplex_batch(0)
