"""No file a dataset reads runs code, and damaged processed files are named and
processed again."""
import io
import os
import pickle
import re
import struct
import subprocess
import sys
import warnings
import zipfile
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


def torch_refusal_of_sparse_indices():
    # What torch.load(weights_only=True) itself raises on a sparse tensor with an
    # index out of range: PyTorch 2.4 an UnpicklingError, 2.5 a RuntimeError; 2.13
    # nothing (None), leaving it to the package's checks.
    buffer = io.BytesIO()
    torch.save(torch.sparse_coo_tensor(torch.tensor([[0, 9]]), torch.ones(2), (2, ),
                                       check_invariants=False), buffer)
    buffer.seek(0)
    try:
        torch.load(buffer, weights_only=True)
    except (pickle.UnpicklingError, RuntimeError) as error:
        return type(error).__name__
    return None


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


def test_a_processed_file_that_is_not_a_regular_file_is_processed_again(
        tmp_path, not_a_regular_file):
    # a FIFO with no writer there blocked the dataset for ever, a link to /dev/zero
    # never ended
    kind, link = not_a_regular_file
    path = small(tmp_path / "root").processed_paths[0]
    os.replace(link, path)
    with pytest.raises(ValueError, match=rf"'{re.escape(path)}' cannot be read \("
                       rf".* is a {kind}, not a regular file\)"):
        load_processed(path)
    with pytest.warns(UserWarning, match=rf"is a {kind}.*processing the dataset "
                      r"again") as caught:
        dataset = small(tmp_path / "root")
    # at the user's line (it named the dataset class's __init__)
    assert [w.filename for w in caught] == [__file__]
    assert len(dataset) == 2 and os.path.isfile(path) and not os.path.islink(path)


def test_a_directory_in_place_of_the_processed_file_is_named(tmp_path):
    # (the processing ran whole, then os.replace failed with IsADirectoryError)
    path = small(tmp_path / "root").processed_paths[0]
    os.remove(path)
    os.mkdir(path)
    with pytest.warns(UserWarning, match="is a directory"), \
            pytest.raises(ValueError, match=rf"'{re.escape(path)}' is a directory, which "
                          "a dataset does not replace with its processed file: remove it"):
        small(tmp_path / "root")


def rewrite_zip(path, compress_type=zipfile.ZIP_STORED):
    # The entries of the zip archive path, written again with compress_type.
    with zipfile.ZipFile(path) as source:
        entries = [(info.filename, source.read(info)) for info in source.infolist()]
    with zipfile.ZipFile(path, "w", compress_type) as target:
        for name, data in entries:
            target.writestr(name, data)


def test_compressed_zip_entries_are_refused_before_they_are_inflated(tmp_path):
    # torch.load inflated them in full: a few hundred kB inflated to hundreds of MB
    # before the file was found damaged
    first = small(tmp_path)
    path = first.processed_paths[0]
    rewrite_zip(path, zipfile.ZIP_DEFLATED)
    assert torch.equal(torch.load(path, weights_only=True)["items"]["x_1"], first.x_1)
    with pytest.raises(ValueError, match=r"cannot be read \(its zip entry '.*' is "
                       r"compressed; torch.save stores them uncompressed\)"):
        load_processed(path)
    with pytest.warns(UserWarning, match="is compressed.*processing the dataset again"):
        again = small(tmp_path)
    assert torch.equal(again.x_1, first.x_1)
    rewrite_zip(path)  # stored again, as torch.save writes them: read
    assert torch.equal(load_processed(path)["items"]["x_1"], first.x_1)


def test_zip_entries_larger_than_the_file_are_refused(tmp_path):
    path = small(tmp_path).processed_paths[0]
    content = bytearray(Path(path).read_bytes())
    entry = content.find(b"PK\x01\x02")  # the first entry of the central directory
    struct.pack_into("<II", content, entry + 20, 2**31, 2**31)  # its two sizes
    Path(path).write_bytes(bytes(content))
    with pytest.raises(ValueError, match=r"cannot be read \(its zip entries claim "
                       rf"more bytes than its {len(content)} on disk\)"):
        load_processed(path)


