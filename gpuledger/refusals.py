"""`handler403`: a refused page is the site's own page, with the menu, the reason and who can grant
access (issue 30); a refused address under /api/ answers in the API's one error shape, as JSON.

DRF views never reach this handler (DRF answers their 403 itself, through gpuledger.api_errors); this is
for pages (`role_required`, `spend_page`, a view raising PermissionDenied with its own message) and for a
non-DRF view under /api/.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db.models import Q
from django.http import JsonResponse
from django.shortcuts import render
from django.urls import Resolver404, resolve

from gpuledger.api_errors import ROOT, error_body
from gpuledger.context_processors import ROLE_ORDER
from gpuledger.roles import ADMIN, user_roles

API_PREFIX = "/api/"
# The admins named as the people to ask: a handful is enough to find one.
ADMINS_NAMED = 5


def permission_denied(request, exception):
    reason = _reason(request, exception)
    if request.path.startswith(API_PREFIX):
        return JsonResponse(error_body(ROOT, reason), status=403)
    roles = sorted(user_roles(request.user), key=ROLE_ORDER.index)  # the widest first, as the menu bar
    context = {
        "reason": reason,
        "page_roles": _page_roles(request.path),
        "your_roles": roles,
        "admins": _admin_names(),
        "path": request.path,
    }
    return render(request, "403.html", context, status=403)


def _page_roles(path: str) -> tuple[str, ...]:
    try:
        callback = resolve(path).func
    except Resolver404:
        return ()
    return tuple(getattr(callback, "required_roles", ()) or ())


def _reason(request, exception) -> str:
    """The view's own message where it gave one, else which roles the page needs."""
    message = str(exception or "").strip()
    if message:
        return message
    needed = _page_roles(request.path)
    if needed:
        return "This page needs the role " + " or ".join(needed) + "."
    return "Your account has no access to this page."


def _admin_names() -> list[str]:
    users = get_user_model().objects.filter(is_active=True)
    admins = users.filter(Q(is_superuser=True) | Q(groups__name=ADMIN)).distinct().order_by("username")
    return list(admins.values_list("username", flat=True)[:ADMINS_NAMED])
