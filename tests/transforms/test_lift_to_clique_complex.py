import itertools

import numpy as np
import pytest
import torch
from torch_geometric.data import Batch, Data
from torch_geometric.loader import DataLoader
from torch_geometric.utils import to_undirected

from torch_geometric_san.data import SimplicialComplexData
from torch_geometric_san.transforms import LiftToCliqueComplex


def k4() -> Data:
    edge_index = torch.tensor(list(itertools.combinations(range(4), 2))).t()
    return Data(edge_index=edge_index, num_nodes=4)


def random_graph(seed: int, num_nodes: int = 14, p: float = 0.4) -> Data:
    rng = np.random.default_rng(seed)
    pairs = np.array(list(itertools.combinations(range(num_nodes), 2)))
    pairs = pairs[rng.random(len(pairs)) < p]
    flip = rng.random(len(pairs)) < 0.5  # random directions
    pairs[flip] = pairs[flip][:, ::-1]
    return Data(edge_index=torch.from_numpy(pairs.T.copy()), num_nodes=num_nodes)


def assert_unchanged(graph: Data, before: Data) -> None:
    assert sorted(graph.keys()) == sorted(before.keys())
    for key in before.keys():
        if torch.is_tensor(before[key]):
            torch.testing.assert_close(graph[key], before[key], rtol=0, atol=0,
                                       equal_nan=True)
        else:
            assert graph[key] == before[key]


def test_k4_lifts_to_4_6_4_1_simplices():
    data = LiftToCliqueComplex(max_order=3)(k4())
    assert isinstance(data, SimplicialComplexData)
    assert data.order == 3
    assert [data.num_simplices(k) for k in range(4)] == [4, 6, 4, 1]
    assert data.simplices_3.tolist() == [[0, 1, 2, 3]]
    assert LiftToCliqueComplex()(k4()).order == 2


@pytest.mark.parametrize('max_order', [1, 2, 4])  # NumPy up to 2, GUDHI above
@pytest.mark.parametrize('seed', range(3))
def test_simplices_are_the_cliques(seed, max_order):
    graph = random_graph(seed)
    data = LiftToCliqueComplex(max_order=max_order)(graph)
    edges = {tuple(sorted(e)) for e in graph.edge_index.t().tolist()}
    for k in range(1, max_order + 1):
        cliques = [c for c in itertools.combinations(range(graph.num_nodes), k + 1)
                   if all(pair in edges for pair in itertools.combinations(c, 2))]
        assert data[f'simplices_{k}'].tolist() == [list(c) for c in cliques]


def test_same_complex_as_from_simplices():
    graph = random_graph(7)
    lifted = LiftToCliqueComplex(max_order=2)(graph)
    edges = lifted.simplices_1.tolist()
    triangles = lifted.simplices_2.tolist()
    built = SimplicialComplexData.from_simplices(edges + triangles,
                                                 num_nodes=graph.num_nodes)
    for key in built.keys():
        if key != 'num_nodes':
            assert torch.equal(lifted[key], built[key]), key


def test_graph_without_triangles_is_padded_to_max_order():
    path = Data(edge_index=torch.tensor([[0, 1, 2], [1, 2, 3]]), num_nodes=6)
    data = LiftToCliqueComplex(max_order=2)(path)
    assert [data.num_simplices(k) for k in range(3)] == [6, 3, 0]
    assert data.up_laplacian(1)[0].shape == (2, 0)
    batch = next(iter(DataLoader([data, LiftToCliqueComplex()(k4())], batch_size=2)))
    assert batch.num_simplices(2) == 4


@pytest.mark.parametrize('edge_index', [None, torch.empty(2, 0, dtype=torch.long)])
def test_graph_without_edges(edge_index):
    graph = Data(x=torch.randn(3, 2), edge_index=edge_index)
    data = LiftToCliqueComplex()(graph)
    assert [data.num_simplices(k) for k in range(3)] == [3, 0, 0]
    assert torch.equal(data.x_0, graph.x)
    assert data.hodge_laplacian(0)[0].shape == (2, 0)


