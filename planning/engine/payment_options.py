"""Commitment payment options (no, partial, all upfront): their cash month by month and their NPV.

A provider sells one commitment term under several payment options (AWS Reserved Instances and Savings
Plans: No Upfront, Partial Upfront, All Upfront; Azure reservations: paid upfront or monthly). The fee
is paid when a term is signed (the month before it runs: month 0 for the first) and the hourly part
every month of the term (``coefficients.commitment_monthly`` / ``one_year_monthly``, the TCO study's
``committed_rent_flows`` rule). Paying upfront buys a lower total with earlier cash, so the choice
depends on the discount rate: an upfront option is the cheaper in present value exactly when the study's
rate is below the rate implied by its saving (the IRR of paying the fee to save on the hourly part,
``tco.irr_annual``). The plan takes the option of lowest NPV; the others are shown beside it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal

import numpy as np

from planning.engine.coefficients import commitment_monthly, one_year_monthly
from planning.engine.options import CommitmentOption
from procurement.costing.tco import irr_annual, present_value

NO_UPFRONT = "no_upfront"


@dataclass(frozen=True)
class PaymentOptionCost:
    """One payment option of a commitment layer: its cash in months 0..(last paid month) and its NPV."""

    option: CommitmentOption
    monthly: tuple[Decimal, ...]
    npv: Decimal
    implied_rate_vs_no_upfront: Decimal | None  # None: this is no upfront, or it never saves

    @property
    def total(self) -> Decimal:
        return sum(self.monthly, Decimal(0))


def layer_flows(
    option: CommitmentOption, gpus_by_year: Sequence[int], *, horizon_months: int, months: int
) -> np.ndarray:
    """The cash of a commitment layer: a 3-year level held for the horizon (its first year's GPUs), or a
    1-year level re-signed each plan year at that year's GPUs."""
    if option.term_months == 36:
        return gpus_by_year[0] * commitment_monthly(option, horizon_months, months)
    return sum(
        (gpus * one_year_monthly(option, year, months) for year, gpus in enumerate(gpus_by_year)),
        np.zeros(months),
    )


def _decimals(flows: np.ndarray) -> list[Decimal]:
    return [Decimal(repr(float(flow))) for flow in flows]


def implied_rate(upfront: CommitmentOption, no_upfront: CommitmentOption) -> Decimal | None:
    """The annual rate at which paying ``upfront``'s fee to save on the hourly part breaks even against
    ``no_upfront`` over one term of one GPU: below it the upfront option is the cheaper in present value.
    None when the fee buys no saving (the flows never change sign)."""
    months = upfront.term_months + 1
    saved = commitment_monthly(no_upfront, upfront.term_months, months) - commitment_monthly(
        upfront, upfront.term_months, months
    )
    return irr_annual(_decimals(saved))


def compare_payment_options(
    options: Sequence[CommitmentOption],
    gpus_by_year: Sequence[int],
    *,
    horizon_months: int,
    months: int,
    discount_rate_annual: Decimal,
) -> list[PaymentOptionCost]:
    """Each payment option of one commitment layer costed at the same GPUs, cheapest NPV first (ties:
    the smaller fee, then the option's name)."""
    no_upfront = next((option for option in options if option.payment_option == NO_UPFRONT), None)
    costed = []
    for option in options:
        flows = _decimals(layer_flows(option, gpus_by_year, horizon_months=horizon_months, months=months))
        rate = None
        if no_upfront is not None and option is not no_upfront and option.upfront_per_gpu:
            rate = implied_rate(option, no_upfront)
        costed.append(
            PaymentOptionCost(option, tuple(flows), present_value(flows, discount_rate_annual), rate)
        )
    return sorted(
        costed,
        key=lambda cost: (cost.npv, cost.option.upfront_per_gpu or 0, cost.option.payment_option),
    )


def cheapest_payment_option(
    options: Sequence[CommitmentOption], *, horizon_months: int, months: int, discount_rate_annual: Decimal
) -> CommitmentOption:
    """The option of lowest NPV per committed GPU. Every layer's cost is its GPUs times the per-GPU cost
    of each term (scaled by the year's price factor and discounted by the same months for every option),
    so the option cheapest for one GPU is the cheapest at any level: choosing first is exact."""
    years = max(1, -(-horizon_months // 12))
    return compare_payment_options(
        options,
        [1] * years,
        horizon_months=horizon_months,
        months=months,
        discount_rate_annual=discount_rate_annual,
    )[0].option
