import torch

from torch_geometric_san.nn import SNNConv


def test_snn_convolves_with_the_hodge_laplacian(kit):
    x, ops, (Lu, Ld, _) = kit.setup_edges(seed=2)
    Lu, Ld = kit.scaled(Lu), kit.scaled(Ld)  # normalize=True
    conv = SNNConv(3, 4).double()
    torch.nn.init.normal_(conv.bias)
    (W, ) = kit.tap_weights(conv)  # one weight, shared by both branches
    expected = (Ld + Lu) @ x @ W + conv.bias
    assert torch.allclose(conv(x, ops), expected, atol=1e-12)
    assert str(conv) == 'SNNConv(3, 4)'


def test_without_normalisation_it_convolves_with_the_hodge_laplacian(kit):
    x, ops, (Lu, Ld, _) = kit.setup_edges(seed=3)
    conv = SNNConv(3, 4, normalize=False, bias=False).double()
    (W, ) = kit.tap_weights(conv)
    torch.testing.assert_close(conv(x, ops), (Ld + Lu) @ x @ W)
