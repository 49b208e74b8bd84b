"""The spend review's figures, once, as the report model's ``Figure`` objects: the spend review page
draws them (``figure_svg``) and the report kind (page, PDF, XLSX) places the same objects in its
sections, so both say the same titles, units and numbers (issue 25: one set of figures)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from billing.review.commitment_report import short_label
from procurement.reports.model import Figure, Series

CATEGORY_ORDER = ("on_demand", "spot", "committed", "other")


def review_figures(review: dict[str, Any]) -> dict[str, Figure]:
    """Figure id -> figure: spend by month, by team, cost per GPU-hour, commitment utilization and
    coverage, savings waterfall."""
    figures = [
        _spend_by_month(review),
        _spend_by_team(review),
        _cost_per_gpu_hour(review),
        _commitment_utilization(review),
        _commitment_coverage(review),
        _savings_waterfall(review),
    ]
    return {figure.key: figure for figure in figures}


def _spend_by_month(review: dict[str, Any]) -> Figure:
    months = [entry["month"] for entry in review["by_month"]]
    by_category = {
        category: [
            float(m.get("effective_cost_by_pricing_category", {}).get(category, 0))
            for m in review["by_month"]
        ]
        for category in CATEGORY_ORDER
    }
    series = [
        Series(c, list(zip(months, values, strict=True))) for c, values in by_category.items() if any(values)
    ]
    return Figure(
        "spend_by_month",
        "stacked_bar",
        "GPU spend by month, stacked by pricing category",
        "month",
        review["currency"],
        series or [Series("spend", [(month, 0.0) for month in months])],
    )


def _spend_by_team(review: dict[str, Any]) -> Figure:
    points = [(t["team"], float(t["effective_cost"])) for t in review["by_team"]]
    return Figure(
        "spend_by_team",
        "bar",
        "GPU spend by team",
        "team",
        review["currency"],
        [Series("effective cost", points)],
    )


def _cost_per_gpu_hour(review: dict[str, Any]) -> Figure:
    points = [
        (g["gpu"], float(g["effective_cost_per_gpu_hour"]))
        for g in review["by_gpu"]
        if g.get("effective_cost_per_gpu_hour")
    ]
    return Figure(
        "cost_per_gpu_hour",
        "bar",
        "Effective cost per GPU-hour by GPU",
        "GPU",
        f"{review['currency']}/GPU-hour",
        [Series("per GPU-hour", points)],
    )


def _commitment_utilization(review: dict[str, Any]) -> Figure:
    rows = review["commitments"]["by_commitment"]
    return Figure(
        "commitment_utilization",
        "stacked_bar",
        "Commitment utilization: used and unused cost by commitment",
        "commitment",
        review["currency"],
        [
            Series(part, [(short_label(c["commitment_id"]), float(c[f"{part}_cost"])) for c in rows])
            for part in ("used", "unused")
        ],
    )


def _commitment_coverage(review: dict[str, Any]) -> Figure:
    months = review["commitments"]["by_month"]
    return Figure(
        "commitment_coverage",
        "stacked_bar",
        "GPU coverage by month (GPU-hours under a commitment)",
        "month",
        "GPU-hours",
        [
            Series("under commitment", [(m["month"], float(m["committed_gpu_hours"])) for m in months]),
            Series(
                "not committed",
                [(m["month"], float(m["gpu_hours"]) - float(m["committed_gpu_hours"])) for m in months],
            ),
        ],
    )


def _savings_waterfall(review: dict[str, Any]) -> Figure:
    """Points: the start total, each saving (taken off in the order applied), the end total."""
    total = Decimal(review["totals"]["effective_cost"])
    steps = [(s["kind"], float(s["amount"])) for s in review["savings"]]
    after = total - sum((Decimal(s["amount"]) for s in review["savings"]), Decimal(0))
    return Figure(
        "savings_waterfall",
        "waterfall",
        "Savings waterfall",
        "step",
        review["currency"],
        [Series("spend", [("current spend", float(total)), *steps, ("after savings", float(after))])],
    )
