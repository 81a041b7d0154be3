import sys
from types import SimpleNamespace

import numpy as np
import pytest
import torch

matplotlib = pytest.importorskip("matplotlib", reason="needs the 'plot' "
                                 "extra (matplotlib)")
matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.collections import LineCollection, PolyCollection  # noqa
from matplotlib.quiver import Quiver  # noqa: E402

from torch_geometric_san.utils import plot_complex  # noqa: E402

# Two triangles sharing the edge {1, 2}, plus a dangling edge {2, 4}.
POS = torch.tensor([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0],
                    [2.0, 1.0]])
EDGES = torch.tensor([[0, 1], [0, 2], [1, 2], [1, 3], [2, 3], [2, 4]])
TRIANGLES = torch.tensor([[0, 1, 2], [1, 2, 3]])


@pytest.fixture
def data():
    return SimpleNamespace(simplices_1=EDGES, simplices_2=TRIANGLES, pos=POS)


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def _collections(ax, cls):
    return [c for c in ax.collections if type(c) is cls]


def test_plot_complex_draws_triangles_and_edges(data):
    fig = plot_complex(data)
    assert isinstance(fig, matplotlib.figure.Figure)
    ax = fig.axes[0]
    (triangles, ) = _collections(ax, PolyCollection)
    assert len(triangles.get_paths()) == 2
    (edges, ) = _collections(ax, LineCollection)
    assert len(edges.get_segments()) == 6
    np.testing.assert_allclose(edges.get_segments()[5], [[0, 1], [2, 1]])


def test_plot_complex_arrows(data):
    signal = torch.tensor([1.0, 0.0, -2.0, 0.0, 0.0, 0.5])
    fig = plot_complex(data, edge_signal=signal.view(-1, 1))
    ax = fig.axes[0]
    (quiver, ) = _collections(ax, Quiver)
    assert quiver.N == 3  # one arrow per non-zero entry
    # The negative value on {1, 2} runs against the orientation: 2 -> 1.
    np.testing.assert_allclose(quiver.X, [0.0, 0.0, 0.0])
    np.testing.assert_allclose(quiver.Y, [0.0, 1.0, 1.0])
    np.testing.assert_allclose(quiver.U, [1.0, 1.0, 2.0])
    np.testing.assert_allclose(quiver.V, [0.0, -1.0, 0.0])
    np.testing.assert_allclose(quiver.get_array(), [1.0, 2.0, 0.5])
    assert len(fig.axes) == 2  # colour bar


def test_plot_complex_widths(data):
    signal = np.array([1.0, 0.0, -2.0, 0.0, 0.0, 0.5])
    fig = plot_complex(data, edge_signal=signal, signal_style="widths",
                       colorbar=False)
    ax = fig.axes[0]
    lines = _collections(ax, LineCollection)
    assert len(lines) == 2 and len(fig.axes) == 1
    widths = lines[1].get_linewidths()
    assert len(lines[1].get_segments()) == 3
    assert widths[1] > widths[0] > widths[2]


def test_plot_complex_attention(data):
    index = torch.tensor([[0, 1, 2, 2], [2, 2, 0, 2]])
    weight = torch.tensor([[0.5, 0.1], [0.2, 0.2], [1.0, 1.0], [0.3, 0.3]])
    fig = plot_complex(data, attention=(index, weight))
    lines = _collections(fig.axes[0], LineCollection)
    assert len(lines) == 2
    attention = lines[1]
    segments = attention.get_segments()
    assert len(segments) == 3  # the self-pair (2, 2) is not drawn
    np.testing.assert_allclose(segments[0], [[0.5, 0.0], [0.5, 0.5]])
    np.testing.assert_allclose(attention.get_colors()[:, 3], [0.3, 0.2, 1.0])


def test_plot_complex_attention_top_k(data):
    index = torch.tensor([[0, 1, 2, 2, 3], [2, 2, 0, 2, 4]])
    weight = torch.tensor([0.3, 0.2, 1.0, 5.0, 0.3])
    fig = plot_complex(data, attention=(index, weight), attention_top_k=2)
    attention = _collections(fig.axes[0], LineCollection)[1]
    segments = attention.get_segments()
    # the two largest off-diagonal weights, 1.0 and the first 0.3 (the self-pair
    # (2, 2) is never drawn), in their original order; opacity relative to the max
    assert len(segments) == 2
    np.testing.assert_allclose(segments[1], [[0.5, 0.5], [0.5, 0.0]])
    np.testing.assert_allclose(attention.get_colors()[:, 3], [0.06, 0.2])


