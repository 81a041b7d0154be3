"""End-to-end test of benchmarks/tu_classification.py on a tiny TU-format dataset:
the pipeline, the protocol's splits and the structure of its outputs."""
import json
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch

from tests.benchmarks.conftest import load_script

MODELS = ['MultiOrderSAN', 'GIN', 'GAT', 'MLP']


@pytest.fixture
def tu_classification():
    return load_script('tu_classification')


def test_pipeline(tu_classification, tiny_tu_dataset, tmp_path):
    results = tmp_path / 'results.md'
    results.write_text('# Results\n\n## Scaling\n\nkept\n')
    out = tu_classification.main([
        '--dataset', 'TINY', '--root', tiny_tu_dataset, '--seeds', '0', '1',
        '--epochs', '2', '--batch-size', '8', '--no-progress',
        '--data-root', str(tmp_path / 'nothing'), '--output', str(tmp_path / 'out'),
        '--results', str(results)])
    runs = out['runs']
    assert sorted((r['model'], r['seed']) for r in runs) == sorted(
        (m, s) for m in MODELS for s in (0, 1))
    for run in runs:
        # 24 graphs: 12 / 6 / 6; accuracies are multiples of 1/6.
        assert 1 <= run['best_epoch'] <= 2 and run['dataset'] == 'TINY'
        for key in ('val_acc', 'test_acc'):
            assert run[key] * 6 == pytest.approx(round(run[key] * 6))
    saved = json.loads((tmp_path / 'out' / 'tu_classification.json').read_text())
    assert saved['runs'] == runs and out['lift_time'] > 0
    text = results.read_text()
    assert '## Scaling\n\nkept' in text and '## TU graph classification' in text
    assert '<!-- tu_classification.py: begin -->' in text
    assert all(f'| {model} |' in text for model in MODELS)
    assert 'Command: `python' in text and 'Targets of this benchmark' in text
    assert 'Differences of test accuracy on the same splits' in text
    assert '- MultiOrderSAN - GIN: ' in text and 'over 2 seeds' in text
    # the targets are set for PROTEINS: for another dataset only the comparison
    assert 'MultiOrderSAN not below GIN' in text and 'lifting all' not in text

    # A report rebuilds the tables from the saved runs, with their lifting time.
    report = tu_classification.main([
        '--dataset', 'TINY', '--root', tiny_tu_dataset, '--report-only', '--no-progress',
        '--output', str(tmp_path / 'out'), '--no-results'])
    assert report['runs'] == runs and report['lift_time'] == out['lift_time']
    with pytest.raises(ValueError, match='no runs saved'):
        tu_classification.main(['--report-only', '--output', str(tmp_path / 'empty'),
                                '--no-results'])
    # a report of other splits printed an empty table as "Reported 8 runs"
    with pytest.raises(ValueError, match=r"holds no runs of TINY on the seeded splits "
                       r"\(it holds \[\('TINY', 'topobench'\)\]\)"):
        tu_classification.main([
            '--dataset', 'TINY', '--root', tiny_tu_dataset, '--report-only',
            '--splits', 'seeded', '--no-progress', '--output', str(tmp_path / 'out'),
            '--no-results'])


def test_target_checks(tu_classification):
    runs = [dict(model='MultiOrderSAN', seed=s, test_acc=a)
            for s, a in enumerate((0.76, 0.75))] + [
        dict(model='GIN', seed=s, test_acc=a) for s, a in enumerate((0.74, 0.78))]
    checks = tu_classification.target_checks(runs, 19 * 60, 5.5, 1113, 'PROTEINS')
    assert checks.splitlines() == [
        '- lifting all 1113 graphs under 5 s: 5.5 s, not met',
        '- whole run under 20 minutes: 19.0 min, met',
        '- MultiOrderSAN at least 75.27 (TopoBench SCN on PROTEINS): 75.50, met',
        '- MultiOrderSAN not below GIN on the same splits: 75.50 against 76.00 over 2 '
        'seeds, not met']
    assert tu_classification.target_checks(runs, 60, 1, 188, 'MUTAG').splitlines() == [
        '- MultiOrderSAN not below GIN on the same splits: 75.50 against 76.00 over 2 '
        'seeds, not met']


