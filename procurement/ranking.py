"""Rank every way to run a workload: offer x instance count x parallelism plan -> fits? -> hours -> cost.

Vectorized in two levels so one workload over 100,000 offers stays far under 100 ms:

1. **Shapes** are what the sizing engine needs: (GPU model, GPUs per instance, instances, plan).
   A catalog has a few hundred of them, however many offers it lists; memory, compatibility and
   hours are computed once per shape with the sizing engine's vectorized functions.
2. **Configurations** are offers joined to the shapes of their GPU kind with numpy index arrays;
   prices, spot overhead, storage and the job total are array expressions over all of them.

Only the rows that are returned become Python dicts (with their reasons in words). Floats are used
inside; the returned money is rounded half-up to cents as Decimal strings, like every report.
Formulas: docs/cost-model.md ("Job cost", "Spot"); the ranking rules: docs/cost-model.md ("Ranking").
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import numpy as np
import pandas as pd

from procurement.costing.job import DEFAULT_RERUN_FRACTION, DEFAULT_SETUP_HOURS, DEFAULT_STORAGE_TAIL_MONTHS
from procurement.costing.spot import BAND_MONTHLY_INTERRUPTION, GUIDE_MAX_CHECKPOINT_INTERVAL_HOURS
from procurement.costing.values import round_money, round_price
from procurement.sizing import (
    GpuSpec,
    WorkloadSpec,
    collective_bandwidth_gbps,
    inference_throughput,
    memory_breakdown_gib,
    training_throughput,
)

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
DEFAULT_SERVING_HOURS = 730.0  # inference has no end: price a month of serving
UNKNOWN_SPOT_BAND = 2  # no advisor data: assume the middle band (10-15% a month), and say so
COMMUNICATION_WARNING_SHARE = 0.30
VCPUS_PER_GPU = 4  # the guides' minimum
HOURS_PER_MONTH = 730.0

# Plan name -> (ZeRO stage, tensor parallel across the instance's GPUs?)
PLANS: dict[str, tuple[int, bool]] = {
    "data_parallel": (0, False),
    "zero3_fsdp": (3, False),
    "tensor_parallel": (0, True),
}
PLAN_NAMES = tuple(PLANS)

# The columns ranking reads from pricing.selectors.offer_frame() (plus the optional interruption_band).
OFFER_COLUMNS = (
    "provider", "region", "zone", "instance_type", "gpu", "gpu_count", "vcpus", "memory_gib",
    "pricing_model", "payment_option", "price_per_hour_usd", "observed_at", "observation_id",
)  # fmt: skip


@dataclass(frozen=True)
class RankingOptions:
    deadline_hours: float | None = None
    budget: float | None = None  # USD, on the job total
    providers: tuple[str, ...] = ()
    regions: tuple[str, ...] = ()
    pricing_models: tuple[str, ...] = RANKED_PRICING_MODELS
    instance_counts: tuple[int, ...] = DEFAULT_INSTANCE_COUNTS
    top: int | None = 20
    include_infeasible: bool = False
    setup_hours: float = float(DEFAULT_SETUP_HOURS)
    rerun_fraction: float = float(DEFAULT_RERUN_FRACTION)
    storage_tail_months: float = float(DEFAULT_STORAGE_TAIL_MONTHS)
    storage_gb: float = 0.0
    storage_rate_per_gb_month: Mapping[str, float] = field(default_factory=dict)  # provider -> USD
    checkpoint_write_hours: float = 1 / 60  # one minute
    restart_hours: float = 0.1
    can_checkpoint: bool = True
    serving_hours: float = DEFAULT_SERVING_HOURS
    measured_tokens_per_second: Mapping[tuple[str, int], float] = field(default_factory=dict)  # (gpu, gpus)
    currency: str = "USD"


@dataclass(frozen=True)
class Shapes:
    """One row per (GPU kind, instances, plan): everything that does not depend on the offer's price."""

    kind: np.ndarray  # index into the kinds table
    instances: np.ndarray
    total_gpus: np.ndarray
    plan: np.ndarray  # index into PLAN_NAMES
    zero: np.ndarray
    tensor_parallel: np.ndarray
    total_gib: np.ndarray
    required_gib: np.ndarray
    capacity_gib: np.ndarray
    hours: np.ndarray
    communication_share: np.ndarray
    measured: np.ndarray
    fits: np.ndarray
    valid: np.ndarray  # a real plan (e.g. tensor parallel needs >1 GPU per instance and NVLink)
    incompatible: list[str]  # per kind: the compatibility error, "" when none


