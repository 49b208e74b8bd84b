"""Small server-side SVG charts for the pages and reports: no JavaScript library, no network, printable.

This module is the ONE chart API: every page, report and export draws through the public names below
(``__all__``); nothing outside imports a name starting with ``_`` (tests/gpuledger/test_chart_api.py).

Whole charts (each returns an SVG string safe to insert with ``|safe``: every label is escaped here):

- ``line_chart(series, x_label=, y_label=, title=, reference_lines=, x_tick_labels=)``: lines through
  (x, y) points, one per series; dashed horizontal reference lines by label.
- ``stacked_bar_chart(categories, series, unit=, title=, reference_lines=)``: one horizontal bar per
  category, the series stacked (one series: plain bars); reference marks per category by label.
- ``scatter_chart(points, x_label=, y_label=, title=, highlight=)``: points {x, y, label, group}.
- ``tornado_chart(rows, base_label=, unit=, title=)``: (label, low change, high change) around a base.
- ``waterfall_chart(bars, title=)``: (label, base, height) bars, the first and last (totals) in blue,
  the steps between in green, each hanging from its base (``waterfall_bars`` in the report model).

Building blocks for a chart of a new shape (the capacity plan's load-duration curve uses them):

- ``svg_document(width, height, body, title)``: wraps SVG elements into the accessible ``<svg>``.
- ``nice_max(value)``: the axis maximum a person reads (1, 2, 2.5 or 5 times a power of ten).
- ``legend(names, x, y, width=WIDTH)``: swatches in ``PALETTE`` order, wrapping into rows.
- ``axes(left, top, plot_w, plot_h, y_max, x_label, y_label)``: the two axes, the y grid and labels.
- ``axis_number(value)``, ``text_width(text)``: tick text and an upper estimate of a label's width.
- ``PALETTE`` (series colours, in order) and ``WIDTH`` (the default picture width, px).

Values are plain floats: charts are pictures of numbers already rounded at the report edge.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

__all__ = [
    "PALETTE",
    "WIDTH",
    "axes",
    "axis_number",
    "legend",
    "line_chart",
    "nice_max",
    "scatter_chart",
    "stacked_bar_chart",
    "svg_document",
    "text_width",
    "tornado_chart",
    "waterfall_chart",
]

PALETTE = ["#2f6fed", "#f79009", "#12b76a", "#9e77ed", "#f04438", "#0ba5ec", "#667085", "#ee46bc"]
WIDTH = 720
SHOW_POINTS_UP_TO = 60
# Labels are 11 px system-ui (site.css): an average glyph is under 0.6 em, so 6.6 px a character bounds a
# label's width. Margins are sized from it, so no label is clipped at the picture's edge (issue 30).
CHAR_W = 6.6
LEGEND_ROW = 16


def text_width(text: str) -> float:
    """An upper estimate of a label's drawn width, px."""
    return CHAR_W * len(text)


def axis_number(value: float) -> str:
    """Tick labels people read: 250,000 rather than 2.5e+05."""
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:.4g}"


def svg_document(width: int, height: int, body: list[str], title: str) -> str:
    """The accessible picture around `body` (SVG elements): its title is the aria label and tooltip."""
    return (
        f'<svg class="chart" role="img" aria-label="{escape(title)}" viewBox="0 0 {width} {height}" '
        f'width="100%" xmlns="http://www.w3.org/2000/svg"><title>{escape(title)}</title>{"".join(body)}</svg>'
    )


def nice_max(value: float) -> float:
    """The axis maximum at or above `value` that reads well: 1, 2, 2.5, 5 or 10 times a power of ten."""
    if value <= 0:
        return 1.0
    magnitude = 10 ** len(str(int(value))) / 10
    for step in (1, 2, 2.5, 5, 10):
        if value <= step * magnitude:
            return step * magnitude
    return value


def legend(names: Sequence[str], x: int, y: int, width: float = WIDTH) -> list[str]:
    """Swatches and names from (x, y), wrapping onto a new row of LEGEND_ROW px before `width`."""
    parts, offset = [], x
    for index, name in enumerate(names):
        step = 24 + text_width(name)
        if offset > x and offset + step > width:
            offset, y = x, y + LEGEND_ROW
        color = PALETTE[index % len(PALETTE)]
        parts.append(f'<rect x="{offset:.0f}" y="{y - 9}" width="10" height="10" fill="{color}"/>')
        parts.append(f'<text x="{offset + 14:.0f}" y="{y}">{escape(name)}</text>')
        offset += step
    return parts


def _legend_rows(names: Sequence[str], x: int, width: float = WIDTH) -> int:
    """How many rows `legend` takes for `names` (the plot starts below them)."""
    rows, offset = 1, x
    for name in names:
        step = 24 + text_width(name)
        if offset > x and offset + step > width:
            rows, offset = rows + 1, x
        offset += step
    return rows


def _label_margin(labels: Sequence[str], least: int) -> int:
    """A left margin wide enough for right-aligned row labels (8 px gap, 6 px edge), at least `least`."""
    return max(least, int(max((text_width(str(label)) for label in labels), default=0) + 14))