def test_plot_complex_attention_top_k_above_the_count_draws_all(data):
    index = torch.tensor([[0, 1], [2, 2]])
    fig = plot_complex(data, attention=(index, torch.ones(2)), attention_top_k=10)
    assert len(_collections(fig.axes[0], LineCollection)[1].get_segments()) == 2


def test_plot_complex_names_the_weights_of_batched_signals(data):
    # A conv's weights for signals [B, N, F] are [B, nnz, heads]: the message
    # said only what it expects.
    with pytest.raises(ValueError, match=r"got index \[2, 2\] and weight \[3, 2, 1\] "
                                         r"\(the weights of signals .*weight\[b\]"):
        plot_complex(data, attention=(torch.tensor([[0, 1], [2, 0]]),
                                      torch.ones(3, 2, 1)))


@pytest.mark.parametrize("top_k, error", [(0, ValueError), (True, TypeError),
                                          (2.5, TypeError)])
def test_plot_complex_bad_attention_top_k(data, top_k, error):
    with pytest.raises(error, match="'attention_top_k' must be"):
        plot_complex(data, attention=(torch.tensor([[0], [2]]), torch.ones(1)),
                     attention_top_k=top_k)


NAN = float("nan")
BAD_PLOTS = {
    "attention-order-bool": (dict(attention_order=True), TypeError,
                             "'attention_order' must be an int, not bool"),
    "attention-order-negative": (dict(attention_order=-1), ValueError,
                                 "'attention_order' must be at least 0"),
    "pos-nan": (dict(pos=torch.tensor([[NAN, 0.0]] * 5)), ValueError,
                "'pos' has NaN or infinite entries"),
    "pos-strings": (dict(pos=np.array([["a", "b"]] * 5)), TypeError,
                    "'pos' must be numeric"),
    "edge-signal-inf": (dict(edge_signal=torch.tensor([1.0, float("inf"), 0, 0, 0,
                                                       0])), ValueError,
                        "'edge_signal' has NaN or infinite entries"),
    # (a truthy 'no' drew a colour bar; an int failed inside matplotlib)
    "colorbar-str": (dict(colorbar="no"), TypeError,
                     "'colorbar' must be True or False, not str"),
    "ax-int": (dict(ax=1), TypeError, "'ax' must be matplotlib Axes, not int"),
    "attention-weight-nan": (dict(attention=(torch.tensor([[0], [2]]),
                                             torch.tensor([NAN]))), ValueError,
                             "'attention weight' has NaN or infinite entries"),
}


@pytest.mark.parametrize("name", BAD_PLOTS)
def test_plot_complex_bad_values(data, name, assert_rejected):
    kwargs, error, pattern = BAD_PLOTS[name]
    assert_rejected(plot_complex, (data, ), kwargs, error, pattern)


def test_plot_complex_into_given_axes(data):
    fig, ax = plt.subplots()
    assert plot_complex(data, ax=ax, title="t") is fig
    assert ax.get_title() == "t"


def test_plot_complex_bad_input(data):
    with pytest.raises(ValueError, match="one value per edge"):
        plot_complex(data, edge_signal=torch.ones(5))
    with pytest.raises(ValueError, match="signal_style"):
        plot_complex(data, edge_signal=torch.ones(6), signal_style="dots")
    with pytest.raises(ValueError, match="shape"):
        plot_complex(data, pos=torch.ones(5, 3))
    with pytest.raises(ValueError, match="vertex ids up to 4"):
        plot_complex(data, pos=POS[:3])
    with pytest.raises(ValueError, match="needs vertex positions"):
        plot_complex(SimpleNamespace(simplices_1=EDGES))
    with pytest.raises(TypeError, match="'pos' must be a tensor"):
        plot_complex(data, pos=[[0.0, 0.0]])
    with pytest.raises(ValueError, match="refers to 1-simplex 9"):
        plot_complex(data, attention=(torch.tensor([[0], [9]]),
                                      torch.ones(1)))
    # a negative id drew a segment from the last edge; float ids were truncated, NaN
    # failed inside NumPy
    with pytest.raises(ValueError, match="refers to 1-simplex -1"):
        plot_complex(data, attention=(torch.tensor([[-1], [0]]), torch.ones(1)))
    for index in (torch.tensor([[1.7], [0.2]]), torch.tensor([[float('nan')], [0.]])):
        with pytest.raises(TypeError, match="attention index must hold integers, got "
                           "float32"):
            plot_complex(data, attention=(index, torch.ones(1)))


