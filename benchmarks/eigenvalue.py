"""The largest-eigenvalue step of building a complex: the package's Lanczos against
ARPACK.

Every complex the package builds normalises its Laplacians by their largest
eigenvalues, one per order, each from the smaller Gram matrix of a boundary
(:func:`torch_geometric_san.data.algebra.boundary_eigenvalues`). This script times
that step on the order-2 Gram matrices of two kinds of complex, side by side in one
process on one thread:

* ``Delaunay``: ``B_2^T B_2`` of the Delaunay 2-complex of random points (the mesh
  of ``scaling.py``), whose spectrum is clustered at the top;
* ``clique``: ``B_2 B_2^T`` of the clique complex of a random geometric graph (the
  graphs of ``lifting.py``);

with

* ``package``: :func:`torch_geometric_san.sparse.largest_eigenvalue` (the Lanczos
  recurrence without restarts);
* ``ARPACK``: :func:`scipy.sparse.linalg.eigsh` as the package called it before
  (``k=1, which='LA'``, 8 Lanczos vectors, the same start vector, float64 vectors
  with products in float32, tolerance ``EIGEN_TOL``).

It reports both values and their relative difference, and the number of products
each needed.

    python benchmarks/eigenvalue.py [--sizes 10000 100000 1000000]
"""
import argparse
import os
import sys
import time
from typing import Callable, Dict, Tuple

import numpy as np
import scipy.sparse as sp
import scipy.spatial
import torch
from scipy.sparse.linalg import LinearOperator, eigsh
from threadpoolctl import threadpool_limits

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402
from lifting import random_geometric_graph  # noqa: E402
from torch_geometric_san.data import algebra  # noqa: E402
from torch_geometric_san.sparse.operator import (  # noqa: E402
    DENSE_EIGEN_LIMIT, EIGEN_TOL, _largest_eigenvalue)

SIZES = [10_000, 100_000, 1_000_000]


def gram(triangles: np.ndarray) -> sp.csr_array:
    """The Gram matrix of the boundary of the triangles (rows ``i < j < k``) of a
    2-complex that the package picks for the eigenvalue (the one with fewer
    entries)."""
    vertices = np.arange(int(triangles.max()) + 1)[:, None]
    edges = algebra.close_under_faces([vertices, np.zeros((0, 2), np.int64),
                                       triangles])[1]
    B = algebra.boundary_matrix(triangles, edges)
    return ((B @ B.T) if algebra._up_gram_is_smaller(B) else (B.T @ B)).tocsr()


def delaunay(num_edges: int) -> np.ndarray:
    points = np.random.default_rng(0).random((max(4, num_edges // 3), 2))
    return np.sort(scipy.spatial.Delaunay(points).simplices, axis=1)


def clique(num_edges: int) -> np.ndarray:
    """The triangles of the random geometric graph of ``lifting.py``."""
    import gudhi

    num_nodes, edges = random_geometric_graph(num_edges)
    tree = gudhi.SimplexTree()
    tree.insert_batch(np.arange(num_nodes)[None], np.zeros(num_nodes))
    tree.insert_batch(edges.T, np.zeros(len(edges)))
    tree.expansion(2)
    arrays = algebra.simplex_tree_to_arrays(tree, 2)  # (the orders the tree holds)
    return arrays[2] if len(arrays) > 2 else np.zeros((0, 3), np.int64)


def arpack(matrix: sp.csr_array) -> Tuple[float, int]:
    """The previous call: ARPACK, 8 Lanczos vectors, float32 products."""
    products = [0]

    def matvec(v):
        products[0] += 1
        return matrix @ v.astype(matrix.dtype, copy=False)

    operator = LinearOperator(matrix.shape, dtype=np.float64, matvec=matvec)
    v0 = np.random.default_rng(0).uniform(0.5, 1.5, matrix.shape[0])
    value = eigsh(operator, k=1, which='LA', tol=EIGEN_TOL, v0=v0, ncv=8,
                  return_eigenvectors=False)[0]
    return float(value), products[0]


def package(matrix: sp.csr_array) -> Tuple[float, int]:
    """The solver of :func:`largest_eigenvalue` (without its checks of a
    user's matrix, as the constructors call it), counting its products."""
    counted = _Counted(matrix)
    return _largest_eigenvalue(counted, torch.float32), counted.products


class _Counted(sp.csr_array):
    """A CSR array that counts its products with vectors."""

    def __init__(self, matrix: sp.csr_array):
        super().__init__(matrix)
        self.products = 0

    def __matmul__(self, other):
        self.products += 1
        return super().__matmul__(other)


def measure(matrix: sp.csr_array) -> Dict[str, Tuple[float, float, int]]:
    out = {}
    for name, solve in (('package', package), ('ARPACK', arpack)):
        start = time.perf_counter()
        value, products = solve(matrix)
        out[name] = (time.perf_counter() - start, value, products)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--sizes', type=_common.at_least(1), nargs='+', default=SIZES,
                        help='target numbers of edges')
    _common.add_results_arguments(parser)
    args = parser.parse_args()
    torch.set_num_threads(1)
    kinds: Dict[str, Callable[[int], np.ndarray]] = {'Delaunay': delaunay,
                                                    'clique': clique}
    rows, start = [], time.perf_counter()
    with threadpool_limits(limits=1):
        for kind, make in kinds.items():
            for size in args.sizes:
                triangles = make(size)
                matrix = gram(triangles) if len(triangles) else None
                if matrix is None or matrix.shape[0] <= DENSE_EIGEN_LIMIT:
                    # (below, the package solves densely, and ARPACK's 8 vectors
                    # do not fit the smallest matrices)
                    parser.error(f'--sizes {size}: the {kind} complex has '
                                 f'{0 if matrix is None else matrix.shape[0]} Gram '
                                 f'rows, and the Lanczos solver runs above '
                                 f'{DENSE_EIGEN_LIMIT} (a dense solve below): take a '
                                 f'larger size')
                res = measure(matrix)
                (t_p, v_p, n_p), (t_a, v_a, n_a) = res['package'], res['ARPACK']
                rows.append([kind, f'{size:,}', f'{matrix.shape[0]:,}', f'{matrix.nnz:,}',
                             f'{t_p:.3f}', str(n_p), f'{t_a:.3f}', str(n_a),
                             f'{t_a / t_p:.1f}', f'{v_p:.7f}',
                             f'{abs(v_p - v_a) / v_a:.1e}'])
                print(rows[-1], flush=True)
    table = _common.markdown_table(
        ['complex', 'edges (target)', 'Gram rows', 'non-zeros', 'package s',
         'package products', 'ARPACK s', 'ARPACK products', 'ARPACK / package',
         'lambda_max (package)', 'relative difference'], rows)
    text = (f"`python benchmarks/eigenvalue.py --sizes "
            f"{' '.join(map(str, args.sizes))}` ({_common.machine('cpu')}, "
            f"{time.perf_counter() - start:.0f} s wall): the largest eigenvalue of "
            f"the order-2 Gram matrix of each complex, the package's Lanczos against "
            f"ARPACK as the package called it before, in single precision to "
            f"relative tolerance {EIGEN_TOL:g}.\n\n{table}\n")
    _common.emit(args, 'Largest eigenvalue', 'eigenvalue.py', text)


if __name__ == '__main__':
    main()
