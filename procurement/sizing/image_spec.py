"""The `image:` section of a workload spec (docs/workload-spec.md, "Image workloads")."""

from __future__ import annotations

from dataclasses import dataclass

GUIDANCE = ("preset", "cfg", "distilled", "none")
# How a training step's images reach the GPU (host.loader_images_per_vcpu): "preset" = the preset's family
# (detection: mosaic; vision: crop; diffusion: cached latents if image.cache_latents, else decoded photos);
# "predecoded" = no CPU decode at all (cached latents, pre-decoded tensors, GPU-side DALI/FFCV, synthetic input)
DATA_PIPELINES = ("preset", "mosaic", "crop", "predecoded")
IMAGE_LORA_TARGETS = ("attention", "all-linear")
# The activations' memory layout of a convolutional classifier (image.memory_format; image_model.
# nchw_transpose_bytes_per_sample): "channels_last" = NHWC (model and input .to(memory_format=torch.channels_last),
# DLE's configs.yml `memory_format: nhwc` for AMP), the layout the preset's efficiency is timed in; "nchw" = PyTorch's
# default contiguous layout (a convnet's default when unstated: spec._default_memory_format), where cuDNN's
# tensor-core convolutions transpose each input to NHWC and the output back
MEMORY_FORMATS = ("channels_last", "nchw")
# The module an image LoRA's adapters are (image.lora_module; image_model.lora_training_kernels, lora_layers):
# "peft" = peft's tuners/lora Linear, as diffusers' and SimpleTuner's training scripts attach them (all-linear
# takes nn.Linear only); "kohya" = kohya-ss sd-scripts networks/lora.py LoRAModule (all-linear adapts every
# Linear and 1x1 Conv2d inside the UNet's Transformer2DModels, and launches more kernels a module)
IMAGE_LORA_MODULES = ("peft", "kohya")
# The software stack a diffusion generation runs on (image_model.runtime_rate, assumptions.py
# pytorch_2_0_narrow_unet_rate): "optimized" = a current diffusers/PyTorch, the stack of the runs the engine's
# UNet rates were fitted on (fal's torch 2.1 A100 runs, diffusers/benchmarks' 2024 L40S run); "pytorch-2.0" =
# the 2023 diffusers stack its benchmarks label PyTorch 2.0 (diffusers 0.17's torch2.0.md, sd-benchmarks' 'PT2.0'
# rows: SDPA or xformers attention, eager or torch.compile of the UNet), measured slower on SD 1.x's UNet;
# "diffusers-0.7" = diffusers before 0.8 (2022, PyTorch 1.12 / 1.13), whose eager attention scales the scores in
# a kernel of their own (image_model.DIFFUSERS_0_7_SCORE_SCALE_PASSES), at pytorch-2.0's rate otherwise
IMAGE_RUNTIMES = ("optimized", "pytorch-2.0", "diffusers-0.7")
# The inference engine an image network runs under (docs/workload-spec.md, image.engine): "pytorch" = PyTorch,
# eager or torch.compile as image.fused_kernels says; "tensorrt" = a TensorRT engine (trtexec, torch_tensorrt):
# fused kernels, and fp32 engines built with TF32 unless --noTF32; "fastertransformer" = NVIDIA
# FasterTransformer's C++ ViT (src/fastertransformer/models/vit/ViT.cc): fused fp16 attention on Volta to Ampere,
# unfused elsewhere (image_model.fastertransformer_attention_unfused), its own LayerNorm /
# bias / GELU / residual kernels between cuBLAS GEMMs (image_model.fastertransformer_traffic_bytes_per_image),
# sized as its last release, v5.3; fp32 GEMMs in full FP32 on the CUDA cores (TF32 only under
# NVIDIA_TF32_OVERRIDE=1: state image.tf32_matmul true)
IMAGE_ENGINES = ("pytorch", "tensorrt", "fastertransformer")
# Engines whose fp32 matmuls run in TF32 unless told otherwise (image.tf32_matmul's default): TensorRT only
# (trtexec builds with TF32 unless --noTF32, NVIDIA/TensorRT samples/common/sampleOptions.cpp). Not
# FasterTransformer: its fp32 GEMMs are cublasGemmEx / cublasLtMatmul with compute type CUDA_R_32F /
# CUBLAS_COMPUTE_32F (cublasMMWrapper::setFP32GemmConfig and Gemm, src/fastertransformer/utils/
# cublasMMWrapper.cc @release/v5.3_tag d21dc02) on the handle examples/cpp/vit/vit_example.cc creates with
# cublasCreate and no cublasSetMathMode, so cuBLAS's default math: FP32 on the CUDA cores. Its guides say so
# (docs/bert_guide.md, docs/swin_guide.md @d21dc02: NVIDIA_TF32_OVERRIDE=1 'to enforce the program run under
# TF32, otherwise FP32 GEMM is used by default'), and its ViT guide's A100 FP32 ViT-B/16 384 px batch 32 row
# (266.29 ms, docs/vit_guide.md @6ea1c77c) runs at 13.3 TFLOPS, 68% of the FP32 peak, 9% of TF32's
TF32_BY_DEFAULT_ENGINES = ("tensorrt",)
# The FasterTransformer release a fastertransformer engine ran (image.engine_version; unstated: its last,
# image_model.FASTERTRANSFORMER_VERSION). What the sizing reads from it is where fp16 ViT attention is fused
# (getAttentionType, src/fastertransformer/layers/attention_layers/BaseAttentionLayer.h): v5.0 (a44c381) and
# v5.1 (bc21406) fuse it only at head width 64 and max_seq_len <= 384 (ViT.cc also tests `max_seq_len_ <= 384`),
# so a 384 px ViT's 577 tokens run unfused, padded to 584; v5.2 (b672f49) and v5.3 (d21dc02) fuse any length
# (head width 64, or 32 on sm75 / sm80 / sm86) and ViT.cc drops the test. Its ViT guide's tables
# (docs/vit_guide.md) were measured on v5.0: the file and ViT.cc first appear at a44c381, and the tables are
# unchanged through v5.3 (6ea1c77c).
FASTERTRANSFORMER_VERSIONS = ("v5.0", "v5.1", "v5.2", "v5.3")


