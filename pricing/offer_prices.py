"""Every current price of an offer side by side, as ec2instances.info shows them: on-demand, spot per zone,
and each commitment (term x kind x payment option) with its effective hourly price, upfront fee, hourly
part, price per GPU-hour and saving against on-demand, each with its quality, source and date.

An offer is priced per region (on-demand, commitments) or per zone (spot): the table of any offer shows
the prices of its instance type in its region. Savings compare USD amounts through the stored FX rates
(none where a rate is missing): saving = 1 - effective hourly / on-demand hourly.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from pricing.choices import CommitmentKind, PaymentOption, PricingModel
from pricing.commitment_prices import (
    StoredPrice,
    current_commitment_prices,
    current_stored_prices,
    usd_per_hour,
)
from pricing.fx import fx_rates
from pricing.models import Offer

MODEL_ORDER = [
    PricingModel.ON_DEMAND,
    PricingModel.SPOT,
    PricingModel.RESERVED_1Y,
    PricingModel.SAVINGS_PLAN_1Y,
    PricingModel.RESERVED_3Y,
    PricingModel.SAVINGS_PLAN_3Y,
]
KIND_ORDER = list(CommitmentKind.values)
PAYMENT_ORDER = list(PaymentOption.values)


@dataclass(frozen=True)
class PriceRow:
    price: StoredPrice
    label: str  # e.g. "Reserved 1 year · Standard reservation · Partial upfront"
    per_gpu_hour: Decimal
    saving: Decimal | None  # against on-demand, a fraction; None without an on-demand price or FX rate

    @property
    def is_commitment(self) -> bool:
        return self.price.term_years is not None


def offer_price_rows(offer: Offer) -> list[PriceRow]:
    """The current prices of the offer's instance type in its region, on-demand first."""
    same_place = {"offer__instance_type_id": offer.instance_type_id, "offer__region_id": offer.region_id}
    prices = current_commitment_prices(**same_place)
    prices += _plain_prices(same_place)
    rates = fx_rates(base="USD")
    on_demand = next((p for p in prices if p.pricing_model == PricingModel.ON_DEMAND and not p.zone), None)
    reference = usd_per_hour(on_demand, rates) if on_demand else None
    rows = []
    for price in sorted(prices, key=_order):
        usd = usd_per_hour(price, rates)
        saving = None if reference is None or usd is None else 1 - usd / reference
        rows.append(PriceRow(price, _label(price), price.effective_per_hour / price.gpu_count, saving))
    return rows


def _plain_prices(same_place: dict) -> list[StoredPrice]:
    """Current on-demand and spot prices (no upfront or hourly split) in the commitment reads' shape."""
    return current_stored_prices(pricing_model__in=[PricingModel.ON_DEMAND, PricingModel.SPOT], **same_place)


def _order(price: StoredPrice) -> tuple:
    return (
        MODEL_ORDER.index(price.pricing_model) if price.pricing_model in MODEL_ORDER else 99,
        KIND_ORDER.index(price.commitment_kind) if price.commitment_kind in KIND_ORDER else 99,
        PAYMENT_ORDER.index(price.payment_option) if price.payment_option in PAYMENT_ORDER else 99,
        price.zone,
    )


def _label(price: StoredPrice) -> str:
    parts = [
        PricingModel(price.pricing_model).label
        if price.pricing_model in PricingModel.values
        else price.pricing_model
    ]
    if price.commitment_kind:
        parts.append(CommitmentKind(price.commitment_kind).label)
    if price.payment_option:
        parts.append(PaymentOption(price.payment_option).label)
    if price.zone:
        parts.append(price.zone)
    return " · ".join(parts)
