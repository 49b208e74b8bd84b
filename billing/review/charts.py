"""The spend review's charts, drawn with gpuledger/charts.py (server-side SVG, every label escaped)."""

from __future__ import annotations

from gpuledger.charts import stacked_bar_chart, waterfall_chart

CATEGORY_ORDER = ("on_demand", "spot", "committed", "other")


def spend_by_month_chart(review: dict) -> str:
    months = [entry["month"] for entry in review["by_month"]]
    series = {
        category: [
            float(e.get("effective_cost_by_pricing_category", {}).get(category, 0))
            for e in review["by_month"]
        ]
        for category in CATEGORY_ORDER
    }
    series = {name: values for name, values in series.items() if any(values)}
    return stacked_bar_chart(
        months,
        series or {"spend": [0.0] * len(months)},
        unit=review["currency"],
        title="GPU spend by month, stacked by pricing category",
    )


def spend_by_team_chart(review: dict) -> str:
    teams = [entry["team"] for entry in review["by_team"]]
    return stacked_bar_chart(
        teams,
        {"effective cost": [float(e["effective_cost"]) for e in review["by_team"]]},
        unit=review["currency"],
        title="GPU spend by team",
    )


def cost_per_gpu_hour_chart(review: dict) -> str:
    rows = [e for e in review["by_gpu"] if e.get("effective_cost_per_gpu_hour")]
    return stacked_bar_chart(
        [e["gpu"] for e in rows],
        {"per GPU-hour": [float(e["effective_cost_per_gpu_hour"]) for e in rows]},
        unit=f"{review['currency']}/GPU-h",
        title="Effective cost per GPU-hour by GPU",
    )


def savings_waterfall_chart(review: dict) -> str:
    """From today's GPU spend down through each saving to what the same usage could cost."""
    total = float(review["totals"]["effective_cost"])
    steps = [(s["kind"], float(s["amount"])) for s in review["savings"]]
    after = total - sum(amount for _, amount in steps)
    bars = [("current spend", 0.0, total), *_falling(total, steps), ("after savings", 0.0, after)]
    return waterfall_chart(bars, title=f"Savings waterfall ({review['currency']})")


def _falling(total: float, steps: list[tuple[str, float]]) -> list[tuple[str, float, float]]:
    bars, level = [], total
    for kind, amount in steps:
        level -= amount
        bars.append((kind, level, amount))
    return bars


def review_charts(review: dict) -> dict[str, str]:
    return {
        "spend_by_month": spend_by_month_chart(review),
        "spend_by_team": spend_by_team_chart(review),
        "cost_per_gpu_hour": cost_per_gpu_hour_chart(review),
        "savings_waterfall": savings_waterfall_chart(review),
    }
