"""Citation imputation on the co-authorship complex: Table 2 of the SAN paper.

For every simplex order k (0-5), missing rate r (10-50 %) and mask (10 seeded
masks of hidden k-simplices, CitationComplexDataset) two networks of the same
size are trained, transductively, on the one complex:

* ``SAN``: four SANConv layers with 256, 256, 256 and 1 output features,
  J_u = J_d = 2, J_h = 0 (a skip connection), one head, ReLU, Xavier uniform
  initialisation with gain sqrt(2);
* ``SCNN``: the same network with SCNNConv layers (Yang et al., no attention;
  lower and upper Laplacians divided by their largest eigenvalues).

Protocol (the paper's hyper-parameters, and our reading of what it leaves open):

* input: the citation counts of the k-simplices, the hidden ones replaced by
  the median of the known ones; target: the true counts (no rescaling);
* loss: L1 on the known simplices only (masked L1); one full-batch step per
  epoch; Adam with initial learning rate ``--lr`` (the paper: 0.1);
  ReduceLROnPlateau(factor=0.77, patience=100) and early stopping with
  patience 500 on that training loss, at most ``--max-epochs`` epochs; the
  model with the lowest training loss is evaluated. The paper does not say
  what its plateau and early stopping watch; there are no labels besides the
  known ones, and the hidden values are never used for any choice;
* ``--input-masking p`` (not in the paper, 0 by default): at every epoch a
  random fraction p of the known inputs is hidden too (set to the median), the
  loss staying on all known simplices. Under the paper's protocol the known
  inputs equal their targets, so the loss can be met by copying the input and
  nothing asks the network to impute; with this, it learns to (still without
  ever seeing a hidden value);
* metrics, both on the same predictions: the paper's (the fraction of *all*
  k-simplices whose prediction lies within +-5 % of the true count; the known
  ones are part of the input) and the honest one (the same fraction over the
  hidden simplices only). Reported as mean +- std over the masks, in %.

The trainings run order by order and, within an order, mask by mask over
the rates, so that a stopped run has every rate of its orders for its first
masks; the operators of each network are built once per order (all rates and
masks share the complex). A full Table 2 is far beyond one session on a
2-core CPU (see the estimate on the results page): ``--resume`` continues a
stopped run and ``--report-only`` writes the tables of what has finished,
labelled partial, with the masks done per cell.

The script prints both tables, writes them with a JSON of all runs to
``--output`` and, for a full run, rewrites its block of the "Table 2"
section of ``docs/results.md`` (command, machine, date, wall time and
where it went). A full Table 2 is 6 x 5 x 10 x 2 = 600 trainings; use
``--orders``, ``--rates``, ``--masks`` and ``--max-epochs`` for a subset, which
the results say exactly.

Examples::

    python benchmarks/citation.py --quick
    python benchmarks/citation.py                        # the full Table 2
    python benchmarks/citation.py --orders 0 1 --masks 3 --max-epochs 2000
    python benchmarks/citation.py --lr 0.01 --input-masking 0.3 --resume
"""
import argparse
import math
import os
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

import torch
import torch.nn.functional as F
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
QUICK = dict(orders=[0], rates=[30], masks=1, max_epochs=150)


def within(pred: Tensor, target: Tensor) -> Tensor:
    """Whether each prediction lies within +-5 % of the true count."""
    return (pred - target).abs() <= 0.05 * target.abs()


