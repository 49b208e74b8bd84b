"""Result rows: the JSON contract of one ranked configuration, with its reasons in words."""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Mapping
from decimal import Decimal
from functools import lru_cache
from typing import Any

import numpy as np

from pricing.price_quality import ILLUSTRATIVE, QUOTED, SNAPSHOT, quality_text
from procurement.costing.spot import band_interruption_rate_per_hour, reclaim_exposure_text
from procurement.costing.values import round_money, round_price, round_quantity
from procurement.ranking.breakdown import explain_costs
from procurement.ranking.configurations import Configurations
from procurement.ranking.contract import differences, pipeline_degree, split_degrees
from procurement.ranking.deadline import DeadlineView, spot_wall_clock
from procurement.ranking.interconnect_rows import interconnect_row
from procurement.ranking.offers import PreparedOffers
from procurement.ranking.options import (
    COMMITTED_MODELS,
    GPU_ONLY_REASON,
    NO_FABRIC_REASON,
    PLAN_NAMES,
    RankingOptions,
    plan_label,
)
from procurement.ranking.serving import (
    image_serving_details,
    latency_misses,
    serving_reason,
    significant_figures,
)
from procurement.ranking.shapes import Shapes
from procurement.ranking.spot_details import known_offer_id, spot_details
from procurement.ranking.warnings import host_texts, row_warnings, spot_sanity_details
from procurement.sizing.accuracy import workload_accuracy
from procurement.sizing.communication_text import communication_phrase, communication_warns
from procurement.sizing.global_batch import batch_at, data_parallel_ranks
from procurement.sizing.gpus import gpu_by_slug
from procurement.sizing.host import feeds_loader, loader_host_note, loader_images_per_vcpu
from procurement.sizing.host_arch import aarch64_host, aarch64_loader_warning
from procurement.sizing.image_model import memory_format_note, training_speed_warnings
from procurement.sizing.pipeline_bubble import pipeline_bubble_warning


