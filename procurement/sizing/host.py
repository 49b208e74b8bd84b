"""Host sizing for a candidate: vCPUs, RAM and disk, each with the parts it adds up from.

Rules from the procurement guides: at least 4 vCPUs per GPU (8-16 for heavy image decoding), RAM at
least the sum of GPU memory plus anything offloaded, disk = dataset + unpacked copy + environment +
weights + checkpoints x kept + logs + cache + reserve.
"""

from __future__ import annotations

import math

import numpy as np

from procurement.sizing.assumptions import (
    BYTES_PER_TOKEN_TEXT,
    CROP_LOADER_WORKERS,
    DISK_RESERVE,
    ENVIRONMENT_DISK,
    GB,
    GPUS_PER_NODE,
    JPEG_DECODE_PIXEL_EXPONENT,
    LOADER_CROP_IMAGES_PER_VCPU,
    LOADER_DECODE_SHARE,
    LOADER_REFERENCE_CANVAS_PX,
    LOADER_REFERENCE_SOURCE_MEGAPIXELS,
    LOGS_DISK,
    ULTRALYTICS_LOADER_WORKERS,
    VCPUS_PER_GPU,
    VCPUS_PER_GPU_IMAGE,
    YOLOV5_MOSAIC_IMAGES_PER_VCPU,
)
from procurement.sizing.bytes_model import (
    adapter_params,
    optimizer_bytes_per_param,
    saved_module_bytes,
    saved_module_params,
    state_bytes,
)
from procurement.sizing.gpus import GpuSpec
from procurement.sizing.spec import WorkloadSpec


def dataset_gb(spec: WorkloadSpec) -> float:
    if spec.host.dataset_gb is not None:
        return spec.host.dataset_gb
    if spec.model.image_arch is not None:
        return 0.0  # images have no per-token size: give host.dataset_gb
    if spec.is_training and spec.training_tokens:
        return spec.training_tokens * BYTES_PER_TOKEN_TEXT.value / GB
    return 0.0


def checkpoint_gb(spec: WorkloadSpec) -> float:
    """One checkpoint: adapters only for LoRA; weights plus optimizer state for full training."""
    if not spec.is_training:
        return 0.0
    if spec.uses_adapters:  # PEFT's save_pretrained writes modules_to_save's copies with the adapters
        return (adapter_params(spec) * 4.0 + saved_module_params(spec) * saved_module_bytes(spec)) / GB
    state = state_bytes(spec)
    return (state.weight_bytes + state.trainable_params * optimizer_bytes_per_param(spec)) / GB


def data_pipeline(spec: WorkloadSpec) -> str:
    """What the CPU loader does per training image (image_spec.DATA_PIPELINES), the preset's family
    deciding where the spec says "preset": detectors train on mosaics (Ultralytics: four images warped per
    sample, one of them decoded, the other three from its buffer of decoded images), ViT classifiers on random-resized crops (timm, DeiT), diffusion on
    cached latents where image.cache_latents, else on decoded photos (counted at the detector's decode
    rate, the closest published figure for full-size photos)."""
    chosen = spec.image.data_pipeline
    if chosen != "preset":
        return chosen
    arch = spec.model.image_arch
    if arch is None or arch.family == "detection":
        return "mosaic"  # a tier: the guides' rule as quoted
    if arch.is_diffusion:
        return "predecoded" if spec.image.cache_latents else "mosaic"
    return "crop"


def decodes_images(spec: WorkloadSpec) -> bool:
    """Whether the workload's data pipeline decodes and augments images on the CPU: image training unless
    its data is pre-decoded (data_pipeline), and detection/vision inference; text-to-image generation reads
    prompts only."""
    if not spec.model.is_image:
        return False
    arch = spec.model.image_arch
    if spec.is_training:
        return data_pipeline(spec) != "predecoded"
    return arch is None or not arch.is_diffusion


def loader_images_per_vcpu(spec: WorkloadSpec) -> float:
    """Training images one vCPU (one loader worker) decodes and augments per second for the workload's
    data pipeline: mosaics (and decoded photos) at mosaic_images_per_vcpu, LOADER_CROP_IMAGES_PER_VCPU for
    classification crops; inf where nothing is decoded."""
    pipeline = data_pipeline(spec)
    if pipeline == "predecoded":
        return float("inf")
    return LOADER_CROP_IMAGES_PER_VCPU.value if pipeline == "crop" else mosaic_images_per_vcpu(spec)


