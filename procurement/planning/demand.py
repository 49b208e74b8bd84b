"""GPU demand from history: the hourly series of GPUs in use, its load-duration curve, and growth.

Plain numpy, no ORM (history.py reads the stored rows into UsageRows and UtilizationRows). Time is in
UTC hour indexes: int64 hours since the Unix epoch; a period is [start_hour, end_hour), end exclusive.
Method and defaults (docs/capacity-plan.md, "Demand from history"):

- Billed demand. Each GPU usage row's GPU-hours are spread evenly over the hours of its charge period:
  a row of 48 GPU-hours charged over one day is 2 GPUs in each of its 24 hours; rows that overlap add.
  A bill that is daily or monthly therefore gives the day's or month's mean, not the peak inside it.
  Corrections (negative deltas) spread like any row, so sums over the period stay the bill's.
- Coverage. An hour no row covers is unknown (NaN), not zero demand: an hour is covered when it lies in
  the charge period of a GPU row or of any other row the scope's bill holds (UsageRows.covered_*: a
  month's tax or storage row says the bill covers that month, so its GPU-free hours are 0 GPUs).
- Busy demand. Where utilization rows (hourly means per GPU, 0..1) exist for a resource, the busy series
  is that resource's billed GPUs times the mean utilization of its GPUs in that hour; billed GPU-hours
  without a utilization sample count as busy (nothing says they idled). The plan uses the busy series
  only when the samples cover at least BUSY_COVERAGE_MIN of the billed GPU-hours; else the billed one.
- Growth. A monthly rate r multiplies plan month m (0 = the first month of the plan, which repeats the
  history's level) by (1 + r)^m; a list of yearly multipliers gives year y's multiplier directly. The
  low and high scenarios take DEFAULT_SCENARIO_SPREAD off and on the monthly rate. Uncertainty: a seeded
  Monte Carlo that draws one monthly rate per trial from a normal distribution around the rate.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from procurement.planning.errors import PlanInputError

HOURS_PER_DAY = 24
MIN_PERIOD_HOURS = 7 * HOURS_PER_DAY  # the issue: a period shorter than 7 days is refused
MAX_PERIOD_HOURS = 3 * 366 * HOURS_PER_DAY  # the spend review's longest period (billing/review.py)
MAX_HORIZON_MONTHS = 120  # the issue: a horizon over 120 months is refused
MAX_MONTHLY_GROWTH = 0.5  # the issue: a growth rate outside +-50% a month is refused
MAX_TRIALS = 10_000  # 10,000 trials x 10 years of float64 is 0.8 MB; more only costs time
DEFAULT_TRIALS = 1_000
# The spread of the low and high scenarios and the standard deviation of the trials' monthly rate: one
# percentage point a month. An assumption, not a measurement: a base of 2%/month then spans 1-3% in the
# scenarios and roughly 0-4% (2 sigma) in the trials, i.e. year-3 demand between 1.0x and 4.1x. Shown
# with every plan; a caller that knows better passes its own.
DEFAULT_SCENARIO_SPREAD = 0.01
DEFAULT_GROWTH_SIGMA = 0.01
BUSY_COVERAGE_MIN = 0.95  # the busy series decides only when samples cover 95% of the billed GPU-hours
PERCENTILE_METHOD = "linear"  # numpy's default (Hyndman and Fan type 7), over the covered hours
SERIES = ("auto", "billed", "busy")


@dataclass(frozen=True)
class UsageRows:
    """GPU usage rows of a scope, one element per row in each array (all the same length).

    `start_hour` is the charge period's start floored to its hour, `end_hour` its end rounded up
    (exclusive; a zero-length period counts as its one hour). `pricing_category` is the review's
    (on_demand, spot, committed, other), `interruptible` the review's tag (billing/records.py
    TagMapping.interruptible). `unused_commitment` marks the review's unused-commitment rows: they are
    cost the bills show (for the status quo) but no demand. `effective_cost_micros` is the row's
    effective cost in micro-units of `currency`. `covered_start_hour`/`covered_end_hour` are extra
    intervals the bill covers (other rows of the same bill: storage, tax...); the GPU rows' own
    charge periods are always covered."""

    start_hour: np.ndarray  # int64
    end_hour: np.ndarray  # int64, exclusive
    gpu_hours: np.ndarray  # float64
    interruptible: np.ndarray  # bool
    resource_id: np.ndarray  # object (str, may be "")
    gpu_model: np.ndarray  # object (GPU slug, "" unknown)
    team: np.ndarray  # object (str, may be "")
    pricing_category: np.ndarray  # object (str)
    effective_cost_micros: np.ndarray  # int64, in `currency`
    unused_commitment: np.ndarray  # bool
    currency: str = "USD"
    covered_start_hour: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    covered_end_hour: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))

    def __len__(self) -> int:
        return len(self.start_hour)

    @classmethod
    def of(cls, **columns) -> UsageRows:
        """Rows from lists or arrays (tests, callers): types as the fields say; missing optional columns
        take their defaults (interruptible False, text "", cost 0, unused_commitment False)."""
        count = len(columns["start_hour"])
        text = {"resource_id": "", "gpu_model": "", "team": "", "pricing_category": "on_demand"}
        built = {
            "start_hour": np.asarray(columns.pop("start_hour"), dtype=np.int64),
            "end_hour": np.asarray(columns.pop("end_hour"), dtype=np.int64),
            "gpu_hours": np.asarray(columns.pop("gpu_hours"), dtype=np.float64),
        }
        for name, kind in (
            ("interruptible", bool),
            ("unused_commitment", bool),
            ("effective_cost_micros", np.int64),
        ):
            built[name] = np.asarray(columns.pop(name, np.zeros(count, dtype=kind)), dtype=kind)
        for name, default in text.items():
            built[name] = np.asarray(columns.pop(name, [default] * count), dtype=object)
        for name in ("covered_start_hour", "covered_end_hour"):
            if name in columns:
                built[name] = np.asarray(columns.pop(name), dtype=np.int64)
        return cls(**built, **columns)


@dataclass(frozen=True)
class UtilizationRows:
    """Hourly mean utilization (0..1) per resource and hour; several rows of one (resource, hour), one
    per GPU of the resource, are averaged."""

    resource_id: np.ndarray  # object (str)
    hour: np.ndarray  # int64 hour index (start of the clock hour)
    utilization: np.ndarray  # float64, 0..1

    def __len__(self) -> int:
        return len(self.hour)

    @classmethod
    def of(cls, *, resource_id, hour, utilization) -> UtilizationRows:
        return cls(
            resource_id=np.asarray(resource_id, dtype=object),
            hour=np.asarray(hour, dtype=np.int64),
            utilization=np.asarray(utilization, dtype=np.float64),
        )


@dataclass(frozen=True)
class DemandHistory:
    """GPUs in use per hour of [start_hour, end_hour); NaN where the bill does not cover the hour.

    `billed` is the GPUs the bills charged, `billed_interruptible` the part of it tagged interruptible;
    `busy`/`busy_interruptible` the same times utilization (None without utilization rows). `series_used`
    ("billed" or "busy") is the series the plan takes, `series_reason` why. `utilization_coverage` is the
    share of billed GPU-hours whose resource and hour have a utilization sample (0 without any)."""

    start_hour: int
    end_hour: int
    billed: np.ndarray
    billed_interruptible: np.ndarray
    covered: np.ndarray  # bool
    series_used: str
    series_reason: str
    utilization_coverage: float = 0.0
    busy: np.ndarray | None = None
    busy_interruptible: np.ndarray | None = None

    @property
    def total_hours(self) -> int:
        return self.end_hour - self.start_hour

    @property
    def covered_hours(self) -> int:
        return int(self.covered.sum())

    @property
    def demand(self) -> np.ndarray:
        """GPUs per hour of the series used (NaN where uncovered)."""
        return self.busy if self.series_used == "busy" else self.billed

    @property
    def demand_interruptible(self) -> np.ndarray:
        """The interruptible part of `demand`: what spot may serve."""
        return self.busy_interruptible if self.series_used == "busy" else self.billed_interruptible

    @property
    def demand_steady(self) -> np.ndarray:
        """The part of `demand` that is not interruptible."""
        return self.demand - self.demand_interruptible

    @property
    def gpu_hours(self) -> float:
        """GPU-hours of the series used over the covered hours."""
        return float(np.nansum(self.demand))


@dataclass(frozen=True)
class DemandPercentiles:
    """GPUs in use at percentiles of the covered hours (PERCENTILE_METHOD), the peak and the mean."""

    p10: float
    p50: float
    p90: float
    peak: float
    mean: float

    def as_dict(self) -> dict[str, float]:
        return {"p10": self.p10, "p50": self.p50, "p90": self.p90, "peak": self.peak, "mean": self.mean}


@dataclass(frozen=True)
class DataGaps:
    """Uncovered hours as [start_hour, end_hour) ranges, and the counts."""

    ranges: tuple[tuple[int, int], ...]
    covered_hours: int
    total_hours: int

    @property
    def uncovered_hours(self) -> int:
        return self.total_hours - self.covered_hours

    def as_dict(self) -> dict:
        return {
            "ranges": [list(r) for r in self.ranges],
            "covered_hours": self.covered_hours,
            "uncovered_hours": self.uncovered_hours,
            "total_hours": self.total_hours,
        }


@dataclass(frozen=True)
class GrowthMultipliers:
    """Demand multipliers over a horizon: one per plan month, and one per plan year (the mean of its
    months; a last, partial year averages the months it has)."""

    monthly: np.ndarray  # (horizon_months,)
    yearly: np.ndarray  # (ceil(horizon_months / 12),)


@dataclass(frozen=True)
class StatusQuo:
    """The history's demand bought the way the bills show: effective cost (unused commitments
    included) per GPU-hour used, overall and by pricing category, in `currency` micro-units."""

    currency: str
    gpu_hours: float
    effective_cost_micros: int
    unused_commitment_micros: int
    by_pricing_category: dict[str, dict[str, float]]  # category -> {"gpu_hours", "effective_cost_micros"}

    @property
    def cost_per_gpu_hour(self) -> float | None:
        return self.effective_cost_micros / 1e6 / self.gpu_hours if self.gpu_hours > 0 else None


Growth = float | Sequence[float]


def validate_period(start_hour: int, end_hour: int) -> None:
    """PlanInputError("to") for a period shorter than 7 days or longer than the review's three years."""
    hours = int(end_hour) - int(start_hour)
    if hours < MIN_PERIOD_HOURS:
        raise PlanInputError(
            "to", f"the period must be at least 7 days ({MIN_PERIOD_HOURS} hours), got {hours} hours"
        )
    if hours > MAX_PERIOD_HOURS:
        raise PlanInputError("to", "the period covers at most three years")


