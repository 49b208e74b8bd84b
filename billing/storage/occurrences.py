"""The occurrence number of each row of a file among the identical rows before it (keys.py), in memory
bounded by the chunk, not by the file.

A row key holds the occurrence number of its content hash in the file (the n-th identical row gets n), so
the counter must tell, for each hash of a chunk, how many earlier rows of the file had it. Holding every
hash seen took 8 bytes a distinct line: 160 MB for a file of 20M distinct lines, the bulk of an import's
growth with the file (issue 28). Here the hashes seen are held in memory only up to SPILL_HASHES; past
that they are written to disk as sorted segments, and a filter of a fixed size (a blocked Bloom filter:
FILTER_WORDS 64-bit words, 4 bits of a word set per hash) says which of a chunk's hashes may have been seen;
only those are looked up exactly, in memory and on disk (by binary search on each segment, mapped for the
look-up only). A hash the filter was given is never reported absent, so the numbers are exact; a false
"may have been seen" costs only a look-up.
Each hash is kept once, with its count (4 bytes more): a hash seen again has its count raised where it
is, in memory or in place on disk, so lines seen twice or more take no memory of their own either (they
did: 12 bytes each, 12 MB at 5M lines of billing_bench.py, whose 2,000 resources repeat about 1M hashes).
The first spill comes at half a million distinct lines: a file of 1M lines holds the filter and at most
SPILL_HASHES in memory as one of 5M or 20M does, so the counter's memory is the same from 1M lines up
(issue 28: "flat from 1M to 5M"; it was 8 MiB at 1M, 35 MiB at 5M).
"""

from __future__ import annotations

import shutil
import tempfile
import weakref
from pathlib import Path

import numpy as np

SPILL_HASHES = 1 << 19  # hashes held in memory (6 MiB with their counts) before they go to disk
FILTER_BATCH = 1 << 17  # hashes placed at once when the filter is first filled (bounds its temporaries)
FILTER_WORDS = 1 << 20  # the filter: 8 MiB, whatever the file's size
FILTER_BITS = 4  # bits set per hash, all in one word (one memory access a hash)
_FIELDS = np.arange(4096, dtype=np.uint64)
# the two bits of a word a 12-bit field sets: its top 6 bits and its bottom 6 bits as bit numbers
BIT_PAIRS = (np.uint64(1) << (_FIELDS >> np.uint64(6))) | (np.uint64(1) << (_FIELDS & np.uint64(63)))
# An odd 64-bit multiplier (splitmix64's) mixing a hash's bits into the bit positions within its word,
# apart from its top bits, which choose the word.
MIX = np.uint64(0x9E3779B97F4A7C15)


