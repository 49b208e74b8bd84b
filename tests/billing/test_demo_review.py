"""The spend review over the demo FOCUS file equals totals computed by hand from the demo's design.

The demo (billing/demo.py) runs May-October 2026: 184 days = 4416 hours. Rates are the
catalog's us-east-1 on-demand prices (p5.48xlarge 55.04, p4d.24xlarge 21.957642, g6.xlarge 0.8048,
g6e.12xlarge 10.49264, Lambda gpu_8x_h100_sxm5 31.92 USD/h) and the demo's committed/spot rates.
"""

from __future__ import annotations

import csv
import json
import math
from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import call_command

from procurement.models import Recommendation, Workload
from tests.billing.catalog import import_demo_billing, make_catalog
from tests.billing.stored import stored_rows

pytestmark = pytest.mark.django_db
DAYS, HOURS = 184, 4416
OCT_DAYS = 31


@pytest.fixture
def demo(tmp_path):
    path = import_demo_billing(tmp_path, months=6)
    with open(path) as handle:
        rows = list(csv.DictReader(handle))
    dev = [r for r in rows if r["ResourceId"] == "i-0l40sdev00001"]
    return {
        "dev_hours": sum(Decimal(r["ConsumedQuantity"]) for r in dev),
        "dev_hours_october": sum(
            Decimal(r["ConsumedQuantity"]) for r in dev if r["ChargePeriodStart"] >= "2026-10"
        ),
        "rows": rows,
    }


def review(*extra) -> dict:
    out = StringIO()
    call_command(
        "spend_review", "--from", "2026-05-01", "--to", "2026-11-01", "--format", "json", *extra, stdout=out
    )
    return json.loads(out.getvalue())


def spot_overhead() -> Decimal:
    # Young/Daly with the cost engine's defaults: band 10-15% -> p = 0.125 a month, lambda = -ln(1-p)/730 per
    # hour; the interval is capped at 0.25 h; overhead = C/tau + (tau/2 + R) * lambda with C = 1/60 h, R = 0.1 h.
    rate = -math.log(1 - 0.125) / 730
    return Decimal(repr((1 / 60) / 0.25 + (0.25 / 2 + 0.1) * rate))


def test_json_keys_are_exactly_the_contract(demo):
    body = review()
    assert set(body) == {
        "currency",
        "totals",
        "by_month",
        "by_team",
        "by_project",
        "by_provider",
        "by_gpu",
        "by_pricing_category",
        "unused_commitment_cost",
        "idle_gpu_hours",
        "non_gpu_cost",
        "savings",
        "allocation",
        "budgets",
        "anomalies",  # showback, budgets, anomalies (tests/billing/test_finance_surfaces.py)
        "unattributed_commitment_cost",
        "commitments",  # issue 22
        "fx_missing",
        "warnings",  # issue 28: months left out for want of an FX rate
        "undetermined_cost",
        "undetermined",  # issue 28: usage the bill cannot tell GPU from non-GPU
    }
    assert set(body["totals"]) == {
        "billed_cost",
        "effective_cost",
        "list_cost",
        "gpu_hours",
        "effective_cost_per_gpu_hour",
    }
    assert {s["kind"] for s in body["savings"]} <= {"spot", "commitment", "cheaper_gpu", "idle"}
    for saving in body["savings"]:
        assert {"kind", "amount", "hours_affected", "assumptions"} <= set(saving)


def test_totals_by_team_and_category_match_hand_computation(demo):
    body = review()
    dev = demo["dev_hours"]
    train = HOURS * Decimal("33.024")  # committed p5, 24 h a day
    batch = DAYS * 8 * Decimal("55.04")  # on-demand p5, 8 h a day
    serve1 = HOURS * Decimal("13.174585")  # committed p4d
    serve23 = 2 * HOURS * Decimal("21.957642")  # two on-demand p4d
    l40s_dev = dev * Decimal("10.49264")
    l40s_spot = DAYS * 12 * Decimal("0.9154")
    l4 = HOURS * Decimal("0.8048") - 24  # minus the correction (a delta in May)
    lam = DAYS * 12 * Decimal("31.92")
    unused = OCT_DAYS * 6 * Decimal("33.024")
    teams = {t["team"]: Decimal(t["effective_cost"]) for t in body["by_team"]}
    assert teams == {
        "ml-research": round(train + batch + lam + unused, 2),
        "platform": round(serve1 + serve23 + l4, 2),
        "vision": round(l40s_dev + l40s_spot, 2),  # the dev box's team comes from its cost-center tag
    }
    categories = {c["pricing_category"]: Decimal(c["effective_cost"]) for c in body["by_pricing_category"]}
    assert categories == {
        "committed": round(train + serve1 + unused, 2),
        "on_demand": round(batch + serve23 + l40s_dev + l4 + lam, 2),
        "spot": round(l40s_spot, 2),
    }
    total = train + batch + serve1 + serve23 + l40s_dev + l40s_spot + l4 + lam + unused
    assert Decimal(body["totals"]["effective_cost"]) == round(total, 2)
    gpu_hours = (
        HOURS * 8 + DAYS * 8 * 8 + HOURS * 8 + 2 * HOURS * 8 + dev * 4 + DAYS * 12 + HOURS + DAYS * 12 * 8
    )
    assert Decimal(body["totals"]["gpu_hours"]) == gpu_hours
    assert Decimal(body["unused_commitment_cost"]) == round(unused, 2)
    gpus = {g["gpu"]: Decimal(g["gpu_hours"]) for g in body["by_gpu"]}
    assert gpus["l4"] == HOURS and gpus["l40s"] == dev * 4 + DAYS * 12
    # non-GPU: storage 20000 GB x 0.08 per GB-month each day pro rata, plus 5% tax on AWS billed usage;
    # the 50000 upfront purchase has EffectiveCost 0 and adds nothing.
    assert Decimal(body["non_gpu_cost"]) > 0
    assert Decimal(body["non_gpu_cost"]) < Decimal("50000")


