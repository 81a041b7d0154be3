"""dense_san_conv: its checks (its values are compared with SANConv's in
tests/nn/conv/test_san_conv.py)."""
import pytest
import torch

from torch_geometric_san.nn import SANConv, dense_san_conv


@pytest.mark.parametrize('conv_kwargs, x_shape, laplacian, match', [
    # each failed inside torch's reshapes, or on a bare assert
    (dict(J_harmonic=2), None, None, r"harmonic filter \(J_harmonic=2\) needs 'hodge'"),
    (dict(), (2, 17, 3), None, r"'x' must be \[N, 3\] .* got \[2, 17, 3\]"),
    (dict(), (17, 4), None, r"'x' must be \[N, 3\] .* got \[17, 4\]"),
    (dict(ensemble=2), None, None, "computes one network; this layer is an ensemble of 2"),
    (dict(), None, (16, 16), r"'up' must be a dense \[17, 17\] Laplacian .* got \[16, 16\]"),
    (dict(), None, 'float32', r"in the dtype of 'x', torch.float64, got \[17, 17\] "
                              r"torch.float32"),
])
def test_bad_inputs_are_named(conv_kwargs, x_shape, laplacian, match):
    conv = SANConv(3, 4, **conv_kwargs).double()
    x = torch.randn(*(x_shape or (17, 3)), dtype=torch.float64)
    up = torch.eye(17, dtype=torch.float64)
    if laplacian == 'float32':
        up = up.float()
    elif laplacian is not None:
        up = torch.eye(*laplacian, dtype=torch.float64)
    with pytest.raises(ValueError, match=match):
        dense_san_conv(conv, x, up=up, down=None)
