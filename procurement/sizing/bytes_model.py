"""Bytes per parameter and per activation element for a workload: the scalar inputs of the memory model.

Everything here depends only on the spec (not on GPU count or card), so it is computed once per
spec and cached; `memory.py` then evaluates it over arrays of parallelism plans.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from procurement.sizing import image_model
from procurement.sizing import params as counts
from procurement.sizing.assumptions import (
    FP8_SAVED_LINEAR_INPUT,
    INT4_BITS,
    INT8_BITS,
    LOGITS_BYTES,
    NF4_BITS,
    NF4_SINGLE_QUANT_BITS,
    NVFP4_BITS,
)
from procurement.sizing.image_presets import ImageArchitecture
from procurement.sizing.pipeline_split import stage_split
from procurement.sizing.spec import QUANT_FORMAT_GROUP_SIZES, ModelSpec, WorkloadSpec

DTYPE_BYTES = {"fp32": 4.0, "fp16": 2.0, "bf16": 2.0, "fp8": 1.0, "int8": 1.0, "fp4": 0.5}
QUANT_BITS = {"int8": INT8_BITS.value, "int4": INT4_BITS.value, "nf4": NF4_BITS.value}


# What a stated int4 format stores beside each group's 4-bit weights, bits (inference.quant_format):
# gptq / awq: an fp16 scale and a 4-bit zero point packed eight to an int32 per group and output channel (vLLM v0.6.3
# vllm/model_executor/layers/quantization/gptq.py and awq.py create_weights: qzeros [in / group, out / 8] int32,
# scales [in / group, out] fp16; a symmetric GPTQ checkpoint ships and loads its qzeros too, gptq_marlin.py
# process_weights_after_loading sets layer.zp empty but keeps the loaded qzeros parameter); mxfp4: one E8M0 (8-bit)
# scale per 32 values (OCP Microscaling Formats v1.0, section 5; vLLM mxfp4.py w13_weight_scale / w2_weight_scale
# uint8 [.., size // mxfp4_block], mxfp4_block = 32).
INT4_GROUP_OVERHEAD_BITS = {"gptq": 16.0 + 4.0, "awq": 16.0 + 4.0, "mxfp4": 8.0}


def int4_group_size(spec: WorkloadSpec) -> int | None:
    """The stated int4 format's group (inference.quant_group_size, else the format's own); None where no format is
    stated; -1: one scale per output channel."""
    fmt = spec.inference.quant_format
    if fmt == "unstated":
        return None
    return spec.inference.quant_group_size or QUANT_FORMAT_GROUP_SIZES[fmt]


def int4_bits_per_weight(spec: WorkloadSpec) -> float:
    """Bits an int4 weight holds with its group's scale (and zero point): int4_bits_per_param (4.25) unless
    inference.quant_format states the format: AWQ / GPTQ at group 128 4 + 20 / 128 = 4.156, MXFP4 4 + 8 / 32 =
    4.25; per output channel (-1) 4 (one scale a row of thousands of weights)."""
    group = int4_group_size(spec)
    if group is None:
        return INT4_BITS.value
    if group == -1:
        return 4.0
    return 4.0 + INT4_GROUP_OVERHEAD_BITS[spec.inference.quant_format] / group


def image_quantized_bytes(spec: WorkloadSpec) -> float:
    """Bytes per weight of an image preset's quantized layers: the format's bits / 8, NF4 at 4.5 bits where
    image.nf4_double_quant is false (one float32 scale per 64 weights, no double quantization)."""
    if spec.weight_quantization == "nf4" and not spec.image.nf4_double_quant:
        return NF4_SINGLE_QUANT_BITS.value / 8
    return QUANT_BITS[spec.weight_quantization] / 8


@dataclass(frozen=True)
class StateBytes:
    """Whole-model (unsharded) state of one workload, in bytes, plus per-token activation figures."""

    weight_bytes: float  # resident weights in their storage dtype (frozen + trainable)
    trainable_params: float
    grad_bytes_per_param: float
    optimizer_bytes_per_param: float  # fp32 master copy counted here, as in the ZeRO paper
    largest_layer_bytes: float  # gathered whole under ZeRO-3/FSDP
    layer_bytes_per_token: float  # activations one layer keeps per token, no recomputation
    layer_bytes_per_token_no_scores: float  # same without the attention-score term
    layer_input_bytes_per_token: float  # what full recomputation keeps per layer (2h)
    logits_bytes_per_token: float
    logits_bytes_per_token_tensor_parallel: (
        float  # the same under tensor parallelism (before the split by tp)
    )


def compute_bytes(spec: WorkloadSpec) -> float:
    """Bytes of a 16/32-bit working weight. fp8 training keeps bf16 weights with transient fp8 copies
    (Transformer Engine without fp8_model_init, torchao float8) unless `fp8_weights` says the recipe
    stores them in fp8 (see `weights_bytes`)."""
    if spec.is_training and spec.precision in ("fp8", "fp4"):
        return 2.0
    return DTYPE_BYTES[spec.precision]


def is_nvfp4(spec: WorkloadSpec) -> bool:
    """`precision: fp4` (inference only): the block linears in NVFP4, the rest BF16 (nvfp4_bits_per_param)."""
    return spec.precision == "fp4" and spec.weight_quantization == "none" and spec.model.image_arch is None


def is_mxfp4(spec: WorkloadSpec) -> bool:
    """inference.quant_format mxfp4: only the routed experts are MXFP4, every other linear 16-bit (the note below)."""
    return spec.weight_quantization == "int4" and spec.inference.quant_format == "mxfp4"


# An MXFP4 checkpoint quantizes its routed experts only: gpt-oss's config.json quantization_config
# "modules_to_not_convert": ["model.layers.*.self_attn", "model.layers.*.mlp.router", "model.embed_tokens", "lm_head"]
# (openai/gpt-oss-120b and -20b config.json), and vLLM serves every linear but the FusedMoE experts unquantized
# (vllm-project/vllm @afdb4a4f vllm/model_executor/layers/quantization/mxfp4.py Mxfp4Config.get_quant_method:
# UnquantizedLinearMethod for an ignored layer, "Mxfp4 linear layer is not implemented" for any other linear; only
# FusedMoE gets Mxfp4MoEMethod). So block_linear_bytes is the 16-bit dtype and expert_weight_bytes the format's
# 4.25 bits; a dense model stated mxfp4 is refused (spec._check_quant_format): no such checkpoint loads.


def block_linear_bytes(spec: WorkloadSpec) -> float:
    """Bytes per weight of the block linears: a quantized format, fp8 storage, or the compute dtype. NF4 at 4.5 bits
    where a language model's quantization.nf4_double_quant is false (a float32 absmax per 64 weights, QLoRA paper
    section 2: 32 / 64 = 0.5 bits of constants a weight, 0.127 with double quantization). MXFP4: 16-bit (attention
    and router stay unconverted; the experts' bytes are expert_weight_bytes')."""
    if spec.weight_quantization == "nf4" and not spec.quantization.nf4_double_quant:
        return NF4_SINGLE_QUANT_BITS.value / 8
    if is_mxfp4(spec):
        return embedding_bytes(spec)
    if spec.weight_quantization == "int4":
        return int4_bits_per_weight(spec) / 8
    if spec.weight_quantization != "none":
        return QUANT_BITS[spec.weight_quantization] / 8
    if is_nvfp4(spec):
        return NVFP4_BITS.value / 8
    if spec.fp8_weights:
        # NeMo/Megatron `fp8_params` (Transformer Engine's fp8_model_init) keeps Linear and
        # LayerNormLinear weights as 1-byte Float8Tensors; the fp32 master copy is the optimizer's.
        return DTYPE_BYTES["fp8"]
    return compute_bytes(spec)


def embedding_bytes(spec: WorkloadSpec) -> float:
    """Bytes per weight of the embedding, LM head and norms: 16-bit under quantization and fp8 storage
    (min of the compute dtype and 2); BF16 under NVFP4 (ModelOpt excludes them: nvfp4_bits_per_param)."""
    return 2.0 if is_nvfp4(spec) else min(compute_bytes(spec), 2.0)


def routed_expert_params(model: ModelSpec) -> float:
    """All routed experts' weights, every MoE layer (Mixtral 8x7B: 32 x 8 x 3 x 4,096 x 14,336 = 45.10e9); 0 for
    a dense model."""
    _, moe_layers = counts.layer_counts(model)
    return float(moe_layers * model.num_experts * counts.dense_mlp_params(model, model.moe_intermediate_size))


def expert_weight_bytes(spec: WorkloadSpec) -> float | None:
    """Bytes a routed expert weight where ``inference.expert_precision`` states the experts' precision apart from
    the model's (2 for bf16 / fp16: TensorRT-LLM v0.9.0's MoE plugin under an FP8 model, moe.py `weight_dtype =
    dtype`); the format's bits / 8 under inference.quant_format mxfp4 (the MXFP4 note above block_linear_bytes:
    only the experts are MXFP4, 4.25 bits); None where the experts are at the model's precision (the default)."""
    if not spec.model.is_moe:
        return None
    if spec.inference.expert_precision != "model":
        return DTYPE_BYTES[spec.inference.expert_precision]
    if is_mxfp4(spec):
        return int4_bits_per_weight(spec) / 8
    return None


