"""The capacity plan's charts (server-side SVG, gpuledger.charts): the load-duration curve with the
layers that serve it shaded, the cost by year against the status quo, and the sensitivity tornado."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from gpuledger.charts import (
    PALETTE,
    WIDTH,
    axes,
    legend,
    nice_max,
    stacked_bar_chart,
    svg_document,
    tornado_chart,
)

# Base load at the bottom, in the order the plan engine stacks the options (planning/engine/plan.py:
# commitments, then owned servers, lowest running cost first; then spot and on-demand above them).
LAYER_ORDER = ("in_force", "committed_3y", "renewal", "committed_1y", "owned", "spot", "on_demand")
LAYER_LABELS = {
    "in_force": "commitments in force",
    "renewal": "renewal of commitments ending",
    "owned": "owned servers",
    "committed_3y": "3-year commitment",
    "committed_1y": "1-year commitment",
    "on_demand": "on-demand",
    "spot": "spot",
}
MAX_CURVE_POINTS = 360  # the SVG's resolution: a year of hours drawn at ~24-hour steps


def stacked_layers(layers: Sequence[dict]) -> list[tuple[str, float, float]]:
    """(label, lower GPUs, upper GPUs) of each layer, base load first: the bands the chart shades."""
    ordered = sorted(
        layers, key=lambda layer: LAYER_ORDER.index(layer["kind"]) if layer["kind"] in LAYER_ORDER else 99
    )
    bands, level = [], 0.0
    for layer in ordered:
        gpus = float(layer.get("gpus") or 0)
        if gpus <= 0:
            continue
        bands.append((LAYER_LABELS.get(layer["kind"], layer["kind"]), level, level + gpus))
        level += gpus
    return bands


def _thin(curve: Sequence[float]) -> list[tuple[float, float]]:
    step = max(1, -(-len(curve) // MAX_CURVE_POINTS))  # ceil: at most MAX_CURVE_POINTS + 1 points
    points = [(float(hour), float(curve[hour])) for hour in range(0, len(curve), step)]
    if curve and points[-1][0] != len(curve) - 1:
        points.append((float(len(curve) - 1), float(curve[-1])))
    return points


def load_duration_svg(curve: Sequence[float], layers: Sequence[dict], *, title: str = "") -> str:
    """Hours sorted by demand (GPUs in use), each layer a shaded band under the curve: the GPUs the
    layer supplies, for the hours the curve reaches into it."""
    left, right, top, bottom, height = 80, 20, 30, 40, 320
    points = _thin(curve)
    if not points:
        return svg_document(
            WIDTH, 60, ['<text x="10" y="30">No demand</text>'], title or "load-duration curve"
        )
    bands = stacked_layers(layers)
    y_max = nice_max(max([y for _, y in points] + [upper for _, _, upper in bands]))
    x_max = max(points[-1][0], 1.0)
    plot_w, plot_h = WIDTH - left - right, height - top - bottom

    def sx(x: float) -> float:
        return left + x / x_max * plot_w

    def sy(y: float) -> float:
        return top + plot_h - y / y_max * plot_h

    body = legend([label for label, _, _ in bands] + ["demand"], left, 16)
    body += axes(left, top, plot_w, plot_h, y_max, "hours of the period, sorted by demand", "GPUs in use")
    for index, (label, lower, upper) in enumerate(bands):
        inside = [(x, min(max(y, lower), upper)) for x, y in points]
        outline = [f"{sx(x):.1f},{sy(y):.1f}" for x, y in inside]
        outline += [f"{sx(x):.1f},{sy(lower):.1f}" for x, _ in reversed(inside)]
        body.append(
            f'<polygon points="{" ".join(outline)}" fill="{PALETTE[index % len(PALETTE)]}" fill-opacity="0.55">'
            f"<title>{escape(label)}: {lower:g} to {upper:g} GPUs</title></polygon>"
        )
    line = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in points)
    color = PALETTE[len(bands) % len(PALETTE)]
    body.append(f'<polyline fill="none" stroke="{color}" stroke-width="2" points="{line}"/>')
    body.append(
        f'<text x="{left + plot_w}" y="{top + plot_h + 14}" text-anchor="end">{x_max + 1:,.0f} h</text>'
    )
    return svg_document(WIDTH, height, body, title or "Load-duration curve with the layers that serve it")


def cost_by_year_svg(layers: Sequence[dict], status_quo_by_year: Sequence[float], *, currency: str) -> str:
    """One bar per year, the layers' costs stacked, the status quo's cost of the same year as a tick."""
    years = max([len(layer.get("cost_by_year") or []) for layer in layers] + [len(status_quo_by_year)])
    categories = [f"year {year + 1}" for year in range(years)]
    series = {}
    for layer in sorted(
        layers, key=lambda layer: LAYER_ORDER.index(layer["kind"]) if layer["kind"] in LAYER_ORDER else 99
    ):
        costs = [float(value) for value in layer.get("cost_by_year") or []]
        label = LAYER_LABELS.get(layer["kind"], layer["kind"])
        series[label] = [
            a + b
            for a, b in zip(
                series.get(label, [0.0] * years), costs + [0.0] * (years - len(costs)), strict=True
            )
        ]
    quo = [float(value) for value in status_quo_by_year] + [0.0] * (years - len(status_quo_by_year))
    return stacked_bar_chart(
        categories,
        series,
        unit=currency,
        title="Cost by year: the plan against the status quo",
        reference_lines={"status quo": quo},
    )


def sensitivity_svg(rows: Sequence[dict], *, base: float, currency: str) -> str:
    """Each driver moved on its own: the change in the plan's total cost at its low and high value."""
    bars = [
        (row["driver"].replace("_", " "), float(row["low"]) - base, float(row["high"]) - base) for row in rows
    ]
    return tornado_chart(
        bars,
        base_label=f"total cost {base:,.0f}",
        unit=currency,
        title="Sensitivity of the plan's total cost",
    )
