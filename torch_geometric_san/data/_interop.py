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
from torch_geometric_san.utils.convert import to_numpy
from torch_geometric_san.utils.validation import check_bool, check_int, rows_problem


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
    _check_signal_name(signal)
    if not isinstance(complex, tnx.SimplicialComplex):
        raise TypeError(f"complex must be a toponetx.SimplicialComplex, not "
                        f"{type(complex).__name__}")
    labels = _sorted_labels(complex)
    index = {label: i for i, label in enumerate(labels)}
    top = complex.dim if complex.shape else -1  # -1: no simplex at all
    order = max(top, 0, _padded_order(complex)) if order is None else \
        check_int(order, 'order', minimum=0)
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
    if signal is not None:
        for k, x in _empty_signals(complex, signal).items():
            if top < k <= order:  # (orders up to top have simplices)
                features[f'x_{k}'] = x
    return cls.from_simplices(simplices, num_nodes=len(labels), order=order, dtype=dtype,
                              **features)


#: The complex-level attribute (TopoNetX's ``complex.complex``) that holds the order
#: of a complex whose top orders have no simplices, which TopoNetX cannot hold.
_PADDED_ORDER = 'padded_order'


def _padded_order(complex: Any) -> int:
    recorded = complex.complex.get(_PADDED_ORDER, 0)
    try:
        return check_int(recorded, _PADDED_ORDER, minimum=0)
    except (TypeError, ValueError) as error:
        raise ValueError(f"the complex attribute '{_PADDED_ORDER}' must be an order "
                         f"as to_toponetx writes it, got {recorded!r}") from error


def _empty_signals_key(signal: str) -> str:
    # The complex-level attribute (TopoNetX's ``complex.complex``) that holds the
    # shapes and dtypes of the signals of orders without simplices, which no simplex
    # can carry.
    return f'{signal}_of_empty_orders'


def _empty_signals(complex: Any, signal: str) -> Dict[int, Tensor]:
    r"""The empty signals ``x_k`` :obj:`[0, ...]` that :func:`_to_toponetx` recorded
    for the orders without simplices: ``{k: ([0, ...], NumPy dtype string)}``."""
    key = _empty_signals_key(signal)
    recorded = complex.complex.get(key, {})
    out = {}
    try:
        for k, (shape, kind) in dict(recorded).items():
            out[check_int(k, 'k', minimum=0)] = torch.from_numpy(
                np.empty([0, *map(int, shape[1:])], dtype=np.dtype(kind)))
    except (TypeError, ValueError) as error:
        raise ValueError(f"the complex attribute '{key}' must map orders to (shape, "
                         f"dtype) as to_toponetx writes it, got {recorded!r}") from error
    return out


def _sorted_labels(complex: Any) -> List[Any]:
    r"""The node labels of a TopoNetX complex, sorted (they become the vertex ids)."""
    if not complex.shape:
        return []
    try:  # TopoNetX sorts the simplices of a skeleton itself
        return sorted(s.elements[0] for s in complex.skeleton(0))
    except TypeError as error:  # e.g. int and str labels in one complex
        kinds = sorted({type(label).__name__ for node in complex.nodes for label in node})
        raise TypeError(f"the node labels must be sortable to number the vertices "
                        f"(e.g. all int or all str), got {', '.join(kinds)}") from error


def _signal_rows(values: Dict[Any, Any], skeleton: List[Any], signal: str,
                 k: int) -> Tensor:
    keys = [s.elements for s in skeleton]
    missing = [key for key in keys if key not in values]
    if missing:
        raise ValueError(f"the attribute '{signal}' is set on some {k}-simplices but "
                         f"not on {missing[0]}; set it on all or none of them")
    what = f"the attribute '{signal}' of the {k}-simplices"
    try:
        rows = np.asarray([np.asarray(values[key]) for key in keys])
    except ValueError as error:  # rows of different lengths
        raise ValueError(f"{what} needs rows of one shape") from error
    if rows.dtype.kind not in 'biufc':  # bool, integer, floating or complex
        raise TypeError(f"{what} must be numbers, got {type(values[keys[0]]).__name__}")
    rows = torch.as_tensor(rows)
    return rows.view(-1, 1) if rows.dim() == 1 else rows


def _orientations(data: Any, k: int) -> np.ndarray:
    r"""``+1`` where a k-simplex of :obj:`data` has the reference orientation (its
    ascending vertex ids), ``-1`` where its stored boundary is the opposite one (only
    complexes built from incidence matrices can have those)."""
    if k == 0:
        return np.ones(data.num_nodes, dtype=np.float32)
    canonical = algebra.boundary_matrix(data[f'simplices_{k}'].cpu().numpy(),
                                        _simplex_rows(data, k - 1))
    stored = to_numpy(data[f'boundary_weight_{k}'])
    first = canonical.indptr[:-1]  # the first face of each simplex, in both forms
    below = _orientations(data, k - 1)[canonical.indices[first]]
    return np.sign(stored[first] * canonical.data[first]) * below


