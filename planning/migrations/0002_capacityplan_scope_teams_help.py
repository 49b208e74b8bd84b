"""The scope's help text names the team as the bills' tags spell it: SpendRecord is gone (billing 0014)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("planning", "0001_initial"),
    ]

    operations = [
        migrations.AlterField(
            model_name="capacityplan",
            name="scope_teams",
            field=models.JSONField(
                blank=True,
                default=list,
                help_text="Spend teams read, as the bills' tags spell them; empty: every team.",
            ),
        ),
    ]
