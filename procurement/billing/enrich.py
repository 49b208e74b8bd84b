"""Add what the catalog and the tags say to normalized rows: GPU model, GPUs per instance, hours, team.

Plain pandas, no ORM: the catalog comes in as a mapping (provider slug, instance type) -> (GPU id,
GPU slug, GPUs per instance) built by the caller. An instance type the catalog does not know is kept
as written, gets no GPU (so its cost counts as non-GPU spend, never in cost per GPU-hour) and is
counted in `unmapped` for the import to list; it is never matched by a similar name.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Mapping
from decimal import Decimal

import pandas as pd

from procurement.billing.records import NORMALIZED_COLUMNS, TagMapping

HOUR_UNITS = frozenset({"hour", "hours", "hrs", "hr", "h"})

CatalogEntry = tuple[int, str, Decimal]  # GPU model id, GPU slug, GPUs per instance


def enrich(
    frame: pd.DataFrame,
    *,
    catalog: Mapping[tuple[str, str], CatalogEntry],
    tags: TagMapping,
    unmapped: Counter,
) -> pd.DataFrame:
    out = frame.copy()
    keys = list(zip(out["provider"], out["instance_type"], strict=True))
    entries = [catalog.get(key) for key in keys]
    # object columns: a None must stay None (not NaN) on its way to the database
    out["gpu_id"] = pd.Series(
        [entry[0] if entry else None for entry in entries], index=out.index, dtype=object
    )
    out["gpu_slug"] = [entry[1] if entry else "" for entry in entries]
    out["gpus_per_instance"] = pd.Series(
        [entry[2] if entry else None for entry in entries], index=out.index, dtype=object
    )
    for (provider, itype), entry in zip(keys, entries, strict=True):
        if itype and entry is None:
            unmapped[f"{provider}:{itype}"] += 1
    hourly = out["consumed_unit"].str.strip().str.lower().isin(HOUR_UNITS) & (out["consumed_quantity"] != "")
    is_instance = hourly & (out["instance_type"] != "") & (out["charge_category"] == "usage")
    hours = [
        Decimal(q) if flag else Decimal(0)
        for q, flag in zip(out["consumed_quantity"], is_instance, strict=True)
    ]
    out["instance_hours"] = pd.Series(hours, index=out.index, dtype=object)
    out["gpu_hours"] = pd.Series(
        [
            h * count if count is not None else Decimal(0)
            for h, count in zip(hours, out["gpus_per_instance"], strict=True)
        ],
        index=out.index,
        dtype=object,
    )
    picked: dict[int, tuple[str, str, str]] = {}  # rows share tag dicts (parsed once per distinct text)
    for value in out["tags"].to_numpy(dtype=object):
        if id(value) not in picked:
            picked[id(value)] = (
                tags.pick(value, tags.team),
                tags.pick(value, tags.project),
                tags.pick(value, tags.environment),
            )
    triples = [picked[id(value)] for value in out["tags"].to_numpy(dtype=object)]
    out["team"], out["project"], out["environment"] = ([t[i] for t in triples] for i in range(3))
    return out


def row_keys(frame: pd.DataFrame, seen: dict[int, int]) -> list[str]:
    """A stable hash of each source row's normalized values and its occurrence number among identical
    rows (the n-th identical row gets n), so a file with two equal lines keeps both and a re-import
    matches each to itself. `seen` counts texts across the chunks of one file; it is keyed on the
    text's in-process hash (8 bytes a row instead of the text), used for counting only, never stored."""
    columns = [c for c in NORMALIZED_COLUMNS if c not in ("source_row", "tags")]
    # pandas 3 keeps a missing value missing through astype(str): _key_text fills it so every cell is text
    parts = [_key_text(frame[column]) for column in columns]
    tag_cache: dict[int, str] = {}
    tag_texts = []
    for tags in frame["tags"].to_numpy(dtype=object):
        if id(tags) not in tag_cache:
            tag_cache[id(tags)] = repr(sorted(tags.items()))
        tag_texts.append(tag_cache[id(tags)])
    keys = []
    for values, tag_text in zip(zip(*parts, strict=True), tag_texts, strict=True):
        text = "\x1f".join(values) + "\x1e" + tag_text
        fingerprint = hash(text)
        occurrence = seen.get(fingerprint, 0)
        seen[fingerprint] = occurrence + 1
        keys.append(hashlib.sha256(f"{text}\x1d{occurrence}".encode()).hexdigest())
    return keys


def _key_text(values: pd.Series) -> list[str]:
    """Each cell as text for the row key; datetimes as epoch nanoseconds (formatting dates is slow)."""
    if pd.api.types.is_datetime64_any_dtype(values):
        return values.to_numpy(dtype="datetime64[ns]").astype("int64").astype(str).tolist()
    return values.astype(str).fillna("").tolist()
