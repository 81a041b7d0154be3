import copy as copy_module
import pickle

import numpy as np
import pytest
import torch

from torch_geometric.typing import WITH_TORCH_SPARSE, SparseTensor
from torch_geometric.utils import softmax

from torch_geometric_san.sparse import (SimplicialOperators, SparseOperator, segment_softmax,
                                        to_index_weight)


def random_operator(n=7, density=0.4, seed=0, symmetric=False):
    torch.manual_seed(seed)
    dense = (torch.rand(n, n) < density).double() * torch.randn(n, n, dtype=torch.float64)
    if symmetric:
        dense = dense + dense.t()
    index = dense.nonzero().t().flip(0)  # [source; target] of dense[target, source]
    return dense, index, dense[index[1], index[0]]


def test_matmul_and_sddmm_match_dense():
    dense, index, weight = random_operator()
    perm = torch.randperm(index.size(1))
    op = SparseOperator.from_index(index[:, perm], weight[perm], 7)
    x = torch.randn(7, 3, dtype=torch.float64)
    assert torch.allclose(op.matmul(x, op.weight), dense @ x)
    a = torch.randn(7, 3, dtype=torch.float64)
    expected = (a @ x.t())[op.index[1], op.index[0]]
    assert torch.allclose(op.sddmm(a, x), expected)


def test_grouped_products_match_each_group_alone():
    dense, index, _ = random_operator(seed=2)
    op = SparseOperator.from_index(index, None, 7)
    value = torch.randn(op.nnz, 3, dtype=torch.float64, requires_grad=True)
    x = torch.randn(7, 2, 3, dtype=torch.float64, requires_grad=True)  # [N, F, G]
    a = torch.randn(7, 2, 3, dtype=torch.float64)
    out, score = op.matmul_grouped(value, x), op.sddmm_grouped(a, x)
    assert out.shape == (7, 2, 3) and score.shape == (op.nnz, 3)
    for g in range(3):
        assert torch.allclose(out[:, :, g], op.matmul(x[:, :, g], value[:, g]))
        assert torch.allclose(score[:, g], op.sddmm(a[:, :, g], x[:, :, g]))
    assert torch.autograd.gradcheck(op.matmul_grouped, (value, x))
    assert torch.autograd.gradcheck(op.sddmm_grouped, (a.requires_grad_(), x))


def test_gradients_and_double_backward():
    _, index, weight = random_operator(seed=1)
    op = SparseOperator.from_index(index, weight, 7)
    value = op.weight.clone().requires_grad_()
    x = torch.randn(7, 2, dtype=torch.float64, requires_grad=True)
    a = torch.randn(7, 2, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda v, x: op.matmul(x, v), (value, x))
    assert torch.autograd.gradgradcheck(lambda v, x: op.matmul(x, v), (value, x))
    assert torch.autograd.gradcheck(op.sddmm, (a, x))
    assert torch.autograd.gradgradcheck(op.sddmm, (a, x))


@pytest.mark.parametrize('trainable', [False, True])
def test_matmul_powers(trainable):
    dense, index, weight = random_operator(seed=3)
    op = SparseOperator.from_index(index, weight, 7)
    value = op.weight.clone().requires_grad_(trainable)
    x = torch.randn(7, 2, dtype=torch.float64, requires_grad=True)
    out = op.matmul(x, value, hops=3)
    assert torch.allclose(out, torch.linalg.matrix_power(dense, 3) @ x)
    grad = torch.randn_like(out)
    expected = torch.linalg.matrix_power(dense.t(), 3) @ grad
    assert torch.allclose(torch.autograd.grad(out, x, grad)[0], expected)
    inputs = (value, x) if trainable else (x, )
    fn = ((lambda v, x: op.matmul(x, v, hops=3)) if trainable else
          (lambda x: op.matmul(x, value, hops=3)))
    assert torch.autograd.gradcheck(fn, inputs)
    assert torch.autograd.gradgradcheck(fn, inputs)
    assert op.matmul(x, value, hops=0) is x
    with pytest.raises(ValueError, match="'hops' must be an int >= 0"):
        op.matmul(x, value, hops=-1)


@pytest.mark.parametrize('groups', [(), (3, ), (2, 2)])
def test_segment_softmax_matches_pyg(groups):
    torch.manual_seed(0)
    index = torch.tensor([0, 0, 0, 2, 2, 3, 5, 5, 5, 5])  # rows 1 and 4 empty
    src = 10 * torch.randn(index.numel(), *groups, dtype=torch.float64)
    src.requires_grad_()
    out = segment_softmax(src, index, 6)
    expected = softmax(src, index, num_nodes=6)
    assert torch.allclose(out, expected)
    sums = torch.zeros(6, *groups, dtype=torch.float64).index_add_(0, index, out)
    assert torch.allclose(sums[[0, 2, 3, 5]], torch.ones_like(sums[[0, 2, 3, 5]]))
    grad = torch.randn_like(out)
    assert torch.allclose(torch.autograd.grad(out, src, grad)[0],
                          torch.autograd.grad(expected, src, grad)[0])
    assert torch.autograd.gradcheck(lambda s: segment_softmax(s, index, 6), (src, ))
    assert torch.autograd.gradgradcheck(lambda s: segment_softmax(s, index, 6), (src, ))


@pytest.mark.parametrize('index,num_nodes,error,match', [
    # (torch's scatter failed deep inside, or read -1 as the last row)
    ([0, 3], 3, ValueError, 'index holds rows outside \\[0, 3\\) \\(found 0 to 3\\)'),
    ([-1, 0], 3, ValueError, 'index holds rows outside \\[0, 3\\) \\(found -1 to 0'),
    ([0, 1], 2.0, TypeError, 'num_nodes must be an int'),
    ([0, 1], -1, ValueError, 'num_nodes must be at least 0'),
])
def test_segment_softmax_refuses_rows_out_of_range(index, num_nodes, error, match):
    with pytest.raises(error, match=match):
        segment_softmax(torch.randn(2), torch.tensor(index), num_nodes)


@pytest.mark.parametrize('backend', ['eager', 'aot_eager'])
def test_segment_softmax_under_torch_compile(backend):
    # Its eager forward works in place on the tensor it saves for the backward;
    # traced by Dynamo (torch 2.11) that gave wrong gradients with the right output.
    torch._dynamo.reset()
    torch.manual_seed(0)
    index = torch.tensor([0, 0, 0, 2, 2, 3, 5, 5, 5, 5])
    src = torch.randn(index.numel(), 2, dtype=torch.float64, requires_grad=True)
    grad = torch.randn_like(src)
    expected = torch.autograd.grad(segment_softmax(src, index, 6), src, grad)[0]
    compiled = torch.compile(lambda s: segment_softmax(s, index, 6), backend=backend)
    out = compiled(src)
    assert torch.allclose(out, segment_softmax(src, index, 6))
    assert torch.allclose(torch.autograd.grad(out, src, grad)[0], expected)


