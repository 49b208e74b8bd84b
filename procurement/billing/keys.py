"""Row keys for idempotent imports, computed column by column (no per-row Python).

A row's key is a 128-bit hash of its normalized values and its occurrence number among identical
rows of the file (the n-th identical row gets n), so a file with two equal lines keeps both and a
re-import matches each to itself. Each column is hashed with pandas' `hash_array` (SipHash-2-4 of
the UTF-8 text under a fixed 16-byte key; a fixed integer mix for datetimes and flags), and the
columns are folded into two independent 64-bit lanes; 128 bits make a collision across even a
billion stored rows about 1e-21 likely.
The key is 32 lower-case hex digits.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from pandas.util import hash_array

from procurement.billing.enrich import object_codes
from procurement.billing.records import NORMALIZED_COLUMNS

KEY_COLUMNS = [c for c in NORMALIZED_COLUMNS if c not in ("source_row", "tags")]
LANE_KEYS = ("gpuledger-bill-1", "gpuledger-bill-2")  # SipHash keys: 16 bytes each, fixed forever
# Odd 64-bit multipliers of the fold (from splitmix64 and MurmurHash3's finalizer)
LANE_PRIMES = (np.uint64(0x9E3779B97F4A7C15), np.uint64(0xC4CEB9FE1A85EC53))
_HEX = np.array([f"{i:02x}".encode() for i in range(256)], dtype="S2")


class OccurrenceCounter:
    """How many rows with each content hash a file has shown so far (across its chunks)."""

    def __init__(self) -> None:
        self.counts = pd.Series(dtype=np.int64)

    def number(self, content: np.ndarray) -> np.ndarray:
        """Occurrence number of each row of a chunk, given the rows' content hashes."""
        within = pd.Series(content).groupby(content, sort=False).cumcount().to_numpy(dtype=np.int64)
        before = self.counts.reindex(content, fill_value=0).to_numpy(dtype=np.int64)
        self.counts = self.counts.add(pd.Series(content).value_counts(), fill_value=0).astype(np.int64)
        return before + within


def row_keys(frame: pd.DataFrame, seen: OccurrenceCounter | None = None) -> np.ndarray:
    """The key of each row (numpy array of str), numbering identical rows through `seen`."""
    seen = seen if seen is not None else OccurrenceCounter()
    columns = [_column_hash_input(frame[c]) for c in KEY_COLUMNS] + [_tag_texts(frame["tags"])]
    lanes = []
    for hash_key, prime in zip(LANE_KEYS, LANE_PRIMES, strict=True):
        folded = np.full(len(frame), np.uint64(len(columns)), dtype=np.uint64)
        with np.errstate(over="ignore"):
            for values in columns:
                folded = (folded ^ hash_array(values, hash_key=hash_key)) * prime
        lanes.append(folded)
    occurrence = seen.number(lanes[0] ^ (lanes[1] >> np.uint64(1)))
    with np.errstate(over="ignore"):
        mixed = [
            _finalize((lane ^ occurrence.astype(np.uint64)) * prime)
            for lane, prime in zip(lanes, LANE_PRIMES, strict=True)
        ]
    return _hex(np.stack(mixed, axis=1))


def _column_hash_input(values: pd.Series) -> np.ndarray:
    """Text as an object array ("" for missing); datetimes as epoch nanoseconds; flags as 0/1."""
    if pd.api.types.is_datetime64_any_dtype(values):
        return values.to_numpy(dtype="datetime64[ns]").view(np.int64)
    if pd.api.types.is_bool_dtype(values):
        return values.to_numpy(dtype=np.uint8)
    return values.to_numpy(dtype=object, na_value="")


def _tag_texts(tags: pd.Series) -> np.ndarray:
    codes, tag_sets = object_codes(tags)
    texts = np.empty(len(tag_sets), dtype=object)
    texts[:] = [repr(sorted(value.items())) for value in tag_sets]
    return texts[codes]


def _finalize(x: np.ndarray) -> np.ndarray:
    """MurmurHash3's 64-bit finalizer: every input bit reaches every output bit."""
    with np.errstate(over="ignore"):
        x = x ^ (x >> np.uint64(33))
        x = x * np.uint64(0xFF51AFD7ED558CCD)
        x = x ^ (x >> np.uint64(33))
        x = x * np.uint64(0xC4CEB9FE1A85EC53)
        return x ^ (x >> np.uint64(33))


def _hex(lanes: np.ndarray) -> np.ndarray:
    """(n, 2) uint64 to n strings of 32 hex digits, through a byte lookup table (big-endian order)."""
    if len(lanes) == 0:
        return np.array([], dtype="<U32")
    octets = lanes.astype(">u8").view(np.uint8).reshape(len(lanes), 16)
    return _HEX[octets].view("S32").ravel().astype("U32")
