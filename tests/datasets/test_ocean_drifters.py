import numpy as np
import pytest

from torch_geometric_san.datasets.ocean_drifters import (
    clockwise_label,
    drifter_protocol,
    read_drifter_raw,
    strip_backtracks,
    train_test_mask,
)

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
    import h5py

    path = str(tmp_path / "bad.jld2")
    with h5py.File(path, "w") as f:
        f["elist"] = np.ones((2, 3), dtype=np.int64)
    with pytest.raises(ValueError, match="tlist"):
        read_drifter_raw(path)


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