def test_segment_softmax_leaves_its_input_alone():
    src = torch.tensor([1.0, 2.0, 3.0])
    segment_softmax(src, torch.tensor([0, 0, 1]), 2)
    assert src.tolist() == [1.0, 2.0, 3.0]


@pytest.mark.parametrize('index', [torch.tensor([0, 1]), torch.tensor([[0, 0, 1]]),
                                   torch.tensor([0., 0., 1.])])
def test_segment_softmax_refuses_a_mismatched_index(index):
    with pytest.raises(ValueError, match='one row per entry of src'):
        segment_softmax(torch.randn(3), index, 2)


def test_segment_softmax_refuses_what_is_not_a_tensor():
    # (an AttributeError inside the check of the index)
    with pytest.raises(TypeError, match="'src' must be a tensor, not list"):
        segment_softmax([1.0, 2.0], torch.tensor([0, 0]), 1)
    with pytest.raises(TypeError, match="'index' must be a tensor, not list"):
        segment_softmax(torch.ones(2), [0, 0], 1)


def test_segment_softmax_refuses_sparse_and_split_operands():
    # (they failed inside ATen's sparse kernels, or its index_add)
    with pytest.raises(TypeError, match="'src' must be a dense tensor, not torch.sparse_coo"):
        segment_softmax(torch.randn(3).to_sparse(), torch.tensor([0, 0, 1]), 2)
    with pytest.raises(TypeError, match="'index' must be a dense tensor"):
        segment_softmax(torch.randn(3), torch.tensor([0, 0, 1]).to_sparse(), 2)
    with pytest.raises(ValueError, match="'src' is on meta but 'index' on cpu"):
        segment_softmax(torch.randn(3, device='meta'), torch.tensor([0, 0, 1]), 2)


def test_attention_refuses_sparse_scores():
    # (it failed inside the kernels: "unsupported memory format option")
    op = SparseOperator.from_index(torch.tensor([[0, 1], [1, 0]]), None, 2)
    with pytest.raises(ValueError, match="'score' must be a dense floating-point tensor"):
        op.attention(0.2, score=torch.randn(2, 1).to_sparse())


def test_segment_softmax_refuses_integer_scores():
    # They failed in torch's division ("result type Float can't be cast to Long").
    with pytest.raises(TypeError, match="floating-point scores src, got torch.int64"):
        segment_softmax(torch.ones(3, dtype=torch.long), torch.tensor([0, 0, 1]), 2)


@pytest.mark.parametrize('index, match', [
    ([[0, 1, 0], [0, 1, 50]], "outside its shape"),  # a target past the rows
    ([[0, 7, 0], [0, 0, 1]], "outside its shape"),  # a source past the columns
    ([[0, -1, 0], [0, 0, 1]], "outside its shape"),
    ([[0, 1, 0], [1, 0, 1]], "not sorted by target"),
])
def test_the_compressed_rows_check_what_the_constructor_trusts(index, match):
    # The constructor takes its entries as they are; the compressed rows that the
    # products rest on wrote outside their arrays for the first three (glibc
    # aborted the interpreter) and were wrong for the last.
    op = SparseOperator(torch.tensor(index), torch.ones(3), 2)
    with pytest.raises(ValueError, match=match + ".*SparseOperator.from_index"):
        op.matmul(torch.randn(2, 3))


@pytest.mark.parametrize('kernels', ['1', '0'])
@pytest.mark.parametrize('index, match', [
    ([[0, 2], [0, 1]], "outside its shape"),
    ([[0, 1], [1, 0]], "not sorted by target"),
])
def test_the_grouped_products_check_the_entries_on_every_path(kernels, index, match,
                                                              monkeypatch):
    # The gathering products (no compiled kernels: elsewhere than on the CPU,
    # under torch.compile, TGSAN_COMPILED_KERNELS=0) took the entries unchecked:
    # an IndexError inside torch, or no error at all, where the kernels refuse them.
    monkeypatch.setenv('TGSAN_COMPILED_KERNELS', kernels)
    calls = {
        'matmul_grouped': lambda op: op.matmul_grouped(torch.ones(2, 1),
                                                       torch.ones(2, 1, 1)),
        'sddmm_grouped': lambda op: op.sddmm_grouped(torch.ones(2, 1, 1),
                                                     torch.ones(2, 1, 1)),
        'attention': lambda op: op.attention(0.2, score=torch.ones(2, 1)),
    }
    for call in calls.values():
        op = SparseOperator(torch.tensor(index), None, 2)
        with pytest.raises(ValueError, match=match):
            call(op)


@pytest.mark.parametrize('index', [[[1], [0]], [[0], [1]]])
def test_scaled_refuses_an_operator_that_is_not_symmetric(index):
    # Its eigenvalue solvers assume a symmetric matrix: [[0, 2], [0, 0]] came back
    # unchanged and its transpose halved (both nilpotent), and larger ones ran
    # Lanczos for thousands of steps into a misleading convergence error.
    op = SparseOperator.from_index(torch.tensor(index), torch.tensor([2.0]), 2)
    with pytest.raises(ValueError, match="needs a symmetric .* not symmetric"):
        op.scaled()
    # A symmetric operator whose values round differently is still taken.
    sym = SparseOperator.from_index(torch.tensor([[1, 0], [0, 1]]),
                                    torch.tensor([0.1 + 0.2, 0.3], dtype=torch.float64), 2)
    assert torch.allclose(sym.scaled().weight, torch.ones(2, dtype=torch.float64))


@pytest.mark.parametrize('first', ['grad', 'no_grad'])
def test_forms_of_learnable_values_are_not_kept(first):
    # A kept form of values that autograd tracks carried one step's graph into the
    # next ("Trying to backward through the graph a second time"), or, made under
    # no_grad, no graph at all (no gradient reached the values).
    index = torch.tensor([[0, 1, 0, 1], [0, 0, 1, 1]])
    weight = torch.tensor([2.0, -1.0, -1.0, 2.0], requires_grad=True)
    op = SparseOperator.from_index(index, weight, 2)
    x = torch.randn(2, 3)
    grads = []
    for step in range(3):
        with torch.set_grad_enabled(first == 'grad' or step > 0):
            out = op.shifted(0.5).matmul(x) + op.scaled().matmul(x) + op.t().matmul(x)
        if out.requires_grad:
            weight.grad = None
            out.sum().backward()
            grads.append(weight.grad.clone())
    assert len(grads) >= 2 and all(torch.equal(g, grads[0]) for g in grads)
    assert grads[0].abs().sum() > 0
    assert 'structure' in op._cache  # the pattern's forms are still kept
    assert not {'scaled', 't', 't_weight', ('shifted', 0.5)} & set(op._cache)


