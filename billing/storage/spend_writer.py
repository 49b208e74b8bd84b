"""Write keyed, enriched spend rows into SpendRecord, chunk by chunk; counts the rows that were new.

PostgreSQL: each chunk goes by one binary COPY (pgcopy.py), its rows sorted by key so that the key
index is filled in order, sent by a worker thread while the next chunk is read and prepared (the
server and Python then work at the same time, on two cores). A chunk's keys are looked up before it
is written only where they can be stored already: rows of a charge day that held stored rows when the
file began (one index probe per stored day finds those days); a file of new days needs no lookup.
Each COPY runs in a savepoint. Should it meet a stored key (a concurrent import committed the same
rows meanwhile), it is rolled back and the chunk goes into a temporary staging table instead, from
which one `INSERT ... SELECT ... ON CONFLICT (row_key) DO NOTHING` writes the rest; its row count is
the number inserted. The worker uses the connection only while the main thread does not: every
query of the main thread first waits for it (`settle`).
Elsewhere (SQLite: tests, the zero-configuration setup) the stored keys are looked up in batches
and the new rows go in with executemany.
"""

from __future__ import annotations

import json
from concurrent.futures import Future, ThreadPoolExecutor
from decimal import Decimal

import numpy as np
import pandas as pd
from django.db import connection

from billing.imports.codes import codes_and_values, spread, text_values
from billing.imports.enrich import object_codes
from billing.models import SpendRecord
from billing.storage import pgcopy
from billing.storage.charge_periods import starts_with_rows
from billing.storage.keys import key_bytes, key_hex

KEY_QUERY_BATCH = 900  # under SQLite's 999 bound on query parameters
INSERT_BATCH = 2000
STAGE = "billing_spend_stage"
SAVEPOINT = "billing_spend_copy"
# The stored columns; each comes from the enriched frame's column of the same name except the import
# id and the row key.
COLUMNS = [
    "billing_import_id",
    "row_key",
    "source_row",
    "charge_period_start",
    "charge_period_end",
    "billing_period_start",
    "charge_category",
    "is_correction",
    "provider",
    "billing_account_id",
    "sub_account_id",
    "sub_account_name",
    "region",
    "availability_zone",
    "resource_id",
    "resource_type",
    "service_category",
    "sku_id",
    "instance_type",
    "gpu_id",
    "gpus_per_instance",
    "pricing_category",
    "commitment_discount_id",
    "commitment_status",
    "consumed_quantity",
    "consumed_unit",
    "instance_hours",
    "gpu_hours",
    "billed_cost",
    "effective_cost",
    "list_cost",
    "contracted_cost",
    "currency",
    "team",
    "project",
    "environment",
    "tags",
    "commitment_type",
    "commitment_family",
    "commitment_gpu_scope",
    "commitment_end",
    "is_refund",
]
TIMES = ("charge_period_start", "charge_period_end", "billing_period_start", "commitment_end")
FLAGS = ("is_correction", "commitment_gpu_scope", "is_refund")
NUMERIC_SCALES = {
    "gpus_per_instance": 3,
    "consumed_quantity": 6,
    "instance_hours": 6,
    "gpu_hours": 6,
    "billed_cost": 6,
    "effective_cost": 6,
    "list_cost": 6,
    "contracted_cost": 6,
}
NULLABLE_NUMBERS = ("consumed_quantity", "list_cost", "contracted_cost")  # "" is NULL, not 0


