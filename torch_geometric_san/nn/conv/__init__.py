r"""Simplicial convolution layers: :class:`SANConv` and its special cases."""
from torch_geometric_san.nn.conv.san_conv import SANConv
from torch_geometric_san.nn.conv.sat_conv import SATConv
from torch_geometric_san.nn.conv.scnn_conv import SCNNConv
from torch_geometric_san.nn.conv.scn_conv import SCNConv
from torch_geometric_san.nn.conv.snn_conv import SNNConv

__all__ = ["SANConv", "SATConv", "SCNNConv", "SCNConv", "SNNConv"]
