"""Shapes: (GPU kind, instances, plan) with memory, hours and fit, computed once per shape for a workload."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from procurement.ranking.contract import all_gates, contract_grid, pipeline_degree
from procurement.ranking.interconnects import Interconnect
from procurement.ranking.measured import measured_counts, scaled_hours
from procurement.ranking.options import PARTIAL_TENSOR_PARALLEL, PLAN_NAMES, PLANS, RankingOptions
from procurement.ranking.serving import serving_fit
from procurement.ranking.sizing_memo import arrays_key, calibration_key, freeze, memoized, spec_key
from procurement.ranking.splits import (
    serving_pipeline_plans,
    serving_stage_tensor_parallel,
    tensor_parallel_splits_heads,
    tensor_parallel_splits_mlp,
)
from procurement.sizing import (
    GpuSpec,
    WorkloadSpec,
    inference_throughput,
    memory_breakdown_gib,
    training_throughput,
)
from procurement.sizing.accelerators import effective_speed, speed_ratio
from procurement.sizing.assumptions import (
    COMM_EFFICIENCY,
    GPUS_PER_NODE,
    TIGHT_UTILIZATION,
)
from procurement.sizing.bytes_model import is_mxfp4
from procurement.sizing.compatibility import stated_expert_precision
from procurement.sizing.compute_peak import expert_rate_inputs, power_bound_tflops, spec_peak_tflops
from procurement.sizing.decode_attention import sm_clock_hz
from procurement.sizing.efficiency import serving_efficiency
from procurement.sizing.host import pipeline_vcpus_needed, stack_host_ram, vcpus_per_gpu
from procurement.sizing.mfu import (
    bandwidth_factor,
    estimate_mfu,
    memory_factor,
    output_copy_gemm_efficiency,
    recompute_time_share,
)
from procurement.sizing.mxfp4_padding import kind_multiples


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
    fits: np.ndarray  # memory, compatibility, speed, fabric (the host is checked per offer: configurations)
    # the peak fits but not with the spec's headroom (or uses over 90% of the card): runnable, ranked after
    # every configuration that fits with headroom (sizing.verdict's "tight", one rule for size and recommend)
    tight: np.ndarray
    valid: np.ndarray  # a real plan (e.g. tensor parallel needs >1 GPU per instance; NVLink to train)
    incompatible: list[str]  # per kind: the compatibility error, "" when none
    offloaded_per_gpu_gib: np.ndarray  # optimizer/weights offloaded to host RAM, per GPU
    host_ram_gib: np.ndarray  # host RAM one instance needs: its GPUs' memory plus what they offload
    # vCPUs one instance needs: for training that decodes images on the CPU, what its loader needs to feed its
    # GPUs (host_vcpus_needed); else the guides' per-GPU minimum
    host_vcpus: np.ndarray
    assumed_vcpus: (
        np.ndarray
    )  # vCPUs an offer without a vCPU figure is taken at: the pipeline need, as `size`
    generated_tokens_per_second: np.ndarray  # serving: decode tokens/s of the configuration; NaN for training
    link: np.ndarray  # per shape: index into the links table
    links: list[Interconnect]
    no_fabric: np.ndarray  # several instances of a training plan on an instance type without a fabric
    communication: dict[str, np.ndarray]  # per shape: the collectives' seconds and bytes per step
    estimated_speed: list[str] = field(default_factory=list)  # per kind: why its peak figures are derived
    # serving (ranking/serving.py): decode tokens/s of one instance, and its latency; None for training
    unit_tokens_per_second: np.ndarray | None = None
    time_per_output_token_ms: np.ndarray | None = None
    time_to_first_token_ms: np.ndarray | None = None
    meets_serving_targets: np.ndarray | None = None
    # training: the GPU count of the benchmark a measured shape's hours were scaled from (NaN: estimated)
    measured_gpus: np.ndarray | None = None
    # per kind: why its speed is a measured ratio to the H100 (or capped at it); "" for the datasheet model
    speed_basis: list[str] = field(default_factory=list)
    # why each shape is a plan or not (ShapeGrid.gates plus the spec's), with the GPUs per instance and the
    # GPUs of one replica they are judged on: ranking/empty.py names the gate that leaves a ranking empty
    plan_gates: dict[str, np.ndarray] = field(default_factory=dict)
    per_instance: np.ndarray | None = None
    grid_total: np.ndarray | None = None
    # host RAM one instance needs for what its training stack holds (sizing.host.stack_host_ram: loaded weights
    # as the loader holds them + loader buffers + runtime, a process a GPU, + offloaded state); NaN where no
    # stack is known (the card rule host_ram_gib then only warns). Rows below it rank below the first row
    # meeting it (configurations.host_shortfall); the words of its parts for the row's warning
    host_ram_stack_gib: np.ndarray | None = None
    host_ram_stack_parts: str = ""
    # per shape: the plan's pipeline degree (a serving pipeline plan's n; the spec's otherwise)
    pipeline: np.ndarray | None = None

    def serving_at(self, shape: int) -> tuple[float, float, float]:
        """(decode tokens/s of one instance, time per output token ms, time to first token ms)."""
        unit, tpot, ttft = (
            self.unit_tokens_per_second,
            self.time_per_output_token_ms,
            self.time_to_first_token_ms,
        )
        if unit is None or tpot is None or ttft is None:
            raise ValueError("training shapes have no serving figures")
        return float(unit[shape]), float(tpot[shape]), float(ttft[shape])


@dataclass(frozen=True)
class ShapeGrid:
    """Every (GPU kind, instances, plan) with the figures that do not depend on the workload: built once per
    prepared offer table and instance counts, shared by every workload ranked against it."""

    kind_gpus: list[GpuSpec]  # per kind
    kind: np.ndarray  # per shape: index into the kinds table
    instances: np.ndarray
    plan: np.ndarray  # index into PLAN_NAMES
    zero: np.ndarray
    tensor_parallel: np.ndarray
    total: np.ndarray  # GPUs in the configuration
    valid: np.ndarray  # a real plan (e.g. tensor parallel needs >1 GPU per instance)
    flash_ok: np.ndarray
    capacity_gib: np.ndarray
    bandwidth_gbps: np.ndarray
    uses_tp: np.ndarray
    partial_tp: (
        np.ndarray
    )  # a partial tensor-parallel plan's group (options.PARTIAL_TENSOR_PARALLEL); 0: none
    per_instance: np.ndarray
    link: np.ndarray  # index into links
    links: list[Interconnect]
    node_scale_up: (
        np.ndarray
    )  # the GPUs share NVLink or Infinity Fabric (training tensor parallelism needs it)
    node_gbps: np.ndarray  # per-GPU collective GB/s of the node link (rate x COMM_EFFICIENCY)
    node_mesh: np.ndarray  # the node link is a switchless full mesh (Infinity Fabric): see mesh_share
    fabric_gbps: np.ndarray  # per-GPU collective GB/s of the fabric (instance rate / GPUs x efficiency)
    has_fabric: np.ndarray
    slugs: np.ndarray
    # why each shape is or is not a plan: name -> per-shape pass mask (``valid`` is all of them), read by
    # ranking/empty.py to say which one leaves a ranking empty
    gates: dict[str, np.ndarray] = field(default_factory=dict, compare=False, repr=False)
    # the sizing of the workloads ranked on this grid, per distinct spec shape (ranking/sizing_memo.py);
    # shared with the contract grids replaced from this one
    memo: dict = field(default_factory=dict, compare=False, repr=False)
    # per shape: the pipeline degree of the plan (None: the spec's, contract.pipeline_degree); a serving replica
    # split over an instance's GPUs as a pipeline (splits.serving_pipeline_plans) has TP 1 x PP n
    pipeline: np.ndarray | None = field(default=None, compare=False, repr=False)


def grid_pipeline(spec: WorkloadSpec, grid: ShapeGrid) -> np.ndarray | float:
    """Per shape: the plan's pipeline degree (the spec's where the grid states none)."""
    return pipeline_degree(spec) if grid.pipeline is None else grid.pipeline


def with_serving_pipelines(spec: WorkloadSpec, grid: ShapeGrid) -> ShapeGrid:
    """The grid with serving's pipeline plans (splits.serving_pipeline_plans) at TP t x PP n / t (t: 1, or a
    stated pipeline's stage degree, splits.serving_stage_tensor_parallel)."""
    plans = serving_pipeline_plans(spec, grid)
    if not plans.any():
        return grid
    stated = "pipeline_parallel" in spec.parallelism.stated and spec.parallelism.pipeline_parallel > 1
    stage_tp = float(serving_stage_tensor_parallel(spec)) if stated else 1.0
    return replace(
        grid,
        tensor_parallel=np.where(plans, stage_tp, grid.tensor_parallel),
        pipeline=np.where(plans, grid.per_instance / stage_tp, 1.0),
    )


