"""PostgreSQL binary COPY data for spend rows, built column by column with numpy and Arrow.

Binary COPY spares the server parsing every number, date and key from text (a fifth of its work per
row here). The format (PostgreSQL manual, "COPY", binary format): a signature and two int32 header
fields, then per row an int16 field count and per field an int32 byte length (-1 for NULL) and the
value in the type's binary (send/recv) form, all big-endian; an int16 -1 ends the data.

Each column is given as codes and one encoded field per distinct value (a `Field`), or as one field
per row for the few columns that are distinct per row (the key, the row number). Rows are assembled
without a Python object per row: the fields of the same width in every row are packed into one
row-major byte matrix; the other fields are concatenated once per distinct combination of their
codes (a bill's text columns vary together: one account, region, instance type and tag set per
resource) or, for a column distinct in most rows, taken per row by Arrow; Arrow then joins the
pieces of each row, and its value buffer is the COPY data.
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

import numpy as np
import pandas as pd

from billing.imports.codes import codes_and_values, first_rows, text_values

SIGNATURE = b"PGCOPY\n\xff\r\n\x00" + struct.pack(">ii", 0, 0)
TRAILER = struct.pack(">h", -1)
NULL = struct.pack(">i", -1)
POSTGRES_EPOCH_US = 946_684_800_000_000  # 2000-01-01 00:00 UTC, in microseconds since 1970
NUMERIC_NEGATIVE = 0x4000
# A plain decimal: sign, up to 18 whole digits, any fraction; anything else goes through Decimal
PLAIN_DECIMAL = r"^(?P<sign>[+-]?)(?P<whole>[0-9]{0,18})(?:\.(?P<fraction>[0-9]*))?$"
WIDE_SHARE = 8  # a column with more distinct values than rows / 8 is taken per row, not combined


@dataclass
class Field:
    """One column of a chunk: `codes` (per row; -1 is NULL) into `values` (one encoded field each,
    its length prefix included), or `per_row`, an (n, width) byte matrix of fields."""

    name: str
    codes: np.ndarray | None = None
    values: list[bytes] | None = None
    per_row: np.ndarray | None = None

    def table(self) -> list[bytes]:
        """The distinct fields with NULL last, so that code -1 picks it."""
        return [*self.values, NULL]

    def used(self) -> np.ndarray:
        """Positions in table() that some row uses."""
        flags = np.zeros(len(self.values) + 1, dtype=bool)
        flags[self.codes] = True
        return np.flatnonzero(flags)

    def width(self) -> int | None:
        """The byte length every row's field has, or None when it varies."""
        if self.per_row is not None:
            return self.per_row.shape[1]
        table = self.table()
        lengths = {len(table[code]) for code in self.used()}
        return lengths.pop() if len(lengths) == 1 else None


def copy_data(fields: list[Field]) -> tuple[list[str], memoryview]:
    """(column names in COPY order, the rows' binary COPY data without signature and trailer)."""
    rows = _row_count(fields)
    constant, fixed, combined, wide = _layout(fields, rows)
    pieces = [_fixed_piece(constant, fixed, rows, field_count=len(fields))]
    if combined:
        codes = _combination_codes(combined)
        pieces.append(_taken(_tails(combined, codes), codes))
    pieces += [
        _taken(field.table(), np.where(field.codes < 0, len(field.values), field.codes)) for field in wide
    ]
    return [field.name for field in constant + fixed + combined + wide], _joined(pieces, rows)


