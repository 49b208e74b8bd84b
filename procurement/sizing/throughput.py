"""Speed estimates, vectorized over (GPU model x GPU count x parallelism plan) rows.

Training: time = FLOPs per token x tokens / (GPUs x dense peak x MFU), with 6N FLOPs per token
(8N under full recomputation; LoRA/QLoRA skip the frozen weights' gradient matmuls: 4N, 6N with
recomputation), a pipeline bubble, ZeRO-3 / offload / QLoRA step overheads, and communication:
the data-parallel gradient all-reduce (2(n-1)/n x gradient bytes, 1.5x under ZeRO-3, partly hidden
under the backward pass; hierarchical: node link inside a node, fabric between nodes; the routed experts'
share among the dp / ep ranks that hold the same experts, data_parallel_groups; plus NCCL's per-call ring
latency) and tensor-parallel activation all-reduces (on the critical path unless
parallelism.tp_comm_overlap runs them under the linear layers' GEMMs). A stated virtual pipeline
divides the bubble by its chunks and sends v times as often (hidden under compute, as Megatron overlaps them
only then); context parallelism adds the K/V ring of its attention (hidden under (cp - 1) / cp of the
attention compute, as Transformer Engine's ring attention runs it), expert parallelism the token
all-to-alls of each MoE layer (on the critical path unless parallelism.expert_overlap; assumptions.py).

Inference: one decode step runs the linear layers (the weights read once for the batch, or
concurrency x 2N FLOPs, whichever takes longer), then attention (each stream's KV cache read at its
context length), then the tensor-parallel all-reduces: the three add. Total tokens/s also pays for each
request's prompt, prefilled once every output_tokens steps. Time to first token is the compute-bound
prefill of the prompt or, at short prompts, its weight reads (an MoE prompt's: the experts its tokens
route to) plus a fixed cost a layer (context_phase_fixed_seconds_per_layer), whichever is longer. Prefill and the batched GEMMs run at prefill_efficiency, fitted per precision on
TensorRT-LLM's published first-token latencies (assumptions.py).
"""

from __future__ import annotations

import functools
import math
from dataclasses import replace

import numpy as np

from procurement.sizing import (
    deepspeed_reduce,
    dtensor_tp,
    fsdp_reshard,
    lora_host,
    optimizer_step,
    pinned_offload,
    qlora_dequant,
    serving_host,
    serving_load,
)
from procurement.sizing import params as counts
from procurement.sizing.assumptions import (
    A100_TP8_ALLREDUCE_BYTES,
    A100_TP8_ALLREDUCE_LINK_GBPS,
    A100_TP8_ALLREDUCE_SECONDS,
    ACHIEVED_BANDWIDTH_FRACTION,
    COMM_OVERLAP,
    CONTEXT_LAYER_FIXED_SECONDS,
    CONTEXT_PARALLEL_KV_PASSES,
    CONTEXT_PARALLEL_PYTORCH_RING,
    CONTEXT_PARALLEL_RING_OVERLAP,
    DEEPEP_OVERLAP_SM_SHARE,
    EXPERT_ALLTOALLS,
    EXPERT_DISPATCH,
    EXPERT_OVERLAP,
    FABRIC_HOP_LATENCY,
    FP8_PREFILL_SPEEDUP,
    FUSED_GEMV_INT4_DECODE_EFFICIENCY,
    GA102_MAX_BANDWIDTH_GBPS,
    GRADIENT_BUCKET_BYTES,
    GRADIENT_SYNC_LAST_MICRO_BATCH,
    INT4_DECODE_EFFICIENCY,
    INT8_DECODE_EFFICIENCY,
    MARLIN_INT4_DECODE_EFFICIENCY,
    MARLIN_INT4_DECODE_EFFICIENCY_GA102,
    MARLIN_MIN_GENERATION,
    NODE_HOP_LATENCY,
    PCIE_HOP_LATENCY,
    PCIE_LL_HOP_LATENCY,
    PREFILL_EFFICIENCY_AMPERE,
    PREFILL_EFFICIENCY_FP4,
    PREFILL_EFFICIENCY_FP8,
    PRETRAIN_BUCKET_PARAMS_PER_RANK,
    RING_BASE_LATENCY,
    RING_LL128_BANDWIDTH_SHARE,
    RING_LL128_BASE_LATENCY,
    RING_LL128_HOP_LATENCY,
    RING_LL_BANDWIDTH_SHARE,
    RING_LL_BASE_LATENCY,
    RING_LL_HOP_LATENCY,
    TP_ALLREDUCE_LATENCY,
    TP_COMM_OVERLAP_EXPOSED,
    TREE_FABRIC_HOP_LATENCY,
    TREE_NODE_HOP_LATENCY,
)
from procurement.sizing.attention_kernels import extra_attention_seconds
from procurement.sizing.bytes_model import (
    DTYPE_BYTES,
    adapter_params,
    embedding_bytes,
    expert_weight_bytes,
    is_mxfp4,
    op_level_recomputed_matmuls,
    routed_expert_params,
    saved_module_bytes,
    selective_modules,
    state_bytes,
)
from procurement.sizing.decode_attention import visit_seconds
from procurement.sizing.expert_layout import expert_rank_stride
from procurement.sizing.host import (
    feeds_loader,
    loader_images_per_vcpu,
    loader_vcpus_per_gpu,
    loader_worker_vcpus,
)
from procurement.sizing.image_model import (
    eager_score_training_bytes,
    evaluation_seconds,
    inference_rows,
    training_flops_per_image,
)
from procurement.sizing.memory import expert_share
from procurement.sizing.pipeline_split import slowest_stage_factor, stage_split
from procurement.sizing.spec import FLEX_DISPATCHES, WorkloadSpec


def _array(value, default) -> np.ndarray:
    return np.asarray(default if value is None else value, dtype=float)


def attention_dim(model) -> float:
    """d_attn: query heads x head dimension (the width of the score and value matmuls). Multi-head latent
    attention's scores are head_dim wide (qk_nope + qk_rope, 192 for DeepSeek-V3) and its values v_head_dim
    (128), so the two matmuls average heads x (192 + 128) / 2."""
    head_dim = model.head_dim or model.hidden_size / model.num_attention_heads
    if model.is_mla:
        return float(model.num_attention_heads * (head_dim + model.v_head_dim) / 2.0)
    return float(model.num_attention_heads * head_dim)


def attention_forward_flops_per_token(model, context_tokens: float, causal: bool = True) -> float:
    """Self-attention FLOPs of one forward per token that the 2N weight count leaves out: the score and
    value matmuls (Q K^T and A V), 2 x 2 x context x d_attn per layer, halved under a causal mask where the
    token attends to the whole sequence of ``context_tokens`` on average half (PaLM, Chowdhery et al. 2022,
    appendix B counts 12 L H Q T per trained token, forward and backward, unmasked; Megatron-LM's
    72 B s l h^2 (1 + s / 6h + ...) has the same s / 6h term). Image models: none counted."""
    if model.is_image:
        return 0.0
    # sliding-window layers attend to at most their window (counts.attended_tokens)
    return 4.0 * counts.attended_tokens(model, context_tokens, causal) * attention_dim(model)


def teacher_forward_flops_per_token(teacher, context_tokens: float) -> float:
    """One teacher forward a token: 2 a block matmul weight, 2 a vocab x hidden output weight, and causal
    attention's score and value matmuls (attention_forward_flops_per_token). Llama 3.1 8B at 8,192:
    2 x (6.98e9 + 0.525e9) + 4 x 4,096 x 32 x 4,096 = 1.50e10 + 2.1e9."""
    blocks = counts.block_matmul_params(teacher)
    head = counts.output_layer_params(teacher)
    return 2.0 * (blocks + head) + attention_forward_flops_per_token(teacher, context_tokens)


def teacher_flops_per_token(spec) -> float:
    """The FLOPs the teacher adds to a trained token: its forward in online mode, or in precomputed mode the
    one-off pass that wrote the logits where include_logit_generation asks for it (one forward a trained token:
    the stored logits cover the tokens trained on, assumed one epoch); 0 otherwise or without distillation."""
    distill = getattr(spec, "distillation", None)
    if distill is None:
        return 0.0
    if distill.online or distill.include_logit_generation:
        return teacher_forward_flops_per_token(distill.teacher, spec.seq_len)
    return 0.0


def attention_context_tokens(spec: WorkloadSpec) -> int:
    """The tokens a trained token's attention is counted over: the sequence, or with packed sequences
    (packed_sample_tokens) the sample it belongs to, since a packed sample attends only within itself
    (NeMo's packed_sequence_specs, Megatron-Core's THD format with cu_seqlens, flash-attn's varlen kernels)."""
    packed = spec.packed_sample_tokens
    return min(spec.seq_len, packed) if packed else spec.seq_len


def training_flops_per_token(spec: WorkloadSpec) -> float:
    """FLOPs per trained token: 6 a block weight (8 with full recomputation), adapters skipping frozen
    weight gradients; the output layer 6 a weight (4 frozen under adapters; output_layer_flops_per_token);
    the input embedding none (a row lookup); plus causal self-attention over the sequence, 3 passes (4 with
    full recomputation): 6 L T d_attn per token, about 7% of 6N at 4k context and half of it at 32k for
    Llama-3-8B (issue 26)."""
    if spec.model.image_arch is not None:  # an image is the unit: FLOPs per instance image
        return training_flops_per_image(spec)
    # distillation: the teacher's forward a token (online) or the stated logit-generation pass, no backward
    return _student_training_flops_per_token(spec) + teacher_flops_per_token(spec)


def _student_training_flops_per_token(spec: WorkloadSpec) -> float:
    blocks = counts.block_matmul_params(spec.model)
    recompute = spec.gradient_checkpointing == "full"
    attention = (4.0 if recompute else 3.0) * attention_forward_flops_per_token(
        spec.model, attention_context_tokens(spec)
    )
    attention += recomputed_forward_flops_per_token(spec) + output_layer_flops_per_token(spec)
    if (
        spec.uses_adapters
    ):  # the adapters' own 6 a weight; modules_to_save's copies in output_layer_flops_per_token
        adapters = adapter_params(spec)
        return (6.0 if recompute else 4.0) * blocks + 6.0 * adapters + attention
    return (8.0 if recompute else 6.0) * blocks + attention + mtp_flops_per_token(spec)


def mtp_flops_per_token(spec: WorkloadSpec) -> float:
    """The multi-token prediction modules' FLOPs a trained token (model.mtp_layers; full-parameter training
    only): each module's block 6 a weight (8 with full recomputation) with one layer's causal attention, its
    2h x h projection and the shared output head 6 a weight (params.mtp_matmul_params). DeepSeek-V3 (one module)
    at 4,096 without recomputation: 6 x 1.614e9 + 3 x 4 x 2,048 x 20,480 = 10.19e9, 4.1% over its 250.5e9 FLOPs a
    token, what NVIDIA's DeepSeek-V3 rows charge (Megatron-Bridge performance-summary.md 25.11 DGX-B200 557 TFLOP/s
    / 2,139 tokens/s = 260.4e9 a token: Megatron's count with its MTP layer 260.0e9, without it 249.8e9)."""
    model = spec.model
    if not model.mtp_layers or spec.uses_adapters:
        return 0.0
    recompute = spec.gradient_checkpointing == "full"
    block = counts.mtp_block_params(model)
    extra = counts.mtp_matmul_params(model) - model.mtp_layers * block
    core = attention_forward_flops_per_token(model, attention_context_tokens(spec)) / model.num_layers
    passes = 4.0 if recompute else 3.0
    return model.mtp_layers * ((passes * 2.0) * block + passes * core) + 6.0 * extra


def output_layer_flops_per_token(spec: WorkloadSpec) -> float:
    """The output projection's FLOPs a trained token: forward, input gradient and weight gradient, 2 each a
    vocab x hidden weight (the input gradient only, 4, when adapters freeze it), with or without full
    recomputation: activation checkpointing wraps the transformer blocks, never the output layer (Megatron-LM
    megatron/core/transformer/transformer_block.py _checkpointed_forward runs over the block's layers, the
    output_layer sits in GPTModel outside it; NVIDIA-NeMo/Automodel parallelizer.py apply_ac and torchtitan's
    apply_ac wrap each TransformerBlock; Narayanan et al. 2021, arXiv:2104.04473 sec. 5.1, count the logit
    layer 6 B s h V in their full-recomputation total 96 B s l h^2 (1 + s / 6h + V / 16lh))."""
    return (4.0 if _frozen_output_layer(spec) else 6.0) * float(counts.output_layer_params(spec.model))


def _frozen_output_layer(spec: WorkloadSpec) -> bool:
    """Adapters freeze the output layer unless lora.modules_to_save trains a copy of it (PEFT runs the copy in the
    original's place, peft v0.5.0 utils/other.py ModulesToSaveWrapper.forward), which adds the copy's weight
    gradient, 2 x vocab x hidden FLOPs a token."""
    return spec.uses_adapters and not (spec.lora is not None and "output" in spec.lora.modules_to_save)


def output_copy_gemm_flops_per_token(spec: WorkloadSpec) -> float:
    """The output copy's weight-gradient GEMM (2 x vocab x hidden FLOPs a token, in training_flops_per_token), which
    runs at mfu.output_copy_gemm_efficiency rather than the step's MFU; 0 without an output copy."""
    return (
        0.0
        if not spec.uses_adapters or _frozen_output_layer(spec)
        else 2.0 * float(counts.output_layer_params(spec.model))
    )