class SpendWriter:
    """One per file, inside the file's transaction: `write` each chunk, then `close` (or leave the
    `with` block) before the transaction ends; `inserted` counts the new rows."""

    def __init__(self, import_id: int):
        self.import_id = import_id
        self.postgres = connection.vendor == "postgresql"
        self.table = connection.ops.quote_name(SpendRecord._meta.db_table)
        self.inserted = 0
        self.staging = False  # the staging table is made on first need (a concurrent import)
        self._stored_days: np.ndarray | None = None
        self._worker = ThreadPoolExecutor(max_workers=1) if self.postgres else None
        self._in_flight: tuple[Future, list[str], memoryview, int] | None = None

    def __enter__(self) -> SpendWriter:
        return self

    def __exit__(self, kind, error, trace) -> None:
        if error is None:
            self.close()
        else:
            self._abandon()

    def write(self, rows: pd.DataFrame, lanes: np.ndarray) -> None:
        """Write the rows not stored yet (`lanes`: their keys, keys.row_key_lanes)."""
        if not len(rows):
            return
        if not self.postgres:
            self.inserted += self._insert_new(rows, key_hex(lanes))
            return
        fresh = self._fresh_positions(rows, lanes)
        if not len(fresh):
            return
        fresh = fresh[np.lexsort((lanes[fresh, 1], lanes[fresh, 0]))]  # key order: the index fills in order
        names, data = pgcopy.copy_data(copy_fields(rows.take(fresh), lanes[fresh], self.import_id))
        self.settle()
        future = self._worker.submit(
            _copy_straight, connection.connection, self._copy_sql(self.table, names), data
        )
        self._in_flight = (future, names, data, len(fresh))

    def settle(self) -> None:
        """Wait for the chunk in flight; merge it through the staging table if its COPY met stored keys."""
        if self._in_flight is None:
            return
        future, names, data, count = self._in_flight
        self._in_flight = None
        with connection.wrap_database_errors:
            copied = future.result()
        self.inserted += count if copied else self._merge(names, data)

    def close(self) -> None:
        self.settle()
        if self._worker:
            self._worker.shutdown()
        if self.staging:
            with connection.cursor() as cursor:
                cursor.execute(f"DROP TABLE {STAGE}")
            self.staging = False

    def _abandon(self) -> None:
        """Leave the connection to the failing transaction: wait for the worker, ignore its outcome."""
        if self._in_flight is not None:
            self._in_flight[0].exception()
            self._in_flight = None
        if self._worker:
            self._worker.shutdown()

    # PostgreSQL ---------------------------------------------------------------------------------
    def _fresh_positions(self, rows: pd.DataFrame, lanes: np.ndarray) -> np.ndarray:
        """Positions of the rows whose keys are not stored: only rows of a day that held stored rows
        when the file began are looked up (their keys may be stored; no other row's can be)."""
        days = rows["charge_period_start"].to_numpy(dtype="datetime64[D]")
        maybe = np.isin(days, self.stored_days())
        if not maybe.any():
            return np.arange(len(rows))
        self.settle()
        candidates = np.flatnonzero(maybe)
        hexes = key_hex(lanes[candidates])
        with connection.cursor() as cursor:
            # Probes of the primary key, whatever the statistics say: a table loaded moments ago has none
            # yet, and the planner would scan all of it for each chunk (seconds a chunk at 1M rows).
            cursor.execute(
                "SELECT current_setting('enable_seqscan'), set_config('enable_seqscan', 'off', true)"
            )
            setting = cursor.fetchone()[0]
            cursor.execute(
                f"SELECT replace(row_key::text, '-', '') FROM {self.table}"  # noqa: S608 (name from the model)
                " WHERE row_key = ANY(string_to_array(%s, ',')::uuid[])",
                [",".join(hexes.tolist())],
            )  # one text of hex digits split by the server: a 50,000-element array parameter costs more
            stored = [key for (key,) in cursor.fetchall()]
            cursor.execute("SELECT set_config('enable_seqscan', %s, true)", [setting])
        fresh = np.ones(len(rows), dtype=bool)
        fresh[candidates[np.isin(hexes, stored)]] = False
        return np.flatnonzero(fresh)

    def stored_days(self) -> np.ndarray:
        if self._stored_days is None:
            self._stored_days = np.array(starts_with_rows("day"), dtype="datetime64[D]")
        return self._stored_days

    @staticmethod
    def _copy_sql(table: str, names: list[str]) -> str:
        return f"COPY {table} ({', '.join(names)}) FROM STDIN (FORMAT BINARY)"

    def _merge(self, names: list[str], data: memoryview) -> int:
        """The chunk through the staging table, skipping keys stored meanwhile; the rows inserted."""
        self._make_staging()
        columns = ", ".join(names)
        with connection.cursor() as cursor, connection.wrap_database_errors:
            _copy(cursor.cursor, self._copy_sql(STAGE, names), data)
            cursor.execute(
                f"INSERT INTO {self.table} ({columns}) SELECT {columns} FROM {STAGE}"  # noqa: S608 (names from the model)
                " ON CONFLICT (row_key) DO NOTHING"
            )
            inserted = cursor.rowcount
            cursor.execute(f"TRUNCATE {STAGE}")
        return inserted

    def _make_staging(self) -> None:
        if not self.staging:
            with connection.cursor() as cursor:
                cursor.execute(
                    f"CREATE TEMPORARY TABLE {STAGE} AS SELECT {', '.join(COLUMNS)}"  # noqa: S608 (names from the model)
                    f" FROM {self.table} WITH NO DATA"
                )
            self.staging = True

    # Other databases ----------------------------------------------------------------------------
    def _insert_new(self, rows: pd.DataFrame, keys: np.ndarray) -> int:
        key_list = keys.tolist()
        existing: set[str] = set()
        with connection.cursor() as cursor:  # plain SQL: the ORM prepares each of a million keys on its own
            for start in range(0, len(key_list), KEY_QUERY_BATCH):
                batch = key_list[start : start + KEY_QUERY_BATCH]
                marks = ", ".join(["%s"] * len(batch))
                cursor.execute(f"SELECT row_key FROM {self.table} WHERE row_key IN ({marks})", batch)  # noqa: S608
                existing.update(key for (key,) in cursor.fetchall())
        fresh = np.flatnonzero(~np.isin(keys, list(existing))) if existing else np.arange(len(keys))
        if len(fresh):
            self._bulk_insert(rows.iloc[fresh], keys[fresh])
        return len(fresh)

    def _bulk_insert(self, rows: pd.DataFrame, keys: np.ndarray) -> None:
        """One INSERT per batch: Django's bulk_create prepares every value through its field (tens of
        microseconds each) and, on SQLite, splits the batch at 999 parameters (27 rows here)."""
        columns = {"billing_import_id": [self.import_id] * len(rows), "row_key": keys.tolist()}
        for name in COLUMNS[2:]:
            columns[name] = _python_values(rows, name)
        quoted = ", ".join(connection.ops.quote_name(n) for n in COLUMNS)
        marks = ", ".join(["%s"] * len(COLUMNS))
        sql = f"INSERT INTO {self.table} ({quoted}) VALUES ({marks})"  # noqa: S608 (names from the model)
        values = list(zip(*(columns[n] for n in COLUMNS), strict=True))
        with connection.cursor() as cursor:
            for start in range(0, len(values), INSERT_BATCH):
                cursor.executemany(sql, values[start : start + INSERT_BATCH])


