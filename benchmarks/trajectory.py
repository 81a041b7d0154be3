"""Trajectory classification: Table 1 of the SAN paper.

Every model is a single simplicial layer on the edge flows with 4 output
features, then the activation, dropout and an MLP readout on the features of
all edges concatenated (``SAN(readout='flatten')``: [4 N_1] -> 4 -> 2 logits,
trained with cross-entropy, i.e. softmax), as in the SAN authors' code (a
linear map of the flattened edge features). Pooling the edges (sum, mean) is
not used: it cannot tell the classes apart (chance level on ocean drifters,
measured). Rows of the table:

* ``SAN``: J_u = J_d = 3, harmonic filter with eps = 0.9 and J_h = 5, one head;
* ``SAN (J_h = 0)``: the same with a skip connection instead of the filter;
* ``SAN (orientation-equivariant)``: the SAN layer with signed messages and
  sign-invariant scores (``orientation_equivariant=True``, no bias), the
  activation applied as an odd function (``odd_act=True``: ReLU on each edge's
  features in the orientation in which the largest is positive; Id and Tanh
  unchanged) and the readout of the absolute values
  (``invariant_readout=True``): the logits do not depend on the edge
  orientations, for every activation;
* ``SAT``: one attention mechanism shared by both neighbourhoods, J = 1, no
  harmonic filter (the paper's stand-in for Goh et al.);
* ``SCNN``: Yang et al.'s convolution, J_u = J_d = 3, skip connection;
* ``SNN`` (Ebli et al.) and ``SCN`` (J = 1, no attention): further baselines.

The fixed-weight layers (SCNN, SNN, SCN) get the lower and upper Laplacians
divided by their largest eigenvalues (so that their powers stay bounded); the
attention layers use the Laplacians' sparsity patterns (and, for the
orientation-equivariant one, their signs).

Protocol (the paper's hyper-parameters, and our reading of what it leaves open):

* data: SyntheticFlowDataset (1000 train / 200 test trajectories, dataset seed 0)
  on 400 points (the paper's text) and on 200 points (``synthetic200``: about
  the size of the complex of the SAN authors' released data, 186 vertices, 527
  edges, 340 triangles; here 183, 506, 322), and OceanDriftersDataset (160 /
  40, the published split, seed 1). Each model is trained on the training
  split in the default edge orientation and tested on the test split in the
  default orientation and in a random orientation per trajectory
  (``orientation='random_per_trajectory'``: each test flow flipped by its own
  signs, and its operators with it through ``SimplicialOperators.reoriented``,
  as in the authors' released data and cwn);
* two protocols, read from the same runs (the test accuracy in both
  orientations is evaluated after every epoch and changes nothing in the
  training): **honest**: 20 % of the training split (``--val-fraction``),
  drawn with the run's seed, is the validation set for the learning-rate schedule and early
  stopping, and the test accuracy is that of the epoch with the lowest
  validation loss (the test split is never used for any choice); **the
  paper's protocol**: the best test accuracy over the epochs of the run, as
  the published code of Bodnar et al. reports it (its ocean dataset uses the
  test trajectories as the validation set and ``exp/run_exp.py`` takes the best
  epoch of that curve; the SAN paper's 99.0 ± 0.01 on ocean drifters is five
  such runs, 100, 100, 100, 97.5, 97.5). The paper's numbers are printed
  beside both;
* optimiser: Adam, lr 0.01, weight decay 0.003 (the L2 regularisation);
  "step reduction 0.77, patience 10": ReduceLROnPlateau(factor=0.77,
  patience=10) on the validation loss; early stopping when the validation
  loss has not improved for 100 epochs, at most ``--max-epochs`` (300)
  epochs (both protocols read the epochs of this run);
* batches: the training signals of an epoch in shuffled mini-batches of
  ``--batch-size`` (32), each one forward call on the shared complex (signals
  of shape [B, N_1, 1]; the operators are built once per split and shared by
  the layers). The paper gives no batch size (the authors' released code has
  only a disabled ocean snippet, one trajectory per step). Each signal has
  its own attention coefficients, computed side by side for the whole batch
  on the shared pattern; larger batches share the fixed cost of each step
  (the notes of the "Table 1" section of docs/results.md give the time per
  signal at several batch sizes). The validation split is one forward call per
  epoch;
* dropout 0.6 on the layer's output and in the readout MLP; 5 seeds (0-4)
  per (model, activation); a seed fixes the initialisation, dropout, the
  validation split and the batch order.

Each run trains once and is tested in both orientations after every epoch. The
script prints a markdown table per dataset (mean +- std of the test accuracy
over the seeds, both protocols side by side) and writes it
with a JSON of all runs to ``--output`` (the JSON after every run; ``--resume``
continues from it). A full run also rewrites its block of the "Table 1"
section of ``docs/results.md`` (commands, machine, dates, wall time and where
it went), and checks the accuracy targets of issue 17 on the means. ``--workers N`` trains
the runs in N processes (one per core; each with one torch thread unless
``--threads`` says otherwise), seed by seed, so that a stopped run has every
cell for its first seeds; ``--report-only`` rebuilds the tables from the JSON
of a stopped run. On a busy or small CPU, ``--threads 1`` avoids
oversubscription (two threads in one process were several times slower than
one on the shared 2-core machine). ``--compile`` trains each model compiled by
``torch.compile`` (validation and tests stay eager), with dropout drawing from
PyTorch's generator as in eager mode, so that a seed trains the same model up to
floating-point rounding; the first run of each dataset, model and activation in a
worker pays the compilation. On the CPU it does not pay: the eager step, which runs
the package's compiled kernels, is faster (results page, "torch.compile").

Examples::

    python benchmarks/trajectory.py --quick          # synthetic flow, < 1 min
    python benchmarks/trajectory.py --workers 2      # the full Table 1, 2 cores
    python benchmarks/trajectory.py --workers 2 --compile
    python benchmarks/trajectory.py --datasets ocean --models SAN SAT --seeds 0 1
"""
import argparse
import os
import sys
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(1, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import _common  # noqa: E402
from torch_geometric_san.datasets import (  # noqa: E402
    OceanDriftersDataset,
    SyntheticFlowDataset,
)
from torch_geometric_san.nn.models import SAN, SAT, SCN, SCNN, SNN  # noqa: E402
from torch_geometric_san.sparse import SimplicialOperators  # noqa: E402
from torch_geometric_san.utils import progress_bar  # noqa: E402

SECTION = 'Table 1: trajectory classification'
#: The heading of the checks of target_checks, in the printed report and results.md.
TARGETS_TITLE = ('Accuracy targets (issue 17: the honest protocol, the paper\'s protocol '
                 'against the paper\'s SAN numbers, orientation equivariance), checked on '
                 'the mean test accuracies above')
HIDDEN = 4
HARMONIC = dict(J_harmonic=5, eps=0.9)
TAPS = dict(J_up=3, J_down=3)
MODELS: Dict[str, _common.ModelSpec] = {
    'SAN': _common.ModelSpec(SAN, dict(TAPS, **HARMONIC)),
    'SAN (J_h = 0)': _common.ModelSpec(SAN, dict(TAPS, J_harmonic=0)),
    'SAN (orientation-equivariant)': _common.ModelSpec(
        SAN, dict(TAPS, **HARMONIC, orientation_equivariant=True, bias=False),
        dict(invariant_readout=True, odd_act=True)),
    'SAT': _common.ModelSpec(SAT),
    'SCNN': _common.ModelSpec(SCNN, dict(TAPS)),
    'SNN': _common.ModelSpec(SNN),
    'SCN': _common.ModelSpec(SCN),
}
ACTIVATIONS = {'Id': 'identity', 'ReLU': 'relu', 'Tanh': 'tanh'}
DATASETS = {'synthetic': 'Synthetic flow (400 points)', 'synthetic200': 'Synthetic flow (200 points)',
            'ocean': 'Ocean drifters'}
#: Points sampled for each synthetic flow dataset (400: the paper's text; about
#: 200: the complex of the SAN authors' released data).
SYNTHETIC_POINTS = {'synthetic': 400, 'synthetic200': 200}
#: Test orientations: the default one, and a random one per trajectory (its
#: operators flipped to match, SimplicialOperators.reoriented).
ORIENTATIONS = ('default', 'random')
ORIENTATION_NAMES = {'default': 'default', 'random': 'random per trajectory'}
#: The two protocols reported from the same runs: the test accuracy of the epoch
#: with the lowest validation loss (on a split of the training set), and the best
#: test accuracy over the epochs, as the published code of Bodnar et al. reports
#: it (it evaluates on the test split as its validation set).
PROTOCOLS = {'test_acc': 'honest', 'paper_acc': "paper's protocol (best test epoch)"}
PAPER = {  # Table 1 of the paper: (synthetic, ocean) per activation
    'SCNN': {'Id': (66.5, 98.1), 'ReLU': (100.0, 97.0), 'Tanh': (67.2, 97.0)},
    'SAT': {'Id': (99.7, 97.0), 'ReLU': (100.0, 95.0), 'Tanh': (100.0, 95.0)},
    'SAN (J_h = 0)': {'Id': (100.0, 97.1), 'ReLU': (100.0, 97.0), 'Tanh': (100.0, 97.5)},
    'SAN': {'Id': (100.0, 99.0), 'ReLU': (100.0, 98.5), 'Tanh': (100.0, 98.5)},
}
# One torch thread: the sparse kernels on 4 features gain nothing from a second
# thread, and lose much when the other cores are busy.
QUICK = dict(datasets=['synthetic'], models=['SAN', 'SAT', 'SCNN'], activations=['Tanh'],
             seeds=[0], max_epochs=15, num_train=300, num_test=100, threads=1)


@dataclass
class Split:
    """The signals of a split and the order-1 operators of its complex, one
    value for every model and layer (built once per split), with the
    orientation of each signal relative to them (or None)."""
    x: Tensor
    y: Tensor
    ops: SimplicialOperators
    orientation: Optional[Tensor] = None

    def operators(self, index) -> SimplicialOperators:
        """The operators of the signals :obj:`x[index]`."""
        return self.ops if self.orientation is None else self.ops.reoriented(
            self.orientation[index])


def make_split(dataset, device: torch.device) -> Split:
    orientation = dataset.signal_orientation
    return Split(dataset.x_1.to(device), dataset.y.to(device),
                 dataset.complex.operators(1).to(device),
                 None if orientation is None else orientation.to(device))


def load_dataset(name: str, root: Path, args, device: torch.device) -> Dict[str, Split]:
    """The training split and the test split in both orientations."""
    splits = {}
    for split, orientation in (('train', 'default'), ('test', 'default'),
                               ('test', 'random_per_trajectory')):
        if name in SYNTHETIC_POINTS:
            dataset = SyntheticFlowDataset(
                str(root / 'synthetic_flow'), split=split, orientation=orientation,
                num_points=SYNTHETIC_POINTS[name],
                num_train=args.num_train or 1000, num_test=args.num_test or 200,
                log=False)
        else:
            raw = root / 'ocean_drifters'
            _common.provide_raw_files(raw / 'raw', ['dataBuoys.jld2'],
                                      _common.shared_data_dir(args.data_root) /
                                      'ocean_drifters')
            dataset = OceanDriftersDataset(str(raw), split=split,
                                           orientation=orientation, log=False)
            if split == 'train' and args.num_train:
                dataset = dataset[:args.num_train]
            if split == 'test' and args.num_test:
                dataset = dataset[:args.num_test]
        key = split if split == 'train' else f'test_{orientation.split("_")[0]}'
        splits[key] = make_split(dataset, device)
    return splits


def build_model(name: str, act: str, num_edges: int, num_classes: int,
                readout_layers: int) -> SAN:
    spec = MODELS[name]
    return spec.cls(1, HIDDEN, num_layers=1, out_channels=num_classes,
                    readout='flatten', num_simplices=num_edges,
                    readout_layers=readout_layers, act=ACTIVATIONS[act], dropout=0.6,
                    conv_kwargs=spec.conv, **spec.model)


@torch.no_grad()
def evaluate(model: SAN, split: Split, index: Tensor,
             batch_size: int) -> Tuple[float, float, List[int]]:
    """Mean cross-entropy, accuracy and the indices (into :obj:`index`) of the
    misclassified signals of :obj:`model` on the signals :obj:`index` of
    :obj:`split`."""
    model.eval()
    loss = 0.0
    wrong: List[Tensor] = []
    for start in range(0, index.numel(), batch_size):
        batch = index[start:start + batch_size]
        out = model(split.x[batch], split.operators(batch))
        target = split.y[batch]
        loss += float(F.cross_entropy(out, target, reduction='sum'))
        wrong.append((out.argmax(-1) != target).nonzero().view(-1) + start)
    indices = torch.cat(wrong).tolist()
    return loss / index.numel(), 1.0 - len(indices) / index.numel(), indices


def train_run(name: str, act: str, seed: int, data: Dict[str, Split],
              args, device: torch.device, desc: str, position: int = 0) -> Dict[str, Any]:
    """Trains one model with one activation and seed; returns its record
    (:obj:`position`: the line of its progress bar)."""
    train = data['train']
    _common.set_seed(seed)
    num_classes = int(train.y.max()) + 1
    shape = (name, act, train.x.size(1), num_classes, args.readout_layers)
    model = build_model(*shape).to(device)
    # The training step compiled (a new model of the same architecture reuses the
    # compiled code of the first in this process); validation and tests run eagerly.
    # Dropout draws from PyTorch's generator, as in eager mode (Inductor's own
    # random numbers would make a seed train another model than without --compile).
    if args.compile:
        from torch._inductor import config as inductor_config
        inductor_config.fallback_random = True
    forward = torch.compile(model) if args.compile else model

    perm = torch.randperm(train.x.size(0), generator=torch.Generator().manual_seed(seed))
    num_val = validation_size(train.x.size(0), args.val_fraction)
    val_idx, train_idx = perm[:num_val].to(device), perm[num_val:].to(device)
    tests = {o: data[f'test_{o}'] for o in ORIENTATIONS}
    test_idx = torch.arange(tests['default'].x.size(0), device=device)
    # The test accuracy and misclassified signals of every epoch, per orientation:
    # the honest protocol reads the epoch of the lowest validation loss, the
    # paper's the best epoch.
    curves: Dict[str, List[Tuple[float, List[int]]]] = {o: [] for o in ORIENTATIONS}

    optimizer = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=0.003)
    scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, factor=0.77,
                                                           patience=10)
    stopper = _common.EarlyStopping(args.patience)
    batch_size = args.batch_size or train_idx.numel()
    start, test_time = time.perf_counter(), 0.0
    bar = progress_bar(range(args.max_epochs), desc, enabled=not args.no_progress,
                       leave=False, dynamic_ncols=True, position=position)
    for epoch in bar:
        model.train()
        order = train_idx[torch.randperm(train_idx.numel())]
        for i in range(0, order.numel(), batch_size):
            batch = order[i:i + batch_size]
            optimizer.zero_grad()
            loss = F.cross_entropy(forward(train.x[batch], train.operators(batch)),
                                   train.y[batch])
            loss.backward()
            optimizer.step()
        val_loss, val_acc, _ = evaluate(model, train, val_idx, args.eval_batch_size)
        tic = time.perf_counter()
        for o, split in tests.items():
            curves[o].append(evaluate(model, split, test_idx, args.eval_batch_size)[1:])
        test_time += time.perf_counter() - tic
        scheduler.step(val_loss)
        bar.set_postfix(val_loss=f'{val_loss:.3f}', val_acc=f'{val_acc:.3f}',
                        lr=f'{optimizer.param_groups[0]["lr"]:.1e}')
        if stopper.step(val_loss, epoch, model):
            break
    train_time = time.perf_counter() - start - test_time
    bar.close()
    if stopper.best_epoch < 0:  # (NaN losses never improve on the initial inf)
        raise RuntimeError(f'{desc}: the validation loss was never finite (the run '
                           f'diverged), so the honest protocol has no epoch to report')

    record: Dict[str, Any] = dict(
        model=name, activation=act, seed=seed, epochs=epoch + 1,
        best_epoch=stopper.best_epoch + 1, val_loss=stopper.best)
    for o, curve in curves.items():
        acc, wrong = curve[stopper.best_epoch]
        record[f'test_acc_{o}'] = acc
        record[f'test_wrong_{o}'] = wrong  # misclassified test signals
        best = max(range(len(curve)), key=lambda e: curve[e][0])  # first best
        record[f'paper_acc_{o}'] = curve[best][0]
        record[f'paper_epoch_{o}'] = best + 1
    record.update(train_time=train_time, test_time=test_time)
    return record


