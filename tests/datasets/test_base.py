"""SharedComplexDataset as PyG's InMemoryDataset behaves, on a small synthetic
flow dataset."""
import pytest
import torch

from torch_geometric_san.datasets import SyntheticFlowDataset


@pytest.fixture(scope='module')
def dataset(tmp_path_factory):
    root = tmp_path_factory.mktemp('synthetic')
    return SyntheticFlowDataset(str(root), split='test', num_points=100, num_test=10,
                                log=False)


@pytest.mark.parametrize('idx', [None, torch.tensor([1, 2]), slice(2, 5),
                                 'mask', 'of_subset'])
def test_copy_holds_the_selected_items_and_shares_nothing(dataset, idx):
    # copy() returned every item of the dataset, and its tensors were the dataset's
    source = dataset
    if isinstance(idx, str):
        idx = dataset.y == 1 if idx == 'mask' else None
        source = dataset[3:7] if idx is None else dataset
    expected = source if idx is None else source.index_select(idx)
    copied = source.copy(idx)
    assert len(copied) == len(expected)
    for key in ('x_1', 'y'):
        assert torch.equal(copied.stacked(key), expected.stacked(key))
    assert torch.equal(copied[0].x_1, expected[0].x_1)
    before = (dataset.stacked('x_1').clone(), dataset.complex.boundary_weight_1.clone())
    copied.stacked('x_1').zero_()
    copied._complex.boundary_weight_1.zero_()
    assert torch.equal(dataset.stacked('x_1'), before[0])
    assert torch.equal(dataset.complex.boundary_weight_1, before[1])


def test_num_classes_of_a_subset_counts_the_whole_dataset(dataset):
    # as PyG's InMemoryDataset (without a transform): a subset without the top
    # class counted one class
    assert dataset.num_classes == 2
    assert dataset[dataset.y == 0].num_classes == 2


def test_items_that_do_not_fit_the_complex_are_processed_again(tmp_path):
    # a stale or foreign file with shorter flows loaded silently, and the models
    # failed on it later
    kwargs = dict(split='test', num_points=100, num_test=4, log=False)
    path = SyntheticFlowDataset(str(tmp_path), **kwargs).processed_paths[0]
    out = torch.load(path, weights_only=True)
    out['items']['x_1'] = out['items']['x_1'][:, :-5]
    torch.save(out, path)
    with pytest.warns(UserWarning, match="its items: 'x_1' needs one row per "
                      "1-simplex.*processing the dataset again"):
        dataset = SyntheticFlowDataset(str(tmp_path), **kwargs)
    assert dataset.stacked('x_1').size(1) == dataset.complex.num_simplices(1)


@pytest.mark.parametrize('count', [0, 2])
def test_a_processed_file_of_another_number_of_items_is_processed_again(tmp_path,
                                                                        count):
    # it loaded with the items it had (without items, the check of the first item
    # failed with an IndexError before)
    kwargs = dict(split='test', num_points=100, num_test=4, log=False)
    path = SyntheticFlowDataset(str(tmp_path), **kwargs).processed_paths[0]
    out = torch.load(path, weights_only=True)
    out['items'] = {key: value[:count] for key, value in out['items'].items()}
    torch.save(out, path)
    with pytest.warns(UserWarning, match=f"it holds {count} trajectories, the dataset "
                      f"writes 4.*processing the dataset again"):
        assert len(SyntheticFlowDataset(str(tmp_path), **kwargs)) == 4


def clique_complex(dtype=torch.float32):
    from torch_geometric_san.data import SimplicialComplexData
    simplices = torch.combinations(torch.arange(6), 3)  # K_6's triangles, a hub
    return SimplicialComplexData.from_simplices(simplices, close=True, dtype=dtype)


@pytest.mark.parametrize('dtype', [torch.float16, torch.bfloat16, torch.float64])
def test_the_checks_of_a_processed_complex_allow_its_dtypes_rounding(dtype):
    # (a half-precision complex was refused: the Hodge tolerance was below its rounding)
    from torch_geometric_san.datasets.base import _check_operators
    _check_operators(clique_complex(dtype), dtype)


def split_entry(data, key='down_index_1'):
    # The first entry of the operator given twice, with half the weight each.
    weight = key.replace('index', 'weight')
    data[key] = torch.cat([data[key][:, :1], data[key]], dim=1)
    data[weight] = torch.cat([data[weight][:1] / 2, data[weight]])
    data[weight][1] /= 2


@pytest.mark.parametrize('tamper, match', [
    # an entry in two halves passed (SciPy summed them); the attention counted it twice
    (split_entry, "'down_index_1' has 136 entries, but the down Laplacian of the "
                  "boundaries has 135"),
    (lambda d: (split_entry(d), setattr(d, 'down_index_1', d.down_index_1[:, :-1]),
                setattr(d, 'down_weight_1', d.down_weight_1[:-1])),
     "'down_index_1' holds an entry twice"),
    # a uint8 simplex wrapped around in a batch, a float num_nodes failed inside torch
    (lambda d: setattr(d, 'simplices_1', d.simplices_1.int()),
     "'simplices_1' must be torch.int64 .got torch.int32"),
    (lambda d: setattr(d, 'up_index_1', d.up_index_1.int()),
     "'up_index_1' must be torch.int64"),
    (lambda d: setattr(d, 'num_nodes', 6.0), "'num_nodes' must be an int .got 6.0"),
    # a Laplacian cut short made the check's products quadratic in the file's size
    (lambda d: (setattr(d, 'down_index_1', d.down_index_1[:, :3]),
                setattr(d, 'down_weight_1', d.down_weight_1[:3])),
     "'down_index_1' has 3 entries, but the down Laplacian of the boundaries has"),
])
def test_the_checks_of_a_processed_complex_find(tamper, match):
    from torch_geometric_san.datasets.base import _check_operators
    data = clique_complex()
    tamper(data)
    with pytest.raises(ValueError, match=match):
        _check_operators(data, torch.float32)
