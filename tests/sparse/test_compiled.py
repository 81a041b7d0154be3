import errno
import os
import re
import stat
import threading
import time
import types
import warnings
from pathlib import Path

import pytest
import torch

from torch_geometric_san.sparse import SparseOperator, compiled

requires_kernels = pytest.mark.skipif(
    not compiled.enabled() or compiled.grouped_kernels() is None,
    reason="the compiled kernels are turned off (TGSAN_COMPILED_KERNELS=0) or could "
    "not be built here")


def pattern(n=9, density=0.35, seed=0, empty_row=True, index_dtype=None):
    torch.manual_seed(seed)
    dense = torch.rand(n, n) < density
    if empty_row:
        dense[3] = False  # a row without entries
    op = SparseOperator.from_index(dense.nonzero().t().flip(0), None, n)
    if index_dtype is not None:  # the compressed rows in the other index dtype
        op._cache['structure'] = tuple(t.to(index_dtype) if i < 4 else t
                                       for i, t in enumerate(op.structure()))
    return op


@pytest.fixture
def both(monkeypatch):
    # Runs f() with the compiled kernels and with the composites.
    def run(f):
        monkeypatch.setenv('TGSAN_COMPILED_KERNELS', '1')
        kernel = f()
        monkeypatch.setenv('TGSAN_COMPILED_KERNELS', '0')
        composite = f()
        monkeypatch.delenv('TGSAN_COMPILED_KERNELS')
        return kernel, composite
    return run


def gradients(out, inputs, seed=1):
    torch.manual_seed(seed)
    grad = torch.randn_like(out)
    return torch.autograd.grad(out, inputs, grad, allow_unused=True)


@requires_kernels
@pytest.mark.parametrize('features', [1, 3])
@pytest.mark.parametrize('index_dtype', [torch.int32, torch.int64])
def test_grouped_products_match_composites(both, features, index_dtype):
    op = pattern(index_dtype=index_dtype)
    value = torch.randn(op.nnz, 4, dtype=torch.float64, requires_grad=True)
    x = torch.randn(9, features, 4, dtype=torch.float64, requires_grad=True)
    a = torch.randn(9, features, 4, dtype=torch.float64, requires_grad=True)

    def run():
        out = op.matmul_grouped(value, x)
        score = op.sddmm_grouped(a, x)
        return (out, score, *gradients(out, (value, x)), *gradients(score, (a, x)))

    for kernel, composite in zip(*both(run)):
        assert torch.allclose(kernel, composite)


@requires_kernels
@pytest.mark.parametrize('given', [True, False])
def test_attention_matches_composite(both, given):
    op = pattern(seed=1)
    score = torch.randn(op.nnz, 5, dtype=torch.float64, requires_grad=True)
    target = torch.randn(9, 5, dtype=torch.float64, requires_grad=True)
    source = torch.randn(9, 5, dtype=torch.float64, requires_grad=True)
    with torch.no_grad():  # overflowed scores: replaced by the largest finite values
        (score if given else source)[0, :3] = torch.tensor([float('inf'), -float('inf'),
                                                            float('nan')])
    inputs = (score, ) if given else (target, source)

    def run():
        alpha = op.attention(0.2, *((score, ) if given else (None, target, source)))
        return (alpha, *gradients(alpha, inputs))

    kernel, composite = both(run)
    for k, c in zip(kernel, composite):
        assert torch.allclose(k, c, atol=1e-12)
    alpha = kernel[0]
    rows = op.index[1]
    sums = alpha.new_zeros(9, 5).index_add_(0, rows, alpha)
    has_entries = torch.bincount(rows, minlength=9) > 0
    assert torch.allclose(sums[has_entries], torch.ones_like(sums[has_entries]))


@requires_kernels
@pytest.mark.parametrize('constant', ['target', 'source'])
def test_attention_double_backward_with_a_constant_input(both, constant):
    # The kernel's double backward asked autograd for the gradient of every given
    # input, and autograd refuses one that does not require grad.
    op = pattern(seed=4)
    torch.manual_seed(0)
    scores = {name: torch.randn(9, 3, dtype=torch.float64,
                                requires_grad=name != constant)
              for name in ('target', 'source')}
    variable = [t for t in scores.values() if t.requires_grad]

    def run():
        alpha = op.attention(0.2, None, scores['target'], scores['source'])
        grad, = torch.autograd.grad((alpha * alpha.detach()).sum(), variable,
                                    create_graph=True)
        return (grad, *torch.autograd.grad((grad ** 2).sum(), variable))

    for kernel, composite in zip(*both(run)):
        assert torch.allclose(kernel, composite, atol=1e-12)
    assert torch.autograd.gradgradcheck(
        lambda t: op.attention(0.2, None, *((t, scores['source']) if constant == 'source'
                                            else (scores['target'], t))), variable)


