import copy
import io
import os
import pickle
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
import torch
from torch_geometric.data import Batch, InMemoryDataset

from torch_geometric_san.data import SimplicialComplexData

def simplices_by_dimension(tree):
    # (GUDHI's num_simplices_by_dimension is new in 3.13)
    counts = [0] * (tree.dimension() + 1)
    for simplex, _ in tree.get_simplices():
        counts[len(simplex) - 1] += 1
    return counts


def by_vertices(data):
    r"""The complex in terms of vertex tuples, independent of how simplices are
    numbered: per order the set of simplices and every operator as a dict."""
    names = [tuple(range(data.num_nodes))] + [
        list(map(tuple, data[f'simplices_{k}'].tolist()))
        for k in range(1, data.order + 1)
    ]
    names[0] = [(v, ) for v in range(data.num_nodes)]
    out = {'simplices': [sorted(n) for n in names]}
    for name in ('boundary', 'down_laplacian', 'up_laplacian', 'hodge_laplacian'):
        for k in range(data.order + 1):
            index, weight = getattr(data, name)(k)
            rows = names[k - 1] if name == 'boundary' else names[k]
            out[name, k] = {(rows[i], names[k][j]): round(w, 5) for i, j, w in zip(
                index[0].tolist(), index[1].tolist(), weight.tolist())}
    return out


def test_from_simplices_matches_from_simplex_tree(random_tree):
    from_tree = SimplicialComplexData.from_simplex_tree(random_tree)
    simplices = [s for s, _ in random_tree.get_simplices()]
    np.random.default_rng(0).shuffle(simplices)
    from_list = SimplicialComplexData.from_simplices(simplices)
    assert by_vertices(from_list) == by_vertices(from_tree)
    maximal = [s for s in simplices if not any(
        len(t) > len(s) and set(s) <= set(t) for t in simplices)]
    closed = SimplicialComplexData.from_simplices(maximal, close=True,
                                                  order=from_tree.order)
    assert by_vertices(closed) == by_vertices(from_tree)


def test_from_simplex_tree_is_lexicographic_and_leaves_tree_alone(random_tree):
    before = list(random_tree.get_simplices())
    data = SimplicialComplexData.from_simplex_tree(random_tree)
    assert list(random_tree.get_simplices()) == before
    for k in range(1, data.order + 1):
        rows = data[f'simplices_{k}'].tolist()
        assert rows == sorted(rows)
    assert [data.num_simplices(k) for k in range(data.order + 1)] == \
        simplices_by_dimension(random_tree)


@pytest.mark.parametrize('kind', ['numpy', 'scipy', 'torch', 'torch_coo', 'torch_csr',
                                  # (SciPy has no float16 nor other byte orders, NumPy
                                  # no bfloat16: they failed inside them)
                                  'numpy_float16', 'numpy_big_endian', 'torch_bfloat16',
                                  'torch_coo_float16'])
def test_from_incidence_matches_from_simplex_tree(random_tree, dense, kind,
                                                  assert_data_equal):
    data = SimplicialComplexData.from_simplex_tree(random_tree)
    sizes = [data.num_simplices(k) for k in range(data.order + 1)]
    matrices = [dense(*data.boundary(k), (sizes[k - 1], sizes[k]))
                for k in range(1, data.order + 1)]
    convert = {
        'numpy': lambda B: B,
        'scipy': sp.csr_matrix,
        'torch': torch.from_numpy,
        'torch_coo': lambda B: torch.from_numpy(B).to_sparse_coo(),
        'torch_csr': lambda B: torch.from_numpy(B).to_sparse_csr(),
        'numpy_float16': lambda B: B.astype(np.float16),
        'numpy_big_endian': lambda B: B.astype('>f8'),
        'torch_bfloat16': lambda B: torch.from_numpy(B).bfloat16(),
        'torch_coo_float16': lambda B: torch.from_numpy(B).half().to_sparse_coo(),
    }[kind]
    given = [convert(B) for B in matrices]
    kept = [B.clone() if isinstance(B, torch.Tensor) else copy.deepcopy(B)
            for B in given]
    x_1 = torch.randn(sizes[1], 3)
    out = SimplicialComplexData.from_incidence(given, x_1=x_1)
    assert_data_equal(out, data.__class__(**dict(data.to_dict(), x_1=x_1)))
    for B, B_kept in zip(given, kept):  # the input is left unchanged
        if isinstance(B, torch.Tensor):
            assert torch.equal(B.to_dense(), B_kept.to_dense())
        else:
            assert (abs(B - B_kept)).sum() == 0


def test_from_incidence_keeps_the_given_orientation(annulus, dense):
    data = SimplicialComplexData.from_simplices(annulus, close=True)
    sizes = [data.num_simplices(k) for k in range(3)]
    B1 = dense(*data.boundary(1), (sizes[0], sizes[1]))
    B2 = dense(*data.boundary(2), (sizes[1], sizes[2]))
    flip = np.where(np.arange(sizes[1]) % 3 == 0, -1.0, 1.0)  # reverse some edges
    B1f, B2f = B1 * flip, flip[:, None] * B2
    out = SimplicialComplexData.from_incidence([B1f, B2f])
    assert torch.equal(out.simplices_1, data.simplices_1)
    assert np.array_equal(dense(*out.boundary(1), B1.shape), B1f)
    assert np.array_equal(dense(*out.boundary(2), B2.shape), B2f)
    down = dense(*data.down_laplacian(1), (sizes[1], ) * 2)
    assert np.array_equal(dense(*out.down_laplacian(1), down.shape),
                          flip[:, None] * down * flip)


