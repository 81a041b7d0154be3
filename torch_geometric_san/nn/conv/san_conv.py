import weakref
from typing import Callable, Dict, List, NamedTuple, Optional, Tuple, Union

import torch
import torch.nn.functional as F
from torch import Tensor
from torch.nn import ParameterDict

from torch_geometric.nn.conv import MessagePassing
from torch_geometric.nn.dense.linear import Linear
from torch_geometric.nn.inits import glorot, zeros
from torch_geometric.typing import Adj, OptTensor

from torch_geometric_san.nn.sparse import (SparseOperator, segment_softmax,
                                           to_index_weight)

ATTENTION_MODES = ("separate", "shared", None)

_Product = Callable[..., Tensor]  # (x, hops=1) -> A^hops x


class _Operators(NamedTuple):
    up: Optional[SparseOperator]
    down: Optional[SparseOperator]
    harmonic: Optional[SparseOperator]


class SANConv(MessagePassing):
    r"""The simplicial attention layer from the `"Simplicial Attention Neural
    Networks" <https://arxiv.org/abs/2203.07485>`_ paper, for signals on the
    :math:`k`-simplices of a simplicial complex (any order :math:`k`):

    .. math::
        \mathbf{Z}^{\prime} = \sum_{p=1}^{J_d} \left(\mathbf{A}^{(d)}\right)^p
        \mathbf{Z}\mathbf{W}^{(d)}_p + \sum_{p=1}^{J_u}
        \left(\mathbf{A}^{(u)}\right)^p \mathbf{Z}\mathbf{W}^{(u)}_p +
        \left(\mathbf{I} - \epsilon \widetilde{\mathbf{L}}\right)^{J_h}
        \mathbf{Z}\mathbf{W}^{(h)},

    where the attentional Laplacians :math:`\mathbf{A}^{(u)}` and
    :math:`\mathbf{A}^{(d)}` have the sparsity of the upper and lower
    Laplacians :math:`\mathbf{L}^{(u)}` and :math:`\mathbf{L}^{(d)}` and the
    entries

    .. math::
        a_{ij} = \frac{\exp\left(\mathrm{LeakyReLU}\left(
        \mathbf{a}_{t}^{\top}\mathbf{h}_i + \mathbf{a}_{s}^{\top}\mathbf{h}_j
        \right)\right)}{\sum_{k \in \mathcal{N}(i)} \exp\left(
        \mathrm{LeakyReLU}\left(\mathbf{a}_{t}^{\top}\mathbf{h}_i +
        \mathbf{a}_{s}^{\top}\mathbf{h}_k\right)\right)}, \qquad
        \mathbf{h}_i = \big\Vert_{p=1}^{J} \left[\mathbf{Z}\mathbf{W}_p
        \right]_i,

    with separate attention vectors :math:`(\mathbf{a}_s, \mathbf{a}_t)` for
    the upper and the lower branch (:math:`[\mathbf{h}_i \Vert \mathbf{h}_j]
    ^{\top}\mathbf{a}` of the paper, split in two as in
    :class:`~torch_geometric.nn.conv.GATConv`). :math:`\widetilde{\mathbf{L}}`
    is the Hodge Laplacian scaled to largest eigenvalue 1, so the last term is
    the harmonic filter of the paper; :math:`J_h = 0` makes it a skip
    connection :math:`\mathbf{Z}\mathbf{W}^{(h)}`.

    The powers are never formed: each branch is evaluated by Horner's rule,
    :math:`\mathbf{A}(\mathbf{h}_1 + \mathbf{A}(\mathbf{h}_2 + \dots +
    \mathbf{A}\mathbf{h}_J))` with :math:`\mathbf{h}_p = \mathbf{Z}
    \mathbf{W}_p`, i.e. :math:`J` sparse propagations with the same
    coefficients, and the harmonic filter is :math:`J_h` sparse
    propagations (its values are fixed, so they run in two buffers, forward
    and backward, and no intermediate power is kept). Where the input is
    narrower than the output (:math:`F_{in} < F_{out}` for attention
    branches, whose coefficients differ per head; :math:`F_{in} < H F_{out}`
    for fixed-weight ones), the layer propagates the input instead, :math:`\sum_p (\mathbf{A}^p
    \mathbf{Z}) \mathbf{W}_p`, and the attention scores of the
    orientation-equivariant option become the bilinear form
    :math:`\mathbf{z}_i^{\top} \mathbf{M} \mathbf{z}_j` with
    :math:`\mathbf{M} = \sum_p \mathbf{W}_p \mathrm{diag}(\mathbf{a}_p)
    \mathbf{W}_p^{\top}`: one layer costs :math:`O(\mathrm{nnz} \cdot J
    \cdot \min(F_{in}, F_{out}))` per head. Propagation runs as a
    compressed-row sparse product with a hand-written backward (see
    :mod:`torch_geometric_san.nn.sparse`), never densifying the gradient of
    the attention coefficients, and their softmax is
    :func:`~torch_geometric_san.nn.sparse.segment_softmax`. For :math:`B`
    signals on one complex (input :math:`(B, N, F_{in})`), the coefficients
    of all signals and heads are computed side by side on the shared pattern,
    :math:`(|\mathcal{E}|, B H)`, and applied either through a
    block-diagonal operator or, for one or two features per head, by
    gathering the signals of each entry at once
    (:meth:`~torch_geometric_san.nn.sparse.SparseOperator.matmul_grouped`).

    The layer runs under :func:`torch.compile` (the sparse products are
    custom operators; building the operators from the Laplacians runs
    eagerly); TorchScript is not supported.

    **Neighbourhoods.** The attention neighbourhood of simplex :math:`i` is
    the off-diagonal sparsity pattern of row :math:`i` of the given operator;
    with :obj:`add_self_loops=True`, every simplex whose row is non-empty also
    attends to itself. For a Laplacian this reproduces exactly its sparsity
    pattern (as in the paper): a simplex without upper neighbours (an edge in
    no triangle) has an empty upper neighbourhood, and an empty neighbourhood
    sends no message (a zero row, never NaN). Unlike
    :class:`~torch_geometric.nn.conv.GATConv`, an isolated simplex therefore
    does not receive its own features from an attention branch.

    **Caching.** Each call turns the given Laplacians into sparse operators
    (attention neighbourhoods, compressed rows and their transposes, the
    shifted Hodge Laplacian), which costs a few sorts of the entries. The layer
    keeps the operators of its last call and reuses them when the next call
    passes the very same tensor objects, unmodified (PyTorch's version counter
    of each tensor is checked, and none may require gradients): training on
    one complex pays once, a new batch of complexes is processed anew.

    **Special cases** (paper, "Comparisons with related works"):
    GAT is :obj:`SANConv(J_up=1, J_down=0, J_harmonic=None,
    add_self_loops=False, bias=False)` on node signals;
    :class:`SATConv`, :class:`SCNNConv`, :class:`SNNConv` and
    :class:`SCNConv` set :obj:`attention` and the filter orders.

    **Orientation equivariance.** With :obj:`orientation_equivariant=True`
    the messages are signed by :math:`\mathrm{sign}(L_{ij})` (self-loops
    :math:`+1`) and the scores become
    :math:`e_{ij} = \mathrm{LeakyReLU}(\mathrm{sign}(L_{ij})\,
    \langle \mathbf{a} \odot \mathbf{h}_i, \mathbf{h}_j \rangle)`, which do not
    change when the reference orientation of simplices is flipped (the sign of
    :math:`\mathbf{h}_i`, of :math:`\mathbf{h}_j` and of :math:`L_{ij}` flip
    together) and still tell whether neighbouring signals agree in relative
    orientation. Flipping the orientation of any set of simplices then flips
    exactly the matching output rows (the harmonic branch is linear, so
    already equivariant). A bias breaks this (the layer must be odd): use
    :obj:`bias=False`. Fixed-weight branches (:obj:`attention=None`) are
    always equivariant.

    Args:
        in_channels (int): Size of each input sample.
        out_channels (int): Size of each output sample (per head).
        J_up (int, optional): Upper filter order :math:`J_u`; :obj:`0`
            removes the upper branch. (default: :obj:`1`)
        J_down (int, optional): Lower filter order :math:`J_d`; :obj:`0`
            removes the lower branch. (default: :obj:`1`)
        J_harmonic (int, optional): Harmonic filter order :math:`J_h`:
            :obj:`0` gives a skip connection, :obj:`None` no harmonic branch
            at all. (default: :obj:`0`)
        eps (float, optional): The step :math:`\epsilon \in (0, 2]` of the
            harmonic filter. (default: :obj:`0.9`)
        heads (int, optional): Number of attention heads. (default: :obj:`1`)
        concat (bool, optional): If :obj:`False`, the heads are averaged
            instead of concatenated. (default: :obj:`True`)
        negative_slope (float, optional): LeakyReLU slope. (default: :obj:`0.2`)
        dropout (float, optional): Dropout probability of the attention
            coefficients. (default: :obj:`0.0`)
        add_self_loops (bool, optional): Whether simplices with a non-empty
            neighbourhood attend to themselves (see above); ignored by
            fixed-weight branches, which use the operator as given.
            (default: :obj:`True`)
        bias (bool, optional): Whether to learn an additive bias.
            (default: :obj:`True`)
        attention (str, optional): :obj:`"separate"` (one attention mechanism
            per branch), :obj:`"shared"` (one for both branches, as SAT; needs
            :obj:`J_up == J_down`) or :obj:`None` (no attention: the branches
            propagate with the given operator weights, as SCNN).
            (default: :obj:`"separate"`)
        shared_weights (bool, optional): Whether the lower branch uses the
            filter weights of the upper one, :math:`\mathbf{W}^{(d)}_p =
            \mathbf{W}^{(u)}_p` (as SNN; needs :obj:`J_up == J_down`).
            (default: :obj:`False`)
        orientation_equivariant (bool, optional): See above.
            (default: :obj:`False`)
        cached (bool, optional): If :obj:`True`, the sparse operators built
            from the first inputs are cached and reused by every later call,
            whatever it passes (see **Caching**). Only for inputs that always
            live on the same complex (transductive learning, or many signals
            on one complex). (default: :obj:`False`)
        gain (float, optional): Gain of the Glorot (Xavier uniform)
            initialisation of the filter weights and attention vectors.
            (default: :obj:`1.0`)
        **kwargs (optional): Additional arguments of
            :class:`torch_geometric.nn.conv.MessagePassing`.

    Shapes:
        - **input:**
          simplex features :math:`(N, F_{in})`, or :math:`(B, N, F_{in})` for
          :math:`B` signals on the same complex (each with its own attention);
          operators as index :math:`(2, |\mathcal{E}|)` with weights
          :math:`(|\mathcal{E}|)`, or as a :class:`torch_sparse.SparseTensor`
          / :class:`torch.sparse` tensor (transposed adjacency, weights as
          values)
        - **output:** simplex features :math:`(N, H F_{out})` or
          :math:`(B, N, H F_{out})` (:math:`F_{out}` if :obj:`concat=False`).
          With :obj:`return_attention_weights`, additionally
          :obj:`(up, down)`, each :obj:`None` for an absent branch or
          :obj:`(index, alpha)` with index :math:`(2, |\mathcal{E}|)` and
          alpha :math:`(|\mathcal{E}|, H)` (:math:`(B, |\mathcal{E}|, H)`).

    Example:
        >>> import torch
        >>> conv = SANConv(3, 8, J_up=2, J_down=2, J_harmonic=2, heads=2)
        >>> x = torch.randn(4, 3)            # signals on 4 edges
        >>> index = torch.tensor([[0, 1, 1, 2, 2, 3], [1, 0, 2, 1, 3, 2]])
        >>> weight = torch.tensor([1., 1., -1., -1., 1., 1.])
        >>> conv(x, index, weight, index, weight, index, weight / 4).shape
        torch.Size([4, 16])
    """
    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        J_up: int = 1,
        J_down: int = 1,
        J_harmonic: Optional[int] = 0,
        eps: float = 0.9,
        heads: int = 1,
        concat: bool = True,
        negative_slope: float = 0.2,
        dropout: float = 0.0,
        add_self_loops: bool = True,
        bias: bool = True,
        attention: Optional[str] = "separate",
        shared_weights: bool = False,
        orientation_equivariant: bool = False,
        cached: bool = False,
        gain: float = 1.0,
        **kwargs,
    ):
        kwargs.setdefault('aggr', 'add')
        super().__init__(node_dim=-2, **kwargs)
        for name, value in (("in_channels", in_channels),
                            ("out_channels", out_channels), ("heads", heads)):
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"'{name}' must be a positive int (got {value!r})")
        for name, value in (("J_up", J_up), ("J_down", J_down)):
            if not isinstance(value, int) or value < 0:
                raise ValueError(f"'{name}' must be an int >= 0 (got {value!r})")
        if J_harmonic is not None and (not isinstance(J_harmonic, int)
                                       or J_harmonic < 0):
            raise ValueError(f"'J_harmonic' must be None or an int >= 0 (got "
                             f"{J_harmonic!r})")
        if not 0.0 < eps <= 2.0:
            raise ValueError(f"'eps' must lie in (0, 2] for the harmonic filter "
                             f"of a Laplacian scaled to largest eigenvalue 1 "
                             f"(got {eps})")
        if not 0.0 <= dropout < 1.0:
            raise ValueError(f"'dropout' must lie in [0, 1) (got {dropout})")
        if attention not in ATTENTION_MODES:
            raise ValueError(f"'attention' must be one of {ATTENTION_MODES} "
                             f"(got {attention!r})")
        if (attention == "shared" or shared_weights) and J_up != J_down:
            raise ValueError(f"shared attention or shared weights need "
                             f"J_up == J_down (got {J_up} and {J_down})")
        if shared_weights and J_up == 0:
            raise ValueError("shared weights need J_up == J_down >= 1")

        self.in_channels = in_channels
        self.out_channels = out_channels
        self.J_up = J_up
        self.J_down = J_down
        self.J_harmonic = J_harmonic
        self.eps = eps
        self.heads = heads
        self.concat = concat
        self.negative_slope = negative_slope
        self.dropout = dropout
        self.add_self_loops = add_self_loops
        self.attention = attention
        self.shared_weights = shared_weights
        self.orientation_equivariant = orientation_equivariant
        self.cached = cached
        self.gain = gain
        self._cached_operators: Optional[_Operators] = None
        self._last_operators: Optional[Tuple[tuple, _Operators]] = None

        # Filter taps: rows of `lin` in blocks of `heads * out_channels`, the
        # J_up upper taps, the J_down lower taps (unless shared) and the
        # harmonic one.
        self._blocks: List[str] = []
        self._block_sizes: List[int] = []
        for branch, J in (('up', J_up), ('down', 0 if shared_weights else J_down),
                          ('harmonic', 0 if J_harmonic is None else 1)):
            if J > 0:
                self._blocks.append(branch)
                self._block_sizes.append(J)
        self.num_taps = sum(self._block_sizes)
        self.lin = Linear(in_channels, self.num_taps * heads * out_channels,
                          bias=False)

        # Attention vectors, [1, heads, J * out_channels] each:
        self.att = ParameterDict()
        if attention is not None:
            roles = ('', ) if orientation_equivariant else ('_src', '_dst')
            keys = ['shared'] if attention == 'shared' else [
                branch for branch, J in (('up', J_up), ('down', J_down)) if J > 0
            ]
            for key in keys:
                J = J_up if key in ('up', 'shared') else J_down
                for role in roles:
                    self.att[key + role] = torch.nn.Parameter(
                        torch.empty(1, heads, J * out_channels))

        total_out_channels = out_channels * (heads if concat else 1)
        if bias:
            self.bias = torch.nn.Parameter(torch.empty(total_out_channels))
        else:
            self.register_parameter('bias', None)

        self.reset_parameters()

    def reset_parameters(self):
        super().reset_parameters()
        self._cached_operators = self._last_operators = None
        block = self.heads * self.out_channels
        for weight in self.lin.weight.data.split(block, dim=0):
            glorot(weight)
            weight.mul_(self.gain)
        for att in self.att.values():
            glorot(att)
            att.data.mul_(self.gain)
        zeros(self.bias)

    def forward(
        self,
        x: Tensor,
        up_index: Optional[Adj] = None,
        up_weight: OptTensor = None,
        down_index: Optional[Adj] = None,
        down_weight: OptTensor = None,
        hodge_index: Optional[Adj] = None,
        hodge_weight: OptTensor = None,
        return_attention_weights: Optional[bool] = None,
    ) -> Union[Tensor, Tuple[Tensor, Tuple[Optional[Tuple[Tensor, Tensor]],
                                           Optional[Tuple[Tensor, Tensor]]]]]:
        r"""Runs the forward pass of the module.

        Args:
            x (torch.Tensor): Simplex features :math:`(N, F_{in})` or
                :math:`(B, N, F_{in})`.
            up_index (torch.Tensor or SparseTensor, optional): The upper
                Laplacian :math:`\mathbf{L}^{(u)}` (its pattern for attention
                branches). :obj:`None`: no upper neighbours (zero branch).
            up_weight (torch.Tensor, optional): Its entries; needed by
                fixed-weight branches and by orientation equivariance.
            down_index (torch.Tensor or SparseTensor, optional): The lower
                Laplacian :math:`\mathbf{L}^{(d)}`, as :obj:`up_index`.
            down_weight (torch.Tensor, optional): Its entries.
            hodge_index (torch.Tensor or SparseTensor, optional): The Hodge
                Laplacian :math:`\widetilde{\mathbf{L}}` scaled to largest
                eigenvalue 1; needed when :obj:`J_harmonic > 0`.
            hodge_weight (torch.Tensor, optional): Its entries.
            return_attention_weights (bool, optional): If set to any value,
                additionally returns the attention coefficients of the upper
                and lower branches. (default: :obj:`None`)

        Returns:
            torch.Tensor or (torch.Tensor, (tuple, tuple)): The output
            :math:`(N, H F_{out})` or :math:`(B, N, H F_{out})`
            (:math:`F_{out}` if :obj:`concat=False`); with
            :obj:`return_attention_weights`, also :obj:`(up, down)` as
            described under **Shapes**.
        """
        if not isinstance(x, Tensor) or not x.is_floating_point():
            raise TypeError(f"'x' must be a floating-point tensor (got "
                            f"{type(x).__name__})")
        if x.dim() not in (2, 3) or x.size(-1) != self.in_channels:
            raise ValueError(f"'x' must have shape [N, {self.in_channels}] or "
                             f"[B, N, {self.in_channels}] (got {list(x.shape)})")
        if return_attention_weights and self.attention is None:
            raise ValueError("'return_attention_weights' needs attention "
                             "(this layer has attention=None)")
        batched = x.dim() == 3
        x = x if batched else x.unsqueeze(0)
        B, N = x.size(0), x.size(1)
        H, C = self.heads, self.out_channels

        ops = self._operators(N, x.device, up_index, up_weight, down_index,
                              down_weight, hodge_index, hodge_weight)

        out: Optional[Tensor] = None
        attention_weights: List[Optional[Tuple[Tensor, Tensor]]] = []
        active: List[str] = []
        for branch in ('up', 'down'):
            op: Optional[SparseOperator] = getattr(ops, branch)
            weights: Optional[Tuple[Tensor, Tensor]] = None
            if op is not None and op.nnz > 0:
                active.append(branch)
                if self.attention is None:
                    out_branch = self._fixed_branch(branch, op, x)
                else:
                    out_branch, alpha = self._attention_branch(branch, op, x)
                    weights = (op.index, alpha if batched else alpha[0])
                out = out_branch if out is None else _add(out, out_branch)
            elif op is not None and self.attention is not None:
                weights = (op.index, x.new_zeros((B, 0, H) if batched else (0, H)))
            attention_weights.append(weights)

        if 'harmonic' in self._blocks:
            if ops.harmonic is None:  # J_harmonic = 0: P = I
                out_branch = self._taps(x, 'harmonic')[0]
            else:
                out_branch = self._fixed_branch('harmonic', ops.harmonic, x,
                                                hops=self.J_harmonic)
            out = out_branch if out is None else _add(out, out_branch)
        # Parameters that no branch used get a zero gradient rather than none
        # (DistributedDataParallel expects a gradient for every parameter in
        # every step): the attention vectors of branches without any neighbour
        # and, where no branch reaches any simplex, the filter weights.
        if out is None:
            out = x.new_zeros(B, N, H, C) + 0.0 * self.lin.weight.sum()
        idle = [att for key, att in self.att.items()
                if not (active if key.startswith('shared') else
                        key.split('_')[0] in active)]
        if idle:
            out = _add(out, 0.0 * sum(att.sum() for att in idle))

        if not self.concat:
            out = out.mean(dim=2)
        if self.bias is not None:
            out = _add(out, self.bias.view(out.shape[2:]))
        out = out.reshape(B, N, -1)
        out = out if batched else out.squeeze(0)

        if return_attention_weights:
            return out, (attention_weights[0], attention_weights[1])
        return out

    def filter_taps(self, x: Tensor) -> Dict[str, List[Tensor]]:
        r"""The filtered features :math:`\mathbf{Z}\mathbf{W}_p`, one tensor
        :math:`(..., N, H, F_{out})` per tap :math:`p`, as :obj:`{'up':
        [...], 'down': [...], 'harmonic': [...]}` (present branches only; with
        :obj:`shared_weights`, :obj:`'down'` holds the values of :obj:`'up'`).
        The layer itself propagates the input instead of the taps where the
        input is the narrower side (see the class description).

        Args:
            x (torch.Tensor): Simplex features :math:`(..., N, F_{in})`.

        Returns:
            Dict[str, List[torch.Tensor]]: The taps of each present branch.
        """
        return {branch: self._taps(x, branch) for branch in
                ('up', 'down', 'harmonic') if branch in self._blocks or
                (branch == 'down' and self.shared_weights)}

    def _taps(self, x: Tensor, branch: str) -> List[Tensor]:
        # One product per tap, so that each comes out contiguous.
        shape = (*x.shape[:-1], self.heads, self.out_channels)
        return [F.linear(x, w).view(shape) for w in self._branch_weights(branch)]

    def _branch_weights(self, branch: str) -> Tuple[Tensor, ...]:
        # W_p^T of the taps of a branch, [heads * out_channels, in_channels]
        # each (the lower branch takes the upper one's with shared weights).
        name = 'up' if self.shared_weights and branch == 'down' else branch
        block = self._blocks.index(name)
        start = sum(self._block_sizes[:block])
        return self._tap_weights()[start:start + self._block_sizes[block]]

    def _tap_weights(self) -> Tuple[Tensor, ...]:
        # W_p^T of every tap, [heads * out_channels, in_channels] each.
        return self.lin.weight.split(self.heads * self.out_channels, dim=0)

    @torch.compiler.disable
    def _operators(self, num_nodes: int, device: torch.device,
                   *inputs: Optional[Adj]) -> _Operators:
        # The sparse operators of the inputs: with `cached`, those of the first
        # call; otherwise those of the previous call if it got the very same
        # tensors (same objects, not modified in place since, no gradient),
        # else built anew.
        if self.cached and self._cached_operators is not None:
            return self._cached_operators
        key = _cache_key(num_nodes, device, inputs)
        last = self._last_operators
        if key is not None and last is not None and _same_key(last[0], key):
            return last[1]
        ops = self._build_operators(num_nodes, device, *inputs)
        if self.cached:
            self._cached_operators = ops
        self._last_operators = None if key is None else (key, ops)
        return ops

    def _build_operators(self, num_nodes, device, up_index, up_weight, down_index,
                         down_weight, hodge_index, hodge_weight) -> _Operators:
        branches = []
        for branch, index, weight, J in (
            ('up', up_index, up_weight, self.J_up),
            ('down', down_index, down_weight, self.J_down),
        ):
            if J == 0 or index is None:
                branches.append(None)
                continue
            index, weight = to_index_weight(index, weight)
            if weight is None and (self.attention is None
                                   or self.orientation_equivariant):
                reason = ("fixed-weight branches (attention=None)"
                          if self.attention is None else
                          "orientation equivariance (signs of the entries)")
                raise ValueError(f"'{branch}_weight' is required by {reason}")
            op = SparseOperator.from_index(index.to(device), None if weight is None
                                           else weight.to(device), num_nodes)
            if self.attention is not None:
                op = op.neighbourhood(self.add_self_loops)
            branches.append(op)

        harmonic = None
        if self.J_harmonic:
            if hodge_index is None:
                raise ValueError(f"J_harmonic={self.J_harmonic} needs the "
                                 f"normalised Hodge Laplacian "
                                 f"(hodge_index, hodge_weight)")
            index, weight = to_index_weight(hodge_index, hodge_weight)
            if weight is None:
                raise ValueError("'hodge_weight' is required by the harmonic "
                                 "filter")
            harmonic = SparseOperator.from_index(index.to(device), weight.to(device),
                                                 num_nodes).shifted(self.eps)
        return _Operators(branches[0], branches[1], harmonic)

    def _fixed_branch(self, branch: str, op: SparseOperator, x: Tensor,
                      hops: Optional[int] = None) -> Tensor:
        # Values shared by all signals and heads: one product on [N, B*H*C],
        # or on [N, B*F_in] when the input is the narrower side.
        assert op.weight is not None
        layout = _Layout(self, op, x.size(0), 1, 'wide')
        narrow = self.in_channels < self.heads * self.out_channels
        taps = None if narrow else self._taps(x, branch)
        return self._filter(layout, layout.product(op.weight.to(x.dtype)), x, branch,
                            taps, hops)

    def _attention_branch(self, branch: str, op: SparseOperator,
                          x: Tensor) -> Tuple[Tensor, Tensor]:
        # Values differ per signal and head: coefficients [nnz, B*H] on the
        # shared pattern, applied to each (signal, head) group.
        B, N, F_in = x.shape
        H, C = self.heads, self.out_channels
        narrow = F_in < C  # propagate the input, not the taps
        taps = None if narrow else self._taps(x, branch)
        width = F_in if narrow else C
        # Groups side by side ([N, W, B*H], gathered per entry) beat the
        # block-diagonal operator for 1 or 2 columns per group (measured:
        # 6.5 vs 21 ms for J = 3, 32 groups, 11.6k entries); the block-diagonal
        # sparse product wins from 4 columns on (18 vs 27 ms).
        layout = _Layout(self, op, B, H, 'gather' if self._fused() and B * H > 1
                         and width <= 2 else 'block')
        key = 'shared' if self.attention == 'shared' else branch
        if self.orientation_equivariant:
            # e_ij = sign(L_ij) <a * h_i, h_j> over the concatenated taps
            # h_i = ||_p [Z W_p]_i, a bilinear form z_i^T M z_j of the input.
            assert op.weight is not None
            sign = op.weight.to(x.dtype).unsqueeze(1)
            left, right = self._bilinear_factors(key, branch, x, taps)
            alpha = self.edge_updater(op.index, size=(N, N), alpha=None,
                                      score=sign * layout.sddmm(left, right))
            value = alpha * sign
        else:
            # a^T h_i = (sum_p W_p a_p)^T z_i: the attention vectors folded into
            # the filter weights, so that no [N, J * C] product is formed.
            weights = self._branch_weights(branch)
            J = len(weights)
            weight = torch.stack(weights).view(J, H, C, -1)
            att = torch.stack([self.att[key + '_src'], self.att[key + '_dst']])
            att = att.view(2, H, J, C).permute(0, 2, 1, 3).unsqueeze(-1)
            folded = (att * weight).sum(dim=(1, 3)).view(2 * H, -1)  # [2H, F_in]
            scores = F.linear(x, folded).view(B, N, 2, H).permute(2, 1, 0, 3)
            scores = scores.reshape(2, N, B * H).contiguous()
            alpha = value = self.edge_updater(op.index, size=(N, N), score=None,
                                              alpha=(scores[0], scores[1]))
        out = self._filter(layout, layout.product(value), x, branch, taps)
        return out, alpha.view(op.nnz, B, H).transpose(0, 1)

    def _bilinear_factors(self, key: str, branch: str, x: Tensor,
                          taps: Optional[List[Tensor]]) -> Tuple[Tensor, Tensor]:
        # (u, v), [B, N, H, W] each, with <u_i, v_j> = <a * h_i, h_j>: from the
        # filter taps, or from the input where none are given (the narrower
        # side).
        B, N, F_in = x.shape
        H, C = self.heads, self.out_channels
        weights = self._branch_weights(branch)
        att = self.att[key].view(H, len(weights), C)
        if taps is None:  # M_h = sum_p W_ph^T diag(a_ph) W_ph, [H, F_in, F_in]
            weight = torch.stack(weights).view(-1, H, C, F_in)
            bilinear = torch.einsum('phcf,hpc,phcg->hfg', weight, att, weight)
            left = torch.einsum('bnf,hfg->bnhg', x, bilinear)
            return left, x.unsqueeze(2).expand(B, N, H, F_in)
        h = torch.cat(taps, dim=-1)  # [B, N, H, J * C]
        return h * att.view(H, -1), h

    def _filter(self, layout: '_Layout', product: _Product,
                x: Tensor, branch: str, taps: Optional[List[Tensor]],
                hops: Optional[int] = None) -> Tensor:
        # The filter of a branch, [B, N, H, C]: with `hops`, P^hops Z W (the
        # harmonic filter), else sum_p A^p Z W_p. By Horner's rule on the taps
        # Z W_p, or, where none are given (the input is the narrower side), on
        # the powers A^p Z, multiplied by the W_p afterwards.
        B, N, F_in = x.shape
        H, C = self.heads, self.out_channels
        if taps is not None:
            taps = [layout.to_layout(t) for t in taps]
            out = product(taps[0], hops) if hops else _horner(product, taps)
            return layout.from_layout(out).reshape(B, N, H, C)
        weights = self._branch_weights(branch)
        signal = layout.to_layout(x.unsqueeze(2).expand(B, N, layout.heads, F_in))
        powers = ([product(signal, hops)] if hops else
                  _powers(product, signal, len(weights)))
        powers = torch.stack([layout.from_layout(p) for p in powers])
        weight = torch.stack(weights).view(-1, H, C, F_in)
        return torch.einsum('jbnhf,jhcf->bnhc', powers.expand(-1, -1, -1, H, -1), weight)

    def edge_update(self, alpha_j: OptTensor, alpha_i: OptTensor,
                    score: OptTensor, index: Tensor,
                    dim_size: Optional[int]) -> Tensor:
        if score is None:
            assert alpha_j is not None and alpha_i is not None
            score = _add(alpha_j, alpha_i)
        alpha = F.leaky_relu(score, self.negative_slope)
        assert dim_size is not None
        alpha = segment_softmax(alpha, index, dim_size)
        return F.dropout(alpha, p=self.dropout, training=self.training)

    def _fused(self) -> bool:
        # Whether products run as fused sparse kernels (message_and_aggregate),
        # not through PyG's gather/scatter path (fusing off, or explaining).
        return self.fuse and not self.explain

    def gather_scatter(self, op: SparseOperator, x: Tensor, value: Tensor) -> Tensor:
        r"""The product of :obj:`op` with entries :obj:`value` and :obj:`x`
        through PyG's gather/scatter path (:meth:`message`): used instead of
        the fused sparse product when fusing is off or the layer is being
        explained."""
        return self.propagate(op.index, x=x, alpha=value.view(-1, 1))

    def message(self, x_j: Tensor, alpha: Tensor) -> Tensor:
        return alpha * x_j

    def message_and_aggregate(self, edge_index: SparseOperator, x: Tensor,
                              alpha: Tensor, t_alpha: OptTensor = None,
                              hops: int = 1) -> Tensor:
        return edge_index.matmul(alpha.view(-1), x, t_alpha, hops)

    def __repr__(self) -> str:
        return (f'{self.__class__.__name__}({self.in_channels}, '
                f'{self.out_channels}, J_up={self.J_up}, J_down={self.J_down}, '
                f'J_harmonic={self.J_harmonic}, heads={self.heads}, '
                f'attention={self.attention!r})')


