"""A built spend review, cached per request and per version of everything it reads (issue 9: load).

A review reads the spend and utilization rows, the catalog's prices and FX rates, and the stored
workloads' latest recommendations (the cheaper-GPU savings). Building one is 50-150 ms of pandas per
request on the demo bill; finance pages ask for the same few periods over and over. The key is:

* the request itself (period, filters, currency, the FX it converts with, an engineer's granted teams);
* the data versions it reads (gpuledger/data_versions.py), each bumped in its writer's transaction:
  ``billing`` (every write of spend or utilization rows creates or deletes a BillingImport; budgets and
  their alerts), ``workloads`` (the stored workloads and recommendations the savings name) and
  ``price`` (prices and FX rates).

A change to any of them is a new key (gpuledger/versioned_cache.py); a write to other data (a user's
role, say) leaves the entry in use.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from gpuledger.data_versions import versions_key
from gpuledger.versioned_cache import cached, versioned_key

T = TypeVar("T")
KEY_SCHEME = "spend-review:v5"  # v5: keyed by data versions (issue 25: one way for every cache to go stale)
DEPENDS_ON = ("billing", "workloads", "price")


def billing_data_key() -> str:
    """The versions of the spend data and of the workloads its savings name, as one text (the dashboard's
    finance summary is keyed by it too)."""
    return versions_key(("billing", "workloads"))


def review_key(kind: str, request) -> str:
    """The cache key of one review request (`kind`: which shape: the JSON, the report, the page's
    rendered body) as the data stands now."""
    return versioned_key(KEY_SCHEME, (kind, request), DEPENDS_ON)


def cached_review(kind: str, request, build: Callable[[], T]) -> T:
    """`build()`'s result for this review request, from the cache when nothing it reads has changed
    since it was built."""
    return cached(KEY_SCHEME, (kind, request), DEPENDS_ON, build)