def weights_bytes(spec: WorkloadSpec) -> float:
    """All resident weights. Quantization, fp8 storage and NVFP4 apply to block linears; embeddings, head
    and norms stay 16-bit (Transformer Engine converts only its Linear/LayerNormLinear modules; ModelOpt
    leaves the LM head out of its NVFP4 checkpoints). A stated ``inference.expert_precision`` holds the routed
    experts at its bytes instead of the block linears' (Mixtral 8x7B FP8 with 16-bit experts: 45.10e9 x 2 +
    1.61e9 x 1 bytes)."""
    model = spec.model
    if spec.weight_quantization == "none" and not spec.fp8_weights and not is_nvfp4(spec):
        base = model.params * compute_bytes(spec)
    else:
        linears = counts.quantizable_params(model)
        base = linears * block_linear_bytes(spec) + (model.params - linears) * non_quantized_bytes(spec)
    expert_bytes = expert_weight_bytes(spec)
    if expert_bytes is not None:
        base += routed_expert_params(model) * (expert_bytes - block_linear_bytes(spec))
    return (
        base
        + adapter_params(spec) * adapter_bytes(spec)
        + saved_module_params(spec) * saved_module_bytes(spec)
    )


def non_quantized_bytes(spec: WorkloadSpec) -> float:
    """Bytes a resident weight outside the quantized block linears (embeddings, head, norms): embedding_bytes, or
    fp32 (4) where quantization.prepare_kbit states that peft's prepare_model_for_kbit_training cast them and
    nothing cast them back: peft v0.5.0 @4df9c5a2 src/peft/utils/other.py 92-101 `for param in model.parameters():
    if (param.dtype == torch.float16) or (param.dtype == torch.bfloat16): param.data = param.data.to(torch.float32)`
    on a bitsandbytes model (skipped for GPTQ, refused there by the spec). Stacks that undo it under bf16: TRL's
    SFTTrainer (v0.8.6 .. v0.13.0 sft_trainer.py, e.g. v0.9.6 line 240 prepare, line 272
    peft_module_casting_to_bf16 when args.bf16, utils.py 765-772: embed_tokens / lm_head back to bf16, norms fp32) and artidoro/qlora qlora.py
    @7f4e95a6 lines 377 / 402-405 under --bf16; there the default (16-bit) is the run."""
    if spec.quantization.prepare_kbit and _kbit_prepared(spec):
        return DTYPE_BYTES["fp32"]
    return embedding_bytes(spec)


def saved_module_params(spec: WorkloadSpec) -> float:
    """Parameters of the trainable copies lora.modules_to_save makes (PEFT's ModulesToSaveWrapper deep-copies each
    named module and trains the copy, the original kept frozen: peft v0.5.0 src/peft/utils/other.py 151-161): vocab
    x hidden a named module, the input table and the output layer alike (Qwen-7B's wte and lm_head: 2 x 151,936 x
    4,096 = 1.2447e9). 0 without adapters or names, and for image models."""
    if (
        not spec.uses_adapters
        or spec.lora is None
        or spec.model.is_image
        or spec.model.image_arch is not None
    ):
        return 0.0
    return float(len(spec.lora.modules_to_save) * counts.output_layer_params(spec.model))


def saved_module_bytes(spec: WorkloadSpec) -> float:
    """Bytes a copied module's weight (and its gradient: autograd keeps a parameter's gradient in its dtype): the
    dtype of the frozen original, as copy.deepcopy keeps it: the run's working weights, 16-bit beside quantized or
    fp8-stored block linears (weights_bytes: embeddings and head are never quantized). fp32 (4) without DeepSpeed
    (zero_stage 0) where the run cannot keep a 16-bit copy: _FP32_SAVED_MODULES. Under ZeRO DeepSpeed casts the whole
    module to the run's 16-bit dtype before training (runtime/engine.py _configure_distributed_model:
    `self.module.half()` / `self.module.bfloat16()`, stored id 57130323), copies included."""
    if spec.parallelism.zero_stage == 0 and (_kbit_prepared(spec) or spec.precision == "fp16"):
        return 4.0
    if spec.weight_quantization == "none" and not spec.fp8_weights:
        return compute_bytes(spec)
    return embedding_bytes(spec)


# _FP32_SAVED_MODULES: where a run without DeepSpeed holds modules_to_save's copies in fp32.
# QLoRA on bitsandbytes (nf4, int8): peft's prepare_model_for_kbit_training, called before get_peft_model, casts every
#   fp16 / bf16 parameter left (embeddings, head, norms) to fp32 ("cast all non INT8 parameters to fp32", peft v0.5.0
#   @4df9c5a2 src/peft/utils/other.py:98-101; unchanged in kind at peft @012c0d5a), and the copies deep-copy those
#   fp32 originals; not on GPTQ (int4: the same function skips the cast when quantization_method is "gptq", :97).
# fp16 mixed precision: torch's GradScaler refuses 16-bit gradients of a trained parameter (torch/cuda/amp/
#   grad_scaler.py _unscale_grads_ with allow_fp16=False from unscale_: `raise ValueError("Attempting to unscale FP16
#   gradients.")`, a stored 2.x copy, pytorch @02f1c1a5, stored id 6723063455), so a working fp16 run keeps the copies
#   in fp32 (unsloth upcasts them for this reason, aud49e's reading of unsloth llama.py get_peft_model).


def _kbit_prepared(spec: WorkloadSpec) -> bool:
    return spec.task == "qlora" and spec.weight_quantization in ("nf4", "int8")


