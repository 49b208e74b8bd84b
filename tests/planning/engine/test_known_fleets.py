"""The issue's resolved-means cases on bills of known fleets (known_fleets.py): two GPU models, a
reservation in force, a marketplace offer cheaper than everything, an 8-GPU NVLink fleet next to 1-GPU
ones. Each fleet's plan is checked against the independent brute force of known_fleets.py."""

from __future__ import annotations

from decimal import Decimal

import numpy as np
import pytest

from planning.engine.demand import UsageRows
from planning.engine.fleets import LINK_NVLINK, LINK_SINGLE, Offer, fleets_of, serves, usage_of
from planning.engine.in_force import commitments_of, in_force_inputs, renewals
from planning.engine.options import SupplyOptions
from planning.engine.plan import capacity_plan
from tests.planning.engine.known_fleets import (
    HOURS,
    START,
    brute_force,
    brute_force_years,
    hourly_demand,
    known_bills,
)
from tests.planning.engine.plan_fixtures import commitment, inputs, on_demand, spot, synthetic_owned

FORM_FACTORS = {
    "h100-sxm5-80gb": "SXM5",
    "l4": "PCIe low-profile single-slot",
}  # the catalog's GpuModel.form_factor
END = START + HOURS
P5, A3, L4 = (
    "h100-sxm5-80gb aws/p5.48xlarge/us-east-1",
    "h100-sxm5-80gb gcp/a3-highgpu-1g/us-central1",
    "l4 aws/g6.xlarge/us-east-1",
)
# A quoted owned 8-GPU server: 250,000 at month 0 and 1,000 a month (synthetic round flows), 12 months
SERVER_CAPEX, SERVER_MONTHLY = 250_000.0, 1_000.0
SERVER_COST_12 = SERVER_CAPEX + 12 * SERVER_MONTHLY  # 262,000 per server over the plan


@pytest.fixture(scope="module")
def bills():
    usage = known_bills()
    return usage, {fleet.key: fleet for fleet in fleets_of(usage, FORM_FACTORS)}


def test_the_bills_split_into_like_for_like_fleets_listed_by_spend(bills):
    usage, fleets = bills
    # spend by hand: p5 168 x 33.024 + 168 x 55.04 + 84 x 55.04 = 5,548.032 + 9,246.72 + 4,623.36 = 19,418.112; a3 2 x 168 x 11.06 = 3,716.16;
    # g6 (3 x 168 + 2 x 56) x 0.8048 = 495.76
    assert list(fleets) == [P5, A3, L4]
    spend = {key: Decimal(fleet.effective_cost_micros) / 1_000_000 for key, fleet in fleets.items()}
    assert spend == {P5: Decimal("19418.112"), A3: Decimal("3716.16"), L4: Decimal("495.7568")}
    p5, a3 = fleets[P5].need, fleets[A3].need
    # three p5.48xlarge (EFA) run together in hours 0-11: the fleet needs a cluster fabric
    assert (p5.gpus_per_instance, p5.link, p5.fabric, fleets[P5].running_together) == (
        8,
        LINK_NVLINK,
        True,
        3,
    )
    assert (a3.gpus_per_instance, a3.link, a3.fabric) == (1, LINK_SINGLE, False)


def test_the_8_gpu_fleet_is_never_moved_onto_a_1_gpu_vm_and_a_marketplace_listing_never_prices_a_year(bills):
    _, fleets = bills
    need = fleets[P5].need
    norway_vm = Offer("h100-sxm5-80gb", 1, LINK_SINGLE, fabric=False)  # the 1-GPU VM with 4 GB of RAM
    assert "1 GPUs per instance, the bills' ran 8" in serves(norway_vm, need, horizon_months=36)
    pcie_box = Offer("h100-sxm5-80gb", 8, "pcie", fabric=True)
    assert "pcie link" in serves(pcie_box, need, horizon_months=36)
    lone_hgx = Offer("h100-sxm5-80gb", 8, LINK_NVLINK, fabric=False)
    assert "no cluster fabric" in serves(lone_hgx, need, horizon_months=36)
    listing = Offer("h100-sxm5-80gb", 8, LINK_NVLINK, fabric=True, marketplace=True)
    assert "marketplace listing" in serves(listing, need, horizon_months=12)
    assert serves(listing, need, horizon_months=6) == ""  # under a year a listing may price the market
    # the other way is like for like: an 8-GPU host runs a 1-GPU fleet's work
    assert (
        serves(Offer("h100-sxm5-80gb", 8, LINK_NVLINK, fabric=True), fleets[A3].need, horizon_months=36) == ""
    )
    assert "another GPU model" in serves(
        Offer("h200-sxm-141gb", 8, LINK_NVLINK, True), need, horizon_months=36
    )


