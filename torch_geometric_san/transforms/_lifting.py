r"""What the liftings of graphs and point clouds share: their feature options, the
copying of the other attributes and the construction of the complex."""
import inspect
from typing import Any, Dict, List, Sequence

import gudhi
import numpy as np
import torch
from torch import Tensor
from torch_geometric.data import Batch, Data
from torch_geometric.transforms import BaseTransform

from torch_geometric_san.data import SimplicialComplexData, algebra
from torch_geometric_san.utils.validation import (FLOAT_DTYPE_NAMES, FLOAT_DTYPES,
                                                  check_bool, check_float_dtype,
                                                  check_has_data, check_int)

#: The ways node features are lifted to the simplices above them.
REDUCES = ('mean', 'sum')

# The named arguments of the constructor, which a graph's attributes must not shadow.
_CONSTRUCTOR_ARGUMENTS = frozenset(
    name for name, parameter in
    inspect.signature(SimplicialComplexData.from_simplices).parameters.items()
    if parameter.kind is not inspect.Parameter.VAR_KEYWORD)


class _Lifting(BaseTransform):
    r"""The options every lifting takes (documented by each subclass): the order of the
    complex, whether and how node features are lifted, and the floating type."""

    def __init__(self, max_order: int, lift_x: bool, reduce: str,
                 dtype: torch.dtype, laplacians: bool) -> None:
        max_order = check_int(max_order, 'max_order', minimum=1)
        lift_x = check_bool(lift_x, 'lift_x')
        if reduce not in REDUCES:
            raise ValueError(f"reduce must be one of {REDUCES}, got {reduce!r}")
        check_float_dtype(dtype)
        self.max_order = max_order
        self.lift_x = lift_x
        self.reduce = reduce
        self.dtype = dtype
        self.laplacians = check_bool(laplacians, 'laplacians')

    def _check_data(self, data: Any) -> None:
        if not isinstance(data, Data):
            raise TypeError(f"{self.__class__.__name__} expects a "
                            f"torch_geometric.data.Data, not {type(data).__name__}")
        if isinstance(data, Batch):  # its graphs would become one complex
            raise TypeError(f"{self.__class__.__name__} lifts one graph, not a "
                            f"{type(data).__name__}: lift each graph (e.g. as the "
                            f"transform of its dataset), then batch the complexes")
        if isinstance(data, SimplicialComplexData):  # e.g. as pre_transform and transform
            raise TypeError(f"{self.__class__.__name__} got a SimplicialComplexData, "
                            f"which is lifted already; to lift its graph again, pass "
                            f"Data(x=data.x_0, edge_index=data.edge_index, ...)")

    def _complex(self, data: Data, simplices: Sequence[np.ndarray], num_nodes: int,
                 consumed: Sequence[str], **features: Any) -> SimplicialComplexData:
        r"""The complex of :obj:`simplices` (arrays of k-simplices, ascending rows) with
        ``x`` of :obj:`data` as ``x_0`` (lifted if asked), the given :obj:`features`,
        and every attribute of :obj:`data` but ``x`` and those in :obj:`consumed`."""
        attrs: Dict[str, Any] = {
            key: value for key, value in data.items()
            if key not in ('x', 'num_nodes', *consumed)
        }
        clash = sorted(_CONSTRUCTOR_ARGUMENTS & attrs.keys())
        if clash:  # (passed on, they would be taken as the constructor's arguments)
            raise ValueError(f"the graph's attribute '{clash[0]}' has the name of an "
                             f"argument of SimplicialComplexData.from_simplices, which "
                             f"builds the complex: rename it before lifting")
        made = sorted(attrs.keys() & {*features, *(['x_0'] if data.x is not None
                                                   else [])})
        if made:  # (Python's "multiple values" error, or x_0 silently replaced)
            raise ValueError(f"the graph's attribute '{made[0]}' would be replaced by "
                             f"the lifting's own ('x' becomes x_0, the edge "
                             f"attributes x_1): rename it before lifting")
        if data.x is not None:
            attrs['x_0'] = _as_column(data.x)
        out = SimplicialComplexData.from_simplices(
            list(simplices), num_nodes=num_nodes, order=self.max_order, dtype=self.dtype,
            laplacians=self.laplacians, **attrs, **features)
        if self.lift_x and 'x_0' in out:
            for k in range(1, self.max_order + 1):
                lifted = _lift_node_features(out.x_0, out[f'simplices_{k}'], self.reduce,
                                            self.dtype)
                given = out[f'x_{k}'] if f'x_{k}' in out else None
                if given is not None:  # (in the type of both: casts lost values)
                    dtype = torch.promote_types(lifted.dtype, given.dtype)
                    lifted = torch.cat([lifted.to(dtype), given.to(dtype)], dim=1)
                if lifted.is_floating_point() and not torch.isfinite(lifted).all():
                    advice = ("scale x first, or lift its mean (reduce='mean')"
                              if lifted.dtype == torch.float64 else
                              "convert x to a wider floating type first (the "
                              "lifting's dtype applies to integer and bool features "
                              "only)")
                    raise ValueError(f"x_{k}, lifted from x ({out.x_0.dtype}) to the "
                                     f"{k}-simplices, has infinite entries in "
                                     f"{lifted.dtype}: {advice}")
                out[f'x_{k}'] = lifted
        return out

    def _options(self) -> List[str]:
        # Every option that changes the complex: PyG compares the repr of a dataset's
        # pre_transform to tell stale processed files.
        return [f'max_order={self.max_order}', f'lift_x={self.lift_x}',
                f'reduce={self.reduce!r}'] + (
                    [] if self.dtype == torch.float32 else [f'dtype={self.dtype}']) + (
                    [] if self.laplacians else ['laplacians=False'])

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({', '.join(self._options())})"


