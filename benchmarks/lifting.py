"""Lifting speed and peak memory against graph size.

Lifts random geometric graphs (points uniform in the unit square, radius chosen so
that the expected number of edges is the target, mean degree about 10) to their
clique 2-complexes and times

* ``torch_geometric_san``: ``LiftToCliqueComplex(max_order=2)`` from a PyG ``Data``
  (both directions of each edge, as PyG stores undirected graphs) to a complete
  ``SimplicialComplexData``: B_1, B_2, the lower, upper and normalised Hodge
  Laplacians of orders 0..2 (with their largest eigenvalues);
* ``TopoNetX``: ``toponetx.transform.graph_to_clique_complex(G, max_rank=2)`` on a
  ``networkx.Graph`` plus its signed incidence matrices B_1, B_2 (no Laplacians),
  where ``toponetx`` is installed (``pip install --no-deps toponetx`` plus what it
  imports: networkx, pandas, trimesh), in the same run on the same graphs.

With ``--baseline DIR`` the same lift is also timed with the package of another checkout
(e.g. ``git archive <commit> | tar -x -C DIR``), in the same run, size by size, so that
the two are compared under the same load; the table gets its columns and the ratio.

Building the input (the ``Data`` object or the ``networkx.Graph``) is not timed.
Each measurement runs in a fresh subprocess; time is the median of the repeats,
memory the peak resident set size of that process (``ru_maxrss``, which sees NumPy,
SciPy, GUDHI and torch allocations alike), reported as the whole process and as its
growth over the resident set just before the first lift. TopoNetX runs are capped:
a size whose time predicted from the previous one exceeds the budget is skipped, a
run that exceeds it is stopped.

Examples::

    python benchmarks/lifting.py --quick
    python benchmarks/lifting.py               # full run, writes docs/results.md
    python benchmarks/lifting.py --device cuda --sizes 100000 1000000
    python benchmarks/lifting.py --baseline /tmp/base   # against another checkout
"""
import argparse
import datetime
import json
import math
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import numpy as np
import scipy.optimize
import scipy.spatial

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / 'benchmarks'))

import _report  # noqa: E402

FULL_SIZES = [10**3, 3 * 10**3, 10**4, 3 * 10**4, 10**5, 3 * 10**5, 10**6]
QUICK_SIZES = [10**3, 10**4, 10**5]
DEGREE = 10
METHODS = ['torch_geometric_san', 'toponetx']


