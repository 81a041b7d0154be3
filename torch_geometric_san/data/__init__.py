r"""Simplicial complexes as PyG data objects, and their algebra."""
from torch_geometric_san.data import algebra
from torch_geometric_san.data.simplicial_complex_data import (MixedOrderError,
                                                              SimplicialComplexData)
from torch_geometric_san.data.batching import batch_complexes, pad_order
from torch_geometric_san.data.attributes import simplex_attr_orders

__all__ = ['MixedOrderError', 'SimplicialComplexData', 'algebra', 'batch_complexes',
           'pad_order', 'simplex_attr_orders']