def describe(
    index: int,
    prepared: PreparedOffers,
    shapes: Shapes,
    configs: Configurations,
    spec,
    options,
    front,
    now,
    *,
    simulate_spot: bool = False,
    price_histories: Mapping[int, Any] | None = None,
    on_demand_prices: Mapping[int, float] | None = None,
    deadline_view: DeadlineView | None = None,
    fallback_offers: Mapping[int, Mapping[str, Any]] | None = None,
    spot_walls: Mapping[int, Any] | None = None,
) -> dict[str, Any]:
    """One result row as the JSON contract, with the reasons in words; spot rows add a ``spot`` object
    (with the seeded simulation's P50/P90 when ``simulate_spot``, on ``price_histories[offer_id]`` when
    there is one); ``spot_walls``: the spot rows' wall clocks simulated for the ranking (``spot_wall_clocks``)."""
    offer_index, shape = int(configs.offer[index]), int(configs.shape[index])
    offer = prepared.row(offer_index)
    fits = bool(configs.fits[index])
    total = configs.total_cost[index]
    observed_at = offer["observed_at"] = prepared.observed_at(offer_index)
    plan = PLAN_NAMES[int(shapes.plan[shape])]
    money = _money(total, options) if fits and math.isfinite(total) else None
    # the reasons and the warnings both read the host texts (an offer priced per GPU has none)
    host = None if offer["gpu_only"] else host_texts(offer, shapes, shape)
    row = {
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
            "pipeline_parallel": int(shape_pipeline(shapes, shape, spec)),
            **split_degrees(spec),
        },
        "pricing_model": offer["pricing_model"],
        "payment_option": offer["payment_option"],
        "commitment_kind": offer.get("commitment_kind") or "",
        "price_per_hour": _price(configs.listed_price_per_hour(index), options),
        "effective_price_per_hour": _price(configs.effective_price_per_hour(index), options),
        "hours": _priced_hours(configs.hours[index]),
        "total_cost": money,
        "currency": options.currency,
        "price_observed_at": prepared.observed_text(offer_index),
        "price_age_days": max(0, (now - observed_at).days),
        "stale": bool(offer["stale"]),
        "price_stale_after_hours": _rounded(offer["stale_after_hours"], 1),
        "gpu_only_price": bool(offer["gpu_only"]),
        "observation_id": _optional_int(offer["observation_id"]),
        "offer_id": _optional_int(offer.get("offer_id") or None),  # the offer page (spot history, zones)
        "basis": "measured" if shapes.measured[shape] else "estimated",
        "fits": fits,
        "tight": bool(shapes.tight[shape]) and fits,
        "pareto": fits and (shape, float(total)) in front,
        "memory_per_gpu_gib": _rounded(shapes.total_gib[shape], 2),
        "required_per_gpu_gib": _rounded(shapes.required_gib[shape], 2),
        "memory_margin": memory_margin(shapes, shape, spec) if fits else None,
        "reasons": reasons_for(index, offer, shapes, configs, spec, options, plan, now - observed_at, host),
        "price_quality": str(offer["price_quality"]),
        "price_quality_text": _quality_text(str(offer["price_quality"]), observed_at, now),
        "warnings": row_warnings(index, offer, shapes, configs, options, host=host),
        "interconnect": interconnect_row(shapes, shape, spec, offer["instance_type"]),
        "accuracy": workload_accuracy(spec),  # the class table is read once per process
    }
    fallback_plan = (
        deadline_view.plans.get(index) if deadline_view and index in deadline_view.fallback_config else None
    )
    row["differs_from_spec"] = differences(
        spec,
        row["gpus"] if spec.is_training else row["gpus_per_instance"],
        row["plan"]["zero_stage"],
        row["plan"]["tensor_parallel"],
        row["plan"]["pipeline_parallel"],
    )
    if row["differs_from_spec"]:
        row["reasons"].append("differs from the spec: " + "; ".join(row["differs_from_spec"]))
    row |= explain_costs(
        index,
        prepared,
        shapes,
        configs,
        spec,
        options,
        money,
        fallback_plan.expected_cost if fallback_plan else None,
    )
    row["warnings"] = row.get("warnings", []) + _memory_warnings(shapes, shape, spec, fits)
    row["warnings"] += training_speed_warnings(spec)  # RT-DETR's rate, unpriced validation (aud47i)
    row_spec, batch_text = row_batch(spec, row["gpus"], row["plan"], bool(row["differs_from_spec"]), options)
    if batch_text:
        row["reasons"].append(batch_text)
    bubble_text = pipeline_bubble_warning(row_spec, int(row["plan"]["pipeline_parallel"]))
    if bubble_text:  # fewer micro-batches a step than pipeline stages (aud51p)
        row["warnings"].append(bubble_text)
    loader_text = _loader_host_text(offer, shapes, shape, spec)
    if loader_text:
        row["warnings"].append(loader_text)
    layout_text = _layout_text(offer, spec)
    if layout_text:  # a convnet in NCHW: the transposes' upper bound (fixrn2)
        row["warnings"].append(layout_text)
    arm_host = aarch64_host(offer["provider"], offer["instance_type"], offer["gpu"])
    if arm_host and feeds_loader(spec):  # the loader's rate is an x86 reading (audrn, fixrn2)
        row["warnings"].append(aarch64_loader_warning(arm_host, loader_images_per_vcpu(spec)))
    if offer["pricing_model"] == "spot":
        offer_id = offer.get("offer_id")
        row["spot"] = spot_details(
            offer,
            price_per_hour_usd=configs.price_per_hour(index),
            hours=float(configs.hours[index]),
            instances=row["instances"],
            spec=spec,
            options=options,
            simulate=simulate_spot and fits,
            price_history_usd=(price_histories or {}).get(int(offer_id))
            if known_offer_id(offer_id)
            else None,
            now=now,
            on_demand_price_usd=(on_demand_prices or {}).get(index),
        )
        row["spot"] = spot_sanity_details(row["spot"], offer, options)
    if "spot" in row:
        row["warnings"] += row["spot"]["warnings"]
        plan = row["spot"]["deadline_plan"]
        if plan and plan["available"]:
            _fallback_offer(plan, (fallback_offers or {}).get(index))
            row["reasons"].append(plan["text"])
    if spec.is_training:
        row["wall_clock"] = wall_clock_row(
            index, prepared, configs, spec, options, deadline_view, fits, (spot_walls or {}).get(index)
        )
        if row["wall_clock"] and row["wall_clock"].get("ranked_as") == "spot_with_fallback":
            row["ranked_as"] = "spot_with_fallback"
            row["spot"]["fallback"] = row["spot"]["deadline_plan"]  # the spot report reads this one
            row["reasons"].append(
                f"ranked as spot with on-demand fallback: on spot alone the job finishes in "
                f"{row['wall_clock']['hours_at_probability']:g} h at P{options.deadline_probability:.0%}, "
                f"past the {options.deadline_hours:g} h deadline"
            )

    if not spec.is_training:
        row["serving"] = serving_details(shapes, shape, spec, options, row["total_cost"])
    elif spec.model.image_arch is not None:
        row["training"] = image_training_details(spec, float(configs.hours[index]), row["gpus"])
    return row


def image_training_details(spec, hours: float, gpus: int) -> dict[str, Any]:
    """An image training row's speed in its own unit: the images the run trains on (image.train_steps x
    batch, or epochs x dataset) over the row's hours, the host loader's bound included, 3 significant
    figures."""
    images = float(spec.training_tokens or math.nan)  # an image path's 'token' is one image
    rate = images / (hours * 3600.0) if math.isfinite(hours) and hours > 0 else math.nan
    return {
        "unit": "image",
        "training_images": int(images) if math.isfinite(images) else None,
        "training_images_per_second": significant_figures(rate),
        "training_images_per_second_per_gpu": significant_figures(rate / gpus),
        "text": f"{significant_figures(rate):g} images/s over {gpus} GPU{'s' if gpus > 1 else ''}"
        if math.isfinite(rate)
        else "no rate for this plan",
    }


