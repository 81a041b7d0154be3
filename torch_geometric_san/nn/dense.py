r"""A dense formulation of :class:`~torch_geometric_san.nn.conv.SANConv`.

:func:`dense_san_conv` evaluates the equations of the paper with
:math:`N \times N` matrices (explicit attention matrices, explicit matrix
powers), using the parameters of a
:class:`~torch_geometric_san.nn.conv.SANConv`. It allocates
:math:`O(N^2)` memory and :math:`O(N^3)` time, so it is meant only as an
independent reference for tests and as the dense baseline of
``benchmarks/scaling.py``, never for training.
"""
from typing import Dict, Optional

import torch
import torch.nn.functional as F
from torch import Tensor

from torch_geometric_san.nn.conv.san_conv import SANConv

__all__ = ["dense_san_conv"]


def dense_san_conv(
    conv: SANConv,
    x: Tensor,
    up: Optional[Tensor] = None,
    down: Optional[Tensor] = None,
    hodge: Optional[Tensor] = None,
) -> Tensor:
    r"""Applies :obj:`conv` to :obj:`x` with dense operators.

    Args:
        conv (SANConv): The layer whose parameters and options are used
            (attention dropout is not applied).
        x (torch.Tensor): Simplex features :math:`(N, F_{in})`.
        up (torch.Tensor, optional): Dense upper Laplacian :math:`(N, N)` (of
            one complex; divided by its largest eigenvalue here where the layer
            normalises).
        down (torch.Tensor, optional): Dense lower Laplacian :math:`(N, N)`.
        hodge (torch.Tensor, optional): Dense Hodge Laplacian scaled to
            largest eigenvalue 1 :math:`(N, N)`.

    Returns:
        torch.Tensor: The output :math:`(N, H F_{out})`, or
        :math:`(N, F_{out})` if :obj:`conv.concat` is :obj:`False`.

    Raises:
        ValueError: If :obj:`conv` is an ensemble, :obj:`x` not :math:`(N, F_{in})`,
            a Laplacian not :math:`(N, N)` in the dtype of :obj:`x`, or
            :obj:`hodge` missing where the layer has a harmonic filter.
    """
    _check_inputs(conv, x, dict(up=up, down=down, hodge=hodge))
    N, H, C = x.size(0), conv.heads, conv.out_channels
    taps = conv.filter_taps(x)  # per branch, J tensors [N, H, C]
    eye = torch.eye(N, dtype=x.dtype, device=x.device)
    out = x.new_zeros(N, H, C)
    for branch, lap in (('up', up), ('down', down)):
        if branch not in taps or lap is None:
            continue
        if conv.attention is None and conv.normalize and lap.abs().sum() > 0:
            lap = lap / torch.linalg.eigvalsh(lap)[-1]
        for head in range(H):
            h = torch.stack([t[:, head] for t in taps[branch]], dim=1)  # [N, J, C]
            A = lap if conv.attention is None else _attention_matrix(
                conv, branch, lap, h, head)
            power = A
            for p in range(h.size(1)):
                power = power if p == 0 else power @ A
                out[:, head] = out[:, head] + power @ h[:, p]
    if 'harmonic' in taps:
        P = eye
        if conv.J_harmonic:
            P = torch.linalg.matrix_power(eye - conv.eps * hodge, conv.J_harmonic)
        out = out + torch.einsum('ij,jhc->ihc', P, taps['harmonic'][0])
    out = out.reshape(N, H * C) if conv.concat else out.mean(dim=1)
    return out if conv.bias is None else out + conv.bias


def _check_inputs(conv: SANConv, x: Tensor, laplacians: Dict[str, Optional[Tensor]]):
    # (each of these failed inside torch's reshapes, or on a bare assert)
    if conv.ensemble:
        raise ValueError(f"dense_san_conv computes one network; this layer is an "
                         f"ensemble of {conv.ensemble}")
    if not isinstance(x, Tensor) or x.dim() != 2 or conv.in_channels not in (
            -1, x.size(1)):
        shape = list(x.shape) if isinstance(x, Tensor) else type(x).__name__
        raise ValueError(f"'x' must be [N, {conv.in_channels}] (N simplices, the "
                         f"layer's in_channels), got {shape}")
    N = x.size(0)
    for name, lap in laplacians.items():
        if lap is not None and (not isinstance(lap, Tensor) or lap.shape != (N, N)
                                or lap.dtype != x.dtype):
            found = (f'{list(lap.shape)} {lap.dtype}' if isinstance(lap, Tensor)
                     else type(lap).__name__)
            raise ValueError(f"'{name}' must be a dense [{N}, {N}] Laplacian in the "
                             f"dtype of 'x', {x.dtype}, got {found}")
    if conv.J_harmonic and laplacians['hodge'] is None:
        raise ValueError(f"the layer's harmonic filter (J_harmonic={conv.J_harmonic}) "
                         f"needs 'hodge'")


def _attention_matrix(conv: SANConv, branch: str, lap: Tensor, h: Tensor,
                      head: int) -> Tensor:
    N = lap.size(0)
    eye = torch.eye(N, dtype=torch.bool, device=lap.device)
    mask = (lap != 0) & ~eye
    if conv.add_self_loops:
        mask = mask | (eye & (lap != 0).any(dim=1, keepdim=True))
    key = 'shared' if conv.attention == 'shared' else branch
    h = h.reshape(N, -1)  # [N, J * C], taps concatenated
    sign = torch.where(eye, torch.ones_like(lap), lap.sign())
    if conv.orientation_equivariant:
        a = conv.att[key][0, head]
        score = sign * ((h * a) @ h.t())
    else:
        a_src, a_dst = conv.att[key + '_src'][0, head], conv.att[key + '_dst'][0, head]
        score = (h @ a_dst).view(-1, 1) + (h @ a_src).view(1, -1)
    score = F.leaky_relu(score, conv.negative_slope).masked_fill(~mask, float('-inf'))
    alpha = torch.softmax(score, dim=1).nan_to_num(0.0)  # empty rows: zero
    return alpha * sign if conv.orientation_equivariant else alpha
