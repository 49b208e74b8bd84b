"""Sizing page: fill a short form of common knobs, pick a preset, or paste a workload spec, and see
memory per GPU, verdicts and speed.

The form builds a spec (`spec_from_knobs`), shows it as YAML in the textarea and sizes that very
text, through the same `size_spec_document` as the API and `manage.py size`; nothing is stored.
"""

from __future__ import annotations

from django.shortcuts import render

from gpuledger.charts import stacked_bar_chart
from gpuledger.roles import ENGINEER, role_required
from procurement.services.sizing import size_spec_document
from procurement.sizing import WorkloadSpecError
from procurement.sizing.distillation import DISTILLATION_MODES
from procurement.sizing.documents import (
    KNOB_PATHS,
    LORA_SAVED_MODULE_CHOICES,
    TEXT_KNOBS,
    load_spec_text,
    spec_from_knobs,
    spec_to_yaml,
)
from procurement.sizing.image_knobs import IMAGE_KNOB_DEFAULTS, IMAGE_KNOB_PATHS
from procurement.sizing.image_presets import image_architecture
from procurement.sizing.image_spec import IMAGE_RUNTIMES
from procurement.sizing.presets import IMAGE_TIERS, known_preset_names, llm_presets
from procurement.sizing.serving_load import TRAFFICS
from procurement.sizing.spec import (
    ATTN_IMPLEMENTATIONS,
    CHECKPOINTING,
    CROSS_ENTROPY,
    DECODE_ATTENTIONS,
    EAGER_LAYERS,
    EXPERT_PRECISIONS,
    GENERATE_HARNESSES,
    LORA_ADAPTER_DTYPES,
    LORA_IMPLEMENTATIONS,
    OPTIMIZER_IMPLS,
    PRECISIONS,
    QUANT_FORMATS,
    QUANT_KERNELS,
    ROTARY_BACKENDS,
    SERVING_ENGINES,
    TASKS,
    TRAINING_STACKS,
    TRANSFORMERS_RELEASES,
    ZERO_GRAD,
)
from procurement.views.sizing_display import sizing_display
from procurement.views.sizing_image_fields import image_section_context

# Memory breakdown key -> the label of its bar segment.
BAR_PARTS = {
    "weights_gib": "weights",
    "gradients_gib": "gradients",
    "optimizer_states_gib": "optimizer",
    "activations_gib": "activations",
    "kv_cache_gib": "KV cache",
    "dequantized_weights_gib": "dequantized weights",
    "teacher_weights_gib": "teacher",
    "framework_overhead_gib": "overhead",
}


# The form's starting values (a QLoRA of Llama-3.1-8B); the textarea starts with the spec they build.
KNOB_DEFAULTS = {
    "name": "",
    "task": "qlora",
    "preset": "llama-3.1-8b",
    "precision": "bf16",
    "micro_batch_size": "4",
    "seq_len": "2048",
    "max_seq_len": "",  # blank: seq_len (samples of one length)
    "zero_grad": "in_place",
    "optimizer_impl": "foreach",
    "torch_version": "current",
    "cross_entropy": "fp32_softmax",
    "training_stack": "other",
    "gradient_checkpointing": "full",
    "training_tokens": "2.0e8",
    "lora_rank": "16",
    "lora_implementation": "peft_eager",
    "lora_adapter_dtype": "base",
    "lora_modules_to_save": "none",
    "distillation_teacher": "none",
    "distillation_mode": "online",
    "gpus": "1",
    "zero_stage": "0",
    "tensor_parallel": "1",
    "pipeline_parallel": "1",
    "virtual_pipeline": "",  # blank: 1 (the spec's default), so the starting document stays short
    "context_parallel": "",
    "expert_parallel": "",
    "concurrency": "8",
    "context_len": "4096",
    "serving_engine": "compiled",
    "quant_kernel": "unstated",
    "quant_format": "unstated",
    "quant_group_size": "",  # blank: the format's own group
    "bnb_version": "current",
    "lm_head_4bit": "false",
    "bnb_storage_dtype": "unstated",
    "bnb_double_quant": "true",
    "prepare_kbit": "false",
    "attn_implementation": "unstated",
    "generate_harness": "transformers",
    "rotary_backend": "unstated",
    "transformers_release": "unstated",
    "eager_layer": "from_preset",
    "expert_precision": "model",
    "decode_attention": "shared_kv",
    "traffic": "streams",
    "max_batched_tokens": "",  # blank: the framework's default for the card (8,192 / 2,048)
    "resolution_px": "",
    "steps": "",
    "train_steps": "",
    "runtime": "optimized",
    "vcpus_per_gpu": "",  # blank: the guides' rule (8 vCPUs per GPU where images are decoded)
}
ZERO_STAGES = ("0", "1", "2", "3", "fsdp")


