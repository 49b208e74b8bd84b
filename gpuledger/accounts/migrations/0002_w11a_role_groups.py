"""The four role groups (gpuledger/roles.py reads their names). Permissions for the admin group are
granted after migrate (accounts.roles_sync), once every app's permissions exist."""

from django.db import migrations

ROLES = ("viewer", "engineer", "finance", "admin")


def create_groups(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    for name in ROLES:
        Group.objects.get_or_create(name=name)


class Migration(migrations.Migration):
    dependencies = [("accounts", "0001_w11a_teams_and_tokens"), ("auth", "0012_alter_user_first_name_max_length")]

    operations = [migrations.RunPython(create_groups, migrations.RunPython.noop)]
