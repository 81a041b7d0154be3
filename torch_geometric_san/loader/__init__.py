r"""Mini-batches of one large complex by neighbour sampling of its k-simplices."""
from torch_geometric_san.loader.utils import (SimplicialAdjacency, edge_rows,
                                              simplicial_subcomplex)
from torch_geometric_san.loader.simplicial_neighbor_sampler import \
    SimplicialNeighborSampler
from torch_geometric_san.loader.simplicial_neighbor_loader import (
    PermutationSampler, SimplicialNeighborLoader)

__all__ = ["SimplicialNeighborLoader", "SimplicialNeighborSampler", "PermutationSampler",
           "SimplicialAdjacency", "simplicial_subcomplex", "edge_rows"]
