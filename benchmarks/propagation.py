"""What each propagation path of SANConv gains, measured side by side.

SANConv keeps three choices of how to compute a branch (see
``torch_geometric_san.sparse.propagation``); each is timed here against its
alternative on the same operator and signals, forward + backward, in one
process with one torch thread, alternating the two ways step by step:

* **per-group values: gather vs block-diagonal.** Attention coefficients
  differ per signal and head ([nnz, B*H]); applied by gathering the features
  of every entry for all groups at once (``matmul_grouped``) or through the
  block-diagonal operator of B*H copies of the pattern (one sparse product),
  for 1 to 32 features per group. The layer gathers up to
  ``GATHER_MAX_WIDTH_COMPILED`` features where the compiled CPU kernel gathers
  (``torch_geometric_san.sparse.compiled``), ``GATHER_MAX_WIDTH`` where the
  composite does.
* **narrow input: propagate the input vs the taps.** For F_in < F_out the
  layer computes sum_p (A^p Z) W_p instead of sum_p A^p (Z W_p) (Horner), as
  on the trajectory data (F_in = 1, F_out = 32).
* **compiled kernels vs composites.** On the CPU the gathered products and the
  attention coefficients (LeakyReLU and softmax per row) run in the package's
  C++ kernels (``torch_geometric_san.sparse.compiled``); each is timed against
  the composite of PyTorch operations that replaces it where they are off
  (``TGSAN_COMPILED_KERNELS=0``).
* **fixed values: powers in two buffers vs one product at a time.** The
  harmonic filter (I - eps L)^J_h Z: ``matmul(hops=J_h)`` (one custom op, two
  alternating buffers each way, no intermediate power kept) against J_h
  single products; time and the bytes autograd keeps (``saved tensors``).

Writes its table to docs/results.md (``--no-results`` to skip)::

    python benchmarks/propagation.py [--points 400 20000] [--repeats 7]
"""
import argparse
import os
import sys
import time
import unittest.mock
from typing import Callable, Dict, List

import numpy as np
import scipy.spatial
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402
from torch_geometric_san.data import SimplicialComplexData  # noqa: E402
from torch_geometric_san.sparse import compiled, propagation  # noqa: E402


def delaunay(num_points: int) -> SimplicialComplexData:
    points = np.random.default_rng(0).random((num_points, 2))
    triangles = np.sort(scipy.spatial.Delaunay(points).simplices, axis=1)
    return SimplicialComplexData.from_simplices([triangles], close=True)


def kernels(flag: bool, run: Callable[[], torch.Tensor]) -> Callable[[], torch.Tensor]:
    """run() with the compiled kernels on (flag) or off."""
    def wrapped() -> torch.Tensor:
        with unittest.mock.patch.dict(os.environ,
                                      {'TGSAN_COMPILED_KERNELS': '1' if flag else '0'}):
            return run()  # (the variable restored as it was, also where unset)
    return wrapped


def saved_bytes(run: Callable[[], torch.Tensor]) -> int:
    """The bytes of the storages autograd keeps for the backward of run(), each
    counted once (products save the operator's index and values again and
    again)."""
    storages: Dict[int, int] = {}

    def pack(tensor: torch.Tensor) -> torch.Tensor:
        storage = tensor.untyped_storage()
        storages[storage.data_ptr()] = storage.nbytes()
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        run().sum().backward()
    return sum(storages.values())


