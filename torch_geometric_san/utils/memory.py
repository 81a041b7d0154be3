r"""How the C allocator of the process treats the memory of freed tensors."""
import ctypes
import sys

# mallopt(3) parameters of glibc's <malloc.h>.
_M_TRIM_THRESHOLD = -1
_M_MMAP_MAX = -4


def keep_freed_memory() -> bool:
    r"""Makes the C allocator of this process keep freed memory for reuse
    instead of handing it back to the operating system (glibc malloc, i.e.
    Linux; elsewhere it changes nothing).

    PyTorch allocates CPU tensors with :obj:`malloc`. glibc maps every block
    above its mmap threshold (32 MB at most) afresh and unmaps it when it is
    freed, so each training step on a large complex page-faults, and the
    kernel zero-fills, all its large tensors anew: on large complexes the
    time per simplex of a :class:`~torch_geometric_san.nn.conv.SANConv` step
    then grows with the complex (the *Scaling* sections of the results page
    measure it with and without this call). Large blocks
    then come from the heap, and freed ones stay there for the next steps,
    which reuse them once the heap has settled (after a few steps). The
    price is memory: the process keeps what it freed, fragmentation included
    (the results page gives the growth of the resident set with and without
    the call).

    The call has the effect of starting the process with the environment
    variables :obj:`MALLOC_MMAP_MAX_=0` and a huge
    :obj:`MALLOC_TRIM_THRESHOLD_`, from the call on, for the whole process;
    there is no undo. Worth it for large complexes on the CPU; unneeded on
    GPUs (PyTorch's CUDA allocator caches memory already).

    Returns:
        bool: Whether the allocator took the settings (:obj:`False` where the
        C library is not glibc).
    """
    if not sys.platform.startswith('linux'):
        return False
    libc = ctypes.CDLL(None)
    if not hasattr(libc, 'gnu_get_libc_version') or not hasattr(libc, 'mallopt'):
        return False  # another C library (e.g. musl)
    # M_MMAP_MAX = 0: no block is served by mmap; M_TRIM_THRESHOLD = -1: the
    # heap is never trimmed (both documented in mallopt(3)).
    return bool(libc.mallopt(_M_MMAP_MAX, 0)) and bool(
        libc.mallopt(_M_TRIM_THRESHOLD, -1))
