"""Third outside FinOps review of gpuledger's billing (issue 28): two public exports nobody here used, plus
hostile variants of them. Public behaviour only: `import_billing`, `spend_review`, `report`, the invoice
view, the review's CSV export, the API and the admin site.

Every expected figure is recomputed in this file from the raw export with pandas and Decimal (never the
product's code). Sources (tests/billing/outside/data/SOURCES.md, "Third round"):

- `azure_ea_cad_focus_converters.csv`: finopsfoundation/focus_converters, commit
  c799bf96dea67c8dc8569eebbcd720e7562088fa (file last changed in 13f1839f5d949040081fa37d0d5d360e1bc36864),
  `focus_converter_base/tests/provider_config_tests/azure/sample-anonymous-ea-export-dataset.csv` (MIT,
  Copyright (c) 2023 FinOps Foundation), byte for byte: an anonymized Azure EA cost details export ("Example
  LTD."), 27 Usage lines of 2023-09-02, billed in **CAD** (`BillingCurrencyCode`), 3 of them Spot.
- `focus_spec_aws_ri_partial_upfront_100pct.csv`: FinOps-Open-Cost-and-Usage-Spec/FOCUS_Spec, commit
  17ac763b125121bd3a391b6ac7c2106f9c3bdd23, `specification/data/commitment_discount_scenarios/
  aws_reserved_instance_partial_upfront_100pct.csv` (CC-BY-4.0, "FinOps Open Cost and Usage Specification
  (FOCUS)"): an AWS partial-upfront EC2 Reserved Instance fully used, February 2026, 38 lines (a one-time and
  a recurring Purchase, 24 covered instance-hours, 12 on-demand S3/RDS/Lambda/DynamoDB lines), USD.

GPU rows: neither export has one. The Azure file's VM meters are DS4 v2 Spot, D3 v2/DS3 v2, F2/F2s, F4/F4s
and **L4s Spot** (the Lsv1 storage-optimized size, no GPU: learn.microsoft.com/azure/virtual-machines/
sizes/storage-optimized/ls-series; not the NVIDIA L4): so GPU spend and GPU-hours must be exactly 0 and the
L4s hours non-GPU. The attacker part's formula-injection bill turns one VM line into Standard_NC6s_v3 (1
NVIDIA V100: learn.microsoft.com/azure/virtual-machines/sizes/gpu-accelerated/ncv3-series) so that its team
reaches the review's tables.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
from decimal import ROUND_HALF_UP, Decimal
from io import StringIO
from pathlib import Path

import pandas as pd
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from pricing.models import GpuModel, InstanceType, Provider
from tests.billing.catalog import make_catalog

pytestmark = pytest.mark.django_db
DATA = Path(__file__).parent / "data"
AZURE_CAD = DATA / "azure_ea_cad_focus_converters.csv"
AWS_RI = DATA / "focus_spec_aws_ri_partial_upfront_100pct.csv"
CENT = Decimal("0.01")
# An illustrative CAD->USD rate an operator stores on the admin site (FxRate: one CAD buys 0.74 USD), dated
# on the last day of September 2023 so that it converts that charge month (docs/billing.md, BillingCurrency).
# Not a market figure: the arithmetic is the point.
CAD_USD = Decimal("0.74")


def dec(value) -> Decimal:
    text = str(value).strip()
    return Decimal(0) if text in ("", "NULL", "null", "nan", "None") else Decimal(text)


def cents(value: Decimal) -> str:
    return str(value.quantize(CENT, rounding=ROUND_HALF_UP))


def raw(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, dtype=str, keep_default_na=False, encoding="utf-8-sig")


def total(frame: pd.DataFrame, column: str) -> Decimal:
    return sum(map(dec, frame[column]), Decimal(0))


def import_billing(*paths: Path, **options) -> str:
    out = StringIO()
    call_command("import_billing", *map(str, paths), stdout=out, **options)
    return out.getvalue()


def review_json(start: str, end: str) -> dict:
    out = StringIO()
    call_command("spend_review", "--from", start, "--to", end, "--format", "json", stdout=out)
    return json.loads(out.getvalue())


def invoice_view(client, query: str = "from=2023-08&to=2026-04") -> dict:
    response = client.get(f"/billing/invoice/?{query}&format=json")
    assert response.status_code == 200, response.content
    return response.json()


def invoice_lines(view: dict) -> dict:
    return {
        (i["provider"], i["billing_period"], i["currency"]): {
            line["line"]: (line["billed_cost"], line["effective_cost"]) for line in i["lines"]
        }
        for i in view["invoices"]
    }


def all_spend(review: dict) -> Decimal:
    """GPU + non-GPU + undetermined + unattributed: every effective unit the review counted."""
    return sum(
        Decimal(review[k]) for k in ("non_gpu_cost", "undetermined_cost", "unattributed_commitment_cost")
    ) + Decimal(review["totals"]["effective_cost"])


@pytest.fixture
def catalog():
    make_catalog()
    azure, _ = Provider.objects.get_or_create(slug="azure", defaults={"name": "Azure"})
    v100 = GpuModel.objects.filter(slug="v100").first() or GpuModel.objects.create(
        slug="v100",
        name="V100",
        vendor="NVIDIA",
        architecture="Volta",
        memory_gb=16,
        memory_bandwidth_gbps=900,
    )
    # NCv3 series: Standard_NC6s_v3 = 6 vCPU, 1 V100 (Microsoft's size page, above)
    InstanceType.objects.create(
        provider=azure, name="Standard_NC6s_v3", gpu=v100, gpu_name="v100", gpu_count=1
    )


def store_cad_rate(client_as) -> None:
    """The rate through the admin site, as an operator stores it (admin: FX rates)."""
    admin = client_as("admin")
    response = admin.post(
        "/admin/pricing/fxrate/add/",
        {"currency": "CAD", "base": "USD", "rate": str(CAD_USD), "as_of": "2023-09-30", "source": "x28 test"},
    )
    assert response.status_code == 302, response.content.decode()[:2000]


# 1. Azure EA cost details in CAD (focus_converters) ---------------------------------------------------


def test_azure_cad_invoice_is_the_files_cad_total_never_converted(catalog, client_as):
    # By hand: 27 Usage lines, CostInBillingCurrency summed exactly = 1.2556... CAD -> 1.26 CAD; PricingModel
    # OnDemand or Spot (no reservation): effective = billed. BillingPeriodStartDate 9/1/2023 -> 2023-09. The
    # invoice is in the bill's own currency (docs: "never converted").
    frame = raw(AZURE_CAD)
    assert (
        len(frame) == 27 and set(frame.ChargeType) == {"Usage"} and set(frame.BillingCurrencyCode) == {"CAD"}
    )
    assert "inserted 27, unchanged 0, rejected 0" in import_billing(AZURE_CAD)
    billed = cents(total(frame, "CostInBillingCurrency"))
    assert billed == "1.26"
    assert invoice_lines(invoice_view(client_as("finance"))) == {
        ("azure", "2023-09", "CAD"): {"usage": (billed, billed)}
    }


def test_azure_cad_without_a_rate_the_review_stands_and_names_bill_and_month(catalog, client_as):
    # No CAD rate stored: the 27 rows are left out of every sum, fx_missing counts them (27 rows, 1.26 CAD)
    # and the warning names the file and 2023-09; the page answers 200 and shows it.
    frame = raw(AZURE_CAD)
    import_billing(AZURE_CAD)
    review = review_json("2023-09-01", "2023-10-01")
    billed = cents(total(frame, "CostInBillingCurrency"))
    assert review["fx_missing"] == [
        {"currency": "CAD", "month": "2023-09", "rows": 27, "billed_cost": billed}
    ]
    (warning,) = review["warnings"]
    assert warning.startswith(f"{AZURE_CAD.name}: no stored FX rate from CAD to USD for 2023-09")
    assert f"27 CAD row(s) ({billed} CAD billed)" in warning
    assert all_spend(review) == 0
    page = client_as("finance").get("/billing/?start=2023-09-01&end=2023-10-01")
    assert page.status_code == 200
    assert f"{AZURE_CAD.name}: no stored FX rate from CAD to USD for 2023-09" in page.content.decode()


def test_azure_cad_converted_split_gpu_0_and_l4s_is_not_an_nvidia_l4(catalog, client_as):
    # With CAD->USD 0.74 dated 2023-09-30: every line is non-GPU (no N-series size; the VM meters name
    # Standard_DS4_v2, Standard_D3_v2, Standard_L4s, Standard_F2, Standard_F4, none of which carries a GPU),
    # so GPU 0.00 / 0 GPU-hours, undetermined 0.00 (no N-size unknown to the catalog, no Compute row naming no
    # size), non-GPU = 1.2556... x 0.74 = 0.929... -> 0.93 USD. Tolerance: the cent (the product converts per
    # grouped row at the micro-unit, docs "Rounding that happens per row").
    frame = raw(AZURE_CAD)
    store_cad_rate(client_as)
    import_billing(AZURE_CAD)
    review = review_json("2023-09-01", "2023-10-01")
    assert review["fx_missing"] == [] and review["warnings"] == []
    assert review["totals"]["effective_cost"] == "0.00" and review["totals"]["gpu_hours"] == "0.00"
    assert review["by_gpu"] == []
    assert (review["undetermined_cost"], review["undetermined"]) == ("0.00", [])
    expected = total(frame, "CostInBillingCurrency") * CAD_USD
    assert review["non_gpu_cost"] == cents(expected) == "0.93"
    # The L4s lines (2 x Spot, 0.16667 + 0.150003 h) are what a name-based GPU guess would take for NVIDIA L4
    l4s = frame[frame.MeterName == "L4s Spot"]
    assert len(l4s) == 2 and cents(total(l4s, "Quantity")) == "0.32"


def test_azure_cad_reimport_inserts_nothing_and_changes_nothing(catalog, client_as):
    store_cad_rate(client_as)
    import_billing(AZURE_CAD)
    finance = client_as("finance")
    before = (review_json("2023-09-01", "2023-10-01"), invoice_view(finance))
    assert "inserted 0, unchanged 27, rejected 0" in import_billing(AZURE_CAD)
    # the same bill under another name (a re-download) is the same charges too
    assert "inserted 0" in import_billing(AZURE_CAD, format="azure")
    after = (review_json("2023-09-01", "2023-10-01"), invoice_view(finance))
    assert after == before


def test_azure_cad_upload_through_the_api_is_the_same_import(catalog, client_as):
    # POST /api/billing/imports/ (multipart file, format detected) answers the command's counts and lists
    # the five VM sizes the catalog lacks; the command then finds the same 27 lines stored (inserted 0).
    upload = io.BytesIO(AZURE_CAD.read_bytes())
    upload.name = AZURE_CAD.name
    response = client_as("finance").post("/api/billing/imports/", {"file": upload})
    assert response.status_code == 201, response.content
    body = response.json()
    assert (body["inserted"], body["unchanged"], body["rejected"]) == (27, 0, 0)
    assert body["unmapped_instance_types"] == {
        "azure:Standard_DS4_v2": 1,
        "azure:Standard_D3_v2": 2,
        "azure:Standard_L4s": 2,
        "azure:Standard_F2": 1,
        "azure:Standard_F4": 1,
    }
    assert "inserted 0, unchanged 27, rejected 0" in import_billing(AZURE_CAD)


OPENCOST_MCA = DATA / "opencost_azure_mca_test_billing.csv"


def test_mca_camel_case_cost_details_opencost_sample_ties_to_the_cent(catalog, client_as):
    # opencost/opencost@62b5ccb26726b26843d4c0cfed5ef9494d762075, pkg/cloud/azure/resources/billingexports/
    # values/test_azure_billing.csv (Apache-2.0): an MCA-shaped cost details file (camelCase header,
    # costInBillingCurrency, billingCurrency), 5 Usage lines of October 2024, USD. docs/billing.md says no
    # public MCA export was found; this is one (a test sample, its billingPeriod* cells empty, so the invoice
    # period is the charge month). By hand: 2.304 + 1.84 + 0.12 + 2.412 + 36.0 = 42.676 -> 42.68 billed and
    # effective; VMs D2s v3 and E4 v3 (no GPU) -> GPU 0, undetermined 0, non-GPU 42.68.
    frame = raw(OPENCOST_MCA)
    assert len(frame) == 5 and set(frame.billingPeriodStartDate) == {""}
    out = import_billing(OPENCOST_MCA)
    assert "inserted 5, unchanged 0, rejected 0" in out
    billed = cents(total(frame, "costInBillingCurrency"))
    assert billed == "42.68"
    assert invoice_lines(invoice_view(client_as("finance"))) == {
        ("azure", "2024-10", "USD"): {"usage": (billed, billed)}
    }
    review = review_json("2024-10-01", "2024-11-01")
    assert (review["totals"]["effective_cost"], review["undetermined_cost"]) == ("0.00", "0.00")
    assert review["non_gpu_cost"] == billed and review["warnings"] == []
    assert "inserted 0, unchanged 5" in import_billing(OPENCOST_MCA)


# 2. FOCUS spec: AWS partial-upfront Reserved Instance, 100% used -----------------------------------------


def test_aws_ri_purchases_are_their_own_invoice_line_and_usage_carries_the_amortization(catalog, client_as):
    # By hand (pandas below): Purchase 119,166.66 (One-Time) + 9,930.56 (Recurring) = 129,097.22 billed,
    # effective 0.00; Usage: 24 covered hours billed 0.00, effective 24 x 50.23 = 1,205.52, plus on-demand S3
    # 5.84 + 7.48 + 5.98, RDS 3 x 0.15, Lambda 3 x 0.01, DynamoDB 0.01 + 0.01 + 0.02 = 19.82 billed and
    # effective -> usage 19.82 billed, 1,225.34 effective. Invoice billed total 129,117.04.
    frame = raw(AWS_RI)
    assert len(frame) == 38
    assert "inserted 38, unchanged 0, rejected 0" in import_billing(AWS_RI)
    expected: dict = {}
    for category, group in frame.groupby("ChargeCategory"):
        expected[category.lower()] = (cents(total(group, "BilledCost")), cents(total(group, "EffectiveCost")))
    assert expected == {"purchase": ("129097.22", "0.00"), "usage": ("19.82", "1225.34")}
    view = invoice_view(client_as("finance"))
    assert invoice_lines(view) == {("aws", "2026-02", "USD"): expected}
    (invoice,) = view["invoices"]
    assert invoice["billed_total"] == cents(total(frame, "BilledCost")) == "129117.04"
    assert invoice["effective_total"] == cents(total(frame, "EffectiveCost")) == "1225.34"


def test_aws_ri_review_counts_the_effective_cost_once_and_the_ri_fully_used(catalog):
    # No instance type anywhere (no x_UsageType, no SkuPriceDetails): AWS names every instance-hour, so the
    # EC2 hours are non-GPU, not undetermined (docs/billing.md). Review of February 2026: GPU 0, non-GPU
    # 1,225.34 (the purchases' effective 0 keeps the upfront from being counted twice), utilization of the
    # RI = used 1,205.52 / (used + unused 0) = 100%.
    frame = raw(AWS_RI)
    import_billing(AWS_RI)
    review = review_json("2026-02-01", "2026-03-01")
    assert review["totals"]["effective_cost"] == "0.00"
    assert review["non_gpu_cost"] == cents(total(frame, "EffectiveCost")) == "1225.34"
    assert review["undetermined_cost"] == "0.00"
    assert cents(all_spend(review)) == "1225.34"
    (commitment,) = review["commitments"]["by_commitment"]
    used = frame[frame.CommitmentDiscountStatus == "Used"]
    assert commitment["used_cost"] == cents(total(used, "EffectiveCost")) == "1205.52"
    assert commitment["unused_cost"] == "0.00"
    assert Decimal(commitment["utilization_pct"]) == Decimal(100)


# 3. Team scope across both bills ----------------------------------------------------------------------


def test_a_granted_engineer_sees_only_their_teams_lines(catalog, client_as, settings):
    # Team from the Azure file's tagA (BILLING_TAG_MAPPING, an operator setting): all 27 CAD lines carry
    # "tagA": "valueA"; the AWS RI file has no tags. An engineer granted "valueA" (admin site) sees the Azure
    # lines only: 0.93 USD in September 2023, nothing in February 2026 (the RI's 1,225.34 is untagged);
    # asking for another team is 403; the invoice stays finance and admin only.
    settings.BILLING_TAG_MAPPING = {"team": ["tagA"]}
    store_cad_rate(client_as)
    import_billing(AZURE_CAD, AWS_RI)
    engineer = client_as("engineer", team="azure-team")
    response = client_as("admin").post(
        "/admin/billing/spendgrant/add/", {"team": engineer.user.teams.get().pk, "spend_team": "valueA"}
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    sept = engineer.get("/api/billing/spend-review/?from=2023-09-01&to=2023-10-01")
    assert sept.status_code == 200, sept.content
    expected = total(raw(AZURE_CAD), "CostInBillingCurrency") * CAD_USD
    assert cents(all_spend(sept.json())) == cents(expected) == "0.93"
    feb = engineer.get("/api/billing/spend-review/?from=2026-02-01&to=2026-03-01")
    assert feb.status_code == 200, feb.content
    assert cents(all_spend(feb.json())) == "0.00"
    finance_feb = client_as("finance").get("/api/billing/spend-review/?from=2026-02-01&to=2026-03-01").json()
    assert cents(all_spend(finance_feb)) == "1225.34"
    assert (
        engineer.get("/api/billing/spend-review/?from=2026-02-01&to=2026-03-01&team=other").status_code == 403
    )
    assert engineer.get("/billing/invoice/?from=2023-08&to=2026-04&format=json").status_code == 403
    # a grant reads, never writes: uploads and the spend-rows page stay finance and admin only (docs)
    assert engineer.get("/api/billing/spend-rows/?day=2023-09-02").status_code == 403
    upload = io.BytesIO(AZURE_CAD.read_bytes())
    upload.name = "again.csv"
    assert engineer.post("/api/billing/imports/", {"file": upload}).status_code == 403


# 4. Attacker: hostile variants of the Azure export ----------------------------------------------------


def azure_rows() -> tuple[list[str], list[list[str]]]:
    with AZURE_CAD.open(newline="", encoding="utf-8-sig") as handle:
        rows = list(csv.reader(handle))
    return rows[0], rows[1:]


def write_rows(path: Path, header: list[str], rows: list[list[str]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle, lineterminator="\n").writerows([header, *rows])
    return path


@pytest.fixture
def stored(catalog, client_as):
    """The good RI bill already stored; every hostile file must leave its invoice and review as they were."""
    import_billing(AWS_RI)
    finance = client_as("finance")

    def snapshot():
        return invoice_view(finance), review_json("2026-02-01", "2026-03-01")

    before = snapshot()
    yield before
    assert snapshot() == before


def refused(path: Path) -> str:
    with pytest.raises(CommandError) as error:
        import_billing(path)
    return str(error.value)


def test_malformed_number_in_row_5_names_file_line_and_column(stored, tmp_path):
    # Data row 5 is line 6 (line 1 = header)
    header, rows = azure_rows()
    rows[4][header.index("CostInBillingCurrency")] = "0.00O3"
    message = refused(write_rows(tmp_path / "bad_number.csv", header, rows))
    assert "bad_number.csv" in message and ":6" in message and "CostInBillingCurrency" in message, message


def test_date_out_of_range_names_file_line_and_column(stored, tmp_path):
    # 2/30/2023 does not exist; data row 3 = line 4
    header, rows = azure_rows()
    rows[2][header.index("Date")] = "2/30/2023"
    message = refused(write_rows(tmp_path / "bad_date.csv", header, rows))
    assert "bad_date.csv" in message and ":4" in message and "Date" in message, message


def test_huge_field_names_file_line_and_column(stored, tmp_path):
    # One Tags cell of 200,000 characters (over the csv module's 131,072 the docs name), data row 2 = line 3
    header, rows = azure_rows()
    rows[1][header.index("Tags")] = '"team": "' + "x" * 200_000 + '"'
    message = refused(write_rows(tmp_path / "huge_field.csv", header, rows))
    assert "huge_field.csv" in message and ":3" in message and "Tags" in message, message


def test_row_with_an_extra_field_is_refused_naming_its_line(stored, tmp_path):
    # Data row 4 (line 5) gets a 56th cell (the header has 55): a shifted or truncated export must not be read into the wrong columns
    header, rows = azure_rows()
    rows[3].append("EXTRA")
    message = refused(write_rows(tmp_path / "extra_field.csv", header, rows))
    assert "extra_field.csv" in message and ":5" in message, message


def latin1_bill(tmp_path) -> Path:
    """A latin-1 e-acute (0xE9) in data row 6's AccountName ("ABC" -> "AB\xe9"): line 7, byte 14."""
    header, rows = azure_rows()
    path = write_rows(tmp_path / "latin1.csv", header, rows)
    lines = path.read_bytes().split(b"\n")
    assert lines[6].startswith(b"Unassigned,ABC,")
    lines[6] = b"Unassigned,AB\xe9," + lines[6][len(b"Unassigned,ABC,") :]
    path.write_bytes(b"\n".join(lines))
    return path


