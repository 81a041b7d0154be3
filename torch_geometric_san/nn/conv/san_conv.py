import inspect
import math
import threading
from typing import Any, Callable, Dict, List, Optional, Tuple, Union

import torch
import torch.nn.functional as F
from torch import Tensor
from torch.nn import ParameterDict
from torch.nn.parameter import UninitializedParameter

from torch_geometric.nn.conv import MessagePassing
from torch_geometric.nn.dense.linear import (Linear, is_uninitialized_parameter,
                                             reset_bias_, reset_weight_)
from torch_geometric.nn.inits import glorot, zeros
from torch_geometric.typing import OptTensor

from torch_geometric_san.nn.functional import dropout, tie_gradients
from torch_geometric_san.sparse import (SimplicialOperators, SparseOperator,
                                        as_operators)
from torch_geometric_san.sparse.propagation import (accumulate, polynomial, powers,
                                                   prepare, sddmm)
from torch_geometric_san.utils.validation import (check_bool, check_dropout,
                                                  check_float_tensor,
                                                  check_in_channels, check_int,
                                                  check_real, check_same_dtype,
                                                  check_slope,
                                                  check_sparse_precision)

ATTENTION_MODES = ("separate", "shared", None)


#: Held while a lazy weight is made: layers called from several threads at once
#: made it twice, or computed with a weight made but not yet initialised.
_MATERIALIZING = threading.Lock()


@torch.compiler.disable  # (eager: Dynamo cannot trace materialising a parameter)
def _materialize_linear(lin: Linear, in_channels: int, owner: torch.nn.Module,
                        init: Optional[Callable[[Tensor], Any]] = None) -> bool:
    r"""Gives a lazy :class:`torch_geometric.nn.dense.Linear` (:obj:`in_channels=-1`)
    its weight for :obj:`in_channels` inputs, in the dtype and on the device of
    :obj:`owner`'s other parameters (a lazy weight loses its dtype in a pickle or in
    PyG's state-dict loading; a layer with no other parameter, without attention
    and bias, keeps what its weight has), initialised as PyG does, then by
    :obj:`init` (given the weight). Returns whether it did; :obj:`False` for a
    weight that exists. Thread-safe: :obj:`lin.in_channels` is set last, so that a
    layer whose :obj:`in_channels` is set has its weight ready.

    Raises:
        ValueError: If the lazy weight was lost, as torch replaces an uninitialised
            parameter moved to 'meta' by an empty one.
    """
    if lin.in_channels != -1:
        return False
    with _MATERIALIZING:
        if lin.in_channels != -1:  # (made meanwhile by another thread)
            return False
        if not is_uninitialized_parameter(lin.weight):
            raise ValueError("a lazy layer (in_channels=-1) lost its uninitialised "
                             "weight when it was moved to another device type (torch "
                             "replaces it on 'meta') before its first input: run one "
                             "input through it first, or build it under `with "
                             "torch.device('meta')`")
        like = next((p for p in owner.parameters()
                     if not is_uninitialized_parameter(p)), lin.weight)
        try:
            with torch.no_grad():
                lin.weight.materialize((lin.out_channels, in_channels),
                                       device=like.device, dtype=like.dtype)
                # (Linear.reset_parameters, for the in_channels set below)
                reset_weight_(lin.weight, in_channels, lin.weight_initializer)
                reset_bias_(lin.bias, in_channels, lin.bias_initializer)
                if init is not None:
                    init(lin.weight)
        except BaseException:  # (e.g. Ctrl-C: a weight made, not initialised, stayed)
            lin.weight = UninitializedParameter(device=like.device, dtype=like.dtype)
            raise
        if hasattr(lin, '_hook'):  # (PyG's hook, which would do the same on a call)
            lin._hook.remove()
            del lin._hook
        lin.in_channels = in_channels
    return True


