"""Drawing 2-complexes in the plane (needs the ``plot`` extra: matplotlib)."""
from typing import Any, Optional, Tuple, Union

import numpy as np
from torch import Tensor

from torch_geometric_san.utils.convert import to_numpy
from torch_geometric_san.utils.validation import check_bool, check_int

ArrayLike = Union[Tensor, np.ndarray]


def _import_pyplot():
    try:
        import matplotlib.pyplot as plt
    except ImportError as e:
        raise ImportError(
            "plot_complex needs matplotlib; install the 'plot' extra from "
            "the root of a clone of the repository with "
            "`pip install \".[plot]\"` (or `pip install matplotlib`)") from e
    return plt


def _numpy(value: ArrayLike, name: str) -> np.ndarray:
    if isinstance(value, Tensor):
        value = to_numpy(value)
    if not isinstance(value, np.ndarray):
        raise TypeError(f"'{name}' must be a tensor or a NumPy array, got "
                        f"{type(value).__name__}")
    return value


def _finite(value: np.ndarray, name: str) -> np.ndarray:
    # As floats, refusing NaN/inf (they would vanish from the drawing or break
    # the colour scale) and non-numeric arrays.
    if value.dtype.kind not in "biuf":
        raise TypeError(f"'{name}' must be numeric, got dtype {value.dtype}")
    value = value.astype(float)
    if not np.isfinite(value).all():
        raise ValueError(f"'{name}' has NaN or infinite entries")
    return value


def _simplices(data: Any, k: int) -> np.ndarray:
    value = getattr(data, f"simplices_{k}", None)
    if value is None:
        return np.zeros((0, k + 1), dtype=np.int64)
    return _numpy(value, f"simplices_{k}").astype(np.int64)


def _colormap(name: Any) -> Any:
    import matplotlib
    try:
        return matplotlib.colormaps[name]
    except (KeyError, TypeError) as error:
        raise ValueError(f"'cmap' must name a matplotlib colour map, got "
                         f"{name!r}") from error


def _color(value: Any, name: str) -> Tuple[float, ...]:
    from matplotlib.colors import to_rgba
    try:
        return to_rgba(value)
    except (ValueError, TypeError) as error:
        raise ValueError(f"'{name}' must be a matplotlib colour, got "
                         f"{value!r}") from error


def _positions(data: Any, pos: Optional[ArrayLike], edges: np.ndarray,
               triangles: np.ndarray) -> np.ndarray:
    # [N_0, 2] finite positions, one per vertex of the complex.
    if pos is None:
        pos = getattr(data, "pos", None)
        if pos is None:
            raise ValueError("plot_complex needs vertex positions: pass "
                             "'pos' or store them as 'data.pos'")
    pos = _finite(_numpy(pos, "pos"), "pos")
    if pos.ndim != 2 or pos.shape[1] != 2:
        raise ValueError(f"'pos' must have shape [N_0, 2], got "
                         f"{list(pos.shape)}")
    num_nodes = getattr(data, "num_nodes", None)
    if num_nodes is not None and len(pos) != num_nodes:
        # (isolated vertices were dropped, or extra points drawn)
        raise ValueError(f"'pos' has {len(pos)} rows but the complex has "
                         f"{num_nodes} vertices")
    used = max(edges.max(initial=-1), triangles.max(initial=-1))
    if used >= len(pos):
        raise ValueError(f"'pos' has {len(pos)} rows but the complex has "
                         f"vertex ids up to {used}")
    return pos


def _edge_signal(edge_signal: ArrayLike, num_edges: int) -> np.ndarray:
    # One finite value per edge, [N_1].
    signal = _finite(_numpy(edge_signal, "edge_signal"), "edge_signal")
    if signal.ndim == 2 and signal.shape[1] == 1:
        signal = signal[:, 0]
    if signal.shape != (num_edges, ):
        raise ValueError(f"'edge_signal' must have one value per edge "
                         f"([{num_edges}] or [{num_edges}, 1]), got "
                         f"{list(signal.shape)}")
    return signal


