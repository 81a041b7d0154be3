import math
import os
import pickle
import shutil

import numpy as np
import pytest
import torch
from torch_geometric.loader import DataLoader

from torch_geometric_san.datasets import CitationComplexDataset
from torch_geometric_san.datasets.citation_complex import (
    citation_simplices,
    imputation_masks,
    read_citation_raw,
)
from torch_geometric_san.datasets.io import sha256sum

# A small co-authorship complex: authors 17, 42, 100, 205 (vertices 0..3 by
# raw index of their 0-simplex below), closed under faces. The raw indices of
# the edges are deliberately not in sorted order.
SMALL_SIMPLICES = [
    [(17, ), (42, ), (100, ), (205, )],
    [(42, 100), (17, 42), (17, 100), (100, 205)],
    [(17, 42, 100)],
]
SMALL_COUNTS = [[3, 5, 8, 1], [4, 2, 6, 9], [7]]


@pytest.fixture
def small_files(tmp_path, write_citation_files):
    return write_citation_files(str(tmp_path), SMALL_SIMPLICES, SMALL_COUNTS)


def test_read_citation_raw(small_files):
    simplices, cochains = read_citation_raw(*small_files)
    assert [len(d) for d in simplices] == [4, 4, 1]
    assert simplices[1][frozenset({17, 100})] == 2
    assert cochains[1][frozenset({100, 205})] == 9


def test_citation_simplices_keeps_raw_index_order(small_files):
    arrays, counts, authors = citation_simplices(*read_citation_raw(
        *small_files), max_order=2)
    np.testing.assert_array_equal(authors, [17, 42, 100, 205])
    np.testing.assert_array_equal(arrays[1], [[1, 2], [0, 1], [0, 2], [2, 3]])
    np.testing.assert_array_equal(counts[1], [4, 2, 6, 9])
    np.testing.assert_array_equal(arrays[2], [[0, 1, 2]])
    with pytest.raises(ValueError, match="orders up to 2"):
        citation_simplices(*read_citation_raw(*small_files), max_order=3)


def test_read_citation_raw_rejects_bad_structure(tmp_path,
                                                 write_citation_files):
    bad = [[(1, ), (2, )], [(1, 2, 3)]]  # a 3-set among the edges
    paths = write_citation_files(str(tmp_path), bad, [[1, 1], [1]])
    with pytest.raises(ValueError, match="frozensets of 2 author ids"):
        read_citation_raw(*paths)



def _write_object_array(path, items):
    # An object array of the given items, laid out like the published files.
    value = np.empty(len(items), dtype=object)
    value[:] = items
    with open(path, "wb") as f:
        np.lib.format.write_array_header_1_0(
            f, {"descr": "|O", "fortran_order": False, "shape": value.shape})
        pickle.dump(value, f, protocol=2)


@pytest.mark.parametrize("case,match", [
    # (each message names the file)
    ("lists", r"simplices file '.*s.npy' must hold a 1-D array of dicts"),
    ("orders", r"simplices file '.*s.npy' has 2 orders but the cochains file '.*c.npy' "
     "has 1"),
    ("indices", r"'.*s.npy': the indices of the 1-simplices must be 0..1"),
    ("keys", r"simplices and cochains of order 1 \('.*s.npy', '.*c.npy'\) are not "
     "given on the same"),
    # (bools and floats passed as ids and indices: True sorts and compares as 1)
    ("bool-ids", r"keys of order 1 must be frozensets of 2 author ids \(ints"),
    ("float-ids", r"keys of order 1 must be frozensets of 2 author ids \(ints"),
    ("bool-indices", r"'.*s.npy': the indices of the 1-simplices must be 0..1"),
    ("counts", r"'.*c.npy': the citation counts of the 1-simplices must be whole "
     r"numbers from 0 to 9223372036854775807"),
    # each was read: an id beyond int64 failed in NumPy (OverflowError) when the
    # simplices were made, as did a count beyond a float in the check of the counts;
    # negative and fractional citation counts were taken
    ("huge-ids", r"'.*s.npy': the keys of order 1 must be frozensets of 2 author ids "
     r"\(ints of the int64 range\)"),
    ("huge-counts", "citation counts of the 1-simplices must be whole numbers"),
    ("negative-counts", "citation counts of the 1-simplices must be whole numbers"),
    ("fractional-counts", "citation counts of the 1-simplices must be whole numbers"),
])
def test_read_citation_raw_rejects_inconsistent_files(tmp_path, case, match):
    nodes = {frozenset({1}): 0, frozenset({2}): 1, frozenset({3}): 2}
    edges = {frozenset({1, 2}): 0, frozenset({2, 3}): 1}
    counts = [dict.fromkeys(nodes, 1), dict.fromkeys(edges, 1)]
    simplices = {"lists": [[1], [2]], "orders": [nodes, edges],
                 "indices": [nodes, {frozenset({1, 2}): 0, frozenset({2, 3}): 2}],
                 "keys": [nodes, edges],
                 "bool-ids": [nodes, {frozenset({True, 2}): 0, frozenset({2, 3}): 1}],
                 "float-ids": [nodes, {frozenset({1.0, 2}): 0, frozenset({2, 3}): 1}],
                 "bool-indices": [nodes, {frozenset({1, 2}): False,
                                          frozenset({2, 3}): True}],
                 "huge-ids": [nodes, {frozenset({1, 2**63}): 0, frozenset({2, 3}): 1}],
                 }.get(case, [nodes, edges])
    if case == "orders":
        counts = counts[:1]
    if case == "keys":
        counts[1] = {frozenset({1, 3}): 1, frozenset({2, 3}): 1}
    if case in ("bool-ids", "float-ids", "bool-indices", "huge-ids"):
        counts[1] = dict.fromkeys(simplices[1], 1)
    bad_count = {"counts": float("nan"), "huge-counts": 10**400,
                 "negative-counts": -7, "fractional-counts": 2.5}.get(case)
    if bad_count is not None:
        counts[1] = {frozenset({1, 2}): bad_count, frozenset({2, 3}): 1}
    paths = [str(tmp_path / "s.npy"), str(tmp_path / "c.npy")]
    _write_object_array(paths[0], simplices)
    _write_object_array(paths[1], counts)
    with pytest.raises(ValueError, match=match):
        read_citation_raw(*paths)