def test_edge_attributes_follow_orientation_and_first_occurrence():
    # Edges as given: (1, 0), (0, 2), (2, 0), (1, 2), (2, 1), (1, 0), (3, 3).
    edge_index = torch.tensor([[1, 0, 2, 1, 2, 1, 3], [0, 2, 0, 2, 1, 0, 3]])
    edge_attr = torch.tensor([[10., 1.], [20., 2.], [30., 3.], [40., 4.], [50., 5.],
                              [60., 6.], [70., 7.]])
    graph = Data(edge_index=edge_index, edge_attr=edge_attr, num_nodes=4,
                 edge_weight=torch.ones(7), y=torch.tensor([3]), pos=torch.zeros(4, 2))
    data = LiftToCliqueComplex()(graph)
    assert data.simplices_1.tolist() == [[0, 1], [0, 2], [1, 2]]
    # [0, 1]: only 1 -> 0 occurs, first is row 0, flipped.
    # [0, 2]: 0 -> 2 (row 1) runs low to high and wins over 2 -> 0.
    # [1, 2]: 1 -> 2 (row 3) wins over 2 -> 1. The self-loop (3, 3) is dropped.
    assert data.x_1.tolist() == [[-10., -1.], [20., 2.], [40., 4.]]
    assert 'edge_attr' not in data  # it is x_1; the graph's other attributes stay
    assert data.edge_index is graph.edge_index and data.edge_weight is graph.edge_weight
    assert data.y.tolist() == [3] and data.pos.shape == (4, 2)
    assert data.num_simplices(0) == 4  # node 3 is isolated but kept


def test_undirected_graph_with_flow_and_node_features():
    graph = k4()
    flow = torch.arange(1., 7.)
    graph.edge_index, graph.edge_attr = to_undirected(graph.edge_index,
                                                      torch.stack([flow, flow], 1))
    graph.x = torch.arange(4.)
    data = LiftToCliqueComplex()(graph)
    assert data.x_0.tolist() == [[0.], [1.], [2.], [3.]]  # 1-D x becomes a column
    assert data.x_1[:, 0].tolist() == flow.tolist()


def test_input_graph_is_left_unchanged():
    graph = random_graph(3)
    graph.x = torch.randn(graph.num_nodes, 2)
    graph.edge_attr = torch.randn(graph.num_edges, 3)
    before = graph.clone()
    LiftToCliqueComplex()(graph)
    assert_unchanged(graph, before)


def test_repr():
    assert repr(LiftToCliqueComplex(max_order=3)) == (
        "LiftToCliqueComplex(max_order=3, edge_attr='flow', lift_x=False, "
        "reduce='mean')")


