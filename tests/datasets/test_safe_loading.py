"""No file a dataset reads runs code, and damaged processed files are named and
processed again."""
import os
import pickle
import warnings
from pathlib import Path

import pytest
import torch

from torch_geometric_san.datasets import SyntheticFlowDataset
from torch_geometric_san.datasets.io import load_processed


class Plant:
    r"""Unpickling it creates the file :obj:`marker`, as a malicious pickle would
    run a command."""
    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return Path.touch, (self.marker, )


def small(root, **kwargs):
    return SyntheticFlowDataset(str(root), split="test", num_points=60,
                                num_test=2, log=False, **kwargs)


@pytest.mark.parametrize("name", ["pre_transform.pt", "pre_filter.pt", "processed"])
def test_a_planted_pickle_is_never_unpickled(tmp_path, name):
    root = tmp_path / "root"
    processed = small(root).processed_paths[0]
    marker = tmp_path / "marker"
    target = processed if name == "processed" else os.path.join(
        os.path.dirname(processed), name)
    torch.save(Plant(marker), target)
    # The plant works: unpickling it as PyG's Dataset._process does runs it.
    torch.load(target, weights_only=False)
    assert marker.exists()
    marker.unlink()

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        dataset = small(root)
    # Only the planted processed file is noticed (and processed again); the planted
    # pre_transform.pt/pre_filter.pt are not even opened.
    assert len(caught) == (name == "processed")
    assert not marker.exists()
    assert len(dataset) == 2


def test_no_pre_transform_files_are_written(tmp_path):
    dataset = small(tmp_path)
    assert sorted(os.listdir(dataset.processed_dir)) == [
        os.path.basename(dataset.processed_paths[0])]


@pytest.mark.parametrize("damage", ["empty", "truncated", "junk", "wrong-layout"])
def test_a_damaged_processed_file_is_named_and_processed_again(tmp_path, damage):
    first = small(tmp_path)
    path = first.processed_paths[0]
    content = Path(path).read_bytes()
    if damage == "wrong-layout":
        torch.save({"complex": {}, "items": [1, 2]}, path)
    else:
        Path(path).write_bytes({"empty": b"", "truncated": content[:len(content) // 2],
                                "junk": b"not a torch file"}[damage])
    with pytest.raises(ValueError, match=rf"'{path}' cannot be read.*force_reload=True"):
        load_processed(path)
    with pytest.warns(UserWarning, match=rf"'{path}' cannot be read.*processing the "
                      r"dataset again"):
        again = small(tmp_path)
    assert torch.equal(again.x_1, first.x_1)
    assert torch.equal(load_processed(path)["items"]["x_1"], first.x_1)


@pytest.mark.parametrize("change, reason", [
    # each loaded without a warning and failed later (a bare StopIteration on len(),
    # a KeyError on y) or gave a complex of junk
    (lambda out: dict(out, items={}), r"its items lack \['x_1', 'y'\]"),
    (lambda out: dict(out, items={"x_1": out["items"]["x_1"]}),
     r"its items lack \['y'\]"),
    (lambda out: dict(out, extra={}), r"its extra lack \['edge_orientation'\]"),
    (lambda out: dict(out, complex={"junk": torch.ones(1)}),
     r"its complex lack \['spectrum_0'\]"),
    (lambda out: dict(out, complex=dict(out["complex"], simplices_1=torch.zeros(3, 4))),
     r"its complex: .*simplices_1"),
    # each loaded without a warning (session 25): a sparse x_1 with indices out of
    # range crashed the interpreter on use; the others gave a wrong dataset
    (lambda out: dict(out, items=dict(out["items"], x_1=torch.sparse_coo_tensor(
        torch.tensor([[0, 1], [0, 9999], [0, 0]]), torch.ones(2),
        out["items"]["x_1"].shape))), r"its items hold a torch.sparse_coo tensor 'x_1'"),
    (lambda out: dict(out, items=dict(out["items"], y=out["items"]["y"].repeat(1, 3))),
     r"'y' must be torch.int64 of shape \[2, 1\]"),
    (lambda out: dict(out, items=dict(out["items"], y=out["items"]["y"] + 7)),
     r"'y' holds values other than \[0, 1\]"),
    (lambda out: dict(out, items=dict(out["items"], x_1=out["items"]["x_1"].long())),
     r"'x_1' must be torch.float32"),
    (lambda out: dict(out, items=dict(out["items"], x_1=out["items"]["x_1"] / 0)),
     r"'x_1' holds NaN or infinite values"),
    (lambda out: dict(out, extra=dict(out["extra"], edge_orientation=torch.zeros(
        3, dtype=torch.long))), r"'edge_orientation' must be torch.int64 of shape"),
])
def test_a_processed_file_of_another_content_is_processed_again(tmp_path, change,
                                                                 reason):
    first = small(tmp_path)
    path = first.processed_paths[0]
    torch.save(change(torch.load(path, weights_only=True)), path)
    with pytest.warns(UserWarning, match=rf"'{path}' cannot be read \({reason}.*"
                      r"processing the dataset again"):
        again = small(tmp_path)
    assert len(again) == 2 and torch.equal(again.y, first.y)


def test_load_processed_leaves_other_errors_alone(tmp_path):
    with pytest.raises(FileNotFoundError):
        load_processed(str(tmp_path / "missing.pt"))


def test_unpickling_a_plant_with_pickle_would_run_it(tmp_path):
    # (the premise of the tests above, with the standard library alone)
    marker = tmp_path / "marker"
    pickle.loads(pickle.dumps(Plant(marker)))
    assert marker.exists()