def run_one(name: str, model: str, act: str, seed: int) -> Dict[str, Any]:
    """Trains one run in this process (a task of :func:`_common.run_tasks`); its
    record carries the seconds spent loading the dataset (``data_time``, 0 when
    this process had loaded it)."""
    worker = _common.WORKER
    args, device = worker['args'], worker['device']
    data = worker.setdefault('data', {})  # the datasets this process has loaded
    start = time.perf_counter()
    if name not in data:
        data[name] = load_dataset(name, Path(args.root), args, device)
    data_time = time.perf_counter() - start
    desc = f'{name} {model} {act} seed {seed}'
    run = train_run(model, act, seed, data[name], args, device, desc,
                    worker['position'])
    return dict(dataset=name, **run, data_time=data_time)


def run_all(tasks: List[Tuple[str, str, str, int]], args: argparse.Namespace,
            log: _common.RunLog) -> None:
    """Trains :obj:`tasks` (dataset, model, activation, seed), in ``--workers``
    processes, each on its own copy of the data; records every run in
    :obj:`log` as it finishes."""
    def record(run: Dict[str, Any]) -> None:
        log.add_data_time(run['dataset'], run.pop('data_time'))
        log.add(run)
        print(f'{run["dataset"]} {run["model"]} {run["activation"]} seed {run["seed"]}: '
              f'test acc {run["test_acc_default"]:.3f} (default), '
              f'{run["test_acc_random"]:.3f} (random per trajectory); best test epoch '
              f'{run["paper_acc_default"]:.3f}, {run["paper_acc_random"]:.3f}; '
              f'{run["epochs"]} epochs, '
              f'{run["train_time"]:.1f} s', flush=True)

    _common.run_tasks(tasks, run_one, args, record)


