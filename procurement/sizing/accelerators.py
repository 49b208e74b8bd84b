"""Accelerators at their measured speed (issue 26, class 5).

A non-NVIDIA accelerator (MI300X, Gaudi 3) or a rack-scale part (GB200 in an NVL72 rack) is not ranked at
its datasheet peak: its speed is a reference part's modelled speed for the same shape times a published,
measured ratio for the task class (procurement/data/measured_speed.csv: MLPerf, vendor and independent
benchmarks, each with its source and its ``reference``). The reference is the H100 SXM, except where the
part is the same die as a modelled one: the GB200 is the B200's Blackwell die in an NVL72 rack, so its
reference is the B200 and its ratio NVIDIA's same-plan DGX-GB200 / DGX-B200 pairs (moe45; it was 2.2x the
H100 from one dense Llama 3.1 405B statement). Training: the reference's peak and MFU times the ratio;
serving: the reference's peak times the prefill ratio (prefill is compute-bound) and its memory bandwidth
times the decode ratio (decode is bandwidth-bound); a part measured per phase has a ``prefill`` and a ``decode`` row, a part
measured on serving as a whole one ``inference`` row for both phases. A ratio is chosen by what its measurement
matched (acc44): each row names the ``stack`` it was measured on (a training row: ``vendor_tuned``, a vendor's
or MLPerf submission's own code, or a spec ``training_stack``: megatron, maxtext, torchtitan; serving rows:
``any``). A training spec that states a stack takes that stack's row where one is published; otherwise the part's
vendor-tuned row, and the answer says the ratio was measured on another stack than the one stated. A non-NVIDIA part with no measured
ratio for the task is capped at the H100's speed (its software stack reaches less of its peak than
CUDA does; a datasheet advantage is never assumed) and says so. Memory, links and prices stay the part's
own. NVIDIA parts that are not rack-scale keep the datasheet model, which docs/validation.md checks.

A rack-scale part cannot be rented alone (an NVL72 rack is sold as a rack, or as 4-GPU trays of it):
``rentable_alone`` is False for it, and the sizing headline never names it "the best card" for one job.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from procurement.sizing.assumptions import GPUS_PER_NODE
from procurement.sizing.efficiency import efficiency_text, measured_efficiency
from procurement.sizing.gpus import nvlink_domain_gpus

DATA = Path(__file__).resolve().parents[1] / "data" / "measured_speed.csv"
REFERENCE_GPU = "h100-sxm5-80gb"
REFERENCE_NAMES = {"h100-sxm5-80gb": "H100", "b200": "B200"}  # how a reference reads in a sentence


FALLBACK_STACKS = ("vendor_tuned", "any")  # rows that stand for every stack without one of its own


@dataclass(frozen=True)
class MeasuredSpeed:
    ratio: float  # throughput relative to the reference part on the same task
    benchmark: str
    source_url: str
    note: str
    stack: str = "any"  # the stack the measurement ran on (module docstring)
    reference: str = REFERENCE_GPU  # the modelled part the ratio scales (module docstring)

    def text(self, slug: str, task_class: str) -> str:
        name = REFERENCE_NAMES.get(self.reference, self.reference)
        return f"speed: {slug} at {self.ratio:g}x {name} for {task_class}, measured ({self.benchmark}; {self.source_url})"


@lru_cache(maxsize=1)
def measured_speed_rows() -> dict[tuple[str, str, str], MeasuredSpeed]:
    """Every row by (part, task class, stack measured on)."""
    with DATA.open(newline="", encoding="utf-8") as handle:
        return {
            (row["gpu"], row["task_class"], row["stack"]): MeasuredSpeed(
                float(row["ratio"]),
                row["benchmark"],
                row["source_url"],
                row["note"],
                row["stack"],
                row.get("reference") or REFERENCE_GPU,
            )
            for row in csv.DictReader(handle)
        }


@lru_cache(maxsize=1)
def measured_speeds() -> dict[tuple[str, str], MeasuredSpeed]:
    """The rows that stand for every stack (vendor_tuned or any), by (part, task class)."""
    return {
        (gpu, task_class): row
        for (gpu, task_class, stack), row in measured_speed_rows().items()
        if stack in FALLBACK_STACKS
    }


def measured_speed_for(slug: str, task_class: str, stack: str = "other") -> MeasuredSpeed | None:
    """The row whose measurement matched the stack where one is published, else the part's fallback row."""
    rows = measured_speed_rows()
    if stack not in FALLBACK_STACKS and (slug, task_class, stack) in rows:
        return rows[(slug, task_class, stack)]
    return measured_speeds().get((slug, task_class))


