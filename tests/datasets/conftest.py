"""Fixtures for the dataset tests: the real raw files from ``../shared/data``
(or ``$TGSAN_SHARED_DATA``) and small raw files made here."""
import math
import os
import os.path as osp
import threading
from pathlib import Path

import numpy as np
import pytest

SHARED_DATA = Path(
    os.environ.get("TGSAN_SHARED_DATA",
                   Path(__file__).resolve().parents[3] / "shared" / "data"))


def shared_raw_root(tmp_path_factory, name: str, files) -> str:
    r"""Returns a fresh dataset root whose ``raw/`` links to the real raw
    files ``SHARED_DATA/<name>/<file>``, or skips the test saying where the
    files belong."""
    missing = [f for f in files if not (SHARED_DATA / name / f).is_file()]
    if missing:
        pytest.skip(f"needs ../shared/data/{name}/{missing[0]} (place the raw "
                    f"file at {SHARED_DATA / name / missing[0]}, or set "
                    f"TGSAN_SHARED_DATA to the folder that holds {name}/)")
    root = tmp_path_factory.mktemp(name)
    os.makedirs(root / "raw")
    for f in files:
        os.symlink(SHARED_DATA / name / f, root / "raw" / f)
    return str(root)


def annulus(num: int = 12):
    r"""A triangulated annulus around the origin: an inner ring of
    :obj:`num` vertices (ids 0..num-1, radius 1) and an outer ring (ids
    num..2num-1, radius 2, rotated by half a step). Returns positions, edges
    and triangles (0-based, rows ascending)."""
    angle = 2 * math.pi * np.arange(num) / num
    inner = np.stack([np.cos(angle), np.sin(angle)], axis=1)
    outer = 2 * np.stack([np.cos(angle + math.pi / num),
                          np.sin(angle + math.pi / num)], axis=1)
    pos = np.concatenate([inner, outer])
    i = np.arange(num)
    j = (i + 1) % num
    triangles = np.concatenate([
        np.stack([i, j, num + i], axis=1),
        np.stack([j, num + i, num + j], axis=1),
    ])
    triangles = np.sort(triangles, axis=1)
    edges = np.unique(
        np.sort(np.concatenate([triangles[:, [0, 1]], triangles[:, [0, 2]],
                                triangles[:, [1, 2]]]), axis=1), axis=0)
    return pos, edges, triangles


def write_drifter_file(path: str, pos, edges, triangles, paths,
                       plain_paths=()) -> str:
    r"""Writes a small file laid out like ``dataBuoys.jld2``: HDF5 with a
    512-byte user block, 1-based ``elist``/``tlist``, ``HexcentersXY`` as a
    compound dataset, and ``TrajectoriesNodes`` as references to arrays of
    references to scalars (as JLD2 writes a ``Vector{Any}``), or to plain
    integer arrays for the indices in :obj:`plain_paths`."""
    import h5py

    with h5py.File(path, "w", userblock_size=512) as f:
        f["elist"] = np.asarray(edges, dtype=np.int64).T + 1
        f["tlist"] = np.asarray(triangles, dtype=np.int64).T + 1
        xy = np.zeros(len(pos), dtype=[("1", "<f8"), ("2", "<f8")])
        xy["1"], xy["2"] = pos[:, 0], pos[:, 1]
        f["HexcentersXY"] = xy
        store = f.create_group("_store")
        refs = []
        for p, path_ in enumerate(paths):
            if p in plain_paths:
                refs.append(store.create_dataset(
                    f"path{p}", data=np.asarray(path_, dtype=np.int64) + 1).ref)
                continue
            inner = [store.create_dataset(f"v{p}_{i}", data=np.int64(v + 1)).ref
                     for i, v in enumerate(path_)]
            refs.append(store.create_dataset(f"path{p}", data=inner,
                                             dtype=h5py.ref_dtype).ref)
        f.create_dataset("TrajectoriesNodes", data=refs, dtype=h5py.ref_dtype)
    return path


def write_citation_files(folder: str, simplices, counts, prefix="150250"):
    r"""Writes ``<prefix>_simplices.npy`` and ``<prefix>_cochains.npy`` laid
    out like the published files (object arrays of dicts with frozenset
    keys, pickle protocol 2) from per-order lists of author-id tuples and
    counts (the list position is the raw index)."""
    import pickle

    simp = np.empty(len(simplices), dtype=object)
    coch = np.empty(len(simplices), dtype=object)
    for k, (order_simplices, order_counts) in enumerate(zip(simplices,
                                                             counts)):
        simp[k] = {frozenset(s): i for i, s in enumerate(order_simplices)}
        coch[k] = {frozenset(s): c for s, c in zip(order_simplices,
                                                    order_counts)}
    paths = []
    for name, value in (("simplices", simp), ("cochains", coch)):
        path = osp.join(folder, f"{prefix}_{name}.npy")
        with open(path, "wb") as f:
            np.lib.format.write_array_header_1_0(f, {
                "descr": "|O",
                "fortran_order": False,
                "shape": value.shape
            })
            pickle.dump(value, f, protocol=2)
        paths.append(path)
    return paths


@pytest.fixture(name="annulus")
def annulus_fixture():
    return annulus


@pytest.fixture(name="write_drifter_file")
def write_drifter_file_fixture():
    pytest.importorskip("h5py", reason="needs h5py (the 'datasets' extra)")
    return write_drifter_file


@pytest.fixture(name="write_citation_files")
def write_citation_files_fixture():
    return write_citation_files


def dense(index, weight, shape):
    r"""Dense matrix with weight[i] at (index[0, i], index[1, i]): for a
    boundary B_k, rows are (k-1)-faces and columns k-simplices; Laplacians
    are symmetric."""
    import torch

    out = torch.zeros(shape, dtype=torch.float64)
    out.index_put_((index[0], index[1]), weight.double(), accumulate=True)
    return out


@pytest.fixture(name="dense")
def dense_fixture():
    return dense


@pytest.fixture(scope="session")
def shared_raw(tmp_path_factory):
    r"""``shared_raw(name, files)`` -> root linking the real raw files (see
    :func:`shared_raw_root`)."""
    return lambda name, files: shared_raw_root(tmp_path_factory, name, files)


@pytest.fixture
def fifo(tmp_path):
    r"""A FIFO whose writer closes it as soon as a reader opens it, so that a reader
    that opens it reads an empty file where it would block for ever (no writer)."""
    path = tmp_path / "fifo"
    os.mkfifo(path)
    writer = threading.Thread(target=lambda: os.close(os.open(path, os.O_WRONLY)),
                              daemon=True)
    writer.start()
    yield str(path)
    # A reader that does not block, open until the writer, waiting for one, is done.
    reader = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    writer.join()
    os.close(reader)


@pytest.fixture(params=["FIFO", "character device", "directory"])
def not_a_regular_file(request, tmp_path):
    r"""(kind, path): a symbolic link to a FIFO, a device (``/dev/null``) or a
    directory, where a file belongs."""
    target = {"FIFO": lambda: request.getfixturevalue("fifo"),
              "character device": lambda: "/dev/null",
              "directory": lambda: str(tmp_path)}[request.param]()
    os.symlink(target, tmp_path / "link")
    return request.param, str(tmp_path / "link")
