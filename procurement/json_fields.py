"""A JSONField for large documents inserted many at a time (a recompute chunk's stored rankings)."""

from __future__ import annotations

from django.db import models


class BulkInsertedJSONField(models.JSONField):
    """A JSONField whose bulk inserts send each value as its own query parameter.

    Why: on PostgreSQL, Django 5.2 bulk-inserts through ``UNNEST`` of one array per column, and psycopg
    writes a text array literal in Python, escaping every quote of every document with a regular
    expression. A recompute chunk stores 500 rankings of about 76 KB of JSON each: that escaping was
    7.6 s of a 22 s chunk under cProfile (issue 26, "Speed"). Django keeps the plain ``VALUES`` form for
    a field with ``get_placeholder``, and then libpq escapes each document in C. Same SQL type, same
    stored values; single-row saves are unchanged."""

    def get_placeholder(self, value, compiler, connection) -> str:
        return "%s"