def link_rates(link: Interconnect, per_instance: float) -> tuple[float, float]:
    """(node, fabric) per-GPU collective bandwidth in GB/s: the node link's per-direction rate and the
    instance's fabric shared by its GPUs, each at COMM_EFFICIENCY (nccl-tests bus bandwidth)."""
    node = link.node_gbps_per_direction * COMM_EFFICIENCY.value
    fabric = link.fabric_gbytes_per_instance / per_instance * COMM_EFFICIENCY.value
    return node, fabric


MESH_LINKS_PER_GPU = 7  # AMD's 8-GPU MI300X/MI325X platform: one Infinity Fabric link to each of 7 peers


def mesh_share(group, per_instance, mesh) -> np.ndarray:
    """Share of the node link's stated per-GPU rate a collective over ``group`` GPUs of an instance drives.
    A full mesh (AMD's 8-GPU MI300X/MI325X platform: 7 Infinity Fabric links per GPU, one to each peer)
    gives a group of k GPUs k - 1 of the 7 links (ROCm's MI300X tuning guide: collectives over fewer than 8
    GPUs "can only use a fraction of the potential bandwidth on the node"); a 2- or 4-GPU slice of the
    baseboard (runpod 2x / 4x_MI300X) keeps the same 7 x 64 GB/s links, so its pair drives 1 of 7. A switched
    link (NVSwitch) or PCIe gives every group the whole rate. A group of one moves nothing (one link keeps the
    division finite)."""
    links = np.maximum(np.asarray(group, dtype=float), 2.0) - 1.0
    share = np.minimum(links / MESH_LINKS_PER_GPU, 1.0)
    return np.where(np.asarray(mesh) & (np.asarray(per_instance) > 1), share, 1.0)


