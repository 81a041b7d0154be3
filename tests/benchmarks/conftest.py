"""Loads the benchmark scripts (which are not a package) as modules, and
locates the raw files of the real datasets."""
import importlib.util
import os
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / 'benchmarks'
SHARED_DATA = Path(os.environ.get('TGSAN_SHARED_DATA',
                                  BENCHMARKS.parents[1] / 'shared' / 'data'))


def load_script(name: str):
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f'{name}.py')
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        # as a failed import does: the next test sees the same error, not a
        # half-run module
        del sys.modules[name]
        raise
    return module


@pytest.fixture
def common():
    return load_script('_common')


@pytest.fixture
def trajectory():
    return load_script('trajectory')


@pytest.fixture
def citation():
    return load_script('citation')


@pytest.fixture
def shared_data():
    """The directory of the real datasets' raw files; skips the test when it
    is missing."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f'needs the raw files of the real datasets in {SHARED_DATA} '
                    f'(the shared data directory, or set TGSAN_SHARED_DATA)')
    return SHARED_DATA


@pytest.fixture
def operators():
    return load_script('operators')


@pytest.fixture
def sampling():
    return load_script('sampling')


@pytest.fixture
def eigenvalue():
    return load_script('eigenvalue')