def test_non_utf8_byte_with_format_names_file_line_and_byte(stored, tmp_path):
    path = latin1_bill(tmp_path)
    with pytest.raises(CommandError) as error:
        import_billing(path, format="azure")
    message = str(error.value)
    assert message.startswith(f"{path}:7: not UTF-8 text: byte 0xe9"), message


def test_non_utf8_byte_without_format_names_file_and_line(stored, tmp_path):
    path = latin1_bill(tmp_path)
    message = refused(path)
    assert message.startswith(f"{path}:7: not UTF-8 text"), message


def test_gzip_bomb_is_refused_early_naming_the_file(stored, tmp_path):
    # The Azure header, then 64 MiB of one line: about 64 KB of gzip (docs: a line over 1 MiB is refused at
    # once, naming file and line, after reading about 1 MiB)
    header, _ = azure_rows()
    body = (",".join(header) + "\n").encode() + b"a" * (64 << 20)
    path = tmp_path / "bomb.csv.gz"
    path.write_bytes(gzip.compress(body, compresslevel=9))
    assert path.stat().st_size < 200_000
    message = refused(path)
    assert "bomb.csv.gz" in message and ":2" in message, message


def test_far_future_date_leaves_stored_data_as_it_was(stored, tmp_path):
    # 9/2/9999 is a valid calendar date; whatever the product answers, nothing of the file may be stored
    header, rows = azure_rows()
    rows[0][header.index("Date")] = "9/2/9999"
    with pytest.raises(Exception):  # noqa: B017 - the kind of error is the next test's concern
        import_billing(write_rows(tmp_path / "far_date.csv", header, rows))


