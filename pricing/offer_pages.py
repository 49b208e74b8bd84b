"""Current prices one page at a time, and counts of them, without reading the whole catalog.

`offer_frame()` reads every current price into pandas; after an import of 684,112 offers that made
`/api/offers/` time out (issue 9). A page here is chosen in SQL (ordered by the "current" key: offer,
pricing model, payment option, so the natural-key index serves it), and only its rows and their
spot-sanity siblings (same instance type and region, pricing/spot_sanity.py) are read into a frame.
Each row's figures are then those the whole-catalog frame gives it under the same filters: spot sanity
is computed per sibling group, staleness and quality per row.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from functools import reduce
from operator import or_

import pandas as pd
from django.db.models import Count, Max, Q

from pricing import selectors
from pricing.choices import PricingModel
from pricing.models import Offer, PriceObservation
from pricing.selectors import (
    CURRENT_KEY,
    OFFER_FRAME_COLUMNS,
    SCHEDULED_PRICE_SOURCES,
    current_price_observations,
    offer_frame,
    snapshot_stale_after,
)
from scheduler.freshness import stale_after


def _mapped(filters: dict) -> dict:
    # offer_frame() lists GPU-mapped offers only; pages and counts agree with it
    return {"offer__instance_type__gpu__isnull": False, **filters}


def current_price_count(**filters) -> int:
    """How many current prices match, as offer_frame(**filters) lists them (GPU-mapped offers)."""
    return selectors.current_price_count(**_mapped(filters))


def offer_frame_page(*, limit: int, offset: int, now: dt.datetime | None = None, **filters) -> pd.DataFrame:
    """Rows ``offset`` to ``offset + limit`` of the current prices in CURRENT_KEY order, with every
    column of offer_frame(**filters) (staleness as of ``now``, default: now)."""
    page_keys = list(
        current_price_observations(**_mapped(filters))
        .order_by(*CURRENT_KEY)
        .values_list(*CURRENT_KEY)[offset : offset + limit]
    )
    if not page_keys:
        return pd.DataFrame(columns=OFFER_FRAME_COLUMNS)
    groups = (
        Offer.objects.filter(id__in={key[0] for key in page_keys})
        .values_list("instance_type_id", "region_id")
        .distinct()
    )
    frame = offer_frame(offer_id__in=offers_in_groups(groups), now=now, **filters)
    # Matched by key, not by observation id: a price imported between the two reads replaces its
    # key's row rather than leaving a hole in the page.
    keys = pd.DataFrame(page_keys, columns=list(CURRENT_KEY))
    return keys.merge(frame, on=list(CURRENT_KEY), how="inner")[list(frame.columns)]


GROUP_QUERY_CHUNK = 200  # instance types per query: an OR much deeper is too deep for SQLite


def offers_in_groups(groups) -> list[int]:
    """The ids of every offer of these (instance type id, region id) pairs: the siblings spot sanity
    compares a quote with (the offer_unique index, led by instance type and region, serves it)."""
    regions_of = defaultdict(set)
    for instance_type_id, region_id in groups:
        regions_of[instance_type_id].add(region_id)
    types, ids = sorted(regions_of), []
    for start in range(0, len(types), GROUP_QUERY_CHUNK):
        chunk = types[start : start + GROUP_QUERY_CHUNK]
        same_group = reduce(or_, (Q(instance_type_id=it, region_id__in=regions_of[it]) for it in chunk))
        ids += Offer.objects.filter(same_group).values_list("id", flat=True)
    return ids


def current_price_freshness(now: dt.datetime) -> dict:
    """How many current prices there are, how many are past their freshness limit, and the newest's
    date: one aggregate query, by the rule of `pricing.selectors.with_staleness` (a price refreshed by a
    scheduled source is stale past twice its schedule, per pricing model; any other past the snapshot
    limit)."""
    current = current_price_observations(**_mapped({})).values("id")
    scheduled = Q(refresh__source__in=SCHEDULED_PRICE_SOURCES)
    stale = Q(~scheduled | Q(refresh__isnull=True), observed_at__lt=now - snapshot_stale_after())
    for model in PricingModel.values:
        stale |= scheduled & Q(pricing_model=model, observed_at__lt=now - stale_after(model))
    totals = PriceObservation.objects.filter(id__in=current).aggregate(
        prices=Count("id"), stale=Count("id", filter=stale), newest=Max("observed_at")
    )
    return totals if totals["prices"] else {"prices": 0, "stale": 0, "newest": None}
