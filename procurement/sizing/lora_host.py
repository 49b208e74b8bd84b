"""The host floor of an eager PEFT LoRA / QLoRA training step on a language model (issue 26, stop 43).

Launches are asynchronous: the host queues a layer's kernels while the GPU runs earlier ones, so a step takes the
longer of its GPU work and its host time (a max, not a sum; image_model.host_excess_seconds is the same form for
eager image pipelines). The host time is counted, not fitted: kernels a decoder layer and micro-batch x the host
cost of one kernel, on every card (the cost is the software's, not the GPU's).

Kernels, HF transformers' eager decoder layer (models/llama/modeling_llama.py LlamaDecoderLayer; Qwen2's is the
same layer) with a fused attention kernel (FlashAttention 2 / SDPA), frozen base, per micro-batch:
  forward, non-GEMM: 2 LlamaRMSNorm x 8 (to fp32, pow, mean, + eps, rsqrt, mul, to 16 bits, x weight) = 16;
    apply_rotary_pos_emb on q and k, 5 each (x cos, rotate_half's neg and cat, x sin, add) = 10; the attention
    kernel 1; 2 residual adds; act_fn 1 and the gated MLP's multiply 1: 31 (30 without a gate);
  forward, GEMMs: one a frozen linear (q, k, v, o, gate, up, down: 7; QLoRA 3 more a linear, bitsandbytes'
    double-quantized dequantize_4bit before its matmul; 8 more for GPTQ int4's eager unpacking,
    QLORA_DEQUANT_KERNELS);
  backward, non-GEMM: 2 RMSNorm backwards x 10 (weight product, two casts, the mul's two gradients, rsqrt, mean,
    pow and the sum of the fp32 input's two gradients) = 20; rotary 4 each = 8; attention 1; act_fn 1 and the
    gate multiply's 2; autograd's sums where one tensor feeds several (q/k/v 2, gate/up 1, the two residual
    forks 2) 5: 37 (35 without a gate);
  backward, GEMMs: the input gradient of each frozen linear (no weight gradient; bitsandbytes QLoRA dequantizes
    again: +3 for nf4; GPTQ int4 reuses the saved 16-bit weight: +0);
  adapters (peft tuners/lora/layer.py Linear.forward, result + lora_B(lora_A(dropout(x))) * scaling, dropout an
    Identity at PEFT's default 0): image_model.LORA_FORWARD_KERNELS (4) and LORA_BACKWARD_KERNELS (6) an adapted
    linear, the counts the eager image LoRA step already uses; a stated lora.dropout above 0 is an nn.Dropout:
    one kernel more each way an adapted linear (LORA_DROPOUT_KERNELS);
  full recomputation (HF gradient_checkpointing) replays the forward once more.
Llama-shaped, all-linear: forward 38 + 28 = 66 (x 2 with recomputation), backward 44 + 42 = 86.

Host cost a kernel: the forward's and the recomputed forward's kernels are issued from Python nn.Modules at
eager_kernel_host_s (31 us, the eager diffusers calibration); the backward's are issued by autograd's C++ engine,
no Python per op, at optimizer_op_host_s (7 us, a bare PyTorch op, pytorch/pytorch issue #41383). 66 x 2 x 31 us +
86 x 7 us = 4.69 ms a layer and micro-batch. Checked, not fitted: QwenLM/Qwen @03cd81f5 README 'Profiling of
Memory and Speed' LoRA rows at 256 tokens (A100-SXM4-80G, HF PEFT, FlashAttention 2): 5.2 / 4.7 / 5.0 ms a layer
and micro-batch for Qwen-1.8B / 7B / 14B (their embedding, loss and optimizer included); at 512 / 1,024 tokens held
out (tests/procurement/outside/test_outside_audit_stop43l.py). Left out: the embedding, final norm, output layer
and loss (~0.5 ms a micro-batch) and the optimizer step (foreach AdamW on fp32 adapters: a few kernels a step).

Synchronised micro-batches (cls45c): the step is no shorter than its first forward's host time plus the GPU's work
after that forward, whichever phase binds. HF Trainer, the loop that drives a PEFT step (QwenLM/Qwen finetune.py,
ms-swift, axolotl), reads every micro-batch's loss on the host before the next one starts: _inner_training_loop's
`args.logging_nan_inf_filter and not is_torch_tpu_available() and (torch.isnan(tr_loss_step) or
torch.isinf(tr_loss_step))` (transformers src/transformers/trainer.py of the 4.3x releases; the same check, without
the TPU clause, at 000945a9; TrainingArguments.logging_nan_inf_filter is True by default; QwenLM/Qwen's
requirements.txt pins transformers 4.31.0) takes a tensor's truth value, a device-to-host copy that waits for the GPU. So the
GPU's backlog of one micro-batch cannot hide the next one's host time: within a micro-batch the queue is a two-stage
pipeline whose time is max over k of (host time of kernels 1..k + GPU time of kernels k..n), and the eager forward
(kernels at 31 us, host-bound at short lengths) is followed by a GPU-bound recompute-and-backward (its kernels at 7 us
but 2x the FLOPs): max(host, GPU, forward host + the GPU's work after the forward). Counted, not fitted: the forward's
kernels (kernels_per_layer) and the forward's share of the GPU's FLOPs (throughput.forward_share: the blocks'
forward over the step's charged FLOPs: 0.27-0.31 on the Qwen rows under full recomputation, ~1/2 without). It binds
where the forward's GPU work is under its host time: Qwen-7B at 512 tokens (forward host 32 x 8 x 61 x 31 us =
0.48 s against 0.37 s of forward GPU work) 1.19 -> 1.31 s a step (README 1.5); held out, the README's other LoRA rows
at 256-8k do not move (their forward is GPU-bound or the whole-step floor binds) but the 1.8B at 2k (1.22 -> 1.25 s,
README 1.7).
The NaN filter is not the only sync a micro-batch (fixc45), so the bound holds with logging_nan_inf_filter=False
and on the other eager loops too: a blocking input copy, `.to(device)` without non_blocking, ends in
at::cuda::memcpy_and_sync, a cudaMemcpyAsync then cudaStreamSynchronize on the current stream (PyTorch
aten/src/ATen/native/cuda/Copy.cu copy_kernel_cuda's `else` branch; c10/cuda/CUDAFunctions.h), which waits for the
previous micro-batch's backward before the next forward is issued: HF Trainer's _prepare_input `data.to(**kwargs)`
with only the device (transformers 4.31.0 trainer.py, the rows' pin) and torchtune's LoRA recipe's
`input_ids.to(self._device)` each micro-batch (recipes/lora_finetune_single_device.py @0097adab); LitGPT's copy is
non-blocking from pinned memory, but its finetune/lora.py reads `loss.item()` ("expensive device-to-host
synchronization") every iteration at its log_interval 1 (Lightning-AI/lit-gpt @b96a5708). Where the floor applies,
the bound does (lora.implementation peft_eager and no stated fused stack: `applies`); fused stacks, NeMo /
Megatron-Core (training_stack megatron, or lora.implementation fused), MaxText (XLA), Unsloth (fused), pay neither.
The QLoRA unpacking is placed by its passes, not by the FLOPs' forward share (qlora_dequant.first_forward_share:
GPTQ int4 1/2 of its time in the first forward under full recomputation, nf4 1/3, LLM.int8 0): Qwen-7B Q-LoRA at
256 tokens on an A100 2.044 -> 1.812 s a step (README 3.0), aud45c's finding.

Scope: LoRA / QLoRA on a dense language model with `lora.implementation` peft_eager (the default, unstated
stack; not under a stated training_stack megatron or maxtext, whose adapters are fused or compiled), on plans without tensor or pipeline parallelism: the engine's TP and PP are Megatron-Core's (its all-reduces
a layer, its schedules), a stack whose adapters are fused (NeMo), and HF PEFT runs data-parallel (DDP, ZeRO, FSDP).
fused (NeMo / Megatron's adapters, unsloth's Triton kernels) and compiled (torch.compile with CUDA graphs) stacks
do not pay it; MoE layers (per-expert kernels not counted) and image models (image_model counts their own)
are left out.
"""

