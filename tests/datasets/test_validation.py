"""Bad arguments of the datasets and their helpers raise a ValueError/TypeError that
names the argument, before any file is read or written, and leave the input as it
was."""
import os

import numpy as np
import pytest
import torch
from torch_geometric.data import Data

from torch_geometric_san.data import SimplicialComplexData
from torch_geometric_san.datasets import (CitationComplexDataset,
                                          OceanDriftersDataset,
                                          SyntheticFlowDataset)
from torch_geometric_san.datasets.citation_complex import imputation_masks
from torch_geometric_san.datasets.io import sha256sum
from torch_geometric_san.datasets.trajectory import (path_to_flow,
                                                     random_orientation,
                                                     reorient_edges)

EDGES = np.array([[0, 1], [0, 2], [1, 2]])
PATH = SimplicialComplexData.from_simplices([[0, 1], [1, 2]])
RNG = np.random.default_rng(0)

# (dataset class, keyword arguments, exception, message pattern): each refused
# before the dataset touches its root.
DATASET_CASES = {
    'flow-num-points-bool': (SyntheticFlowDataset, dict(num_points=True), TypeError,
                             "'num_points' must be an int, not bool"),
    'flow-num-points-float': (SyntheticFlowDataset, dict(num_points=400.0), TypeError,
                              "'num_points' must be an int, not float"),
    'flow-num-points-too-few': (SyntheticFlowDataset, dict(num_points=2), ValueError,
                                "'num_points' must be at least 3, got 2"),
    'flow-num-train-bool': (SyntheticFlowDataset, dict(num_train=True), TypeError,
                            "'num_train' must be an int, not bool"),
    'flow-num-test-zero': (SyntheticFlowDataset, dict(split='test', num_test=0),
                           ValueError, "'num_test' must be at least 1, got 0"),
    'flow-num-test-of-train-split': (SyntheticFlowDataset, dict(num_test=-5),
                                     ValueError, "'num_test' must be at least 1"),
    'flow-seed-float': (SyntheticFlowDataset, dict(seed=1.5), TypeError,
                        "'seed' must be an int, not float"),
    'flow-seed-bool': (SyntheticFlowDataset, dict(seed=True), TypeError,
                       "'seed' must be an int, not bool"),
    'flow-seed-negative': (SyntheticFlowDataset, dict(seed=-1), ValueError,
                           "'seed' must be at least 0, got -1"),
    'flow-split-list': (SyntheticFlowDataset, dict(split=['train']), ValueError,
                        r"'split' must be one of \['train', 'test'\]"),
    'drifters-seed-bool': (OceanDriftersDataset, dict(seed=False), TypeError,
                           "'seed' must be an int, not bool"),
    'drifters-seed-negative': (OceanDriftersDataset, dict(seed=-3), ValueError,
                               "'seed' must be at least 0, got -3"),
    # (NumPy's RandomState took it only after the raw file was read)
    'drifters-seed-too-large': (OceanDriftersDataset, dict(seed=2**32), ValueError,
                                "'seed' must be at most 4294967295"),
    'drifters-orientation': (OceanDriftersDataset, dict(orientation='flipped'),
                             ValueError, "'orientation' must be one of"),
    'citation-order-bool': (CitationComplexDataset, dict(order=True), TypeError,
                            "'order' must be an int, not bool"),
    'citation-order-negative': (CitationComplexDataset, dict(order=-1), ValueError,
                                "'order' must be at least 0, got -1"),
    'citation-order-float': (CitationComplexDataset, dict(order=1.0), TypeError,
                             "'order' must be an int, not float"),
    'citation-num-masks-bool': (CitationComplexDataset, dict(num_masks=True),
                                TypeError, "'num_masks' must be an int, not bool"),
    'citation-seed-bool': (CitationComplexDataset, dict(seed=True), TypeError,
                           "'seed' must be an int, not bool"),
    'citation-seed-float': (CitationComplexDataset, dict(seed=0.5), TypeError,
                            "'seed' must be an int, not float"),
    'citation-seed-negative': (CitationComplexDataset, dict(seed=-2), ValueError,
                               "'seed' must be at least 0, got -2"),
    'citation-rate-bool': (CitationComplexDataset, dict(missing_rate=True), TypeError,
                           "'missing_rate' must be a real number, not bool"),
    'citation-rate-string': (CitationComplexDataset, dict(missing_rate='0.3'),
                             TypeError, "'missing_rate' must be a real number, not "
                             "str"),
    'citation-rate-nan': (CitationComplexDataset, dict(missing_rate=float('nan')),
                          ValueError, "'missing_rate' must be finite, got nan"),
    'citation-rate-one': (CitationComplexDataset, dict(missing_rate=1.0), ValueError,
                          r"'missing_rate' must be a fraction in \(0, 1\)"),
    'transform-not-callable': (SyntheticFlowDataset, dict(transform=5), TypeError,
                               "'transform' must be callable or None, not int"),
    'log-not-a-bool': (SyntheticFlowDataset, dict(log='no'), TypeError,
                       "'log' must be True or False, not str"),
    'force-reload-not-a-bool': (OceanDriftersDataset, dict(force_reload='yes'),
                                TypeError, "'force_reload' must be True or False"),
}