def test_far_future_date_is_a_clear_error_naming_file_line_and_column(stored, tmp_path):
    header, rows = azure_rows()
    rows[0][header.index("Date")] = "9/2/9999"
    message = refused(write_rows(tmp_path / "far_date.csv", header, rows))
    assert "far_date.csv:2:Date" in message, message


def test_far_future_date_through_the_api_is_a_400(catalog, client_as):
    header, rows = azure_rows()
    rows[0][header.index("Date")] = "9/2/9999"
    text = io.StringIO()
    csv.writer(text, lineterminator="\n").writerows([header, *rows])
    upload = io.BytesIO(text.getvalue().encode())
    upload.name = "far_date.csv"
    response = client_as("finance").post("/api/billing/imports/", {"file": upload})
    assert response.status_code == 400
    assert "far_date.csv:2:Date" in response.content.decode()


def test_gzip_of_empty_lines_expanding_over_250_times_is_refused_fast(stored, tmp_path):
    # docs/billing.md: past 64 MiB, a gzip file that expands more than 250 times is a bomb. Header + 512 MiB
    # of newlines is about 0.5 MB of gzip (ratio ~1,000): refused naming the file once it passes
    # max(64 MiB, 250 x its size), about 124 MiB here, never all 512 MiB.
    import time

    header, _ = azure_rows()
    path = tmp_path / "empty_lines.csv.gz"
    with gzip.open(path, "wb", compresslevel=9) as handle:
        handle.write((",".join(header) + "\n").encode())
        for _ in range(32):
            handle.write(b"\n" * (16 << 20))
    assert path.stat().st_size < 1_000_000
    started = time.monotonic()
    message = refused(path)
    assert time.monotonic() - started < 60
    assert message.startswith(f"{path}: over ") and "250 times the gzip file" in message, message


