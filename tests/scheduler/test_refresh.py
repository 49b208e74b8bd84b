"""Refresh runs against stubbed AWS: prices filled, idempotent reruns, bookkeeping, the lock."""

from __future__ import annotations

import datetime as dt
import json
import threading
from dataclasses import replace
from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from moto import mock_aws

from pricing.models import PriceObservation, SpotAdvisory
from pricing.sources import registry as sources
from pricing.sources.refresh import refresh_run
from scheduler.locks import refresh_lock
from scheduler.models import PriceRefresh, RefreshStatus
from tests.pricing.providers.aws_responses import STUB_LIST_PRICES, fake_aws_factory

NOW = dt.datetime(2026, 11, 30, 12, 30, tzinfo=dt.UTC)
TYPES = sorted(STUB_LIST_PRICES)
ADVISOR = {
    "ranges": [
        {"index": 0, "label": "<5%"},
        {"index": 1, "label": "5-10%"},
        {"index": 2, "label": "10-15%"},
        {"index": 3, "label": "15-20%"},
        {"index": 4, "label": ">20%"},
    ],
    "spot_advisor": {
        "us-east-1": {"Linux": {"p5.48xlarge": {"r": 2, "s": 64}, "c5.large": {"r": 0, "s": 50}}}
    },
}


@pytest.fixture
def fake_aws(monkeypatch):
    with mock_aws():
        factory = fake_aws_factory(NOW)
        monkeypatch.setattr(sources, "aws_client_factory", lambda: factory)
        monkeypatch.setattr(sources, "spot_advisor_document", lambda: ADVISOR)
        yield factory


def prices(model: str, **filters) -> dict:
    rows = PriceObservation.objects.filter(
        pricing_model=model, offer__instance_type__name__in=TYPES, **filters
    )
    return {
        (p.offer.instance_type.name, p.payment_option): p.amount_per_hour
        for p in rows.select_related("offer__instance_type")
    }


@pytest.mark.django_db
def test_it_fills_on_demand_and_reserved_prices_and_reruns_without_inserting(fake_aws):
    first = refresh_run("aws-on-demand", "us-east-1", now=NOW)
    assert (first.status, first.source, first.region) == ("succeeded", "aws-on-demand", "us-east-1")
    on_demand = prices("on_demand")
    assert on_demand == {(t, ""): Decimal(STUB_LIST_PRICES[t][0]) for t in TYPES}
    reserved_1y = prices("reserved_1y")
    # p5: 16.512 + 144650 / 8760 h = 16.512 + 16.512557 = 33.024557 (partial upfront, effective hourly)
    assert reserved_1y[("p5.48xlarge", "partial_upfront")] == Decimal("33.024557")
    # p4d 3-year all upfront: 291170 / 26280 h = 11.079528
    assert prices("reserved_3y")[("p4d.24xlarge", "all_upfront")] == Decimal("11.079528")
    assert first.rows_inserted == 12 and first.rows_rejected == 0
    second = refresh_run("aws-on-demand", "us-east-1", now=NOW + dt.timedelta(hours=3))  # same day
    assert (second.status, second.rows_inserted, second.rows_unchanged) == ("succeeded", 0, 12)


@pytest.mark.django_db
def test_it_fills_spot_prices_per_zone_and_reruns_without_inserting(fake_aws):
    first = refresh_run("aws-spot", "us-east-1", now=NOW)
    spot = PriceObservation.objects.filter(pricing_model="spot")
    assert first.rows_inserted == spot.count() == 4 * 2 * 3  # types × zones × hours
    assert set(spot.values_list("offer__instance_type__name", flat=True)) == set(TYPES)
    assert all(zone.startswith("use1-az") for zone in spot.values_list("offer__zone", flat=True))
    assert refresh_run("aws-spot", "us-east-1", now=NOW).rows_inserted == 0
    assert spot.count() == 24


@pytest.mark.django_db
def test_it_refreshes_every_aws_source_from_the_command(fake_aws, monkeypatch):
    monkeypatch.setattr("pricing.sources.refresh.timezone.now", lambda: NOW)
    out = StringIO()
    call_command("refresh_prices", "--source", "aws", "--regions", "us-east-1", "--no-progress", stdout=out)
    text = out.getvalue()
    assert "aws-spot us-east-1: succeeded" in text and "aws-on-demand us-east-1: succeeded" in text
    assert set(PriceRefresh.objects.values_list("source", "status")) == {
        ("aws-spot", "succeeded"),
        ("aws-on-demand", "succeeded"),
        ("aws-savings-plans", "succeeded"),
        ("aws-spot-advisor", "succeeded"),
    }
    for model in ("on_demand", "reserved_1y", "reserved_3y", "savings_plan_1y", "spot"):
        names = set(
            PriceObservation.objects.filter(pricing_model=model).values_list(
                "offer__instance_type__name", flat=True
            )
        )
        assert names >= set(TYPES), model
    advisory = SpotAdvisory.objects.get()  # c5.large is not a known instance type: left out
    assert (advisory.instance_type_name, advisory.interruption_label, advisory.savings_pct) == (
        "p5.48xlarge",
        "10-15%",
        64,
    )


