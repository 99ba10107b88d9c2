"""Keeping freed host memory in the process (glibc malloc) while training on a CPU.

Why: TensorFlow's CPU allocator takes its buffers from the C library's
malloc. glibc serves every block above its mmap threshold (at most 32 MB)
with a fresh ``mmap`` and gives it back with ``munmap`` when it is freed, so
each training step maps, page-faults in and zeroes its large tensors anew
(the Multi30k model's logits alone are 64 x 64 x 8000 float32 = 131 MB).
Keeping the freed blocks in the heap removes most of that kernel time from a
TensorFlow CPU step; `benchmarks/cpu_parallelism.py` measures it (figures in
benchmarks/README.md).

`retain_freed_memory` sets glibc's ``M_MMAP_MAX`` to 0 (no block is served
by ``mmap``; large blocks come from the heap and go back to it) and
``M_TRIM_THRESHOLD`` to 2 GiB (free memory at the top of the heap is kept
up to that much), which is what ``MALLOC_MMAP_MAX_=0`` and
``MALLOC_TRIM_THRESHOLD_`` do when set before the process starts. The
process then keeps its peak memory instead of returning freed blocks: fine
for a training process, whose every step reaches the same peak. There is no
allocator package to install for this on every platform (tcmalloc and
jemalloc are system libraries loaded with ``LD_PRELOAD``), hence the two
``mallopt`` calls.
"""

import ctypes
import ctypes.util
import sys

M_TRIM_THRESHOLD = -1  # glibc's malloc.h
M_MMAP_MAX = -4
TRIM_THRESHOLD_BYTES = 2**31 - 1  # mallopt takes a C int


def _glibc_mallopt():
    """glibc's ``mallopt`` function, or None elsewhere (macOS, Windows, musl)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    except OSError:
        return None
    if not hasattr(libc, "gnu_get_libc_version"):  # glibc only
        return None
    mallopt = libc.mallopt
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return mallopt


def retain_freed_memory():
    """Keeps freed blocks in this process's heap instead of unmapping them.

    Returns:
        ``(applied, reason)``: whether glibc took both settings, and why
        not where it did not (another C library or platform).
    """
    mallopt = _glibc_mallopt()
    if mallopt is None:
        return False, "not glibc on Linux: the C library's own malloc is left as it is"
    if not (mallopt(M_MMAP_MAX, 0) and mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD_BYTES)):
        return False, "glibc refused mallopt(M_MMAP_MAX / M_TRIM_THRESHOLD)"
    return True, "glibc malloc keeps freed blocks (M_MMAP_MAX=0, M_TRIM_THRESHOLD=2 GiB)"


def resolve_retain_host_memory(setting, backend):
    """Whether ``retain_host_memory`` (True, False or "auto") applies.

    "auto" means on for the TensorFlow backend, whose CPU steps it speeds
    up, and off for JAX, where it makes no difference, and for PyTorch,
    where it is unmeasured (figures in benchmarks/README.md).
    """
    if setting == "auto":
        return backend == "tensorflow"
    return bool(setting)
