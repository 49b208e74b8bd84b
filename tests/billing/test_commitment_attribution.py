"""Commitments attributed honestly (issue 22, section 2), on the FOCUS 1.2 savings-plan example.

The fixture tests/billing/fixtures/focus12_ec2_instance_savings_plan_50pct.csv is the project's own
reading of the FOCUS 1.2 specification's appendix scenario "AWS Savings Plan - All Upfront - 50%
Utilization" (FinOps Open Cost and Usage Specification (FOCUS), CC-BY-4.0; specification/appendix/
commitment_discounts/aws_savings_plan_all_upfront_50pct.md): an EC2 Instance Savings Plan bought
2026-02-01 for one year, all upfront (one Purchase row, BilledCost 693,003.60, EffectiveCost 0), 12
hours Used at 79.11 effective (list 118.67), 12 hours Unused at 79.11, and 3 on-demand hours at 3.84:
28 rows, February 2026, no GPU instance. Hand computation:
  used = unused = 12 x 79.11 = 949.32; on-demand = 3 x 3.84 = 11.52; all EffectiveCost = 1,910.16.
Nothing ties the plan to a GPU: GPU spend 0, unattributed_commitment_cost 949.32, non_gpu_cost =
949.32 + 11.52 = 960.84; utilization = 949.32 / 1,898.64 = 50.0%.

The variant (focus12_savings_plan_50pct_partly_gpu.csv) is the same plan as a Compute Savings Plan
whose first 3 used hours ran p5.48xlarge (8 H100 GPUs each), plus one on-demand p5.48xlarge hour at
55.04 (AWS us-east-1 on-demand, the demo's rate). Hand computation:
  used on GPU rows = 3 x 79.11 = 237.33 of 949.32 used: 25%;
  unused attributed to GPU = 949.32 x 0.25 = 237.33 (each unused hour 79.11 x 0.25 = 19.7775);
  unattributed = 949.32 - 237.33 = 711.99;
  GPU effective = 237.33 + 237.33 + 55.04 = 529.70 over 3 x 8 + 8 = 32 GPU-hours = 16.553125 per GPU-hour;
  non-GPU = 9 x 79.11 + 11.52 = 723.51; 529.70 + 723.51 + 711.99 = 1,965.20 = all EffectiveCost.
  coverage = 24 committed GPU-hours / 32 = 75.0%.
"""

from __future__ import annotations

import datetime as dt
import json
from io import StringIO
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from django.core.management import call_command
from hypothesis import given, settings
from hypothesis import strategies as st

from billing.imports.importer import import_file
from billing.review.commitment_attribution import attributed
from billing.review.engine import ReviewRequest, spend_review
from tests.billing.catalog import make_catalog

pytestmark = pytest.mark.django_db
FIXTURES = Path(__file__).parent / "fixtures"
PLAN = "arn:aws:savingsplans::123456789012:savingsplan/sp-0fixture50pct"


def review(start="2026-02-01", end="2026-03-01") -> dict:
    out = StringIO()
    call_command("spend_review", "--from", start, "--to", end, "--format", "json", stdout=out)
    return json.loads(out.getvalue())


def test_the_spec_example_counts_no_unused_commitment_as_gpu_spend():
    make_catalog()
    result = import_file(FIXTURES / "focus12_ec2_instance_savings_plan_50pct.csv")
    assert (result.inserted, result.rejected) == (28, 0)
    body = review()
    assert body["totals"]["effective_cost"] == "0.00"  # was 949.32 before issue 22
    assert body["totals"]["gpu_hours"] == "0.00"
    assert body["unused_commitment_cost"] == "0.00"
    assert body["unattributed_commitment_cost"] == "949.32"
    assert body["non_gpu_cost"] == "960.84"
    plan = body["commitments"]["by_commitment"]
    assert [(p["commitment_id"], p["used_cost"], p["unused_cost"], p["utilization_pct"]) for p in plan] == [
        (PLAN, "949.32", "949.32", "50.0")
    ]
    assert plan[0]["attribution"] == "in proportion to its used cost on GPU rows"
    assert plan[0]["unattributed_cost"] == "949.32" and plan[0]["gpu_attributed_unused_cost"] == "0.00"
    # the one-time purchase's ChargePeriodEnd is the plan's end: 2027-02-01, not within 90 days of 2026-03-01
    assert plan[0]["end"] == "2027-02-01T00:00:00+00:00"
    assert body["commitments"]["expiring"]["commitments"] == []
    assert body["commitments"]["totals"]["coverage_pct"] is None  # no GPU-hours at all


