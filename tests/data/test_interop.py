"""SimplicialComplexData.from_toponetx / to_toponetx / to_networkx."""
import itertools

import numpy as np
import pytest
import torch
from torch_geometric.data import Data

from torch_geometric_san.data import SimplicialComplexData
from torch_geometric_san.transforms import LiftToCliqueComplex

try:
    import toponetx as tnx
except ImportError:
    tnx = None
needs_toponetx = pytest.mark.skipif(
    tnx is None, reason='TopoNetX is an optional extra: pip install ".[toponetx]"')


def lifted(seed: int = 0, num_nodes: int = 12) -> SimplicialComplexData:
    rng = np.random.default_rng(seed)
    pairs = np.array(list(itertools.combinations(range(num_nodes), 2)))
    pairs = pairs[rng.random(len(pairs)) < 0.45]
    graph = Data(edge_index=torch.from_numpy(pairs.T.copy()), num_nodes=num_nodes)
    data = LiftToCliqueComplex(max_order=3)(graph)
    for k in range(4):
        data[f'x_{k}'] = torch.randn(data.num_simplices(k), 2)
    return data


def assert_same_complex(a: SimplicialComplexData, b: SimplicialComplexData) -> None:
    assert a.num_nodes == b.num_nodes and a.order == b.order
    for k in range(a.order + 1):
        for name in ('simplices', 'boundary_index', 'boundary_weight', 'x'):
            key = f'{name}_{k}'
            if key in a or key in b:
                torch.testing.assert_close(a[key], b[key], rtol=0, atol=0,
                                           check_dtype=False)


@needs_toponetx
@pytest.mark.parametrize('seed', range(3))
def test_round_trip(seed):
    data = lifted(seed)
    complex = data.to_toponetx()
    assert complex.shape == tuple(data.num_simplices(k) for k in range(4))
    assert_same_complex(SimplicialComplexData.from_toponetx(complex), data)


@needs_toponetx
def test_boundaries_agree_with_toponetx():
    data = lifted(4, num_nodes=14)
    complex = data.to_toponetx()
    assert complex.dim == 3
    for k in (1, 2, 3):
        rows, cols, B = complex.incidence_matrix(k, signed=True, index=True)
        # Rows and columns of TopoNetX's matrix in our order of the simplices.
        ours = [rows[tuple(s)] for s in (data[f'simplices_{k - 1}'].tolist() if k > 1
                                         else [[v] for v in range(data.num_nodes)])]
        theirs = [cols[tuple(s)] for s in data[f'simplices_{k}'].tolist()]
        index, weight = data.boundary(k)
        dense = torch.zeros(data.num_simplices(k - 1), data.num_simplices(k))
        dense[index[0], index[1]] = weight
        np.testing.assert_array_equal(B.toarray()[np.ix_(ours, theirs)], dense.numpy())


@needs_toponetx
def test_from_toponetx_with_labels_and_scalar_signals():
    complex = tnx.SimplicialComplex([('c', 'a', 'b'), ('b', 'd')])
    complex.set_simplex_attributes({('a', 'b', 'c'): 2.5}, name='flow')
    complex.set_simplex_attributes({s.elements: 1.0 for s in complex.skeleton(1)},
                                   name='flow')
    data = SimplicialComplexData.from_toponetx(complex, signal='flow', order=3)
    assert data.num_nodes == 4 and data.order == 3  # labels a, b, c, d are 0, 1, 2, 3
    assert sorted(data.simplices_1.tolist()) == [[0, 1], [0, 2], [1, 2], [1, 3]]
    assert data.simplices_2.tolist() == [[0, 1, 2]] and data.num_simplices(3) == 0
    assert data.x_2.tolist() == [[2.5]] and data.x_1.shape == (4, 1)
    assert 'x_0' not in data
    no_signal = SimplicialComplexData.from_toponetx(complex, signal=None)
    assert 'x_1' not in no_signal and no_signal.order == 2


@needs_toponetx
def test_flipped_orientations_flip_the_exported_signal():
    # One triangle whose edge [0, 2] is stored as 2 -> 0 (column [+1, 0, -1]).
    B1 = np.array([[-1, 1, 0], [1, 0, -1], [0, -1, 1]])
    B2 = np.array([[1], [1], [1]])
    data = SimplicialComplexData.from_incidence(
        [B1, B2], x_1=torch.tensor([[1.], [2.], [3.]]), x_2=torch.tensor([[5.]]))
    assert data.simplices_1.tolist() == [[0, 1], [0, 2], [1, 2]]
    exported = data.to_toponetx().get_simplex_attributes('x', 1)
    assert {key: value.tolist() for key, value in exported.items()} == {
        (0, 1): [1.], (0, 2): [-2.], (1, 2): [3.]}
    assert data.to_toponetx().get_simplex_attributes('x', 2)[(0, 1, 2)].tolist() == [5.]
    unoriented = data.to_toponetx(oriented=False).get_simplex_attributes('x', 1)
    assert unoriented[(0, 2)].tolist() == [2.]
    # Back in TopoNetX's (the reference) orientation: the same flow, B_1 re-oriented.
    back = SimplicialComplexData.from_toponetx(data.to_toponetx())
    assert back.x_1[:, 0].tolist() == [1., -2., 3.]


