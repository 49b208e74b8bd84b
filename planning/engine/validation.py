"""Checks of a capacity plan's inputs: shapes, bounds and values, each failure a PlanInputError naming
the field. Every size a request can set is bounded here (samples, GPUs, horizon, trials, growth)."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal

import numpy as np

from planning.engine.coefficients import plan_years
from planning.engine.errors import PlanInputError
from planning.engine.options import SupplyOptions
from planning.engine.plan_model import PlanInputs
from procurement.costing.values import CostInputError, currency_code

MIN_SAMPLES = 168  # a week of hours: the shortest history the issue accepts
MAX_PLAN_MONTHS = 120  # the bound on the horizon
MAX_GPUS = 1_000_000  # a bound on the demand (GPUs in an hour) so one request is bounded work
MAX_SAMPLES = 3 * 8784  # three years of hours (the spend review's longest period)
MAX_TRIALS = 10_000
MAX_MULTIPLIER = 1_000.0  # a year's demand at most 1,000x the history's (+50% a month for 10 years is less)


def _array(value: object, field: str) -> np.ndarray:
    array = np.asarray(value, dtype=np.float64) if isinstance(value, np.ndarray) else None
    if array is None:
        raise PlanInputError(field, f"must be a numpy array of numbers, got {type(value).__name__}")
    if not np.all(np.isfinite(array)):
        raise PlanInputError(
            field, "must hold finite numbers only (an hour with no data is left out, not NaN)"
        )
    return array


def _validate_demand(inputs: PlanInputs) -> tuple[np.ndarray, np.ndarray]:
    firm = _array(inputs.firm_gpus, "firm_gpus")
    interruptible = _array(inputs.interruptible_gpus, "interruptible_gpus")
    for field, series in (("firm_gpus", firm), ("interruptible_gpus", interruptible)):
        if series.ndim != 1:
            raise PlanInputError(
                field, f"must be one-dimensional (one value per sample), got shape {series.shape}"
            )
        if series.size and (series.min() < 0 or series.max() > MAX_GPUS):
            raise PlanInputError(field, f"must be GPUs from 0 to {MAX_GPUS:,} in each sample")
    if firm.size != interruptible.size:
        raise PlanInputError("interruptible_gpus", f"has {interruptible.size} samples, firm_gpus {firm.size}")
    if not MIN_SAMPLES <= firm.size <= MAX_SAMPLES:
        raise PlanInputError(
            "firm_gpus", f"needs {MIN_SAMPLES:,} to {MAX_SAMPLES:,} hourly samples, got {firm.size:,}"
        )
    if (firm + interruptible).max() > MAX_GPUS:
        raise PlanInputError("firm_gpus", f"firm and interruptible GPUs add up to more than {MAX_GPUS:,}")
    return firm, interruptible


def _validate_growth(value: object, years: int, field: str, *, trials: bool = False) -> np.ndarray:
    growth = _array(value, field)
    expected = 2 if trials else 1
    if growth.ndim != expected or growth.shape[-1] != years:
        shape = "(trials, years)" if trials else "(years,)"
        raise PlanInputError(field, f"must have shape {shape} with {years} plan years, got {growth.shape}")
    if growth.size and (growth.min() <= 0 or growth.max() > MAX_MULTIPLIER):
        raise PlanInputError(field, f"multipliers must be above 0 and at most {MAX_MULTIPLIER:,.0f}")
    if trials and not 1 <= growth.shape[0] <= MAX_TRIALS:
        raise PlanInputError(field, f"must hold 1 to {MAX_TRIALS:,} trials, got {growth.shape[0]:,}")
    return growth


def validate_inputs(inputs: PlanInputs, *, headroom: float = 1.0) -> PlanInputs:
    """Check shapes, bounds and values; raises PlanInputError naming the field. Returns the inputs with
    the arrays as float64. ``headroom`` lets the sensitivity grow a valid plan's demand past the bound."""
    horizon = inputs.horizon_months
    if isinstance(horizon, bool) or not isinstance(horizon, int) or not 1 <= horizon <= MAX_PLAN_MONTHS:
        raise PlanInputError(
            "horizon_months", f"must be a whole number of months 1-{MAX_PLAN_MONTHS}, got {horizon!r}"
        )
    firm, interruptible = _validate_demand(inputs)
    years = plan_years(horizon)
    growth = _validate_growth(inputs.growth_by_year, years, "growth")
    if (firm + interruptible).max(initial=0.0) * growth.max() > MAX_GPUS * headroom:
        raise PlanInputError("growth", f"grows the demand past {MAX_GPUS:,} GPUs in an hour")
    trials = None
    if inputs.growth_trials is not None:
        trials = _validate_growth(inputs.growth_trials, years, "trials", trials=True)
    try:
        currency_code(inputs.currency)
    except CostInputError as error:
        raise PlanInputError("currency", error.message) from None
    rate = inputs.discount_rate_annual
    if not isinstance(rate, Decimal) or not rate.is_finite() or not 0 <= rate < 1:
        raise PlanInputError(
            "discount_rate_annual", f"must be a Decimal rate from 0 to below 1, got {rate!r}"
        )
    _validate_options(inputs.options, horizon)
    if inputs.status_quo is not None and inputs.status_quo.gpu_hours <= 0:
        raise PlanInputError("status_quo", "has no GPU-hours to take a rate from")
    return replace(
        inputs, firm_gpus=firm, interruptible_gpus=interruptible, growth_by_year=growth, growth_trials=trials
    )


def _validate_options(options: SupplyOptions, horizon: int) -> None:
    if not isinstance(options, SupplyOptions) or options.on_demand is None:
        raise PlanInputError("options", "must be SupplyOptions with an on-demand price")
    if options.owned is not None and options.owned.horizon_months != horizon:
        raise PlanInputError(
            "study",
            f"the owned option was built for {options.owned.horizon_months} months, the plan has {horizon}",
        )
    if options.owned is not None:
        burst = options.on_demand.price_per_gpu_hour
        if options.spot is not None:
            burst = min(burst, options.spot.effective_price_per_gpu_hour)
        if float(options.owned.variable_per_gpu_hour.max()) > float(burst):
            raise PlanInputError(
                "study",
                "an owned server's running cost per used GPU-hour is above the spot or on-demand price: "
                "the plan assumes owned servers serve any demand they hold",
            )
