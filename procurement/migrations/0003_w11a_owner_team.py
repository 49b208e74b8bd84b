"""Workloads and TCO studies belong to a team (accounts.Team); recommendations say who saved them.

Workload.team was free text: each distinct name becomes a Team (slug from the name) and the workload
points at it; empty names stay without a team (visible to their owner and admins).
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models
from django.utils.text import slugify


def team_names_to_teams(apps, schema_editor):
    Team = apps.get_model("accounts", "Team")
    Workload = apps.get_model("procurement", "Workload")
    for name in Workload.objects.exclude(team_name="").values_list("team_name", flat=True).distinct():
        slug = slugify(name)[:50] or "team"
        team = Team.objects.filter(name=name).first() or Team.objects.create(name=name, slug=slug)
        Workload.objects.filter(team_name=name).update(team=team)


def teams_to_team_names(apps, schema_editor):
    Workload = apps.get_model("procurement", "Workload")
    for workload in Workload.objects.exclude(team=None).select_related("team"):
        workload.team_name = workload.team.name
        workload.save(update_fields=["team_name"])


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0001_w11a_teams_and_tokens"),
        ("procurement", "0002_tco_study_previous_version"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.RenameField("workload", "team", "team_name"),
        migrations.AddField(
            model_name="workload",
            name="team",
            field=models.ForeignKey(
                blank=True,
                help_text="Engineers see and change their team's workloads only (empty: stored before teams).",
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="workloads",
                to="accounts.team",
            ),
        ),
        migrations.RunPython(team_names_to_teams, teams_to_team_names),
        migrations.RemoveField("workload", "team_name"),
        migrations.AddField(
            model_name="tcostudy",
            name="team",
            field=models.ForeignKey(
                blank=True,
                help_text="Engineers see and change their team's studies only (empty: stored before teams).",
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="tco_studies",
                to="accounts.team",
            ),
        ),
        migrations.AddField(
            model_name="recommendation",
            name="spec",
            field=models.JSONField(
                blank=True, default=dict, help_text="The workload spec it ranked (the workload may change later)."
            ),
        ),
        migrations.AddField(
            model_name="recommendation",
            name="saved_by",
            field=models.ForeignKey(
                blank=True,
                help_text="Who saved these options as the workload's answer (a recompute keeps them).",
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="+",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
    ]