def wall_clock_row(
    index, prepared, configs, spec, options, view: DeadlineView | None, fits: bool, simulated=None
):
    """Compute hours and wall-clock P50/P90 side by side (and the quantile at the deadline probability):
    a spot row's from the seeded simulation (reclaims, checkpoint writes, restarts; ``simulated``: its
    ``spot_wall_clock`` when the ranking has it already), any other row's wall-clock is its compute hours
    (nothing reclaims it)."""
    hours = float(configs.hours[index])
    if not fits or not math.isfinite(hours):
        return None
    probability = float(options.deadline_probability)
    base = {"compute_hours": _priced_hours(hours), "probability": probability}
    if not prepared.columns["is_spot"][int(configs.offer[index])]:
        rounded = _priced_hours(hours)
        return base | {
            "p50_hours": rounded,
            "p90_hours": rounded,
            "hours_at_probability": rounded,
            "basis": "not reclaimed: wall-clock equals compute hours",
        }
    wall = (
        (view.wall.get(index) if view else None)
        or simulated
        or spot_wall_clock(index, configs, prepared, spec, options)
    )
    row = base | {
        "p50_hours": wall.p50_hours,
        "p90_hours": wall.p90_hours,
        "hours_at_probability": wall.at_probability_hours,
        "basis": wall.basis,
    }
    if options.deadline_hours is not None:
        alone = wall.at_probability_hours <= float(options.deadline_hours) + 1e-9
        row["meets_deadline_alone"] = alone
        if not alone and view is not None and index in view.fallback_config:
            row["ranked_as"] = "spot_with_fallback"
    return row


def _fallback_offer(plan: dict[str, Any], offer: Mapping[str, Any] | None) -> None:
    """Name the on-demand offer the plan falls back on."""
    if offer is None:
        return
    plan["fallback_offer"] = {
        "provider": offer["provider"],
        "instance_type": offer["instance_type"],
        "region": offer["region"],
    }
    plan["text"] += (
        f"; falls back on {offer['provider']} {offer['instance_type']} {offer['region']} on demand"
    )


def serving_details(shapes: Shapes, shape: int, spec, options, money: str | None) -> dict[str, Any]:
    """A serving row's month: instances for the demand, throughput and latency, cost per month."""
    instances = int(shapes.instances[shape])
    unit, tpot, ttft = shapes.serving_at(shape)
    demand = spec.inference.demand_tokens_per_second
    total = float(shapes.generated_tokens_per_second[shape])
    images = image_serving_details(spec, unit, tpot, total) if spec.model.is_image else {}
    # a generation job (image.images) is priced for its images' hours: it has no month of serving
    job = _is_image_job(spec)
    priced = {
        "priced_as": "job" if job else "month",
        "hours_per_month": None if job else options.serving_hours,
        "cost_per_month": None if job else money,
    }
    if job:
        priced |= {
            "job_images": spec.image.images,
            "job_hours": _priced_hours(shapes.hours[shape]),
            "job_cost": money,
        }
    return (
        priced
        | {
            "instances": instances,
            "replicas_basis": "demand" if demand is not None else "one replica (no demand stated)",
            "demand_tokens_per_second": demand,
            "tokens_per_second_per_instance": _rounded(unit, 1),
            "tokens_per_second": _rounded(total, 1),
            "time_per_output_token_ms": _rounded(tpot, 2),
            "time_to_first_token_ms": _rounded(ttft, 1),
            "text": serving_reason(spec, instances, unit, tpot, ttft),
        }
        | images
    )


def _layout_text(offer, spec) -> str | None:
    """image_model.memory_format_note on the row's card (its generation decides whether fp32 convolutions run
    on TF32 tensor cores); None where the spec is not an NCHW convnet."""
    if spec.model.image_arch is None or spec.image.memory_format != "nchw":
        return None
    try:
        generation = gpu_by_slug(offer["gpu"]).generation
    except KeyError:  # a card the bundled datasheets do not hold: no tensor-core claim for fp32
        generation = None
    return memory_format_note(spec, generation)


