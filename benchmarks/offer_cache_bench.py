"""Offer-table cache benchmark: a ranking request over 100,000 stored offers, against the in-process ranking.

    .venv/bin/python benchmarks/offer_cache_bench.py                 # 100,000 offers
    .venv/bin/python benchmarks/offer_cache_bench.py --offers 20000  # quicker
    DATABASE_URL=postgres://.../gpuledger_bench REDIS_URL=redis://.../4 .venv/bin/python benchmarks/offer_cache_bench.py

Stores the bundled catalog plus synthetic copies of its offers in new regions (prices jittered) in the
database named by DATABASE_URL (its tables are flushed first: give it a database of its own), or in a
throwaway SQLite file. With REDIS_URL the cache is Redis, as with several workers; without it, the
in-process one. Every figure is measured in this run, each ratio against a baseline of the same run:

(a) the in-process warm ranking: one workload against a prepared table already in memory (the
    ranking_bench.py "prepared table" figure, the baseline);
(b) the service call behind ``POST /api/recommendations/`` (``recommendation_preview``) with the cache
    warm in this process: price-version check, GPU and storage reads, filters, ranking; ratio to (a)
    (target <= 2x);
(b') the same with this process's copy dropped, the table read back from the shared cache (another
    worker's build; only meaningful with Redis);
(c) a cold rebuild of the offer table from the database (target < 1 s), against the old
    ``ranking_offer_frame()`` read it replaces;
(d) the whole request before this cache: the old read plus preparing plus ranking, as every request did.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

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


def _load(total: int, reuse: bool) -> int:
    """The bundled catalog plus synthetic offers, unless ``reuse`` and the database holds them already."""
    from django.core.management import call_command

    from pricing.catalog import catalog_load
    from pricing.selectors import current_price_observations
    from procurement.models import Workload

    if reuse and current_price_observations().count() >= total:
        Workload.objects.filter(name="bench").delete()
        return current_price_observations().count()
    call_command("flush", interactive=False, verbosity=0)
    catalog_load()
    return store_synthetic_offers(total)


def _timed(function, repeat: int = 1) -> tuple[float, object]:
    durations, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = function()
        durations.append(time.perf_counter() - start)
    return statistics.median(durations), result


def store_synthetic_offers(total: int, seed: int = 5) -> int:
    """Copies of the current bundled prices in new regions ("<code>-s<k>") until ``total`` current
    prices are stored; returns how many there are."""
    import numpy as np
    from django.db import transaction

    from pricing.models import Offer, PriceObservation, Region
    from pricing.price_version import price_version_bump
    from pricing.selectors import current_price_observations

    base = list(
        current_price_observations().values_list(
            "offer__instance_type_id",
            "offer__region__provider_id",
            "offer__region__code",
            "offer__zone",
            "pricing_model",
            "payment_option",
            "amount_per_hour",
            "currency",
            "observed_at",
            "source",
        )
    )
    copies = max(0, -(-(total - len(base)) // len(base)))
    rng = np.random.default_rng(seed)
    with transaction.atomic():
        regions = Region.objects.bulk_create(
            Region(provider_id=provider, code=f"{code}-s{k}")
            for k in range(copies)
            for provider, code in sorted({(row[1], row[2]) for row in base})
        )
        region_ids = {(r.provider_id, r.code): r.pk for r in regions}
        wanted = total - len(base)
        rows = [(k, row) for k in range(copies) for row in base][:wanted]
        offers = {}
        for k, row in rows:
            offers.setdefault((row[0], region_ids[(row[1], f"{row[2]}-s{k}")], row[3]), None)
        created = Offer.objects.bulk_create(
            Offer(instance_type_id=t, region_id=r, zone=z) for t, r, z in offers
        )
        offer_ids = {(o.instance_type_id, o.region_id, o.zone): o.pk for o in created}
        jitter = rng.uniform(0.8, 1.2, len(rows))
        PriceObservation.objects.bulk_create(
            (
                PriceObservation(
                    offer_id=offer_ids[(row[0], region_ids[(row[1], f"{row[2]}-s{k}")], row[3])],
                    pricing_model=row[4],
                    payment_option=row[5],
                    amount_per_hour=(row[6] * type(row[6])(f"{j:.4f}")).quantize(type(row[6])("0.000001")),
                    currency=row[7],
                    observed_at=row[8],
                    source=row[9],
                )
                for (k, row), j in zip(rows, jitter, strict=True)
            ),
            batch_size=5000,
        )
        price_version_bump()
    return current_price_observations().count()


def _analyze() -> None:
    """Fresh planner statistics after the bulk insert, as autovacuum would give a real database."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")


def _drop_shared(version: str) -> None:
    from procurement import offer_cache

    client = offer_cache._redis()
    if client is not None:
        client.delete(offer_cache.shared_key(version))
    offer_cache.cache_clear()


def _old_context(frame):
    """The context every request built before the cache (RankingContext.current() as it was)."""
    from procurement import selectors
    from procurement.services.recommendations import RankingContext, advisor_dates

    frame["interruption_observed_at"] = advisor_dates(frame)
    return RankingContext(
        frame,
        selectors.ranking_gpus(),
        selectors.block_storage_rates_usd(),
        selectors.assumed_storage_providers(),
    )


