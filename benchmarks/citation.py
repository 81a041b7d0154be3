"""Citation imputation on the co-authorship complex: Table 2 of the SAN paper.

For every simplex order k (0-5), missing rate r (10-50 %) and mask (10 seeded
masks of hidden k-simplices, CitationComplexDataset) two networks of the same
size are trained, transductively, on the one complex:

* ``SAN``: four SANConv layers with 256, 256, 256 and 1 output features,
  J_u = J_d = 2, J_h = 0 (a skip connection), one head, ReLU, Xavier uniform
  initialisation with gain sqrt(2);
* ``SCNN``: the same network with SCNNConv layers (Yang et al., no attention;
  lower and upper Laplacians divided by their largest eigenvalues).

**Batched training.** All rates and masks of one order (50 networks for the
full grid) are trained as one ensemble: ``SANConv(ensemble=E)`` holds E
independent parameter sets, takes the E input signals as [E, N, 1] and runs
each member's weight products as one batched matmul on the one operator
value of the order (``data.operators(k)``, shared by all members, layers and
rates). Each member starts from the weights that the network of its run
draws alone from the run's own seed (``run_seed``: order, rate and mask), so
the runs start from independent draws whatever ensembles they are trained in.
Each member computes what a separate network with its parameters
computes (tested), and its own Adam (``_common.EnsembleAdam``, torch's update
elementwise with one learning rate per member), plateau schedule and early
stopping (``EnsembleEarlyStopping``) make its training that of a separate
network in exact arithmetic; a stopped member is left out of every further choice
(the ensemble runs until all have stopped). In float32 the batched products round
otherwise than a lone network's: SCNN members train to the same records as alone,
but a SAN member does not, since Adam's scale-free first step moves parameters
whose true gradient is about zero (e.g. the last layer's target attention vector,
which cancels in the softmax of each row) by the learning rate in the direction
of their rounding noise, and SAN's training amplifies that (its runs are chaotic,
see the results page): a batched SAN run is another sample of the same training,
not a reproduction of the run alone. ``--ensemble-size`` splits an order into smaller
ensembles; ``--compare-batching EPOCHS`` times an epoch of the ensemble
against as many separate networks in the same process. On a 2-core CPU the
ensemble of 15 was slower than the 15 networks one after the other (its
operands no longer fit the caches; see the results page), so on the CPU the
default is one network at a time. The script is device-agnostic
(``--device cuda``).

Protocol (the paper's hyper-parameters, and our reading of what it leaves open):

* input: the citation counts of the k-simplices, the hidden ones replaced by
  the median of the known ones; target: the true counts (no rescaling);
* validation (not in the paper; ``--val-fraction``, 0.1): a seeded tenth of
  the known simplices of each run is held out: its inputs are replaced by the
  median like the hidden ones and it is left out of the loss. Early stopping
  (patience ``--patience``) and the choice of the evaluated epoch watch the L1
  error on these held-out known values; the hidden (test) values are never
  used for any choice. The evaluation gives every known value as input;
* loss: L1 on the other known simplices; one full-batch step per epoch; Adam
  with learning rate ``--lr`` (the paper: 0.1) after a linear warm-up over
  ``--warmup`` epochs (not in the paper, see below), ReduceLROnPlateau
  (factor 0.77, patience 100) on the training loss, at most ``--max-epochs``;
* ``--input-masking p`` (not in the paper, 0 by default): at every epoch a
  random fraction p of the known inputs is hidden too (set to the median), the
  loss staying on all of them, so that the loss asks the network to impute
  rather than to copy its input; each run draws these masks from a generator
  of its own (``masking_seed``), so they too are the same in any ensemble;
* metrics, both on the same predictions: the paper's (the fraction of *all*
  k-simplices whose prediction lies within +-5 % of the true count; the known
  ones are part of the input) and the honest one (the same fraction over the
  hidden simplices only). Reported as mean +- std over the masks, in %.

**The collapse of SAN at lr 0.1** (``--dead-relus 0 50`` measures it). At
initialisation SAN's output is far above the counts (an L1 loss of about 300
at order 0 against about 16 for SCNN): its attention rows sum to one, so the
filter taps do not shrink the signal the way SCNN's normalised Laplacians do,
and three terms per layer with gain sqrt(2) grow it layer by layer. Adam's
first step moves every parameter by about the learning rate whatever its
gradient (the update is m / sqrt(v), +-1 at step one), here 0.1 on weights of
Xavier size 0.15: all weights move together, the output jumps by orders of
magnitude (a loss of about 750,000 after one step) and the steps that bring it
back push most pre-activations below zero: most units of the first two hidden
layers are dead (0 on every simplex) within ten steps, and most of all three
after fifty (the results page has the fractions); a network whose last hidden
layer is entirely dead returns a constant. A linear warm-up of the learning rate keeps
the first steps small (Adam's second-moment estimate is then formed before
the steps are large; the rationale of Liu et al., "On the variance of the
adaptive learning rate", 2020): the loss rises at most about three-fold
instead of 2,500-fold and falls without the jump. Many units still fall
silent later in training, with or without warm-up, and the networks train;
the warm-up length was chosen on these training-loss measurements only. With
the warm-up, lr 0.001 had the lowest error on the held-out known values of
0.1, 0.01 and 0.001 (orders 0-1, mask 0; the results page), which the
reduced grid of the results page uses.

The trainings run order by order (SAN, then SCNN), so a stopped run has whole
orders; ``--workers N`` trains them in N processes (one per core), each
network exactly as it would be trained alone. ``--resume`` continues a stopped run (an interrupted ensemble is
trained again) and ``--report-only`` writes the tables of what has finished,
labelled partial, with the masks done per cell; of ``--lr``, ``--warmup``,
``--val-fraction`` and ``--input-masking`` it takes those not given from the saved
runs where they all have one value.

The script prints both tables, writes them with a JSON of all runs to
``--output`` and, for a full run, rewrites its block of the "Table 2"
section of ``docs/results.md`` (command, machine, date, wall time and
where it went). A full Table 2 is 6 x 5 x 10 x 2 = 600 trainings; use
``--orders``, ``--rates``, ``--masks``, ``--max-epochs`` and ``--patience``
for a subset, which the results say exactly.

Examples::

    python benchmarks/citation.py --quick
    python benchmarks/citation.py --device cuda          # the full Table 2
    # the reduced grid of the results page (lr chosen on the held-out values):
    python benchmarks/citation.py --masks 3 --max-epochs 300 --patience 50 --lr 0.001 \
        --workers 2 --resume
    python benchmarks/citation.py --lr 0.01 --input-masking 0.3 --resume
"""
import argparse
import math
import os
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

