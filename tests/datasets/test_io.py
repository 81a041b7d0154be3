import io as _io
import os
import os.path as osp
import pickle
import re
import shlex
import subprocess
import sys

import numpy as np
import pytest
import torch

from torch_geometric_san.datasets import io


class _RunsCommand:
    """Pickles to a call of os.system, as a tampered file would."""
    def __init__(self, command):
        self.command = command

    def __reduce__(self):
        return (os.system, (self.command, ))


def _write_npy_with_payload(path, payload: bytes, shape=(1, )):
    with open(path, "wb") as f:
        np.lib.format.write_array_header_1_0(f, {
            "descr": "|O",
            "fortran_order": False,
            "shape": shape
        })
        f.write(payload)


def test_load_npy_object_array_of_dicts(tmp_path):
    value = np.empty(2, dtype=object)
    value[0] = {frozenset({3, 1}): 0, frozenset({2}): 1}
    value[1] = {frozenset({1, 2, 3}): 7}
    path = str(tmp_path / "dicts.npy")
    np.save(path, value, allow_pickle=True)
    out = io.load_npy(path)
    assert out.dtype == object and out.shape == (2, )
    assert out[0] == value[0] and out[1] == value[1]


def test_load_npy_nested_arrays_can_be_saved_again(tmp_path):
    # (the nested arrays came back as the loader's own array class, which a file
    # saved from them named, and which load_npy then refused)
    value = np.empty(2, dtype=object)
    value[0], value[1] = np.arange(3), np.array([[1.5, 2.0]])
    path = str(tmp_path / "nested.npy")
    np.save(path, value, allow_pickle=True)
    np.save(str(tmp_path / "again.npy"), io.load_npy(path), allow_pickle=True)
    out = io.load_npy(str(tmp_path / "again.npy"))
    for got, want in zip(out, value):
        np.testing.assert_array_equal(got, want)
        assert got.dtype == want.dtype


@pytest.mark.parametrize("protocol", [2, 4])
def test_load_npy_pickle_protocols(tmp_path, protocol):
    # Protocol 2 (as in the published files) encodes bytes with
    # _codecs.encode; newer protocols do not.
    value = np.empty(1, dtype=object)
    value[0] = {frozenset({5, 6}): 2}
    path = str(tmp_path / "p.npy")
    _write_npy_with_payload(path, pickle.dumps(value, protocol=protocol))
    assert io.load_npy(path)[0] == value[0]


def test_load_npy_plain_array(tmp_path):
    path = str(tmp_path / "plain.npy")
    np.save(path, np.arange(6).reshape(2, 3))
    np.testing.assert_array_equal(io.load_npy(path),
                                  np.arange(6).reshape(2, 3))


def test_load_npy_refuses_code_execution(tmp_path):
    marker = tmp_path / "pwned"
    payload = pickle.dumps(
        np.array([_RunsCommand(f"touch {shlex.quote(str(marker))}")],
                 dtype=object), protocol=2)
    path = str(tmp_path / "evil.npy")
    _write_npy_with_payload(path, payload)

    with pytest.raises(pickle.UnpicklingError, match="os.system|posix.system"):
        io.load_npy(path)
    assert not marker.exists()

    # The crafted file is really malicious: NumPy's own loader runs it (in a
    # subprocess, so that this test process stays clean).
    code = f"import numpy as np; np.load({path!r}, allow_pickle=True)"
    subprocess.run([sys.executable, "-c", code], check=True)
    assert marker.exists()


def test_load_npy_refuses_other_codecs(tmp_path):
    # A pickle that calls _codecs.encode with another codec than latin1.
    payload = (b"\x80\x02c_codecs\nencode\nX\x03\x00\x00\x00abcX\x06\x00\x00"
               b"\x00base64\x86R.")
    path = str(tmp_path / "codec.npy")
    _write_npy_with_payload(path, payload)
    with pytest.raises(pickle.UnpicklingError, match="latin1"):
        io.load_npy(path)


def test_load_npy_payload_must_match_header(tmp_path):
    path = str(tmp_path / "mismatch.npy")
    _write_npy_with_payload(path, pickle.dumps({"a": 1}, protocol=2))
    with pytest.raises(ValueError, match="does not match the .npy header"):
        io.load_npy(path)


