"""The API's JSON parser, bounded: a body over DATA_UPLOAD_MAX_MEMORY_SIZE is a 413 and JSON nested
deeper than MAX_JSON_DEPTH a 400 naming line and column, before the decoder runs (it recurses, and
100,000-deep JSON crashed it into a 500). A decoded body with a value no field can hold (a NUL, a lone
surrogate, a date in year 1, a number like 1e-400: gpuledger.input_bounds) is a 400 naming the field."""

from __future__ import annotations

import json
from decimal import Decimal

from django.conf import settings
from rest_framework import status
from rest_framework.exceptions import APIException, ParseError
from rest_framework.parsers import JSONParser

from gpuledger.input_bounds import first_document_problem, literal_problem
from gpuledger.json_depth import MAX_JSON_DEPTH, first_too_deep, line_column


class RequestTooLarge(APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_detail = "The request body is too large."
    default_code = "request_too_large"


class FieldValueError(ParseError):
    """A value no field can hold: the API's one error shape naming the field as its path."""

    def __init__(self, field: str, message: str):
        # the shape of gpuledger.api_errors.error_body (not imported: DRF's views import this module)
        super().__init__({"errors": [{"path": field, "message": message}]})


class BoundedJSONParser(JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        raw = stream.read(limit + 1) if stream is not None else b""
        if len(raw) > limit:
            raise RequestTooLarge(f"The request body is over {limit:,} bytes.")
        encoding = (parser_context or {}).get("encoding", settings.DEFAULT_CHARSET)
        try:
            text = raw.decode(encoding)
        except UnicodeDecodeError as error:
            raise ParseError(f"JSON parse error: byte {error.start + 1} is not {encoding}") from None
        too_deep = first_too_deep(text)
        if too_deep is not None:
            line, column = line_column(text, too_deep)
            raise ParseError(
                f"JSON nested deeper than {MAX_JSON_DEPTH} levels (line {line}, column {column})"
            )
        try:
            body = (
                json.loads(text, parse_constant=_refuse_constant, parse_float=_checked_float) if text else {}
            )
        except ValueError as error:
            raise ParseError(f"JSON parse error: {str(error)[:200]}") from None
        problem = first_document_problem(body)
        if problem is not None:
            field, message = problem
            raise FieldValueError(field, message)
        return body


def _refuse_constant(name: str):
    raise ValueError(f"{name} is not a JSON number")


def _checked_float(literal: str) -> float | Decimal:
    """A float; a literal out of range stays an exact Decimal (1e-400 would read as 0.0, 1e400 as inf),
    which the check after decoding refuses naming its field."""
    return Decimal(literal) if literal_problem(literal) else float(literal)
