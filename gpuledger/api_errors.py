"""One error shape across the API: ``{"errors": [{"path": ..., "message": ...}]}``, and nothing else.

`/api/size/` answered this way first; every other error now does too, through `api_exception_handler`
(settings REST_FRAMEWORK["EXCEPTION_HANDLER"]): a DRF ValidationError becomes one entry per bad field
(nested fields joined by dots, list items by index), an `InputError` (gpuledger/errors.py, the base of
every bad-input error) one entry per problem it carries, and any other API exception (401, 403, 404,
405, 415, 429, a parse error) one entry at path "(root)". The keys error bodies carried before beside
``errors`` (``detail``, ``field``/``error``, a field's own key) were dropped (docs/CHANGELOG.md).

`document_error_responses` is a drf-spectacular postprocessing hook: it adds the ``ApiErrors``
component to the schema and documents it as the body of every error response an operation can give
that its view does not describe itself (400, 401, 403, 429 everywhere; 404 with a path parameter;
413 and 415 with a body).
"""

from __future__ import annotations

from collections.abc import Mapping

from rest_framework import exceptions, serializers, status
from rest_framework.response import Response
from rest_framework.views import exception_handler, set_rollback

from gpuledger.errors import ROOT, InputError

EMPTY_BODY_MESSAGE = "empty file: the request body is empty; send a JSON object"


class EmptyBody(exceptions.ParseError):
    """A POST with nothing in it: said as "empty file", not as a list of missing fields."""

    default_detail = EMPTY_BODY_MESSAGE


def require_body(request) -> None:
    """Raise EmptyBody for a request without a body (call after the view's permission checks ran)."""
    if not request.body.strip():
        raise EmptyBody()


def error_body(path: str, message: str) -> dict:
    """An error body for a view or middleware that answers without raising: the one shape."""
    return {"errors": [{"path": path, "message": message}]}


def input_error_body(error: InputError) -> dict:
    """The one shape for an InputError: every problem it carries, each by its path."""
    return {"errors": [{"path": path, "message": message} for path, message in error.problems]}


def input_error_response(error: InputError) -> Response:
    """400 naming every bad field; nothing was stored."""
    return Response(input_error_body(error), status=status.HTTP_400_BAD_REQUEST)


def error_entries(detail, path: str = "") -> list[dict]:
    """Flatten DRF error detail (dicts of lists of ErrorDetail, nested) into path/message pairs."""
    if isinstance(detail, Mapping):
        entries = []
        for key, value in detail.items():
            name = ROOT if key in ("non_field_errors", "detail") and not path else str(key)
            entries += error_entries(value, name if not path or name == ROOT else f"{path}.{name}")
        return entries
    if isinstance(detail, list | tuple):
        if all(not isinstance(item, Mapping | list | tuple) for item in detail):
            return [{"path": path or ROOT, "message": str(item)} for item in detail]
        entries = []
        for index, item in enumerate(detail):
            entries += error_entries(item, f"{path}.{index}" if path else str(index))
        return entries
    return [{"path": path or ROOT, "message": str(detail)}]


def api_exception_handler(exc, context):
    if isinstance(exc, InputError):  # bad input a view let through: the one place it becomes a 400
        set_rollback()  # nothing the request wrote is kept
        return Response(input_error_body(exc), status=status.HTTP_400_BAD_REQUEST)
    response = exception_handler(exc, context)
    if response is None:
        return None  # not an API exception: Django's 500 handling
    data = response.data
    if isinstance(data, Mapping) and set(data) == {"errors"}:
        return response  # already in the shape
    if isinstance(exc, exceptions.ValidationError):
        errors = error_entries(data)
    else:
        errors = error_entries({"detail": data.get("detail", data) if isinstance(data, Mapping) else data})
    response.data = {"errors": errors}
    return response


class ApiErrorSerializer(serializers.Serializer):
    path = serializers.CharField(
        help_text='the field at fault, dotted (e.g. "model.num_layers"), a file position '
        '("study, line 3, column 5"), or "(root)" for the request as a whole'
    )
    message = serializers.CharField(help_text="what is wrong, in words")


class ApiErrorsSerializer(serializers.Serializer):
    errors = ApiErrorSerializer(many=True, help_text="every problem found, all at once")


ERRORS_COMPONENT = "ApiErrors"
ERRORS_SCHEMA = {
    "type": "object",
    "description": "Every API error: one entry per problem, each naming where it is.",
    "properties": {
        "errors": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": ApiErrorSerializer().fields["path"].help_text},
                    "message": {"type": "string", "description": "what is wrong, in words"},
                },
                "required": ["path", "message"],
            },
        }
    },
    "required": ["errors"],
}
STANDARD_ERRORS = {
    "400": "Bad input: every bad field by its path; nothing was stored. Any query parameter holding a "
    "NUL byte is refused too (gpuledger/middleware.py), whatever the operation.",
    "401": "Not signed in (no session and no valid token).",
    "403": "Signed in without a role this endpoint needs.",
    "404": "No such object.",
    "413": "The request body is over the size limit (DATA_UPLOAD_MAX_MEMORY_SIZE); nothing was read.",
    "415": "The request body is not of a media type this operation reads.",
    "429": "Too many requests: over the API rate limit for this user or address; retry after the "
    "seconds in the Retry-After header.",
}
BODY_METHODS = ("post", "put", "patch")


def standard_error_codes(path: str, method: str, operation: dict) -> list[str]:
    """The errors any operation can answer whatever its view says: the middleware, parser, permission
    and throttle classes every API view shares (schemathesis found each of them undocumented)."""
    codes = ["400", "401", "403", "429"]
    parameters = {parameter.get("name") for parameter in operation.get("parameters", [])}
    # A path parameter that names nothing, and (the schema view) a `format` it does not render.
    if "{" in path or "format" in parameters:
        codes.append("404")
    if method in BODY_METHODS:
        codes += ["413", "415"]
    return codes


def document_error_responses(result, generator, request, public):
    """Postprocessing hook: the ApiErrors component, and it as each undocumented error response."""
    components = result.setdefault("components", {}).setdefault("schemas", {})
    components[ERRORS_COMPONENT] = ERRORS_SCHEMA
    reference = {"$ref": f"#/components/schemas/{ERRORS_COMPONENT}"}
    for path, operations in result.get("paths", {}).items():
        for method, operation in operations.items():
            if not isinstance(operation, dict) or "responses" not in operation:
                continue
            for code in standard_error_codes(path, method, operation):
                response = operation["responses"].setdefault(code, {"description": STANDARD_ERRORS[code]})
                response.setdefault("content", {"application/json": {"schema": reference}})
    return result
