import io

import pytest

from torch_geometric_san.utils import progress_bar


def test_drawn_on_a_terminal(terminal_stderr):
    with terminal_stderr() as err:
        assert list(progress_bar(range(3), "Counting")) == [0, 1, 2]
    assert "Counting" in err.getvalue() and "3/3" in err.getvalue()


def test_not_drawn_when_disabled(terminal_stderr):
    with terminal_stderr() as err:
        assert list(progress_bar(range(3), "Counting", enabled=False)) == [0, 1, 2]
    assert err.getvalue() == ""


def test_not_drawn_into_a_file_or_pipe():
    redirected = io.StringIO()  # isatty() is False, as for a file or a pipe
    assert list(progress_bar(range(3), "Counting", file=redirected)) == [0, 1, 2]
    assert redirected.getvalue() == ""


def test_enabled_takes_a_bool():
    # (a str such as 'no' counted as true)
    with pytest.raises(TypeError, match="enabled must be True or False, not str"):
        progress_bar(range(3), "Counting", enabled='no')