def knob_defaults(preset: str | None) -> dict[str, str]:
    """Form values for a preset picked from the list: an image tier starts on its first task at batch 1,
    the setting its tier table is quoted for."""
    if preset not in known_preset_names() and image_architecture(preset or "") is None:
        return dict(KNOB_DEFAULTS)
    arch = image_architecture(preset)
    if arch:  # an image preset: generation/detection starts on inference, at the preset's batch
        task = "inference" if arch.is_diffusion or arch.inference_only else "full_finetune"
        # an alias ("sdxl") selects its preset's own name, the one the list shows and a submit sends
        return KNOB_DEFAULTS | {
            "preset": arch.slug,
            "task": task,
            "micro_batch_size": str(arch.default_batch),
        }
    tier = IMAGE_TIERS.get(preset)
    if tier:
        return KNOB_DEFAULTS | {"preset": preset, "task": tier.tasks[0], "micro_batch_size": "1"}
    return KNOB_DEFAULTS | {"preset": preset}


# knob -> (label, the tasks it applies to, as a hint)
KNOB_LABELS = {
    "name": ("Name", "optional"),
    "task": ("Task", ""),
    "preset": ("Model preset", ""),
    "precision": ("Precision", ""),
    "micro_batch_size": ("Micro-batch size", "training"),
    "seq_len": ("Sequence length (tokens)", "training"),
    "max_seq_len": (
        "Longest sequence (tokens)",
        "training, samples of unequal length: memory at the longest batch, speed at the sequence length; blank: "
        "the sequence length",
    ),
    "zero_grad": (
        "zero_grad between steps",
        "training, language models: in_place (torch < 2.0, conservative) / set_to_none (torch >= 2.0's default: "
        "one micro-batch a step on one data-parallel rank peaks without the gradients beside the activations)",
    ),
    "optimizer_impl": (
        "torch AdamW kernel",
        "training: foreach (torch's default on CUDA since 2.0) / fused (torch's fused kernel, adamw_torch_fused), torch's "
        "own at any ZeRO stage or FSDP / deepspeed_fused (a DeepSpeed config's optimizer block, ZeRO 1-3): the "
        "step's state-sized temporaries on ZeRO 0, 2 (foreach, torch 2.0) / 1 (foreach, 2.1+) / 0 (fused), and "
        "its traffic, 20 (foreach) / 7 (fused) / 12.5 (deepspeed_fused, with ZeRO's cast and copy-back) accesses "
        "a parameter",
    ),
    "torch_version": (
        "torch release",
        "training: current (2.1 or later) or e.g. 2.0.1 / 2.1.0+cu121 (as torch prints it): foreach AdamW's step holds 2 state-sized temporaries "
        "before 2.1, 1 from 2.1. Memory only",
    ),
    "cross_entropy": (
        "Loss (cross entropy) as computed",
        "training, language models: the vocabulary-sized tensors a token (docs/workload-spec.md): fp32_softmax "
        "(Megatron-Core, 4 x V bytes) / huggingface (transformers 4.46-4.48, 14) / shifted_autocast (the model's "
        "own loss on 16-bit logits under torch autocast, e.g. Qwen-1, 12) / shifted_16bit (the same under "
        "DeepSpeed's 16-bit engine, no autocast, 6) / torchtitan / compiled / fused / torchtune",
    ),
    "training_stack": (
        "Training software stack",
        "training: other (unstated) / megatron / maxtext / torchtitan / llm_c / gpt_neox (GPT-NeoX: A100 "
        "pretraining at that stack's own rate, 0.524 / (1 + 621 / d_model) of the peak); docs/workload-spec.md",
    ),
    "gradient_checkpointing": ("Gradient checkpointing", "training"),
    "training_tokens": ("Training tokens", "training: for hours"),
    "lora_rank": ("LoRA rank", "lora, qlora"),
    "lora_implementation": (
        "LoRA adapters run as",
        "lora, qlora: peft_eager (HF PEFT, eager: a host floor a layer) / fused (NeMo, unsloth) / compiled",
    ),
    "lora_adapter_dtype": (
        "LoRA adapters' dtype",
        "lora, qlora (peft_eager), language models: base (peft 0.6-0.11) / fp32 (peft < 0.6 or >= 0.12 under "
        "torch autocast: their casts join the host floor)",
    ),
    "lora_modules_to_save": (
        "Trained embedding / output layer",
        "lora, qlora, language models: PEFT modules_to_save (e.g. wte, lm_head when tokens are added): trainable "
        "copies of the embedding table and / or output layer",
    ),
    "distillation_teacher": (
        "Distillation teacher",
        "training, language models: a teacher whose logits are the targets (none: no distillation); its "
        "vocabulary must be the student's",
    ),
    "distillation_mode": (
        "Teacher runs",
        "distillation: online (a teacher forward a token on the same GPUs, its weights and logits in memory) / "
        "precomputed (top-k logits read from storage, no teacher compute)",
    ),
    "gpus": ("GPUs", ""),
    "zero_stage": ("ZeRO stage / FSDP", "training"),
    # GPUs split each model copy tensor x pipeline ways; the rest are data-parallel replicas
    "tensor_parallel": ("Tensor parallel", "GPUs sharing each layer; divides GPUs"),
    "pipeline_parallel": ("Pipeline parallel", "stages of layers; divides GPUs"),
    "virtual_pipeline": ("Virtual pipeline", "training: model chunks per stage (interleaved 1F1B); blank: 1"),
    "context_parallel": ("Context parallel", "training: GPUs sharing each sequence; blank: 1"),
    "expert_parallel": ("Expert parallel", "training, MoE: GPUs sharing the experts; blank: 1"),
    "concurrency": ("Concurrent requests", "inference"),
    "context_len": ("Context length (tokens)", "inference"),
    "serving_engine": (
        "Serving stack",
        "inference: compiled (vLLM, TensorRT-LLM, SGLang) / hf_eager (transformers generate: a host floor a token) / "
        "vllm_v0 (vLLM 0.6.x's V0 loop: + 1.84 ms a step, what stayed serial on one A100 host; not multi-step runs)",
    ),
    "quant_kernel": (
        "Quantized-linear kernel",
        "int4 weights: unstated / exllama (hf_eager, GPTQ exllama: host floor 0.912 of fp16, GPU time a stream's row) / "
        "marlin (vLLM's gptq_marlin / awq_marlin: 4-bit weights read at 0.780 of the 16-bit rate, 1.0 on A10 / 3090 / "
        "A6000, the unstated rate below compute capability 8.0 or off CUDA) / fused_gemv (calm gf4, MLC LLM q4f16, "
        "exllamav2, TinyChat / llm-awq in their own loops, compiled only: 4-bit weights read at 0.836 of the 16-bit "
        "rate, calm's RTX 4090 gf4 / fp16 rows, measured on desktop hosts; exllamav2 on server hosts runs slower; "
        "not TensorRT-LLM's weight-only GEMV, not llama.cpp); int8 weights, hf_eager: cuda_old (AutoGPTQ's 8-bit "
        "qlinear_cuda_old / qlinear_cuda: 4 bare ops a quantized linear on the host at 7 us each, the fp32 output's "
        "zeros, the input's and the scales' casts, the cast back)",
    ),
    "quant_format": (
        "int4 checkpoint format",
        "int4 weights, inference: unstated (4.25 bits, groups of 128 in the TP check) / gptq or awq (an fp16 scale "
        "and a 4-bit zero a group: 4.156 bits at 128; each TP rank holds whole groups) / mxfp4 (gpt-oss, MoE only: "
        "the experts at 4.25 bits, padded per TP rank by the card's MoE backend, the rest bf16)",
    ),
    "quant_group_size": (
        "int4 group size",
        "gptq or awq: input channels a scale covers, 16 to 1024, or -1 for one a row; blank: 128 (mxfp4: its 32)",
    ),
    "attn_implementation": (
        "Attention implementation",
        "hf_eager: unstated (3 KV passes, a floor) / eager / sdpa / flash_attention_2 (transformers' "
        "attn_implementation; the code is the preset's: Qwen2.5 and Mistral repeat the KV cache per query head)",
    ),
    "generate_harness": (
        "Generate harness",
        "hf_eager: transformers (plain generate, ~17 us a kernel; ~20 us with a stated transformers release) / auto_gptq (the host AutoGPTQ's README llama-7b "
        "fp16 A100 row measured, 31 us a kernel; cause not shown)",
    ),
    "rotary_backend": (
        "Rotary code",
        "hf_eager, Qwen-1 flash-attn layers: unstated (flash-attn 2.1.2 and later: its Triton kernel, 62 us a launch) "
        "/ triton / cuda_ext (flash-attn 2.0 to 2.1.1, or built with csrc/rotary: no Triton launch) / eager (flash-attn "
        "1.0 without its csrc builds: Qwen-1's own rotary, 10 more kernels a layer); other layers: eager only",
    ),
    "transformers_release": (
        "Transformers release",
        "hf_eager, llama / qwen2 / mistral layers: unstated (the engine's count) / 4.32.0 (llama, eager) / 4.37.2 "
        "(llama, sdpa) / 4.38.2 or 4.46.0 (qwen2 or mistral, flash_attention_2): the decoder layer's kernels as that "
        "release's code issues them, at the host rate read on those counts (19.67 us a kernel, not 16.99); other pairs, "
        "and the auto_gptq harness, are refused",
    ),
    "eager_layer": (
        "Decoder layer code",
        "hf_eager: from_preset (Qwen2.5 qwen2, mistral-7b mistral, else llama) / llama / qwen1 (23) / "
        "qwen1_unfused_norm (37) / qwen1_no_flash (45) / qwen2 / mistral",
    ),
    "expert_precision": (
        "Expert precision",
        "MoE inference: model (experts at the precision above) / bf16 / fp16 (experts kept 16-bit under an FP8 "
        "model: 2 bytes a weight, the 16-bit GEMM rate). Only for stacks that keep experts 16-bit (TensorRT-LLM "
        "v0.9.0-era MoE plugin; FP8 OOTB MoE only from 0.12.0): v0.10+ and current releases run FP8 Mixtral "
        "experts, where stating bf16 costs 18-47% and can push H100 TP1 Mixtral out of memory. bf16 experts need "
        "an Ampere-or-later card",
    ),
    "traffic": (
        "Traffic",
        "How the streams are loaded. streams (default): concurrency streams decoding; the time per output token is their decode step alone and the first token a lone prefill. closed_loop: a client that keeps concurrency requests open and replaces a finished one at once (genai-perf --concurrency, vLLM bench serve --max-concurrency at an unbounded rate), served by a scheduler that mixes prompts into decode steps (vLLM V1, TensorRT-LLM in-flight batching): each step takes the running decodes, then prompt chunks up to max_batched_tokens, so a prompt rides ceil(prompt / (budget - concurrency)) steps (GEMMs at decodes + the chunk, its attention, the all-reduces) and the other steps of a reply are decode-only; the time per output token is the mean of that mix, a first token waits for the running step, then its own chunks. SGLang does not mix prompts into decode batches by default (enable_mixed_chunk false: its prefill batches run apart), so closed_loop fits an SGLang server only with --enable-mixed-chunk. Refused for training, image models, inference.engine hf_eager and vllm_v0 (whose chunked prefill is off below a 32K max_model_len: prompts run in steps of their own), and with requests_per_second (an open-loop rate)",
    ),
    "max_batched_tokens": (
        "Token budget a step",
        "inference.traffic closed_loop: the scheduler's token budget a step (vLLM max_num_batched_tokens, TensorRT-LLM max_num_tokens), a whole number from 16 to 1,048,576 that exceeds concurrency; left out: the framework's default for the card, 8,192 on a card of 70 GiB or more that is not an A100 (vLLM V1's API server; TensorRT-LLM's default on any card), else 2,048",
    ),
    "decode_attention": (
        "Decode attention",
        "inference: shared_kv (each KV head read once: XQA, FlashAttention, vLLM paged) / per_query_head "
        "(TensorRT-LLM masked MHA, where XQA is not taken: query heads a KV head other than 8 or head size other than "
        "128 through v0.9, e.g. Mistral 7B; a group-8 model such as Llama 2 70B only on v0.5-v0.7 or with XQA off). "
        "Every query head walks its KV head's cache at 9.23 elements an SM a clock, v0.5.0's FP16 rate: later "
        "releases run faster (v0.8.0 FP16 rows imply 11.3-14.1; FP8 caches on v0.6.1+ faster still), so the figure "
        "is a lower bound on their speed. An MHA model changes nothing",
    ),
    "bnb_version": (
        "bitsandbytes release",
        "qlora: current (0.43.2+) or e.g. 0.41.1: before 0.43.2 every 4-bit linear's input is kept, before 0.43.0 "
        "the weights are stored fp16 (an fp16 + bf16 unpacked copy at the backward's start). Memory only",
    ),
    "lm_head_4bit": (
        "4-bit LM head",
        "qlora: true where the stack quantizes the output layer too (LitGPT / Lightning's plugin); transformers and "
        "peft keep it 16-bit (false). Memory only",
    ),
    "bnb_storage_dtype": (
        "4-bit weights quantized from",
        "qlora: unstated (fp16 with a 4-bit head or bitsandbytes before 0.43.0, else compute) / compute / fp16 "
        "(Lightning's plugin; transformers without a torch_dtype): fp16 under bf16 keeps an fp16 + bf16 unpacked "
        "copy at the backward's start. Memory only",
    ),
    "prepare_kbit": (
        "Embeddings and head kept fp32",
        "qlora with nf4 or int8 (bitsandbytes): true where peft's prepare_model_for_kbit_training cast the "
        "embeddings, head and norms to fp32 and nothing cast them back (plain transformers Trainer); false where "
        "they stay 16-bit (the default; TRL's SFTTrainer and artidoro/qlora under bf16 cast them back). Not for "
        "GPTQ int4, which peft leaves 16-bit. Memory only",
    ),
    "bnb_double_quant": (
        "NF4 double quantization",
        "qlora: true (4.127 bits a weight, bnb.nf4-dq) / false (a float32 scale per 64 weights, 4.5 bits: LitGPT "
        "bnb.nf4, BitsAndBytesConfig's default)",
    ),
    "resolution_px": ("Image side (px)", "image presets; blank: the preset's"),
    "steps": ("Denoising steps", "diffusion inference; blank: the preset's"),
    "train_steps": ("Training steps", "image presets: for hours"),
    "runtime": (
        "Software stack",
        "diffusion inference: optimized (current), pytorch-2.0 (2023 diffusers) or diffusers-0.7 (2022 diffusers)",
    ),
    "vcpus_per_gpu": (
        "Host vCPUs per GPU",
        "image training: they decode and augment; blank: the guides' rule",
    ),
}