def mosaic_images_per_vcpu(spec: WorkloadSpec) -> float:
    """Ultralytics' mosaic rate per worker for the dataset's source images: a YOLOv5 sample (four decodes,
    loader_decode_share of it) less three of its decodes, the one left scaled by the source's pixels over
    COCO's (JPEG decode time ~ pixels: jpeg_decode_pixel_exponent) and the rest, the canvas work, by the
    output pixels over 640 px's (mosaic_canvas_scale). COCO-sized sources at 640 px give
    loader_images_per_vcpu (24.6)."""
    megapixels = spec.image.source_megapixels or LOADER_REFERENCE_SOURCE_MEGAPIXELS.value
    decode = LOADER_DECODE_SHARE.value / 4.0
    scale = (megapixels / LOADER_REFERENCE_SOURCE_MEGAPIXELS.value) ** JPEG_DECODE_PIXEL_EXPONENT.value
    canvas = (1.0 - LOADER_DECODE_SHARE.value) * mosaic_canvas_scale(spec)
    return YOLOV5_MOSAIC_IMAGES_PER_VCPU.value / (canvas + decode * scale)


def mosaic_canvas_scale(spec: WorkloadSpec) -> float:
    """How much more canvas work (resize, 2 x imgsz mosaic canvas, warp, HSV, flips) a detector sample takes
    than at 640 px: (image.resolution_px / 640)^2, Ultralytics sizing every one of them by imgsz
    (loader_reference_canvas_px). 1 for diffusion on decoded photos, whose rate is the detector's at 640 px
    used as the closest published figure, not a model of its own crops."""
    arch = spec.model.image_arch
    if arch is None or arch.family != "detection":
        return 1.0
    side = spec.image_resolution_px or arch.resolution_px
    return (side / LOADER_REFERENCE_CANVAS_PX.value) ** 2


def loader_workers_per_gpu(spec: WorkloadSpec) -> float:
    """Loader worker processes one GPU's training process runs (image.loader_workers): by default
    Ultralytics' 8 on detectors (ultralytics_loader_workers), DeiT's 10 on the crop pipeline
    (crop_loader_workers); inf (no cap) for diffusion on decoded photos unless the spec states its script's."""
    stated = spec.image.loader_workers
    if stated is not None:
        return float(stated)
    arch = spec.model.image_arch
    if arch is not None and arch.family == "detection":
        return ULTRALYTICS_LOADER_WORKERS.value
    return CROP_LOADER_WORKERS.value if data_pipeline(spec) == "crop" else math.inf


def vcpus_per_gpu(spec: WorkloadSpec) -> float:
    """The guides' rule: 4 vCPUs per GPU, 8 where the data pipeline decodes images."""
    return VCPUS_PER_GPU_IMAGE.value if decodes_images(spec) else VCPUS_PER_GPU.value


def feeds_loader(spec: WorkloadSpec) -> bool:
    """Whether the host's vCPUs bound the run: training whose data pipeline decodes images on the CPU."""
    return spec.is_training and decodes_images(spec)


def loader_vcpus_per_gpu(spec: WorkloadSpec) -> float:
    """The vCPUs per GPU the host the spec states has (host.vcpus_per_gpu, or `size --vcpus-per-gpu`); inf
    where it states none: `size` then recommends the pipeline's need (pipeline_vcpus_needed), which feeds
    the GPUs as far as the loader's workers can."""
    stated = spec.host.vcpus_per_gpu
    return math.inf if stated is None else stated


def loader_worker_vcpus(spec: WorkloadSpec, vcpus, gpus):
    """The vCPUs that run loader workers (one worker each): the host's, at most loader_workers_per_gpu a GPU
    (Ultralytics: min(os.cpu_count() // GPUs, workers))."""
    return np.minimum(
        np.asarray(vcpus, dtype=float), loader_workers_per_gpu(spec) * np.asarray(gpus, dtype=float)
    )


