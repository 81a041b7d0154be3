"""Helpers shared by the paper-reproduction benchmarks (``trajectory.py``,
``citation.py``): seeding, early stopping, raw data lookup, mean +- std
formatting, machine description and the results page.

Not part of the package: the scripts import it from their own directory.
"""
import argparse
import copy
import datetime
import json
import multiprocessing
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import (Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple, Type,
                    Union)

import numpy as np
import torch

from torch_geometric_san.nn.models import SAN
from torch_geometric_san.sparse import compiled

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _report  # noqa: E402
from _report import at_least, markdown_table, write_results  # noqa: E402,F401 (the scripts')

#: The scripts' argument types live in _report, which lifting.py imports without torch.
real_in = _report.real_in
int_list = _report.int_list
device_name = _report.device_name

REPO = Path(__file__).resolve().parents[1]

@dataclass(frozen=True)
class ModelSpec:
    """A row of a table: the network class and the arguments of its layers
    and of the network (the fixed-weight layers normalise the Laplacians
    themselves)."""
    cls: Type[SAN]
    conv: Dict[str, Any] = field(default_factory=dict)
    model: Dict[str, Any] = field(default_factory=dict)


def compare(ways: Dict[str, Callable[[], torch.Tensor]], repeats: int) -> Dict[str, float]:
    """Median milliseconds of forward + backward of each way, alternating."""
    times: Dict[str, List[float]] = {name: [] for name in ways}
    for step in range(repeats + 1):
        for name, run in ways.items():
            start = time.perf_counter()
            run().sum().backward()
            if step:  # the first round warms up
                times[name].append(1e3 * (time.perf_counter() - start))
    return {name: statistics.median(t) for name, t in times.items()}


def set_seed(seed: int) -> None:
    """Seeds Python's, NumPy's and PyTorch's random generators."""
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def shared_data_dir(data_root: Optional[str] = None) -> Path:
    """Where the raw files of the real datasets are looked up when a dataset
    root lacks them: :obj:`data_root`, else ``$TGSAN_SHARED_DATA``, else
    ``../shared/data`` next to the repository."""
    if data_root:
        return Path(data_root)
    if os.environ.get('TGSAN_SHARED_DATA'):
        return Path(os.environ['TGSAN_SHARED_DATA'])
    return REPO.parent / 'shared' / 'data'


def provide_raw_files(raw_dir: Path, names: Sequence[str], source: Path) -> None:
    """Copies the raw files :obj:`names` from :obj:`source` into
    :obj:`raw_dir` where they are missing (the datasets then skip their
    download). Files absent from :obj:`source` are left to the dataset's
    download, which explains where to put them when it cannot fetch them. Each
    copy is made under a temporary name and renamed, so that another process
    never reads a file half copied."""
    raw_dir.mkdir(parents=True, exist_ok=True)
    for name in names:
        if not (raw_dir / name).exists() and (source / name).exists():
            tmp = raw_dir / f'.{name}.{os.getpid()}.tmp'
            shutil.copyfile(source / name, tmp)
            os.replace(tmp, raw_dir / name)


class EarlyStopping:
    """Tracks a validation loss: remembers the best value and a copy of the
    model's parameters at that point, and says when :obj:`patience` epochs
    have passed without an improvement (a strictly lower loss).

    Args:
        patience (int): Epochs without improvement before stopping.
    """
    def __init__(self, patience: int):
        self.patience = patience
        self.best = float('inf')
        self.best_epoch = -1
        self.state: Optional[Dict[str, torch.Tensor]] = None
        self._bad = 0

    def step(self, loss: float, epoch: int, model: torch.nn.Module) -> bool:
        """Records the loss of :obj:`epoch`; returns :obj:`True` when
        training should stop."""
        if loss < self.best:
            self.best, self.best_epoch, self._bad = loss, epoch, 0
            self.state = copy.deepcopy(model.state_dict())
        else:
            self._bad += 1
        return self._bad >= self.patience


