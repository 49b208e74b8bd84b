"""Billing API: POST a billing file, GET the spend review. Finance and admin only; thin shells."""

from __future__ import annotations

import datetime as dt

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from billing.access import HasSpendAccess
from billing.imports.importer import FORMAT_NAMES
from billing.imports.upload_jobs import import_upload
from billing.imports.uploads import UploadTooLarge
from billing.review.engine import ReviewInputError, ReviewRequest
from billing.review.service import build_review, make_request
from gpuledger.api_errors import ROOT, ApiErrorsSerializer, error_body, error_entries, input_error_response
from gpuledger.roles import ADMIN, FINANCE, role_permission

IMPORT_RESULT = inline_serializer(
    "BillingImportResult",
    {
        "inserted": serializers.IntegerField(),
        "unchanged": serializers.IntegerField(),
        "rejected": serializers.IntegerField(),
        "imports": serializers.ListField(child=serializers.IntegerField()),
        "unmapped_instance_types": serializers.DictField(child=serializers.IntegerField()),
        "warnings": serializers.ListField(child=serializers.CharField()),
    },
)
IMPORT_QUEUED = inline_serializer(
    "BillingImportQueued", {"status": serializers.CharField(), "detail": serializers.CharField()}
)
# Every 400 has the API's one error shape and nothing else; an import's message names file:row:column.
IMPORT_ERROR = ApiErrorsSerializer
REVIEW_ERROR = ApiErrorsSerializer


def import_error_response(message: str) -> Response:
    return Response(error_body(ROOT, message), status=status.HTTP_400_BAD_REQUEST)


class BillingUploadSerializer(serializers.Serializer):
    file = serializers.FileField()
    format = serializers.ChoiceField(choices=list(FORMAT_NAMES), required=False)  # the importer's formats
    provider = serializers.CharField(max_length=100, required=False, allow_blank=True)


class BillingImportCreate(APIView):
    """Import one billing file (FOCUS, AWS CUR 2.0 or GPU utilization), all or nothing, idempotent."""

    permission_classes = [role_permission(FINANCE, ADMIN)]
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(
        request={"multipart/form-data": BillingUploadSerializer},
        responses={
            201: IMPORT_RESULT,
            202: IMPORT_QUEUED,
            400: IMPORT_ERROR,
            401: OpenApiResponse(description="not signed in"),
            403: OpenApiResponse(description="needs the finance or admin role"),
        },
    )
    def post(self, request):
        body = BillingUploadSerializer(data=request.data)
        if not body.is_valid():
            return Response({"errors": error_entries(body.errors)}, status=status.HTTP_400_BAD_REQUEST)
        data = body.validated_data
        try:  # the import runs in the worker (upload_jobs.py); this process only hands the file over
            result = import_upload(
                data["file"], fmt=data.get("format"), provider=data.get("provider", ""), user=request.user
            )
        except UploadTooLarge as error:
            return import_error_response(str(error))
        if result is None:
            return Response(
                {
                    "status": "queued",
                    "detail": "the import runs in the worker; GET the list of imports (admin) to see it",
                },
                status=status.HTTP_202_ACCEPTED,
            )
        if result.errors:
            return import_error_response(result.errors[0])
        return Response(
            {
                "inserted": result.inserted,
                "unchanged": result.unchanged,
                "rejected": result.rejected,
                "imports": result.imports,
                "unmapped_instance_types": dict(result.unmapped),
                "warnings": result.warnings,
            },
            status=status.HTTP_201_CREATED,
        )


def _date(value: str | None, field: str) -> dt.date:
    if not value:
        raise ReviewInputError(field, "required, YYYY-MM-DD")
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        raise ReviewInputError(field, f"must be YYYY-MM-DD, got {value!r}") from None


def review_request_from_query(request, **filters) -> ReviewRequest:
    """The review request of the query's period [from, to), team and currency, within the caller's spend
    grant; ``filters``: the endpoint's other make_request filters."""
    query = request.query_params
    return make_request(
        start=_date(query.get("from"), "from"),
        end=_date(query.get("to"), "to"),
        team=query.get("team", "")[:100],
        currency=query.get("currency", "USD")[:3],
        scope=request.spend_scope,
        **filters,
    )


class SpendReview(APIView):
    """The GPU spend review for [from, to) (docs/billing.md): the same JSON as `manage.py spend_review`.
    An engineer with a spend grant gets their own team's spend only."""

    permission_classes = [HasSpendAccess]

    @extend_schema(
        parameters=[
            OpenApiParameter("from", str, required=True, description="YYYY-MM-DD, inclusive"),
            OpenApiParameter("to", str, required=True, description="YYYY-MM-DD, exclusive"),
            OpenApiParameter("team", str),
            OpenApiParameter("project", str),
            OpenApiParameter("provider", str),
            OpenApiParameter("currency", str, description="report currency (default USD)"),
            OpenApiParameter(
                "allocation",
                str,
                enum=["proportional", "even", "unallocated"],
                description="showback rule for shared and idle GPU cost (default proportional)",
            ),
        ],
        responses={
            200: OpenApiResponse(
                description="the spend review JSON (docs/billing.md), with "
                "unattributed_commitment_cost and the commitments section"
            ),
            400: REVIEW_ERROR,
            401: OpenApiResponse(description="not signed in"),
            403: OpenApiResponse(
                description="needs the finance or admin role, or a spend grant to your "
                "team (then only your team)"
            ),
        },
    )
    def get(self, request):
        query = request.query_params
        try:
            review_request = review_request_from_query(
                request,
                project=query.get("project", "")[:100],
                provider=query.get("provider", "")[:100],
                allocation=query.get("allocation", "")[:20],
            )
            review = build_review(review_request)
        except ReviewInputError as error:
            return input_error_response(error)
        return Response(review)
