"""Sign-in required everywhere: pages redirect anonymous users to the login page.

API views (DRF) are left to DRF, which authenticates sessions and API tokens and answers an anonymous
caller with 401: a redirect would hide the token challenge from scripts. Views marked with Django's
`login_not_required` (the login page, /healthz) stay open; static files never reach this middleware.
"""

from __future__ import annotations

from django.contrib.auth.middleware import LoginRequiredMiddleware
from rest_framework.views import APIView


def is_api_view(view_func) -> bool:
    view_class = getattr(view_func, "cls", None) or getattr(view_func, "view_class", None)
    return isinstance(view_class, type) and issubclass(view_class, APIView)


class SignInRequiredMiddleware(LoginRequiredMiddleware):
    def process_view(self, request, view_func, view_args, view_kwargs):
        if is_api_view(view_func):
            return None
        return super().process_view(request, view_func, view_args, view_kwargs)
