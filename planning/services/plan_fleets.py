"""A capacity plan per like-for-like fleet (planning.engine.fleets), priced at the fleet's own
provider, region and instance type, and the headline that sums them (docs/capacity-plan.md, "Like for
like", "Whose prices", "Every GPU model in scope").

Prices of a fleet, in order of precedence:
- on-demand: the study's rent price when the study is for the fleet's GPU model (shown as the study's);
  else the catalog's on-demand price of the bills' own instance type in the bills' own region; else the
  bills' own on-demand rate (effective cost / GPU-hours of the fleet's on-demand rows). Without any,
  the fleet is not planned and the missing price is named.
- spot: the catalog's spot price of the same instance type and region.
- 1- and 3-year commitments: the study's typed prices (for its GPU model), else the catalog's stored
  reserved / savings-plan price of the same instance type and region. Without one the option is not
  evaluated and the missing price is named with how to give it: never "0 GPUs".
"""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal
from typing import Any

from planning.engine.fleets import Fleet, link_class, serves
from planning.services.plan_prices import PRICE_QUANTUM, TERM_OF_MODEL, PlanPrice, plan_prices
from pricing.models import GpuModel

MICRO = Decimal("0.000001")
COMMITMENT_KINDS = {"committed_1y": "1-year", "committed_3y": "3-year"}
HOW_TO_GIVE_COMMITMENT = (
    "give it in the study: rent.reserved_alternative {{pricing_model: {model}, price_per_gpu_hour: ...}} "
    "(docs/tco-spec.md), or store the provider's commitment prices (the aws-savings-plans source, "
    "docs/capacity-plan.md)"
)
HOW_TO_GIVE_ON_DEMAND = (
    "give it in the study: rent {pricing_model: on_demand, price_per_gpu_hour: ...}, or load a catalog "
    "with the instance type (manage.py load_catalog)"
)


def gpu_form_factors() -> dict[str, str]:
    return dict(GpuModel.objects.values_list("slug", "form_factor"))


def study_gpu(study: dict | None) -> str:
    buy = (study or {}).get("buy")
    return str(buy.get("gpu") or "") if isinstance(buy, dict) else ""


def study_applies(study: dict | None, fleet: Fleet, models_in_scope: set[str]) -> bool:
    """A study's prices are for one GPU model: its buy.gpu, or the scope's only model."""
    if not study:
        return False
    named = study_gpu(study)
    return fleet.gpu_model == named if named else len(models_in_scope) == 1


def study_rent_price(study: dict, currency: str) -> PlanPrice | None:
    rent = study.get("rent") if isinstance(study.get("rent"), dict) else {}
    if rent.get("pricing_model", "on_demand") != "on_demand" or rent.get("price_per_gpu_hour") is None:
        return None
    price = Decimal(str(rent["price_per_gpu_hour"])).quantize(PRICE_QUANTUM)
    return PlanPrice(
        kind="on_demand",
        pricing_model="on_demand",
        price_per_gpu_hour=price,
        currency=currency,
        source="the study's rent price (rent.price_per_gpu_hour)",
        observed_at=rent.get("price_observed_at"),
    )


def bills_on_demand_price(fleet: Fleet, usage, currency: str) -> PlanPrice | None:
    """The fleet's own on-demand rate in the bills: effective cost / GPU-hours of its on-demand rows."""
    rows = (usage.pricing_category == "on_demand") & ~usage.unused_commitment & (usage.gpu_hours > 0)
    hours = float(usage.gpu_hours[rows].sum())
    if hours <= 0:
        return None
    rate = Decimal(int(usage.effective_cost_micros[rows].sum())) * MICRO / Decimal(repr(hours))
    if rate <= 0:
        return None
    return PlanPrice(
        kind="on_demand",
        pricing_model="on_demand",
        price_per_gpu_hour=rate.quantize(PRICE_QUANTUM),
        currency=currency,
        source=f"the bills' own on-demand rate ({hours:,.0f} GPU-hours)",
        offer=fleet.offer,
        quality="observed",
    )


# The bills' rate prices a fleet only when at least 1% below the catalog's (gpuledger assumption): less is
# the rounding of billed lines to the cent (examples/bill-focus.csv bills g5.xlarge at 1.005833 for 1.006).
DISCOUNT_SHOWN_MIN = Decimal("0.01")


def _bills_rate_if_lower(prices: list[PlanPrice], own: PlanPrice | None) -> list[PlanPrice]:
    """The fleet's on-demand price: the catalog's list price, or the bills' own rate where the bills show
    the customer pays less for the same instance type (a negotiated discount such as an AWS EDP, or
    credits): keeping today's terms is always open to a CFO, so the plan never prices them away."""
    if own is None:
        return prices
    catalog = next((price for price in prices if price.kind == "on_demand"), None)
    if catalog is None:
        return [*prices, own]
    if own.price_per_gpu_hour >= catalog.price_per_gpu_hour * (1 - DISCOUNT_SHOWN_MIN):
        return prices
    own = replace(
        own,
        source=f"{own.source}, below the catalog's {catalog.price_per_gpu_hour} ({catalog.source}): "
        "a discount the bills show (used when 1% or more below the list price)",
    )
    return [price for price in prices if price.kind != "on_demand"] + [own]


