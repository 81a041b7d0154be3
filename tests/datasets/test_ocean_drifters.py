import os
import re
import shutil
import sys

import numpy as np
import pytest
import torch

from torch_geometric_san.datasets import OceanDriftersDataset
from torch_geometric_san.datasets.ocean_drifters import (
    clockwise_label,
    drifter_protocol,
    read_drifter_raw,
    strip_backtracks,
    train_test_mask,
)
from torch_geometric_san.datasets.io import sha256sum
from torch_geometric_san.datasets.trajectory import path_to_flow

# Paths on the 12-vertex annulus (inner ring 0..11, counter-clockwise).
CCW = [0, 1, 2, 3, 4]
CW = [4, 3, 2, 1, 0]
BACKTRACK = [0, 12, 0, 1, 13, 1, 2, 3, 2, 3, 4]  # strips to CCW
SHORT = [0, 1, 0, 1, 2, 3]  # strips to [0, 1, 2, 3]: dropped
LOOP = [1, 2, 3, 4, 5, 6, 1]  # returns to its start: last vertex dropped


@pytest.fixture
def small_file(tmp_path, annulus, write_drifter_file):
    pos, edges, triangles = annulus()
    paths = [CCW, CW, BACKTRACK, SHORT, LOOP]
    return write_drifter_file(str(tmp_path / "dataBuoys.jld2"), pos, edges,
                              triangles, paths, plain_paths=(1, )), pos, edges


def test_read_drifter_raw(small_file):
    path, pos, edges = small_file
    raw = read_drifter_raw(path)
    np.testing.assert_array_equal(raw["edges"], edges)
    np.testing.assert_allclose(raw["pos"], pos)
    assert raw["triangles"].shape == (24, 3)
    assert [p.tolist() for p in raw["paths"]] == [CCW, CW, BACKTRACK, SHORT,
                                                  LOOP]


def test_read_drifter_raw_missing_keys(tmp_path):
    h5py = pytest.importorskip("h5py", reason="needs h5py (the 'datasets' "
                               "extra)")

    path = str(tmp_path / "bad.jld2")
    with h5py.File(path, "w") as f:
        f["elist"] = np.ones((2, 3), dtype=np.int64)
    with pytest.raises(ValueError, match="tlist"):
        read_drifter_raw(path)


def test_read_drifter_raw_refuses_what_is_not_a_regular_file(not_a_regular_file):
    # a FIFO with no writer blocked h5py, and the dataset's digest of a link to
    # /dev/zero never ended
    pytest.importorskip("h5py", reason="needs h5py (the 'datasets' extra)")
    kind, path = not_a_regular_file
    with pytest.raises(ValueError, match=rf"'{re.escape(path)}' .* is a {kind}"):
        read_drifter_raw(path)


def test_a_raw_file_that_is_a_device_is_named(tmp_path):
    # (its digest was taken: of /dev/zero, for ever)
    os.makedirs(tmp_path / "raw")
    os.symlink("/dev/null", tmp_path / "raw" / "dataBuoys.jld2")
    with pytest.raises(ValueError, match=r"dataBuoys.jld2' \('/dev/null'\) is a "
                       r"character device, not a regular file"):
        OceanDriftersDataset(str(tmp_path), log=False)


def replaced(path, key, value=None, **options):
    r"""The raw file :obj:`path` with the dataset :obj:`key` replaced by
    :obj:`value` (created with :obj:`options`)."""
    import h5py

    with h5py.File(path, "r+") as f:
        del f[key]
        f.create_dataset(key, data=value, **options)
    return path


