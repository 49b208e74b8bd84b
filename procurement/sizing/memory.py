"""Memory per GPU, as a breakdown, vectorized over parallelism plans.

`memory_breakdown_gib(spec, gpu_counts, ...)` evaluates one workload over arrays of GPU counts and
ZeRO / tensor / pipeline settings at once (the ranking engine calls it over many plans); every key
ends in `_gib` (2^30 bytes). A GPU count that is not a multiple of tensor x pipeline parallel is
not a valid plan and yields NaN.

Sharding model: ZeRO-1 partitions optimizer state over the data-parallel group, ZeRO-2 adds the
gradients, ZeRO-3/FSDP adds the weights but gathers the largest layer whole (with a GPU's own num_experts / ep
routed experts under expert parallelism: params.largest_layer_params); tensor and pipeline
parallelism divide the weights (activations follow Korthikanti et al. 2022 with sequence
parallelism, and a 1F1B pipeline's first stage holding `min(p, micro-batches)` micro-batches, times
1 + (p - 1) / (p v) under the interleaved schedule of v chunks a stage); context parallelism divides the
activations by cp; expert parallelism divides the routed experts' weights, gradients and unsharded optimizer
state by ep (under ZeRO the expert state is sharded over dp x cp / ep ranks, so a GPU holds 1 / (dp x cp) of
it either way); offload moves optimizer state and gradients (and with `optimizer_and_params` the weights) to
host RAM, reported per node as `host_ram_gib`. A training run whose micro-batches vary in length (`max_seq_len`) is
sized at its longest: the peak is that batch's (at_longest_sequence). A loop that frees its gradients between steps
(`zero_grad: set_to_none`, torch >= 2.0's default) holds them beside the activations only where they persist
(_gradients_at_freed_peak); `in_place`, the default, keeps the sum. DeepSpeed ZeRO-1/2 peaks at the larger of the
backward and the optimizer step, whose fp32 cast of the gradient partition outlives the activations
(_gradients_at_zero_step_peak). QLoRA on GPTQ int4 keeps the unpacked 16-bit weights autograd saves
for the backward as `dequantized_weights_gib` (qlora_dequant.saved_copy_bytes).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from procurement.sizing import bnb_memory, distillation, fsdp_reshard, image, image_model, qlora_dequant
from procurement.sizing.assumptions import (
    CUDA_CONTEXT_GIB,
    FRAGMENTATION_FRACTION,
    GIB,
    GPUS_PER_NODE,
    PREFILL_CHUNK_TOKENS,
)
from procurement.sizing.bytes_model import (
    DTYPE_BYTES,
    StateBytes,
    activation_scale,
    adamw_for_loop_temporary_params,
    adamw_step_temporary_states,
    compute_bytes,
    expert_weight_bytes,
    is_mxfp4,
    op_level_saved_bytes_per_token,
    op_level_saved_matmuls,
    routed_expert_params,
    saved_module_peak_bytes,
    state_bytes,
)
from procurement.sizing.expert_layout import expert_groups_tile, routed_expert_divisor
from procurement.sizing.mxfp4_padding import mxfp4_padded_expert_factor
from procurement.sizing.params import cached_tokens, kv_elems_per_token, routed_expert_fraction
from procurement.sizing.pipeline_split import (
    heaviest_stage_layer_batches,
    heaviest_stage_param_share,
    stage_split,
)
from procurement.sizing.spec import WorkloadSpec

MEMORY_KEYS = (
    "weights_gib",
    "gradients_gib",
    "optimizer_states_gib",
    "activations_gib",
    "kv_cache_gib",
    "dequantized_weights_gib",
    "teacher_weights_gib",
    "framework_overhead_gib",
    "total_per_gpu_gib",
    "required_per_gpu_gib",
    "host_ram_gib",
)


def _array(value, default) -> np.ndarray:
    return np.asarray(default if value is None else value, dtype=float)


def memory_breakdown_gib(
    spec: WorkloadSpec,
    gpu_counts=None,
    *,
    zero_stage=None,
    tensor_parallel=None,
    pipeline_parallel=None,
    offload: str | None = None,
    flash_attention: bool | None = None,
    mxfp4_multiples=None,
) -> dict[str, np.ndarray]:
    """Per-GPU memory for each plan; None arguments take the spec's values. Arrays broadcast together.
    ``mxfp4_multiples``: (hidden, intermediate) multiples per row of the card's MXFP4 MoE backend
    (mxfp4_padding.mxfp4_backend_multiples), read under inference.quant_format mxfp4; None: no card, no padding."""
    spec = at_longest_sequence(spec)
    par = spec.parallelism
    gpus = _array(gpu_counts, par.gpus)
    zero = _array(zero_stage, par.zero_stage)
    tp = _array(tensor_parallel, par.tensor_parallel)
    pp = _array(pipeline_parallel, par.pipeline_parallel)
    offload = par.offload if offload is None else offload
    flash = spec.flash_attention if flash_attention is None else flash_attention
    model_parallel = tp * pp
    with np.errstate(invalid="ignore", divide="ignore"):
        dp = np.where(_tiles(par, gpus, model_parallel, pp), gpus / model_parallel, np.nan)
    if spec.model.image_arch is not None:
        parts = image_model.memory_bytes(spec, state_bytes(spec), dp, zero, flash)
    elif spec.model.is_image_tier:
        parts = image.tier_memory_bytes(spec, dp)
    elif spec.is_training:
        parts = _training_bytes(spec, state_bytes(spec), dp, zero, tp, pp, offload, flash)
    else:
        parts = _inference_bytes(spec, state_bytes(spec), dp, tp, pp, mxfp4_multiples)
    return _finish(spec, parts, gpus)


def at_longest_sequence(spec: WorkloadSpec) -> WorkloadSpec:
    """The spec memory is sized at: a run whose micro-batches are padded to their longest sample peaks on the
    longest batch (its activations, loss and logits at max_seq_len tokens), while its speed and hours follow the
    mean length (seq_len, which throughput.py reads from the spec as stated)."""
    longest = spec.memory_seq_len
    if longest == spec.seq_len:
        return spec
    return replace(spec, seq_len=longest, max_seq_len=None)


def _tiles(par, gpus, model_parallel, pp) -> np.ndarray:
    """Whether each GPU count holds whole tp x pp x cp groups, and each stage's ranks whole EP groups."""
    return (np.mod(gpus, model_parallel * par.context_parallel) == 0) & expert_groups_tile(
        gpus, pp, par.expert_parallel
    )


