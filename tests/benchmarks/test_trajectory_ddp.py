"""Data-parallel training (benchmarks/trajectory_ddp.py): two gloo processes on the
loopback interface, launched with torchrun, against one process with the global
batch."""
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import List

import pytest
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data.distributed import DistributedSampler
from torch_geometric.data import Batch

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / 'benchmarks' / 'trajectory_ddp.py'
WORKER = Path(__file__).with_name('ddp_worker.py')
sys.path.insert(0, str(SCRIPT.parent))

import _common  # noqa: E402
import trajectory_ddp  # noqa: E402

WORLD = 2
BATCH = 4  # per process; the global batch is WORLD * BATCH
NUM_TRAIN = 32  # a multiple of the global batch: equal per-rank batches, no padding
SEED = 3
LAUNCH_TIMEOUT = 180  # seconds for the whole torchrun call
GROUP_TIMEOUT = 60  # seconds a collective waits for the other process


def script_args(root: Path, model: str = 'SAN', batch_size: int = BATCH) -> List[str]:
    return ['--dataset', 'synthetic', '--model', model, '--act', 'Tanh',
            '--epochs', '1', '--batch-size', str(batch_size), '--optimizer', 'sgd',
            '--lr', '0.1', '--dropout', '0', '--seed', str(SEED),
            '--num-train', str(NUM_TRAIN), '--num-test', '8', '--num-points', '100',
            '--root', str(root)]


@pytest.fixture(scope='module')
def root(tmp_path_factory) -> Path:
    """A dataset root with the small synthetic splits already processed."""
    root = tmp_path_factory.mktemp('ddp')
    args = trajectory_ddp.parse_args(script_args(root))
    for split in ('train', 'test'):
        trajectory_ddp.open_dataset('synthetic', split, args)
    return root


def _descendants(pid: int) -> List[int]:
    """Process ids below :obj:`pid` (Linux /proc)."""
    parents = {}
    for entry in Path('/proc').iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / 'stat').read_text()
            except OSError:
                continue
            parents[int(entry.name)] = int(stat.rsplit(')', 1)[1].split()[1])
    out, frontier = [], [pid]
    while frontier:
        children = [p for p, parent in parents.items() if parent in frontier]
        out += children
        frontier = children
    return out


def torchrun(args: List[str]) -> str:
    """Runs ``torchrun --nproc_per_node=2`` on the script through
    :mod:`ddp_worker` on 127.0.0.1 (rendezvous on a free port, gloo on the
    loopback interface) and returns its output. On a time-out the launcher is
    told to stop its workers (SIGTERM), then whatever is left is killed."""
    cmd = [sys.executable, '-m', 'torch.distributed.run', '--nnodes=1',
           f'--nproc_per_node={WORLD}', '--rdzv-backend=c10d',
           '--rdzv-endpoint=127.0.0.1:0', '--local-addr=127.0.0.1', '--max-restarts=0',
           str(WORKER), str(SCRIPT), *args, '--timeout', str(GROUP_TIMEOUT)]
    env = dict(os.environ, GLOO_SOCKET_IFNAME='lo', OMP_NUM_THREADS='1',
               PYTHONPATH=os.pathsep.join(filter(None, [str(REPO),
                                                        os.environ.get('PYTHONPATH')])))
    proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=LAUNCH_TIMEOUT)
    except subprocess.TimeoutExpired:
        left = _descendants(proc.pid)
        proc.terminate()
        try:
            out, _ = proc.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            out = ''
        for pid in [proc.pid, *left]:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        proc.wait()
        pytest.fail(f'torchrun did not finish in {LAUNCH_TIMEOUT} s:\n{out}')
    assert proc.returncode == 0, f'torchrun failed ({proc.returncode}):\n{out}'
    return out


def make_model(dataset, name: str) -> torch.nn.Module:
    """The script's network :obj:`name` with its initial parameters."""
    _common.set_seed(SEED)
    return trajectory_ddp.build_model(name, 'Tanh', dataset.complex.num_simplices(1),
                                      dataset.num_classes, 0.0)


def single_process_epoch(root: Path, model_name: str, batch_size: int) -> dict:
    """One epoch in this process, without torch.distributed: the items in the
    order of a permutation seeded with seed + epoch (epoch 0), as
    DistributedSampler draws it, in consecutive batches of :obj:`batch_size`."""
    args = trajectory_ddp.parse_args(script_args(root, model_name))
    dataset = trajectory_ddp.open_dataset('synthetic', 'train', args)
    model = make_model(dataset, model_name)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr,
                                weight_decay=args.weight_decay)
    perm = torch.randperm(len(dataset), generator=torch.Generator().manual_seed(SEED))
    batches = [Batch.from_data_list([dataset[int(i)] for i in chunk])
               for chunk in perm.split(batch_size)]
    trajectory_ddp.train_epoch(model, batches, optimizer, torch.device('cpu'))
    return model.state_dict()


def initial_state(root: Path, model_name: str) -> dict:
    args = trajectory_ddp.parse_args(script_args(root, model_name))
    dataset = trajectory_ddp.open_dataset('synthetic', 'train', args)
    return make_model(dataset, model_name).state_dict()