def _as_column(value: Any) -> Any:
    r"""A 1-D tensor as a column ``[N, 1]``; anything else as it is."""
    return value.view(-1, 1) if isinstance(value, Tensor) and value.dim() == 1 else value


def _lift_node_features(x: Tensor, simplices: Tensor, reduce: str,
                       dtype: torch.dtype) -> Tensor:
    r"""The sum or mean of the node features over the vertices of each simplex,
    :math:`|\mathbf{B}_1|^\top \mathbf{x}` for edges (halved for the mean), gathered
    vertex position by vertex position (no :math:`[N_k, k + 1, F]` intermediate).

    Args:
        x (torch.Tensor): Node features ``[N_0, F]``, real; integer and bool features
            are converted to :obj:`dtype` first.
        simplices (torch.Tensor): The k-simplices ``[N_k, k + 1]``.
        reduce (str): ``'sum'`` or ``'mean'``.
        dtype (torch.dtype): The floating type of converted features.

    Returns:
        torch.Tensor: ``[N_k, F]``.

    Raises:
        TypeError: If :obj:`x` is complex.
    """
    if x.is_complex():
        raise TypeError(f"lift_x needs real node features (their means or sums on "
                        f"the simplices), got {x.dtype}")
    if not x.is_floating_point():
        x = x.to(dtype)
    index = simplices.to(x.device)
    # Half-precision features are added up in float32 (a mean of finite float16
    # values overflowed in the sum) and rounded back once.
    wide = torch.float32 if x.dtype in (torch.float16, torch.bfloat16) else x.dtype
    out = _vertex_sum(x, index, wide)
    if reduce == 'mean':
        # (a finite mean whose sum overflowed: its terms divided first)
        out = out / index.size(1) if bool(torch.isfinite(out).all()) else \
            _vertex_sum(x.to(wide) / index.size(1), index, wide)
    return out.to(x.dtype)


def _vertex_sum(x: Tensor, index: Tensor, dtype: torch.dtype) -> Tensor:
    # sum_i x[index[:, i]] in dtype (a new tensor: x is not touched)
    out = x[index[:, 0]].to(dtype)
    for i in range(1, index.size(1)):
        out += x[index[:, i]]
    return out


class _PointCloudLifting(_Lifting):
    r"""A lifting of the points ``pos`` of a :class:`~torch_geometric.data.Data` to a
    complex that GUDHI builds (:meth:`_simplex_tree`), with vertex ``i`` the point
    ``pos[i]``."""

    def forward(self, data: Data) -> SimplicialComplexData:
        r"""Lifts :obj:`data` (also run by calling the transform).

        Args:
            data (torch_geometric.data.Data): A point cloud with :obj:`pos`
                :obj:`[N, D]`, optional :obj:`x` :obj:`[N, F]` and other attributes;
                not modified.

        Returns:
            SimplicialComplexData: Its complex of order :obj:`max_order`, with
            ``num_nodes = N``.
        """
        self._check_data(data)
        points = _check_pos(data.pos)
        given = data._store.get('num_nodes')  # (set by hand; PyG infers it otherwise)
        if given is not None and given != len(points):
            raise ValueError(f"the point cloud sets num_nodes={given} but 'pos' holds "
                             f"{len(points)} points, one per vertex")
        tree = self._simplex_tree(points)
        simplices = algebra.simplex_tree_to_arrays(tree, self.max_order, copy=False)[1:]
        del tree
        return self._complex(data, simplices, len(points), consumed=())

    def _simplex_tree(self, points: np.ndarray) -> gudhi.SimplexTree:
        raise NotImplementedError


def _check_pos(pos: Any) -> np.ndarray:
    # pos [N, D] as a float64 array, checked.
    if pos is None:
        raise ValueError("the point cloud has no 'pos' (point coordinates [N, D])")
    if not isinstance(pos, Tensor) or pos.dtype not in FLOAT_DTYPES or pos.is_nested:
        raise TypeError(f"pos must be a floating tensor [N, D] ({FLOAT_DTYPE_NAMES}), "
                        f"got {getattr(pos, 'dtype', type(pos).__name__)}")
    if pos.dim() != 2 or pos.size(1) == 0:
        raise ValueError(f"pos must have shape [N, D], got {list(pos.shape)}")
    check_has_data(pos, 'pos')
    if not torch.isfinite(pos).all():
        raise ValueError("pos has NaN or infinite coordinates")
    return pos.detach().cpu().to(torch.float64).numpy()


def _check_threshold(value: Any, name: str) -> float:
    # A non-negative number (inf allowed), as a float.
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating,
                                                         np.integer)):
        raise TypeError(f"{name} must be a number, not {type(value).__name__}")
    if not value >= 0:
        raise ValueError(f"{name} must be non-negative, got {value}")
    try:
        return float(value)
    except OverflowError:  # (an int beyond floats: every distance is below it)
        return float('inf')
