"""The workload spec: frozen dataclasses and the parser that validates a YAML/JSON dict into them.

Parsing collects every offending field, each named by its path in the spec (`model.hidden_size`,
`parallelism.zero_stage`), and raises them together as one `WorkloadSpecError`, so a user fixes a
file in one pass. Field names follow DESIGN.md's workload spec; defaults are documented in
docs/workload-spec.md.
"""

from __future__ import annotations

import math
import re
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import Any, TypeVar

from gpuledger.errors import InputError
from procurement.sizing import image_model
from procurement.sizing.distillation import (
    DISTILLATION_KEYS,
    DISTILLATION_MODES,
    MAX_TOP_K,
    TEACHER_PRECISIONS,
    DistillationSpec,
)
from procurement.sizing.image_presets import ImageArchitecture, image_architecture
from procurement.sizing.image_spec import (
    DATA_PIPELINES,
    FASTERTRANSFORMER_VERSIONS,
    GUIDANCE,
    IMAGE_ENGINES,
    IMAGE_LORA_MODULES,
    IMAGE_LORA_TARGETS,
    IMAGE_RUNTIMES,
    MEMORY_FORMATS,
    TF32_BY_DEFAULT_ENGINES,
    ImageSpec,
)
from procurement.sizing.model_spec import LoraSpec, ModelSpec
from procurement.sizing.params import count_params
from procurement.sizing.pipeline_split import SPLIT_COUNTS, SPLIT_FLAGS, split_problem, split_stated
from procurement.sizing.presets import (
    ImageTier,
    image_tier,
    int4_release_intermediate_size,
    known_preset_names,
    llm_presets,
    slugify,
)
from procurement.sizing.serving_load import MAX_BATCHED_TOKENS_LIMITS, TRAFFICS

_Frozen = TypeVar("_Frozen", "ModelSpec", "InferenceSpec", "ImageSpec")  # the frozen parts a parse adjusts

TASKS = ("pretrain", "full_finetune", "lora", "qlora", "inference")
TRAINING_TASKS = ("pretrain", "full_finetune", "lora", "qlora")
PRECISIONS = ("fp32", "fp16", "bf16", "fp8", "fp4")
QUANTIZATIONS = ("none", "int8", "int4", "nf4")
OPTIMIZERS = ("adamw", "adamw_8bit", "paged_adamw_8bit", "sgd", "adafactor")
# selective_op: torchtitan's op-level selective activation checkpointing (activation_checkpoint mode
# 'selective', selective_ac_option 'op'): bytes_model.op_level_saved_bytes_per_token.
CHECKPOINTING = ("none", "selective", "selective_op", "full")
# Megatron-Core's --recompute-modules under --recompute-granularity selective (TransformerConfig.recompute_modules,
# NVIDIA/Megatron-LM megatron/core/transformer/transformer_config.py @d98e8a64); its default is core_attn.
RECOMPUTE_MODULES = ("core_attn", "layernorm", "mla_up_proj", "moe_act", "mlp", "moe", "shared_experts")
MOE_RECOMPUTE_MODULES = ("moe_act", "moe", "shared_experts")
OFFLOADS = ("none", "optimizer", "optimizer_and_params")
# How expert parallelism's token all-to-alls meet computation (assumptions.EXPERT_OVERLAP).
EXPERT_OVERLAPS = ("none", "partial", "dualpipe", "shared_experts")
# How the tokens reach their experts (assumptions.EXPERT_DISPATCH): one copy per routed expert, or DeepEP's
# one copy per destination node over the fabric, forwarded over NVLink, dispatched in FP8 under fp8; or
# NVIDIA's HybridEP backend of the same flex dispatcher, which sends as DeepEP does and also permutes and
# pads the tokens inside its dispatch and combine kernels (mfu.hopper_fp8_expert_seconds).
EXPERT_DISPATCHES = ("alltoall", "deepep", "hybridep")
# The dispatches of Megatron-Core's flex token dispatcher (--moe-token-dispatcher-type flex): one copy a rank.
FLEX_DISPATCHES = ("deepep", "hybridep")
# Which experts a token goes to (throughput.node_copy_share): the model's learned router (spread like random
# choices), or a benchmark's balanced fake gate that gives token i experts i k .. i k + k - 1 (mod E)
# (NVIDIA-NeMo/Automodel FakeBalancedGate, backend fake_balanced_gate: true).
EXPERT_ROUTINGS = ("learned", "balanced")
# How context parallelism's attention gets the other ranks' K/V (Megatron-Core's cp_comm_type): Transformer
# Engine's ring, overlapped with the attention steps, or an all-gather before attention, not overlapped
# (assumptions.CONTEXT_PARALLEL_RING_OVERLAP); or PyTorch's experimental ring as torchtitan runs it
# (assumptions.CONTEXT_PARALLEL_PYTORCH_RING), eager (pytorch) or traced into a torch.compile graph
# (pytorch_compiled: every collective waited on where it is issued, none hidden).
CONTEXT_PARALLEL_COMMS = ("p2p", "all_gather", "pytorch", "pytorch_compiled")
# Who runs tensor parallelism (dtensor_tp.py): Megatron-Core / Transformer Engine, activations [s, b, h] and
# tp_comm_overlap as userbuffers; or PyTorch DTensor as torchtitan runs it, activations [b, s, h] sharded on
# the sequence (a copy around each collective) and tp_comm_overlap as PyTorch's async TP.
TP_IMPLEMENTATIONS = ("megatron", "dtensor")
# When data parallelism syncs the gradients of an accumulated step (assumptions.GRADIENT_SYNC_LAST_MICRO_BATCH):
# overlapped, under communication_overlap_fraction of the whole step's compute (the default the validated
# runs fit); last_micro_batch, in the last micro-batch only (Megatron-Core's no_sync_func, PyTorch DDP no_sync).
GRADIENT_SYNCS = ("overlapped", "last_micro_batch")
KV_DTYPES = ("fp32", "fp16", "bf16", "fp8", "int8")
# Who runs fp8 training's linears: NVIDIA Transformer Engine (NeMo, Megatron; the fits of the 8-bit
# efficiency) or torchao float8 (torchtitan; mfu.torchao_float8_speedup).
FP8_RECIPES = ("transformer_engine", "torchao")
# inference.engine: the serving stack's decode loop (serving_host.py)
SERVING_ENGINES = ("compiled", "hf_eager", "vllm_v0")
# inference.quant_kernel: the kernel library that runs the quantized linears: unstated (a quantized linear costs
# the host what a BF16 one does; int4 read at int4_decode_bandwidth_efficiency), exllama (an hf_eager loop's
# AutoGPTQ / transformers' GPTQ exllama 4-bit kernel, at its measured single-stream step ratio to fp16: serving_host.py)
# or marlin (vLLM's gptq_marlin / awq_marlin 4-bit GEMM, compiled or vllm_v0 engines: int4 weights read at
# marlin_int4_decode_bandwidth_efficiency, throughput.DECODE_EFFICIENCY_BY_KERNEL) or fused_gemv (a runtime's own fused
# dequantize-GEMV 4-bit kernel in its own loop: calm gf4, MLC LLM q4f16, exllamav2, TinyChat / llm-awq, not
# TensorRT-LLM's weight-only GEMV or llama.cpp; compiled engine only: int4 weights read at
# fused_gemv_int4_decode_bandwidth_efficiency) or cuda_old (AutoGPTQ's 8-bit qlinear_cuda_old / qlinear_cuda in an
# hf_eager loop: 4 bare ops a quantized linear on the host, serving_host.CUDA_OLD_BARE_OPS)
QUANT_KERNELS = ("unstated", "exllama", "marlin", "fused_gemv", "cuda_old")
# inference.quant_format: the int4 checkpoint's format (bytes_model.int4_bits_per_weight, splits.mlp_split_unit):
# unstated (int4_bits_per_param, 4.25 bits, and 128-wide groups in the TP gate: the behaviour before the field),
# gptq / awq (4-bit weights, an fp16 scale and a packed 4-bit zero point per group of input channels: vLLM v0.6.3
# gptq.py / awq.py create_weights allocate qweight, qzeros and scales, 4 + (16 + 4) / group bits) or mxfp4 (OCP
# microscaling: E2M1 values, one E8M0 scale per 32, 4 + 8 / 32 bits: gpt-oss's routed experts only, the other
# linears 16-bit; refused on a dense model: bytes_model's MXFP4 note)
QUANT_FORMATS = ("unstated", "gptq", "awq", "mxfp4")
# inference.quant_group_size: the format's own (AutoGPTQ's and AutoAWQ's default group_size / q_group_size 128;
# MXFP4's block is fixed at 32 by the OCP MX spec); -1: one scale per output channel (GPTQ's group_size -1)
QUANT_FORMAT_GROUP_SIZES = {"gptq": 128, "awq": 128, "mxfp4": 32}
QUANT_GROUP_SIZE_LIMITS = (16, 1024)
# model.eager_layer: the decoder layer whose kernels an hf_eager loop issues (serving_host.EAGER_LAYER_KERNELS)
# (unstated: the preset's architecture, presets.PRESET_EAGER_LAYERS, else llama). Qwen-1 has three counts (fix47h):
# qwen1 (flash-attn with its optional fused rms_norm, 23), qwen1_unfused_norm (flash-attn 2 without csrc/layer_norm,
# 37), qwen1_no_flash (no flash-attn: eager norms and rotary, SDPA, 45)
EAGER_LAYERS = ("llama", "qwen1", "qwen1_unfused_norm", "qwen1_no_flash", "qwen2", "mistral")
# inference.attn_implementation: transformers' attn_implementation an hf_eager loop runs (serving_host.kv_cache_passes):
# unstated (3 passes over the KV cache, a floor), eager, sdpa or flash_attention_2; with model.eager_layer it says
# whether the code copies the cache per query head (repeat_kv) before attention
ATTN_IMPLEMENTATIONS = ("unstated", "eager", "sdpa", "flash_attention_2")
# inference.generate_harness: whose generate drives an hf_eager loop (serving_host.kernel_host_seconds): transformers
# (default: the model's own generate, plain transformers) or auto_gptq: the host AutoGPTQ's README llama-7b fp16 A100
# row measured, 31 us a kernel; cause not shown (a stated host-rate choice, fix47h; not AutoGPTQ's generate wrapper,
# which the same-host Qwen-1 Int / BF16 pairs contradict)
GENERATE_HARNESSES = ("transformers", "auto_gptq")
# inference.rotary_backend (fix51h): the code that rotates q and k in an hf_eager loop's Qwen-1 flash-attn layer
# (serving_host.ROTARY_BACKEND_KERNELS): unstated (the layer's own: flash-attn >= 2.1.2's Triton kernel in qwen1 /
# qwen1_unfused_norm, eager elsewhere), triton, cuda_ext (flash-attn 2.0-2.1.1, or a build with csrc/rotary) or
# eager (flash-attn v1 without its csrc builds: Qwen-1's own rotary). Layers whose rotary is fixed take only eager.
ROTARY_BACKENDS = ("unstated", "triton", "cuda_ext", "eager")
# inference.transformers_release (qwen2cnt): the transformers release whose modeling code an hf_eager loop runs, for
# the decoder layer's kernel count (serving_host.RELEASE_LAYER_KERNELS): unstated (serving_host.EAGER_LAYER_KERNELS,
# today's counts) or a release whose wheel was read, for the (model.eager_layer, inference.attn_implementation) pairs
# counted there (TRANSFORMERS_RELEASE_LAYERS); any other pair is refused, naming the field.
TRANSFORMERS_RELEASES = ("unstated", "4.32.0", "4.37.2", "4.38.2", "4.46.0")
TRANSFORMERS_RELEASE_LAYERS = frozenset(
    {
        ("llama", "4.32.0", "eager"),
        ("llama", "4.37.2", "sdpa"),
        ("qwen2", "4.38.2", "flash_attention_2"),
        ("qwen2", "4.46.0", "flash_attention_2"),
        ("mistral", "4.38.2", "flash_attention_2"),
        ("mistral", "4.46.0", "flash_attention_2"),
    }
)
# inference.expert_precision: the routed experts' weights and GEMMs apart from the model's precision (MoE models,
# task inference): model (default: the experts at spec.precision) or a 16-bit type, for a serving engine that keeps
# the experts 16-bit under an FP8 model (TensorRT-LLM v0.9.0's MoE plugin: moe.py weight_dtype = dtype, no FP8
# runner in mixtureOfExpertsPlugin.cpp; FP8 checkpoints that leave the experts in BF16). throughput.expert_split.
EXPERT_PRECISIONS = ("model", "bf16", "fp16")
# inference.decode_attention: how the serving engine's decode attention reads a grouped-KV cache
# (decode_attention.py): shared_kv (default: each KV head's cache read once for its query heads: TensorRT-LLM's
# XQA, FlashAttention / FlashInfer decode, vLLM's paged attention as priced so far) or per_query_head (TensorRT-LLM's
# masked MHA where XQA is not taken: group != 8 or head != 128 through v0.9, group 8 only on v0.5-v0.7 or with XQA
# off: a thread block a query head, each walking its KV head's whole cache;
# decoderMaskedMultiheadAttentionLaunch.h:187 / ...Template.h:1132-1133 at release/0.5.0 6b32b407).
DECODE_ATTENTIONS = ("shared_kv", "per_query_head")
# The software stack a training run is stated to run on (mfu.width_ceiling): other (unstated: the width ceiling
# fitted on MosaicML llm-foundry's MPT sweep), megatron (NeMo, Megatron-Core, Megatron-Bridge: Transformer
# Engine's fused kernels; its own 16-bit Hopper ceiling, assumptions.training_width_peak_hopper_megatron),
# maxtext and torchtitan (recorded; no published rows outside the outside tests' cases to fit a ceiling on,
# so sized as other).
# llm_c: karpathy/llm.c's C/CUDA GPT-2 trainer (train_gpt2.cu), its memory-bound passes counted from its kernels
# (mfu.llm_c_efficiency) instead of MPT's fitted width ceiling.
TRAINING_STACKS = ("other", "megatron", "maxtext", "torchtitan", "llm_c", "gpt_neox")
# How 16-bit training runs its ops (image_model.eager_score_training_bytes, eager attention's bytes a score element):
# autocast (torch.autocast / native AMP over fp32 weights, HF Trainer --fp16 / --bf16: softmax in fp32) or
# half_model (the whole model cast to 16 bits: apex amp opt_level O2, model.half(), Paddle's fused attention op
# in the AMP dtype, GPT-NeoX / Megatron fp16: softmax in 16 bits).
MIXED_PRECISION_STYLES = ("autocast", "half_model")
CHECKPOINT_MODES = ("auto", "sync", "async")  # host.checkpoint
# What the training loop's zero_grad does between steps: in_place zeroes the gradients and keeps them (torch < 2.0's
# Optimizer.zero_grad default; the engine's convention, gradients beside the activations); set_to_none frees them
# (torch >= 2.0's default), so with one micro-batch a step the next forward runs without them (memory.py).
ZERO_GRAD = ("in_place", "set_to_none")
# Which AdamW kernel steps the run: foreach (torch's default on CUDA since 2.0) or fused (`fused=True`, transformers'
# `optim="adamw_torch_fused"`), torch's own at every zero_stage (FSDP steps torch's AdamW on each shard; DeepSpeed
# without an optimizer block wraps the client's), or deepspeed_fused (ZeRO only: a DeepSpeed config's optimizer block,
# Adam / AdamW, which DeepSpeed builds as its FusedAdam; optimizer_step.DEEPSPEED_FUSED_ADAM_ACCESSES). With torch_version
# (the run's torch release; "current": 2.1 or later) it sets the step's state-sized temporaries
# (bytes_model.adamw_step_temporary_states).
OPTIMIZER_IMPLS = ("foreach", "fused", "deepspeed_fused")
# What torch prints (`torch.__version__`): a release, optionally a pre-release and a PEP 440 local label, e.g. PyPI's
# CUDA wheels '2.1.0+cu121' and NGC containers' '2.3.0a0+6ddf5cf85e' (aud50o); only the release numbers are compared
# (an NGC 2.3.0a0 build is cut from the 2.3 branch's code, so it is sized as 2.3).
TORCH_VERSION_PATTERN = re.compile(
    r"^(?P<release>\d+\.\d+(\.\d+)?)((a|b|rc)\d+)?(\.?(post|dev)\d+)?(\+[0-9a-z]+([._][0-9a-z]+)*)?$"
)
# How the training loss turns the output layer into a cross entropy (bytes_model.logits_bytes_per_token):
# Megatron-Core's fp32 softmax kept for an in-place backward, Hugging Face transformers' fp32 upcast and
# log-softmax of the whole logits, or a fused linear + cross entropy that never holds them (Liger, Unsloth).
# torchtitan: its eager loss_fn, F.cross_entropy(logits.float(), labels) with the logits freed before backward;
# compiled: the same loss under torch.compile (torchtitan compiles it with training.compile since April 2025).
# torchtune: its early LoRA/full recipes (pytorch/torchtune@a95c6b93), fp32 logits from the model, the shifted
# fp32 copy kept by the training loop through backward, eager nn.CrossEntropyLoss: 16 bytes x V at the backward.
# shifted_autocast: the model's own loss on its compute-dtype logits, no upcast (`lm_logits[..., :-1, :].contiguous()`,
# nn.CrossEntropyLoss: Qwen-1's modeling_qwen.py, and any model code that computes its loss so) under torch
# autocast (HF Trainer --bf16 / --fp16 without DeepSpeed), which runs log_softmax in fp32: 12 bytes x V.
# shifted_16bit: the same loss without autocast (DeepSpeed's own bf16 / fp16 engine), log_softmax in 16 bits: 6 bytes x V.
CROSS_ENTROPY = (
    "fp32_softmax",
    "huggingface",
    "torchtitan",
    "compiled",
    "fused",
    "torchtune",
    "shifted_autocast",
    "shifted_16bit",
)
# Training attention: engine, at the run's fitted efficiency; or a named kernel's published causal speed
# (attention_kernels.py): PyTorch SDPA's FlashAttention-2, Transformer Engine's cuDNN, FlashAttention-3.
ATTENTION_KERNELS = ("engine", "flash_attention_2", "cudnn", "flash_attention_3")
LORA_TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
FUSED_LORA_TARGETS = ("qkv_fused",)
# lora.implementation: eager HF PEFT modules (the default; a host floor a layer, lora_host.py), fused adapter
# kernels (NeMo / Megatron, unsloth) or torch.compile'd adapters.
LORA_IMPLEMENTATIONS = ("peft_eager", "fused", "compiled")
# lora.adapter_dtype: the adapters' dtype against the base's (lora_host.py): base (the default) or fp32 (fp32 adapters
# on a 16-bit base under torch autocast: PEFT's and autocast's casts an adapted linear; peft < 0.6, and peft >= 0.12
# whose get_peft_model(autocast_adapter_dtype=True) default upcasts 16-bit adapters to fp32). Language models only.
LORA_ADAPTER_DTYPES = ("base", "fp32")
# lora.modules_to_save: the module names PEFT / axolotl users write (PEFT matches them by suffix) for the input
# embedding table and the output layer, read as the product's two kinds (bytes_model.saved_module_params).
# Llama / Mistral embed_tokens and lm_head, GPT-2 / Qwen-1 wte, BLOOM word_embeddings, torchtune output.
LORA_SAVED_MODULE_ALIASES = {
    "embeddings": "embeddings",
    "embed_tokens": "embeddings",
    "wte": "embeddings",
    "word_embeddings": "embeddings",
    "output": "output",
    "lm_head": "output",
}
LORA_KEYS = frozenset(
    {"rank", "targets", "alpha", "dropout", "implementation", "adapter_dtype", "modules_to_save"}
)  # every key `lora` accepts (the API's schema documents exactly these: tests/procurement/test_spec_schemas.py)
# quantization: what a QLoRA stack's bitsandbytes NF4 path holds in memory (bnb_memory.py). bnb_version: the
# bitsandbytes release ("current": 0.43.2 or later), lm_head_4bit: the output layer quantized too (LitGPT / Lightning),
# bnb_storage_dtype: the dtype the 4-bit weights were quantized from (compute, or fp16: Lightning's plugin,
# transformers' default load dtype), nf4_double_quant: the block scales quantized again (QLoRA's double quantization),
# prepare_kbit: peft's prepare_model_for_kbit_training left the non-quantized parameters fp32 (bytes_model).
QUANTIZATION_KEYS = frozenset(
    {"bnb_version", "lm_head_4bit", "bnb_storage_dtype", "nf4_double_quant", "prepare_kbit"}
)
BNB_STORAGE_DTYPES = ("compute", "fp16")
BNB_VERSION_PATTERN = re.compile(r"^\d+\.\d+(\.\d+)?$")
LORA_SAVED_MODULES_LIMIT = 8  # list entries; two kinds exist, a longer list is a typo
# Names other frameworks use for the same linears (torchtune: output_proj, mlp).
LORA_TARGET_ALIASES = {
    "output_proj": ("o_proj",),
    "mlp": ("gate_proj", "up_proj", "down_proj"),
    "w1": ("gate_proj",),
    "w2": ("down_proj",),
    "w3": ("up_proj",),
    # Fused attention projections: one linear d -> q + k + v (BLOOM, Falcon, GPT-NeoX `query_key_value`;
    # GPT-2 `c_attn`; MPT `Wqkv`). PEFT adapts the fused linear as one: r x (d + q_out + 2 kv_out).
    "query_key_value": ("qkv_fused",),
    "c_attn": ("qkv_fused",),
    "wqkv": ("qkv_fused",),
    "qkv_proj": ("qkv_fused",),  # Phi-3
    # Their output and MLP linears (Falcon/NeoX `dense*`, MPT `out_proj`/`up_proj`, GPT-2 `c_fc`).
    "dense": ("o_proj",),
    "out_proj": ("o_proj",),
    "dense_h_to_4h": ("up_proj",),
    "dense_4h_to_h": ("down_proj",),
    "c_fc": ("up_proj",),
    # Qwen-1 (QWenBlock, modeling_qwen.py; read at alibaba/MNN @7cad2ee8
    # transformers/llm/export/llm_models/Qwen-1_8B/modeling_qwen.py, the HF Qwen/Qwen-1_8B file): attn.c_attn the
    # fused q/k/v with a bias, attn.c_proj the output, mlp.w1 / mlp.w2 the two d -> ffn/2 projections (w1(x) x
    # silu(w2(x))), mlp.c_proj the down. QwenLM/Qwen @00dceebb finetune.py LoraArguments targets c_attn, c_proj,
    # w1, w2: PEFT matches names by suffix, so a bare c_proj adapts both the output and the down projection
    # (GPT-2's c_proj is the same pair). w1 / w2 read as Qwen-1's: QWEN1_MLP_ALIASES.
    "c_proj": ("o_proj", "down_proj"),
    "attn.c_proj": ("o_proj",),
    "mlp.c_proj": ("down_proj",),
    "attn.c_attn": ("qkv_fused",),
    "fc1": ("up_proj",),
    "fc2": ("down_proj",),
    "all-linear": LORA_TARGETS,
    "all_linear": LORA_TARGETS,
    "all linear": LORA_TARGETS,
}
# Qwen-1's MLP names w1 and w2 (both d -> ffn/2; w2 goes through silu, the gate) where Meta / Mixtral name the
# gate w1 and the down w2: a target list that names c_attn or c_proj (Qwen-1's attention) reads w1 and w2 as
# Qwen-1's. Their shapes are the product's up_proj and gate_proj (params.linear_shapes).
QWEN1_NAMES = frozenset({"c_attn", "c_proj", "attn.c_attn", "attn.c_proj", "mlp.c_proj"})
QWEN1_MLP_ALIASES = {
    "w1": ("up_proj",),
    "w2": ("gate_proj",),
    "mlp.w1": ("up_proj",),
    "mlp.w2": ("gate_proj",),
}