def form_fields(knobs: dict[str, str], errors: dict[str, str]) -> list[dict]:
    """The form's fields in order, each with its label, value, choices (None: free text) and error."""
    choices = {
        "task": TASKS,
        "preset": tuple(known_preset_names()),
        "precision": PRECISIONS,
        "gradient_checkpointing": CHECKPOINTING,
        "zero_grad": ZERO_GRAD,
        "optimizer_impl": OPTIMIZER_IMPLS,
        "cross_entropy": CROSS_ENTROPY,
        "training_stack": TRAINING_STACKS,
        "zero_stage": ZERO_STAGES,
        "runtime": IMAGE_RUNTIMES,
        "lora_implementation": LORA_IMPLEMENTATIONS,
        "lora_adapter_dtype": LORA_ADAPTER_DTYPES,
        "lora_modules_to_save": tuple(LORA_SAVED_MODULE_CHOICES),
        "distillation_teacher": ("none", *sorted(llm_presets())),
        "distillation_mode": DISTILLATION_MODES,
        "serving_engine": SERVING_ENGINES,
        "quant_kernel": QUANT_KERNELS,
        "quant_format": QUANT_FORMATS,
        "attn_implementation": ATTN_IMPLEMENTATIONS,
        "generate_harness": GENERATE_HARNESSES,
        "rotary_backend": ROTARY_BACKENDS,
        "transformers_release": TRANSFORMERS_RELEASES,
        "eager_layer": ("from_preset", *EAGER_LAYERS),
        "expert_precision": EXPERT_PRECISIONS,
        "decode_attention": DECODE_ATTENTIONS,
        "traffic": TRAFFICS,
        "lm_head_4bit": ("false", "true"),
        "bnb_storage_dtype": ("unstated", "compute", "fp16"),
        "bnb_double_quant": ("true", "false"),
        "prepare_kbit": ("false", "true"),
    }
    return [
        {
            "name": knob,
            "label": label,
            "hint": hint,
            "value": knobs.get(knob, ""),
            "choices": choices.get(knob),
            "numeric": knob not in TEXT_KNOBS,
            "error": errors.get(knob, ""),
        }
        for knob, (label, hint) in KNOB_LABELS.items()
    ]