@pytest.mark.parametrize("key, value, options, match", [
    # each was read: 0 became the id -1 (the last vertex), floats were truncated
    # (NaN to a huge id), a position NaN gave a label of its own
    ("elist", lambda e: np.where(e == 1, 0, e), {},
     r"'elist' in '.*' must hold 1-based vertex ids, 1 to 24 \(the rows of "
     r"'HexcentersXY'\), found 0 to 24"),
    ("tlist", lambda t: t + 1, {}, r"'tlist' .* 1-based vertex ids, 1 to 24.* 2 to 25"),
    ("elist", lambda e: e + 0.7, {}, r"'elist' in '.*' must hold integer vertex ids "
     r"\(found float64\)"),
    ("elist", lambda e: e[:1], {}, r"'elist' in '.*' must have shape \[2, \*\], one "
     r"column per simplex \(found \[1, 48\]\)"),
    ("HexcentersXY", lambda xy: np.stack([xy["1"], xy["2"]], axis=1), {},
     r"'HexcentersXY' in '.*' must be a 1-D compound dataset of \(x, y\) numbers"),
    ("HexcentersXY", lambda xy: np.where(np.arange(len(xy)) == 3, np.array(
        (np.nan, 0.0), dtype=xy.dtype), xy), {},
     r"'HexcentersXY' in '.*' holds NaN or infinite positions"),
    # (an empty chunked dataset declared with 10**12 columns: filled in, in memory)
    ("elist", None, dict(shape=(2, 10**12), dtype="i8", chunks=(2, 1024)),
     r"'/elist' in '.*' declares 2000000000000 values of int64, more than the "
     r"file's \d+ bytes hold"),
])
def test_read_drifter_raw_refuses_bad_content(small_file, key, value, options, match):
    import h5py

    path, _, _ = small_file
    if value is not None:
        with h5py.File(path, "r") as f:
            value = value(f[key][()])
    with pytest.raises(ValueError, match=match):
        read_drifter_raw(replaced(path, key, value, **options))


def test_read_drifter_raw_refuses_path_ids_out_of_range(tmp_path, annulus,
                                                        write_drifter_file):
    # (a 0 became the last vertex, -1)
    pos, edges, triangles = annulus()
    for plain in ((), (0, )):
        path = write_drifter_file(str(tmp_path / "raw.jld2"), pos, edges, triangles,
                                  [CCW, [-1, 0, 1]], plain_paths=plain)
        with pytest.raises(ValueError, match=r"Trajectory 1 in '.*' must hold 1-based "
                           r"vertex ids, 1 to 24 .*found 0 to 2"):
            read_drifter_raw(path)


@pytest.mark.parametrize("path, pos, error, match", [
    # a negative id took a position from the end, a larger one failed in NumPy, and
    # NaN positions gave a label
    ([-1, 0, 1], None, ValueError, "A path holds the vertex id -1, out of range for "
     "24 vertices"),
    ([0, 1, 99], None, ValueError, "vertex id 99, out of range"),
    ([0.0, 1.5], None, TypeError, "'path' must hold integer vertex ids"),
    ([], None, ValueError, "An empty path has no first and last vertex"),
    (CCW, np.nan, ValueError, "'pos' holds NaN or infinite positions"),
    (CCW, np.zeros(24), ValueError, r"'pos' must be vertex positions of shape "
     r"\[N, 2\]"),
])
def test_clockwise_label_and_drifter_protocol_refuse_bad_input(annulus, path, pos,
                                                               error, match):
    points = annulus()[0]
    if pos is not None:
        points = np.where(np.arange(24)[:, None] == 5, pos, points) \
            if np.ndim(pos) == 0 else pos
    with pytest.raises(error, match=match):
        clockwise_label(path, points)
    if len(path):
        with pytest.raises(error, match=match):  # (also where the path is dropped)
            drifter_protocol([path], points, min_length=len(path) + 1)


def test_strip_backtracks():
    assert strip_backtracks(BACKTRACK) == CCW
    assert strip_backtracks([1, 2, 3, 2, 1]) == [1]
    assert strip_backtracks([5]) == [5]


def test_clockwise_label(annulus):
    pos, _, _ = annulus()
    assert clockwise_label(CCW, pos) == 1
    assert clockwise_label(CW, pos) == 0
    collinear = np.array([[0.0, 0.0], [1.0, 0.0], [2.0, 0.0], [-1.0, 0.0]])
    with pytest.raises(ValueError, match="collinear"):
        # the centre is (0.5 - 0.03, 0): on the line through vertices 1, 2
        clockwise_label([1, 2], collinear)


def test_drifter_protocol(small_file):
    path, pos, _ = small_file
    raw = read_drifter_raw(path)
    paths, labels = drifter_protocol(raw["paths"], raw["pos"])
    assert [p.tolist() for p in paths] == [CCW, CW, CCW, LOOP[:-1]]
    assert labels.tolist() == [1, 0, 1, 1]


def test_train_test_mask():
    mask = train_test_mask(200, seed=1)
    assert mask.sum() == 160 and len(mask) == 200
    np.testing.assert_array_equal(mask, train_test_mask(200, seed=1))
    assert not np.array_equal(mask, train_test_mask(200, seed=2))
    assert train_test_mask(0, seed=1).shape == (0, )
    assert train_test_mask(3, seed=0, train_ratio=1).all()
    # (a float16 ratio overflowed in the count)
    np.testing.assert_array_equal(train_test_mask(100000, 0, np.float16(0.5)),
                                  train_test_mask(100000, 0, 0.5))