def _per_member(values: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    # [E] -> [E, 1, ...], to broadcast against a parameter [E, ...].
    return values.view(-1, *[1] * (like.dim() - 1))


class EnsembleAdam:
    """Adam for an ensemble (a network whose parameters all have a leading
    dimension of :math:`E` members, e.g. ``SANConv(ensemble=E)`` layers), with
    one learning rate per member: :class:`torch.optim.Adam`'s update (no weight
    decay, no amsgrad), elementwise, so each member follows exactly the
    trajectory of its own ``torch.optim.Adam`` at its own learning rate.

    Args:
        params (iterable): The parameters, each :math:`(E, ...)`.
        betas (tuple, optional): Adam's coefficients. (default: ``(0.9, 0.999)``)
        eps (float, optional): Adam's epsilon. (default: ``1e-8``)
    """
    def __init__(self, params: Iterable[torch.Tensor], betas=(0.9, 0.999),
                 eps: float = 1e-8):
        self.params = list(params)
        self.betas, self.eps, self.steps = betas, eps, 0
        self.exp_avg = [torch.zeros_like(p) for p in self.params]
        self.exp_avg_sq = [torch.zeros_like(p) for p in self.params]

    def zero_grad(self) -> None:
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self, lr: torch.Tensor) -> None:
        """One step with learning rates :obj:`lr`, :math:`(E)`."""
        self.steps += 1
        beta1, beta2 = self.betas
        correction1 = 1 - beta1 ** self.steps
        correction2 = (1 - beta2 ** self.steps) ** 0.5
        for p, avg, avg_sq in zip(self.params, self.exp_avg, self.exp_avg_sq):
            if p.grad is None:
                continue
            avg.lerp_(p.grad, 1 - beta1)
            avg_sq.mul_(beta2).addcmul_(p.grad, p.grad, value=1 - beta2)
            denom = (avg_sq.sqrt() / correction2).add_(self.eps)
            p.addcdiv_(avg * _per_member(-lr / correction1, p), denom)


class EnsemblePlateau:
    """:class:`torch.optim.lr_scheduler.ReduceLROnPlateau` (mode ``min``,
    relative threshold, no cooldown) for each member of an ensemble: the
    factor by which each member's learning rate has been reduced.

    Args:
        members (int): The number of members :math:`E`.
        factor (float): The reduction factor.
        patience (int): Epochs without improvement before a reduction.
        threshold (float, optional): Relative improvement that counts.
            (default: ``1e-4``)
        device (torch.device, optional): Where the state lives.
    """
    def __init__(self, members: int, factor: float, patience: int,
                 threshold: float = 1e-4, device=None):
        self.factor, self.patience, self.threshold = factor, patience, threshold
        self.scale = torch.ones(members, device=device)
        self.best = torch.full((members, ), float('inf'), device=device)
        self.bad = torch.zeros(members, dtype=torch.long, device=device)

    def step(self, loss: torch.Tensor) -> None:
        """Records each member's loss :math:`(E)`."""
        better = loss < self.best * (1 - self.threshold)
        self.best = torch.where(better, loss, self.best)
        self.bad = torch.where(better, 0, self.bad + 1)
        reduce = self.bad > self.patience
        self.scale = torch.where(reduce, self.scale * self.factor, self.scale)
        self.bad = torch.where(reduce, 0, self.bad)


