"""The paper's datasets as PyG datasets.

* :class:`SyntheticFlowDataset`: generated trajectories around two holes.
* :class:`OceanDriftersDataset`: drifter trajectories around Madagascar.
* :class:`CitationComplexDataset`: citation counts on a co-authorship
  complex, with seeded missing-value masks.
"""
from torch_geometric_san.datasets.base import SharedComplexDataset
from torch_geometric_san.datasets.citation_complex import \
    CitationComplexDataset
from torch_geometric_san.datasets.ocean_drifters import OceanDriftersDataset
from torch_geometric_san.datasets.synthetic_flow import SyntheticFlowDataset
from torch_geometric_san.datasets.trajectory import TrajectoryDataset

__all__ = [
    "SharedComplexDataset",
    "TrajectoryDataset",
    "SyntheticFlowDataset",
    "OceanDriftersDataset",
    "CitationComplexDataset",
]
