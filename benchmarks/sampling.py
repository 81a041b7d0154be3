"""Neighbour-sampled training on one large complex (SimplicialNeighborLoader).

An edge-level task on Delaunay complexes of random points in the unit square
(``--points``: 3.35e5 points, about 1e6 edges; ``--large-points``: 3.35e6
points, about 1e7 edges), with one torch thread per process. Flow denoising: the
edge flow is the gradient of a smooth potential on the vertices, the input that
flow plus Gaussian noise (std ``--noise``), the target the clean flow; a 2-layer
SAN (F = 16, J_u = J_d = J_h = 1) trained with Adam (lr 0.01) on 80 % of the edges
(seeds), its mean squared error measured on 2,000 held-out edges with all
neighbours of two hops (exact). Measured:

* sampler speed (1e6 edges): seeds per second of the neighbour sampler alone
  (``SimplicialNeighborSampler.sample``, fan-out ``--fanout``) and of the whole
  collation (sampling and the sub-complex with its operators), median of
  ``--repeats`` batches, per second of wall-clock and of CPU time;
* training with the loader, each run in a fresh process that loads the saved
  complex (``--memory-steps`` steps per batch size of ``--batch-sizes``): seeds
  per second of training (wall, CPU), the resident set after loading the complex
  and building the loader, and the peak resident set of the process (``VmHWM``)
  over the loader's construction and over the training steps, on the 1e6-edge
  complex (with its Laplacians, which the loader does not read) and on the large
  one (built with ``laplacians=False`` in a process of its own, whose peak is
  reported too);
* time to the full-batch error (1e6 edges): the SAN trained full batch until its
  held-out error stops improving (by less than 0.5 % over 3 evaluations, one
  every 5 steps; at most ``--full-steps`` steps), then the same SAN (same
  initialisation) trained with the loader (batch ``--train-batch``), its
  held-out error checked every ``--eval-every`` steps: the training time
  (evaluations excluded) of each to the full-batch model's best held-out error,
  the loader's at most ``--max-seconds``;
* hubs (``--hub-points``): the collation time of a batch of 1,024 vertex seeds
  (order 0, fan-out ``--fanout``) on the Delaunay complex of that many points,
  and with one more vertex joined by an edge to every other one (a hub of that
  degree, which every batch then holds), the same seeds, median of
  ``--repeats`` batches: what the hub adds to a batch;
* exactness on real data: on the citation complex (``CitationComplexDataset``,
  order 1, float64), the largest difference between the seeds' outputs of sampled
  batches with all neighbours of two hops and the full-batch outputs of the same
  SAN, over all 1-simplices as seeds.

Writes its block to docs/results.md (``--no-results`` to skip)::

    python benchmarks/sampling.py [--quick] [--device cuda]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Sequence

import numpy as np
import scipy.spatial
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402
from torch_geometric_san.data import SimplicialComplexData  # noqa: E402
from torch_geometric_san.datasets import CitationComplexDataset  # noqa: E402
from torch_geometric_san.loader import SimplicialNeighborLoader  # noqa: E402
from torch_geometric_san.nn.models import SAN  # noqa: E402

CHANNELS = 16
LAYER = dict(J_up=1, J_down=1, J_harmonic=1)
HOPS_OF_MODEL = 2  # receptive field of the 2-layer SAN: one hop per layer


def flow_complex(num_points: int, noise: float, seed: int = 0,
                 laplacians: bool = True) -> SimplicialComplexData:
    """The Delaunay complex with a gradient flow ``y`` on its edges (scaled to unit
    standard deviation) and ``x_1`` = ``y`` plus Gaussian noise of std
    :obj:`noise`; without its Laplacians unless :obj:`laplacians`."""
    rng = np.random.default_rng(seed)
    points = rng.random((num_points, 2))
    triangles = np.sort(scipy.spatial.Delaunay(points).simplices, axis=1)
    potential = torch.from_numpy(np.sin(3 * np.pi * points[:, 0]) *
                                 np.cos(2 * np.pi * points[:, 1])).float()
    del points
    data = SimplicialComplexData.from_simplices([triangles], close=True,
                                                laplacians=laplacians)
    del triangles
    edges = data.simplices_1
    flow = (potential[edges[:, 1]] - potential[edges[:, 0]]).view(-1, 1)
    data.y = flow / flow.std()
    generator = torch.Generator().manual_seed(seed)
    data.x_1 = data.y + noise * torch.randn(data.y.shape, generator=generator)
    return data


def make_model(seed: int = 0) -> SAN:
    torch.manual_seed(seed)
    return SAN(1, CHANNELS, num_layers=2, out_channels=1, order=1, conv_kwargs=LAYER)


def sampler_speed(data: SimplicialComplexData, batch_sizes: Sequence[int],
                  num_neighbors: List[int], repeats: int) -> List[Dict]:
    """Seeds per second (of wall-clock time and of this process's CPU time) of the
    sampler alone and of the whole collation."""
    out = []
    order = torch.randperm(data.num_simplices(1),
                           generator=torch.Generator().manual_seed(0))
    train = _split(data.num_simplices(1))[1].numel()  # (the loader runs' seeds)
    for batch_size in batch_sizes:
        _check_batch_size(batch_size, train)
        loader = SimplicialNeighborLoader(data, num_neighbors, order=1,
                                          batch_size=batch_size)
        times: Dict[str, List[float]] = {name: [] for name in (
            'sample', 'sample_cpu', 'collate', 'collate_cpu')}
        sizes = []
        for r in range(repeats):
            index = torch.arange(r * batch_size, (r + 1) * batch_size) % order.numel()
            for name, run in (
                    ('sample', lambda: loader.simplex_sampler.sample(
                        loader.input_ids[order[index]])),
                    ('collate', lambda: loader.collate_fn(order[index]))):
                wall, cpu = time.perf_counter(), time.process_time()
                result = run()
                times[f'{name}_cpu'].append(time.process_time() - cpu)
                times[name].append(time.perf_counter() - wall)
                if name == 'sample':
                    sizes.append(result[0].numel())
        out.append(dict(batch_size=batch_size, simplices=float(np.mean(sizes)),
                        **{name: batch_size / float(np.median(t))
                           for name, t in times.items()}))
        print(out[-1], flush=True)
    return out


def _check_batch_size(batch_size: int, seeds: int) -> None:
    # A batch of more seeds than there are would repeat seeds: the speeds would
    # count simplices sampled twice (or a slice past the end, none at all).
    if batch_size > seeds:
        raise ValueError(f"a batch size of {batch_size} is more than the {seeds} "
                         f"training seeds of the complex: take a smaller one or a "
                         f"larger complex")


def _status_kb(field: str) -> int:
    # A field of /proc/self/status (Linux), in kB.
    for line in Path('/proc/self/status').read_text().splitlines():
        if line.startswith(field + ':'):
            return int(line.split()[1])
    raise RuntimeError(f'no {field} in /proc/self/status')


def _reset_peak() -> None:
    # Resets VmHWM to VmRSS (Linux).
    Path('/proc/self/clear_refs').write_text('5')


def _split(num_edges: int, seed: int = 0):
    # Held-out edges (2,000, a fifth on small complexes) and training seeds (80 %).
    perm = torch.randperm(num_edges, generator=torch.Generator().manual_seed(seed))
    held_out = min(2000, num_edges // 5)
    return perm[:held_out], perm[held_out:][:int(0.8 * num_edges)]


def held_out_error(model: SAN, data: SimplicialComplexData, test: torch.Tensor,
                   device: str) -> float:
    """Mean squared error on the edges :obj:`test`, from exact sampled batches."""
    model.eval()
    loader = SimplicialNeighborLoader(data, [-1] * HOPS_OF_MODEL, order=1,
                                      input_simplices=test, batch_size=500)
    errors = []
    with torch.no_grad():
        for batch in loader:
            batch = batch.to(device)
            out = model(batch)[:batch.batch_size]
            errors.append((out - batch.y[:batch.batch_size]).pow(2).view(-1).cpu())
    model.train()
    return float(torch.cat(errors).mean())


def _loss(model: SAN, batch: SimplicialComplexData) -> torch.Tensor:
    out = model(batch)[:batch.batch_size]
    return (out - batch.y[:batch.batch_size]).pow(2).mean()


def loader_run(path: str, batch_size: int, steps: int, num_neighbors: List[int],
               device: str = 'cpu') -> Dict:
    """In this process: load the complex at :obj:`path`, build the loader and train
    :obj:`steps` sampled steps; resident sets, peaks, speeds and the held-out error."""
    torch.set_num_threads(1)
    _common.load_kernels(device)  # before the baselines of memory and time
    _reset_peak()
    base = _status_kb('VmRSS')
    data = torch.load(path, weights_only=True)  # (the default since torch 2.6)
    loaded = _status_kb('VmRSS')
    test, train = _split(data.num_simplices(1))
    _check_batch_size(batch_size, train.numel())
    start = time.perf_counter()
    loader = SimplicialNeighborLoader(data, num_neighbors, order=1, input_simplices=train,
                                      batch_size=batch_size, shuffle=True)
    build = time.perf_counter() - start
    ready, build_peak = _status_kb('VmRSS'), _status_kb('VmHWM')
    model = make_model().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    # The growth is counted from the resident set at the reset of the peak, not
    # from `ready`: memory freed in between (a garbage collection) would make it
    # negative.
    _reset_peak()
    start_rss = _status_kb('VmRSS')
    sizes, done, seeds_done = [], 0, 0
    wall, cpu = time.perf_counter(), time.process_time()
    for batch in _cycle(loader, steps):
        batch = batch.to(device)
        optimizer.zero_grad()
        _loss(model, batch).backward()
        optimizer.step()
        sizes.append(batch.num_simplices(1))
        done += 1
        seeds_done += batch.batch_size  # (the last batch of an epoch has fewer)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    train_peak = _status_kb('VmHWM')
    sample_cpu = []
    for r in range(5):  # (whole batches of distinct seeds, wrapping around)
        seeds = train[torch.arange(r * batch_size, (r + 1) * batch_size) % train.numel()]
        start = time.process_time()
        loader.simplex_sampler.sample(seeds)
        sample_cpu.append(time.process_time() - start)
    mb = 1 / 1024
    return dict(edges=data.num_simplices(1), batch_size=batch_size, steps=done,
                simplices=float(np.mean(sizes)), data_mb=(loaded - base) * mb,
                ready_mb=ready * mb, build_peak_mb=build_peak * mb,
                train_peak_mb=train_peak * mb, growth_mb=(train_peak - start_rss) * mb,
                build_seconds=build, train_wall=seeds_done / wall,
                train_cpu=seeds_done / cpu,
                sample_cpu=batch_size / float(np.median(sample_cpu)),
                mse=held_out_error(model, data, test, device))


def _cycle(loader: SimplicialNeighborLoader, steps: int):
    # `steps` batches of the loader, over as many epochs as it takes.
    done = 0
    while done < steps:
        for batch in loader:
            yield batch
            done += 1
            if done == steps:
                return


def _worker(args: List[str]) -> Dict:
    # Runs `python sampling.py --worker ...` and returns its JSON line.
    result = subprocess.run([sys.executable, __file__, '--worker'] + args,
                            capture_output=True, text=True)
    if result.returncode != 0:  # (the worker's own error, not just its exit status)
        raise RuntimeError(f"the worker {' '.join(args)} failed:\n"
                           f"{result.stderr.strip()[-2000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def build_large(num_points: int, noise: float, path: str) -> Dict:
    """In this process: the complex without its Laplacians, saved to :obj:`path`;
    its size, build time and the peak resident set of the build."""
    torch.set_num_threads(1)
    start = time.perf_counter()
    data = flow_complex(num_points, noise, laplacians=False)
    seconds = time.perf_counter() - start
    torch.save(data, path)
    tensors = sum(value.numel() * value.element_size() for value in data.values()
                  if isinstance(value, torch.Tensor))
    return dict(edges=data.num_simplices(1), triangles=data.num_simplices(2),
                seconds=seconds, peak_mb=_status_kb('VmHWM') / 1024,
                tensors_mb=tensors / 2**20)


def loader_rows(path: str, batch_sizes: Sequence[int], steps: int,
                num_neighbors: List[int], device: str) -> List[Dict]:
    """:func:`loader_run` of each batch size, each in a fresh process."""
    out = []
    for batch_size in batch_sizes:
        out.append(_worker(['run', path, '--batch-size', str(batch_size), '--steps',
                            str(steps), '--fanout', ','.join(map(str, num_neighbors)),
                            '--device', device]))
        print(out[-1], flush=True)
    return out


def time_to_accuracy(data: SimplicialComplexData, num_neighbors: List[int],
                     batch_size: int, full_steps: int, eval_every: int,
                     max_seconds: float, device: str, seed: int = 0,
                     full_eval_every: int = 5, tolerance: float = 0.005,
                     patience: int = 3) -> Dict:
    """Full-batch training until its held-out error stops improving (by less than
    :obj:`tolerance`, relative, over :obj:`patience` evaluations every
    :obj:`full_eval_every` steps; at most :obj:`full_steps` steps), then sampled
    training until it reaches the full-batch model's best held-out error
    (training time only, evaluations excluded, for both)."""
    test, train = _split(data.num_simplices(1), seed)
    mask = torch.zeros(data.num_simplices(1), dtype=torch.bool)
    mask[train] = True
    full = data.to(device)
    model = make_model(seed).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    mask = mask.to(device)
    full_curve = []  # (steps, seconds, CPU seconds, held-out error)
    seconds = cpu = 0.0
    for step in range(1, full_steps + 1):
        start, start_cpu = time.perf_counter(), time.process_time()
        optimizer.zero_grad()
        out = model(full)
        (out[mask] - full.y[mask]).pow(2).mean().backward()
        optimizer.step()
        del out
        seconds += time.perf_counter() - start
        cpu += time.process_time() - start_cpu
        if step % full_eval_every and step < full_steps:
            continue
        full_curve.append((step, seconds, cpu, held_out_error(model, data, test, device)))
        print('full batch', full_curve[-1], flush=True)
        errors = [e for *_, e in full_curve]
        if (len(errors) > patience and
                min(errors[-patience:]) > (1 - tolerance) * min(errors[:-patience])):
            break
    del full
    best = min(full_curve, key=lambda point: point[3])
    full_steps_done, target = full_curve[-1][0], best[3]
    print(f'full batch: {full_steps_done} steps, best held-out {target:.4f} after '
          f'{best[0]} steps, {best[1]:.0f} s', flush=True)
    model = make_model(seed).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    torch.manual_seed(seed)
    loader = SimplicialNeighborLoader(data, num_neighbors, order=1, input_simplices=train,
                                      batch_size=batch_size, shuffle=True)
    seconds, cpu, steps, curve = 0.0, 0.0, 0, []
    batches = _cycle(loader, 10**9)
    while seconds < max_seconds:
        start, start_cpu = time.perf_counter(), time.process_time()
        for _ in range(eval_every):
            batch = next(batches).to(device)
            optimizer.zero_grad()
            _loss(model, batch).backward()
            optimizer.step()
        seconds += time.perf_counter() - start
        cpu += time.process_time() - start_cpu
        steps += eval_every
        curve.append((steps, seconds, held_out_error(model, data, test, device)))
        print(curve[-1], flush=True)
        if curve[-1][2] <= target:
            break
    reached = curve[-1][2] <= target
    return dict(full_steps=full_steps_done, full_best_step=best[0],
                full_seconds=best[1], full_cpu=best[2], full_converged=full_steps_done
                < full_steps, full_eval_every=full_eval_every, tolerance=tolerance,
                patience=patience,
                target=target, reached=reached, steps=steps, seconds=seconds, cpu=cpu,
                best=min(error for _, _, error in curve),
                noise_mse=float((data.x_1[test] - data.y[test]).pow(2).mean()),
                zero_mse=float(data.y[test].pow(2).mean()))


def hub_complex(num_points: int, hub: bool) -> SimplicialComplexData:
    """The Delaunay complex of :obj:`num_points` random points, without its
    Laplacians; with vertex :obj:`num_points` joined by an edge to every other one
    if :obj:`hub`."""
    points = np.random.default_rng(0).random((num_points, 2))
    simplices = [np.sort(scipy.spatial.Delaunay(points).simplices, axis=1)]
    if hub:
        simplices.append(np.stack([np.arange(num_points), np.full(num_points, num_points)],
                                  1))
    return SimplicialComplexData.from_simplices(simplices, close=True, laplacians=False)


def hub_cost(hub_points: Sequence[int], num_neighbors: List[int],
             repeats: int) -> List[Dict]:
    """Median collation time of batches of 1,024 vertex seeds (the same ones) on the
    complexes of :func:`hub_complex` without and with the hub."""
    out = []
    for num_points in hub_points:
        row: Dict = dict(points=num_points)
        for hub in (False, True):
            data = hub_complex(num_points, hub)
            loader = SimplicialNeighborLoader(data, num_neighbors, order=0,
                                              batch_size=1024)
            generator = torch.Generator().manual_seed(0)
            times, sizes = [], []
            for _ in range(repeats + 1):  # (the first batch warms up)
                seeds = torch.randperm(num_points, generator=generator)[:1024]
                tic = time.perf_counter()
                batch = loader.collate_fn(seeds)
                times.append(time.perf_counter() - tic)
                sizes.append(batch.n_id.numel())
            row[f'ms_{int(hub)}'] = 1e3 * float(np.median(times[1:]))
            row[f'simplices_{int(hub)}'] = float(np.mean(sizes[1:]))
            del data, loader
        out.append(row)
        print(row, flush=True)
    return out


def citation_exactness(root: Path) -> Dict:
    """Largest |sampled - full| of the seeds' outputs on the citation complex."""
    _common.provide_raw_files(root / 'raw', list(CitationComplexDataset.urls),
                              _common.shared_data_dir() / 'citation_complex')
    item = CitationComplexDataset(str(root), order=1, missing_rate=0.3, num_masks=1,
                                  log=False)[0]
    # The same complex built in float64 (its operators computed in double precision,
    # not cast from single), with its features and labels in float64.
    order = item.order
    data = SimplicialComplexData.from_simplices(
        [item[f'simplices_{k}'] for k in range(1, order + 1)], num_nodes=item.num_nodes,
        order=order, dtype=torch.float64, x_1=item.x_1.double(), y=item.y.double())
    model = make_model().double().eval()
    with torch.no_grad():
        full = model(data)
        loader = SimplicialNeighborLoader(data, [-1] * HOPS_OF_MODEL, order=1,
                                          batch_size=64)
        diff, sizes = 0.0, []
        for batch in loader:
            out = model(batch)[:batch.batch_size]
            error = (out - full[batch.n_id[:batch.batch_size]]).abs().max()
            diff = max(diff, float(error))
            sizes.append(batch.n_id.numel())
    return dict(max_abs_diff=diff, scale=float(full.abs().max()),
                simplices=data.num_simplices(1), mean_batch=float(np.mean(sizes)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--points', type=_common.at_least(3), default=None,
                        help='points of the complex of the speed and full-batch parts '
                             '(335000: ~1e6 edges)')
    parser.add_argument('--large-points', type=_common.at_least(3), default=None,
                        help='points of the large complex (3350000: ~1e7 edges)')
    parser.add_argument('--fanout', type=_common.int_list(-1), default='10,10',
                        help='neighbours per hop, comma-separated (-1: all)')
    parser.add_argument('--batch-sizes', type=_common.int_list(1), default=None,
                        help='seeds per batch of the speed part, comma-separated')
    parser.add_argument('--repeats', type=_common.at_least(1), default=None)
    parser.add_argument('--memory-steps', type=_common.at_least(1), default=None)
    parser.add_argument('--train-batch', type=_common.at_least(1), default=512)
    parser.add_argument('--full-steps', type=_common.at_least(1), default=None)
    parser.add_argument('--eval-every', type=_common.at_least(1), default=None)
    parser.add_argument('--max-seconds', type=_common.real_in(0, low_open=True),
                        default=None)
    parser.add_argument('--noise', type=_common.real_in(0), default=0.5)
    parser.add_argument('--hub-points', type=_common.int_list(3), default=None,
                        help='points of the complexes with a hub, comma-separated')
    parser.add_argument('--device', type=_common.device_name,
                        default='cuda' if torch.cuda.is_available() else 'cpu',
                        help='where the model runs (sampling runs on the CPU)')
    parser.add_argument('--quick', action='store_true',
                        help='small complexes and few steps, no results page')
    parser.add_argument('--root', default=str(_common.REPO / 'data'))
    parser.add_argument('--results', default=None)
    parser.add_argument('--no-results', action='store_true')
    parser.add_argument('--worker', nargs='+', default=None, help=argparse.SUPPRESS)
    parser.add_argument('--batch-size', type=_common.at_least(1),
                        default=None, help=argparse.SUPPRESS)
    parser.add_argument('--steps', type=_common.at_least(1),
                        default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    num_neighbors = [int(n) for n in args.fanout.split(',')]
    if args.worker:  # a fresh process: 'run PATH' or 'build PATH POINTS'
        if args.worker[0] == 'run':
            result = loader_run(args.worker[1], args.batch_size, args.steps,
                                num_neighbors, args.device)
        else:
            result = build_large(int(args.worker[2]), args.noise, args.worker[1])
        print(json.dumps(result))
        return
    defaults = (dict(points=3000, large_points=10_000, batch_sizes='64,256', repeats=3,
                     memory_steps=3, full_steps=3, eval_every=5, max_seconds=10.0,
                     hub_points='2000,8000')
                if args.quick else
                dict(points=335_000, large_points=3_350_000,
                     batch_sizes='1024,4096,16384', repeats=10, memory_steps=10,
                     full_steps=200, eval_every=10, max_seconds=600.0,
                     hub_points='10000,100000,1000000'))
    for key, value in defaults.items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    if args.results is None and not args.quick:
        args.results = str(_common.REPO / 'docs' / 'results.md')
    batch_sizes = [int(b) for b in args.batch_sizes.split(',')]
    torch.set_num_threads(1)
    _common.load_kernels(args.device)  # not inside the first timed training step
    start, load_start = time.perf_counter(), os.getloadavg()[0]
    data = flow_complex(args.points, args.noise)
    print(f'complex: {data.num_simplices(1):,} edges', flush=True)
    speed = sampler_speed(data, batch_sizes, num_neighbors, args.repeats)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, 'complex.pt')
        torch.save(data, path)
        small = loader_rows(path, batch_sizes, args.memory_steps, num_neighbors,
                            args.device)
        os.remove(path)
        task = time_to_accuracy(data, num_neighbors, args.train_batch, args.full_steps,
                                args.eval_every, args.max_seconds, args.device)
        print(task, flush=True)
        del data
        built = _worker(['build', path, str(args.large_points), '--noise',
                         str(args.noise)])
        print(built, flush=True)
        large = loader_rows(path, batch_sizes, args.memory_steps, num_neighbors,
                            args.device)
    hubs = hub_cost([int(n) for n in args.hub_points.split(',')], num_neighbors,
                    args.repeats)
    exact = citation_exactness(Path(args.root) / 'citation_complex')
    print(exact, flush=True)
    text = report(args, num_neighbors, speed, small, large, built, task, hubs, exact,
                  time.perf_counter() - start, load_start)
    print(text)
    if args.results and not args.no_results:
        _common.write_results(args.results, 'Neighbour sampling', 'sampling.py', text,
                              args.device)


def _times(full: float, loader: float) -> str:
    """How the loader's time compares with full-batch training's, in words."""
    ratio = full / max(loader, 1e-9)
    return f"{ratio:.1f}x less" if ratio >= 1 else f"{1 / ratio:.1f}x more"


def report(args: argparse.Namespace, num_neighbors: List[int], speed: List[Dict],
           small: List[Dict], large: List[Dict], built: Dict, task: Dict,
           hubs: List[Dict], exact: Dict, seconds: float, load_start: float) -> str:
    """The markdown block of a run."""
    edges = small[0]['edges']
    speed_table = _common.markdown_table(
        ['batch (seeds)', 'sampled edges', 'seeds/s, sampler (per CPU s)',
         'seeds/s, with sub-complex (per CPU s)'],
        [[f'{s["batch_size"]:,}', f'{s["simplices"]:,.0f}',
          f'{s["sample"]:,.0f} ({s["sample_cpu"]:,.0f})',
          f'{s["collate"]:,.0f} ({s["collate_cpu"]:,.0f})'] for s in speed])
    train_table = _common.markdown_table(
        ['edges', 'batch (seeds)', 'edges per batch', 'sampler seeds per CPU s',
         'training seeds/s (per CPU s)', 'MB after loading + loader',
         'peak MB, loader built', 'peak MB, training', 'growth MB in training',
         'held-out MSE'],
        [[f'{r["edges"]:,}', f'{r["batch_size"]:,}', f'{r["simplices"]:,.0f}',
          f'{r["sample_cpu"]:,.0f}', f'{r["train_wall"]:,.0f} ({r["train_cpu"]:,.0f})',
          f'{r["ready_mb"]:,.0f}', f'{r["build_peak_mb"]:,.0f}',
          f'{r["train_peak_mb"]:,.0f}', f'{r["growth_mb"]:,.0f}', f'{r["mse"]:.4f}']
         for r in small + large])
    hub_table = _common.markdown_table(
        ['points (hub degree)', 'simplices per batch, without / with the hub',
         'ms per batch, without the hub', 'ms per batch, with the hub', 'with / without'],
        [[f'{h["points"]:,}',
          f'{h["simplices_0"]:,.0f} / {h["simplices_1"]:,.0f}', f'{h["ms_0"]:.2f}',
          f'{h["ms_1"]:.2f}', f'{h["ms_1"] / h["ms_0"]:.2f}'] for h in hubs])
    peak_gb = max(max(r['build_peak_mb'], r['train_peak_mb']) for r in large) / 1024
    command = (f'python benchmarks/sampling.py --points {args.points} --large-points '
               f'{args.large_points} --fanout {args.fanout} --batch-sizes '
               f'{args.batch_sizes} --repeats {args.repeats} --memory-steps '
               f'{args.memory_steps} --train-batch {args.train_batch} --full-steps '
               f'{args.full_steps} --eval-every {args.eval_every} --max-seconds '
               f'{args.max_seconds:g} --noise {args.noise:g} --hub-points '
               f'{args.hub_points} --device {args.device}'
               + (' --quick' if args.quick else ''))
    reached = (f"reached it after {task['steps']} steps, {task['seconds']:.0f} s of "
               f"training ({task['cpu']:.0f} CPU s): "
               f"{_times(task['full_seconds'], task['seconds'])} wall time, "
               f"{_times(task['full_cpu'], task['cpu'])} CPU time"
               if task['reached'] else
               f"did not reach it in {task['seconds']:.0f} s ({task['cpu']:.0f} CPU s, "
               f"{task['steps']} steps; best {task['best']:.4f})")
    full_run = (f"until its held-out error stopped improving (by less than "
                f"{100 * task['tolerance']:g} % over {task['patience']} evaluations, one "
                f"every {task['full_eval_every']} steps: "
                f"{task['full_steps']} steps)" if task['full_converged'] else
                f"for {task['full_steps']} steps (the cap of --full-steps; its error "
                f"was still improving)")
    return (
        f"`{command}` ({_common.machine(args.device)}, {seconds / 60:.0f} min wall; "
        f"1-minute load average {load_start:.1f} at the start, "
        f"{os.getloadavg()[0]:.1f} at the end). Seeds on the edges, fan-out "
        f"{num_neighbors}; seeds per second per second of wall-clock time and, in "
        f"brackets, of the process's CPU time.\n\n"
        f"Sampler speed on the complex of {args.points:,} points ({edges:,} edges), "
        f"median of {args.repeats} batches:\n\n{speed_table}\n\n"
        f"Training with the loader ({args.memory_steps} steps per row, each row a "
        f"fresh process; the {edges:,}-edge complex with its Laplacians, the "
        f"{built['edges']:,}-edge one ({args.large_points:,} points, "
        f"{built['triangles']:,} triangles) without them, built in "
        f"{built['seconds']:.0f} s in a process of its own with a peak resident set "
        f"of {built['peak_mb']:,.0f} MB, {built['tensors_mb']:,.0f} MB of tensors). "
        f"MB: resident set of the process (VmHWM for the peaks, reset after the "
        f"loader is built); held-out MSE after these few steps (noise "
        f"{args.noise}):\n\n{train_table}\n\n"
        f"Largest resident set of a training process on the {built['edges']:,}-edge "
        f"complex: {peak_gb:.1f} GB (target: at most 16 GB).\n\n"
        f"Time to the full-batch error on the {edges:,}-edge complex: trained full "
        f"batch {full_run}, the SAN's best held-out MSE is {task['target']:.4f} "
        f"(noisy input {task['noise_mse']:.4f}, zero {task['zero_mse']:.4f}), reached "
        f"after {task['full_best_step']} steps, {task['full_seconds']:.0f} s of "
        f"training ({task['full_cpu']:.0f} CPU s); trained with the "
        f"loader (batches of {args.train_batch} seeds, error checked every "
        f"{args.eval_every} steps) it {reached}.\n\n"
        f"Hubs: batches of 1,024 vertex seeds (order 0, fan-out {num_neighbors}) on the "
        f"Delaunay complex of each number of points, and on the same with one more "
        f"vertex joined to all of them (a hub, in every batch), the same seeds; "
        f"median of {args.repeats} batches of the whole collation:\n\n{hub_table}\n\n"
        f"Exactness on the citation complex (order 1, {exact['simplices']:,} "
        f"1-simplices, float64, all neighbours of two hops, batches of 64 seeds, "
        f"{exact['mean_batch']:,.0f} simplices per batch on average): largest "
        f"difference of a seed's output from the full-batch output "
        f"{exact['max_abs_diff']:.1e} (outputs up to {exact['scale']:.2f}).\n")


if __name__ == '__main__':
    main()
