"""A built spend review, cached per request and per version of everything it reads (issue 9: load).

A review reads the spend and utilization rows, the catalog's prices and FX rates, and the stored
workloads' latest recommendations (the cheaper-GPU savings). Building one is 50-150 ms of pandas per
request on the demo bill; finance pages ask for the same few periods over and over. The key is:

* the request itself (period, filters, currency, the FX it converts with, an engineer's granted teams);
* the billing data: every write of spend or utilization rows creates a BillingImport (file imports,
  Cost Explorer pulls, which also delete the rows they replace), and deleting an import cascades to its
  rows, so the imports' count and newest id change with any change to the rows;
* the stored workloads (count, newest edit) and recommendations (count, newest id);
* the budgets (count, newest edit) and their alerts (count), which the budget section shows;
* the price version (pricing/price_version.py), which covers prices and FX rates.

One query reads the billing and workload parts. The entry also expires after REVIEW_CACHE_SECONDS, a
bound on anything the key misses (a setting changed by a deploy is the known one: restarting with new
settings does not change the key).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import TypeVar

from django.core.cache import cache
from django.db import connection

from pricing.price_version import price_version_key

T = TypeVar("T")
REVIEW_CACHE_SECONDS = 600
KEY_SCHEME = "spend-review:v4"  # v4: the report's tables are the report model's Table objects (issue 25)


def billing_data_key() -> str:
    from billing.models import BillingImport, Budget, BudgetAlert
    from procurement.models import Recommendation, Workload

    quote = connection.ops.quote_name
    imports, workloads = quote(BillingImport._meta.db_table), quote(Workload._meta.db_table)
    recommendations = quote(Recommendation._meta.db_table)
    budgets, alerts = quote(Budget._meta.db_table), quote(BudgetAlert._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT (SELECT COUNT(*) FROM {imports}), (SELECT MAX(id) FROM {imports}),"  # noqa: S608 (model tables)
            f" (SELECT COUNT(*) FROM {workloads}), (SELECT MAX(updated_at) FROM {workloads}),"
            f" (SELECT COUNT(*) FROM {recommendations}), (SELECT MAX(id) FROM {recommendations}),"
            # the budgets section: a budget set, changed or deleted, an alert sent
            f" (SELECT COUNT(*) FROM {budgets}), (SELECT MAX(updated_at) FROM {budgets}),"
            f" (SELECT COUNT(*) FROM {alerts})"
        )
        row = cursor.fetchone()
    return ":".join(str(value) for value in row)


def review_key(kind: str, request) -> str:
    """The cache key of one review request (`kind`: which shape: the JSON, the report, the page's
    rendered body) as the data stands now."""
    described = repr((KEY_SCHEME, kind, request, billing_data_key(), price_version_key()))
    return f"{KEY_SCHEME}:{hashlib.sha256(described.encode()).hexdigest()}"


def cached_review(kind: str, request, build: Callable[[], T]) -> T:
    """`build()`'s result for this review request, from the cache when nothing it reads has changed
    since it was built."""
    key = review_key(kind, request)
    found = cache.get(key)
    if found is None:
        found = build()
        cache.set(key, found, REVIEW_CACHE_SECONDS)
    return found
