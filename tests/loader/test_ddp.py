"""SimplicialNeighborLoader under DistributedDataParallel: two gloo processes on the
loopback interface, each sampling its own share of the seeds, train exactly as one
process that averages the two ranks' losses step by step."""
import sys
import time
from pathlib import Path

import pytest
import torch
import torch.multiprocessing as mp

sys.path.insert(0, str(Path(__file__).resolve().parent))
import ddp_rank  # noqa: E402

from tests.loader.conftest import delaunay  # noqa: E402

WORLD = 2
TIMEOUT = 300  # seconds for both ranks (they take a few)


def test_ddp_training_equals_one_process(tmp_path):
    data = delaunay(60, seed=4)
    data.y = torch.randn(data.num_simplices(1), dtype=torch.float64,
                         generator=torch.Generator().manual_seed(5))
    seeds = torch.arange(0, data.num_simplices(1), 2)[:WORLD * ddp_rank.BATCH * 3]
    torch.save((data, seeds), tmp_path / 'data.pt')
    spawned = mp.spawn(ddp_rank.run, args=(WORLD, str(tmp_path / 'data.pt'),
                                           str(tmp_path)), nprocs=WORLD, join=False)
    deadline = time.monotonic() + TIMEOUT
    while not spawned.join(timeout=1):  # raises if a rank failed
        if time.monotonic() > deadline:  # a hang fails the test, not the whole run
            for process in spawned.processes:
                process.kill()
            pytest.fail(f"the {WORLD} ranks did not finish within {TIMEOUT} s")
    ranks = [torch.load(tmp_path / f'{rank}.pt', weights_only=False)
             for rank in range(WORLD)]

    # each rank saw its own seeds, together all of them, once
    seen = torch.cat([b.n_id[:b.batch_size] for r in ranks for b in r['batches']])
    assert torch.equal(seen.sort().values, seeds)
    steps = len(ranks[0]['batches'])
    assert steps == 3 and all(len(r['batches']) == steps for r in ranks)

    # one process, the same sampled batches, the mean of the ranks' losses per step
    model = ddp_rank.make_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=ddp_rank.LR)
    for step in range(steps):
        optimizer.zero_grad()
        torch.stack([ddp_rank.loss(model, r['batches'][step])
                     for r in ranks]).mean().backward()
        optimizer.step()
    for rank in ranks:
        for name, value in model.state_dict().items():
            torch.testing.assert_close(rank['state'][name], value, rtol=1e-10,
                                       atol=1e-12, msg=name)
    # and training moved the parameters
    assert not all(torch.equal(value, ddp_rank.make_model().state_dict()[name])
                   for name, value in model.state_dict().items())