def train_run(name: str, x: Tensor, y: Tensor, known: Tensor, hidden: Tensor,
              ops: SimplicialOperators, args, desc: str) -> Dict[str, Any]:
    """Trains one network on one mask; returns its record."""
    spec = MODELS[name]
    model = spec.cls(1, 256, num_layers=4, out_channels=1, act='relu',
                     conv_kwargs=spec.conv).to(x.device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    fill = x[hidden].flatten()[:1]  # the median of the known values
    generator = torch.Generator(x.device).manual_seed(int(torch.initial_seed()))
    scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, factor=0.77,
                                                           patience=100)
    stopper = _common.EarlyStopping(args.patience)
    start = time.perf_counter()
    bar = progress_bar(range(args.max_epochs), desc, enabled=not args.no_progress,
                       leave=False, dynamic_ncols=True, mininterval=1.0)
    model.train()
    for epoch in bar:
        optimizer.zero_grad()
        inputs = x
        if args.input_masking > 0:  # hide some known inputs too, this epoch
            drop = known & (torch.rand(known.shape, generator=generator,
                                       device=x.device) < args.input_masking)
            inputs = torch.where(drop.unsqueeze(-1), fill, x)
        loss = F.l1_loss(model(inputs, ops).view(-1)[known], y[known])
        loss.backward()
        value = loss.item()
        if not math.isfinite(value):
            break
        stop = stopper.step(value, epoch, model)  # the parameters of this loss
        optimizer.step()
        scheduler.step(value)
        if epoch % 10 == 0:
            bar.set_postfix(loss=f'{value:.3f}', best=f'{stopper.best:.3f}',
                            lr=f'{optimizer.param_groups[0]["lr"]:.1e}')
        if stop:
            break
    bar.close()
    train_time = time.perf_counter() - start
    model.load_state_dict(stopper.state)
    model.eval()
    with torch.no_grad():
        pred = model(x, ops).view(-1)
    ok = within(pred, y)
    return dict(model=name, input_masking=args.input_masking, lr=args.lr,
                epochs=epoch + 1, best_epoch=stopper.best_epoch + 1,
                train_loss=stopper.best, train_time=train_time,
                acc_all=float(ok.float().mean()), acc_hidden=float(ok[hidden].float().mean()),
                mae_hidden=float((pred - y)[hidden].abs().mean()))


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


def tasks_of(args, log: _common.RunLog) -> List[Tuple[int, int, int, str]]:
    """The (order, mask, rate, model) trainings asked for and not yet in
    :obj:`log`: order by order, mask by mask, so that a stopped run has every
    rate of its orders for its first masks."""
    return [(order, mask, rate, name) for order in args.orders
            for mask in range(args.masks) for rate in args.rates for name in args.models
            if not log.done(order=order, rate=rate, mask=mask, model=name,
                            input_masking=args.input_masking, lr=args.lr)]


def run_tasks(tasks: List[Tuple[int, int, int, str]], args, device: torch.device,
              log: _common.RunLog) -> None:
    """Trains :obj:`tasks`. The rates of an order share one complex, so the
    operators are built once per order, shared by every network and layer."""
    order_ops: Dict[int, SimplicialOperators] = {}
    cells: Dict[Tuple[int, int], Dict[str, Any]] = {}
    for order, mask, rate, name in tasks:
        if (order, rate) not in cells:
            start = time.perf_counter()
            cells = {key: cell for key, cell in cells.items() if key[0] == order}
            cells[order, rate] = cell = load_cell(order, rate, args, device)
            if order not in order_ops:
                order_ops = {order: cell['complex'].operators(order).to(device)}
            log.add_data_time(f'order {order}', time.perf_counter() - start)
        cell = cells[order, rate]
        _common.set_seed(mask)
        desc = f'order {order} {rate}% mask {mask} {variant(name, args.input_masking)}'
        run = dict(order=order, rate=rate, mask=mask,
                   **train_run(name, cell['inputs'][mask], cell['y'], cell['known'][mask],
                               cell['hidden'][mask], order_ops[order], args, desc))
        log.add(run)
        print(f'{desc}: {100 * run["acc_all"]:.1f} % all, {100 * run["acc_hidden"]:.1f} '
              f'% hidden, {run["epochs"]} epochs, {run["train_time"]:.0f} s', flush=True)


def coverage(runs: List[Dict[str, Any]], args, missing: int) -> str:
    """What a partial run holds: masks done per (order, rate, model) of this
    invocation's variant, and the time the rest needs at the measured mean
    time per training of each (order, model)."""
    mine = [r for r in runs if r['input_masking'] == args.input_masking
            and r['lr'] == args.lr]
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
            todo = sum(args.masks - done[order, rate, name] for rate in args.rates)
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