def saved_module_pass_seconds(spec: WorkloadSpec, memory_bandwidth_gbps) -> np.ndarray:
    """A rank's seconds a step in the memory passes of lora.modules_to_save's copies besides their GEMMs, at the
    achieved share of the card's bandwidth (inf or NaN: 0). The embedding copy's backward writes a zero-filled
    vocab x hidden gradient each micro-batch before its scatter-add of the batch's rows (torch
    aten/src/ATen/native/cuda/Embedding.cu embedding_dense_backward_cuda -> EmbeddingBackwardKernel.cu
    embedding_backward_cuda_kernel: `at::zeros({num_weights, stride}, grad.options())`): 1 write an element. Every
    copy's fresh gradient is added into .grad on each micro-batch after the first (autograd's AccumulateGrad,
    `variable_grad += new_grad`; HF Trainer zeroes with set_to_none so the first is stolen): 2 reads + 1 write an
    element. At the copy's dtype (bytes_model.saved_module_bytes)."""
    if not spec.uses_adapters or spec.lora is None or not spec.lora.modules_to_save:
        return np.zeros_like(_array(memory_bandwidth_gbps, np.inf))
    table = float(counts.output_layer_params(spec.model))
    micro_batches = float(spec.gradient_accumulation_steps)
    accesses = len(spec.lora.modules_to_save) * 3.0 * (micro_batches - 1.0)
    if "embeddings" in spec.lora.modules_to_save:
        accesses += micro_batches
    traffic = accesses * table * saved_module_bytes(spec)
    bandwidth = _array(memory_bandwidth_gbps, np.inf) * 1e9 * ACHIEVED_BANDWIDTH_FRACTION
    with np.errstate(invalid="ignore", divide="ignore"):
        seconds = traffic / bandwidth
    return np.where(np.isfinite(seconds), seconds, 0.0)


def eager_score_seconds_per_token(
    spec: WorkloadSpec, memory_bandwidth_gbps, flash_capable=None
) -> np.ndarray:
    """Seconds a trained token spends moving its attention scores when the spec runs eager attention
    (`flash_attention: false`): every layer materialises heads x seq_len score elements a token (the whole
    square, a causal mask included), written and read by the score matmul, softmax and the probabilities'
    matmul forward and backward: image_model.eager_score_training_bytes a score element (24 + 32 B under
    16-bit autocast, whose softmax runs in fp32, read from PyTorch's autocast op list; 4 B x 11 passes in fp32;
    full recomputation replays the forward), at the achieved share of the card's bandwidth. The same count the
    image engine charges eager image training; the language-model efficiencies (MFU_DATACENTER's LLaMA runs,
    MPT's width sweep) were measured with fused attention, so this is time they do not hold (fix50a, stop 50:
    BERT-large SQuAD on an A100, DeepLearningExamples PyTorch 110.5 / Paddle 120 sequences/s). The masking,
    scaling and attention-dropout passes are counted by the spec's mixed_precision and the model's dropout
    (fix50e: 44 B under apex O2, 82 B under native autocast for BERT). ``flash_capable``: per row, whether the card
    runs FlashAttention (gpus.supports_flash_attention); a row that cannot (V100, T4) falls back to eager attention
    (compatibility.check_compatibility says so) and is charged the same bytes. 0 with flash attention on a card
    that runs it, for image models, serving and without a bandwidth."""
    bandwidth = _array(memory_bandwidth_gbps, np.inf) * 1e9 * ACHIEVED_BANDWIDTH_FRACTION
    if spec.model.is_image or not spec.is_training:
        return np.zeros_like(bandwidth)
    eager = np.logical_not(_array(flash_capable, True).astype(bool)) | (not spec.flash_attention)
    model = spec.model
    elements = float(model.num_layers * model.num_attention_heads * spec.seq_len)
    with np.errstate(invalid="ignore", divide="ignore"):
        seconds = elements * eager_score_training_bytes(spec) / bandwidth
    return np.where(np.isfinite(seconds) & eager, seconds, 0.0)


def costed_flops_per_token(spec: WorkloadSpec, recompute_share=1.0):
    """The FLOPs a trained token's compute time is charged for at the training efficiency: its hardware FLOPs
    (training_flops_per_token), the forward that full recomputation runs again (full_recompute_flops_per_token)
    at ``recompute_share`` of its FLOPs (mfu.recompute_time_share: the fitted efficiencies are rates over runs
    that did not recompute; 1 charges it whole)."""
    again = full_recompute_flops_per_token(spec)
    return training_flops_per_token(spec) - (1.0 - _array(recompute_share, 1.0)) * again


def full_recompute_flops_per_token(spec: WorkloadSpec) -> float:
    """The FLOPs the forward run again under full recomputation adds to a token (8N + 4 attention passes against
    6N + 3; 6N + 4 against 4N + 3 with adapters); 0 without it and for image models."""
    if spec.gradient_checkpointing != "full" or spec.model.is_image:
        return 0.0
    return training_flops_per_token(spec) - training_flops_per_token(
        replace(spec, gradient_checkpointing="none")
    )


def recomputed_forward_flops_per_token(spec: WorkloadSpec) -> float:
    """The forward FLOPs selective recomputation runs again in backward, per token (recompute_modules):
    mla_up_proj the q and kv up-projections (2 q_lora x heads x (nope + rope) + 2 kv_lora x heads x
    (nope + v) a layer), mlp the dense MLP of the dense layers, moe the MoE layer's active experts and router, shared_experts
    the shared experts. layernorm, moe_act and core_attn recompute element-wise work or, for core_attn,
    nothing the engine costs (flash attention keeps no score matrix to rebuild); none is counted."""
    model, modules = spec.model, selective_modules(spec)
    if spec.gradient_checkpointing == "selective_op":
        # torchtitan's op-level policy: the matmuls it does not save run again (Llama: wk, wo, w3); the
        # saved SDPA output means attention is not recomputed (bytes_model.op_level_recomputed_matmuls)
        again = sum(inp * out for _, inp, out in op_level_recomputed_matmuls(model))
        return 2.0 * again * model.num_layers
    if not modules or model.is_image:
        return 0.0
    h, heads = float(model.hidden_size), float(model.num_attention_heads)
    gated = 3.0 if model.gated_mlp else 2.0
    moe_layers = float(model.num_layers - model.dense_layers) if model.is_moe else 0.0
    per_token = 0.0
    if "mla_up_proj" in modules:
        nope = model.head_dim - model.qk_rope_head_dim
        up = model.q_lora_rank * heads * model.head_dim + model.kv_lora_rank * heads * (
            nope + model.v_head_dim
        )
        per_token += 2.0 * up * model.num_layers
    if "mlp" in modules:  # the dense layers only (Megatron-Core skips an MoELayer's MLP)
        per_token += 2.0 * gated * h * model.intermediate_size * counts.layer_counts(model)[0]
    expert = 2.0 * gated * h * model.moe_intermediate_size * moe_layers
    if "moe" in modules:
        per_token += expert * (model.experts_per_token + model.shared_experts)
        per_token += 2.0 * h * model.num_experts * moe_layers  # the router
    elif "shared_experts" in modules:
        per_token += expert * model.shared_experts
    return per_token


def forward_share(spec: WorkloadSpec) -> float:
    """The first forward's share of a step's GPU work: the blocks' forward FLOPs (what full recomputation runs
    again) over the FLOPs the step is charged for."""
    total = training_flops_per_token(spec)
    forward = full_recompute_flops_per_token(replace(spec, gradient_checkpointing="full"))
    return min(1.0, forward / total) if total > 0 else 0.0


def _slowest_stage(spec: WorkloadSpec, pp) -> np.ndarray:
    """1, or for a stated uneven pipeline split the slowest stage's work over the even average: every
    micro-batch, and the bubble, moves at that stage's pace (pipeline_split.py)."""
    split = stage_split(spec.parallelism, spec.model.num_layers)
    if split is None:
        return np.ones_like(pp)
    return np.where(pp == spec.parallelism.pipeline_parallel, slowest_stage_factor(split, spec.model), 1.0)


def _step_overhead(spec: WorkloadSpec) -> float:
    """Non-communication step overheads; ZeRO-3/FSDP parameter gathers are counted as collectives. Offload is
    not a share of the step any more (fix51e): its seconds a step are added in training_throughput
    (pinned_offload.py)."""
    return 1.0


def offloaded_weight_seconds(spec: WorkloadSpec, grad_ranks) -> np.ndarray:
    """Parameter offload under adapters (parallelism.offload optimizer_and_params): every pass over the frozen
    base fetches each rank's 1 / grad_ranks shard of the stored weights from pinned host memory before its
    all-gather (DeepSpeed stage 3's partitioned_param_coordinator fetch of offloaded parameters,
    deepspeed/runtime/zero/partition_parameters.py@v0.14.2 _all_gather with ds_tensor on the CPU): forward, the
    recomputed forward under full checkpointing, and backward, each micro-batch, over PCIe at the copy rate
    parallelism.offload_pin_memory sets (pinned_offload.host_link_gbps: page-locked or pageable)."""
    if spec.parallelism.offload != "optimizer_and_params" or not spec.is_training:
        return np.zeros_like(np.asarray(grad_ranks, dtype=float))
    passes = 3.0 if spec.gradient_checkpointing == "full" else 2.0
    moved = passes * float(spec.gradient_accumulation_steps) * state_bytes(spec).weight_bytes / grad_ranks
    return moved / (pinned_offload.host_link_gbps(spec) * 1e9)


def ring_seconds(
    factor, volume, ranks, per_node, node_gbytes, fabric_gbytes
) -> tuple[np.ndarray, np.ndarray]:
    """(seconds on the node link, seconds on the fabric) of a hierarchical ring collective.

    ``volume``: bytes each rank contributes; ``ranks``: the group size, ``per_node`` of them in a node;
    ``factor``: 2 for an all-reduce, 1 for a reduce-scatter or all-gather. The node phase moves
    (g-1)/g x volume over the node link; the fabric phase moves (N-1)/N x volume/g per rank across N nodes
    over the rank's share of the fabric (NCCL's ring and tree reach these bounds for large messages). One
    node (N = 1) is the flat ring 2(n-1)/n x volume / link; one rank per node is the flat ring on the fabric.
    """
    per_node = np.minimum(per_node, ranks)
    nodes = ranks / per_node
    moves = (np.asarray(factor) * volume) > 0  # nothing to move costs nothing, whatever the link
    with np.errstate(divide="ignore", invalid="ignore"):
        node_s = np.where(
            moves & (per_node > 1), factor * (per_node - 1.0) / per_node * volume / node_gbytes, 0.0
        )
        fabric_s = np.where(
            moves & (nodes > 1), factor * (nodes - 1.0) / nodes * (volume / per_node) / fabric_gbytes, 0.0
        )
    return node_s, fabric_s


def data_parallel_groups(spec: WorkloadSpec, ranks, per_node) -> list[tuple[float, np.ndarray, np.ndarray]]:
    """(share of a rank's data-parallel bytes, group size, group members in one node) of each collective group.

    Dense state: all ``ranks`` data-parallel ranks, ``per_node`` of them in a node. Routed experts under
    expert parallelism: each rank holds 1 / ep of them (memory.expert_share) and reduces or gathers them
    with the ranks holding the same experts, ranks / ep of them (Megatron-Core's expert-data-parallel
    group; FSDP2's expert mesh in NeMo AutoModel). The EP group takes ep neighbouring data-parallel ranks,
    so a node holds per_node / ep of an expert group, one when EP fills or spans the node: the experts'
    gradients cross the fabric whole, with no reduction inside the node first."""
    ep = float(spec.parallelism.expert_parallel) if spec.model.is_moe else 1.0
    if ep <= 1:
        return [(1.0, ranks, per_node)]
    routed = counts.routed_expert_fraction(spec.model)
    expert = routed / ep / expert_share(spec)  # the experts' share of the rank's bytes
    expert_ranks = np.maximum(1.0, ranks / ep)
    return [
        (1.0 - expert, ranks, per_node),
        (expert, expert_ranks, np.maximum(1.0, per_node / ep)),
    ]


def grouped_ring_seconds(factor, volume, groups, node_gbytes, fabric_gbytes) -> tuple[np.ndarray, np.ndarray]:
    """ring_seconds summed over data_parallel_groups: each group's share of ``volume`` over its own ring."""
    node_s, fabric_s = np.zeros(()), np.zeros(())
    for share, ranks, per_node in groups:
        node, fabric = ring_seconds(factor, volume * share, ranks, per_node, node_gbytes, fabric_gbytes)
        node_s, fabric_s = node_s + node, fabric_s + fabric
    return node_s, fabric_s


def ring_latency_seconds(factor, calls, ranks, per_node) -> np.ndarray:
    """Seconds of per-call latency of ``calls`` ring collectives over ``ranks`` ranks, ``per_node`` per node.

    NCCL's ring cost model (src/graph/tuning.cc): one call costs RING_BASE_LATENCY plus one hop latency
    per ring step, the steps that cross nodes at FABRIC_HOP_LATENCY and the others at NODE_HOP_LATENCY. An
    all-reduce (``factor`` 2) takes 2(n-1) steps of which 2(N-1) cross nodes; a reduce-scatter or
    all-gather (``factor`` 1) n-1 and N-1. One rank, or no calls, costs nothing.
    """
    per_node = np.minimum(per_node, ranks)
    nodes = ranks / per_node
    steps = factor * (ranks - 1.0)
    inter_steps = factor * (nodes - 1.0)
    per_call = (
        RING_BASE_LATENCY.value
        + (steps - inter_steps) * NODE_HOP_LATENCY.value
        + inter_steps * FABRIC_HOP_LATENCY.value
    )
    return np.where((ranks > 1) & (np.asarray(calls) > 0), calls * per_call, 0.0)


def tree_latency_seconds(calls, ranks, per_node) -> np.ndarray:
    """Seconds of per-call latency of ``calls`` tree all-reduces (NCCL tuning.cc, tree / Simple): up and
    down the tree, through the ranks of a node and log2(nodes) network levels."""
    per_node = np.minimum(per_node, ranks)
    nodes = ranks / per_node
    with np.errstate(divide="ignore", invalid="ignore"):
        levels = np.floor(np.log2(np.maximum(nodes, 1.0)))
    per_call = 2.0 * ((per_node - 1.0) * TREE_NODE_HOP_LATENCY.value + levels * TREE_FABRIC_HOP_LATENCY.value)
    return np.where((ranks > 1) & (np.asarray(calls) > 0), calls * per_call, 0.0)


