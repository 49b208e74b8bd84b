"""Each import's rows as an immutable Parquet dataset, partitioned by charge month (issue 28, item 1).

An import writes `import=<id>/month=YYYY-MM/part-NNNNN.parquet` under the dataset folder
(settings.BILLING_DATASET_DIR) or S3 prefix (BILLING_DATASET_URL, location.py): first into a hidden
`.incoming-*` folder, chunk by chunk, then renamed into place (uploaded, for S3) when the file is whole, so a reader never sees half an import and a bad file leaves
nothing behind. PostgreSQL records the files (models.BillingImportFile) beside the import and its
checksum; a reader lists the files of the months it needs from those records, never from the folder.

Re-importing a file with the same checksum and format records the first import's files again and
writes nothing. The same rows in two files carry the same key in both datasets (`row_key_hi`,
`row_key_lo`), and a reader counts each key once.

The columns are the review's (money and hours as exact int64 micro-units, rounded half away from zero
at 6 decimals as PostgreSQL's NUMERIC(20, 6) stores them; the consumed quantity as an exact
decimal(38, 6); text as plain strings, "" for none) plus what
the invoice, planning and finance views read, and every other column the import normalizes (the
dataset is where a bill's lines are kept: nothing of them is a PostgreSQL row).
"""

from __future__ import annotations

import contextlib
import functools
import json
import shutil
import tempfile
import uuid
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from billing.imports.codes import codes_and_values, object_array
from billing.imports.enrich import tag_codes
from billing.storage.location import S3Root

