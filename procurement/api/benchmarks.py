"""Benchmark API: POST a runner document (engineer role), list stored runs. Thin over procurement.services."""

from __future__ import annotations

import json

from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from gpuledger.roles import ADMIN, ENGINEER, role_permission
from procurement import models
from procurement.benchmarks.document import BenchmarkDocumentError
from procurement.services import benchmark_import

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
    }


class BenchmarkListCreate(APIView):
    permission_classes = [role_permission(ENGINEER, ADMIN)]

    @extend_schema(
        responses={200: OpenApiResponse(description="Stored benchmark runs, newest first (at most 200)")}
    )
    def get(self, request):
        rows = models.BenchmarkResult.objects.select_related("gpu")[:200]
        return Response({"results": [benchmark_body(row) for row in rows]})

    @extend_schema(
        request=inline_serializer("BenchmarkDocument", {"schema_version": serializers.IntegerField()}),
        responses={
            201: OpenApiResponse(description="Stored (docs/benchmark-format.md)"),
            200: OpenApiResponse(description="Already stored: the same document was imported before"),
            400: BENCHMARK_ERRORS,
        },
    )
    def post(self, request):
        try:
            outcome = benchmark_import(
                json.dumps(request.data).encode(), source=f"api upload by {request.user.get_username()}"
            )
        except BenchmarkDocumentError as error:
            return Response(
                {"errors": [{"path": path, "message": message} for path, message in error.errors]},
                status=status.HTTP_400_BAD_REQUEST,
            )
        code = status.HTTP_201_CREATED if outcome.created else status.HTTP_200_OK
        return Response(benchmark_body(outcome.result), status=code)
