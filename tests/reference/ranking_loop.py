"""The straightforward per-offer loop that ``procurement.ranking`` must agree with (tests, benchmark).

Each offer, instance count and plan is sized and priced on its own with scalar calls into the same
sizing functions and the same cost formulas, and passes the same gates (memory, compatibility, host
RAM for offloaded state, whole-instance price, spot rules) at the same speeds (measured ratios for
non-NVIDIA and rack-scale parts), and identical rows in several regions are one row, as the ranking
shows them; no shapes, no index arrays. It is the reference the
vectorized ranking is checked against, and the baseline its speed is measured against.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from decimal import Decimal

import numpy as np
import pandas as pd

from procurement.costing.values import round_money, round_price, round_quantity
from procurement.ranking import (
    HOURS_PER_MONTH,
    PARTIAL_TENSOR_PARALLEL,
    PLAN_NAMES,
    PLANS,
    RankingOptions,
    incompatibility,
    prepare_offers,
    spot_overhead_by_band,
)
from procurement.ranking.configurations import checkpoint_too_slow
from procurement.ranking.interconnects import Interconnect
from procurement.ranking.measured import nearest_measured_count
from procurement.ranking.serving import serving_fit, serving_options
from procurement.ranking.shapes import (
    host_needs,
    link_rates,
    mesh_share,
    needs_missing_fabric,
    offloaded_per_gpu_gib,
    plan_validity,
    tensor_parallel_splits_heads,
    tensor_parallel_splits_mlp,
)
from procurement.ranking.spot_inputs import job_spot_timing
from procurement.sizing import (
    GpuSpec,
    WorkloadSpec,
    inference_throughput,
    memory_breakdown_gib,
    training_throughput,
)
from procurement.sizing.accelerators import effective_speed
from procurement.sizing.assumptions import TIGHT_UTILIZATION
from procurement.sizing.efficiency import serving_efficiency
from procurement.sizing.host import feeds_loader, stack_host_ram
from procurement.sizing.mfu import bandwidth_factor, estimate_mfu, memory_factor


def _memory_gib(
    spec: WorkloadSpec, gpu: GpuSpec, gpus: int, zero: int, tp: int, calibration=None, pp: int = 1
) -> tuple[float, float, float]:
    """(required GiB per GPU with headroom, GiB offloaded to host RAM per GPU, peak GiB per GPU)."""
    offload = spec.parallelism.offload if zero >= 1 else "none"  # as shapes._memory
    flash = spec.flash_attention and gpu.supports_flash_attention()
    table = memory_breakdown_gib(
        spec,
        gpus,
        zero_stage=zero,
        tensor_parallel=tp,
        pipeline_parallel=pp,
        offload=offload,
        flash_attention=flash,
    )
    factor = memory_factor(spec, gpu, calibration)
    return (
        float(table["required_per_gpu_gib"]) * factor,
        float(offloaded_per_gpu_gib(table["host_ram_gib"], gpus)),
        float(table["total_per_gpu_gib"]) * factor,
    )


def _speed(spec: WorkloadSpec, gpu: GpuSpec, mfu: float) -> tuple[float, float]:
    """(peak TFLOPS, memory bandwidth GB/s) the speed model runs this GPU at: the datasheet, or for an
    MI300X, Gaudi or GB200 the H100's speed times its published measured ratio (sizing/accelerators.py,
    issue 26 class 5); ``mfu`` is the training MFU the peak is multiplied by (serving reads none)."""
    peak = gpu.dense_tflops(spec.precision) or np.nan
    (peak,), (bandwidth,), _ = effective_speed(spec, [gpu], [peak], [mfu], [gpu.memory_bandwidth_gbps])
    return float(peak), float(bandwidth)


def _serving_instances(
    spec: WorkloadSpec, gpu: GpuSpec, gpus: int, tp: int, pp: int = 1, link: Interconnect | None = None
) -> float:
    """Instances a serving configuration needs for the spec's demand (NaN: it misses a latency target).
    A serving pipeline (pp > 1) keeps its stages' micro-batches in flight and sends over the node link."""
    peak, bandwidth = _speed(spec, gpu, 1.0)
    rows = inference_throughput(
        spec,
        bandwidth_gbps=bandwidth,
        peak_tflops=peak,
        gpu_counts=gpus,
        tensor_parallel=tp,
        **_pipeline_arguments(pp, link, gpus),
        generation=gpu.generation or 0,
        compute_efficiency=serving_efficiency(spec, gpu),
    )
    fit = serving_fit(
        spec,
        rows["decode_tokens_per_second_total"],
        rows["decode_tokens_per_second_per_stream"],
        rows["time_to_first_token_seconds"],
    )
    return float(fit.instances) if bool(fit.meets_targets) else math.nan


