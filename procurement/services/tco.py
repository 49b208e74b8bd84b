"""TCO studies: resolve GPU figures, offer prices and FX rates from the database, evaluate, store.

The engine (procurement.costing) does the arithmetic; the stored row keeps the resolved inputs and the
prices used, so a report shows the same numbers next month.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from django.db import transaction
from django.utils import timezone

from pricing.fx import fx_rates
from pricing.models import GpuModel, InstanceType, Offer, Provider, Region
from pricing.selectors import current_price_observations, price_staleness
from procurement import models
from procurement.costing import (
    GpuEconomics,
    OfferRef,
    RentPrice,
    UnknownOffer,
    evaluate_tco_study,
    parse_tco_study,
)
from procurement.costing.tco_spec import TcoStudy as TcoStudySpec
from procurement.services.documents import plain_json


def gpu_economics_lookup(slug: str) -> GpuEconomics | None:
    gpu = GpuModel.objects.filter(slug=slug).only("slug", "tdp_w", "approx_list_price_usd").first()
    if gpu is None or gpu.tdp_w is None:
        return None
    return GpuEconomics(slug=gpu.slug, tdp_w=Decimal(gpu.tdp_w), list_price=gpu.approx_list_price_usd)


@dataclass
class OfferPriceRecorder:
    """Offer lookup for the engine that remembers every observation it handed out."""

    used: list[dict[str, Any]] = field(default_factory=list)

    def __call__(self, offer: OfferRef, pricing_model: str) -> RentPrice | None:
        observation = (
            current_price_observations(
                offer__instance_type__provider__slug=offer.provider,
                offer__instance_type__name=offer.instance_type,
                offer__region__code=offer.region,
                pricing_model=pricing_model,
            )
            .select_related("offer__instance_type", "refresh")
            .order_by("amount_per_hour")  # several zones or payment options: the cheapest current one
            .first()
        )
        if observation is None:
            check_offer_exists(offer)  # raises UnknownOffer naming the part that matches nothing
            return None
        refresh_source = observation.refresh.source if observation.refresh else None
        stale, limit_hours = price_staleness(
            observation.pricing_model, refresh_source, observation.observed_at, timezone.now()
        )
        self.used.append(_price_used(observation, offer) | {"stale": stale})
        per_gpu_hour = observation.amount_per_hour / observation.offer.instance_type.gpu_count
        return RentPrice(
            per_gpu_hour, observation.currency, observation.observed_at.isoformat(), observation.source,
            stale=stale, stale_after_hours=limit_hours,
        )  # fmt: skip


def check_offer_exists(offer: OfferRef) -> None:
    """Tell an offer that does not exist from one without a current price of the asked model."""
    provider = Provider.objects.filter(slug=offer.provider).first()
    if provider is None:
        raise UnknownOffer("provider", f"no provider {offer.provider!r} in the catalog")
    instance_type = InstanceType.objects.filter(provider=provider, name=offer.instance_type).first()
    if instance_type is None:
        raise UnknownOffer("instance_type", f"{offer.provider} has no instance type {offer.instance_type!r}")
    if not Region.objects.filter(provider=provider, code=offer.region).exists():
        raise UnknownOffer("region", f"{offer.provider} has no region {offer.region!r}")
    if not Offer.objects.filter(instance_type=instance_type, region__code=offer.region).exists():
        raise UnknownOffer("region", f"{offer.instance_type} is not offered in {offer.region}")


def _price_used(observation, offer: OfferRef) -> dict[str, Any]:
    return {
        "observation_id": observation.pk,
        "offer": offer.label(),
        "zone": observation.offer.zone,
        "pricing_model": observation.pricing_model,
        "payment_option": observation.payment_option,
        "amount_per_hour": str(observation.amount_per_hour),
        "gpu_count": str(observation.offer.instance_type.gpu_count),
        "currency": observation.currency,
        "observed_at": observation.observed_at.isoformat(),
        "source": observation.source,
    }


def fx_pairs_into(currency: str) -> dict[tuple[str, str], Decimal]:
    """Stored FX rates as the engine's ``(from, to)`` table: every rate into ``currency``, plus every rate
    into USD so that the engine can also convert the other way (USD -> CNY through a CNY -> USD rate)."""
    pairs = {(source, "USD"): rate for source, rate in fx_rates(base="USD").items()}
    pairs |= {(source, currency): rate for source, rate in fx_rates(base=currency).items()}
    return pairs


@dataclass(frozen=True)
class EvaluatedStudy:
    spec: TcoStudySpec
    report: dict[str, Any]
    prices_used: list[dict[str, Any]]

    @property
    def fingerprint(self) -> str:
        """Hash of the resolved inputs (prices included): recomputing with unchanged prices adds nothing."""
        payload = json.dumps(self.report["inputs"], sort_keys=True)
        return hashlib.sha256(payload.encode()).hexdigest()


def tco_study_evaluate(*, document: object) -> EvaluatedStudy:
    """Parse, resolve and compute a study; raises CostInputError naming the field. Stores nothing."""
    currency = document.get("currency") if isinstance(document, dict) else None
    rates = fx_pairs_into(currency) if isinstance(currency, str) else {}  # the parser checks the code itself
    recorder = OfferPriceRecorder()
    spec = parse_tco_study(document, gpu_lookup=gpu_economics_lookup, offer_lookup=recorder, fx_rates=rates)
    return EvaluatedStudy(spec=spec, report=evaluate_tco_study(spec), prices_used=recorder.used)


@transaction.atomic
def tco_study_create(*, document: dict[str, Any], owner=None, team=None) -> models.TcoStudy:
    """Evaluate first, store only a valid study: bad input raises before anything is written."""
    evaluated = tco_study_evaluate(document=document)
    return models.TcoStudy.objects.create(
        name=evaluated.spec.name,
        spec=plain_json(document),
        result=evaluated.report,
        prices_used=evaluated.prices_used,
        fingerprint=evaluated.fingerprint,
        owner=owner,
        team=team,
    )
