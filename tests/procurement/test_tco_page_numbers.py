"""The rent-or-buy page of the README's example study reads as a person reads numbers (issue 30, item 5:
thousands separators everywhere). Found by a new user on /tco/<id>/ after `tco examples/tco-study.yaml
--save`: "Inputs used" showed buy.server_price 300000 and buy.fte_cost_per_year 150000, the tornado's
axis "NPV advantage of buying 457199.83", and the prices line "for 8.000 GPUs".

Figures from examples/tco-study.yaml (server price 300,000 USD, 8 GPUs a server) and the TCO defaults
(fte_cost_per_year 150,000 USD, docs/cost-model.md); the rent price is the bundled catalog's p5.48xlarge
us-east-1 on-demand price, 55.04 USD an hour for 8 GPUs (pricing/data/skypilot/aws/vms.gpu.csv)."""

from __future__ import annotations

import re
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from gpuledger.templatetags.formatting import grouped
from procurement.models import TcoStudy

pytestmark = pytest.mark.django_db
STUDY = Path(__file__).resolve().parents[2] / "examples" / "tco-study.yaml"


def _input(page: str, name: str) -> str:
    return re.search(rf"<td>{re.escape(name)}</td><td>(.*?)</td>", page).group(1)


def test_the_example_studys_page_groups_thousands(bundled_catalog, client_as):
    call_command("tco", str(STUDY), "--save", stdout=StringIO(), stderr=StringIO())
    study = TcoStudy.objects.get()
    page = client_as("admin").get(f"/tco/{study.pk}/").content.decode()
    assert _input(page, "buy.server_price") == "300,000"
    assert _input(page, "buy.fte_cost_per_year") == "150,000"
    assert _input(page, "buy.gpus_per_server") == "8"
    assert "for 8 GPUs" in page and "8.000 GPUs" not in page
    axis = re.search(r"NPV advantage of buying ([\d,.]+)", page).group(1)
    assert re.fullmatch(r"\d{1,3}(,\d{3})+\.\d{2}", axis), axis


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ("300000", "300,000"),
        ("33800.00", "33,800.00"),
        ("0.10", "0.10"),
        ("6.880000", "6.8800"),  # an hourly price kept to 6 decimals reads to 4 in a table
        ("1234.567891", "1,234.5679"),
        ("-62000.5", "-62,000.5"),
        ("on_demand", "on_demand"),
        ("2026-11-30T00:00:00+00:00", "2026-11-30T00:00:00+00:00"),
        ("—", "—"),
    ],
)
def test_grouped_adds_separators_to_a_plain_number_only(value, text):
    assert grouped(value) == text


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("6.880000 per GPU-hour", "6.8800 per GPU-hour"),
        ("2.203612 listed x (1 + 0.225317 overhead)", "2.2036 listed x (1 + 0.2253 overhead)"),
        ("on_demand 80 GPU-h at 6.88", "on_demand 80 GPU-h at 6.88"),
        ("2026-11-30 and 10.5.3", "2026-11-30 and 10.5.3"),
    ],
)
def test_short_decimals_shortens_the_numbers_of_a_sentence_only(text, shown):
    from gpuledger.templatetags.formatting import short_decimals

    assert short_decimals(text) == shown