@needs_toponetx
def test_round_trip_of_an_empty_and_a_vertex_only_complex():
    for num_nodes in (0, 3):
        data = SimplicialComplexData.from_simplices([], num_nodes=num_nodes, order=1)
        back = SimplicialComplexData.from_toponetx(data.to_toponetx(), order=1)
        assert back.num_nodes == num_nodes and back.num_simplices(1) == 0


@needs_toponetx
@pytest.mark.parametrize('dtype', [torch.float32, torch.float64])
def test_round_trip_keeps_the_signals_of_orders_without_simplices(dtype):
    # (a lifted graph without triangles, and an empty order above it)
    graph = Data(x=torch.randn(3, 2, dtype=dtype), edge_index=torch.tensor([[0, 1],
                                                                            [1, 2]]))
    data = LiftToCliqueComplex(max_order=3, lift_x=True, dtype=dtype)(graph)
    data.x_3 = torch.empty(0, 5, dtype=dtype)
    complex = data.to_toponetx(signal='h')
    kind = {torch.float32: '<f4', torch.float64: '<f8'}[dtype]
    assert complex.complex['h_of_empty_orders'] == {2: ([0, 2], kind), 3: ([0, 5], kind)}
    back = SimplicialComplexData.from_toponetx(complex, signal='h', order=3)
    assert_same_complex(back, data)
    assert back.x_2.shape == (0, 2) and back.x_3.dtype == dtype
    # another signal name reads none of them, and below its order the record is not read
    assert 'x_2' not in SimplicialComplexData.from_toponetx(complex, order=3)
    assert 'x_3' not in SimplicialComplexData.from_toponetx(complex, signal='h', order=2)


@needs_toponetx
@pytest.mark.parametrize('record', [[1, 2], {'two': ([0, 1], '<f4')}, {2: ([0, 1], 'no')},
                                    {2: 3}])
def test_a_bad_record_of_empty_signals_is_refused(record):
    complex = tnx.SimplicialComplex([(0, 1)])
    complex.complex['x_of_empty_orders'] = record
    with pytest.raises(ValueError, match="attribute 'x_of_empty_orders' must map orders"):
        SimplicialComplexData.from_toponetx(complex, order=2)


@needs_toponetx
def test_bad_toponetx_input():
    with pytest.raises(TypeError, match="toponetx.SimplicialComplex"):
        SimplicialComplexData.from_toponetx([[0, 1]])
    complex = tnx.SimplicialComplex([(0, 1), (1, 2)])
    complex.set_simplex_attributes({(0, 1): 1.0}, name='x')
    with pytest.raises(ValueError, match="on some 1-simplices but not on"):
        SimplicialComplexData.from_toponetx(complex)
    with pytest.raises(TypeError, match="order must be an int"):
        SimplicialComplexData.from_toponetx(complex, signal=None, order=1.5)
    # TopoNetX cannot sort labels of mixed types (nor can it number them).
    with pytest.raises(TypeError, match="labels must be sortable.*got int, str"):
        SimplicialComplexData.from_toponetx(tnx.SimplicialComplex([(1, 2), ('a', 'b')]))
    for values, error, match in (({0: 'u', 1: 'v', 2: 'w'}, TypeError, "must be numbers"),
                                 ({0: None, 1: None, 2: None}, TypeError, "must be numbers"),
                                 ({0: [1.0, 2.0], 1: [1.0], 2: [3.0, 4.0]}, ValueError,
                                  "needs rows of one shape")):
        complex = tnx.SimplicialComplex([(0, 1), (1, 2)])
        complex.set_simplex_attributes({(v, ): x for v, x in values.items()}, name='x')
        with pytest.raises(error, match=f"attribute 'x' of the 0-simplices {match}"):
            SimplicialComplexData.from_toponetx(complex)


@pytest.mark.parametrize('export', [
    pytest.param(lambda data: data.to_toponetx(), marks=needs_toponetx),
    pytest.param(lambda data: data.to_toponetx(oriented=False), marks=needs_toponetx),
    lambda data: data.to_networkx(),
])
def test_exports_refuse_a_signal_of_the_wrong_length(export):
    # Too few rows would otherwise leave simplices without the attribute (zip
    # stops at the shorter side).
    data = lifted(1)
    for rows in (data.num_simplices(1) - 1, data.num_simplices(1) + 1):
        data.x_1 = torch.randn(rows, 2)
        with pytest.raises(ValueError, match=r"'x_1' needs one row per 1-simplex"):
            export(data)


