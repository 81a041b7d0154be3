"""Raw-file input/output shared by the datasets.

* :func:`sha256sum` / :func:`check_sha256`: integrity check of raw files.
* :func:`load_npy`: reads a ``.npy`` file; object arrays (pickled) are read by a
  restricted unpickler that admits only the few NumPy and builtin globals that
  plain object arrays of dicts/sets need, so a tampered file cannot run code.
* :func:`_pickle_depth`: the nesting depth of a pickle, read from its opcodes
  without unpickling it: a pickle nested deeper than :data:`_MAX_PICKLE_DEPTH`
  (hashing or comparing such objects recurses in C until the interpreter
  crashes) is refused before it is unpickled.
* :func:`fetch_raw_file`: downloads a raw file into ``raw_dir`` and checks its
  digest; without network access it raises an error that says which file to
  place where.
* :func:`atomic_torch_save`: writes a processed file atomically (temporary file
  in the same directory, then :func:`os.replace`).
* :func:`load_processed`: reads a processed file with ``weights_only=True`` (no
  code runs) and checks its layout; a damaged file is a :class:`ValueError` that
  names it (:func:`damaged_file`).

Every reader opens only regular files (:func:`_regular_file`): a FIFO or a device
in place of a file (e.g. a symbolic link to ``/dev/zero``) would block it or never
end.
"""
import codecs
import hashlib
import math
import os
import os.path as osp
import pickle
import pickletools
import re
import stat
import tempfile
import uuid
import zipfile
from io import BytesIO
from typing import Any, BinaryIO, Callable, Dict, Optional, Sequence, Tuple

import numpy as np
import torch

__all__ = [
    "sha256sum",
    "check_sha256",
    "load_npy",
    "RestrictedUnpickler",
    "fetch_raw_file",
    "atomic_torch_save",
    "load_processed",
    "damaged_file",
]


#: What a file that is not a regular one is, by the type letter of stat.filemode.
_FILE_KINDS = {"d": "a directory", "p": "a FIFO", "c": "a character device",
               "b": "a block device", "s": "a socket"}


def _regular_file(path: str) -> str:
    r"""Returns the resolved :obj:`path` (symbolic links followed) of a regular
    file, for the reader to open.

    Raises:
        FileNotFoundError: If there is no file.
        ValueError: If it is a FIFO, a device, a directory or anything but a
            regular file, where reading would block or never end.
    """
    resolved = os.path.realpath(path)
    mode = os.stat(resolved).st_mode
    if not stat.S_ISREG(mode):
        kind = _FILE_KINDS.get(stat.filemode(mode)[0], "not a regular file")
        via = f" ('{resolved}')" if resolved != osp.abspath(path) else ""
        raise ValueError(f"'{path}'{via} is {kind}, not a regular file")
    return resolved


def sha256sum(path: str, chunk_size: int = 1 << 20) -> str:
    """Returns the hexadecimal SHA-256 digest of the file at :obj:`path`.

    Args:
        path (str): The file.
        chunk_size (int, optional): Bytes read at a time. (default: :obj:`2**20`)

    Returns:
        str: The digest, 64 lowercase hexadecimal digits.

    Raises:
        ValueError: If :obj:`path` is not a regular file (e.g. a FIFO).
    """
    digest = hashlib.sha256()
    with open(_regular_file(path), "rb") as f:
        for chunk in iter(lambda: f.read(chunk_size), b""):
            digest.update(chunk)
    return digest.hexdigest()


def check_sha256(path: str, expected: str, hint: str = "") -> None:
    """Raises a :class:`ValueError` if the SHA-256 digest of :obj:`path` is
    not :obj:`expected`.

    Args:
        path (str): The file to check.
        expected (str): The expected hexadecimal digest.
        hint (str, optional): Appended to the error message (e.g. where to
            get the original file).
    """
    actual = sha256sum(path)
    if actual != expected.lower():
        msg = (f"Raw file '{path}' failed its integrity check: expected "
               f"sha256 {expected.lower()}, got {actual}. The file is "
               f"corrupt, truncated or not the published one; delete it and "
               f"place the original file there.")
        raise ValueError(f"{msg} {hint}".strip())


