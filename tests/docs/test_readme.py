"""Runs the quickstart of README.md and checks what it prints against the
comments of its print lines (``print(...)  # expected``)."""
import contextlib
import io
import re
from pathlib import Path

README = Path(__file__).resolve().parents[2] / 'README.md'


def test_readme_quickstart():
    text = README.read_text()
    code = re.search(r'^## Quickstart\n.*?^```python\n(.*?)^```', text,
                     re.MULTILINE | re.DOTALL).group(1)
    expected = [m.group(1).strip() for m in re.finditer(r'^print\(.*\)  # (.*)$', code,
                                                          re.MULTILINE)]
    assert len(expected) == 3
    stdout = io.StringIO()
    with contextlib.redirect_stdout(stdout):
        exec(compile(code, str(README), 'exec'), {'__name__': '__readme__'})
    assert stdout.getvalue().splitlines() == expected
