"""Outside FinOps audit at stop 46 (issue 28, "Resolved means" and items 1-5, speed targets left out).

Three public FOCUS_Spec files no other test holds, imported through the product as a user would
(`import_billing`, the API, the pages) and reconciled to the cent against this module's own DuckDB sums
over the raw file (never the product's helpers). Sources (tests/billing/outside/data/SOURCES.md,
"Stop 46"), all FinOps-Open-Cost-and-Usage-Spec/FOCUS_Spec, CC-BY-4.0 ("FinOps Open Cost and Usage
Specification (FOCUS)"):
- `focus_spec_azure_reservation_all_upfront_100pct.csv` (commit 019cb973ecf459496e51655922bd23d4b674feeb,
  specification/data/commitment_discount_scenarios/azure_reservation_all_upfront_100pct.csv): an Azure VM
  reservation, February 2026, USD: Purchase One-Time 358,021.20 (effective 0), 24 covered VM hours
  (billed 0, effective 40.87 each), 3 on-demand VM hours at 3.07. No VM size anywhere (no x_SkuDetails).
- `focus_spec_correction_partial_reallocation_delta.csv` (commit d253db17f1e7f1fc06b029d9ff0905584276e8d6,
  .../correction-handling-examples/closed-billing-period/scenario_1_partial_reallocation_delta.csv): two
  Correction lines of May 2025 usage billed on June 2025's invoice, -300 and +300.
- `focus_spec_cdf_sample_4.csv` (commit 6dd333631488db03a63947c90bf6ec95c14c134b,
  .../commitment_discount_flexibility/CSV Examples - CDF Sample 4.csv): a no-upfront commitment fee 1.50
  left unused for an hour (Unused line, effective 1.50) beside an on-demand medium VM hour at 2.00.
The last two are the spec's illustrations: no BillingCurrency (FOCUS mandates it) and no ProviderName;
the tests add `BillingCurrency=USD` to a copy and pass `--provider aws`, nothing else changed.
"""

from __future__ import annotations

import datetime as dt
import json
from decimal import ROUND_HALF_UP, Decimal
from io import StringIO
from pathlib import Path

import duckdb
import pytest
from django.core.management import call_command

from billing.invoice.lines import invoice_view
from billing.invoice.selectors import invoice_groups
from billing.review.service import _build_review, make_request
from tests.billing.catalog import make_catalog

pytestmark = pytest.mark.django_db
DATA = Path(__file__).parent / "data"
AZURE_RI = DATA / "focus_spec_azure_reservation_all_upfront_100pct.csv"
DELTA = DATA / "focus_spec_correction_partial_reallocation_delta.csv"
ORIGINAL = DATA / "focus_spec_correction_partial_reallocation_original.csv"
CDF4 = DATA / "focus_spec_cdf_sample_4.csv"


