"""The spend review's charts, drawn with gpuledger/charts.py (server-side SVG, every label escaped)."""

from __future__ import annotations

from html import escape

from gpuledger.charts import PALETTE, WIDTH, _nice_max, _svg, stacked_bar_chart

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
    left, top, bar_w, gap, plot_h = 60, 20, 90, 30, 220
    scale = plot_h / _nice_max(total)
    body = []
    for index, (label, base, height) in enumerate(bars):
        x = left + index * (bar_w + gap)
        y = top + plot_h - (base + height) * scale
        color = PALETTE[2] if 0 < index < len(bars) - 1 else PALETTE[0]
        body.append(
            f'<rect x="{x}" y="{y:.1f}" width="{bar_w}" height="{max(height * scale, 0.5):.1f}" fill="{color}"/>'
        )
        body.append(
            f'<text x="{x + bar_w / 2}" y="{top + plot_h + 16}" text-anchor="middle">{escape(label)}</text>'
        )
        body.append(f'<text x="{x + bar_w / 2}" y="{y - 4:.1f}" text-anchor="middle">{height:,.0f}</text>')
    width = max(WIDTH, left + len(bars) * (bar_w + gap))
    return _svg(width, top + plot_h + 30, body, f"Savings waterfall ({review['currency']})")


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