def stack_text(slug: str, measured: MeasuredSpeed, stack: str) -> str:
    """The answer's clause where the ratio was measured on another stack than the spec states; "" otherwise."""
    if stack == "other" or measured.stack == stack or measured.stack == "any":
        return ""
    return (
        f"the {slug} ratio was measured on a {measured.stack.replace('_', '-')} stack, not on the stated "
        f"{stack} (training_stack): no published {slug} {stack} measurement is on file, so it may be off by "
        "the two stacks' difference"
    )


def rack_scale(gpu) -> bool:
    """A GPU that only comes inside a rack-scale NVLink domain (GB200/GB300 NVL72: gpus.nvlink_domain_gpus)."""
    in_rack = nvlink_domain_gpus(gpu.interconnect or "") > GPUS_PER_NODE.value
    return in_rack or gpu.slug.startswith(("gb200", "gb300"))


def rentable_alone(gpu) -> bool:
    """False for a rack-scale part; True for an unknown one (None: nothing to judge)."""
    return gpu is None or not rack_scale(gpu)


def rentable_alone_slug(slug: str) -> bool:
    from procurement.sizing.gpus import gpu_by_slug

    try:
        return rentable_alone(gpu_by_slug(slug))
    except KeyError:
        return not slug.startswith(("gb200", "gb300"))


def task_class(spec) -> str:
    return "training" if spec.is_training else "inference"


SERVING_PHASES = ("prefill", "decode")


def _measured_phases(kind: str, slug: str, stack: str = "other") -> dict[str, tuple[MeasuredSpeed, str]]:
    """The measured ratio per phase ("compute" and "bandwidth") with the row's task class, {} when none:
    training uses its one row for both, the stated stack's where published (measured_speed_for); serving the
    phase rows, each falling back on the ``inference`` row."""
    speeds = measured_speeds()
    if kind == "training":
        row = measured_speed_for(slug, kind, stack)
        return {} if row is None else {"compute": (row, kind), "bandwidth": (row, kind)}
    found = {}
    for phase, name in zip(SERVING_PHASES, ("compute", "bandwidth"), strict=True):
        for key in (phase, "inference"):
            if (slug, key) in speeds:
                found[name] = (speeds[(slug, key)], key)
                break
    return found


def phase_ratios(spec, gpu) -> tuple[float, float, bool, str, str] | None:
    """(compute ratio, bandwidth ratio, measured, why, reference slug) to the reference part (the H100, the B200
    for the GB200: MeasuredSpeed.reference) for a part ranked at a measured speed,
    None for a part that keeps the datasheet model. A non-NVIDIA part without a measurement gets 1.0, a
    cap, applied only where its datasheet would claim more than the H100 (``measured`` False). A part
    with an efficiency fitted on its own published measurements for the task (sizing/efficiency.py) runs
    at its datasheet peak times that efficiency instead of the cap: the measurement already says how
    much of its peak its software reaches."""
    kind = task_class(spec)
    stack = getattr(spec, "training_stack", "other") if kind == "training" else "other"
    ratios = _phase_ratios(kind, gpu.slug, gpu.is_nvidia, stack)
    if ratios is not None and not ratios[2] and measured_efficiency(spec, gpu) is not None:
        return None
    return ratios