def test_given_order_is_kept_and_features_follow_it():
    edges = [[2, 3], [0, 1], [1, 2], [0, 2]]
    x_1 = torch.arange(4.).view(-1, 1)
    data = SimplicialComplexData.from_simplices(edges + [[0, 1, 2]], x_1=x_1,
                                                y=torch.tensor([1]))
    assert data.simplices_1.tolist() == edges
    assert torch.equal(data.x_1, x_1) and data.y.tolist() == [1]
    index, weight = data.boundary(2)  # [0, 1, 2] = +[1, 2] - [0, 2] + [0, 1]
    assert sorted(zip(index[0].tolist(), weight.tolist())) == [(1, 1.0), (2, 1.0),
                                                               (3, -1.0)]


def test_close_appends_missing_faces_after_given_ones():
    data = SimplicialComplexData.from_simplices([[1, 2], [0, 1, 2]], close=True)
    assert data.simplices_1.tolist() == [[1, 2], [0, 1], [0, 2]]


def test_vertices_are_node_indices():
    data = SimplicialComplexData.from_simplices([[0], [1], [3, 4]], num_nodes=6)
    assert data.num_nodes == 6 and data.num_simplices(0) == 6
    assert data.order == 1 and 'simplices_0' not in data
    index, weight = data.up_laplacian(0)
    assert set(index.flatten().tolist()) == {3, 4}  # the others are isolated


def test_order_pads_and_truncates(random_tree):
    data = SimplicialComplexData.from_simplices([[0, 1], [1, 2]], order=3)
    assert data.order == 3
    assert [data.num_simplices(k) for k in range(4)] == [3, 2, 0, 0]
    assert data.simplices_3.shape == (0, 4)
    assert data.up_laplacian(1)[0].shape == (2, 0)
    skeleton = SimplicialComplexData.from_simplex_tree(random_tree, order=1)
    assert skeleton.order == 1
    assert skeleton.num_simplices(1) == simplices_by_dimension(random_tree)[1]


def test_accessors_shapes_and_empty_operators(random_complex):
    data = random_complex
    K = data.order
    for name in ('boundary', 'down_laplacian', 'up_laplacian', 'hodge_laplacian'):
        for k in range(K + 1):
            index, weight = getattr(data, name)(k)
            assert index.dtype == torch.long and index.dim() == 2
            assert index.size(0) == 2 and weight.shape == (index.size(1), )
            assert weight.dtype == torch.float32
    for empty in (data.boundary(0), data.down_laplacian(0), data.up_laplacian(K)):
        assert empty[0].shape == (2, 0) and empty[1].shape == (0, )
    assert data.boundary(1)[0][0].max() < data.num_simplices(0)
    assert data.boundary(1)[0][1].max() < data.num_simplices(1)
    assert torch.equal(data.simplex_batch(1), torch.zeros(data.num_simplices(1),
                                                          dtype=torch.long))


def test_weights_dtype():
    data = SimplicialComplexData.from_simplices([[0, 1, 2]], close=True,
                                                dtype=torch.float64)
    for k in range(3):
        assert data.hodge_laplacian(k)[1].dtype == torch.float64
    assert data.boundary(2)[1].dtype == torch.float64


def test_to_device(annulus, device, assert_data_equal):
    data = SimplicialComplexData.from_simplices(annulus, close=True,
                                                x_1=torch.randn(20, 2))
    moved = data.to(device)
    for k in range(3):
        for index, weight in (moved.boundary(k), moved.down_laplacian(k),
                              moved.up_laplacian(k), moved.hodge_laplacian(k)):
            assert index.device.type == device and weight.device.type == device
        assert moved.simplex_batch(k).device.type == device
    assert_data_equal(moved.to('cpu'), data)


def test_torch_save_load_round_trip(annulus, assert_data_equal):
    data = SimplicialComplexData.from_simplices(annulus, close=True,
                                                x_0=torch.randn(10, 4))
    buffer = io.BytesIO()
    torch.save(data, buffer)
    buffer.seek(0)
    # The default weights_only=True: the package allow-lists what a complex needs.
    assert_data_equal(torch.load(buffer), data)


@pytest.mark.parametrize('ask', ['node_attrs', 'ToUndirected'])
def test_a_complex_that_pyg_has_asked_about_saves_and_deep_copies(annulus, ask,
                                                                  assert_data_equal):
    # PyG caches which attributes are node or edge attributes in the storage (keyed
    # by its AttrType enum): saved, torch.load(weights_only=True) refused the file;
    # deep-copied, the copy shared it with the original (session 28).
    from torch_geometric.transforms import ToUndirected
    data = SimplicialComplexData.from_simplices(
        annulus, close=True, x_0=torch.randn(10, 4), y=torch.arange(10.0))
    data = ToUndirected()(data) if ask == 'ToUndirected' else data
    assert sorted(data.node_attrs()) == ['x_0', 'y']
    buffer = io.BytesIO()
    torch.save(data, buffer)
    buffer.seek(0)
    loaded = torch.load(buffer)
    assert_data_equal(loaded, data)
    assert sorted(loaded.node_attrs()) == ['x_0', 'y']
    twin = copy.deepcopy(data)
    twin.y = torch.zeros(3)  # no longer one per vertex: the twin learns it
    assert twin.node_attrs() == ['x_0']
    assert sorted(data.node_attrs()) == ['x_0', 'y'] and data.is_node_attr('y')


def test_saved_complex_and_batch_load_in_a_fresh_process(tmp_path, annulus):
    # A fresh interpreter has made no batch class yet: importing the package is all
    # that torch.load(path) needs, for a complex and for a batch.
    data = SimplicialComplexData.from_simplices(annulus, close=True,
                                                x_1=torch.randn(20, 2))
    batch = Batch.from_data_list([data, data])
    torch.save(data, tmp_path / 'complex.pt')
    torch.save(batch, tmp_path / 'batch.pt')
    script = (
        "import sys, torch, torch_geometric_san\n"
        "data = torch.load(sys.argv[1] + '/complex.pt')\n"
        "batch = torch.load(sys.argv[1] + '/batch.pt')\n"
        "print(type(data).__name__, type(batch).__name__, batch.num_graphs,\n"
        "      batch.simplex_batch(2).tolist() == [0] * 10 + [1] * 10,\n"
        "      torch.equal(batch.get_example(1).x_1, data.x_1))\n")
    out = subprocess.run([sys.executable, '-c', script, str(tmp_path)],
                         capture_output=True, text=True, env=_child_env())
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ['SimplicialComplexData',
                                  'SimplicialComplexDataBatch', '2', 'True', 'True']


