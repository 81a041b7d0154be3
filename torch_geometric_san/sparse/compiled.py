r"""The package's compiled CPU kernels, built on first use.

The per-signal products of the layers (:meth:`SparseOperator.matmul_grouped
<torch_geometric_san.sparse.SparseOperator.matmul_grouped>`,
:meth:`~torch_geometric_san.sparse.SparseOperator.sddmm_grouped`) and their
attention coefficients (:meth:`~torch_geometric_san.sparse.SparseOperator.attention`)
have C++ kernels, ``csrc/grouped.cpp``, that make one pass over the entries each
way where the composites of PyTorch gathers, elementwise steps and scatters make
several (``benchmarks/propagation.py`` measures both). They are compiled with
:func:`torch.utils.cpp_extension.load` the first time one of them runs on the CPU,
once per environment (PyTorch installation and Python) and version of the kernels
(about half a minute, announced on stderr), into a directory of
``$TGSAN_KERNELS_DIR`` (default: ``~/.cache/torch_geometric_san``), and loaded from
there afterwards.
They are an optional accelerator, like ``torch_scatter``: where they cannot be
built (no C++ compiler) a warning says so once and the composites run, with the
same results up to floating-point rounding. ``TGSAN_COMPILED_KERNELS=0`` turns
them off.
"""
import hashlib
import os
import sys
import sysconfig
import warnings
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Iterator, Optional

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
    # One directory per PyTorch installation, Python and kernel source: checkouts of
    # different versions of the package never rebuild each other's kernels, and nor
    # do two environments with the same versions (their build rules name their own
    # headers and libraries, so ninja would rebuild at every switch between them).
    root = os.environ.get("TGSAN_KERNELS_DIR") or Path.home() / ".cache" / "torch_geometric_san"
    inputs = [_SOURCE.read_bytes(), " ".join(_FLAGS).encode(),
              os.path.dirname(os.path.abspath(torch.__file__)).encode(),
              sysconfig.get_paths()["include"].encode()]
    source = hashlib.sha1(b"\0".join(inputs)).hexdigest()
    abi = sysconfig.get_config_var('SOABI') or '-'.join(map(str, sys.version_info[:2]))
    return Path(root) / f"torch{torch.__version__}-{abi}-{source[:12]}".replace("+", "_")


def _source_copy(directory: Path) -> Path:
    # The kernel source, copied into its build directory (named by its hash) and
    # compiled from there: the build rules name that copy, so checkouts of the
    # same kernels at different paths share one build instead of rebuilding it in
    # turn (ninja rebuilds when a source path changes). Written once, atomically.
    copy = directory / _SOURCE.name
    if not copy.exists():
        partial = directory / f"{_SOURCE.name}.{os.getpid()}.tmp"
        partial.write_bytes(_SOURCE.read_bytes())
        os.replace(partial, copy)
    return copy


def _built(directory: Path) -> bool:
    return any(directory.glob(f"{_NAME}*.so"))


@contextmanager
def _build_lock(directory: Path) -> Iterator[None]:
    # PyTorch guards a build directory with a lock file that a process removes when
    # it is done; one killed while compiling (e.g. interrupted on its first run)
    # leaves it behind, and every later process then waits for it forever, silently.
    # Where the OS has advisory locks, the package's processes hold one on the
    # directory around the build instead: the OS releases it when its holder dies,
    # so a PyTorch lock file found while holding it is stale and is removed.
    try:
        import fcntl
    except ImportError:  # no advisory locks (Windows): PyTorch's lock file alone
        yield
        return
    with open(directory / "build.flock", "w") as handle:  # closing it unlocks
        try:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                if not _built(directory):
                    print(f"torch_geometric_san: waiting for another process "
                          f"compiling its CPU kernels into {directory}",
                          file=sys.stderr, flush=True)
                fcntl.flock(handle, fcntl.LOCK_EX)
            locked = True
        except OSError:  # a file system without advisory locks (some NFS mounts)
            locked = False
        if locked:
            (directory / "lock").unlink(missing_ok=True)
        yield


@torch.compiler.disable
def grouped_kernels() -> Optional[ModuleType]:
    r"""The compiled kernels, built or loaded on the first call.

    They index their arrays with the compressed rows they are given, unchecked:
    pass those of :meth:`SparseOperator.structure
    <torch_geometric_san.sparse.SparseOperator.structure>`, which checks the
    entries when it derives them (other rows can make a kernel read or write
    outside its arrays), and a product's source with as many rows as the
    operator's columns; the other sizes they check (a :class:`ValueError`).

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
        from torch.utils.cpp_extension import load
        with _build_lock(directory):
            if not _built(directory):
                print(f"torch_geometric_san: compiling its CPU kernels into {directory} "
                      f"(once, about half a minute)", file=sys.stderr, flush=True)
            _module = load(_NAME, sources=[str(_source_copy(directory))],
                           extra_cflags=_FLAGS, build_directory=str(directory),
                           verbose=False)
    except Exception as error:  # no compiler, no write access, ...
        _failed = True
        warnings.warn(f"torch_geometric_san: the compiled CPU kernels could not be "
                      f"built or loaded ({type(error).__name__}: {error}); the grouped "
                      f"products run as PyTorch composites (the directory must be "
                      f"writable, also to load a finished build: point "
                      f"TGSAN_KERNELS_DIR at one that is; delete {directory} to "
                      f"build them anew, e.g. after a damaged build; set "
                      f"TGSAN_COMPILED_KERNELS=0 to skip the attempt)", RuntimeWarning,
                      stacklevel=2)
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
