"""simplicial_subcomplex: relabelled simplices, exact boundaries, restricted operators
of the full complex (with or without its stored Laplacians), attributes;
SimplicialAdjacency."""
import warnings

import pytest
import torch
from torch_geometric.data import Batch, Data
from torch_geometric.utils import erdos_renyi_graph, to_networkx

from torch_geometric_san.data import SimplicialComplexData, simplex_attr_orders
from torch_geometric_san.loader import (SimplicialAdjacency, SimplicialNeighborLoader,
                                        edge_rows, simplicial_subcomplex)
from torch_geometric_san.transforms import LiftToCliqueComplex


def sample(data, k, count=30, seed=0):
    return torch.randperm(data.num_simplices(k),
                          generator=torch.Generator().manual_seed(seed))[:count]


@pytest.mark.parametrize('k', [0, 1, 2])
def test_structure_and_operators(spatial, dense, k):
    data, n_id = spatial, sample(spatial, k)
    sub = simplicial_subcomplex(data, k, n_id)
    assert sub.order == k and torch.equal(sub.n_id, n_id)
    ids = [sub[f'n_id_{j}'] for j in range(k)] + [n_id]
    assert sub.num_nodes == ids[0].numel()
    for j in range(k + 1):
        assert sub.num_simplices(j) == ids[j].numel()
        torch.testing.assert_close(sub[f'x_{j}'], data[f'x_{j}'][ids[j]])
        assert torch.equal(sub[f'spectrum_{j}'], data[f'spectrum_{j}'])
        if j > 0:  # vertices relabelled, the faces all kept, B_j exact
            assert torch.equal(ids[0][sub[f'simplices_{j}']],
                               data[f'simplices_{j}'][ids[j]])
            full = dense(*data.boundary(j),
                         (data.num_simplices(j), data.num_simplices(j - 1)))
            torch.testing.assert_close(
                dense(*sub.boundary(j), (ids[j].numel(), ids[j - 1].numel())),
                full[ids[j]][:, ids[j - 1]])
            assert full[ids[j]].abs().sum() == sub.boundary(j)[1].abs().sum()
        n = data.num_simplices(j)
        for name in ('up', 'down', 'hodge'):
            index, weight = getattr(sub, f'{name}_laplacian')(j)
            # sorted by target, then source, as SparseOperator trusts
            key = index[1] * ids[j].numel() + index[0]
            assert torch.equal(key, key.unique())
            expected = dense(*getattr(data, f'{name}_laplacian')(j), (n, n))
            torch.testing.assert_close(dense(index, weight, (ids[j].numel(), ) * 2),
                                       expected[ids[j]][:, ids[j]])
    ops = sub.operators(k)
    assert ops.num_simplices == n_id.numel() and ops.coboundary.nnz == 0
    torch.testing.assert_close(ops.up.eigenvalue,
                               data[f'spectrum_{k}'][:, 1].expand(n_id.numel()))


def test_attributes(planar):
    data = planar.clone()
    n = data.num_simplices(1)
    data.y = torch.arange(n)
    data.train_mask = torch.arange(n) % 2 == 0
    data.name = 'planar'
    data.scale = torch.tensor([2.0])
    before = {key: value.clone() for key, value in data.items()
              if isinstance(value, torch.Tensor)}
    n_id = sample(data, 1)
    sub = simplicial_subcomplex(data, 1, n_id)
    assert torch.equal(sub.y, n_id) and torch.equal(sub.train_mask, n_id % 2 == 0)
    assert sub.name == 'planar' and torch.equal(sub.scale, data.scale)
    # nothing of orders above 1
    assert not any(key.endswith('_2') for key in sub.keys())
    for key, value in before.items():  # the complex is left as it was
        assert torch.equal(data[key], value), key


def test_attributes_of_every_order_follow_their_simplices(planar):
    # Labels of the faces (orders below k) keep the kept faces' rows; those of
    # orders above k are dropped with the features of those orders. They were
    # copied whole before, misaligned with the sub-complex's simplices.
    data = planar.clone()
    counts = [data.num_simplices(j) for j in range(3)]
    assert len(set(counts)) == 3
    for j, name in enumerate(['node_label', 'edge_label', 'triangle_label']):
        data[name] = torch.arange(counts[j]) + 1000 * j
    for k in range(3):
        n_id = sample(data, k, count=8)
        sub = simplicial_subcomplex(data, k, n_id)
        ids = [sub[f'n_id_{j}'] for j in range(k)] + [n_id]
        for j, name in enumerate(['node_label', 'edge_label', 'triangle_label']):
            if j <= k:
                assert torch.equal(sub[name], ids[j] + 1000 * j), (k, name)
            else:
                assert name not in sub, (k, name)