def _child_env():
    # The child imports this checkout's package, as the test process does.
    root = str(Path(__file__).resolve().parents[2])
    return dict(os.environ, PYTHONPATH=os.pathsep.join(
        filter(None, [root, os.environ.get('PYTHONPATH')])))


def test_in_memory_dataset_save_load_round_trip(tmp_path, annulus, hollow_tetrahedron,
                                                assert_data_equal):
    # InMemoryDataset stores the data class: it loads with weights_only=True (no
    # warning) because SimplicialComplexData is registered as a safe global.
    data_list = [SimplicialComplexData.from_simplices(s, close=True, order=2)
                 for s in (annulus, hollow_tetrahedron)]
    path = str(tmp_path / 'data.pt')
    InMemoryDataset.save(data_list, path)

    class Stored(InMemoryDataset):
        def __init__(self):
            super().__init__(None)
            self.load(path)

    with warnings.catch_warnings():
        warnings.simplefilter('error')
        dataset = Stored()
    for i, data in enumerate(data_list):
        assert_data_equal(dataset[i], data)


@pytest.mark.parametrize('matrices, sizes', [
    ([np.zeros((3, 0))], [3, 0]),  # vertices without edges
    ([np.zeros((0, 0))], [0, 0]),  # nothing at all
    ([sp.csr_matrix((4, 0)), np.zeros((0, 0))], [4, 0, 0]),
    ([torch.zeros(2, 0)], [2, 0]),
    ([np.array([[-1.], [1.]]), np.zeros((1, 0))], [2, 1, 0]),  # an edge, no triangle
])
def test_from_incidence_with_empty_orders(matrices, sizes, assert_data_equal):
    data = SimplicialComplexData.from_incidence(matrices)
    assert [data.num_simplices(k) for k in range(len(sizes))] == sizes
    # The same complex as from its simplices, padded to the same order.
    edges = [[0, 1]] if sizes[1] else []
    assert_data_equal(data, SimplicialComplexData.from_simplices(
        edges, num_nodes=sizes[0], order=len(sizes) - 1))


def test_from_incidence_without_laplacians(annulus):
    # laplacians=False was stored as an attribute, and every Laplacian built
    full = SimplicialComplexData.from_simplices(annulus, close=True)
    matrices = [sp.coo_array((full.boundary(k)[1].numpy(), full.boundary(k)[0].numpy()),
                             shape=(full.num_simplices(k - 1), full.num_simplices(k)))
                for k in (1, 2)]
    light = SimplicialComplexData.from_incidence(matrices, laplacians=False)
    assert 'laplacians' not in light and 'up_index_1' not in light
    expected = SimplicialComplexData.from_simplices(annulus, close=True,
                                                    laplacians=False)
    assert sorted(light.keys()) == sorted(expected.keys())
    for key in expected.keys():
        if key != 'num_nodes':
            assert torch.equal(light[key], expected[key]), key
    for name, value in (('order', 3), ('close', True)):  # stored as attributes
        with pytest.raises(TypeError, match=f"from_incidence takes no '{name}'"):
            SimplicialComplexData.from_incidence(matrices, **{name: value})


@pytest.mark.parametrize('empty', [np.empty((0, 3)), torch.empty(0, 3),
                                   torch.empty(0, 3, dtype=torch.long)])
def test_an_empty_array_of_simplices_of_any_numeric_dtype(empty, assert_data_equal):
    # (np.empty and torch.empty default to floats; no vertex id is a float then)
    assert_data_equal(SimplicialComplexData.from_simplices(empty, num_nodes=2),
                      SimplicialComplexData.from_simplices([], num_nodes=2, order=2))


def test_without_laplacians_keeps_simplices_boundaries_and_spectra(random_tree):
    simplices = [np.array(rows) for rows in _simplex_rows(random_tree)]
    full = SimplicialComplexData.from_simplices(simplices, close=True)
    light = SimplicialComplexData.from_simplices(simplices, close=True,
                                                 laplacians=False)
    keys = {key for key in full.keys() if not key.startswith(('down', 'up', 'hodge'))}
    assert set(light.keys()) == keys
    for key in keys - {'num_nodes'}:
        assert torch.equal(light[key], full[key]), key
    assert light.num_nodes == full.num_nodes
    for k in range(1, full.order + 1):
        assert torch.equal(light.boundary(k)[0], full.boundary(k)[0])
    assert light.boundary(0)[0].shape == (2, 0)
    for name in ('down_laplacian', 'up_laplacian', 'hodge_laplacian'):
        with pytest.raises(ValueError, match='laplacians=False'):
            getattr(light, name)(1)
    with pytest.raises(ValueError, match='holds no Laplacians'):
        light.operators(0)
    with pytest.raises(TypeError, match='laplacians'):
        SimplicialComplexData.from_simplices(simplices, close=True, laplacians=1)


def test_numpy_features_of_any_layout(annulus):
    # (negative strides and other byte orders failed inside torch.from_numpy)
    expected = np.arange(40.0).reshape(20, 2)
    for x in (expected[::-1].copy()[::-1], expected.astype('>f8'),
              np.asfortranarray(expected)):
        data = SimplicialComplexData.from_simplices(annulus, close=True, x_1=x)
        assert torch.equal(data.x_1, torch.from_numpy(expected))
    with pytest.raises(TypeError, match="x_1 is of a dtype torch has not"):
        SimplicialComplexData.from_simplices(annulus, close=True,
                                             x_1=expected.astype(np.longdouble))