from __future__ import annotations

from procurement.sizing.assumptions import EAGER_KERNEL_HOST_SECONDS, OPTIMIZER_OP_HOST_SECONDS
from procurement.sizing.image_model import LORA_BACKWARD_KERNELS, LORA_FORWARD_KERNELS
from procurement.sizing.params import linear_shapes

FORWARD_NON_GEMM_KERNELS = 30.0  # + 1 for a gated MLP's multiply
BACKWARD_NON_GEMM_KERNELS = 35.0  # + 2 for a gated MLP's multiply
# QLoRA: kernels that unpack a frozen linear's weight, (forward, backward), by weight_quantization (qlora_dequant.py
# names the code). Counted, not fitted.
# nf4 (fixl44): bitsandbytes Linear4bit -> matmul_4bit -> MatMul4Bit (autograd/_functions.py) runs
#   F.linear(A, F.dequantize_4bit(B, state).to(A.dtype).t()) forward and
#   torch.matmul(grad_output, F.dequantize_4bit(B, ctx.state).to(grad_output.dtype).t()) backward (a Python
#   autograd.Function, its ops issued one by one). dequantize_4bit (functional.py) on a double-quantized weight, the
#   QLoRA recipe and the engine's 4.127 bits for nf4: dequantize_blockwise(absmax, state2) (the 8-bit absmax blocks
#   to fp32: one ctypes kernel, cdequantize_blockwise_fp32), absmax += offset (one add), then the 4-bit kernel
#   (cdequantize_blockwise_bf16_nf4 / _fp16_nf4): 3 kernels, forward and backward; .to() and .float() are no-ops at
#   the stored dtype, .t() a view, the matmul is the linear's own GEMM. Read at bitsandbytes 18e827d6 ("Version
#   0.41.1.", LitGPT's resource tables) and at the 0.43.3, 0.45.5, 0.48.2 and 0.49.2 tags (custom ops from 0.48,
#   the same three calls). Left out: 0.41's host work a ctypes call without a kernel (pre_call / post_call's two
#   torch.cuda.set_device, is_on_gpu, get_ptr: no measured cost), and 0.50's forward, which routes MatMul4Bit
#   through the gemm_4bit op (one fused kernel at up to 1,536 rows where a per-architecture table picks it, else
#   the same 3 + GEMM; the backward unchanged): the spec states no bitsandbytes version.
# int8: bitsandbytes' one kernel in the forward and again in the backward (its cast-and-rescale counted as one).
# int4: AutoGPTQ qlinear_cuda_old's eager unpacking, in the forward only (the backward uses the saved 16-bit
# weight): bitwise_right_shift, .to(int8) and bitwise_and on the packed zeros and again on the packed weight,
# weight - zeros, scales * (...): 8 kernels.
QLORA_DEQUANT_KERNELS = {"nf4": (3.0, 3.0), "int4": (8.0, 0.0), "int8": (1.0, 1.0)}
# lora.dropout above 0: PEFT's nn.Dropout on x before lora_A (peft tuners/lora/layer.py update_layer: nn.Dropout
# where lora_dropout > 0.0, else nn.Identity), one fused dropout kernel forward and one (the mask's multiply)
# backward an adapted linear. Counted, not fitted.
LORA_DROPOUT_KERNELS = 1.0
# lora.adapter_dtype fp32 (fix48, lora48): fp32 adapters on a 16-bit base under torch autocast. peft v0.5.0
# (huggingface/peft @4df9c5a2 src/peft/tuners/lora.py: LoraLayer.update_layer ends `self.to(self.weight.device)`,
# device only, so lora_A / lora_B stay the fp32 nn.Linear they were built as; _replace_module moves them by device
# only) runs Linear.forward as `x = x.to(self.lora_A[...].weight.dtype)` then lora_B(lora_A(dropout(x))) * scaling
# (lines 893-917); v0.6.1 (@1c8a5f2c tuners/lora/layer.py) moves them to the base weight's dtype, so the cast is a
# no-op there (lora.adapter_dtype base, the default). Under autocast (Accelerate v0.21.0 @3c2435b0
# src/accelerate/accelerator.py prepare_model, lines 1294-1303: model.forward wrapped in
# torch.autocast(dtype=torch.bfloat16) for --bf16 without DeepSpeed; the recomputed forward re-enters it:
# torch/utils/checkpoint.py CheckpointFunction.backward, pytorch/pytorch @0008d771) each adapted linear adds, per
# forward pass: PEFT's x.to(fp32), one bare op issued from Python inside a forward whose module Python is already
# counted (fix48l, after aud48l: at optimizer_op_host_s, pytorch/pytorch issue #41383's ~7 us for a Python-issued
# op, not at eager_kernel_host_s, whose 31 us carries diffusers' per-module Python); autocast's casts of lora_A's fp32
# input and of lora_A's and lora_B's fp32 weights to 16 bits, three kernels issued inside the dispatcher with no
# Python of their own; and backward the four casts' gradients (ToCopyBackward). The counts are read from the code,
# not fitted; the per-kernel cost of the C++-issued casts and cast gradients is an ASSUMPTION: optimizer_op_host_s
# is #41383's Python-issued CPU `2*x` (ngimel there: about 1 us of an op is C++), borrowed, not measured for these
# casts (aud48l's sensitivity: the 1.8B / 14B 256 rows leave 15% only below ~3 us a cast).
FP32_ADAPTER_PYTHON_KERNELS = 1.0
FP32_ADAPTER_AUTOCAST_KERNELS = 3.0
FP32_ADAPTER_BACKWARD_KERNELS = 4.0