def test_an_ambiguous_attribute_is_copied_with_a_warning_and_attrs_settle_it(
        cycle_with_pos):
    # A cycle has as many edges as vertices: pos could be either.
    data = cycle_with_pos
    with pytest.warns(UserWarning, match=r"SimplicialNeighborLoader copies 'pos' "
                                         r"unchanged: its 7 rows match N_0 and N_1") \
            as caught:
        loader = SimplicialNeighborLoader(data, [1], order=1, batch_size=2)
    assert [w.filename for w in caught] == [__file__]  # (the user's line)
    assert torch.equal(next(iter(loader)).pos, data.pos)
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        batch = next(iter(SimplicialNeighborLoader(data, [1], order=1, batch_size=2,
                                                   attrs={'pos': 0})))
    assert torch.equal(batch.pos, data.pos[batch.n_id_0])
    with pytest.raises(ValueError, match="'pos' is of order 2 but the complex has order 1"):
        SimplicialNeighborLoader(data, [1], order=1, attrs={'pos': 2})


def test_simplicial_subcomplex_names_its_own_remedy(cycle_with_pos):
    # (it advised attrs=..., an argument it does not have)
    data, n_id = cycle_with_pos, torch.tensor([0, 1])
    with pytest.warns(UserWarning, match=r"simplicial_subcomplex copies 'pos' unchanged"
                      r".*; pass attr_orders=simplex_attr_orders\(data, "
                      r"attrs=\{'pos': 1\}\) to settle it") as caught:
        assert torch.equal(simplicial_subcomplex(data, 0, n_id).pos, data.pos)
    assert [w.filename for w in caught] == [__file__]  # (the user's line)
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        table = simplex_attr_orders(data, attrs={'pos': 0})
        sub = simplicial_subcomplex(data, 0, n_id, attr_orders=table)
    assert torch.equal(sub.pos, data.pos[:2])


@pytest.mark.parametrize('search', [False, True])
@pytest.mark.parametrize('k', [0, 1, 2])
def test_a_lifted_graph_keeps_its_induced_subgraph(k, search, monkeypatch):
    # The graph's edge_index (kept by the lifting), its edge and vertex attributes
    # follow the kept vertices; the sub-complex validates.
    # With the loader's index of edge_index by source, or one pass over it; a
    # self-loop and a repeated edge are kept as given, also where the rows are
    # searched by bisection (as a hub's are).
    if search:
        from torch_geometric_san.loader import utils
        monkeypatch.setattr(utils, '_SEARCH_CALL', -10 ** 9)
    torch.manual_seed(0)
    graph_edges = torch.cat([erdos_renyi_graph(60, 0.15),
                             torch.tensor([[5, 7], [5, 8]])], dim=1)
    graph_edges = torch.cat([graph_edges, graph_edges[:, :3]], dim=1)
    graph = Data(edge_index=graph_edges, num_nodes=60, pos=torch.randn(60, 2))
    data = LiftToCliqueComplex(max_order=2)(graph)
    data.edge_weight = torch.rand(data.edge_index.size(1))
    n_id = sample(data, k, count=12)
    sub = simplicial_subcomplex(data, k, n_id)
    indexed = simplicial_subcomplex(data, k, n_id,
                                    graph_rows=edge_rows(data.edge_index, 60))
    vertices = sub.n_id if k == 0 else sub.n_id_0
    kept = (torch.isin(data.edge_index, vertices).all(0)).nonzero().view(-1)
    assert kept.numel() > 0 and sub.validate()
    assert torch.equal(vertices[sub.edge_index], data.edge_index[:, kept])
    assert torch.equal(sub.edge_weight, data.edge_weight[kept])
    assert torch.equal(sub.pos, data.pos[vertices])
    assert to_networkx(sub).number_of_nodes() == vertices.numel()
    for key, value in sub.items():
        assert torch.equal(indexed[key], value) if isinstance(value, torch.Tensor) \
            else indexed[key] == value, key


