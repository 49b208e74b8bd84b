"""`make backup` then `make restore` into a fresh database: the same rows in every table and the same
price table, byte for byte (a checksum over its rows in key order)."""

from __future__ import annotations

import datetime as dt
import os
import subprocess
from decimal import Decimal
from pathlib import Path

import psycopg
import pytest
from django.db import connection

from pricing.ingest import ingest_price_records
from pricing.providers.records import InstanceTypeRecord, PriceRecord

ROOT = Path(__file__).resolve().parents[2]
PRICE_CHECKSUM = (
    "SELECT count(*), md5(coalesce(string_agg(concat_ws('|', id, offer_id, pricing_model, payment_option,"
    " amount_per_hour, currency, observed_at, source, status), E'\\n' ORDER BY id), ''))"
    " FROM pricing_priceobservation"
)


def _url(name: str) -> str:
    db = connection.settings_dict
    auth = db["USER"] + (f":{db['PASSWORD']}" if db.get("PASSWORD") else "")
    return f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{name}"


def _make(target: str, database: str, backup: Path) -> str:
    env = os.environ | {"DATABASE_URL": _url(database)}
    done = subprocess.run(
        ["make", "--no-print-directory", target, f"BACKUP={backup}"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def _snapshot(name: str) -> tuple[dict[str, int], tuple]:
    with psycopg.connect(_url(name)) as conn:
        tables = [
            row[0] for row in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
        ]
        counts = {table: conn.execute(f'SELECT count(*) FROM "{table}"').fetchone()[0] for table in tables}  # noqa: S608
        return counts, conn.execute(PRICE_CHECKSUM).fetchone()


@pytest.mark.django_db(transaction=True)
def test_a_backup_restored_into_a_fresh_database_has_the_same_rows(require_postgres, tmp_path):
    instance = InstanceTypeRecord(provider="aws", name="p5.48xlarge", gpu_name="H100", gpu_count=Decimal(8))
    ingest_price_records(
        PriceRecord(
            instance,
            "us-east-1",
            f"use1-az{z}",
            "spot",
            Decimal("30.123456") + z,
            "USD",
            dt.datetime(2026, 11, 1, h, tzinfo=dt.UTC),
            "file:tab\there.csv",
        )
        for z in range(3)
        for h in range(24)
    )
    source, fresh = connection.settings_dict["NAME"], f"{connection.settings_dict['NAME']}_restore"
    backup = tmp_path / "gpuledger.dump"
    assert _make("backup", source, backup).strip().endswith(str(backup))
    with psycopg.connect(_url("postgres"), autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{fresh}"')
        admin.execute(f'CREATE DATABASE "{fresh}"')
    try:
        _make("restore", fresh, backup)
        before, after = _snapshot(source), _snapshot(fresh)
        assert before == after
        assert before[1][0] == 72 and before[0]["pricing_priceobservation"] == 72
        assert before[0]["django_migrations"] > 10  # the schema came along, not only the rows
    finally:
        with psycopg.connect(_url("postgres"), autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{fresh}" WITH (FORCE)')


def test_restore_without_a_file_is_a_clean_usage_error():
    env = os.environ | {"DATABASE_URL": "postgres://nobody@127.0.0.1:1/none"}
    done = subprocess.run(
        ["make", "--no-print-directory", "restore"], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert done.returncode != 0 and "usage: make restore BACKUP=path/to/file.dump" in done.stderr