def test_numpy_attributes_become_tensors_that_follow_their_simplices():
    # (session 28: only the x_k were converted; a NumPy edge label stayed in place
    # when ReorderSimplices moved the edges, and subgraph() kept all its rows)
    from torch_geometric_san.data.attributes import simplex_attr_orders
    from torch_geometric_san.transforms.reorder_simplices import reorder_simplices
    edges = [[0, 3], [1, 2], [0, 1], [2, 3], [0, 2]]
    data = SimplicialComplexData.from_simplices(
        edges, y_edge=np.array([10, 11, 12, 13, 14]), pos=np.zeros((4, 2)),
        names=np.array(['a', 'b', 'c', 'd', 'e']))
    assert isinstance(data.y_edge, torch.Tensor) and isinstance(data.pos, torch.Tensor)
    assert isinstance(data.names, np.ndarray)  # (not numeric: as given)
    # (0-d stays 0-d, as torch.from_numpy makes it; a dtype torch has not, as given)
    other = SimplicialComplexData.from_simplices(
        edges, scale=np.array(2.5), wide=np.ones(2, dtype=np.longdouble))
    assert isinstance(other.scale, torch.Tensor) and other.scale.shape == ()
    assert isinstance(other.wide, np.ndarray) and other.wide.dtype == np.longdouble
    # (a masked array as a tensor lost its mask: its fill values became data)
    masked = np.ma.masked_array([1.0, 2.0, 3.0, 4.0], mask=[0, 1, 0, 0])
    kept = SimplicialComplexData.from_simplices(edges, weight_mask=masked)
    assert isinstance(kept.weight_mask, np.ma.MaskedArray)
    with pytest.raises(TypeError, match=r"x_0 must be a tensor or a plain array, not a "
                       r"MaskedArray \(fill its mask first\)"):
        SimplicialComplexData.from_simplices(edges, x_0=masked.reshape(4, 1))
    assert simplex_attr_orders(data)['y_edge'] == 1
    moved, perms = reorder_simplices(data)
    assert not torch.equal(perms[1], torch.arange(5))
    assert torch.equal(moved.y_edge, data.y_edge[perms[1]])
    part = data.subgraph(torch.tensor([0, 1, 2]))
    assert part.y_edge.tolist() == [11, 12, 14] and part.pos.shape == (3, 2)


def test_without_laplacians_simplex_batch(annulus):
    light = SimplicialComplexData.from_simplices(annulus, close=True, laplacians=False)
    assert torch.equal(light.simplex_batch(2), torch.zeros(light.num_simplices(2),
                                                           dtype=torch.long))
    batch = Batch.from_data_list([light, light])
    n = light.num_simplices(1)
    assert torch.equal(batch.simplex_batch(1), torch.arange(2).repeat_interleave(n))


@pytest.mark.parametrize('kind', [np.int16, np.int32, np.uint32, np.uint64, np.int64])
def test_numpy_integer_num_nodes(kind):
    # (e.g. ids.max() + 1 of an int32 array)
    simplices = [[0, 1, 2], [1, 2, 3]]
    expected = SimplicialComplexData.from_simplices(simplices, close=True, num_nodes=5)
    got = SimplicialComplexData.from_simplices(simplices, close=True, num_nodes=kind(5))
    assert got.num_nodes == 5 and type(got.num_nodes) is int
    assert all(torch.equal(a, b) for a, b in zip(got.hodge_laplacian(0),
                                                 expected.hodge_laplacian(0)))
    assert SimplicialComplexData.from_incidence([], num_nodes=kind(3)).num_nodes == 3


def test_validate_accepts_built_complexes_and_their_batches(random_tree, annulus):
    full = SimplicialComplexData.from_simplex_tree(random_tree)
    light = SimplicialComplexData.from_simplices(annulus, close=True, laplacians=False)
    padded = SimplicialComplexData.from_simplices(annulus, close=True, order=4,
                                                  x_1=torch.randn(20, 2))
    for data in (full, light, padded, Batch.from_data_list([padded, padded]),
                 SimplicialComplexData.from_simplices([], num_nodes=3)):
        assert data.validate() is True


