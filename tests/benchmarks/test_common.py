import torch


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
