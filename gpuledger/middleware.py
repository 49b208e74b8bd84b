"""Refuse a NUL byte in a query parameter with a 400 naming it: PostgreSQL text cannot hold one, and
the filter it reached raised ValueError deep in the database layer (a 500)."""

from __future__ import annotations

from django.http import JsonResponse

from gpuledger.api_errors import error_body


class RejectNulBytesMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        for name, values in request.GET.lists():
            if "\x00" in name or any("\x00" in value for value in values):
                shown = name.replace("\x00", "\\x00")[:60]
                message = f"query parameter {shown!r}: holds a NUL byte"
                # The one error shape, which every documented 400 has (was detail/field only).
                return JsonResponse(error_body(shown, message, detail=message, field=shown), status=400)
        return self.get_response(request)
