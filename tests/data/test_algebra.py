import itertools

import gudhi
import numpy as np
import pytest
import scipy.sparse as sp
import torch
from threadpoolctl import threadpool_info

import torch_geometric_san.sparse.operator as operator_module
from torch_geometric_san.data import SimplicialComplexData, algebra


def test_row_keys_preserve_equality_and_lexicographic_order():
    rng = np.random.default_rng(0)
    rows = rng.integers(0, 4, size=(500, 3))
    keys = algebra.row_keys(rows, base=4)
    order = np.lexsort(rows.T[::-1])
    assert (np.diff(keys[order]) >= 0).all()
    same_rows = (rows[order][1:] == rows[order][:-1]).all(1)
    assert np.array_equal(np.diff(keys[order]) == 0, same_rows)


def test_row_keys_compress_instead_of_overflowing():
    rng = np.random.default_rng(1)
    base = 10**6
    rows = np.sort(rng.integers(0, base, size=(300, 6)), axis=1)
    rows[1::2] = rows[::2]  # half the rows repeated
    keys = algebra.row_keys(rows, base)  # base**6 does not fit into int64
    order = np.lexsort(rows.T[::-1])
    assert (np.diff(keys[order]) >= 0).all()
    same_rows = (rows[order][1:] == rows[order][:-1]).all(1)
    assert np.array_equal(np.diff(keys[order]) == 0, same_rows)


def test_group_by_length_keeps_order():
    flat = np.array([0, 1, 5, 0, 1, 2, 3, 4, 7, 8])
    lengths = np.array([2, 1, 3, 2, 2])
    groups = algebra.group_by_length(flat, lengths)
    assert sorted(groups) == [1, 2, 3]
    assert groups[2].tolist() == [[0, 1], [3, 4], [7, 8]]
    assert groups[1].tolist() == [[5]]
    assert groups[3].tolist() == [[0, 1, 2]]


def test_boundary_matrix_matches_definition(random_tree):
    data = SimplicialComplexData.from_simplex_tree(random_tree)
    for k in range(1, data.order + 1):
        simplices = data[f'simplices_{k}'].numpy()
        table = (np.arange(data.num_nodes)[:, None] if k == 1 else
                 data[f'simplices_{k - 1}'].numpy())
        lookup = {tuple(row): i for i, row in enumerate(table)}
        expected = np.zeros((len(table), len(simplices)))
        for j, simplex in enumerate(simplices):  # the definition, one entry at a time
            for i in range(k + 1):
                expected[lookup[tuple(np.delete(simplex, i))], j] = (-1)**i
        B = algebra.boundary_matrix(simplices, table)
        assert np.array_equal(B.toarray(), expected)


def test_close_under_faces_appends_missing_faces_in_order():
    simplices = [np.arange(5)[:, None], np.array([[3, 4], [0, 2]]),
                 np.array([[0, 1, 2], [1, 2, 3]])]
    closed = algebra.close_under_faces(simplices)
    assert closed[1].tolist() == [[3, 4], [0, 2], [0, 1], [1, 2], [1, 3], [2, 3]]
    assert closed[2].tolist() == [[0, 1, 2], [1, 2, 3]]
    assert simplices[1].tolist() == [[3, 4], [0, 2]]  # input untouched


@pytest.mark.parametrize('n', [5, 200, 800])
def test_largest_eigenvalue(n):
    # Dense below DENSE_EIGEN_LIMIT, Lanczos above: both against LAPACK.
    rng = np.random.default_rng(n)
    kept = rng.random((n, 2 * n)) < min(1.0, 6 / n)
    B = sp.csr_array(np.where(kept, rng.random((n, 2 * n)), 0.0))
    M = (B @ B.T).tocsr()
    expected = np.linalg.eigvalsh(M.toarray())[-1]
    assert algebra.largest_eigenvalue(M) == pytest.approx(expected, rel=1e-6)


@pytest.mark.parametrize('matrix, error, match', [
    # A dense array, a rectangle and a NaN failed inside SciPy or NumPy.
    (np.eye(3), TypeError, "expected a SciPy sparse matrix, got ndarray"),
    (sp.csr_array(np.ones((2, 3))), ValueError, r"square matrix, got shape \(2, 3\)"),
    (sp.csr_array(np.diag([1.0, np.nan])), ValueError, "NaN or infinite"),
])
def test_largest_eigenvalue_refuses_what_it_cannot_solve(matrix, error, match):
    with pytest.raises(error, match=match):
        algebra.largest_eigenvalue(matrix)


