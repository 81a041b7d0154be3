"""End-to-end smoke test of benchmarks/citation.py (Table 2) on one small cell:
the pipeline and the structure of its outputs, not the accuracy."""
import json
import math

import pytest
import torch


def test_within_five_percent(citation):
    pred = torch.tensor([10.4, 10.6, 0.0, 19.0])
    target = torch.tensor([10.0, 10.0, 0.0, 20.0])
    assert citation.within(pred, target).tolist() == [True, False, True, True]


def test_validation_masks_hold_out_known_values_only(citation):
    known = torch.rand(3, 200, generator=torch.Generator().manual_seed(0)) < 0.7
    val = citation.validation_masks(known, 0.1, [1, 2, 3])
    assert not (val & ~known).any()  # never a hidden (test) value
    for run in range(3):
        assert int(val[run].sum()) == round(0.1 * int(known[run].sum()))
    assert not torch.equal(val[0], val[1])
    assert torch.equal(val, citation.validation_masks(known, 0.1, [1, 2, 3]))
    assert not citation.validation_masks(known, 0.0, [1, 2, 3]).any()


def test_validation_masks_leave_a_known_simplex_for_the_loss(citation):
    # --val-fraction 0.999 held out every known simplex: nothing was trained and
    # the untrained networks were reported.
    known = torch.zeros(2, 10, dtype=torch.bool)
    known[:, :4] = True
    assert citation.validation_masks(known, 0.6, [1, 2]).sum(-1).tolist() == [2, 2]
    with pytest.raises(ValueError, match='--val-fraction 0.9 holds out all 4 known '
                       'simplices of a run, which leaves none for the loss'):
        citation.validation_masks(known, 0.9, [1, 2])


def test_warmup(citation):
    assert [citation.warmup(e, 4) for e in range(6)] == [0.25, 0.5, 0.75, 1.0, 1.0, 1.0]
    assert citation.warmup(0, 0) == 1.0


@pytest.mark.parametrize('name', ['SAN', 'SCNN'])
def test_a_run_starts_from_its_own_weights_whatever_its_ensemble(citation, name):
    # Every ensemble was drawn from one seed per order: with ensembles of one
    # (the CPU default) every rate and mask of an order started from the same
    # weights, and a run's weights depended on the ensemble it was trained in.
    runs = [(10, 0), (10, 1), (30, 0)]
    cpu = torch.device('cpu')
    together = citation.ensemble_of_runs(name, 2, runs, cpu)
    for member, run in enumerate(runs):
        alone = citation.ensemble_of_runs(name, 2, [run], cpu)
        in_pair = citation.ensemble_of_runs(name, 2, [(50, 9), run], cpu)
        for param, one, pair in zip(together.parameters(), alone.parameters(),
                                    in_pair.parameters()):
            assert torch.equal(param[member], one[0]) and torch.equal(one[0], pair[1])
    weights = [p for p in together.parameters() if p.dim() == 3][0]
    assert not torch.equal(weights[0], weights[1]) and not torch.equal(weights[0],
                                                                       weights[2])


def test_comparison_counts_cells(citation):
    runs = [dict(model=m, order=o, rate=r, mask=0, acc_hidden=a) for m, o, r, a in [
        ('SAN', 0, 10, 0.5), ('SCNN', 0, 10, 0.4), ('SAN', 0, 20, 0.1),
        ('SCNN', 0, 20, 0.3), ('SAN', 1, 10, 0.2)]]
    assert citation.comparison(runs) == (
        'SAN above the same-size SCNN on the honest metric (means over the masks both '
        'ran) in 1 of 2 cells; not above in order 0 at 20 % (10.0 against 30.0 %).\n')
    # (a stopped run: SAN's masks 0-2 against SCNN's mask 0 compared unpaired means)
    runs = [dict(model='SAN', order=0, rate=10, mask=k, acc_hidden=a)
            for k, a in enumerate((0.6, 0.9, 0.9))] + [
        dict(model='SCNN', order=0, rate=10, mask=0, acc_hidden=0.7)]
    assert 'in 0 of 1 cells; not above in order 0 at 10 % (60.0 against 70.0 %)' in \
        citation.comparison(runs)


