"""Benchmark: ingest 1,000,000 spot-history rows into PostgreSQL, against a raw COPY in the same run.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/gpuledger_bench .venv/bin/python benchmarks/ingest_bench.py

The database named in DATABASE_URL is created, migrated, and dropped at the end: give it a
throwaway name. The rows are realistic spot history: instance types × regions × zones (1,000 zone
offers) × 1,000 hourly timestamps, prices on a random walk. Printed:

- rows/s through the real path (``pricing.ingest.ingest_price_records``: catalog upserts, guard
  rails, COPY into a staging table, conflict-skipping INSERT into the indexed, constrained table);
- rows/s of a raw ``COPY`` of the same rows (formatted from the same records) into a bare table;
- their ratio (target: within 3×), and the idempotent rerun (0 inserted);
- the time of the spot statistics for 1,000 offers over 90 days of hourly prices.
"""

from __future__ import annotations

import datetime as dt
import io
import os
import sys
import time
from decimal import Decimal
from pathlib import Path
from urllib.parse import urlparse

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
INSTANCE_TYPES, REGIONS, ZONES_PER_REGION, HOURS = 50, 4, 5, 1000  # 50 × 4 × 5 = 1,000 offers × 1,000 h
STAT_OFFERS, STAT_DAYS = 1000, 90


def main() -> None:
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith(("postgres://", "postgresql://")):
        sys.exit(
            "Set DATABASE_URL to a throwaway PostgreSQL database, e.g. postgres://postgres@127.0.0.1:5432/gpuledger_bench"
        )
    _create_database(url)
    try:
        _setup_django()
        records = _spot_records()
        ingest_s, ingest_again_s, inserted, again = _time_ingest(records)
        copy_s = _time_raw_copy(records)
        rows = len(records)
        print(f"rows: {rows:,}")
        print(
            f"ingest_price_records: {ingest_s:.2f} s = {rows / ingest_s:,.0f} rows/s ({inserted:,} inserted)"
        )
        print(f"raw COPY, bare table: {copy_s:.2f} s = {rows / copy_s:,.0f} rows/s")
        print(f"ratio ingest / raw COPY: {ingest_s / copy_s:.2f}x (target <= 3x)")
        print(f"idempotent rerun: {ingest_again_s:.2f} s, {again:,} inserted")
        del records
        stats_s, offers = _time_spot_statistics()
        print(
            f"spot statistics: {offers:,} offers x {STAT_DAYS} days hourly ({offers * STAT_DAYS * 24:,} rows): {stats_s:.2f} s"
        )
    finally:
        from django.db import connections

        connections.close_all()
        _drop_database(url)


def _admin_connection(url: str):
    import psycopg

    parsed = urlparse(url)
    return psycopg.connect(parsed._replace(path="/postgres").geturl(), autocommit=True), parsed.path.lstrip(
        "/"
    )


def _create_database(url: str) -> None:
    connection, name = _admin_connection(url)
    with connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}"')
        connection.execute(f'CREATE DATABASE "{name}"')


def _drop_database(url: str) -> None:
    connection, name = _admin_connection(url)
    with connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _setup_django() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "gpuledger.settings.production")
    os.environ.setdefault("SECRET_KEY", "benchmark-only")
    os.environ.setdefault("ALLOWED_HOSTS", "localhost")
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)


def _spot_records():
    from pricing.providers.records import InstanceTypeRecord, PriceRecord

    rng = np.random.default_rng(42)
    start = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    stamps = [start + dt.timedelta(hours=h) for h in range(HOURS)]
    records = []
    for t in range(INSTANCE_TYPES):
        instance = InstanceTypeRecord(
            provider="aws", name=f"bench{t}.xlarge", gpu_name="H100", gpu_count=Decimal(8)
        )
        base = 2.0 + 0.7 * t
        for r in range(REGIONS):
            for z in range(ZONES_PER_REGION):
                walk = base * np.exp(np.cumsum(rng.normal(0, 0.01, HOURS)))
                prices = [Decimal(f"{p:.6f}") for p in walk]
                region, zone = f"bench-region-{r}", f"bench{r}-az{z}"
                records.extend(
                    PriceRecord(
                        instance, region, zone, "spot", price, "USD", at, "aws:describe_spot_price_history"
                    )
                    for price, at in zip(prices, stamps, strict=True)
                )
    return records


def _time_ingest(records):
    from pricing.ingest import ingest_price_records

    started = time.perf_counter()
    first = ingest_price_records(iter(records))
    ingest_s = time.perf_counter() - started
    started = time.perf_counter()
    second = ingest_price_records(iter(records))
    return ingest_s, time.perf_counter() - started, first.inserted, second.inserted


def _time_raw_copy(records) -> float:
    """COPY the same rows, formatted from the same records, into a table without keys or indexes."""
    from django.db import connection

    offer_ids: dict[tuple, int] = {}
    with connection.cursor() as cursor:
        cursor.execute(
            "CREATE TABLE bare_prices (offer_id bigint, pricing_model text, payment_option text, amount numeric(18, 6),"
            " currency text, observed_at timestamptz, source text, status text)"
        )
        started = time.perf_counter()
        with cursor.cursor.copy("COPY bare_prices FROM STDIN") as copy:
            for chunk_start in range(0, len(records), 50_000):
                buffer = io.StringIO()
                for r in records[chunk_start : chunk_start + 50_000]:
                    key = (r.instance.name, r.region, r.zone)
                    offer_id = offer_ids.setdefault(key, len(offer_ids) + 1)
                    buffer.write(
                        f"{offer_id}\t{r.pricing_model}\t{r.payment_option}\t{r.price_per_hour}\t{r.currency}\t"
                        f"{r.observed_at:%Y-%m-%d %H:%M:%S+00}\t{r.source}\tpublished\n"
                    )
                copy.write(buffer.getvalue())
        elapsed = time.perf_counter() - started
        cursor.execute("DROP TABLE bare_prices")
    return elapsed


def _time_spot_statistics() -> tuple[float, int]:
    import pandas as pd

    from pricing.spot_history import spot_statistics

    hours = STAT_DAYS * 24
    start = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    rng = np.random.default_rng(7)
    prices = 1.0 + np.abs(np.cumsum(rng.normal(0, 0.01, (STAT_OFFERS, hours)), axis=1))
    frame = pd.DataFrame(
        {
            "series": np.repeat(np.arange(STAT_OFFERS), hours),
            "observed_at": np.tile(pd.date_range(start, periods=hours, freq="h", tz="UTC"), STAT_OFFERS),
            "price_per_hour": prices.ravel(),
        }
    )
    on_demand = {offer: 4.0 for offer in range(STAT_OFFERS)}
    started = time.perf_counter()
    stats = spot_statistics(
        frame,
        window_start=start,
        window_end=start + dt.timedelta(days=STAT_DAYS),
        on_demand_per_hour=on_demand,
        below_price=1.2,
    )
    return time.perf_counter() - started, len(stats)


if __name__ == "__main__":
    main()