def loader_images_per_second_per_gpu(spec: WorkloadSpec, vcpus_per_gpu: float) -> float:
    """Training images/s the host's loader feeds one GPU with `vcpus_per_gpu` vCPUs: its loader workers
    (loader_worker_vcpus on one GPU) x the pipeline's rate per vCPU (loader_images_per_vcpu), as
    throughput.loader_seconds_per_step prices them."""
    return float(loader_worker_vcpus(spec, vcpus_per_gpu, 1.0)) * loader_images_per_vcpu(spec)


def loader_host_note(
    spec: WorkloadSpec, gpu_images_per_second_per_gpu: float, vcpus_per_gpu: float, assumed: str
) -> str | None:
    """The answer's statement that the host's image loader decides (or co-decides, within
    image_model.HOST_CO_DECIDES_WITHIN of the GPUs' rate) a training speed: the vCPUs per GPU the figure assumes
    (`assumed` says whose: the spec's, the offer's, the default), and the loader's images/s a GPU at half and at
    double them (loader_images_per_second_per_gpu), so the reader sees how the answer moves with the host
    (outside audit aud51y, FIX LIST item 3). None where nothing is decoded on the CPU or the GPUs bind by more."""
    from procurement.sizing.image_model import HOST_CO_DECIDES_WITHIN

    gpu = float(gpu_images_per_second_per_gpu)
    if not feeds_loader(spec) or not (math.isfinite(gpu) and gpu > 0) or not math.isfinite(vcpus_per_gpu):
        return None
    stated = loader_images_per_second_per_gpu(spec, vcpus_per_gpu)
    if stated > gpu / (1.0 - HOST_CO_DECIDES_WITHIN):  # the loader's seconds under 80% of the GPUs'
        return None
    half = loader_images_per_second_per_gpu(spec, vcpus_per_gpu / 2.0)
    double = loader_images_per_second_per_gpu(spec, vcpus_per_gpu * 2.0)
    decides = "decides" if stated <= gpu else "co-decides"
    workers = loader_workers_per_gpu(spec)
    cap = (
        f"; at most {workers:g} loader workers a GPU, image.loader_workers" if math.isfinite(workers) else ""
    )
    return (
        f"the host's image loader {decides} this training speed: the answer assumes {_vcpus(vcpus_per_gpu)} per "
        f"GPU ({assumed}), whose loader feeds {stated:.3g} images/s a GPU against the GPU's {gpu:.3g}; at "
        f"{_vcpus(vcpus_per_gpu / 2.0)} per GPU it feeds {half:.3g} images/s, at {_vcpus(vcpus_per_gpu * 2.0)} "
        f"{double:.3g} ({loader_images_per_vcpu(spec):.3g} images/s a vCPU, {data_pipeline(spec)} pipeline{cap}). "
        "The run's own host decides it: state its vCPUs per GPU (host.vcpus_per_gpu), or measure its loader"
    )


def _vcpus(count: float) -> str:
    return f"{count:g} vCPU{'' if count == 1 else 's'}"


def pipeline_vcpus_needed(spec: WorkloadSpec, gpu_images_per_second, gpus) -> np.ndarray:
    """vCPUs a host with `gpus` GPUs needs (issue 29, one rule for `size` and the ranking): for training that
    decodes images on the CPU, its GPUs' own images/s over the pipeline's rate per vCPU
    (loader_images_per_vcpu), rounded up, no more than its loader workers can use (loader_workers_per_gpu
    a GPU) and never under VCPUS_PER_GPU a GPU; the guides' rule (vcpus_per_gpu) for everything else."""
    gpus = np.asarray(gpus, dtype=float)
    rule = vcpus_per_gpu(spec) * gpus
    if not feeds_loader(spec):
        return rule
    with np.errstate(divide="ignore", invalid="ignore"):
        feeding = np.ceil(np.asarray(gpu_images_per_second, dtype=float) / loader_images_per_vcpu(spec))
    needed = np.maximum(np.minimum(feeding, loader_workers_per_gpu(spec) * gpus), VCPUS_PER_GPU.value * gpus)
    return np.where(np.isnan(needed), rule, needed)  # no rate known (no run length): the guides' rule