def measure(num_points: int, repeats: int) -> List[List[str]]:
    """The rows of the table for the Delaunay complex of :obj:`num_points`."""
    data = delaunay(num_points)
    ops = data.operators(1)
    nbhd = ops.up.neighbourhood(True)
    n, nnz = data.num_simplices(1), nbhd.nnz
    size = f'{n:,} edges ({nnz:,} entries)'
    rows = []
    # Per-group values: 32 signals x 1 head, as a trajectory batch.
    groups = 32
    for width in (1, 2, 4, 8, 16, 32):
        value = torch.rand(nnz, groups, requires_grad=True)
        x = torch.randn(groups, n, 1, width, requires_grad=True)
        ms = _common.compare({way: (lambda gather=gather: propagation.polynomial(
            nbhd, value, [x, x * 0.5], gather=gather)) for way, gather in
            (('gather', True), ('block', False))}, repeats)
        limit = (propagation.GATHER_MAX_WIDTH_COMPILED if compiled.available_for(x)
                 else propagation.GATHER_MAX_WIDTH)
        chosen = 'gather' if width <= limit else 'block'
        rows.append([size, f'per-group values, {groups} groups x {width} features, J = 2',
                     'gather', f"{ms['gather']:.1f}", 'block-diagonal',
                     f"{ms['block']:.1f}", f"{ms['block'] / ms['gather']:.2f}", chosen])

    # The compiled kernels against the composites: the gathered product of one
    # feature per group, and the attention coefficients from the scores of targets
    # and sources (as SANConv computes them).
    value = torch.rand(nnz, groups, requires_grad=True)
    x = torch.randn(groups, n, 1, 1, requires_grad=True)
    ms = _common.compare({name: kernels(flag, lambda: propagation.polynomial(
        nbhd, value, [x, x * 0.5], gather=True)) for name, flag in
        (('compiled', True), ('composite', False))}, repeats)
    # (both ways are timed whatever this process's setting; the layer uses the
    # kernels only where they are on, as the block's header says)
    uses = 'composite' if compiled.status() in ('off', 'failed') else 'compiled (CPU)'
    rows.append([size, f'per-group values, {groups} groups x 1 feature, J = 2, gather',
                 'compiled kernel', f"{ms['compiled']:.1f}", 'composite',
                 f"{ms['composite']:.1f}", f"{ms['composite'] / ms['compiled']:.2f}",
                 uses])
    target = torch.randn(n, groups, requires_grad=True)
    source = torch.randn(n, groups, requires_grad=True)
    ms = _common.compare({name: kernels(flag, lambda: nbhd.attention(0.2, None, target, source))
                  for name, flag in (('compiled', True), ('composite', False))}, repeats)
    rows.append([size, f'attention coefficients, {groups} groups', 'compiled kernel',
                 f"{ms['compiled']:.1f}", 'composite', f"{ms['composite']:.1f}",
                 f"{ms['composite'] / ms['compiled']:.2f}", uses])

    # Narrow input: F_in = 1, F_out = 32, J = 3, 32 signals, one head.
    value = torch.rand(nnz, groups, requires_grad=True)
    x = torch.randn(groups, n, 1, requires_grad=True)
    weight = torch.randn(3, 32, 1, requires_grad=True)  # W_p [C, F_in]

    def input_first() -> torch.Tensor:
        powers = torch.stack(propagation.powers(nbhd, value, x.unsqueeze(2), 3))
        return torch.einsum('jbngf,jcf->bngc', powers, weight)

    def taps_first() -> torch.Tensor:
        taps = [torch.einsum('bnf,cf->bnc', x, w).unsqueeze(2) for w in weight]
        return propagation.polynomial(nbhd, value, taps)

    ms = _common.compare({'input': input_first, 'taps': taps_first}, repeats)
    rows.append([size, 'narrow input, F_in = 1 -> F_out = 32, J = 3, 32 signals',
                 'propagate the input', f"{ms['input']:.1f}", 'propagate the taps',
                 f"{ms['taps']:.1f}", f"{ms['taps'] / ms['input']:.2f}",
                 'the input (F_in < F_out)'])

    # Fixed values: the harmonic filter, J_h = 5, 32 features.
    shifted = ops.hodge.shifted(0.9)
    x = torch.randn(n, 32, requires_grad=True)

    def single() -> torch.Tensor:
        out = x
        for _ in range(5):
            out = shifted.matmul(out)
        return out

    ways = {'power': lambda: shifted.matmul(x, hops=5), 'single': single}
    ms = _common.compare(ways, repeats)
    kept = {name: saved_bytes(run) / 2**20 for name, run in ways.items()}
    rows.append([size, 'fixed values, (I - eps L)^5 Z, 32 features',
                 f"powers in two buffers ({kept['power']:.1f} MB kept)",
                 f"{ms['power']:.1f}",
                 f"one product at a time ({kept['single']:.1f} MB kept)",
                 f"{ms['single']:.1f}", f"{ms['single'] / ms['power']:.2f}",
                 'powers'])

    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--points', type=_common.at_least(3),
                        nargs='+', default=[400, 20_000],
                        help='points of the Delaunay complexes (400: ~1e3 edges, the '
                        'size of the trajectory data; 2e4: ~6e4 edges)')
    parser.add_argument('--repeats', type=_common.at_least(1), default=7)
    _common.add_results_arguments(parser)
    args = parser.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    start = time.perf_counter()
    rows = [row for points in args.points for row in measure(points, args.repeats)]
    table = _common.markdown_table(
        ['complex', 'case', 'way A', 'ms', 'way B', 'ms', 'B / A', 'the layer uses'],
        rows)
    points = ' '.join(str(p) for p in args.points)
    text = (f"`python benchmarks/propagation.py --points {points} --repeats "
            f"{args.repeats}` ({_common.machine('cpu')}, "
            f"{time.perf_counter() - start:.0f} s wall): Delaunay complexes (entries "
            f"of the upper neighbourhood of the edges); median forward + backward of "
            f"each way, alternated step by step.\n\n{table}\n")
    _common.emit(args, 'Propagation paths', 'propagation.py', text)


if __name__ == '__main__':
    main()
