"""Runs the examples of the documentation as doctests: the docstrings of every
module of the package, and the ``pycon`` code blocks of the Markdown pages
under docs/ (the blocks of one page share their names, in page order)."""
import doctest
import importlib
import pkgutil
import re
from pathlib import Path

import pytest

import torch_geometric_san

DOCS = Path(__file__).resolve().parents[1] / 'docs'
OPTIONS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
MODULES = sorted(['torch_geometric_san'] + [
    info.name for info in pkgutil.walk_packages(torch_geometric_san.__path__,
                                                'torch_geometric_san.')
])
PAGES = sorted(str(path.relative_to(DOCS)) for path in DOCS.rglob('*.md')
               if '_build' not in path.parts)
PYCON = re.compile(r'^```pycon[^\n]*\n(.*?)^```', re.MULTILINE | re.DOTALL)


@pytest.mark.parametrize('name', MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=OPTIONS)
    assert result.failed == 0


@pytest.mark.parametrize('page', PAGES)
def test_page_examples(page):
    blocks = PYCON.findall((DOCS / page).read_text())
    if not blocks:
        return  # a page without examples
    test = doctest.DocTestParser().get_doctest('\n'.join(blocks), {}, page, page, 0)
    runner = doctest.DocTestRunner(optionflags=OPTIONS)
    runner.run(test)
    assert runner.summarize(verbose=False).failed == 0
