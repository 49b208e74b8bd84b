"""Read a study file (YAML or JSON) into plain data, reporting syntax errors by file, line and column.

JSON numbers are read as Decimal so that a price written as 2.99 stays exactly 2.99.
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import yaml

from procurement.costing.values import CostInputError


class DocumentSyntaxError(CostInputError):
    """The file is not valid YAML/JSON; ``field`` holds ``file, line L, column C`` (1-based)."""


def load_document_text(text: str, source: str = "<input>") -> object:
    """Parse JSON when the text looks like a JSON object, else YAML (a superset for our purposes)."""
    if not text.strip():
        raise CostInputError(source, "empty file: give a study in YAML or JSON")
    if text.lstrip().startswith("{") or source.endswith(".json"):
        return _load_json(text, source)
    return _load_yaml(text, source)


def load_document_file(path: str | Path) -> object:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise CostInputError(str(path), f"cannot read the file: {error.strerror}") from None
    return load_document_text(text, str(path))


def _load_json(text: str, source: str) -> object:
    try:
        return json.loads(text, parse_float=Decimal)
    except json.JSONDecodeError as error:
        raise DocumentSyntaxError(f"{source}, line {error.lineno}, column {error.colno}", error.msg) from None


def _load_yaml(text: str, source: str) -> object:
    try:
        return yaml.safe_load(text)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark
        where = f"{source}, line {mark.line + 1}, column {mark.column + 1}" if mark else source
        raise DocumentSyntaxError(where, str(error.problem or error)) from None
    except yaml.YAMLError as error:
        raise DocumentSyntaxError(source, str(error)) from None
