from torch_geometric_san.nn.conv.san_conv import SANConv, _layer_repr, _special_case


class SATConv(SANConv):
    r"""The simplicial attention layer of `"Simplicial Attention Networks"
    <https://arxiv.org/abs/2204.09455>`_ (Goh et al., with sum aggregation),
    as the special case of :class:`SANConv` in the SAN paper: one attention
    mechanism shared by the upper and the lower neighbourhoods, one filter tap
    per branch and no harmonic filter,

    .. math::
        \mathbf{Z}^{\prime} = \mathbf{A}^{(d)}\mathbf{Z}\mathbf{W}^{(d)} +
        \mathbf{A}^{(u)}\mathbf{Z}\mathbf{W}^{(u)},

    where :math:`\mathbf{A}^{(u)}` and :math:`\mathbf{A}^{(d)}` are computed
    with the same attention vectors :math:`\mathbf{a}` (but their own
    neighbourhoods and filtered features).

    Args:
        in_channels (int): Size of each input sample, or :obj:`-1` (lazy
            initialisation, see :class:`SANConv`).
        out_channels (int): Size of each output sample (per head).
        heads (int, optional): Number of attention heads. (default: :obj:`1`)
        concat (bool, optional): Concatenate (:obj:`True`) or average the
            heads. (default: :obj:`True`)
        negative_slope (float, optional): LeakyReLU slope. (default: :obj:`0.2`)
        dropout (float, optional): Attention dropout. (default: :obj:`0.0`)
        **kwargs (optional): Further arguments of :class:`SANConv`
            (:obj:`add_self_loops`, :obj:`bias`, :obj:`orientation_equivariant`,
            :obj:`gain`, ...).

    Example:
        >>> import torch
        >>> from torch_geometric_san.data import SimplicialComplexData
        >>> data = SimplicialComplexData.from_simplices([[0, 1, 2]], close=True)
        >>> conv = SATConv(3, 8)
        >>> conv(torch.randn(3, 3), data.operators(1)).shape
        torch.Size([3, 8])
    """
    def __init__(self, in_channels: int, out_channels: int, heads: int = 1,
                 concat: bool = True, negative_slope: float = 0.2,
                 dropout: float = 0.0, **kwargs):
        super().__init__(
            in_channels, out_channels, heads=heads, concat=concat,
            negative_slope=negative_slope, dropout=dropout,
            **_special_case(type(self).__name__, kwargs, J_up=1, J_down=1,
                            J_harmonic=None, attention="shared"))

    def __repr__(self) -> str:
        return _layer_repr(self, 'heads')