def _attention_pairs(data: Any, attention: Tuple[ArrayLike, ArrayLike], order: int,
                     num_vertices: int, top_k: Optional[int]
                     ) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    # The simplices of the order, the pairs of distinct ones to draw [2, M] and
    # their opacities.
    index, weight = attention
    index = _numpy(index, "attention index")
    if index.dtype.kind not in "iu":  # (floats were truncated, NaN wrapped around)
        raise TypeError(f"the attention index must hold integers, got "
                        f"{index.dtype}")
    index = index.astype(np.int64)
    given = _finite(_numpy(weight, "attention weight"), "attention weight")
    weight = given.mean(axis=1) if given.ndim == 2 else given
    if index.ndim != 2 or index.shape[0] != 2 or weight.shape != (index.shape[1], ):
        batched = (" (the weights of signals [B, nnz, heads]: pass one "
                   "signal's, (index, weight[b]))" if given.ndim == 3 else "")
        raise ValueError(f"'attention' must be (index [2, nnz], weight "
                         f"[nnz] or [nnz, heads]), got index "
                         f"{list(index.shape)} and weight {list(given.shape)}"
                         f"{batched}")
    simplices = (np.arange(num_vertices)[:, None] if order == 0 else
                 _simplices(data, order))
    if index.size and (index.max() >= len(simplices) or index.min() < 0):
        wrong = index.max() if index.max() >= len(simplices) else index.min()
        raise ValueError(f"'attention' refers to {order}-simplex {wrong}, but the "
                         f"complex has {len(simplices)}")
    off_diagonal = index[0] != index[1]
    pairs, shown = index[:, off_diagonal], weight[off_diagonal]
    if top_k is not None and shown.size > top_k:
        keep = np.sort(np.argsort(-shown, kind="stable")[:top_k])
        pairs, shown = pairs[:, keep], shown[keep]
    return simplices, pairs, shown / max(weight.max(initial=0.0), 1e-12)