def _signal(data: Any, k: int) -> Optional[np.ndarray]:
    r"""The signal ``x_k`` of :obj:`data` as a NumPy array (None where absent), one
    row per k-simplex."""
    x = data[f'x_{k}'] if f'x_{k}' in data else None
    if x is None:
        return None
    problem = rows_problem(f'x_{k}', x, k, data.num_simplices(k))
    if problem:
        raise ValueError(problem)
    # (a copy: the rows handed out would otherwise be views of x_k, and of the graph
    # a lifting took x from, changed by any in-place edit of either side)
    return np.array(to_numpy(x), copy=True)


def _check_signal_orders(data: Any) -> None:
    # A signal x_k of an order above the complex's has no k-simplices to go to: it
    # was left out of the export, silently.
    from torch_geometric_san.data.simplicial_complex_data import _FEATURE
    for key in data.keys():
        match = _FEATURE.fullmatch(key)
        if match and int(match.group(1)) > data.order:
            raise ValueError(f"'{key}' is given but the complex has order "
                             f"{data.order}: it has no simplices to export it with")


def _simplex_rows(data: Any, k: int) -> np.ndarray:
    if k == 0:
        return np.arange(data.num_nodes)[:, None]
    return data[f'simplices_{k}'].cpu().numpy()


def _to_toponetx(data: Any, signal: Optional[str], oriented: bool) -> Any:
    tnx = _import_toponetx()
    _check_signal_name(signal)
    check_bool(oriented, 'oriented')
    complex = tnx.SimplicialComplex()
    for k in range(data.order + 1):
        complex.add_simplices_from(_simplex_rows(data, k).tolist())
    if data.order > (complex.dim if complex.shape else -1):
        complex.complex[_PADDED_ORDER] = data.order
    if signal is None:
        return complex
    _check_signal_orders(data)
    empty = {}
    for k in range(data.order + 1):
        x = _signal(data, k)
        if x is None:
            continue
        if x.shape[0] == 0:  # no k-simplex to carry it: its shape and dtype are kept
            shape = [0, *x.shape[1:]] if x.ndim > 1 else [0, 1]
            empty[k] = (shape, x.dtype.str)
            continue
        if oriented:
            x = _in_reference_orientation(data, k, x)
        keys = map(tuple, _simplex_rows(data, k).tolist())
        complex.set_simplex_attributes(dict(zip(keys, x)), name=signal)
    if empty:
        complex.complex[_empty_signals_key(signal)] = empty
    return complex


def _in_reference_orientation(data: Any, k: int, x: np.ndarray) -> np.ndarray:
    # The rows of an oriented signal x_k negated on the k-simplices stored in the
    # opposite orientation, so that they mean the same in the reference orientation
    # (ascending vertex ids) that TopoNetX and networkx's edge keys take.
    sign = _orientations(data, k)
    flipped = sign < 0
    if not bool(flipped.any()):
        return x
    if x.dtype.kind in 'bu':  # (wrapped or kept)
        raise TypeError(f"'x_{k}' ({x.dtype}) cannot be negated for the "
                        f"{k}-simplices stored in the opposite orientation; "
                        f"convert it to a signed type, or pass oriented=False")
    if x.dtype.kind == 'i' and bool((x[flipped] == np.iinfo(x.dtype).min).any()):
        raise ValueError(f"'x_{k}' ({x.dtype}) holds its type's minimum on a "
                         f"{k}-simplex stored in the opposite orientation, "
                         f"whose negation does not fit the type (it wraps to "
                         f"itself); convert it to a wider type")
    return x * sign.astype(x.dtype).reshape(-1, *([1] * (x.ndim - 1)))


def _to_networkx(data: Any, signal: Optional[str], oriented: bool) -> Any:
    import networkx as nx
    _check_signal_name(signal)
    check_bool(oriented, 'oriented')
    graph = nx.Graph()
    graph.add_nodes_from(range(data.num_nodes))
    edges = _simplex_rows(data, 1).tolist() if data.order >= 1 else []
    graph.add_edges_from(edges)
    if signal is not None:
        _check_signal_orders(data)
        for k, set_attributes, keys in (
                (0, nx.set_node_attributes, range(data.num_nodes)),
                (1, nx.set_edge_attributes, map(tuple, edges))):
            x = _signal(data, k) if data.order >= k else None
            if x is not None:
                if oriented and k == 1 and len(x):
                    x = _in_reference_orientation(data, 1, x)
                set_attributes(graph, dict(zip(keys, x)), name=signal)
    return graph


def _check_signal_name(signal: Any) -> None:
    # The name of the signals' attribute in TopoNetX or networkx: a str or None.
    if signal is not None and not isinstance(signal, str):
        raise TypeError(f"signal must be an attribute name (a str) or None, not "
                        f"{type(signal).__name__}")
