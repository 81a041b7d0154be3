import warnings

import numpy as np
import pytest
import scipy.spatial
import torch
from torch_geometric.data import Batch, Data
from torch_geometric.loader import DataLoader
from torch_geometric.transforms import Compose
from torch_geometric.utils import erdos_renyi_graph

from torch_geometric_san.data import SimplicialComplexData
from torch_geometric_san.loader import SimplicialNeighborLoader
from torch_geometric_san.nn import SANConv
from torch_geometric_san.transforms import (LiftToCliqueComplex, ReorderSimplices,
                                            reorder_simplices)

OPERATORS = ('boundary', 'down', 'up', 'hodge')


def delaunay(num_points: int = 40, seed: int = 0) -> SimplicialComplexData:
    rng = np.random.default_rng(seed)
    points = rng.random((num_points, 2))
    triangles = np.sort(scipy.spatial.Delaunay(points).simplices, axis=1)
    data = SimplicialComplexData.from_simplices(triangles, close=True,
                                                dtype=torch.float64)
    data.x_1 = torch.from_numpy(rng.standard_normal((data.num_simplices(1), 3)))
    data.x_2 = torch.from_numpy(rng.standard_normal((data.num_simplices(2), 2)))
    data.edge_mask = torch.from_numpy(rng.random(data.num_simplices(1)) < 0.5)
    data.pos = torch.from_numpy(points)
    data.y = torch.tensor([1])
    return data


def clique(seed: int = 0) -> SimplicialComplexData:
    torch.manual_seed(seed)
    graph = Data(edge_index=erdos_renyi_graph(12, 0.6), num_nodes=12)
    return LiftToCliqueComplex(max_order=3, dtype=torch.float64)(graph)


def dense(index, weight, rows, cols):
    return torch.sparse_coo_tensor(index.flip(0), weight, (rows, cols)).to_dense()


def permutation_matrix(perm):
    return torch.eye(perm.numel(), dtype=torch.float64)[perm]


def snapshot(data):
    return {key: value.clone() if torch.is_tensor(value) else value
            for key, value in data.items()}


@pytest.mark.parametrize('make', [delaunay, clique])
def test_operators_are_permuted(make):
    data = make()
    out, perms = reorder_simplices(data)
    assert torch.equal(perms[0], torch.arange(data.num_nodes))
    P = [permutation_matrix(p) for p in perms]
    for k in range(data.order + 1):
        n = data.num_simplices(k)
        assert sorted(perms[k].tolist()) == list(range(n))
        if k >= 1:
            assert torch.equal(out[f'simplices_{k}'], data[f'simplices_{k}'][perms[k]])
        for name in OPERATORS:
            if name == 'boundary' and k == 0:
                continue
            # [target, source]: B_k^T for the boundary (faces to simplices).
            sources = data.num_simplices(k - 1) if name == 'boundary' else n
            before = dense(*getattr(data, name if name == 'boundary' else
                                    f'{name}_laplacian')(k), n, sources)
            after_index, after_weight = getattr(
                out, name if name == 'boundary' else f'{name}_laplacian')(k)
            right = P[k - 1] if name == 'boundary' else P[k]
            torch.testing.assert_close(dense(after_index, after_weight, n, sources),
                                       P[k] @ before @ right.T, rtol=0, atol=0)
            # Stored sorted by target, then source, as the constructors store it.
            key = after_index[1] * sources + after_index[0]
            assert bool((key[1:] > key[:-1]).all())


@pytest.mark.parametrize('make', [delaunay, clique])
def test_same_complex_as_built_from_the_reordered_simplices(make):
    data = make()
    out = ReorderSimplices()(data)
    rebuilt = SimplicialComplexData.from_simplices(
        [out[f'simplices_{k}'] for k in range(1, data.order + 1)],
        num_nodes=data.num_nodes, dtype=torch.float64)
    for k in range(data.order + 1):
        for name in OPERATORS[1:]:
            index, weight = getattr(out, f'{name}_laplacian')(k)
            index_r, weight_r = getattr(rebuilt, f'{name}_laplacian')(k)
            assert torch.equal(index, index_r)
            torch.testing.assert_close(weight, weight_r)
        if k >= 1:
            assert torch.equal(out.boundary(k)[0], rebuilt.boundary(k)[0])
            assert torch.equal(out.boundary(k)[1], rebuilt.boundary(k)[1])