# training_stack values whose adapters are not eager PyTorch modules: NeMo / Megatron-Core's fused adapters, MaxText's
# XLA-compiled step. A stated one takes no host floor and no synchronised-micro-batch bound, as lora.implementation
# fused does.
FUSED_STACKS = ("megatron", "maxtext")


def applies(spec) -> bool:
    """Eager PEFT adapters on a dense language model, on a stack that runs them eagerly."""
    return (
        spec.uses_adapters
        and spec.lora is not None
        and spec.lora.implementation == "peft_eager"
        and getattr(spec, "training_stack", "other") not in FUSED_STACKS
        and not spec.model.is_image
        and not spec.model.is_moe
    )


def _per_layer(spec, target) -> float:
    rows = linear_shapes(spec.model)[target][2]
    return rows / spec.model.num_layers


def _fp32_adapters(spec) -> bool:
    """fp32 adapters on a 16-bit base (lora.adapter_dtype fp32): autocast casts them each pass."""
    return spec.lora.adapter_dtype == "fp32" and spec.precision in ("bf16", "fp16")


def autocast_kernels_per_layer(spec) -> float:
    """Forward kernels a layer and micro-batch issued inside the dispatcher, not from Python (autocast's casts of
    fp32 adapters, FP32_ADAPTER_AUTOCAST_KERNELS an adapted linear); 0 unless lora.adapter_dtype is fp32."""
    if not _fp32_adapters(spec):
        return 0.0
    return FP32_ADAPTER_AUTOCAST_KERNELS * sum(_per_layer(spec, target) for target in spec.lora.targets)


