"""The Arrow memory pool the billing import runs on: jemalloc, handing freed memory back at once.

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