def memory_per_gpu_gib(spec: WorkloadSpec, gpu_counts=None, **plan) -> np.ndarray:
    """Estimated peak per GPU (total_per_gpu_gib) for each plan."""
    return memory_breakdown_gib(spec, gpu_counts, **plan)["total_per_gpu_gib"]


def required_memory_per_gpu_gib(spec: WorkloadSpec, gpu_counts=None, **plan) -> np.ndarray:
    """Peak per GPU plus the spec's headroom."""
    return memory_breakdown_gib(spec, gpu_counts, **plan)["required_per_gpu_gib"]


def _training_bytes(spec, state: StateBytes, dp, zero, tp, pp, offload, flash) -> dict[str, np.ndarray]:
    # dp: the ranks holding the same stage shard (data x context parallel), over which ZeRO shards. Each
    # holds 1 / ep of the routed experts, and ZeRO shards those over dp / ep ranks: 1 / dp of them too.
    unsharded = expert_share(spec, dp * tp * pp, tp, pp)
    shard_optimizer = np.where(zero >= 1, dp, 1.0 / unsharded)
    shard_gradients = np.where(zero >= 2, dp, 1.0 / unsharded)
    shard_weights = np.where(zero >= 3, dp, 1.0 / unsharded)
    kept = fsdp_reshard.keeps_gathered(spec, zero)  # parallelism.reshard_after_forward false
    gather_buffer = np.where((zero >= 3) & ~kept, state.largest_layer_bytes / tp, 0.0)

    stage = _stage_param_share(spec, pp)  # 1 / pp, or the heaviest stage's share of a stated split
    weights = state.weight_bytes * stage / tp / shard_weights
    optimizer = state.trainable_params * state.optimizer_bytes_per_param * stage / tp / shard_optimizer
    if spec.optimizer_in_backward:  # the step runs inside backward: one layer's gradients live at a time
        gradients = _one_layer_grads(state) / tp + 0 * dp
    else:
        gradients = state.trainable_params * state.grad_bytes_per_param * stage / tp / shard_gradients
    if np.any(kept):
        held_weights, held_gradients = fsdp_reshard.gathered_stage_bytes(spec, state, stage, tp, unsharded)
        weights = np.where(kept, held_weights, weights)
        gradients = np.where(kept & (pp > 1), held_gradients, gradients)
    host = np.zeros_like(weights)
    if offload in ("optimizer", "optimizer_and_params"):
        host = host + optimizer + gradients
        optimizer, gradients = optimizer * 0, gradients * 0
    if offload == "optimizer_and_params":
        host = host + weights
        weights = weights * 0
    weights = weights + gather_buffer
    offloaded = _offloaded_activation_bytes(spec, state, tp, pp, flash)
    activations = _training_activation_bytes(spec, state, tp, pp, flash) - offloaded
    activations = activations + _saved_module_peak(spec, activations, stage, tp, zero, offload)
    host = host + offloaded
    # quantization.*: what the stated bitsandbytes stack holds (bnb_memory.py; nothing for the defaults)
    head_saving, copies = bnb_memory.head_bytes(spec, tp, pp)
    activations = activations + _bnb_saved_input_bytes(spec, stage, tp, pp)
    if frees_gradients(spec, offload):
        gradients = _gradients_at_freed_peak(spec, state, gradients, activations, tp, dp, zero, pp)
    gradients = gradients + _deepspeed_ipg_buffer_bytes(spec) + 0 * dp
    gradients = _gradients_at_zero_step_peak(
        spec, state, gradients, activations, stage, tp, dp, zero, offload
    )
    return {
        "weights": weights - head_saving,
        # distillation.py: an online teacher's frozen weights, and what the loss holds of its logits
        "teacher_weights": distillation.teacher_weight_bytes(spec, tp) + 0 * dp,
        "gradients": gradients,
        "optimizer_states": optimizer,
        "activations": activations + distillation.teacher_activation_bytes(spec, tp) + 0 * dp,
        "kv_cache": np.zeros_like(weights),
        "dequantized_weights": _dequantized_weight_bytes(spec, stage, unsharded, tp, pp) + copies + 0 * dp,
        "host_offload": host,
    }


