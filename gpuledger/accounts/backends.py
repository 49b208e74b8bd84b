"""The model backend with sign-in throttling: it applies to every sign-in form (site and admin)."""

from __future__ import annotations

from django.contrib.auth.backends import ModelBackend
from django.core.exceptions import PermissionDenied

from gpuledger.accounts import throttling


class ThrottledModelBackend(ModelBackend):
    def authenticate(self, request, username=None, password=None, **kwargs):
        if username is None:
            username = kwargs.get(self._username_field())
        if throttling.login_blocked(username or "", request):
            # PermissionDenied stops Django trying further backends: a blocked name stays blocked.
            raise PermissionDenied(throttling.blocked_message())
        user = super().authenticate(request, username=username, password=password, **kwargs)
        if user is None:
            throttling.login_failure_record(username or "", request)
        else:
            throttling.login_failures_clear(username or "", request)
        return user

    @staticmethod
    def _username_field() -> str:
        from django.contrib.auth import get_user_model

        return get_user_model().USERNAME_FIELD
