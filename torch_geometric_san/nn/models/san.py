from collections.abc import Mapping
from typing import Any, Callable, Dict, Optional, Tuple, Type, Union

import torch
from torch import Tensor

from torch_geometric.data import Batch, Data
from torch_geometric.nn import MLP, global_add_pool, global_max_pool, global_mean_pool
from torch_geometric.nn.inits import reset
from torch_geometric.nn.resolver import activation_resolver
from torch_geometric.typing import OptTensor

from torch_geometric_san.nn.conv import SANConv, SATConv, SCNConv, SCNNConv, SNNConv
from torch_geometric_san.nn.functional import dropout, odd_activation
from torch_geometric_san.sparse import SimplicialOperators, as_operators
from torch_geometric_san.utils.validation import (check_batch, check_bool, check_counts,
                                                   check_dropout, check_in_channels,
                                                   check_int)

READOUTS: Dict[str, Callable[..., Tensor]] = {
    'sum': global_add_pool,
    'mean': global_mean_pool,
    'max': global_max_pool,
}


def _resolve_act(act: Union[str, Callable, None]) -> Tuple[Union[str, Callable, None],
                                                            torch.nn.Module]:
    # (the activation as PyG's MLP takes it, None for the identity; the module)
    if act is None or (isinstance(act, str) and act.lower() == 'identity'):
        return None, torch.nn.Identity()  # PyG's resolver has no identity
    if not (isinstance(act, str) or callable(act)):  # (PyG's resolver passes it on)
        raise TypeError(f"'act' must be an activation's name, a callable or None "
                        f"(got {type(act).__name__})")
    return act, activation_resolver(act)


def _check_conv_kwargs(conv_kwargs: Any) -> Dict[str, Any]:
    # The arguments of every layer, as a dict (a copy).
    if conv_kwargs is not None and not isinstance(conv_kwargs, Mapping):
        raise TypeError(f"'conv_kwargs' must be a dict of the layers' arguments "
                        f"(got {type(conv_kwargs).__name__})")
    return dict(conv_kwargs or {})


def _reset_activations(*modules: Optional[torch.nn.Module]) -> None:
    # A learnable activation (PReLU) of the network or of its readout MLP, which
    # PyG's MLP does not reset.
    for module in modules:
        if module is not None:
            reset(module)