def cell_means(runs: List[Dict[str, Any]], protocol: str = 'test_acc'
               ) -> Dict[Tuple[str, str, str, str], float]:
    """Mean test accuracy (%) of :obj:`protocol` (a key of :data:`PROTOCOLS`)
    per (dataset, model, activation, orientation)."""
    groups: Dict[Tuple[str, str, str, str], List[float]] = defaultdict(list)
    for run in runs:
        for o in ORIENTATIONS:
            groups[run['dataset'], run['model'], run['activation'], o].append(
                100 * run[f'{protocol}_{o}'])
    return {key: sum(v) / len(v) for key, v in groups.items()}


def results_table(runs: List[Dict[str, Any]], datasets: Sequence[str]) -> str:
    """One markdown table per dataset: both protocols in both test
    orientations, side by side, and the paper's number."""
    groups: Dict[Tuple[str, str, str], List[Dict]] = defaultdict(list)
    for run in runs:
        groups[run['dataset'], run['model'], run['activation']].append(run)
    num_seeds = len({r['seed'] for r in runs})
    header = ['Model', 'Activation'] + [
        f'{PROTOCOLS[p]}: {ORIENTATION_NAMES[o]}' for p in PROTOCOLS
        for o in ORIENTATIONS] + ['paper']
    tables = []
    for name in datasets:
        rows = []
        for model in MODELS:
            for act in ACTIVATIONS:
                group = groups.get((name, model, act))
                if not group:
                    continue
                # A cell with fewer seeds than the others says how many.
                n = f' (n = {len(group)})' if len(group) < num_seeds else ''
                paper = PAPER.get(model, {}).get(act)
                rows.append([model, act] + [
                    _common.mean_std(r[f'{p}_{o}'] for r in group) + n
                    for p in PROTOCOLS for o in ORIENTATIONS] + [
                    f'{paper[0 if name in SYNTHETIC_POINTS else 1]:.1f}' if paper
                    else '-'])
        if rows:
            tables.append(f'**{DATASETS[name]}**\n\n' + _common.markdown_table(header, rows))
    return '\n\n'.join(tables)


