"""`handler404`: an address under /api/ that no route matches (a slug holding a space, an id that is not
a number) answers in the API's one error shape, as JSON, instead of Django's HTML page: API clients read
every answer as JSON, and the schema documents each 404 as ApiErrors (found by the schemathesis suite)."""

from __future__ import annotations

from django.http import JsonResponse
from django.views import defaults

from gpuledger.api_errors import ROOT, error_body

API_PREFIX = "/api/"
MESSAGE = "Not found: no API resource has this address."


def not_found(request, exception):
    if request.path.startswith(API_PREFIX):
        return JsonResponse(error_body(ROOT, MESSAGE), status=404)
    return defaults.page_not_found(request, exception)
