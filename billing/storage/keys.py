"""Row keys for idempotent imports, computed column by column (no per-row Python).

A row's key is a 128-bit hash of its normalized values, the part of a multi-file export it came from
(the part number in the file's name, where there is one: identical lines of two parts are two charges),
the export's own id of the line where it has one (CUR 2.0's identity_line_item_id) and its occurrence
number among identical rows of the file (the n-th identical row gets n), so a file with two equal lines
keeps both and a re-import matches each to itself. A row of a file without a part number and without a
line id keeps the key it had before either was part of the key. Each column is hashed with pandas' `hash_array` (SipHash-2-4 of
the UTF-8 text under a fixed 16-byte key; a fixed integer mix for datetimes and flags), and the
columns are folded into two independent 64-bit lanes; 128 bits make a collision across even a
billion stored rows about 1e-21 likely.
The key is 32 lower-case hex digits (stored as a UUID, the bytes in the same order). Text columns given
as categoricals are hashed once per distinct value: the same hash as hashing each row's text.
"""

from __future__ import annotations

import itertools
import re

import numpy as np
import pandas as pd
from pandas.util import hash_array

from billing.imports.codes import object_array, text_values
from billing.imports.enrich import tag_codes
from billing.imports.records import COMMITMENT_COLUMNS, LABEL_COLUMNS, LINE_ID, NORMALIZED_COLUMNS
from billing.storage.occurrences import OccurrenceCounter

KEY_COLUMNS = [
    c for c in NORMALIZED_COLUMNS if c not in ("source_row", "tags", *COMMITMENT_COLUMNS, *LABEL_COLUMNS)
]
LANE_KEYS = ("gpuledger-bill-1", "gpuledger-bill-2")  # SipHash keys: 16 bytes each, fixed forever
# Odd 64-bit multipliers of the fold (from splitmix64 and MurmurHash3's finalizer)
LANE_PRIMES = (np.uint64(0x9E3779B97F4A7C15), np.uint64(0xC4CEB9FE1A85EC53))
_HEX = np.array([f"{i:02x}".encode() for i in range(256)], dtype="S2")
# The part counter of a file of a multi-file export: "part1", "part_0_0002" (Azure), or 5 digits (AWS Data
# Exports: "export-00002.csv.gz") or 12 (BigQuery's shards) just before the extensions; a date
# ("costs-20260501.csv", 8 digits) is none. Only the last one counts: the scheduled import's download
# name starts with its own listing number ("00003-export-00002.csv.gz").
PART_NUMBER = re.compile(r"part[-_]?(\d+(?:_\d+)*)|[-_](\d{5}|\d{12})(?=(?:\.[a-z0-9]+)+$)")


def export_part(file_name: str) -> str:
    """The part of a multi-file export a file is, from its name ("" for none): what tells identical lines
    of two parts apart, while a re-export of the same part (or a whole bill under another name) keeps its
    keys. The last part number of the name is the export's own (a listing number before it is not)."""
    found = list(PART_NUMBER.finditer(file_name.lower()))
    if not found:
        return ""
    numbers = found[-1].group(1) or found[-1].group(2)
    return "part " + "_".join(str(int(n)) for n in numbers.split("_"))


def row_key_lanes(frame: pd.DataFrame, seen: OccurrenceCounter | None = None, part: str = "") -> np.ndarray:
    """Each row's key as two uint64 lanes (n x 2; big-endian, lane 0 first, they are the key's bytes).
    `part` (export_part) and a line's own id (column LINE_ID, "" for none) are folded in only where given,
    before identical rows are numbered: a file's rows all share its part, so the numbering is unchanged."""
    return numbered_lanes(content_lanes(frame, part), seen)