@requires_kernels
def test_attention_float32_matches_composite(both):
    op = pattern(n=40, density=0.2, seed=2)
    target, source = torch.randn(40, 32) * 10, torch.randn(40, 32) * 10
    kernel, composite = both(lambda: op.attention(0.2, None, target, source))
    assert torch.allclose(kernel, composite, rtol=1e-5, atol=1e-7)


@requires_kernels
@pytest.mark.parametrize('given', [True, False])
def test_gradcheck_and_double_backward(given):
    op = pattern(n=6, density=0.5, seed=3)
    value = torch.randn(op.nnz, 2, dtype=torch.float64, requires_grad=True)
    x = torch.randn(6, 2, 2, dtype=torch.float64, requires_grad=True)
    a = torch.randn(6, 2, 2, dtype=torch.float64, requires_grad=True)
    for fn, inputs in ((op.matmul_grouped, (value, x)), (op.sddmm_grouped, (a, x))):
        assert torch.autograd.gradcheck(fn, inputs)
        assert torch.autograd.gradgradcheck(fn, inputs)
    if given:
        fn, inputs = (lambda s: op.attention(0.2, s)), (value, )
    else:
        fn, inputs = (lambda t, s: op.attention(0.2, None, t, s)), (x[:, 0], a[:, 0])
        inputs = tuple(t.detach().requires_grad_() for t in inputs)
    assert torch.autograd.gradcheck(fn, inputs)
    assert torch.autograd.gradgradcheck(fn, inputs)


@requires_kernels
def test_status_and_availability():
    assert compiled.status() == 'on'
    assert compiled.available_for(torch.zeros(1, dtype=torch.float64))
    assert not compiled.available_for(torch.zeros(1, dtype=torch.float16))
    assert not compiled.available_for(torch.zeros(1, device='meta'))


@requires_kernels
@requires_kernels
@pytest.mark.parametrize('features, groups', [(0, 3), (2, 0), (0, 0)])
def test_no_features_or_no_groups_match_composites(both, features, groups):
    # The kernel's sampled product over no features crashed the process; the
    # composites failed to reshape zero elements.
    op = pattern()
    value = torch.randn(op.nnz, groups, dtype=torch.float64, requires_grad=True)
    x = torch.randn(9, features, groups, dtype=torch.float64, requires_grad=True)

    def run():
        out = op.matmul_grouped(value, x)
        score = op.sddmm_grouped(x, x)
        return (out, score, *gradients(out, (value, x)))

    for kernel, composite in zip(*both(run)):
        assert kernel.shape == composite.shape and torch.equal(kernel, composite)
    assert run()[1].shape == (op.nnz, groups) and not run()[1].any()


@requires_kernels
def test_kernels_turned_off_between_forward_and_backward(monkeypatch):
    # (the backward looked the kernels up again, and found none)
    op = pattern()
    x = torch.randn(9, 3, 2, dtype=torch.float64, requires_grad=True)
    score = torch.randn(op.nnz, 2, dtype=torch.float64, requires_grad=True)
    monkeypatch.setenv('TGSAN_COMPILED_KERNELS', '1')
    out = op.matmul_grouped(op.attention(0.2, score), x).sum() + \
        op.sddmm_grouped(x, x).sum()
    expected = torch.autograd.grad(out, (x, score), retain_graph=True)
    monkeypatch.setenv('TGSAN_COMPILED_KERNELS', '0')
    got = torch.autograd.grad(out, (x, score))
    assert all(torch.equal(a, b) for a, b in zip(got, expected))


def test_empty_operator():
    op = SparseOperator(torch.zeros(2, 0, dtype=torch.long), None, (4, 3))
    out = op.matmul_grouped(torch.zeros(0, 2), torch.randn(3, 1, 2))
    assert out.shape == (4, 1, 2) and not out.any()
    assert op.sddmm_grouped(torch.randn(4, 1, 2), torch.randn(3, 1, 2)).shape == (0, 2)
    assert op.attention(0.2, None, torch.randn(4, 2), torch.randn(3, 2)).shape == (0, 2)