def test_forms_kept_before_the_values_turned_learnable_are_not_used():
    # requires_grad_() in place after a form was kept: the kept form (no graph) was
    # given, and the values got no gradient.
    index = torch.tensor([[0, 1, 0, 1], [0, 0, 1, 1]])
    weight = torch.tensor([2.0, -1.0, -1.0, 2.0])
    op = SparseOperator.from_index(index, weight, 2)
    x = torch.randn(2, 3)
    op.scaled().matmul(x) + op.t().matmul(x)  # kept: the values are constant
    assert {'scaled', 't'} <= set(op._cache)
    weight.requires_grad_()
    (op.scaled().matmul(x) + op.t().matmul(x)).sum().backward()
    assert weight.grad is not None and weight.grad.abs().sum() > 0


def test_from_index_sorts_and_sums_duplicates():
    index = torch.tensor([[2, 0, 2, 1], [1, 0, 1, 2]])
    op = SparseOperator.from_index(index, torch.tensor([1., 2., 3., 4.]), 3)
    assert op.index.tolist() == [[0, 2, 1], [0, 1, 2]]
    assert op.weight.tolist() == [2., 4., 4.]
    assert op.structure()[0].tolist() == [0, 1, 2, 3]
    sorted_index = op.index.clone()
    again = SparseOperator.from_index(sorted_index, op.weight, 3)
    assert again.index.data_ptr() == sorted_index.data_ptr()  # no copy when sorted


def test_neighbourhood():
    # Row 0: diagonal and two neighbours; row 1: neighbour with weight 0 only;
    # row 2: diagonal only; row 3: neighbours but no diagonal; row 4: empty.
    index = torch.tensor([[0, 1, 2, 0, 2, 0, 1], [0, 0, 0, 1, 2, 3, 3]])
    weight = torch.tensor([2., -1., 1., 0., 3., 1., -1.])
    op = SparseOperator.from_index(index, weight, 5)
    with_loops = op.neighbourhood(self_loops=True)
    assert with_loops.index.tolist() == [[0, 1, 2, 2, 0, 1, 3], [0, 0, 0, 2, 3, 3, 3]]
    assert with_loops.weight.tolist() == [1., -1., 1., 1., 1., -1., 1.]
    without = op.neighbourhood(self_loops=False)
    assert without.index.tolist() == [[1, 2, 0, 1], [0, 0, 3, 3]]
    assert without.weight.tolist() == [-1., 1., 1., -1.]
    assert op.neighbourhood(True).index.tolist() == with_loops.index.tolist()


def test_abs_keeps_the_pattern_and_shares_the_compressed_rows():
    dense, index, weight = random_operator(seed=3)
    op = SparseOperator.from_index(index, weight, dense.shape[0])
    unsigned = op.abs()
    assert torch.equal(unsigned.to_dense(), dense.abs()) and unsigned is op.abs()
    assert unsigned.structure() is op.structure() and unsigned.eigenvalue is None
    with pytest.raises(ValueError, match="abs\\(\\) needs an operator with values"):
        SparseOperator.from_index(index, None, dense.shape[0]).abs()


@pytest.mark.parametrize('derive', [lambda op: op.shifted(0.5),
                                    lambda op: op.neighbourhood(True),
                                    lambda op: op.to_dense(), lambda op: op.scaled(),
                                    lambda op: SparseOperator(
                                        op.index, op.weight, 3,
                                        torch.ones(3)).scaled()])
def test_derived_operators_check_the_entries_first(derive):
    # shifted() coalesced the entry (1, -1) onto (1, 2) (id modulo the size), and
    # to_dense() put it there: a value in the wrong place, where the products raise;
    # scaled() failed inside SciPy (or read the eigenvalue of row -1).
    op = SparseOperator(torch.tensor([[0, -1, 2], [0, 1, 2]]),
                        torch.tensor([1.0, 5.0, 1.0]), 3)
    with pytest.raises(ValueError, match="entries outside its shape \\(3, 3\\)"):
        derive(op)


def test_shifted_and_expand():
    x = torch.randn(7, 2, dtype=torch.float64)
    eye = torch.eye(7, dtype=torch.float64)
    for full_diagonal in (False, True):
        dense, index, weight = random_operator(seed=2, symmetric=True)
        if full_diagonal:
            dense = dense + 5 * eye
            index = dense.nonzero().t().flip(0)
            weight = dense[index[1], index[0]]
        op = SparseOperator.from_index(index, weight, 7)
        shifted = op.shifted(0.3)
        assert torch.allclose(shifted.matmul(x, shifted.weight), (eye - 0.3 * dense) @ x)
        assert (shifted.index.size(1) == op.nnz) == full_diagonal
    dense, index, weight = random_operator(seed=2, symmetric=True)
    op = SparseOperator.from_index(index, weight, 7)
    block = op.expand(3)
    assert op.expand(3) is block and op.expand(1) is op
    values = torch.randn(3, op.nnz, dtype=torch.float64)
    xs = torch.randn(3, 7, 2, dtype=torch.float64)
    out = block.matmul(xs.view(21, 2), values.view(-1)).view(3, 7, 2)
    for g in range(3):
        assert torch.allclose(out[g], op.matmul(xs[g], values[g]))
    values.requires_grad_()
    xs.requires_grad_()
    assert torch.autograd.gradcheck(lambda v, x: block.matmul(x.view(21, 2), v.view(-1)),
                                    (values, xs))


def test_empty_operator():
    op = SparseOperator.from_index(torch.empty(2, 0, dtype=torch.long), None, 4)
    x = torch.randn(4, 3, requires_grad=True)
    out = op.matmul(x, torch.empty(0))
    assert torch.equal(out, torch.zeros(4, 3))
    out.sum().backward()
    assert torch.equal(x.grad, torch.zeros(4, 3))


def test_to_index_weight():
    _, index, weight = random_operator(seed=3)
    adj_t = torch.sparse_coo_tensor(index.flip(0), weight, (7, 7), check_invariants=True)
    for sparse in (adj_t, adj_t.to_sparse_csr()):
        out_index, out_weight = to_index_weight(sparse)
        assert torch.equal(SparseOperator.from_index(out_index, out_weight, 7).index,
                           SparseOperator.from_index(index, weight, 7).index)
    assert to_index_weight(index, weight) == (index, weight)
    with pytest.raises(ValueError, match="carries its own values"):
        to_index_weight(adj_t, weight)
    with pytest.raises(TypeError, match="index tensor"):
        to_index_weight([[0], [1]])


def test_to_index_weight_leaves_an_uncoalesced_operator_alone():
    # PyG's to_edge_index flagged the caller's tensor as coalesced, so torch.sparse
    # no longer summed its duplicate entries (A * A gave 5 where 9 is right)
    def make():
        return torch.sparse_coo_tensor(torch.tensor([[0, 1, 0, 1], [0, 0, 1, 0]]),
                                       torch.tensor([1., 1., 3., 2.]), (2, 2))
    adj_t = make()
    index, weight = to_index_weight(adj_t)
    assert not adj_t.is_coalesced()
    assert torch.equal((adj_t * adj_t).to_dense(), (make() * make()).to_dense())
    assert torch.equal(SparseOperator.from_index(index, weight, 2).to_dense(),
                       make().to_dense())


