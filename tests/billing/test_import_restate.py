"""`manage.py import_billing --restate`: a file of months already imported from the same billing source
(provider and billing account) replaces them, flagged restated (billing/imports/restate.py, reusing the
scheduled import's replacement, scheduled.replace_imports). Without the option both files are kept.

Each file's costs are written here, so the expected totals are sums of the lines below.
"""

from __future__ import annotations

import datetime as dt
from io import StringIO

import duckdb
import pytest
from django.core.management import call_command

from billing.models import BillingImport, BillingImportFile
from billing.storage.import_datasets import readable_files
from tests.billing.catalog import make_catalog

pytestmark = pytest.mark.django_db
HEADER = (
    "BillingAccountId,ChargePeriodStart,ChargePeriodEnd,ChargeCategory,BilledCost,EffectiveCost,"
    "BillingCurrency,ProviderName,RegionId,ResourceId,PricingCategory,ConsumedQuantity,ConsumedUnit,"
    "ServiceCategory,x_UsageType,Tags"
)


def bill(tmp_path, name: str, *lines: tuple[str, str, str]):
    """A FOCUS file of one-hour g6.xlarge lines: (billing account, day, cost) each."""
    path = tmp_path / name
    rows = [
        f"{account},{day}T00:00:00Z,{day}T01:00:00Z,Usage,{cost},{cost},USD,AWS,us-east-1,i-{day},Standard,"
        f'1,Hours,Compute,USE1-BoxUsage:g6.xlarge,"{{""team"": ""ml""}}"'
        for account, day, cost in lines
    ]
    path.write_text("\n".join([HEADER, *rows]) + "\n")
    return path


def import_billing(*args) -> str:
    out = StringIO()
    call_command("import_billing", *map(str, args), "--no-progress", stdout=out)
    return out.getvalue()


def spend(account: str = "") -> int:
    """Effective micro-units of the recorded files' rows (of `account` only, when given)."""
    files = readable_files()
    if not files:
        return 0
    where = "WHERE billing_account_id = $account" if account else ""
    with duckdb.connect() as connection:  # its own: the module's default connection is other tests' too
        ((total,),) = connection.execute(
            f"SELECT sum(effective_micros) FROM read_parquet($files) {where}",  # noqa: S608 (fixed SQL)
            {"files": files, **({"account": account} if account else {})},
        ).fetchall()
    return int(total or 0)


@pytest.fixture(autouse=True)
def catalog():
    make_catalog()


def test_without_restate_a_second_file_of_the_month_is_kept_beside_the_first(tmp_path):
    import_billing(bill(tmp_path, "may.csv", ("111", "2026-05-03", "10.000000")))
    import_billing(bill(tmp_path, "may-again.csv", ("111", "2026-05-03", "12.500000")))
    assert BillingImport.objects.count() == 2
    assert spend() == 22_500_000  # 10.00 + 12.50, in micro-units


def test_restate_replaces_the_month_of_the_same_billing_source_and_flags_the_import(tmp_path, client_as):
    import_billing(bill(tmp_path, "may.csv", ("111", "2026-05-03", "10.000000")))
    out = import_billing(bill(tmp_path, "may-restated.csv", ("111", "2026-05-03", "12.500000")), "--restate")
    (kept,) = BillingImport.objects.all()
    assert (kept.file_name, kept.restated, kept.inserted) == ("may-restated.csv", True, 1)
    assert "restated: may-restated.csv" in out
    assert spend() == 12_500_000  # the restated line only
    page = client_as("admin").get("/billing/upload/")
    assert page.status_code == 200 and b'<span class="badge warn">restated</span>' in page.content


def test_restate_replaces_only_the_months_the_file_holds_and_only_its_billing_accounts(tmp_path):
    import_billing(
        bill(
            tmp_path,
            "spring.csv",
            ("111", "2026-04-10", "4.000000"),
            ("111", "2026-05-10", "5.000000"),
        )
    )
    import_billing(bill(tmp_path, "other-account.csv", ("222", "2026-05-10", "7.000000")))
    import_billing(bill(tmp_path, "may.csv", ("111", "2026-05-10", "6.000000")), "--restate")
    spring = BillingImport.objects.get(file_name="spring.csv")
    assert [f.month for f in spring.files.all()] == [dt.date(2026, 4, 1)]  # April kept, May replaced
    assert not BillingImport.objects.get(file_name="other-account.csv").restated
    assert BillingImportFile.objects.filter(billing_import__file_name="other-account.csv").count() == 1
    assert spend("111") == 10_000_000  # April 4.00 + restated May 6.00
    assert spend("222") == 7_000_000


def test_restate_with_nothing_earlier_is_a_plain_import(tmp_path):
    import_billing(bill(tmp_path, "may.csv", ("111", "2026-05-03", "10.000000")), "--restate")
    (only,) = BillingImport.objects.all()
    assert not only.restated
    assert spend() == 10_000_000


def test_a_restate_whose_file_is_bad_changes_nothing(tmp_path):
    import_billing(bill(tmp_path, "may.csv", ("111", "2026-05-03", "10.000000")))
    bad = bill(tmp_path, "bad.csv", ("111", "2026-05-03", "ten"))
    with pytest.raises(Exception, match="bad.csv"):
        import_billing(bad, "--restate")
    assert list(BillingImport.objects.values_list("file_name", "restated")) == [("may.csv", False)]
    assert spend() == 10_000_000