BAD_GRAPHS = {
    'sparse-adjacency': (dict(adj_t=torch.tensor([[0., 1.], [1., 0.]]).to_sparse(),
                              num_nodes=2), ValueError,
                         "stores its edges as 'adj_t'.*before ToSparseTensor"),
    'float-edge-index': (dict(edge_index=torch.tensor([[0., 1.], [1., 2.]]),
                              num_nodes=3), TypeError, "edge_index must hold integers"),
    'sparse-edge-index': (dict(edge_index=torch.tensor([[0, 1], [1, 2]]).to_sparse(),
                               num_nodes=3), TypeError,
                          "edge_index must be a dense \\[2, num_edges\\] tensor, not "
                          "torch.sparse_coo"),
    'edge-index-shape': (dict(edge_index=torch.tensor([[0, 1, 2]]), num_nodes=3),
                         ValueError, r"edge_index must have shape \[2, num_edges\]"),
    'node-out-of-range': (dict(edge_index=torch.tensor([[0, 1], [1, 5]]), num_nodes=3),
                          ValueError, "node 5, out of range for 3 nodes"),
    'negative-node': (dict(edge_index=torch.tensor([[0, -1], [1, 2]]), num_nodes=3),
                      ValueError, "node -1, out of range"),
    # (failed inside torch's indexing)
    'edge-attr-sparse': (dict(edge_index=torch.tensor([[0, 1], [1, 2]]),
                              edge_attr=torch.ones(2, 1).to_sparse(), num_nodes=3),
                         TypeError, "edge_attr must be a dense tensor, not "
                         "torch.sparse_coo"),
    'edge-attr-rows': (dict(edge_index=torch.tensor([[0, 1], [1, 2]]),
                            edge_attr=torch.ones(3, 1), num_nodes=3), ValueError,
                       "edge_attr has 3 rows but edge_index has 2 edges"),
    'edge-attr-bool': (dict(edge_index=torch.tensor([[0, 1], [1, 2]]),
                            edge_attr=torch.ones(2, 1, dtype=torch.bool), num_nodes=3),
                       TypeError, "edge_attr must be a signed numeric tensor"),
    'edge-attr-uint8': (dict(edge_index=torch.tensor([[0, 1], [1, 2]]),
                             edge_attr=torch.ones(2, 1, dtype=torch.uint8), num_nodes=3),
                        TypeError, "pass edge_attr='feature' for unoriented"),
    'node-feature-nan': (dict(edge_index=torch.tensor([[0, 1], [1, 2]]),
                              x=torch.tensor([[0.], [float('nan')], [1.]])), ValueError,
                         "x_0 has NaN or infinite entries"),
    'node-feature-rows': (dict(edge_index=torch.tensor([[0, 1], [1, 2]]),
                               x=torch.zeros(2, 1), num_nodes=3), ValueError,
                          "x_0 has 2 rows but the complex has 3 0-simplices"),
    'edge-attr-nan': (dict(edge_index=torch.tensor([[0, 1], [1, 2]]),
                           edge_attr=torch.tensor([[1.0], [float('nan')]]),
                           num_nodes=3), ValueError,
                      "(edge_attr|x_1) has NaN or infinite entries"),
    'edge-attr-3d': (dict(edge_index=torch.tensor([[0, 1], [1, 2]]),
                          edge_attr=torch.ones(2, 2, 2), num_nodes=3), TypeError,
                     r"edge_attr must be a signed numeric tensor \[num_edges, F\].* "
                     r"of shape \[2, 2, 2\]"),
    'edge-attr-list': (dict(edge_index=torch.tensor([[0, 1], [1, 2]]),
                            edge_attr=[1.0, 2.0], num_nodes=3), TypeError,
                       "edge_attr must be a tensor, not list"),
    'edge-index-array': (dict(edge_index=np.array([[0, 1], [1, 2]]), num_nodes=3),
                         TypeError, "edge_index must be a tensor, not ndarray"),
    'huge-num-nodes': (dict(edge_index=torch.tensor([[0], [1]]), num_nodes=10**15),
                       ValueError, "num_nodes=1000000000000000 .*needs more memory"),
    'float-num-nodes': (dict(edge_index=torch.tensor([[0], [1]]), num_nodes=2.5),
                        TypeError, "num_nodes must be an int, not float"),
    'no-nodes': (dict(), ValueError, "number of nodes cannot be inferred"),
}


@pytest.mark.parametrize('name', BAD_GRAPHS)
def test_bad_graphs_raise_and_are_left_unchanged(name, assert_rejected):
    attrs, error, pattern = BAD_GRAPHS[name]
    assert_rejected(LiftToCliqueComplex(), (Data(**attrs), ), {}, error, pattern)


def test_lift_x_refuses_complex_node_features(assert_rejected):
    # Converted to a real dtype they would lose their imaginary parts.
    graph = Data(x=torch.ones(3, 1, dtype=torch.cfloat),
                 edge_index=torch.tensor([[0, 1], [1, 2]]))
    assert_rejected(LiftToCliqueComplex(lift_x=True), (graph, ), {}, TypeError,
                    "lift_x needs real node features.*complex64")


@pytest.mark.parametrize('max_order, error', [(0, ValueError), ('2', TypeError),
                                               (True, TypeError), (2.0, TypeError),
                                               (-3, ValueError)])
def test_bad_max_order(max_order, error):
    with pytest.raises(error, match="max_order must be"):
        LiftToCliqueComplex(max_order=max_order)


def test_numpy_integer_max_order():
    # (refused as "not int64", where the other integer arguments take NumPy's)
    assert LiftToCliqueComplex(max_order=np.int64(3)).max_order == 3


