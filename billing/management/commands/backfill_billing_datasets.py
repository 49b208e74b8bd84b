"""`manage.py backfill_billing_datasets`: write the Parquet dataset of every import stored as rows
before bill lines stopped being PostgreSQL rows (storage/backfill.py; migration 0010 runs the same
once); running it again writes nothing."""

from __future__ import annotations

from django.core.management.base import BaseCommand

from billing.models import BillingImport, BillingImportFile, SpendRecord
from billing.storage.backfill import backfill_import, imports_without_dataset


class Command(BaseCommand):
    help = "Write the Parquet datasets of the billing imports stored as rows (idempotent)."

    def handle(self, *args, **options):
        count = rows = 0
        for billing_import in imports_without_dataset(BillingImport, SpendRecord):
            written = backfill_import(billing_import, SpendRecord, BillingImportFile)
            rows += written
            count += 1 if written else 0
            self.stdout.write(f"import {billing_import.pk} ({billing_import.file_name}): {written} rows")
        self.stdout.write(f"backfilled {count} import(s), {rows} rows")
