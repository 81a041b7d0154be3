"""Conversions between tensors and NumPy arrays."""
import numpy as np
import torch
from torch import Tensor


def to_numpy(value: Tensor) -> np.ndarray:
    r"""The values of :obj:`value` as a NumPy array on the CPU, detached; bfloat16,
    which NumPy lacks, as ``float32`` (exact). Shares memory with :obj:`value` where
    no copy is needed, as :meth:`torch.Tensor.numpy` does."""
    value = value.detach().cpu()
    return (value.float() if value.dtype == torch.bfloat16 else value).numpy()