def _loader_host_text(offer, shapes: Shapes, shape: int, spec) -> str | None:
    """sizing.host.loader_host_note at the vCPUs per GPU the row's hours take (configurations.configure): the
    offer's own, else (unknown to the catalog) the pipeline's need the row assumes; the GPU's images/s a GPU from
    the shape's step on its GPUs alone (a measured shape: its hours)."""
    if not feeds_loader(spec) or not spec.training_tokens:
        return None
    per_instance = int(offer["gpu_per_instance"]) or 1
    vcpus = float(offer["vcpus"])
    assumed = "the offer's own vCPUs"
    if math.isnan(vcpus):
        vcpus, assumed = (
            float(shapes.assumed_vcpus[shape]),
            "the default: the offer's vCPUs are not in the catalog",
        )
    gpus = float(shapes.total_gpus[shape])
    rows = shapes.communication
    if shapes.measured[shape] or "gpu_step_seconds" not in rows:  # a benchmark's hours: its own rate
        gpu_rate = float(spec.training_tokens) / (float(shapes.hours[shape]) * 3600.0) / gpus
    else:  # the model's step on the GPUs alone (throughput.training_throughput's gpu_step_seconds)
        rate, step, gpu_step = (
            float(np.asarray(rows[key])[shape])
            for key in ("training_tokens_per_second", "step_seconds", "gpu_step_seconds")
        )
        gpu_rate = rate * step / gpu_step / gpus
    return loader_host_note(spec, gpu_rate, vcpus / per_instance, assumed)


def _memory_warnings(shapes: Shapes, shape: int, spec, fits: bool) -> list[str]:
    if not (fits and shapes.tight[shape]):
        return []
    return [
        f"tight: the peak of {shapes.total_gib[shape]:.1f} GiB fits the {shapes.capacity_gib[shape]:.1f} GiB "
        f"card, but not with {spec.headroom:.0%} headroom ({shapes.required_gib[shape]:.1f} GiB); ranked after "
        f"configurations with headroom: {tight_risk(spec)}"
    ]


def tight_risk(spec) -> str:
    """What can still run a tight row out of memory, from what its peak already counts: a serving peak
    holds every stream's KV cache at the full context, so a long request is not the risk; a training peak
    holds the activations of one micro-batch at the spec's sequence length."""
    if spec.model.is_image:
        batch = "batch" if not spec.is_training else "micro-batch"
        return (
            f"the peak counts a {batch} of {spec.micro_batch_size}; it fits only inside the headroom: "
            f"allocator fragmentation or a larger {batch} can run out of memory"
        )
    if not spec.is_training:
        streams = spec.inference.concurrency
        return (
            f"the peak counts the KV cache at the full context ({spec.inference.context_len:,} tokens x "
            f"{streams} stream{'s' if streams > 1 else ''}); it fits only inside the headroom: allocator "
            "fragmentation or a larger batch can run out of memory"
        )
    return (
        f"the peak counts the activations of a micro-batch of {spec.micro_batch_size} at {spec.memory_seq_len:,} "
        "tokens; it fits only inside the headroom: allocator fragmentation, a longer sequence or a larger "
        "micro-batch can run out of memory"
    )


def memory_margin(shapes: Shapes, shape: int, spec) -> dict[str, Any] | None:
    """The room left on the card at the estimated peak: GiB free, and the headroom that still fits (a
    tight row's "lower the headroom to this, knowingly")."""
    margin = _margin(float(shapes.total_gib[shape]), float(shapes.capacity_gib[shape]), spec.headroom)
    return None if margin is None else dict(margin)  # a copy: a row's dict is its own


@lru_cache(maxsize=16384, typed=True)  # typed: the asked headroom is stored as given
def _margin(peak: float, capacity: float, headroom: float) -> dict[str, Any] | None:
    if not (math.isfinite(peak) and peak > 0):
        return None
    return {
        "peak_gib": round(peak, 2),
        "capacity_gib": round(capacity, 2),
        "margin_gib": round(capacity - peak, 2),
        "headroom_asked": headroom,
        "headroom_that_fits": round(capacity / peak - 1.0, 3),
    }


def _optional_int(value) -> int | None:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else int(value)


def _money(value: float, options: RankingOptions) -> str:
    """A USD float as money in the requested currency: converted exactly in Decimal, rounded once."""
    return str(round_money(Decimal(repr(float(value))) * options.fx_rate_from_usd, options.currency))


def _price(value: float, options: RankingOptions) -> str:
    return _price_text(float(value), options.fx_rate_from_usd)


@lru_cache(maxsize=16384)
def _price_text(value: float, rate: Decimal) -> str:
    """An hourly USD price in the row's currency (the same offers' prices recur across a recompute)."""
    return str(round_price(Decimal(repr(value)) * rate))


def _priced_hours(value: float) -> float | None:
    """The hours the row's money is priced on (breakdown.priced_parts), to the 6 decimals it uses."""
    value = float(value)
    return float(round_quantity(value)) if math.isfinite(value) else None


def _rounded(value: float, digits: int) -> float | None:
    value = float(value)  # once: the figures are numpy scalars, and a float's checks are cheaper
    return round(value, digits) if math.isfinite(value) else None


def _measured_gpus(shapes: Shapes, shape: int) -> int | None:
    """The GPU count of the benchmark a measured shape was scaled from (None: no benchmark)."""
    if shapes.measured_gpus is None or not math.isfinite(shapes.measured_gpus[shape]):
        return int(shapes.total_gpus[shape]) if shapes.measured[shape] else None
    return int(shapes.measured_gpus[shape])


