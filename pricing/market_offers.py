"""Marketplace offers come and go: which stored offers a market refresh still lists, and which are gone.

A marketplace (Vast's offer search) lists short-lived asks. Every refresh appends each listed offer's price
as a new observation (history is never overwritten) and then, here, stamps the listed offers
``last_seen_at`` and marks ``gone_at`` on every offer of that market it listed before but not this time:
gone offers keep their history (the offer page and API show it, with when the offer was last seen) and
have no current price, so rankings and the landing page leave them out (pricing/selectors.py,
pricing/offer_table.py). An offer listed again comes back (``gone_at`` cleared).

Only offers a market refresh once stamped are ever marked gone: catalog snapshots of the same provider
(the bundled SkyPilot Vast file) have no ``last_seen_at`` and are left alone. A refresh that did not read
the whole market (it stopped at its page bound) stamps what it saw and marks nothing gone.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from django.db.models import Count, Max, Q

from pricing.models import Offer
from pricing.price_version import price_version_bump

STAMP_CHUNK = 500  # offer ids per UPDATE (well under SQLite's bound on query parameters)


@dataclass(frozen=True)
class MarketMarks:
    listed: int  # stored offers this refresh listed
    returned: int  # of those, offers that were gone and are listed again
    gone: int  # offers newly marked gone


def market_offers_mark(
    *, provider_slug: str, listed: set[tuple[str, str, str]], seen_at: dt.datetime, complete: bool
) -> MarketMarks:
    """Stamp the ``listed`` (instance type, region, zone) offers of ``provider_slug`` seen at ``seen_at``;
    when the listing was ``complete``, mark gone the ones stamped before and not listed now."""
    ids = _offer_ids(provider_slug, listed)
    returned = Offer.objects.filter(id__in=ids, gone_at__isnull=False).count() if ids else 0
    for start in range(0, len(ids), STAMP_CHUNK):
        Offer.objects.filter(id__in=ids[start : start + STAMP_CHUNK]).update(
            last_seen_at=seen_at, gone_at=None
        )
    gone = 0
    if complete:
        gone = Offer.objects.filter(
            instance_type__provider__slug=provider_slug, last_seen_at__lt=seen_at, gone_at__isnull=True
        ).update(gone_at=seen_at)
    if gone or returned:  # current prices changed: cached offer tables and pages must go
        price_version_bump()
    return MarketMarks(listed=len(ids), returned=returned, gone=gone)


def _offer_ids(provider_slug: str, listed: set[tuple[str, str, str]]) -> list[int]:
    names = sorted({name for name, _, _ in listed})
    rows = []
    for start in range(0, len(names), STAMP_CHUNK):
        rows += Offer.objects.filter(
            instance_type__provider__slug=provider_slug,
            instance_type__name__in=names[start : start + STAMP_CHUNK],
        ).values_list("id", "instance_type__name", "region__code", "zone")
    return sorted(offer_id for offer_id, *key in rows if tuple(key) in listed)


def market_offer_counts(provider_slug: str) -> dict:
    """For /status/: offers a market refresh lists now, those gone, and when the last one went."""
    counts = Offer.objects.filter(
        instance_type__provider__slug=provider_slug, last_seen_at__isnull=False
    ).aggregate(
        listed=Count("id", filter=Q(gone_at__isnull=True)),
        gone=Count("id", filter=Q(gone_at__isnull=False)),
        last_seen_at=Max("last_seen_at"),
        last_gone_at=Max("gone_at"),
    )
    return counts