class _Layout:
    # How the (signal, head) groups of simplex features [B, N, heads, W] meet
    # one operator:
    # - 'wide': one set of values [nnz] for every group, features [N, B*heads*W]
    #   (one sparse product; `heads` is the number of groups per signal of the
    #   features, 1 where they are the same for all heads);
    # - 'block': values [nnz, B*heads] per group, features [B*heads*N, W] against
    #   the block-diagonal operator (one sparse product);
    # - 'gather': values [nnz, B*heads], features [N, W, B*heads], gathered and
    #   summed entry by entry (SparseOperator.matmul_grouped).
    def __init__(self, conv: SANConv, op: SparseOperator, batch_size: int,
                 heads: int, mode: str):
        self.conv, self.op, self.mode = conv, op, mode
        self.batch_size, self.heads = batch_size, heads
        self.operator = op.expand(batch_size * heads) if mode == 'block' else op

    def to_layout(self, x: Tensor) -> Tensor:
        B, N, H, W = x.shape
        if self.mode == 'wide':
            return x.transpose(0, 1).reshape(N, B * H * W)
        if self.mode == 'block':
            return x.transpose(1, 2).reshape(B * H * N, W)
        return x.permute(1, 3, 0, 2).reshape(N, W, B * H).contiguous()

    def from_layout(self, x: Tensor) -> Tensor:
        N, B, H = self.op.num_nodes, self.batch_size, self.heads
        if self.mode == 'wide':
            return x.view(N, B, H, -1).transpose(0, 1)
        if self.mode == 'block':
            return x.view(B, H, N, -1).transpose(1, 2)
        return x.view(N, -1, B, H).permute(2, 0, 3, 1)

    def product(self, value: Tensor) -> _Product:
        # (x, hops) -> A^hops x (in this layout) with the entries `value`.
        if self.mode == 'gather':
            return _repeated(lambda x: self.op.matmul_grouped(value, x))
        if self.mode == 'block':
            value = value.t().reshape(-1)
        op, conv = self.operator, self.conv
        if conv._fused():
            t_value = op.transpose_values(value)  # shared by every backward
            return lambda x, hops=1: conv.message_and_aggregate(op, x, value, t_value,
                                                                hops)
        return _repeated(lambda x: conv.gather_scatter(op, x, value))

    def sddmm(self, a: Tensor, b: Tensor) -> Tensor:
        # <a_i, b_j> per entry and group, [nnz, B*heads], from [B, N, heads, W].
        a, b = self.to_layout(a), self.to_layout(b)
        if self.mode == 'gather':
            return self.op.sddmm_grouped(a, b)
        return self.operator.sddmm(a, b).view(-1, self.op.nnz).t()


