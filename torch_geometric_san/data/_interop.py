r"""Conversions between :class:`~torch_geometric_san.data.SimplicialComplexData` and
TopoNetX / networkx (the bodies of its ``from_toponetx``, ``to_toponetx`` and
``to_networkx`` methods).

TopoNetX and networkx hold simplices and their attributes as Python objects, so the
conversions go through Python containers once per simplex (in C-level ``map``/``zip``
calls); all the algebra of the complex stays vectorised.
"""
from itertools import chain
from typing import Any, Dict, List, Optional

import numpy as np
import torch
from torch import Tensor

from torch_geometric_san.data import algebra


def _import_toponetx() -> Any:
    r"""Imports :mod:`toponetx`, or says how to install it."""
    try:
        import toponetx
    except ImportError as error:
        raise ImportError(
            "this needs TopoNetX, an optional dependency of torch-geometric-san: "
            "install it with the [toponetx] extra, e.g. pip install \".[toponetx]\" in "
            "a clone of the repository (or pip install toponetx)") from error
    return toponetx


def _from_toponetx(cls: type, complex: Any, signal: Optional[str], order: Optional[int],
                  dtype: torch.dtype) -> Any:
    tnx = _import_toponetx()
    if not isinstance(complex, tnx.SimplicialComplex):
        raise TypeError(f"complex must be a toponetx.SimplicialComplex, not "
                        f"{type(complex).__name__}")
    # TopoNetX sorts the labels of its simplices, so they are comparable.
    labels = sorted(s.elements[0] for s in complex.skeleton(0)) if complex.shape else []
    index = {label: i for i, label in enumerate(labels)}
    top = complex.dim if complex.shape else -1  # -1: no simplex at all
    if order is None:
        order = max(top, 0)
    simplices, features = [], {}
    for k in range(0, min(top, order) + 1):
        skeleton = complex.skeleton(k)
        flat = np.fromiter(map(index.__getitem__,
                               chain.from_iterable(s.elements for s in skeleton)),
                           dtype=np.int64, count=len(skeleton) * (k + 1))
        # Ascending ids: TopoNetX's orientation (sorted labels, signs (-1)^i).
        rows = np.sort(flat.reshape(-1, k + 1), axis=1)
        if k > 0:
            simplices.append(rows)
        if signal is not None:
            values = complex.get_simplex_attributes(signal, k)
            if values:
                features[f'x_{k}'] = _signal_rows(values, skeleton, signal, k)
    return cls.from_simplices(simplices, num_nodes=len(labels), order=order, dtype=dtype,
                              **features)


def _signal_rows(values: Dict[Any, Any], skeleton: List[Any], signal: str,
                 k: int) -> Tensor:
    keys = [s.elements for s in skeleton]
    missing = [key for key in keys if key not in values]
    if missing:
        raise ValueError(f"the attribute '{signal}' is set on some {k}-simplices but "
                         f"not on {missing[0]}; set it on all or none of them")
    rows = torch.as_tensor(np.asarray([np.asarray(values[key]) for key in keys]))
    return rows.view(-1, 1) if rows.dim() == 1 else rows


def _orientations(data: Any, k: int) -> np.ndarray:
    r"""``+1`` where a k-simplex of :obj:`data` has the reference orientation (its
    ascending vertex ids), ``-1`` where its stored boundary is the opposite one (only
    complexes built from incidence matrices can have those)."""
    if k == 0:
        return np.ones(data.num_nodes, dtype=np.float32)
    canonical = algebra.boundary_matrix(data[f'simplices_{k}'].cpu().numpy(),
                                        _simplex_rows(data, k - 1))
    stored = data[f'boundary_weight_{k}'].cpu().numpy()
    first = canonical.indptr[:-1]  # the first face of each simplex, in both forms
    below = _orientations(data, k - 1)[canonical.indices[first]]
    return np.sign(stored[first] * canonical.data[first]) * below


def _simplex_rows(data: Any, k: int) -> np.ndarray:
    if k == 0:
        return np.arange(data.num_nodes)[:, None]
    return data[f'simplices_{k}'].cpu().numpy()


def _to_toponetx(data: Any, signal: Optional[str], oriented: bool) -> Any:
    tnx = _import_toponetx()
    complex = tnx.SimplicialComplex()
    for k in range(data.order + 1):
        complex.add_simplices_from(_simplex_rows(data, k).tolist())
    if signal is None:
        return complex
    for k in range(data.order + 1):
        if f'x_{k}' not in data or data[f'x_{k}'] is None:
            continue
        x = data[f'x_{k}'].detach().cpu()
        if oriented:
            sign = torch.from_numpy(_orientations(data, k)).to(x.dtype)
            x = x * sign.view(-1, *([1] * (x.dim() - 1)))
        keys = map(tuple, _simplex_rows(data, k).tolist())
        complex.set_simplex_attributes(dict(zip(keys, x.numpy())), name=signal)
    return complex


def _to_networkx(data: Any, signal: Optional[str]) -> Any:
    import networkx as nx
    graph = nx.Graph()
    graph.add_nodes_from(range(data.num_nodes))
    edges = _simplex_rows(data, 1).tolist() if data.order >= 1 else []
    graph.add_edges_from(edges)
    if signal is not None:
        for k, set_attributes, keys in (
                (0, nx.set_node_attributes, range(data.num_nodes)),
                (1, nx.set_edge_attributes, map(tuple, edges))):
            if data.order >= k and f'x_{k}' in data and data[f'x_{k}'] is not None:
                values = data[f'x_{k}'].detach().cpu().numpy()
                set_attributes(graph, dict(zip(keys, values)), name=signal)
    return graph