@pytest.mark.skipif(not WITH_TORCH_SPARSE, reason="torch_sparse is not installed "
                    "(or blocked by TGSAN_WITHOUT_EXTENSIONS=1)")
def test_to_index_weight_from_sparse_tensor():
    _, index, weight = random_operator(seed=4)
    adj_t = SparseTensor(row=index[1], col=index[0], value=weight, sparse_sizes=(7, 7))
    out_index, out_weight = to_index_weight(adj_t)
    op = SparseOperator.from_index(out_index, out_weight, 7)
    expected = SparseOperator.from_index(index, weight, 7)
    assert torch.equal(op.index, expected.index)
    assert torch.equal(op.weight, expected.weight)


def test_invalid_operators():
    index = torch.tensor([[0, 1], [1, 0]])
    with pytest.raises(TypeError, match="torch.long"):
        SparseOperator.from_index(index.float(), None, 2)
    with pytest.raises(ValueError, match=r"\[2, nnz\]"):
        SparseOperator.from_index(index.view(1, -1), None, 2)
    with pytest.raises(ValueError, match="outside"):
        SparseOperator.from_index(index, None, 1)
    with pytest.raises(ValueError, match="outside"):
        SparseOperator.from_index(-index, None, 2)
    with pytest.raises(TypeError, match="floating-point"):
        SparseOperator.from_index(index, torch.tensor([1, 2]), 2)
    with pytest.raises(ValueError, match="weight of shape"):
        SparseOperator.from_index(index, torch.ones(3), 2)
    with pytest.raises(ValueError, match="NaN or infinite"):
        SparseOperator.from_index(index, torch.tensor([1., float('nan')]), 2)
    # An operator given where an index is accepted is taken as it is, or refused.
    op = SparseOperator.from_index(index, None, 2)
    assert SparseOperator.from_adj(op, None, 2) is op
    with pytest.raises(ValueError, match="carries its own values"):
        SparseOperator.from_adj(op, torch.ones(2), 2)
    with pytest.raises(ValueError, match=r"has shape \(2, 2\) but x needs \(3, 3\)"):
        SparseOperator.from_adj(op, None, 3)
    # Derived forms check their arguments (before: torch.arange's error, or
    # float()'s without the argument's name).
    weighted = SparseOperator.from_index(index, torch.ones(2), 2)
    with pytest.raises(ValueError, match="'groups' must be at least 0, got -1"):
        op.expand(-1)
    with pytest.raises(TypeError, match="'groups' must be an int, not float"):
        op.expand(2.0)
    with pytest.raises(TypeError, match="'eps' must be a real number, not str"):
        weighted.shifted('0.9')
    with pytest.raises(ValueError, match="'eps' must be finite"):
        weighted.shifted(float('inf'))
    with pytest.raises(TypeError, match="'self_loops' must be True or False"):
        weighted.neighbourhood('yes')
    # Entries of another length were read silently (the first nnz of five).
    with pytest.raises(ValueError, match="'value' must hold the operator's 2 entries"):
        weighted.transpose_values(torch.ones(5))
    with pytest.raises(ValueError, match="'t_value' must be transpose_values"):
        weighted.matmul(torch.ones(2, 3), torch.ones(2), t_value=torch.ones(5))
    # Operands of different widths failed in torch's sampled_addmm.
    with pytest.raises(ValueError, match="'a' and 'b' must have the same width"):
        weighted.sddmm(torch.ones(2, 3), torch.ones(2, 4))
    # A negative size made an operator of shape (-1, -1); other shapes failed in
    # tuple unpacking.
    empty = torch.zeros(2, 0, dtype=torch.long)
    assert SparseOperator.from_index(empty, None, (0, 3)).shape == (0, 3)
    for shape, error, match in ((-1, ValueError, "rows must be at least 0, got -1"),
                                ((2, -3), ValueError, "columns must be at least 0"),
                                (2.0, TypeError, "rows must be an int, not float"),
                                ((1, 2, 3), ValueError, r"n or \(rows, cols\), got")):
        with pytest.raises(error, match=match):
            SparseOperator.from_index(empty, None, shape)
    with pytest.raises(TypeError, match="rows must be an int, not NoneType"):
        SparseOperator.from_adj(index, None, None)
    # Integer values made an operator that no product takes.
    for move in (lambda: weighted.to(torch.long), lambda: weighted.to(dtype=torch.int32)):
        with pytest.raises(TypeError, match="must be floating-point, got torch.int"):
            move()
    assert weighted.to('cpu', torch.float64).weight.dtype == torch.float64
    # A tensor's device and dtype (Tensor.to(other)) made the index float.
    moved = weighted.to(torch.zeros(1, dtype=torch.float64))
    assert moved.index.dtype == torch.long and moved.weight.dtype == torch.float64
    with pytest.raises(TypeError, match="must be floating-point, got torch.int64"):
        weighted.to(torch.zeros(1, dtype=torch.long))
    # (accepted; its products and derived forms failed inside torch)
    with pytest.raises(TypeError, match="must be floating-point, got "
                                        "torch.float8_e4m3fn"):
        weighted.to(torch.float8_e4m3fn)


def test_rectangular_operator_and_its_transpose():
    torch.manual_seed(0)
    index = torch.tensor([[0, 2, 1, 3, 0], [0, 0, 1, 2, 2]])  # 3 x 4
    weight = torch.randn(5, dtype=torch.float64)
    op = SparseOperator.from_index(index, weight, (3, 4))
    dense = op.to_dense()
    assert dense.shape == (3, 4)
    t = op.t()
    assert t.shape == (4, 3) and op.t() is t  # derived once
    # (the transpose keeps no link back to op: the pair would be a reference cycle)
    assert torch.equal(t.t().to_dense(), dense) and t.t() is t.t()
    assert torch.equal(t.to_dense(), dense.t())
    x = torch.randn(4, 2, dtype=torch.float64, requires_grad=True)
    assert torch.allclose(op.matmul(x), dense @ x)
    assert torch.autograd.gradcheck(lambda x: op.matmul(x, weight), (x, ))
    y = torch.randn(3, 2, dtype=torch.float64)
    assert torch.allclose(t.matmul(y), dense.t() @ y)
    with pytest.raises(ValueError, match="square"):
        op.shifted(0.5)
    with pytest.raises(ValueError, match="source entries outside"):
        SparseOperator.from_index(index, weight, (4, 3))


