"""Each month's spend rows, stored once more in the review's own columnar form (PostgreSQL).

Reading a million spend rows for a review costs about 3 s however it is done (docs/performance.md,
"Where the read's time goes now"): COPY sends every row as its own message, and receiving a million
of them is 2.6 s of client CPU even for psql. A finance review slices the same bill many ways (periods,
teams, projects, currencies), and the rows change only when a bill is imported. So the first review
after an import reads each month it needs as today (spend_columns.spend_table) and stores that month's
Arrow table (LZ4-compressed IPC, money and hours as int64 micro-units) in SpendSnapshot; every later review over that data reads the few
compressed blobs, a handful of messages, and filters them in Arrow.

A snapshot is used only when it was built from exactly the rows stored now. Its `data_key` is
spend_rows_key() read *before* the rows were (so a write that lands between the two reads makes the key
differ next time, and the month is read again), plus the interruptible tag the `interruptible` column
was read with and this module's SCHEME. The key changes with every write of spend rows:

* every import, file or Cost Explorer pull, is a new BillingImport row (ids only grow), and a Cost
  Explorer pull's deletion of the rows it replaces comes with one;
* deleting an import deletes its rows (cascade) and lowers the count;
* the admin cannot edit or add single spend rows (admin.SpendRecordAdmin is read-only: a bill is
  evidence, and a wrong one is deleted as a whole and imported again).

Any import makes every month's snapshot stale (the key is global: which months a file touched is not
stored). After each import a worker (tasks.refresh_spend_snapshots) rebuilds every month that holds
spend rows or a snapshot, so that a review after it, of any month, reads snapshots only; a review that
comes before the worker has run rebuilds the months it reads itself. GPU slugs are not in a snapshot:
rows keep the GPU model's id, mapped at each read as spend_columns does.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

import pandas as pd
import psycopg
import pyarrow as pa
import pyarrow.compute as pc
from django.db import connection, transaction
from django.utils import timezone

from billing.imports.records import tag_mapping
from billing.models import BillingImport, SpendSnapshot
from billing.storage.charge_periods import starts_with_rows
from billing.storage.spend_columns import (
    FRAME_COLUMNS,
    engine_frame,
    exact_micros,
    gpu_slugs,
    spend_table,
    table_columns,
)

SCHEME = "arrow-ipc-lz4:2"  # 2: the commitment columns (issue 22)  # bump when spend_columns' COLUMN_SQL or COLUMN_TYPES change: old snapshots are rebuilt
# LZ4 over int64 micro-units: a million rows in 34 MB, read back in 0.05 s; zstd made 34 MB of the
# decimals too, but took 0.8 s to read (2026-12-02, 2-core machine, docs/performance.md)
WRITE_OPTIONS = pa.ipc.IpcWriteOptions(compression="lz4")
MONTH_ROWS = "WHERE r.charge_period_start >= %s AND r.charge_period_start < %s"
# PostgreSQL's bytea holds at most 1 GB; a month past this (about 8 million rows at 34 bytes a row) is
# read from its rows each time rather than stored
MAX_SNAPSHOT_BYTES = 256 * 2**20
# A long history is rebuilt a few months at a time: what a task stopped at its time limit had built stays
REBUILD_BATCH_MONTHS = 6


def month_starts(start: dt.date, end: dt.date) -> list[dt.date]:
    """The first day of every month that [start, end) touches."""
    months, month = [], start.replace(day=1)
    while month < end:
        months.append(month)
        month = _next_month(month)
    return months


def current_data_key(interruptible_tag: str) -> str:
    """The key a snapshot of the rows stored now carries: this module's SCHEME, the tag the
    `interruptible` column is read with, and spend_rows_key()."""
    return f"{SCHEME}:{interruptible_tag}:{spend_rows_key()}"


def spend_rows_key() -> str:
    """Changes with every write of spend rows (module docstring): the imports' count and newest id."""
    table = connection.ops.quote_name(BillingImport._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT COUNT(*), MAX(id) FROM {table}")  # noqa: S608 (a model's table)
        count, newest = cursor.fetchone()
    return f"{count}:{newest}"


def snapshot_spend_frame(
    start: dt.date, end: dt.date, *, interruptible_tag: str, columns: Sequence[str] = FRAME_COLUMNS
) -> pd.DataFrame:
    """The engine frame of every team's spend rows charged in [start, end), from the months'
    snapshots; months without a current one are read from the rows and stored first. (An engineer's
    granted review reads its teams' rows only, in the database: selectors.spend_frame.) Only the
    engine `columns` asked, when given: only their buffers are decompressed (a capacity plan reads a
    dozen of the 27, a third of the bytes)."""
    data_key = current_data_key(interruptible_tag)
    months = month_starts(start, end)
    kept = table_columns([*columns, "charge_period_start"])  # the period filter reads the start
    tables = stored_months(months, data_key, columns=kept)
    missing = [month for month in months if month not in tables]
    if missing:
        built = build_months(missing, data_key, interruptible_tag)
        tables.update({month: table.select(kept) for month, table in built.items()})
        del built
    # only a month the period cuts is filtered: a filter copies every column it keeps
    table = pa.concat_tables([_cut(tables.pop(month), month, start, end) for month in months])
    with connection.cursor() as cursor:
        frame = engine_frame(table, gpu_slugs(cursor.cursor), columns)
    del table
    # Arrow's pool keeps what it freed for its next tables; numpy and pandas allocate elsewhere
    pa.default_memory_pool().release_unused()
    return frame


def _cut(table: pa.Table, month: dt.date, start: dt.date, end: dt.date) -> pa.Table:
    """The month's rows charged in [start, end)."""
    if start <= month and _next_month(month) <= end:
        return table
    return table.filter(_in_period(table, start, end))


def _in_period(table: pa.Table, start: dt.date, end: dt.date):
    """The rows charged in [start, end): what selectors.spend_frame's WHERE selects on the rows."""
    starts = table.column("charge_period_start")  # UTC, without a zone, as spend_table parses it
    begin = pa.scalar(dt.datetime.combine(start, dt.time()), type=starts.type)
    finish = pa.scalar(dt.datetime.combine(end, dt.time()), type=starts.type)
    return pc.and_(pc.greater_equal(starts, begin), pc.less(starts, finish))


def stored_months(
    months: list[dt.date], data_key: str, columns: Sequence[str] | None = None
) -> dict[dt.date, pa.Table]:
    """The current snapshots of `months` (built from the rows as they are now), as Arrow tables: of
    spend_table's `columns` only when given (the others are not decompressed)."""
    table = connection.ops.quote_name(SpendSnapshot._meta.db_table)
    connection.ensure_connection()
    # A server-side-binding cursor (Django's is client-side), for binary results: the blobs as bytes, not
    # as hex text twice their size to decode; streamed, so that only one month's blob is held at a time
    tables = {}
    with psycopg.Cursor(connection.connection) as cursor:
        for month, data in cursor.stream(
            f"SELECT month, data FROM {table} WHERE data_key = %s AND month = ANY(%s)",  # noqa: S608
            [data_key, months],
            binary=True,
        ):
            tables[month] = _read_snapshot(data, columns)
    return tables


def _read_snapshot(data: bytes, columns: Sequence[str] | None) -> pa.Table:
    if columns is None:
        return pa.ipc.open_stream(pa.py_buffer(data)).read_all()
    names = pa.ipc.open_stream(pa.py_buffer(data)).schema.names  # the schema message only
    options = pa.ipc.IpcReadOptions(included_fields=[names.index(name) for name in columns])
    return pa.ipc.open_stream(pa.py_buffer(data), options=options).read_all()


def build_months(months: list[dt.date], data_key: str, interruptible_tag: str) -> dict[dt.date, pa.Table]:
    """Read `months` from the spend rows (one stream per run of consecutive months) and store each
    month's snapshot under `data_key`, replacing an older one. A month whose snapshot would pass
    MAX_SNAPSHOT_BYTES is not stored (and an older one of it goes): its reviews read its rows."""
    built = {}
    for run in _consecutive_runs(sorted(months)):
        bounds = [
            dt.datetime.combine(day, dt.time(), tzinfo=dt.UTC) for day in (run[0], _next_month(run[-1]))
        ]
        with connection.cursor() as cursor:
            table = exact_micros(spend_table(cursor.cursor, MONTH_ROWS, bounds, interruptible_tag))
        for month in run:
            # one record batch and one dictionary per column: chunk by chunk, each batch would carry its own
            rows = table.filter(_in_period(table, month, _next_month(month)))
            built[month] = rows.unify_dictionaries().combine_chunks()
    _store(built, data_key)
    return built


def _store(built: dict[dt.date, pa.Table], data_key: str) -> None:
    table_name = connection.ops.quote_name(SpendSnapshot._meta.db_table)
    with transaction.atomic(), connection.cursor() as cursor:
        for month, rows in sorted(built.items()):  # one order for every writer: no deadlock between two
            data = _ipc(rows)
            if len(data) > MAX_SNAPSHOT_BYTES:
                cursor.execute(f"DELETE FROM {table_name} WHERE month = %s", [month])  # noqa: S608
                continue
            # two reviews building the same month at once both store it; the later one's stays
            cursor.execute(
                f"INSERT INTO {table_name} (month, data_key, rows, data, built_at) VALUES (%s, %s, %s, %s, %s)"  # noqa: S608
                " ON CONFLICT (month) DO UPDATE SET data_key = EXCLUDED.data_key, rows = EXCLUDED.rows,"
                " data = EXCLUDED.data, built_at = EXCLUDED.built_at",
                [month, data_key, rows.num_rows, data, timezone.now()],
            )


def _next_month(month: dt.date) -> dt.date:
    return (month + dt.timedelta(days=32)).replace(day=1)


def _consecutive_runs(months: list[dt.date]) -> list[list[dt.date]]:
    runs: list[list[dt.date]] = []
    for month in months:
        if runs and _next_month(runs[-1][-1]) == month:
            runs[-1].append(month)
        else:
            runs.append([month])
    return runs


def _ipc(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema, options=WRITE_OPTIONS) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


def refresh_stale_snapshots() -> list[dt.date]:
    """Build every month without a current snapshot: each month that holds spend rows (a new import's
    months too, reviewed or not) and each stored month an import made stale. Returns the months built;
    nothing on other databases than PostgreSQL, where reviews read the rows."""
    if connection.vendor != "postgresql":
        return []
    tag = tag_mapping().interruptible
    data_key = current_data_key(tag)
    keys = dict(SpendSnapshot.objects.values_list("month", "data_key"))
    stale = sorted(month for month in {*keys, *starts_with_rows("month")} if keys.get(month) != data_key)
    for first in range(0, len(stale), REBUILD_BATCH_MONTHS):  # each batch stored in its own transaction
        build_months(stale[first : first + REBUILD_BATCH_MONTHS], data_key, tag)
    return stale