def test_target_checks_judge_what_they_print_on_the_seeds_both_ran(tu_classification):
    # 210 of 279 test graphs on every seed: 75.2688 %, printed 75.27 and judged not
    # met; GIN with the same total (equal means, summed in another order) judged
    # above; GIN on 2 of the seeds: its mean compared with SAN's over all five.
    def runs(model, correct):
        return [dict(model=model, seed=s, test_acc=c / 279)
                for s, c in zip((0, 3, 5, 7, 9), correct)]

    san = runs('MultiOrderSAN', [210] * 5)
    checks = tu_classification.target_checks(
        san + runs('GIN', [212, 208, 210, 211, 209]), 60, 1, 1113, 'PROTEINS')
    assert '(TopoBench SCN on PROTEINS): 75.27, met' in checks
    assert 'same splits: 75.27 against 75.27 over 5 seeds, met' in checks
    checks = tu_classification.target_checks(
        runs('MultiOrderSAN', [215, 216, 195, 195, 195]) + runs('GIN', [210, 211]),
        60, 1, 1113, 'PROTEINS')
    assert 'same splits: 77.24 against 75.45 over 2 seeds, met' in checks


def test_paired_differences(tu_classification):
    runs = [dict(model='MultiOrderSAN', seed=s, test_acc=a)
            for s, a in enumerate((0.76, 0.75, 0.80))] + [
        dict(model='GIN', seed=s, test_acc=a) for s, a in enumerate((0.74, 0.78, 0.80))] + [
        dict(model='GAT', seed=0, test_acc=0.5)]  # one common seed: no line
    # differences 2, -3 and 0 points: mean -1/3, std 2.517, standard error 1.453,
    # t(0.975, 2 degrees of freedom) = 4.303: -1/3 -+ 6.252
    assert tu_classification.paired_differences(runs).splitlines() == [
        '- MultiOrderSAN - GIN: -0.33 ± 1.45 (standard error), 95 % interval '
        '[-6.58, +5.92], over 3 seeds (won 1, tied 1, lost 1)']
    assert tu_classification.paired_differences(runs[:3]) == ''


@pytest.mark.parametrize('rule', ['topobench', 'seeded'])
def test_splits_and_arguments(tu_classification, rule):
    train, val, test = tu_classification.split(1113, 3, rule)
    assert (train.numel(), val.numel(), test.numel()) == (556, 278, 279)
    assert torch.cat([train, val, test]).sort().values.equal(torch.arange(1113))
    assert tu_classification.split(1113, 3, rule)[0].equal(train)
    assert not tu_classification.split(1113, 4, rule)[0].equal(train)
    args = tu_classification.parse_args(['--quick', '--splits', rule])
    assert args.results is None and args.seeds == [0] and args.dataset == 'PROTEINS'
    full = tu_classification.parse_args(['--splits', rule])
    assert full.seeds == ([0, 3, 5, 7, 9] if rule == 'topobench' else [0, 1, 2, 3, 4])
    assert full.results.endswith('docs/results.md')


def test_topobench_splits_are_topobench_s(tu_classification):
    # TopoBench's random_splitting: np.random.seed(42), then ten permutations from
    # NumPy's global generator, the data seed picking one; int(0.5 n) training
    # and int(0.25 n) validation graphs, the rest for testing.
    state = np.random.get_state()
    try:
        np.random.seed(42)
        perms = [np.random.permutation(1113) for _ in range(10)]
    finally:
        np.random.set_state(state)
    for seed in (0, 3, 5, 7, 9):
        perm = perms[seed]
        expected = perm[:556], perm[556:834], perm[834:]
        got = tu_classification.split(1113, seed)
        for mine, theirs in zip(got, expected):
            assert mine.tolist() == theirs.tolist()


def test_topobench_splits_refuse_seeds_past_nine(tu_classification):
    with pytest.raises(ValueError, match='data seeds 0-9'):
        tu_classification.split(100, 10)
    with pytest.raises(SystemExit):
        tu_classification.parse_args(['--seeds', '0', '10'])
    assert tu_classification.parse_args(['--splits', 'seeded', '--seeds', '12']).seeds == [12]


def test_filter_lengths_reach_every_order(tu_classification):
    args = tu_classification.parse_args(['--taps', '2', '--harmonic', '3',
                                         '--readout', 'mean'])
    model = tu_classification.build_model('MultiOrderSAN', [3, 3, 3], 2, args)
    convs = [m for m in model.modules() if type(m).__name__ == 'SANConv']
    assert convs and all(c.J_harmonic == 3 for c in convs)
    # Order 1 has both neighbourhoods; order 0 no lower one, order 2 no upper one.
    assert {(c.J_up, c.J_down) for c in convs} == {(2, 0), (2, 2), (0, 2)}
    assert model.readout == 'mean'
    default = tu_classification.build_model(
        'MultiOrderSAN', [3, 3, 3], 2, tu_classification.parse_args([]))
    assert {c.J_harmonic for c in default.modules() if type(c).__name__ == 'SANConv'} == {0}


