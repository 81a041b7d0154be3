r"""Transforms into simplicial complexes."""
from torch_geometric_san.transforms.lift_to_clique_complex import LiftToCliqueComplex

__all__ = ['LiftToCliqueComplex']
