"""Test configuration.

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
