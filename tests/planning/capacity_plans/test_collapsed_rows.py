"""A plan read without the resources (the rows the plan does not tell apart summed: usage_frame.collapsed,
issue 27 item 8) is the same plan, to the last digit of its JSON, as the one read row by row: on the demo
bills (six fleets, reservations in force with unused hours, spot and interruptible work, May-October
2026) with their utilization samples removed, since only a plan without samples reads collapsed."""

from __future__ import annotations

import datetime as dt

from billing.models import GpuUtilization
from planning.history import PlanScope, plan_usage_rows
from planning.services import capacity_plans
from planning.services.plan_requests import plan_request_parse
from tests.planning.capacity_plans.conftest import PERIOD


def _plan(monkeypatch, *, by_resource: bool) -> dict:
    monkeypatch.setattr(capacity_plans, "utilization_stored", lambda scope: by_resource)
    request = plan_request_parse({**PERIOD, "horizon_months": 36, "growth": 0.02, "trials": 200, "seed": 20})
    result = capacity_plans.capacity_plan_compute(request).result
    return {key: value for key, value in result.items() if key != "generated_at"}


def test_it_plans_the_same_from_collapsed_rows(demo_bills, monkeypatch):
    GpuUtilization.objects.all().delete()
    by_row = _plan(monkeypatch, by_resource=True)
    collapsed = _plan(monkeypatch, by_resource=False)
    assert collapsed == by_row
    assert by_row["total_cost"] and len(by_row["fleets"]) >= 2


def test_it_sums_rows_that_differ_only_by_resource(demo_bills):
    scope = PlanScope(start=dt.date(2026, 5, 1), end=dt.date(2026, 11, 1))
    rows = plan_usage_rows(scope)
    summed = plan_usage_rows(scope, by_resource=False)
    assert len(summed) < len(rows)
    assert set(summed.resource_id) == {""} and set(summed.team) == set(rows.team)
    assert summed.gpu_hours.sum() == rows.gpu_hours.sum()
    assert summed.effective_cost_micros.sum() == rows.effective_cost_micros.sum()
    assert summed.covered_start_hour.tolist() == rows.covered_start_hour.tolist()
