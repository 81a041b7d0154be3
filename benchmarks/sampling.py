"""Neighbour-sampled training on one large complex (SimplicialNeighborLoader).

On the Delaunay complex of ``--points`` random points in the unit square
(3.35e5 points: about 1e6 edges), with one torch thread:

* sampler speed: seeds per second of the neighbour sampler alone
  (``SimplicialNeighborSampler.sample``, ``--hops`` hops of fan-out
  ``--fanout``) and of the whole collation (sampling and the sub-complex with
  its restricted operators), median of ``--repeats`` batches, per batch size;
* peak memory against batch size: the growth of the peak resident set of a
  fresh process (the complex saved once and loaded there) over one batch and one
  forward + backward step of the model below, and the simplices per batch;
* an edge-level task, flow denoising: the edge flow is the gradient of a smooth
  potential on the vertices, the input that flow plus Gaussian noise (std
  ``--noise``), the target the clean flow; a 2-layer SAN (F = 16, J_u = J_d =
  J_h = 1) trained for ``--steps`` sampled batches (fan-out ``--fanout`` per hop,
  two hops, batch ``--train-batch``) on 80 % of the edges, its mean squared error
  on 2,000 held-out edges (a fifth of the edges on small complexes) (all neighbours of two hops, so exact) against the
  noise's;
* exactness on real data: on the citation complex (``CitationComplexDataset``,
  order 1, float64), the largest difference between the seeds' outputs of a
  sampled batch with all neighbours of two hops and the full-batch outputs of the
  same 2-layer SAN, over all 1-simplices as seeds.

Writes its table to docs/results.md (``--no-results`` to skip)::

    python benchmarks/sampling.py [--points 335000] [--quick]
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


def flow_complex(num_points: int, noise: float, seed: int = 0) -> SimplicialComplexData:
    """The Delaunay complex with a gradient flow ``y`` on its edges (scaled to unit
    standard deviation) and ``x_1`` = ``y`` plus Gaussian noise of std
    :obj:`noise`."""
    rng = np.random.default_rng(seed)
    points = rng.random((num_points, 2))
    triangles = np.sort(scipy.spatial.Delaunay(points).simplices, axis=1)
    data = SimplicialComplexData.from_simplices([triangles], close=True)
    potential = torch.from_numpy(np.sin(3 * np.pi * points[:, 0]) *
                                 np.cos(2 * np.pi * points[:, 1])).float()
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
    for batch_size in batch_sizes:
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


def _status_kb(field: str) -> int:
    # A field of /proc/self/status (Linux), in kB.
    for line in Path('/proc/self/status').read_text().splitlines():
        if line.startswith(field + ':'):
            return int(line.split()[1])
    raise RuntimeError(f'no {field} in /proc/self/status')


def peak_memory(path: str, batch_size: int, num_neighbors: List[int]) -> Dict:
    """In this process: the growth of the peak resident set (``VmHWM``, reset
    after the complex is loaded and the loader built) over one sampled batch and one
    forward + backward step, and the bytes of the batch's tensors."""
    torch.set_num_threads(1)
    data = torch.load(path)
    model = make_model()
    loader = SimplicialNeighborLoader(data, num_neighbors, order=1,
                                      batch_size=batch_size, shuffle=True)
    Path('/proc/self/clear_refs').write_text('5')  # resets VmHWM to VmRSS
    base = _status_kb('VmRSS')
    batch = next(iter(loader))
    out = model(batch)[:batch.batch_size]
    (out - batch.y[:batch.batch_size]).pow(2).mean().backward()
    tensors = sum(value.numel() * value.element_size() for value in batch.values()
                  if isinstance(value, torch.Tensor))
    return dict(batch_size=batch_size, peak_mb=(_status_kb('VmHWM') - base) / 1024,
                batch_mb=tensors / 2**20, simplices=batch.n_id.numel())


