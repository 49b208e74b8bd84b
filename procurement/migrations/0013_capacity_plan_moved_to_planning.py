"""CapacityPlan now belongs to the planning app (planning/migrations/0001_initial.py): procurement
forgets it in state only, so the table and its rows stay. Its content type follows it, so the
permissions granted on it stay granted."""

from django.db import migrations


def content_type_to(app_label: str, other: str):
    def move(apps, schema_editor):
        content_type = apps.get_model("contenttypes", "ContentType")
        if content_type.objects.filter(app_label=app_label, model="capacityplan").exists():
            return  # already there (created after a fresh migrate): nothing to carry
        content_type.objects.filter(app_label=other, model="capacityplan").update(app_label=app_label)

    return move


class Migration(migrations.Migration):
    dependencies = [
        ("contenttypes", "0002_remove_content_type_name"),
        ("procurement", "0012_tco_study_and_workload_saved_once"),
        ("planning", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.DeleteModel(name="CapacityPlan")],
            database_operations=[],
        ),
        migrations.RunPython(content_type_to("planning", "procurement"), content_type_to("procurement", "planning")),
    ]
