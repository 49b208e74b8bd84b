"""Migration 0014 (issue 28, item 1): an import still stored as SpendRecord rows gets its dataset from
its stored rows, equal to the one an import writes, before the table is dropped; a second run writes
nothing; and the table is kept while a dataset is not where the application reads it. Run against the
migration state before the drop (0013), with its historical SpendRecord.

The fixture's hand total (tests/billing/test_import_datasets.py, recomputed there with the csv module):
tests/billing/fixtures/aws_focus_export.csv, 4 rows charged in May 2026, EffectiveCost 116.20 USD.
"""

from __future__ import annotations

import datetime as dt
import shutil
import uuid
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.db.models import Sum

from billing.imports.importer import import_file
from billing.models import BillingImport, BillingImportFile
from billing.review.service import _build_review, make_request
from billing.storage import review_sql
from billing.storage.datasets import SCHEMA
from billing.storage.import_datasets import readable_files
from pricing.models import GpuModel
from tests.billing.catalog import make_catalog
from tests.billing.stored import stored_rows

AWS = Path(__file__).parent / "fixtures" / "aws_focus_export.csv"
READ = ", ".join(name for name in SCHEMA.names if name != "source_row")
BEFORE = [("billing", "0013_billingimport_restated")]
AFTER = [("billing", "0014_spendrecord_retired")]
TABLE = "billing_spendrecord"


def _migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


def executor_leaves():
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    return executor.loader.graph.leaf_nodes()


@pytest.fixture
def latest_schema_after():
    """Back to the latest schema for the other tests, whatever the test left."""
    yield
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())


def _rows(paths):
    files = [str(p) for p in paths]
    sql = f"SELECT {READ} FROM read_parquet({files!r}) ORDER BY row_key_hi, row_key_lo"  # noqa: S608
    return duckdb.sql(sql).to_arrow_table()


def _store_as_rows(old_apps) -> None:
    """Each import's dataset as the SpendRecord rows an import stored before bill lines left PostgreSQL."""
    record = old_apps.get_model("billing", "SpendRecord")
    gpus = dict(GpuModel.objects.values_list("slug", "id"))
    names = {field.attname for field in record._meta.fields} - {"row_key", "billing_import_id", "gpu_id"}
    for pk in BillingImport.objects.values_list("pk", flat=True):
        record.objects.bulk_create(
            record(
                row_key=uuid.UUID(int=(row.row_key_hi << 64) | row.row_key_lo),
                billing_import_id=pk,
                gpu_id=gpus.get(row.gpu),
                **{name: getattr(row, name) for name in names},
            )
            for row in stored_rows(imports=[pk])
        )


def _forget_dataset(old_apps, root: Path):
    """As before datasets existed: the rows stored, no file recorded, none on disk; the rows the import
    had written."""
    written = _rows(root / f.path for f in BillingImportFile.objects.all())
    _store_as_rows(old_apps)
    # The historical model: the live one cascades to tables of later migrations (0018: BillingFilePeriod).
    old_apps.get_model("billing", "BillingImportFile").objects.all().delete()
    for folder in root.glob("import=*"):
        shutil.rmtree(folder)
    return written


def _stored_cost(old_apps) -> dict[str, Decimal]:
    record = old_apps.get_model("billing", "SpendRecord")
    return record.objects.aggregate(billed=Sum("billed_cost"), effective=Sum("effective_cost"))


def _dataset_cost(paths) -> dict[str, Decimal]:
    files = [str(p) for p in paths]
    sql = f"SELECT sum(billed_micros), sum(effective_micros) FROM read_parquet({files!r})"  # noqa: S608
    ((billed, effective),) = duckdb.sql(sql).fetchall()
    return {"billed": Decimal(int(billed)).scaleb(-6), "effective": Decimal(int(effective)).scaleb(-6)}


@pytest.mark.django_db(transaction=True)
def test_an_old_import_gets_the_dataset_its_import_would_have_written(
    settings, tmp_path, latest_schema_after
):
    settings.BILLING_DATASET_DIR = tmp_path
    make_catalog()
    import_file(AWS)
    request = make_request(start=dt.date(2026, 5, 1), end=dt.date(2026, 6, 1))
    review = _build_review(request)
    old = _migrate(BEFORE)
    written = _forget_dataset(old, tmp_path)
    stored_cost = _stored_cost(old)
    assert readable_files() == []  # the rows are not read
    _migrate(AFTER)
    assert TABLE not in connection.introspection.table_names()
    (record,) = BillingImportFile.objects.all()
    assert (record.month, record.rows) == (dt.date(2026, 5, 1), 4)
    assert _rows([tmp_path / record.path]).equals(written)  # every column, the row keys included
    assert _dataset_cost([tmp_path / record.path]) == stored_cost  # to the micro-unit, so to the cent
    _migrate(executor_leaves())  # the live review reads tables of later migrations (0015: DailySpend)
    assert _build_review(request)["totals"] == review["totals"]
    assert Decimal(review["totals"]["effective_cost"]) <= Decimal("116.20")  # GPU part of the file's total

    # again, the rows stored beside the dataset they now have (as 0010 left them): nothing is written
    written_at = (tmp_path / record.path).stat().st_mtime_ns
    _store_as_rows(_migrate(BEFORE))
    _migrate(AFTER)
    assert list(BillingImportFile.objects.values_list("pk", "path")) == [(record.pk, record.path)]
    assert (tmp_path / record.path).stat().st_mtime_ns == written_at


@pytest.mark.django_db(transaction=True)
def test_the_table_stays_while_a_dataset_is_not_where_the_application_reads(
    settings, tmp_path, latest_schema_after
):
    settings.BILLING_DATASET_DIR = tmp_path / "written"
    make_catalog()
    import_file(AWS)
    _store_as_rows(_migrate(BEFORE))  # 0010 wrote the dataset on a machine with another folder
    settings.BILLING_DATASET_DIR = tmp_path / "elsewhere"
    with pytest.raises(RuntimeError, match="1 dataset file"):
        _migrate(AFTER)
    assert TABLE in connection.introspection.table_names()
    settings.BILLING_DATASET_DIR = tmp_path / "written"
    _migrate(AFTER)
    assert TABLE not in connection.introspection.table_names()


def test_the_review_sql_keeps_its_public_names():
    assert review_sql.ROW_COUNT == "row_count"
    assert "GROUP BY ALL" in review_sql.GROUPED_ROWS
