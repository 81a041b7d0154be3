import ctypes
import subprocess
import sys

import pytest

from torch_geometric_san.utils import keep_freed_memory

GLIBC = sys.platform.startswith('linux') and hasattr(ctypes.CDLL(None),
                                                     'gnu_get_libc_version')

# Page faults of the last 8 of 16 "training steps" that each allocate and free three
# 64 MB tensors, in a process of its own (the allocator settings are process-wide and
# final). With the settings, the heap settles after a few steps and is then reused.
SCRIPT = '''
import resource, sys, torch
from torch_geometric_san.utils import keep_freed_memory
if sys.argv[1] == "keep":
    assert keep_freed_memory()
n = 16 * 2**20  # float32 values: 64 MB
faults = []
for step in range(16):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    a = torch.ones(n)
    b = a * 2
    c = b + 1
    float(c.sum())
    del a, b, c
    faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
print(sum(faults[8:]))
'''


def faults(mode: str) -> int:
    out = subprocess.run([sys.executable, '-c', SCRIPT, mode], capture_output=True,
                         text=True, check=True)
    return int(out.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(not GLIBC, reason='keep_freed_memory acts on glibc malloc only')
def test_freed_memory_is_reused_without_page_faults():
    plain, kept = faults('plain'), faults('keep')
    assert plain > 8 * 3 * 10_000  # 3 x 16,384 pages of 4 KiB per step, mapped afresh
    assert kept < plain / 10


@pytest.mark.skipif(GLIBC, reason='checks the answer of a C library other than glibc')
def test_other_c_libraries_are_left_alone():
    assert keep_freed_memory() is False
