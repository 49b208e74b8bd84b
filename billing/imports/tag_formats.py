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

import pandas as pd

from billing.imports.cells import Distinct, _json_text_problem
from billing.imports.codes import object_array
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
    cells = Distinct(frame, column, file=file, first_row=first_row)
    parsed = [tag_object(value) for value in cells.values]
    cells.fail_if([bool(problem) for _, problem in parsed], lambda at: parsed[at][1])
    return pd.Series(object_array([tags for tags, _ in parsed])[cells.codes], index=frame.index, dtype=object)
