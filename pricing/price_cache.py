"""Reads of the current catalog that pages repeat, cached per price version and per minute (issue 9).

The landing page's cheapest prices, the offer list's pages and the dashboard's price freshness read
current prices with a window over every observation, then build pandas frames: 20-150 ms a request,
for an answer that changes only when prices do (the price version, pricing/price_version.py, changes
with every write to the catalog) or when the clock turns a price stale. So an answer is built for the
start of the current minute and kept under (name, arguments, price version, that minute): a price
that turns stale shows as stale within a minute, as any page built at the minute's start would show it.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Callable
from typing import TypeVar

from django.core.cache import cache
from django.utils import timezone

from pricing.price_version import price_version_key

T = TypeVar("T")
KEY_SCHEME = "price-read:v1"
KEEP_SECONDS = 120  # past its minute an entry is never read again; this only frees the memory
_MISSING = object()


def price_read_key(name: str, *arguments) -> str:
    """The key of a read (or a page's rendering of one) under this price version and minute."""
    return _key(name, arguments, _this_minute())


def cached_price_read(name: str, build: Callable[[dt.datetime], T], *arguments) -> T:
    """`build(now)` with `now` the start of this minute, from the cache when the price version and the
    minute are those it was built under. `arguments`: whatever else the answer depends on (a page)."""
    now = _this_minute()
    key = _key(name, arguments, now)
    found = cache.get(key, _MISSING)
    if found is _MISSING:
        found = build(now)
        cache.set(key, found, KEEP_SECONDS)
    return found


def _this_minute() -> dt.datetime:
    return timezone.now().replace(second=0, microsecond=0)


def _key(name: str, arguments: tuple, now: dt.datetime) -> str:
    described = repr((KEY_SCHEME, name, arguments, price_version_key(), now.isoformat()))
    return f"{KEY_SCHEME}:{hashlib.sha256(described.encode()).hexdigest()}"
