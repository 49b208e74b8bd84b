"""Full cost of one job on one configuration: compute, setup, storage and reruns.

The hourly rate alone misleads: a dearer card that finishes sooner can be cheaper for the job
(the guides' worked example: 2/h x 10 h = 20 against 3.5/h x 5 h = 17.5). This module prices
the whole job from its hours, states whether those hours were measured or estimated, and
gives unit costs a team can compare across cards (per GPU-hour, per 1M tokens, per epoch).

Formulas (docs/cost-model.md, "Job cost"):
    compute = P x H x N          setup  = P x S x N
    reruns  = F x compute        storage = G x R x M
    total   = compute + setup + storage + reruns
with P the price per instance-hour, H the run's wall-clock hours, N instances, S setup hours,
F the rerun/experiment budget fraction, G stored GB, R the rate per GB-month, M months held.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import Literal

import numpy as np

from procurement.costing.values import (
    HOURS_PER_MONTH,
    CostInputError,
    currency_code,
    fraction,
    non_negative,
    positive,
    positive_int,
    round_money,
    round_price,
)

Basis = Literal["measured", "estimated"]
BASES: tuple[str, ...] = ("measured", "estimated")

# Planning defaults (sources and reasoning in docs/cost-model.md). The audit CLI does not apply
# them: there an omitted flag means zero, so the printed numbers are exactly the typed formula.
DEFAULT_SETUP_HOURS = Decimal("1.0")  # 0.5 h environment install + 0.5 h data preparation, billed
DEFAULT_RERUN_FRACTION = Decimal("0.20")  # budget for failed runs and tuning experiments
# Storage is billed for the run plus a retention: outputs kept a week for evaluation and download
# (gpuledger assumption, docs/cost-model.md "Storage"), as months of 730 h: 7 x 24 / 730.
DEFAULT_STORAGE_RETENTION_DAYS = Decimal(7)
MAX_STORAGE_RETENTION_DAYS = Decimal(3650)  # a bounded request field: ten years
DEFAULT_STORAGE_TAIL_MONTHS = DEFAULT_STORAGE_RETENTION_DAYS * 24 / HOURS_PER_MONTH
# Free space so a disk never fills mid-run: the sizing engine's DISK_RESERVE (disk_reserve_fraction, 20%,
# procurement/sizing/assumptions.py), which also sizes the disk the ranking prices; one figure in both.
DEFAULT_STORAGE_RESERVE_FRACTION = Decimal("0.20")
# A provider with no published storage rate in the catalog is priced at this stated default and the row
# says "assumed" (gpuledger assumption: about a block-SSD GB-month at the hyperscalers, 0.08-0.10 USD).
ASSUMED_STORAGE_RATE_PER_GB_MONTH = Decimal("0.10")
MILLION = Decimal(1_000_000)


@dataclass(frozen=True)
class StorageFootprint:
    """The disk a job holds, in GB: the guides' list from dataset to reserve."""

    dataset_gb: Decimal = Decimal(0)
    unpacked_gb: Decimal = Decimal(0)
    environment_gb: Decimal = Decimal(0)
    weights_gb: Decimal = Decimal(0)
    checkpoint_gb: Decimal = Decimal(0)
    checkpoints_kept: int = 0
    logs_gb: Decimal = Decimal(0)
    cache_gb: Decimal = Decimal(0)
    reserve_fraction: Decimal = DEFAULT_STORAGE_RESERVE_FRACTION

    def total_gb(self) -> Decimal:
        used_gb = (
            self.dataset_gb
            + self.unpacked_gb
            + self.environment_gb
            + self.weights_gb
            + self.checkpoint_gb * self.checkpoints_kept
            + self.logs_gb
            + self.cache_gb
        )
        return used_gb * (1 + self.reserve_fraction)


def storage_months_held(run_hours: Decimal, tail_months: Decimal = DEFAULT_STORAGE_TAIL_MONTHS) -> Decimal:
    """Months storage is billed: the run itself (730 h a month) plus the retention kept afterwards."""
    return run_hours / HOURS_PER_MONTH + tail_months


def retention_months(days: Decimal) -> Decimal:
    """A retention in days as billing months of 730 h."""
    return Decimal(days) * 24 / HOURS_PER_MONTH


@dataclass(frozen=True)
class JobCostInput:
    """One job on one configuration. Prices are per instance-hour in ``currency``."""

    price_per_hour: Decimal
    hours: Decimal  # wall-clock hours per instance, communication overhead included
    currency: str
    instances: int = 1
    gpus_per_instance: Decimal = Decimal(1)
    setup_hours: Decimal = Decimal(0)
    rerun_fraction: Decimal = Decimal(0)
    storage_gb: Decimal = Decimal(0)
    storage_rate_per_gb_month: Decimal = Decimal(0)
    storage_months: Decimal = Decimal(0)
    basis: Basis = "estimated"
    training_tokens: Decimal | None = None
    generated_tokens: Decimal | None = None
    epochs: Decimal | None = None