def validate_horizon(horizon_months: int) -> int:
    if isinstance(horizon_months, bool) or not isinstance(horizon_months, (int, np.integer)):
        raise PlanInputError("horizon_months", f"must be a whole number of months, got {horizon_months!r}")
    if not 1 <= horizon_months <= MAX_HORIZON_MONTHS:
        raise PlanInputError("horizon_months", f"must be 1-{MAX_HORIZON_MONTHS} months, got {horizon_months}")
    return int(horizon_months)


def validate_growth(growth: Growth, *, horizon_months: int | None = None) -> Growth:
    """A monthly rate within +-MAX_MONTHLY_GROWTH, or yearly multipliers (one per plan year at least,
    each > 0, none implying a monthly rate outside +-50% against the year before, the first against 1)."""
    if isinstance(growth, bool):
        raise PlanInputError("growth", "must be a monthly rate (e.g. 0.02) or a list of yearly multipliers")
    if isinstance(growth, (int, float, np.floating, np.integer)):
        rate = float(growth)
        if not math.isfinite(rate) or abs(rate) > MAX_MONTHLY_GROWTH:
            raise PlanInputError(
                "growth", f"a monthly rate must be within -0.5 and 0.5 (+-50% a month), got {growth}"
            )
        return rate
    try:
        values = [float(v) for v in growth]
    except (TypeError, ValueError):
        raise PlanInputError("growth", "must be a monthly rate or a list of yearly multipliers") from None
    if not values:
        raise PlanInputError("growth", "the list of yearly multipliers is empty")
    if horizon_months is not None and len(values) < _years(horizon_months):
        raise PlanInputError(
            "growth",
            f"{len(values)} yearly multipliers for a {horizon_months}-month horizon ({_years(horizon_months)} years)",
        )
    previous = 1.0
    for year, value in enumerate(values, start=1):
        if not math.isfinite(value) or value <= 0:
            raise PlanInputError(
                "growth", f"year {year}: a multiplier must be a positive number, got {value}"
            )
        if abs((value / previous) ** (1 / 12) - 1) > MAX_MONTHLY_GROWTH:
            raise PlanInputError("growth", f"year {year}: {value} after {previous} is outside +-50% a month")
        previous = value
    return values