def replace_pickle(path, pickled, entry="data.pkl"):
    r"""Writes :obj:`pickled` in place of the pickle ('.../data.pkl') of the
    processed file :obj:`path`, as the entry :obj:`entry` of the same folder, its
    other entries as they are."""
    with zipfile.ZipFile(path) as source:
        entries = [(info.filename, source.read(info)) for info in source.infolist()]
    with zipfile.ZipFile(path, "w") as target:
        for name, data in entries:
            if name.endswith("/data.pkl"):
                name, data = name[:-len("data.pkl")] + entry, pickled
            target.writestr(name, data)


def deep_dict_key(n):
    r"""A pickle of a dict whose key is a tuple nested :obj:`n` + 1 deep: hashing
    it recursed in C until the interpreter crashed (from n = 150,000 here)."""
    return b"\x80\x02}" + b")" + b"\x85" * n + b"K\x01s."


def test_a_processed_pickle_nested_too_deep_is_processed_again(tmp_path):
    # torch.load(weights_only=True) crashed the interpreter with a segmentation
    # fault; the dataset is read in a process of its own, so that this one survives
    # where the check fails
    root = tmp_path / "root"
    first = small(root)
    path = first.processed_paths[0]
    replace_pickle(path, deep_dict_key(200_000))
    code = ("import warnings\n"
            "from torch_geometric_san.datasets import SyntheticFlowDataset\n"
            "with warnings.catch_warnings(record=True) as caught:\n"
            "    warnings.simplefilter('always')\n"
            f"    dataset = SyntheticFlowDataset({str(root)!r}, split='test', "
            "num_points=60, num_test=2, log=False)\n"
            "print(len(dataset), *[w.message for w in caught], sep='\\n')\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=Path(__file__).resolve().parents[2])
    assert run.returncode == 0, (run.returncode, run.stderr[-2000:])
    assert run.stdout.startswith("2\n")
    assert re.search(rf"'{re.escape(path)}' cannot be read \(its pickle "
                     r"'[^']*data.pkl' nests objects 200002 deep, more than the 1000 a "
                     r"dataset reads\).*processing the dataset again", run.stdout)
    assert torch.equal(load_processed(path)["items"]["x_1"], first.x_1)  # (processed)


def test_the_pickle_is_scanned_under_any_case_of_its_name(tmp_path):
    # torch.load finds '.../DATA.PKL' too (session 28: such an entry was not scanned,
    # and one nested 200,000 deep crashed the interpreter)
    path = small(tmp_path).processed_paths[0]
    replace_pickle(path, b"\x80\x02" + b"]" * 5000 + b"a" * 4999 + b".", "DATA.PKL")
    with pytest.raises(ValueError, match=r"its pickle '[^']*DATA.PKL' nests objects "
                       r"5000 deep, more than the 1000"):
        load_processed(path)


def test_a_malformed_processed_pickle_is_named(tmp_path):
    path = small(tmp_path).processed_paths[0]
    replace_pickle(path, b"\x80\x02a.")  # APPEND on an empty stack
    with pytest.raises(ValueError, match=rf"'{re.escape(path)}' cannot be read \(its "
                       r"pickle '[^']*data.pkl' is malformed \(IndexError: APPEND takes "
                       r"more than the stack holds\)\)"):
        load_processed(path)
    replace_pickle(path, b"\x80\x02}K\x01")  # no STOP
    with pytest.raises(ValueError, match=r"is malformed \(ValueError: pickle exhausted "
                       r"before seeing STOP\)"):
        load_processed(path)

def changed(part, key, new):
    r"""What gives a processed file's content :obj:`new(value)` for the :obj:`value`
    of :obj:`key` in its :obj:`part` (:obj:`None` where it has none)."""
    return lambda out: dict(out, **{part: dict(out[part],
                                               **{key: new(out[part].get(key))})})


def first_set(value):
    r"""What sets the first entry of a tensor to :obj:`value`."""
    return lambda tensor: torch.cat([tensor.new_tensor([value]), tensor[1:]])


def flipped(k, simplex=0):
    r"""What flips the orientation of :obj:`simplex` of order :obj:`k` in the
    boundaries and Laplacians of a processed complex, consistently: another valid
    complex, with the signs of the stored flows no longer its own."""
    def change(out):
        complex = dict(out["complex"])
        for name, order, rows in [("boundary", k, (1, )), ("boundary", k + 1, (0, ))] + [
                (name, k, (0, 1)) for name in ("up", "down", "hodge")]:
            if f"{name}_index_{order}" in complex:
                index = complex[f"{name}_index_{order}"]
                hits = sum((index[row] == simplex).long() for row in rows)
                complex[f"{name}_weight_{order}"] = complex[f"{name}_weight_{order}"] * (
                    1 - 2 * (hits % 2)).float()
        return dict(out, complex=complex)
    return change


@pytest.mark.parametrize("change, reason", [
    # each loaded without a warning and failed later (a bare StopIteration on len(),
    # a KeyError on y) or gave a complex of junk
    (lambda out: dict(out, items={}), r"its items lack \['x_1', 'y'\]"),
    (lambda out: dict(out, items={"x_1": out["items"]["x_1"]}),
     r"its items lack \['y'\]"),
    (lambda out: dict(out, extra={}), r"its extra lack \['edge_orientation'\]"),
    (lambda out: dict(out, complex={"junk": torch.ones(1)}),
     r"its complex lack \['boundary_index_1', .*'spectrum_0', "),
    (lambda out: dict(out, complex=dict(out["complex"], simplices_1=torch.zeros(3, 4))),
     r"its complex: .*simplices_1"),
    # each loaded without a warning (session 25): a sparse x_1 with indices out of
    # range crashed the interpreter on use; the others gave a wrong dataset
    (lambda out: dict(out, items=dict(out["items"], x_1=torch.sparse_coo_tensor(
        torch.tensor([[0, 1], [0, 9999], [0, 0]]), torch.ones(2),
        out["items"]["x_1"].shape, check_invariants=False))),
     rf"{torch_refusal_of_sparse_indices()}: " if torch_refusal_of_sparse_indices()
     else r"its items hold a torch.sparse_coo tensor 'x_1'"),
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
    # each loaded without a warning: operator values, dtypes and positions other than
    # the constructor writes (the models' outputs changed, or a later step failed)
    (changed("complex", "spectrum_1", lambda t: t / 0), r"'spectrum_1' holds NaN"),
    (changed("complex", "spectrum_1", lambda t: -t), r"'spectrum_1' holds a negative"),
    (changed("complex", "hodge_weight_1", first_set(float("inf"))),
     r"'hodge_weight_1' holds NaN or infinite values"),
    (changed("complex", "boundary_weight_2", first_set(7.0)),
     r"'boundary_weight_2' holds values other than \[-1, 1\]"),
    (changed("complex", "down_weight_1", torch.Tensor.double),
     r"'down_weight_1' must be torch.float32 of shape \[\*\] \(got torch.float64"),
    (changed("complex", "hodge_weight_0", lambda t: t.to(torch.complex64)),
     r"'hodge_weight_0' must be torch.float32"),
    (changed("complex", "pos", lambda t: t[:10]),
     r"'pos' must be torch.float32 of shape \[\d+, 2\] \(got torch.float32 \[10, 2\]"),
    (changed("complex", "pos", lambda t: t / 0), r"'pos' holds NaN"),
    (changed("complex", "num_nodes", lambda n: 10**12),
     r"'pos' must be torch.float32 of shape \[1000000000000, 2\]"),
    # operators that are not those of the complex: each changed the models' outputs
    (changed("complex", "up_weight_1", lambda t: t * 100),
     r"'up_weight_1' is not the up Laplacian of the boundaries"),
    (changed("complex", "hodge_weight_1", lambda t: t * 1.01),
     r"'hodge_weight_1' is not the normalised Hodge Laplacian of the boundaries and "
     r"'spectrum_1'"),
    (changed("complex", "spectrum_1", torch.zeros_like),
     r"'spectrum_1' gives 0 as the largest eigenvalue of the down Laplacian, which its "
     r"entries bound to \[2, \d+\]"),
    (changed("complex", "boundary_weight_1", first_set(1.0)),
     r"'boundary_weight_1' does not orient every edge from one vertex to the other"),
    (changed("complex", "boundary_weight_2", lambda t: torch.cat([-t[:1], t[1:]])),
     r"'boundary_weight_1' and 'boundary_weight_2' do not make a chain complex"),
    (changed("complex", "simplices_2", lambda t: t[[1, 0, *range(2, len(t))]]),
     r"'boundary_index_2' does not hold the faces of 'simplices_2'"),
    # another orientation of a simplex, consistent in every operator (session 28):
    # loaded without a warning, with the flows' signs on that edge reversed
    (flipped(1), r"'boundary_weight_1' orients a 1-simplex otherwise than the dataset "
     r"writes it"),
    (flipped(1, simplex=5), r"'boundary_weight_1' orients a 1-simplex otherwise"),
    (flipped(2), r"'boundary_weight_2' orients a 2-simplex otherwise than the dataset "
     r"writes it"),
    # (a complex of another order, or without some of its operators)
    (lambda out: dict(out, complex={key: value for key, value in out["complex"].items()
                                    if not key.startswith("up_")}),
     r"its complex lack \['up_index_0', 'up_index_1', 'up_index_2', 'up_weight_0'"),
    (lambda out: dict(out, complex={key: value for key, value in out["complex"].items()
                                    if not key.endswith("_2")}),
     r"its complex lack \['boundary_index_2'"),
    # keys that process() does not write
    (changed("complex", "x_2", lambda _: torch.full((1, 1), float("nan"))),
     r"its complex hold \['x_2'\], which the dataset does not write"),
    (changed("items", "x_0", lambda _: torch.zeros(2, 3, 1)),
     r"its items hold \['x_0'\], which the dataset does not write"),
    (changed("extra", "nested", lambda _: {"a": torch.eye(3).to_sparse()}),
     r"its extra hold \['nested'\]"),
    (lambda out: dict(out, version=2), r"not the layout of a processed file"),
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


@pytest.mark.parametrize("orientation", ["default", "random", "random_per_trajectory"])
def test_each_orientation_loads_from_its_processed_file(tmp_path, orientation):
    # (the boundaries' signs are checked against the split's edge_orientation)
    first = small(tmp_path, orientation=orientation)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        again = small(tmp_path, orientation=orientation)
    assert torch.equal(again.edge_orientation, first.edge_orientation)
    assert torch.equal(again.complex.boundary_weight_1, first.complex.boundary_weight_1)


def test_a_split_orientation_that_its_complex_does_not_have_is_refused(tmp_path):
    path = small(tmp_path, orientation="random").processed_paths[0]
    torch.save(changed("extra", "edge_orientation", lambda t: -t)(
        torch.load(path, weights_only=True)), path)
    with pytest.warns(UserWarning, match="'boundary_weight_1' orients a 1-simplex "
                      "otherwise than the dataset writes it"):
        small(tmp_path, orientation="random")


def test_load_processed_leaves_other_errors_alone(tmp_path):
    with pytest.raises(FileNotFoundError):
        load_processed(str(tmp_path / "missing.pt"))


def test_unpickling_a_plant_with_pickle_would_run_it(tmp_path):
    # (the premise of the tests above, with the standard library alone)
    marker = tmp_path / "marker"
    pickle.loads(pickle.dumps(Plant(marker)))
    assert marker.exists()
