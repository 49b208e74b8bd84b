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
    svg = line_chart({"buy": [(0, 1.0), (1, 2.0)], "rent": [(0, 0.5), (1, 3.0)]}, x_label="month", y_label="USD",
                     reference_lines={"on-demand": 2.5})  # fmt: skip
    ET.fromstring(svg)
    assert svg.count("<polyline") == 2 and "on-demand" in svg


def test_scatter_highlights_the_named_points_and_tornado_orders_by_swing():
    svg = scatter_chart([{"x": 1, "y": 2, "label": "a"}, {"x": 2, "y": 1, "label": "b"}], x_label="h", y_label="$",
                        highlight={"a"})  # fmt: skip
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
