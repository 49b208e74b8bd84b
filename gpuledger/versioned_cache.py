"""Cached values keyed by the data versions they were built from (gpuledger/data_versions.py).

Every cache of the project's data goes through here or builds its key with ``versioned_key``: it names
its scope, what the request asks (the parts), and the versions it depends on. A write to that data
bumps its version in the writer's transaction and the next read builds under a new key; a write to
other data leaves the key as it is. The time an entry is kept (KEEP_SECONDS) only bounds the memory of
entries no key names any more; it decides nothing about freshness.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from django.core.cache import cache

from gpuledger.data_versions import versions_key

T = TypeVar("T")
KEEP_SECONDS = 3600


def versioned_key(scope: str, parts: Any, depends_on: Iterable[str]) -> str:
    """The key of `parts` (anything with a stable repr) in `scope`, at the current `depends_on` versions."""
    described = repr((parts, versions_key(depends_on)))
    return f"gpuledger:{scope}:{hashlib.sha256(described.encode()).hexdigest()}"


def cached(
    scope: str, parts: Any, depends_on: Iterable[str], build: Callable[[], T], keep: int = KEEP_SECONDS
) -> T:
    """`build()`'s result (picklable, not None) for `parts`, from the cache when none of the versions it
    depends on has changed since it was built."""
    key = versioned_key(scope, parts, depends_on)
    found = cache.get(key)
    if found is None:
        found = build()
        cache.set(key, found, keep)
    return found
