"""Count the rows the database hands back to Python, to test that a page reads a bounded part of a large
catalog (a query count alone misses one query that reads every row)."""

from __future__ import annotations

import contextlib

from django.db.backends.utils import CursorWrapper


class RowCounter:
    def __init__(self) -> None:
        self.rows = 0


@contextlib.contextmanager
def rows_fetched(monkeypatch):
    """``with rows_fetched(monkeypatch) as counted: ...; counted.rows``: rows fetched inside the block.

    Django reads query results through CursorWrapper.fetchone/fetchmany/fetchall, which it forwards
    to the driver's cursor; the wrapper methods set here count them on the way."""
    counter = RowCounter()

    def counting(name):
        def fetch(self, *args, **kwargs):
            result = getattr(self.cursor, name)(*args, **kwargs)
            counter.rows += (result is not None) if name == "fetchone" else len(result)
            return result

        return fetch

    with monkeypatch.context() as patch:
        for name in ("fetchone", "fetchmany", "fetchall"):
            patch.setattr(CursorWrapper, name, counting(name), raising=False)
        yield counter