class OccurrenceCounter:
    """How many rows with each content hash a file has shown so far (across its chunks).

    Each hash seen is kept once, with its count: in memory as sorted runs (merged as they grow) until
    there are more than `spill_hashes` of them; then they are merged into one sorted segment on disk
    (the hashes and, beside them, their counts, updated in place when a hash comes again), and from then
    on a fixed filter screens each chunk's hashes first."""

    def __init__(self, spill_hashes: int = SPILL_HASHES, filter_words: int = FILTER_WORDS) -> None:
        self.runs: list[np.ndarray] = []  # sorted hashes
        self.run_counts: list[np.ndarray] = []  # the rows of each, int32: a file holds at most 20M lines
        self.spill_hashes, self.filter_words = spill_hashes, filter_words
        self.filter: HashFilter | None = None  # made at the first spill: small files never need it
        self.segments = SortedSegments()

    def number(self, content: np.ndarray) -> np.ndarray:
        """Occurrence number of each row of a chunk, given the rows' content hashes."""
        order = _row_ordered_argsort(content)
        ordered = content[order]
        starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]]) if len(ordered) else order
        sizes = np.diff(np.r_[starts, len(ordered)])
        uniques = ordered[starts]
        placed = self.filter.place(uniques) if self.filter is not None else None
        before = self._counted(uniques, sizes, placed)
        numbers = np.empty(len(content), dtype=np.int64)
        numbers[order] = np.arange(len(ordered)) - np.repeat(starts - before, sizes)
        new = before == 0
        if new.any():
            self._add(uniques[new], sizes[new], None if placed is None else (placed[0][new], placed[1][new]))
        return numbers

    def _counted(
        self, uniques: np.ndarray, sizes: np.ndarray, placed: tuple[np.ndarray, np.ndarray] | None
    ) -> np.ndarray:
        """The rows of earlier chunks with each of the (sorted, distinct) hashes, 0 for a hash not seen;
        the counts kept of those seen grow by the chunk's rows (`sizes`)."""
        if self.filter is None or placed is None:
            return self._in_runs(uniques, sizes)
        maybe = np.flatnonzero(self.filter.holds(*placed))  # every hash seen is among these, and a few more
        before = np.zeros(len(uniques), dtype=np.int64)
        if len(maybe):
            hashes, added = uniques[maybe], sizes[maybe]
            before[maybe] = self._in_runs(hashes, added) + self.segments.counted(hashes, added)
        return before

    def _in_runs(self, hashes: np.ndarray, sizes: np.ndarray) -> np.ndarray:
        before = np.zeros(len(hashes), dtype=np.int64)
        for run, counts in zip(self.runs, self.run_counts, strict=True):
            position, found = _positions(run, hashes)
            at = position[found]
            before[found] = counts[at]  # each hash is in one run at most
            counts[at] += sizes[found].astype(np.int32)
        return before

    def _add(self, new: np.ndarray, sizes: np.ndarray, placed: tuple[np.ndarray, np.ndarray] | None) -> None:
        """New (sorted) hashes and their rows: into the filter where there is one, and a run; past
        `spill_hashes` in memory, every run to disk as one segment."""
        if self.filter is not None and placed is not None:
            self.filter.add(*placed)
        _add_run(self.runs, self.run_counts, new, sizes.astype(np.int32))
        if sum(len(run) for run in self.runs) > self.spill_hashes:
            held, counts = self.runs[0], self.run_counts[0]
            for run, run_counts in zip(self.runs[1:], self.run_counts[1:], strict=True):
                held, counts = _merged(held, counts, run, run_counts)
            self.runs, self.run_counts = [], []
            if self.filter is None:
                self.filter = HashFilter(self.filter_words)
                for first in range(0, len(held), FILTER_BATCH):  # a batch's placings at a time
                    self.filter.add(*self.filter.place(held[first : first + FILTER_BATCH]))
            self.segments.write(held, counts)