class _WithState:
    """Pickles as ``array`` does, with its state changed by ``change``."""
    def __init__(self, array, change):
        self.array, self.change = array, change

    def __reduce__(self):
        function, args, state = self.array.__reduce__()
        return function, args, self.change(state)


def _object_array(*items):
    out = np.empty(len(items), dtype=object)
    out[:] = list(items)
    return out


@pytest.mark.parametrize("change, match", [
    # NumPy reads as many items or bytes as the shape claims, past the end of the
    # pickled list (a segmentation fault) or bytes
    (lambda state: (*state[:1], (100000, ), *state[2:]), "its data is not 100000 items"),
    (lambda state: (*state[:4], state[4][:1]), "its data is not 3 items"),
    (lambda state: (*state[:1], (-1, ), *state[2:]), "shape"),
    (lambda state: (*state[:2], "O8", *state[3:]), "without a dtype"),
    (lambda state: state[:2], "malformed pickled array state"),
])
def test_load_npy_refuses_a_state_that_does_not_match_its_array(tmp_path, change, match):
    path = str(tmp_path / "state.npy")
    payload = pickle.dumps(_WithState(_object_array({}, {1: 2}, frozenset()), change),
                           protocol=2)
    _write_npy_with_payload(path, payload, shape=(3, ))
    with pytest.raises(pickle.UnpicklingError, match=match):
        io.load_npy(path)


def test_load_npy_checks_nested_arrays_and_dtypes(tmp_path):
    path = str(tmp_path / "nested.npy")
    inner = np.arange(4.0)
    value = _object_array({'a': 1}, inner)
    _write_npy_with_payload(path, pickle.dumps(value, protocol=2), shape=(2, ))
    out = io.load_npy(path)
    assert type(out) is np.ndarray and out[0] == {'a': 1}
    np.testing.assert_array_equal(out[1], inner)
    # a numeric array whose bytes are fewer than its shape needs
    short = _WithState(inner, lambda state: (*state[:4], state[4][:8]))
    _write_npy_with_payload(path, pickle.dumps(_object_array(short), protocol=2))
    with pytest.raises(pickle.UnpicklingError, match="its data is not 32 bytes"):
        io.load_npy(path)
    # a dtype whose pickled state is not its own, or whose spec NumPy would parse
    # as fields
    for spec, state in (("f8", (3, '<', None, None, None, 16, 1, 0)),
                        ("f8,i4", None)):
        dtype_pickle = (b"\x80\x02cnumpy\ndtype\nX" + len(spec).to_bytes(4, "little")
                        + spec.encode() + b"\x89\x88\x87R")
        if state is not None:
            dtype_pickle += pickle.dumps(state, protocol=2)[2:-1] + b"b"
        _write_npy_with_payload(path, dtype_pickle + b".")
        with pytest.raises(pickle.UnpicklingError, match="Refusing the pickled"):
            io.load_npy(path)


@pytest.mark.parametrize("shape, data, declared, held", [
    # NumPy allocated 8 TB for the first and failed; it read the last without its
    # trailing bytes
    ((10**12, ), 16, 8 * 10**12, 16),
    ((1000, ), 80, 8000, 80),
    ((10, ), 800, 80, 800),
])
def test_load_npy_refuses_data_of_another_size_than_the_header(tmp_path, shape, data,
                                                               declared, held):
    path = str(tmp_path / "plain.npy")
    with open(path, "wb") as f:
        np.lib.format.write_array_header_1_0(
            f, {"descr": "<f8", "fortran_order": False, "shape": shape})
        f.write(bytes(data))
    with pytest.raises(ValueError, match=rf"'{re.escape(path)}' is not a valid .npy "
                       rf"file: its header declares an array of shape "
                       rf"{re.escape(str(shape))} and dtype float64 \({declared} "
                       rf"bytes\), the file holds {held} bytes after it"):
        io.load_npy(path)


def test_load_npy_not_npy(tmp_path):
    path = tmp_path / "junk.npy"
    path.write_bytes(b"not a numpy file")
    with pytest.raises(ValueError, match="not a valid .npy file"):
        io.load_npy(str(path))