def _calibration_text(slug: str, spec, options, *, measured: bool = False) -> str:
    """'calibrated from N runs (factor x.xx)' when a fitted factor moved this GPU's estimate (a measured
    row's hours come from the benchmark, so only its memory note applies)."""
    factor = options.calibration.get((slug, spec.task)) if options.calibration else None
    if factor is None:
        return ""
    parts = []
    if spec.is_training and not spec.mfu and not measured and factor.throughput_factor != 1.0:
        parts.append(f"speed {factor.text('throughput')}")
    if factor.memory_factor != 1.0:
        parts.append(f"memory {factor.text('memory')}")
    return "; ".join(parts)


# configurations.ranked_order: GPUs that talk over an assumed link are ordered like a tight fit (issue 26)
UNSTATED_LINK_ORDER_REASON = (
    "this plan's GPUs talk over that assumed link: ranked below the first row on a documented link"
)


# configurations.ranked_order: a host below the rule of thumb its row warns about is ordered like a tight fit
HOST_ORDER_REASON = "the host is below that rule of thumb: ranked below the first row whose host meets it"
# ... and so is a production serving row whose host the catalog does not know (aud51x, stop 52): one host doubt,
# the same as a known host below its rule, so the two are compared like for like (then by cost)
HOST_UNKNOWN_ORDER_REASON = (
    "the host's figures are not known, so the serving host rule is not checked: one host doubt, as a host "
    "below the rule; ranked below the first row whose host is known and meets it"
)


# every fitting row's host is unknown (configurations.Configurations.host_unknown_everywhere): said once, on row 1
# (rank.rank_workload), and no row claims a rank below a known host that no row has (audhd, stop 52)
NO_KNOWN_HOST_TEXT = (
    "no offer here has a known host: the host rule is checked on none, so the host orders no row"
)
HOST_UNKNOWN_TEXT = "the host's figures are not known, so the serving host rule is not checked"
# configurations.HOST_SHORT_TOLERANCE's grade, in words
SEVERE_HOST_TEXT = "short by more than 10% of the RAM or of both rules: two host doubts, ranked after a host that is not known"


def host_unknown_reason(offer, shapes: Shapes, shape: int, everywhere: bool) -> str:
    """Why an unknown host is a doubt: the serving rule unchecked, or, where the plan offloads to the CPU, the host
    RAM limit unchecked, with the RAM needed (configurations.offload_host_unknown). Where every fitting row's host
    is unknown the doubt orders nothing, and the row says only what is unchecked."""
    offloaded = float(shapes.offloaded_per_gpu_gib[shape])
    if offloaded > 0:
        needed = float(shapes.host_ram_gib[shape])
        text = (
            f"the plan offloads to the CPU, so host RAM is a limit ({needed:.1f} GiB needed), and the host's RAM "
            + (
                f"is known only as the smallest of the provider's listed hosts, {float(offer['memory_gib']):g} GiB"
                if offer.get("host_lower_bound") and not math.isnan(float(offer["memory_gib"]))
                else "is not known"
            )
            + ": not checked; one host doubt"
        )
    elif not everywhere:
        return HOST_UNKNOWN_ORDER_REASON
    else:
        text = HOST_UNKNOWN_TEXT + ": one host doubt, as a host below the rule"
    if everywhere:
        return text
    return text + "; ranked below the first row whose host is known and meets it"


def host_order_reason(offer, shapes: Shapes, shape: int, spec, severe: bool = False) -> str:
    """HOST_ORDER_REASON with the rule the host misses and by how much (aud51x, stop 52: a known host 0.3 GiB
    short was demoted in words that did not say it was 0.3 GiB): the same comparisons as
    configurations.host_shortfall; a severe shortfall (configurations.host_severe) says it counts two."""
    misses = host_misses(offer, shapes, shape, spec)
    if not misses:
        return HOST_ORDER_REASON
    grade = f" ({SEVERE_HOST_TEXT})" if severe else ""
    return f"the host misses {' and '.join(misses)}{grade}: ranked below the first row whose host meets it"


def host_misses(offer, shapes: Shapes, shape: int, spec) -> list[str]:
    """Each host rule the offer misses, with the shortfall: RAM under what the stack holds, vCPUs under the
    per-GPU rule (not where an image loader's rate costs them: feeds_loader)."""
    misses = []
    ram, vcpus = float(offer["memory_gib"]), float(offer["vcpus"])
    if shapes.host_ram_stack_gib is not None:
        stack = float(shapes.host_ram_stack_gib[shape])
        if ram < stack:
            misses.append(
                f"the RAM its stack holds by {stack - ram:.1f} GiB ({ram:g} of {stack:.1f} GiB, "
                f"{(stack - ram) / stack:.1%} short)"
            )
    needed = float(shapes.host_vcpus[shape])
    if not feeds_loader(spec) and vcpus < needed:
        misses.append(f"the vCPU rule by {needed - vcpus:g} ({vcpus:g} of {needed:g} vCPUs)")
    return misses


