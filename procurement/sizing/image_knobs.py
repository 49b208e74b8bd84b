"""The sizing form's image knobs: every `image:` field the spec parser reads (image_spec.ImageSpec) that the
form's first knobs (resolution, steps, training steps, software stack) leave out, and the top-level
fields image jobs are commonly tuned by (weight quantization in generation; optimizer, attention kernel,
fused optimizer step).

A knob's text becomes the spec value the API takes: "true"/"false" for a flag, a number where the text
is one, the text itself otherwise (so `parse_workload_spec` names a bad value by its path). A knob at
its spec default is left out of the document, so a form that nobody touched builds the same short spec.
"""

from __future__ import annotations

# knob -> the spec field it sets (dotted path, as in error messages)
IMAGE_KNOB_PATHS = {
    "guidance": "image.guidance",
    "vae_slicing": "image.vae_slicing",
    "vae_tiling": "image.vae_tiling",
    "text_encoder_offload": "image.text_encoder_offload",
    "weight_quantization": "weight_quantization",
    "quantize_text_encoders": "image.quantize_text_encoders",
    "nf4_double_quant": "image.nf4_double_quant",
    "fused_kernels": "image.fused_kernels",
    "image_engine": "image.engine",
    "engine_version": "image.engine_version",
    "tf32_matmul": "image.tf32_matmul",
    "images": "image.images",
    "text_tokens": "image.text_tokens",
    "unfused_lora_rank": "image.unfused_lora_rank",
    "autocast": "image.autocast",
    "memory_format": "image.memory_format",
    "optimizer": "optimizer",
    "flash_attention": "flash_attention",
    "optimizer_in_backward": "optimizer_in_backward",
    "train_text_encoder": "image.train_text_encoder",
    "prior_preservation": "image.prior_preservation",
    "cache_latents": "image.cache_latents",
    "cache_text_embeddings": "image.cache_text_embeddings",
    "data_pipeline": "image.data_pipeline",
    "epochs": "image.epochs",
    "dataset_images": "image.dataset_images",
    "eval_every_epochs": "image.eval_every_epochs",
    "eval_images": "image.eval_images",
    "max_objects_per_image": "image.max_objects_per_image",
    "deterministic": "image.deterministic",
    "loader_workers": "image.loader_workers",
    "source_megapixels": "image.source_megapixels",
    "lora_module": "image.lora_module",
    "adafactor_scale_parameter": "image.adafactor_scale_parameter",
}
# Flags, with the spec's default: a ticked box posts "true", an unticked one "false" (a hidden input)
IMAGE_FLAG_DEFAULTS = {
    "vae_slicing": "false",
    "vae_tiling": "false",
    "text_encoder_offload": "false",
    "quantize_text_encoders": "false",
    "nf4_double_quant": "true",
    "fused_kernels": "false",
    "tf32_matmul": "false",
    "autocast": "false",
    "flash_attention": "true",
    "optimizer_in_backward": "false",
    "train_text_encoder": "false",
    "prior_preservation": "false",
    "cache_latents": "false",
    "deterministic": "true",
    "adafactor_scale_parameter": "false",
}
# Choices whose blank or named default the spec fills in itself
_CHOICE_DEFAULTS = {
    "guidance": "preset",
    "weight_quantization": "none",
    "data_pipeline": "preset",
    "optimizer": "adamw",
    "image_engine": "pytorch",
    "lora_module": "peft",
    "memory_format": "nchw",  # a convnet's default (spec._default_memory_format); refused elsewhere when stated
}
# Knobs whose text is a number (documents._knob_value turns it into one)
IMAGE_NUMBER_KNOBS = {
    "images",
    "text_tokens",
    "unfused_lora_rank",
    "epochs",
    "dataset_images",
    "eval_every_epochs",
    "eval_images",
    "max_objects_per_image",
    "loader_workers",
    "source_megapixels",
}
# The form's starting values: every knob at the spec's default (cache_text_embeddings blank: as cache_latents)
IMAGE_KNOB_DEFAULTS = {knob: "" for knob in IMAGE_KNOB_PATHS} | IMAGE_FLAG_DEFAULTS | _CHOICE_DEFAULTS

# The tasks each knob's field acts in; the others apply to every task of an image preset
_INFERENCE_ONLY = {
    "guidance",
    "vae_slicing",
    "vae_tiling",
    "text_encoder_offload",
    "weight_quantization",
    "nf4_double_quant",
    "images",
    "unfused_lora_rank",
    "autocast",
    "image_engine",
    "engine_version",
}
_TRAINING_ONLY = {
    "optimizer",
    "optimizer_in_backward",
    "train_text_encoder",
    "prior_preservation",
    "cache_latents",
    "cache_text_embeddings",
    "data_pipeline",
    "epochs",
    "dataset_images",
    "eval_every_epochs",
    "eval_images",
    "max_objects_per_image",
    "deterministic",
    "loader_workers",
    "source_megapixels",
    "lora_module",
    "adafactor_scale_parameter",
}


def image_knob_applies(knob: str, task: str) -> bool:
    """Whether the knob's field acts in this task of an image preset (the spec keeps only those)."""
    if knob in _INFERENCE_ONLY:
        return task == "inference"
    if knob in _TRAINING_ONLY:
        return task != "inference"
    return True


def image_knob_value(knob: str, text: str) -> bool | str | None:
    """The spec value of a knob's text (a flag's "true"/"false" as a boolean, anything else as typed), or
    None where it is blank or the spec's default, so the document leaves it out."""
    if not text or text == IMAGE_FLAG_DEFAULTS.get(knob) or text == _CHOICE_DEFAULTS.get(knob):
        return None
    if knob in IMAGE_FLAG_DEFAULTS or knob == "cache_text_embeddings":
        return {"true": True, "false": False}.get(text.lower(), text)
    return text