def shape_grid(
    kinds: pd.DataFrame,
    gpus: Mapping[str, GpuSpec],
    instance_counts: Sequence[int],
    links: Sequence[Interconnect],
) -> ShapeGrid:
    counts, plans = np.array(instance_counts, dtype=float), np.arange(len(PLAN_NAMES))
    per_kind = len(counts) * len(plans)
    kind = np.repeat(np.arange(len(kinds)), per_kind)
    instances = np.tile(np.repeat(counts, len(plans)), len(kinds))
    plan = np.tile(np.tile(plans, len(counts)), len(kinds))
    per_instance = kinds["gpus_per_instance"].to_numpy(dtype=float)[kind]
    kind_gpus = [gpus[slug] for slug in kinds["gpu"]]
    zero, uses_tp, partial_tp, tensor_parallel, total, gates = _plan_gates(plan, instances, per_instance)
    kind_links = [links[int(i)] for i in kinds["link"]]
    rates = np.array(
        [link_rates(link, float(n)) for link, n in zip(kind_links, kinds["gpus_per_instance"], strict=True)],
        dtype=float,
    ).reshape(-1, 2)
    grid = ShapeGrid(
        kind_gpus=kind_gpus,
        kind=kind,
        instances=instances,
        plan=plan,
        zero=zero,
        tensor_parallel=tensor_parallel,
        total=total,
        valid=all_gates(gates, total.shape),
        gates=gates,
        flash_ok=np.array([gpu.supports_flash_attention() for gpu in kind_gpus], dtype=bool)[kind],
        capacity_gib=np.array([gpu.capacity_gib for gpu in kind_gpus], dtype=float)[kind],
        bandwidth_gbps=np.array([gpu.memory_bandwidth_gbps for gpu in kind_gpus], dtype=float)[kind],
        uses_tp=uses_tp,
        partial_tp=partial_tp,
        per_instance=per_instance,
        link=kinds["link"].to_numpy(dtype=np.int64)[kind],
        links=list(links),
        node_scale_up=np.array([link.scale_up for link in kind_links], dtype=bool)[kind],
        node_gbps=rates[:, 0][kind],
        node_mesh=np.array([link.mesh for link in kind_links], dtype=bool)[kind],
        fabric_gbps=rates[:, 1][kind],
        has_fabric=np.array([link.has_fabric for link in kind_links], dtype=bool)[kind],
        slugs=kinds["gpu"].to_numpy(dtype=object)[kind],
    )
    # shared by every workload ranked on the grid: read-only, so the sizing memo keys them once
    freeze(*(value for value in vars(grid).values() if isinstance(value, np.ndarray)), *gates.values())
    return grid


def _plan_arrays(plan, instances, per_instance) -> tuple[np.ndarray, ...]:
    """(ZeRO stage, uses TP, partial TP group, TP degree, GPUs, valid) per shape. A partial plan's group
    divides a larger instance's GPUs (TP 2 or 4 of 8, data parallel across the groups); TP never crosses
    an instance, and a group of all of its GPUs is the "tensor_parallel" plan."""
    zero, uses_tp, partial, tensor_parallel, total, gates = _plan_gates(plan, instances, per_instance)
    return zero, uses_tp, partial, tensor_parallel, total, all_gates(gates, total.shape)


def _plan_gates(plan, instances, per_instance) -> tuple:
    """``_plan_arrays`` with the validity as named gates (ranking/empty.py names the one that fails)."""
    zero = np.array([PLANS[name][0] for name in PLAN_NAMES], dtype=float)[plan]
    uses_tp = np.array([PLANS[name][1] for name in PLAN_NAMES])[plan]
    partial = np.array([PARTIAL_TENSOR_PARALLEL.get(name, 0) for name in PLAN_NAMES], dtype=float)[plan]
    total = per_instance * instances
    tensor_parallel = np.where(partial > 0, partial, np.where(uses_tp, per_instance, 1.0))
    tp_instance = np.where(uses_tp, per_instance > 1, True)
    tp_instance &= (partial == 0) | ((per_instance > partial) & (per_instance % np.maximum(partial, 1) == 0))
    gates = {
        "tp_instance": tp_instance,
        "zero_one_gpu": (zero == 0) | (total > 1),  # ZeRO-3 over one GPU is plain data parallel
    }
    return zero, uses_tp, partial, tensor_parallel, total, gates


def nvlink_within(gpu: GpuSpec, gpus_per_instance: int) -> bool:
    """The GPU model can be NVLinked across this many GPUs (datasheet); the instance's own link
    (procurement/ranking/interconnects.py) decides what ranking uses."""
    return gpu.has_nvlink_switch or (gpu.bridge_gpus >= gpus_per_instance > 1)


def plan_validity(spec: WorkloadSpec, valid, uses_tp, node_scale_up, partial_tp=0) -> np.ndarray:
    """Training tensor parallelism needs NVLink or Infinity Fabric within the instance (per-layer all-reduces on the critical
    path of every micro-batch); serving tensor parallelism runs over PCIe too, costed (vLLM does). The
    partial tensor-parallel plans are training plans (a serving replica is the stated TP group)."""
    return valid & all_gates(plan_validity_gates(spec, uses_tp, node_scale_up, partial_tp), np.shape(valid))


