"""OpenAPI documentation of the two documents the API takes: the workload spec (docs/workload-spec.md)
and the TCO study (docs/tco-spec.md).

These serializers only describe the documents for the schema; the parsers (procurement/sizing/spec.py,
procurement/costing/tco_spec.py) stay the validators, with their own error paths. Every field a parser
accepts is listed here, and tests/procurement/test_spec_schemas.py fails when the two drift apart.
Numbers are JSON numbers; money is read as a decimal, to the cent or finer.
"""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from procurement.costing.tco_spec import (
    COMMITTED_PRICING_MODELS,
    DEPRECIATION_METHODS,
    FINANCING_KINDS,
    MAX_FINANCING_TERM_MONTHS,
    MAX_GPUS_PER_SERVER,
    MAX_HORIZON_MONTHS,
    MAX_SERVERS,
    RENT_PRICING_MODELS,
)
from procurement.sizing.distillation import DISTILLATION_MODES, MAX_TOP_K, TEACHER_PRECISIONS
from procurement.sizing.image_spec import (
    DATA_PIPELINES,
    FASTERTRANSFORMER_VERSIONS,
    GUIDANCE,
    IMAGE_ENGINES,
    IMAGE_LORA_MODULES,
    IMAGE_RUNTIMES,
    MEMORY_FORMATS,
)
from procurement.sizing.serving_load import MAX_BATCHED_TOKENS_LIMITS, TRAFFICS
from procurement.sizing.spec import (
    ACTIVATION_OFFLOAD_LIMIT,
    ATTENTION_KERNELS,
    ATTN_IMPLEMENTATIONS,
    CHECKPOINT_MODES,
    CHECKPOINTING,
    CONTEXT_PARALLEL_COMMS,
    CROSS_ENTROPY,
    DECODE_ATTENTIONS,
    DEMAND_LIMITS,
    EAGER_LAYERS,
    EXPERT_DISPATCHES,
    EXPERT_OVERLAPS,
    EXPERT_PRECISIONS,
    EXPERT_ROUTINGS,
    FP8_RECIPES,
    GENERATE_HARNESSES,
    GRADIENT_SYNCS,
    KV_DTYPES,
    MAX_SPEC_NUMBER,
    MIXED_PRECISION_STYLES,
    OFFLOADS,
    OPTIMIZER_IMPLS,
    OPTIMIZERS,
    PRECISIONS,
    QUANT_FORMATS,
    QUANT_KERNELS,
    QUANTIZATIONS,
    RECOMPUTE_MODULES,
    ROTARY_BACKENDS,
    SERVING_ENGINES,
    SPLIT_LIMITS,
    TASKS,
    TP_IMPLEMENTATIONS,
    TRAINING_STACKS,
    TRANSFORMERS_RELEASES,
    ZERO_GRAD,
)


def _count(help_text: str, minimum: int = 1, maximum: int | None = None) -> serializers.IntegerField:
    return serializers.IntegerField(
        required=False, min_value=minimum, max_value=maximum or int(MAX_SPEC_NUMBER), help_text=help_text
    )


def _number(help_text: str, minimum: float = 0, maximum: float = MAX_SPEC_NUMBER) -> serializers.FloatField:
    return serializers.FloatField(required=False, min_value=minimum, max_value=maximum, help_text=help_text)


def _choice(choices, help_text: str, required: bool = False) -> serializers.ChoiceField:
    return serializers.ChoiceField(choices=sorted(choices), required=required, help_text=help_text)


def _flag(help_text: str) -> serializers.BooleanField:
    return serializers.BooleanField(required=False, help_text=help_text)


@extend_schema_field(
    {"oneOf": [{"type": "integer", "minimum": 0, "maximum": 3}, {"type": "string", "enum": ["fsdp"]}]}
)
class ZeroStageField(serializers.Field):
    """ZeRO stage 0-3, or "fsdp" (FULL_SHARD shards like ZeRO-3)."""


@extend_schema_field({"oneOf": [{"type": "integer", "minimum": 1}, {"type": "string", "enum": ["auto"]}]})
class GpusField(serializers.Field):
    """GPUs the job runs on (a contract the ranking honours), or "auto" (the ranking explores every count)."""


class WorkloadModelSerializer(serializers.Serializer):
    preset = serializers.CharField(
        required=False, help_text="A bundled model (e.g. llama-3.1-8b); fields below override it"
    )
    name = serializers.CharField(required=False)
    params = _number("Total parameters; counted from the shape when left out")
    params_active = _number(
        "Parameters a token multiplies (mixture of experts): blocks' active weights and the output head, not the "
        "input embedding lookup (DeepSeek's and OpenAI's convention; Mixtral's, Qwen's and Kimi's published "
        "figures count the input table too: subtract vocab x hidden)"
    )
    num_layers = _count("Transformer layers")
    hidden_size = _count("Hidden size")
    num_attention_heads = _count("Attention heads")
    num_key_value_heads = _count("Key/value heads (grouped-query attention); default: attention heads")
    intermediate_size = _count("MLP intermediate size")
    vocab_size = _count("Vocabulary size")
    head_dim = _count("Head dimension; default: hidden size / heads")
    num_experts = _count("Experts per MoE layer (1: dense)")
    experts_per_token = _count("Experts routed per token")
    moe_intermediate_size = _count("Intermediate size of one expert")
    kv_elems_per_token_per_layer = _count(
        "KV-cache elements per token per layer (MLA and other compressed caches)"
    )
    shared_experts = _count("Shared experts per MoE layer", minimum=0)
    dense_layers = _count("Leading dense layers of an MoE model", minimum=0)
    expert_groups = _count("Groups the routed experts fall in for node-limited routing (0: none)", minimum=0)
    expert_groups_per_token = _count(
        "Expert groups one token may reach (DeepSeek's topk_group; 0: any)", minimum=0
    )
    sliding_window = _count(
        "Sliding-window attention: tokens a query of a windowed layer attends to at most (HF config "
        "sliding_window; 0: full attention)",
        minimum=0,
    )
    sliding_window_layers = _count(
        "Layers that use the sliding window (GPT-OSS and Gemma 2: half, Mistral 7B v0.1: all); default: every "
        "layer once sliding_window is set",
        minimum=0,
    )
    q_lora_rank = _count(
        "Multi-head latent attention: query latent width (config.json q_lora_rank; 0: queries projected whole)",
        minimum=0,
    )
    kv_lora_rank = _count(
        "Multi-head latent attention: key/value latent width (config.json kv_lora_rank; 0: not MLA)",
        minimum=0,
    )
    qk_nope_head_dim = _count(
        "MLA: query/key head width without RoPE; head_dim becomes qk_nope + qk_rope", minimum=0
    )
    qk_rope_head_dim = _count("MLA: the shared RoPE key's width (DeepSeek-V3: 64)", minimum=0)
    v_head_dim = _count("MLA: value head width (DeepSeek-V3: 128)", minimum=0)
    mtp_layers = _count(
        "Multi-token prediction modules trained beside the model (config.json num_nextn_predict_layers; the "
        "deepseek-v3 preset: 1, counted in training FLOPs; 0: none)",
        minimum=0,
    )
    eager_layer = _choice(
        EAGER_LAYERS,
        "inference.engine hf_eager: the decoder layer the eager loop runs (unstated: the preset's architecture, "
        "qwen2 for the Qwen2.5 presets, mistral for mistral-7b, else llama; llama: transformers' "
        "LlamaDecoderLayer, 51 kernels a decode step, whose flash_attention_2 class hands flash-attn the KV heads "
        "as they are (Llama code only); qwen1: Qwen-1's QWenBlock with flash-attn's fused norm and rotary, 23; "
        "qwen1_unfused_norm: the same with flash-attn 2 but without its optional csrc/layer_norm build (eager "
        "RMSNorms), 37; qwen1_no_flash: Qwen-1's layer without flash-attn (eager norms and rotary, SDPA), 45; "
        "qwen2: transformers' Qwen2DecoderLayer, priced with the Llama count, whose flash_attention_2 class also "
        "repeats a grouped KV cache per query head in transformers 4.37-4.47 (not from 4.48.0); mistral: "
        "transformers' MistralDecoderLayer, priced with the Llama count, whose eager, sdpa and flash_attention_2 "
        "classes all repeat it (4.38-4.46))",
    )
    tie_word_embeddings = _flag("Input and output embeddings shared")
    gated_mlp = _flag("Gated MLP (SwiGLU: three matrices)")
    attention_qkv_bias = _flag("Bias on the q, k, v projections")
    dropout = _flag("Dropout masks kept for backward")