MICRO = Decimal(1_000_000)
TEXT_COLUMNS = [
    "charge_category",
    "provider",
    "billing_account_id",
    "sub_account_id",
    "sub_account_name",
    "region",
    "availability_zone",
    "resource_id",
    "resource_type",
    "sku_id",
    "instance_type",
    "gpu",
    "pricing_category",
    "commitment_status",
    "commitment_discount_id",
    "commitment_type",
    "commitment_family",
    "service_category",
    "consumed_unit",
    "currency",
    "team",
    "project",
    "environment",
    "tags",
]
TIME_COLUMNS = ["charge_period_start", "charge_period_end", "billing_period_start", "commitment_end"]
FLAG_COLUMNS = ["is_correction", "is_refund", "commitment_gpu_scope"]
# stored column -> dataset column of exact micro-units (a missing amount is NULL, as in the database)
MICRO_COLUMNS = {
    "billed_cost": "billed_micros",
    "effective_cost": "effective_micros",
    "list_cost": "list_micros",
    "contracted_cost": "contracted_micros",
    "instance_hours": "instance_hours_micros",
    "gpu_hours": "gpu_hours_micros",
    "gpus_per_instance": "gpus_per_instance_micros",
}
# The consumed quantity (FOCUS ConsumedQuantity, CUR line_item_usage_amount, Azure Quantity) is not money
# and nothing sums it: it is kept exactly as the bill wrote it, at 6 decimals (half away from zero, as
# the money), in a decimal of 38 digits, 32 before the point. int64 micro-units stopped near 9.2e12, and
# a real export goes past that in one line: Google's detailed-export sample bills 16,998,309,356,466,500
# byte-seconds of N1 RAM (docs.cloud.google.com/billing/docs/how-to/export-data-bigquery-tables/
# detailed-usage, "Sample results"). Not float64: above 2^53 (9.0e15) it no longer holds every integer,
# so a stored quantity could differ from the file's. Datasets written before (issue 28, fix28) hold it as
# int64 micro-units in QUANTITY_MICROS_COLUMN, which stays in the schema, NULL in new files: a reader
# (read_parquet with union_by_name, as every one is) gets both columns and takes the micro-units where
# QUANTITY_COLUMN is NULL or absent (tests/billing/stored.py; no review sums a quantity).
QUANTITY_COLUMN, QUANTITY_MICROS_COLUMN = "consumed_quantity", "consumed_quantity_micros"
QUANTITY_SCALE = 6
QUANTITY_TYPE = pa.decimal128(38, QUANTITY_SCALE)
QUANTITY_LIMIT = Decimal(10) ** (QUANTITY_TYPE.precision - QUANTITY_SCALE)  # 1e32: what the type holds
SCHEMA = pa.schema(
    [
        ("row_key_hi", pa.uint64()),
        ("row_key_lo", pa.uint64()),
        ("source_row", pa.int64()),
        *((name, pa.timestamp("us", tz="UTC")) for name in TIME_COLUMNS),
        *((name, pa.string()) for name in TEXT_COLUMNS),
        *((name, pa.bool_()) for name in FLAG_COLUMNS),
        *((name, pa.int64()) for name in MICRO_COLUMNS.values()),
        (QUANTITY_MICROS_COLUMN, pa.int64()),
        (QUANTITY_COLUMN, QUANTITY_TYPE),
    ]
)
# The longest text each column keeps and the most hours one line holds. Parquet has no such limits: these
# are those of the PostgreSQL table bill lines were kept in until migration 0014 dropped it (varchar
# lengths; hours as NUMERIC(18, 6), so under 10^12), kept as they were so that a file refused then is
# refused now, naming its row and column (imports/checks.py checks each chunk before it is written).
TEXT_LIMITS = {
    "charge_category": 12,
    "provider": 100,
    "billing_account_id": 200,
    "sub_account_id": 200,
    "sub_account_name": 200,
    "region": 100,
    "availability_zone": 100,
    "resource_id": 500,
    "resource_type": 200,
    "service_category": 100,
    "sku_id": 200,
    "instance_type": 150,
    "pricing_category": 12,
    "commitment_discount_id": 500,
    "commitment_status": 8,
    "consumed_unit": 50,
    "currency": 3,
    "team": 100,
    "project": 100,
    "environment": 100,
    "commitment_type": 100,
    "commitment_family": 50,
}
HOURS_LIMIT = Decimal(10) ** 12
# What is written: the text columns as Arrow dictionaries (the distinct texts and a code per row, as the
# import holds them), which the Parquet writer stores as its own dictionary pages without hashing each
# row's text again; the files' columns are plain text (no Arrow schema is stored: every reader, DuckDB
# and pyarrow, reads them as strings). Statistics (min/max per row group) only for the columns that are
# not text: readers filter row groups by charge period, and min/max of long texts cost more to compute
# than the rest of the write (issue 28: 1.2 of 4.6 s of a 1M-row import).
TEXT = pa.dictionary(pa.int32(), pa.string())
WRITE_SCHEMA = pa.schema([pa.field(f.name, TEXT if f.name in TEXT_COLUMNS else f.type) for f in SCHEMA])
STATISTICS = [name for name in SCHEMA.names if name not in TEXT_COLUMNS]
# Columns of a value per row (the row keys, random 64-bit numbers, and the row numbers): a dictionary of
# them is built only to be given up past its page limit, and zstd cannot shrink random bits. Written plain,
# the keys uncompressed (issue 28: the writer's thread took 15-25% less CPU time on 1M bench rows, the files
# 16% smaller; every other column keeps its dictionary and is compressed, below).
DISTINCT_COLUMNS = ("row_key_hi", "row_key_lo", "source_row")
DICTIONARY_COLUMNS = [name for name in SCHEMA.names if name not in DISTINCT_COLUMNS]
# LZ4 (LZ4_RAW) rather than zstd (Arrow's level 1): the pages left to compress are dictionary pages and
# RLE codes, which zstd shrinks little more than LZ4 does (issue 28, fast28b: the 11 chunk tables of the 1M
# bench CSV written as the writer's thread writes them, medians of three at load 8: 0.76 CPU s zstd, 0.63
# s LZ4, 0.63 s uncompressed; 28.4 MB zstd, 29.2 MB LZ4, 30.5 MB uncompressed). DuckDB and pyarrow read
# both, and files written before stay zstd: a reader takes each file's codec from the file.
COMPRESSION = {name: "none" if name in DISTINCT_COLUMNS[:2] else "lz4" for name in SCHEMA.names}
# The row numbers count up by one: delta-encoded they take 14 KB a million rows instead of 1 MB, and a
# third of the CPU time of zstd over the plain ones (pyarrow 26)
ENCODINGS = {"source_row": "DELTA_BINARY_PACKED"}
# Row groups a month's file takes before the next part file of the month is begun. Arrow's Parquet writer
# keeps each row group's metadata in memory until the file is closed, 36 kB of the C heap a row group of
# WRITE_SCHEMA (pyarrow 26, measured: 400 row groups of 1,000 rows); a chunk gives each month it holds
# a row group, so an open month's file grew the import's memory with the file (issue 28: 318 row groups,
# 11 MiB, at 5M bench rows; 2.3 MiB at 1M). Bounded at 16 a file: at most 0.6 MiB a month open.
ROW_GROUPS_PER_FILE = 16


