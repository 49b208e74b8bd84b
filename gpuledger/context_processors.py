"""What every page's navigation needs: the links the signed-in user's roles can use, and who they are."""

from __future__ import annotations

import functools

from django.conf import settings
from django.urls import NoReverseMatch, Resolver404, get_urlconf, resolve, reverse

from gpuledger.roles import ADMIN, ENGINEER, FINANCE, ROLES, VIEWER, user_roles

# (label, URL name, the roles that may open it when the view does not say). A URL name this build does
# not have is left out, so a page that lands later shows up here without touching the other lines. A
# page protected by `role_required` says its roles itself (`required_roles`), and those win, so a link
# is shown exactly to the people the page lets in; a view whose access is more than roles says who it
# lets in with `visible_to(user)` (the spend pages: finance, admin and engineers an admin granted it).
NAV_LINKS = (
    ("GPU catalog", "catalog", (VIEWER,)),
    ("Sizing", "sizing", (ENGINEER,)),
    ("Workloads", "workloads", (ENGINEER,)),
    ("Dashboard", "dashboard", (ENGINEER, FINANCE)),
    ("Rent or buy", "tco-list", (ENGINEER,)),
    ("Price status", "status", (VIEWER,)),
    ("Spend", "billing-review", (FINANCE,)),
    ("Capacity plan", "plans", (FINANCE,)),
    ("Benchmarks", "benchmark-list", (ENGINEER,)),
    ("API", "api-docs", (VIEWER,)),
    ("Admin", "admin:index", (ADMIN,)),
)
# The role named beside the user: the widest they hold.
ROLE_ORDER = (ADMIN, FINANCE, ENGINEER, VIEWER)
assert set(ROLE_ORDER) == set(ROLES)


def _url(name: str) -> str | None:
    return _url_in(name, _urlconf())


def _callback(url: str):
    return _callback_in(url, _urlconf())


def _urlconf() -> str:
    # the URLs and their views are fixed for a URLconf: look each up once per process, not 30 times a
    # page (they were a tenth of a cached page's time); a test that swaps the URLconf gets its own
    return get_urlconf() or settings.ROOT_URLCONF


@functools.cache
def _url_in(name: str, urlconf: str) -> str | None:
    try:
        return reverse(name, urlconf=urlconf)
    except NoReverseMatch:
        return None


@functools.cache
def _callback_in(url: str, urlconf: str):
    try:
        return resolve(url, urlconf=urlconf).func
    except Resolver404:
        return None


def _required_roles(url: str, default: tuple[str, ...]) -> tuple[str, ...]:
    """The roles the page's view requires (role_required on a function view, or role_permission on a
    DRF view), else `default`."""
    callback = _callback(url)
    if callback is None:
        return default
    roles = getattr(callback, "required_roles", None)
    view_class = getattr(callback, "view_class", None)
    if roles is None and view_class is not None:
        for permission in getattr(view_class, "permission_classes", ()):
            roles = getattr(permission, "required_roles", None) or roles
    return tuple(roles) if roles else default


def _shown(url: str, default_roles: tuple[str, ...], roles: set[str], user) -> bool:
    visible_to = getattr(_callback(url), "visible_to", None)
    if visible_to is not None and user is not None:
        return bool(getattr(user, "is_authenticated", False) and visible_to(user))
    return bool(roles & set(_required_roles(url, default_roles)))


def nav_links(roles: set[str], current_path: str = "", user=None) -> list[dict]:
    """The links for a user holding `roles` (and, for views that say who they let in, `user` itself)."""
    links = []
    for label, name, default_roles in NAV_LINKS:
        url = _url(name)
        if url is None or not _shown(url, default_roles, roles, user):
            continue
        current = current_path == url if url == "/" else current_path.startswith(url)
        links.append({"label": label, "url": url, "current": current})
    return links


def navigation(request) -> dict:
    user = getattr(request, "user", None)
    roles = user_roles(user)
    return {
        "nav_links": nav_links(roles, request.path, user),
        "nav_role": next((role for role in ROLE_ORDER if role in roles), ""),
        "nav_login_url": _url("login"),
        "nav_logout_url": _url("logout"),
    }