def target_checks(runs: List[Dict[str, Any]]) -> str:
    """The accuracy targets, checked on the measured means: a markdown list,
    each line saying met or NOT met with the numbers."""
    # judged on the means as the table prints them (one decimal), so that a verdict
    # never contradicts the numbers beside it
    honest, paper = ({key: round(value, 1) for key, value in cell_means(runs, p).items()}
                     for p in ('test_acc', 'paper_acc'))
    datasets = [d for d in DATASETS if any(r['dataset'] == d for r in runs)]
    acts = [a for a in ACTIVATIONS if any(r['activation'] == a for r in runs)]
    lines = []

    def verdict(ok: bool) -> str:
        return 'met' if ok else '**NOT met**'

    for name in datasets:  # honest protocol, SAN, default orientation
        goal = 97.5 if name == 'ocean' else 99.5
        got = {a: honest[name, 'SAN', a, 'default'] for a in acts
               if (name, 'SAN', a, 'default') in honest}
        if got:
            best = max(got, key=got.get)
            lines.append(f'- Honest protocol: SAN reaches {goal:.1f} % on '
                         f'{DATASETS[name].lower()} (default orientation) for at least '
                         f'one activation: {verdict(got[best] >= goal - 1e-9)} (best: '
                         f'{best}, {got[best]:.1f} %)')
    for name in datasets:  # the paper's protocol against the paper's SAN numbers
        column = 0 if name in SYNTHETIC_POINTS else 1
        short = []
        for a in acts:
            value = paper.get((name, 'SAN', a, 'default'))
            if value is not None and value < PAPER['SAN'][a][column] - 1e-9:
                short.append(f'{a} {value:.1f} < {PAPER["SAN"][a][column]:.1f}')
        if any((name, 'SAN', a, 'default') in paper for a in acts):
            values = ', '.join(f'{a} {paper[name, "SAN", a, "default"]:.1f}' for a in acts
                               if (name, 'SAN', a, 'default') in paper)
            lines.append(f"- Paper's protocol: SAN reaches the paper's SAN number on "
                         f'{DATASETS[name].lower()} (default orientation) for every '
                         f'activation: {verdict(not short)} ({values}' +
                         (f'; short: {"; ".join(short)}' if short else '') + ')')
    below = []
    for name in datasets:
        for o in ORIENTATIONS:
            for a in acts:
                san = honest.get((name, 'SAN', a, o))
                for other in ('SAT', 'SCNN'):
                    value = honest.get((name, other, a, o))
                    if san is not None and value is not None and san < value - 1e-9:
                        below.append(f'{DATASETS[name].lower()} ({ORIENTATION_NAMES[o]}) '
                                     f'{a}: SAN {san:.1f} < {other} {value:.1f}')
    if any((d, 'SAN', a, 'default') in honest for d in datasets for a in acts):
        lines.append('- Honest protocol: SAN is not below SAT or SCNN in any column: ' + (
            verdict(True) if not below else
            verdict(False) + ' (' + '; '.join(below) + ')'))
    model = 'SAN (orientation-equivariant)'
    gaps = {(d, a): honest[d, model, a, 'default'] - honest[d, model, a, 'random']
            for d in datasets for a in acts if (d, model, a, 'default') in honest}
    if gaps:
        far = {k: g for k, g in gaps.items() if abs(g) > 2.0 + 1e-9}
        worst = max(gaps, key=lambda k: abs(gaps[k]))
        lines.append(f'- Honest protocol: {model} keeps the random orientation per '
                     f'trajectory within 2 points of the default one: {verdict(not far)} '
                     f'(largest gap {abs(gaps[worst]):.1f} points: '
                     f'{DATASETS[worst[0]].lower()}, {worst[1]}' + (
                         '; over 2 points: ' + ', '.join(
                             f'{DATASETS[d].lower()} {a} {g:.1f}'
                             for (d, a), g in far.items()) if far else '') + ')')
    always = always_wrong(runs)
    for name, indices in always.items():
        run = next(r for r in runs if r['dataset'] == name and r['test_acc_default'] < 1)
        size = round(len(run['test_wrong_default']) / (1 - run['test_acc_default']))
        lines.append(f'- Test signals of {DATASETS[name].lower()} misclassified by every '
                     f'run of every model at its best validation epoch (default '
                     f'orientation): {indices} of {size}')
    return '\n'.join(lines)


