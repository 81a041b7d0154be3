"""The propagation-path benchmark runs end to end on a small complex (no timing
assertions)."""
import os
import subprocess
import sys
from pathlib import Path

import torch

from torch_geometric_san.sparse import compiled

REPO = Path(__file__).resolve().parents[2]


def test_propagation_benchmark_writes_its_table(tmp_path):
    results = tmp_path / 'results.md'
    results.write_text('# Results\n\n## Other\n\nkept\n')
    command = [sys.executable, str(REPO / 'benchmarks' / 'propagation.py'), '--points',
               '300', '--repeats', '1', '--results', str(results)]
    run = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    text = results.read_text()
    assert '## Other\n\nkept' in text and '## Propagation paths' in text
    rows = [line for line in text.splitlines() if 'edges (' in line]
    assert len(rows) == 10
    uses = [row.strip('|').split('|')[-1].strip() for row in rows[:6]]
    # Widths 1-32: gathered up to GATHER_MAX_WIDTH_COMPILED = 8 by the compiled
    # kernel, up to GATHER_MAX_WIDTH = 1 by the composite.
    gathered = 4 if compiled.available_for(torch.zeros(1)) else 1
    assert uses == ['gather'] * gathered + ['block'] * (6 - gathered)


def test_saved_bytes_counts_each_storage_once_and_the_variable_is_restored(monkeypatch):
    sys.path.insert(0, str(REPO / 'benchmarks'))
    import propagation
    x = torch.randn(1000, requires_grad=True)
    # x * x saves x twice, x.exp() its result: two storages of 4000 bytes
    assert propagation.saved_bytes(lambda: x * x + x.exp()) == 8000
    monkeypatch.setenv('TGSAN_COMPILED_KERNELS', '1')
    seen = propagation.kernels(False, lambda: compiled.enabled())()
    assert seen is False and compiled.enabled()  # (it was deleted after the call)
    monkeypatch.delenv('TGSAN_COMPILED_KERNELS')
    propagation.kernels(True, lambda: None)()
    assert 'TGSAN_COMPILED_KERNELS' not in os.environ


def test_with_the_kernels_off_the_layer_uses_the_composites(tmp_path):
    # the header said "kernels off" and the rows that the layer uses the kernels
    command = [sys.executable, str(REPO / 'benchmarks' / 'propagation.py'), '--points',
               '3', '--repeats', '1', '--no-results']
    run = subprocess.run(command, capture_output=True, text=True, timeout=600,
                         env=dict(os.environ, TGSAN_COMPILED_KERNELS='0'))
    assert run.returncode == 0, run.stderr
    assert 'compiled CPU kernels off' in run.stdout
    rows = [line for line in run.stdout.splitlines() if '| compiled kernel |' in line]
    assert len(rows) == 2
    assert all(row.strip('|').split('|')[-1].strip() == 'composite' for row in rows)