# configurations.ranked_order: a serving replica split over consumer cards is ordered like a tight fit
CONSUMER_SPLIT_ORDER_REASON = (
    "a serving replica split over consumer cards: ranked below the first row that is not one"
)


def shape_pipeline(shapes: Shapes, shape: int, spec) -> float:
    """The row's pipeline degree: a serving pipeline plan's, else the spec's."""
    return pipeline_degree(spec) if shapes.pipeline is None else float(shapes.pipeline[shape])


# [V1-SCHED] vLLM v1/core/sched/scheduler.py skips a running request with num_new_tokens == 0 ("PP>1 and we have
# already scheduled all prompt tokens but they are not finished yet"): a V1 micro-batch is whichever streams are not
# in flight, so the split follows arrival timing; vllm-project/vllm PR #57433 ("Balance async PP decode batches")
# reports uneven groups and +22.95% output throughput from balancing them. V0's one scheduler a stage (vllm_v0)
# balances them (llm_engine.add_request: the scheduler with the fewest unfinished groups).
V1_PIPELINE_UPPER_BOUND = (
    "its throughput is an upper bound: balanced micro-batches, which vLLM V1's scheduler does not keep (it skips "
    "streams in flight, so micro-batches follow arrival; vLLM PR #57433: +22.95% from balancing them)"
)


def serving_pipeline_label(spec, pipeline: int, tensor_parallel: int = 1) -> str:
    """A serving pipeline plan in words, with why it is (or is not only) tensor parallel."""
    stated = "pipeline_parallel" in spec.parallelism.stated
    why = (
        "parallelism.pipeline_parallel as stated"
        if stated
        else f"no tensor-parallel degree of {pipeline} splits the model; vLLM's guide: TP 1 x PP = the GPUs"
    )
    stage = "one send of activations a stage"
    if tensor_parallel > 1:
        stage = f"each stage a TP group of {tensor_parallel} with its all-reduces, " + stage
    label = (
        f"pipeline parallel within the instance (TP {tensor_parallel} x PP {pipeline}: {why}; the stages' "
        f"micro-batches in flight, {stage})"
    )
    if spec.inference.engine != "vllm_v0":
        label += f"; {V1_PIPELINE_UPPER_BOUND}"
    return label


def reasons_for(index, offer, shapes: Shapes, configs, spec, options, plan, age, host=None) -> list[str]:
    shape = int(configs.shape[index])
    reasons = [_memory_reason(shapes, shape, spec)]
    if shapes.incompatible[int(shapes.kind[shape])]:
        reasons.append("incompatible: " + shapes.incompatible[int(shapes.kind[shape])])
    if shapes.no_fabric[shape]:
        reasons.append(NO_FABRIC_REASON.format(instance_type=offer["instance_type"]))
    elif not math.isfinite(shapes.hours[shape]):
        reasons.append("speed not estimated for this GPU and plan")
    reasons.append(_hours_reason(shapes, shape, spec, plan, options))
    kind = int(shapes.kind[shape])
    if kind < len(shapes.speed_basis) and shapes.speed_basis[kind] and not shapes.measured[shape]:
        reasons.append(shapes.speed_basis[kind])
    measured_gpus = _measured_gpus(shapes, shape)
    measured_on = options.measured_dates.get((offer["gpu"], measured_gpus))
    if shapes.measured[shape] and measured_on:
        reasons.append(f"measured on {measured_on} (benchmark of the same model shape, method and precision)")
    calibrated = _calibration_text(offer["gpu"], spec, options, measured=bool(shapes.measured[shape]))
    if calibrated:
        reasons.append(calibrated)
    reasons.extend(_pricing_reasons(index, offer, configs, shapes, shape, spec, options))
    reasons.extend(_offer_reasons(offer, shapes, shape, host))
    severe = configs.host_severe is not None and bool(configs.host_severe[index])
    if configs.host_doubt[index]:
        reasons.append(host_order_reason(offer, shapes, shape, spec, severe=severe))
    elif configs.host_unknown is not None and configs.host_unknown[index]:
        reasons.append(host_unknown_reason(offer, shapes, shape, configs.host_unknown_everywhere))
    if configs.consumer_split[index]:
        reasons.append(CONSUMER_SPLIT_ORDER_REASON)
    link = shapes.links[int(shapes.link[shape])]
    if not link.stated and int(offer["gpu_per_instance"]) > 1:
        reasons.append(
            f"GPU link within {offer['instance_type']} not stated by the catalog: {link.node_name} assumed"
        )
        if configs.unstated_link[index]:
            reasons.append(UNSTATED_LINK_ORDER_REASON)
    if offer["price_quality"] == SNAPSHOT:  # its timestamp is the bundling day, not the data date
        reasons.append(_dated_quality_text(SNAPSHOT, offer["observed_at"]))
    else:
        reasons.append(_observed_text(age.days, offer["observed_at"]))
    reasons.append(stale_reason(offer, age))
    if options.currency != "USD":
        reasons.append(f"money converted from USD at {options.fx_rate_from_usd} {options.currency} per USD")
    return [reason for reason in reasons if reason]


