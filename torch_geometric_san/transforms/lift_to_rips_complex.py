r"""Lifting a point cloud to its Vietoris-Rips complex."""
from typing import List

import gudhi
import numpy as np
import torch
from scipy.spatial import cKDTree

from torch_geometric_san.transforms._lifting import _check_threshold, _PointCloudLifting


class LiftToRipsComplex(_PointCloudLifting):
    r"""Lifts a point cloud (``pos`` ``[N, D]``) to its Vietoris-Rips complex up to
    order :obj:`max_order`, the complex of :class:`gudhi.RipsComplex`, and returns a
    :class:`~torch_geometric_san.data.SimplicialComplexData`. The edges are found with
    a k-d tree (:class:`scipy.spatial.cKDTree`, in time about proportional to the
    points and edges, where :class:`gudhi.RipsComplex` measures every pair) and
    expanded to cliques by GUDHI (:meth:`gudhi.SimplexTree.expansion`).

    Vertex :math:`i` is the point ``pos[i]``; two points at (Euclidean) distance at most
    :obj:`max_edge_length` span an edge, and every :math:`(k+1)`-clique of those edges
    is a k-simplex, with its vertex ids ascending (the reference orientation). Every
    point is a vertex, isolated or not. The distances are GUDHI's, in floating point:
    the square root of the sum of the squared coordinate differences, so a distance
    equal to :obj:`max_edge_length` may round to either side, and squares beyond the
    range of the floats (coordinates above about :math:`10^{154}` or differences below
    about :math:`10^{-154}`) give what GUDHI gives. Up to that rounding, the complex does
    not depend on a rotation or translation of the points, and relabelling the points
    relabels the vertices.

    * ``x`` becomes ``x_0`` (a 1-D ``x`` becomes a column); with :obj:`lift_x` every
      k-simplex also gets the mean (or sum) of the features of its vertices as ``x_k``,
      :math:`k = 1..K`.
    * Every other attribute (``pos``, ``y``, a graph's ``edge_index``, ...) is kept as
      it is (a numeric NumPy array as a tensor, as
      :meth:`~torch_geometric_san.data.SimplicialComplexData.from_simplices` stores
      it).

    The complex is padded to :obj:`max_order` with empty orders where it has no
    simplices that large, so lifted clouds can always be batched together.

    Args:
        max_edge_length (float): The largest distance between the two points of an
            edge.
        max_order (int, optional): The largest order :math:`K` of the complex.
            (default: :obj:`2`)
        lift_x (bool, optional): Lift the node features ``x`` to every order
            :math:`k \geq 1`. (default: :obj:`False`)
        reduce (str, optional): How :obj:`lift_x` combines the features of the
            :math:`k + 1` vertices of a k-simplex: :obj:`"mean"` or :obj:`"sum"`
            (see :class:`LiftToCliqueComplex`). (default: :obj:`"mean"`)
        dtype (torch.dtype, optional): Floating type of the operator weights and of
            lifted integer features. (default: :obj:`torch.float32`)
        laplacians (bool, optional): Store the Laplacians; without them, what the
            neighbour loader needs (see :class:`LiftToCliqueComplex`).
            (default: :obj:`True`)

    Example:
        >>> from torch_geometric.data import Data
        >>> square = Data(pos=torch.tensor([[0., 0.], [1., 0.], [0., 1.], [1., 1.]]))
        >>> complex = LiftToRipsComplex(max_edge_length=1.1)(square)  # the sides
        >>> complex.simplices_1.tolist(), complex.num_simplices(2)
        ([[0, 1], [0, 2], [1, 3], [2, 3]], 0)
        >>> complex = LiftToRipsComplex(max_edge_length=1.5, max_order=3)(square)
        >>> [complex.num_simplices(k) for k in range(4)]  # diagonals too: a tetrahedron
        [4, 6, 4, 1]
    """
    def __init__(self, max_edge_length: float, max_order: int = 2,
                 lift_x: bool = False, reduce: str = 'mean',
                 dtype: torch.dtype = torch.float32, laplacians: bool = True) -> None:
        super().__init__(max_order, lift_x, reduce, dtype, laplacians)
        self.max_edge_length = _check_threshold(max_edge_length, 'max_edge_length')

    def _simplex_tree(self, points: np.ndarray) -> gudhi.SimplexTree:
        # gudhi.RipsComplex measures every pair of points (quadratic in N, whatever
        # the threshold); a k-d tree finds the candidate pairs, kept by the distance
        # as GUDHI computes and compares it: the root of the squares summed one
        # coordinate after the other (NumPy's sum of 8 or more terms rounds
        # otherwise). The tree squares the coordinates' spans, so clouds where they
        # overflow are left to GUDHI.
        with np.errstate(over='ignore'):
            spread = float((np.ptp(points, axis=0) ** 2).sum()) if len(points) else 0.0
        if not np.isfinite(spread):
            rips = gudhi.RipsComplex(points=points, max_edge_length=self.max_edge_length)
            return rips.create_simplex_tree(max_dimension=self.max_order)
        tree = gudhi.SimplexTree()
        tree.insert_batch(np.arange(len(points))[None], np.zeros(len(points)))
        pairs = cKDTree(points).query_pairs(self.max_edge_length * (1 + 1e-9),
                                            output_type='ndarray')
        if len(pairs):
            gap = points[pairs[:, 0]] - points[pairs[:, 1]]
            squares = np.zeros(len(pairs))
            for column in gap.T:
                squares += column * column
            pairs = pairs[np.sqrt(squares) <= self.max_edge_length]
            tree.insert_batch(np.sort(pairs, axis=1).T, np.zeros(len(pairs)))
        tree.expansion(self.max_order)
        return tree

    def _options(self) -> List[str]:
        return [f'max_edge_length={self.max_edge_length}'] + super()._options()
