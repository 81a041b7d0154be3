r"""Sparse operators and their products, shared by the data model and the layers.

:class:`SparseOperator` is one sparse matrix that derives its other forms once and
keeps them; :class:`SimplicialOperators` the operators of one order of a complex,
as :meth:`~torch_geometric_san.data.SimplicialComplexData.operators` returns them
and every layer takes them; :mod:`~torch_geometric_san.sparse.propagation` the
filters the layers compute with them; :func:`segment_softmax` the softmax of the
attention scores of each row; :mod:`~torch_geometric_san.sparse.compiled` the
compiled CPU kernels of the per-signal products and coefficients. This package
imports neither the data model nor the layers.
"""
from torch_geometric_san.sparse.kernels import segment_softmax
from torch_geometric_san.sparse.operator import (SparseOperator, largest_eigenvalue,
                                                 to_index_weight)
from torch_geometric_san.sparse.simplicial import SimplicialOperators, as_operators
from torch_geometric_san.sparse import compiled, propagation

__all__ = ["SparseOperator", "SimplicialOperators", "as_operators", "propagation",
           "compiled", "segment_softmax", "to_index_weight", "largest_eigenvalue"]
