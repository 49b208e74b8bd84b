"""The capacity plan's inputs and results as plain dataclasses (no logic beyond small properties), so
the solver, the sensitivity and the report can share them without importing each other."""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal

import numpy as np

from planning.engine.options import Assumption, SupplyOptions


@dataclass(frozen=True)
class StatusQuoCategory:
    """One pricing category of the bills: GPU-hours used and the effective cost per used GPU-hour."""

    category: str  # on_demand, spot, reserved, savings_plan, ... as the spend review names it
    gpu_hours: float
    cost_per_gpu_hour: Decimal


@dataclass(frozen=True)
class StatusQuoMix:
    """How the history's demand was bought. ``unused_commitment_cost`` (commitments paid and not used
    in the history) is spread over the used GPU-hours, so the blended rate is what a used GPU-hour
    really cost. The blended rate applied to the plan's demand is the status quo's cost."""

    categories: tuple[StatusQuoCategory, ...]
    unused_commitment_cost: Decimal = Decimal(0)
    source: str = "bills"
    # One-off corrections of the history (cost without GPU-hours), left out of the blended rate: a
    # credit re-rating a past day does not recur over the plan's horizon (demand.status_quo)
    one_off_corrections: Decimal = Decimal(0)

    @property
    def gpu_hours(self) -> float:
        return float(sum(category.gpu_hours for category in self.categories))

    def blended_cost_per_gpu_hour(self) -> Decimal:
        """(sum of hours x rate + unused commitments) / hours; 0 hours has no rate (an input error)."""
        hours = Decimal(repr(self.gpu_hours))
        spent = sum((Decimal(repr(c.gpu_hours)) * c.cost_per_gpu_hour for c in self.categories), Decimal(0))
        return (spent + self.unused_commitment_cost) / hours


@dataclass(frozen=True)
class CommitmentsInForce:
    """Reservations and savings plans the bills show, bought before the plan: supply already paid for.
    ``gpus_by_year`` is the GPUs they hold through each whole plan year (a commitment that ends inside a
    year is not counted in it: the plan then buys for that year, the cautious side);
    ``monthly_cost`` the cash still owed in months 0..H (what the bills charge for them, to their end)."""

    gpus_by_year: np.ndarray  # float64 (Y,)
    monthly_cost: np.ndarray  # float64 (H + 1,), month 0 = 0
    source: str = "the bills"
    # GPUs in force through each whole month 0..H (None: each month takes its year's gpus_by_year). The
    # engine plans month by month on it: a commitment ending inside a year is replaced from the month
    # it ends (a renewal), not from the year's start
    gpus_by_month: np.ndarray | None = None

    def by_month(self, horizon_months: int) -> np.ndarray:
        if self.gpus_by_month is not None:
            return np.asarray(self.gpus_by_month, dtype=np.float64)[: horizon_months + 1]
        month = np.arange(horizon_months + 1)
        year = np.clip((month - 1) // 12, 0, len(self.gpus_by_year) - 1)
        return np.asarray(self.gpus_by_year, dtype=np.float64)[year]


@dataclass(frozen=True)
class PlanInputs:
    """Everything one plan is computed from; kept as given so a stored plan can be recomputed."""

    firm_gpus: np.ndarray  # float64 (n,), GPUs in use per sample that must not be interrupted
    interruptible_gpus: np.ndarray  # float64 (n,), GPUs in use per sample tagged interruptible
    growth_by_year: np.ndarray  # float64 (ceil(horizon / 12),), demand multiplier of each plan year
    options: SupplyOptions
    horizon_months: int
    currency: str
    discount_rate_annual: Decimal
    growth_trials: np.ndarray | None = None  # float64 (trials, years): multipliers of each trial
    status_quo: StatusQuoMix | None = None
    gpu_model: str = ""
    assumptions: tuple[Assumption, ...] = ()  # the caller's (demand series, growth, scope) to show
    in_force: CommitmentsInForce | None = None  # commitments bought before the plan, below its stack
    # Owned servers bought in tranches as demand grows, each this many months before its year (tranches.py):
    # the plan's cash and NPV then pay them so. None: the chosen level all at month 0 (the TCO study's model)
    owned_lead_time_months: int | None = None


@dataclass(frozen=True)
class Layer:
    kind: str  # in_force | renewal | owned | committed_3y | committed_1y | on_demand | spot
    gpu_model: str
    gpus: int  # owned/3y: the level held; 1y: the largest year's level; on_demand/spot: their busiest hour
    gpus_by_year: tuple[int, ...]
    hours_served: float  # GPU-hours over the horizon
    hours_by_year: tuple[float, ...]
    cost_by_year: tuple[Decimal, ...]  # cash, in the plan currency, unrounded
    npv: Decimal
    share_of_demand: float  # hours_served / the horizon's demand GPU-hours
    units: int = 0  # servers (owned) or commitment units (1y: the largest year's); 0 for on_demand/spot
    unit_gpus: int = 1
    price_source: str = ""


@dataclass(frozen=True)
class ScreeningLine:
    """One option's screening curve: levelized annual cost per GPU = fixed + variable x hours used
    (in present value and in cash over the horizon), and the capacity factor where it crosses on-demand."""

    kind: str
    fixed_per_gpu_year: Decimal
    variable_per_gpu_hour: Decimal
    fixed_per_gpu_year_cash: Decimal
    variable_per_gpu_hour_cash: Decimal
    break_even_capacity_factor: Decimal | None  # against on-demand, NPV basis; None: never cheaper
    cash_break_even_capacity_factor: Decimal | None


@dataclass(frozen=True)
class SensitivityRow:
    driver: str  # growth, purchase_price, rent_price, discount_rate, owned_utilization
    low_npv: Decimal  # the plan's NPV with the driver at -spread (re-optimized, except owned_utilization)
    high_npv: Decimal
    low_total_cost: Decimal
    high_total_cost: Decimal
    note: str = ""

    @property
    def swing(self) -> Decimal:
        return abs(self.high_npv - self.low_npv)


@dataclass(frozen=True)
class CapacityPlan:
    inputs: PlanInputs
    layers: tuple[Layer, ...]
    total_cost: Decimal  # cash over the horizon (and commitment months past it)
    npv: Decimal
    monthly_cost: tuple[Decimal, ...]  # cash, months 0..last paid month
    demand_gpu_hours: float  # over the horizon
    demand_gpu_hours_by_year: tuple[float, ...]
    owned_servers: int
    committed_3y_units: int
    committed_1y_units_by_year: tuple[int, ...]
    screening: tuple[ScreeningLine, ...]
    assumptions: tuple[Assumption, ...]
    p50_total_cost: Decimal | None = None
    p90_total_cost: Decimal | None = None
    p50_npv: Decimal | None = None
    p90_npv: Decimal | None = None
    trials: int = 0
    status_quo_cost: Decimal | None = None
    status_quo_npv: Decimal | None = None
    status_quo_monthly_cost: tuple[Decimal, ...] = ()
    savings_vs_status_quo: Decimal | None = None
    break_even_month: int | None = None
    sensitivity: tuple[SensitivityRow, ...] = field(default=())
    renewal_units: tuple[int, ...] = ()  # per renewal start month (the months a commitment in force ends)
    renewal_start_months: tuple[int, ...] = ()

    @property
    def currency(self) -> str:
        return self.inputs.currency