def test_plot_complex_draws_bfloat16_values(data):
    # (NumPy has no bfloat16: the conversion failed inside torch)
    index = torch.tensor([[0, 1, 2, 2], [2, 2, 0, 2]])
    weight = torch.tensor([0.5, 0.25, 1.0, 0.5])
    expected = plot_complex(data, edge_signal=torch.arange(6.), attention=(index, weight))
    got = plot_complex(data, edge_signal=torch.arange(6.).bfloat16(), pos=POS.bfloat16(),
                       attention=(index, weight.bfloat16()))
    for a, b in zip(_collections(expected.axes[0], LineCollection),
                    _collections(got.axes[0], LineCollection)):
        np.testing.assert_allclose(np.asarray(a.get_segments()),
                                   np.asarray(b.get_segments()), atol=1e-2)
        np.testing.assert_allclose(a.get_colors(), b.get_colors())


def test_plot_complex_without_matplotlib(data, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    with pytest.raises(ImportError, match=r"pip install \"\.\[plot\]\""):
        plot_complex(data)


def test_plot_complex_with_a_dataset_item(tmp_path):
    from torch_geometric_san.datasets import SyntheticFlowDataset

    dataset = SyntheticFlowDataset(str(tmp_path), split="test", num_test=2,
                                   log=False)
    data = dataset[0]
    index, weight = data.up_laplacian(1)  # stands in for attention weights
    fig = plot_complex(data, edge_signal=data.x_1, attention=(index,
                                                              weight.abs()))
    ax = fig.axes[0]
    (triangles, ) = _collections(ax, PolyCollection)
    assert len(triangles.get_paths()) == data.num_simplices(2)
    (quiver, ) = _collections(ax, Quiver)
    assert quiver.N == int((data.x_1 != 0).sum())
    lines = _collections(ax, LineCollection)
    assert len(lines[0].get_segments()) == data.num_simplices(1)
    assert len(lines[1].get_segments()) == int((index[0] != index[1]).sum())


@pytest.mark.parametrize('kwargs, match', [
    (dict(edge_signal=torch.ones(5)), "one value per edge"),
    (dict(attention=(torch.tensor([[0], [9]]), torch.ones(1))), "refers to 1-simplex 9"),
    (dict(edge_signal=torch.ones(6), cmap='no such map'), "'cmap' must name a matplotlib"),
    (dict(attention_color='not a colour'), "'attention_color' must be a matplotlib "
                                           "colour"),
])
def test_a_refused_call_draws_nothing(data, kwargs, match):
    # the complex was drawn before the checks: into the caller's axes, or into a
    # figure left open
    fig, ax = plt.subplots()
    with pytest.raises(ValueError, match=match):
        plot_complex(data, ax=ax, **kwargs)
    assert len(ax.collections) == 0 and plt.get_fignums() == [fig.number]
    with pytest.raises(ValueError, match=match):
        plot_complex(data, **kwargs)
    assert plt.get_fignums() == [fig.number]


def test_positions_must_be_one_per_vertex(data):
    # isolated vertices were dropped, or extra points drawn
    data.num_nodes = 6
    for pos in (POS, torch.cat([POS, POS])):
        with pytest.raises(ValueError, match=f"'pos' has {len(pos)} rows but the "
                                             f"complex has 6 vertices"):
            plot_complex(data, pos=pos)
    fig = plot_complex(data, pos=torch.cat([POS, torch.ones(1, 2)]))
    assert len(fig.axes[0].collections[-1].get_offsets()) == 6