@pytest.mark.parametrize('kwargs, error, pattern', [
    (dict(max_order=0), ValueError, "max_order must be at least 1"),
    (dict(max_order='2'), TypeError, "max_order must be an int"),
    (dict(edge_attr='signed'), ValueError, "edge_attr must be one of"),
    (dict(lift_x='mean'), TypeError, "lift_x must be True or False, not str"),
    (dict(reduce='max'), ValueError, "reduce must be one of"),
    (dict(dtype=torch.int64), TypeError, "dtype must be a floating"),
])
def test_bad_options(kwargs, error, pattern):
    with pytest.raises(error, match=pattern):
        LiftToCliqueComplex(**kwargs)


@pytest.mark.parametrize('dtype', [torch.int64, 'float32', np.float32, None,
                                   torch.float8_e5m2])
def test_bad_dtype_is_refused_by_the_constructor(dtype):
    # (not only when the first graph is lifted)
    with pytest.raises(TypeError, match="dtype must be a floating torch.dtype"):
        LiftToCliqueComplex(dtype=dtype)


def test_rejects_non_data():
    with pytest.raises(TypeError, match="expects a torch_geometric.data.Data"):
        LiftToCliqueComplex()(torch.zeros(2, 3))


def test_rejects_a_complex_lifted_already():
    # e.g. a lifting given as both pre_transform and transform of a dataset
    graph = Data(x=torch.ones(3, 1), edge_index=torch.tensor([[0, 0, 1], [1, 2, 2]]))
    data = LiftToCliqueComplex()(graph)
    with pytest.raises(TypeError, match="lifted already.*Data\\(x=data.x_0"):
        LiftToCliqueComplex()(data)
    again = LiftToCliqueComplex()(Data(x=data.x_0, edge_index=data.edge_index))
    assert torch.equal(again.simplices_2, data.simplices_2)


@pytest.mark.parametrize('name, value', [
    ('order', torch.tensor([3])), ('dtype', 'float'), ('simplices', torch.ones(2)),
    ('close', torch.tensor([1])), ('laplacians', False)])
def test_rejects_an_attribute_named_as_an_argument_of_the_constructor(name, value):
    # (laplacians=False would build the complex without its Laplacians, silently)
    graph = Data(edge_index=torch.tensor([[0, 1, 0], [1, 2, 2]]), num_nodes=3)
    graph[name] = value
    with pytest.raises(ValueError, match=f"attribute '{name}' has the name of an "
                       "argument of SimplicialComplexData.from_simplices"):
        LiftToCliqueComplex()(graph)


@pytest.mark.parametrize('name', ['x_0', 'x_1'])
def test_rejects_an_attribute_the_lifting_makes(name):
    # x_1 beside edge_attr failed with Python's "multiple values" error; x_0 beside
    # x was replaced silently
    graph = Data(x=torch.randn(3, 2), edge_index=torch.tensor([[0, 1, 0], [1, 2, 2]]),
                 edge_attr=torch.randn(3, 1), num_nodes=3)
    graph[name] = torch.randn(3, 2)
    with pytest.raises(ValueError, match=f"the graph's attribute '{name}' would be "
                       "replaced by the lifting's own"):
        LiftToCliqueComplex()(graph)


def test_rejects_a_batch_of_graphs():
    # its graphs would become one complex (and the models would pool them together)
    graph = Data(x=torch.ones(3, 1), edge_index=torch.tensor([[0, 0, 1], [1, 2, 2]]))
    with pytest.raises(TypeError, match="lifts one graph, not a DataBatch: lift each "
                       "graph.*then batch the complexes"):
        LiftToCliqueComplex()(Batch.from_data_list([graph, graph]))


@pytest.mark.parametrize('kind', [np.int16, np.int32, np.uint32, np.uint64])
def test_numpy_integer_num_nodes(kind):
    # (e.g. ids.max() + 1 of an int32 array)
    graph = Data(edge_index=torch.tensor([[0, 1, 0], [1, 2, 2]]), num_nodes=kind(4))
    data = LiftToCliqueComplex()(graph)
    assert data.num_nodes == 4 and data.num_simplices(2) == 1


