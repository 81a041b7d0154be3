"""The scaling benchmark: its verdicts on given rows, and a small end-to-end run
(no timing assertions)."""
import subprocess
import sys
from pathlib import Path

import pytest

from tests.benchmarks.conftest import load_script

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def scaling():
    return load_script('scaling')


def row(num_edges, order, san_ms, gat_ms, peak_mb=100.0, reorder_s=None):
    return dict(num_edges=num_edges, order=order, nnz='', reorder_s=reorder_s,
                results=dict(san=dict(ms=san_ms, peak_mb=peak_mb),
                             gat=dict(ms=gat_ms, peak_mb=peak_mb)))


def test_linearity_is_judged_on_the_locality_order(scaling):
    # Random order: time per edge x4 (superlinear); locality order: x1.5.
    rows = []
    for edges, grow_random, grow_local in ((10_000, 1, 1), (100_000, 2, 1.2),
                                           (1_000_000, 4, 1.5)):
        rows.append(row(edges, 'random', edges * 1e-3 * grow_random, edges * 2e-3))
        rows.append(row(edges, 'locality', edges * 1e-3 * grow_local, edges * 2e-3,
                        peak_mb=5000.0, reorder_s=0.5))
    text = scaling.targets(rows)
    local, random = [line for line in text.splitlines() if 'time per edge' in line]
    assert 'locality order (the target is judged on this order' in local
    assert 'max/min 1.50' in local and local.endswith('linear (time per edge '
                                                      'within 2x)')
    assert 'random order (as built, for reference)' in random
    assert 'max/min 4.00' in random and ': NOT linear' in random
    assert 'SANConv / GATConv (same order) at most 2.00' in text
    assert "(locality order): 5,000 MB: NOT met" in text
    assert "(random order): 100 MB: met" in text
    assert 'ReorderSimplices at 1,000,000 edges: 0.50 s' in text
    table = scaling.table(rows)
    assert '| 1,000,000 | locality |  | 0.50 | 1,500.0 | — | 2,000.0 |' in table


def test_peak_memory_is_judged_at_the_targets_size_only(scaling):
    # the 4 GB of the target are set at 10^6 edges; 10^7 edges were judged by it too
    text = scaling.targets([row(999_958, 'locality', 20.0, 20.0, peak_mb=2400.0),
                            row(9_999_962, 'locality', 170.0, 220.0, peak_mb=23700.0)])
    assert 'SANConv peak memory at 999,958 edges (locality order): 2,400 MB: met' in text
    assert '9,999,962 edges (locality order): 23,700' not in text


def test_the_n_by_n_methods_are_judged_on_the_order_they_ran_on(scaling):
    # (with --orders locality random they ran on the locality order, and their
    # verdict lines vanished: they were looked for on the random order)
    local = row(10_000, 'locality', 10.0, 20.0)
    local['results']['dense'] = dict(ms=10_000.0, peak_mb=100.0)
    text = scaling.targets([row(10_000, 'random', 12.0, 20.0), local])
    assert '- 10,000 edges (locality order), dense' in text
    assert '1,000x slower than SANConv: met (>= 500x)' in text


def test_scaling_benchmark_runs_both_orders(tmp_path):
    results = tmp_path / 'results.md'
    results.write_text('# Results\n\n## Other\n\nkept\n')
    command = [sys.executable, str(REPO / 'benchmarks' / 'scaling.py'), '--sizes',
               '200', '--methods', 'san', 'gat', '--repeats', '1', '--threads', '1',
               '--results', str(results), '--plot', str(tmp_path / 'scaling.png')]
    run = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    text = results.read_text()
    assert '## Other\n\nkept' in text and '## Scaling' in text
    assert (tmp_path / 'scaling.png').stat().st_size > 0
    rows = [line for line in text.splitlines() if line.startswith('| 1')]
    assert [line.split('|')[2].strip() for line in rows] == ['random', 'locality']
    assert 'ReorderSimplices' in text


def test_worker_reports_each_methods_peak_where_the_device_meters_it(scaling, tmp_path):
    # A device that reports peak memory per call (CUDA) times several methods in one
    # process and gives each its own peak; a stand-in meter here, on the CPU.
    path = tmp_path / 'inputs.pt'
    scaling.torch.save(scaling.operator_inputs(scaling.delaunay_complex(200)), path)
    measured = []

    def meter(device):
        def measure(step):
            step()
            measured.append(device.type)
            return 1.5 * len(measured)
        return measure

    out = scaling.worker('san,gat', str(path), 'cpu', 2, 1, meter=meter)
    assert measured == ['cpu', 'cpu']  # one metered warm-up step per method
    assert out['san']['peak_mb'] == 1.5 and out['gat']['peak_mb'] == 3.0
    assert all(out[m]['repeats'] == 2 and out[m]['ms'] > 0 for m in ('san', 'gat'))
    # Without a meter (the CPU), several methods get times only.
    plain = scaling.worker('san,gat', str(path), 'cpu', 1, 1)
    assert set(plain) == {'san', 'gat'} and 'peak_mb' not in plain['san']


def test_cuda_runs_every_method_of_a_size_in_one_process(scaling, tmp_path, monkeypatch):
    calls = []

    def run_worker(methods, *args, **kwargs):  # as the worker answers
        calls.append(methods)
        one = dict(ms=1.0, peak_mb=2.0, repeats=1)
        names = methods.split(',')
        return {m: one for m in names} if len(names) > 1 else one

    monkeypatch.setattr(scaling, 'run_worker', run_worker)
    args = scaling.argparse.Namespace(device='cuda', quick=True, timeout=10, threads=1,
                                      keep_freed_memory=False)
    row = scaling.measure(scaling.delaunay_complex(3000), ['san', 'gat', 'dense'],
                          str(tmp_path), args, 1, order='random', reorder_s=None)
    assert calls == ['san,gat']  # dense is skipped above the --quick limit
    assert list(row['results']) == ['san', 'gat', 'dense']
    assert row['results']['dense'] == dict(skip='N x N: skipped by --quick')
    assert row['results']['san'] == dict(ms=1.0, peak_mb=2.0, repeats=1)
    # One method left on CUDA: a process of its own, whose answer is the method's.
    calls.clear()
    row = scaling.measure(scaling.delaunay_complex(3000), ['san', 'dense'],
                          str(tmp_path), args, 1, order='random', reorder_s=None)
    assert calls == ['san']
    assert row['results']['san'] == dict(ms=1.0, peak_mb=2.0, repeats=1)
    # On the CPU: a process per method for its memory, then the fast ones together.
    calls.clear()
    args.device = 'cpu'
    scaling.measure(scaling.delaunay_complex(3000), ['san', 'gat', 'dense'],
                    str(tmp_path), args, 1, order='random', reorder_s=None)
    assert calls == ['san', 'gat', 'san,gat']


def test_a_missing_plot_or_results_directory_is_refused_before_measuring(tmp_path):
    # (the plot was saved after all the measurements, and its error lost them)
    for option in ('--plot', '--results'):
        # (with the other of them in tmp_path: a run that went on wrote no page of
        # the checkout)
        other = '--results' if option == '--plot' else '--plot'
        command = [sys.executable, str(REPO / 'benchmarks' / 'scaling.py'), '--sizes',
                   '100', option, str(tmp_path / 'missing' / 'out'), other,
                   str(tmp_path / 'other')]
        run = subprocess.run(command, capture_output=True, text=True, timeout=120)
        assert run.returncode == 2
        assert f"{option} {tmp_path / 'missing' / 'out'}: its directory does not " \
            "exist" in run.stderr