def cents(value) -> str:
    return str(Decimal(value).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


def raw_sum(path: Path, column: str, where: str = "true") -> str:
    """This module's own sum of a money column straight from the file (DuckDB, exact decimals)."""
    sql = (
        f"select coalesce(sum(nullif(nullif({column}, 'null'), '')::decimal(38, 10)), 0) "
        f"from read_csv('{path}', all_varchar=true, header=true) where {where}"
    )
    return cents(duckdb.sql(sql).fetchall()[0][0])


def with_currency(path: Path, tmp_path: Path) -> Path:
    """The published file plus BillingCurrency=USD (the spec's illustration carries none)."""
    copy = tmp_path / path.name
    lines = path.read_text().splitlines()
    copy.write_text("\n".join([lines[0] + ",BillingCurrency", *(x + ",USD" for x in lines[1:])]) + "\n")
    return copy


def import_billing(*args: str) -> str:
    out = StringIO()
    call_command("import_billing", *args, stdout=out, stderr=out)
    return out.getvalue()


def findings(review: dict) -> list[dict]:
    a = review["anomalies"]
    return a["unused_commitments"] + a["unused_non_gpu_commitments"] + a["unused_undetermined_commitments"]


# Case 1: Azure VM reservation (FOCUS 1.2), through the command, the API, the page and the invoice ----------


def test_azure_reservation_reconciles_to_the_cent_and_sizeless_vms_are_undetermined(
    django_capture_on_commit_callbacks, client_as
):
    # By DuckDB over the raw file: billed 358,021.20 + 3 x 3.07 = 358,030.41; effective 24 x 40.87 + 9.21
    # = 990.09; Purchase billed 358,021.20 / effective 0; usage billed 9.21 / effective 990.09. No row names
    # a VM size, so none can be called GPU or non-GPU: the review's undetermined bucket holds 990.09,
    # non-GPU 0.00, GPU 0.00. The reservation is 100% used: 980.88 used, 0 unused, no finding.
    billed, effective = raw_sum(AZURE_RI, "BilledCost"), raw_sum(AZURE_RI, "EffectiveCost")
    purchase = raw_sum(AZURE_RI, "BilledCost", "ChargeCategory = 'Purchase'")
    usage_billed = raw_sum(AZURE_RI, "BilledCost", "ChargeCategory = 'Usage'")
    used = raw_sum(AZURE_RI, "EffectiveCost", "CommitmentDiscountStatus = 'Used'")
    assert (billed, effective, purchase, usage_billed, used) == (
        "358030.41",
        "990.09",
        "358021.20",
        "9.21",
        "980.88",
    )
    make_catalog()
    with django_capture_on_commit_callbacks(execute=True):
        printed = import_billing(str(AZURE_RI), "--format", "focus")
    assert "inserted 28" in printed and "rejected 0" in printed
    february = {"start": dt.date(2026, 2, 1), "end": dt.date(2026, 3, 1)}
    review = _build_review(make_request(**february))
    assert (review["totals"]["effective_cost"], review["totals"]["gpu_hours"]) == ("0.00", "0.00")
    assert (review["undetermined_cost"], review["non_gpu_cost"]) == (effective, "0.00")
    assert review["warnings"] == [] and review["fx_missing"] == [] and findings(review) == []
    totals = review["commitments"]["totals"]
    assert (totals["used_cost"], totals["unused_cost"], totals["utilization_pct"]) == (used, "0.00", "100.0")
    view = invoice_view(invoice_groups(dt.date(2026, 2, 1), dt.date(2026, 3, 1)))
    (invoice,) = view["invoices"]
    assert (invoice["provider"], invoice["billing_period"], invoice["currency"]) == (
        "azure",
        "2026-02",
        "USD",
    )
    assert (invoice["billed_total"], invoice["effective_total"]) == (billed, effective)
    lines = {x["line"]: (x["billed_cost"], x["effective_cost"]) for x in invoice["lines"]}
    assert lines == {"usage": (usage_billed, effective), "purchase": (purchase, "0.00")}
    assert view["closed_period_corrections"] == []
    # the API and the page, as finance; spend never reaches a viewer or an engineer without a grant
    query = "from=2026-02-01&to=2026-03-01"
    finance = client_as("finance")
    api = finance.get(f"/api/billing/spend-review/?{query}")
    assert api.status_code == 200 and api.json()["undetermined_cost"] == effective
    assert finance.get("/billing/invoice/?start=2026-02-01&end=2026-03-01").status_code == 200
    for role in ("viewer", "engineer"):
        other = client_as(role)
        assert other.get(f"/api/billing/spend-review/?{query}").status_code == 403
        assert other.get("/billing/invoice/").status_code == 403
    # the command line's review, as finance reads it
    out = StringIO()
    call_command("spend_review", "--from", "2026-02-01", "--to", "2026-03-01", "--format", "json", stdout=out)
    assert json.loads(out.getvalue())["undetermined_cost"] == effective


# Case 2: a correction to a closed billing period (the spec's reallocation delta) --------------------------


def test_closed_period_reallocation_delta_is_flagged_and_nets_to_zero(
    tmp_path, django_capture_on_commit_callbacks
):
    # By DuckDB over the raw files: the original May 2025 line billed 1,500 (its own invoice, 2025-05);
    # the delta's two Correction lines, charged 2025-05-01 and billed on June 2025's invoice: -300 + 300
    # = 0.00 billed and effective, 2 rows. The invoice view must flag June's bill as correcting May
    # (2 rows, 0.00), and May's spend stays 1,500.00 (the reallocation moves cost between resources).
    assert (raw_sum(DELTA, "BilledCost"), raw_sum(DELTA, "EffectiveCost")) == ("0.00", "0.00")
    assert raw_sum(DELTA, "BilledCost", "BilledCost::decimal(18,2) > 0") == "300.00"
    assert raw_sum(ORIGINAL, "EffectiveCost") == "1500.00"
    make_catalog()
    with django_capture_on_commit_callbacks(execute=True):
        for path in (ORIGINAL, DELTA):
            printed = import_billing(
                str(with_currency(path, tmp_path)), "--format", "focus", "--provider", "aws"
            )
            assert "rejected 0" in printed, printed
    view = invoice_view(invoice_groups(dt.date(2025, 5, 1), dt.date(2025, 7, 1)))
    assert view["closed_period_corrections"] == [
        {
            "provider": "aws",
            "billing_period": "2025-06",
            "corrects_period": "2025-05",
            "currency": "USD",
            "rows": 2,
            "billed_cost": "0.00",
            "effective_cost": "0.00",
        }
    ]
    totals = {i["billing_period"]: (i["billed_total"], i["effective_total"]) for i in view["invoices"]}
    assert totals == {"2025-05": ("1500.00", "1500.00"), "2025-06": ("0.00", "0.00")}
    may = _build_review(make_request(start=dt.date(2025, 5, 1), end=dt.date(2025, 6, 1)))
    every = sum(
        Decimal(may[k]) for k in ("non_gpu_cost", "undetermined_cost", "unattributed_commitment_cost")
    ) + Decimal(may["totals"]["effective_cost"])
    assert cents(every) == "1500.00"


# Case 3: an unused no-upfront commitment hour is one finding, and the invoice ties -------------------------


def test_cdf_sample_4_unused_fee_is_one_finding_and_the_invoice_ties(
    tmp_path, django_capture_on_commit_callbacks
):
    # By DuckDB over the raw file: billed 1.50 (fee) + 0 + 2.00 = 3.50; effective 0 + 1.50 (Unused) + 2.00
    # = 3.50; Purchase billed 1.50 effective 0.00; Usage billed 2.00 effective 3.50. One unused finding,
    # the commitment `<commitment-discount-id>`, 1 day, 1.50; the review's effective spend adds up to 3.50.
    assert (raw_sum(CDF4, "BilledCost"), raw_sum(CDF4, "EffectiveCost")) == ("3.50", "3.50")
    unused = raw_sum(CDF4, "EffectiveCost", "CommitmentDiscountStatus = 'Unused'")
    assert unused == "1.50"
    make_catalog()
    with django_capture_on_commit_callbacks(execute=True):
        printed = import_billing(str(with_currency(CDF4, tmp_path)), "--format", "focus", "--provider", "aws")
    assert "rejected 0" in printed, printed
    january = {"start": dt.date(2023, 1, 1), "end": dt.date(2023, 2, 1)}
    review = _build_review(make_request(**january))
    assert [(f["commitment_id"], f["days_unused"], f["unused_cost"]) for f in findings(review)] == [
        ("<commitment-discount-id>", 1, unused)
    ]
    assert review["anomalies"]["found"] == 0
    every = sum(
        Decimal(review[k])
        for k in (
            "non_gpu_cost",
            "undetermined_cost",
            "unattributed_commitment_cost",
            "unused_commitment_cost",
        )
    ) + Decimal(review["totals"]["effective_cost"])
    assert cents(every) == "3.50"
    (invoice,) = invoice_view(invoice_groups(dt.date(2023, 1, 1), dt.date(2023, 2, 1)))["invoices"]
    assert (invoice["billed_total"], invoice["effective_total"]) == ("3.50", "3.50")
    lines = {x["line"]: (x["billed_cost"], x["effective_cost"]) for x in invoice["lines"]}
    assert lines == {"usage": ("2.00", "3.50"), "purchase": ("1.50", "0.00")}


# Case 4: the same public FOCUS file delivered to S3 (moto), picked up by the beat task run in-process ---------


BUCKET, EXPORT = "focus-exports", "azure-focus"


def deliver(s3, month: str, execution_id: str, body: bytes) -> None:
    """One FOCUS export refresh laid out as AWS Data Exports deliver (data file, then the manifest)."""
    data_key = f"exports/{EXPORT}/data/BILLING_PERIOD={month}/{execution_id}/{EXPORT}-00001.csv"
    s3.put_object(Bucket=BUCKET, Key=data_key, Body=body)
    manifest = {
        "executionId": execution_id,
        "exportName": EXPORT,
        "billingPeriod": {"start": f"{month}-01T00:00:00.000Z"},
        "dataFiles": [f"s3://{BUCKET}/{data_key}"],
    }
    s3.put_object(
        Bucket=BUCKET,
        Key=f"exports/{EXPORT}/metadata/BILLING_PERIOD={month}/{EXPORT}-Manifest.json",
        Body=json.dumps(manifest).encode(),
    )


def test_scheduled_focus_delivery_imports_once_and_a_restatement_replaces_the_month(
    monkeypatch, tmp_path, viewer_client, django_capture_on_commit_callbacks
):
    # Delivery exec-1: the whole Azure file (billed 358,030.41, effective 990.09, as case 1). Restated
    # exec-2: its first 26 lines only (Purchase, 24 covered hours, the first on-demand hour): by DuckDB over
    # that copy, billed 358,021.20 + 3.07 = 358,024.27, effective 980.88 + 3.07 = 983.95. The month must
    # read exec-2's figures only, exec-2 flagged restated and exec-1 replaced, on /status/ too.
    import boto3
    from moto import mock_aws

    from billing.imports.scheduled_tasks import import_s3_exports
    from billing.models import BillingExportDelivery, BillingExportSource

    for name, value in {
        "AWS_ACCESS_KEY_ID": "x",
        "AWS_SECRET_ACCESS_KEY": "x",
        "AWS_DEFAULT_REGION": "us-east-1",
    }.items():
        monkeypatch.setenv(name, value)
    whole = AZURE_RI.read_bytes()
    restated = b"".join(whole.splitlines(keepends=True)[:27])  # header + 26 lines
    copy = tmp_path / "restated.csv"
    copy.write_bytes(restated)
    assert (raw_sum(copy, "BilledCost"), raw_sum(copy, "EffectiveCost")) == ("358024.27", "983.95")
    make_catalog()
    with mock_aws():
        s3 = boto3.client("s3", region_name="us-east-1")
        s3.create_bucket(Bucket=BUCKET)
        BillingExportSource.objects.create(
            name=EXPORT,
            export_format="focus",
            provider="azure",
            bucket=BUCKET,
            prefix=f"exports/{EXPORT}/",
            enabled=True,
        )
        deliver(s3, "2026-02", "exec-1", whole)
        with django_capture_on_commit_callbacks(execute=True):
            first = import_s3_exports.apply().get()["sources"][0]
        assert first["imported"] == ["2026-02 exec-1"]
        with django_capture_on_commit_callbacks(execute=True):
            again = import_s3_exports.apply().get()["sources"][0]
        assert again["imported"] == [] and again["restated"] == []
        (invoice,) = invoice_view(invoice_groups(dt.date(2026, 2, 1), dt.date(2026, 3, 1)))["invoices"]
        assert (invoice["billed_total"], invoice["effective_total"]) == ("358030.41", "990.09")
        deliver(s3, "2026-02", "exec-2", restated)
        with django_capture_on_commit_callbacks(execute=True):
            third = import_s3_exports.apply().get()["sources"][0]
        assert third["restated"] == ["2026-02 exec-2"]
    (invoice,) = invoice_view(invoice_groups(dt.date(2026, 2, 1), dt.date(2026, 3, 1)))["invoices"]
    assert (invoice["billed_total"], invoice["effective_total"]) == ("358024.27", "983.95")
    review = _build_review(make_request(start=dt.date(2026, 2, 1), end=dt.date(2026, 3, 1)))
    assert review["undetermined_cost"] == "983.95"
    old, new = BillingExportDelivery.objects.order_by("imported_at")
    assert (old.replaced, new.restated) == (True, True)
    html = viewer_client.get("/status/").content.decode()
    section = html[html.index('id="billing-exports"') :]
    assert EXPORT in section and "restated" in section and "983.95" not in html


# Case 5: every public bill the tests hold, through the store, against the file's own sums ----------------

FIXTURES = Path(__file__).parent.parent / "fixtures"
NUM = "coalesce(sum(try_cast(nullif(nullif(nullif(\"{c}\", 'null'), '(null)'), '') as decimal(38, 10))), 0)"
FOCUS_SUMS = (
    "select {cur}, "
    + NUM.format(c="{billed}")
    + ", "
    + NUM.format(c="{effective}")
    + " from {rel} group by 1"
)
# (file, format, --provider, needs BillingCurrency=USD, billed column, effective column, currency column)
SAMPLES = [
    (FIXTURES / "aws_focus_export.csv", "focus", "", False),
    (FIXTURES / "azure_focus_export.csv", "focus", "", False),
    (FIXTURES / "gcp_focus_export.csv", "focus", "", False),
    (FIXTURES / "oci_focus_export.csv", "focus", "", False),
    (FIXTURES / "focus12_ec2_instance_savings_plan_50pct.csv", "focus", "", False),
    (FIXTURES / "focus12_savings_plan_50pct_partly_gpu.csv", "focus", "", False),
    (DATA / "focus10_sample_maxjahn.csv.gz", "focus", "", False),
    (DATA / "focus_spec_aws_ri_partial_upfront_100pct.csv", "focus", "", False),
    (DATA / "focus_spec_aws_savings_plan_all_upfront_0pct.csv", "focus", "", False),
    (DATA / "focus_spec_aws_underutilized_50pct.csv", "focus", "", False),
    (DATA / "focus_spec_azure_reservation_all_upfront_100pct.csv", "focus", "", False),
    (DATA / "focus_spec_gcp_resource_cud_all_upfront_100pct.csv", "focus", "", False),
    (DATA / "focus_spec_cdf_sample_2.csv", "focus", "aws", True),
    (DATA / "focus_spec_cdf_sample_3.csv", "focus", "aws", True),
    (DATA / "focus_spec_cdf_sample_4.csv", "focus", "aws", True),
    (DATA / "focus_spec_correction_itemized_cost_only_ledger.csv", "focus", "aws", True),
    (DATA / "focus_spec_correction_late_arriving_usage_delta.csv", "focus", "aws", True),
    (DATA / "focus_spec_correction_late_arriving_usage_ledger.csv", "focus", "aws", True),
    (DATA / "focus_spec_correction_partial_reallocation_delta.csv", "focus", "aws", True),
    (DATA / "focus_spec_correction_partial_reallocation_ledger.csv", "focus", "aws", True),
    (DATA / "focus_spec_correction_partial_reallocation_original.csv", "focus", "aws", True),
    (DATA / "aws_legacy_cur_focus_converters.csv.gz", "cur", "", False),
    (DATA / "azure_ea_actual_cost_small.csv", "azure", "", False),
    (DATA / "azure_ea_amortized_cost_small.csv", "azure", "", False),
    (DATA / "azure_ea_cad_focus_converters.csv", "azure", "", False),
    (DATA / "opencost_azure_mca_test_billing.csv", "azure", "", False),
]


def own_sums(path: Path) -> dict[str, tuple[str, str]]:
    """{currency: (billed, effective)} from the raw file, as its provider defines them (this module's own
    SQL; FOCUS: BilledCost / EffectiveCost; legacy CUR: lineItem/UnblendedCost; OCI: cost/myCost;
    Azure: Cost / CostInBillingCurrency, billed and effective alike, with the commitment rules below)."""
    rel = f"read_csv('{path}', all_varchar=true, header=true)"
    cols = {c.lower().lstrip("\ufeff"): c for c in duckdb.sql(f"select * from {rel} limit 0").columns}
    if "billedcost" in cols or "billed_cost" in cols:
        snake = "billed_cost" in cols
        cur = cols.get("billing_currency" if snake else "billingcurrency") or cols.get("billedcurrency")
        sql = FOCUS_SUMS.format(
            cur=f'"{cur}"' if cur else "'USD'",
            billed=cols["billed_cost" if snake else "billedcost"],
            effective=cols["effective_cost" if snake else "effectivecost"],
            rel=rel,
        )
    elif "lineitem/unblendedcost" in cols:
        sql = FOCUS_SUMS.format(
            cur='"lineItem/CurrencyCode"',
            billed="lineItem/UnblendedCost",
            effective="lineItem/UnblendedCost",
            rel=rel,
        )
    elif "cost/mycost" in cols:
        sql = FOCUS_SUMS.format(
            cur='"cost/currencyCode"', billed="cost/myCost", effective="cost/myCost", rel=rel
        )
    else:  # Azure cost details: actual cost is the invoice; the amortized file's covered usage bills 0
        cost = cols.get("costinbillingcurrency") or cols["cost"]
        cur = cols.get("billingcurrency") or cols.get("billingcurrencycode")
        model = f"coalesce(\"{cols['pricingmodel']}\", '')" if "pricingmodel" in cols else "''"
        charge = f'"{cols["chargetype"]}"'
        billed_rule = (
            f"case when {model} in ('Reservation', 'SavingsPlan') and {charge} = 'Usage' "
            f"or {charge} in ('UnusedReservation', 'UnusedSavingsPlan') then 0 else 1 end"
        )
        effective_rule = f"case when {charge} in ('Purchase', 'Refund') and {model} in ('Reservation', 'SavingsPlan') then 0 else 1 end"
        value = f"coalesce(try_cast(nullif(\"{cost}\", '') as decimal(38, 10)), 0)"
        sql = (
            f'select "{cur}", coalesce(sum({value} * {billed_rule}), 0), coalesce(sum({value} * {effective_rule}), 0) '
            f"from {rel} group by 1"
        )
    return {row[0]: (cents(row[1]), cents(row[2])) for row in duckdb.sql(sql).fetchall()}


def store_sums() -> dict[str, tuple[str, str]]:
    """The store's sums under the invoice view (review_sql.INVOICE_GROUPS over every import's dataset),
    every billing period, unrounded until the end: {currency: (billed, effective)}."""
    found: dict[str, list[Decimal]] = {}
    for group in invoice_groups(dt.date(2000, 1, 1), dt.date(2100, 1, 1)):
        sums = found.setdefault(group["currency"], [Decimal(0), Decimal(0)])
        sums[0] += group["billed"] or 0
        sums[1] += group["effective"] or 0
    return {k: (cents(v[0]), cents(v[1])) for k, v in found.items()}


@pytest.mark.parametrize(
    "path, fmt, provider, add_currency", SAMPLES, ids=[s[0].name.split(".")[0] for s in SAMPLES]
)
def test_every_public_bill_the_tests_hold_reconciles_through_the_store(
    path, fmt, provider, add_currency, tmp_path, django_capture_on_commit_callbacks
):
    source = path
    if path.name == "focus_spec_aws_underutilized_50pct.csv":  # its draft header (see stop 44's module)
        source = tmp_path / path.name
        source.write_bytes(path.read_bytes().replace(b"BilledCurrency", b"BillingCurrency", 1))
    elif add_currency:
        source = with_currency(path, tmp_path)
    args = [str(source)] + (["--format", fmt] if fmt else []) + (["--provider", provider] if provider else [])
    make_catalog()
    with django_capture_on_commit_callbacks(execute=True):
        printed = import_billing(*args)
    assert store_sums() == own_sums(path), printed


# Case 6: Spark SQL (local mode) over the public FOCUS 1.0 sample equals DuckDB and the file's own sums ----

MAXJAHN = DATA / "focus10_sample_maxjahn.csv.gz"


@pytest.mark.spark
def test_spark_equals_duckdb_and_the_files_own_gpu_sums_on_the_public_focus_sample(
    settings, tmp_path, django_capture_on_commit_callbacks
):
    # maxjahn/FOCUS-Sample-Data@8ac5ea6c FOCUS-1.0/focus_sample.csv (CC-BY-4.0): its 8 g5.4xlarge lines
    # (1 NVIDIA A10G each) of September 2024. By DuckDB over the raw file: their EffectiveCost and
    # ConsumedQuantity sums are the review's GPU effective cost and GPU-hours; Spark, running the same
    # statements translated by sqlglot over the same Parquet, must give DuckDB's integers.
    import shutil as _shutil

    if not _shutil.which("java"):
        pytest.fail("no Java runtime: the Spark check cannot run")
    from pyspark.sql import SparkSession

    from billing.review import selectors
    from billing.storage import ParquetSpendStore
    from billing.storage.duckdb_review import review_sums
    from billing.storage.translated_review import review_sums_with
    from pricing.models import GpuModel, InstanceType, Provider

    g5 = (
        f"from read_csv('{MAXJAHN}', all_varchar=true) where ChargeDescription like '%g5.4xlarge%' "
        "and ChargePeriodStart >= '2024-09-01' and ChargePeriodStart < '2024-10-01'"
    )
    cost, hours, lines = duckdb.sql(
        f"select sum(EffectiveCost::decimal(38,10)), sum(ConsumedQuantity::decimal(38,10)), count(*) {g5}"
    ).fetchall()[0]
    assert lines == 8
    settings.BILLING_TAG_MAPPING = {"team": ["business_unit"]}
    make_catalog()
    a10g = GpuModel.objects.create(
        slug="a10g",
        name="A10G",
        vendor="NVIDIA",
        architecture="Ampere",
        memory_gb=24,
        memory_bandwidth_gbps=600,
    )
    InstanceType.objects.create(
        provider=Provider.objects.get(slug="aws"), name="g5.4xlarge", gpu=a10g, gpu_name="a10g", gpu_count=1
    )
    with django_capture_on_commit_callbacks(execute=True):
        assert "rejected 0" in import_billing(str(MAXJAHN), "--format", "focus")
    september = (dt.date(2024, 9, 1), dt.date(2024, 10, 1))
    store = ParquetSpendStore(tmp_path / "store")
    store.write(selectors.spend_frame(make_request(start=september[0], end=september[1])))
    expected = review_sums(store, *september)
    assert (cents(Decimal(expected["gpu"][1]).scaleb(-6)), cents(Decimal(expected["gpu"][3]).scaleb(-6))) == (
        cents(cost),
        cents(hours),
    )
    spark = (
        SparkSession.builder.master("local[1]")
        .appName("fin46")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.shuffle.partitions", "1")
        .getOrCreate()
    )
    try:
        spark.read.parquet(*[str(p) for p in store.files(*september)]).createOrReplaceTempView("spend_rows")
        got = review_sums_with(
            lambda sql: [tuple(r) for r in spark.sql(sql).collect()], "spark", *september, ()
        )
    finally:
        spark.stop()
    assert got == expected
    review = _build_review(make_request(start=september[0], end=september[1]))
    assert (review["totals"]["effective_cost"], review["totals"]["gpu_hours"]) == (cents(cost), cents(hours))
