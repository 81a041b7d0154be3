"""Bad input raises a ValueError/TypeError naming the problem and leaves the input
as it was."""
import gudhi
import numpy as np
import pytest
import scipy.sparse as sp
import torch

from torch_geometric_san.data import SimplicialComplexData
from torch_geometric_san.utils.validation import check_edge_index

from_simplices = SimplicialComplexData.from_simplices
from_simplex_tree = SimplicialComplexData.from_simplex_tree
from_incidence = SimplicialComplexData.from_incidence

# The oriented triangle [0, 1, 2] with edges [0, 1], [0, 2], [1, 2].
B1 = np.array([[-1, -1, 0], [1, 0, -1], [0, 1, 1]], dtype=float)
B2 = np.array([[1], [-1], [1]], dtype=float)


def tree(*simplices):
    out = gudhi.SimplexTree()
    for simplex in simplices:
        out.insert(simplex)
    return out


def with_entry(matrix, index, value):
    out = matrix.copy()
    out[index] = value
    return out


# (function, args, kwargs, exception, message pattern), one bad input each.
CASES = {
    'float-vertex-ids': (from_simplices, (np.array([[0., 1.]]), ), {}, TypeError,
                         "integer vertex ids"),
    'negative-vertex-id': (from_simplices, ([[-1, 2]], ), {}, ValueError,
                           r"\[-1, 2\] has a negative vertex id"),
    'unsorted-vertex-ids': (from_simplices, ([[0, 2, 1]], ), dict(close=True),
                            ValueError, r"\[0, 2, 1\] is not sorted"),
    'repeated-vertex': (from_simplices, ([[1, 1]], ), {}, ValueError,
                        r"\[1, 1\] repeats a vertex"),
    'duplicate-simplex': (from_simplices, (torch.tensor([[0, 1], [1, 2], [0, 1]]), ),
                          {}, ValueError, r"1-simplex \[0, 1\] is given more than once"),
    'duplicate-vertex': (from_simplices, ([[0], [0], [0, 1]], ), {}, ValueError,
                         r"0-simplex \[0\] is given more than once"),
    'not-closed-under-faces': (from_simplices, ([[0, 1], [0, 2], [0, 1, 2]], ), {},
                               ValueError, r"not closed under faces: 1-simplex "
                               r"\[1, 2\].*close=True"),
    'empty-simplex': (from_simplices, ([[0, 1], []], ), {}, ValueError,
                      "simplex 1 is empty"),
    'vertex-id-out-of-range': (from_simplices, ([[0, 5]], ), dict(num_nodes=3),
                               ValueError, "vertex id 5 is out of range for "
                               "num_nodes=3"),
    'simplex-above-order': (from_simplices, ([[0, 1, 2]], ), dict(close=True, order=1),
                            ValueError, "simplices of order 2 are given but order=1"),
    'feature-rows': (from_simplices, ([[0, 1], [1, 2]], ), dict(x_1=torch.zeros(3, 2)),
                     ValueError, "x_1 has 3 rows but the complex has 2 1-simplices"),
    'feature-nan': (from_simplices, ([[0, 1]], ),
                    dict(x_0=torch.tensor([[0.], [float('nan')]])), ValueError,
                    "x_0 has NaN or infinite entries"),
    'feature-inf': (from_simplices, ([[0, 1]], ),
                    dict(x_1=np.array([[np.inf]])), ValueError,
                    "x_1 has NaN or infinite entries"),
    'feature-not-2d': (from_simplices, ([[0, 1]], ), dict(x_0=torch.zeros(2)),
                       ValueError, r"x_0 must have shape \[N_0, F\]"),
    'feature-above-order': (from_simplices, ([[0, 1]], ), dict(x_2=torch.zeros(0, 1)),
                            ValueError, "x_2 is given but the complex has order 1"),
    'feature-type': (from_simplices, ([[0, 1]], ), dict(x_0=[[1.0], [2.0]]), TypeError,
                     "x_0 must be a tensor or an array"),
    'computed-attribute': (from_simplices, ([[0, 1]], ),
                           dict(simplices_1=torch.tensor([[0, 1]])), ValueError,
                           "'simplices_1' is computed by the constructor"),
    'graph-style-x': (from_simplices, ([[0, 1]], ), dict(x=torch.zeros(2, 1)),
                      ValueError, "pass the vertices' features as x_0"),
    'weight-dtype': (from_simplices, ([[0, 1]], ), dict(dtype=torch.int64), TypeError,
                     "dtype must be a floating torch.dtype"),
    'simplices-type': (from_simplices, (5, ), {}, TypeError,
                       "simplices must be an array or a sequence"),
    'nested-simplex': (from_simplices, ([[[0, 1]]], ), {}, TypeError,
                       "flat sequence of integer vertex ids"),
    'mixed-simplex-input': (from_simplices, ([np.array([[0, 1]]), [1, 2]], ), {},
                            TypeError, "mixes 2-D arrays of simplices with single"),
    'simplex-array-shape': (from_simplices, (np.zeros((2, 2, 2), dtype=int), ), {},
                            ValueError, r"shape \[N, k \+ 1\]"),
    'num-nodes-type': (from_simplices, ([[0, 1]], ), dict(num_nodes=2.5), TypeError,
                       "num_nodes must be an int"),
    'simplex-tree-type': (from_simplex_tree, ([[0, 1]], ), {}, TypeError,
                          "must be a gudhi.SimplexTree"),
    # (not -1: GUDHI itself hangs or crashes iterating a tree with vertex -1)
    'simplex-tree-negative-vertex': (from_simplex_tree, (tree([-2, 3]), ), {},
                                     ValueError, "negative vertex id"),
    'incidence-container': (from_incidence, (B1, ), {}, TypeError,
                            "incidence must be a list of matrices"),
    'incidence-type': (from_incidence, (["B1"], ), {}, TypeError,
                       "B_1 must be a NumPy array, a SciPy sparse matrix"),
    'incidence-dtype': (from_incidence, ([B1.astype(complex)], ), {}, TypeError,
                        "B_1 must be numeric"),
    'incidence-not-2d': (from_incidence, ([B1[None]], ), {}, ValueError,
                         "B_1 must be 2-D"),
    'incidence-entry': (from_incidence, ([with_entry(B1, (2, 2), 2.0)], ), {},
                        ValueError, r"may only hold 0, 1 and -1, but entry \(2, 2\)"),
    'incidence-nan': (from_incidence, ([sp.csr_matrix(with_entry(B1, (0, 0), np.nan))],
                                       ), {}, ValueError, "may only hold 0, 1 and -1"),
    'incidence-column-size': (from_incidence, ([B1, with_entry(B2, (2, 0), 0)], ), {},
                              ValueError, "column 0 of B_2 has 2 non-zeros.*3 faces"),
    'incidence-edge-signs': (from_incidence, ([np.abs(B1)], ), {}, ValueError,
                             r"column 0 of B_1 must hold one \+1 and one -1"),
    'incidence-not-a-chain-complex': (from_incidence, ([B1, np.abs(B2)], ), {},
                                      ValueError, "B_1 @ B_2 is not zero"),
    'incidence-shapes': (from_incidence, ([B1, np.vstack([B2, [[0]]])], ), {}, ValueError,
                         "B_2 has 4 rows but B_1 has 3 columns"),
    'incidence-duplicate-column': (from_incidence, ([B1[:, [0, 1, 0]]], ), {},
                                   ValueError, r"\[0, 1\] is given more than once"),
    'incidence-num-nodes': (from_incidence, ([B1], ), dict(num_nodes=5), ValueError,
                            "num_nodes=5 but B_1 has 3 rows"),
    'incidence-feature-rows': (from_incidence, ([torch.from_numpy(B1), B2], ),
                               dict(x_2=torch.zeros(2, 1)), ValueError,
                               "x_2 has 2 rows but the complex has 1 2-simplices"),
    # Bools where ints or flags are meant (True is an int to Python).
    'order-bool': (from_simplices, ([[0, 1]], ), dict(order=True), TypeError,
                   "order must be an int, not bool"),
    'num-nodes-bool': (from_simplices, ([[0, 1]], ), dict(num_nodes=True), TypeError,
                       "num_nodes must be an int, not bool"),
    'close-not-a-bool': (from_simplices, ([[0, 1, 2]], ), dict(close='no'), TypeError,
                         "close must be True or False, not str"),
    'tree-order-bool': (from_simplex_tree, (tree([0, 1]), ), dict(order=True),
                        TypeError, "order must be an int, not bool"),
    'incidence-num-nodes-bool': (from_incidence, ([], ), dict(num_nodes=True),
                                 TypeError, "num_nodes must be an int, not bool"),
    'incidence-num-nodes-float': (from_incidence, ([B1], ), dict(num_nodes=3.0),
                                  TypeError, "num_nodes must be an int, not float"),
    # Out-of-range counts.
    'order-negative': (from_simplices, ([[0, 1]], ), dict(order=-1), ValueError,
                       "order must be at least 0, got -1"),
    'num-nodes-negative': (from_simplices, ([], ), dict(num_nodes=-1), ValueError,
                           "num_nodes must be at least 0, got -1"),
    'tree-order-negative': (from_simplex_tree, (tree([0, 1]), ), dict(order=-2),
                            ValueError, "order must be at least 0, got -2"),
    'incidence-without-num-nodes': (from_incidence, ([], ), {}, ValueError,
                                    "num_nodes is needed when no incidence matrix"),
    # Vertex ids so large that their N_0-sized arrays cannot fit (a MemoryError from
    # NumPy before).
    'huge-vertex-id': (from_simplices, ([[0, 10**15]], ), {}, ValueError,
                       r"num_nodes=1000000000000001 .*needs more memory .*renumber"),
    'huge-num-nodes': (from_simplices, ([[0, 1]], ), dict(num_nodes=10**15), ValueError,
                       "num_nodes=1000000000000000 .*needs more memory"),
    'incidence-huge-num-nodes': (from_incidence, ([], ), dict(num_nodes=10**15),
                                 ValueError, "needs more memory than this machine"),
    'uint64-id-beyond-int64': (from_simplices, (np.array([[0, 2**63 + 5]],
                                                         dtype=np.uint64), ), {},
                               ValueError, "vertex id 9223372036854775813, beyond the "
                               "int64 range"),
    # Vertex ids of other types.
    'bool-vertex-ids': (from_simplices, (torch.tensor([[False, True]]), ), {},
                        TypeError, "integer vertex ids, got dtype bool"),
    'float-vertex-id-list': (from_simplices, ([[0.0, 1.0]], ), {}, TypeError,
                             "integer vertex ids, got dtype float64"),
    'string-vertex-ids': (from_simplices, ([['a', 'b']], ), {}, TypeError,
                          "integer vertex ids"),
    'simplices-none': (from_simplices, (None, ), {}, TypeError,
                       "simplices must be an array or a sequence of simplices, not "
                       "NoneType"),
    'simplex-array-1d': (from_simplices, (np.array([0, 1]), ), {}, ValueError,
                         r"shape \[N, k \+ 1\], got \[2\]"),
    # (NumPy took [True, 2] for [1, 2])
    'bool-among-vertex-ids': (from_simplices, ([[True, 2]], ), {}, TypeError,
                              "integer vertex ids, not bools"),
    # (read as 1 too, as 0-d tensors and arrays)
    'tensor-bool-among-vertex-ids': (from_simplices, ([[torch.tensor(True), 2]], ), {},
                                     TypeError, "integer vertex ids, not bools"),
    'array-bool-among-vertex-ids': (from_simplices, ([[0, np.array(True)]], ), {},
                                    TypeError, "integer vertex ids, not bools"),
    # (accepted, then failed inside torch's conversions naming no argument)
    'float8-dtype': (from_simplices, ([[0, 1]], ), dict(dtype=torch.float8_e4m3fn),
                     TypeError, "dtype must be a floating torch.dtype \\(float16, "
                     "bfloat16, float32 or float64\\), not torch.float8_e4m3fn"),
    # Features of other kinds than dense numeric arrays.
    'feature-sparse': (from_simplices, ([[0, 1]], ),
                       dict(x_1=torch.ones(1, 1).to_sparse()), TypeError,
                       r"x_1 must be a dense tensor.*to_dense\(\)"),
    'feature-strings': (from_simplices, ([[0, 1]], ), dict(x_1=np.array([['a']])),
                        TypeError, "x_1 must be numeric, got dtype <U1"),
    'dtype-string': (from_simplices, ([[0, 1]], ), dict(dtype='float32'), TypeError,
                     "dtype must be a floating torch.dtype \\(.*\\), not 'float32'"),
    'incidence-dtype-string': (from_incidence, ([B1], ), dict(dtype='float64'),
                               TypeError, "dtype must be a floating torch.dtype"),
    # Boundary matrices with other bad entries.
    'incidence-inf': (from_incidence, ([with_entry(B1, (0, 0), -np.inf)], ), {},
                      ValueError, r"may only hold 0, 1 and -1, but entry \(0, 0\) is "
                      "-inf"),
    'incidence-near-one': (from_incidence, ([with_entry(B1, (1, 0), 1 + 1e-7)], ), {},
                           ValueError, r"entry \(1, 0\) is 1.0000001"),
    'incidence-object-dtype': (from_incidence, ([B1.astype(object)], ), {}, TypeError,
                               "B_1 must be numeric, got dtype object"),
    'incidence-1d': (from_incidence, ([B1[0]], ), {}, ValueError,
                     r"B_1 must be 2-D, got shape \[3\]"),
    'nested-vertex-list': (from_simplices, ([[0, [1, 2]]], ), {}, TypeError,
                       "each simplex must be a flat sequence of integer vertex ids"),
    'incidence-torch-sparse-3d': (from_incidence, ([torch.ones(2, 2, 2).to_sparse()], ),
                                  {}, ValueError, r"B_1 must be 2-D, got shape "
                                  r"\[2, 2, 2\]"),
    # (torch's "can't convert Sparse layout tensor to numpy" named no argument)
    'simplices-torch-sparse': (from_simplices, (torch.tensor([[0, 1]]).to_sparse(), ),
                               {}, TypeError, "simplices must be a dense tensor, not "
                               "torch.sparse_coo"),
    # (a hybrid tensor, dense values per entry, failed unpacking its indices)
    'incidence-torch-hybrid': (from_incidence, ([torch.sparse_coo_tensor(
        torch.tensor([[0, 1]]), torch.tensor([[1.], [-1.]]), (2, 1))], ), {}, ValueError,
        "B_1 must be 2-D with two sparse dimensions, got shape \\[2, 1\\] with 1"),
    'incidence-sparse-complex': (from_incidence, ([sp.csc_array(B1.astype(complex))], ),
                                 {}, TypeError, "B_1 must be numeric, got dtype "
                                 "complex128"),
    'incidence-torch-sparse-entry': (from_incidence,
                                     ([torch.from_numpy(with_entry(B1, (0, 1), 3.0))
                                       .to_sparse()], ), {}, ValueError,
                                     r"entry \(0, 1\) is 3.0"),
}