HOUR_5 = "2026-02-01T05:00:00Z,2026-02-01T06:00:00Z"  # the RI file's 6th covered hour: data row 8, line 9


@pytest.mark.parametrize("year", ["2300", "1600"])
def test_a_charge_period_centuries_off_is_refused_naming_line_and_column(catalog, tmp_path, year):
    text = AWS_RI.read_text()
    assert HOUR_5 in text
    path = tmp_path / f"charge_{year}.csv"
    path.write_text(text.replace(HOUR_5, HOUR_5.replace("2026", year), 1))
    message = refused(path)
    assert f"{path}:9:ChargePeriodStart" in message, message


def test_spend_review_command_refuses_a_date_past_2199_in_one_line(catalog):
    import_billing(AWS_RI)
    with pytest.raises(CommandError, match="2199"):
        review_json("2300-02-01", "2300-03-01")


INJECTION = '=HYPERLINK("http://evil.example/x","click")'


def injected_bill(tmp_path) -> Path:
    """The Azure bill, its F4/F4s line turned into an NC6s_v3 (GPU) line whose tagA is a formula."""
    header, rows = azure_rows()
    (row,) = [r for r in rows if r[header.index("MeterName")] == "F4/F4s"]
    row[header.index("MeterName")] = "NC6s v3"
    row[header.index("MeterSubCategory")] = "NCSv3 Series"
    row[header.index("Quantity")] = "2"
    row[header.index("CostInBillingCurrency")] = "6.12"
    row[header.index("Tags")] = f'"tagA": "{INJECTION.replace(chr(34), chr(92) + chr(34))}"'
    return write_rows(tmp_path / "injected.csv", header, rows)