class WorkloadDistillationSerializer(serializers.Serializer):
    teacher = WorkloadModelSerializer(
        help_text="The teacher whose logits the student learns from: a bundled preset or its shape, as model "
        "(a preset name alone is read as its preset); its vocabulary must equal the student's"
    )
    mode = _choice(
        DISTILLATION_MODES,
        "online (default): the teacher runs a forward a student token on the same GPUs, its weights held at "
        "teacher_precision and its logits (micro-batch x sequence x vocabulary) with a fp32 softmax of them held "
        "for the loss, 2 FLOPs a teacher weight a token with its attention; precomputed: top_k logits a token "
        "read from storage, no teacher compute or weights",
    )
    teacher_precision = _choice(TEACHER_PRECISIONS, "The teacher's weights and logits (online; default bf16)")
    top_k = _count(
        "precomputed: stored logits a token (value and index, 8 bytes each); default the whole vocabulary",
        maximum=MAX_TOP_K,
    )
    temperature = _number(
        "The softmax temperature; accepted, not priced (it changes no tensor's size)", maximum=1000
    )
    include_logit_generation = _flag(
        "precomputed: price the one-off teacher pass that wrote the logits (one teacher forward a trained token)"
    )


class WorkloadLoraSerializer(serializers.Serializer):
    rank = _count("Adapter rank r")
    targets = serializers.ListField(
        child=serializers.CharField(),
        required=False,
        help_text="Module names (q_proj ... down_proj, fused names such as query_key_value, c_attn, Wqkv) or 'all-linear'; image presets: ['attention'] or ['all-linear']",
    )
    alpha = _number("LoRA alpha (does not change memory or speed)")
    dropout = _number("LoRA dropout", maximum=1)
    implementation = serializers.ChoiceField(
        choices=["peft_eager", "fused", "compiled"],
        required=False,
        help_text="How the adapters run (language models): peft_eager (HF PEFT modules in eager PyTorch, the "
        "default) pays a host floor a layer and micro-batch, the step taking the longer of the GPU's work and the "
        "host's kernels; fused (NeMo / Megatron adapters, unsloth) and compiled (torch.compile) do not",
    )
    adapter_dtype = serializers.ChoiceField(
        choices=["base", "fp32"],
        required=False,
        help_text="The adapters' dtype (peft_eager, language models only): base (the default; the base weights' "
        "dtype, peft 0.6 to 0.11) or fp32 (fp32 adapters on a 16-bit base under torch autocast, e.g. peft 0.5, or "
        "peft >= 0.12 whose get_peft_model upcasts adapters to fp32 by default, with HF Trainer --bf16 and no "
        "DeepSpeed): PEFT's input cast and autocast's 3 casts an adapted linear each forward pass and 4 cast "
        "gradients backward join the host floor, at an assumed 7 us a cast",
    )
    modules_to_save = serializers.ListField(
        child=serializers.CharField(),
        required=False,
        max_length=8,
        help_text="Whole modules trained beside the adapters (PEFT's modules_to_save, axolotl's lora_modules_to_save; "
        "language models only): embed_tokens / wte / word_embeddings / embeddings for the input table, lm_head / "
        "output for the output layer, plain or dotted (model.embed_tokens, matched by the last component as PEFT "
        "matches by suffix); a YAML spec may give one comma-separated string (LLaMA-Factory's additional_target). "
        "Each is a trainable copy of the vocab x hidden table at the base weights' dtype (PEFT's "
        "ModulesToSaveWrapper; fp32 on zero_stage 0 under qlora nf4 / int8 and under fp16) with its gradient and "
        "optimizer states (AdamW states in the copy's dtype on zero_stage 0, fp32 master and states under ZeRO), "
        "the optimizer step's transient peak over the copies, the output copy's weight-gradient GEMM (2 x vocab x "
        "hidden FLOPs a token), the copies' gradient passes and their optimizer step",
    )


class WorkloadQuantizationSerializer(serializers.Serializer):
    bnb_version = serializers.CharField(
        required=False,
        help_text="qlora with nf4 on a language model: the bitsandbytes release the run uses, 'current' (the "
        "default: 0.43.2 or later) or a release such as '0.41.1'. Before 0.43.2 MatMul4Bit keeps every 4-bit "
        "linear's input (ctx.tensors), charged as activations; before 0.43.0 the 4-bit weights are stored fp16, so "
        "under bf16 compute the unpacked fp16 weight and its bf16 cast are alive together at the backward's start. "
        "Memory only",
    )
    lm_head_4bit = _flag(
        "qlora with nf4 on a language model: the output layer is 4-bit too (LitGPT / Lightning's bitsandbytes "
        "plugin quantizes every nn.Linear; transformers and peft keep it 16-bit, the default): its weights at the "
        "NF4 bytes, plus its unpacked copies at the backward's start. Memory only"
    )
    bnb_storage_dtype = serializers.ChoiceField(
        choices=["compute", "fp16"],
        required=False,
        help_text="qlora with nf4 on a language model: the dtype the 4-bit weights were quantized from, which "
        "dequantize_4bit returns: 'compute' or 'fp16' (Lightning's plugin at every release; transformers when no "
        "torch_dtype is given). fp16 under bf16 compute keeps an fp16 copy and its bf16 cast alive at the backward's "
        "start. Unstated: fp16 with lm_head_4bit or a bitsandbytes release before 0.43.0 (compute refused there), "
        "else compute. Memory only",
    )
    nf4_double_quant = _flag(
        "weight_quantization nf4 on a language model: the block scales quantized again (QLoRA double quantization, "
        "4.127 bits a weight; the default). false: one float32 absmax per 64 weights, 4.5 bits (LitGPT bnb.nf4, "
        "BitsAndBytesConfig's default bnb_4bit_use_double_quant=False)"
    )
    prepare_kbit = _flag(
        "qlora with weight_quantization nf4 or int8 (bitsandbytes) on a dense language model: peft's "
        "prepare_model_for_kbit_training cast the embeddings, head and norms to fp32 and nothing cast them back, "
        "so they hold 4 bytes a weight instead of 2. false (default): 16-bit, as after TRL's SFTTrainer or "
        "artidoro/qlora under bf16, which cast them back. Refused for GPTQ int4 (peft skips the cast) and other "
        "tasks. Memory only"
    )


