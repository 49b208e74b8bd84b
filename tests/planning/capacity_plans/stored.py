"""A stored capacity plan written by hand (for authorization tests that need a plan to exist, not its
numbers: those are computed from the demo bills in test_shells.py)."""

from __future__ import annotations

import itertools

from planning.models import CapacityPlan

RESULT = {
    "name": "matrix plan",
    "currency": "USD",
    "horizon_months": 36,
    "trials": 10,
    "seed": 20,
    "scope": {
        "from": "2026-05-01",
        "to": "2026-11-01",
        "teams": [],
        "gpu": "h100-sxm5-80gb",
        "gpu_asked": "",
    },
    "discount_rate_annual": "0.08",
    "recommendation": "Own 1 server (8 h100-sxm5-80gb GPUs); leave the rest to on-demand.",
    "owned_servers": 1,
    "gpus_per_server": 8,
    "layers": [
        {
            "kind": "owned",
            "gpu_model": "h100-sxm5-80gb",
            "gpus": 8,
            "hours_served": 200000.0,
            "cost_by_year": ["150000.00", "40000.00", "10000.00"],
            "share_of_demand": 0.8,
        },
        {
            "kind": "on_demand",
            "gpu_model": "h100-sxm5-80gb",
            "gpus": 4,
            "hours_served": 50000.0,
            "cost_by_year": ["100000.00", "100000.00", "100000.00"],
            "share_of_demand": 0.2,
        },
    ],
    "total_cost": "500000.00",
    "npv": "450000.00",
    "p50_total_cost": "500000.00",
    "p90_total_cost": "560000.00",
    "status_quo_cost": "700000.00",
    "savings_vs_status_quo": "200000.00",
    "savings_share": "0.285714",
    "break_even_month": 14,
    "cost_by_year": ["250000.00", "140000.00", "110000.00"],
    "status_quo_by_year": ["233333.33", "233333.33", "233333.34"],
    "sensitivity": {
        "metric": "npv",
        "base": "450000.00",
        "rows": [{"driver": "growth", "low": "400000.00", "high": "500000.00", "swing": "100000.00"}],
    },
    "demand": {
        "series_used": "billed",
        "series_reason": "test",
        "covered_hours": 4416,
        "total_hours": 4416,
        "uncovered_hours": 0,
        "gpu_hours": 40000.0,
        "interruptible_share": 0.1,
        "percentiles": {"p10": 6.0, "p50": 9.0, "p90": 11.0, "peak": 12.0, "mean": 9.0},
        "monthly_gpu_hours": [{"month": "2026-05", "gpu_hours": 6600.0, "covered_hours": 744, "hours": 744}],
        "load_duration_curve": [12.0, 11.0, 9.0, 6.0],
    },
    "prices": [
        {
            "kind": "on_demand",
            "pricing_model": "on_demand",
            "price_per_gpu_hour": "6.880000",
            "currency": "USD",
            "source": "skypilot:aws",
            "offer": "aws/p5.48xlarge/us-east-1",
            "observed_at": "2026-11-01T00:00:00+00:00",
            "quality": "snapshot",
            "stale": False,
            "observation_id": None,
            "price_per_gpu_hour_usd": "6.880000",
        }
    ],
    "assumptions": [{"name": "horizon_months", "value": "36", "source": "default"}],
    "warnings": [],
}


_STORED = itertools.count(1)  # each stored plan its own fingerprint: one save per fingerprint (issue 31)


def stored_plan(
    *, scope_teams: list[str] | None = None, owner=None, name: str = "matrix plan"
) -> CapacityPlan:
    teams = list(scope_teams or [])
    result = RESULT | {"name": name, "scope": RESULT["scope"] | {"teams": teams}}
    return CapacityPlan.objects.create(
        name=name,
        owner=owner,
        scope_teams=teams,
        inputs={},
        result=result,
        prices_used=result["prices"],
        fingerprint=f"test-{next(_STORED)}",
    )
