"""Host sizing for a candidate: vCPUs, RAM and disk, each with the parts it adds up from.

Rules from the procurement guides: at least 4 vCPUs per GPU (8-16 for heavy image decoding), RAM at
least the sum of GPU memory plus anything offloaded, disk = dataset + unpacked copy + environment +
weights + checkpoints x kept + logs + cache + reserve.
"""

from __future__ import annotations

import math

from procurement.sizing.assumptions import (
    BYTES_PER_TOKEN_TEXT,
    DISK_RESERVE,
    ENVIRONMENT_DISK,
    GB,
    GPUS_PER_NODE,
    LOADER_CROP_IMAGES_PER_VCPU,
    LOADER_IMAGES_PER_VCPU,
    LOGS_DISK,
    VCPUS_PER_GPU,
    VCPUS_PER_GPU_IMAGE,
)
from procurement.sizing.bytes_model import adapter_params, optimizer_bytes_per_param, state_bytes
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
    if spec.uses_adapters:
        return adapter_params(spec) * 4.0 / GB
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
    data pipeline: LOADER_IMAGES_PER_VCPU for detector mosaics (and decoded photos), LOADER_CROP_IMAGES_PER_VCPU
    for classification crops; inf where nothing is decoded."""
    pipeline = data_pipeline(spec)
    if pipeline == "predecoded":
        return float("inf")
    return LOADER_CROP_IMAGES_PER_VCPU.value if pipeline == "crop" else LOADER_IMAGES_PER_VCPU.value


def vcpus_per_gpu(spec: WorkloadSpec) -> float:
    """The guides' rule: 4 vCPUs per GPU, 8 where the data pipeline decodes images."""
    return VCPUS_PER_GPU_IMAGE.value if decodes_images(spec) else VCPUS_PER_GPU.value


def loader_vcpus_per_gpu(spec: WorkloadSpec) -> float:
    """The vCPUs per GPU feeding the loader: the host the spec states (host.vcpus_per_gpu, or `size
    --vcpus-per-gpu`), else the guides' rule (vcpus_per_gpu)."""
    stated = spec.host.vcpus_per_gpu
    return vcpus_per_gpu(spec) if stated is None else stated


def host_requirements(spec: WorkloadSpec, gpu: GpuSpec, gpu_count: int, host_ram_gib: float) -> dict:
    gpus_per_node = int(min(gpu_count, GPUS_PER_NODE.value))
    per_gpu = vcpus_per_gpu(spec)
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
        "vcpus_per_node": int(per_gpu * gpus_per_node),
        "ram_gib_per_node": math.ceil(gpu_memory_gib + host_ram_gib),
        "ram_rule": "at least the sum of GPU memory, plus offloaded state",
        "offloaded_state_gib_per_node": host_ram_gib,
        "disk_gb_per_node": math.ceil(subtotal + parts["reserve_gb"]),
        "disk_breakdown_gb": {key: round(value, 1) for key, value in parts.items()},
        "gpu_memory_gib_per_node": round(gpu_memory_gib, 1),
        "notes": f"{per_gpu:g} vCPUs per GPU" + (" (image decoding)" if decodes_images(spec) else ""),
    }
