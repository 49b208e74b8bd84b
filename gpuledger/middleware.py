"""Refuse a query parameter or form field no field can hold (a NUL byte, a lone surrogate, a date in
year 1 or 9999: gpuledger.input_bounds) with a 400 naming it, before any view: PostgreSQL text cannot
hold a NUL, and the others raised deep in the database layer or the period arithmetic (a 500). JSON
bodies are checked by the API's parser (gpuledger.parsers), YAML and JSON documents pasted into a form
by their loaders; all three use the same checks."""

from __future__ import annotations

from django.http import JsonResponse

from gpuledger.api_errors import error_body
from gpuledger.input_bounds import NAME_MAX_CHARS, text_problem

# a urlencoded body is read into request.body, so the view can still read it. A multipart body on a page
# is parsed into request.POST and request.FILES, which Django keeps for the view (CsrfViewMiddleware's
# token check reads them too): its text fields are checked as a urlencoded form's are, since a NUL in a
# multipart token name was a 500 on PostgreSQL (issue 31, outside probe); file contents are the
# importers' to check. Under /api/ it is left to DRF: a JSON-only view could not read a spent stream
# (a 500, not its 415), and DRF's CharField refuses a NUL itself.
FORM_TYPES = ("application/x-www-form-urlencoded",)
PAGE_FORM_TYPES = (*FORM_TYPES, "multipart/form-data")
API_PREFIX = "/api/"


def _first_problem(query) -> tuple[str, str] | None:
    for name, values in query.lists():
        problem = text_problem(name) or next(filter(None, map(text_problem, values)), None)
        if problem is None and name == "name" and any(len(value) > NAME_MAX_CHARS for value in values):
            problem = f"at most {NAME_MAX_CHARS} characters"
        if problem:
            return name, problem
    return None


class RejectNulBytesMiddleware:
    """(The name it had when NUL bytes were its one check.)"""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        found = _first_problem(request.GET)
        kind = "query parameter"
        form_types = FORM_TYPES if request.path.startswith(API_PREFIX) else PAGE_FORM_TYPES
        if found is None and request.method == "POST" and request.content_type in form_types:
            found, kind = _first_problem(request.POST), "form field"
        if found is not None:
            name, problem = found
            shown = name.replace("\x00", "\\x00").encode("utf-8", "backslashreplace").decode()[:60]
            message = f"{kind} {shown!r}: {problem}"
            # The one error shape, which every documented 400 has (was detail/field only).
            return JsonResponse(error_body(shown, message), status=400)
        return self.get_response(request)