def test_complex_without_laplacians_is_reordered():
    # (a large complex for the neighbour loader is built without its Laplacians)
    data = delaunay()
    light = SimplicialComplexData.from_simplices(
        [data[f'simplices_{k}'] for k in (1, 2)], num_nodes=data.num_nodes,
        dtype=torch.float64, laplacians=False, x_1=data.x_1)
    out, full = ReorderSimplices()(light), ReorderSimplices()(data)
    assert 'hodge_index_0' not in out
    for k in (1, 2):
        assert torch.equal(out[f'simplices_{k}'], full[f'simplices_{k}'])
        assert all(torch.equal(a, b) for a, b in zip(out.boundary(k), full.boundary(k)))
    assert torch.equal(out.x_1, full.x_1)


def test_features_and_attributes_move_with_their_simplices():
    data = delaunay()
    before = snapshot(data)
    out, perms = reorder_simplices(data, attrs={'edge_mask': 1})
    assert torch.equal(out.x_1, data.x_1[perms[1]])
    assert torch.equal(out.x_2, data.x_2[perms[2]])
    assert torch.equal(out.edge_mask, data.edge_mask[perms[1]])
    assert torch.equal(out.pos, data.pos) and torch.equal(out.y, data.y)
    assert out.num_nodes == data.num_nodes
    # The input is not modified.
    after = snapshot(data)
    assert sorted(after) == sorted(before)
    for key, value in before.items():
        assert torch.equal(after[key], value) if torch.is_tensor(value) else \
            after[key] == value
    # Without attrs, an attribute of N_1 rows (and of no other order's length)
    # moves too, as PyG's transforms move node attributes by their size.
    assert torch.equal(ReorderSimplices()(data).edge_mask, out.edge_mask)


def test_sparse_attributes_move_with_their_simplices_or_are_refused_by_name():
    # A sparse attribute with one row per simplex failed inside torch's indexing.
    data = delaunay()
    n = data.num_simplices(1)
    dense = torch.randn(n, 3) * (torch.rand(n, 3) < 0.3)
    data.edge_attr = dense.to_sparse()
    out, perms = reorder_simplices(data)
    assert out.edge_attr.layout == torch.sparse_coo
    assert torch.equal(out.edge_attr.to_dense(), dense[perms[1]])
    data.edge_attr = dense.to_sparse_csr()
    with pytest.raises(ValueError, match="'edge_attr' .* torch.sparse_csr .*to_sparse_coo"):
        reorder_simplices(data)


def test_labels_and_masks_of_the_citation_dataset_move_with_their_simplices():
    # The dataset's items hold y, train_mask and test_mask per k-simplex: before,
    # only x_k moved unless attrs named them, so training read other simplices'
    # labels.
    data = delaunay()
    n = data.num_simplices(2)
    data.y = torch.arange(n, dtype=torch.float64).view(-1, 1)
    data.train_mask = torch.arange(n) % 3 > 0
    data.test_mask = ~data.train_mask
    data.x_2 = torch.where(data.train_mask.view(-1, 1), data.y, -1.0)
    out, perms = reorder_simplices(data)
    assert not torch.equal(perms[2], torch.arange(n))
    for key in ('y', 'train_mask', 'test_mask', 'x_2'):
        assert torch.equal(out[key], data[key][perms[2]])
    assert torch.equal(out.x_2[out.train_mask], out.y[out.train_mask])