import torch
from torch import Tensor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(1, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import _common  # noqa: E402
from torch_geometric_san.datasets import CitationComplexDataset  # noqa: E402
from torch_geometric_san.nn.models import SAN, SCNN  # noqa: E402
from torch_geometric_san.sparse import SimplicialOperators  # noqa: E402
from torch_geometric_san.utils import progress_bar  # noqa: E402

SECTION = 'Table 2: citation imputation'
TAPS = dict(J_up=2, J_down=2, gain=math.sqrt(2))
MODELS = {
    'SAN': _common.ModelSpec(SAN, dict(TAPS, J_harmonic=0)),
    'SCNN': _common.ModelSpec(SCNN, dict(TAPS)),
}
ORDERS = list(range(6))
RATES = [10, 20, 30, 40, 50]
NUM_SIMPLICES = [352, 1474, 3285, 5019, 5559, 4547]
PAPER = {  # Table 2 of the paper (its metric), per missing rate, orders 0-5
    'SAN': {10: [91, 95, 95, 97, 98, 98], 20: [82, 91, 82, 96, 96, 97],
            30: [75, 89, 82, 94, 95, 96], 40: [67, 85, 82, 91, 93, 95],
            50: [61, 79, 82, 88, 92, 94]},
    'SCNN': {10: [90, 91, 91, 93, 92, 94], 20: [81, 83, 81, 88, 86, 89],
             30: [72, 76, 81, 82, 80, 86], 40: [63, 67, 81, 79, 74, 83],
             50: [55, 60, 81, 71, 68, 79]},
}
PAPER_LR = 0.1  # the paper's learning rate, at which SAN collapses without warm-up
QUICK = dict(orders=[0], rates=[10, 30], masks=2, max_epochs=100, patience=30)
#: The options that tell a training's variant (the fields of its record of the same
#: names, see protocol) and their defaults.
PROTOCOL_DEFAULTS = dict(input_masking=0.0, lr=PAPER_LR, warmup=50, val_fraction=0.1)


def within(pred: Tensor, target: Tensor) -> Tensor:
    """Whether each prediction lies within +-5 % of the true count."""
    return (pred - target).abs() <= 0.05 * target.abs()


def ensemble(name: str, members: int, device: torch.device) -> torch.nn.Module:
    """The network :obj:`name` as an ensemble of :obj:`members` independent
    networks (``SANConv(ensemble=E)`` layers), input :math:`(E, N, 1)`."""
    spec = MODELS[name]
    return spec.cls(1, 256, num_layers=4, out_channels=1, act='relu',
                    conv_kwargs=dict(spec.conv, ensemble=members)).to(device)


def run_seed(order: int, rate: int, mask: int) -> int:
    """The seed of the initial weights of run (:obj:`order`, :obj:`rate`,
    :obj:`mask`)."""
    return 1_000_000 * order + 1_000 * rate + mask


def masking_seed(order: int, rate: int, mask: int) -> int:
    """The seed of the input-masking noise of run (:obj:`order`, :obj:`rate`,
    :obj:`mask`): the run's own, and apart from every :func:`run_seed` (all below
    2 ** 31), so that the noise does not repeat the draws of initial weights."""
    return 2 ** 31 + run_seed(order, rate, mask)


def ensemble_of_runs(name: str, order: int, runs: List[Tuple[int, int]],
                     device: torch.device) -> torch.nn.Module:
    """The ensemble of the runs (rate, mask) of :obj:`order`, member r with the
    initial weights of the network of run r alone, drawn with
    :func:`run_seed`: every run starts from its own draw, whatever ensemble
    it is trained in."""
    model = ensemble(name, len(runs), device)
    with torch.no_grad():
        for member, (rate, mask) in enumerate(runs):
            torch.manual_seed(run_seed(order, rate, mask))
            for param, alone in zip(model.parameters(),
                                    ensemble(name, 1, device).parameters()):
                param[member] = alone[0]
    return model


def masked_mean(values: Tensor, mask: Tensor) -> Tensor:
    """The mean of :obj:`values` over :obj:`mask`, per row, :math:`(E)`."""
    return (values * mask).sum(-1) / mask.sum(-1).clamp(min=1)


def warmup(epoch: int, epochs: int) -> float:
    """The learning-rate multiplier of :obj:`epoch`: linear from
    ``1 / epochs`` to 1 over the first :obj:`epochs` epochs, then 1."""
    return min(1.0, (epoch + 1) / epochs) if epochs > 0 else 1.0


def validation_masks(known: Tensor, fraction: float, seeds: Sequence[int]) -> Tensor:
    """A seeded random :obj:`fraction` of each run's known simplices (at
    least one), held out from the inputs and the loss for early stopping;
    refused where it would hold out all of a run's, leaving none to train on."""
    masks = torch.zeros_like(known)
    for run, seed in enumerate(seeds):
        index = known[run].nonzero().view(-1).cpu()
        count = max(1, round(fraction * index.numel())) if fraction > 0 else 0
        if count >= index.numel():
            raise ValueError(f"--val-fraction {fraction:g} holds out all "
                             f"{index.numel()} known simplices of a run, which leaves "
                             f"none for the loss")
        order = torch.randperm(index.numel(), generator=torch.Generator().manual_seed(seed))
        masks[run, index[order[:count]].to(known.device)] = True
    return masks


def train_batch(name: str, order: int, runs: List[Tuple[int, int]],
                cells: Dict[int, Dict[str, Any]], ops: SimplicialOperators, args,
                device: torch.device, desc: str, position: int = 0
                ) -> List[Dict[str, Any]]:
    """Trains one network per (rate, mask) of :obj:`runs` of :obj:`order`, all
    as one ensemble on the operators :obj:`ops` (progress bar on line
    :obj:`position`); returns their records."""
    E = len(runs)
    x = torch.stack([cells[rate]['inputs'][mask] for rate, mask in runs])  # [E, N, 1]
    known = torch.stack([cells[rate]['known'][mask] for rate, mask in runs])
    hidden = torch.stack([cells[rate]['hidden'][mask] for rate, mask in runs])
    y = cells[runs[0][0]]['y']
    fill = torch.stack([x[r, hidden[r].nonzero()[0]].view(()) for r in range(E)])  # median
    fill = fill.view(E, 1, 1)
    val = validation_masks(known, args.val_fraction,
                           [1000 * mask + rate for rate, mask in runs])
    train = known & ~val
    inputs = torch.where(val.unsqueeze(-1), fill, x)  # held out: hidden from the input too
    generators = [torch.Generator(device).manual_seed(masking_seed(order, rate, mask))
                  for rate, mask in runs]
    model = ensemble_of_runs(name, order, runs, device)
    optimizer = _common.EnsembleAdam(model.parameters())
    plateau = _common.EnsemblePlateau(E, factor=0.77, patience=100, device=device)
    stopper = _common.EnsembleEarlyStopping(model, args.patience)
    start = time.perf_counter()
    bar = progress_bar(range(args.max_epochs), desc, enabled=not args.no_progress,
                       leave=False, dynamic_ncols=True, mininterval=1.0, position=position)
    model.train()
    epochs = args.max_epochs
    val_acc = torch.zeros(E, device=device)
    for epoch in bar:
        optimizer.zero_grad()
        signal = inputs
        if args.input_masking > 0:  # hide some known inputs too, this epoch
            noise = torch.stack([torch.rand(train.size(1), generator=generator,
                                            device=device) for generator in generators])
            drop = train & (noise < args.input_masking)
            signal = torch.where(drop.unsqueeze(-1), fill, inputs)
        out = model(signal, ops).squeeze(-1)  # [E, N]
        error = (out - y).abs()
        train_loss = masked_mean(error, train)
        val_loss = masked_mean(error.detach(), val) if args.val_fraction > 0 \
            else train_loss.detach()
        finite = torch.isfinite(train_loss)
        torch.where(finite, train_loss, 0.0).sum().backward()  # members independent
        stop = stopper.step(torch.where(finite, val_loss, float('nan')), epoch)
        val_acc = torch.where(stopper.best_epoch == epoch,  # at the chosen epoch
                              masked_mean(within(out.detach(), y).float(), val), val_acc)
        if stop:
            epochs = epoch + 1
            break
        optimizer.step(args.lr * plateau.scale * warmup(epoch, args.warmup))
        plateau.step(train_loss.detach())
        if epoch % 10 == 0:
            bar.set_postfix(loss=f'{float(train_loss.detach().mean()):.3f}',
                            running=int((~stopper.stopped).sum()))
    bar.close()
    stopper.finish(epochs)
    train_time = time.perf_counter() - start
    stopper.restore()
    model.eval()
    with torch.no_grad():
        pred = model(x, ops).squeeze(-1)  # every known value given
    ok = within(pred, y)
    records = []
    for r, (rate, mask) in enumerate(runs):
        records.append(dict(
            rate=rate, mask=mask, model=name, input_masking=args.input_masking,
            lr=args.lr, warmup=args.warmup, val_fraction=args.val_fraction,
            epochs=int(stopper.stop_epoch[r]), best_epoch=int(stopper.best_epoch[r]) + 1,
            val_loss=float(stopper.best[r]), val_acc=float(val_acc[r]), members=E,
            batch_epochs=epochs,
            batch_time=train_time, train_time=train_time / E,
            acc_all=float(ok[r].float().mean()),
            acc_hidden=float(ok[r][hidden[r]].float().mean()),
            mae_hidden=float((pred[r] - y)[hidden[r]].abs().mean())))
    return records


def load_cell(order: int, rate: int, args, device: torch.device) -> Dict[str, Any]:
    """The inputs, masks and targets of every mask of one (order, rate) cell."""
    root = Path(args.root) / 'citation_complex'
    _common.provide_raw_files(root / 'raw', list(CitationComplexDataset.urls),
                              _common.shared_data_dir(args.data_root) / 'citation_complex')
    dataset = CitationComplexDataset(str(root), order=order, missing_rate=rate / 100,
                                     num_masks=args.masks, seed=args.mask_seed, log=False)
    known, hidden = (dataset.stacked(key).to(device) for key in ('train_mask', 'test_mask'))
    return dict(complex=dataset.complex, y=dataset.complex.y.view(-1).to(device),
                inputs=dataset.stacked(f'x_{order}').to(device), known=known,
                hidden=hidden)


def protocol(args) -> Dict[str, Any]:
    """The fields that tell this invocation's trainings from other variants."""
    return {key: getattr(args, key) for key in PROTOCOL_DEFAULTS}


def protocol_options(fields: Dict[str, Any]) -> str:
    """The options of the variant of :obj:`fields` (a run's record, or the
    arguments) as typed on the command line."""
    return ' '.join(f'--{key.replace("_", "-")} {fields.get(key)}'
                    for key in PROTOCOL_DEFAULTS)


def set_protocol(args, runs: List[Dict[str, Any]]) -> None:
    """Sets the options of :data:`PROTOCOL_DEFAULTS` left unset (:obj:`None`)
    to the value that all :obj:`runs` recording it share, else to the default:
    a report of runs made with ``--lr 0.001`` reports them without ``--lr``."""
    taken = {}
    for key, default in PROTOCOL_DEFAULTS.items():
        if getattr(args, key) is not None:
            continue
        saved = {run[key] for run in runs if key in run}
        value = next(iter(saved)) if len(saved) == 1 else default
        setattr(args, key, value)
        if value != default:
            taken[key] = value
    if taken:
        print("reporting the saved runs' settings: " + ', '.join(
            f'{key}={value!r}' for key, value in taken.items()), file=sys.stderr)


def batches_of(args, log: _common.RunLog) -> List[Tuple[int, str, List[Tuple[int, int]]]]:
    """The ensembles to train: per order and model, the (rate, mask) runs
    asked for and not yet in :obj:`log`, in groups of at most
    ``--ensemble-size`` (by default all of them on an accelerator, one on the
    CPU, where batching was measured slower), masks first so that a stopped
    run has every rate for its first masks."""
    out = []
    for order in args.orders:
        for name in args.models:
            runs = [(rate, mask) for mask in range(args.masks) for rate in args.rates
                    if not log.done(order=order, rate=rate, mask=mask, model=name,
                                    **protocol(args))]
            size = args.ensemble_size or (1 if args.device == 'cpu' else len(runs)) or 1
            out += [(order, name, runs[i:i + size]) for i in range(0, len(runs), size)]
    return out


def run_batch(order: int, name: str, runs: List[Tuple[int, int]]
              ) -> Tuple[int, str, List[Dict[str, Any]], float]:
    """Trains one ensemble in this process (a task of :func:`_common.run_tasks`);
    returns it with its records and the seconds spent loading the order's cells
    (0 when this process had them). The rates of an order share one complex, so
    the operators are built once per order and process (kept in the worker
    state with the cells of the last order), shared by every network and layer."""
    worker = _common.WORKER
    args, device = worker['args'], worker['device']
    start = time.perf_counter()
    if worker.get('order') != order:
        cells = {rate: load_cell(order, rate, args, device) for rate in args.rates}
        ops = cells[args.rates[0]]['complex'].operators(order).to(device)
        worker.update(order=order, cells=cells, ops=ops)
    data_time = time.perf_counter() - start
    desc = f'order {order} {variant(name, args.input_masking)} x {len(runs)}'
    records = train_batch(name, order, runs, worker['cells'], worker['ops'], args, device,
                          desc, worker['position'])
    return order, desc, records, data_time


def run_batches(batches: List[Tuple[int, str, List[Tuple[int, int]]]], args,
                log: _common.RunLog) -> None:
    """Trains :obj:`batches` in ``--workers`` processes; records every
    network in :obj:`log` as its ensemble finishes."""
    def record(result: Tuple[int, str, List[Dict[str, Any]], float]) -> None:
        order, desc, records, data_time = result
        log.add_data_time(f'order {order}', data_time)
        for record in records:
            log.add(dict(order=order, **record))
        done = records[0]
        print(f'{desc}: {done["batch_epochs"]} epochs, {done["batch_time"]:.0f} s; '
              + '; '.join(f'{r["rate"]}% m{r["mask"]} {100 * r["acc_all"]:.1f}/'
                          f'{100 * r["acc_hidden"]:.1f} %' for r in records), flush=True)

    _common.run_tasks(batches, run_batch, args, record)


def time_batching(order: int, name: str, members: int, epochs: int, args,
                  device: torch.device) -> Tuple[float, float]:
    """Median milliseconds of one training epoch (forward, L1 loss, backward,
    Adam step) of an ensemble of :obj:`members` networks and of as many
    separate networks one after the other, alternated epoch by epoch."""
    cell = load_cell(order, args.rates[0], args, device)
    ops = cell['complex'].operators(order).to(device)
    x = cell['inputs'][:1].expand(members, -1, -1).contiguous()
    y = cell['y']
    _common.set_seed(0)
    batched = ensemble(name, members, device)
    spec = MODELS[name]
    separate = [spec.cls(1, 256, num_layers=4, out_channels=1, act='relu',
                         conv_kwargs=spec.conv).to(device) for _ in range(members)]
    adam = _common.EnsembleAdam(batched.parameters())
    adams = [torch.optim.Adam(m.parameters(), lr=1e-4) for m in separate]
    lr = torch.full((members, ), 1e-4, device=device)

    def sync() -> None:
        if device.type == 'cuda':
            torch.cuda.synchronize(device)

    def batched_epoch() -> None:
        adam.zero_grad()
        (batched(x, ops).squeeze(-1) - y).abs().mean(-1).sum().backward()
        adam.step(lr)

    def separate_epoch() -> None:
        for model, optimizer in zip(separate, adams):
            optimizer.zero_grad()
            (model(x[0], ops).view(-1) - y).abs().mean().backward()
            optimizer.step()

    times: Dict[str, List[float]] = defaultdict(list)
    for epoch in range(epochs + 1):  # the first of each: warm-up, not timed
        for key, step in (('batched', batched_epoch), ('separate', separate_epoch)):
            sync()
            start = time.perf_counter()
            step()
            sync()
            if epoch:
                times[key].append(1000 * (time.perf_counter() - start))
    return statistics.median(times['batched']), statistics.median(times['separate'])


def dead_units(args, device: torch.device, steps: Sequence[int] = (1, 10, 50)) -> str:
    """The collapse of SAN at the paper's lr 0.1 and its cure: for order 0 at 10 %
    and 20 % missing (mask 0) and each warm-up of ``--dead-relus``, the
    training loss and the fraction of dead hidden units (ReLU output 0 on
    every simplex) of each hidden layer after :obj:`steps` Adam steps of the
    training protocol (the same seed for every warm-up)."""
    cells = {rate: load_cell(0, rate, args, device) for rate in (10, 20)}
    ops = cells[10]['complex'].operators(0).to(device)
    y = cells[10]['y']
    rows = []
    for rate, cell in cells.items():
        x, known = cell['inputs'][:1], cell['known'][:1]
        for warm in args.dead_relus:
            _common.set_seed(0)
            model = ensemble('SAN', 1, device)
            optimizer = _common.EnsembleAdam(model.parameters())
            hidden: List[Tensor] = []
            hooks = [conv.register_forward_hook(lambda m, i, out: hidden.append(out))
                     for conv in model.convs[:-1]]
            row = [f'{rate} %', str(warm)]
            initial = None
            for step in range(max(steps) + 1):
                hidden.clear()
                optimizer.zero_grad()
                loss = masked_mean((model(x, ops).squeeze(-1) - y).abs(), known)
                dead = ', '.join(f'{float((h <= 0).all(dim=1).float().mean()):.2f}'
                                 for h in hidden)
                if step == 0:
                    initial = f'{float(loss.detach()):.0f} ({dead})'
                elif step in steps:
                    row.append(f'{float(loss.detach()):.0f} ({dead})')
                loss.sum().backward()
                optimizer.step(torch.full((1, ), PAPER_LR * warmup(step, warm),
                                          device=device))
            for hook in hooks:
                hook.remove()
            rows.append(row[:2] + [initial] + row[2:])
    return (f'Collapse of SAN at lr {PAPER_LR:g} (order 0, mask 0, seed 0): L1 training loss '
            f'and, in brackets, the fraction of dead units (ReLU output 0 on every '
            f'simplex) of hidden layers 1, 2 and 3, before training and after Adam steps, '
            f'without (0) and with a linear warm-up of the learning rate.\n\n'
            + _common.markdown_table(['Missing', 'Warm-up epochs', 'before'] +
                                     [f'after {s} step{"s" * (s > 1)}' for s in steps], rows))


def batching_table(args, device: torch.device) -> str:
    """The time of an epoch of the batched ensemble against separate networks."""
    members = len(args.rates) * args.masks
    rows = []
    for order in args.orders:
        for name in args.models:
            batched, separate = time_batching(order, name, members, args.compare_batching,
                                              args, device)
            rows.append([str(order), name, str(members), f'{batched:.0f}', f'{separate:.0f}',
                         f'{separate / batched:.2f}'])
            print(f'order {order} {name}: batched {batched:.0f} ms, separate '
                  f'{separate:.0f} ms per epoch', flush=True)
    return (f'One training epoch of {members} networks (the runs of one order: '
            f'{len(args.rates)} rates x {args.masks} masks), median of '
            f'{args.compare_batching} epochs, alternated: one batched ensemble against '
            f'{members} separate networks one after the other, in the same process.\n\n'
            + _common.markdown_table(['Order', 'Model', 'Networks', 'batched ms',
                                      'separate ms', 'separate / batched'], rows))


def coverage(runs: List[Dict[str, Any]], args, missing: int) -> str:
    """What a partial run holds: masks done per (order, rate, model) of this
    invocation's variant, and the time the rest needs at the measured mean
    time per training of each (order, model)."""
    mine = [r for r in runs if all(r.get(k) == v for k, v in protocol(args).items())]
    done: Dict[Tuple[int, int, str], int] = defaultdict(int)
    seconds: Dict[Tuple[int, str], List[float]] = defaultdict(list)
    for r in mine:
        done[r['order'], r['rate'], r['model']] += 1
        seconds[r['order'], r['model']].append(r['train_time'])
    header = ['Order'] + [f'{rate} %' for rate in args.rates]
    rows = [[str(order)] + [', '.join(f'{name} {done[order, rate, name]}/{args.masks}'
                                      for name in args.models) for rate in args.rates]
            for order in args.orders]
    rest, unknown = 0.0, 0
    for order in args.orders:
        for name in args.models:
            todo = sum(max(0, args.masks - done[order, rate, name]) for rate in args.rates)
            if seconds[order, name]:
                rest += todo * sum(seconds[order, name]) / len(seconds[order, name])
            else:
                unknown += todo
    estimate = (f'about {rest / 3600:.1f} h of one core at the mean time per training '
                f'measured so far for each order and model')
    if unknown:
        estimate += f', plus {unknown} trainings of orders/models with no finished run yet'
    return (f'**Partial results:** {missing} of the '
            f'{len(args.orders) * len(args.rates) * args.masks * len(args.models)} '
            f'trainings asked for are not done yet ({estimate}). Masks done per cell:\n\n'
            f'{_common.markdown_table(header, rows)}\n\nFinish with the last command above '
            f'and `--resume` (it skips the trainings in the JSON).\n\n')


def variant(name: str, masking: float, lr: Optional[float] = None) -> str:
    label = name + (f' + input masking {masking:g}' if masking else '')
    return label + (f' (lr {lr:g})' if lr is not None else '')


def results_tables(runs: List[Dict[str, Any]]) -> Tuple[str, str]:
    """The paper's metric (with the paper's numbers) and the honest one."""
    orders = sorted({r['order'] for r in runs})
    rates = sorted({r['rate'] for r in runs})
    several_lrs = len({r['lr'] for r in runs}) > 1
    variants = sorted({(r['model'], r['input_masking'], r['lr']) for r in runs},
                      key=lambda v: (list(MODELS).index(v[0]), v[1], -v[2]))
    cells: Dict[Tuple, List[Dict]] = defaultdict(list)
    for run in runs:
        cells[run['rate'], (run['model'], run['input_masking'], run['lr']),
              run['order']].append(run)
    num_masks = len({r['mask'] for r in runs})

    def cell(group: List[Dict[str, Any]], metric: str) -> str:
        # A cell with fewer masks than the others says how many.
        n = f' (n = {len(group)})' if 0 < len(group) < num_masks else ''
        return _common.mean_std(r[metric] for r in group) + n

    header = ['Missing', 'Model'] + [f'order {k} (N = {NUM_SIMPLICES[k]})' for k in orders]
    paper_rows, honest_rows = [], []
    for rate in rates:
        for name in MODELS:
            for v in variants:
                if v[0] != name or not any(cells[rate, v, k] for k in orders):
                    continue
                label = variant(*v[:2], v[2] if several_lrs else None)
                paper_rows.append([f'{rate} %', label] + [
                    cell(cells[rate, v, k], 'acc_all') for k in orders])
                honest_rows.append([f'{rate} %', label] + [
                    cell(cells[rate, v, k], 'acc_hidden') for k in orders])
            if any(v[0] == name for v in variants):
                paper_rows.append([f'{rate} %', f'{name} (paper)'] + [
                    str(PAPER[name][rate][k]) for k in orders])
    return (_common.markdown_table(header, paper_rows),
            _common.markdown_table(header, honest_rows))


def comparison(runs: List[Dict[str, Any]]) -> str:
    """In how many (order, rate) cells SAN's mean honest metric is above the
    same-size SCNN's (the first variant of each), over the masks both ran, and
    the cells where not."""
    by_mask: Dict[Tuple[str, int, int], Dict[int, float]] = defaultdict(dict)
    for run in runs:
        by_mask[run['model'], run['order'], run['rate']].setdefault(
            run['mask'], run['acc_hidden'])
    shared = {(o, r): by_mask['SAN', o, r].keys() & by_mask['SCNN', o, r].keys()
              for (m, o, r) in list(by_mask) if ('SAN', o, r) in by_mask
              and ('SCNN', o, r) in by_mask}
    cells = sorted(cell for cell, masks in shared.items() if masks)
    if not cells:
        return ''
    mean = {(m, o, r): 100 * statistics.fmean(by_mask[m, o, r][k] for k in shared[o, r])
            for o, r in cells for m in ('SAN', 'SCNN')}
    below = [f'order {o} at {r} % ({mean["SAN", o, r]:.1f} against '
             f'{mean["SCNN", o, r]:.1f} %)' for o, r in cells
             if not mean['SAN', o, r] > mean['SCNN', o, r]]
    return (f'SAN above the same-size SCNN on the honest metric (means over the masks '
            f'both ran) in '
            f'{len(cells) - len(below)} of {len(cells)} cells'
            + (f'; not above in {", ".join(below)}' if below else '') + '.\n')


def timing_table(runs: List[Dict[str, Any]], data_time: Dict[str, float]) -> str:
    """Per order and model: trainings, seconds, ms per epoch of the batched
    ensemble and per network in it, epochs."""
    batches: Dict[Tuple[int, str], Dict[Tuple, Dict]] = defaultdict(dict)
    for run in runs:  # the runs of one ensemble share its batch fields
        key = (run['batch_time'], run['batch_epochs'], run['members'])
        batches[run['order'], variant(run['model'], run['input_masking'])][key] = run
    rows = []
    for (order, name), group in sorted(batches.items()):
        mine = [r for r in runs if r['order'] == order
                and variant(r['model'], r['input_masking']) == name]
        seconds = sum(b['batch_time'] for b in group.values())
        epochs = sum(b['batch_epochs'] for b in group.values())
        members = sum(b['members'] * b['batch_epochs'] for b in group.values())
        stops = [r['epochs'] for r in mine]
        rows.append([str(order), name, str(len(mine)), str(len(group)), f'{seconds:.0f}',
                     f'{1000 * seconds / epochs:.0f}', f'{1000 * seconds / members:.0f}',
                     f'{min(stops)}-{max(stops)}'])
    rows += [[key.split()[-1], 'data (load, operators)', '-', '-', f'{seconds:.0f}', '-',
              '-', '-'] for key, seconds in sorted(data_time.items())]
    return _common.markdown_table(['Order', 'Model', 'Runs', 'Ensembles', 'Training (s)',
                                   'ms / epoch', 'ms / epoch / network', 'Epochs'], rows)


def parse_args(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--quick', action='store_true',
                        help='order 0, 10 and 30 %% missing, two masks, at most 100 '
                        'epochs, patience 30')
    parser.add_argument('--orders', nargs='+', action=_common.Distinct,
                        type=int, choices=ORDERS)
    parser.add_argument('--rates', nargs='+', action=_common.Distinct,
                        type=int, choices=RATES,
                        help='missing rates in %%')
    parser.add_argument('--masks', type=_common.at_least(1),
                        help='masks per cell (default 10)')
    parser.add_argument('--mask-seed', type=_common.at_least(0), default=0)
    parser.add_argument('--models', nargs='+', action=_common.Distinct,
                        choices=list(MODELS), default=list(MODELS))
    parser.add_argument('--max-epochs', type=_common.at_least(1))
    # (the options of the protocol have no argparse default: a report takes them
    # from its runs where not given, see set_protocol)
    parser.add_argument('--lr', type=_common.real_in(0, low_open=True),
                        help="Adam's initial learning rate (default: the paper's 0.1)")
    parser.add_argument('--input-masking', type=_common.real_in(0, 1, high_open=True),
                        help='not in the paper: at every epoch, hide this fraction of the '
                        'known inputs too (median), so that the loss on them teaches '
                        'imputation (default 0: the paper\'s protocol)')
    parser.add_argument('--warmup', type=_common.at_least(0),
                        help='epochs of linear learning-rate warm-up (default 50; 0: '
                        'none, the paper); without it SAN collapses at lr 0.1')
    parser.add_argument('--val-fraction', type=_common.real_in(0, 1, high_open=True),
                        help='fraction of the known simplices held out (from the input '
                        'and the loss) for early stopping and the choice of the epoch '
                        '(default 0.1; 0: watch the training loss)')
    parser.add_argument('--patience', type=_common.at_least(1),
                        help='early stopping patience in epochs (default 500)')
    parser.add_argument('--ensemble-size', type=_common.at_least(1),
                        help='most networks trained as one batched ensemble (default: '
                        'all rates and masks of an order on an accelerator, 1 on the CPU)')
    parser.add_argument('--dead-relus', type=_common.at_least(0), nargs='+',
                        metavar='WARMUP',
                        help='also measure the collapse at lr 0.1: dead ReLUs after the '
                        'first Adam steps with these warm-ups (e.g. 0 50)')
    parser.add_argument('--compare-batching', type=_common.at_least(0), default=0,
                        metavar='EPOCHS',
                        help='also time EPOCHS epochs of the batched ensemble against '
                        'as many separate networks, per order and model')
    parser.add_argument('--device', type=_common.device_name, default='cpu')
    _common.add_workers_argument(parser)
    parser.add_argument('--root', default=str(_common.REPO / 'data'),
                        help='dataset root (raw files in <root>/citation_complex/raw)')
    parser.add_argument('--data-root',
                        help='where the raw files are looked up if missing from the root '
                        '(default: $TGSAN_SHARED_DATA or ../shared/data)')
    _common.add_run_arguments(parser, 'citation', 'cells, masks, variants')
    args = _common.finish_args(parser.parse_args(argv), QUICK, dict(
        orders=ORDERS, rates=RATES, masks=10, max_epochs=5000, patience=500))
    if not args.report_only:
        set_protocol(args, [])
    return args


def main(argv: Optional[Sequence[str]] = None) -> Dict[str, Any]:
    args = parse_args(argv)
    _common.set_threads(args)
    device = torch.device(args.device)
    log = _common.open_run_log(args, 'citation', argv, (
        'orders', 'rates', 'masks', 'models', 'ensemble_size', 'dead_relus',
        'compare_batching', *PROTOCOL_DEFAULTS))  # (the runs record their protocol)
    if args.report_only:
        set_protocol(args, log.runs)
    if args.dead_relus and not args.report_only:
        log.session['dead_relus'] = dead_units(args, device)
        print(log.session['dead_relus'], flush=True)
        log.save()
    if args.compare_batching and not args.report_only:
        log.session['batching'] = batching_table(args, device)
        log.save()
    batches = batches_of(args, log)
    if not args.report_only:
        run_batches(batches, args, log)
        batches = []
    log.save()

    runs = [r for r in log.runs if all(r.get(k) == v for k, v in protocol(args).items())]
    if not runs:  # (a report of other settings would write empty tables)
        saved = sorted({protocol_options(r) for r in log.runs})
        raise ValueError(f"{log.path} holds no runs of {protocol_options(vars(args))} "
                         f"(it holds runs of {' and of '.join(saved)}): give the options "
                         f"of its runs")
    paper, honest = results_tables(runs)
    masks = sorted({r['mask'] for r in runs})
    text = (f'Paper\'s metric: prediction within ±5 % of the true count, over all '
            f'k-simplices (%), mean ± std (population, ddof 0) over the masks '
            f'({", ".join(map(str, masks))}; '
            f'n per cell in the JSON):\n\n{paper}\n\n'
            f'Honest metric: the same over the hidden k-simplices only (%):\n\n{honest}\n\n'
            f'{comparison(runs)}')
    missing = sum(len(b[2]) for b in batches)
    if missing:
        text = coverage(runs, args, missing) + text
    print('\n' + text)
    settings = sorted({tuple(s['args'].get(k) for k in (
        'max_epochs', 'patience', 'lr', 'warmup', 'val_fraction', 'input_masking'))
        for s in log.sessions})
    timing = [s['batching'] for s in log.sessions if s.get('batching')]
    collapse = [s['dead_relus'] for s in log.sessions if s.get('dead_relus')]
    block = (f'{log.header()}\n\n(max epochs, early-stopping patience, lr, warm-up epochs, '
             f'validation fraction, input masking): {", ".join(map(str, settings))}\n\n'
             f'{text}\nWhere the time went:\n\n{timing_table(runs, log.data_time())}\n'
             + ''.join(f'\n{part[-1]}\n' for part in (timing, collapse) if part))
    _common.publish(args, log, SECTION, block, 'trainings')
    return dict(sessions=log.sessions, runs=log.runs, tables=(paper, honest))


if __name__ == '__main__':
    main()