def test_citation_pipeline(citation, tmp_path, shared_data):
    if not (shared_data / 'citation_complex' / '150250_cochains.npy').exists():
        pytest.skip(f'needs the citation complex files in {shared_data / "citation_complex"}')
    results = tmp_path / 'results.md'
    out = citation.main(['--orders', '0', '--rates', '10', '30', '--masks', '2',
                         '--max-epochs', '3', '--no-progress', '--ensemble-size', '4', '--root', str(tmp_path / 'data'),
                         '--data-root', str(shared_data), '--output', str(tmp_path / 'out'),
                         '--results', str(results)])
    runs = out['runs']
    assert len(runs) == 2 * 2 * 2  # rates x masks x models
    assert {r['members'] for r in runs} == {4}  # one ensemble per order and model
    assert {(r['rate'], r['mask'], r['model']) for r in runs} == {
        (rate, mask, model) for rate in (10, 30) for mask in (0, 1)
        for model in ('SAN', 'SCNN')}
    for run in runs:
        assert 0.0 <= run['acc_hidden'] <= 1.0 and 0.0 <= run['acc_all'] <= 1.0
        assert run['epochs'] <= 3 and math.isfinite(run['mae_hidden'])
        assert 1 <= run['best_epoch'] <= run['epochs'] and math.isfinite(run['val_loss'])
        # All simplices = the hidden ones and the known ones.
        hidden = math.ceil(run['rate'] / 100 * 352)
        assert run['acc_all'] * 352 >= run['acc_hidden'] * hidden - 1e-6
    saved = json.loads((tmp_path / 'out' / 'citation.json').read_text())
    assert saved['runs'] == runs
    text = results.read_text()
    assert '## Table 2: citation imputation' in text and '| 30 % | SAN (paper) | 75 |' in text
    assert 'Honest metric' in text


def test_report_only_labels_partial_results(citation, tmp_path, shared_data):
    if not (shared_data / 'citation_complex' / '150250_cochains.npy').exists():
        pytest.skip(f'needs the citation complex files in {shared_data / "citation_complex"}')
    common = ['--orders', '0', '--max-epochs', '2', '--no-progress',
              '--root', str(tmp_path / 'data'), '--data-root', str(shared_data),
              '--output', str(tmp_path / 'out')]
    first = citation.main([*common, '--rates', '10', '--masks', '1', '--models', 'SAN',
                           '--no-results'])
    assert len(first['runs']) == 1
    results = tmp_path / 'results.md'
    report = citation.main([*common, '--rates', '10', '20', '--masks', '2',
                            '--results', str(results), '--report-only'])
    assert report['runs'] == first['runs'] and len(report['sessions']) == 1
    text = results.read_text()
    assert '**Partial results:** 7 of the 8 trainings' in text
    assert '| 0 | SAN 1/2, SCNN 0/2 | SAN 0/2, SCNN 0/2 |' in text


def test_quick_mode(citation, tmp_path, shared_data):
    if not (shared_data / 'citation_complex' / '150250_cochains.npy').exists():
        pytest.skip(f'needs the citation complex files in {shared_data / "citation_complex"}')
    results = tmp_path / 'results.md'
    # (--max-epochs and one warm-up of --dead-relus keep the test short)
    out = citation.main(['--quick', '--max-epochs', '20', '--no-progress',
                         '--root', str(tmp_path / 'data'),
                         '--data-root', str(shared_data), '--output', str(tmp_path / 'out'),
                         '--results', str(results), '--compare-batching', '1',
                         '--dead-relus', '50'])
    runs = out['runs']
    assert len(runs) == 2 * 2 * 2 and all(r['epochs'] <= 20 for r in runs)
    assert out['sessions'][0]['args']['patience'] == 30  # the rest of --quick
    assert {r['members'] for r in runs} == {1}  # one at a time on the CPU
    assert all(r['warmup'] == 50 and r['val_fraction'] == 0.1 for r in runs)
    text = results.read_text()
    assert 'separate / batched' in text and '| 0 | SAN | 4 |' in text
    assert 'Collapse of SAN at lr 0.1' in text and '| 10 % | 50 |' in text
    assert 'SAN above the same-size SCNN on the honest metric' in text


