"""Bill lines stop being PostgreSQL rows (issue 28, item 1): every import still held only as SpendRecord
rows gets its Parquet dataset (storage/backfill.py), so no bill line is lost when the readers read the
datasets alone. The table is kept, unread, beside them: written under this machine's
BILLING_DATASET_DIR, the datasets are certain only where the application reads that same folder, and a
later migration may drop the table once they are known to be there (0014 does)."""

from django.db import migrations


def write_datasets(apps, schema_editor):
    from billing.storage.backfill import write_missing_datasets

    write_missing_datasets(apps)


class Migration(migrations.Migration):
    atomic = False  # each import's dataset is recorded in its own transaction (backfill.py)

    dependencies = [
        ("billing", "0009_export_sources_and_deliveries"),
    ]

    operations = [
        migrations.RunPython(write_datasets, migrations.RunPython.noop, elidable=False),
    ]
