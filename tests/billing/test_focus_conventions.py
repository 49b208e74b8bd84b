"""FOCUS as each major provider writes it (issue 22, section 1): one fixture per convention
(tests/billing/fixtures/SOURCES.md names each one's documentation), imported and reviewed, totals by hand.

- AWS: p5.48xlarge 2 h at 55.04 = 110.08 (16 GPU-hours) + g6e.xlarge spot 1 h 0.92 (1 GPU-hour) = 111.00
  GPU; EBS 4.00 + tax 1.20 = 5.20 non-GPU; tags keyed `user:team` read as team.
- Azure: ND96isr H100 v5 1 h EUR 90.00 (8 GPU-hours) and storage EUR 10.00; at the stored 1 EUR =
  1.10 USD: 99.00 USD GPU, 11.00 USD non-GPU.
- Google Cloud: a3-highgpu-8g (8 H100) 2 h 176.98 (16 GPU-hours); egress 2.50 with empty cells.
- OCI: BM.GPU.H100.8 1 h GBP 80.00 (8 GPU-hours), block volume GBP 4.00; at 1 GBP = 1.25 USD:
  100.00 and 5.00 USD.
"""

from __future__ import annotations

import datetime as dt
import shutil
from decimal import Decimal
from pathlib import Path

import pytest

from billing.imports.importer import import_file, import_files
from billing.models import BillingImport
from billing.review.service import _build_review, make_request
from pricing.models import FxRate, GpuModel, InstanceType, Provider
from tests.billing.catalog import make_catalog
from tests.billing.stored import stored_row, stored_rows

pytestmark = pytest.mark.django_db
FIXTURES = Path(__file__).parent / "fixtures"
MAY = {"start": dt.date(2026, 5, 1), "end": dt.date(2026, 6, 1)}


@pytest.fixture
def catalog():
    """The test catalog, plus the Azure, Google Cloud and OCI H100 machines the fixtures bill."""
    make_catalog()
    h100 = GpuModel.objects.get(slug="h100-sxm5-80gb")
    for slug, name in (
        ("azure", "Standard_ND96isr_H100_v5"),
        ("gcp", "a3-highgpu-8g"),
        ("oracle", "BM.GPU.H100.8"),
    ):
        provider, _ = Provider.objects.get_or_create(slug=slug, defaults={"name": slug})
        InstanceType.objects.create(provider=provider, name=name, gpu=h100, gpu_name="h100", gpu_count=8)
    # dated in May, the bills' charge month: a review converts each month at its own rate (fx_months.py)
    FxRate.objects.create(currency="EUR", base="USD", rate="1.10", as_of="2026-05-29", source="test")
    FxRate.objects.create(currency="GBP", base="USD", rate="1.25", as_of="2026-05-29", source="test")


def reviewed(name: str, currency: str = "USD") -> dict:
    result = import_file(FIXTURES / name)
    assert result.rejected == 0 and not result.unmapped
    return _build_review(make_request(**MAY, currency=currency))


def test_aws_focus_export(catalog):
    body = reviewed("aws_focus_export.csv")
    assert (body["totals"]["effective_cost"], body["totals"]["gpu_hours"]) == ("111.00", "17.00")
    assert body["non_gpu_cost"] == "5.20"
    assert {t["team"]: t["effective_cost"] for t in body["by_team"]} == {"ml": "110.08", "research": "0.92"}
    assert {p["pricing_category"] for p in body["by_pricing_category"]} == {"on_demand", "spot"}
    stored = stored_row(resource_id="i-0awsp5")
    assert stored.tags == {"team": "ml", "aws:createdBy": "AssumedRole:trainer"}  # user: dropped


def test_azure_focus_export_in_euros_converted_through_the_stored_rate(catalog):
    body = reviewed("azure_focus_export.csv")
    assert (body["totals"]["effective_cost"], body["totals"]["gpu_hours"]) == ("99.00", "8.00")
    assert body["non_gpu_cost"] == "11.00"
    assert body["by_team"][0]["team"] == "vision"  # tags without their braces
    assert _build_review(make_request(**MAY, currency="EUR"))["totals"]["effective_cost"] == "90.00"


