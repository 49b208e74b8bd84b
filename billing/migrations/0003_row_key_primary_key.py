"""Row keys become a 16-byte UUID primary key; the spend table loses the indexes and foreign-key triggers
no query uses, and the import's index becomes BRIN on PostgreSQL (BrinOnPostgres, below); imports
record their row-key scheme.

Stored keys of the older scheme (64 hex digits, SHA-256 of the row's text, before December 2026) cannot
be recomputed with the current one: that hashed the file's own text of each cost and quantity ("10.00",
"1.5E-7"), which the stored numeric(20, 6) values no longer hold. Their imports are marked
SHA256_TEXT and their keys cut to the first 32 hex digits (still unique: 128 bits of SHA-256), so that
the column can become a UUID; a re-import of the same file matches them through the file's checksum
and row numbers instead (store.LegacyRows).
"""

import django.db.models.deletion
from django.db import migrations, models
from django.db.models.functions import Length, Substr

OLD_KEY_DIGITS = 64
SHA256_TEXT = 1


class BrinOnPostgres(models.Index):
    """A BRIN index on PostgreSQL, a plain one elsewhere. BRIN keeps each range of heap pages' smallest
    and largest value: a few pages for a table, nearly free to keep up, and enough for a column that
    grows with the table as an import's id does (its rows are appended together). Defined here, where
    its only index is made, since the table it indexed is gone (0014)."""

    def create_sql(self, model, schema_editor, using="", **kwargs):
        if schema_editor.connection.vendor == "postgresql":
            using = " USING brin"
        return super().create_sql(model, schema_editor, using=using, **kwargs)


def mark_legacy_keys(apps, schema_editor):
    record_model = apps.get_model("billing", "SpendRecord")
    import_model = apps.get_model("billing", "BillingImport")
    legacy = record_model.objects.annotate(digits=Length("row_key")).filter(digits=OLD_KEY_DIGITS)
    imports = legacy.values_list("billing_import_id", flat=True).distinct()
    import_model.objects.filter(pk__in=list(imports)).update(row_key_scheme=SHA256_TEXT)
    legacy.update(row_key=Substr("row_key", 1, 32))


class Migration(migrations.Migration):
    dependencies = [
        ("billing", "0002_breview_spend_grant"),
        ("pricing", "0007_offers_price_version"),
    ]

    operations = [
        migrations.AddField(
            model_name="billingimport",
            name="row_key_scheme",
            field=models.PositiveSmallIntegerField(
                choices=[(1, "SHA-256 of the row's text (before December 2026)"), (2, "128-bit column hash")],
                default=2,
                help_text="How this import's row keys were made; older keys are matched through the file's checksum.",
            ),
        ),
        migrations.RunPython(mark_legacy_keys, migrations.RunPython.noop, elidable=False),
        migrations.AlterModelOptions(
            name="spendrecord",
            options={"ordering": ["charge_period_start", "row_key"]},
        ),
        migrations.RemoveField(
            model_name="spendrecord",
            name="id",
        ),
        migrations.AlterField(
            model_name="spendrecord",
            name="row_key",
            field=models.UUIDField(
                editable=False,
                help_text="Hash of the normalized row: re-imports add nothing.",
                primary_key=True,
                serialize=False,
            ),
        ),
        migrations.AlterField(
            model_name="spendrecord",
            name="billing_import",
            field=models.ForeignKey(
                db_constraint=False,
                db_index=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="records",
                to="billing.billingimport",
            ),
        ),
        migrations.AddIndex(
            model_name="spendrecord",
            index=BrinOnPostgres(fields=["billing_import"], name="spend_import"),
        ),
        migrations.AlterField(
            model_name="spendrecord",
            name="gpu",
            field=models.ForeignKey(
                blank=True,
                db_constraint=False,
                db_index=False,
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                to="pricing.gpumodel",
            ),
        ),
    ]