@lru_cache(maxsize=1024)
def _phase_ratios(
    kind: str, slug: str, is_nvidia: bool, stack: str = "other"
) -> tuple[float, float, bool, str, str] | None:
    """Memoized: a ranking asks about 400 times per workload, once per GPU kind and use."""
    phases = _measured_phases(kind, slug, stack)
    if phases:
        (compute, compute_kind), (bandwidth, bandwidth_kind) = phases["compute"], phases["bandwidth"]
        why = compute.text(slug, compute_kind)
        if bandwidth is not compute:
            why += "; " + bandwidth.text(slug, bandwidth_kind)
        mismatch = stack_text(slug, compute, stack)
        if mismatch:
            why += "; " + mismatch
        if (
            kind == "training"
            and compute.reference != REFERENCE_GPU
            and not _measured_phases("inference", slug, "other")
        ):
            # fixm45 (aud45m [1c]): no serving row for such a part, so it serves on its datasheet; say so here
            from procurement.sizing.gpus import gpu_by_slug

            name = REFERENCE_NAMES.get(compute.reference, compute.reference)
            own, ref = (
                gpu_by_slug(slug).dense_tflops("fp8"),
                gpu_by_slug(compute.reference).dense_tflops("fp8"),
            )
            datasheet = (
                f" (FP8 {own:,.0f} / {ref:,.0f} TFLOPS = {own / ref:.2f}x {name})" if own and ref else ""
            )
            why += (
                f"; it serves at its datasheet speed{datasheet}, no measured serving ratio being on file, but trains "
                f"at this measured {compute.ratio:g}x {name}"
            )
        return compute.ratio, bandwidth.ratio, True, why, compute.reference
    if is_nvidia:
        return None
    why = (
        f"speed: no published measured {kind} throughput for {slug}; capped at the H100's modelled speed "
        "(a datasheet peak above it is not assumed)"
    )
    return 1.0, 1.0, False, why, REFERENCE_GPU


def speed_ratio(spec, gpu) -> tuple[float | None, str]:
    """(ratio to its reference part, why) for a part ranked at a measured speed, the compute one for serving (the
    why names both phases); (None, why) for a part that keeps the datasheet model, the why naming the
    published measurements its efficiency was fitted on, or "" for the generic efficiency."""
    ratios = phase_ratios(spec, gpu)
    if ratios is None:
        return None, _datasheet_why(spec, gpu)
    return ratios[0], _with_host_floor(spec, ratios[3], gpu)


def _with_host_floor(spec, why: str, gpu) -> str:
    """The why with the eager PEFT host floor's clause (lora_host.text), which every card states alike, and QLoRA's
    dequantization (qlora_dequant.text, which names where its measured rate was taken off an A100)."""
    from procurement.sizing import decode_attention, lora_host, qlora_dequant, serving_host
    from procurement.sizing.throughput import marlin_text

    texts = (
        why,
        lora_host.text(spec),
        qlora_dequant.text(spec, gpu.slug),
        serving_host.text(spec),
        marlin_text(spec, gpu),
        decode_attention.text(spec, gpu),
    )
    return "; ".join(text for text in texts if text)


def _datasheet_why(spec, gpu) -> str:
    """Why a part on the datasheet model runs at its efficiency: the published measurements it was fitted
    on, the width ceiling where that binds (mfu.width_text) and an MoE's routed work (mfu.moe_text); "" for
    the generic efficiency."""
    from procurement.sizing import fp8_split
    from procurement.sizing.clocks import sm_count
    from procurement.sizing.image_model import detector_fill_text
    from procurement.sizing.mfu import (
        moe_text,
        mtp_text,
        packed_text,
        recompute_text,
        torchao_text,
        width_text,
    )

    parts = (
        efficiency_text(spec, gpu),
        detector_fill_text(spec, sm_count(gpu)) if spec.model.image_arch is not None else "",
        width_text(spec, gpu),
        fp8_split.text(spec),
        moe_text(spec, gpu),
        mtp_text(spec),
        torchao_text(spec, gpu),
        packed_text(spec),
        recompute_text(spec, gpu),
    )
    return _with_host_floor(spec, "; ".join(text for text in parts if text), gpu)


