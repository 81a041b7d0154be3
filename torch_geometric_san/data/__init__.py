r"""Simplicial complexes as PyG data objects, and their algebra."""
from torch_geometric_san.data import algebra
from torch_geometric_san.data.simplicial_complex_data import (MixedOrderError,
                                                              SimplicialComplexData)
from torch_geometric_san.data.batching import batch_complexes, pad_order

__all__ = ['MixedOrderError', 'SimplicialComplexData', 'algebra', 'batch_complexes',
           'pad_order']