def always_wrong(runs: List[Dict[str, Any]]) -> Dict[str, List[int]]:
    """Per dataset, the test signals (indices in the test split) that every
    run misclassified in the default orientation (none for a dataset whose
    runs do not record them)."""
    out: Dict[str, List[int]] = {}
    for name in DATASETS:
        sets = [set(r['test_wrong_default']) for r in runs
                if r['dataset'] == name and 'test_wrong_default' in r]
        common = sorted(set.intersection(*sets)) if sets else []
        if common:
            out[name] = common
    return out


def timing_table(runs: List[Dict[str, Any]], data_time: Dict[str, float]) -> str:
    """Run time per dataset and model: training (with the validation of every
    epoch), time per epoch, epochs, testing, and the share of all run time."""
    totals: Dict[Tuple[str, str], List[Dict]] = defaultdict(list)
    for run in runs:
        totals[run['dataset'], run['model']].append(run)
    total = sum(r['train_time'] + r['test_time'] for r in runs) + sum(data_time.values())
    rows = []
    for name in DATASETS:
        for model in MODELS:
            group = totals.get((name, model))
            if not group:
                continue
            epochs = [r['epochs'] for r in group]
            train = sum(r['train_time'] for r in group)
            test = sum(r['test_time'] for r in group)
            rows.append([DATASETS[name], model, str(len(group)), f'{train:.0f}',
                         f'{train / sum(epochs) * 1000:.0f}',
                         f'{min(epochs)}-{max(epochs)}', f'{test:.1f}',
                         f'{100 * (train + test) / total:.1f}'])
    rows += [[DATASETS[name], 'data (load/generate, operators)', '-', f'{t:.1f}',
              '-', '-', '-', f'{100 * t / total:.1f}'] for name, t in data_time.items()]
    return _common.markdown_table(
        ['Dataset', 'Model', 'Runs', 'Training (s)', 'ms / epoch', 'Epochs',
         'Testing, every epoch (s)', 'Share (%)'], rows)


