"""Add what the catalog and the tags say to normalized rows: GPU model, GPUs per instance, hours, team.

Plain pandas, no ORM: the catalog comes in as a mapping (provider slug, instance type) -> (GPU id,
GPU slug, GPUs per instance) built by the caller. An instance type the catalog does not know is kept
as written, gets no GPU (so its cost counts as non-GPU spend, never in cost per GPU-hour) and is
counted in `unmapped` for the import to list; it is never matched by a similar name.

Column-oriented: every per-row value is computed once per distinct value (or tuple of values: codes.py)
and spread back by code as a categorical, since a bill repeats a few instance types, hour counts and
tag sets over many rows.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from decimal import Decimal

import numpy as np
import pandas as pd

from billing.imports.codes import coded, first_rows, tuple_codes
from billing.imports.records import TagMapping

HOUR_UNITS = frozenset({"hour", "hours", "hrs", "hr", "h"})
# Google Cloud bills GPU and VM time in seconds (its export's usage.unit "seconds"): 3,600 make an hour.
SECOND_UNITS = frozenset({"second", "seconds", "sec", "secs", "s"})
UNITS_PER_HOUR = {**dict.fromkeys(HOUR_UNITS, 1), **dict.fromkeys(SECOND_UNITS, 3600)}
# OCI prices its GPU shapes per GPU per hour (its price list's unit "GPU Per Hour"; its FOCUS reports
# count compute as "OCPU Hours" / "OCPU Per Hour" alike): such a row's quantity is GPU-hours already, 16
# for BM.GPU.H100.8 over 2 hours, and its instance-hours are that over the shape's GPUs.
GPU_HOUR_UNITS = frozenset({"gpu hours", "gpu hour", "gpu per hour", "gpu-hours", "gpu hrs"})
# The bill's provider slug -> the catalog's, where they differ: OCI's FOCUS reports name the provider
# "Oracle" (providers.provider_slug: "oracle"), the catalog loads OCI's shapes as "oci" (pricing/catalog.py).
CATALOG_PROVIDERS = {"oracle": "oci"}

CatalogEntry = tuple[int, str, Decimal]  # GPU model id, GPU slug, GPUs per instance
# Each row's tag set as a number: the `id` of its dict, as a reader that parsed the tags once per distinct
# text gives it (tag_formats.tag_objects_and_ids: a number per distinct text, spread by code), or the code
# of the set (object_codes, in order of first appearance), which `enrich` keeps for the row keys and the
# dataset writer (tag_codes) to read instead of going over the rows again
TAG_SET = "tag_set"


def object_codes(values: pd.Series) -> tuple[np.ndarray, list]:
    """Codes of the distinct objects of an object column (by identity: rows share parsed tag dicts)."""
    objects = values.to_numpy(dtype=object)
    ids = np.fromiter(map(id, objects), dtype=np.int64, count=len(objects))
    return _id_codes(ids, objects)


def _id_codes(ids: np.ndarray, objects: np.ndarray) -> tuple[np.ndarray, list]:
    codes, _ = pd.factorize(ids)
    return codes, [objects[i] for i in first_rows(codes)]


def tag_codes(frame: pd.DataFrame) -> tuple[np.ndarray, list]:
    """object_codes of the frame's tags: from the codes `enrich` keeps (TAG_SET) where it ran, or the
    ids the reader gave (the same codes: object_codes factorizes the rows' ids), else worked out (a
    `map(id)` over every row, twice a chunk before the readers gave them: issue 28, 0.2 of the importing
    thread's 2.1 CPU s a million bench rows)."""
    if TAG_SET not in frame:
        return object_codes(frame["tags"])
    numbers = frame[TAG_SET].to_numpy()
    objects = frame["tags"].to_numpy(dtype=object)
    if not _first_appearance_codes(numbers):  # the reader's ids
        return _id_codes(numbers, objects)
    return numbers, [objects[i] for i in first_rows(numbers)]


def _first_appearance_codes(numbers: np.ndarray) -> bool:
    """Whether `numbers` are codes 0..k-1 numbered in order of first appearance (as enrich keeps them);
    a dict's id is never one (an address, far above any row count)."""
    if not len(numbers):
        return True
    running = np.maximum.accumulate(numbers)
    return bool(numbers[0] == 0 and numbers.min() >= 0 and (np.diff(running) <= 1).all())


def enrich(
    frame: pd.DataFrame,
    *,
    catalog: Mapping[tuple[str, str], CatalogEntry],
    tags: TagMapping,
    unmapped: Counter,
) -> pd.DataFrame:
    out = frame.copy(deep=False)  # copy-on-write: the new columns do not reach `frame`
    codes, uniques = tuple_codes(out["provider"], out["instance_type"])
    entries = [
        catalog.get(key) or catalog.get((CATALOG_PROVIDERS.get(key[0], ""), key[1])) for key in uniques
    ]
    counts = np.bincount(codes, minlength=len(uniques)) if len(codes) else []
    for (provider, itype), entry, count in zip(uniques, entries, counts, strict=True):
        if itype and entry is None:
            unmapped[f"{provider}:{itype}"] += int(count)
    out["gpu_id"] = coded(codes, [e[0] if e else None for e in entries], out.index)
    out["gpu_slug"] = coded(codes, [e[1] if e else "" for e in entries], out.index)
    out["gpus_per_instance"] = coded(codes, [e[2] if e else None for e in entries], out.index)
    _hours(out, codes, uniques, entries)
    _teams(out, tags)
    out["commitment_gpu_scope"] = _gpu_scoped(out, catalog)
    return out


def gpu_families(catalog: Mapping[tuple[str, str], CatalogEntry]) -> set[tuple[str, str]]:
    """(provider, instance family) of every GPU instance type: "p5" of "p5.48xlarge"."""
    return {(provider, name.split(".")[0]) for (provider, name), entry in catalog.items() if entry}


def _gpu_scoped(out: pd.DataFrame, catalog: Mapping[tuple[str, str], CatalogEntry]) -> pd.Series:
    """Whether the row's commitment is scoped to GPU capacity: an instance family (a reservation's, an
    instance savings plan's) whose instance types carry GPUs in the catalog."""
    families = gpu_families(catalog)
    codes, uniques = tuple_codes(out["provider"], out["commitment_family"])
    flags = np.array([(p, f.strip()) in families for p, f in uniques] + [False], dtype=bool)
    return pd.Series(flags[codes] if len(codes) else np.zeros(0, dtype=bool), index=out.index)


def _hours(out: pd.DataFrame, type_codes: np.ndarray, types: list[tuple], entries: list) -> None:
    """Instance-hours (usage rows in hours with an instance type) and GPU-hours (x GPUs per instance; a
    row in GPU-hours, OCI's, the other way round), exact Decimals computed once per distinct (quantity, unit, category, instance type)."""
    codes, uniques = tuple_codes(
        out["consumed_quantity"],
        out["consumed_unit"],
        out["charge_category"],
        pd.Series(type_codes, index=out.index),
    )
    hours, gpu_hours = [], []
    for quantity, unit, category, type_code in uniques:
        per_hour = UNITS_PER_HOUR.get(unit.strip().lower())
        is_usage = quantity != "" and types[type_code][1] != "" and category == "usage"
        count = entries[type_code][2] if entries[type_code] else None
        if is_usage and count and unit.strip().lower() in GPU_HOUR_UNITS:  # GPU-hours given (OCI)
            hours.append(Decimal(quantity) / count)
            gpu_hours.append(Decimal(quantity))
            continue
        h = Decimal(quantity) / per_hour if is_usage and per_hour is not None else Decimal(0)
        hours.append(h)
        gpu_hours.append(h * count if count is not None else Decimal(0))
    out["instance_hours"] = coded(codes, hours, out.index)
    out["gpu_hours"] = coded(codes, gpu_hours, out.index)


def _teams(out: pd.DataFrame, tags: TagMapping) -> None:
    codes, tag_sets = tag_codes(out)
    out[TAG_SET] = codes
    for name, keys in (("team", tags.team), ("project", tags.project), ("environment", tags.environment)):
        out[name] = coded(codes, [tags.pick(value, keys) for value in tag_sets], out.index)
