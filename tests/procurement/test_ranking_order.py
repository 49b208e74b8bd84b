"""Ranking order: ``top`` is a prefix of the full ranking, the Pareto flag for serving, setup hours."""

from decimal import ROUND_HALF_UP, Decimal

import pandas as pd
import pytest

from procurement.ranking import RankingOptions, rank_workload
from procurement.sizing import parse_workload_spec
from tests.procurement.test_ranking import GPUS, NOW, OFFERS, QLORA_8B, _offer

SERVE_8B = parse_workload_spec({"name": "s", "task": "inference", "model": {"preset": "llama-3.1-8b"}})
# Ties on total cost with different hours: the same price and instance type in three regions, and two
# rows of one offer at equal cost, so a partial sort that cuts between ties would be caught.
TIED = pd.concat(
    [
        OFFERS,
        pd.DataFrame(
            [
                _offer("aws", "g6.2xlarge", "l4", 1, "on_demand", 0.9776, region=r, vcpus=8, ram=32)
                for r in ("us-west-2", "eu-west-1", "ap-south-1")
            ]
        ),
    ],
    ignore_index=True,
)


def _key(row):
    return (
        row["provider"],
        row["instance_type"],
        row["region"],
        row["pricing_model"],
        row["instances"],
        row["plan"]["name"],
        row["total_cost"],
        row["fits"],
    )


def _rank(spec, offers=TIED, **options):
    return rank_workload(spec, offers, GPUS, RankingOptions(**options), now=NOW).results


@pytest.mark.parametrize("include_infeasible", [False, True])
@pytest.mark.parametrize("spec", [QLORA_8B, SERVE_8B], ids=["training", "serving"])
def test_top_n_is_the_first_n_rows_of_the_full_ranking(spec, include_infeasible):
    full = _rank(spec, top=None, include_infeasible=include_infeasible)
    feasible = [row for row in full if row["fits"]]
    count = len(feasible)
    assert count > 3
    for top in (1, 2, count - 1, count, count + 1):
        rows = _rank(spec, top=top, include_infeasible=include_infeasible)
        assert [_key(row) for row in rows if row["fits"]] == [_key(row) for row in feasible[:top]], top
        if include_infeasible:
            infeasible = [row for row in full if not row["fits"]]
            assert [_key(row) for row in rows if not row["fits"]] == [_key(row) for row in infeasible[:top]]


def test_a_serving_ranking_marks_the_cost_versus_throughput_front():
    # Serving rows all run a month, so the front trades cost per month against tokens/s (more is better).
    # A Pareto row has no cheaper row with at least its throughput (a `<=` instead of `<` would flag a
    # dearer row that only ties); every other row is dominated by some row that costs no more.
    rows = [row for row in _rank(SERVE_8B, top=None) if row["fits"]]
    assert len({row["hours"] for row in rows}) == 1 and len(rows) > 3
    cost = [float(row["total_cost"]) for row in rows]
    speed = [row["serving"]["tokens_per_second"] for row in rows]
    assert rows[0]["pareto"]
    for i, row in enumerate(rows):
        cheaper_as_fast = [j for j in range(len(rows)) if cost[j] < cost[i] and speed[j] >= speed[i]]
        if row["pareto"]:
            assert not cheaper_as_fast, (i, cheaper_as_fast)
        else:
            assert any(cost[j] <= cost[i] and speed[j] >= speed[i] for j in range(len(rows)) if j != i), i
    assert not all(row["pareto"] for row in rows)


CENT = Decimal("0.01")


@pytest.mark.parametrize("setup_hours", [0.0, 2.5])
def test_it_prices_setup_hours_other_than_one(setup_hours):
    # total = P x H x N x (1 + F) + P x S x N; S = 0 and 2.5 h
    rows = _rank(QLORA_8B, top=None, setup_hours=setup_hours, rerun_fraction=0.1)
    assert rows
    for row in rows:
        price, hours, instances = float(row["effective_price_per_hour"]), row["hours"], row["instances"]
        # rank48: each part is priced on the shown price and hours and rounded once, the total is their sum,
        # so the parts rebuild exactly (was: the total within a cent plus 3-decimal hours' rounding)
        exact_price, exact_hours = Decimal(row["effective_price_per_hour"]), Decimal(str(hours))
        compute = (exact_price * exact_hours * instances).quantize(CENT, ROUND_HALF_UP)
        setup = (exact_price * Decimal(str(setup_hours)) * instances).quantize(CENT, ROUND_HALF_UP)
        reruns = (Decimal("0.1") * compute).quantize(CENT, ROUND_HALF_UP)
        parts = row["cost_breakdown"]
        assert (Decimal(parts["compute"]), Decimal(parts["setup"]), Decimal(parts["reruns"])) == (
            compute,
            setup,
            reruns,
        )
        assert Decimal(row["total_cost"]) == compute + setup + reruns + Decimal(parts["storage"])
        assert float(row["cost_breakdown"]["setup"]) == pytest.approx(
            price * setup_hours * instances, abs=0.01
        )
