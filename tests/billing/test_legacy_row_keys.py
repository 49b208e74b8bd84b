"""Rows stored under the row keys before December 2026 (SHA-256 of the row's text): migration 0003 marks
their imports, and a re-import matches them through the file instead of storing them twice."""

from __future__ import annotations

import datetime as dt
import uuid

import pandas as pd
import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from billing.choices import RowKeyScheme
from billing.imports.focus import read_focus
from billing.imports.importer import import_files
from billing.models import BillingImport, SpendRecord
from tests.billing.reference.row_keys_v1 import row_keys as row_keys_v1

pytestmark = pytest.mark.django_db
HEADER = "ChargePeriodStart,ChargePeriodEnd,ChargeCategory,BilledCost,EffectiveCost,BillingCurrency,ProviderName,ConsumedQuantity,ConsumedUnit,x_UsageType,ResourceId"
MAY_1 = "2026-05-01T00:00:00Z,2026-05-02T00:00:00Z,Usage,10.00,10.00,USD,AWS,24,Hours,USE1-BoxUsage:g6.xlarge"
MAY_2 = "2026-05-02T00:00:00Z,2026-05-03T00:00:00Z,Usage,12.50,12.50,USD,AWS,24,Hours,USE1-BoxUsage:g6.xlarge"


def write(tmp_path, name, *lines):
    path = tmp_path / name
    path.write_text("\n".join([HEADER, *lines]) + "\n")
    return path


def store_as_before_december(path) -> BillingImport:
    """Import the file, then give its rows the keys the earlier code gave them, as migration 0003 left
    them: marked SHA256_TEXT, each key cut to its first 32 hex digits."""
    result = import_files([path], fmt="focus")
    assert not result.errors, result.errors
    frame = pd.concat(read_focus(path))
    old_keys = dict(zip(frame["source_row"], row_keys_v1(frame, {}), strict=True))
    billing_import = BillingImport.objects.get(pk=result.imports[0])
    for record in SpendRecord.objects.filter(billing_import=billing_import):
        SpendRecord.objects.filter(pk=record.pk).update(row_key=uuid.UUID(old_keys[record.source_row][:32]))
    billing_import.row_key_scheme = RowKeyScheme.SHA256_TEXT
    billing_import.save()
    return billing_import


def test_it_matches_rows_of_the_old_scheme_by_the_files_checksum_and_rekeys_them(tmp_path):
    path = write(tmp_path, "may.csv", MAY_1 + ",i-1", MAY_1 + ",i-1", MAY_2 + ",i-2")  # two equal lines
    old = store_as_before_december(path)
    again = import_files([path], fmt="focus")
    assert (again.inserted, again.unchanged, again.errors) == (0, 3, [])
    assert SpendRecord.objects.count() == 3
    old.refresh_from_db()
    assert old.row_key_scheme == RowKeyScheme.COLUMN_HASH_128  # all its rows carry current keys now
    third = import_files([path], fmt="focus")  # matched by the keys themselves from now on
    assert (third.inserted, third.unchanged) == (0, 3)


def test_it_refuses_other_files_rows_on_days_of_old_scheme_rows_and_stores_nothing(tmp_path):
    old = store_as_before_december(write(tmp_path, "may-1.csv", MAY_1 + ",i-1"))
    # a month-to-date export downloaded again: other bytes, the same May 1 line and a new May 2 line
    later = write(tmp_path, "may-to-date.csv", MAY_2 + ",i-2", MAY_1 + ",i-1")
    result = import_files([later], fmt="focus")
    assert result.errors == [
        f"{later}:3:ChargePeriodStart: spend of 2026-05-01 is also stored by import #{old.pk} (may-1.csv, "
        f"{old.imported_at:%Y-%m-%d}) under the row keys used before December 2026, which a re-import cannot "
        "match row by row; import that file again first (it is matched by its checksum) or delete that import "
        "(admin: Billing imports)"
    ]
    assert (SpendRecord.objects.count(), BillingImport.objects.count()) == (1, 1)
    other_day = import_files([write(tmp_path, "may-2.csv", MAY_2 + ",i-2")], fmt="focus")
    assert (other_day.inserted, other_day.errors) == (1, [])  # a day without old rows imports as usual


@pytest.mark.django_db(transaction=True)
def test_the_migration_marks_imports_of_64_digit_keys_and_keeps_128_bits_of_each():
    before = [("billing", "0002_breview_spend_grant")]
    executor = MigrationExecutor(connection)
    executor.migrate(before)
    old = executor.loader.project_state(before).apps
    old_key, new_key = "ab" * 32, "cd" * 16
    for name, key in (("old.csv", old_key), ("new.csv", new_key)):
        made = old.get_model("billing", "BillingImport").objects.create(source_format="focus", file_name=name)
        old.get_model("billing", "SpendRecord").objects.create(
            billing_import=made,
            row_key=key,
            source_row=2,
            charge_period_start=dt.datetime(2026, 5, 1, tzinfo=dt.UTC),
            charge_period_end=dt.datetime(2026, 5, 2, tzinfo=dt.UTC),
            charge_category="usage",
            provider="aws",
            pricing_category="on_demand",
            billed_cost=1,
            effective_cost=1,
            currency="USD",
        )
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())  # to the latest schema, for the other tests too
    schemes = dict(BillingImport.objects.values_list("file_name", "row_key_scheme"))
    assert schemes == {"old.csv": RowKeyScheme.SHA256_TEXT, "new.csv": RowKeyScheme.COLUMN_HASH_128}
    keys = {record.billing_import.file_name: record.row_key.hex for record in SpendRecord.objects.all()}
    assert keys == {"old.csv": old_key[:32], "new.csv": new_key}
