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


def row_keys(frame: pd.DataFrame, seen: dict[bytes, int]) -> list[str]:
    """A stable hash of each source row's normalized values; the n-th identical row gets occurrence n,
    so a file with two equal lines keeps both and a re-import matches each to itself. `seen` carries
    the counts across the chunks of one file."""
    columns = [c for c in NORMALIZED_COLUMNS if c not in ("source_row", "tags")]
    # pandas 3 keeps a missing value missing through astype(str): fill it so every cell is text
    parts = [_key_text(frame[column]) for column in columns]
    texts = ["\x1f".join(values) for values in zip(*parts, strict=True)]
    tag_texts = frame["tags"].map(lambda t: repr(sorted(t.items())))
    keys = []
    for text, tag_text in zip(texts, tag_texts, strict=True):
        digest = hashlib.sha256(f"{text}\x1e{tag_text}".encode()).digest()
        occurrence = seen.get(digest, 0)
        seen[digest] = occurrence + 1
        keys.append(hashlib.sha256(digest + occurrence.to_bytes(4, "big")).hexdigest())
    return keys


def _key_text(values: pd.Series) -> list[str]:
    """Each cell as text for the row key; datetimes as epoch nanoseconds (formatting dates is slow)."""
    if pd.api.types.is_datetime64_any_dtype(values):
        return values.to_numpy(dtype="datetime64[ns]").astype("int64").astype(str).tolist()
    return values.astype(str).fillna("").tolist()