class WorkloadParallelismSerializer(serializers.Serializer):
    gpus = GpusField(
        required=False,
        help_text="GPUs the job runs on, or 'auto'; stated gpus, zero_stage, tensor_parallel and pipeline_parallel "
        "are honoured by recommend (other plans only with 'auto' or explore_parallelism)",
    )
    zero_stage = ZeroStageField(required=False, help_text="0, 1, 2, 3 or 'fsdp' (sharding like ZeRO-3)")
    tensor_parallel = _count("Tensor-parallel degree")
    pipeline_parallel = _count("Pipeline-parallel degree")
    virtual_pipeline = _count(
        "Training: model chunks per pipeline stage (Megatron's interleaved 1F1B, bubble (p - 1) / (v m)); "
        "needs pipeline_parallel > 1 and pipeline_parallel x virtual_pipeline dividing model.num_layers",
        maximum=SPLIT_LIMITS["virtual_pipeline"],
    )
    context_parallel = _count(
        "Training: GPUs splitting each sequence (Megatron context parallelism; GPUs = tp x pp x cp x dp); "
        "2 x context_parallel divides seq_len",
        maximum=SPLIT_LIMITS["context_parallel"],
    )
    expert_parallel = _count(
        "Training, mixture-of-experts: GPUs sharing the routed experts (each holds num_experts / ep); divides "
        "model.num_experts and gpus / (tensor_parallel x pipeline_parallel)",
        maximum=SPLIT_LIMITS["expert_parallel"],
    )
    expert_tensor_parallel = _count(
        "Training with expert_parallel > 1: Megatron-Core --expert-tensor-parallel-size, 1 or tensor_parallel "
        "(unstated: tensor_parallel, or 1 where expert_parallel only divides gpus / pipeline_parallel). 1 keeps "
        "whole experts on each GPU and lays each EP group over consecutive ranks, the tensor-parallel ones "
        "included; expert TP x EP x PP divides gpus"
    )
    account_for_embedding = _flag(
        "Training: the embedding counts as a layer of the pipeline split (Megatron-LM "
        "--account-for-embedding-in-pipeline-split); num_layers + the accounted slots divisible by pp x vp"
    )
    account_for_loss = _flag(
        "Training: the output head and loss count as a layer of the pipeline split (Megatron-LM "
        "--account-for-loss-in-pipeline-split)"
    )
    pipeline_layers_first = _count(
        "Training: transformer layers on the first pipeline stage (Megatron-LM "
        "--decoder-first-pipeline-num-layers); the other stages share the rest evenly"
    )
    pipeline_layers_last = _count(
        "Training: transformer layers on the last pipeline stage (Megatron-LM --decoder-last-pipeline-num-layers)"
    )
    offload = _choice(OFFLOADS, "CPU offload of optimizer state or parameters")
    expert_overlap = _choice(
        EXPERT_OVERLAPS,
        "Training with expert_parallel > 1: how the experts' all-to-alls meet computation: none (critical path, "
        "default); partial, Megatron-Core's 1F1B A2A overlap; dualpipe, DeepSeek-V3's schedule; shared_experts, "
        "hidden under the shared experts' compute (Megatron-Core --moe-shared-expert-overlap, NeMo AutoModel)",
    )
    expert_dispatch = _choice(
        EXPERT_DISPATCHES,
        "Training with expert_parallel > 1: alltoall, every routed copy (default); deepep, one copy a rank and "
        "node holding a token's experts (FP8 dispatch under fp8); hybridep, NVIDIA's HybridEP backend",
    )
    expert_routing = _choice(
        EXPERT_ROUTINGS,
        "Training with expert_parallel > 1: learned, the model's router (default); balanced, a benchmark's fake "
        "balanced gate giving token i experts i k .. i k + k - 1 (NeMo AutoModel fake_balanced_gate), so DeepEP "
        "sends a token only to the ranks and nodes of that block",
    )
    tp_comm_overlap = _flag(
        "Training: Megatron-Core --tp-comm-overlap (Transformer Engine userbuffers): the tensor-parallel "
        "all-gathers and reduce-scatters run under the linear layers' GEMMs; default false (Megatron-Core's)"
    )
    tp_implementation = _choice(
        TP_IMPLEMENTATIONS,
        "Training with tensor_parallel > 1: who runs it: megatron, Megatron-Core / Transformer Engine (default; "
        "tp_comm_overlap is userbuffers); dtensor, PyTorch DTensor as torchtitan runs it (sequence sharded on "
        "[b, s, h], a copy of the gathered tensor around each collective; tp_comm_overlap is PyTorch's async TP, "
        "each collective hidden only under its own matmuls, the backward input-gradient reduce-scatters exposed). "
        "Dense models only",
    )
    reshard_after_forward = _flag(
        "Training with zero_stage 3 / fsdp: FSDP2's fully_shard(reshard_after_forward); false keeps each "
        "stage's parameters gathered between forward and backward (torchtitan's rule under pipeline "
        "parallelism), and with pipeline parallelism its gradients unsharded until the last micro-batch; "
        "default true (FSDP2's)"
    )
    reduce_bucket_size = _count(
        "Training with zero_stage 1 or 2, pipeline_parallel 1: DeepSpeed's zero_optimization.reduce_bucket_size "
        "(elements): its ZeRO-1/2 optimizer allocates a gradient staging buffer of this many 16-bit elements at "
        "every backward (contiguous_gradients, DeepSpeed's default), released at the end of that backward, so beside "
        "its peak; default 0, not counted (DeepSpeed's own default is 5e8: state it for a run that leaves it out)",
        minimum=0,
    )
    overlap_comm = _flag(
        "With reduce_bucket_size: DeepSpeed's zero_optimization.overlap_comm; true allocates a second bucket "
        "(DeepSpeed's double buffer) and runs the gradient reduce-scatters beside the backward; false runs them on the "
        "backward's stream, every one exposed (ZeRO-2: one a micro-batch; ZeRO-1: one a step); default false "
        "(DeepSpeed's default below ZeRO-3)"
    )
    offload_pin_memory = _flag(
        "With offload (refused without it): DeepSpeed's offload_optimizer / offload_param pin_memory; sets the rate "
        "of the offload's host<->GPU copies, page-locked (pcie_host_link_gbps) when true, pageable "
        "(pageable_host_link_gbps, DeepSpeed's default) when false; default false"
    )
    offload_cpu_cores_per_rank = _count(
        "With offload (refused without it): PHYSICAL host cores a rank's CPU optimizer step runs on "
        "(DeepSpeedCPUAdam's OpenMP threads: --bind_cores_to_rank's share of physical cores, or OMP_NUM_THREADS), "
        "1 to 512; the step runs at cpu_adam_params_per_core_second (per physical core) x these cores; default: "
        "host.vcpus_per_gpu / 2, else the offer's vCPUs per GPU / 2 (two vCPUs a core), else 6 cores (12 vCPUs, "
        "assumed)",
        maximum=512,
    )
    multi_rank_bucket_allreduce = _flag(
        "With reduce_bucket_size (refused without it): DeepSpeed's zero_optimization.use_multi_rank_bucket_allreduce; "
        "true all-reduces each ZeRO-1/2 gradient bucket (twice a reduce-scatter's bytes), DeepSpeed's default from "
        "0.12.4; false reduces each rank's slice to its owner (a reduce-scatter's bytes), DeepSpeed 0.12.3 and "
        "earlier; default true"
    )
    gradient_sync = _choice(
        GRADIENT_SYNCS,
        "Training with zero_stage 0, 1 or 2: where an accumulated step's data-parallel traffic hides: overlapped, "
        "under 0.67 of the whole step's compute (default); last_micro_batch, under the last micro-batch's only, "
        "as Megatron-Core (no_sync for the others, overlap_grad_reduce / overlap_param_gather) and PyTorch DDP's "
        "no_sync run it (not with zero_stage 2 and reduce_bucket_size, whose DeepSpeed reduces every micro-batch)",
    )
    context_parallel_comm = _choice(
        CONTEXT_PARALLEL_COMMS,
        "Training with context_parallel > 1: how attention gets the other ranks' K/V (Megatron-Core cp_comm_type): "
        "p2p, Transformer Engine's ring overlapped with the attention steps (default); all_gather, gathered "
        "before attention and not overlapped (Meta's Llama 3); pytorch, PyTorch's experimental ring as torchtitan "
        "runs it (K/V repeated to the query heads, dK/dV in fp32, the last gradient pass exposed); "
        "pytorch_compiled, the same ring inside a torch.compile'd block (torchtitan's training.compile): the same "
        "bytes, each collective waited on where it is issued, none hidden",
    )
    activation_offload_layers = _count(
        "Training: transformer layers whose saved activations wait for backward in host memory (Megatron-Core "
        "--cpu-offloading-num-layers; GB200/GH200 over NVLink-C2C); < model.num_layers, pipeline_parallel 1, "
        "not with full recomputation",
        minimum=0,
        maximum=ACTIVATION_OFFLOAD_LIMIT,
    )


