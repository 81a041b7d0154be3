"""Runs a script as ``__main__`` in the extension mode of the test suite.

``torchrun`` starts every worker as a new interpreter, so the import blocker that
``tests/conftest.py`` installs in the pytest process when
``TGSAN_WITHOUT_EXTENSIONS=1`` does not reach the workers; this wrapper installs it
again (the variable is inherited) before the script imports PyG, and reports on
stderr at exit whether ``torch_scatter`` was loaded.

Usage: ``torchrun [options] tests/benchmarks/ddp_worker.py SCRIPT [ARGS...]``
"""
import atexit
import os
import runpy
import sys
from pathlib import Path

runpy.run_path(str(Path(__file__).resolve().parents[1] / 'conftest.py'))


@atexit.register
def _report() -> None:
    print(f"[rank {os.environ.get('RANK')}] torch_scatter loaded: "
          f"{'torch_scatter' in sys.modules}", file=sys.stderr, flush=True)


sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name='__main__')