class EnsembleEarlyStopping:
    """:class:`EarlyStopping` for each member of an ensemble: the best
    validation loss of each member, its epoch and a copy of that member's
    parameters at that point; a member stops when :obj:`patience` epochs have
    passed without a (strictly lower) loss, or when its loss is not finite.

    Args:
        module (torch.nn.Module): The ensemble, parameters :math:`(E, ...)`.
        patience (int): Epochs without improvement before a member stops.
    """
    def __init__(self, module: torch.nn.Module, patience: int):
        params = dict(module.named_parameters())
        members = next(iter(params.values())).size(0)
        device = next(iter(params.values())).device
        self.patience = patience
        self.best = torch.full((members, ), float('inf'), device=device)
        self.best_epoch = torch.full((members, ), -1, dtype=torch.long, device=device)
        self.stopped = torch.zeros(members, dtype=torch.bool, device=device)
        self.stop_epoch = torch.zeros(members, dtype=torch.long, device=device)
        self.state = {k: v.detach().clone() for k, v in params.items()}
        self._params = params

    @torch.no_grad()
    def step(self, loss: torch.Tensor, epoch: int) -> bool:
        """Records each member's loss :math:`(E)` of :obj:`epoch` (with the
        parameters that gave it); returns :obj:`True` when every member has
        stopped."""
        running = ~self.stopped
        improved = running & (loss < self.best)
        self.best = torch.where(improved, loss, self.best)
        self.best_epoch = torch.where(improved, epoch, self.best_epoch)
        for key, param in self._params.items():
            self.state[key] = torch.where(_per_member(improved, param), param,
                                          self.state[key])
        stop = running & (~torch.isfinite(loss) | (epoch - self.best_epoch >= self.patience))
        self.stop_epoch = torch.where(stop, epoch + 1, self.stop_epoch)
        self.stopped = self.stopped | stop
        return bool(self.stopped.all())

    def finish(self, epochs: int) -> None:
        """Marks the members still running as stopped after :obj:`epochs`."""
        self.stop_epoch = torch.where(self.stopped, self.stop_epoch, epochs)
        self.stopped = torch.ones_like(self.stopped)

    @torch.no_grad()
    def restore(self) -> None:
        """Loads each member's best parameters into the ensemble."""
        for key, param in self._params.items():
            param.copy_(self.state[key])


def mean_std(values: Iterable[float], scale: float = 100.0, digits: int = 1) -> str:
    """``"mean +- std"`` of :obj:`values` times :obj:`scale` (population
    standard deviation, 0 for a single value)."""
    values = [scale * v for v in values]
    if not values:
        return '-'
    std = statistics.pstdev(values) if len(values) > 1 else 0.0
    return f'{statistics.fmean(values):.{digits}f} ± {std:.{digits}f}'


def machine(device: str) -> str:
    """The accelerator or CPU model, the number of cores, the versions and, on the
    CPU, whether the package's compiled kernels run (they change the timings and,
    by rounding, the numbers)."""
    if device.startswith('cuda'):
        name, kernels = torch.cuda.get_device_name(torch.device(device)), ''
    else:
        # Enabled kernels that this process has not loaded yet run in its workers.
        state = {'off': 'off', 'failed': 'not built (composites)'}.get(compiled.status(),
                                                                      'on')
        name, kernels = _report.cpu_name(), f', compiled CPU kernels {state}'
    return (f'{name}, {torch.get_num_threads()} torch thread(s) per process, torch '
            f'{torch.__version__}, Python {platform.python_version()}{kernels}')


def add_results_arguments(parser: argparse.ArgumentParser) -> None:
    """``--results`` and ``--no-results`` of the measurement scripts that write one
    block (:func:`emit`)."""
    parser.add_argument('--results', default=str(REPO / 'docs' / 'results.md'),
                        help='results page to update (default: docs/results.md)')
    parser.add_argument('--no-results', action='store_true',
                        help='do not update any results page')


def emit(args: argparse.Namespace, title: str, key: str, text: str) -> None:
    """Prints a run's markdown block :obj:`text` and, unless ``--no-results``, puts
    it into the section ``## <title>`` of the results page (:func:`write_results`)."""
    print(text)
    if not args.no_results:
        write_results(args.results, title, key, text, getattr(args, 'device', 'cpu'))