class SAN(torch.nn.Module):
    r"""A Simplicial Attention Network: a stack of
    :class:`~torch_geometric_san.nn.conv.SANConv` layers on
    the :math:`k`-simplices of a complex (:obj:`order` :math:`= k`), each
    followed by an activation and dropout, and optionally a readout that pools
    the simplices of each complex (sum, mean or max), or concatenates their
    features (flatten), and classifies the result with an MLP.

    Without readout the model maps simplex features to :obj:`out_channels`
    per simplex (the last layer has no activation and averages its heads);
    with a readout every layer has :obj:`hidden_channels` and the MLP maps the
    pooled features to :obj:`out_channels` (logits for a cross-entropy loss,
    for instance).

    The baselines :class:`SAT`, :class:`SCNN`, :class:`SNN` and :class:`SCN`
    are the same network with another layer.

    .. math::
        \mathbf{Z}^{(l+1)} = \mathrm{dropout}\left(\sigma\left(
        \mathrm{SANConv}_l\left(\mathbf{Z}^{(l)}\right)\right)\right),
        \qquad \mathbf{y} = \mathrm{MLP}\left(\mathrm{readout}\left(
        \mathbf{Z}^{(L)}\right)\right).

    Args:
        in_channels (int): Size of each input sample, or :obj:`-1` to take it
            from the first input (lazy initialisation of the first layer, see
            :class:`~torch_geometric_san.nn.conv.SANConv`).
        hidden_channels (int): Size of each hidden sample (per head).
        num_layers (int): Number of convolution layers.
        out_channels (int): Size of each output sample (per simplex, or per
            complex with a readout).
        order (int, optional): The order :math:`k` of the simplices that carry
            the signal, used when the input is a
            :class:`~torch_geometric_san.data.SimplicialComplexData`.
            (default: :obj:`1`)
        readout (str, optional): :obj:`None` (per-simplex output),
            :obj:`"sum"`, :obj:`"mean"`, :obj:`"max"`, or :obj:`"flatten"`:
            the features of the :obj:`num_simplices` simplices of each complex
            concatenated in their order, for signals that all live on one
            complex of fixed size (a position-aware readout, as in the SAN
            authors' trajectory experiments; not invariant to a relabelling
            of the simplices). (default: :obj:`None`)
        readout_layers (int, optional): Number of layers of the readout MLP
            (:obj:`1`: a linear map); its hidden layers have the width of the
            pooled features (:obj:`hidden_channels` per head for the
            flatten readout too). (default: :obj:`2`)
        act (str or Callable, optional): Activation after each layer, e.g.
            :obj:`"relu"`, :obj:`"tanh"` or :obj:`"identity"`.
            (default: :obj:`"relu"`)
        dropout (float, optional): Dropout probability of the features after
            each layer (:func:`~torch_geometric_san.nn.functional.dropout`)
            and inside the readout MLP. (default: :obj:`0.0`)
        conv_kwargs (dict, optional): Arguments of every layer, e.g.
            :obj:`dict(J_up=3, J_down=3, J_harmonic=5, eps=0.9)` or
            :obj:`dict(gain=2 ** 0.5)`; :obj:`dict(ensemble=E)` makes the
            network :math:`E` independent networks trained as one, input
            :math:`(E, N, F_{in})` (per-simplex output only).
            (default: :obj:`None`)
        invariant_readout (bool, optional): If :obj:`True`, the readout pools
            the absolute values of the simplex features. Flipping the
            orientation of simplices flips the signs of the matching rows of
            orientation-equivariant layers (:obj:`conv_kwargs=dict(
            orientation_equivariant=True, bias=False)`) followed by an odd
            activation (:obj:`"identity"`, :obj:`"tanh"`), so the output of
            such a network then does not depend on the orientations;
            with :obj:`odd_act`, for any activation.
            (default: :obj:`False`)
        odd_act (bool, optional): If :obj:`True`, the activation after each
            layer is applied to each simplex's features in the orientation
            in which their entry of largest magnitude is positive, and the
            result flipped back
            (:func:`~torch_geometric_san.nn.functional.odd_activation`): an
            odd function for any :obj:`act`, so that ReLU too keeps
            orientation-equivariant layers equivariant. It changes nothing
            for odd activations. (default: :obj:`False`)
        num_simplices (int, optional): The number of :math:`k`-simplices of
            every complex, needed by the flatten readout.
            (default: :obj:`None`)

    Example:
        >>> import torch
        >>> from torch_geometric_san.data import SimplicialComplexData
        >>> data = SimplicialComplexData.from_simplices(
        ...     [[0, 1, 2], [1, 2, 3]], close=True, x_1=torch.randn(5, 2))
        >>> model = SAN(2, 16, num_layers=2, out_channels=1,
        ...             conv_kwargs=dict(J_up=2, J_down=2, J_harmonic=3))
        >>> model(data).shape
        torch.Size([5, 1])
        >>> model = SAN(2, 4, num_layers=1, out_channels=2, readout='sum')
        >>> model(data).shape  # logits of the one complex
        torch.Size([1, 2])
        >>> model = SAN(2, 4, num_layers=1, out_channels=2, readout='flatten',
        ...             num_simplices=5)
        >>> model(torch.randn(8, 5, 2), data.operators(1)).shape  # 8 signals
        torch.Size([8, 2])
    """
    conv_cls: Type[SANConv] = SANConv

    def __init__(
        self,
        in_channels: int,
        hidden_channels: int,
        num_layers: int,
        out_channels: int,
        order: int = 1,
        readout: Optional[str] = None,
        readout_layers: int = 2,
        act: Union[str, Callable, None] = 'relu',
        dropout: float = 0.0,
        conv_kwargs: Optional[Dict[str, Any]] = None,
        invariant_readout: bool = False,
        num_simplices: Optional[int] = None,
        odd_act: bool = False,
    ):
        super().__init__()
        in_channels = check_in_channels(in_channels, "'in_channels'")
        # (the checked values are kept: NumPy's ints and floats failed inside
        # torch and PyG's MLP later)
        hidden_channels, num_layers, out_channels, readout_layers = check_counts(
            hidden_channels=hidden_channels, num_layers=num_layers,
            out_channels=out_channels, readout_layers=readout_layers)
        order = check_int(order, "'order'", minimum=0)
        if readout is not None and readout not in tuple(READOUTS) + ('flatten', ):
            raise ValueError(f"'readout' must be None, 'flatten' or one of "
                             f"{sorted(READOUTS)} (got {readout!r})")
        if readout == 'flatten':
            if num_simplices is None:
                raise ValueError("the flatten readout needs 'num_simplices', the "
                                 "positive number of simplices of each complex")
            num_simplices = check_int(num_simplices, "'num_simplices'", minimum=1)
        elif num_simplices is not None:  # (accepted and ignored, unchecked)
            raise ValueError(f"'num_simplices' is for readout='flatten' (got readout="
                             f"{readout!r}, which takes complexes of any size)")
        dropout = check_dropout(dropout, "'dropout'")
        check_bool(invariant_readout, 'invariant_readout')
        check_bool(odd_act, 'odd_act')
        if invariant_readout and readout is None:
            raise ValueError("'invariant_readout' needs a readout")
        conv_kwargs = _check_conv_kwargs(conv_kwargs)
        if conv_kwargs.get('ensemble') is not None and readout is not None:
            raise ValueError("an ensemble of layers (conv_kwargs['ensemble']) needs "
                             "readout=None: the readout MLP has one set of weights")
        self.in_channels = in_channels
        self.hidden_channels = hidden_channels
        self.num_layers = num_layers
        self.out_channels = out_channels
        self.order = order
        self.readout = readout
        self.invariant_readout = invariant_readout
        self.odd_act = odd_act
        self.num_simplices = num_simplices
        self.dropout = dropout
        act, self.act = _resolve_act(act)
        conv_kwargs = dict(conv_kwargs or {})

        self.convs = torch.nn.ModuleList()
        channels = in_channels
        for layer in range(num_layers):
            last = layer == num_layers - 1 and readout is None
            kwargs = dict(conv_kwargs, concat=False) if last else conv_kwargs
            conv = self.conv_cls(channels, out_channels if last else hidden_channels,
                                 **kwargs)
            self.convs.append(conv)
            channels = conv.out_channels * (conv.heads if conv.concat else 1)

        self.mlp: Optional[MLP] = None
        if readout is not None:
            first = channels * (num_simplices if readout == 'flatten' else 1)
            self.mlp = MLP([first] + [channels] * (readout_layers - 1) +
                           [out_channels], dropout=dropout, act=act, norm=None)

    def reset_parameters(self):
        r"""Resets all learnable parameters of the module."""
        for conv in self.convs:
            conv.reset_parameters()
        if self.mlp is not None:
            self.mlp.reset_parameters()
        _reset_activations(self.act, None if self.mlp is None else self.mlp.act)

    def forward(
        self,
        x: Union[Tensor, Data],
        ops: Optional[SimplicialOperators] = None,
        *legacy_ops,
        batch: OptTensor = None,
        num_graphs: Optional[int] = None,
        **legacy_named_ops,
    ) -> Tensor:
        r"""Runs the network.

        Args:
            x (torch.Tensor or SimplicialComplexData): The simplex features
                :math:`(N, F_{in})` or :math:`(B, N, F_{in})` (:math:`B`
                signals on one complex), with their operators :obj:`ops`; or a
                (batched) :class:`~torch_geometric_san.data.SimplicialComplexData`,
                whose :obj:`x_k` and :obj:`operators(k)` are read.
            ops (SimplicialOperators): The operators of the simplices (see
                :meth:`~torch_geometric_san.nn.conv.SANConv.forward`, which also
                lists the earlier arguments still accepted instead). Every layer
                gets the same value, so each operator is built once per call.
            batch (torch.Tensor, optional): The complex of each simplex
                :math:`(N)`, for the readout, with a tensor :obj:`x` (a batch of
                complexes gives its own). :obj:`None`: one complex.
                (default: :obj:`None`)
            num_graphs (int, optional): The number of complexes of the batch
                (default: read from a batch of complexes, else
                :obj:`batch.max() + 1`), so that a complex without
                :math:`k`-simplices still gets its row of the readout; at most 1
                without :obj:`batch`.

        Returns:
            torch.Tensor: :math:`(..., N, F_{out})` per simplex; with a readout
            :math:`(G, F_{out})` for :math:`G` complexes (:math:`G = 1`
            without :obj:`batch`), :math:`(B, F_{out})` for :math:`B`
            signals on one complex, or :math:`(B, G, F_{out})` for both.
        """
        given = not isinstance(x, Data)  # tensors (and a batch vector) of the caller
        if not given:
            data, k = x, self.order
            if not hasattr(data, 'operators'):
                raise TypeError(f"expected a SimplicialComplexData, got "
                                f"{type(data).__name__}")
            if ops is not None or legacy_ops or legacy_named_ops or batch is not None:
                # (they were replaced by the complex's own, or a batch vector split
                # one complex into several readout rows)
                raise TypeError("a complex given as 'x' supplies its operators and "
                                "batch vector; pass 'ops' and 'batch' only with a "
                                "tensor 'x'")
            if f'x_{k}' not in data:
                raise ValueError(f"the complex has no signal 'x_{k}' on its "
                                 f"{k}-simplices")
            x, ops = data[f'x_{k}'], data.operators(k)
            if isinstance(data, Batch):
                if num_graphs is not None and num_graphs != data.num_graphs:
                    raise ValueError(f"'num_graphs' is {num_graphs} but the batch "
                                     f"holds {data.num_graphs} complexes")
                batch, num_graphs = data.simplex_batch(k), data.num_graphs
            else:  # (one complex: num_graphs above 1 gave one row, silently)
                check_batch(None, x.size(-2), num_graphs)
        self.convs[0]._check_signal(x, model=True)
        if given and self.readout is not None:  # a batch's own vector is valid
            num_graphs = check_batch(batch, x.size(-2), num_graphs)
        ops = as_operators(x.size(-2), ops, legacy_ops, legacy_named_ops)

        for layer, conv in enumerate(self.convs):
            x = conv(x, ops)
            if layer < self.num_layers - 1 or self.readout is not None:
                x = odd_activation(x, self.act) if self.odd_act else self.act(x)
                x = dropout(x, p=self.dropout, training=self.training)

        if self.mlp is None:
            return x
        assert self.readout is not None
        if self.invariant_readout:
            x = x.abs()
        if self.readout == 'flatten':
            x = self._flatten(x, batch, num_graphs)
        elif batch is None:  # one complex: its row, also without k-simplices (PyG's
            # pools of an unbatched empty order give NaN (mean) or fail (max))
            x = READOUTS[self.readout](x, x.new_zeros(x.size(-2), dtype=torch.long),
                                       size=1)
            x = x.squeeze(-2) if x.dim() == 3 else x
        else:
            x = READOUTS[self.readout](x, batch, size=num_graphs)
        return self.mlp(x)

    def _flatten(self, x: Tensor, batch: OptTensor,
                 num_graphs: Optional[int]) -> Tensor:
        # [..., G * N, C] -> [..., G, N * C], or [B, N * C] for B signals on
        # one complex, as the pooled readouts.
        n, N = x.size(-2), self.num_simplices
        assert N is not None
        sizes = (torch.full((1, ), n) if batch is None else
                 torch.bincount(batch.cpu(), minlength=num_graphs or 0))
        if not bool((sizes == N).all()):
            raise ValueError(f"the flatten readout needs {N} simplices per "
                             f"complex (got {sizes.tolist()})")
        if batch is not None and bool((batch[1:] < batch[:-1]).any()):
            # (the rows of each complex are taken as one block, in its order)
            raise ValueError("the flatten readout needs the simplices of each complex "
                             "in one block, in the order of the complexes ('batch' "
                             "sorted, as in PyG's batches)")
        out = x.reshape(*x.shape[:-2], sizes.numel(), N * x.size(-1))
        return out.squeeze(-2) if batch is None and x.dim() == 3 else out

    def __repr__(self) -> str:
        return (f'{self.__class__.__name__}({self.in_channels}, '
                f'{self.out_channels}, num_layers={self.num_layers}, '
                f'order={self.order}, readout={self.readout!r})')


