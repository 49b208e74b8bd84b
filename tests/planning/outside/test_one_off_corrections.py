"""One-off corrections are not projected as if they recurred (issue 27, the demo's L4 fleet).

Before: the demo's L4 fleet (one g6.xlarge, 0.8048 USD an hour) showed savings of -142.82 against its
status quo, because its bills carry one -24.00 correction (a credit re-rating one day of the first month,
billing/demo.py CORRECTION) that the status quo spread over the history's GPU-hours and projected over 36
months: 24.00 x 26,280 / 4,416 h = 142.83 a fleet that never changes its buying. A correction is money
without usage; it does not recur with demand."""

from __future__ import annotations

from decimal import Decimal

import pytest

from planning.engine.demand import UsageRows, status_quo
from tests.billing.catalog import import_demo_files
from tests.planning.outside import capacity_plan_bills as bills

HOURS_36 = 36 * 730


def test_it_leaves_a_cost_only_correction_out_of_the_status_quo_rate():
    """Two days of one GPU at 1.006 (48 GPU-hours, 48.288) and a -24.00 correction with no hours: the rate
    is 48.288 / 48 = 1.006, not (48.288 - 24) / 48 = 0.506; the correction is reported apart. An unused
    commitment (cost, no hours) stays: it recurs while the commitment runs."""
    rows = UsageRows.of(
        start_hour=[0, 24, 0, 0],
        end_hour=[24, 48, 24, 24],
        gpu_hours=[24, 24, 0, 0],
        effective_cost_micros=[24_144_000, 24_144_000, -24_000_000, 5_000_000],
        unused_commitment=[False, False, False, True],
    )
    quo = status_quo(rows, start_hour=0, end_hour=48)
    assert quo.gpu_hours == 48
    assert quo.effective_cost_micros == 48_288_000 + 5_000_000
    assert quo.unused_commitment_micros == 5_000_000
    assert quo.by_pricing_category["on_demand"] == {"gpu_hours": 48.0, "effective_cost_micros": 48_288_000}
    assert (quo.one_off_correction_micros, quo.one_off_corrections) == (-24_000_000, 1)


@pytest.mark.django_db
def test_a_correction_on_a_hand_built_bill_never_makes_the_plan_cost_more(
    bundled_catalog, tmp_path, client_as
):
    """Four g5.xlarge at AWS's 1.006 (vms.gpu.csv line 903) for 28 days, and a -24.00 correction of the
    first day. No commitment price for g5.xlarge is stored and the A10G has no server price, so keeping
    the fleet on demand is the plan: 4 x 1.006 x 26,280 = 105,750.72, and so is the status quo (the same
    fleet bought the same way). Before: the status quo's rate was (2,704.128 - 24) / 2,688 = 0.997071, its
    cost 105,750.72 - 24 x 4 x 26,280 / 2,688 = 104,812.15, and the plan "lost" 938.57 against it."""
    machines = bills.g5(4)
    correction = bills.correction_row(machines[0], bills.START, Decimal("-24.00"))
    bills.import_bill(tmp_path, machines, extra_rows=(correction,))
    response = client_as("finance").post(
        "/api/capacity-plans/", bills.PERIOD | {"trials": 20}, content_type="application/json"
    )
    assert response.status_code == 200, response.content
    plan = response.json()
    assert plan["status_quo_cost"] == "105750.72"
    assert plan["total_cost"] == "105750.72"
    assert plan["savings_vs_status_quo"] == "0.00"
    assert plan["status_quo_cost_per_gpu_hour"] == "1.006000"
    (said,) = [
        item for item in plan["assumptions"] if item["name"] == "status quo: one-off corrections left out"
    ]
    assert said["value"].startswith("-24.00 of corrections with no GPU-hours")


@pytest.mark.django_db
def test_no_demo_fleet_costs_more_than_its_status_quo(bundled_catalog, tmp_path, client_as):
    """The demo bills (make_demo_billing seed 3, May-October 2026, as `make run` imports them): every
    fleet's status quo (its bills' own way of buying) is open to it, so no fleet's plan costs more. The L4
    fleet (one g6.xlarge on demand at its list 0.8048, no commitment price) is bought as the bills show:
    savings 0.00 (before: -142.82)."""
    import_demo_files(tmp_path, months=6)
    response = client_as("finance").post(
        "/api/capacity-plans/",
        {"from": "2026-05-01", "to": "2026-11-01", "trials": 20},
        content_type="application/json",
    )
    assert response.status_code == 200, response.content
    plan = response.json()
    savings = {fleet["fleet"]: Decimal(fleet["plan"]["savings_vs_status_quo"]) for fleet in plan["fleets"]}
    assert all(value >= 0 for value in savings.values()), savings
    (l4,) = [fleet for fleet in plan["fleets"] if fleet["fleet"].startswith("l4 ")]
    assert l4["plan"]["savings_vs_status_quo"] == "0.00"
    (said,) = [
        item for item in plan["assumptions"] if item["name"] == "status quo: one-off corrections left out"
    ]
    assert said["value"].startswith("-24.00 of corrections") and said["source"].endswith(
        f"[fleet {l4['fleet']}]"
    )