def test_a_plan_used_partly_by_gpu_rows_is_gpu_spend_in_that_proportion():
    make_catalog()
    assert import_file(FIXTURES / "focus12_savings_plan_50pct_partly_gpu.csv").inserted == 29
    body = review()
    assert body["totals"]["effective_cost"] == "529.70"
    assert body["totals"]["gpu_hours"] == "32.00"
    assert body["totals"]["effective_cost_per_gpu_hour"] == "16.553125"
    assert body["unused_commitment_cost"] == "237.33"
    assert body["unattributed_commitment_cost"] == "711.99"
    assert body["non_gpu_cost"] == "723.51"
    totals = body["commitments"]["totals"]
    assert (totals["utilization_pct"], totals["coverage_pct"]) == ("50.0", "75.0")
    assert (totals["gpu_hours"], totals["committed_gpu_hours"]) == ("32.00", "24.00")
    teams = {t["team"]: t for t in body["commitments"]["by_team"]}
    # ml: 3 used hours (237.33) and the on-demand p5 hour; 24 of its 32 GPU-hours committed
    assert (teams["ml"]["used_cost"], teams["ml"]["coverage_pct"]) == ("237.33", "75.0")
    # the unused rows carry no team tag: their 949.32 is the untagged commitment's waste
    assert (teams["(untagged)"]["unused_cost"], teams["(untagged)"]["utilization_pct"]) == ("949.32", "0.0")
    assert body["commitments"]["by_month"][0]["month"] == "2026-02"
    (plan,) = body["commitments"]["by_commitment"]
    assert (plan["used_on_gpu_cost"], plan["gpu_attributed_unused_cost"]) == ("237.33", "237.33")
    assert plan["coverage_pct"] == "75.0"


def test_expiring_commitments_are_those_ending_within_90_days_of_the_review_end():
    make_catalog()
    import_file(FIXTURES / "focus12_ec2_instance_savings_plan_50pct.csv")
    expiring = review(end="2026-12-01")["commitments"]["expiring"]
    # 2026-12-01 to 2027-02-01: 31 + 31 = 62 days
    assert [(c["commitment_id"], c["days_left"]) for c in expiring["commitments"]] == [(PLAN, 62)]
    assert (expiring["as_of"], expiring["within_days"], expiring["end_unknown"]) == ("2026-12-01", 90, [])


def _rows(*specs) -> pd.DataFrame:
    """Engine rows: (status, commitment id, gpu, instance type, effective micros, gpu-hours micros, scoped)."""
    start = pd.Timestamp("2026-02-01", tz="UTC")
    records = [
        {
            "charge_period_start": start,
            "charge_period_end": start + pd.Timedelta(hours=1),
            "charge_category": "usage",
            "commitment_status": status,
            "commitment_discount_id": cid,
            "gpu": gpu,
            "instance_type": itype,
            "billed_micros": 0,
            "effective_micros": eff,
            "list_micros": 0,
            "gpu_hours_micros": hours,
            "commitment_gpu_scope": scoped,
        }
        for status, cid, gpu, itype, eff, hours, scoped in specs
    ]
    return pd.DataFrame(records)