class SAT(SAN):
    r"""The :class:`SAN` network with :class:`~torch_geometric_san.nn.conv.SATConv`
    layers; it takes the arguments of :class:`SAN` (:obj:`conv_kwargs` go to
    :class:`~torch_geometric_san.nn.conv.SATConv`)."""
    conv_cls = SATConv


class SCNN(SAN):
    r"""The :class:`SAN` network with :class:`~torch_geometric_san.nn.conv.SCNNConv`
    layers; it takes the arguments of :class:`SAN` (:obj:`conv_kwargs` go to
    :class:`~torch_geometric_san.nn.conv.SCNNConv`)."""
    conv_cls = SCNNConv


class SNN(SAN):
    r"""The :class:`SAN` network with :class:`~torch_geometric_san.nn.conv.SNNConv`
    layers; it takes the arguments of :class:`SAN` (:obj:`conv_kwargs` go to
    :class:`~torch_geometric_san.nn.conv.SNNConv`)."""
    conv_cls = SNNConv


class SCN(SAN):
    r"""The :class:`SAN` network with :class:`~torch_geometric_san.nn.conv.SCNConv`
    layers; it takes the arguments of :class:`SAN` (:obj:`conv_kwargs` go to
    :class:`~torch_geometric_san.nn.conv.SCNConv`)."""
    conv_cls = SCNConv