def test_normalisation_and_jumping_knowledge_options(tu_classification):
    args = tu_classification.parse_args(['--norm', 'graph_norm', '--jk', 'cat'])
    model = tu_classification.build_model('MultiOrderSAN', [3, 3, 3], 2, args)
    assert model.norm == 'graph_norm' and model.jk_mode == 'cat'
    assert not model.readout_input
    assert tu_classification.build_model(
        'MultiOrderSAN', [3, 3, 3], 2,
        tu_classification.parse_args(['--readout-input'])).readout_input
    assert model.mlp.channel_list[0] == 3 * args.hidden * args.layers
    default = tu_classification.build_model(
        'MultiOrderSAN', [3, 3, 3], 2, tu_classification.parse_args([]))
    assert default.norm is None and default.jk_mode is None
    # The baselines take the same options (PyG's own).
    for name in ('GIN', 'GAT'):
        baseline = tu_classification.build_model(name, [3, 3, 3], 2, args)
        assert baseline.gnn.norm == 'graph_norm' and baseline.gnn.jk_mode == 'cat'


def test_structure_agnostic_baseline_sums_the_node_features(tu_classification):
    from torch_geometric.data import Batch, Data
    args = tu_classification.parse_args([])
    model = tu_classification.build_model('MLP', [3, 3, 3], 2, args).eval()
    graphs = [Data(x=torch.randn(n, 3), edge_index=torch.tensor([[0, 1], [1, 0]]))
              for n in (4, 6)]
    batch = Batch.from_data_list(graphs)
    expected = model.mlp(torch.stack([g.x.sum(0) for g in graphs]))
    assert torch.allclose(model(batch), expected, atol=1e-6)
    # The edges play no part.
    batch.edge_index = batch.edge_index[:, :0]
    assert torch.allclose(model(batch), expected, atol=1e-6)


def test_selected_settings_per_model(tu_classification, tiny_tu_dataset, tmp_path,
                                     monkeypatch):
    # PROTEINS' selections (one per rule of splits) name options of the script,
    # and every model.
    assert set(tu_classification.SELECTED['PROTEINS']) == {'topobench', 'seeded'}
    for rule, selection in tu_classification.SELECTED['PROTEINS'].items():
        args = tu_classification.parse_args(['--selected', '--splits', rule])
        for name, setting in selection.items():
            chosen = tu_classification.model_args(name, args)
            assert all(getattr(chosen, key) == value for key, value in setting.items())
            assert all(hasattr(args, key) for key in setting)
        assert set(selection) == set(MODELS)
    assert tu_classification.model_args('GIN', tu_classification.parse_args([])).jk is None
    assert tu_classification.setting_label({}) == 'defaults'
    assert tu_classification.setting_label(
        dict(jk='cat', readout_input=True, epochs=3)) == '--jk cat --readout-input --epochs 3'
    with pytest.raises(ValueError, match='no settings were chosen on MUTAG'):
        tu_classification.parse_args(['--selected', '--dataset', 'MUTAG'])
    with pytest.raises(ValueError, match='does not combine with --quick'):
        tu_classification.parse_args(['--selected', '--quick'])

    # A run trains each model with its own setting and reports it.
    monkeypatch.setitem(tu_classification.SELECTED, 'TINY', {'topobench': {
        'MultiOrderSAN': dict(epochs=3), 'GIN': dict(jk='cat'), 'GAT': {},
        'MLP': dict(epochs=1)}})
    with pytest.raises(ValueError, match='no settings were chosen on TINY with '
                       '--splits seeded'):
        tu_classification.parse_args(['--selected', '--dataset', 'TINY', '--splits',
                                      'seeded'])
    out = tu_classification.main([
        '--dataset', 'TINY', '--root', tiny_tu_dataset, '--seeds', '0', '--epochs', '2',
        '--batch-size', '8', '--no-progress', '--selected', '--models', *MODELS,
        '--data-root', str(tmp_path / 'nothing'), '--output', str(tmp_path / 'out'),
        '--no-results'])
    runs = {r['model']: r for r in out['runs']}
    assert {name: r['epochs'] for name, r in runs.items()} == dict(
        MultiOrderSAN=3, GIN=2, GAT=2, MLP=1)
    assert runs['GIN']['setting'] == '--jk cat' and runs['GAT']['setting'] == 'defaults'
    assert '| model | setting | test accuracy (%) |' in out['table']
    assert '| GIN | `--jk cat` |' in out['table']


