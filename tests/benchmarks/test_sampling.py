"""The sampling benchmark's pieces on small complexes, and a --quick run end to end
(no timing assertions)."""
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

REPO = Path(__file__).resolve().parents[2]


def test_complex_and_sampler_speed(sampling):
    data = sampling.flow_complex(300, noise=0.5)
    light = sampling.flow_complex(300, noise=0.5, laplacians=False)
    assert torch.allclose(data.y.std(), torch.tensor(1.0))
    assert torch.equal(light.y, data.y) and torch.equal(light.x_1, data.x_1)
    assert 'up_index_1' in data and 'up_index_1' not in light
    speed = sampling.sampler_speed(data, [16, 32], [5, 5], repeats=2)
    assert [row['batch_size'] for row in speed] == [16, 32]
    assert all(row['sample'] > 0 and row['collate'] > 0 for row in speed)


def test_loader_run_and_build(sampling, tmp_path):
    path = str(tmp_path / 'complex.pt')
    built = sampling.build_large(400, 0.5, path)
    assert built['edges'] > 1000 and built['triangles'] > 0 and built['peak_mb'] > 0
    run = sampling.loader_run(path, 16, 3, [5, 5])
    assert run['edges'] == built['edges'] and run['steps'] == 3
    assert 16 <= run['simplices'] <= run['edges']
    # (the resident set of this process need not grow on loading a small complex,
    # so data_mb is only meaningful in the fresh processes the benchmark runs; nor
    # need the training peak reach ready_mb, where a garbage collection freed memory)
    assert run['ready_mb'] > 0 and run['train_peak_mb'] > 0
    assert run['build_peak_mb'] >= run['ready_mb']
    assert run['growth_mb'] >= 0 and run['train_cpu'] > 0 and run['sample_cpu'] > 0
    assert run['mse'] > 0


def test_time_to_accuracy(sampling):
    data = sampling.flow_complex(300, noise=0.5)
    task = sampling.time_to_accuracy(data, [5, 5], batch_size=64, full_steps=2,
                                     eval_every=2, max_seconds=3.0, device='cpu')
    assert task['full_steps'] == 2 and task['full_seconds'] > 0
    assert not task['full_converged']  # stopped at the cap
    assert 1 <= task['full_best_step'] <= 2 and task['full_cpu'] > 0
    assert task['steps'] % 2 == 0 and task['steps'] >= 2
    # reached: the last check is at or below the full-batch error; else the budget
    assert (task['best'] <= task['target']) == task['reached']
    assert task['reached'] or task['seconds'] >= 3.0
    assert abs(task['noise_mse'] - 0.25) < 0.1


def test_hub_cost(sampling):
    plain, data = sampling.hub_complex(1200, False), sampling.hub_complex(1200, True)
    assert (plain.num_simplices(0), data.num_simplices(0)) == (1200, 1201)
    assert data.num_simplices(1) == plain.num_simplices(1) + 1200
    rows = sampling.hub_cost([1200], [5, 5], repeats=2)
    assert [row['points'] for row in rows] == [1200]
    assert min(rows[0]['simplices_0'], rows[0]['simplices_1']) >= 1024
    assert rows[0]['ms_0'] > 0 and rows[0]['ms_1'] > 0


def test_citation_exactness(sampling, shared_data, tmp_path, monkeypatch):
    monkeypatch.setenv('TGSAN_SHARED_DATA', str(shared_data))
    exact = sampling.citation_exactness(tmp_path / 'citation_complex')
    assert exact['simplices'] == 1474
    assert exact['max_abs_diff'] < 1e-9 * max(exact['scale'], 1.0)


def test_quick_run_writes_its_block(shared_data, tmp_path):
    results = tmp_path / 'results.md'
    results.write_text('# Results\n\n## Other\n\nkept\n')
    command = [sys.executable, str(REPO / 'benchmarks' / 'sampling.py'), '--quick',
               '--points', '600', '--large-points', '1200', '--batch-sizes', '16',
               '--max-seconds', '2', '--hub-points', '1500', '--device', 'cpu',
               '--root', str(tmp_path / 'data'),
               '--results', str(results)]
    env = dict(os.environ, TGSAN_SHARED_DATA=str(shared_data))
    run = subprocess.run(command, capture_output=True, text=True, timeout=600, env=env)
    assert run.returncode == 0, run.stderr
    text = results.read_text()
    assert '## Other\n\nkept' in text and '## Neighbour sampling' in text
    assert '--points 600 --large-points 1200' in text and '--device cpu --quick' in text
    rows = [line for line in text.splitlines() if line.startswith('| ') and
            line.split('|')[1].strip().replace(',', '').isdigit()]
    assert len(rows) == 1 + 2 + 1  # sampler speed; training on both complexes; hubs
    assert '--hub-points 1500' in text


def test_full_batch_stops_when_its_error_stops_improving(sampling):
    # with a relative tolerance of 1 no evaluation counts as an improvement: the
    # full-batch training stops after patience + 1 evaluations, before the cap
    data = sampling.flow_complex(300, noise=0.5)
    task = sampling.time_to_accuracy(data, [5, 5], batch_size=64, full_steps=50,
                                     eval_every=2, max_seconds=1.0, device='cpu',
                                     full_eval_every=1, tolerance=1.0, patience=2)
    assert task['full_converged'] and task['full_steps'] == 3
    assert 1 <= task['full_best_step'] <= 3


def test_batches_larger_than_the_seeds_are_refused(sampling, tmp_path):
    # Repeated seeds made the sampler's speed count simplices sampled twice, and
    # slices past the end (no seeds at all) made it count seeds it never sampled.
    data = sampling.flow_complex(300, noise=0.5)
    train = sampling._split(data.num_simplices(1))[1].numel()
    with pytest.raises(ValueError, match=f"a batch size of 100000 is more than the "
                       f"{train} training seeds"):
        sampling.sampler_speed(data, [100000], [5, 5], repeats=1)
    # between the training seeds and all edges: the loader runs (in a worker
    # process) refused it later, behind a CalledProcessError naming no cause
    with pytest.raises(ValueError, match=f"a batch size of {train + 1} is more"):
        sampling.sampler_speed(data, [train + 1], [5, 5], repeats=1)
    path = str(tmp_path / 'complex.pt')
    sampling.build_large(400, 0.5, path)
    with pytest.raises(ValueError, match="a batch size of 100000 is more than the"):
        sampling.loader_run(path, 100000, 1, [5, 5])


def test_the_report_says_more_where_the_loader_was_slower(sampling):
    assert sampling._times(2.0, 1.0) == '2.0x less'
    assert sampling._times(1.0, 1.9) == '1.9x more'  # ("0.5x less" before)
