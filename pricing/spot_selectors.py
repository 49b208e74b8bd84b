"""Reads for an offer's spot history: observations as an engine frame, statistics per zone.

The offer page and ``GET /api/offers/{id}/spot-history/`` both call ``offer_spot_history``: the
spot prices of the offer's instance type in its region, per zone, over a window, with the regional
on-demand price as the reference for the discount.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import pandas as pd
from django.db.models import Q
from django.utils import timezone

from pricing.choices import PriceStatus, PricingModel
from pricing.models import Offer, PriceObservation
from pricing.selectors import current_price_observations
from pricing.spot_history import spot_statistics, statistics_as_decimals
from scheduler.freshness import is_stale


def offer_spot_history(
    offer: Offer, *, window_days: int = 30, below_price: Decimal | None = None, now: dt.datetime | None = None
) -> dict[str, Any]:
    """Spot statistics and price series per zone for `offer`'s instance type and region."""
    end = now or timezone.now()
    start = end - dt.timedelta(days=window_days)
    siblings = Offer.objects.filter(instance_type_id=offer.instance_type_id, region_id=offer.region_id)
    zones = dict(siblings.values_list("id", "zone"))
    observations = _spot_observations(list(zones), start, end)
    on_demand = _on_demand(offer)
    same_currency = on_demand is not None and (
        observations.empty or set(observations["currency"]) == {on_demand[1]}
    )
    reference = {offer_id: on_demand[0] for offer_id in zones} if same_currency else None
    stats = spot_statistics(
        observations,
        window_start=start,
        window_end=end,
        on_demand_per_hour=reference,
        below_price=below_price,
    )
    return {
        "offer_id": offer.pk,
        "instance_type": offer.instance_type.name,
        "provider": offer.instance_type.provider.slug,
        "region": offer.region.code,
        "window_start": start,
        "window_end": end,
        "on_demand_per_hour": on_demand[0] if on_demand else None,
        "currency": on_demand[1] if on_demand else _first_currency(observations),
        "below_price": below_price,
        "zones": [
            _zone_row(offer_id, zones[offer_id], row, observations, end) for offer_id, row in stats.iterrows()
        ],
    }


def _spot_observations(offer_ids: list[int], start: dt.datetime, end: dt.datetime) -> pd.DataFrame:
    """Published spot prices in the window, plus the last one before it (the price when it opens)."""
    base = PriceObservation.objects.filter(
        offer_id__in=offer_ids, pricing_model=PricingModel.SPOT, status=PriceStatus.PUBLISHED
    )
    carried_in = current_price_observations(
        offer_id__in=offer_ids, pricing_model=PricingModel.SPOT, observed_at__lte=start
    ).values_list("id", flat=True)
    rows = base.filter(
        Q(observed_at__gt=start, observed_at__lt=end) | Q(id__in=list(carried_in))
    ).values_list("offer_id", "observed_at", "amount_per_hour", "currency")
    return pd.DataFrame.from_records(
        list(rows), columns=["series", "observed_at", "price_per_hour", "currency"]
    )


def _on_demand(offer: Offer) -> tuple[Decimal, str] | None:
    current = (
        current_price_observations(
            offer__instance_type_id=offer.instance_type_id,
            offer__region_id=offer.region_id,
            offer__zone="",
            pricing_model=PricingModel.ON_DEMAND,
        )
        .values_list("amount_per_hour", "currency")
        .first()
    )
    return (current[0], current[1]) if current else None


def _first_currency(observations: pd.DataFrame) -> str | None:
    return None if observations.empty else str(observations["currency"].iloc[0])


def _zone_row(offer_id: int, zone: str, row: pd.Series, observations: pd.DataFrame, now: dt.datetime) -> dict:
    points = observations[observations["series"] == offer_id].sort_values("observed_at")
    newest = points["observed_at"].iloc[-1] if len(points) else None
    return {
        "offer_id": int(offer_id),
        "zone": zone,
        "statistics": statistics_as_decimals(row.to_dict()),
        "newest_observed_at": newest,
        "stale": bool(newest is None or is_stale(PricingModel.SPOT, newest, now)),
        "points": [
            (at, price) for at, price in zip(points["observed_at"], points["price_per_hour"], strict=True)
        ],
    }
