"""One answer to "the current price of an offer" (pricing/selectors.py, issue 25): the newest published
observation per offer × pricing model × payment option × commitment kind, of an offer still listed.

Every reader gives that same answer: the selector, the offer table the pages read (offer_frame), the
ranking's fast SQL form (pricing/offer_table.py), the count the API's X-Total-Count sends, the offer
page's price rows and the on-demand price the cost engines take. Before the selector was made one, the
count was of every published key, gone marketplace offers included, so it disagreed with the rows."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from django.utils import timezone

from pricing.choices import PriceStatus, PricingModel
from pricing.commitment_prices import current_on_demand_price
from pricing.models import Offer, PriceObservation
from pricing.offer_pages import current_price_count
from pricing.offer_prices import offer_price_rows
from pricing.offer_table import offer_table
from pricing.selectors import current_price_observations, offer_frame


def _on_demand(offer_id: int):
    return current_price_observations(offer_id=offer_id, pricing_model=PricingModel.ON_DEMAND).get()


def _reprice(offer: Offer, base: PriceObservation, amount: Decimal, status: str, minutes: int):
    return PriceObservation.objects.create(
        offer=offer,
        pricing_model=PricingModel.ON_DEMAND,
        amount_per_hour=amount,
        currency=base.currency,
        observed_at=timezone.now() + dt.timedelta(minutes=minutes),
        source="test: a newer quote",
        status=status,
    )


def test_every_reader_gives_the_newest_published_price_of_a_listed_offer(bundled_catalog):
    usd = current_price_observations(
        pricing_model=PricingModel.ON_DEMAND, currency="USD", offer__instance_type__gpu__isnull=False
    ).order_by("id")
    kept, gone = (Offer.objects.get(pk=row.offer_id) for row in usd[:2])
    base = _on_demand(kept.pk)
    newer = _reprice(kept, base, base.amount_per_hour + Decimal("1.000001"), PriceStatus.PUBLISHED, 1)
    _reprice(kept, base, Decimal("999"), PriceStatus.SUSPECT, 2)  # newest, but held back: not current
    gone_prices = current_price_observations(offer_id=gone.pk).count()
    assert gone_prices >= 1
    Offer.objects.filter(pk=gone.pk).update(gone_at=timezone.now())

    assert _on_demand(kept.pk).pk == newer.pk
    assert not current_price_observations(offer_id=gone.pk).exists()

    frame = offer_frame()
    row = frame[(frame["offer_id"] == kept.pk) & (frame["pricing_model"] == PricingModel.ON_DEMAND)]
    assert row["observation_id"].tolist() == [newer.pk]
    assert row["price_per_hour"].tolist() == [newer.amount_per_hour]
    assert gone.pk not in set(frame["offer_id"])

    table = offer_table()
    fast = table[(table["offer_id"] == kept.pk) & (table["pricing_model"] == PricingModel.ON_DEMAND)]
    assert fast["observation_id"].tolist() == [newer.pk]
    assert fast["price_per_hour"].tolist() == [float(newer.amount_per_hour)]
    assert sorted(table["observation_id"]) == sorted(frame["observation_id"])

    assert current_price_count() == len(frame)  # was len(frame) + gone_prices: the gone offer counted
    on_demand_rows = [r for r in offer_price_rows(kept) if r.price.pricing_model == PricingModel.ON_DEMAND]
    assert [r.price.price_id for r in on_demand_rows if not r.price.zone] == [newer.pk]
    assert current_on_demand_price(kept.pk).effective_per_hour == newer.amount_per_hour
