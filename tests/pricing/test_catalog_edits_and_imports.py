"""The catalog keeps what people edited; imports keep catalog metadata and survive a racing import."""

from __future__ import annotations

import datetime as dt
import threading
from decimal import Decimal

import pytest
from django.db import connection

from pricing.catalog import CatalogError, _load_fx_rates
from pricing.ingest import ingest_price_records
from pricing.models import FxRate, InstanceType, PriceObservation, Provider
from pricing.providers.records import InstanceTypeRecord, PriceRecord

T0 = dt.datetime(2026, 11, 1, tzinfo=dt.UTC)


def _fx_file(tmp_path, *rows: str):
    path = tmp_path / "fx_rates.csv"
    path.write_text("currency,base,rate,as_of,source\n" + "".join(f"{row}\n" for row in rows))
    return path


@pytest.mark.django_db
def test_an_fx_rate_edited_in_the_admin_survives_the_next_catalog_load(tmp_path, admin_client):
    path = _fx_file(tmp_path, "CNY,USD,0.13986,2026-11-30,bundled")
    _load_fx_rates(path)
    rate = FxRate.objects.get()
    response = admin_client.post(
        f"/admin/pricing/fxrate/{rate.pk}/change/",
        {"currency": "CNY", "base": "USD", "rate": "0.14100000", "as_of": "2026-11-30", "source": "treasury"},
    )
    assert response.status_code == 302
    count = _load_fx_rates(path)  # the deploy's load_catalog
    rate.refresh_from_db()
    assert (rate.rate, rate.source) == (Decimal("0.14100000"), "treasury")
    assert (count.updated, count.unchanged) == (0, 1)


@pytest.mark.django_db
def test_a_rate_nobody_edited_still_follows_the_bundled_file(tmp_path):
    _load_fx_rates(_fx_file(tmp_path, "CNY,USD,0.13986,2026-11-30,bundled"))
    count = _load_fx_rates(_fx_file(tmp_path, "CNY,USD,0.14000,2026-11-30,bundled v2"))
    assert count.updated == 1 and FxRate.objects.get().rate == Decimal("0.14000000")


@pytest.mark.django_db
def test_two_different_bundled_rates_for_one_day_are_an_error(tmp_path):
    path = _fx_file(
        tmp_path,
        "CNY,USD,0.13986,2026-11-30,a",
        "CNY,USD,0.13986,2026-11-30,same",
        "CNY,USD,0.2,2026-11-30,b",
    )
    with pytest.raises(CatalogError) as caught:
        _load_fx_rates(path)
    assert str(caught.value) == (
        f"{path}:4: column 'rate': 0.2 contradicts 0.13986 for CNY/USD on 2026-11-30 at line 2"
    )
    assert not FxRate.objects.exists()


def _price(instance: InstanceTypeRecord, price="2.50", source="file:a.csv") -> PriceRecord:
    return PriceRecord(
        instance=instance,
        region="eu-1",
        zone="",
        pricing_model="on_demand",
        price_per_hour=Decimal(price),
        currency="USD",
        observed_at=T0,
        source=source,
        location="a.csv:2",
    )


@pytest.mark.django_db
def test_an_import_naming_an_existing_instance_type_keeps_its_catalog_metadata():
    full = InstanceTypeRecord(
        provider="aws",
        name="p5.48xlarge",
        gpu_name="H100",
        gpu_count=Decimal(8),
        vcpus=Decimal(192),
        memory_gib=Decimal(2048),
        gpu_memory_gib=Decimal(80),
        local_disk_gb=Decimal(30400),
        network="3200 Gbps EFA",
        interconnect="NVLink",
    )
    ingest_price_records([_price(full)])
    bare = InstanceTypeRecord(provider="aws", name="p5.48xlarge", gpu_name="H100", gpu_count=Decimal(8))
    ingest_price_records([_price(bare, "2.60", source="file:b.csv")])
    stored = InstanceType.objects.get()
    assert (stored.vcpus, stored.memory_gib, stored.gpu_memory_gib, stored.local_disk_gb) == (
        Decimal(192),
        Decimal(2048),
        Decimal(80),
        Decimal(30400),
    )
    assert (stored.network, stored.interconnect) == ("3200 Gbps EFA", "NVLink")
    changed = InstanceTypeRecord(
        provider="aws", name="p5.48xlarge", gpu_name="H100", gpu_count=Decimal(8), vcpus=Decimal(96)
    )
    ingest_price_records([_price(changed, "2.70", source="file:c.csv")])
    assert InstanceType.objects.get().vcpus == Decimal(96)  # a value the source does give still wins


@pytest.mark.django_db(transaction=True)
def test_two_concurrent_first_imports_of_a_new_provider_both_succeed(require_postgres, monkeypatch):
    from pricing import ingest

    barrier, errors, results = threading.Barrier(2), [], []
    real = ingest._ensure_providers

    def together(slugs, result):
        barrier.wait(timeout=30)  # both are inside their transactions, neither has created the provider
        return real(slugs, result)

    monkeypatch.setattr(ingest, "_ensure_providers", together)
    instance = InstanceTypeRecord(provider="newcloud", name="h100x8", gpu_name="H100", gpu_count=Decimal(8))

    def run(source):
        try:
            results.append(ingest_price_records([_price(instance, source=source)]).inserted)
        except Exception as error:  # noqa: BLE001 (the assertion below shows it)
            errors.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(f"file:{n}.csv",)) for n in "ab"]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert errors == [] and results == [1, 1]
    assert Provider.objects.filter(slug="newcloud").count() == 1
    assert InstanceType.objects.filter(name="h100x8").count() == 1
    assert PriceObservation.objects.count() == 2