@lru_cache(maxsize=16384)
def _observed_text(days: int, observed_at: dt.datetime) -> str:
    return f"price observed {days} days ago ({observed_at:%Y-%m-%d})"


def stale_reason(offer: Mapping[str, Any], age: dt.timedelta) -> str:
    """Why a price is stale (docs/provider-prices.md, "Stale prices"); "" when it is not."""
    if not offer["stale"]:
        return ""
    hours = age.total_seconds() / 3600.0
    old = f"{int(hours // 24)} days" if hours >= 48 else f"{hours:.0f} hours"
    if offer["scheduled"]:
        return f"stale: price is {old} old, older than twice its refresh schedule"
    limit_days = offer["stale_after_hours"] / 24.0
    return f"stale: price is {old} old, a snapshot past the {limit_days:g}-day limit (no refresh schedule)"


def _memory_reason(shapes: Shapes, shape: int, spec) -> str:
    return _memory_text(
        float(shapes.required_gib[shape]),
        float(shapes.capacity_gib[shape]),
        float(shapes.total_gib[shape]),
        spec.headroom,
    )


@lru_cache(maxsize=16384)
def _memory_text(required: float, capacity: float, peak: float, headroom: float) -> str:
    """The memory reason from its figures alone (a shape's figures recur for every workload of its size)."""
    if not math.isfinite(required):
        return "not a valid plan for this GPU count"
    if required > capacity and peak <= capacity:
        return (
            f"tight: peak {peak:.1f} GiB per GPU fits a {capacity:.1f} GiB card, but not with "
            f"{headroom:.0%} headroom ({required:.1f} GiB); margin {capacity - peak:.1f} GiB, "
            f"{capacity / peak - 1.0:.0%} headroom fits"
        )
    verb = "fits" if required <= capacity else "does not fit"
    return (
        f"{verb}: needs {required:.1f} GiB per GPU with {headroom:.0%} headroom "
        f"(peak {peak:.1f}) on a {capacity:.1f} GiB card"
    )


def _hours_reason(shapes: Shapes, shape: int, spec, plan: str, options) -> str:
    tensor_parallel, gpus, zero = (
        int(shapes.tensor_parallel[shape]),
        int(shapes.total_gpus[shape]),
        int(shapes.zero[shape]),
    )
    pipeline = int(shape_pipeline(shapes, shape, spec))
    label = plan_label(
        plan,
        tensor_parallel=tensor_parallel,
        gpus=gpus,
        zero=zero,
        pipeline=pipeline if spec.is_training else 1,
        context=spec.parallelism.context_parallel if spec.is_training else 1,
    )
    if not spec.is_training and pipeline > 1:
        label = serving_pipeline_label(spec, pipeline, tensor_parallel)
    if not spec.is_training and _is_image_job(spec):
        return _image_job_reason(spec, shapes.serving_at(shape)[0], label)
    if not spec.is_training:
        unit, tpot, ttft = shapes.serving_at(shape)
        text = f"{options.serving_hours:g} h of serving priced ({label}): cost per month, no reruns, no setup"
        if not math.isfinite(unit):
            return text
        misses = "; ".join(latency_misses(spec, tpot, ttft))
        instances = int(shapes.instances[shape])
        return f"{text}; {serving_reason(spec, instances, unit, tpot, ttft)}" + (
            f"; {misses}" if misses else ""
        )
    if shapes.measured[shape]:
        total, measured_gpus = int(shapes.total_gpus[shape]), _measured_gpus(shapes, shape)
        if measured_gpus in (None, total):
            return f"measured: hours from a benchmark of this GPU at {total} GPUs ({label})"
        return (
            f"measured: hours from a benchmark of this GPU at {measured_gpus} GPUs, scaled to {total} with "
            f"the communication model ({label})"
        )
    link = shapes.links[int(shapes.link[shape])] if shapes.total_gpus[shape] > 1 else None
    return _estimated_text(
        label,
        float(shapes.communication_share[shape]),
        _exposed_share(shapes, shape),
        link,
        bool(shapes.instances[shape] > 1),
    )


def _exposed_share(shapes: Shapes, shape: int) -> float:
    """The share of the step the traffic costs (exposed_communication_share); NaN where not estimated."""
    exposed = shapes.communication.get("exposed_communication_share")
    return math.nan if exposed is None else float(exposed[shape])


def _is_image_job(spec) -> bool:
    """A generation job (`image.images` stated): priced for its images' hours, not as a month of serving
    (shapes.py: hours = images / images per second)."""
    return spec.model.image_arch is not None and bool(spec.image.images)


