"""Spend rows from PostgreSQL as engine columns, without a Python object per value.

Fetching a million rows through the cursor builds some 20 million Python values (Decimal, datetime,
str, dict) only to pack them into numpy again: 20-30 s for the review's read alone (docs/performance.md,
"Billing review"). Here the server writes the rows as one CSV stream (`COPY (SELECT ...) TO STDOUT`)
of plain column values, and Arrow parses it on every core straight into typed columns: timestamps
(in UTC), money and hours as 128-bit decimals of the columns' six decimals, whose unscaled integers
are exactly the engine's micro-units, and text dictionary-encoded, i.e. already as the review's
categories. The server does no arithmetic per row: a cast per value (`x * 1000000` as bigint, epoch
extraction) costs more than formatting the value (measured on PostgreSQL 15: 2.3 s to write a million
rows of these columns, 4.7 s with the casts).

The GPU's slug is not joined in: the rows carry the GPU model's id and the few dozen slugs are read
apart. Right after a bulk import, before autovacuum has analyzed the table, the planner estimates one
spend row and joins the GPU table by a nested loop, a scan of every GPU model per spend row: 1.1 s of a
million rows' 2.9 s on the server (PostgreSQL 15, 2026-12-02).

The values are the same ones `selectors.spend_frame` builds on SQLite from fetched rows; a test reads
the same stored rows both ways and compares the frames.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import pyarrow as pa
from pyarrow import csv

from billing.review.commitment_attribution import (
    COMMITMENT_COLUMNS,
    COMMITMENT_TEXT_COLUMNS,
    with_commitment_columns,
)
from billing.review.engine import REVIEW_COLUMNS, TEXT_COLUMNS, empty_frame, stored_amount_too_large

# Each column of spend_table as the SQL that selects it, in the order snapshots store them
COLUMN_SQL = {
    "charge_period_start": "r.charge_period_start AT TIME ZONE 'UTC' AS charge_period_start",
    "charge_period_end": "r.charge_period_end AT TIME ZONE 'UTC' AS charge_period_end",
    **{
        name: f"r.{name}"
        for name in (
            "charge_category",
            "provider",
            "region",
            "resource_id",
            "instance_type",
            "gpu_id",
            "gpus_per_instance",
            "pricing_category",
            "commitment_status",
            "team",
            "project",
            "currency",
        )
    },
    "billed_micros": "r.billed_cost AS billed_micros",
    "effective_micros": "r.effective_cost AS effective_micros",
    "list_micros": "r.list_cost AS list_micros",
    "instance_hours_micros": "r.instance_hours AS instance_hours_micros",
    "gpu_hours_micros": "r.gpu_hours AS gpu_hours_micros",
    "interruptible": "r.tags ->> %s AS interruptible",  # the one parameter: the interruptible tag's key
    "workload": "COALESCE(r.tags ->> 'workload', '') AS workload",
    **{
        name: f"r.{name}"
        for name in (
            "service_category",
            "commitment_discount_id",
            "commitment_type",
            "commitment_family",
            "commitment_gpu_scope",
        )
    },
    "commitment_end": "r.commitment_end AT TIME ZONE 'UTC' AS commitment_end",
}
GPU_SLUGS = "SELECT id, slug FROM pricing_gpumodel"
TEXT = pa.dictionary(pa.int32(), pa.string())
SIX_DECIMALS = pa.decimal128(20, 6)  # models.MONEY and HOURS: the unscaled integer is the micro-unit
MICRO_COLUMNS = [name for name in REVIEW_COLUMNS if name.endswith("_micros")]
TIME_COLUMNS = ["charge_period_start", "charge_period_end", "commitment_end"]
FRAME_COLUMNS = REVIEW_COLUMNS + COMMITMENT_COLUMNS
ENGINE_TEXT = (*TEXT_COLUMNS, *COMMITMENT_TEXT_COLUMNS)
COLUMN_TYPES = {
    **dict.fromkeys(MICRO_COLUMNS, SIX_DECIMALS),
    **dict.fromkeys(TIME_COLUMNS, pa.timestamp("us")),
    "gpus_per_instance": pa.float64(),
    "gpu_id": pa.int64(),
    "commitment_gpu_scope": pa.bool_(),
    **dict.fromkeys((*(c for c in ENGINE_TEXT if c != "gpu"), "interruptible"), TEXT),
}
# PostgreSQL's CSV writes booleans as t and f
CONVERT = csv.ConvertOptions(
    column_types=COLUMN_TYPES, strings_can_be_null=False, true_values=["t"], false_values=["f"]
)
# Text from a bill may hold a newline inside a quoted value; Arrow must then not split blocks on one
PARSE = csv.ParseOptions(newlines_in_values=True)


def spend_columns(
    cursor, where: str, params: list, interruptible_tag: str, columns: Sequence[str] = FRAME_COLUMNS
) -> pd.DataFrame:
    """The rows `where` selects, as REVIEW_COLUMNS (or the engine `columns` asked, in that order) with
    the text columns as sorted categories. `cursor` is a psycopg 3 cursor (connection.cursor().cursor)."""
    table = spend_table(cursor, where, params, interruptible_tag, columns=table_columns(columns))
    return engine_frame(table, gpu_slugs(cursor), columns)


def table_columns(columns: Sequence[str]) -> list[str]:
    """spend_table's columns that hold the engine `columns` (the GPU slug is mapped from gpu_id), in
    spend_table's order."""
    asked = {"gpu_id" if name == "gpu" else name for name in columns}
    unknown = asked - COLUMN_SQL.keys()
    if unknown:
        raise ValueError(f"not a spend column: {', '.join(sorted(unknown))}")
    return [name for name in COLUMN_SQL if name in asked]