class WorkloadInferenceSerializer(serializers.Serializer):
    concurrency = _count("Concurrent streams per replica")
    context_len = _count("Context length per stream, tokens")
    output_tokens = _count("Output tokens per request", minimum=0)
    kv_cache_dtype = _choice(KV_DTYPES, "KV-cache element type")
    engine = _choice(
        SERVING_ENGINES,
        "The serving stack's decode loop: compiled (default: vLLM, TensorRT-LLM, SGLang with CUDA graphs; a step "
        "is its GPU work) or hf_eager (transformers generate in eager PyTorch, AutoGPTQ / AWQ kernels: a step "
        "takes the longer of its GPU work and the host's kernels at eager_kernel_host_s) or vllm_v0 (vLLM's V0 engine "
        "loop, 0.6.x with CUDA graphs: its GPU work plus the loop's serial host time a step, vllm_v0_step_host_s "
        "1.84 ms, fitted on one batch-1 A100 host's row: 0.6.x processes outputs asynchronously by default, so "
        "1.84 ms is what stays serial on that host, not the V0 loop's value (a desktop RTX 4090 with vLLM "
        "0.5.0.post1 pays <= 1.49 ms a step all-in); a multi-step run, --num-scheduler-steps, is sized by neither "
        "value)",
    )
    quant_kernel = _choice(
        QUANT_KERNELS,
        "inference.engine hf_eager with weight_quantization int4 (int8 for cuda_old): the library that runs the "
        "quantized linears. "
        "unstated (default: a quantized linear costs the host what a BF16 one does) or exllama (AutoGPTQ / "
        "transformers' GPTQ exllama kernel: the host floor at 0.912 of the fp16 loop's, measured by "
        "huggingface/optimum's GPTQ benchmark on Llama-2-13B, A100-SXM4-80GB, AutoGPTQ 0.4.2 / PyTorch 2.0.1 / "
        "transformers 4.32; on the GPU its GEMV runs each stream's row again, 1.2 ps a quantized weight a row, and "
        "from 8 streams it reconstructs fp16 weights for cuBLAS) or marlin (vLLM's gptq_marlin / awq_marlin 4-bit GEMM, "
        "engines compiled or vllm_v0: the 4-bit weights read at 0.780 of the 16-bit rate on the A100 and later, a "
        "Marlin bench.py run on vllm-project/vllm#2497, batch 1: 3.12x fp16 at 4.0 of 16 bits a weight; 1.0 on GA102 "
        "Ampere (A10, 3090, A6000, A40: the Marlin README); the unstated rate where vLLM cannot run Marlin: compute "
        "capability below 8.0 or not CUDA, e.g. V100, T4, MI300X) or fused_gemv (a runtime's own fused "
        "dequantize-GEMV 4-bit kernel in its own loop, for the runtimes it was set and checked on: calm gf4, MLC LLM "
        "q4f16, exllamav2, TinyChat / llm-awq; engine compiled only: the 4-bit weights read at 0.836 of the 16-bit "
        "rate, calm's RTX 4090 gf4 / fp16 rows, 746 / 892 GB/s, all rows from desktop hosts (RTX 4090 / RTX A6000 "
        "workstations; exllamav2 on server hosts pays a per-token host floor not priced: A100 rows +91% / +164%); "
        "not this class: TensorRT-LLM's weight-only GEMV (H100 INT4 AWQ 1.61x its FP16, below even the unstated "
        "rate) and llama.cpp (Q4 kernels at 0.66-0.82 of its F16); state those unstated) or cuda_old (weight_quantization "
        "int8 with inference.engine hf_eager only: AutoGPTQ's 8-bit GPTQ linear, qlinear_cuda_old / qlinear_cuda, "
        "which AutoGPTQ 0.4 to 0.7 runs for 8 bits with Triton off: 4 bare ops a quantized linear, the fp32 "
        "output's zeros, the input's and the scales' casts and the cast back, at optimizer_op_host_s, 7 us each, "
        "added to the host floor; Qwen2-7B: 28 x 7 x 4 x 7 us = 5.5 ms a token)",
    )
    quant_format = _choice(
        QUANT_FORMATS,
        "task inference with weight_quantization int4: the checkpoint's format. unstated (default: 4.25 bits a "
        "weight and 128-wide groups in the tensor-parallel check), gptq or awq (4 bits, an fp16 scale and a packed "
        "4-bit zero point a group: 4 + 20 / group bits, 4.156 at group 128; each rank's MLP slice holds whole groups, "
        "vLLM gptq.py / awq.py) or mxfp4 (gpt-oss: the routed experts only, one 8-bit scale a block of 32, 4.25 bits, "
        "attention and the rest bf16; mixture-of-experts models only; each card's MoE backend pads the experts per "
        "tensor-parallel rank: B200 / GB200 256, Ampere / Ada 256 and 128, Hopper 64; no tensor-parallel degree is "
        "refused for the blocks)",
    )
    quant_group_size = serializers.IntegerField(
        required=False,
        min_value=-1,
        max_value=1024,
        help_text="With quant_format gptq or awq: the input channels a scale covers, 16 to 1024, or -1 for one scale "
        "per output channel; left out: 128 (mxfp4: its own 32, nothing else)",
    )
    attn_implementation = _choice(
        ATTN_IMPLEMENTATIONS,
        "inference.engine hf_eager: transformers' attn_implementation the loop runs. unstated (default): the KV cache "
        "is moved at least 3 times a step (torch.cat's read and write, attention's read), a floor; eager, sdpa or "
        "flash_attention_2: with model.eager_layer, a grouped-KV model whose code repeats the cache per query head "
        "before attention (repeat_kv: Llama eager / sdpa, Qwen2 and Mistral all three; Qwen2's flash_attention_2 "
        "repeat is transformers 4.37-4.47 code) moves 3 + 2 x (query heads a KV head)",
    )
    generate_harness = _choice(
        GENERATE_HARNESSES,
        "inference.engine hf_eager: whose generate drives the loop. transformers (default: the model's own generate, "
        "as transformers, optimum's benchmark and the Qwen2 / Qwen2.5 speed pages call it; the host at "
        "hf_generate_kernel_host_s, 17 us a kernel on the unstated count; 19.67 us, hf_generate_release_kernel_host_s, "
        "where inference.transformers_release is stated) or auto_gptq (the host AutoGPTQ's README llama-7b fp16 A100 row "
        "measured, 31 us a kernel; cause not shown: a stated host rate, eager_kernel_host_s, read on the unstated "
        "count, so it takes no inference.transformers_release)",
    )
    rotary_backend = _choice(
        ROTARY_BACKENDS,
        "inference.engine hf_eager with a Qwen-1 flash-attn layer (model.eager_layer qwen1 or qwen1_unfused_norm): "
        "the code that rotates q and k. unstated (default): the layer's own, flash-attn 2.1.2 and later's Triton "
        "kernel, 2 launches a layer at Triton's Python launch (62 us each). triton: the same, stated. cuda_ext: "
        "flash-attn 2.0 to 2.1.1 (or a build with csrc/rotary), the same 6 kernels a layer at the harness's rate, no "
        "Triton launch. eager: flash-attn's rotary not importable (flash-attn 1.0 without its csrc builds, as the "
        "QwenLM/Qwen README installs it), Qwen-1's own rotary, 16 kernels a layer, not 6, no Triton launch. Every "
        "other layer rotates with its own eager code and takes only eager; refused outside an hf_eager loop",
    )
    transformers_release = _choice(
        TRANSFORMERS_RELEASES,
        "inference.engine hf_eager: the transformers release whose decoder layer the loop runs, for its kernel count "
        "(serving_host.RELEASE_LAYER_KERNELS, read from each release's modeling code). unstated (default): the "
        "engine's count (model.eager_layer's, the Llama 4.30 layer's 51 for llama / qwen2 / mistral). 4.32.0: llama "
        "with attn_implementation eager (47 a layer); 4.37.2: llama with sdpa (42); 4.38.2: qwen2 or mistral with "
        "flash_attention_2 (46); 4.46.0: qwen2 (42 a layer + 9 a token of the model-level rotary) or mistral (50) "
        "with flash_attention_2. Any other (layer, release, attn_implementation) is refused, as is a release "
        "outside an hf_eager loop or with generate_harness auto_gptq. A stated release is priced at the host rate "
        "read on the recounted rows (hf_generate_release_kernel_host_s, 19.67 us a kernel under transformers' "
        "generate); unstated keeps "
        "hf_generate_kernel_host_s (16.99 us, read on the 51 count): a count and its rate travel together",
    )
    expert_precision = _choice(
        EXPERT_PRECISIONS,
        "MoE models only: the routed experts' precision where the serving engine keeps it apart from the model's. "
        "model (default): the experts at precision. bf16 / fp16: the experts' weights at 2 bytes (memory and decode "
        "reads) and their GEMMs at the card's 16-bit peak and the engine's 16-bit efficiency, the other layers at "
        "precision (TensorRT-LLM v0.9.0's MoE plugin under FP8: moe.py weight_dtype = dtype, no FP8 runner; FP8 "
        "checkpoints that keep the experts in BF16). Only for stacks that keep experts 16-bit (the TensorRT-LLM "
        "v0.9.0-era MoE plugin; FP8 OOTB MoE only from 0.12.0): v0.10+ and current releases run FP8 Mixtral "
        "experts, where stating bf16 / fp16 costs 18-47% of the throughput and can push H100 TP1 Mixtral out of "
        "memory. bf16 experts on Volta / Turing (V100, T4) are refused like a bf16 model (blocked_by precision). "
        "Refused for a dense model, another task or quantized weights",
    )
    decode_attention = _choice(
        DECODE_ATTENTIONS,
        "How the serving engine's decode attention reads a grouped-KV cache. shared_kv (default): each KV head's cache "
        "read once for its query heads (TensorRT-LLM's XQA, FlashAttention / FlashInfer decode, vLLM's paged "
        "attention). per_query_head: TensorRT-LLM's masked MHA where the run does not take XQA: query heads a KV head "
        "other than 8 or head size other than 128 on any release through v0.9 (e.g. Mistral 7B, group 4), and a "
        "group-8, head-128 model (e.g. Llama 2 70B) only on v0.5-v0.7 or with XQA off. A thread block a query head, "
        "each walking its KV head's whole cache, priced per element visited (an FP8 cache costs an FP16 one's) at "
        "9.23 elements an SM a clock where longer than one read; an MHA model (one query head a KV head) changes "
        "nothing. The rate is v0.5.0's FP16 rate, fitted on one v0.5.0 A100 FP16 Llama 2 70B row: later releases run "
        "faster an element (the v0.8.0 A100 FP16 rows imply 11.3-14.1; FP8 caches on v0.6.1+ faster still), so the "
        "figure is a lower bound on their speed. Refused for training, image models and inference.engine hf_eager",
    )
    traffic = _choice(
        TRAFFICS,
        "How the streams are loaded. streams (default): concurrency streams decoding; the time per output token is their decode step alone and the first token a lone prefill. closed_loop: a client that keeps concurrency requests open and replaces a finished one at once (genai-perf --concurrency, vLLM bench serve --max-concurrency at an unbounded rate), served by a scheduler that mixes prompts into decode steps (vLLM V1, TensorRT-LLM in-flight batching): each step takes the running decodes, then prompt chunks up to max_batched_tokens, so a prompt rides ceil(prompt / (budget - concurrency)) steps (GEMMs at decodes + the chunk, its attention, the all-reduces) and the other steps of a reply are decode-only; the time per output token is the mean of that mix, a first token waits for the running step, then its own chunks. SGLang does not mix prompts into decode batches by default (enable_mixed_chunk false: its prefill batches run apart), so closed_loop fits an SGLang server only with --enable-mixed-chunk. Refused for training, image models, inference.engine hf_eager and vllm_v0 (whose chunked prefill is off below a 32K max_model_len: prompts run in steps of their own), and with requests_per_second (an open-loop rate)",
    )
    max_batched_tokens = serializers.IntegerField(
        required=False,
        min_value=MAX_BATCHED_TOKENS_LIMITS[0],
        max_value=MAX_BATCHED_TOKENS_LIMITS[1],
        help_text="inference.traffic closed_loop: the scheduler's token budget a step (vLLM max_num_batched_tokens, TensorRT-LLM max_num_tokens), a whole number from 16 to 1,048,576 that exceeds concurrency; left out: the framework's default for the card, 8,192 on a card of 70 GiB or more that is not an A100 (vLLM V1's API server; TensorRT-LLM's default on any card), else 2,048",
    )
    requests_per_second = _number("Demand: requests per second", maximum=DEMAND_LIMITS["requests_per_second"])
    tokens_per_second = _number(
        "Demand: output tokens per second", maximum=DEMAND_LIMITS["tokens_per_second"]
    )
    ttft_ms = _number("Latency target: time to first token, ms", maximum=DEMAND_LIMITS["ttft_ms"])
    tpot_ms = _number("Latency target: time per output token, ms", maximum=DEMAND_LIMITS["tpot_ms"])


