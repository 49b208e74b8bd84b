"""The catalog page groups the BF16 column's thousands as it does the bandwidth column's (issue 30, item 5;
found by a new user on /: "1307.4" and "1835" beside "3,277"). Figures: the bundled datasheet table
(pricing/data/gpu_specs.csv): MI300X 1307.4 dense BF16 TFLOPS (AMD MI300X datasheet), Gaudi 3 1835 (Intel
Gaudi 3 white paper), A10 125 (NVIDIA A10 datasheet)."""

from __future__ import annotations

import re

import pytest

pytestmark = pytest.mark.django_db


def _bf16_cell(page: str, slug: str) -> str:
    row = page.split(f">{slug}<", 1)[1].split("</tr>", 1)[0]
    cells = re.findall(r"<td class=\"num\"[^>]*>(.*?)</td>", row)
    return cells[2]  # memory, bandwidth, BF16


def test_the_bf16_column_has_thousands_separators(bundled_catalog, client_as):
    page = client_as("viewer").get("/").content.decode()
    assert _bf16_cell(page, "mi300x") == "1,307.4"
    assert _bf16_cell(page, "gaudi3") == "1,835"
    assert _bf16_cell(page, "a10") == "125"