def test_citation_simplices_needs_every_author_as_a_vertex(tmp_path,
                                                          write_citation_files):
    # Author 3 is in an edge but has no 0-simplex.
    paths = write_citation_files(str(tmp_path), [[(1, ), (2, )], [(1, 2), (2, 3)]],
                                 [[1, 1], [1, 1]])
    with pytest.raises(ValueError, match="1-simplex has the author 3, who has no "
                                         "0-simplex"):
        citation_simplices(*read_citation_raw(*paths), max_order=1)

def test_read_citation_raw_refuses_tampered_file(tmp_path,
                                                 write_citation_files):
    simplices_path, cochains_path = write_citation_files(
        str(tmp_path), SMALL_SIMPLICES, SMALL_COUNTS)
    with open(cochains_path, "r+b") as f:
        np.lib.format.read_magic(f)
        np.lib.format.read_array_header_1_0(f)
        f.truncate(f.tell())
        f.write(b"\x80\x02cposix\nsystem\nX\x04\x00\x00\x00true\x85R.")
    with pytest.raises(pickle.UnpicklingError, match="posix.system"):
        read_citation_raw(simplices_path, cochains_path)


@pytest.mark.parametrize("rate", [0.1, 0.2, 0.3, 0.4, 0.5])
@pytest.mark.parametrize("num", [352, 1474, 5000])
def test_imputation_masks_sizes(rate, num):
    hidden = imputation_masks(num, rate, num_masks=3, seed=0)
    assert hidden.shape == (3, num) and hidden.dtype == bool
    assert (hidden.sum(axis=1) == math.ceil(round(rate * num, 6))).all()
    assert len({row.tobytes() for row in hidden}) == 3  # masks differ


def test_imputation_masks_seeding():
    a = imputation_masks(1000, 0.3, 10, seed=0)
    np.testing.assert_array_equal(a, imputation_masks(1000, 0.3, 10, seed=0))
    assert not np.array_equal(a, imputation_masks(1000, 0.3, 10, seed=1))
    # mask m does not depend on num_masks; lower rates hide subsets
    np.testing.assert_array_equal(a[:4], imputation_masks(1000, 0.3, 4, 0))
    low = imputation_masks(1000, 0.1, 10, seed=0)
    assert not (low & ~a).any()
    with pytest.raises(ValueError, match="fraction"):
        imputation_masks(1000, 30, 10, seed=0)


def test_imputation_masks_take_numpy_numbers():
    # (the checked rate was dropped and the given one used: a float16 rate
    # overflowed in the count of hidden values, a NaN inside math.ceil)
    expected = imputation_masks(1000, 0.5, 2, seed=0)
    got = imputation_masks(1000, np.float16(0.5), np.int32(2), np.uint8(0))
    np.testing.assert_array_equal(got, expected)


# ---------------------------------------------------------------------------
# The dataset class.

RAW = ["150250_simplices.npy", "150250_cochains.npy"]
N_K = [352, 1474, 3285, 5019, 5559, 4547, 2732]


