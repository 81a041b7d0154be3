"""Loads the tutorial scripts of docs/examples (not a package) as modules, and
gives them dataset roots that link to the real raw files of ``../shared/data``
(or ``$TGSAN_SHARED_DATA``)."""
import importlib.util
import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / 'docs' / 'examples'
SHARED_DATA = Path(os.environ.get('TGSAN_SHARED_DATA', REPO.parent / 'shared' / 'data'))


def _load_example(name: str):
    spec = importlib.util.spec_from_file_location(f'tutorial_{name}',
                                                  EXAMPLES / f'{name}.py')
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _raw_root(tmp_path: Path, name: str, files) -> str:
    missing = [f for f in files if not (SHARED_DATA / name / f).is_file()]
    if missing:
        pytest.skip(f'needs the raw file ../shared/data/{name}/{missing[0]} (place it at '
                    f'{SHARED_DATA / name / missing[0]}, or set TGSAN_SHARED_DATA to the '
                    f'folder that holds {name}/)')
    os.makedirs(tmp_path / 'raw')
    for f in files:
        os.symlink(SHARED_DATA / name / f, tmp_path / 'raw' / f)
    return str(tmp_path)


@pytest.fixture
def load_example():
    r"""Imports ``docs/examples/<name>.py`` as a module."""
    return _load_example


@pytest.fixture
def raw_root(tmp_path):
    r"""A fresh dataset root whose ``raw/`` links to ``SHARED_DATA/<name>/<file>``,
    or a skip that says where the files belong."""
    return lambda name, files: _raw_root(tmp_path, name, files)