def _kinds(offers: pd.DataFrame) -> tuple[pd.DataFrame, np.ndarray]:
    """Unique (gpu, GPUs per instance) pairs and each offer's index into them."""
    gpu_codes, gpu_names = pd.factorize(offers["gpu"])
    per_instance = offers["gpu_per_instance"].to_numpy(dtype=np.int64)
    keys, codes = np.unique(gpu_codes.astype(np.int64) * 1_000_000 + per_instance, return_inverse=True)
    kinds = pd.DataFrame(
        {"gpu": np.asarray(gpu_names)[keys // 1_000_000], "gpus_per_instance": keys % 1_000_000}
    )
    return kinds, codes


def _floats(values: pd.Series) -> np.ndarray:
    """Decimal/None object columns to float64 (NaN for missing) without pandas' slow generic parser."""
    if values.dtype.kind == "f":
        return values.to_numpy(dtype=float)
    return np.fromiter((math.nan if v is None else float(v) for v in values), dtype=float, count=len(values))


def _shape_grid(kinds: pd.DataFrame, options: RankingOptions) -> dict[str, np.ndarray]:
    counts, plans = np.array(options.instance_counts, dtype=float), np.arange(len(PLAN_NAMES))
    per_kind = len(counts) * len(plans)
    kind = np.repeat(np.arange(len(kinds)), per_kind)
    instances = np.tile(np.repeat(counts, len(plans)), len(kinds))
    plan = np.tile(np.tile(plans, len(counts)), len(kinds))
    per_instance = kinds["gpus_per_instance"].to_numpy(dtype=float)[kind]
    return {"kind": kind, "instances": instances, "plan": plan, "per_instance": per_instance}


def _plan_arrays(grid, kinds: pd.DataFrame, gpus: Mapping[str, GpuSpec]) -> tuple[np.ndarray, ...]:
    zero = np.array([PLANS[name][0] for name in PLAN_NAMES], dtype=float)[grid["plan"]]
    uses_tp = np.array([PLANS[name][1] for name in PLAN_NAMES])[grid["plan"]]
    nvlink = np.array(
        [
            _nvlink_within(gpus[g], int(n))
            for g, n in zip(kinds["gpu"], kinds["gpus_per_instance"], strict=True)
        ]
    )
    total = grid["per_instance"] * grid["instances"]
    tensor_parallel = np.where(uses_tp, grid["per_instance"], 1.0)
    valid = np.where(uses_tp, (grid["per_instance"] > 1) & nvlink[grid["kind"]], True)
    valid &= (zero == 0) | (total > 1)  # ZeRO-3 over one GPU is plain data parallel
    return zero, tensor_parallel, total, valid


def _nvlink_within(gpu: GpuSpec, gpus_per_instance: int) -> bool:
    return gpu.has_nvlink_switch or (gpu.bridge_gpus >= gpus_per_instance > 1)


def _memory(spec: WorkloadSpec, total, zero, tensor_parallel, flash) -> dict[str, np.ndarray]:
    offload = spec.parallelism.offload
    table = {}
    for key, use_offload in (("plain", "none"), ("offload", offload)):
        table[key] = memory_breakdown_gib(
            spec, total, zero_stage=zero, tensor_parallel=tensor_parallel, pipeline_parallel=1.0,
            offload=use_offload, flash_attention=flash,
        )  # fmt: skip
    keep_offload = (zero >= 3) & (offload != "none")  # offload is only valid with sharding
    return {
        key: np.where(keep_offload, table["offload"][key], table["plain"][key])
        for key in ("total_per_gpu_gib", "required_per_gpu_gib")
    }


def build_shapes(
    spec: WorkloadSpec, kinds: pd.DataFrame, gpus: Mapping[str, GpuSpec], options: RankingOptions
) -> Shapes:
    grid = _shape_grid(kinds, options)
    zero, tensor_parallel, total, valid = _plan_arrays(grid, kinds, gpus)
    kind_gpus = [gpus[slug] for slug in kinds["gpu"]]
    flash_ok = np.array([gpu.supports_flash_attention() for gpu in kind_gpus])[grid["kind"]]
    flash = spec.flash_attention
    memory_flash = _memory(spec, total, zero, tensor_parallel, flash)
    memory_eager = _memory(spec, total, zero, tensor_parallel, False) if flash else memory_flash
    total_gib = np.where(flash_ok, memory_flash["total_per_gpu_gib"], memory_eager["total_per_gpu_gib"])
    required = np.where(flash_ok, memory_flash["required_per_gpu_gib"], memory_eager["required_per_gpu_gib"])
    capacity = np.array([gpu.capacity_gib for gpu in kind_gpus])[grid["kind"]]
    hours, share = _hours(spec, kind_gpus, grid, total, zero, tensor_parallel, options)
    measured = _measured_hours(spec, kinds, grid, total, options)
    hours = np.where(np.isnan(measured), hours, measured)
    incompatible = [_incompatibility(spec, gpu) for gpu in kind_gpus]
    compatible = np.array([not reason for reason in incompatible])[grid["kind"]]
    fits = valid & compatible & (required <= capacity) & np.isfinite(hours)
    return Shapes(
        kind=grid["kind"], instances=grid["instances"], total_gpus=total, plan=grid["plan"], zero=zero,
        tensor_parallel=tensor_parallel, total_gib=total_gib, required_gib=required, capacity_gib=capacity,
        hours=hours, communication_share=share, measured=~np.isnan(measured), fits=fits, valid=valid,
        incompatible=incompatible,
    )  # fmt: skip


def _incompatibility(spec: WorkloadSpec, gpu: GpuSpec) -> str:
    if not gpu.supports_precision(spec.precision):
        return f"{gpu.slug} ({gpu.architecture}) cannot run {spec.precision}"
    if gpu.dense_tflops(spec.precision if spec.precision != "fp32" else "fp32") is None:
        return f"no datasheet {spec.precision} throughput for {gpu.slug}: speed not estimated"
    return ""


def _per_shape_links(kind_gpus: Sequence[GpuSpec], kind: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Collective bandwidth per (GPU model, GPU count): computed once per distinct pair."""
    pairs = {(k, int(c)) for k, c in zip(kind.tolist(), counts.tolist(), strict=True)}
    table = {(k, c): collective_bandwidth_gbps(kind_gpus[k], c) for k, c in pairs}
    return np.array(
        [table[(k, int(c))] for k, c in zip(kind.tolist(), counts.tolist(), strict=True)], dtype=float
    )


def _hours(spec, kind_gpus, grid, total, zero, tensor_parallel, options) -> tuple[np.ndarray, np.ndarray]:
    kind = grid["kind"]
    peak = np.array([gpu.dense_tflops(spec.precision) or np.nan for gpu in kind_gpus], dtype=float)[kind]
    if not spec.is_training:
        bandwidth = np.array([gpu.memory_bandwidth_gbps for gpu in kind_gpus], dtype=float)[kind]
        rows = inference_throughput(
            spec, bandwidth_gbps=bandwidth, peak_tflops=peak, gpu_counts=total,
            tensor_parallel=tensor_parallel, pipeline_parallel=1.0,
        )  # fmt: skip
        served = np.isfinite(rows["decode_tokens_per_second_total"])
        return np.where(served, options.serving_hours, np.nan), np.zeros_like(total)
    mfu = np.array([spec.mfu or gpu.default_mfu for gpu in kind_gpus], dtype=float)[kind]
    rows = training_throughput(
        spec, peak_tflops=peak, gpu_counts=total, mfu=mfu, zero_stage=zero, tensor_parallel=tensor_parallel,
        pipeline_parallel=1.0, interconnect_gbps=_per_shape_links(kind_gpus, kind, total),
        tensor_parallel_gbps=_per_shape_links(kind_gpus, kind, tensor_parallel),
    )  # fmt: skip
    return rows["training_hours"], rows["communication_share"]


def _measured_hours(spec, kinds, grid, total, options) -> np.ndarray:
    """Hours from a matching benchmark's tokens/s, where one exists for (GPU model, total GPUs)."""
    measured = np.full(total.shape, np.nan)
    if not options.measured_tokens_per_second or not spec.is_training or not spec.training_tokens:
        return measured
    slugs = kinds["gpu"].to_numpy()[grid["kind"]]
    for (slug, gpus), tokens_per_second in options.measured_tokens_per_second.items():
        match = (slugs == slug) & (total == gpus)
        measured[match] = spec.training_tokens / tokens_per_second / 3600.0
    return measured


@dataclass(frozen=True)
class Configurations:
    offer: np.ndarray  # index into the offer table
    shape: np.ndarray  # index into the shapes
    price_per_hour: np.ndarray  # instance-hour, USD, as listed
    effective_price_per_hour: np.ndarray  # spot: with the checkpoint/interruption overhead
    hours: np.ndarray
    total_cost: np.ndarray
    fits: np.ndarray
    spot_refused: np.ndarray
    selected: np.ndarray  # passes fits (unless include_infeasible) and every filter


def spot_overhead_by_band(band: np.ndarray, options: RankingOptions) -> np.ndarray:
    """C/tau + (tau/2 + R) lambda with tau = min(Young/Daly, 15 min), per offer (docs/cost-model.md)."""
    monthly = np.array([float(p) for p in BAND_MONTHLY_INTERRUPTION])[band]
    rate = -np.log1p(-monthly) / HOURS_PER_MONTH
    write = options.checkpoint_write_hours
    interval = np.minimum(np.sqrt(2.0 * write / rate), float(GUIDE_MAX_CHECKPOINT_INTERVAL_HOURS))
    return write / interval + (interval / 2.0 + options.restart_hours) * rate


def configure(
    prepared: PreparedOffers, shapes: Shapes, options: RankingOptions, spec: WorkloadSpec
) -> Configurations:
    per_kind = len(options.instance_counts) * len(PLAN_NAMES)
    columns, count = prepared.columns, len(prepared.offer_kind)
    offer = np.repeat(np.arange(count), per_kind)
    shape = prepared.offer_kind[offer] * per_kind + np.tile(np.arange(per_kind), count)
    keep = shapes.valid[shape]
    offer, shape = offer[keep], shape[keep]
    price = columns["price_usd"][offer]
    is_spot = columns["is_spot"][offer]
    overhead = spot_overhead_by_band(columns["band"], options)[offer]  # per offer, then spread
    effective = np.where(is_spot, price * (1.0 + overhead), price)
    hours, instances = shapes.hours[shape], shapes.instances[shape]
    storage_months = (hours + options.setup_hours) / HOURS_PER_MONTH + options.storage_tail_months
    compute = effective * hours * instances
    total = (
        compute * (1.0 + options.rerun_fraction)
        + effective * options.setup_hours * instances
        + options.storage_gb * columns["storage_rate"][offer] * storage_months
    )
    spot_refused = is_spot & ((instances > 1) | (not spec.is_training) | (not options.can_checkpoint))
    fits = shapes.fits[shape] & ~spot_refused
    selected = (fits | options.include_infeasible) & _filters(total, hours, options)
    return Configurations(offer, shape, price, effective, hours, total, fits, spot_refused, selected)


def _filters(total: np.ndarray, hours: np.ndarray, options: RankingOptions) -> np.ndarray:
    keep = np.ones(total.shape, dtype=bool)
    if options.deadline_hours is not None:
        keep &= hours <= options.deadline_hours
    if options.budget is not None:
        keep &= total <= options.budget
    return keep


def pareto_shapes(configs: Configurations, shape_hours: np.ndarray) -> set[tuple[int, float]]:
    """(shape, cheapest cost) pairs on the cost-versus-time front. Hours depend only on the shape, so the
    front is found over each shape's cheapest feasible configuration rather than over every offer."""
    mask = configs.selected & configs.fits
    cheapest = np.full(shape_hours.shape, np.inf)
    np.minimum.at(cheapest, configs.shape[mask], configs.total_cost[mask])
    candidates = np.flatnonzero(np.isfinite(cheapest))
    front, fastest = set(), math.inf
    for shape in candidates[np.lexsort((shape_hours[candidates], cheapest[candidates]))]:
        if shape_hours[shape] < fastest:
            front.add((int(shape), float(cheapest[shape])))
            fastest = shape_hours[shape]
    return front


DESCRIBE_COLUMNS = ("provider", "instance_type", "region", "zone", "gpu", "pricing_model", "payment_option",
                    "observed_at", "observation_id", "gpu_per_instance", "band", "band_known", "vcpus", "memory_gib")  # fmt: skip


@dataclass(frozen=True)
class PreparedOffers:
    """The offer table reduced to what ranking reads, as numpy columns; reusable across workloads that
    share the filters (a recompute chunk prepares it once)."""

    kinds: pd.DataFrame  # unique (gpu, gpus_per_instance)
    offer_kind: np.ndarray  # each offer's index into kinds
    columns: dict[str, np.ndarray]

    def row(self, index: int) -> dict[str, Any]:
        return {name: self.columns[name][index] for name in DESCRIBE_COLUMNS}


def prepare_offers(
    offers: pd.DataFrame, gpus: Mapping[str, GpuSpec], options: RankingOptions
) -> pd.DataFrame:
    """Keep offers that can be ranked (known GPU, whole GPUs, a USD price, requested model and filters)."""
    frame = offers
    mask = frame["gpu"].isin(list(gpus)) & frame["pricing_model"].isin(list(options.pricing_models))
    mask &= frame["price_per_hour_usd"].notna()
    if options.providers:
        mask &= frame["provider"].isin(list(options.providers))
    if options.regions:
        mask &= frame["region"].isin(list(options.regions))
    frame = frame.loc[mask]
    per_instance = _floats(frame["gpu_count"])
    whole = (per_instance >= 1) & (per_instance == np.floor(per_instance))
    frame = frame.loc[whole].copy()
    frame["gpu_per_instance"] = per_instance[whole].astype(np.int64)
    frame["price_usd"] = _floats(frame["price_per_hour_usd"])
    band = (
        frame["interruption_band"] if "interruption_band" in frame else pd.Series(np.nan, index=frame.index)
    )
    frame["band_known"] = band.notna().to_numpy()
    frame["band"] = band.fillna(UNKNOWN_SPOT_BAND).astype(int).to_numpy()
    rates = options.storage_rate_per_gb_month
    frame["storage_rate"] = frame["provider"].map(dict(rates)).astype(float).fillna(0.0)
    for column in ("vcpus", "memory_gib"):
        frame[column] = _floats(frame[column])
    frame["observed_at"] = pd.to_datetime(frame["observed_at"], utc=True)
    return frame.reset_index(drop=True)


def prepare(offers: pd.DataFrame, gpus: Mapping[str, GpuSpec], options: RankingOptions) -> PreparedOffers:
    table = prepare_offers(offers, gpus, options)
    kinds, offer_kind = _kinds(table)
    columns = {name: table[name].to_numpy() for name in DESCRIBE_COLUMNS if name != "observed_at"}
    columns["observed_at"] = table["observed_at"].dt.tz_localize(None).to_numpy(dtype="datetime64[ns]")  # UTC
    columns |= {
        "price_usd": table["price_usd"].to_numpy(dtype=float),
        "band": table["band"].to_numpy(dtype=np.int64),
        "storage_rate": table["storage_rate"].to_numpy(dtype=float),
        "is_spot": table["pricing_model"].to_numpy() == "spot",
    }
    return PreparedOffers(kinds=kinds, offer_kind=np.asarray(offer_kind, dtype=np.int64), columns=columns)


@dataclass(frozen=True)
class Ranking:
    results: list[dict[str, Any]]
    considered: int  # configurations priced
    feasible: int

    def as_report(self) -> dict[str, Any]:
        return {"results": self.results, "considered": self.considered, "feasible": self.feasible}


def rank_workload(
    spec: WorkloadSpec,
    offers: pd.DataFrame | None,
    gpus: Mapping[str, GpuSpec],
    options: RankingOptions | None = None,
    *,
    now: pd.Timestamp | None = None,
    prepared: PreparedOffers | None = None,
) -> Ranking:
    """Every configuration of ``offers`` for ``spec``, ranked by total job cost (ascending).

    ``prepared`` (from ``prepare(offers, gpus, options)``) skips re-reading the offer table when many
    workloads with the same filters are ranked in a row.
    """
    options = options or RankingOptions()
    if spec.is_training and not spec.training_tokens:
        raise ValueError("training_tokens: required to rank a training workload by job cost")
    prepared = prepared or prepare(offers, gpus, options)
    if not len(prepared.offer_kind):
        return Ranking(results=[], considered=0, feasible=0)
    shapes = build_shapes(spec, prepared.kinds, gpus, options)
    configs = configure(prepared, shapes, options, spec)
    order = _ranked_order(configs, options.top)
    front = pareto_shapes(configs, shapes.hours)
    now = now or pd.Timestamp.now(tz="UTC")
    rows = [describe(int(i), prepared, shapes, configs, spec, options, front, now) for i in order]
    return Ranking(results=rows, considered=int(configs.total_cost.size), feasible=int(configs.fits.sum()))


def _ranked_order(configs: Configurations, top: int | None) -> np.ndarray:
    """Selected rows by (feasible first, total cost, hours); only the top N are fully sorted."""
    candidates = np.flatnonzero(configs.selected)
    cost = np.where(configs.fits[candidates], configs.total_cost[candidates], np.inf)
    cost = np.where(np.isnan(cost), np.inf, cost)
    if top is not None and top < candidates.size:
        keep = np.argpartition(cost, top - 1)[:top]
        candidates, cost = candidates[keep], cost[keep]
    order = np.lexsort((candidates, configs.hours[candidates], cost))  # ties: catalog order, like the loop
    return candidates[order]


PLAN_LABELS = {
    "data_parallel": "data parallel",
    "zero3_fsdp": "ZeRO-3/FSDP",
    "tensor_parallel": "tensor parallel within the instance",
}


def describe(
    index: int, prepared: PreparedOffers, shapes: Shapes, configs: Configurations, spec, options, front, now
) -> dict[str, Any]:
    """One result row as the JSON contract, with the reasons in words."""
    offer, shape = prepared.row(int(configs.offer[index])), int(configs.shape[index])
    fits = bool(configs.fits[index])
    total = configs.total_cost[index]
    observed_at = pd.Timestamp(offer["observed_at"]).tz_localize("UTC")
    plan = PLAN_NAMES[int(shapes.plan[shape])]
    money = _money(total, options.currency) if fits and math.isfinite(total) else None
    return {
        "provider": offer["provider"],
        "instance_type": offer["instance_type"],
        "region": offer["region"],
        "zone": offer["zone"],
        "gpu": offer["gpu"],
        "gpus": int(shapes.total_gpus[shape]),
        "gpus_per_instance": int(offer["gpu_per_instance"]),
        "instances": int(shapes.instances[shape]),
        "plan": {
            "name": plan,
            "zero_stage": int(shapes.zero[shape]),
            "tensor_parallel": int(shapes.tensor_parallel[shape]),
        },
        "pricing_model": offer["pricing_model"],
        "payment_option": offer["payment_option"],
        "price_per_hour": str(round_price(Decimal(repr(float(configs.price_per_hour[index]))))),
        "effective_price_per_hour": str(
            round_price(Decimal(repr(float(configs.effective_price_per_hour[index]))))
        ),
        "hours": _rounded(configs.hours[index], 3),
        "total_cost": money,
        "currency": options.currency,
        "price_observed_at": observed_at.isoformat(),
        "price_age_days": max(0, (now - observed_at).days),
        "observation_id": int(offer["observation_id"]) if pd.notna(offer["observation_id"]) else None,
        "basis": "measured" if shapes.measured[shape] else "estimated",
        "fits": fits,
        "pareto": fits and (shape, float(total)) in front,
        "memory_per_gpu_gib": _rounded(shapes.total_gib[shape], 2),
        "required_per_gpu_gib": _rounded(shapes.required_gib[shape], 2),
        "reasons": reasons_for(index, offer, shapes, configs, spec, options, plan, now - observed_at),
    }


def _money(value: float, currency: str) -> str:
    return str(round_money(Decimal(repr(float(value))), currency))


def _rounded(value: float, digits: int) -> float | None:
    return round(float(value), digits) if math.isfinite(value) else None


def reasons_for(index, offer, shapes: Shapes, configs, spec, options, plan, age) -> list[str]:
    shape = int(configs.shape[index])
    reasons = [_memory_reason(shapes, shape, spec)]
    if shapes.incompatible[int(shapes.kind[shape])]:
        reasons.append("incompatible: " + shapes.incompatible[int(shapes.kind[shape])])
    if not math.isfinite(shapes.hours[shape]):
        reasons.append("speed not estimated for this GPU and plan")
    reasons.append(_hours_reason(shapes, shape, spec, plan, options))
    reasons.extend(_pricing_reasons(index, offer, configs, shapes, shape, spec, options))
    reasons.extend(_host_reasons(offer, shapes, shape))
    reasons.append(f"price observed {age.days} days ago ({pd.Timestamp(offer['observed_at']):%Y-%m-%d})")
    return [reason for reason in reasons if reason]


def _memory_reason(shapes: Shapes, shape: int, spec) -> str:
    required, capacity = shapes.required_gib[shape], shapes.capacity_gib[shape]
    if not math.isfinite(required):
        return "not a valid plan for this GPU count"
    verb = "fits" if required <= capacity else "does not fit"
    return (
        f"{verb}: needs {required:.1f} GiB per GPU with {spec.headroom:.0%} headroom "
        f"(peak {shapes.total_gib[shape]:.1f}) on a {capacity:.1f} GiB card"
    )


def _hours_reason(shapes: Shapes, shape: int, spec, plan: str, options) -> str:
    label = PLAN_LABELS[plan]
    if not spec.is_training:
        return f"{options.serving_hours:g} h of serving priced ({label})"
    if shapes.measured[shape]:
        return (
            f"measured: hours from a benchmark of this GPU at {int(shapes.total_gpus[shape])} GPUs ({label})"
        )
    share = shapes.communication_share[shape]
    text = f"estimated: {label}, communication {share:.0%} of step time" if math.isfinite(share) else ""
    if math.isfinite(share) and share > COMMUNICATION_WARNING_SHARE:
        text += " (over 30%: adding GPUs stops scaling linearly)"
    return text


def _pricing_reasons(index, offer, configs, shapes, shape, spec, options) -> list[str]:
    model = offer["pricing_model"]
    if model in COMMITTED_MODELS:
        return [f"{model}: effective hourly rate, assumes the commitment is kept busy by other work"]
    if model != "spot":
        return []
    if configs.spot_refused[index]:
        if not spec.is_training:
            return ["spot unsuitable: online inference drops live requests when an instance is reclaimed"]
        if not options.can_checkpoint:
            return ["spot unsuitable: the job cannot checkpoint"]
        return ["spot unsuitable: reclaiming one instance stalls the others; keep the job on one instance"]
    overhead = configs.effective_price_per_hour[index] / configs.price_per_hour[index] - 1.0
    band = int(offer["band"])
    source = "advisor band" if offer["band_known"] else "assumed band (no advisor data)"
    return [f"spot: +{overhead:.2%} checkpoint/interruption overhead at {source} {band}"]


def _host_reasons(offer, shapes: Shapes, shape: int) -> list[str]:
    reasons, per_instance = [], int(offer["gpu_per_instance"])
    vcpus = offer["vcpus"]
    if pd.notna(vcpus) and float(vcpus) < VCPUS_PER_GPU * per_instance:
        reasons.append(
            f"warning: {float(vcpus):g} vCPUs for {per_instance} GPUs (guides: at least 4 per GPU)"
        )
    ram = offer["memory_gib"]
    gpu_memory = shapes.capacity_gib[shape] * per_instance
    if pd.notna(ram) and float(ram) < gpu_memory:
        reasons.append(f"warning: {float(ram):g} GiB RAM under the {gpu_memory:.0f} GiB of GPU memory")
    return reasons