def plan_validity_gates(spec: WorkloadSpec, uses_tp, node_scale_up, partial_tp=0) -> dict[str, np.ndarray]:
    """``plan_validity``'s rules as named gates (ranking/empty.py)."""
    return {
        "tp_link": ~(uses_tp & ~node_scale_up & spec.is_training),
        "image_tp": ~(uses_tp & spec.model.is_image),  # image presets run data parallel only
        "serving_partial": ~((np.asarray(partial_tp) > 0) & (not spec.is_training)),
    }


def slower_partial_plans(partial_tp, hours, fits, offloaded) -> np.ndarray:
    """Per shape: a partial tensor-parallel plan that loses to another plan of the same GPU kind and
    instance count (same offers, same price per hour, so the faster plan is the cheaper row): it is not
    ranked. A partial plan is kept only where it is the fastest partial plan there and faster than every
    fitting data-parallel, ZeRO-3 and whole-instance TP plan that offloads nothing (a plan that offloads
    may be refused by an offer's host RAM). So rankings where no partial plan wins are unchanged, and the
    extra plans add rows (and priced configurations) only where they win."""
    plans = len(PLAN_NAMES)
    partial = np.asarray(partial_tp).reshape(-1, plans) > 0
    time = np.where(np.asarray(fits).reshape(-1, plans), np.asarray(hours).reshape(-1, plans), np.inf)
    base = np.where(~partial & (np.asarray(offloaded).reshape(-1, plans) <= 0), time, np.inf).min(axis=1)
    best_partial = np.where(partial, time, np.inf)
    first = np.argmin(best_partial, axis=1)  # the fastest partial plan (the smallest group on a tie)
    keep = np.zeros(partial.shape, dtype=bool)
    rows = np.arange(len(first))
    keep[rows, first] = best_partial[rows, first] < base
    return (partial & ~keep).reshape(-1)


def needs_missing_fabric(spec: WorkloadSpec, instances, zero, has_fabric) -> np.ndarray:
    """Several instances of a training plan (or sharded serving) on an instance type without a fabric.
    Independent serving replicas on separate instances exchange nothing and need none."""
    return (instances > 1) & (spec.is_training | (zero >= 3)) & ~has_fabric


def _memory_on(grid: ShapeGrid, spec: WorkloadSpec, flash: bool) -> dict[str, np.ndarray]:
    """``_memory`` on the (contract) grid's plan arrays, once per distinct spec shape."""
    pipeline = np.broadcast_to(np.asarray(grid_pipeline(spec, grid), dtype=float), np.shape(grid.total))
    arrays = (grid.total, grid.zero, grid.tensor_parallel, pipeline)
    # the card matters to memory only through an MXFP4 checkpoint's backend padding (sizing.mxfp4_padding)
    multiples = kind_multiples(grid.kind_gpus, grid.kind) if is_mxfp4(spec) else None
    padding_key = arrays_key(*multiples) if multiples is not None else None

    def sized(plan_spec: WorkloadSpec) -> dict[str, np.ndarray]:
        key = ("memory", spec_key(plan_spec), arrays_key(*arrays), flash, padding_key)
        return memoized(grid.memo, key, lambda: _memory(plan_spec, *arrays, flash, multiples))

    return per_accumulation(spec, grid, sized)


