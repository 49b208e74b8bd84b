"""The consumed quantity is stored exactly as decimal(38, 6) (issue 28, fix28), and datasets written
before, with it as int64 micro-units, still read.

Sizes: Google's detailed-export sample bills 16,998,309,356,466,500 byte-seconds of N1 RAM in one line
(docs.cloud.google.com/billing/docs/how-to/export-data-bigquery-tables/detailed-usage, "Sample results";
tests/billing/outside/test_outside_finops_stop42.py imports all of it). decimal(38, 6) holds 32 digits
before the point, so the cell's bound is 1e32 (billing/storage/datasets.py QUANTITY_LIMIT).
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from billing.imports import cells
from billing.imports.importer import import_files
from billing.models import BillingImportFile
from billing.review.service import _build_review, make_request
from billing.storage.datasets import QUANTITY_COLUMN, QUANTITY_LIMIT, QUANTITY_MICROS_COLUMN
from tests.billing.catalog import make_catalog
from tests.billing.stored import stored_rows

pytestmark = pytest.mark.django_db
AWS = Path(__file__).parent / "fixtures" / "aws_focus_export.csv"
HEADER = (
    "ChargePeriodStart,ChargePeriodEnd,ChargeCategory,BilledCost,EffectiveCost,BillingCurrency,ProviderName,"
    "ServiceCategory,ConsumedQuantity,ConsumedUnit"
)
MAY = {"start": dt.date(2026, 5, 1), "end": dt.date(2026, 6, 1)}


def gcp_file(tmp_path: Path, quantity: str, name: str = "gcp.csv") -> Path:
    path = tmp_path / name
    path.write_text(
        f"{HEADER}\n2026-05-02T00:00:00Z,2026-05-03T00:00:00Z,Usage,8.00,8.00,USD,Google Cloud,Compute,"
        f"{quantity},byte-seconds\n"
    )
    return path


def as_written_before_fix28(path: Path) -> None:
    """Rewrite a dataset file as imports wrote it before: the quantity as int64 micro-units, no decimal."""
    table = pq.read_table(path)
    micros = pa.array(
        [None if q is None else int(q.scaleb(6)) for q in table[QUANTITY_COLUMN].to_pylist()], pa.int64()
    )
    table = table.drop_columns([QUANTITY_COLUMN, QUANTITY_MICROS_COLUMN]).append_column(
        QUANTITY_MICROS_COLUMN, micros
    )
    pq.write_table(table, path)


def test_it_bounds_the_cell_by_what_the_stored_type_holds():
    assert QUANTITY_LIMIT == Decimal(10) ** 32  # decimal(38, 6): 38 digits, 6 of them after the point
    assert cells.QUANTITY_LIMIT == 1e32


def test_it_stores_googles_ram_byte_seconds_exactly_and_reimports_unchanged(tmp_path, settings):
    settings.BILLING_DATASET_DIR = tmp_path / "datasets"
    make_catalog()
    path = gcp_file(tmp_path, "16998309356466500.1234565")  # rounded half away from zero at 6 places
    result = import_files([path], fmt="focus")
    assert not result.errors and result.inserted == 1
    (row,) = stored_rows()
    assert row.consumed_quantity == Decimal("16998309356466500.123457")
    again = import_files([path], fmt="focus")
    assert (again.inserted, again.unchanged, again.errors) == (0, 1, [])


def test_a_quantity_beyond_the_type_refuses_the_file_naming_row_and_column(tmp_path, settings):
    """The product's rule for a bad cell (docs/billing.md, "All or nothing per file"): the file is
    refused, naming file, line and column, and nothing of it is stored."""
    settings.BILLING_DATASET_DIR = tmp_path / "datasets"
    make_catalog()
    path = gcp_file(tmp_path, "1" + "0" * 32)  # 1e32
    result = import_files([path], fmt="focus")
    assert result.inserted == 0 and stored_rows() == []
    (message,) = result.errors
    assert message.startswith(f"{path}:2:ConsumedQuantity:") and "too large (under 1e+32 here)" in message


def test_a_dataset_written_before_still_reads_beside_a_new_one(tmp_path, settings):
    settings.BILLING_DATASET_DIR = root = tmp_path / "datasets"
    make_catalog()
    assert not import_files([AWS], fmt="focus").errors
    before = _build_review(make_request(**MAY))
    quantities = sorted(r.consumed_quantity for r in stored_rows() if r.consumed_quantity is not None)
    for record in BillingImportFile.objects.all():
        as_written_before_fix28(root / record.path)
    old_schema = pq.read_schema(root / BillingImportFile.objects.first().path)
    assert (
        QUANTITY_COLUMN not in old_schema.names
        and old_schema.field(QUANTITY_MICROS_COLUMN).type == pa.int64()
    )
    assert sorted(r.consumed_quantity for r in stored_rows() if r.consumed_quantity is not None) == quantities
    assert _build_review(make_request(**MAY))["totals"] == before["totals"]
    # a new import beside it: both read together, each quantity from its own column
    assert not import_files([gcp_file(tmp_path, "16998309356466500")], fmt="focus").errors
    stored = [r.consumed_quantity for r in stored_rows() if r.consumed_quantity is not None]
    assert sorted(stored) == sorted([*quantities, Decimal("16998309356466500")])
    after = _build_review(make_request(**MAY))
    assert after["totals"] == before["totals"]  # the RAM line is not GPU spend
    assert Decimal(after["non_gpu_cost"]) + Decimal(after["undetermined_cost"]) == Decimal(
        before["non_gpu_cost"]
    ) + Decimal(before["undetermined_cost"]) + Decimal("8.00")
