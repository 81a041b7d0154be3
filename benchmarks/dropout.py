"""Dropout on the CPU: the package's dropout against PyTorch's, the same masks.

``torch.nn.functional.dropout`` fills its CPU mask with ``bernoulli_``, which in
PyTorch 2.13 on CPUs other than Intel's (and without MKL) draws one uniform double
per entry in a per-element loop (the package asks PyTorch which path it takes).
``torch_geometric_san.nn.functional.dropout`` (used by SANConv on the attention
coefficients and by SAN and MultiOrderSAN on each layer's output) draws the same
doubles with ``uniform_`` and compares them itself: the same output bit for bit
(checked here on every shape, and by the tests). Both are timed, forward +
backward, alternated step by step in one process with one torch thread, on the
features of Table 1's layer (32 signals on the 1051 edges of synthetic flow, 4
features) and on a larger array. Where PyTorch takes MKL's path (an Intel CPU with
MKL; PyTorch 2.4 and 2.5 with MKL on any CPU) the package calls PyTorch's dropout.

Writes its table to docs/results.md (``--no-results`` to skip)::

    python benchmarks/dropout.py [--shapes 32x1051x4 1x1000000x32] [--repeats 25]
"""
import argparse
import os
import sys
import time
from typing import List

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402
from torch_geometric_san.nn.functional import dropout  # noqa: E402

P = 0.6  # the dropout of Table 1


def measure(shape: List[int], repeats: int) -> List[str]:
    """One row: milliseconds of each way on an array of :obj:`shape`."""
    x = torch.randn(*shape, requires_grad=True)
    plain = x.detach()
    torch.manual_seed(0)
    ours = dropout(plain, P)
    torch.manual_seed(0)
    if not torch.equal(ours, F.dropout(plain, P)):
        raise RuntimeError(f'the package\'s dropout differs from PyTorch\'s on {shape}')
    ms = _common.compare({
        'package': lambda: dropout(x, P),
        'torch': lambda: F.dropout(x, P),
    }, repeats)
    return ['x'.join(map(str, shape)), f'{ms["package"]:.2f}', f'{ms["torch"]:.2f}',
            f'{ms["torch"] / ms["package"]:.2f}']


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--shapes', nargs='+', default=['32x1051x4', '1x1000000x32'],
                        help='array shapes, e.g. 32x1051x4')
    parser.add_argument('--repeats', type=_common.at_least(1), default=25)
    _common.add_results_arguments(parser)
    args = parser.parse_args()
    try:
        shapes = [[int(n) for n in s.split('x')] for s in args.shapes]
    except ValueError:  # (e.g. 'abc' or '32x')
        shapes = [[]]
    if any(not s or min(s) < 1 for s in shapes):
        parser.error('--shapes takes positive sizes joined by x, e.g. 32x1051x4')
    torch.set_num_threads(1)
    torch.manual_seed(0)
    start = time.perf_counter()
    rows = [measure(shape, args.repeats) for shape in shapes]
    table = _common.markdown_table(
        ['shape', 'package dropout, ms', 'torch.nn.functional.dropout, ms',
         'torch / package'], rows)
    text = (f"`python benchmarks/dropout.py --shapes {' '.join(args.shapes)} --repeats "
            f"{args.repeats}` ({_common.machine('cpu')}, "
            f"{time.perf_counter() - start:.0f} s wall): dropout p = {P}, median forward "
            f"+ backward of each way over {args.repeats} rounds, alternated (the two "
            f"outputs checked equal first).\n\n{table}\n")
    _common.emit(args, 'Dropout on the CPU', 'dropout.py', text)


if __name__ == '__main__':
    main()
