"""Reads of the current catalog that pages repeat, cached per price version (issue 9, load).

The landing page's cheapest prices, the offer list's pages and the dashboard's price freshness read
current prices with a window over every observation, then build pandas frames: 20-150 ms a request,
for an answer that changes only when prices do (the price version, pricing/price_version.py, changes
with every write to the catalog) or when the clock turns a price stale. Two ways to follow the clock:

* ``read_until_stale``: the answer says when it next changes with the clock (the first of its fresh
  prices to pass its staleness limit, ``pricing.selectors.next_staleness_change``) and is kept under
  (name, arguments, price version) until then. Exact, and rebuilt rarely: a snapshot price goes stale
  after 90 days, a refreshed one after twice its schedule.
* ``cached_price_read``: for an aggregate over every current price (how many are stale), where that
  moment would cost a query of its own, the answer is built for the start of the current minute and
  kept within it: a price that turns stale is counted within a minute.

Either way an entry also expires after LONGEST_KEEP_SECONDS, a bound on anything time-dependent that
the answer's own expiry misses.

Every entry of a price version goes at once when prices change, and a busy site then asks for the
same missing page in every worker at the same moment (a stampede: 50 users walking the offer list
built each page three times over, once per gunicorn worker, 100 ms each). So one caller builds
(it holds a short lock, ``cache.add``) and the others wait for its answer; a builder that dies frees
the lock after BUILD_LOCK_SECONDS, and a waiter that has waited WAIT_FOR_BUILDER_SECONDS builds for
itself, so the lock never costs more than that wait.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import time
from collections.abc import Callable
from typing import TypeVar

from django.core.cache import cache
from django.utils import timezone

from pricing.price_version import price_version_key

T = TypeVar("T")
KEY_SCHEME = "price-read:v2"
MINUTE_KEEP_SECONDS = 120  # past its minute an entry is never read again; this only frees the memory
LONGEST_KEEP_SECONDS = 15 * 60
BUILD_LOCK_SECONDS = 30  # longer than any build here (the slowest, an offer page, takes 0.1-0.3 s)
WAIT_FOR_BUILDER_SECONDS = 5.0
WAIT_STEP_SECONDS = 0.01
_MISSING = object()


def cached_price_read(name: str, build: Callable[[dt.datetime], T], *arguments) -> T:
    """`build(now)` with `now` the start of this minute, from the cache when the price version and the
    minute are those it was built under. `arguments`: whatever else the answer depends on (a page)."""
    now = timezone.now().replace(second=0, microsecond=0)
    key = _key(name, arguments, now.isoformat())

    def read():
        return cache.get(key, _MISSING)

    def build_and_keep():
        answer = build(now)
        cache.set(key, answer, MINUTE_KEEP_SECONDS)
        return answer

    return _built_once(key, read, build_and_keep)


def read_until_stale(
    name: str, build: Callable[[dt.datetime], tuple[T, dt.datetime | None]], *arguments
) -> T:
    """`build(now)` gives (answer, the moment it next changes with the clock, or None: never); the answer
    is read from the cache while the price version is the same and that moment has not come."""
    key = _key(name, arguments, "until-stale")

    def read():
        found = cache.get_many([key, key + ":changes-at"])
        changes_at = found.get(key + ":changes-at", _MISSING)
        if (
            key in found
            and changes_at is not _MISSING
            and (changes_at is None or timezone.now() < changes_at)
        ):
            return found[key]
        return _MISSING

    def build_and_keep():
        now = timezone.now()
        answer, changes_at = build(now)
        keep = LONGEST_KEEP_SECONDS if changes_at is None else (changes_at - now).total_seconds()
        keep = max(1, min(LONGEST_KEEP_SECONDS, int(keep)))
        cache.set_many({key: answer, key + ":changes-at": changes_at}, keep)
        return answer

    return _built_once(key, read, build_and_keep)


def _built_once(key: str, read: Callable[[], T], build_and_keep: Callable[[], T]) -> T:
    """The cached answer, else one caller's build of it (see the module docstring: stampedes)."""
    found = read()
    if found is not _MISSING:
        return found
    lock = key + ":building"
    waited_until = time.monotonic() + WAIT_FOR_BUILDER_SECONDS
    while not cache.add(lock, 1, BUILD_LOCK_SECONDS):
        if time.monotonic() > waited_until:
            return build_and_keep()  # the builder is slow or gone: build rather than wait longer
        time.sleep(WAIT_STEP_SECONDS)
        found = read()
        if found is not _MISSING:
            return found
    try:
        found = read()  # built and released between our read and our lock
        return build_and_keep() if found is _MISSING else found
    finally:
        cache.delete(lock)


def until_stale_version(name: str, *arguments) -> str | None:
    """A text that names the cached answer of ``read_until_stale(name, ..., *arguments)`` as it stands
    (price version and the moment it next changes), for keying a page's rendering of it; None when no
    answer is cached or it has expired."""
    key = _key(name, arguments, "until-stale")
    changes_at = cache.get(key + ":changes-at", _MISSING)
    if changes_at is _MISSING or (changes_at is not None and timezone.now() >= changes_at):
        return None
    return f"{key}:{changes_at.isoformat() if changes_at else 'never'}"


def _key(name: str, arguments: tuple, when: str) -> str:
    described = repr((KEY_SCHEME, name, arguments, price_version_key(), when))
    return f"{KEY_SCHEME}:{hashlib.sha256(described.encode()).hexdigest()}"