@pytest.mark.django_db
def test_it_records_a_failed_run_and_keeps_the_previous_prices(fake_aws, monkeypatch):
    refresh_run("aws-spot", "us-east-1", now=NOW)
    before = list(PriceObservation.objects.order_by("id").values_list("id", "amount_per_hour"))

    def broken_fetch(region, now):
        fetched = original.fetch(region, now)
        fetched.records = _fail_after(fetched.records, 5)
        return fetched

    original = sources.SOURCES["aws-spot"]
    monkeypatch.setitem(sources.SOURCES, "aws-spot", replace(original, fetch=broken_fetch))
    with pytest.raises(ConnectionResetError):
        refresh_run("aws-spot", "us-east-1", now=NOW + dt.timedelta(hours=1))
    failed = PriceRefresh.objects.latest("started_at")
    assert failed.status == RefreshStatus.FAILED and "ConnectionResetError" in failed.error
    assert list(PriceObservation.objects.order_by("id").values_list("id", "amount_per_hour")) == before


def _fail_after(records, count):
    for index, record in enumerate(records):
        if index == count:
            raise ConnectionResetError("worker killed half-way")
        yield record


@pytest.mark.django_db
def test_it_skips_a_refresh_while_another_holds_the_lock(fake_aws):
    with refresh_lock("aws-spot", "us-east-1", ttl_s=60):
        skipped = refresh_run("aws-spot", "us-east-1", now=NOW)
    assert skipped.status == RefreshStatus.SKIPPED and "holds the lock" in skipped.error
    assert not PriceObservation.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_it_runs_only_one_of_two_concurrent_refreshes_of_a_region(fake_aws, monkeypatch):
    inside, release = threading.Event(), threading.Event()
    original = sources.SOURCES["aws-spot"]

    def slow_fetch(region, now):
        inside.set()
        release.wait(timeout=30)
        return original.fetch(region, now)

    monkeypatch.setitem(sources.SOURCES, "aws-spot", replace(original, fetch=slow_fetch))
    outcome = {}

    def first_run():
        from django.db import connection

        try:
            outcome["first"] = refresh_run("aws-spot", "us-east-1", now=NOW).status
        finally:
            connection.close()

    thread = threading.Thread(target=first_run)
    thread.start()
    assert inside.wait(timeout=30)
    outcome["second"] = refresh_run("aws-spot", "us-east-1", now=NOW).status
    release.set()
    thread.join(timeout=60)
    assert outcome == {"first": "succeeded", "second": "skipped"}
    assert PriceObservation.objects.filter(pricing_model="spot").count() == 24


@pytest.mark.django_db
def test_it_refreshes_the_spot_advisor_from_a_saved_file_without_downloading(fake_aws, monkeypatch, tmp_path):
    def no_network():
        raise AssertionError("--file must not download the advisor")

    monkeypatch.setattr(sources, "spot_advisor_document", no_network)
    refresh_run("aws-on-demand", "us-east-1", now=NOW)  # makes p5.48xlarge a known AWS instance type
    saved = tmp_path / "spot-advisor-data-2026-11-28.json"
    saved.write_text(json.dumps(ADVISOR))
    out = StringIO()
    call_command(
        "refresh_prices", "--source", "aws-spot-advisor", "--file", str(saved), "--no-progress", stdout=out
    )
    assert "aws-spot-advisor: succeeded: 1 inserted, 0 unchanged" in out.getvalue()
    advisory = SpotAdvisory.objects.get()  # c5.large is not a known instance type: left out, as online
    assert (advisory.instance_type_name, advisory.interruption_band, advisory.savings_pct) == (
        "p5.48xlarge",
        2,
        64,
    )
    assert advisory.observed_at == dt.datetime(2026, 11, 28, tzinfo=dt.UTC)  # the date in the file name
    assert PriceRefresh.objects.filter(source="aws-spot-advisor", status="succeeded").count() == 1
    call_command(
        "refresh_prices", "--source", "aws-spot-advisor", "--file", str(saved), "--no-progress", stdout=out
    )
    assert "aws-spot-advisor: succeeded: 0 inserted, 1 unchanged" in out.getvalue()


@pytest.mark.django_db
def test_it_takes_a_file_only_for_the_spot_advisor(tmp_path):
    saved = tmp_path / "spot-advisor-data.json"
    saved.write_text(json.dumps(ADVISOR))
    with pytest.raises(CommandError, match="--file goes with --source aws-spot-advisor only"):
        call_command("refresh_prices", "--source", "aws-spot", "--file", str(saved), stdout=StringIO())
    with pytest.raises(CommandError, match="no such file"):
        call_command("refresh_prices", "--source", "aws-spot-advisor", "--file", str(tmp_path / "nope.json"))
    assert not PriceRefresh.objects.exists()
