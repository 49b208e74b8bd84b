"""A FOCUS `Tags` cell in the forms providers' exports write it, as one dict of tag -> value.

FOCUS 1.2 defines Tags as a JSON object of key/value pairs ("Tags" column, FOCUS specification,
CC-BY-4.0). Exports and the pipelines that carry them also write:
- a JSON list of {"key": ..., "value": ...} records: how BigQuery's billing export stores GCP labels
  (https://cloud.google.com/billing/docs/how-to/export-data-bigquery-tables, `labels` field);
- the object's members without its braces (`"team": "ml","env": "prod"`): Azure's usage-details CSVs
  write their Tags column this way (https://learn.microsoft.com/azure/cost-management-billing/automate/
  understand-usage-details-fields, "Tags");
- `key=value` pairs separated by `;` or `,`, as warehouse exports flatten tags into one text column.
AWS's FOCUS export keeps the tag's origin in its key (`user:team`, per the AWS Data Exports FOCUS
table dictionary); the `user:` prefix is dropped, as CUR's `user_` is (cur.py), so a team tag reads
`team` from either.
Anything else is a clear error naming the row and column.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd

from billing.imports.cells import Distinct, _json_text_problem
from billing.imports.codes import first_rows, object_array
from billing.imports.enrich import tag_codes
from billing.imports.records import tag_name
from gpuledger.json_depth import loads_bounded

_PAIR_SEPARATORS = re.compile(r"[;,]")
FORMS = "a JSON object, a JSON list of {key, value} objects or key=value pairs"


def tag_object(text: str) -> tuple[dict, str]:
    """(the tags, "") or ({}, what is wrong with the cell)."""
    value = text.strip()
    if value == "":
        return {}, ""
    if value[0] in "{[":
        try:
            parsed = loads_bounded(value)
        except json.JSONDecodeError as error:
            return {}, f"not JSON: {error.msg}"
        tags, problem = _from_json(parsed)
    elif value.startswith('"'):
        try:
            tags, problem = _from_json(loads_bounded("{" + value + "}"))
        except json.JSONDecodeError as error:
            return {}, f"tags must be {FORMS} (not JSON: {error.msg})"
    elif "=" in value:
        tags, problem = _from_pairs(value)
    else:
        return {}, f"tags must be {FORMS}"
    if problem:
        return {}, problem
    tags = {str(key).removeprefix("user:"): item for key, item in tags.items()}
    return tags, _json_text_problem(tags)


def _from_json(parsed) -> tuple[dict, str]:
    if isinstance(parsed, dict):
        return parsed, ""
    if isinstance(parsed, list):
        tags = {}
        for item in parsed:
            if not isinstance(item, dict) or "key" not in item:
                return {}, 'a JSON list of tags must hold {"key": ..., "value": ...} objects'
            tags[str(item["key"])] = item.get("value")
        return tags, ""
    return {}, f"tags must be {FORMS}"


def _from_pairs(value: str) -> tuple[dict, str]:
    tags = {}
    for pair in _PAIR_SEPARATORS.split(value):
        if pair.strip() == "":
            continue
        key, sign, item = pair.partition("=")
        if not sign or key.strip() == "":
            return {}, f"tag {pair.strip()!r} is not key=value"
        tags[key.strip()] = item.strip()
    return tags, ""


def tag_objects(frame: pd.DataFrame, column: str, *, file: str, first_row: int) -> pd.Series:
    """Each cell as a dict ({} when empty), parsed once per distinct text; rows sharing a text share
    one dict object (enrich.object_codes relies on it)."""
    return tag_objects_and_ids(frame, column, file=file, first_row=first_row)[0]


def tag_objects_and_ids(
    frame: pd.DataFrame, column: str, *, file: str, first_row: int
) -> tuple[pd.Series, np.ndarray]:
    """tag_objects, and each row's dict's `id` (int64), spread by the texts' codes: a column TAG_SET
    (enrich.tag_codes) of it spares the import finding the rows' sets again by identity, a `map(id)`
    over every row. Each distinct text is parsed into a dict of its own, so the ids are the objects'."""
    cells = Distinct(frame, column, file=file, first_row=first_row)
    parsed = [tag_object(value) for value in cells.values]
    cells.fail_if([bool(problem) for _, problem in parsed], lambda at: parsed[at][1])
    objects = object_array([tags for tags, _ in parsed])
    ids = np.fromiter(map(id, objects), dtype=np.int64, count=len(objects))
    return pd.Series(objects[cells.codes], index=frame.index, dtype=object), ids[cells.codes]


# At most this many distinct unusable tag values are named per file; the rest are counted in one line
MAX_TAG_NOTES = 20


class TagNotes:
    """The import's warnings of one file's tag values that name nothing (records.tag_name): a team,
    project or environment tag whose value is a JSON object, array or boolean. Such a row is kept,
    untagged; each distinct value is named once, by the first line that has it, written as JSON."""

    def __init__(self, file: str, column: str, named_keys: tuple[str, ...]):
        self.file, self.column, self.named_keys = file, column, frozenset(named_keys)
        self.found: dict[tuple[str, str], list[int]] = {}  # (tag, value as JSON) -> [first line, rows]

    def note(self, chunk: pd.DataFrame) -> None:
        """Look at one normalized chunk's tag sets (each distinct set once)."""
        codes, tag_sets = tag_codes(chunk)
        bad = [self._unnamed(tags) for tags in tag_sets]
        if not any(bad):
            return
        rows = np.bincount(codes, minlength=len(tag_sets))
        first = first_rows(codes)
        lines = chunk["source_row"].to_numpy()
        for position, found in enumerate(bad):
            for key in found:
                entry = self.found.setdefault(key, [int(lines[first[position]]), 0])
                entry[1] += int(rows[position])

    def _unnamed(self, tags: dict) -> list[tuple[str, str]]:
        return [
            (str(key), json.dumps(value, ensure_ascii=False))
            for key, value in tags.items()
            if str(key).lower() in self.named_keys
            and value is not None
            and not isinstance(value, str)
            and not tag_name(value)
        ]

    def lines(self) -> list[str]:
        """One warning per distinct value: file:line:column, the tag and its value as JSON."""
        shown = sorted(self.found.items(), key=lambda item: item[1][0])
        out = [
            f"{self.file}:{line}:{self.column}: tag {json.dumps(key)} is {value}, {_kind(value)}, not a "
            f"name: {rows} row{'s' if rows != 1 else ''} kept untagged"
            for (key, value), (line, rows) in shown[:MAX_TAG_NOTES]
        ]
        if len(shown) > MAX_TAG_NOTES:
            more = sum(rows for _, (_, rows) in shown[MAX_TAG_NOTES:])
            out.append(
                f"{self.file}:{self.column}: {len(shown) - MAX_TAG_NOTES} more tag values that are not a "
                f"name ({more} rows) kept untagged"
            )
        return out


def _kind(value_json: str) -> str:
    first = value_json[:1]
    return {"{": "a JSON object", "[": "a JSON array", "t": "a boolean", "f": "a boolean"}.get(
        first, "not a name"
    )