def effective_speed(spec, kind_gpus, peak, mfu, bandwidth) -> tuple:
    """Per kind: (peak TFLOPS, memory bandwidth GB/s, why) the speed model uses, with ``mfu`` per kind
    (training) so that peak x MFU is the reference part's (the H100; the B200 for the GB200) times the measured
    ratio; parts that keep the datasheet model are returned unchanged with an empty why."""
    from procurement.sizing.gpus import gpu_by_slug

    references: dict[str, tuple] = {}
    peak, bandwidth, why = list(peak), list(bandwidth), []
    for index, gpu in enumerate(kind_gpus):
        ratios = phase_ratios(spec, gpu)
        why.append(_with_host_floor(spec, ratios[3], gpu) if ratios else _datasheet_why(spec, gpu))
        if ratios is None:
            continue
        ratio, bandwidth_ratio, measured, _, reference_slug = ratios
        if reference_slug not in references:
            reference = gpu_by_slug(reference_slug)
            ref_peak = reference.dense_tflops(spec.precision) or float("nan")
            ref_mfu = _reference_mfu(spec, reference) if spec.is_training else 1.0
            references[reference_slug] = reference, ref_peak, ref_mfu
        reference, ref_peak, ref_mfu = references[reference_slug]
        if spec.is_training:
            target = _with_card_independent_seconds(spec, ref_peak * ref_mfu * ratio)
            own = peak[index] * mfu[index]
            product = target if measured else min(own, target)
            peak[index] = product / mfu[index] if mfu[index] else peak[index]
            # the measured ratio is the whole step's: bandwidth-bound work beside the FLOPs (QLoRA's unpacking,
            # qlora_dequant.py) runs at the H100's bandwidth times the same ratio, never above the part's own
            # datasheet bandwidth (fixm45: a ratio measured on compute-bound steps, the GB200's 1.025 x the B200's
            # 8,000 GB/s, would otherwise read 8,200 GB/s for MoE routed bytes and QLoRA unpacking)
            ref_bandwidth = min(reference.memory_bandwidth_gbps * ratio, gpu.memory_bandwidth_gbps)
            bandwidth[index] = ref_bandwidth if measured else min(bandwidth[index], ref_bandwidth)
        else:
            peak[index] = ref_peak * ratio if measured else min(peak[index], ref_peak * ratio)
            ref_bandwidth = reference.memory_bandwidth_gbps * bandwidth_ratio
            bandwidth[index] = ref_bandwidth if measured else min(bandwidth[index], ref_bandwidth)
    return peak, bandwidth, why


def _reference_mfu(spec, reference) -> float:
    """The reference part's MFU the measured ratio scales: without the Hopper-only FP8 grouped-GEMM cost of an MoE
    (the measured part runs its own kernels) and without the MoE's card-independent seconds a layer and
    micro-batch (mfu.moe_fixed_seconds_per_token), which _with_card_independent_seconds adds back whole."""
    from procurement.sizing.mfu import estimate_mfu, measured_part_moe_factor

    return estimate_mfu(spec, reference) / measured_part_moe_factor(spec, reference)


def _with_card_independent_seconds(spec, tflops: float) -> float:
    """The effective TFLOP/s of a part ranked at a measured ratio once an MoE's card-independent seconds
    (host launches, the dispatcher's sync, one grouped-GEMM launch per local expert: mfu.moe_fixed_seconds)
    are paid at their own length, not divided by the ratio: b200x, the GB200 had run them 2.2x faster than
    the B200 on the datasheet model. Unchanged for dense models, inference and a stated MFU."""
    from procurement.sizing.mfu import moe_fixed_seconds_per_token
    from procurement.sizing.throughput import training_flops_per_token

    fixed = 0.0 if spec.mfu else moe_fixed_seconds_per_token(spec)
    if not fixed or not tflops or tflops != tflops:
        return tflops
    flops = training_flops_per_token(spec)
    return flops / (flops / (tflops * 1e12) + fixed) / 1e12