def saved_module_optimizer_bytes(spec: WorkloadSpec) -> float:
    """Optimizer state a copied-module parameter. A torch optimizer stepping the model's parameters (HF Trainer /
    Accelerate under autocast, zero_stage 0) keeps its states in each parameter's dtype (torch/optim/adamw.py:
    `state["exp_avg"] = torch.zeros_like(p, memory_format=torch.preserve_format)`), no master copy: a 16-bit copy
    has 16-bit AdamW states whatever master_weights_fp32 says of the fp32 adapters. Under ZeRO (zero_stage >= 1)
    with master_weights_fp32, DeepSpeed's mixed-precision optimizer keeps an fp32 master and fp32 states of every
    trainable 16-bit parameter (deepspeed runtime/zero/stage_1_and_2.py: single_partition_of_fp32_groups,
    `.clone().float().detach()`), as for a full fine-tune."""
    param_bytes = saved_module_bytes(spec)
    master = spec.master_weights_fp32 and spec.parallelism.zero_stage >= 1
    return _optimizer_state_bytes(spec, param_bytes, master)


def adamw_step_temporary_states(spec: WorkloadSpec) -> float:
    """State-sized tensors torch AdamW allocates at the step on zero_stage 0, each one state over the stepped
    parameters, alive together until the update; the one count memory uses (the freed-gradient peak and
    lora.modules_to_save's peak). Read in the PyPI wheels of torch/optim/adamw.py:
    - 2.0.1 (sha256 25aa43ca..., macosx arm64; the Python is the same on every platform) _multi_tensor_adamw lines
      564-568: `exp_avg_sq_sqrt = torch._foreach_sqrt(device_exp_avg_sqs)`, `torch._foreach_div_(...)`,
      `denom = torch._foreach_add(exp_avg_sq_sqrt, eps)`, `torch._foreach_addcdiv_(..., denom, step_size)`: two,
      out of place (1.13.1's lines 418-420 the same, under foreach=True);
    - 2.1.0 (sha256 3cd1dedf...) lines 599-603: `torch._foreach_add_(exp_avg_sq_sqrt, eps)` in place, then
      `_foreach_addcdiv_(..., exp_avg_sq_sqrt, step_size)`: one;
    - fused (`_fused_adamw`, 2.0.1 / 2.1.0): one `torch._fused_adamw_` kernel over the lists in place: none.
    Before 2.0 torch's default is the for-loop (1.13.1 adamw.py line 209 `foreach = False`), whose temporaries are
    one parameter's at a time, not whole states: none here, adamw_for_loop_temporary_params counts them (fix50o).
    0 for the other optimizers (not opened)."""
    # fused and DeepSpeed's FusedAdam step in place
    if spec.optimizer != "adamw" or spec.optimizer_impl != "foreach" or adamw_steps_for_loop(spec):
        return 0.0
    release = spec.torch_release
    return 2.0 if release is not None and release < (2, 1) else 1.0


# Tensors of one parameter's size torch < 2.0's for-loop AdamW holds at once, at most (fix50o; aud50o case 6). torch
# 1.13.1 torch/optim/adamw.py (PyPI wheel, sha256 0122806b...) _single_tensor_adamw line 316
# `denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)`: sqrt() allocates one tensor, the division a second
# while the first is alive; `.add_` and `param.addcdiv_` are in place; and the previous parameter's `denom` stays
# bound until the assignment, so the loop peaks at 2 x this parameter + the previous one: at most 3 x the largest.
FOR_LOOP_ADAMW_TEMPORARY_TENSORS = 3.0


def adamw_steps_for_loop(spec: WorkloadSpec) -> bool:
    """torch's default AdamW before 2.0 is the per-parameter for-loop (1.13.1 adamw.py line 209 `foreach = False`):
    optimizer_impl foreach (the unstated default) on a stated torch_version below 2.0."""
    release = spec.torch_release
    return (
        spec.optimizer == "adamw"
        and spec.optimizer_impl == "foreach"
        and release is not None
        and release < (2, 0)
    )


def largest_trainable_tensor_params(spec: WorkloadSpec) -> float:
    """Elements of the largest tensor the optimizer steps: a LoRA adapter matrix (rank x the wider of hidden and
    intermediate) under adapters, else the larger of the vocab x hidden table and one hidden x intermediate linear
    (HF checkpoints keep each linear its own tensor)."""
    model = spec.model
    wide = max(model.hidden_size, model.intermediate_size)
    if spec.uses_adapters:
        return float(spec.lora.rank * wide) if spec.lora is not None else 0.0
    return float(max(model.vocab_size * model.hidden_size, model.hidden_size * model.intermediate_size))


def adamw_for_loop_temporary_params(spec: WorkloadSpec) -> float:
    """Elements of the for-loop AdamW's step temporaries (FOR_LOOP_ADAMW_TEMPORARY_TENSORS x the largest trainable
    tensor); 0 where the step is not the for-loop. Each element is one second-moment state's width."""
    if not adamw_steps_for_loop(spec):
        return 0.0
    return FOR_LOOP_ADAMW_TEMPORARY_TENSORS * largest_trainable_tensor_params(spec)


def saved_module_peak_bytes(spec: WorkloadSpec) -> tuple[float, float]:
    """lora.modules_to_save's transient buffers on one rank holding every copy, beyond the static weights, gradients
    and states, as (bytes beside the activations, bytes once the activations are freed); (0, 0) without copies.
    Beside: from the second micro-batch on, the output copy's fresh weight gradient (V x d, the copy's dtype) lives
    beside its `.grad` until AccumulateGrad adds it in place, at the start of the backward. Freed: the embedding
    backward, the backward's last op, writes its zero-filled dense V x d gradient (embedding_dense_backward_cuda,
    `at::zeros({num_weights, stride})`, aud49e's reading) beside `.grad` the same way; and the optimizer step's
    adamw_step_temporary_states state-sized tensors over every copy (torch AdamW's states are in the copy's dtype on
    zero_stage 0: saved_module_optimizer_bytes). The memory model charges the larger of the two."""
    copies = saved_module_params(spec)
    if not copies or spec.lora is None:
        return 0.0, 0.0
    table = copies / len(spec.lora.modules_to_save)
    element = saved_module_bytes(spec)
    accumulates = spec.gradient_accumulation_steps >= 2
    beside = table * element if accumulates and "output" in spec.lora.modules_to_save else 0.0
    embedding = table * element if accumulates and "embeddings" in spec.lora.modules_to_save else 0.0
    step = adamw_step_temporary_states(spec) * copies * element
    if adamw_steps_for_loop(spec):  # the for-loop's temporaries are the largest copy's: one table
        step = FOR_LOOP_ADAMW_TEMPORARY_TENSORS * table * element
    return beside, max(embedding, step)


def adapter_params(spec: WorkloadSpec) -> float:
    if spec.model.image_arch is not None:
        return image_model.lora_params(spec)  # the denoiser's/ViT's adapters (checkpoints, spot restarts)
    if not spec.uses_adapters or spec.lora is None or spec.model.is_image:
        return 0.0
    return float(counts.lora_params(spec.model, spec.lora))


def adapter_bytes(spec: WorkloadSpec) -> float:
    """PEFT keeps adapters in fp32 under mixed precision; pure-bf16 recipes (torchtune) keep bf16."""
    return 4.0 if spec.master_weights_fp32 else compute_bytes(spec)


def trainable_params(spec: WorkloadSpec) -> float:
    """Every trained parameter: the adapters and lora.modules_to_save's copies, or the whole model."""
    if not spec.is_training:
        return 0.0
    return adapter_params(spec) + saved_module_params(spec) if spec.uses_adapters else spec.model.params