def host_requirements(
    spec: WorkloadSpec, gpu: GpuSpec, gpu_count: int, host_ram_gib: float, gpu_images_per_second=math.nan
) -> dict:
    """vCPUs, RAM and disk a node needs; `gpu_images_per_second`: the job's training images/s on its GPUs
    alone (the loader not counted), which sets the vCPUs (pipeline_vcpus_needed) where the CPU decodes."""
    gpus_per_node = int(min(gpu_count, GPUS_PER_NODE.value))
    node_rate = gpu_images_per_second * gpus_per_node / gpu_count
    vcpus = int(pipeline_vcpus_needed(spec, node_rate, gpus_per_node))
    per_gpu = vcpus / gpus_per_node
    gpu_memory_gib = gpu.capacity_gib * gpus_per_node
    weights_gb = spec.model.params * 2.0 / GB  # the 16-bit checkpoint as downloaded
    dataset = dataset_gb(spec)
    parts = {
        "dataset_gb": dataset,
        "unpacked_dataset_gb": dataset,
        "environment_gb": ENVIRONMENT_DISK.value,
        "weights_gb": weights_gb,
        "checkpoints_gb": checkpoint_gb(spec) * spec.host.checkpoints_kept,
        "logs_gb": LOGS_DISK.value if spec.is_training else 1.0,
        "cache_gb": weights_gb,  # the hub/download cache holds a second copy of the weights
    }
    subtotal = sum(parts.values())
    parts["reserve_gb"] = subtotal * DISK_RESERVE.value
    return {
        "nodes": math.ceil(gpu_count / GPUS_PER_NODE.value),
        "gpus_per_node": gpus_per_node,
        "vcpus_per_node": vcpus,
        "ram_gib_per_node": math.ceil(gpu_memory_gib + host_ram_gib),
        "ram_rule": "at least the sum of GPU memory, plus offloaded state",
        "offloaded_state_gib_per_node": host_ram_gib,
        "disk_gb_per_node": math.ceil(subtotal + parts["reserve_gb"]),
        "disk_breakdown_gb": {key: round(value, 1) for key, value in parts.items()},
        "gpu_memory_gib_per_node": round(gpu_memory_gib, 1),
        "notes": _vcpu_note(spec, per_gpu),
    }


def _vcpu_note(spec: WorkloadSpec, per_gpu: float) -> str:
    if not decodes_images(spec):
        return f"{per_gpu:g} vCPUs per GPU"
    if not feeds_loader(spec):
        return f"{per_gpu:g} vCPUs per GPU (image decoding)"
    workers = loader_workers_per_gpu(spec)
    cap = f", at most {workers:g} loader workers a GPU" if math.isfinite(workers) else ""
    return (
        f"{per_gpu:g} vCPUs per GPU (image decoding: the GPUs' images/s over "
        f"{loader_images_per_vcpu(spec):.3g} images/s a loader worker{cap}, at least {VCPUS_PER_GPU.value:g})"
    )


# --- Host RAM the training stack holds (outside audit aud44r, stop 44) -------------------------------------------
# The guides' "RAM >= its GPUs' memory" is keyed on the card, not on the workload: one L4 asks 22.4 GiB whether it
# trains YOLO11m (80 MB of weights) or SDXL (12.9 GiB of fp32 weights on the host). Where the stack's loader is
# known, the need is what that loader holds on the host at its peak, per training process (one a GPU):
#   loaded weights as the loader holds them + the data loader's buffers + STACK_RUNTIME_GIB,
# and offloaded state on top (a limit already: configurations.host_ram_blocking). A language model's serving process
# holds its weights' share a shard at a time at best (serving_host_ram, aud48r). Where no stack is known
# (classifiers, image serving, ...), the card rule stays a warning only and never reorders (warnings.host_texts).

# Python, PyTorch with its CUDA context and libraries, accelerate/Trainer state: an assumption (aud44r puts it at
# 2.5-3.5 GiB for diffusers + accelerate on an L4; we take the top of that range), stated in the row's warning.
STACK_RUNTIME_GIB = 3.5
# transformers save_pretrained's default max_shard_size "5GB" (src/transformers/modeling_utils.py): a Hub
# checkpoint's largest shard is taken at 5 GB (the shard count is not in our presets; Llama-3.1-8B's
# model.safetensors.index.json: 16,060,522,496 bytes in 4 shards, none above 5 GB).
HF_SHARD_BYTES = 5e9
# PyTorch DataLoader's prefetch_factor default (torch/utils/data/dataloader.py): batches each worker keeps ready.
PREFETCH_BATCHES = 2
_GIB = 2.0**30


