import argparse
import math
import os
import re
import shlex
import subprocess
import sys

import pytest
import torch

from tests.benchmarks import conftest
from tests.benchmarks.conftest import load_script


def test_a_script_that_fails_to_load_fails_again_the_same_way(tmp_path, monkeypatch):
    # a half-run module left in sys.modules turned one failure into an
    # AttributeError in every later test of the script
    (tmp_path / 'broken_script.py').write_text('raise RuntimeError("boom")\n')
    monkeypatch.setattr(conftest, 'BENCHMARKS', tmp_path)
    for _ in range(2):
        with pytest.raises(RuntimeError, match='boom'):
            load_script('broken_script')
    assert 'broken_script' not in sys.modules


def test_write_results_replaces_only_its_block(common, tmp_path):
    path = tmp_path / 'results.md'
    path.write_text('# Results\n\n## Scaling\n\nother helper\n\n## Table 1: x\n\n'
                    'hand-written notes\n')
    common.write_results(str(path), 'Table 1: x', 'trajectory.py', 'first')
    common.write_results(str(path), 'Table 1: x', 'trajectory.py', 'second')
    common.write_results(str(path), 'Table 2: y', 'citation.py', 'table two')
    text = path.read_text()
    assert text.count('<!-- trajectory.py: begin -->') == 1
    assert 'second' in text and 'first' not in text
    assert text.index('hand-written notes') < text.index('second') < text.index(
        '## Table 2: y') < text.index('table two')
    assert '## Scaling\n\nother helper' in text
    common.write_results(str(tmp_path / 'new.md'), 'T', 'k', 'body')
    assert (tmp_path / 'new.md').read_text() == (
        '# Results\n\n## T\n\n<!-- k: begin -->\nbody\n<!-- k: end -->\n')


def test_write_results_keys_sharing_a_prefix_stay_apart(common, tmp_path):
    # The two Scaling sections: 'scaling.py' and 'scaling.py --keep-freed-memory'.
    path = tmp_path / 'results.md'
    common.write_results(str(path), 'A', 'scaling.py', 'plain 1')
    common.write_results(str(path), 'B', 'scaling.py --keep-freed-memory', 'kept 1')
    path.write_text(path.read_text() + '\nnotes on B\n')
    common.write_results(str(path), 'B', 'scaling.py --keep-freed-memory', 'kept 2')
    common.write_results(str(path), 'A', 'scaling.py', 'plain 2')
    text = path.read_text()
    assert 'plain 1' not in text and 'kept 1' not in text
    assert (text.index('## A') < text.index('plain 2') < text.index('## B')
            < text.index('kept 2') < text.index('notes on B'))


def test_write_results_of_a_cuda_run_leave_the_cpu_section(common, tmp_path):
    path = tmp_path / 'results.md'
    common.write_results(str(path), 'Scaling', 'scaling.py', 'on the cpu')
    common.write_results(str(path), 'Scaling', 'scaling.py', 'gpu 1', 'cuda')
    common.write_results(str(path), 'Scaling', 'scaling.py', 'gpu 2', 'cuda:0')
    text = path.read_text()
    assert 'gpu 1' not in text
    assert (text.index('## Scaling\n') < text.index('<!-- scaling.py: begin -->\non the cpu')
            < text.index('## Scaling on CUDA') < text.index(
                '<!-- scaling.py --device cuda: begin -->\ngpu 2'))


@pytest.mark.parametrize('marker', ['begin', 'end'])
def test_write_results_refuses_a_block_without_its_other_marker(common, tmp_path, marker):
    # A block that lost its end marker: the first write appended a new block, the
    # second replaced everything from the orphaned begin marker to the new end
    # marker, hand-written notes included.
    path = tmp_path / 'results.md'
    text = (f'# Results\n\n## Scaling\n\n<!-- scaling.py: {marker} -->\nold table\n\n'
            'Hand-written notes.\n\n## Other\n\nother text\n')
    path.write_text(text)
    with pytest.raises(ValueError, match="results.md has .* marker.*: mend the "
                       "scaling.py block by hand"):
        common.write_results(str(path), 'Scaling', 'scaling.py', 'new table')
    assert path.read_text() == text
    # (the markers of a key sharing the prefix are not its markers)
    common.write_results(str(path), 'Other', 'scaling.py --keep-freed-memory', 'kept')