def random_geometric_graph(num_edges: int, seed: int = 0) -> Tuple[int, np.ndarray]:
    r"""The number of nodes and the edges ``[E, 2]`` (``i < j``) of a random geometric graph in the unit square
    with ``2 * num_edges / DEGREE`` nodes and about :obj:`num_edges` edges: the radius
    solves :math:`\binom{n}{2} (\pi r^2 - \frac{8}{3} r^3 + \frac{1}{2} r^4) = E`,
    the expected edge count with the border effect."""
    # (enough nodes that the expected edge count reaches num_edges for a radius
    # below 1: it is at most about 0.975 of the pairs)
    n = max(2 * num_edges // DEGREE, math.ceil(math.sqrt(2 * num_edges / 0.95)) + 2)
    pairs = n * (n - 1) / 2
    radius = scipy.optimize.brentq(
        lambda r: pairs * (math.pi * r**2 - 8 / 3 * r**3 + r**4 / 2) - num_edges,
        1e-9, 1.0)
    points = np.random.default_rng(seed).random((n, 2))
    return n, scipy.spatial.cKDTree(points).query_pairs(radius, output_type='ndarray')


def current_rss() -> int:
    with open('/proc/self/statm') as f:
        return int(f.read().split()[1]) * os.sysconf('SC_PAGE_SIZE')


def cpu_time() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def worker(method: str, num_edges: int, repeats: int, device: str) -> Dict:
    num_nodes, edges = random_geometric_graph(num_edges)
    if method == 'torch_geometric_san':
        import torch
        from torch_geometric.data import Data

        from torch_geometric_san.transforms import LiftToCliqueComplex
        edge_index = torch.from_numpy(np.concatenate([edges, edges[:, ::-1]]).T.copy())
        graph = Data(edge_index=edge_index, num_nodes=num_nodes)
        lift = LiftToCliqueComplex(max_order=2)

        def run():
            data = lift(graph)
            return data, [data.num_simplices(k) for k in range(3)]
    else:
        import networkx as nx
        from toponetx.transform import graph_to_clique_complex
        graph = nx.Graph()
        graph.add_nodes_from(range(num_nodes))
        graph.add_edges_from(edges.tolist())

        def run():
            complex = graph_to_clique_complex(graph, max_rank=2)
            B1 = complex.incidence_matrix(1, signed=True)
            B2 = complex.incidence_matrix(2, signed=True)
            return (B1, B2), [B1.shape[0], B1.shape[1], B2.shape[1]]

    rss_before = current_rss()
    times, cpu_times, to_device = [], [], []
    for _ in range(repeats):
        start, cpu_start = time.perf_counter(), cpu_time()
        out, counts = run()
        times.append(time.perf_counter() - start)
        cpu_times.append(cpu_time() - cpu_start)
        if device != 'cpu':
            start = time.perf_counter()
            out.to(device)
            torch.cuda.synchronize()
            to_device.append(time.perf_counter() - start)
        del out
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return dict(time=statistics.median(times), cpu=statistics.median(cpu_times),
                peak=peak, growth=peak - rss_before,
                counts=counts, to_device=statistics.median(to_device) if to_device
                else None)


def run_worker(method: str, num_edges: int, repeats: int, device: str,
               timeout: float, package: Path = REPO) -> Dict:
    command = [sys.executable, os.path.abspath(__file__), '--worker', method,
               '--sizes', str(num_edges), '--repeats', str(repeats),
               '--device', device if method == 'torch_geometric_san' else 'cpu']
    env = dict(os.environ, PYTHONPATH=str(package) + os.pathsep +
               os.environ.get('PYTHONPATH', ''))
    try:
        result = subprocess.run(command, capture_output=True, text=True,
                                timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return dict(note=f'stopped after {timeout:.0f} s')
    if result.returncode != 0:
        return dict(note='failed: ' + (result.stderr.strip().splitlines() or
                                       ['?'])[-1][:120])
    return json.loads(result.stdout.strip().splitlines()[-1])


def available(method: str) -> Optional[str]:
    if method == 'toponetx':
        try:
            import toponetx.transform  # noqa: F401
        except ImportError as error:
            return f'toponetx is not importable ({error})'
    return None


def gb(value: Optional[float]) -> str:
    return '-' if value is None else f'{value / 1e9:.2f}'


def table(rows: List[Dict], device: str) -> str:
    header = ['target edges', 'edges', 'triangles', 'ours: time / CPU (s)',
              'ours: peak RSS / growth (GB)', 'TopoNetX: time / CPU (s)',
              'TopoNetX: peak RSS / growth (GB)', 'TopoNetX / ours (time)']
    if device != 'cpu':
        header.insert(5, f'ours: .to({device}) (s)')
    baseline = any('baseline' in row for row in rows)
    if baseline:
        header += ['baseline: time / CPU (s)', 'baseline: peak RSS (GB)',
                   'ours / baseline (time / CPU)']
    lines = []
    for row in rows:
        ours, theirs = row['torch_geometric_san'], row['toponetx']
        counts = ours.get('counts', [None] * 3)
        cells = [f'{row["edges"]:.0e}'.replace('e+0', 'e'), str(counts[1]),
                 str(counts[2])]
        for result in (ours, theirs):
            if 'time' in result:
                cells += [f'{result["time"]:.3g} / {result["cpu"]:.3g}',
                          f'{gb(result["peak"])} / {gb(result["growth"])}']
            else:
                cells += [result.get('note', '-'), '-']
        if device != 'cpu':
            cells.insert(5, f'{ours["to_device"]:.3g}' if ours.get('to_device')
                         is not None else '-')
        if 'time' in ours and 'time' in theirs:
            if theirs['counts'][1:] != counts[1:]:
                raise RuntimeError(f"TopoNetX and ours disagree on {row['edges']}: "
                                   f"{theirs['counts']} vs {counts}")
            cells.append(f'{theirs["time"] / ours["time"]:.1f}x')
        else:
            cells.append('-')
        if baseline:
            cells += _baseline_cells(ours, row['baseline'], counts)
        lines.append(cells)
    return _report.markdown_table(header, lines)


def _baseline_cells(ours: Dict, base: Dict, counts: List) -> List[str]:
    if 'time' not in base:
        return [base.get('note', '-'), '-', '-']
    if base['counts'] != counts:
        raise RuntimeError(f"the baseline and ours disagree: {base['counts']} vs "
                           f"{counts}")
    ratio = (f'{ours["time"] / base["time"]:.2f} / {ours["cpu"] / base["cpu"]:.2f}'
             if 'time' in ours else '-')
    return [f'{base["time"]:.3g} / {base["cpu"]:.3g}', gb(base['peak']), ratio]


def verdicts(rows: List[Dict]) -> str:
    targets = {10**5: (1.5, None), 10**6: (10.0, 4.0)}
    out = []
    for row in rows:
        if row['edges'] not in targets or 'time' not in row['torch_geometric_san']:
            continue
        result = row['torch_geometric_san']
        seconds, memory = targets[row['edges']]
        met = result['time'] <= seconds
        text = (f'- {row["edges"]:.0e} edges: {result["time"]:.2f} s wall, '
                f'{result["cpu"]:.2f} s CPU (target <= {seconds:g} s)').replace('e+0', 'e')
        if memory is not None:
            met &= result['peak'] <= memory * 1e9
            text += f', peak RSS {gb(result["peak"])} GB (target <= {memory:g} GB)'
        out.append(text + (': met' if met else ': NOT met'))
    return '\n'.join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--quick', action='store_true',
                        help=f'sizes {QUICK_SIZES}, one repeat, TopoNetX budget 20 s')
    parser.add_argument('--sizes', type=_report.at_least(1),
                        nargs='+', help='target edge counts')
    parser.add_argument('--repeats', type=_report.at_least(1),
                        help='timed lifts per size (ours)')
    parser.add_argument('--device', type=_report.device_name, default='cpu',
                        help='also time moving the lifted complex to this device')
    parser.add_argument('--budget', type=_report.real_in(0, low_open=True),
                        help='seconds allowed per TopoNetX run (default 300, quick 20)')
    parser.add_argument('--results', default=str(REPO / 'docs' / 'results.md'),
                        help='markdown file a full run writes its table to')
    parser.add_argument('--no-results', action='store_true',
                        help='do not update any results page')
    parser.add_argument('--baseline', type=Path,
                        help='a checkout whose package is timed too, size by size')
    parser.add_argument('--worker', choices=METHODS, help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.baseline and not (args.baseline / 'torch_geometric_san').is_dir():
        # (the worker imported the installed package instead, and timed it twice)
        parser.error(f'--baseline {args.baseline} holds no torch_geometric_san package '
                     f'(e.g. git archive <commit> | tar -x -C DIR)')
    if args.worker:
        print(json.dumps(worker(args.worker, args.sizes[0], args.repeats or 1,
                                args.device)))
        return

    sizes = args.sizes or (QUICK_SIZES if args.quick else FULL_SIZES)
    repeats = args.repeats or (1 if args.quick else 3)
    budget = args.budget or (20.0 if args.quick else 300.0)
    skip = {method: available(method) for method in METHODS}
    for method, reason in skip.items():
        if reason:
            print(f'note: {method} column skipped: {reason}')
    load = [os.getloadavg()[0]]
    rows = []
    last = None  # (edges, seconds) of the last TopoNetX run
    given_up = None  # why TopoNetX no longer runs
    for num_edges in sizes:
        row = {'edges': num_edges}
        row['torch_geometric_san'] = run_worker('torch_geometric_san', num_edges,
                                                repeats, args.device, timeout=3600)
        if args.baseline:
            row['baseline'] = run_worker('torch_geometric_san', num_edges, repeats,
                                         args.device, timeout=3600,
                                         package=args.baseline.resolve())
        predicted = last[1] * num_edges / last[0] if last else 0.0
        if skip['toponetx']:
            row['toponetx'] = dict(note='not installed')
        elif given_up:
            row['toponetx'] = dict(note=f'skipped ({given_up})')
        elif predicted > budget:
            row['toponetx'] = dict(note=f'skipped (predicted {predicted:.0f} s > '
                                   f'{budget:.0f} s budget)')
            given_up = 'a smaller size was over budget'
        else:
            row['toponetx'] = run_worker('toponetx', num_edges, 1, 'cpu',
                                         timeout=budget)
            if 'time' in row['toponetx']:
                last = (num_edges, row['toponetx']['time'])
            elif row['toponetx']['note'].startswith('stopped'):  # (not a failure)
                given_up = 'a smaller size did not finish'
        rows.append(row)
        print(json.dumps(row), flush=True)

    load.append(os.getloadavg()[0])
    text = table(rows, args.device)
    summary = verdicts(rows)
    print('\n' + text + '\n\n' + summary)
    if not args.quick and not args.no_results:
        command = _report.command_line('lifting')
        versions = _versions()
        baseline = (f' "baseline" is the same lift with the package in '
                    f'`{args.baseline}`, timed right after ours at each size.'
                    if args.baseline else '')
        block = (
            f'Command: `{command.strip()}` ({datetime.date.today().isoformat()}).\n'
            f'Machine: {_report.cpu_name()}; {versions}.\n\n'
            f'Random geometric graphs in the unit square, mean degree about {DEGREE}, '
            f'lifted to clique 2-complexes. "ours" is `LiftToCliqueComplex(max_order=2)` '
            f'to a complete `SimplicialComplexData` (B_1, B_2, lower/upper/normalised '
            f'Hodge Laplacians of orders 0..2), median of {repeats} runs; TopoNetX is '
            f'`graph_to_clique_complex(G, max_rank=2)` plus its signed incidence '
            f'matrices B_1, B_2 only, one run, capped at {budget:.0f} s. Memory: peak '
            f'resident set (`ru_maxrss`) of a fresh process per measurement, and its '
            f'growth over the resident set before the lift, in GB (10^9 bytes). CPU is the process\'s user + '
            f'system time; the 1-minute load average was {load[0]:.1f} at the start and '
            f'{load[1]:.1f} at the end (other jobs share the cores; wall times grow with '
            f'it).{baseline}\n\n{text}\n\n{summary}\n')
        _report.write_results(args.results, 'Lifting', 'lifting.py', block, args.device)
        print(f'\nwrote {args.results}')


def _versions() -> str:
    import importlib.metadata as metadata
    names = ['torch', 'torch_geometric', 'gudhi', 'numpy', 'scipy', 'toponetx',
             'networkx']
    out = []
    for name in names:
        try:
            out.append(f'{name} {metadata.version(name)}')
        except metadata.PackageNotFoundError:
            pass
    return ', '.join(out + [f'Python {platform.python_version()}'])


if __name__ == '__main__':
    main()