def spend_table(
    cursor, where: str, params: list, interruptible_tag: str, columns: Sequence[str] | None = None
) -> pa.Table:
    """The rows `where` selects as Arrow parsed them from the server's CSV stream (COLUMN_TYPES):
    the form spend_snapshot.py stores, before engine_frame turns it into the engine's columns. Only
    `columns` (spend_table's names, in its order: table_columns) when given: a plan reads a dozen."""
    data = bytearray()
    chosen = list(COLUMN_SQL) if columns is None else table_columns(columns)
    select = f"SELECT {', '.join(COLUMN_SQL[name] for name in chosen)} FROM billing_spendrecord r"  # noqa: S608 (COLUMN_SQL's own text)
    tag = [interruptible_tag] if "interruptible" in chosen else []
    query = f"COPY ({select} {where}) TO STDOUT (FORMAT csv, HEADER)"
    with cursor.copy(query, [*tag, *params]) as copy:
        for block in copy:
            data += block
    table = csv.read_csv(pa.py_buffer(data), parse_options=PARSE, convert_options=CONVERT)
    del data
    return table


def gpu_slugs(cursor) -> dict[int, str]:
    """GPU model id -> slug. Read after the rows: every GPU id they hold was there when they were read."""
    cursor.execute(GPU_SLUGS)
    return dict(cursor.fetchall())


def engine_frame(
    table: pa.Table, slugs: dict[int, str], columns: Sequence[str] = FRAME_COLUMNS
) -> pd.DataFrame:
    """spend_table's columns (one table, or several concatenated) as the engine's REVIEW_COLUMNS, or
    the engine `columns` asked (which `table` must hold), in that order."""
    if table.num_rows == 0:
        empty = empty_frame()  # REVIEW_COLUMNS, as before the commitment columns
        return empty if list(columns) == FRAME_COLUMNS else with_commitment_columns(empty)[list(columns)]
    table = table.unify_dictionaries()
    built = {name: _column(table.column(name), name) for name in columns if name != "gpu"}
    if "gpu" in columns:
        built["gpu"] = _gpu_category(table.column("gpu_id"), slugs)
    # not copied into pandas' blocks: a million rows' frame would be held twice for a moment
    return pd.DataFrame({name: built[name] for name in columns}, copy=False)