class HashFilter:
    """A blocked Bloom filter of 64-bit hashes: a hash's top bits choose a word, FILTER_BITS bits of it
    (from the hash mixed) are set. `holds` is true for every hash added and, falsely, for a fraction of
    the others that grows with how full the words are: with 2^20 words, about 0.4% at 5M hashes
    ((1 - e^(-4 x 4.8 / 64))^4, 4.8 hashes a word), 24% at 20M (19 a word) (Putze, Sanders and Singler, "Cache-,
    hash- and space-efficient Bloom filters", 2007, blocked filters). Sorted hashes touch the words in
    order."""

    def __init__(self, words: int) -> None:
        if words & (words - 1) or words < 2:
            raise ValueError(f"filter words must be a power of two, not {words}")
        self.words = np.zeros(words, dtype=np.uint64)
        self.shift = np.uint64(64 - (words.bit_length() - 1))

    def place(self, hashes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Each hash's word and the bits of it the hash sets: two from each of two 12-bit fields of the
        hash mixed, through a table of the 4,096 fields' two bits (32 KiB: a shift and a look-up each,
        8 times faster than four shifts of 1)."""
        with np.errstate(over="ignore"):
            mixed = hashes * MIX
        masks = BIT_PAIRS[(mixed >> np.uint64(52)).astype(np.intp)]
        masks |= BIT_PAIRS[((mixed >> np.uint64(40)) & np.uint64(4095)).astype(np.intp)]
        return (hashes >> self.shift).astype(np.intp), masks

    def add(self, index: np.ndarray, masks: np.ndarray) -> None:
        """Set the bits of placed hashes (`place`, of sorted hashes: their words in order); the masks of
        hashes of one word OR-ed together first, since a fancy |= keeps only the last of a word."""
        if not len(index):
            return
        starts = np.flatnonzero(np.r_[True, index[1:] != index[:-1]])
        self.words[index[starts]] |= np.bitwise_or.reduceat(masks, starts)

    def holds(self, index: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return (self.words[index] & masks) == masks


class SortedSegments:
    """Sorted arrays of hashes on disk, each with a file of their counts beside it, looked up by binary
    search through memory maps made for the look-up and dropped after it (so that the pages it read do
    not stay in the process). The folder is made at the first write and removed with the counter."""

    def __init__(self) -> None:
        self.folder: Path | None = None
        self.paths: list[Path] = []  # the hashes (uint64); the counts (int32) in `path.with_suffix(".i32")`

    def write(self, hashes: np.ndarray, counts: np.ndarray) -> None:
        if self.folder is None:
            self.folder = Path(tempfile.mkdtemp(prefix="gpuledger-occurrences-"))
            weakref.finalize(self, shutil.rmtree, self.folder, ignore_errors=True)
        path = self.folder / f"segment-{len(self.paths):05d}.u64"
        hashes.astype(np.uint64, copy=False).tofile(path)
        counts.astype(np.int32, copy=False).tofile(path.with_suffix(".i32"))
        self.paths.append(path)

    def counted(self, hashes: np.ndarray, sizes: np.ndarray) -> np.ndarray:
        """The count kept of each of the (sorted, distinct) hashes, 0 where no segment has it; those
        kept grow by `sizes`, in place on disk."""
        before = np.zeros(len(hashes), dtype=np.int64)
        if not len(hashes):
            return before
        for path in self.paths:
            segment = np.memmap(path, dtype=np.uint64, mode="r")
            position, found = _positions(segment, hashes)
            del segment  # unmapped: the pages it read leave the process
            if found.any():
                at = position[found]
                counts = np.memmap(path.with_suffix(".i32"), dtype=np.int32, mode="r+")
                before[found] = counts[at]  # each hash is in one segment at most
                counts[at] += sizes[found].astype(np.int32)
                del counts
        return before

    def __len__(self) -> int:
        return sum(path.stat().st_size // 8 for path in self.paths)


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


def _add_run(runs: list[np.ndarray], counts: list[np.ndarray], hashes: np.ndarray, sizes: np.ndarray) -> None:
    """A run of new (sorted) hashes and their counts; the last runs merged while the one before is not
    twice as long, so that n hashes in memory make about log2(n / what a chunk adds) runs."""
    runs.append(hashes)
    counts.append(sizes)
    while len(runs) > 1 and len(runs[-2]) <= 2 * len(runs[-1]):
        last, last_counts = runs.pop(), counts.pop()
        merged = _merged(runs.pop(), counts.pop(), last, last_counts)
        del last, last_counts
        runs.append(merged[0])
        counts.append(merged[1])


def _merged(
    hashes: np.ndarray, counts: np.ndarray, other: np.ndarray, other_counts: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Two sorted runs of distinct hashes (none in both) as one, their counts alongside: each of `other`
    inserted where it sorts (no argsort: its temporaries were several copies of the runs)."""
    at = np.searchsorted(hashes, other)
    return np.insert(hashes, at, other), np.insert(counts, at, other_counts)


def _positions(sorted_hashes: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where each value is in `sorted_hashes` and whether it is there."""
    position = np.searchsorted(sorted_hashes, values)
    if not len(sorted_hashes):
        return position, np.zeros(len(values), dtype=bool)
    clipped = np.minimum(position, len(sorted_hashes) - 1)
    return clipped, (position < len(sorted_hashes)) & (np.asarray(sorted_hashes[clipped]) == values)