# (a ratio outside [0, 1] or a negative count gave a mask of another length)
@pytest.mark.parametrize('args, kwargs, error, match', [
    ((200, 1), dict(train_ratio=1.5), ValueError, r"'train_ratio' must lie in \[0, 1\] "
     r"\(got 1.5\)"),
    ((200, 1), dict(train_ratio=-0.1), ValueError, "'train_ratio' must lie in"),
    ((200, 1), dict(train_ratio=float('inf')), ValueError, "'train_ratio' must be finite"),
    ((200, 1), dict(train_ratio='0.8'), TypeError, "'train_ratio' must be a real number"),
    ((-5, 1), {}, ValueError, "'num_items'"),
    ((2.5, 1), {}, TypeError, "'num_items'"),
    ((200, -1), {}, ValueError, "'seed'"),
    ((200, 2**32), {}, ValueError, "'seed'"),
])
def test_train_test_mask_rejects_bad_arguments(assert_rejected, args, kwargs, error, match):
    assert_rejected(train_test_mask, args, kwargs, error, match)


# ---------------------------------------------------------------------------
# The dataset class.


@pytest.fixture(scope="module")
def real(shared_raw):
    root = shared_raw("ocean_drifters", ["dataBuoys.jld2"])
    return {
        (split, orientation): OceanDriftersDataset(root, split=split,
                                                   orientation=orientation,
                                                   log=False)
        for split in ("train", "test") for orientation in (
            "default", "random", "random_per_trajectory")
    }


def test_real_sizes(real):
    train, test = real["train", "default"], real["test", "default"]
    assert len(train) == 160 and len(test) == 40
    complex = train.complex
    assert [complex.num_simplices(k) for k in range(3)] == [133, 320, 186]
    assert complex.pos.shape == (133, 2)
    assert train.x_1.shape == (160, 320, 1) and train[0].y.shape == (1, )
    assert train.num_classes == 2


def test_real_labels(real):
    train, test = real["train", "default"], real["test", "default"]
    # 110 clockwise / 90 counter-clockwise in all; measured split counts
    # of the published split (seed=1).
    assert int((train.y == 0).sum()) == 91 and int(train.y.sum()) == 69
    assert int((test.y == 0).sum()) == 19 and int(test.y.sum()) == 21


def test_real_flows_are_paths(real, dense):
    dataset = real["test", "default"]
    index, weight = dataset.complex.boundary(1)
    b1 = dense(index, weight, (133, 320))
    div = (b1 @ dataset.x_1.double().squeeze(-1).T).T  # [40, 133]
    assert (div.abs().sum(dim=1) == 2).all()  # one source, one sink


def test_real_split_is_seeded(real, shared_raw):
    root = shared_raw("ocean_drifters", ["dataBuoys.jld2"])
    same = OceanDriftersDataset(root, split="test", log=False)
    assert torch.equal(same.x_1, real["test", "default"].x_1)
    other = OceanDriftersDataset(root, split="test", seed=2, log=False)
    assert len(other) == 40
    assert not torch.equal(other.x_1, same.x_1)
    # train and test together are the 200 protocol trajectories
    raw = read_drifter_raw(os.path.join(root, "raw", "dataBuoys.jld2"))
    paths, _ = drifter_protocol(raw["paths"], raw["pos"])
    expected = sorted(path_to_flow(p, raw["edges"]).tolist() for p in paths)
    got = torch.cat([real["train", "default"].x_1, same.x_1]).squeeze(-1)
    assert sorted(got.tolist()) == expected


def test_real_random_orientation(real, dense):
    default, flipped = real["test", "default"], real["test", "random"]
    signs = flipped.edge_orientation
    assert set(signs.tolist()) == {-1, 1}
    assert torch.equal(flipped.x_1, default.x_1 * signs.view(1, -1, 1))
    s = torch.diag(signs.double())
    for op in ("down_laplacian", "up_laplacian", "hodge_laplacian"):
        la = dense(*getattr(default.complex, op)(1), (320, 320))
        lb = dense(*getattr(flipped.complex, op)(1), (320, 320))
        assert torch.allclose(lb, s @ la @ s), op
    # train and test draw different signs
    assert not torch.equal(real["train", "random"].edge_orientation, signs)