def timing_table(runs: List[Dict[str, Any]], data_time: Dict[str, float]) -> str:
    groups: Dict[Tuple[int, str], List[Dict]] = defaultdict(list)
    for run in runs:
        groups[run['order'], variant(run['model'], run['input_masking'])].append(run)
    rows = []
    for (order, name), group in sorted(groups.items()):
        epochs = [r['epochs'] for r in group]
        train = sum(r['train_time'] for r in group)
        rows.append([str(order), name, str(len(group)), f'{train:.0f}',
                     f'{1000 * train / sum(epochs):.0f}', f'{min(epochs)}-{max(epochs)}'])
    rows += [[key.split()[-1], 'data (load, operators)', '-', f'{seconds:.0f}', '-', '-']
             for key, seconds in sorted(data_time.items())]
    return _common.markdown_table(['Order', 'Model', 'Runs', 'Training (s)', 'ms / epoch',
                                   'Epochs'], rows)


def parse_args(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--quick', action='store_true',
                        help='order 0, 30 %% missing, one mask, at most 150 epochs')
    parser.add_argument('--orders', nargs='+', type=int, choices=ORDERS)
    parser.add_argument('--rates', nargs='+', type=int, choices=RATES,
                        help='missing rates in %%')
    parser.add_argument('--masks', type=int, help='masks per cell (default 10)')
    parser.add_argument('--mask-seed', type=int, default=0)
    parser.add_argument('--models', nargs='+', choices=list(MODELS), default=list(MODELS))
    parser.add_argument('--max-epochs', type=int)
    parser.add_argument('--lr', type=float, default=0.1,
                        help="Adam's initial learning rate (the paper: 0.1)")
    parser.add_argument('--input-masking', type=float, default=0.0,
                        help='not in the paper: at every epoch, hide this fraction of the '
                        'known inputs too (median), so that the loss on them teaches '
                        'imputation; 0: the paper\'s protocol')
    parser.add_argument('--patience', type=int, default=500,
                        help='early stopping patience in epochs (default 500)')
    parser.add_argument('--device', default='cpu')
    parser.add_argument('--threads', type=int, help='torch CPU threads')
    parser.add_argument('--root', default=str(_common.REPO / 'data'),
                        help='dataset root (raw files in <root>/citation_complex/raw)')
    parser.add_argument('--data-root',
                        help='where the raw files are looked up if missing from the root '
                        '(default: $TGSAN_SHARED_DATA or ../shared/data)')
    _common.add_run_arguments(parser, 'citation', 'cells, masks, variants')
    return _common.finish_args(parser.parse_args(argv), QUICK, dict(
        orders=ORDERS, rates=RATES, masks=10, max_epochs=5000))


def main(argv: Optional[Sequence[str]] = None) -> Dict[str, Any]:
    args = parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    log = _common.open_run_log(args, 'citation', argv)
    tasks = tasks_of(args, log)
    if not args.report_only:
        run_tasks(tasks, args, device, log)
        tasks = []
    log.save()

    paper, honest = results_tables(log.runs)
    masks = sorted({r['mask'] for r in log.runs})
    text = (f'Paper\'s metric: prediction within ±5 % of the true count, over all '
            f'k-simplices (%), mean ± std over the masks ({", ".join(map(str, masks))}; '
            f'n per cell in the JSON):\n\n{paper}\n\n'
            f'Honest metric: the same over the hidden k-simplices only (%):\n\n{honest}\n')
    if tasks:
        text = coverage(log.runs, args, len(tasks)) + text
    print('\n' + text)
    epochs = sorted({(s['args']['max_epochs'], s['args']['patience']) for s in log.sessions})
    block = (f'{log.header()}\n\n(max epochs, early-stopping patience): '
             f'{", ".join(map(str, epochs))}\n\n{text}\nWhere the time went:\n\n'
             f'{timing_table(log.runs, log.data_time())}\n')
    _common.publish(args, log, SECTION, block, 'trainings')
    return dict(sessions=log.sessions, runs=log.runs, tables=(paper, honest))


if __name__ == '__main__':
    main()
