"""Job cost: the guides' worked example, the audit CLI's formulas, unit costs and bad input."""

from decimal import Decimal

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from procurement.costing.job import (
    DEFAULT_RERUN_FRACTION,
    DEFAULT_SETUP_HOURS,
    JobCostInput,
    StorageFootprint,
    job_cost,
    job_total_cost_array,
    planning_job_input,
    storage_months_held,
)
from procurement.costing.values import CostInputError

D = Decimal


def test_it_reproduces_the_guides_worked_example_where_the_dearer_card_is_cheaper_for_the_job():
    # Guides: card A at 2/h for 10 h = 20; card B at 3.5/h for 5 h = 17.5, so B is cheaper.
    card_a = job_cost(JobCostInput(price_per_hour=D("2"), hours=D("10"), currency="USD"))
    card_b = job_cost(JobCostInput(price_per_hour=D("3.5"), hours=D("5"), currency="USD"))
    assert card_a.as_report()["total"] == "20.00"
    assert card_b.as_report()["total"] == "17.50"
    assert card_b.total < card_a.total


def test_it_follows_the_audit_formulas_part_by_part():
    # compute = P.H.N = 2.5 x 4 x 2 = 20; setup = P.S.N = 2.5 x 0.5 x 2 = 2.5;
    # reruns = F.compute = 0.1 x 20 = 2; storage = G.R.M = 100 x 0.08 x 1.5 = 12; total 36.5
    breakdown = job_cost(
        JobCostInput(
            price_per_hour=D("2.5"),
            hours=D("4"),
            instances=2,
            setup_hours=D("0.5"),
            rerun_fraction=D("0.1"),
            storage_gb=D("100"),
            storage_rate_per_gb_month=D("0.08"),
            storage_months=D("1.5"),
            currency="EUR",
        )
    )
    report = breakdown.as_report()
    assert {key: report[key] for key in ("compute", "setup", "reruns", "storage", "total", "currency")} == {
        "compute": "20.00",
        "setup": "2.50",
        "reruns": "2.00",
        "storage": "12.00",
        "total": "36.50",
        "currency": "EUR",
    }


def test_it_makes_the_printed_total_the_sum_of_the_printed_parts():
    # compute 0.005 and reruns 0.005 each round half-up to 0.01; the exact total 0.010 would print 0.01,
    # but a breakdown must add up on paper, so the total prints 0.02.
    report = job_cost(
        JobCostInput(price_per_hour=D("0.005"), hours=D("1"), rerun_fraction=D("1"), currency="USD")
    ).as_report()
    assert (report["compute"], report["reruns"], report["total"]) == ("0.01", "0.01", "0.02")


def test_it_gives_unit_costs_per_gpu_hour_tokens_and_epoch():
    # 2 instances x 8 GPUs x 10 h = 160 GPU-hours; compute = 10 x 10 x 2 = 200 -> 1.25 per GPU-hour;
    # 1e9 training tokens = 1000 M -> 0.2 per 1M tokens; 4 epochs -> 50 per epoch.
    breakdown = job_cost(
        JobCostInput(
            price_per_hour=D("10"),
            hours=D("10"),
            instances=2,
            gpus_per_instance=D("8"),
            currency="USD",
            training_tokens=D("1e9"),
            epochs=D("4"),
        )
    )
    units = breakdown.unit_costs()
    assert units["per_gpu_hour"] == D("1.25")
    assert units["per_million_training_tokens"] == D("0.2")
    assert units["per_epoch"] == D("50")
    assert units["per_million_generated_tokens"] is None


def test_it_applies_the_documented_planning_defaults():
    # setup 1 h x 2/h = 2; reruns 0.20 x 20 = 4; no storage -> 26
    job = planning_job_input(price_per_hour=D("2"), hours=D("10"), currency="USD")
    breakdown = job_cost(job)
    assert (DEFAULT_SETUP_HOURS, DEFAULT_RERUN_FRACTION) == (D("1.0"), D("0.20"))
    assert breakdown.total == D("26")
    # storage: the run (10 h + 1 h setup) plus the 7-day retention, in months of 730 h
    assert job.storage_months == D(11) / D(730) + D(7) * 24 / D(730)