def bare_op_kernels_per_layer(spec) -> float:
    """Forward kernels a layer and micro-batch priced as bare ops (optimizer_op_host_s), not with a module's Python:
    autocast's casts plus PEFT's one x.to(fp32) an adapted linear (FP32_ADAPTER_PYTHON_KERNELS); 0 unless
    lora.adapter_dtype is fp32."""
    if not _fp32_adapters(spec):
        return 0.0
    adapted = sum(_per_layer(spec, target) for target in spec.lora.targets)
    return autocast_kernels_per_layer(spec) + FP32_ADAPTER_PYTHON_KERNELS * adapted


def kernels_per_layer(spec) -> tuple[float, float]:
    """(forward kernels, backward kernels) of one decoder layer and micro-batch, the adapters' included; the
    forward is counted once (full recomputation replays it: host_seconds_per_layer). The forward's are the kernels
    issued from nn.Modules' Python; fp32 adapters' casts (PEFT's x.to and autocast's) are apart
    (bare_op_kernels_per_layer)."""
    model = spec.model
    fused_qkv = "qkv_fused" in spec.lora.targets
    attention = 2.0 if fused_qkv else 4.0
    frozen = attention + (3.0 if model.gated_mlp else 2.0)
    gate = 1.0 if model.gated_mlp else 0.0
    dequant, dequant_back = (0.0, 0.0)
    if spec.task == "qlora":
        dequant, dequant_back = QLORA_DEQUANT_KERNELS.get(spec.weight_quantization, (1.0, 1.0))
    adapted = sum(_per_layer(spec, target) for target in spec.lora.targets)
    dropout = LORA_DROPOUT_KERNELS if spec.lora.dropout > 0.0 else 0.0
    cast_back = FP32_ADAPTER_BACKWARD_KERNELS if _fp32_adapters(spec) else 0.0
    forward = (
        FORWARD_NON_GEMM_KERNELS
        + gate
        + frozen * (1.0 + dequant)
        + adapted * (LORA_FORWARD_KERNELS + dropout)
    )
    backward = (
        BACKWARD_NON_GEMM_KERNELS
        + 2.0 * gate
        + frozen * (1.0 + dequant_back)
        + adapted * (LORA_BACKWARD_KERNELS + dropout + cast_back)
    )
    return forward, backward