@pytest.fixture(scope="module")
def real_root(shared_raw):
    return shared_raw("citation_complex", RAW)


@pytest.fixture(scope="module")
def real_raw(real_root):
    return read_citation_raw(*(os.path.join(real_root, "raw", f)
                               for f in RAW))


@pytest.mark.parametrize("order", range(6))
def test_real_sizes_and_targets(real_root, real_raw, order):
    dataset = CitationComplexDataset(real_root, order=order, log=False)
    complex = dataset.complex
    assert complex.order == order + 1
    assert [complex.num_simplices(k)
            for k in range(order + 2)] == N_K[:order + 2]
    assert len(dataset) == 10
    # the raw index order is kept, and it is lexicographic
    rows = (complex[f"simplices_{order}"] if order > 0 else
            torch.arange(352).view(-1, 1))
    keys = (rows * 352**torch.arange(order, -1, -1)).sum(dim=1)
    assert (keys.diff() > 0).all()
    # targets are the raw cochains of the simplices' authors
    simplices, cochains = real_raw
    authors = dataset.author_ids[rows]
    y = complex.y.view(-1)
    for i in range(0, N_K[order], 97):
        key = frozenset(authors[i].tolist())
        assert simplices[order][key] == i
        assert y[i] == cochains[order][key]


@pytest.mark.parametrize("rate", [0.1, 0.5])
def test_real_masks_and_inputs(real_root, rate):
    dataset = CitationComplexDataset(real_root, order=1, missing_rate=rate,
                                     log=False)
    n = N_K[1]
    hidden = []
    for data in dataset:
        x, y = data.x_1.view(-1), data.y.view(-1)
        assert data.x_1.shape == data.y.shape == (n, 1)
        assert torch.equal(data.train_mask, ~data.test_mask)
        assert int(data.test_mask.sum()) == math.ceil(round(rate * n, 6))
        assert torch.equal(x[data.train_mask], y[data.train_mask])
        median = float(np.median(y[data.train_mask].numpy()))
        assert (x[data.test_mask] == median).all()
        hidden.append(data.test_mask)
    assert len({tuple(h.nonzero().view(-1).tolist()) for h in hidden}) == 10


def test_real_reproducible(real_root):
    a = CitationComplexDataset(real_root, order=2, num_masks=3, log=False)
    b = CitationComplexDataset(real_root, order=2, num_masks=3, log=False)
    c = CitationComplexDataset(real_root, order=2, num_masks=3, seed=1,
                               log=False)
    for i in range(3):
        assert torch.equal(a[i].test_mask, b[i].test_mask)
        assert torch.equal(a[i].x_2, b[i].x_2)
        assert not torch.equal(a[i].test_mask, c[i].test_mask)
    # NumPy numbers give the same dataset, and are kept as Python ones
    d = CitationComplexDataset(real_root, order=np.int64(2), missing_rate=np.float16(0.5),
                               num_masks=np.int32(3), seed=np.uint8(0), log=False)
    assert type(d.missing_rate) is float and d.missing_rate == 0.5
    half = CitationComplexDataset(real_root, order=2, missing_rate=0.5, num_masks=3,
                                  log=False)
    assert all(torch.equal(d[i].test_mask, half[i].test_mask) for i in range(3))


def test_real_batches(real_root):
    dataset = CitationComplexDataset(real_root, order=0, num_masks=4,
                                     log=False)
    batch = next(iter(DataLoader(dataset, batch_size=4)))
    assert batch.x_0.shape == (4 * 352, 1)
    assert batch.test_mask.shape == (4 * 352, )
    assert batch.num_simplices(0) == 4 * 352


@pytest.fixture
def small_root(tmp_path, small_files, monkeypatch):
    os.makedirs(tmp_path / "root" / "raw")
    for path in small_files:
        shutil.copy(path, tmp_path / "root" / "raw")
    monkeypatch.setattr(
        CitationComplexDataset, "sha256",
        {os.path.basename(p): sha256sum(p) for p in small_files})
    return str(tmp_path / "root")


def test_small_files_through_the_dataset(small_root):
    dataset = CitationComplexDataset(small_root, order=1, missing_rate=0.5,
                                     num_masks=2, log=False)
    complex = dataset.complex
    assert [complex.num_simplices(k) for k in range(3)] == [4, 4, 1]
    # the raw edge order [(42,100), (17,42), (17,100), (100,205)] is kept
    assert complex.simplices_1.tolist() == [[1, 2], [0, 1], [0, 2], [2, 3]]
    assert complex.y.view(-1).tolist() == [4.0, 2.0, 6.0, 9.0]
    assert dataset.author_ids.tolist() == [17, 42, 100, 205]
    assert int(dataset[0].test_mask.sum()) == 2


