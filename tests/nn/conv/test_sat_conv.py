import torch
import torch.nn.functional as F

from torch_geometric_san.nn import SANConv, SATConv


def dense_attention(a_src, a_dst, h, L, slope=0.2):
    """softmax_j LeakyReLU(a_dst . h_i + a_src . h_j) over the pattern of L."""
    n = L.size(0)
    eye = torch.eye(n, dtype=torch.bool)
    mask = ((L != 0) & ~eye) | (eye & (L != 0).any(dim=1, keepdim=True))
    score = F.leaky_relu((h @ a_dst)[:, None] + (h @ a_src)[None, :], slope)
    return torch.softmax(score.masked_fill(~mask, float('-inf')), dim=1).nan_to_num(0.0)


def test_sat_shares_one_attention(kit):
    x, ops, (Lu, Ld, _) = kit.setup_edges(seed=3)
    conv = SATConv(3, 4).double()
    assert set(conv.att.keys()) == {'shared_src', 'shared_dst'}
    a_src, a_dst = conv.att['shared_src'].view(-1), conv.att['shared_dst'].view(-1)
    Wu, Wd = kit.tap_weights(conv)
    hu, hd = x @ Wu, x @ Wd
    expected = (dense_attention(a_src, a_dst, hu, Lu) @ hu
                + dense_attention(a_src, a_dst, hd, Ld) @ hd + conv.bias)
    assert torch.allclose(conv(x, ops), expected, atol=1e-12)


def test_separate_attention_differs_from_shared(kit):
    x, ops, _ = kit.setup_edges(seed=4)
    torch.manual_seed(0)
    shared = SATConv(3, 4).double()
    separate = SANConv(3, 4, J_up=1, J_down=1, J_harmonic=None).double()
    separate.lin.weight.data.copy_(shared.lin.weight.data)
    for branch in ('up', 'down'):
        for role in ('_src', '_dst'):
            separate.att[branch + role].data.copy_(shared.att['shared' + role].data)
    assert torch.allclose(separate(x, ops), shared(x, ops))
    separate.att['down_src'].data.mul_(-3.0)
    assert not torch.allclose(separate(x, ops), shared(x, ops))


def test_sat_repr():
    assert str(SATConv(3, 4, heads=2)) == 'SATConv(3, 4, heads=2)'
