"""Scaling of one SANConv layer against the number of simplices.

Times forward + backward and measures the peak memory of one layer
(F = 32 features, J_u = J_d = 2, J_h = 5, one head) on the edges of Delaunay
2-complexes of random points, side by side in the same run with

* ``SANConv``: the layer as a user calls it on one complex (one
  ``SimplicialOperators`` value, whose forms are derived at the first step and
  kept on it), and ``SANConv (rebuilt)``: a new value every step, so every form
  is derived anew, as for a new batch of complexes each step;
* ``dense``: the same equations with N x N matrices and explicit matrix powers
  (:func:`torch_geometric_san.nn.dense_san_conv`), skipped where it would not fit;
* ``GATConv``: PyG's graph attention on the union of the upper and lower
  adjacency, same F (one attention hop: a floor for the layer);
* ``TopoModelX``: ``topomodelx.nn.simplicial.san_layer.SANLayer`` (same F,
  two filters per branch, the harmonic projection given as a precomputed sparse
  matrix), where the package is installed (``pip install --no-deps topomodelx``).

Each size runs twice, on the complex in the order it is built in (edges
numbered lexicographically by the ids of random points, so neighbouring edges
lie far apart in memory) and after
:class:`~torch_geometric_san.transforms.ReorderSimplices` (the package's
locality renumbering, whose cost is reported); SANConv and GATConv run in both
orders and are compared on the same order, the other methods in the first order
only (the N x N ones do not depend on it).

On CPU, peak memory is measured for each method in a fresh subprocess, as the
growth of the resident set (``ru_maxrss``) after loading the inputs, and the
three fast methods are then timed in one process, round-robin (one step of each
in turn), so that a change of load on a shared machine hits them alike and
their ratios stay meaningful. On CUDA, one process per size runs every method:
the peak memory of each one's first step over what was allocated before it
(``torch.cuda.max_memory_allocated`` after ``reset_peak_memory_stats``), then
all of them timed round-robin; CUDA is initialised once per size. Time is the
median of the repeats after one warm-up call.

Examples::

    python benchmarks/scaling.py --quick
    python benchmarks/scaling.py --results docs/results.md
    python benchmarks/scaling.py --device cuda --sizes 1000 100000 1000000
    python benchmarks/scaling.py --sizes 100000 --orders locality --methods san gat
"""
import argparse
import datetime
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Callable, Dict, List, Optional

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg
import scipy.spatial
import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import _report  # noqa: E402

CHANNELS = 32
LAYER = dict(J_up=2, J_down=2, J_harmonic=5, eps=0.9, heads=1)
SIZES = [1_000, 3_000, 9_000, 30_000, 100_000, 300_000, 1_000_000]
QUICK_SIZES = [1_000, 3_000, 9_000, 30_000]
METHODS = ['san', 'san_rebuilt', 'gat', 'dense', 'topomodelx']
LABELS = {'san': 'SANConv', 'san_rebuilt': 'SANConv (rebuilt)', 'gat': 'GATConv',
          'dense': 'dense', 'topomodelx': 'TopoModelX SANLayer'}
# Timed round-robin in one process (memory in a process of their own).
INTERLEAVED = ('san', 'san_rebuilt', 'gat')
# Orders of the simplices: as built, and renumbered by ReorderSimplices (on
# which SANConv's scaling target is judged: the layer as the package lets a
# user run it), with GATConv as its baseline; every method runs on the first.
ORDERS = ('random', 'locality')
LOCALITY_METHODS = ('san', 'gat')
# The results section of a run with --keep-freed-memory.
KEPT = 'Scaling, freed memory kept'
# Largest number of edges for the N x N methods (about 16 float32 N x N
# matrices live at once in the dense formulation and in TopoModelX).
DENSE_LIMIT = 12_000
QUICK_DENSE_LIMIT = 1_500  # --quick: the N x N methods take minutes at 9,000 edges


