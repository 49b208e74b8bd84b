"""A JSONField for large documents inserted many at a time (a recompute chunk's stored rankings)."""

from __future__ import annotations

from typing import Any

import orjson
from django.db import models

# orjson's options that make its output decode to what ``json.dumps`` gave: keys that are not strings
# (int, float, bool, None) written as json writes them, numpy scalars as numbers (json takes a numpy float
# as the float subclass it is). What json refuses (Decimal, datetime, sets) orjson refuses too, as a
# TypeError; orjson writes UTF-8 where json writes ``\\u`` escapes, which decode to the same text.
ORJSON_OPTIONS = orjson.OPT_NON_STR_KEYS | orjson.OPT_SERIALIZE_NUMPY


def _refuse(value: Any) -> Any:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def json_bytes(value: Any) -> bytes:
    """``value`` as JSON (UTF-8) with orjson. One difference from ``json.dumps``: a NaN or infinite float
    is written ``null``, where json wrote the non-standard ``NaN``/``Infinity`` (which PostgreSQL's jsonb
    refused). Stored rows hold none: a row's non-finite cost is stored as ``None`` (rows.describe), and the
    varied rows of benchmarks/ranking_rows_dump.py (3,709, infeasible ones included) hold no NaN."""
    return orjson.dumps(value, default=_refuse, option=ORJSON_OPTIONS)


class BulkInsertedJSONField(models.JSONField):
    """A JSONField whose bulk inserts send each value as its own query parameter, encoded with orjson.

    Why: on PostgreSQL, Django 5.2 bulk-inserts through ``UNNEST`` of one array per column, and psycopg
    writes a text array literal in Python, escaping every quote of every document with a regular
    expression. A recompute chunk stores 500 rankings of about 76 KB of JSON each: that escaping was
    7.6 s of a 22 s chunk under cProfile (issue 26, "Speed"). Django keeps the plain ``VALUES`` form for
    a field with ``get_placeholder``, and then libpq escapes each document in C. Same SQL type, same
    stored values; single-row saves are unchanged.

    Encoding a ranking with ``json.dumps`` was then ~0.7 ms of a workload's ~8 ms recompute; orjson
    takes about a tenth of that (issue 26). Values decode to the same Python values as before
    (tests/procurement/test_json_fields.py compares real rankings). A field with its own ``encoder`` keeps
    Django's json path."""

    def get_placeholder(self, value, compiler, connection) -> str:
        return "%s"

    def get_db_prep_value(self, value, connection, prepared=False):
        if self.encoder is not None or connection.vendor not in ("postgresql", "sqlite"):
            return super().get_db_prep_value(value, connection, prepared)
        if not prepared:
            value = self.get_prep_value(value)
        if connection.vendor == "postgresql":
            from psycopg.types.json import Jsonb  # what Django 5.2 wraps a jsonb value in on psycopg 3

            return Jsonb(value, dumps=json_bytes)
        return json_bytes(value).decode()


class JSONTextField(BulkInsertedJSONField):
    """JSON kept as the text it was written as: a ``text`` column, so PostgreSQL never parses it.

    Why: a stored ranking is ~76 KB of JSON that only Python reads back whole. Into ``jsonb`` the server
    parsed each one on insert and wrote it out again on every read: COPY of 500 real rankings took the
    server 0.35-0.38 s of CPU into jsonb against 0.11 s into text (both lz4), and reading them back
    0.14-0.15 s against 0.02 s (2026-12-06, /proc of the backend). A recompute's two workers shared the
    2 cores with that parse (issue 26, "Speed"). The values are the same: written with ``json_bytes``,
    read with ``json.loads`` (as Django's JSONField reads jsonb's text). An object's keys now read back in
    the order they were written, where jsonb returned its own order (shortest key first).

    No key lookups in SQL (``results__0``, ``KeyTransform``): the column is not jsonb, so one is refused
    by name (FieldError) rather than sent as SQL that fails. What a list shows of a ranking is stored on
    its own (``FirstRowField``)."""

    def db_type(self, connection) -> str:
        return "text"

    def get_db_prep_value(self, value, connection, prepared=False):
        if self.encoder is not None:
            return super().get_db_prep_value(value, connection, prepared)
        if not prepared:
            value = self.get_prep_value(value)
        return json_bytes(value).decode()

    def get_transform(self, name):
        return models.Field.get_transform(self, name)  # JSONField's turns any name into a key lookup


class FirstRowField(JSONTextField):
    """The first row of another field's list (``None`` when it is empty), copied from it on every save,
    ``bulk_create`` and COPY (each calls ``pre_save``): lists of stored rankings show only their first
    row (the cheapest feasible, when any fits), read without reading the whole ranking. Never set by
    hand: the list is the one source."""

    def __init__(self, *args, source: str = "results", **kwargs) -> None:
        self.source = source
        kwargs.setdefault("null", True)
        kwargs.setdefault("editable", False)
        super().__init__(*args, **kwargs)

    def deconstruct(self):
        name, path, args, kwargs = super().deconstruct()
        kwargs["source"] = self.source
        return name, path, args, kwargs

    def pre_save(self, model_instance, add):
        rows = getattr(model_instance, self.source)
        first = rows[0] if rows else None
        setattr(model_instance, self.attname, first)
        return first