@pytest.mark.parametrize('export', [
    pytest.param(lambda data: data.to_toponetx(), marks=needs_toponetx),
    lambda data: data.to_networkx(),
])
def test_exports_refuse_a_signal_above_the_order(export):
    # It was left out of the export, silently.
    data = SimplicialComplexData.from_simplices([[0, 1], [1, 2], [0, 2]])
    data.x_2 = torch.ones(1, 4)
    with pytest.raises(ValueError, match="'x_2' is given but the complex has order 1"):
        export(data)


@pytest.mark.parametrize('call, error, match', [
    pytest.param(lambda data: data.to_toponetx(signal=['x']), TypeError,
                 "signal must be an attribute name", marks=needs_toponetx),
    pytest.param(lambda data: data.to_toponetx(oriented='no'), TypeError,
                 "oriented must be True or False", marks=needs_toponetx),
    pytest.param(lambda data: SimplicialComplexData.from_toponetx(
        data.to_toponetx(), signal=1), TypeError, "signal must be an attribute name",
        marks=needs_toponetx),
    (lambda data: data.to_networkx(signal=['x']), TypeError,
     "signal must be an attribute name"),
])
def test_interop_refuses_bad_arguments(call, error, match):
    # An unhashable name failed inside networkx; a truthy str was taken for True.
    with pytest.raises(error, match=match):
        call(lifted(1))


@needs_toponetx
def test_bfloat16_signals_export_as_float32():
    # NumPy has no bfloat16; float32 holds every bfloat16 value exactly.
    data = lifted(2)
    data.x_1 = data.x_1.bfloat16()
    values = data.to_toponetx(oriented=False).get_simplex_attributes('x', 1)
    key = tuple(data.simplices_1[0].tolist())
    assert values[key].dtype == np.float32
    np.testing.assert_array_equal(values[key], data.x_1[0].float().numpy())
    edge = data.to_networkx().edges[key]['x']
    np.testing.assert_array_equal(edge, data.x_1[0].float().numpy())


@needs_toponetx
def test_bfloat16_complex_exports_its_oriented_signals():
    # The orientations read the boundary's weights, bfloat16 here (TypeError before).
    graph = Data(edge_index=lifted(3).simplices_1.t(), num_nodes=12)
    data = LiftToCliqueComplex(max_order=2, dtype=torch.bfloat16)(graph)
    data.x_1 = torch.randn(data.num_simplices(1), 2)
    reference = data.clone()
    for key in ('boundary_weight_1', 'boundary_weight_2'):
        reference[key] = reference[key].float()
    assert data.boundary_weight_1.dtype == torch.bfloat16
    for oriented in (False, True):
        got = data.to_toponetx(oriented=oriented).get_simplex_attributes('x', 1)
        expected = reference.to_toponetx(oriented=oriented).get_simplex_attributes('x', 1)
        assert got.keys() == expected.keys()
        for key in got:
            np.testing.assert_array_equal(got[key], expected[key])


def test_to_networkx_of_the_one_skeleton():
    data = lifted(5)
    graph = data.to_networkx()
    assert sorted(graph.nodes()) == list(range(data.num_nodes))
    assert sorted(graph.edges()) == [tuple(e) for e in data.simplices_1.tolist()]
    np.testing.assert_array_equal(graph.nodes[3]['x'], data.x_0[3].numpy())
    u, v = data.simplices_1[2].tolist()
    np.testing.assert_array_equal(graph.edges[u, v]['x'], data.x_1[2].numpy())
    assert graph.nodes[0] == {} or 'x' not in data.to_networkx(signal=None).nodes[0]


def test_to_networkx_gives_flows_in_the_reference_orientation():
    # (session 28: the same flow exported as +5 or -5 on edge (0, 1), depending on
    # how the incidence matrix stored the edge)
    one_way = SimplicialComplexData.from_incidence([np.array([[1], [-1]])],
                                                   x_1=torch.tensor([[5.0]]))
    other_way = SimplicialComplexData.from_incidence([np.array([[-1], [1]])],
                                                     x_1=torch.tensor([[-5.0]]))
    for data in (one_way, other_way):
        assert data.to_networkx().edges[0, 1]['x'].tolist() == [-5.0]
    assert one_way.to_networkx(oriented=False).edges[0, 1]['x'].tolist() == [5.0]
    with pytest.raises(TypeError, match="oriented must be True or False"):
        one_way.to_networkx(oriented='no')
    one_way.x_1 = torch.ones(1, 1, dtype=torch.uint8)
    with pytest.raises(TypeError, match=r"'x_1' \(uint8\) cannot be negated"):
        one_way.to_networkx()


