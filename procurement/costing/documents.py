"""Read a study file (YAML or JSON) into plain data, reporting syntax errors by file, line and column.

JSON numbers are read as Decimal so that a price written as 2.99 stays exactly 2.99.
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import yaml

from gpuledger.input_bounds import first_document_problem
from gpuledger.json_depth import MAX_JSON_DEPTH, first_too_deep, line_column
from gpuledger.yaml_bounded import BoundedYamlLoader
from procurement.costing.values import CostInputError


class DocumentSyntaxError(CostInputError):
    """The file is not valid YAML/JSON; ``field`` holds ``file, line L, column C`` (1-based)."""


def load_document_text(text: str, source: str = "<input>") -> object:
    """Parse JSON when the text looks like a JSON object, else YAML (a superset for our purposes)."""
    if not text.strip():
        raise CostInputError(source, "empty file: give a study in YAML or JSON")
    if text.lstrip().startswith("{") or source.endswith(".json"):
        document = _load_json(text, source)
    else:
        document = _load_yaml(text, source)
    problem = first_document_problem(document)  # a NUL, a lone surrogate, 1e-400 (gpuledger.input_bounds)
    if problem is not None:
        raise CostInputError(problem[0], problem[1])
    return document


def load_document_file(path: str | Path) -> object:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise CostInputError(str(path), f"cannot read the file: {error.strerror}") from None
    return load_document_text(text, str(path))


def _load_json(text: str, source: str) -> object:
    too_deep = first_too_deep(text)
    if too_deep is not None:
        line, column = line_column(text, too_deep)
        raise DocumentSyntaxError(
            f"{source}, line {line}, column {column}", f"nested deeper than {MAX_JSON_DEPTH} levels"
        )
    try:
        return json.loads(text, parse_float=Decimal)
    except json.JSONDecodeError as error:
        raise DocumentSyntaxError(f"{source}, line {error.lineno}, column {error.colno}", error.msg) from None


def _load_yaml(text: str, source: str) -> object:
    try:
        return _check_depth(yaml.load(text, Loader=BoundedYamlLoader), source)  # noqa: S506 (a SafeLoader)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark
        where = f"{source}, line {mark.line + 1}, column {mark.column + 1}" if mark else source
        raise DocumentSyntaxError(where, str(error.problem or error)) from None
    except yaml.YAMLError as error:
        raise DocumentSyntaxError(source, str(error)) from None
    except RecursionError:
        raise DocumentSyntaxError(source, f"nested deeper than {MAX_JSON_DEPTH} levels") from None


def _check_depth(document: object, source: str) -> object:
    """YAML nesting is bounded like JSON's (the composer recursed already; the engines must not)."""
    stack = [(document, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_JSON_DEPTH:
            raise DocumentSyntaxError(source, f"nested deeper than {MAX_JSON_DEPTH} levels")
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else ()
        stack.extend((child, depth + 1) for child in children)
    return document
