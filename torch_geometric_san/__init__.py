"""Simplicial Attention Networks (SAN) for PyTorch Geometric."""
from torch_geometric_san import data, datasets, nn, transforms, utils

__version__ = "0.1.0"

__all__ = ["data", "datasets", "nn", "transforms", "utils", "__version__"]