def test_early_stopping_keeps_the_best_parameters(common):
    model = torch.nn.Linear(1, 1)
    stopper = common.EarlyStopping(patience=2)
    losses = [3.0, 2.0, 2.5, 2.0]
    stops = []
    for epoch, loss in enumerate(losses):
        with torch.no_grad():
            model.weight.fill_(float(epoch))
        stops.append(stopper.step(loss, epoch, model))
    assert stops == [False, False, False, True]  # 2.0 again is no improvement
    assert stopper.best == 2.0 and stopper.best_epoch == 1
    assert float(stopper.state['weight']) == 1.0


def test_ensemble_adam_follows_torch_adam_per_member(common):
    # Each member of the ensemble follows torch.optim.Adam at its own rate.
    torch.manual_seed(0)
    weights = torch.randn(3, 4, 2)
    lrs = [0.1, 0.01, 0.5]
    stacked = weights.clone().requires_grad_()
    ensemble = common.EnsembleAdam([stacked])
    members = [weights[m].clone().requires_grad_() for m in range(3)]
    adams = [torch.optim.Adam([w], lr=lr) for w, lr in zip(members, lrs)]
    target = torch.randn(4, 2)
    for _ in range(5):
        ensemble.zero_grad()
        (stacked - target).pow(2).sum().backward()
        ensemble.step(torch.tensor(lrs))
        for w, adam in zip(members, adams):
            adam.zero_grad()
            (w - target).pow(2).sum().backward()
            adam.step()
    for m in range(3):
        assert torch.allclose(stacked[m], members[m], atol=1e-6)
    assert not torch.allclose(stacked[0], stacked[1])


def test_ensemble_plateau_follows_reduce_lr_on_plateau(common):
    losses = [[5, 4, 4, 4, 4, 4, 3, 3, 3, 3], [5, 5, 5, 5, 5, 5, 5, 5, 5, 5]]
    plateau = common.EnsemblePlateau(2, factor=0.5, patience=2)
    scales = []
    for epoch in range(10):
        plateau.step(torch.tensor([float(row[epoch]) for row in losses]))
        scales.append(plateau.scale.tolist())
    for member, row in enumerate(losses):
        param = torch.nn.Parameter(torch.zeros(1))
        optimizer = torch.optim.SGD([param], lr=1.0)
        torch_plateau = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, factor=0.5,
                                                                   patience=2)
        for epoch, loss in enumerate(row):
            torch_plateau.step(loss)
            assert scales[epoch][member] == optimizer.param_groups[0]['lr']
    assert scales[-1] != [1.0, 1.0]


def test_ensemble_early_stopping_per_member(common):
    model = torch.nn.Linear(1, 1, bias=False)
    model.weight = torch.nn.Parameter(torch.zeros(2, 1, 1))  # two members
    stopper = common.EnsembleEarlyStopping(model, patience=2)
    losses = [[3.0, 1.0], [2.0, 2.0], [2.5, 3.0], [2.0, float('nan')], [1.0, 0.0]]
    stops = []
    for epoch, loss in enumerate(losses):
        with torch.no_grad():
            model.weight.fill_(float(epoch))
        stops.append(stopper.step(torch.tensor(loss), epoch))
    # Member 0: best 2.0 at epoch 1, stops after epoch 3 (2.0 again is no
    # improvement); member 1: best at epoch 0, stopped at epoch 2 (before the nan).
    assert stops == [False, False, False, True, True]
    assert stopper.best.tolist() == [2.0, 1.0] and stopper.best_epoch.tolist() == [1, 0]
    assert stopper.stop_epoch.tolist() == [4, 3]
    stopper.restore()
    assert model.weight.view(-1).tolist() == [1.0, 0.0]