def test_formula_in_a_tag_is_stored_as_text_and_neutralised_in_csv_and_xlsx(
    catalog, client_as, settings, tmp_path
):
    # The team tag =HYPERLINK(...) reaches the review's by-team table (2 GPU-hours of an NC6s_v3 = 2 V100
    # hours, 6.12 CAD x 0.74 = 4.53 USD). In the CSV download no cell may start with = + - @ (OWASP CSV
    # injection); in the XLSX report the team cell must be a string cell (quote prefix), not a formula.
    import openpyxl

    settings.BILLING_TAG_MAPPING = {"team": ["tagA"]}
    store_cad_rate(client_as)
    assert "inserted 27" in import_billing(injected_bill(tmp_path))
    review = review_json("2023-09-01", "2023-10-01")
    assert [t["team"] for t in review["by_team"]] == [INJECTION]  # stored exactly as written
    assert (review["totals"]["gpu_hours"], review["totals"]["effective_cost"]) == ("2.00", "4.53")

    response = client_as("finance").get("/billing/review.csv?start=2023-09-01&end=2023-10-01")
    assert response.status_code == 200
    cells = [c for row in csv.reader(io.StringIO(response.content.decode())) for c in row]
    assert any("HYPERLINK" in c for c in cells)
    # OWASP's escape: a single quote before the trigger (3 tables name the team)
    assert {c for c in cells if "HYPERLINK" in c} == {"'" + INJECTION}
    assert not [c for c in cells if c[:1] in ("=", "+", "@") or (c[:1] == "-" and not _number(c))]

    out = tmp_path / "review.xlsx"
    call_command(
        "report",
        "spend_review",
        "--from",
        "2023-09-01",
        "--to",
        "2023-10-01",
        "--format",
        "xlsx",
        "--output",
        str(out),
    )
    book = openpyxl.load_workbook(out)
    hits = [
        c
        for ws in book
        for row in ws.iter_rows()
        for c in row
        if isinstance(c.value, str) and "HYPERLINK" in c.value
    ]
    assert hits
    for cell in hits:
        assert cell.data_type == "s" and (cell.quotePrefix or cell.value.startswith("'")), (
            cell.coordinate,
            cell.value,
        )