def _latin1_encode(obj: str, encoding: str = "latin1") -> bytes:
    # Protocol-2 pickles store ``bytes`` as ``_codecs.encode(str, 'latin1')``.
    # Admit exactly that use and nothing else the codec machinery can do.
    if encoding not in ("latin1", "latin-1") or not isinstance(obj, str):
        raise pickle.UnpicklingError(
            f"Refusing _codecs.encode with encoding {encoding!r}: only the "
            f"'latin1' byte encoding of protocol-2 pickles is admitted")
    return codecs.encode(obj, "latin1")


# ``numpy.core.multiarray._reconstruct`` lives in ``numpy._core`` since NumPy
# 2.0; taking it from ``ndarray.__reduce__`` works on every version without
# touching the deprecated ``numpy.core`` alias.
_NDARRAY_RECONSTRUCT = np.empty(0).__reduce__()[0]


class _PickledDtype:
    r"""A pickled :class:`numpy.dtype` (``dtype(spec, align, copy)``, then its
    state): NumPy sets the state of a dtype in place without checking it against
    the spec, so the dtype is made only from a plain spec whose canonical state
    the pickle gives, and read by :class:`_CheckedArray`."""

    def __init__(self, spec: Any, align: Any = False, copy: Any = False) -> None:
        # (a type code and size, e.g. 'O8' or 'f8': NumPy parses other strings, such
        # as comma-separated fields, with Python's own parser; and no such spec
        # makes a structured or sub-array dtype)
        if (not isinstance(spec, str) or not re.fullmatch(r"[|<>=]?[A-Za-z]\d*", spec)
                or align not in (False, True)):
            raise pickle.UnpicklingError(f"Refusing the pickled dtype {spec!r}")
        try:
            self.dtype = np.dtype(spec)
        except TypeError as e:
            raise pickle.UnpicklingError(f"Refusing the pickled dtype {spec!r}") from e

    def __setstate__(self, state: Any) -> None:
        if state != self.dtype.__reduce__()[2]:
            raise pickle.UnpicklingError(
                f"Refusing the pickled state {state!r} of the dtype {self.dtype}: "
                f"it is not that dtype's own")


class _CheckedArray(np.ndarray):
    r"""An array whose pickled state is checked before NumPy sets it: NumPy
    reads as many items as the shape claims from the pickled list (or bytes)
    without checking its length, past its end in a tampered file."""

    def __setstate__(self, state: Any) -> None:
        if not isinstance(state, tuple) or len(state) not in (4, 5):
            raise pickle.UnpicklingError("Refusing a malformed pickled array state")
        version, (shape, dtype, fortran, data) = state[:-4] or (1, ), state[-4:]
        if not isinstance(dtype, _PickledDtype):
            raise pickle.UnpicklingError("Refusing a pickled array without a dtype")
        dtype = dtype.dtype
        if (not isinstance(shape, tuple) or not all(
                isinstance(n, int) and not isinstance(n, bool) and n >= 0
                for n in shape) or fortran not in (False, True)):
            raise pickle.UnpicklingError(
                f"Refusing the pickled array shape {shape!r}")
        size = int(np.prod(shape, dtype=object))
        expected = (list, size) if dtype.hasobject else (bytes, size * dtype.itemsize)
        if not isinstance(data, expected[0]) or len(data) != expected[1]:
            raise pickle.UnpicklingError(
                f"Refusing a pickled array of shape {shape} and dtype {dtype}: "
                f"its data is not {expected[1]} "
                f"{'items' if dtype.hasobject else 'bytes'}")
        super().__setstate__((*version, shape, dtype, fortran, data))

    def __reduce_ex__(self, protocol: Any) -> Any:
        # Pickled as a plain array (load_npy returns arrays nested in an object
        # array as this class: saved again, the file named it, and was refused)
        return self.view(np.ndarray).__reduce_ex__(protocol)


def _reconstruct(subtype: Any, shape: Any, dtype: Any) -> np.ndarray:
    # The placeholder array the pickle's state fills in (_CheckedArray.__setstate__).
    if subtype is not _CheckedArray:
        raise pickle.UnpicklingError(
            f"Refusing to reconstruct an array of type {subtype!r}")
    return _NDARRAY_RECONSTRUCT(_CheckedArray, (0, ), "b")


_ALLOWED_GLOBALS: Dict[Tuple[str, str], Callable] = {
    ("numpy.core.multiarray", "_reconstruct"): _reconstruct,
    ("numpy._core.multiarray", "_reconstruct"): _reconstruct,
    ("numpy", "ndarray"): _CheckedArray,
    ("numpy", "dtype"): _PickledDtype,
    ("_codecs", "encode"): _latin1_encode,
    ("__builtin__", "frozenset"): frozenset,
    ("builtins", "frozenset"): frozenset,
}