class WorkloadHostSerializer(serializers.Serializer):
    dataset_gb = _number("Dataset size on local disk, GB")
    checkpoints_kept = _count("Checkpoints kept on disk", minimum=0)
    vcpus_per_gpu = _number(
        "The host's vCPUs per GPU, feeding an image loader (default: the guides' rule, 8 for image decoding)"
    )
    checkpoint = _choice(
        CHECKPOINT_MODES,
        "How the trainer saves: sync waits for the write, async only for the copy to host memory; auto: "
        "async for full training on several GPUs, else sync (docs/cost-model.md, Spot timing)",
    )


class WorkloadImageSerializer(serializers.Serializer):
    resolution_px = _count("Image resolution, pixels per side")
    steps = _count("Denoising steps per image (diffusion presets); default: the preset's")
    guidance = _choice(
        GUIDANCE, "cfg: two denoiser passes per step; distilled/none: one; preset: the model's"
    )
    vae_tiling = _flag(
        "Decode in tiles of the VAE's sample size (diffusers enable_vae_tiling: 512 px SD 1.x, 1024 px SDXL, "
        "SD3, FLUX), each tile over the whole batch. Inference only: it tiles a training run's VAE encode too, "
        "but the training encode's peak is not sized, so training refuses it"
    )
    vae_slicing = _flag(
        "Decode one image at a time (diffusers enable_vae_slicing). Inference only: the training encode's peak "
        "is not sized"
    )
    text_encoder_offload = _flag("Inference: text encoders on the CPU")
    train_text_encoder = _flag(
        "Train the text encoders too (full: their weights; LoRA: adapters on their attention)"
    )
    prior_preservation = _flag("DreamBooth: one class image per instance image")
    cache_latents = _flag(
        "Training: latents precomputed (VAE not loaded), and the text embeddings too unless "
        "cache_text_embeddings says otherwise"
    )
    cache_text_embeddings = serializers.BooleanField(
        required=False,
        allow_null=True,
        help_text="Training: text-encoder outputs precomputed, encoders not loaded (kohya "
        "--cache_text_encoder_outputs); default: as cache_latents",
    )
    lora_module = _choice(
        IMAGE_LORA_MODULES,
        "Diffusion LoRA training: the adapter module. peft (default): peft's LoRA Linear (diffusers, SimpleTuner "
        "scripts), 4 forward + 6 backward kernels a layer, all-linear on nn.Linear only (not SD 1.x's 1x1 "
        "proj_in/proj_out convolutions); kohya: kohya-ss sd-scripts networks.lora LoRAModule, 5 + 7 kernels, "
        "all-linear on every Linear and 1x1 Conv2d of the UNet's Transformer2DModels",
    )
    adafactor_scale_parameter = _flag(
        "optimizer adafactor on an adapter run: transformers' Adafactor with scale_parameter=True (its "
        "constructor's default; kohya's when --optimizer_args does not name it): 2 more ops and a host sync a "
        "tensor. Default false: scale_parameter=False relative_step=False, as HF Trainer's optim adafactor and "
        "kohya's published SDXL presets pass it"
    )
    train_steps = _count("Optimizer steps of the training run")
    epochs = _number("Epochs over image.dataset_images (instead of train_steps)")
    dataset_images = _count("Images in one epoch")
    images = _count("Images a generation job produces")
    fused_kernels = _flag(
        "Inference with fused kernels (torch.compile, TensorRT): no elementwise passes; default: true under a "
        "tensorrt or fastertransformer image.engine, else false"
    )
    engine = _choice(
        IMAGE_ENGINES,
        "Inference engine. pytorch (default): PyTorch, eager or torch.compile as fused_kernels says; tensorrt: a "
        "TensorRT engine (fused kernels; fp32 engines in TF32 unless built with --noTF32); fastertransformer: "
        "NVIDIA FasterTransformer's ViT as image.engine_version says, unstated its last release, v5.3 (fp16 attention fused on Volta to Ampere, padded "
        "to 32/64/96/128/192/256/384/512 tokens, flash attention past 512; unfused in fp32 and bf16 and on later "
        "cards, its score passes counted; its own LayerNorm/bias/GELU/residual kernels between the "
        "GEMMs; fp32 GEMMs in full FP32 unless run with NVIDIA_TF32_OVERRIDE=1), ViT classifiers only",
    )
    engine_version = _choice(
        FASTERTRANSFORMER_VERSIONS,
        "image.engine fastertransformer only: the FasterTransformer release run (default: its last, v5.3). v5.0 "
        "and v5.1 fuse fp16 ViT attention only up to 384 tokens (a 384 px ViT's 577 run unfused, padded to 584, "
        "their score passes counted); v5.2 and v5.3 at any length. Its ViT guide's tables were measured on v5.0",
    )
    tf32_matmul = _flag(
        "fp32 image networks: matmuls on TF32 tensor cores (Ampere and later), as NGC PyTorch containers "
        "(TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1), PyTorch 1.7-1.11 and TensorRT run them; default: the engine's "
        "(true for tensorrt; false for pytorch, upstream PyTorch >= 1.12, and for fastertransformer, whose fp32 "
        "GEMMs run in FP32 unless NVIDIA_TF32_OVERRIDE=1)"
    )
    deterministic = _flag(
        "Detector training under Ultralytics' deterministic=True (its default) on PyTorch >= 2.1: every new "
        "tensor is filled first (default true); false for deterministic=False or older PyTorch"
    )
    eval_every_epochs = _number(
        "Training by epochs: an evaluation pass over eval_images validation images every this many epochs, priced "
        "as inference of the same network, batch and precision on the run's GPUs (default: none)"
    )
    eval_images = _count("Training: validation images one evaluation runs (required with eval_every_epochs)")
    max_objects_per_image = _count(
        "Detectors: most labelled objects in one training image (sizes the loss's assigner); default: COCO's 93"
    )
    loader_workers = _count(
        "Training: data loader worker processes per GPU; vCPUs past them do not feed the loader (default: 8 on "
        "detector presets, Ultralytics' workers default; 10 on classification crops, DeiT's; no cap for diffusion)"
    )
    source_megapixels = _number(
        "Mosaic pipeline (detectors, diffusion on decoded photos): the dataset's typical source image size in "
        "megapixels, which sets each sample's one JPEG decode (default: COCO's 0.29)"
    )
    data_pipeline = _choice(
        DATA_PIPELINES,
        "Training data path: mosaic (detector augmentation), crop (classification crops), predecoded (cached "
        "latents, pre-decoded/GPU-side or synthetic data: no CPU decode); preset: by the preset's family",
    )
    quantize_text_encoders = _flag(
        "Inference: weight_quantization (or an fp8/int8/fp4 precision, which otherwise keeps them 16-bit) also "
        "quantizes the text encoders (diffusers PipelineQuantizationConfig). Training: the frozen T5 encoder in 8 "
        "bits (ai-toolkit's quantize_te)"
    )
    nf4_double_quant = _flag(
        "weight_quantization nf4: bitsandbytes' double quantization of the block scales, QLoRA's recipe, 4.127 "
        "bits a weight (default true); false: one float32 scale per 64 weights, 4.5 bits, the default of "
        "diffusers' and transformers' BitsAndBytesConfig when bnb_4bit_use_double_quant is not set"
    )
    runtime = _choice(
        IMAGE_RUNTIMES,
        "Diffusion inference: the software stack. optimized (default): a current diffusers/PyTorch; pytorch-2.0: "
        "the 2023 diffusers stack labelled PyTorch 2.0 (SD 1.x UNets run at 0.65 of the optimized rate); "
        "diffusers-0.7: diffusers before 0.8 (2022), whose eager attention scales the scores in a kernel of its "
        "own (6 passes over the scores, not 4), at pytorch-2.0's rate otherwise",
    )
    memory_format = _choice(
        MEMORY_FORMATS,
        "Convolutional classifiers (resnet-50), eager: the activations' layout. nchw (default: PyTorch's contiguous "
        "layout, what timm train.py, torchvision's references and DLE's main.py run unless told), where cuDNN's "
        "tensor-core convolutions (16-bit; fp32 as TF32 on Ampere and later) transpose each input to NHWC and the "
        "output back, 2 x (inputs + outputs) read and written a pass (an upper bound); channels_last: NHWC, model "
        "and input .to(memory_format=torch.channels_last), as NVIDIA's DeepLearningExamples AMP configs run. "
        "Refused elsewhere",
    )
    autocast = _flag(
        "UNet diffusion inference: the fp16 pipeline runs inside torch.autocast('cuda') (2022 'half' benchmarks, "
        "early webuis' default): the fp32 GroupNorm / LayerNorm / softmax casts, counted from PyTorch's autocast "
        "op lists, at the card's achieved bandwidth; memory adds the fp32 attention probabilities only. Refused "
        "with bf16 weights and on tier presets (default false)"
    )
    text_tokens = _count(
        "Text-encoder tokens the DiT attends to (SD3/3.5, Flux, LTX-Video only); default: the preset's"
    )
    unfused_lora_rank = _count(
        "UNet diffusion inference: the rank of a LoRA loaded beside the UNet and not fused (diffusers "
        "load_lora_weights without fuse_lora, as LCM-LoRA runs): its PEFT layers' matmuls, kernels and passes"
    )


