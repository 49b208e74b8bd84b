"""A report figure as an inline SVG chart (gpuledger.charts), for the page and the PDF."""

from __future__ import annotations

from gpuledger.charts import line_chart, stacked_bar_chart, tornado_chart, waterfall_chart
from procurement.reports.model import Figure, waterfall_bars


def figure_svg(figure: Figure, currency: str) -> str:
    if figure.kind == "line":
        series = {s.name: [(float(x), float(y)) for x, y in s.points] for s in figure.series}
        xs = sorted({x for points in series.values() for x, _ in points})
        step = max(1, len(xs) // 6)
        ticks = {x: f"{x:g}" for x in xs[::step]} | ({xs[-1]: f"{xs[-1]:g}"} if xs else {})
        return line_chart(
            series, x_label=figure.x_label, y_label=figure.y_label, title=figure.title, x_tick_labels=ticks
        )
    if figure.kind == "waterfall":
        return waterfall_chart(waterfall_bars(figure), title=f"{figure.title} ({figure.y_label})")
    if figure.kind == "tornado":
        base = figure.base or 0.0
        low, high = ({str(label): float(value) for label, value in s.points} for s in figure.series[:2])
        rows = [(label, low[label] - base, high[label] - base) for label in low]
        return tornado_chart(rows, base_label=f"base {base:,.2f}", unit=currency, title=figure.title)
    categories = [str(label) for label, _ in figure.series[0].points] if figure.series else []
    series = {s.name: [float(value) for _, value in s.points] for s in figure.series}
    return stacked_bar_chart(categories, series, unit=figure.y_label, title=figure.title)
