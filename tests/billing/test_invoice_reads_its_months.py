"""The invoice view reads only the dataset files of the billing periods asked (issue 28, item 1: "reading
only the months it needs"; the stop-46 outside audit's fix 3: it read every file ever imported).

The datasets are partitioned by charge month and a billing period bills rows of earlier charge months
(corrections to closed periods), so the files are picked by the billing periods recorded for each file
(models.BillingFilePeriod, storage/billing_periods.py). The bill below is made up for the test, every
figure by hand from its lines: charge months 2025-11, 2025-12, 2026-01, 2026-02, 2026-03, one file each;
the 2025-12 file also holds a -30.00 correction billed on March 2026's invoice (three periods late).
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from billing.imports.importer import import_file
from billing.invoice import selectors
from billing.invoice.lines import invoice_view
from billing.models import BillingFilePeriod, BillingImportFile
from billing.storage import billing_periods, review_sql
from billing.storage.duckdb_review import dataset_query
from billing.storage.import_datasets import ImportDatasets, readable_files
from tests.billing.catalog import make_catalog
from tests.billing.test_invoice_view import HEADER

pytestmark = pytest.mark.django_db
LINES = [
    # BillingPeriodStart, ChargePeriodStart, ChargePeriodEnd, category, class, billed, effective, ...
    "2025-11-01T00:00:00Z,2025-11-10T00:00:00Z,2025-11-11T00:00:00Z,Usage,,11.00,11.00,USD,AWS,Storage,,,",
    "2025-12-01T00:00:00Z,2025-12-10T00:00:00Z,2025-12-11T00:00:00Z,Usage,,12.00,12.00,USD,AWS,Storage,,,",
    "2026-03-01T00:00:00Z,2025-12-10T00:00:00Z,2025-12-11T00:00:00Z,Usage,Correction,-30.00,-30.00,USD,AWS,Storage,,,",
    "2026-01-01T00:00:00Z,2026-01-10T00:00:00Z,2026-01-11T00:00:00Z,Usage,,101.00,101.00,USD,AWS,Storage,,,",
    "2026-02-01T00:00:00Z,2026-02-10T00:00:00Z,2026-02-11T00:00:00Z,Usage,,202.00,202.00,USD,AWS,Storage,,,",
    "2026-03-01T00:00:00Z,2026-03-10T00:00:00Z,2026-03-11T00:00:00Z,Usage,,303.00,303.00,USD,AWS,Storage,,,",
]


@pytest.fixture
def bill(tmp_path, django_capture_on_commit_callbacks):
    make_catalog()
    path = tmp_path / "five-months.csv"
    path.write_text("\n".join([HEADER, *LINES]) + "\n")
    with django_capture_on_commit_callbacks(execute=True):  # the post-import task indexes the files
        assert import_file(path).rejected == 0
    return path


@pytest.fixture
def read(monkeypatch):
    """The charge months (`month=YYYY-MM` folders) of the files each invoice read hands DuckDB, and each
    call that indexes files at read time."""
    seen: dict[str, list] = {"months": [], "indexed": []}

    def spy_query(store, files, *args, **kwargs):
        seen["months"].append(sorted(Path(name).parent.name for name in files))
        return dataset_query(store, files, *args, **kwargs)

    def spy_index(records, store=None):
        records = list(records)
        seen["indexed"].append(sorted(record.path for record in records))
        return index(records, store)

    index = billing_periods.index_files
    monkeypatch.setattr(selectors, "dataset_query", spy_query)
    monkeypatch.setattr(billing_periods, "index_files", spy_index)
    return seen


def every_file_groups(start: dt.date, end: dt.date) -> list[tuple]:
    """What the view read before: INVOICE_GROUPS over every file ever imported."""
    params = {"start": dt.datetime.combine(start, dt.time(), tzinfo=dt.UTC)}
    params["end"] = dt.datetime.combine(end, dt.time(), tzinfo=dt.UTC)
    return dataset_query(ImportDatasets(), readable_files(), review_sql.INVOICE_GROUPS, params=params)


def test_a_billing_period_reads_its_own_charge_month_and_the_late_corrections_only(bill, read):
    assert len(readable_files()) == 5  # one file a charge month
    indexed = {
        (Path(path).parent.name, period.strftime("%Y-%m"))
        for path, period in BillingFilePeriod.objects.values_list("file__path", "billing_period")
    }
    assert indexed == {
        ("month=2025-11", "2025-11"),
        ("month=2025-12", "2025-12"),
        ("month=2025-12", "2026-03"),  # the late correction
        ("month=2026-01", "2026-01"),
        ("month=2026-02", "2026-02"),
        ("month=2026-03", "2026-03"),
    }
    february = selectors.invoice_groups(dt.date(2026, 2, 1), dt.date(2026, 3, 1))
    march = invoice_view(selectors.invoice_groups(dt.date(2026, 3, 1), dt.date(2026, 4, 1)))
    assert read["months"] == [["month=2026-02"], ["month=2025-12", "month=2026-03"]]
    assert read["indexed"] == []  # written at import: the reads open no other file
    assert [(g["billing_period"], g["billed"]) for g in february] == [("2026-02", 202)]
    (invoice,) = march["invoices"]
    assert (invoice["billing_period"], invoice["billed_total"]) == ("2026-03", "273.00")  # 303 - 30
    assert [(c["corrects_period"], c["billed_cost"]) for c in march["closed_period_corrections"]] == [
        ("2025-12", "-30.00")
    ]


@pytest.mark.parametrize(
    "start, end",
    [
        (dt.date(2025, 11, 1), dt.date(2025, 12, 1)),
        (dt.date(2025, 12, 1), dt.date(2026, 1, 1)),
        (dt.date(2026, 1, 1), dt.date(2026, 4, 1)),
        (dt.date(2026, 3, 1), dt.date(2026, 4, 1)),
        (dt.date(2026, 4, 1), dt.date(2026, 6, 1)),
        (dt.date(2000, 1, 1), dt.date(2100, 1, 1)),
    ],
)
def test_the_groups_equal_reading_every_file(bill, start, end):
    groups = selectors.invoice_groups(start, end)
    assert [
        (
            g["provider"],
            g["billing_period"],
            g["charge_month"],
            g["currency"],
            g["charge_category"],
            g["rows"],
        )
        for g in groups
    ] == [(row[0], row[1], row[2], row[3], row[4], row[9]) for row in every_file_groups(start, end)]


def test_files_recorded_without_their_periods_are_indexed_on_the_first_read_only(bill, read):
    BillingFilePeriod.objects.all().delete()  # an import made before the index (or its task never ran)
    march = selectors.invoice_groups(dt.date(2026, 3, 1), dt.date(2026, 4, 1))
    assert len(read["indexed"]) == 1 and len(read["indexed"][0]) == 5
    assert read["months"] == [["month=2025-12", "month=2026-03"]]
    assert sum(g["billed"] for g in march) == 273
    assert BillingFilePeriod.objects.count() == 6
    selectors.invoice_groups(dt.date(2026, 3, 1), dt.date(2026, 4, 1))
    assert len(read["indexed"]) == 1  # not again


def test_the_same_file_imported_twice_copies_its_periods_and_is_read_once(bill, read, tmp_path):
    again = tmp_path / "again" / bill.name
    again.parent.mkdir()
    again.write_bytes(bill.read_bytes())
    assert import_file(again).inserted == 0  # records the first import's files again, no task run here
    assert BillingImportFile.objects.count() == 10 and BillingFilePeriod.objects.count() == 6
    march = selectors.invoice_groups(dt.date(2026, 3, 1), dt.date(2026, 4, 1))
    assert BillingFilePeriod.objects.count() == 12  # copied from the first records, no file read for it
    assert read["months"] == [["month=2025-12", "month=2026-03"]]
    assert sum(g["billed"] for g in march) == 273
