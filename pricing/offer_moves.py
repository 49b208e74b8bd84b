"""What the offer page says about an offer's price movements between refreshes (pricing.refresh_changes).

- A price series (pricing model, payment option, commitment kind) whose newest price moved more than
  MOVE_SHARE from the one before it: both prices and the share.
- The offer's GPU type missing from the last run of the source that priced it: its prices are what the
  source said before, and the source no longer lists that GPU type.
"""

from __future__ import annotations

from pricing.choices import PriceStatus
from pricing.models import Offer, PriceObservation
from pricing.refresh_changes import MOVE_SHARE
from scheduler.models import PriceRefresh, RefreshStatus


def offer_price_moves(offer: Offer) -> list[dict]:
    """Each series of `offer` whose newest published price moved more than MOVE_SHARE from the one before."""
    rows = (
        PriceObservation.objects.filter(offer=offer, status=PriceStatus.PUBLISHED)
        .order_by("pricing_model", "payment_option", "commitment_kind", "-observed_at")
        .values_list(
            "pricing_model", "payment_option", "commitment_kind", "amount_per_hour", "currency", "observed_at"
        )
    )
    newest: dict[tuple, list] = {}
    for model, payment, kind, amount, currency, observed_at in rows:
        pair = newest.setdefault((model, payment, kind), [])
        if len(pair) < 2:
            pair.append((amount, currency, observed_at))
    moves = []
    for (model, payment, kind), pair in sorted(newest.items()):
        if len(pair) < 2 or pair[0][1] != pair[1][1] or pair[1][0] <= 0:
            continue
        (after, currency, at), (before, _, before_at) = pair
        share = (after - before) / before
        if abs(share) > MOVE_SHARE:
            label = " ".join(part for part in (model, payment, kind) if part)
            moves.append(
                {
                    "series": label,
                    "before": before,
                    "after": after,
                    "currency": currency,
                    "share": share,
                    "before_at": before_at,
                    "at": at,
                }
            )
    return moves


def offer_gpu_type_gone(offer: Offer) -> dict | None:
    """{"source", "region", "at"} when the last run of the source that priced `offer` no longer produced
    its GPU type, else None."""
    newest = (
        PriceObservation.objects.filter(offer=offer, refresh__isnull=False)
        .order_by("-observed_at")
        .values_list("refresh__source", "refresh__region")
        .first()
    )
    if newest is None:
        return None
    source, region = newest
    last = (
        PriceRefresh.objects.filter(source=source, region=region)
        .exclude(status__in=[RefreshStatus.RUNNING, RefreshStatus.SKIPPED])
        .order_by("-started_at", "-pk")
        .first()
    )
    provider = offer.instance_type.provider.slug
    gone = ((last.changes or {}).get("gpu_types_gone") or {}).get(provider, []) if last else []
    if offer.instance_type.gpu_name in gone:
        return {"source": source, "region": region, "at": last.started_at}
    return None
