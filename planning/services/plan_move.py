"""The "move provider" scenario of a capacity plan (docs/capacity-plan.md, "Whose prices"): each fleet
planned again over like-for-like offers of *other* providers only (planning/fleets.serves: same GPU
model, at least the GPUs per instance, the same link class, a cluster fabric where the fleet needs one,
no marketplace listing for a plan of 12 months or more, at least 90% of the host memory per GPU of the
bills' instance type where the catalog knows it), with the migration's costs added as stated
assumptions. A separate, labelled result: never the default headline.

Migration assumptions (each shown with its source; the request's ``migration`` overrides them):
- data egress: ``egress_gb`` (default: none known; the bills' storage rows give no volume, so it is 0
  and said) x ``egress_per_gb`` 0.09 USD, AWS's first internet-egress tier (Data Transfer OUT from EC2 to
  the internet, first 10 TB a month: aws.amazon.com/ec2/pricing/on-demand/);
- engineering: ``engineer_months`` 2 per fleet moved (a gpuledger assumption: porting images, storage,
  networking and schedulers) x ``fte_cost_per_year`` / 12, the TCO study's 150,000 USD a year
  (tco_spec.BUY_USD_DEFAULTS fte_cost_per_year).
Both are paid in month 0 of the move.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from planning.engine.errors import PlanInputError
from planning.engine.fleets import Fleet, Offer, has_fabric, link_class, serves
from planning.services.plan_prices import plan_prices
from pricing.selectors import offer_frame
from procurement.services.currency import usd_conversion

# An offer's host memory per GPU must be at least this share of the bills' instance type's: hosts of one
# GPU generation differ by a few percent (GCP a3-highgpu-8g 1,872 GiB against AWS p5.48xlarge's 2,048 for
# 8 H100s: 91%); a 4 GB VM against a 32 GB-per-GPU host is another machine. A gpuledger assumption.
MEMORY_SHARE_MIN = 0.9
MIGRATION_DEFAULTS = {
    "egress_gb": Decimal(0),
    "egress_per_gb": Decimal("0.09"),
    "engineer_months": Decimal(2),
    "fte_cost_per_year": Decimal(150_000),
}
MIGRATION_SOURCES = {
    "egress_gb": "not in the bills (their storage rows give no volume): give migration.egress_gb",
    "egress_per_gb": "AWS Data Transfer OUT from EC2 to the internet, first 10 TB a month (aws.amazon.com/ec2/pricing/on-demand/), USD",
    "engineer_months": "gpuledger assumption: porting images, storage, networking and schedulers, per fleet moved",
    "fte_cost_per_year": "tco_spec.BUY_USD_DEFAULTS fte_cost_per_year (the TCO study's default), USD",
}


def migration_terms(given: object) -> dict[str, Decimal]:
    """The request's ``migration`` over the defaults; PlanInputError naming the bad field."""
    if given is None:
        given = {}
    if not isinstance(given, dict):
        raise PlanInputError(
            "migration", "must be an object of egress_gb, egress_per_gb, engineer_months, fte_cost_per_year"
        )
    terms = dict(MIGRATION_DEFAULTS)
    for key, value in given.items():
        if key not in MIGRATION_DEFAULTS:
            raise PlanInputError(
                f"migration.{key}", f"unknown field; the fields are {', '.join(MIGRATION_DEFAULTS)}"
            )
        try:
            number = Decimal(str(value))
        except ArithmeticError:
            raise PlanInputError(f"migration.{key}", f"must be a number, got {str(value)[:20]!r}") from None
        if not number.is_finite() or number < 0 or number > Decimal(10) ** 12:
            raise PlanInputError(f"migration.{key}", f"must be 0 or more, got {value!r}")
        terms[key] = number
    return terms


