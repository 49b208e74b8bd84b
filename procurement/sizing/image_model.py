"""Memory and FLOPs of an image workload sized from its architecture (presets in image_presets.py).

Memory is split like the language models' (weights, gradients, optimizer states, activations) and goes
through the same `_finish` (CUDA context, allocator fragmentation, headroom). FLOPs per image feed the
same efficiency model as language models: training through `training_throughput` (an image is the unit
the engine calls a token: `seq_len` is 1 and `training_tokens` counts instance images), inference at
an efficiency set by the work per kernel (kernel_efficiency). Shape counting rules: image_shapes.py.
"""

from __future__ import annotations

import math
from dataclasses import replace
from functools import lru_cache

import numpy as np

from procurement.sizing import dit_eager
from procurement.sizing.assumptions import (
    ACHIEVED_BANDWIDTH,
    ADAFACTOR_CONV1X1_STATE,
    ADAFACTOR_CONV3X3_STATE,
    DETECTOR_ASSIGNER_BYTES,
    DETECTOR_BOX_DISTRIBUTION_BYTES,
    DETECTOR_CLASSES,
    DETECTOR_CONV_TILE,
    DETECTOR_EFFICIENCY,
    DETECTOR_FORWARD_OVERHEAD,
    DETECTOR_MAX_OBJECTS,
    DETECTOR_SCORE_BYTES_PER_CLASS,
    DETECTOR_TENSORRT_EFFICIENCY,
    DETECTOR_TENSORRT_FORWARD_OVERHEAD,
    DETECTOR_TENSORRT_HALF_GFLOPS,
    DETECTOR_TRAINING_EFFICIENCY,
    DETECTOR_TRAINING_EFFICIENCY_EXPONENT,
    DETECTOR_TRAINING_REFERENCE,
    DETECTOR_TRAINING_REFERENCE_CLOCK,
    EAGER_KERNEL_HOST_SECONDS,
    EAGER_KERNEL_HOST_SECONDS_HIGH,
    EAGER_KERNEL_HOST_SECONDS_HOPPER,
    EAGER_KERNEL_HOST_SECONDS_LOW,
    FRAGMENTATION_FRACTION,
    HOPPER_SDPA_ATTENTION_EFFICIENCY,
    HOST_SYNC_SECONDS,
    IMAGE_HALF_ROWS,
    IMAGE_HALF_ROWS_REFERENCE_TFLOPS,
    IMAGE_PEAK_EFFICIENCY,
    OPTIMIZER_OP_HOST_SECONDS,
    PYTORCH_2_0_NARROW_UNET_RATE,
    VISION_PEAK_EFFICIENCY,
)
from procurement.sizing.detr_shapes import detr_cost, padded_canvas, rtdetr_training_saved
from procurement.sizing.image_presets import component, image_preset, image_presets
from procurement.sizing.image_shapes import (
    DIT_JOINT_BLOCK_GEMMS,
    DIT_SINGLE_BLOCK_GEMMS,
    Cost,
    dit_cost,
    encoder_cost,
    table_cost,
    unet_cost,
    vae_decoder_cost,
    vae_encoder_macs,
    video_dit_cost,
    yolo11_cost,
    yolo_convs,
    yolov8_cost,
)
from procurement.sizing.resnet_shapes import resnet_cost

# Eager attention without SDPA (diffusers AttnProcessor: baddbmm, softmax, bmm) writes the scores, reads
# them into the softmax, writes the probabilities and reads them into the bmm: four passes over heads x N x M.
EAGER_SCORE_PASSES = 4.0
# diffusers before 0.8 (`image.runtime: diffusers-0.7`, its 2022 stack) scales the scores in a kernel of their own:
# CrossAttention._attention, huggingface/diffusers src/diffusers/models/attention.py @0f75d572 lines 336-343,
# `torch.matmul(query, key.transpose(-1, -2)) * self.scale`, then `.softmax(dim=-1)` and `torch.matmul(probs,
# value)`: a read and a write of the scores more than the fused baddbmm of PR #1203 (ad935933, 2022-11-21, v0.8).
# The softmax's re-reads of 4,096-key rows are not counted. xformers PR #412's 'A100 fw' table times that
# operator at SD 1.5's first-level shape (B = 16, M = 4,096, K = 40: 1,940.7 us) within 2% of the 4-pass count
# only if its unnamed 'A100' was a 40GB (1,555 GB/s); on an 80GB (2,039 GB/s) the 4-pass count is 22.5% short,
# about 5.2 passes (tests/procurement/outside/test_outside_eager_a100_stop48.py). The 2 passes here are read
# from the code; the re-reads stay unpriced because no source sizes them (fix48i, after the audit aud48i).
DIFFUSERS_0_7_SCORE_SCALE_PASSES = 2.0
# torch.autocast's passes over eager attention scores (image.autocast): softmax is an fp32_set_opt_dtype op in
# PyTorch's aten/src/ATen/autocast_mode.cpp (1.10 through 2.x), so it reads the 16-bit scores and writes float32
# probabilities (+2 B an element), which the next matmul / bmm (lower_precision_fp) casts back to 16 bits (read
# 4, write 2): 8 B an element beyond the 16-bit forward, four 16-bit passes (aud48i's count,
# tests/procurement/outside/test_outside_diffusers03_audit_stop48.py AUTOCAST_EXTRA_PASSES). diffusers >= 0.8
# casts the probabilities back itself (`attention_probs.to(dtype)`): the same bytes. The norms' casts are
# counted in image_shapes (AUTOCAST_*). Not counted: the VAE decode's and the text encoder's casts (one
# decode and one encode an image, under 2% of a 50-step SD 1.5 generation's), a torch <= 1.9 gelu.
AUTOCAST_SCORE_BYTES = 8.0
# Score-sized tensors alive at once in a diffusion network's eager attention at inference: diffusers'
# AttnProcessor (Attention.get_attention_scores, src/diffusers/models/attention_processor.py at v0.15.1,
# commit ac95aa21c8f48daa58379b669c364280732b917d) allocates the baddbmm input with torch.empty (beta = 0),
# writes the scores and then the softmax probabilities while both are still referenced: three heads x N x M
# tensors at the softmax. diffusers >= 0.17 frees the first (PR #3463, commit bd78f63a54: `del
# baddbmm_input`, `del attention_scores`), two at the peak: the count is the older processor's, one score
# tensor high (conservative) on newer ones. Counted from the code, not fitted; checked by diffusers' ToMe
# benchmark (docs/source/en/optimization/tome.md, diffusers 0.15.1): SD 1.5 on a V100 16GB ran 512 px at
# batch 4 and ran out of memory at batch 8 and at 1024 px (tests/procurement/outside, round 4).
EAGER_INFERENCE_SCORE_TENSORS = 3.0
# The same count for diffusers before 0.8 (`image.runtime: diffusers-0.7`), read from its code: CrossAttention.
# _attention (huggingface/diffusers v0.4.2 src/diffusers/models/attention.py lines 278-281; the same three lines
# at v0.3.0, where the name is rebound, and at @0f75d572, the 0.7 line docs/workload-spec.md cites) is
# `torch.matmul(query, key.transpose(-1, -2)) * self.scale`, `.softmax(dim=-1)`, `torch.matmul(probs, value)`:
# the matmul's 16-bit output is a temporary freed when `* scale` returns, and softmax's 16-bit output takes its
# block, so two score tensors are live and two reserved at the peak (4 B an element; replayed through the c10
# caching allocator's rules in tests/procurement/sizing/test_attention_allocator_autocast.py). No baddbmm input
# (PR #1203, v0.8) is alive beside them. Checked on rows not used to set it: [LAMBDA-AC] (lambda-diffusers PR #11,
# diffusers 0.4.2, RTX A6000 'half' without autocast, memory_reserved 3.38 / 4.92 / 8.82 GB at 1 / 2 / 4 images;
# tests/procurement/outside/test_outside_autocast_memory_fix50s.py).
DIFFUSERS_0_7_SCORE_TENSORS = 2.0
# Under torch.autocast (image.autocast, eager attention) the peak of diffusers' 2022 attention is wider: in
# CrossAttention._attention (huggingface/diffusers v0.4.2 src/diffusers/models/attention.py lines 278-281) the
# matmul's 16-bit temporary is freed once `* scale` returns, softmax, an fp32_set_opt_dtype op
# (aten/src/ATen/autocast_mode.cpp, 1.10 through 2.x), writes fp32 probabilities (4 B) that the caching allocator
# cannot place in the freed 2-byte block (c10 CUDACachingAllocator: requests >= 10 MB get their own segment rounded
# to 2 MB, no merge across segments), and the next matmul (lower_precision_fp, cached_cast) makes their 16-bit copy
# (2 B) in that block: 2 + 4 + 2 = 8 B a score element reserved. v0.4.2 keeps the scaled scores referenced to the
# end (8 B live); v0.3.0 rebinds `attn_slice` to softmax's output, so they die when softmax returns (6 B live),
# reserved 8 B all the same. Without autocast the same code reserves 4 B (softmax's 16-bit output reuses the
# temporary's block), so the code's on-minus-off is +4 B (1.094 GB an image for SD 1.5 at 512 px with CFG, against
# 0.480 measured on [LAMBDA-AC]: lambda-diffusers PR #11, diffusers 0.4.2, RTX A6000 memory_reserved 1 -> 4
# images); all three replayed through the allocator's rules in
# tests/procurement/sizing/test_attention_allocator_autocast.py. This +2 B is not that count: it is the code's 8 B
# on-peak less the product's own 6 B allowance for eager attention without autocast
# (EAGER_INFERENCE_SCORE_TENSORS, diffusers 0.15's three tensors, 2 B above 0.4.2's off-peak), so the product's
# total at the peak under autocast is the code's 8 B. Through the product's allocator allowances it adds 0.617 GB an
# image reserved, -22.2% against [LAMBDA-AC]'s 0.480 (a strict xfail,
# tests/procurement/outside/test_outside_autocast_memory_audit_aud50t.py). The norms' fp32 outputs (and a 0.3.0 VAE
# decode's) are not counted in memory: autocast_memory_warning says so.
# diffmem (stop 51): the 8 B is now the constant and the extra is derived from the runtime's own off-peak
# (eager_inference_score_tensors): 8 - 3 x 2 = 2 B on the later processors, 8 - 2 x 2 = 4 B (the code's
# on-minus-off) under `image.runtime: diffusers-0.7`, whose off-peak is two tensors (DIFFUSERS_0_7_SCORE_TENSORS).
# The peak under autocast is unchanged (8 B); [LAMBDA-AC]'s rows without autocast move inside (-20.3 / -21.2 /
# -14.0% -> -6.8 / -1.8 / +13.3%) and the on-minus-off slope above reads 1.233 GB an image (-61.1%, was -22.2%).
AUTOCAST_EAGER_PEAK_SCORE_BYTES = 8.0
AUTOCAST_PEAK_SCORE_EXTRA_BYTES = AUTOCAST_EAGER_PEAK_SCORE_BYTES - 2.0 * EAGER_INFERENCE_SCORE_TENSORS


def resolution(spec) -> int:
    return spec.image_resolution_px or spec.model.image_arch.resolution_px


def steps(spec) -> int:
    return spec.image.steps or image_preset(spec.model.image_arch.slug).get("steps", 1)


def uses_cfg(spec) -> bool:
    guidance = spec.image.guidance
    if guidance == "preset":
        guidance = image_preset(spec.model.image_arch.slug).get("guidance", "none")
    return guidance == "cfg"


def samples_per_image(spec) -> int:
    """DreamBooth prior preservation trains one class image beside each instance image."""
    return 2 if spec.is_training and spec.image.prior_preservation else 1


def text_tokens(spec) -> int | None:
    """Text tokens a DiT attends to jointly: `image.text_tokens` where the run sets the encoder's length
    (e.g. embeddings cached at 77 T5 tokens), else the preset's."""
    return spec.image.text_tokens or image_preset(spec.model.image_arch.slug).get("text_tokens")


def text_tokens_fixed(slug: str) -> bool:
    """Presets whose network attends to no settable text sequence (UNets use CLIP's 77, detectors none)."""
    return "text_tokens" not in image_preset(slug)


def spec_network_cost(spec) -> Cost:
    """The network of a workload spec: its preset at the spec's resolution and text length."""
    return network_cost(spec.model.image_arch.slug, resolution(spec), spec.image.text_tokens)


