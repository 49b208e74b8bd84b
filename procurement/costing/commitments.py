"""Reserved instances and savings plans: effective hourly price, break-even utilization, cheapest mix.

A commitment is paid for every hour of its term whether used or not, so it only pays when the
capacity is busy often enough. Formulas (docs/cost-model.md, "Commitments"):
    effective hourly   = recurring per hour + upfront / (term years x 8760)
    discount           = 1 - effective / on-demand
    break-even util u* = 1 - discount = effective / on-demand
For a demand profile (GPUs needed per period) we commit to the level that minimizes the total and
buy the rest on demand (or spot, when allowed). Committing to the floor of the profile is never
worse than no commitment when u* <= 1; committing above the floor pays while the share of periods
that use the extra GPU is at least u* (the newsvendor rule), so the optimum is searched, not assumed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

import numpy as np

from procurement.costing.values import (
    HOURS_PER_YEAR,
    CostInputError,
    currency_code,
    non_negative,
    positive,
    positive_int,
    round_money,
    round_price,
)


def effective_hourly(*, recurring_per_hour: Decimal, upfront: Decimal, term_years: int) -> Decimal:
    """What a commitment costs per hour of its term: 1y = 8760 h, 3y = 26280 h."""
    non_negative(recurring_per_hour, "recurring_per_hour")
    non_negative(upfront, "upfront")
    positive_int(term_years, "term_years")
    return recurring_per_hour + upfront / (term_years * HOURS_PER_YEAR)


def discount_against(*, effective_per_hour: Decimal, on_demand_per_hour: Decimal) -> Decimal:
    positive(on_demand_per_hour, "on_demand_per_hour")
    return 1 - effective_per_hour / on_demand_per_hour


def break_even_utilization(*, effective_per_hour: Decimal, on_demand_per_hour: Decimal) -> Decimal:
    """u* = 1 - discount. Above 1 means the commitment never beats on-demand, even fully used."""
    return 1 - discount_against(effective_per_hour=effective_per_hour, on_demand_per_hour=on_demand_per_hour)


@dataclass(frozen=True)
class CommitmentMix:
    committed_gpus: int
    committed_cost: Decimal
    burst_cost: Decimal
    all_burst_cost: Decimal  # the same demand with no commitment at all
    floor_gpus: int
    floor_total: Decimal  # committing exactly to the profile's floor

    @property
    def total(self) -> Decimal:
        return self.committed_cost + self.burst_cost

    @property
    def savings(self) -> Decimal:
        return self.all_burst_cost - self.total


def cheapest_commitment_mix(
    *,
    demand_gpus: Sequence[int],
    period_hours: Decimal,
    committed_per_gpu_hour: Decimal,
    on_demand_per_gpu_hour: Decimal,
    spot_per_gpu_hour: Decimal | None = None,
) -> CommitmentMix:
    """Commit to k GPUs for the whole profile, buy demand above k at the cheaper of on-demand and
    (effective) spot; k runs over every level from 0 to the peak and the cheapest wins (ties: fewer)."""
    demand = _demand_array(demand_gpus)
    positive(period_hours, "period_hours")
    burst_price = _burst_price(on_demand_per_gpu_hour, spot_per_gpu_hour)
    committed = non_negative(committed_per_gpu_hour, "committed_per_gpu_hour")
    totals = [
        _mix_cost(demand, level, period_hours, committed, burst_price) for level in range(demand.max() + 1)
    ]
    best = min(range(len(totals)), key=lambda level: (sum(totals[level]), level))
    floor = int(demand.min())
    return CommitmentMix(
        committed_gpus=best,
        committed_cost=totals[best][0],
        burst_cost=totals[best][1],
        all_burst_cost=sum(totals[0], Decimal(0)),
        floor_gpus=floor,
        floor_total=sum(totals[floor], Decimal(0)),
    )


def _mix_cost(
    demand: np.ndarray, level: int, period_hours: Decimal, committed: Decimal, burst: Decimal
) -> tuple[Decimal, Decimal]:
    committed_cost = level * period_hours * demand.size * committed
    burst_gpu_periods = int(np.maximum(demand - level, 0).sum())
    return committed_cost, burst_gpu_periods * period_hours * burst


def _burst_price(on_demand: Decimal, spot: Decimal | None) -> Decimal:
    on_demand = positive(on_demand, "on_demand_per_gpu_hour")
    if spot is None:
        return on_demand
    return min(on_demand, non_negative(spot, "spot_per_gpu_hour"))


def _demand_array(demand_gpus: Sequence[int]) -> np.ndarray:
    if len(demand_gpus) == 0:
        raise CostInputError("demand_gpus", "needs at least one period")
    for index, gpus in enumerate(demand_gpus):
        if isinstance(gpus, bool) or not isinstance(gpus, (int, np.integer)) or gpus < 0:
            raise CostInputError(
                f"demand_gpus[{index}]", f"must be a whole number of GPUs >= 0, got {gpus!r}"
            )
    return np.asarray(demand_gpus, dtype=np.int64)


def commitment_report(
    *,
    on_demand_per_gpu_hour: Decimal,
    committed_per_gpu_hour: Decimal,
    demand_gpus: Sequence[int],
    period_hours: Decimal,
    currency: str,
    spot_per_gpu_hour: Decimal | None = None,
) -> dict[str, object]:
    """The finance view of a commitment against a demand profile: discount, break-even utilization, the
    cheapest committed level, the floor, and the all-on-demand baseline; money rounded to the minor unit."""
    currency = currency_code(currency)
    mix = cheapest_commitment_mix(
        demand_gpus=demand_gpus,
        period_hours=period_hours,
        committed_per_gpu_hour=committed_per_gpu_hour,
        on_demand_per_gpu_hour=on_demand_per_gpu_hour,
        spot_per_gpu_hour=spot_per_gpu_hour,
    )
    demand = _demand_array(demand_gpus)
    burst = _burst_price(on_demand_per_gpu_hour, spot_per_gpu_hour)

    def money(amount: Decimal) -> str:
        return str(round_money(amount, currency))

    used = Decimal(int(np.minimum(demand, mix.committed_gpus).sum()))
    committed_hours = Decimal(mix.committed_gpus * demand.size)
    return {
        "currency": currency,
        "on_demand_per_gpu_hour": str(round_price(on_demand_per_gpu_hour)),
        "committed_per_gpu_hour": str(round_price(committed_per_gpu_hour)),
        "discount": str(
            _ratio(
                discount_against(
                    effective_per_hour=committed_per_gpu_hour, on_demand_per_hour=on_demand_per_gpu_hour
                )
            )
        ),
        "break_even_utilization": str(
            _ratio(
                break_even_utilization(
                    effective_per_hour=committed_per_gpu_hour, on_demand_per_hour=on_demand_per_gpu_hour
                )
            )
        ),
        "burst_price_per_gpu_hour": str(round_price(burst)),
        "burst_pricing": "spot" if burst < on_demand_per_gpu_hour else "on_demand",
        "profile": {
            "periods": int(demand.size),
            "period_hours": str(period_hours),
            "floor_gpus": mix.floor_gpus,
            "peak_gpus": int(demand.max()),
            "gpu_hours": str(int(demand.sum()) * period_hours),
        },
        "cheapest": {
            "committed_gpus": mix.committed_gpus,
            "committed_cost": money(mix.committed_cost),
            "burst_cost": money(mix.burst_cost),
            "total": money(mix.total),
            "savings": money(mix.savings),
            "committed_utilization": str(_ratio(used / committed_hours)) if committed_hours else None,
        },
        "floor": {"committed_gpus": mix.floor_gpus, "total": money(mix.floor_total)},
        "all_on_demand": money(mix.all_burst_cost),
        "advice": _advice(mix, currency),
    }


def _ratio(value: Decimal) -> Decimal:
    return value.quantize(Decimal("0.000001"), rounding=ROUND_HALF_UP)


def _advice(mix: CommitmentMix, currency: str) -> str:
    total, baseline = round_money(mix.total, currency), round_money(mix.all_burst_cost, currency)
    if mix.committed_gpus == 0:
        return f"do not commit: every level costs more than the {baseline} {currency} of buying as used"
    side = "above" if mix.committed_gpus > mix.floor_gpus else "below"
    where = (
        "the profile's floor"
        if mix.committed_gpus == mix.floor_gpus
        else f"{side} the floor of {mix.floor_gpus}"
    )
    return (
        f"commit to {mix.committed_gpus} GPUs ({where}) and buy the rest as used: {total} {currency} "
        f"against {baseline} {currency} with no commitment, {round_money(mix.savings, currency)} less"
    )
