"""What starts a recomputation: every successful price refresh that stored something, and the nightly run."""

from __future__ import annotations

import datetime as dt
import time
from dataclasses import replace

import pytest
from django.core.cache import cache

from gpuledger.celery import app
from pricing.catalog import SKYPILOT_SNAPSHOT_AT
from pricing.models import PriceObservation
from pricing.providers.aws import AwsReadStats
from pricing.providers.records import InstanceTypeRecord, PriceRecord
from pricing.sources import registry as sources
from pricing.sources.refresh import refresh_run
from procurement import tasks
from procurement.models import Recommendation, Workload
from procurement.services.recommendations import recommendation_create
from scheduler.schedule import DAY, SCHEDULE

WORKLOAD = {"name": "q", "task": "qlora", "model": {"preset": "llama-3.1-8b"}, "training_tokens": 1e9}


def _price_record(observation: PriceObservation, factor: int) -> PriceRecord:
    """The same offer at ``factor`` times its price, a day after the snapshot (under the 5x suspect guard)."""
    instance = observation.offer.instance_type
    return PriceRecord(
        instance=InstanceTypeRecord(
            provider=instance.provider.slug,
            name=instance.name,
            gpu_name=instance.gpu_name,
            gpu_count=instance.gpu_count,
            vcpus=instance.vcpus,
            memory_gib=instance.memory_gib,
        ),
        region=observation.offer.region.code,
        zone=observation.offer.zone,
        pricing_model=observation.pricing_model,
        price_per_hour=observation.amount_per_hour * factor,
        currency=observation.currency,
        observed_at=SKYPILOT_SNAPSHOT_AT + dt.timedelta(days=1),
        source="test: refreshed price",
    )


def _fake_spot_source(monkeypatch, records: list[PriceRecord]) -> None:
    def fetch(region, now):
        return sources.Fetch(records=iter(records), stats=AwsReadStats())

    source = replace(sources.SOURCES["aws-spot"], fetch=fetch, regions=lambda: ["us-east-1"])
    monkeypatch.setitem(sources.SOURCES, "aws-spot", source)


def _stored_recommendation() -> Recommendation:
    workload = Workload.objects.create(name="q", task="qlora", spec=WORKLOAD)
    row, _ = recommendation_create(workload=workload, parameters={"top": 5})
    return row


@pytest.fixture
def no_pending_recompute():
    cache.delete(tasks.RECOMPUTE_PENDING_KEY)
    yield
    cache.delete(tasks.RECOMPUTE_PENDING_KEY)


def test_it_recomputes_stored_recommendations_after_a_refresh_stores_new_prices(
    bundled_catalog, monkeypatch, django_capture_on_commit_callbacks, no_pending_recompute
):
    stored = _stored_recommendation()
    cheapest = PriceObservation.objects.get(pk=stored.results[0]["observation_id"])
    _fake_spot_source(monkeypatch, [_price_record(cheapest, factor=4)])
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        refresh = refresh_run("aws-spot", "us-east-1")
    assert (refresh.status, refresh.rows_inserted, callbacks[0]) == ("succeeded", 1, tasks.recompute_soon)
    newest = Recommendation.objects.filter(workload=stored.workload).order_by("-pk").first()
    assert newest.pk != stored.pk  # eager Celery: recompute_all ran its chunk in-process
    assert cheapest.pk not in {row["observation_id"] for row in newest.results[:1]}


def test_it_does_not_recompute_when_a_refresh_stores_nothing(
    bundled_catalog, monkeypatch, django_capture_on_commit_callbacks, no_pending_recompute
):
    _fake_spot_source(monkeypatch, [])
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        refresh = refresh_run("aws-spot", "us-east-1")
    assert (refresh.status, refresh.rows_inserted, callbacks) == ("succeeded", 0, [])


def test_it_queues_one_recompute_for_a_burst_of_refreshes(monkeypatch, no_pending_recompute):
    queued = []
    monkeypatch.setattr(tasks.recompute_all, "apply_async", lambda **kwargs: queued.append(kwargs))
    assert tasks.recompute_soon() is True
    assert tasks.recompute_soon() is False  # the refresh of another region, a few seconds later
    assert queued == [{"countdown": tasks.RECOMPUTE_DEBOUNCE_S}]


@pytest.mark.django_db
def test_it_lets_the_next_refresh_queue_again_once_the_recompute_started(monkeypatch, no_pending_recompute):
    monkeypatch.setattr(tasks.recompute_all, "apply_async", lambda **kwargs: None)
    assert tasks.recompute_soon() is True
    tasks.recompute_all()  # clears the pending mark first
    assert tasks.recompute_soon() is True


def test_it_recomputes_every_stored_decision_nightly():
    nightly = [job for job in SCHEDULE if job.task == "procurement.recompute_all"]
    assert [(job.every_seconds, job.kwargs) for job in nightly] == [(DAY, {})]
    assert "procurement.recompute_all" in app.tasks


@pytest.mark.django_db(transaction=True)
def test_it_recomputes_a_changed_price_through_the_real_broker(redis_worker, bundled_catalog):
    stored = _stored_recommendation()
    cheapest = PriceObservation.objects.get(pk=stored.results[0]["observation_id"])
    PriceObservation.objects.create(
        offer=cheapest.offer,
        pricing_model=cheapest.pricing_model,
        payment_option=cheapest.payment_option,
        amount_per_hour=cheapest.amount_per_hour * 4,
        currency=cheapest.currency,
        observed_at=cheapest.observed_at + dt.timedelta(days=1),
        source="test: price rise",
    )
    summary = tasks.recompute_all.delay().get(timeout=60)
    assert summary == {"workloads": 1, "tco_studies": 0, "tasks": 1}
    deadline = time.monotonic() + 60
    while Recommendation.objects.count() < 2 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert Recommendation.objects.count() == 2