def _layout(fields: list[Field], rows: int) -> tuple[list[Field], list[Field], list[Field], list[Field]]:
    """The fields of one value in every row, the others of one width, the varying ones combined, and
    the varying ones taken per row: those distinct in many rows, or all when their combinations are."""
    many = max(rows // WIDE_SHARE, 64)
    widths = {field.name: field.width() for field in fields}
    constant = [field for field in fields if field.per_row is None and len(field.used()) == 1]
    fixed = [field for field in fields if widths[field.name] is not None and field not in constant]
    varying = [field for field in fields if widths[field.name] is None]
    wide = [field for field in varying if len(field.used()) > many]
    combined = [field for field in varying if field not in wide]
    if combined and _combination_codes(combined).max() >= many:
        return constant, fixed, [], wide + combined
    return constant, fixed, combined, wide


def _fixed_piece(constant: list[Field], fixed: list[Field], rows: int, *, field_count: int):
    import pyarrow as pa

    matrix = _fixed_matrix(constant, fixed, rows, field_count=field_count)
    offsets = np.arange(rows + 1, dtype=np.int32) * matrix.shape[1]
    return pa.Array.from_buffers(pa.binary(), rows, [None, pa.py_buffer(offsets), pa.py_buffer(matrix)])


def _taken(values: list[bytes], codes: np.ndarray):
    import pyarrow as pa

    return pa.array(values, type=pa.binary()).take(pa.array(codes))


def _joined(pieces: list, rows: int) -> memoryview:
    """Each row's pieces joined; the value buffer of the result is every row, one after the other."""
    import pyarrow as pa
    import pyarrow.compute as pc

    joined = (
        pc.binary_join_element_wise(*pieces, pa.scalar(b"", pa.binary())) if len(pieces) > 1 else pieces[0]
    )
    bounds = np.frombuffer(joined.buffers()[1], dtype=np.int32, count=rows + 1, offset=joined.offset * 4)
    return memoryview(joined.buffers()[2])[int(bounds[0]) : int(bounds[-1])]


def _row_count(fields: list[Field]) -> int:
    first = fields[0]
    return len(first.per_row) if first.per_row is not None else len(first.codes)


def _fixed_matrix(constant: list[Field], fixed: list[Field], rows: int, *, field_count: int) -> np.ndarray:
    """Row-major bytes: the int16 field count and the fields of one value in every row (the same bytes
    in each row, written at once), then each other fixed-width field. Written through a structured
    dtype, one field of it per column: numpy then copies each value whole, not byte by byte."""
    head = struct.pack(">h", field_count) + b"".join(field.table()[field.used()[0]] for field in constant)
    widths = [len(head)] + [field.width() for field in fixed]
    layout = np.dtype(
        {
            "names": [f"f{i}" for i in range(len(widths))],
            "formats": [f"V{width}" for width in widths],
            "offsets": np.cumsum([0, *widths[:-1]]).tolist(),
            "itemsize": sum(widths),
        }
    )
    matrix = np.empty(rows, dtype=layout)
    matrix["f0"] = np.frombuffer(head, dtype=f"V{len(head)}")[0]
    for number, (field, width) in enumerate(zip(fixed, widths[1:], strict=True), start=1):
        if field.per_row is not None:
            matrix[f"f{number}"] = np.ascontiguousarray(field.per_row).view(f"V{width}").ravel()
        else:
            table = [value if len(value) == width else b"\0" * width for value in field.table()]
            matrix[f"f{number}"] = np.frombuffer(b"".join(table), dtype=f"V{width}")[field.codes]
    return matrix.view(np.uint8).reshape(rows, sum(widths))


def _combination_codes(fields: list[Field]) -> np.ndarray:
    """Codes of the distinct combinations of the fields' codes, numbered in order of first appearance."""
    combined = np.zeros(len(fields[0].codes) if fields else 0, dtype=np.int64)
    for field in fields:
        combined = combined * (len(field.values) + 1) + (field.codes + 1)
        combined, _ = pd.factorize(combined)
    return combined if len(combined) else np.zeros(1, dtype=np.int64)


def _tails(fields: list[Field], codes: np.ndarray) -> list[bytes]:
    """The bytes of each combination: its fields' values, one after the other."""
    tables = [field.table() for field in fields]
    return [
        b"".join(table[field.codes[row]] for table, field in zip(tables, fields, strict=True))
        for row in first_rows(codes)
    ]


# Encoders: a chunk's column (or values) to a Field ----------------------------------------------


def text_field(name: str, values: pd.Series) -> Field:
    codes, uniques = text_values(values)
    return Field(name, codes=codes, values=[_sized(value.encode()) for value in uniques])


def json_field(name: str, codes: np.ndarray, objects: list) -> Field:
    """jsonb: a version byte (1), then the JSON text."""
    texts = [b"\x01" + json.dumps(value, sort_keys=True).encode() for value in objects]
    return Field(name, codes=codes, values=[_sized(text) for text in texts])


def bool_field(name: str, flags: np.ndarray) -> Field:
    return Field(name, codes=np.asarray(flags, dtype=np.intp), values=[_sized(b"\x00"), _sized(b"\x01")])


def int4_per_row(name: str, values: np.ndarray) -> Field:
    matrix = np.empty((len(values), 8), dtype=np.uint8)
    matrix[:, :4] = np.frombuffer(struct.pack(">i", 4), dtype=np.uint8)
    matrix[:, 4:] = np.asarray(values, dtype=">i4").view(np.uint8).reshape(-1, 4)
    return Field(name, per_row=matrix)


def uuid_per_row(name: str, key_bytes: np.ndarray) -> Field:
    matrix = np.empty((len(key_bytes), 20), dtype=np.uint8)
    matrix[:, :4] = np.frombuffer(struct.pack(">i", 16), dtype=np.uint8)
    matrix[:, 4:] = key_bytes
    return Field(name, per_row=matrix)


def int8_field(name: str, values: pd.Series) -> Field:
    codes, uniques = codes_and_values(values)
    return Field(name, codes=codes, values=[_sized(struct.pack(">q", int(value))) for value in uniques])


def int8_constant(name: str, value: int, rows: int) -> Field:
    return Field(name, codes=np.zeros(rows, dtype=np.intp), values=[_sized(struct.pack(">q", value))])


def timestamp_field(name: str, values: pd.Series) -> Field:
    """timestamptz: int64 microseconds since 2000-01-01 UTC (truncated to the microsecond)."""
    missing = values.isna().to_numpy()
    micros = values.to_numpy(dtype="datetime64[us]").view(np.int64) - POSTGRES_EPOCH_US
    codes, uniques = pd.factorize(np.where(missing, 0, micros))
    codes = np.where(missing, -1, codes)
    packed = np.asarray(uniques, dtype=">i8").tobytes()
    return Field(name, codes=codes, values=[_sized(packed[i * 8 : i * 8 + 8]) for i in range(len(uniques))])


def numeric_field(name: str, values: pd.Series, scale: int) -> Field:
    """numeric(p, scale) from decimal text ("" is NULL) or Decimal values (None is NULL), rounded to
    `scale` decimals half away from zero, as PostgreSQL rounds text into the column."""
    codes, uniques = codes_and_values(values)
    used = np.zeros(len(uniques) + 1, dtype=bool)
    used[codes] = True  # a categorical may carry values no row of this chunk holds (nor validated)
    null = np.array([value is None or value == "" for value in uniques] + [True], dtype=bool)
    codes = np.where(null[codes], -1, codes)
    encoded = np.full(len(uniques), None, dtype=object)
    wanted = np.flatnonzero(used[:-1] & ~null[:-1])
    encoded[wanted] = _numeric_values(uniques[wanted], scale)
    return Field(name, codes=codes, values=[value if value is not None else NULL for value in encoded])


def _numeric_values(values: np.ndarray, scale: int) -> list[bytes]:
    """Each value as a numeric field of fixed layout: 6 base-10000 digits, weight 3 (4 whole digit
    groups, 2 fractional ones, so up to 8 decimals), display scale `scale`. PostgreSQL strips the zero
    digit groups on receipt, so the stored value is the same as from text."""
    negative, whole, units = _decimal_parts(values, scale)
    fraction8 = units * 10 ** (8 - scale)
    digits = np.stack(
        [
            whole // 10**12,
            whole // 10**8 % 10**4,
            whole // 10**4 % 10**4,
            whole % 10**4,
            fraction8 // 10**4,
            fraction8 % 10**4,
        ],
        axis=1,
    )
    head = np.empty((len(values), 4), dtype=np.int64)
    head[:, 0], head[:, 1], head[:, 3] = 6, 3, scale
    head[:, 2] = np.where(negative, NUMERIC_NEGATIVE, 0)
    packed = np.concatenate([head, digits], axis=1).astype(">i2").tobytes()
    size = 20  # 10 int16
    return [_sized(packed[i * size : (i + 1) * size]) for i in range(len(values))]


def _decimal_parts(values: np.ndarray, scale: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(is negative, whole part, fractional part in units of 10**-scale), rounded half away from zero:
    plain decimal texts by Arrow, the rest (Decimals, exponents, long whole parts) by Decimal."""
    import pyarrow as pa
    import pyarrow.compute as pc

    count = len(values)
    negative, whole, units = np.zeros(count, dtype=bool), np.zeros(count, np.int64), np.zeros(count, np.int64)
    texts = [value if isinstance(value, str) and value != "" else None for value in values]
    parts = pc.extract_regex(pa.array(texts, type=pa.string()), PLAIN_DECIMAL)
    plain = parts.is_valid().to_numpy(zero_copy_only=False)
    if plain.any():
        sign = parts.field("sign").to_numpy(zero_copy_only=False)
        whole_text = pc.if_else(pc.equal(parts.field("whole"), ""), "0", parts.field("whole"))
        fraction = pc.utf8_rpad(
            pc.utf8_slice_codeunits(pc.fill_null(parts.field("fraction"), ""), 0, scale + 1),
            width=scale + 1,
            padding="0",
        )
        whole_plain = pc.fill_null(pc.cast(whole_text, pa.int64()), 0).to_numpy(zero_copy_only=False)
        digits = pc.fill_null(pc.cast(fraction, pa.int64()), 0).to_numpy(zero_copy_only=False)
        rounded = digits // 10 + (digits % 10 >= 5)  # the first dropped digit decides, half away from 0
        carry = rounded == 10**scale
        negative[plain] = (sign == "-")[plain]
        whole[plain] = (whole_plain + carry)[plain]
        units[plain] = np.where(carry, 0, rounded)[plain]
    quantum = Decimal(1).scaleb(-scale)
    for position in np.flatnonzero(~plain):
        if values[position] is None or values[position] == "":
            continue
        exact = Decimal(values[position]).quantize(quantum, rounding=ROUND_HALF_UP)
        scaled = int(exact.scaleb(scale))
        negative[position] = scaled < 0
        whole[position], units[position] = divmod(abs(scaled), 10**scale)
    return negative, whole, units


def _sized(value: bytes) -> bytes:
    return struct.pack(">i", len(value)) + value