def test_a_billing_currency_without_a_stored_rate_is_a_warning_naming_the_bill_and_month(catalog):
    # issue 28: the review stands without the month's EUR rows (tests/billing/test_fx_by_charge_month.py)
    import_file(FIXTURES / "azure_focus_export.csv")
    FxRate.objects.filter(currency="EUR").delete()
    body = _build_review(make_request(**MAY))
    assert (body["totals"]["effective_cost"], body["non_gpu_cost"]) == ("0.00", "0.00")
    assert body["fx_missing"] == [{"currency": "EUR", "month": "2026-05", "rows": 2, "billed_cost": "100.00"}]
    assert body["warnings"][0].startswith(
        "azure_focus_export.csv: no stored FX rate from EUR to USD for 2026-05"
    )


def test_google_cloud_focus_in_snake_case_with_label_records(catalog, settings):
    settings.BILLING_INSTANCE_TYPES = {"A3-HIGHGPU-8G-CORE": "a3-highgpu-8g"}
    body = reviewed("gcp_focus_export.csv")
    assert (body["totals"]["effective_cost"], body["totals"]["gpu_hours"]) == ("176.98", "16.00")
    assert body["non_gpu_cost"] == "2.50"
    assert body["by_team"] == [body["by_team"][0]] and body["by_team"][0]["team"] == "ml"
    assert stored_row(sku_id="NETWORK-EGRESS-INTERNET").consumed_quantity is None  # "" is null


def test_oci_focus_export_with_key_value_tags_in_pounds(catalog):
    body = reviewed("oci_focus_export.csv")
    assert (body["totals"]["effective_cost"], body["totals"]["gpu_hours"]) == ("100.00", "8.00")
    assert body["non_gpu_cost"] == "5.00"
    assert stored_row(sku_id="B98415").tags == {"team": "ml", "Oracle-Tags.CreatedBy": "trainer"}


@pytest.mark.parametrize("spell", [str.lower, str.upper, lambda name: name])
def test_any_case_of_the_gcp_headers_gives_the_same_review(catalog, settings, tmp_path, spell):
    settings.BILLING_INSTANCE_TYPES = {"A3-HIGHGPU-8G-CORE": "a3-highgpu-8g"}
    text = (FIXTURES / "gcp_focus_export.csv").read_text()
    header, rest = text.split("\n", 1)
    path = tmp_path / "gcp.csv"
    path.write_text(spell(header) + "\n" + rest)
    assert import_file(path).inserted == 2
    body = _build_review(make_request(**MAY))
    assert (body["totals"]["effective_cost"], body["non_gpu_cost"]) == ("176.98", "2.50")


def test_a_bad_cell_is_named_by_the_files_own_header_and_nothing_is_stored(catalog, tmp_path):
    text = (
        (FIXTURES / "gcp_focus_export.csv")
        .read_text()
        .replace('"[{""key"": ""team""', '"[{""name"": ""team""')
    )
    path = tmp_path / "gcp.csv"
    path.write_text(text)
    assert import_files([path]).errors == [
        f'{path}:2:tags: a JSON list of tags must hold {{"key": ..., "value": ...}} objects'
    ]
    broken = tmp_path / "oci.csv"
    shutil.copy(FIXTURES / "oci_focus_export.csv", broken)
    broken.write_text(broken.read_text().replace("team=ml,REF-0002", '"team:ml",REF-0002'))
    assert import_files([broken]).errors == [
        f"{broken}:3:Tags: tags must be a JSON object, a JSON list of {{key, value}} objects or key=value pairs"
    ]
    assert BillingImport.objects.count() == 0


def test_a_focus_file_missing_a_required_column_names_it(tmp_path):
    text = (FIXTURES / "aws_focus_export.csv").read_text()
    lines = [
        ",".join(line.split(",")[:20] + line.split(",")[21:]) if n == 0 else line
        for n, line in enumerate(text.splitlines())
    ]
    path = tmp_path / "cut.csv"
    path.write_text("\n".join(lines[:1]) + "\n")
    result = import_files([path])
    assert result.errors == [f"{path}:1:BilledCost: missing required column(s): BilledCost"]
    assert Decimal(0) == sum(Decimal(r.effective_cost) for r in stored_rows())