def row_accumulation(spec: WorkloadSpec, grid: ShapeGrid, gpu_counts=None) -> np.ndarray | None:
    """Per shape, the micro-batches a step its plan runs the spec's stated global batch at (sizing.spec.
    accumulation_at over the shape's data-parallel ranks, gpus / (tp x pp x cp); ``gpu_counts``: at these
    GPU counts, else the shape's); 0 where it does not divide. None where the spec states no global batch
    (every row then runs the spec's gradient_accumulation_steps)."""
    if not spec.is_training or spec.global_batch_size is None:
        return None
    model_parallel = grid.tensor_parallel * pipeline_degree(spec) * spec.parallelism.context_parallel
    counts = grid.total if gpu_counts is None else gpu_counts
    with np.errstate(invalid="ignore", divide="ignore"):
        ranks = np.asarray(counts, dtype=float) / model_parallel
    whole = np.isfinite(ranks) & (ranks >= 1) & (ranks == np.floor(ranks))
    per_micro_batch = spec.micro_batch_size * np.where(whole, ranks, 1.0)
    divides = whole & (spec.global_batch_size % per_micro_batch == 0)
    return np.where(divides, spec.global_batch_size // per_micro_batch, 0).astype(int)


def per_accumulation(spec: WorkloadSpec, grid: ShapeGrid, compute, gpu_counts=None) -> dict:
    """``compute(spec)`` with each shape's own gradient_accumulation_steps (``row_accumulation``, at
    ``gpu_counts`` GPUs where given): once per distinct count, each shape taking its count's arrays. A shape
    whose plan does not divide the global batch takes the first count's (the ``global_batch`` gate drops it).
    Without a stated global batch: ``compute(spec)``."""
    counts = row_accumulation(spec, grid, gpu_counts)
    if counts is None:
        return compute(spec)
    distinct = sorted({int(c) for c in np.unique(counts) if c > 0}) or [spec.gradient_accumulation_steps]
    sized = {c: compute(_with_accumulation(spec, c)) for c in distinct}
    merged = dict(sized[distinct[0]])
    shape = np.shape(grid.total)
    for c in distinct[1:]:
        chosen = counts == c
        for key, value in sized[c].items():
            if isinstance(value, np.ndarray) and value.shape == shape:
                merged[key] = np.where(chosen, value, merged[key])
    return merged


_ACCUMULATION_SPECS: dict[tuple[int, int], tuple[WorkloadSpec, WorkloadSpec]] = {}


def _with_accumulation(spec: WorkloadSpec, count: int) -> WorkloadSpec:
    """The spec at ``count`` micro-batches a step, one object per (spec, count) so the sizing memo keys it once."""
    if count == spec.gradient_accumulation_steps:
        return spec
    entry = _ACCUMULATION_SPECS.get((id(spec), count))
    if entry is None or entry[0] is not spec:
        if len(_ACCUMULATION_SPECS) >= 256:
            _ACCUMULATION_SPECS.clear()
        entry = _ACCUMULATION_SPECS[(id(spec), count)] = (
            spec,
            replace(spec, gradient_accumulation_steps=count),
        )
    return entry[1]


def _memory(
    spec: WorkloadSpec, total, zero, tensor_parallel, pipeline, flash, mxfp4_multiples=None
) -> dict[str, np.ndarray]:
    offload = spec.parallelism.offload
    table = {}
    for key, use_offload in (("plain", "none"), ("offload", offload)):
        table[key] = memory_breakdown_gib(
            spec,
            total,
            zero_stage=zero,
            tensor_parallel=tensor_parallel,
            pipeline_parallel=pipeline,
            offload=use_offload,
            flash_attention=flash,
            mxfp4_multiples=mxfp4_multiples,
        )
    # offload runs with ZeRO at any stage (DeepSpeed offloads the optimizer at stages 1-3; the parser refuses it
    # at stage 0 and parameter offload below stage 3): the stated stage or the ZeRO-3 plan, as `size` sizes it
    keep_offload = (zero >= 1) & (offload != "none")
    return {
        key: np.where(keep_offload, table["offload"][key], table["plain"][key])
        for key in ("total_per_gpu_gib", "required_per_gpu_gib", "host_ram_gib")
    }


def offloaded_per_gpu_gib(host_ram_gib_per_node, total_gpus):
    """The sizing engine reports offloaded state per node (up to GPUS_PER_NODE GPUs): per GPU here."""
    return host_ram_gib_per_node / np.minimum(total_gpus, GPUS_PER_NODE.value)


def host_needs(spec: WorkloadSpec, capacity_gib, offloaded_gib, gpus_per_instance) -> tuple:
    """(RAM GiB, vCPUs) one instance needs: the guides' host rules as the sizing engine states them
    (procurement/sizing/host.py): RAM at least its GPUs' memory plus offloaded state, and at least
    VCPUS_PER_GPU vCPUs per GPU (more for image decoding)."""
    per_gpu = vcpus_per_gpu(spec)
    return gpus_per_instance * (capacity_gib + offloaded_gib), gpus_per_instance * per_gpu


def stack_host_ram_needs(spec: WorkloadSpec, offloaded_gib, gpus_per_instance) -> tuple[np.ndarray, str]:
    """(RAM GiB one instance needs for what its training stack holds, its parts in words): a training process a
    GPU, each holding sizing.host.stack_host_ram, plus the offloaded state; NaN and "" where the stack is unknown
    (aud44r, stop 44: the card rule host_needs is then a warning only)."""
    gpus = np.asarray(gpus_per_instance, dtype=float)
    stack = stack_host_ram(spec)
    if stack is None:
        return np.full(np.broadcast(gpus, offloaded_gib).shape, np.nan), ""
    return gpus * (stack[0] + offloaded_gib), stack[1]


def host_vcpus_needed(spec: WorkloadSpec, hours, instances, gpus_per_instance) -> np.ndarray:
    """vCPUs one instance needs (issue 29): host.pipeline_vcpus_needed at its GPUs' own images/s (the run's
    images / GPU-side `hours` / instances), the one rule `size` recommends too. A row below it is one whose
    hours its loader sets (configurations: loader_bound_hours)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        images_per_second = (
            (spec.training_tokens or np.nan) / (np.asarray(hours, dtype=float) * 3600.0) / instances
        )
    return pipeline_vcpus_needed(spec, images_per_second, gpus_per_instance)


def build_shapes(spec: WorkloadSpec, grid: ShapeGrid, options: RankingOptions) -> Shapes:
    """The workload's memory, hours and fit for every shape of the grid (the spec's stated parallelism
    applied: ranking/contract.py)."""
    grid = contract_grid(spec, with_serving_pipelines(spec, grid), options)
    total, zero, tensor_parallel = grid.total, grid.zero, grid.tensor_parallel
    flash = spec.flash_attention
    memory_flash = _memory_on(grid, spec, flash)
    memory_eager = _memory_on(grid, spec, False) if flash else memory_flash
    flash_ok = grid.flash_ok
    total_gib = np.where(flash_ok, memory_flash["total_per_gpu_gib"], memory_eager["total_per_gpu_gib"])
    required = np.where(flash_ok, memory_flash["required_per_gpu_gib"], memory_eager["required_per_gpu_gib"])
    if options.calibration:  # fitted memory-overhead factors per GPU model and method
        factor = np.array([memory_factor(spec, gpu, options.calibration) for gpu in grid.kind_gpus])[
            grid.kind
        ]
        total_gib, required = total_gib * factor, required * factor
    hours, share, generated, communication, serving_rows = _hours(spec, grid, options)
    measured, measured_gpus = _measured_hours(spec, grid, options, hours)
    no_fabric = needs_missing_fabric(spec, grid.instances, zero, grid.has_fabric)
    hours = np.where(np.isnan(measured), hours, measured)
    hours = np.where(no_fabric, np.nan, hours)  # not runnable (not even at a benchmark's speed): no price
    incompatible, estimated_speed, speed_basis = _kind_texts(grid, spec)
    compatible = np.array([not reason for reason in incompatible], dtype=bool)[grid.kind]
    gates = dict(grid.gates) | plan_validity_gates(spec, grid.uses_tp, grid.node_scale_up, grid.partial_tp)
    # no training-only plans in serving: ZeRO-3/FSDP shards optimizer state inference lacks
    gates["serving_zero"] = np.asarray(spec.is_training | (zero < 3))
    gates["tp_heads"] = tensor_parallel_splits_heads(spec, tensor_parallel)
    gates["tp_mlp"] = tensor_parallel_splits_mlp(spec, tensor_parallel)
    accumulation = row_accumulation(spec, grid)
    if (
        accumulation is not None
    ):  # the stated global batch splits into whole micro-batches (Megatron asserts it)
        gates["global_batch"] = accumulation > 0
    valid = grid.valid & all_gates(gates, zero.shape)
    runnable = total_gib <= grid.capacity_gib
    tight = runnable & (
        (required > grid.capacity_gib) | (total_gib > TIGHT_UTILIZATION.value * grid.capacity_gib)
    )
    fits = valid & compatible & runnable & np.isfinite(hours) & ~no_fabric
    host = np.where(flash_ok, memory_flash["host_ram_gib"], memory_eager["host_ram_gib"])
    offloaded = offloaded_per_gpu_gib(host, total)
    slower = slower_partial_plans(grid.partial_tp, hours, fits, offloaded)
    valid, fits = valid & ~slower, fits & ~slower
    host_ram, _ = host_needs(spec, grid.capacity_gib, offloaded, total / grid.instances)
    host_ram_stack, stack_parts = stack_host_ram_needs(spec, offloaded, total / grid.instances)
    host_vcpus = host_vcpus_needed(spec, hours, grid.instances, total / grid.instances)
    instances, total_gpus, serving = grid.instances, total, {}
    if serving_rows is not None:  # serving: replicas from demand, instances of one-instance configurations
        fit = serving_fit(spec, generated, serving_rows["per_stream"], serving_rows["ttft_s"])
        fits &= fit.meets_targets
        instances, total_gpus = grid.instances * fit.instances, total * fit.instances
        serving = {
            "unit_tokens_per_second": generated,
            "time_per_output_token_ms": fit.time_per_output_token_ms,
            "time_to_first_token_ms": fit.time_to_first_token_ms,
            "meets_serving_targets": fit.meets_targets,
        }
        generated = generated * fit.instances
    return Shapes(
        kind=grid.kind,
        instances=instances,
        total_gpus=total_gpus,
        plan=grid.plan,
        zero=zero,
        tensor_parallel=tensor_parallel,
        pipeline=np.broadcast_to(np.asarray(grid_pipeline(spec, grid), dtype=float), np.shape(total)),
        total_gib=total_gib,
        required_gib=required,
        capacity_gib=grid.capacity_gib,
        hours=hours,
        communication_share=share,
        measured=~np.isnan(measured),
        measured_gpus=measured_gpus,
        fits=fits,
        tight=tight & fits,
        valid=valid,
        plan_gates=gates,
        per_instance=grid.per_instance,
        grid_total=total,
        incompatible=incompatible,
        offloaded_per_gpu_gib=offloaded,
        host_ram_gib=host_ram,
        host_vcpus=host_vcpus,
        assumed_vcpus=host_vcpus,
        host_ram_stack_gib=host_ram_stack,
        host_ram_stack_parts=stack_parts,
        generated_tokens_per_second=generated,
        estimated_speed=estimated_speed,
        speed_basis=speed_basis,
        link=grid.link,
        links=grid.links,
        no_fabric=no_fabric,
        communication=communication,
        **serving,
    )


def _kind_texts(grid: ShapeGrid, spec: WorkloadSpec) -> tuple[list[str], list[str], list[str]]:
    """Per kind: (why the GPU cannot run the spec, why its peak figures are derived, why its speed is a
    measured ratio), once per distinct spec shape; each caller gets its own lists."""
    texts = memoized(
        grid.memo,
        ("kind texts", spec_key(spec)),
        lambda: (
            [incompatibility(spec, gpu) for gpu in grid.kind_gpus],
            [_estimated_speed_text(gpu) for gpu in grid.kind_gpus],
            [speed_ratio(spec, gpu)[1] for gpu in grid.kind_gpus],
        ),
    )
    return list(texts[0]), list(texts[1]), list(texts[2])


def _estimated_speed_text(gpu: GpuSpec) -> str:
    if not gpu.throughput_estimated:
        return ""
    return f"speed estimated from derived peak figures for {gpu.slug} ({gpu.throughput_estimated})"


def incompatibility(spec: WorkloadSpec, gpu: GpuSpec) -> str:
    if not gpu.supports_precision(spec.precision):
        return f"{gpu.slug} ({gpu.architecture}) cannot run {spec.precision}"
    experts = stated_expert_precision(spec)
    if experts and not gpu.supports_precision(experts):
        # the sizing page's gate (compatibility.check_gpu): stated experts at a precision the card lacks
        return f"{gpu.slug} ({gpu.architecture}) cannot run {experts} experts (inference.expert_precision)"
    if gpu.dense_tflops(spec.precision if spec.precision != "fp32" else "fp32") is None:
        return f"no datasheet {spec.precision} throughput for {gpu.slug}: speed not estimated"
    return ""


def _power_bound(spec: WorkloadSpec, kind_gpus, kind) -> np.ndarray | None:
    """Each shape's board-power bound on an image generation's FLOP rate (compute_peak.power_bound_tflops);
    None for language models."""
    if spec.model.image_arch is None:
        return None
    return np.array([power_bound_tflops(spec, gpu) for gpu in kind_gpus], dtype=float)[kind]


def _hours(
    spec: WorkloadSpec, grid: ShapeGrid, options: RankingOptions
) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, np.ndarray], dict | None]:
    """(hours, communication share, generated tokens/s, the collectives, serving rows) per shape; the
    serving rows (per-stream tokens/s and time to first token) are None for training."""
    kind_gpus, kind, total = grid.kind_gpus, grid.kind, grid.total
    if not spec.is_training:
        kind_peak = [spec_peak_tflops(spec, gpu) or np.nan for gpu in kind_gpus]
        kind_bandwidth = [gpu.memory_bandwidth_gbps for gpu in kind_gpus]
        kind_peak, kind_bandwidth, _ = effective_speed(spec, kind_gpus, kind_peak, kind_peak, kind_bandwidth)
        peak = np.array(kind_peak, dtype=float)[kind]
        bandwidth = np.array(kind_bandwidth, dtype=float)[kind]
        # routed experts at a stated precision of their own (inference.expert_precision; NaN otherwise, unused)
        expert = np.array(
            [expert_rate_inputs(spec, gpu, p) for gpu, p in zip(kind_gpus, kind_peak, strict=True)],
            dtype=float,
        ).reshape(-1, 2)[kind]
        rows = inference_throughput(
            spec,
            bandwidth_gbps=bandwidth,
            achieved_bandwidth=np.array([gpu.decode_read_fraction for gpu in kind_gpus], dtype=float)[kind],
            peak_tflops=peak,
            expert_peak_tflops=expert[:, 0],
            expert_compute_efficiency=expert[:, 1],
            gpu_counts=total,
            tensor_parallel=grid.tensor_parallel,
            pipeline_parallel=grid_pipeline(spec, grid),
            tensor_parallel_gbps=grid.node_gbps
            * mesh_share(grid.tensor_parallel, grid.per_instance, grid.node_mesh),
            tensor_parallel_nvlink=grid.node_scale_up,  # the instance's node link: PCIe rings pay NCCL's PCIe hop
            # a serving pipeline's stages in flight at once, a send between them over the node link (vLLM)
            pipeline_link_gbps=None if grid.pipeline is None else grid.node_gbps,
            generation=np.array([gpu.generation or 0 for gpu in kind_gpus])[kind],
            compute_efficiency=np.array([serving_efficiency(spec, gpu) for gpu in kind_gpus])[kind],
            power_bound_tflops=_power_bound(spec, kind_gpus, kind),
            sm_clock_hz=np.array([sm_clock_hz(gpu) for gpu in kind_gpus], dtype=float)[kind],
            l2_cache_bytes=np.array([gpu.l2_cache_bytes or np.nan for gpu in kind_gpus], dtype=float)[kind],
            # the card's memory picks the framework's default token budget under closed_loop (serving_load.py)
            gpu_memory_gib=np.array([gpu.capacity_gib for gpu in kind_gpus], dtype=float)[kind],
        )
        decode = np.asarray(rows["decode_tokens_per_second_total"], dtype=float)
        served = np.isfinite(decode)
        step = np.asarray(rows["decode_step_seconds"], dtype=float)
        tp_s = np.asarray(rows["decode_communication_seconds"], dtype=float) * np.ones_like(total)
        with np.errstate(invalid="ignore", divide="ignore"):
            share = tp_s / step
        communication = {"tensor_parallel_seconds": tp_s, "step_seconds": step * np.ones_like(total)}
        latency = {
            "per_stream": np.asarray(rows["decode_tokens_per_second_per_stream"], dtype=float),
            "ttft_s": np.asarray(rows["time_to_first_token_seconds"], dtype=float),
        }
        hours = np.where(served, options.serving_hours, np.nan)
        if spec.model.image_arch is not None and spec.image.images:  # a generation job: hours for N images
            with np.errstate(invalid="ignore", divide="ignore"):
                hours = np.where(served, spec.image.images / decode / 3600.0, np.nan)
        return hours, share, decode, communication, latency
    rows = per_accumulation(spec, grid, lambda plan_spec: _training_rows(plan_spec, grid, options, total))
    return rows["training_hours"], rows["communication_share"], np.full(total.shape, np.nan), rows, None


def _training_rows(spec: WorkloadSpec, grid: ShapeGrid, options: RankingOptions, gpu_counts) -> dict:
    """The training model for every shape's GPU model and plan at ``gpu_counts`` GPUs: memoized per
    distinct spec shape without its token count, whose hours are derived here exactly as
    ``training_throughput`` derives them."""
    counts = np.asarray(gpu_counts)
    arrays = (counts, grid.kind, grid.zero, grid.tensor_parallel, grid.per_instance)
    key = ("training", spec_key(spec), arrays_key(*arrays), calibration_key(options.calibration))
    rows = memoized(grid.memo, key, lambda: _training_rows_computed(spec, grid, options, counts))
    with np.errstate(invalid="ignore", divide="ignore"):
        hours = (spec.training_tokens or np.nan) / rows["training_tokens_per_second"] / 3600.0
    # an image run's evaluations (image.eval_every_epochs) do not scale with the token count
    hours = hours + rows.get("evaluation_hours", 0.0)
    return rows | {"training_hours": hours}


def _training_rows_computed(spec: WorkloadSpec, grid: ShapeGrid, options: RankingOptions, gpu_counts) -> dict:
    kind_gpus, kind = grid.kind_gpus, grid.kind
    kind_peak = [spec_peak_tflops(spec, gpu) or np.nan for gpu in kind_gpus]
    kind_mfu = [estimate_mfu(spec, gpu, options.calibration) for gpu in kind_gpus]
    kind_peak, kind_bandwidth, _ = effective_speed(
        spec, kind_gpus, kind_peak, kind_mfu, [gpu.memory_bandwidth_gbps for gpu in kind_gpus]
    )
    peak = np.array(kind_peak, dtype=float)[kind]
    mfu = np.array(kind_mfu, dtype=float)[kind]
    # data-parallel ranks sharing an instance, as the throughput model counts them (its dp_per_node)
    dp_per_instance = np.maximum(1.0, grid.per_instance / (grid.tensor_parallel * pipeline_degree(spec)))
    return training_throughput(
        spec,
        peak_tflops=peak,
        gpu_counts=gpu_counts,
        mfu=mfu,
        zero_stage=grid.zero,
        tensor_parallel=grid.tensor_parallel,
        pipeline_parallel=pipeline_degree(spec),
        interconnect_gbps=grid.node_gbps * mesh_share(dp_per_instance, grid.per_instance, grid.node_mesh),
        tensor_parallel_gbps=grid.node_gbps
        * mesh_share(grid.tensor_parallel, grid.per_instance, grid.node_mesh),
        gpus_per_node=grid.per_instance,
        fabric_gbps=grid.fabric_gbps,
        vcpus_per_gpu=np.inf,  # GPU-side hours: configure() bounds them by each offer's vCPUs
        memory_bandwidth_gbps=np.array(
            [
                bw * bandwidth_factor(spec, gpu, options.calibration)
                for bw, gpu in zip(kind_bandwidth, kind_gpus, strict=True)
            ],
            dtype=float,
        )[kind],
        recompute_share=np.array([recompute_time_share(spec, gpu) for gpu in kind_gpus], dtype=float)[kind],
        output_gemm_efficiency=np.array(
            [output_copy_gemm_efficiency(spec, gpu) for gpu in kind_gpus], dtype=float
        )[kind],
        flash_capable=grid.flash_ok,
    )


def _measured_hours(
    spec: WorkloadSpec, grid: ShapeGrid, options: RankingOptions, modelled_hours: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(hours, measured GPU count) per shape from a matching benchmark of the same GPU model, scaled from
    its GPU count to the shape's with the communication model (procurement.ranking.measured); NaN where
    there is none or the plan's tensor-parallel group does not fit the measured count."""
    measured = np.full(grid.total.shape, np.nan)
    speeds = options.measured_tokens_per_second
    if not speeds or not spec.is_training or not spec.training_tokens:
        return measured, measured.copy()
    counts = measured_counts(speeds, grid.slugs, grid.total)
    scalable = ~np.isnan(counts) & (np.nan_to_num(counts) >= grid.tensor_parallel)
    counts = np.where(scalable, counts, np.nan)
    tokens_per_second = np.full(grid.total.shape, np.nan)
    for (slug, gpus), speed in speeds.items():
        tokens_per_second[(grid.slugs == slug) & (counts == gpus)] = speed
    same = counts == grid.total
    modelled_k = modelled_hours
    if np.any(scalable & ~same):
        # the benchmark's run at its own count: under a stated global batch it ran that count's micro-batches
        # a step (global / (micro x its data-parallel ranks)), not the shape's
        at = np.where(scalable, counts, grid.total)
        rows = per_accumulation(
            spec, grid, lambda plan_spec: _training_rows(plan_spec, grid, options, at), at
        )
        modelled_k = np.asarray(rows["training_hours"])
    hours = scaled_hours(spec.training_tokens / tokens_per_second / 3600.0, modelled_hours, modelled_k, same)
    return np.where(scalable, hours, np.nan), counts