def delaunay_complex(num_edges: int, seed: int = 0):
    """The Delaunay 2-complex of random points with about `num_edges` edges
    (E ~ 3V), built with the package's data model; its edges are numbered
    lexicographically by the (random) ids of their points."""
    from torch_geometric_san.data import SimplicialComplexData

    points = np.random.default_rng(seed).random((max(4, num_edges // 3), 2))
    triangles = np.sort(scipy.spatial.Delaunay(points).simplices, axis=1)
    return SimplicialComplexData.from_simplices(triangles, close=True)


def operator_inputs(data) -> Dict[str, torch.Tensor]:
    """The order-1 operators of a complex, as the workers load them."""
    inputs = dict(num_edges=torch.tensor(data.num_simplices(1)))
    for name in ('up', 'down', 'hodge'):
        index, weight = getattr(data, f'{name}_laplacian')(1)
        inputs[f'{name}_index'], inputs[f'{name}_weight'] = index, weight
    return inputs


# Workers (one process per method and size) -------------------------------------


def build(method: str, inputs: Dict[str, torch.Tensor], device: torch.device):
    """Returns a closure running one forward + backward."""
    from torch_geometric_san.nn import SANConv, dense_san_conv
    from torch_geometric_san.sparse import SimplicialOperators

    n = int(inputs['num_edges'])
    torch.manual_seed(0)
    x = torch.randn(n, CHANNELS, device=device, requires_grad=True)
    ops = [inputs[f'{name}_{part}'].to(device) for name in ('up', 'down', 'hodge')
           for part in ('index', 'weight')]

    if method == 'san':  # one operators value, its forms derived at the first step
        conv = SANConv(CHANNELS, CHANNELS, **LAYER).to(device)
        value = SimplicialOperators.from_inputs(n, *ops)
        return lambda: conv(x, value).sum().backward()

    if method == 'san_rebuilt':  # a new value every step: every form derived anew
        conv = SANConv(CHANNELS, CHANNELS, **LAYER).to(device)
        return lambda: conv(x, SimplicialOperators.from_inputs(n, *ops)).sum().backward()

    if method == 'gat':
        from torch_geometric.nn import GATConv
        from torch_geometric.utils import coalesce, remove_self_loops

        union = torch.cat([ops[0], ops[2]], dim=1)
        union, _ = remove_self_loops(coalesce(union, num_nodes=n))
        conv = GATConv(CHANNELS, CHANNELS).to(device)
        return lambda: conv(x, union).sum().backward()

    def dense(index, weight):
        return torch.sparse_coo_tensor(index.flip(0), weight, (n, n),
                                       check_invariants=True).to_dense()

    up, down, hodge = (dense(ops[i], ops[i + 1]) for i in (0, 2, 4))
    if method == 'dense':
        conv = SANConv(CHANNELS, CHANNELS, **LAYER).to(device)
        return lambda: dense_san_conv(conv, x, up, down, hodge).sum().backward()

    if method == 'topomodelx':
        from topomodelx.nn.simplicial.san_layer import SANLayer

        layer = SANLayer(CHANNELS, CHANNELS, n_filters=LAYER['J_up']).to(device)
        index, weight = inputs['hodge_index'].numpy(), inputs['hodge_weight'].numpy()
        shift = sp.eye_array(n, format='csr') - LAYER['eps'] * sp.csr_array(
            (weight, (index[1], index[0])), shape=(n, n))
        projection = sp.linalg.matrix_power(shift, LAYER['J_harmonic']).tocoo()
        projection = torch.sparse_coo_tensor(
            np.vstack([projection.row, projection.col]), projection.data, (n, n),
            dtype=torch.float32, device=device)
        up, down = up.to_sparse(), down.to_sparse()
        return lambda: layer(x, up, down, projection).sum().backward()

    raise ValueError(f"unknown method {method!r}")


def peak_meter(device: torch.device) -> Optional[Callable[[Callable[[], None]], float]]:
    """Where the device reports peak memory per call (CUDA): a function running a
    step and returning its peak memory over what was allocated before it, in MB;
    else (CPU) None, and each method needs a process of its own (``ru_maxrss``)."""
    if device.type != 'cuda':
        return None

    def measure(step: Callable[[], None]) -> float:
        torch.cuda.synchronize(device)
        base = torch.cuda.memory_allocated(device)
        torch.cuda.reset_peak_memory_stats(device)
        step()
        torch.cuda.synchronize(device)
        return (torch.cuda.max_memory_allocated(device) - base) / 2**20

    return measure


def worker(methods: str, path: str, device: str, repeats: int,
           threads: Optional[int], meter=peak_meter) -> Dict:
    """One method: its time and peak memory. Several (comma-separated): their
    times, measured round-robin (one step of each in turn) so that a change of
    load on a shared machine hits all of them alike, and, where the device
    reports peak memory per call (:func:`peak_meter`), the peak memory of each
    one's first step."""
    device = torch.device(device)
    if threads:
        torch.set_num_threads(threads)
    import _common
    _common.load_kernels(device)  # not inside the warm-up or the peak of memory
    inputs = torch.load(path, weights_only=True)  # (the default since torch 2.6)
    names = methods.split(',')
    peak = meter(device)

    def sync():
        if device.type == 'cuda':
            torch.cuda.synchronize()

    def timed(step) -> float:
        start = time.perf_counter()
        step()
        sync()
        return time.perf_counter() - start

    if len(names) > 1:
        steps = {name: build(name, inputs, device) for name in names}
        peaks = {name: peak(step) if peak else timed(step)  # the warm-up
                 for name, step in steps.items()}
        times: Dict[str, List[float]] = {name: [] for name in names}
        for _ in range(repeats):
            for name, step in steps.items():
                times[name].append(timed(step))
        return {name: dict(ms=1e3 * statistics.median(t), repeats=len(t),
                           **(dict(peak_mb=peaks[name]) if peak else {}))
                for name, t in times.items()}

    step = build(names[0], inputs, device)
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    start = time.perf_counter()
    # A warm-up, or the measurement of a step over 20 s.
    peak_mb = peak(step) if peak else None
    first = time.perf_counter() - start if peak else timed(step)
    times = [first] if first > 20 else [timed(step) for _ in range(repeats)]
    if peak_mb is None:
        peak_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - base) / 2**20
    return dict(ms=1e3 * statistics.median(times), peak_mb=peak_mb, repeats=len(times))


# Driver --------------------------------------------------------------------------


def available(method: str, num_edges: int, dense_limit: int) -> Optional[str]:
    """None if `method` can run at this size, else why not."""
    if method in ('dense', 'topomodelx') and num_edges > dense_limit:
        return ('N x N: does not fit' if dense_limit == DENSE_LIMIT else
                'N x N: skipped by --quick')
    if method == 'topomodelx':
        try:
            import topomodelx  # noqa: F401
        except ImportError:
            return 'not installed'
    return None


def run_worker(method: str, path: str, device: str, repeats: int,
               timeout: float, threads: Optional[int] = None,
               keep_freed_memory: bool = False) -> Dict:
    command = [sys.executable, os.path.abspath(__file__), '--worker', method, path,
               '--device', device, '--repeats', str(repeats)]
    if threads:
        command += ['--threads', str(threads)]
    if keep_freed_memory:
        command += ['--keep-freed-memory']
    try:
        result = subprocess.run(command, capture_output=True, text=True,
                                timeout=timeout)
    except subprocess.TimeoutExpired:
        return dict(error=f'timeout ({timeout:.0f} s)')
    if result.returncode != 0:
        last = (result.stderr.strip().splitlines() or ['?'])[-1]
        return dict(error='failed: ' + last[:80])
    return json.loads(result.stdout.strip().splitlines()[-1])


def merge(results: Dict, methods: List[str], answer: Dict) -> None:
    """Adds a worker's answer for several :obj:`methods` to :obj:`results` (its
    error for each method it lacks)."""
    for method in methods:
        if method in answer:
            results.setdefault(method, {}).update(answer[method])
        else:
            results[method] = dict(error=answer.get('error', 'failed'))


def fmt(value: Optional[float], digits: int = 1) -> str:
    return '—' if value is None else f'{value:,.{digits}f}'


def ratio(results: Dict, a: str, b: str) -> Optional[float]:
    if 'ms' in results.get(a, {}) and 'ms' in results.get(b, {}):
        return results[a]['ms'] / results[b]['ms']
    return None


def per_edge(row: Dict, method: str = 'san') -> Optional[float]:
    """Microseconds per edge of `method` in `row`, if timed."""
    result = row['results'].get(method, {})
    return 1e3 * result['ms'] / row['num_edges'] if 'ms' in result else None


def table(rows: List[Dict]) -> str:
    head = ('| edges | order | nnz L_u / L_d / L | reorder s | ' + ' | '.join(
        f'{LABELS[m]} ms' for m in METHODS) + ' | SANConv us / edge | SAN / GAT | '
            'SAN rebuilt / GAT | dense / SAN | TopoModelX / SAN | peak MB SAN | '
            'peak MB SAN rebuilt | peak MB GAT |')
    lines = [head, '|' + '---|' * (head.count('|') - 1)]
    for row in rows:
        res = row['results']

        def cell(m):
            r = res.get(m, {})
            return fmt(r.get('ms')) if 'ms' in r else r.get('error', r.get('skip', '—'))

        def mem(m):
            return fmt(res.get(m, {}).get('peak_mb'))

        lines.append(
            f"| {row['num_edges']:,} | {row['order']} | {row['nnz']} | "
            f"{fmt(row.get('reorder_s'), 2)} | "
            + ' | '.join(cell(m) for m in METHODS)
            + f" | {fmt(per_edge(row), 2)}"
            f" | {fmt(ratio(res, 'san', 'gat'), 2)}"
            f" | {fmt(ratio(res, 'san_rebuilt', 'gat'), 2)}"
            f" | {fmt(ratio(res, 'dense', 'san'), 0)}"
            f" | {fmt(ratio(res, 'topomodelx', 'san'), 0)}"
            f" | {mem('san')} | {mem('san_rebuilt')} | {mem('gat')} |")
    return '\n'.join(lines)


def linearity(rows: List[Dict]) -> Optional[str]:
    """SANConv's time per edge over the rows from 10^4 edges on: the values,
    their spread (max / min) and the slope of log time against log edges."""
    large = [r for r in rows if r['num_edges'] >= 10_000 and per_edge(r) is not None]
    if len(large) < 2:
        return None
    values = [per_edge(r) for r in large]
    spread = max(values) / min(values)
    slope = np.polyfit(np.log([r['num_edges'] for r in large]),
                       np.log([r['results']['san']['ms'] for r in large]), 1)[0]
    verdict = 'linear' if spread <= 2 else 'NOT linear'
    return (f"{large[0]['num_edges']:,} to {large[-1]['num_edges']:,} edges: "
            + ', '.join(f'{v:.2f}' for v in values)
            + f" us (max/min {spread:.2f}, log-log slope {slope:.2f}): {verdict} "
            f"(time per edge within 2x)")


def targets(rows: List[Dict]) -> str:
    """The issue's targets, judged on the measured rows."""
    lines = []
    by_order = {order: [r for r in rows if r['order'] == order] for order in ORDERS}
    # the N x N methods ran on the first order of the command line only
    first = next((order for order in ORDERS if any(
        m in r['results'] for r in by_order[order] for m in ('topomodelx', 'dense'))),
        next((order for order in ORDERS if by_order[order]), ORDERS[0]))
    timed = [r for r in rows if 'ms' in r['results'].get('san', {})]
    near = [r for r in by_order[first] if 5_000 <= r['num_edges'] <= 15_000
            and 'ms' in r['results'].get('san', {})]
    for row in near:
        res = row['results']
        for other in [m for m in ('topomodelx', 'dense') if m in res]:
            value = ratio(res, other, 'san')
            verdict = ('not measured: ' + str(res.get(other, {}).get('skip') or
                                               res.get(other, {}).get('error'))
                       if value is None else
                       f"{value:,.0f}x slower than SANConv: "
                       f"{'met' if value >= 500 else 'NOT met'} (>= 500x)")
            lines.append(f"- {row['num_edges']:,} edges ({row['order']} order), "
                         f"{LABELS[other]}: {verdict}")
    ratios = [(ratio(r['results'], 'san', 'gat'), r['num_edges'], r['order'])
              for r in timed if ratio(r['results'], 'san', 'gat') is not None]
    if ratios:
        worst, at, order = max(ratios)
        lines.append(f"- SANConv / GATConv (same order) at most {worst:.2f} (at "
                     f"{at:,} edges, {order} order): "
                     f"{'met' if worst <= 3 else 'NOT met'} (<= 3 at every size)")
    for order, role in (('locality', 'the target is judged on this order: '
                                     'ReorderSimplices, then SANConv'),
                        ('random', 'as built, for reference')):
        line = linearity(by_order[order])
        if line is not None:
            lines.append(f"- SANConv time per edge, {order} order ({role}), {line}")
    for order in ORDERS:
        # the target is set at 10^6 edges: a larger complex needs more
        big = [r for r in by_order[order] if 900_000 <= r['num_edges'] <= 1_100_000
               and 'peak_mb' in r['results'].get('san', {})]
        for row in big:
            peak = row['results']['san']['peak_mb']
            lines.append(f"- SANConv peak memory at {row['num_edges']:,} edges "
                         f"({order} order): {peak:,.0f} MB: "
                         f"{'met' if peak <= 4096 else 'NOT met'} (<= 4 GB)")
    for row in by_order['locality'][-1:]:
        if row.get('reorder_s') is not None and 'ms' in row['results'].get('san', {}):
            steps = 1e3 * row['reorder_s'] / row['results']['san']['ms']
            lines.append(f"- ReorderSimplices at {row['num_edges']:,} edges: "
                         f"{row['reorder_s']:.2f} s once per complex "
                         f"({steps:.1f} SANConv forward + backward steps)")
    return '\n'.join(lines)


def plot(rows: List[Dict], path: str, device: str) -> None:
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    fig, (ax_time, ax_edge, ax_mem) = plt.subplots(1, 3, figsize=(15, 4.4))
    for order, style in zip(ORDERS, ('o-', 's--')):
        for color, method in enumerate(METHODS):
            points = [row for row in rows if row['order'] == order
                      and 'ms' in row['results'].get(method, {})]
            if not points:
                continue
            edges = [row['num_edges'] for row in points]
            label = f"{LABELS[method]}, {order}"
            kwargs = dict(color=f'C{color}', label=label)
            ax_time.plot(edges, [row['results'][method]['ms'] for row in points],
                         style, **kwargs)
            ax_edge.plot(edges, [per_edge(row, method) for row in points], style,
                         **kwargs)
            ax_mem.plot(edges, [max(row['results'][method]['peak_mb'], 1e-1)
                                for row in points], style, **kwargs)
    for ax, label in ((ax_time, 'forward + backward (ms)'),
                      (ax_edge, 'forward + backward per edge (us)'),
                      (ax_mem, 'peak memory over inputs (MB)')):
        ax.set_xscale('log')
        ax.set_yscale('log')
        ax.set_xlabel('edges (Delaunay 2-complex)')
        ax.set_ylabel(label)
        ax.grid(True, which='both', alpha=0.3)
    ax_time.legend(fontsize=7)
    fig.suptitle(f'One SAN layer, F = {CHANNELS}, J_u = J_d = 2, J_h = 5 ({device}); '
                 'solid: random order (as built), dashed: ReorderSimplices')
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def machine(device: str) -> str:
    if device.startswith('cuda'):
        return torch.cuda.get_device_name(torch.device(device))
    return f'{_report.cpu_name()}, torch {torch.__version__}'


def threads_used(threads: Optional[int]) -> int:
    return threads or torch.get_num_threads()


def measure(data, methods: List[str], tmp: str, args, repeats: int,
            **row) -> Dict:
    """Times and peak memory of `methods` on the order-1 operators of `data`,
    as a row of the table (with the extra fields `row`)."""
    inputs = operator_inputs(data)
    num_edges = int(inputs['num_edges'])
    nnz = ' / '.join(f"{inputs[f'{n}_index'].size(1):,}"
                     for n in ('up', 'down', 'hodge'))
    path = os.path.join(tmp, 'inputs.pt')
    torch.save(inputs, path)
    del inputs
    limit = QUICK_DENSE_LIMIT if args.quick else DENSE_LIMIT
    results = {method: dict(skip=reason) for method in methods
               if (reason := available(method, num_edges, limit))}
    runnable = [m for m in methods if m not in results]

    def run(names: List[str], steps: int) -> Dict:
        return run_worker(','.join(names), path, args.device, steps, args.timeout,
                          args.threads, args.keep_freed_memory)

    if args.device.startswith('cuda') and len(runnable) > 1:
        # CUDA reports each method's peak memory in-process: one process per size,
        # every method timed round-robin (and CUDA initialised once).
        merge(results, runnable, run(runnable, repeats))
    else:
        interleave = len([m for m in runnable if m in INTERLEAVED]) > 1
        for method in runnable:
            one_step = interleave and method in INTERLEAVED
            results[method] = run([method], 1 if one_step else repeats)
        # The fast methods: peak memory above (one step), times round-robin.
        light = [m for m in runnable if m in INTERLEAVED and 'peak_mb' in results[m]]
        if interleave and light:
            merge(results, light, run(light, repeats))
    results = {m: results[m] for m in methods}
    return dict(num_edges=num_edges, nnz=nnz, results=results, **row)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--sizes', type=_report.at_least(1),
                        nargs='+', help='target numbers of edges')
    parser.add_argument('--quick', action='store_true',
                        help=f'sizes {QUICK_SIZES}, 3 repeats, N x N methods only '
                             f'up to {QUICK_DENSE_LIMIT:,} edges')
    parser.add_argument('--device', type=_report.device_name, default='cpu')
    parser.add_argument('--repeats', type=_report.at_least(1), default=None,
                        help='timed repeats after the warm-up (default 5, quick 3)')
    parser.add_argument('--methods', nargs='+', default=METHODS, choices=METHODS)
    parser.add_argument('--orders', nargs='+', default=list(ORDERS), choices=ORDERS,
                        help='orders of the simplices to run (the N x N methods '
                             'run on the first one only)')
    parser.add_argument('--threads', type=_report.at_least(1), default=None,
                        help='torch CPU threads per measurement (default: '
                             "torch's); 1 avoids the stalls of parallel regions "
                             'on a machine shared with other jobs')
    parser.add_argument('--keep-freed-memory', action='store_true',
                        help='call torch_geometric_san.utils.keep_freed_memory() in '
                             'each measurement process (glibc malloc keeps freed '
                             'memory: large tensors are then not page-faulted afresh '
                             "at every step) and write the section '## " + KEPT
                             + "' (default: the plain environment, '## Scaling')")
    parser.add_argument('--timeout', type=_report.real_in(0, low_open=True), default=1800,
                        help='seconds per measurement')
    parser.add_argument('--plot', default='benchmarks/scaling.png')
    parser.add_argument('--results', default=None,
                        help="markdown file whose '## Scaling' section (see "
                             "--keep-freed-memory) gets the new table; the "
                             "text outside its generated block is kept")
    parser.add_argument('--worker', nargs=2, metavar=('METHOD', 'INPUTS'),
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    for option, path in (('--plot', args.plot), ('--results', args.results)):
        # (checked before the measurements, which they come after)
        if path and not os.path.isdir(os.path.dirname(os.path.abspath(path))):
            parser.error(f"{option} {path}: its directory does not exist")

    repeats = args.repeats or (3 if args.quick else 5)
    if args.worker:
        if args.keep_freed_memory:
            from torch_geometric_san.utils import keep_freed_memory
            keep_freed_memory()
        print(json.dumps(worker(*args.worker, args.device, repeats, args.threads)))
        return

    sizes = args.sizes or (QUICK_SIZES if args.quick else SIZES)
    rows = []
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        for size in sizes:
            start = time.perf_counter()
            data = delaunay_complex(size)
            built = time.perf_counter() - start
            complexes = {'random': (data, None)}
            if 'locality' in args.orders:
                from torch_geometric_san.transforms import ReorderSimplices

                start = time.perf_counter()
                local = ReorderSimplices()(data)
                complexes['locality'] = (local, time.perf_counter() - start)
            for order in [o for o in ORDERS if o in args.orders]:
                methods = [m for m in args.methods
                           if order == args.orders[0] or m in LOCALITY_METHODS]
                rows.append(measure(complexes[order][0], methods, tmp, args, repeats,
                                    order=order, reorder_s=complexes[order][1]))
                summary = ', '.join(f"{m} {fmt(r.get('ms'))} ms" if 'ms' in r else
                                    f"{m} {r.get('skip') or r.get('error')}"
                                    for m, r in rows[-1]['results'].items())
                print(f"[{rows[-1]['num_edges']:,} edges, {order} order, built in "
                      f"{built:.1f} s, reordered in {fmt(complexes[order][1], 2)} s] "
                      f"{summary}", file=sys.stderr, flush=True)
            del data, complexes

    command = _report.command_line('scaling')
    markdown = table(rows) + '\n\n' + targets(rows)
    print(markdown)
    if args.plot:
        plot(rows, args.plot, args.device)
        print(f'\nplot: {args.plot}')
    if args.results:
        section = (
            f'Command: `{command.strip()}`  \n'
            f'Machine: {machine(args.device)}, {threads_used(args.threads)} torch '
            'thread(s) per measurement  \n'
            f'Date: {datetime.date.today().isoformat()}; load average before the run '
            f'{load:.2f}, after {os.getloadavg()[0]:.2f}  \n'
            'Allocator: ' + ('glibc malloc keeping freed memory '
                             '(`torch_geometric_san.utils.keep_freed_memory()` in '
                             'each measurement process)' if args.keep_freed_memory
                             else 'the plain environment (glibc malloc defaults)')
            + '\n\n'
            f'One layer, F = {CHANNELS}, J_u = J_d = 2, J_h = 5, one head, on the '
            'edges of Delaunay 2-complexes; forward + backward, median of the '
            f'{repeats} repeats after a warm-up (SANConv and GATConv timed '
            'round-robin in one process); peak memory over the inputs. '
            + (f'Plot: `{args.plot}`.' if args.plot else 'No plot.') + '\n\n'
            'Each size runs in two orders of the edges: *random*, the order the '
            'complex is built in (edges numbered lexicographically by the ids of '
            'random points, so neighbouring edges lie far apart in memory), and '
            '*locality*, after `torch_geometric_san.transforms.ReorderSimplices` '
            '(reverse Cuthill-McKee order of the vertices; column *reorder s*: its '
            'cost, paid once per complex). GATConv runs on the same order as the '
            'SANConv it is compared with; the other methods run in the '
            f'{args.orders[0]} order only (the first of --orders). The linear-time '
            'target is judged on the locality order, the '
            'layer as the package lets a user run it on a large complex; the '
            'random-order times stay in the table.\n\n' + markdown + '\n\n')
        title, key = ((KEPT, 'scaling.py --keep-freed-memory') if args.keep_freed_memory
                      else ('Scaling', 'scaling.py'))
        _report.write_results(args.results, title, key, section, args.device)


if __name__ == '__main__':
    main()
