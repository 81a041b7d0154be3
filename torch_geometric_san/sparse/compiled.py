r"""The package's compiled CPU kernels, built on first use.

The grouped sparse products (:meth:`SparseOperator.matmul_grouped
<torch_geometric_san.sparse.SparseOperator.matmul_grouped>` and
:meth:`~torch_geometric_san.sparse.SparseOperator.sddmm_grouped`, the
per-signal attention products of the layers) have a C++ kernel, ``csrc/grouped.cpp``,
that makes one pass over the entries where the composite of PyTorch gathers,
products and scatters makes several (``benchmarks/propagation.py`` measures
both). It is compiled with :func:`torch.utils.cpp_extension.load` the first time
a grouped product runs on the CPU, once per machine, PyTorch and Python version
(about a minute, announced on stderr), into
``$TGSAN_KERNELS_DIR`` (default: ``~/.cache/torch_geometric_san``), and loaded
from there afterwards. It is an optional accelerator, like ``torch_scatter``:
where it cannot be built (no C++ compiler) a warning says so once and the
products run as composites of PyTorch operations, with the same results up to
floating-point rounding. ``TGSAN_COMPILED_KERNELS=0`` turns it off.
"""
import os
import sys
import sysconfig
import warnings
from pathlib import Path
from types import ModuleType
from typing import Optional

import torch
from torch import Tensor

__all__ = ["grouped_kernels", "enabled", "available_for", "status"]

_NAME = "torch_geometric_san_grouped"
# -fno-trapping-math lets the compiler vectorise the selects of the attention
# kernels (no floating-point trap is ever enabled); -ffp-contract=off keeps a * b + c
# two roundings in every clone, so that results do not depend on the CPU.
_FLAGS = ["-O3", "-fno-trapping-math", "-ffp-contract=off"]
_SOURCE = Path(__file__).parent / "csrc" / "grouped.cpp"
_module: Optional[ModuleType] = None
_failed = False


def enabled() -> bool:
    r"""Whether the compiled kernels may be used.

    Returns:
        bool: :obj:`False` where the environment variable
        ``TGSAN_COMPILED_KERNELS`` is ``0`` (read at every call).
    """
    return os.environ.get("TGSAN_COMPILED_KERNELS", "1") != "0"


def _build_directory() -> Path:
    root = os.environ.get("TGSAN_KERNELS_DIR") or Path.home() / ".cache" / "torch_geometric_san"
    tag = f"torch{torch.__version__}-{sysconfig.get_config_var('SOABI') or sys.version_info[:2]}"
    return Path(root) / tag.replace("+", "_")


@torch.compiler.disable
def grouped_kernels() -> Optional[ModuleType]:
    r"""The compiled kernels, built or loaded on the first call.

    Returns:
        module or None: The extension module (its functions take the compressed
        rows of an operator and tensors with the groups last), or :obj:`None`
        where the kernels are turned off (:func:`enabled`) or could not be built
        (warned once per process).
    """
    global _module, _failed
    if _module is not None or _failed or not enabled():
        return _module if enabled() else None
    directory = _build_directory()
    try:
        directory.mkdir(parents=True, exist_ok=True)
        if not any(directory.glob(f"{_NAME}*.so")):
            print(f"torch_geometric_san: compiling its CPU kernels into {directory} "
                  f"(once, about a minute)", file=sys.stderr, flush=True)
        from torch.utils.cpp_extension import load
        _module = load(_NAME, sources=[str(_SOURCE)], extra_cflags=_FLAGS,
                       build_directory=str(directory), verbose=False)
    except Exception as error:  # no compiler, no write access, ...
        _failed = True
        warnings.warn(f"torch_geometric_san: the compiled CPU kernels could not be "
                      f"built ({type(error).__name__}: {error}); the grouped products "
                      f"run as PyTorch composites (set TGSAN_COMPILED_KERNELS=0 to "
                      f"skip the attempt)", RuntimeWarning, stacklevel=2)
    return _module


def available_for(x: Tensor) -> bool:
    r"""Whether a grouped product or attention on :obj:`x` runs in the compiled
    kernels: on the CPU, in float32 or float64, in eager mode (under
    :func:`torch.compile`, Inductor fuses the composites itself), and where the
    kernels are on and could be built.

    Args:
        x (torch.Tensor): An operand of the product.

    Returns:
        bool: Whether the compiled kernel runs.
    """
    return (x.device.type == 'cpu' and x.dtype in (torch.float32, torch.float64)
            and not torch.compiler.is_compiling() and grouped_kernels() is not None)


def status() -> str:
    r"""What the compiled kernels are doing in this process, without building them.

    Returns:
        str: :obj:`'on'` (loaded and used on the CPU), :obj:`'off'` (turned off by
        ``TGSAN_COMPILED_KERNELS=0``), :obj:`'failed'` (could not be built) or
        :obj:`'not loaded'` (no grouped product has run on the CPU yet).
    """
    if not enabled():
        return 'off'
    return 'on' if _module is not None else 'failed' if _failed else 'not loaded'