@dataclass(frozen=True)
class FieldError:
    path: str
    message: str

    def as_dict(self) -> dict[str, str]:
        return {"path": self.path, "message": self.message}


class WorkloadSpecError(InputError):
    """Every problem found in a workload spec, each with its field path."""

    def __init__(self, errors: list[FieldError]):
        self.errors = errors
        problems = [(error.path, error.message) for error in errors]
        first = errors[0] if errors else FieldError("", "")
        text = "; ".join(f"{path}: {message}" for path, message in problems)
        super().__init__(first.path, first.message, problems=problems, text=text)


@dataclass(frozen=True)
class ParallelismSpec:
    gpus: int = 1
    zero_stage: int = 0
    tensor_parallel: int = 1
    pipeline_parallel: int = 1
    offload: str = "none"
    # Megatron-style model chunks per pipeline stage (interleaved 1F1B), sequence split over GPUs (context
    # parallelism: GPUs = tp x pp x cp x dp) and routed experts sharded over GPUs (expert parallelism,
    # inside the data- and context-parallel ranks of a stage). Training only; docs/workload-spec.md.
    virtual_pipeline: int = 1
    context_parallel: int = 1
    expert_parallel: int = 1
    # Megatron-Core's --expert-tensor-parallel-size: None states nothing (expert TP = tp, or 1 where EP only
    # fits across the tp ranks: expert_layout.py); 1 lays whole experts on each GPU, the EP group over
    # consecutive ranks (tp included), as NVIDIA's DeepSeek-V3 H100 recipe does beside TP 2.
    expert_tensor_parallel: int | None = None
    # An uneven pipeline split (pipeline_split.py, Megatron-LM's names): the embedding / the loss counted
    # as a layer of the split, or the transformer layers of the first / last stage (None: an even share).
    account_for_embedding: bool = False
    account_for_loss: bool = False
    pipeline_layers_first: int | None = None
    pipeline_layers_last: int | None = None
    # Transformer layers whose saved activations wait for backward in host memory (Megatron-Core's
    # --cpu-offloading-num-layers; Megatron-Bridge's GB200 recipes over NVLink-C2C); 0: none.
    activation_offload_layers: int = 0
    # none: the all-to-alls on the critical path (Megatron-Core's default); partial: Megatron-Core's
    # --overlap-moe-expert-parallel-comm (1F1B A2A overlap); dualpipe: DeepSeek-V3's schedule.
    expert_overlap: str = "none"
    expert_dispatch: str = "alltoall"
    expert_routing: str = "learned"  # EXPERT_ROUTINGS
    # Megatron-Core's --tp-comm-overlap (Transformer Engine userbuffers): the tensor-parallel collectives run
    # under the linear layers' GEMMs; off by default, as in Megatron-Core (assumptions.TP_COMM_OVERLAP_EXPOSED).
    tp_comm_overlap: bool = False
    tp_implementation: str = "megatron"  # TP_IMPLEMENTATIONS
    context_parallel_comm: str = "p2p"
    # FSDP2's fully_shard(reshard_after_forward=...): false keeps a stage's parameters gathered between forward
    # and backward (torchtitan under pipeline parallelism); fsdp_reshard.py. True is FSDP2's default.
    reshard_after_forward: bool = True
    # DeepSpeed ZeRO-1/2's zero_optimization.reduce_bucket_size (elements) and overlap_comm: the gradient staging
    # buffers its optimizer allocates at every backward (memory._deepspeed_ipg_buffer_bytes). 0: not counted.
    reduce_bucket_size: int = 0
    overlap_comm: bool = False
    # DeepSpeed's zero_optimization.use_multi_rank_bucket_allreduce (from v0.12.4, default true): ZeRO-1/2 all-reduce
    # each gradient bucket; false: the per-rank reduce of v0.12.3 and earlier (deepspeed_reduce.py). Only with
    # reduce_bucket_size.
    multi_rank_bucket_allreduce: bool = True
    # DeepSpeed's offload_optimizer / offload_param pin_memory (its default false): true prices the offload by its
    # pinned copies and the host's optimizer step (pinned_offload.py) in place of the flat offload_step_overhead.
    offload_pin_memory: bool = False
    # PHYSICAL host cores a rank's offloaded CPU optimizer step runs on (DeepSpeedCPUAdam's OpenMP threads: the
    # launcher's --bind_cores_to_rank share of physical cores, or OMP_NUM_THREADS); 0: not stated (host.vcpus_per_gpu
    # / 2, the offer's vCPUs per GPU / 2, else the assumed 6). Only with parallelism.offload (pinned_offload.py).
    offload_cpu_cores_per_rank: int = 0
    # GRADIENT_SYNCS: where an accumulated step's data-parallel traffic can hide (DDP / ZeRO-1/2 training)
    gradient_sync: str = "overlapped"
    # The fields the document states (a contract the ranking honours, issue 26); ``gpus: auto`` states
    # none of the GPU count and lets the ranking explore every count.
    stated: frozenset[str] = frozenset()
    gpus_auto: bool = False

    @property
    def data_parallel(self) -> int:
        model_parallel = self.tensor_parallel * self.pipeline_parallel * self.context_parallel
        return max(1, self.gpus // model_parallel)


@dataclass(frozen=True)
class InferenceSpec:
    concurrency: int = 1
    context_len: int = 4096
    output_tokens: int = 256
    kv_cache_dtype: str = "bf16"
    # The serving stack's decode loop (serving_host.ENGINES): "compiled" (vLLM, TensorRT-LLM, SGLang: CUDA graphs;
    # a step is its GPU work), "hf_eager" (transformers generate in eager PyTorch: a host floor a token) or "vllm_v0"
    # (vLLM's V0 engine loop, 0.6.x: CUDA graphs plus the loop's serial host time a step, vllm_v0_step_host_s).
    engine: str = "compiled"
    # The library that runs the quantized linears (QUANT_KERNELS: exllama in an hf_eager loop, marlin in vLLM)
    quant_kernel: str = "unstated"
    # The int4 checkpoint's format and its group size (QUANT_FORMATS; None: the format's own,
    # QUANT_FORMAT_GROUP_SIZES; -1 per output channel)
    quant_format: str = "unstated"
    quant_group_size: int | None = None
    # transformers' attn_implementation of an hf_eager loop (ATTN_IMPLEMENTATIONS, serving_host.kv_cache_passes)
    attn_implementation: str = "unstated"
    # whose generate drives an hf_eager loop (GENERATE_HARNESSES, serving_host.kernel_host_seconds)
    generate_harness: str = "transformers"
    # the code that rotates q and k in a Qwen-1 flash-attn layer (ROTARY_BACKENDS, serving_host.ROTARY_BACKEND_KERNELS)
    rotary_backend: str = "unstated"
    # the transformers release whose decoder layer an hf_eager loop runs (TRANSFORMERS_RELEASES, serving_host)
    transformers_release: str = "unstated"
    # The routed experts' precision where the serving engine keeps it apart from the model's (EXPERT_PRECISIONS):
    # "model" (the experts at spec.precision) or a 16-bit type (bytes and GEMM rate; throughput.expert_split)
    expert_precision: str = "model"
    # How decode attention reads a grouped-KV cache (DECODE_ATTENTIONS): "shared_kv" (each KV head read once) or
    # "per_query_head" (pre-XQA TensorRT-LLM masked MHA: every query head walks its KV head's cache; decode_attention.py)
    decode_attention: str = "shared_kv"
    # How the streams are loaded (serving_load.TRAFFICS): "streams" (concurrency streams decoding: the time per
    # output token is their decode step alone, the first token a lone prefill) or "closed_loop" (genai-perf
    # --concurrency: a finished request replaced at once, its prompt riding the others' decode steps)
    traffic: str = "streams"
    # The scheduler's token budget a step under closed_loop (vLLM max_num_batched_tokens, TensorRT-LLM max_num_tokens;
    # serving_load.step_mix); None: the framework's default for the card (serving_load.default_max_batched_tokens)
    max_batched_tokens: int | None = None
    # Serving demand and latency targets (docs/workload-spec.md); None: not stated. Replicas come from the
    # demand (requests/s x output_tokens, or generated tokens/s); without one, one replica.
    requests_per_second: float | None = None
    tokens_per_second: float | None = None
    ttft_ms: float | None = None  # time to first token target
    tpot_ms: float | None = None  # time per output token target (per stream)

    @property
    def demand_tokens_per_second(self) -> float | None:
        """Generated tokens/s the deployment must sustain, or None when no demand is stated."""
        if self.tokens_per_second is not None:
            return self.tokens_per_second
        if self.requests_per_second is not None:
            return self.requests_per_second * self.output_tokens
        return None

    @property
    def prompt_tokens(self) -> int:
        return max(1, self.context_len - self.output_tokens)


@dataclass(frozen=True)
class QuantizationSpec:
    """The QLoRA stack's bitsandbytes NF4 path, as far as it sets memory (bnb_memory.py)."""

    bnb_version: str = "current"  # "current" (0.43.2 or later) or the release, e.g. "0.41.1"
    lm_head_4bit: bool = False  # the output layer quantized too (Lightning's plugin replaces every nn.Linear)
    # "compute" or "fp16"; None (unstated): fp16 with a 4-bit head (only Lightning quantizes it, from torch.half) or
    # a release before 0.43.0 (Params4bit.cuda's .half()), else compute (bnb_memory.stores_fp16)
    bnb_storage_dtype: str | None = None
    nf4_double_quant: bool = True  # False: one fp32 absmax per 64 weights (LitGPT bnb.nf4), 4.5 bits a weight
    # True: peft's prepare_model_for_kbit_training cast the embeddings, head and norms to fp32 and nothing cast them
    # back (bytes_model.non_quantized_bytes); False (default): they stay 16-bit, today's count
    prepare_kbit: bool = False

    @property
    def release(self) -> tuple[int, ...] | None:
        """The stated release as numbers (None: current)."""
        if self.bnb_version == "current":
            return None
        return tuple(int(part) for part in self.bnb_version.split("."))


@dataclass(frozen=True)
class HostSpec:
    dataset_gb: float | None = None
    checkpoints_kept: int = 2
    vcpus_per_gpu: float | None = None  # the host the run has (None: the guides' rule, host.vcpus_per_gpu)
    # How the trainer saves (costing/spot_timing.py): "sync" waits for the write, "async" only for the copy
    # to host memory; "auto" is async for full training on several GPUs (ranking/spot_inputs.py).
    checkpoint: str = "auto"


@dataclass(frozen=True)
class WorkloadSpec:
    name: str
    task: str
    model: ModelSpec
    precision: str = "bf16"
    weight_quantization: str = "none"
    optimizer: str = "adamw"
    master_weights_fp32: bool = True
    micro_batch_size: int = 1
    seq_len: int = 2048
    # Training on samples of unequal length, each micro-batch padded to its longest: the longest sequence a
    # micro-batch holds. Memory's activation, loss and logits terms are sized at it (the peak is the longest
    # batch's); every speed and hours figure stays at seq_len (the mean). None: seq_len.
    max_seq_len: int | None = None
    gradient_checkpointing: str = "none"
    # The submodules selective recomputation drops (Megatron-Core's names, RECOMPUTE_MODULES); () unless
    # gradient_checkpointing is selective, where the default is Megatron's ("core_attn",).
    recompute_modules: tuple[str, ...] = ()
    # A SwiGLU that keeps only its input for backward and recomputes SiLU (Megatron-Core's
    # --bias-swiglu-fusion, Megatron-Bridge's bias_activation_fusion); false: the eager silu(g) * u.
    fused_swiglu: bool = False
    # Norms that save their fp32 upcast for backward (eager RMSNorm: torchtune, Hugging Face transformers),
    # 4 bytes an element where a fused norm keeps its 16-bit input (bytes_model.layer_activation_terms).
    fp32_norm_inputs: bool = False
    flash_attention: bool = True
    # Training on packed sequences: the tokens of the samples packed into each seq_len sequence, each sample
    # attending only within itself (NeMo's packed_sequence_specs); attention FLOPs are counted over this
    # length (throughput.attention_context_tokens). None: one document a sequence.
    packed_sample_tokens: int | None = None
    lora: LoraSpec | None = None
    # Knowledge distillation from a teacher (distillation.py): None, no teacher
    distillation: DistillationSpec | None = None
    parallelism: ParallelismSpec = field(default_factory=ParallelismSpec)
    training_tokens: float | None = None
    inference: InferenceSpec = field(default_factory=InferenceSpec)
    headroom: float = 0.2
    gradient_accumulation_steps: int = 1
    # The run's global batch in sequences a step (global_batch_size, or global_batch_tokens / seq_len) where stated;
    # gradient_accumulation_steps is then derived from it (global / (micro_batch x data-parallel ranks), Megatron's
    # num_microbatches). None: not stated (gradient_accumulation_steps as given).
    global_batch_size: int | None = None
    optimizer_in_backward: bool = False
    zero_grad: str = "in_place"  # ZERO_GRAD: whether the loop frees its gradients between steps
    optimizer_impl: str = "foreach"  # OPTIMIZER_IMPLS: the AdamW kernel that steps the run
    torch_version: str = "current"  # "current" (2.1 or later) or the run's release, e.g. "2.0.1"
    fp8_weights: bool = False  # fp8 training stores block linears in fp8 (NeMo/Megatron fp8_params)
    cross_entropy: str = "fp32_softmax"  # the loss's vocabulary-sized tensors (CROSS_ENTROPY)
    attention_kernel: str = "engine"  # ATTENTION_KERNELS
    fp8_recipe: str = "transformer_engine"  # FP8_RECIPES: the library that runs the fp8 linears
    fp8_pad_inner_dim: bool = False  # torchao Float8LinearConfig(pad_inner_dim=...): copies mm operands
    training_stack: str = "other"  # TRAINING_STACKS: the framework a training run runs on
    mixed_precision: str = "autocast"  # MIXED_PRECISION_STYLES: how 16-bit training runs its ops
    mfu: float | None = None
    image_resolution_px: int | None = None
    host: HostSpec = field(default_factory=HostSpec)
    image: ImageSpec = field(default_factory=ImageSpec)
    quantization: QuantizationSpec = field(default_factory=QuantizationSpec)

    @property
    def is_training(self) -> bool:
        return self.task in TRAINING_TASKS

    @property
    def uses_adapters(self) -> bool:
        return self.task in ("lora", "qlora")

    @property
    def torch_release(self) -> tuple[int, ...] | None:
        """The stated torch release as numbers (None: current)."""
        if self.torch_version == "current":
            return None
        match = TORCH_VERSION_PATTERN.match(self.torch_version)
        assert match is not None  # the parser accepted it against the same pattern
        release = match["release"]
        return tuple(int(part) for part in release.split("."))

    @property
    def memory_seq_len(self) -> int:
        """The sequence length memory is sized at: max_seq_len where stated, else seq_len."""
        return max(self.seq_len, self.max_seq_len or self.seq_len)


_TOP_KEYS = {
    "name",
    "description",
    "task",
    "model",
    "precision",
    "weight_quantization",
    "optimizer",
    "master_weights_fp32",
    "micro_batch_size",
    "seq_len",
    "max_seq_len",
    "gradient_checkpointing",
    "recompute_modules",
    "fused_swiglu",
    "fp32_norm_inputs",
    "flash_attention",
    "packed_sample_tokens",
    "lora",
    "distillation",
    "parallelism",
    "training_tokens",
    "inference",
    "headroom",
    "gradient_accumulation_steps",
    "global_batch_size",
    "global_batch_tokens",
    "optimizer_in_backward",
    "zero_grad",
    "optimizer_impl",
    "torch_version",
    "fp8_weights",
    "cross_entropy",
    "attention_kernel",
    "fp8_recipe",
    "fp8_pad_inner_dim",
    "training_stack",
    "mixed_precision",
    "mfu",
    "image",
    "host",
    "quantization",
}
_MODEL_INT_FIELDS = (
    "num_layers",
    "hidden_size",
    "num_attention_heads",
    "num_key_value_heads",
    "intermediate_size",
    "vocab_size",
    "head_dim",
    "num_experts",
    "experts_per_token",
    "moe_intermediate_size",
    "kv_elems_per_token_per_layer",
)
_MODEL_BOOL_FIELDS = ("tie_word_embeddings", "gated_mlp", "attention_qkv_bias", "dropout")
# multi-head latent attention (DeepSeek-V2/V3, Kimi K2 config.json names); qk_nope_head_dim is read only to set
# head_dim = qk_nope + qk_rope (params.mla_attention_params_per_layer)
_MODEL_LATENT_FIELDS = ("q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim")
_MODEL_COUNT_FIELDS: tuple[str, ...] = (  # >= 0
    "shared_experts",
    "dense_layers",
    "expert_groups",
    "expert_groups_per_token",
    "sliding_window",
    "sliding_window_layers",
    "mtp_layers",
    *_MODEL_LATENT_FIELDS,
)
_MODEL_KEYS = {"preset", "name", "params", "params_active", "eager_layer", *_MODEL_COUNT_FIELDS}
_MODEL_KEYS |= set(_MODEL_INT_FIELDS) | set(_MODEL_BOOL_FIELDS)
_REQUIRED_SHAPE = (
    "num_layers",
    "hidden_size",
    "num_attention_heads",
    "intermediate_size",
    "vocab_size",
)


# No quantity a workload spec holds (tokens, parameters, hours, requests) is physically anywhere near
# this; 1e308 would overflow the float engines into inf/NaN. Fields with a tighter bound pass their own.
MAX_SPEC_NUMBER = 1e15


class _Reader:
    """Reads typed values out of nested dicts, recording a FieldError for each bad one."""

    def __init__(self) -> None:
        self.errors: list[FieldError] = []

    def error(self, path: str, message: str) -> None:
        self.errors.append(FieldError(path, message))

    def section(self, data: dict, key: str, path: str) -> dict:
        value = data.get(key)
        if value is None:
            return {}
        if not isinstance(value, dict):
            self.error(path, "must be a mapping")
            return {}
        return value

    def unknown_keys(self, data: dict, allowed: AbstractSet[str], prefix: str) -> None:
        for key in sorted(set(data) - allowed, key=str):
            self.error(f"{prefix}{key}", "unknown field")

    def number(self, data: dict, key: str, path: str, default, *, minimum=None, exclusive=True, maximum=None):
        if data.get(key) is None:
            return default
        raw = data[key]
        value = _as_number(raw)
        if value is None:
            self.error(path, f"must be a number, got {repr(raw)[:40]}")
            return default
        maximum = MAX_SPEC_NUMBER if maximum is None else maximum
        if minimum is not None and (value <= minimum if exclusive else value < minimum):
            self.error(path, f"must be {'>' if exclusive else '>='} {minimum:g}, got {value:g}")
            return default
        if maximum is not None and value > maximum:
            self.error(path, f"must be <= {maximum:g}, got {value:g}")
            return default
        return value

    def integer(self, data: dict, key: str, path: str, default, *, minimum: int = 1):
        value = self.number(data, key, path, None, minimum=minimum, exclusive=False)
        if value is None:
            return default
        if value != int(value):
            self.error(path, f"must be a whole number, got {value:g}")
            return default
        return int(value)

    def boolean(self, data: dict, key: str, path: str, default: bool) -> bool:
        value = data.get(key)
        if value is None:
            return default
        if not isinstance(value, bool):
            self.error(path, f"must be true or false, got {value!r}")
            return default
        return value

    def optional_boolean(self, data: dict, key: str, path: str) -> bool | None:
        """A flag whose absence means 'follow another field' (None), not false."""
        if data.get(key) is None:
            return None
        return self.boolean(data, key, path, False)

    def choice(self, data: dict, key: str, path: str, default: str, choices: tuple[str, ...]) -> str:
        value = data.get(key)
        if value is None:
            return default
        text = str(value).strip().lower()
        if text not in choices:
            self.error(path, f"unknown value {value!r}; expected one of {', '.join(choices)}")
            return default
        return text


def _as_number(raw) -> float | None:
    """Numbers and numeric strings (YAML 1.1 reads `8.03e9` as a string)."""
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int | float):
        value = float(raw)
    elif isinstance(raw, str):
        try:
            value = float(raw.replace("_", ""))
        except ValueError:
            return None
    else:
        return None
    return value if math.isfinite(value) else None