def _param_bytes(spec: WorkloadSpec) -> float:
    return adapter_bytes(spec) if spec.uses_adapters else compute_bytes(spec)


def optimizer_bytes_per_param(spec: WorkloadSpec) -> float:
    """Optimizer state per trainable parameter (the adapters' under LoRA), including the fp32 master copy when one
    is kept."""
    return _optimizer_state_bytes(spec, _param_bytes(spec), spec.master_weights_fp32)


def _mean_over_trainable(spec: WorkloadSpec, adapter_value: float, saved_value: float) -> float:
    """A per-parameter figure averaged over the trained parameters, the adapters' and modules_to_save's copies'
    weighted by their counts (the two sum exactly: gradients, optimizer states and their traffic)."""
    saved = saved_module_params(spec)
    if not spec.uses_adapters or not saved:
        return adapter_value
    adapters = adapter_params(spec)
    return (adapters * adapter_value + saved * saved_value) / (adapters + saved)


def _optimizer_state_bytes(spec: WorkloadSpec, param_bytes: float, master_weights_fp32: bool) -> float:
    master = 4.0 if master_weights_fp32 and param_bytes < 4.0 else 0.0
    state = 4.0 if (master_weights_fp32 or param_bytes >= 4.0) else param_bytes
    if spec.optimizer == "adamw":
        states = 2 * state
    elif spec.optimizer in ("adamw_8bit", "paged_adamw_8bit"):
        states = 2 * 1.0  # bitsandbytes blockwise 8-bit m and v (absmax per 2048 values is negligible)
    elif spec.optimizer == "sgd":
        states = state  # momentum buffer
    else:  # adafactor: factored second moment, rows + columns of each matrix
        states = 4.0 * 2 / max(spec.model.hidden_size, 1)
    return master + states


def _mlp_intermediate(model: ModelSpec) -> float:
    """Intermediate width a token passes through (routed + shared experts for MoE)."""
    if model.is_moe:
        return float(model.moe_intermediate_size * (model.experts_per_token + model.shared_experts))
    return float(model.intermediate_size)


def activation_scale(spec) -> float:
    """Saved activations are in the compute dtype: fp32 training keeps 4-byte tensors where Korthikanti's
    counts assume 2 (fp8 recipes keep bf16 activations, except the linears' saved inputs:
    fp8_linear_input_scale). Dropout masks stay 1 byte either way."""
    return 2.0 if spec.precision == "fp32" else 1.0


def fp8_linear_input_scale(spec) -> float:
    """The saved input of a trained linear layer against a 16-bit one: under fp8 training Transformer
    Engine keeps the fp8 cast it fed the GEMM, 1 byte an element (assumptions.FP8_SAVED_LINEAR_INPUT);
    adapters (LoRA/QLoRA) run their own 16-bit matmuls on the frozen linears' inputs, so they keep 16 bits,
    and so does torchao float8, which saves the high-precision input and casts it again in backward
    (pytorch/ao @50865d5c7 torchao/float8/float8_linear.py, matmul_with_hp_or_float8_args.forward:
    'ctx.save_for_backward(input_hp, weight_hp_t)')."""
    torchao = spec.fp8_recipe == "torchao"
    if spec.precision != "fp8" or not spec.is_training or spec.uses_adapters or torchao:
        return 1.0
    return FP8_SAVED_LINEAR_INPUT.value / 2.0


def split_notes(spec: WorkloadSpec) -> list[str]:
    """The stated virtual-pipeline, context- and expert-parallel degrees, in words (memory.py's terms)."""
    par, notes = spec.parallelism, []
    if par.virtual_pipeline > 1:
        p, v = par.pipeline_parallel, par.virtual_pipeline
        notes.append(
            f"interleaved pipeline, {v} chunks a stage: bubble (p - 1) / ({v} m); the first stage keeps "
            f"{1 + (p - 1) / (p * v):.3f}x the activations"
        )
    split = stage_split(par, spec.model.num_layers) if spec.model.image_arch is None else None
    if split is not None:
        notes.append(
            f"uneven pipeline split, layers a stage {split.layers[0]} (first, with the embedding), "
            f"{max(split.layers[1:-1], default=split.layers[0])} (middle), {split.layers[-1]} (last, with the "
            "output head): memory of the heaviest stage, every micro-batch at the slowest stage's pace"
        )
    if par.activation_offload_layers:
        notes.append(
            f"activation offload: the saved activations of {par.activation_offload_layers} of the "
            f"{spec.model.num_layers} layers wait for backward in host memory (host RAM); the copies are not "
            "costed in time"
        )
    if par.context_parallel > 1:
        cp, tokens = par.context_parallel, spec.memory_seq_len  # the tokens memory is sized at
        notes.append(f"context parallel {cp}: each GPU keeps {tokens // cp:,} of the {tokens:,} tokens")
    if par.expert_parallel > 1 and spec.model.is_moe:
        experts, ep = spec.model.num_experts, par.expert_parallel
        notes.append(
            f"expert parallel {ep}: each GPU keeps {experts // ep} of the {experts} routed experts a layer"
        )
    return notes


QKV_LINEARS = frozenset({"q_proj", "k_proj", "v_proj", "qkv_fused"})
GATE_UP_LINEARS = frozenset({"gate_proj", "up_proj"})


def trained_linears(spec: WorkloadSpec) -> frozenset[str] | None:
    """Block linears whose input backward needs for a weight gradient; None means every one (full training).

    Under LoRA/QLoRA the base weights are frozen and only the adapted linears' inputs feed a weight
    gradient (the adapter's A matrix reads the same input)."""
    if not spec.uses_adapters:
        return None
    return frozenset(spec.lora.targets) if spec.lora is not None else frozenset()


def sliding_window_notes(spec: WorkloadSpec) -> list[str]:
    """Where a model's sliding window decides the answer (a context longer than the window), that it is taken
    from the model's config and that the stack must honour it: Hugging Face transformers' flash-attention 2
    path does, torchtune's mistral_7b builder does not (full causal attention, more FLOPs and K/V)."""
    model = spec.model
    if not model.sliding_window or not model.sliding_window_layers:
        return []
    context = spec.memory_seq_len if spec.is_training else spec.inference.context_len  # the longest batch
    if context <= model.sliding_window:
        return []
    return [
        f"attention windowed to the last {model.sliding_window:,} tokens on {model.sliding_window_layers} of "
        f"{model.num_layers} layers (the model's config: sliding_window), assumed honoured by the stack "
        "(Hugging Face flash-attention 2 does; torchtune's builder does not: state model.sliding_window 0 for "
        "full causal attention)"
    ]


