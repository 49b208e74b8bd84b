"""Reads for an offer's spot history: observations as an engine frame, statistics per zone, and the
hourly price series the spot Monte Carlo resamples (``spot_price_histories_usd``).

The offer page and ``GET /api/offers/{id}/spot-history/`` both call ``offer_spot_history``: the
spot prices of the offer's instance type in its region, per zone, over a window, with the regional
on-demand price as the reference for the discount.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

import numpy as np
import pandas as pd
from django.db.models import Q
from django.utils import timezone

from pricing.choices import PriceStatus, PricingModel
from pricing.fx import fx_rates
from pricing.models import Offer, PriceObservation
from pricing.price_quality import price_quality
from pricing.selectors import current_price_observations, price_staleness
from pricing.spot_history import spot_statistics, statistics_as_decimals


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
    ).values_list("offer_id", "observed_at", "amount_per_hour", "currency", "refresh__source", "source")
    return pd.DataFrame.from_records(
        list(rows),
        columns=["series", "observed_at", "price_per_hour", "currency", "refresh_source", "source"],
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
    # the one freshness rule of every page (pricing.selectors.price_staleness): a scheduled source's
    # price is stale past twice its schedule, a snapshot's only past the snapshot limit
    refresh_source = points["refresh_source"].iloc[-1] if len(points) else None
    source = str(points["source"].iloc[-1]) if len(points) else ""
    stale = newest is None or price_staleness(PricingModel.SPOT, refresh_source, newest, now)[0]
    return {
        "offer_id": int(offer_id),
        "zone": zone,
        "statistics": statistics_as_decimals(row.to_dict()),
        "newest_observed_at": newest,
        "stale": bool(stale),
        "price_quality": price_quality(source) if len(points) else None,
        "points": [
            (at, price) for at, price in zip(points["observed_at"], points["price_per_hour"], strict=True)
        ],
    }


def spot_price_histories_usd(
    offer_ids: Sequence[int], *, window_days: int = 30, now: dt.datetime | None = None
) -> dict[int, np.ndarray]:
    """{offer_id: hourly spot prices in USD per instance-hour, oldest first} over the last ``window_days``,
    for the spot Monte Carlo (procurement.costing.spot_simulation). One query for all offers.

    Each published spot price holds until the next observation (a step function, as in
    ``pricing.spot_history``); the series starts at the window's start when a price was in effect then
    (the last one before it), else at the offer's first observation in the window, and has one point per
    whole hour up to ``now``. An offer needs at least two observations: one price is the current price,
    not a history. Offers priced in a currency without an FX rate to USD are left out, not guessed.
    """
    end = now or timezone.now()
    start = end - dt.timedelta(days=window_days)
    spot = {"pricing_model": PricingModel.SPOT, "offer_id__in": list(offer_ids)}
    carried_in = current_price_observations(**spot, observed_at__lte=start).values("id")
    rows = (
        PriceObservation.objects.filter(**spot, status=PriceStatus.PUBLISHED)
        .filter(Q(observed_at__gt=start, observed_at__lte=end) | Q(id__in=carried_in))
        .order_by("offer_id", "observed_at")
        .values_list("offer_id", "observed_at", "amount_per_hour", "currency")
    )
    points: dict[int, list[tuple[dt.datetime, Decimal, str]]] = {}
    for offer_id, observed_at, amount, currency in rows:
        points.setdefault(offer_id, []).append((observed_at, amount, currency))
    rates = fx_rates(base="USD") if points else {}
    histories = {}
    for offer_id, series in points.items():
        hourly = _hourly_usd(series, start, end, rates)
        if hourly is not None:
            histories[offer_id] = hourly
    return histories


def _hourly_usd(
    series: list[tuple[dt.datetime, Decimal, str]], start: dt.datetime, end: dt.datetime, rates: dict
) -> np.ndarray | None:
    """A step function sampled once an hour: the price in effect at each whole hour from the series start."""
    if len(series) < 2 or any(currency not in rates for _, _, currency in series):
        return None
    times = np.array([max(at, start).timestamp() for at, _, _ in series])
    prices = np.array([float(amount * rates[currency]) for _, amount, currency in series])
    hours = int((end.timestamp() - times[0]) // 3600)
    grid = times[0] + 3600.0 * np.arange(hours)
    return prices[np.searchsorted(times, grid, side="right") - 1]
