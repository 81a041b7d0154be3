"""Dropout on the CPU: the package's mask from ``torch.rand`` against PyTorch's.

``torch_geometric_san.nn.functional.dropout`` (used by SANConv on the attention
coefficients and by SAN and MultiOrderSAN on each layer's output) draws its CPU
mask with ``torch.rand``; ``torch.nn.functional.dropout`` draws it with
``bernoulli_``. Both are timed here, forward + backward, alternated step by step in
one process with one torch thread, with the two random-number calls alone beside
them, on the features of Table 1's layer (32 signals on the 1051 edges of
synthetic flow, 4 features) and on a larger array.

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
    ms = _common.compare({
        'package': lambda: dropout(x, P),
        'torch': lambda: F.dropout(x, P),
        # The random numbers alone (a zero-cost backward through x):
        'rand': lambda: x + torch.rand_like(plain),
        'bernoulli': lambda: x + torch.empty_like(plain).bernoulli_(1 - P),
    }, repeats)
    return ['x'.join(map(str, shape)), f'{ms["package"]:.2f}', f'{ms["torch"]:.2f}',
            f'{ms["torch"] / ms["package"]:.2f}', f'{ms["rand"]:.2f}',
            f'{ms["bernoulli"]:.2f}']


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--shapes', nargs='+', default=['32x1051x4', '1x1000000x32'],
                        help='array shapes, e.g. 32x1051x4')
    parser.add_argument('--repeats', type=int, default=25)
    _common.add_results_arguments(parser)
    args = parser.parse_args()
    shapes = [[int(n) for n in s.split('x')] for s in args.shapes]
    if any(not s or min(s) < 1 for s in shapes):
        parser.error('--shapes takes positive sizes joined by x, e.g. 32x1051x4')
    torch.set_num_threads(1)
    torch.manual_seed(0)
    start = time.perf_counter()
    rows = [measure(shape, args.repeats) for shape in shapes]
    table = _common.markdown_table(
        ['shape', 'package dropout (torch.rand mask), ms',
         'torch.nn.functional.dropout (bernoulli_), ms', 'torch / package',
         'torch.rand alone, ms', 'bernoulli_ alone, ms'], rows)
    text = (f"`python benchmarks/dropout.py --shapes {' '.join(args.shapes)} --repeats "
            f"{args.repeats}` ({_common.machine('cpu')}, "
            f"{time.perf_counter() - start:.0f} s wall): dropout p = {P}, median forward "
            f"+ backward of each way over {args.repeats} rounds, alternated; the random "
            f"numbers alone (forward + backward of x + r) beside them.\n\n{table}\n")
    _common.emit(args, 'Dropout on the CPU', 'dropout.py', text)


if __name__ == '__main__':
    main()
