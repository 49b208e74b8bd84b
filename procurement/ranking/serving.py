"""Serving ranked as serving: replicas from demand, latency targets, a month of serving per row.

A serving configuration is one instance of the offer (its GPUs as data-parallel model copies or one
tensor-parallel group, within the node), replicated until it carries the demand:

    demand (tokens/s) = inference.tokens_per_second, or inference.requests_per_second x output_tokens
    instances         = ceil(demand / decode tokens/s of one instance), at least 1
    cost per month    = price per instance-hour x 730 h x instances (+ storage); no reruns, no setup

Without a demand figure a row prices one instance and says so. Latency targets make a configuration
infeasible when its estimate misses them: time per output token (one decode step of a stream, ms) over
``inference.tpot_ms``, or time to first token (the prefill, ms) over ``inference.ttft_ms``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from procurement.ranking.options import RankingOptions
from procurement.sizing import WorkloadSpec

MAX_REPLICAS = 4096  # a demand needing more instances than this is not a configuration we price


@dataclass(frozen=True)
class ServingFit:
    instances: np.ndarray  # instances of the offer the demand needs (1 without a demand figure)
    time_per_output_token_ms: np.ndarray
    time_to_first_token_ms: np.ndarray
    meets_targets: np.ndarray  # latency targets met and the replica count within MAX_REPLICAS


def serving_options(spec: WorkloadSpec, options: RankingOptions) -> RankingOptions:
    """A month of serving has no rerun budget and no one-off setup in it, and its instances come from the
    demand (one-instance configurations, replicated), not from ``instance_counts``; training keeps all three."""
    if spec.is_training:
        return options
    return replace(options, rerun_fraction=0.0, setup_hours=0.0, instance_counts=(1,))


def serving_fit(
    spec: WorkloadSpec, decode_total: np.ndarray, per_stream: np.ndarray, ttft_s: np.ndarray
) -> ServingFit:
    """Instances and latency per shape from one instance's decode tokens/s (total and per stream) and TTFT."""
    inference = spec.inference
    demand = inference.demand_tokens_per_second
    decode_total = np.asarray(decode_total, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        tpot_ms = 1000.0 / np.asarray(per_stream, dtype=float)
        needed = np.ceil(demand / decode_total) if demand else np.ones_like(decode_total)
    needed = np.where(np.isfinite(needed), np.maximum(needed, 1.0), np.nan)
    ttft_ms = 1000.0 * np.asarray(ttft_s, dtype=float)
    meets = np.isfinite(needed) & (needed <= MAX_REPLICAS)
    if inference.tpot_ms is not None:
        meets &= tpot_ms <= inference.tpot_ms
    if inference.ttft_ms is not None:
        meets &= ttft_ms <= inference.ttft_ms
    return ServingFit(np.where(meets, needed, 1.0), tpot_ms, ttft_ms, meets)


def serving_reason(
    spec: WorkloadSpec, instances: int, unit_tokens_per_second: float, tpot_ms: float, ttft_ms: float
) -> str:
    """Why the row has this many instances, and how it stands against the latency targets, in words."""
    inference = spec.inference
    demand = inference.demand_tokens_per_second
    if spec.model.is_image:
        text = image_serving_reason(spec, instances, unit_tokens_per_second, tpot_ms)
    elif demand is None:
        text = (
            f"one replica: the spec states no demand (inference.requests_per_second or tokens_per_second); "
            f"it serves {unit_tokens_per_second:,.0f} tokens/s at concurrency {inference.concurrency}"
        )
    else:
        text = (
            f"{instances} instance{'s' if instances > 1 else ''} for {demand:,.0f} tokens/s of demand "
            f"({unit_tokens_per_second:,.0f} tokens/s each at concurrency {inference.concurrency})"
        )
    targets = []
    if inference.tpot_ms is not None:
        targets.append(f"{tpot_ms:.1f} ms per output token (target {inference.tpot_ms:g})")
    if inference.ttft_ms is not None:
        targets.append(f"{ttft_ms:.0f} ms to first token (target {inference.ttft_ms:g})")
    return text + ("; " + ", ".join(targets) if targets else "")


def latency_misses(spec: WorkloadSpec, tpot_ms: float, ttft_ms: float) -> list[str]:
    inference, misses = spec.inference, []
    if inference.tpot_ms is not None and not tpot_ms <= inference.tpot_ms:
        misses.append(
            f"misses tpot_ms: {tpot_ms:.1f} ms per output token, over the {inference.tpot_ms:g} ms target"
        )
    if inference.ttft_ms is not None and not ttft_ms <= inference.ttft_ms:
        misses.append(
            f"misses ttft_ms: {ttft_ms:.0f} ms to first token, over the {inference.ttft_ms:g} ms target"
        )
    return misses


def image_serving_details(
    spec: WorkloadSpec, unit_images_per_second: float, batch_ms: float, images_per_second: float
) -> dict:
    """An image row's serving figures in images: the sizing path serves an image as a 'token' (a request is
    one image, image_model.inference_rows), so tokens/s are images/s and the per-stream 'time per output
    token' is the time of one batch, i.e. a request's latency. The token keys stay beside these for the
    clients that read them; `unit` says how to read them."""
    demand = spec.inference.demand_tokens_per_second
    return {
        "unit": "image",
        "demand_images_per_second": demand,
        "images_per_second_per_instance": significant_figures(unit_images_per_second),
        "images_per_second": significant_figures(images_per_second),
        "images_per_batch": spec.micro_batch_size,
        "seconds_per_batch": significant_figures(batch_ms / 1000.0),
    }


def image_serving_reason(
    spec: WorkloadSpec, instances: int, unit_images_per_second: float, batch_ms: float
) -> str:
    """The serving sentence of an image row, in images/s and seconds a batch."""
    demand, batch = spec.inference.demand_tokens_per_second, spec.micro_batch_size
    each = (
        f"{significant_figures(unit_images_per_second):g} images/s, {significant_figures(batch_ms / 1000.0):g} s a batch of "
        f"{batch} image{'s' if batch > 1 else ''}"
    )
    if demand is None:
        return f"one replica: the spec states no demand (inference.requests_per_second, images/s); it generates {each}"
    return (
        f"{instances} instance{'s' if instances > 1 else ''} for {demand:g} images/s of demand (each {each})"
    )


def significant_figures(value: float, digits: int = 3) -> float | None:
    """A rate or a time to `digits` significant figures (image rates run from 0.01 to 100s a second)."""
    value = float(value)
    if not np.isfinite(value) or value == 0.0:
        return None if not np.isfinite(value) else 0.0
    return float(f"{value:.{digits}g}")
