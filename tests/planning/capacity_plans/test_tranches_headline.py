"""Issue 27: the headline pays owned servers in tranches as demand grows, and says so.

Two p5.48xlarge (16 H100, AWS's 55.04 an hour: vms.gpu.csv line 2177) for 28 days, growing as yearly
multipliers 1.0, 1.5, 2.0: 16, 24 and 32 GPUs, each year served every hour. With the TCO defaults a server
(351,520 + 75,055.93 a year, residual 20%: tests/planning/outside) beats on demand at 6.88 for any GPU used
all year: the plan owns 3 servers, 2 bought at month 0 and 1 at month 10 (3 months' lead time, the
default, before year 2); year 3's 8 more GPUs are rented (a fourth server held 36 months, 506,383.79, costs
more than 8 x 6.88 x 8,760 = 482,150.40: the level is chosen as if bought at month 0, the cautious side)."""

from __future__ import annotations

from decimal import Decimal

import pytest

from tests.planning.outside import capacity_plan_bills as bills

pytestmark = pytest.mark.django_db


def test_the_headline_is_the_tranches_and_says_so(bundled_catalog, tmp_path, client_as):
    bills.import_bill(tmp_path, bills.p5(2))
    response = client_as("finance").post(
        "/api/capacity-plans/",
        bills.PERIOD | {"trials": 20, "growth": [1.0, 1.5, 2.0]},
        content_type="application/json",
    )
    assert response.status_code == 200, response.content
    plan = response.json()
    (fleet,) = plan["fleets"]
    tranches = fleet["plan"]["owned_tranches"]
    assert fleet["plan"]["owned_servers"] == 3
    assert tranches["servers_by_year"] == [2, 3, 3]
    assert [(t["servers"], t["paid_month"]) for t in tranches["tranches"]] == [(2, 0), (1, 10)]
    # the third server runs 24 months, not 36: 12 x 75,055.93 / 12 = 75,055.93 less than all at month 0
    assert Decimal(tranches["all_at_month_0"]["total"]) - Decimal(
        tranches["in_tranches"]["total"]
    ) == Decimal("75055.93")
    assert tranches["headline"] == "in_tranches"
    # the owned layer's cash is the tranches' fixed cash (no cost follows use: energy is fixed by default)
    (owned,) = [layer for layer in plan["layers"] if layer["kind"] == "owned"]
    assert owned["total_cost"] == tranches["in_tranches"]["total"]
    assert sum(Decimal(layer["total_cost"]) for layer in plan["layers"]) == Decimal(plan["total_cost"])
    (timing,) = [
        item for item in plan["assumptions"] if item["name"] == "owned purchase timing (the headline)"
    ]
    assert timing["value"].startswith("in tranches: each plan year's servers bought 3 months before")