def plot_complex(
    data: Any,
    pos: Optional[ArrayLike] = None,
    edge_signal: Optional[ArrayLike] = None,
    attention: Optional[Tuple[ArrayLike, ArrayLike]] = None,
    attention_order: int = 1,
    attention_top_k: Optional[int] = None,
    ax: Any = None,
    signal_style: str = "arrows",
    cmap: Optional[str] = None,
    triangle_color: str = "#c6dbef",
    edge_color: str = "#9e9e9e",
    attention_color: str = "#2ca02c",
    node_size: float = 4.0,
    colorbar: bool = True,
    title: Optional[str] = None,
) -> Any:
    r"""Draws a simplicial 2-complex in the plane and returns the
    :class:`matplotlib.figure.Figure`.

    Triangles (:obj:`data.simplices_2`) are shaded, edges
    (:obj:`data.simplices_1`) drawn as thin lines and vertices as dots. An
    edge signal is drawn either as arrows (:obj:`signal_style="arrows"`: each
    edge with a non-zero value gets an arrow along its reference orientation,
    lower to higher vertex id, if the value is positive and against it if
    negative, coloured by the absolute value) or as line widths
    (:obj:`signal_style="widths"`: width proportional to the absolute value,
    colour by the signed value). Attention weights over pairs of
    :obj:`attention_order`-simplices (e.g. the coefficients returned by
    :class:`~torch_geometric_san.nn.conv.SANConv` with
    :obj:`return_attention_weights=True`) are drawn as segments between the
    barycentres of the two simplices, with opacity proportional to the
    weight.

    Args:
        data (SimplicialComplexData): The complex; reads
            :obj:`simplices_1`, :obj:`simplices_2` and, when :obj:`pos` is
            not given, :obj:`pos`.
        pos (torch.Tensor or numpy.ndarray, optional): Vertex positions,
            shape :obj:`[N_0, 2]`. (default: :obj:`data.pos`)
        edge_signal (torch.Tensor or numpy.ndarray, optional): One value per
            edge, shape :obj:`[N_1]` or :obj:`[N_1, 1]`.
        attention (tuple, optional): :obj:`(index, weight)` with
            :obj:`index` of shape :obj:`[2, nnz]` (pairs of simplices of
            order :obj:`attention_order`) and :obj:`weight` of shape
            :obj:`[nnz]` or :obj:`[nnz, heads]` (heads are averaged).
        attention_order (int, optional): The order of the simplices that
            :obj:`attention` relates. (default: :obj:`1`)
        attention_top_k (int, optional): Draw only the :obj:`attention_top_k`
            largest attention weights (between distinct simplices; ties by
            position). Above about 1,000 segments the overlay turns into a
            solid mass; e.g. :obj:`attention_top_k=200` keeps the strongest
            ones readable. (default: :obj:`None`, all)
        ax (matplotlib.axes.Axes, optional): Axes to draw into; a new figure
            is created when omitted.
        signal_style (str, optional): :obj:`"arrows"` or :obj:`"widths"`.
        cmap (str, optional): Colour map of the edge signal. (default:
            :obj:`"plasma_r"` for arrows, :obj:`"coolwarm"` for widths)
        triangle_color, edge_color, attention_color (str, optional): Colours.
        node_size (float, optional): Marker size of the vertices.
        colorbar (bool, optional): Adds a colour bar for the edge signal.
        title (str, optional): Axes title.

    Returns:
        matplotlib.figure.Figure: The figure that holds the drawing.
    """
    plt = _import_pyplot()
    from matplotlib.collections import LineCollection, PolyCollection
    from matplotlib.colors import Normalize

    # Every argument is checked before anything is drawn: a refused call left
    # its drawing in the caller's axes, or an open figure.
    attention_order = check_int(attention_order, "'attention_order'", minimum=0)
    if attention_top_k is not None:
        attention_top_k = check_int(attention_top_k, "'attention_top_k'", minimum=1)
    check_bool(colorbar, "'colorbar'")
    if ax is not None and not hasattr(ax, "add_collection"):
        raise TypeError(f"'ax' must be matplotlib Axes, not {type(ax).__name__}")
    if signal_style not in ("arrows", "widths"):
        raise ValueError(f"'signal_style' must be 'arrows' or 'widths', got "
                         f"{signal_style!r}")
    cmap = _colormap(cmap or ("plasma_r" if signal_style == "arrows" else "coolwarm"))
    colors = {name: _color(value, name) for name, value in (
        ("triangle_color", triangle_color), ("edge_color", edge_color),
        ("attention_color", attention_color))}
    edges, triangles = _simplices(data, 1), _simplices(data, 2)
    pos = _positions(data, pos, edges, triangles)
    signal = None if edge_signal is None else _edge_signal(edge_signal, len(edges))
    pairs = None if attention is None else _attention_pairs(
        data, attention, attention_order, len(pos), attention_top_k)

    if ax is None:
        fig, ax = plt.subplots(figsize=(6, 6))
    else:
        fig = ax.figure

    if len(triangles) > 0:
        ax.add_collection(PolyCollection(pos[triangles],
                                         facecolors=colors["triangle_color"],
                                         edgecolors="none", alpha=0.6,
                                         zorder=0))
    if len(edges) > 0:
        ax.add_collection(LineCollection(pos[edges], colors=colors["edge_color"],
                                         linewidths=0.5, zorder=1))
    ax.scatter(pos[:, 0], pos[:, 1], s=node_size, c="k", zorder=2)

    if signal is not None:
        vmax = max(np.abs(signal).max(initial=0.0), 1e-12)
        active = np.flatnonzero(signal)
        if signal_style == "arrows":
            forward = signal[active] > 0
            src = np.where(forward, edges[active, 0], edges[active, 1])
            dst = np.where(forward, edges[active, 1], edges[active, 0])
            delta = pos[dst] - pos[src]
            mappable = ax.quiver(pos[src, 0], pos[src, 1], delta[:, 0],
                                 delta[:, 1], np.abs(signal[active]), cmap=cmap,
                                 norm=Normalize(0.0, vmax), angles="xy",
                                 scale_units="xy", scale=1, width=0.005,
                                 zorder=3)
            label = "|edge signal|"
        else:
            mappable = LineCollection(
                pos[edges[active]], array=signal[active], cmap=cmap,
                norm=Normalize(-vmax, vmax),
                linewidths=0.5 + 3.5 * np.abs(signal[active]) / vmax,
                zorder=3)
            ax.add_collection(mappable)
            label = "edge signal"
        if colorbar:
            fig.colorbar(mappable, ax=ax, shrink=0.7, label=label)

    if pairs is not None:
        simplices, pairs, alpha = pairs
        centre = pos[simplices].mean(axis=1)
        rgba = np.zeros((pairs.shape[1], 4))
        rgba[:] = colors["attention_color"]
        rgba[:, 3] = np.clip(alpha, 0.0, 1.0)
        ax.add_collection(
            LineCollection(np.stack([centre[pairs[0]], centre[pairs[1]]],
                                    axis=1), colors=rgba, linewidths=1.0,
                           zorder=4))

    ax.set_aspect("equal")
    ax.autoscale_view()
    ax.set_axis_off()
    if title is not None:
        ax.set_title(title)
    return fig
