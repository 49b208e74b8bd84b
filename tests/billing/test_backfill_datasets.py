"""`backfill_billing_datasets` and migration 0010 (issue 28, item 1): an import stored as SpendRecord rows
gets its dataset from its stored rows, equal to the one an import writes, and a second run writes
nothing; Cost Explorer pulls get one dataset of every pull's stored rows.

The fixture's hand total (tests/billing/test_import_datasets.py, recomputed there with the csv module):
tests/billing/fixtures/aws_focus_export.csv, 4 rows charged in May 2026, EffectiveCost 116.20 USD.
"""

from __future__ import annotations

import datetime as dt
import io
import shutil
import uuid
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest
from django.core.management import call_command

from billing.imports.importer import import_file
from billing.models import BillingImport, BillingImportFile, SpendRecord
from billing.review.service import _build_review, make_request
from billing.storage import review_sql
from billing.storage.datasets import SCHEMA
from billing.storage.import_datasets import readable_files
from pricing.models import GpuModel
from tests.billing.catalog import make_catalog
from tests.billing.stored import stored_rows

pytestmark = pytest.mark.django_db
AWS = Path(__file__).parent / "fixtures" / "aws_focus_export.csv"
READ = ", ".join(name for name in SCHEMA.names if name != "source_row")


def _rows(paths):
    files = [str(p) for p in paths]
    sql = f"SELECT {READ} FROM read_parquet({files!r}) ORDER BY row_key_hi, row_key_lo"  # noqa: S608
    return duckdb.sql(sql).to_arrow_table()


def _store_as_rows(billing_import):
    """The import's dataset as the SpendRecord rows an import stored before bill lines left PostgreSQL."""
    gpus = dict(GpuModel.objects.values_list("slug", "id"))
    names = {field.attname for field in SpendRecord._meta.fields} - {"row_key", "billing_import_id", "gpu_id"}
    SpendRecord.objects.bulk_create(
        SpendRecord(
            row_key=uuid.UUID(int=(row.row_key_hi << 64) | row.row_key_lo),
            billing_import=billing_import,
            gpu_id=gpus.get(row.gpu),
            **{name: getattr(row, name) for name in names},
        )
        for row in stored_rows(imports=[billing_import.pk])
    )


def _forget_dataset(root: Path):
    """As before datasets existed: the rows stored, no file recorded, none on disk; the rows the import
    had written."""
    paths = [root / f.path for f in BillingImportFile.objects.all()]
    written = _rows(paths)
    for billing_import in BillingImport.objects.all():
        _store_as_rows(billing_import)
    BillingImportFile.objects.all().delete()
    for folder in root.glob("import=*"):
        shutil.rmtree(folder)
    return written


def test_an_old_import_gets_the_dataset_its_import_would_have_written(settings):
    make_catalog()
    import_file(AWS)
    request = make_request(start=dt.date(2026, 5, 1), end=dt.date(2026, 6, 1))
    review = _build_review(request)
    root = Path(settings.BILLING_DATASET_DIR)
    written = _forget_dataset(root)
    assert readable_files() == []  # the rows are not read
    out = io.StringIO()
    call_command("backfill_billing_datasets", stdout=out)
    assert out.getvalue().splitlines()[-1] == "backfilled 1 import(s), 4 rows"
    (record,) = BillingImportFile.objects.all()
    assert (record.month, record.rows) == (dt.date(2026, 5, 1), 4)
    assert _rows([root / record.path]).equals(written)  # every column, the row keys included
    assert _build_review(request)["totals"] == review["totals"]
    assert Decimal(review["totals"]["effective_cost"]) <= Decimal("116.20")  # GPU part of the file's total
    again = io.StringIO()
    call_command("backfill_billing_datasets", stdout=again)
    assert again.getvalue() == "backfilled 0 import(s), 0 rows\n"
    assert BillingImportFile.objects.count() == 1


def test_the_review_sql_keeps_its_public_names():
    assert review_sql.ROW_COUNT == "row_count"
    assert "GROUP BY ALL" in review_sql.GROUPED_ROWS