@pytest.mark.parametrize('fmt', [sp.lil_array, sp.dok_array, sp.lil_matrix,
                                 sp.dok_matrix])
@pytest.mark.parametrize('n', [3, 600])
def test_largest_eigenvalue_of_every_sparse_format(fmt, n):
    # LIL and DOK have no array of entries (failed in NumPy or with AttributeError)
    path = sp.diags_array([np.full(n - 1, -1.0), np.full(n, 2.0), np.full(n - 1, -1.0)],
                          offsets=[-1, 0, 1]).tocsr()
    assert algebra.largest_eigenvalue(fmt(path)) == pytest.approx(
        algebra.largest_eigenvalue(path), rel=1e-12)


@pytest.mark.parametrize('n', [80, 600])  # the dense and the Lanczos solver
def test_largest_eigenvalue_runs_on_one_blas_thread(n, monkeypatch):
    # BLAS threads stall when the other cores are busy: both solvers run on one
    threads = []

    def spy(solver):
        def call(*args, **kwargs):
            threads.append(max(pool['num_threads'] for pool in threadpool_info()
                               if pool['user_api'] == 'blas'))
            return solver(*args, **kwargs)
        return call

    monkeypatch.setattr(np.linalg, 'eigvalsh', spy(np.linalg.eigvalsh))
    monkeypatch.setattr(operator_module, 'eigh_tridiagonal',
                        spy(operator_module.eigh_tridiagonal))
    diagonal = np.arange(1.0, n + 1)
    diagonal[-1] = 2 * n  # a clear gap for Lanczos
    M = sp.diags_array(diagonal).tocsr()
    assert algebra.largest_eigenvalue(M) == pytest.approx(2 * n, rel=1e-6)
    assert threads and set(threads) == {1}


def mesh_gram(points: int, seed: int = 0) -> sp.csr_array:
    # B_2^T B_2 of a Delaunay triangulation: the top of its spectrum is clustered,
    # the case where a restarted Lanczos needs many products.
    from scipy.spatial import Delaunay
    xy = np.random.default_rng(seed).random((points, 2))
    triangles = np.sort(Delaunay(xy).simplices, axis=1)
    edges = algebra.close_under_faces([np.arange(points)[:, None],
                                       np.zeros((0, 2), np.int64), triangles])[1]
    B2 = algebra.boundary_matrix(triangles, edges)
    return (B2.T @ B2).tocsr()


@pytest.mark.parametrize('dtype, rel', [(torch.float32, 1e-6), (torch.float64, 1e-13)])
def test_largest_eigenvalue_of_clustered_spectrum(dtype, rel):
    M = mesh_gram(700)
    assert M.shape[0] > algebra.DENSE_EIGEN_LIMIT
    expected = np.linalg.eigvalsh(M.toarray().astype(np.float64))[-1]
    assert algebra.largest_eigenvalue(M, dtype) == pytest.approx(expected, rel=rel)


@pytest.mark.parametrize('dtype', [np.int64, np.int32])
def test_largest_eigenvalue_of_other_dtypes_in_double_precision(dtype):
    # Integer entries: the products run in float64, not in the matrix's own type,
    # which would truncate the Lanczos vectors.
    M = mesh_gram(700).astype(dtype)
    expected = np.linalg.eigvalsh(M.toarray().astype(np.float64))[-1]
    assert algebra.largest_eigenvalue(M) == pytest.approx(expected, rel=1e-6)


@pytest.mark.parametrize('fmt', ['csr', 'coo'])
def test_largest_eigenvalue_of_a_hub_within_the_tolerance(fmt):
    # The up Laplacian of a star's vertices: the hub's row sums 16,000 float32
    # terms, whose rounding gave 16000.44 for 16001 in single-precision products.
    n = 16000
    rows = np.concatenate([np.zeros(n, np.int64), np.arange(1, n + 1)])
    B = sp.csr_array((np.r_[-np.ones(n), np.ones(n)].astype(np.float32),
                      (rows, np.r_[np.arange(n), np.arange(n)])), shape=(n + 1, n))
    M = (B @ B.T).asformat(fmt)
    assert M.dtype == np.float32
    assert algebra.largest_eigenvalue(M, torch.float32) == pytest.approx(n + 1.0,
                                                                         rel=1e-6)


