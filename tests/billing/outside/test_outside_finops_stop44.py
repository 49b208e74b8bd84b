"""Outside FinOps audit at stop 44 (issue 28 item 1 after sql44): the review's totals and breakdowns summed
by review_sql in DuckDB over the frame the review prepared (billing/storage/frame_sql.py), the
unused-commitment findings as one statement (review_sql.UNUSED_FINDINGS), the capacity plan's busy series
for sampled resources summed in SQL (demand_sql.SERIES keeps the resource only where samples exist).

Each figure the product gives is checked against a computation of this module's own, by hand in the
comments (money to the cent).

Bills:
- NEW, no other test holds it: `focus_spec_aws_underutilized_50pct.csv`,
  FinOps-Open-Cost-and-Usage-Spec/FOCUS_Spec@3e50ea8df5a8258b3ec5f62b8256fa85aaaede56
  specification/data/commitment_discount_scenarios/aws_underutilized_50pct.csv (CC-BY-4.0, "FinOps Open
  Cost and Usage Specification (FOCUS)"; tests/billing/outside/data/SOURCES.md, "Stop 44"). An EC2
  Instance Savings Plan, January 2026, USD: Purchase One-Time billed 693,000.00 (effective 0); 12 Used
  hours 2026-01-01T00..12 (billed 0, effective 79.11, list 118.67 each); 12 Unused hours T12..24 (billed 0,
  effective 79.11 each); 12 on-demand lines: S3 10.14 + 4.14 + 9.25, RDS 3 x 0.15, Lambda 3 x 0.01,
  DynamoDB 0.01 + 0.02 + 0.02 = 24.06. The file names its currency column `BilledCurrency` (the draft's
  name; FOCUS 1.0+ calls it BillingCurrency, which the importer requires: the whole file is rejected as
  is), so the tests import a copy with that one header renamed. No team tag, no x_UsageType.
- tests/billing/fixtures/azure_focus_export.csv (the project's EUR fixture: ND96isr H100 v5 1 h EUR 90.00,
  8 GPU-hours, storage EUR 10.00, May 2026) and aws_focus_export.csv (p5.48xlarge 2 h 110.08 team ml,
  g6e.xlarge spot 0.92 team research, EBS 4.00 ml, tax 1.20; May 2026, USD), for the currency mix and the
  team scope.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest
from django.core.exceptions import PermissionDenied
from django.test import Client

from billing.imports.importer import import_files
from billing.models import SpendGrant
from billing.review import selectors
from billing.review.engine import non_gpu_breakdown
from billing.review.service import _build_review, make_request
from billing.storage import ParquetSpendStore, review_sql
from billing.storage.translated_review import scoped_statements, translate
from planning.history import PlanScope, plan_rows, plan_scope_for_user
from pricing.models import FxRate, GpuModel, InstanceType, Provider
from tests.billing.catalog import make_catalog

pytestmark = pytest.mark.django_db
DATA = Path(__file__).parent / "data"
FIXTURES = Path(__file__).parent.parent / "fixtures"
UNDERUTILIZED = DATA / "focus_spec_aws_underutilized_50pct.csv"
PLAN = "arn:aws:savingsplans::123456789012:savingsplan/sp-abc123def456"
JANUARY = {"start": dt.date(2026, 1, 1), "end": dt.date(2026, 2, 1)}


def underutilized(tmp_path: Path) -> Path:
    """The FOCUS_Spec file with its `BilledCurrency` header named BillingCurrency (nothing else changed)."""
    path = tmp_path / "aws_underutilized_50pct.csv"
    path.write_bytes(UNDERUTILIZED.read_bytes().replace(b"BilledCurrency", b"BillingCurrency", 1))
    return path


def imported(*paths: Path, capture) -> None:
    with capture(execute=True):
        result = import_files(list(paths), fmt="focus")
    assert not result.errors, result.errors


def all_findings(review: dict) -> list[dict]:
    anomalies = review["anomalies"]
    return (
        anomalies["unused_commitments"]
        + anomalies["unused_non_gpu_commitments"]
        + anomalies["unused_undetermined_commitments"]
    )


# Case 1: FOCUS_Spec aws_underutilized_50pct, the review by hand ---------------------------------------------


def test_underutilized_savings_plan_review_and_its_one_unused_finding(
    tmp_path, django_capture_on_commit_callbacks
):
    # By hand (FOCUS_Spec@3e50ea8d aws_underutilized_50pct.csv): used 12 x 79.11 = 949.32; unused 12 x 79.11
    # = 949.32 (utilization 949.32 / 1,898.64 = 50.0%, the file's name); on demand 10.14 + 4.14 + 9.25 +
    # 0.45 + 0.03 + 0.05 = 24.06. All effective spend: 949.32 + 949.32 + 24.06 = 1,922.70.
    # No line names a GPU: the GPU totals and every breakdown are 0 / empty. The used EC2 hours carry no
    # instance type (the illustration has no x_UsageType): gpu_scope.py's rule treats an AWS Compute line
    # without one as non-GPU (AWS's own exports name the instance of every instance-hour), so non-GPU is
    # 949.32 + 24.06 = 973.38 and the unused 949.32, which no GPU row used, is unattributed.
    # The unused-commitment finding (review_sql.UNUSED_FINDINGS): one, sp-abc123def456, 1 day (2026-01-01),
    # 949.32, "coverage undetermined"; never 12 hourly anomalies.
    make_catalog()
    imported(underutilized(tmp_path), capture=django_capture_on_commit_callbacks)
    review = _build_review(make_request(**JANUARY))
    assert review["totals"] == {
        "billed_cost": "0.00",
        "effective_cost": "0.00",
        "list_cost": "0.00",
        "gpu_hours": "0.00",
        "effective_cost_per_gpu_hour": None,
    }
    assert review["by_month"] == [] and review["by_team"] == [] and review["by_gpu"] == []
    assert (review["non_gpu_cost"], review["unattributed_commitment_cost"], review["undetermined_cost"]) == (
        "973.38",
        "949.32",
        "0.00",
    )
    every = sum(
        Decimal(review[k])
        for k in (
            "non_gpu_cost",
            "unattributed_commitment_cost",
            "undetermined_cost",
            "unused_commitment_cost",
        )
    ) + Decimal(review["totals"]["effective_cost"])
    assert every == Decimal("1922.70")
    totals = review["commitments"]["totals"]
    assert (
        totals["used_cost"],
        totals["unused_cost"],
        totals["committed_cost"],
        totals["utilization_pct"],
    ) == (
        "949.32",
        "949.32",
        "1898.64",
        "50.0",
    )
    assert all_findings(review) == [
        {
            "commitment_id": PLAN,
            "days_unused": 1,
            "first_day": "2026-01-01",
            "last_day": "2026-01-01",
            "unused_cost": "949.32",
            "coverage": "coverage undetermined",
        }
    ]
    assert review["anomalies"]["found"] == 0
    # the report's non-GPU breakdown (engine.non_gpu_breakdown: review_sql.NON_GPU_BREAKDOWN since sqlb44):
    # compute 949.32 + Lambda 0.03 = 949.35, storage 23.53, database 0.45 + 0.05 = 0.50; sum 973.38
    request = make_request(**JANUARY)
    lines = {
        x["charge"]: x["effective_cost"] for x in non_gpu_breakdown(selectors.spend_frame(request), request)
    }
    assert {k: v for k, v in lines.items() if v != "0.00"} == {
        "Compute": "949.35",
        "Storage": "23.53",
        "Database": "0.50",
    }


# Case 2: the public USD bill beside the project's EUR bill, each month at its own rate --------------------


@pytest.fixture
def azure_catalog():
    make_catalog()
    h100 = GpuModel.objects.get(slug="h100-sxm5-80gb")
    provider, _ = Provider.objects.get_or_create(slug="azure", defaults={"name": "azure"})
    InstanceType.objects.create(
        provider=provider, name="Standard_ND96isr_H100_v5", gpu=h100, gpu_name="h100", gpu_count=8
    )


def test_usd_and_eur_bills_together_convert_at_each_charge_months_rate(
    azure_catalog, tmp_path, django_capture_on_commit_callbacks, client_as
):
    # Rates (1 EUR = x USD): 1.05 dated 2026-01-20 (January's: the newest on or before 01-31), 1.20 dated
    # 2026-05-29 (May's). January's USD lines are the public bill; May's EUR lines the fixture.
    # In USD, January to June: GPU = the H100 hour 90.00 x 1.20 = 108.00 (May), 8 GPU-hours; non-GPU =
    # 973.38 (case 1) + 10.00 x 1.20 = 12.00 -> 985.38; the unused finding 949.32 as billed (USD).
    # In EUR: January's USD lines at 1 / 1.05: non-GPU 973.38 / 1.05 = 927.0286 -> 927.03, plus 10.00 EUR
    # -> 937.03; the finding 949.32 / 1.05 = 904.1143 -> 904.11 (May's 1.20 would give 791.10: wrong month).
    # GPU 90.00 EUR as billed. Neither the page nor the review breaks on the mix.
    for day, value in (("2026-01-20", "1.05"), ("2026-05-29", "1.20")):
        FxRate.objects.create(currency="EUR", base="USD", rate=value, as_of=day, source="test")
    imported(
        underutilized(tmp_path),
        FIXTURES / "azure_focus_export.csv",
        capture=django_capture_on_commit_callbacks,
    )
    period = {"start": dt.date(2026, 1, 1), "end": dt.date(2026, 7, 1)}
    usd = _build_review(make_request(**period))
    assert (usd["totals"]["effective_cost"], usd["totals"]["gpu_hours"]) == ("108.00", "8.00")
    assert [(m["month"], m["effective_cost"]) for m in usd["by_month"]] == [("2026-05", "108.00")]
    assert usd["non_gpu_cost"] == "985.38" and usd["fx_missing"] == [] and usd["warnings"] == []
    assert [f["unused_cost"] for f in all_findings(usd)] == ["949.32"]
    eur = _build_review(make_request(currency="EUR", **period))
    assert (eur["totals"]["effective_cost"], eur["non_gpu_cost"]) == ("90.00", "937.03")
    assert eur["unattributed_commitment_cost"] == "904.11"
    assert [(f["commitment_id"], f["unused_cost"]) for f in all_findings(eur)] == [(PLAN, "904.11")]
    assert eur["warnings"] == []
    finance = client_as("finance")
    assert finance.get("/billing/?start=2026-01-01&end=2026-07-01").status_code == 200
    assert finance.get("/billing/?start=2026-01-01&end=2026-07-01&currency=EUR").status_code == 200
    body = finance.get("/api/billing/spend-review/?from=2026-01-01&to=2026-07-01").json()
    assert body["totals"]["effective_cost"] == "108.00"


# Case 3: the team scope in the review's and the plan's SQL (sampled resources: sql44's new path) --------


def test_research_sees_only_research_in_review_and_plan_and_ml_is_refused(
    tmp_path, team_named, user_with_role, django_capture_on_commit_callbacks
):
    # aws_focus_export.csv plus one DCGM sample of ml's p5 (i-0awsp5): the plan's SQL keeps that resource's
    # lines by resource (demand_sql KEYS resource_id). A research engineer granted research's spend sees
    # research's g6e spot hour only: review GPU effective 0.92, 1 GPU-hour; the plan's rows are research's
    # (one row, 1 GPU-hour), none of ml's resource, though the sampled list holds it. team=ml: 403 on the
    # API and the page, PermissionDenied for the plan's scope. Finance's plan: ml's 16 GPU-hours on
    # i-0awsp5 (8 GPUs x 2 h) and research's 1 (17 in all).
    make_catalog()
    imported(FIXTURES / "aws_focus_export.csv", capture=django_capture_on_commit_callbacks)
    util = tmp_path / "util.csv"
    util.write_text("timestamp,resource_id,gpu,DCGM_FI_DEV_GPU_UTIL\n2026-05-01T00:00:00Z,i-0awsp5,0,40\n")
    assert not import_files([util], fmt="utilization").errors
    research = team_named("research")
    SpendGrant.objects.create(team=research, granted_by=user_with_role("admin"))
    user = user_with_role("engineer", team=research)
    engineer = Client()
    engineer.force_login(user)
    may = "from=2026-05-01&to=2026-06-01"
    body = engineer.get(f"/api/billing/spend-review/?{may}").json()
    assert (body["totals"]["effective_cost"], body["totals"]["gpu_hours"]) == ("0.92", "1.00")
    assert [t["team"] for t in body["by_team"]] == ["research"] and "110.08" not in json.dumps(body)
    assert engineer.get(f"/api/billing/spend-review/?{may}&team=ml").status_code == 403
    assert engineer.get("/billing/?start=2026-05-01&end=2026-06-01&team=ml").status_code == 403
    whole = PlanScope(start=dt.date(2026, 5, 1), end=dt.date(2026, 6, 1))
    with pytest.raises(PermissionDenied):
        plan_scope_for_user(user, PlanScope(start=whole.start, end=whole.end, teams=("ml",)))
    rows = plan_rows(plan_scope_for_user(user, whole))
    assert set(rows.team) == {"research"} and "i-0awsp5" not in set(rows.resource_id)
    assert round(float(rows.gpu_hours.sum()), 6) == 1.0
    everything = plan_rows(whole)
    by_resource = {r: float(h) for r, h in zip(everything.resource_id, everything.gpu_hours, strict=True)}
    assert by_resource.get("i-0awsp5") == 16.0 and round(float(everything.gpu_hours.sum()), 6) == 17.0


# Case 4: the new statements on Spark local mode over the public bill, equal to DuckDB and to the hand sums --


@pytest.fixture(scope="module")
def spark():
    try:
        import pyspark  # noqa: F401
    except ImportError:
        missing = "pyspark is not installed"
    else:
        missing = "" if shutil.which("java") else "no Java runtime"
    if missing:
        if os.environ.get("REQUIRE_SERVICES") == "1":
            pytest.fail(missing)
        pytest.skip(missing)
    from pyspark.sql import SparkSession

    session = (
        SparkSession.builder.master("local[1]")
        .appName("outside-stop44")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.shuffle.partitions", "1")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.mark.spark
def test_spark_runs_sql44s_statements_on_the_public_bill_to_the_cent(
    spark, tmp_path, django_capture_on_commit_callbacks
):
    # Over the public bill's Parquet (all its lines: no team, no GPU), translated by sqlglot to Spark SQL:
    # unused sums (GPU_SUMS with UNUSED): billed 0, effective 12 x 79,110,000 = 949,320,000 micro-USD, list 0
    # (the Unused lines have no ListCost), GPU-hours 0; UNUSED_FINDINGS: (sp-abc123def456, 1 day,
    # 2026-01-01, 2026-01-01, 949,320,000); MONTH_CATEGORIES over every line: 2026-01 committed 949.32 +
    # 949.32 + 0 (purchase) = 1,898,640,000 and on demand 24,060,000. Spark's answers equal DuckDB's.
    make_catalog()
    imported(underutilized(tmp_path), capture=django_capture_on_commit_callbacks)
    store = ParquetSpendStore(tmp_path / "store")
    store.write(selectors.spend_frame(make_request(**JANUARY)))
    files = [str(path) for path in store.files(JANUARY["start"], JANUARY["end"])]
    spark.read.parquet(*files).createOrReplaceTempView("spend_rows")
    connection = duckdb.connect()
    connection.execute("SET TimeZone = 'UTC'")
    connection.read_parquet(files).create_view("spend_rows")
    # UNUSED_FINDINGS has no WHERE of its own: the review registers only the unused rows as `spend`
    # (sections.unused_commitments), so here `spend` is the period's unused lines; the other two read every line
    unused_only = {
        "unused": review_sql.GPU_SUMS.format(gpu=review_sql.UNUSED),
        "unused_findings": review_sql.UNUSED_FINDINGS,
    }
    where = f"unused_rows AS (SELECT * FROM spend_rows WHERE {review_sql.UNUSED})"  # noqa: S608 (fixed SQL)
    statements = scoped_statements(*JANUARY.values(), statements=unused_only, rows="unused_rows", ctes=where)
    statements |= scoped_statements(*JANUARY.values(), statements={"months": review_sql.MONTH_CATEGORIES})
    found = {}
    for name, sql in statements.items():
        expected = [tuple(row) for row in connection.execute(translate(sql, "duckdb")).fetchall()]
        assert [tuple(row) for row in spark.sql(translate(sql, "spark")).collect()] == expected, name
        found[name] = expected
    assert [tuple(int(v or 0) for v in row) for row in found["unused"]] == [(0, 949_320_000, 0, 0)]
    assert found["unused_findings"] == [(PLAN, 1, dt.date(2026, 1, 1), dt.date(2026, 1, 1), 949_320_000)]
    assert {(m, c): int(v) for m, c, v in found["months"]} == {
        ("2026-01", "committed"): 1_898_640_000,
        ("2026-01", "on_demand"): 24_060_000,
    }
