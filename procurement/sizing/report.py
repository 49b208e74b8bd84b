"""`size_workload`: one workload against GPU models and counts, as the JSON output contract of issue 3.

Numbers are computed vectorized (memory over GPU counts, throughput over every GPU x count row) and
only then turned into plain dicts; floats are rounded at this edge and non-finite values become None.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from typing import cast

import numpy as np

from procurement.sizing import bnb_memory, image, image_model, pinned_offload, qlora_dequant
from procurement.sizing.accelerators import effective_speed, rentable_alone_slug, speed_ratio
from procurement.sizing.accuracy import workload_accuracy
from procurement.sizing.assumptions import ALL_ASSUMPTIONS
from procurement.sizing.bytes_model import is_mxfp4, memory_assumptions, sliding_window_notes, state_bytes
from procurement.sizing.communication_text import communication_phrase, communication_warns
from procurement.sizing.compatibility import Compatibility, check_gpu, long_training_warning, precision_fix
from procurement.sizing.compute_peak import expert_rate_inputs, power_bound_tflops, spec_peak_tflops
from procurement.sizing.decode_attention import sm_clock_hz
from procurement.sizing.efficiency import serving_efficiency
from procurement.sizing.global_batch import batch_at, data_parallel_ranks
from procurement.sizing.gpus import (
    GpuSpec,
    collective_bandwidth_gbps,
    hierarchical_links,
    tensor_parallel_over_nvlink,
)
from procurement.sizing.host import (
    data_pipeline,
    feeds_loader,
    host_requirements,
    loader_host_note,
    loader_images_per_vcpu,
    loader_workers_per_gpu,
)
from procurement.sizing.memory import MEMORY_KEYS, memory_breakdown_gib
from procurement.sizing.mfu import (
    Calibration,
    bandwidth_factor,
    calibration_factor,
    estimate_mfu,
    llm_c_note,
    memory_factor,
    output_copy_gemm_efficiency,
    recompute_time_share,
)
from procurement.sizing.mxfp4_padding import mxfp4_backend_multiples
from procurement.sizing.params import ACTIVE_PARAMS_CONVENTION, active_params, stated_active_params_warning
from procurement.sizing.pipeline_bubble import pipeline_bubble_warning
from procurement.sizing.spec import ParallelismSpec, WorkloadSpec
from procurement.sizing.throughput import inference_throughput, training_throughput
from procurement.sizing.verdict import (
    FEASIBLE_VERDICTS,
    cheapest_remedy,
    identity_cache,
    larger_card,
    peak_by_count,
    scale_out,
    verdict_for,
)

TRAINING_KEYS = ("training_tokens_per_second", "training_hours", "communication_share")
INFERENCE_KEYS = (
    "decode_tokens_per_second_per_stream",
    "decode_tokens_per_second_total",
    "time_to_first_token_seconds",
)
THROUGHPUT_KEYS = TRAINING_KEYS + INFERENCE_KEYS
IMAGE_TRAINING_ALIASES = {"training_images_per_second": "training_tokens_per_second"}
IMAGE_INFERENCE_ALIASES = {
    "images_per_second": "decode_tokens_per_second_total",
    "seconds_per_batch": "time_to_first_token_seconds",
}


def _clean(value, digits: int = 3):
    """Round a float for output; NaN and infinities become None."""
    number = float(value)
    return round(number, digits) if math.isfinite(number) else None


def candidate_plan(spec: WorkloadSpec, gpu_count: int) -> ParallelismSpec:
    """The parallelism plan for a candidate count: the spec's own at its count; otherwise the spec's
    ZeRO/TP/PP for training, and for inference tensor parallel over up to 8 GPUs (a divisor of the
    attention heads) with pipeline stages for the rest."""
    par = spec.parallelism
    if gpu_count == par.gpus:
        return par
    if spec.is_training or spec.model.is_image:
        return replace(par, gpus=gpu_count)
    heads = spec.model.num_attention_heads
    tp = max(t for t in range(1, min(gpu_count, 8) + 1) if gpu_count % t == 0 and heads % t == 0)
    pp = gpu_count // tp if gpu_count // tp <= spec.model.num_layers else 1
    return ParallelismSpec(gpus=gpu_count, tensor_parallel=tp, pipeline_parallel=pp, offload="none")


def candidate_batch(spec: WorkloadSpec, plan: ParallelismSpec) -> tuple[WorkloadSpec, str | None]:
    """(the spec at the candidate's micro-batches a step, what the candidate says of its batch). A stated
    global batch holds at every candidate count: gradient_accumulation_steps = global / (micro_batch_size x
    the plan's data-parallel ranks), said as the ranking's rows say it (sizing.global_batch.batch_at), at the
    spec's own count too (its derived count). A count whose ranks do not split it keeps the spec's count and
    says so. Without a global batch: the spec, unchanged, and nothing said (today's figures)."""
    if not spec.is_training or spec.global_batch_size is None:
        return spec, None
    ranks = data_parallel_ranks(
        plan.gpus, plan.tensor_parallel, plan.pipeline_parallel, plan.context_parallel
    )
    batch = batch_at(spec, ranks)
    if batch is not None:
        return batch
    if not ranks:  # not a plan at this count (its memory says so: blocked by plan)
        return spec, None
    return spec, (
        f"global batch not kept: the stated {spec.global_batch_size:,} sequences do not split into micro_batch_size "
        f"{spec.micro_batch_size} x {ranks:,} data-parallel ranks (Megatron asserts they do; the ranking drops such "
        f"a plan); figures keep gradient_accumulation_steps {spec.gradient_accumulation_steps} of "
        f"{spec.parallelism.gpus:,} GPUs"
    )


def _memory_table(
    spec: WorkloadSpec, plans: list[ParallelismSpec], flash: bool, mxfp4_multiples=None
) -> dict[str, np.ndarray]:
    return memory_breakdown_gib(
        spec,
        np.array([plan.gpus for plan in plans], dtype=float),
        zero_stage=np.array([plan.zero_stage for plan in plans], dtype=float),
        tensor_parallel=np.array([plan.tensor_parallel for plan in plans], dtype=float),
        pipeline_parallel=np.array([plan.pipeline_parallel for plan in plans], dtype=float),
        flash_attention=flash,
        mxfp4_multiples=mxfp4_multiples,
    )


def _throughput_rows(
    spec: WorkloadSpec,
    gpus: Sequence[GpuSpec],
    plans: list[ParallelismSpec],
    calibration: Calibration | None = None,
) -> dict[str, np.ndarray]:
    """Throughput for every (gpu, plan) row, gpu-major."""
    size = len(gpus) * len(plans)
    if spec.model.is_image_tier:
        return {key: np.full(size, np.nan) for key in THROUGHPUT_KEYS}
    # non-NVIDIA and rack-scale parts at their measured speed relative to the H100 (sizing/accelerators.py)
    kind_mfu = [estimate_mfu(spec, gpu, calibration) for gpu in gpus] if spec.is_training else None
    kind_peak, kind_bandwidth, _ = effective_speed(
        spec,
        gpus,
        [spec_peak_tflops(spec, gpu) or np.nan for gpu in gpus],
        kind_mfu if kind_mfu is not None else [1.0] * len(gpus),
        [gpu.memory_bandwidth_gbps for gpu in gpus],
    )
    peak = np.repeat(kind_peak, len(plans)).astype(float)
    gpu_counts = np.tile([plan.gpus for plan in plans], len(gpus)).astype(float)
    tensor_parallel = np.tile([plan.tensor_parallel for plan in plans], len(gpus)).astype(float)
    pipeline_parallel = np.tile([plan.pipeline_parallel for plan in plans], len(gpus)).astype(float)
    if kind_mfu is not None:  # training
        links = [hierarchical_links(gpu, plan.gpus) for gpu in gpus for plan in plans]
        tp_link = np.array(
            [collective_bandwidth_gbps(gpu, plan.tensor_parallel) for gpu in gpus for plan in plans]
        )
        mfu = np.repeat(kind_mfu, len(plans)).astype(float)
        zero = np.tile([plan.zero_stage for plan in plans], len(gpus)).astype(float)
        rows = training_throughput(
            spec,
            peak_tflops=peak,
            interconnect_gbps=np.array([link["interconnect_gbps"] for link in links]),
            gpus_per_node=np.array([link["gpus_per_node"] for link in links]),
            fabric_gbps=np.array([link["fabric_gbps"] for link in links]),
            tensor_parallel_gbps=tp_link,
            mfu=mfu,
            zero_stage=zero,
            gpu_counts=gpu_counts,
            tensor_parallel=tensor_parallel,
            pipeline_parallel=pipeline_parallel,
            memory_bandwidth_gbps=np.repeat(
                [
                    bw * bandwidth_factor(spec, gpu, calibration)
                    for bw, gpu in zip(kind_bandwidth, gpus, strict=True)
                ],
                len(plans),
            ).astype(float),
            recompute_share=np.repeat([recompute_time_share(spec, gpu) for gpu in gpus], len(plans)),
            output_gemm_efficiency=np.repeat(
                [output_copy_gemm_efficiency(spec, gpu) for gpu in gpus], len(plans)
            ).astype(float),
            flash_capable=np.repeat([gpu.supports_flash_attention() for gpu in gpus], len(plans)),
        )
        rows["mfu"] = mfu
        return rows
    bandwidth = np.repeat(kind_bandwidth, len(plans)).astype(float)
    generation = np.repeat([gpu.generation or 0 for gpu in gpus], len(plans))
    # the tensor-parallel group's all-reduces over its link, as the ranking prices them per instance
    tp_link = np.array(
        [collective_bandwidth_gbps(gpu, plan.tensor_parallel) for gpu in gpus for plan in plans]
    )
    tp_nvlink = np.array(
        [tensor_parallel_over_nvlink(gpu, plan.tensor_parallel) for gpu in gpus for plan in plans], dtype=bool
    )
    power_bound = np.repeat([power_bound_tflops(spec, gpu) for gpu in gpus], len(plans)).astype(float)
    # routed experts at a stated precision of their own (inference.expert_precision; NaN otherwise, unused)
    expert = np.repeat(
        [expert_rate_inputs(spec, gpu, p) for gpu, p in zip(gpus, kind_peak, strict=True)], len(plans), axis=0
    ).astype(float)
    expert = expert.reshape(-1, 2)  # no card asked for: an empty (0, 2) table, not a flat empty array
    return inference_throughput(
        spec,
        bandwidth_gbps=bandwidth,
        achieved_bandwidth=np.repeat([gpu.decode_read_fraction for gpu in gpus], len(plans)).astype(float),
        peak_tflops=peak,
        expert_peak_tflops=expert[:, 0],
        expert_compute_efficiency=expert[:, 1],
        generation=generation,
        power_bound_tflops=power_bound if spec.model.image_arch is not None else None,
        gpu_counts=gpu_counts,
        tensor_parallel=tensor_parallel,
        pipeline_parallel=pipeline_parallel,
        tensor_parallel_gbps=tp_link,
        tensor_parallel_nvlink=tp_nvlink,
        compute_efficiency=np.repeat([serving_efficiency(spec, gpu) for gpu in gpus], len(plans)),
        sm_clock_hz=np.repeat([sm_clock_hz(gpu) for gpu in gpus], len(plans)),
        l2_cache_bytes=np.repeat([gpu.l2_cache_bytes or np.nan for gpu in gpus], len(plans)).astype(float),
        # the card's memory picks the framework's default token budget under closed_loop (serving_load.py)
        gpu_memory_gib=np.repeat([gpu.capacity_gib for gpu in gpus], len(plans)).astype(float),
    )


def _rounded(values: np.ndarray, digits: int) -> list:
    """Round a whole column at once; NaN and infinities become None."""
    array = np.asarray(values, dtype=float)
    finite = np.isfinite(array).tolist()
    return [value if ok else None for value, ok in zip(np.round(array, digits).tolist(), finite, strict=True)]


_EXTRA_COLUMNS = (
    ("decode_tokens_per_second_upper_bound", 3),
    ("mfu", 3),
    ("flops_per_token", 0),
    ("images_per_second_per_gpu", 4),
    ("flops_per_image", 0),
    ("loader_seconds", 4),
    ("gpu_step_seconds", 6),  # the step on the GPUs alone: what the host's loader has to keep up with
    ("step_seconds", 4),
    # the traffic's seconds on the critical path, and their share of the step (the warning reads it)
    ("exposed_communication_seconds", 4),
    ("exposed_communication_share", 4),
    ("data_parallel_exposed_seconds", 4),
    # the split the plan pays for: the pipeline bubble (a fraction of compute, (p - 1) / (v m)) and the
    # seconds per step of pipeline sends, context parallelism's K/V ring and the experts' all-to-alls
    ("pipeline_bubble", 6),
    ("pipeline_seconds", 4),
    ("context_parallel_seconds", 4),
    ("expert_parallel_seconds", 4),
    ("tensor_parallel_seconds", 4),
    # of which on the critical path (parallelism.expert_overlap, tp_comm_overlap; the CP ring under attention)
    ("expert_parallel_exposed_seconds", 4),
    ("tensor_parallel_exposed_seconds", 4),
    ("context_parallel_exposed_seconds", 4),
)


def _throughput_dicts(spec: WorkloadSpec, rows: dict[str, np.ndarray], size: int) -> list[dict]:
    """One throughput dict per (gpu, plan) row, columns rounded vectorized."""
    columns = {key: _rounded(rows[key], 4) if key in rows else [None] * size for key in THROUGHPUT_KEYS}
    columns |= {key: _rounded(rows[key], digits) for key, digits in _EXTRA_COLUMNS if key in rows}
    if "decode_bound" in rows:
        columns["decode_bound"] = [str(bound) for bound in rows["decode_bound"]]
    if spec.is_training and spec.model.image_arch is not None and "evaluation_hours" in rows:
        # aud47i item 3: the part of training_hours that is evaluation (image.eval_*; 0 where none is stated)
        columns["evaluation_hours"] = _rounded(rows["evaluation_hours"], 4)
    if spec.model.image_arch is not None:  # the same figures in images (one image is the engine's 'token')
        aliases = IMAGE_TRAINING_ALIASES if spec.is_training else IMAGE_INFERENCE_ALIASES
        columns |= {image_key: columns[token_key] for image_key, token_key in aliases.items()}
    estimate = "tier estimate: benchmark recommended" if spec.model.is_image_tier else "estimate"
    names = list(columns)
    return [
        dict(zip(names, values, strict=True)) | {"estimate": estimate}
        for values in zip(*columns.values(), strict=True)
    ]


def _gpu_images_per_second(throughput: dict) -> float:
    """Training images/s the headline's GPUs run at without their loader (NaN where not known)."""
    rate, step, gpu_step = (
        throughput.get(key) for key in ("training_tokens_per_second", "step_seconds", "gpu_step_seconds")
    )
    if not (rate and step and gpu_step):
        return math.nan
    return rate * step / gpu_step


def _loader_bound_text(spec: WorkloadSpec, throughput: dict) -> str | None:
    """Say so when the host's image loader, not the GPU, sets the step time (an assumption deciding it)."""
    loader, step = throughput.get("loader_seconds"), throughput.get("step_seconds")
    if not loader or step is None or loader < step:
        return None
    stated, workers = spec.host.vcpus_per_gpu, loader_workers_per_gpu(spec)
    feeding = workers if stated is None else min(stated, workers)
    key = "loader_crop_images_per_vcpu" if data_pipeline(spec) == "crop" else "loader_images_per_vcpu"
    if stated is not None and stated <= workers:
        more = "a host with more vCPUs per GPU trains faster (host.vcpus_per_gpu states yours)"
    else:
        more = f"the loader runs {workers:g} workers a GPU (image.loader_workers): more vCPUs do not help"
    return (
        f"the host's image loader sets the pace: {feeding:g} vCPUs per GPU x "
        f"{loader_images_per_vcpu(spec):.3g} images/s each ({key}, {data_pipeline(spec)} pipeline, "
        f"image.source_megapixels); {more}"
    )


def _loader_host_note(spec: WorkloadSpec, throughput: dict, gpus: int) -> str | None:
    """host.loader_host_note at the vCPUs per GPU the answer's loader figure takes (loader_seconds_per_step): the
    spec's host.vcpus_per_gpu, else the default, the loader's workers a GPU; the GPU's own images/s a GPU is the
    step's images over the step on the GPUs alone (gpu_step_seconds)."""
    rate, gpu_step = throughput.get("training_tokens_per_second"), throughput.get("gpu_step_seconds")
    step = throughput.get("step_seconds")
    if not (rate and gpu_step and step) or not feeds_loader(spec):
        return None
    stated = spec.host.vcpus_per_gpu
    if stated is None:
        # not stated: the loader runs its workers, one a vCPU (loader_vcpus_per_gpu inf, loader_worker_vcpus)
        vcpus, assumed = (
            loader_workers_per_gpu(spec),
            "the default, one a loader worker: host.vcpus_per_gpu not stated",
        )
    else:
        vcpus, assumed = float(stated), "host.vcpus_per_gpu, as stated"
    return loader_host_note(spec, rate * step / gpu_step / gpus, vcpus, assumed)


def communication_warning(throughput: dict) -> str | None:
    """Warn when the traffic left on the critical path (``exposed_communication_share``: what it adds to
    the step) passes 30%; the hidden part, under the compute, costs no time and is said apart."""
    exposed, share = throughput.get("exposed_communication_share"), throughput.get("communication_share")
    exposed = math.nan if exposed is None else float(exposed)
    if not communication_warns(exposed):
        return None
    phrase = communication_phrase(exposed, math.nan if share is None else float(share))
    return f"communication: {phrase}: adding GPUs stops scaling linearly"


def _memory_dict(table: dict[str, np.ndarray], position: int) -> dict:
    return {key: _clean(table[key][position]) for key in MEMORY_KEYS}


def _eager_host_rate_note(spec, gpu: GpuSpec, throughput: dict) -> str | None:
    """image_model.eager_host_rate_note on the card's rates as the throughput rows take them (effective_speed)."""
    if spec.model.image_arch is None or spec.is_training or not throughput.get("images_per_second_per_gpu"):
        return None
    peak, bandwidth, _ = effective_speed(
        spec, [gpu], [spec_peak_tflops(spec, gpu) or np.nan], [1.0], [gpu.memory_bandwidth_gbps]
    )
    return image_model.eager_host_rate_note(
        spec, peak[0] * 1e12, bandwidth[0] * 1e9, gpu.generation or 0, gpu.l2_cache_bytes
    )


def _candidate(
    spec, gpu: GpuSpec, plan: ParallelismSpec, compat: Compatibility, memory: dict, throughput: dict, catalog
) -> dict:
    count = plan.gpus
    total, required = memory["total_per_gpu_gib"], memory["required_per_gpu_gib"]
    capacity = gpu.capacity_gib
    verdict = "does_not_fit" if compat.blocked_by or total is None else verdict_for(total, required, capacity)
    blocked_by = compat.blocked_by or (
        "plan" if total is None else "memory" if verdict == "does_not_fit" else None
    )
    warnings = list(compat.warnings)
    communication = communication_warning(throughput)
    if communication:
        warnings.append(communication)
    loader_text = _loader_bound_text(spec, throughput)
    if loader_text:
        warnings.append(loader_text)
    loader_host_text = _loader_host_note(spec, throughput, count)
    if loader_host_text:
        warnings.append(loader_host_text)
    floor_text = image_model.forward_floor_warning(spec, throughput.get("images_per_second_per_gpu"))
    if floor_text:
        warnings.append(floor_text)
    host_text = image_model.vit_host_floor_warning(spec, throughput.get("images_per_second_per_gpu"))
    if host_text:
        warnings.append(host_text)
    bandwidth = gpu.memory_bandwidth_gbps * 1e9 if gpu.memory_bandwidth_gbps else None
    eager_text = image_model.eager_attention_rate_note(spec, gpu.generation, bandwidth)
    if eager_text:
        warnings.append(eager_text)
    if spec.model.image_arch is not None and throughput.get("images_per_second_per_gpu"):
        l2_text = image_model.flux_qk_chain_l2_note(spec, gpu.l2_cache_bytes, bandwidth)
        if l2_text:
            warnings.append(l2_text)
    host_rate_text = _eager_host_rate_note(spec, gpu, throughput)
    if host_rate_text:
        warnings.append(host_rate_text)
    layout_text = image_model.memory_format_note(spec, gpu.generation)
    if layout_text:
        warnings.append(layout_text)
    version_text = image_model.fastertransformer_version_note(spec, gpu.generation)
    if version_text:
        warnings.append(version_text)
    long_run = long_training_warning(spec, gpu, throughput.get("training_hours"))
    if long_run:
        warnings.append(long_run)
    stack_note = llm_c_note(spec, gpu)
    if stack_note:
        warnings.append(stack_note)
    bubble_text = pipeline_bubble_warning(spec, plan.pipeline_parallel)
    if bubble_text:
        warnings.append(bubble_text)
    stated_active = stated_active_params_warning(spec.model)
    if stated_active:
        warnings.append(stated_active)
    if spec.model.is_image_tier:
        warnings.append(image.TIER_WARNING)
    warnings.extend(image_model.training_speed_warnings(spec))
    autocast_memory = image_model.autocast_memory_warning(spec)
    if autocast_memory:
        warnings.append(autocast_memory)
    candidate = {
        "gpu": gpu.slug,
        "gpu_name": gpu.name,
        "gpus": count,
        "plan": {
            "zero_stage": plan.zero_stage,
            "tensor_parallel": plan.tensor_parallel,
            "pipeline_parallel": plan.pipeline_parallel,
            "virtual_pipeline": plan.virtual_pipeline,
            "context_parallel": plan.context_parallel,
            "expert_parallel": plan.expert_parallel,
            "offload": plan.offload,
        },
        "verdict": verdict,
        "blocked_by": blocked_by,
        "memory_utilization": _clean(total / capacity) if total is not None else None,
        "capacity_gib": _clean(capacity),
        "usable_memory_gib": _clean(gpu.usable_memory_gib),
        "total_per_gpu_gib": total,
        "required_per_gpu_gib": required,
        "memory": memory,
        "throughput": throughput,
        "warnings": warnings,
        "errors": list(compat.errors),
    }
    if blocked_by == "precision":
        candidate.update(
            _precision_remedies(_plan_spec(spec, plan), gpu, count, compat.flash_attention, catalog)
        )
    elif verdict == "does_not_fit":
        candidate.update(
            _remedies(_plan_spec(spec, plan), gpu, count, compat.flash_attention, total, catalog)
        )
    return candidate


def _precision_remedies(spec: WorkloadSpec, gpu: GpuSpec, count: int, flash: bool, catalog) -> dict:
    """The precision fix first (no memory remedy helps a card that lacks the precision); if the fixed
    spec still does not fit this card and count, the fixed spec's memory remedies follow."""
    fix = precision_fix(spec, gpu)
    if fix is None:  # called only for a card blocked by precision, which always has a fix
        raise ValueError(f"{gpu.slug} runs {spec.precision} and its experts: no precision remedy to give")
    precision, fix_text = fix
    # the model's precision, or, where only stated experts' is blocked (bf16 experts on Volta / Turing),
    # inference.expert_precision; one object per spec and fix, so the ladders cache
    fixed = _with_precision(spec, precision, gpu.supports_precision(spec.precision))
    total = float(peak_by_count(fixed, count, flash))
    if not math.isfinite(total):
        more = _remedies(fixed, gpu, count, flash, None, catalog)
        return more | {"remedy": f"{fix_text}; {more['remedy']}", "remedies": [fix_text]}
    if total <= gpu.capacity_gib:
        return {
            "remedy": fix_text,
            "remedies": [fix_text],
            "memory_after_remedy_gib": _clean(total, 2),
            "scale_out": None,
            "larger_card": None,
        }
    more = _remedies(fixed, gpu, count, flash, total, catalog)
    return more | {"remedy": f"{fix_text}; then {more['remedy']}", "remedies": [fix_text, *more["remedies"]]}


@identity_cache
def _with_precision(spec: WorkloadSpec, precision: str, experts_only: bool = False) -> WorkloadSpec:
    if experts_only:
        return replace(spec, inference=replace(spec.inference, expert_precision=precision))
    return replace(spec, precision=precision)


@identity_cache
def _plan_spec(spec: WorkloadSpec, plan: ParallelismSpec) -> WorkloadSpec:
    return spec if plan == spec.parallelism else replace(spec, parallelism=plan)


def _remedies(spec, gpu: GpuSpec, count: int, flash: bool, total, catalog) -> dict:
    if total is None:
        par = spec.parallelism
        group = par.tensor_parallel * par.pipeline_parallel
        text = f"use a multiple of tensor_parallel x pipeline_parallel ({group}) GPUs"
        if par.context_parallel > 1 or par.expert_parallel > 1:
            text = (
                f"use a multiple of tensor_parallel x pipeline_parallel x context_parallel "
                f"({group * par.context_parallel}) GPUs whose count / pipeline_parallel expert_parallel "
                f"({par.expert_parallel}) divides"
            )
        return {"remedy": text, "remedies": []}
    remedy = cheapest_remedy(spec, gpu, count, flash)
    more = scale_out(spec, gpu, flash)
    bigger = larger_card(spec, total, gpu, catalog)
    fallback = []
    if more:
        fallback.append(f"{more['gpus']} x {gpu.slug} with {more['plan']}")
    if bigger:
        fallback.append(f"a larger card: {bigger}")
    actions = remedy["actions"] if remedy else []
    text = (
        "; ".join(actions)
        if actions
        else ("; or ".join(fallback) if fallback else "no remedy within 64 GPUs")
    )
    return {
        "remedy": text,
        "remedies": actions,
        "memory_after_remedy_gib": remedy["total_per_gpu_gib"] if remedy else None,
        "scale_out": more,
        "larger_card": bigger,
    }


def _calibration_notes(spec: WorkloadSpec, gpu: GpuSpec, calibration: Calibration | None) -> dict:
    """What a fitted factor changed for this GPU: 'calibrated from N runs (factor x.xx)' per figure."""
    factor = calibration_factor(spec, gpu, calibration)
    if factor is None:
        return {"throughput": None, "memory": None}
    speed = spec.is_training and not spec.mfu and factor.throughput_factor != 1.0
    return {
        "throughput": factor.text("throughput") if speed else None,
        "memory": factor.text("memory") if factor.memory_factor != 1.0 else None,
    }


def _calibrated_memory(memory: dict, factor: float) -> dict:
    """The per-GPU peak and requirement times the fitted memory factor (the breakdown stays modelled)."""
    if factor == 1.0:
        return memory
    scaled = dict(memory)
    for key in ("total_per_gpu_gib", "required_per_gpu_gib"):
        if scaled.get(key) is not None:
            scaled[key] = _clean(scaled[key] * factor)
    return scaled


def size_candidates(
    spec: WorkloadSpec,
    gpus: Sequence[GpuSpec],
    gpu_counts: Sequence[int],
    calibration: Calibration | None = None,
) -> list[dict]:
    plans = [candidate_plan(spec, int(count)) for count in gpu_counts]
    batches = [candidate_batch(spec, plan) for plan in plans]
    # one spec per distinct micro-batches a step (a stated global batch gives each count its own): the tables
    # are computed once per spec over every plan, each candidate reading its own spec's
    plan_specs = {batch_spec.gradient_accumulation_steps: batch_spec for batch_spec, _ in batches}
    memory_rows: dict[tuple, list[dict]] = {}

    def memory_rows_on(flash: bool, gpu: GpuSpec, accumulation: int) -> list[dict]:
        # the card matters to memory only through an MXFP4 checkpoint's backend padding (mxfp4_padding)
        multiples = mxfp4_backend_multiples(gpu) if is_mxfp4(spec) else None
        if (flash, multiples, accumulation) not in memory_rows:
            table = _memory_table(plan_specs[accumulation], plans, flash, multiples)
            memory_rows[flash, multiples, accumulation] = [_memory_dict(table, i) for i in range(len(plans))]
        return memory_rows[flash, multiples, accumulation]

    throughputs = {
        accumulation: _throughput_dicts(
            plan_spec, _throughput_rows(plan_spec, gpus, plans, calibration), len(gpus) * len(plans)
        )
        for accumulation, plan_spec in plan_specs.items()
    }
    candidates = []
    for gpu_index, gpu in enumerate(gpus):
        for position, plan in enumerate(plans):
            accumulation, batch_text = batches[position][0].gradient_accumulation_steps, batches[position][1]
            plan_spec = plan_specs[accumulation]
            compat = check_gpu(plan_spec, gpu, plan)
            memory = _calibrated_memory(
                dict(memory_rows_on(compat.flash_attention, gpu, accumulation)[position]),
                memory_factor(spec, gpu, calibration),
            )
            throughput = throughputs[accumulation][gpu_index * len(plans) + position]
            if compat.errors or throughput_missing(gpu, spec):
                throughput = {key: None for key in throughput} | {"estimate": throughput["estimate"]}
            candidate = _candidate(plan_spec, gpu, plan, compat, memory, throughput, gpus)
            candidate["batch"] = batch_text  # the global batch kept (or not), a stated one only
            candidate["gradient_accumulation_steps"] = accumulation if spec.is_training else None
            candidate["calibration"] = _calibration_notes(spec, gpu, calibration)
            candidate["speed_basis"] = speed_ratio(spec, gpu)[1] or None
            candidates.append(candidate)
    return candidates


def throughput_missing(gpu: GpuSpec, spec: WorkloadSpec) -> bool:
    return gpu.dense_tflops(spec.precision) is None


# The speed that ranks cards for the headline: training by tokens per second, serving by the tokens
# per second of all streams together.
HEADLINE_SPEED = {True: "training_tokens_per_second", False: "decode_tokens_per_second_total"}


def _headline(spec: WorkloadSpec, candidates: list[dict]) -> dict | None:
    """The candidate the top-level throughput/host describe: at the spec's GPU count, the best feasible
    one (the fastest by HEADLINE_SPEED; among equals, or with no speed estimate as for image tiers, the
    first in the order given: the catalog lists smallest cards first), else the first compatible one."""
    own = [c for c in candidates if c["gpus"] == spec.parallelism.gpus] or candidates
    feasible = [c for c in own if c["verdict"] in FEASIBLE_VERDICTS]
    # a part that cannot be rented alone (GB200 in an NVL72 rack) is never "the best card" for one job
    feasible = [c for c in feasible if rentable_alone_slug(c["gpu"])] or feasible
    if feasible:
        key = HEADLINE_SPEED[spec.is_training]
        speeds = [c["throughput"].get(key) for c in feasible]
        best = max(range(len(feasible)), key=lambda i: (speeds[i] is not None, speeds[i] or 0.0, -i))
        return feasible[best]
    compatible = [c for c in own if c["blocked_by"] != "precision"]
    return (compatible or own)[0] if compatible or own else None


def _workload_summary(spec: WorkloadSpec) -> dict:
    state = state_bytes(spec)
    summary = {
        "name": spec.name,
        "task": spec.task,
        "model": spec.model.name,
        "preset": spec.model.preset,
        "params": spec.model.params,
        "active_params": active_params(spec.model),
        "active_params_convention": ACTIVE_PARAMS_CONVENTION,
        "trainable_params": state.trainable_params,
        "precision": spec.precision,
        "weight_quantization": spec.weight_quantization,
        "fp8_weights": spec.fp8_weights,
        "cross_entropy": spec.cross_entropy,
        "attention_kernel": spec.attention_kernel,
        "fp8_recipe": spec.fp8_recipe,
        "fp8_pad_inner_dim": spec.fp8_pad_inner_dim,
        "training_stack": spec.training_stack,
        "memory_assumptions": (
            memory_assumptions(spec)
            + [text for text in (qlora_dequant.memory_text(spec), bnb_memory.text(spec)) if text]
            + image_model.memory_notes(spec)
            + sliding_window_notes(spec)
        ),
        "parallelism": {
            "gpus": spec.parallelism.gpus,
            "zero_stage": spec.parallelism.zero_stage,
            "tensor_parallel": spec.parallelism.tensor_parallel,
            "pipeline_parallel": spec.parallelism.pipeline_parallel,
            "virtual_pipeline": spec.parallelism.virtual_pipeline,
            "context_parallel": spec.parallelism.context_parallel,
            "expert_parallel": spec.parallelism.expert_parallel,
            "expert_overlap": spec.parallelism.expert_overlap,
            "expert_dispatch": spec.parallelism.expert_dispatch,
            "expert_routing": spec.parallelism.expert_routing,
            "tp_comm_overlap": spec.parallelism.tp_comm_overlap,
            "tp_implementation": spec.parallelism.tp_implementation,
            "context_parallel_comm": spec.parallelism.context_parallel_comm,
            "reshard_after_forward": spec.parallelism.reshard_after_forward,
            "reduce_bucket_size": spec.parallelism.reduce_bucket_size,
            "overlap_comm": spec.parallelism.overlap_comm,
            "multi_rank_bucket_allreduce": spec.parallelism.multi_rank_bucket_allreduce,
            "gradient_sync": spec.parallelism.gradient_sync,
            "offload": spec.parallelism.offload,
            "offload_pin_memory": spec.parallelism.offload_pin_memory,
        },
        "estimate": "tier estimate: benchmark recommended" if spec.model.is_image_tier else "estimate",
    }
    if pinned_offload.applies(spec):  # the CPU optimizer step's host cores, and whether they are assumed
        cores, source = pinned_offload.cores_per_rank(spec)
        parallelism = cast(dict[str, object], summary["parallelism"])
        parallelism |= {
            "offload_cpu_cores_per_rank": float(np.max(cores)),  # physical cores
            "offload_cpu_cores_source": source,
            "offload_cpu_cores": pinned_offload.cores_sentence(spec),
        }
    if spec.is_training and not spec.model.is_image:  # memory at the longest batch, speed at seq_len
        summary |= {"seq_len": spec.seq_len, "max_seq_len": spec.memory_seq_len}
    if spec.model.is_image_tier:
        summary["image_tier"] = image.tier_summary(spec)
    if spec.model.image_arch is not None:
        summary["image"] = image_model.image_summary(spec)
    return summary


def size_workload(
    spec: WorkloadSpec,
    gpus: Sequence[GpuSpec],
    gpu_counts: Sequence[int] | None = None,
    calibration: Calibration | None = None,
) -> dict:
    """Memory, speed, verdicts and host sizing of one workload on each GPU model x count.

    `gpu_counts` None means the spec's `parallelism.gpus`. Keys follow the issue-3 output contract.
    `calibration`: fitted factors per (GPU slug, method) from stored benchmarks (procurement.sizing.mfu),
    passed in by the service layer; None gives the uncalibrated estimate.
    """
    counts = list(gpu_counts) if gpu_counts else [spec.parallelism.gpus]
    memory_table = memory_breakdown_gib(spec, spec.parallelism.gpus)
    memory = {key: _clean(memory_table[key]) for key in MEMORY_KEYS}
    candidates = size_candidates(spec, gpus, counts, calibration)
    headline = _headline(spec, candidates)
    throughput = {key: None for key in THROUGHPUT_KEYS}
    host: dict = {}
    if headline is not None:
        throughput = dict(headline["throughput"]) | {"gpu": headline["gpu"], "gpus": headline["gpus"]}
        gpu = next(g for g in gpus if g.slug == headline["gpu"])
        host = host_requirements(
            spec,
            gpu,
            headline["gpus"],
            headline["memory"]["host_ram_gib"] or 0.0,
            _gpu_images_per_second(headline["throughput"]),
        )
        host["gpu"] = gpu.slug
    return {
        "workload": _workload_summary(spec),
        "memory": memory,
        "throughput": throughput,
        "candidates": candidates,
        "host": host,
        "assumptions": [assumption.as_dict() for assumption in ALL_ASSUMPTIONS],
        "accuracy": workload_accuracy(spec),
    }