class RestrictedUnpickler(pickle.Unpickler):
    r"""A :class:`pickle.Unpickler` that resolves only an allow-list of
    globals: NumPy's array reconstruction (``_reconstruct``, ``ndarray``,
    ``dtype``), the ``latin1`` byte encoding of protocol-2 pickles and
    :class:`frozenset`. Dicts, lists, tuples, strings and numbers need no
    global. Any other global (e.g. ``os.system`` in a tampered file) raises
    :class:`pickle.UnpicklingError` before anything is called.

    Args:
        file (BinaryIO): The open file, positioned at the pickle; further
            keyword arguments as for :class:`pickle.Unpickler`.
    """
    def find_class(self, module: str, name: str) -> Any:
        # (NumPy's array and dtype come as the checked stand-ins above)
        try:
            return _ALLOWED_GLOBALS[(module, name)]
        except KeyError:
            allowed = ", ".join(sorted(f"{m}.{n}" for m, n in _ALLOWED_GLOBALS))
            raise pickle.UnpicklingError(
                f"Refusing to load the global '{module}.{name}' from a "
                f"pickled file: it is not one of the types this data needs "
                f"({allowed}). The file may have been tampered with."
            ) from None

    def persistent_load(self, pid: Any) -> Any:
        raise pickle.UnpicklingError(
            "Refusing a persistent id in a pickled file")


#: The deepest nesting of objects (see :func:`_pickle_depth`) a pickle read by a
#: dataset may hold: far more than the package's own files hold (a processed file
#: nests 7 levels, the citation raw files 8), far less than the nesting at which
#: hashing or comparing the objects, which recurses in C, overflows the C stack
#: and crashes the interpreter (a tuple nested 150,000 deep as a dict key did).
_MAX_PICKLE_DEPTH = 1000

# What each opcode does to the unpickler's stack, for _pickle_depth: (effect, size).
# _NEW pushes a new object that holds none (a constant, a global, an empty container).
# _MAKE, _ADD and _DROP take the items above the last mark (size _TO_MARK) or the
# top size items, and make a new object that holds them (an OBJ its class and
# arguments, a REDUCE its callable and arguments), add them to the object below them
# (BUILD: the object's state), or drop them. The others work on the mark, the object
# on top or the memo.
_NEW, _MAKE, _ADD, _DROP, _MARK, _POP, _DUP, _PUT, _GET, _NOTHING = range(10)
_TO_MARK = -1
_STACK_EFFECTS: Dict[str, Tuple[int, int]] = {
    **{op.name: (_NEW, 0) for op in pickletools.opcodes if not op.stack_before
       and op.stack_after and op.stack_after[0] is not pickletools.markobject},
    **dict.fromkeys(("LIST", "TUPLE", "DICT", "FROZENSET", "INST", "OBJ"),
                    (_MAKE, _TO_MARK)),
    "TUPLE1": (_MAKE, 1), "TUPLE2": (_MAKE, 2), "TUPLE3": (_MAKE, 3),
    "REDUCE": (_MAKE, 2), "NEWOBJ": (_MAKE, 2), "NEWOBJ_EX": (_MAKE, 3),
    "STACK_GLOBAL": (_MAKE, 2), "BINPERSID": (_MAKE, 1),
    **dict.fromkeys(("APPENDS", "SETITEMS", "ADDITEMS"), (_ADD, _TO_MARK)),
    "APPEND": (_ADD, 1), "SETITEM": (_ADD, 2), "BUILD": (_ADD, 1),
    "READONLY_BUFFER": (_ADD, 0),  # (the buffer on top stays)
    "POP_MARK": (_DROP, _TO_MARK), "MARK": (_MARK, 0), "POP": (_POP, 1),
    "DUP": (_DUP, 1),
    **dict.fromkeys(("PUT", "BINPUT", "LONG_BINPUT", "MEMOIZE"), (_PUT, 1)),
    **dict.fromkeys(("GET", "BINGET", "LONG_BINGET"), (_GET, 0)),
    **dict.fromkeys(("PROTO", "FRAME", "STOP"), (_NOTHING, 0)),
}