def test_a_dataset_that_cannot_be_downloaded_says_what_to_do(tu_classification,
                                                              tmp_path, monkeypatch):
    # Offline (or a wrong name), PyG's download failed with an error of its fetcher
    # (aiohttp's DNS error here), naming neither the dataset nor the way out.
    from torch_geometric.datasets import TUDataset

    def offline(self):
        raise OSError('Name or service not known')

    monkeypatch.setattr(TUDataset, 'download', offline)
    args = tu_classification.parse_args([
        '--dataset', 'NOPE', '--root', str(tmp_path / 'tu'),
        '--data-root', str(tmp_path / 'nothing')])
    with pytest.raises(RuntimeError, match=r"could not download the TU dataset 'NOPE' "
                       r"\(OSError: Name or service not known\).*NOPE_A.txt"):
        tu_classification.load(args)


class _Touches:
    """Pickles to a call that creates a file, as a planted file would."""
    def __init__(self, path):
        self.path = str(path)

    def __reduce__(self):
        return (open, (self.path, 'w'))


@pytest.mark.parametrize('name', ['pre_transform.pt', 'pre_filter.pt', 'data.pt'])
def test_a_file_planted_in_the_root_runs_no_code(tu_classification, tiny_tu_dataset,
                                                 tmp_path, name):
    # PyG's TUDataset unpickles processed/pre_transform.pt and pre_filter.pt with
    # weights_only=False, and its data again so where the safe load fails.
    root = Path(tiny_tu_dataset)
    args = tu_classification.parse_args(['--dataset', 'TINY', '--root', str(root),
                                         '--data-root', str(tmp_path / 'nothing')])
    assert len(tu_classification.load(args)) == 24  # processes the raw files
    marker = tmp_path / 'ran'
    processed = root / 'TINY' / 'processed'
    planted = processed / name if name != 'data.pt' else next(processed.glob('data*.pt'))
    torch.save(_Touches(marker), planted)
    with pytest.raises(ValueError, match="is not one PyG wrote, or was tampered with"), \
            warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        tu_classification.load(args)
    assert not marker.exists()
    # (PyG's warning advised allowlisting the planted call, which would run it)
    assert not [w for w in caught if 'Weights only load failed' in str(w.message)]
    # the planted file is really one that runs code
    torch.load(planted, weights_only=False)
    assert marker.exists()


def test_a_report_times_only_the_invocations_of_its_runs(tu_classification,
                                                         tiny_tu_dataset, tmp_path):
    # The time targets summed every invocation of the log and took the latest
    # lifting time, also of another rule of splits.
    common = ['--dataset', 'TINY', '--root', tiny_tu_dataset, '--epochs', '1',
              '--batch-size', '8', '--models', 'MLP', '--seeds', '0', '--no-progress',
              '--data-root', str(tmp_path / 'nothing'), '--output', str(tmp_path / 'out'),
              '--no-results']
    first = tu_classification.main(common)
    tu_classification.main(common + ['--splits', 'seeded', '--resume'])
    log = json.loads((tmp_path / 'out' / 'tu_classification.json').read_text())
    assert len(log['sessions']) == 2
    report = tu_classification.main(common + ['--report-only'])
    assert report['lift_time'] == first['lift_time']
    assert report['wall_time'] == log['sessions'][0]['wall_time']
    # the block's header named both invocations, and their total wall time
    block = (tmp_path / 'out' / 'tu_classification.md').read_text()
    assert block.count('Command: `') == 1 and 'Total wall time' not in block


def test_a_report_of_quick_runs_is_one(tu_classification, tiny_tu_dataset, tmp_path,
                                       common):
    # It went to docs/results.md by default, and its verdicts lost the --quick
    # caveat (quick is no setting a report takes from its log).
    base = ['--dataset', 'TINY', '--root', tiny_tu_dataset, '--models', 'MLP',
            '--no-progress', '--data-root', str(tmp_path / 'nothing'), '--output',
            str(tmp_path / 'out')]
    tu_classification.main(base + ['--quick', '--no-results'])
    for extra, results in (([], None), (['--results', str(tmp_path / 'r.md')],
                                        str(tmp_path / 'r.md'))):
        argv = base + ['--report-only'] + extra
        args = tu_classification.parse_args(argv)
        assert not args.quick and args.results is not None  # (a full run's, so far)
        common.open_run_log(args, 'tu_classification', argv,
                            ('dataset', 'models', 'seeds', 'splits'))
        assert args.quick and args.results == results
