import itertools
import time

import numpy as np
import pytest
import torch
from torch_geometric.data import Data
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


@pytest.mark.parametrize('seed', range(3))
def test_simplices_are_the_cliques(seed):
    graph = random_graph(seed)
    data = LiftToCliqueComplex(max_order=4)(graph)
    edges = {tuple(sorted(e)) for e in graph.edge_index.t().tolist()}
    for k in range(1, 5):
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
    assert 'edge_weight' not in data and 'edge_attr' not in data
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
    assert repr(LiftToCliqueComplex(max_order=3)) == 'LiftToCliqueComplex(max_order=3)'


BAD_GRAPHS = {
    'float-edge-index': (dict(edge_index=torch.tensor([[0., 1.], [1., 2.]]),
                              num_nodes=3), TypeError, "edge_index must hold integers"),
    'edge-index-shape': (dict(edge_index=torch.tensor([[0, 1, 2]]), num_nodes=3),
                         ValueError, r"edge_index must have shape \[2, num_edges\]"),
    'node-out-of-range': (dict(edge_index=torch.tensor([[0, 1], [1, 5]]), num_nodes=3),
                          ValueError, "node 5, out of range for 3 nodes"),
    'negative-node': (dict(edge_index=torch.tensor([[0, -1], [1, 2]]), num_nodes=3),
                      ValueError, "node -1, out of range"),
    'edge-attr-rows': (dict(edge_index=torch.tensor([[0, 1], [1, 2]]),
                            edge_attr=torch.ones(3, 1), num_nodes=3), ValueError,
                       "edge_attr has 3 rows but edge_index has 2 edges"),
    'edge-attr-bool': (dict(edge_index=torch.tensor([[0, 1], [1, 2]]),
                            edge_attr=torch.ones(2, 1, dtype=torch.bool), num_nodes=3),
                       TypeError, "edge_attr must be a signed numeric tensor"),
    'node-feature-nan': (dict(edge_index=torch.tensor([[0, 1], [1, 2]]),
                              x=torch.tensor([[0.], [float('nan')], [1.]])), ValueError,
                         "x_0 has NaN or infinite entries"),
    'node-feature-rows': (dict(edge_index=torch.tensor([[0, 1], [1, 2]]),
                               x=torch.zeros(2, 1), num_nodes=3), ValueError,
                          "x_0 has 2 rows but the complex has 3 0-simplices"),
    'edge-attr-nan': (dict(edge_index=torch.tensor([[0, 1], [1, 2]]),
                           edge_attr=torch.tensor([[1.0], [float('nan')]]),
                           num_nodes=3), ValueError,
                      "edge_attr has NaN or infinite entries"),
    'edge-attr-uint8': (dict(edge_index=torch.tensor([[0, 1], [1, 2]]),
                             edge_attr=torch.ones(2, 1, dtype=torch.uint8), num_nodes=3),
                        TypeError, "edge_attr must be a signed numeric tensor"),
    'edge-attr-list': (dict(edge_index=torch.tensor([[0, 1], [1, 2]]),
                            edge_attr=[1.0, 2.0], num_nodes=3), TypeError,
                       "edge_attr must be a tensor, not list"),
    'edge-index-array': (dict(edge_index=np.array([[0, 1], [1, 2]]), num_nodes=3),
                         TypeError, "edge_index must be a tensor, not ndarray"),
    'huge-num-nodes': (dict(edge_index=torch.tensor([[0], [1]]), num_nodes=10**15),
                       ValueError, "num_nodes=1000000000000000 .*needs more memory"),
    'float-num-nodes': (dict(edge_index=torch.tensor([[0], [1]]), num_nodes=2.5),
                        TypeError, "num_nodes must be an int, not float"),
}


@pytest.mark.parametrize('name', BAD_GRAPHS)
def test_bad_graphs_raise_and_are_left_unchanged(name, assert_rejected):
    attrs, error, pattern = BAD_GRAPHS[name]
    assert_rejected(LiftToCliqueComplex(), (Data(**attrs), ), {}, error, pattern)


@pytest.mark.parametrize('max_order, error', [(0, ValueError), ('2', TypeError),
                                               (True, TypeError), (2.0, TypeError),
                                               (-3, ValueError)])
def test_bad_max_order(max_order, error):
    with pytest.raises(error, match="max_order must be"):
        LiftToCliqueComplex(max_order=max_order)


@pytest.mark.parametrize('dtype', [torch.int64, 'float32', np.float32, None])
def test_bad_dtype_is_refused_by_the_constructor(dtype):
    # (not only when the first graph is lifted)
    with pytest.raises(TypeError, match="dtype must be a floating torch.dtype"):
        LiftToCliqueComplex(dtype=dtype)


def test_rejects_non_data():
    with pytest.raises(TypeError, match="expects a torch_geometric.data.Data"):
        LiftToCliqueComplex()(torch.zeros(2, 3))


def test_padding_to_a_high_order_is_linear():
    # 2,000 orders took 30 s when every padded order cost time in proportion to its
    # order (and every accessor scanned all keys); now about 1 s.
    graph = Data(edge_index=torch.tensor([[0, 0, 1], [1, 2, 2]]), num_nodes=3)
    start = time.perf_counter()
    data = LiftToCliqueComplex(max_order=2000)(graph)
    sizes = [data.num_simplices(k) for k in range(2001)]
    hodge = [data.hodge_laplacian(k)[0].size(1) for k in range(2001)]
    assert time.perf_counter() - start < 10.0
    assert data.order == 2000
    assert sizes[:3] == [3, 3, 1] and not any(sizes[3:])
    assert hodge[:3] == [9, 3, 1] and not any(hodge[3:])
