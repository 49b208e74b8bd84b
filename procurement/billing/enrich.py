"""Add what the catalog and the tags say to normalized rows: GPU model, GPUs per instance, hours, team.

Plain pandas, no ORM: the catalog comes in as a mapping (provider slug, instance type) -> (GPU id,
GPU slug, GPUs per instance) built by the caller. An instance type the catalog does not know is kept
as written, gets no GPU (so its cost counts as non-GPU spend, never in cost per GPU-hour) and is
counted in `unmapped` for the import to list; it is never matched by a similar name.

Column-oriented: every per-row value is computed once per distinct value (pd.factorize) and spread
back by code, since a bill repeats a few instance types, hour counts and tag sets over many rows.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from decimal import Decimal

import numpy as np
import pandas as pd

from procurement.billing.records import TagMapping

HOUR_UNITS = frozenset({"hour", "hours", "hrs", "hr", "h"})

CatalogEntry = tuple[int, str, Decimal]  # GPU model id, GPU slug, GPUs per instance


def spread(codes: np.ndarray, values: list, index: pd.Index) -> pd.Series:
    """An object column holding values[code] for each row (a None stays None, never NaN)."""
    table = np.empty(len(values), dtype=object)
    table[:] = values
    return pd.Series(table[codes] if len(codes) else [], index=index, dtype=object)


def pair_codes(first, second) -> tuple[np.ndarray, list[tuple]]:
    """Codes of the distinct (first, second) pairs and the pairs (factorizing a MultiIndex would
    build a tuple per row)."""
    codes_a, uniques_a = pd.factorize(np.asarray(first, dtype=object))
    codes_b, uniques_b = pd.factorize(np.asarray(second, dtype=object))
    codes, combined = pd.factorize(codes_a.astype(np.int64) * max(len(uniques_b), 1) + codes_b)
    width = max(len(uniques_b), 1)
    return codes, [(uniques_a[c // width], uniques_b[c % width]) for c in combined]


def object_codes(values: pd.Series) -> tuple[np.ndarray, list]:
    """Codes of the distinct objects of an object column (by identity: rows share parsed tag dicts)."""
    objects = values.to_numpy(dtype=object)
    ids = np.fromiter(map(id, objects), dtype=np.int64, count=len(objects))
    codes, _ = pd.factorize(ids)
    _, firsts = np.unique(codes, return_index=True)  # codes run 0..k-1: the first row of each object
    return codes, [objects[i] for i in firsts]


def enrich(
    frame: pd.DataFrame,
    *,
    catalog: Mapping[tuple[str, str], CatalogEntry],
    tags: TagMapping,
    unmapped: Counter,
) -> pd.DataFrame:
    out = frame.copy()
    codes, uniques = pair_codes(out["provider"], out["instance_type"])
    entries = [catalog.get(key) for key in uniques]
    counts = np.bincount(codes, minlength=len(uniques)) if len(codes) else []
    for (provider, itype), entry, count in zip(uniques, entries, counts, strict=True):
        if itype and entry is None:
            unmapped[f"{provider}:{itype}"] += int(count)
    out["gpu_id"] = spread(codes, [e[0] if e else None for e in entries], out.index)
    out["gpu_slug"] = spread(codes, [e[1] if e else "" for e in entries], out.index)
    out["gpus_per_instance"] = spread(codes, [e[2] if e else None for e in entries], out.index)
    _hours(out, codes, entries)
    _teams(out, tags)
    return out


def _hours(out: pd.DataFrame, type_codes: np.ndarray, entries: list) -> None:
    """Instance-hours (usage rows in hours with an instance type) and GPU-hours (x GPUs per instance),
    exact Decimals computed once per distinct (quantity, instance type) pair."""
    hourly = out["consumed_unit"].str.strip().str.lower().isin(HOUR_UNITS) & (out["consumed_quantity"] != "")
    is_instance = hourly & (out["instance_type"] != "") & (out["charge_category"] == "usage")
    quantity = out["consumed_quantity"].where(is_instance, "").astype(object)
    codes, uniques = pair_codes(quantity, type_codes)
    hours, gpu_hours = [], []
    for text, type_code in uniques:
        h = Decimal(text) if text != "" else Decimal(0)
        count = entries[type_code][2] if entries[type_code] else None
        hours.append(h)
        gpu_hours.append(h * count if count is not None else Decimal(0))
    out["instance_hours"] = spread(codes, hours, out.index)
    out["gpu_hours"] = spread(codes, gpu_hours, out.index)


def _teams(out: pd.DataFrame, tags: TagMapping) -> None:
    codes, tag_sets = object_codes(out["tags"])
    for name, keys in (("team", tags.team), ("project", tags.project), ("environment", tags.environment)):
        out[name] = spread(codes, [tags.pick(value, keys) for value in tag_sets], out.index)
