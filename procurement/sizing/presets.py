"""Bundled model presets: LLM shapes from model_architectures.json and image-model tiers.

LLM presets are looked up by a slug of the model name (`Llama-3-8B` -> `llama-3-8b`), by the
Hugging Face id, or by a documented alias (`llama-3.1-8b` has the shapes of Llama-3-8B). Image models
with a preset (image_architectures.json, image_presets.py) are sized from their shapes; the guides'
tier tables below are ONLY the fallback for an image architecture without a preset, and their memory
is a tier estimate.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

ARCHITECTURES_JSON = Path(__file__).resolve().parents[1] / "data" / "model_architectures.json"

# Same shapes as a bundled entry (model_architectures.json notes say so for 3.1 vs 3).
ALIASES = {
    "llama-3.1-8b": "llama-3-8b",
    "llama-3.1-70b": "llama-3-70b",
    "llama-3.3-70b": "llama-3-70b",
    "llama-3.1-405b": "llama-3.1-405b",
    "mistral-7b": "mistral-7b-v0.1",
    "mixtral-8x7b": "mixtral-8x7b-v0.1",
}


# The MLP width of the maker's own int4 release of a preset where it differs from the 16-bit config (the served
# checkpoint's width decides which TP degrees int4 groups of 128 load at: ranking/splits.tensor_parallel_splits_mlp).
# Qwen pads its int4 72B releases from 29,568 to 29,696 "to make sure quantized model can use 8 tensor-parallel in
# vllm" (Hugging Face Qwen/Qwen2-VL-72B-Instruct-AWQ commit 688e28d, -GPTQ-Int4 commit 288c348; Qwen2-72B-Instruct-AWQ
# discussion 3), and its own speed benchmark serves Qwen2.5-72B-Instruct-AWQ on 2 x A100 under vLLM 0.6.3
# (QwenLM/Qwen2.5 @010c37c3 docs/source/benchmark/speed_benchmark.rst), which vLLM's AWQ kernels load at TP 2 only
# padded (29,568 / 2 = 14,784 = 115.5 groups: awq.py / marlin_utils.py refuse it). A stated model.intermediate_size
# (a third-party checkpoint at 29,568) wins.
INT4_RELEASE_INTERMEDIATE_SIZE = {"Qwen2.5-72B": 29696}


# model.eager_layer a preset's own transformers code runs (serving_host.REPEAT_KV), by its Hugging Face id: Qwen2.5
# checkpoints load Qwen2ForCausalLM (config.json "architectures"), Mistral 7B MistralForCausalLM. A stated
# model.eager_layer wins; every other preset (and a model stated by its shape) takes the spec default, llama.
# Mixtral (MixtralSparseMoeBlock) and Qwen3 have other layers, not counted: they stay llama.
PRESET_EAGER_LAYERS = {"qwen/qwen2.5-": "qwen2", "mistralai/mistral-7b": "mistral"}


def preset_eager_layer(hf_id: str) -> str | None:
    """The eager_layer of a bundled preset's architecture (PRESET_EAGER_LAYERS); None: the spec default."""
    return next(
        (layer for prefix, layer in PRESET_EAGER_LAYERS.items() if hf_id.lower().startswith(prefix)), None
    )


def slugify(name: str) -> str:
    return re.sub(r"[\s_/]+", "-", name.strip().lower())


def _moe_fields(moe: dict | None) -> dict:
    """Normalize the three MoE layouts of the JSON (Mixtral, Qwen3, DeepSeek) to spec fields."""
    if not moe:
        return {}
    experts = moe.get("num_local_experts") or moe.get("num_experts") or moe.get("n_routed_experts")
    return {
        "num_experts": experts,
        "experts_per_token": moe.get("num_experts_per_tok", 1),
        "moe_intermediate_size": moe.get("expert_intermediate_size") or moe.get("moe_intermediate_size"),
        "shared_experts": moe.get("shared_experts", moe.get("n_shared_experts", 0)) or 0,
        "dense_layers": moe.get("first_k_dense_replace", 0),
        "expert_groups": moe.get("n_expert_groups", moe.get("n_group", 0)) or 0,
        "expert_groups_per_token": moe.get("topk_group", 0) or 0,
    }


# The layer shape every architectures-file entry states, copied as is into a preset's model fields and into the
# stored ModelArchitecture row (procurement/architectures.py)
ARCHITECTURE_SHAPE_FIELDS = (
    "num_layers",
    "hidden_size",
    "num_attention_heads",
    "num_key_value_heads",
    "head_dim",
    "intermediate_size",
    "vocab_size",
)


def architecture_shape(entry: dict) -> dict:
    """An architectures-file entry's layer shape (ARCHITECTURE_SHAPE_FIELDS), in that order."""
    return {key: entry[key] for key in ARCHITECTURE_SHAPE_FIELDS}


