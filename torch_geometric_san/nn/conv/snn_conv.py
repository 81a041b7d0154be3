from torch_geometric_san.nn.conv.san_conv import SANConv, _layer_repr, _special_case


class SNNConv(SANConv):
    r"""The simplicial convolution of `"Simplicial Neural Networks"
    <https://arxiv.org/abs/2010.03633>`_ (Ebli et al.) as the special case of
    :class:`SANConv` in the SAN paper: no attention, no harmonic filter,
    :math:`J_u = J_d = 1` and shared filter weights
    :math:`\mathbf{W}^{(d)} = \mathbf{W}^{(u)} = \mathbf{W}`:

    .. math::
        \mathbf{Z}^{\prime} = \left(\frac{\mathbf{L}^{(d)}}{\lambda_{\max}^{(d)}}
        + \frac{\mathbf{L}^{(u)}}{\lambda_{\max}^{(u)}}\right)\mathbf{Z}\mathbf{W}.

    The upper and lower Laplacians are divided by their own largest eigenvalues,
    per complex (:obj:`normalize=True`, the default,
    :meth:`~torch_geometric_san.sparse.SparseOperator.scaled`; the eigenvalues
    come with :meth:`~torch_geometric_san.data.SimplicialComplexData.operators`),
    so that the filter stays bounded. With :obj:`normalize=False` the values are
    used as given, and the layer is a convolution with the Hodge Laplacian
    :math:`\mathbf{L} = \mathbf{L}^{(d)} + \mathbf{L}^{(u)}`,
    :math:`\mathbf{Z}^{\prime} = \mathbf{L}\mathbf{Z}\mathbf{W}`.

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
        >>> conv = SNNConv(3, 8)
        >>> conv(torch.randn(3, 3), data.operators(1)).shape
        torch.Size([3, 8])
    """
    def __init__(self, in_channels: int, out_channels: int, **kwargs):
        kwargs.setdefault('normalize', True)
        super().__init__(
            in_channels, out_channels,
            **_special_case(type(self).__name__, kwargs, J_up=1, J_down=1,
                            J_harmonic=None, attention=None,
                            shared_weights=True))

    def __repr__(self) -> str:
        return _layer_repr(self, heads=1, normalize=True, shared_weights=True)
