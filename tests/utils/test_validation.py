"""Checks shared by the package's entry points: tensors on 'meta' are refused where
their values are read (torch failed inside with "cannot be called on meta tensors")."""
import pytest
import torch
from torch_geometric.data import Data

from torch_geometric_san.data import SimplicialComplexData
from torch_geometric_san.sparse import SparseOperator, segment_softmax
from torch_geometric_san.transforms import LiftToCliqueComplex, LiftToRipsComplex

META = torch.device('meta')


@pytest.mark.parametrize('call, name', [
    (lambda: SparseOperator.from_index(torch.tensor([[0], [1]], device=META), None, 2),
     'the index'),
    (lambda: SparseOperator.from_index(torch.tensor([[0], [1]]),
                                       torch.ones(1, device=META), 2), 'the weight'),
    (lambda: segment_softmax(torch.ones(3), torch.tensor([0, 0, 1], device=META), 2),
     "'index'"),
    (lambda: SimplicialComplexData.from_simplices(torch.tensor([[0, 1]], device=META)),
     'simplices'),
    (lambda: SimplicialComplexData.from_incidence([torch.ones(2, 1, device=META)]),
     'B_1'),
    (lambda: LiftToCliqueComplex()(Data(edge_index=torch.tensor([[0], [1]], device=META),
                                        num_nodes=2)), 'edge_index'),
    (lambda: LiftToRipsComplex(1.0)(Data(pos=torch.ones(3, 2, device=META))), 'pos'),
])
def test_meta_tensors_are_refused_where_values_are_read(call, name):
    with pytest.raises(ValueError, match=f"^{name} is on 'meta', which holds no data"):
        call()