def test_turned_off_runs_the_composites(monkeypatch):
    monkeypatch.setenv('TGSAN_COMPILED_KERNELS', '0')
    assert compiled.grouped_kernels() is None and compiled.status() == 'off'
    assert not compiled.available_for(torch.zeros(1))
    op = pattern()
    out = op.matmul_grouped(torch.ones(op.nnz, 2), torch.ones(9, 1, 2))
    rows = torch.bincount(op.index[1], minlength=9).float()
    assert torch.equal(out[:, 0, 0], rows)


def test_a_failed_build_warns_once_and_falls_back(monkeypatch, tmp_path):
    import torch.utils.cpp_extension

    def fail(*args, **kwargs):
        raise RuntimeError("no compiler here")

    monkeypatch.setattr(torch.utils.cpp_extension, 'load', fail)
    monkeypatch.setattr(compiled, '_module', None)
    monkeypatch.setattr(compiled, '_failed', False)
    monkeypatch.setenv('TGSAN_COMPILED_KERNELS', '1')
    monkeypatch.setenv('TGSAN_KERNELS_DIR', str(tmp_path))
    assert compiled.status() == 'not loaded'
    with pytest.warns(RuntimeWarning, match="could not be built or loaded .*no compiler "
                      rf"here.*delete {tmp_path}.* to build them anew.*take effect "
                      r"in a new one\)") as caught:
        assert compiled.grouped_kernels() is None
    # at the user's line (it named torch's wrapper of grouped_kernels)
    assert [w.filename for w in caught] == [__file__]
    assert compiled.status() == 'failed' and not compiled.available_for(torch.zeros(1))
    op = pattern()
    value, x = torch.randn(op.nnz, 2), torch.randn(9, 1, 2)
    with warnings.catch_warnings():
        warnings.simplefilter('error')  # warned once only
        out = op.matmul_grouped(value, x)
    expected = torch.stack([op.matmul(x[:, :, g], value[:, g]) for g in range(2)], -1)
    assert torch.allclose(out, expected, atol=1e-6)


@pytest.mark.parametrize('kwargs, pattern_', [
    (dict(), "pass either 'score' or both 'target' and 'source'"),
    (dict(score=torch.randn(3, 2), target=torch.randn(9, 2)), "pass either"),
    (dict(target=torch.randn(9, 2)), "pass either"),
    (dict(score=torch.randn(5, 2)), r"'score' must be a dense floating-point tensor \[nnz="),
    (dict(target=torch.randn(8, 2), source=torch.randn(9, 2)), "'target' must have 9 rows"),
    (dict(target=torch.randn(9, 2), source=torch.randn(9, 3)), "same groups and dtype"),
])
def test_attention_rejects_bad_input(assert_rejected, kwargs, pattern_):
    assert_rejected(pattern().attention, (0.2, ), kwargs, ValueError, pattern_)


@pytest.mark.parametrize('slope, error', [('0.2', TypeError), (float('inf'), ValueError),
                                          (True, TypeError)])
def test_attention_rejects_a_bad_slope(assert_rejected, slope, error):
    assert_rejected(pattern().attention, (slope, ), dict(score=torch.randn(
        pattern().nnz, 2)), error, 'negative_slope must be')


def test_grouped_products_reject_bad_values(assert_rejected):
    op = pattern()
    x = torch.randn(9, 1, 2)
    assert_rejected(op.matmul_grouped, (torch.randn(op.nnz, 3), x), {}, ValueError,
                    "'value' must hold .* entries of 2 groups")
    assert_rejected(op.matmul_grouped, (torch.randn(op.nnz, 2).double(), x), {},
                    ValueError, "in the dtype of 'x'")
    assert_rejected(op.sddmm_grouped, (x, torch.randn(9, 2, 2)), {}, ValueError,
                    "same features, groups and dtype")


@requires_kernels
def test_the_kernels_refuse_strided_compressed_rows(assert_rejected):
    # (the public module read a strided view of the structure's own rows as
    # another array: a wrong product, or reads outside it)
    ptr, col = pattern().structure()[:2]
    value, x = torch.ones(col.numel(), 1), torch.ones(9, 1, 1)
    for strided in ((torch.stack([ptr, ptr], 1)[:, 0], col),
                    (ptr, torch.stack([col, col], 1)[:, 0])):
        assert_rejected(compiled.grouped_kernels().grouped_spmm, (*strided, value, x), {},
                        RuntimeError, "ptr and col must be contiguous")