def parse_workload_spec(data: dict, *, strict: bool = True) -> WorkloadSpec:
    """Validate a spec dict (parsed YAML/JSON) into a WorkloadSpec; raise WorkloadSpecError on bad input.

    `strict` rejects unknown fields (a typo otherwise silently falls back to a default).
    """
    if not isinstance(data, dict):
        raise WorkloadSpecError([FieldError("(root)", "the workload spec must be a mapping")])
    reader = _Reader()
    if strict:
        reader.unknown_keys(data, _TOP_KEYS, "")
    task = reader.choice(data, "task", "task", "", TASKS)
    if data.get("task") is None:
        reader.error("task", f"required; one of {', '.join(TASKS)}")
    model = _parse_model(reader, _served_checkpoint(data, reader.section(data, "model", "model")), strict)
    spec_fields = _parse_training_fields(reader, data, task)
    arch = model.image_arch if model is not None else None
    lora = _parse_lora(reader, data, task, strict, image=arch is not None)
    distillation = _parse_distillation(reader, data, task, strict, model)
    parallelism = _parse_parallelism(reader, reader.section(data, "parallelism", "parallelism"), strict)
    inference = _parse_inference(reader, reader.section(data, "inference", "inference"), strict)
    host = _parse_host(reader, reader.section(data, "host", "host"), strict)
    quantization = _parse_quantization(reader, reader.section(data, "quantization", "quantization"), strict)
    image_section = reader.section(data, "image", "image")
    image_resolution = _parse_image(reader, image_section, strict)
    image_fields = _parse_image_fields(reader, image_section, lora)
    name = str(data.get("name") or (model.name if model else "workload"))
    if model is not None and model.image_tier is not None and data.get("micro_batch_size") is None:
        spec_fields["micro_batch_size"] = model.image_tier.reference_batch  # the tier's measured batch
    image_fields = _default_memory_format(image_fields, arch)
    if arch is not None:
        _image_defaults(reader, data, arch, spec_fields, image_fields, parallelism, task)
        inference = _replace(inference, context_len=2, output_tokens=1)  # one image per request
    _derive_accumulation(reader, data, spec_fields, parallelism, task, image=arch is not None)
    spec = WorkloadSpec(
        name=name,
        task=task or "inference",
        model=model or _PLACEHOLDER_MODEL,  # still check the rules that do not need the model
        lora=lora,
        distillation=distillation,
        parallelism=parallelism,
        inference=inference,
        host=host,
        quantization=quantization,
        image_resolution_px=image_resolution,
        image=image_fields,
        **spec_fields,
    )
    _check_consistency(reader, spec, model_known=model is not None)
    if reader.errors:
        raise WorkloadSpecError(reader.errors)
    return spec


_PLACEHOLDER_MODEL = ModelSpec("placeholder", 1.0, 1, 1, 1, 1, 1, 1, head_dim=1)


GLOBAL_BATCH_FIELDS = ("global_batch_size", "global_batch_tokens")


def _derive_accumulation(
    reader: _Reader, data: dict, fields: dict, par: ParallelismSpec, task: str, *, image: bool
) -> None:
    """gradient_accumulation_steps from a stated global batch, as Megatron-LM derives its micro-batches a step
    (NVIDIA/Megatron-LM @6337108c megatron/core/num_microbatches_calculator.py, ConstantNumMicroBatchesCalculator:
    global_batch_size // (micro_batch_size x data_parallel_size), asserted to divide); the data-parallel ranks are
    gpus / (tp x pp x cp)."""
    sequences = _global_batch_sequences(reader, data, fields["seq_len"])
    if sequences is None:
        return
    name = "global_batch_size" if data.get("global_batch_size") is not None else "global_batch_tokens"
    if task not in TRAINING_TASKS or image:
        reader.error(
            name,
            f"sets a training run's micro-batches a step: needs a training task on a language model, got {task}",
        )
        return
    if par.gpus_auto:
        # each ranked plan derives its own micro-batches a step from the batch (accumulation_at), so a stated
        # count would be one plan's only
        if data.get("gradient_accumulation_steps") is not None:
            reader.error(
                "gradient_accumulation_steps",
                f"is derived per plan from {name} under parallelism.gpus: auto (global / (micro_batch_size x the "
                "plan's data-parallel ranks)): state one",
            )
            return
        if sequences % fields["micro_batch_size"]:
            reader.error(
                name,
                f"{sequences:,} sequences a step do not split into micro-batches of micro_batch_size "
                f"{fields['micro_batch_size']}",
            )
            return
        fields["global_batch_size"] = sequences
        return
    if "gpus" not in par.stated:
        reader.error(name, "needs parallelism.gpus stated: the batch is split over its data-parallel ranks")
        return
    model_parallel = par.tensor_parallel * par.pipeline_parallel * par.context_parallel
    if par.gpus % model_parallel:
        return  # the plan's own error names it
    ranks = par.gpus // model_parallel
    per_micro_batch = fields["micro_batch_size"] * ranks
    if sequences % per_micro_batch:
        reader.error(
            name,
            f"{sequences:,} sequences a step do not split into micro-batches of micro_batch_size "
            f"{fields['micro_batch_size']} over {ranks:,} data-parallel ranks (gpus / (tensor x pipeline x context "
            f"parallel)): state a multiple of {per_micro_batch:,}",
        )
        return
    derived = sequences // per_micro_batch
    stated = data.get("gradient_accumulation_steps")
    if stated is not None and fields["gradient_accumulation_steps"] != derived:
        reader.error(
            "gradient_accumulation_steps",
            f"{fields['gradient_accumulation_steps']} disagrees with {name}, which gives {derived} "
            f"({sequences:,} sequences / (micro_batch_size {fields['micro_batch_size']} x {ranks:,} data-parallel "
            "ranks)): state one, or both alike",
        )
        return
    fields["gradient_accumulation_steps"] = derived
    fields["global_batch_size"] = sequences


def accumulation_at(spec: WorkloadSpec, data_parallel_ranks: int) -> int | None:
    """The micro-batches a step (gradient_accumulation_steps) of a plan with ``data_parallel_ranks`` ranks: the
    spec's own count where it states no global batch (its global batch then scales with the ranks); else the
    stated global batch / (micro_batch_size x ranks), Megatron's num_microbatches (NVIDIA/Megatron-LM @6337108c
    megatron/core/num_microbatches_calculator.py), None where that does not divide (Megatron asserts it does)."""
    if spec.global_batch_size is None:
        return spec.gradient_accumulation_steps
    per_micro_batch = spec.micro_batch_size * data_parallel_ranks
    if data_parallel_ranks < 1 or spec.global_batch_size % per_micro_batch:
        return None
    return spec.global_batch_size // per_micro_batch


def _global_batch_sequences(reader: _Reader, data: dict, seq_len: int) -> int | None:
    """The stated global batch in sequences: global_batch_size, or global_batch_tokens / seq_len (whole)."""
    sequences = reader.integer(data, "global_batch_size", "global_batch_size", None)
    tokens = reader.integer(data, "global_batch_tokens", "global_batch_tokens", None)
    if tokens is None:
        return sequences
    if tokens % seq_len:
        reader.error(
            "global_batch_tokens", f"{tokens:,} is not a whole number of seq_len {seq_len:,} sequences"
        )
        return None
    if sequences is not None and sequences != tokens // seq_len:
        reader.error(
            "global_batch_tokens",
            f"{tokens:,} tokens are {tokens // seq_len:,} sequences of seq_len {seq_len:,}, but global_batch_size "
            f"is {sequences:,}: state one, or both alike",
        )
        return None
    return tokens // seq_len


def _served_checkpoint(data: dict, model: dict) -> dict:
    """The model section with the preset's int4 release width for int4 serving (presets.INT4_RELEASE_
    INTERMEDIATE_SIZE: Qwen2.5-72B's AWQ / GPTQ-Int4 pad the MLP to 29,696), as if stated; a stated width wins."""
    if data.get("task") != "inference" or data.get("weight_quantization") != "int4":
        return model
    if (
        not isinstance(model, dict)
        or model.get("preset") is None
        or model.get("intermediate_size") is not None
    ):
        return model
    width = int4_release_intermediate_size(model["preset"])
    return model if width is None else model | {"intermediate_size": width}


def _parse_training_fields(reader: _Reader, data: dict, task: str) -> dict:
    precision = reader.choice(data, "precision", "precision", "bf16", PRECISIONS)
    default_quant = "nf4" if task == "qlora" else "none"
    return {
        "precision": precision,
        "weight_quantization": reader.choice(
            data, "weight_quantization", "weight_quantization", default_quant, QUANTIZATIONS
        ),
        "optimizer": reader.choice(data, "optimizer", "optimizer", "adamw", OPTIMIZERS),
        "master_weights_fp32": reader.boolean(data, "master_weights_fp32", "master_weights_fp32", True),
        "micro_batch_size": reader.integer(data, "micro_batch_size", "micro_batch_size", 1),
        "seq_len": reader.integer(data, "seq_len", "seq_len", 2048),
        "max_seq_len": reader.integer(data, "max_seq_len", "max_seq_len", None),
        "gradient_checkpointing": reader.choice(
            data, "gradient_checkpointing", "gradient_checkpointing", "none", CHECKPOINTING
        ),
        "recompute_modules": _parse_recompute_modules(reader, data),
        "fused_swiglu": reader.boolean(data, "fused_swiglu", "fused_swiglu", False),
        "fp32_norm_inputs": reader.boolean(data, "fp32_norm_inputs", "fp32_norm_inputs", False),
        "flash_attention": reader.boolean(data, "flash_attention", "flash_attention", True),
        "packed_sample_tokens": reader.integer(data, "packed_sample_tokens", "packed_sample_tokens", None),
        "training_tokens": reader.number(data, "training_tokens", "training_tokens", None, minimum=0),
        "headroom": reader.number(data, "headroom", "headroom", 0.2, minimum=0, exclusive=False, maximum=1),
        "gradient_accumulation_steps": reader.integer(
            data, "gradient_accumulation_steps", "gradient_accumulation_steps", 1
        ),
        "optimizer_in_backward": reader.boolean(
            data, "optimizer_in_backward", "optimizer_in_backward", False
        ),
        "zero_grad": reader.choice(data, "zero_grad", "zero_grad", "in_place", ZERO_GRAD),
        "optimizer_impl": reader.choice(data, "optimizer_impl", "optimizer_impl", "foreach", OPTIMIZER_IMPLS),
        "torch_version": _parse_torch_version(reader, data),
        "fp8_weights": reader.boolean(data, "fp8_weights", "fp8_weights", False),
        "cross_entropy": reader.choice(data, "cross_entropy", "cross_entropy", "fp32_softmax", CROSS_ENTROPY),
        "attention_kernel": reader.choice(
            data, "attention_kernel", "attention_kernel", "engine", ATTENTION_KERNELS
        ),
        "fp8_recipe": reader.choice(data, "fp8_recipe", "fp8_recipe", "transformer_engine", FP8_RECIPES),
        "fp8_pad_inner_dim": reader.boolean(data, "fp8_pad_inner_dim", "fp8_pad_inner_dim", False),
        "training_stack": reader.choice(data, "training_stack", "training_stack", "other", TRAINING_STACKS),
        "mixed_precision": reader.choice(
            data, "mixed_precision", "mixed_precision", "autocast", MIXED_PRECISION_STYLES
        ),
        "mfu": reader.number(data, "mfu", "mfu", None, minimum=0, maximum=1),
    }