def remaining(log: _common.RunLog, tasks: List[Tuple[str, str, str, int]]) -> str:
    """The time the missing :obj:`tasks` need at the mean run time measured
    for each (dataset, model) so far, in worker time and in wall time with the
    workers of the last session."""
    seconds: Dict[Tuple[str, str], List[float]] = defaultdict(list)
    for run in log.runs:
        seconds[run['dataset'], run['model']].append(run['train_time'] + run['test_time'])
    rest, unknown = 0.0, 0
    for name, model, _, _ in tasks:
        if seconds[name, model]:
            rest += sum(seconds[name, model]) / len(seconds[name, model])
        else:
            unknown += 1
    workers = max(1, log.sessions[-1]['args'].get('workers') or 1) if log.sessions else 1
    done = sum(s['wall_time'] for s in log.sessions)
    text = (f'at the mean time per run measured so far for each dataset and model '
            f'{"the others" if unknown else "they"} need about {rest / 60:.0f} min of run '
            f'time, i.e. about {rest / workers / 60:.0f} min of wall time with {workers} '
            f'worker(s), for a whole run of about {(done + rest / workers) / 60:.0f} min '
            f'on this machine')
    if unknown:
        text += (f', not counting {unknown} runs of datasets/models with no finished run '
                 f'yet')
    return text + '.'


