"""Cache audit benchmark (issue 25): for each cache, the read it saves (cold: the build) against the cached
read (warm), measured in the same run on the same data, and the ratio.

    .venv/bin/python benchmarks/cache_bench.py                    # throwaway SQLite, in-process cache
    DATABASE_URL=postgres://.../gpuledger_bench REDIS_URL=redis://.../4 .venv/bin/python benchmarks/cache_bench.py

Stores the bundled catalog, the demo FOCUS bill (6 months) and one workload with a saved recommendation
in the database named by DATABASE_URL (flushed first: give it a database of its own) or in a throwaway
SQLite file; the cache is Redis with REDIS_URL, as with several workers, else process memory.

"warm" is what a request pays with the entry present, the price version read included (one query: a
request reads it once and every cached part of a page shares it, so this overstates a warm page part).
A cache is worth keeping (docs/performance.md, "What is cached") when a warm read saves at least KEEP_MS
and is at least KEEP_RATIO times faster than the build: a page has about 5 ms of CPU to meet its load
target on two cores, so a cache that saves less than a millisecond buys nothing there. The FX caches
the audit dropped are measured as they were (a price-version read around the query), so a rerun shows
whether dropping them still holds.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

KEEP_RATIO = 2.0
KEEP_MS = 1.0
REPEAT = 15
SPEC = {"name": "bench", "task": "qlora", "model": {"preset": "llama-3.1-8b"}, "training_tokens": 1e9}


def _setup_django(folder: str) -> None:
    if not os.environ.get("DATABASE_URL"):
        os.environ["DATABASE_URL"] = f"sqlite:///{folder}/bench.sqlite3"
    os.environ.setdefault("DEBUG", "1")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "gpuledger.settings.local")
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)


def _median_ms(function) -> float:
    durations = []
    for _ in range(REPEAT):
        start = time.perf_counter()
        function()
        durations.append(time.perf_counter() - start)
    return statistics.median(durations) * 1000


def _load(folder: str) -> tuple:
    """The bundled catalog, the demo bill and a saved recommendation; returns (user, workload, period)."""
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from billing.demo import write_demo
    from pricing.catalog import catalog_load
    from procurement.services.recommendations import recommendation_create, workload_create_from_spec

    call_command("flush", interactive=False, verbosity=0)
    # The flush forgets the imports but not their Parquet files: each run writes its datasets in its own folder.
    settings.BILLING_DATASET_DIR = Path(folder) / "billing"
    catalog_load()
    bill = Path(folder) / "demo_focus.csv"
    write_demo(bill, months=6)
    call_command("import_billing", str(bill), "--no-progress", verbosity=0)
    user = get_user_model().objects.create_superuser("bench", "bench@example.com", "bench")
    workload = workload_create_from_spec(document=SPEC, owner=user)
    recommendation_create(workload=workload, saved_by=user)
    return user, workload


def _cases(user, workload) -> list[tuple[str, str, object, object]]:
    """(cache, where, cold build, warm cached read): each pair gives the same answer."""
    from django.contrib.auth import get_user_model
    from django.utils import timezone

    from billing.review.selectors import charge_range, fx_history
    from billing.review.service import _build_review, build_review, make_request
    from gpuledger.roles import _role_groups, user_roles
    from pricing.api.views import offer_count
    from pricing.catalog_cheapest import cheapest_gpu_prices
    from pricing.catalog_table import CHEAPEST_READ, _cheapest_until_stale
    from pricing.fx import fx_rates
    from pricing.offer_pages import current_price_count, current_price_freshness, offer_frame_page
    from pricing.price_cache import read_until_stale
    from pricing.selectors import with_staleness
    from procurement.selectors import ranking_offer_table
    from procurement.services.recommendations import RankingContext
    from procurement.spend_summary import price_freshness
    from procurement.workload_heads import _read, workload_head

    latest = charge_range()[1]
    month = latest.date().replace(day=1)
    review = make_request(
        start=month, end=(month.replace(day=28) + timezone.timedelta(days=4)).replace(day=1)
    )

    def page_build(now):
        return offer_frame_page(limit=100, offset=0, now=now), None

    def fresh_user():  # Django loads the user anew for each request
        return get_user_model().objects.get(pk=user.pk)

    return [
        (
            "ranking context (offer table)",
            "procurement/offer_cache.py",
            lambda: RankingContext.of_table(with_staleness(ranking_offer_table(), timezone.now())),
            RankingContext.current,
        ),
        (
            "offer list page (100 rows)",
            "pricing/price_cache.py via pricing/api/views.py",
            lambda: page_build(timezone.now()),
            lambda: read_until_stale("bench-offer-page", page_build, 100, 0),
        ),
        (
            "offer list total",
            "pricing/api/views.py offer_count",
            lambda: current_price_count(),
            lambda: offer_count({}),
        ),
        (
            "catalog cheapest prices",
            "pricing/catalog_table.py",
            lambda: cheapest_gpu_prices(now=timezone.now()),
            lambda: read_until_stale(CHEAPEST_READ, _cheapest_until_stale),
        ),
        (
            "dashboard price freshness",
            "procurement/spend_summary.py",
            lambda: current_price_freshness(timezone.now()),
            price_freshness,
        ),
        (
            "review FX rates (dropped)",
            "billing/review/selectors.py review_fx",
            lambda: fx_rates(base="USD"),
            lambda: read_until_stale("bench-usd-fx-rates", lambda now: (fx_rates(base="USD"), None)),
        ),
        (
            "review FX history (dropped)",
            "billing/review/selectors.py fx_history",
            fx_history,
            lambda: read_until_stale("bench-usd-fx-history", lambda now: (fx_history(), None)),
        ),
        (
            "spend review (one month)",
            "billing/review/cache.py",
            lambda: _build_review(review),
            lambda: build_review(review),
        ),
        (
            "workload head",
            "procurement/workload_heads.py",
            lambda: _read(workload.pk),
            lambda: workload_head(workload.pk),
        ),
        (
            "user roles",
            "gpuledger/accounts/user_facts.py",
            lambda: _role_groups(fresh_user()),
            lambda: user_roles(fresh_user()),
        ),
    ]


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        _setup_django(folder)
        from django.conf import settings

        user, workload = _load(folder)
        backend = "Redis" if settings.REDIS_URL else "process memory"
        print(f"cache: {backend}; database: {settings.DATABASES['default']['ENGINE'].rsplit('.', 1)[-1]}")
        print(f"{'cache':30} {'cold ms':>9} {'warm ms':>9} {'ratio':>7} {'saved ms':>9}  keep?  where")
        for name, where, cold, warm in _cases(user, workload):
            warm()  # fill the entry
            cold_ms, warm_ms = _median_ms(cold), _median_ms(warm)
            ratio, saved = cold_ms / warm_ms, cold_ms - warm_ms
            keep = "keep" if ratio >= KEEP_RATIO and saved >= KEEP_MS else "drop"
            print(f"{name:30} {cold_ms:9.2f} {warm_ms:9.2f} {ratio:7.1f} {saved:9.2f}  {keep:5}  {where}")


if __name__ == "__main__":
    main()
