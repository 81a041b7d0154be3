"""The propagation interface of the layers (torch_geometric_san.sparse.propagation)
against dense products, in each of its layouts."""
import pytest
import torch

from torch_geometric_san.sparse import SparseOperator
from torch_geometric_san.sparse.propagation import accumulate, polynomial, powers, sddmm

B, G = 2, 3  # signals, groups per signal


def random_operator(n=6, seed=0):
    torch.manual_seed(seed)
    dense = (torch.rand(n, n) < 0.5).double() * torch.randn(n, n, dtype=torch.float64)
    index = dense.nonzero().t().flip(0)  # [source; target] of dense[target, source]
    return SparseOperator.from_index(index, dense[index[1], index[0]], n)


def per_group_dense(op, value):
    # The dense matrix of each signal and group, [B, G, N, N], from values [nnz, B G].
    out = torch.zeros(B * G, *op.shape, dtype=value.dtype)
    out[:, op.index[1], op.index[0]] = value.t()
    return out.view(B, G, *op.shape)


def apply(dense, x):
    # dense [B, G, N, N] (or [N, N] for all) times signals [B, N, G, W].
    if dense.dim() == 2:
        return torch.einsum('ij,bjgw->bigw', dense, x)
    return torch.einsum('bgij,bjgw->bigw', dense, x)


# None: chosen by width; True: gathered; False: the block-diagonal operator.
@pytest.mark.parametrize('gather', [None, True, False])
@pytest.mark.parametrize('width', [1, 3])
def test_polynomial_and_powers_match_dense_products(gather, width):
    op = random_operator()
    N = op.shape[0]
    taps = [torch.randn(B, N, G, width, dtype=torch.float64) for _ in range(3)]
    per_group = torch.randn(op.nnz, B * G, dtype=torch.float64)
    for value, dense in ((None, op.to_dense()), (op.weight, op.to_dense()),
                         (per_group, per_group_dense(op, per_group))):
        # sum_p A^p H_p, and the powers A^(h p) X with h products each
        expected, power = torch.zeros_like(taps[0]), taps[0]
        for p, tap in enumerate(taps, start=1):
            for _ in range(p):
                tap = apply(dense, tap)
            expected = expected + tap
        assert torch.allclose(polynomial(op, value, taps, gather), expected)
        squares = powers(op, value, taps[0], 2, hops=2, gather=gather)
        for y in squares:
            power = apply(dense, apply(dense, power))
            assert y.shape == taps[0].shape and torch.allclose(y, power)


@pytest.mark.parametrize('gather', [None, True, False])
def test_sddmm_matches_dense_products(gather):
    op = random_operator(seed=1)
    N = op.shape[0]
    a, b = (torch.randn(B, N, G, 2, dtype=torch.float64) for _ in range(2))
    out = sddmm(op, a, b, gather)
    target, source = op.index[1], op.index[0]
    expected = (a[:, target] * b[:, source]).sum(-1)  # [B, nnz, G]
    assert out.shape == (op.nnz, B * G)
    assert torch.allclose(out, expected.permute(1, 0, 2).reshape(op.nnz, B * G))


def test_shapes_are_checked():
    op = random_operator()
    N = op.shape[0]
    with pytest.raises(ValueError, match=rf"expected signals \[B, {N}, G, W\], got "
                                         rf"\[{B}, {N + 1}, {G}, 1\]"):
        polynomial(op, None, [torch.randn(B, N + 1, G, 1, dtype=torch.float64)])
    with pytest.raises(ValueError, match=r"expected signals .* got \[6, 1\]"):
        powers(op, None, torch.randn(N, 1, dtype=torch.float64), 1)
    with pytest.raises(ValueError, match=rf"expected values \[{op.nnz}, {B * G}\] .one "
                                         rf"per entry, signal and group., got "
                                         rf"\[{op.nnz}, {B}\]"):
        powers(op, torch.randn(op.nnz, B, dtype=torch.float64),
               torch.randn(B, N, G, 1, dtype=torch.float64), 1)
    x = torch.randn(B, N, G, 2, dtype=torch.float64)
    # Each of these failed inside the function (an IndexError, an unpacking error),
    # or returned one power for num < 1.
    with pytest.raises(ValueError, match="at least one tap"):
        polynomial(op, None, [])
    with pytest.raises(ValueError, match=r"one shape, got \[\[2, 6, 3, 2\], \[2, 6, 3, 1\]\]"):
        polynomial(op, None, [x, x[..., :1]])
    for num, hops in ((0, 1), (1, 0)):
        with pytest.raises(ValueError, match="must be at least 1"):
            powers(op, None, x, num, hops)
    for a, b in ((x, x[..., :1]), (x[0], x[0]), (x[:, :-1], x)):
        with pytest.raises(ValueError, match=rf"expected a \[B, {N}, G, W\] and b"):
            sddmm(op, a, b)


