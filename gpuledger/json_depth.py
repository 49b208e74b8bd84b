"""Find JSON nested too deeply before decoding it: Python's decoder recurses, and 100,000 brackets
crash it with RecursionError (a 500 on the API, a traceback in a command) instead of a clean error."""

from __future__ import annotations

import json
import re

MAX_JSON_DEPTH = 32  # every document this project reads nests under 10 levels
_BRACKETS = re.compile(r'[\[\]{}"\\]')


def first_too_deep(text: str, limit: int = MAX_JSON_DEPTH) -> int | None:
    """The offset of the first bracket nested deeper than `limit` (outside strings), else None."""
    depth, in_string, escaped_at = 0, False, -2
    for match in _BRACKETS.finditer(text):
        char, at = match.group(), match.start()
        if in_string:
            if char == "\\" and escaped_at != at - 1:
                escaped_at = at
            elif char == '"' and escaped_at != at - 1:
                in_string = False
            continue
        if char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > limit:
                return at
        elif char in "]}":
            depth -= 1
    return None


def line_column(text: str | bytes, offset: int) -> tuple[int, int]:
    """1-based line and column of `offset`."""
    newline = "\n" if isinstance(text, str) else b"\n"
    line_start = text.rfind(newline, 0, offset) + 1
    return text.count(newline, 0, offset) + 1, offset - line_start + 1


def loads_bounded(text: str, **options) -> object:
    """``json.loads`` that refuses, as a JSONDecodeError, text nested deeper than MAX_JSON_DEPTH: a billing
    cell of 200,000 brackets (a line under the 1 MiB bound) crashed the import with RecursionError."""
    too_deep = first_too_deep(text)
    if too_deep is not None:
        raise json.JSONDecodeError(f"nested deeper than {MAX_JSON_DEPTH} levels", text, too_deep)
    return json.loads(text, **options)