def _deepspeed_ipg_buffer_bytes(spec) -> float:
    """DeepSpeed ZeRO-1/2's gradient staging buffers (parallelism.reduce_bucket_size, overlap_comm), on the GPU
    through every backward, so beside the backward's peak: with contiguous_gradients (DeepSpeed's default,
    zero/config.py line 93) DeepSpeedZeroOptimizer.backward allocates `torch.empty(reduce_bucket_size,
    dtype=self.dtype)`, the 16-bit parameters' dtype, and a second one under overlap_comm ("Use double buffers to
    avoid data access conflict"): deepspeed/runtime/zero/stage_1_and_2.py@v0.12.3 lines 1934-1947. They are
    released at the end of that backward, not at the step: engine.py@v0.12.3 line 1966 (DeepSpeedEngine.backward ->
    allreduce_gradients) -> line 1887 (ZeRO-2: overlapping_partition_gradients_reduce_epilogue every micro-batch;
    ZeRO-1: reduce_gradients at the accumulation boundary, line 676) -> stage_1_and_2.py line 823 ->
    independent_gradient_partition_epilogue, whose last act is self._release_ipg_buffers() (line 750; line 624
    sets ipg_buffer = None). So they sit beside the backward's peak and are gone at the optimizer step. Whole-size
    whatever the trainable count (a LoRA's few MB of gradients still get 2 x 2e8 elements), unsharded by the
    data-parallel degree."""
    par = spec.parallelism
    if not par.reduce_bucket_size:
        return 0.0
    buffers = 2.0 if par.overlap_comm else 1.0
    return buffers * par.reduce_bucket_size * compute_bytes(spec)


