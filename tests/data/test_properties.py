"""Property-based tests (hypothesis) of the algebra and of batching, on random small
complexes: each property is checked on a few dozen examples in a few seconds."""
import itertools

import gudhi
import numpy as np
import scipy.linalg
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from torch_geometric.data import Batch

from torch_geometric_san.data import SimplicialComplexData, batch_complexes

# Deterministic (the same examples on every run, no example database written), and
# `dense` is a plain function behind a fixture: no state to reset between examples.
SETTINGS = settings(max_examples=25, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])


@st.composite
def complexes(draw, max_nodes=7, max_order=3):
    r"""A random complex: up to ``max_nodes`` vertices and random simplices of up to
    ``max_order + 1`` vertices, closed under faces."""
    num_nodes = draw(st.integers(1, max_nodes))
    simplex = st.lists(st.integers(0, num_nodes - 1), min_size=1,
                       max_size=max_order + 1, unique=True).map(sorted)
    simplices = draw(st.lists(simplex, max_size=8, unique_by=tuple))
    return SimplicialComplexData.from_simplices(
        [s for s in simplices if len(s) > 1], close=True, num_nodes=num_nodes)


def operators(data, dense):
    r"""Per order k: the dense B_k (None for k = 0), L_k^(d), L_k^(u), L~_k."""
    n = [data.num_simplices(k) for k in range(data.order + 1)]
    return [dict(B=dense(*data.boundary(k), (n[k - 1], n[k])) if k else None,
                 down=dense(*data.down_laplacian(k), (n[k], n[k])),
                 up=dense(*data.up_laplacian(k), (n[k], n[k])),
                 hodge=dense(*data.hodge_laplacian(k), (n[k], n[k])))
            for k in range(data.order + 1)]


@SETTINGS
@given(complexes())
def test_boundary_of_a_boundary_is_zero(dense, data):
    ops = operators(data, dense)
    for k in range(1, data.order):
        assert not np.any(ops[k]['B'] @ ops[k + 1]['B'])


@SETTINGS
@given(complexes())
def test_laplacians_are_the_products_symmetric_and_psd(dense, data):
    ops = operators(data, dense)
    for k, op in enumerate(ops):
        if k > 0:
            np.testing.assert_array_equal(op['down'], op['B'].T @ op['B'])
        if k < data.order:
            np.testing.assert_array_equal(op['up'], ops[k + 1]['B'] @ ops[k + 1]['B'].T)
        for name in ('down', 'up', 'hodge'):
            np.testing.assert_allclose(op[name], op[name].T, atol=1e-6)
            if len(op[name]):
                assert np.linalg.eigvalsh(op[name]).min() >= -1e-5
        # the normalised Hodge Laplacian has largest eigenvalue 1 (or is zero)
        full = op['down'] + op['up']
        if full.any():
            np.testing.assert_allclose(np.linalg.eigvalsh(op['hodge']).max(), 1.0,
                                       rtol=1e-4)
        else:
            assert not op['hodge'].any()


@SETTINGS
@given(complexes())
def test_closed_under_faces(data):
    for k in range(2, data.order + 1):
        faces = {tuple(row) for row in data[f'simplices_{k - 1}'].tolist()}
        for simplex in data[f'simplices_{k}'].tolist():
            assert set(itertools.combinations(simplex, k)) <= faces


@SETTINGS
@given(complexes())
def test_constructors_agree(dense, assert_data_equal, data):
    # from_incidence(B_1..B_K) gives back the very complex...
    ops = operators(data, dense)
    again = SimplicialComplexData.from_incidence([op['B'] for op in ops[1:]],
                                                 num_nodes=data.num_nodes)
    assert_data_equal(again, data)
    # ...and from_simplex_tree the same one with the simplices in lexicographic order.
    tree = gudhi.SimplexTree()
    for v in range(data.num_nodes):
        tree.insert([v])
    for k in range(1, data.order + 1):
        for simplex in data[f'simplices_{k}'].tolist():
            tree.insert(simplex)
    lexicographic = SimplicialComplexData.from_simplices(
        [simplex for k in range(1, data.order + 1)
         for simplex in sorted(data[f'simplices_{k}'].tolist())],
        num_nodes=data.num_nodes, order=data.order)
    assert_data_equal(SimplicialComplexData.from_simplex_tree(
        tree, num_nodes=data.num_nodes, order=data.order), lexicographic)


def _blocks(matrices):
    return scipy.linalg.block_diag(*matrices) if matrices else np.zeros((0, 0))


@SETTINGS
@given(st.lists(complexes(max_nodes=5), min_size=1, max_size=4))
def test_a_batch_is_its_complexes_side_by_side(dense, data_list):
    # batch_complexes pads to the highest order, as the constructors' order= does
    batch = batch_complexes(data_list)
    order = max(data.order for data in data_list)
    alone = [SimplicialComplexData.from_simplices(
        [data[f'simplices_{k}'] for k in range(1, data.order + 1)
         if data.num_simplices(k)], num_nodes=data.num_nodes, order=order)
        for data in data_list]
    assert isinstance(batch, Batch) and batch.order == order
    assert batch.num_graphs == len(data_list)
    for k in range(order + 1):
        sizes = [data.num_simplices(k) for data in alone]
        assert batch.num_simplices(k) == sum(sizes)
        assert batch.simplex_batch(k).tolist() == [
            i for i, size in enumerate(sizes) for _ in range(size)]
        if k:
            np.testing.assert_array_equal(batch._slice_dict[f'simplices_{k}'],
                                          np.cumsum([0] + sizes))
        got, want = operators(batch, dense)[k], [operators(a, dense)[k] for a in alone]
        for name in ('B', 'down', 'up', 'hodge'):
            if k == 0 and name == 'B':
                continue
            np.testing.assert_array_equal(got[name], _blocks([w[name] for w in want]))
