"""The one check of request input every page and API route shares (issue 31, finding 3): values no
field of this product can hold are a 400 naming the field before any view sees them, never a 500 deep in
a date sum, a Decimal quantize or the database.

Refused anywhere in a query parameter, a form field, a JSON body or a YAML/JSON document pasted into a
form: a NUL byte (PostgreSQL text cannot hold one), a lone UTF-16 surrogate (no UTF-8 encoding; JSON's
``"\\ud800"`` escape makes one), a date whose year is outside YEAR_RANGE (``0001-01-01`` and
``9999-12-31`` overflowed the period arithmetic), and a number that is not zero but smaller than
NUMBER_RANGE[0] or larger than NUMBER_RANGE[1] (``1e-400`` rounds to 0.0 as a float and makes a Decimal
that no money field can quantize), and a ``name`` over NAME_MAX_CHARS (PostgreSQL refused it at save). Each bound is far outside any real value: prices have 6 decimals,
the largest count in a workload spec (training FLOPs) is about 1e25, and bills and prices start after
1990.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from decimal import Decimal

YEAR_RANGE = (1900, 2199)
NAME_MAX_CHARS = 200  # what a stored workload, study or plan name holds (CharField max_length=200)
NUMBER_RANGE = (Decimal("1e-15"), Decimal("1e30"))
_DATE_START = re.compile(r"\s*(\d{4,})-\d\d-\d\d")
_SURROGATE = re.compile("[\ud800-\udfff]")


def text_problem(text: str) -> str | None:
    """What makes this text unusable in any field, or None."""
    if "\x00" in text:
        return "holds a NUL byte"
    if _SURROGATE.search(text):
        return "holds a lone UTF-16 surrogate (not a character)"
    date = _DATE_START.match(text)
    return year_problem(int(date.group(1))) if date else None


def year_problem(year: int) -> str | None:
    """The one bound on a date's year, for request fields, command options and billing files alike: a
    bill dated 2300 or 9999 is a typo or a sentinel, and pandas' nanosecond timestamps end in 2262."""
    if YEAR_RANGE[0] <= year <= YEAR_RANGE[1]:
        return None
    return f"a date in year {year}; dates run from {YEAR_RANGE[0]} to {YEAR_RANGE[1]}"


def number_problem(number: float | Decimal | int) -> str | None:
    if isinstance(number, bool):
        return None
    if isinstance(number, float) and not math.isfinite(number):
        return "not a finite number"
    if isinstance(number, Decimal) and not number.is_finite():
        return "not a finite number"
    size = abs(Decimal(number)) if not isinstance(number, float) else abs(Decimal(repr(number)))
    if size and not NUMBER_RANGE[0] <= size <= NUMBER_RANGE[1]:
        return f"{number} is out of range: numbers run from {NUMBER_RANGE[0]} to {NUMBER_RANGE[1]} (or 0)"
    return None


def literal_problem(literal: str) -> str | None:
    """A JSON or YAML number as written: ``1e-400`` is refused although a float reads it as 0.0."""
    try:
        return number_problem(Decimal(literal))
    except ArithmeticError:
        return f"{literal[:40]} is not a number"


def document_problems(document: object, path: str = "") -> Iterator[tuple[str, str]]:
    """(dotted field path, problem) for each bad value in a decoded JSON/YAML document."""
    if isinstance(document, dict):
        for key, value in document.items():
            key_text = str(key)
            where = f"{path}.{key_text}" if path else key_text
            problem = text_problem(key_text)
            if problem:
                yield where[:80], f"field name {problem}"
                continue
            if key_text == "name" and isinstance(value, str) and len(value) > NAME_MAX_CHARS:
                yield where[:80], f"at most {NAME_MAX_CHARS} characters, got {len(value)}"
                continue
            yield from document_problems(value, where)
    elif isinstance(document, list | tuple):
        for index, value in enumerate(document):
            yield from document_problems(value, f"{path}[{index}]")
    elif isinstance(document, str):
        problem = text_problem(document)
        if problem:
            yield path or "body", problem
    elif isinstance(document, int | float | Decimal):
        problem = number_problem(document)
        if problem:
            yield path or "body", problem


def first_document_problem(document: object) -> tuple[str, str] | None:
    return next(document_problems(document), None)
