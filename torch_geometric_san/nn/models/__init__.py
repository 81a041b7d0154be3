r"""Simplicial networks built from the layers of :mod:`torch_geometric_san.nn.conv`."""
from torch_geometric_san.nn.models.multi_order_san import MultiOrderSAN
from torch_geometric_san.nn.models.san import SAN, SAT, SCN, SCNN, SNN

__all__ = ["SAN", "SAT", "SCNN", "SNN", "SCN", "MultiOrderSAN"]