def _number(text: str) -> bool:
    try:
        Decimal(text)
    except ArithmeticError:
        return False
    return True


# 5. The FOCUS spec's correction ledger (an illustration, not an export) -----------------------------------


def test_focus_spec_correction_ledger_is_refused_naming_the_missing_mandatory_column(stored):
    # FinOps-Open-Cost-and-Usage-Spec/FOCUS_Spec@11fab0bf5126eaf846cd3e6433aeee23c66cb2c3,
    # specification/data/correction-handling-examples/closed-billing-period/
    # scenario_1_partial_reallocation_ledger.csv: three Correction lines (-1,500 + 1,200 + 300 = 0 billed) of
    # May 2025 billed in June, but no BillingCurrency (mandatory in FOCUS 1.0-1.2) and no ProviderName. The
    # product must refuse it by name, not guess a currency.
    path = DATA / "focus_spec_correction_partial_reallocation_ledger.csv"
    frame = raw(path)
    assert len(frame) == 3 and total(frame, "BilledCost") == 0 and "BillingCurrency" not in frame
    message = refused(path)
    assert message == f"{path}:1:BillingCurrency: missing required column(s): BillingCurrency"


# 6. Attacker: spend reached by users without finance rights --------------------------------------------


@pytest.mark.parametrize("role", ["viewer", "engineer"])
def test_spend_endpoints_are_403_for_non_finance_users(catalog, client_as, role):
    import_billing(AWS_RI)
    user = client_as(role)
    period = "from=2026-02-01&to=2026-03-01"
    for url in (
        f"/api/billing/spend-review/?{period}",
        f"/api/billing/anomalies/?{period}",
        "/api/billing/spend-rows/?day=2026-02-01",
        "/api/billing/budgets/?month=2026-02",
        "/billing/?start=2026-02-01&end=2026-03-01",
        "/billing/review.csv?start=2026-02-01&end=2026-03-01",
        "/billing/review.json?start=2026-02-01&end=2026-03-01",
        "/billing/invoice/?from=2026-02&to=2026-03&format=json",
        "/billing/spend-rows/?day=2026-02-01",
    ):
        assert user.get(url).status_code == 403, url
    upload = io.BytesIO(AWS_RI.read_bytes())
    upload.name = "ri.csv"
    assert user.post("/api/billing/imports/", {"file": upload}).status_code == 403
    assert "1225.34" not in user.get(f"/api/billing/spend-review/?{period}").content.decode()


@pytest.mark.parametrize(
    ("path", "sha256"),
    [
        (AZURE_CAD, "973efb5fa30c3c99f2e4055cf9051ba0e064aea8fec37877d43b2aea9ddd03d0"),
        (AWS_RI, "95dae1159a6ba6f146094d6c5f47b8c7d6e6cc8af0c4ecbf48d1c04ca513834a"),
        (OPENCOST_MCA, "ff098de3f171b0963b1b10b14966fe582f2ad1c27c596d2dba532b296acdf043"),
        (
            DATA / "focus_spec_correction_partial_reallocation_ledger.csv",
            "cb7276d1f296e11373dbbddcab6539f0a1b8b87bdc92c648a988ab7dea45305d",
        ),
    ],
    ids=lambda v: v.name if isinstance(v, Path) else "",
)
def test_vendored_exports_are_the_recorded_bytes(path, sha256):
    # data/SOURCES.md, "Third round"
    import hashlib

    assert hashlib.sha256(path.read_bytes()).hexdigest() == sha256
