"""The admin site is for the `admin` role (a group), not only for staff flags set by hand."""

from __future__ import annotations

from gpuledger.roles import ADMIN, user_has_role


def open_to_admin_role(site) -> None:
    """Let active members of the admin group into `site`; what they may change there still follows
    their model permissions (the admin group holds all of them, see roles_sync)."""

    def has_permission(request):
        user = request.user
        return bool(user.is_active and (user.is_staff or user_has_role(user, ADMIN)))

    site.has_permission = has_permission
