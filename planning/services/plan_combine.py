"""The headline of a plan of several fleets: the sum of the fleets' plans (docs/capacity-plan.md,
"Every GPU model in scope").

Every money figure is the sum of the fleets' figures as they are shown (rounded to the cent), so the
headline equals the sum of the lines under it. P50 and P90 add up too: every fleet is planned with the
same seeded growth trials, and each fleet's cost rises with growth, so the fleets' costs move together
(comonotone) and a percentile of the sum is the sum of the percentiles. The sensitivity rows add up the
same way (each driver moves every fleet at once); the break-even month is read off the summed months.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

MONEY_KEYS = (
    "total_cost",
    "npv",
    "p50_total_cost",
    "p90_total_cost",
    "p50_npv",
    "p90_npv",
    "status_quo_cost",
    "status_quo_npv",
    "savings_vs_status_quo",
)


def _sum(values) -> str | None:
    present = [Decimal(value) for value in values if value not in (None, "")]
    return str(sum(present, Decimal(0))) if present else None


def _sum_lists(lists: list[list]) -> list[str]:
    """Element-wise sums of lists of money strings; a shorter list holds its last value (cumulative) or
    adds nothing (per period): the caller says which by passing cumulative lists padded."""
    length = max((len(items) for items in lists), default=0)
    return [
        str(
            sum(
                (Decimal(items[i]) for items in lists if i < len(items) and items[i] not in (None, "")),
                Decimal(0),
            )
        )
        for i in range(length)
    ]


def combine(plans: list[dict[str, Any]], *, horizon: int) -> dict[str, Any]:
    """One headline of the fleets' reports (each lay_plan's report with its layers named by fleet)."""
    head: dict[str, Any] = {key: _sum(plan.get(key) for plan in plans) for key in MONEY_KEYS}
    head["layers"] = [layer for plan in plans for layer in plan["layers"]]
    head["cost_by_year"] = _sum_lists([plan["cost_by_year"] for plan in plans])
    head["status_quo_by_year"] = _sum_lists([plan["status_quo_by_year"] for plan in plans])
    monthly = _sum_lists([plan["monthly_cost"] for plan in plans])
    quo = _sum_lists([plan["status_quo_monthly_cost"] for plan in plans])
    head["monthly"] = _cumulative(monthly, quo)
    head["break_even_month"] = _break_even(monthly, quo, horizon)
    head["owned_servers"] = sum(int(plan.get("owned_servers") or 0) for plan in plans)
    head["gpus_per_server"] = max((int(plan.get("gpus_per_server") or 0) for plan in plans), default=8)
    head["levels"] = {
        "owned_servers": head["owned_servers"],
        "committed_3y_units": sum(plan["levels"]["committed_3y_units"] for plan in plans),
        "committed_1y_units_by_year": [
            int(v)
            for v in _sum_lists(
                [[str(n) for n in plan["levels"]["committed_1y_units_by_year"]] for plan in plans]
            )
        ],
    }
    head["demand_gpu_hours"] = _sum(plan["demand_gpu_hours"] for plan in plans)
    head["demand_gpu_hours_by_year"] = _sum_lists([plan["demand_gpu_hours_by_year"] for plan in plans])
    head["screening"] = [line | {"fleet": plan["fleet"]} for plan in plans for line in plan["screening"]]
    head["sensitivity"] = _sensitivity(plans)
    head |= _finance(plans)
    quo_cost, savings = head["status_quo_cost"], head["savings_vs_status_quo"]
    head["savings_share"] = (
        str((Decimal(savings) / Decimal(quo_cost)).quantize(Decimal("0.000001")))
        if quo_cost and savings is not None and Decimal(quo_cost)
        else None
    )
    return head


def _finance(plans: list[dict]) -> dict[str, Any]:
    """Issue 27 item 6 over the fleets: each commitment layer's payment options and each owned fleet's
    tranches, named by fleet; the after-tax figures summed when every fleet has them."""
    after = [plan.get("after_tax") or {} for plan in plans]
    summed = None
    if after and all(section.get("tax_rate") is not None for section in after):
        summed = {
            "tax_rate": after[0]["tax_rate"] if len({s["tax_rate"] for s in after}) == 1 else "per fleet",
            "cost_by_year": _sum_lists([section["cost_by_year"] for section in after]),
            "total_cost": _sum(section["total_cost"] for section in after),
            "npv": _sum(section["npv"] for section in after),
            "depreciation_tax_shield": _sum(section["depreciation_tax_shield"] for section in after),
            "prepayment_rule": after[0].get("prepayment_rule"),
        }
    else:
        summed = {
            "tax_rate": None,
            "note": "give study.tax_rate (and buy.depreciation_method) for the after-tax NPV",
        }
    return {
        "payment_options": [
            section | {"fleet": plan["fleet"], "kind": kind}
            for plan in plans
            for kind, section in (plan.get("payment_options") or {}).items()
        ],
        "owned_tranches": [
            plan["owned_tranches"] | {"fleet": plan["fleet"]} for plan in plans if plan.get("owned_tranches")
        ],
        "after_tax": summed,
    }


def _cumulative(monthly: list[str], quo: list[str]) -> dict[str, list]:
    plan_running, quo_running, plan_cum, quo_cum = Decimal(0), Decimal(0), [], []
    for amount in monthly:
        plan_running += Decimal(amount)
        plan_cum.append(str(plan_running))
    for amount in quo:
        quo_running += Decimal(amount)
        quo_cum.append(str(quo_running))
    return {"month": list(range(len(monthly))), "plan_cumulative": plan_cum, "status_quo_cumulative": quo_cum}


def _break_even(monthly: list[str], quo: list[str], horizon: int) -> int | None:
    """First month whose cumulative plan cost is below the status quo's (the engine's rule)."""
    plan_running = quo_running = Decimal(0)
    for month in range(min(horizon + 1, len(monthly), len(quo))):
        plan_running += Decimal(monthly[month])
        quo_running += Decimal(quo[month])
        if plan_running < quo_running - Decimal("0.000001"):
            return month
    return None


def _sensitivity(plans: list[dict]) -> dict[str, Any]:
    """Each driver's low and high NPV summed over the fleets; a fleet the driver does not move (no owned
    servers for purchase_price) adds its base NPV to both."""
    reports = [plan.get("sensitivity") or {} for plan in plans]
    drivers = list(dict.fromkeys(row["driver"] for report in reports for row in report.get("rows", [])))
    notes = {row["driver"]: row.get("note", "") for report in reports for row in report.get("rows", [])}
    base = sum((Decimal(report.get("base") or "0") for report in reports), Decimal(0))
    rows = []
    for driver in drivers:
        low = high = Decimal(0)
        for report in reports:
            row = next((row for row in report.get("rows", []) if row["driver"] == driver), None)
            own_base = Decimal(report.get("base") or "0")
            low += Decimal(row["low"]) if row else own_base
            high += Decimal(row["high"]) if row else own_base
        rows.append(
            {
                "driver": driver,
                "low": str(low),
                "high": str(high),
                "swing": str(abs(high - low)),
                "note": notes[driver],
            }
        )
    rows.sort(key=lambda row: -Decimal(row["swing"]))
    spread = next((report.get("spread") for report in reports if report.get("spread")), None)
    return {"metric": "npv", "spread": spread, "base": str(base), "rows": rows}
