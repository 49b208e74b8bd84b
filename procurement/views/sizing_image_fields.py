"""The sizing form's image section: a label, a hint (the tasks a field acts in) and help text (what it
means) for every image knob (procurement/sizing/image_knobs.py), with choices in words.

Flags are checkboxes; choices are selects whose options read as words, never a Python value.
"""

from __future__ import annotations

from procurement.sizing.image_knobs import IMAGE_FLAG_DEFAULTS
from procurement.sizing.image_presets import image_architecture

# knob -> (label, hint: where it acts, help: what it means)
IMAGE_KNOB_LABELS = {
    "guidance": (
        "Classifier-free guidance",
        "diffusion inference",
        "CFG runs the denoiser twice a step (with and without the prompt); distilled models run it once.",
    ),
    "vae_slicing": (
        "VAE slicing",
        "diffusion inference",
        "Decode one image at a time (diffusers enable_vae_slicing): the decoder's peak memory is one "
        "image's, not the whole batch's.",
    ),
    "vae_tiling": (
        "VAE tiling",
        "diffusion inference",
        "Decode in tiles of the VAE's native side (diffusers enable_vae_tiling: 512 px for SD 1.x, 1024 px "
        "for SDXL, SD3 and FLUX), each tile over the whole batch; helps above the native side.",
    ),
    "text_encoder_offload": (
        "Text encoders on the CPU",
        "inference",
        "The prompt is encoded on the host, so the text encoders' weights leave GPU memory.",
    ),
    "weight_quantization": (
        "Weight quantization",
        "inference",
        "Weights stored in fewer bits (the denoiser; the text encoders too if ticked below).",
    ),
    "quantize_text_encoders": (
        "Quantize the text encoders too",
        "inference, with weight quantization; training, a frozen T5",
        "Unticked, only the denoiser is quantized (a quantized transformer loaded alone). In training the frozen "
        "T5 encoder is held in 8 bits (ai-toolkit's quantize_te).",
    ),
    "nf4_double_quant": (
        "NF4 double quantization",
        "with 4-bit NF4 weights",
        "Ticked, the NF4 block scales are quantized again (QLoRA's recipe: 4.127 bits a weight); untick it when "
        "the BitsAndBytesConfig leaves bnb_4bit_use_double_quant unset, its default off (4.5 bits a weight).",
    ),
    "fused_kernels": (
        "Fused kernels (torch.compile, TensorRT)",
        "",
        "A compiled engine: no separate elementwise passes over the activations.",
    ),
    "image_engine": (
        "Inference engine",
        "inference",
        "The engine the network runs under: PyTorch (eager, or compiled with fused kernels ticked), a TensorRT "
        "engine, or NVIDIA FasterTransformer's ViT, sized as its last release, v5.3 (its own LayerNorm, bias and "
        "GELU kernels between the matmuls; fp16 attention fused on Volta to Ampere, unfused and counted so in "
        "fp32 and on later cards).",
    ),
    "engine_version": (
        "FasterTransformer release",
        "FasterTransformer engine only",
        "The release the FasterTransformer ViT ran; blank: its last, v5.3. v5.0 and v5.1 fuse fp16 attention only "
        "up to 384 tokens, so a 384 px ViT's 577 tokens run unfused (the score passes are counted); its ViT "
        "guide's published tables were measured on v5.0.",
    ),
    "tf32_matmul": (
        "TF32 matmuls",
        "fp32, Ampere and later",
        "The fp32 network's linears and attention run on TF32 tensor cores, as in NVIDIA's NGC PyTorch "
        "containers, PyTorch 1.7 to 1.11, or with allow_tf32 set; unticked, the engine's default: on for "
        "TensorRT, off (the CUDA cores) for PyTorch and for FasterTransformer, which runs fp32 in full FP32 "
        "unless NVIDIA_TF32_OVERRIDE=1 is set.",
    ),
    "images": (
        "Images to generate",
        "inference: a batch job; blank: serving",
        "A generation job's image count, for its GPU hours and cost.",
    ),
    "text_tokens": (
        "Text tokens",
        "SD3, FLUX, LTX-Video; blank: the preset's",
        "Text-encoder tokens the diffusion transformer attends to together with the image.",
    ),
    "unfused_lora_rank": (
        "Unfused LoRA rank",
        "UNet generation; blank: none",
        "The rank of a LoRA loaded beside the UNet and not fused into it (LCM-LoRA as diffusers loads it): "
        "its adapter layers run on every step.",
    ),
    "autocast": (
        "Under torch.autocast",
        "UNet generation, fp16 weights",
        "The fp16 pipeline runs inside torch.autocast (2022 'half' benchmarks, early webuis): its GroupNorms, "
        "LayerNorms and eager softmax run in fp32 and are cast back, extra passes counted from PyTorch's autocast "
        "op lists; memory counts the fp32 attention probabilities only. Not for bf16 weights or tier presets.",
    ),
    "optimizer": (
        "Optimizer",
        "training",
        "The 8-bit AdamWs (bitsandbytes) keep the optimizer's two moments in one byte each.",
    ),
    "flash_attention": (
        "Fused attention (SDPA, FlashAttention)",
        "unticked: eager attention",
        "Fused attention never holds the attention-score matrix; eager attention stores it and is slower.",
    ),
    "optimizer_in_backward": (
        "Optimizer step inside the backward pass",
        "training",
        "Each weight is updated as soon as its gradient is ready (kohya --fused_backward_pass), so no "
        "full gradient buffer is kept.",
    ),
    "train_text_encoder": (
        "Train the text encoders too",
        "diffusion training",
        "Full fine-tuning trains their weights; LoRA adds adapters to their attention.",
    ),
    "prior_preservation": (
        "Prior preservation (DreamBooth)",
        "diffusion training",
        "One class image per instance image, so each step runs twice the images.",
    ),
    "cache_latents": (
        "Cache latents",
        "diffusion training",
        "Latents computed once before training: the VAE is neither loaded nor run (and the text "
        "embeddings are cached too, unless set below).",
    ),
    "cache_text_embeddings": (
        "Cache text embeddings",
        "diffusion training",
        "Text-encoder outputs computed once before training (kohya --cache_text_encoder_outputs): the "
        "text encoders are not loaded.",
    ),
    "memory_format": (
        "Memory format",
        "convolutional classifiers (resnet-50)",
        "The activations' layout: nchw (default: PyTorch's contiguous layout, as timm, torchvision's references and "
        "DLE's main.py run), where cuDNN's tensor-core convolutions (16-bit; fp32 as TF32 on Ampere and later) "
        "transpose each input and output, or channels_last (NHWC: model and input .to(torch.channels_last)).",
    ),
    "data_pipeline": (
        "Training data pipeline",
        "training",
        "What the host's CPUs do for each training image; sets the vCPUs the data loader needs.",
    ),
    "epochs": (
        "Epochs",
        "training, instead of training steps",
        "Passes over the dataset, for hours and cost; needs the dataset's image count.",
    ),
    "dataset_images": ("Dataset images", "training, with epochs", "Images in one epoch."),
    "eval_every_epochs": (
        "Evaluate every N epochs",
        "training by epochs; blank: no evaluation",
        "An evaluation pass over the validation images every this many epochs (DETR and Ultralytics: 1), "
        "priced as inference of the same network and batch on the run's GPUs; needs the validation image count.",
    ),
    "eval_images": (
        "Validation images",
        "training, with evaluations",
        "Images one evaluation runs (COCO: 5,000).",
    ),
    "max_objects_per_image": (
        "Most objects in one image",
        "YOLO training; blank: COCO's 93",
        "The most labelled objects in one training image; sizes the loss's target assignment.",
    ),
    "loader_workers": (
        "Data loader workers per GPU",
        "training; blank: 8 for YOLO (Ultralytics), 10 for ViT crops (DeiT), no cap for diffusion",
        "Worker processes decoding images for each GPU (Ultralytics `workers`, a diffusers script's "
        "--dataloader_num_workers); vCPUs beyond them do not speed the loader.",
    ),
    "source_megapixels": (
        "Source image size (megapixels)",
        "detector training; blank: COCO's 0.29",
        "Typical size of the dataset's stored images before resizing (1360 x 765 = 1.04); each is decoded "
        "once, in time proportional to its pixels.",
    ),
    "deterministic": (
        "Deterministic mode",
        "YOLO training",
        "Ultralytics' deterministic mode (on by default) fills every new tensor before use on PyTorch 2.1 "
        "or later; untick it when the run turns it off or uses an older PyTorch.",
    ),
    "lora_module": (
        "LoRA module",
        "diffusion LoRA training",
        "The trainer's adapter layers: peft (diffusers and SimpleTuner scripts) or kohya's sd-scripts "
        "networks.lora, which launches more kernels a layer and, under all-linear, adapts SD 1.x's 1x1 "
        "proj_in/proj_out convolutions too.",
    ),
    "adafactor_scale_parameter": (
        "Adafactor scale_parameter",
        "Adafactor on a LoRA run",
        "Tick when the run builds Adafactor with scale_parameter on (transformers' default, or kohya's "
        "Adafactor without --optimizer_args): two more ops and a host sync a tensor. Unticked: "
        "scale_parameter and relative_step off, as HF Trainer and kohya's SDXL presets set them.",
    ),
}
# Select knobs: (value, words) for each option; the first is the spec's default
IMAGE_KNOB_OPTIONS = {
    "guidance": (
        ("preset", "The preset's"),
        ("cfg", "CFG: two passes a step"),
        ("distilled", "Distilled: one pass"),
        ("none", "No guidance: one pass"),
    ),
    "weight_quantization": (
        ("none", "Not quantized"),
        ("int8", "8-bit"),
        ("int4", "4-bit"),
        ("nf4", "4-bit NF4"),
    ),
    "optimizer": (
        ("adamw", "AdamW"),
        ("adamw_8bit", "AdamW 8-bit"),
        ("paged_adamw_8bit", "Paged AdamW 8-bit"),
        ("sgd", "SGD"),
        ("adafactor", "Adafactor"),
    ),
    "image_engine": (
        ("pytorch", "PyTorch"),
        ("tensorrt", "TensorRT"),
        ("fastertransformer", "FasterTransformer (ViT)"),
    ),
    "engine_version": (
        ("", "Last release (v5.3)"),
        ("v5.0", "v5.0"),
        ("v5.1", "v5.1"),
        ("v5.2", "v5.2"),
        ("v5.3", "v5.3"),
    ),
    "cache_text_embeddings": (
        ("", "As for latents"),
        ("true", "Yes: encoders not loaded"),
        ("false", "No: encoders run every step"),
    ),
    "lora_module": (
        ("peft", "peft (diffusers, SimpleTuner)"),
        ("kohya", "kohya sd-scripts networks.lora"),
    ),
    "memory_format": (
        ("nchw", "nchw (contiguous, the default: transposes)"),
        ("channels_last", "channels_last (NHWC)"),
    ),
    "data_pipeline": (
        ("preset", "The preset's"),
        ("mosaic", "Mosaic (detector augmentation)"),
        ("crop", "Crops (classification)"),
        ("predecoded", "Pre-decoded: no CPU decode"),
    ),
}


def image_form_fields(knobs: dict[str, str], errors: dict[str, str]) -> list[dict]:
    """The image section's fields in order, each with its label, hint, help, value, kind and error."""
    return [
        {
            "name": knob,
            "label": label,
            "hint": hint,
            "help": help_text,
            "value": knobs.get(knob, ""),
            "kind": _kind(knob),
            "options": IMAGE_KNOB_OPTIONS.get(knob),
            "error": errors.get(knob, ""),
        }
        for knob, (label, hint, help_text) in IMAGE_KNOB_LABELS.items()
    ]


def image_section_context(knobs: dict[str, str], errors: dict[str, str]) -> dict:
    """The template's image section: its fields, open on an image preset or where one of them is marked."""
    fields = image_form_fields(knobs, errors)
    is_image = image_architecture(knobs.get("preset") or "") is not None
    return {"image_fields": fields, "image_open": is_image or any(field["error"] for field in fields)}


def _kind(knob: str) -> str:
    if knob in IMAGE_FLAG_DEFAULTS:
        return "checkbox"
    return "select" if knob in IMAGE_KNOB_OPTIONS else "number"
