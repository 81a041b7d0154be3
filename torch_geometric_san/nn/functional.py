r"""Functions the layers and models of the package share."""
import functools
from typing import Callable, Sequence

import torch
import torch.nn.functional as F
from torch import Tensor

from torch_geometric_san.utils.validation import (check_bool, check_dropout,
                                                  check_float_tensor)

__all__ = ["dropout", "odd_activation", "tie_gradients"]

#: Uniform numbers drawn at a time for a dropout mask (bounds its extra memory).
_CHUNK = 1 << 16


#: Entries of the masks that :func:`_bernoulli_per_element` draws both ways.
_PROBE = 64


@functools.lru_cache(maxsize=None)
def _bernoulli_per_element() -> bool:
    # Whether PyTorch's CPU bernoulli_ with a scalar probability, which
    # F.dropout fills its mask with, takes its per-element path: one uniform
    # double per entry from the generator, as uniform_ in float64 draws them,
    # compared with the probability. Which path it takes depends on the
    # version, the build and the CPU (PyTorch 2.13 takes it without MKL and,
    # with MKL, on CPUs other than Intel's; 2.4 and 2.5 take MKL's wherever
    # they have it), so it is asked: a small mask drawn both ways from two
    # private generators in one state, for both dtypes, must agree, as must the
    # generators' states after. Once, on the first dropout on the CPU;
    # PyTorch's generator is not touched.
    for dtype in (torch.float32, torch.float64):
        mine, theirs = (torch.Generator().manual_seed(0) for _ in range(2))
        mask = torch.empty(_PROBE, dtype=dtype, device='cpu').bernoulli_(
            0.5, generator=theirs)
        uniform = torch.empty(_PROBE, dtype=torch.float64, device='cpu').uniform_(
            generator=mine)
        if not (torch.equal(mask, (uniform < 0.5).to(dtype))
                and torch.equal(mine.get_state(), theirs.get_state())):
            return False
    return True


def dropout(x: Tensor, p: float = 0.5, training: bool = True) -> Tensor:
    r"""Dropout: each entry of :obj:`x` zeroed with probability :obj:`p`, the
    others scaled by :math:`1 / (1 - p)`. The same as
    :func:`torch.nn.functional.dropout`, bit for bit (the same masks for the
    same state of PyTorch's generator), and faster on some CPUs.

    PyTorch's CPU dropout fills its mask with
    :meth:`torch.Tensor.bernoulli_`, which in some versions, builds and CPUs
    takes a per-element path: one uniform double per entry, compared with the
    keep probability (PyTorch 2.13 does so on CPUs other than Intel's and in
    builds without MKL). Where PyTorch takes that path (asked once, by
    drawing a small mask both ways from private generators), this function
    draws the same doubles with :meth:`torch.Tensor.uniform_` (in chunks, so
    that they take bounded memory) and compares them itself: the same mask in
    about half the time on such a CPU (``benchmarks/dropout.py`` measures
    both; the tests check that the outputs are equal).
    Elsewhere (MKL's path, other devices, non-contiguous inputs and under
    :func:`torch.compile`) it calls :func:`torch.nn.functional.dropout`.

    Args:
        x (torch.Tensor): The input, any shape. It is not modified.
        p (float, optional): The probability of zeroing an entry, in
            :math:`[0, 1)`. (default: :obj:`0.5`)
        training (bool, optional): Whether to drop; :obj:`False` returns
            :obj:`x` itself. (default: :obj:`True`)

    Returns:
        torch.Tensor: The output, of the shape of :obj:`x`.
    """
    p = check_dropout(p, "'p'")  # (a Python float, as F.dropout needs)
    check_bool(training, "training")
    check_float_tensor(x, 'x')
    if not training or p == 0.0:
        return x
    if (torch.compiler.is_compiling() or x.device.type != 'cpu' or not x.is_contiguous()
            or not _bernoulli_per_element()):
        return F.dropout(x, p=p, training=True)
    return x * _keep_mask(x, 1.0 - p)


