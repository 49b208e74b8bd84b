"""The SpendRecord table is dropped (issue 28, item 1): bill lines are the imports' Parquet datasets.

First every import still held only as SpendRecord rows gets its dataset, as 0010 wrote them (an upgrade
from a release before 0010 runs both; storage/backfill.py, with these historical models), so no line is
lost. Then, as 0010 asked before the table could go, the datasets of every import held as rows must be
in the dataset folder (or S3 prefix) this process reads: a recorded file missing there stops the
migration with the table kept. Non-atomic: each import's dataset is recorded in its own transaction.
"""

from django.db import migrations, models


def write_datasets(apps, schema_editor):
    from billing.storage.backfill import write_missing_datasets

    write_missing_datasets(apps)


def require_datasets(apps, schema_editor):
    from billing.storage.backfill import missing_dataset_files
    from billing.storage.location import dataset_root

    missing = missing_dataset_files(apps)
    if missing:
        raise RuntimeError(
            f"{len(missing)} dataset file(s) of imports stored as SpendRecord rows are not under "
            f"{dataset_root()} (first: {missing[0]}), so the table is kept: run the migration with the "
            "application's BILLING_DATASET_DIR / BILLING_DATASET_URL, or delete those imports' "
            "BillingImportFile rows to have their datasets written again from the table."
        )


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("billing", "0013_billingimport_restated"),
    ]

    operations = [
        migrations.RunPython(write_datasets, migrations.RunPython.noop, elidable=False),
        migrations.RunPython(require_datasets, migrations.RunPython.noop, elidable=False),
        migrations.AlterField(
            model_name="gpuutilization",
            name="resource_id",
            field=models.CharField(
                help_text="Matches a bill line's resource id (or the hostname).", max_length=500
            ),
        ),
        migrations.AlterField(
            model_name="spendgrant",
            name="spend_team",
            field=models.CharField(
                blank=True,
                help_text="The team's name as the bills' tags spell it; blank: the team's slug.",
                max_length=100,
            ),
        ),
        migrations.DeleteModel(name="SpendRecord"),
    ]
