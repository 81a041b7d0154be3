"""Checks the offline intersphinx inventories of docs/inventories.py: each names an
object of the installed package (so a renamed or moved object fails here, not as a
dead link), and they are valid Sphinx inventories that resolve to their links."""
import importlib
import inspect
import sys
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / 'docs'
sys.path.insert(0, str(DOCS))
from inventories import INVENTORIES, inventory_bytes, write_inventories  # noqa: E402

ENTRIES = [(project, *entry) for project, (_, entries) in INVENTORIES.items()
           for entry in entries]


def resolve(name):
    r"""The object :obj:`name` (a dotted path) of an installed package: the longest
    importable module prefix, then attributes."""
    parts = name.split('.')
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module('.'.join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(name)


@pytest.mark.parametrize('project,name,role,uri', ENTRIES,
                         ids=[entry[1] for entry in ENTRIES])
def test_every_inventory_name_is_an_installed_object(project, name, role, uri):
    assert name.split('.')[0] in (project, 'copy', 'os', 'pickle'), name
    obj = resolve(name)
    if role == 'module':
        assert isinstance(obj, type(sys)), name
    elif role in ('class', 'exception'):
        assert isinstance(obj, type), name
        assert (role == 'exception') == issubclass(obj, BaseException), name
    elif role in ('function', 'method'):
        assert callable(obj), name
    elif role == 'property':
        owner, attr = name.rsplit('.', 1)
        assert isinstance(inspect.getattr_static(resolve(owner), attr), property), name
    else:
        assert role == 'data', (name, role)


def import_inventory_file():
    r"""Sphinx's :class:`InventoryFile`, or a skip. A failed import can leave a
    namespace package ``sphinx`` (a folder of that name, not Sphinx) in
    :obj:`sys.modules`, which SciPy's docstring parser then takes for Sphinx (a
    later ``import scipy.stats`` fails), so a failed import leaves none of its
    modules behind."""
    before = set(sys.modules)
    try:
        return importlib.import_module('sphinx.util.inventory').InventoryFile
    except ImportError:
        for name in set(sys.modules) - before:
            del sys.modules[name]
        pytest.skip('needs Sphinx (the docs extra: pip install -e ".[docs]")')


def test_inventories_load_as_sphinx_reads_them(tmp_path):
    InventoryFile = import_inventory_file()
    mapping = write_inventories(str(tmp_path))
    assert set(mapping) == set(INVENTORIES)
    for project, (root, path) in mapping.items():
        inventory = InventoryFile.loads(Path(path).read_bytes(), uri=root)
        entries = INVENTORIES[project][1]
        for name, role, uri in entries:
            item = inventory.data[f'py:{role}'][name]
            expected = uri or f'generated/{name}.html#{name}'
            assert item.uri == root + expected
        assert Path(path).read_bytes() == inventory_bytes(project, entries)


def test_a_failed_sphinx_import_leaves_no_module_behind(monkeypatch):
    for name in [name for name in sys.modules if name.split('.')[0] == 'sphinx']:
        monkeypatch.delitem(sys.modules, name)
    # 'sphinx' imports (Sphinx itself, or a folder of that name), 'sphinx.util' fails
    monkeypatch.setitem(sys.modules, 'sphinx.util', None)
    with pytest.raises(pytest.skip.Exception, match='needs Sphinx'):
        import_inventory_file()
    assert 'sphinx' not in sys.modules
