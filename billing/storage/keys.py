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


class OccurrenceCounter:
    """How many rows with each content hash a file has shown so far (across its chunks), in 8 bytes per
    distinct row: the hashes seen, as a few sorted runs merged as they grow (each hash in one run, added
    once: no copy of the whole table per chunk), and, apart, the counts of only the hashes seen twice or
    more (few: a bill's identical lines). A hash in a run and not among the repeats was seen once.
    The runs are kept per partition of the hashes (their top PARTITION_BITS bits): a merge rewrites one
    partition's runs, so what a merge holds twice for a moment is a sixteenth of the table, not all of
    it (issue 28: the import's peak memory stays flat as the file grows)."""

    def __init__(self) -> None:
        self.partitions: list[list[np.ndarray]] = [[] for _ in range(1 << PARTITION_BITS)]
        self.repeat_hashes = np.empty(0, dtype=np.uint64)
        self.repeat_counts = np.empty(0, dtype=np.int64)

    @property
    def runs(self) -> list[np.ndarray]:
        return [run for runs in self.partitions for run in runs]

    def number(self, content: np.ndarray) -> np.ndarray:
        """Occurrence number of each row of a chunk, given the rows' content hashes."""
        order = _row_ordered_argsort(content)
        ordered = content[order]
        starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]]) if len(ordered) else order
        sizes = np.diff(np.r_[starts, len(ordered)])
        uniques = ordered[starts]
        found = np.zeros(len(uniques), dtype=bool)
        bounds = _partition_bounds(uniques)
        for runs, first, last in zip(self.partitions, bounds[:-1], bounds[1:], strict=True):
            for run in runs if last > first else ():
                found[first:last] |= _members(run, uniques[first:last])
        before = found.astype(np.int64)
        position, repeated = _positions(self.repeat_hashes, uniques)
        before[repeated] = self.repeat_counts[position[repeated]]
        numbers = np.empty(len(content), dtype=np.int64)
        numbers[order] = np.arange(len(ordered)) - np.repeat(starts - before, sizes)
        self._count(uniques, before + sizes, position, repeated)
        if (~found).any():
            new = uniques[~found]
            bounds = _partition_bounds(new)
            for runs, first, last in zip(self.partitions, bounds[:-1], bounds[1:], strict=True):
                if last > first:
                    _add_run(runs, new[first:last])
        return numbers

    def _count(
        self, uniques: np.ndarray, totals: np.ndarray, position: np.ndarray, repeated: np.ndarray
    ) -> None:
        """Counts of the hashes now seen twice or more: updated in place where kept, else added."""
        self.repeat_counts[position[repeated]] = totals[repeated]
        added = (totals > 1) & ~repeated
        if added.any():
            hashes = np.concatenate([self.repeat_hashes, uniques[added]])
            keep = np.argsort(hashes, kind="stable")
            self.repeat_hashes = hashes[keep]
            self.repeat_counts = np.concatenate([self.repeat_counts, totals[added]])[keep]


def _row_ordered_argsort(content: np.ndarray) -> np.ndarray:
    """np.argsort(content, kind="stable"): equal hashes (identical rows) in row order. numpy's stable
    sort of 64-bit keys is 5 times slower than its default one (11 vs 2.3 ms a 100,000-row chunk, numpy
    2.4), and only the few identical rows need their order: the default sort, then the positions of
    each run of equal hashes put back in row order (issue 28: the stable sort was a fifth of the keys)."""
    order = np.argsort(content)
    ordered = content[order]
    same = ordered[1:] == ordered[:-1]
    if same.any():
        tied = np.flatnonzero(np.r_[same, False] | np.r_[False, same])  # positions in a run of equals
        runs = np.cumsum(np.r_[True, ~same])[tied]  # the run of each, numbered in hash order
        rows = order[tied]
        order[tied] = rows[np.lexsort((rows, runs))]
    return order


PARTITION_BITS = 4
# where each partition's hashes begin: the top PARTITION_BITS bits
PARTITION_STARTS = np.arange(1, 1 << PARTITION_BITS, dtype=np.uint64) << np.uint64(64 - PARTITION_BITS)


def _partition_bounds(sorted_hashes: np.ndarray) -> np.ndarray:
    """Where each partition's hashes begin and end in `sorted_hashes` (partitions + 1 positions)."""
    return np.r_[0, np.searchsorted(sorted_hashes, PARTITION_STARTS), len(sorted_hashes)]


def _add_run(runs: list[np.ndarray], hashes: np.ndarray) -> None:
    """A run of new (sorted) hashes; the last runs merged while the one before is not twice as long,
    so that a partition of n distinct hashes keeps about log2(n / what a chunk adds) runs."""
    runs.append(hashes)
    while len(runs) > 1 and len(runs[-2]) <= 2 * len(runs[-1]):
        last = runs.pop()
        merged = np.concatenate([runs.pop(), last])
        del last
        merged.sort(kind="stable")  # two sorted runs: a merge (timsort)
        runs.append(merged)


def _positions(sorted_hashes: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where each value is in `sorted_hashes` and whether it is there."""
    position = np.searchsorted(sorted_hashes, values)
    if not len(sorted_hashes):
        return position, np.zeros(len(values), dtype=bool)
    clipped = np.minimum(position, len(sorted_hashes) - 1)
    return clipped, (position < len(sorted_hashes)) & (sorted_hashes[clipped] == values)


def _members(sorted_hashes: np.ndarray, values: np.ndarray) -> np.ndarray:
    return _positions(sorted_hashes, values)[1]


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
    seen = seen if seen is not None else OccurrenceCounter()
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
    occurrence = seen.number(lanes[0] ^ (lanes[1] >> np.uint64(1)))
    with np.errstate(over="ignore"):
        mixed = [
            _finalize((lane ^ occurrence.astype(np.uint64)) * prime)
            for lane, prime in zip(lanes, LANE_PRIMES, strict=True)
        ]
    return np.stack(mixed, axis=1) if len(frame) else np.empty((0, 2), dtype=np.uint64)


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