def test_an_attribute_of_an_ambiguous_length_is_copied_with_a_warning(cycle_with_pos):
    # A cycle has as many edges as vertices: pos could be either; attrs settles it.
    data = cycle_with_pos
    with pytest.warns(UserWarning, match=r"copies 'pos' unchanged: its 7 rows "
                                         r"match N_0 and N_1; .*attrs=\{'pos': 1\}") \
            as caught:
        out, perms = reorder_simplices(data)
    assert [w.filename for w in caught] == [__file__]  # (the user's line)
    assert torch.equal(out.pos, data.pos)
    assert not torch.equal(perms[1], torch.arange(7))
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        assert torch.equal(ReorderSimplices({'pos': 0})(data).pos, data.pos)
        assert torch.equal(ReorderSimplices({'pos': 1})(data).pos, data.pos[perms[1]])
    # The columns of a kept graph edge_index count too; a key naming edges
    # belongs to them, as PyG tells edge attributes (so it is copied, silently).
    graph = Data(edge_index=data.simplices_1.t(), num_nodes=7,
                 edge_weight=torch.rand(7), weight=torch.rand(7))
    lifted = LiftToCliqueComplex(max_order=1)(graph)
    with pytest.warns(UserWarning, match="'weight' unchanged.*N_0 and N_1 and "
                                         "edge_index's columns") as record:
        out = ReorderSimplices()(lifted)
    assert len(record) == 1
    # at the user's line, also through PyG's BaseTransform.__call__ and Compose
    # (it named PyG's base_transform.py)
    assert record[0].filename == __file__
    with pytest.warns(UserWarning, match="'weight' unchanged") as record:
        Compose([ReorderSimplices()])(lifted)
    assert [w.filename for w in record] == [__file__]
    assert torch.equal(out.edge_weight, graph.edge_weight)
    assert torch.equal(out.weight, graph.weight)


def test_hodge_index_keeps_sharing_the_up_or_down_index():
    data = delaunay()
    assert data.hodge_index_0 is data.up_index_0
    assert data.hodge_index_2 is data.down_index_2
    out = ReorderSimplices()(data)
    assert out.hodge_index_0 is out.up_index_0
    assert out.hodge_index_2 is out.down_index_2


@pytest.mark.parametrize('harmonic', [None, 0, 3])
def test_san_conv_outputs_are_permuted(harmonic):
    data = delaunay(60, seed=1)
    out, perms = reorder_simplices(data)
    torch.manual_seed(0)
    conv = SANConv(3, 4, J_up=2, J_down=2, J_harmonic=harmonic, heads=2).double()

    def run(complex):
        ops = [t for name in ('up', 'down', 'hodge')
               for t in getattr(complex, f'{name}_laplacian')(1)]
        return conv(complex.x_1, *ops, return_attention_weights=True)

    (y, (up, down)), (y_new, (up_new, down_new)) = run(data), run(out)
    torch.testing.assert_close(y_new, y[perms[1]])
    # The attention coefficients are those of the renumbered pairs.
    inverse = torch.empty_like(perms[1])
    inverse[perms[1]] = torch.arange(perms[1].numel())
    for (index, alpha), (index_new, alpha_new) in ((up, up_new), (down, down_new)):
        n = data.num_simplices(1)
        old = dense(inverse[index], alpha[:, 0], n, n)
        torch.testing.assert_close(dense(index_new, alpha_new[:, 0], n, n), old)


def test_locality_shrinks_the_spread_of_the_laplacian():
    # Random points: edges numbered lexicographically by random vertex ids, so
    # neighbours lie O(N) rows apart; along the locality order O(sqrt(N)).
    data = delaunay(2000, seed=2)
    out = ReorderSimplices()(data)

    def spread(index):
        return (index[0] - index[1]).abs().double().mean()

    assert spread(out.hodge_index_1) < spread(data.hodge_index_1) / 4


def test_reordered_complexes_batch():
    items = [ReorderSimplices()(delaunay(20 + i, seed=i)) for i in range(3)]
    batch = next(iter(DataLoader(items, batch_size=3)))
    for k in range(3):
        assert batch.num_simplices(k) == sum(item.num_simplices(k) for item in items)
    with pytest.raises(TypeError, match='before batching'):
        ReorderSimplices()(batch)


