"""Runs the examples in the docstrings of torch_geometric_san.nn."""
import doctest
import importlib
import pkgutil

import pytest

import torch_geometric_san.nn

MODULES = sorted(
    info.name for info in pkgutil.walk_packages(torch_geometric_san.nn.__path__,
                                                'torch_geometric_san.nn.'))


@pytest.mark.parametrize('name', MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