def test_ensemble_early_stopping_stops_at_a_non_finite_loss(common):
    model = torch.nn.Linear(1, 1, bias=False)
    model.weight = torch.nn.Parameter(torch.zeros(2, 1, 1))
    stopper = common.EnsembleEarlyStopping(model, patience=5)
    assert not stopper.step(torch.tensor([1.0, float('nan')]), 0)
    assert stopper.stopped.tolist() == [False, True]
    stopper.finish(7)
    assert stopper.stop_epoch.tolist() == [7, 1]


def test_mean_std_and_table(common):
    assert common.mean_std([1.0, 0.5]) == '75.0 ± 25.0'
    assert common.mean_std([0.9]) == '90.0 ± 0.0'
    assert common.mean_std([]) == '-'
    assert common.markdown_table(['a', 'b'], [['1', '2']]) == (
        '| a | b |\n| --- | --- |\n| 1 | 2 |')


def test_run_log_resumes(common, tmp_path):
    path = tmp_path / 'runs.json'
    log = common.RunLog(str(path), False, 'cmd 1', 'cpu', {})
    log.add(dict(model='SAN', seed=0, acc=1.0))
    log.add_data_time('synthetic', 2.0)
    log.save()
    resumed = common.RunLog(str(path), True, 'cmd 2', 'cpu', {})
    assert resumed.done(model='SAN', seed=0) and not resumed.done(model='SAN', seed=1)
    assert [s['command'] for s in resumed.sessions] == ['cmd 1', 'cmd 2']
    assert resumed.data_time() == {'synthetic': 2.0}
    assert not common.RunLog(str(path), False, 'cmd 3', 'cpu', {}).runs


def test_a_run_log_written_by_another_invocation_is_not_overwritten(common, tmp_path):
    # Two invocations on one --output (e.g. a job array splitting the seeds): each
    # saved its own list over the other's, and a shared temporary name made one's
    # os.replace fail with FileNotFoundError.
    path = tmp_path / 'runs.json'
    first = common.RunLog(str(path), True, 'cmd 1', 'cpu', {})
    second = common.RunLog(str(path), True, 'cmd 2', 'cpu', {})
    first.add(dict(seed=0))
    with pytest.raises(RuntimeError, match="written by another invocation since this "
                                           "one read it"):
        second.add(dict(seed=1))
    first.add(dict(seed=2))
    resumed = common.RunLog(str(path), True, 'cmd 3', 'cpu', {})
    assert resumed.runs == [dict(seed=0), dict(seed=2)]
    assert sorted(p.name for p in tmp_path.iterdir()) == ['.runs.json.lock', 'runs.json']


def test_write_results_is_atomic_and_keeps_the_page_mode(common, tmp_path, monkeypatch):
    # The page was truncated and written in place: a process reading it meanwhile
    # found a part of it (and wrote that back with its own block).
    path = tmp_path / 'results.md'
    common.write_results(str(path), 'T', 'k', 'body')
    os.chmod(path, 0o640)
    written = []
    real_replace = os.replace

    def replace(source, target):  # the page as another process would read it
        written.append(path.read_text())
        real_replace(source, target)

    monkeypatch.setattr(os, 'replace', replace)
    common.write_results(str(path), 'T', 'k', 'new body')
    assert written and 'new body' not in written[0] and 'body' in written[0]
    assert 'new body' in path.read_text() and (os.stat(path).st_mode & 0o777) == 0o640


def test_a_linked_results_page_stays_a_link(common, tmp_path):
    # (the atomic replacement put a plain file in the link's place, and the target
    # kept the old page)
    target = tmp_path / 'target.md'
    target.write_text('# Results\n')
    link = tmp_path / 'results.md'
    link.symlink_to(target)
    common.write_results(str(link), 'T', 'k', 'body')
    assert link.is_symlink() and 'body' in target.read_text()


