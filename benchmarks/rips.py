"""Vietoris-Rips lifting: the package's k-d tree edges against gudhi.RipsComplex.

``LiftToRipsComplex`` finds the pairs of points within ``max_edge_length`` with
SciPy's k-d tree, keeps them by GUDHI's distance rule and lets GUDHI expand them to
cliques; ``gudhi.RipsComplex(points=...)`` measures every pair of points. Both are
timed here as the whole lift of a point cloud to a complete complex (boundaries,
Laplacians, spectra: the same ``LiftToRipsComplex`` with only the simplex tree built
the other way), on points uniform in the unit square with a radius giving each point
about ``--degree`` neighbours, order 2. Each measurement runs in a fresh process
(time: median of the repeats; memory: the growth of the peak resident set,
``ru_maxrss``, over the process before the first lift), and the two complexes are
checked equal.

Writes its table to docs/results.md (``--no-results`` to skip)::

    python benchmarks/rips.py [--points 8000 32000 128000] [--repeats 3]
"""
import argparse
import hashlib
import json
import math
import os
import resource
import statistics
import subprocess
import sys
import time
from typing import Dict, List

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402

WAYS = ['package', 'gudhi']


def cloud(points: int, degree: float):
    """The point cloud and the radius that gives about :obj:`degree` neighbours."""
    import torch
    pos = torch.from_numpy(np.random.default_rng(0).random((points, 2)))
    return pos, math.sqrt(degree / (math.pi * points))


def worker(way: str, points: int, degree: float, repeats: int) -> Dict:
    """One way's lifts of one cloud, in this process."""
    import gudhi
    import torch
    from torch_geometric.data import Data

    from torch_geometric_san.transforms import LiftToRipsComplex

    class GudhiRips(LiftToRipsComplex):  # the tree of gudhi.RipsComplex
        def _simplex_tree(self, points):
            rips = gudhi.RipsComplex(points=points,
                                     max_edge_length=self.max_edge_length)
            return rips.create_simplex_tree(max_dimension=self.max_order)

    torch.set_num_threads(1)
    pos, radius = cloud(points, degree)
    lift = (LiftToRipsComplex if way == 'package' else GudhiRips)(radius)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        data = lift(Data(pos=pos))
        times.append(time.perf_counter() - start)
    growth = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    digest = hashlib.sha256(b''.join(data[f'simplices_{k}'].numpy().tobytes()
                                     for k in (1, 2))).hexdigest()
    return dict(seconds=statistics.median(times), mb=growth / 1024, digest=digest,
                counts=[data.num_simplices(k) for k in range(3)])


def measure(way: str, points: int, args: argparse.Namespace) -> Dict:
    command = [sys.executable, os.path.abspath(__file__), '--worker', way,
               '--points', str(points), '--degree', str(args.degree),
               '--repeats', str(args.repeats)]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f'{way} at {points} points failed:\n{result.stderr}')
    return json.loads(result.stdout.strip().splitlines()[-1])


def row(points: int, args: argparse.Namespace) -> List[str]:
    out = {way: measure(way, points, args) for way in WAYS}
    ours, base = out['package'], out['gudhi']
    if ours['digest'] != base['digest']:
        raise RuntimeError(f'the complexes differ at {points} points')
    print(json.dumps(dict(points=points, **out)), flush=True)
    return [f'{points:,}', ', '.join(f'{n:,}' for n in ours['counts']),
            f"{ours['seconds']:.2f}", f"{base['seconds']:.2f}",
            f"{base['seconds'] / ours['seconds']:.1f}",
            f"{ours['mb']:.0f}", f"{base['mb']:.0f}"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--points', type=_common.at_least(3), nargs='+',
                        default=[8000, 32000, 128000])
    parser.add_argument('--degree', type=float, default=10.0,
                        help='expected neighbours of a point (sets the radius)')
    parser.add_argument('--repeats', type=_common.at_least(1), default=3)
    parser.add_argument('--worker', choices=WAYS, help=argparse.SUPPRESS)
    _common.add_results_arguments(parser)
    args = parser.parse_args()
    if not args.degree > 0:
        parser.error('--degree must be positive')
    if args.worker:
        print(json.dumps(worker(args.worker, args.points[0], args.degree,
                                args.repeats)))
        return
    start = time.perf_counter()
    rows = [row(points, args) for points in args.points]
    table = _common.markdown_table(
        ['points', 'simplices (N_0, N_1, N_2)', 'package, s', 'gudhi.RipsComplex, s',
         'time ratio', 'package, MB', 'gudhi.RipsComplex, MB'], rows)
    text = (f"`python benchmarks/rips.py --points {' '.join(map(str, args.points))} "
            f"--degree {args.degree:g} --repeats {args.repeats}` "
            f"({_common.machine('cpu')}, {time.perf_counter() - start:.0f} s wall): "
            f"the whole `LiftToRipsComplex` lift (order 2, complete complex) of points "
            f"uniform in the unit square, about {args.degree:g} neighbours each, with "
            f"its simplex tree from a k-d tree (package) or from `gudhi.RipsComplex`; "
            f"median of {args.repeats} lifts per fresh process, peak resident set "
            f"growth over the process before the lifts; the two complexes checked "
            f"equal at every size.\n\n{table}\n")
    _common.emit(args, 'Vietoris-Rips lifting', 'rips.py', text)


if __name__ == '__main__':
    main()
