import copy
import inspect
from typing import Any, Callable, Dict, List, Optional, Sequence, Union

import torch
from torch import Tensor

from torch_geometric.data import Batch, Data
from torch_geometric.nn import MLP
from torch_geometric.nn.models import JumpingKnowledge
from torch_geometric.nn.dense.linear import Linear, is_uninitialized_parameter
from torch_geometric.nn.inits import reset
from torch_geometric.nn.resolver import normalization_resolver

from torch_geometric_san.nn.conv import SANConv
from torch_geometric_san.nn.conv.san_conv import _materialize_linear
from torch_geometric_san.nn.functional import dropout, tie_gradients
from torch_geometric_san.nn.models.san import (READOUTS, _check_conv_kwargs,
                                               _reset_activations, _resolve_act)
from torch_geometric_san.sparse import SimplicialOperators, SparseOperator
from torch_geometric_san.utils.validation import (check_bool, check_counts, check_dropout,
                                                   check_float_tensor, check_in_channels,
                                                   check_int, check_same_dtype)

#: How the pooled features of the orders are combined.
COMBINES = ('cat', 'sum')
#: The jumping knowledge modes (None and 'last': the last layer's output).
JK_MODES = (None, 'last', 'cat', 'max', 'lstm')


class MultiOrderSAN(torch.nn.Module):
    r"""A Simplicial Attention Network on all the orders :math:`0..K` of a
    complex at once. Each layer runs one
    :class:`~torch_geometric_san.nn.conv.SANConv` per order (own weights,
    shared :obj:`conv_kwargs`) and, with :obj:`inter_order=True`, adds
    messages from the neighbouring orders through the boundary matrices, as
    CW Networks (Bodnar et al., 2021) and GSAN (Battiloro et al., 2024) do:

    .. math::
        \mathbf{Z}_k^{(l+1)} = \mathrm{dropout}\left(\sigma\left(
        \mathrm{norm}_{l,k}\left(
        \mathrm{SANConv}_{l,k}\left(\mathbf{Z}_k^{(l)}\right) +
        |\mathbf{B}_k|^{\top}\mathbf{Z}_{k-1}^{(l)}\mathbf{W}^{(\uparrow)}_{l,k}
        + |\mathbf{B}_{k+1}|\,\mathbf{Z}_{k+1}^{(l)}
        \mathbf{W}^{(\downarrow)}_{l,k}\right)\right)\right),

    where :math:`|\mathbf{B}_k|` holds the absolute values of the boundary
    matrix :math:`\mathbf{B}_k` (:math:`[N_{k-1}, N_k]`): a :math:`k`-simplex
    receives the sum of the features of its faces and of its cofaces
    (:math:`\mathbf{B}_0` and :math:`\mathbf{B}_{K+1}` are absent). The absolute
    values make these messages independent of the reference orientations, as
    suits unoriented features such as node features lifted by
    :class:`~torch_geometric_san.transforms.LiftToCliqueComplex` with
    :obj:`lift_x=True`. The model is not meant for oriented signals (edge
    flows): these messages are not orientation-equivariant, and neither are its
    per-simplex head (an MLP with biases) and its readouts (sums of signed
    features); for those use :class:`~torch_geometric_san.nn.models.SAN` with
    :obj:`conv_kwargs=dict(orientation_equivariant=True, bias=False)`,
    :obj:`odd_act` and :obj:`invariant_readout`. Within an order, the attention branches
    (the default) do not read the operators' signs either, but the harmonic
    filter (:obj:`J_harmonic` :math:`\geq 1` in :obj:`conv_kwargs`), the
    fixed-weight branches (:obj:`attention=None`) and the
    orientation-equivariant attention (:obj:`orientation_equivariant=True`,
    whose scores carry the signs of the Laplacians' entries) read the signed
    Laplacians: on unoriented features their outputs depend on the reference
    orientations, so a lifted graph's output then depends on the numbering of
    its vertices.

    The output is either per simplex of one order (:obj:`readout=None`,
    :obj:`order` :math:`= k`): :math:`\mathrm{MLP}(\mathbf{Z}_k^{(L)})`, or per
    complex: each order is pooled over the simplices of each complex (sum,
    mean or max; a complex without :math:`k`-simplices gets zeros for order
    :math:`k`), the :math:`K + 1` pooled vectors are concatenated or summed
    (:obj:`combine`) and an MLP maps them to :obj:`out_channels`:

    .. math::
        \mathbf{y} = \mathrm{MLP}\left(\big\Vert_{k=0}^{K}
        \mathrm{readout}\left(\mathbf{Z}_k^{(L)}\right)\right).

    With jumping knowledge (:obj:`jk`, Xu et al., 2018, as in PyG's
    :class:`~torch_geometric.nn.models.GIN`), :math:`\mathbf{Z}_k^{(L)}` is
    replaced in both outputs by the combination of every layer's output of
    order :math:`k`, :math:`\mathrm{JK}_k(\mathbf{Z}_k^{(1)}, \ldots,
    \mathbf{Z}_k^{(L)})` (concatenation, maximum or LSTM attention). With
    :obj:`readout_input=True` the readout also pools the inputs
    :math:`\mathbf{X}_k` and concatenates them with each order's pooled
    output, as the readout of GIN (Xu et al., 2019) covers layer 0.

    With a per-simplex output the layers compute only what reaches order
    :math:`k` (the last layer has the layer of order :math:`k` alone, the one
    before it orders :math:`k-1..k+1`, and so on); without inter-order
    messages that is order :math:`k` alone, i.e. :class:`SAN` with an MLP head.

    The layer of order :math:`0` has no lower branch and that of order
    :math:`K` no upper one (:math:`\mathbf{B}_0` and :math:`\mathbf{B}_{K+1}`
    do not exist), unless :obj:`conv_kwargs` share the weights or the
    attention of the two branches.

    Each order's :meth:`~torch_geometric_san.data.SimplicialComplexData.operators`
    is read once per call and given to every layer, so each operator form is
    derived once per batch, and once in all for a complex trained on in full
    (the complex keeps the value while its tensors are unchanged).

    Args:
        in_channels (int or list of int): Size of each input sample: one int
            for every order, or a list of the :math:`K + 1` sizes of
            :obj:`x_0, ..., x_K`; :obj:`-1` takes an order's size from the first
            input (lazy initialisation, see
            :class:`~torch_geometric_san.nn.conv.SANConv`; not with
            :obj:`readout_input`).
        hidden_channels (int): Size of each hidden sample (per head).
        num_layers (int): Number of layers.
        out_channels (int): Size of each output sample (per simplex, or per
            complex with a readout).
        max_order (int, optional): The order :math:`K \geq 1` of the
            complexes. (default: :obj:`2`)
        readout (str, optional): :obj:`None` (per-simplex output of
            :obj:`order`), :obj:`"sum"`, :obj:`"mean"` or :obj:`"max"`.
            (default: :obj:`"sum"`)
        order (int, optional): The order of the per-simplex output; only
            without a readout. (default: :obj:`None`)
        combine (str, optional): How the readout combines the pooled orders:
            :obj:`"cat"` (concatenated, :math:`(K + 1) C` features) or
            :obj:`"sum"` (:math:`C` features). (default: :obj:`"cat"`)
        inter_order (bool, optional): Whether the layers add the messages from
            the neighbouring orders. (default: :obj:`True`)
        readout_layers (int, optional): Number of layers of the output MLP
            (:obj:`1`: a linear map); its hidden layers have the width of its
            input. (default: :obj:`2`)
        act (str or Callable, optional): Activation after each layer, e.g.
            :obj:`"relu"`, :obj:`"tanh"` or :obj:`"identity"`.
            (default: :obj:`"relu"`)
        dropout (float, optional): Dropout probability of the features after
            each layer (:func:`~torch_geometric_san.nn.functional.dropout`)
            and inside the output MLP. (default: :obj:`0.0`)
        norm (str or torch.nn.Module, optional): The normalisation of each layer's
            output per order (:math:`\mathrm{norm}_{l,k}`, own parameters per
            layer and order), before the activation, where the :obj:`norm` of
            PyG's :class:`~torch_geometric.nn.models.GIN` acts: a name of
            :func:`torch_geometric.nn.resolver.normalization_resolver` whose
            class takes the number of channels first, e.g.
            :obj:`"batch_norm"`, :obj:`"layer_norm"` or :obj:`"graph_norm"`
            (those that take a :obj:`batch` normalise each complex's
            :math:`k`-simplices on their own), a module (copied for each layer
            and order, e.g. :obj:`PairNorm()`), or :obj:`None` for none.
            Batch normalisation in training needs two or more
            :math:`k`-simplices per batch for every order, unless
            :obj:`norm_kwargs=dict(allow_single_element=True)`; an order
            without simplices in a batch is left as it is.
            (default: :obj:`None`)
        norm_kwargs (dict, optional): Arguments of the normalisation.
            (default: :obj:`None`)
        readout_input (bool, optional): Whether the readout also pools the
            inputs :obj:`x_k` (only with a readout and :obj:`combine="cat"`).
            (default: :obj:`False`)
        jk (str, optional): The jumping knowledge mode: :obj:`None` or
            :obj:`"last"` (the last layer's output), :obj:`"cat"`, :obj:`"max"`
            or :obj:`"lstm"` (PyG's
            :class:`~torch_geometric.nn.models.JumpingKnowledge`, one per
            order). (default: :obj:`None`)
        conv_kwargs (dict, optional): Arguments of every
            :class:`~torch_geometric_san.nn.conv.SANConv`, e.g.
            :obj:`dict(J_up=2, J_down=2, J_harmonic=2, heads=2)`; the heads are
            concatenated. (default: :obj:`None`)

    Shapes:
        - **input:** a (batched)
          :class:`~torch_geometric_san.data.SimplicialComplexData` of order
          :math:`K` with :obj:`x_k` :math:`(N_k, F_k)` for the orders it
          uses (all of :math:`0..K` with a readout)
        - **output:** :math:`(N_k, F_{out})` per simplex of :obj:`order`, or
          :math:`(G, F_{out})` for :math:`G` complexes (:math:`G = 1` for one
          complex)

    Example:
        >>> import torch
        >>> from torch_geometric_san.data import SimplicialComplexData
        >>> data = SimplicialComplexData.from_simplices(
        ...     [[0, 1, 2], [1, 2, 3]], close=True, x_0=torch.randn(4, 3),
        ...     x_1=torch.randn(5, 3), x_2=torch.randn(2, 3))
        >>> model = MultiOrderSAN(3, 8, num_layers=2, out_channels=2,
        ...                       conv_kwargs=dict(J_up=2, J_down=2, J_harmonic=2))
        >>> model(data).shape  # logits of the one complex
        torch.Size([1, 2])
        >>> model = MultiOrderSAN([3, 3, 3], 8, num_layers=2, out_channels=1,
        ...                       readout=None, order=1)
        >>> model(data).shape  # one value per edge
        torch.Size([5, 1])
    """
    def __init__(
        self,
        in_channels: Union[int, Sequence[int]],
        hidden_channels: int,
        num_layers: int,
        out_channels: int,
        max_order: int = 2,
        readout: Optional[str] = 'sum',
        order: Optional[int] = None,
        combine: str = 'cat',
        inter_order: bool = True,
        readout_layers: int = 2,
        act: Union[str, Callable, None] = 'relu',
        dropout: float = 0.0,
        conv_kwargs: Optional[Dict[str, Any]] = None,
        norm: Union[str, torch.nn.Module, None] = None,
        norm_kwargs: Optional[Dict[str, Any]] = None,
        jk: Optional[str] = None,
        readout_input: bool = False,
    ):
        super().__init__()
        # (the checked values are kept: NumPy's ints and floats failed inside
        # torch and PyG's MLP later)
        max_order = check_int(max_order, "'max_order' (use SAN for one order)",
                              minimum=1)
        hidden_channels, num_layers, out_channels, readout_layers = check_counts(
            hidden_channels=hidden_channels, num_layers=num_layers,
            out_channels=out_channels, readout_layers=readout_layers)
        check_bool(inter_order, "'inter_order'")
        dropout = check_dropout(dropout, "'dropout'")
        self.in_channels = self._per_order(in_channels, max_order)
        if readout is None:
            if order is None:
                raise ValueError("a per-simplex output (readout=None) needs the "
                                 "'order' of its simplices")
            order = check_int(order, "'order'", minimum=0, maximum=max_order)
        elif not isinstance(readout, str) or readout not in READOUTS:
            raise ValueError(f"'readout' must be None or one of {sorted(READOUTS)} "
                             f"(got {readout!r})")
        elif order is not None:
            raise ValueError("'order' selects the simplices of a per-simplex "
                             "output; it cannot be given with a readout")
        check_bool(readout_input, "'readout_input'")
        if readout_input and (readout is None or combine != 'cat'):
            raise ValueError("'readout_input' needs a readout with combine='cat'")
        if readout_input and -1 in self.in_channels:
            raise ValueError("'readout_input' needs every order's 'in_channels' (the "
                             "readout's hidden width is that of its input); -1 (lazy "
                             "initialisation) is refused with it")
        if jk not in JK_MODES:
            raise ValueError(f"'jk' must be one of {JK_MODES} (got {jk!r})")
        if combine not in COMBINES:
            raise ValueError(f"'combine' must be one of {COMBINES} (got {combine!r})")
        conv_kwargs = _check_conv_kwargs(conv_kwargs)
        if conv_kwargs.get('concat', True) is not True:
            raise ValueError("the layers concatenate their heads; 'concat' cannot "
                             "be set in 'conv_kwargs'")
        if conv_kwargs.get('ensemble') is not None:
            raise ValueError("an ensemble of layers (conv_kwargs['ensemble']) takes one "
                             "signal per member, which a complex's x_k is not: "
                             "MultiOrderSAN takes no ensemble")

        self.hidden_channels = hidden_channels
        self.num_layers = num_layers
        self.out_channels = out_channels
        self.max_order = max_order
        self.readout = readout
        self.order = order
        self.combine = combine
        self.inter_order = inter_order
        self.dropout = dropout
        mlp_act, self.act = _resolve_act(act)

        # The orders each layer computes: all of them for a readout; for a
        # per-simplex output those that reach `order` through the remaining
        # layers.
        orders = range(max_order + 1)
        outputs: List[List[int]] = []
        for index in range(num_layers):
            reach = num_layers - 1 - index if inter_order else 0
            outputs.append([k for k in orders if order is None
                            or abs(k - order) <= reach])

        self.layers = torch.nn.ModuleList()
        channels = list(self.in_channels)
        for targets in outputs:
            layer = _MultiOrderLayer(channels, hidden_channels, targets,
                                     inter_order, conv_kwargs)
            self.layers.append(layer)
            channels = [layer.out_channels] * (max_order + 1)
        self._inputs = sorted(self.layers[0].inputs)

        # norm_{l,k}: one module per layer and computed order (identities
        # without a normalisation).
        # (its name, or the module's repr: a module kept here would be registered)
        self.norm = norm if isinstance(norm, str) or norm is None else repr(norm)
        norm_layer = _resolve_norm(norm, channels[0], norm_kwargs)
        self.norms = torch.nn.ModuleList([
            torch.nn.ModuleDict({str(k): copy.deepcopy(norm_layer)
                                 if norm_layer is not None else torch.nn.Identity()
                                 for k in targets})
            for targets in outputs])
        self.supports_norm_batch = (
            norm_layer is not None
            and 'batch' in inspect.signature(norm_layer.forward).parameters)

        # JK_k for the orders of the output, whose every layer computes them.
        self.jk_mode = jk
        if jk == 'lstm' and channels[0] * num_layers < 2:  # (PyG's LSTM: half of it)
            raise ValueError(f"jk='lstm' needs at least 2 features over the layers "
                             f"(num_layers * hidden_channels * heads = "
                             f"{channels[0] * num_layers})")
        outputs_jk = range(max_order + 1) if order is None else [order]
        self.jk = torch.nn.ModuleDict({
            str(k): JumpingKnowledge(jk, channels[0], num_layers)
            for k in outputs_jk} if jk not in (None, 'last') else {})

        self.readout_input = readout_input
        pooled_orders = max_order + 1 if readout is not None and combine == 'cat' else 1
        width = channels[0] * (num_layers if jk == 'cat' else 1)
        first = width * pooled_orders + (sum(self.in_channels) if readout_input else 0)
        self.mlp = MLP([first] + [first] * (readout_layers - 1) + [out_channels],
                       dropout=dropout, act=mlp_act, norm=None)

    @staticmethod
    def _per_order(in_channels: Union[int, Sequence[int]], max_order: int) -> List[int]:
        if isinstance(in_channels, (list, tuple)):
            if len(in_channels) != max_order + 1:
                raise ValueError(f"'in_channels' must hold one size per order "
                                 f"0..{max_order}, {max_order + 1} in all (got "
                                 f"{len(in_channels)})")
            return [check_in_channels(c, "'in_channels'") for c in in_channels]
        return [check_in_channels(in_channels, "'in_channels' (an int or a list of "
                                  "ints)")] * (max_order + 1)

    def reset_parameters(self):
        r"""Resets all learnable parameters of the module."""
        for layer in self.layers:
            layer.reset_parameters()
        for norms in self.norms:
            for norm in norms.values():
                reset(norm)  # (also the norms inside a container module)
        for jk in self.jk.values():
            jk.reset_parameters()
        self.mlp.reset_parameters()
        _reset_activations(self.act, self.mlp.act)

    def forward(self, data: Data) -> Tensor:
        r"""Runs the network.

        Args:
            data (SimplicialComplexData): A complex or a batch of complexes
                (:class:`~torch_geometric.data.Batch`) of order
                :obj:`max_order`, with the signals :obj:`x_k`
                :math:`(N_k, F_k)`; not modified.

        Returns:
            torch.Tensor: :math:`(N_k, F_{out})` for the simplices of
            :obj:`order`, or :math:`(G, F_{out})` for the :math:`G` complexes
            of the batch with a readout.
        """
        if not isinstance(data, Data) or not hasattr(data, 'operators'):
            raise TypeError(f"expected a SimplicialComplexData, got "
                            f"{type(data).__name__}")
        if data.order != self.max_order:
            raise ValueError(f"the model needs a complex of order {self.max_order} "
                             f"(got order {data.order}; lift with max_order="
                             f"{self.max_order})")
        xs: Dict[int, Tensor] = {}
        dtype = next(p for p in self.parameters()
                     if not is_uninitialized_parameter(p)).dtype
        for k in self._inputs:
            if f'x_{k}' not in data:
                raise ValueError(f"the complex has no signal 'x_{k}' on its "
                                 f"{k}-simplices")
            x = check_float_tensor(data[f'x_{k}'], f'x_{k}')
            size = self.layers[0].input_size(k)
            if x.dim() != 2 or x.size(1) != size and (size != -1 or x.size(1) == 0):
                raise ValueError(f"'x_{k}' must have shape [N_{k}, "
                                 f"{'F] with F >= 1' if size == -1 else f'{size}]'} "
                                 f"(got {list(x.shape)})")
            check_same_dtype(x, dtype, f'x_{k}', 'model', 'model')
            xs[k] = x

        inputs = dict(xs)
        ops = {k: data.operators(k) for k in self._inputs}
        # |B_k|^T [N_k, N_{k-1}], shared by every layer (and its transpose
        # |B_k|), kept on the operators as they are.
        incidence = {k: ops[k - 1].coboundary.abs()
                     for k in self._inputs if self.inter_order and k - 1 in ops}

        num_graphs = data.num_graphs if isinstance(data, Batch) else 1
        history: Dict[int, List[Tensor]] = {int(k): [] for k in self.jk}
        for layer, norms in zip(self.layers, self.norms):
            xs = layer(xs, ops, incidence)
            xs = {k: dropout(self.act(self._normalise(norms[str(k)], x, data, k,
                                                        num_graphs)),
                               p=self.dropout, training=self.training)
                  for k, x in xs.items()}
            for k, outs in history.items():
                outs.append(xs[k])
        xs.update({k: self.jk[str(k)](outs) for k, outs in history.items()})

        if self.readout is None:
            assert self.order is not None
            return self.mlp(xs[self.order])
        pooled = [READOUTS[self.readout](xs[k], data.simplex_batch(k), size=num_graphs)
                  for k in range(self.max_order + 1)]
        if self.readout_input:  # (a readout's first layer reads every order)
            pooled += [READOUTS[self.readout](inputs[k], data.simplex_batch(k),
                                              size=num_graphs)
                       for k in range(self.max_order + 1)]
        out = (torch.cat(pooled, dim=-1) if self.combine == 'cat' else
               torch.stack(pooled).sum(0))
        return self.mlp(out)

    def _normalise(self, norm: torch.nn.Module, x: Tensor, data: Data, k: int,
                   num_graphs: int) -> Tensor:
        if isinstance(norm, torch.nn.Identity):
            return x
        if x.size(0) == 0:  # (its parameters get a zero gradient: DDP needs one)
            return tie_gradients(x, list(norm.parameters()))
        if self.supports_norm_batch:
            return norm(x, data.simplex_batch(k), num_graphs)
        return norm(x)

    def __repr__(self) -> str:
        return (f'{self.__class__.__name__}({self.in_channels}, '
                f'{self.out_channels}, num_layers={self.num_layers}, '
                f'max_order={self.max_order}, readout={self.readout!r}, '
                f'order={self.order}, inter_order={self.inter_order}, '
                f'norm={self.norm!r}, jk={self.jk_mode!r})')


