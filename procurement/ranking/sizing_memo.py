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


KEYS_KEPT = 256  # per process: the specs and grid arrays whose keys were built last


class HashedKey:
    """A memo key hashed once: a ranking asks the memo three or four times, and hashing a nested spec or
    a grid's array bytes again each time cost more than the sizing it saves. Interned (``_interned``),
    so equal keys are one object and a lookup compares by identity."""

    __slots__ = ("_hash", "value")

    def __init__(self, value: Hashable) -> None:
        self.value, self._hash = value, hash(value)

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        return isinstance(other, HashedKey) and self._hash == other._hash and self.value == other.value


_INTERNED: dict[HashedKey, HashedKey] = {}
_SPEC_KEYS: dict[int, tuple[WorkloadSpec, HashedKey]] = {}
_ARRAY_KEYS: dict[tuple[int, ...], tuple[tuple[np.ndarray, ...], HashedKey]] = {}


def _interned(value: Hashable) -> HashedKey:
    key = HashedKey(value)
    if len(_INTERNED) >= KEYS_KEPT:
        _INTERNED.clear()
    return _INTERNED.setdefault(key, key)


def spec_key(spec: WorkloadSpec) -> HashedKey:
    """The spec as sizing reads it: the name and the token count never change memory or tokens/s. Built
    once per spec object (specs are frozen; each entry keeps its spec alive and is checked with ``is``)."""
    entry = _SPEC_KEYS.get(id(spec))
    if entry is None or entry[0] is not spec:
        if len(_SPEC_KEYS) >= KEYS_KEPT:
            _SPEC_KEYS.clear()
        entry = _SPEC_KEYS[id(spec)] = (spec, _interned(replace(spec, name="", training_tokens=None)))
    return entry[1]


def calibration_key(calibration: Mapping[Any, Any] | None) -> Hashable:
    return frozenset((calibration or {}).items())


def arrays_key(*arrays: np.ndarray) -> Hashable:
    """The arrays' exact contents as a key. Read-only arrays (a shape grid's: ``freeze``) cannot change,
    so their key is built once per set of array objects (checked with ``is``); others every time."""
    if any(array.flags.writeable for array in arrays):
        return tuple((array.dtype.str, array.shape, array.tobytes()) for array in arrays)
    ids = tuple(id(array) for array in arrays)
    entry = _ARRAY_KEYS.get(ids)
    if entry is None or any(kept is not array for kept, array in zip(entry[0], arrays, strict=True)):
        if len(_ARRAY_KEYS) >= KEYS_KEPT:
            _ARRAY_KEYS.clear()
        value = tuple((array.dtype.str, array.shape, array.tobytes()) for array in arrays)
        entry = _ARRAY_KEYS[ids] = (arrays, _interned(value))
    return entry[1]


def freeze(*arrays: np.ndarray) -> None:
    """Make arrays read-only (a shape grid's, shared by every workload ranked on it)."""
    for array in arrays:
        array.flags.writeable = False


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
