"""Benchmark API: POST a runner document (engineer role), list stored runs. Thin over procurement.services."""

from __future__ import annotations

import json

from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from gpuledger.accounts.teams import can_see, team_for_new_object, visible_to
from gpuledger.api_errors import input_error_response
from gpuledger.roles import ADMIN, ENGINEER, role_permission
from procurement import models
from procurement.benchmarks.document import BenchmarkDocumentError
from procurement.services.benchmarks import benchmark_import

BENCHMARK_ERRORS = inline_serializer(
    "BenchmarkErrors",
    {
        "errors": serializers.ListField(
            child=inline_serializer(
                "BenchmarkError", {"path": serializers.CharField(), "message": serializers.CharField()}
            )
        )
    },
)


def benchmark_body(row: models.BenchmarkResult) -> dict:
    return {
        "id": row.pk,
        "model_name": row.model_name,
        "task": row.task,
        "gpu": row.gpu.slug if row.gpu else None,
        "gpu_count": row.gpu_count,
        "cpu_only": row.cpu_only,
        "measured_at": row.measured_at.isoformat(),
        "tokens_per_second": str(row.tokens_per_second) if row.tokens_per_second is not None else None,
        "step_time_seconds": str(row.step_time_seconds) if row.step_time_seconds is not None else None,
        "peak_memory_gib": str(row.peak_memory_gib) if row.peak_memory_gib is not None else None,
        "price_per_hour": str(row.price_per_hour) if row.price_per_hour is not None else None,
        "currency": row.currency or None,
        "price_basis": row.price_basis,
        "unit_costs": row.unit_costs,
        "estimate": row.estimate,
        "diagnostics": row.diagnostics,
        "team": row.team.slug if row.team_id else None,
        "uploaded_by": row.owner.get_username() if row.owner_id else None,
    }


class BenchmarkListCreate(APIView):
    permission_classes = [role_permission(ENGINEER, ADMIN)]

    @extend_schema(
        responses={200: OpenApiResponse(description="Stored benchmark runs, newest first (at most 200)")}
    )
    def get(self, request):
        rows = visible_to(models.BenchmarkResult.objects, request.user).select_related(
            "gpu", "team", "owner"
        )[:200]
        return Response({"results": [benchmark_body(row) for row in rows]})

    @extend_schema(
        request=inline_serializer("BenchmarkDocument", {"schema_version": serializers.IntegerField()}),
        responses={
            201: OpenApiResponse(description="Stored (docs/benchmark-format.md)"),
            200: OpenApiResponse(description="Already stored: the same document was imported before"),
            400: BENCHMARK_ERRORS,
            409: BENCHMARK_ERRORS,
        },
    )
    def post(self, request):
        try:
            team = team_for_new_object(request.user)
            outcome = benchmark_import(
                json.dumps(request.data).encode(),
                source=f"api upload by {request.user.get_username()}",
                owner=request.user,
                team=team,
            )
        except BenchmarkDocumentError as error:
            return input_error_response(error)
        if not outcome.created and not can_see(
            request.user, team_id=outcome.result.team_id, owner_id=outcome.result.owner_id
        ):
            # another team uploaded this very document: say so, show nothing of theirs
            return Response(
                {"errors": [{"path": "", "message": "this document was uploaded by another team"}]},
                status=status.HTTP_409_CONFLICT,
            )
        code = status.HTTP_201_CREATED if outcome.created else status.HTTP_200_OK
        return Response(benchmark_body(outcome.result), status=code)