def like_for_like_frame(
    fleet: Fleet, *, form_factors: dict[str, str], provider_kinds: dict[str, str], horizon_months: int
):
    """The catalog's current offers of the fleet's GPU model at other providers that can run its work."""
    frame = offer_frame(offer__instance_type__gpu__slug=fleet.gpu_model)
    if frame.empty:
        return frame
    # the host memory per GPU the bills' instance type has (the catalog's), when known: a 1-GPU VM with
    # 4 GB of RAM does not run what a 32 GB-per-GPU host ran
    own = frame[(frame["provider"] == fleet.provider) & (frame["instance_type"] == fleet.instance_type)]
    own_memory = (own["memory_gib_float"] / own["gpu_count_float"]).max() if not own.empty else float("nan")
    keep = []
    for row in frame.itertuples():
        memory = (
            float(row.memory_gib_float) / float(row.gpu_count_float) if row.gpu_count_float else float("nan")
        )
        if own_memory == own_memory and not memory >= own_memory * MEMORY_SHARE_MIN:
            keep.append(False)
            continue
        count = float(row.gpu_count_float)
        offer = Offer(
            row.gpu,
            count,
            link_class(form_factors.get(row.gpu, ""), count),
            has_fabric(row.instance_type),
            provider_kinds.get(row.provider) == "marketplace",
        )
        keep.append(
            row.provider != fleet.provider and not serves(offer, fleet.need, horizon_months=horizon_months)
        )
    return frame[keep]


def move_prices(fleet: Fleet, *, currency: str, form_factors, provider_kinds, horizon_months: int):
    frame = like_for_like_frame(
        fleet, form_factors=form_factors, provider_kinds=provider_kinds, horizon_months=horizon_months
    )
    if frame.empty:
        return []
    return plan_prices(gpu=fleet.gpu_model, currency=currency, study=None, frame=frame)


def migration_cost(
    terms: dict[str, Decimal], *, fleets_moved: int, currency: str
) -> tuple[Decimal, list[dict]]:
    """(one-off cost in the plan's currency, the assumptions that priced it)."""
    rate = usd_conversion(currency).rate
    egress = terms["egress_gb"] * terms["egress_per_gb"] * rate
    engineering = terms["engineer_months"] * fleets_moved * terms["fte_cost_per_year"] / 12 * rate
    items = [
        {"name": f"migration.{key}", "value": str(value), "source": MIGRATION_SOURCES[key]}
        for key, value in terms.items()
    ]
    items.append(
        {
            "name": "migration cost",
            "value": f"egress {egress:.2f} + engineering {engineering:.2f} {currency}",
            "source": f"paid in month 0; {fleets_moved} fleet(s) moved",
        }
    )
    return (egress + engineering).quantize(Decimal("0.01")), items


def move_scenario(
    moved: list[tuple[Fleet, dict, list]], *, kept: list[str], terms, currency: str, combine
) -> dict[str, Any]:
    """The scenario's result: its own headline (the fleets' plans at other providers' offers summed, plus
    the migration), never mixed into the default headline."""
    plans = [plan for _, plan, _ in moved]
    if not plans:
        return {
            "label": "move provider (scenario, not the recommendation)",
            "fleets_moved": [],
            "fleets_not_moved": kept,
            "note": "no like-for-like offer of another provider for any fleet",
        }
    head = combine(plans)
    cost, items = migration_cost(terms, fleets_moved=len(plans), currency=currency)
    total = Decimal(head["total_cost"]) + cost
    quo = Decimal(head["status_quo_cost"]) if head.get("status_quo_cost") else None
    return {
        "label": "move provider (scenario, not the recommendation)",
        "fleets_moved": [
            {
                "fleet": fleet.key,
                "priced_at": sorted({p["offer"] for p in prices if p.get("offer")}),
                "total_cost": plan["total_cost"],
            }
            for fleet, plan, prices in moved
        ],
        "fleets_not_moved": kept,
        "plans_total_cost": head["total_cost"],
        "migration_cost": str(cost),
        "total_cost": str(total),
        "status_quo_cost": head.get("status_quo_cost"),
        "savings_vs_status_quo": str(quo - total) if quo is not None else None,
        "layers": head["layers"],
        "assumptions": items,
    }