class _MultiOrderLayer(torch.nn.Module):
    # One layer of MultiOrderSAN: a SANConv for each order of `targets` and
    # the linear maps of the messages from the neighbouring orders.
    def __init__(self, in_channels: List[int], out_channels: int,
                 targets: List[int], inter_order: bool,
                 conv_kwargs: Dict[str, Any]):
        super().__init__()
        max_order = len(in_channels) - 1
        self.targets = targets
        self.convs = torch.nn.ModuleDict({
            str(k): SANConv(in_channels[k], out_channels,
                            **_without_absent_branches(conv_kwargs, k, max_order))
            for k in targets
        })
        conv = self.convs[str(targets[0])]
        self.out_channels = conv.out_channels * conv.heads
        width = self.out_channels
        below = [k for k in targets if inter_order and k >= 1]
        above = [k for k in targets if inter_order and k < max_order]
        self.from_below = torch.nn.ModuleDict({
            str(k): Linear(in_channels[k - 1], width, bias=False) for k in below})
        self.from_above = torch.nn.ModuleDict({
            str(k): Linear(in_channels[k + 1], width, bias=False) for k in above})
        self.inputs = set(targets) | {k - 1 for k in below} | {k + 1 for k in above}

    def input_size(self, k: int) -> int:
        # The size of x_k: as given, or once a lazy module reading x_k has taken
        # it from the first input; -1 before.
        own = [self.convs[str(k)].lin] if str(k) in self.convs else []
        size = -1
        for lin in own + self._messages_from(k):
            size = max(size, lin.in_channels)
        return size

    def _messages_from(self, k: int) -> List[Linear]:
        # The linear maps of the messages of x_k to the orders above and below.
        return [maps[key] for maps, key in ((self.from_below, str(k + 1)),
                                            (self.from_above, str(k - 1)))
                if key in maps]

    def reset_parameters(self):
        for module in (*self.convs.values(), *self.from_below.values(),
                       *self.from_above.values()):
            module.reset_parameters()

    def forward(self, xs: Dict[int, Tensor], ops: Dict[int, SimplicialOperators],
                incidence: Dict[int, SparseOperator]) -> Dict[int, Tensor]:
        # incidence[k] = |B_k|^T, [N_k, N_{k-1}]
        for k, x in xs.items():  # lazy maps: sizes from the inputs, the layer's dtype
            for lin in self._messages_from(k):
                _materialize_linear(lin, x.size(1), self)
        out = {}
        for k in self.targets:
            h = self.convs[str(k)](xs[k], ops[k])
            if str(k) in self.from_below:  # faces: |B_k|^T x_{k-1}
                h = h + self.from_below[str(k)](incidence[k].matmul(xs[k - 1]))
            if str(k) in self.from_above:  # cofaces: |B_{k+1}| x_{k+1}
                h = h + self.from_above[str(k)](incidence[k + 1].t().matmul(xs[k + 1]))
            out[k] = h
        return out