@requires_kernels
def test_kernels_in_several_threads_match_composites(both):
    # Rows split between threads (at::parallel_for, 64 rows per task at least);
    # the transposed products and the gradients of targets and sources run serially.
    op = pattern(n=600, density=0.02, seed=4, empty_row=False)
    value = torch.randn(op.nnz, 8, dtype=torch.float64, requires_grad=True)
    x = torch.randn(600, 2, 8, dtype=torch.float64, requires_grad=True)
    target = torch.randn(600, 8, dtype=torch.float64, requires_grad=True)
    threads = torch.get_num_threads()
    torch.set_num_threads(4)
    try:
        def run():
            out = op.matmul_grouped(value, x)
            score = op.sddmm_grouped(x, x)
            alpha = op.attention(0.2, None, target, target)
            return (out, score, alpha, *gradients(out, (value, x)),
                    *gradients(alpha, (target, )))
        for kernel, composite in zip(*both(run)):
            assert torch.allclose(kernel, composite, atol=1e-12)
    finally:
        torch.set_num_threads(threads)


def test_build_directory_depends_on_the_kernels_and_the_environment(monkeypatch,
                                                                   tmp_path):
    monkeypatch.setenv('TGSAN_KERNELS_DIR', str(tmp_path))
    first = compiled._build_directory()
    assert first.parent == tmp_path and torch.__version__.replace('+', '_') in first.name
    monkeypatch.setattr(compiled, '_FLAGS', compiled._FLAGS + ['-g'])
    second = compiled._build_directory()
    assert second != first
    # The same PyTorch installed in another environment: its own build rules.
    monkeypatch.setattr(torch, '__file__', str(tmp_path / 'env' / 'torch' / '__init__.py'))
    assert compiled._build_directory() not in (first, second)


# What the stand-in for PyTorch's build below returns: a module with the kernels.
FAKE_KERNELS = types.SimpleNamespace(**dict.fromkeys(compiled._FUNCTIONS))


@pytest.fixture
def fake_build(monkeypatch, tmp_path):
    # grouped_kernels() from scratch into tmp_path, with a stand-in for PyTorch's
    # build that records the state of the build directory it was called in, and,
    # like ninja, links the library where it is missing (b'library <call number>').
    fcntl = pytest.importorskip('fcntl', reason="advisory locks are POSIX only")
    import torch.utils.cpp_extension
    calls = []

    def load(name, sources, build_directory, **kwargs):
        directory = Path(build_directory)
        with open(directory / 'build.flock') as handle:
            try:  # another open file: refused while the build holds its lock
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                held = False
            except BlockingIOError:
                held = True
            except OSError:  # no advisory locks at all
                held = None
        calls.append(dict(held=held, stale_lock=(directory / 'lock').exists()))
        library = directory / f'{name}{torch.utils.cpp_extension.LIB_EXT}'
        if not library.exists():
            library.write_bytes(f'library {len(calls)}'.encode())
        return FAKE_KERNELS

    monkeypatch.setattr(torch.utils.cpp_extension, 'load', load)
    monkeypatch.setattr(compiled, '_module', None)
    monkeypatch.setattr(compiled, '_failed', False)
    monkeypatch.setenv('TGSAN_COMPILED_KERNELS', '1')
    monkeypatch.setenv('TGSAN_KERNELS_DIR', str(tmp_path))
    directory = compiled._build_directory()
    directory.mkdir(mode=0o700, parents=True)
    return directory, calls, fcntl


def test_a_build_killed_midway_does_not_block_later_ones(fake_build, capsys):
    # PyTorch's lock file, left by a process killed while compiling: PyTorch alone
    # would wait for it forever.
    directory, calls, _ = fake_build
    (directory / 'lock').touch()
    assert compiled.grouped_kernels() is FAKE_KERNELS
    assert calls == [dict(held=True, stale_lock=False)]
    assert 'compiling its CPU kernels' in capsys.readouterr().err


def test_a_file_system_without_locks_builds_as_pytorch_alone(fake_build, monkeypatch):
    # e.g. an NFS mount without lockd: PyTorch's lock file is then the only guard,
    # so one found there is left alone.
    directory, calls, fcntl = fake_build

    def no_locks(*args):
        raise OSError(errno.ENOLCK, 'No locks available')

    monkeypatch.setattr(fcntl, 'flock', no_locks)
    (directory / 'lock').touch()
    assert compiled.grouped_kernels() is FAKE_KERNELS
    assert calls == [dict(held=None, stale_lock=True)]


