"""Training-step time of a 4-layer SAN with operators from a new batch at every
step, and from one complex trained on in full.

Each step runs one forward + backward of a 4-layer SAN (F = 32, J_u = J_d = 2,
J_h = 5, as in ``scaling.py``), in three ways measured side by side in the same
process:

* ``per layer``: a new batch, its operators as the earlier ``(index, weight)``
  arguments, which every layer converts and derives anew (what every layer did
  for a new batch before the operators became one value);
* ``shared``: a new batch (a copy of the complex, as a DataLoader over complexes
  gives), one ``data.operators(k)`` value passed to every layer (each operator
  form is derived once per batch, by the first layer);
* ``kept``: the same complex at every step (full-batch training), calling
  ``data.operators(k)`` at every step, which returns the value of the earlier
  steps with its derived forms (what it does while the complex's tensors are
  unchanged).

On the citation complex (order 3, ``../shared/data/citation_complex``) and on a
Delaunay complex of about 3e5 edges. One torch thread. Writes its table to
docs/results.md (``--no-results`` to skip).

    python benchmarks/operators.py [--steps 3] [--points 100000]
"""
import argparse
import copy
import os
import sys
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Sequence

import numpy as np
import scipy.spatial
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402
from torch_geometric_san.data import SimplicialComplexData  # noqa: E402
from torch_geometric_san.datasets import CitationComplexDataset  # noqa: E402
from torch_geometric_san.nn.models import SAN  # noqa: E402

CHANNELS = 32
LAYER = dict(J_up=2, J_down=2, J_harmonic=5, eps=0.9)


def delaunay(num_points: int) -> SimplicialComplexData:
    points = np.random.default_rng(0).random((num_points, 2))
    triangles = np.sort(scipy.spatial.Delaunay(points).simplices, axis=1)
    return SimplicialComplexData.from_simplices([triangles], close=True)


def citation(root: Path, order: int) -> SimplicialComplexData:
    _common.provide_raw_files(root / 'raw', list(CitationComplexDataset.urls),
                              _common.shared_data_dir() / 'citation_complex')
    return CitationComplexDataset(str(root), order=order, missing_rate=0.3,
                                  num_masks=1, log=False).complex


def step_times(data: SimplicialComplexData, k: int, steps: int) -> Dict[str, float]:
    """Median seconds per step of both ways, interleaved step by step."""
    torch.manual_seed(0)
    x = torch.randn(data.num_simplices(k), CHANNELS)
    model = SAN(CHANNELS, CHANNELS, num_layers=4, out_channels=CHANNELS, order=k,
                conv_kwargs=LAYER)
    pairs = ('up', 'down', 'hodge')

    def fresh() -> List[torch.Tensor]:  # the tensors of a new batch
        return [t.clone() for name in pairs
                for t in getattr(data, f'{name}_laplacian')(k)]

    def step(operators_of_layer: Callable[[], Sequence[Any]]) -> None:
        # The model's layers and activations, each layer called with the operator
        # arguments operators_of_layer() gives it (the model itself would convert
        # earlier arguments once for all its layers).
        h = x
        for layer, conv in enumerate(model.convs):
            h = conv(h, *operators_of_layer())
            if layer < len(model.convs) - 1:
                h = model.act(h)
        h.sum().backward()

    def shared(complex_: SimplicialComplexData) -> None:
        ops = complex_.operators(k)
        step(lambda: (ops, ))

    ways: Dict[str, Callable[[], None]] = {
        'shared': lambda: shared(copy.copy(data)),  # a copy keeps no operators
        'per layer': lambda: step(fresh), 'kept': lambda: shared(data)}
    times: Dict[str, List[float]] = {name: [] for name in ways}
    for _ in range(steps):
        for name, run in ways.items():
            start = time.perf_counter()
            run()
            times[name].append(time.perf_counter() - start)
    return {name: float(np.median(t)) for name, t in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--steps', type=_common.at_least(1), default=3)
    parser.add_argument('--points', type=_common.at_least(3), default=100_000,
                        help='points of the Delaunay complex (1e5: ~3e5 edges)')
    parser.add_argument('--root', default=str(_common.REPO / 'data'))
    _common.add_results_arguments(parser)
    args = parser.parse_args()
    torch.set_num_threads(1)
    start = time.perf_counter()
    rows = []
    cases = [('citation complex, order 3', lambda: citation(
                 Path(args.root) / 'citation_complex', 3), 3),
             (f'Delaunay, {args.points:,} points', lambda: delaunay(args.points), 1)]
    for label, make, k in cases:
        data = make()
        times = step_times(data, k, args.steps)
        rows.append([label, f'{data.num_simplices(k):,}',
                     *(f"{times[way] * 1e3:,.0f}" for way in ('per layer', 'shared',
                                                             'kept')),
                     f"{times['per layer'] / times['shared']:.2f}",
                     f"{times['shared'] / times['kept']:.2f}"])
        print(rows[-1], flush=True)
    table = _common.markdown_table(
        ['complex', 'simplices', 'per-layer operators ms', 'shared operators ms',
         'kept operators ms', 'speed-up, shared', 'speed-up, kept over shared'], rows)
    text = (f"`python benchmarks/operators.py --steps {args.steps} --points "
            f"{args.points}` ({_common.machine('cpu')}, "
            f"{time.perf_counter() - start:.0f} s wall): median step of a 4-layer "
            f"SAN (F = 32, J_u = J_d = 2, J_h = 5), forward + backward: each step "
            f"with the operators of a new batch (per layer, shared), or with "
            f"data.operators(k) of the same complex (kept).\n\n{table}\n")
    _common.emit(args, 'Operators built once per batch', 'operators.py', text)


if __name__ == '__main__':
    main()