# Training stacks whose zero_stage 1 / 2 is DeepSpeed's DeepSpeedZeroOptimizer (stage_1_and_2.py): HF Trainer /
# Accelerate's DeepSpeed ("other") and GPT-NeoX (DeepSpeed's fork). Megatron's distributed optimizer and llm.c's
# ZeRO-1 step their own gradient buffers (no fp32 copy of the partition), maxtext / torchtitan are not DeepSpeed.
DEEPSPEED_ZERO_STACKS = ("other", "gpt_neox")


def _gradients_at_zero_step_peak(
    spec, state: StateBytes, gradients, activations, stage, tp, dp, zero, offload
):
    """DeepSpeed ZeRO-1/2's peak is the larger of the backward's and the optimizer step's, reported as `gradients`
    = that peak less the activations (the breakdown still sums to it; the step's own weights and states are the
    backward's). DeepSpeedZeroOptimizer.step, deepspeed/runtime/zero/stage_1_and_2.py@v0.12.3 (6ea44d02) lines
    1758-1788, per parameter group without cpu_offload: `self.flatten(self.averaged_gradients[i]).to(fp32)` (line
    1768) holds the rank's 16-bit gradient partition (views into grads_in_partition, line 1257: 16 bits at ZeRO-1
    too, line 1319) + the flat 16-bit copy + the fp32 copy at once; the 16-bit ones go (lines 1776-1778) and the fp32
    copy is the optimizer's .grad through _optimizer_step (line 1786), freed after (line 1788). The activations were
    freed by backward and the ipg buckets at its end (line 750), so the step holds weights + optimizer states +
    _zero_step_bytes_per_param x the stage's trainable parameters / tp / dp. Only on the GPU (cpu_offload steps a
    host fp32 buffer, lines 1738-1756) and on DeepSpeed's stacks (DEEPSPEED_ZERO_STACKS)."""
    if (
        offload != "none"
        or spec.optimizer_in_backward
        or spec.training_stack not in DEEPSPEED_ZERO_STACKS
        or not state.grad_bytes_per_param
    ):
        return gradients
    step = state.trainable_params * _zero_step_bytes_per_param(spec, state) * stage / tp / dp
    at_peak = np.maximum(activations + gradients, step) - activations
    return np.where((zero == 1) | (zero == 2), at_peak, gradients)


def _zero_step_bytes_per_param(spec, state: StateBytes) -> float:
    """Bytes a partition parameter at DeepSpeed ZeRO-1/2's step (_gradients_at_zero_step_peak): the larger of the
    flatten-and-cast (16-bit partition + flat copy + fp32 copy: 2 + 2 + 4 = 8 B in 16-bit training; fp32 training's
    `.to(fp32)` returns the flat copy itself: 4 + 4) and the optimizer step over the fp32 gradient (4 B) with a
    wrapped torch AdamW's state-sized temporaries (bytes_model.adamw_step_temporary_states, fp32 states: 0 for
    DeepSpeed's FusedAdam, 1 at torch >= 2.1, 2 at 2.0). A run whose optimizer has several parameter groups keeps
    the one contiguous 16-bit buffer (line 1257) until the last group's views go; not counted (HF Trainer's second,
    no-decay group is a few biases and norms, stepped after the big one)."""
    grad = state.grad_bytes_per_param
    cast = 2.0 * grad + (4.0 if grad < 4.0 else 0.0)
    optimizer_step = 4.0 + 4.0 * adamw_step_temporary_states(spec)
    return max(cast, optimizer_step)


def frees_gradients(spec, offload=None) -> bool:
    """Whether the spec's loop frees its gradients between steps in a way memory can count: zero_grad
    set_to_none (torch >= 2.0's Optimizer.zero_grad default) with one micro-batch a step (accumulation keeps
    them across micro-batches), the optimizer stepped after backward, on the GPU (no offload). The plan's own
    limits (one data-parallel rank, no pipeline, ZeRO 0) are _gradients_at_freed_peak's."""
    offload = spec.parallelism.offload if offload is None else offload
    return (
        spec.zero_grad == "set_to_none"
        and spec.gradient_accumulation_steps == 1
        and not spec.optimizer_in_backward
        and offload == "none"
    )


