"""Formatting shared by the benchmark scripts: the machine's CPU, markdown tables and
the generated blocks of the results page; and the types of their numeric arguments.

It imports neither torch nor the package, so that the TopoNetX worker of
``lifting.py`` measures its memory without them.
"""
import argparse
import contextlib
import math
import os
import platform
import re
import shlex
import shutil
import sys
import uuid
from pathlib import Path
from typing import Callable, Iterator, List, Optional, Sequence


def at_least(minimum: int) -> Callable[[str], int]:
    """An ``argparse`` type: an integer of at least :obj:`minimum`. A count that makes
    no sense (a batch of -1 signals, 0 epochs) is refused on the command line, where
    it would otherwise train nothing and report it, or fail deep inside a run."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f'expected an integer, got {text!r}') \
                from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f'must be at least {minimum}, got {value}')
        return value
    return parse


def int_list(minimum: int) -> Callable[[str], str]:
    """An ``argparse`` type: comma-separated integers, each at least :obj:`minimum`
    (e.g. a fan-out per hop). Kept as its text, which the scripts parse and print in
    their commands."""
    one = at_least(minimum)

    def parse(text: str) -> str:
        return ','.join(str(one(item.strip())) for item in text.split(','))
    return parse


def device_name(text: str) -> str:
    """An ``argparse`` type: a device the benchmarks run on, ``cpu``, ``cuda`` or
    ``cuda:N``, refused on the command line where it is not one or is not here
    (torch is imported only to look for a CUDA device). Kept as its text, which the
    scripts pass to their worker processes and print in their commands."""
    match = re.fullmatch(r'cpu|cuda(?::(\d+))?', text)
    if match is None:
        raise argparse.ArgumentTypeError(f'expected cpu, cuda or cuda:N, got {text!r}')
    if text != 'cpu':
        import torch
        index = int(match.group(1) or 0)
        if index >= torch.cuda.device_count():
            raise argparse.ArgumentTypeError(
                f'{text!r}: this machine has {torch.cuda.device_count()} CUDA '
                f'device(s) (torch {torch.__version__})')
    return text


def real_in(low: float, high: float = float('inf'), low_open: bool = False,
            high_open: bool = False) -> Callable[[str], float]:
    """An ``argparse`` type: a finite real number in the interval from :obj:`low` to
    :obj:`high`, each end open or closed (e.g. a fraction, a learning rate)."""
    bound = (f'{">" if low_open else ">="} {low:g}' if high == float('inf') else
             f'in {"(" if low_open else "["}{low:g}, {high:g}{")" if high_open else "]"}')

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f'expected a number, got {text!r}') \
                from None
        if not math.isfinite(value):
            raise argparse.ArgumentTypeError(f'expected a finite number, got {text}')
        if not ((value > low if low_open else value >= low) and
                (value < high if high_open else value <= high)):
            raise argparse.ArgumentTypeError(f'must be {bound}, got {text}')
        return value
    return parse


def cpu_name(cpuinfo: str = '/proc/cpuinfo') -> str:
    """The CPU model and its core count; from :obj:`cpuinfo` where there is one, with
    the CPU family, model number and clock, which tell apart machines that a virtual
    machine names alike (e.g. "AMD EPYC" of two generations, whose timings differ)."""
    name = platform.processor() or platform.machine()
    try:
        with open(cpuinfo) as f:
            text = f.read()
    except OSError:
        text = ''
    fields = {key: re.search(rf'^{key}\s*:\s*(.*)$', text, re.MULTILINE)
              for key in ('model name', 'cpu family', 'model', 'cpu MHz')}
    if fields['model name']:
        name = fields['model name'].group(1).strip()
        details = [f'{key.split()[-1]} {fields[key].group(1).strip()}'
                   for key in ('cpu family', 'model') if fields[key]]
        if fields['cpu MHz']:
            details.append(f"{float(fields['cpu MHz'].group(1)) / 1000:.1f} GHz")
        name += f' ({", ".join(details)})' if details else ''
    return f'{name}, {os.cpu_count()} cores'


def command_line(script: str, argv: Optional[Sequence[str]] = None) -> str:
    """This invocation of ``benchmarks/<script>.py`` (arguments :obj:`argv`, default
    the process's) as typed in a POSIX shell: quoted where an argument needs it (a
    model name with spaces, an empty value), so that the results page's commands run
    as copied."""
    return shlex.join(['python', f'benchmarks/{script}.py',
                       *(sys.argv[1:] if argv is None else argv)])


def markdown_table(header: List[str], rows: List[List[str]]) -> str:
    """A GitHub markdown table."""
    lines = ['| ' + ' | '.join(header) + ' |',
             '|' + '|'.join(' --- ' for _ in header) + '|']
    lines += ['| ' + ' | '.join(row) + ' |' for row in rows]
    return '\n'.join(lines)


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """Holds an exclusive advisory lock on ``.<name>.lock`` beside :obj:`path`
    (waiting for it), so that processes that read, change and write :obj:`path`
    take turns; nothing where the OS or file system has no advisory locks. (Not
    on :obj:`path` itself, which :func:`write_atomically` replaces by another
    file.)"""
    try:
        import fcntl
    except ImportError:  # (Windows)
        yield
        return
    path = Path(os.path.realpath(path))  # (a link's target: what is written)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(f'.{path.name}.lock'), 'a') as handle:  # closing unlocks
        try:
            fcntl.flock(handle, fcntl.LOCK_EX)
        except OSError:  # (a file system without them, e.g. some NFS mounts)
            pass
        yield


def write_atomically(path: Path, text: str) -> None:
    """Writes :obj:`text` to :obj:`path` through a temporary file of its own in
    the same directory, renamed into place: a reader finds the old file or the
    new one, never a part. A link stays a link (its target is written), and the
    file keeps its permissions (a new one gets the umask's)."""
    path = Path(os.path.realpath(path))
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f'.{path.name}.{os.getpid()}.{uuid.uuid4().hex}.tmp')
    try:
        with os.fdopen(os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666),
                       'w') as out:
            out.write(text)
        if path.exists():
            shutil.copymode(path, partial)
        os.replace(partial, path)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise


