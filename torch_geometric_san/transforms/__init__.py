r"""Transforms into simplicial complexes."""
from torch_geometric_san.transforms.lift_to_alpha_complex import LiftToAlphaComplex
from torch_geometric_san.transforms.lift_to_clique_complex import LiftToCliqueComplex
from torch_geometric_san.transforms.lift_to_rips_complex import LiftToRipsComplex
from torch_geometric_san.transforms.reorder_simplices import (ReorderSimplices,
                                                              reorder_simplices)

__all__ = [
    'LiftToCliqueComplex', 'LiftToRipsComplex', 'LiftToAlphaComplex',
    'ReorderSimplices', 'reorder_simplices'
]
