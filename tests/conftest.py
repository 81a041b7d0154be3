"""Test configuration, and the fixture ``assert_rejected`` of the bad-input tests.

Set ``TGSAN_WITHOUT_EXTENSIONS=1`` to run the suite with ``torch_scatter`` and
``torch_sparse`` made un-importable, so that PyG falls back to its pure-PyTorch
code paths.  The blocker is installed before anything imports PyG.
"""
import importlib.abc
import os
import sys

BLOCKED = ("torch_scatter", "torch_sparse")
WITHOUT_EXTENSIONS = os.environ.get("TGSAN_WITHOUT_EXTENSIONS", "") == "1"


class _BlockExtensions(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path, target=None):
        if fullname.split(".")[0] in BLOCKED:
            raise ImportError(f"{fullname} is blocked by TGSAN_WITHOUT_EXTENSIONS=1")
        return None


if WITHOUT_EXTENSIONS:
    if any(name.split(".")[0] in BLOCKED for name in sys.modules):
        raise RuntimeError("torch_scatter/torch_sparse were imported before the blocker")
    sys.meta_path.insert(0, _BlockExtensions())


# Imported after the blocker: none of these imports PyG.
import gudhi  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import scipy.sparse as sp  # noqa: E402
import torch  # noqa: E402


def _snapshot(value):
    # A plain, deep copy of an input, for comparing before and after a call.
    if isinstance(value, torch.Tensor):
        return ('tensor', value.dtype, value.layout, value.to_dense().clone().numpy())
    if isinstance(value, np.ndarray):
        return ('array', value.dtype, value.copy())
    if sp.issparse(value):
        return ('sparse', value.format, value.toarray())
    if isinstance(value, gudhi.SimplexTree):
        return ('tree', [s for s, _ in value.get_simplices()])
    if isinstance(value, (list, tuple)):
        return (type(value), [_snapshot(v) for v in value])
    if isinstance(value, dict):
        return {k: _snapshot(v) for k, v in value.items()}
    if hasattr(value, 'to_dict') and hasattr(value, 'keys'):  # a PyG data object
        return (type(value), _snapshot(value.to_dict()))
    return value


def _same(a, b) -> bool:
    if isinstance(a, np.ndarray):
        return a.shape == b.shape and np.array_equal(a, b, equal_nan=a.dtype.kind in
                                                     'fc')
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return a == b


def _assert_rejected(function, args, kwargs, error, pattern) -> None:
    before = _snapshot((args, kwargs))
    with pytest.raises(error, match=pattern):
        function(*args, **kwargs)
    assert _same(_snapshot((args, kwargs)), before), "the call modified its input"


@pytest.fixture
def assert_rejected():
    r"""``assert_rejected(function, args, kwargs, error, pattern)``: calling
    ``function(*args, **kwargs)`` raises ``error`` with a message matching
    ``pattern`` and leaves every argument (tensors, arrays, sparse matrices, simplex
    trees, data objects, containers of them) as it was."""
    return _assert_rejected


def _write_tiny_tu_dataset(root, name: str = 'TINY', num_graphs: int = 24) -> str:
    # A TU-format dataset (the files TUDataset reads from <root>/<name>/raw):
    # random graphs of 6-9 nodes with 3 node labels; class 1 graphs are cycles
    # with chords (triangles), class 0 graphs are paths (no triangles).
    raw = os.path.join(str(root), name, 'raw')
    os.makedirs(raw)
    rng = np.random.default_rng(0)
    edges, indicator, node_labels, graph_labels, offset = [], [], [], [], 0
    for g in range(num_graphs):
        n, label = int(rng.integers(6, 10)), g % 2
        pairs = [(i, i + 1) for i in range(n - 1)]
        if label:
            pairs += [(i, i + 2) for i in range(0, n - 2, 2)]
        for i, j in pairs:  # both directions, 1-based ids
            edges += [(offset + i + 1, offset + j + 1), (offset + j + 1, offset + i + 1)]
        indicator += [g + 1] * n
        node_labels += rng.integers(0, 3, n).tolist()
        graph_labels.append(label)
        offset += n
    for suffix, rows in (('A', [f'{i}, {j}' for i, j in edges]),
                         ('graph_indicator', indicator), ('node_labels', node_labels),
                         ('graph_labels', graph_labels)):
        with open(os.path.join(raw, f'{name}_{suffix}.txt'), 'w') as f:
            f.write('\n'.join(map(str, rows)) + '\n')
    return str(root)


@pytest.fixture
def tiny_tu_dataset(tmp_path):
    r"""The root of a small TU-format dataset ``TINY`` (24 graphs, 3 node labels,
    classes: with or without triangles), written in a fresh directory."""
    return _write_tiny_tu_dataset(tmp_path / 'tu')