def test_it_adds_up_the_disk_a_job_holds_with_its_reserve():
    # 100 dataset + 100 unpacked + 20 env + 16 weights + 3 x 48 checkpoints + 1 logs + 19 cache = 400 GB,
    # plus the 20% reserve (the sizing engine's disk_reserve_fraction) = 480 GB
    footprint = StorageFootprint(
        dataset_gb=D(100),
        unpacked_gb=D(100),
        environment_gb=D(20),
        weights_gb=D(16),
        checkpoint_gb=D(48),
        checkpoints_kept=3,
        logs_gb=D(1),
        cache_gb=D(19),
    )
    assert footprint.total_gb() == D("480.0")


def test_it_bills_storage_for_the_run_plus_the_tail():
    assert storage_months_held(D("730"), D("1")) == D("2")
    # default: a 4-hour job keeps its disk 4 h + 7 days = 172 h = 172/730 of a month, not a whole month
    assert storage_months_held(D("4")) == D(4) / D(730) + D(168) / D(730)


def test_the_disk_reserve_is_the_sizing_engines():
    from procurement.costing.job import DEFAULT_STORAGE_RESERVE_FRACTION
    from procurement.sizing.assumptions import DISK_RESERVE

    assert DEFAULT_STORAGE_RESERVE_FRACTION == D(str(DISK_RESERVE.value)) == D("0.20")


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"hours": D("-1")}, "hours"),
        ({"price_per_hour": D("-0.01")}, "price_per_hour"),
        ({"instances": 0}, "instances"),
        ({"rerun_fraction": D("-0.1")}, "rerun_fraction"),
        ({"currency": "usd"}, "currency"),
        ({"basis": "guessed"}, "basis"),
    ],
)
def test_it_names_the_field_of_a_bad_value(overrides, field):
    values = {"price_per_hour": D("2"), "hours": D("10"), "currency": "USD"} | overrides
    with pytest.raises(CostInputError) as error:
        job_cost(JobCostInput(**values))
    assert error.value.field == field


money = st.decimals(min_value=0, max_value=1000, places=6, allow_nan=False, allow_infinity=False)
hours = st.decimals(min_value=0, max_value=10000, places=3, allow_nan=False, allow_infinity=False)


@given(price=money, base_hours=hours, extra_hours=hours, fraction=st.decimals(0, 1, places=2))
def test_it_never_gets_cheaper_with_more_hours(price, base_hours, extra_hours, fraction):
    def total(run_hours):
        return job_cost(
            JobCostInput(price_per_hour=price, hours=run_hours, rerun_fraction=fraction, currency="USD")
        ).total

    assert total(base_hours + extra_hours) >= total(base_hours)


@given(base_price=money, extra_price=money, run_hours=hours)
def test_it_never_gets_cheaper_at_a_higher_price(base_price, extra_price, run_hours):
    def total(price):
        return job_cost(
            JobCostInput(price_per_hour=price, hours=run_hours, setup_hours=D(1), currency="USD")
        ).total

    assert total(base_price + extra_price) >= total(base_price)


def test_it_prices_many_configurations_like_the_decimal_engine():
    prices, run_hours, instances = [D("2"), D("3.5"), D("98.32")], [D("10"), D("5"), D("0.75")], [1, 2, 4]
    vectorized = job_total_cost_array(
        price_per_hour=np.array([float(p) for p in prices]),
        hours=np.array([float(h) for h in run_hours]),
        instances=np.array(instances),
        setup_hours=1.0,
        rerun_fraction=0.2,
        storage_cost=3.0,
    )
    exact = [
        job_cost(
            JobCostInput(
                price_per_hour=p,
                hours=h,
                instances=n,
                setup_hours=D(1),
                rerun_fraction=D("0.2"),
                storage_gb=D(1),
                storage_rate_per_gb_month=D(3),
                storage_months=D(1),
                currency="USD",
            )
        ).total
        for p, h, n in zip(prices, run_hours, instances, strict=True)
    ]
    assert vectorized == pytest.approx([float(total) for total in exact], rel=1e-12)