def test_products_check_their_operands():
    # A 3 x 4 operator: a wrong number of rows gave a silent product or failed
    # deep inside torch; fixed values meet a signal of another dtype in its dtype.
    index = torch.tensor([[0, 2, 1, 3, 0], [0, 0, 1, 2, 2]])
    op = SparseOperator.from_index(index, torch.randn(5), (3, 4))
    x = torch.randn(4, 2, dtype=torch.float64)
    assert torch.allclose(op.matmul(x), op.to_dense().double() @ x)
    with pytest.raises(ValueError, match="'x' must have 4 rows"):
        op.matmul(torch.randn(3, 2))
    for bad, got in ((torch.randn(4), 'a 1-D torch.float32 tensor'),
                     (torch.ones(4, 2, dtype=torch.long), 'a 2-D torch.int64 tensor'),
                     ([[1.0, 2.0]] * 4, 'list')):
        with pytest.raises(ValueError, match=f"'x' must be a dense 2-D floating-point "
                                             f"tensor .got {got}"):
            op.matmul(bad)
    for hops in (0, 2):  # (A^0 X = X gave X with the columns' count of rows)
        with pytest.raises(ValueError, match=f"'hops' = {hops} needs a square operator"):
            op.matmul(torch.randn(4, 2), hops=hops)
    with pytest.raises(ValueError, match="'value' must hold the 5 entries in the "
                                         "dtype of 'x', torch.float32 .got a "
                                         "torch.float32 tensor of shape .3."):
        op.matmul(torch.randn(4, 2), torch.randn(3))
    with pytest.raises(ValueError, match="got a torch.float64 tensor of shape .5."):
        op.matmul(torch.randn(4, 2), torch.randn(5, dtype=torch.float64))
    with pytest.raises(ValueError, match="'a' must have 3 rows"):
        op.sddmm(torch.randn(4, 2), torch.randn(4, 2))
    with pytest.raises(ValueError, match="'b' must have 4 rows"):
        op.sddmm(torch.randn(3, 2), torch.randn(3, 2))
    with pytest.raises(ValueError, match="'x' must be a dense 3-D"):
        op.matmul_grouped(torch.randn(5, 2), torch.randn(4, 2))
    with pytest.raises(ValueError, match="'x' must have 4 rows"):
        op.matmul_grouped(torch.randn(5, 2), torch.randn(5, 1, 2))
    with pytest.raises(ValueError, match="'a' must have 3 rows"):
        op.sddmm_grouped(torch.randn(4, 1, 2), torch.randn(4, 1, 2))


def test_scaled_by_the_eigenvalue_of_each_block():
    # Two blocks with different largest eigenvalues: given per row, each block
    # is scaled by its own; else by the largest of the whole operator.
    index = torch.tensor([[0, 1, 0, 1, 2, 3, 2, 3], [0, 0, 1, 1, 2, 2, 3, 3]])
    weight = torch.tensor([1., -1., -1., 1., 2., 2., 2., 2.], dtype=torch.float64)
    lam = torch.tensor([2., 2., 4., 4.], dtype=torch.float64)
    per_block = SparseOperator(index, weight, 4, eigenvalue=lam).scaled()
    dense = SparseOperator(index, weight, 4).to_dense()
    assert torch.allclose(per_block.to_dense(), dense / lam.view(-1, 1))
    whole = SparseOperator(index, weight, 4).scaled()
    assert torch.allclose(whole.to_dense(), dense / 4.0)
    empty = SparseOperator(index[:, :0], weight[:0], 4)
    assert empty.scaled().nnz == 0


def test_derived_forms_are_kept_and_dropped_by_pickling():
    index = torch.tensor([[1, 0, 2, 1], [0, 1, 1, 2]])
    op = SparseOperator.from_index(index, torch.tensor([-1., -1., 1., 1.]), 3)
    neighbourhood = op.neighbourhood(True)
    assert op.neighbourhood(True) is neighbourhood
    assert op.shifted(0.5) is op.shifted(0.5)
    copy = pickle.loads(pickle.dumps(op))
    assert copy._cache == {}
    assert torch.equal(copy.index, op.index) and torch.equal(copy.weight, op.weight)
    assert torch.equal(copy.neighbourhood(True).index, neighbourhood.index)
    deep = copy_module.deepcopy(op)
    assert deep._cache == {} and torch.equal(deep.shifted(0.5).weight,
                                              op.shifted(0.5).weight)
    moved = op.to(torch.float64)
    assert moved.weight.dtype == torch.float64 and moved.index.dtype == torch.long


def test_transpose_of_a_batch_keeps_the_eigenvalues_of_its_blocks():
    # scaled() on the transpose divided every block by the largest eigenvalue
    from torch_geometric.data import Batch
    from torch_geometric_san.data import SimplicialComplexData
    first = SimplicialComplexData.from_simplices([[0, 1, 2]], close=True)
    second = SimplicialComplexData.from_simplices([[0, 1]], close=True, order=2)
    up = Batch.from_data_list([first, second]).operators(0).up
    assert torch.equal(up.t().eigenvalue, up.eigenvalue)
    assert torch.allclose(up.t().scaled().to_dense(), up.scaled().to_dense().t())
    wide = SparseOperator.from_index(torch.tensor([[0], [1]]), torch.ones(1), (3, 2))
    assert wide.t().eigenvalue is None


@pytest.mark.parametrize('dtype', [torch.float16, torch.bfloat16])
def test_products_refuse_half_precision_on_the_cpu(dtype):
    # (torch's compressed-row kernels failed deep inside)
    op = SparseOperator.from_index(torch.tensor([[0, 1], [1, 0]]), torch.ones(2), 2)
    x = torch.ones(2, 3, dtype=dtype)
    with pytest.raises(TypeError, match=f"{dtype} is not supported on the CPU by the "
                       "sparse products"):
        op.to(dtype).matmul(x)
    with pytest.raises(TypeError, match='not supported on the CPU by the sparse products'):
        op.sddmm(x, x)


def test_matmul_hops_of_numpy_and_bool():
    op = SparseOperator.from_index(torch.tensor([[0, 1], [1, 0]]), torch.ones(2), 2)
    x = torch.randn(2, 3)
    assert torch.equal(op.matmul(x, hops=np.int64(2)), op.matmul(x, hops=2))
    with pytest.raises(ValueError, match="'hops' must be an int >= 0 \\(got True\\)"):
        op.matmul(x, hops=True)  # (taken as one hop before)


def test_a_non_contiguous_index_gives_the_same_products():
    # An index written the usual way, torch.tensor(pairs).t(), is a view with
    # strides (1, 2): the compressed rows read its memory as if it were laid out
    # row by row, and gave wrong products (or wrote outside their arrays).
    pairs = torch.tensor([[0, 0], [6, 0], [2, 2], [5, 3]])  # (source, target)
    weight = torch.tensor([1., 2., 3., 4.])
    x = torch.arange(7.).view(-1, 1)
    dense = torch.zeros(4, 7)
    dense[pairs[:, 1], pairs[:, 0]] = weight
    for op in (SparseOperator(pairs.t(), weight, (4, 7)),
               SparseOperator.from_index(pairs.t(), weight, (4, 7))):
        assert torch.equal(op.matmul(x), dense @ x)
        assert torch.equal(op.t().matmul(torch.ones(4, 1)), dense.t() @ torch.ones(4, 1))


