"""The Vietoris-Rips benchmark runs end to end on small clouds (no timing
assertions), and refuses complexes that differ."""
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import load_script

REPO = Path(__file__).resolve().parents[2]


def test_rips_benchmark_writes_its_table(tmp_path):
    results = tmp_path / 'results.md'
    results.write_text('# Results\n\n## Other\n\nkept\n')
    # (one size: each measurement is a fresh process, which imports torch)
    command = [sys.executable, str(REPO / 'benchmarks' / 'rips.py'), '--points', '400',
               '--repeats', '1', '--results', str(results)]
    run = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    text = results.read_text()
    assert '## Other\n\nkept' in text and '## Vietoris-Rips lifting' in text
    assert '`python benchmarks/rips.py --points 400 --degree 10 --repeats 1`' in text
    rows = [line for line in text.splitlines() if line.startswith('| 400 |')]
    assert len(rows) == 1
    assert rows[0].split('|')[2].strip().startswith('400, ')  # N_0: every point


def test_differing_complexes_are_an_error(monkeypatch):
    rips = load_script('rips')
    outputs = iter([dict(digest='a'), dict(digest='b')])
    monkeypatch.setattr(rips, 'measure', lambda way, points, args: next(outputs))
    with pytest.raises(RuntimeError, match='the complexes differ at 10 points'):
        rips.row(10, None)