@pytest.mark.parametrize('case,match', [
    ('x_rows', "'x_1' needs one row per 1-simplex, 20 \\(found \\[3, 2\\]\\)"),
    ('x_order', "'x_3' is given but the complex has order 2"),
    ('x_scalar', "'x_0' needs one row per 0-simplex"),
    ('vertex', "'simplices_2' holds vertex ids outside \\[0, 10\\)"),
    ('simplex_shape', "'simplices_1' needs shape \\[N_1, 2\\]"),
    ('index', "row 0 of 'up_index_1' holds ids outside \\[0, 20\\)"),
    ('face', "row 0 of 'boundary_index_2' holds ids outside \\[0, 20\\)"),
    ('weight', "'hodge_weight_1' needs one value per entry"),
    ('index_shape', "'down_index_1' needs shape \\[2, nnz\\]"),
    ('boundary_entries', "'boundary_index_1' needs 2 entries per 1-simplex "
                         "\\(found 2 to 4\\)"),
    # a face moved from one simplex to another kept the total (it passed)
    ('boundary_moved', "'boundary_index_2' needs 3 entries per 2-simplex "
                       "\\(found 2 to 4\\)"),
    # (the checks read them as tensors, and failed with an AttributeError)
    ('not_a_tensor', "'simplices_1' must be a tensor \\(found ndarray\\)"),
    ('weight_list', "'up_weight_1' must be a tensor \\(found list\\)"),
    # the accessor answered with an empty operator
    ('no_index', "'hodge_weight_1' is given without its index 'hodge_index_1'"),
    # (each passed; the missing order raised a batching error naming no cause)
    ('simplex_float', "'simplices_1' needs int64 \\(or int32\\) vertex ids \\(found "
                      "torch.float32"),
    # (a comparison inside torch failed, also with raise_on_error=False)
    ('simplex_uint32', "'simplices_1' needs int64 \\(or int32\\) vertex ids \\(found "
                       "torch.uint32"),
    # (batching shifted them in uint8, where they wrapped)
    ('simplex_uint8', "'simplices_1' needs int64 \\(or int32\\) vertex ids \\(found "
                      "torch.uint8"),
    ('simplex_unsorted', "'simplices_2' needs the vertex ids of each simplex "
                         "distinct and ascending"),
    ('simplex_repeated', "'simplices_1' lists a 1-simplex more than once"),
    ('missing_order', "'simplices_1' is missing, but the complex has order 2"),
    # (a torch error inside validate(), even with raise_on_error=False, or a pass)
    ('boundary_float', "'boundary_index_1' needs int64 or int32 ids in a dense tensor "
                       "\\(found torch.float32"),
    ('index_bool', "'up_index_1' needs int64 or int32 ids in a dense tensor \\(found "
                   "torch.bool"),
    # int16 failed inside torch, uint8 was read as a mask
    ('index_int16', "'up_index_1' needs int64 or int32 ids in a dense tensor \\(found "
                    "torch.int16"),
    ('index_uint8', "'down_index_1' needs int64 or int32 ids in a dense tensor \\(found "
                    "torch.uint8"),
    ('graph', "'edge_index' contains larger indices"),
    ('graph_x', "'x' is set, but a complex holds its features per order"),
])
def test_validate_finds_attributes_changed_after_building(annulus, case, match):
    data = SimplicialComplexData.from_simplices(annulus, close=True,
                                                x_1=torch.randn(20, 2))
    assert data.num_simplices(1) == 20 and data.num_nodes == 10
    if case == 'x_rows':
        data.x_1 = torch.randn(3, 2)
    elif case == 'x_order':
        data.x_3 = torch.randn(1, 1)
    elif case == 'x_scalar':
        data.x_0 = torch.tensor(1.0)
    elif case == 'graph_x':  # e.g. normalised features meant for the vertices
        data.x = torch.randn(10, 2)
    elif case == 'vertex':
        data.simplices_2[0, 2] = 10
    elif case == 'simplex_float':
        data.simplices_1 = data.simplices_1.float()
    elif case in ('simplex_uint32', 'simplex_uint8'):
        data.simplices_1 = data.simplices_1.to(getattr(torch, case.split('_')[1]))
    elif case == 'simplex_unsorted':
        data.simplices_2 = data.simplices_2.flip(1)
    elif case == 'simplex_repeated':
        data.simplices_1[1] = data.simplices_1[0]
    elif case == 'missing_order':
        del data.simplices_1
    elif case == 'simplex_shape':
        data.simplices_1 = data.simplices_1[:, :1]
    elif case == 'index':
        data.up_index_1[0, 0] = 20
    elif case == 'boundary_float':
        data.boundary_index_1 = data.boundary_index_1.float()
    elif case == 'index_bool':
        data.up_index_1 = data.up_index_1.bool()
        with pytest.raises(ValueError, match="'up_index_1' needs int64 or int32 ids "
                           "\\(found torch.bool\\)"):
            data.operators(1)
    elif case in ('index_int16', 'index_uint8'):
        key = 'up_index_1' if case == 'index_int16' else 'down_index_1'
        data[key] = data[key].to(torch.int16 if case == 'index_int16' else torch.uint8)
        with pytest.raises(ValueError, match=f"'{key}' needs int64 or int32 ids"):
            data.operators(1)
    elif case == 'face':
        data.boundary_index_2[0, 0] = -1
    elif case == 'weight':
        data.hodge_weight_1 = data.hodge_weight_1[1:]
    elif case == 'index_shape':
        data.down_index_1 = data.down_index_1[:1]
    elif case == 'boundary_moved':
        data.boundary_index_2[1, 2] = 1
    elif case == 'not_a_tensor':
        data.simplices_1 = data.simplices_1.numpy()
    elif case == 'weight_list':
        data.up_weight_1 = data.up_weight_1.tolist()
    elif case == 'no_index':
        del data.hodge_index_1
        with pytest.raises(ValueError, match="has no 'hodge_index_1' \\(deleted"):
            data.hodge_laplacian(1)
    elif case == 'boundary_entries':  # e.g. padded as if it were an edge attribute
        data.boundary_index_1 = torch.cat([data.boundary_index_1,
                                           torch.zeros(2, 2, dtype=torch.long)], 1)
        data.boundary_weight_1 = torch.cat([data.boundary_weight_1, torch.zeros(2)])
    else:  # a kept graph, checked by PyG's own validation
        data.edge_index = torch.tensor([[0], [10]])
    with pytest.raises(ValueError, match=match):
        data.validate()
    with pytest.warns(UserWarning, match=match):
        assert data.validate(raise_on_error=False) is False


def test_a_complex_without_num_nodes_says_so():
    # The plain constructor stores what it is given: without num_nodes, N_0 failed
    # inside int() and subgraph inside torch.zeros
    full = SimplicialComplexData.from_simplices([[0, 1, 2]], close=True)
    data = SimplicialComplexData(**{key: full[key] for key in full.keys()
                                    if key != 'num_nodes'})
    for call in (lambda: data.num_simplices(0), lambda: data.simplex_batch(0),
                 lambda: data.subgraph(torch.tensor([0]))):
        with pytest.raises(ValueError, match="the complex has no 'num_nodes'"):
            call()


def test_numpy_orders_are_read_as_ints():
    # (np.uint8(0) - 1 wrapped to 255 in a key name, with NumPy's overflow warning)
    data = SimplicialComplexData.from_simplices([[0, 1, 2]], close=True)
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        ops = data.operators(np.uint8(0))
    assert torch.equal(ops.up.index, data.operators(0).up.index)