def test_progress_bar(small_root, terminal_stderr):
    with terminal_stderr() as err:
        CitationComplexDataset(small_root, order=0, log=True)
    assert "Reading simplices" in err.getvalue()


def test_small_files_order_out_of_range(small_root):
    with pytest.raises(ValueError, match="orders up to 2"):
        CitationComplexDataset(small_root, order=2, log=False)


def test_tampered_raw_file_runs_nothing(small_root, small_files, tmp_path,
                                        monkeypatch):
    marker = tmp_path / "pwned"
    cochains = os.path.join(small_root, "raw", RAW[1])
    with open(cochains, "wb") as f:
        np.lib.format.write_array_header_1_0(f, {
            "descr": "|O",
            "fortran_order": False,
            "shape": (3, )
        })
        command = f"touch {marker}".encode()
        f.write(b"\x80\x02cposix\nsystem\nX" +
                len(command).to_bytes(4, "little") + command + b"\x85R.")
    # Even with a digest that matches the tampered file, nothing runs.
    monkeypatch.setitem(CitationComplexDataset.sha256, RAW[1],
                        sha256sum(cochains))
    with pytest.raises(pickle.UnpicklingError, match="posix.system"):
        CitationComplexDataset(small_root, order=0, log=False)
    assert not marker.exists()


def test_sha256_mismatch(small_root, monkeypatch):
    monkeypatch.setitem(CitationComplexDataset.sha256, RAW[0], "f" * 64)
    with pytest.raises(ValueError, match=f"{RAW[0]}.*{'f' * 64}"):
        CitationComplexDataset(small_root, order=0, log=False)


def test_offline_names_the_files(tmp_path, monkeypatch):
    monkeypatch.setattr(CitationComplexDataset, "urls",
                        {name: f"http://127.0.0.1:9/{name}" for name in RAW})
    with pytest.raises(RuntimeError) as info:
        CitationComplexDataset(str(tmp_path), log=False)
    assert RAW[0] in str(info.value)
    assert os.path.abspath(str(tmp_path / "raw")) in str(info.value)


def test_offline_fetches_only_the_missing_file(small_root, monkeypatch):
    os.remove(os.path.join(small_root, "raw", RAW[1]))
    monkeypatch.setattr(CitationComplexDataset, "urls",
                        {name: f"http://127.0.0.1:9/{name}" for name in RAW})
    with pytest.raises(RuntimeError) as info:
        CitationComplexDataset(small_root, log=False)
    assert RAW[1] in str(info.value) and RAW[0] not in str(info.value)


def test_bad_arguments(tmp_path):
    with pytest.raises(ValueError, match="'order'"):
        CitationComplexDataset(str(tmp_path), order=6)
    with pytest.raises(ValueError, match="'missing_rate'"):
        CitationComplexDataset(str(tmp_path), missing_rate=30)
    with pytest.raises(ValueError, match="'num_masks'"):
        CitationComplexDataset(str(tmp_path), num_masks=0)


@pytest.mark.parametrize("change, reason", [
    # both loaded without a warning: items whose x_0 is shorter than N_0, and
    # author ids of another complex
    (lambda out: dict(out, complex=dict(out["complex"], y=out["complex"]["y"][:-7])),
     r"'y' must be torch.float32 of shape \[352, 1\]"),
    (lambda out: dict(out, extra=dict(out["extra"], author_ids=out["extra"][
        "author_ids"].float())), r"'author_ids' must be torch.int64"),
    # both loaded without a warning: a complex of order 0 (no edges, so no upper
    # Laplacian of the vertices), and items, which the dataset makes from the complex
    (lambda out: dict(out, complex={key: value for key, value in out["complex"].items()
                                    if not key.endswith("_1")}),
     r"its complex lack \['boundary_index_1', 'boundary_weight_1', 'down_index_1'"),
    (lambda out: dict(out, items={"x_0": torch.zeros(3, 352, 1)}),
     r"its items hold \['x_0'\], which the dataset does not write"),
])
def test_a_processed_file_of_another_content_is_processed_again(real_root, change,
                                                                 reason, tmp_path):
    root = tmp_path / "root"
    shutil.copytree(os.path.join(real_root, "raw"), root / "raw", symlinks=True)
    first = CitationComplexDataset(str(root), order=0, log=False)
    path = first.processed_paths[0]
    torch.save(change(torch.load(path, weights_only=True)), path)
    with pytest.warns(UserWarning, match=rf"cannot be read \({reason}.*processing the "
                      r"dataset again"):
        again = CitationComplexDataset(str(root), order=0, log=False)
    assert torch.equal(again.complex.y, first.complex.y)
