r"""Functions the layers and models of the package share."""
import torch
import torch.nn.functional as F
from torch import Tensor

from torch_geometric_san.utils.validation import check_bool, check_real

__all__ = ["dropout"]


def dropout(x: Tensor, p: float = 0.5, training: bool = True) -> Tensor:
    r"""Dropout: each entry of :obj:`x` zeroed with probability :obj:`p`, the
    others scaled by :math:`1 / (1 - p)`, as
    :func:`torch.nn.functional.dropout`, whose distribution it has.

    On the CPU the mask is drawn with :func:`torch.rand` (an entry is kept
    where its uniform number is at least :obj:`p`). PyTorch's CPU dropout
    draws with :meth:`torch.Tensor.bernoulli_`, whose fast path needs an Intel
    CPU; elsewhere it takes a per-element path several times slower than
    :func:`torch.rand` (``benchmarks/dropout.py`` measures both). On other
    devices this is :func:`torch.nn.functional.dropout`. Both draw from
    PyTorch's generator of the device, so :func:`torch.manual_seed` fixes the
    masks, but a seed gives other masks than
    :func:`torch.nn.functional.dropout` does on the CPU. Under
    :func:`torch.compile`, the CPU mask comes from Inductor's random numbers
    unless ``torch._inductor.config.fallback_random`` is set (then from
    PyTorch's generator, the same masks as in eager mode).

    Args:
        x (torch.Tensor): The input, any shape. It is not modified.
        p (float, optional): The probability of zeroing an entry, in
            :math:`[0, 1)`. (default: :obj:`0.5`)
        training (bool, optional): Whether to drop; :obj:`False` returns
            :obj:`x` itself. (default: :obj:`True`)

    Returns:
        torch.Tensor: The output, of the shape of :obj:`x`.
    """
    check_real(p, "p")
    check_bool(training, "training")
    if not 0.0 <= p < 1.0:
        raise ValueError(f"'p' must lie in [0, 1) (got {p})")
    if not isinstance(x, Tensor) or not x.is_floating_point():
        raise TypeError(f"'x' must be a floating-point tensor (got "
                        f"{x.dtype if isinstance(x, Tensor) else type(x).__name__})")
    if not training or p == 0.0:
        return x
    if x.device.type != 'cpu':
        return F.dropout(x, p=p, training=True)
    return x * torch.rand_like(x).ge_(p).mul_(1.0 / (1.0 - p))