def test_validate_warns_at_the_users_line():
    # (it named the package's validate(), as PyG's warn_or_raise does)
    data = SimplicialComplexData.from_simplices([[0, 1]])
    data.x = torch.zeros(2, 1)
    with pytest.warns(UserWarning, match="'x' is set") as caught:
        assert data.validate(raise_on_error=False) is False
    assert [w.filename for w in caught] == [__file__]


def test_validate_takes_a_bool():
    # 'False' was taken as true
    with pytest.raises(TypeError, match="raise_on_error must be True or False, not str"):
        SimplicialComplexData.from_simplices([[0, 1]]).validate(raise_on_error='False')

def _simplex_rows(tree):
    # The top-dimensional simplices of a GUDHI tree, by order, as lists of rows.
    rows = {}
    for simplex, _ in tree.get_simplices():
        rows.setdefault(len(simplex), []).append(sorted(simplex))
    return [rows[width] for width in sorted(rows) if width > 1]


def _lifted_graph():
    # Two triangles sharing an edge (1-2-3, 2-3-4), a tail 4-5, an edge 6-7 apart and
    # an isolated vertex 0, with node and edge features and a graph label.
    from torch_geometric.data import Data
    from torch_geometric_san.transforms import LiftToCliqueComplex
    edges = torch.tensor([[1, 2], [2, 3], [1, 3], [3, 4], [4, 5], [2, 4], [6, 7]]).T
    edge_index = torch.cat([edges, edges.flip(0)], dim=1)
    gen = torch.Generator().manual_seed(0)
    graph = Data(x=torch.randn(8, 3, generator=gen), edge_index=edge_index,
                 edge_attr=torch.randn(14, 2, generator=gen), y=torch.tensor([1]),
                 num_nodes=8)
    lift = LiftToCliqueComplex(lift_x=True, edge_attr='feature')
    return graph, lift


@pytest.mark.parametrize('subset', [
    torch.tensor([1, 2, 3, 4, 6]),
    torch.tensor([4, 2, 3, 1]),  # any order: the vertices keep theirs
    torch.tensor([True, True, True, False, True, False, True, True]),
    torch.tensor([], dtype=torch.long),
])
def test_subgraph_is_the_lifting_of_the_induced_subgraph(subset, assert_data_equal):
    graph, lift = _lifted_graph()
    data = lift(graph)
    before = copy.deepcopy(data)
    kept = subset if subset.dtype == torch.bool else subset.sort().values
    assert_data_equal(data.subgraph(subset), lift(graph.subgraph(kept)))
    assert_data_equal(data, before)


@pytest.mark.parametrize('dtype', [torch.uint8, torch.int16, torch.int32])
def test_subgraph_of_a_complex_with_a_narrow_edge_index(dtype):
    # (uint8 was read as a mask, int16 failed inside torch's indexing)
    graph, lift = _lifted_graph()
    data = lift(graph)
    reference = data.subgraph(torch.tensor([0, 1, 2]))
    data.edge_index = data.edge_index.to(dtype)
    sub = data.subgraph(torch.tensor([0, 1, 2]))
    assert sub.edge_index.dtype == torch.long
    assert torch.equal(sub.edge_index, reference.edge_index)


def test_int32_operator_indices_give_the_gradients_of_int64_ones():
    # The transpose's sort key (source * rows + target) wrapped in int32 once rows *
    # cols reached 2**31: the backward read a scrambled transpose.
    num_nodes = 47_000
    edges = torch.stack([torch.arange(num_nodes - 1), torch.arange(1, num_nodes)], 1)
    data = SimplicialComplexData.from_simplices(edges)
    narrow = copy.copy(data)
    narrow.up_index_0 = data.up_index_0.int()
    assert narrow.validate()
    value = torch.linspace(0, 1, data.up_index_0.size(1))  # (not symmetric)
    grads = []
    for complex_ in (data, narrow):
        x = torch.randn(num_nodes, 2, generator=torch.Generator().manual_seed(0),
                        requires_grad=True)
        out = complex_.operators(0).up.matmul(x, value=value)
        grads.append(torch.autograd.grad(out.square().sum(), x)[0])
    assert torch.equal(grads[0], grads[1])


def _dense_boundaries(data):
    out = []
    for k in range(1, data.order + 1):
        matrix = np.zeros((data.num_simplices(k - 1), data.num_simplices(k)))
        index, weight = data.boundary(k)
        matrix[index[0].numpy(), index[1].numpy()] = weight.numpy()
        out.append(matrix)
    return out


def test_subgraph_of_a_random_complex_keeps_orientation_and_order(random_complex):
    # Every other edge reoriented (its column of B_1 and its row of B_2 flipped,
    # through from_incidence): the kept boundaries must be the given ones, not
    # those of sorted tuples.
    incidence = _dense_boundaries(random_complex)
    flip = np.where(np.arange(incidence[0].shape[1]) % 2 == 0, 1.0, -1.0)
    incidence[0] = incidence[0] * flip
    if len(incidence) > 1:
        incidence[1] = incidence[1] * flip[:, None]
    data = SimplicialComplexData.from_incidence(incidence)
    keep = torch.arange(data.num_nodes) % 3 != 1
    sub = data.subgraph(keep)
    ids = torch.cumsum(keep, 0) - 1
    kept = [keep] + [keep[data[f'simplices_{k}']].all(1)
                     for k in range(1, data.order + 1)]
    for k, (full, mine) in enumerate(zip(_dense_boundaries(data),
                                         _dense_boundaries(sub)), start=1):
        rows = data[f'simplices_{k}']
        assert torch.equal(sub[f'simplices_{k}'], ids[rows[kept[k]]])
        np.testing.assert_array_equal(mine, full[kept[k - 1].numpy()][:, kept[k].numpy()])
    # The operators are the sub-complex's own: those of its boundaries.
    assert by_vertices(sub) == by_vertices(SimplicialComplexData.from_incidence(
        _dense_boundaries(sub), num_nodes=sub.num_nodes))
    assert sub.validate()