def _splits(spec: WorkloadSpec, tp: int) -> bool:
    """The TP degree splits the attention heads and the MLP (its int4 groups, block-FP8 experts)."""
    degree = np.array([float(tp)])
    return bool(tensor_parallel_splits_heads(spec, degree)[0] and tensor_parallel_splits_mlp(spec, degree)[0])


def _pipeline_arguments(pp: int, link: Interconnect | None, per_instance: int) -> dict:
    """inference_throughput's pipeline arguments: a serving pipeline plan's degree, its stages' link (the node
    link's per-GPU rate, shapes.link_rates) and whether that link is NVLink-class; TP plans: 1."""
    if pp <= 1 or link is None:
        return {"pipeline_parallel": 1}
    node_gbps, _ = link_rates(link, float(per_instance))
    return {
        "pipeline_parallel": pp,
        "pipeline_link_gbps": node_gbps,
        "tensor_parallel_nvlink": link.scale_up,
    }


def _hours(
    spec: WorkloadSpec,
    gpu: GpuSpec,
    gpus: int,
    zero: int,
    tp: int,
    options: RankingOptions,
    link: Interconnect,
    per_instance: int,
    pp: int = 1,
) -> float:
    mfu = estimate_mfu(spec, gpu, options.calibration) if spec.is_training else 1.0
    peak, bandwidth = _speed(spec, gpu, mfu)
    node_gbps, fabric_gbps = link_rates(link, float(per_instance))
    tp_gbps = node_gbps * float(mesh_share(tp, per_instance, link.mesh))
    dp_gbps = node_gbps * float(mesh_share(max(1.0, per_instance / tp), per_instance, link.mesh))
    if not spec.is_training:
        rows = inference_throughput(
            spec,
            bandwidth_gbps=bandwidth,
            peak_tflops=peak,
            gpu_counts=gpus,
            tensor_parallel=tp,
            tensor_parallel_gbps=tp_gbps,
            **_pipeline_arguments(pp, link, per_instance),
            generation=gpu.generation or 0,
            compute_efficiency=serving_efficiency(spec, gpu),
        )
        return (
            options.serving_hours
            if math.isfinite(float(rows["decode_tokens_per_second_total"]))
            else math.nan
        )

    def modelled(count: int) -> float:
        rows = training_throughput(
            spec,
            peak_tflops=peak,
            gpu_counts=count,
            mfu=mfu,
            zero_stage=zero,
            tensor_parallel=tp,
            pipeline_parallel=1,
            interconnect_gbps=dp_gbps,
            tensor_parallel_gbps=tp_gbps,
            gpus_per_node=per_instance,
            fabric_gbps=fabric_gbps,
            # QLoRA's unpacking a micro-batch (qlora_dequant.py), calibrated as the ranking calibrates it
            memory_bandwidth_gbps=bandwidth * bandwidth_factor(spec, gpu, options.calibration),
        )
        return float(rows["training_hours"])

    measured_count = nearest_measured_count(options.measured_tokens_per_second, gpu.slug, gpus)
    if measured_count is not None and measured_count >= tp and spec.training_tokens:
        measured = (
            spec.training_tokens / options.measured_tokens_per_second[(gpu.slug, measured_count)] / 3600.0
        )
        return measured if measured_count == gpus else measured * modelled(gpus) / modelled(measured_count)
    return modelled(gpus)


def _total(price: float, hours: float, instances: int, storage_rate: float, options: RankingOptions) -> float:
    months = (hours + options.setup_hours) / HOURS_PER_MONTH + options.storage_tail_months
    compute = price * hours * instances
    return (
        compute * (1.0 + options.rerun_fraction)
        + price * options.setup_hours * instances
        + options.storage_gb * storage_rate * months
    )


def _shown_total(
    price: float, hours: float, instances: int, storage_rate: float, options: RankingOptions
) -> float:
    """The total a row shows (rank48): each part priced on the figures the row shows (the price to 6 decimals
    in the row's currency, hours, setup hours, GB and months to 6), rounded to the cent once, then summed."""
    rate, currency = options.fx_rate_from_usd, options.currency
    shown_price = round_price(Decimal(repr(float(price))) * rate)
    months = round_quantity((hours + options.setup_hours) / HOURS_PER_MONTH + options.storage_tail_months)
    compute = round_money(shown_price * round_quantity(hours) * instances, currency)
    setup = round_money(shown_price * round_quantity(options.setup_hours) * instances, currency)
    shown_rate = round_price(Decimal(repr(float(storage_rate))) * rate)
    storage = round_money(round_quantity(options.storage_gb) * shown_rate * months, currency)
    reruns = round_money(round_quantity(options.rerun_fraction) * compute, currency)
    return float(compute + setup + storage + reruns)


