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
``$TGSAN_KERNELS_DIR`` (an absolute path; default: ``~/.cache/torch_geometric_san``),
and loaded from there afterwards. That directory, and the build's in it, must be
the user's and writable by no one else (those the package creates are), and a
library that does not match the record of its build (e.g. one cut short) is built
anew.
They are an optional accelerator, like ``torch_scatter``: where they cannot be
built (no C++ compiler) a warning says so once and the composites run, with the
same results up to floating-point rounding. ``TGSAN_COMPILED_KERNELS=0`` (or
``false``, ``off``, ``no``) turns them off.
"""
import hashlib
import json
import os
import stat
import sys
import sysconfig
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Iterator, Optional

import torch
from torch import Tensor

from torch_geometric_san.utils.warn import warn_user

__all__ = ["grouped_kernels", "enabled", "available_for", "status"]

_NAME = "torch_geometric_san_grouped"
# -fno-trapping-math lets the compiler vectorise the selects of the attention
# kernels (no floating-point trap is ever enabled); -ffp-contract=off keeps a * b + c
# two roundings in every clone, so that results do not depend on the CPU.
_FLAGS = ["-O3", "-fno-trapping-math", "-ffp-contract=off"]
_SOURCE = Path(__file__).parent / "csrc" / "grouped.cpp"
# The functions of the module that the products call (kernels.py).
_FUNCTIONS = ("grouped_spmm", "grouped_spmm_t", "grouped_sddmm", "attention",
              "attention_backward")
_SWITCH = "TGSAN_COMPILED_KERNELS"
_OFF, _ON = ("0", "false", "off", "no"), ("1", "true", "on", "yes")
_module: Optional[ModuleType] = None
_failed = False
_ignored_switches: set = set()  # the values of the switch warned about


def enabled() -> bool:
    r"""Whether the compiled kernels may be used.

    Returns:
        bool: :obj:`False` where the environment variable
        ``TGSAN_COMPILED_KERNELS`` is ``0``, ``false``, ``off`` or ``no``
        (case-insensitive, read at every call); :obj:`True` where it is unset,
        empty, ``1``, ``true``, ``on`` or ``yes``, and, with a warning (once per
        value), where it is anything else.
    """
    value = os.environ.get(_SWITCH, "").strip().lower()
    if value and value not in _OFF + _ON and value not in _ignored_switches:
        _ignored_switches.add(value)
        warn_user(f"torch_geometric_san: {_SWITCH}={os.environ[_SWITCH]!r} is "
                  f"neither of {'/'.join(_OFF)} (off) nor of {'/'.join(_ON)} (on); "
                  f"the compiled kernels stay on", RuntimeWarning)
    return value not in _OFF


def _kernels_root() -> Path:
    # Absolute and resolved: a relative path (as a Dockerfile's ENV or a .env file
    # may give, where no shell expands '~') would name another cache in every working
    # directory.
    value = os.environ.get("TGSAN_KERNELS_DIR")
    if not value:
        return (Path.home() / ".cache" / "torch_geometric_san").resolve()
    root = Path(value).expanduser()
    if not root.is_absolute():
        raise ValueError(f"TGSAN_KERNELS_DIR must be an absolute path (or start with "
                         f"'~'), not {value!r}")
    return root.resolve()


def _build_directory() -> Path:
    # One directory per PyTorch installation, Python and kernel source: checkouts of
    # different versions of the package never rebuild each other's kernels, and nor
    # do two environments with the same versions (their build rules name their own
    # headers and libraries, so ninja would rebuild at every switch between them).
    root = _kernels_root()
    inputs = [_SOURCE.read_bytes(), " ".join(_FLAGS).encode(),
              os.path.dirname(os.path.abspath(torch.__file__)).encode(),
              sysconfig.get_paths()["include"].encode()]
    source = hashlib.sha1(b"\0".join(inputs)).hexdigest()
    abi = sysconfig.get_config_var('SOABI') or '-'.join(map(str, sys.version_info[:2]))
    return root / f"torch{torch.__version__}-{abi}-{source[:12]}".replace("+", "_")


def _private_directory(path: Path) -> None:
    # The package loads and runs the library it finds in the build directory: it
    # creates the directories (and missing parents) for the user alone, and refuses
    # one that another user could have filled, or could still change (e.g.
    # TGSAN_KERNELS_DIR in /tmp, where anyone can create the build directory first),
    # also through a parent (as OpenSSH's StrictModes: each is the user's or root's,
    # and writable by others only if sticky, as /tmp).
    for parent in reversed([path, *path.parents]):
        if not parent.exists():  # (another process may make it meanwhile: the
            # checks below refuse one that is not the user's alone)
            parent.mkdir(mode=0o700, exist_ok=True)
    if not hasattr(os, "getuid"):  # no POSIX owners and modes (Windows)
        return
    info = path.lstat()
    if (not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid()
            or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)):
        raise PermissionError(f"{path} is not a directory of this user (uid "
                              f"{os.getuid()}) that no one else can write to "
                              f"(`chmod go-w {path}` if only you could have written "
                              f"there, or delete it)")
    for parent in path.parents:
        info = parent.stat()
        if info.st_uid not in (0, os.getuid()) or (
                info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
                and not info.st_mode & stat.S_ISVTX):
            raise PermissionError(f"{parent}, a parent of {path}, is not this user's "
                                  f"or root's, or others can write to it: they could "
                                  f"replace the kernels' directory")


def _write_atomically(path: Path, data: bytes) -> None:
    # Through a file that this process creates (never one found there, nor the
    # target of a link), renamed into place: readers find the whole file or none.
    partial = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    partial.unlink(missing_ok=True)  # left by a killed process with this id
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    with os.fdopen(os.open(partial, flags, 0o600), "wb") as handle:
        handle.write(data)
    os.replace(partial, path)


def _source_copy(directory: Path) -> Path:
    # The kernel source, copied into its build directory (named by its hash) and
    # compiled from there: the build rules name that copy, so checkouts of the
    # same kernels at different paths share one build instead of rebuilding it in
    # turn (ninja rebuilds when a source path changes). Written once, atomically.
    copy = directory / _SOURCE.name
    if not copy.exists():
        _write_atomically(copy, _SOURCE.read_bytes())
    return copy


def _library(directory: Path) -> Path:
    # (.so, or .pyd on Windows: the name torch's build gives it)
    from torch.utils.cpp_extension import LIB_EXT
    return directory / f"{_NAME}{LIB_EXT}"


def _built(directory: Path) -> bool:
    return _library(directory).exists()


def _manifest(directory: Path) -> Path:
    return directory / f"{_NAME}.manifest.json"


def _fingerprint(library: Path) -> dict:
    data = library.read_bytes()
    return {"size": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def _recorded(directory: Path) -> Optional[dict]:
    try:
        return json.loads(_manifest(directory).read_bytes())
    except (OSError, ValueError):  # none, or damaged
        return None


def _record(directory: Path) -> None:
    # The size and hash of the library, written after its build: the record that
    # later processes check it against before loading it.
    _write_atomically(_manifest(directory),
                      json.dumps(_fingerprint(_library(directory))).encode())


def _keep_if_recorded(directory: Path) -> bool:
    # A library cut short (an interrupted copy of the cache, a full disk) that ninja
    # thinks up to date kills the process that loads it (SIGBUS). One that does not
    # match its record, or has none (a build of an older version of the package),
    # is removed with the record, so that ninja links it anew. Returns whether the
    # library is kept.
    library = _library(directory)
    if library.exists() and _recorded(directory) == _fingerprint(library):
        return True
    library.unlink(missing_ok=True)
    _manifest(directory).unlink(missing_ok=True)
    return False


def _check_functions(module: ModuleType) -> None:
    missing = [name for name in _FUNCTIONS if not hasattr(module, name)]
    if missing:
        raise ImportError(f"{getattr(module, '__file__', module)} lacks the kernels "
                          f"{', '.join(missing)}")


@contextmanager
def _build_lock(directory: Path) -> Iterator[bool]:
    # PyTorch guards a build directory with a lock file that a process removes when
    # it is done; one killed while compiling (e.g. interrupted on its first run)
    # leaves it behind, and every later process then waits for it forever, silently.
    # Where the OS has advisory locks, the package's processes hold one on the
    # directory around the build instead: the OS releases it when its holder dies,
    # so a PyTorch lock file found while holding it is stale and is removed.
    try:
        import fcntl
    except ImportError:  # no advisory locks (Windows): PyTorch's lock file alone
        yield False
        return
    # Neither truncated nor followed if a link (e.g. to a file of the user's).
    lock = os.open(directory / "build.flock", os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW,
                   0o600)
    with os.fdopen(lock, "w") as handle:  # closing it unlocks
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
        yield locked


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
        or loaded (warned once per process).
    """
    global _module, _failed
    if _module is not None or _failed or not enabled():
        return _module if enabled() else None
    directory = None
    try:  # from the directory on: even the home directory may be unknown
        directory = _build_directory()
        _private_directory(directory.parent)
        _private_directory(directory)
        _module = _build_and_load(directory)
    except Exception as error:  # no compiler, no write access, ...
        _failed = True
        _warn_unavailable(error, directory)
    return _module