def collective_latency_seconds(factor, calls, ranks, per_node) -> np.ndarray:
    """Per-call latency as NCCL pays it: it runs the fastest algorithm it has, so an all-reduce (``factor``
    2) costs the lesser of the ring's and the tree's latency (the tree wins across many nodes, the ring
    inside one); reduce-scatters and all-gathers (``factor`` 1) have only the ring. The bandwidth term is
    the same bus bandwidth either way (tuning.cc: both algorithms move half the bus bandwidth per byte)."""
    ring = ring_latency_seconds(factor, calls, ranks, per_node)
    tree = tree_latency_seconds(calls, ranks, per_node)
    return np.where(np.asarray(factor) == 2.0, np.minimum(ring, tree), ring)


def gradient_bucket_bytes(spec: WorkloadSpec, dp, grad_bytes_per_param: float) -> np.ndarray:
    """Bytes per gradient all-reduce call: PyTorch DDP's 25 MiB for fine-tunes; for pretraining,
    Megatron-LM's max(40M, 1M x dp) parameters, which keeps each call bandwidth bound at scale."""
    if spec.task != "pretrain":
        return np.asarray(GRADIENT_BUCKET_BYTES.value, dtype=float)
    params = np.maximum(40e6, PRETRAIN_BUCKET_PARAMS_PER_RANK.value * np.asarray(dp, dtype=float))
    return np.maximum(GRADIENT_BUCKET_BYTES.value, params * grad_bytes_per_param)


def data_parallel_calls(
    spec: WorkloadSpec, sharded, gradient_bytes, pp, dp=1.0, grad_bytes_per_param: float = 2.0
) -> tuple[np.ndarray, np.ndarray]:
    """(gradient calls, parameter all-gather calls) per step. DDP / ZeRO-1/2: the gradients all-reduced
    in buckets (gradient_bucket_bytes), once per step. ZeRO-3/FSDP: per micro-batch and per layer of the
    stage, one gradient reduce-scatter and two all-gathers (forward, backward); fewer when the stage stays
    gathered (parallelism.reshard_after_forward false: fsdp_reshard.collective_factors)."""
    per_layer = spec.model.num_layers / pp
    grad_factor, gather_factor = fsdp_reshard.collective_factors(spec, sharded, pp)
    buckets = np.ceil(gradient_bytes / gradient_bucket_bytes(spec, dp, grad_bytes_per_param))
    gradient_calls = np.where(sharded, per_layer * grad_factor, buckets)
    return gradient_calls, per_layer * gather_factor


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
    gpus_per_node=None,
    fabric_gbps=None,
    vcpus_per_gpu=None,
    memory_bandwidth_gbps=None,
    recompute_share=None,
    output_gemm_efficiency=None,
    flash_capable=None,
) -> dict[str, np.ndarray]:
    """Tokens/s, hours, communication share and every collective per step, per row.

    recompute_share: per row, the share of its FLOPs' time the forward full recomputation runs again costs at
    ``mfu`` (mfu.recompute_time_share), on rows without tensor or pipeline parallelism (the fit's rows); None: 1,
    the hardware count charged whole.

    output_gemm_efficiency: per row, the share of the peak lora.modules_to_save's output copy's weight-gradient
    GEMM runs at (mfu.output_copy_gemm_efficiency; NaN or None: the row's mfu). Its FLOPs are charged at
    mfu / max(mfu, that) of their count, so the step's other terms (bubble, overheads) apply to it unchanged.

    flash_capable: per row, whether the card runs FlashAttention (None: every row does); a row that cannot runs
    eager attention and pays its scores' bytes (eager_score_seconds_per_token).

    memory_bandwidth_gbps: the card's HBM bandwidth, for the layout copies of DTensor's tensor-parallel
    collectives (parallelism.tp_implementation dtensor, dtensor_tp.py); None: no copy is counted.

    vcpus_per_gpu: the host's vCPUs per GPU, which bound a step that decodes images on the CPU
    (loader_seconds_per_step); None: the spec's host.vcpus_per_gpu, else the host the size report recommends
    (host.pipeline_vcpus_needed: only the loader's workers bound it); inf: the same (the ranking applies each
    offer's own vCPUs).

    peak_tflops: dense peak for the precision. interconnect_gbps: per-GPU collective bandwidth (GB/s) of
    the node link; tensor_parallel_gbps: that of the tensor-parallel group (defaults to interconnect_gbps).
    gpus_per_node and fabric_gbps (per-GPU collective bandwidth of the inter-node fabric) make the
    collectives hierarchical; without them the whole group is one flat ring on interconnect_gbps.

    Per step (docs/cost-model.md, "Communication"): the data-parallel gradient all-reduce once
    (2 x gradient bytes; a stated DeepSpeed ZeRO-1/2 config: its reductions, one a micro-batch at ZeRO-2,
    all-reduces or reduce-scatters by multi_rank_bucket_allreduce, and one all-gather, deepspeed_reduce.py), or under ZeRO-3/FSDP a gradient reduce-scatter plus the parameter all-gathers
    of forward and backward for every micro-batch (including frozen base weights of LoRA/QLoRA);
    tensor-parallel activation all-reduces (4 per layer per micro-batch, 6 with full recomputation);
    pipeline activation/gradient sends (2 per micro-batch, x virtual_pipeline; 1 / tp of the message each
    under sequence parallelism); context parallelism's K/V ring (context_parallel_exchange) and the expert
    all-to-alls (expert_alltoall). Every data-parallel call also pays NCCL's
    collective latency (collective_latency_seconds: ring, or tree for an all-reduce across many nodes;
    calls from data_parallel_calls). Data-parallel traffic (and the interleaved schedule's pipeline sends)
    hides under up to COMM_OVERLAP of the compute; the CP ring under its attention steps
    (exposed_context_parallel_seconds); tensor-parallel traffic under the linear layers' GEMMs only with
    parallelism.tp_comm_overlap (exposed_tensor_parallel_seconds); plain pipeline and EP traffic (unless
    parallelism.expert_overlap) does not hide.
    """
    par = spec.parallelism
    gpus = _array(gpu_counts, par.gpus)
    zero = _array(zero_stage, par.zero_stage)
    tp = _array(tensor_parallel, par.tensor_parallel)
    pp = _array(pipeline_parallel, par.pipeline_parallel)
    cp, vp = float(par.context_parallel), float(par.virtual_pipeline)
    ep = float(par.expert_parallel) if spec.model.is_moe else 1.0
    peak = _array(peak_tflops, np.nan) * 1e12
    link = _array(interconnect_gbps, np.inf) * 1e9
    tp_link = _array(tensor_parallel_gbps, np.nan) * 1e9
    tp_link = np.where(np.isnan(tp_link), link, tp_link)
    per_node = _array(gpus_per_node, np.nan)
    hierarchical = ~np.isnan(per_node)
    per_node = np.where(hierarchical, per_node, gpus)
    fabric = np.where(hierarchical, _array(fabric_gbps, np.nan) * 1e9, link)
    # dp: model replicas (each sees its own micro-batches); the gradient all-reduce and ZeRO run over the
    # dp x cp ranks that hold the same weights (Megatron's data-parallel group with context parallelism).
    dp = gpus / (tp * pp * cp)
    grad_ranks = dp * cp
    accumulation = float(spec.gradient_accumulation_steps)
    micro_tokens = float(spec.seq_len * spec.micro_batch_size)
    step_tokens = micro_tokens * accumulation * dp

    bubble = 1.0 + (pp - 1.0) / (vp * accumulation)  # interleaved 1F1B: v chunks a stage (assumptions)
    # the share only where the fit rows ran: data parallelism alone (FSDP / ZeRO, no tensor or pipeline split)
    share = np.where((tp == 1.0) & (pp == 1.0), _array(recompute_share, 1.0), 1.0)
    row_mfu = _array(mfu, 0.4)
    gemm_rate = _array(output_gemm_efficiency, np.nan)
    gemm_rate = np.where(np.isnan(gemm_rate), row_mfu, np.maximum(gemm_rate, row_mfu))
    costed = costed_flops_per_token(spec, share) - output_copy_gemm_flops_per_token(spec) * (
        1.0 - row_mfu / gemm_rate
    )
    compute_s = costed * step_tokens / (gpus * peak * row_mfu)
    compute_s = compute_s * bubble * _step_overhead(spec) * _slowest_stage(spec, pp)
    compute_s = compute_s + bubble * _stated_kernel_attention_seconds(
        spec, compute_s / bubble, step_tokens, gpus, peak
    )
    # parameter offload under adapters: the base's weights fetched over PCIe each pass (offloaded_weight_seconds)
    compute_s = compute_s + offloaded_weight_seconds(spec, grad_ranks)
    # optimizer offload: the trainable partition's PCIe copies and the host's CPU Adam, seconds a step
    # (pinned_offload.py; pin_memory sets the copies' rate, the rank's host cores the CPU step's)
    offload_params = float(state_bytes(spec).trainable_params) * expert_share(spec, gpus, tp, pp)
    offload_ranks_per_node = np.minimum(per_node, gpus)
    compute_s = compute_s + pinned_offload.seconds_per_step(
        spec, offload_params, zero, grad_ranks, offload_ranks_per_node, tp * pp, vcpus_per_gpu
    )
    # the rank's offloaded partition, for the ranking's re-pricing of the CPU step on each offer's own vCPUs
    offload_partition = np.where(
        pinned_offload.applies(spec), offload_params / (np.asarray(tp * pp, dtype=float) * grad_ranks), 0.0
    )
    # QLoRA: each rank unpacks its quantized base weights to 16 bits before every GEMM pass, a cost a micro-batch
    # that scales with the weights read, not with the tokens (qlora_dequant.py)
    flop_s = compute_s
    dequant_s = bubble * qlora_dequant.seconds_per_step(
        spec, _array(memory_bandwidth_gbps, np.inf), expert_share(spec, gpus, tp, pp) / (tp * pp)
    )
    # lora.modules_to_save: the copies' gradient passes, backward work after each forward (saved_module_pass_seconds)
    saved_pass_s = saved_module_pass_seconds(spec, memory_bandwidth_gbps)
    # eager attention (flash_attention false): the scores' bytes, heads split over TP, layers over PP
    eager_s = (
        bubble
        * eager_score_seconds_per_token(spec, memory_bandwidth_gbps, flash_capable)
        * step_tokens
        / gpus
    )
    compute_s = flop_s + dequant_s + saved_pass_s + eager_s
    # eager PEFT adapters: the host issues every kernel of a layer and micro-batch; launches are asynchronous, so
    # the step runs at the longer of the GPU's work and the host's (lora_host.py), on every card. Only on rows
    # without tensor or pipeline parallelism: the engine's TP / PP are Megatron-Core's, whose adapters are fused.
    # Every micro-batch syncs the host (HF Trainer's NaN filter, the blocking input copy, LitGPT's loss.item()), so a
    # host-bound eager forward and the GPU-bound backward after it add up: no shorter than the forward's host time
    # plus the GPU's work after it, the FLOPs' by their forward share and the QLoRA unpacking's by its passes
    host_floor_s = np.where((tp == 1.0) & (pp == 1.0), lora_host.host_seconds_per_step(spec), 0.0)
    flops_after_s = (1.0 - forward_share(spec)) * flop_s
    after_forward_s = (
        flops_after_s
        + (1.0 - qlora_dequant.first_forward_share(spec)) * dequant_s
        + saved_pass_s
        + (1.0 - forward_share(spec)) * eager_s
    )
    phase_s = np.where(
        (tp == 1.0) & (pp == 1.0) & lora_host.applies(spec),
        lora_host.forward_host_seconds_per_step(spec) + after_forward_s,
        0.0,
    )
    compute_s = np.maximum(np.maximum(compute_s, host_floor_s), phase_s)

    state = state_bytes(spec)
    sharded = zero >= 3
    # each rank's gradients: its stage shard, 1 / ep of the routed experts (all-reduced over dp x cp / ep
    # ranks; the ring factor of dp x cp is kept for them, within (n - 1) / n of the smaller group's)
    unsharded = expert_share(spec, gpus, tp, pp)
    gradient_bytes = state.trainable_params * state.grad_bytes_per_param * unsharded / (tp * pp)
    weight_bytes = state.weight_bytes * unsharded / (tp * pp)
    dp_per_node = np.maximum(1.0, per_node / (tp * pp))  # data-parallel ranks sharing a node
    # DDP / ZeRO-1/2: one gradient all-reduce per step. ZeRO-3/FSDP: per micro-batch, a gradient
    # reduce-scatter and two parameter all-gathers (forward, backward).
    # (parallelism.reshard_after_forward false: no backward re-gather; under PP once a step, fsdp_reshard.py)
    grad_factor, gather_factor = fsdp_reshard.collective_factors(spec, sharded, pp)
    # a stated DeepSpeed ZeRO-1/2 config: a reduction a micro-batch at ZeRO-2 (one a step at ZeRO-1; an all-reduce
    # from DeepSpeed 0.12.4, a reduce-scatter's bytes before) and the parameters' all-gather after the step
    # (deepspeed_reduce.py)
    reductions = deepspeed_reduce.reductions_per_step(spec, zero)
    grad_factor = np.where(reductions > 0, deepspeed_reduce.collective_factor(spec, reductions), grad_factor)
    groups = data_parallel_groups(spec, grad_ranks, dp_per_node)
    grad_node_s, grad_fabric_s = grouped_ring_seconds(grad_factor, gradient_bytes, groups, link, fabric)
    gather_node_s, gather_fabric_s = grouped_ring_seconds(gather_factor, weight_bytes, groups, link, fabric)
    # Per-call latency (the alpha of the alpha-beta model): matters when many small calls cross many nodes.
    gradient_calls, gather_calls = data_parallel_calls(
        spec, sharded, gradient_bytes, pp, grad_ranks, state.grad_bytes_per_param
    )
    gradient_calls = np.where(
        reductions > 0,
        deepspeed_reduce.calls_per_step(spec, reductions, gradient_bytes, state.grad_bytes_per_param),
        gradient_calls,
    )
    # DeepSpeed's reductions pay an all-reduce's call latency under multi_rank_bucket_allreduce, its all-gather a
    # reduce-scatter's; one call a bucket each
    ds_buckets = deepspeed_reduce.calls_per_step(spec, 0.0, gradient_bytes, state.grad_bytes_per_param)
    grad_latency_s = np.where(
        reductions > 0,
        collective_latency_seconds(
            deepspeed_reduce.reduction_factor(spec), reductions * ds_buckets, grad_ranks, dp_per_node
        )
        + collective_latency_seconds(1.0, ds_buckets, grad_ranks, dp_per_node),
        collective_latency_seconds(np.where(sharded, 1.0, 2.0), gradient_calls, grad_ranks, dp_per_node),
    )
    gather_latency_s = collective_latency_seconds(1.0, gather_calls, grad_ranks, dp_per_node)
    dp_comm_s = (
        grad_node_s + grad_fabric_s + gather_node_s + gather_fabric_s + grad_latency_s + gather_latency_s
    )

    rank_tokens = micro_tokens / cp  # a context-parallel rank's share of the sequence
    tp_message = rank_tokens * spec.model.hidden_size * 2.0  # 16-bit activations of one micro-batch
    tp_calls = tp_allreduces_per_layer(spec) * spec.model.num_layers / pp * accumulation
    tp_volume = np.where(tp > 1, tp_calls * 2.0 * (tp - 1.0) / tp * tp_message, 0.0)
    tp_collective_s = np.where(tp > 1, tp_volume / tp_link + tp_calls * TP_ALLREDUCE_LATENCY.value, 0.0)
    # DTensor's [b, s, h] layout copies the gathered tensor around each of its 2 collectives an all-reduce
    hbm = _array(memory_bandwidth_gbps, np.inf)
    tp_copy_s = np.where(tp > 1, dtensor_tp.copy_seconds(spec, 2.0 * tp_calls, tp_message, hbm), 0.0)
    tp_comm_s = tp_collective_s + tp_copy_s

    # Pipeline stages hand one micro-batch's activations forward and its gradients back (v times over
    # under the interleaved schedule); stages spill onto the fabric once tensor x context x pipeline ranks
    # outgrow a node.
    # Under sequence parallelism a stage's output is split over its tp ranks, so each sends 1 / tp of it
    # (Megatron's scatter/gather of stage outputs, Narayanan et al. 2021 sec. 4.1).
    pp_volume = np.where(pp > 1, 2.0 * accumulation * vp * tp_message / tp, 0.0)
    pp_link = np.where(tp * cp * pp > per_node, fabric, link)
    with np.errstate(divide="ignore", invalid="ignore"):
        pp_comm_s = np.where(pp > 1, pp_volume / pp_link, 0.0)
    cp_volume, cp_comm_s = context_parallel_exchange(spec, tp, pp, rank_tokens, per_node, link, fabric)
    stride = expert_rank_stride(gpus, tp, pp, cp, ep, par.expert_tensor_parallel)
    ep_volume, ep_comm_s = expert_alltoall(spec, tp, pp, rank_tokens, per_node, link, fabric, stride)

    # Megatron overlaps the pipeline sends with the next chunk's compute only under the interleaved
    # schedule (arguments.py: "Overlap P2P communication is disabled if not using the interleaved
    # schedule"): there they hide with the data-parallel traffic under COMM_OVERLAP of the compute.
    hidden_pp_s, exposed_pp_s = (pp_comm_s, 0.0) if vp > 1 else (0.0, pp_comm_s)
    # parallelism.gradient_sync last_micro_batch: DDP / ZeRO-1/2 gradients sync once, in the last micro-batch,
    # so the traffic hides under that micro-batch's compute only (assumptions.GRADIENT_SYNC_LAST_MICRO_BATCH)
    window_s = compute_s
    if par.gradient_sync == "last_micro_batch":
        window_s = np.where(
            sharded, compute_s, compute_s * GRADIENT_SYNC_LAST_MICRO_BATCH.value / accumulation
        )
    # overlap_comm false: DeepSpeed's reductions run on the backward's stream, in its time (deepspeed_reduce.py)
    serial_reduce_s = deepspeed_reduce.exposed_seconds(
        spec, reductions, grad_node_s + grad_fabric_s + grad_latency_s
    )
    exposed_dp = serial_reduce_s + np.maximum(
        0.0, dp_comm_s - serial_reduce_s + hidden_pp_s - COMM_OVERLAP.value * window_s
    )
    model_comm_s = tp_comm_s + pp_comm_s + cp_comm_s + ep_comm_s
    exposed_ep_s = exposed_expert_seconds(spec, ep_comm_s, compute_s, pp)
    # the GEMMs and attention kernels that model-parallel traffic can run beside: the step's compute less
    # the bubble's idle time, split by FLOPs
    linear_share, attention_share = training_flops_shares(spec)
    busy_s = compute_s / bubble
    if par.tp_implementation == "dtensor":
        exposed_tp_s = dtensor_tp.exposed_seconds(spec, tp_collective_s, tp_copy_s, busy_s * linear_share, tp)
    else:
        exposed_tp_s = exposed_tensor_parallel_seconds(spec, tp_comm_s, busy_s * linear_share, tp)
    exposed_cp_s = exposed_context_parallel_seconds(spec, cp_comm_s, busy_s * attention_share)
    # pure-16-bit torch AdamW: the optimizer's and the clipping's passes over the rank's trainable state once a
    # step, after the gradients are in (optimizer_step.py); a share of a short step, nothing on long ones
    owned = np.where(zero >= 1, 1.0 / grad_ranks, 1.0)
    optimizer_s = optimizer_step.seconds_per_step(spec, gradient_bytes, owned, hbm * 1e9, zero)
    optimizer_s = optimizer_s + optimizer_step.saved_module_seconds_per_step(spec, owned, hbm * 1e9, zero)
    gpu_step_s = (
        compute_s + exposed_dp + exposed_tp_s + exposed_pp_s + exposed_cp_s + exposed_ep_s + optimizer_s
    )
    loader_s = loader_seconds_per_step(spec, step_tokens, gpus, vcpus_per_gpu)
    step_s = np.maximum(gpu_step_s, loader_s)  # loader workers prefetch: the slower side sets the pace
    communication_s = dp_comm_s + model_comm_s
    # what the traffic costs: the seconds it adds to the GPU's step beyond its compute (the rest runs under
    # the compute); the warnings and sentences state this, not communication_share (all traffic, hidden too)
    exposed_comm_s = exposed_dp + exposed_tp_s + exposed_pp_s + exposed_cp_s + exposed_ep_s
    tokens_per_second = step_tokens / step_s
    # image runs by epochs: the evaluations between epochs (image.eval_every_epochs; image_model.evaluation_seconds)
    evaluation_s = evaluation_seconds(spec, peak, _array(memory_bandwidth_gbps, np.inf) * 1e9, gpus)
    with np.errstate(invalid="ignore", divide="ignore"):
        hours = ((spec.training_tokens or np.nan) / tokens_per_second + evaluation_s) / 3600.0
        share = communication_s / (compute_s + communication_s)
        exposed_share = exposed_comm_s / step_s
    ranks_volume = 2.0 * (grad_ranks - 1.0) / grad_ranks
    rows = {
        "training_tokens_per_second": tokens_per_second,
        "training_hours": hours,
        "evaluation_hours": evaluation_s / 3600.0,
        "communication_share": share,
        "exposed_communication_share": exposed_share,
        "exposed_communication_seconds": exposed_comm_s,
        # the gradient and gather traffic past the compute it hides under (the interleaved pipeline sends with it)
        "data_parallel_exposed_seconds": exposed_dp,
        "step_seconds": step_s,
        "offload_partition_params": offload_partition * np.ones_like(step_s),
        "offload_ranks_per_node": offload_ranks_per_node * np.ones_like(step_s),
        "flops_per_token": np.full_like(step_s, training_flops_per_token(spec)),
        "compute_seconds": compute_s,
        "host_floor_seconds": host_floor_s,
        "optimizer_step_seconds": optimizer_s,
        "gpu_step_seconds": gpu_step_s,
        "loader_seconds": loader_s,
        "gradient_seconds_node": grad_node_s,
        "gradient_seconds_fabric": grad_fabric_s,
        "gather_seconds_node": gather_node_s,
        "gather_seconds_fabric": gather_fabric_s,
        "gradient_latency_seconds": grad_latency_s,
        "gather_latency_seconds": gather_latency_s,
        "gradient_calls_per_step": gradient_calls,
        "gather_calls_per_step": gather_calls,
        "tensor_parallel_seconds": tp_comm_s,
        "tensor_parallel_exposed_seconds": exposed_tp_s,
        "pipeline_seconds": pp_comm_s,
        "pipeline_on_fabric": (pp > 1) & (tp * cp * pp > per_node),
        "context_parallel_seconds": cp_comm_s,
        "context_parallel_exposed_seconds": exposed_cp_s,
        "context_parallel_on_fabric": (cp > 1) & (tp * cp > per_node),
        "expert_parallel_on_node": (ep > 1) & (per_node / stride >= 2.0),
        "expert_parallel_on_fabric": (ep > 1) & (stride * ep > per_node),
        "expert_parallel_seconds": ep_comm_s,
        "expert_parallel_exposed_seconds": exposed_ep_s,
        "pipeline_bubble": bubble - 1.0,
        # bytes each GPU sends per step, for the row's sentence
        "gradient_bytes_per_step": grad_factor / 2.0 * ranks_volume * gradient_bytes,
        "gather_bytes_per_step": gather_factor / 2.0 * ranks_volume * weight_bytes,
        "tensor_parallel_bytes_per_step": tp_volume,
        "pipeline_bytes_per_step": pp_volume,
        "context_parallel_bytes_per_step": cp_volume,
        "expert_parallel_bytes_per_step": ep_volume,
    }
    shape = np.broadcast(*rows.values()).shape
    return {key: np.broadcast_to(value, shape) for key, value in rows.items()}


