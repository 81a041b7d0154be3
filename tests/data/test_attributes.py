"""simplex_attr_orders: the one rule by which attributes follow their simplices."""
import warnings

import pytest
import torch
from torch_geometric.data import Batch, Data

from torch_geometric_san.data import SimplicialComplexData, simplex_attr_orders
from torch_geometric_san.data.attributes import GRAPH_EDGES
from torch_geometric_san.transforms import LiftToCliqueComplex


def two_triangles():
    # 4 vertices, 5 edges, 2 triangles: every order its own length
    return SimplicialComplexData.from_simplices([[0, 1, 2], [1, 2, 3]], close=True,
                                                x_1=torch.randn(5, 2))


def test_orders_by_name_and_by_length():
    data = two_triangles()
    data.y = torch.arange(5)
    data.pos = torch.randn(4, 3)
    data.triangle_mask = torch.tensor([True, False])
    data.label = torch.tensor([1])  # one row: a label of the complex
    data.scale = torch.tensor(2.0)  # no rows
    data.name = 'two triangles'
    data.face_index = torch.zeros(2, 5, dtype=torch.long)  # concatenated on dim -1
    data.coords = torch.randn(3, 2)  # no order has 3 simplices
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        orders = simplex_attr_orders(data)
    assert orders == {'x_1': 1, 'y': 1, 'pos': 0, 'triangle_mask': 2}


def test_the_graph_edges_and_the_name_rule():
    # A directed cycle: 7 vertices, 7 edges and 7 columns of edge_index.
    cycle = torch.tensor([[i, (i + 1) % 7] for i in range(7)]).t()
    graph = Data(edge_index=cycle, num_nodes=7, edge_weight=torch.rand(7),
                 weight=torch.rand(7), edge_label=torch.rand(14))
    data = LiftToCliqueComplex(max_order=1)(graph)
    assert data.edge_index.size(1) == 7
    # (it said "this copies", but leaves the key out of the table; the warning
    # pointed into the package, for every caller)
    with pytest.warns(UserWarning, match=r"'weight' is left out: its 7 "
                                         r"rows match N_0 and N_1 and edge_index's "
                                         r"columns; .*attrs=\{'weight': 1\}") as caught:
        orders = simplex_attr_orders(data)
    assert [w.filename for w in caught] == [__file__]
    # 'edge' in the name decides for the graph's edges; 14 rows match nothing
    assert orders == {'edge_weight': GRAPH_EDGES}
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        assert simplex_attr_orders(data, {'weight': 0}, 'X') == {
            'weight': 0, 'edge_weight': GRAPH_EDGES}
    # With one order beside the graph's edges, a name without 'edge' takes the
    # order (PyG: a node attribute when nodes and edges are as many).
    graph = Data(edge_index=torch.tensor([[0, 1, 2], [1, 2, 0]]), num_nodes=4,
                 weight=torch.rand(3), edge_time=torch.rand(3))
    data = LiftToCliqueComplex(max_order=1)(graph)
    assert data.num_simplices(1) == 3 and data.num_simplices(0) == 4
    assert simplex_attr_orders(data) == {'weight': 1, 'edge_time': GRAPH_EDGES}


@pytest.mark.parametrize('attrs, error, pattern', [
    (['y'], TypeError, 'attrs must be a dict of attribute names to orders, not list'),
    ({1: 1}, TypeError, 'attrs keys must be attribute names, got 1'),
    ({'y': -1}, ValueError, r"the order of attribute 'y' \(0: the vertices\) must "
                            r"be at least 0"),
    ({'y': 3}, ValueError, "attribute 'y' is of order 3 but the complex has order 2"),
    ({'y': 2}, ValueError, r"attribute 'y' must be a tensor with N_2 = 2 rows "
                           r"\(got \[5\]\)"),
    ({'simplices_1': 1}, ValueError, "attrs names 'simplices_1', which follows its "
                                     "simplices by construction"),
    ({'edge_index': 1}, ValueError, "attrs names 'edge_index'"),
    ({'missing': 1}, ValueError, "attribute 'missing' must be a tensor with N_1 = 5 "
                                 "rows"),
    # x_1 would move with the triangles, or stay where its edges move
    ({'x_1': 2}, ValueError, "attrs gives 'x_1' order 2, but a feature x_k belongs "
                             "to order k by its name"),
    ({'x_1': 0}, ValueError, "attrs gives 'x_1' order 0"),
])
def test_bad_attrs(attrs, error, pattern):
    data = two_triangles()
    data.y = torch.arange(5)
    with pytest.raises(error, match=pattern):
        simplex_attr_orders(data, attrs)


def test_one_complex_only():
    data = two_triangles()
    with pytest.raises(TypeError, match='data must be a SimplicialComplexData, not Data'):
        simplex_attr_orders(Data(num_nodes=3))
    with pytest.raises(TypeError, match='data is a batch of complexes; give one complex'):
        simplex_attr_orders(Batch.from_data_list([data, data]))


def test_a_feature_that_is_not_a_tensor_is_refused():
    # a NumPy x_1 stayed in place while its edges moved
    data = two_triangles()
    data.x_1 = data.x_1.numpy()
    with pytest.raises(ValueError, match=r"'x_1' needs one row per 1-simplex, 5 "
                                         r"\(found ndarray\)"):
        simplex_attr_orders(data)
