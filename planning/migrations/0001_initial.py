"""CapacityPlan moves from procurement to planning as state only: its table keeps its name
(``procurement_capacityplan``), its rows, its sequence and its constraint; nothing is written to the
database. procurement's 0013 drops the model from procurement's state after this one."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("procurement", "0012_tco_study_and_workload_saved_once"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="CapacityPlan",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        ("name", models.CharField(max_length=200)),
                        (
                            "scope_teams",
                            models.JSONField(
                                blank=True,
                                default=list,
                                help_text="Spend teams read (SpendRecord.team); empty: every team.",
                            ),
                        ),
                        (
                            "inputs",
                            models.JSONField(
                                help_text="The request: period, GPU, horizon, growth, trials, study, currency."
                            ),
                        ),
                        (
                            "prices_used",
                            models.JSONField(
                                default=list, help_text="Each price with its source and observed date."
                            ),
                        ),
                        ("result", models.JSONField(default=dict)),
                        (
                            "fingerprint",
                            models.CharField(help_text="Hash of the inputs and prices used.", max_length=64),
                        ),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        ("updated_at", models.DateTimeField(auto_now=True)),
                        (
                            "owner",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.SET_NULL,
                                to=settings.AUTH_USER_MODEL,
                            ),
                        ),
                        (
                            "previous",
                            models.OneToOneField(
                                blank=True,
                                help_text="The plan this recomputation replaced; both rows are kept.",
                                null=True,
                                on_delete=django.db.models.deletion.SET_NULL,
                                related_name="next_version",
                                to="planning.capacityplan",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "procurement_capacityplan",
                        "ordering": ["-created_at", "-pk"],
                        "constraints": [
                            models.UniqueConstraint(
                                condition=models.Q(("previous__isnull", True)),
                                fields=("fingerprint",),
                                name="capacity_plan_saved_once",
                            )
                        ],
                    },
                ),
            ],
            database_operations=[],
        ),
    ]
