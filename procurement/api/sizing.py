"""Sizing API: POST a workload spec, get memory, speed, verdicts and host sizing back.

Thin shell over `procurement.sizing`; GPUs come from the catalog (`pricing.models.GpuModel`). The
CLI (`manage.py size`) and the sizing page use the same `size_spec_document` so all three give the
same numbers. Nothing of the sizing flow is stored.
"""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.response import Response
from rest_framework.views import APIView

from gpuledger.api_errors import ApiErrorsSerializer, input_error_response, require_body
from gpuledger.roles import ENGINEER, role_permission
from procurement.api.spec_schemas import WorkloadSpecSerializer
from procurement.services.sizing import catalog_gpus, size_spec_document  # noqa: F401 (importers of the API module)
from procurement.sizing import WorkloadSpecError

ERRORS_SCHEMA = ApiErrorsSerializer  # the API's one error shape (gpuledger/api_errors.py)


CALIBRATE_VALUES = {"true": True, "1": True, "false": False, "0": False}


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
            200: OpenApiResponse(
                description="Sizing report (issue 3 output contract; `accuracy`: the measured accuracy of the "
                "workload's class on published runs, docs/workload-spec.md)"
            ),
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
            return input_error_response(error)
        return Response(report)
