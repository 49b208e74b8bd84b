"""A report figure as an inline SVG chart (gpuledger.charts), for the page and the PDF."""

from __future__ import annotations

from html import escape

from gpuledger.charts import PALETTE, WIDTH, _nice_max, _svg, line_chart, stacked_bar_chart, tornado_chart
from procurement.reports.model import Figure, waterfall_bars


def waterfall_svg(figure: Figure) -> str:
    """Vertical bars: the totals in blue, each step (a saving) in green, hanging from the level before it."""
    bars = waterfall_bars(figure)
    left, top, bar_w, gap, plot_h = 60, 20, 90, 30, 220
    scale = plot_h / _nice_max(max([base + height for _, base, height in bars] + [0.0]))
    body = []
    for index, (label, base, height) in enumerate(bars):
        x, y = left + index * (bar_w + gap), top + plot_h - (base + height) * scale
        color = PALETTE[2] if 0 < index < len(bars) - 1 else PALETTE[0]
        body += [
            f'<rect x="{x}" y="{y:.1f}" width="{bar_w}" height="{max(height * scale, 0.5):.1f}" fill="{color}"/>',
            f'<text x="{x + bar_w / 2}" y="{top + plot_h + 16}" text-anchor="middle">{escape(label)}</text>',
            f'<text x="{x + bar_w / 2}" y="{y - 4:.1f}" text-anchor="middle">{height:,.0f}</text>',
        ]
    width = max(WIDTH, left + len(bars) * (bar_w + gap))
    return _svg(width, top + plot_h + 30, body, f"{figure.title} ({figure.y_label})")


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
        return waterfall_svg(figure)
    if figure.kind == "tornado":
        base = figure.base or 0.0
        low, high = ({str(label): float(value) for label, value in s.points} for s in figure.series[:2])
        rows = [(label, low[label] - base, high[label] - base) for label in low]
        return tornado_chart(rows, base_label=f"base {base:,.2f}", unit=currency, title=figure.title)
    categories = [str(label) for label, _ in figure.series[0].points] if figure.series else []
    series = {s.name: [float(value) for _, value in s.points] for s in figure.series}
    return stacked_bar_chart(categories, series, unit=figure.y_label, title=figure.title)