AttentionWeights = Optional[Tuple[Tensor, Tensor]]


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

    The layer is called as :obj:`conv(x, ops)` with the operators of the
    simplices' order as one value,
    :meth:`~torch_geometric_san.data.SimplicialComplexData.operators`; it keeps
    no operator state, and the forms it derives from the operators
    (neighbourhoods, compressed rows, the shifted Hodge Laplacian) are kept on
    :obj:`ops`, so every layer given the same value shares them.

    **Computation.** The powers are never formed: a branch is
    :func:`~torch_geometric_san.sparse.propagation.polynomial`,
    :math:`\mathbf{A}(\mathbf{h}_1 + \mathbf{A}(\mathbf{h}_2 + \dots +
    \mathbf{A}\mathbf{h}_J))` with :math:`\mathbf{h}_p = \mathbf{Z}
    \mathbf{W}_p`, i.e. :math:`J` sparse products with the same coefficients,
    and the harmonic filter is :math:`J_h` sparse products with fixed values.
    Where the input is narrower than the output (:math:`F_{in} < F_{out}` for
    attention branches, whose coefficients differ per head;
    :math:`F_{in} < H F_{out}` for fixed-weight ones) the layer propagates the
    input instead, :math:`\sum_p (\mathbf{A}^p \mathbf{Z}) \mathbf{W}_p`, and
    the scores of the orientation-equivariant option are the bilinear form
    :math:`\mathbf{z}_i^{\top} \mathbf{M} \mathbf{z}_j` with :math:`\mathbf{M} =
    \sum_p \mathbf{W}_p \mathrm{diag}(\mathbf{a}_p) \mathbf{W}_p^{\top}`: one
    layer costs :math:`O(\mathrm{nnz} \cdot J \cdot \min(F_{in}, F_{out}))` per
    head. For :math:`B` signals on one complex (input :math:`(B, N, F_{in})`)
    the coefficients of all signals and heads are computed side by side on the
    shared pattern. The products, their layouts and their hand-written
    backward live in :mod:`torch_geometric_san.sparse`; the coefficients are
    :meth:`SparseOperator.attention
    <torch_geometric_san.sparse.SparseOperator.attention>`. On the CPU both run
    in compiled kernels (:mod:`torch_geometric_san.sparse.compiled`, built on
    first use) where they can be built. The layer runs under
    :func:`torch.compile` (deriving the operators' forms runs eagerly), and
    under :func:`torch.autocast` on the CPU in its parameters' dtype (the sparse
    products take no half precision there: autocast is off inside the layer, and
    a half-precision input is converted). TorchScript, PyG's explainers,
    :func:`torch.export` (strict export stops at the eager step; non-strict
    export runs only where an eager call has derived the forms of the same
    operators) and torch.func's transforms of the attention are not supported.

    **Neighbourhoods.** The attention neighbourhood of simplex :math:`i` is the
    off-diagonal sparsity pattern of row :math:`i` of the operator; with
    :obj:`add_self_loops=True`, every simplex whose row is non-empty also
    attends to itself. For a Laplacian this reproduces exactly its sparsity
    pattern (as in the paper): a simplex without upper neighbours (an edge in
    no triangle) has an empty upper neighbourhood, and an empty neighbourhood
    sends no message (a zero row, never NaN). Unlike
    :class:`~torch_geometric.nn.conv.GATConv`, an isolated simplex therefore
    does not receive its own features from an attention branch.

    **Special cases** (paper, "Comparisons with related works"): GAT is
    :obj:`SANConv(J_up=1, J_down=0, J_harmonic=None, add_self_loops=False,
    bias=False)` on node signals; :class:`SATConv`, :class:`SCNNConv`,
    :class:`SNNConv` and :class:`SCNConv` set :obj:`attention` and the filter
    orders.

    **Orientation equivariance.** With :obj:`orientation_equivariant=True` the
    messages are signed by :math:`\mathrm{sign}(L_{ij})` (self-loops
    :math:`+1`) and the scores become :math:`e_{ij} = \mathrm{LeakyReLU}(
    \mathrm{sign}(L_{ij})\, \langle \mathbf{a} \odot \mathbf{h}_i,
    \mathbf{h}_j \rangle)`, which do not change when the reference orientation
    of simplices is flipped (the signs of :math:`\mathbf{h}_i`,
    :math:`\mathbf{h}_j` and :math:`L_{ij}` flip together) and still tell
    whether neighbouring signals agree in relative orientation. Flipping the
    orientation of any set of simplices then flips exactly the matching output
    rows (the harmonic branch is linear, so already equivariant). A bias
    breaks this (the layer must be odd): use :obj:`bias=False`. Fixed-weight
    branches (:obj:`attention=None`) are always equivariant.

    **Per-signal orientation.** Operators carrying an orientation per signal
    (:meth:`SimplicialOperators.reoriented
    <torch_geometric_san.sparse.SimplicialOperators.reoriented>`, signs
    :math:`\mathbf{D}_b` for signal :math:`b` of the input :math:`(B, N,
    F_{in})`) give each signal the output it would have on its own
    re-oriented operators :math:`\mathbf{D}_b \mathbf{L} \mathbf{D}_b`, on the
    shared pattern: a branch that depends on the operator's signs (fixed
    values, the harmonic filter, orientation-equivariant attention) runs as
    :math:`\mathbf{D}_b\, \mathrm{branch}(\mathbf{D}_b \mathbf{z}_b)`
    (exact: :math:`\mathbf{D}_b (\mathbf{D}_b \mathbf{L} \mathbf{D}_b)^p
    \mathbf{D}_b = \mathbf{L}^p`, and the equivariant scores see only signs
    relative to the signals); plain attention uses only the pattern, which
    no orientation changes. The bias is added after.

    Args:
        in_channels (int): Size of each input sample, or :obj:`-1` to take it
            from the first input (lazy initialisation, as in PyG: run one
            forward pass before building the optimiser or wrapping the model in
            :class:`~torch.nn.parallel.DistributedDataParallel`; not with an
            :obj:`ensemble`).
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
        negative_slope (float, optional): LeakyReLU slope, in :math:`[-1, 1]`.
            (default: :obj:`0.2`)
        dropout (float, optional): Dropout probability of the attention
            coefficients (:func:`~torch_geometric_san.nn.functional.dropout`).
            (default: :obj:`0.0`)
        add_self_loops (bool, optional): Whether simplices with a non-empty
            neighbourhood attend to themselves (see above); ignored by
            fixed-weight branches, which use the operator as given.
            (default: :obj:`True`)
        bias (bool, optional): Whether to learn an additive bias.
            (default: :obj:`True`)
        attention (str, optional): :obj:`"separate"` (one attention mechanism
            per branch), :obj:`"shared"` (one for both branches, as SAT; needs
            :obj:`J_up == J_down`) or :obj:`None` (no attention: the branches
            propagate with the operator's values, as SCNN).
            (default: :obj:`"separate"`)
        shared_weights (bool, optional): Whether the lower branch uses the
            filter weights of the upper one, :math:`\mathbf{W}^{(d)}_p =
            \mathbf{W}^{(u)}_p` (as SNN; needs :obj:`J_up == J_down`).
            (default: :obj:`False`)
        orientation_equivariant (bool, optional): See above.
            (default: :obj:`False`)
        normalize (bool, optional): Whether fixed-weight branches use the upper
            and lower Laplacians divided by their largest eigenvalues, per
            complex (:meth:`~torch_geometric_san.sparse.SparseOperator.scaled`),
            which keeps their powers bounded, instead of the values as given
            (learnable values get their gradient with the eigenvalues held
            fixed). (default: :obj:`False`)
        gain (float, optional): Gain of the Glorot (Xavier uniform)
            initialisation of the filter weights and attention vectors.
            (default: :obj:`1.0`)
        ensemble (int, optional): If set to :math:`E`, the layer holds
            :math:`E` independent sets of parameters (filter weights
            :math:`(E, \cdot, F_{in})`, attention vectors and bias with a
            leading :math:`E`) and takes :math:`E` signals
            :math:`(E, N, F_{in})`, signal :math:`e` filtered with the
            parameters of member :math:`e`: :math:`E` independent networks
            (several runs, seeds or hyper-parameters) trained as one on the
            same operators, their weight products batched. Member :math:`e`
            computes what a layer with its parameters computes on signal
            :math:`e` alone, up to rounding (the batched products add in
            another order: not bit for bit). (default: :obj:`None`)
        **kwargs (optional): None is taken; each is refused by name. The layer
            sums its messages in its own sparse products, so the arguments of
            :class:`torch_geometric.nn.conv.MessagePassing` (:obj:`aggr`,
            :obj:`flow`, :obj:`node_dim`, ...) would have no effect.

    Shapes:
        - **input:**
          simplex features :math:`(N, F_{in})`, or :math:`(B, N, F_{in})` for
          :math:`B` signals on the same complex (each with its own attention);
          :math:`(E, N, F_{in})` for an :obj:`ensemble` of :math:`E`;
          operators :class:`~torch_geometric_san.sparse.SimplicialOperators`
          of :math:`N` simplices
        - **output:** simplex features :math:`(N, H F_{out})` or
          :math:`(B, N, H F_{out})` (:math:`F_{out}` if :obj:`concat=False`).
          With :obj:`return_attention_weights`, additionally
          :obj:`(up, down)`, each :obj:`None` for an absent branch or
          :obj:`(index, alpha)` with index :math:`(2, |\mathcal{E}|)` and
          alpha :math:`(|\mathcal{E}|, H)` (:math:`(B, |\mathcal{E}|, H)`).

    Example:
        >>> import torch
        >>> from torch_geometric_san.data import SimplicialComplexData
        >>> data = SimplicialComplexData.from_simplices([[0, 1, 2], [1, 2, 3]],
        ...                                             close=True)
        >>> conv = SANConv(3, 8, J_up=2, J_down=2, J_harmonic=2, heads=2)
        >>> x = torch.randn(data.num_simplices(1), 3)  # signals on 5 edges
        >>> conv(x, data.operators(1)).shape
        torch.Size([5, 16])
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
        normalize: bool = False,
        gain: float = 1.0,
        ensemble: Optional[int] = None,
        **kwargs,
    ):
        if 'cached' in kwargs:
            raise TypeError("'cached' was removed: layers keep no operators; build "
                            "them once with ops = data.operators(k) and pass the same "
                            "value to every call (see the migration page)")
        unknown = sorted(set(kwargs) - set(inspect.signature(MessagePassing).parameters))
        if unknown:  # (they were said to be MessagePassing's)
            raise TypeError(f"{type(self).__name__} got unexpected arguments {unknown}")
        if kwargs:  # (MessagePassing's aggr, flow, ... were accepted and ignored)
            raise TypeError(f"unexpected arguments {sorted(kwargs)}: {type(self).__name__} "
                            f"sums its messages in its own sparse products, so "
                            f"MessagePassing's arguments (aggr, flow, node_dim, ...) "
                            f"would have no effect")
        super().__init__(aggr='add', node_dim=-2)
        # (the checked values are kept: Python ints and floats, where NumPy's
        # failed in torch's split later)
        in_channels = check_in_channels(in_channels, "in_channels")
        out_channels, heads, J_up, J_down = (
            check_int(value, name, minimum=low) for name, value, low in (
                ("out_channels", out_channels, 1), ("heads", heads, 1),
                ("J_up", J_up, 0), ("J_down", J_down, 0)))
        if J_harmonic is not None:
            J_harmonic = check_int(J_harmonic, "J_harmonic (None or an int)", minimum=0)
        eps, gain = check_real(eps, "eps"), check_real(gain, "gain")
        negative_slope = check_slope(negative_slope)
        dropout = check_dropout(dropout, "'dropout'")
        for name, value in (("concat", concat), ("add_self_loops", add_self_loops),
                            ("bias", bias), ("shared_weights", shared_weights),
                            ("orientation_equivariant", orientation_equivariant),
                            ("normalize", normalize)):
            check_bool(value, name)
        if ensemble is not None:
            ensemble = check_int(ensemble, "ensemble (None or an int)", minimum=1)
            if in_channels == -1:
                raise ValueError("an ensemble needs its 'in_channels' (its weights "
                                 "are [E, rows, in_channels]); -1 (lazy "
                                 "initialisation) is for a single network")
        if not 0.0 < eps <= 2.0:
            raise ValueError(f"'eps' must lie in (0, 2] for the harmonic filter "
                             f"of a Laplacian scaled to largest eigenvalue 1 "
                             f"(got {eps})")
        if not J_harmonic and not math.isclose(eps, 0.9, rel_tol=1e-6):
            # (0.9 given as a float32 too; another value was accepted and ignored)
            raise ValueError(f"'eps' is the step of the harmonic filter, which "
                             f"J_harmonic={J_harmonic} does not have (got eps={eps})")
        if attention not in ATTENTION_MODES:
            raise ValueError(f"'attention' must be one of {ATTENTION_MODES} "
                             f"(got {attention!r})")
        if attention is None and (dropout > 0.0 or not math.isclose(
                negative_slope, 0.2, rel_tol=1e-6)):  # (0.2 given as a float32 too)
            # (accepted and ignored: no regularisation, no warning)
            raise ValueError(f"{type(self).__name__} has no attention "
                             f"(attention=None), so 'dropout' and 'negative_slope', "
                             f"which act on attention coefficients, would have no "
                             f"effect (got dropout={dropout}, negative_slope="
                             f"{negative_slope}); a model's own dropout acts on the "
                             f"features")
        if attention is None and (not add_self_loops or orientation_equivariant):
            # (accepted and ignored, as dropout and negative_slope were)
            raise ValueError(f"{type(self).__name__} has no attention (attention=None), "
                             f"so 'add_self_loops' and 'orientation_equivariant', which "
                             f"act on attention neighbourhoods and scores, would have "
                             f"no effect (got add_self_loops={add_self_loops}, "
                             f"orientation_equivariant={orientation_equivariant}); its "
                             f"fixed-weight branches use the operators as given and "
                             f"are always orientation-equivariant")
        if attention is not None and normalize:
            raise ValueError(f"'normalize' scales the operators of fixed-weight "
                             f"branches (attention=None); with attention={attention!r} "
                             f"it would have no effect")
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
        self.normalize = normalize
        self.gain = gain
        self.ensemble = ensemble

        # Filter taps: rows of `lin` in blocks of `heads * out_channels`, the
        # J_up upper taps, the J_down lower taps (unless shared) and the
        # harmonic one.
        self._blocks: Dict[str, Tuple[int, int]] = {}  # branch -> (start, J)
        start = 0
        for branch, J in (('up', J_up), ('down', 0 if shared_weights else J_down),
                          ('harmonic', 0 if J_harmonic is None else 1)):
            if J > 0:
                self._blocks[branch] = (start, J)
                start += J
        self.num_taps = start
        self.lin = Linear(in_channels, self.num_taps * heads * out_channels,
                          bias=False)
        # An ensemble holds one set of weights per member, [E, rows, F_in];
        # the layer reads lin.weight only (it never calls lin).
        members = 1 if ensemble is None else ensemble
        if ensemble is not None:
            self.lin.weight = torch.nn.Parameter(
                torch.empty(ensemble, *self.lin.weight.shape))

        # Attention vectors, [1, heads, J * out_channels] each ([E, ...] for an
        # ensemble):
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
                        torch.empty(members, heads, J * out_channels))

        total_out_channels = out_channels * (heads if concat else 1)
        if bias:
            self.bias = torch.nn.Parameter(torch.empty(
                total_out_channels if ensemble is None else (ensemble, total_out_channels)))
        else:
            self.register_parameter('bias', None)

        self.reset_parameters()

    def _set_jittable_templates(self, raise_on_error: bool = False) -> None:
        # MessagePassing renders TorchScript-ready propagate and edge_updater
        # modules here, into files of the temporary directory that it never removes
        # (two per layer class and process). The layer has no TorchScript and no
        # propagate; MessagePassing's own edge_updater runs instead.
        pass

    def reset_parameters(self):
        super().reset_parameters()
        self._reset_filter_weights()
        for att in self.att.values():
            glorot(att)
            att.data.mul_(self.gain)
        zeros(self.bias)

    def _reset_filter_weights(self):
        # (a lazy layer's weights get theirs once materialised)
        if self.lin.in_channels != -1:
            self._init_taps(self.lin.weight)

    def _init_taps(self, weight: Tensor) -> None:
        # Glorot per tap, times the gain.
        for tap in weight.data.split(self.heads * self.out_channels, dim=-2):
            glorot(tap)
            tap.mul_(self.gain)

    def forward(
        self,
        x: Tensor,
        ops: Optional[SimplicialOperators] = None,
        *legacy_ops,
        return_attention_weights: Optional[bool] = None,
        **legacy_named_ops,
    ) -> Union[Tensor, Tuple[Tensor, Tuple[AttentionWeights, AttentionWeights]]]:
        r"""Runs the forward pass of the module.

        Args:
            x (torch.Tensor): Simplex features :math:`(N, F_{in})` or
                :math:`(B, N, F_{in})`.
            ops (SimplicialOperators): The operators of the simplices,
                :obj:`data.operators(k)`. For drop-in use the arguments of
                earlier versions are accepted instead and converted (checked
                against :obj:`x`): :obj:`up_index, up_weight, down_index,
                down_weight, hodge_index, hodge_weight`, positional or by name,
                each index an :obj:`edge_index`-style tensor, a
                :class:`torch_sparse.SparseTensor` or a :mod:`torch.sparse`
                tensor (PyG's transposed adjacency), :obj:`None` where absent.
            return_attention_weights (bool, optional): If :obj:`True`,
                additionally returns the attention coefficients of the upper
                and lower branches. (default: :obj:`None`)

        Returns:
            torch.Tensor or (torch.Tensor, (tuple, tuple)): The output
            :math:`(N, H F_{out})` or :math:`(B, N, H F_{out})`
            (:math:`F_{out}` if :obj:`concat=False`); with
            :obj:`return_attention_weights`, also :obj:`(up, down)` as
            described under **Shapes**.
        """
        if isinstance(x, Tensor) and x.device.type == 'cpu' and \
                torch.is_autocast_enabled('cpu'):
            # (the products refused the half-precision values autocast gave them, or
            # ran some branches in bfloat16: in the parameters' dtype instead)
            with torch.autocast('cpu', enabled=False):
                low = x.dtype in (torch.float16, torch.bfloat16)
                return self._forward(x.to(self.lin.weight.dtype) if low else x, ops,
                                     legacy_ops, return_attention_weights,
                                     legacy_named_ops)
        return self._forward(x, ops, legacy_ops, return_attention_weights,
                             legacy_named_ops)

    def _forward(
        self,
        x: Tensor,
        ops: Optional[SimplicialOperators],
        legacy_ops: tuple,
        return_attention_weights: Optional[bool],
        legacy_named_ops: Dict[str, Any],
    ) -> Union[Tensor, Tuple[Tensor, Tuple[AttentionWeights, AttentionWeights]]]:
        batched = self._check_signal(x)
        if return_attention_weights is not None:  # (a truthy 'False' returned them)
            return_attention_weights = check_bool(return_attention_weights,
                                                  "'return_attention_weights'")
        if return_attention_weights and self.attention is None:
            raise ValueError("'return_attention_weights' needs attention "
                             "(this layer has attention=None)")
        if self.explain:
            raise NotImplementedError("SANConv does not support PyG's explainers")
        x = x if batched else x.unsqueeze(0)
        ops = as_operators(x.size(1), ops, legacy_ops, legacy_named_ops)

        up_op, down_op, harmonic_op = self._branch_operators(ops)
        signs = ops.signs(x)  # per-signal orientation, [B, N, 1] or None
        up, up_weights = self._branch('up', x, up_op, signs)
        down, down_weights = self._branch('down', x, down_op, signs)
        harmonic = self._harmonic(x, harmonic_op, signs)
        out = self._sum(x, [up, down, harmonic])

        if not self.concat:
            out = out.mean(dim=2)
        if self.bias is not None:  # [E, 1, ...] for an ensemble
            out = accumulate(out, self.bias.view(*self.bias.shape[:-1],
                                                 *[1] * (self.ensemble is not None),
                                                 *out.shape[2:]))
        # (contiguous, as the output of every propagation layout: the gathering
        # one, taken by the compiled kernels, leaves signals innermost)
        out = out.reshape(x.size(0), x.size(1), out.size(2) * out.size(3)
                          if self.concat else out.size(2)).contiguous()
        out = out if batched else out.squeeze(0)

        if return_attention_weights:
            unbatch = (lambda w: w) if batched else _first_signal
            return out, (unbatch(up_weights), unbatch(down_weights))
        return out

    # The three branches ------------------------------------------------------------

    @torch.compiler.disable
    def _branch_operators(self, ops: SimplicialOperators
                          ) -> Tuple[Optional[SparseOperator], ...]:
        # The operator each branch propagates with (None where absent): the
        # attention neighbourhood of L^(u) and L^(d), or their values (scaled with
        # `normalize`) without attention, and I - eps L~ for the harmonic filter.
        # Their forms are derived here, once per value and kept on it, so that a
        # compiled layer breaks its graph here only.
        out: List[Optional[SparseOperator]] = []
        for branch, op, J in (('up', ops.up, self.J_up), ('down', ops.down, self.J_down)):
            if J == 0 or op is None:
                out.append(None)
            elif self.attention is None:
                if op.weight is None:
                    raise ValueError(f"fixed-weight branches (attention=None) need "
                                     f"the values of the '{branch}' operator "
                                     f"('{branch}_weight')")
                op = op.scaled() if self.normalize and not op.is_empty else op
                prepare(op)
                out.append(op)
            else:
                if op.weight is None and self.orientation_equivariant:
                    raise ValueError(f"orientation equivariance needs the signs of "
                                     f"the '{branch}' operator ('{branch}_weight')")
                op = op.neighbourhood(self.add_self_loops)
                prepare(op)
                out.append(op)
        harmonic = None
        if self.J_harmonic:
            if ops.hodge is None or ops.hodge.weight is None:
                raise ValueError(f"J_harmonic={self.J_harmonic} needs the normalised "
                                 f"Hodge Laplacian with its values ('hodge_weight')")
            harmonic = ops.hodge.shifted(self.eps)
            prepare(harmonic)
        return out[0], out[1], harmonic

    def _branch(self, branch: str, x: Tensor, op: Optional[SparseOperator],
                signs: OptTensor) -> Tuple[OptTensor, AttentionWeights]:
        # sum_p A^p Z W_p of the upper or lower branch, [B, N, H, C], and its
        # attention coefficients; None where the branch or its operator is absent.
        # Plain attention sees only the pattern, which no orientation changes.
        if op is None:
            return None, None
        if self.attention is None:
            return _flip(self._fixed_branch(branch, _flip(x, signs), op), signs), None
        B, H = x.size(0), self.heads
        if op.is_empty:
            return None, (op.index, x.new_zeros(B, 0, H))
        signs = signs if self.orientation_equivariant else None
        x = _flip(x, signs)
        taps = None if self._propagates_input(per_head=True) else self._taps(x, branch)
        alpha = self._coefficients(branch, x, op, taps)  # [nnz, B * H]
        value = alpha * op.weight.to(x.dtype).unsqueeze(1) \
            if self.orientation_equivariant else alpha
        out = _flip(self._filter(branch, x, op, value, taps), signs)
        return out, (op.index, alpha.view(alpha.size(0), B, H).transpose(0, 1))

    def _fixed_branch(self, branch: str, x: Tensor, op: SparseOperator) -> OptTensor:
        # sum_p L^p Z W_p with the operator's values.
        if op.is_empty:
            return None
        taps = None if self._propagates_input(per_head=False) else self._taps(x, branch)
        return self._filter(branch, x, op, _values(op, x), taps)

    def _harmonic(self, x: Tensor, op: Optional[SparseOperator],
                  signs: OptTensor) -> OptTensor:
        # (I - eps L~)^J_h Z W_h; Z W_h for J_h = 0; None without the branch.
        if self.J_harmonic is None:
            return None
        if self.J_harmonic == 0:
            return self._taps(x, 'harmonic')[0]
        assert op is not None
        x = _flip(x, signs)
        taps = None if self._propagates_input(per_head=False) else self._taps(x, 'harmonic')
        return _flip(self._filter('harmonic', x, op, _values(op, x), taps,
                                  hops=self.J_harmonic), signs)

    def _sum(self, x: Tensor, branches: List[OptTensor]) -> Tensor:
        # The sum of the present branches, [B, N, H, C]. Parameters that no branch
        # used, and the input where none is present (the earlier layers), get a
        # zero gradient rather than none (tie_gradients).
        present = [out for out in branches if out is not None]
        out = present[0] if present else x.new_zeros(
            x.size(0), x.size(1), self.heads, self.out_channels)
        for other in present[1:]:
            out = accumulate(out, other)
        used = self._used_parameters(branches)
        idle = [p for p in self.parameters() if p is not self.bias
                and all(p is not q for q in used)]
        return tie_gradients(out, idle + ([] if present else [x]))

    def _used_parameters(self, branches: List[OptTensor]) -> List[Tensor]:
        up, down, harmonic = (out is not None for out in branches)
        used = [self.lin.weight] if up or down or harmonic else []
        if self.attention == 'shared' and (up or down):
            used += list(self.att.values())
        for key, att in self.att.items():
            if (key.startswith('up') and up) or (key.startswith('down') and down):
                used.append(att)
        return used

    # Pieces of a branch -------------------------------------------------------------

    def _coefficients(self, branch: str, x: Tensor, op: SparseOperator,
                      taps: Optional[List[Tensor]]) -> Tensor:
        # The attention coefficients of every entry, signal and head, [nnz, B * H].
        B, N, _ = x.shape
        H, C = self.heads, self.out_channels
        key = 'shared' if self.attention == 'shared' else branch
        if self.orientation_equivariant:
            # e_ij = sign(L_ij) <a * h_i, h_j> over the concatenated taps
            # h_i = ||_p [Z W_p]_i, a bilinear form z_i^T M z_j of the input.
            sign = op.weight.to(x.dtype).unsqueeze(1)
            left, right = self._bilinear_factors(key, branch, x, taps)
            return self.edge_updater(op.index, size=(N, N), op=op, target=None,
                                     source=None, score=sign * sddmm(op, left, right))
        # a^T h_i = (sum_p W_p a_p)^T z_i: the attention vectors folded into the
        # filter weights, so that no [N, J * C] product is formed.
        # One member (E = 1) unless the layer is an ensemble.
        weights = self._branch_weights(branch)
        J = len(weights)
        weight = torch.stack(weights, dim=-3).view(-1, 1, J, H, C, x.size(-1))
        # (joined flat: the gradients of the two vectors then come back laid out as
        # the parameters are, as DistributedDataParallel's buckets expect)
        att = torch.cat([self.att[key + '_src'].reshape(-1),
                         self.att[key + '_dst'].reshape(-1)])
        att = att.view(2, -1, H, J, C).transpose(0, 1).transpose(2, 3).unsqueeze(-1)
        folded = (att * weight).sum(dim=(2, 4)).flatten(1, 2)  # [E, 2H, F_in]
        scores = _linear(x, folded if self.ensemble else folded[0])
        scores = scores.view(B, N, 2, H).permute(2, 1, 0, 3)
        scores = scores.reshape(2, N, B * H).contiguous()
        return self.edge_updater(op.index, size=(N, N), op=op, score=None,
                                 target=scores[1], source=scores[0])

    def _bilinear_factors(self, key: str, branch: str, x: Tensor,
                          taps: Optional[List[Tensor]]) -> Tuple[Tensor, Tensor]:
        # (u, v), [B, N, H, W] each, with <u_i, v_j> = <a * h_i, h_j>: from the
        # filter taps, or from the input where none are given (the narrower
        # side).
        B, N, F_in = x.shape
        H, C = self.heads, self.out_channels
        # (e: the member of an ensemble, which is the signal b.)
        weights = self._branch_weights(branch)
        e = 'b' if self.ensemble else ''
        att = self.att[key].view(-1, H, len(weights), C)
        if taps is None:  # M_h = sum_p W_ph^T diag(a_ph) W_ph, [(E,) H, F_in, F_in]
            weight = torch.stack(weights, dim=-3).view(-1, len(weights), H, C, F_in)
            weight, att = (weight, att) if self.ensemble else (weight[0], att[0])
            bilinear = torch.einsum(f'{e}phcf,{e}hpc,{e}phcg->{e}hfg', weight, att,
                                    weight)
            left = torch.einsum(f'bnf,{e}hfg->bnhg', x, bilinear)
            return left, x.unsqueeze(2).expand(B, N, H, F_in)
        h = torch.cat(taps, dim=-1)  # [B, N, H, J * C]
        return h * att.view(-1, 1, H, h.size(-1)), h

    def _filter(self, branch: str, x: Tensor, op: SparseOperator, value: Tensor,
                taps: Optional[List[Tensor]], hops: int = 1) -> Tensor:
        # sum_p A^p Z W_p, or A^hops Z W for one tap (the harmonic filter),
        # [B, N, H, C]: by Horner's rule on the taps Z W_p, or, where none are
        # given (the input is the narrower side), on the powers A^p Z,
        # multiplied by the W_p afterwards.
        if taps is not None:
            if len(taps) == 1:
                return powers(op, value, taps[0], 1, hops)[0]
            return polynomial(op, value, taps)
        B, N, F_in = x.shape
        H, C = self.heads, self.out_channels
        groups = H if value.dim() == 2 else 1  # coefficients per head
        weights = self._branch_weights(branch)
        signal = x.unsqueeze(2).expand(B, N, groups, F_in)
        out = torch.stack(powers(op, value, signal, len(weights), hops))
        if self.ensemble:  # the member of an ensemble is the signal
            weight = torch.stack(weights, dim=-3).view(B, -1, H, C, F_in)
            return torch.einsum('jbnhf,bjhcf->bnhc', out.expand(-1, -1, -1, H, -1),
                                weight)
        weight = torch.stack(weights).view(-1, H, C, F_in)
        if groups == 1:  # one product [B N, J F_in] x [J F_in, H C]
            J = out.size(0)
            out = out.squeeze(3).permute(1, 2, 0, 3).reshape(B * N, J * F_in)
            return (out @ weight.permute(0, 3, 1, 2).reshape(J * F_in, H * C)).view(
                B, N, H, C)
        return torch.einsum('jbnhf,jhcf->bnhc', out, weight)

    def edge_update(self, op: SparseOperator, score: OptTensor, target: OptTensor,
                    source: OptTensor) -> Tensor:
        # The coefficients [nnz, B * H] from the scores of the entries, or from
        # those of their targets and sources: softmax per row of the LeakyReLU
        # (SparseOperator.attention; scores that overflowed, e.g. bilinear ones of
        # huge signals, become the largest finite values, NaN ones 0), then dropout.
        alpha = op.attention(self.negative_slope, score, target, source)
        return dropout(alpha, p=self.dropout, training=self.training)

    # Filter taps ----------------------------------------------------------------------

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
        check_float_tensor(x, 'x')
        if self.lin.in_channels == -1 and x.dim() >= 2 and x.size(-1) > 0:
            self._materialize(x.size(-1))
        if x.dim() < 2 or x.size(-1) != self.lin.in_channels:
            size = self.lin.in_channels
            raise ValueError(f"'x' must have shape [..., N, "
                             f"{'F] with F >= 1' if size == -1 else f'{size}]'} "
                             f"(got {list(x.shape)})")
        check_same_dtype(x, self.lin.weight.dtype, 'x', 'layer', 'conv')
        return {branch: self._taps(x, branch) for branch in
                ('up', 'down', 'harmonic') if branch in self._blocks or
                (branch == 'down' and self.shared_weights)}

    def _taps(self, x: Tensor, branch: str) -> List[Tensor]:
        # One product per tap, so that each comes out contiguous.
        shape = (*x.shape[:-1], self.heads, self.out_channels)
        return [_linear(x, w).view(shape) for w in self._branch_weights(branch)]

    def _branch_weights(self, branch: str) -> Tuple[Tensor, ...]:
        # W_p^T of the taps of a branch, [(E,) heads * out_channels, in_channels]
        # each (the lower branch takes the upper one's with shared weights).
        start, J = self._blocks['up' if self.shared_weights and branch == 'down'
                                else branch]
        taps = self.lin.weight.split(self.heads * self.out_channels, dim=-2)
        return taps[start:start + J]

    def _propagates_input(self, per_head: bool) -> bool:
        # Whether a branch propagates the input rather than its taps: the narrower
        # side, F_in columns against C per head where the values differ per head
        # (attention), against H * C where all heads share them (fixed values).
        return self.lin.in_channels < self.out_channels * (1 if per_head else self.heads)

    def _check_signal(self, x: Tensor, model: bool = False) -> bool:
        # Whether x holds several signals, [B, N, F_in]. A model checks its input
        # with its first layer, and its messages then say what to convert.
        check_float_tensor(x, 'x')
        # lazy: the size of the first input (asked only then: under torch.compile,
        # a call of the eager _materialize breaks the graph)
        if self.lin.in_channels == -1 and x.dim() in (2, 3) and x.size(-1) > 0:
            self._materialize(x.size(-1))
        size = self.lin.in_channels
        if x.dim() not in (2, 3) or x.size(-1) != size:
            shapes = ("[N, F] or [B, N, F] with F >= 1" if size == -1 else
                      f"[N, {size}] or [B, N, {size}]")
            raise ValueError(f"'x' must have shape {shapes} (got {list(x.shape)})")
        if self.ensemble is not None and (x.dim() != 3 or x.size(0) != self.ensemble):
            raise ValueError(f"an ensemble of {self.ensemble} takes one signal per "
                             f"member, 'x' of shape [{self.ensemble}, N, "
                             f"{size}] (got {list(x.shape)})")
        check_same_dtype(x, self.lin.weight.dtype, 'x', *(
            ('model', 'model') if model else ('layer', 'conv')))
        device = self.lin.weight.device
        if x.device != device:  # (a model on 'meta' returned uninitialised memory)
            raise ValueError(
                f"'x' is on {x.device} but the {'model' if model else 'layer'}'s "
                f"parameters are on {device}; move the data or the "
                f"{'model' if model else 'layer'} with .to()" +
                (" (parameters made on 'meta' need to_empty() and "
                 "reset_parameters() first)" if device.type == 'meta' else ''))
        if device.type == 'meta':
            raise ValueError(f"the {'model' if model else 'layer'} and 'x' are on "
                             f"'meta', which holds no data: the sparse products need "
                             f"real tensors ('meta' serves to build a module, then "
                             f"to_empty() and reset_parameters() on a real device)")
        check_sparse_precision(x)
        return x.dim() == 3

    @torch.compiler.disable
    def _materialize(self, in_channels: int) -> None:
        # The filter weights of a lazy layer, [rows, in_channels], initialised as
        # reset_parameters() does; a no-op once they exist.
        _materialize_linear(self.lin, in_channels, self, self._init_taps)

    def __repr__(self) -> str:
        return _layer_repr(self, 'J_up', 'J_down', 'J_harmonic', 'heads', 'attention')


