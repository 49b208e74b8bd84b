"""TCO studies: resolve GPU figures, offer prices and FX rates from the database, evaluate, store.

The engine (procurement.costing) does the arithmetic; the stored row keeps the resolved inputs and the
prices used, so a report shows the same numbers next month.
"""

from __future__ import annotations

import copy
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
from procurement.costing.values import CostInputError
from procurement.services.documents import plain_json
from procurement.services.saved_once import input_fingerprint, save_once


def gpu_economics_lookup(slug: str) -> GpuEconomics | None:
    gpu = GpuModel.objects.filter(slug=slug).only("slug", "tdp_w", "approx_list_price_usd").first()
    if gpu is None or gpu.tdp_w is None:
        return None
    return GpuEconomics(slug=gpu.slug, tdp_w=Decimal(gpu.tdp_w), list_price=gpu.approx_list_price_usd)


@dataclass
class OfferPriceRecorder:
    """Offer lookup for the engine that remembers every observation it handed out."""

    used: list[dict[str, Any]] = field(default_factory=list)

    def __call__(self, offer: OfferRef, pricing_model: str, *, payment_option: str = "") -> RentPrice | None:
        narrowed = {"payment_option": payment_option} if payment_option else {}
        observation = (
            current_price_observations(
                offer__instance_type__provider__slug=offer.provider,
                offer__instance_type__name=offer.instance_type,
                offer__region__code=offer.region,
                pricing_model=pricing_model,
                **narrowed,
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
        gpus = observation.offer.instance_type.gpu_count
        upfront = observation.upfront_amount
        return RentPrice(
            observation.amount_per_hour / gpus,
            observation.currency,
            observation.observed_at.isoformat(),
            observation.source,
            stale=stale,
            stale_after_hours=limit_hours,
            price_id=observation.pk,
            payment_option=observation.payment_option,
            commitment_kind=observation.commitment_kind,
            upfront_per_gpu=None if upfront is None else upfront / gpus,
        )


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
        "commitment_kind": observation.commitment_kind,
        "upfront_amount": None if observation.upfront_amount is None else str(observation.upfront_amount),
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


# A stand-in for a required field whose value was refused, so that checking can go on to the next error.
_STAND_INS = {
    "utilization": "0.5",
    "currency": "USD",
    "rent.price_per_gpu_hour": "1",
    "rent.pricing_model": "on_demand",
    "horizon_months": 36,
}
MAX_REPORTED_ERRORS = 25


def study_errors(document: object) -> list[CostInputError]:
    """Every error of a study document, not just the first: the parser stops at the first one, so each
    refused field is removed (or, when required, given a stand-in) and the document checked again.
    Stops when a field cannot be stepped past. Stores nothing."""
    if not isinstance(document, dict):
        try:
            tco_study_evaluate(document=document)
        except CostInputError as error:
            return [error]
        return []
    trial, errors, seen = copy.deepcopy(document), [], set()
    while len(errors) < MAX_REPORTED_ERRORS:
        try:
            tco_study_evaluate(document=trial)
        except CostInputError as error:
            if error.field in seen or not _step_past(trial, error.field):
                if error.field not in seen:
                    errors.append(error)
                return errors
            seen.add(error.field)
            errors.append(error)
        else:
            return errors
    return errors


def _step_past(document: dict, path: str) -> bool:
    rent = document.get("rent")
    if path.startswith("rent.offer") and isinstance(rent, dict) and "offer" in rent:
        rent.pop("offer")  # an offer that cannot be priced: go on with a typed price in its place
        rent["price_per_gpu_hour"] = "1"
        return True
    *parents, leaf = path.split(".")
    target = document
    for key in parents:
        target = target.get(key) if isinstance(target, dict) else None
        if target is None:
            return False
    if not isinstance(target, dict) or leaf not in target:
        return False
    if path in _STAND_INS:
        target[leaf] = _STAND_INS[path]
    else:
        del target[leaf]
    return True


@transaction.atomic
def tco_study_create(*, document: dict[str, Any], owner=None, team=None) -> models.TcoStudy:
    """Evaluate first, store only a valid study: bad input raises before anything is written. Saving the
    same document for the same owner and team again (one after the other or at once) is one save: it
    returns that study's newest version (``study.created`` says which)."""
    evaluated = tco_study_evaluate(document=document)
    saved_from = input_fingerprint(document, owner=owner, team=team)
    study, created = save_once(
        lambda: _saved_study(saved_from),
        lambda: models.TcoStudy.objects.create(
            name=evaluated.spec.name,
            spec=plain_json(document),
            result=evaluated.report,
            prices_used=evaluated.prices_used,
            fingerprint=evaluated.fingerprint,
            owner=owner,
            team=team,
            input_fingerprint=saved_from,
        ),
    )
    study.created = created
    return study


def _saved_study(saved_from: str) -> models.TcoStudy | None:
    """The newest version of the study first saved from these inputs (a recompute adds linked rows)."""
    study = models.TcoStudy.objects.filter(input_fingerprint=saved_from, previous__isnull=True).first()
    while study is not None and models.TcoStudy.objects.filter(previous=study).exists():
        study = models.TcoStudy.objects.get(previous=study)
    return study


@transaction.atomic
def tco_study_update(*, study: models.TcoStudy, document: dict[str, Any]) -> models.TcoStudy:
    """Re-evaluate an edited study in place; bad input raises before anything changes."""
    evaluated = tco_study_evaluate(document=document)
    study.name = evaluated.spec.name
    study.spec = plain_json(document)
    study.result = evaluated.report
    study.prices_used = evaluated.prices_used
    study.fingerprint = evaluated.fingerprint
    study.input_fingerprint = None  # edited: no longer what it was first saved from
    study.save()
    return study
