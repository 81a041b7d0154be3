import numpy as np
import pytest
import torch

from torch_geometric_san.utils.convert import to_numpy


@pytest.mark.parametrize('dtype', [torch.float32, torch.float64, torch.float16,
                                   torch.bfloat16, torch.int64, torch.bool])
def test_to_numpy_keeps_every_value(dtype):
    value = (torch.randn(3, 2) * 4).to(dtype).requires_grad_(dtype.is_floating_point)
    array = to_numpy(value)
    assert isinstance(array, np.ndarray) and array.shape == (3, 2)
    # bfloat16, which NumPy lacks, as float32 (exact); the others as they are
    assert array.dtype == (np.float32 if dtype == torch.bfloat16
                           else torch.empty(0, dtype=dtype).numpy().dtype)
    np.testing.assert_array_equal(array, value.detach().float().numpy())


def test_conjugate_and_negative_views_are_resolved():
    # NumPy refused them inside torch (exports of a complex feature held as z.conj())
    z = torch.randn(3, dtype=torch.complex64)
    np.testing.assert_array_equal(to_numpy(z.conj()), z.numpy().conj())
    x = torch.randn(3)
    np.testing.assert_array_equal(to_numpy(x._neg_view()), -x.numpy())
