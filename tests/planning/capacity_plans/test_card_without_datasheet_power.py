"""A capacity plan over a bill with a card whose datasheet has no power figure (issue 30's README "Try it"
block: examples/bill-focus.csv has 24 h of g5.xlarge, the AWS-only A10G).

Found by following the README as a new user: `capacity_plan --from 2026-11-01 --to 2026-12-01` ended in
`CommandError: study.buy.gpu: unknown GPU model 'a10g'`, though `manage.py gpus` lists a10g. The A10G is
"not sold separately" (pricing/data/gpu_specs.csv, AWS g5 docs) and has no published TDP there, so it
cannot be priced as an owned server: the plan covers it with on-demand (and spot, commitments) only and
says why, as it already does for a card with no list price.

Hand check: g5.xlarge us-east-1 on demand is 1.006 USD an hour for its one A10G
(pricing/data/skypilot/aws/vms.gpu.csv), the price the plan must use for the fleet."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

pytestmark = pytest.mark.django_db
BILL = Path(__file__).resolve().parents[3] / "examples" / "bill-focus.csv"


def test_the_readme_bill_plans_the_a10g_without_owning_and_says_why(bundled_catalog):
    call_command("import_billing", str(BILL), "--no-progress", stdout=StringIO(), stderr=StringIO())
    out = StringIO()
    call_command(
        "capacity_plan",
        "--from",
        "2026-11-01",
        "--to",
        "2026-12-01",
        "--horizon-months",
        "36",
        "--growth",
        "0.02",
        "--gpu",
        "a10g",
        "--trials",
        "100",
        "--format",
        "json",
        stdout=out,
        stderr=StringIO(),
    )
    plan = json.loads(out.getvalue())
    on_demand = next(price for price in plan["prices"] if price["kind"] == "on_demand")
    assert (on_demand["offer"], on_demand["price_per_gpu_hour"]) == ("aws/g5.xlarge/us-east-1", "1.006000")
    kinds = {layer["kind"] for layer in plan["layers"]}
    assert "owned" not in kinds and kinds & {"on_demand", "spot"}, kinds
    assert any(warning.startswith("no server price of a10g (") for warning in plan["warnings"])
    # the placeholders that let the finance terms parse are not shown as assumptions
    names = {item["name"]: item["value"] for item in plan["assumptions"]}
    assert "buy.gpu_tdp_w" not in names and "buy.server_price" not in names


def test_the_plan_page_of_the_readme_bill_heads_with_the_money_and_lists_each_fleet(
    bundled_catalog, client_as
):
    """The page's verdict was one bold paragraph of ~20 lines (seven fleets' advice run together, issue 30
    "walls of prose"); now the headline, then the fleets' advice as a list. And a fleet planned without
    owning is not also told "owned servers are priced with the TCO defaults"."""
    call_command("import_billing", str(BILL), "--no-progress", stdout=StringIO(), stderr=StringIO())
    client = client_as("finance")
    page = client.post(
        "/plans/",
        {
            "from": "2026-11-01",
            "to": "2026-12-01",
            "horizon_months": "36",
            "growth": "0.02",
            "trials": "100",
        },
    ).content.decode()
    verdict = page.split('<p class="verdict"><strong>', 1)[1].split("</strong>", 1)[0]
    assert verdict.startswith("Total ") and "a10g aws/g5.xlarge/us-east-1:" not in verdict
    advice = page.split('id="plan-fleet-advice"', 1)[1].split("</details>", 1)[0]
    assert "<li><strong>a10g aws/g5.xlarge/us-east-1</strong>: " in advice
    assert "no study for a10g:" not in page and "no server price of a10g (" in page
    # a price per GPU-hour says its unit once ("USD/h per GPU-hour" read as USD per hour per GPU-hour)
    assert "USD/h per GPU-hour" not in page and "USD/h a GPU-hour" not in page
    assert " USD per GPU-hour)" in page
    # a plain-number assumption has thousands separators: the TCO default staff cost, 150,000 USD a year
    assert "<td>buy.fte_cost_per_year</td><td>150,000</td>" in page