def knob_errors(errors: list[dict]) -> dict[str, str]:
    """Spec errors keyed by the form knob that set the field, so the form can mark it."""
    by_path = {path: knob for knob, path in (KNOB_PATHS | IMAGE_KNOB_PATHS).items()}
    return {by_path[error["path"]]: error["message"] for error in errors if error["path"] in by_path}


def posted_knobs(post) -> dict[str, str]:
    """The form's knobs as posted; an image knob left out of the post (an older form) at its default."""
    knobs = {knob: post.get(knob, "").strip() for knob in KNOB_DEFAULTS}
    return knobs | {knob: post.get(knob, default).strip() for knob, default in IMAGE_KNOB_DEFAULTS.items()}


@role_required(ENGINEER)
def sizing_page(request):
    preset = request.GET.get("preset")
    knobs = knob_defaults(preset) | IMAGE_KNOB_DEFAULTS
    text = spec_to_yaml(spec_from_knobs(knobs))
    report, errors = None, []
    if request.method == "POST":
        if request.POST.get("source") == "fields":
            knobs = posted_knobs(request.POST)
            text = spec_to_yaml(spec_from_knobs(knobs))
        else:
            text = request.POST.get("spec", "")
        try:
            report = size_spec_document(load_spec_text(text, "spec"))
        except WorkloadSpecError as error:
            errors = [field.as_dict() for field in error.errors]
    context = {
        "text": text,
        "errors": errors,
        "report": report,
        "presets": known_preset_names(),
        "selected_preset": knobs["preset"],  # what the form sizes, so a submit sizes what the page shows
        "form_fields": form_fields(knobs, knob_errors(errors)),
    } | image_section_context(knobs, knob_errors(errors))
    if report:
        context["memory_chart_svg"] = memory_chart(report)
        context["display"] = sizing_display(report)
    return render(request, "procurement/sizing.html", context)


def memory_chart(report: dict) -> str:
    candidates = [c for c in report["candidates"] if c["total_per_gpu_gib"] is not None]
    series = {
        label: [candidate["memory"][key] or 0.0 for candidate in candidates]
        for key, label in BAR_PARTS.items()
    }
    return stacked_bar_chart(
        [f"{c['gpus']} x {c['gpu']}" for c in candidates],
        series,
        unit="GiB",
        title="Memory per GPU by candidate (tick: card capacity)",
        reference_lines={"card capacity": [c["capacity_gib"] for c in candidates]},
    )
