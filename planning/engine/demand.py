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

import datetime as dt
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Final

import numpy as np
import pandas as pd

from planning.engine.errors import PlanInputError

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
PERCENTILE_METHOD: Final = "linear"  # numpy's default (Hyndman and Fan type 7), over the covered hours
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
    charge periods are always covered. `provider`, when read, is each row's provider slug as the bills
    give it (so a plan can say when the offers it priced are another provider's)."""

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
    provider: np.ndarray | None = None  # object (the bill's provider slug, "aws"); None: not read
    # What each row ran on, for like-for-like planning (planning/fleets.py); None: not read
    instance_type: np.ndarray | None = None  # object ("p5.48xlarge", "" unknown)
    region: np.ndarray | None = None  # object
    gpus_per_instance: np.ndarray | None = None  # float64, NaN unknown
    commitment_id: np.ndarray | None = None  # object (the bill's CommitmentDiscountId, "" none)
    commitment_end_hour: np.ndarray | None = None  # int64 hour index of the term's end, -1 unknown

    def __len__(self) -> int:
        return len(self.start_hour)

    @classmethod
    def of(cls, **columns: Any) -> UsageRows:
        """Rows from lists or arrays (tests, callers): types as the fields say; missing optional columns
        take their defaults (interruptible False, text "", cost 0, unused_commitment False)."""
        count = len(columns["start_hour"])
        text = {"resource_id": "", "gpu_model": "", "team": "", "pricing_category": "on_demand"}
        built: dict[str, np.ndarray] = {
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
        for name in ("provider", "instance_type", "region", "commitment_id"):
            if columns.get(name) is not None:
                built[name] = np.asarray(columns.pop(name), dtype=object)
        if columns.get("gpus_per_instance") is not None:
            built["gpus_per_instance"] = np.asarray(columns.pop("gpus_per_instance"), dtype=np.float64)
        if columns.get("commitment_end_hour") is not None:
            built["commitment_end_hour"] = np.asarray(columns.pop("commitment_end_hour"), dtype=np.int64)
        return cls(**built, currency=columns.pop("currency", "USD"), **columns)


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
        return self._busy_part(self.busy) if self.series_used == "busy" else self.billed

    @property
    def demand_interruptible(self) -> np.ndarray:
        """The interruptible part of `demand`: what spot may serve."""
        if self.series_used == "busy":
            return self._busy_part(self.busy_interruptible)
        return self.billed_interruptible

    @staticmethod
    def _busy_part(series: np.ndarray | None) -> np.ndarray:
        if series is None:  # demand_history sets series_used "busy" only with utilization rows
            raise ValueError("series_used is 'busy' but the history has no busy series")
        return series

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
    # One-off corrections left out of the cost above (status_quo's docstring): their sum and count
    one_off_correction_micros: int = 0
    one_off_corrections: int = 0

    @property
    def cost_per_gpu_hour(self) -> float | None:
        return self.effective_cost_micros / 1e6 / self.gpu_hours if self.gpu_hours > 0 else None


Growth = float | Sequence[float]


def hour_index(day: dt.date) -> int:
    """The hour index of a date's midnight, UTC."""
    return int(dt.datetime.combine(day, dt.time(), tzinfo=dt.UTC).timestamp()) // 3600


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
    if isinstance(growth, (bool, str, bytes)):
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
    start_hour, end_hour = int(start_hour), int(end_hour)
    validate_period(start_hour, end_hour)
    if series not in SERIES:
        raise PlanInputError("series", f"must be one of {', '.join(SERIES)}, got {series!r}")
    hours = end_hour - start_hour
    demand_rows = ~usage.unused_commitment
    starts, ends, rates = _spread_rates(usage, demand_rows)
    first, past = _clipped(starts, ends, start_hour, end_hour)
    billed = _spread(first, past, rates, hours)
    billed_interruptible = _spread(first, past, rates * usage.interruptible[demand_rows], hours)
    covered = _covered(usage, start_hour, end_hour)
    if not np.any(covered & (billed != 0)):
        raise PlanInputError("from", "the scope holds no GPU usage rows in the period")
    billed[~covered] = np.nan
    billed_interruptible[~covered] = np.nan
    history = partial(
        DemandHistory,
        start_hour=start_hour,
        end_hour=end_hour,
        billed=billed,
        covered=covered,
        billed_interruptible=billed_interruptible,
    )
    if utilization is None or len(utilization) == 0:
        if series == "busy":
            raise PlanInputError(
                "series", "the busy series needs utilization rows; none are stored for the scope"
            )
        reason = "no utilization rows for the scope's resources: GPUs as billed"
        return history(series_used="billed", series_reason=reason)
    busy, busy_interruptible, coverage = _busy(usage, demand_rows, rates, utilization, start_hour, end_hour)
    busy[~covered] = np.nan
    busy_interruptible[~covered] = np.nan
    used, reason = _series_choice(series, coverage)
    return history(
        series_used=used,
        series_reason=reason,
        utilization_coverage=coverage,
        busy=busy,
        busy_interruptible=busy_interruptible,
    )


def _series_choice(series: str, coverage: float) -> tuple[str, str]:
    share = f"utilization samples cover {coverage:.0%} of the billed GPU-hours"
    if series == "billed":
        return "billed", f"billed series asked for ({share})"
    if series == "busy":
        return "busy", f"busy series asked for ({share}; GPU-hours without a sample count as busy)"
    if coverage >= BUSY_COVERAGE_MIN:
        return "busy", f"{share} (at least {BUSY_COVERAGE_MIN:.0%}): GPUs x utilization"
    return "billed", f"{share}, under the {BUSY_COVERAGE_MIN:.0%} the busy series needs: GPUs as billed"


def _spread_rates(usage: UsageRows, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(start, end, GPUs per hour) of `rows`: each row's GPU-hours over its whole charge period."""
    starts, ends = usage.start_hour[rows], usage.end_hour[rows]
    ends = np.maximum(ends, starts + 1)  # a zero-length charge period is its one hour
    return starts, ends, usage.gpu_hours[rows] / (ends - starts)


def _clipped(starts: np.ndarray, ends: np.ndarray, start_hour: int, end_hour: int):
    """Row periods as offsets into [0, hours]; a row outside the period gets an empty range."""
    first = np.clip(starts - start_hour, 0, end_hour - start_hour)
    past = np.clip(ends - start_hour, 0, end_hour - start_hour)
    return first, np.maximum(past, first)


def _spread(first: np.ndarray, past: np.ndarray, rates: np.ndarray, hours: int) -> np.ndarray:
    """Sum of each row's rate over its hours [first, past): a difference array (+rate at the first
    hour, -rate past the last), then its running sum; one pass over the rows, none per hour."""
    steps = np.bincount(first, weights=rates, minlength=hours + 1)
    steps -= np.bincount(past, weights=rates, minlength=hours + 1)
    return np.cumsum(steps[:hours])


def _covered(usage: UsageRows, start_hour: int, end_hour: int) -> np.ndarray:
    """Hours inside any GPU row's charge period or any other interval the bill covers."""
    starts = np.concatenate([usage.start_hour, usage.covered_start_hour])
    ends = np.concatenate([np.maximum(usage.end_hour, usage.start_hour + 1), usage.covered_end_hour])
    first, past = _clipped(starts, ends, start_hour, end_hour)
    hours = end_hour - start_hour
    depth = np.cumsum(np.bincount(first, minlength=hours + 1) - np.bincount(past, minlength=hours + 1))
    return depth[:hours] > 0


def _busy(usage, demand_rows, rates, utilization, start_hour, end_hour):
    """(busy, busy interruptible, coverage): billed GPUs less the idle share of every (resource, hour)
    that has a utilization sample. The billed GPUs of one resource in one hour are read at the sampled
    cells only (binary searches in its rows' sorted start and end events), not on a resource x hour grid."""
    hours = end_hour - start_hour
    row_codes, sample_codes = _resource_codes(usage.resource_id[demand_rows], utilization.resource_id)
    cells, mean_utilization = _sampled_cells(utilization, sample_codes, start_hour, end_hour)
    starts, ends, _ = _spread_rates(usage, demand_rows)
    first, past = _clipped(starts, ends, start_hour, end_hour)
    interruptible = usage.interruptible[demand_rows]
    billed_total = _spread(first, past, rates, hours)
    parts = [rates, rates * interruptible]
    # only the rows of sampled resources are searched (often a few of many): no sort of the others
    sampled = np.zeros(int(row_codes.max()) + 1 if len(row_codes) else 0, dtype=bool)
    sampled[(cells // (hours + 1))] = True
    searched = sampled[row_codes]
    at_cells = _resource_gpus_at(
        row_codes[searched], first[searched], past[searched], [part[searched] for part in parts], cells, hours
    )
    results = []
    for part_rates, gpus in zip(parts, at_cells, strict=True):
        idle = gpus * (1.0 - mean_utilization)
        busy = _spread(first, past, part_rates, hours)
        busy -= np.bincount(cells % (hours + 1), weights=idle, minlength=hours + 1)[:hours]
        results.append(busy)
    sampled_gpu_hours = float(at_cells[0].sum())
    total = float(billed_total.sum())
    coverage = min(1.0, sampled_gpu_hours / total) if total > 0 else 0.0
    return results[0], results[1], coverage


def _resource_codes(row_ids: np.ndarray, sample_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Integer codes of the rows' and the samples' resource ids, from one hash pass over both (pandas'
    factorize; sorting or converting a million strings costs seconds). A sample's code is -1 where no
    row has its resource, or the resource id is empty."""
    codes, names = pd.factorize(np.concatenate([row_ids, sample_ids]), use_na_sentinel=False)
    row_codes, sample_codes = codes[: len(row_ids)], codes[len(row_ids) :]
    has_rows = np.zeros(len(names), dtype=bool)
    has_rows[row_codes] = True
    has_rows &= np.asarray(names, dtype=object) != ""
    return row_codes, np.where(has_rows[sample_codes], sample_codes, -1)


def _sampled_cells(utilization: UtilizationRows, codes: np.ndarray, start_hour: int, end_hour: int):
    """Cells (resource code x (hours + 1) + hour offset) that hold samples of a resource the rows
    have (code >= 0), in the period, and the mean utilization of each (clipped to 0..1)."""
    hours = end_hour - start_hour
    known = codes >= 0
    offsets = utilization.hour - start_hour
    keep = known & (offsets >= 0) & (offsets < hours)
    keys = codes[keep].astype(np.int64) * (hours + 1) + offsets[keep]
    cells, inverse = np.unique(keys, return_inverse=True)
    values = np.clip(utilization.utilization[keep], 0.0, 1.0)
    mean = np.bincount(inverse, weights=values, minlength=len(cells)) / np.bincount(
        inverse, minlength=len(cells)
    )
    return cells, mean


def _resource_gpus_at(row_codes, first, past, rates: list[np.ndarray], cells, hours) -> list[np.ndarray]:
    """Billed GPUs of the cell's resource in the cell's hour, for each vector of row rates: the running
    sum of the resource's +rate (start) and -rate (end) events up to the cell, less the running sum
    before the resource's first event (each resource's events add up to zero). One sort serves all."""
    if len(cells) == 0:
        return [np.zeros(0) for _ in rates]
    width = hours + 1
    keys = np.concatenate([row_codes * width + first, row_codes * width + past])
    order = np.argsort(keys)  # events of one key all count or none at a cell: their order does not matter
    keys = keys[order]
    at = np.searchsorted(keys, cells, side="right") - 1
    before = np.searchsorted(keys, (cells // width) * width, side="left") - 1
    found = []
    for part in rates:
        running = np.cumsum(np.concatenate([part, -part])[order])
        value = np.where(at >= 0, running[np.maximum(at, 0)], 0.0)
        base = np.where(before >= 0, running[np.maximum(before, 0)], 0.0)
        found.append(np.maximum(value - base, 0.0))
    return found


def load_duration_curve(series: np.ndarray) -> np.ndarray:
    """The covered hours' values (NaN dropped) sorted descending: element k is the demand met or
    exceeded in k + 1 hours of the history."""
    values = np.asarray(series, dtype=np.float64)
    return np.sort(values[~np.isnan(values)])[::-1]


def demand_percentiles(series: np.ndarray) -> DemandPercentiles:
    """P10/P50/P90 over the covered hours by numpy's linear method, the peak and the mean.
    PlanInputError("from") when no hour is covered."""
    values = np.asarray(series, dtype=np.float64)
    values = values[~np.isnan(values)]
    if not len(values):
        raise PlanInputError("from", "no hour of the period is covered by the bills")
    p10, p50, p90 = np.percentile(values, [10, 50, 90], method=PERCENTILE_METHOD)
    return DemandPercentiles(
        p10=float(p10), p50=float(p50), p90=float(p90), peak=float(values.max()), mean=float(values.mean())
    )


def _month_of_hour(hour_index: np.ndarray) -> np.ndarray:
    """Months since 1970-01 (UTC) of absolute hour indexes."""
    return (
        np.asarray(hour_index, dtype=np.int64)
        .astype("datetime64[h]")
        .astype("datetime64[M]")
        .astype(np.int64)
    )


def monthly_gpu_hours(series: np.ndarray, *, start_hour: int) -> list[dict]:
    """GPU-hours per calendar month (UTC) of the covered hours of `series` (hour 0 = start_hour):
    [{"month": "2026-05", "gpu_hours": float, "covered_hours": int, "hours": int}, ...]."""
    values = np.asarray(series, dtype=np.float64)
    months = _month_of_hour(np.arange(len(values), dtype=np.int64) + int(start_hour))
    names, inverse = np.unique(months, return_inverse=True)
    covered = ~np.isnan(values)
    gpu_hours = np.bincount(inverse, weights=np.where(covered, values, 0.0), minlength=len(names))
    covered_hours = np.bincount(inverse, weights=covered, minlength=len(names))
    hours = np.bincount(inverse, minlength=len(names))
    return [
        {
            "month": f"{1970 + m // 12:04d}-{m % 12 + 1:02d}",
            "gpu_hours": float(g),
            "covered_hours": int(c),
            "hours": int(h),
        }
        for m, g, c, h in zip(names.tolist(), gpu_hours, covered_hours, hours, strict=True)
    ]


def data_gaps(covered: np.ndarray, *, start_hour: int) -> DataGaps:
    """The runs of uncovered hours as absolute [start_hour, end_hour) ranges, and the counts."""
    covered = np.asarray(covered, dtype=bool)
    edges = np.diff(np.concatenate([[0], (~covered).astype(np.int8), [0]]))
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    ranges = tuple(
        (int(s) + int(start_hour), int(e) + int(start_hour)) for s, e in zip(starts, ends, strict=True)
    )
    return DataGaps(ranges=ranges, covered_hours=int(covered.sum()), total_hours=len(covered))


def _yearly_means(monthly: np.ndarray) -> np.ndarray:
    """Mean of each run of 12 months along the last axis (the last run may be shorter)."""
    months = monthly.shape[-1]
    bounds = np.arange(0, months, 12)
    sums = np.add.reduceat(monthly, bounds, axis=-1)
    return sums / np.minimum(12, months - bounds)


def _monthly_of(growth: Growth, horizon_months: int) -> np.ndarray:
    months = np.arange(horizon_months)
    if isinstance(growth, float):
        return (1.0 + growth) ** months
    return np.asarray(growth, dtype=np.float64)[months // 12]


def growth_multipliers(growth: Growth, *, horizon_months: int) -> GrowthMultipliers:
    """Multipliers of the history's demand over the horizon (module docstring): a rate r gives month m
    (1 + r)^m; a list gives each month its year's multiplier."""
    horizon_months = validate_horizon(horizon_months)
    monthly = _monthly_of(validate_growth(growth, horizon_months=horizon_months), horizon_months)
    return GrowthMultipliers(monthly=monthly, yearly=_yearly_means(monthly))


def _spread_value(spread: float) -> float:
    if (
        isinstance(spread, bool)
        or not isinstance(spread, (int, float))
        or not 0 <= spread <= MAX_MONTHLY_GROWTH
    ):
        raise PlanInputError("spread", f"must be a monthly rate 0-0.5, got {spread!r}")
    return float(spread)


def scenarios(
    growth: Growth, *, horizon_months: int, spread: float = DEFAULT_SCENARIO_SPREAD
) -> dict[str, GrowthMultipliers]:
    """{"low", "base", "high"}: base is `growth`; low and high take `spread` off and on the monthly
    rate (clipped to +-50%); for yearly multipliers, month m's is scaled by (1 -+ spread)^m."""
    horizon_months = validate_horizon(horizon_months)
    growth = validate_growth(growth, horizon_months=horizon_months)
    spread = _spread_value(spread)
    months = np.arange(horizon_months)
    found = {}
    for name, sign in (("low", -1), ("base", 0), ("high", 1)):
        if isinstance(growth, float):
            rate = float(np.clip(growth + sign * spread, -MAX_MONTHLY_GROWTH, MAX_MONTHLY_GROWTH))
            monthly = (1.0 + rate) ** months
        else:
            monthly = _monthly_of(growth, horizon_months) * (1.0 + sign * spread) ** months
        found[name] = GrowthMultipliers(monthly=monthly, yearly=_yearly_means(monthly))
    return found


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
    horizon_months = validate_horizon(horizon_months)
    growth = validate_growth(growth, horizon_months=horizon_months)
    trials = validate_trials(trials)
    if isinstance(sigma, bool) or not isinstance(sigma, (int, float)) or not 0 <= sigma <= MAX_MONTHLY_GROWTH:
        raise PlanInputError("sigma", f"must be a monthly rate 0-0.5, got {sigma!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise PlanInputError("seed", f"must be a whole number >= 0, got {seed!r}")
    draws = np.random.default_rng(int(seed)).normal(0.0, float(sigma), size=trials)
    months = np.arange(horizon_months)
    if isinstance(growth, float):
        rates = np.clip(growth + draws, -MAX_MONTHLY_GROWTH, MAX_MONTHLY_GROWTH)
        monthly = (1.0 + rates[:, None]) ** months[None, :]
    else:
        rates = np.clip(draws, -MAX_MONTHLY_GROWTH, MAX_MONTHLY_GROWTH)
        monthly = _monthly_of(growth, horizon_months)[None, :] * (1.0 + rates[:, None]) ** months[None, :]
    return _yearly_means(monthly)


def status_quo(usage: UsageRows, *, start_hour: int, end_hour: int) -> StatusQuo:
    """What the rows charged in [start_hour, end_hour) cost as billed, with their GPU-hours. A row
    belongs to the period its charge period starts in (the spend review's rule).

    A used row with cost and no GPU-hours is a one-off correction (FOCUS ChargeClass=Correction
    re-rating a past charge, as the demo's -24.00 L4 credit; CUR's credits and refunds alike): money
    without usage. The status quo is a rate per GPU-hour used that the plan projects over its horizon,
    and a one-off does not recur with the demand, so it is left out of the cost (and of every rate) and
    reported apart (`one_off_correction_micros`). Unused commitments also carry cost without hours; they
    recur while the commitment runs and stay in."""
    inside = (usage.start_hour >= int(start_hour)) & (usage.start_hour < int(end_hour))
    unused = inside & usage.unused_commitment
    one_off = inside & ~usage.unused_commitment & (usage.gpu_hours == 0) & (usage.effective_cost_micros != 0)
    used = inside & ~usage.unused_commitment & ~one_off
    codes, names = pd.factorize(usage.pricing_category)
    gpu_hours = np.bincount(codes[used], weights=usage.gpu_hours[used], minlength=len(names))
    costs = [int(usage.effective_cost_micros[used & (codes == code)].sum()) for code in range(len(names))]
    present = np.bincount(codes[used], minlength=len(names)) > 0
    categories = {
        str(names[code]): {"gpu_hours": float(gpu_hours[code]), "effective_cost_micros": costs[code]}
        for code in np.argsort(np.asarray(names, dtype=str))
        if present[code]
    }
    return StatusQuo(
        currency=usage.currency,
        gpu_hours=float(usage.gpu_hours[used].sum()),
        effective_cost_micros=int(usage.effective_cost_micros[used | unused].sum()),
        unused_commitment_micros=int(usage.effective_cost_micros[unused].sum()),
        by_pricing_category=categories,
        one_off_correction_micros=int(usage.effective_cost_micros[one_off].sum()),
        one_off_corrections=int(one_off.sum()),
    )


def demand_summary(history: DemandHistory) -> dict:
    """The history as JSON-ready values for a plan's output: which series and why, coverage, GPU-hours
    (all and interruptible), percentiles, months and gaps of the series used."""
    series = history.demand
    return {
        "series_used": history.series_used,
        "series_reason": history.series_reason,
        "utilization_coverage": history.utilization_coverage,
        "covered_hours": history.covered_hours,
        "total_hours": history.total_hours,
        "gpu_hours": history.gpu_hours,
        "interruptible_gpu_hours": float(np.nansum(history.demand_interruptible)),
        "percentiles": demand_percentiles(series).as_dict(),
        "percentile_method": PERCENTILE_METHOD,
        "monthly_gpu_hours": monthly_gpu_hours(series, start_hour=history.start_hour),
        "gaps": data_gaps(history.covered, start_hour=history.start_hour).as_dict(),
    }