def _pickle_depth(file: BinaryIO) -> int:
    r"""The nesting depth of the pickle at the position of :obj:`file`, read from
    its opcodes (:func:`pickletools.genops`) without unpickling it: the most
    objects on one chain of objects, each holding the next (a number is 1, ``[]``
    1, ``[[1]]`` 3), over every object the pickle makes (also one it drops).

    The unpickler's stack and memo are followed by object identity, so that an
    object filled after it is nested elsewhere (e.g. fetched from the memo and
    appended to) deepens what holds it; an object made by a call (``REDUCE``,
    ``NEWOBJ``) holds its callable and arguments, one given a state (``BUILD``)
    holds its state. A cycle is followed once around. Linear in the size of the
    pickle.

    Args:
        file (BinaryIO): The open file, positioned at the pickle.

    Returns:
        int: The depth.

    Raises:
        ValueError: If the opcodes are malformed (unknown, truncated, without
            ``STOP``, or taking from the stack what is not there); the message is
            the error's type and first line.
    """
    # The objects are numbered as they are made; the stack holds their numbers, and
    # holder[i] holds held[i].
    stack: list = []
    marks: list = []  # the stack's size at each mark
    memo: Dict[Any, int] = {}
    holder: list = []
    held: list = []
    count = 0
    try:
        for op, arg, _ in pickletools.genops(file):
            effect, size = _STACK_EFFECTS[op.name]
            if effect == _NEW:
                stack.append(count)
                count += 1
            elif effect <= _DROP:  # (_MAKE, _ADD, _DROP)
                start = marks.pop() if size == _TO_MARK else len(stack) - size
                if start - (effect == _ADD) < (marks[-1] if marks else 0):
                    raise IndexError(f"{op.name} takes more than the stack holds")
                items = stack[start:]
                del stack[start:]
                if effect == _MAKE:
                    holder.extend([count] * len(items))
                    held.extend(items)
                    stack.append(count)
                    count += 1
                elif effect == _ADD:
                    holder.extend([stack[-1]] * len(items))
                    held.extend(items)
            elif effect == _MARK:
                marks.append(len(stack))
            elif effect == _GET:
                stack.append(memo[arg])
            elif effect != _NOTHING:  # (_POP, _DUP, _PUT: the object on top)
                if effect == _POP and marks and marks[-1] == len(stack):
                    marks.pop()  # (POP drops the mark where nothing is above it)
                    continue
                if len(stack) <= (marks[-1] if marks else 0):
                    raise IndexError(f"{op.name} on an empty stack")
                if effect == _POP:
                    stack.pop()
                elif effect == _DUP:
                    stack.append(stack[-1])
                else:
                    memo[len(memo) if op.name == "MEMOIZE" else arg] = stack[-1]
    except (ValueError, KeyError, IndexError, EOFError, OverflowError) as e:
        # (genops raises ValueError on malformed opcodes, the stack and memo the rest)
        raise ValueError(_first_line(e)) from None
    # The objects each object holds, held[first[i]:first[i + 1]] after sorting them
    # by their holders (a counting sort: linear).
    first = [0] * (count + 1)
    for i in holder:
        first[i + 1] += 1
    for i in range(count):
        first[i + 1] += first[i]
    slot = first[:-1]
    children = [0] * len(held)
    for i, child in zip(holder, held):
        children[slot[i]] = child
        slot[i] += 1
    # The longest chain below each object, by a depth-first search without recursion
    # that leaves out the edge closing a cycle. (0: not reached yet, -1: on the
    # search's path; an object that holds none is 1 from the start)
    depth = [int(begin == end) for begin, end in zip(first, first[1:])]
    for start in range(count):
        if depth[start]:
            continue
        depth[start] = -1
        path, next_child = [start], [first[start]]
        while path:
            node, i = path[-1], next_child[-1]
            end = first[node + 1]
            while i < end and depth[children[i]]:
                i += 1
            if i < end:
                next_child[-1] = i + 1
                depth[children[i]] = -1
                path.append(children[i])
                next_child.append(first[children[i]])
            else:
                path.pop()
                next_child.pop()
                # (a child on the path, -1, closes a cycle)
                below = max(map(depth.__getitem__, children[first[node]:end]), default=0)
                depth[node] = 1 + max(below, 0)
    return max(depth, default=0)