def stacked_bar_chart(
    categories: Sequence[str],
    series: dict[str, Sequence[float]],
    *,
    unit: str,
    title: str = "",
    reference_lines: dict[str, Sequence[float]] | None = None,
) -> str:
    """Horizontal stacked bars, one per category; `series` maps a part name to one value per category.

    `reference_lines` maps a label (e.g. "usable memory") to one value per category, drawn as a tick.
    """
    row_height = 26
    totals = [sum(values[i] for values in series.values()) for i in range(len(categories))]
    total_labels = [f"{total:,.1f} {unit}" for total in totals]
    # room for the longest category on the left and the longest total after its bar; a very long label
    # widens the picture (it scales down in its card) rather than being cut off
    left = _label_margin(categories, 170)
    right = int(max((text_width(label) for label in total_labels), default=0) + 12)
    chart_w = max(WIDTH, left + 300 + right)
    names = list(series) + list(reference_lines or {})
    top = 14 + LEGEND_ROW * _legend_rows(names, left, chart_w)
    height = top + row_height * len(categories) + 40
    references = reference_lines or {}
    peak = max([*totals, *(v for values in references.values() for v in values), 0.0])
    scale = (chart_w - left - right) / nice_max(peak)
    body = legend(names, left, 16, chart_w)
    for row, category in enumerate(categories):
        y = top + row * row_height
        body.append(f'<text x="{left - 8}" y="{y + 15}" text-anchor="end">{escape(category)}</text>')
        x = float(left)
        for index, values in enumerate(series.values()):
            width = max(values[row], 0.0) * scale
            body.append(
                f'<rect x="{x:.1f}" y="{y + 4}" width="{width:.1f}" height="16" fill="{PALETTE[index % len(PALETTE)]}"/>'
            )
            x += width
        body.append(f'<text x="{x + 4:.1f}" y="{y + 16}">{escape(total_labels[row])}</text>')
        for values in references.values():
            rx = left + values[row] * scale
            body.append(
                f'<line x1="{rx:.1f}" x2="{rx:.1f}" y1="{y + 1}" y2="{y + 23}" stroke="#101828" stroke-width="2"/>'
            )
    return svg_document(chart_w, height, body, title or f"stacked bars ({unit})")


def line_chart(
    series: dict[str, Sequence[tuple[float, float]]],
    *,
    x_label: str,
    y_label: str,
    title: str = "",
    reference_lines: dict[str, float] | None = None,
    x_tick_labels: dict[float, str] | None = None,
) -> str:
    """Lines through (x, y) points, one per series; horizontal dashed reference lines by label."""
    left, right, bottom = 80, 20, 40
    top = 14 + LEGEND_ROW * _legend_rows(list(series), left)
    height = 290 + top
    points = [p for values in series.values() for p in values]
    references = reference_lines or {}
    if not points:
        return svg_document(WIDTH, 60, ['<text x="10" y="30">No data</text>'], title or "line chart")
    xs = [p[0] for p in points]
    x_min, x_max = min(xs), max(xs)
    y_max = nice_max(max([p[1] for p in points] + list(references.values())))
    plot_w, plot_h = WIDTH - left - right, height - top - bottom

    def sx(x: float) -> float:
        return left + (x - x_min) / ((x_max - x_min) or 1) * plot_w

    def sy(y: float) -> float:
        return top + plot_h - y / y_max * plot_h

    body = legend(list(series), left, 16) + axes(left, top, plot_w, plot_h, y_max, x_label, y_label)
    for value, label in (x_tick_labels or {}).items():
        half = text_width(label) / 2  # a tick at either end keeps its whole label inside the picture
        x = min(max(sx(value), half + 2), WIDTH - half - 2)
        body.append(f'<text x="{x:.1f}" y="{top + plot_h + 14}" text-anchor="middle">{escape(label)}</text>')
    for index, values in enumerate(series.values()):
        color = PALETTE[index % len(PALETTE)]
        ordered = sorted(values)
        path = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in ordered)
        body.append(f'<polyline fill="none" stroke="{color}" stroke-width="2" points="{path}"/>')
        if len(ordered) <= SHOW_POINTS_UP_TO:  # a sparse series (one snapshot) would otherwise be invisible
            body.extend(
                f'<circle cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="3.5" fill="{color}"/>' for x, y in ordered
            )
    for label, value in references.items():
        y = sy(value)
        body.append(
            f'<line x1="{left}" x2="{left + plot_w}" y1="{y:.1f}" y2="{y:.1f}" stroke="#101828" stroke-dasharray="5 4"/>'
        )
        body.append(f'<text x="{left + plot_w - 4}" y="{y - 4:.1f}" text-anchor="end">{escape(label)}</text>')
    return svg_document(WIDTH, height, body, title or y_label)


