"""Test configuration, and the fixture ``assert_rejected`` of the bad-input tests.

Set ``TGSAN_WITHOUT_EXTENSIONS=1`` to run the suite with ``torch_scatter`` and
``torch_sparse`` made un-importable, so that PyG falls back to its pure-PyTorch
code paths.  The blocker is installed before anything imports PyG. ``make test``
sets ``TGSAN_COMPILED_KERNELS=0`` with it, so that the same tests also run the
composites that replace the package's own compiled CPU kernels
(``torch_geometric_san.sparse.compiled``).
"""
import importlib.abc
import os
import sys
from pathlib import Path

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

# The tests whose code paths differ without torch_scatter/torch_sparse are marked
# `extensions`; `make test` runs every test with the extensions, then these again with
# them blocked. PyG chooses its scatter, segment-softmax, pooling and sparse-matrix
# kernels by whether the extensions import, and in this package only the layers and
# models (torch_geometric_san.nn) and the sparse operators they use
# (torch_geometric_san.sparse: SparseTensor inputs, the softmax checked against PyG's)
# call those kernels. So the marked tests are those of tests/sparse and of the test
# modules that import from torch_geometric_san.nn (tests/nn, the
# ReorderSimplices equivariance test), and those that run models in other ways: the
# README, the tutorials, the docstring examples and the training benchmarks (citation,
# trajectory, trajectory with DistributedDataParallel and PyG's DataLoader). Left to
# the first pass: the data, datasets, transforms and utils code, which uses NumPy,
# SciPy, GUDHI and PyG's collate, with no extension-dependent path for the attributes
# of a complex (a run of their tests that recorded every call into torch_scatter/
# torch_sparse found none); the API-reference check (no code runs); and the lifting
# and scaling benchmarks and benchmark helpers (lifting runs no layer; scaling times
# the same layers that tests/nn checks on both paths, and PyG's GATConv).
EXTENSION_PATHS = ('nn/', 'sparse/', 'docs/test_readme.py', 'docs/test_tutorials.py',
                   'test_doctests.py', 'benchmarks/test_citation.py',
                   'benchmarks/test_trajectory.py', 'benchmarks/test_trajectory_ddp.py',
                   'benchmarks/test_operators.py', 'benchmarks/test_propagation.py')
TESTS = Path(__file__).resolve().parent


def _uses_layers(module) -> bool:
    # Whether the test module holds a class, function or module of torch_geometric_san.nn.
    for value in vars(module).values():
        origin = getattr(value, '__module__', None) or getattr(value, '__name__', None)
        if isinstance(origin, str) and origin.startswith('torch_geometric_san.nn'):
            return True
    return False


def pytest_configure(config):
    config.addinivalue_line('markers', 'extensions: the code path differs without '
                            'torch_scatter/torch_sparse (see tests/conftest.py)')


def pytest_collection_modifyitems(config, items):
    for item in items:
        path = Path(item.path).resolve().relative_to(TESTS).as_posix()
        module = getattr(item, 'module', None)
        if path.startswith(EXTENSION_PATHS) or (module is not None and
                                                _uses_layers(module)):
            item.add_marker('extensions')


# Imported after the blocker: none of these imports PyG.
import contextlib  # noqa: E402
import io  # noqa: E402
import types  # noqa: E402

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
    if isinstance(value, types.SimpleNamespace):
        return (type(value), _snapshot(vars(value)))
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


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@contextlib.contextmanager
def _terminal_stderr():
    buffer, saved = _Terminal(), sys.stderr
    sys.stderr = buffer
    try:
        yield buffer
    finally:
        sys.stderr = saved


@pytest.fixture
def terminal_stderr():
    r"""``with terminal_stderr() as err:`` replaces ``sys.stderr`` with a text buffer
    that says it is a terminal (progress bars are drawn on terminals only). Used in the
    test body: pytest's output capture resets ``sys.stderr`` after fixture set-up."""
    return _terminal_stderr


def _write_tiny_tu_dataset(root, name: str = 'TINY', num_graphs: int = 24,
                           edge_labels: bool = False) -> str:
    # A TU-format dataset (the files TUDataset reads from <root>/<name>/raw):
    # random graphs of 6-9 nodes with 3 node labels; class 1 graphs are cycles
    # with chords (triangles), class 0 graphs are paths (no triangles); with
    # edge_labels, 2 labels per edge (the same in both directions), which TUDataset
    # gives as a one-hot edge_attr.
    raw = os.path.join(str(root), name, 'raw')
    os.makedirs(raw)
    rng = np.random.default_rng(0)
    edges, indicator, node_labels, graph_labels, offset = [], [], [], [], 0
    labels_of_edges = []
    for g in range(num_graphs):
        n, label = int(rng.integers(6, 10)), g % 2
        pairs = [(i, i + 1) for i in range(n - 1)]
        if label:
            pairs += [(i, i + 2) for i in range(0, n - 2, 2)]
        for i, j in pairs:  # both directions, 1-based ids
            edges += [(offset + i + 1, offset + j + 1), (offset + j + 1, offset + i + 1)]
            labels_of_edges += [int(rng.integers(0, 2))] * 2
        indicator += [g + 1] * n
        node_labels += rng.integers(0, 3, n).tolist()
        graph_labels.append(label)
        offset += n
    for suffix, rows in (('A', [f'{i}, {j}' for i, j in edges]),
                         ('graph_indicator', indicator), ('node_labels', node_labels),
                         ('graph_labels', graph_labels)) + (
                            (('edge_labels', labels_of_edges), ) if edge_labels else ()):
        with open(os.path.join(raw, f'{name}_{suffix}.txt'), 'w') as f:
            f.write('\n'.join(map(str, rows)) + '\n')
    return str(root)


@pytest.fixture
def tiny_tu_dataset(tmp_path):
    r"""The root of a small TU-format dataset ``TINY`` (24 graphs, 3 node labels,
    classes: with or without triangles), written in a fresh directory."""
    return _write_tiny_tu_dataset(tmp_path / 'tu')


@pytest.fixture
def tiny_tu_dataset_with_edge_labels(tmp_path):
    r"""The root of :func:`tiny_tu_dataset` with 2 labels per edge as well (a one-hot
    ``edge_attr`` in TUDataset), written in a fresh directory."""
    return _write_tiny_tu_dataset(tmp_path / 'tu', edge_labels=True)


@pytest.fixture
def cycle_with_pos():
    r"""A 7-cycle complex with a vertex ``pos`` ``[7, 2]``: it has as many edges as
    vertices, so the length of ``pos`` does not tell its order."""
    from torch_geometric_san.data import SimplicialComplexData
    cycle = sorted(sorted((i, (i + 1) % 7)) for i in range(7))
    return SimplicialComplexData.from_simplices(cycle, pos=torch.randn(7, 2))


@pytest.fixture
def inductor_compiles_the_layer():
    r"""Skips a test that compiles SANConv's backward with Inductor on the CPU
    under PyTorch 2.5 and 2.6, whose C++ code generation stops there on an
    internal assertion (``CppTile2DKernel.store``: an atomic add in a tiled
    loop; found with 2.5.0, 2.5.1 and 2.6.0, not with 2.4, 2.7.1, 2.9.0 or
    2.13)."""
    if (2, 5) <= torch.__version__ < (2, 7):
        pytest.skip(f"PyTorch {torch.__version__}'s Inductor cannot generate the CPU "
                    f"code of SANConv's backward (an internal assertion in "
                    f"CppTile2DKernel.store)")
