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


def test_citation_pipeline(citation, tmp_path, shared_data):
    if not (shared_data / 'citation_complex' / '150250_cochains.npy').exists():
        pytest.skip(f'needs the citation complex files in {shared_data / "citation_complex"}')
    results = tmp_path / 'results.md'
    out = citation.main(['--orders', '0', '--rates', '10', '30', '--masks', '2',
                         '--max-epochs', '3', '--no-progress', '--root', str(tmp_path / 'data'),
                         '--data-root', str(shared_data), '--output', str(tmp_path / 'out'),
                         '--results', str(results)])
    runs = out['runs']
    assert len(runs) == 2 * 2 * 2  # rates x masks x models
    assert {(r['rate'], r['mask'], r['model']) for r in runs} == {
        (rate, mask, model) for rate in (10, 30) for mask in (0, 1)
        for model in ('SAN', 'SCNN')}
    for run in runs:
        assert 0.0 <= run['acc_hidden'] <= 1.0 and 0.0 <= run['acc_all'] <= 1.0
        assert run['epochs'] <= 3 and math.isfinite(run['mae_hidden'])
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