def memory_assumptions(spec: WorkloadSpec) -> list[str]:
    """The weight-storage and saved-activation choices behind a language model's breakdown, in words."""
    if spec.model.image_arch is not None or spec.model.is_image_tier or not spec.is_training:
        return []
    notes = []
    if spec.memory_seq_len > spec.seq_len:
        notes.append(
            f"samples of unequal length: activations, loss and logits sized at the longest batch, max_seq_len "
            f"{spec.memory_seq_len:,} tokens; speed and hours at seq_len {spec.seq_len:,}"
        )
    if spec.fp8_weights:
        notes.append("block-linear weights stored in fp8 (1 byte); embeddings, LM head and norms 16-bit")
    elif spec.precision == "fp8":
        notes.append(
            "fp8 compute on bf16 weights (fp8 copies transient; fp8_weights: true stores them in fp8)"
        )
    if fp8_linear_input_scale(spec) < 1.0:
        notes.append(
            "fp8 training: the q/k/v, MLP and down-projection inputs kept for backward are 1-byte fp8 casts "
            "(Transformer Engine); norms, attention and the MLP activation keep 16 bits"
        )
    notes.extend(split_notes(spec))
    recomputed = [name for name in spec.recompute_modules if name != "core_attn"]
    if recomputed:
        notes.append(
            f"selective recomputation of {', '.join(recomputed)} (Megatron-Core --recompute-modules): their "
            "outputs are rebuilt in backward, not kept"
        )
    if spec.gradient_checkpointing == "selective_op":
        saved = ", ".join(name for name, _, _ in op_level_saved_matmuls(spec.model))
        again = ", ".join(name for name, _, _ in op_level_recomputed_matmuls(spec.model))
        notes.append(
            f"op-level selective checkpointing (torchtitan): a layer keeps its input, the outputs of {saved} "
            f"and of attention; {again} and the element-wise ops run again in backward"
        )
    if spec.fused_swiglu:
        notes.append("fused SwiGLU: keeps gate and up only and recomputes SiLU in backward")
    if spec.fp32_norm_inputs:
        notes.append("eager norms: each keeps its fp32 upcast for backward, 4 bytes an element")
    notes.extend(_loss_notes(spec))
    trained = trained_linears(spec)
    if trained is not None:
        dropped = [
            words
            for words, frozen in (
                ("the q/k/v input", not trained & QKV_LINEARS),
                ("the MLP input", not trained & GATE_UP_LINEARS),
                ("the down_proj input", "down_proj" not in trained),
            )
            if frozen
        ]
        if dropped:
            notes.append(f"frozen linears without adapters keep no input for backward: {', '.join(dropped)}")
    return notes


def layer_activation_bytes_per_token(
    model: ModelSpec,
    seq_len: int,
    attention_scores: bool,
    scale: float = 1.0,
    trained: frozenset[str] | None = None,
    linear_input_scale: float = 1.0,
    recompute_modules: tuple[str, ...] = (),
    fused_swiglu: bool = False,
    fp32_norm_inputs: bool = False,
) -> float:
    """Bytes one layer keeps for backward, per token (Korthikanti et al. 2022), for 16-bit activations
    times `scale` (2 for fp32); 1-byte dropout masks are not scaled.

    With dropout, MHA and a 4h GeLU MLP this is exactly 34h + 5as in 16 bits. SwiGLU keeps gate, up, SiLU
    output and their product (8I); GQA shrinks the saved K and V to the KV width.

    `trained` (see `trained_linears`) drops the inputs that only a frozen linear's weight gradient reads:
    backward through a frozen linear needs dY·W alone. Transformer Engine's `_Linear.forward` saves its
    input only `if weight.requires_grad` (transformer_engine/pytorch/module/linear.py, TE 1.x);
    bitsandbytes' MatMul4Bit keeps no input at all (`ctx.tensors = (None, B)`); PyTorch's generated
    MmBackward saves the input only `if (grad_fn->should_compute_output(1))`, the weight's gradient. What
    other ops read stays: the norms' inputs, Q/K/V and the attention output (flash attention's backward
    reads Q, K, V and O), SwiGLU's gate, up and SiLU output (the eager `silu(g) * u` saves all three). An
    adapter's A matrix reads its linear's input, so an adapted linear keeps it.

    `linear_input_scale` (fp8_linear_input_scale) scales the inputs the q/k/v, gate/up and down
    projections keep for their weight gradients: fp8 training keeps them as 1-byte casts.

    `recompute_modules` and `fused_swiglu` drop the terms `layer_activation_terms` names for them;
    `fp32_norm_inputs` keeps the norms' inputs in fp32 (layer_activation_terms).
    """
    terms = layer_activation_terms(model, scale, trained, linear_input_scale, fp32_norm_inputs)
    kept = sum(terms.values()) - recomputed_bytes(model, terms, recompute_modules, fused_swiglu)
    if attention_scores:
        # softmax output (2 bytes) and, with dropout, its 1-byte mask and 2-byte dropped output: 5as / 2as
        heads_seq = model.num_attention_heads * counts.cached_tokens(model, seq_len)  # a window keeps w keys
        kept += (scale * 4.0 + 1.0) * heads_seq if model.dropout else scale * 2.0 * heads_seq
    return kept


def layer_activation_terms(
    model: ModelSpec,
    scale: float = 1.0,
    trained: frozenset[str] | None = None,
    linear_input_scale: float = 1.0,
    fp32_norm_inputs: bool = False,
) -> dict[str, float]:
    """The tensors one layer keeps for backward, bytes per token, by what produced them (no score matrix).

    Multi-head latent attention (model.is_mla, DeepSeek-V3) keeps, as Megatron-Core's MLA runs it
    (megatron/core/transformer/multi_latent_attention.py): the down-projections' input (the norm output),
    the q and kv latents (q_lora_rank, kv_lora_rank) and the shared RoPE key (qk_rope_head_dim) that the
    latent norms read, the up-projections' inputs (the normed latents), Q and K (head_dim = nope + rope a
    head), V (v_head_dim) and the attention output (v_head_dim a head, the output projection's input).

    `fp32_norm_inputs`: each norm keeps the fp32 upcast of its input, 4 bytes an element, where Korthikanti's
    count (and Megatron-Core's fused norms) keep the 16-bit input: the eager RMSNorm of torchtune
    (torchtune/modules/rms_norm.py @a95c6b93: `x_fp32 = x.float()`, read again by `pow(2)` and by the
    multiply with the rsqrt) and of Hugging Face transformers (LlamaRMSNorm: `hidden_states.to(torch.float32)`).
    Measured with torchtune's modules at a95c6b93 (bf16, saved_tensors_hooks, Llama 2 7B widths, LoRA on
    q/v): a layer past the first keeps 139,944 bytes a token, the 16-bit count 123,392 plus 2 x 2 x 4,096
    (a LoRA model's first norm, reading the frozen embedding, keeps nothing: 123,556)."""
    h = float(model.hidden_size)
    heads = float(model.num_attention_heads)
    inter = _mlp_intermediate(model)
    mask = 1.0 if model.dropout else 0.0
    linear = 2 * linear_input_scale  # bytes per element of a linear's saved input, before `scale`
    qkv_trained = trained is None or bool(trained & QKV_LINEARS)
    terms = {"attention_input": scale * linear * h if qkv_trained else 0.0}
    if model.is_mla:
        latents = float(model.q_lora_rank + model.kv_lora_rank)
        terms["mla_latents"] = scale * 2 * (latents + model.qk_rope_head_dim)
        terms["mla_up_inputs"] = scale * linear * latents if qkv_trained else 0.0
        terms["qkv"] = scale * 2 * heads * (2 * model.head_dim + model.v_head_dim)
        terms["attention_output"] = scale * 2 * heads * model.v_head_dim
    else:
        q_out = heads * model.head_dim
        terms["qkv"] = scale * (2 * q_out + 4 * float(model.num_key_value_heads * model.head_dim))
        terms["attention_output"] = scale * 2 * q_out
    terms["dropout_masks"] = 2 * mask * h
    terms["mlp_input"] = scale * linear * h if trained is None or trained & GATE_UP_LINEARS else 0.0
    # gated: gate and up (4I), SiLU output (2I), and their product (the down projection's input)
    # plain: the GeLU input (2I) and its output (the down projection's input)
    terms["gate_up"] = scale * (4 * inter if model.gated_mlp else 2 * inter)
    terms["silu_output"] = scale * 2 * inter if model.gated_mlp else 0.0
    terms["down_input"] = scale * linear * inter if trained is None or "down_proj" in trained else 0.0
    terms["norm_inputs"] = (max(scale, 2.0) if fp32_norm_inputs else scale) * 4 * h
    return terms


