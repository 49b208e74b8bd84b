"""The memory the billing import runs on: Arrow on jemalloc, handing freed memory back at once, and the C heap
trimmed after each chunk.

Arrow's default pool (mimalloc in the wheels) keeps freed pages for reuse; over an import of millions
of rows, chunk after chunk on three threads (the reader, the importing thread, the dataset writer), what
it kept put the import's peak over 512 MiB at 5M rows (issue 28: 515 MiB with mimalloc, 479 MiB with
jemalloc and no decay, measured with benchmarks/billing_bench.py's file). The pool is the process's
default from the first import on (Arrow has one default pool); where this build of pyarrow has no
jemalloc, the default stays.
"""

from __future__ import annotations

import functools


@functools.cache
def use_returning_pool() -> bool:
    """Make jemalloc, with no decay (freed memory returned at once), Arrow's default pool; whether it is."""
    import pyarrow as pa

    try:
        pool = pa.jemalloc_memory_pool()
        pa.jemalloc_set_decay_ms(0)
    except (NotImplementedError, pa.ArrowException):
        return False
    pa.set_memory_pool(pool)
    return True


@functools.cache
def _glibc():
    """The C library where it is glibc (it has malloc_trim), else None."""
    import ctypes
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        return libc if hasattr(libc, "malloc_trim") else None
    except OSError:
        return None


def return_freed_heap() -> None:
    """Hand the C heap's free pages back to the system (glibc's malloc_trim; nothing elsewhere).

    numpy's and pandas' buffers of a chunk are malloc'ed; glibc keeps what is freed inside its heaps, and
    chunk after chunk the free pages between live blocks added up: a 4M-row import's RSS grew from 380 to
    450 MiB while its live allocations (tracemalloc) stayed flat, and stayed at 390-410 MiB with
    malloc_trim every half second (issue 28, 2026-12-06). Called once a chunk: a few milliseconds."""
    libc = _glibc()
    if libc is not None:
        libc.malloc_trim(0)
