"""A refresh through the real Redis broker and an in-process worker: a run killed half-way leaves the
current prices of an earlier refresh exactly as they were, the rerun inserts each new row once, and a
further rerun inserts nothing."""

from __future__ import annotations

import datetime as dt
import time
from dataclasses import replace
from decimal import Decimal

import pytest
from moto import mock_aws

from pricing.models import PriceObservation
from pricing.selectors import current_price_observations
from pricing.sources import registry as sources
from pricing.sources.refresh import refresh_run
from pricing.tasks import refresh_prices, refresh_source_region
from scheduler.models import PriceRefresh, RefreshStatus
from tests.pricing.providers.aws_responses import STUB_SPOT_PRICES, fake_aws_factory

NOW = dt.datetime.now(dt.UTC).replace(minute=0, second=0, microsecond=0)
YESTERDAY = NOW - dt.timedelta(days=1)


def _die_half_way(records):
    records = list(records)
    yield from records[: len(records) // 2]
    raise ConnectionResetError("worker killed half-way through the rows")


def _current_prices() -> dict[tuple, tuple]:
    """The current published price of each series: (offer, model, payment) → (observation id, amount, time)."""
    rows = current_price_observations().values_list(
        "offer_id", "pricing_model", "payment_option", "id", "amount_per_hour", "observed_at"
    )
    return {(offer, model, payment): (pk, amount, at) for offer, model, payment, pk, amount, at in rows}


def _natural_keys() -> list[tuple]:
    return list(
        PriceObservation.objects.values_list(
            "offer_id", "pricing_model", "payment_option", "observed_at", "source"
        )
    )


@pytest.mark.django_db(transaction=True)
def test_it_survives_a_run_killed_half_way_and_reruns_without_duplicates(redis_worker, monkeypatch):
    with mock_aws():
        # Yesterday's successful refresh: the current prices, 25% above today's stub prices (under the 5x
        # guard rail, so published). 4 types x 2 zones x 3 hours = 24 rows.
        for instance_type, price in list(STUB_SPOT_PRICES.items()):
            monkeypatch.setitem(STUB_SPOT_PRICES, instance_type, str(Decimal(price) * Decimal("1.25")))
        yesterday_factory = fake_aws_factory(YESTERDAY)
        monkeypatch.setattr(sources, "aws_client_factory", lambda: yesterday_factory)
        assert refresh_run("aws-spot", "us-east-1", now=YESTERDAY).rows_inserted == 24
        monkeypatch.undo()
        before = _current_prices()
        assert len(before) == 8 and len(_natural_keys()) == 24  # 4 types x 2 zones, one spot series each

        factory = fake_aws_factory(NOW)
        monkeypatch.setattr(sources, "aws_client_factory", lambda: factory)
        original = sources.SOURCES["aws-spot"]

        def dying_fetch(region, now):
            fetched = original.fetch(region, now)
            fetched.records = _die_half_way(fetched.records)
            return fetched

        monkeypatch.setitem(sources.SOURCES, "aws-spot", replace(original, fetch=dying_fetch))
        killed = refresh_source_region.delay("aws-spot", "us-east-1")
        with pytest.raises(ConnectionResetError):
            killed.get(timeout=120)
        assert _current_prices() == before  # same observations, amounts and times
        assert len(_natural_keys()) == 24  # nothing of the killed run's 12 rows was kept
        assert PriceRefresh.objects.latest("pk").status == RefreshStatus.FAILED

        monkeypatch.setitem(sources.SOURCES, "aws-spot", original)
        rerun = refresh_source_region.delay("aws-spot", "us-east-1").get(timeout=120)
        assert (rerun["status"], rerun["rows_inserted"]) == ("succeeded", 24)
        new_rows = PriceObservation.objects.filter(refresh_id=rerun["refresh_id"])
        assert new_rows.count() == 24 and len(set(new_rows.values_list("observed_at", "offer_id"))) == 24
        after = _current_prices()
        assert after.keys() == before.keys()
        # Today's stub prices (aws_responses.STUB_SPOT_PRICES) are now current, observed an hour before NOW.
        assert {amount for _, amount, _ in after.values()} == {Decimal(p) for p in STUB_SPOT_PRICES.values()}
        assert {at for _, _, at in after.values()} == {NOW - dt.timedelta(hours=1)}

        again = refresh_source_region.delay("aws-spot", "us-east-1").get(timeout=120)
        assert (again["rows_inserted"], again["rows_unchanged"]) == (0, 24)
        keys = _natural_keys()
        assert len(keys) == len(set(keys)) == 48  # yesterday's 24 and today's 24, each once


@pytest.mark.django_db(transaction=True)
def test_it_fans_out_one_task_per_source_and_region(redis_worker, monkeypatch):
    with mock_aws():
        factory = fake_aws_factory(NOW)
        monkeypatch.setattr(sources, "aws_client_factory", lambda: factory)
        queued = refresh_prices.delay("aws-spot", ["us-east-1", "us-west-2"]).get(timeout=60)
        assert queued == {"queued": ["aws-spot:us-east-1", "aws-spot:us-west-2"]}
        deadline = dt.datetime.now() + dt.timedelta(seconds=120)
        while dt.datetime.now() < deadline:
            done = PriceRefresh.objects.filter(status=RefreshStatus.SUCCEEDED)
            if done.count() == 2:
                break
            time.sleep(0.5)
        assert set(PriceRefresh.objects.values_list("region", "status")) == {
            ("us-east-1", "succeeded"),
            ("us-west-2", "succeeded"),
        }
