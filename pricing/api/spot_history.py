"""GET /api/offers/{id}/spot-history/: spot statistics and price points per zone over a window."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from gpuledger.roles import VIEWER, role_permission
from pricing.models import Offer
from pricing.spot_selectors import offer_spot_history

MAX_WINDOW_DAYS = 365


class SpotStatisticsSerializer(serializers.Serializer):
    current = serializers.DecimalField(max_digits=18, decimal_places=6, allow_null=True)
    mean = serializers.DecimalField(max_digits=18, decimal_places=6, allow_null=True)
    median = serializers.DecimalField(max_digits=18, decimal_places=6, allow_null=True)
    p95 = serializers.DecimalField(max_digits=18, decimal_places=6, allow_null=True)
    min = serializers.DecimalField(max_digits=18, decimal_places=6, allow_null=True)
    max = serializers.DecimalField(max_digits=18, decimal_places=6, allow_null=True)
    cv = serializers.DecimalField(max_digits=10, decimal_places=4, allow_null=True)
    mean_discount = serializers.DecimalField(max_digits=10, decimal_places=4, allow_null=True)
    share_below = serializers.DecimalField(max_digits=10, decimal_places=4, allow_null=True)
    observations = serializers.IntegerField()
    hours = serializers.DecimalField(max_digits=12, decimal_places=2)


class SpotPointSerializer(serializers.Serializer):
    observed_at = serializers.DateTimeField()
    price_per_hour = serializers.DecimalField(max_digits=18, decimal_places=6)


class SpotZoneSerializer(serializers.Serializer):
    offer_id = serializers.IntegerField()
    zone = serializers.CharField(allow_blank=True)
    statistics = SpotStatisticsSerializer()
    newest_observed_at = serializers.DateTimeField(allow_null=True)
    stale = serializers.BooleanField()
    points = serializers.SerializerMethodField()

    def get_points(self, zone) -> list[dict]:
        return SpotPointSerializer(
            [{"observed_at": at, "price_per_hour": price} for at, price in zone["points"]], many=True
        ).data


class SpotHistorySerializer(serializers.Serializer):
    offer_id = serializers.IntegerField()
    provider = serializers.CharField()
    instance_type = serializers.CharField()
    region = serializers.CharField()
    window_start = serializers.DateTimeField()
    window_end = serializers.DateTimeField()
    on_demand_per_hour = serializers.DecimalField(max_digits=18, decimal_places=6, allow_null=True)
    currency = serializers.CharField(allow_null=True)
    below_price = serializers.DecimalField(max_digits=18, decimal_places=6, allow_null=True)
    zones = SpotZoneSerializer(many=True)
    last_seen_at = serializers.DateTimeField(
        allow_null=True, help_text="Marketplace offers: when a market refresh last listed it (else null)."
    )
    gone_at = serializers.DateTimeField(
        allow_null=True,
        help_text="Marketplace offers: when a refresh no longer listed it; its prices are then not current.",
    )


class OfferSpotHistory(APIView):
    """Spot price statistics of an offer's instance type in its region, per zone.

    Statistics are weighted by how long each price held. `mean_discount` is 1 − mean ÷ on-demand;
    `share_below` is the share of the window the price was below `below`.
    """

    permission_classes = [role_permission(VIEWER)]

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "days", int, description=f"Window length in days (1..{MAX_WINDOW_DAYS}, default 30)."
            ),
            OpenApiParameter("below", str, description="A price per hour; share_below is the time under it."),
        ],
        responses={
            200: SpotHistorySerializer,
            400: OpenApiResponse(description="A query parameter is invalid; the message names it."),
            404: OpenApiResponse(description="No offer with this id."),
        },
    )
    def get(self, request, pk: int):
        offer = get_object_or_404(Offer.objects.select_related("instance_type__provider", "region"), pk=pk)
        history = offer_spot_history(offer, window_days=_days(request), below_price=_below(request))
        presence = {"last_seen_at": offer.last_seen_at, "gone_at": offer.gone_at}
        return Response(SpotHistorySerializer(history | presence).data)


def _days(request) -> int:
    raw = request.query_params.get("days", "30")
    if not raw.isdigit() or not 1 <= int(raw) <= MAX_WINDOW_DAYS:
        raise ValidationError({"days": f"{raw!r} is not a whole number of days from 1 to {MAX_WINDOW_DAYS}."})
    return int(raw)


def _below(request) -> Decimal | None:
    raw = request.query_params.get("below")
    if raw is None:
        return None
    try:
        value = Decimal(raw)
    except InvalidOperation:
        value = Decimal(-1)
    if not value.is_finite() or value <= 0:
        raise ValidationError({"below": f"{raw!r} is not a price above zero."})
    return value
