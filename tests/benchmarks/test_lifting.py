"""The lifting benchmark runs end to end on small graphs (no timing assertions)."""
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_lifting_benchmark_writes_its_table(tmp_path):
    results = tmp_path / 'results.md'
    results.write_text('# Results\n\n## Other\n\nkept\n')
    command = [sys.executable, str(REPO / 'benchmarks' / 'lifting.py'), '--sizes',
               '300', '2000', '--repeats', '1', '--budget', '120', '--results',
               str(results)]
    run = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    text = results.read_text()
    assert '## Other\n\nkept' in text and '## Lifting' in text
    assert 'Command: `python benchmarks/lifting.py --sizes 300 2000' in text
    rows = [line for line in text.splitlines() if line.startswith('| 3e2 |') or
            line.startswith('| 2e3 |')]
    assert len(rows) == 2
    for row in rows:  # edges near the target, and some triangles
        cells = [c.strip() for c in row.strip('|').split('|')]
        target = float(cells[0])
        assert abs(int(cells[1]) - target) < 0.2 * target
        assert int(cells[2]) > 0


def test_lifting_benchmark_against_a_baseline_checkout(tmp_path):
    results = tmp_path / 'results.md'
    command = [sys.executable, str(REPO / 'benchmarks' / 'lifting.py'), '--sizes',
               '300', '--repeats', '1', '--budget', '1', '--baseline', str(REPO),
               '--results', str(results)]
    run = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    text = results.read_text()
    assert f'"baseline" is the same lift with the package in `{REPO}`' in text
    header = next(line for line in text.splitlines() if line.startswith('| target'))
    assert header.rstrip(' |').endswith('ours / baseline (time / CPU)')
    row = next(line for line in text.splitlines() if line.startswith('| 3e2 |'))
    assert len(row.strip('|').split('|')) == len(header.strip('|').split('|'))


def test_small_graphs_reach_their_edge_count():
    # (below about 55 edges the graph had too few nodes for any radius, and the
    # failure also made TopoNetX count as not finishing at every larger size)
    sys.path.insert(0, str(REPO / 'benchmarks'))
    import lifting
    for target in (3, 6, 20, 55, 60, 300):
        num_nodes, edges = lifting.random_geometric_graph(target)
        assert edges.shape[1] == 2 and len(edges) > 0
        assert num_nodes * (num_nodes - 1) / 2 >= target


def test_a_baseline_without_the_package_is_refused(tmp_path):
    # the worker imported the installed package instead and timed it twice,
    # reported as "ours / baseline"
    command = [sys.executable, str(REPO / 'benchmarks' / 'lifting.py'), '--sizes',
               '300', '--repeats', '1', '--no-results', '--baseline', str(tmp_path)]
    run = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert run.returncode == 2
    assert f'--baseline {tmp_path} holds no torch_geometric_san package' in run.stderr