@pytest.mark.parametrize('name', DATASET_CASES)
def test_bad_dataset_arguments_are_refused_before_any_file(name, tmp_path):
    cls, kwargs, error, pattern = DATASET_CASES[name]
    root = tmp_path / 'root'
    with pytest.raises(error, match=pattern):
        cls(str(root), **dict(dict(log=False), **kwargs))
    assert not root.exists()


@pytest.mark.parametrize('root', [None, 5, b'bytes'])
def test_a_root_that_is_not_a_path_is_refused(root):
    with pytest.raises(TypeError, match="'root' must be a directory path"):
        SyntheticFlowDataset(root, log=False)


def test_stacked_names_the_attributes(tmp_path):
    dataset = SyntheticFlowDataset(str(tmp_path), split='test', num_points=60,
                                   num_test=2, log=False)
    with pytest.raises(KeyError, match=r"'x_2' is not a per-item attribute.*"
                       r"\['x_1', 'y'\]"):
        dataset.stacked('x_2')


# (function, args, kwargs, exception, message pattern), as in tests/data.
CASES = {
    'masks-num-masks-bool': (imputation_masks, (10, 0.5, True, 0), {}, TypeError,
                             "'num_masks' must be an int, not bool"),
    'masks-num-simplices-float': (imputation_masks, (10.0, 0.5, 2, 0), {}, TypeError,
                                  "'num_simplices' must be an int, not float"),
    'masks-no-simplices': (imputation_masks, (0, 0.5, 2, 0), {}, ValueError,
                           "'num_simplices' must be at least 1, got 0"),
    'masks-seed-negative': (imputation_masks, (10, 0.5, 2, -1), {}, ValueError,
                            "'seed' must be at least 0, got -1"),
    'masks-rate-hides-all': (imputation_masks, (10, 0.95, 2, 0), {}, ValueError,
                             r"missing_rate=0.95 hides all 10 simplices.*below 0.9 "),
    'masks-rate-hides-all-of-few': (imputation_masks, (3, 0.7, 1, 0), {}, ValueError,
                                    "hides all 3 simplices"),
    'flow-of-float-path': (path_to_flow, (np.array([0.5, 1.2]), EDGES), {}, TypeError,
                           "'path' must hold integer vertex ids, got dtype float64"),
    'flow-of-2d-path': (path_to_flow, (np.array([[0, 1, 2]]), EDGES), {}, ValueError,
                        r"'path' must have shape \[L\], got \[1, 3\]"),
    'flow-of-1d-edges': (path_to_flow, (np.array([0, 1]), EDGES[0]), {}, ValueError,
                         r"'edges' must have shape \[E, 2\], got \[2\]"),
    'flow-of-triangle-rows': (path_to_flow, (np.array([0, 1]), np.array([[0, 1, 2]])),
                              {}, ValueError, r"'edges' must have shape \[E, 2\], got "
                              r"\[1, 3\]"),
    'orientation-negative-size': (random_orientation, (-1, RNG), {}, ValueError,
                                  "'num_simplices' must be at least 0, got -1"),
    'orientation-bool-size': (random_orientation, (True, RNG), {}, TypeError,
                              "'num_simplices' must be an int, not bool"),
    'reorient-a-graph': (reorient_edges, (Data(num_nodes=2), torch.ones(1)), {},
                         TypeError, "'complex' must be a SimplicialComplexData, not "
                         "Data"),
    'reorient-order-0': (reorient_edges, (SimplicialComplexData.from_simplices(
        [], num_nodes=2), torch.ones(0)), {}, ValueError, r"no edges to re-orient"),
    'reorient-bool-signs': (reorient_edges, (PATH, torch.tensor([True, False])), {},
                            TypeError, "'signs' must be a real tensor of \\+1 and -1, "
                            "not torch.bool"),
    'reorient-nan-signs': (reorient_edges, (PATH, torch.tensor([1.0, float('nan')])),
                           {}, ValueError, r"'signs' must hold \+1 or -1 for each of "
                           "the 2 edges"),
}


@pytest.mark.parametrize('name', CASES)
def test_bad_input_raises_and_leaves_input_unchanged(name, assert_rejected):
    assert_rejected(*CASES[name])


def test_a_missing_rate_that_hides_an_order_is_refused(tmp_path, monkeypatch,
                                                      write_citation_files):
    # 4 authors (order 0) and one edge: 0.8 of 4 vertices rounds up to all 4.
    raw = tmp_path / 'root' / 'raw'
    os.makedirs(raw)
    paths = write_citation_files(str(raw), [[[17], [42], [100], [205]], [[17, 42]]],
                                 [[1, 2, 3, 4], [5]])
    monkeypatch.setattr(CitationComplexDataset, 'sha256',
                        {os.path.basename(p): sha256sum(p) for p in paths})
    with pytest.raises(ValueError, match="missing_rate=0.8 hides all 4 simplices"):
        CitationComplexDataset(str(tmp_path / 'root'), order=0, missing_rate=0.8,
                               log=False)
    dataset = CitationComplexDataset(str(tmp_path / 'root'), order=0,
                                      missing_rate=0.7, log=False)
    assert int(dataset.stacked('train_mask').sum(1).min()) == 1


def test_at_least_forty_dataset_cases():
    assert len(DATASET_CASES) + len(CASES) >= 40
