"""The prices a capacity plan is computed with, each with where it came from and when it was observed.

- On-demand and spot: the cheapest current price per GPU-hour of the GPU model in the stored catalog
  (``pricing.selectors.cheapest_in_frame``: illustrative prices and flagged spot outliers left out,
  whole-instance prices preferred over GPU-only ones), the offer named.
- 1- and 3-year commitments: typed in the study (``rent`` when its pricing model is a commitment, and
  ``rent.reserved_alternative``), else the cheapest stored reserved / savings-plan observation of that
  GPU model (``stored_commitment_price``: the one place to point at another table of commitment prices).

Every price is converted into the plan's currency through stored FX rates; a currency without one is a
CostInputError naming the field, raised before anything is stored.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from decimal import Decimal
from typing import Any

from pricing.choices import PricingModel
from pricing.commitment_prices import stored_price
from pricing.price_quality import ILLUSTRATIVE
from pricing.selectors import cheapest_in_frame, offer_frame
from procurement.costing.values import CostInputError
from procurement.services.currency import usd_conversion

PRICE_QUANTUM = Decimal("0.000001")  # hourly prices keep 6 decimals
COMMITMENT_MODELS = {
    "committed_1y": (PricingModel.RESERVED_1Y, PricingModel.SAVINGS_PLAN_1Y),
    "committed_3y": (PricingModel.RESERVED_3Y, PricingModel.SAVINGS_PLAN_3Y),
}
TERM_OF_MODEL = {model: kind for kind, models_ in COMMITMENT_MODELS.items() for model in models_}


@dataclass(frozen=True)
class PlanPrice:
    """One supply option's price per GPU-hour in the plan's currency, and its evidence."""

    kind: str  # on_demand | spot | committed_1y | committed_3y
    pricing_model: str  # the stored or typed pricing model (reserved_3y, savings_plan_1y, ...)
    price_per_gpu_hour: Decimal  # in the plan's currency
    currency: str
    source: str  # "typed in the study" or the observation's source
    offer: str = ""  # provider/instance_type/region[/zone] of a stored price
    observed_at: str | None = None  # ISO 8601; None for a typed price
    quality: str = "quoted"  # observed | snapshot | quoted (typed in the study)
    stale: bool = False
    observation_id: int | None = None
    price_per_gpu_hour_usd: str | None = None
    payment_option: str = ""  # commitments: no_upfront, partial_upfront, all_upfront
    upfront_per_gpu: Decimal | None = None  # commitments: the fee per GPU paid at signing, plan currency
    # commitments: the same offer, term and kind under its other payment options (the plan picks one)
    alternatives: tuple[PlanPrice, ...] = ()
    # commitments: the GPUs one unit of it buys. A reserved instance is sold per instance (its offer's
    # GPUs); a savings plan is a spend per hour, so any number of GPU-hours (1)
    unit_gpus: int = 1

    def as_dict(self) -> dict[str, Any]:
        shown = {
            key: str(value) if isinstance(value, Decimal) else value
            for key, value in asdict(self).items()
            if key != "alternatives"
        }
        return shown | {"alternatives": [price.as_dict() for price in self.alternatives]}


def plan_prices(
    *,
    gpu: str,
    currency: str,
    study: dict | None,
    providers: tuple[str, ...] = (),
    field: str = "currency",
    instance_type: str = "",
    region: str = "",
    frame=None,
) -> list[PlanPrice]:
    """Every price the plan may use for ``gpu`` (from ``providers`` only, when given; of one instance
    type and region, when given: a fleet's own offer): catalog on-demand and spot, then the commitments.
    ``frame``: an offer frame already narrowed by the caller (the like-for-like offers of a move)."""
    rate = usd_conversion(currency, field=field).rate
    filters = {"offer__instance_type__provider__slug__in": providers} if providers else {}
    if instance_type:
        filters["offer__instance_type__name"] = instance_type
    if region:
        filters["offer__region__code"] = region
    if frame is None:
        frame = offer_frame(offer__instance_type__gpu__slug=gpu, **filters)
    prices = [_catalog_price(row, kind, rate, currency) for kind, row in _cheapest_rent(frame, gpu).items()]
    typed = typed_commitment_prices(study or {}, currency)
    for kind, models_ in COMMITMENT_MODELS.items():
        if kind in typed:
            prices.append(typed[kind])
            continue
        row = stored_commitment_price(frame, models_)
        if row is not None:
            prices.append(_commitment_price(frame, row, kind, rate, currency))
    return prices


def _commitment_price(frame, row, kind: str, rate: Decimal, currency: str) -> PlanPrice:
    """The stored commitment price with its upfront fee, and its offer's other payment options."""
    same = frame[
        (frame["offer_id"] == row.offer_id)
        & (frame["pricing_model"] == row.pricing_model)
        & (frame["commitment_kind"] == row.commitment_kind)
        & (frame["observation_id"] != row.observation_id)
        & frame["price_per_gpu_hour_usd"].notna()
    ]
    others = tuple(_with_upfront(other, kind, rate, currency) for other in same.itertuples())
    return replace(_with_upfront(row, kind, rate, currency), alternatives=others)


def _with_upfront(row, kind: str, rate: Decimal, currency: str) -> PlanPrice:
    """A stored commitment price with its fee per GPU (stored per instance, in the price's currency)."""
    price = _catalog_price(row, kind, rate, currency)
    stored = stored_price(int(row.observation_id))
    upfront = None
    if stored is not None and stored.upfront is not None:
        usd_rate = (
            Decimal(row.price_per_hour_usd) / stored.effective_per_hour if stored.effective_per_hour else None
        )
        if usd_rate is not None:
            upfront = stored.upfront * usd_rate * rate / stored.gpu_count
    unit = 1
    if stored is not None and str(row.pricing_model).startswith("reserved_") and stored.gpu_count:
        unit = max(1, int(stored.gpu_count))  # a reserved instance covers a whole instance, no fraction
    return replace(price, payment_option=row.payment_option or "", upfront_per_gpu=upfront, unit_gpus=unit)


def _cheapest_rent(frame, gpu: str) -> dict[str, Any]:
    cheapest = cheapest_in_frame(frame)
    found = {}
    for kind, model in (("on_demand", PricingModel.ON_DEMAND), ("spot", PricingModel.SPOT)):
        row = cheapest.get((gpu, model))
        if row is not None:
            found[kind] = row
    return found


def stored_commitment_price(frame, pricing_models: tuple[str, ...]):
    """The cheapest current stored commitment price per GPU-hour among ``pricing_models`` (effective
    hourly: the upfront fee spread over the term, as the providers' readers store it), or None.
    Illustrative prices are left out. The one lookup to point at another table of commitment prices."""
    if frame.empty:
        return None
    usable = frame[
        frame["pricing_model"].isin(pricing_models)
        & frame["price_per_gpu_hour_usd"].notna()
        & (frame["price_quality"] != ILLUSTRATIVE)
    ]
    if usable.empty:
        return None
    return next(usable.loc[[usable["price_per_gpu_hour_usd_float"].idxmin()]].itertuples())


def _catalog_price(row, kind: str, rate: Decimal, currency: str) -> PlanPrice:
    usd = Decimal(row.price_per_gpu_hour_usd)
    zone = f"/{row.zone}" if row.zone else ""
    return PlanPrice(
        kind=kind,
        pricing_model=row.pricing_model,
        price_per_gpu_hour=(usd * rate).quantize(PRICE_QUANTUM),
        currency=currency,
        source=row.source,
        offer=f"{row.provider}/{row.instance_type}/{row.region}{zone}",
        observed_at=row.observed_at.isoformat(),
        quality=row.price_quality,
        stale=bool(row.stale),
        observation_id=int(row.observation_id),
        price_per_gpu_hour_usd=str(usd.quantize(PRICE_QUANTUM)),
    )


def typed_commitment_prices(study: dict, currency: str) -> dict[str, PlanPrice]:
    """Commitment prices typed in the study's ``rent`` section (in the study's currency, which is the
    plan's): ``rent`` itself when its pricing model is a commitment, and ``rent.reserved_alternative``."""
    rent = study.get("rent") if isinstance(study.get("rent"), dict) else {}
    found = {}
    entries = [("rent", rent), ("rent.reserved_alternative", rent.get("reserved_alternative") or {})]
    for path, entry in entries:
        if not isinstance(entry, dict) or entry.get("pricing_model") not in TERM_OF_MODEL:
            continue
        if entry.get("price_per_gpu_hour") is None:
            continue
        price = _positive_price(entry["price_per_gpu_hour"], f"study.{path}.price_per_gpu_hour")
        kind = TERM_OF_MODEL[entry["pricing_model"]]
        found[kind] = PlanPrice(
            kind=kind,
            pricing_model=entry["pricing_model"],
            price_per_gpu_hour=price,
            currency=currency,
            source=f"typed in the study ({path})",
        )
    return found


def _positive_price(value: object, field: str) -> Decimal:
    try:
        price = Decimal(str(value))
    except ArithmeticError:
        raise CostInputError(field, f"must be a number, got {value!r}") from None
    if not price.is_finite() or price <= 0:
        raise CostInputError(field, f"must be greater than 0, got {value!r}")
    return price.quantize(PRICE_QUANTUM)
