"""Stored inputs for the report tests: a TCO study of the docs' worked example and a workload whose
stored ranking has an on-demand row and a simulated spot row (the ranking's row shape)."""

import datetime as dt

import pytest

from tests.procurement.costing.conftest import h100  # noqa: F401  (the GPU row the study resolves)
from tests.procurement.costing.tco_fixtures import study_document

NOW = dt.datetime(2026, 12, 1, 12, 0, tzinfo=dt.UTC)


@pytest.fixture
def stored_study(h100):  # noqa: F811
    from procurement.services.tco import tco_study_create

    return tco_study_create(document=study_document(utilization="0.8"))


def ranked_row(provider="aws", pricing_model="on_demand", total_cost="120.00", **extra):
    row = {
        "provider": provider,
        "instance_type": "g6.12xlarge",
        "region": "us-east-1",
        "zone": "",
        "gpu": "l4",
        "gpus": 4,
        "gpus_per_instance": 4,
        "instances": 1,
        "pricing_model": pricing_model,
        "price_per_hour": "4.601600",
        "effective_price_per_hour": "4.601600",
        "hours": 20.0,
        "total_cost": total_cost,
        "currency": "USD",
        "price_observed_at": "2026-11-21T00:00:00+00:00",
        "price_age_days": 10,
        "stale": False,
        "price_stale_after_hours": 48.0,
        "fits": True,
        "reasons": [],
    }
    return row | extra


SPOT = {
    "interruption_band": "5-10%",
    "interruption_source": "advisor",
    "advisor_observed_at": "2026-11-01",
    "interruption_source_text": "Spot Advisor band 5-10% of instances interrupted a month, snapshot 2026-11-01",
    "interruption_rate_per_hour": "0.000106868",
    "mean_hours_between_interruptions": "9357.4",
    "checkpoint_write_minutes": 1.0,
    "restart_hours": 0.1,
    "optimal_interval_hours": 13.679,
    "checkpoint_interval_minutes": 15.0,
    "overhead": "0.066698",
    "verdict": "suitable",
    "why": ["checkpoints every 15 minutes bound the lost work", "a training job can resume"],
    "simulation": {
        "p50_hours": 21.4,
        "p90_hours": 23.1,
        "p50_cost": "40.10",
        "p90_cost": "44.90",
        "trials": 2000,
        "seed": 0,
        "priced_at": "current spot price 1.830000 USD/h",
    },
}


@pytest.fixture
def make_ranked_workload(db, team_named):
    from procurement.models import Recommendation, Workload

    def make(rows=None, name="llama fine-tune"):
        # team "research": what client_as("engineer", team="research") may see
        workload = Workload.objects.create(
            name=name, task="qlora", spec={"task": "qlora"}, team=team_named("research")
        )
        if rows is None:
            # the parts add up: spot 34.00 + 1.95 + 2.75 + 6.80 = 45.50; on demand 90 + 4.60 + 1.40 + 24 = 120
            spot_parts = {
                "compute": "34.00",
                "setup": "1.95",
                "storage": "2.75",
                "reruns": "6.80",
                "total": "45.50",
            }
            on_demand_parts = {"compute": "90.00", "setup": "4.60", "storage": "1.40", "reruns": "24.00"}
            rows = [
                ranked_row(
                    pricing_model="spot",
                    total_cost="45.50",
                    spot=SPOT,
                    effective_price_per_hour="1.952",
                    cost_breakdown=spot_parts,
                ),
                ranked_row(pricing_model="on_demand", total_cost="120.00", cost_breakdown=on_demand_parts),
            ]
        Recommendation.objects.create(
            workload=workload, results=rows, parameters={"deadline_hours": 48}, fingerprint="x"
        )
        return workload

    return make
