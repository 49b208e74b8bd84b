"""A refresh through the real Redis broker and an in-process worker: a run killed half-way changes
nothing, the rerun completes, and a further rerun inserts no duplicates."""

from __future__ import annotations

import datetime as dt
import time
from dataclasses import replace

import pytest
from moto import mock_aws

from pricing.models import PriceObservation
from pricing.tasks import refresh_prices, refresh_source_region
from scheduler import sources
from scheduler.models import PriceRefresh, RefreshStatus
from tests.pricing.providers.aws_responses import fake_aws_factory

NOW = dt.datetime.now(dt.UTC).replace(minute=0, second=0, microsecond=0)


def _die_half_way(records):
    records = list(records)
    yield from records[: len(records) // 2]
    raise ConnectionResetError("worker killed half-way through the rows")


@pytest.mark.django_db(transaction=True)
def test_it_survives_a_run_killed_half_way_and_reruns_without_duplicates(redis_worker, monkeypatch):
    with mock_aws():
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
        assert not PriceObservation.objects.exists()
        assert PriceRefresh.objects.get().status == RefreshStatus.FAILED

        monkeypatch.setitem(sources.SOURCES, "aws-spot", original)
        rerun = refresh_source_region.delay("aws-spot", "us-east-1").get(timeout=120)
        assert (rerun["status"], rerun["rows_inserted"]) == ("succeeded", 24)
        again = refresh_source_region.delay("aws-spot", "us-east-1").get(timeout=120)
        assert (again["rows_inserted"], again["rows_unchanged"]) == (0, 24)
        assert PriceObservation.objects.count() == 24


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
