"""The memory the billing import runs on: Arrow on jemalloc, handing freed memory back over a second, the C
heap's large blocks mapped apart (a fixed mmap threshold) and the heap trimmed after each chunk.

Arrow's default pool (mimalloc in the wheels) keeps freed pages for reuse; over an import of millions
of rows, chunk after chunk on three threads (the reader, the importing thread, the dataset writer), what
it kept put the import's peak over 512 MiB at 5M rows (issue 28: 515 MiB with mimalloc, 479 MiB with
jemalloc and no decay, measured with benchmarks/billing_bench.py's file). The pool is the process's
default from the first import on (Arrow has one default pool); where this build of pyarrow has no
jemalloc, the default stays.

Freed pages are handed back after DECAY_MS, not at once: with no decay, every Arrow buffer (CSV blocks,
dictionaries, Parquet pages) was purged when freed and faulted in again, zeroed, when the next was made:
1.7M minor page faults and 5.4-6.6 s of system time in a 5M-row CSV import of 22-24 CPU s (issue 28,
stop 45: billing_bench's file, getrusage, load 5-12). With a second's decay, about half the faults: the
1M-row CSV import 4.50-5.05 -> 4.03-4.09 CPU s (three runs each, interleaved), the 1M Parquet one 3.41 ->
2.78 s; its cost, the peak 15-35 MiB higher (1M Parquet 364 -> 395 MiB in the same pair; 5M CSV 447, 5M
Parquet 416 MiB), and still growing from 1M to 5M as it did. A decay of 250 ms held as much; handing
Arrow's unused pages back after each chunk (MemoryPool.release_unused) brought the peak no lower. 0
restores the earlier peaks and page faults.
"""

from __future__ import annotations

import functools

DECAY_MS = 1000  # jemalloc's dirty and muzzy decay: freed pages go back to the system over a second


@functools.cache
def use_returning_pool() -> bool:
    """Make jemalloc, handing freed memory back over DECAY_MS, Arrow's default pool; whether it is."""
    import pyarrow as pa

    try:
        pool = pa.jemalloc_memory_pool()
        pa.jemalloc_set_decay_ms(DECAY_MS)
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


# glibc's mallopt parameter number of M_MMAP_THRESHOLD (malloc.h)
M_MMAP_THRESHOLD = -3
# Blocks from this size up are mapped on their own and unmapped when freed (glibc's default starts at
# 128 KiB and rises to the largest block freed, up to 32 MiB).
MMAP_THRESHOLD = 1 << 20


@functools.cache
def map_large_blocks() -> bool:
    """Fix glibc's mmap threshold at MMAP_THRESHOLD, for the process; whether it was set (glibc only).

    glibc raises its threshold to the size of each mapped block freed (up to 32 MiB): after the first
    chunks, the chunk's arrays (the occurrence counter's runs, 2-D blocks of a frame) came from the heaps,
    where their freed space was reused only in part, and the heaps' free bytes grew 10 -> 32 MiB over a
    5M-row import. Fixed (which turns the dynamic threshold off: glibc manual, "Malloc Tunable
    Parameters"), the peak of billing_bench's CSV import grew by 8 MiB from 1M to 5M rows instead of
    22 MiB (issue 28, 2026-12-06, one run each on a loaded machine). Smaller blocks, most of the
    allocations, stay in the heaps."""
    libc = _glibc()
    if libc is None or not hasattr(libc, "mallopt"):
        return False
    return bool(libc.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD))


def return_freed_heap() -> None:
    """Hand the C heap's free pages back to the system (glibc's malloc_trim; nothing elsewhere).

    numpy's and pandas' buffers of a chunk are malloc'ed; glibc keeps what is freed inside its heaps, and
    chunk after chunk the free pages between live blocks added up: a 4M-row import's RSS grew from 380 to
    450 MiB while its live allocations (tracemalloc) stayed flat, and stayed at 390-410 MiB with
    malloc_trim every half second (issue 28, 2026-12-06). Called once a chunk: a few milliseconds."""
    libc = _glibc()
    if libc is not None:
        libc.malloc_trim(0)
