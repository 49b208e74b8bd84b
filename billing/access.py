"""Who sees which spend: finance and admin see all of it; an engineer sees their own team's spend only
when an admin granted it (SpendGrant); viewers, and engineers of teams without a grant, see none.

Every spend page, export and API view asks `spend_scope` and passes its teams down to the review
request (`ReviewRequest.allowed_teams`), which filters the rows in SQL and again in the engine, so a
granted engineer never receives another team's rows, whatever filter they type."""

from __future__ import annotations

from dataclasses import dataclass
from functools import wraps

from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from rest_framework.permissions import BasePermission

from gpuledger.accounts.user_facts import register_fact, user_fact
from gpuledger.data_versions import bump_on_write
from gpuledger.roles import ADMIN, ENGINEER, FINANCE, user_has_role


@dataclass(frozen=True)
class SpendScope:
    teams: tuple[str, ...] = ()  # empty: every team (finance, admin); else only these spend teams

    @property
    def everything(self) -> bool:
        return not self.teams

    def team_filter(self, asked: str) -> str:
        """The team filter to apply: the one asked for if it is within the scope; an engineer granted
        one team gets it whatever they asked (blank means theirs). Outside the scope: PermissionDenied."""
        if self.everything or asked in self.teams:
            return asked
        if not asked and len(self.teams) == 1:
            return self.teams[0]
        if not asked:
            return ""  # several granted teams: all of them (allowed_teams still filters)
        raise PermissionDenied(f"team {asked!r}: your spend access covers team {', '.join(self.teams)} only")


def granted_teams(user) -> tuple[str, ...]:
    """The spend teams an admin granted `user`'s teams (cached: gpuledger/accounts/user_facts.py)."""
    return user_fact(user, "spend_teams", _granted_teams)


def _granted_teams(user) -> tuple[str, ...]:
    from billing.models import SpendGrant

    grants = SpendGrant.objects.filter(team__members=user).select_related("team")
    return tuple(sorted({grant.spend_label for grant in grants}))


def connect_user_facts() -> None:
    """A grant made, changed or revoked changes what its team's members see at once (BillingConfig.ready):
    it bumps the access version, which every user fact is keyed by (user_facts.py)."""
    from billing.models import SpendGrant

    register_fact("spend_teams")
    bump_on_write("access", SpendGrant)


def spend_scope(user) -> SpendScope | None:
    """The spend `user` may see, or None for none."""
    if user_has_role(user, FINANCE, ADMIN):
        return SpendScope()
    if user_has_role(user, ENGINEER):
        teams = granted_teams(user)
        if teams:
            return SpendScope(teams=teams)
    return None


def can_see_spend(user) -> bool:
    """Whether `user` may open the spend pages (the navigation shows them the link by this)."""
    return spend_scope(user) is not None


def spend_page(view):
    """Page decorator: anonymous users sign in; users without spend access get 403; the view gets
    `request.spend_scope`."""

    @wraps(view)
    def wrapped(request, *args, **kwargs):
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        scope = spend_scope(request.user)
        if scope is None:
            raise PermissionDenied
        request.spend_scope = scope
        return view(request, *args, **kwargs)

    wrapped.required_roles = (FINANCE, ADMIN)  # plus engineers of granted teams
    wrapped.visible_to = can_see_spend  # the navigation asks this, not the roles: grants count too
    return wrapped


class HasSpendAccess(BasePermission):
    """DRF permission: finance, admin, or an engineer whose team an admin granted its spend."""

    message = "Spend data needs the finance or admin role, or an admin's spend grant to your team."
    required_roles = (FINANCE, ADMIN)  # plus engineers of granted teams

    def has_permission(self, request, view):
        scope = spend_scope(request.user)
        request.spend_scope = scope
        return scope is not None