def _gradients_at_freed_peak(spec, state: StateBytes, gradients, activations, tp, dp, zero, pp):
    """The gradient bytes the peak holds beside the activations when the loop frees them between steps.

    The next forward runs with no gradients alive, so the step's peak is weights + optimizer states +
    max(activations + the first gradients backward creates, gradients + the optimizer step's temporary):
    backward frees each layer's saved tensors as it creates that layer's gradients, so between its start (every
    activation, and the output head's weight gradient, its first: the tied lm_head / embedding gradient) and its
    end (every gradient) the sum is linear in the layers done and peaks at one end; the step then adds its
    temporary. Reported as `gradients` = that peak less the activations, so the breakdown still sums to it.

    Where it holds: one data-parallel rank (dp 1), no pipeline, ZeRO 0 (ZeRO-1/2 means DeepSpeed, whose optimizer keeps
    its own gradient partition and steps differently, aud49z: _gradients_at_zero_step_peak, zstep). Elsewhere the plan keeps a
    gradient-sized buffer the whole step and the sum stands: torch DDP's reducer buckets (pytorch/pytorch
    PR #41954: pointing .grad at the bucket buffers dropped roberta-base's peak by ~1 GB, its gradients' size,
    so without it the buckets are a second, persistent copy), ZeRO-2 / 3 and FSDP reduce-scatter into sharded
    gradient buffers as backward produces them (no source found that frees them before the next forward), and
    a pipeline runs several micro-batches a step."""
    head = float(spec.model.vocab_size * spec.model.hidden_size) * state.grad_bytes_per_param / tp
    first = gradients if spec.uses_adapters else np.minimum(head, gradients)  # adapters: all, conservatively
    step_temporary = _step_temporary_bytes(spec, state, gradients, tp)
    at_peak = np.maximum(activations + first, gradients + step_temporary) - activations
    holds = (dp == 1) & (pp == 1) & (zero == 0)
    return np.where(holds, at_peak, gradients)


def _step_temporary_bytes(spec, state: StateBytes, gradients, tp) -> np.ndarray:
    """torch AdamW's state-sized temporaries at the step (bytes_model.adamw_step_temporary_states: 2 for foreach at
    torch 2.0.x, 1 for foreach from 2.1, the default "current"; 0 for fused and the other optimizers), each one
    second-moment state over the gradients' own parameters (the rule's plans are one data-parallel rank: the local
    shard is the whole stage; optmem48's trace saw the `_foreach_sqrt` one). Only the set_to_none peak counts it:
    with the gradients held, the activations already sit beside them. Before torch 2.0 the default for-loop holds
    only the largest parameter's few tensors instead (bytes_model.adamw_for_loop_temporary_params; fix50o)."""
    states = adamw_step_temporary_states(spec)
    loop_params = adamw_for_loop_temporary_params(spec)
    if not (states or loop_params) or not state.grad_bytes_per_param:
        return gradients * 0.0
    param_bytes = state.grad_bytes_per_param
    second_moment = 4.0 if (spec.master_weights_fp32 or param_bytes >= 4.0) else param_bytes
    if loop_params:  # torch < 2.0's for-loop: the largest parameter's few tensors (bytes_model), split by tp
        return gradients * 0.0 + loop_params * second_moment / tp
    return gradients * states * second_moment / param_bytes


def _saved_module_peak(spec, activations, stage, tp, zero, offload) -> np.ndarray:
    """lora.modules_to_save's transient peak over the activations (bytes_model.saved_module_peak_bytes): the buffer
    beside them, or the one after them less the activations it outlives, whichever is larger; on zero_stage 0 with
    the optimizer on the GPU (HF Trainer's torch AdamW; DeepSpeed's optimizers step in place), reported with the
    activations (both are transient)."""
    beside, after = saved_module_peak_bytes(spec)
    if not (beside or after) or offload != "none":
        return np.zeros_like(activations)
    share = stage / tp
    extra = np.maximum(beside * share, after * share - activations)
    return np.where(zero == 0, np.maximum(extra, 0.0), 0.0)


def _bnb_saved_input_bytes(spec, stage, tp, pp) -> np.ndarray:
    """The 4-bit linears' inputs bitsandbytes before 0.43.2 keeps (bnb_memory.saved_input_bytes): the stage's
    layers / tp, a micro-batch in flight; the recomputed block's alone under full recomputation."""
    per_rank = bnb_memory.saved_input_bytes(spec)
    if not per_rank:
        return np.zeros_like(np.asarray(tp * pp, dtype=float))
    if spec.gradient_checkpointing == "full":
        return per_rank / tp + 0 * pp
    return per_rank * stage / tp * _in_flight_micro_batches(spec, pp)