def test_the_reservation_in_force_is_read_from_the_bills(bills):
    usage, fleets = bills
    fleet_usage = usage_of(usage, fleets[P5].rows)
    (ri,) = commitments_of(fleet_usage, end_hour=END)
    # 168 used instance-hours x 8 GPUs; 33.024 / 8 = 4.128 a GPU-hour; 8 GPUs in the last week
    assert (ri.commitment_id, ri.gpus, ri.rate_per_gpu_hour, ri.used_gpu_hours) == (
        "ri-p5",
        8.0,
        4.128,
        1344.0,
    )
    assert ri.end_text() == "2027-12-06"
    in_force = in_force_inputs([ri], history_end_hour=END, horizon_months=24)
    # 2027-12-06 is after plan year 1 (ends 12 x 730 h after 2026-11-08) and inside year 2: counted in year 1
    assert list(in_force.gpus_by_year) == [8.0, 0.0]
    assert in_force.monthly_cost[1] == pytest.approx(8 * 4.128 * 730)  # 24,107.52 a month
    (renewal,) = renewals([ri], history_end_hour=END, horizon_months=24)
    assert renewal["commitment_id"] == "ri-p5" and renewal["plan_month"] == 13


CASES = {
    # fleet: (on-demand, spot, 1-year, 3-year, owned?) per GPU-hour; the p5 commitments are quotes
    P5: ("6.88", None, "4.50", "3.00", True),
    A3: ("11.06", None, None, None, True),
    L4: ("0.8048", "0.349", None, None, False),  # no server price of an L4 box: no owned option
}


@pytest.mark.parametrize("key", list(CASES))
def test_each_fleets_plan_is_the_brute_forces_cheapest_mix(bills, key):
    usage, fleets = bills
    fleet = fleets[key]
    fleet_usage = usage_of(usage, fleet.rows)
    price, spot_price, one_year, three_year, owned = CASES[key]
    commitments = commitments_of(fleet_usage, end_hour=END)
    in_force = in_force_inputs(commitments, history_end_hour=END, horizon_months=12)
    options = SupplyOptions(
        on_demand=on_demand(price),
        spot=spot(spot_price) if spot_price else None,
        committed_1y=commitment(12, one_year) if one_year else None,
        committed_3y=commitment(36, three_year) if three_year else None,
        owned=synthetic_owned(
            gpus_per_server=8,
            capex=SERVER_CAPEX,
            monthly=SERVER_MONTHLY,
            residual=0.0,
            variable=0.0,
            horizon=12,
        )
        if owned
        else None,
    )
    firm, interruptible = hourly_demand(usage, fleet.rows)
    plan = capacity_plan(
        inputs(options, firm=firm, interruptible=interruptible, horizon=12, in_force=in_force),
        with_sensitivity=False,
    )
    in_force_gpus = commitments[0].gpus if commitments else 0.0
    in_force_cost = float(in_force.monthly_cost.sum()) if in_force else 0.0
    if key == P5:
        assert in_force_cost == pytest.approx(12 * 8 * 4.128 * 730)  # 289,290.24: the reservation's year
    cost, (servers, three, one) = brute_force(
        firm,
        interruptible,
        in_force=in_force_gpus,
        in_force_cost=in_force_cost,
        on_demand=float(price),
        spot=float(spot_price) if spot_price else None,
        committed_1y=float(one_year) if one_year else None,
        committed_3y=float(three_year) if three_year else None,
        server_cost=SERVER_COST_12 if owned else None,
    )
    assert float(plan.total_cost) == pytest.approx(cost, rel=1e-9, abs=0.01)
    assert (plan.owned_servers, plan.committed_3y_units, plan.committed_1y_units_by_year[0]) == (
        servers,
        three,
        one,
    )
    if key == P5:
        # the reservation's 8 GPUs are the base layer: nothing is bought for them
        assert plan.layers[0].kind == "in_force" and plan.layers[0].gpus == 8
        # the rest: 8 GPUs every hour, 8 more half the day. One server, 262,000 / (8 x 8760) = 3.74 a
        # GPU-hour busy all year, beats the 4.50 1-year and 6.88 on-demand; the 3-year, paid 36 months in
        # a 12-month plan, costs 9.00 a GPU-hour used; the half-day 8 stay on demand (6.88 x 0.5 < 3.74)
        assert (servers, three, one) == (1, 0, 0)


def test_a_marketplace_listing_cheaper_than_everything_is_left_out_and_it_mattered(bills):
    """A listing at 1.00 a GPU-hour would win every slice; it is refused for a 12-month plan, so the plan
    is the brute force over the admissible offers, which costs more than the brute force with it."""
    usage, fleets = bills
    firm, interruptible = hourly_demand(usage, fleets[P5].rows)
    listing = Offer("h100-sxm5-80gb", 8, LINK_NVLINK, fabric=True, marketplace=True)
    assert serves(listing, fleets[P5].need, horizon_months=12)
    common = dict(
        in_force=8.0,
        in_force_cost=12 * 8 * 4.128 * 730,
        spot=None,
        committed_1y=4.50,
        committed_3y=3.00,
        server_cost=SERVER_COST_12,
    )
    admissible, _ = brute_force(firm, interruptible, on_demand=6.88, **common)
    with_listing, _ = brute_force(firm, interruptible, on_demand=1.00, **common)
    assert with_listing < admissible
    assert np.isfinite(admissible)