@dataclass(frozen=True)
class DatasetFile:
    path: str  # relative to the dataset folder
    month: str  # YYYY-MM of ChargePeriodStart (UTC)
    rows: int
    size_bytes: int


def dataset_frame(rows: pd.DataFrame, lanes: np.ndarray | None, order: np.ndarray | None = None) -> pa.Table:
    """Enriched, keyed rows of one chunk (store.py) as a table of SCHEMA; with no `lanes`, the keys are
    left null, for `keyed` to give. Given an `order` (month_order's), the table's rows are the chunk's
    in that order: each column taken in it as it is converted (a copy made anyway), not the table again."""
    pick = _picker(order)
    columns = {"row_key_hi": None, "row_key_lo": None, "source_row": pick(rows["source_row"])}
    if lanes is not None:
        columns["row_key_hi"], columns["row_key_lo"] = pick(lanes[:, 0]), pick(lanes[:, 1])
    for name in TIME_COLUMNS:
        columns[name] = _times(rows[name], order) if name in rows else None
    for name in TEXT_COLUMNS:
        columns[name] = (
            _tags(rows, order)
            if name == "tags"
            else _text(rows["gpu_slug"] if name == "gpu" else rows.get(name), len(rows), name, order)
        )
    for name in FLAG_COLUMNS:
        columns[name] = pick(rows[name].astype(bool)) if name in rows else np.zeros(len(rows), dtype=bool)
    for stored, name in MICRO_COLUMNS.items():
        columns[name] = (
            _micros(rows[stored], stored, order) if stored in rows else pa.nulls(len(rows), pa.int64())
        )
    columns[QUANTITY_MICROS_COLUMN] = None
    columns[QUANTITY_COLUMN] = _quantities(rows[QUANTITY_COLUMN], order) if QUANTITY_COLUMN in rows else None
    arrays = [
        pa.nulls(len(rows), field.type) if columns[field.name] is None else _array(columns[field.name], field)
        for field in WRITE_SCHEMA
    ]
    return pa.Table.from_arrays(arrays, schema=WRITE_SCHEMA)


def keyed(table: pa.Table, lanes: np.ndarray, order: np.ndarray | None = None) -> pa.Table:
    """`table` (dataset_frame's, without keys) with the row keys (n x 2 uint64 lanes, keys.py), in the
    `order` the table was made in (dataset_frame's)."""
    for number, name in enumerate(("row_key_hi", "row_key_lo")):
        lane = lanes[:, number] if order is None else lanes[order, number]
        table = table.set_column(number, WRITE_SCHEMA.field(name), pa.array(lane, pa.uint64()))
    return table


def month_order(rows: pd.DataFrame) -> np.ndarray | None:
    """The order that puts a chunk's rows by charge month (numpy's calendar months of ChargePeriodStart,
    UTC, as the writer splits them), each month's in file order; None where they are in that order
    already (a chunk of one month: a CUR or FOCUS export is a month a file). dataset_frame takes each
    column in it as it converts it, so that the writer slices each month's rows out of the table without
    a copy (issue 28: a take of every column a month cost 0.1-0.2 CPU s a million bench rows, their
    6 months a chunk)."""
    months = _months(_stamps(rows["charge_period_start"]).array.asi8)
    return None if _in_order(months) else _month_order(months)


def _months(micros: np.ndarray) -> np.ndarray:
    """Calendar month (numpy's datetime64[M] as int64) of each UTC microsecond timestamp. Where the
    chunk's days span at most DAY_TABLE days, each day's month is looked up in a table of the span's
    days (an integer division and a gather a row, where numpy's calendar conversion of every row was 2-3
    ms a 100,000-row chunk: issue 28); the same months (test_import_speed)."""
    if len(micros):
        days = micros // DAY_MICROS  # floor: a time before 1970 is in the day it falls on
        low, high = int(days.min()), int(days.max())
        if high - low < DAY_TABLE:
            table = np.arange(low, high + 1).astype("datetime64[D]").astype("datetime64[M]").view(np.int64)
            return table[days - low]
    return micros.astype("datetime64[us]").astype("datetime64[M]").view(np.int64)


