"""Each import kept as an immutable Parquet dataset by charge month, its files recorded in PostgreSQL
(issue 28, item 1; billing/storage/datasets.py).

Expected values are recomputed from the fixture itself with the csv module (an independent reading):
tests/billing/fixtures/aws_focus_export.csv holds 4 rows, all charged in May 2026, whose EffectiveCost
column sums to 110.08 + 0.92 + 4.00 + 1.20 (tax) = 116.20 USD.
"""

from __future__ import annotations

import csv
import datetime as dt
from decimal import Decimal
from pathlib import Path

import duckdb
import pandas as pd
import pytest

from billing.imports.importer import import_file, import_files
from billing.imports.records import BillingFileError
from billing.models import BillingImport, BillingImportFile
from billing.review import selectors
from billing.review.service import _build_review, make_request
from billing.storage.duckdb_review import review_sums
from billing.storage.import_datasets import ImportDatasets
from tests.billing.catalog import import_demo_billing, make_catalog

pytestmark = pytest.mark.django_db
AWS = Path(__file__).parent / "fixtures" / "aws_focus_export.csv"
MAY = (dt.date(2026, 5, 1), dt.date(2026, 6, 1))


def file_effective_cost(path: Path) -> Decimal:
    with open(path, newline="") as handle:
        return sum((Decimal(row["EffectiveCost"]) for row in csv.DictReader(handle)), Decimal(0))


def dataset_effective_cost(paths) -> Decimal:
    total = duckdb.sql(
        f"SELECT sum(effective_micros) FROM read_parquet({[str(p) for p in paths]!r})"
    ).fetchall()[0]
    return Decimal(total[0]) / 1_000_000


def test_it_writes_the_import_as_one_file_per_charge_month_and_records_it(settings):
    make_catalog()
    import_file(AWS)
    (record,) = BillingImportFile.objects.all()
    assert record.month == dt.date(2026, 5, 1)
    assert record.path == f"import={record.billing_import_id}/month=2026-05/part-00000.parquet"
    assert record.rows == 4
    assert record.billing_import.file_sha256  # the checksum beside its files
    path = Path(settings.BILLING_DATASET_DIR) / record.path
    assert record.size_bytes == path.stat().st_size
    assert dataset_effective_cost([path]) == file_effective_cost(AWS) == Decimal("116.20")


def test_it_re_imports_the_same_file_without_writing_or_counting_it_twice(settings):
    make_catalog()
    import_file(AWS)
    folders = sorted(p.name for p in Path(settings.BILLING_DATASET_DIR).iterdir())
    before = review_sums(ImportDatasets(), *MAY)
    import_file(AWS)
    assert BillingImport.objects.count() == 2
    first, second = (
        list(i.files.values_list("path", flat=True)) for i in BillingImport.objects.order_by("pk")
    )
    assert second == first  # the second import records the first one's files
    assert sorted(p.name for p in Path(settings.BILLING_DATASET_DIR).iterdir()) == folders  # nothing new
    assert review_sums(ImportDatasets(), *MAY) == before


def test_a_re_import_is_known_by_its_checksum_before_a_line_is_read(monkeypatch):
    """Issue 28: at 5M rows the re-import read and rewrote the whole file (46 s) before its checksum
    matched. Now no reader opens it, and it reports what a full read did: inserted 0, unchanged 4 (the
    file's 4 lines), the same rows and unmapped types as the first import."""
    from billing.imports import focus

    make_catalog()
    first = import_file(AWS)
    monkeypatch.setattr(focus, "read_chunks", lambda *a, **k: pytest.fail("the file was read again"))
    again = import_file(AWS)
    assert (again.inserted, again.unchanged, again.rows_seen) == (0, 4, 4) == (0, first.inserted, 4)
    assert again.unmapped == first.unmapped
    earlier, latest = BillingImport.objects.order_by("pk")
    assert (latest.inserted, latest.unchanged, latest.rows_seen) == (0, 4, 4)
    assert latest.file_sha256 == earlier.file_sha256
    assert list(latest.files.values_list("path", flat=True)) == list(
        earlier.files.values_list("path", flat=True)
    )


def test_a_re_import_into_another_dataset_folder_writes_its_own_files(settings, tmp_path):
    """CI x35: a database kept from an earlier run (its import's files in a folder since deleted) and a fresh
    BILLING_DATASET_DIR. The same file imported again must not record the first import's paths, which are
    not on this disk: every spend review then failed with DuckDB's "No files found"."""
    make_catalog()
    settings.BILLING_DATASET_DIR = tmp_path / "first"
    import_file(AWS)
    settings.BILLING_DATASET_DIR = tmp_path / "second"
    import_file(AWS)
    first, second = BillingImport.objects.order_by("pk")
    assert list(second.files.values_list("path", flat=True)) == [
        f"import={second.pk}/month=2026-05/part-00000.parquet"
    ]
    assert (tmp_path / "second" / second.files.get().path).is_file()
    assert first.files.exists()  # the first import keeps its record (its files are elsewhere)


