"""Simplicial Attention Networks (SAN) for PyTorch Geometric."""
from torch_geometric_san import data, datasets, loader, nn, transforms, utils

__version__ = "0.1.0"

__all__ = ["data", "datasets", "loader", "nn", "transforms", "utils", "__version__"]