@dataclass(frozen=True)
class ImageSpec:
    steps: int | None = None  # denoising steps per image (None: the preset's)
    guidance: str = "preset"  # cfg runs the denoiser twice per step (conditional + unconditional)
    # decode in tiles of the VAE's sample size (diffusers enable_vae_tiling), each tile over the whole batch
    vae_tiling: bool = False
    vae_slicing: bool = False  # decode one image at a time (diffusers enable_vae_slicing)
    text_encoder_offload: bool = False  # text encoders on the CPU (inference)
    train_text_encoder: bool = False
    prior_preservation: bool = False  # DreamBooth: one class image per instance image
    cache_latents: bool = False  # latents (and, unless stated apart, text embeddings) precomputed
    # text-encoder outputs precomputed, encoders not loaded (kohya --cache_text_encoder_outputs); None: as
    # cache_latents
    cache_text_embeddings: bool | None = None
    lora_targets: str = "attention"
    lora_module: str = "peft"  # IMAGE_LORA_MODULES: the training stack's adapter module
    # optimizer adafactor: transformers' Adafactor with scale_parameter=True (its constructor's default; kohya
    # sd-scripts' when --optimizer_args does not name it): the step scales the lr by max(eps2, RMS), two more
    # ops and a host sync a tensor. False: scale_parameter=False relative_step=False, as HF Trainer's
    # optim adafactor and kohya's published SDXL presets pass it
    adafactor_scale_parameter: bool = False
    train_steps: int | None = None
    epochs: float | None = None
    dataset_images: int | None = None
    # training by epochs: an evaluation pass over eval_images validation images every this many epochs, priced
    # as inference of the same network, batch and precision on the run's GPUs (facebookresearch/detr main.py
    # @04d5706a calls evaluate() on COCO val after every epoch; Ultralytics validates every epoch, val=True).
    # None: no evaluation, the product's behaviour before 2026-12-07
    eval_every_epochs: float | None = None
    eval_images: int | None = None  # validation images one evaluation runs (COCO val2017: 5,000)
    images: int | None = None  # images to generate (a batch job)
    text_tokens: int | None = None  # the text encoder's sequence length the DiT attends to (None: preset's)
    max_objects_per_image: int | None = None  # detectors: most labelled objects in one image (None: COCO's)
    fused_kernels: bool = False  # torch.compile / TensorRT: no separate elementwise passes over activations
    # detectors (training): Ultralytics' deterministic=True, its default, on PyTorch >= 2.1: every freshly
    # allocated tensor is filled before use (image_model.deterministic_fill_seconds_per_image)
    deterministic: bool = True
    # inference: weight_quantization (or an fp8/int8/fp4 precision) also quantizes the text encoders (diffusers
    # PipelineQuantizationConfig with them in components_to_quantize); off: the denoiser only (a quantized
    # transformer loaded alone)
    quantize_text_encoders: bool = False
    # weight_quantization nf4: bitsandbytes' double quantization of the block scales (QLoRA's recipe, 4.127 bits
    # a weight); false: one float32 scale per 64 weights (4.5 bits), the default of diffusers' and transformers'
    # BitsAndBytesConfig (bnb_4bit_use_double_quant=False) when a config does not set it
    nf4_double_quant: bool = True
    data_pipeline: str = "preset"  # DATA_PIPELINES: what the CPU loader does per training image
    # training: loader worker processes per GPU; a host's vCPUs past this do not feed the loader (None: 8 on
    # detector presets, Ultralytics' default; 10 on the crop pipeline, DeiT's; no cap for diffusion on decoded
    # photos unless stated, e.g. a diffusers script's --dataloader_num_workers)
    loader_workers: int | None = None
    # mosaic pipeline: the dataset's typical source image size, which sets the one JPEG decode a sample pays
    # (None: COCO's, assumptions.LOADER_REFERENCE_SOURCE_MEGAPIXELS)
    source_megapixels: float | None = None
    runtime: str = "optimized"  # IMAGE_RUNTIMES: the generation's software stack (inference)
    memory_format: str = (
        "channels_last"  # MEMORY_FORMATS: a convnet's layout (parsed: nchw unstated on a convnet, spec.py)
    )
    # UNet diffusion inference over 16-bit weights inside torch.autocast('cuda') (lambda-diffusers' 2022 'half'
    # benchmark, early webuis' default 'autocast' precision): the fp32 norms' and softmax's casts
    # (image_shapes.AUTOCAST_*, image_model.AUTOCAST_SCORE_BYTES); off: plain 16-bit, every earlier figure
    autocast: bool = False
    engine: str = "pytorch"  # IMAGE_ENGINES (tensorrt, fastertransformer: fused_kernels)
    # FASTERTRANSFORMER_VERSIONS, engine fastertransformer only (None: its last release)
    engine_version: str | None = None
    # fp32 networks: their matmuls (linears, attention's bmm) run on TF32 tensor cores (Ampere and later), as
    # under NVIDIA's NGC PyTorch containers (TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1), PyTorch 1.7-1.11's default, or
    # torch.backends.cuda.matmul.allow_tf32 = True / set_float32_matmul_precision('high'); off: upstream
    # PyTorch >= 1.12's default, which both IMAGE_RUNTIMES are (compute_peak.spec_peak_tflops). Unstated, the
    # parser sets it from image.engine: on for TF32_BY_DEFAULT_ENGINES (tensorrt), off for pytorch and
    # fastertransformer
    tf32_matmul: bool = False
    # inference: a LoRA of this rank loaded beside a UNet and not fused into it (diffusers load_lora_weights
    # without fuse_lora: PEFT layers run their adapter matmuls on every call; image_model.unfused_adapters)
    unfused_lora_rank: int | None = None
