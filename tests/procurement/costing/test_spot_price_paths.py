"""A stored recommendation resamples the spot price history of the offers it simulates."""

import datetime as dt
from decimal import Decimal

import numpy as np
import pytest
from django.utils import timezone

from pricing.models import PriceObservation
from pricing.spot_selectors import spot_price_histories_usd
from procurement.models import Recommendation

WORKLOAD = {
    "name": "llama-3.1-8b-qlora",
    "task": "qlora",
    "model": {"preset": "llama-3.1-8b"},
    "training_tokens": 1e9,
}


def _simulated(results):
    return [row for row in results if row.get("spot") and row["spot"]["simulation"]]


def _key(row):
    return (row["provider"], row["instance_type"], row["region"], row["zone"])


def test_it_reads_an_hourly_step_function_in_one_query(db, bundled_catalog, django_assert_num_queries):
    current = PriceObservation.objects.filter(pricing_model="spot").order_by("pk").first()
    now = current.observed_at  # the catalog price is the newest: the series is the 48 hours before it
    for hours_ago, factor in ((48, Decimal(2)), (24, Decimal(3))):
        PriceObservation.objects.create(
            offer=current.offer,
            pricing_model="spot",
            amount_per_hour=current.amount_per_hour * factor,
            currency=current.currency,
            observed_at=now - dt.timedelta(hours=hours_ago),
            source="test: history",
        )
    with django_assert_num_queries(2):  # the observations, and the FX rates
        histories = spot_price_histories_usd([current.offer_id], now=now)
    # 48 hours: 2x the catalog price for the first 24, 3x for the last 24 (USD catalog price)
    price = float(current.amount_per_hour)
    assert current.currency == "USD"
    np.testing.assert_allclose(histories[current.offer_id], [2 * price] * 24 + [3 * price] * 24)


def test_it_reports_resampled_price_paths_for_a_recommendation_with_spot_history(
    engineer_client, bundled_catalog
):
    body = {"workload": WORKLOAD, "top": 5, "pricing_models": ["spot"], "save": True}
    first = engineer_client.post("/api/recommendations/", body, content_type="application/json").json()
    before = _simulated(Recommendation.objects.get(pk=first["id"]).results)
    assert before and all(row["spot"]["price_paths"] == "current price only (no history)" for row in before)

    # Three days of spot history for the cheapest simulated offer, ending at its current price.
    current = PriceObservation.objects.get(pk=before[0]["observation_id"])
    now = timezone.now()
    # The bundled price is stamped with its bundling date (2026-11-30): keep it inside the three days
    # whatever today's date is, or it becomes the oldest point and the span grows day by day.
    PriceObservation.objects.filter(pk=current.pk).update(observed_at=now - dt.timedelta(hours=48))
    for hours_ago, factor in ((72, Decimal("0.9")), (36, Decimal("1.1")), (1, Decimal(1))):
        PriceObservation.objects.create(
            offer=current.offer,
            pricing_model="spot",
            amount_per_hour=current.amount_per_hour * factor,
            currency=current.currency,
            observed_at=now - dt.timedelta(hours=hours_ago),
            source="test: history",
        )
    again = engineer_client.post(
        "/api/recommendations/",
        {"workload_id": first["workload_id"], "top": 5, "pricing_models": ["spot"], "save": True},
        content_type="application/json",
    ).json()
    after = _simulated(Recommendation.objects.get(pk=again["id"]).results)
    row = next(row for row in after if _key(row) == _key(before[0]))
    assert row["spot"]["price_paths"] == "resampled from 72 hours of history"
    assert row["spot"]["simulation"]["history_hours"] == 72
    assert row["spot"]["simulation"]["priced_at"].startswith("spot price paths resampled in 24-hour blocks")
    # the history averages about the current price (0.9 x 35 h, 1.1 x 35 h, 1.0 x 2 h), so P50 stays close
    assert float(row["spot"]["simulation"]["p50_cost"]) == pytest.approx(
        float(before[0]["spot"]["simulation"]["p50_cost"]), rel=0.12
    )
