"""Which part of a commitment's unused cost is GPU spend (pandas, the used sums in DuckDB SQL; no ORM).

A commitment's used part lies on the usage rows it covered: a GPU row's is GPU spend, any other row's
is not, row by row. Its unused part (FOCUS CommitmentDiscountStatus = Unused; CUR RIFee and
SavingsPlanRecurringFee lines) names no resource, so the review decides (docs/billing.md,
"Commitments attributed honestly"):

1. GPU spend, whole, when the commitment is scoped to GPU capacity: its unused row is of a GPU instance
   type (a reservation of p5.48xlarge), or some row of the commitment names an instance family whose
   types carry GPUs (an EC2 Instance Savings Plan for the p5 family: `commitment_gpu_scope`, set at
   import from the catalog);
2. non-GPU spend, whole, when its unused row is of an instance type without a GPU (a reservation of
   m7i.large), as before;
3. otherwise (a savings plan or a commitment of unknown scope) GPU spend in proportion to the part of
   its used cost that went to GPU rows, in the same month of the same review period, and the rest
   `unattributed_commitment_cost`: reported beside `non_gpu_cost`, never in GPU totals. A commitment
   with no used row there, or no id, attributes nothing.

An unused row split by 3. becomes two rows (its GPU part and the rest), each amount rounded to the
micro-unit so that the two add up to the row exactly.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from billing.storage import review_sql
from billing.storage.frame_sql import FrameSql

# The review frame's commitment columns beyond `commitment_status` (selectors, spend_columns and the
# month snapshots carry them; a frame without them, as benchmarks build, gets the defaults)
COMMITMENT_COLUMNS = [
    "commitment_discount_id",
    "commitment_type",
    "commitment_family",
    "commitment_gpu_scope",
    "commitment_end",
]
COMMITMENT_TEXT_COLUMNS = ("commitment_discount_id", "commitment_type", "commitment_family")
SPLIT_COLUMNS = ("billed_micros", "effective_micros", "list_micros")
TO_GPU, UNATTRIBUTED = "commitment_to_gpu", "commitment_unattributed"


def with_commitment_columns(frame: pd.DataFrame) -> pd.DataFrame:
    """`frame` with every COMMITMENT_COLUMNS column (the defaults where it has none)."""
    missing = {}
    for name in COMMITMENT_COLUMNS:
        if name in frame:
            continue
        if name == "commitment_gpu_scope":
            missing[name] = np.zeros(len(frame), dtype=bool)
        elif name == "commitment_end":
            missing[name] = pd.Series(pd.NaT, index=frame.index, dtype="datetime64[ns, UTC]")
        else:
            missing[name] = pd.Categorical.from_codes(np.zeros(len(frame), dtype=np.int8), categories=[""])
    return frame.assign(**missing) if missing else frame


def _text(frame: pd.DataFrame, column: str) -> np.ndarray:
    return frame[column].astype(object).to_numpy()


def gpu_scoped_commitments(frame: pd.DataFrame) -> set[str]:
    """Ids of the commitments some row of which says they are scoped to a GPU instance family."""
    scoped = frame["commitment_gpu_scope"].to_numpy(bool)
    if not scoped.any():
        return set()
    ids = _text(frame.iloc[np.flatnonzero(scoped)], "commitment_discount_id")
    return {value for value in ids if value}


def attributed(frame: pd.DataFrame, period_codes: np.ndarray) -> pd.DataFrame:
    """`frame` (the review's rows, commitment columns present) with two flags, TO_GPU and
    UNATTRIBUTED, on its unused rows, and the unused rows of rule 3 split in two. `period_codes`
    numbers each row's review period (the proportion is taken within a period and month)."""
    frame = with_commitment_columns(frame)
    unused = (frame["commitment_status"] == "unused").to_numpy(bool)
    unattributed = np.zeros(len(frame), dtype=bool)
    if not unused.any():  # most rows of a bill: nothing to attribute
        return frame.assign(**{TO_GPU: unattributed, UNATTRIBUTED: unattributed})
    has_gpu = (frame["gpu"] != "").to_numpy(bool)
    with_id = (frame["commitment_discount_id"] != "").to_numpy(bool)
    scoped = _in_ids(frame, gpu_scoped_commitments(frame)) & with_id
    whole_gpu = unused & (has_gpu | scoped)
    non_gpu_type = unused & ~whole_gpu & (frame["instance_type"] != "").to_numpy(bool)
    shared = unused & ~whole_gpu & ~non_gpu_type
    to_gpu = whole_gpu.copy()
    if not shared.any():
        return frame.assign(**{TO_GPU: to_gpu, UNATTRIBUTED: unattributed})
    keys = _keys(frame, period_codes, with_id)  # -1 for a row without a commitment id
    used = (frame["commitment_status"] == "used").to_numpy(bool) & with_id
    on_gpu = used & has_gpu & (frame["charge_category"] == "usage").to_numpy(bool)
    effective = frame["effective_micros"].to_numpy(np.int64)
    used_keys, totals, gpu_sums = _used_sums(keys[used], effective[used], on_gpu[used])
    positions = np.flatnonzero(shared)
    wanted = keys[positions]
    found = np.minimum(np.searchsorted(used_keys, wanted), max(len(used_keys) - 1, 0))
    matched = (
        (wanted >= 0) & (used_keys[found] == wanted) if len(used_keys) else np.zeros(len(wanted), dtype=bool)
    )
    extra = []
    values = {name: frame[name].to_numpy(np.int64).copy() for name in SPLIT_COLUMNS}
    for position, index, known in zip(positions, found, matched, strict=True):
        gpu_part, total = (gpu_sums[index], totals[index]) if known else (0, 0)
        if total <= 0 or gpu_part <= 0:
            unattributed[position] = True
        elif gpu_part >= total:
            to_gpu[position] = True
        else:
            parts = {name: _share(int(values[name][position]), gpu_part, total) for name in SPLIT_COLUMNS}
            extra.append(
                (position, {name: int(values[name][position]) - part for name, part in parts.items()})
            )
            for name, part in parts.items():
                values[name][position] = part
            to_gpu[position] = True
    out = frame.assign(**values, **{TO_GPU: to_gpu, UNATTRIBUTED: unattributed})
    if not extra:
        return out
    rest = out.iloc[[position for position, _ in extra]].copy()
    for name in SPLIT_COLUMNS:
        rest[name] = np.array([amounts[name] for _, amounts in extra], dtype=np.int64)
    rest[TO_GPU], rest[UNATTRIBUTED] = False, True
    return pd.concat([out, rest], ignore_index=True)


def period_codes_of(starts_ns: np.ndarray, bounds: list[tuple[int, int]]) -> np.ndarray:
    """The index of the [start, end) bound (nanoseconds) each start falls in, len(bounds) for none."""
    codes = np.full(len(starts_ns), len(bounds), dtype=np.int64)
    for number, (begin, end) in reversed(list(enumerate(bounds))):
        codes[(starts_ns >= begin) & (starts_ns < end)] = number
    return codes


def _in_ids(frame: pd.DataFrame, ids: set[str]) -> np.ndarray:
    """Whether each row's commitment id is one of `ids` (compared once per distinct id)."""
    if not ids:
        return np.zeros(len(frame), dtype=bool)
    values = frame["commitment_discount_id"]
    if values.dtype == "category":
        flags = np.array([name in ids for name in values.cat.categories] + [False], dtype=bool)
        return flags[values.cat.codes.to_numpy()]
    return values.astype(object).isin(ids).to_numpy(bool)


def _keys(frame: pd.DataFrame, period_codes: np.ndarray, with_id: np.ndarray) -> np.ndarray:
    """One int64 per row for (commitment id, review period, month); -1 where a row has no id."""
    ids = frame["commitment_discount_id"]
    id_codes = (
        ids.cat.codes.to_numpy(np.int64)
        if ids.dtype == "category"
        else pd.factorize(ids.astype(object))[0].astype(np.int64)
    )
    starts = pd.DatetimeIndex(frame["charge_period_start"]).as_unit("ns").asi8
    months = starts.astype("datetime64[ns]").astype("datetime64[M]").astype(np.int64)  # months since 1970
    periods = int(period_codes.max(initial=0)) + 1
    span = int(months.max(initial=0)) + 1
    keys = (id_codes * periods + period_codes) * span + months
    return np.where(with_id, keys, -1)


def _used_sums(keys: np.ndarray, effective: np.ndarray, on_gpu: np.ndarray) -> tuple[np.ndarray, list, list]:
    """(the distinct keys in order, each key's used cost, its GPU part): review_sql.COMMITMENT_USED in
    DuckDB (frame_sql.py; exact HUGEINT sums) over the used rows."""
    if not len(keys):
        return np.zeros(0, dtype=np.int64), [], []
    spend = pd.DataFrame({"commitment_key": keys, "effective_micros": effective, "gpu_usage": on_gpu})
    with FrameSql() as sql:
        found = sql.register("spend", spend).rows(review_sql.COMMITMENT_USED)
    return (
        np.array([key for key, _, _ in found], dtype=np.int64),
        [int(total) for _, total, _ in found],
        [int(gpu) for _, _, gpu in found],
    )


def _share(amount: int, numerator: int, denominator: int) -> int:
    """amount x numerator / denominator to the nearest micro-unit (halves away from zero), exactly."""
    quotient, remainder = divmod(abs(amount) * numerator, denominator)
    rounded = quotient + (2 * remainder >= denominator)
    return rounded if amount >= 0 else -rounded