def block_matmuls(model: ModelSpec) -> list[tuple[str, float, float]]:
    """A dense block's aten.mm calls in torchtitan's order, (name, input width, output width): the
    Attention.forward `self.wq(x), self.wk(x), self.wv(x)` then wo, and FeedForward.forward
    `self.w2(F.silu(self.w1(x)) * self.w3(x))`, w1 before w3 (pytorch/torchtitan @9dec370
    torchtitan/models/llama/model.py); a plain MLP runs its two linears in order."""
    h, heads, kv = float(model.hidden_size), model.num_attention_heads, model.num_key_value_heads
    q_out, kv_out, inter = float(heads * model.head_dim), float(kv * model.head_dim), _mlp_intermediate(model)
    attention = [("wq", h, q_out), ("wk", h, kv_out), ("wv", h, kv_out), ("wo", q_out, h)]
    if model.gated_mlp:
        return attention + [("w1", h, inter), ("w3", h, inter), ("w2", inter, h)]
    return attention + [("fc1", h, inter), ("fc2", inter, h)]


def op_level_saved_matmuls(model: ModelSpec) -> list[tuple[str, float, float]]:
    """The matmuls torchtitan's op-level policy keeps: its `_custom_policy` counts aten.mm calls in a block
    and saves each one 'except every second mm', i.e. the 1st, 3rd, 5th, ... (the count restarts each
    block: `selective_checkpointing_context_fn` makes a new counter per checkpointed call)."""
    return block_matmuls(model)[0::2]


def op_level_recomputed_matmuls(model: ModelSpec) -> list[tuple[str, float, float]]:
    """The 2nd, 4th, ... matmuls, which backward runs again (Llama: wk, wo and w3)."""
    return block_matmuls(model)[1::2]


def op_level_saved_bytes_per_token(model: ModelSpec, scale: float = 1.0) -> float:
    """Bytes a layer keeps per token under torchtitan's op-level selective checkpointing, without tensor
    parallelism (memory.py adds what tensor parallelism changes).

    pytorch/torchtitan @9dec370 torchtitan/parallelisms/parallelize_llama.py `_save_list`: aten.mm, the
    flash and memory-efficient SDPA ops, reduce_scatter_tensor, abs and max; every other op of the block
    is recomputed in backward from the block's input, which the checkpoint keeps. So a layer keeps its
    input (h), the saved matmuls' outputs (Llama: wq, wv, w1, w2) and the SDPA outputs (the attention
    output, 16-bit, and its fp32 log-sum-exp, one a head); norms, RoPE, the repeated K/V, SiLU and the
    residual sums are rebuilt. torchao float8 linears count as aten.mm (spec._check_op_level_checkpointing)
    and keep their 16-bit outputs; max, listed for float8 scaling, saves scalars. The list at 9dec370 also
    names abs, whose outputs (each linear input's |x|) are not counted: torchtitan's Dec 2024 table measured
    its Float8 + compile run at 76.8 GiB beside 77.0 without Float8, and its list at e7c0cae (June 2025) no
    longer names abs."""
    heads = float(model.num_attention_heads)
    saved = sum(out for _, _, out in op_level_saved_matmuls(model))
    attention = 2.0 * heads * model.head_dim * scale + 4.0 * heads
    return 2.0 * scale * (model.hidden_size + saved) + attention


def selective_modules(spec: WorkloadSpec) -> tuple[str, ...]:
    """The modules selective recomputation drops; none once a spec recomputes whole layers (the verdict's
    fallback to full checkpointing keeps the spec's list, which full recomputation then supersedes)."""
    return spec.recompute_modules if spec.gradient_checkpointing == "selective" else ()


def _routed_share(model: ModelSpec) -> float:
    """Routed experts' share of the MLP width a token passes through (the rest is the shared experts')."""
    if not model.is_moe:
        return 0.0
    return model.experts_per_token / (model.experts_per_token + model.shared_experts)


def recomputed_bytes(
    model: ModelSpec, terms: dict[str, float], modules: tuple[str, ...], fused_swiglu: bool
) -> float:
    """Bytes a token and layer no longer keeps: what each Megatron-Core module of --recompute-modules
    discards (transformer_config.py's recompute_modules: "layernorm" the input_layernorm and
    pre_mlp_layernorm outputs, i.e. the attention's and MLP's linear inputs; "mla_up_proj" the MLA up
    projection and RoPE outputs (Q, K, V) and the up-projections' own inputs, its checkpoint keeping the
    latents; "moe_act" the routed experts' activation output, the down-projection input; "mlp" (a dense
    model's) / "moe" the whole MLP, keeping its 16-bit input; "shared_experts" the shared experts' part of it), and a fused
    SwiGLU the SiLU output (Megatron's SwiGLUFunction saves only its input,
    megatron/core/fusions/fused_bias_swiglu.py). core_attn drops the score matrix (attention_scores)."""
    routed, dropped = _routed_share(model), set()
    mlp_terms = ("gate_up", "silu_output", "down_input")
    removed = 0.0
    if "layernorm" in modules:
        dropped |= {"attention_input", "mlp_input"}
    if "mla_up_proj" in modules:
        dropped |= {"mla_up_inputs", "qkv"}
    # "mlp" recomputes only the dense MLP layers (Megatron-Core transformer_layer.py: "if not
    # isinstance(self.mlp, MoELayer): self.recompute_mlp = True"); an MoE model's few dense layers are not
    # the averaged layer's terms, so its saving is left out (the estimate keeps their bytes).
    if ("mlp" in modules and not model.is_moe) or "moe" in modules:
        dropped |= {*mlp_terms, "mlp_input"}
        removed -= terms["norm_inputs"] / 2  # the checkpoint keeps its 16-bit input (one norm's width)
    elif "shared_experts" in modules:
        removed += (1 - routed) * sum(terms[name] for name in mlp_terms)
        routed_terms = {"silu_output": fused_swiglu, "down_input": "moe_act" in modules}
        removed += routed * sum(terms[name] for name, gone in routed_terms.items() if gone)
    else:
        if fused_swiglu:
            dropped.add("silu_output")
        if "moe_act" in modules:
            removed += routed * terms["down_input"]
    return removed + sum(terms.get(name, 0.0) for name in dropped)


def _text_encoder_quantized_bytes(spec: WorkloadSpec) -> float | None:
    """Bytes per quantized text-encoder weight where the encoders can be quantized (the format's bits / 8
    under weight_quantization, the precision's bytes in a low-bit generation; in training, 8 bits whatever
    the denoiser's format: ai-toolkit's qtype_te defaults to "qfloat8", config_modules.py @016777ac, at
    int8's bytes); None where neither applies."""
    if spec.is_training:
        return QUANT_BITS["int8"] / 8 if spec.image.quantize_text_encoders else None
    if spec.weight_quantization != "none":
        return image_quantized_bytes(spec)
    if image_model.is_low_bit_generation(spec):
        return DTYPE_BYTES[spec.precision]
    return None