def validate_trials(trials: int) -> int:
    if isinstance(trials, bool) or not isinstance(trials, (int, np.integer)) or not 1 <= trials <= MAX_TRIALS:
        raise PlanInputError("trials", f"must be a whole number 1-{MAX_TRIALS}, got {trials!r}")
    return int(trials)


def _years(horizon_months: int) -> int:
    return -(-int(horizon_months) // 12)


def demand_history(
    usage: UsageRows,
    *,
    start_hour: int,
    end_hour: int,
    utilization: UtilizationRows | None = None,
    series: str = "auto",
) -> DemandHistory:
    """The hourly demand of [start_hour, end_hour) (module docstring). `series`: "auto" (busy when the
    utilization samples cover BUSY_COVERAGE_MIN of the billed GPU-hours, else billed), or "billed" /
    "busy" to force one ("busy" needs utilization rows). Raises PlanInputError for a period outside
    7 days - 3 years, or rows holding no GPU-hours in the period (field "from")."""
    raise NotImplementedError


def load_duration_curve(series: np.ndarray) -> np.ndarray:
    """The covered hours' values (NaN dropped) sorted descending: element k is the demand met or
    exceeded in k + 1 hours of the history."""
    raise NotImplementedError


def demand_percentiles(series: np.ndarray) -> DemandPercentiles:
    """P10/P50/P90 over the covered hours by numpy's linear method, the peak and the mean.
    PlanInputError("from") when no hour is covered."""
    raise NotImplementedError


def monthly_gpu_hours(series: np.ndarray, *, start_hour: int) -> list[dict]:
    """GPU-hours per calendar month (UTC) of the covered hours of `series` (hour 0 = start_hour):
    [{"month": "2026-05", "gpu_hours": float, "covered_hours": int, "hours": int}, ...]."""
    raise NotImplementedError


def data_gaps(covered: np.ndarray, *, start_hour: int) -> DataGaps:
    """The runs of uncovered hours as absolute [start_hour, end_hour) ranges, and the counts."""
    raise NotImplementedError


def growth_multipliers(growth: Growth, *, horizon_months: int) -> GrowthMultipliers:
    """Multipliers of the history's demand over the horizon (module docstring): a rate r gives month m
    (1 + r)^m; a list gives each month its year's multiplier."""
    raise NotImplementedError


def scenarios(
    growth: Growth, *, horizon_months: int, spread: float = DEFAULT_SCENARIO_SPREAD
) -> dict[str, GrowthMultipliers]:
    """{"low", "base", "high"}: base is `growth`; low and high take `spread` off and on the monthly
    rate (clipped to +-50%); for yearly multipliers, year y's (0-based) is scaled by (1 -+ spread)^(12 y)."""
    raise NotImplementedError


def growth_trials(
    growth: Growth,
    *,
    horizon_months: int,
    sigma: float = DEFAULT_GROWTH_SIGMA,
    trials: int = DEFAULT_TRIALS,
    seed: int = 0,
) -> np.ndarray:
    """Yearly multipliers per trial, shape (trials, years): each trial draws one monthly rate from
    Normal(rate, sigma), clipped to +-50% a month, held over the horizon (numpy default_rng(seed)). For
    yearly multipliers, each trial scales month m by (1 + e)^m with e ~ Normal(0, sigma), clipped alike."""
    raise NotImplementedError


def status_quo(usage: UsageRows, *, start_hour: int, end_hour: int) -> StatusQuo:
    """What the rows charged in [start_hour, end_hour) cost as billed, with their GPU-hours."""
    raise NotImplementedError