def content_lanes(frame: pd.DataFrame, part: str = "") -> list[np.ndarray]:
    """The two lanes of each row's content hash (its values, `part`, its line id), before identical rows
    are numbered (numbered_lanes): what reads the frame, apart from what numbers the rows, so that the
    import can number them on another thread (store.py)."""
    prepared = [_prepared(frame[c]) for c in KEY_COLUMNS]  # once for both lanes
    tag_codes_, tag_texts = _tag_texts(frame)
    lanes = []
    for hash_key, prime in zip(LANE_KEYS, LANE_PRIMES, strict=True):
        folded = np.full(len(frame), np.uint64(len(KEY_COLUMNS) + 1), dtype=np.uint64)
        # one column's hashes at a time (a generator: the columns' hashes are never all held at once)
        hashes = itertools.chain(
            (_lane_hash(column, hash_key) for column in prepared),
            (hash_array(tag_texts, hash_key=hash_key, categorize=False)[tag_codes_],),
            (
                hash_array(object_array([part]), hash_key=hash_key, categorize=False)[0]
                for _ in [part]
                if part
            ),
        )
        with np.errstate(over="ignore"):  # in place: no temporary array per column
            for hashed in hashes:
                np.bitwise_xor(folded, hashed, out=folded)
                np.multiply(folded, prime, out=folded)
            if LINE_ID in frame:  # only a line that has an id: the others keep their keys
                has_id = (frame[LINE_ID] != "").to_numpy(dtype=bool)
                if has_id.any():
                    mixed = (folded ^ _column_hash(frame[LINE_ID], hash_key)) * prime
                    folded = np.where(has_id, mixed, folded)
        lanes.append(folded)
    return lanes


def numbered_lanes(lanes: list[np.ndarray], seen: OccurrenceCounter | None = None) -> np.ndarray:
    """The keys (n x 2) of rows of `content_lanes`, each numbered among the identical rows `seen` before
    it (the chunks of one file must come in order)."""
    seen = seen if seen is not None else OccurrenceCounter()
    occurrence = seen.number(lanes[0] ^ (lanes[1] >> np.uint64(1)))
    with np.errstate(over="ignore"):
        mixed = [
            _finalize((lane ^ occurrence.astype(np.uint64)) * prime)
            for lane, prime in zip(lanes, LANE_PRIMES, strict=True)
        ]
    return np.stack(mixed, axis=1) if len(lanes[0]) else np.empty((0, 2), dtype=np.uint64)


def row_keys(frame: pd.DataFrame, seen: OccurrenceCounter | None = None, part: str = "") -> np.ndarray:
    """The key of each row (numpy array of str), numbering identical rows through `seen`."""
    return key_hex(row_key_lanes(frame, seen, part))


def key_bytes(lanes: np.ndarray) -> np.ndarray:
    """(n, 16) uint8: each key's bytes, the order a UUID stores them."""
    return lanes.astype(">u8").view(np.uint8).reshape(len(lanes), 16)


def _column_hash(values: pd.Series, hash_key: str) -> np.ndarray:
    """Text hashed once per distinct value ("" for missing); datetimes as epoch nanoseconds; flags as 0/1."""
    return _lane_hash(_prepared(values), hash_key)


def _prepared(values: pd.Series) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    """What a column's hash is made of: its hash already where the column is not text (pandas hashes
    numbers without the hash key: both lanes share it), else the code of each row and the distinct
    texts."""
    if pd.api.types.is_datetime64_any_dtype(values):
        return hash_array(values.to_numpy(dtype="datetime64[ns]").view(np.int64))
    if pd.api.types.is_bool_dtype(values):
        return hash_array(values.to_numpy(dtype=np.uint8))
    return text_values(values)


def _lane_hash(prepared, hash_key: str) -> np.ndarray:
    if not isinstance(prepared, tuple):
        return prepared
    codes, uniques = prepared
    hashes = hash_array(uniques, hash_key=hash_key, categorize=False)
    return hashes[0] if len(hashes) == 1 else hashes[codes]  # one value: the fold takes the scalar


def _tag_texts(frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """The code of each row's tag set and each distinct set's text as hashed (its sorted items)."""
    codes, tag_sets = tag_codes(frame)
    return codes, object_array([repr(sorted(value.items())) for value in tag_sets])


def _finalize(x: np.ndarray) -> np.ndarray:
    """MurmurHash3's 64-bit finalizer: every input bit reaches every output bit."""
    with np.errstate(over="ignore"):
        x = x ^ (x >> np.uint64(33))
        x = x * np.uint64(0xFF51AFD7ED558CCD)
        x = x ^ (x >> np.uint64(33))
        x = x * np.uint64(0xC4CEB9FE1A85EC53)
        return x ^ (x >> np.uint64(33))


def key_hex(lanes: np.ndarray) -> np.ndarray:
    """(n, 2) uint64 to n strings of 32 hex digits, through a byte lookup table (big-endian order)."""
    if len(lanes) == 0:
        return np.array([], dtype="<U32")
    return _HEX[key_bytes(lanes)].view("S32").ravel().astype("U32")