def test_load_npy_header_versions(tmp_path):
    # Version 2.0 headers are read; unknown versions are refused.
    value = np.empty(1, dtype=object)
    value[0] = {frozenset({1}): 0}
    path = tmp_path / "v2.npy"
    with open(path, "wb") as f:
        np.lib.format.write_array_header_2_0(
            f, {"descr": "|O", "fortran_order": False, "shape": (1, )})
        pickle.dump(value, f, protocol=2)
    assert io.load_npy(str(path))[0] == value[0]
    data = bytearray(path.read_bytes())
    data[6] = 9  # the major version byte after the magic string
    path.write_bytes(bytes(data))
    with pytest.raises(ValueError, match=r"not a valid .npy file: Unsupported .npy "
                                         r"format version \(9, 0\)"):
        io.load_npy(str(path))


def test_load_npy_refuses_persistent_ids_and_truncated_pickles(tmp_path):
    path = str(tmp_path / "persistent.npy")
    _write_npy_with_payload(path, b"\x80\x02X\x01\x00\x00\x00aQ.")  # BINPERSID
    with pytest.raises(pickle.UnpicklingError, match="persistent id"):
        io.load_npy(path)
    whole = pickle.dumps(np.array([{1: 2}], dtype=object), protocol=2)
    _write_npy_with_payload(path, whole[:len(whole) // 2])
    # (found malformed as its depth is read, before it is unpickled)
    with pytest.raises(ValueError, match="persistent.npy' holds a pickled array that "
                                         "is malformed \\(ValueError: not enough data"):
        io.load_npy(path)
    _write_npy_with_payload(path, b"")  # a header and no payload
    with pytest.raises(ValueError, match="holds a pickled array that is malformed "
                                         "\\(ValueError: pickle exhausted before "
                                         "seeing STOP\\)"):
        io.load_npy(path)


def _nested_item(item: bytes) -> bytes:
    r"""The pickle (protocol 2, as NumPy writes it) of an object array of one item,
    the opcodes :obj:`item` in place of the item."""
    value = np.empty(1, dtype=object)
    value[0] = "placeholder"
    whole = pickle.dumps(value, protocol=2)
    assert whole.count(b"X\x0b\x00\x00\x00placeholder") == 1
    return whole.replace(b"X\x0b\x00\x00\x00placeholder", item)


def _nested_lists(n: int) -> bytes:  # (lists nested n + 1 deep)
    return b"(" * n + b"]" + b"l" * n


def _dict_with_deep_key(n: int) -> bytes:  # (a dict whose key nests n + 1 deep)
    return b"}" + b")" + b"\x85" * n + b"K\x01s"


def test_load_npy_refuses_a_pickle_nested_too_deep(tmp_path):
    path = str(tmp_path / "deep.npy")
    _write_npy_with_payload(path, _nested_item(_nested_lists(900)))
    item = io.load_npy(path)[0]  # (nesting 904 deep: read)
    for _ in range(901):
        assert isinstance(item, list) and len(item) <= 1
        item = item[0] if item else None
    _write_npy_with_payload(path, _nested_item(_nested_lists(5000)))
    with pytest.raises(ValueError, match=rf"'{re.escape(path)}' holds a pickled array "
                       r"that nests objects 5004 deep, more than the 1000 a dataset "
                       r"reads"):
        io.load_npy(path)


def test_load_npy_refuses_a_pickle_that_crashed_the_interpreter(tmp_path):
    # Unpickling the dict hashed its key, which recursed in C until the interpreter
    # crashed with a segmentation fault: the file is read in a process of its own,
    # so that this one survives where the check fails.
    path = str(tmp_path / "deep.npy")
    _write_npy_with_payload(path, _nested_item(_dict_with_deep_key(200_000)))
    code = ("from torch_geometric_san.datasets import io\n"
            "try:\n"
            f"    io.load_npy({path!r})\n"
            "except ValueError as e:\n"
            "    print(e)\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=osp.dirname(osp.dirname(osp.dirname(osp.abspath(__file__)))))
    assert run.returncode == 0, (run.returncode, run.stderr[-2000:])
    assert run.stdout == (f"'{path}' holds a pickled array that nests objects 200005 "
                          f"deep, more than the 1000 a dataset reads\n")


def _depth(obj, path=()):
    r"""The nesting depth of a plain Python object, as io._pickle_depth counts it:
    the most objects on one chain of containers, each holding the next, a cycle
    followed once around."""
    if id(obj) in path:
        return 0
    if isinstance(obj, dict):
        items = [x for item in obj.items() for x in item]
    elif isinstance(obj, (list, tuple, set, frozenset)):
        items = list(obj)
    else:
        return 1
    return 1 + max((_depth(x, path + (id(obj), )) for x in items), default=0)


def _shared():
    a = [1]
    return [a, [a, [a, (a, )]], {"a": a}]


def _cyclic(length):
    first = last = []
    for _ in range(length - 1):
        last.append([])
        last = last[0]
    last.append(first)
    return {"cycle": first}


PLAIN = [1, "s", [], (), {}, [[1]], (1, (2, (3, ()))), {"a": [1, {"b": (2, )}]},
         {(1, (2, (3, (4, )))): [5]}, [0, 1, 2, 3, 4, [[[6]]]], (1, 2, 3, 4, (5, )),
         {i: (i, ) * (i % 3) for i in range(1001)}, [[i] for i in range(1001)],
         _shared(), _cyclic(1), _cyclic(2), _cyclic(5)]


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
@pytest.mark.parametrize("obj", PLAIN, ids=range(len(PLAIN)))
def test_pickle_depth_of_plain_objects(obj, protocol):
    pickled = pickle.dumps(obj, protocol=protocol)
    assert io._pickle_depth(_io.BytesIO(pickled)) == _depth(pickle.loads(pickled))


@pytest.mark.parametrize("obj", [{1, 2}, frozenset({(1, (2, ))}),
                                 [frozenset({frozenset({3})}), {(4, )}]])
def test_pickle_depth_of_sets(obj):
    # (protocol 4 and newer write sets with opcodes of their own)
    pickled = pickle.dumps(obj, protocol=4)
    assert io._pickle_depth(_io.BytesIO(pickled)) == _depth(pickle.loads(pickled))


@pytest.mark.parametrize("pickled, expected", [
    # a = [] (memo 0, then dropped); root = [a]; a is filled after it is nested,
    # through the memo: root = [[[[1]]]], 5 deep
    (b"\x80\x02]q\x000]h\x00ah\x00]]K\x01aaa0.", 5),
    # a list that holds itself, through DUP
    (b"\x80\x02]2a.", 1),
    # the dict of the processed file that crashed the interpreter, 12 deep
    (b"\x80\x02}" + b")" + b"\x85" * 10 + b"K\x01s.", 12),
    # the list that holds the same list twice, one filled after it is nested (the
    # memo's MEMOIZE): [[[[]]], [[[]]]]
    (b"\x80\x04]]\x94ah\x00ah\x00]]aa0.", 4),
])
def test_pickle_depth_of_hand_written_pickles(pickled, expected):
    assert _depth(pickle.loads(pickled)) == expected
    assert io._pickle_depth(_io.BytesIO(pickled)) == expected


def test_pickle_depth_counts_what_the_pickle_drops():
    # (the unpickler hashes the key as it makes the dict, which it then drops)
    pickled = b"\x80\x02}" + b")" + b"\x85" * 10 + b"K\x01s0N."
    assert pickle.loads(pickled) is None
    assert io._pickle_depth(_io.BytesIO(pickled)) == 12


@pytest.mark.parametrize("pickled, match", [
    (b"\x80\x02a.", "IndexError: APPEND takes more than the stack holds"),
    (b"\x80\x02](a.", "IndexError: APPEND takes more than the stack holds"),
    (b"\x80\x02e.", "IndexError: pop from empty list"),  # APPENDS without a mark
    (b"\x80\x02h\x05.", "KeyError: 5"),  # a memo entry never put
    (b"\x80\x020.", "IndexError: POP on an empty stack"),
    (b"\x80\x02]", "ValueError: pickle exhausted before seeing STOP"),
    (b"\x80\x02\xff.", "ValueError: at position 2, opcode b'\\xff' unknown"),
    (b"\x80\x02X\x05\x00\x00\x00ab.", "ValueError: expected 5 bytes"),
])
def test_pickle_depth_of_malformed_pickles(pickled, match):
    with pytest.raises((pickle.UnpicklingError, EOFError)):  # (as the unpickler does)
        pickle.loads(pickled)
    with pytest.raises(ValueError, match=re.escape(match)):
        io._pickle_depth(_io.BytesIO(pickled))

@pytest.mark.parametrize("read", [io.sha256sum, io.load_npy])
def test_readers_refuse_what_is_not_a_regular_file(not_a_regular_file, read):
    # a FIFO (with no writer) or a link to /dev/zero blocked them or never ended
    kind, path = not_a_regular_file
    with pytest.raises(ValueError, match=rf"'{re.escape(path)}' \('.+'\) is a "
                       rf"{kind}, not a regular file"):
        read(path)


def test_check_sha256(tmp_path):
    path = tmp_path / "f.bin"
    path.write_bytes(b"abc")
    digest = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    assert io.sha256sum(str(path)) == digest
    io.check_sha256(str(path), digest.upper())
    with pytest.raises(ValueError) as info:
        io.check_sha256(str(path), "0" * 64)
    message = str(info.value)
    assert str(path) in message and "0" * 64 in message and digest in message


def test_fetch_raw_file_offline(tmp_path):
    raw_dir = str(tmp_path / "raw")
    # Port 9 (discard) on localhost refuses the connection: no real network.
    with pytest.raises(RuntimeError) as info:
        io.fetch_raw_file("http://127.0.0.1:9/data.bin", raw_dir, "data.bin",
                          "0" * 64, log=False)
    message = str(info.value)
    assert "data.bin" in message and osp.abspath(raw_dir) in message
    assert os.listdir(raw_dir) == []  # nothing half-downloaded is left


def test_fetch_raw_file_checks_digest(tmp_path, monkeypatch):
    import torch_geometric.data

    def fake_download(url, folder, log=True, filename=None):
        path = osp.join(folder, filename)
        with open(path, "wb") as f:
            f.write(b"abc")
        return path

    monkeypatch.setattr(torch_geometric.data, "download_url", fake_download)
    raw_dir = str(tmp_path / "raw")
    with pytest.raises(ValueError, match="sha256"):
        io.fetch_raw_file("http://example.invalid/x", raw_dir, "x", "0" * 64)
    assert os.listdir(raw_dir) == []

    digest = io.sha256sum(fake_download("", str(tmp_path), filename="ref"))
    path = io.fetch_raw_file("http://example.invalid/x", raw_dir, "x", digest)
    assert path == osp.join(raw_dir, "x") and os.listdir(raw_dir) == ["x"]


def test_atomic_torch_save(tmp_path, monkeypatch):
    path = str(tmp_path / "out.pt")
    io.atomic_torch_save({"a": torch.arange(3)}, path)
    assert torch.equal(torch.load(path)["a"], torch.arange(3))

    real_save = torch.save

    def interrupted_save(obj, f, *args, **kwargs):
        f.write(b"half a file")
        raise KeyboardInterrupt

    monkeypatch.setattr(torch, "save", interrupted_save)
    with pytest.raises(KeyboardInterrupt):
        io.atomic_torch_save({"a": torch.arange(5)}, path)
    monkeypatch.setattr(torch, "save", real_save)
    # The old complete file is untouched and no temporary file is left.
    assert torch.equal(torch.load(path)["a"], torch.arange(3))
    assert os.listdir(tmp_path) == ["out.pt"]


@pytest.mark.parametrize("umask", [0o022, 0o077])
def test_atomic_torch_save_gives_the_permissions_of_the_umask(tmp_path, umask):
    # As open() and PyG's torch.save create files: the temporary file's owner-only
    # mode stayed on the processed file, unreadable to others sharing a root.
    old = os.umask(umask)
    try:
        io.atomic_torch_save({"a": torch.arange(3)}, str(tmp_path / "out.pt"))
    finally:
        os.umask(old)
    assert os.stat(tmp_path / "out.pt").st_mode & 0o777 == 0o666 & ~umask