def _parse_torch_version(reader: _Reader, data: dict) -> str:
    raw = data.get("torch_version")
    if raw is None:
        return "current"
    text = str(raw).strip().lower()
    if text == "current" or TORCH_VERSION_PATTERN.match(text):
        return text
    reader.error(
        "torch_version", f"must be 'current' or a torch release such as '2.0.1' or '2.1.0+cu121', got {raw!r}"
    )
    return "current"


def _parse_recompute_modules(reader: _Reader, data: dict) -> tuple[str, ...]:
    """Megatron-Core's module names, in order, without repeats; Megatron's default (core_attn) when
    gradient_checkpointing is selective and none are stated."""
    raw = data.get("recompute_modules")
    if raw is None:
        selective = str(data.get("gradient_checkpointing", "")).strip().lower() == "selective"
        return ("core_attn",) if selective else ()
    if isinstance(raw, str):
        raw = [raw]
    if not isinstance(raw, list):
        reader.error("recompute_modules", f"must be a list of {', '.join(RECOMPUTE_MODULES)}")
        return ()
    modules: list[str] = []
    for index, item in enumerate(raw):
        name = str(item).strip().lower()
        if name not in RECOMPUTE_MODULES:
            reader.error(
                f"recompute_modules[{index}]",
                f"unknown module {item!r}; expected one of {', '.join(RECOMPUTE_MODULES)}",
            )
        elif name not in modules:
            modules.append(name)
    return tuple(modules)


def _lookup_preset(reader: _Reader, preset) -> tuple[dict, ImageTier | ImageArchitecture | None]:
    text = str(preset)
    arch = image_architecture(slugify(text))
    if arch is not None:  # an image preset with shapes wins over the tier tables (their fallback)
        return {"name": arch.name}, arch
    tier = image_tier(text)
    if tier is not None:
        return {"name": tier.label, "params": tier.params}, tier
    presets = llm_presets()
    fields = presets.get(slugify(text)) or presets.get(text.strip().lower())
    if fields is None:
        reader.error("model.preset", f"unknown preset {text!r}; known: {', '.join(known_preset_names())}")
        return {}, None
    return dict(fields), None


def _parse_model(reader: _Reader, data: dict, strict: bool) -> ModelSpec | None:
    if not data:
        reader.error("model", "required: a preset or the model's shape")
        return None
    if strict:
        reader.unknown_keys(data, _MODEL_KEYS, "model.")
    merged: dict[str, Any] = {}
    tier: ImageTier | ImageArchitecture | None = None
    if data.get("preset") is not None:
        merged, tier = _lookup_preset(reader, data["preset"])
        if not merged:
            return None
    values: dict = dict(merged)
    for key in _MODEL_INT_FIELDS + _MODEL_COUNT_FIELDS:
        minimum = 0 if key in _MODEL_COUNT_FIELDS else 1
        value = reader.integer(data, key, f"model.{key}", None, minimum=minimum)
        if value is not None:
            values[key] = value
    for key in _MODEL_BOOL_FIELDS:
        if data.get(key) is not None:
            values[key] = reader.boolean(data, key, f"model.{key}", False)
    for key in ("params", "params_active"):
        value = reader.number(data, key, f"model.{key}", None, minimum=0)
        if value is not None:
            values[key] = value
    if data.get("name"):
        values["name"] = str(data["name"])
    if data.get("eager_layer") is not None:
        values["eager_layer"] = reader.choice(data, "eager_layer", "model.eager_layer", "llama", EAGER_LAYERS)
    reshaping = _MODEL_INT_FIELDS + _MODEL_LATENT_FIELDS
    if merged and "params" not in data and any(data.get(key) is not None for key in reshaping):
        values.pop("params", None)  # a reshaped preset: count its parameters again
        values.pop("params_active", None)
        if data.get("mtp_layers") is None:  # the preset's MTP module is its own (Kimi K2 has none)
            values.pop("mtp_layers", None)
    if isinstance(tier, ImageArchitecture):
        return _image_arch_model(values, tier, str(data["preset"]))
    if tier is not None:
        return _image_model(values, tier, str(data["preset"]))
    return _llm_model(reader, values, data.get("preset"))


def _image_model(values: dict, tier: ImageTier, preset: str) -> ModelSpec:
    # Image tiers are sized from the guides' tables; the transformer shape fields are placeholders.
    return ModelSpec(
        name=values.get("name", tier.label),
        params=float(values.get("params", tier.params)),
        num_layers=1,
        hidden_size=1,
        num_attention_heads=1,
        num_key_value_heads=1,
        intermediate_size=1,
        vocab_size=1,
        head_dim=1,
        preset=slugify(preset),
        image_tier=tier,
    )


def _image_arch_model(values: dict, arch: ImageArchitecture, preset: str) -> ModelSpec:
    # Sized by image_model.py from the preset's shapes; the transformer fields only carry the block count
    # and width the communication model reads (ZeRO-3 gathers per block, message sizes).
    cost = image_model.network_cost(arch.slug, arch.resolution_px)
    params = float(values.get("params", image_model.network_params(arch.slug)))
    return ModelSpec(
        name=values.get("name", arch.name),
        params=params,
        num_layers=max(cost.blocks, 1),
        hidden_size=1024,
        num_attention_heads=1,
        num_key_value_heads=1,
        intermediate_size=1,
        vocab_size=1,
        head_dim=1024,
        preset=arch.slug,
        image_arch=arch,
    )


