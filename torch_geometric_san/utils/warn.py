r"""The package's warnings, attributed to the user's code."""
import multiprocessing
import os
import sys
import warnings
from typing import Type

import torch
import torch_geometric

#: The code a warning is not attributed to: this package's, and the libraries'
#: between it and the user: PyTorch's (e.g. :func:`torch.compiler.disable`'s
#: wrappers, the DataLoader's workers), PyG's (e.g. a transform's
#: :meth:`__call__`) and multiprocessing's (a forked worker keeps the stack of
#: the user's loop).
_INSIDE = tuple(os.path.dirname(os.path.abspath(module.__file__)) + os.sep
                for module in (torch, torch_geometric, multiprocessing,
                               sys.modules['torch_geometric_san']))


@torch.compiler.disable  # (Dynamo cannot trace sys._getframe, and said so)
def warn_user(message: str, category: Type[Warning] = UserWarning) -> None:
    r"""Warns with :obj:`message`, attributed to the first caller outside this
    package and the libraries it runs under (PyTorch, PyG, multiprocessing): the
    user's line, which the warning then shows and by which Python's filters
    (``module=``, once per location) treat it.

    Args:
        message (str): The warning.
        category (Type[Warning], optional): Its class. (default: :obj:`UserWarning`)
    """
    level, frame = 2, sys._getframe(1)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(
            _INSIDE):
        level, frame = level + 1, frame.f_back
    warnings.warn(message, category, stacklevel=level)