def rank_workload_loop(
    spec: WorkloadSpec, offers: pd.DataFrame, gpus: Mapping[str, GpuSpec], options: RankingOptions
) -> list[tuple[float, float, int, int, str]]:
    """Feasible configurations as (total cost, hours, offer row, instances, plan), cheapest first."""
    options = serving_options(spec, options)
    table = prepare_offers(offers, gpus, options)
    rows = []
    for position, offer in enumerate(table.itertuples(index=False)):
        gpu, per_instance = gpus[offer.gpu], int(offer.gpu_per_instance)
        if incompatibility(spec, gpu) or offer.gpu_only:  # a GPU-only price leaves out the host VM
            continue
        price = offer.price_usd  # the price ranked: a spot outlier's robust price (pricing/spot_sanity.py)
        if offer.pricing_model == "spot" and offer.spot_no_saving:
            continue  # at or above on-demand: spot saves nothing
        listed = price
        for instances in options.instance_counts:
            price = listed
            if offer.pricing_model == "spot" and (
                not spec.is_training or not options.can_checkpoint or checkpoint_too_slow(spec, options)
            ):
                continue
            if (
                offer.pricing_model == "spot"
            ):  # any one of the instances reclaimed stops the job: N x the rate
                timing = job_spot_timing(spec, options)
                overhead = spot_overhead_by_band(
                    np.array([offer.band]),
                    timing.checkpoint_write_hours,
                    timing.restart_hours,
                    0.0,
                    instances,
                )
                price *= 1.0 + float(overhead[0])
            candidates = []  # the plans that fit this GPU kind and instance count, before the offer's host
            for plan in PLAN_NAMES:
                zero, uses_tp = PLANS[plan]
                total_gpus = per_instance * instances
                if uses_tp and not per_instance > 1:
                    continue
                group = PARTIAL_TENSOR_PARALLEL.get(plan)  # TP 2/4/8 groups inside a larger instance
                if group and not (spec.is_training and per_instance > group and per_instance % group == 0):
                    continue
                if not plan_validity(spec, True, uses_tp, offer.interconnect.scale_up):
                    continue  # training tensor parallelism needs NVLink or Infinity Fabric within the instance
                if zero >= 3 and total_gpus == 1:
                    continue
                if needs_missing_fabric(spec, instances, zero, offer.interconnect.has_fabric):
                    continue  # "no cluster interconnect for <type>"
                tp = (group or per_instance) if uses_tp else 1
                pp = 1
                whole = uses_tp and not group and not spec.is_training and not spec.model.is_image
                if whole and not _splits(spec, tp):
                    # vLLM's guide: no TP degree of the instance's GPUs splits the model, so TP 1 x PP n
                    # (splits.serving_pipeline_plans, without a stated plan)
                    tp, pp = 1, per_instance
                if not _splits(spec, tp):
                    continue  # the TP group must split the heads and the MLP (aud49r: no TP 3 of 32 heads)
                required, offloaded, peak = _memory_gib(
                    spec, gpu, total_gpus, zero, tp, options.calibration, pp
                )
                if not peak <= gpu.capacity_gib:  # the peak must fit; headroom only decides "tight"
                    continue
                tight = required > gpu.capacity_gib or peak > TIGHT_UTILIZATION.value * gpu.capacity_gib
                hours = _hours(spec, gpu, total_gpus, zero, tp, options, offer.interconnect, per_instance, pp)
                if not math.isfinite(hours):
                    continue
                if not spec.is_training and zero >= 3:  # no ZeRO for serving
                    continue
                candidates.append((plan, group, hours, offloaded, tight, tp, total_gpus, pp))
            # a partial TP plan is ranked only where it is the fastest partial plan and faster than every
            # other plan that fits and offloads nothing (shapes.slower_partial_plans)
            base = min((c[2] for c in candidates if not c[1] and not c[3] > 0), default=math.inf)
            partial = [c for c in candidates if c[1]]
            fastest = min(partial, key=lambda c: c[2]) if partial else None
            candidates = [c for c in candidates if not c[1] or (c is fastest and c[2] < base)]
            for plan, _group, hours, offloaded, tight, tp, total_gpus, pp in candidates:
                ram_needed, vcpus_needed = host_needs(spec, gpu.capacity_gib, offloaded, per_instance)
                # the host rules of thumb only warn; RAM the plan offloads to is a limit (NaN: unknown, allowed)
                # a lower bound (the smallest of the provider's listed hosts) never excludes (audhd, fix51hd)
                lower_bound = bool(getattr(offer, "host_figures_lower_bound", False))
                if offloaded > 0 and offer.memory_gib < ram_needed and not lower_bound:
                    continue
                # below what the training stack holds on the host (RAM; the card rule only warns, aud44r) or
                # the vCPU rule where no image loader's rate costs them: ordered like a tight fit (issue 26,
                # stop 44)
                stack = stack_host_ram(spec)
                stack_gib = math.nan if stack is None else per_instance * (stack[0] + offloaded)
                ram_short = offer.memory_gib < stack_gib
                vcpus_short = not feeds_loader(spec) and offer.vcpus < vcpus_needed
                host_doubt = ram_short or vcpus_short
                # graded: short of the RAM by more than 10%, or of both rules, counts two (audhd, fix51hd)
                severe = (
                    ram_short and ((stack_gib - offer.memory_gib) / stack_gib > 0.10 or vcpus_short)
                ) and not lower_bound
                # a plan offloading to the CPU on a host whose RAM is unknown, or a lower bound under the limit:
                # one host doubt in either deployment (audhd, fix51hd)
                host_doubt = host_doubt or (
                    offloaded > 0
                    and (math.isnan(offer.memory_gib) or (lower_bound and offer.memory_gib < ram_needed))
                )
                # production serving on a host the catalog does not know: one host doubt too, never two (aud51x)
                host_doubt = host_doubt or (
                    not spec.is_training
                    and not spec.model.is_image
                    and options.deployment == "production"
                    and (math.isnan(offer.vcpus) or (stack is not None and math.isnan(offer.memory_gib)))
                )
                paid_instances = instances
                if not spec.is_training:  # instances from the demand
                    replicas = _serving_instances(spec, gpu, total_gpus, tp, pp, offer.interconnect)
                    if not math.isfinite(replicas):
                        continue
                    paid_instances = int(replicas)
                total = _total(price, hours, paid_instances, offer.storage_rate, options)
                if options.deadline_hours is not None and hours > options.deadline_hours:
                    continue
                if options.budget_usd is not None and total > options.budget_usd:
                    continue
                multi_spot = offer.pricing_model == "spot" and paid_instances > 1
                # GPUs that talk over a link the catalog does not state: ordered like a tight fit (fix43r)
                par = spec.parallelism
                talks = total_gpus > 1 and (
                    spec.is_training or tp * pp > 1 or par.pipeline_parallel > 1 or par.expert_parallel > 1
                )
                unstated_link = talks and per_instance > 1 and not offer.interconnect.stated
                # a serving replica split over consumer cards: ordered like a tight fit (aud49r)
                consumer_split = (
                    not spec.is_training
                    and tp * pp > 1
                    and gpu.is_consumer
                    and options.deployment == "production"
                )
                # doubts counted: fewer first among the doubted rows (aud50a, stop 50)
                doubts = int(tight) + int(unstated_link) + int(host_doubt) + int(severe) + int(consumer_split)
                shown = _shown_total(price, hours, paid_instances, offer.storage_rate, options)
                rows.append((total, hours, position, paid_instances, plan, doubts, multi_spot, shown))
    rows.sort(key=lambda row: (row[5], row[0], row[1]))  # no doubt first, then by how many doubts
    last = [row for row in rows if row[6]]  # spot on several instances at once: after every other row
    rows = [row for row in rows if not row[6]]
    # doubts counted from the fewest any row has: a doubt all share orders nothing (hostdoubt)
    base = min((row[5] for row in rows), default=0)
    rows = [(*row[:5], row[5] - base, *row[6:]) for row in rows]
    # ...except tight rows cheaper than the first roomy row, shown right below it (issue 26)
    roomy = [row for row in rows if not row[5]]
    if roomy:
        cheap = [row for row in rows if row[5] and row[0] < roomy[0][0]]
        rows = roomy[:1] + cheap + roomy[1:] + [row for row in rows if row[5] and row not in cheap]
    last.sort(key=lambda row: (row[0], row[1]))
    ranked = [
        (row[7], *row[1:5]) for row in rows + last
    ]  # ordered on the exact total, the shown one returned
    return ranked if options.collapse_identical is False else _collapse(ranked, table)


def _collapse(ranked: list, table: pd.DataFrame) -> list:
    """Identical rows as one, the first kept (issue 26, ranking/collapse.py): the same provider, instance
    type, pricing, payment, commitment, ranked price (and spot band) with the same instances and plan, at
    the same total cost to the cent and hours to the microsecond-hour, sold in several regions."""
    offers = [
        (
            offer.provider,
            offer.instance_type,
            offer.pricing_model,
            offer.payment_option,
            offer.commitment_kind,
            round(float(offer.price_usd), 6),
            int(offer.band) if offer.is_spot else -1,
            offer.gpu,
            int(offer.gpu_per_instance),
        )
        for offer in table.itertuples(index=False)
    ]
    seen, kept = set(), []
    for total, hours, position, instances, plan in ranked:
        key = (*offers[position], instances, plan, round(total, 2), round(hours, 6))
        if key not in seen:
            seen.add(key)
            kept.append((total, hours, position, instances, plan))
    return kept