def logits_bytes_per_token(spec: WorkloadSpec, tensor_parallel: bool = False) -> float:
    """The loss's peak over the output layer, per token, by how the spec's stack computes cross entropy.

    fp32_softmax (default): Megatron-Core's vocab_parallel_cross_entropy upcasts the logits (`.float()`),
    turns them into the softmax in place and saves only that for an in-place backward: 4 bytes x V
    (assumptions.LOGITS_BYTES).

    huggingface: transformers 4.46-4.48 keep the lm_head's logits in the compute dtype (the model output) and
    ForCausalLMLoss runs `logits = logits.float()`, `shift_logits = logits[..., :-1, :].contiguous()`, then
    `nn.functional.cross_entropy`, whose log_softmax output (fp32) is saved for backward; at that moment
    2 + 4 + 4 + 4 = 14 bytes x V are alive in 16-bit training, 4 + 0 + 4 + 4 = 12 in fp32 (`.float()` of an
    fp32 tensor is the tensor itself). Other versions peak at 12 (4.44: fp32 logits, the shifted copy and the
    log-probs; 4.49+: the log-probs, their gradient and the logits' gradient in backward).

    torchtitan: its loss_fn `F.cross_entropy(pred.flatten(0, 1).float(), labels.flatten(0, 1))`, eager, with
    `del pred` before `loss.backward()` (pytorch/torchtitan @9dec370 train.py). Forward holds the 16-bit
    logits, their fp32 copy and the fp32 log-softmax (2 + 4 + 4 = 10 bytes x V); the copy and the logits
    are then freed (log_softmax's backward reads its output, the matmul's its input). Backward peaks at
    log_softmax's: nll_loss's fp32 gradient, the saved log-softmax and the fp32 input gradient, 12 bytes
    x V (as much in fp32 training). Under tensor parallelism torchtitan runs it in PyTorch's loss_parallel
    on vocabulary-sharded logits (V / tp a rank; train.py `enable_loss_parallel=not
    disable_loss_parallel`), whose handlers count differently (pytorch/pytorch
    torch/distributed/tensor/parallel/loss.py, stored version 02eef6b8): `_log_softmax` holds the fp32 input,
    `shifted = x - x_max` and `torch.exp(shifted)` beside the 16-bit logits in forward (2 + 4 + 4 + 4 = 14
    bytes x V), and the fused `_nll_loss_and_log_softmax_backward` returns `(grad_input + torch.exp(x)) *
    grad_output` with `grad_input = torch.zeros_like(x)`: the saved log-softmax, grad_input, exp(x) and
    their sum, 16 bytes x V, before the split by tp.

    compiled: the same loss under torch.compile, the fp32 upcast inside the compiled function (torchtitan
    @e7c0cae torchtitan/components/loss.py: `loss_fn = torch.compile(loss_fn)` with training.compile, since
    pytorch/torchtitan#1033, where the compiled loss 'saved more memory than chunked loss ever could'). The
    fused kernels keep no vocabulary-sized intermediate: 'memory-wise it's ~0 for just fwd and ~d_input for
    fw+bw' (PyTorch compiler developer StrongerXi, Dao-AILab/quack#48, 2025-10-07), i.e. the 16-bit logits,
    which the compiled backward reads, and their 16-bit gradient: 2 x 2 bytes x V (2 x 4 in fp32).

    fused: a fused linear + cross entropy (Liger's LigerFusedLinearCrossEntropy, Unsloth's kernels) computes
    the logits a chunk of tokens at a time with the gradient in forward: per token it keeps the input's
    gradient (2h in 16 bits) and at most 4h of chunk logits (Liger: chunk_size = next_power_of_2(BT /
    cdiv(V, h)) rows of V), 6h in 16 bits, no vocabulary-sized term.

    torchtune: its recipes as published with the README's memory table (pytorch/torchtune @a95c6b93
    recipes/lora_finetune_single_device.py and lora_finetune_distributed.py, train()): the model returns
    `self.output(h).float()` (torchtune/modules/transformer.py), the loop runs `logits = logits[..., :-1,
    :].contiguous()` and `nn.CrossEntropyLoss` on `logits.transpose(1, 2)`, and `logits` stays alive
    through `loss.backward()`. At log-softmax's backward: the held fp32 shifted logits, the saved fp32
    log-softmax, nll_loss's fp32 gradient and the fp32 input gradient, 16 bytes x V (as much in fp32
    training). Measured with torchtune's own modules at that commit (bf16, CPU allocator trace, Llama 2 7B
    widths, 2 layers): the step's peak above the weights is the blocks' saved tensors plus the final norm's
    fp32 input plus 16 x 32,000 bytes a token of the S - 1 shifted tokens, to 0.01%.

    shifted_autocast: the model's own loss on its compute-dtype logits with no upcast, under torch autocast. Qwen-1's
    remote code (QWenLMHeadModel.forward in the Hugging Face repos' modeling_qwen.py, e.g. the Qwen-72B copy
    mapengAdam/qianwen-72B@3334bfe3): `lm_logits = self.lm_head(hidden_states)` (bf16: the model runs
    `self.lm_head.bfloat16()` under config.bf16), `shift_logits = lm_logits[..., :-1, :].contiguous()`,
    `CrossEntropyLoss()(shift_logits.view(...), ...)`. HF Trainer's --bf16 / --fp16 without DeepSpeed runs the
    forward under torch autocast, whose CUDA float32 list holds cross_entropy, log_softmax and nll_loss (PyTorch
    2.0 docs, amp.rst "CUDA Ops that can autocast to float32"): log_softmax casts its input to a fp32 copy, which
    its backward does not keep (it reads its output). Forward peak: the 16-bit logits, the 16-bit shifted copy, the
    fp32 cast and the fp32 log-softmax, 2 + 2 + 4 + 4 = 12 bytes x V; backward peak at log-softmax's: the saved
    fp32 log-softmax, nll_loss's fp32 gradient and the fp32 input gradient, 12 bytes x V (the logits and the
    shifted copy are freed with the model output before backward: the Trainer returns only the loss; where
    accelerate's mixed precision wraps the forward, its convert_outputs_to_fp32 adds a fp32 copy of the logits after
    the shifted copy is gone, 2 + 4 + 4 = 10 bytes x V, below the peak). In fp32
    (no autocast): 4 + 4 + 0 + 4 = 12 as well. Without autocast in 16 bits (DeepSpeed's own bf16 / fp16 engine)
    the log-softmax would run in 16 bits: not this value.

    shifted_16bit: the same model loss without autocast (DeepSpeed's own bf16 / fp16 engine: the Qwen README's
    finetune_lora_ds.sh and finetune_qlora_single_gpu.sh, QwenLM/Qwen @e8e15962; accelerate does not wrap the
    forward under DeepSpeed), so log_softmax and nll_loss run in the logits' dtype (fix50q, aud50q item 5).
    Forward: the 16-bit logits, the 16-bit shifted copy and the 16-bit log-softmax, 2 + 2 + 2 = 6 bytes x V;
    backward at log-softmax's: the saved log-softmax, nll_loss's gradient and the input gradient, 6 bytes x V.
    3 x the compute dtype's bytes x V (12 in fp32, as shifted_autocast).
    """
    vocab = float(spec.model.vocab_size)
    if spec.cross_entropy == "torchtitan":
        return (16.0 if tensor_parallel else 12.0) * vocab
    if spec.cross_entropy == "compiled":
        return 2.0 * compute_bytes(spec) * vocab
    if spec.cross_entropy == "huggingface":
        logits = 4.0 if spec.precision == "fp32" else 2.0
        upcast = 4.0 if logits < 4.0 else 0.0
        return (logits + upcast + 4.0 + 4.0) * vocab
    if spec.cross_entropy == "fused":
        return 3.0 * compute_bytes(spec) * spec.model.hidden_size
    if spec.cross_entropy == "torchtune":
        return 16.0 * vocab
    if spec.cross_entropy == "shifted_autocast":
        return 12.0 * vocab
    if spec.cross_entropy == "shifted_16bit":
        return 3.0 * compute_bytes(spec) * vocab
    return LOGITS_BYTES.value * vocab