def host_seconds_per_layer(spec) -> float:
    """Host time of one decoder layer and micro-batch of an eager PEFT step; 0 where it does not apply."""
    if not applies(spec):
        return 0.0
    forward, backward = kernels_per_layer(spec)
    passes = 2.0 if spec.gradient_checkpointing == "full" else 1.0
    autocast = bare_op_kernels_per_layer(spec)
    return (
        forward * passes * EAGER_KERNEL_HOST_SECONDS.value
        + (autocast * passes + backward) * OPTIMIZER_OP_HOST_SECONDS.value
    )


def host_seconds_per_step(spec) -> float:
    """A rank's host time a step: layers x micro-batches x host_seconds_per_layer (throughput applies it to rows
    without tensor or pipeline parallelism only)."""
    return host_seconds_per_layer(spec) * spec.model.num_layers * float(spec.gradient_accumulation_steps)


def forward_host_seconds_per_step(spec) -> float:
    """The host time of the first forward a step (the forward kernels once, not the recomputed forward nor the
    backward): layers x micro-batches x forward kernels x eager_kernel_host_s; 0 where the floor does not apply.
    The step is no shorter than this plus the GPU's work after the forward (HF Trainer syncs every micro-batch:
    the module's "Synchronised micro-batches")."""
    if not applies(spec):
        return 0.0
    forward, _ = kernels_per_layer(spec)
    layers = spec.model.num_layers * float(spec.gradient_accumulation_steps)
    autocast = bare_op_kernels_per_layer(spec) * OPTIMIZER_OP_HOST_SECONDS.value
    return (forward * EAGER_KERNEL_HOST_SECONDS.value + autocast) * layers


def text(spec) -> str:
    """The answer's clause for the floor, the same on every card; "" where it does not apply."""
    if not applies(spec):
        return ""
    forward, backward = kernels_per_layer(spec)
    passes = 2 if spec.gradient_checkpointing == "full" else 1
    per_layer = host_seconds_per_layer(spec)
    notes = ["twice: full recomputation"] if passes == 2 else []
    if spec.lora.dropout > 0.0:
        notes.append(f"lora.dropout {spec.lora.dropout:g}: one dropout kernel each way an adapter")
    if _fp32_adapters(spec):
        notes.append(
            f"lora.adapter_dtype fp32: PEFT's input cast and autocast's 3 casts an adapter at "
            f"{OPTIMIZER_OP_HOST_SECONDS.value * 1e6:.0f} us ({bare_op_kernels_per_layer(spec):.0f} a layer) and "
            f"4 cast gradients backward; the casts' per-kernel cost is assumed (a bare PyTorch op), not measured"
        )
    recompute = f" ({'; '.join(notes)})" if notes else ""
    return (
        f"eager PEFT adapters (lora.implementation peft_eager, the default): {forward:.0f} forward kernels a layer"
        f"{recompute} at {EAGER_KERNEL_HOST_SECONDS.value * 1e6:.0f} us and {backward:.0f} backward at "
        f"{OPTIMIZER_OP_HOST_SECONDS.value * 1e6:.0f} us of host time = {per_layer * 1e3:.2f} ms a layer and "
        f"micro-batch, on every card (plans without tensor or pipeline parallelism); the step takes the longer of that and the GPU's work (launches are "
        f"asynchronous), and no less than the forward's host time plus the GPU's work after it (every micro-batch "
        f"syncs the host: HF Trainer's loss check, a blocking input copy, LitGPT's loss.item()); fused or compiled "
        f"adapters do not pay it. The two per-kernel costs are not measured"
        f" apart: their sum matches A100 hosts' 4.7-5.2 ms a layer on short Qwen LoRA steps"
    )