def _keep_mask(x: Tensor, q: float) -> Tensor:
    # The mask of F.dropout with keep probability q, in the dtype of x: 1 / q
    # where a uniform double from the generator lies below q, 0 elsewhere,
    # drawn in the order of the entries.
    mask = torch.empty_like(x)
    flat = mask.view(-1)
    uniform = torch.empty(min(flat.numel(), _CHUNK), dtype=torch.float64)
    for start in range(0, flat.numel(), _CHUNK):
        chunk = uniform[:min(_CHUNK, flat.numel() - start)].uniform_()
        torch.lt(chunk, q, out=flat[start:start + chunk.numel()])
    return mask.div_(q)


def odd_activation(x: Tensor, act: Callable[[Tensor], Tensor]) -> Tensor:
    r"""Applies :obj:`act` to the features of each simplex in the simplex's
    canonical orientation, and flips the result back:

    .. math::
        f(\mathbf{x}_i) = s_i \, \sigma(s_i \mathbf{x}_i), \qquad
        s_i = \operatorname{sign}\left(\max_f x_{i, f} + \min_f x_{i, f}\right),

    where :math:`\mathbf{x}_i` is row :math:`i` of :obj:`x` (the features of
    simplex :math:`i`): :math:`s_i` is the sign of the row's entry of largest
    magnitude, and :math:`0` where a positive and a negative entry tie for it
    (and for a row of zeros), whose output is then zero (NaN at least at
    the infinite entries of a row holding both infinities, which has no
    orientation). Negating a row swaps and negates its largest and smallest
    entries, so :math:`s_i` flips with it and
    :math:`f(-\mathbf{x}_i) = -f(\mathbf{x}_i)` exactly, for any
    activation :math:`\sigma`: flipping the orientation of a simplex, which
    flips the signs of its row in the output of an orientation-equivariant
    layer, flips the signs of its row after this activation too. So ReLU and
    other activations that are not odd keep a network of
    orientation-equivariant layers equivariant (ReLU on the orientation in
    which each simplex's largest feature is positive). An odd :math:`\sigma`
    (identity, :math:`\tanh`) gives :math:`\sigma(\mathbf{x})` again, up to
    its own rounding, except on ties. :math:`s_i` is a constant of the
    gradient (as the sign is).

    Args:
        x (torch.Tensor): The features :math:`(..., N, F)`, one row per
            simplex. It is not modified.
        act (Callable): The activation, applied entry-wise.

    Returns:
        torch.Tensor: The output, of the shape of :obj:`x`.
    """
    if not callable(act):
        raise TypeError(f"'act' must be callable (got {type(act).__name__})")
    check_float_tensor(x, 'x')
    if x.dim() == 0:
        raise ValueError("'x' must have a feature dimension (got a scalar)")
    if x.size(-1) == 0:
        return act(x)
    with torch.no_grad():
        # (An argmax of |x| over a few features is several times slower than
        # these two reductions.)
        sign = x.amax(dim=-1, keepdim=True).add_(x.amin(dim=-1, keepdim=True)).sign_()
    return sign * act(sign * x)


def tie_gradients(out: Tensor, tensors: Sequence[Tensor]) -> Tensor:
    r"""Returns :obj:`out` with its values unchanged, tied into the autograd graph of
    :obj:`tensors` so that each of them that requires a gradient gets a zero one,
    rather than none, from a backward pass through :obj:`out`.
    :class:`~torch.nn.parallel.DistributedDataParallel` (with its default
    :obj:`find_unused_parameters=False`) expects a gradient for every parameter in
    every step, also where a batch leaves a branch, a norm or an earlier layer out
    of the result (e.g. an order without simplices). The tensors' values never
    reach :obj:`out`, not even NaN or infinite ones.

    Args:
        out (torch.Tensor): The result.
        tensors (Sequence[torch.Tensor]): The tensors to tie (parameters, inputs).

    Returns:
        torch.Tensor: :obj:`out` plus a zero that depends on :obj:`tensors`.
    """
    tied = [t for t in tensors if t.requires_grad]
    if not tied or not torch.is_grad_enabled():
        return out
    total = torch.stack([t.sum().to(out.dtype) for t in tied]).sum()
    # (a zero whose gradient is zero: 0 * total would carry NaN and inf forward)
    zero = torch.where(torch.zeros((), dtype=torch.bool, device=out.device),
                       total, out.new_zeros(()))
    return out + zero
