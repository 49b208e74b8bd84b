"""DuckDB over Parquet gives the spend review's GPU sums to the cent (issue 28, item 1: the start).

Every test bill this module can bring in (the provider fixtures of tests/billing/fixtures/, the FOCUS 1.2
Savings Plan scenario and its partly-GPU twin, the demo bill) is imported, its review rows written to a
ParquetSpendStore month by month, and storage.duckdb_review.review_sums compared with today's review
(review/engine.py) of the same period:
- GPU-hours = the review's `totals.gpu_hours`;
- GPU usage effective cost = `totals.effective_cost` - `unused_commitment_cost` (the attribution of
  unused commitments is not in the SQL yet);
- every row's effective cost = GPU + non-GPU + unattributed + undetermined: the whole bill, counted once;
- each breakdown (month, team, project, provider, GPU, pricing category), where the period has no unused
  commitment (the breakdowns count attributed unused commitments too).
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path

import pytest

from billing.imports.importer import import_file
from billing.review import selectors
from billing.review.engine import BREAKDOWNS, hours, money
from billing.review.service import _build_review, make_request
from billing.storage import ParquetSpendStore
from billing.storage.duckdb_review import review_sums
from billing.storage.import_datasets import ImportDatasets
from pricing.models import GpuModel, InstanceType, Provider
from tests.billing.catalog import import_demo_billing, make_catalog

pytestmark = pytest.mark.django_db
FIXTURES = Path(__file__).parent / "fixtures"
MAY = (dt.date(2026, 5, 1), dt.date(2026, 6, 1))
FEBRUARY = (dt.date(2026, 2, 1), dt.date(2026, 3, 1))


def compare(tmp_path, start, end, allowed_teams=()):
    request = make_request(start=start, end=end)
    if allowed_teams:
        request = type(request)(**{**request.__dict__, "allowed_teams": allowed_teams})
    store = ParquetSpendStore(tmp_path / "store")
    store.write(selectors.spend_frame(request))
    review = _build_review(request)
    sums = review_sums(store, start, end, allowed_teams)
    # the imports' own Parquet datasets (written by the import, read through PostgreSQL's records of
    # their files) give the same sums as the rows read back from the database
    assert review_sums(ImportDatasets(), start, end, allowed_teams) == sums
    billed, effective, _, gpu_hours = sums["gpu"]
    totals = review["totals"]
    assert hours(gpu_hours) == totals["gpu_hours"]
    unused = Decimal(review["unused_commitment_cost"])
    assert Decimal(money(effective, "USD")) == Decimal(totals["effective_cost"]) - unused
    whole = sum(
        Decimal(review[key]) for key in ("non_gpu_cost", "unattributed_commitment_cost", "undetermined_cost")
    ) + Decimal(totals["effective_cost"])
    assert Decimal(money(sums["all_effective"], "USD")) == whole
    if unused == 0:
        for name, key in BREAKDOWNS.items():
            expected = {entry[key]: (entry["effective_cost"], entry["gpu_hours"]) for entry in review[name]}
            found = {label: (money(e, "USD"), hours(h)) for label, (e, h) in sums[name].items()}
            assert found == expected, name
    return review


def test_aws_fixture(tmp_path):
    make_catalog()
    import_file(FIXTURES / "aws_focus_export.csv")
    review = compare(tmp_path, *MAY)
    assert review["totals"]["effective_cost"] == "111.00"  # tests/billing/test_focus_conventions.py by hand


def test_aws_fixture_in_one_teams_scope(tmp_path):
    make_catalog()
    import_file(FIXTURES / "aws_focus_export.csv")
    review = compare(tmp_path, *MAY, allowed_teams=("ml",))
    assert review["totals"]["effective_cost"] == "110.08"  # the p5.48xlarge rows of team ml only


def test_google_cloud_fixture(tmp_path, settings):
    make_catalog()
    gcp, _ = Provider.objects.get_or_create(slug="gcp", defaults={"name": "gcp"})
    h100 = GpuModel.objects.get(slug="h100-sxm5-80gb")
    InstanceType.objects.create(provider=gcp, name="a3-highgpu-8g", gpu=h100, gpu_name="h100", gpu_count=8)
    settings.BILLING_INSTANCE_TYPES = {"A3-HIGHGPU-8G-CORE": "a3-highgpu-8g"}
    import_file(FIXTURES / "gcp_focus_export.csv")
    assert compare(tmp_path, *MAY)["totals"]["effective_cost"] == "176.98"


@pytest.mark.parametrize(
    "name", ["focus12_ec2_instance_savings_plan_50pct.csv", "focus12_savings_plan_50pct_partly_gpu.csv"]
)
def test_focus_savings_plan_scenarios(tmp_path, name):
    make_catalog()
    import_file(FIXTURES / name)
    compare(tmp_path, *FEBRUARY)


def test_demo_bill(tmp_path):
    import_demo_billing(tmp_path, months=2)
    review = compare(tmp_path, dt.date(2026, 5, 1), dt.date(2026, 7, 1))
    assert Decimal(review["totals"]["effective_cost"]) > 0


def test_a_month_rewritten_replaces_its_file(tmp_path):
    make_catalog()
    import_file(FIXTURES / "aws_focus_export.csv")
    store = ParquetSpendStore(tmp_path / "store")
    frame = selectors.spend_frame(make_request(start=MAY[0], end=MAY[1]))
    assert store.write(frame) == ["2026-05"]
    store.write(frame[frame["team"] == "ml"])  # a restated May: the ml rows only
    assert money(review_sums(store, *MAY)["gpu"][1], "USD") == "110.08"
    assert review_sums(store, dt.date(2026, 7, 1), dt.date(2026, 8, 1))["gpu"] == (0, 0, 0, 0)
