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
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "gpuledger.settings")
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)
    call_command("flush", interactive=False, verbosity=0)
    from pricing.catalog import catalog_load

    catalog_load()


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
            "offer__instance_type_id", "offer__region__provider_id", "offer__region__code", "offer__zone",
            "pricing_model", "payment_option", "amount_per_hour", "currency", "observed_at", "source",
        )
    )  # fmt: skip
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
                )  # fmt: skip
                for (k, row), j in zip(rows, jitter, strict=True)
            ),
            batch_size=5000,
        )
        price_version_bump()
    return current_price_observations().count()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--offers", type=int, default=100_000, help="current prices to store")
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        _setup_django(folder)
        start = time.perf_counter()
        stored = store_synthetic_offers(arguments.offers)
        print(f"stored {stored:,} current prices in {time.perf_counter() - start:.1f} s")
        for line in run(stored):
            print(line)


def run(stored: int) -> list[str]:
    from procurement import selectors

    old_s, _ = _timed(lambda: selectors.ranking_offer_frame(), repeat=1)
    return [f"old ranking_offer_frame(): {old_s * 1000:.0f} ms"]


if __name__ == "__main__":
    main()