def fleet_prices(
    fleet: Fleet, usage, *, currency: str, study: dict | None, study_for_fleet: bool, horizon_months: int
) -> tuple[list[PlanPrice], list[dict[str, str]]]:
    """(prices, missing prices) of a fleet at its own provider, region and instance type."""
    typed_study = study if study_for_fleet else None
    prices = (
        plan_prices(
            gpu=fleet.gpu_model,
            currency=currency,
            study=typed_study,
            providers=(fleet.provider,),
            instance_type=fleet.instance_type,
            region=fleet.region,
        )
        if fleet.instance_type
        else []
    )
    prices = [price for price in prices if _like_for_like(price, fleet, horizon_months)]
    if not fleet.instance_type and typed_study:
        prices = plan_prices(gpu=fleet.gpu_model, currency=currency, study=typed_study, frame=_empty_frame())
    rent = study_rent_price(typed_study, currency) if typed_study else None
    if rent is not None:
        prices = [price for price in prices if price.kind != "on_demand"] + [rent]
    else:
        prices = _bills_rate_if_lower(prices, bills_on_demand_price(fleet, usage, currency))
    missing = []
    kinds = {price.kind for price in prices}
    if "on_demand" not in kinds:
        missing.append(
            {
                "fleet": fleet.key,
                "price": "on_demand",
                "what": f"no on-demand price of {fleet.offer} in the catalog, and no on-demand rows in the bills",
                "how": HOW_TO_GIVE_ON_DEMAND,
            }
        )
    for kind, label in COMMITMENT_KINDS.items():
        if kind not in kinds:
            model = next(
                model for model, term in TERM_OF_MODEL.items() if term == kind and "reserved" in model
            )
            missing.append(
                {
                    "fleet": fleet.key,
                    "price": kind,
                    "what": f"no {label} reserved or savings-plan price of {fleet.offer} (observed or quoted;"
                    " illustrative prices are left out): the option was not evaluated",
                    "how": HOW_TO_GIVE_COMMITMENT.format(model=model),
                }
            )
    return prices, missing


def _empty_frame():
    import pandas as pd

    return pd.DataFrame()


def _like_for_like(price: PlanPrice, fleet: Fleet, horizon_months: int) -> bool:
    """The fleet's own instance type passes by construction, except a marketplace listing over a long plan."""
    from planning.engine.fleets import Offer

    if not price.offer:
        return True
    marketplace = provider_kinds().get(price.offer.split("/", 1)[0]) == "marketplace"
    offer = Offer(fleet.gpu_model, fleet.gpus_per_instance, fleet.need.link, fleet.need.fabric, marketplace)
    return not serves(offer, fleet.need, horizon_months=horizon_months)


def provider_kinds() -> dict[str, str]:
    from pricing.models import Provider

    return dict(Provider.objects.values_list("slug", "kind"))


def owned_fits(fleet: Fleet, gpus_per_server: int, form_factors: dict[str, str]) -> str:
    """ "" when an owned server of ``gpus_per_server`` GPUs of the fleet's model can run its work."""
    from planning.engine.fleets import Offer

    server = Offer(
        fleet.gpu_model,
        float(gpus_per_server),
        link_class(form_factors.get(fleet.gpu_model, ""), gpus_per_server),
        fabric=True,
    )
    return serves(server, fleet.need, horizon_months=0)


def fleet_json(fleet: Fleet) -> dict[str, Any]:
    return {
        "fleet": fleet.key,
        "gpu_model": fleet.gpu_model,
        "provider": fleet.provider,
        "region": fleet.region,
        "instance_type": fleet.instance_type,
        "gpus_per_instance": fleet.gpus_per_instance,
        "link": fleet.need.link,
        "needs_fabric": fleet.need.fabric,
        "most_instances_at_once": fleet.running_together,
        "spend": str((Decimal(fleet.effective_cost_micros) * MICRO).quantize(Decimal("0.01"))),
        "gpu_hours": round(fleet.gpu_hours, 3),
        "need": fleet.need.text(),
    }


def with_fleet(layers: list[dict], fleet: Fleet, prices: list[PlanPrice]) -> list[dict]:
    """Each layer named by what priced it: the fleet, and the instance type, provider and region."""
    by_kind = {price.kind: price for price in prices}
    named = []
    for layer in layers:
        price = by_kind.get(layer["kind"])
        offer = price.offer if price is not None and price.offer else ""
        provider, instance_type, region = (offer.split("/") + ["", "", ""])[:3] if offer else ("", "", "")
        if layer["kind"] == "in_force" or (not offer and layer["kind"] != "owned"):
            # a commitment in force, or a price typed in the study for this fleet: the fleet's own type
            provider, instance_type, region = fleet.provider, fleet.instance_type, fleet.region
        elif layer["kind"] == "owned":  # bought, not rented: the server of the study (or its defaults)
            provider, instance_type, region = "owned", f"{layer['unit_gpus']}x {fleet.gpu_model} server", ""
        named.append(
            layer
            | {"fleet": fleet.key, "provider": provider, "instance_type": instance_type, "region": region}
        )
    return named


def replace_prices_source(prices: list[PlanPrice], fleet: Fleet) -> list[dict]:
    return [replace(price).as_dict() | {"fleet": fleet.key} for price in prices]
