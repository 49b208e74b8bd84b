"""Price a commitment against a demand profile from typed prices or a stored commitment price.

The command (`manage.py commitments`) and the API (`POST /api/commitments/`) both call
`commitment_analysis`. The commitment price comes from, in this order:
- `commitment_price`: a stored price by its id (the `price_id` the offer page, the spend review and this
  report show);
- `offer`: an offer id (the number in /offers/<id>/): the cheapest current commitment of that offer
  matching `term_years`, `payment_option` and `commitment_kind` where given;
- `instance_type` and `region` (and `provider`): the cheapest current commitment of that instance type
  there, matching the same filters (illustrative prices are never picked this way);
- else the typed `reserved_effective`, or `reserved_recurring` + `reserved_upfront` over `term_years`.
A stored price is per instance-hour; the engine works per GPU-hour, so it is divided by the instance's
GPU count (and the demand profile counts GPUs). The on-demand price is the typed `on_demand` where
given, else the offer's current on-demand price. The report says which prices were used under
`prices_used`: id, source, observation date and quality.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from pricing.commitment_prices import (
    COMMITMENT_KINDS,
    PAYMENT_OPTIONS,
    StoredPrice,
    cheapest_commitment_price,
    current_on_demand_price,
    stored_price,
)
from pricing.fx import fx_rates
from procurement.costing.commitments import commitment_report, effective_hourly
from procurement.costing.values import CostInputError, non_negative, positive, to_decimal

MAX_PERIODS = 3 * 366  # a profile covers at most three years of days
MAX_GPUS = 100_000  # GPUs in one period: the engine tries every level up to the peak


@dataclass(frozen=True)
class CommitmentInputs:
    utilization_profile: list[int]
    period_hours: object = "730"
    on_demand: object = None
    reserved_effective: object = None
    reserved_recurring: object = None
    reserved_upfront: object = None
    term_years: object = None
    spot: object = None
    currency: str = ""
    offer: int | None = None
    commitment_price: int | None = None
    instance_type: str = ""
    region: str = ""
    provider: str = ""
    payment_option: str = ""
    commitment_kind: str = ""

    @property
    def uses_stored_price(self) -> bool:
        return bool(self.commitment_price is not None or self.offer is not None or self.instance_type)


def commitment_analysis(inputs: CommitmentInputs) -> dict:
    """The commitments engine's report, plus `prices_used` naming each stored price it read."""
    demand = demand_profile(inputs.utilization_profile)
    spot = None if inputs.spot is None else non_negative(inputs.spot, "spot_per_gpu_hour")
    if not inputs.uses_stored_price:
        report = commitment_report(
            on_demand_per_gpu_hour=_typed_on_demand(inputs),
            committed_per_gpu_hour=typed_committed(inputs),
            demand_gpus=demand,
            period_hours=positive(inputs.period_hours, "period_hours"),
            currency=inputs.currency or "USD",
            spot_per_gpu_hour=spot,
        )
        return report | {"prices_used": {"commitment": "typed", "on_demand": "typed"}}
    _refuse_typed_commitment(inputs)
    commitment = _stored_commitment(inputs)
    currency = inputs.currency or commitment.currency
    committed = _in_currency(
        commitment.effective_per_gpu_hour, commitment.currency, currency, "commitment_price"
    )
    on_demand, on_demand_used = _on_demand(inputs, commitment, currency)
    report = commitment_report(
        on_demand_per_gpu_hour=on_demand,
        committed_per_gpu_hour=committed,
        demand_gpus=demand,
        period_hours=positive(inputs.period_hours, "period_hours"),
        currency=currency,
        spot_per_gpu_hour=spot,
    )
    used = {
        "commitment": commitment.describe(),
        "on_demand": on_demand_used,
        "per_gpu": f"stored prices are per instance-hour, divided by the {commitment.gpu_count} GPUs of "
        f"{commitment.instance_type}; the profile counts GPUs",
    }
    return report | {"prices_used": used}


def demand_profile(values: object) -> list[int]:
    """GPUs per period, each a whole number >= 0; at most MAX_PERIODS periods of at most MAX_GPUS."""
    if isinstance(values, str):
        values = values.split(",")
    if not isinstance(values, (list, tuple)) or not values:
        raise CostInputError("demand_gpus", "needs at least one period, e.g. 2,2,4,4")
    if len(values) > MAX_PERIODS:
        raise CostInputError("demand_gpus", f"has {len(values)} periods (at most {MAX_PERIODS})")
    demand = []
    for index, value in enumerate(values):
        number = to_decimal(value, f"demand_gpus[{index}]")
        if number < 0 or number != number.to_integral_value():
            raise CostInputError(
                f"demand_gpus[{index}]", f"must be a whole number of GPUs >= 0, got {value!r}"
            )
        if number > MAX_GPUS:
            raise CostInputError(f"demand_gpus[{index}]", f"must be at most {MAX_GPUS} GPUs, got {value!r}")
        demand.append(int(number))
    return demand


