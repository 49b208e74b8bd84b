"""The four roles and the checks every page and API view uses to say who may reach it.

Roles are Django groups named after them (created by a migration). A superuser holds every role.
`admin` holds every role; `engineer` and `finance` each include `viewer`. Spend data is for
`finance` and `admin` only, so no other role ever includes `finance`.
"""

from functools import wraps

from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from rest_framework.permissions import BasePermission

from gpuledger.accounts.user_facts import user_fact

VIEWER = "viewer"
ENGINEER = "engineer"
FINANCE = "finance"
ADMIN = "admin"
ROLES = (VIEWER, ENGINEER, FINANCE, ADMIN)

# The roles each group grants, beyond its own name.
_IMPLIED = {
    ADMIN: set(ROLES),
    ENGINEER: {ENGINEER, VIEWER},
    FINANCE: {FINANCE, VIEWER},
    VIEWER: {VIEWER},
}


def user_roles(user) -> set[str]:
    """Every role the user holds, with the implied ones."""
    if not getattr(user, "is_authenticated", False) or not user.is_active:
        return set()
    if user.is_superuser:
        return set(ROLES)
    cached = getattr(user, "_gpuledger_roles", None)
    if cached is None:
        cached = set()
        for name in user_fact(user, "roles", _role_groups):
            cached |= _IMPLIED[name]
        user._gpuledger_roles = cached
    return cached


def _role_groups(user) -> tuple[str, ...]:
    return tuple(sorted(user.groups.filter(name__in=ROLES).values_list("name", flat=True)))


def user_has_role(user, *roles: str) -> bool:
    """True when the user holds any of `roles`."""
    return bool(user_roles(user) & set(roles))


def role_required(*roles: str):
    """Page decorator: anonymous users go to the login page, signed-in users without a role get 403."""

    def decorator(view):
        @wraps(view)
        def wrapped(request, *args, **kwargs):
            if not request.user.is_authenticated:
                return redirect_to_login(request.get_full_path())
            if not user_has_role(request.user, *roles):
                raise PermissionDenied
            return view(request, *args, **kwargs)

        wrapped.required_roles = roles
        return wrapped

    return decorator


def role_permission(*roles: str) -> type[BasePermission]:
    """DRF permission class for `roles`: 401/403 for anonymous, 403 for signed-in users without one."""

    class HasRole(BasePermission):
        required_roles = roles
        message = "This needs the role " + " or ".join(roles) + "."

        def has_permission(self, request, view):
            return user_has_role(request.user, *roles)

    HasRole.__name__ = "HasRole_" + "_".join(roles)
    return HasRole


# Any role at all: pages everybody signed in may see (the API schema and docs).
SignedInWithRole = role_permission(*ROLES)