def _without_absent_branches(conv_kwargs: Dict[str, Any], k: int,
                             max_order: int) -> Dict[str, Any]:
    # Order 0 has no lower Laplacian and order K (of a K-complex) no upper one:
    # their layers leave out the branch, unless its weights are shared with
    # the other branch (shared attention or weights need J_up == J_down).
    if conv_kwargs.get('attention') == 'shared' or conv_kwargs.get('shared_weights'):
        return conv_kwargs
    absent = [name for name, empty in (('J_down', k == 0), ('J_up', k == max_order))
              if empty]
    return dict(conv_kwargs, **dict.fromkeys(absent, 0))


def _resolve_norm(norm: Any, channels: int,
                  kwargs: Optional[Dict[str, Any]]) -> Optional[torch.nn.Module]:
    # PyG's normalisation of `channels` features by name (or the module given). A
    # name is built with the width as its first argument, as PyG's GIN does: refused
    # where the class takes no width there (PairNorm read it as its `scale`).
    if norm is None or isinstance(norm, torch.nn.Module):
        if kwargs:  # (PyG's resolver ignores them for these)
            raise ValueError(f"'norm_kwargs' are the arguments of a normalisation "
                             f"given by name; with norm="
                             f"{'None' if norm is None else 'a module'} they would "
                             f"have no effect (got {sorted(kwargs)})")
        return normalization_resolver(norm, channels)
    if not isinstance(norm, str):  # (a class or function failed inside ModuleDict)
        raise TypeError(f"norm must be a name, a module or None, not "
                        f"{norm.__name__ if isinstance(norm, type) else type(norm).__name__}"
                        f" (for a class, pass its instance, or its name)")
    try:
        module = normalization_resolver(norm, channels, **(kwargs or {}))
    except TypeError as error:
        raise ValueError(f"norm={norm!r} cannot be built as norm(channels, "
                         f"**norm_kwargs) ({error}): give its other arguments in "
                         f"'norm_kwargs', or pass the module itself") from error
    params = list(inspect.signature(type(module).__init__).parameters)[1:2]
    if params != ['in_channels']:
        raise ValueError(f"norm={norm!r} takes no number of channels first (its "
                         f"first argument is {params[0] if params else 'none'!r}), so "
                         f"the layer width would be passed as that; pass the module "
                         f"itself, e.g. norm={type(module).__name__}()")
    return module