@lru_cache(maxsize=512)
def network_cost(slug: str, side: int, text_length: int | None = None) -> Cost:
    """The trained/denoising network at a pixel side: UNet or DiT on latents, detector or ViT on pixels
    (`text_length`: the DiT's joint text tokens, None for the preset's)."""
    entry = image_preset(slug)
    if entry["family"] == "diffusion":
        denoiser = entry["denoiser"]
        joint_text = text_length or entry.get("text_tokens") or 0  # every DiT preset states its tokens
        if denoiser["kind"] == "video_dit":
            return video_dit_cost(denoiser, video_tokens(entry, side), joint_text)
        vae = component(entry["vae"])
        latent = side // vae["downsample"]
        if denoiser["kind"] == "unet":
            return unet_cost(denoiser, latent, component(entry["text_encoders"][-1])["tokens"])
        tokens = (latent // denoiser["patch"]) ** 2
        return dit_cost(denoiser, tokens, joint_text)
    if entry["family"] == "vision":
        if "convnet" in entry:  # a convolutional classifier (ResNet): walked from torchvision's layers
            return resnet_cost(entry["convnet"], side)
        encoder = entry["encoder"]
        return encoder_cost(encoder, (side // encoder["patch"]) ** 2 + 1)
    detector = entry["detector"]
    if detector["kind"] == "yolov8":
        return yolov8_cost(detector, side)
    if detector["kind"] == "yolo11":
        return yolo11_cost(detector, side)
    if detector["kind"] == "detr":  # `side`: the short side; the long side at the preset's aspect
        return detr_cost(detector, side, side * detector["aspect"])
    return table_cost(detector, side, entry["resolution_px"])


def video_tokens(entry: dict, side: int) -> float:
    """Latent tokens of a clip: (height / s) x (width / s) x ((frames - 1) / t + 1); `side` is the height,
    the width keeps the preset's aspect."""
    video = entry["video"]
    width = side * video["width_px"] / entry["resolution_px"]
    spatial = video["spatial_downsample"]
    frames = (video["frames"] - 1) // video["temporal_downsample"] + 1
    return (side // spatial) * (width // spatial) * frames


def network_params(slug: str) -> float:
    """The published parameter count where the source states one (our shape count otherwise)."""
    entry = image_preset(slug)
    part = entry.get("denoiser") or entry.get("detector") or entry.get("convnet") or entry["encoder"]
    return float(part.get("params_published") or network_cost(slug, entry["resolution_px"]).params)


def text_encoders(spec) -> list[dict]:
    return [component(name) for name in image_preset(spec.model.image_arch.slug).get("text_encoders", [])]


def vae(spec) -> dict | None:
    name = image_preset(spec.model.image_arch.slug).get("vae")
    return component(name) if name else None


def lora_params(spec) -> float:
    """Adapter parameters r x (d_in + d_out) over the denoiser's attention projections (`attention`) or
    every linear of its transformer blocks (`all-linear`); ViTs as their q/k/v/o (+ MLP). With
    `image.train_text_encoder`, the text encoders' q/k/v/out projections get adapters too (diffusers'
    DreamBooth LoRA scripts' text-encoder targets), and under `all-linear` their MLP's linears as well
    (text_encoder_mlp_linears)."""
    if not spec.uses_adapters or spec.lora is None:
        return 0.0
    encoders = 0.0
    if spec.image.train_text_encoder:
        rank = spec.lora.rank
        for e in text_encoders(spec):
            mlp = text_encoder_mlp_linears(spec, e) * rank * (e["hidden"] + e["ffn"])
            encoders += e["layers"] * (rank * 4 * 2 * e["hidden"] + mlp)
    return encoders + _network_lora_params(spec)


def text_encoder_mlp_linears(spec, encoder: dict) -> int:
    """Adapted MLP linears a trained text-encoder layer adds under `all-linear`: kohya-ss sd-scripts
    networks/lora.py targets TEXT_ENCODER_TARGET_REPLACE_MODULE = ["CLIPAttention", "CLIPMLP"], every
    Linear inside them: q/k/v/out and fc1/fc2 (a gated T5 layer's wi_0/wi_1/wo: 3). SDXL: CLIP-L 12 x 6 = 72,
    OpenCLIP bigG 32 x 6 = 192 (aud50i's count). 0 under `attention` (diffusers' q/k/v/out targets)."""
    if spec.image.lora_targets != "all-linear":
        return 0
    return 3 if encoder.get("gated") else 2


# kohya-ss sd-scripts networks/lora.py: UNET_TARGET_REPLACE_MODULE = ["Transformer2DModel"], every Linear
# (and 1x1 Conv2d) inside it, so under `all-linear` each Transformer2DModel's proj_in and proj_out
# (channels -> channels; Linear in SDXL, use_linear_projection; 1x1 conv in SD 1.x) besides its blocks'
# attention and GEGLU linears: SDXL 11 Transformer2DModels x 2 + 70 blocks x 10 = 722 (aud50i's count).
# peft's `all-linear` adapts nn.Linear only, so under image.lora_module peft the pair counts only where the
# UNet's config sets use_linear_projection (SDXL base and refiner), not on SD 1.x's 1x1 convolutions (aud50j).
UNET_PROJ_LINEARS_PER_TRANSFORMER = 2


def unet_proj_adapters_per_transformer(spec, denoiser: dict) -> int:
    """Adapted proj_in / proj_out a UNet Transformer2DModel holds under `all-linear`: both under kohya's
    LoRAModule (Linear or 1x1 Conv2d), under peft only where they are Linear (use_linear_projection)."""
    if spec.image.lora_targets != "all-linear":
        return 0
    if spec.image.lora_module == "kohya" or denoiser.get("use_linear_projection"):
        return UNET_PROJ_LINEARS_PER_TRANSFORMER
    return 0


def _network_lora_params(spec) -> float:
    rank, entry = spec.lora.rank, image_preset(spec.model.image_arch.slug)
    every = spec.image.lora_targets == "all-linear"
    if "convnet" in entry:  # no linear but the classifier's fc: no adapter is priced
        return 0.0
    if entry["family"] == "vision":
        e = entry["encoder"]
        h, f = e["hidden"], e["ffn"]
        return float(e["layers"] * rank * (8 * h + (2 * (h + f) if every else 0)))
    if entry["family"] != "diffusion":
        return 0.0
    d = entry["denoiser"]
    if d["kind"] == "unet":
        ctx, total = d["cross_attention_dim"], 0.0
        for level, c in enumerate(d["block_out_channels"]):
            uses = d["layers_per_block"] * 2 + 1 if d["attention"][level] else 0  # down + up blocks
            if level == len(d["block_out_channels"]) - 1:
                uses += 1  # the mid block's transformer
            attention = 4 * 2 * c + 2 * c + 2 * (ctx + c) + 2 * c
            mlp = (c + 8 * c) + (4 * c + c) if every else 0
            total += uses * d["transformer_layers"][level] * rank * (attention + mlp)
            total += uses * unet_proj_adapters_per_transformer(spec, d) * rank * 2 * c
        return float(total)
    h, r = d["hidden"], d["mlp_ratio"]
    if d["kind"] == "video_dit":  # self q/k/v/o, cross q/o, cross k/v from the caption width (+ MLP)
        block = 6 * 2 * h + 2 * (d["caption_dim"] + h) + (2 * (h + r * h) if every else 0)
        return float(rank * d["layers"] * block)
    joint = 2 * (4 * 2 * h + (2 * (h + r * h) if every else 0))
    single = 3 * 2 * h + ((h + r * h) + (h + r * h + h) if every else 0)
    return float(rank * (d["joint_blocks"] * joint + d["single_blocks"] * single))


def lora_layers(spec) -> float:
    """Adapted linears of `lora_params`' targets, one adapter (an A and a B matrix) each: a UNet
    transformer block's attn1 and attn2 q/k/v/out (8; `all-linear` adds the GEGLU in and out), a DiT's
    q/k/v/out per stream of a joint block and q/k/v of a single block (+ the MLP's two under `all-linear`),
    a ViT block's q/k/v/o (+ 2), the text encoders' q/k/v/out under `image.train_text_encoder` (+ their MLP's
    under `all-linear`, text_encoder_mlp_linears); a UNet's Transformer2DModel proj_in / proj_out under
    `all-linear` (unet_proj_adapters_per_transformer: kohya's modules, or peft's where they are Linear)."""
    if not spec.uses_adapters or spec.lora is None:
        return 0.0
    encoders = 0.0
    if spec.image.train_text_encoder:
        encoders = sum(e["layers"] * (4.0 + text_encoder_mlp_linears(spec, e)) for e in text_encoders(spec))
    entry = image_preset(spec.model.image_arch.slug)
    mlp = 2 if spec.image.lora_targets == "all-linear" else 0
    if "convnet" in entry:
        return encoders
    if entry["family"] == "vision":
        return encoders + float(entry["encoder"]["layers"] * (4 + mlp))
    if entry["family"] != "diffusion":
        return encoders
    d = entry["denoiser"]
    if d["kind"] == "unet":
        blocks = transformers = 0.0
        for level in range(len(d["block_out_channels"])):
            uses = d["layers_per_block"] * 2 + 1 if d["attention"][level] else 0
            if level == len(d["block_out_channels"]) - 1:
                uses += 1
            blocks += uses * d["transformer_layers"][level]
            transformers += uses
        proj = unet_proj_adapters_per_transformer(spec, d) * transformers
        return encoders + blocks * (8 + mlp) + proj
    if d["kind"] == "video_dit":
        return encoders + float(d["layers"] * (8 + mlp))
    return encoders + float(d["joint_blocks"] * 2 * (4 + mlp) + d["single_blocks"] * (3 + mlp))


def trainable_params(spec) -> float:
    if not spec.is_training:
        return 0.0
    if spec.uses_adapters:
        return lora_params(spec)
    extra = sum(e["params_published"] for e in text_encoders(spec)) if spec.image.train_text_encoder else 0
    return network_params(spec.model.image_arch.slug) + extra


def frozen_parts_params(spec) -> float:
    """Text encoders and VAE resident beside the denoiser. Training: the VAE is not loaded when latents are
    cached, the text encoders not when their outputs are (caches_text_embeddings); inference: the text
    encoders are not on the GPU when offloaded."""
    encoders = sum(e["params_published"] for e in text_encoders(spec))
    if spec.is_training and spec.image.train_text_encoder and not spec.uses_adapters:
        encoders = 0.0  # counted with the trainable weights
    if spec.is_training and caches_text_embeddings(spec):
        encoders = 0.0
    if not spec.is_training and spec.image.text_encoder_offload:
        encoders = 0.0
    autoencoder = vae(spec)
    adapter = unfused_adapters(spec)[2]  # an unfused LoRA's A and B matrices, resident beside the UNet
    if autoencoder is None or (spec.is_training and spec.image.cache_latents):
        return encoders + adapter
    return encoders + autoencoder["params_published"] + adapter


def caches_text_embeddings(spec) -> bool:
    """Training: whether the text encoders' outputs are precomputed, so the encoders are neither resident
    nor run: image.cache_text_embeddings where the spec states it (kohya-ss sd-scripts caches them only
    under --cache_text_encoder_outputs, a flag apart from --cache_latents, off by default), else as
    image.cache_latents (diffusers' training scripts precompute both or neither)."""
    stated = spec.image.cache_text_embeddings
    return spec.image.cache_latents if stated is None else stated


def quantizes_text_encoders(spec) -> bool:
    """Whether weight_quantization (or an 8/4-bit precision, is_low_bit_generation) reaches the text
    encoders: in inference where image.quantize_text_encoders says so. diffusers' pipeline-level
    PipelineQuantizationConfig quantizes the components it is given, and the HF quantization guide
    (huggingface/blog diffusers-quantization.md) quantizes FLUX's transformer AND its T5 text_encoder_2.
    Training: diffusers' and kohya's scripts load the encoders in the 16-bit weight_dtype (or cache their
    outputs); ai-toolkit holds the frozen T5 in 8 bits (training_quantized_text_encoders), which
    image.quantize_text_encoders states on a training spec."""
    if spec.is_training:
        return spec.image.quantize_text_encoders and bool(training_quantized_text_encoders(spec))
    quantized = spec.weight_quantization != "none" or is_low_bit_generation(spec)
    return quantized and spec.image.quantize_text_encoders


def training_quantized_text_encoders(spec) -> list[dict]:
    """The frozen text encoders a training run holds in 8 bits under image.quantize_text_encoders: the T5
    encoders only. ostris/ai-toolkit toolkit/stable_diffusion_model.py (stored version, read_file id
    6962302512), FLUX: `if self.model_config.quantize_te: quantize(text_encoder_2, ...); freeze(...)` on the
    T5EncoderModel loaded in the run's dtype, then CLIP loaded and kept in that dtype; config_modules.py
    @016777ac: `quantize_te = kwargs.get("quantize_te", self.quantize)`, `qtype_te = kwargs.get("qtype_te",
    "qfloat8")`. Empty where the encoders are not resident (outputs cached) or are trained."""
    if not spec.is_training or caches_text_embeddings(spec) or spec.image.train_text_encoder:
        return []
    names = image_preset(spec.model.image_arch.slug).get("text_encoders", [])
    return [component(name) for name in names if name.startswith("t5-")]


LOW_BIT_GENERATION_PRECISIONS = ("fp8", "int8", "fp4")


def is_low_bit_generation(spec) -> bool:
    """A diffusion generation at an 8- or 4-bit precision: its quantizer (torchao quantize_(pipe.transformer,
    ...), NVIDIA ModelOpt for the MLPerf UNet engines) converts the denoiser only; the pipeline loads every
    other component in its 16-bit torch_dtype (compute_peak.low_bit_image_peak runs them at the 16-bit peak)."""
    return not spec.is_training and spec.precision in LOW_BIT_GENERATION_PRECISIONS and is_diffusion(spec)


def frozen_parts_bytes_per_param(spec, dense: float) -> float:
    """Bytes per weight of the text encoders and VAE beside the denoiser: the run's one dtype (`dense`),
    except a low-bit generation's, whose encoders and VAE stay 16-bit (is_low_bit_generation; with
    image.quantize_text_encoders their linears go to the precision, bytes_model._text_encoder_quantized_bytes).
    [TORCHAO] sayakpaul/diffusers-torchao@9b9f2383: FLUX.1-dev fp8dq model_memory 20.357 GiB = the
    transformer in fp8 beside bf16 T5-XXL, CLIP and VAE."""
    return 2.0 if is_low_bit_generation(spec) else dense


def text_encoder_quantization_saving_bytes(spec, frozen_bytes: float, quantized_bytes: float) -> float:
    """Bytes a quantized load saves on the resident text encoders (0 when quantizes_text_encoders is
    false): bitsandbytes/torchao replace nn.Linear weights only, so each encoder's token embedding
    (vocab x hidden) keeps `frozen_bytes`, and transformers keeps a T5's feed-forward output projections
    (`wo`) in fp32 under a quantized load (T5PreTrainedModel._keep_in_fp32_modules; the component's
    fp32_under_quantization_params), 4 bytes instead of `frozen_bytes`; the rest takes `quantized_bytes`
    per parameter (bytes_model.QUANT_BITS / 8). FLUX.1-dev nf4: T5-XXL 4.76B =
    3.62B quantized (1.87 GB) + 1.01B fp32 (4.03 GB) + 0.13B embedding (0.26 GB) = 5.74 GiB, not 8.87 bf16."""
    if not quantizes_text_encoders(spec) or spec.image.text_encoder_offload:
        return 0.0
    saved = 0.0
    # Training (ai-toolkit): optimum-quanto's quantize() replaces every nn.Linear of the T5 loaded in the
    # run's 16-bit dtype without a transformers quantizer, so no `wo` is kept in fp32 (transformers keeps
    # _keep_in_fp32_modules only under a quantizer or an fp16 load); its embedding (an nn.Embedding) stays.
    quantized_encoders = training_quantized_text_encoders(spec) if spec.is_training else text_encoders(spec)
    for encoder in quantized_encoders:
        fp32_kept = 0.0 if spec.is_training else encoder.get("fp32_under_quantization_params", 0.0)
        quantized = encoder["params_published"] - encoder["vocab"] * encoder["hidden"] - fp32_kept
        saved += quantized * (frozen_bytes - quantized_bytes)
        saved -= fp32_kept * (4.0 - frozen_bytes)
    return saved


def activation_bytes_per_element(spec) -> float:
    return 4.0 if spec.precision == "fp32" else 2.0


def training_memory_cost(spec) -> Cost:
    """The network as a training step's peak memory sees it: the spec's network, except a DETR, whose
    batch is padded to its largest image (detr_shapes.padded_canvas); its FLOPs stay at the average
    image (spec_network_cost)."""
    slug = spec.model.image_arch.slug
    entry = image_preset(slug)
    detector = entry.get("detector") or {}
    if detector.get("training", {}).get("walk") == "rtdetr":
        return _rtdetr_training_cost(slug, resolution(spec))
    if detector.get("kind") != "detr":
        return spec_network_cost(spec)
    height, width = padded_canvas(detector, resolution(spec), entry["resolution_px"], spec.micro_batch_size)
    return _detr_cost_at(slug, height, width)


@lru_cache(maxsize=64)
def _detr_cost_at(slug: str, height: float, width: float) -> Cost:
    return detr_cost(image_preset(slug)["detector"], height, width)


@lru_cache(maxsize=64)
def _rtdetr_training_cost(slug: str, side: int) -> Cost:
    """RT-DETR's training step for peak memory: the published table's parameters and FLOPs at `side`, the
    tensors it keeps from detr_shapes.rtdetr_training_saved at the largest side of its multi-scale training
    (RTDETR multi_scale, up to 800 at the 640 preset: rtdetr_r50vd.yml @68a7feee; the collate interpolates the
    whole batch to one side, so no padding), scaled with a spec's resolution."""
    entry = image_preset(slug)
    detector = entry["detector"]
    cost = network_cost(slug, side)
    training = detector["training"]
    largest = side * training["max_side_px"] / entry["resolution_px"]
    kept = rtdetr_training_saved(training, largest)
    return replace(
        cost,
        saved=kept.saved,
        checkpoint_inputs=kept.checkpoint_inputs,
        largest_block_saved=kept.largest_block_saved,
        eager_scores_saved=kept.eager_scores_saved,
        largest_scores=kept.largest_scores,
        blocks=kept.blocks,
        notes=list(cost.notes),
        launches=list(cost.launches),
        unit_marks=list(cost.unit_marks),
    )


# A ViT trained under torch.autocast (16-bit precision with fp32 master weights: AMP) keeps two kinds of
# tensors wider than its 16-bit compute. PyTorch's autocast op reference (docs 'CUDA Ops that can autocast to
# float32', unchanged from 1.6 to 2.x; aten/src/ATen/autocast_mode.cpp) runs softmax and layer_norm in fp32.
# (1) Eager attention (PyTorch 1.13's F.multi_head_attention_forward for torchvision's nn.MultiheadAttention
# in training; timm 0.6's Attention.forward: q @ k.T, softmax, @ v): softmax's backward keeps its fp32
# output (4 B) and the attn @ v bmm keeps the fp16 copy autocast makes of it (2 B): 6 B an element, not 2.
# (2) The residual stream is fp32: torchvision's class-token cat (promote list) and timm's / torchvision's
# fp32 position-embedding add lift the fp16 patch embedding, and each block adds its fp16 branch output to
# it, so both pre-norms keep fp32 inputs (4 B); the norms' fp32 outputs are cast to 16 bits for the next
# linear, which keeps that copy. Source of the class: FlagPerf's torchvision vit_b_16 AMP run (batch 256, one
# A100-40GB, PyTorch 1.13: 29.4 GiB; tests/procurement/outside/test_outside_audit_stop43v.py).
AUTOCAST_EAGER_SCORE_SAVED_BYTES = 6.0
AUTOCAST_RESIDUAL_BYTES = 4.0


def autocast_vit_training(spec) -> bool:
    """A ViT classifier trained in fp16 or bf16 with fp32 master weights: torch.autocast (AMP)."""
    return (
        spec.is_training
        and spec.model.image_arch is not None
        and is_vit(spec)
        and spec.precision in ("fp16", "bf16")
        and spec.master_weights_fp32
    )


def _autocast_residual_elements(spec, cost: Cost) -> float:
    """Elements a sample keeps from a ViT's fp32 residual stream: the pre-norms' inputs, or under full
    recomputation the blocks' inputs and one block's norms."""
    if spec.gradient_checkpointing == "full" and cost.largest_block_saved:
        return cost.checkpoint_inputs + cost.norm_inputs / max(cost.blocks, 1)
    return cost.norm_inputs


def training_activation_bytes(spec, flash: bool) -> float:
    cost = training_memory_cost(spec)
    samples = spec.micro_batch_size * samples_per_image(spec)
    per_sample = cost.saved
    if spec.gradient_checkpointing == "full" and cost.largest_block_saved:
        per_sample = cost.checkpoint_inputs + cost.largest_block_saved
    scores = 0.0 if flash else cost.eager_scores_saved
    if spec.gradient_checkpointing == "full" and not flash:
        scores = cost.largest_scores
    encoder = 0.0
    if spec.image.train_text_encoder:
        encoder = sum(encoder_cost(e, e["tokens"]).saved for e in text_encoders(spec))
    element = activation_bytes_per_element(spec)
    score_bytes, widened = element, 0.0
    if autocast_vit_training(spec):
        score_bytes = AUTOCAST_EAGER_SCORE_SAVED_BYTES
        widened = (AUTOCAST_RESIDUAL_BYTES - element) * _autocast_residual_elements(spec, cost)
    layers = samples * (per_sample * element + scores * score_bytes + encoder * element + widened)
    return layers + detector_loss_bytes(spec)


# A stated densest image above COCO's (detector_max_objects_per_image, 93) gets the peak-epoch note: the
# calibration and every COCO-density check sit at or below it, and their GPU_mem rows stay inside the 15% memory
# bar about their median epoch to epoch (the coco128 T4 fit row 10.3-12.3 G about 10.8, +14%; [FABIO] 6.61-6.66 G;
# [PERFCAM] 16.4-16.7 G), where the one dense run with many epochs read, VisDrone (902) on an L4, peaks +31%
# (tests/procurement/outside/test_outside_dense_detection_audit_stop48.py). No run between them is published, so
# the note starts where the calibration stops.
DENSE_DETECTOR_PEAK_NOTE_OBJECTS = DETECTOR_MAX_OBJECTS.value
# [L4-Y11]'s 34 mosaic-epoch GPU_mem rows: highest 11.2 G over the median 8.52 G.
DENSE_DETECTOR_PEAK_OVER_MEDIAN = 11.2 / 8.52


def dense_detector_peak_note(spec) -> str | None:
    """For YOLO training on a set denser than COCO: the product sizes a typical epoch, not the peak one."""
    if not spec.is_training or spec.model.image_arch is None or spec.model.is_image_tier or not is_yolo(spec):
        return None
    objects = spec.image.max_objects_per_image or 0
    if objects <= DENSE_DETECTOR_PEAK_NOTE_OBJECTS:
        return None
    return (
        f"dense detection set (image.max_objects_per_image {objects}, above COCO's densest image, "
        f"{DENSE_DETECTOR_PEAK_NOTE_OBJECTS:.0f}): this memory is a typical epoch's, not the peak one. Ultralytics "
        "pads each batch's assigner tensors to the batch's densest augmented mosaic (v8DetectionLoss.preprocess), "
        "which changes from batch to batch, and the caching allocator keeps the differently sized blocks: a "
        "published VisDrone run (densest image 902, YOLO11n batch 16 on an L4) read 5.95-11.2 G of GPU_mem over "
        "34 mosaic epochs about a median of 8.52 G (this product: 8.43 GB), its peak epoch "
        f"{DENSE_DETECTOR_PEAK_OVER_MEDIAN:.2f}x the median; allow about a third more reserved memory if the "
        "peak epoch must fit"
    )


# fix51o (aud51o's FIX LIST item 2): what a later epoch's GPU_mem holds on recent Ultralytics releases. The
# product sizes the training step (epoch 1's bar, before any validate(): [FRUIT-Y8S] -4.9%, [T4-Y8N] -1.6%); from
# 8.3.87 the trainer empties the cache at an epoch's end only above 90% of the card (above 50% from 8.3.109, and
# before validate() too from 8.3.152; aud51o bisected the PyPI wheels, engine/trainer.py 8.3.86 455 unconditional,
# 8.3.87 455 `> 0.9`, 8.3.109 460 `> 0.5`, 8.3.152 459 / 482; still so at ultralytics/ultralytics@00016300
# ultralytics/engine/trainer.py `_clear_memory(... 0.5)` before validate() and after on_fit_epoch_end), so the
# validator's cached blocks stay in the pool. Published jumps from epoch 1 to 2, GiB (the logs print GiB from
# 8.3.76): [FRUIT-Y8S] yolov8s b16 T4 8.3.239 3.73 -> 4.54 (+0.81; median of epochs 2-10 4.68, the product -24.2%),
# [T4-Y8N] yolov8n b16 T4 8.4.41 2.03 -> 2.89 (+0.86, flat to epoch 24; -30.9%), [COLAB-Y11N] yolo11n b16 T4
# 8.3.179 2.44 -> 2.59 (+0.15) (tests/procurement/outside/test_outside_gpu_mem_units_audit_aud51o.py,
# test_outside_gpu_mem_units_yolomem.py). Not a memory term: the jump is nearly one size for a 3.0M and an 11.1M
# model (not the validator's activations scaling with the net) and 0.15 GiB on a third run, so nothing sizes it.
ULTRALYTICS_KEEPS_VALIDATOR_CACHE_RELEASE = "8.3.87"
ULTRALYTICS_VALIDATOR_CACHE_JUMP_GIB = max(4.54 - 3.73, 2.89 - 2.03)


def ultralytics_validator_cache_note(spec) -> str | None:
    """For YOLO (Ultralytics) training: this memory is the training step's, what the bar reads before the first
    validation; later epochs' bars can read higher on releases that keep the validator's cached blocks."""
    if not spec.is_training or spec.model.image_arch is None or spec.model.is_image_tier or not is_yolo(spec):
        return None
    return (
        "this memory is the training step's, what Ultralytics' GPU_mem reads in epoch 1, before any validation. "
        "Readings after the first validation can be higher by up to "
        f"~{math.ceil(ULTRALYTICS_VALIDATOR_CACHE_JUMP_GIB * 10) / 10:.1f} GiB on Ultralytics >= "
        f"{ULTRALYTICS_KEEPS_VALIDATOR_CACHE_RELEASE}, which keeps the validator's cached blocks: from that "
        "release the trainer empties the CUDA cache only above 90% of the card (50% from 8.3.109; "
        "ultralytics engine/trainer.py, _clear_memory). Published T4 runs (8.3.179 to 8.4.41) read 0.15 to "
        f"{ULTRALYTICS_VALIDATOR_CACHE_JUMP_GIB:.2f} GiB more from epoch 2, and one crept a further "
        "0.03-0.04 GiB an epoch; not counted here"
    )


def memory_notes(spec) -> list[str]:
    """The image network's saved-activation choices that a reader needs to check an answer, in words, then
    the Ultralytics validator-cache caveat where it applies (last, so the first note keeps its place)."""
    notes = _network_memory_notes(spec)
    kept = ultralytics_validator_cache_note(spec)
    return notes + [kept] if kept else notes


def _network_memory_notes(spec) -> list[str]:
    dense = dense_detector_peak_note(spec)
    if dense:
        return [dense]
    unstated = unstated_density_note(spec)
    if unstated:
        return [unstated]
    if spec.is_training and is_rtdetr(spec):
        return [
            "RT-DETR training (enabled at stop 47): the kept tensors are counted from its shapes at the largest "
            "multi-scale side (800 px at the 640 preset) with DETR's rules, no published training memory checks "
            "them; its step runs at the YOLO-fitted detector training rate, which users' runs of RT-DETR "
            "(lyuwenyu/RT-DETR issues #7, #410) suggest is several times too fast (deformable attention, "
            "denoising queries and Hungarian matching are not priced)"
        ]
    if not autocast_vit_training(spec):
        return []
    notes = [
        "AMP (torch.autocast) ViT training: the residual stream is fp32, so each block's two LayerNorm "
        "inputs are kept at 4 bytes an element"
    ]
    if not spec.flash_attention:
        notes.append(
            "eager attention under autocast: softmax runs in fp32 and keeps its fp32 output plus the 16-bit "
            "copy the attention-times-values matmul takes, 6 bytes a score element"
        )
    return notes


def unstated_density_note(spec) -> str | None:
    """Say what the unstated image.max_objects_per_image assumes in a YOLO training answer: COCO's densest
    image (DETECTOR_MAX_OBJECTS), whose assigner slots are held for every anchor of the batch, and how much
    of the memory that is against a one-object-an-image set (aud51i: a 25-image sparse set read +17.7%).
    The default is not changed: no source gives a small dataset's density. None where it is stated."""
    if not spec.is_training or spec.model.image_arch is None or spec.model.is_image_tier or not is_yolo(spec):
        return None
    if spec.image.max_objects_per_image is not None:
        return None
    objects = DETECTOR_MAX_OBJECTS.value
    slots = spec.micro_batch_size * detector_anchors(resolution(spec)) * DETECTOR_ASSIGNER_BYTES.value
    return (
        f"the densest training image is not stated (image.max_objects_per_image), so the loss's assigner is "
        f"sized for COCO's, {objects:.0f} objects ({DETECTOR_MAX_OBJECTS.key}): "
        f"{slots * (objects - 1) / 2**30:.2f} GiB of this memory more than a dataset of one object an image "
        "needs. A sparse dataset (a few objects an image) reads high; state its densest label file's count"
    )


def detector_anchors(side: int) -> float:
    """Anchor points of a YOLO head: one per cell of the stride-8, 16 and 32 grids (8,400 at 640 px)."""
    return sum((side // stride) ** 2 for stride in (8, 16, 32))


def detector_loss_bytes(spec) -> float:
    """A YOLO training step's loss temporaries, added to the layers' activations (alive together: the loss
    runs before the backward); they grow with the anchors, not with the network's width. Per image and
    anchor: a part every anchor carries whatever the labels (the classification targets and scores over
    the head's classes, detector_score_bytes_per_class, and the box distribution's softmax,
    detector_box_distribution_bytes) and the task-aligned assigner's part per object slot of the batch's
    densest image (detector_assigner_bytes x image.max_objects_per_image). A sparse dataset (one object
    per image) keeps the first. 0 for other networks."""
    if not is_yolo(spec) or not spec.is_training:
        return 0.0
    objects = spec.image.max_objects_per_image or DETECTOR_MAX_OBJECTS.value
    anchors = detector_anchors(resolution(spec))
    per_anchor = DETECTOR_SCORE_BYTES_PER_CLASS.value * DETECTOR_CLASSES.value
    per_anchor += DETECTOR_BOX_DISTRIBUTION_BYTES.value + objects * DETECTOR_ASSIGNER_BYTES.value
    return spec.micro_batch_size * anchors * per_anchor


def inference_activation_bytes(spec, flash: bool) -> float:
    """The largest transient of a generation: the denoiser forward over the batch (twice with CFG),
    the VAE decode (vae_decode_peak_elements: sliced, tiled or whole), or an encoder forward."""
    return max(_inference_transient_bytes(spec, flash))


def _inference_transient_bytes(spec, flash: bool) -> tuple[float, float, float]:
    """Live bytes at the peak of the denoiser forward, the VAE decode and the largest encoder forward."""
    side = resolution(spec)
    batch = spec.micro_batch_size * (2 if uses_cfg(spec) else 1)
    cost = spec_network_cost(spec)
    scores = 0.0 if flash else eager_inference_score_tensors(spec) * cost.largest_scores
    denoise = cost.forward_peak + scores
    autoencoder = vae(spec)
    decode = vae_decode_peak_elements(spec, autoencoder, side) if autoencoder else 0.0
    encode = max((encoder_cost(e, e["tokens"]).forward_peak for e in text_encoders(spec)), default=0.0)
    element = activation_bytes_per_element(spec)
    widened = autocast_peak_score_bytes(spec, flash, cost) * batch
    return denoise * batch * element + widened, decode * vae_decode_bytes_per_element(spec), encode * element


def autocast_peak_score_bytes(spec, flash: bool, cost: Cost) -> float:
    """Bytes torch.autocast adds to a sample's eager attention peak (`image.autocast`): the code's 8 B reserved
    under autocast (AUTOCAST_EAGER_PEAK_SCORE_BYTES) less the runtime's 16-bit tensors without it
    (eager_inference_score_tensors): 2 B a score element on the later processors, 4 B (the code's on-minus-off)
    under `image.runtime: diffusers-0.7`. 0 without autocast or with fused attention."""
    if flash or not spec.image.autocast:
        return 0.0
    extra = AUTOCAST_EAGER_PEAK_SCORE_BYTES - 2.0 * eager_inference_score_tensors(spec)
    return extra * cost.largest_scores


# The memory under image.autocast counts only the attention peak's fp32 probabilities: the run's other fp32
# tensors (the norms' outputs, and on diffusers 0.3.0 the VAE decode's upcast norms) are not walked for memory.
# Measured 2022 diffusers 0.3.0 rows under autocast (LambdaLabsML/lambda-diffusers benchmark.csv, memory_reserved
# after one call) against this product's figure: the 2469d61 script's rows (@cc81843: Quadro RTX 8000 1-16 images,
# RTX A6000 1 / 16, A100 80GB 28) read -13.5% (RTX 8000, 16 images: 38.18 GB against 44.15) to +4.4%; the rows
# the earlier c6598a5 script measured (before `revision="fp16"`) +20.6% / +20.8% (RTX A6000 / RTX 3090, 4 images)
# and +22.7% (A100 80GB, 8 images)
# (tests/procurement/outside/test_outside_autocast_memory_audit_aud50t.py, test_outside_autocast_audit_aud50s.py).
AUTOCAST_MEMORY_WARNING = (
    "image.autocast: the memory counts autocast's fp32 attention probabilities (8 bytes a score element reserved at "
    "the attention peak, over the 16-bit score tensors counted without it: three, two on diffusers-0.7) but not its "
    "other fp32 tensors "
    "(the GroupNorm / LayerNorm outputs; on diffusers 0.3.0 the VAE decode's upcast norms and attention): measured "
    "2022 diffusers 0.3.0 runs under autocast reserved from 13.5% less (Quadro RTX 8000, 16 images a call) to 4% "
    "more than this figure, and 21-23% more (RTX A6000 / RTX 3090 at 4 images, A100 at 8) in rows an earlier "
    "version of the same benchmark script measured; allow for it"
)


def autocast_memory_warning(spec) -> str | None:
    """The answer's caveat on memory under image.autocast (AUTOCAST_MEMORY_WARNING); None without it."""
    if spec.model.image_arch is None or not spec.image.autocast:
        return None
    return AUTOCAST_MEMORY_WARNING


def unet_forward_reserve_ratio(spec) -> float | None:
    """Bytes PyTorch's caching allocator reserves per byte a no-grad UNet forward holds at its peak: the
    preset's `forward_reserve_ratio`, computed by replaying diffusers' recorded forward of that layout through
    the allocator's rules (tests/procurement/sizing/test_unet_allocator_reserve.py). None for other networks
    and for UNet presets without a recording (the flat allocator_fragmentation_fraction then applies)."""
    if spec.is_training or not is_unet(spec):
        return None
    return image_preset(spec.model.image_arch.slug)["denoiser"].get("forward_reserve_ratio")


def inference_allocator_reserve_bytes(spec, flash: bool) -> float:
    """What the caching allocator reserves beyond allocator_fragmentation_fraction while a UNet forward runs
    (unet_forward_reserve_ratio of its activation peak); zero where the decode or an encoder reserves more."""
    ratio = unet_forward_reserve_ratio(spec)
    if ratio is None:
        return 0.0
    denoise, decode, encode = _inference_transient_bytes(spec, flash)
    held = max(denoise, decode, encode)
    return max(0.0, ratio * denoise - (1.0 + FRAGMENTATION_FRACTION) * held)


def vae_decode_peak_elements(spec, autoencoder: dict, side: int) -> float:
    """Elements alive at the peak of the VAE decode, as diffusers' AutoencoderKL.decode runs it: the whole
    batch at once; with `image.vae_slicing` (enable_vae_slicing: `z.split(1)` when the batch is over one)
    one image at a time; with `image.vae_tiling` (enable_vae_tiling) in tiles of the VAE's sample size
    (tile_sample_min_size = vae/config.json sample_size, the preset's native side: 512 px for SD 1.x,
    1024 px for SDXL, SD3 and FLUX), only where the latent is larger than a tile, each tile decoded over
    every image the call holds (tiled_decode slices the latent's height and width, not its batch)."""
    tile_px = image_preset(spec.model.image_arch.slug)["resolution_px"]
    decode_side = min(side, tile_px) if spec.image.vae_tiling else side
    images = 1 if spec.image.vae_slicing else spec.micro_batch_size
    return vae_decoder_cost(autoencoder, decode_side // autoencoder["downsample"]).forward_peak * images


def eager_score_passes(spec) -> float:
    """Passes an eager inference makes over its attention scores: EAGER_SCORE_PASSES, plus
    DIFFUSERS_0_7_SCORE_SCALE_PASSES where the generation runs diffusers' 2022 stack (`image.runtime:
    diffusers-0.7`), whose attention scales the scores in a kernel of their own."""
    runtime = spec.image.runtime if spec.model.image_arch is not None else "optimized"
    extra = DIFFUSERS_0_7_SCORE_SCALE_PASSES if runtime == "diffusers-0.7" else 0.0
    return EAGER_SCORE_PASSES + extra


def eager_inference_score_tensors(spec) -> float:
    """Score-sized tensors an eager attention holds at its peak in inference: diffusers' AttnProcessor
    for diffusion networks (EAGER_INFERENCE_SCORE_TENSORS), two on diffusers' 2022 stack (`image.runtime:
    diffusers-0.7`, DIFFUSERS_0_7_SCORE_TENSORS); one for the others (their own counts)."""
    if not spec.model.image_arch.is_diffusion:
        return 1.0
    if spec.image.runtime == "diffusers-0.7":
        return DIFFUSERS_0_7_SCORE_TENSORS
    return EAGER_INFERENCE_SCORE_TENSORS


def vae_decode_bytes_per_element(spec) -> float:
    """diffusers' SDXL pipelines upcast the VAE to fp32 for the decode when the pipeline runs in fp16
    (`needs_upcasting = vae.dtype == float16 and vae.config.force_upcast`; SDXL's vae/config.json sets
    force_upcast, the fp16 VAE overflows): the decode's activations are then 4-byte elements. Outside
    review x29: HF blog simple_sdxl_optimizations, fp16 + SDPA, 4 images at 1024 px on an A100 40GB, 21.72
    GiB allocated of which ~15 GiB is the fp32 decode."""
    preset = image_preset(spec.model.image_arch.slug)
    if spec.precision == "fp16" and preset.get("vae_fp32_under_fp16"):
        return 4.0
    return activation_bytes_per_element(spec)


def memory_bytes(spec, state, dp, zero, flash: bool) -> dict[str, np.ndarray]:
    """Per-GPU bytes by part for data-parallel plans (ZeRO shards optimizer, gradients, weights)."""
    shard_optimizer = np.where(zero >= 1, dp, 1.0)
    shard_gradients = np.where(zero >= 2, dp, 1.0)
    shard_weights = np.where(zero >= 3, dp, 1.0)
    trainable = state.trainable_params
    zero_plan = 0 * dp
    if spec.is_training:
        activations = training_activation_bytes(spec, flash)
    else:
        activations = inference_activation_bytes(spec, flash)
    return {
        # ZeRO-3/FSDP gathers one block at a time, as for language models; a YOLO or RT-DETR run also holds
        # its trainer's fp32 EMA copy (detector_ema_bytes), unsharded
        "weights": state.weight_bytes / shard_weights
        + np.where(zero >= 3, state.largest_layer_bytes, 0.0)
        + detector_ema_bytes(spec),
        "gradients": training_gradient_bytes(spec, state) / shard_gradients,
        "optimizer_states": (trainable * state.optimizer_bytes_per_param + factored_conv_state_bytes(spec))
        / shard_optimizer,
        "activations": activations + zero_plan,
        "kv_cache": zero_plan,
        "host_offload": zero_plan,
        "allocator_reserve": inference_allocator_reserve_bytes(spec, flash) + zero_plan,
    }


def detector_ema_bytes(spec) -> float:
    """The detector trainer's exponential moving average of the weights, resident on the GPU for the whole run,
    for the presets whose trainer keeps one (trainer_keeps_fp32_ema): 4 B a network parameter (buffers,
    BatchNorm's running statistics, are under 0.2% of them); 0 for other networks and for inference.

    Ultralytics (YOLOv8, YOLO11): _setup_train builds `self.ema = ModelEMA(self.model)` on rank 0 (RANK in
    {-1, 0}, i.e. every single-GPU run), and ModelEMA.__init__ is `deepcopy(de_parallel(model)).eval()  #
    FP32 EMA`, a second copy of every parameter and buffer at the model's fp32 dtype (AMP autocasts the
    computation, not the weights), updated in place each optimizer step (ultralytics 8.2.103 wheel:
    engine/trainer.py 292-300, utils/torch_utils.py 512-530, engine/validator.py 116 / 201; the 8.0.6 wheel the
    same, yolo/engine/trainer.py 234-239, yolo/utils/torch_utils.py 250). The training-time validation halves
    it in place (model.half() on trainer.ema.ema) and the epoch ends with an empty_cache before the next
    training bar prints, so only the fp32 copy is seen.

    RT-DETR (lyuwenyu/RT-DETR rtdetr_pytorch): every COCO config includes configs/rtdetr/include/optimizer.yml,
    `use_ema: True` with `ema: {type: ModelEMA, decay: 0.9999, warmups: 2000}` (@a4a0c6a3); YAMLConfig.ema
    creates it when use_ema is set (src/core/yaml_config.py @64836918) and BaseSolver.setup moves it to the
    device on every rank, `self.ema = cfg.ema.to(device)` (src/solver/solver.py @a4a0c6a3); its ModelEMA is
    `deepcopy(dist.de_parallel(model)).eval()  # FP32 EMA` with the fp16 line commented out
    (src/optim/ema.py @3330eca6): the same 4 B a parameter, on each GPU (Ultralytics: rank 0, the largest).
    The same repository's earlier Paddle trainer (rtdetr_paddle @60b6e83, the only RT-DETR training code before
    rtdetr_pytorch's landed in a4a0c6a, 2023-08-21) does the same: _base_/rtdetr_r50vd.yml `use_ema: True`,
    ppdet/engine/trainer.py 126-139 builds ModelEMA on every rank and ppdet/optimizer/ema.py keeps
    `paddle.zeros_like(v)` of each state entry (frozen parameters shared, ema_filter_no_grad)."""
    if not spec.is_training or not trainer_keeps_fp32_ema(spec):
        return 0.0
    return 4.0 * network_params(spec.model.image_arch.slug)


def trainer_keeps_fp32_ema(spec) -> bool:
    """Whether the preset's own trainer keeps an fp32 EMA of the weights on the GPU (detector_ema_bytes):
    the Ultralytics trainer (YOLO kinds) and RT-DETR's solver (its shipped configs set use_ema: True). DETR's
    trainer keeps none (facebookresearch/detr main.py and engine.py train_one_epoch: no moving average)."""
    return is_yolo(spec) or is_rtdetr(spec)


def factored_conv_state_bytes(spec) -> float:
    """Adafactor's second moment on convolution weights, beyond the rows + columns of a matrix that
    bytes_model counts per parameter. transformers' Adafactor factors every tensor of 2 or more dims
    (_get_options: `factored = len(param_shape) >= 2`) into exp_avg_sq_row = zeros(shape[:-1]) and
    exp_avg_sq_col = zeros(shape[:-2] + shape[-1:]) (huggingface/transformers@ad1fc963
    src/transformers/optimization.py; kohya's fused step reuses it: kohya-ss/sd-scripts@6517b2b8
    library/adafactor_fused.py, adafactor_step_param). For a 4-D conv weight [out, in, k, k] that is
    out x in x k elements twice: 2/3 of a 3x3 kernel's size and twice a 1x1 kernel's, in fp32 whatever the
    weights (both cast a 16-bit gradient with grad.float() before creating the state). Full fine-tuning of
    a UNet only: adapters are matrices."""
    if spec.optimizer != "adafactor" or not spec.is_training or spec.uses_adapters:
        return 0.0
    cost = spec_network_cost(spec)
    elements = ADAFACTOR_CONV3X3_STATE.value * cost.conv3x3_params + ADAFACTOR_CONV1X1_STATE.value * (
        cost.conv1x1_params
    )
    return elements * 4.0


def training_gradient_bytes(spec, state) -> float:
    """Gradient bytes resident during a training step: every trainable parameter's, or, with
    `optimizer_in_backward`, one block's. A step fused into the backward (PyTorch's
    Tensor.register_post_accumulate_grad_hook, the 'optimizer step in backward' tutorial; kohya-ss/sd-scripts
    --fused_backward_pass, PR #1259) updates each parameter as soon as its gradient is accumulated and frees
    that gradient, so at most the block being back-propagated holds gradients: the language models' rule
    (memory._one_layer_grads), with the network's average block (weights / blocks, as the ZeRO-3 gather
    buffer of _image_state_bytes)."""
    full = state.trainable_params * state.grad_bytes_per_param
    if not spec.optimizer_in_backward:
        return full
    blocks = max(spec_network_cost(spec).blocks, 1)
    return full / blocks


def _pass_factor(spec) -> float:
    """Forward-equivalents per trained sample: forward + backward (2x forward); full fine-tuning also
    computes weight gradients (another 2x: 6N vs 4N for adapters, as for language models); full
    recomputation adds one forward."""
    factor = 3.0 if not spec.uses_adapters else 2.0
    return factor + (1.0 if spec.gradient_checkpointing == "full" else 0.0)


def training_flops_per_image(spec) -> float:
    """FLOPs per instance image of a training step (class images of prior preservation included). Under
    torchao float8 (torchao_float8_linears) the frozen linears' weight gradients are computed as well."""
    slug, side = spec.model.image_arch.slug, resolution(spec)
    cost = spec_network_cost(spec)
    flops = 2.0 * cost.macs * _pass_factor(spec)
    if spec.uses_adapters:
        flops += 6.0 * lora_params(spec)
        if torchao_float8_linears(spec):  # the frozen weights' grad_weight matmuls (see below)
            # proj_out stays an nn.Linear (the recipe's module_filter_fn): autograd skips its frozen grad_weight
            flops += 2.0 * (cost.macs - cost.attention_macs - cost.output_linear_macs)
    autoencoder = vae(spec)
    if image_preset(slug)["family"] == "diffusion" and not spec.image.cache_latents and autoencoder:
        flops += 2.0 * vae_encoder_macs(autoencoder, side)  # a preset without a sized VAE (video): left out
    if image_preset(slug)["family"] == "diffusion" and not caches_text_embeddings(spec):
        for encoder in text_encoders(spec):
            passes = 3.0 if spec.image.train_text_encoder else 1.0
            flops += 2.0 * encoder_cost(encoder, encoder["tokens"]).macs * passes
    return flops * samples_per_image(spec)


def inference_flops_per_image(spec) -> float:
    """Steps x denoiser forward (x2 with CFG, plus any unfused adapter's matmuls) + text encoders + VAE
    decode; one forward for detectors."""
    return _inference_flops(spec, lambda cost: cost.macs) + unfused_adapter_flops_per_image(spec)


def _inference_flops(spec, macs_of) -> float:
    """Inference FLOPs per image counting `macs_of(cost)` of every network a generation runs."""
    slug, side = spec.model.image_arch.slug, resolution(spec)
    denoiser = 2.0 * macs_of(spec_network_cost(spec))
    if image_preset(slug)["family"] != "diffusion":
        return denoiser
    flops = steps(spec) * denoiser * (2 if uses_cfg(spec) else 1)
    flops += sum(2.0 * macs_of(encoder_cost(e, e["tokens"])) for e in text_encoders(spec))
    autoencoder = vae(spec)
    if autoencoder is None:  # video presets: the decode is not sized (preset source says so)
        return flops
    return flops + 2.0 * macs_of(vae_decoder_cost(autoencoder, side // autoencoder["downsample"]))


def inference_traffic_bytes_per_image(spec, generation=None):
    """Bytes eager PyTorch moves outside the matmuls per image: every activation tensor a forward produces
    (the elements a training step would save, image_shapes.py) written once and read once by the
    normalization, activation, residual and concatenation kernels between the convolutions and linears.
    With `flash_attention: false` (eager attention, no SDPA) the attention scores add EAGER_SCORE_PASSES
    passes over heads x N x M each (diffusers fast_diffusion tutorial: SDXL on an A100 takes 4.63 s without
    SDPA and 3.31 s with it). Fused stacks (torch.compile, TensorRT: `image.fused_kernels`) fold those passes
    into the matmuls; a diffusion pipeline keeps the eager traffic of the parts its compiled denoiser
    leaves behind (uncompiled_parts_traffic_bytes_per_image), a TensorRT YOLO its fused layers' outputs
    (tensorrt_detector_traffic_bytes_per_image). An eager int8 weight-only DiT adds its dequantize and
    output passes (weight_dequantize_bytes_per_image)."""
    if spec.image.fused_kernels:
        return (
            uncompiled_parts_traffic_bytes_per_image(spec)
            + tensorrt_detector_traffic_bytes_per_image(spec)
            + fastertransformer_traffic_bytes_per_image(spec)
        )
    slug, side = spec.model.image_arch.slug, resolution(spec)
    cost = spec_network_cost(spec)
    elements, scores = cost.saved, cost.eager_scores_saved
    element = activation_bytes_per_element(spec)  # eager scores are in the compute dtype, 4 B under fp32
    if image_preset(slug)["family"] == "diffusion":
        passes = steps(spec) * (2 if uses_cfg(spec) else 1)
        elements *= passes
        scores *= passes
        elements, scores = _plus_pipeline_parts(spec, side, elements, scores)
    score_bytes = 0.0 if spec.flash_attention else eager_score_passes(spec) * scores * element
    adapter = unfused_adapter_traffic_bytes_per_image(spec)
    denoiser_passes = steps(spec) * (2 if uses_cfg(spec) else 1)
    clip = fp16_clip_elements_per_sample(spec) * denoiser_passes
    autocast = autocast_bytes_per_sample(spec) * denoiser_passes
    return (
        2.0 * (elements + clip) * element
        + score_bytes
        + adapter
        + autocast
        + weight_dequantize_bytes_per_image(spec)
        + nchw_transpose_bytes_per_sample(spec, generation)
    )


# NVIDIA generation from which cuDNN runs fp32 convolutions on TF32 tensor cores by PyTorch's default:
# torch.backends.cudnn.allow_tf32 defaults True (pytorch/pytorch aten/src/ATen/Context.h `bool allow_tf32_cudnn =
# true;`; docs notes/cuda.rst 'TensorFloat-32 (TF32) on Ampere (and later) devices': "The flag below controls whether
# to allow TF32 on cuDNN. This flag defaults to True."), unlike matmuls (allow_tf32 False since 1.12). Ampere = 80
# (gpus._GENERATIONS); the same rule compute_peak.spec_peak_tflops applies to the convolutions' peak.
TF32_CONVOLUTION_GENERATION = 80


def tensor_core_convolutions(spec, generation=None):
    """Whether cuDNN runs a convolution of this precision on tensor cores on a card of NVIDIA `generation` (an
    array where the callers pass one; None: no card known): 16-bit always (Volta and later), fp32 as TF32 on
    Ampere and later (TF32_CONVOLUTION_GENERATION), not on Volta / Turing (SIMT, NCHW-native) or an unknown card.
    The gate is the tensor cores, not the element size (audrn's FIX LIST item 2)."""
    if activation_bytes_per_element(spec) < 4:
        return np.asarray(True)
    if generation is None:
        return np.asarray(False)
    return np.nan_to_num(np.asarray(generation, dtype=float), nan=0.0) >= TF32_CONVOLUTION_GENERATION


def nchw_transpose_bytes_per_sample(spec, generation=None):
    """Bytes one forward of one sample moves transposing a convnet's activations (image.memory_format nchw)
    where its convolutions run on tensor cores (tensor_core_convolutions: 16-bit, or fp32 as TF32 on Ampere and
    later): cuDNN's tensor-core convolutions compute in NHWC, so an NCHW (PyTorch's default contiguous) input is
    transposed to NHWC before each convolution and its output back after it (NVIDIA Deep Learning Performance
    Guide, Convolutional Layers User's Guide, 'Tensor Layouts In Memory: NCHW vs NHWC': kernels that need a
    transpose run slower than NHWC ones; the PyTorch channels-last tutorial, pytorch/tutorials
    intermediate_source/memory_format_tutorial.py: ResNet-50 AMP on Volta 22% faster in channels_last). Each
    transpose reads and writes its tensor once: 2 x (inputs + outputs, Cost.conv_io) x the element's bytes.
    Backward's two convolutions a layer (data and weight gradients) transpose the same sizes: a training step
    pays it once a pass (training_eager_seconds_per_image). The transposes' own launches are cuDNN's, inside the
    convolution's call, not counted on the host.

    Every convolution is counted as transposed: an UPPER BOUND. Under cudnn.benchmark (timm's benchmark.py,
    DLE's main.py) cuDNN times every engine for each shape and may keep an NCHW-native kernel for some
    convolutions (a 1x1 convolution over NCHW is already a GEMM over (C, H x W)); which ones it kept in a given
    release was not located (no profile of an NCHW ResNet-50 forward read), so no share is taken off. timm's
    paired PyTorch 2.4 inference rows pay about a third of this count (3090 / 4090, -35.6% / -30.3%, strict
    xfails UNEXPLAINED), its PyTorch 1.12 training rows all of it (+2.4%). The answer says so
    (memory_format_note). 0 for channels_last, fused engines and convolutions off the tensor cores. `generation`
    is the card's (an array where the callers pass one)."""
    if spec.image.memory_format != "nchw" or spec.image.fused_kernels or not is_convnet(spec):
        return 0.0
    per_sample = 2.0 * spec_network_cost(spec).conv_io * activation_bytes_per_element(spec)
    on_tensor_cores = tensor_core_convolutions(spec, generation)
    if on_tensor_cores.ndim == 0:
        return per_sample if bool(on_tensor_cores) else 0.0
    return np.where(on_tensor_cores, per_sample, 0.0)


def memory_format_note(spec, generation=None) -> str | None:
    """The answer's statement of the layout an eager convolutional classifier is sized in (fixrn2, audrn's FIX
    LIST items 1, 3 and 5): nchw (stated, or the default: _default_memory_format in spec.py) with its transposes
    counted for every convolution, an upper bound, and what channels_last changes; the transposes' NHWC
    buffers left out of memory. None for channels_last, fused engines and other networks."""
    if spec.image.memory_format != "nchw" or spec.image.fused_kernels or not is_convnet(spec):
        return None
    if not bool(np.all(tensor_core_convolutions(spec, generation))):
        return (
            "layout NCHW (image.memory_format nchw, PyTorch's default): fp32 convolutions on this card run on "
            "the CUDA cores in NCHW (no TF32 tensor cores), so no NHWC transposes are counted"
        )
    per_forward = 2.0 * spec_network_cost(spec).conv_io * activation_bytes_per_element(spec) / 1e6
    return (
        f"layout NCHW (image.memory_format nchw, PyTorch's default and what timm train.py, torchvision's "
        f"references and NVIDIA DLE's main.py run unless told): cuDNN's tensor-core convolutions compute in "
        f"NHWC, so every convolution's input is counted as transposed to NHWC and its output back, "
        f"{per_forward:.1f} MB an image a pass at the achieved bandwidth. An upper bound: under cudnn.benchmark "
        "cuDNN may keep NCHW-native kernels for some convolutions (timm's paired PyTorch 2.4 inference rows pay "
        "about a third of it; its training rows all of it). The transposes' NHWC buffers are transient and not "
        "counted in memory. A run whose model and input are .to(memory_format=torch.channels_last) pays none: "
        "state image.memory_format channels_last"
    )


def autocast_bytes_per_sample(spec) -> float:
    """Bytes torch.autocast adds to one denoiser forward of one sample (`image.autocast`: a 16-bit UNet inside
    torch.autocast): its float32 norms' chains (image_shapes.AUTOCAST_*) and, with eager attention, the
    probabilities' float32 write and cast back (AUTOCAST_SCORE_BYTES). 0 without autocast."""
    if not spec.image.autocast:
        return 0.0
    cost = spec_network_cost(spec)
    scores = 0.0 if spec.flash_attention else AUTOCAST_SCORE_BYTES * cost.eager_scores_saved
    return cost.autocast_norm_bytes + scores


def autocast_forward_kernels(spec) -> float:
    """Cast kernels torch.autocast adds to one denoiser forward (`image.autocast`): the norms' input, weight,
    bias and output casts (image_shapes.AUTOCAST_*_KERNELS) and, with eager attention, one cast of the
    probabilities an attention. 0 without autocast."""
    if not spec.image.autocast:
        return 0.0
    cost = spec_network_cost(spec)
    return cost.autocast_kernels + (0.0 if spec.flash_attention else cost.attentions)


def fp16_clip_elements_per_sample(spec) -> float:
    """Elements an eager fp16 Flux forward clips in kernels of their own: diffusers' Flux blocks
    (src/diffusers/models/transformers/transformer_flux.py @375ec930, v0.33.1: FluxSingleTransformerBlock.forward
    100-101 `if hidden_states.dtype == torch.float16: hidden_states = hidden_states.clip(-65504, 65504)` over the
    joint image + text stream; FluxTransformerBlock.forward 187-188 the same on encoder_hidden_states, the text
    stream only) run one more elementwise pass over the residual stream a block, read and written like the
    activations inference_traffic_bytes_per_image counts. bf16 and fp32 skip it, torch.compile folds it into the
    residual add (image.fused_kernels), SD3's joint blocks (models/attention.py JointTransformerBlock, same
    release) have no clip: 0 there. Counted from the code, not fitted. This is diffusers' cost (present from
    v0.30.0, PR #9097, through v0.39.0, aud49i): image.engine pytorch is sized as diffusers; another Flux
    implementation (Black Forest Labs' reference code, ComfyUI) is not read here. It does not close the fp16 /
    bf16 gap BenchmarkFlux publishes on an A100 (+0.48 s against +0.045 s charged)."""
    if spec.is_training or spec.precision != "fp16" or spec.image.fused_kernels or not is_diffusion(spec):
        return 0.0
    denoiser = image_preset(spec.model.image_arch.slug)["denoiser"]
    if denoiser.get("kind") != "mmdit" or not denoiser.get("single_blocks"):
        return 0.0
    cost = spec_network_cost(spec)
    text = text_tokens(spec) or 0
    return float(
        denoiser["hidden"] * (denoiser["single_blocks"] * cost.tokens + denoiser["joint_blocks"] * text)
    )


# Bytes per element of q or k that diffusers' eager Flux attention moves in its fp32 chains, counted from
# huggingface/diffusers @375ec930 (v0.33.1), kernel by kernel (read + write, bf16 2 B, fp32 4 B):
# models/normalization.py RMSNorm.forward 554-563 (norm_q / norm_k / norm_added_q / norm_added_k):
# .to(float32) 2+4, .pow(2) 4+4, .mean(-1) 4, hidden_states * rsqrt(...) 2+4 (bf16 x fp32 promotes to fp32),
# .to(weight.dtype) 4+2, * weight 2+2 = 34, less the 4 B (one 16-bit write and read) the activations already
# count: 30. models/embeddings.py apply_rotary_emb 1204-1213 (use_real, unbind -1): -x_imag 2+1 (a strided half
# of x: whole 32 B sectors read), torch.stack 3+2, x.float() 2+4, * cos 4+4, x_rotated.float() 2+4, * sin 4+4,
# the add 8+4, .to(x.dtype) 4+2 = 54. Counted from the code, not fitted.
FLUX_QK_NORM_BYTES_PER_ELEMENT = 30.0
FLUX_QK_ROPE_BYTES_PER_ELEMENT = 54.0


def flux_qk_chain_dram_bytes_per_step(spec, l2_cache_bytes) -> np.ndarray:
    """DRAM bytes one eager denoising step of a Flux (or qk-normed SD3.5) transformer moves in its fp32 q / k chains beyond the
    counted activations, per card (`l2_cache_bytes`: each row's L2, GpuSpec.l2_cache_bytes; None or NaN: not
    known, 0 there, today's behaviour). diffusers' FluxAttnProcessor2_0 (models/attention_processor.py
    @375ec930 2304-2340) runs RMSNorm on q and k (the joint blocks on the image and the text tokens apart,
    the single blocks on both), then apply_rotary_emb on the joined q and k: chains of elementwise kernels,
    each writing a tensor of the batch's heads x tokens x head_dim in fp32 that the next one reads
    (FLUX_QK_*_BYTES_PER_ELEMENT). A chain whose fp32 tensor fits the card's L2 is read back from it; one that
    does not streams through DRAM at every kernel: each kernel walks the tensor in the order the one before
    wrote it, so with a cache smaller than the tensor every line is evicted before it is read again (the
    thrashing the CUDA C++ Best Practices Guide's 'L2 Cache Access Window' sliding-window benchmark shows once
    its window exceeds the L2 it may hold). The rule is all or nothing at the datasheet size (GpuSpec.
    l2_cache_bytes), which overstates the L2 a little (the A100 / H100 split it in two partitions, and the
    weights and other tensors share it). So at 1,024 px (4,608 tokens, 14.2M elements, 56.6 MB a tensor) the
    H100's 50 MB and the A100's 40 MB spill and the L40S's 96 MB holds it. Eager 16-bit Flux inference only
    (torch.compile fuses the chains: image.fused_kernels; training runs them too, forward and backward, not
    priced here). ditk: SD3.5 Large runs the same RMSNorm chains (qk_norm rms_norm; diffusers v0.32.0
    models/attention_processor.py JointAttnProcessor2_0 1399-1470: norm_q / norm_k on the image q and k,
    norm_added_q / norm_added_k on the text's, no RoPE), so every mmdit preset with `qk_norm` pays them and only
    one with `rope` (FLUX.1) pays the RoPE chain; SD3 Medium (no qk norm) pays none. Under CFG the chains run on
    the batch's two samples at once (79.7 MB an image q at SD3.5 Large's 1,024 px: the H100's L2 spills)."""
    l2 = np.asarray(np.nan if l2_cache_bytes is None else l2_cache_bytes, dtype=float)
    if spec.is_training or spec.precision == "fp32" or spec.image.fused_kernels or not is_diffusion(spec):
        return np.zeros_like(l2)
    denoiser = image_preset(spec.model.image_arch.slug)["denoiser"]
    if denoiser.get("kind") != "mmdit" or not denoiser.get("qk_norm"):
        return np.zeros_like(l2)
    samples = spec.micro_batch_size * (2 if uses_cfg(spec) else 1)
    joined = spec_network_cost(spec).tokens * denoiser["hidden"] * samples
    text = (text_tokens(spec) or 0) * denoiser["hidden"] * samples
    rope = 2 * (denoiser["joint_blocks"] + denoiser["single_blocks"]) if denoiser.get("rope") else 0
    # (elements of one tensor, bytes an element, tensors a forward): q and k in every block
    chains = (
        (joined - text, FLUX_QK_NORM_BYTES_PER_ELEMENT, 2 * denoiser["joint_blocks"]),
        (text, FLUX_QK_NORM_BYTES_PER_ELEMENT, 2 * denoiser["joint_blocks"]),
        (joined, FLUX_QK_NORM_BYTES_PER_ELEMENT, 2 * denoiser["single_blocks"]),
        (joined, FLUX_QK_ROPE_BYTES_PER_ELEMENT, rope),
    )
    total = np.zeros_like(l2)
    for elements, per_element, tensors in chains:
        spills = np.nan_to_num(4.0 * elements > l2, nan=0.0) & np.isfinite(l2)
        total = total + np.where(spills, elements * per_element * tensors, 0.0)
    return total


def flux_qk_chain_l2_note(spec, l2_cache_bytes, bandwidth_bytes=None) -> str | None:
    """The answer's statement that an eager Flux step's fp32 q / k chains (flux_qk_chain_dram_bytes_per_step)
    were not charged on this card because its L2 is unknown (GpuSpec.l2_cache_bytes None: no source in
    gpus.L2_CACHE_BYTES_BY_SLUG), with what they would add if they spilled. None where the chains do not apply
    or the card's L2 is known (then the figure already holds the rule's answer)."""
    if l2_cache_bytes is not None and np.isfinite(float(l2_cache_bytes)):
        return None
    spilled = float(flux_qk_chain_dram_bytes_per_step(spec, 0.0))
    if not spilled > 0:
        return None
    denoiser = image_preset(spec.model.image_arch.slug)["denoiser"]
    samples = spec.micro_batch_size * (2 if uses_cfg(spec) else 1)
    tensor_mb = 4.0 * spec_network_cost(spec).tokens * denoiser["hidden"] * samples / 1e6
    chain = "RMSNorm and RoPE" if denoiser.get("rope") else "RMSNorm"
    cost = ""
    if bandwidth_bytes:
        seconds = spilled / (float(bandwidth_bytes) * ACHIEVED_BANDWIDTH.value)
        cost = f", {seconds:.3f} s a step at this card's bandwidth"
    return (
        f"the fp32 q / k chains of this eager DiT step ({chain}, each up to a {tensor_mb:.1f} MB fp32 tensor) "
        f"were not charged for DRAM traffic because this card's L2 cache size is unknown: had they spilled it, "
        f"they would add {spilled / 1e9:.1f} GB a step{cost}. A card with a known L2 smaller than the tensor pays "
        "it, so this card may read faster than it is; a compiled engine (image.fused_kernels) fuses the chains"
    )


# FasterTransformer is sized as its last release, v5.3 (NVIDIA/FasterTransformer tag release/v5.3_tag, d21dc02,
# 2023-01-23; the ViT code below is the same at v5.2, 4c014fba, which vit44 first read): what a user running it
# today builds. Its ViT guide's tables (docs/vit_guide.md) were measured on v5.0 (a44c381, 2022-04-15) and never
# re-measured; v5.0 fused attention only up to 384 tokens, so its 384 px (577-token) rows ran unfused attention
# and are slower than this sizes (tests/procurement/outside/test_outside_vision_audit_stop44.py).
FASTERTRANSFORMER_VERSION = "v5.3"
# Elements per hidden unit per token per layer that NVIDIA FasterTransformer's ViT moves outside its GEMMs, counted
# from its code (NVIDIA/FasterTransformer src/fastertransformer/models/vit/ViT.cc ViTTransformer::forward and
# layers/attention_layers/FusedAttentionLayer.cu @4c014fba, unchanged in these at release/v5.3_tag but for an
# fp8 scale argument): its cuBLAS GEMMs carry no epilogue, so each layer runs
# invokeGeneralLayerNorm (reads the residual, writes the norm: 2), the q/k/v GEMMs then trt_add_QKV_bias (reads
# q, k and v, writes them packed for the fused attention: 6), the attention output GEMM then
# invokeGeneralAddBiasResidualPreLayerNorm (reads the output and the residual, writes the residual and the next
# norm: 4), the FFN's first GEMM then its add-bias-GELU (reads and writes 4h: 8), the second GEMM then
# invokeAddBiasResidual (reads the output and the residual, writes the residual: 3) = 23. Counted, not fitted;
# the patch embedding's bias/class-token/position kernel and the final LayerNorm (once a forward) are left out.
FASTERTRANSFORMER_VIT_LAYER_PASSES = 23.0
# The sequence lengths the TensorRT fused-attention kernels FasterTransformer v5.3's ViT calls are built for: a
# sequence is padded to the next of them (FusedMHARunnerFP16v2 getSFromMaxSeqLen, 3rdparty/
# trt_fused_multihead_attention/qkvToContext.cu @release/v5.3_tag: 32, 64, 96, 128, 192, 256, 384, 512), so
# ViT's 197 tokens attend as 256; past 512 ('for bert and vit, use flash attention when s >= 512') S is the
# sequence itself, unpadded, and BaseAttentionLayer.h getAttentionType fuses half-precision ViT attention at
# every length (v5.0's `max_seq_len <= 384` is gone). On Volta (sm70) the same function takes 64 for 32 and
# 256 for 192 (FASTERTRANSFORMER_FMHA_SM70_LENGTHS).
FASTERTRANSFORMER_FMHA_LENGTHS = (32, 64, 96, 128, 192, 256, 384, 512)
FASTERTRANSFORMER_FMHA_SM70_LENGTHS = (64, 96, 128, 256, 384, 512)
# The generations whose half-precision (fp16) ViT attention v5.3 fuses, with the head widths it fuses there:
# getAttentionType (src/fastertransformer/layers/attention_layers/BaseAttentionLayer.h @release/v5.3_tag d21dc02,
# called by examples/cpp/vit/vit_example.cc) returns FUSED_MHA only for T = half, no causal mask and no Swin bias,
# on sm70/72 with size_per_head 64 and on sm75/80/86 with 64 or 32 (generation 80 here is sm80 and sm86). Any
# other T (fp32, bf16) and every other card (Ada sm89, Hopper sm90, Blackwell) get UNFUSED_MHA.
FASTERTRANSFORMER_FUSED_HEAD_SIZES = {70: (64,), 75: (32, 64), 80: (32, 64)}
# v5.0 (a44c381) and v5.1 (bc21406), getAttentionType in BaseAttentionLayer.h: half, sm70 / 72 / 75 / 80 / 86,
# size_per_head == 64 and max_seq_len <= 384, else unfused; ViT.cc builds FusedAttentionLayer only `&& max_seq_len_
# <= 384` (image_spec.FASTERTRANSFORMER_VERSIONS). Not fitted: read from the code.
FASTERTRANSFORMER_V50_FUSED_HEAD_SIZES = {70: (64,), 75: (64,), 80: (64,)}
FASTERTRANSFORMER_V50_FUSED_MAX_TOKENS = 384
FASTERTRANSFORMER_LENGTH_BOUND_VERSIONS = ("v5.0", "v5.1")
# The unfused attention's passes over the heads x S x S scores a layer, counted from UnfusedAttentionLayer.cc
# forward and invokeMaskedSoftmax (src/fastertransformer/kernels/unfused_attention_kernels.cu) @release/v5.3_tag:
# the strided batched GEMM Q.K^T writes them (1), softmax_kernel reads them and writes the probabilities in place
# (2), the strided batched GEMM P.V reads them (1) = 4. Counted, not fitted.
FASTERTRANSFORMER_UNFUSED_SCORE_PASSES = 4.0
# Beside the scores: the softmax reads the [batch, S, S] attention mask (ViT.cc's mask_buf_) for every head, counted
# once an image and layer (1 pass over S x S, the heads' re-reads assumed to hit L2: at ViT-B 384 px fp32 batch 32
# the batch's mask is 42.6 MB, about an A100-40GB's L2, so some may not, up to 11 more passes over S x S, 176 MB an
# image, ~2% of that row's time, not counted), and invokeTransposeQKV reads the P.V output [batch, heads, S, size_per_head] and
# writes it [token, hidden] for the output GEMM (2 elements a hidden unit and token), which the fused kernel
# writes in place. Its add-bias-transpose (invokeAddQKVBiasIA3Transpose: reads q, k, v, writes them per head, 6)
# moves what the fused path's trt_add_QKV_bias does (FASTERTRANSFORMER_VIT_LAYER_PASSES counts it): no change.
FASTERTRANSFORMER_UNFUSED_TRANSPOSE_PASSES = 2.0


def is_fastertransformer(spec) -> bool:
    return spec.image.engine == "fastertransformer"


def vit_tokens(spec) -> int:
    """A ViT classifier's sequence: its patches plus the class token (network_cost counts the same)."""
    encoder = image_preset(spec.model.image_arch.slug)["encoder"]
    return (resolution(spec) // encoder["patch"]) ** 2 + 1


def fastertransformer_traffic_bytes_per_image(spec) -> float:
    """Bytes a FasterTransformer ViT forward moves between its GEMMs: FASTERTRANSFORMER_VIT_LAYER_PASSES
    elements per hidden unit, token and layer, in the compute dtype. 0 for other engines."""
    if not is_fastertransformer(spec):
        return 0.0
    encoder = image_preset(spec.model.image_arch.slug)["encoder"]
    tokens = vit_tokens(spec)
    elements = FASTERTRANSFORMER_VIT_LAYER_PASSES * encoder["hidden"] * tokens * encoder["layers"]
    return elements * activation_bytes_per_element(spec)


def _padded_tokens(tokens: int, lengths: tuple[int, ...]) -> int:
    return next((length for length in lengths if length >= tokens), tokens)


def fastertransformer_version(spec) -> str:
    """The FasterTransformer release sized: image.engine_version, or FASTERTRANSFORMER_VERSION unstated."""
    return spec.image.engine_version or FASTERTRANSFORMER_VERSION


def fastertransformer_bounds_fused_length(spec) -> bool:
    """Whether the release sized fuses fp16 ViT attention only up to FASTERTRANSFORMER_V50_FUSED_MAX_TOKENS
    (v5.0 and v5.1; image_spec.FASTERTRANSFORMER_VERSIONS says where each was read)."""
    return fastertransformer_version(spec) in FASTERTRANSFORMER_LENGTH_BOUND_VERSIONS


def fastertransformer_attention_unfused(spec, generation=None):
    """Whether FasterTransformer runs this ViT's attention unfused on a card of NVIDIA `generation` (an
    array, or None: an unknown card, sized fused as before): fp32 and bf16 always; fp16 off the fused
    generations or at another head width (getAttentionType: FASTERTRANSFORMER_FUSED_HEAD_SIZES @release/v5.3_tag,
    FASTERTRANSFORMER_V50_FUSED_HEAD_SIZES in v5.0 / v5.1) and, in v5.0 / v5.1, past
    FASTERTRANSFORMER_V50_FUSED_MAX_TOKENS tokens, on any card. Other precisions (int8, fp8: its ViTINT8 and fp8
    paths, not read here) stay fused. False for other engines."""
    if not is_fastertransformer(spec):
        return False
    if spec.precision in ("fp32", "bf16"):
        return True
    if spec.precision != "fp16":
        return False
    bounded = fastertransformer_bounds_fused_length(spec)
    if bounded and vit_tokens(spec) > FASTERTRANSFORMER_V50_FUSED_MAX_TOKENS:
        return True if generation is None else np.ones(np.shape(generation), dtype=bool)
    if generation is None:
        return False
    encoder = image_preset(spec.model.image_arch.slug)["encoder"]
    head = encoder["hidden"] // encoder["heads"]
    table = FASTERTRANSFORMER_V50_FUSED_HEAD_SIZES if bounded else FASTERTRANSFORMER_FUSED_HEAD_SIZES
    fused = [gen for gen, heads in table.items() if head in heads]
    return ~np.isin(np.asarray(generation), fused)


def fastertransformer_unfused_tokens(spec) -> int:
    """The sequence FasterTransformer's unfused attention runs (v5.0 / v5.1's unfused path at > 384 tokens, any
    release's fp32 and bf16, and v5.3's fp16 off sm70-sm86): fp16 padded to a multiple of 8 (ViT.cc need_padding,
    the same at a44c381 and release/v5.3_tag: 577 -> 584, 197 -> 200), fp32 and bf16 as is ('pads only half')."""
    tokens = vit_tokens(spec)
    return (tokens + 7) // 8 * 8 if spec.precision == "fp16" else tokens


def fastertransformer_token_padding(spec, generation=None):
    """The tokens a FasterTransformer ViT layer's GEMMs and elementwise kernels run per token it needs: where
    ViT.cc pads (need_padding: the unfused path in fp16 at a token count off a multiple of 8), forward sets
    h_token_num = batch x the padded length after invokeRebuildPadding, and every layer's LayerNorms, q/k/v,
    output and FFN GEMMs (via the attention and FFN layers' [h_token_num, hidden] tensors), bias / residual
    kernels run over h_token_num rows (src/fastertransformer/models/vit/ViT.cc ViTTransformer::forward @a44c381,
    v5.0, and the same at release/v5.3_tag): 584 / 577 = 1.012 at 384 px, 200 / 197 = 1.015 at 224 px. 1 where
    the attention is fused or the length needs no padding (an array over `generation`). Read from the code, not
    fitted; the patch embedding (written unpadded, then rebuilt) and the classifier are left at the real count."""
    if not is_fastertransformer(spec):
        return 1.0
    ratio = fastertransformer_unfused_tokens(spec) / vit_tokens(spec)
    unfused = fastertransformer_attention_unfused(spec, generation)
    if generation is None:
        return ratio if unfused else 1.0
    return np.where(unfused, ratio, 1.0)


def fastertransformer_unfused_attention_bytes_per_image(spec, generation=None):
    """Bytes FasterTransformer's unfused ViT attention (the path fastertransformer_unfused_tokens lists) moves
    beyond its fused one, an image: every layer's heads x S x S
    scores FASTERTRANSFORMER_UNFUSED_SCORE_PASSES times, the S x S mask once and the output transpose's
    FASTERTRANSFORMER_UNFUSED_TRANSPOSE_PASSES elements a hidden unit and token, in the compute dtype, at S the
    sequence it runs (fastertransformer_unfused_tokens). 0 where the attention is fused (an array over
    `generation`)."""
    unfused = fastertransformer_attention_unfused(spec, generation)
    if not np.any(unfused):
        return 0.0
    encoder = image_preset(spec.model.image_arch.slug)["encoder"]
    tokens = fastertransformer_unfused_tokens(spec)
    scores = (FASTERTRANSFORMER_UNFUSED_SCORE_PASSES * encoder["heads"] + 1.0) * tokens**2
    transpose = FASTERTRANSFORMER_UNFUSED_TRANSPOSE_PASSES * encoder["hidden"] * tokens
    elements = (scores + transpose) * encoder["layers"]
    return np.where(unfused, elements * activation_bytes_per_element(spec), 0.0)


def attention_padding(spec, generation=None):
    """The attention FLOPs a forward runs per FLOP it needs: (padded / real sequence)^2 under
    FasterTransformer v5.3's fused attention (FASTERTRANSFORMER_FMHA_LENGTHS; on Volta, `generation` 70,
    FASTERTRANSFORMER_FMHA_SM70_LENGTHS), 1 elsewhere or past 512 tokens (flash attention, unpadded). Where
    FasterTransformer runs it unfused (fastertransformer_attention_unfused), the sequence its batched GEMMs run
    (fastertransformer_unfused_tokens: fp16 to a multiple of 8, fp32 unpadded). The padded fp16 tokens also run
    through the layer's GEMMs and elementwise kernels (ViT.cc pads the whole sequence): counted by
    fastertransformer_token_padding, 7 of 577 tokens (1.2%) at 384 px, 3 of 197 (1.5%) at 224 px."""
    if not is_fastertransformer(spec):
        return 1.0
    tokens = vit_tokens(spec)
    padding = (_padded_tokens(tokens, FASTERTRANSFORMER_FMHA_LENGTHS) / tokens) ** 2
    unfused = fastertransformer_attention_unfused(spec, generation)
    unfused_padding = (fastertransformer_unfused_tokens(spec) / tokens) ** 2
    if generation is None:
        return unfused_padding if unfused else padding
    volta = (_padded_tokens(tokens, FASTERTRANSFORMER_FMHA_SM70_LENGTHS) / tokens) ** 2
    fused = np.where(np.asarray(generation) == 70, volta, padding)
    return np.where(unfused, unfused_padding, fused)


def fastertransformer_version_note(spec, generation=None) -> str | None:
    """The answer's statement of the FasterTransformer it sized (FASTERTRANSFORMER_VERSION), where that
    decides it: the fused attention's padding, fp32's full-FP32 GEMMs (not TF32), the unfused attention v5.3
    runs in fp32 and bf16 and, in fp16, past Ampere (`generation` 89 and later: getAttentionType
    @release/v5.3_tag fuses ViT attention on sm70/72/75/80/86 only) with the score traffic counted for it
    (fastertransformer_unfused_attention_bytes_per_image), and past 384 tokens that its guide's published rows
    are v5.0's, whose attention ran unfused there. None for other engines."""
    if not is_fastertransformer(spec):
        return None
    tokens = vit_tokens(spec)
    version = fastertransformer_version(spec)
    bounded = fastertransformer_bounds_fused_length(spec)
    text = f"sized as FasterTransformer {version}" + (
        " (its last release)" if spec.image.engine_version is None else " (image.engine_version)"
    )
    unfused_here = bool(np.all(fastertransformer_attention_unfused(spec, generation)))
    if unfused_here:
        encoder = image_preset(spec.model.image_arch.slug)["encoder"]
        unfused = fastertransformer_unfused_tokens(spec)
        shape = f"padded to {unfused}" if unfused != tokens else "unpadded"
        megabytes = float(fastertransformer_unfused_attention_bytes_per_image(spec, generation)) / 1e6
        if spec.precision != "fp16":
            where = f"in {spec.precision} ({version} fuses ViT attention in fp16 only)"
        elif bounded and tokens > FASTERTRANSFORMER_V50_FUSED_MAX_TOKENS:
            where = (
                f"past {FASTERTRANSFORMER_V50_FUSED_MAX_TOKENS} tokens ({version} fuses fp16 ViT attention up to "
                f"{FASTERTRANSFORMER_V50_FUSED_MAX_TOKENS} tokens only; v5.2 and later at any length)"
            )
        else:
            where = f"on this card ({version} fuses fp16 ViT attention on Volta, Turing and Ampere only)"
        text += (
            f", with its attention unfused {where}: this network's {tokens} tokens {shape}, the "
            f"{encoder['heads']} heads' scores written by one batched GEMM, read and written by its softmax and "
            "read by the second GEMM (4 passes a layer), plus the mask once and the output transpose, counted as "
            f"{megabytes:,.0f} MB an image at {ACHIEVED_BANDWIDTH.value:.0%} of the card's memory bandwidth"
        )
        if unfused != tokens:
            text += f", and every layer's GEMMs and elementwise kernels run over the {unfused} padded tokens"
    else:
        shape = (
            "unpadded (flash attention past 512)"
            if tokens > 512
            else f"padded to {_padded_tokens(tokens, FASTERTRANSFORMER_FMHA_LENGTHS)}"
        )
        text += f" with fused attention at every sequence length, this network's {tokens} tokens {shape}"
    if spec.precision == "fp32" and not spec.image.tf32_matmul:
        text += (
            "; fp32 GEMMs in full FP32 on the CUDA cores, its default (image.tf32_matmul true states a "
            "run with NVIDIA_TF32_OVERRIDE=1)"
        )
    if tokens > FASTERTRANSFORMER_V50_FUSED_MAX_TOKENS and not unfused_here and not bounded:
        text += (
            "; its ViT guide's tables were measured on v5.0, whose attention past 384 tokens ran unfused and "
            "slower than this (image.engine_version v5.0 sizes that release)"
        )
    return text


# Measured eager attention at an unaligned token count (vit45c, issue 29). Source [XF-EAGER]: xformers' A100
# fp16 forward benchmark of eager attention (facebookresearch/xformers xformers/benchmarks/
# benchmark_mem_eff_attention.py @3a16b203, the 'eager' column: ref_attention, i.e. q * scale, q @ k.T,
# softmax, @ v on [B, M, K] tensors, fp16, timed by torch.utils.benchmark), tables in the pull-request threads,
# us a call over B heads of M tokens, head width K = 64:
#   - PR #530 ('Allow custom softmax in memory efficient attention', 2022-11-17), section 'A100 fw', M = 197:
#     B = 1,024 1,768.7 us (1.727 us a head), B = 384 679.3 (1.769), B = 32 x 16 heads 981.8 (1.918);
#   - PR #434 ('p100nvcc', 2022-09-23), M = 197, B = 1,024: 1,731.0 us (1.690 us a head).
# The table holds the B = 1,024 figure, the one two threads measured within 2% of each other (the other two
# #530 rows are 2-11% slower: the value is the low end, not a fit). 197 tokens make score rows of 394 bytes in
# fp16, not a multiple of 16, so cuBLAS's batched GEMMs and the softmax run off the aligned tensor-core path: at
# an aligned 256 the same benchmark takes 0.618 us a head for 1.69x the elements (PR #434; its GPU could not be
# confirmed, so it is not used here). Keyed by (the measured card, tokens, head width); the card is the GA100
# A100 / A800 (generation 80 at >= 1.5 TB/s of HBM2e; the other generation-80 cards have <= 936 GB/s: the GA10x
# GeForce / RTX A-series cards and the A30, a GA100 with HBM2 at 933 GB/s, unmeasured). Measured in fp16 only: bf16
# takes the fp16 rate, an assumption (aud45v).
EAGER_ATTENTION_MEASURED_SECONDS_PER_HEAD = {("a100", 197, 64): 1768.7e-6 / 1024}
EAGER_ATTENTION_MEASURED_CARD_BANDWIDTH = 1.5e12
# Only the measured length takes its rate (aud45v: a window of nearby unaligned counts mixed alignment classes,
# 197 odd and 196 a multiple of 4, with nothing measured between them). The product counts the class token, so
# ViT-B/16 at 224 px is 197; a run built without it (AITemplate's eager script, 196 tokens) is sized at 197's rate,
# an assumption: its own figures imply 1.07-1.32 us a head, 0.62-0.77 of the 197 rate, which is its remaining
# -6.3..-17.4%. Aligned counts (multiples of 8: 256, 576) keep the product's counted cost; other unaligned counts
# (ViT-L/16 at 384 px, 577; ViT-B/32, 50) are unmeasured and keep it too, and the answer says so
# (eager_attention_rate_note).
EAGER_ATTENTION_MEASURED_TOKEN_WINDOW = 0
EAGER_ATTENTION_ALIGNMENT = 8


def _eager_vit_attention(spec) -> dict | None:
    """The ViT encoder whose eager attention the measured table could price: a patch-token encoder, eager
    attention (`flash_attention: false`, no fused stack), 16-bit compute. None otherwise."""
    if spec.model.image_arch is None or spec.model.is_image_tier:
        return None
    if spec.flash_attention or spec.image.fused_kernels or spec.precision not in ("fp16", "bf16"):
        return None
    encoder = image_preset(spec.model.image_arch.slug).get("encoder")
    if not encoder or not encoder.get("patch"):
        return None
    return encoder


def _misaligned_eager_vit(spec) -> tuple[dict, int] | None:
    """The eager ViT encoder (_eager_vit_attention) and its token count, where that count is not a multiple
    of EAGER_ATTENTION_ALIGNMENT (the off-tensor-core path the measured table prices); None otherwise."""
    encoder = _eager_vit_attention(spec)
    if encoder is None:
        return None
    tokens = vit_tokens(spec)
    if tokens % EAGER_ATTENTION_ALIGNMENT == 0:
        return None
    return encoder, tokens


def eager_attention_measured_seconds_per_head(spec) -> float | None:
    """The measured time of one head's eager attention (EAGER_ATTENTION_MEASURED_SECONDS_PER_HEAD) at this
    ViT's token count on the measured card, scaled by (tokens / measured)^2 within
    EAGER_ATTENTION_MEASURED_TOKEN_WINDOW of it; None where the table does not apply (fused or SDPA attention,
    fp32, an aligned count, an unmeasured length or head width). The card is checked by the caller."""
    misaligned = _misaligned_eager_vit(spec)
    if misaligned is None:
        return None
    encoder, tokens = misaligned
    width = encoder["hidden"] // encoder["heads"]
    for (_, measured, head_width), seconds in EAGER_ATTENTION_MEASURED_SECONDS_PER_HEAD.items():
        if head_width == width and abs(tokens - measured) <= EAGER_ATTENTION_MEASURED_TOKEN_WINDOW:
            return seconds * (tokens / measured) ** 2
    return None


def is_measured_eager_attention_card(generation, bandwidth_bytes):
    """Whether a card is the one the eager attention table was measured on (an array): the A100 / A800."""
    if generation is None or bandwidth_bytes is None:
        return np.asarray(False)
    return (np.asarray(generation) == 80) & (
        np.asarray(bandwidth_bytes, dtype=float) >= EAGER_ATTENTION_MEASURED_CARD_BANDWIDTH
    )


def eager_attention_excess_seconds_per_image(
    spec, peak_flops, bandwidth_bytes, generation, attention_efficiency
):
    """What the measured eager attention (eager_attention_measured_seconds_per_head, every head of every
    layer) takes beyond the product's count of the same operations: the score and context batched GEMMs'
    FLOPs (attention_flops_per_image of a forward) at `attention_efficiency` and the scores' EAGER_SCORE_PASSES
    at the achieved bandwidth; the q / k / v copies stay counted as activations. Forward only: in training the
    backward's batched GEMMs were not measured and keep their counted cost. 0 where the table does not apply
    or off the measured card (an array over cards)."""
    per_head = eager_attention_measured_seconds_per_head(spec)
    if per_head is None or peak_flops is None or bandwidth_bytes is None:
        return 0.0
    encoder = image_preset(spec.model.image_arch.slug)["encoder"]
    heads = encoder["heads"] * encoder["layers"]
    cost = spec_network_cost(spec)
    peak = np.asarray(peak_flops, dtype=float)
    bandwidth = np.asarray(bandwidth_bytes, dtype=float) * ACHIEVED_BANDWIDTH.value
    counted = 2.0 * cost.attention_macs / (peak * attention_efficiency)
    counted = (
        counted
        + EAGER_SCORE_PASSES * cost.eager_scores_saved * activation_bytes_per_element(spec) / bandwidth
    )
    excess = np.maximum(heads * per_head - counted, 0.0)
    return np.where(is_measured_eager_attention_card(generation, bandwidth_bytes), excess, 0.0)


def eager_attention_rate_note(spec, generation=None, bandwidth_bytes=None) -> str | None:
    """The answer's statement of how an eager 16-bit ViT's attention was priced where its token count is not
    a multiple of 8: at the measured A100 rate (EAGER_ATTENTION_MEASURED_SECONDS_PER_HEAD), or, on another card
    or at an unmeasured length, at the counted cost, with the reason. None for aligned counts, SDPA or fused
    attention."""
    misaligned = _misaligned_eager_vit(spec)
    if misaligned is None:
        return None
    encoder, tokens = misaligned
    per_head = eager_attention_measured_seconds_per_head(spec)
    ((_card, measured, width), seconds), *_ = EAGER_ATTENTION_MEASURED_SECONDS_PER_HEAD.items()
    source = (
        f"xformers' eager-attention benchmark on an A100 in fp16 ({seconds * 1e6:.2f} us a head at {measured} "
        f"tokens, head width {width}; PR #530)"
    )
    opening = (
        f"eager attention over {tokens} tokens (not a multiple of 8, so its batched GEMMs and softmax run off "
        "the aligned tensor-core path)"
    )
    if per_head is None:
        return (
            f"{opening}: priced at the counted GEMM and memory cost, because the only measured rate, {source}, "
            f"does not cover this length or head width; it is likely slower than sized"
        )
    if not bool(np.all(is_measured_eager_attention_card(generation, bandwidth_bytes))):
        return (
            f"{opening}: priced at the counted GEMM and memory cost on this card, because the measured rate, "
            f"{source}, is for the A100 only; on this card it is unmeasured and likely slower than sized"
        )
    scaled = "" if tokens == measured else f", scaled by ({tokens} / {measured})^2"
    training = " in the forward (the backward's GEMMs keep their counted cost)" if spec.is_training else ""
    return (
        f"{opening}: priced{training} at {per_head * 1e6:.2f} us a head{scaled}, from {source}, for "
        f"{encoder['heads'] * encoder['layers']} heads an image"
    )


# Bytes an eager torchao int8 weight-only linear moves beyond a 16-bit one, from torchao's
# _linear_fp_act_int8_weight_impl (torchao/dtypes/affine_quantized_tensor.py, 0.5-0.7): `w_vals_int8_t.to(
# input.dtype)` reads the int8 weight and writes a 16-bit copy (1 + 2 bytes a weight) that torch.mm then reads as
# a bf16 linear would; `m * scale` reads and writes the output (2 + 2 a element) and `y += bias` again (2 + 2),
# where F.linear folds the bias into the GEMM. torch.compile fuses all of it into the GEMM.
INT8_WEIGHT_ONLY_WEIGHT_BYTES = 3.0
INT8_WEIGHT_ONLY_OUTPUT_BYTES = 8.0


# bitsandbytes nf4 (Linear4bit, bitsandbytes/autograd/_functions.py matmul_4bit): on more than one input row
# (a DiT's thousands of tokens) MatMul4Bit.forward runs F.linear(A, F.dequantize_4bit(B, quant_state)
# .to(A.dtype).t(), bias): every call unpacks the whole weight to a 16-bit copy in a kernel of its own,
# reading 0.5 byte a weight and writing 2, before the GEMM reads that copy as a bf16 linear would. Under
# torch.compile too: the dequantize is a custom op the compiler does not fuse into the matmul. The absmax
# blocks (one fp32 or 8-bit scale per 64 weights) are left out. One unpacking per denoiser call, which under
# CFG carries both halves (diffusers: torch.cat([latents] * 2)).
NF4_DEQUANTIZE_WEIGHT_BYTES = 2.5


def weight_dequantize_bytes_per_image(spec) -> float:
    """The extra traffic of an eager weight-only int8 denoiser (`weight_quantization: int8`, torchao's
    int8_weight_only) over a generation: every forward dequantizes each weight and rescales and biases each
    linear output in separate kernels (INT8_WEIGHT_ONLY_*); of a bitsandbytes nf4 denoiser, each forward's
    unpacking of every weight to 16 bits (NF4_DEQUANTIZE_WEIGHT_BYTES), compiled or not. DiTs, whose
    linears image_shapes counts; 0 for other networks, other formats and training."""
    cost = spec_network_cost(spec)
    if spec.is_training or not cost.linear_outputs or not is_diffusion(spec):
        return 0.0
    forwards = steps(spec) * (2 if uses_cfg(spec) else 1)
    if spec.weight_quantization == "nf4":  # once a denoiser call: diffusers batches CFG's two halves in one
        nf4 = network_params(spec.model.image_arch.slug) * NF4_DEQUANTIZE_WEIGHT_BYTES
        return steps(spec) * nf4 / spec.micro_batch_size
    if spec.weight_quantization != "int8" or spec.image.fused_kernels:
        return 0.0
    per_forward = network_params(spec.model.image_arch.slug) * INT8_WEIGHT_ONLY_WEIGHT_BYTES
    per_sample = (
        cost.linear_outputs * INT8_WEIGHT_ONLY_OUTPUT_BYTES * activation_bytes_per_element(spec) / 2.0
    )
    return forwards * (per_forward / spec.micro_batch_size + per_sample)


def unfused_adapter_traffic_bytes_per_image(spec) -> float:
    """An eager generation's passes over the adapted layers' outputs (UNFUSED_LORA_OUTPUT_PASSES), every
    denoiser forward; 0 without an unfused adapter or under a fused stack (the compile folds them)."""
    outputs = unfused_adapters(spec)[3]
    if not outputs or spec.image.fused_kernels:
        return 0.0
    forwards = steps(spec) * (2 if uses_cfg(spec) else 1)
    return UNFUSED_LORA_OUTPUT_PASSES * outputs * activation_bytes_per_element(spec) * forwards


def _plus_pipeline_parts(spec, side: int, elements: float, scores: float) -> tuple[float, float]:
    """Saved activation elements and eager attention score elements with a diffusion pipeline's eager parts
    added: its text encoders and its VAE decoder at ``side`` px, each run once an image."""
    elements += sum(encoder_cost(e, e["tokens"]).saved for e in text_encoders(spec))
    autoencoder = vae(spec)
    if autoencoder:
        decoder = vae_decoder_cost(autoencoder, side // autoencoder["downsample"])
        elements += decoder.saved
        scores += decoder.eager_scores_saved
    return elements, scores


def uncompiled_parts_traffic_bytes_per_image(spec) -> float:
    """The eager traffic of a fused (`image.fused_kernels`) diffusion pipeline: diffusers' compile recipe
    compiles the denoiser only (pipe.unet = torch.compile(pipe.unet, ...): docs/source/en/optimization/
    torch2.0.md, alexeigor/sd-benchmarks PyTorch/test_pt.py), so the text encoders and the VAE decode still
    run eager, their activations written and read once as in inference_traffic_bytes_per_image. A TensorRT
    pipeline that builds engines for them too moves less (a few ms an image). 0 for other networks."""
    if not is_diffusion(spec):
        return 0.0
    side, element = resolution(spec), activation_bytes_per_element(spec)
    elements, scores = _plus_pipeline_parts(spec, side, 0.0, 0.0)
    score_bytes = 0.0 if spec.flash_attention else eager_score_passes(spec) * scores * element
    return 2.0 * elements * element + score_bytes


# Per denoising step outside the UNet: classifier-free guidance's chunk/sub/mul/add and the scheduler's step
# (diffusers EulerDiscrete/DDIM/PNDM: ~10 elementwise ops on the latents), on tensors too small to matter.
PIPELINE_STEP_KERNELS = 13.0


# Kernels a PEFT LoRA layer adds to its base layer's on every call while the adapter is not fused
# (peft tuners/lora/layer.py Linear.forward and Conv2d's: result + lora_B(lora_A(dropout(x))) * scaling, dropout
# an Identity at inference): lora_A, lora_B, the scaling multiply and the add.
UNFUSED_LORA_KERNELS = 4.0


def is_unet(spec) -> bool:
    return (image_preset(spec.model.image_arch.slug).get("denoiser") or {}).get("kind") == "unet"


# Element passes an unfused adapter adds over its layer's output, eager: lora_B writes it (1), the scaling
# multiply reads and writes it (2), the add reads it and the base output and writes the sum (3).
UNFUSED_LORA_OUTPUT_PASSES = 6.0


def unfused_adapters(spec) -> tuple[float, float, float, float]:
    """(adapted layers, adapter MACs per UNet sample, adapter parameters, adapted layers' output elements per
    sample) of `image.unfused_lora_rank` on the target modules of diffusers' LCM-LoRA recipe (examples/
    consistency_distillation/train_lcm_distill_lora_sdxl.py @0153665f: to_q, to_k, to_v, to_out.0, proj_in,
    proj_out, ff.net.0.proj, ff.net.2, conv1, conv2, conv_shortcut, downsamplers.0.conv, upsamplers.0.conv,
    time_emb_proj). An adapter of rank r from d_in to d_out holds r x (d_in + d_out) weights (x 9 on a 3x3
    convolution's input side) and runs that many MACs per position. Zeros without one."""
    rank = spec.image.unfused_lora_rank
    if not rank or spec.is_training or not is_unet(spec):
        return 0.0, 0.0, 0.0, 0.0
    d = image_preset(spec.model.image_arch.slug)["denoiser"]
    latent = resolution(spec) // (vae(spec) or {"downsample": 8})["downsample"]
    text = max((e["tokens"] for e in text_encoders(spec)), default=77)
    totals = np.zeros(4)
    for layer in _unet_transformer_adapters(d, latent, text) + _unet_conv_adapters(d, latent):
        totals += layer
    layers, macs, params, outputs = totals
    return float(layers), float(rank * macs), float(rank * params), float(outputs)


def _unet_transformer_adapters(d: dict, latent: int, text: int) -> list[np.ndarray]:
    """[layers, MACs / rank, weights / rank, output elements] of the adapted linears of each
    Transformer2DModel (down and up blocks at attending levels, the mid block's at the last level): per
    block attn1 q/k/v/out (c -> c), attn2 q/out (c -> c) and k/v (context -> c, over the text tokens), the
    GEGLU ff (c -> 8c, 4c -> c); proj_in and proj_out (c -> c)."""
    channels, blocks, context = d["block_out_channels"], d["layers_per_block"], d["cross_attention_dim"]
    rows = []
    last = len(channels) - 1
    for level, c in enumerate(channels):
        models = (2 * blocks + 1 if d["attention"][level] else 0) + (1 if level == last else 0)
        n, depth = (latent / 2**level) ** 2, d["transformer_layers"][level]
        block = np.array(
            [10, 26 * c * n + 2 * (context + c) * text, 26 * c + 2 * (context + c), 15 * c * n], dtype=float
        )
        rows.append(models * (depth * block + np.array([2, 4 * c * n, 4 * c, 2 * c * n])))
    return rows


def _unet_conv_adapters(d: dict, latent: int) -> list[np.ndarray]:
    """[layers, MACs / rank, weights / rank, output elements] of the adapted ResNet layers (conv1 3x3
    in -> out, conv2 3x3 out -> out, time_emb_proj, conv_shortcut 1x1 where in != out) and the resampling
    convolutions (3x3 c -> c), with diffusers' UNet2DConditionModel channels: a down block's first ResNet
    takes the level above's width, an up block's ResNets take the previous output plus the skip."""
    channels, blocks = d["block_out_channels"], d["layers_per_block"]
    time_width = d.get("time_embed_dim", 4 * channels[0])
    last = len(channels) - 1

    def resnet(c_in: float, c: float, n: float) -> np.ndarray:
        shortcut = c_in != c
        macs = (9 * c_in + c) * n + 10 * c * n + (c_in + c) * n * shortcut
        weights = 9 * c_in + c + 10 * c + (time_width + c) + (c_in + c) * shortcut
        return np.array([3 + shortcut, macs + time_width + c, weights, (2 + shortcut) * c * n], dtype=float)

    rows = []
    for level, c in enumerate(channels):
        n = (latent / 2**level) ** 2
        above = channels[max(level - 1, 0)]
        rows += [resnet(above if j == 0 else c, c, n) for j in range(blocks)]  # down block
        previous = channels[min(level + 1, last)]
        for j in range(blocks + 1):  # up block: previous output (or c) plus the skip from the down path
            rows.append(resnet((previous if j == 0 else c) + (above if j == blocks else c), c, n))
        if level == last:
            rows += [resnet(c, c, n), resnet(c, c, n)]  # the mid block
        else:  # the downsampler below this level and the upsampler back into it
            rows += [
                np.array([1, 10 * c * n / 4, 10 * c, c * n / 4]),
                np.array([1, 10 * c * n, 10 * c, c * n]),
            ]
    return rows


def unfused_adapter_flops_per_image(spec) -> float:
    """The unfused adapters' FLOPs over a generation: every denoiser forward (x2 with CFG)."""
    macs = unfused_adapters(spec)[1]
    return 2.0 * macs * steps(spec) * (2 if uses_cfg(spec) else 1) if macs else 0.0


def forward_kernels(cost: Cost) -> float:
    """Kernels an eager forward launches (UNets: counted from diffusers' blocks, image_shapes.py; ResNets from
    torchvision's, resnet_shapes.py): its
    elementwise and normalization kernels, the fixed ones on tiny tensors, and its convolutions, linears
    and attention kernels; 0 for networks without a count."""
    if not cost.launches:
        return 0.0
    return sum(kernels for kernels, _ in cost.launches) + cost.launches_fixed + cost.gemm_kernels


# Kernels an eager no-grad timm ViT forward launches, counted from timm 0.6's VisionTransformer
# (timm/models/vision_transformer.py, the version of huggingface/pytorch-image-models@5e7d47ca that the timm and
# AITemplate benchmarks ran; Dropout and DropPath are no kernel in eval). A Block: norm1 (1), the qkv linear
# (1: F.linear folds a contiguous 3-D input's bias into one addmm, 'Also hit the fused path for contiguous 3D
# input' in ATen's linear, mirrored by the standalone functorch of PyTorch 1.11-1.12 in its linear_hack), proj
# (1), the residual add (1), norm2 (1), fc1 (1), GELU (1), fc2 (1), the residual add (1), and the
# (B, H, N, d) -> (B, N, C) copy of the heads'
# output (`.transpose(1, 2).reshape(B, N, C)`: 1) = VIT_BLOCK_KERNELS; its attention, eager (timm 0.6
# Attention.forward: `attn = (q @ k.transpose(-2, -1)) * self.scale; attn = attn.softmax(dim=-1); x = attn @
# v`, where torch.matmul copies the permuted q, k and v before each bmm: 3 copies, 2 bmm, the scale, the
# softmax = VIT_EAGER_ATTENTION_KERNELS) or one SDPA kernel (timm >= 0.9 with F.scaled_dot_product_attention:
# flash_attention). Per forward: the patch embedding's convolution and bias, the position embedding's add, and
# the head's pooling, norm and linear (VIT_FIXED_KERNELS). Counted, not fitted.
VIT_BLOCK_KERNELS = 10
VIT_EAGER_ATTENTION_KERNELS = 7
VIT_FIXED_KERNELS = 6


def vit_forward_kernels(spec) -> float:
    """Kernels of one eager ViT forward (VIT_BLOCK_KERNELS plus the attention's, per layer, and
    VIT_FIXED_KERNELS); 0 for other networks."""
    if not is_vit(spec):
        return 0.0
    attention = 1 if spec.flash_attention else VIT_EAGER_ATTENTION_KERNELS
    layers = image_preset(spec.model.image_arch.slug)["encoder"]["layers"]
    return float(layers * (VIT_BLOCK_KERNELS + attention) + VIT_FIXED_KERNELS)


# Host time a kernel that AITemplate's eager ViT rows imply (facebookincubator/AITemplate examples/04_vit/
# README.md @44026ba7, PyTorch 1.12 on an A100-40GB, batch 1): ViT-B/16 224 px 4.95 ms over 210 kernels =
# 23.6 us, ViT-L/16 384 px 9.88 ms over 414 = 23.9 us. Stated in the host-floor warning beside
# EAGER_KERNEL_HOST_SECONDS (31 us, fitted on a diffusers run), not used for the estimate: not fitted.
AIT_VIT_HOST_SECONDS_PER_KERNEL = 24e-6


def vit_host_floor_warning(spec, images_per_second: float | None) -> str | None:
    """Say so when an eager ViT inference is host-bound: its forward's kernels (vit_forward_kernels) at
    EAGER_KERNEL_HOST_SECONDS take as long as the whole batch's forward, so the host, not the card, sets the
    speed. None for training, fused stacks, other networks, or where the GPU's work is longer."""
    if spec.is_training or spec.image.fused_kernels or not images_per_second:
        return None
    kernels = vit_forward_kernels(spec)
    floor = kernels * EAGER_KERNEL_HOST_SECONDS.value
    if not kernels or floor < 0.99 * spec.micro_batch_size / images_per_second:
        return None
    measured = kernels * AIT_VIT_HOST_SECONDS_PER_KERNEL
    return (
        f"this eager ViT forward launches {kernels:.0f} kernels (counted from timm's VisionTransformer), "
        f"assumed to take {EAGER_KERNEL_HOST_SECONDS.value * 1e6:.0f} us of host time each "
        f"({EAGER_KERNEL_HOST_SECONDS.key}, fitted on one eager diffusers SD 1.5 run on an A100): "
        f"{floor * 1e3:.1f} ms a forward, longer than the card's work at batch {spec.micro_batch_size}, so the "
        "host, not the card, sets this speed. Host time a kernel varies with the CPU and the software: "
        "AITemplate's PyTorch 1.12 eager ViT rows on an A100 imply about "
        f"{AIT_VIT_HOST_SECONDS_PER_KERNEL * 1e6:.0f} us ({measured * 1e3:.1f} ms for this forward, "
        f"{1 - measured / floor:.0%} less). A larger batch pays it once for more images, and a compiled engine "
        "(image.fused_kernels, CUDA graphs) does not pay it"
    )


def network_forward_kernels(spec) -> float:
    """Kernels of the spec's network's eager forward: a ViT's (vit_forward_kernels), else the count in its
    shapes (forward_kernels: UNets, ResNets)."""
    return vit_forward_kernels(spec) or forward_kernels(spec_network_cost(spec)) + autocast_forward_kernels(
        spec
    )


def host_excess_seconds(kernels: float, gpu_seconds, host_rate=None):
    """The time the GPU waits on the host in one eager pass: launches are asynchronous, so the host runs
    ahead while kernels are long and the queue hides its time; the pass takes the longer of the GPU's
    work and the host's kernels x the host rate (`host_rate`, None: EAGER_KERNEL_HOST_SECONDS), i.e. this
    excess on top of the GPU's."""
    rate = EAGER_KERNEL_HOST_SECONDS.value if host_rate is None else host_rate
    return np.maximum(0.0, kernels * rate - gpu_seconds)


# The card generation from which the host is read as a Hopper / Blackwell server's (eager_host_rate).
HOPPER_HOST_GENERATION = 90


def eager_host_rate(generation=None):
    """Seconds a kernel on the host of an eager diffusers inference step, by the card's platform generation (the
    host dimension of the rate: a property of the host CPU and torch release, not of the model; the catalog states
    no CPU). EAGER_KERNEL_HOST_SECONDS_HOPPER for NVIDIA generation >= 90 (Hopper, Blackwell: servers a CPU
    generation newer than the A100's), EAGER_KERNEL_HOST_SECONDS (fal's A100 host) for the others and where the
    generation is unknown (None or 0). Elementwise over an array of cards."""
    if generation is None:
        return EAGER_KERNEL_HOST_SECONDS.value
    generation = np.asarray(generation, dtype=float)
    rate = np.where(
        generation >= HOPPER_HOST_GENERATION,
        EAGER_KERNEL_HOST_SECONDS_HOPPER.value,
        EAGER_KERNEL_HOST_SECONDS.value,
    )
    return float(rate) if rate.ndim == 0 else rate


def eager_host_class_text(rate: float) -> str:
    """The host the answer assumes for `rate` (eager_host_rate), in words, with the row that set it."""
    if rate == EAGER_KERNEL_HOST_SECONDS_HOPPER.value:
        return (
            f"{EAGER_KERNEL_HOST_SECONDS_HOPPER.key}: a Hopper / Blackwell server's host, assumed from the card, "
            "set on sd-benchmarks' H100 PCIe SD 1.5 row"
        )
    return f"{EAGER_KERNEL_HOST_SECONDS.key}, fal's A100 host"


def eager_step_units(spec, peak_flops, bandwidth_bytes, efficiency, attention_efficiency) -> list[tuple]:
    """An eager UNet step's forward in launch order (image_shapes.Cost.unit_marks: each ResNet, Transformer2D
    norm and projections, transformer block, resampler and skip concatenation, as diffusers' UNet2DConditionModel
    runs them down, mid, up), as (kernels, GPU seconds) per unit at the batch: the unit's GEMM and elementwise
    kernels (with image.autocast, its cast kernels and one probabilities' cast an attention) and its share of the
    step's GPU work, by the same terms as denoiser_step_gpu_seconds (compute at the efficiencies, activations
    written and read, eager score passes, autocast bytes). The forward's fixed kernels (launches_fixed: the time
    embedding, conv_in's bias, the output head) lead, on tiny tensors; what follows the last unit (conv_in /
    conv_out, the output norm) is a last unit. An eager DiT's are its blocks (dit_eager_step_units); empty for
    other networks without the marks (ViTs, detectors)."""
    cost = spec_network_cost(spec)
    if not cost.unit_marks:
        return dit_eager_step_units(spec)
    samples = spec.micro_batch_size * (2 if uses_cfg(spec) else 1)
    element = activation_bytes_per_element(spec)
    passes = 0.0 if spec.flash_attention else eager_score_passes(spec)
    autocast = spec.image.autocast
    score_cast = 0.0 if spec.flash_attention else AUTOCAST_SCORE_BYTES
    total = (
        cost.macs,
        cost.attention_macs,
        cost.saved,
        cost.eager_scores_saved,
        cost.autocast_norm_bytes,
        cost.gemm_kernels + sum(count for count, _ in cost.launches),
        cost.autocast_kernels,
        float(cost.attentions),
    )
    units = [(float(cost.launches_fixed), 0.0)]
    previous = (0.0,) * len(total)
    for mark in [*cost.unit_marks, total]:
        macs, attention, saved, scores, norm_bytes, kernels, casts, attentions = (
            now - before for now, before in zip(mark, previous, strict=True)
        )
        previous = mark
        compute = 2.0 * (macs - attention) * samples / (peak_flops * efficiency)
        compute = compute + 2.0 * attention * samples / (peak_flops * attention_efficiency)
        traffic = 2.0 * saved * element + passes * scores * element
        if autocast:
            traffic = traffic + norm_bytes + score_cast * scores
            kernels = kernels + casts + (0.0 if spec.flash_attention else attentions)
        seconds = compute + traffic * samples / (bandwidth_bytes * ACHIEVED_BANDWIDTH.value)
        units.append((kernels, seconds))
    return units


def _is_mmdit(spec) -> bool:
    return (image_preset(spec.model.image_arch.slug).get("denoiser") or {}).get("kind") == "mmdit"


def dit_eager_step_units(spec) -> list[tuple]:
    """An eager DiT inference step's forward in launch order, as (kernels, GPU weight) per block: each block's
    elementwise kernels (dit_eager.block_kernels, counted from diffusers v0.32.0) plus its GEMMs
    (image_shapes.DIT_*_BLOCK_GEMMS), its weight the block's MACs (joint and single blocks alike:
    image_shapes.dit_cost), then the output unit (norm_out and the three embedding GEMMs, dit_eager.OUTPUT_KERNELS)
    with the embedders' MACs. eager_pass_seconds scales the weights to the step's GPU work (compute and
    activation traffic, denoiser_step_gpu_seconds, plus the fp32 q / k chains), spread evenly over a block's
    kernels: the queue's model as a UNet's, the host running ahead while a block's GEMMs run. Empty for training
    (its host is training_eager_seconds_per_image's), fused stacks and other networks."""
    if spec.is_training or spec.image.fused_kernels or not _is_mmdit(spec):
        return []
    denoiser = image_preset(spec.model.image_arch.slug)["denoiser"]
    cost = spec_network_cost(spec)
    h, ratio, tokens = denoiser["hidden"], denoiser["mlp_ratio"], cost.tokens
    block_macs = (4 + 2 * ratio) * h * h * tokens + 2 * tokens * tokens * h
    gemms = {"joint": DIT_JOINT_BLOCK_GEMMS, "single": DIT_SINGLE_BLOCK_GEMMS}
    blocks = dit_eager.block_kernels(denoiser)
    units = [(float(kernels + gemms[kind]), block_macs) for kind, kernels in blocks]
    embedders = max(0.0, cost.macs - len(blocks) * block_macs)
    return [*units, (float(dit_eager.OUTPUT_KERNELS), embedders)]


def dit_forward_kernels(spec) -> float:
    """Kernels of an eager DiT inference forward (dit_eager_step_units); 0 elsewhere."""
    return sum(kernels for kernels, _ in dit_eager_step_units(spec))


def eager_pass_seconds(units, pipeline_kernels: float, gpu_seconds, host_rate=None, chained_steps: int = 1):
    """The time of one eager step whose kernels the host issues in order (`units`: (kernels, GPU seconds) in
    launch order, eager_step_units), EAGER_KERNEL_HOST_SECONDS apiece, onto one CUDA stream. Launches are
    asynchronous and a stream runs its kernels in issue order (CUDA C++ Programming Guide, 'Asynchronous
    Concurrent Execution' and 'Streams'), so a kernel starts at the later of its launch and the previous
    kernel's end: the critical path of that queue, not the longer of the two totals. The host's lead, gained
    while long kernels (the first level's attention, convolutions) run, is spent on the short kernels that
    follow, and what the GPU waits for the host in a stretch of short kernels is not won back later. The
    queue drains at each step's end: the scheduler's step syncs once a step (diffusers v0.3.0
    UNet2DConditionModel.forward's blocking `timesteps[None].to(device)`; v0.7.0 to v0.21 PNDMScheduler
    _get_prev_sample's `if prev_timestep >= 0` on a CUDA tensor), after the pipeline's own kernels
    (`pipeline_kernels`). Within a unit the GPU seconds are spread evenly over its kernels, so a unit ends at
    the latest of: the queue's end plus its work, its first launch plus its work, its last launch plus one
    kernel's share. The unit GPU seconds are scaled to `gpu_seconds` (the step's whole GPU work, which may carry
    terms the units do not split). No fitted term: the host rate and the kernel counts are the engine's.
    `host_rate`: seconds a kernel on the host (None: EAGER_KERNEL_HOST_SECONDS; eager_host_rate gives the card's,
    eager_host_rate_steps states others; an array for an array of cards).
    `chained_steps` (fix51a): where the pipeline's loop never syncs after its first step (diffusers' FlowMatch
    pipelines, FLUX / SD3: pipeline_syncs_each_step), the queue does not drain between steps and the host's lead
    carries across them: the first step drains (the scheduler's index_for_timestep .item(), once), the other
    chained_steps - 1 run as one queue; the mean step over the loop is returned. 1: the per-step drain."""
    rate = EAGER_KERNEL_HOST_SECONDS.value if host_rate is None else host_rate
    rate = np.asarray(rate, dtype=float)
    counted = sum(seconds for _, seconds in units)
    scale = np.asarray(gpu_seconds, dtype=float) / np.where(np.asarray(counted) > 0, counted, 1.0)
    zero = np.zeros(np.broadcast(np.asarray(gpu_seconds, dtype=float), rate).shape)
    first = _queue_end(units, pipeline_kernels, scale, rate, zero, zero)[0]
    if chained_steps <= 1:
        return first
    end = host = zero
    for _ in range(int(chained_steps) - 1):
        end, host = _queue_end(units, pipeline_kernels, scale, rate, end, host)
    return (first + end) / int(chained_steps)


def _queue_end(units, pipeline_kernels, scale, rate, end, host):
    """One step's forward and pipeline kernels through the launch queue from (end: the GPU's last kernel's end,
    host: the host's clock); returns both after the step (eager_pass_seconds)."""
    for kernels, seconds in units:
        work = np.asarray(seconds) * scale
        if kernels <= 0:
            end = end + work
            continue
        end = np.maximum(np.maximum(end + work, host + rate + work), host + kernels * rate + work / kernels)
        host = host + kernels * rate
    host = host + pipeline_kernels * rate
    return np.maximum(end, host), host


def pipeline_syncs_each_step(spec) -> bool:
    """Whether an eager diffusers pipeline's denoising loop syncs the host with the GPU every step. UNet / PNDM
    pipelines do (eager_pass_seconds: diffusers v0.3.0 UNet2DConditionModel.forward's timesteps[None].to(device),
    v0.7.0-v0.21 PNDMScheduler's `if prev_timestep >= 0` on a CUDA tensor). The FlowMatch pipelines of the mmdit
    presets (FLUX, SD3) do not after step 1: huggingface/diffusers@v0.32.0
    src/diffusers/schedulers/scheduling_flow_match_euler_discrete.py line 104 keeps the sigmas on the CPU
    (`self.sigmas = sigmas.to("cpu")  # to avoid too much CPU/GPU communication`), index_for_timestep's
    nonzero().item() (lines 284-300) runs once, from _init_step_index at the first step() call, and step()
    (lines 340-372) reads only CPU sigmas; pipelines/flux/pipeline_flux.py 880-940 and
    stable_diffusion_3/pipeline_stable_diffusion_3.py 1052-1122 hold no .item() / .cpu() in the loop (aud51a)."""
    return not _is_mmdit(spec)


def eager_launch_seconds_per_image(spec, gpu_seconds_per_step, units=None, generation=None) -> float:
    """Time an eager generation (UNet or DiT denoiser) loses to the host, per image: each denoising step's
    forward (a UNet's kernels, forward_kernels; a DiT's, dit_forward_kernels, counted from diffusers v0.32.0)
    plus the pipeline's per-step kernels (PIPELINE_STEP_KERNELS) take the host's rate apiece (eager_host_rate:
    by the card's platform `generation`, None: EAGER_KERNEL_HOST_SECONDS); with `units` (eager_step_units) the
    step is the critical path of its launch queue (eager_pass_seconds), drained each step where the pipeline
    syncs each step and chained across steps where it does not (pipeline_syncs_each_step: FlowMatch FLUX /
    SD3); without them, the excess of the host's total over the step's GPU work (`gpu_seconds_per_step`: the
    denoiser's compute and traffic at the batch). The excess is added x steps, over the images of the batch.
    Small latents and batches make the step host-bound (SD 1.5 at 512 px); SDXL's 1024 px steps are not. 0 for
    networks without a kernel count (detectors: the forward overhead covers it). A fused stack (torch.compile
    with CUDA graphs, TensorRT) still launches its compiled denoiser (one graph) and the pipeline's own per-step
    kernels from the host (fused_pipeline_step_kernels). An unfused LoRA (image.unfused_lora_rank) adds
    UNFUSED_LORA_KERNELS per adapted layer to an eager step."""
    # the host classes are set on eager diffusers rows: other networks (timm ViTs) keep EAGER_KERNEL_HOST_SECONDS
    rate = eager_host_rate(generation) if is_diffusion(spec) else None
    if spec.image.fused_kernels:
        kernels = fused_pipeline_step_kernels(spec)
        excess = host_excess_seconds(kernels, gpu_seconds_per_step, rate) if kernels else 0.0
        return excess * steps(spec) / spec.micro_batch_size
    kernels = network_forward_kernels(spec) or dit_forward_kernels(spec)
    if not kernels:
        return 0.0
    kernels += unfused_adapters(spec)[0] * UNFUSED_LORA_KERNELS
    pipeline = PIPELINE_STEP_KERNELS if is_diffusion(spec) else 0.0  # a classifier: one forward, no scheduler
    if units and not unfused_adapters(spec)[0]:
        # an eager step: the critical path of its launch queue (eager_pass_seconds), chained across steps
        # where the pipeline does not sync each step
        chained = 1 if pipeline_syncs_each_step(spec) else steps(spec)
        step = eager_pass_seconds(units, pipeline, gpu_seconds_per_step, rate, chained)
        excess = step - gpu_seconds_per_step
    else:
        excess = host_excess_seconds(kernels + pipeline, gpu_seconds_per_step, rate)
    return excess * steps(spec) / spec.micro_batch_size


# Where the host's total (kernels x EAGER_KERNEL_HOST_SECONDS) comes within this share of the GPU's work, or
# passes it, the host decides or co-decides an eager UNet step and the answer shows the step at the published
# range of hosts (eager_host_rate_note). aud51d FIX LIST (1): at G ~ H the queue's excess over max(G, H) reaches
# ~11% of the step (the [T20] 4090 batch-1 row, G and H within 9%), so "within ~20%" is where it is a visible part.
HOST_CO_DECIDES_WITHIN = 0.2


def eager_host_rate_steps(
    spec, peak_flops, bandwidth_bytes, generation=None, l2_cache_bytes=None
) -> dict | None:
    """An eager diffusers inference step (the batch; CFG's two samples an image) at the published range of host
    rates: {"gpu_seconds": the step's GPU work, "host_seconds": its kernels (the pipeline's included) at the card's
    host rate (eager_host_rate), "rate": that rate, "steps": [(rate, step seconds)] at
    EAGER_KERNEL_HOST_SECONDS_LOW, the card's rate and EAGER_KERNEL_HOST_SECONDS_HIGH}, each step the launch
    queue's critical path (eager_pass_seconds, chained across steps where the pipeline does not sync each step) on
    the same GPU work as inference_seconds_per_image's, the fp32 q / k chains' spill included
    (flux_qk_chain_dram_bytes_per_step at `l2_cache_bytes`, None: not priced, as the figure). None for training,
    fused stacks, networks without units and an unfused LoRA (whose step takes max(G, H), host_excess_seconds)."""
    if spec.is_training or spec.image.fused_kernels or unfused_adapters(spec)[0]:
        return None
    peak_flops = np.asarray(peak_flops, dtype=float)
    efficiency = inference_efficiency(spec, peak_flops)
    attention_efficiency = np.minimum(efficiency, attention_ceiling(spec, generation))
    units = eager_step_units(spec, peak_flops, bandwidth_bytes, efficiency, attention_efficiency)
    if not units:
        return None
    eager = eager_attention_excess_seconds_per_image(
        spec, peak_flops, bandwidth_bytes, generation, attention_efficiency
    )
    gpu = denoiser_step_gpu_seconds(
        spec, peak_flops, bandwidth_bytes, efficiency, attention_efficiency, generation
    )
    spill = flux_qk_chain_dram_bytes_per_step(spec, l2_cache_bytes) / (
        bandwidth_bytes * ACHIEVED_BANDWIDTH.value
    )
    gpu = float(gpu + spill + eager * spec.micro_batch_size)
    pipeline = PIPELINE_STEP_KERNELS if is_diffusion(spec) else 0.0
    kernels = sum(count for count, _ in units) + pipeline
    stated = float(eager_host_rate(generation)) if is_diffusion(spec) else EAGER_KERNEL_HOST_SECONDS.value
    rates = (EAGER_KERNEL_HOST_SECONDS_LOW.value, stated, EAGER_KERNEL_HOST_SECONDS_HIGH.value)
    chained = 1 if pipeline_syncs_each_step(spec) else steps(spec)
    steps_at = [(rate, float(eager_pass_seconds(units, pipeline, gpu, rate, chained))) for rate in rates]
    return {"gpu_seconds": gpu, "host_seconds": kernels * stated, "rate": stated, "steps": steps_at}


def eager_host_rate_note(
    spec, peak_flops, bandwidth_bytes, generation=None, l2_cache_bytes=None
) -> str | None:
    """The answer's statement that the host decides or co-decides an eager denoiser inference step (a UNet's or a
    DiT's), with the step at the low / stated / high published host rate (eager_host_rate_steps), so the reader
    sees how much the figure rests on the host rate and which host the card is assumed to sit in. None where the
    step is GPU-bound by more than HOST_CO_DECIDES_WITHIN or the queue does not apply."""
    parts = eager_host_rate_steps(spec, peak_flops, bandwidth_bytes, generation, l2_cache_bytes)
    if parts is None:
        return None
    gpu, host = parts["gpu_seconds"], parts["host_seconds"]
    if not gpu > 0 or host < (1.0 - HOST_CO_DECIDES_WITHIN) * gpu:
        return None
    (low, low_step), (stated, stated_step), (high, high_step) = parts["steps"]
    decides = "decides" if host >= gpu else "co-decides"
    images = spec.micro_batch_size
    batch = f"{images} image{'s' if images != 1 else ''}"
    denoiser = "UNet" if not _is_mmdit(spec) else "denoiser"
    carried = (
        ""
        if pipeline_syncs_each_step(spec)
        else " (averaged over the loop: this pipeline does not sync after its first step, so the host's lead "
        "carries across steps)"
    )
    return (
        f"the host {decides} this eager {denoiser} step ({batch} a step): its kernels at "
        f"{stated * 1e6:.0f} us a kernel ({eager_host_class_text(stated)}) take {host * 1e3:.1f} ms against "
        f"{gpu * 1e3:.1f} ms of GPU work, and the step, the critical path of the launch queue{carried}, is "
        f"{_step_text(stated_step)}. Published eager diffusers hosts run about {low * 1e6:.0f} to "
        f"{high * 1e6:.0f} us a kernel (stable-fast's H100 host at most 18 us, the diffusers PyTorch 2.0 doc's RTX "
        "4090 at most 25 and its A100 about 46, the LCM-LoRA blog's A100 about 52): at "
        f"{low * 1e6:.0f} us the step is {_step_text(low_step)}, at {high * 1e6:.0f} us {_step_text(high_step)}. "
        "No field states the host CPU; benchmark your own, or use a compiled engine (image.fused_kernels, CUDA "
        "graphs), which does not pay it"
    )


def _step_text(seconds: float) -> str:
    return f"{seconds * 1e3:.1f} ms ({1.0 / seconds:.1f} it/s)"


def fused_pipeline_step_kernels(spec) -> float:
    """Host launches of one step of a fused diffusion pipeline: the compiled denoiser's graph replay (1)
    plus the scheduler and guidance kernels the compile leaves eager (PIPELINE_STEP_KERNELS); 0 for other
    networks (one fused forward, no steps)."""
    return PIPELINE_STEP_KERNELS + 1.0 if is_diffusion(spec) else 0.0


def denoiser_step_gpu_seconds(
    spec, peak_flops, bandwidth_bytes, efficiency, attention_efficiency, generation=None
):
    """GPU time of one denoising step's forward at the batch (twice the samples with CFG): its FLOPs at
    the generation's efficiencies and its activations written and read once (plus eager scores)."""
    cost = spec_network_cost(spec)
    samples = spec.micro_batch_size * (2 if uses_cfg(spec) else 1)
    attention = 2.0 * cost.attention_macs * samples
    adapter_macs, adapter_outputs = unfused_adapters(spec)[1::2]
    compute = (2.0 * (cost.macs + adapter_macs) * samples - attention) / (peak_flops * efficiency)
    compute = compute + attention / (peak_flops * attention_efficiency)
    element = activation_bytes_per_element(spec)
    scores = 0.0 if spec.flash_attention else eager_score_passes(spec) * cost.eager_scores_saved * element
    adapter = 0.0 if spec.image.fused_kernels else UNFUSED_LORA_OUTPUT_PASSES * adapter_outputs * element
    saved = cost.saved + fp16_clip_elements_per_sample(spec)
    traffic = 2.0 * saved * element + scores + adapter + autocast_bytes_per_sample(spec)
    traffic = (traffic + nchw_transpose_bytes_per_sample(spec, generation)) * samples
    return compute + traffic / (bandwidth_bytes * ACHIEVED_BANDWIDTH.value)


def weight_rows(spec, samples: float) -> float:
    """The work per kernel of the network: rows each weight GEMM (or convolution) multiplies, i.e. the
    samples in one forward x the tokens of a transformer (image + text: its adaLN modulation weights
    see one vector, not the tokens), or the network's MACs per weight elsewhere (latent positions of a
    UNet's convolutions). Small latents and small batches mean few output tiles per kernel."""
    return samples * rows_per_sample(spec_network_cost(spec))


def rows_per_sample(cost: Cost) -> float:
    """Rows per weight GEMM of one sample: a UNet's MACs per weight, a transformer's tokens; a DiT with a
    kernel count (image_shapes.dit_cost) in the work-per-kernel units of the fit (dit_equivalent_rows)."""
    if cost.tokens and cost.gemm_kernels:
        return dit_equivalent_rows(cost)
    return cost.tokens or cost.macs / cost.params


# The network image_peak_efficiency and image_half_rows were fitted on (both fit points are SDXL's UNet at
# 1024 px: diffusers/benchmarks on an L40S, fal on an A100), and its pixel side.
HALF_ROWS_FIT_NETWORK = ("sdxl-base-1.0", 1024)


def macs_per_kernel_per_row(cost: Cost) -> float:
    """MACs one GEMM or attention kernel of the forward does, on average, per row it multiplies: the work a
    kernel has to hide its fixed latency behind (kernel_efficiency), per row."""
    rows = cost.tokens or cost.macs / cost.params
    return cost.macs / cost.gemm_kernels / rows


def dit_equivalent_rows(cost: Cost) -> float:
    """A DiT's tokens stated as the fit UNet's rows of equal work per kernel. image_half_rows counts rows of
    SDXL's UNet, whose 930 kernels are 320-1,280 channels wide (3.6 GMAC a kernel over 1,317 rows: 2.8 MMAC a
    row); FLUX.1-dev's 554 are 3,072-12,288 wide (67 GMAC a kernel over its 4,608 tokens: 14.6 MMAC a row), so
    each of its rows carries 5.3x the work that hides a kernel's launch, prologue and tail, and the same rows
    fill an H100 much sooner (24,329 equivalent rows). Derived from the shapes (kernels counted in
    image_shapes.dit_cost), no fitted term; SD3 Medium's 1,536-wide blocks come out at 1.0x (4,451 rows for
    4,429 tokens). Checked: [TORCHAO] (sayakpaul/diffusers-torchao@9b9f2383 README 'Additional Results',
    FLUX.1-dev bf16, transformer compiled, H100 SXM, 28 steps) 4.209 s at batch 1 and 31.685 s at batch 8 are
    50% and 54% of the bf16 peak; the token count alone gave 39% and 51% (5.48 s, +30%; 33.35 s, +5%), this
    gives 4.27 s (+1.3%) and 32.1 s (+1.4%)."""
    slug, side = HALF_ROWS_FIT_NETWORK
    reference = macs_per_kernel_per_row(network_cost(slug, side))
    return cost.tokens * macs_per_kernel_per_row(cost) / reference


def peak_efficiency(spec) -> float:
    """The saturated fraction of dense peak of the spec's network: ViT classifiers (all dense linears over
    batch x tokens rows) at VISION_PEAK_EFFICIENCY, the others (a ResNet classifier included: is_vit) at
    IMAGE_PEAK_EFFICIENCY (fitted on UNets; detectors are capped lower by DETECTOR_EFFICIENCY)."""
    if is_vit(spec):
        return VISION_PEAK_EFFICIENCY.value
    return IMAGE_PEAK_EFFICIENCY.value


def kernel_efficiency(rows, peak_flops=None, ceiling: float | None = None):
    """Achieved fraction of dense peak at `rows` rows per weight GEMM: `ceiling` (IMAGE_PEAK_EFFICIENCY
    when None; peak_efficiency gives a spec's) x rows / (rows + half), a saturating fit (sources in
    assumptions.py). `half` scales with the card's dense peak (IMAGE_HALF_ROWS at
    IMAGE_HALF_ROWS_REFERENCE_TFLOPS): each kernel carries a fixed latency (launch, prologue, the last
    wave's tail), which a faster card hides only behind proportionally more work. `peak_flops` None: the
    reference card."""
    half: float | np.ndarray = IMAGE_HALF_ROWS.value
    if peak_flops is not None:
        half = half * np.asarray(peak_flops, dtype=float) / (IMAGE_HALF_ROWS_REFERENCE_TFLOPS.value * 1e12)
    top = IMAGE_PEAK_EFFICIENCY.value if ceiling is None else ceiling
    return top * rows / (rows + half)


def inference_efficiency(spec, peak_flops=None):
    """The compute efficiency of a generation: the denoiser's rows at the batch (twice with CFG), at the
    software stack's rate (runtime_rate); detectors at most DETECTOR_EFFICIENCY (their convolutions keep
    the tensor cores part-fed)."""
    samples = spec.micro_batch_size * (2 if uses_cfg(spec) else 1)
    efficiency = kernel_efficiency(weight_rows(spec, samples), peak_flops, peak_efficiency(spec))
    efficiency = efficiency * runtime_rate(spec)
    if is_detector(spec):
        return np.minimum(efficiency, detector_inference_ceiling(spec, peak_flops))
    return efficiency


def detector_inference_ceiling(spec, peak_flops=None):
    """A detector forward's compute ceiling: tensorrt_work_efficiency where its TensorRT layer outputs'
    traffic is counted apart (counts_tensorrt_traffic), else DETECTOR_EFFICIENCY, which folds the A100's
    traffic into the whole forward's slope."""
    if counts_tensorrt_traffic(spec):
        return tensorrt_work_efficiency(spec, peak_flops)
    return DETECTOR_EFFICIENCY.value


# The card detector_tensorrt_half_gflops is stated for: the A100 of the rows it is solved from (312 dense
# fp16 TFLOPS).
TENSORRT_REFERENCE_PEAK_FLOPS = 312e12


def tensorrt_work_efficiency(spec, peak_flops=None):
    """A TensorRT YOLO forward's compute rate by its work per image: DETECTOR_TENSORRT_EFFICIENCY x
    GFLOPs / (GFLOPs + DETECTOR_TENSORRT_HALF_GFLOPS x the card's peak / 312 TFLOPS): narrow networks keep
    the tensor cores part-fed at any batch (sources in assumptions.py). `peak_flops` None: the reference
    card."""
    peak = TENSORRT_REFERENCE_PEAK_FLOPS if peak_flops is None else np.asarray(peak_flops, dtype=float)
    gflops = 2.0 * spec_network_cost(spec).macs / 1e9
    half = DETECTOR_TENSORRT_HALF_GFLOPS.value * peak / TENSORRT_REFERENCE_PEAK_FLOPS
    return DETECTOR_TENSORRT_EFFICIENCY.value * gflops / (gflops + half)


# A TensorRT YOLO forward writes one tensor per fused Conv-BN-SiLU where a training step keeps three of that
# size (the convolution's, the BatchNorm's and the SiLU's outputs; image_shapes.yolov8_cost counts those).
TENSORRT_OUTPUTS_PER_SAVED = 1.0 / 3.0
YOLO_KINDS = ("yolov8", "yolo11")


def counts_tensorrt_traffic(spec) -> bool:
    """A fused (`image.fused_kernels`: TensorRT) inference of a YOLO preset, whose shapes give the layers'
    activations (a table-only preset, RT-DETR, has no count; DETR is not sized for TensorRT)."""
    detector = image_preset(spec.model.image_arch.slug).get("detector") or {}
    fused_inference = spec.image.fused_kernels and not spec.is_training
    return fused_inference and detector.get("kind") in YOLO_KINDS


def tensorrt_detector_traffic_bytes_per_image(spec) -> float:
    """Bytes a TensorRT YOLO forward moves between its fused layers: each layer's output (a third of the
    elements a training step saves, TENSORRT_OUTPUTS_PER_SAVED) written once and read once by the next
    layer. 0 where counts_tensorrt_traffic is false."""
    if not counts_tensorrt_traffic(spec):
        return 0.0
    outputs = spec_network_cost(spec).saved * TENSORRT_OUTPUTS_PER_SAVED
    return 2.0 * outputs * activation_bytes_per_element(spec)


# The narrowest attention head (channels / heads at an attention level) below which a UNet counts as SD 1.x-
# shaped for `image.runtime: pytorch-2.0` (SD 1.5: 320 / 8 = 40; SDXL and its refiner: 64 at every level).
NARROW_HEAD_WIDTH = 64
# The stacks priced at PYTORCH_2_0_NARROW_UNET_RATE: pytorch-2.0, where it was fitted, and diffusers-0.7, the 2022
# stack (PyTorch 1.12 / 1.13), unmeasured on its own and given the nearest measured stack's rate, an assumption
NARROW_RATE_RUNTIMES = ("pytorch-2.0", "diffusers-0.7")


def runtime_rate(spec) -> float:
    """The generation's compute rate on its software stack (`image.runtime`) relative to the engine's
    fitted rates, which are the current stack's ("optimized"): PYTORCH_2_0_NARROW_UNET_RATE for a
    `pytorch-2.0` generation of a narrow-head UNet (has_narrow_heads: SD 1.x), where diffusers' PyTorch 2.0
    benchmark measured it; 1 otherwise (SDXL on the same stack matches the fitted rate)."""
    if spec.image.runtime not in NARROW_RATE_RUNTIMES or not has_narrow_heads(spec.model.image_arch.slug):
        return 1.0
    return PYTORCH_2_0_NARROW_UNET_RATE.value


def has_narrow_heads(slug: str) -> bool:
    """A UNet whose narrowest attention head is under NARROW_HEAD_WIDTH channels (a fixed head count per
    level, as SD 1.x's 8: 40/80/160 wide); False for other denoisers and networks."""
    denoiser = image_preset(slug).get("denoiser") or {}
    if denoiser.get("kind") != "unet":
        return False
    levels = zip(denoiser["block_out_channels"], denoiser["heads"], denoiser["attention"], strict=True)
    return min(channels / heads for channels, heads, attends in levels if attends) < NARROW_HEAD_WIDTH


def is_vit(spec) -> bool:
    """A ViT classifier (family vision with a transformer `encoder`); a convolutional classifier (`convnet`:
    ResNet-50) is not one: its convolutions run at image_peak_efficiency, fitted on UNets, whose FLOPs are
    mostly convolutions too, and it has no attention, no residual LayerNorm stream and no ViT kernel count."""
    arch = spec.model.image_arch
    entry = image_presets().get(arch.slug) if arch is not None else None  # None: a guides' tier
    return entry is not None and entry["family"] == "vision" and "encoder" in entry


def is_convnet(spec) -> bool:
    """A convolutional classifier preset (`convnet`: ResNet-50)."""
    arch = spec.model.image_arch
    entry = image_presets().get(arch.slug) if arch is not None else None  # None: a guides' tier
    return entry is not None and "convnet" in entry


def is_detector(spec) -> bool:
    return image_preset(spec.model.image_arch.slug)["family"] == "detection"


def is_yolo(spec) -> bool:
    """Ultralytics/YOLO detectors: their task-aligned assigner and deterministic fill apply (not DETR's
    Hungarian matching, which runs on the CPU over batch x 100 queries x targets)."""
    return is_detector(spec) and image_preset(spec.model.image_arch.slug)["detector"]["kind"] in YOLO_KINDS


def is_rtdetr(spec) -> bool:
    """A preset whose training walk is RT-DETR's (detr_shapes.rtdetr_training_saved)."""
    if spec.model.image_arch is None or spec.model.is_image_tier:
        return False
    detector = image_preset(spec.model.image_arch.slug).get("detector") or {}
    return detector.get("training", {}).get("walk") == "rtdetr"


RTDETR_SPEED_WARNING = (
    "RT-DETR training speed: priced at the YOLO-fitted detector training rate (detector_training_efficiency, "
    "fitted on the YOLOv5 README's COCO days); RT-DETR's deformable attention, denoising queries and CPU "
    "Hungarian matcher are not priced, and two published runs took 3.5-4x longer than this rate gives "
    "(lyuwenyu/RT-DETR issue #7: R50, 72 epochs on 4 x RTX 3090, 48 h or more against 12.2 h; "
    "Intellindust-AI-Lab/DEIM issue #100: an L-sized model, about an hour a COCO epoch on one RTX 4090 "
    "against 0.28 h): treat these hours as a lower bound"
)
UNPRICED_VALIDATION_WARNING = (
    "validation not priced: this detector trains by epochs and the spec states no image.eval_every_epochs / "
    "image.eval_images, while Ultralytics validates every epoch by default (val=True) and DETR's main.py "
    "evaluates after every epoch; state them to add the evaluations (on a COCO run the detector rate already "
    "holds a little of YOLOv5's per-epoch validation: docs/workload-spec.md)"
)


def training_speed_warnings(spec) -> list[str]:
    """A training candidate's speed caveats that hold on every card (aud47i fix list items 1 and 2): RT-DETR's
    step priced at the YOLO-fitted rate (RTDETR_SPEED_WARNING; the memory note says the same for its memory),
    and a detector run by epochs that states no evaluation (UNPRICED_VALIDATION_WARNING)."""
    if not spec.is_training or spec.model.image_arch is None or spec.model.is_image_tier:
        return []
    found = []
    if is_rtdetr(spec):
        found.append(RTDETR_SPEED_WARNING)
    if is_detector(spec) and spec.image.epochs and not spec.image.eval_every_epochs:
        found.append(UNPRICED_VALIDATION_WARNING)
    return found


# Ultralytics' detector kinds (image_shapes.yolov8_cost, yolo11_cost); DETR and the table-only RT-DETR match
# their queries to the targets with the Hungarian algorithm instead of the task-aligned assigner
YOLO_KINDS = ("yolov8", "yolo11")


def forward_overhead_seconds_per_image(spec) -> float:
    """A detector forward's fixed host latency over the images of its batch: detector_forward_overhead_s
    (forward_overhead_seconds); 0 for diffusion and ViTs, whose forwards run long enough to hide it."""
    return forward_overhead_seconds(spec) / spec.micro_batch_size if is_detector(spec) else 0.0


def forward_overhead_seconds(spec) -> float:
    """The per-forward floor: DETECTOR_TENSORRT_FORWARD_OVERHEAD for a TensorRT YOLO forward (solved with
    its work-dependent rate, tensorrt_work_efficiency), DETECTOR_FORWARD_OVERHEAD for other detectors."""
    if counts_tensorrt_traffic(spec):
        return DETECTOR_TENSORRT_FORWARD_OVERHEAD.value
    return DETECTOR_FORWARD_OVERHEAD.value


# Share of a detector inference's time above which its per-forward floor, a property of the serving stack
# more than of the card, is said to decide the answer (forward_floor_warning).
FORWARD_FLOOR_WARNING_SHARE = 0.5


def forward_floor_warning(spec, images_per_second: float | None) -> str | None:
    """Say so when the per-forward floor (forward_overhead_seconds), not the card, sets a detector
    inference's speed: it is the host's and the serving stack's latency, fitted on Ultralytics' A100
    TensorRT tables (sources in assumptions.py). None for training, other networks, or where the floor is
    under FORWARD_FLOOR_WARNING_SHARE of the time."""
    if spec.is_training or not images_per_second or not is_detector(spec):
        return None
    share = forward_overhead_seconds_per_image(spec) * images_per_second
    if share < FORWARD_FLOOR_WARNING_SHARE:
        return None
    key = (
        DETECTOR_TENSORRT_FORWARD_OVERHEAD.key
        if counts_tensorrt_traffic(spec)
        else DETECTOR_FORWARD_OVERHEAD.key
    )
    return (
        f"a fixed {forward_overhead_seconds(spec) * 1e3:g} ms per forward is {share:.0%} of this time ({key}, "
        "from Ultralytics' YOLOv8 A100 TensorRT tables); it is the host's and the serving stack's (engine "
        "enqueue, TensorRT version, CUDA graphs), not the card's, so benchmark your engine; a larger batch "
        "pays it once per forward"
    )


def training_efficiency(spec, peak_flops=None, bandwidth_bytes=None, generation=None):
    """The compute efficiency of a training step of an image network: the rows of its micro-batch. With
    `bandwidth_bytes` (the card's datasheet bytes/s) and a peak, an eager step's elementwise passes and
    launches (training_eager_seconds_per_image) are stated as the lower efficiency of the whole step, as
    a detector's deterministic fill is (detector_training_efficiency); so is, on the card of NVIDIA
    `generation` the eager attention table was measured on, an eager 16-bit ViT's forward attention beyond its
    counted cost (eager_attention_excess_seconds_per_image)."""
    efficiency = kernel_efficiency(
        weight_rows(spec, spec.micro_batch_size * samples_per_image(spec)), peak_flops, peak_efficiency(spec)
    )
    if peak_flops is None or not bandwidth_bytes:  # no card: the kernel efficiency alone
        return efficiency
    compute = training_flops_per_image(spec) / (peak_flops * efficiency)
    attention = 0.0
    if spec.is_training:  # GPU work: the host's launches overlap it (training_eager_seconds_per_image)
        attention = float(
            eager_attention_excess_seconds_per_image(
                spec, peak_flops, bandwidth_bytes, generation, efficiency
            )
        )
    eager = (
        training_eager_seconds_per_image(spec, bandwidth_bytes, compute + attention, generation) + attention
    )
    return efficiency * compute / (compute + eager)


# Kernels (and elementwise passes) of an eager training step per forward kernel: each elementwise or
# normalization op of the forward has a backward op, and most backward ops of norms, activations and
# residuals run one or two kernels (the input gradient; GroupNorm/LayerNorm also their parameter
# gradients), so forward + backward is 2-3x the forward's count. Assumed 3 (forward 1 + backward 2),
# the upper end: autograd's gradient accumulation at every residual fork and the LoRA branches add more.
# Full recomputation replays the forward once more.
TRAINING_KERNEL_PASSES = 3.0
# Eager attention in a training step, bytes moved per score element (heads x N x M). Training scripts run
# 16-bit training under autocast (accelerate --mixed_precision), which runs softmax in fp32 (PyTorch autocast
# op reference: softmax is in the 'autocast to float32' list) and diffusers' get_attention_scores casts the
# probabilities back to the query's dtype. Forward: baddbmm writes fp16 scores (2), the cast to fp32 reads and
# writes (2 + 4), softmax reads and writes fp32 (4 + 4), the cast back (4 + 2), bmm reads (2) = 24. Backward:
# bmm backward writes the probabilities' gradient (2) and reads the probabilities for v's (2), the cast's
# backward (2 + 4), softmax backward reads output and gradient and writes the scores' gradient in fp32
# (4 + 4 + 4), the cast back (4 + 2), baddbmm backward reads it for q and for k (2 + 2) = 32.
EAGER_SCORE_TRAINING_FORWARD_BYTES = 24.0
EAGER_SCORE_TRAINING_BACKWARD_BYTES = 32.0
# Language models (fix50e, stop 50, on aud50e's counts): (forward, backward) bytes a score element by the spec's
# mixed_precision and whether the model has dropout, each from the code that runs it.
# - autocast, no dropout: the count above (diffusers' path: the scale in baddbmm's alpha, no mask, no dropout).
# - autocast, dropout: transformers' BertSelfAttention under native AMP (HF Trainer fp16=True). The extended mask is
#   cast to the parameters' dtype (modeling_utils.get_extended_attention_mask `.to(dtype=self.dtype)`, fp32), so
#   `attention_scores + attention_mask` promotes the fp16 scores to fp32 before softmax and dropout. Forward: matmul
#   w2, div r2 w2, add r2 w4, softmax r4 w4, dropout r4 w4 + its uint8 mask w1, autocast's cast for the matmul r4 w2,
#   matmul r2 = 37; backward: matmul w2 + probabilities r2, cast r2 w4, dropout r4 r1 w4, softmax r4 r4 w4, the add's
#   cast back r4 w2, div r2 w2, matmul for q and k r2 r2 = 45.
# - half_model, dropout: NVIDIA/DeepLearningExamples PyTorch BERT modeling.py (a9e2c1d5) under apex amp O2
#   (run_squad.py `opt_level="O2"`: every op in fp16): bmm w2, div r2 w2, + mask r2 w2, softmax r2 w2, dropout r2 w2
#   + mask w1, bmm r2 = 21; backward bmm w2 r2, dropout r2 r1 w2, softmax r2 r2 w2, div r2 w2, bmm r2 r2 = 23.
#   Paddle 22.08's fused_attention (fmha_ref.h) folds the scale into the GEMM's alpha: 17 + 23 = 40, 4 B under this.
# - half_model, no dropout: diffusers' path in 16 bits: baddbmm w2, softmax r2 w2, bmm r2 = 8; backward bmm w2 r2,
#   softmax r2 r2 w2, baddbmm r2 r2 = 14.
LANGUAGE_EAGER_SCORE_BYTES = {  # autocast without dropout: the 24 + 32 above
    ("autocast", True): (37.0, 45.0),
    ("half_model", True): (21.0, 23.0),
    ("half_model", False): (8.0, 14.0),
}
# fp32 training: the same 4 forward (EAGER_SCORE_PASSES) and 7 backward passes, no casts, 4 bytes each.
EAGER_SCORE_BACKWARD_PASSES = 7.0


def eager_score_training_bytes(spec) -> float:
    """Bytes per score element of an eager-attention training step (forward + backward; full recomputation
    replays the forward): image networks at the autocast count, language models by their mixed_precision and
    dropout (LANGUAGE_EAGER_SCORE_BYTES)."""
    replays = 2.0 if spec.gradient_checkpointing == "full" else 1.0
    if spec.precision == "fp32":
        return 4.0 * (EAGER_SCORE_PASSES * replays + EAGER_SCORE_BACKWARD_PASSES)
    forward, backward = EAGER_SCORE_TRAINING_FORWARD_BYTES, EAGER_SCORE_TRAINING_BACKWARD_BYTES
    stack = (spec.mixed_precision, bool(spec.model.dropout))
    if not spec.model.is_image and stack in LANGUAGE_EAGER_SCORE_BYTES:
        forward, backward = LANGUAGE_EAGER_SCORE_BYTES[stack]
    return forward * replays + backward


def training_eager_seconds_per_image(
    spec, bandwidth_bytes, compute_seconds_per_image=0.0, generation=None
) -> float:
    """Time an eager training step spends outside the matmuls, per instance image, counted the way
    inference's is (inference_traffic_bytes_per_image, eager_launch_seconds_per_image) over the trained
    network's forward and backward (TRAINING_KERNEL_PASSES): every activation written and read once per
    pass at the achieved bandwidth; with `flash_attention: false` the scores' forward and backward bytes
    (eager_score_training_bytes); and where the host's kernels (forward_kernels x the passes, at
    EAGER_KERNEL_HOST_SECONDS, plus the LoRA adapters' kernels, lora_training_kernels, and a per-tensor
    optimizer loop's host time, optimizer_host_seconds, and the trained text encoders' kernels,
    trained_text_encoder_forward_kernels x the passes) outlast the micro-batch's GPU work
    (`compute_seconds_per_image` x its images + this traffic), the difference. Left out: the frozen VAE
    encoder's and frozen text encoders' elementwise passes and kernels, and a full fine-tune's or a foreach
    optimizer's step. `generation`: the card's NVIDIA generation (a convnet's NCHW transposes in fp32 are paid
    on TF32 cards only, nchw_transpose_bytes_per_sample). 0 for fused stacks, detectors (their step
    efficiency is fitted on whole Ultralytics/YOLOv5 steps) and without a bandwidth."""
    if spec.image.fused_kernels or not bandwidth_bytes or is_detector(spec) or not spec.is_training:
        return 0.0
    cost = spec_network_cost(spec)
    passes = TRAINING_KERNEL_PASSES + (1.0 if spec.gradient_checkpointing == "full" else 0.0)
    samples = spec.micro_batch_size * samples_per_image(spec)
    bandwidth = float(bandwidth_bytes) * ACHIEVED_BANDWIDTH.value
    traffic = 2.0 * cost.saved * activation_bytes_per_element(spec) * passes
    traffic += nchw_transpose_bytes_per_sample(spec, generation) * passes
    if not spec.flash_attention:
        traffic += eager_score_training_bytes(spec) * cost.eager_scores_saved
    traffic_seconds = traffic * samples / bandwidth
    gpu = compute_seconds_per_image * spec.micro_batch_size + traffic_seconds
    kernels = network_forward_kernels(spec) * passes
    host = kernels * EAGER_KERNEL_HOST_SECONDS.value
    if kernels:  # networks with a kernel count: their adapters', trained encoders' and optimizer's too
        encoders = trained_text_encoder_forward_kernels(spec) * passes
        host += (lora_training_kernels(spec) + encoders) * EAGER_KERNEL_HOST_SECONDS.value
        host += optimizer_host_seconds(spec)
    float8 = torchao_float8_training_kernels(spec)
    if (
        float8
    ):  # a DiT (no count of its own kernels): torchao's casts and its adapters' kernels, a lower bound
        host += (float8 + lora_training_kernels(spec)) * EAGER_KERNEL_HOST_SECONDS.value
    host = max(0.0, host - float(gpu))
    return (traffic_seconds + host) / spec.micro_batch_size


# Kernels a PEFT LoRA Linear adds to a training step per adapted layer (peft tuners/lora/layer.py
# Linear.forward: result = result + lora_B(lora_A(dropout(x))) * scaling; lora_dropout 0, peft's default,
# makes dropout an Identity). Forward 4: lora_A's matmul, lora_B's, the scaling multiply, the add.
# Backward 6: the multiply's gradient (x scaling), lora_B's input and weight gradients, lora_A's input and
# weight gradients, and autograd's sum of x's two gradients (the frozen base layer's and the branch's). The
# frozen base layer's own kernels are the network's (forward_kernels x TRAINING_KERNEL_PASSES). Under
# fp32 adapters with autocast, the weight casts (and their gradients' casts back) add up to 4 more, left
# out (a lower bound).
LORA_FORWARD_KERNELS = 4.0
LORA_BACKWARD_KERNELS = 6.0
# kohya-ss sd-scripts networks/lora.py LoRAModule.forward (the 2023 layout with LoRAInfModule, find_string id
# 34561816848; dropout, rank_dropout and module_dropout None by default): org_forward(x), lora_down(x),
# lora_up(lx), `org_forwarded + lx * self.multiplier * scale`: two scalar multiplies and the add beside the two
# matmuls, 5 kernels beyond the original Linear's. Backward 7: the two multiplies' gradients (2), lora_up's and
# lora_down's input and weight gradients (4), the sum of x's two gradients (1) (aud50j's count).
KOHYA_LORA_FORWARD_KERNELS = 5.0
KOHYA_LORA_BACKWARD_KERNELS = 7.0
# (forward, backward) kernels an adapter adds, by image.lora_module
LORA_MODULE_KERNELS = {
    "peft": (LORA_FORWARD_KERNELS, LORA_BACKWARD_KERNELS),
    "kohya": (KOHYA_LORA_FORWARD_KERNELS, KOHYA_LORA_BACKWARD_KERNELS),
}
# Tensor ops of one AdamW step on one bf16 tensor in a per-tensor loop with stochastic rounding, counted
# from SimpleTuner's adamw_bf16 (helpers/training/optimizers/adamw_bfloat16: AdamWBF16.step loops over
# group["params"] and calls _make_step per tensor): exp_avg.mul_ (1); add_stochastic_ (to fp32, add, then
# copy_stochastic_'s randint, add, bitwise_and, copy: 6); exp_avg_sq.mul_ and addcmul_ (2); sqrt and
# add_(eps) (2); addcdiv_stochastic_ (to fp32, addcdiv, 4 of copy_stochastic_: 6); p.clone (1);
# add_stochastic_(p, shift) (6); buffer.sub_ (1) and add_stochastic_(shift, ...) (6) = 31.
BF16_ADAMW_OPS_PER_TENSOR = 31.0
# Tensor ops of one transformers Adafactor step on one factored (2-D) tensor, a per-tensor Python loop, read at
# transformers 4.30.2 (the release kohya-ss sd-scripts pinned at b99cd2a9; optimization.py Adafactor.step and
# _get_lr, lines 610-618), no first moment, no weight decay (the defaults), with scale_parameter=False and
# relative_step=False, as HF Trainer's optim adafactor builds it (trainer.py: optimizer_kwargs.update(
# {"scale_parameter": False, "relative_step": False})) and kohya's published SDXL presets pass it
# (--optimizer_args scale_parameter=False relative_step=False: sd-scripts issues #827, #834, #661): _rms(p)
# (norm, div by sqrt(numel): 2; step() computes state["RMS"] whatever the flags); _get_lr returns the group's lr,
# a Python float (no op); grad**2 + eps1 (2); row and column: mean, mul_, add_ (3 each: 6); _approx_sq_grad: row
# mean, div, rsqrt_, col rsqrt, torch.mul (5); update.mul_(grad) (1); the clip: _rms(update) (2), /
# clip_threshold, clamp_, update.div_ (3); update.mul_(lr) (1); p_data_fp32.add_(-update) (neg, add_: 2) = 24.
# scale_parameter=True (transformers' constructor default; kohya's when the args do not name it:
# image.adafactor_scale_parameter) adds ADAFACTOR_SCALE_PARAMETER_OPS, max(eps2, RMS) (a 0-d CUDA tensor
# compared with a float: 1) and param_scale x rel_step_sz (1), and the host sync of that comparison's truth test
# (bool() of a CUDA tensor), one a tensor at HOST_SYNC_SECONDS; relative_step alone changes only Python float
# arithmetic (min, math.sqrt of the step count). On 16-bit tensors (master_weights_fp32 false) grad.float(),
# p.float() and p.copy_ add 3 (ADAFACTOR_16BIT_CAST_OPS). Left out: the foreach grad clip.
ADAFACTOR_OPS_PER_TENSOR = 24.0
ADAFACTOR_SCALE_PARAMETER_OPS = 2.0
ADAFACTOR_16BIT_CAST_OPS = 3.0
# bitsandbytes' 8-bit AdamW (adamw_8bit, paged_adamw_8bit: kohya's --optimizer_type AdamW8bit / --use_8bit_adam,
# diffusers' --use_8bit_adam) steps each tensor in a Python loop and synchronises after each: bitsandbytes/optim/
# optimizer.py Optimizer8bit.step (find_string id 534774826, the 0.44+ layout; the per-tensor
# torch.cuda.synchronize() came with the paged optimizers, 0.39.0, and is absent from the early layout, id
# 42941902877) calls update_step then torch.cuda.synchronize() for every parameter with a gradient.
# Optimizer2State.update_step launches one kernel a tensor (percentile_clipping 100 and max_unorm 0, the
# defaults): F.optimizer_update_8bit_blockwise (block_wise True, the default), or F.optimizer_update_32bit for a
# tensor under min_8bit_size (4,096); p.data.contiguous() and p.grad.contiguous() copy nothing on contiguous
# tensors. So 1 op and 1 sync a tensor; update_step's Python (get_config's dict, ctypes pointers) is left out.
BNB_8BIT_OPS_PER_TENSOR = 1.0
BNB_8BIT_SYNCS_PER_TENSOR = 1.0


# Kernels one eager CLIP text-encoder layer launches in a forward, counted from transformers 4.30.2 (the
# release kohya-ss sd-scripts pinned at b99cd2a9, 2023-09-20: requirements.txt transformers==4.30.2)
# models/clip/modeling_clip.py CLIPEncoderLayer: layer_norm1 (1); CLIPAttention: q_proj and `* self.scale`
# (2), k_proj and v_proj (2), _shape's `.transpose(1, 2).contiguous()` copies of q, k, v (3), bmm (1), the
# causal mask's add (1; kohya passes no padding mask), softmax (1), dropout at p 0.0 (none: ATen returns the
# input), bmm (1), the transpose + reshape copy (1), out_proj (1); the residual add (1); layer_norm2 (1);
# CLIPMLP fc1 (1), the activation, fc2 (1); the residual add (1): 20 with GELU (one kernel: OpenCLIP bigG,
# SDXL text_encoder_2/config.json hidden_act "gelu"), 22 with quick_gelu (`input * torch.sigmoid(1.702 *
# input)`: 3; openai/clip-vit-large-patch14 text_config hidden_act "quick_gelu"). Left out: each encoder's
# embeddings, causal-mask build, final norm and pooling (~8 kernels an encoder). T5 encoders: not counted.
TEXT_ENCODER_LAYER_KERNELS = {"clip-vit-l-14-text": 22.0, "openclip-vit-bigg-14-text": 20.0}


def trained_text_encoder_forward_kernels(spec) -> float:
    """Forward kernels of the text encoders a training step trains (image.train_text_encoder: kohya's
    networks.lora adapters on them, or a full fine-tune's), layers x TEXT_ENCODER_LAYER_KERNELS; they run a
    forward and a backward each step as the network does (TRAINING_KERNEL_PASSES). 0 where none is trained
    (frozen encoders' forwards are left out of the floor)."""
    if not spec.is_training or not spec.image.train_text_encoder:
        return 0.0
    names = image_preset(spec.model.image_arch.slug).get("text_encoders", [])
    return sum(component(n)["layers"] * TEXT_ENCODER_LAYER_KERNELS.get(n, 0.0) for n in names)


# Kernels one torchao Float8Linear adds to an eager training step beyond the 16-bit nn.Linear it replaces,
# counted from pytorch/ao v0.11.0 (f34b473e, May 2025, the release at the flux-qlora blog's run; v0.12.0 the
# same), dynamic tensorwise scaling (Float8LinearConfig's default). One cast, hp_tensor_to_float8_dynamic: 10
# (float8_utils.tensor_to_amax: abs, max; amax_to_scale: to(float64), clamp, finfo.max / amax, to(float32);
# float8_tensor._ToFloat8ConstrFunc: to(float32), * scale, to_fp8_saturated's clamp and to(float8)). One
# float8 mm (float8_ops.addmm_float8_unwrapped): two scale reciprocals and torch._scaled_mm, 3. Forward
# (Float8Linear.forward): the weight's and the input's casts, the mm, the bias added apart = 24, less the
# 16-bit addmm = 23. Backward (matmul_with_hp_or_float8_args.backward): grad_output cast, the fp8 weight made
# column-major (preprocess_addmm's b.t().contiguous().t()) and the grad_input mm (10 + 1 + 3); grad_output
# and the saved 16-bit input cast again for grad_weight, both made contiguous, and the grad_weight mm
# (10 + 10 + 2 + 3) = 39, less the 16-bit grad_input mm = 38. The backward computes grad_weight whatever
# the weight's requires_grad (no ctx.needs_input_grad check), so a frozen base layer under LoRA pays it:
# training_flops_per_image adds its FLOPs. Counted, not fitted.
TORCHAO_FLOAT8_FORWARD_KERNELS = 23.0
TORCHAO_FLOAT8_BACKWARD_KERNELS = 38.0
# Float8LinearConfig(pad_inner_dim=True) (spec fp8_pad_inner_dim; the diffusers-torchao training recipe sets it,
# sayakpaul/diffusers-torchao training/README.md @7042e930): float8_ops.preprocess_addmm (pytorch/ao v0.11.0) runs
# float8_utils.pad_tensor_for_matmul on both operands of every float8 mm, which calls torch.nn.functional.pad
# whatever the pad; PyTorch's constant_pad_nd (aten/src/ATen/native/PadNd.cpp) returns `c_input.clone()` when no
# pad is positive: one copy kernel an operand, 2 an mm. A linear runs 1 mm forward (twice under full
# recomputation) and 2 backward: 6 a linear, 8 with recomputation (84 -> 92). Inner dims that are not multiples
# of 16 (a positive pad) do not arise: the recipe's module_filter_fn leaves such linears in 16 bits.
TORCHAO_FLOAT8_PAD_KERNELS_PER_MM = 2.0


def torchao_float8_linears(spec) -> float:
    """The linears torchao's convert_to_float8_training swaps for Float8Linear in an eager DiT training
    step (precision fp8, fp8_recipe torchao, not image.fused_kernels): every block linear (the DiT's GEMMs
    less one attention a block) and the embedders, less proj_out, which the diffusers-torchao recipe's
    module_filter_fn leaves in 16 bits (sayakpaul/diffusers-torchao training/README.md). 0 elsewhere."""
    if not (spec.is_training and spec.precision == "fp8" and spec.fp8_recipe == "torchao"):
        return 0.0
    if spec.image.fused_kernels or image_preset(spec.model.image_arch.slug)["family"] != "diffusion":
        return 0.0
    cost = spec_network_cost(spec)
    if cost.unit_marks:  # UNets: their convolutions are not linears; not counted
        return 0.0
    return max(0.0, cost.gemm_kernels - cost.blocks - 1.0)


def torchao_float8_training_kernels(spec) -> float:
    """Host kernels torchao float8 adds to an eager training step: torchao_float8_linears x (the forward's
    TORCHAO_FLOAT8_FORWARD_KERNELS, twice under full recomputation, + TORCHAO_FLOAT8_BACKWARD_KERNELS), each
    float8 mm paying TORCHAO_FLOAT8_PAD_KERNELS_PER_MM more under fp8_pad_inner_dim (1 mm forward, 2 backward)."""
    replays = 2.0 if spec.gradient_checkpointing == "full" else 1.0
    pad = TORCHAO_FLOAT8_PAD_KERNELS_PER_MM if spec.fp8_pad_inner_dim else 0.0
    forward, backward = TORCHAO_FLOAT8_FORWARD_KERNELS + pad, TORCHAO_FLOAT8_BACKWARD_KERNELS + 2.0 * pad
    return torchao_float8_linears(spec) * (forward * replays + backward)


def lora_training_kernels(spec) -> float:
    """Kernels the adapters add to an eager training step: lora_layers x (the module's forward kernels,
    twice under full recomputation, + its backward kernels): peft's LORA_FORWARD_KERNELS +
    LORA_BACKWARD_KERNELS, kohya's KOHYA_LORA_* (image.lora_module). 0 without adapters."""
    replays = 2.0 if spec.gradient_checkpointing == "full" else 1.0
    forward, backward = LORA_MODULE_KERNELS[spec.image.lora_module]
    return lora_layers(spec) * (forward * replays + backward)


def optimizer_host_seconds(spec) -> float:
    """Host time of the optimizer step of an adapter training run stepping each tensor in a Python loop
    (2 tensors an adapted layer), at OPTIMIZER_OP_HOST_SECONDS an op and HOST_SYNC_SECONDS a sync:
    pure-16-bit training (master_weights_fp32 false) with adamw, the pure-bf16 trainers' per-tensor AdamW
    (SimpleTuner's adamw_bf16), BF16_ADAMW_OPS_PER_TENSOR; transformers' Adafactor (kohya sd-scripts'
    optimizer_type Adafactor) whatever the dtype, ADAFACTOR_OPS_PER_TENSOR (+ ADAFACTOR_16BIT_CAST_OPS on
    16-bit adapters; + ADAFACTOR_SCALE_PARAMETER_OPS and a sync under image.adafactor_scale_parameter);
    bitsandbytes' 8-bit AdamWs whatever the dtype, BNB_8BIT_OPS_PER_TENSOR and BNB_8BIT_SYNCS_PER_TENSOR.
    0 otherwise: torch.optim.AdamW on fp32 adapters defaults to its foreach implementation on CUDA
    (torch/optim/optimizer.py _default_to_fused_or_foreach), a few multi-tensor kernels for all the
    adapters; full training's step is not counted here either."""
    if not spec.uses_adapters:
        return 0.0
    tensors = 2.0 * lora_layers(spec)
    ops, syncs = _optimizer_ops_and_syncs_per_tensor(spec)
    return tensors * (ops * OPTIMIZER_OP_HOST_SECONDS.value + syncs * HOST_SYNC_SECONDS.value)


def _optimizer_ops_and_syncs_per_tensor(spec) -> tuple[float, float]:
    if spec.optimizer == "adafactor":
        ops = ADAFACTOR_OPS_PER_TENSOR + (0.0 if spec.master_weights_fp32 else ADAFACTOR_16BIT_CAST_OPS)
        if spec.image.adafactor_scale_parameter:
            return ops + ADAFACTOR_SCALE_PARAMETER_OPS, 1.0
        return ops, 0.0
    if spec.optimizer in ("adamw_8bit", "paged_adamw_8bit"):
        return BNB_8BIT_OPS_PER_TENSOR, BNB_8BIT_SYNCS_PER_TENSOR
    if spec.master_weights_fp32 or spec.optimizer != "adamw":
        return 0.0, 0.0
    return BF16_ADAMW_OPS_PER_TENSOR, 0.0


def attention_flops_per_image(spec) -> float:
    """The QK^T and AV FLOPs inside inference_flops_per_image (what an SDPA kernel computes)."""
    return _inference_flops(spec, lambda cost: cost.attention_macs)


def attention_ceiling(spec, generation):
    """The fraction of dense peak the attention kernel reaches at best on a card of NVIDIA `generation`
    (an array; None: no ceiling). Hopper (90) under PyTorch SDPA runs FlashAttention-2, which was written
    for Ampere and reaches HOPPER_SDPA_ATTENTION_EFFICIENCY of H100 peak; Ampere and Ada reach 50-73%
    with it (FlashAttention-2 paper), above image_peak_efficiency, so no ceiling there. Eager attention
    (`flash_attention: false`) runs as batched GEMMs, and fused stacks (`image.fused_kernels`: TensorRT,
    MLPerf engines) bring their own Hopper attention kernels: no ceiling either."""
    if generation is None or not spec.flash_attention or spec.image.fused_kernels:
        return np.inf
    return np.where(np.asarray(generation) == 90, HOPPER_SDPA_ATTENTION_EFFICIENCY.value, np.inf)


def inference_seconds_per_image(
    spec, peak_flops, bandwidth_bytes, generation=None, power_bound_flops=None, l2_cache_bytes=None
):
    """Compute at the work-per-kernel efficiency (inference_efficiency) plus the elementwise traffic at
    the achieved bandwidth (as language models' decode); eager kernels run one after another, so the two
    add, and so does a detector's fixed per-forward latency (forward_overhead_seconds_per_image) and, for an
    eager 16-bit ViT at an unaligned token count on the A100, its attention's measured time beyond the counted
    one (eager_attention_excess_seconds_per_image). Attention FLOPs run at that efficiency or at the card's attention ceiling, whichever is lower
    (attention_ceiling; `generation`: the card's NVIDIA generation, None: no ceiling). No faster than the
    generation's FLOPs at `power_bound_flops` (compute_peak.power_bound_tflops: what the card's board power
    sustains; None: no bound). An eager Flux step adds its fp32 q / k chains where they spill the card's L2
    (flux_qk_chain_dram_bytes_per_step; `l2_cache_bytes`: each row's L2, None: not priced)."""
    efficiency = inference_efficiency(spec, peak_flops)
    attention = attention_flops_per_image(spec)
    attention_efficiency = np.minimum(efficiency, attention_ceiling(spec, generation))
    # FasterTransformer's padded unfused fp16 ViT runs its layer GEMMs and elementwise passes over the padded
    # tokens (fastertransformer_token_padding; 1 elsewhere)
    token_padding = fastertransformer_token_padding(spec, generation)
    compute = (inference_flops_per_image(spec) - attention) * token_padding / (peak_flops * efficiency)
    padding = attention_padding(spec, generation)
    compute = compute + attention * padding / (peak_flops * attention_efficiency)
    traffic = inference_traffic_bytes_per_image(
        spec, generation
    ) * token_padding + fastertransformer_unfused_attention_bytes_per_image(spec, generation)
    traffic = traffic / (bandwidth_bytes * ACHIEVED_BANDWIDTH.value)
    eager = eager_attention_excess_seconds_per_image(
        spec, peak_flops, bandwidth_bytes, generation, attention_efficiency
    )
    step = denoiser_step_gpu_seconds(
        spec, peak_flops, bandwidth_bytes, efficiency, attention_efficiency, generation
    )
    spill = flux_qk_chain_dram_bytes_per_step(spec, l2_cache_bytes) / (
        bandwidth_bytes * ACHIEVED_BANDWIDTH.value
    )
    step = step + spill
    traffic = traffic + spill * steps(spec) / spec.micro_batch_size
    # the measured attention is GPU work of the ViT's one forward: the host's launches overlap it
    units = eager_step_units(spec, peak_flops, bandwidth_bytes, efficiency, attention_efficiency)
    launches = eager_launch_seconds_per_image(spec, step + eager * spec.micro_batch_size, units, generation)
    seconds = compute + traffic + eager + launches + forward_overhead_seconds_per_image(spec)
    if power_bound_flops is None:
        return seconds
    return np.maximum(seconds, inference_flops_per_image(spec) / np.asarray(power_bound_flops, dtype=float))


def evaluation_seconds(spec, peak_flops, bandwidth_bytes, gpus):
    """Seconds a training run spends in its evaluations (image.eval_every_epochs, image.eval_images): floor(epochs /
    eval_every_epochs) passes over the validation images, each image a forward at the training micro-batch and
    precision (inference_seconds_per_image on the same card, no attention ceiling or board-power bound), the
    images split over the run's GPUs (facebookresearch/detr main.py @04d5706a: `evaluate(...)` after every epoch
    over data_loader_val, a DistributedSampler of COCO val at args.batch_size). What it leaves out: the COCO
    evaluator's CPU work (pycocotools accumulate / summarize on rank 0) and the post-processing. 0 where no
    evaluation is stated."""
    image = spec.image
    if (
        not spec.is_training
        or spec.model.image_arch is None
        or not image.eval_every_epochs
        or not image.epochs
    ):
        return np.zeros_like(np.asarray(gpus, dtype=float))
    evaluations = math.floor(image.epochs / image.eval_every_epochs + 1e-9)
    forward = replace(spec, task="inference")
    per_image = inference_seconds_per_image(forward, peak_flops, bandwidth_bytes)
    return evaluations * float(image.eval_images or 0) * per_image / np.asarray(gpus, dtype=float)


def inference_rows(
    spec,
    *,
    peak_tflops,
    bandwidth_gbps,
    gpu_counts,
    tensor_parallel,
    pipeline_parallel,
    generation=None,
    power_bound_tflops=None,
    l2_cache_bytes=None,
) -> dict:
    """Images/s per GPU (inference_seconds_per_image), in the keys the serving path reads (a 'token' is an
    image: per stream = one image's rate within a batch, total = the batch over all replicas)."""
    peak = np.asarray(peak_tflops, dtype=float) * 1e12
    gpus = np.asarray(gpu_counts, dtype=float)
    replicas = np.floor(gpus / (np.asarray(tensor_parallel, dtype=float) * np.asarray(pipeline_parallel)))
    flops = inference_flops_per_image(spec)
    batch = float(spec.micro_batch_size)
    bandwidth = np.asarray(bandwidth_gbps, dtype=float) * 1e9
    bound = None if power_bound_tflops is None else np.asarray(power_bound_tflops, dtype=float) * 1e12
    l2 = None if l2_cache_bytes is None else np.asarray(l2_cache_bytes, dtype=float)
    per_gpu = 1.0 / inference_seconds_per_image(spec, peak, bandwidth, generation, bound, l2)
    batch_seconds = batch / per_gpu
    zeros = np.zeros_like(per_gpu * gpus)
    return {
        "decode_tokens_per_second_per_stream": 1.0 / batch_seconds + zeros,
        "decode_tokens_per_second_total": per_gpu * replicas,
        "time_to_first_token_seconds": batch_seconds + zeros,
        "decode_step_seconds": batch_seconds + zeros,
        "decode_communication_seconds": zeros,
        "decode_bound": np.full(np.shape(zeros), "compute"),
        "decode_tokens_per_second_upper_bound": peak / flops + zeros,
        "images_per_second_per_gpu": per_gpu + zeros,
        "flops_per_image": np.full(np.shape(zeros), flops),
    }


def image_summary(spec) -> dict:
    slug, side = spec.model.image_arch.slug, resolution(spec)
    cost = spec_network_cost(spec)
    summary = {
        "preset": slug,
        "family": spec.model.image_arch.family,
        "resolution_px": side,
        "network_params": network_params(slug),
        "network_params_counted": cost.params,
        "network_gflops_per_forward": round(2.0 * cost.macs / 1e9, 2),
        "trainable_params": trainable_params(spec),
        "source": spec.model.image_arch.source,
    }
    if spec.model.image_arch.is_diffusion:
        summary |= {"steps": steps(spec), "classifier_free_guidance": uses_cfg(spec)}
    if spec.model.image_arch.is_diffusion and not spec.is_training:  # image.runtime and the rate it sets
        summary |= {"runtime": spec.image.runtime, "runtime_rate": runtime_rate(spec)}
    if spec.image.autocast:  # image.autocast: the casts' bytes a UNet sample forward, shown only when stated
        summary["autocast_gb_per_unet_sample"] = round(autocast_bytes_per_sample(spec) / 1e9, 3)
    if spec.image.engine != "pytorch":  # image.engine: the inference engine it is sized for
        summary["engine"] = spec.image.engine
    if spec.precision == "fp32":  # whether its matmuls run on TF32 tensor cores (compute_peak.py)
        summary["tf32_matmul"] = spec.image.tf32_matmul
    if spec.weight_quantization == "nf4":  # 4.127 or 4.5 bits a weight (bytes_model.image_quantized_bytes)
        summary["nf4_double_quant"] = spec.image.nf4_double_quant
    if unet_forward_reserve_ratio(spec) is not None:  # reserved per allocated byte over the UNet forward
        summary["unet_forward_reserved_over_allocated"] = unet_forward_reserve_ratio(spec)
    if spec.is_training:
        summary["flops_per_image"] = training_flops_per_image(spec)
        summary["samples_per_image"] = samples_per_image(spec)
        if is_detector(spec):  # the step's fill under Ultralytics' deterministic mode (0 when off)
            summary["deterministic"] = spec.image.deterministic
            summary["deterministic_fill_bytes_per_image"] = deterministic_fill_bytes_per_image(spec)
            # the implicit-GEMM tile whose waves on each card's SMs scale the step (detector_step_fill)
            summary["conv_gemm_tile"] = int(DETECTOR_CONV_TILE.value)
    else:
        summary["flops_per_image"] = inference_flops_per_image(spec)
    return summary


def quantized_flops_share(spec) -> float:
    """The share of a generation's FLOPs an 8-bit quantizer runs in 8 bits: the denoiser's convolutions
    and linears over every step (its attention matmuls, the text encoders and the VAE decode stay 16-bit;
    compute_peak.low_bit_image_peak)."""
    total = inference_flops_per_image(spec)
    if not total:
        return 0.0
    cost = spec_network_cost(spec)
    forwards = steps(spec) * (2 if uses_cfg(spec) else 1) if is_diffusion(spec) else 1
    return 2.0 * (cost.macs - cost.attention_macs) * forwards / total


def is_diffusion(spec) -> bool:
    return image_preset(spec.model.image_arch.slug)["family"] == "diffusion"


def conv_flops_share(spec) -> float:
    """The convolutions' share of the FLOPs a workload runs: of a generation (denoiser steps, encoders and
    VAE decode) for inference, of the trained network for training (its text encoders and LoRA matmuls
    are linear layers)."""
    if spec.is_training:
        cost = spec_network_cost(spec)
        return cost.conv_macs / cost.macs if cost.macs else 0.0
    total = inference_flops_per_image(spec)
    return _inference_flops(spec, lambda cost: cost.conv_macs) / total if total else 0.0


def detector_training_efficiency(spec, peak_flops, bandwidth_bytes=None, clock_hz=None, sms=None) -> float:
    """Achieved fraction of dense peak of a YOLO training step: DETECTOR_TRAINING_EFFICIENCY x (forward
    GFLOPs per image x the reference card's dense FLOPs per clock / the card's / 205.7) ^ exponent, at most
    DETECTOR_EFFICIENCY (the TensorRT inference slope: training's convolutions run no better), times the
    step's GEMM fill on the card's `sms` (detector_step_fill over yolo_step_fill; a card without a stated SM count, and a
    detector without a layer walk, take the fit rows' mean fill, detector_fit_fill). Sources in
    assumptions.py. FLOPs per clock = peak / clock (`clock_hz`: the card's, clocks.peak_clock_hz; None:
    the reference clock, so the card's peak alone sets the work it needs). That fit is on YOLOv5 runs,
    which filled no memory; with `bandwidth_bytes` (the card's datasheet bytes/s) an Ultralytics run under
    its default deterministic mode adds its fill time (deterministic_fill_seconds_per_image), stated as
    the lower efficiency of the whole step."""
    gflops = 2.0 * spec_network_cost(spec).macs / 1e9
    reference_clock = DETECTOR_TRAINING_REFERENCE_CLOCK.value * 1e6
    reference = DETECTOR_TRAINING_REFERENCE.value * 1e12 / reference_clock
    per_clock = (peak_flops or DETECTOR_TRAINING_REFERENCE.value * 1e12) / (clock_hz or reference_clock)
    work = gflops * reference / per_clock / 205.7
    efficiency = DETECTOR_TRAINING_EFFICIENCY.value * work**DETECTOR_TRAINING_EFFICIENCY_EXPONENT.value
    efficiency = min(efficiency, DETECTOR_EFFICIENCY.value) * detector_step_fill(spec, sms)
    fill = deterministic_fill_seconds_per_image(spec, bandwidth_bytes)
    if not fill or not peak_flops:
        return efficiency
    compute = training_flops_per_image(spec) / (peak_flops * efficiency)
    return efficiency * compute / (compute + fill)


# The detector training fit's rows (assumptions.DETECTOR_TRAINING_EFFICIENCY): ultralytics/yolov5 README,
# 'Training times for YOLOv5n/s/m/l/x are 1/2/4/6/8 days on a V100 GPU' at batch 64/40/24/16 (s/m/l/x), 640 px;
# the v6.0 yamls' depth and width multiples (models/yolov5s.yaml ... yolov5x.yaml: 0.33/0.50, 0.67/0.75,
# 1.0/1.0, 1.33/1.25); a V100 SXM2 has 80 SMs (gpu_clocks.csv).
DETECTOR_FIT_ROWS = (
    ({"kind": "yolov5", "depth": 0.33, "width": 0.50}, 64),
    ({"kind": "yolov5", "depth": 0.67, "width": 0.75}, 40),
    ({"kind": "yolov5", "depth": 1.0, "width": 1.0}, 24),
    ({"kind": "yolov5", "depth": 1.33, "width": 1.25}, 16),
)
DETECTOR_FIT_SMS = 80


def gemm_fill(rows: float, columns: int, sms: int, tile: tuple[int, int] | None = None) -> float:
    """The share of a kernel's SM-slots that hold a tile: an implicit GEMM of rows x columns cut into
    `tile` (rows x columns; DETECTOR_CONV_TILE x DETECTOR_CONV_TILE unless given) tiles, one tile an SM at a
    time, runs ceil(tiles / sms) waves; the last wave's idle SMs are the loss (NVIDIA Deep Learning
    Performance guide, 'Matrix Multiplication Background': wave quantization)."""
    tile_rows, tile_columns = tile or (int(DETECTOR_CONV_TILE.value), int(DETECTOR_CONV_TILE.value))
    tiles = math.ceil(rows / tile_rows) * math.ceil(columns / tile_columns)
    return tiles / (math.ceil(tiles / sms) * sms)


@lru_cache(maxsize=512)
def yolo_step_fill(
    config_items: tuple, side: int, batch: int, sms: int, tile: tuple[int, int] | None = None
) -> float:
    """A YOLO training step's FLOP-weighted GEMM fill (gemm_fill) over its convolutions (image_shapes.yolo_convs):
    each runs its forward (rows = batch x output positions, columns = output channels), its input gradient
    (rows = batch x input positions, which for a stride-2 conv is 4x its output's, columns = input channels;
    none for the stem) and its weight gradient (rows = output channels, columns = input channels x k^2, the
    batch x positions reduction split over the SMs: taken as full). Each pass carries the layer's MACs;
    depthwise convolutions (no GEMM, about 0.2% of the FLOPs) count as full. Returns total MACs over the sum
    of MACs / fill: the step's time at full fill over its time here. `tile` (rows x columns) replaces
    DETECTOR_CONV_TILE's square tile, for the answer's tile sensitivity (detector_fill_text)."""
    config = dict(config_items)
    total = slowed = 0.0
    for conv in yolo_convs(config, side):
        passes = 2.0 if conv.first else 3.0
        total += passes * conv.macs
        if conv.groups > 1:
            slowed += passes * conv.macs
            continue
        slowed += conv.macs / gemm_fill(batch * conv.positions, conv.c_out, sms, tile) + conv.macs
        if not conv.first:
            slowed += conv.macs / gemm_fill(batch * conv.input_positions, conv.c_in, sms, tile)
    return total / slowed


def detector_fit_fill() -> float:
    """The geometric mean of the fit rows' step fill on the V100's 80 SMs (DETECTOR_FIT_ROWS): the fill
    the fit's constants were stated at, which a card without a stated SM count keeps."""
    fills = [yolo_step_fill(tuple(sorted(c.items())), 640, b, DETECTOR_FIT_SMS) for c, b in DETECTOR_FIT_ROWS]
    return float(np.exp(np.mean(np.log(fills))))


def detector_step_fill(spec, sms) -> float:
    """detector_training_efficiency's fill factor: the spec's YOLO step fill on `sms` SMs at its
    micro-batch and resolution; detector_fit_fill() where the card states no SM count or the detector has no
    layer walk (DETR, table-only presets)."""
    items = _yolo_items(spec)
    if not sms or items is None:
        return detector_fit_fill()
    return yolo_step_fill(items, resolution(spec), int(spec.micro_batch_size), int(sms))


# [3090-Y11] (tests/procurement/outside/test_outside_image_workloads_7.py): one RTX 3090 host, Ultralytics 8.3.74,
# YOLO11m at 640 px: batch 8 9.81 it/s = 78.5 images/s, batch 25 3.90 it/s = 97.5 images/s (+24%).
FILL_CHECK_SMS = 82  # RTX 3090 (NVIDIA Ampere GA102 whitepaper, Table 9)
FILL_CHECK_IMAGES_PER_SECOND = (78.5, 97.5)


def _yolo_items(spec) -> tuple | None:
    """The spec's detector config as yolo_step_fill's key; None for a detector without a layer walk."""
    if not is_detector(spec):
        return None
    config = image_preset(spec.model.image_arch.slug)["detector"]
    return _yolo_items_of(spec.model.image_arch.slug) if config.get("kind") in ("yolov8", "yolo11") else None


def detector_fill_text(spec, sms) -> str:
    """The speed text's clause for a YOLO training step (fixd44, aud44d's request): the step's GEMM fill on the
    card's `sms` at DETECTOR_CONV_TILE's square tile and at half its columns (the tile is an assumption, so the
    answer shows how much it decides), and how much of the one measured batch sweep (the RTX 3090 YOLO11m log,
    batch 8 -> 25) the fill explains. A card without a stated SM count keeps the fit rows' mean fill. "" for
    inference and for detectors without a layer walk (DETR)."""
    items = _yolo_items(spec) if spec.is_training else None
    if items is None:
        return ""
    if not sms:
        return (
            "detector step fill: the card states no SM count, so the step keeps the fit rows' mean GEMM fill "
            f"{detector_fit_fill():.3f} (detector_conv_tile)"
        )
    tile = int(DETECTOR_CONV_TILE.value)
    side, batch = resolution(spec), int(spec.micro_batch_size)
    fill = yolo_step_fill(items, side, batch, int(sms))
    narrow = yolo_step_fill(items, side, batch, int(sms), (tile, tile // 2))
    m_items = _yolo_items_of("yolo11m")
    small, large = (yolo_step_fill(m_items, 640, b, FILL_CHECK_SMS) for b in (8, 25))
    measured = FILL_CHECK_IMAGES_PER_SECOND[1] / FILL_CHECK_IMAGES_PER_SECOND[0]
    share = math.log(large / small) / math.log(measured)
    return (
        f"detector step fill: this step's convolutions fill the card's {int(sms)} SMs {fill:.3f} with "
        f"{tile}x{tile} implicit-GEMM tiles ({narrow:.3f} with {tile}x{tile // 2}; the tile is an assumption, "
        "detector_conv_tile, as cuDNN does not publish the tile it picks), which multiplies the fitted step "
        f"efficiency; on the one measured batch sweep, an RTX 3090 log of YOLO11m going from batch 8 to 25 "
        f"({FILL_CHECK_IMAGES_PER_SECOND[0]:g} -> {FILL_CHECK_IMAGES_PER_SECOND[1]:g} images/s, "
        f"{measured - 1:+.0%}), the fill ({small:.3f} -> {large:.3f}, {large / small - 1:+.1%}) explains about "
        f"half of the gain ({share:.0%} of it in log terms); the rest is not modelled"
    )


def _yolo_items_of(slug: str) -> tuple:
    config = image_preset(slug)["detector"]
    keys = ("kind", "depth", "width", "max_channels", "c3k")
    return tuple(sorted((k, v) for k, v in config.items() if k in keys))


def deterministic_fill_bytes_per_image(spec) -> float:
    """Bytes a detector training step writes per image only to fill fresh allocations: Ultralytics trains
    with deterministic=True by default (ultralytics/cfg/default.yaml), and its init_seeds calls
    torch.use_deterministic_algorithms(True), which on PyTorch >= 2.1 also turns on
    torch.utils.deterministic.fill_uninitialized_memory (PyTorch docs: 'fill uninitialized memory with a
    known value', default True): every tensor an op allocates is written once before the op writes it.
    A step allocates each forward output (the activations the step keeps, training_activation_bytes,
    the assigner's temporaries included) and, in the backward, a gradient of the same size: 2x those
    bytes. Cross-check (not a fit): ultralytics/ultralytics issue #26181 profiled YOLO26x at batch 64 on a
    B200 (8 TB/s) with the default: ~17 ms of fill kernels per step, and 25 ms less per step without the
    fill (0.206 -> 0.181 s); this count for YOLO11x, the same x scale, at batch 64 is 2 x 4 x 15.7 GB =
    126 GB, 22 ms at 0.7 x 8 TB/s. 0 with image.deterministic false (deterministic=False, or PyTorch < 2.1, where
    Ultralytics' init_seeds does not apply it or the fill does not exist)."""
    if not (is_yolo(spec) and spec.is_training and spec.image.deterministic):
        return 0.0
    return 2.0 * training_activation_bytes(spec, True) / spec.micro_batch_size


def deterministic_fill_seconds_per_image(spec, bandwidth_bytes) -> float:
    """deterministic_fill_bytes_per_image at the achieved fraction of the card's bandwidth (0 without
    a bandwidth)."""
    fill = deterministic_fill_bytes_per_image(spec)
    if not fill or not bandwidth_bytes:
        return 0.0
    return fill / (bandwidth_bytes * ACHIEVED_BANDWIDTH.value)