def test_largest_eigenvalue_of_invariant_start():
    # A multiple of the identity: the first step spans an invariant subspace.
    M = sp.diags_array(np.full(600, 3.0, dtype=np.float32)).tocsr()
    assert algebra.largest_eigenvalue(M) == pytest.approx(3.0, rel=1e-6)


def test_lanczos_without_convergence_raises():
    M = sp.diags_array(np.linspace(1.0, 2.0, 600)).tocsr()
    with pytest.raises(RuntimeError, match="did not reach the relative tolerance 0"):
        operator_module._lanczos_largest(M, tol=0.0)


def test_largest_eigenvalue_of_zero_matrix():
    assert algebra.largest_eigenvalue(sp.csr_array((4, 4))) == 0.0


def test_incidence_to_simplices_rejects_columns_spanning_too_many_vertices():
    # Three edges of a path (0-1, 1-2, 2-3) as if they bounded a triangle.
    B1 = sp.csc_array(np.array([[-1, 0, 0], [1, -1, 0], [0, 1, -1], [0, 0, 1]],
                               dtype=np.float32))
    B2 = sp.csc_array(np.ones((3, 1), dtype=np.float32))
    with pytest.raises(ValueError, match="span 4 vertices, not 3"):
        algebra.incidence_to_simplices([B1, B2])


# Algebraic invariants on random and known complexes ----------------------------------


def test_boundary_of_boundary_is_zero(random_complex, dense):
    data = random_complex
    sizes = [data.num_simplices(k) for k in range(data.order + 1)]
    assert data.order >= 2
    for k in range(1, data.order):
        B = dense(*data.boundary(k), (sizes[k - 1], sizes[k]))
        B_next = dense(*data.boundary(k + 1), (sizes[k], sizes[k + 1]))
        assert np.abs(B_next).sum() > 0
        assert not (B @ B_next).any()


def test_laplacians_equal_dense_products(random_complex, dense):
    data = random_complex
    K = data.order
    sizes = [data.num_simplices(k) for k in range(K + 1)]
    B = [None] + [dense(*data.boundary(k), (sizes[k - 1], sizes[k]))
                  for k in range(1, K + 1)]
    for k in range(K + 1):
        shape = (sizes[k], sizes[k])
        down = B[k].T @ B[k] if k > 0 else np.zeros(shape)
        up = B[k + 1] @ B[k + 1].T if k < K else np.zeros(shape)
        assert np.array_equal(dense(*data.down_laplacian(k), shape), down)
        assert np.array_equal(dense(*data.up_laplacian(k), shape), up)
        hodge = dense(*data.hodge_laplacian(k), shape)
        lam = np.linalg.eigvalsh(down + up)[-1]
        np.testing.assert_allclose(hodge, (down + up) / lam, rtol=1e-5, atol=1e-6)
        # Laplacian indices hold the diagonal and no stored zeros.
        for index, weight in (data.down_laplacian(k), data.up_laplacian(k),
                              data.hodge_laplacian(k)):
            assert (weight != 0).all()
            assert len(set(map(tuple, index.t().tolist()))) == index.size(1)


@pytest.mark.parametrize('seed', [0, 1])
def test_normalised_hodge_laplacian_has_largest_eigenvalue_one(seed, dense):
    # Large enough for the Lanczos path (more than DENSE_EIGEN_LIMIT simplices).
    rng = np.random.default_rng(seed)
    points = rng.random((200, 2))
    tree = gudhi.RipsComplex(points=points, max_edge_length=0.1).create_simplex_tree(2)
    data = SimplicialComplexData.from_simplex_tree(tree)
    assert data.num_simplices(1) > algebra.DENSE_EIGEN_LIMIT
    for k in range(data.order + 1):
        n = data.num_simplices(k)
        eigenvalues = np.linalg.eigvalsh(dense(*data.hodge_laplacian(k), (n, n)))
        assert eigenvalues[-1] == pytest.approx(1.0, abs=1e-5)


def test_normalised_hodge_laplacian_small(random_complex, dense):
    for k in range(random_complex.order + 1):
        n = random_complex.num_simplices(k)
        index, weight = random_complex.hodge_laplacian(k)
        if index.size(1):
            assert np.linalg.eigvalsh(dense(index, weight, (n, n)))[-1] == \
                pytest.approx(1.0, abs=1e-6)