class WorkloadSpecSerializer(serializers.Serializer):
    name = serializers.CharField(required=False)
    description = serializers.CharField(required=False)
    task = _choice(TASKS, "What the job does", required=True)
    model = WorkloadModelSerializer(help_text="A preset, a shape, or a preset with overrides")
    precision = _choice(PRECISIONS, "Compute precision")
    weight_quantization = _choice(
        QUANTIZATIONS,
        "Weight-only quantization of the block linears (embeddings, LM head and norms stay 16-bit); qlora: nf4 by "
        "default. For qlora it also names the library that unpacks the weights each micro-batch: nf4 bitsandbytes "
        "NF4 with double quantization; int4 GPTQ through AutoGPTQ's eager unpacking (transformers GPTQConfig with "
        "the exllama kernels disabled, as Qwen's finetune.py trains), whose unpacked 16-bit weights are kept for "
        "the backward (memory line dequantized_weights_gib); int8 bitsandbytes LLM.int8",
    )
    optimizer = _choice(OPTIMIZERS, "Optimizer")
    master_weights_fp32 = _flag("fp32 master weights beside half-precision ones")
    micro_batch_size = _count("Sequences per GPU per step")
    seq_len = _count("Sequence length, tokens")
    max_seq_len = _count(
        "Training on samples of unequal length, each micro-batch padded to its longest: the longest sequence a "
        "micro-batch holds, tokens. Memory's activation, loss and logits terms (and the ranking's fit check) are "
        "sized at it; speed and hours stay at seq_len (the mean). At least seq_len; default: seq_len. A padding-free "
        "collator (TRL padding_free) states its largest micro-batch token total / micro_batch_size, rounded up. "
        "Under pipeline parallelism every in-flight micro-batch is charged at it (an upper bound when batches are "
        "shuffled). Not with packed_sample_tokens"
    )
    gradient_checkpointing = _choice(
        CHECKPOINTING,
        "Activation recomputation: none; selective (Megatron-Core, see recompute_modules); selective_op "
        "(torchtitan's op-level policy: a layer keeps its input, every other matmul output and the attention "
        "output; dense 16/32-bit full training); full (each layer keeps its input)",
    )
    recompute_modules = serializers.ListField(
        child=serializers.ChoiceField(choices=list(RECOMPUTE_MODULES)),
        required=False,
        help_text="With gradient_checkpointing selective: the submodules recomputed in backward, Megatron-Core's "
        "--recompute-modules names (core_attn, layernorm, mla_up_proj, moe_act, mlp, moe, shared_experts); "
        "default ['core_attn']. Each drops what its module keeps per token and layer; mla_up_proj, mlp, moe "
        "and shared_experts add their forward FLOPs to the step",
    )
    fp32_norm_inputs = _flag(
        "Norms that save their fp32 upcast for backward, 4 bytes an element (the eager RMSNorm of torchtune and "
        "Hugging Face transformers: x.float() kept by pow and mul); default false: the norm keeps its 16-bit "
        "input (Megatron-Core, Transformer Engine and fused norms)"
    )
    fused_swiglu = _flag(
        "A SwiGLU that keeps only its input and recomputes SiLU in backward (Megatron-Core --bias-swiglu-fusion, "
        "on by default with --swiglu; Megatron-Bridge's bias_activation_fusion); default false: the eager "
        "silu(g) * u keeps the SiLU output too"
    )
    flash_attention = _flag("Fused attention (no seq x seq score matrix)")
    packed_sample_tokens = _count(
        "Training on packed sequences: the tokens of the samples packed into each seq_len sequence, each "
        "attending only within itself (NeMo packed_sequence_specs, Megatron-Core THD, flash-attn varlen); "
        "attention FLOPs are counted over this length, not seq_len. Samples of unequal length: sum of L^2 over "
        "sum of L. Needs flash_attention; default: one document a sequence"
    )
    training_tokens = _number("Tokens the training job processes (for hours and cost)")
    headroom = _number("Memory kept free, as a share of the card", maximum=1)
    gradient_accumulation_steps = _count(
        "Micro-batches per optimizer step (under pipeline parallelism also the 1F1B micro-batches a step: the "
        "bubble is (p - 1) / m of the work). Derived instead when global_batch_size or global_batch_tokens is stated"
    )
    global_batch_size = _count(
        "Training, language models: the run's global batch, sequences an optimizer step, as papers state it. "
        "gradient_accumulation_steps is derived: global_batch_size / (micro_batch_size x data-parallel ranks, "
        "gpus / (tensor x pipeline x context parallel)), which must divide (Megatron's micro-batches a step). "
        "Needs parallelism.gpus (a number, or auto: each ranked plan then derives its own count, and "
        "gradient_accumulation_steps may not be stated); a stated gradient_accumulation_steps must agree"
    )
    global_batch_tokens = _count(
        "Training, language models: the global batch in tokens a step, read as "
        "global_batch_tokens / seq_len sequences, which must be whole; with global_batch_size both must agree"
    )
    optimizer_in_backward = _flag("Optimizer step fused into backward (no full gradient buffer)")
    zero_grad = _choice(
        ZERO_GRAD,
        "Training, language models: what the loop's zero_grad does between steps. in_place (default; torch < 2.0's "
        "Optimizer.zero_grad, and conservative): the gradients are zeroed and kept, so the peak holds them beside "
        "the activations. set_to_none (torch >= 2.0's default, transformers' Trainer and most torch >= 2.0 loops): "
        "they are freed, so with gradient_accumulation_steps 1 on one data-parallel rank, no pipeline, ZeRO 0, "
        "the peak is weights + optimizer states + max(activations + the output head's gradient, gradients + "
        "AdamW's step temporaries); elsewhere (accumulation, DDP buckets, ZeRO-1/2/3, FSDP) the sum stays",
    )
    optimizer_impl = _choice(
        OPTIMIZER_IMPLS,
        "Training: the AdamW kernel that steps the run. foreach (default; torch's default on CUDA since 2.0) or "
        "fused (fused=True, transformers' adamw_torch_fused; torch >= 2.0): torch's own, at every zero_stage (FSDP "
        "steps torch's AdamW on each shard; DeepSpeed without an optimizer block wraps it); deepspeed_fused: a "
        "DeepSpeed config's optimizer block (Adam/AdamW), which DeepSpeed builds as its FusedAdam (ZeRO 1-3, fp32 "
        "masters). Sets the step's state-sized temporaries in memory on zero_stage 0: foreach 2 before torch 2.1 "
        "(torch._foreach_add out of place), 1 from 2.1 (in place), fused 0; and, where the step's time is priced "
        "(pure 16-bit, copies), its traffic: foreach 20 accesses a parameter, fused 7 (plus clipping's 3), "
        "deepspeed_fused 7 + ZeRO's cast, unscale and copy-back 5.5",
    )
    torch_version = serializers.CharField(
        required=False,
        help_text="Training: the run's torch release, 'current' (the default: 2.1 or later) or a release such as "
        "'2.0.1', or as torch prints it ('2.1.0+cu121', NGC's '2.3.0a0+6ddf5cf85e': the release numbers count). Before "
        "2.1 foreach AdamW's step holds two state-sized temporaries (exp_avg_sq_sqrt and denom), "
        "from 2.1 one. Memory only",
    )
    fp8_weights = _flag(
        "fp8 training that stores the block linears' weights in fp8 (NeMo/Megatron fp8_params, Transformer "
        "Engine fp8_model_init); default false: bf16 weights with transient fp8 copies"
    )
    attention_kernel = _choice(
        ATTENTION_KERNELS,
        "Training: engine (default) runs causal attention at the run's fitted efficiency; flash_attention_2 "
        "(PyTorch SDPA's flash backend, torchtitan), cudnn (Transformer Engine's fused attention) or "
        "flash_attention_3 bound it by the kernel's published H100 causal forward and backward speed at "
        "seq_len / context_parallel tokens a call (FlashAttention-3 paper, Figs. 5 and 6)",
    )
    cross_entropy = _choice(
        CROSS_ENTROPY,
        "Training: how the loss computes cross entropy over the vocabulary. fp32_softmax (default): one fp32 "
        "softmax kept for backward, 4 bytes x V a token (Megatron-Core); huggingface: transformers' causal-LM "
        "loss upcasts the whole logits and keeps the fp32 log-softmax, 14 bytes x V in 16-bit training (12 in "
        "fp32); torchtitan: its eager F.cross_entropy of the fp32-upcast logits, 12 bytes x V at the log-softmax backward; compiled: the same under torch.compile, the 16-bit logits and their gradient, 4 bytes x V; fused: a fused linear + cross entropy (Liger, Unsloth) never holds the logits, 6h bytes a token; torchtune: torchtune's early recipes (fp32 logits, the shifted fp32 copy held through backward, eager cross entropy), 16 bytes x V at the log-softmax backward; shifted_autocast: the model's own loss on its 16-bit logits (the shifted 16-bit copy, nn.CrossEntropyLoss: Qwen-1's modeling_qwen.py) under torch autocast (HF Trainer --bf16 without DeepSpeed), 12 bytes x V; shifted_16bit: the same loss without autocast (DeepSpeed's own bf16 / fp16 engine), log-softmax in 16 bits, 6 bytes x V. Inference: refused",
    )
    fp8_recipe = _choice(
        FP8_RECIPES,
        "fp8 training: the library that runs the linears in fp8 (transformer_engine: NeMo, Megatron; torchao: "
        "torchtitan float8, dynamic scaling)",
    )
    fp8_pad_inner_dim = _flag(
        "fp8_recipe torchao only: the run's Float8LinearConfig sets pad_inner_dim (the diffusers-torchao training "
        "recipe does). torchao then pads both operands of every float8 matmul, a copy kernel each even where no "
        "padding is needed: eager image (DiT) training pays 2 more kernels a matmul, 8 a linear under full "
        "recomputation, at the host's launch cost; compiled runs (image fused kernels) fold them. Default false, "
        "torchao's own default"
    )
    training_stack = _choice(
        TRAINING_STACKS,
        "Training: the software stack the run uses. other (default): 16-bit dense training on Hopper and later "
        "runs at the width ceiling fitted on MosaicML's MPT sweep; megatron (NeMo, Megatron-Core, Megatron-Bridge, "
        "Transformer Engine): dense models at that stack's own ceiling, 0.517 of the peak at d 4,096 and 0.565 at "
        "8,192 (fitted on NeMo 24.09's Llama 3.1 8B and 70B H100 rows); maxtext and torchtitan are recorded and "
        "sized as other (no published rows to fit); llm_c (karpathy/llm.c's C/CUDA GPT-2 trainer): its fused "
        "kernels' memory-bound bytes counted from train_gpt2.cu (90 B a token and layer per unit of d_model, 4 B "
        "a vocabulary logit, AdamW's 34 B a parameter once a step) at 0.70 of the card's bandwidth beside the FLOPs "
        "at the width ceiling's e (derated on PCIe and consumer parts), counted for llm.c's scripts' -r 0 (llm.c's "
        "default -r 1 adds 16 B, not counted); Ampere and later 16-bit dense models only, else sized as other with "
        "a warning; validated for micro-steps of 16,384 tokens a GPU or more; gpt_neox (EleutherAI's GPT-NeoX "
        "library, DeepSpeed ZeRO): 16-bit dense pretraining on NVSwitch A100s at that stack's rate, 0.524 / (1 + "
        "621 / d_model) of the peak (fitted on Llemma 7B's A100 hours; 0.402 at d 2,048), elsewhere sized as other",
    )
    mixed_precision = _choice(
        MIXED_PRECISION_STYLES,
        "16-bit training with flash_attention false (or on a card without FlashAttention, before Ampere): how the "
        "run casts its ops, which sets the eager attention's bytes a score element. autocast (default): torch "
        "autocast / native AMP over fp32 weights, softmax in fp32: 56 B (24 + 32) for a model without dropout "
        "(diffusers' get_attention_scores), 82 B (37 + 45) for one with dropout (transformers' BertSelfAttention: "
        "the fp32 extended mask promotes the scores); half_model: the model cast to 16 bits (apex O2, "
        "model.half(), Paddle's fused attention op): 22 B (8 + 14) without dropout, 44 B (21 + 23) with it "
        "(DeepLearningExamples' BERT modeling.py)",
    )
    mfu = _number("Model FLOPs utilization to assume instead of the default", maximum=1)
    lora = WorkloadLoraSerializer(required=False)
    distillation = WorkloadDistillationSerializer(
        required=False,
        help_text="Knowledge distillation (training tasks, language models): a teacher's logits as the targets",
    )
    parallelism = WorkloadParallelismSerializer(required=False)
    inference = WorkloadInferenceSerializer(required=False)
    host = WorkloadHostSerializer(required=False)
    image = WorkloadImageSerializer(required=False)
    quantization = WorkloadQuantizationSerializer(
        required=False,
        help_text="nf4: the bitsandbytes stack's memory (bnb_version, lm_head_4bit, bnb_storage_dtype, "
        "nf4_double_quant, prepare_kbit)",
    )


