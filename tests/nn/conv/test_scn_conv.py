import torch

from torch_geometric_san.nn import SCNConv


def test_scn_is_scnn_of_order_one(kit):
    x, ops, (Lu, Ld, _) = kit.setup_edges(seed=1)
    Lu, Ld = kit.scaled(Lu), kit.scaled(Ld)  # normalize=True
    conv = SCNConv(3, 4, bias=False).double()
    W = kit.tap_weights(conv)
    expected = Lu @ x @ W[0] + Ld @ x @ W[1] + x @ W[2]
    assert torch.allclose(conv(x, ops), expected, atol=1e-12)
    assert (conv.J_up, conv.J_down, conv.J_harmonic, conv.attention) == (1, 1, 0, None)
    assert str(conv) == 'SCNConv(3, 4, bias=False)'