def _pickle_problem(pickled: bytes) -> Optional[str]:
    # Why a pickle may not be unpickled (malformed, or nested too deep), or None.
    try:
        depth = _pickle_depth(BytesIO(pickled))
    except ValueError as e:
        return f"is malformed ({e})"
    if depth > _MAX_PICKLE_DEPTH:
        return (f"nests objects {depth} deep, more than the {_MAX_PICKLE_DEPTH} a "
                f"dataset reads")
    return None


def _read_npy_header(f: BinaryIO) -> Tuple[tuple, bool, np.dtype]:
    version = np.lib.format.read_magic(f)
    if version == (1, 0):
        return np.lib.format.read_array_header_1_0(f)
    if version == (2, 0):
        return np.lib.format.read_array_header_2_0(f)
    raise ValueError(f"Unsupported .npy format version {version}")


def _check_data_size(f: BinaryIO, path: str, shape: tuple, dtype: np.dtype) -> None:
    # The data after the header of a plain .npy file are as many bytes as its header
    # declares: NumPy allocates the array first (a shape the file cannot hold asked
    # for terabytes) and leaves bytes beyond it unread.
    declared = math.prod(shape) * dtype.itemsize
    left = os.fstat(f.fileno()).st_size - f.tell()
    if declared != left:
        raise ValueError(f"'{path}' is not a valid .npy file: its header declares "
                         f"an array of shape {shape} and dtype {dtype} ({declared} "
                         f"bytes), the file holds {left} bytes after it")


def load_npy(path: str) -> np.ndarray:
    r"""Loads a ``.npy`` file without executing code from it.

    Arrays of plain dtypes are read with ``allow_pickle=False``. Object
    arrays, which NumPy stores as a pickle after the ``.npy`` header, are read
    by :class:`RestrictedUnpickler`, and the result is checked against the
    shape and dtype of the header.

    Args:
        path (str): The ``.npy`` file.

    Returns:
        numpy.ndarray: The stored array.

    Raises:
        pickle.UnpicklingError: If the pickle refers to a global that is not
            on the allow-list.
        ValueError: If the file is not a regular file or not a valid ``.npy``
            file, its pickle is malformed or nests objects deeper than
            :data:`_MAX_PICKLE_DEPTH` (checked before it is unpickled), or its
            payload does not match its header.
    """
    with open(_regular_file(path), "rb") as f:
        try:
            shape, fortran_order, dtype = _read_npy_header(f)
        except (ValueError, SyntaxError) as e:  # (NumPy parses the header's dict)
            raise ValueError(f"'{path}' is not a valid .npy file: {e}") from e
        if not dtype.hasobject:
            _check_data_size(f, path, tuple(shape), dtype)
            f.seek(0)
            return np.load(f, allow_pickle=False)
        pickled = f.read()
        problem = _pickle_problem(pickled)
        if problem:
            raise ValueError(f"'{path}' holds a pickled array that {problem}")
        try:  # (from the bytes read for the check: the file is read once)
            array = RestrictedUnpickler(BytesIO(pickled)).load()
        except pickle.UnpicklingError as e:
            raise pickle.UnpicklingError(f"{path}: {e}") from None
        except (EOFError, TypeError, AttributeError, IndexError, ValueError,
                OverflowError, MemoryError) as e:  # (sizes the file claims)
            raise ValueError(f"'{path}' holds a malformed pickled array "
                             f"({type(e).__name__}: {e})") from e
    if (not isinstance(array, np.ndarray) or array.shape != tuple(shape)
            or array.dtype != dtype):
        raise ValueError(
            f"'{path}': the pickled payload does not match the .npy header "
            f"(expected an array of shape {tuple(shape)} and dtype {dtype})")
    return array.view(np.ndarray)


