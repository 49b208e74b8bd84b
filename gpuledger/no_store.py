"""Every answer the application computes carries ``Cache-Control: no-store`` (issue 31, finding 6):
spend answers and exports above all, but every page and API answer is a signed-in person's view of
their teams' data, which no browser, proxy or shared cache should keep. Static files (WhiteNoise,
before this middleware) keep their own long-lived headers; a view that sets Cache-Control itself keeps
its own."""

from __future__ import annotations

from django.utils.cache import patch_cache_control


class NoStoreMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if not response.has_header("Cache-Control"):
            patch_cache_control(response, no_store=True)
        return response
