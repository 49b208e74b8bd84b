"""python manage.py sync_roles: create the role groups and grant the admin group every permission.

Idempotent: a second run creates nothing. migrate runs the same after every migration.
"""

from django.core.management.base import BaseCommand

from gpuledger.accounts.roles_sync import sync_roles


class Command(BaseCommand):
    help = "Create the viewer/engineer/finance/admin groups (idempotent)."

    def handle(self, *args, **options):
        counts = sync_roles()
        self.stdout.write(
            f"roles: {counts['groups_created']} group(s) created, "
            f"{counts['permissions_granted']} permission(s) granted to admin"
        )