def test_each_savings_kind_matches_hand_computation(demo):
    workload = Workload.objects.create(name="llama-finetune", task="training", spec={})
    Recommendation.objects.create(
        workload=workload,
        fingerprint="t",
        results=[
            {
                "provider": "lambda",
                "instance_type": "gpu_8x_h100_sxm5",
                "pricing_model": "on_demand",
                "gpu": "h100-sxm5-80gb",
                "instances": 1,
                "total_cost": "1000.00",
            },
            {
                "provider": "aws",
                "instance_type": "p4d.24xlarge",
                "pricing_model": "on_demand",
                "gpu": "a100-sxm4-40gb",
                "instances": 1,
                "total_cost": "600.00",
            },
        ],
    )
    body = review()
    savings = {s["kind"]: s for s in body["savings"]}
    assert [s["kind"] for s in body["savings"]] == ["spot", "commitment", "cheaper_gpu", "idle"]
    # (1) spot: 1472 interruptible on-demand p5 hours at 55.04 re-priced at the median spot 20.00 x (1 + overhead)
    spot = DAYS * 8 * Decimal("55.04") - DAYS * 8 * Decimal("20.00") * (1 + spot_overhead())
    assert Decimal(savings["spot"]["amount"]) == round(spot, 2)
    assert Decimal(savings["spot"]["hours_affected"]) == DAYS * 8 * 8
    # (2) commitment: two on-demand p4d run all day every day -> floor 2 instances; the bill's own committed
    # p4d rate 13.174585 against 21.957642 on demand, for 2 x 24 x 184 instance-hours
    commitment = 2 * 24 * DAYS * (Decimal("21.957642") - Decimal("13.174585"))
    assert Decimal(savings["commitment"]["amount"]) == round(commitment, 2)
    assert Decimal(savings["commitment"]["hours_affected"]) == 2 * 24 * DAYS * 8
    # (3) cheaper GPU: the Lambda node's workload ranks 600 against 1000 on its own type -> 40% of its cost
    assert Decimal(savings["cheaper_gpu"]["amount"]) == round(
        DAYS * 12 * Decimal("31.92") * Decimal("0.4"), 2
    )
    # (4) idle in October: GPUs 2-3 of the L40S dev box whenever it runs (10.49264 / 4 per GPU-hour) and the
    # L4 box 00:00-06:00 (0.8048 per GPU-hour)
    idle_hours = 2 * demo["dev_hours_october"] + 6 * OCT_DAYS
    idle = 2 * demo["dev_hours_october"] * Decimal("10.49264") / 4 + 6 * OCT_DAYS * Decimal("0.8048")
    assert Decimal(body["idle_gpu_hours"]) == idle_hours
    assert Decimal(savings["idle"]["hours_affected"]) == idle_hours
    assert Decimal(savings["idle"]["amount"]) == round(idle, 2)


def test_team_filter_and_reimport_adds_nothing(demo, tmp_path):
    count = len(stored_rows())
    out = StringIO()
    call_command("import_billing", str(tmp_path / "demo.csv"), "--no-progress", stdout=out)
    assert out.getvalue().strip() == f"inserted 0, unchanged {len(demo['rows'])}, rejected 0"
    assert len(stored_rows()) == count
    body = review("--team", "vision")
    assert [t["team"] for t in body["by_team"]] == ["vision"]
    assert body["unused_commitment_cost"] == "0.00"


def test_without_utilization_idle_is_null(tmp_path):
    make_catalog()
    path = tmp_path / "demo.csv"
    call_command("make_demo_billing", "--start", "2026-05", "--months", "1", "--output", str(path))
    call_command("import_billing", str(path), "--no-progress", stdout=StringIO())
    out = StringIO()
    call_command("spend_review", "--from", "2026-05-01", "--to", "2026-06-01", "--format", "json", stdout=out)
    body = json.loads(out.getvalue())
    assert body["idle_gpu_hours"] is None
    assert "idle" not in {s["kind"] for s in body["savings"]}


def test_report_data_breaks_down_non_gpu_spend(demo):
    import datetime as dt

    from billing.review.report import render_csv
    from billing.review.service import build_report, make_request

    data = build_report(make_request(start=dt.date(2026, 5, 1), end=dt.date(2026, 11, 1)))
    non_gpu = {
        row["charge"]: Decimal(row["effective_cost"])
        for row in next(t for t in data["tables"] if t.key == "non_gpu").rows
    }
    # storage: 20000 GB x 0.08 USD per GB-month, billed per day as 1600 / days-in-month rounded to 6 places
    month_days = [31, 30, 31, 31, 30, 31]
    storage = sum(days * (Decimal(1600) / days).quantize(Decimal("0.000001")) for days in month_days)
    assert non_gpu["Storage"] == round(storage, 2)
    assert non_gpu["purchase"] == Decimal("0.00")  # the 50000 upfront purchase is amortized in usage
    assert non_gpu["tax"] + non_gpu["Storage"] == Decimal(data["review"]["non_gpu_cost"])
    assert "non_gpu" in render_csv(data)
