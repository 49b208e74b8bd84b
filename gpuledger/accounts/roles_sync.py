"""Create the four role groups and give the admin group every model permission (idempotent).

Groups carry the roles (gpuledger/roles.py reads group names); model permissions matter only in the
admin site, where the admin group may do everything, including accepting suspect prices.
"""

from __future__ import annotations

from django.contrib.auth.models import Group, Permission

from gpuledger.roles import ADMIN, ROLES


def sync_roles() -> dict[str, int]:
    """Ensure every role group exists and the admin group holds every permission; returns counts."""
    created = 0
    for name in ROLES:
        _, made = Group.objects.get_or_create(name=name)
        created += made
    admin = Group.objects.get(name=ADMIN)
    missing = Permission.objects.exclude(group=admin)
    granted = missing.count()
    admin.permissions.add(*missing)
    return {"groups_created": created, "permissions_granted": granted}


def sync_after_migrate(sender, **kwargs) -> None:
    """post_migrate is sent once per app, in app order: sync after the last app, when every app's
    permissions have been created."""
    from django.apps import apps

    if sender is list(apps.get_app_configs())[-1]:
        sync_roles()