def fetch_raw_file(url: str, raw_dir: str, filename: str, sha256: str,
                   log: bool = True) -> str:
    r"""Downloads :obj:`url` to :obj:`raw_dir`/:obj:`filename` and checks its
    SHA-256 digest.

    The file is first downloaded to a temporary directory inside
    :obj:`raw_dir` and moved into place only once its digest is correct, so a
    failed or interrupted download never leaves a file that looks present.

    Args:
        url (str): Where to download from.
        raw_dir (str): The dataset's raw directory.
        filename (str): The name of the file in :obj:`raw_dir`.
        sha256 (str): The expected hexadecimal SHA-256 digest.
        log (bool, optional): Print progress. (default: :obj:`True`)

    Returns:
        str: The path of the checked file.

    Raises:
        RuntimeError: If the download fails (e.g. no network); the message
            names the file to place in :obj:`raw_dir` by hand.
        ValueError: If the downloaded file has the wrong digest.
    """
    from torch_geometric.data import download_url

    os.makedirs(raw_dir, exist_ok=True)
    target = osp.join(raw_dir, filename)
    with tempfile.TemporaryDirectory(dir=raw_dir, prefix=".download-") as tmp:
        try:
            path = download_url(url, tmp, log=log, filename=filename)
        except OSError as e:  # urllib's URLError is an OSError
            raise RuntimeError(
                f"Could not download '{filename}' from {url} ({e}). Without "
                f"network access, place the file '{filename}' (sha256 "
                f"{sha256}) in '{osp.abspath(raw_dir)}' and try again."
            ) from e
        check_sha256(path, sha256, hint=f"(downloaded from {url})")
        os.replace(path, target)
    return target


