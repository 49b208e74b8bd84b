"""Budget, anomaly and spend-row API (thin shells over finance/sections.py and budget_service.py).

GET budgets and anomalies: finance and admin (every team), or an engineer of a granted team (that team
only). POST budgets and GET spend rows: finance and admin only."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.permissions import BasePermission
from rest_framework.response import Response
from rest_framework.views import APIView

from billing.access import HasSpendAccess
from billing.finance.budget_service import budget_save, parse_month
from billing.finance.sections import anomalies_between, budget_states
from billing.finance.selectors import MAX_SPEND_ROWS, spend_rows
from billing.review.api import REVIEW_ERROR, _date, review_request_from_query
from billing.review.engine import ReviewInputError
from gpuledger.api_errors import input_error_response
from gpuledger.roles import ADMIN, FINANCE, role_permission, user_has_role

SIGNED_OUT = OpenApiResponse(description="not signed in")
SPEND_ONLY = OpenApiResponse(
    description="needs finance or admin, or a spend grant to your team (then only your team)"
)
FINANCE_ONLY = OpenApiResponse(description="needs the finance or admin role")


def _bad_input(error: ReviewInputError) -> Response:
    return input_error_response(error)


class BudgetBody(serializers.Serializer):
    team = serializers.CharField(max_length=100)
    month = serializers.CharField(max_length=10, help_text="YYYY-MM")
    amount = serializers.CharField(max_length=30, help_text="decimal, not negative")
    currency = serializers.CharField(max_length=3, help_text="ISO 4217, with a stored FX rate")
    notify_email = serializers.EmailField(required=False, allow_blank=True)


class SpendAccessReadFinanceWrite(BasePermission):
    """GET: HasSpendAccess; POST: finance and admin only."""

    message = "Budgets are read with spend access and edited by finance and admin."
    required_roles = (FINANCE, ADMIN)

    def has_permission(self, request, view):
        if not HasSpendAccess().has_permission(request, view):
            return False
        return request.method == "GET" or user_has_role(request.user, FINANCE, ADMIN)


class Budgets(APIView):
    """GPU budgets of a month with their burn, forecast and overrun date; POST sets one (team, month)."""

    permission_classes = [SpendAccessReadFinanceWrite]

    @extend_schema(
        parameters=[OpenApiParameter("month", str, description="YYYY-MM (default: this month)")],
        responses={
            200: OpenApiResponse(description="{month, budgets: [...]}"),
            400: REVIEW_ERROR,
            401: SIGNED_OUT,
            403: SPEND_ONLY,
        },
    )
    def get(self, request):
        try:
            month = (
                parse_month(request.query_params.get("month")) if request.query_params.get("month") else None
            )
            month = month or _this_month()
            states = budget_states([month], request.spend_scope.teams)
        except ReviewInputError as error:
            return _bad_input(error)
        return Response({"month": f"{month:%Y-%m}", "budgets": states})

    @extend_schema(
        request=BudgetBody,
        responses={
            201: OpenApiResponse(description="the budget's state"),
            400: REVIEW_ERROR,
            401: SIGNED_OUT,
            403: FINANCE_ONLY,
        },
    )
    def post(self, request):
        body = BudgetBody(data=request.data)
        if not body.is_valid():
            field, problems = next(iter(body.errors.items()))
            return _bad_input(ReviewInputError(field, str(problems[0])))
        try:
            budget = budget_save(**body.validated_data, user=request.user)
            state = next(s for s in budget_states([budget.month]) if s["id"] == budget.pk)
        except ReviewInputError as error:
            return _bad_input(error)
        return Response(state, status=status.HTTP_201_CREATED)


def _this_month():
    import datetime as dt

    return dt.date.today().replace(day=1)


class Anomalies(APIView):
    """Spend anomalies of [from, to): daily GPU spend per team and service against its 28-day baseline."""

    permission_classes = [HasSpendAccess]

    @extend_schema(
        parameters=[
            OpenApiParameter("from", str, required=True),
            OpenApiParameter("to", str, required=True),
            OpenApiParameter("team", str),
            OpenApiParameter("currency", str),
        ],
        responses={
            200: OpenApiResponse(description="{method, found, items}"),
            400: REVIEW_ERROR,
            401: SIGNED_OUT,
            403: SPEND_ONLY,
        },
    )
    def get(self, request):
        try:
            review_request = review_request_from_query(request)
            return Response(anomalies_between(review_request))
        except ReviewInputError as error:
            return _bad_input(error)


class SpendRows(APIView):
    """The spend rows of one day (an anomaly's link), largest effective cost first. Finance and admin."""

    permission_classes = [role_permission(FINANCE, ADMIN)]

    @extend_schema(
        parameters=[
            OpenApiParameter("day", str, required=True, description="YYYY-MM-DD"),
            OpenApiParameter("team", str),
            OpenApiParameter("provider", str),
            OpenApiParameter("service", str),
            OpenApiParameter("limit", int, description=f"at most {MAX_SPEND_ROWS} (default 100)"),
        ],
        responses={
            200: OpenApiResponse(description="{rows: [...]}"),
            400: REVIEW_ERROR,
            401: SIGNED_OUT,
            403: FINANCE_ONLY,
        },
    )
    def get(self, request):
        query = request.query_params
        try:
            day = _date(query.get("day"), "day")
            limit = _limit(query.get("limit"))
        except ReviewInputError as error:
            return _bad_input(error)
        rows = spend_rows(
            day=day,
            team=query.get("team", "")[:100],
            provider=query.get("provider", "")[:100],
            service=query.get("service", "")[:100],
            limit=limit,
        )
        return Response(
            {"rows": [{k: str(v) if v is not None else None for k, v in r.items()} for r in rows]}
        )


def _limit(text) -> int:
    if text in (None, ""):
        return 100
    if not str(text).isdigit() or not 1 <= int(text) <= MAX_SPEND_ROWS:
        raise ReviewInputError("limit", f"must be a whole number from 1 to {MAX_SPEND_ROWS}")
    return int(text)
