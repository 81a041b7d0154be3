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