def test_a_review_over_missing_dataset_files_reads_the_files_still_there(settings, caplog, tmp_path):
    """A recorded file gone from disk: the review reads the other files (here the fixture's first import,
    111.00 USD of GPU spend as test_the_review_reads_the_imports_datasets states; the deleted file held
    the same rows), never fails, and the log names what is missing."""
    make_catalog()
    import_file(AWS)
    copy = tmp_path / "aws_again.csv"
    copy.write_text(AWS.read_text() + "\n")  # another checksum, the same rows
    import_file(copy)
    record = BillingImportFile.objects.get(billing_import__file_name=copy.name)
    (Path(settings.BILLING_DATASET_DIR) / record.path).unlink()
    with caplog.at_level("WARNING", logger="billing.storage.import_datasets"):
        review = _build_review(make_request(start=MAY[0], end=MAY[1]))
    assert review["totals"]["effective_cost"] == "111.00"
    assert "1 recorded file(s) missing" in caplog.text and record.path in caplog.text
    # and the review says so to its reader, naming the bill and the month (not only the server's log)
    assert review["warnings"] == [
        "aws_again.csv, 2026-05: its stored data file is missing on this server, so this review leaves its "
        "rows out; import the bill again to restore them"
    ]
    # an engineer granted one team sees the month, not the bill's name (the bill holds other teams' lines)
    scoped = make_request(start=MAY[0], end=MAY[1])
    scoped = type(scoped)(**{**scoped.__dict__, "allowed_teams": ("ml",)})
    assert _build_review(scoped)["warnings"] == [
        "a bill, 2026-05: its stored data file is missing on this server, so this review leaves its "
        "rows out; import the bill again to restore them"
    ]


def test_the_same_rows_in_two_files_are_counted_once(tmp_path):
    make_catalog()
    import_file(AWS)
    copy = tmp_path / "aws_again.csv"
    copy.write_text(AWS.read_text() + "\n")  # another checksum, the same rows
    import_file(copy)
    assert BillingImportFile.objects.values("path").distinct().count() == 2
    assert Decimal(review_sums(ImportDatasets(), *MAY)["all_effective"]) / 1_000_000 == Decimal("116.20")


def test_a_bad_file_leaves_no_dataset_and_no_record(settings, tmp_path):
    make_catalog()
    rows = AWS.read_text().splitlines()
    bad = tmp_path / "bad.csv"
    bad.write_text("\n".join(rows[:-1] + [rows[-1].replace(",1.20,1.20,", ",one,1.20,", 1)]) + "\n")
    assert ",one," in bad.read_text()
    with pytest.raises(BillingFileError, match="bad.csv"):
        import_file(bad)
    assert not BillingImportFile.objects.exists()
    root = Path(settings.BILLING_DATASET_DIR)
    assert not [p for p in root.iterdir() if p.name.startswith(".incoming-")] if root.exists() else True


def test_a_bill_of_two_months_is_partitioned_by_charge_month(tmp_path, settings):
    bill = import_demo_billing(tmp_path, months=2)
    files = BillingImportFile.objects.order_by("month")
    assert [f.month for f in files] == [dt.date(2026, 5, 1), dt.date(2026, 6, 1)]
    with open(bill, newline="") as handle:
        starts = [row["ChargePeriodStart"][:7] for row in csv.DictReader(handle)]
    assert [f.rows for f in files] == [starts.count("2026-05"), starts.count("2026-06")]
    root = Path(settings.BILLING_DATASET_DIR)
    for f in files:
        months = duckdb.sql(
            f"SELECT DISTINCT strftime(charge_period_start AT TIME ZONE 'UTC', '%Y-%m') FROM '{root / f.path}'"
        ).fetchall()
        assert months == [(f"{f.month:%Y-%m}",)]


@pytest.mark.parametrize("teams, expected", [((), "111.00"), (("ml",), "110.08")])
def test_the_review_reads_the_imports_datasets(teams, expected):
    """GPU usage of the fixture: p5.48xlarge 110.08 (team ml) + g6e.xlarge 0.92 (team research), as
    tests/billing/test_storage_duckdb.py states; a granted engineer of team ml sees 110.08 only."""
    make_catalog()
    import_file(AWS)
    request = make_request(start=MAY[0], end=MAY[1])
    request = type(request)(**{**request.__dict__, "allowed_teams": teams})
    assert _build_review(request)["totals"]["effective_cost"] == expected


