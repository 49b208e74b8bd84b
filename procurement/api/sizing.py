"""Sizing API: POST a workload spec, get memory, speed, verdicts and host sizing back.

Thin shell over `procurement.sizing`; GPUs come from the catalog (`pricing.models.GpuModel`). The
CLI (`manage.py size`) and the sizing page use the same `size_spec_document` so all three give the
same numbers. Nothing of the sizing flow is stored.
"""

from __future__ import annotations

from collections.abc import Sequence

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from gpuledger.api_errors import ApiErrorsSerializer, require_body
from gpuledger.roles import ENGINEER, role_permission
from pricing.models import GpuModel
from procurement.api.spec_schemas import WorkloadSpecSerializer
from procurement.services.calibration import calibration_factors
from procurement.sizing import GpuSpec, WorkloadSpecError, parse_workload_spec, size_workload
from procurement.sizing.gpus import gpu_spec_from_record
from procurement.sizing.spec import FieldError

ERRORS_SCHEMA = ApiErrorsSerializer  # the API's one error shape (gpuledger/api_errors.py)


def catalog_gpus(slugs: Sequence[str] | None = None) -> list[GpuSpec]:
    """GPU models from the catalog as engine records; every unknown slug is reported under path `gpu`."""
    rows = GpuModel.objects.all()
    if slugs:
        rows = rows.filter(slug__in=list(slugs))
    gpus = {row.slug: gpu_spec_from_record(row) for row in rows}
    missing = [slug for slug in (slugs or []) if slug not in gpus]
    if missing:
        known = ", ".join(sorted(GpuModel.objects.values_list("slug", flat=True)))
        raise WorkloadSpecError(
            [FieldError("gpu", f"unknown GPU {slug!r}; known: {known}") for slug in missing]
        )
    if slugs:
        return [gpus[slug] for slug in dict.fromkeys(slugs)]
    return sorted(gpus.values(), key=lambda gpu: (gpu.memory_gb, gpu.slug))


def size_spec_document(
    data: dict, gpu_slugs: Sequence[str] | None = None, gpu_counts=None, *, calibrate: bool = True
) -> dict:
    """Validate a spec dict and size it on the catalog GPUs (all of them unless slugs are given), with the
    calibration factors fitted from stored benchmarks unless `calibrate` is False."""
    spec = parse_workload_spec(data)
    calibration = calibration_factors() if calibrate else None
    return size_workload(spec, catalog_gpus(gpu_slugs), gpu_counts, calibration)


CALIBRATE_VALUES = {"true": True, "1": True, "false": False, "0": False}


def errors_body(error: WorkloadSpecError) -> dict:
    return {"errors": [field.as_dict() for field in error.errors]}


class SizeWorkload(APIView):
    """Size a workload (docs/workload-spec.md) on catalog GPUs; `?gpu=SLUG` (repeatable) narrows them."""

    permission_classes = [role_permission(ENGINEER)]

    @extend_schema(
        request=WorkloadSpecSerializer,
        parameters=[
            OpenApiParameter("gpu", str, many=True, description="GPU slug (repeatable); default: every GPU"),
            OpenApiParameter("gpus", int, many=True, description="GPU counts to size (repeatable)"),
            OpenApiParameter(
                "calibrate",
                bool,
                description="apply the factors fitted from stored benchmarks (default true)",
            ),
        ],
        responses={
            200: OpenApiResponse(description="Sizing report (issue 3 output contract)"),
            400: ERRORS_SCHEMA,
        },
    )
    def post(self, request):
        require_body(request)
        if not isinstance(request.data, dict):
            return Response(
                {"errors": [{"path": "(root)", "message": "the body must be a JSON object"}]}, status=400
            )
        try:
            counts = [int(count) for count in request.query_params.getlist("gpus")] or None
        except ValueError:
            return Response(
                {"errors": [{"path": "gpus", "message": "GPU counts must be whole numbers"}]}, status=400
            )
        calibrate = CALIBRATE_VALUES.get(request.query_params.get("calibrate", "true").lower())
        if calibrate is None:
            return Response(
                {"errors": [{"path": "calibrate", "message": "must be true or false"}]}, status=400
            )
        try:
            report = size_spec_document(
                dict(request.data), request.query_params.getlist("gpu"), counts, calibrate=calibrate
            )
        except WorkloadSpecError as error:
            return Response(errors_body(error), status=status.HTTP_400_BAD_REQUEST)
        return Response(report)
