"""Publishing a held-back (suspect) price: one conditional update per price, and an audit row each.

The conditional update (``status = suspect`` → ``published``) makes a double click or two people at
once publish a price once and write one audit row. The audit row keeps the current price of the same
offer, pricing model and payment option before and after, so finance can see what the decision changed.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.db import transaction

from pricing.choices import PriceStatus
from pricing.models import PriceObservation, SuspectPricePublication
from pricing.price_version import price_version_bump


def _current(observation: PriceObservation) -> PriceObservation | None:
    # imported here: the admin imports this module at start-up, and pricing.selectors imports pandas,
    # which a command that never reads the offer table should not pay for (issue 9)
    from pricing.selectors import current_price_observations

    return current_price_observations(
        offer_id=observation.offer_id,
        pricing_model=observation.pricing_model,
        payment_option=observation.payment_option,
        commitment_kind=observation.commitment_kind,
    ).first()


@transaction.atomic
def suspect_prices_publish(observation_ids: Iterable[int], *, user) -> int:
    """Publish the suspect prices among `observation_ids`; returns how many this call published."""
    published = 0
    suspects = PriceObservation.objects.filter(pk__in=list(observation_ids), status=PriceStatus.SUSPECT)
    for observation in suspects.order_by("pk"):
        before = _current(observation)
        claimed = PriceObservation.objects.filter(pk=observation.pk, status=PriceStatus.SUSPECT).update(
            status=PriceStatus.PUBLISHED
        )
        if not claimed:  # someone else published it in the meantime
            continue
        price_version_bump()  # a queryset update sends no signal; the published price is now current
        after = _current(observation)
        SuspectPricePublication.objects.create(
            observation=observation,
            published_by=user,
            previous_current_amount=before.amount_per_hour if before else None,
            previous_current_currency=before.currency if before else "",
            new_current_amount=after.amount_per_hour,
            new_current_currency=after.currency,
        )
        published += 1
    return published
