"""Trajectory classification with data-parallel training (torch.distributed).

The networks of the paper's Table 1 (``benchmarks/trajectory.py``: one simplicial
layer on the edge flows with 4 features and an MLP readout over the flattened edge
features) trained with :class:`torch.nn.parallel.DistributedDataParallel` (DDP)
over a dataset of complexes: every item of the dataset is a complete
:class:`~torch_geometric_san.data.SimplicialComplexData`, a
:class:`~torch.utils.data.distributed.DistributedSampler` gives each process its
share of the items (a permutation seeded by ``--seed`` plus the epoch, the same
on every process), PyG's :class:`~torch_geometric.loader.DataLoader` batches each
share into block-diagonal complexes, and DDP averages the gradients of the
processes after every backward pass, so that all processes take the same
optimiser step.

Launch with ``torchrun``: one process per GPU with NCCL where the node has a
CUDA device for each of its processes (device ``cuda:LOCAL_RANK``), processes
on the CPU with gloo otherwise (also with more processes than GPUs). Without
``torchrun`` the script trains in one process (no process group, no DDP
wrapper) on the same data pipeline, which is the single-process
reference: ``P`` processes with ``--batch-size b`` take the same steps as one
process with ``--batch-size P*b`` (see docs/distributed.md for the conditions).

Rank 0 prints the training loss and test accuracy per epoch (both summed over
all processes with ``all_reduce``) and writes ``--save``.

Examples::

    torchrun --nproc_per_node=2 benchmarks/trajectory_ddp.py --epochs 20
    torchrun --nproc_per_node=4 benchmarks/trajectory_ddp.py --model SCNN --act ReLU
    python benchmarks/trajectory_ddp.py --batch-size 64     # one process
"""
import argparse
import datetime
import os
import sys
import time
from pathlib import Path
from typing import Any, Dict, Optional, Sequence, Tuple

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data.distributed import DistributedSampler
from torch_geometric.loader import DataLoader

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(1, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import _common  # noqa: E402
from trajectory import ACTIVATIONS, HIDDEN, MODELS  # noqa: E402

from torch_geometric_san.datasets import (  # noqa: E402
    OceanDriftersDataset,
    SyntheticFlowDataset,
)
from torch_geometric_san.nn.models import SAN  # noqa: E402


def open_dataset(name: str, split: str, args: argparse.Namespace):
    """The :obj:`split` of dataset :obj:`name` (default edge orientation). The ocean
    drifters are read from ``<root>/ocean_drifters/raw/dataBuoys.jld2``, copied
    there from ``--data-root`` (or ``$TGSAN_SHARED_DATA``, or ``../shared/data``)
    where it is missing, else downloaded."""
    root = Path(args.root)
    if name == 'synthetic':
        dataset = SyntheticFlowDataset(
            str(root / 'synthetic_flow'), split=split, num_points=args.num_points,
            num_train=args.num_train or 1000, num_test=args.num_test or 200, log=False)
    else:
        _common.provide_raw_files(root / 'ocean_drifters' / 'raw', ['dataBuoys.jld2'],
                                  _common.shared_data_dir(args.data_root) /
                                  'ocean_drifters')
        dataset = OceanDriftersDataset(str(root / 'ocean_drifters'), split=split,
                                       log=False)
        limit = args.num_train if split == 'train' else args.num_test
        if limit:
            dataset = dataset[:limit]
    return dataset


def build_model(name: str, act: str, num_edges: int, num_classes: int,
                dropout: float, readout: str = 'flatten') -> SAN:
    """Network :obj:`name` of Table 1 (``MODELS`` of ``trajectory.py``) with
    activation :obj:`act` (a key of its ``ACTIVATIONS``) for complexes of
    :obj:`num_edges` edges; it builds the operators of each batch once
    (``batch.operators(1)``, shared by its layers)."""
    spec = MODELS[name]
    return spec.cls(1, HIDDEN, num_layers=1, out_channels=num_classes, readout=readout,
                    num_simplices=num_edges if readout == 'flatten' else None,
                    readout_layers=2, act=ACTIVATIONS[act], dropout=dropout,
                    conv_kwargs=spec.conv, **spec.model)


def choose_backend(backend: Optional[str], processes: int, devices: int) -> str:
    """The process-group backend for :obj:`processes` processes on a node with
    :obj:`devices` CUDA devices: :obj:`backend` if given, else NCCL where every
    process has a device of its own and gloo otherwise. NCCL with fewer devices
    than processes is refused (its processes would share or lack a device).

    Args:
        backend (str, optional): ``'nccl'``, ``'gloo'`` or :obj:`None` (choose).
        processes (int): The processes on this node (``LOCAL_WORLD_SIZE``).
        devices (int): The CUDA devices of this node.
    """
    backend = backend or ('nccl' if devices >= processes else 'gloo')
    if backend == 'nccl' and devices < processes:
        raise RuntimeError(
            f'--backend nccl needs a CUDA device per process: {processes} processes on '
            f'this node, {devices} device(s); start fewer processes (torchrun '
            '--nproc_per_node) or use --backend gloo')
    return backend


def setup(backend: Optional[str], timeout: float) -> Tuple[int, int, torch.device]:
    """Joins the process group started by ``torchrun`` (``RANK`` and
    ``WORLD_SIZE`` in the environment) and picks the device: NCCL and
    ``cuda:LOCAL_RANK`` where every process of the node has a CUDA device of its
    own, gloo and the CPU otherwise.
    Without ``torchrun``: rank 0 of 1, no process group.

    Returns:
        (int, int, torch.device): rank, world size, device.
    """
    if 'RANK' not in os.environ:
        return 0, 1, torch.device('cuda' if torch.cuda.is_available() and
                                  backend != 'gloo' else 'cpu')
    backend = choose_backend(backend, int(os.environ.get('LOCAL_WORLD_SIZE', 1)),
                             torch.cuda.device_count())
    if backend == 'nccl':
        device = torch.device('cuda', int(os.environ['LOCAL_RANK']))
        torch.cuda.set_device(device)
    else:
        device = torch.device('cpu')
    dist.init_process_group(backend, timeout=datetime.timedelta(seconds=timeout),
                            device_id=device if device.type == 'cuda' else None)
    return dist.get_rank(), dist.get_world_size(), device


def all_sum(values: Sequence[float], device: torch.device) -> torch.Tensor:
    """:obj:`values` summed over all processes (unchanged in one process)."""
    out = torch.tensor(values, dtype=torch.float64, device=device)
    if dist.is_initialized():
        dist.all_reduce(out)
    return out.cpu()


def train_epoch(model: torch.nn.Module, loader: DataLoader,
                optimizer: torch.optim.Optimizer,
                device: torch.device) -> Tuple[float, int]:
    """One pass over :obj:`loader`: per batch, the mean cross-entropy of its
    complexes, backward (DDP averages the gradients over the processes here)
    and an optimiser step.

    Returns:
        (float, int): The summed loss and the number of complexes seen by
        this process.
    """
    model.train()
    total, count = 0.0, 0
    for batch in loader:
        batch = batch.to(device)
        optimizer.zero_grad()
        loss = F.cross_entropy(model(batch), batch.y)
        loss.backward()
        optimizer.step()
        total += float(loss.detach()) * batch.num_graphs
        count += batch.num_graphs
    return total, count


@torch.no_grad()
def evaluate(model: torch.nn.Module, loader: DataLoader,
             device: torch.device) -> Tuple[float, int]:
    """Correct predictions and complexes seen by this process."""
    model.eval()
    correct, count = 0.0, 0
    for batch in loader:
        batch = batch.to(device)
        correct += float((model(batch).argmax(-1) == batch.y).sum())
        count += batch.num_graphs
    return correct, count


def parse_args(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--dataset', choices=['synthetic', 'ocean'], default='synthetic')
    parser.add_argument('--model', choices=list(MODELS), default='SAN',
                        help='a network of Table 1 (benchmarks/trajectory.py)')
    parser.add_argument('--act', choices=list(ACTIVATIONS), default='Tanh')
    parser.add_argument('--epochs', type=_common.at_least(1), default=20)
    parser.add_argument('--batch-size', type=_common.at_least(1), default=32,
                        help='complexes per batch and process (the global batch is '
                        'this times the number of processes)')
    parser.add_argument('--optimizer', choices=['adam', 'sgd'], default='adam')
    parser.add_argument('--lr', type=_common.real_in(0, low_open=True), default=0.01)
    parser.add_argument('--weight-decay', type=_common.real_in(0), default=0.003)
    parser.add_argument('--dropout', type=_common.real_in(0, 1, high_open=True),
                        default=0.6)
    parser.add_argument('--readout', choices=['flatten', 'sum', 'mean', 'max'],
                        default='flatten',
                        help='flatten: the edge features of each complex concatenated '
                        '(the SAN authors\' trajectory readout); or a pooling')
    parser.add_argument('--seed', type=_common.at_least(0), default=0,
                        help='model initialisation, dropout and the sampler order')
    parser.add_argument('--num-train', type=_common.at_least(1),
                        help='training trajectories (synthetic: generated; ocean: the '
                        'first ones of the split); default: all')
    parser.add_argument('--num-test', type=_common.at_least(1))
    parser.add_argument('--num-points', type=_common.at_least(3), default=400,
                        help='synthetic flow: points sampled for the complex '
                        '(default 400)')
    parser.add_argument('--eval-batch-size', type=_common.at_least(1), default=256)
    parser.add_argument('--backend', choices=['nccl', 'gloo'],
                        help='default: nccl where every process of the node has a CUDA '
                        'device of its own, else gloo')
    parser.add_argument('--timeout', type=_common.real_in(0, low_open=True),
                        default=600.0,
                        help='seconds a collective may wait for the other processes')
    parser.add_argument('--root', default=str(_common.REPO / 'data'),
                        help='dataset root (processed files; raw files in <root>/*/raw)')
    parser.add_argument('--data-root',
                        help='where the raw ocean drifters file is looked up if missing '
                        'from the root (default: $TGSAN_SHARED_DATA or ../shared/data)')
    parser.add_argument('--save', help='rank 0 saves the final state_dict here')
    return parser.parse_args(argv)


def prepare_data(args: argparse.Namespace, rank: int, world: int) -> Tuple[Any, Any]:
    """The training and test splits. The first process of each node (``LOCAL_RANK``
    0, as the root is on each node's own disk) generates or processes them while
    the others wait at a barrier, which every process reaches once, then read the
    processed files."""
    first_on_node = int(os.environ.get('LOCAL_RANK', rank)) == 0
    if not first_on_node and world > 1:
        dist.barrier()
    splits = tuple(open_dataset(args.dataset, split, args) for split in ('train', 'test'))
    if first_on_node and world > 1:
        dist.barrier()
    return splits


def train(args: argparse.Namespace, rank: int, world: int,
          device: torch.device) -> Dict[str, list]:
    """Trains and evaluates as the process :obj:`rank` of :obj:`world`; returns
    the loss, test accuracy and time of every epoch."""
    log = print if rank == 0 else (lambda *a, **k: None)
    train_set, test_set = prepare_data(args, rank, world)

    _common.set_seed(args.seed)  # the same initial parameters on every process
    net = build_model(args.model, args.act, train_set.complex.num_simplices(1),
                      train_set.num_classes, args.dropout, args.readout).to(device)
    model = net if world == 1 else DistributedDataParallel(
        net, device_ids=[device.index] if device.type == 'cuda' else None)
    if rank > 0:  # each process its own dropout masks (rank 0 keeps the seed's stream)
        torch.manual_seed(args.seed + rank * 1_000_003)
    opt_cls = torch.optim.Adam if args.optimizer == 'adam' else torch.optim.SGD
    optimizer = opt_cls(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)

    sampler = DistributedSampler(train_set, num_replicas=world, rank=rank, shuffle=True,
                                 seed=args.seed)
    loader = DataLoader(train_set, batch_size=args.batch_size, sampler=sampler)
    # Evaluation: each process its own items, without padding.
    test_loader = DataLoader(test_set, batch_size=args.eval_batch_size,
                             sampler=range(rank, len(test_set), world))

    log(f'{args.model} ({args.act}) on {args.dataset}: {world} process(es), '
        f'{device.type}, backend {dist.get_backend() if world > 1 else "none"}, '
        f'{len(train_set)} training / {len(test_set)} test complexes, batch '
        f'{args.batch_size} per process ({args.batch_size * world} global), '
        f'{len(loader)} steps per epoch')
    _common.load_kernels(device)  # not inside the first epoch's time
    history: Dict[str, list] = dict(loss=[], test_acc=[], time=[])
    for epoch in range(args.epochs):
        start = time.perf_counter()
        sampler.set_epoch(epoch)  # a new permutation per epoch, the same on all ranks
        loss, count = all_sum(train_epoch(model, loader, optimizer, device), device)
        elapsed = time.perf_counter() - start
        correct, seen = all_sum(evaluate(net, test_loader, device), device)
        history['loss'].append(float(loss / count))
        history['test_acc'].append(float(correct / seen))
        history['time'].append(elapsed)
        log(f'epoch {epoch + 1:3d}: train loss {loss / count:.4f}, test acc '
            f'{correct / seen:.3f}, {elapsed:.2f} s', flush=True)
    if rank == 0 and args.save:
        torch.save(net.state_dict(), args.save)
        log(f'saved {args.save}')
    return history


def main(argv: Optional[Sequence[str]] = None) -> Dict[str, list]:
    args = parse_args(argv)
    rank, world, device = setup(args.backend, args.timeout)
    try:
        # The DDP wrapper is freed when train() returns, before the process
        # group: destroyed last by the wrapper (with the GIL held), a gloo group
        # can deadlock with its worker threads.
        history = train(args, rank, world, device)
        # Every process then destroys its group together with the others: with
        # PyTorch 2.5, rank 0 (still saving the weights) hung now and then in
        # destroy_process_group once the others had destroyed theirs and left.
        dist.barrier()
        return history
    finally:
        if dist.is_initialized():
            dist.destroy_process_group()


if __name__ == '__main__':
    main()
