"""Values read once per read request: within `read_request_scope()` (a GET, HEAD or OPTIONS request's
view: gpuledger/transactions.py), `memoized(name, compute)` computes each name once.

For a value that several parts of one page read and that a read request cannot change, such as the
price version that each cached price read and the spend review's cache key name
(pricing/price_version.py): a page asked the database for it two or three times, and a write landing
between two of those reads could key one part of a page to one version and the rest to the next.
Outside a scope (a write request, a task, a command) every call computes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

T = TypeVar("T")
_memo: ContextVar[dict[str, Any] | None] = ContextVar("gpuledger_request_memo", default=None)


@contextmanager
def read_request_scope() -> Iterator[None]:
    token = _memo.set({})
    try:
        yield
    finally:
        _memo.reset(token)


def memoized(name: str, compute: Callable[[], T]) -> T:
    memo = _memo.get()
    if memo is None:
        return compute()
    if name not in memo:
        memo[name] = compute()
    return memo[name]
