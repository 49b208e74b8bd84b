"""The capacity plan: the cheapest layering of owned servers, commitments, on-demand and spot over the
load-duration curve of the demand we had, grown over a horizon (docs/capacity-plan.md, "The plan").

Plain numpy over arrays (no ORM). The engine's inputs are the hourly demand samples (firm and
interruptible GPUs, each sample standing for 8760 / len hours of a representative year), the yearly
growth multipliers, optional growth trials, the supply options (options.py) and the finance terms.

Method, in short (the proofs are in docs/capacity-plan.md):
- Stack. In every hour the prepaid capacity (commitments, then owned servers: lowest running cost
  first) serves the demand from the bottom, firm demand below interruptible; what is above it goes to
  on-demand (firm) or to the cheaper of spot and on-demand (interruptible).
- Screening. Each 1-GPU slice k of the curve, served for H_k GPU-hours a year, costs F + V x H_k under
  each option, summed over the horizon in present value; the cheapest option at each slice gives the
  continuous levels of owned (horizon-long), 3-year (horizon-long) and 1-year (re-chosen each year).
- Rounding. Servers and commitment units are whole: the floor/ceil neighbours of the continuous levels
  are costed exactly (the stack above, month by month, 1-year levels re-optimized for each), then the
  search walks to a better neighbour until none is; tests enumerate every integer mix to prove it.
- Multi-year. Owned servers are bought at month 0 and held for the horizon (the TCO study's model);
  3-year commitments start at month 1 at one level, renewed at each term's end; 1-year commitments are
  re-chosen at the start of each plan year. A term that runs past the horizon is charged in full (its
  months after the horizon are booked in the last year): nothing is pro-rated away.
- Decision on NPV at the study's discount rate (the TCO verdict's basis); totals are cash.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from procurement.planning.plan_model import (
    CapacityPlan,
    Layer,
    PlanInputs,
    ScreeningLine,
    SensitivityRow,
    StatusQuoCategory,
    StatusQuoMix,
)

__all__ = [
    "CapacityPlan",
    "Layer",
    "PlanInputs",
    "ScreeningLine",
    "SensitivityRow",
    "StatusQuoCategory",
    "StatusQuoMix",
    "capacity_plan",
    "plan_report",
    "validate_inputs",
]


def validate_inputs(inputs: PlanInputs) -> PlanInputs:
    """Check shapes, bounds and values; raises PlanInputError naming the field. Returns the inputs
    with the arrays as float64."""
    raise NotImplementedError


def capacity_plan(inputs: PlanInputs, *, with_sensitivity: bool = True) -> CapacityPlan:
    """The cheapest plan for the inputs (see the module docstring), with its cost by year and layer,
    NPV, P50/P90 over the growth trials, the status quo and its break-even month, and (unless
    ``with_sensitivity`` is False) the sensitivity rows. Raises PlanInputError naming the field."""
    raise NotImplementedError


def plan_report(plan: CapacityPlan) -> dict[str, Any]:
    """The JSON contract: layers [{kind, gpu_model, gpus, hours_served, cost_by_year[], share_of_demand,
    ...}], total_cost, npv, p50_total_cost, p90_total_cost, status_quo_cost, savings_vs_status_quo,
    break_even_month, sensitivity, screening, assumptions, currency. Money as Decimal strings rounded
    to the currency's minor unit, hourly prices with 6 decimals, shares as 6-decimal fractions."""
    raise NotImplementedError


def layer_kinds() -> Sequence[str]:
    """The layer kinds in stack order, base first as a chart shades them."""
    return ("committed_3y", "committed_1y", "owned", "spot", "on_demand")
