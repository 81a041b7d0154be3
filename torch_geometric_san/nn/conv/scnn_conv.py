from torch_geometric_san.nn.conv.san_conv import SANConv, _layer_repr, _special_case


class SCNNConv(SANConv):
    r"""The simplicial convolutional layer of `"Simplicial Convolutional
    Neural Networks" <https://arxiv.org/abs/2110.02585>`_ (Yang et al.), the
    special case of :class:`SANConv` without attention and with
    :math:`J_h = 0` (eq. SCN_layer_matrix of the SAN paper with
    :math:`\widehat{\mathbf{P}} = \mathbf{I}`):

    .. math::
        \mathbf{Z}^{\prime} = \sum_{p=1}^{J_d}\left(\mathbf{L}^{(d)}\right)^p
        \mathbf{Z}\mathbf{W}^{(d)}_p + \sum_{p=1}^{J_u}
        \left(\mathbf{L}^{(u)}\right)^p\mathbf{Z}\mathbf{W}^{(u)}_p +
        \mathbf{Z}\mathbf{W}^{(h)}.

    The upper and lower Laplacians are divided by their largest eigenvalues, per
    complex (:obj:`normalize=True`, :meth:`~torch_geometric_san.sparse.SparseOperator.scaled`;
    the eigenvalues come with :meth:`~torch_geometric_san.data.SimplicialComplexData.operators`),
    so that the filter powers stay bounded; :obj:`normalize=False` uses the
    values as given.

    Args:
        in_channels (int): Size of each input sample, or :obj:`-1` (lazy
            initialisation, see :class:`SANConv`).
        out_channels (int): Size of each output sample.
        J_up (int, optional): Upper filter order. (default: :obj:`1`)
        J_down (int, optional): Lower filter order. (default: :obj:`1`)
        **kwargs (optional): Further arguments of :class:`SANConv`
            (:obj:`bias`, :obj:`normalize`, :obj:`gain`, ...).

    Example:
        >>> import torch
        >>> from torch_geometric_san.data import SimplicialComplexData
        >>> data = SimplicialComplexData.from_simplices([[0, 1, 2]], close=True)
        >>> conv = SCNNConv(3, 8, J_up=2, J_down=2)
        >>> conv(torch.randn(3, 3), data.operators(1)).shape
        torch.Size([3, 8])
    """
    def __init__(self, in_channels: int, out_channels: int, J_up: int = 1,
                 J_down: int = 1, **kwargs):
        kwargs.setdefault('J_harmonic', 0)
        kwargs.setdefault('normalize', True)
        super().__init__(
            in_channels, out_channels, J_up=J_up, J_down=J_down,
            **_special_case(type(self).__name__, kwargs, attention=None))

    def __repr__(self) -> str:
        return _layer_repr(self, 'J_up', 'J_down', J_harmonic=0, heads=1,
                           normalize=True)