def _image_params(spec: WorkloadSpec) -> float:
    from procurement.sizing import image_model

    arch = spec.model.image_arch
    assert arch is not None
    return image_model.network_params(arch.slug) + image_model.frozen_parts_params(spec)


def _image_side(spec: WorkloadSpec) -> int:
    from procurement.sizing import image_model

    return image_model.resolution(spec)


def serving_host_ram(spec: WorkloadSpec) -> tuple[float, str] | None:
    """(GiB, the parts in words) one language-model serving process (one a GPU) holds on the host while it loads,
    by its stack (inference.engine), + STACK_RUNTIME_GIB:
    - vllm_v0 (vLLM): safetensors_weights_iterator opens each checkpoint file with safe_open (a memory map) and
      yields one tensor at a time (f.get_tensor(name)), which the layer's weight_loader copies to the GPU
      (vllm-project/vllm @0a1ee72ed53f07ca8e57e5e82fdbd89734b39026 vllm/model_executor/model_loader/weight_utils.py
      safetensors_weights_iterator, default_weight_loader param.data.copy_): the largest tensor, read whole by
      every rank, at the checkpoint's 2 B (largest_tensor_bytes: the embedding / LM head or one MLP projection).
    - hf_eager (transformers generate): a quantized / device_map load holds the largest shard (stack_host_ram),
      HF_SHARD_BYTES at most, of its tensor-parallel share of the weights (bytes_model.weights_bytes).
    - compiled (the default) covers vLLM and TensorRT-LLM alike, so it keeps the shard rule as the floor stated:
      TensorRT-LLM reads a rank's whole engine into a host buffer before deserializing it
      (NVIDIA/TensorRT-LLM @f20d99bd8247d38f7ab1078ac6051395fa80ef84 cpp/tensorrt_llm/runtime/utils/runtimeUtils.cpp
      loadEngine: std::vector<uint8_t> engineBlob(size); engineFile.read(...)), more than one shard, and vLLM less
      (aud48r, stop 48: an 8 GiB-RAM H100 host ranked first for Llama-3.1-8B FP8 serving: min(5 GB, 8.03 GB) =
      4.7 GiB + 3.5 GiB > 8 GiB; aud48r2: stated vllm_v0, the largest tensor 1.05 GB + 3.5 GiB = 4.5 GiB).
    The runtime is carried from a training measurement (aud44r, diffusers + accelerate), not a serving one.
    Image pipelines: None (their serving stacks are not known)."""
    model = spec.model
    if model.image_arch is not None or model.is_image or model.is_image_tier:
        return None
    from procurement.sizing.bytes_model import weights_bytes

    runtime = (
        f" + {STACK_RUNTIME_GIB:g} GiB of runtime a serving process (assumed: carried from a diffusers + accelerate "
        "training measurement, aud44r, not a serving one)"
    )
    if getattr(spec.inference, "engine", "compiled") == "vllm_v0" and largest_tensor_bytes(spec) > 0:
        weights = largest_tensor_bytes(spec) / _GIB
        parts = (
            f"{weights:.1f} GiB, the largest tensor, as vLLM streams the checkpoint one tensor at a time from a "
            "memory map (inference.engine vllm_v0)"
        )
        return weights + STACK_RUNTIME_GIB, parts + runtime
    share = weights_bytes(spec) / max(spec.parallelism.tensor_parallel, 1)
    weights = min(HF_SHARD_BYTES, share) / _GIB
    if getattr(spec.inference, "engine", "compiled") == "hf_eager":
        parts = (
            f"{weights:.1f} GiB of weights passing through the host as transformers loads them (one checkpoint "
            "shard of at most 5 GB at a time)"
        )
    else:
        parts = (
            f"{weights:.1f} GiB of weights passing through the host as the server loads them (one checkpoint shard of "
            f"at most 5 GB at a time at best; TensorRT-LLM reads a whole engine)"
        )
    return weights + STACK_RUNTIME_GIB, parts + runtime


def largest_tensor_bytes(spec: WorkloadSpec) -> float:
    """The checkpoint's largest tensor at 2 B (bf16; an FP8 checkpoint keeps its embedding and LM head in bf16):
    the embedding (vocab x hidden) or one MLP projection (intermediate x hidden), whichever is larger."""
    model = spec.model
    inter = max(model.intermediate_size or 0, getattr(model, "moe_intermediate_size", 0) or 0)
    hidden = model.hidden_size or 0
    return max((model.vocab_size or 0) * hidden, inter * hidden) * 2.0