def test_a_build_in_progress_is_waited_for_and_announced(fake_build, capsys):
    directory, calls, fcntl = fake_build
    result = []
    with open(directory / 'build.flock', 'w') as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)  # another process compiling
        (directory / 'lock').touch()
        waiter = threading.Thread(target=lambda: result.append(compiled.grouped_kernels()))
        waiter.start()
        deadline = time.monotonic() + 30
        err = ''
        while 'waiting for another process' not in err and time.monotonic() < deadline:
            time.sleep(0.01)
            err += capsys.readouterr().err
        assert 'waiting for another process compiling its CPU kernels' in err
        assert waiter.is_alive() and not calls
        (directory / 'lock').unlink()  # it finished
        (directory / f'{compiled._NAME}.so').touch()
        compiled._record(directory)
    waiter.join(30)
    assert result == [FAKE_KERNELS] and calls == [dict(held=True, stale_lock=False)]
    assert 'compiling' not in capsys.readouterr().err


def test_checkouts_of_the_same_kernels_share_one_build(monkeypatch, tmp_path):
    # The build compiles a copy of the source in its directory: a second checkout
    # (another path, the same source) finds the same build rules, not a rebuild.
    monkeypatch.setenv('TGSAN_KERNELS_DIR', str(tmp_path))
    directory = compiled._build_directory()
    directory.mkdir(mode=0o700, parents=True)
    copy = compiled._source_copy(directory)
    assert copy.parent == directory and copy.read_bytes() == compiled._SOURCE.read_bytes()
    stamp = copy.stat().st_mtime_ns
    other = tmp_path / 'other' / 'grouped.cpp'
    other.parent.mkdir()
    other.write_bytes(compiled._SOURCE.read_bytes())
    monkeypatch.setattr(compiled, '_SOURCE', other)
    assert compiled._build_directory() == directory
    assert compiled._source_copy(directory) == copy and copy.stat().st_mtime_ns == stamp
    assert sorted(p.name for p in directory.iterdir()) == ['grouped.cpp']


def test_the_source_copy_is_not_written_through_a_link(monkeypatch, tmp_path):
    monkeypatch.setenv('TGSAN_KERNELS_DIR', str(tmp_path))
    directory = compiled._build_directory()
    directory.mkdir(mode=0o700, parents=True)
    victim = tmp_path / 'victim'
    victim.write_text('a file of the user')
    (directory / f'grouped.cpp.{os.getpid()}.tmp').symlink_to(victim)
    copy = compiled._source_copy(directory)
    assert not copy.is_symlink() and copy.read_bytes() == compiled._SOURCE.read_bytes()
    assert victim.read_text() == 'a file of the user'


@pytest.mark.parametrize('value', ['~/real', '~/link', '{tmp}/elsewhere/../real'])
def test_the_kernels_directory_is_expanded_and_resolved(monkeypatch, tmp_path, value):
    (tmp_path / 'real').mkdir()
    (tmp_path / 'link').symlink_to(tmp_path / 'real')
    monkeypatch.setenv('HOME', str(tmp_path))
    monkeypatch.setenv('TGSAN_KERNELS_DIR', value.format(tmp=tmp_path))
    assert compiled._build_directory().parent == tmp_path / 'real'


def test_a_relative_kernels_directory_is_refused(fake_build, monkeypatch, tmp_path):
    # (it named another cache in every working directory)
    _, calls, _ = fake_build
    monkeypatch.setenv('TGSAN_KERNELS_DIR', 'kernels')
    (tmp_path / 'cwd').mkdir()
    monkeypatch.chdir(tmp_path / 'cwd')
    with pytest.warns(RuntimeWarning, match="ValueError: TGSAN_KERNELS_DIR must be an "
                      "absolute path .*, not 'kernels'"):
        assert compiled.grouped_kernels() is None
    assert compiled.status() == 'failed' and not calls
    assert not any((tmp_path / 'cwd').iterdir())


@pytest.mark.parametrize('case', ['root writable by others', 'writable by the group',
                                  "another user's"])