def _stated_kernel_attention_seconds(spec: WorkloadSpec, busy_s, step_tokens, gpus, peak) -> np.ndarray:
    """A GPU's attention time a step beyond the engine's when the spec names its attention kernel
    (attention_kernels.py: the kernel's published causal speed at s / cp tokens a call)."""
    _, attention_share = training_flops_shares(spec)
    forward_flops = (
        attention_forward_flops_per_token(spec.model, attention_context_tokens(spec)) * step_tokens / gpus
    )
    return extra_attention_seconds(spec, forward_flops, busy_s * attention_share, peak / 1e12)


def training_flops_shares(spec: WorkloadSpec) -> tuple[float, float]:
    """(the block linears' share, self-attention's share) of a trained token's FLOPs
    (training_flops_per_token): attention is its score and value matmuls, the output head the vocab x hidden
    matmul (output_layer_flops_per_token); the linears are the rest. (0, 0) for image models."""
    if spec.model.is_image:
        return 0.0, 0.0
    total = training_flops_per_token(spec)
    full = spec.gradient_checkpointing == "full"
    attention = (4.0 if full else 3.0) * attention_forward_flops_per_token(
        spec.model, attention_context_tokens(spec)
    )
    head = output_layer_flops_per_token(spec)
    return max(total - attention - head, 0.0) / total, attention / total


def exposed_tensor_parallel_seconds(spec: WorkloadSpec, tp_comm_s, linear_s, tp) -> np.ndarray:
    """The tensor-parallel seconds left on the critical path: all of them by default (Megatron-Core's);
    under parallelism.tp_comm_overlap (Transformer Engine userbuffers) the last chunk (1 / tp) of the 2
    forward reduce-scatters of a layer's 8 collectives (assumptions.TP_COMM_OVERLAP_EXPOSED), plus whatever
    outlasts the block linears' GEMMs (``linear_s``)."""
    if not spec.parallelism.tp_comm_overlap:
        return tp_comm_s
    tail = tp_comm_s * TP_COMM_OVERLAP_EXPOSED.value / np.maximum(tp, 1.0)
    return tail + np.maximum(0.0, tp_comm_s - tail - linear_s)


def exposed_context_parallel_seconds(spec: WorkloadSpec, cp_comm_s, attention_s) -> np.ndarray:
    """The K/V exchange's seconds left on the critical path: Transformer Engine's ring attention (p2p) sends
    the next chunk while it computes the current one, cp - 1 of a layer's cp equal steps
    (assumptions.CONTEXT_PARALLEL_RING_OVERLAP), so what outlasts (cp - 1) / cp of ``attention_s`` stays;
    an all-gather before attention (parallelism.context_parallel_comm all_gather) hides nothing; PyTorch's
    ring (pytorch) hides as _pytorch_ring_exposed_seconds says; traced into a compiled graph
    (pytorch_compiled) it hides nothing (assumptions.CONTEXT_PARALLEL_PYTORCH_RING)."""
    cp = float(spec.parallelism.context_parallel)
    if spec.parallelism.context_parallel_comm in ("all_gather", "pytorch_compiled"):
        return cp_comm_s
    if spec.parallelism.context_parallel_comm == "pytorch":
        return _pytorch_ring_exposed_seconds(spec, cp_comm_s, attention_s)
    hidden = attention_s * (cp - 1.0) / cp * CONTEXT_PARALLEL_RING_OVERLAP.value
    return np.maximum(0.0, cp_comm_s - hidden)


def _pytorch_ring_exposed_seconds(spec: WorkloadSpec, cp_comm_s, attention_s) -> np.ndarray:
    """PyTorch's ring (assumptions.CONTEXT_PARALLEL_PYTORCH_RING): each forward (two under full recomputation)
    and the backward all-gather the other ranks' K/V during their first of cp attention steps, so each gather
    hides under 1 / cp of that pass's attention (a backward is two forwards' FLOPs); dK/dV go round in fp32
    one step at a time, each under the next step's backward but the last, which nothing hides."""
    cp = float(spec.parallelism.context_parallel)
    forwards = 2.0 if spec.gradient_checkpointing == "full" else 1.0
    passes, grad_chunks = context_parallel_passes(spec)
    chunk_s = cp_comm_s / passes  # one rank's K/V chunk, 16-bit
    gather_s, grads_s = (cp - 1.0) * chunk_s, grad_chunks / cp * chunk_s
    forward_step_s = attention_s / (forwards + 2.0) / cp
    backward_step_s = 2.0 * forward_step_s
    gathers = forwards * np.maximum(0.0, gather_s - forward_step_s)
    gathers = gathers + np.maximum(0.0, gather_s - backward_step_s)
    return gathers + (cp - 1.0) * np.maximum(0.0, grads_s - backward_step_s) + grads_s