def _model_fields(entry: dict) -> dict:
    fields = {
        "name": entry["name"],
        "params": float(entry["params_computed"]),
        **architecture_shape(entry),
        "tie_word_embeddings": entry["tie_word_embeddings"],
        "attention_qkv_bias": bool(entry.get("attention_qkv_bias")),
        "gated_mlp": True,  # every bundled LLM uses a SwiGLU MLP
    }
    fields.update(_moe_fields(entry.get("moe")))
    if preset_eager_layer(entry["hf_id"]):
        fields["eager_layer"] = preset_eager_layer(entry["hf_id"])
    if entry.get("sliding_window"):  # every layer (spec default), as Mistral 7B v0.1's config windows them
        fields["sliding_window"] = int(entry["sliding_window"])
    if entry.get("num_nextn_predict_layers"):
        fields["mtp_layers"] = int(entry["num_nextn_predict_layers"])
    if entry.get(
        "params_active_computed"
    ):  # counted with both vocab tables; active_params leaves out the lookup
        lookup = 0 if entry["tie_word_embeddings"] else entry["vocab_size"] * entry["hidden_size"]
        fields["params_active"] = float(entry["params_active_computed"] - lookup)
    if entry.get("mla"):
        mla = entry["mla"]
        fields["kv_elems_per_token_per_layer"] = mla["kv_cache_elems_per_token_per_layer"]
        fields.update(
            {key: mla[key] for key in ("q_lora_rank", "kv_lora_rank", "qk_rope_head_dim", "v_head_dim")}
        )
    return fields


@lru_cache(maxsize=1)
def llm_presets() -> dict[str, dict]:
    """Preset slug -> model fields; also keyed by lower-cased HF id."""
    entries = json.loads(ARCHITECTURES_JSON.read_text(encoding="utf-8"))
    presets: dict[str, dict] = {}
    for entry in entries:
        fields = _model_fields(entry)
        presets[slugify(entry["name"])] = fields
        presets[entry["hf_id"].lower()] = fields
    for alias, target in ALIASES.items():
        presets.setdefault(alias, presets[target])
    return presets


@dataclass(frozen=True)
class ImageTier:
    """A tier row of the guides: measured memory range for a reference resolution and batch."""

    slug: str
    label: str
    params: float
    tasks: tuple[str, ...]
    reference_resolution_px: int
    reference_batch: int
    tier_low_gb: float
    tier_high_gb: float
    source: str


IMAGE_TIERS: dict[str, ImageTier] = {
    tier.slug: tier
    for tier in (
        ImageTier(
            "yolo-small",
            "Small YOLO detector (YOLOv8s class) training at 640 px",
            11.2e6,
            ("pretrain", "full_finetune"),
            640,
            16,
            8.0,
            12.0,
            "Procurement guides' tier table: small YOLO at 640 px, 8-12 GB; Ultralytics default batch 16.",
        ),
        ImageTier(
            "sd1x-tier",
            "Stable Diffusion 1.x LoRA at 512 px",
            1.07e9,
            ("lora",),
            512,
            1,
            12.0,
            16.0,
            "Procurement guides' tier table: SD 1.x LoRA, 12-16 GB.",
        ),
        ImageTier(
            "sdxl-tier",
            "SDXL inference and LoRA at 1024 px",
            3.5e9,
            ("lora", "inference"),
            1024,
            1,
            16.0,
            24.0,
            "Procurement guides' tier table: SDXL inference and LoRA, 16-24 GB.",
        ),
    )
}
# Presets with shapes (image_architectures.json) take sd-1.5, sdxl, yolov8s...; the tiers remain the
# fallback for an architecture without a preset (an SD 1.x or SDXL derivative, a small YOLO-class model).
IMAGE_ALIASES = {"sd15-tier": "sd1x-tier", "sd1x": "sd1x-tier", "sdxl-class": "sdxl-tier"}


def image_tier(preset: str) -> ImageTier | None:
    slug = slugify(preset)
    return IMAGE_TIERS.get(IMAGE_ALIASES.get(slug, slug))


def known_preset_names() -> list[str]:
    from procurement.sizing.image_presets import image_preset_slugs

    names = {slugify(entry) for entry in llm_presets() if "/" not in entry}
    return sorted(names | set(IMAGE_TIERS) | set(image_preset_slugs()))


def int4_release_intermediate_size(preset) -> int | None:
    """The MLP width of the preset's maker's int4 release where it is padded (INT4_RELEASE_INTERMEDIATE_SIZE)."""
    presets = llm_presets()
    text = str(preset)
    fields = presets.get(slugify(text)) or presets.get(text.strip().lower())
    return INT4_RELEASE_INTERMEDIATE_SIZE.get(fields["name"]) if fields else None
