"""Formatting shared by the benchmark scripts: the machine's CPU, markdown tables and
the sections of the results page.

It imports neither torch nor the package, so that the TopoNetX worker of
``lifting.py`` measures its memory without them.
"""
import os
import platform
import re
from pathlib import Path
from typing import List


def cpu_name() -> str:
    """The CPU model (from ``/proc/cpuinfo`` where there is one) and its core count."""
    name = platform.processor() or platform.machine()
    try:
        with open('/proc/cpuinfo') as f:
            name = re.search(r'model name\s*:\s*(.*)', f.read()).group(1)
    except (OSError, AttributeError):
        pass
    return f'{name}, {os.cpu_count()} cores'


def markdown_table(header: List[str], rows: List[List[str]]) -> str:
    """A GitHub markdown table."""
    lines = ['| ' + ' | '.join(header) + ' |',
             '|' + '|'.join(' --- ' for _ in header) + '|']
    lines += ['| ' + ' | '.join(row) + ' |' for row in rows]
    return '\n'.join(lines)


def replace_section(path: str, title: str, body: str) -> None:
    """Replaces the section ``## <title>`` of the markdown file :obj:`path` (up to the
    next ``## `` heading) by :obj:`body`, or appends it; the rest of the file is kept."""
    text = Path(path).read_text() if os.path.exists(path) else '# Results\n'
    section = f'## {title}\n\n{body.strip()}\n\n'
    pattern = re.compile(rf'^## {re.escape(title)}\n.*?(?=^## |\Z)', re.S | re.M)
    if pattern.search(text):
        text = pattern.sub(lambda _: section, text)
    else:
        text = text.rstrip('\n') + '\n\n' + section
    Path(path).write_text(text.rstrip('\n') + '\n')