def stack_host_ram(spec: WorkloadSpec) -> tuple[float, str] | None:
    """(GiB, the parts in words) one training process holds on the host at its peak where its stack is known, or
    None. Sources:
    - diffusers' training scripts (huggingface/diffusers examples/text_to_image/train_text_to_image_lora_sdxl.py,
      train_text_to_image_lora.py): UNet, text encoders and VAE come from from_pretrained without torch_dtype
      (fp32) and are moved with .to(accelerator.device, dtype=weight_dtype) only after all are loaded: the
      whole pipeline x 4 B on the host (low_cpu_mem_usage keeps it to 1x model size: diffusers PR 1450).
    - transformers, quantized or device_map loads: modeling_utils.py from_pretrained sets low_cpu_mem_usage=True
      ("`low_cpu_mem_usage` was None, now default to True since model is quantized"; a device_map requires it),
      which reads the checkpoint a shard at a time and moves each quantized layer to the GPU: the largest shard,
      min(HF_SHARD_BYTES, params x 2 B of the bf16 checkpoint).
    - transformers, a plain load (fine-tuning from a checkpoint): the whole checkpoint in the run's dtype (params
      x its bytes). Pretraining loads no checkpoint and its stack varies: unknown (None).
    - Ultralytics (ultralytics/ultralytics @002363f1 ultralytics/data/base.py BaseDataset): weights fp32 + each
      loader worker's mosaic buffer of max_buffer_length = min(n, batch x 8, 1000) images resized to imgsz on the
      long side (taken square, imgsz^2 x 3 B: an upper bound; COCO's 640 x 480 is 0.75 of it), cache=False being
      the default (ultralytics/cfg/default.yaml); workers at loader_workers_per_gpu (8: a bound, Ultralytics
      runs min(cpu_count / GPUs, 8)).
    Every other loader (diffusers' scripts): workers x PREFETCH_BATCHES x batch fp32 images of 3 x side^2."""
    if not spec.is_training:
        return serving_host_ram(spec)
    arch = spec.model.image_arch
    batch = max(spec.micro_batch_size, 1)
    if arch is not None and arch.family == "detection":
        side = _image_side(spec)
        images = spec.image.dataset_images or 1000
        buffered = min(images, batch * 8, 1000)
        workers = loader_workers_per_gpu(spec)
        weights = _image_params(spec) * 4.0 / _GIB
        loader = workers * buffered * side * side * 3.0 / _GIB
        parts = (
            f"{weights:.1f} GiB of fp32 weights + {loader:.1f} GiB of Ultralytics' mosaic buffers "
            f"({workers:g} workers x {buffered} images at {side} px)"
        )
    elif arch is not None and arch.is_diffusion:
        side = _image_side(spec)
        weights = _image_params(spec) * 4.0 / _GIB
        workers = spec.image.loader_workers or 0  # diffusers' scripts: --dataloader_num_workers 0
        loader = workers * PREFETCH_BATCHES * batch * 3.0 * side * side * 4.0 / _GIB
        parts = f"{weights:.1f} GiB of the fp32 pipeline as diffusers' training script loads it" + (
            f" + {loader:.2f} GiB of loader batches" if loader else ""
        )
    elif spec.task == "pretrain":
        return None  # nothing is loaded (Megatron/NeMo initialize on the GPU, HF from_config on the CPU): unknown
    elif arch is None and not spec.model.is_image and not spec.model.is_image_tier:
        from procurement.sizing.bytes_model import compute_bytes

        params = float(spec.model.params)
        if spec.weight_quantization != "none":
            weights = min(HF_SHARD_BYTES, params * 2.0) / _GIB
            parts = (
                f"{weights:.1f} GiB, one checkpoint shard at a time as transformers loads quantized weights "
                "(shards of at most 5 GB assumed)"
            )
        else:
            weights = params * compute_bytes(spec) / _GIB
            parts = f"{weights:.1f} GiB of the checkpoint as transformers loads it"
        loader = 0.0
    else:
        return None
    need = weights + loader + STACK_RUNTIME_GIB
    return need, f"{parts} + {STACK_RUNTIME_GIB:g} GiB of runtime (assumed) a training process"
