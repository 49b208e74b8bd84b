"""Drop a user's cached facts (user_facts.py) whenever what they are computed from changes: the user,
their groups (the roles), their teams, a group or a team itself. AccountsConfig.ready connects these;
apps with facts of their own connect theirs (billing/apps.py, the spend grants)."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db.models.signals import m2m_changed, post_delete, post_save, pre_delete

from gpuledger.accounts.models import Team
from gpuledger.accounts.user_facts import forget


def _user_changed(sender, instance, **kwargs) -> None:
    forget([instance.pk])


def _members_changed(sender, instance, action, pk_set, **kwargs) -> None:
    """A user's groups or teams changed (`instance` is the user: `user.groups.add`, `user.teams.remove`)
    or a group's or team's users did (`pk_set` names them; before a clear, the group or team still
    lists them). Django's `reverse` flag is no guide: the user is the forward side of `groups` but the
    reverse side of `Team.members`."""
    if isinstance(instance, get_user_model()):
        forget([instance.pk])
    elif action == "pre_clear":
        forget(_member_ids(instance))
    elif action in ("post_add", "post_remove"):
        forget(pk_set or ())


def _member_ids(group_or_team) -> list[int]:
    users = group_or_team.user_set if isinstance(group_or_team, Group) else group_or_team.members
    return list(users.values_list("pk", flat=True))


def _group_or_team_changed(sender, instance, **kwargs) -> None:
    """A renamed group is another role; a renamed team another spend label: drop their users' facts."""
    if instance.pk is not None:
        forget(_member_ids(instance))


def connect() -> None:
    user = get_user_model()
    for signal in (post_save, post_delete):
        signal.connect(_user_changed, sender=user, dispatch_uid=f"user-facts-user-{signal}")
    for through in (user.groups.through, Team.members.through):
        m2m_changed.connect(_members_changed, sender=through, dispatch_uid=f"user-facts-m2m-{through}")
    for model in (Group, Team):
        post_save.connect(_group_or_team_changed, sender=model, dispatch_uid=f"user-facts-save-{model}")
        pre_delete.connect(_group_or_team_changed, sender=model, dispatch_uid=f"user-facts-delete-{model}")
