"""A plan read without the resources (the rows the plan does not tell apart summed in DuckDB:
billing/storage/demand_sql.SERIES, issue 27 item 8 and issue 28 item 1) is the same plan, to the last digit
of its JSON, as the one read line by line: on the demo bills (six fleets, reservations in force with unused
hours, spot and interruptible work, May-October 2026), without their utilization samples and with them
(then the sampled resources' lines are summed per resource, as the busy series reads them)."""

from __future__ import annotations

import datetime as dt

import pytest

from billing.models import GpuUtilization
from planning.history import PlanScope, plan_usage_rows
from planning.services import capacity_plans
from planning.services.plan_requests import plan_request_parse
from tests.planning.capacity_plans.conftest import PERIOD


def _plan(monkeypatch, *, by_line: bool) -> dict:
    if by_line:  # the reference: every bill line read into Python (usage_frame.usage_rows_from_frames)
        monkeypatch.setattr(
            capacity_plans,
            "plan_rows",
            lambda scope, currency: plan_usage_rows(scope, currency=currency, by_resource=True),
        )
    else:
        monkeypatch.undo()
    request = plan_request_parse({**PERIOD, "horizon_months": 36, "growth": 0.02, "trials": 200, "seed": 20})
    result = capacity_plans.capacity_plan_compute(request).result
    return {key: value for key, value in result.items() if key != "generated_at"}


def test_it_plans_the_same_from_collapsed_rows(demo_bills, monkeypatch):
    GpuUtilization.objects.all().delete()
    by_row = _plan(monkeypatch, by_line=True)
    collapsed = _plan(monkeypatch, by_line=False)
    assert collapsed == by_row
    assert by_row["total_cost"] and len(by_row["fleets"]) >= 2


def test_it_plans_the_same_from_rows_summed_per_sampled_resource(demo_bills, monkeypatch):
    # the demo's utilization samples kept: the busy series is read from the sampled resources' rows
    assert GpuUtilization.objects.exists()
    by_row = _plan(monkeypatch, by_line=True)
    summed = _plan(monkeypatch, by_line=False)
    # the share of billed GPU-hours the samples cover is a float quotient of float sums (demand.py _busy:
    # GPUs an hour = GPU-hours / the period's hours, a line at a time or a summed row at a time): the two
    # reads add the same hours in another order, 0.03871810591463771 by line against 0.0387181059146377
    # summed (one unit in the last place); every other figure of the plan is equal to the last digit
    coverage = by_row["demand"].pop("utilization_coverage")
    assert summed["demand"].pop("utilization_coverage") == pytest.approx(coverage, rel=1e-12, abs=0)
    assert summed == by_row
    assert by_row["total_cost"] and len(by_row["fleets"]) >= 2
    assert 0 < coverage < 1  # some of the demo's resources have samples: read by resource


def test_it_sums_rows_that_differ_only_by_resource(demo_bills):
    scope = PlanScope(start=dt.date(2026, 5, 1), end=dt.date(2026, 11, 1))
    rows = plan_usage_rows(scope)
    summed = plan_usage_rows(scope, by_resource=False)
    assert len(summed) < len(rows)
    assert set(summed.resource_id) == {""} and set(summed.team) == set(rows.team)
    assert summed.gpu_hours.sum() == rows.gpu_hours.sum()
    assert summed.effective_cost_micros.sum() == rows.effective_cost_micros.sum()
    assert summed.covered_start_hour.tolist() == rows.covered_start_hour.tolist()