def _gpu_category(ids: pa.ChunkedArray, slugs: dict[int, str]) -> pd.Categorical:
    """The GPU slug of each row (none, or a model gone since: ""), as a sorted category."""
    ids = ids.combine_chunks().fill_null(0).to_numpy()  # model ids start at 1: 0 is "no GPU"
    top = max(int(ids.max()), max(slugs, default=0))
    slug_of = np.full(top + 1, "", dtype=object)
    for model_id, slug in slugs.items():
        slug_of[model_id] = slug
    used = np.zeros(top + 1, dtype=bool)
    used[ids] = True
    categories = np.array(sorted(set(slug_of[used])), dtype=object)
    code_of = np.searchsorted(categories, slug_of).astype(np.int64)  # only the used ids are looked up
    return pd.Categorical.from_codes(code_of[ids], categories=categories)


def _column(values: pa.ChunkedArray, name: str):
    if name in ENGINE_TEXT:
        return _sorted_category(values)
    if name == "commitment_gpu_scope":
        return values.combine_chunks().fill_null(False).to_numpy(zero_copy_only=False).astype(bool)
    if name == "interruptible":  # the tag's value, as selectors.spend_frame reads it: "true" in any case
        combined = values.combine_chunks()
        flags = np.array([str(v).lower() == "true" for v in combined.dictionary.to_pylist()], dtype=bool)
        return flags[combined.indices.to_numpy(zero_copy_only=False)]
    if name in TIME_COLUMNS:
        return pd.to_datetime(values.to_numpy(), utc=True).as_unit("ns")
    if name in MICRO_COLUMNS:
        combined = values.combine_chunks()
        if pa.types.is_int64(combined.type):  # exact_micros' form (a snapshot's)
            return combined.to_numpy(zero_copy_only=False).copy()
        return _micros(combined, name)
    return np.nan_to_num(values.to_numpy(zero_copy_only=False), nan=0.0)  # gpus_per_instance: NULL as 0


def exact_micros(table: pa.Table) -> pa.Table:
    """`table` (spend_table's) with its money and hours as int64 micro-units, NULL as 0: the same
    integers engine_frame takes from the decimals, in half the bytes (a 128-bit decimal is also many
    times slower to compress and decompress)."""
    for name in MICRO_COLUMNS:
        values = pa.array(_micros(table.column(name).combine_chunks(), name), pa.int64())
        table = table.set_column(table.schema.get_field_index(name), name, values)
    return table


def _micros(values: pa.Decimal128Array, name: str) -> np.ndarray:
    """The unscaled integers of 128-bit decimals (little-endian two's complement), NULL as 0."""
    words = np.frombuffer(values.buffers()[1], dtype=np.int64)[
        2 * values.offset : 2 * (values.offset + len(values))
    ]
    low, high = words[0::2], words[1::2]
    if not np.array_equal(high, low >> 63):  # the high word is only the sign: the value fits in int64
        raise stored_amount_too_large(name)
    if values.null_count:
        low = np.where(values.is_null().to_numpy(zero_copy_only=False), 0, low)
    return low.copy()


def _sorted_category(values: pa.ChunkedArray) -> pd.Categorical:
    """The engine's category form (review.text_category): categories sorted, as Python strings."""
    combined = values.combine_chunks()  # one dictionary after unify_dictionaries
    names = np.asarray(combined.dictionary.to_pylist(), dtype=object)
    codes = combined.indices.to_numpy(zero_copy_only=False)
    used = np.bincount(codes, minlength=len(names)) > 0
    if not used.all():  # rows filtered out of a snapshot leave their names behind: only the rows' own
        codes = (np.cumsum(used) - 1)[codes]
        names = names[used]
    order = np.argsort(names, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return pd.Categorical.from_codes(rank[codes], categories=names[order])
