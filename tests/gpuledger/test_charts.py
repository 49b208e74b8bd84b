"""The SVG charts draw what they are given, escaped, at the right proportions."""

import re
import xml.etree.ElementTree as ET

from gpuledger.charts import line_chart, scatter_chart, stacked_bar_chart, tornado_chart


def _rect_widths(svg: str) -> list[float]:
    return [float(w) for w in re.findall(r'<rect x="[\d.]+" y="[\d.]+" width="([\d.]+)" height="16"', svg)]


def test_stacked_bars_are_proportional_to_values_and_well_formed():
    svg = stacked_bar_chart(["h100", "a10"], {"weights": [10.0, 10.0], "kv <cache>": [30.0, 0.0]}, unit="GiB")
    ET.fromstring(svg)  # valid XML: labels were escaped
    widths = _rect_widths(svg)
    assert widths[1] == 3 * widths[0]  # 30 GiB is drawn three times as long as 10 GiB
    assert "kv &lt;cache&gt;" in svg and "40.0 GiB" in svg


def test_line_chart_draws_one_polyline_per_series_and_reference_lines():
    svg = line_chart(
        {"buy": [(0, 1.0), (1, 2.0)], "rent": [(0, 0.5), (1, 3.0)]},
        x_label="month",
        y_label="USD",
        reference_lines={"on-demand": 2.5},
    )
    ET.fromstring(svg)
    assert svg.count("<polyline") == 2 and "on-demand" in svg


def test_scatter_highlights_the_named_points_and_tornado_orders_by_swing():
    svg = scatter_chart(
        [{"x": 1, "y": 2, "label": "a"}, {"x": 2, "y": 1, "label": "b"}],
        x_label="h",
        y_label="$",
        highlight={"a"},
    )
    ET.fromstring(svg)
    assert svg.count('r="6"') == 1
    tornado = tornado_chart([("small", -1.0, 1.0), ("big", -5.0, 4.0)], base_label="NPV", unit="USD")
    ET.fromstring(tornado)
    assert tornado.index(">big<") < tornado.index(">small<")


def test_sparse_series_show_their_points_and_ticks_read_as_plain_numbers():
    svg = line_chart(
        {"zone a": [(0, 23.1449)]}, x_label="day", y_label="USD/h", reference_lines={"on-demand": 68.8}
    )
    assert svg.count("<circle") == 1  # one snapshot is still visible
    big = line_chart({"buy": [(0, 300000.0), (36, 480000.0)]}, x_label="month", y_label="USD")
    assert "500,000" in big and "e+05" not in big


def _text_extents(svg: str):
    """(label, left, right) of each unrotated <text>, from its anchor and the charts' width estimate."""
    import re

    from gpuledger.charts import text_width

    view_width = float(re.search(r'viewBox="0 0 ([\d.]+) ', svg).group(1))
    extents = []
    for attributes, label in re.findall(r"<text ([^>]*)>([^<]*)</text>", svg):
        if "rotate" in attributes:
            continue
        x = float(re.search(r'x="([-\d.]+)"', attributes).group(1))
        width = text_width(label.replace("&amp;", "&"))
        anchor = re.search(r'text-anchor="(\w+)"', attributes)
        anchor = anchor.group(1) if anchor else "start"
        left = {"start": x, "middle": x - width / 2, "end": x - width}[anchor]
        extents.append((label, left, left + width))
    return extents, view_width


def test_no_chart_label_is_clipped_at_the_pictures_edge():
    # Long team names, large totals and end ticks were cut off (issue 30): every label now lies inside.
    from gpuledger.charts import line_chart, stacked_bar_chart, tornado_chart

    teams = ["research-large-language-models-pretraining", "platform"]
    long_driver = "electricity price per kWh in the colocation contract"
    ticks = {0: "2026-11-01 00:00", 10: "2026-11-30 23:00"}
    charts = [
        stacked_bar_chart(teams, {"on demand": [1234567.8, 10.0], "spot": [2.0, 3.0]}, unit="USD"),
        tornado_chart([(long_driver, -120000.0, 90000.0)], base_label="total cost 1,234,567", unit="USD"),
        line_chart(
            {"us-east-1a": [(0, 1.0), (10, 2.0)]}, x_label="day", y_label="USD/h", x_tick_labels=ticks
        ),
    ]
    for svg in charts:
        extents, view_width = _text_extents(svg)
        for label, left, right in extents:
            assert left >= 0 and right <= view_width, (label, left, right, view_width)