def _money(help_text: str) -> serializers.FloatField:
    return _number(f"{help_text} (a decimal, in the study's currency)")


def _share(help_text: str) -> serializers.FloatField:
    return _number(help_text, maximum=1)


class TcoFinancingSerializer(serializers.Serializer):
    kind = _choice(FINANCING_KINDS, "A loan (the buyer owns the servers) or a lease", required=True)
    rate_annual = _share("Yearly interest rate")
    term_months = _count("Term in months (a lease: the horizon)", maximum=MAX_FINANCING_TERM_MONTHS)


class TcoBuySerializer(serializers.Serializer):
    servers = _count("Servers bought", maximum=MAX_SERVERS)
    gpus_per_server = _count("GPUs per server", maximum=MAX_GPUS_PER_SERVER)
    gpu = serializers.CharField(help_text="Catalog GPU slug (e.g. h100-sxm)")
    gpu_tdp_w = _number("GPU board power, W; default: datasheet")
    gpu_list_price = _money("List price of one GPU; default: catalog")
    server_price = _money("Price of one server with its GPUs; default: GPUs x (1 + uplift)")
    server_uplift = _number("Chassis, CPUs, RAM, NICs and storage over the GPUs' price, as a share")
    install_cost = _money("One-off installation cost")
    server_overhead_kw = _number("Server power besides the GPUs, kW")
    average_load = _share("Average power draw as a share of the maximum")
    pue = _number("Power usage effectiveness (>= 1)", minimum=1)
    electricity_per_kwh = _money("Electricity per kWh")
    colocation_per_kw_month = _money("Colocation per kW per month")
    maintenance_pct_per_year = _share("Maintenance per year as a share of the purchase")
    ops_fte = _number("Operations staff, full-time equivalents")
    fte_cost_per_year = _money("Cost of one full-time equivalent per year")
    residual_pct = _share("Resale value at the end, as a share of the purchase")
    depreciation_years = _count("Years of depreciation", maximum=30)
    depreciation_method = _choice(DEPRECIATION_METHODS, "Tax depreciation")
    network_capex_per_server = _money("Network capital expense per server")
    storage_capex_per_server = _money("Storage capital expense per server")
    annual_failure_rate = _share("Servers failing per year, as a share")
    repair_days = _number("Days a failed server is out")
    spare_servers = _count("Spare servers bought", minimum=0, maximum=MAX_SERVERS)
    energy_follows_utilization = _flag("Energy scales with utilization (idle load otherwise)")
    idle_load = _share("Power draw when idle, as a share of the maximum")
    financing = TcoFinancingSerializer(required=False)


