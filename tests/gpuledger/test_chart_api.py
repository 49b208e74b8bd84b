"""gpuledger/charts.py is the one chart API: every module draws through its public names (issue 25)."""

import ast
import re
import xml.etree.ElementTree as ET
from pathlib import Path

from gpuledger import charts
from gpuledger.charts import waterfall_chart

ROOT = Path(__file__).resolve().parents[2]
SKIP = {".venv", "node_modules", "var", ".git"}


def _python_files():
    for path in ROOT.rglob("*.py"):
        if not SKIP.intersection(path.relative_to(ROOT).parts):
            yield path


def _private_chart_imports(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module == "gpuledger.charts":
            found += [f"{path.relative_to(ROOT)}: {a.name}" for a in node.names if a.name.startswith("_")]
        if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
            if isinstance(node.value, ast.Name) and node.value.id == "charts":
                found.append(f"{path.relative_to(ROOT)}: charts.{node.attr}")
    return found


def test_it_imports_no_private_chart_name_anywhere():
    offenders = [name for path in _python_files() for name in _private_chart_imports(path)]
    assert offenders == []


def test_the_public_api_is_what_all_lists_and_each_name_is_documented():
    for name in charts.__all__:
        assert not name.startswith("_") and hasattr(charts, name)
        assert f"``{name}" in charts.__doc__, f"{name} is not in the module docstring"


def test_waterfall_bars_stand_on_their_base_at_the_nice_scale():
    # 1,000 start, 400 saved, 600 left: nice_max(1000) = 1000 over 220 px, so 0.22 px per unit; the step
    # hangs from 600 to 1000, i.e. its top at y = 20 + 220 - 1000 * 0.22 = 20 and 400 * 0.22 = 88 px tall
    svg = waterfall_chart([("start", 0.0, 1000.0), ("spot <", 600.0, 400.0), ("end", 0.0, 600.0)], title="w")
    ET.fromstring(svg)
    rects = re.findall(r'<rect x="(\d+)" y="([\d.]+)" width="90" height="([\d.]+)" fill="(#\w+)"', svg)
    assert rects == [
        ("60", "20.0", "220.0", charts.PALETTE[0]),
        ("180", "20.0", "88.0", charts.PALETTE[2]),
        ("300", "108.0", "132.0", charts.PALETTE[0]),
    ]
    assert "spot &lt;" in svg