def test_subgraph_of_a_complex_without_laplacians_stays_without(random_tree):
    data = SimplicialComplexData.from_simplex_tree(random_tree, laplacians=False)
    keep = torch.arange(data.num_nodes) % 2 == 0
    sub = data.subgraph(keep)
    assert 'hodge_index_0' not in sub and 'spectrum_0' in sub
    full = SimplicialComplexData.from_simplex_tree(random_tree).subgraph(keep)
    for k in range(data.order + 1):
        assert torch.equal(sub[f'spectrum_{k}'], full[f'spectrum_{k}'])


def test_subgraph_of_an_attribute_of_ambiguous_length(cycle_with_pos):
    # A cycle has as many edges as vertices: pos could be either; attrs settles it.
    data = cycle_with_pos
    subset = torch.tensor([0, 1, 2, 3])
    with pytest.warns(UserWarning, match="subgraph copies 'pos' unchanged") as caught:
        assert torch.equal(data.subgraph(subset).pos, data.pos)
    assert [w.filename for w in caught] == [__file__]  # (the user's line)
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        assert torch.equal(data.subgraph(subset, attrs={'pos': 0}).pos,
                           data.pos[subset])


def test_largest_connected_components_of_a_lifted_complex(assert_data_equal):
    import torch_geometric.transforms as T
    graph, lift = _lifted_graph()
    data = lift(graph)
    assert_data_equal(T.LargestConnectedComponents()(data),
                      lift(T.LargestConnectedComponents()(graph)))


def test_pyg_transforms_leave_the_complex_alone():
    # B_1 has two entries per edge, as many as a lifted graph's edge_index has
    # columns; x_1 has as many rows as there are vertices here: PyG must not take
    # them for edge or node attributes.
    import torch_geometric.transforms as T
    from torch_geometric.data import Data
    from torch_geometric_san.transforms import LiftToCliqueComplex
    edge_index = torch.tensor([[0, 1, 1, 2, 0, 2, 2, 3, 3, 4],
                               [1, 0, 2, 1, 2, 0, 3, 2, 4, 3]])
    data = LiftToCliqueComplex(lift_x=True)(Data(x=torch.randn(5, 3),
                                                 edge_index=edge_index))
    assert data.num_simplices(1) == data.num_nodes
    assert data.boundary_index_1.size(1) == data.edge_index.size(1)
    own = [key for key in data.keys() if key.startswith(
        ('simplices', 'boundary', 'up', 'down', 'hodge', 'spectrum', 'x_1', 'x_2'))]
    for transform in (T.ToUndirected(), T.AddSelfLoops(), T.VirtualNode(),
                      T.Pad(max_num_nodes=8, max_num_edges=30), T.ToSparseTensor(),
                      T.RandomLinkSplit(num_val=0.2, num_test=0.2)):
        out = transform(data.clone())  # data stays the reference
        out = out[0] if isinstance(out, tuple) else out
        for key in own:
            assert torch.equal(out[key], data[key]), (transform, key)
        assert out.validate()
    assert data.is_node_attr('x_0') and not data.is_node_attr('x_1')
    assert not data.is_edge_attr('boundary_index_1')


def test_subgraph_edge_subgraph_and_concat_refusals(assert_rejected):
    graph, lift = _lifted_graph()
    data = lift(graph)
    assert_rejected(data.edge_subgraph, (torch.tensor([0]), ), {},
                    NotImplementedError, 'subgraph.*simplicial_subcomplex')
    assert_rejected(data.concat, (data, ), {}, NotImplementedError,
                    'Batch.from_data_list.*batch_complexes')
    batch = Batch.from_data_list([data, data])
    assert_rejected(batch.subgraph, (torch.tensor([0]), ), {}, TypeError,
                    'batch of complexes.*get_example')
    for subset, error, match in [(torch.tensor([0.5]), TypeError, 'mask or a 1-D'),
                                 (torch.tensor([8]), ValueError, r'outside \[0, 8\)'),
                                 (torch.tensor([1, 1]), ValueError, 'repeated'),
                                 (torch.ones(3, dtype=torch.bool), ValueError,
                                  'shape \\[8\\]'), ([0, 1], TypeError, 'tensor')]:
        assert_rejected(data.subgraph, (subset, ), {}, error, match)


def test_subgraph_refuses_a_sampled_sub_complex(assert_rejected):
    # It kept batch_size: after LargestConnectedComponents as the loader's transform,
    # the loss rows out[:batch_size] held simplices that were not seeds.
    from torch_geometric_san.loader import simplicial_subcomplex
    graph, lift = _lifted_graph()
    sample = simplicial_subcomplex(lift(graph), 1, torch.tensor([0, 3]))
    sample.batch_size = 2
    assert_rejected(sample.subgraph, (torch.tensor([0, 1]), ), {}, ValueError,
                    "subgraph got a sampled sub-complex \\(it has a 'batch_size'\\)")