def add_run_arguments(parser: argparse.ArgumentParser, name: str, resume: str) -> None:
    """The output, results-page and run-log options shared by the experiment scripts;
    :obj:`name` names their files (``<output>/<name>.json``), :obj:`resume` says what
    ``--resume`` can add."""
    parser.add_argument('--output', default=str(REPO / 'benchmarks' / 'out'),
                        help=f'directory of {name}.md and {name}.json')
    parser.add_argument('--results', default=None,
                        help='results page to update (default: docs/results.md for a '
                        'full run, none with --quick)')
    parser.add_argument('--no-results', action='store_true',
                        help='do not update any results page')
    parser.add_argument('--no-progress', action='store_true')
    parser.add_argument('--resume', action='store_true',
                        help=f'keep the runs already in <output>/{name}.json and skip '
                        f'them (resume a stopped run or add {resume})')
    parser.add_argument('--report-only', action='store_true',
                        help='train nothing: rebuild the tables (and the results page) '
                        f'from the runs in <output>/{name}.json, e.g. of a stopped run')


class Distinct(argparse.Action):
    """An option of several values (``nargs='+'``) each given at most once: a value
    that names runs (a seed, a model), given twice, would train them twice and
    count them twice in the means."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: Optional[str] = None) -> None:
        repeated = sorted({str(v) for i, v in enumerate(values) if v in values[:i]})
        if repeated:
            parser.error(f"{option_string}: {', '.join(repeated)} given more than once "
                         f"(its runs would be trained and counted again)")
        setattr(namespace, self.dest, values)


#: The options that say which runs to make, and where and how to run them, but not
#: what a run computes: the invocations of one run log may differ in these (and in
#: the script's own, passed to open_run_log), and in nothing else.
RUN_CHOICES = frozenset({
    'quick', 'output', 'results', 'no_results', 'no_progress', 'resume', 'report_only',
    'workers', 'threads', 'keep_freed_memory', 'device', 'root', 'data_root'})


def finish_args(args: argparse.Namespace, quick: Dict[str, Any],
                full: Dict[str, Any]) -> argparse.Namespace:
    """Fills the options left unset from :obj:`quick` or :obj:`full` (by
    ``--quick``) and the results page: ``docs/results.md`` for a full run."""
    for key, value in (quick if args.quick else full).items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    if args.results is None and not args.quick:
        args.results = str(REPO / 'docs' / 'results.md')
    if args.no_results:
        args.results = None
    return args


def open_run_log(args: argparse.Namespace, name: str, argv: Optional[Sequence[str]],
                 choices: Iterable[str] = ()) -> 'RunLog':
    """The run log ``<output>/<name>.json`` of this invocation (continued with
    ``--resume`` or ``--report-only``; a report adds no session). The settings of
    the saved runs (every option but :data:`RUN_CHOICES` and the script's
    :obj:`choices`, e.g. its seeds and models) must be this invocation's: resumed
    with others, a log's runs would be skipped as done and reported under the
    others. A report takes the saved runs' settings instead (its tables describe
    them), and is refused where there are no saved runs (it would replace the
    results page's block with empty tables)."""
    command = _report.command_line(name, argv)
    if not args.report_only:  # (before the first run, whose end saves the log)
        try:
            Path(args.output).mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise ValueError(f"--output {args.output} is no directory to write the "
                             f"run log in ({error})") from error
    log = RunLog(Path(args.output) / f'{name}.json', args.resume or args.report_only,
                 command, args.device, vars(args), new_session=not args.report_only)
    if args.report_only and not log.runs:
        raise ValueError(f'--report-only: no runs saved in {log.path} (give the '
                         f'--output of a run)')
    free = RUN_CHOICES | set(choices)
    differ = log.other_settings(vars(args), free)
    agreed = all(len(saved) == 1 for saved, _ in differ.values())
    if differ and args.report_only and agreed:
        for key, (saved, _) in differ.items():
            setattr(args, key, saved[0])
        print("reporting the saved runs' settings: " + ', '.join(
            f'{key}={saved[0]!r}' for key, (saved, _) in differ.items()), file=sys.stderr)
    elif differ:
        raise ValueError(
            f"{log.path} holds runs made with other settings (" + '; '.join(
                f"{key}: {' and '.join(map(repr, saved))} there, {value!r} here"
                for key, (saved, value) in differ.items()) + "): give the same "
            "settings to resume or report them, or another --output")
    if args.report_only and getattr(args, 'quick', True) is False and log.sessions and \
            all(s['args'].get('quick') for s in log.sessions):
        # A report of --quick runs is one (its verdicts say so), and goes to the
        # results page only where --results names one.
        args.quick = True
        given = sys.argv[1:] if argv is None else list(argv)
        if not any(a == '--results' or a.startswith('--results=') for a in given):
            args.results = None
        print("reporting --quick runs", file=sys.stderr)
    return log


def publish(args: argparse.Namespace, log: 'RunLog', section: str, block: str,
            unit: str) -> None:
    """Writes :obj:`block` beside the run log (``<name>.md``) and, unless
    ``--no-results``, into :obj:`section` of the results page; :obj:`unit` names
    the log's records in the printed summary."""
    markdown = log.path.with_suffix('.md')
    _report.write_atomically(markdown, block)
    done = (f'Reported {len(log.runs)} {unit}' if args.report_only else
            f'Wall time {log.session["wall_time"]:.0f} s')
    print(f'{done}; wrote {markdown} and {log.path}')
    if args.results:
        write_results(args.results, section, f'{log.path.stem}.py', block, args.device)
        print(f'Updated {args.results}')


def _contents(path: Path) -> Optional[str]:
    # The text of a file, or None where there is none.
    try:
        return path.read_text()
    except FileNotFoundError:
        return None


class RunLog:
    """The runs of a benchmark, saved as JSON after every run so that a long
    benchmark can be stopped and resumed.

    The file holds the invocations (``sessions``: command, machine, date, wall
    time, data-processing times) and one record per training run. With
    :obj:`resume`, the records of an existing file are kept, the runs they
    cover are skipped by the caller (:meth:`done`) and this invocation is added
    as a further session; without it, the file is started anew. One file
    belongs to one invocation at a time: a save that finds the file changed
    since this invocation read or wrote it (another invocation writing the same
    ``--output``, whose runs the save would drop) raises instead.

    Args:
        path (str): The JSON file.
        resume (bool): Keep the runs of an existing file.
        command (str): This invocation's command line.
        device (str): The device, for :func:`machine`.
        args (dict): The parsed arguments, stored with the session.
        new_session (bool): Whether this invocation is recorded as a session
            (:obj:`False` for one that only reports the saved runs).
    """
    def __init__(self, path: str, resume: bool, command: str, device: str,
                 args: Dict[str, Any], new_session: bool = True):
        self.path = Path(path)
        self.sessions: List[Dict[str, Any]] = []
        self.runs: List[Dict[str, Any]] = []
        self._found = _contents(self.path)  # (what a save expects to replace)
        if resume and self._found is not None:
            try:
                saved = json.loads(self._found)
                self.sessions, self.runs = saved['sessions'], saved['runs']
            except (ValueError, KeyError, TypeError) as error:  # JSON or its layout
                raise ValueError(f"{self.path} is not a run log to continue or report "
                                 f"({type(error).__name__}: {error}); move it away or "
                                 f"give another --output") from error
        self.session: Dict[str, Any] = dict(
            command=command, machine=machine(device),
            date=datetime.datetime.now().astimezone().isoformat(timespec='seconds'),
            commit=git_commit(), wall_time=0.0, data_time={}, args=args)
        if new_session:
            self.sessions.append(self.session)
        self._start = time.perf_counter()

    def other_settings(self, args: Dict[str, Any], free: Iterable[str]
                       ) -> Dict[str, Tuple[List[Any], Any]]:
        """The arguments but :obj:`free` in which the saved sessions differ from
        :obj:`args`: ``{name: (the saved values, this value)}`` (a saved session
        without an argument, older than it, differs in nothing there)."""
        here = json.loads(json.dumps(args))  # as saved (tuples as lists)
        saved = [session['args'] for session in self.sessions
                 if session is not self.session]
        out = {}
        for key, value in here.items():
            if key in free:
                continue
            values = []
            for other in (session[key] for session in saved if key in session):
                if other not in values:
                    values.append(other)
            if values and values != [value]:
                out[key] = (values, value)
        return out

    def done(self, **key: Any) -> bool:
        """Whether a run with these field values is recorded."""
        return any(all(run.get(k) == v for k, v in key.items()) for run in self.runs)

    def add(self, run: Dict[str, Any]) -> None:
        self.runs.append(run)
        self.save()

    def add_data_time(self, key: str, seconds: float) -> None:
        times = self.session['data_time']
        times[key] = times.get(key, 0.0) + seconds

    def data_time(self) -> Dict[str, float]:
        """Data-processing seconds per key, over all sessions."""
        total: Dict[str, float] = {}
        for session in self.sessions:
            for key, seconds in session['data_time'].items():
                total[key] = total.get(key, 0.0) + seconds
        return total

    @property
    def wall_time(self) -> float:
        return sum(session['wall_time'] for session in self.sessions)

    def save(self) -> None:
        if self.session not in self.sessions:  # a report-only invocation
            return
        self.session['wall_time'] = time.perf_counter() - self._start
        text = json.dumps(dict(sessions=self.sessions, runs=self.runs), indent=1)
        with _report.locked(self.path):
            if _contents(self.path) != self._found:
                raise RuntimeError(f"{self.path} was written by another invocation "
                                   f"since this one read it; saving would drop that "
                                   f"one's runs: give each invocation its own "
                                   f"--output")
            _report.write_atomically(self.path, text)
            self._found = text

    def header(self, sessions: Optional[List[Dict[str, Any]]] = None) -> str:
        """Markdown lines: the commands, machines, dates and wall times of
        :obj:`sessions` (default: all the log's)."""
        sessions = self.sessions if sessions is None else sessions
        lines = [f'Command: `{s["command"]}`  \nMachine: {s["machine"]}'
                 f'{_processes(s["args"])}  \nDate: {s["date"]}, wall time '
                 f'{s["wall_time"] / 60:.1f} min'
                 + (f', commit {s["commit"]}' if s.get('commit') else '')
                 for s in sessions]
        if len(sessions) > 1:
            total = sum(s['wall_time'] for s in sessions)
            lines.append(f'Total wall time: {total / 60:.1f} min over '
                         f'{len(sessions)} invocations (later ones resumed the '
                         f'earlier ones with `--resume`)')
        return '\n\n'.join(lines)


def git_commit() -> Optional[str]:
    """The repository's commit (short hash, ``+changes`` when the tree
    differs from it outside ``docs/``), or :obj:`None` outside a git checkout.
    Changes under ``docs/`` do not count: no benchmark reads them, and the
    results page an earlier invocation wrote (e.g. before a ``--resume``) is one."""
    status = ['status', '--porcelain', '-uno', '--', '.', ':(exclude)docs']
    try:
        run = [subprocess.run(['git', *cmd], cwd=REPO, capture_output=True, text=True,
                              timeout=30) for cmd in (['rev-parse', '--short', 'HEAD'],
                                                      status)]
    except (OSError, subprocess.SubprocessError):
        return None
    if run[0].returncode != 0:
        return None
    return run[0].stdout.strip() + ('+changes' if run[1].stdout.strip() else '')


#: The state of a process that runs the tasks of :func:`run_tasks`: ``args``,
#: ``device``, ``position`` (the line of its progress bars), and whatever the
#: scripts' task functions keep there between tasks (e.g. loaded data).
WORKER: Dict[str, Any] = {}


def load_kernels(device: Union[str, torch.device]) -> None:
    """On the CPU, builds (once per environment, about half a minute) or loads the
    package's compiled kernels now, so that no timed step, run or peak of memory
    includes it (where they are off or cannot be built: nothing)."""
    if torch.device(device).type == 'cpu':
        compiled.grouped_kernels()


def _prepare_worker(args: argparse.Namespace, position: int) -> None:
    WORKER.clear()
    WORKER.update(args=args, device=torch.device(args.device), position=position)
    if getattr(args, 'keep_freed_memory', False):
        from torch_geometric_san.utils import keep_freed_memory
        keep_freed_memory()
    load_kernels(args.device)


def _start_worker(args: argparse.Namespace, slots) -> None:
    # A worker process of run_tasks: --threads torch threads (default 1) and
    # a line of its own for its progress bars.
    torch.set_num_threads(args.threads or 1)
    _prepare_worker(args, slots.get())


def run_tasks(tasks: Sequence[tuple], run: Callable[..., Any],
              args: argparse.Namespace, record: Callable[[Any], None]) -> None:
    """Calls ``run(*task)`` for every task of :obj:`tasks`, in this process
    or, with ``args.workers`` > 1, in that many processes (each with its
    :data:`WORKER` state), and ``record(result)`` in this process as each one
    finishes. :obj:`run` must be a module-level function of the script.

    The result of every task that finishes is recorded: in this process
    a failing task stops the rest and raises its error; in worker
    processes the tasks already submitted run on, and once all are done a
    :obj:`RuntimeError` names how many failed, chained to the first failure."""
    workers = getattr(args, 'workers', 1) or 1
    if workers <= 1 or len(tasks) <= 1:
        _prepare_worker(args, 0)
        for task in tasks:
            record(run(*task))
        return
    load_kernels(args.device)  # built here once, then only loaded by the workers
    # Spawned, not forked: a fork of a process whose torch thread pool has
    # started can hang.
    context = multiprocessing.get_context('spawn')
    slots = context.Queue()
    for slot in range(workers):
        slots.put(slot)
    with ProcessPoolExecutor(workers, mp_context=context, initializer=_start_worker,
                             initargs=(args, slots)) as pool:
        futures = [pool.submit(run, *task) for task in tasks]
        for future in as_completed(futures):
            if future.exception() is None:
                record(future.result())
    errors = [future.exception() for future in futures if future.exception() is not None]
    if errors:
        raise RuntimeError(f'{len(errors)} of {len(tasks)} tasks failed (the results of '
                           f'the others are recorded); the first: {errors[0]!r}') \
            from errors[0]


def print_report(args: argparse.Namespace, text: str, title: str, targets: str,
                 about: str) -> None:
    """Prints a script's tables and, under :obj:`title`, its target checks;
    after ``--quick`` it says that the verdicts do not judge :obj:`about`."""
    scope = (f' (this --quick subset is not the full protocol: the verdicts say nothing '
             f'about {about})' if args.quick else '')
    print(f'\n{text}\n{title}{scope}:\n{targets}')


def add_workers_argument(parser: argparse.ArgumentParser) -> None:
    """``--workers``, ``--threads`` and ``--keep-freed-memory`` of :func:`run_tasks`."""
    parser.add_argument('--workers', type=at_least(1), default=1,
                        help='train in this many processes (e.g. one per CPU core), '
                        'each on its own copy of the data')
    parser.add_argument('--threads', type=at_least(1),
                        help='torch CPU threads (per worker; default: torch\'s own, '
                        '1 in each worker of --workers)')
    parser.add_argument('--keep-freed-memory', action='store_true',
                        help='call torch_geometric_san.utils.keep_freed_memory() in '
                        'each worker (glibc malloc keeps freed memory for the next '
                        'steps instead of page-faulting it afresh)')


def set_threads(args: argparse.Namespace) -> None:
    """This process's torch threads: ``--threads``, or 1 with ``--workers``
    (also what the run log records)."""
    if args.threads or (getattr(args, 'workers', 1) or 1) > 1:
        torch.set_num_threads(args.threads or 1)


def _processes(args: Dict[str, Any]) -> str:
    # ", N worker processes with T torch thread(s) each" for --workers > 1.
    workers = args.get('workers') or 1
    if workers <= 1:
        return ''
    threads = args.get('threads') or 1
    return f'; {workers} worker processes, {threads} torch thread{"s" * (threads > 1)} each'