def _betti_from_laplacians(data, dense):
    out = []
    for k in range(data.order + 1):
        n = data.num_simplices(k)
        eigenvalues = np.linalg.eigvalsh(dense(*data.hodge_laplacian(k), (n, n)))
        out.append(int((np.abs(eigenvalues) < 1e-6).sum()))
    return out


def _gudhi_betti(tree, order):
    tree = tree.copy()
    tree.compute_persistence(persistence_dim_max=True)
    betti = tree.betti_numbers()
    return (betti + [0] * (order + 1))[:order + 1]


def test_kernel_dimension_is_betti_number_annulus(annulus, dense):
    data = SimplicialComplexData.from_simplices(annulus, close=True)
    assert _betti_from_laplacians(data, dense) == [1, 1, 0]


def test_kernel_dimension_is_betti_number_hollow_tetrahedron(hollow_tetrahedron, dense):
    data = SimplicialComplexData.from_simplices(hollow_tetrahedron, close=True)
    assert _betti_from_laplacians(data, dense) == [1, 0, 1]


def test_kernel_dimension_is_betti_number_gudhi(random_tree, dense):
    data = SimplicialComplexData.from_simplex_tree(random_tree)
    assert _betti_from_laplacians(data, dense) == _gudhi_betti(random_tree, data.order)


def test_kernel_dimension_is_betti_number_with_several_holes(dense):
    # A 6 x 6 grid of squares (two triangles each) with two squares removed: b_1 = 2.
    tri = []
    for i, j in itertools.product(range(6), range(6)):
        if (i, j) in {(1, 1), (4, 3)}:
            continue
        a, b, c, d = 7 * i + j, 7 * i + j + 1, 7 * (i + 1) + j, 7 * (i + 1) + j + 1
        tri += [[a, b, d], [a, c, d]]
    tree = gudhi.SimplexTree()
    for t in tri:
        tree.insert(t)
    data = SimplicialComplexData.from_simplices(tri, close=True)
    assert _betti_from_laplacians(data, dense) == [1, 2, 0] == _gudhi_betti(tree, 2)


def test_zero_laplacian_gives_zero_normalised_laplacian():
    # Isolated vertices only, and a complex whose top order is empty.
    data = SimplicialComplexData.from_simplices([], num_nodes=4, order=1)
    for k in range(2):
        index, weight = data.hodge_laplacian(k)
        assert index.shape == (2, 0) and weight.shape == (0, )
    index, weight = data.up_laplacian(0)
    assert index.shape == (2, 0)


def _random_tree(rng: np.random.Generator) -> gudhi.SimplexTree:
    # A clique complex of a random graph up to a random dimension, with isolated
    # vertices, a vertex id above the others and random filtration values.
    n = int(rng.integers(1, 16))
    pairs = np.array(list(itertools.combinations(range(n), 2)),
                     dtype=np.int64).reshape(-1, 2)
    edges = pairs[rng.random(len(pairs)) < rng.random()]
    tree = gudhi.SimplexTree()
    for vertex in rng.choice(40, int(rng.integers(0, 3)), replace=False):
        tree.insert([int(vertex) + 20], float(rng.random()))
    tree.insert_batch(edges.T.copy(), rng.random(len(edges)))
    tree.expansion(int(rng.integers(1, 5)))
    return tree


#: The serialisation _decode_serialised reads is GUDHI's from 3.13 on; with an older
#: GUDHI the package reads trees with its iterator (tested throughout).
requires_decodable_gudhi = pytest.mark.skipif(
    gudhi.SimplexTree().__getstate__()[:6].tobytes() != algebra._HEADER,
    reason=f"GUDHI {gudhi.__version__} serialises simplex trees in another format than "
           f"3.13's (the package reads them with its iterator instead)")


@requires_decodable_gudhi
@pytest.mark.parametrize('seed', range(40))
def test_simplex_tree_to_arrays_decodes_gudhis_serialisation(seed):
    # The decoded serialisation gives what GUDHI's iterator gives, at every order
    # (above and below the tree's dimension), and leaves the tree alone by default.
    rng = np.random.default_rng(seed)
    tree = _random_tree(rng)
    before = list(tree.get_simplices())
    for order in range(6):
        expected = algebra._iterate(tree, order)
        state = tree.copy()
        state.reset_filtration(algebra._MARK, 0)
        decoded = algebra._decode_serialised(state.__getstate__(), order)
        assert decoded is not None
        for got in (decoded, algebra.simplex_tree_to_arrays(tree, order)):
            assert len(got) == len(expected)
            for rows, want in zip(got, expected):
                assert rows.dtype == np.int64 and np.array_equal(rows, want)
    assert list(tree.get_simplices()) == before


