r"""Transforms into simplicial complexes."""
from torch_geometric_san.transforms.lift_to_clique_complex import LiftToCliqueComplex
from torch_geometric_san.transforms.reorder_simplices import (ReorderSimplices,
                                                              reorder_simplices)

__all__ = ['LiftToCliqueComplex', 'ReorderSimplices', 'reorder_simplices']
