"""The eigenvalue benchmark compares both solvers on small complexes (no timing
assertions)."""
import numpy as np
import pytest


@pytest.mark.parametrize('kind', ['delaunay', 'clique'])
def test_both_solvers_agree_and_count_products(eigenvalue, kind):
    matrix = eigenvalue.gram(getattr(eigenvalue, kind)(3000))
    assert matrix.shape[0] > 512  # the Lanczos path, not the dense one
    expected = np.linalg.eigvalsh(matrix.toarray().astype(np.float64))[-1]
    results = eigenvalue.measure(matrix)
    assert set(results) == {'package', 'ARPACK'}
    for seconds, value, products in results.values():
        assert seconds > 0 and products > 0
        assert value == pytest.approx(expected, rel=1e-6)


def test_gram_is_the_smaller_one(eigenvalue):
    # A Delaunay mesh has fewer triangles than edges: B_2^T B_2, triangle by triangle.
    triangles = eigenvalue.delaunay(300)
    matrix = eigenvalue.gram(triangles)
    assert matrix.shape == (len(triangles), len(triangles))
    assert np.allclose(matrix.diagonal(), 3.0)


@pytest.mark.parametrize('size', ['1', '100'])
def test_sizes_below_the_lanczos_solver_are_refused(size):
    # (no triangles failed with an IndexError, a 2-row matrix inside ARPACK, and
    # a matrix of 55 rows was reported as the package's Lanczos, with 0 products)
    import subprocess
    import sys
    from pathlib import Path
    script = Path(__file__).resolve().parents[2] / 'benchmarks' / 'eigenvalue.py'
    run = subprocess.run([sys.executable, str(script), '--sizes', size, '--no-results'],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 2
    assert f'--sizes {size}: the Delaunay complex has' in run.stderr
    assert 'the Lanczos solver runs above 512' in run.stderr
