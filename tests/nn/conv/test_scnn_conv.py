import numpy as np
import pytest
import torch

from torch_geometric_san.nn import SANConv, SATConv, SCNConv, SCNNConv, SNNConv


@pytest.mark.parametrize('J_up,J_down', [(1, 1), (2, 3), (3, 1)])
def test_scnn_is_the_scn_layer_formula(kit, J_up, J_down):
    # eq. SCN_layer_matrix of the paper with P = I (J_h = 0), no attention.
    x, ops, (Lu, Ld, _) = kit.setup_edges(seed=0)
    Lu, Ld = kit.scaled(Lu), kit.scaled(Ld)  # normalize=True
    conv = SCNNConv(3, 4, J_up=J_up, J_down=J_down).double()
    torch.nn.init.normal_(conv.bias)
    W = kit.tap_weights(conv)
    expected = x @ W[-1] + conv.bias
    for p in range(1, J_up + 1):
        expected += torch.linalg.matrix_power(Lu, p) @ x @ W[p - 1]
    for p in range(1, J_down + 1):
        expected += torch.linalg.matrix_power(Ld, p) @ x @ W[J_up + p - 1]
    assert torch.allclose(conv(x, ops), expected, atol=1e-10)


def test_scnn_with_harmonic_filter(kit):
    x, ops, (Lu, Ld, L) = kit.setup_edges(seed=5)
    Lu, Ld = kit.scaled(Lu), kit.scaled(Ld)  # normalize=True
    conv = SCNNConv(3, 4, J_up=1, J_down=1, J_harmonic=4, eps=0.7, bias=False).double()
    W = kit.tap_weights(conv)
    P = torch.linalg.matrix_power(torch.eye(L.size(0), dtype=L.dtype) - 0.7 * L, 4)
    expected = Lu @ x @ W[0] + Ld @ x @ W[1] + P @ x @ W[2]
    assert torch.allclose(conv(x, ops), expected, atol=1e-12)


def test_scnn_repr():
    assert str(SCNNConv(3, 4, J_up=2, J_down=3)) == 'SCNNConv(3, 4, J_up=2, J_down=3)'


def test_repr_names_what_changes_the_layer():
    # SCNNConv(3, 4, J_up=1, J_down=1) printed for each of these
    assert str(SCNNConv(3, 4, J_harmonic=3)) == 'SCNNConv(3, 4, J_up=1, J_down=1, J_harmonic=3)'
    assert str(SCNNConv(3, 4, J_harmonic=None)) == \
        'SCNNConv(3, 4, J_up=1, J_down=1, J_harmonic=None)'
    assert str(SCNNConv(3, 4, ensemble=5)) == 'SCNNConv(3, 4, J_up=1, J_down=1, ensemble=5)'
    assert str(SCNConv(3, 4, heads=2)) == 'SCNConv(3, 4, heads=2)'
    assert str(SNNConv(3, 4, heads=2)) == 'SNNConv(3, 4, heads=2)'
    assert str(SATConv(3, 4, orientation_equivariant=True)) == \
        'SATConv(3, 4, heads=1, orientation_equivariant=True)'
    assert str(SCNNConv(3, 4, heads=2, normalize=False)) == \
        'SCNNConv(3, 4, J_up=1, J_down=1, heads=2, normalize=False)'
    assert str(SNNConv(3, 4, normalize=False)) == 'SNNConv(3, 4, normalize=False)'


@pytest.mark.parametrize('cls', [SCNNConv, SCNConv, SNNConv])
@pytest.mark.parametrize('kwargs', [dict(add_self_loops=False),
                                    dict(orientation_equivariant=True)])
def test_attention_settings_of_a_layer_without_attention_are_refused(cls, kwargs):
    # (session 28: accepted and ignored, as dropout and negative_slope were)
    with pytest.raises(ValueError, match=f"{cls.__name__} has no attention "
                                         r"\(attention=None\), so 'add_self_loops' and "
                                         "'orientation_equivariant'"):
        cls(3, 4, **kwargs)


@pytest.mark.parametrize('cls', [SCNNConv, SCNConv, SNNConv])
@pytest.mark.parametrize('kwargs', [dict(dropout=0.9), dict(negative_slope=0.1)])
def test_attention_arguments_of_a_layer_without_attention_are_refused(cls, kwargs):
    # accepted and ignored: no regularisation, no warning
    with pytest.raises(ValueError, match=f"{cls.__name__} has no attention "
                                         r"\(attention=None\), so 'dropout' and "
                                         "'negative_slope'"):
        cls(3, 4, **kwargs)
    with pytest.raises(ValueError, match="SANConv has no attention"):
        SANConv(3, 4, attention=None, **kwargs)
    cls(3, 4, negative_slope=np.float32(0.2), dropout=0.0)  # the defaults, as given
