r"""Simplicial attention layers and networks."""
from torch_geometric_san.nn import models
from torch_geometric_san.nn.conv import SANConv, SATConv, SCNConv, SCNNConv, SNNConv
from torch_geometric_san.nn.dense import dense_san_conv
from torch_geometric_san.sparse import SimplicialOperators, SparseOperator

__all__ = ["SANConv", "SATConv", "SCNNConv", "SNNConv", "SCNConv", "models",
           "SparseOperator", "SimplicialOperators", "dense_san_conv"]
