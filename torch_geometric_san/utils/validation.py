r"""Argument checks shared by the constructors, transforms and datasets.

Each returns the checked value or raises a :class:`TypeError` (wrong type) or
:class:`ValueError` (wrong value) whose message names the argument, so that bad
input fails where it enters the package, never deep inside NumPy or PyTorch.
"""
import math
import numbers
from typing import Any, Optional

import numpy as np
import torch


def check_int(value: Any, name: str, minimum: Optional[int] = None,
              maximum: Optional[int] = None) -> int:
    r"""Checks that :obj:`value` is an integer (a Python or NumPy integer, not a
    :obj:`bool`) in ``[minimum, maximum]``.

    Args:
        value (Any): The argument.
        name (str): Its name, for the error message.
        minimum (int, optional): The smallest value allowed.
        maximum (int, optional): The largest value allowed.

    Returns:
        int: :obj:`value` as a Python :obj:`int`.

    Raises:
        TypeError: If :obj:`value` is not an integer (:obj:`True` is refused).
        ValueError: If it is out of range.
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    value = int(value)
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be at least {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be at most {maximum}, got {value}")
    return value


def check_bool(value: Any, name: str) -> bool:
    r"""Checks that :obj:`value` is :obj:`True` or :obj:`False` (a flag given as
    e.g. the string ``"no"`` would otherwise count as true).

    Args:
        value (Any): The argument.
        name (str): Its name, for the error message.

    Returns:
        bool: :obj:`value`.

    Raises:
        TypeError: If :obj:`value` is not a :obj:`bool`.
    """
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, not {type(value).__name__}")
    return bool(value)


def check_real(value: Any, name: str) -> float:
    r"""Checks that :obj:`value` is a finite real number (not a :obj:`bool`).

    Args:
        value (Any): The argument.
        name (str): Its name, for the error message.

    Returns:
        float: :obj:`value` as a Python :obj:`float`.

    Raises:
        TypeError: If :obj:`value` is not a real number.
        ValueError: If it is NaN or infinite.
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, not {type(value).__name__}")
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value}")
    return float(value)


def check_float_dtype(dtype: Any, name: str = "dtype") -> torch.dtype:
    r"""Checks that :obj:`dtype` is a floating :class:`torch.dtype`.

    Args:
        dtype (Any): The argument.
        name (str, optional): Its name, for the error message.

    Returns:
        torch.dtype: :obj:`dtype`.

    Raises:
        TypeError: If it is not a floating :class:`torch.dtype`.
    """
    if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
        raise TypeError(f"{name} must be a floating torch.dtype, not {dtype!r}")
    return dtype
