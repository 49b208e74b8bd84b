"""Each returned row explains its total: compute, setup, storage, reruns, and unit costs."""

from decimal import Decimal

from procurement.ranking import RankingOptions, rank_workload
from procurement.sizing import parse_workload_spec
from tests.procurement.test_ranking import GPUS, NOW, OFFERS

PARTS = ("compute", "setup", "storage", "reruns")
SPEC = parse_workload_spec(
    {"name": "q", "task": "qlora", "model": {"preset": "llama-3.1-8b"}, "training_tokens": 3.6e7}
)
SERVING = parse_workload_spec({"name": "s", "task": "inference", "model": {"preset": "llama-3.1-8b"}})


def _rows(spec=SPEC, **options):
    options = {"top": None} | options
    return rank_workload(spec, OFFERS, GPUS, RankingOptions(**options), now=NOW).results


def test_it_breaks_one_row_down_to_hand_computed_parts():
    # vast 1x-RTX4090 at 0.35 USD/h; a benchmark of 1,000 tokens/s makes 3.6e7 tokens take exactly 10 h.
    # compute = 0.35 x 10 x 1 = 3.50; setup = 0.35 x 1 h x 1 = 0.35; reruns = 0.2 x 3.50 = 0.70;
    # storage = 100 GB x 0.10 USD/GB-month x ((10 + 1) / 730 + 1) months = 10.1506849... -> 10.15;
    # total = 14.7006849... -> 14.70 = 3.50 + 0.35 + 10.15 + 0.70.
    # per GPU-hour = 14.70 / (1 GPU x 10 h) = 1.47; per 1M training tokens = 14.70 / 36 = 0.4083333...
    (row,) = _rows(
        providers=("vast",),
        instance_counts=(1,),
        setup_hours=1.0,
        rerun_fraction=0.2,
        storage_tail_months=1.0,
        storage_gb=100.0,
        storage_rate_per_gb_month={"vast": 0.10},
        measured_tokens_per_second={("rtx-4090", 1): 1000.0},
    )
    assert row["hours"] == 10.0 and row["total_cost"] == "14.70"
    assert row["cost_breakdown"] == {
        "compute": "3.50",
        "setup": "0.35",
        "storage": "10.15",
        "reruns": "0.70",
        "total": "14.70",
    }
    assert row["unit_costs"] == {"per_gpu_hour": "1.470000", "per_million_training_tokens": "0.408333"}


def test_it_makes_every_breakdown_add_up_to_the_total_in_any_currency():
    for currency, rate in (("USD", Decimal(1)), ("JPY", Decimal("151.37")), ("EUR", Decimal("0.9213"))):
        rows = _rows(
            currency=currency,
            fx_rate_from_usd=rate,
            storage_gb=37.3,
            storage_rate_per_gb_month={"aws": 0.08, "lambda": 0.2},
        )
        assert rows
        for row in rows:
            parts = row["cost_breakdown"]
            assert (
                sum(Decimal(parts[name]) for name in PARTS)
                == Decimal(row["total_cost"])
                == Decimal(parts["total"])
            )


def test_it_prices_serving_per_million_generated_tokens():
    for row in _rows(SERVING)[:5]:
        units = row["unit_costs"]
        assert "per_million_generated_tokens" in units and "per_million_training_tokens" not in units
        assert "per_epoch" not in units  # the spec has no epoch count: left out, not guessed
        # per GPU-hour x GPU-hours gives the total back (to the 6-place rounding)
        gpu_hours = Decimal(row["gpus"]) * Decimal(repr(row["hours"]))
        assert abs(Decimal(units["per_gpu_hour"]) * gpu_hours - Decimal(row["total_cost"])) < Decimal("0.01")


def test_it_leaves_infeasible_rows_without_a_breakdown():
    infeasible = [row for row in _rows(include_infeasible=True) if not row["fits"]]
    assert infeasible and all("cost_breakdown" not in row for row in infeasible)
