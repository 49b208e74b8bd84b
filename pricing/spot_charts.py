"""The spot history chart of the offer page: price over time per zone, on-demand as a reference."""

from __future__ import annotations

from gpuledger.charts import line_chart

SECONDS_PER_DAY = 86400.0


def spot_history_chart(history: dict) -> str:
    """An SVG line chart; x is days since the window opened, one line per zone."""
    start = history["window_start"]
    series = {
        zone["zone"] or "(region)": [
            ((at - start).total_seconds() / SECONDS_PER_DAY if at > start else 0.0, float(price))
            for at, price in zone["points"]
        ]
        for zone in history["zones"]
    }
    reference = {}
    if history["on_demand_per_hour"] is not None:
        reference[f"on-demand {float(history['on_demand_per_hour']):.4f}"] = float(
            history["on_demand_per_hour"]
        )
    currency = history["currency"] or ""
    return line_chart(
        series,
        x_label=f"days since {start:%Y-%m-%d}",
        y_label=f"{currency}/h",
        title=f"{history['instance_type']} spot price per zone",
        reference_lines=reference,
    )