def axes(
    left: float, top: float, plot_w: float, plot_h: float, y_max: float, x_label: str, y_label: str
) -> list[str]:
    """The x and y axes of a plot area, its y grid in quarters of `y_max` and both axis labels."""
    parts = [
        f'<line x1="{left}" x2="{left}" y1="{top}" y2="{top + plot_h}" stroke="#98a2b3"/>',
        f'<line x1="{left}" x2="{left + plot_w}" y1="{top + plot_h}" y2="{top + plot_h}" stroke="#98a2b3"/>',
        f'<text x="{left + plot_w / 2}" y="{top + plot_h + 32}" text-anchor="middle">{escape(x_label)}</text>',
        f'<text x="14" y="{top + plot_h / 2}" transform="rotate(-90 14 {top + plot_h / 2})" text-anchor="middle">{escape(y_label)}</text>',
    ]
    for step in range(5):
        value = y_max * step / 4
        y = top + plot_h - plot_h * step / 4
        parts.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{y:.1f}" y2="{y:.1f}" stroke="#eaecf0"/>')
        parts.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{axis_number(value)}</text>')
    return parts


def scatter_chart(
    points: Sequence[dict],
    *,
    x_label: str,
    y_label: str,
    title: str = "",
    highlight: set[str] | None = None,
) -> str:
    """Points {x, y, label, group}; labels in `highlight` (e.g. the Pareto front) are drawn larger."""
    left, right, top, bottom, height = 70, 20, 30, 40, 340
    if not points:
        return svg_document(WIDTH, 60, ['<text x="10" y="30">No data</text>'], title or "scatter")
    x_max = nice_max(max(p["x"] for p in points))
    y_max = nice_max(max(p["y"] for p in points))
    plot_w, plot_h = WIDTH - left - right, height - top - bottom
    groups = list(dict.fromkeys(p.get("group", "") for p in points))
    body = legend([g for g in groups if g], left, 16) + axes(
        left, top, plot_w, plot_h, y_max, x_label, y_label
    )
    for step in range(5):  # the same quarters as the y axis: a reader places a point on both axes
        anchor = "end" if step == 4 else "middle"
        body.append(
            f'<text x="{left + plot_w * step / 4:.1f}" y="{top + plot_h + 14}" text-anchor="{anchor}">'
            f"{axis_number(x_max * step / 4)}</text>"
        )
    for point in points:
        x = left + point["x"] / x_max * plot_w
        y = top + plot_h - point["y"] / y_max * plot_h
        color = PALETTE[groups.index(point.get("group", "")) % len(PALETTE)]
        big = highlight is not None and point.get("label") in highlight
        outline = ' stroke="#101828" stroke-width="1.5"' if big else ""
        label = escape(str(point.get("label", "")))
        body.append(
            f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{6 if big else 3.5}" fill="{color}" '
            f'fill-opacity="{0.95 if big else 0.55}"{outline}><title>{label}</title></circle>'
        )
    return svg_document(WIDTH, height, body, title or f"{y_label} vs {x_label}")


def tornado_chart(
    rows: Sequence[tuple[str, float, float]], *, base_label: str, unit: str, title: str = ""
) -> str:
    """Sensitivity bars: (label, change at the low value, change at the high value) around a base of 0."""
    row_height, top = 26, 30
    left = _label_margin([label for label, _, _ in rows], 190)
    base_text = f"{base_label} (change in {unit})"
    chart_w = max(WIDTH, left + 300, int(text_width(base_text)) + 20)
    height = top + row_height * len(rows) + 30
    reach = nice_max(max([abs(v) for _, low, high in rows for v in (low, high)] + [0.0]))
    center = left + (chart_w - left - 20) / 2
    scale = (chart_w - left - 20) / 2 / reach
    ordered = sorted(rows, key=lambda row: -max(abs(row[1]), abs(row[2])))
    body = legend(["low value", "high value"], left, 16)
    for index, (label, low, high) in enumerate(ordered):
        y = top + index * row_height
        body.append(f'<text x="{left - 8}" y="{y + 15}" text-anchor="end">{escape(label)}</text>')
        for value, color in ((low, PALETTE[0]), (high, PALETTE[1])):
            x, width = (center + value * scale, -value * scale) if value < 0 else (center, value * scale)
            body.append(
                f'<rect x="{x:.1f}" y="{y + 4}" width="{width:.1f}" height="16" fill="{color}" fill-opacity="0.85"/>'
            )
    body.append(f'<line x1="{center}" x2="{center}" y1="{top - 4}" y2="{height - 24}" stroke="#101828"/>')
    # centred on the zero line, but never past either edge
    half = text_width(base_text) / 2
    label_x = min(max(center, half + 4), chart_w - half - 4)
    body.append(f'<text x="{label_x:.1f}" y="{height - 8}" text-anchor="middle">{escape(base_text)}</text>')
    return svg_document(chart_w, height, body, title or "sensitivity")


def waterfall_chart(bars: Sequence[tuple[str, float, float]], *, title: str) -> str:
    """Vertical bars (label, base, height): the totals (first and last) in blue, each step between in
    green, hanging from the level before it, each labelled with its height."""
    left, top, bar_w, gap, plot_h = 60, 20, 90, 30, 220
    scale = plot_h / nice_max(max([base + height for _, base, height in bars] + [0.0]))
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
    return svg_document(width, top + plot_h + 30, body, title)