@dataclass(frozen=True)
class JobCostBreakdown:
    """Exact (unrounded) job cost; ``as_report`` rounds for people and files."""

    compute: Decimal
    setup: Decimal
    storage: Decimal
    reruns: Decimal
    currency: str
    basis: Basis
    gpu_hours: Decimal
    unit_denominators: dict[str, Decimal | None] = field(default_factory=dict)

    @property
    def total(self) -> Decimal:
        return self.compute + self.setup + self.storage + self.reruns

    def unit_costs(self) -> dict[str, Decimal | None]:
        """Cost per unit of work; ``None`` where the job has no such unit (no tokens, no epochs)."""
        return {
            name: (self.total / amount if amount else None) for name, amount in self.unit_denominators.items()
        }

    def as_report(self) -> dict[str, object]:
        """Decimal strings rounded half-up to the minor unit; the total is the sum of the rounded parts
        so that a printed breakdown always adds up."""
        parts = {name: round_money(getattr(self, name), self.currency) for name in PART_NAMES}
        report: dict[str, object] = {name: str(amount) for name, amount in parts.items()}
        report["total"] = str(sum(parts.values(), Decimal(0)))
        report["currency"] = self.currency
        report["basis"] = self.basis
        report["unit_costs"] = {
            name: (None if cost is None else str(round_price(cost)))
            for name, cost in self.unit_costs().items()
        }
        return report


PART_NAMES = ("compute", "setup", "storage", "reruns")


def job_cost(job: JobCostInput) -> JobCostBreakdown:
    """Price one job. Raises CostInputError naming the field for negative or missing values."""
    _validate(job)
    compute = job.price_per_hour * job.hours * job.instances
    gpu_hours = job.gpus_per_instance * job.instances * job.hours
    return JobCostBreakdown(
        compute=compute,
        setup=job.price_per_hour * job.setup_hours * job.instances,
        storage=job.storage_gb * job.storage_rate_per_gb_month * job.storage_months,
        reruns=job.rerun_fraction * compute,
        currency=job.currency,
        basis=job.basis,
        gpu_hours=gpu_hours,
        unit_denominators={
            "per_gpu_hour": gpu_hours,
            "per_million_training_tokens": _per_million(job.training_tokens),
            "per_million_generated_tokens": _per_million(job.generated_tokens),
            "per_epoch": job.epochs,
        },
    )


def _per_million(tokens: Decimal | None) -> Decimal | None:
    return None if tokens is None else tokens / MILLION


# Physically meaningful ranges: past these an input is a typo (or an attack), and the products of
# price × hours × instances stay far inside Decimal's 28 digits.
JOB_LIMITS = {
    "hours": 1_000_000,
    "setup_hours": 1_000_000,
    "price_per_hour": 1_000_000,
    "instances": 100_000,
    "storage_gb": 10**9,
    "storage_months": 1200,
    "epochs": 10_000,
}
JOB_LIMIT_REASONS = {
    "hours": "about 114 years",
    "setup_hours": "about 114 years",
    "price_per_hour": "per instance-hour",
    "instances": "a fleet",
    "storage_gb": "an exabyte",
    "storage_months": "a century",
    "epochs": "passes over the data",
}


def _validate(job: JobCostInput) -> None:
    non_negative(job.price_per_hour, "price_per_hour")
    non_negative(job.hours, "hours")
    positive_int(job.instances, "instances")
    positive(job.gpus_per_instance, "gpus_per_instance")
    fraction(job.rerun_fraction, "rerun_fraction")  # a share of compute: 0.2 is 20%, 1.5 is a typo
    for name in (
        "setup_hours",
        "storage_gb",
        "storage_rate_per_gb_month",
        "storage_months",
    ):
        non_negative(getattr(job, name), name)
    for name in ("training_tokens", "generated_tokens", "epochs"):
        if getattr(job, name) is not None:
            positive(getattr(job, name), name)
    for name, limit in JOB_LIMITS.items():
        value = getattr(job, name)
        if value is not None and value > limit:
            raise CostInputError(
                name, f"must be at most {limit:,} ({JOB_LIMIT_REASONS[name]}), got {value:.3e}"
            )
    currency_code(job.currency)
    if job.basis not in BASES:
        raise CostInputError("basis", f"must be one of {', '.join(BASES)}, got {job.basis!r}")


def planning_job_input(
    *,
    price_per_hour: Decimal,
    hours: Decimal,
    currency: str,
    instances: int = 1,
    gpus_per_instance: Decimal = Decimal(1),
    storage_gb: Decimal = Decimal(0),
    storage_rate_per_gb_month: Decimal = Decimal(0),
    basis: Basis = "estimated",
    setup_hours: Decimal = DEFAULT_SETUP_HOURS,
    rerun_fraction: Decimal = DEFAULT_RERUN_FRACTION,
    storage_tail_months: Decimal = DEFAULT_STORAGE_TAIL_MONTHS,
) -> JobCostInput:
    """A JobCostInput with the documented planning defaults (setup, reruns, storage tail)."""
    return JobCostInput(
        price_per_hour=price_per_hour,
        hours=hours,
        currency=currency,
        instances=instances,
        gpus_per_instance=gpus_per_instance,
        setup_hours=setup_hours,
        rerun_fraction=rerun_fraction,
        storage_gb=storage_gb,
        storage_rate_per_gb_month=storage_rate_per_gb_month,
        storage_months=storage_months_held(hours + setup_hours, storage_tail_months),
        basis=basis,
    )


def job_total_cost_array(
    *,
    price_per_hour: np.ndarray,
    hours: np.ndarray,
    instances: np.ndarray,
    setup_hours: float,
    rerun_fraction: float,
    storage_cost: np.ndarray | float = 0.0,
) -> np.ndarray:
    """The same total as ``job_cost`` over many configurations at once (float64, for ranking)."""
    compute = price_per_hour * hours * instances
    return compute * (1.0 + rerun_fraction) + price_per_hour * setup_hours * instances + storage_cost