def _dequantized_weight_bytes(spec, stage, unsharded, tp, pp) -> np.ndarray:
    """The unpacked 16-bit weights autograd keeps for the backward (QLoRA on GPTQ int4: qlora_dequant.py). Without
    full recomputation: the weights a rank unpacks (its stage's, 1 / tp, its routed experts; not sharded by ZeRO-3,
    which gathers whole layers) once a micro-batch in flight; under full recomputation: the largest block's / tp,
    one block at a time."""
    per_rank = qlora_dequant.saved_copy_bytes(spec)
    if not per_rank:
        return np.zeros_like(np.asarray(tp * pp, dtype=float))
    if spec.gradient_checkpointing == "full":
        return per_rank / tp + 0 * pp
    return per_rank * stage * unsharded / tp * _in_flight_micro_batches(spec, pp)


def _in_flight_micro_batches(spec, pp) -> np.ndarray:
    """Micro-batches whose forward the first pipeline stage holds for backward: 1 without a pipeline, min(p, m)
    under 1F1B, times 1 + (p - 1) / (p v) with v interleaved chunks (capped by the step's m micro-batches)."""
    micro_batches, v = float(spec.gradient_accumulation_steps), float(spec.parallelism.virtual_pipeline)
    in_flight = np.minimum(pp, micro_batches)
    if v > 1:
        in_flight = np.minimum(micro_batches * v, v * pp + pp - 1.0) / v
    return np.where(pp > 1, in_flight, 1.0)


def expert_share(spec, gpus=None, tensor_parallel=None, pipeline_parallel=None):
    """Share of the model state one tensor-parallel rank of a stage keeps unsharded: the dense part whole
    and 1 / ep of the routed experts, 1 / (ep / tp) when the EP group spans the tp ranks (whole experts on
    each GPU: expert_layout.routed_expert_divisor); 1 without expert parallelism. The plan defaults to
    the spec's."""
    par = spec.parallelism
    routed = routed_expert_fraction(spec.model) if spec.model.is_moe else 0.0
    divisor = routed_expert_divisor(
        par.gpus if gpus is None else gpus,
        par.tensor_parallel if tensor_parallel is None else tensor_parallel,
        par.pipeline_parallel if pipeline_parallel is None else pipeline_parallel,
        par.expert_parallel,
        par.expert_tensor_parallel,
    )
    return 1.0 - routed + routed / divisor


def _one_layer_grads(state: StateBytes) -> float:
    share = state.largest_layer_bytes / state.weight_bytes if state.weight_bytes else 0.0
    return state.trainable_params * min(1.0, share) * state.grad_bytes_per_param


def _training_activation_bytes(spec, state: StateBytes, tp, pp, flash: bool) -> np.ndarray:
    """Activations of the busiest pipeline stage, with sequence parallelism dividing by tp and context
    parallelism by cp (each rank keeps seq / cp tokens); interleaving v chunks a stage keeps
    1 + (p - 1) / (p v) times the first stage's in-flight layers (Korthikanti et al. 2022, sec. 4.2.3)."""
    par = spec.parallelism
    layers = float(spec.model.num_layers)
    tokens = float(spec.seq_len * spec.micro_batch_size)
    kept_per_layer, recompute_peak = _kept_per_layer(spec, state, flash, tp)
    micro_batches, v = float(spec.gradient_accumulation_steps), float(par.virtual_pipeline)
    in_flight = np.minimum(pp, micro_batches)
    if v > 1:  # p (1 + (p - 1) / (p v)), capped by the step's m micro-batches (pipeline_split.py)
        in_flight = np.minimum(micro_batches * v, v * pp + pp - 1.0) / v
    logits = np.where(tp > 1, state.logits_bytes_per_token_tensor_parallel, state.logits_bytes_per_token)
    first_stage = (layers / pp) * in_flight * kept_per_layer + recompute_peak
    last_stage = (layers / pp) * kept_per_layer + recompute_peak + logits
    per_token = np.where(pp > 1, np.maximum(first_stage, last_stage), first_stage + logits)
    split = stage_split(par, spec.model.num_layers)
    if split is not None:  # a stated split: the stage keeping the most layer x micro-batches, or the last
        held, held_last = heaviest_stage_layer_batches(split, par.virtual_pipeline, micro_batches)
        last = held_last * kept_per_layer + recompute_peak + logits
        stated = np.maximum(held * kept_per_layer + recompute_peak, last)
        per_token = np.where(pp == par.pipeline_parallel, stated, per_token)
    return per_token * tokens / (tp * par.context_parallel)


