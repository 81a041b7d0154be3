import copy
import io
import pickle

import pytest
import torch

from torch_geometric.loader import DataLoader

from torch_geometric_san.data import SimplicialComplexData
from torch_geometric_san.sparse import SimplicialOperators, SparseOperator, as_operators


def complex_(dtype=torch.float64):
    return SimplicialComplexData.from_simplices([[0, 1, 2], [1, 2, 3], [3, 4]],
                                                close=True, dtype=dtype)


@pytest.mark.parametrize('k', [0, 1, 2])
def test_operators_hold_every_operator_of_the_order(k):
    data = complex_()
    ops = data.operators(k)
    n = data.num_simplices(k)
    assert ops.num_simplices == n
    for name, method in (('up', data.up_laplacian), ('down', data.down_laplacian),
                         ('hodge', data.hodge_laplacian)):
        op = getattr(ops, name)
        assert op.shape == (n, n)
        index, weight = method(k)
        assert torch.equal(op.index, index) and torch.equal(op.weight, weight)
    # B_k [N_{k-1}, N_k] and B_{k+1}^T [N_{k+1}, N_k], against the stored ones.
    below = data.num_simplices(k - 1) if k > 0 else 0
    above = data.num_simplices(k + 1) if k < data.order else 0
    assert ops.boundary.shape == (below, n)
    assert ops.coboundary.shape == (above, n)
    if k > 0:
        index, weight = data.boundary(k)
        dense = torch.zeros(below, n, dtype=torch.float64)
        dense[index[0], index[1]] = weight
        assert torch.equal(ops.boundary.to_dense(), dense)
    if k < data.order:
        index, weight = data.boundary(k + 1)
        dense = torch.zeros(n, above, dtype=torch.float64)
        dense[index[0], index[1]] = weight
        assert torch.equal(ops.coboundary.to_dense(), dense.t())
    if 0 < k < data.order:  # B_k B_{k+1} = 0
        assert torch.all(ops.boundary.to_dense() @ ops.coboundary.to_dense().t() == 0)


def test_operators_of_a_batch_are_block_diagonal_with_each_complexs_scaling():
    first = complex_()
    second = SimplicialComplexData.from_simplices([[0, 1, 2], [0, 2, 3]],
                                                  close=True, dtype=torch.float64)
    batch = next(iter(DataLoader([first, second], batch_size=2)))
    ops = batch.operators(1)
    for name in ('up', 'down', 'hodge', 'boundary', 'coboundary'):
        expected = torch.block_diag(*[getattr(d.operators(1), name).to_dense()
                                      for d in (first, second)])
        assert torch.equal(getattr(ops, name).to_dense(), expected), name
    for name in ('up', 'down'):
        expected = torch.block_diag(*[getattr(d.operators(1), name).scaled().to_dense()
                                      for d in (first, second)])
        assert torch.allclose(getattr(ops, name).scaled().to_dense(), expected)
    # Each complex alone: its own largest eigenvalue.
    down = first.operators(1).down
    lam = torch.linalg.eigvalsh(down.to_dense())[-1]
    assert torch.allclose(down.scaled().to_dense(), down.to_dense() / lam)


def test_float64_operators_are_exact():
    # The normalised Hodge weights of a float64 complex: exact to float64.
    data = complex_(torch.float64)
    for k in range(3):
        hodge = data.operators(k)
        up, down = hodge.up.to_dense(), hodge.down.to_dense()
        laplacian = up + down
        lam = torch.linalg.eigvalsh(laplacian)[-1]
        assert torch.allclose(hodge.hodge.to_dense(), laplacian / lam, rtol=0,
                              atol=1e-15)


def test_operators_pickle_copy_save_and_move():
    ops = complex_().operators(1)
    ops.up.neighbourhood(True)  # a derived form
    for clone in (pickle.loads(pickle.dumps(ops)), copy.deepcopy(ops)):
        assert clone.up._cache == {}
        assert torch.equal(clone.boundary.to_dense(), ops.boundary.to_dense())
    buffer = io.BytesIO()
    torch.save(ops, buffer)
    buffer.seek(0)
    loaded = torch.load(buffer)  # weights_only=True, the default
    assert torch.equal(loaded.hodge.to_dense(), ops.hodge.to_dense())
    moved = ops.to(torch.float32)
    assert moved.up.weight.dtype == torch.float32
    assert repr(ops) == (f"SimplicialOperators(num_simplices=6, up={ops.up.nnz}, "
                         f"down={ops.down.nnz}, hodge={ops.hodge.nnz}, boundary=12, "
                         f"coboundary=6)")