@pytest.mark.parametrize('dtype', [torch.uint8, torch.int16, torch.int32])
def test_a_narrow_kept_edge_index_gives_the_same_subcomplex(dtype):
    # (int16 and uint8 failed inside torch's index_select)
    torch.manual_seed(0)
    graph = Data(edge_index=erdos_renyi_graph(30, 0.2), num_nodes=30)
    data = LiftToCliqueComplex(max_order=2)(graph)
    seeds = torch.tensor([0, 3, 7])
    reference = simplicial_subcomplex(data, 1, seeds)
    data.edge_index = data.edge_index.to(dtype)
    sub = simplicial_subcomplex(data, 1, seeds)
    assert torch.equal(sub.edge_index, reference.edge_index)


@pytest.mark.parametrize('data, error, pattern', [
    (lambda d: Data(num_nodes=3), TypeError,
     'data must be a SimplicialComplexData, not Data'),
    (lambda d: Batch.from_data_list([d, d]), TypeError,
     'data is a batch of complexes; sample one complex'),
])
def test_adjacency_of_one_complex_only(planar, assert_rejected, data, error, pattern):
    assert_rejected(SimplicialAdjacency, (data(planar), 1), {}, error, pattern)


def test_a_mask_gives_the_same_subcomplex_as_its_ids(planar):
    n_id = sample(planar, 1).sort().values
    mask = torch.zeros(planar.num_simplices(1), dtype=torch.bool)
    mask[n_id] = True
    by_ids, by_mask = (simplicial_subcomplex(planar, 1, ids) for ids in (n_id, mask))
    for key, value in by_ids.items():
        assert torch.equal(by_mask[key], value) if isinstance(value, torch.Tensor) \
            else by_mask[key] == value, key
    assert torch.equal(simplicial_subcomplex(planar, 1, n_id.int()).n_id, n_id)


@pytest.mark.parametrize('args, error, pattern', [
    (lambda d: (d, -1, torch.tensor([0])), ValueError, 'order must be at least 0'),
    (lambda d: (d, 3, torch.tensor([0])), ValueError, 'order must be at most 2'),
    (lambda d: (d, 1.0, torch.tensor([0])), TypeError, 'order must be an int'),
    (lambda d: (d, 1, torch.tensor([0, 0])), ValueError,
     'n_id holds repeated ids; each 1-simplex can be taken once'),
    (lambda d: (d, 1, torch.tensor([-1])), ValueError, r'n_id holds ids outside \[0, '),
    (lambda d: (d, 1, torch.tensor([d.num_simplices(1)])), ValueError, 'outside'),
    (lambda d: (d, 1, torch.tensor([0., 1.])), TypeError,
     'n_id must be a boolean mask or a 1-D integer tensor'),
    (lambda d: (d, 1, torch.tensor([[0, 1]])), TypeError, '1-D integer tensor'),
    (lambda d: (d, 1, [0, 1]), TypeError, 'n_id must be a tensor'),
    (lambda d: (d, 1, torch.ones(3, dtype=torch.bool)), ValueError,
     r'the mask n_id must have shape \['),
    (lambda d: (Data(num_nodes=3), 1, torch.tensor([0])), TypeError,
     'data must be a SimplicialComplexData, not Data'),
    (lambda d: (Batch.from_data_list([d, d]), 1, torch.tensor([0])), TypeError,
     'data is a batch of complexes; sample one complex'),
])
def test_bad_input_is_rejected(planar, assert_rejected, args, error, pattern):
    # Before, these failed inside index_select or, for order -1, repeated ids and a
    # batch, returned a sub-complex without a word.
    assert_rejected(simplicial_subcomplex, args(planar), {}, error, pattern)


def test_the_tables_given_must_be_those_of_the_complex(planar):
    # A list in the wrong order or of the wrong orders gave a wrong sub-complex
    # without a word; a short one failed with an IndexError.
    tables = [SimplicialAdjacency(planar, j) for j in range(3)]
    n_id = torch.tensor([0, 5])
    right = simplicial_subcomplex(planar, 1, n_id, adjacency=tables[:2])
    assert torch.equal(right.simplices_1, simplicial_subcomplex(planar, 1, n_id)
                       .simplices_1)
    for wrong in ([tables[1], tables[0]], [tables[0], tables[2]]):
        with pytest.raises(ValueError, match=r"adjacency\[\d\] is the table of order"):
            simplicial_subcomplex(planar, 1, n_id, adjacency=wrong)
    with pytest.raises(TypeError, match="adjacency must be a list of the 2"):
        simplicial_subcomplex(planar, 1, n_id, adjacency=tables[1:2])
    with pytest.raises(TypeError, match="graph_rows must be the three integer tensors"):
        simplicial_subcomplex(planar, 1, n_id, graph_rows=torch.zeros(3))
    with pytest.raises(TypeError, match="attr_orders must be the dict"):
        simplicial_subcomplex(planar, 1, n_id, attr_orders=['y'])