DAY_MICROS = 86_400_000_000
DAY_TABLE = 1 << 16  # days (179 years): beyond, or with a NaT among them, numpy's conversion of each row


def _in_order(months: np.ndarray) -> bool:
    return bool(np.all(months[1:] >= months[:-1]))


def _picker(order: np.ndarray | None) -> Callable:
    """The values (a column or an array) as they are, or as an array in `order`."""
    return (lambda values: values) if order is None else (lambda values: np.asarray(values)[order])


def _stamps(values: pd.Series) -> pd.Series:
    return pd.to_datetime(values, utc=True).dt.as_unit("us")


def _times(values: pd.Series, order: np.ndarray | None) -> pd.Series | pa.Array | None:
    """The column as UTC microseconds (in `order`); None (a column of nulls, dataset_frame) where every row
    is missing, as a bill's commitment end and billing period often are: nothing converted or taken."""
    if not values.notna().any():
        return None
    stamps = _stamps(values)
    if order is None:
        return stamps
    missing = stamps.isna().to_numpy()
    mask = missing[order] if missing.any() else None  # taken in order only where a row is missing
    return pa.array(stamps.array.asi8[order], mask=mask, type=pa.timestamp("us", tz="UTC"))


def _array(values, field: pa.Field) -> pa.Array:
    if isinstance(values, pa.Array):
        return values
    return pa.array(values, type=field.type, from_pandas=True)


def _text(values: pd.Series | None, count: int, name: str, order: np.ndarray | None = None) -> pa.Array:
    """The column as a dictionary array: its distinct texts and a code per row (in `order`)."""
    if values is None:
        return _coded([""], np.zeros(count, dtype=np.int32))
    codes, uniques = _narrow_codes(values)
    return _coded(["" if v is None or v is pd.NA else str(v) for v in uniques], codes, order)