def _llm_model(reader: _Reader, values: dict, preset) -> ModelSpec | None:
    missing = [key for key in _REQUIRED_SHAPE if key not in values]
    for key in missing:
        reader.error(f"model.{key}", "required (or give model.preset)")
    if missing:
        return None
    heads = values["num_attention_heads"]
    hidden = values["hidden_size"]
    kv_heads = values.get("num_key_value_heads", heads)
    bad = False
    if hidden % heads:
        reader.error("model.num_attention_heads", f"must divide model.hidden_size ({hidden}), got {heads}")
        bad = True
    if heads % kv_heads:
        reader.error(
            "model.num_key_value_heads", f"must divide model.num_attention_heads ({heads}), got {kv_heads}"
        )
        bad = True
    bad = _sliding_window_errors(reader, values) or bad
    bad = _latent_attention_errors(reader, values) or bad
    experts = values.get("num_experts", 1)
    if values.get("experts_per_token", 1) > experts:
        reader.error("model.experts_per_token", f"must be <= model.num_experts ({experts})")
        bad = True
    if bad:
        return None
    values.setdefault("num_key_value_heads", kv_heads)
    values.setdefault("head_dim", hidden // heads)
    values.setdefault("moe_intermediate_size", values["intermediate_size"])
    values["moe_intermediate_size"] = values["moe_intermediate_size"] or values["intermediate_size"]
    values.setdefault("name", str(preset or "custom model"))
    model = ModelSpec(
        **{**values, "params": values.get("params", 0.0), "preset": slugify(preset) if preset else None}
    )
    if not model.params:
        model = _replace(model, params=float(count_params(model)))
    return model


def _latent_attention_errors(reader: _Reader, values: dict) -> bool:
    """Multi-head latent attention, stated as its config.json does: kv_lora_rank > 0 needs qk_nope_head_dim,
    qk_rope_head_dim and v_head_dim (DeepSeek-V3: 128, 64, 128); head_dim becomes qk_nope + qk_rope and the KV
    cache one latent of kv_lora_rank + qk_rope a layer (vLLM's MLA cache), unless stated. True where refused."""
    nope = values.pop("qk_nope_head_dim", None)
    if not values.get("kv_lora_rank"):
        stated = [key for key in ("q_lora_rank", "qk_rope_head_dim", "v_head_dim") if values.get(key)]
        stated += ["qk_nope_head_dim"] if nope else []
        for key in stated:
            reader.error(f"model.{key}", "needs model.kv_lora_rank (multi-head latent attention)")
        return bool(stated)
    if nope is None and "head_dim" in values and values.get("qk_rope_head_dim") is not None:
        nope = values["head_dim"] - values["qk_rope_head_dim"]  # a preset's own (head_dim = nope + rope)
    missing = [
        key
        for key, value in (
            ("qk_nope_head_dim", nope),
            ("qk_rope_head_dim", values.get("qk_rope_head_dim")),
            ("v_head_dim", values.get("v_head_dim")),
        )
        if not value
    ]
    for key in missing:
        reader.error(f"model.{key}", "required with model.kv_lora_rank (multi-head latent attention)")
    if missing:
        return True
    values["head_dim"] = nope + values["qk_rope_head_dim"]
    values.setdefault("kv_elems_per_token_per_layer", values["kv_lora_rank"] + values["qk_rope_head_dim"])
    return False


def _sliding_window_errors(reader: _Reader, values: dict) -> bool:
    """sliding_window_layers defaults to every layer once a window is stated (Mistral 7B v0.1's config windows
    all of them); it needs a window and cannot exceed num_layers. True where a field is refused."""
    window, layers = values.get("sliding_window", 0), values.get("sliding_window_layers")
    if layers is None:
        values["sliding_window_layers"] = values["num_layers"] if window else 0
        return False
    if layers and not window:
        reader.error("model.sliding_window_layers", "needs model.sliding_window (the window in tokens)")
        return True
    if layers > values["num_layers"]:
        reader.error("model.sliding_window_layers", f"must be <= model.num_layers ({values['num_layers']})")
        return True
    return False


def _replace(item: _Frozen, **changes: Any) -> _Frozen:
    """A copy of a frozen spec dataclass (a model or the inference section) with `changes`."""
    from dataclasses import replace

    return replace(item, **changes)


def _parse_lora(reader: _Reader, data: dict, task: str, strict: bool, image: bool = False) -> LoraSpec | None:
    section = reader.section(data, "lora", "lora")
    if task not in ("lora", "qlora"):
        return None
    if strict:
        reader.unknown_keys(
            section,
            LORA_KEYS,
            "lora.",
        )
    rank = reader.integer(section, "rank", "lora.rank", 8)
    # PEFT's lora_dropout: nn.Dropout before lora_A above 0, nn.Identity at 0 (its default); lora_host counts it.
    dropout = float(
        reader.number(section, "dropout", "lora.dropout", 0.0, minimum=0.0, exclusive=False, maximum=1.0)
    )
    implementation = reader.choice(
        section, "implementation", "lora.implementation", "peft_eager", LORA_IMPLEMENTATIONS
    )
    adapter_dtype = reader.choice(section, "adapter_dtype", "lora.adapter_dtype", "base", LORA_ADAPTER_DTYPES)
    modules_to_save = _parse_modules_to_save(reader, section)
    if image:  # image networks: attention projections or every linear of the transformer blocks
        if modules_to_save:
            reader.error(
                "lora.modules_to_save",
                "applies to language models only (their embedding table and output layer); leave it out",
            )
        if "adapter_dtype" in section:
            # image_model prices its own LoRA kernels and never reads the adapters' dtype (aud48l flag 6).
            reader.error(
                "lora.adapter_dtype",
                "applies to language models only (lora_host's eager PEFT floor); image models do not read it: "
                "leave it out",
            )
            adapter_dtype = "base"
        target = section.get("targets", "attention")
        target = target[0] if isinstance(target, list) and len(target) == 1 else target
        text = str(target).strip().lower().replace("_", "-")
        if text not in IMAGE_LORA_TARGETS:
            reader.error(
                "lora.targets",
                f"unknown targets {target!r} for an image model; expected one of "
                f"{', '.join(IMAGE_LORA_TARGETS)}",
            )
            text = "attention"
        return LoraSpec(
            rank=rank,
            targets=(text,),
            implementation=implementation,
            dropout=dropout,
            adapter_dtype=adapter_dtype,
        )
    raw_targets = section.get("targets", ["q_proj", "v_proj"])
    if isinstance(raw_targets, str):
        raw_targets = [raw_targets]
    if not isinstance(raw_targets, list) or not raw_targets:
        reader.error("lora.targets", "must be a non-empty list of module names or 'all-linear'")
        return LoraSpec(
            rank=rank,
            implementation=implementation,
            dropout=dropout,
            adapter_dtype=adapter_dtype,
            modules_to_save=modules_to_save,
        )
    targets: list[str] = []
    names = [str(target).strip().lower() for target in raw_targets]
    aliases = LORA_TARGET_ALIASES | (QWEN1_MLP_ALIASES if QWEN1_NAMES.intersection(names) else {})
    for index, (target, name) in enumerate(zip(raw_targets, names, strict=True)):
        expanded = aliases.get(name, (name,) if name in LORA_TARGETS + FUSED_LORA_TARGETS else None)
        if expanded is None:
            choices = ", ".join(LORA_TARGETS + ("all-linear", "query_key_value", "c_attn", "c_proj", "Wqkv"))
            reader.error(f"lora.targets[{index}]", f"unknown module {target!r}; expected one of {choices}")
            continue
        targets.extend(t for t in expanded if t not in targets)
    return LoraSpec(
        rank=rank,
        targets=tuple(targets) or ("q_proj", "v_proj"),
        implementation=implementation,
        dropout=dropout,
        adapter_dtype=adapter_dtype,
        modules_to_save=modules_to_save,
    )


def _parse_distillation(
    reader: _Reader, data: dict, task: str, strict: bool, student: ModelSpec | None
) -> DistillationSpec | None:
    """The `distillation` section: a teacher (a preset or a shape, as `model`), its mode and precision."""
    if data.get("distillation") is None:
        return None
    section = reader.section(data, "distillation", "distillation")
    if not section:
        if isinstance(data.get("distillation"), dict):
            reader.error("distillation.teacher", "required: a preset or the teacher's shape")
        return None
    if task not in TRAINING_TASKS:
        reader.error(
            "distillation", f"applies to training tasks only ({', '.join(TRAINING_TASKS)}); leave it out"
        )
        return None
    if strict:
        reader.unknown_keys(section, DISTILLATION_KEYS, "distillation.")
    teacher = _parse_teacher(reader, section, strict)
    mode = reader.choice(section, "mode", "distillation.mode", "online", DISTILLATION_MODES)
    precision = reader.choice(
        section, "teacher_precision", "distillation.teacher_precision", "bf16", TEACHER_PRECISIONS
    )
    top_k = reader.integer(section, "top_k", "distillation.top_k", None)
    if top_k is not None and top_k > MAX_TOP_K:
        reader.error("distillation.top_k", f"must be <= {MAX_TOP_K:,}, got {top_k:,}")
        top_k = None
    temperature = float(
        reader.number(section, "temperature", "distillation.temperature", 1.0, minimum=0, maximum=1000)
    )
    generation = reader.boolean(
        section, "include_logit_generation", "distillation.include_logit_generation", False
    )
    if mode == "online" and section.get("top_k") is not None:
        reader.error(
            "distillation.top_k", "applies to mode precomputed only (online reads the whole vocabulary)"
        )
    if mode == "online" and generation:
        reader.error(
            "distillation.include_logit_generation",
            "applies to mode precomputed only (online runs the teacher every step)",
        )
    if teacher is None:
        return None
    if teacher.is_image:
        reader.error("distillation.teacher", "must be a language model (image teachers are not modelled)")
        return None
    if student is not None and not student.is_image and teacher.vocab_size != student.vocab_size:
        reader.error(
            "distillation.teacher.vocab_size",
            f"must equal model.vocab_size ({student.vocab_size:,}) for token-level logits, got "
            f"{teacher.vocab_size:,}",
        )
    if student is not None and student.is_image:
        reader.error("distillation", "applies to language models only; leave it out")
    if top_k is not None and top_k > teacher.vocab_size:
        reader.error("distillation.top_k", f"must be <= the teacher's vocabulary ({teacher.vocab_size:,})")
    return DistillationSpec(
        teacher=teacher,
        mode=mode,
        teacher_precision=precision,
        top_k=top_k,
        temperature=temperature,
        include_logit_generation=generation,
    )


def _parse_teacher(reader: _Reader, section: dict, strict: bool) -> ModelSpec | None:
    """The teacher as `model` is read, its errors named under distillation.teacher."""
    raw = section.get("teacher")
    if raw is None:
        reader.error("distillation.teacher", "required: a preset or the teacher's shape")
        return None
    if isinstance(raw, str):
        raw = {"preset": raw}
    if not isinstance(raw, dict):
        reader.error("distillation.teacher", "must be a preset name or a mapping (preset or shape)")
        return None
    inner = _Reader()
    teacher = _parse_model(inner, raw, strict)
    for error in inner.errors:
        path = error.path
        path = "distillation.teacher" + path[len("model") :] if path.startswith("model") else path
        reader.error(path, error.message.replace("model.", "distillation.teacher."))
    return None if inner.errors else teacher


def _parse_modules_to_save(reader: _Reader, section: dict) -> tuple[str, ...]:
    """lora.modules_to_save: a list of module names (LORA_SAVED_MODULE_ALIASES), or one comma-separated string, each
    name plain or dotted (matched by its last component, as PEFT matches by suffix), read as ("embeddings",
    "output") in that order, each once; () when absent."""
    raw = section.get("modules_to_save", [])
    if raw is None:
        return ()
    if isinstance(
        raw, str
    ):  # LLaMA-Factory's additional_target: "embed_tokens,lm_head" (split_arg splits at commas)
        raw = [item for item in raw.split(",") if item.strip()]
    if not isinstance(raw, list) or len(raw) > LORA_SAVED_MODULES_LIMIT:
        reader.error(
            "lora.modules_to_save",
            f"must be a list of at most {LORA_SAVED_MODULES_LIMIT} module names "
            f"({', '.join(LORA_SAVED_MODULE_ALIASES)})",
        )
        return ()
    kinds: set[str] = set()
    for index, name in enumerate(raw):
        kind = LORA_SAVED_MODULE_ALIASES.get(_module_leaf(name)) if isinstance(name, str) else None
        if kind is None:
            reader.error(
                f"lora.modules_to_save[{index}]",
                f"unknown module {name!r}; expected one of {', '.join(LORA_SAVED_MODULE_ALIASES)}",
            )
            continue
        kinds.add(kind)
    return tuple(kind for kind in ("embeddings", "output") if kind in kinds)


def _module_leaf(name: str) -> str:
    """A dotted module path's last name ("model.embed_tokens" -> "embed_tokens"): PEFT wraps every module whose
    full name ends with a modules_to_save entry (peft v0.5.0 @4df9c5a2 utils/other.py:205, _set_trainable: `key.endswith(
    target_key)`), so a dotted entry names the same module as its last component."""
    return name.strip().lower().rsplit(".", 1)[-1]


CONTRACT_FIELDS = ("gpus", "zero_stage", "tensor_parallel", "pipeline_parallel")
# Degrees the ranking never varies: the spec's value (default 1) is every row's, stated or not.
SPLIT_FIELDS = ("virtual_pipeline", "context_parallel", "expert_parallel")
# Upper bounds that keep a typo from sizing nonsense (no published run comes near them).
SPLIT_LIMITS = {"virtual_pipeline": 128, "context_parallel": 1024, "expert_parallel": 4096}
UNEVEN_SPLIT = SPLIT_FLAGS + SPLIT_COUNTS  # an uneven pipeline split (pipeline_split.py)
ACTIVATION_OFFLOAD_LIMIT = 1024  # layers; checked against model.num_layers once the model is known
# Every key `parallelism` accepts (the API's schema documents exactly these: tests/procurement/test_spec_schemas.py).
PARALLELISM_KEYS = frozenset(
    {
        *CONTRACT_FIELDS,
        "offload",
        "expert_overlap",
        "expert_dispatch",
        "expert_routing",
        "expert_tensor_parallel",
        "tp_comm_overlap",
        "tp_implementation",
        "context_parallel_comm",
        "reshard_after_forward",
        "reduce_bucket_size",
        "overlap_comm",
        "multi_rank_bucket_allreduce",
        "offload_pin_memory",
        "offload_cpu_cores_per_rank",
        "gradient_sync",
        "activation_offload_layers",
        *SPLIT_FIELDS,
        *UNEVEN_SPLIT,
    }
)


def _parse_parallelism(reader: _Reader, data: dict, strict: bool) -> ParallelismSpec:
    if strict:
        reader.unknown_keys(data, PARALLELISM_KEYS, "parallelism.")
    zero_raw = data.get("zero_stage")
    if isinstance(zero_raw, str) and zero_raw.strip().lower() == "fsdp":
        zero_stage = 3  # FSDP FULL_SHARD shards like ZeRO-3
    else:
        zero_stage = reader.integer(data, "zero_stage", "parallelism.zero_stage", 0, minimum=0)
        if zero_stage > 3:
            reader.error("parallelism.zero_stage", f"must be 0, 1, 2, 3 or 'fsdp', got {zero_stage}")
            zero_stage = 0
    gpus_auto = isinstance(data.get("gpus"), str) and data["gpus"].strip().lower() == "auto"
    if gpus_auto:
        data = {key: value for key, value in data.items() if key != "gpus"}
    stated = frozenset(key for key in CONTRACT_FIELDS + SPLIT_FIELDS if data.get(key) is not None)
    # the split degrees (ints) and the uneven split (flags and counts), by name: one dict of either kind
    split: dict[str, Any] = {key: _split_degree(reader, data, key) for key in SPLIT_FIELDS}
    split.update(_uneven_split(reader, data))
    return ParallelismSpec(
        stated=stated,
        gpus_auto=gpus_auto,
        gpus=reader.integer(data, "gpus", "parallelism.gpus", 1),
        zero_stage=zero_stage,
        tensor_parallel=reader.integer(data, "tensor_parallel", "parallelism.tensor_parallel", 1),
        pipeline_parallel=reader.integer(data, "pipeline_parallel", "parallelism.pipeline_parallel", 1),
        offload=reader.choice(data, "offload", "parallelism.offload", "none", OFFLOADS),
        expert_overlap=reader.choice(
            data, "expert_overlap", "parallelism.expert_overlap", "none", EXPERT_OVERLAPS
        ),
        expert_dispatch=reader.choice(
            data, "expert_dispatch", "parallelism.expert_dispatch", "alltoall", EXPERT_DISPATCHES
        ),
        expert_routing=reader.choice(
            data, "expert_routing", "parallelism.expert_routing", "learned", EXPERT_ROUTINGS
        ),
        expert_tensor_parallel=reader.integer(
            data, "expert_tensor_parallel", "parallelism.expert_tensor_parallel", None
        ),
        tp_comm_overlap=reader.boolean(data, "tp_comm_overlap", "parallelism.tp_comm_overlap", False),
        tp_implementation=reader.choice(
            data, "tp_implementation", "parallelism.tp_implementation", "megatron", TP_IMPLEMENTATIONS
        ),
        context_parallel_comm=reader.choice(
            data, "context_parallel_comm", "parallelism.context_parallel_comm", "p2p", CONTEXT_PARALLEL_COMMS
        ),
        reshard_after_forward=reader.boolean(
            data, "reshard_after_forward", "parallelism.reshard_after_forward", True
        ),
        reduce_bucket_size=reader.integer(
            data, "reduce_bucket_size", "parallelism.reduce_bucket_size", 0, minimum=0
        ),
        overlap_comm=reader.boolean(data, "overlap_comm", "parallelism.overlap_comm", False),
        multi_rank_bucket_allreduce=_multi_rank_bucket_allreduce(reader, data),
        offload_pin_memory=_offload_pin_memory(reader, data),
        offload_cpu_cores_per_rank=_offload_cpu_cores_per_rank(reader, data),
        gradient_sync=reader.choice(
            data, "gradient_sync", "parallelism.gradient_sync", "overlapped", GRADIENT_SYNCS
        ),
        activation_offload_layers=_activation_offload_layers(reader, data),
        **split,
    )


def _multi_rank_bucket_allreduce(reader: _Reader, data: dict) -> bool:
    """DeepSpeed's use_multi_rank_bucket_allreduce: default true (its own default since v0.12.4, zero/config.py@v0.14.2
    line 111); stated only beside reduce_bucket_size, the field that says the DeepSpeed config is known."""
    path = "parallelism.multi_rank_bucket_allreduce"
    value = reader.optional_boolean(data, "multi_rank_bucket_allreduce", path)
    if value is not None and not data.get("reduce_bucket_size"):
        reader.error(
            path,
            "is DeepSpeed ZeRO-1/2's gradient reduction (all-reduce or per-rank reduce of each bucket): state "
            "parallelism.reduce_bucket_size with it",
        )
    return True if value is None else value


def _offload_pin_memory(reader: _Reader, data: dict) -> bool:
    """DeepSpeed's offload_optimizer.pin_memory / offload_param.pin_memory (default false,
    deepspeed/runtime/zero/offload_config.py@v0.14.0 lines 43, 70); stated only beside parallelism.offload."""
    path = "parallelism.offload_pin_memory"
    value = reader.optional_boolean(data, "offload_pin_memory", path)
    if value and data.get("offload", "none") == "none":
        reader.error(
            path, "is DeepSpeed's pinned host buffers for offload: state parallelism.offload with it"
        )
    return bool(value)


OFFLOAD_CPU_CORES_LIMIT = 512  # a rank's OpenMP threads; the largest two-socket hosts have 384 cores


def _offload_cpu_cores_per_rank(reader: _Reader, data: dict) -> int:
    """Physical host cores a rank's CPU optimizer step runs on (pinned_offload.cores_per_rank); stated only beside
    parallelism.offload, 1 to OFFLOAD_CPU_CORES_LIMIT."""
    path = "parallelism.offload_cpu_cores_per_rank"
    if data.get("offload_cpu_cores_per_rank") is None:
        return 0
    value = reader.integer(data, "offload_cpu_cores_per_rank", path, 0, minimum=1)
    if value > OFFLOAD_CPU_CORES_LIMIT:
        reader.error(path, f"must be <= {OFFLOAD_CPU_CORES_LIMIT}, got {value}")
        return 0
    if value and data.get("offload", "none") == "none":
        reader.error(
            path, "is the host cores of an offloaded optimizer's CPU step: state parallelism.offload with it"
        )
        return 0
    return value


def _activation_offload_layers(reader: _Reader, data: dict) -> int:
    path = "parallelism.activation_offload_layers"
    value = reader.integer(data, "activation_offload_layers", path, 0, minimum=0)
    if value > ACTIVATION_OFFLOAD_LIMIT:
        reader.error(path, f"must be <= {ACTIVATION_OFFLOAD_LIMIT}, got {value}")
        return 0
    return value


def _uneven_split(reader: _Reader, data: dict) -> dict:
    """The uneven pipeline split fields (pipeline_split.py): two flags and two layer counts."""
    fields: dict = {key: reader.boolean(data, key, f"parallelism.{key}", False) for key in SPLIT_FLAGS}
    for key in SPLIT_COUNTS:
        fields[key] = reader.integer(data, key, f"parallelism.{key}", None)
    return fields


def _split_degree(reader: _Reader, data: dict, key: str) -> int:
    value = reader.integer(data, key, f"parallelism.{key}", 1)
    if value > SPLIT_LIMITS[key]:
        reader.error(f"parallelism.{key}", f"must be <= {SPLIT_LIMITS[key]}, got {value}")
        return 1
    return value


# Bounds of the serving demand and latency fields: each size a request can set is bounded.
DEMAND_LIMITS = {
    "requests_per_second": 1e6,
    "tokens_per_second": 1e9,
    "ttft_ms": 600_000.0,  # ten minutes
    "tpot_ms": 60_000.0,  # a minute per token
}


# the keys an inference block accepts (the API's WorkloadInferenceSerializer documents exactly these)
INFERENCE_KEYS = frozenset(
    {
        "concurrency",
        "context_len",
        "output_tokens",
        "kv_cache_dtype",
        "engine",
        "quant_kernel",
        "quant_format",
        "quant_group_size",
        "attn_implementation",
        "generate_harness",
        "rotary_backend",
        "transformers_release",
        "expert_precision",
        "decode_attention",
        "traffic",
        "max_batched_tokens",
        *DEMAND_LIMITS,
    }
)


def _parse_quantization(reader: _Reader, data: dict, strict: bool) -> QuantizationSpec:
    if strict:
        reader.unknown_keys(data, QUANTIZATION_KEYS, "quantization.")
    version = "current"
    raw = data.get("bnb_version")
    if raw is not None:
        text = str(raw).strip().lower()
        if text == "current" or BNB_VERSION_PATTERN.match(text):
            version = text
        else:
            reader.error(
                "quantization.bnb_version",
                f"must be 'current' or a bitsandbytes release such as '0.41.1', got {raw!r}",
            )
    storage = data.get("bnb_storage_dtype")
    if storage is not None:
        storage = str(storage).strip().lower()
        if storage not in BNB_STORAGE_DTYPES:
            reader.error(
                "quantization.bnb_storage_dtype",
                f"must be one of {', '.join(BNB_STORAGE_DTYPES)}, got {data.get('bnb_storage_dtype')!r}",
            )
            storage = None
    return QuantizationSpec(
        bnb_version=version,
        lm_head_4bit=reader.boolean(data, "lm_head_4bit", "quantization.lm_head_4bit", False),
        bnb_storage_dtype=storage,
        nf4_double_quant=reader.boolean(data, "nf4_double_quant", "quantization.nf4_double_quant", True),
        prepare_kbit=reader.boolean(data, "prepare_kbit", "quantization.prepare_kbit", False),
    )


def _check_quantization(reader: _Reader, spec: WorkloadSpec) -> None:
    """quantization.* describe bitsandbytes NF4 under QLoRA on a dense language model; refused elsewhere."""
    stated = [
        path
        for path, value in (
            ("quantization.bnb_version", spec.quantization.bnb_version != "current"),
            ("quantization.lm_head_4bit", spec.quantization.lm_head_4bit),
            ("quantization.bnb_storage_dtype", spec.quantization.bnb_storage_dtype is not None),
        )
        if value
    ]
    model = spec.model
    for path in stated:
        if spec.task != "qlora" or spec.weight_quantization != "nf4" or model.is_image:
            reader.error(
                path,
                "describes bitsandbytes NF4 under QLoRA on a language model (task qlora, weight_quantization "
                f"nf4); this spec is {spec.task} with weight_quantization {spec.weight_quantization}: leave it out",
            )
        elif model.is_moe or model.is_mla:
            reader.error(path, "not counted for mixture-of-experts or latent-attention models: leave it out")
    if spec.quantization.lm_head_4bit and model.tie_word_embeddings:
        reader.error(
            "quantization.lm_head_4bit", "the output layer is the tied embedding table here: leave it out"
        )
    release = spec.quantization.release
    if (
        spec.quantization.bnb_storage_dtype == "compute"
        and release is not None
        and release + (0,) * 2 < (0, 43, 0)
    ):
        reader.error(
            "quantization.bnb_storage_dtype",
            f"bitsandbytes {spec.quantization.bnb_version} stores 4-bit weights fp16 whatever the load dtype "
            "(Params4bit.cuda's .half(), removed in 0.43.0): state fp16 or leave it out",
        )
    if not spec.quantization.nf4_double_quant and (spec.weight_quantization != "nf4" or model.is_image):
        reader.error(
            "quantization.nf4_double_quant",
            "sets how a language model's NF4 weights keep their block scales (weight_quantization nf4; image "
            f"models: image.nf4_double_quant); this spec has weight_quantization {spec.weight_quantization}: leave "
            "it out",
        )
    _check_prepare_kbit(reader, spec)


def _check_prepare_kbit(reader: _Reader, spec: WorkloadSpec) -> None:
    """quantization.prepare_kbit states peft's fp32 cast, which runs on bitsandbytes k-bit models only: peft v0.5.0
    src/peft/utils/other.py 92-101 skips it when quantization_method is "gptq" (int4 here), and a 16-bit model is
    not k-bit. Lightning's 4-bit head (lm_head_4bit) is not a peft stack."""
    if not spec.quantization.prepare_kbit:
        return
    path = "quantization.prepare_kbit"
    if spec.task != "qlora" or spec.model.is_image:
        reader.error(
            path,
            "counts peft's fp32 cast of a bitsandbytes k-bit language model (task qlora, weight_quantization nf4 "
            f"or int8); this spec is {spec.task}: leave it out",
        )
    elif spec.weight_quantization == "int4":
        reader.error(
            path,
            "peft's prepare_model_for_kbit_training skips the fp32 cast on a GPTQ (int4) model "
            "(peft v0.5.0 src/peft/utils/other.py 92-101): leave it out",
        )
    elif spec.weight_quantization not in ("nf4", "int8"):
        reader.error(
            path,
            f"needs a bitsandbytes k-bit model (weight_quantization nf4 or int8), got "
            f"{spec.weight_quantization}: leave it out",
        )
    elif spec.quantization.lm_head_4bit:
        reader.error(
            path, "quantization.lm_head_4bit is Lightning's plugin, not a peft stack: state one of the two"
        )
    elif spec.model.is_moe or spec.model.is_mla:
        reader.error(path, "not counted for mixture-of-experts or latent-attention models: leave it out")


def _parse_inference(reader: _Reader, data: dict, strict: bool) -> InferenceSpec:
    if strict:
        reader.unknown_keys(
            data,
            INFERENCE_KEYS,
            "inference.",
        )
    demand = {
        key: reader.number(data, key, f"inference.{key}", None, minimum=0, maximum=limit)
        for key, limit in DEMAND_LIMITS.items()
    }
    if demand["requests_per_second"] is not None and demand["tokens_per_second"] is not None:
        reader.error("inference.tokens_per_second", "give requests_per_second or tokens_per_second, not both")
    return InferenceSpec(
        concurrency=reader.integer(data, "concurrency", "inference.concurrency", 1),
        context_len=reader.integer(data, "context_len", "inference.context_len", 4096),
        output_tokens=reader.integer(data, "output_tokens", "inference.output_tokens", 256, minimum=0),
        kv_cache_dtype=reader.choice(data, "kv_cache_dtype", "inference.kv_cache_dtype", "bf16", KV_DTYPES),
        engine=reader.choice(data, "engine", "inference.engine", "compiled", SERVING_ENGINES),
        quant_kernel=reader.choice(data, "quant_kernel", "inference.quant_kernel", "unstated", QUANT_KERNELS),
        quant_format=reader.choice(data, "quant_format", "inference.quant_format", "unstated", QUANT_FORMATS),
        quant_group_size=_parse_quant_group_size(reader, data),
        attn_implementation=reader.choice(
            data, "attn_implementation", "inference.attn_implementation", "unstated", ATTN_IMPLEMENTATIONS
        ),
        generate_harness=reader.choice(
            data, "generate_harness", "inference.generate_harness", "transformers", GENERATE_HARNESSES
        ),
        rotary_backend=reader.choice(
            data, "rotary_backend", "inference.rotary_backend", "unstated", ROTARY_BACKENDS
        ),
        transformers_release=reader.choice(
            data, "transformers_release", "inference.transformers_release", "unstated", TRANSFORMERS_RELEASES
        ),
        expert_precision=reader.choice(
            data, "expert_precision", "inference.expert_precision", "model", EXPERT_PRECISIONS
        ),
        decode_attention=reader.choice(
            data, "decode_attention", "inference.decode_attention", "shared_kv", DECODE_ATTENTIONS
        ),
        traffic=reader.choice(data, "traffic", "inference.traffic", "streams", TRAFFICS),
        max_batched_tokens=_parse_max_batched_tokens(reader, data),
        **demand,
    )


def _parse_max_batched_tokens(reader: _Reader, data: dict) -> int | None:
    """inference.max_batched_tokens: a whole number in MAX_BATCHED_TOKENS_LIMITS, or None (the card's default)."""
    low, high = MAX_BATCHED_TOKENS_LIMITS
    value = reader.integer(data, "max_batched_tokens", "inference.max_batched_tokens", None, minimum=low)
    if value is not None and value > high:
        reader.error("inference.max_batched_tokens", f"must be at most {high:,} tokens, got {value:,}")
        return None
    return value


def _parse_quant_group_size(reader: _Reader, data: dict) -> int | None:
    """inference.quant_group_size: -1 (per output channel) or a whole number in QUANT_GROUP_SIZE_LIMITS."""
    if data.get("quant_group_size") is None:
        return None
    low, high = QUANT_GROUP_SIZE_LIMITS
    value = reader.integer(data, "quant_group_size", "inference.quant_group_size", None, minimum=-1)
    if value is None:
        return None
    if value != -1 and not low <= value <= high:
        reader.error(
            "inference.quant_group_size",
            f"input channels a scale covers: -1 (one scale per output channel) or {low} to {high}, got {value}",
        )
        return None
    return value


_HOST_KEYS = {"dataset_gb", "checkpoints_kept", "vcpus_per_gpu", "checkpoint"}


def _parse_host(reader: _Reader, data: dict, strict: bool) -> HostSpec:
    if strict:
        reader.unknown_keys(data, _HOST_KEYS, "host.")
    return HostSpec(
        dataset_gb=reader.number(data, "dataset_gb", "host.dataset_gb", None, minimum=0, exclusive=False),
        checkpoints_kept=reader.integer(data, "checkpoints_kept", "host.checkpoints_kept", 2, minimum=0),
        vcpus_per_gpu=reader.number(
            data, "vcpus_per_gpu", "host.vcpus_per_gpu", None, minimum=0, maximum=512
        ),
        checkpoint=reader.choice(data, "checkpoint", "host.checkpoint", "auto", CHECKPOINT_MODES),
    )


_IMAGE_BOOLS = (
    "vae_tiling",
    "vae_slicing",
    "text_encoder_offload",
    "train_text_encoder",
    "prior_preservation",
    "cache_latents",
    "autocast",
)
_IMAGE_KEYS = {
    "resolution_px",
    "steps",
    "guidance",
    "train_steps",
    "epochs",
    "dataset_images",
    "eval_every_epochs",
    "eval_images",
    "images",
    "text_tokens",
    "max_objects_per_image",
    "deterministic",
    "data_pipeline",
    "loader_workers",
    "source_megapixels",
    "quantize_text_encoders",
    "nf4_double_quant",
    "runtime",
    "memory_format",
    "engine",
    "engine_version",
    "fused_kernels",
    "tf32_matmul",
    "cache_text_embeddings",
    "unfused_lora_rank",
    "lora_module",
    "adafactor_scale_parameter",
    *_IMAGE_BOOLS,
}


def _parse_image(reader: _Reader, data: dict, strict: bool) -> int | None:
    if strict:
        reader.unknown_keys(data, _IMAGE_KEYS, "image.")
    return reader.integer(data, "resolution_px", "image.resolution_px", None)


def _parse_image_fields(reader: _Reader, data: dict, lora: LoraSpec | None) -> ImageSpec:
    targets = lora.targets[0] if lora is not None and lora.targets[0] in IMAGE_LORA_TARGETS else "attention"
    engine = reader.choice(data, "engine", "image.engine", "pytorch", IMAGE_ENGINES)
    # a TensorRT or FasterTransformer engine is a fused stack; unstated, TF32 follows the engine's default
    # (TF32_BY_DEFAULT_ENGINES: on for tensorrt only)
    fused = reader.optional_boolean(data, "fused_kernels", "image.fused_kernels")
    if fused is False and engine != "pytorch":
        reader.error("image.fused_kernels", f"a {engine} engine runs fused kernels: leave it out or true")
    tf32 = reader.optional_boolean(data, "tf32_matmul", "image.tf32_matmul")
    version = (
        reader.choice(data, "engine_version", "image.engine_version", "", FASTERTRANSFORMER_VERSIONS) or None
    )
    if version is not None and engine != "fastertransformer":
        reader.error(
            "image.engine_version", "names a FasterTransformer release: state image.engine fastertransformer"
        )
    return ImageSpec(
        engine=engine,
        engine_version=version,
        fused_kernels=engine != "pytorch" if fused is None else fused,
        tf32_matmul=engine in TF32_BY_DEFAULT_ENGINES if tf32 is None else tf32,
        steps=reader.integer(data, "steps", "image.steps", None),
        guidance=reader.choice(data, "guidance", "image.guidance", "preset", GUIDANCE),
        lora_targets=targets,
        lora_module=reader.choice(data, "lora_module", "image.lora_module", "peft", IMAGE_LORA_MODULES),
        adafactor_scale_parameter=reader.boolean(
            data, "adafactor_scale_parameter", "image.adafactor_scale_parameter", False
        ),
        train_steps=reader.integer(data, "train_steps", "image.train_steps", None),
        epochs=reader.number(data, "epochs", "image.epochs", None, minimum=0),
        dataset_images=reader.integer(data, "dataset_images", "image.dataset_images", None),
        eval_every_epochs=reader.number(
            data, "eval_every_epochs", "image.eval_every_epochs", None, minimum=0
        ),
        eval_images=reader.integer(data, "eval_images", "image.eval_images", None, minimum=1),
        images=reader.integer(data, "images", "image.images", None),
        text_tokens=reader.integer(data, "text_tokens", "image.text_tokens", None, minimum=1),
        max_objects_per_image=reader.integer(
            data, "max_objects_per_image", "image.max_objects_per_image", None, minimum=1
        ),
        deterministic=reader.boolean(data, "deterministic", "image.deterministic", True),
        quantize_text_encoders=reader.boolean(
            data, "quantize_text_encoders", "image.quantize_text_encoders", False
        ),
        nf4_double_quant=reader.boolean(data, "nf4_double_quant", "image.nf4_double_quant", True),
        data_pipeline=reader.choice(data, "data_pipeline", "image.data_pipeline", "preset", DATA_PIPELINES),
        loader_workers=reader.integer(data, "loader_workers", "image.loader_workers", None, minimum=1),
        source_megapixels=reader.number(
            data, "source_megapixels", "image.source_megapixels", None, minimum=0
        ),
        runtime=reader.choice(data, "runtime", "image.runtime", "optimized", IMAGE_RUNTIMES),
        # unstated: "" until the network is known (_default_memory_format)
        memory_format=reader.choice(data, "memory_format", "image.memory_format", "", MEMORY_FORMATS),
        cache_text_embeddings=reader.optional_boolean(
            data, "cache_text_embeddings", "image.cache_text_embeddings"
        ),
        unfused_lora_rank=reader.integer(
            data, "unfused_lora_rank", "image.unfused_lora_rank", None, minimum=1
        ),
        **{key: reader.boolean(data, key, f"image.{key}", False) for key in _IMAGE_BOOLS},
    )


def _check_autocast(reader: _Reader, spec, arch: ImageArchitecture) -> None:
    """image.autocast prices torch.autocast over a 16-bit UNet's eager generation (image_shapes.AUTOCAST_*):
    training's 16-bit precisions are already autocast over fp32 master weights, fp32 weights under autocast
    run every matmul through a weight cast (not counted), and a compiled stack fuses the casts."""
    if not spec.image.autocast:
        return
    if spec.is_training or not image_model.is_unet(spec):
        reader.error(
            "image.autocast",
            f"torch.autocast is counted for a UNet generation (inference); {arch.slug} {spec.task}: leave it out "
            "(training's fp16 / bf16 already runs under autocast)",
        )
    elif spec.precision != "fp16":
        # torch.autocast('cuda') runs at float16 unless a dtype is passed; autocast_mode.cpp's cached_cast casts
        # any floating tensor not of that dtype at every conv / linear and caches only fp32 leaves, so bf16 (or
        # fp32) weights would be cast every call (SD 1.5's UNet: 0.86e9 x 4 B a call), which is not counted
        reader.error(
            "image.autocast",
            f"counted over 16-bit weights at torch.autocast('cuda')'s default dtype, float16 (precision fp16); "
            f"precision is {spec.precision}: those weights would be cast to fp16 at every conv / linear, which "
            "is not counted (state precision fp16, or leave image.autocast out)",
        )
    elif spec.image.fused_kernels:
        reader.error(
            "image.autocast", "a compiled stack (image.fused_kernels) fuses autocast's casts: leave it out"
        )


def _check_tier_image_fields(reader: _Reader, spec) -> None:
    """A tier preset is sized from its guide's measured table, not from an architecture: the fields that
    count a generation's software stack (image.autocast's casts, image.runtime's rates) have nothing to act on."""
    if spec.image.autocast:
        reader.error(
            "image.autocast",
            f"{spec.model.preset} is a tier preset (the measured table's fallback), which does not count "
            "autocast's casts: name an architecture preset (e.g. sd-1.5) or leave image.autocast out",
        )
    if spec.image.runtime != "optimized":
        reader.error(
            "image.runtime",
            f"{spec.model.preset} is a tier preset (the measured table's fallback), which does not price a "
            "software stack: name an architecture preset (e.g. sd-1.5) or leave image.runtime out",
        )


def _check_loader_fields(reader: _Reader, spec, arch: ImageArchitecture) -> None:
    """The host loader's fields act in training only; the source size sets the mosaic pipeline's decode
    (the crop rate was measured on ImageNet's own photos, with no decode share to scale)."""
    for key in ("loader_workers", "source_megapixels"):
        if getattr(spec.image, key) is not None and not spec.is_training:
            reader.error(f"image.{key}", "the host's image loader is sized for training only")
    for key in ("eval_every_epochs", "eval_images"):
        if getattr(spec.image, key) is not None and not spec.is_training:
            reader.error(f"image.{key}", "a training run's evaluations: state a training task")
    crop = spec.image.data_pipeline == "crop" or (
        spec.image.data_pipeline == "preset" and arch.family not in ("detection",) and not arch.is_diffusion
    )
    if spec.image.source_megapixels is not None and crop:
        reader.error(
            "image.source_megapixels", "scales the mosaic pipeline's decode; the crop pipeline has none"
        )


# image fields that act in a generation only, stated away from their default (the reason in the error)
_INFERENCE_ONLY_IMAGE = {
    "steps": "a generation's denoising steps; a training run counts image.train_steps or image.epochs",
    "guidance": "a generation's guidance; a training step runs the denoiser once a sample",
    "text_encoder_offload": "offloads a generation's text encoders; for training cache their outputs "
    "(image.cache_text_embeddings)",
    "images": "a generation job's images; a training run counts image.train_steps or image.epochs",
}
# image fields that act in training too but whose training effect the engine does not size (the reason in the
# error). diffusers' enable_tiling / enable_slicing tile and slice the VAE's encode as well as its decode, and a
# training run encodes its images (latent caching, or every step without image.cache_latents): SimpleTuner sets
# vae_enable_tiling for its latent cache, whose 2048 px encode ran out of memory without it (aud50j). Training
# memory carries no VAE-encode activation peak, so the flag could change nothing: refused with that reason
_UNSIZED_IN_TRAINING_IMAGE = {
    "vae_tiling": "tiles the VAE's encode as well as a generation's decode (diffusers enable_tiling), but "
    "the training encode's peak is not sized (training memory carries no VAE-encode activations)",
    "vae_slicing": "slices the VAE's encode as well as a generation's decode (diffusers enable_slicing), but "
    "the training encode's peak is not sized (training memory carries no VAE-encode activations)",
}
# image fields that act in training only
_TRAINING_ONLY_IMAGE = {
    "train_steps": "a training run's steps; a generation job counts image.images",
    "epochs": "a training run's epochs; a generation job counts image.images",
    "dataset_images": "a training run's epoch; a generation job counts image.images",
    "train_text_encoder": "trains the text encoders",
    "prior_preservation": "DreamBooth's class images beside each training sample",
    "cache_latents": "a training run's cached VAE latents",
    "cache_text_embeddings": "a training run's cached text-encoder outputs (a generation: "
    "image.text_encoder_offload)",
    "data_pipeline": "the training loader's pipeline",
    "deterministic": "Ultralytics' deterministic training fill",
    "max_objects_per_image": "the training loss's assigner (objects of the densest image)",
}
_IMAGE_FIELD_DEFAULTS = {"guidance": "preset", "data_pipeline": "preset", "deterministic": True}


def _stated_image_fields(spec, fields: dict[str, str]) -> list[tuple[str, str]]:
    """(field, why) of `fields` the spec states away from their default (None or false unless listed)."""
    stated = []
    for key, why in fields.items():
        default = _IMAGE_FIELD_DEFAULTS.get(key)
        value = getattr(spec.image, key)
        if value != default and not (default is None and value is False):
            stated.append((key, why))
    return stated


def _check_task_fields(reader: _Reader, spec, arch: ImageArchitecture) -> None:
    """A field with no meaning for the spec's task is refused, naming it (a training spec once took a
    generation's fields and sized without them, aud50i fix request 1)."""
    wrong, other = (
        (_INFERENCE_ONLY_IMAGE, "a generation (task inference)")
        if spec.is_training
        else (_TRAINING_ONLY_IMAGE, "a training task")
    )
    for key, why in _stated_image_fields(spec, wrong):
        reader.error(f"image.{key}", f"{why}: it acts in {other} only, not in {spec.task}: leave it out")
    if spec.is_training:
        for key, why in _stated_image_fields(spec, _UNSIZED_IN_TRAINING_IMAGE):
            reader.error(f"image.{key}", f"{why}, so in {spec.task} it could change nothing: leave it out")
    if spec.is_training and spec.image.quantize_text_encoders:
        _check_training_text_encoder_quantization(reader, spec, arch)
    elif spec.image.quantize_text_encoders and not image_model.quantizes_text_encoders(spec):
        reader.error(
            "image.quantize_text_encoders",
            "quantizes the text encoders with the denoiser: state weight_quantization or an 8/4-bit "
            "precision (it has no effect without one)",
        )


def _check_training_stack_fields(reader: _Reader, spec, arch: ImageArchitecture) -> None:
    """image.lora_module names the adapters of a diffusion LoRA run; image.adafactor_scale_parameter the
    Adafactor of an adapter run (image_model.optimizer_host_seconds prices both; elsewhere they change nothing)."""
    if spec.image.lora_module != "peft" and not (spec.uses_adapters and arch.is_diffusion):
        reader.error(
            "image.lora_module",
            f"names a diffusion LoRA run's adapter modules; {arch.slug} {spec.task} has none: leave it out",
        )
    if spec.image.adafactor_scale_parameter and not (spec.optimizer == "adafactor" and spec.uses_adapters):
        reader.error(
            "image.adafactor_scale_parameter",
            f"sets transformers' Adafactor's scale_parameter, priced on an adapter run's per-tensor step; "
            f"optimizer {spec.optimizer}, task {spec.task}: leave it out",
        )


def _check_training_text_encoder_quantization(reader: _Reader, spec, arch: ImageArchitecture) -> None:
    """Training: ai-toolkit's 8-bit T5 (image_model.training_quantized_text_encoders), for a frozen,
    resident T5 only."""
    if spec.image.train_text_encoder:
        reason = "the text encoders are trained (image.train_text_encoder); 8 bits is for frozen ones"
    elif image_model.caches_text_embeddings(spec):
        reason = "the text encoders' outputs are cached (image.cache_text_embeddings), so none is resident"
    elif not image_model.training_quantized_text_encoders(spec):
        reason = f"{arch.slug} has no T5 text encoder (ai-toolkit holds T5 in 8 bits; CLIP stays 16-bit)"
    else:
        return
    reader.error("image.quantize_text_encoders", f"{reason}: leave it out")


def _default_memory_format(image: ImageSpec, arch) -> ImageSpec:
    """An unstated image.memory_format: nchw for an eager convolutional classifier, channels_last elsewhere
    (where it is refused when stated). NCHW is PyTorch's default contiguous layout and what the common recipes
    run unless told otherwise: timm train.py (--channels-last default False), torchvision's references, NVIDIA
    DLE's ConvNets main.py (--memory-format default nchw) and Lambda's benchmark runs of it (fixrn2, audrn's FIX
    LIST item 3); a run that converts the model and input to torch.channels_last states channels_last."""
    if image.memory_format:
        return image
    convnet = arch is not None and "convnet" in (image_model.image_presets().get(arch.slug) or {})
    eager = image.engine == "pytorch" and not image.fused_kernels
    return _replace(image, memory_format="nchw" if convnet and eager else "channels_last")


def _image_defaults(
    reader: _Reader,
    data: dict,
    arch: ImageArchitecture,
    fields: dict,
    image: ImageSpec,
    parallelism: ParallelismSpec,
    task: str,
) -> None:
    """An image preset's batch; one image per 'token' (seq_len 1); the run's images from its steps or
    epochs: train_steps x micro_batch x accumulation x GPUs, or epochs x dataset_images."""
    if data.get("micro_batch_size") is None:
        fields["micro_batch_size"] = arch.default_batch
    if data.get("precision") is None and arch.family == "detection":
        # Ultralytics trains and exports detectors with fp16 AMP by default (docs/en/modes/train.md:
        # `amp: True`, torch.cuda.amp autocast to float16), so T4 and V100 run them; bf16 is a choice
        fields["precision"] = "fp16"
    fields["seq_len"] = 1
    if task not in TRAINING_TASKS:
        return
    if image.train_steps is not None and image.epochs is not None:
        reader.error("image.epochs", "give image.train_steps or image.epochs, not both")
    if image.epochs is not None and image.dataset_images is None:
        reader.error("image.dataset_images", "required with image.epochs (images in one epoch)")
    if image.eval_every_epochs is not None and image.epochs is None:
        reader.error("image.eval_every_epochs", "evaluations are counted in epochs: state image.epochs")
    if image.eval_every_epochs is not None and image.eval_images is None:
        reader.error("image.eval_images", "required with image.eval_every_epochs (validation images)")
    if image.eval_images is not None and image.eval_every_epochs is None:
        reader.error("image.eval_images", "sizes an evaluation: state image.eval_every_epochs")
    if image.train_steps is not None:
        per_step = fields["micro_batch_size"] * fields["gradient_accumulation_steps"] * parallelism.gpus
        fields["training_tokens"] = float(image.train_steps * per_step)
    elif image.epochs is not None and image.dataset_images is not None:
        fields["training_tokens"] = float(image.epochs * image.dataset_images)


def _check_quant_format(reader: _Reader, spec: WorkloadSpec) -> None:
    """inference.quant_format / quant_group_size describe a served int4 checkpoint: refused elsewhere, and a
    group size needs a stated format (MXFP4's 32-wide block is the format's own)."""
    fmt, group = spec.inference.quant_format, spec.inference.quant_group_size
    served_int4 = spec.task == "inference" and spec.weight_quantization == "int4"
    if fmt != "unstated" and not served_int4:
        reader.error(
            "inference.quant_format",
            "names the format of a served int4 checkpoint: it needs task inference and weight_quantization int4 "
            f"(got {spec.task}, {spec.weight_quantization})",
        )
    if group is None:
        return
    if fmt == "unstated" or not served_int4:
        reader.error(
            "inference.quant_group_size",
            "is the group of a stated int4 format: it needs task inference, weight_quantization int4 and "
            f"inference.quant_format gptq or awq (got {spec.task}, {spec.weight_quantization}, {fmt})",
        )
    elif fmt == "mxfp4" and group != QUANT_FORMAT_GROUP_SIZES["mxfp4"]:
        reader.error(
            "inference.quant_group_size",
            f"mxfp4 scales blocks of 32 values (the OCP MX format's own block): leave it out, got {group}",
        )


# model.eager_layer -> the rotary backends its code can run (serving_host.ROTARY_BACKEND_KERNELS): only Qwen-1's
# flash-attn layers call flash-attn's apply_rotary_emb_func, whose code depends on the flash-attn release and build;
# every other layer rotates with its own eager code
_LAYER_ROTARY_BACKENDS = {
    "qwen1": ("triton", "cuda_ext", "eager"),
    "qwen1_unfused_norm": ("triton", "cuda_ext", "eager"),
}


def _check_rotary_backend(reader: _Reader, spec: WorkloadSpec, eager_loop: bool) -> None:
    backend = spec.inference.rotary_backend
    if backend == "unstated" or not eager_loop:
        return  # the eager-loop check above names a stated value outside an hf_eager loop
    layer = getattr(spec.model, "eager_layer", "llama")
    allowed = _LAYER_ROTARY_BACKENDS.get(layer, ("eager",))
    if backend not in allowed:
        reader.error(
            "inference.rotary_backend",
            f"model.eager_layer {layer} rotates q and k with its own eager code: rotary_backend {backend} means "
            "nothing there; triton and cuda_ext are flash-attn's rotary, which only Qwen-1's flash-attn layers "
            "(qwen1, qwen1_unfused_norm) call; state eager or leave it unstated",
        )


def _check_consistency(reader: _Reader, spec: WorkloadSpec, *, model_known: bool = True) -> None:
    """Rules that tie several fields together (model rules only once the model itself parsed)."""
    par, model = spec.parallelism, spec.model
    if spec.task == "qlora" and spec.precision not in ("bf16", "fp16"):
        reader.error("precision", f"qlora computes in 16 bits: use bf16 or fp16, got {spec.precision}")
    if spec.task == "qlora" and spec.weight_quantization == "none":
        reader.error("weight_quantization", "qlora needs quantized base weights (nf4, int4 or int8)")
    _check_quantization(reader, spec)
    if spec.task in ("pretrain", "full_finetune") and spec.weight_quantization != "none":
        reader.error(
            "weight_quantization", f"{spec.task} trains every weight: quantized weights need lora/qlora"
        )
    _check_quant_kernel(reader, spec)
    _check_quant_format(reader, spec)
    if spec.inference.quant_format == "mxfp4" and model_known and not model.is_moe:
        reader.error(
            "inference.quant_format",
            "mxfp4 quantizes a mixture-of-experts model's routed experts only (gpt-oss keeps attention, router, "
            "embeddings and lm_head in bf16, and vLLM has no MXFP4 dense linear): this model has no experts",
        )
    # Fields that only an eager transformers decode loop reads: stated elsewhere they would silently do nothing.
    eager_loop = spec.task == "inference" and spec.inference.engine == "hf_eager"
    for key, unset, what in (
        ("attn_implementation", "unstated", "names the transformers attention an eager decode loop runs"),
        ("generate_harness", "transformers", "names whose generate drives an eager decode loop"),
        ("rotary_backend", "unstated", "names the code that rotates q and k in an eager decode loop"),
        (
            "transformers_release",
            "unstated",
            "names the transformers release an eager decode loop's layers run",
        ),
    ):
        if getattr(spec.inference, key) != unset and not eager_loop:
            reader.error(
                f"inference.{key}",
                f"{key} {what}: it needs task inference and inference.engine hf_eager "
                f"(got {spec.task}, {spec.inference.engine})",
            )
    _check_rotary_backend(reader, spec, eager_loop)
    release = spec.inference.transformers_release
    if release != "unstated" and eager_loop and spec.inference.generate_harness != "transformers":
        # fixtr (audtr): a stated release's count is priced at the rate read on that count under plain transformers
        # generate (hf_generate_release_kernel_host_s); auto_gptq's 31 us was read on the unstated 51-kernel count
        # (AutoGPTQ @4b8524ff README llama-7b fp16), so no rate goes with a recount under it.
        reader.error(
            "inference.transformers_release",
            f"transformers_release {release} needs inference.generate_harness transformers (got "
            f"{spec.inference.generate_harness}): the host rate of a stated release was read on its own kernel count "
            "under plain transformers generate, and the auto_gptq rate (31 us a kernel) on the unstated count; leave "
            "transformers_release unstated with generate_harness auto_gptq",
        )
    elif release != "unstated" and eager_loop:
        layer, attn = spec.model.eager_layer, spec.inference.attn_implementation
        if (layer, release, attn) not in TRANSFORMERS_RELEASE_LAYERS:
            counted = ", ".join(f"{a} / {r} / {b}" for a, r, b in sorted(TRANSFORMERS_RELEASE_LAYERS))
            reader.error(
                "inference.transformers_release",
                f"no kernel count was read for transformers {release}'s {layer} decoder layer with "
                f"attn_implementation {attn}; counted (model.eager_layer / release / inference.attn_implementation): "
                f"{counted}; leave transformers_release unstated for the engine's default count",
            )
    if spec.inference.decode_attention != "shared_kv" and (
        spec.task != "inference" or spec.inference.engine == "hf_eager" or (model_known and model.is_image)
    ):
        reader.error(
            "inference.decode_attention",
            "per_query_head prices a compiled serving engine's decode attention kernel (TensorRT-LLM's pre-XQA masked "
            "MHA): it needs task inference, a language model and inference.engine compiled or vllm_v0 (got "
            f"{spec.task}, {spec.inference.engine}); an eager transformers loop states its attention in "
            "inference.attn_implementation",
        )
    if spec.inference.traffic != "streams" and (
        spec.task != "inference" or spec.inference.engine != "compiled" or (model_known and model.is_image)
    ):
        reader.error(
            "inference.traffic",
            "closed_loop prices a continuous-batching engine's mixed steps (prompts inside the decode steps): it "
            "needs task inference, a language model and inference.engine compiled (got "
            f"{spec.task}, {spec.inference.engine}); vllm_v0 runs prompts in steps of their own below a 32K "
            "max_model_len (its chunked prefill is off there by default), which closed_loop does not price",
        )
    if spec.inference.traffic == "closed_loop" and spec.inference.requests_per_second is not None:
        reader.error(
            "inference.requests_per_second",
            "inference.traffic closed_loop is a client that keeps concurrency requests open (its rate follows from "
            "the replies); inference.requests_per_second states an open-loop arrival rate: give one or the other",
        )
    budget = spec.inference.max_batched_tokens
    if budget is not None and (
        spec.inference.traffic != "closed_loop" or budget <= spec.inference.concurrency
    ):
        reader.error(
            "inference.max_batched_tokens",
            "max_batched_tokens is the scheduler's token budget a step under inference.traffic closed_loop and "
            f"must exceed inference.concurrency (the running decodes go first): got {budget:,} with traffic "
            f"{spec.inference.traffic} and concurrency {spec.inference.concurrency:,}",
        )
    if spec.inference.expert_precision != "model" and model_known:
        if not model.is_moe:
            reader.error(
                "inference.expert_precision",
                f"expert_precision states the routed experts' precision apart from the model's: it needs an MoE "
                f"model (num_experts > 1); {model.name or 'this model'} is dense, so its weights are at precision "
                f"({spec.precision}); leave expert_precision at model",
            )
        elif spec.task != "inference" or spec.weight_quantization != "none":
            reader.error(
                "inference.expert_precision",
                "expert_precision prices a serving engine's 16-bit experts beside the model's precision: it needs "
                f"task inference and weight_quantization none (got {spec.task}, {spec.weight_quantization})",
            )
    if (
        spec.task == "inference"
        and spec.inference.engine == "hf_eager"
        and spec.inference.kv_cache_dtype in ("fp8", "int8")
    ):
        reader.error(
            "inference.kv_cache_dtype",
            f"an eager transformers loop (inference.engine hf_eager) keeps its KV cache in the model's 16-bit "
            f"dtype (DynamicCache concatenates the keys and values as computed): {spec.inference.kv_cache_dtype} "
            "is a compiled engine's cache (vLLM, TensorRT-LLM). transformers' own QuantizedCache (4.42 and later, "
            'generate(cache_implementation="quantized"), quanto or HQQ) is not priced: it dequantizes the whole '
            "cache every step, which saves memory, not time; state bf16 or fp16, or inference.engine compiled",
        )
    if spec.fp8_weights and spec.precision != "fp8":
        reader.error("fp8_weights", f"fp8 weight storage needs precision fp8, got {spec.precision}")
    if spec.fp8_recipe != "transformer_engine" and spec.precision != "fp8":
        reader.error("fp8_recipe", f"an fp8 recipe needs precision fp8, got {spec.precision}")
    if spec.fp8_pad_inner_dim and spec.fp8_recipe != "torchao":
        reader.error(
            "fp8_pad_inner_dim",
            f"pad_inner_dim is a torchao Float8LinearConfig option: it needs fp8_recipe torchao, got {spec.fp8_recipe}",
        )
    if spec.fp8_weights and spec.weight_quantization != "none":
        reader.error(
            "fp8_weights",
            f"the base weights are either fp8 or {spec.weight_quantization}: set one of fp8_weights and "
            "weight_quantization",
        )
    if spec.is_training and spec.precision == "fp4":
        reader.error("precision", "fp4 is an inference precision; train in bf16, fp16, fp32 or fp8")
    if not par.gpus_auto and par.gpus % (par.tensor_parallel * par.pipeline_parallel):
        reader.error(
            "parallelism.gpus",
            f"must be a multiple of tensor_parallel x pipeline_parallel "
            f"({par.tensor_parallel} x {par.pipeline_parallel}), got {par.gpus}",
        )
    _check_splits(reader, spec)
    _check_packed_samples(reader, spec)
    _check_max_seq_len(reader, spec)
    _check_zero_grad(reader, spec)
    _check_cross_entropy(reader, spec)
    _check_optimizer_impl(reader, spec)
    if model_known:
        _check_recompute_modules(reader, spec)
    if par.offload != "none" and spec.is_training and par.zero_stage == 0:
        reader.error("parallelism.offload", "offload needs ZeRO: set parallelism.zero_stage to 1, 2 or 3")
    if par.offload == "optimizer_and_params" and spec.is_training and par.zero_stage != 3:
        reader.error("parallelism.offload", "parameter offload needs parallelism.zero_stage 3 (or fsdp)")
    if spec.inference.output_tokens >= spec.inference.context_len and spec.task == "inference":
        reader.error(
            "inference.output_tokens", f"must be < inference.context_len ({spec.inference.context_len})"
        )
    if not model_known:
        return
    if model.image_arch is not None:
        _check_image(reader, spec, model.image_arch)
        return
    if model.image_tier is not None:
        if spec.task not in model.image_tier.tasks:
            allowed = ", ".join(model.image_tier.tasks)
            reader.error("task", f"the {model.preset} tier covers {allowed}, not {spec.task}")
        _check_tier_image_fields(reader, spec)
        return
    if model.num_attention_heads % par.tensor_parallel:
        reader.error(
            "parallelism.tensor_parallel",
            f"must divide model.num_attention_heads ({model.num_attention_heads}), got {par.tensor_parallel}",
        )
    if par.pipeline_parallel > model.num_layers:
        reader.error("parallelism.pipeline_parallel", f"must be <= model.num_layers ({model.num_layers})")
    _check_split_model(reader, spec)
    _check_expert_overlap(reader, spec)
    _check_tp_comm_overlap(reader, spec)
    _check_reshard_after_forward(reader, spec)
    _check_deepspeed_buckets(reader, spec)
    _check_gradient_sync(reader, spec)


# inference.quant_kernel: what each kernel library needs (the weights it runs, the serving loops it runs in) and how
# an error names it; unstated needs nothing.
QUANT_KERNEL_NEEDS = {
    "exllama": ("int4", ("hf_eager",), "exllama runs 4-bit GPTQ weights in an eager transformers loop"),
    "marlin": (
        "int4",
        ("compiled", "vllm_v0"),
        "marlin is vLLM's 4-bit GEMM (gptq_marlin / awq_marlin)",
    ),
    "fused_gemv": (
        "int4",
        ("compiled",),
        "fused_gemv is a runtime's own fused 4-bit GEMV (calm gf4, MLC LLM q4f16, exllamav2, TinyChat / llm-awq; "
        "not TensorRT-LLM or llama.cpp) in its own decode loop",
    ),
    "cuda_old": (
        "int8",
        ("hf_eager",),
        "cuda_old is AutoGPTQ's 8-bit GPTQ linear (qlinear_cuda_old / qlinear_cuda) in an eager transformers loop",
    ),
}


def _check_quant_kernel(reader: _Reader, spec: WorkloadSpec) -> None:
    """A stated quantized-linear library runs only on its weights, for inference, in its serving loops."""
    needs = QUANT_KERNEL_NEEDS.get(spec.inference.quant_kernel)
    if needs is None:
        return
    weights, engines, what = needs
    if (
        spec.task != "inference"
        or spec.weight_quantization != weights
        or spec.inference.engine not in engines
    ):
        reader.error(
            "inference.quant_kernel",
            f"{what}: it needs task inference, weight_quantization {weights} and inference.engine "
            f"{' or '.join(engines)} (got {spec.task}, {spec.weight_quantization}, {spec.inference.engine})",
        )


def _check_gradient_sync(reader: _Reader, spec: WorkloadSpec) -> None:
    """last_micro_batch times a step's one gradient sync (DDP / ZeRO-1/2 training); ZeRO-3/FSDP moves its
    traffic every micro-batch."""
    par = spec.parallelism
    if par.gradient_sync == "last_micro_batch" and (par.zero_stage >= 3 or not spec.is_training):
        reader.error(
            "parallelism.gradient_sync",
            f"last_micro_batch times the one gradient sync of an accumulated step: needs training with "
            f"parallelism.zero_stage 0, 1 or 2, got zero_stage {par.zero_stage}",
        )


def _check_packed_samples(reader: _Reader, spec: WorkloadSpec) -> None:
    """Packed samples are a training input, shorter than the sequence they are packed into, and need a fused
    (flash) attention kernel: Megatron-Core's THD format and flash-attn's varlen kernels take the samples'
    boundaries (cu_seqlens); an eager score matrix spans the whole sequence."""
    packed = spec.packed_sample_tokens
    if packed is None:
        return
    if not spec.is_training:
        reader.error(
            "packed_sample_tokens", f"packs training samples: needs a training task, got {spec.task}"
        )
    elif packed > spec.seq_len:
        reader.error("packed_sample_tokens", f"must be <= seq_len ({spec.seq_len}), got {packed}")
    elif not spec.flash_attention:
        reader.error("packed_sample_tokens", "packed samples need flash_attention true (a varlen kernel)")
    elif spec.model.is_image:
        reader.error("packed_sample_tokens", "packs language-model samples: not for an image model")
    elif spec.attention_kernel != "engine":
        reader.error(
            "packed_sample_tokens",
            f"attention_kernel {spec.attention_kernel}'s published speeds are whole-sequence calls: state one or "
            "the other",
        )


def _check_max_seq_len(reader: _Reader, spec: WorkloadSpec) -> None:
    """The longest sequence of a training run whose samples vary in length: at least the mean (seq_len)."""
    longest = spec.max_seq_len
    if longest is None:
        return
    if not spec.is_training:
        reader.error(
            "max_seq_len", f"sizes a training run's longest batch: needs a training task, got {spec.task}"
        )
    elif spec.model.is_image:
        reader.error("max_seq_len", "the longest token sequence of a language model: not for an image model")
    elif longest < spec.seq_len:
        reader.error("max_seq_len", f"must be >= seq_len ({spec.seq_len}), got {longest}")
    elif longest > spec.seq_len and spec.packed_sample_tokens is not None:
        # packing fills every row to seq_len tokens: no batch is longer
        reader.error(
            "max_seq_len",
            f"packed rows (packed_sample_tokens) are seq_len ({spec.seq_len}) tokens each: state max_seq_len "
            f"{spec.seq_len} or leave it out, got {longest}",
        )


# Stacks whose gradients live in buffers of their own, which a torch zero_grad(set_to_none) does not free.
_PERSISTENT_GRADIENT_STACKS = {
    "megatron": "Megatron-Core keeps gradients in contiguous buffers of its own (its DistributedDataParallel)",
    "llm_c": "llm.c zeroes its grads_memory in place (gpt2_zero_grad's cudaMemset)",
    "maxtext": "MaxText is JAX: there is no torch zero_grad",
}


def _check_cross_entropy(reader: _Reader, spec: WorkloadSpec) -> None:
    """The training loss's vocabulary-sized tensors: an inference run computes no loss (aud50q item 7)."""
    if spec.cross_entropy != "fp32_softmax" and not spec.is_training:
        reader.error(
            "cross_entropy",
            f"says how a training run computes its loss: needs a training task, got {spec.task}; leave it out",
        )


def _check_zero_grad(reader: _Reader, spec: WorkloadSpec) -> None:
    """set_to_none: a torch training loop of a language model that frees its gradients between steps."""
    if spec.zero_grad == "in_place":
        return
    if not spec.is_training:
        reader.error(
            "zero_grad",
            f"says how a training loop clears its gradients: needs a training task, got {spec.task}",
        )
    elif spec.model.is_image:
        reader.error(
            "zero_grad",
            "set_to_none is counted for language models only; leave it in_place for an image model",
        )
    elif spec.training_stack in _PERSISTENT_GRADIENT_STACKS:
        reader.error(
            "zero_grad",
            f"set_to_none frees nothing on training_stack {spec.training_stack}: "
            f"{_PERSISTENT_GRADIENT_STACKS[spec.training_stack]}; leave it in_place",
        )


def _check_optimizer_impl(reader: _Reader, spec: WorkloadSpec) -> None:
    """fused: torch's fused AdamW, which torch 1.13 does not have (torch/optim/adamw.py at 1.13.1 has no `fused`
    argument; 2.0.1 adds _fused_adamw, both read in the PyPI wheels)."""
    if spec.optimizer_impl == "deepspeed_fused":
        _check_deepspeed_fused(reader, spec)
        return
    if spec.optimizer_impl != "fused":
        return
    if spec.optimizer != "adamw":
        reader.error(
            "optimizer_impl", f"fused is torch's fused AdamW: needs optimizer adamw, got {spec.optimizer}"
        )
    elif spec.torch_release is not None and spec.torch_release < (2, 0):
        reader.error("optimizer_impl", f"torch {spec.torch_version} has no fused AdamW (added in 2.0)")


def _check_deepspeed_fused(reader: _Reader, spec: WorkloadSpec) -> None:
    """deepspeed_fused: DeepSpeed's FusedAdam, which its engine builds from a config optimizer block (Adam / AdamW)
    and steps over ZeRO's fp32 master partitions (runtime/zero/stage_1_and_2.py single_partition_of_fp32_groups)."""
    if spec.optimizer != "adamw":
        reader.error(
            "optimizer_impl",
            f"deepspeed_fused is DeepSpeed's FusedAdam: needs optimizer adamw, got {spec.optimizer}",
        )
    elif spec.is_training and spec.parallelism.zero_stage == 0:
        reader.error(
            "optimizer_impl", "deepspeed_fused is DeepSpeed's ZeRO optimizer: set parallelism.zero_stage 1-3"
        )
    elif not spec.master_weights_fp32:
        reader.error(
            "optimizer_impl",
            "deepspeed_fused steps ZeRO's fp32 master partitions: needs master_weights_fp32 true",
        )
    elif spec.parallelism.offload != "none":
        reader.error(
            "optimizer_impl", "DeepSpeed builds its CPU Adam under offload, not FusedAdam: leave foreach"
        )


def _check_reshard_after_forward(reader: _Reader, spec: WorkloadSpec) -> None:
    """Only a training plan that shards its weights (ZeRO-3/FSDP) has anything to reshard."""
    par = spec.parallelism
    if not par.reshard_after_forward and (par.zero_stage < 3 or not spec.is_training):
        reader.error(
            "parallelism.reshard_after_forward",
            f"false keeps FSDP's gathered weights between forward and backward: needs training with "
            f"parallelism.zero_stage 3 or fsdp, got zero_stage {par.zero_stage}",
        )


def _check_deepspeed_buckets(reader: _Reader, spec: WorkloadSpec) -> None:
    """reduce_bucket_size / overlap_comm are DeepSpeed ZeRO-1/2's (stage_1_and_2.py): a training plan on zero_stage
    1 or 2 without a pipeline (DeepSpeed's pipeline engine allocates one buffer elsewhere, not counted here)."""
    par = spec.parallelism
    if par.reduce_bucket_size and (
        par.zero_stage not in (1, 2) or not spec.is_training or par.pipeline_parallel > 1
    ):
        reader.error(
            "parallelism.reduce_bucket_size",
            f"is DeepSpeed ZeRO-1/2's gradient bucket: needs training with parallelism.zero_stage 1 or 2 and "
            f"pipeline_parallel 1, got zero_stage {par.zero_stage}, pipeline_parallel {par.pipeline_parallel}",
        )
    if par.overlap_comm and not par.reduce_bucket_size:
        reader.error(
            "parallelism.overlap_comm",
            "doubles DeepSpeed ZeRO-1/2's gradient bucket: state parallelism.reduce_bucket_size with it",
        )
    if par.reduce_bucket_size and par.zero_stage == 2 and par.gradient_sync == "last_micro_batch":
        reader.error(
            "parallelism.gradient_sync",
            "last_micro_batch cannot hold under DeepSpeed ZeRO-2 (parallelism.reduce_bucket_size stated): it "
            "reduce-scatters the gradients at every micro-batch's backward",
        )


def _check_recompute_modules(reader: _Reader, spec: WorkloadSpec) -> None:
    """Megatron-Core's own rules for --recompute-modules (TransformerConfig.__post_init__: selective
    granularity only; mla_up_proj needs multi-latent attention, moe_act an MoE model). `mlp` recomputes the
    dense layers' MLP only (transformer_layer.py: "if not isinstance(self.mlp, MoELayer)"), so an MoE model
    needs dense layers (model.dense_layers, DeepSeek-V3's first_k_dense_replace 3) for it to do anything."""
    model, modules = spec.model, spec.recompute_modules
    if modules and spec.gradient_checkpointing != "selective":
        reader.error(
            "recompute_modules",
            f"names what selective recomputation drops: needs gradient_checkpointing selective, "
            f"got {spec.gradient_checkpointing}",
        )
    elif modules != ("core_attn",) and modules and model.is_image:
        reader.error("recompute_modules", "Megatron's transformer modules: not for an image model")
    if "mla_up_proj" in modules and not model.is_mla:
        reader.error("recompute_modules", "mla_up_proj needs multi-latent attention (a DeepSeek-V3 preset)")
    moe_only = [name for name in modules if name in MOE_RECOMPUTE_MODULES]
    if moe_only and not model.is_moe:
        reader.error(
            "recompute_modules", f"{', '.join(moe_only)} recompute an MoE layer; {model.name} is dense"
        )
    if "mlp" in modules and model.is_moe and not model.dense_layers:
        reader.error(
            "recompute_modules",
            f"mlp recomputes the dense layers' MLP (Megatron-Core skips MoE layers); {model.name} has no "
            "dense layer: state moe, moe_act or shared_experts",
        )
    if spec.fused_swiglu and not model.gated_mlp:
        reader.error("fused_swiglu", f"{model.name} has no gated (SwiGLU) MLP")
    if spec.gradient_checkpointing == "selective_op":
        _check_op_level_checkpointing(reader, spec)


def _check_op_level_checkpointing(reader: _Reader, spec: WorkloadSpec) -> None:
    """Where torchtitan's op-level policy is counted from its op list: a dense Llama-style block trained
    whole, in 16/32 bits or torchao float8. It saves aten.mm outputs by their order in the block; MoE
    routing, MLA and LoRA's extra matmuls change that order, and Transformer Engine's fp8 linears run its
    own GEMM ops, which the list does not name. torchao's Float8Linear still calls torch.mm (on Float8Tensor
    operands; the checkpoint's dispatch mode sees that aten.mm before the subclass turns it into
    torch._scaled_mm: pytorch/ao torchao/float8/float8_linear.py, stored version 024fe94f), so it counts."""
    model = spec.model
    if model.is_image or model.image_arch is not None or model.is_image_tier:
        why = "an image model"
    elif model.is_moe or model.is_mla:
        why = "an MoE or multi-latent-attention model (the block's matmul order differs)"
    elif spec.uses_adapters:
        why = "LoRA/QLoRA (the adapters' matmuls shift the every-second-matmul count)"
    elif spec.precision == "fp8" and spec.fp8_recipe != "torchao":
        why = "Transformer Engine fp8 (its GEMMs are not aten.mm; state fp8_recipe torchao for torchtitan)"
    else:
        return
    reader.error(
        "gradient_checkpointing",
        f"selective_op (torchtitan's op-level policy) is counted for dense full training, not {why}",
    )


def _check_splits(reader: _Reader, spec: WorkloadSpec) -> None:
    """Virtual pipeline, context and expert parallelism: training degrees that must tile the plan."""
    par = spec.parallelism
    for key in SPLIT_FIELDS:
        if getattr(par, key) > 1 and not spec.is_training:
            reader.error(f"parallelism.{key}", f"is a training degree; {spec.task} runs with 1")
    if split_stated(par) and not spec.is_training:
        reader.error(
            "parallelism.pipeline_parallel", f"an uneven pipeline split is for training, not {spec.task}"
        )
    _check_activation_offload(reader, spec)
    if par.virtual_pipeline > 1 and par.pipeline_parallel < 2:
        reader.error(
            "parallelism.virtual_pipeline",
            "interleaves pipeline stages: needs parallelism.pipeline_parallel > 1",
        )
    cp = par.context_parallel
    for length in ("seq_len", "max_seq_len"):  # the longest batch is split too
        tokens = getattr(spec, length)
        if cp > 1 and tokens and tokens % (2 * cp):
            # Megatron/Transformer Engine split a causal sequence into 2 x cp chunks (load balancing)
            reader.error(
                "parallelism.context_parallel",
                f"2 x context_parallel ({2 * cp}) must divide {length} ({tokens})",
            )
    model_parallel = par.tensor_parallel * par.pipeline_parallel * cp
    if not par.gpus_auto and cp > 1 and par.gpus % model_parallel:
        reader.error(
            "parallelism.gpus",
            f"must be a multiple of tensor_parallel x pipeline_parallel x context_parallel "
            f"({par.tensor_parallel} x {par.pipeline_parallel} x {cp}), got {par.gpus}",
        )
    # EP spans the tensor-parallel ranks too when it outgrows the data x context ones (expert tensor
    # parallel 1, Megatron-Core's expert grid: sizing/expert_layout.py)
    stage_ranks = par.gpus // par.pipeline_parallel
    if not par.gpus_auto and par.expert_parallel > 1 and stage_ranks % par.expert_parallel:
        reader.error(
            "parallelism.expert_parallel",
            f"must divide the tensor x data x context parallel ranks of a stage, parallelism.gpus / "
            f"pipeline_parallel = {stage_ranks}, got {par.expert_parallel}",
        )


def _check_activation_offload(reader: _Reader, spec: WorkloadSpec) -> None:
    """Megatron-Core's own limits on CPU activation offloading (TransformerConfig.__post_init__): training,
    no pipeline parallelism, no activation recomputation."""
    par, path = spec.parallelism, "parallelism.activation_offload_layers"
    if not par.activation_offload_layers:
        return
    if not spec.is_training:
        reader.error(path, f"offloads activations kept for backward: training only, not {spec.task}")
    elif spec.model.is_image or spec.model.is_image_tier:
        reader.error(path, "counts transformer layers of a language model; image models keep theirs")
    elif par.pipeline_parallel > 1:
        reader.error(
            path, "needs parallelism.pipeline_parallel 1 (Megatron-Core offloads no pipelined stage)"
        )
    elif spec.gradient_checkpointing == "full":
        reader.error(path, "offloads what recomputation would drop: not with gradient_checkpointing full")


def _check_split_model(reader: _Reader, spec: WorkloadSpec) -> None:
    par, model = spec.parallelism, spec.model
    if par.activation_offload_layers >= model.num_layers:
        reader.error(
            "parallelism.activation_offload_layers",
            f"must be < model.num_layers ({model.num_layers}), got {par.activation_offload_layers}",
        )
    chunks = par.pipeline_parallel * par.virtual_pipeline
    uneven = split_problem(par, model.num_layers)
    if uneven is not None:
        reader.error(*uneven)
    elif par.virtual_pipeline > 1 and model.num_layers < chunks and not split_stated(par):
        # Chunks that do not divide the layers are a plan PyTorch's pipelining runs (NeMo AutoModel's
        # layers_per_stage: DeepSeek-V3's 61 layers on PP 4 x VP 8); Megatron-LM needs an uneven split
        # stated for it. Unstated, the stages keep the balanced average, as under plain 1F1B.
        reader.error(
            "parallelism.virtual_pipeline",
            f"pipeline_parallel x virtual_pipeline ({par.pipeline_parallel} x {par.virtual_pipeline}) chunks "
            f"need a layer each: at most model.num_layers ({model.num_layers})",
        )
    if par.expert_parallel > 1 and not model.is_moe:
        reader.error(
            "parallelism.expert_parallel", f"needs a mixture-of-experts model; {model.name} is dense"
        )
    elif par.expert_parallel > 1 and model.num_experts % par.expert_parallel:
        reader.error(
            "parallelism.expert_parallel",
            f"must divide model.num_experts ({model.num_experts}), got {par.expert_parallel}",
        )


def _check_tp_comm_overlap(reader: _Reader, spec: WorkloadSpec) -> None:
    """Megatron-Core overlaps training's collectives; serving all-reduces are costed as they run. DTensor's
    model (dtensor_tp.py) pairs a dense block's collectives with its linears."""
    par = spec.parallelism
    if par.tp_comm_overlap and not spec.is_training:
        reader.error(
            "parallelism.tp_comm_overlap",
            "overlaps training's tensor-parallel collectives with its GEMMs (Megatron-Core): training only",
        )
    if par.tp_implementation == "dtensor" and not spec.is_training:
        reader.error(
            "parallelism.tp_implementation",
            "dtensor shapes training's tensor-parallel collectives (torchtitan): training only",
        )
    model = spec.model
    if par.tp_implementation == "dtensor" and (model.is_moe or model.is_mla or model.is_image):
        reader.error(
            "parallelism.tp_implementation",
            f"dtensor pairs each collective with a dense Llama-style block's linears; {model.name} is an MoE, "
            "multi-latent-attention or image model",
        )
    if par.context_parallel_comm != "p2p" and par.context_parallel < 2:
        reader.error(
            "parallelism.context_parallel_comm",
            f"shapes context parallelism's K/V exchange: needs parallelism.context_parallel > 1, got "
            f"{par.context_parallel}",
        )


def _check_expert_overlap(reader: _Reader, spec: WorkloadSpec) -> None:
    par, model = spec.parallelism, spec.model
    for key, default in (
        ("expert_overlap", "none"),
        ("expert_dispatch", "alltoall"),
        ("expert_routing", "learned"),
    ):
        if getattr(par, key) != default and par.expert_parallel < 2:
            reader.error(
                f"parallelism.{key}",
                f"shapes expert parallelism's all-to-alls: needs parallelism.expert_parallel > 1, "
                f"got {par.expert_parallel}",
            )
    _check_expert_tensor_parallel(reader, spec)
    groups, per_token = model.expert_groups, model.expert_groups_per_token
    if per_token and (not groups or per_token > groups or model.num_experts % groups):
        reader.error(
            "model.expert_groups_per_token",
            f"needs model.expert_groups dividing num_experts ({model.num_experts}) and >= it, got "
            f"{per_token} of {groups}",
        )


def _check_expert_tensor_parallel(reader: _Reader, spec: WorkloadSpec) -> None:
    """Megatron-Core's rules for --expert-tensor-parallel-size as the engine lays experts out: 1 or tp, with
    expert parallelism, and expert TP x EP x PP dividing the GPUs (parallel_state.py
    initialize_model_parallel: 'world_size % expert_tensor_model_pipeline_parallel_size')."""
    par = spec.parallelism
    etp = par.expert_tensor_parallel
    if etp is None:
        return
    path = "parallelism.expert_tensor_parallel"
    if par.expert_parallel < 2:
        reader.error(
            path,
            f"lays out expert parallelism: needs parallelism.expert_parallel > 1, got {par.expert_parallel}",
        )
    elif etp not in (1, par.tensor_parallel):
        reader.error(path, f"must be 1 or parallelism.tensor_parallel ({par.tensor_parallel}), got {etp}")
    elif par.gpus % (etp * par.expert_parallel * par.pipeline_parallel):
        reader.error(
            path,
            f"expert tensor parallel x expert_parallel x pipeline_parallel ({etp} x {par.expert_parallel} x "
            f"{par.pipeline_parallel}) must divide parallelism.gpus ({par.gpus})",
        )


def _check_image(reader: _Reader, spec: WorkloadSpec, arch: ImageArchitecture) -> None:
    par = spec.parallelism
    if arch.inference_only and spec.is_training:
        reader.error("task", f"{arch.slug} is sized for inference only (no activation model for training)")
    if spec.uses_adapters and arch.family == "detection":
        reader.error("task", f"{arch.slug}: LoRA is for diffusion and ViT presets; detectors train fully")
    if spec.uses_adapters and image_model.is_convnet(spec):
        # LoRA's targets are attention / linear layers (IMAGE_LORA_TARGETS); a convnet has one linear, the fc
        # head, so sizing it would price a run with no adapters at all
        reader.error(
            "task",
            f"{arch.slug} is a convolutional classifier: LoRA places its adapters on attention and linear "
            f"layers and it has none to adapt (only its fc head), so {spec.task} has no adapters to place: "
            "train it fully (task full_finetune)",
        )
    if spec.image.memory_format != "channels_last" and (
        not image_model.is_convnet(spec) or spec.image.fused_kernels
    ):
        reader.error(
            "image.memory_format",
            f"sets a convolutional classifier's eager activation layout; {arch.slug}"
            + (
                " runs a fused engine, which picks its own layout"
                if image_model.is_convnet(spec)
                else " is not one"
            )
            + ": leave it out",
        )
    if par.tensor_parallel > 1 or par.pipeline_parallel > 1:
        reader.error(
            "parallelism.tensor_parallel", "image presets run data parallel only (tensor/pipeline 1)"
        )
    for key in SPLIT_FIELDS:
        if getattr(par, key) > 1:
            reader.error(f"parallelism.{key}", "image presets run data parallel only (1)")
    if spec.image.images and spec.inference.demand_tokens_per_second is not None:
        reader.error("image.images", "a generation job (image.images) or a serving demand, not both")
    if spec.image.text_tokens is not None and image_model.text_tokens_fixed(arch.slug):
        reader.error("image.text_tokens", f"{arch.slug} has no joint text tokens to set (a DiT preset has)")
    yolo = arch.family == "detection" and image_model.is_yolo(spec)
    if not yolo and not spec.image.deterministic:
        reader.error(
            "image.deterministic", f"{arch.slug} is not a YOLO detector (Ultralytics' deterministic fill)"
        )
    if not yolo and spec.image.max_objects_per_image is not None:
        reader.error(
            "image.max_objects_per_image", f"{arch.slug} is not a YOLO detector (YOLO presets have one)"
        )
    if not arch.is_diffusion and spec.image.steps is not None:
        reader.error("image.steps", f"{arch.slug} is not a diffusion model")
    if not spec.image.nf4_double_quant and spec.weight_quantization != "nf4":
        reader.error(
            "image.nf4_double_quant",
            f"sets how NF4 weights keep their block scales; weight_quantization is {spec.weight_quantization}, "
            "not nf4: leave it out",
        )
    _check_loader_fields(reader, spec, arch)
    _check_task_fields(reader, spec, arch)
    _check_training_stack_fields(reader, spec, arch)
    if spec.image.unfused_lora_rank is not None and (spec.is_training or not image_model.is_unet(spec)):
        reader.error(
            "image.unfused_lora_rank",
            f"an unfused LoRA is counted on a UNet generation (inference); {arch.slug} {spec.task}: "
            "leave it out (training adapters go in lora.rank)",
        )
    if spec.image.engine != "pytorch" and spec.is_training:
        reader.error(
            "image.engine",
            f"{spec.image.engine} is an inference engine; {spec.task} runs in PyTorch: leave it out",
        )
    if spec.image.engine == "fastertransformer" and arch.family != "vision":
        reader.error(
            "image.engine",
            f"fastertransformer is sized for ViT classifiers (its ViT model); {arch.slug} is not one",
        )
    _check_autocast(reader, spec, arch)
    if spec.image.runtime != "optimized" and (not arch.is_diffusion or spec.is_training):
        reader.error(
            "image.runtime",
            f"{spec.image.runtime!r} is a diffusion generation's software stack (inference); "
            f"{arch.slug} {spec.task} runs at the engine's own rates: leave it 'optimized'",
        )
