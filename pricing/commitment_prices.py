"""Reads of stored commitment prices (reserved and savings-plan observations) for the engines and pages.

A commitment price is a PriceObservation whose pricing model binds for a term (pricing.models says
why they share the table). These reads hand plain records to the commitments command and API, the spend
review, the TCO study and the offer page: one shape, so each says which stored price it used (its id,
source, observation date and quality) the same way.

"Cheapest" compares effective hourly prices in USD through the stored FX rates. Illustrative prices are
never picked on their own (pricing/price_quality.py); named by id or offer they are used and labelled.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from decimal import Decimal

from pricing.choices import COMMITMENT_TERM_YEARS, CommitmentKind, PaymentOption, PricingModel
from pricing.fx import fx_rates
from pricing.models import PriceObservation
from pricing.price_quality import ILLUSTRATIVE, price_quality
from pricing.selectors import current_price_observations

_FIELDS = (
    "id",
    "offer_id",
    "offer__instance_type__provider__slug",
    "offer__instance_type__name",
    "offer__region__code",
    "offer__zone",
    "offer__instance_type__gpu_count",
    "pricing_model",
    "commitment_kind",
    "payment_option",
    "amount_per_hour",
    "upfront_amount",
    "recurring_per_hour",
    "currency",
    "observed_at",
    "source",
)


@dataclass(frozen=True)
class StoredPrice:
    """One stored price as the engines and reports name it. Amounts per instance-hour in `currency`."""

    price_id: int
    offer_id: int
    provider: str
    instance_type: str
    region: str
    zone: str
    gpu_count: Decimal
    pricing_model: str
    commitment_kind: str
    payment_option: str
    effective_per_hour: Decimal
    upfront: Decimal | None
    recurring_per_hour: Decimal | None
    currency: str
    observed_at: dt.datetime
    source: str

    @property
    def quality(self) -> str:
        return price_quality(self.source)

    @property
    def term_years(self) -> int | None:
        return COMMITMENT_TERM_YEARS.get(self.pricing_model)

    @property
    def effective_per_gpu_hour(self) -> Decimal:
        return self.effective_per_hour / self.gpu_count

    @property
    def label(self) -> str:
        """e.g. 'aws p5.48xlarge us-east-1 reserved_1y partial_upfront standard'."""
        parts = (
            self.provider,
            self.instance_type,
            self.region,
            self.zone,
            self.pricing_model,
            self.payment_option,
            self.commitment_kind,
        )
        return " ".join(part for part in parts if part)

    def describe(self) -> dict:
        """The JSON every report gives for a stored price it used."""
        return {
            "price_id": self.price_id,
            "offer_id": self.offer_id,
            "provider": self.provider,
            "instance_type": self.instance_type,
            "region": self.region,
            "pricing_model": self.pricing_model,
            "commitment_kind": self.commitment_kind,
            "payment_option": self.payment_option,
            "term_years": self.term_years,
            "gpu_count": str(self.gpu_count),
            "effective_per_hour": str(self.effective_per_hour),
            "upfront": None if self.upfront is None else str(self.upfront),
            "recurring_per_hour": None if self.recurring_per_hour is None else str(self.recurring_per_hour),
            "currency": self.currency,
            "observed_at": self.observed_at.isoformat(),
            "source": self.source,
            "quality": self.quality,
        }


def _stored(row: tuple) -> StoredPrice:
    """A `values_list(*_FIELDS)` row, whose columns are StoredPrice's fields in order."""
    return StoredPrice(*row)


def current_stored_prices(**filters) -> list[StoredPrice]:
    """The current prices (pricing.selectors.current_price_observations) matching `filters`, as StoredPrice."""
    return [_stored(row) for row in current_price_observations(**filters).values_list(*_FIELDS)]


def current_commitment_prices(**filters) -> list[StoredPrice]:
    """The current published commitment prices matching `filters` (ORM lookups on PriceObservation)."""
    return current_stored_prices(pricing_model__in=list(COMMITMENT_TERM_YEARS), **filters)


def stored_price(price_id: int) -> StoredPrice | None:
    """Any stored observation by id (published or not: a person named it), or None."""
    row = PriceObservation.objects.filter(pk=price_id).values_list(*_FIELDS).first()
    return None if row is None else _stored(row)


def current_on_demand_price(offer_id: int) -> StoredPrice | None:
    rows = current_price_observations(offer_id=offer_id, pricing_model=PricingModel.ON_DEMAND)
    row = rows.values_list(*_FIELDS).first()
    return None if row is None else _stored(row)


def term_models(term_years: int | None) -> list[str]:
    """The pricing models of a term (1 or 3 years), or every commitment model."""
    return [model for model, years in COMMITMENT_TERM_YEARS.items() if term_years in (None, years)]


def usd_per_hour(price: StoredPrice, rates: dict[str, Decimal] | None = None) -> Decimal | None:
    rates = fx_rates(base="USD") if rates is None else rates
    return price.effective_per_hour * rates[price.currency] if price.currency in rates else None


def cheapest_commitment_price(
    *,
    instance_type: str,
    region: str,
    provider: str = "",
    term_years: int | None = None,
    payment_option: str = "",
    commitment_kind: str = "",
    offer_id: int | None = None,
    include_illustrative: bool = False,
) -> StoredPrice | None:
    """The current commitment with the lowest effective hourly price (USD) among those matching."""
    filters: dict = {"pricing_model__in": term_models(term_years)}
    if offer_id is not None:
        filters["offer_id"] = offer_id
    else:
        filters |= {"offer__instance_type__name": instance_type, "offer__region__code": region}
        if provider:
            filters["offer__instance_type__provider__slug"] = provider
    if payment_option:
        filters["payment_option"] = payment_option
    if commitment_kind:
        filters["commitment_kind"] = commitment_kind
    rates = fx_rates(base="USD")
    rows = current_price_observations(**filters).values_list(*_FIELDS)
    candidates = [_stored(row) for row in rows]
    if not include_illustrative and offer_id is None:
        candidates = [price for price in candidates if price.quality != ILLUSTRATIVE]
    priced = [(usd_per_hour(p, rates), p.price_id, p) for p in candidates]
    priced = [entry for entry in priced if entry[0] is not None]
    return min(priced, key=lambda entry: entry[:2])[2] if priced else None


PAYMENT_OPTIONS = [value for value in PaymentOption.values if value]
COMMITMENT_KINDS = [value for value in CommitmentKind.values if value]
