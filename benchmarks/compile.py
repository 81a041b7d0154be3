"""Eager against torch.compile: training-step time and compile time.

Two workloads, each run eagerly and compiled (``torch.compile``, Inductor,
default options), one torch thread, the two alternating step by step after
the compiled one has compiled:

* **trajectory demo**: the SAN of Table 1 (``benchmarks/trajectory.py``: one
  layer, J_u = J_d = 3, J_h = 5, 4 hidden channels, flatten readout, Tanh) on
  a batch of 32 synthetic-flow signals [32, N_1, 1] on their shared complex,
  cross-entropy and backward;
* **large complex**: one SANConv (F = 32, J_u = J_d = 2, J_h = 5, as in
  ``scaling.py``) on a Delaunay complex of ``--points`` points (1e5: about 3e5
  edges), forward + backward.

Each step gets new operators (``data.operators(1)`` of a copy of the complex,
which keeps none), as a new batch would.
Writes its table to docs/results.md (``--no-results`` to skip)::

    python benchmarks/compile.py [--points 100000] [--steps 10]
"""
import argparse
import copy
import os
import statistics
import sys
import tempfile
import time
from typing import Callable, Dict, List, Tuple

import numpy as np
import scipy.spatial
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402
import trajectory  # noqa: E402
from torch_geometric_san.data import SimplicialComplexData  # noqa: E402
from torch_geometric_san.datasets import SyntheticFlowDataset  # noqa: E402
from torch_geometric_san.nn import SANConv  # noqa: E402

Step = Callable[[torch.nn.Module], None]


def trajectory_workload(root: str) -> Tuple[torch.nn.Module, Step, int]:
    dataset = SyntheticFlowDataset(root, split='train', log=False)
    complex = dataset.complex
    x, y = dataset.x_1[:32], dataset.y[:32]
    model = trajectory.build_model('SAN', 'Tanh', complex.num_simplices(1),
                                   int(dataset.y.max()) + 1, 2)

    def step(module: torch.nn.Module) -> None:
        F.cross_entropy(module(x, copy.copy(complex).operators(1)), y).backward()

    return model, step, complex.num_simplices(1)


def large_workload(num_points: int) -> Tuple[torch.nn.Module, Step, int]:
    points = np.random.default_rng(0).random((num_points, 2))
    triangles = np.sort(scipy.spatial.Delaunay(points).simplices, axis=1)
    complex = SimplicialComplexData.from_simplices([triangles], close=True)
    x = torch.randn(complex.num_simplices(1), 32, requires_grad=True)
    conv = SANConv(32, 32, J_up=2, J_down=2, J_harmonic=5, eps=0.9)

    def step(module: torch.nn.Module) -> None:
        module(x, copy.copy(complex).operators(1)).sum().backward()

    return conv, step, complex.num_simplices(1)


def measure(model: torch.nn.Module, step: Step, steps: int) -> Dict[str, float]:
    compiled = torch.compile(model)
    start = time.perf_counter()
    step(compiled)  # compiles
    step(compiled)  # a second size-agnostic pass may compile again
    first = time.perf_counter() - start
    step(model)
    times: Dict[str, List[float]] = {'eager': [], 'compiled': []}
    for _ in range(steps):
        for name, module in (('eager', model), ('compiled', compiled)):
            begin = time.perf_counter()
            step(module)
            times[name].append(1e3 * (time.perf_counter() - begin))
    return dict(compile_s=first, **{name: statistics.median(t)
                                    for name, t in times.items()})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--points', type=_common.at_least(3), default=100_000)
    parser.add_argument('--steps', type=_common.at_least(1), default=10)
    _common.add_results_arguments(parser)
    args = parser.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    start = time.perf_counter()
    rows = []
    with tempfile.TemporaryDirectory() as root:
        workloads = [('trajectory demo (SAN, 32 signals)',
                      lambda: trajectory_workload(os.path.join(root, 'synthetic'))),
                     (f'one SANConv, Delaunay {args.points:,} points',
                      lambda: large_workload(args.points))]
        for label, make in workloads:
            model, step, edges = make()
            result = measure(model, step, args.steps)
            rows.append([label, f'{edges:,}', f"{result['eager']:,.1f}",
                         f"{result['compiled']:,.1f}",
                         f"{result['eager'] / result['compiled']:.2f}",
                         f"{result['compile_s']:.0f}"])
            print(rows[-1], flush=True)
    table = _common.markdown_table(
        ['workload', 'edges', 'eager ms', 'compiled ms', 'eager / compiled',
         'first two compiled steps s'], rows)
    text = (f"`python benchmarks/compile.py --points {args.points} --steps "
            f"{args.steps}` ({_common.machine('cpu')}, "
            f"{time.perf_counter() - start:.0f} s wall): median training step, "
            f"new operators every step.\n\n{table}\n")
    _common.emit(args, 'torch.compile', 'compile.py', text)


if __name__ == '__main__':
    main()
