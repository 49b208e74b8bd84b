"""`GET /api/`: the API's resources, read from the URL conf so a new endpoint is listed without an edit.

Each entry names the path (with `{pk}`-style parameters, as in the OpenAPI schema), the HTTP methods
the view answers and the first line of its docstring; the schema and the docs page follow.
"""

from __future__ import annotations

import re

from django.urls import URLPattern, URLResolver, get_resolver, reverse
from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from gpuledger.roles import VIEWER, role_permission

API_PREFIX = "api/"
# The docs and the schema are listed under "docs", not as resources.
DOC_NAMES = {"api-root", "api-schema", "api-docs"}
_METHODS = ("get", "post", "put", "patch", "delete")


def _route_text(pattern) -> str:
    text = str(pattern.pattern)
    return re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", text)


def _walk(patterns, prefix: str = ""):
    for entry in patterns:
        if isinstance(entry, URLResolver):
            yield from _walk(entry.url_patterns, prefix + _route_text(entry))
        elif isinstance(entry, URLPattern):
            yield prefix + _route_text(entry), entry


def _summary(view_class) -> str:
    doc = (view_class.__doc__ or "").strip()
    return doc.splitlines()[0].strip() if doc else ""


def api_resources() -> list[dict]:
    """Every API route but the docs: path, methods and what it does, in URL conf order."""
    resources = []
    for route, pattern in _walk(get_resolver().url_patterns):
        view_class = getattr(pattern.callback, "view_class", None)
        if not route.startswith(API_PREFIX) or view_class is None or pattern.name in DOC_NAMES:
            continue
        methods = [m.upper() for m in _METHODS if hasattr(view_class, m)]
        resources.append(
            {
                "path": "/" + route,
                "name": pattern.name,
                "methods": methods,
                "description": _summary(view_class),
            }
        )
    return resources


class ApiRoot(APIView):
    """The API's resources and where its schema and docs are."""

    permission_classes = [role_permission(VIEWER)]

    @extend_schema(
        responses={
            200: OpenApiResponse(
                inline_serializer(
                    "ApiRoot",
                    {
                        "resources": inline_serializer(
                            "ApiResource",
                            {
                                "path": serializers.CharField(),
                                "name": serializers.CharField(),
                                "methods": serializers.ListField(child=serializers.CharField()),
                                "description": serializers.CharField(),
                            },
                            many=True,
                        ),
                        "schema": serializers.CharField(),
                        "docs": serializers.CharField(),
                    },
                ),
                description="The resources, and the schema and docs URLs",
            )
        }
    )
    def get(self, request):
        return Response(
            {
                "resources": api_resources(),
                "schema": reverse("api-schema"),
                "docs": reverse("api-docs"),
            }
        )
