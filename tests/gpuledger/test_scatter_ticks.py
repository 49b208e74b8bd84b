"""The cost-versus-time scatter on a workload's recommendations page labels its hours axis (issue 30,
"chart labels are never clipped"; found by a new user on /workloads/1/recommendations/ for
examples/lora-finetune.yaml: points at 1.5, 3.0, 6.8 and 21.2 h under an axis whose only label was "25")."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from gpuledger.charts import scatter_chart


def test_the_x_axis_has_the_y_axis_quarters_from_zero_to_the_nice_maximum():
    points = [
        {"x": x, "y": y, "label": str(x)} for x, y in ((1.5, 11.51), (2.99, 9.82), (6.8, 9.35), (21.23, 9.54))
    ]
    svg = scatter_chart(points, x_label="hours", y_label="total job cost (USD)")
    ET.fromstring(svg)
    # 21.23 h rounds up to a 25 h axis (1, 2, 2.5, 5 x 10^n); quarters of it, as the y axis's 0-20 by 5
    below_plot = re.findall(r'<text x="([\d.]+)" y="314" text-anchor="(?:middle|end)">([^<]+)</text>', svg)
    assert [label for _, label in below_plot] == ["0", "6.25", "12.5", "18.75", "25"]
    xs = [float(x) for x, _ in below_plot]
    assert xs[0] == 70 and xs[-1] == 70 + (720 - 70 - 20) and xs == sorted(xs)