def _narrow_codes(values: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """codes_and_values, a categorical's codes as it holds them (int8 for up to 127 values): widened once,
    to the dictionary's int32, by _coded, not first to int64 as well."""
    return codes_and_values(values)


def _tags(rows: pd.DataFrame, order: np.ndarray | None = None) -> pa.Array:
    """Parsed dicts, shared between rows: one JSON text per distinct object ("" without the column)."""
    if "tags" not in rows:
        return _text(None, len(rows), "tags")
    codes, uniques = tag_codes(rows)
    texts = [v if isinstance(v, str) else json.dumps(v or {}, sort_keys=True) for v in uniques]
    return _coded(texts, codes, order)


def _coded(texts: list[str], codes: np.ndarray, order: np.ndarray | None = None) -> pa.DictionaryArray:
    """A dictionary array of `texts` by code, a missing one (-1) as "", over a dictionary of distinct texts.

    The dictionary must hold each text once: given one with a text twice (a "" appended for the missing
    code beside a "" of the column's own, or two tag sets written as the same JSON), Arrow's Parquet
    writer gave up on the column's dictionary and wrote every row's text plainly (issue 28: 11 of the
    24 text columns of the bench's files, 4 MB a column per million rows before compression; the
    dataset of 1M rows 30.2 MB before, 28.4 MB after). The codes index `texts` by construction: Arrow does not check each row's
    again (safe=False; the text columns' conversion was a fifth of dataset_frame). The rows in `order`
    where one is given (dataset_frame)."""
    low, high = _bounds(codes)
    if low < 0:
        texts = [*texts, ""]
    if low == high:  # one code in every row (a column of one value, or none): no row taken or compared,
        # a dictionary of that one text over shared zeros (the same rows; an Arrow array is immutable)
        return pa.DictionaryArray.from_arrays(
            pa.array(_zeros(len(codes)), type=pa.int32()),
            pa.array([texts[low]], type=pa.string()),  # low -1: the "" appended, texts' last
            safe=False,
        )
    # a copy either way: the caller's codes stay as they are
    indices = codes.astype(np.int32) if order is None else codes[order].astype(np.int32, copy=False)
    if low < 0:
        indices[indices < 0] = len(texts) - 1
    if len(set(texts)) < len(texts):  # a text twice: each code to its text's first place
        merged, distinct = pd.factorize(object_array(texts))
        indices = merged.astype(np.int32)[indices]
        texts = list(distinct)
    dictionary = pa.array(texts, type=pa.string())
    return pa.DictionaryArray.from_arrays(pa.array(indices, type=pa.int32()), dictionary, safe=False)


@functools.lru_cache(maxsize=4)
def _zeros(count: int) -> np.ndarray:
    """`count` int32 zeros, read-only, shared by the one-value columns of chunks of that length."""
    zeros = np.zeros(count, dtype=np.int32)
    zeros.flags.writeable = False
    return zeros


def _bounds(codes: np.ndarray) -> tuple[int, int]:
    """The smallest and largest code (-1: a missing value), on the codes as narrow as they come; (0, 0)
    for no rows. Where they are equal every row holds the same code (issue 28: 17 of the bench's 24 text
    columns, and many of a real bill's, hold one value a chunk; their rows were taken in month order and
    widened all the same)."""
    if not len(codes):
        return 0, 0
    return int(codes.min()), int(codes.max())


def _spread(distinct: pa.Array, codes: np.ndarray, order: np.ndarray | None = None) -> pa.Array:
    """Each row's value of `distinct` by its code, a missing one (-1) as `distinct`'s last value: taken
    in Arrow, never as one Python object a row; the rows in `order` where one is given."""
    low, high = _bounds(codes)
    if low == high:  # one value in every row: repeated, no row taken
        return pa.repeat(distinct[low if low >= 0 else len(distinct) - 1], len(codes))
    codes = codes if order is None else codes[order]
    if distinct.type == pa.int64():  # taken by numpy; a missing code (-1) takes the last value (None)
        values = np.asarray(distinct.fill_null(0))[codes]
        nulls = None
        if low < 0 or distinct.null_count > 1:  # a row's null: a missing code, or a value without micros
            nulls = np.asarray(distinct.is_null())[codes]
        return pa.array(values, mask=nulls, type=pa.int64())
    # the codes as narrow as they come; a missing one (-1) a null index, which takes a null as distinct's
    # last value (None) is: no row's code widened or rewritten
    return distinct.take(pa.array(codes, mask=codes < 0 if low < 0 else None))


def _micros(values: pd.Series, column: str, order: np.ndarray | None = None) -> pa.Array:
    """Exact micro-units of each distinct value, computed once (a bill repeats its amounts)."""
    codes, uniques = codes_and_values(values)
    table = []
    for number, value in enumerate(uniques):
        try:
            table.append(_known_micro(value))
        except MicrosOutOfRange:
            raise MicrosOutOfRange(value, column, int(np.argmax(codes == number))) from None
    return _spread(pa.array(table + [None], type=pa.int64()), codes, order)


def _quantities(values: pd.Series, order: np.ndarray | None = None) -> pa.Array:
    """Each distinct quantity as an exact decimal of QUANTITY_TYPE, converted once."""
    codes, uniques = codes_and_values(values)
    table = []
    for number, value in enumerate(uniques):
        try:
            quantity = _cached_quantity(value)
        except TypeError:  # unhashable
            quantity = _quantity(value)
        if quantity is not None and abs(quantity) >= QUANTITY_LIMIT:
            raise MicrosOutOfRange(value, QUANTITY_COLUMN, int(np.argmax(codes == number)))
        table.append(quantity)
    return _spread(pa.array(table + [None], type=QUANTITY_TYPE), codes, order)


def _quantity(value) -> Decimal | None:
    if value is None or value is pd.NA or value == "" or (isinstance(value, float) and np.isnan(value)):
        return None
    return Decimal(str(value)).quantize(Decimal(1).scaleb(-QUANTITY_SCALE), rounding=ROUND_HALF_UP)


class MicrosOutOfRange(ValueError):
    """An amount NUMERIC(20, 6) holds but int64 micro-units do not (over about 9.2 trillion): its value,
    its column and its position in the chunk."""

    def __init__(self, value, column: str = "", position: int = 0):
        super().__init__(value)
        self.value, self.column, self.position = value, column, position


def _known_micro(value) -> int | None:
    """_micro, remembered across chunks and imports (a bill repeats its amounts from chunk to chunk: at 1M
    bench rows 19,481 conversions, 221 a column a chunk, nearly all seen in the chunk before). Keyed by
    type and value (equal values give equal micro-units); one that cannot be a key (a signaling NaN) is
    converted each time, and an amount out of range raises each time (an error is not remembered)."""
    try:
        return _cached_micro(value)
    except TypeError:  # unhashable
        return _micro(value)


def _micro(value) -> int | None:
    if value is None or value is pd.NA or value == "" or (isinstance(value, float) and np.isnan(value)):
        return None
    micros = int((Decimal(str(value)) * MICRO).quantize(Decimal(1), rounding=ROUND_HALF_UP))
    if not -(2**63) <= micros < 2**63:
        raise MicrosOutOfRange(value)
    return micros


class DatasetWriter:
    """One per imported file: `write` each chunk's table, then `finish` (renames the whole dataset into
    place and names its files) or `abandon` (removes what was written).

    The Parquet encoding runs on a thread of its own (Arrow releases the GIL there) while the import
    prepares the next chunk; at most one chunk waits for it, and its error is raised by the next `write`
    or by `finish`."""

    def __init__(self, root: Path | S3Root):
        self.root = root if isinstance(root, S3Root) else Path(root)
        # an S3 root's files are written whole here first, then uploaded at `finish` (location.py)
        spool = Path(tempfile.gettempdir()) if isinstance(root, S3Root) else self.root
        self.incoming = spool / f".incoming-{uuid.uuid4().hex}"
        self._writers: dict[str, pq.ParquetWriter] = {}  # each month's open file
        self._parts: dict[str, str] = {}  # each month's open part
        self._groups: dict[str, int] = {}  # row groups in it
        self._rows: dict[str, int] = {}  # each part written ("month=YYYY-MM/part-NNNNN.parquet") -> rows
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="dataset-writer")
        self._pending: Future | None = None

    def write(self, table: pa.Table) -> None:
        self._wait()
        self._pending = self._thread.submit(self._write_table, table)

    def write_made(self, make_table: Callable[[], pa.Table]) -> None:
        """Write the table `make_table` gives, made on the writer's thread as well (its error, like a
        write's, raised by the next `write`, `wait` or `finish`): the import's own thread goes on to the
        next chunk meanwhile (store.py)."""
        self._wait()
        self._pending = self._thread.submit(lambda: self._write_table(make_table()))

    def wait(self) -> None:
        """Until what was given to write is written; raises its error."""
        self._wait()

    def _write_table(self, table: pa.Table) -> None:
        if table.num_rows == 0:
            return
        if table.schema != WRITE_SCHEMA:
            table = _encoded(table)
        months = table["charge_period_start"].to_numpy().astype("datetime64[us]").astype("datetime64[M]")
        self._write_months(table, months.view(np.int64))

    def _write_months(self, table: pa.Table, months: np.ndarray) -> None:
        """Each charge month's rows (numpy's calendar months, UTC) to its file. A table in month order
        (dataset_frame's, given month_order's order; a chunk of one month) is sliced, without a copy;
        otherwise the rows are ordered by month once (stable: in file order within a month), each
        month's taken in that order (a copy of one month, not of the whole chunk, held meanwhile)."""
        order = None if _in_order(months) else _month_order(months)
        ordered = months if order is None else months[order]
        bounds = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1], True])
        for first, last in zip(bounds[:-1], bounds[1:], strict=False):
            month = str(np.datetime_as_string(np.datetime64(int(ordered[first]), "M"), unit="M"))
            writer = self._writers.get(month) or self._open(month)
            rows = (
                table.slice(first, last - first) if order is None else table.take(pa.array(order[first:last]))
            )
            writer.write_table(rows)  # one row group: a chunk is under Arrow's 1Mi rows a row group
            part = self._parts[month]
            self._rows[part] = self._rows.get(part, 0) + int(last - first)
            self._groups[month] += 1
            if self._groups[month] >= ROW_GROUPS_PER_FILE:  # its metadata leaves memory (ROW_GROUPS_PER_FILE)
                self._writers.pop(month).close()

    def _wait(self) -> None:
        pending, self._pending = self._pending, None
        if pending is not None:
            pending.result()

    def _open(self, month: str) -> pq.ParquetWriter:
        folder = self.incoming / f"month={month}"
        folder.mkdir(parents=True, exist_ok=True)
        part = f"month={month}/part-{sum(p.startswith(f'month={month}/') for p in self._rows):05d}.parquet"
        self._parts[month], self._rows[part], self._groups[month] = part, 0, 0
        self._writers[month] = pq.ParquetWriter(
            self.incoming / part,
            WRITE_SCHEMA,
            compression=COMPRESSION,
            use_dictionary=DICTIONARY_COLUMNS,
            column_encoding=ENCODINGS,
            write_statistics=STATISTICS,
            store_schema=False,
        )
        return self._writers[month]

    def _close(self) -> None:
        try:
            self._wait()
        finally:
            self._thread.shutdown(wait=True)
            for writer in self._writers.values():
                writer.close()
            self._writers.clear()

    def finish(self, name: str) -> list[DatasetFile]:
        """Close the files and move the dataset to `name` under the root (an import's own folder).

        The callers name the folder after an import whose files no committed record names yet (a new
        import, in its own transaction; a backfill, under a row lock, of an import without files). A
        folder already there is therefore an orphan: left by an import whose transaction rolled back after
        its rename, or by a database flushed or restored since (ids then come back). It is replaced."""
        self._close()
        if not self._rows:
            self.abandon()
            return []
        if isinstance(self.root, S3Root):
            return self._upload(name)
        target = self.root / name
        if target.exists():
            shutil.rmtree(target)
        self.incoming.rename(target)  # one rename: the whole dataset appears at once
        files = []
        for part, rows in sorted(self._rows.items()):
            path = target / part
            files.append(
                DatasetFile(str(path.relative_to(self.root)), _month(part), rows, path.stat().st_size)
            )
        return files

    def _upload(self, name: str) -> list[DatasetFile]:
        """The whole dataset to `name` under the S3 root: no reader lists it before its records commit."""
        files = []
        for part, rows in sorted(self._rows.items()):
            files.append(
                DatasetFile(f"{name}/{part}", _month(part), rows, (self.incoming / part).stat().st_size)
            )
        try:
            self.root.upload(self.incoming, name)
        finally:
            shutil.rmtree(self.incoming, ignore_errors=True)
        return files

    def abandon(self) -> None:
        with contextlib.suppress(Exception):  # abandoned: what failed in the write no longer matters
            self._close()
        shutil.rmtree(self.incoming, ignore_errors=True)