def parse_args(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--quick', action='store_true',
                        help='synthetic flow only (300 train / 100 test trajectories), '
                        'SAN, SAT and SCNN with Tanh, one seed, at most 15 epochs, one '
                        'torch thread unless --threads says otherwise')
    parser.add_argument('--datasets', nargs='+', action=_common.Distinct,
                        choices=list(DATASETS))
    parser.add_argument('--models', nargs='+', action=_common.Distinct,
                        choices=list(MODELS))
    parser.add_argument('--activations', nargs='+', action=_common.Distinct,
                        choices=list(ACTIVATIONS))
    parser.add_argument('--seeds', nargs='+', action=_common.Distinct,
                        type=_common.at_least(0))
    parser.add_argument('--max-epochs', type=_common.at_least(1))
    parser.add_argument('--patience', type=_common.at_least(1), default=100,
                        help='early stopping patience in epochs (default 100)')
    parser.add_argument('--batch-size', type=_common.at_least(0), default=32,
                        help='training mini-batch size; 0: the full split')
    parser.add_argument('--eval-batch-size', type=_common.at_least(1), default=1000)
    parser.add_argument('--val-fraction', type=_common.real_in(0, 1, True, True),
                        default=0.2)
    parser.add_argument('--readout-layers', type=_common.at_least(1), default=2,
                        help='layers of the readout MLP (1: linear)')
    parser.add_argument('--num-train', type=_common.at_least(1),
                        help='training trajectories (synthetic: generated; ocean: the '
                        'first ones of the split); default: all')
    parser.add_argument('--num-test', type=_common.at_least(1))
    parser.add_argument('--device', type=_common.device_name, default='cpu')
    parser.add_argument('--compile', action='store_true',
                        help='train with the model compiled by torch.compile (the '
                        'validation and test passes run eagerly); compiling takes '
                        'seconds per dataset, model and activation in each worker')
    _common.add_workers_argument(parser)
    parser.add_argument('--root', default=str(_common.REPO / 'data'),
                        help='dataset root (processed files; raw files in <root>/*/raw)')
    parser.add_argument('--data-root',
                        help='where the raw ocean drifters file is looked up if missing '
                        'from the root (default: $TGSAN_SHARED_DATA or ../shared/data)')
    _common.add_run_arguments(parser, 'trajectory', 'models/seeds')
    args = _common.finish_args(parser.parse_args(argv), QUICK, dict(
        datasets=list(DATASETS), models=list(MODELS), activations=list(ACTIVATIONS),
        seeds=list(range(5)), max_epochs=300, num_train=None, num_test=None))
    try:
        if args.num_train is not None:
            validation_size(args.num_train, args.val_fraction)
    except ValueError as error:
        parser.error(f"--num-train, --val-fraction: {error}")
    return args