def test_simplex_tree_to_arrays_empty_and_consumed_trees():
    assert algebra.simplex_tree_to_arrays(gudhi.SimplexTree(), 2) == []
    tree = gudhi.SimplexTree()
    tree.insert([0, 1, 2], 0.5)
    arrays = algebra.simplex_tree_to_arrays(tree, 2, copy=False)
    assert [a.tolist() for a in arrays] == [[[0], [1], [2]], [[0, 1], [0, 2], [1, 2]],
                                            [[0, 1, 2]]]
    assert {f for _, f in tree.get_simplices()} == {algebra._MARK}  # overwritten


def test_simplex_tree_to_arrays_falls_back_to_the_iterator(monkeypatch):
    # A serialisation in another format (e.g. of another GUDHI version) is not
    # decoded; the iterator reads the tree instead.
    tree = _random_tree(np.random.default_rng(1))
    expected = algebra._iterate(tree, 3)
    state = tree.copy()
    state.reset_filtration(algebra._MARK, 0)
    state = state.__getstate__()
    monkeypatch.setattr(algebra, '_HEADER', bytes([2, 0, 1, 0, 0, 0]))
    assert algebra._decode_serialised(state, 3) is None
    got = algebra.simplex_tree_to_arrays(tree, 3)
    assert all(np.array_equal(a, b) for a, b in zip(got, expected))
    assert len(got) == len(expected)


@requires_decodable_gudhi
def test_decode_refuses_inconsistent_serialisations():
    tree = gudhi.SimplexTree()
    tree.insert([0, 1, 2], algebra._MARK)
    state = tree.__getstate__()
    assert algebra._decode_serialised(state, 2) is not None
    for bad in (state[:-4], np.concatenate([state, state[-4:]])):  # a size lost, added
        assert algebra._decode_serialised(bad, 2) is None
    wrong_size = state.copy()
    wrong_size[6] = 5  # the root claims 5 vertices
    assert algebra._decode_serialised(wrong_size, 2) is None
    unmarked = gudhi.SimplexTree()
    unmarked.insert([0, 1, 2], 0.0)  # filtration values not reset to the marker
    assert algebra._decode_serialised(unmarked.__getstate__(), 2) is None


def test_boundary_eigenvalues_are_those_of_the_laplacians(random_tree):
    data = SimplicialComplexData.from_simplex_tree(random_tree)
    boundaries = [sp.csc_array((data.boundary(k)[1].numpy(),
                                data.boundary(k)[0].numpy()),
                               shape=(data.num_simplices(k - 1), data.num_simplices(k)))
                  for k in range(1, data.order + 1)]
    values = algebra.boundary_eigenvalues(boundaries)
    assert len(values) == data.order
    for k, value in enumerate(values, start=1):  # spectrum_k = (s_k, s_{k+1})
        value = torch.tensor(value, dtype=torch.float32)  # as the spectra are stored
        assert value == data[f'spectrum_{k}'][0, 0] == data[f'spectrum_{k - 1}'][0, 1]


def test_spectra_of_a_star_need_no_square_of_its_degree():
    # The Gram matrix was chosen by its size: B_1^T B_1 of a star (one entry per
    # pair of its 3,000 edges, 77 MB) rather than B_1 B_1^T (about 4 per edge).
    import tracemalloc
    d = 3000
    edges = torch.stack([torch.zeros(d, dtype=torch.long), torch.arange(1, d + 1)], 1)
    tracemalloc.start()
    try:
        light = SimplicialComplexData.from_simplices([edges], laplacians=False,
                                                     close=True)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 * 2 ** 20, f'{peak / 2 ** 20:.1f} MB'
    # the same spectra as with the Laplacians (lambda_max of a star: d + 1)
    full = SimplicialComplexData.from_simplices([edges[:50]], close=True)
    small = SimplicialComplexData.from_simplices([edges[:50]], close=True,
                                                 laplacians=False)
    for k in range(2):
        assert torch.equal(small[f'spectrum_{k}'], full[f'spectrum_{k}'])
    assert torch.allclose(light.spectrum_1, torch.tensor([[d + 1.0, 0.0]]))