class TcoOfferRefSerializer(serializers.Serializer):
    provider = serializers.CharField()
    instance_type = serializers.CharField()
    region = serializers.CharField()


class TcoReservedAlternativeSerializer(serializers.Serializer):
    pricing_model = _choice(COMMITTED_PRICING_MODELS, "The committed rent")
    price_per_gpu_hour = _money("Quoted rate per GPU-hour; default: the offer's catalog rate")
    payment_option = serializers.ChoiceField(
        choices=["no_upfront", "partial_upfront", "all_upfront"],
        required=False,
        help_text="With the offer's stored rate: that payment option (default: the cheapest stored one)",
    )


class TcoRentSerializer(serializers.Serializer):
    pricing_model = _choice(RENT_PRICING_MODELS, "How the rented GPUs are paid for")
    price_per_gpu_hour = _money("Rent per GPU-hour; default: the offer's current price")
    spot_price_per_gpu_hour = _money("Spot rent per GPU-hour (spot_mix)")
    spot_fraction = _share("Share of hours on spot (spot_mix)")
    offer = TcoOfferRefSerializer(required=False, help_text="A catalog offer to take the price from")
    price_decline_per_year = _share("Yearly decline of the rent price")
    reserved_alternative = TcoReservedAlternativeSerializer(required=False)


class TcoStudySpecSerializer(serializers.Serializer):
    name = serializers.CharField(required=False)
    horizon_months = _count("Months compared", maximum=MAX_HORIZON_MONTHS)
    discount_rate_annual = _number("Yearly discount rate for present values")
    currency = serializers.CharField(required=False, help_text="ISO 4217 code of the study's money")
    utilization = _share("Share of hours the GPUs are busy (> 0)")
    tax_rate = _share("Tax rate for the depreciation shield")
    utilization_ramp_months = _count(
        "Months over which utilization ramps up", minimum=0, maximum=MAX_HORIZON_MONTHS
    )
    buy = TcoBuySerializer()
    rent = TcoRentSerializer()
