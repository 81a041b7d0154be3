import pytest
import torch

from torch_geometric_san.nn.functional import dropout


@pytest.mark.parametrize('p', [0.1, 0.6])
def test_dropout_keeps_each_entry_with_probability_one_minus_p(p):
    torch.manual_seed(0)
    x = torch.ones(1_000_000)
    out = dropout(x, p)
    kept = out != 0
    n = x.numel()
    sigma = (n * p * (1 - p)) ** 0.5
    assert abs(int(kept.sum()) - n * (1 - p)) < 5 * sigma
    assert torch.allclose(out[kept], torch.full_like(out[kept], 1 / (1 - p)))
    # Neighbouring entries are independent: both kept about (1 - p)^2 of the time.
    both = int((kept[1:] & kept[:-1]).sum())
    assert abs(both - (n - 1) * (1 - p) ** 2) < 5 * ((n - 1) * (1 - p) ** 2) ** 0.5


@pytest.mark.parametrize('dtype', [torch.float32, torch.float64])
def test_dropout_scales_kept_entries_and_differentiates_through_the_mask(dtype):
    torch.manual_seed(1)
    x = torch.randn(8, 50, 3, dtype=dtype, requires_grad=True)
    before = x.detach().clone()
    out = dropout(x, 0.3)
    assert out.dtype == dtype and out.shape == x.shape
    assert torch.equal(x.detach(), before)  # the input is not modified
    kept = out != 0
    assert torch.allclose(out[kept], x[kept] / 0.7)
    out.backward(torch.ones_like(out))
    assert torch.allclose(x.grad, kept.to(dtype) / 0.7)


def test_dropout_follows_the_seed_and_is_off_in_evaluation():
    x = torch.randn(100, 4)
    torch.manual_seed(5)
    first = dropout(x, 0.5)
    second = dropout(x, 0.5)
    torch.manual_seed(5)
    assert torch.equal(dropout(x, 0.5), first)
    assert not torch.equal(first, second)
    assert dropout(x, 0.5, training=False) is x
    assert dropout(x, 0.0) is x


@pytest.mark.parametrize('args, error, match', [
    ((torch.ones(3), 1.0), ValueError, r"\[0, 1\)"),
    ((torch.ones(3), -0.1), ValueError, r"\[0, 1\)"),
    ((torch.ones(3), '0.5'), TypeError, "p"),
    ((torch.ones(3), 0.5, 'yes'), TypeError, "training"),
    ((torch.ones(3, dtype=torch.long), 0.5), TypeError, "floating-point"),
    (([1.0, 2.0], 0.5), TypeError, "floating-point"),
])
def test_dropout_rejects_bad_input(args, error, match):
    with pytest.raises(error, match=match):
        dropout(*args)
