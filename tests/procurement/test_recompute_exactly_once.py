"""Two recomputations racing store one new result and one set of change events per workload."""

from __future__ import annotations

import datetime as dt
import threading

import pytest
from django.db import connection

from pricing.models import PriceObservation
from procurement.models import ChangeEvent, Recommendation, TcoStudy, Workload
from procurement.services import recompute
from procurement.services.recommendations import recommendation_create
from procurement.services.recompute import recommendations_recompute_chunk

WORKLOAD = {"name": "q", "task": "qlora", "model": {"preset": "llama-3.1-8b"}, "training_tokens": 1e9}


def _stored_with_a_price_rise() -> Recommendation:
    workload = Workload.objects.create(name="q", task="qlora", spec=WORKLOAD, notify_email="o@example.com")
    stored, _ = recommendation_create(workload=workload, parameters={"top": 5})
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
    return stored


@pytest.mark.django_db
def test_a_recompute_that_finishes_while_another_is_computing_is_not_stored_twice(
    bundled_catalog, monkeypatch
):
    stored = _stored_with_a_price_rise()
    real_store = recompute._store_recomputed
    raced = []

    def store_after_a_racing_run(changed):
        if not raced:  # the racing run computes and stores first, then this one gets to store
            raced.append(None)
            raced[0] = recommendations_recompute_chunk([stored.workload_id])
        return real_store(changed)

    monkeypatch.setattr(recompute, "_store_recomputed", store_after_a_racing_run)
    late = recommendations_recompute_chunk([stored.workload_id])
    assert raced[0][0]["created"] is True and late[0]["created"] is False
    assert Recommendation.objects.filter(workload_id=stored.workload_id).count() == 2  # old + one new
    assert ChangeEvent.objects.count() == len(raced[0][0]["events"]) >= 1
    assert late[0]["events"] == []


@pytest.mark.django_db(transaction=True)
def test_two_threads_recomputing_at_once_store_one_result_on_postgresql(require_postgres, bundled_catalog):
    stored = _stored_with_a_price_rise()
    barrier, results = threading.Barrier(2), []
    real_store = recompute._store_recomputed

    def store_together(changed):
        barrier.wait(timeout=60)  # both computed; now both try to store at the same moment
        return real_store(changed)

    def run():
        try:
            results.append(recommendations_recompute_chunk([stored.workload_id]))
        finally:
            connection.close()

    recompute._store_recomputed = store_together
    try:
        threads = [threading.Thread(target=run) for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
    finally:
        recompute._store_recomputed = real_store
    assert sorted(r[0]["created"] for r in results) == [False, True]
    assert Recommendation.objects.filter(workload_id=stored.workload_id).count() == 2
    assert ChangeEvent.objects.count() == 1


@pytest.mark.django_db
def test_a_study_superseded_while_it_was_being_priced_is_not_written_again(monkeypatch):
    study = TcoStudy.objects.create(name="s", spec={}, result={"recommendation": "rent"}, fingerprint="a")

    class Evaluated:
        fingerprint, report, prices_used = "c", {"recommendation": "buy"}, []

    def evaluate_while_a_racing_run_writes(document):
        TcoStudy.objects.create(
            name="s", spec={}, result={"recommendation": "buy"}, fingerprint="c", previous=study
        )
        return Evaluated

    monkeypatch.setattr(recompute, "tco_study_evaluate", evaluate_while_a_racing_run_writes)
    assert recompute.tco_study_recompute(study.pk) == {"study_id": study.pk, "skipped": "gone or superseded"}
    assert TcoStudy.objects.count() == 2 and not ChangeEvent.objects.exists()