def test_legacy_inputs_are_converted_and_checked():
    data = complex_()
    index, weight = data.up_laplacian(1)
    ops = as_operators(6, index, (weight, ), {})
    assert isinstance(ops, SimplicialOperators)
    assert ops.down is None and ops.hodge is None
    assert torch.equal(ops.up.to_dense(), data.operators(1).up.to_dense())
    with pytest.raises(ValueError, match="without 'down_index'"):
        SimplicialOperators.from_inputs(6, down_weight=data.down_laplacian(1)[1])
    with pytest.raises(ValueError, match="outside"):
        SimplicialOperators.from_inputs(4, *data.up_laplacian(1))
    with pytest.raises(TypeError, match="expected at most 6 operator arguments"):
        as_operators(6, index, (weight, ) * 6, {})
    with pytest.raises(TypeError, match=r"data.operators\(k\) of the complex, not "
                                        "the SimplicialComplexData itself"):
        as_operators(6, data, (), {})
    with pytest.raises(TypeError, match="no operators given"):
        as_operators(6, None, (), {})
    assert as_operators(6, None, (), {'up_index': None}).up is None  # absent by name


def test_reoriented_shares_the_operators_and_validates():
    data = SimplicialComplexData.from_simplices([[0, 1, 2], [1, 2, 3]], close=True)
    ops = data.operators(1)
    signs = torch.tensor([[1, -1, 1, 1, -1], [-1, 1, 1, 1, 1]])
    out = ops.reoriented(signs)
    assert out.up is ops.up and out.down is ops.down and out.hodge is ops.hodge
    assert ops.orientation is None and out.orientation is signs
    assert 'orientation=[2, 5]' in repr(out)
    assert out.reoriented(None).orientation is None
    assert torch.equal(out.to('cpu').orientation, signs)
    x = torch.randn(2, 5, 3)
    assert torch.equal(out.signs(x), signs.float().unsqueeze(-1))
    assert ops.signs(x) is None
    with pytest.raises(ValueError, match=r'shape \[B, 5\]'):
        ops.reoriented(torch.ones(5))
    with pytest.raises(ValueError, match=r'\+1 and -1'):
        ops.reoriented(torch.zeros(1, 5))
    with pytest.raises(TypeError, match='real tensor'):
        ops.reoriented(torch.ones(1, 5, dtype=torch.bool))
    with pytest.raises(TypeError, match='tensor or None'):
        ops.reoriented([[1] * 5])


@pytest.mark.parametrize('args, error, pattern', [
    (lambda op: (4, op), ValueError, r"'up' must have shape \[N_k, N_k\] = \[4, 4\] "
                                     r"for num_simplices=4, got \[3, 3\]"),
    (lambda op: (3, None, None, None,
                 SparseOperator(torch.zeros(2, 0, dtype=torch.long), None, (2, 4))),
     ValueError, r"'boundary' must have shape \[\*, N_k\] = \[2, 3\]"),
    (lambda op: (3, 'L'), TypeError, "'up' must be a SparseOperator or None, not str"),
    (lambda op: (3.0, op), TypeError, 'num_simplices must be an int, not float'),
    (lambda op: (-1, ), ValueError, 'num_simplices must be at least 0'),
])
def test_a_value_of_operators_that_do_not_fit_is_refused(assert_rejected, args, error,
                                                         pattern):
    # Before, the layers failed later on another operator's row count, or on an
    # attribute of a str.
    op = SparseOperator(torch.tensor([[0, 1, 2], [1, 2, 0]]), torch.ones(3), 3)
    assert_rejected(SimplicialOperators, args(op), {}, error, pattern)


def test_values_are_immutable():
    # data.operators(k) keeps its value, and every operator keeps its derived
    # forms: setting an attribute changed the value for every holder, and left
    # those forms stale (a new weight beside the old scaled and transposed ones).
    data = complex_()
    ops = data.operators(1)
    for target, name in ((ops, 'up'), (ops, 'orientation'), (ops.up, 'weight'),
                         (ops.up, 'index')):
        with pytest.raises(AttributeError, match=f"immutable .* setting '{name}'"):
            setattr(target, name, None)
    # nor are attributes added or deleted (a deleted index failed in the next layer)
    for target, name in ((ops, 'extra'), (ops.up, 'extra'), (ops, 'boundary')):
        with pytest.raises(AttributeError, match=f"immutable .* setting '{name}'"):
            setattr(target, name, None)
    for target, name in ((ops, 'up'), (ops.up, 'index'), (ops, 'extra')):
        with pytest.raises(AttributeError, match=f"immutable .* '{name}' cannot be "
                           "deleted"):
            delattr(target, name)
    assert data.operators(1) is ops and ops.up is not None and ops.up.index is not None
    reoriented = ops.reoriented(torch.ones(2, 6))  # new values still get theirs
    assert reoriented.orientation.shape == (2, 6) and ops.orientation is None


def test_from_transposed_boundary_checks_it():
    # (an operator of another size, or no operator, was accepted)
    boundary_t = SparseOperator.from_index(torch.tensor([[0], [0]]), torch.ones(1), (5, 2))
    with pytest.raises(ValueError, match="'boundary_t' must have shape \\[N_k, \\*\\] = "
                       "\\[3, \\*\\], got \\[5, 2\\]"):
        SimplicialOperators.from_transposed_boundary(3, boundary_t)
    with pytest.raises(TypeError, match="'boundary_t' must be a SparseOperator"):
        SimplicialOperators.from_transposed_boundary(3, 'B^T')
    ops = SimplicialOperators.from_transposed_boundary(5, boundary_t)
    assert ops.boundary.shape == (2, 5)