def write_results(path: str, title: str, key: str, block: str,
                  device: str = 'cpu') -> None:
    """Puts :obj:`block` into the section ``## <title>`` of the markdown file
    :obj:`path`, between the markers ``<!-- <key>: begin -->`` and
    ``<!-- <key>: end -->``, replacing the previous block of the same key.
    Text outside the markers (hand-written notes, other sections) is kept.
    The section is appended if it does not exist. A run on an accelerator
    (:obj:`device` other than the CPU) gets a section and key of its own
    (``<title> on CUDA``), so that it does not replace the CPU results. A page
    whose markers of the key do not pair up (e.g. a block that lost its end
    marker) is refused: a block written after an orphaned begin marker would
    be replaced next time together with the text between them."""
    kind = device.split(':')[0]
    if kind != 'cpu':
        title, key = f'{title} on {kind.upper()}', f'{key} --device {kind}'
    begin, end = f'<!-- {key}: begin -->', f'<!-- {key}: end -->'
    marked = f'{begin}\n{block.strip()}\n{end}'
    with locked(Path(path)):  # (another benchmark may be writing its own block)
        text = Path(path).read_text() if os.path.exists(path) else '# Results\n'
        write_atomically(Path(path), _with_block(text, path, title, key, begin, end,
                                                 marked))


def _with_block(text: str, path: str, title: str, key: str, begin: str, end: str,
                marked: str) -> str:
    # The page :obj:`text` with the block :obj:`marked` in place (write_results).
    if text.count(begin) != text.count(end):
        raise ValueError(f"{path} has {text.count(begin)} '{begin}' but "
                         f"{text.count(end)} '{end}' marker(s): mend the {key} block "
                         f"by hand before writing it again")
    pattern = re.compile(re.escape(begin) + r'.*?' + re.escape(end), re.S)
    if pattern.search(text):
        text = pattern.sub(lambda _: marked, text)
    else:
        heading = re.compile(rf'^## {re.escape(title)}\s*$', re.M)
        match = heading.search(text)
        if match is None:
            text = text.rstrip('\n') + f'\n\n## {title}\n\n{marked}\n'
        else:  # at the end of the existing section
            nxt = re.compile(r'^## ', re.M).search(text, match.end())
            stop = nxt.start() if nxt else len(text)
            text = (text[:stop].rstrip('\n') + f'\n\n{marked}\n\n' +
                    text[stop:]).rstrip('\n') + '\n'
    return text