@pytest.mark.parametrize('slope', [1.5, -2.0])
def test_a_slope_outside_minus_one_one_is_refused(slope):
    # The LeakyReLU of a clamped overflowing score then overflowed again: NaN.
    from torch_geometric_san.nn import SANConv
    op = SparseOperator.from_index(torch.tensor([[0, 1], [0, 0]]), None, 2)
    with pytest.raises(ValueError, match=r"negative_slope must lie in \[-1, 1\]"):
        op.attention(slope, score=torch.tensor([[float('inf')], [1.0]]))
    with pytest.raises(ValueError, match=r"negative_slope must lie in \[-1, 1\]"):
        SANConv(3, 4, negative_slope=slope)
    alpha = op.attention(-1.0, score=torch.tensor([[-float('inf')], [-float('inf')]]))
    assert torch.isfinite(alpha).all()


def test_complex_and_non_matrix_torch_sparse_operators_are_refused():
    # Complex values were cast to real (their imaginary part dropped); a 1-D
    # sparse tensor failed with an IndexError inside the error message.
    index = torch.tensor([[0, 1], [1, 0]])
    with pytest.raises(TypeError, match="values are complex"):
        to_index_weight(torch.sparse_coo_tensor(index, torch.tensor([1 + 2j, 3 - 1j]),
                                                (2, 2)))
    with pytest.raises(ValueError, match="must be a matrix .* got shape \\[3\\]"):
        SparseOperator.from_adj(torch.sparse_coo_tensor(torch.tensor([[0, 1]]),
                                                        torch.ones(2), (3, )), None, 3)


def test_a_block_sparse_operator_is_refused_by_name():
    # (it was taken for an index: "expected a torch.long index ... got float32")
    bsr = torch.eye(4).to_sparse_bsr((2, 2))
    with pytest.raises(TypeError, match="layout torch.sparse_bsr is not taken"):
        to_index_weight(bsr)


def test_values_that_are_not_tensors_are_refused():
    # (an AttributeError inside the check before)
    op = SparseOperator.from_index(torch.tensor([[0, 1], [1, 0]]), torch.ones(2), 2)
    with pytest.raises(ValueError, match="'value' must hold the 2 entries .* an object "
                                         "of type list"):
        op.matmul(torch.ones(2, 1), value=[1.0, 2.0])
    with pytest.raises(ValueError, match="'value' must hold 2 entries of 3 groups .* "
                                         "an object of type list"):
        op.matmul_grouped([1.0, 2.0], torch.ones(2, 1, 3))


def test_compressed_rows_are_int32_only_where_the_column_ids_fit_too():
    # The column ids took the dtype chosen for the entry counts: an operator (or a
    # block-diagonal expansion) with fewer than 2**31 entries but more columns
    # would have wrapped its column ids around.
    from torch_geometric_san.sparse.operator import _compressed
    ptr = torch.tensor([0, 1, 1])
    assert _compressed(ptr, 10).dtype == torch.int32
    assert _compressed(ptr, 2**31).dtype == torch.long
    assert _compressed(torch.tensor([0, 2**31]), 10).dtype == torch.long


def test_largest_eigenvalue_refuses_what_its_solvers_do_not_take():
    # A Hermitian complex matrix gave 1.0 for 2.0 (imaginary parts dropped), a
    # nilpotent one 5.0 for 0 (one triangle read), a string dtype was taken.
    import scipy.sparse as sp
    from torch_geometric_san.sparse import largest_eigenvalue
    with pytest.raises(TypeError, match="expected a real matrix, got complex128"):
        largest_eigenvalue(sp.csr_array(np.array([[1, 1j], [-1j, 1]])))
    with pytest.raises(ValueError, match="not symmetric"):
        largest_eigenvalue(sp.csr_array(np.array([[0.0, 0.0], [5.0, 0.0]])))
    with pytest.raises(TypeError, match="'dtype'"):
        largest_eigenvalue(sp.csr_array(np.eye(2)), 'float64')
    assert largest_eigenvalue(sp.csr_array(np.array([[2.0, -1.0], [-1.0, 2.0]]))) == \
        pytest.approx(3.0)
    # (a DIA matrix, which has no max(), raised an AttributeError in the checks)
    assert largest_eigenvalue(sp.dia_array(np.array([[2.0, -1.0], [-1.0, 2.0]]))) == \
        pytest.approx(3.0)


@pytest.mark.parametrize('scale', [1e-160, 1e-300, 1e-310, 1e150, 1e160, 1e300])
def test_largest_eigenvalue_of_entries_far_from_one(scale):
    # Lanczos (above DENSE_EIGEN_LIMIT rows) gave 19 % less at 1e-160 and failed in
    # LAPACK, or did not converge, at 1e-310 and from 1e150 on.
    import scipy.sparse as sp
    from torch_geometric_san.sparse import largest_eigenvalue
    if scale < np.finfo(np.float64).tiny and (np.array([scale]) * np.ones(1))[0] == 0:
        pytest.skip("this process flushes subnormal numbers to zero (e.g. after "
                    "the Inductor of PyTorch 2.4 or 2.5 loaded a kernel built with "
                    "-ffast-math)")
    n = 700
    path = sp.diags_array([np.full(n - 1, -1.0), np.full(n, 2.0), np.full(n - 1, -1.0)],
                          offsets=[-1, 0, 1]).tocsr()
    exact = 2 + 2 * np.cos(np.pi / (n + 1))  # its largest eigenvalue
    assert largest_eigenvalue(path * scale, torch.float64) == pytest.approx(
        exact * scale, rel=1e-9, abs=0.0)


def test_scaled_refuses_an_eigenvalue_beyond_the_dtype():
    # A float32 operator with lambda_max = 4.5e38 became zero (divided by inf).
    a = 1.5e38
    index = torch.tensor([[0, 0, 1, 1, 1, 2, 2], [0, 1, 0, 1, 2, 1, 2]])
    weight = torch.tensor([1.0, -1.0, -1.0, 2.0, -1.0, -1.0, 1.0]) * a
    op = SparseOperator.from_index(index, weight, 3)
    with pytest.raises(ValueError, match=r"the largest eigenvalue of the operator, "
                       r"4.5e\+38, exceeds the range of its values' dtype torch.float32"):
        op.scaled()
    scaled = SparseOperator.from_index(index, weight.double(), 3).scaled()
    given = SparseOperator(op.index, weight, 3, eigenvalue=torch.full(
        (3, ), 3 * a, dtype=torch.float64))  # (a float64 eigenvalue per row)
    with pytest.raises(ValueError, match=r"the largest eigenvalue of the operator, "
                       r"4.5e\+38, exceeds the range"):
        given.scaled()
    expected = weight.double() / (3 * a)
    assert torch.allclose(scaled.weight, expected)
    assert torch.allclose(SparseOperator.from_index(index, weight / 2, 3).scaled().weight,
                          expected.float())


