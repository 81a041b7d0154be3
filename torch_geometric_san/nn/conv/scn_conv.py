from torch_geometric_san.nn.conv.san_conv import _layer_repr, _special_case
from torch_geometric_san.nn.conv.scnn_conv import SCNNConv


class SCNConv(SCNNConv):
    r"""The simplicial convolution of `"Simplicial 2-Complex Convolutional
    Neural Networks" <https://arxiv.org/abs/2012.06010>`_ (Bunch et al.) and
    `"HodgeNet" <https://arxiv.org/abs/1912.02354>`_ (Roddenberry and
    Segarra) as the special case of :class:`SANConv` in the SAN paper: no
    attention, :math:`J_u = J_d = 1` and :math:`J_h = 0`,

    .. math::
        \mathbf{Z}^{\prime} = \mathbf{L}^{(d)}\mathbf{Z}\mathbf{W}^{(d)} +
        \mathbf{L}^{(u)}\mathbf{Z}\mathbf{W}^{(u)} + \mathbf{Z}\mathbf{W}^{(h)}.

    The Laplacians are normalised as in :class:`SCNNConv`.

    Args:
        in_channels (int): Size of each input sample, or :obj:`-1` (lazy
            initialisation, see :class:`SANConv`).
        out_channels (int): Size of each output sample.
        **kwargs (optional): Further arguments of :class:`SANConv`
            (:obj:`bias`, :obj:`normalize`, :obj:`gain`, ...).

    Example:
        >>> import torch
        >>> from torch_geometric_san.data import SimplicialComplexData
        >>> data = SimplicialComplexData.from_simplices([[0, 1, 2]], close=True)
        >>> conv = SCNConv(3, 8)
        >>> conv(torch.randn(3, 3), data.operators(1)).shape
        torch.Size([3, 8])
    """
    def __init__(self, in_channels: int, out_channels: int, **kwargs):
        super().__init__(
            in_channels, out_channels,
            **_special_case(type(self).__name__, kwargs, J_up=1, J_down=1,
                            J_harmonic=0))

    def __repr__(self) -> str:
        return _layer_repr(self, heads=1, normalize=True)