def _rows(ranking) -> list[tuple]:
    return [
        (r["observation_id"], r["instances"], r["plan"]["name"], r["total_cost"]) for r in ranking.results
    ]


def _api_post(workload, repeat: int):
    """POST /api/recommendations/ (a preview: nothing stored) through Django's test client as an admin."""
    from django.contrib.auth import get_user_model
    from django.test import Client

    get_user_model().objects.filter(username="bench-admin").delete()
    user = get_user_model().objects.create_superuser("bench-admin", "bench@example.com", "x")
    client = Client(HTTP_HOST="127.0.0.1")  # a host the development settings allow
    client.force_login(user)

    def post():
        response = client.post(
            "/api/recommendations/", {"workload_id": workload.pk, "top": 20}, content_type="application/json"
        )
        assert response.status_code == 200, response.content[:300]
        return response

    post()
    return _timed(post, repeat=repeat)[0]


def run(repeat: int) -> list[str]:
    from pricing.price_version import price_version_key
    from procurement import offer_cache, selectors
    from procurement.models import Workload
    from procurement.services.benchmarks import ShapeMeasurements
    from procurement.services.recommendations import (
        RankingContext,
        ranking_options_parse,
        recommendation_compute,
        recommendation_preview,
        workload_spec_parse,
    )

    workload = Workload.objects.create(name="bench", task="qlora", spec=SPEC)
    spec, options = workload_spec_parse(SPEC), ranking_options_parse({"top": 20})
    no_measurements = ShapeMeasurements({}, {})

    def preview():
        return recommendation_preview(workload=workload, parameters={"top": 20})

    old_read_s, old_frame = _timed(selectors.ranking_offer_frame)
    old_context = _old_context(old_frame)
    old_rank_s, old_ranking = _timed(
        lambda: recommendation_compute(
            spec=spec, options=options, context=old_context, measurements=no_measurements
        )
    )  # includes preparing the table, as each request did
    cold_s, _ = _timed(selectors.ranking_offer_table, repeat=repeat)
    _drop_shared(price_version_key())
    first_s, _ = _timed(preview)  # cold cache: build, share, prepare, rank
    context = RankingContext.current()
    same = _rows(
        recommendation_compute(spec=spec, options=options, context=context, measurements=no_measurements)
    )
    inprocess_s, _ = _timed(
        lambda: recommendation_compute(
            spec=spec, options=options, context=context, measurements=no_measurements
        ),
        repeat=repeat * 3,
    )
    warm_s, _ = _timed(preview, repeat=repeat * 3)
    api_s = _api_post(workload, repeat * 3)

    def from_shared():
        offer_cache.cache_clear()  # this process forgets; the entry another worker stored is in Redis
        return RankingContext.current()

    shared_s = _timed(from_shared, repeat=repeat)[0] if offer_cache._redis() is not None else None
    lines = [
        f"(a) in-process warm ranking (prepared table in memory): {inprocess_s * 1000:.1f} ms (baseline)",
        f"(b) recommendation_preview, cache warm: {warm_s * 1000:.1f} ms, {warm_s / inprocess_s:.2f}x (a) "
        f"(target <= 2x)",
        f"    POST /api/recommendations/ (preview, test client, admin): {api_s * 1000:.1f} ms, "
        f"{api_s / inprocess_s:.2f}x (a)",
        f"(c) cold rebuild of the offer table from the database: {cold_s * 1000:.0f} ms (target < 1 s); "
        f"the old ranking_offer_frame() read: {old_read_s * 1000:.0f} ms, {old_read_s / cold_s:.1f}x slower",
        f"    first request on a cold cache (build, share, prepare, rank): {first_s * 1000:.0f} ms",
        f"(d) a request before the cache (old read + prepare + rank): {(old_read_s + old_rank_s) * 1000:.0f} ms, "
        f"{(old_read_s + old_rank_s) / warm_s:.0f}x (b)",
        f"identical rows, old table vs cached table: {_rows(old_ranking) == same}",
    ]
    if shared_s is not None:
        lines.insert(
            3, f"(b') context from the shared Redis entry (another worker's build): {shared_s * 1000:.0f} ms"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--offers", type=int, default=100_000, help="current prices to store")
    parser.add_argument("--reuse", action="store_true", help="keep a database already holding the offers")
    parser.add_argument("--repeat", type=int, default=5, help="runs per median (the warm ones run 3x this)")
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        _setup_django(folder)
        start = time.perf_counter()
        stored = _load(arguments.offers, arguments.reuse)
        _analyze()
        from django.db import connection

        print(
            f"{connection.vendor}: stored {stored:,} current prices in {time.perf_counter() - start:.0f} s; "
            f"cache: {'Redis' if os.environ.get('REDIS_URL') else 'in-process'}"
        )
        for line in run(arguments.repeat):
            print(line)


if __name__ == "__main__":
    main()
