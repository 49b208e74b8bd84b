"""The spend review page's Totals and commitment totals read as the other tables do (issue 30, "numbers for
people": thousands separators everywhere, a price per GPU-hour with up to 4 decimals). Found by a new user
on /billing/ after `make run`: the Totals table showed "480211.76" and "3.154307" beside tables that show
"95,900.50 USD" and "3.1141".

Hand figures from the README's example bill (examples/bill-focus.csv, priced at the bundled catalog's
us-east-1 rates, pricing/data/skypilot/aws/vms.gpu.csv): GPU spend 550.40 + 526.98 + 10.98 + 24.14 =
1,112.50 USD over 80 + 192 + 12 + 24 = 308 GPU-hours, 1,112.50 / 308 = 3.612012... USD per GPU-hour;
5.20 USD of storage and tax beside it."""

from __future__ import annotations

import re
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from billing.templatetags.billing_extras import text_cell

pytestmark = pytest.mark.django_db
BILL = Path(__file__).resolve().parents[2] / "examples" / "bill-focus.csv"


def _cells(html: str, table_id: str) -> dict[str, str]:
    table = html.split(f'id="table-{table_id}"', 1)[1].split("</table>", 1)[0]
    rows = re.findall(r"<tr><td[^>]*>(.*?)</td><td[^>]*>(.*?)</td></tr>", table)
    return {measure: value for measure, value in rows}


def test_the_totals_table_has_separators_and_a_four_decimal_rate(bundled_catalog, client_as):
    call_command("import_billing", str(BILL), "--no-progress", stdout=StringIO(), stderr=StringIO())
    client = client_as("finance")
    page = client.get("/billing/?start=2026-11-01&end=2026-12-01").content.decode()
    totals = _cells(page, "summary")
    assert totals["Effective cost"] == "1,112.50"
    assert totals["GPU-hours"] == "308.00"
    assert totals["Effective cost per GPU-hour"] == "3.612"  # 1,112.50 / 308 = 3.612012
    assert totals["Non-GPU spend (beside, not included)"] == "5.20"


def test_a_value_cell_is_formatted_by_its_kind_and_words_stay_words():
    assert text_cell({"value": "480211.76", "value_kind": "money"}, "value") == "480,211.76"
    assert text_cell({"value": "152240.00", "value_kind": "hours"}, "value") == "152,240.00"
    assert text_cell({"value": "3.154307", "value_kind": "rate"}, "value") == "3.1543"
    assert (
        text_cell({"value": "no utilization data", "value_kind": "hours"}, "value") == "no utilization data"
    )
    assert text_cell({"measure": "Committed cost", "value_kind": "money"}, "measure") == "Committed cost"
    assert text_cell({"value": None}, "value") == ""
