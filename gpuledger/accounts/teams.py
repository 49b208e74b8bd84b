"""Who sees which workloads and studies: admins see all, engineers their teams' objects.

An object with no team (rows stored before teams existed) is visible to its owner and to admins.
A user's team for new objects is their first team by name unless they name another of theirs.
"""

from __future__ import annotations

from django.db.models import Q, QuerySet
from django.http import Http404

from gpuledger.accounts.models import Team
from gpuledger.accounts.user_facts import user_fact
from gpuledger.errors import InputError
from gpuledger.roles import ADMIN, ENGINEER, user_has_role


def user_team_ids(user) -> list[int]:
    cached = getattr(user, "_gpuledger_team_ids", None)
    if cached is None:
        cached = list(user_fact(user, "team_ids", _team_ids)) if user.pk else []
        user._gpuledger_team_ids = cached
    return cached


def _team_ids(user) -> tuple[int, ...]:
    return tuple(Team.objects.filter(members=user).order_by("pk").values_list("pk", flat=True))


def sees_everything(user) -> bool:
    return user_has_role(user, ADMIN)


def visible_to(queryset: QuerySet, user) -> QuerySet:
    """Narrow a queryset of team-owned objects (fields `team` and `owner`) to what `user` may see."""
    queryset = queryset.all()  # a manager works too
    if sees_everything(user):
        return queryset
    if not user_has_role(user, ENGINEER):
        return queryset.none()
    return queryset.filter(Q(team_id__in=user_team_ids(user)) | Q(team__isnull=True, owner=user))


def can_see(user, *, team_id: int | None, owner_id: int | None) -> bool:
    """`visible_to`'s rule for one object known by its team and owner (read from a cache, say)."""
    if sees_everything(user):
        return True
    if not user_has_role(user, ENGINEER):
        return False
    return team_id in user_team_ids(user) if team_id is not None else owner_id == user.pk


def get_visible_or_404(queryset: QuerySet, user, **lookup):
    """The object if `user` may see it; another team's object is "not found", never "forbidden", so
    its existence is not revealed."""
    try:  # callers look up by primary key: a get, so no ORDER BY is compiled or sent as .first() would
        return visible_to(queryset, user).get(**lookup)
    except queryset.model.DoesNotExist:
        raise Http404("No such object.") from None


class TeamChoiceError(InputError):
    """A team the user may not choose; always about the ``team`` field."""

    def __init__(self, message: str):
        super().__init__("team", message, text=message)


def team_for_new_object(user, requested: str | None = None) -> Team | None:
    """The team a new object of `user` belongs to: `requested` (a slug) if given and allowed, else the
    user's first team; None for a user in no team (the object is then the owner's alone)."""
    teams = Team.objects.all() if sees_everything(user) else Team.objects.filter(members=user)
    if requested:
        team = teams.filter(slug=requested).first()
        if team is None:
            raise TeamChoiceError(f"you are not in a team {requested!r}")
        return team
    mine = Team.objects.filter(members=user).order_by("name").first()
    return mine