def test_locked_makes_processes_take_turns(common, tmp_path):
    # Another process waits for the lock while one holds it.
    from tests.benchmarks.conftest import BENCHMARKS
    path = tmp_path / 'page.md'
    child = [sys.executable, '-c', 'import sys; sys.path.insert(0, sys.argv[1]); '
             'import _report, pathlib\n'
             'with _report.locked(pathlib.Path(sys.argv[2])): print("got it")',
             str(BENCHMARKS), str(path)]
    with common._report.locked(path):
        waiting = subprocess.Popen(child, stdout=subprocess.PIPE, text=True)
        with pytest.raises(subprocess.TimeoutExpired):
            waiting.communicate(timeout=3)
    assert waiting.communicate(timeout=60)[0] == 'got it\n'


def test_a_run_log_is_resumed_and_reported_with_its_own_settings(common, tmp_path,
                                                                 capsys):
    # Resumed with other settings, the saved runs were skipped as done and reported
    # under the new settings; a report now takes the saved ones.
    def args(**kwargs):
        given = dict(output=str(tmp_path), resume=False, report_only=False,
                     device='cpu', seeds=[0], epochs=2, lr=0.1, new_option=None)
        return argparse.Namespace(**{**given, **kwargs})

    first = common.open_run_log(args(), 'bench', [], choices=('seeds', ))
    first.add(dict(seed=0, acc=0.5))
    more = common.open_run_log(args(resume=True, seeds=[1], root='/elsewhere'),
                               'bench', [], choices=('seeds', ))
    assert more.done(seed=0)  # other seeds and another root: the same settings
    for changed, message in ((dict(epochs=40), "epochs: 2 there, 40 here"),
                             (dict(epochs=40, lr=0.5), "epochs: .*; lr: 0.1 there, 0.5")):
        with pytest.raises(ValueError, match=f"bench.json holds runs made with other "
                           f"settings \\({message}.*another --output"):
            common.open_run_log(args(resume=True, **changed), 'bench', [], ('seeds', ))
    report = args(report_only=True, epochs=40)
    assert common.open_run_log(report, 'bench', [], ('seeds', )).runs
    assert report.epochs == 2 and "reporting the saved runs' settings: epochs=2" in \
        capsys.readouterr().err
    # a report of a log that is missing (a typo in --output) or holds no runs wrote
    # empty tables over the results page's
    for output in (tmp_path / 'missing', tmp_path / 'empty'):
        if output.name == 'empty':
            common.open_run_log(args(output=str(output)), 'bench', []).save()
        with pytest.raises(ValueError, match="--report-only: no runs saved in " +
                           re.escape(str(output / 'bench.json'))):
            common.open_run_log(args(output=str(output), report_only=True), 'bench', [])
    # an option newer than the saved sessions differs in nothing
    assert common.open_run_log(args(resume=True, newer=3), 'bench', [], ('seeds', ))
    # an output that cannot be a directory is refused before any run (it failed
    # when the first run's end saved the log)
    with pytest.raises(ValueError, match="--output .*bench.json/out is no directory"):
        common.open_run_log(args(output=str(tmp_path / 'bench.json' / 'out')), 'bench',
                            [])


def test_git_commit_marks_changes_outside_docs(common, monkeypatch, tmp_path):
    # The results page an earlier invocation wrote is no change of the code
    # measured; any other tracked change is.
    def git(*args):
        subprocess.run(['git', *args], cwd=tmp_path, check=True, capture_output=True)

    git('init', '-q')
    (tmp_path / 'docs').mkdir()
    for path in ('docs/results.md', 'code.py'):
        (tmp_path / path).write_text('a\n')
    git('add', '.')
    git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '-m', 'c')
    monkeypatch.setattr(common, 'REPO', tmp_path)
    head = common.git_commit()
    assert head and '+' not in head
    (tmp_path / 'docs' / 'results.md').write_text('b\n')
    assert common.git_commit() == head
    (tmp_path / 'code.py').write_text('b\n')
    assert common.git_commit() == head + '+changes'


