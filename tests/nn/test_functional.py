from fractions import Fraction
from types import SimpleNamespace

import pytest
import torch
import torch.nn.functional as F

from torch_geometric_san.nn import functional
from torch_geometric_san.nn.functional import dropout, odd_activation


@pytest.mark.parametrize('dtype', [torch.float32, torch.float64])
@pytest.mark.parametrize('shape', [(32, 101, 4), (7, 3), (3 * functional._CHUNK + 5, ),
                                   (0, 4)])
@pytest.mark.parametrize('p', [0.1, 0.6])
def test_dropout_equals_pytorch_dropout_bit_for_bit(dtype, shape, p):
    x = torch.randn(*shape, dtype=dtype, requires_grad=True)
    ref = x.detach().clone().requires_grad_()
    grad = torch.randn(*shape, dtype=dtype)
    torch.manual_seed(3)
    out = dropout(x, p)
    after = torch.rand(())  # the generator is left where PyTorch's dropout leaves it
    torch.manual_seed(3)
    expected = F.dropout(ref, p)
    assert torch.equal(torch.rand(()), after)
    assert out.dtype == dtype and torch.equal(out, expected)
    out.backward(grad)
    expected.backward(grad)
    assert torch.equal(x.grad, ref.grad)


def test_dropout_drops_at_rate_p_and_scales_the_rest():
    torch.manual_seed(0)
    out = dropout(torch.ones(1_000_000), 0.6)
    kept = out != 0
    sigma = (1_000_000 * 0.6 * 0.4) ** 0.5
    assert abs(int(kept.sum()) - 400_000) < 5 * sigma
    assert torch.equal(out[kept], torch.full_like(out[kept], 1.0).div_(0.4))


def test_dropout_of_non_contiguous_input_and_input_unchanged():
    x = torch.randn(50, 8, dtype=torch.float64).t()
    before = x.clone()
    torch.manual_seed(1)
    out = dropout(x, 0.3)
    torch.manual_seed(1)
    assert torch.equal(out, F.dropout(x, 0.3))
    assert torch.equal(x, before)


def test_dropout_takes_any_real_probability():
    # (the checked p was dropped: F.dropout refused a Fraction on its paths)
    x = torch.randn(50, 8).t()
    torch.manual_seed(1)
    out = dropout(x, Fraction(1, 2))
    torch.manual_seed(1)
    assert torch.equal(out, F.dropout(x, 0.5))


def test_dropout_is_the_identity_in_evaluation_and_at_p_zero():
    x = torch.randn(100, 4)
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


@pytest.mark.parametrize('draw,extra,expected', [
    (torch.float64, 0, True),  # one uniform double per entry: the per-element path
    (torch.float32, 0, False),  # other numbers (as MKL's path, e.g. PyTorch 2.4's)
    (torch.float64, 1, False),  # the same mask, but the generator left elsewhere
])
def test_the_bernoulli_path_is_asked_of_pytorch(monkeypatch, draw, extra, expected):
    # (session 31: a vendor rule read from /proc/cpuinfo, right for PyTorch 2.13,
    # sent PyTorch 2.4 on an AMD CPU down the package's path, whose masks then
    # differed from F.dropout's)
    def bernoulli_(self, p, generator=None):
        uniform = torch.empty(self.numel() + extra, dtype=draw).uniform_(
            generator=generator)
        return self.copy_((uniform[:self.numel()] < p).view(self.shape))

    monkeypatch.setattr(torch.Tensor, 'bernoulli_', bernoulli_)
    functional._bernoulli_per_element.cache_clear()
    try:
        assert functional._bernoulli_per_element() is expected
        state = torch.random.get_rng_state()
        functional._bernoulli_per_element.cache_clear()
        functional._bernoulli_per_element()
        assert torch.equal(torch.random.get_rng_state(), state)  # (PyTorch's untouched)
    finally:
        functional._bernoulli_per_element.cache_clear()


def test_own_mask_where_pytorch_draws_per_entry(monkeypatch):
    # Where PyTorch's CPU bernoulli_ takes its per-element path (e.g. PyTorch 2.13
    # not on an Intel CPU with MKL), contiguous CPU inputs take the package's
    # mask, not F.dropout.
    if not functional._bernoulli_per_element():
        pytest.skip("PyTorch's bernoulli_ does not take its per-element path here "
                    "(e.g. MKL's on an Intel CPU), so dropout calls "
                    "torch.nn.functional.dropout")

    def fail(*args, **kwargs):
        raise AssertionError("torch.nn.functional.dropout was called")

    monkeypatch.setattr(functional.F, 'dropout', fail)
    assert dropout(torch.ones(10, 3), 0.5).shape == (10, 3)
    with pytest.raises(AssertionError, match="was called"):
        dropout(torch.ones(10, 3).t(), 0.5)