@pytest.mark.parametrize('dtype', [torch.int8, torch.int16, torch.int64])
def test_integer_flows_become_float_and_flip_without_overflow(dtype):
    # the edge runs from 1 to 0: its flow is negated, also the most negative integer
    low = torch.iinfo(dtype).min
    graph = Data(edge_index=torch.tensor([[1, 1], [0, 2]]), num_nodes=3,
                 edge_attr=torch.tensor([[low, 3], [5, -7]], dtype=dtype))
    data = LiftToCliqueComplex(dtype=torch.float64)(graph)
    assert data.x_1.dtype == torch.float64
    assert data.x_1.tolist() == [[-float(low), -3.], [5., -7.]]


def test_padding_to_a_high_order():
    # 2,000 orders took 30 s when every padded order cost time in proportion to its
    # order (and every accessor scanned all keys); now about 1 s (no timing is
    # asserted here: the machine's load would decide it).
    graph = Data(edge_index=torch.tensor([[0, 0, 1], [1, 2, 2]]), num_nodes=3)
    data = LiftToCliqueComplex(max_order=2000)(graph)
    sizes = [data.num_simplices(k) for k in range(2001)]
    hodge = [data.hodge_laplacian(k)[0].size(1) for k in range(2001)]
    assert data.order == 2000
    assert sizes[:3] == [3, 3, 1] and not any(sizes[3:])
    assert hodge[:3] == [9, 3, 1] and not any(hodge[3:])


def bond_graph() -> Data:
    # A triangle 0-1-2 and a pendant edge 2-3, stored in both directions (as PyG stores
    # molecules), with one-hot bond types and node features.
    edge_index = torch.tensor([[0, 1, 1, 2, 0, 2, 2, 3], [1, 0, 2, 1, 2, 0, 3, 2]])
    bond = torch.tensor([0, 0, 1, 1, 2, 2, 1, 1])
    return Data(x=torch.tensor([[1., 0.], [0., 2.], [4., 4.], [3., 1.]]),
                edge_index=edge_index, num_nodes=4,
                edge_attr=torch.nn.functional.one_hot(bond, 3).to(torch.uint8))


def test_unoriented_edge_features_keep_their_sign_and_become_float():
    graph = bond_graph()
    data = LiftToCliqueComplex(edge_attr='feature')(graph)
    assert data.simplices_1.tolist() == [[0, 1], [0, 2], [1, 2], [2, 3]]
    assert data.x_1.dtype == torch.float32
    assert data.x_1.tolist() == [[1, 0, 0], [0, 0, 1], [0, 1, 0], [0, 1, 0]]
    # Stored from the higher to the lower id only: a flow would flip it, a feature not.
    graph.edge_index, graph.edge_attr = graph.edge_index[:, 1::2], \
        graph.edge_attr[1::2].float()
    assert LiftToCliqueComplex(edge_attr='feature')(graph).x_1.min() == 0
    assert LiftToCliqueComplex(edge_attr='flow')(graph).x_1.min() == -1
    bools = LiftToCliqueComplex(edge_attr='feature', dtype=torch.float64)(
        Data(edge_index=torch.tensor([[1], [0]]), edge_attr=torch.tensor([[True]])))
    assert bools.x_1.dtype == torch.float64 and bools.x_1.tolist() == [[1.]]


@pytest.mark.parametrize('reduce', ['mean', 'sum'])
def test_node_features_are_lifted_to_every_order(reduce):
    graph = bond_graph()
    data = LiftToCliqueComplex(max_order=3, edge_attr='feature', lift_x=True,
                               reduce=reduce)(graph)
    x = graph.x.double()
    scale = {'mean': lambda k: 1 / (k + 1), 'sum': lambda k: 1}[reduce]
    for k in (1, 2):
        simplices = data[f'simplices_{k}']
        expected = x[simplices].sum(1) * scale(k)
        torch.testing.assert_close(data[f'x_{k}'][:, :2].double(), expected)
    # Order 1: the lifted node features, then the edge features.
    assert data.x_1[:, 2:].tolist() == [[1, 0, 0], [0, 0, 1], [0, 1, 0], [0, 1, 0]]
    assert data.x_3.shape == (0, 2)  # no 4-clique: an empty signal of the right width
    assert [data.num_simplex_features(k) for k in range(4)] == [2, 5, 2, 2]
    assert (data.num_features, data.num_node_features, data.num_edge_features) == \
        (2, 2, 5)


