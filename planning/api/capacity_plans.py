"""Capacity plans API: POST a plan request (``save: true`` stores it), GET the stored plans. Spend data:
finance and admin for any scope, an engineer for the teams an admin granted them. Thin shells over
planning.services.capacity_plans."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from billing.access import HasSpendAccess
from gpuledger.api_errors import ApiErrorSerializer, error_body, input_error_response, require_body
from planning.engine.errors import PlanInputError
from planning.services.capacity_plans import (
    capacity_plan_create,
    capacity_plan_preview,
    plan_visible_or_404,
    plans_visible_to,
    stored_plan_body,
)
from procurement.costing.values import CostInputError

PLAN_REQUEST = inline_serializer(
    "CapacityPlanRequest",
    {
        "from": serializers.DateField(help_text="first day of the history, YYYY-MM-DD"),
        "to": serializers.DateField(
            help_text="the day after the last, exclusive; at least 7 days after from"
        ),
        "teams": serializers.ListField(
            child=serializers.CharField(max_length=100),
            required=False,
            max_length=50,
            help_text="the bills' team names; default every team you may see (an engineer: their granted teams)",
        ),
        "gpu": serializers.CharField(
            required=False, max_length=100, help_text="GPU slug or family (h100); default the most used GPU"
        ),
        "horizon_months": serializers.IntegerField(required=False, min_value=1, max_value=120, default=36),
        "growth": serializers.JSONField(
            required=False,
            help_text="monthly demand growth within -0.5..0.5 (0.02), or a list of yearly multipliers",
        ),
        "scenario": serializers.ChoiceField(choices=["low", "base", "high"], required=False, default="base"),
        "trials": serializers.IntegerField(
            required=False,
            min_value=1,
            max_value=10000,
            default=1000,
            help_text="seeded growth trials behind P50/P90",
        ),
        "seed": serializers.IntegerField(required=False, min_value=0, default=20),
        "series": serializers.ChoiceField(
            choices=["auto", "billed", "busy"],
            required=False,
            default="auto",
            help_text="billed GPUs, or busy GPUs (x utilization) where measured",
        ),
        "currency": serializers.CharField(
            required=False, help_text="ISO 4217; default the study's, else USD"
        ),
        "providers": serializers.ListField(
            child=serializers.CharField(max_length=100),
            required=False,
            max_length=50,
            help_text="catalog providers the prices may come from (e.g. the bills' own: aws); default every one",
        ),
        "study": serializers.DictField(
            required=False,
            help_text="the server purchase and finance terms in the TCO study's schema (docs/tco-spec.md); "
            "utilization and rent are the plan's own. Without one: documented defaults, with a warning",
        ),
        "name": serializers.CharField(required=False, max_length=200),
        "save": serializers.BooleanField(required=False, default=False, help_text="store the plan"),
    },
)
PLAN_ERROR = inline_serializer(
    "CapacityPlanError",
    {"errors": ApiErrorSerializer(many=True, help_text="the bad field by its path; nothing was stored")},
)
PLAN_LIST = inline_serializer(
    "CapacityPlanList",
    {"results": serializers.ListField(child=serializers.DictField(), help_text="id, name, totals, created")},
)
FORBIDDEN = OpenApiResponse(
    description="needs finance or admin, or a spend grant to your team (then only it)"
)


class CapacityPlanListCreate(APIView):
    """POST: the capacity plan for a scope of the stored bills (docs/capacity-plan.md); with
    ``save: true`` it is stored (201, with its id), else returned only (200). GET: the stored plans
    you may see, newest first."""

    permission_classes = [HasSpendAccess]

    @extend_schema(
        operation_id="capacity_plans_create",
        request=PLAN_REQUEST,
        responses={
            200: OpenApiResponse(
                description="The plan (not stored): layers, totals, NPV, P90, sensitivity; or, with save, the "
                "plan stored before with the same inputs, prices and result (saving twice is one save)"
            ),
            201: OpenApiResponse(description="The plan, stored: the same body with its id"),
            400: OpenApiResponse(PLAN_ERROR, description="Bad input naming the field; nothing stored"),
            401: OpenApiResponse(description="not signed in"),
            403: FORBIDDEN,
        },
    )
    def post(self, request):
        require_body(request)
        data = dict(request.data) if isinstance(request.data, dict) else request.data
        try:
            save = _save_flag(data.pop("save", False) if isinstance(data, dict) else False)
            if save:
                plan = capacity_plan_create(body=data, user=request.user)
                created = getattr(plan, "created", True)
                return Response(stored_plan_body(plan), status=status.HTTP_201_CREATED if created else 200)
            return Response(capacity_plan_preview(body=data, user=request.user))
        except (PlanInputError, CostInputError) as error:
            return input_error_response(error)
        except PermissionDenied as denied:  # a team outside the caller's spend grant
            return Response(error_body("teams", str(denied)), status=status.HTTP_403_FORBIDDEN)

    @extend_schema(
        operation_id="capacity_plans_list",
        responses={200: PLAN_LIST, 401: OpenApiResponse(description="not signed in"), 403: FORBIDDEN},
    )
    def get(self, request):
        plans = plans_visible_to(request.user)[:100]
        return Response({"results": [stored_plan_body(plan, summary=True) for plan in plans]})


class CapacityPlanDetail(APIView):
    """A stored plan (another scope's plan is 404)."""

    permission_classes = [HasSpendAccess]

    @extend_schema(
        operation_id="capacity_plans_retrieve",
        responses={
            200: OpenApiResponse(description="The stored plan"),
            404: OpenApiResponse(description="No such plan"),
            401: OpenApiResponse(description="not signed in"),
            403: FORBIDDEN,
        },
    )
    def get(self, request, pk: int):
        return Response(stored_plan_body(plan_visible_or_404(request.user, pk)))


def _save_flag(value: object) -> bool:
    if not isinstance(value, bool):
        raise PlanInputError("save", f"must be true or false, got {str(value)[:40]!r}")
    return value