def typed_committed(inputs: CommitmentInputs) -> Decimal:
    parts = (inputs.reserved_recurring, inputs.reserved_upfront, inputs.term_years)
    if inputs.reserved_effective is not None:
        if any(part is not None for part in parts):
            raise CostInputError(
                "committed_per_gpu_hour", "give either the effective price or recurring/upfront/term"
            )
        return non_negative(inputs.reserved_effective, "committed_per_gpu_hour")
    if any(part is None for part in parts):
        raise CostInputError(
            "committed_per_gpu_hour",
            "is required (or all of --reserved-recurring, --reserved-upfront and --term-years, "
            "or a stored price: --offer, --commitment-price or --instance-type with --region)",
        )
    return effective_hourly(
        recurring_per_hour=to_decimal(parts[0], "recurring_per_hour"),
        upfront=to_decimal(parts[1], "upfront"),
        term_years=term_years(parts[2]),
    )


def term_years(value: object) -> int:
    years = to_decimal(value, "term_years")
    if years not in (1, 3):
        raise CostInputError("term_years", f"must be 1 or 3, got {value}")
    return int(years)


def _typed_on_demand(inputs: CommitmentInputs) -> Decimal:
    if inputs.on_demand is None:
        raise CostInputError("on_demand_per_gpu_hour", "is required with typed commitment prices")
    return positive(inputs.on_demand, "on_demand_per_gpu_hour")


def _refuse_typed_commitment(inputs: CommitmentInputs) -> None:
    typed = (inputs.reserved_effective, inputs.reserved_recurring, inputs.reserved_upfront)
    if any(value is not None for value in typed):
        raise CostInputError(
            "committed_per_gpu_hour",
            "give either a stored price (offer, commitment price, instance type) "
            "or typed commitment prices, not both",
        )
    for value, allowed, field in (
        (inputs.payment_option, PAYMENT_OPTIONS, "payment_option"),
        (inputs.commitment_kind, COMMITMENT_KINDS, "commitment_kind"),
    ):
        if value and value not in allowed:
            raise CostInputError(field, f"must be one of {', '.join(allowed)}, got {value!r}")


def _stored_commitment(inputs: CommitmentInputs) -> StoredPrice:
    if inputs.commitment_price is not None:
        price = stored_price(inputs.commitment_price)
        if price is None or price.term_years is None:
            raise CostInputError("commitment_price", f"no stored commitment price {inputs.commitment_price}")
        return price
    years = None if inputs.term_years is None else term_years(inputs.term_years)
    wanted = {
        "term_years": years,
        "payment_option": inputs.payment_option,
        "commitment_kind": inputs.commitment_kind,
    }
    if inputs.offer is not None:
        price = cheapest_commitment_price(instance_type="", region="", offer_id=inputs.offer, **wanted)
        field, where = "offer", f"offer {inputs.offer}"
    else:
        if not inputs.region:
            raise CostInputError("region", "is required with instance_type")
        price = cheapest_commitment_price(
            instance_type=inputs.instance_type, region=inputs.region, provider=inputs.provider, **wanted
        )
        field, where = "instance_type", f"{inputs.instance_type} in {inputs.region}"
    if price is None:
        terms = ", ".join(f"{k} {v}" for k, v in wanted.items() if v)
        raise CostInputError(
            field, f"no current commitment price stored for {where}{' with ' + terms if terms else ''}"
        )
    return price


def _on_demand(inputs: CommitmentInputs, commitment: StoredPrice, currency: str) -> tuple[Decimal, object]:
    if inputs.on_demand is not None:
        return positive(inputs.on_demand, "on_demand_per_gpu_hour"), "typed"
    price = current_on_demand_price(commitment.offer_id)
    if price is None:
        raise CostInputError(
            "on_demand_per_gpu_hour",
            f"no current on-demand price stored for offer {commitment.offer_id}; type it with --on-demand",
        )
    per_gpu = _in_currency(price.effective_per_gpu_hour, price.currency, currency, "on_demand_per_gpu_hour")
    return per_gpu, price.describe()


def _in_currency(amount: Decimal, source: str, target: str, field: str) -> Decimal:
    """`amount` in `source` as `target` through the stored USD rates (units of USD per unit)."""
    if source == target:
        return amount
    rates = fx_rates(base="USD")
    if source not in rates or target not in rates:
        missing = source if source not in rates else target
        raise CostInputError(field, f"no stored FX rate for {missing} to convert {source} into {target}")
    return amount * rates[source] / rates[target]