def test_accumulate_adds_in_place_only_into_a_tensor_of_its_own():
    out, other = torch.ones(3), torch.full((3, ), 2.0)
    assert accumulate(out, other) is out and torch.equal(out, torch.full((3, ), 3.0))
    base = torch.ones(2, 3)
    view = base[0]
    total = accumulate(view, other)
    assert total is not view and torch.equal(total, torch.full((3, ), 3.0))
    assert torch.equal(base, torch.ones(2, 3))  # the view's base is left alone


@pytest.mark.parametrize('gather', [None, True, False])
def test_sddmm_of_an_operator_without_entries(gather):
    # (the block products' view(-1, 0) failed inside torch)
    op = SparseOperator.from_index(torch.zeros(2, 0, dtype=torch.long), torch.zeros(0), 3)
    a = torch.randn(2, 3, 2, 4)
    assert torch.equal(sddmm(op, a, a, gather=gather), torch.zeros(0, 4))


def test_numpy_integer_hops():
    # (check_int took np.int64 but the product refused it)
    np = pytest.importorskip('numpy')
    op = SparseOperator.from_index(torch.tensor([[0, 1], [1, 0]]), torch.ones(2), 2)
    x = torch.randn(1, 2, 1, 3)
    assert all(torch.equal(p, q) for p, q in zip(powers(op, None, x, 2, hops=np.int64(2)),
                                                 powers(op, None, x, 2, hops=2)))


def test_products_of_several_taps_or_powers_need_a_square_operator():
    # a filter of two taps failed inside torch; two powers named rows of 'x'
    op = SparseOperator.from_index(torch.tensor([[0, 1, 2], [0, 0, 1]]),
                                   torch.ones(3, dtype=torch.float64), (2, 3))
    x = torch.ones(1, 3, 1, 1, dtype=torch.float64)
    with pytest.raises(ValueError, match=r"a filter of 2 taps needs a square operator "
                                         r"\(shape \(2, 3\)\)"):
        polynomial(op, None, [x, x])
    with pytest.raises(ValueError, match="a filter of 2 taps needs a square operator"):
        polynomial(op, torch.ones(3, 1, dtype=torch.float64), [x, x], gather=False)
    with pytest.raises(ValueError, match="2 powers of 1 products needs a square"):
        powers(op, None, x, 2)
    with pytest.raises(ValueError, match="1 powers of 2 products needs a square"):
        powers(op, None, x, 1, hops=2)
    assert polynomial(op, None, [x]).shape == (1, 2, 1, 1)  # one product: any shape


def test_fixed_values_meet_signals_of_another_dtype():
    # as matmul does; the values were refused as if the caller had passed them
    op = random_operator()
    x = torch.randn(B, op.shape[0], G, 2, dtype=torch.float32)
    dense = op.to_dense()
    expected = apply(dense, x.double())
    torch.testing.assert_close(powers(op, None, x, 2)[1].double(),
                               apply(dense, expected), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(polynomial(op, None, [x]).double(), expected,
                               rtol=1e-5, atol=1e-5)
    pattern = SparseOperator.from_index(op.index, None, op.shape)
    with pytest.raises(ValueError, match="needs an operator with values"):
        polynomial(pattern, None, [x])