def test_complex_without_edges_is_copied():
    data = SimplicialComplexData.from_simplices([[0], [1], [2]], x_0=torch.ones(3, 1))
    out, perms = reorder_simplices(data)
    assert out is not data and torch.equal(out.x_0, data.x_0)
    assert torch.equal(perms[0], torch.arange(3))
    padded = SimplicialComplexData.from_simplices([[0, 1, 2]], close=True, order=3)
    out = ReorderSimplices()(padded)
    assert out.num_simplices(3) == 0 and out.num_simplices(2) == 1


def test_bad_input():
    data = delaunay()
    with pytest.raises(TypeError, match='SimplicialComplexData'):
        ReorderSimplices()(Data(num_nodes=3))
    with pytest.raises(TypeError, match='attrs must be a dict'):
        ReorderSimplices(attrs=['edge_mask'])
    with pytest.raises(ValueError, match=r"'pos' \(0: the vertices\) must be at least 0"):
        ReorderSimplices(attrs={'pos': -1})
    with pytest.raises(ValueError, match="'edge_mask' must be a tensor with N_2"):
        ReorderSimplices(attrs={'edge_mask': 2})(data)
    with pytest.raises(ValueError, match="'missing' must be a tensor"):
        ReorderSimplices(attrs={'missing': 1})(data)
    with pytest.raises(ValueError, match='of order 3 but the complex has order 2'):
        ReorderSimplices(attrs={'edge_mask': 3})(data)
    assert not isinstance(data, Batch)
    assert repr(ReorderSimplices()) == 'ReorderSimplices()'
    assert repr(ReorderSimplices(attrs={'edge_mask': 2})) == \
        "ReorderSimplices(attrs={'edge_mask': 2})"


@pytest.mark.parametrize('attrs, error, pattern', [
    ({'edge_mask': True}, TypeError, r"'edge_mask' .* must be an int, not bool"),
    ({'edge_mask': 1.0}, TypeError, r"'edge_mask' .* must be an int, not float"),
    ({3: 1}, TypeError, "attrs keys must be attribute names, got 3"),
])
def test_bad_attrs(attrs, error, pattern, assert_rejected):
    assert_rejected(ReorderSimplices, (), dict(attrs=attrs), error, pattern)


def test_refuses_a_batch():
    data = delaunay()
    batch = Batch.from_data_list([data, data])
    with pytest.raises(TypeError, match="apply it to each complex before batching"):
        ReorderSimplices()(batch)


def test_refuses_a_sampled_sub_complex():
    # as the loader's transform it moved the seeds out of the first batch_size rows,
    # where the loss is taken
    data = delaunay()
    loader = SimplicialNeighborLoader(data, num_neighbors=[-1], order=1, batch_size=4,
                                      transform=ReorderSimplices())
    with pytest.raises(ValueError, match="got a sampled sub-complex .* reorder the "
                                         "whole complex before SimplicialNeighborLoader"):
        next(iter(loader))


@pytest.mark.parametrize('key, row, value, pattern', [
    # a negative id indexed from the end: a wrong, valid-looking complex
    ('boundary_index_2', 0, -1, r"row 0 of 'boundary_index_2' holds ids outside "
                                r"\[0, \d+\) \(found -1 to"),
    ('up_index_1', 0, -1, r"row 0 of 'up_index_1' holds ids outside"),
    ('hodge_index_2', 1, -1, r"row 1 of 'hodge_index_2' holds ids outside"),
    # these crashed inside torch and SciPy
    ('boundary_index_2', 0, 10**6, r"row 0 of 'boundary_index_2' holds ids outside"),
    ('simplices_1', 1, -1, r"'simplices_1' holds ids outside \[0, 40\)"),
    ('simplices_1', 1, 40, r"'simplices_1' holds ids outside \[0, 40\)"),
])
def test_ids_out_of_range_are_refused(key, row, value, pattern):
    data = delaunay()
    data[key] = data[key].clone()
    data[key][(0, row) if key.startswith('simplices') else (row, 0)] = value
    with pytest.raises(ValueError, match=pattern):
        ReorderSimplices()(data)


def test_a_missing_boundary_is_named():
    data = delaunay()
    del data.boundary_index_2
    with pytest.raises(ValueError, match="needs 'boundary_index_2' and "
                                         "'boundary_weight_2' of the 2-simplices"):
        ReorderSimplices()(data)