def validation_size(num_train: int, fraction: float) -> int:
    """The validation trajectories drawn from :obj:`num_train` training ones (at
    least one; a run needs at least one left to train on)."""
    num_val = max(1, round(fraction * num_train))
    if num_val >= num_train:
        raise ValueError(f"{num_train} training trajectories with a validation "
                         f"fraction of {fraction} leave none to train on")
    return num_val


def main(argv: Optional[Sequence[str]] = None) -> Dict[str, Any]:
    args = parse_args(argv)
    _common.set_threads(args)
    log = _common.open_run_log(args, 'trajectory', argv,
                                ('datasets', 'models', 'activations', 'seeds'))
    # Seed by seed, so that a stopped run has every cell for its first seeds.
    tasks = [(name, model, act, seed) for seed in args.seeds for name in args.datasets
             for model in args.models for act in args.activations
             if not log.done(dataset=name, model=model, activation=act, seed=seed)]
    if not args.report_only:
        run_all(tasks, args, log)
        tasks = []
    log.save()

    datasets = [name for name in DATASETS if any(r['dataset'] == name for r in log.runs)]
    table = results_table(log.runs, datasets)
    seeds = sorted({r['seed'] for r in log.runs})
    text = (f'Test accuracy (%), mean ± std (population, ddof 0) over the seeds '
            f'({", ".join(map(str, seeds))}; '
            f'n per cell where it has fewer), of two protocols from the same runs: '
            f'"honest", the epoch with the lowest loss on a validation split '
            f'({100 * args.val_fraction:g} % of the training split); "paper\'s protocol", the best test accuracy over the '
            f'epochs, as the published code reports it (it chooses the epoch on the '
            f'test split). "default" / "random per trajectory": orientation of the test '
            f'edges (each test trajectory its own, with its operators flipped to match; '
            f'training always in the default orientation). "paper": Table 1 of the SAN '
            f'paper (for both synthetic flow complexes).\n\n{table}\n')
    if tasks:
        text = (f'**Partial results:** {len(tasks)} of the '
                f'{len(tasks) + len(log.runs)} runs asked for are not done yet (first '
                f'missing: {" ".join(map(str, tasks[0]))}); {remaining(log, tasks)} '
                f'Finish with the last command above and `--resume`.\n\n' + text)
    targets = target_checks(log.runs)
    _common.print_report(args, text, TARGETS_TITLE, targets, 'Table 1')
    busy = sum(r['train_time'] + r['test_time'] for r in log.runs) + sum(
        log.data_time().values())
    block = (f'{log.header()}\n\n{text}\n{TARGETS_TITLE}:\n\n{targets}\n\n'
             f'Where the time went (seconds inside the runs; with '
             f'several worker processes they add up to more than the wall time: '
             f'{busy / 60:.1f} min of run time in {log.wall_time / 60:.1f} min of wall '
             f'time):\n\n{timing_table(log.runs, log.data_time())}\n')
    _common.publish(args, log, SECTION, block, 'runs')
    return dict(sessions=log.sessions, runs=log.runs, table=table)


if __name__ == '__main__':
    main()
