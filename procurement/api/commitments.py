"""Commitments API: price a reserved or savings-plan commitment against a demand profile, from typed
prices or a stored commitment price (procurement/services/commitments.py). Computes, stores nothing."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from gpuledger.api_errors import require_body
from gpuledger.roles import ENGINEER, role_permission
from pricing.commitment_prices import COMMITMENT_KINDS, PAYMENT_OPTIONS
from procurement.api.costing import ERROR_SCHEMA, input_error_response
from procurement.costing.values import CostInputError
from procurement.services.commitments import MAX_GPUS, MAX_PERIODS, CommitmentInputs, commitment_analysis

# Engine field -> request key, so a 400 names what the caller sent.
REQUEST_KEYS = {
    "on_demand_per_gpu_hour": "on_demand",
    "committed_per_gpu_hour": "reserved_effective",
    "recurring_per_hour": "reserved_recurring",
    "upfront": "reserved_upfront",
    "spot_per_gpu_hour": "spot",
    "demand_gpus": "utilization_profile",
}


def _money(help_text: str) -> serializers.DecimalField:
    return serializers.DecimalField(
        max_digits=24,
        decimal_places=9,
        required=False,
        min_value=0,
        coerce_to_string=False,
        help_text=help_text,
    )


class CommitmentRequestSerializer(serializers.Serializer):
    utilization_profile = serializers.ListField(
        child=serializers.IntegerField(min_value=0, max_value=MAX_GPUS),
        min_length=1,
        max_length=MAX_PERIODS,
        help_text="GPUs in use in each period",
    )
    period_hours = _money("hours in one period (default 730: a month)")
    on_demand = _money("on-demand price per GPU-hour (default with a stored price: the offer's own)")
    reserved_effective = _money("typed: the commitment's effective price per GPU-hour")
    reserved_recurring = _money(
        "typed: its recurring price per GPU-hour, with reserved_upfront and term_years"
    )
    reserved_upfront = _money("typed: its upfront payment per GPU")
    term_years = serializers.ChoiceField(choices=[1, 3], required=False, help_text="1 or 3")
    spot = _money("effective spot price per GPU-hour, if bursts may run on spot")
    currency = serializers.CharField(required=False, max_length=3, help_text="ISO 4217 code")
    offer = serializers.IntegerField(
        required=False, min_value=1, help_text="an offer id: its cheapest stored commitment"
    )
    commitment_price = serializers.IntegerField(
        required=False, min_value=1, help_text="a stored commitment price id"
    )
    instance_type = serializers.CharField(
        required=False, max_length=150, help_text="with region: the cheapest stored commitment"
    )
    region = serializers.CharField(required=False, max_length=100)
    provider = serializers.CharField(required=False, max_length=50)
    payment_option = serializers.ChoiceField(choices=PAYMENT_OPTIONS, required=False)
    commitment_kind = serializers.ChoiceField(choices=COMMITMENT_KINDS, required=False)


class CommitmentAnalysis(APIView):
    """The cheapest commitment level for a demand profile; `prices_used` names each stored price read."""

    permission_classes = [role_permission(ENGINEER)]

    @extend_schema(
        request=CommitmentRequestSerializer,
        responses={
            200: inline_serializer(
                "CommitmentReport",
                {
                    "discount": serializers.CharField(),
                    "break_even_utilization": serializers.CharField(),
                    "cheapest": serializers.DictField(),
                    "prices_used": serializers.DictField(help_text="'typed', or each stored price used"),
                },
            ),
            400: ERROR_SCHEMA,
        },
    )
    def post(self, request):
        require_body(request)
        body = CommitmentRequestSerializer(data=request.data)
        if not body.is_valid():
            key, messages = next(iter(body.errors.items()))
            message = messages[0] if isinstance(messages, list) else next(iter(messages.values()))[0]
            return input_error_response(CostInputError(key, str(message)))
        data = {key: value for key, value in body.validated_data.items() if value is not None}
        try:
            report = commitment_analysis(CommitmentInputs(**data))
        except CostInputError as error:
            field = REQUEST_KEYS.get(error.field.partition("[")[0], error.field.partition("[")[0])
            suffix = error.field[len(error.field.partition("[")[0]) :]
            return input_error_response(CostInputError(field + suffix, error.message))
        return Response(report)