def _build_and_load(directory: Path) -> ModuleType:
    from torch.utils.cpp_extension import load
    with _build_lock(directory) as locked:
        if locked:
            _keep_if_recorded(directory)
        elif _built(directory) and _recorded(directory) != _fingerprint(
                _library(directory)):
            # (without the lock another process may be linking it: removing it
            # would fail both)
            raise ImportError(f"{_library(directory)} does not match the record of "
                              f"its build, and without file locks it cannot be "
                              f"linked anew safely")
        if not _built(directory):
            print(f"torch_geometric_san: compiling its CPU kernels into {directory} "
                  f"(once, about half a minute)", file=sys.stderr, flush=True)
        module = load(_NAME, sources=[str(_source_copy(directory))],
                      extra_cflags=_FLAGS, build_directory=str(directory), verbose=False)
        if _recorded(directory) != _fingerprint(_library(directory)):
            _record(directory)  # built, or linked anew by ninja (e.g. new flags)
    _check_functions(module)
    return module


def _warn_unavailable(error: Exception, directory: Optional[Path]) -> None:
    anew = "" if directory is None or isinstance(error, PermissionError) else (
        f"delete {directory} to build them anew, e.g. after a damaged build; ")
    warn_user(f"torch_geometric_san: the compiled CPU kernels could not be "
              f"built or loaded ({type(error).__name__}: {error}); the grouped "
              f"products run as PyTorch composites (the directory must be the "
              f"user's and writable by the user alone, also to load a finished "
              f"build: point TGSAN_KERNELS_DIR at an absolute path to one that is; "
              f"{anew}set TGSAN_COMPILED_KERNELS=0 to skip the attempt; this "
              f"process keeps the composites, so these take effect in a new one)",
              RuntimeWarning)


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
        ``TGSAN_COMPILED_KERNELS=0``), :obj:`'failed'` (could not be built or
        loaded) or :obj:`'not loaded'` (no grouped product has run on the CPU yet).
    """
    if not enabled():
        return 'off'
    return 'on' if _module is not None else 'failed' if _failed else 'not loaded'
