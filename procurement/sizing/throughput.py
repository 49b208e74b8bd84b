"""Speed estimates, vectorized over (GPU model x GPU count x parallelism plan) rows.

Training: time = FLOPs per token x tokens / (GPUs x dense peak x MFU), with 6N FLOPs per token
(8N under full recomputation; LoRA/QLoRA skip the frozen weights' gradient matmuls: 4N, 6N with
recomputation), a pipeline bubble, ZeRO-3 / offload / QLoRA step overheads, and communication:
the data-parallel gradient all-reduce (2(n-1)/n x gradient bytes, 1.5x under ZeRO-3, partly hidden
under the backward pass) and tensor-parallel activation all-reduces (not hidden).

Inference: one decode step reads the weights once and each stream's KV cache, so a stream's
tokens/s <= achieved bandwidth / bytes read; the step is compute bound once concurrency x 2N FLOPs
outweighs the reads. Time to first token is the compute-bound prefill of the prompt.
"""

from __future__ import annotations

import numpy as np

from procurement.sizing import params as counts
from procurement.sizing.assumptions import (
    ACHIEVED_BANDWIDTH_FRACTION,
    COMM_OVERLAP,
    INT4_DECODE_EFFICIENCY,
    INT8_DECODE_EFFICIENCY,
    OFFLOAD_OVERHEAD,
    PREFILL_MFU,
    QLORA_DEQUANT_OVERHEAD,
    SHARDING_OVERHEAD,
    TP_ALLREDUCE_LATENCY,
)
from procurement.sizing.bytes_model import DTYPE_BYTES, state_bytes
from procurement.sizing.spec import WorkloadSpec


def _array(value, default) -> np.ndarray:
    return np.asarray(default if value is None else value, dtype=float)


def training_flops_per_token(spec: WorkloadSpec) -> float:
    """FLOPs per trained token: 6N (8N with full recomputation); adapters skip frozen weight gradients."""
    n_active = counts.active_params(spec.model)
    recompute = spec.gradient_checkpointing == "full"
    if spec.uses_adapters:
        adapters = state_bytes(spec).trainable_params
        return (6.0 if recompute else 4.0) * n_active + 6.0 * adapters
    return (8.0 if recompute else 6.0) * n_active


def _step_overhead(spec: WorkloadSpec, zero: np.ndarray) -> np.ndarray:
    overhead = np.where(zero >= 3, SHARDING_OVERHEAD.value, 0.0)
    if spec.parallelism.offload != "none":
        overhead = overhead + OFFLOAD_OVERHEAD.value
    if spec.task == "qlora":
        overhead = overhead + QLORA_DEQUANT_OVERHEAD.value
    return 1.0 + overhead


def training_throughput(
    spec: WorkloadSpec,
    *,
    peak_tflops,
    gpu_counts,
    interconnect_gbps,
    mfu,
    tensor_parallel_gbps=None,
    zero_stage=None,
    tensor_parallel=None,
    pipeline_parallel=None,
) -> dict[str, np.ndarray]:
    """Tokens/s, hours and communication share per row.

    peak_tflops: dense peak for the precision; interconnect_gbps: per-GPU collective bandwidth of the
    data-parallel group; tensor_parallel_gbps: that of the tensor-parallel group (within a node;
    defaults to interconnect_gbps).
    """
    par = spec.parallelism
    gpus = _array(gpu_counts, par.gpus)
    zero = _array(zero_stage, par.zero_stage)
    tp = _array(tensor_parallel, par.tensor_parallel)
    pp = _array(pipeline_parallel, par.pipeline_parallel)
    peak = _array(peak_tflops, np.nan) * 1e12
    link = _array(interconnect_gbps, np.inf) * 1e9
    tp_link = _array(tensor_parallel_gbps, np.nan) * 1e9
    tp_link = np.where(np.isnan(tp_link), link, tp_link)
    dp = gpus / (tp * pp)
    accumulation = float(spec.gradient_accumulation_steps)
    micro_tokens = float(spec.seq_len * spec.micro_batch_size)
    step_tokens = micro_tokens * accumulation * dp

    bubble = 1.0 + (pp - 1.0) / accumulation
    compute_s = training_flops_per_token(spec) * step_tokens / (gpus * peak * _array(mfu, 0.4))
    compute_s = compute_s * bubble * _step_overhead(spec, zero)

    state = state_bytes(spec)
    gradient_bytes = state.trainable_params * state.grad_bytes_per_param / (tp * pp)
    dp_volume = 2.0 * (dp - 1.0) / dp * gradient_bytes * np.where(zero >= 3, 1.5, 1.0)
    dp_comm_s = dp_volume / link
    tp_message = micro_tokens * spec.model.hidden_size * 2.0
    tp_calls = 4.0 * spec.model.num_layers / pp * accumulation
    tp_comm_s = np.where(
        tp > 1, tp_calls * (2.0 * (tp - 1.0) / tp * tp_message / tp_link + TP_ALLREDUCE_LATENCY.value), 0.0
    )
    exposed_dp = np.maximum(0.0, dp_comm_s - COMM_OVERLAP.value * compute_s)
    step_s = compute_s + exposed_dp + tp_comm_s
    tokens_per_second = step_tokens / step_s
    with np.errstate(invalid="ignore", divide="ignore"):
        hours = (spec.training_tokens or np.nan) / tokens_per_second / 3600.0
        share = (dp_comm_s + tp_comm_s) / (compute_s + dp_comm_s + tp_comm_s)
    return {
        "training_tokens_per_second": tokens_per_second,
        "training_hours": hours,
        "communication_share": share,
        "step_seconds": step_s,
        "flops_per_token": np.full_like(step_s, training_flops_per_token(spec)),
    }