def _kept_per_layer(spec, state: StateBytes, flash: bool, tp) -> tuple:
    """(bytes a layer keeps for backward per token, the recomputed layer's transient peak per token), both
    before the division by tp."""
    full_layer = state.layer_bytes_per_token
    modules = spec.recompute_modules
    if flash or spec.gradient_checkpointing == "selective" and (not modules or "core_attn" in modules):
        full_layer = state.layer_bytes_per_token_no_scores  # no s x s score matrix is stored
    if spec.gradient_checkpointing == "full":
        return state.layer_input_bytes_per_token, full_layer
    if spec.gradient_checkpointing == "selective_op":
        kept = _op_level_kept_per_layer(spec, tp)
        return kept, np.maximum(state.layer_bytes_per_token_no_scores - kept, 0.0)
    return full_layer, 0.0


def _op_level_kept_per_layer(spec, tp) -> np.ndarray:
    """torchtitan's op-level policy (bytes_model.op_level_saved_bytes_per_token) under its tensor
    parallelism (parallelize_llama.apply_tp): column-parallel outputs split by tp like every activation,
    but a saved row-parallel matmul (Llama's w2) outputs the partial sum at full width on every rank before
    its reduce_scatter, whose output (h / tp, for wo and w2) the op list also saves."""
    model, scale = spec.model, activation_scale(spec)
    h = float(model.hidden_size)
    kept = op_level_saved_bytes_per_token(model, scale)
    row_parallel_saved = sum(1 for name, _, _ in op_level_saved_matmuls(model) if name in ("wo", "w2", "fc2"))
    tp = np.asarray(tp, dtype=float)
    partial_sums = row_parallel_saved * 2.0 * scale * h * (tp - 1.0)
    reduce_scatters = np.where(tp > 1, 2 * 2.0 * scale * h, 0.0)
    return kept + partial_sums + reduce_scatters


def _offloaded_activation_bytes(spec, state: StateBytes, tp, pp, flash: bool) -> np.ndarray:
    """Saved activations of the parallelism.activation_offload_layers layers, held in host memory until
    backward (Megatron-Core's CPU offloading, unpipelined plans only): off the GPU, onto the host. Not
    costed in time: on GB200/GH200 the copies run over NVLink-C2C beside compute."""
    layers = float(spec.parallelism.activation_offload_layers)
    if not layers:
        return np.zeros_like(np.asarray(tp * pp, dtype=float))
    kept_per_layer, _ = _kept_per_layer(spec, state, flash, tp)
    tokens = float(spec.seq_len * spec.micro_batch_size)
    per_gpu = layers * kept_per_layer * tokens / (tp * spec.parallelism.context_parallel)
    return np.where(pp == 1, per_gpu, 0.0)


def _stage_param_share(spec, pp) -> np.ndarray:
    """Share of the parameters one pipeline stage holds: 1 / pp, or the heaviest stage's of a stated
    uneven split (its blocks plus the embedding or the output head, pipeline_split.py)."""
    split = stage_split(spec.parallelism, spec.model.num_layers) if spec.model.image_arch is None else None
    if split is None:
        return 1.0 / pp
    return np.where(
        pp == spec.parallelism.pipeline_parallel, heaviest_stage_param_share(split, spec.model), 1.0 / pp
    )