# PyTorch's experimental ring, eager or traced by torch.compile: the same chunks and passes.
PYTORCH_RINGS = ("pytorch", "pytorch_compiled")


def context_parallel_passes(spec: WorkloadSpec) -> tuple[float, float]:
    """(one-rank K/V chunks of 16-bit values a GPU sends per layer and micro-batch, of them the dK/dV's).
    Transformer Engine's ring (p2p, all_gather): CONTEXT_PARALLEL_KV_PASSES (+1 under full recomputation)
    passes of cp - 1 chunks. PyTorch's (pytorch): K/V's cp - 1 chunks in each forward and in backward, and
    dK/dV cp times in fp32, twice a 16-bit chunk's bytes (assumptions.CONTEXT_PARALLEL_PYTORCH_RING)."""
    cp = float(spec.parallelism.context_parallel)
    forwards = 2.0 if spec.gradient_checkpointing == "full" else 1.0
    if spec.parallelism.context_parallel_comm not in PYTORCH_RINGS:
        return (CONTEXT_PARALLEL_KV_PASSES.value + forwards - 1.0) * (cp - 1.0), 0.0
    grad_chunks = cp * CONTEXT_PARALLEL_PYTORCH_RING.value / 2.0  # fp32 against 16-bit
    return (forwards + 1.0) * (cp - 1.0) + grad_chunks, grad_chunks


def context_parallel_exchange(spec: WorkloadSpec, tp, pp, rank_tokens, per_node, link, fabric):
    """(bytes each GPU sends, seconds) per step of context parallelism's K/V ring: per layer of the stage
    and micro-batch, CONTEXT_PARALLEL_KV_PASSES (+1 under full recomputation) passes of the rank's K and V
    chunk (its KV heads / tp, 16-bit) to the next of cp ranks, cp - 1 times. The cp ranks sit next to the
    tensor-parallel ones (Megatron's tp-cp-dp-pp order): on the node link while tp x cp fits a node.
    Under context_parallel_comm pytorch the chunk is the query heads' K/V (torchtitan repeats the KV heads
    before SDPA) and the passes are context_parallel_passes' (dK/dV in fp32)."""
    cp = float(spec.parallelism.context_parallel)
    if cp <= 1:
        zero = np.zeros_like(np.asarray(tp * pp * per_node, dtype=float))
        return zero, zero
    passes, _ = context_parallel_passes(spec)
    kv_width = counts.kv_elems_per_token(spec.model) / spec.model.num_layers  # K and V of one layer
    if spec.parallelism.context_parallel_comm in PYTORCH_RINGS:
        kv_width = 2.0 * attention_dim(spec.model)  # repeated to the query heads
    chunk = rank_tokens * kv_width * 2.0 / tp
    layers = spec.model.num_layers / pp * float(spec.gradient_accumulation_steps)
    volume = passes * chunk * layers
    over = np.where(tp * cp > per_node, fabric, link)
    with np.errstate(divide="ignore", invalid="ignore"):  # no fabric between instances: never finishes
        seconds = volume / over
    return tuple(np.broadcast_arrays(np.asarray(volume, dtype=float), seconds))


def expert_alltoall(spec: WorkloadSpec, tp, pp, rank_tokens, per_node, link, fabric, stride=None):
    """(bytes each GPU sends, seconds) per step of expert parallelism's token all-to-alls: per MoE layer of
    the stage and micro-batch, EXPERT_ALLTOALLS (+2 under full recomputation) all-to-alls of the rank's
    tokens x top-k x hidden 16-bit values (its sequence shard: tokens / tp under sequence parallelism),
    (ep - 1) / ep of them leaving the GPU. The EP group strides over tp x cp ranks (``stride``, None), or
    over consecutive ranks when it spans the tp ranks (expert_layout.expert_rank_stride): the peers in the
    same node go over the node link and the rest over the fabric, both at once (the slower sets the time)."""
    par, model = spec.parallelism, spec.model
    ep = float(par.expert_parallel)
    if ep <= 1 or not model.is_moe:
        zero = np.zeros_like(np.asarray(tp * pp * per_node, dtype=float))
        return zero, zero
    calls = EXPERT_ALLTOALLS.value + (2.0 if spec.gradient_checkpointing == "full" else 0.0)
    _, moe_layers = counts.layer_counts(model)
    layers = moe_layers / pp * float(spec.gradient_accumulation_steps)
    message = rank_tokens / tp * model.experts_per_token * model.hidden_size * 2.0
    volume = calls * layers * message * (ep - 1.0) / ep
    stride = tp * par.context_parallel if stride is None else stride
    in_node = np.clip(per_node / stride, 1.0, ep)  # EP peers in one node, itself too
    node_share = (in_node - 1.0) / (ep - 1.0)
    # DeepEP sends a token once to each GPU holding some of its experts (node_copy_share over the ep ranks)
    node_volume = volume * node_share * dispatch_bytes_share(spec) * node_copy_share(spec, ep)
    fabric_volume = (
        volume * (1.0 - node_share) * dispatch_bytes_share(spec) * node_copy_share(spec, ep / in_node)
    )
    with np.errstate(divide="ignore", invalid="ignore"):
        seconds = np.maximum(node_volume / link, np.where(node_share < 1.0, fabric_volume / fabric, 0.0))
    return tuple(np.broadcast_arrays(np.asarray(node_volume + fabric_volume, dtype=float), seconds))


def dispatch_bytes_share(spec: WorkloadSpec) -> float:
    """The all-to-alls' bytes against 16-bit values in every call (assumptions.EXPERT_DISPATCH): DeepEP (and
    HybridEP, the same flex dispatcher's other backend, which takes the same FP8 scaling factors) under fp8 sends the forward dispatch and the backward of the combine (the tokens and the gradients
    going to the experts) in FP8 and the other two in BF16, (1 + 1 + 2 + 2) / 8; 1 otherwise."""
    deepep_fp8 = spec.parallelism.expert_dispatch in FLEX_DISPATCHES and spec.precision == "fp8"
    return EXPERT_DISPATCH.value if deepep_fp8 else 1.0


def node_copy_share(spec: WorkloadSpec, nodes):
    """The copies a token's dispatch sends over ``nodes`` destinations against one per routed expert
    (assumptions.EXPERT_DISPATCH): DeepEP sends a token once to each other node holding one of its experts and
    forwards it over NVLink there, and once to each GPU of the node holding some (its dispatch layout marks
    a token per rank, is_token_in_rank; the combine returns one sum per rank): ``nodes`` the EP group's
    nodes for the fabric, its ep ranks for the node link. Of the top-k copies, k (n - 1) / n leave the node among n nodes of the EP group;
    the distinct other nodes they reach are (n - 1) (1 - (1 - 1 / n)^k), or m (n - 1) / n when group-limited
    routing caps a token at m nodes (expert_groups_per_token of expert_groups, each group spanning
    n / expert_groups nodes when there are fewer groups than nodes). HybridEP sends as DeepEP does. 1 under the
    plain all-to-all."""
    model = spec.model
    nodes = np.maximum(np.asarray(nodes, dtype=float), 1.0)
    if spec.parallelism.expert_dispatch not in FLEX_DISPATCHES:
        return np.ones_like(nodes)
    k = float(model.experts_per_token)
    if spec.parallelism.expert_routing == "balanced":
        return np.vectorize(balanced_destinations)(model.num_experts, model.experts_per_token, nodes) / k
    reached = nodes * (1.0 - (1.0 - 1.0 / nodes) ** k)  # distinct nodes a token's k experts sit on
    if model.expert_groups_per_token:
        cap = model.expert_groups_per_token * np.maximum(1.0, nodes / model.expert_groups)
        reached = np.minimum(reached, cap)
    return reached / k