def _repeated(product: Callable[[Tensor], Tensor]) -> _Product:
    def power(x: Tensor, hops: int = 1) -> Tensor:
        for _ in range(hops):
            x = product(x)
        return x
    return power


def _add(out: Tensor, other: Tensor) -> Tensor:
    # out + other, in place where `out` is a tensor of its own: every branch
    # output is fresh and kept by no backward, but an in-place sum into a view
    # would make the backward copy the gradient of the view's base
    # (CopySlices), two output-sized allocations instead of one.
    return out + other if out._base is not None else out.add_(other)


def _horner(product: _Product, taps: List[Tensor]) -> Tensor:
    # A (h_1 + A (h_2 + ... + A h_J)): J products with the same values. The
    # sums go into the products' outputs, which no backward keeps.
    out = product(taps[-1])
    for tap in reversed(taps[:-1]):
        out = product(_add(out, tap))
    return out


def _powers(product: _Product, x: Tensor,
            num: int) -> List[Tensor]:
    # [A x, A^2 x, ..., A^num x].
    powers = [product(x)]
    for _ in range(num - 1):
        powers.append(product(powers[-1]))
    return powers


def _cache_key(num_nodes: int, device: torch.device,
               inputs: Tuple[Optional[Adj], ...]) -> Optional[tuple]:
    # Weak references with version counters: a tensor that was freed or
    # modified in place never matches again. None if an input cannot be keyed.
    key: list = [num_nodes, device]
    for value in inputs:
        if value is None:
            key.append(None)
        elif isinstance(value, Tensor) and not value.requires_grad:
            key.append((weakref.ref(value), value._version))
        else:
            return None
    return tuple(key)


def _same_key(old: tuple, new: tuple) -> bool:
    if old[:2] != new[:2]:
        return False
    for a, b in zip(old[2:], new[2:]):
        if (a is None) != (b is None):
            return False
        if a is not None and (a[0]() is None or a[0]() is not b[0]() or a[1] != b[1]):
            return False
    return True
