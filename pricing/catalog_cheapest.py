"""The cheapest usable GPU-hour per GPU and pricing model, read without loading the whole catalog.

The landing page shows, per GPU, the cheapest on-demand and spot price per GPU-hour in USD, leaving out
illustrative prices and spot outliers (pricing/spot_sanity.py). Reading every current price into pandas
for that took 17 s after an import of 684,112 offers (issue 9). Here SQL ranks the current prices per
(GPU, pricing model, GPU-only or whole instance) by USD per GPU-hour and returns the few cheapest of
each; only those and their spot-sanity siblings are read into an offer table, and the page's rule
(`pricing.selectors.cheapest_in_frame`) runs on it. When every candidate of a full group turns out to be
a spot outlier, the read is repeated with four times as many candidates, so the answer is always the
one the whole catalog gives (tests/pricing/test_offer_pages.py compares them).
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict

from django.db.models import Case, DecimalField, F, Value, When, Window
from django.db.models.functions import RowNumber

from pricing.choices import PricingModel
from pricing.fx import fx_rates
from pricing.models import PriceObservation
from pricing.offer_pages import offers_in_groups
from pricing.price_quality import ILLUSTRATIVE_SOURCES
from pricing.selectors import cheapest_in_frame, current_price_observations, offer_frame

CANDIDATES_PER_GROUP = 8  # a handful per group: spot outliers are a few percent of quotes
SHOWN_MODELS = (PricingModel.ON_DEMAND, PricingModel.SPOT)
GROUP = ("offer__instance_type__gpu_id", "pricing_model", "offer__instance_type__host_priced_separately")


def cheapest_gpu_prices(*, now: dt.datetime | None = None) -> dict:
    """{(gpu slug, pricing model): offer-table row}, as `cheapest_in_frame(offer_frame())` gives it."""
    rates = fx_rates(base="USD")
    per_group = CANDIDATES_PER_GROUP
    while True:
        candidates = _candidates(rates, per_group)
        if not candidates:
            return {}
        pairs = [(row[1], row[2]) for row in candidates]
        frame = offer_frame(offer_id__in=offers_in_groups(pairs), pricing_model__in=SHOWN_MODELS, now=now)
        if not _groups_short_of_a_usable_price(candidates, frame, per_group):
            return cheapest_in_frame(frame)
        per_group *= 4


def _candidates(rates: dict, per_group: int) -> list[tuple]:
    """(observation id, instance type id, region id, *GROUP) of the ``per_group`` cheapest current
    prices per GPU-hour in USD of each group, illustrative and unconvertible prices left out."""
    usd_rate = Case(
        *(When(currency=currency, then=Value(rate)) for currency, rate in rates.items()),
        output_field=DecimalField(max_digits=30, decimal_places=12),
    )
    per_gpu_hour_usd = F("amount_per_hour") * usd_rate / F("offer__instance_type__gpu_count")
    current = current_price_observations(
        offer__instance_type__gpu__isnull=False, pricing_model__in=SHOWN_MODELS
    ).values("id")
    ranked = (
        PriceObservation.objects.filter(
            id__in=current,
            currency__in=list(rates),
            amount_per_hour__isnull=False,
            offer__instance_type__gpu_count__gt=0,
        )
        .exclude(source__in=ILLUSTRATIVE_SOURCES)
        .annotate(
            rank=Window(
                RowNumber(),
                partition_by=[F(name) for name in GROUP],
                order_by=[per_gpu_hour_usd.asc(), F("id").asc()],
            )
        )
        .filter(rank__lte=per_group)
    )
    return list(ranked.values_list("id", "offer__instance_type_id", "offer__region_id", *GROUP))


def _groups_short_of_a_usable_price(candidates: list[tuple], frame, per_group: int) -> bool:
    """True when a group returned all ``per_group`` candidates and every one is a spot outlier: its
    cheapest usable price may lie beyond them."""
    outlier = dict(zip(frame["observation_id"], frame["spot_outlier"].astype(bool), strict=True))
    by_group = defaultdict(list)
    for row in candidates:
        by_group[row[3:]].append(outlier.get(row[0], False))
    return any(len(flags) >= per_group and all(flags) for flags in by_group.values())
