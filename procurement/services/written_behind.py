"""Batches written on a thread of their own while the caller computes the next one (a recompute chunk).

Why: storing a ranking is mostly the server's work: PostgreSQL parses its ~78 KB of JSON into jsonb and
compresses it, ~1-2.5 ms a ranking on the shared 2-core machine (COPY of 500 stored rankings into a
jsonb column: 0.6-1.2 s, into a text column 0.5 s; 2026-12-06), during which a worker that writes after
ranking only waits. Written from a second connection on a thread, that time overlaps the ranking of the
next batch (the thread mostly waits on its socket, so it takes little of the worker's interpreter).

One batch is in flight at a time, and each batch is the caller's write function, whole, in its own
transaction on the thread's connection, as it would be in the caller's: what a write guarantees (the
recompute's locks and re-reads for exactly-once) is unchanged. An error of a batch is raised to the
caller at its next hand-over or at the end, and no later batch is written.

Synchronous (the caller's own connection) where another connection would not see the caller's rows:
inside a transaction (a caller's atomic block; the tests' rolled-back transaction), and on a database
other than PostgreSQL (SQLite's test database lives in one connection).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor, wait
from contextlib import contextmanager
from typing import TypeVar

from django.db import connection, connections

Batch = TypeVar("Batch")


def writes_behind_possible() -> bool:
    return connection.vendor == "postgresql" and not connection.in_atomic_block


@contextmanager
def written_behind(write: Callable[[Batch], None]) -> Iterator[Callable[[Batch], None]]:
    """Yields ``hand_over(batch)``: ``write(batch)`` on the writing thread once the batch before it is
    written (here, at once, where a second connection cannot be used). Every batch is written, or its
    error raised, before the block ends."""
    if not writes_behind_possible():
        yield write
        return
    in_flight: list[Future] = []
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="written-behind") as thread:

        def hand_over(batch: Batch) -> None:
            if in_flight:
                in_flight.pop().result()  # the batch before: written, or its error raised here
            in_flight.append(thread.submit(write, batch))

        try:
            yield hand_over
            if in_flight:
                in_flight.pop().result()
        finally:
            wait(in_flight)  # the caller failed: the batch in flight still ends before the block does
            thread.submit(connections.close_all).result()  # the thread's connection, not the caller's