def test_real_random_orientation_per_trajectory(real):
    default, flipped = real["test", "default"], real["test", "random_per_trajectory"]
    signs = flipped.edge_orientation
    assert signs.shape == (40, 320) and torch.equal(flipped.signal_orientation, signs)
    assert len({tuple(row) for row in signs.tolist()}) == 40  # one draw each
    assert torch.equal(flipped.x_1, default.x_1 * signs.unsqueeze(-1))
    assert torch.equal(flipped.complex.hodge_weight_1, default.complex.hodge_weight_1)
    assert default.signal_orientation is None and real["test", "random"].signal_orientation is None


@pytest.fixture
def small_root(tmp_path, small_file, monkeypatch):
    path, _, _ = small_file
    os.makedirs(tmp_path / "root" / "raw")
    shutil.copy(path, tmp_path / "root" / "raw" / "dataBuoys.jld2")
    monkeypatch.setattr(OceanDriftersDataset, "sha256", sha256sum(path))
    monkeypatch.setattr(OceanDriftersDataset, "simplex_counts", (24, 48, 24))
    monkeypatch.setattr(OceanDriftersDataset, "split_sizes", {"train": 3, "test": 1})
    return str(tmp_path / "root")


def test_small_file_through_the_dataset(small_root):
    train = OceanDriftersDataset(small_root, split="train", log=False)
    test = OceanDriftersDataset(small_root, split="test", log=False)
    assert len(train) == 3 and len(test) == 1  # 4 protocol paths, 80/20
    assert [train.complex.num_simplices(k) for k in range(3)] == [24, 48, 24]
    assert sorted(torch.cat([train.y, test.y]).tolist()) == [0, 1, 1, 1]


def test_a_processed_file_of_another_size_is_processed_again(small_root, tmp_path):
    # each loaded without a warning: a processed file cut to fewer trajectories, and
    # the file of a synthetic flow dataset with as many, on another complex
    from torch_geometric_san.datasets import SyntheticFlowDataset

    first = OceanDriftersDataset(small_root, split="train", log=False)
    path = first.processed_paths[0]
    out = torch.load(path, weights_only=True)
    torch.save(dict(out, items={key: value[:2] for key, value in out["items"].items()}),
               path)
    with pytest.warns(UserWarning, match=r"it holds 2 trajectories, the dataset "
                      r"writes 3.*processing the dataset again"):
        assert len(OceanDriftersDataset(small_root, split="train", log=False)) == 3
    synthetic = SyntheticFlowDataset(str(tmp_path / "synthetic"), num_points=60,
                                     num_train=3, log=False)
    shutil.copy(synthetic.processed_paths[0], path)
    with pytest.warns(UserWarning, match=r"its complex has \[\d+, \d+, \d+\] "
                      r"simplices of orders 0 to 2, the raw file's \[24, 48, 24\]"):
        again = OceanDriftersDataset(small_root, split="train", log=False)
    assert torch.equal(again.x_1, first.x_1)


def test_progress_bar(small_root, terminal_stderr):
    with terminal_stderr() as err:
        OceanDriftersDataset(small_root, log=True)
    assert "Edge flows" in err.getvalue()


def test_sha256_mismatch_is_an_error(small_root, monkeypatch):
    import torch_geometric.data

    monkeypatch.setattr(OceanDriftersDataset, "sha256", "0" * 64)
    monkeypatch.setattr(torch_geometric.data, "download_url", None)
    with pytest.raises(ValueError) as info:
        OceanDriftersDataset(small_root, log=False)
    message = str(info.value)
    assert "dataBuoys.jld2" in message and "0" * 64 in message
    assert not os.path.exists(os.path.join(small_root, "processed",
                                           "ocean_drifters_train_default_"
                                           "seed1.pt"))


def test_offline_names_the_file_to_place(tmp_path, monkeypatch):
    monkeypatch.setattr(OceanDriftersDataset, "url",
                        "http://127.0.0.1:9/dataBuoys.jld2")
    with pytest.raises(RuntimeError) as info:
        OceanDriftersDataset(str(tmp_path), log=False)
    message = str(info.value)
    assert "dataBuoys.jld2" in message
    assert os.path.abspath(str(tmp_path / "raw")) in message
    assert os.listdir(tmp_path / "raw") == []


def test_without_h5py(small_root, monkeypatch):
    monkeypatch.setitem(sys.modules, "h5py", None)
    with pytest.raises(ImportError, match=r"pip install \"\.\[datasets\]\""):
        OceanDriftersDataset(small_root, log=False)