def test_a_missing_toponetx_says_how_to_install_it(monkeypatch):
    import sys
    monkeypatch.setitem(sys.modules, 'toponetx', None)  # import toponetx fails
    with pytest.raises(ImportError, match=r'pip install "\.\[toponetx\]"'):
        lifted().to_toponetx()
    with pytest.raises(ImportError, match="optional dependency"):
        SimplicialComplexData.from_toponetx(object())


@needs_toponetx
@pytest.mark.parametrize('dtype', [torch.uint8, torch.bool])
def test_oriented_export_refuses_signals_it_cannot_negate(dtype):
    # the edge is stored from 1 to 0; uint8 3 became 253, bool stayed as it was
    x_1 = torch.ones(1, 1, dtype=dtype)
    data = SimplicialComplexData.from_incidence([np.array([[1], [-1]])], x_1=x_1)
    with pytest.raises(TypeError, match=f"'x_1' \\({str(dtype)[6:]}\\) cannot be "
                       "negated.*oriented=False"):
        data.to_toponetx()
    values = data.to_toponetx(oriented=False).get_simplex_attributes('x', 1)
    np.testing.assert_array_equal(values[(0, 1)], x_1[0].numpy())
    # in the reference orientation nothing is negated, and nothing refused
    data = SimplicialComplexData.from_incidence([np.array([[-1], [1]])], x_1=x_1)
    values = data.to_toponetx().get_simplex_attributes('x', 1)
    np.testing.assert_array_equal(values[(0, 1)], x_1[0].numpy())


@needs_toponetx
def test_oriented_export_refuses_a_minimum_it_cannot_negate():
    # int8 -128 on an edge stored from 1 to 0 was exported as -128 (it wraps)
    x_1 = torch.tensor([[-128, 5]], dtype=torch.int8)
    data = SimplicialComplexData.from_incidence([np.array([[1], [-1]])], x_1=x_1)
    with pytest.raises(ValueError, match=r"'x_1' \(int8\) holds its type's minimum"):
        data.to_toponetx()
    data.x_1 = x_1.long()
    values = data.to_toponetx().get_simplex_attributes('x', 1)
    np.testing.assert_array_equal(values[(0, 1)], [128, -5])


def test_exports_do_not_share_memory_with_the_complex():
    # The rows handed out were views of x_k (and so of the graph a lifting took x
    # from): an in-place edit on either side changed the other.
    graph = Data(x=torch.zeros(3, 1), edge_index=torch.tensor([[0, 1], [1, 2]]),
                 edge_attr=torch.zeros(2, 1))
    data = LiftToCliqueComplex(max_order=1, edge_attr='feature')(graph)
    exported = data.to_networkx()
    exported.nodes[0]['x'][0] = 5.0
    u, v = data.simplices_1[0].tolist()
    exported.edges[u, v]['x'][0] = 7.0
    assert graph.x.abs().sum() == 0 and data.x_0.abs().sum() == 0
    assert data.x_1.abs().sum() == 0
    if tnx is not None:
        complex = data.to_toponetx(oriented=False)
        complex.get_simplex_attributes('x', 1)[(u, v)][0] = 9.0
        assert data.x_1.abs().sum() == 0
    data.x_0.add_(1.0)
    assert exported.nodes[0]['x'][0] == 5.0


@needs_toponetx
@pytest.mark.parametrize('edges', [[[0, 1], [1, 2]], [], 'single'])
def test_round_trip_keeps_empty_top_orders(edges):
    # TopoNetX's dimension is that of its largest simplex: the padded order 2 of a
    # lifted graph without triangles came back as order 1 (or 0), without x_2.
    num_nodes = 1 if edges == 'single' else 3
    edge_index = torch.tensor(edges if edges and edges != 'single' else
                              torch.zeros(0, 2, dtype=torch.long).tolist(),
                              dtype=torch.long).view(-1, 2).t()
    graph = Data(x=torch.randn(num_nodes, 2), edge_index=edge_index,
                 num_nodes=num_nodes)
    data = LiftToCliqueComplex(max_order=2, lift_x=True)(graph)
    for signal in ('x', None):
        back = SimplicialComplexData.from_toponetx(data.to_toponetx(signal=signal),
                                                   signal=signal)
        assert back.order == 2 and back.num_nodes == num_nodes
        for k in range(3):
            assert back.num_simplices(k) == data.num_simplices(k)
            if signal is not None:
                assert torch.equal(back[f'x_{k}'], data[f'x_{k}'])
    junk = data.to_toponetx()
    junk.complex['padded_order'] = 'two'
    with pytest.raises(ValueError, match="'padded_order' must be an order"):
        SimplicialComplexData.from_toponetx(junk)