def test_integer_node_features_are_lifted_as_floats():
    graph = bond_graph()
    graph.x = torch.tensor([0, 1, 2, 3])
    data = LiftToCliqueComplex(edge_attr='feature', lift_x=True)(graph)
    assert data.x_0.dtype == torch.int64  # x itself is kept as given
    assert data.x_2.tolist() == [[1.]] and data.x_2.dtype == torch.float32
    assert data.x_1[:, 0].tolist() == [0.5, 1.0, 1.5, 2.5]


def test_lifted_and_given_features_are_joined_in_the_type_of_both():
    # The given features were cast to the lifted ones' type: float64 edge features
    # lost their last bits beside float32 node features, and 1e5 became inf beside
    # float16 ones (which validate() passed).
    graph = Data(x=torch.ones(2, 1), edge_index=torch.tensor([[0], [1]]),
                 edge_attr=torch.tensor([[1 + 2 ** -40]], dtype=torch.float64))
    data = LiftToCliqueComplex(max_order=1, edge_attr='feature', lift_x=True,
                               dtype=torch.float64)(graph)
    assert data.x_1.dtype == torch.float64 and data.x_1[0, 1] == 1 + 2 ** -40
    graph.x, graph.edge_attr = torch.ones(2, 1, dtype=torch.float16), \
        torch.tensor([[1e5]])
    data = LiftToCliqueComplex(max_order=1, edge_attr='feature', lift_x=True)(graph)
    assert data.x_1.dtype == torch.float32 and data.x_1.tolist() == [[1.0, 1e5]]


def test_flags_and_counts_of_other_types():
    # lift_x=np.bool_(True) was refused as "not bool"; a num_nodes of '4' was
    # reported as one that cannot be inferred
    lift = LiftToCliqueComplex(lift_x=np.bool_(True))
    assert lift.lift_x is True
    with pytest.raises(TypeError, match="num_nodes must be an int, not str"):
        lift(Data(edge_index=torch.tensor([[0], [1]]), num_nodes='4'))


def test_lifted_features_that_overflow_are_refused():
    # An integer x of 70000 lifted in float16 became inf.
    graph = Data(x=torch.tensor([[70000], [70000]]), edge_index=torch.tensor([[0], [1]]))
    with pytest.raises(ValueError, match=r"x_1, lifted from x \(torch.int64\) to the "
                       r"1-simplices, has infinite entries in torch.float16"):
        LiftToCliqueComplex(max_order=1, lift_x=True, dtype=torch.float16)(graph)


@pytest.mark.parametrize('dtype', [torch.float32, torch.float64])
def test_a_finite_mean_whose_sum_overflows_is_lifted(dtype):
    # (session 28: refused, with advice, the lifting's dtype, that changes nothing
    # for floating features)
    big = torch.finfo(dtype).max / 2 * 1.5
    graph = Data(x=torch.tensor([[big], [big], [big]], dtype=dtype),
                 edge_index=torch.tensor([[0, 1, 0], [1, 2, 2]]))
    data = LiftToCliqueComplex(lift_x=True, reduce='mean')(graph)
    assert data.x_1.dtype == dtype and data.x_2.dtype == dtype
    assert torch.allclose(data.x_1, torch.full((3, 1), big, dtype=dtype))
    assert torch.allclose(data.x_2, torch.full((1, 1), big, dtype=dtype))
    advice = (r"scale x first, or lift its mean \(reduce='mean'\)"
              if dtype == torch.float64 else r"convert x to a wider floating type "
              r"first \(the lifting's dtype applies to integer and bool features only\)")
    with pytest.raises(ValueError, match=f"has infinite entries in {dtype}: {advice}"):
        LiftToCliqueComplex(lift_x=True, reduce='sum')(graph)


def test_feature_counts_without_features():
    data = LiftToCliqueComplex()(k4())
    assert (data.num_features, data.num_edge_features) == (0, 0)
    assert data.num_simplex_features(2) == 0
    with pytest.raises(ValueError, match="out of range"):
        data.num_simplex_features(3)