@pytest.mark.parametrize('edge_index, error, message', [
    (torch.tensor([[0, 1], [1, 9]]), ValueError, "node 9, out of range for 9 nodes"),
    (torch.tensor([[0, -1], [1, 2]]), ValueError, "node -1, out of range for 9 nodes"),
    (torch.zeros(3, 2, dtype=torch.long), ValueError,
     r"edge_index must have shape \[2, num_edges\], got \[3, 2\]"),
    (torch.zeros(2, 2), TypeError, "edge_index must hold integers .*, got torch.float32"),
    # (a comparison inside torch failed)
    (torch.zeros(2, 2, dtype=torch.uint32), TypeError, r"edge_index must hold integers "
                                                        r"\(of a signed dtype, or uint8\), "
                                                        "got torch.uint32"),
])
def test_edge_rows_reject_a_bad_graph(edge_index, error, message):
    with pytest.raises(error, match=message):
        edge_rows(edge_index, 9)


@pytest.mark.parametrize('num_nodes, error', [('3', 'not str'), (3.5, 'not float'),
                                              (True, 'not bool'), (-1, 'at least 0')])
def test_edge_rows_check_the_number_of_nodes(num_nodes, error):
    # (they failed inside torch's comparison, zeros() or bincount())
    with pytest.raises((TypeError, ValueError), match=f"num_nodes must be .*{error}"):
        edge_rows(torch.tensor([[0, 1], [1, 2]]), num_nodes)


def test_edge_rows_group_the_columns_by_source_then_target():
    edge_index = torch.tensor([[2, 0, 2, 1, 0, 0], [1, 2, 0, 2, 1, 1]])
    ptr, perm, target = edge_rows(edge_index, 4)
    assert ptr.tolist() == [0, 3, 4, 6, 6] and perm.tolist() == [4, 5, 1, 3, 2, 0]
    assert torch.equal(target, edge_index[1, perm])


def test_the_graph_rows_must_be_integers():
    # (floats of the right sizes failed inside repeat_interleave)
    graph = Data(edge_index=torch.tensor([[0, 1], [1, 0]]), num_nodes=2)
    data = LiftToCliqueComplex(max_order=1)(graph)
    for dtype in (torch.float32, torch.int16):  # (int16 failed in repeat_interleave)
        rows = tuple(t.to(dtype) for t in edge_rows(data.edge_index, 2))
        with pytest.raises(TypeError, match="graph_rows must be the three integer "
                                            "tensors"):
            simplicial_subcomplex(data, 0, torch.tensor([0, 1]), graph_rows=rows)
    rows = tuple(t.int() for t in edge_rows(data.edge_index, 2))
    sub = simplicial_subcomplex(data, 0, torch.tensor([0, 1]), graph_rows=rows)
    assert sub.edge_index.tolist() == [[0, 1], [1, 0]]


def test_the_graph_rows_must_be_those_of_the_graph():
    # Rows of another graph gave a wrong subgraph without a word.
    graph = Data(edge_index=torch.tensor([[0, 1, 1, 2], [1, 0, 2, 1]]), num_nodes=4)
    data = LiftToCliqueComplex(max_order=1)(graph)
    other = edge_rows(torch.tensor([[0, 1], [1, 0]]), 4)
    with pytest.raises(ValueError, match="graph_rows are not those of data's graph"):
        simplicial_subcomplex(data, 0, torch.tensor([0, 1]), graph_rows=other)
    with pytest.raises(ValueError, match="data keeps no graph edge_index"):
        simplicial_subcomplex(SimplicialComplexData.from_simplices([[0, 1]]), 0,
                              torch.tensor([0]), graph_rows=other)


