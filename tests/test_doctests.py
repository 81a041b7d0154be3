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
    text = (DOCS / page).read_text()
    runner = doctest.DocTestRunner(optionflags=OPTIONS)
    globs = {}
    for block in PYCON.finditer(text):
        lineno = text.count('\n', 0, block.start(1))
        test = doctest.DocTestParser().get_doctest(block.group(1), {}, page, page, lineno)
        test.globs = globs  # shared by the blocks of the page
        runner.run(test, clear_globs=False)
    assert runner.summarize(verbose=False).failed == 0
