"""Write keyed, enriched spend rows into SpendRecord; returns how many were new.

PostgreSQL: each chunk goes by one COPY (text format, the whole chunk's buffer built column by
column: each column's distinct values are formatted and escaped once, then spread by code). The
chunk's keys already stored are looked up in one query and skipped; the new rows are copied straight
into the table, in a savepoint. Should a concurrent import store some of them meanwhile, the rows go
into a temporary staging table instead and one `INSERT ... SELECT ... ON CONFLICT (row_key) DO
NOTHING` writes the rest, its row count being the number inserted.
COPY text escapes backslash, tab, newline and carriage return and writes NULL as \\N, so no text
in a bill (a tab, a newline, a literal "\\N", a backslash) can split a row or forge a field.
Elsewhere (SQLite: tests, the zero-configuration setup) the stored keys are looked up in batches
and the new rows go in with executemany.
"""

from __future__ import annotations

import json
from decimal import Decimal

import numpy as np
import pandas as pd
from django.db import IntegrityError, connection, transaction

from procurement.billing.enrich import object_codes
from procurement.billing.models import SpendRecord

KEY_QUERY_BATCH = 900  # under SQLite's 999 bound on query parameters
INSERT_BATCH = 2000
STAGE = "billing_spend_stage"
# The stored columns, in COPY order; each comes from the enriched frame's column of the same name
# except the import id and the row key.
COLUMNS = [
    "billing_import_id", "row_key", "source_row", "charge_period_start", "charge_period_end",
    "billing_period_start", "charge_category", "is_correction", "provider", "billing_account_id",
    "sub_account_id", "sub_account_name", "region", "availability_zone", "resource_id", "resource_type",
    "service_category", "sku_id", "instance_type", "gpu_id", "gpus_per_instance", "pricing_category",
    "commitment_discount_id", "commitment_status", "consumed_quantity", "consumed_unit", "instance_hours",
    "gpu_hours", "billed_cost", "effective_cost", "list_cost", "contracted_cost", "currency", "team",
    "project", "environment", "tags",
]  # fmt: skip
NULLABLE_NUMBERS = ("consumed_quantity", "list_cost", "contracted_cost")  # "" is NULL, not 0
_TIMES = ("charge_period_start", "charge_period_end", "billing_period_start")


class SpendWriter:
    """One per file, inside the file's transaction; `close()` drops the staging table."""

    def __init__(self, import_id: int):
        self.import_id = import_id
        self.postgres = connection.vendor == "postgresql"
        self.table = connection.ops.quote_name(SpendRecord._meta.db_table)
        self.staging = False  # the staging table is made on first need (a concurrent import)

    def write(self, rows: pd.DataFrame, keys: np.ndarray) -> int:
        if not len(rows):
            return 0
        return self._copy_and_merge(rows, keys) if self.postgres else self._insert_new(rows, keys)

    def close(self) -> None:
        if self.staging:
            with connection.cursor() as cursor:
                cursor.execute(f"DROP TABLE {STAGE}")
            self.staging = False

    # PostgreSQL ---------------------------------------------------------------------------------
    def _copy_and_merge(self, rows: pd.DataFrame, keys: np.ndarray) -> int:
        fresh = self._not_stored(keys)
        if not len(fresh):
            return 0
        buffer = copy_text(rows.iloc[fresh], keys[fresh], self.import_id)
        try:
            with transaction.atomic():
                self._copy(self.table, buffer)
            return len(fresh)
        except IntegrityError:
            pass  # another import stored some of these rows meanwhile: merge instead
        self._make_staging()
        self._copy(STAGE, buffer)
        names = ", ".join(COLUMNS)
        with connection.cursor() as cursor, connection.wrap_database_errors:
            cursor.execute(
                f"INSERT INTO {self.table} ({names}) SELECT {names} FROM {STAGE}"  # noqa: S608 (names from the model)
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

    def _not_stored(self, keys: np.ndarray) -> np.ndarray:
        """Positions of the keys not stored yet (one query; the unique index answers it). The keys go
        as one comma-joined text (hex digits only) split by the server: a 50,000-element array
        parameter costs more to adapt than the query takes."""
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT row_key FROM {self.table} WHERE row_key = ANY(string_to_array(%s, ',')::uuid[])",  # noqa: S608
                [",".join(keys.tolist())],
            )
            stored = [key.hex for (key,) in cursor.fetchall()]
        return np.flatnonzero(~np.isin(keys, stored)) if stored else np.arange(len(keys))

    @staticmethod
    def _copy(table: str, buffer: str) -> None:
        with connection.cursor() as cursor, connection.wrap_database_errors:
            with cursor.cursor.copy(f"COPY {table} ({', '.join(COLUMNS)}) FROM STDIN") as copy:
                copy.write(buffer)

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


def _python_values(rows: pd.DataFrame, name: str) -> list:
    values = rows[name]
    if name in _TIMES:
        adapt = connection.ops.adapt_datetimefield_value
        return [None if pd.isna(v) else adapt(v.to_pydatetime()) for v in values]
    if name == "tags":
        return _field_texts(values).tolist()
    if name in NULLABLE_NUMBERS or name in ("billed_cost", "effective_cost"):
        return [Decimal(v) if v != "" else None for v in values.to_numpy(dtype=object)]
    if name == "source_row":
        return values.astype(int).tolist()
    if name == "is_correction":
        return values.astype(bool).tolist()
    return values.to_numpy(dtype=object).tolist()


def copy_text(rows: pd.DataFrame, keys: np.ndarray, import_id: int) -> str:
    """The rows as one COPY text-format buffer, in COLUMNS order."""
    fields = [[str(import_id)] * len(rows), keys.tolist()]
    fields += [_copy_field(rows, name).tolist() for name in COLUMNS[2:]]
    return "\n".join(map("\t".join, zip(*fields, strict=True))) + "\n"


def _copy_field(rows: pd.DataFrame, name: str) -> np.ndarray:
    values = rows[name]
    if name == "tags":
        codes, tag_sets = object_codes(values)
        texts = [_escape(json.dumps(value, sort_keys=True)) for value in tag_sets]
    elif name in _TIMES:
        codes, uniques = pd.factorize(values)
        texts = list(uniques.tz_convert("UTC").strftime("%Y-%m-%d %H:%M:%S.%f+00"))
    else:
        if name in NULLABLE_NUMBERS:
            values = values.where(values != "", None)
        codes, uniques = pd.factorize(values.astype(object))
        texts = [_escape(_text(value)) for value in uniques]
    table = np.empty(len(texts) + 1, dtype=object)
    table[:-1] = texts
    table[-1] = "\\N"  # factorize codes a missing value -1: the last entry
    return table[codes]


def _text(value) -> str:
    if isinstance(value, bool | np.bool_):
        return "t" if value else "f"
    return str(value)


def _escape(text: str) -> str:
    if "\\" in text or "\t" in text or "\n" in text or "\r" in text:
        return text.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")
    return text


def _field_texts(tags: pd.Series) -> np.ndarray:
    """JSON of each row's tags, dumped once per distinct tag set."""
    codes, tag_sets = object_codes(tags)
    texts = np.empty(len(tag_sets), dtype=object)
    texts[:] = [json.dumps(value, sort_keys=True) for value in tag_sets]
    return texts[codes]