def training_hours(spec: WorkloadSpec, **rows) -> np.ndarray:
    """Hours to train `spec.training_tokens` for each row (see training_throughput for the arguments)."""
    return training_throughput(spec, **rows)["training_hours"]


DECODE_EFFICIENCY = {
    "int8": INT8_DECODE_EFFICIENCY.value,
    "int4": INT4_DECODE_EFFICIENCY.value,
    "nf4": INT4_DECODE_EFFICIENCY.value,
}


def decode_read_bytes(spec: WorkloadSpec, concurrency: float) -> tuple[float, float]:
    """(weight bytes read per decode step, KV bytes read per stream per step), whole model; quantized
    weights in bandwidth-equivalent bytes (stored bytes / the kernel's dequantization efficiency)."""
    model = spec.model
    state = state_bytes(spec)
    weight_read = state.weight_bytes
    if not model.tie_word_embeddings:  # the input embedding is a row lookup, not a full read
        weight_read -= model.vocab_size * model.hidden_size * min(DTYPE_BYTES[spec.precision], 2.0)
    if model.is_moe:  # routed experts are read only when some stream in the batch picks them
        active = counts.active_params(model)
        experts, k = model.num_experts, model.experts_per_token
        expert_params = (model.params - active) * experts / (experts - k)
        touched = 1.0 - (1.0 - k / experts) ** concurrency
        weight_read -= expert_params * (1.0 - touched) * state.weight_bytes / model.params
    # Quantized weights cost more time per byte (dequantization): count them as bandwidth-equivalent bytes.
    weight_read /= DECODE_EFFICIENCY.get(spec.weight_quantization, 1.0)
    inference = spec.inference
    average_context = inference.prompt_tokens + inference.output_tokens / 2.0
    kv_read = counts.kv_elems_per_token(model) * DTYPE_BYTES[inference.kv_cache_dtype] * average_context
    return weight_read, kv_read


def inference_throughput(
    spec: WorkloadSpec,
    *,
    bandwidth_gbps,
    peak_tflops,
    gpu_counts=None,
    tensor_parallel=None,
    pipeline_parallel=None,
    achieved_bandwidth: float = ACHIEVED_BANDWIDTH_FRACTION,
) -> dict[str, np.ndarray]:
    """Decode tokens/s (per stream and total over concurrency and replicas) and time to first token."""
    par = spec.parallelism
    gpus = _array(gpu_counts, par.gpus)
    tp = _array(tensor_parallel, par.tensor_parallel)
    pp = _array(pipeline_parallel, par.pipeline_parallel)
    bandwidth = _array(bandwidth_gbps, np.nan) * 1e9
    peak = _array(peak_tflops, np.nan) * 1e12
    concurrency = float(spec.inference.concurrency)
    weight_read, kv_read = decode_read_bytes(spec, concurrency)
    n_active = counts.active_params(spec.model)
    # Pipeline stages run one after another for a token, so only tensor parallelism adds bandwidth.
    memory_s = (weight_read + concurrency * kv_read) / (tp * bandwidth * achieved_bandwidth)
    compute_s = concurrency * 2.0 * n_active / (tp * peak * PREFILL_MFU.value)
    latency_s = np.where(tp > 1, 2.0 * spec.model.num_layers * TP_ALLREDUCE_LATENCY.value, 0.0)
    step_s = np.maximum(memory_s, compute_s) + latency_s
    replicas = np.floor(gpus / (tp * pp))
    prompt = float(spec.inference.prompt_tokens)
    prefill_s = np.maximum(2.0 * n_active * prompt / (tp * peak * PREFILL_MFU.value), memory_s / concurrency)
    single_stream_bound = (weight_read + kv_read) / (tp * bandwidth)
    return {
        "decode_tokens_per_second_per_stream": 1.0 / step_s,
        "decode_tokens_per_second_total": concurrency / step_s * replicas,
        "time_to_first_token_seconds": prefill_s + latency_s,
        "decode_bound": np.where(compute_s > memory_s, "compute", "memory"),
        "decode_tokens_per_second_upper_bound": 1.0 / single_stream_bound,
    }