def test_operators_are_kept_while_their_tensors_are_unchanged():
    # data.operators(k) at every step of a loop built the value anew, and its
    # derived forms (compressed rows, ...) were derived again at every step.
    data = SimplicialComplexData.from_simplices([[0, 1, 2], [1, 2, 3]], close=True)
    ops = data.operators(1)
    ops.up.structure()
    assert data.operators(1) is ops and data.operators(0) is not ops
    assert 'structure' in data.operators(1).up._cache
    # A replaced tensor, or one modified in place, gives a new value from it.
    data.up_weight_1 = data.up_weight_1 * 2
    doubled = data.operators(1)
    assert doubled is not ops and torch.equal(doubled.up.weight, 2 * ops.up.weight)
    data.up_weight_1.mul_(3)
    assert torch.equal(data.operators(1).up.weight, 6 * ops.up.weight)
    kept = data.operators(1)
    # Copies do not share the kept values, which are neither copied nor saved.
    shallow = copy.copy(data)
    shallow.up_weight_1 = torch.zeros_like(data.up_weight_1)
    assert shallow.operators(1).up.weight.abs().sum() == 0
    assert data.operators(1) is kept
    buffer = io.BytesIO()
    torch.save(data, buffer)
    assert b'_operators_cache' not in buffer.getvalue()
    buffer.seek(0)
    for other in (copy.deepcopy(data), torch.load(buffer)):
        assert '_operators_cache' not in other.__dict__
        assert torch.equal(other.operators(1).up.to_dense(), kept.up.to_dense())
    batch = Batch.from_data_list([data, data])
    assert batch.operators(2) is batch.operators(2)
    assert b'_operators_cache' not in pickle.dumps(batch)
    # Moving the complex (PyG's apply) drops the kept values at once, rather than
    # holding them and the tensors they were built from until the next call.
    data.to('cpu')
    assert '_operators_cache' not in data.__dict__
    assert torch.equal(data.operators(1).up.to_dense(), kept.up.to_dense())


def test_kept_operators_of_learnable_values_train_step_after_step():
    # A complex whose Laplacian values are learned: the kept value's forms of
    # those values were kept too, and the second step failed in autograd.
    from torch_geometric_san.nn import SCNNConv
    data = SimplicialComplexData.from_simplices([[0, 1, 2], [1, 2, 3]], close=True)
    data.up_weight_1 = torch.nn.Parameter(data.up_weight_1.clone())
    conv = SCNNConv(3, 4, J_up=2, J_down=2)
    x = torch.randn(data.num_simplices(1), 3)
    grads = []
    for _ in range(2):
        data.up_weight_1.grad = None
        conv(x, data.operators(1)).sum().backward()
        grads.append(data.up_weight_1.grad)
    assert torch.equal(grads[0], grads[1]) and grads[0].abs().sum() > 0


def test_values_made_learnable_in_place_get_their_gradient():
    # requires_grad_() changes no version counter: the value kept by a forward pass
    # before it (an evaluation before training), with its derived forms, was given
    # again, and the learned values got no gradient.
    from torch_geometric_san.nn import SANConv
    torch.manual_seed(0)
    conv = SANConv(2, 4, normalize=True, attention=None, J_harmonic=1).double()
    grads = []
    for warm in (False, True):
        data = SimplicialComplexData.from_simplices(
            [[0, 1, 2], [1, 2, 3], [2, 3, 4]], close=True, dtype=torch.float64)
        x = torch.randn(data.num_simplices(1), 2, dtype=torch.float64,
                        generator=torch.Generator().manual_seed(1))
        if warm:
            conv(x, data.operators(1))
        data.up_weight_1.requires_grad_()
        data.hodge_weight_1.requires_grad_()
        conv(x, data.operators(1)).sum().backward()
        grads.append((data.up_weight_1.grad, data.hodge_weight_1.grad))
    for cold, warm in zip(*grads):
        assert warm is not None and torch.equal(cold, warm) and cold.abs().sum() > 0


def test_kept_operators_hold_no_inference_tensors():
    # A value built in inference mode (an evaluation before training) is kept:
    # the tensors it makes of its own (empty operators, eigenvalues per row) must
    # not be inference tensors, which autograd refuses later.
    data = SimplicialComplexData.from_simplices([[0, 1, 2], [1, 2, 3]], close=True)
    with torch.inference_mode():
        ops = data.operators(0)
    assert data.operators(0) is ops
    tensors = [t for op in (ops.up, ops.down, ops.hodge, ops.boundary, ops.coboundary)
               for t in (op.index, op.weight, op.eigenvalue) if t is not None]
    assert tensors and not any(t.is_inference() for t in tensors)


def test_operators_of_inference_tensors_are_built_each_time():
    # Tensors made in inference mode have no version counter to watch (reading
    # it raised a RuntimeError), so their operators are not kept.
    with torch.inference_mode():
        data = SimplicialComplexData.from_simplices([[0, 1, 2]], close=True)
        ops = data.operators(1)
    assert data.operators(1) is not ops
    assert torch.equal(data.operators(1).up.to_dense(), ops.up.to_dense())


def test_feature_count_of_a_scalar_feature_is_an_error(annulus):
    # (it failed with an IndexError from torch)
    data = SimplicialComplexData.from_simplices(annulus, close=True)
    data.x_1 = torch.tensor(1.0)
    with pytest.raises(ValueError, match="'x_1' is a scalar, not one row per 1-simplex"):
        data.num_simplex_features(1)


def test_read_only_numpy_features_are_copied(tmp_path):
    # A tensor on a read-only memory map: an in-place change of x_0 crashed the
    # process (and on a bytes buffer changed an immutable object).
    np.save(tmp_path / 'x0.npy', np.ones((3, 2), dtype=np.float32))
    mapped = np.load(tmp_path / 'x0.npy', mmap_mode='r')
    frozen = np.frombuffer(bytes(np.arange(6, dtype=np.float32).tobytes()),
                           dtype=np.float32).reshape(3, 2)
    for array in (mapped, frozen):
        data = SimplicialComplexData.from_simplices([[0, 1], [1, 2]], x_0=array)
        assert not np.shares_memory(data.x_0.numpy(), array)
        before = array.copy()
        data.x_0.mul_(2)
        np.testing.assert_array_equal(array, before)
    writable = np.ones((3, 2), dtype=np.float32)  # as torch.from_numpy: shared
    data = SimplicialComplexData.from_simplices([[0, 1], [1, 2]], x_0=writable)
    assert np.shares_memory(data.x_0.numpy(), writable)