def test_dataset_num_features_of_a_lifted_dataset(tmp_path):
    from torch_geometric.data import InMemoryDataset

    class Graphs(InMemoryDataset):
        def __init__(self, transform):
            super().__init__(str(tmp_path), transform=transform)
            graphs = [bond_graph(), k4()]
            graphs[1].x = torch.ones(4, 2)
            graphs[1].edge_attr = torch.zeros(6, 3, dtype=torch.uint8)
            self.data, self.slices = self.collate(graphs)

    dataset = Graphs(LiftToCliqueComplex(edge_attr='feature', lift_x=True))
    assert dataset.num_features == dataset.num_node_features == 2
    assert dataset.num_edge_features == 5  # lifted node features + bond types
    batch = next(iter(DataLoader(dataset, batch_size=2)))
    assert batch.x_2.size(1) == dataset.num_features


def test_kept_edge_index_batches_and_converts_to_networkx():
    from torch_geometric.utils import to_networkx
    graphs = [bond_graph(), random_graph(1)]
    graphs[1].x = torch.zeros(graphs[1].num_nodes, 2)
    graphs[1].edge_attr = torch.zeros(graphs[1].num_edges, 3)
    lifted = [LiftToCliqueComplex(edge_attr='feature')(g) for g in graphs]
    batch = next(iter(DataLoader(lifted, batch_size=2)))
    offset = graphs[0].num_nodes
    assert torch.equal(batch.edge_index, torch.cat(
        [graphs[0].edge_index, graphs[1].edge_index + offset], dim=1))
    assert torch.equal(batch.simplices_1[4:], lifted[1].simplices_1 + offset)
    nx_graph = to_networkx(lifted[0], to_undirected=True)
    assert sorted(nx_graph.edges()) == [(0, 1), (0, 2), (1, 2), (2, 3)]


def test_a_hub_without_laplacians():
    # A star's lower Laplacian of the edges has the square of the hub's degree; a
    # complex for the neighbour loader need not store it.
    from torch_geometric_san.loader import SimplicialNeighborLoader
    n = 3000
    star = Data(edge_index=torch.stack([torch.zeros(n, dtype=torch.long),
                                        torch.arange(1, n + 1)]), num_nodes=n + 1)
    with pytest.raises(TypeError, match='laplacians must be True or False'):
        LiftToCliqueComplex(laplacians=1)
    light = LiftToCliqueComplex(laplacians=False)(star)
    assert 'down_index_1' not in light and light.num_simplices(1) == n
    torch.testing.assert_close(light.spectrum_0, torch.tensor([[0.0, n + 1.0]]),
                               rtol=1e-6, atol=0)
    batch = next(iter(SimplicialNeighborLoader(light, [-1], order=1, batch_size=2)))
    assert batch.batch_size == 2 and batch.num_simplices(1) == n


def test_vertex_ids_beyond_gudhi_are_refused():
    # GUDHI's 32-bit vertex handles wrapped the id 2**31 + 5 to a negative one (a
    # misleading error later); the cap also keeps the edge keys within int64.
    from torch_geometric_san.transforms.lift_to_clique_complex import _cliques
    with pytest.raises(ValueError, match="beyond the 2147483648 of GUDHI's 32-bit"):
        _cliques(np.array([0]), np.array([2 ** 31 + 5]), 2 ** 31 + 6, 2)


@pytest.mark.parametrize('dtype', [torch.uint8, torch.int8, torch.int16, torch.int32])
def test_a_narrow_edge_index_is_lifted_and_kept_as_long(dtype):
    # Ids below num_nodes were refused where num_nodes wrapped in the ids' dtype; a
    # kept narrow edge_index wrapped when batching shifted it.
    num_nodes = 300 if dtype == torch.uint8 else 200
    edge_index = torch.tensor([[0, 1, 120], [1, 2, 126]])
    reference = LiftToCliqueComplex(max_order=1)(Data(edge_index=edge_index,
                                                      num_nodes=num_nodes))
    graph = Data(edge_index=edge_index.to(dtype), num_nodes=num_nodes)
    lifted = LiftToCliqueComplex(max_order=1)(graph)
    assert graph.edge_index.dtype == dtype  # (the graph is left as it was)
    assert lifted.edge_index.dtype == torch.long
    assert torch.equal(lifted.simplices_1, reference.simplices_1)
    batch = next(iter(DataLoader([lifted, lifted], batch_size=2)))
    assert torch.equal(batch.edge_index, torch.cat([edge_index, edge_index + num_nodes], 1))
