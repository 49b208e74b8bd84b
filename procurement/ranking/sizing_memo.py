"""A workload's sizing on one shape grid, memoized for the grid's lifetime (one prepared offer table).

Stored workloads share shapes: a recompute of thousands of them sizes the same model, task, precision and
parallelism again and again, with only the name and the token count differing. Memory per GPU and
training throughput do not depend on either (the token count only divides into hours, which the caller
derives again from the memoized tokens/s with the same float operations), so they are computed once per
distinct (spec without name and tokens, the contract grid's plan arrays, calibration factors).

The memo lives on the ShapeGrid, which ``PreparedOffers.grid`` builds once per prepared offer table: a
new price version prepares a new table and so starts an empty memo; nothing crosses recompute runs. The
arrays handed out are read-only, so no caller can change another workload's figures.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from dataclasses import replace
from typing import Any, TypeVar

import numpy as np

from procurement.sizing import WorkloadSpec

ENTRIES_KEPT = 64  # per grid (a training entry is ~30 arrays of the grid's shapes); full: start over

Value = TypeVar("Value")


def spec_key(spec: WorkloadSpec) -> WorkloadSpec:
    """The spec as sizing reads it: the name and the token count never change memory or tokens/s."""
    return replace(spec, name="", training_tokens=None)


def calibration_key(calibration: Mapping[Any, Any] | None) -> Hashable:
    return frozenset((calibration or {}).items())


def arrays_key(*arrays: np.ndarray) -> tuple:
    return tuple((array.dtype.str, array.shape, array.tobytes()) for array in arrays)


def memoized(memo: dict, key: Hashable, compute: Callable[[], Value]) -> Value:
    """``compute()`` once per key in ``memo``; its arrays (a dict's values too) frozen read-only."""
    if key in memo:
        return memo[key]
    value = compute()
    for array in value.values() if isinstance(value, dict) else ():
        if isinstance(array, np.ndarray):
            array.flags.writeable = False
    if len(memo) >= ENTRIES_KEPT:
        memo.clear()
    memo[key] = value
    return value