def test_at_least_twelve_distinct_cases():
    assert len(CASES) >= 12


@pytest.mark.parametrize('name', CASES)
def test_bad_input_raises_and_leaves_input_unchanged(name, assert_rejected):
    assert_rejected(*CASES[name])


def test_nested_and_float8_inputs_are_refused():
    # (they failed inside torch's comparisons; outside CASES, whose check of the
    # arguments cannot read them)
    with pytest.raises(TypeError, match="x_1 is torch.float8_e4m3fn, in which torch "
                                        "has no arithmetic"):
        from_simplices([[0, 1]], x_1=torch.ones(1, 2).to(torch.float8_e4m3fn))
    with pytest.raises(TypeError, match="x_1 must be a dense tensor, not a nested tensor"):
        from_simplices([[0, 1]], x_1=torch.nested.nested_tensor([torch.ones(2)]))
    with pytest.raises(TypeError, match="B_1 must be a dense or sparse matrix, not a "
                                        "nested tensor"):
        from_incidence([torch.nested.nested_tensor([torch.ones(2), torch.ones(2)])])
    with pytest.raises(TypeError, match="edge_index must be a dense \\[2, num_edges\\] "
                                        "tensor, not a nested tensor"):
        check_edge_index(torch.nested.nested_tensor([torch.ones(2, dtype=torch.long)]),
                         3)


@pytest.mark.parametrize('k, error, pattern', [
    (3, ValueError, "order k=3 is out of range for a complex of order 2"),
    (-1, ValueError, "order k=-1 is out of range"),
    (1.0, TypeError, "the order k must be an int"),
    (True, TypeError, "the order k must be an int, not bool"),
])
def test_accessors_reject_bad_orders(k, error, pattern):
    data = from_simplices([[0, 1, 2]], close=True)
    for accessor in (data.boundary, data.down_laplacian, data.up_laplacian,
                     data.hodge_laplacian, data.num_simplices, data.simplex_batch):
        with pytest.raises(error, match=pattern):
            accessor(k)