@pytest.mark.parametrize('orders, message', [
    ({'nothing': 1}, "attr_orders names 'nothing', which is not a tensor attribute"),
    ({'y': 5}, r"attr_orders\['y'\] must be an order in \[0, 2\]"),
    ({'y': True}, "must be an order"),
    ({'y': 0}, "attr_orders gives 'y' to 0, but its rows"),
    ({'y': 'edge_index'}, "are not those of the graph"),
])
def test_the_attribute_table_must_be_that_of_the_complex(planar, orders, message):
    # A table with an attribute on the wrong order gave a wrong sub-complex that
    # passed validate().
    data = planar.clone()
    data.y = torch.arange(data.num_simplices(1))
    with pytest.raises(ValueError, match=message):
        simplicial_subcomplex(data, 1, torch.tensor([0, 5]), attr_orders=orders)


@pytest.fixture
def search_every_row(monkeypatch):
    # Every row searched by bisection, as a hub's row is (rows of small complexes
    # are otherwise read whole).
    from torch_geometric_san.loader import utils
    monkeypatch.setattr(utils, '_SEARCH_CALL', -10 ** 9)


@pytest.mark.parametrize('k', [0, 1, 2])
def test_searched_rows_give_the_same_subcomplex(spatial, search_every_row, k):
    from torch_geometric_san.loader import utils
    n_id = sample(spatial, k)
    searched = simplicial_subcomplex(spatial, k, n_id)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(utils, '_SEARCH_CALL', 10 ** 9)
        read = simplicial_subcomplex(spatial, k, n_id)
    assert searched.keys() == read.keys()
    for key, value in read.items():
        assert torch.equal(searched[key], value) if isinstance(value, torch.Tensor) \
            else searched[key] == value, key


def test_a_hub_row_is_searched_not_read():
    # The entries of a hub's row among a few simplices cost in proportion to them:
    # the row of 200,000 neighbours (a star) is never read whole; in the symmetric
    # adjacency its entries come from the other rows, in a graph by bisection.
    from torch_geometric_san.loader.utils import _entries_among
    hub = 200_000
    indptr = torch.cat([torch.tensor([0]), torch.arange(hub, 2 * hub + 1)])
    indices = torch.cat([torch.arange(1, hub + 1), torch.zeros(hub, dtype=torch.long)])
    rows = torch.tensor([7, 0, 123_456, 5])
    lookup = torch.full((hub + 1, ), -1)
    lookup[rows] = torch.arange(4)
    for symmetric in (True, False):
        read = []

        def local_ids(queries):
            read.append(queries.numel())
            return lookup[queries]

        owner, col, pos = _entries_among(indptr, indices, rows, local_ids, symmetric)
        assert read == [3]  # the leaves' rows, one entry each
        pairs = sorted(zip(rows[owner].tolist(), rows[col].tolist()))
        assert pairs == [(0, 5), (0, 7), (0, 123_456), (5, 0), (7, 0), (123_456, 0)]
        # the position of the entry, or of its transpose (the same value)
        row_of = torch.searchsorted(indptr, pos, right=True) - 1
        assert all({r, c} == {a, b} for r, c, a, b in zip(
            rows[owner].tolist(), rows[col].tolist(), row_of.tolist(),
            indices[pos].tolist()))


@pytest.mark.parametrize('k', [0, 1, 2])
def test_adjacency_holds_the_laplacians(spatial, dense, k):
    data, n = spatial, spatial.num_simplices(k)
    adjacency = SimplicialAdjacency(data, k)
    assert adjacency.num_simplices == n
    assert (adjacency.has_down, adjacency.has_up) == (k >= 1, k < data.order)
    row = torch.repeat_interleave(torch.arange(n), adjacency.indptr.diff())
    assert torch.all(row != adjacency.indices)  # no diagonal
    key = row * n + adjacency.indices  # rows ascending, then columns
    assert torch.equal(key, key.unique())
    for name, values, diagonal in (('down', adjacency.down, adjacency.down_diagonal),
                                   ('up', adjacency.up, adjacency.up_diagonal)):
        built = torch.zeros(n, n, dtype=torch.float64)
        built[row, adjacency.indices] = values.double()
        built += torch.diag(diagonal.double())
        expected = dense(*getattr(data, f'{name}_laplacian')(k), (n, n))
        torch.testing.assert_close(built, expected, rtol=0, atol=0)
    # every stored entry is a neighbour of one of the two kinds
    assert torch.all((adjacency.down != 0) | (adjacency.up != 0))