def test_a_directory_others_could_fill_is_refused(fake_build, monkeypatch, case):
    # e.g. TGSAN_KERNELS_DIR in /tmp: another user created the build directory first,
    # with a library of his in it, and the package loaded it.
    directory, calls, _ = fake_build
    refused = directory.parent if case != 'writable by the group' else directory
    if case == "another user's":
        uid = os.getuid() + 1
        monkeypatch.setattr(os, 'getuid', lambda: uid)
    else:
        refused.chmod(0o777 if case.startswith('root') else 0o770)
    (directory / f'{compiled._NAME}.so').write_bytes(b'a library of another user')
    with pytest.warns(RuntimeWarning, match=rf"PermissionError: {re.escape(str(refused))} "
                      "is not a directory of this user") as caught:
        assert compiled.grouped_kernels() is None
    # (deleting the build directory, as it said, did not help where the root was refused)
    message = str(caught[0].message)
    assert f'chmod go-w {refused}' in message and 'delete' not in message.split(')')[-1]
    assert compiled.status() == 'failed' and not calls
    assert [p.name for p in directory.iterdir()] == [f'{compiled._NAME}.so']


def test_the_directories_and_files_it_creates_are_private(fake_build, monkeypatch,
                                                          tmp_path):
    monkeypatch.setenv('TGSAN_KERNELS_DIR', str(tmp_path / 'new'))
    assert compiled.grouped_kernels() is FAKE_KERNELS
    directory = compiled._build_directory()
    for path in (directory.parent, directory, directory / 'build.flock',
                 directory / 'grouped.cpp', compiled._manifest(directory)):
        assert stat.S_IMODE(path.stat().st_mode) & 0o077 == 0, path


def test_a_linked_lock_file_is_not_followed(fake_build, tmp_path):
    # (opened for writing, the file it linked to was emptied)
    directory, calls, _ = fake_build
    victim = tmp_path / 'victim'
    victim.write_text('a file of the user')
    (directory / 'build.flock').symlink_to(victim)
    with pytest.warns(RuntimeWarning, match="could not be built or loaded"):
        assert compiled.grouped_kernels() is None
    assert victim.read_text() == 'a file of the user' and not calls


def test_a_library_without_the_kernels_falls_back(fake_build, monkeypatch):
    # (the first product raised AttributeError)
    import torch.utils.cpp_extension
    build = torch.utils.cpp_extension.load

    def load(*args, **kwargs):
        build(*args, **kwargs)
        return types.ModuleType(compiled._NAME)  # e.g. a library of other functions

    monkeypatch.setattr(torch.utils.cpp_extension, 'load', load)
    op = pattern()
    value, x = torch.randn(op.nnz, 2), torch.randn(9, 1, 2)
    with pytest.warns(RuntimeWarning, match="lacks the kernels grouped_spmm, "
                      "grouped_spmm_t, grouped_sddmm, attention, attention_backward"):
        out = op.matmul_grouped(value, x)
    assert compiled.status() == 'failed'
    expected = torch.stack([op.matmul(x[:, :, g], value[:, g]) for g in range(2)], -1)
    assert torch.allclose(out, expected, atol=1e-6)


@pytest.mark.parametrize('damage', [None, 'truncated', 'no record', 'damaged record'])
def test_a_library_unlike_its_record_is_linked_anew(fake_build, monkeypatch, capsys,
                                                   damage):
    # A library cut short that ninja thinks up to date killed every process that
    # loaded it (SIGBUS); the build records its size and hash, checked before loading.
    directory, calls, _ = fake_build
    assert compiled.grouped_kernels() is FAKE_KERNELS
    library = directory / f'{compiled._NAME}.so'
    record = compiled._manifest(directory)
    assert compiled._recorded(directory) == compiled._fingerprint(library)
    if damage == 'truncated':
        library.write_bytes(library.read_bytes()[:3])
    elif damage == 'no record':  # e.g. a build of an older version of the package
        record.unlink()
    elif damage == 'damaged record':
        record.write_text('{"size": ')
    capsys.readouterr()
    monkeypatch.setattr(compiled, '_module', None)  # a later process
    assert compiled.grouped_kernels() is FAKE_KERNELS
    assert library.read_bytes() == (b'library 1' if damage is None else b'library 2')
    assert compiled._recorded(directory) == compiled._fingerprint(library)
    assert ('compiling' in capsys.readouterr().err) == (damage is not None)


@requires_kernels
def test_the_build_records_its_library():
    directory = compiled._build_directory()
    assert compiled._recorded(directory) == compiled._fingerprint(
        directory / f'{compiled._NAME}.so')


