r"""Lifting a point cloud to its alpha complex."""
from typing import List, Optional

import gudhi
import numpy as np
import torch

from torch_geometric_san.transforms._lifting import _check_threshold, _PointCloudLifting


class LiftToAlphaComplex(_PointCloudLifting):
    r"""Lifts a point cloud (``pos`` ``[N, D]``) to its alpha complex up to order
    :obj:`max_order`, built with GUDHI (:class:`gudhi.AlphaComplex`), and returns a
    :class:`~torch_geometric_san.data.SimplicialComplexData`.

    The alpha complex is the subcomplex of the Delaunay triangulation whose simplices
    have an empty circumscribing ball of squared radius at most
    :obj:`max_alpha_square` (GUDHI's filtration value, a squared radius); without it,
    the whole Delaunay triangulation. It has simplices up to the dimension :math:`D`
    of the points. Vertex :math:`i` is the point ``pos[i]``, simplices have ascending
    vertex ids (the reference orientation), and every point is a vertex (GUDHI keeps
    one of several equal points; the others stay isolated vertices). The complex does
    not depend on a rotation or translation of the points (up to the rounding of
    degenerate configurations, such as four cocircular points, where GUDHI picks one
    triangulation), and relabelling the points relabels the vertices (but for which of
    several equal points GUDHI keeps).

    * ``x`` becomes ``x_0`` (a 1-D ``x`` becomes a column); with :obj:`lift_x` every
      k-simplex also gets the mean (or sum) of the features of its vertices as ``x_k``,
      :math:`k = 1..K`.
    * Every other attribute (``pos``, ``y``, a graph's ``edge_index``, ...) is kept as
      it is (a numeric NumPy array as a tensor, as
      :meth:`~torch_geometric_san.data.SimplicialComplexData.from_simplices` stores
      it).

    The complex is padded to :obj:`max_order` with empty orders where it has no
    simplices that large (e.g. above :math:`D`), so lifted clouds can always be batched
    together.

    Args:
        max_order (int, optional): The largest order :math:`K` of the complex.
            (default: :obj:`2`)
        max_alpha_square (float, optional): The largest squared radius of the empty
            ball of a simplex; :obj:`None` keeps the whole Delaunay triangulation.
            (default: :obj:`None`)
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
        >>> triangle = Data(pos=torch.tensor([[0., 0.], [1., 0.], [0.5, 3 ** 0.5 / 2]]))
        >>> LiftToAlphaComplex()(triangle).num_simplices(2)  # radius^2 1/3
        1
        >>> complex = LiftToAlphaComplex(max_alpha_square=0.3)(triangle)
        >>> [complex.num_simplices(k) for k in range(3)]  # edges: radius^2 1/4
        [3, 3, 0]
    """
    def __init__(self, max_order: int = 2, max_alpha_square: Optional[float] = None,
                 lift_x: bool = False, reduce: str = 'mean',
                 dtype: torch.dtype = torch.float32, laplacians: bool = True) -> None:
        super().__init__(max_order, lift_x, reduce, dtype, laplacians)
        self.max_alpha_square = (None if max_alpha_square is None else
                                 _check_threshold(max_alpha_square, 'max_alpha_square'))

    def _simplex_tree(self, points: np.ndarray) -> gudhi.SimplexTree:
        alpha = gudhi.AlphaComplex(points=points)
        limit = float('inf') if self.max_alpha_square is None else self.max_alpha_square
        return alpha.create_simplex_tree(max_alpha_square=limit)

    def _options(self) -> List[str]:
        options = super()._options()
        return options[:1] + [f'max_alpha_square={self.max_alpha_square}'] + options[1:]
