"""Refuse an oversized request from its Content-Length, before its body is read (issue 31): Django
otherwise receives a multipart upload whole, spooling it to temp disk, and only then could the upload
view see it was over the limit. Any body over the largest upload plus its multipart envelope is a 413
in the API's one error shape (gpuledger.api_errors), on every route: no route takes a bigger body
(non-file fields are held to DATA_UPLOAD_MAX_MEMORY_SIZE when read anyway).

A body sent without a Content-Length (chunked) is not bounded here: Django's WSGI request reads no
further than the Content-Length it was given, and the front server is expected to de-chunk with a cap."""

from __future__ import annotations

from django.http import JsonResponse

from gpuledger.api_errors import ROOT, error_body

MAX_UPLOAD_BYTES = 1024 * 1024 * 1024  # 1 GiB: a month of a large CUR export, gzipped
ENVELOPE_BYTES = 1024 * 1024  # the multipart boundaries, part headers and the form's other fields
MAX_REQUEST_BYTES = MAX_UPLOAD_BYTES + ENVELOPE_BYTES


def declared_length(request) -> int | None:
    """The Content-Length the client declared; None when absent or not a whole number (Django reads such
    a body as empty)."""
    value = request.META.get("CONTENT_LENGTH") or ""
    return int(value) if value.isascii() and value.isdigit() else None


class RefuseOversizedBodyMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        length = declared_length(request)
        if length is not None and length > MAX_REQUEST_BYTES:
            message = (
                f"request body of {length} bytes is over the {MAX_UPLOAD_BYTES // 2**20} MiB upload limit; "
                "import a larger bill with manage.py import_billing"
            )
            response = JsonResponse(error_body(ROOT, message), status=413)
            # the body is not read: the connection cannot carry another request after it
            response["Connection"] = "close"
            return response
        return self.get_response(request)