def copy_fields(rows: pd.DataFrame, lanes: np.ndarray, import_id: int) -> list:
    """The COLUMNS of the rows as binary COPY fields."""
    fields = [
        pgcopy.int8_constant("billing_import_id", import_id, len(rows)),
        pgcopy.uuid_per_row("row_key", key_bytes(lanes)),
        pgcopy.int4_per_row("source_row", rows["source_row"].to_numpy()),
    ]
    for name in COLUMNS[3:]:
        values = rows[name]
        if name in TIMES:
            fields.append(pgcopy.timestamp_field(name, values))
        elif name in NUMERIC_SCALES:
            fields.append(pgcopy.numeric_field(name, values, NUMERIC_SCALES[name]))
        elif name in FLAGS:
            fields.append(pgcopy.bool_field(name, values.to_numpy(dtype=bool)))
        elif name == "gpu_id":
            fields.append(pgcopy.int8_field(name, values))
        elif name == "tags":
            fields.append(pgcopy.json_field(name, *object_codes(values)))
        else:
            fields.append(pgcopy.text_field(name, values))
    return fields


def _copy_straight(raw_connection, sql: str, data: memoryview) -> bool:
    """In the worker thread, on the psycopg connection itself: COPY in a savepoint; False (and rolled
    back) if a row's key is stored already."""
    from psycopg import errors

    with raw_connection.cursor() as cursor:
        cursor.execute(f"SAVEPOINT {SAVEPOINT}")
        try:
            _copy(cursor, sql, data)
        except errors.UniqueViolation:
            cursor.execute(f"ROLLBACK TO SAVEPOINT {SAVEPOINT}")
            cursor.execute(f"RELEASE SAVEPOINT {SAVEPOINT}")
            return False
        cursor.execute(f"RELEASE SAVEPOINT {SAVEPOINT}")
    return True


def _copy(cursor, sql: str, data: memoryview) -> None:
    with cursor.copy(sql) as copy:
        copy.write(pgcopy.SIGNATURE)
        copy.write(data)
        copy.write(pgcopy.TRAILER)


def _python_values(rows: pd.DataFrame, name: str) -> list:
    """A column as the Python values executemany adapts, each distinct value converted once."""
    values = rows[name]
    if name in TIMES:
        adapt = connection.ops.adapt_datetimefield_value
        return [None if pd.isna(v) else adapt(v.to_pydatetime()) for v in values]
    if name == "tags":
        codes, tag_sets = object_codes(values)
        return spread(codes, [json.dumps(value, sort_keys=True) for value in tag_sets]).tolist()
    if name == "source_row":
        return values.astype(int).tolist()
    if name in FLAGS:
        return values.astype(bool).tolist()
    if name in NULLABLE_NUMBERS or name in ("billed_cost", "effective_cost"):
        codes, uniques = text_values(values)
        return spread(codes, [Decimal(v) if v != "" else None for v in uniques]).tolist()
    codes, uniques = codes_and_values(values)
    return spread(codes, uniques).tolist()