def runs_from_2_5(run, expected):
    # A torch.func transform of a product by what its operands do not depend on:
    # right from PyTorch 2.5, refused with a clear error on 2.4, whose custom
    # operators stopped on PyTorch's message about setup_context (session 31).
    if torch.__version__ < (2, 5):
        with pytest.raises(NotImplementedError, match=r"other than vmap with PyTorch "
                           r"2\.4.*from PyTorch 2\.5"):
            run()
    else:
        assert torch.allclose(run(), expected)


def test_forward_mode_derivatives_are_refused_not_dropped():
    # (session 28: jvp and jacfwd of matmul and sddmm came back as zero)
    import torch.autograd.forward_ad as fwAD
    from torch.func import jacfwd, jvp, vmap
    index = torch.tensor([[0, 1, 1, 2], [1, 0, 2, 1]])
    op = SparseOperator.from_index(index, torch.tensor([1.0, -1.0, 2.0, 0.5]).double(), 3)
    x = torch.randn(3, 2, dtype=torch.float64)
    dense = op.to_dense()
    match = r"SparseOperator\.{} has no forward-mode derivative \(torch\.func\.jvp"
    for product in (lambda x: op.matmul(x), lambda x: op.matmul(x, hops=2),
                    lambda x: op.matmul(x, op.weight * x.sum())):
        with pytest.raises(NotImplementedError, match=match.format('matmul')):
            jvp(product, (x, ), (torch.ones_like(x), ))
        with pytest.raises(NotImplementedError, match=match.format('matmul')):
            jacfwd(product)(x)
    with pytest.raises(NotImplementedError, match=match.format('sddmm')):
        jacfwd(lambda x: op.sddmm(x, x))(x)
    with fwAD.dual_level():
        with pytest.raises(NotImplementedError, match=match.format('matmul')):
            op.matmul(fwAD.make_dual(x, torch.ones_like(x)))
        assert torch.allclose(op.matmul(x), dense @ x)  # (no tangent: no refusal)
    # (the identity hops=0 keeps its tangent; under vmap, with or without tangents)
    assert torch.equal(jvp(lambda x: op.matmul(x, hops=0), (x, ), (x, ))[1], x)
    xs = torch.randn(4, 3, 2, dtype=torch.float64)
    runs_from_2_5(lambda: jvp(lambda w: vmap(op.matmul)(xs) * w, (torch.ones(()), ),
                              (torch.ones(()), ))[1].double(),
                  dense @ xs)
    with pytest.raises(NotImplementedError, match=match.format('matmul')):
        jvp(vmap(op.matmul), (xs, ), (xs, ))
    # torch.func's gradients by an operand stopped on torch's message about
    # setup_context; by what the operands do not depend on they run
    from torch.func import grad
    gradient = (r"SparseOperator\.{} does not run under torch.func's gradient "
                r"transforms \(grad, vjp, jacrev\) by its operands")
    weight = torch.randn(2, 2, dtype=torch.float64)
    with pytest.raises(NotImplementedError, match=gradient.format('matmul')):
        grad(lambda w: op.matmul(x @ w).sum())(weight)
    with pytest.raises(NotImplementedError, match=gradient.format('sddmm')):
        grad(lambda w: op.sddmm(x @ w, x).sum())(weight)
    runs_from_2_5(lambda: grad(lambda w: (op.matmul(x) @ w).sum())(weight),
                  (dense @ x).sum(0).view(-1, 1).expand(2, 2))
    runs_from_2_5(lambda: grad(lambda w: (op.sddmm(x, x) * w).sum())(
        torch.ones((), dtype=torch.float64)), op.sddmm(x, x).sum())
    # reverse mode and vmap are right
    leaf = x.clone().requires_grad_()
    op.matmul(leaf).sum().backward()
    assert torch.allclose(leaf.grad, dense.sum(0).view(-1, 1).expand(3, 2))
    assert torch.allclose(vmap(lambda x: op.matmul(x))(xs), dense @ xs)