def _month(part: str) -> str:
    """YYYY-MM of a part's path ("month=YYYY-MM/part-NNNNN.parquet")."""
    return part.split("/", 1)[0].removeprefix("month=")


def _month_order(months: np.ndarray) -> np.ndarray:
    """np.argsort(months, kind="stable") for a chunk's few months: each month's rows picked in file
    order, one pass a month (a stable sort of int64 took 11 ms a 100,000-row chunk; this well under 1)."""
    distinct = np.sort(pd.unique(months))
    if len(distinct) > 64:  # not the few months of a bill: the sort
        return np.argsort(months, kind="stable")
    return np.concatenate([np.flatnonzero(months == month) for month in distinct] or [np.empty(0, np.intp)])


def _encoded(table: pa.Table) -> pa.Table:
    """A table of SCHEMA (text as plain strings) as WRITE_SCHEMA."""
    arrays = [
        pc.dictionary_encode(table[field.name]).cast(field.type) if field.type == TEXT else table[field.name]
        for field in WRITE_SCHEMA
    ]
    return pa.Table.from_arrays(arrays, schema=WRITE_SCHEMA)


# at most 65,536 amounts (a few MiB), the least recently used dropped first
_cached_micro = functools.lru_cache(maxsize=1 << 16, typed=True)(_micro)
_cached_quantity = functools.lru_cache(maxsize=1 << 16, typed=True)(_quantity)  # as _cached_micro