#: SANConv's settings that its repr shows where they differ from these defaults.
_SETTINGS = dict(eps=0.9, concat=True, negative_slope=0.2, dropout=0.0,
                 add_self_loops=True, bias=True, shared_weights=False,
                 orientation_equivariant=False, normalize=False)


def _layer_repr(layer: SANConv, *names: str, **defaults: Any) -> str:
    # "Name(in, out, ...)": the settings `names`, those of _SETTINGS and `defaults`
    # (a special case's own defaults and fixed values) where they differ from their
    # default, and an ensemble's size (the special cases fix the others).
    defaults = {**defaults, **{name: default for name, default in _SETTINGS.items()
                               if name not in defaults}}

    def value(name: str) -> Any:  # (the layer keeps its bias, or None)
        return layer.bias is not None if name == 'bias' else getattr(layer, name)

    shown = [f'{name}={value(name)!r}' for name in names] + [
        f'{name}={value(name)!r}' for name, default in defaults.items()
        if value(name) != default]
    if layer.ensemble:
        shown.append(f'ensemble={layer.ensemble}')
    return (f"{type(layer).__name__}("
            f"{', '.join([str(layer.in_channels), str(layer.out_channels), *shown])})")


def _special_case(cls: str, kwargs: Dict, **fixed) -> Dict:
    # The keyword arguments of SANConv for its special case cls, which fixes
    # the arguments `fixed`: a user's value for one of them is refused by
    # name, rather than by Python's "multiple values" error deep in __init__.
    clash = [key for key in fixed if key in kwargs]
    if clash:
        fixes = ', '.join(f'{key}={fixed[key]!r}' for key in clash)
        raise TypeError(f"{cls} fixes {fixes}; use SANConv for other values")
    return {**kwargs, **fixed}


def _linear(x: Tensor, weight: Tensor) -> Tensor:
    # x W^T with one weight [F_out, F_in], or one per signal [B, F_out, F_in]
    # (an ensemble's members).
    return F.linear(x, weight) if weight.dim() == 2 else torch.matmul(x, weight.mT)


def _flip(value: OptTensor, signs: OptTensor) -> OptTensor:
    # D value for signals [B, N, ...] with their own orientation D (signs
    # [B, N, 1]). A branch that depends on the operator's signs runs as
    # D branch(D x): the branch on each signal's own operators D L D.
    if value is None or signs is None:
        return value
    return value * signs.view(*signs.shape[:2], *(1, ) * (value.dim() - 2))


def _values(op: SparseOperator, x: Tensor) -> Tensor:
    # The fixed values of an operator in the dtype of the signal.
    assert op.weight is not None
    return op.weight if op.weight.dtype == x.dtype else op.weight.to(x.dtype)


def _first_signal(weights: AttentionWeights) -> AttentionWeights:
    return None if weights is None else (weights[0], weights[1][0])