def test_an_operator_shared_by_threads_expands_for_each():
    # (session 28: threads evicting the kept expansion raised KeyError, or "dictionary
    # changed size during iteration", inside a layer's forward)
    import sys
    import threading
    previous = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # (threads switch often: the race shows)
    op = SparseOperator.from_index(torch.tensor([[0, 1, 1, 2], [0, 0, 1, 2]]),
                                   torch.ones(4), 3)
    barrier, errors = threading.Barrier(4), []

    def work(i):
        barrier.wait()
        try:
            for step in range(500):
                groups = 2 + (step + i) % 4
                assert op.expand(groups).shape == (3 * groups, 3 * groups)
                op.abs()  # (another form derived meanwhile)
        except Exception as error:  # noqa: BLE001 (reported below)
            errors.append(repr(error))

    threads = [threading.Thread(target=work, args=(i, )) for i in range(4)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(previous)
    assert errors == []


def test_a_transposed_operator_is_freed_without_the_cycle_collector():
    # The operator and its transpose kept each other: only Python's cycle
    # collector freed them, and MultiOrderSAN left each step's incidence
    # operators (megabytes on large complexes) waiting for a full collection.
    import gc
    import weakref
    op = SparseOperator.from_index(torch.tensor([[0, 1, 2], [1, 2, 0]]),
                                   torch.ones(3), 3)
    transposed = op.t()
    assert op.t() is transposed and torch.equal(transposed.t().to_dense(), op.to_dense())
    alive = weakref.ref(op)
    gc.disable()
    try:
        del op, transposed
        assert alive() is None
    finally:
        gc.enable()


def test_one_block_expansion_is_kept():
    # Each number of groups seen kept its block-diagonal copy (groups x the
    # pattern) for as long as the operator lived: B = 1, 2, 4, 8 signals of two
    # heads kept 2 + 4 + ... + 16 copies.
    op = SparseOperator.from_index(torch.tensor([[0, 1, 2], [1, 2, 0]]),
                                   torch.ones(3), 3)
    for groups in (2, 4, 8, 4):
        block = op.expand(groups)
        assert block.nnz == 3 * groups and op.expand(groups) is block
        assert [k for k in op._cache if isinstance(k, tuple) and k[0] == 'expand'] == [
            ('expand', groups)]


@pytest.mark.parametrize('grads', [(True, False), (False, True)])
def test_sddmm_gradient_of_one_operand(grads):
    # Only one operand requiring its gradient (a path no test ran): that one gets
    # the gradient of the gathered products, the other none.
    torch.manual_seed(0)
    index = torch.randint(0, 6, (2, 15))
    op = SparseOperator.from_index(index, torch.randn(15, dtype=torch.float64), 6)
    a, b = (torch.randn(6, 4, dtype=torch.float64, requires_grad=g) for g in grads)
    out = op.sddmm(a, b)
    grad = torch.randn_like(out)
    out.backward(grad)
    a_ref, b_ref = (t.detach().requires_grad_() for t in (a, b))
    ref = (a_ref[op.index[1]] * b_ref[op.index[0]]).sum(1)
    ref.backward(grad)
    assert torch.allclose(out, ref)
    for t, t_ref, needed in ((a, a_ref, grads[0]), (b, b_ref, grads[1])):
        assert torch.allclose(t.grad, t_ref.grad) if needed else t.grad is None


@pytest.mark.parametrize('layout', ['coo', 'csr', 'bool'])
def test_from_adj_of_integer_and_bool_sparse_tensors(layout):
    # PyG's transposed adjacency with integer or bool values (a path no test ran):
    # the operator holds them as floats, entry for entry.
    torch.manual_seed(0)
    dense = torch.randint(-3, 4, (6, 6)) * (torch.rand(6, 6) < 0.4)
    dense = dense != 0 if layout == 'bool' else dense
    adj = dense.to_sparse_csr() if layout == 'csr' else dense.to_sparse_coo()
    op = SparseOperator.from_adj(adj, None, 6)
    assert op.weight.dtype == torch.float32
    assert torch.equal(op.to_dense(), dense.float())


def test_a_few_shifted_forms_are_kept():
    # Each eps seen kept its shifted copy of the values for as long as the
    # operator lived (a sweep of eps grew memory without bound); the latest four
    # are kept, and layers alternating between them find theirs.
    op = SparseOperator.from_index(torch.tensor([[0, 1, 2], [1, 2, 0]]),
                                   torch.ones(3), 3)
    def kept():
        return [k[1] for k in op._cache if isinstance(k, tuple) and k[0] == 'shifted']
    for step in range(10):
        op.shifted(0.1 * step)
    assert kept() == pytest.approx([0.6, 0.7, 0.8, 0.9])
    forms = {eps: op.shifted(eps) for eps in (0.5, 0.9)}
    assert kept() == pytest.approx([0.7, 0.8, 0.9, 0.5])
    assert all(op.shifted(eps) is form for eps, form in forms.items())
    dense = torch.eye(3) - 0.5 * op.to_dense()
    assert torch.equal(forms[0.5].to_dense(), dense)


def test_from_index_refuses_sparse_tensors():
    # they failed inside torch (isfinite, min of a sparse tensor)
    index, weight = torch.tensor([[0, 1], [1, 0]]), torch.ones(2)
    with pytest.raises(TypeError, match=r"dense floating-point weight tensor, got a "
                                        r"torch.float32 torch.sparse_coo tensor"):
        SparseOperator.from_index(index, weight.to_sparse(), 2)
    with pytest.raises(TypeError, match=r"dense torch.long index tensor .* got a "
                                        r"torch.int64 torch.sparse_coo tensor"):
        SparseOperator.from_index(index.to_sparse(), weight, 2)
    with pytest.raises(TypeError, match="dense floating-point weight"):
        SimplicialOperators.from_inputs(2, up_index=index, up_weight=weight.to_sparse())


def test_kept_forms_follow_a_change_in_place_of_the_values():
    # the products read the new values, the backward's kept transposed values and
    # the kept forms the old ones
    index = torch.tensor([[0, 1, 0, 1, 2], [0, 0, 1, 1, 2]])
    weight = torch.tensor([2., 1., 1., 4., 5.], dtype=torch.float64)  # symmetric
    op = SparseOperator.from_index(index, weight, 3)
    assert op.weight is weight
    x = torch.randn(3, 2, dtype=torch.float64, requires_grad=True)
    kept = op.t()
    op.matmul(x).sum().backward()
    scaled, _ = op.scaled().to_dense(), op.shifted(0.5)
    with torch.no_grad():
        weight.mul_(10)
    dense = op.to_dense()
    g = torch.randn(3, 2, dtype=torch.float64)
    grad, = torch.autograd.grad(op.matmul(x), x, g)
    torch.testing.assert_close(grad, dense.t() @ g)
    assert op.t() is not kept
    torch.testing.assert_close(op.t().to_dense(), dense.t())
    torch.testing.assert_close(op.shifted(0.5).to_dense(),
                               torch.eye(3, dtype=torch.float64) - 0.5 * dense)
    torch.testing.assert_close(op.scaled().to_dense(), scaled)  # A / lambda_max(A)
    assert op.t() is op.t()  # kept again while the values stay


def test_a_change_of_the_values_in_place_keeps_the_compressed_rows():
    # an optimiser's step on learnable values derived them again at every step
    index = torch.tensor([[0, 1, 0, 1, 2], [0, 0, 1, 1, 2]])
    weight = torch.tensor([2., 1., 1., 4., 5.], dtype=torch.float64)
    op = SparseOperator.from_index(index, weight, 3)
    structure = op.structure()
    with torch.no_grad():
        weight.mul_(2)
    assert op.structure() is structure
    x = torch.randn(3, 2, dtype=torch.float64)
    torch.testing.assert_close(op.matmul(x), op.to_dense() @ x)


def test_forms_kept_by_a_derived_operator_follow_a_change_of_the_shared_index():
    # abs() shares the index and the compressed rows of its operator
    index = torch.tensor([[0, 1, 0, 1, 2], [0, 0, 1, 1, 2]])
    op = SparseOperator.from_index(index, torch.tensor([2., -1., -1., 4., 5.]), 3)
    absolute = op.abs()
    index[0, 4] = 1  # an entry moves: (2, 2) becomes (1, 2)
    dense = torch.zeros(3, 3)
    dense[index[1], index[0]] = absolute.weight
    x = torch.randn(3, 2)
    torch.testing.assert_close(absolute.matmul(x), dense @ x)


def test_the_transpose_has_values_of_its_own():
    # they were the operator's kept transposed values: a change of them in place
    # gave the operator's backward wrong values
    index = torch.tensor([[0, 1, 2], [0, 0, 1]])
    op = SparseOperator.from_index(index, torch.tensor([1., 2., 3.], dtype=torch.float64),
                                   (2, 3))
    x = torch.randn(3, 2, dtype=torch.float64, requires_grad=True)
    op.matmul(x)  # keeps the transposed values
    with torch.no_grad():
        op.t().weight.mul_(10)
    g = torch.randn(2, 2, dtype=torch.float64)
    grad, = torch.autograd.grad(op.matmul(x), x, g)
    torch.testing.assert_close(grad, op.to_dense().t() @ g)