def test_workers_train_as_one_process(citation, tmp_path, shared_data):
    if not (shared_data / 'citation_complex' / '150250_cochains.npy').exists():
        pytest.skip(f'needs the citation complex files in {shared_data / "citation_complex"}')
    common = ['--orders', '0', '--rates', '10', '--masks', '2', '--max-epochs', '2',
              '--ensemble-size', '1', '--no-progress', '--no-results',
              '--root', str(tmp_path / 'data'), '--data-root', str(shared_data)]
    alone = citation.main([*common, '--output', str(tmp_path / 'one')])['runs']
    parallel = citation.main([*common, '--workers', '2', '--threads', '1',
                              '--output', str(tmp_path / 'two')])['runs']
    assert len(alone) == len(parallel) == 4  # masks x models

    def key(run):
        return run['model'], run['rate'], run['mask']

    for one, two in zip(sorted(alone, key=key), sorted(parallel, key=key)):
        assert key(one) == key(two)
        for field in ('val_loss', 'acc_all', 'acc_hidden', 'mae_hidden', 'epochs'):
            assert one[field] == pytest.approx(two[field], rel=1e-5), field


def test_a_report_takes_the_protocol_of_its_runs(citation, tmp_path, shared_data,
                                                 capsys):
    # A log of runs at --lr 0.001 (as the results page's), reported without --lr,
    # matched no run and replaced the published block with empty tables.
    if not (shared_data / 'citation_complex' / '150250_cochains.npy').exists():
        pytest.skip(f'needs the citation complex files in {shared_data / "citation_complex"}')
    common = ['--orders', '0', '--rates', '10', '--masks', '1', '--models', 'SCNN',
              '--max-epochs', '2', '--no-progress', '--root', str(tmp_path / 'data'),
              '--data-root', str(shared_data), '--output', str(tmp_path / 'out')]
    first = citation.main([*common, '--lr', '0.001', '--warmup', '0', '--no-results'])
    results = tmp_path / 'results.md'
    report = citation.main([*common, '--results', str(results), '--report-only'])
    assert report['runs'] == first['runs']
    assert "reporting the saved runs' settings: lr=0.001, warmup=0" in \
        capsys.readouterr().err
    page = results.read_text()
    assert '| 10 % | SCNN |' in page
    # settings that no saved run has are refused, and the page is kept
    with pytest.raises(ValueError, match=r"citation.json holds no runs of "
                       r"--input-masking 0.0 --lr 0.01 --warmup 0 --val-fraction 0.1 "
                       r"\(it holds runs of --input-masking 0.0 --lr 0.001 --warmup 0 "
                       r"--val-fraction 0.1\): give the options of its runs"):
        citation.main([*common, '--lr', '0.01', '--results', str(results),
                       '--report-only'])
    assert results.read_text() == page


def test_input_masking_is_the_same_alone_or_in_an_ensemble(citation, tmp_path,
                                                           shared_data):
    # The masking noise was one draw for the whole ensemble from a generator of
    # the order: a run's masks depended on the ensemble size and its position.
    if not (shared_data / 'citation_complex' / '150250_cochains.npy').exists():
        pytest.skip(f'needs the citation complex files in {shared_data / "citation_complex"}')
    common = ['--orders', '0', '--rates', '10', '--masks', '2', '--models', 'SCNN',
              '--max-epochs', '10', '--patience', '10', '--lr', '0.01',
              '--input-masking', '0.3', '--no-progress', '--no-results',
              '--root', str(tmp_path / 'data'), '--data-root', str(shared_data)]
    records = {}
    for size in (1, 2):
        runs = citation.main([*common, '--ensemble-size', str(size),
                              '--output', str(tmp_path / str(size))])['runs']
        records[size] = {(r['rate'], r['mask']): r for r in runs}
    assert records[1].keys() == records[2].keys() == {(10, 0), (10, 1)}
    assert {r['members'] for r in records[2].values()} == {2}
    for run, alone in records[1].items():
        # (SCNN members train to the same records up to rounding)
        for field in ('val_loss', 'mae_hidden'):
            assert records[2][run][field] == pytest.approx(alone[field], rel=1e-4), field