@pytest.mark.parametrize('missing', ['home', 'source'])
def test_an_unknown_directory_warns_once_and_falls_back(monkeypatch, tmp_path,
                                                        missing):
    # e.g. HOME unset and a uid without a passwd entry (a container run with
    # --user): every grouped product raised.
    monkeypatch.setattr(compiled, '_module', None)
    monkeypatch.setattr(compiled, '_failed', False)
    monkeypatch.setenv('TGSAN_COMPILED_KERNELS', '1')
    if missing == 'home':
        def no_home(cls):
            raise RuntimeError("Could not determine home directory.")

        monkeypatch.delenv('TGSAN_KERNELS_DIR', raising=False)
        monkeypatch.setattr(Path, 'home', classmethod(no_home))
        error = "RuntimeError: Could not determine home directory"
    else:
        monkeypatch.setenv('TGSAN_KERNELS_DIR', str(tmp_path))
        monkeypatch.setattr(compiled, '_SOURCE', tmp_path / 'grouped.cpp')
        error = "FileNotFoundError"
    op = pattern()
    value, x = torch.randn(op.nnz, 2), torch.randn(9, 1, 2)
    with pytest.warns(RuntimeWarning, match=f"could not be built or loaded \\({error}"):
        out = op.matmul_grouped(value, x)
    assert compiled.status() == 'failed'
    with warnings.catch_warnings():
        warnings.simplefilter('error')  # warned once only
        assert torch.equal(op.matmul_grouped(value, x), out)


@pytest.mark.parametrize('value, on', [
    ('0', False), (' Off ', False), ('FALSE', False), ('no', False), ('1', True),
    ('yes', True), ('On', True), (' true\n', True), ('', True)])
def test_the_switch_accepts_the_usual_words(monkeypatch, value, on):
    # (only '0' turned the kernels off)
    monkeypatch.setenv('TGSAN_COMPILED_KERNELS', value)
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        assert compiled.enabled() is on


def test_an_unknown_switch_value_warns_once_and_keeps_the_kernels_on(monkeypatch):
    monkeypatch.setattr(compiled, '_ignored_switches', set())
    monkeypatch.setenv('TGSAN_COMPILED_KERNELS', 'disabled')
    with pytest.warns(RuntimeWarning, match="TGSAN_COMPILED_KERNELS='disabled' is "
                      "neither of 0/false/off/no"):
        assert compiled.enabled()
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        assert compiled.enabled() and compiled.status() != 'off'
    # at the user's line also where the package asks (it named compiled.py)
    monkeypatch.setenv('TGSAN_COMPILED_KERNELS', 'maybe')
    with pytest.warns(RuntimeWarning, match="'maybe' is neither") as caught:
        compiled.status()
    assert [w.filename for w in caught] == [__file__]


@requires_kernels
def test_the_kernels_check_the_sizes_they_index_with():
    # Called directly (grouped_kernels() is public), operands of other sizes than
    # the pattern's were read past their ends without an error, and attention
    # without a source dereferenced an empty optional.
    kernels = compiled.grouped_kernels()
    op = pattern(6, 0.5)
    ptr, col = op.structure()[:2]
    nnz, f64 = op.nnz, dict(dtype=torch.float64)
    x, value = torch.ones(6, 1, 4, **f64), torch.ones(nnz, 4, **f64)
    one_group = value[:, :1].contiguous()
    calls = {
        'value groups': lambda: kernels.grouped_spmm(ptr, col, one_group, x),
        'value rows': lambda: kernels.grouped_spmm(ptr, col, value[:3], x),
        'transposed rows': lambda: kernels.grouped_spmm_t(ptr, col, value, x[:2], 6),
        'sddmm features': lambda: kernels.grouped_sddmm(ptr, col, x,
                                                        torch.ones(6, 2, 4, **f64)),
        'score rows': lambda: kernels.attention(ptr, col, value[:3], None, None, 0.2),
        'no source': lambda: kernels.attention(ptr, col, None, value[:6], None, 0.2),
        'source groups': lambda: kernels.attention(ptr, col, None, value[:6],
                                                   one_group[:6], 0.2),
        'backward grad': lambda: kernels.attention_backward(
            ptr, col, value, None, None, 0.2, value, value[:3]),
    }
    for name, call in calls.items():
        with pytest.raises(ValueError, match="grouped kernels: "):
            call()
    assert kernels.grouped_spmm(ptr, col, value, x).shape == (6, 1, 4)


