"""Reference copy of the row keys before the 128-bit scheme (billing/imports/enrich.py at commit
c9271c5): SHA-256 of the row's normalized text, 64 hex digits. Kept to store rows the way that code
did, for the tests of their re-import (migration 0003, legacy_keys.py). Not app code."""

from __future__ import annotations

import hashlib

import pandas as pd

from billing.imports.records import COMMITMENT_COLUMNS, NORMALIZED_COLUMNS


def row_keys(frame: pd.DataFrame, seen: dict[int, int]) -> list[str]:
    columns = [c for c in NORMALIZED_COLUMNS if c not in ("source_row", "tags", *COMMITMENT_COLUMNS)]
    parts = [_key_text(frame[column]) for column in columns]
    tag_texts = [repr(sorted(tags.items())) for tags in frame["tags"].to_numpy(dtype=object)]
    keys = []
    for values, tag_text in zip(zip(*parts, strict=True), tag_texts, strict=True):
        text = "\x1f".join(values) + "\x1e" + tag_text
        occurrence = seen.get(hash(text), 0)
        seen[hash(text)] = occurrence + 1
        keys.append(hashlib.sha256(f"{text}\x1d{occurrence}".encode()).hexdigest())
    return keys


def _key_text(values: pd.Series) -> list[str]:
    if pd.api.types.is_datetime64_any_dtype(values):
        return values.to_numpy(dtype="datetime64[ns]").astype("int64").astype(str).tolist()
    return values.astype(object).astype(str).fillna("").tolist()