def atomic_torch_save(obj: Any, path: str) -> None:
    r"""Saves :obj:`obj` with :func:`torch.save` so that :obj:`path` either
    does not exist or holds the complete file: the data go to a temporary
    file in the same directory, which then replaces :obj:`path` atomically.

    Args:
        obj (Any): What to save.
        path (str): The target file; its directory is created if needed.

    Raises:
        ValueError: If :obj:`path` is a directory.
    """
    if osp.isdir(path) and not osp.islink(path):  # (os.replace failed on it; a link
        # to a directory is replaced)
        raise ValueError(f"'{path}' is a directory, which a dataset does not replace "
                         f"with its processed file: remove it")
    folder = osp.dirname(osp.abspath(path))
    os.makedirs(folder, exist_ok=True)
    # Created as open() creates files, with the permissions the umask leaves
    # (tempfile.mkstemp's owner-only mode stayed on the file, which other users of
    # a shared root then could not read).
    tmp = osp.join(folder, f".{osp.basename(path)}.{uuid.uuid4().hex}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "wb") as f:
            torch.save(obj, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if osp.exists(tmp):
            os.remove(tmp)
        raise


def load_processed(path: str, **required: Sequence[str]) -> Dict[str, Any]:
    r"""Loads a processed file written by
    :meth:`~torch_geometric_san.datasets.SharedComplexDataset.save_shared`.

    The file is read by :func:`torch.load` with :obj:`weights_only=True`, so
    nothing in it can run code, and its layout is checked: a dict of a
    :obj:`"complex"` dict, an :obj:`"items"` dict of tensors with one leading
    size and an :obj:`"extra"` dict, and nothing else, each holding at least
    the keys :obj:`required` names.

    Args:
        path (str): The processed file.
        **required (Sequence[str]): The keys each of :obj:`"complex"`,
            :obj:`"items"` and :obj:`"extra"` must hold (e.g.
            :obj:`items=("x_1", "y")`).

    Returns:
        dict: Its content.

    Raises:
        ValueError: If the file is not a regular file (e.g. a FIFO), is empty,
            truncated, not a processed file of this package (e.g. with compressed
            zip entries, which :func:`torch.save` does not write, or a pickle
            nested deeper than :data:`_MAX_PICKLE_DEPTH`, refused before it is
            unpickled), or holds anything but tensors and plain values (the
            message names the file and says to pass :obj:`force_reload=True`).
    """
    try:
        resolved = _regular_file(path)  # a missing file fails here
    except ValueError as e:
        raise damaged_file(path, str(e)) from None
    with open(resolved, "rb") as f:  # an unreadable one here
        _check_stored_entries(f, path)
        try:
            out = torch.load(f, weights_only=True)
        except Exception as e:  # torch.load fails in many ways on damaged files
            raise damaged_file(path, _first_line(e)) from None
    if not isinstance(out, dict) or out.keys() != {"complex", "items", "extra"} \
            or not isinstance(out.get("complex"), dict) \
            or not isinstance(out.get("extra"), dict) \
            or not isinstance(out.get("items"), dict) \
            or not all(isinstance(v, torch.Tensor) and v.dim() > 0
                       for v in out["items"].values()) \
            or len({v.size(0) for v in out["items"].values()}) > 1:
        raise damaged_file(path, "not the layout of a processed file of this package")
    for part in ("complex", "items", "extra"):
        for key, value in out[part].items():
            # (torch.load does not check a sparse tensor's indices: reading one
            # with indices out of range could crash the interpreter)
            if isinstance(value, torch.Tensor) and value.layout != torch.strided:
                raise damaged_file(path, f"its {part} hold a {value.layout} tensor "
                                   f"'{key}'; the package writes dense ones")
    for part, keys in required.items():
        missing = sorted(set(keys) - out[part].keys())
        if missing:
            raise damaged_file(path, f"its {part} lack {missing}")
    return out


def _check_stored_entries(f: BinaryIO, path: str) -> None:
    # torch.save writes the entries of its zip archive uncompressed, and torch.load
    # inflates compressed ones in full before reading them: an entry compressed, or
    # entries larger than the file, would take memory far beyond its size.
    size = os.fstat(f.fileno()).st_size
    try:
        archive = zipfile.ZipFile(f)  # (which leaves f open)
        entries = archive.infolist()
    except Exception as e:  # as torch.load, zipfile fails in many ways on them
        raise damaged_file(path, _first_line(e)) from None
    compressed = [e.filename for e in entries if e.compress_type != zipfile.ZIP_STORED]
    if compressed:
        raise damaged_file(path, f"its zip entry '{compressed[0]}' is compressed; "
                           f"torch.save stores them uncompressed")
    if sum(e.file_size for e in entries) > size:
        raise damaged_file(path, f"its zip entries claim more bytes than its "
                           f"{size} on disk")
    # The pickle torch.load reads ('<archive>/data.pkl'): one nested too deep would
    # crash the interpreter as it is unpickled.
    for entry in entries:
        # (torch.load finds the entry by a case-insensitive name: DATA.PKL too)
        if entry.filename.split("/")[-1].lower() == "data.pkl":
            try:
                pickled = archive.read(entry)
            except Exception as e:  # (e.g. a wrong CRC)
                raise damaged_file(path, _first_line(e)) from None
            problem = _pickle_problem(pickled)
            if problem:
                raise damaged_file(path, f"its pickle '{entry.filename}' {problem}")
    f.seek(0)


def _check_processed_tensor(name: str, value: Any, dtype: torch.dtype,
                           shape: Sequence[Optional[int]],
                           values: Optional[Sequence[int]] = None) -> None:
    r"""Checks a tensor read from a processed file against what :meth:`process`
    writes, so that a damaged or foreign file is processed again rather than
    read as a wrong dataset.

    Args:
        name (str): The tensor, for the message.
        value (Any): What the file holds.
        dtype (torch.dtype): Its dtype.
        shape (Sequence[Optional[int]]): Its shape, :obj:`None` for any size.
        values (Sequence[int], optional): The values it may hold; floating-point
            ones must be finite. (default: :obj:`None`)

    Raises:
        ValueError: If it differs.
    """
    want = "[" + ", ".join("*" if n is None else str(n) for n in shape) + "]"
    if not isinstance(value, torch.Tensor) or value.dtype != dtype or \
            value.dim() != len(shape) or \
            any(n is not None and n != m for n, m in zip(shape, value.shape)):
        got = (f"{value.dtype} {list(value.shape)}" if isinstance(value, torch.Tensor)
               else type(value).__name__)
        raise ValueError(f"'{name}' must be {dtype} of shape {want} (got {got})")
    if value.is_floating_point() and not bool(torch.isfinite(value).all()):
        raise ValueError(f"'{name}' holds NaN or infinite values")
    if values is not None:
        # (one value at a time: PyTorch 2.4's torch.isin has no half-precision kernel)
        allowed = torch.zeros_like(value, dtype=torch.bool)
        for v in values:
            allowed |= value == v
        if not bool(allowed.all()):
            raise ValueError(f"'{name}' holds values other than {list(values)}")


def _first_line(error: Exception) -> str:
    # "Type: first line of the message", for an error message of our own.
    text = str(error).strip()
    return f"{type(error).__name__}: {text.splitlines()[0][:200]}" if text else \
        type(error).__name__


def damaged_file(path: str, reason: str) -> ValueError:
    r"""The error of a processed file that cannot be read: it names the file and
    the reason, and says to process the dataset again.

    Args:
        path (str): The processed file.
        reason (str): Why it cannot be read.

    Returns:
        ValueError: The error (to raise).
    """
    return ValueError(f"The processed file '{path}' cannot be read ({reason}). "
                     f"It is damaged or was not written by this package; "
                     f"pass force_reload=True to process the dataset again")