def test_a_reservation_ending_in_year_two_leaves_its_gpus_to_the_plan_from_then(bills):
    """24 months: the reservation (ends 2027-12-06, 393 days = 9,432 h after the week's end = 12.92 plan
    months of 730 h) holds its 8 GPUs through year 1 only; its payments run to its end, every hour of it:
    8 GPUs x 4.128 x 9,432 h = 311,482.37."""
    usage, fleets = bills
    fleet = fleets[P5]
    commitments = commitments_of(usage_of(usage, fleet.rows), end_hour=END)
    in_force = in_force_inputs(commitments, history_end_hour=END, horizon_months=24)
    assert float(in_force.monthly_cost.sum()) == pytest.approx(8 * 4.128 * 9432, abs=0.01)
    options = SupplyOptions(
        on_demand=on_demand("6.88"),
        committed_1y=commitment(12, "4.50"),
        committed_3y=commitment(36, "3.00"),
        owned=synthetic_owned(
            gpus_per_server=8,
            capex=SERVER_CAPEX,
            monthly=SERVER_MONTHLY,
            residual=0.0,
            variable=0.0,
            horizon=24,
        ),
    )
    firm, interruptible = hourly_demand(usage, fleet.rows)
    plan = capacity_plan(
        inputs(options, firm=firm, interruptible=interruptible, horizon=24, in_force=in_force),
        with_sensitivity=False,
    )
    cost, (servers, three, one, renewed) = brute_force_years(
        firm,
        interruptible,
        in_force_by_year=[8.0, 0.0],
        in_force_cost=8 * 4.128 * 9432,
        on_demand=6.88,
        committed_1y=4.50,
        committed_3y=3.00,
        server_cost=SERVER_CAPEX + 24 * SERVER_MONTHLY,
        years=2,
        renewal_from_year=1,  # in force through month 12 (8,760 h <= 9,432 h), not month 13: renewed from 13
        renewal_max=8,
    )
    assert float(plan.total_cost) == pytest.approx(cost, rel=1e-9, abs=0.01)
    assert (
        plan.owned_servers,
        plan.committed_3y_units,
        plan.committed_1y_units_by_year,
        plan.renewal_units,
    ) == (servers, three, one, (renewed,))
    # year 2 needs the reservation's 8 GPUs again: a second server (274,000 over the 24 months) beats a
    # year-2 1-year commitment of 8 GPUs (8 x 4.50 x 8,760 = 315,360) and a 3-year renewal from month 13
    # (8 x 3.00 x 26,280 = 630,720, paid in full); in year 1 it serves the half-day 8
    assert (servers, three, one, renewed) == (2, 0, (0, 0), 0)


def test_an_unused_commitment_row_joins_the_fleet_of_its_commitment():
    """An unused-commitment row may carry no instance type (the bill charges the commitment, not a
    machine): it joins the fleet whose used rows name the same commitment id, so its cost is that
    fleet's, and it adds 2 unused GPUs to the reservation (8 GPU-hours at 4.128 over 4 hours)."""
    used = dict(
        start_hour=START,
        end_hour=START + 168,
        gpu_hours=1344.0,
        gpu_model="h100-sxm5-80gb",
        provider="aws",
        region="us-east-1",
        instance_type="p5.48xlarge",
        gpus_per_instance=8.0,
        pricing_category="committed",
        effective_cost_micros=5_548_032_000,
        commitment_id="ri-p5",
        commitment_end_hour=-1,
    )
    unused = dict(
        start_hour=END - 4,
        end_hour=END,
        gpu_hours=0.0,
        gpu_model="h100-sxm5-80gb",
        provider="aws",
        region="",
        instance_type="",
        gpus_per_instance=np.nan,
        pricing_category="committed",
        effective_cost_micros=int(8 * 4.128 * 4 * 1_000_000),
        commitment_id="ri-p5",
        commitment_end_hour=-1,
    )
    rows = [used, unused]
    usage = UsageRows.of(**{key: [row[key] for row in rows] for key in used}, unused_commitment=[False, True])
    (fleet,) = fleets_of(usage, FORM_FACTORS)
    assert fleet.key == P5 and fleet.rows.tolist() == [True, True]
    assert fleet.effective_cost_micros == 5_548_032_000 + 132_096_000  # 5,548.032 + 8 x 4.128 x 4
    (ri,) = commitments_of(usage_of(usage, fleet.rows), end_hour=END)
    # the last week: 1,344 used + 32 unused GPU-hours (132.096 / 4.128) over 168 h = 8.190 GPUs
    assert (ri.gpus, ri.unused_gpu_hours) == (pytest.approx(8.19, abs=0.001), pytest.approx(32.0))
