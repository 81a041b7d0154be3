"""One process of the DistributedDataParallel test of the loader
(tests/loader/test_ddp.py), started by :func:`torch.multiprocessing.spawn`.

A spawned process is a new interpreter: the extension blocker that
``tests/conftest.py`` installs when ``TGSAN_WITHOUT_EXTENSIONS=1`` is installed again
here, before PyG is imported, so that the process runs the code path of its pass.
"""
import os
import runpy
from pathlib import Path

runpy.run_path(str(Path(__file__).resolve().parents[1] / 'conftest.py'))

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
from torch.nn.parallel import DistributedDataParallel  # noqa: E402
from torch.utils.data import DistributedSampler  # noqa: E402

from torch_geometric_san.loader import SimplicialNeighborLoader  # noqa: E402
from torch_geometric_san.nn.models import SAN  # noqa: E402

NUM_NEIGHBORS = [4, 4]
BATCH = 8  # seeds per rank and step
LR = 0.1


def make_model() -> SAN:
    """The model every process and the single-process reference start from."""
    torch.manual_seed(0)
    return SAN(3, 8, num_layers=2, out_channels=1, order=1, dropout=0.0,
               conv_kwargs=dict(J_up=1, J_down=1, J_harmonic=1)).double()


def rank_loader(data, seeds, rank: int, world: int) -> SimplicialNeighborLoader:
    """Rank :obj:`rank`'s loader: its share of the seeds (DistributedSampler), its
    own sampling seed."""
    sampler = DistributedSampler(range(seeds.numel()), num_replicas=world, rank=rank,
                                 shuffle=True, seed=1)
    torch.manual_seed(100 + rank)  # the sampler of neighbours draws from it
    return SimplicialNeighborLoader(data, NUM_NEIGHBORS, order=1, input_simplices=seeds,
                                    batch_size=BATCH, sampler=sampler)


def loss(model, batch) -> torch.Tensor:
    out = model(batch)[:batch.batch_size]
    return (out.view(-1) - batch.y[:batch.batch_size]).pow(2).mean()


def run(rank: int, world: int, path: str, out: str) -> None:
    """Trains one epoch of SGD steps with DDP on this rank's share of the seeds and
    saves the rank's batches' seeds and the final parameters to ``out/<rank>.pt``.
    The ranks meet through a file store in ``out`` (a port picked in advance could
    be taken, before the ranks bind it, by another process of a parallel test run)."""
    os.environ.update(GLOO_SOCKET_IFNAME='lo')
    torch.set_num_threads(1)
    dist.init_process_group('gloo', init_method=f"file://{os.path.join(out, 'store')}",
                            rank=rank, world_size=world)
    try:
        data, seeds = torch.load(path)
        model = DistributedDataParallel(make_model())
        optimizer = torch.optim.SGD(model.parameters(), lr=LR)
        batches = []
        for batch in rank_loader(data, seeds, rank, world):
            optimizer.zero_grad()
            loss(model, batch).backward()  # DDP averages the gradients of the ranks
            optimizer.step()
            batches.append(batch)
        torch.save(dict(batches=batches, state=model.module.state_dict()),
                   os.path.join(out, f'{rank}.pt'))
        # DDP's reducer goes while the group lives on: the group's last reference
        # dropped by the reducer's deallocation, under the GIL, once deadlocked with a
        # gloo thread that needed the GIL to release its last work.
        del model, optimizer
    finally:
        dist.destroy_process_group()