def _image_job_reason(spec, images_per_second: float, label: str) -> str:
    """An image job row's hours reason: the images and the rate its hours come from."""
    images = spec.image.images
    if not math.isfinite(images_per_second) or images_per_second <= 0:
        return f"{images:,} images priced as a job ({label}): no rate for this plan"
    return (
        f"{images:,} images priced as a job ({label}): hours = the images at {images_per_second:,.2f} "
        f"images/s an instance, no reruns, no setup"
    )


@lru_cache(maxsize=16384)
def _estimated_text(label: str, share: float, exposed: float, link, several_instances: bool) -> str:
    """An estimated row's hours reason (``link``: None for one GPU): the communication it pays for, the
    exposed share first (communication_text)."""
    phrase = communication_phrase(exposed, share)
    text = f"estimated: {label}, communication {phrase}" if phrase else ""
    if text and link is not None:
        over = link.node_name + (
            f" within the instance, {link.fabric_name} between instances" if several_instances else ""
        )
        text += f" (over {over})"
    if communication_warns(exposed):
        text += " (exposed over 30%: adding GPUs stops scaling linearly)"
    return text


def _pricing_reasons(index, offer, configs, shapes, shape, spec, options) -> list[str]:
    model = offer["pricing_model"]
    if model in COMMITTED_MODELS:
        return [f"{model}: effective hourly rate, assumes the commitment is kept busy by other work"]
    if model != "spot":
        return []
    if configs.spot_refused[index]:
        if offer["spot_no_saving"]:
            return [
                f"spot unsuitable: the spot price {configs.price_per_hour(index):.4f} USD/h is at or above "
                f"on-demand {float(offer['on_demand_usd']):.4f} USD/h, so it saves nothing"
            ]
        if not spec.is_training:
            return ["spot unsuitable: online inference drops live requests when an instance is reclaimed"]
        if not options.can_checkpoint:
            return ["spot unsuitable: the job cannot checkpoint"]
        return ["spot unsuitable: a checkpoint write takes 15 min or more, the guides' whole interval"]
    overhead = configs.effective_price_per_hour(index) / configs.price_per_hour(index) - 1.0
    band = int(offer["band"])
    source = "advisor band" if offer["band_known"] else "assumed band (no advisor data)"
    reasons = [f"spot: +{overhead:.2%} checkpoint/interruption overhead at {source} {band}"]
    instances = int(configs.instances[index])
    if instances > 1:
        rate = band_interruption_rate_per_hour(band)
        reasons.append(f"spot: {reclaim_exposure_text(rate, instances)}")
    return reasons


def _offer_reasons(offer, shapes: Shapes, shape: int, host=None) -> list[str]:
    """What the offer itself allows: a whole instance, and a host for what the plan offloads; the host
    rules of thumb (procurement/sizing/host.py) are stated too, as warnings (ranking/warnings.py)."""
    if offer["gpu_only"]:
        return [GPU_ONLY_REASON]
    blocking, warnings = host or host_texts(offer, shapes, shape)
    return blocking + warnings + ([HOST_LOWER_BOUND_TEXT] if offer.get("host_lower_bound") else [])


# pricing/providers/skypilot_csv.py with_contradicting_hosts_at_smallest: the source lists this type with other
# host figures in other regions; the smallest of each is stored and checked (audhd, stop 52)
HOST_LOWER_BOUND_TEXT = (
    "host vCPUs and RAM: the smallest of the provider's listed hosts for this instance type (its regions list "
    "different figures), a lower bound"
)


def _quality_text(quality: str, observed_at: dt.datetime, now: dt.datetime) -> str:
    """``quality_text``; only an observed price's text reads ``now`` (its age): a snapshot's, a quote's
    and an illustrative price's are memoized per date (the same offers top most rankings of a
    recompute)."""
    if quality in (SNAPSHOT, QUOTED, ILLUSTRATIVE):
        return _dated_quality_text(quality, observed_at)
    return quality_text(quality, observed_at, now)


@lru_cache(maxsize=4096)
def _dated_quality_text(quality: str, observed_at: dt.datetime) -> str:
    return quality_text(quality, observed_at)


def row_batch(spec, gpus: int, plan: dict, differs: bool, options: RankingOptions):
    """(the spec at the row's micro-batches a step, what the row says of its batch): sizing.global_batch.batch_at
    at the row's data-parallel ranks (the shapes were sized so: ranking/shapes.py per_accumulation). A stated
    global batch is said on a row at another GPU count or plan; without one, a row at another GPU count says its
    global batch (micro x accumulation x data-parallel ranks) changes with its GPUs."""
    if not spec.is_training or not gpus:
        return spec, None
    ranks = data_parallel_ranks(
        int(gpus),
        int(plan["tensor_parallel"]),
        int(plan["pipeline_parallel"]),
        spec.parallelism.context_parallel,
    )
    batch = batch_at(spec, ranks)
    if batch is None:
        return spec, None
    row_spec, text = batch
    par = spec.parallelism
    if spec.global_batch_size is not None:
        said = differs or par.gpus_auto or options.explore_parallelism
    else:
        said = differs or par.gpus_auto
    return row_spec, text if said else None