def test_pytorch_dropout_where_it_does_not_draw_per_entry(monkeypatch):
    calls = []

    def counted(*args, **kwargs):
        calls.append(args)
        return F.dropout(*args, **kwargs)

    monkeypatch.setattr(functional, '_bernoulli_per_element', lambda: False)
    monkeypatch.setattr(functional, 'F', SimpleNamespace(dropout=counted))
    x = torch.randn(10, 3)
    torch.manual_seed(1)
    out = dropout(x, 0.5)
    torch.manual_seed(1)
    assert torch.equal(out, F.dropout(x, 0.5)) and len(calls) == 1


def row_signs(x):
    # A random orientation per row: the sign of every feature of the row.
    return torch.where(torch.rand(*x.shape[:-1], 1) < 0.5, -1.0, 1.0).to(x.dtype)


@pytest.mark.parametrize('act', [torch.relu, F.elu, F.gelu, torch.sigmoid,
                                 lambda t: F.leaky_relu(t, 0.2)])
@pytest.mark.parametrize('shape', [(32, 101, 4), (7, 1), (5, 3)])
def test_odd_activation_is_odd_for_any_activation(act, shape):
    torch.manual_seed(0)
    x = torch.randn(*shape, dtype=torch.float64)
    x[..., 0, :] = 0.0  # a row of zeros (s = 0)
    d = row_signs(x)
    out = odd_activation(x, act)
    assert torch.equal(odd_activation(d * x, act), d * out)
    assert torch.equal(out[..., 0, :], torch.zeros_like(out[..., 0, :]))
    # Rows whose largest entry is positive get act itself.
    positive = x.gather(-1, x.abs().argmax(-1, keepdim=True)) > 0
    assert torch.equal(torch.where(positive, out, 0.0), torch.where(positive, act(x), 0.0))
    assert not torch.equal(out, act(x))  # ReLU & co. are not odd themselves


def test_odd_activation_on_ties_and_the_canonical_orientation():
    inf = float('inf')
    x = torch.tensor([[1.0, -1.0, 0.5], [-2.0, 0.5, 1.0], [0.5, -2.0, 2.0],
                      [3.0, 3.0, -1.0], [inf, -inf, 1.0], [-inf, 2.0, 1.0]])
    # The entry of largest magnitude sets the orientation; a tie of a positive
    # and a negative one (and a row of zeros) gives zeros, both infinities NaN.
    expected = torch.tensor([[0.0, 0.0, 0.0], [-2.0, 0.0, 0.0], [0.0, 0.0, 0.0],
                             [3.0, 3.0, 0.0], [0.0, 0.0, 0.0], [-inf, 0.0, 0.0]])
    for sign in (1, -1):
        out = odd_activation(sign * x, torch.relu)
        assert out[4, :2].isnan().all()
        out[4] = 0.0
        assert torch.equal(out, sign * expected)


@pytest.mark.parametrize('act', [torch.tanh, torch.nn.Identity(), lambda t: t ** 3])
def test_odd_activation_leaves_odd_activations_unchanged(act):
    torch.manual_seed(1)
    x = torch.randn(16, 50, 4)
    assert torch.allclose(odd_activation(x, act), act(x), rtol=1e-6, atol=0.0)


def test_odd_activation_gradient_and_input_unchanged():
    torch.manual_seed(2)
    x = torch.randn(6, 3, dtype=torch.float64)
    x = (x + 0.1 * x.sign()).requires_grad_()  # away from ReLU's kink
    before = x.detach().clone()
    assert torch.autograd.gradcheck(lambda t: odd_activation(t, torch.relu), (x, ))
    assert torch.autograd.gradgradcheck(lambda t: odd_activation(t, torch.tanh), (x, ))
    assert torch.equal(x.detach(), before)
    assert odd_activation(torch.empty(3, 0), torch.relu).shape == (3, 0)


@pytest.mark.parametrize('args,error,match', [
    ((torch.ones(2, 2), 'relu'), TypeError, "'act' must be callable"),
    ((torch.ones(2, 2, dtype=torch.long), torch.relu), TypeError, "floating-point"),
    ((torch.tensor(1.0), torch.relu), ValueError, "feature dimension"),
])
def test_odd_activation_rejects_bad_input(args, error, match):
    with pytest.raises(error, match=match):
        odd_activation(*args)


def test_tie_gradients_gives_zero_gradients_and_keeps_the_values():
    from torch_geometric_san.nn.functional import tie_gradients
    out = torch.randn(3, 2, requires_grad=True)
    weight = torch.randn(4, requires_grad=True)
    bad = torch.tensor([float('nan'), float('inf'), -float('inf')], requires_grad=True)
    empty = torch.zeros(0, 2, requires_grad=True)
    frozen = torch.randn(2)
    tied = tie_gradients(out, [weight, bad, empty, frozen])
    assert torch.equal(tied, out)  # (NaN and inf never reach the values)
    tied.sum().backward()
    assert torch.equal(out.grad, torch.ones(3, 2))
    for t in (weight, bad, empty):
        assert t.grad is not None and torch.equal(t.grad, torch.zeros_like(t))
    with torch.no_grad():
        assert tie_gradients(out, [weight]) is out
