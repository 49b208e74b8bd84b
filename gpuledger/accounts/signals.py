"""Bump the access version (gpuledger/data_versions.py), which every cached user fact (user_facts.py)
and workload head is keyed by, whenever what they come from changes: a user, their groups (the roles),
their teams, a group or a team itself. AccountsConfig.ready connects these; the spend grants are
connected by billing/apps.py."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from gpuledger.accounts.models import Team
from gpuledger.data_versions import bump_on_members_change, bump_on_write


def _only_a_login(instance, update_fields=None, **kwargs) -> bool:
    """Django saves `last_login` on every sign-in; no cached fact or page name reads it."""
    return update_fields is not None and set(update_fields) == {"last_login"}


def connect() -> None:
    user = get_user_model()
    bump_on_write("access", user, skip=_only_a_login)
    bump_on_write("access", Group, Team)
    bump_on_members_change("access", user.groups.through, Team.members.through)