@functools.lru_cache(maxsize=256)
def balanced_destinations(experts: int, top_k: int, destinations: float) -> float:
    """The distinct destinations (nodes or EP ranks, each holding a contiguous 1 / ``destinations`` of the
    ``experts``) a token reaches under parallelism.expert_routing balanced, averaged over tokens: NVIDIA-NeMo/
    Automodel's FakeBalancedGate (nemo_automodel/components/moe/layers.py @89e3a9fdd, the commit that published
    its performance summary) gives token i the experts arange(n x k).view(-1, k) % E, i.e. i k .. i k + k - 1
    (mod E), and its expert parallelism holds experts ep_rank x E / ep onwards on each rank (the same file,
    local_expert_indices_offset). DeepSeek-V3 (E 256, top-8) under EP 64 on 8 nodes: every token's 8 experts
    sit on 2 GPUs of one node, where a learned router's reach 5.25 of the 8 nodes."""
    starts = experts // math.gcd(experts, top_k)
    reached = 0
    for token in range(starts):
        first = token * top_k
        reached += len({int(((first + j) % experts) * destinations // experts) for j in range(top_k)})
    return reached / starts


def shared_expert_flops_share(spec: WorkloadSpec) -> float:
    """The shared experts' share of a trained token's FLOPs (3 passes, 4 with full recomputation, over their
    2 x (3 gated, 2 plain) x h x moe_intermediate_size a MoE layer): the compute that parallelism.expert_overlap
    shared_experts runs beside the routed experts' all-to-alls. Megatron-Core's --moe-shared-expert-overlap
    ('overlapping between shared expert computations and dispatcher communications', NVIDIA/Megatron-LM
    megatron/core/transformer/transformer_config.py moe_shared_expert_overlap), and NVIDIA-NeMo/Automodel's
    MoE.forward (nemo_automodel/components/moe/layers.py @89e3a9fdd: 'Execute shared experts in a separate
    stream to overlap compute with the communication for grouped experts'; autograd runs their backward on the
    same side stream). 0 for a model without shared experts."""
    model = spec.model
    if not model.is_moe or not model.shared_experts:
        return 0.0
    _, moe_layers = counts.layer_counts(model)
    if moe_layers and mtp_flops_per_token(spec):  # the MTP modules' MoE blocks carry shared experts too
        moe_layers += model.mtp_layers
    gated = 3.0 if model.gated_mlp else 2.0
    passes = 4.0 if spec.gradient_checkpointing == "full" else 3.0
    shared = passes * 2.0 * gated * model.hidden_size * model.moe_intermediate_size * model.shared_experts
    return shared * moe_layers / training_flops_per_token(spec)


def exposed_expert_seconds(spec: WorkloadSpec, ep_comm_s, compute_s, pp):
    """The share of the expert all-to-alls left on the critical path (parallelism.expert_overlap,
    assumptions.EXPERT_OVERLAP): all of it by default; under Megatron-Core's 1F1B A2A overlap ("partial")
    one micro-batch's all-to-alls run under another's computation in the steady 1F1B phase, so the
    warm-up and cool-down micro-batches (pp of the m a stage runs; 1 without a pipeline) stay exposed;
    under DualPipe ("dualpipe") every all-to-all hides under computation up to the compute time. Under
    expert_dispatch deepep (or hybridep, whose kernels run on SMs too) a hidden all-to-all still takes
    deepep_overlap_sm_share of its time from the compute."""
    overlap = spec.parallelism.expert_overlap
    if overlap == "none":
        return ep_comm_s
    if overlap == "shared_experts":
        # the shared experts run on a side stream while the routed experts' all-to-alls run: those hide
        # under the shared experts' share of the compute, up to it (shared_expert_flops_share)
        hidden = np.minimum(ep_comm_s, shared_expert_flops_share(spec) * compute_s)
        if spec.parallelism.expert_dispatch in FLEX_DISPATCHES:
            hidden = hidden * (1.0 - DEEPEP_OVERLAP_SM_SHARE.value)
        return ep_comm_s - hidden
    micro_batches = float(spec.gradient_accumulation_steps)
    steady = 1.0 if overlap == "dualpipe" else np.clip((micro_batches - pp) / micro_batches, 0.0, 1.0)
    steady = steady * EXPERT_OVERLAP.value
    exposed = np.maximum(ep_comm_s * (1.0 - steady), ep_comm_s - steady * compute_s)
    # DeepEP's (or HybridEP's) SMs taken from the compute it hides under
    if spec.parallelism.expert_dispatch in FLEX_DISPATCHES:
        exposed = exposed + (ep_comm_s - exposed) * DEEPEP_OVERLAP_SM_SHARE.value
    return exposed


def loader_seconds_per_step(spec: WorkloadSpec, step_images, gpus, vcpus_per_gpu=None) -> np.ndarray:
    """Seconds the CPU data pipeline needs for one step's images: decoding and augmenting at
    the data pipeline's rate per vCPU (host.loader_images_per_vcpu) on the vCPUs that run loader workers
    (host.loader_worker_vcpus: the host's, at most image.loader_workers a GPU; vcpus_per_gpu None: the
    spec's host, else the pipeline's need, which only the workers cap); 0 where no image is decoded on
    the CPU (text, cached latents, pre-decoded data)."""
    if not feeds_loader(spec):
        return np.zeros_like(np.asarray(gpus, dtype=float))
    gpus = np.asarray(gpus, dtype=float)
    per_gpu = _array(vcpus_per_gpu, loader_vcpus_per_gpu(spec))
    with np.errstate(divide="ignore", invalid="ignore"):
        return step_images / (loader_worker_vcpus(spec, gpus * per_gpu, gpus) * loader_images_per_vcpu(spec))


def loader_bound_hours(spec: WorkloadSpec, vcpus, gpus=None) -> np.ndarray:
    """Hours the host's data pipeline alone needs for the run (vcpus, gpus: the instances' totals; NaN
    where unknown stays NaN; gpus None: every vCPU runs a loader worker)."""
    if not feeds_loader(spec) or not spec.training_tokens:
        return np.zeros_like(np.asarray(vcpus, dtype=float))
    gpus = np.inf if gpus is None else gpus
    with np.errstate(divide="ignore", invalid="ignore"):
        rate = loader_worker_vcpus(spec, vcpus, gpus) * loader_images_per_vcpu(spec)
        return spec.training_tokens / rate / 3600.0


def tp_allreduces_per_layer(spec: WorkloadSpec) -> float:
    """Megatron tensor parallelism: 2 all-reduces per layer forward, 2 backward, 2 more when full
    recomputation replays the forward (Shoeybi et al. 2019; Korthikanti et al. 2022). Under sequence
    parallelism each is an all-gather and a reduce-scatter of the same bytes. torchtitan's op-level policy
    (selective_op) replays the forward's 2 all-gathers (whose outputs the backward's weight gradients need)
    but not its reduce-scatters: its _save_list names reduce_scatter_tensor and not all_gather_into_tensor
    (pytorch/torchtitan @820504e torchtitan/models/llama3/parallelize_llama.py), and PyTorch recomputes
    collectives inside a checkpointed region (torch/_functorch/partitioners.py force_save_collectives saves
    only those outside one): 1 all-reduce's worth more."""
    return {"full": 6.0, "selective_op": 5.0}.get(spec.gradient_checkpointing, 4.0)


def training_hours(spec: WorkloadSpec, **rows) -> np.ndarray:
    """Hours to train `spec.training_tokens` for each row (see training_throughput for the arguments)."""
    return training_throughput(spec, **rows)["training_hours"]


DECODE_EFFICIENCY = {
    "int8": INT8_DECODE_EFFICIENCY.value,
    "int4": INT4_DECODE_EFFICIENCY.value,
    "nf4": INT4_DECODE_EFFICIENCY.value,
}
# (weight format, inference.quant_kernel) -> its own read rate where the kernel states one: vLLM's Marlin 4-bit GEMM
# (assumptions.MARLIN_INT4_DECODE_EFFICIENCY, vllm-project/vllm#2497's bench.py run, an A100-class card), by card in
# decode_efficiency (GA102, and no Marlin below capability 8.0 or off CUDA); a runtime's fused dequantize-GEMV 4-bit
# kernel (calm gf4, MLC LLM q4f16, exllamav2, TinyChat / llm-awq: assumptions.FUSED_GEMV_INT4_DECODE_EFFICIENCY, calm's
# own 4090 rows), one rate on every card (no card rule read; desktop hosts only measured: FUSED_GEMV_SERVER_HOST_TEXT)
DECODE_EFFICIENCY_BY_KERNEL = {
    ("int4", "marlin"): MARLIN_INT4_DECODE_EFFICIENCY.value,
    ("int4", "fused_gemv"): FUSED_GEMV_INT4_DECODE_EFFICIENCY.value,
}


def decode_efficiency(spec: WorkloadSpec, generation=None, bandwidth_gbps=None):
    """The fraction of the 16-bit read rate a decode step reads ``spec``'s quantized weights at: the stated
    kernel's (DECODE_EFFICIENCY_BY_KERNEL; fused_gemv's one rate on every card), else the weight format's
    (DECODE_EFFICIENCY), 1 for 16-bit weights.

    Per row where ``generation`` (NVIDIA generation, 0 for other vendors) is given: Marlin runs only on CUDA cards
    of capability 8.0 or more (MARLIN_MIN_GENERATION; vLLM falls back to the awq / gptq kernels elsewhere: the
    unstated rate), and on GA102 Ampere cards (below GA102_MAX_BANDWIDTH_GBPS of ``bandwidth_gbps``) at
    MARLIN_INT4_DECODE_EFFICIENCY_GA102. Without ``generation``, the A100-class rate (one scalar)."""
    quantization = spec.weight_quantization
    kernel = getattr(spec.inference, "quant_kernel", "unstated")
    unstated = DECODE_EFFICIENCY.get(quantization, 1.0)
    by_kernel = DECODE_EFFICIENCY_BY_KERNEL.get((quantization, kernel))
    if by_kernel is None:
        return unstated
    if generation is None or kernel != "marlin":
        return by_kernel
    generation = np.asarray(generation, dtype=float)
    bandwidth = np.asarray(np.inf if bandwidth_gbps is None else bandwidth_gbps, dtype=float)
    ga102 = (generation == 80) & (bandwidth < GA102_MAX_BANDWIDTH_GBPS)
    rate = np.where(ga102, MARLIN_INT4_DECODE_EFFICIENCY_GA102.value, by_kernel)
    return np.where(generation >= MARLIN_MIN_GENERATION, rate, unstated)


# fused_gemv's rate holds for the runtimes it was set and checked on (aud51k fix list (2)); TensorRT-LLM's weight-only
# GEMV is outside it: NVIDIA/TensorRT-Model-Optimizer @06a15538 benchmark.md 1.1, H100, TRT-LLM v0.9 INT4 AWQ
# Llama3-8B batch 2 reads 1.61x its FP16 tokens/s, below even the unstated rate's 2.014x (aud51k's [MODELOPT] row).
FUSED_GEMV_RUNTIMES_TEXT = (
    "calm gf4, MLC LLM q4f16, exllamav2, TinyChat / llm-awq; not TensorRT-LLM's weight-only GEMV (its H100 INT4 "
    "AWQ runs 1.61x its FP16, below even the unstated rate) and not llama.cpp (its Q4 kernels read 0.66-0.82 of its "
    "F16): state those unstated"
)
# Every row that set or checked the rate ran on a desktop host (RTX 4090 / RTX A6000 workstations). exllamav2 on
# server hosts runs below the bytes: turboderp-org/exllamav2 #346 (A100-SXM4-80GB, 7B 4.0 bpw, 119.64 tokens/s) and
# #109 (A100-40G, 13B 4 bpw, 35.41; its 30B row 33.43, a per-token floor near 28 ms), where this rate prices 228.112
# and 93.500 (+90.7% / +164.0%, test_outside_fused_gemv_audit_aud51k.py); the maintainer names slow virtualized
# server CPUs. Not priced (no measured host time); said on every card that is not GeForce-class (GpuSpec.is_consumer).
FUSED_GEMV_SERVER_HOST_TEXT = (
    "the rate was measured on desktop hosts (RTX 4090 / RTX A6000 workstations); exllamav2 on server hosts pays a "
    "per-token host floor this figure does not price (exllamav2 #346 / #109, A100: 119.64 / 35.41 tokens/s "
    "published, +91% / +164% above what this rate gives)"
)


def _fused_gemv_text(gpu) -> str:
    """The row's clause for inference.quant_kernel fused_gemv: its rate, the runtimes it holds for, and on a card
    that is not GeForce-class the server host's per-token floor it does not price."""
    text = (
        f"inference.quant_kernel fused_gemv: the 4-bit weights read at {FUSED_GEMV_INT4_DECODE_EFFICIENCY.value:.3f} "
        "of the 16-bit rate, a runtime's fused dequantize-GEMV kernel (calm's RTX 4090 gf4 / fp16 rows, "
        f"zeux/calm README: 746 / 892 GB/s), for {FUSED_GEMV_RUNTIMES_TEXT}; the 16-bit lm_head at the 16-bit rate"
    )
    if gpu is None or gpu.is_consumer:
        return text
    return f"{text}; {FUSED_GEMV_SERVER_HOST_TEXT}"


def marlin_text(spec: WorkloadSpec, gpu) -> str:
    """The row's clause for a stated Marlin kernel (inference.quant_kernel marlin): the rate this card reads the
    4-bit weights at and where it comes from, or that vLLM cannot run Marlin here (decode_efficiency); ""
    otherwise."""
    kernel = getattr(spec.inference, "quant_kernel", "unstated")
    if kernel == "fused_gemv" and spec.weight_quantization == "int4":
        return _fused_gemv_text(gpu)
    if kernel != "marlin" or DECODE_EFFICIENCY_BY_KERNEL.get((spec.weight_quantization, kernel)) is None:
        return ""
    generation = gpu.generation or 0
    rate = float(decode_efficiency(spec, generation, gpu.memory_bandwidth_gbps))
    if generation < MARLIN_MIN_GENERATION:
        where = (
            "ROCm / non-CUDA" if not gpu.is_nvidia else f"compute capability below 8.0 ({gpu.architecture})"
        )
        return (
            f"inference.quant_kernel marlin: vLLM cannot run Marlin on {gpu.slug} ({where}: awq_marlin / "
            "gptq_marlin get_min_capability() 80, CUDA only) and falls back to the awq / gptq kernels: its int4 "
            f"weights are priced at the unstated rate, {rate:.3f} of the 16-bit read rate"
        )
    if rate == MARLIN_INT4_DECODE_EFFICIENCY_GA102.value:
        basis = "GA102 Ampere (the Marlin README's A10 peak figure: the ideal 3.87x over fp16)"
    elif generation == 80:
        basis = "A100-class (vllm-project/vllm#2497's bench.py row, Llama-13B layers, batch 1)"
    else:
        basis = (
            f"the A100-class figure (vllm-project/vllm#2497), assumed: no published Marlin figure for "
            f"{gpu.architecture} was found"
        )
    return (
        f"inference.quant_kernel marlin: the 4-bit weights read at {rate:.3f} of the 16-bit rate on {gpu.slug}, "
        f"{basis}; the 16-bit lm_head at the 16-bit rate"
    )


def sixteen_bit_read_bytes(spec: WorkloadSpec) -> float:
    """Bytes of the weights a forward reads that stay 16-bit under weight quantization: the output layer (lm_head),
    norms and biases (bytes_model.weights_bytes), the input table left out (a row lookup). vLLM keeps an AWQ / GPTQ
    checkpoint's lm_head unquantized (AWQMarlinConfig / GPTQConfig lm_head_quantized False: ParallelLMHead gets
    UnquantizedEmbeddingMethod, a 16-bit GEMV), so these read at the 16-bit rate, not the kernel's. 0 for 16-bit
    models (nothing is divided). Qwen2.5-7B: 152,064 x 3,584 x 2 = 1.09 GB of lm_head. Under inference.quant_format
    mxfp4 the attention and router linears too (bytes_model.is_mxfp4: only the routed experts are MXFP4)."""
    if spec.weight_quantization == "none":
        return 0.0
    model = spec.model
    others = model.params - counts.quantizable_params(model) - counts.input_lookup_params(model)
    if is_mxfp4(spec):
        others += counts.quantizable_params(model) - routed_expert_params(model)
    return float(others) * embedding_bytes(spec)


def routed_experts_touched(model, tokens: float) -> float:
    """The expected share of an MoE layer's routed experts that ``tokens`` tokens of one forward route to,
    under uniform routing (moe_routed_expert_reads): each token picks k of the E experts, so an expert is
    missed by all of them with probability (1 - k / E)^tokens. A decode step's tokens are its streams; a
    context phase's are its prompt's. 1 for a dense model."""
    if not model.is_moe:
        return 1.0
    return 1.0 - (1.0 - model.experts_per_token / model.num_experts) ** tokens


def decode_read_bytes(
    spec: WorkloadSpec, concurrency: float, efficiency=None
) -> tuple[float | np.ndarray, float]:
    """(weight bytes read by one forward of ``concurrency`` tokens, KV bytes read per stream per step), whole
    model: a decode step of that many streams, or with the prompt's tokens a request's context phase (the
    routed experts it reads grow with its tokens: routed_experts_touched; shared experts and dense layers are
    read whole). Quantized weights in bandwidth-equivalent bytes (stored bytes / the kernel's dequantization
    efficiency: ``efficiency``, per row, default decode_efficiency(spec)); the 16-bit lm_head, norms and biases
    at the 16-bit rate (sixteen_bit_read_bytes)."""
    model = spec.model
    state = state_bytes(spec)
    weight_read = state.weight_bytes
    if not model.tie_word_embeddings:  # the input embedding is a row lookup, not a full read
        weight_read -= model.vocab_size * model.hidden_size * embedding_bytes(spec)
    if model.is_moe:  # routed experts are read only when some token of the forward picks them
        # the experts no token picks: the total less the active weights and the input table (a lookup)
        inactive = model.params - counts.active_params(model) - counts.input_lookup_params(model)
        experts, k = model.num_experts, model.experts_per_token
        expert_params = inactive * experts / (experts - k)
        touched = routed_experts_touched(model, concurrency)
        # a routed expert weight's bytes: the stated expert precision's (inference.expert_precision), else the
        # model's mean
        expert_bytes = expert_weight_bytes(spec)
        per_weight = state.weight_bytes / model.params if expert_bytes is None else expert_bytes
        weight_read -= expert_params * (1.0 - touched) * per_weight
    # Quantized weights cost more time per byte (dequantization): count them as bandwidth-equivalent bytes; the
    # 16-bit layers beside them (lm_head) read at the 16-bit rate
    efficiency = decode_efficiency(spec) if efficiency is None else efficiency
    sixteen = sixteen_bit_read_bytes(spec)
    weight_read = (weight_read - sixteen) / efficiency + sixteen
    inference = spec.inference
    average_context = inference.prompt_tokens + inference.output_tokens / 2.0
    kv_read = counts.kv_elems_per_token(model) * DTYPE_BYTES[inference.kv_cache_dtype]
    kv_read = kv_read * counts.cached_tokens(model, average_context)
    return weight_read, kv_read


def expert_split(spec: WorkloadSpec) -> tuple[float, str | None]:
    """(the routed experts' matmul weights one token multiplies, their precision) where
    ``inference.expert_precision`` states the experts apart from the model's precision; (0, None) otherwise, the
    experts then run with the rest at spec.precision. Mixtral 8x7B: 32 layers x top-2 x 3 x 4,096 x 14,336 =
    11.27e9 of its 12.75e9 a token. Shared experts and the router stay at the model's precision (TensorRT-LLM
    v0.9.0's MoE plugin holds only the routed experts: tensorrt_llm/layers/moe.py @250d9c29)."""
    model = spec.model
    if not model.is_moe or spec.inference.expert_precision == "model":
        return 0.0, None
    _, moe_layers = counts.layer_counts(model)
    per_expert = counts.dense_mlp_params(model, model.moe_intermediate_size)
    return float(moe_layers * model.experts_per_token * per_expert), spec.inference.expert_precision


def prefill_efficiency(precision: str, generation=None) -> np.ndarray:
    """Fraction of the precision's dense peak that prefill (and the batched decode GEMMs) reach, per row.

    FP4 (NVFP4 on Blackwell): prefill_efficiency_fp4 (fitted on MLPerf's B200 FP4 over Hopper FP8). 8-bit:
    prefill_efficiency_fp8 (fitted on H100 FP8). 16-bit: Ampere and older
    NVIDIA parts (generation 70-89) prefill_efficiency_16bit_ampere (fitted on A100 FP16); Hopper and later,
    and parts ranked on the H100's model at a measured ratio (generation None or 0: accelerators.py), the
    FP8 figure x 2 / the published FP8-over-BF16 prefill speedup, i.e. 0.56 of the BF16 peak."""
    if precision == "fp4":
        return np.asarray(PREFILL_EFFICIENCY_FP4.value)
    if DTYPE_BYTES.get(precision, 2.0) <= 1.0:
        return np.asarray(PREFILL_EFFICIENCY_FP8.value)
    hopper = PREFILL_EFFICIENCY_FP8.value * 2.0 / FP8_PREFILL_SPEEDUP.value
    gen = _array(generation, 0.0)
    return np.where((gen > 0) & (gen < 90), PREFILL_EFFICIENCY_AMPERE.value, hopper)


def inference_throughput(
    spec: WorkloadSpec,
    *,
    bandwidth_gbps,
    peak_tflops,
    gpu_counts=None,
    tensor_parallel=None,
    pipeline_parallel=None,
    achieved_bandwidth=ACHIEVED_BANDWIDTH_FRACTION,
    tensor_parallel_gbps=None,
    generation=None,
    compute_efficiency=None,
    power_bound_tflops=None,
    tensor_parallel_nvlink=None,
    expert_peak_tflops=None,
    expert_compute_efficiency=None,
    pipeline_link_gbps=None,
    sm_clock_hz=None,
    l2_cache_bytes=None,
    gpu_memory_gib=None,
) -> dict[str, np.ndarray]:
    """Decode tokens/s (per stream and total over concurrency and replicas) and time to first token.

    One decode step of ``concurrency`` streams runs two kinds of kernel one after the other (their times
    add; TensorRT-LLM and vLLM do not overlap them):

    - the linear layers (GEMMs): the weights read once for the whole batch, 2 N FLOPs per stream; the
      slower of reading the weights at the achieved bandwidth and the FLOPs at prefill_efficiency;
    - attention: every stream reads its own KV cache at its context length (prompt + half the output on
      average), once per KV head group (GQA kernels share it across the group's query heads: TensorRT-LLM's
      XQA, FlashInfer); the slower of those reads and the score/value FLOPs. Under
      ``inference.decode_attention`` per_query_head (TensorRT-LLM's pre-XQA masked MHA) every query head walks
      its KV head's cache: the group's element visits at MMHA_ELEMENTS_PER_SM_CLOCK over ``sm_clock_hz`` (per
      row, SMs x clock: decode_attention.sm_clock_hz; NaN or None: no visits priced) where longer.

    Tensor parallelism adds 2 all-reduces per layer to every decode step (concurrency x hidden 16-bit
    activations each) and to the prefill (prompt x hidden), each moving 2(t-1)/t of the message over
    the node link (tensor_parallel_gbps: per-GPU collective GB/s; None: only the per-call latency, an
    NVLink-class link) at the cost NCCL's own model gives its fastest ring protocol, never below
    TP_ALLREDUCE_LATENCY plus the bytes (tp_allreduce_call_seconds); PCIe cards pay it in full (vLLM on PCIe
    does), each ring step at NCCL's PCIe hop where ``tensor_parallel_nvlink`` is False for the row (the host's
    intra-node link; None: NVLink).

    Time to first token: the prompt's FLOPs at prefill_efficiency (whose 2,048-token fit rows carry the
    context phase's per-layer fixed costs) or, where longer (short prompts), the weight and KV reads plus
    CONTEXT_LAYER_FIXED_SECONDS a layer, plus the prompt's all-reduces. An MoE prompt reads the routed experts
    its tokens route to (decode_read_bytes at the prompt's tokens: all of Mixtral's 8 at 128 tokens), a
    decode step those of its streams.

    Total tokens/s also pays for each request's prefill: every output_tokens steps each stream's prompt is
    prefilled once (in-flight batching interleaves it; static batching runs it first), so a step carries
    concurrency x prompt / output_tokens prompt tokens of compute-bound prefill. The per-stream rate (the
    time per output token) is the decode step alone.
    `generation`: each row's NVIDIA generation (prefill efficiency; image presets: the attention kernel's
    ceiling on Hopper). `compute_efficiency`: per row, a part's own measured serving efficiency
    (efficiency.serving_efficiency; NaN: prefill_efficiency applies). `power_bound_tflops`: image presets,
    each row's board-power bound on a generation's FLOP rate (compute_peak.power_bound_tflops; None: none).
    `expert_peak_tflops`, `expert_compute_efficiency`: where ``inference.expert_precision`` states 16-bit routed
    experts (expert_split), each row's dense peak at that precision and the part's measured serving efficiency
    at it (NaN: prefill_efficiency at that precision, the 16-bit path); the experts' GEMMs run there, the rest
    at spec.precision, and their weights are read at 2 bytes (decode_read_bytes). compute_peak.expert_rate_inputs
    gives both; required when the spec states the field.
    `achieved_bandwidth`: per row (or one figure), the share of the datasheet bandwidth the decode and serving
    reads reach (GpuSpec.decode_read_fraction: the card's measured figure, 0.885 on the RTX 4090, 0.70 elsewhere;
    default 0.70).
    `pipeline_link_gbps`: per row, the per-GPU GB/s of the link between pipeline stages; given, a pipeline of
    pp > 1 stages serves as vLLM runs it (``serving_pipeline_batches``: pp micro-batches in flight, each stage's
    weights read once a micro-batch, a send of activations between stages); None: one batch in flight (the
    stages idle in turn), the `size` model for a stated pipeline.
    `l2_cache_bytes`: image presets, each row's L2 (GpuSpec.l2_cache_bytes; None or NaN: not known), where an eager
    Flux step's fp32 q / k chains spill it (image_model.flux_qk_chain_dram_bytes_per_step).
    `gpu_memory_gib`: per row (or one figure), the card's memory, which picks the framework's default token budget
    under ``inference.traffic`` closed_loop where ``inference.max_batched_tokens`` is not stated
    (serving_load.default_max_batched_tokens; None: the >= 70 GiB figure, 8,192).
    """
    par = spec.parallelism
    gpus = _array(gpu_counts, par.gpus)
    tp = _array(tensor_parallel, par.tensor_parallel)
    pp = _array(pipeline_parallel, par.pipeline_parallel)
    if spec.model.image_arch is not None:  # images per second: compute + elementwise traffic (image_model.py)
        return inference_rows(
            spec,
            peak_tflops=_array(peak_tflops, np.nan),
            bandwidth_gbps=_array(bandwidth_gbps, np.nan),
            gpu_counts=gpus,
            tensor_parallel=tp,
            pipeline_parallel=pp,
            generation=generation,
            power_bound_tflops=power_bound_tflops,
            l2_cache_bytes=l2_cache_bytes,
        )
    inference = spec.inference
    concurrency = float(inference.concurrency)
    prompt = float(inference.prompt_tokens)
    # the quantized weights' read rate per row: the stated kernel's where the card runs it (decode_efficiency)
    read_efficiency = decode_efficiency(spec, generation, bandwidth_gbps)
    weight_read, kv_read = decode_read_bytes(spec, concurrency, read_efficiency)
    # the matmul weights a token multiplies: the blocks' and the output layer's (the input embedding is a
    # row lookup)
    n_active = counts.block_matmul_params(spec.model) + counts.output_layer_params(spec.model)
    # Pipeline stages run one after another for a token, so only tensor parallelism adds bandwidth or FLOPs.
    read_rate = (
        tp * _array(bandwidth_gbps, np.nan) * 1e9 * _array(achieved_bandwidth, ACHIEVED_BANDWIDTH_FRACTION)
    )
    measured = _array(compute_efficiency, np.nan)
    efficiency = np.where(np.isnan(measured), prefill_efficiency(spec.precision, generation), measured)
    flop_rate = tp * _array(peak_tflops, np.nan) * 1e12 * efficiency
    # routed experts at a stated precision of their own (inference.expert_precision): their GEMMs at that
    # precision's peak and efficiency, the other matmuls at spec.precision's
    expert_active, expert_dtype = expert_split(spec)
    # seconds of one token's matmuls
    matmul_s = 2.0 * n_active / flop_rate
    if expert_dtype is not None:
        if expert_peak_tflops is None:
            raise ValueError(
                "inference.expert_precision is stated: pass expert_peak_tflops (expert_rate_inputs)"
            )
        measured_expert = _array(expert_compute_efficiency, np.nan)
        expert_efficiency = np.where(
            np.isnan(measured_expert), prefill_efficiency(expert_dtype, generation), measured_expert
        )
        expert_rate = tp * _array(expert_peak_tflops, np.nan) * 1e12 * expert_efficiency
        # the experts' share at their own rate
        matmul_s = 2.0 * (n_active - expert_active) / flop_rate + 2.0 * expert_active / expert_rate
    # a decode token attends to its whole context (no mask to halve); a prompt token to half the prompt
    decode_attention = attention_forward_flops_per_token(
        spec.model, prompt + inference.output_tokens / 2.0, causal=False
    )
    # the streams one stage runs at once: all of them, or a micro-batch of a serving pipeline's
    in_flight = serving_pipeline_batches(pp, concurrency, pipeline_link_gbps)
    batch = concurrency / in_flight
    gemm_s = np.maximum(weight_read / read_rate, batch * matmul_s)
    # an eager loop's exllama linears: its GEMV runs each row (stream) again; from 8 rows it reconstructs fp16
    # weights for cuBLAS (serving_host.quant_kernel_gemm_seconds); gemm_s unchanged otherwise
    gemm_s = serving_host.quant_kernel_gemm_seconds(spec, gemm_s, weight_read, read_rate, tp)
    # an eager transformers loop copies the cache with torch.cat before attention reads it (3 passes, not 1), on a
    # 2-byte cache with PyTorch's element-at-a-time copy kernels (serving_host.kv_cache_pass_seconds_equivalent)
    kv_passes = serving_host.kv_cache_pass_seconds_equivalent(spec)
    attention_s = np.maximum(batch * kv_passes * kv_read / read_rate, batch * decode_attention / flop_rate)
    # pre-XQA masked MHA (inference.decode_attention per_query_head): each query head's block walks its KV head's
    # cache, an issue-bound cost an element (decode_attention.py); fmax keeps the read where a row has no SM clock
    attention_s = np.fmax(attention_s, visit_seconds(spec, batch, kv_read, tp, _array(sm_clock_hz, np.nan)))
    link = _array(tensor_parallel_gbps, np.inf) * 1e9
    # a micro-batch's all-reduces (each stage a TP group: 2 a layer over its layers, so 2 a layer of the model a
    # cycle) carry the micro-batch's tokens; without a pipeline the micro-batch is every stream
    decode_comm_s = serving_allreduce_seconds(
        spec, tp, batch, link, generation=generation, nvlink=tensor_parallel_nvlink
    ) + pipeline_send_seconds(spec, pp, batch, pipeline_link_gbps, tensor_parallel_nvlink)
    # cuda_old's bare ops (fp32 output, input and scale casts, the cast back) run on the GPU too: their bytes
    # at the read rate (serving_host.quant_kernel_gpu_seconds); 0 for every other kernel
    step_s = gemm_s + attention_s + decode_comm_s + serving_host.quant_kernel_gpu_seconds(spec, read_rate)
    # an eager transformers loop (inference.engine hf_eager) issues every kernel from the host every token: the
    # step takes the longer of its GPU work and that host time (serving_host.py); 0 for compiled engines
    step_s = np.maximum(step_s, serving_host.host_seconds_per_token(spec))
    # vLLM's V0 loop (inference.engine vllm_v0) schedules, builds inputs, samples (a GPU-to-CPU copy) and processes
    # outputs on the host between steps while the GPU waits: added to every step, the prefill's included
    engine_host_s = serving_host.engine_step_host_seconds(spec)
    step_s = step_s + engine_host_s
    replicas = np.floor(gpus / (tp * pp))
    prefill_flops = 2.0 * n_active + attention_forward_flops_per_token(spec.model, prompt)
    prefill_compute_s = prefill_flops * prompt / flop_rate
    if expert_dtype is not None:  # the experts' FLOPs at their own rate (matmul_s)
        prefill_compute_s = (matmul_s + (prefill_flops - 2.0 * n_active) / flop_rate) * prompt
    # a request's context phase: its FLOPs at the prefill efficiency (fitted on 2,048-token first tokens,
    # which carry the per-layer fixed costs), or, where the forward is read-bound (short prompts), the weight
    # reads plus the context phase's fixed cost a layer (CONTEXT_LAYER_FIXED_SECONDS, measured, mechanism not
    # established)
    context_fixed_s = CONTEXT_LAYER_FIXED_SECONDS.value * spec.model.num_layers
    # the experts the prompt's tokens route to, not a decode step's (MoE; the same bytes for a dense model)
    prompt_weight_read, _ = decode_read_bytes(spec, prompt, read_efficiency)
    prefill_s = np.maximum(prefill_compute_s, (prompt_weight_read + kv_read) / read_rate + context_fixed_s)
    prefill_comm_s = serving_allreduce_seconds(
        spec, tp, prompt, link, generation=generation, nvlink=tensor_parallel_nvlink
    )
    # a request's prompt in a batched prefill: its FLOPs and its all-reduce bytes (the per-call latency is
    # shared by the batch)
    batched_prefill_s = prefill_compute_s + serving_allreduce_seconds(spec, tp, prompt, link, latency=False)
    # a serving pipeline's stages prefill their micro-batches' prompts side by side
    prefill_per_step_s = (
        concurrency * batched_prefill_s / max(float(inference.output_tokens), 1.0) / in_flight
    )
    single_stream_bound = (weight_read + kv_read) / (tp * _array(bandwidth_gbps, np.nan) * 1e9)
    # a pipeline's prompt crosses its stages once, one send each
    prefill_comm_s = prefill_comm_s + pipeline_send_seconds(
        spec, pp, prompt, pipeline_link_gbps, tensor_parallel_nvlink
    )
    ttft_s = prefill_s + prefill_comm_s + engine_host_s
    bound = np.where(concurrency * matmul_s > weight_read / read_rate, "compute", "memory")
    if inference.traffic == "closed_loop":
        # the steady-state step mix (serving_load.py): the other streams' prompts ride a stream's reply steps in
        # chunks of (budget - concurrency) tokens, the linear layers at M = decodes + the chunk, the chunk's causal
        # attention FLOPs and the all-reduces at M; the rest of the reply's steps are decode-only. The per-stream
        # time per token is the mean step over the reply, the total a stream's cycle.
        def extra_s(tokens: float):
            """Seconds a step carrying ``tokens`` prompt tokens costs over the decode-only step."""
            if tokens <= 0:
                return np.zeros_like(step_s)
            mixed_read, _ = decode_read_bytes(spec, concurrency + tokens, read_efficiency)
            mixed_batch = batch + tokens / in_flight
            mixed_gemm_s = np.maximum(mixed_read / read_rate, mixed_batch * matmul_s)
            prompt_attention_s = (
                tokens / in_flight * attention_forward_flops_per_token(spec.model, prompt) / flop_rate
            )
            mixed_comm_s = serving_allreduce_seconds(
                spec, tp, mixed_batch, link, generation=generation, nvlink=tensor_parallel_nvlink
            ) - serving_allreduce_seconds(
                spec, tp, batch, link, generation=generation, nvlink=tensor_parallel_nvlink
            )
            return (mixed_gemm_s - gemm_s) + prompt_attention_s + mixed_comm_s

        budgets = np.broadcast_to(
            _closed_loop_budget(spec, gpu_memory_gib, generation), np.shape(step_s * np.ones_like(gpus))
        )
        decode_only_s = step_s
        mean_s = np.array(step_s * np.ones_like(budgets), dtype=float)
        own_prompt_s = np.zeros_like(mean_s)
        queued_s = np.zeros_like(mean_s)
        prompt_bound = np.zeros(np.shape(mean_s), dtype=bool)
        outputs = max(float(inference.output_tokens), 1.0)
        for budget in np.unique(budgets):
            here = budgets == budget
            mix = serving_load.step_mix(concurrency, prompt, inference.output_tokens, float(budget))
            steps = mix["steps"]
            added = sum(count * extra_s(tokens) for count, tokens in mix["by_tokens"] if count > 0)
            mean_here = decode_only_s + (added / steps if steps > 0 else 0.0)
            # the request's own chunks, each beside the running decodes (at one stream the lone prefill below)
            chunk, last, chunks = mix["chunk_tokens"], mix["last_chunk_tokens"], mix["chunks_per_prompt"]
            own = (chunks - 1) * (decode_only_s + extra_s(chunk)) + decode_only_s + extra_s(last)
            # prompt tokens no reply step holds (a binding budget) wait for full-budget steps
            queued = mix["queued_tokens"] / chunk * (decode_only_s + extra_s(chunk))
            mean_s = np.where(here, mean_here, mean_s)
            own_prompt_s = np.where(here, own, own_prompt_s)
            queued_s = np.where(here, queued, queued_s)
            largest = max((tokens for count, tokens in mix["by_tokens"] if count > 0), default=0.0)
            mixed_read, _ = decode_read_bytes(spec, concurrency + largest, read_efficiency)
            prompt_bound = np.where(
                here, (batch + largest / in_flight) * matmul_s > mixed_read / read_rate, prompt_bound
            )
        bound = np.where(prompt_bound, "compute", bound)
        step_s = mean_s
        # a closed-loop arrival follows a stream's last token, at a step's end: it waits for the step already
        # scheduled (a mean step; none at one stream, where the engine is idle and the prompt runs as a lone
        # prefill), then its own chunks, and any prompt tokens queued ahead of it; a stream's cycle is its first
        # token and output_tokens - 1 steps
        if concurrency > 1:
            ttft_s = step_s + own_prompt_s + queued_s
        ttft_s = ttft_s * np.ones_like(step_s)
        cycle_s = ttft_s + (outputs - 1.0) * step_s
        prefill_per_step_s = cycle_s / outputs - step_s
    return {
        "decode_tokens_per_second_per_stream": 1.0 / step_s,
        "decode_tokens_per_second_total": concurrency / (step_s + prefill_per_step_s) * replicas,
        "time_to_first_token_seconds": ttft_s,
        "decode_step_seconds": step_s,
        "decode_communication_seconds": decode_comm_s,
        "decode_attention_seconds": attention_s,
        "prefill_seconds_per_step": prefill_per_step_s,
        "decode_bound": bound,
        "decode_tokens_per_second_upper_bound": 1.0 / single_stream_bound,
    }


def _closed_loop_budget(spec: WorkloadSpec, gpu_memory_gib, generation) -> np.ndarray:
    """Per row, the scheduler's token budget: the stated ``inference.max_batched_tokens``, else the framework's
    default for the row's card (serving_load.default_max_batched_tokens)."""
    stated = spec.inference.max_batched_tokens
    if stated is not None:
        return np.asarray(float(stated))
    memory = np.asarray(np.nan if gpu_memory_gib is None else gpu_memory_gib, dtype=float)
    gens = np.asarray(0 if generation is None else generation, dtype=float)
    memory, gens = np.broadcast_arrays(memory, gens)
    return np.vectorize(serving_load.default_max_batched_tokens, otypes=[float])(memory, gens)


def serving_pipeline_batches(pp, concurrency: float, pipeline_link_gbps) -> np.ndarray:
    """Micro-batches a serving pipeline keeps in flight: min(pp, concurrency) where ``pipeline_link_gbps`` is
    given (vLLM runs one scheduler a stage, "virtual engines", so that pp batches fill the pipeline:
    vllm/engine/llm_engine.py @v0.6.3 builds ``pipeline_parallel_size`` Schedulers; V1's executor keeps
    ``max_concurrent_batches`` = pp batches queued); else 1. Each stage then runs 1 / pp of the layers on
    concurrency / in-flight streams, reading its weights once a micro-batch: a stream's step is the weight
    read of the whole model at one stage's bandwidth plus its micro-batch's KV reads, and every stream steps
    once a cycle (the total is concurrency / step)."""
    pp = np.asarray(pp, dtype=float)
    if pipeline_link_gbps is None:
        return np.ones_like(pp)
    return np.where(pp > 1, np.minimum(pp, max(concurrency, 1.0)), 1.0)


def pipeline_send_seconds(spec: WorkloadSpec, pp, tokens, pipeline_link_gbps, nvlink=None) -> np.ndarray:
    """Seconds of a token batch's sends between a serving pipeline's stages (pp - 1 of them): each a P2P send
    of the hidden states and the residual (vLLM's IntermediateTensors {"hidden_states", "residual"},
    vllm/model_executor/models/llama.py, sent by parallel_state.send_tensor_dict), tokens x hidden x 2 tensors
    x 2 bytes, at NCCL's Simple base latency plus one hop of the link (NVLink 3.4 us, PCIe 5.7 us: tuning.cc)
    plus the bytes at ``pipeline_link_gbps`` (per-GPU GB/s). 0 where the link is not given or pp is 1."""
    pp = np.asarray(pp, dtype=float)
    if pipeline_link_gbps is None:
        return np.zeros_like(pp)
    over_nvlink = np.asarray(True if nvlink is None else nvlink, dtype=bool)
    hop = np.where(over_nvlink, NODE_HOP_LATENCY.value, PCIE_HOP_LATENCY.value)
    message = np.asarray(tokens, dtype=float) * spec.model.hidden_size * 2.0 * 2.0
    with np.errstate(invalid="ignore", divide="ignore"):
        send = RING_BASE_LATENCY.value + hop + message / (_array(pipeline_link_gbps, np.inf) * 1e9)
    return np.where(pp > 1, (pp - 1.0) * send, 0.0)


def serving_allreduce_seconds(
    spec: WorkloadSpec, tp, tokens, link, latency: bool = True, generation=None, nvlink=None
) -> np.ndarray:
    """Tensor-parallel all-reduces of one forward over ``tokens`` tokens: 2 per layer of tokens x hidden x 2
    bytes each. With ``latency``, each call costs tp_allreduce_call_seconds; without (a request's share of a
    batched prefill, whose per-call latency the batch shares), 2(t-1)/t of its bytes over ``link`` (bytes/s)."""
    calls = 2.0 * spec.model.num_layers
    message = tokens * spec.model.hidden_size * 2.0
    with np.errstate(invalid="ignore", divide="ignore"):
        if latency:
            per_call = tp_allreduce_call_seconds(tp, message, link, generation, nvlink)
        else:
            per_call = 2.0 * (tp - 1.0) / tp * message / link
    return np.where(tp > 1, calls * per_call, 0.0)


def tp_allreduce_call_seconds(tp, message_bytes: float, link, generation=None, nvlink=None) -> np.ndarray:
    """Seconds of one all-reduce of ``message_bytes`` over a tensor-parallel group of ``tp`` GPUs in one node.

    NCCL's cost model (tuning.cc @v2.19.3-1, ring, one node; assumptions.RING_LL_BASE_LATENCY and its
    neighbours cite the lines): each protocol costs its base latency plus 2(t-1) steps of its per-hop latency,
    plus the 2(t-1)/t x bytes at its share of the bus bandwidth (``link``, bytes/s): Simple (all of it), LL (a
    quarter) and, over NVLink on Volta, Ampere and Hopper (``generation`` 70, 80 or 90, where that release
    enables it by default), LL128 (0.92); NCCL runs the fastest. ``nvlink``: per row, the group shares NVLink
    (or another scale-up link); False prices each step at NCCL's PCIe hop (Simple 5.7 us, LL 1.0 us) with
    LL128 off; None: NVLink. Large messages at TP 4-8 pay the Simple or LL128 pipeline's 2(t-1) hops (TP 8:
    56 us on Simple over NVLink) on top of their bytes. Never below TP_ALLREDUCE_LATENCY plus the bytes:
    nccl-tests' small-message latency, which includes the kernel launch that tuning.cc leaves out. A TP 8 group
    of Ampere parts on NVLink at the measured run's link (``link`` = assumptions.A100_TP8_ALLREDUCE_LINK_GBPS,
    240 GB/s: the A100 SXM4, 80 GB and 40 GB alike, the 40 GB part priced at the 80 GB part's run) pays instead
    the call as nccl-tests measured it on 8 A100-SXM4-80GB, one rank a GPU (assumptions.A100_TP8_ALLREDUCE_SECONDS,
    log-interpolated in the message size; above its last row, 4 GiB, that row's time scaled by the bytes, i.e. at
    its bus bandwidth): 1.11-1.26x the model from 4 to 32 MB. Another link on the same group keeps the model.
    The table is NCCL's ring; TensorRT-LLM's own ONESHOT / TWOSHOT kernels (v0.9.0 below 8 MB) are not in it."""
    tp = np.asarray(tp, dtype=float)
    steps = 2.0 * (tp - 1.0)
    over_nvlink = np.asarray(True if nvlink is None else nvlink, dtype=bool)
    simple_hop = np.where(over_nvlink, NODE_HOP_LATENCY.value, PCIE_HOP_LATENCY.value)
    ll_hop = np.where(over_nvlink, RING_LL_HOP_LATENCY.value, PCIE_LL_HOP_LATENCY.value)
    with np.errstate(invalid="ignore", divide="ignore"):
        bytes_s = steps / tp * message_bytes / link
        simple = RING_BASE_LATENCY.value + steps * simple_hop + bytes_s
        low_latency = RING_LL_BASE_LATENCY.value + steps * ll_hop + bytes_s / RING_LL_BANDWIDTH_SHARE.value
        ll128 = (
            RING_LL128_BASE_LATENCY.value
            + steps * RING_LL128_HOP_LATENCY.value
            + bytes_s / RING_LL128_BANDWIDTH_SHARE.value
        )
    ll128_enabled = np.isin(_array(generation, 0.0), (70.0, 80.0, 90.0)) & over_nvlink
    fastest = np.minimum(np.minimum(simple, low_latency), np.where(ll128_enabled, ll128, np.inf))
    modelled = np.maximum(fastest, TP_ALLREDUCE_LATENCY.value + bytes_s)
    # a group whose calls were measured (8 A100 SXM4 on NVSwitch, nccl-tests): the measured time
    message = np.asarray(message_bytes, dtype=float)
    largest, largest_s = A100_TP8_ALLREDUCE_BYTES[-1], A100_TP8_ALLREDUCE_SECONDS[-1]
    measured = np.where(
        message > largest,
        largest_s * message / largest,  # beyond the run's 4 GiB: its last row's bus bandwidth
        np.interp(
            np.log(np.clip(message, A100_TP8_ALLREDUCE_BYTES[0], largest)),
            np.log(A100_TP8_ALLREDUCE_BYTES),
            A100_TP8_ALLREDUCE_SECONDS,
        ),
    )
    on_measured_link = np.isclose(
        np.asarray(link, dtype=float), A100_TP8_ALLREDUCE_LINK_GBPS * 1e9, rtol=1e-6
    )
    on_measured = (tp == 8.0) & (_array(generation, 0.0) == 80.0) & over_nvlink & on_measured_link
    return np.where(on_measured, measured, modelled)