def _inference_bytes(spec, state: StateBytes, dp, tp, pp, mxfp4_multiples=None) -> dict[str, np.ndarray]:
    model = spec.model
    inference = spec.inference
    weights = (state.weight_bytes + _mxfp4_padding_bytes(spec, tp, mxfp4_multiples)) / (tp * pp) + 0 * dp
    kv_per_token = kv_elems_per_token(model) * DTYPE_BYTES[inference.kv_cache_dtype]
    if model.kv_elems_per_token_per_layer:
        kv_split = 1.0 / pp  # MLA latent cache is replicated across tensor-parallel ranks
    else:  # KV heads split over tp ranks; fewer heads than ranks are replicated
        kv_split = np.ceil(model.num_key_value_heads / tp) / model.num_key_value_heads / pp
    kv_cache = kv_per_token * cached_tokens(model, inference.context_len) * inference.concurrency * kv_split
    activations = _inference_activation_bytes(spec, tp)
    return {
        "weights": weights,
        "gradients": np.zeros_like(weights),
        "optimizer_states": np.zeros_like(weights),
        "activations": activations + 0 * weights,
        "kv_cache": kv_cache + 0 * weights,
        "host_offload": np.zeros_like(weights),
    }


def _mxfp4_padding_bytes(spec, tp, multiples) -> np.ndarray:
    """Whole-model bytes the MXFP4 backend's padding adds to the routed experts (mxfp4_padding), spread over the
    ranks like the rest: the experts' bytes x (the padded factor - 1); 0 without mxfp4 or a card."""
    if multiples is None or not is_mxfp4(spec) or not spec.model.is_moe:
        return np.zeros_like(np.asarray(tp, dtype=float))
    experts = routed_expert_params(spec.model) * (expert_weight_bytes(spec) or 0.0)
    return experts * (mxfp4_padded_expert_factor(spec, tp, multiples) - 1.0)


def _inference_activation_bytes(spec, tp) -> np.ndarray:
    """One prefill chunk's transient forward buffers plus fp32 logits of the concurrent decode tokens."""
    model = spec.model
    chunk = min(spec.inference.prompt_tokens * spec.inference.concurrency, PREFILL_CHUNK_TOKENS.value)
    inter = model.moe_intermediate_size * model.experts_per_token if model.is_moe else model.intermediate_size
    per_token = 8.0 * model.hidden_size + 6.0 * inter
    logits = 4.0 * model.vocab_size * spec.inference.concurrency
    return chunk * per_token / tp + logits


def _finish(spec: WorkloadSpec, parts: dict[str, np.ndarray], gpus: np.ndarray) -> dict[str, np.ndarray]:
    tensors = parts["weights"] + parts["gradients"] + parts["optimizer_states"] + parts["activations"]
    dequantized = parts.get("dequantized_weights", np.zeros_like(parts["weights"]))
    teacher = parts.get("teacher_weights", np.zeros_like(parts["weights"]))
    tensors = tensors + parts["kv_cache"] + dequantized + teacher
    # image_model adds what the caching allocator reserves over a UNet forward beyond the flat fraction
    overhead = CUDA_CONTEXT_GIB * GIB + FRAGMENTATION_FRACTION * tensors + parts.get("allocator_reserve", 0.0)
    total = tensors + overhead
    per_node = np.minimum(gpus, GPUS_PER_NODE.value)
    result = {
        "weights_gib": parts["weights"] / GIB,
        "gradients_gib": parts["gradients"] / GIB,
        "optimizer_states_gib": parts["optimizer_states"] / GIB,
        "activations_gib": parts["activations"] / GIB,
        "kv_cache_gib": parts["kv_cache"] / GIB,
        "dequantized_weights_gib": dequantized / GIB,
        "teacher_weights_gib": teacher / GIB,
        "framework_overhead_gib": overhead / GIB,
        "total_per_gpu_gib": total / GIB,
        "required_per_gpu_gib": total * (1.0 + spec.headroom) / GIB,
        "host_ram_gib": parts["host_offload"] * per_node / GIB,
    }
    nan_plan = np.isnan(parts["weights"] + parts["activations"])
    if np.any(nan_plan):
        result = {key: np.where(nan_plan, np.nan, value) for key, value in result.items()}
    return result


def memory_breakdown_scalar(spec: WorkloadSpec, gpu_count: int | None = None, **plan) -> dict[str, float]:
    """One plan as plain floats (for reports)."""
    arrays = memory_breakdown_gib(spec, gpu_count, **plan)
    return {key: float(value) for key, value in arrays.items()}