def _loss_notes(spec: WorkloadSpec) -> list[str]:
    """The stated cross entropy's per-token bytes, in words (the default adds none)."""
    vocab = spec.model.vocab_size
    if spec.cross_entropy == "huggingface":
        per_vocab = logits_bytes_per_token(spec) / vocab
        return [
            "Hugging Face causal-LM loss: the logits, their fp32 upcast, the shifted fp32 copy and the fp32 "
            f"log-softmax, {per_vocab:g} bytes x {vocab:,} vocabulary a token"
        ]
    if spec.cross_entropy == "torchtitan":
        return [
            "torchtitan's loss: F.cross_entropy of the fp32-upcast logits, peaking in backward at the fp32 "
            f"log-softmax, its incoming gradient and its input gradient, 12 bytes x {vocab:,} vocabulary a token "
            "(16 bytes x the vocabulary over tp a rank under tensor parallelism: PyTorch's loss_parallel)"
        ]
    if spec.cross_entropy == "compiled":
        return [
            "compiled cross entropy (torch.compile): the logits and their gradient only, "
            f"{logits_bytes_per_token(spec) / vocab:g} bytes x {vocab:,} vocabulary a token"
        ]
    if spec.cross_entropy == "torchtune":
        return [
            "torchtune's recipe loss: fp32 logits, the shifted fp32 copy the loop holds through backward, and "
            f"eager cross entropy, peaking at log-softmax's backward at 16 bytes x {vocab:,} vocabulary a token"
        ]
    if spec.cross_entropy == "shifted_autocast":
        return [
            "the model's own loss under torch autocast: 16-bit logits, their shifted 16-bit copy, autocast's fp32 "
            f"copy and the fp32 log-softmax, 12 bytes x {vocab:,} vocabulary a token (as much at log-softmax's "
            "backward)"
        ]
    if spec.cross_entropy == "shifted_16bit":
        return [
            "the model's own loss without autocast (DeepSpeed's 16-bit engine): 16-bit logits, their shifted "
            f"16-bit copy and a 16-bit log-softmax, {logits_bytes_per_token(spec) / vocab:g} bytes x {vocab:,} "
            "vocabulary a token (as much at log-softmax's backward)"
        ]
    if spec.cross_entropy == "fused":
        return [
            f"fused linear + cross entropy: no {vocab:,}-wide logits, "
            f"{logits_bytes_per_token(spec):,.0f} bytes a token"
        ]
    return []


def _image_state_bytes(spec: WorkloadSpec, arch: ImageArchitecture) -> StateBytes:
    """An image preset: the network's weights (quantizable), the frozen text encoders and VAE in 16 bits,
    adapters in their own dtype; the per-token activation fields are unused (image_model.py sizes them)."""
    slug = arch.slug
    network = image_model.network_params(slug)
    dense = compute_bytes(spec)
    if spec.weight_quantization == "none":
        network_bytes = network * dense
    else:
        network_bytes = network * image_quantized_bytes(spec)
    adapters = image_model.lora_params(spec)
    # The frozen parts take the run's one dtype: a pipeline (inference) loads every component in its
    # torch_dtype (diffusers from_pretrained), and training scripts cast them to weight_dtype, the 16-bit dtype
    # of mixed precision and fp32 without it (diffusers' train_*.py: weight_dtype = torch.float32 unless
    # --mixed_precision fp16/bf16; kohya-ss sd-scripts' prepare_dtype and sdxl_train.py's
    # text_encoder.to(weight_dtype), vae_dtype = weight_dtype unless --no_half_vae). compute_bytes is 2 for
    # 16-bit and fp8 training, 4 for fp32.
    frozen_bytes = image_model.frozen_parts_bytes_per_param(spec, dense)
    weight_bytes = network_bytes + image_model.frozen_parts_params(spec) * frozen_bytes
    quantized_bytes = _text_encoder_quantized_bytes(spec)
    if quantized_bytes is not None:
        weight_bytes -= image_model.text_encoder_quantization_saving_bytes(
            spec, frozen_bytes, quantized_bytes
        )
    if spec.is_training and not spec.uses_adapters and spec.image.train_text_encoder:
        weight_bytes += (image_model.trainable_params(spec) - network) * dense
    weight_bytes += adapters * adapter_bytes(spec)
    autoencoder = image_model.vae(spec)
    if not spec.is_training and autoencoder and image_model.vae_decode_bytes_per_element(spec) > frozen_bytes:
        weight_bytes += autoencoder["params_published"] * (4.0 - frozen_bytes)  # the upcast VAE (SDXL, fp16)
    cost = image_model.network_cost(slug, image_model.resolution(spec))
    largest = network_bytes / max(cost.blocks, 1)
    return StateBytes(
        weight_bytes=weight_bytes,
        trainable_params=image_model.trainable_params(spec),
        grad_bytes_per_param=_param_bytes(spec),
        optimizer_bytes_per_param=optimizer_bytes_per_param(spec),
        largest_layer_bytes=largest,
        layer_bytes_per_token=0.0,
        layer_bytes_per_token_no_scores=0.0,
        layer_input_bytes_per_token=0.0,
        logits_bytes_per_token=0.0,
        logits_bytes_per_token_tensor_parallel=0.0,
    )


@lru_cache(maxsize=4096)
def state_bytes(spec: WorkloadSpec) -> StateBytes:
    model = spec.model
    if model.image_arch is not None:
        return _image_state_bytes(spec, model.image_arch)
    weight_bytes = weights_bytes(spec)
    # the model's own weights a parameter (modules_to_save's copies are no layer's: largest_layer_bytes)
    own_bytes = weight_bytes - saved_module_params(spec) * saved_module_bytes(spec)
    bytes_per_weight = own_bytes / model.params if model.params else 0.0
    # layer_activation_bytes_per_token's spec-derived inputs, the same with and without the attention scores
    layer_inputs = (
        activation_scale(spec),
        trained_linears(spec),
        fp8_linear_input_scale(spec),
        selective_modules(spec),
        spec.fused_swiglu,
        spec.fp32_norm_inputs,
    )
    return StateBytes(
        weight_bytes=weight_bytes,
        trainable_params=trainable_params(spec),
        grad_bytes_per_param=_mean_over_trainable(spec, _param_bytes(spec), saved_module_bytes(spec)),
        optimizer_bytes_per_param=_mean_over_trainable(
            spec, optimizer_bytes_per_param(spec), saved_module_optimizer_bytes(spec)
        ),
        largest_layer_bytes=counts.largest_layer_params(model, spec.parallelism.expert_parallel)
        * bytes_per_weight,
        layer_bytes_per_token=layer_activation_bytes_per_token(model, spec.seq_len, True, *layer_inputs),
        layer_bytes_per_token_no_scores=layer_activation_bytes_per_token(
            model, spec.seq_len, False, *layer_inputs
        ),
        layer_input_bytes_per_token=2.0 * model.hidden_size * activation_scale(spec),
        logits_bytes_per_token=logits_bytes_per_token(spec),
        logits_bytes_per_token_tensor_parallel=logits_bytes_per_token(spec, tensor_parallel=True),
    )
