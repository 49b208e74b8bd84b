"""Ranking options, pricing models and parallelism plans: the vocabulary every ranking module shares."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal

from procurement.costing.job import (
    ASSUMED_STORAGE_RATE_PER_GB_MONTH,
    DEFAULT_RERUN_FRACTION,
    DEFAULT_SETUP_HOURS,
    DEFAULT_STORAGE_TAIL_MONTHS,
)
from procurement.costing.spot_timing import (
    DEFAULT_IMAGE_PULL_GB_PER_S,
    DEFAULT_PROVISIONING_HOURS,
    DEFAULT_STORAGE_READ_GB_PER_S,
    DEFAULT_STORAGE_WRITE_GB_PER_S,
)
from procurement.ranking.interconnects import InterconnectRule
from procurement.sizing.mfu import CalibrationFactor

RANKED_PRICING_MODELS = (
    "on_demand",
    "spot",
    "reserved_1y",
    "reserved_3y",
    "savings_plan_1y",
    "savings_plan_3y",
)
COMMITTED_MODELS = frozenset(RANKED_PRICING_MODELS[2:])
DEFAULT_INSTANCE_COUNTS = (1, 2, 4, 8)
# The most instances one row may use (a requested instance count, or the count that makes a stated GPU count):
# bounded so one request is bounded work (issue 9), and high enough for the published pretraining clusters:
# BLOOM 48 nodes of 8 A100 80GB (BigScience, arXiv:2211.05100 sec. 3.4), GLM-130B 96 DGX-A100 (arXiv:2210.02414
# sec. 3), OPT-175B 124 nodes (992 A100 80GB, arXiv:2205.01068 sec. 2.4), MT-NLG 530B 560 DGX-A100
# (arXiv:2201.11990 sec. 3), Llama 3 405B 16,384 H100 = 2,048 nodes of 8 (arXiv:2407.21783 sec. 3.3).
MAX_INSTANCES = 2048
DEFAULT_SERVING_HOURS = 730.0  # inference has no end: price a month of serving
UNKNOWN_SPOT_BAND = 2  # no advisor data: assume the middle band (10-15% a month), and say so
DEFAULT_DEADLINE_PROBABILITY = 0.9  # a deadline is met on wall-clock time in 90% of trials (issue 26)
ADVISOR_STALE_DAYS = 365  # a Spot Advisor band older than a year is flagged
HOURS_PER_MONTH = 730.0
# The seeded Monte Carlo of spot completion time runs for the first few feasible spot rows only: it
# costs about 0.3 ms a row, which the 100 ms / 100,000-offer budget affords a few times, not 20.
DEFAULT_SPOT_SIMULATION_ROWS = 3
DEFAULT_SPOT_SIMULATION_TRIALS = 2_000
# What the ranked serving is for (issue 26, aud49k item 4): "production" orders a serving replica split over
# consumer cards below the first row that is not one (configurations.consumer_serving_split); "development" (a
# team's own test bench, where ECC and GeForce's data-center clause do not decide) ranks it by cost like any row.
DEPLOYMENTS = ("production", "development")
DEFAULT_DEPLOYMENT = "production"
NO_FABRIC_REASON = "no cluster interconnect for {instance_type}"
GPU_ONLY_REASON = "price covers the GPUs only; the host VM is billed separately and is not in the catalog"

# Plan name -> (ZeRO stage, tensor parallel within the instance?). "tensor_parallel" groups all of the
# instance's GPUs; the partial plans (issue 26) group fewer of them, data parallel across the groups.
PLANS: dict[str, tuple[int, bool]] = {
    "data_parallel": (0, False),
    "zero3_fsdp": (3, False),
    "tensor_parallel": (0, True),
    "tensor_parallel_2": (0, True),
    "tensor_parallel_4": (0, True),
    "tensor_parallel_8": (0, True),
}
PLAN_NAMES = tuple(PLANS)
# Partial tensor parallelism: the plan's TP group, a power of two that divides the GPUs of a larger
# instance (TP never crosses an instance; a group of all of them is the "tensor_parallel" plan). Training
# only: e.g. MLPerf Training v4.0's Llama 2 70B LoRA ran 8 x H100 at TP 4 and 8 x H200 at TP 2.
PARTIAL_TENSOR_PARALLEL: dict[str, int] = {
    "tensor_parallel_2": 2,
    "tensor_parallel_4": 4,
    "tensor_parallel_8": 8,
}


def plan_label(
    plan: str, *, tensor_parallel: int, gpus: int, zero: int, pipeline: int = 1, context: int = 1
) -> str:
    """The plan in words, as row texts name it: "data parallel", "ZeRO-3/FSDP", "tensor parallel within
    the instance", or a partial plan's "TP 2 x DP 4 within each instance" (with its ZeRO stage if any). A
    partial plan under pipeline (or context) parallelism names every degree, its data-parallel ranks
    gpus / (tp x pp x cp): "TP 2 x PP 8 x DP 2" on 32 GPUs (not "DP 16", which leaves the pipeline out)."""
    if plan == "tensor_parallel" and zero:  # a stated ZeRO stage over the TP groups (FSDP x TP, 2D)
        return f"{PLAN_LABELS[plan]} (TP {tensor_parallel}), ZeRO-{zero}"
    if plan not in PARTIAL_TENSOR_PARALLEL:
        return PLAN_LABELS[plan]
    pipeline, context = max(pipeline, 1), max(context, 1)
    degrees = f"TP {tensor_parallel}" + (f" x PP {pipeline}" if pipeline > 1 else "")
    degrees += f" x CP {context}" if context > 1 else ""
    ranks = gpus // max(tensor_parallel * pipeline * context, 1)
    text = f"{degrees} x DP {ranks} (TP groups within each instance)"
    return text + (f", ZeRO-{zero}" if zero else "")


PLAN_LABELS = {
    "data_parallel": "data parallel",
    "zero3_fsdp": "ZeRO-3/FSDP",
    "tensor_parallel": "tensor parallel within the instance",
}

# The columns ranking reads from pricing.selectors.offer_frame(). Optional, used when present: the float
# copies ``<column>_float``, ``interruption_band`` and the freshness columns ``stale``, ``scheduled``,
# ``stale_after_hours`` (a table without them, e.g. a synthetic one, is treated as fresh).
OFFER_COLUMNS = (
    "provider",
    "region",
    "zone",
    "instance_type",
    "gpu",
    "gpu_count",
    "vcpus",
    "memory_gib",
    "pricing_model",
    "payment_option",
    "price_per_hour_usd",
    "observed_at",
    "observation_id",
)


@dataclass(frozen=True)
class RankingOptions:
    deadline_hours: float | None = None
    budget: float | None = None  # on the job total, in ``currency``
    providers: tuple[str, ...] = ()
    regions: tuple[str, ...] = ()
    gpus: tuple[str, ...] = ()  # GPU model slugs; empty: every GPU
    pricing_models: tuple[str, ...] = RANKED_PRICING_MODELS
    instance_counts: tuple[int, ...] = DEFAULT_INSTANCE_COUNTS
    top: int | None = 20
    include_infeasible: bool = False
    setup_hours: float = float(DEFAULT_SETUP_HOURS)
    rerun_fraction: float = float(DEFAULT_RERUN_FRACTION)
    storage_tail_months: float = float(DEFAULT_STORAGE_TAIL_MONTHS)
    storage_gb: float = 0.0
    storage_rate_per_gb_month: Mapping[str, float] = field(default_factory=dict)  # provider -> USD
    # Providers whose rate above is a stated default, not a published price (labelled "assumed" on rows);
    # a provider missing from storage_rate_per_gb_month is priced at the assumed default below.
    storage_rate_assumed: frozenset[str] = frozenset()
    assumed_storage_rate_per_gb_month: float = float(ASSUMED_STORAGE_RATE_PER_GB_MONTH)
    # Spot C and R: None derives them from the job's checkpoint size and the bandwidths below
    # (ranking/spot_inputs.py, docs/cost-model.md "Spot timing"); a number replaces the derived figure.
    checkpoint_write_hours: float | None = None
    restart_hours: float | None = None
    storage_write_gb_per_s: float = DEFAULT_STORAGE_WRITE_GB_PER_S
    storage_read_gb_per_s: float = DEFAULT_STORAGE_READ_GB_PER_S
    provisioning_hours: float = DEFAULT_PROVISIONING_HOURS
    image_pull_gb_per_s: float = DEFAULT_IMAGE_PULL_GB_PER_S
    # Deadline-aware spot plan: the probability the spot-with-on-demand-fallback plan must meet the deadline.
    deadline_probability: float = DEFAULT_DEADLINE_PROBABILITY
    can_checkpoint: bool = True
    spot_simulation_rows: int = DEFAULT_SPOT_SIMULATION_ROWS  # feasible spot rows given P50/P90
    spot_simulation_trials: int = DEFAULT_SPOT_SIMULATION_TRIALS
    spot_simulation_seed: int = 0
    # offer ids -> hourly spot price history in USD per instance-hour, oldest first (numpy arrays); called
    # once per ranking for the simulated rows (the Django side reads PriceObservation). None: current price.
    spot_price_history: Callable[[Sequence[int]], Mapping[int, object]] | None = None
    serving_hours: float = DEFAULT_SERVING_HOURS
    # Identical rows (same provider, instance type, pricing, price and plan in several regions) become one
    # row with "also in N regions" (same total cost and hours too, ranking/collapse.py); None: collapse
    # (serving and training alike since issue 26); False keeps every region's row.
    collapse_identical: bool | None = None
    measured_tokens_per_second: Mapping[tuple[str, int], float] = field(default_factory=dict)  # (gpu, gpus)
    measured_dates: Mapping[tuple[str, int], str] = field(default_factory=dict)  # (gpu, gpus) -> YYYY-MM-DD
    # Fitted calibration factors per (GPU slug, method), passed in by the service layer (procurement.sizing.mfu);
    # empty: uncalibrated estimates.
    calibration: Mapping[tuple[str, str], CalibrationFactor] = field(default_factory=dict)
    use_calibration: bool = True  # the request's "calibrate" option; False: the service passes no factors
    # The interconnect table (procurement/ranking/interconnects.py); None: the bundled one.
    interconnect_rules: tuple[InterconnectRule, ...] | None = None
    currency: str = "USD"  # of the returned money; the engine prices in USD and converts at the edge
    fx_rate_from_usd: Decimal = Decimal(1)  # units of ``currency`` one USD buys (a stored FX rate)
    include_illustrative: bool = False  # rank made-up (illustrative) prices too, labelled
    # Rank plans other than the spec's stated parallelism too (each row says what differs); without it the
    # stated gpus, zero_stage, tensor_parallel and pipeline_parallel are a contract (ranking/contract.py).
    explore_parallelism: bool = False
    rank_outliers_at_quote: bool = False  # rank a flagged spot outlier at its raw quote, not the robust price
    deployment: str = (
        DEFAULT_DEPLOYMENT  # DEPLOYMENTS: "development" lifts the consumer serving split's order
    )

    @property
    def budget_usd(self) -> float | None:
        return None if self.budget is None else self.budget / float(self.fx_rate_from_usd)