ONE_ROW_HEADER = (
    "ChargePeriodStart,ChargePeriodEnd,ChargeCategory,BilledCost,EffectiveCost,BillingCurrency,"
    "ProviderName,RegionId,ResourceId,PricingCategory,ConsumedQuantity,ConsumedUnit,ServiceCategory,"
    "x_UsageType,Tags"
)


def one_row_file(tmp_path, name: str, day: str, cost: str, resource: str = "i-new"):
    path = tmp_path / name
    path.write_text(
        ONE_ROW_HEADER
        + f"\n{day}T00:00:00Z,{day}T01:00:00Z,Usage,{cost},{cost},USD,AWS,us-east-1,{resource},Standard,"
        '1,Hours,Compute,USE1-BoxUsage:g6.xlarge,"{""team"": ""ml""}"\n'
    )
    return path


def test_an_import_adds_its_rows_to_the_next_review(tmp_path):
    import_demo_billing(tmp_path, months=3)
    before = selectors.dataset_rows(dt.date(2026, 5, 1), dt.date(2026, 8, 1))
    import_files([one_row_file(tmp_path, "late.csv", "2026-05-20", "7.250000")], fmt="focus")
    after = selectors.dataset_rows(dt.date(2026, 5, 1), dt.date(2026, 8, 1))
    assert len(after) == len(before) + 1
    assert after["effective_micros"].sum() == before["effective_micros"].sum() + 7_250_000


def test_deleting_an_import_takes_its_rows_out_of_the_next_review(tmp_path):
    import_demo_billing(tmp_path, months=3)
    extra = import_files([one_row_file(tmp_path, "extra.csv", "2026-06-02", "3.000000")], fmt="focus")
    with_extra = selectors.dataset_rows(dt.date(2026, 5, 1), dt.date(2026, 8, 1))
    BillingImport.objects.filter(pk__in=extra.imports).delete()
    without = selectors.dataset_rows(dt.date(2026, 5, 1), dt.date(2026, 8, 1))
    assert len(without) == len(with_extra) - 1
    assert "i-new" not in set(without["resource_id"].astype(str))


def test_identical_lines_of_two_parts_of_one_export_are_two_charges(tmp_path):
    # issue 28: the three parts of a 50M-line month stored 32.3M lines (identical lines across parts
    # shared a key). Two parts holding the fixture's 4 rows each: 2 x 116.20 USD, 8 rows inserted.
    make_catalog()
    one, two = tmp_path / "may-part1.csv", tmp_path / "may-part2.csv"
    one.write_text(AWS.read_text())
    two.write_text(AWS.read_text())  # the same bytes: still another part (store._known_file)
    first, second = import_file(one), import_file(two)
    assert (first.inserted, second.inserted, second.unchanged) == (4, 4, 0)
    assert Decimal(review_sums(ImportDatasets(), *MAY)["all_effective"]) / 1_000_000 == Decimal("232.40")
    again = tmp_path / "renamed-part2.csv"  # the same part again under another name: nothing new
    again.write_text(AWS.read_text() + "\n")  # (another checksum: read, not recognized)
    assert (import_file(again).inserted, import_file(again).unchanged) == (0, 4)
    assert Decimal(review_sums(ImportDatasets(), *MAY)["all_effective"]) / 1_000_000 == Decimal("232.40")


def test_cur_lines_with_their_own_ids_are_told_apart_by_them(tmp_path):
    # CUR 2.0 names each line (identity_line_item_id): two files of the same lines under other ids
    # are other charges, under the same ids the same ones (a re-export), whatever the files' names
    from tests.billing.test_sources import CUR_HEADER, CUR_ROWS

    make_catalog()
    header = [*CUR_HEADER, "identity_line_item_id"]
    rows = [[*row, f"li-{number}"] for number, row in enumerate(CUR_ROWS)]
    paths = [tmp_path / name for name in ("cur.csv", "cur-renamed.csv", "cur-other-ids.csv")]
    pd.DataFrame(rows, columns=header).to_csv(paths[0], index=False)
    pd.DataFrame(rows, columns=header).to_csv(paths[1], index=False, lineterminator="\r\n")
    other = [[*row[:-1], row[-1] + "-b"] for row in rows]
    pd.DataFrame(other, columns=header).to_csv(paths[2], index=False)
    results = [import_file(path) for path in paths]
    assert [(r.inserted, r.unchanged) for r in results] == [(6, 0), (0, 6), (6, 0)]