def test_cpu_name_tells_apart_models_of_one_name(common, tmp_path):
    # Virtual machines name CPUs of different generations alike ("AMD EPYC");
    # the family, model number and clock tell their timings apart.
    entry = ('processor\t: {i}\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\n'
             'model\t\t: 17\nmodel name\t: AMD EPYC\nstepping\t: 1\n'
             'cpu MHz\t\t: 2596.140\n\n')
    cpuinfo = tmp_path / 'cpuinfo'
    cpuinfo.write_text(entry.format(i=0) + entry.format(i=1))
    cores = os.cpu_count()
    assert common._report.cpu_name(str(cpuinfo)) == (
        f'AMD EPYC (family 25, model 17, 2.6 GHz), {cores} cores')
    cpuinfo.write_text('model name\t: Some CPU\n')
    assert common._report.cpu_name(str(cpuinfo)) == f'Some CPU, {cores} cores'
    assert common._report.cpu_name(str(tmp_path / 'missing')).endswith(f', {cores} cores')


@pytest.mark.parametrize('script, argv, message', [
    # Each of these trained nothing and reported it, or failed deep inside a run.
    ('trajectory', ['--batch-size', '-1'], "--batch-size: must be at least 0, got -1"),
    ('trajectory', ['--val-fraction', '1.5'], r"--val-fraction: must be in \(0, 1\)"),
    ('trajectory', ['--max-epochs', '0'], "--max-epochs: must be at least 1, got 0"),
    ('trajectory', ['--eval-batch-size', '0'], "--eval-batch-size: must be at least 1"),
    ('trajectory', ['--workers', '-1'], "--workers: must be at least 1, got -1"),
    ('trajectory', ['--seeds', '0', 'x'], "--seeds: expected an integer, got 'x'"),
    ('citation', ['--lr', '0'], "--lr: must be > 0, got 0"),
    ('citation', ['--val-fraction', '1'], r"--val-fraction: must be in \[0, 1\), got 1"),
    ('citation', ['--masks', '0'], "--masks: must be at least 1, got 0"),
    ('tu_classification', ['--dropout', 'nan'], "--dropout: expected a finite number"),
    ('tu_classification', ['--hidden', '0'], "--hidden: must be at least 1, got 0"),
    ('trajectory_ddp', ['--weight-decay', '-1'], "--weight-decay: must be >= 0, got -1"),
    ('trajectory_ddp', ['--num-points', '2'], "--num-points: must be at least 3, got 2"),
    ('tu_classification', ['--device', 'gpu'], "--device: expected cpu, cuda or cuda:N"),
    ('citation', ['--device', 'cuda:x'], "--device: expected cpu, cuda or cuda:N"),
    # a repeated value trained its runs twice and counted them twice in the means
    ('tu_classification', ['--seeds', '3', '3'], "--seeds: 3 given more than once"),
    ('tu_classification', ['--models', 'GIN', 'MLP', 'GIN'], "--models: GIN given more"),
    ('trajectory', ['--seeds', '0', '1', '0'], "--seeds: 0 given more than once"),
    ('trajectory', ['--activations', 'Id', 'Id'], "--activations: Id given more"),
    ('citation', ['--rates', '10', '10'], "--rates: 10 given more than once"),
    # the only training trajectory became the validation one
    ('trajectory', ['--num-train', '1'], "--num-train, --val-fraction: 1 training "
     "trajectories with a validation fraction of 0.2 leave none to train on"),
])
def test_command_lines_refuse_meaningless_numbers(script, argv, message, capsys):
    with pytest.raises(SystemExit):
        load_script(script).parse_args(argv)
    assert re.search(message, capsys.readouterr().err)


def test_argument_types_accept_their_ranges(common):
    assert common.at_least(0)('0') == 0 and common.at_least(1)(' 7') == 7
    fraction = common.real_in(0, 1, low_open=True, high_open=True)
    assert fraction('0.5') == 0.5
    for bad in ('0', '1', 'inf', '-inf', 'nan', 'half'):
        with pytest.raises(argparse.ArgumentTypeError):
            fraction(bad)
    assert common.real_in(0)('0') == 0.0 and common.real_in(0, 1)('1') == 1.0
    fanout = common.int_list(-1)  # e.g. sampling.py --fanout (a,b failed in int())
    assert fanout('10, -1') == '10,-1' and fanout('3') == '3'
    for bad in ('a,b', '10,-2', '', '1,,2'):
        with pytest.raises(argparse.ArgumentTypeError):
            fanout(bad)
    assert common.device_name('cpu') == 'cpu'
    for bad in ('CPU', 'cuda:', 'cuda:-1', 'mps', ''):
        with pytest.raises(argparse.ArgumentTypeError, match="expected cpu, cuda or"):
            common.device_name(bad)