def memory_rows(data: SimplicialComplexData, batch_sizes: Sequence[int],
                num_neighbors: List[int]) -> List[Dict]:
    """:func:`peak_memory` of each batch size, each in a fresh process."""
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, 'complex.pt')
        torch.save(data, path)
        for batch_size in batch_sizes:
            result = subprocess.run(
                [sys.executable, __file__, '--memory-worker', path, '--batch-size',
                 str(batch_size), '--fanout', ','.join(map(str, num_neighbors))],
                check=True, capture_output=True, text=True)
            out.append(json.loads(result.stdout.strip().splitlines()[-1]))
            print(out[-1], flush=True)
    return out


def denoising(data: SimplicialComplexData, num_neighbors: List[int], steps: int,
              batch_size: int, seed: int = 0) -> Dict:
    """Sampled training of the flow-denoising SAN and its held-out error."""
    generator = torch.Generator().manual_seed(seed)
    perm = torch.randperm(data.num_simplices(1), generator=generator)
    held_out = min(2000, perm.numel() // 5)
    test, train = perm[:held_out], perm[held_out:][:int(0.8 * perm.numel())]
    model = make_model(seed)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    torch.manual_seed(seed)
    loader = SimplicialNeighborLoader(data, num_neighbors, order=1, input_simplices=train,
                                      batch_size=batch_size, shuffle=True)
    start, done = time.perf_counter(), 0
    while done < steps:
        for batch in loader:
            optimizer.zero_grad()
            out = model(batch)[:batch.batch_size]
            loss = (out - batch.y[:batch.batch_size]).pow(2).mean()
            loss.backward()
            optimizer.step()
            done += 1
            if done == steps:
                break
    train_seconds = time.perf_counter() - start
    model.eval()
    test_loader = SimplicialNeighborLoader(data, [-1] * HOPS_OF_MODEL, order=1,
                                           input_simplices=test, batch_size=500)
    errors = []
    with torch.no_grad():
        for batch in test_loader:
            out = model(batch)[:batch.batch_size]
            errors.append((out - batch.y[:batch.batch_size]).pow(2).view(-1))
    return dict(mse=float(torch.cat(errors).mean()),
                noise_mse=float((data.x_1[test] - data.y[test]).pow(2).mean()),
                zero_mse=float(data.y[test].pow(2).mean()),
                seconds=train_seconds, steps=steps)


def citation_exactness(root: Path) -> Dict:
    """Largest |sampled - full| of the seeds' outputs on the citation complex."""
    _common.provide_raw_files(root / 'raw', list(CitationComplexDataset.urls),
                              _common.shared_data_dir() / 'citation_complex')
    item = CitationComplexDataset(str(root), order=1, missing_rate=0.3, num_masks=1,
                                  log=False)[0]
    data = item.clone().apply(lambda t: t.double() if t.is_floating_point() else t)
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
    parser.add_argument('--points', type=int, default=None,
                        help='points of the Delaunay complex (335000: ~1e6 edges)')
    parser.add_argument('--fanout', default='10,10',
                        help='neighbours per hop, comma-separated (-1: all)')
    parser.add_argument('--batch-sizes', default=None)
    parser.add_argument('--repeats', type=int, default=None)
    parser.add_argument('--steps', type=int, default=None)
    parser.add_argument('--train-batch', type=int, default=512)
    parser.add_argument('--noise', type=float, default=0.5)
    parser.add_argument('--quick', action='store_true',
                        help='a small complex and few repeats, no results page')
    parser.add_argument('--root', default=str(_common.REPO / 'data'))
    parser.add_argument('--results', default=None)
    parser.add_argument('--no-results', action='store_true')
    parser.add_argument('--memory-worker', default=None, help=argparse.SUPPRESS)
    parser.add_argument('--batch-size', type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    num_neighbors = [int(n) for n in args.fanout.split(',')]
    if args.memory_worker:
        print(json.dumps(peak_memory(args.memory_worker, args.batch_size,
                                     num_neighbors)))
        return
    defaults = (dict(points=3000, batch_sizes='64,256', repeats=3, steps=5) if args.quick
                else dict(points=335_000, batch_sizes='256,1024,4096', repeats=10,
                          steps=200))
    for key, value in defaults.items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    if args.results is None and not args.quick:
        args.results = str(_common.REPO / 'docs' / 'results.md')
    batch_sizes = [int(b) for b in args.batch_sizes.split(',')]
    torch.set_num_threads(1)
    start = time.perf_counter()
    data = flow_complex(args.points, args.noise)
    build = time.perf_counter() - start
    print(f'complex: {data.num_simplices(1):,} edges in {build:.0f} s', flush=True)
    speed = sampler_speed(data, batch_sizes, num_neighbors, args.repeats)
    memory = memory_rows(data, batch_sizes, num_neighbors)
    task = denoising(data, num_neighbors, args.steps, args.train_batch)
    print(task, flush=True)
    exact = citation_exactness(Path(args.root) / 'citation_complex')
    print(exact, flush=True)

    rows = [[f'{s["batch_size"]:,}', f'{s["simplices"]:,.0f}',
             f'{s["sample"]:,.0f} ({s["sample_cpu"]:,.0f})',
             f'{s["collate"]:,.0f} ({s["collate_cpu"]:,.0f})', f'{m["batch_mb"]:,.1f}',
             f'{m["peak_mb"]:,.0f}'] for s, m in zip(speed, memory)]
    table = _common.markdown_table(
        ['batch (seeds)', 'sampled edges', 'seeds/s, sampler (per CPU s)',
         'seeds/s, with sub-complex (per CPU s)', 'MB of the batch',
         'peak MB of a step'], rows)
    command = (f'python benchmarks/sampling.py --points {args.points} --fanout '
               f'{args.fanout} --batch-sizes {args.batch_sizes} --repeats {args.repeats} '
               f'--steps {args.steps}' + (' --quick' if args.quick else ''))
    text = (
        f"`{command}` ({_common.machine('cpu')}, {time.perf_counter() - start:.0f} s "
        f"wall, shared machine): Delaunay complex of {args.points:,} points, "
        f"{data.num_simplices(1):,} edges, seeds on the edges, fan-out "
        f"{num_neighbors}. Seeds per second: median of {args.repeats} batches, per "
        f"second of wall-clock time and, in brackets, per second of the process's CPU "
        f"time (the machine is shared: load average {os.getloadavg()[0]:.1f} at the "
        f"end of the run); MB of "
        f"the batch: its tensors (sub-complex and operators); peak MB: growth of the "
        f"peak resident set of a fresh process (VmHWM reset after loading the complex "
        f"and building the loader) over one batch and one forward + backward step of "
        f"a 2-layer SAN (F = {CHANNELS}, "
        f"J_u = J_d = J_h = 1).\n\n{table}\n\n"
        f"Flow denoising (input: a gradient flow, scaled to unit standard deviation, "
        f"plus noise of std {args.noise}; target: the flow), the same SAN trained "
        f"on {task['steps']} sampled batches of "
        f"{args.train_batch} seeds ({task['seconds']:.0f} s): held-out mean squared "
        f"error {task['mse']:.4f} against {task['noise_mse']:.4f} for the noisy input "
        f"and {task['zero_mse']:.4f} for zero.\n\n"
        f"Exactness on the citation complex (order 1, {exact['simplices']:,} "
        f"1-simplices, float64, all neighbours of two hops, batches of 64 seeds, "
        f"{exact['mean_batch']:,.0f} simplices per batch on average): largest "
        f"difference of a seed's output from the full-batch output "
        f"{exact['max_abs_diff']:.1e} (outputs up to {exact['scale']:.2f}).\n")
    print(text)
    if args.results and not args.no_results:
        _common.write_results(args.results, 'Neighbour sampling', 'sampling.py', text)


if __name__ == '__main__':
    main()