def test_a_parent_others_could_replace_is_refused(fake_build, monkeypatch, tmp_path):
    # a group-writable parent (not sticky, as /tmp is) let another user swap the
    # kernels' directory after the checks
    directory, calls, _ = fake_build
    shared = tmp_path / 'team'
    shared.mkdir(mode=0o700)
    shared.chmod(0o770)
    monkeypatch.setenv('TGSAN_KERNELS_DIR', str(shared / 'kernels'))
    with pytest.warns(RuntimeWarning, match=rf"{re.escape(str(shared))}, a parent of "
                      ".* others can write to it"):
        assert compiled.grouped_kernels() is None
    assert not calls
    shared.chmod(0o1770)  # sticky: others cannot replace what is the user's
    monkeypatch.setattr(compiled, '_failed', False)
    assert compiled.grouped_kernels() is FAKE_KERNELS


def test_missing_parents_are_created_private(fake_build, monkeypatch, tmp_path):
    monkeypatch.setenv('TGSAN_KERNELS_DIR', str(tmp_path / 'a' / 'b' / 'kernels'))
    old = os.umask(0o002)  # (a group-writable umask made them 775)
    try:
        assert compiled.grouped_kernels() is FAKE_KERNELS
    finally:
        os.umask(old)
    for path in (tmp_path / 'a', tmp_path / 'a' / 'b', tmp_path / 'a' / 'b' / 'kernels'):
        assert stat.S_IMODE(path.stat().st_mode) == 0o700, path


def test_the_library_has_the_name_torch_gives_it(fake_build, monkeypatch):
    # (.pyd on Windows: the record looked for a .so, and every process failed)
    import torch.utils.cpp_extension
    directory, calls, _ = fake_build
    monkeypatch.setattr(torch.utils.cpp_extension, 'LIB_EXT', '.pyd')
    assert compiled.grouped_kernels() is FAKE_KERNELS
    assert compiled._recorded(directory) == compiled._fingerprint(
        directory / f'{compiled._NAME}.pyd')


def test_without_locks_a_library_unlike_its_record_is_not_removed(fake_build, monkeypatch):
    # another process may be linking it: removing it failed both
    directory, calls, fcntl = fake_build
    assert compiled.grouped_kernels() is FAKE_KERNELS
    library = directory / f'{compiled._NAME}.so'
    library.write_bytes(b'being linked')

    def no_locks(*args):
        raise OSError(errno.ENOLCK, 'No locks available')

    monkeypatch.setattr(fcntl, 'flock', no_locks)
    monkeypatch.setattr(compiled, '_module', None)  # a later process
    with pytest.warns(RuntimeWarning, match="does not match the record of its build, and "
                      "without file locks"):
        assert compiled.grouped_kernels() is None
    assert library.read_bytes() == b'being linked' and len(calls) == 1


def test_a_library_linked_anew_by_the_build_is_recorded_anew(fake_build, monkeypatch,
                                                             capsys):
    # (e.g. ninja relinks after new build rules: the old record made the next
    # process remove and link it again, announcing a compilation)
    import torch.utils.cpp_extension
    directory, calls, _ = fake_build
    assert compiled.grouped_kernels() is FAKE_KERNELS
    build = torch.utils.cpp_extension.load

    def relink(name, sources, build_directory, **kwargs):
        (Path(build_directory) / f'{name}.so').write_bytes(b'linked anew')
        return build(name, sources, build_directory, **kwargs)

    monkeypatch.setattr(torch.utils.cpp_extension, 'load', relink)
    monkeypatch.setattr(compiled, '_module', None)
    assert compiled.grouped_kernels() is FAKE_KERNELS
    library = directory / f'{compiled._NAME}.so'
    assert compiled._recorded(directory) == compiled._fingerprint(library)
    monkeypatch.setattr(torch.utils.cpp_extension, 'load', build)
    monkeypatch.setattr(compiled, '_module', None)
    capsys.readouterr()
    assert compiled.grouped_kernels() is FAKE_KERNELS
    assert 'compiling' not in capsys.readouterr().err
    assert library.read_bytes() == b'linked anew'


def test_a_directory_made_meanwhile_by_another_process_is_used(fake_build, monkeypatch,
                                                               tmp_path):
    # two processes (test workers, DDP ranks) making a fresh cache at once: the
    # second's mkdir failed, and it fell back to the composites for good
    root = tmp_path / 'fresh'
    monkeypatch.setenv('TGSAN_KERNELS_DIR', str(root))
    exists = Path.exists

    def made_meanwhile(path):  # seen missing, then made by the other process
        if not exists(path):
            path.mkdir(mode=0o700)
            return False
        return True

    monkeypatch.setattr(Path, 'exists', made_meanwhile)
    directory = compiled._build_directory()
    compiled._private_directory(directory)
    monkeypatch.setattr(Path, 'exists', exists)
    assert directory.is_dir()