def test_local_ids(planar):
    adjacency = SimplicialAdjacency(planar, 1)
    ids = torch.tensor([7, 3, 11])
    queries = torch.tensor([[3, 5], [11, 7]])
    assert adjacency.local_ids(ids, queries).tolist() == [[1, -1], [2, 0]]
    assert adjacency.local_ids(ids, torch.tensor([7])).tolist() == [0]  # table reset
    assert torch.all(adjacency._local == -1)


def test_a_complex_without_laplacians_gives_the_same_subcomplex(planar):
    light = SimplicialComplexData.from_simplices(
        planar.simplices_2, close=True, num_nodes=planar.num_nodes, dtype=torch.float64,
        laplacians=False, **{f'x_{k}': planar[f'x_{k}'] for k in range(3)})
    assert 'up_index_1' not in light
    for k in (0, 1, 2):
        n_id = sample(planar, k)
        full, sub = (simplicial_subcomplex(data, k, n_id) for data in (planar, light))
        assert set(full.keys()) == set(sub.keys())
        for key in full.keys():
            assert torch.equal(torch.as_tensor(full[key]), torch.as_tensor(sub[key])), key


@pytest.mark.parametrize('dtype', [torch.float16, torch.bfloat16])
def test_half_precision_gives_the_same_subcomplex(delaunay, dtype):
    # (SciPy, which the adjacency is built with, has neither type) The same complex
    # and features in single precision give the same sub-complex, to the rounding of
    # the normalised Hodge weights and spectra.
    data = delaunay(40, dtype=dtype)
    wide = SimplicialComplexData.from_simplices(
        data.simplices_2, close=True, num_nodes=data.num_nodes,
        **{f'x_{k}': data[f'x_{k}'].float() for k in range(3)})
    for k in (0, 1, 2):
        n_id = sample(data, k)
        sub, expected = (simplicial_subcomplex(d, k, n_id) for d in (data, wide))
        assert set(sub.keys()) == set(expected.keys())
        for key in sub.keys():
            got, want = sub[key], expected[key]
            if not torch.is_tensor(got) or not got.is_floating_point():
                assert torch.equal(torch.as_tensor(got), torch.as_tensor(want)), key
            elif key.startswith(('hodge_weight', 'spectrum')):
                assert got.dtype == dtype, key
                torch.testing.assert_close(got, want.to(dtype), msg=key)
            else:
                assert torch.equal(got, want.to(dtype)), key


def test_the_complex_must_be_on_the_cpu(planar):
    with pytest.raises(ValueError, match='on the CPU'):
        SimplicialAdjacency(planar.to('meta'), 1)
    # (the check of the boundaries' layout ran first and failed inside torch)
    with pytest.raises(ValueError, match='on the CPU'):
        SimplicialNeighborLoader(planar.to('meta'), [-1], order=1, batch_size=4)
    with pytest.raises(ValueError, match='on the CPU'):
        simplicial_subcomplex(planar.to('meta'), 1, torch.tensor([0]))


def test_single_precision_hodge_to_float_tolerance(delaunay, dense):
    # The sampled Hodge weights divide by the stored (single-precision) largest
    # eigenvalue, the stored ones by the double-precision one: equal to rounding.
    data = delaunay(60, dtype=torch.float32)
    n_id = sample(data, 1)
    sub = simplicial_subcomplex(data, 1, n_id)
    assert sub.hodge_weight_1.dtype == torch.float32
    n = data.num_simplices(1)
    expected = dense(*data.hodge_laplacian(1), (n, n))[n_id][:, n_id]
    torch.testing.assert_close(dense(*sub.hodge_laplacian(1), (n_id.numel(), ) * 2),
                               expected, rtol=1e-6, atol=1e-7)


def test_a_sampled_sub_complex_is_not_sampled_again(planar):
    # Its n_id are ids in the sample and its operators the full complex's restricted
    # (an upper Laplacian entry lost): batch_size and num_sampled_simplices went
    # stale silently.
    sample = next(iter(SimplicialNeighborLoader(planar, [-1], order=1, batch_size=4)))
    with pytest.raises(ValueError, match="data is a sampled sub-complex"):
        simplicial_subcomplex(sample, 1, torch.tensor([0]))
    with pytest.raises(ValueError, match="data is a sampled sub-complex"):
        SimplicialNeighborLoader(sample, [-1], order=1, batch_size=1)