def test_a_cuda_device_that_is_not_here_is_refused(common):
    # Before, --device cuda on a CPU-only torch failed in the run, in torch.
    count = torch.cuda.device_count()
    with pytest.raises(argparse.ArgumentTypeError, match=f"has {count} CUDA device"):
        common.device_name(f'cuda:{count}')
    if count:
        assert common.device_name('cuda') == 'cuda'
    else:
        with pytest.raises(argparse.ArgumentTypeError, match="has 0 CUDA device"):
            common.device_name('cuda')


@pytest.mark.parametrize('text', ['{"runs": [', '{"runs": []}', '[1, 2]'])
def test_a_file_that_is_no_run_log_is_named(common, tmp_path, text):
    # (a truncated file, another script's JSON, a list)
    path = tmp_path / 'runs.json'
    path.write_text(text)
    with pytest.raises(ValueError, match=r"runs.json is not a run log to continue"):
        common.RunLog(str(path), True, 'cmd', 'cpu', {})
    assert path.read_text() == text
    assert not common.RunLog(str(path), False, 'cmd', 'cpu', {}).runs  # started anew


def test_commands_on_the_results_page_run_as_copied(common, monkeypatch):
    # A model name with spaces and an empty value survive the shell.
    argv = ['--models', 'SAN (orientation-equivariant)', '--plot', '', '--resume']
    line = common._report.command_line('trajectory', argv)
    assert line == ("python benchmarks/trajectory.py --models "
                    "'SAN (orientation-equivariant)' --plot '' --resume")
    assert shlex.split(line)[2:] == argv
    monkeypatch.setattr(sys, 'argv', ['trajectory.py', '--quick'])
    assert common._report.command_line('trajectory') == (
        'python benchmarks/trajectory.py --quick')


def test_run_tasks_keeps_freed_memory_where_asked(common, monkeypatch):
    import argparse

    import torch_geometric_san.utils as utils
    calls = []
    monkeypatch.setattr(utils, 'keep_freed_memory', lambda: calls.append(1) or True)
    parser = argparse.ArgumentParser()
    common.add_workers_argument(parser)
    parser.add_argument('--device', default='cpu')
    for argv, expected in (([], []), (['--keep-freed-memory'], [1])):
        calls.clear()
        out = []
        common.run_tasks([(1,), (2,)], lambda x: x * 10, parser.parse_args(argv),
                         out.append)
        assert out == [10, 20] and calls == expected


@pytest.mark.parametrize('device, loads', [('cpu', 1), ('meta', 0)])
def test_run_tasks_load_the_kernels_before_the_first_task(common, monkeypatch, device,
                                                          loads):
    # Built (about half a minute the first time) or loaded before any task is timed.
    import argparse
    calls = []
    monkeypatch.setattr(common.compiled, 'grouped_kernels', lambda: calls.append(1))
    args = argparse.Namespace(device=device, workers=1)
    seen = []
    common.run_tasks([(1,), (2,)], lambda x: seen.append(len(calls)), args,
                     lambda _: None)
    assert seen == [loads, loads]


def test_run_tasks_record_the_others_when_a_worker_task_fails(common):
    # A failing task raised at once: the tasks still running in the workers ran to
    # their end, but none of their results was recorded (saved to the run log).
    args = argparse.Namespace(workers=2, threads=1, device='cpu')
    recorded = []
    with pytest.raises(RuntimeError, match=r"1 of 4 tasks failed .*math domain error") \
            as info:
        common.run_tasks([(-1.0, ), (4.0, ), (9.0, ), (16.0, )], math.sqrt, args,
                         recorded.append)
    assert isinstance(info.value.__cause__, ValueError)
    assert sorted(recorded) == [2.0, 3.0, 4.0]