def test_scope_rules_row_by_row():
    """Rule 1 (GPU-scoped: a GPU instance type, or a family flagged GPU on any of the plan's rows),
    rule 2 (a non-GPU instance type) and rule 3 (in proportion, thirds rounded to the micro-unit)."""
    rows = _rows(
        ("unused", "ri-gpu", "h100", "p5.48xlarge", 5_000_000, 0, False),
        ("unused", "ri-cpu", "", "m7i.large", 7_000_000, 0, False),
        ("used", "sp-p5", "h100", "p5.48xlarge", 1_000_000, 8_000_000, True),
        ("unused", "sp-p5", "", "", 3_000_000, 0, False),
        ("used", "sp-x", "h100", "p5.48xlarge", 1_000_000, 8_000_000, False),
        ("used", "sp-x", "", "", 2_000_000, 0, False),
        ("unused", "sp-x", "", "", 1_000_000, 0, False),
        ("unused", "", "", "", 4_000_000, 0, False),
    )
    out = attributed(rows, pd.Series([0] * len(rows)).to_numpy())
    flags = list(
        zip(
            out["commitment_discount_id"],
            out["effective_micros"],
            out["commitment_to_gpu"],
            out["commitment_unattributed"],
            strict=True,
        )
    )
    assert flags == [
        ("ri-gpu", 5_000_000, True, False),
        ("ri-cpu", 7_000_000, False, False),
        ("sp-p5", 1_000_000, False, False),
        ("sp-p5", 3_000_000, True, False),
        ("sp-x", 1_000_000, False, False),
        ("sp-x", 2_000_000, False, False),
        ("sp-x", 333_333, True, False),  # 1.00 x 1/3, to the micro-unit
        ("", 4_000_000, False, True),  # no id: nothing to tie it to
        ("sp-x", 666_667, False, True),  # the rest: the two parts add up to the row
    ]


def test_the_split_keeps_every_total():
    """However a commitment is split, GPU + non-GPU + unattributed = all effective cost (the
    variant's hand sum, 1,965.20, from the engine directly)."""
    make_catalog()
    import_file(FIXTURES / "focus12_savings_plan_50pct_partly_gpu.csv")
    from billing.review import selectors

    request = ReviewRequest(start=dt.date(2026, 2, 1), end=dt.date(2026, 3, 1))
    body = spend_review(selectors.spend_frame(request), request)
    parts = [body["totals"]["effective_cost"], body["non_gpu_cost"], body["unattributed_commitment_cost"]]
    assert sum(map(float, parts)) == pytest.approx(1965.20, abs=0.001)


row = st.tuples(
    st.sampled_from(["used", "unused", ""]),
    st.sampled_from(["sp-a", "sp-b", ""]),
    st.sampled_from(["h100", ""]),
    st.sampled_from(["p5.48xlarge", ""]),
    st.integers(-5_000_000, 90_000_000),
    st.integers(0, 8_000_000),
    st.booleans(),
)


@settings(max_examples=80, deadline=None)
@given(st.lists(row, min_size=1, max_size=30), st.lists(st.integers(0, 2), min_size=30, max_size=30))
def test_attribution_moves_no_money(specs, periods):
    """On any rows: no money appears or goes (the effective cost adds up as before the split), only
    unused rows are flagged, no row is both GPU and unattributed, and the rows added are unattributed
    remainders."""
    rows = _rows(*specs)
    codes = np.array(periods[: len(rows)])
    out = attributed(rows, codes)
    assert out["effective_micros"].sum() == rows["effective_micros"].sum()
    assert not (out["commitment_to_gpu"] & out["commitment_unattributed"]).any()
    flagged = out["commitment_to_gpu"] | out["commitment_unattributed"]
    assert (out.loc[flagged, "commitment_status"] == "unused").all()
    # a split row's two parts: the extra rows are unattributed remainders of rows kept in place
    extra = out.iloc[len(rows) :]
    assert extra["commitment_unattributed"].all() and (extra["commitment_status"] == "unused").all()
