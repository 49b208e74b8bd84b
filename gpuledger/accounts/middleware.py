"""Sign-in required everywhere: pages redirect anonymous users to the login page.

API views (DRF) are left to DRF, which authenticates sessions and API tokens and answers an anonymous
caller with 401: a redirect would hide the token challenge from scripts. DRF views that render an
HTML page (the API docs) are pages: anonymous visitors are sent to sign in. Views marked with Django's
`login_not_required` (the login page, /healthz) stay open; static files never reach this middleware.
"""

from __future__ import annotations

from django.contrib.auth.middleware import LoginRequiredMiddleware
from rest_framework.renderers import TemplateHTMLRenderer
from rest_framework.views import APIView


def is_api_view(view_func) -> bool:
    """A DRF view answering data; a DRF view that renders an HTML page (the API docs) is a page."""
    view_class = getattr(view_func, "cls", None) or getattr(view_func, "view_class", None)
    if not (isinstance(view_class, type) and issubclass(view_class, APIView)):
        return False
    renderers = getattr(view_class, "renderer_classes", ())
    return not any(issubclass(renderer, TemplateHTMLRenderer) for renderer in renderers)


def is_html_api_view(view_func) -> bool:
    view_class = getattr(view_func, "cls", None)
    return isinstance(view_class, type) and issubclass(view_class, APIView) and not is_api_view(view_func)


class SignInRequiredMiddleware(LoginRequiredMiddleware):
    def process_view(self, request, view_func, view_args, view_kwargs):
        if is_api_view(view_func):
            return None
        if is_html_api_view(view_func) and not request.user.is_authenticated:
            # DRF marks its views login_not_required; its HTML pages still send visitors to sign in
            return self.handle_no_permission(request, view_func)
        return super().process_view(request, view_func, view_args, view_kwargs)
