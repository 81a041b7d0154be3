"""Conversions between tensors and NumPy arrays."""
import numpy as np
import torch
from torch import Tensor


def to_numpy(value: Tensor) -> np.ndarray:
    r"""The values of a tensor as a NumPy array on the CPU, detached, as
    :meth:`torch.Tensor.numpy` gives them (sharing memory where no copy is
    needed), except that bfloat16, which NumPy lacks, becomes ``float32`` (exact).

    Args:
        value (torch.Tensor): The tensor, on any device.

    Returns:
        numpy.ndarray: Its values, of the same shape.
    """
    # (a conjugate or negative view has no NumPy form until resolved: free
    # where the bit is not set)
    value = value.detach().cpu().resolve_conj().resolve_neg()
    return (value.float() if value.dtype == torch.bfloat16 else value).numpy()