def assert_states_close(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for key in a:
        torch.testing.assert_close(a[key], b[key], atol=1e-6, rtol=1e-5,
                                   msg=lambda m: f'{key}: {m}')


def states_close(a: dict, b: dict) -> bool:
    return all(torch.allclose(a[k], b[k], atol=1e-6, rtol=1e-5) for k in a)


def test_global_batches_are_consecutive_chunks_of_the_permutation():
    # What single_process_epoch relies on: at step s, the ranks' batches together
    # hold items [s * W * b, (s + 1) * W * b) of the permutation.
    n = NUM_TRAIN
    ranks = [list(DistributedSampler(range(n), num_replicas=WORLD, rank=r, shuffle=True,
                                     seed=SEED)) for r in range(WORLD)]
    perm = torch.randperm(n, generator=torch.Generator().manual_seed(SEED)).tolist()
    step = WORLD * BATCH
    for s in range(n // step):
        together = sorted(i for r in ranks for i in r[s * BATCH:(s + 1) * BATCH])
        assert together == sorted(perm[s * step:(s + 1) * step])


def test_backend_is_nccl_only_with_a_cuda_device_per_process():
    assert trajectory_ddp.choose_backend(None, 2, 2) == 'nccl'
    assert trajectory_ddp.choose_backend(None, 2, 1) == 'gloo'  # one GPU, two processes
    assert trajectory_ddp.choose_backend(None, 1, 0) == 'gloo'
    assert trajectory_ddp.choose_backend('gloo', 2, 8) == 'gloo'
    with pytest.raises(RuntimeError, match='a CUDA device per process'):
        trajectory_ddp.choose_backend('nccl', 2, 1)


def test_two_process_epoch_equals_single_process_with_global_batch(root, tmp_path):
    model = 'SAN'
    saved = tmp_path / 'ddp.pt'
    out = torchrun(script_args(root, model) + ['--save', str(saved), '--backend', 'gloo'])
    assert 'backend gloo' in out and f'{WORLD} process(es)' in out, out

    # The workers ran in the extension mode of this test run.
    blocked = os.environ.get('TGSAN_WITHOUT_EXTENSIONS') == '1'
    expected = False if blocked else 'torch_scatter' in sys.modules
    for rank in range(WORLD):
        assert f'[rank {rank}] torch_scatter loaded: {expected}' in out, out

    ddp = torch.load(saved, weights_only=True)
    single = single_process_epoch(root, model, WORLD * BATCH)
    assert_states_close(ddp, single)
    # The comparison can fail: the epoch moved the parameters, and the same
    # epoch with the per-process batch (twice the steps) ends elsewhere.
    assert not states_close(ddp, initial_state(root, model))
    assert not states_close(ddp, single_process_epoch(root, model, BATCH))


@pytest.mark.parametrize('model_name', list(trajectory_ddp.MODELS))
def test_every_model_trains_under_ddp(root, model_name):
    # DistributedDataParallel (world size 1, gloo, in this process) needs every
    # parameter to get a gradient in every step (no find_unused_parameters) and
    # must give the same steps as the plain model.
    args = trajectory_ddp.parse_args(script_args(root, model_name))
    dataset = trajectory_ddp.open_dataset('synthetic', 'train', args)
    batches = [Batch.from_data_list([dataset[i] for i in range(j, j + BATCH)])
               for j in (0, BATCH)]
    states = []
    for wrap in (False, True):
        model = make_model(dataset, model_name)
        assert not list(model.buffers())  # nothing for DDP to broadcast
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        if wrap:
            dist.init_process_group('gloo', store=dist.HashStore(), rank=0,
                                    world_size=1)
            ddp = DistributedDataParallel(model)
            try:
                trajectory_ddp.train_epoch(ddp, batches, optimizer, torch.device('cpu'))
            finally:
                # Free the wrapper before the group: a gloo group destroyed last
                # by the wrapper (GIL held) can deadlock with its worker threads.
                ddp = None
                dist.destroy_process_group()
        else:
            trajectory_ddp.train_epoch(model, batches, optimizer, torch.device('cpu'))
            assert all(p.grad is not None for p in model.parameters())
        states.append(model.state_dict())
    assert_states_close(*states)


@pytest.mark.parametrize('local_rank, rank, first', [
    ('0', 0, True), ('1', 1, False),
    ('0', 2, True),  # the first process of the second node (its own disk)
    (None, 1, False)])  # without torchrun's LOCAL_RANK: the global rank
def test_the_first_process_of_each_node_prepares_the_data(monkeypatch, local_rank, rank,
                                                          first):
    events = []
    monkeypatch.setattr(trajectory_ddp.dist, 'barrier', lambda: events.append('barrier'))
    monkeypatch.setattr(trajectory_ddp, 'open_dataset',
                        lambda name, split, args: events.append(split) or split)
    if local_rank is None:
        monkeypatch.delenv('LOCAL_RANK', raising=False)
    else:
        monkeypatch.setenv('LOCAL_RANK', local_rank)
    splits = trajectory_ddp.prepare_data(trajectory_ddp.parse_args([]), rank, 4)
    assert splits == ('train', 'test')
    assert events == (['train', 'test', 'barrier'] if first else
                      ['barrier', 'train', 'test'])


def test_the_ocean_drifters_file_is_taken_from_the_shared_data(tmp_path, shared_data):
    # The script only downloaded it (offline: an error), where trajectory.py copies
    # it from the shared data.
    args = trajectory_ddp.parse_args(['--dataset', 'ocean', '--root', str(tmp_path),
                                      '--data-root', str(shared_data)])
    test = trajectory_ddp.open_dataset('ocean', 'test', args)
    assert len(test) == 40
    assert sorted(os.listdir(tmp_path / 'ocean_drifters' / 'raw')) == ['dataBuoys.jld2']
