"""Workload spec documents: YAML or JSON text into a dict (naming file, line and column on error), and
the spec the sizing page's simple form (a few knobs) describes, written back as YAML."""

from __future__ import annotations

from collections.abc import Mapping

import yaml

from gpuledger.input_bounds import first_document_problem
from gpuledger.yaml_bounded import yaml_load_bounded
from procurement.sizing.image_knobs import (
    IMAGE_KNOB_PATHS,
    IMAGE_NUMBER_KNOBS,
    image_knob_applies,
    image_knob_value,
)
from procurement.sizing.image_presets import image_architecture
from procurement.sizing.presets import image_tier, slugify
from procurement.sizing.spec import FieldError, WorkloadSpecError


def load_spec_text(text: str, source: str = "spec") -> dict:
    """Parse YAML (JSON is valid YAML); a syntax error becomes a WorkloadSpecError at `source:line:column`."""
    if not text.strip():
        raise WorkloadSpecError([FieldError(source, "empty file: paste or upload a workload spec")])
    try:
        data = yaml_load_bounded(text)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark
        where = f"{source}:{mark.line + 1}:{mark.column + 1}" if mark else source
        raise WorkloadSpecError([FieldError(where, str(error.problem or error))]) from None
    except yaml.YAMLError as error:
        raise WorkloadSpecError([FieldError(source, str(error))]) from None
    if not isinstance(data, dict):
        raise WorkloadSpecError([FieldError(source, "the document must be a mapping of spec fields")])
    problem = first_document_problem(data)
    if problem is not None:
        raise WorkloadSpecError([FieldError(problem[0], problem[1])])
    return data


# The sizing page's simple form: knob -> the spec field it sets (dotted path, as in error messages).
KNOB_PATHS = {
    "name": "name",
    "task": "task",
    "preset": "model.preset",
    "precision": "precision",
    "micro_batch_size": "micro_batch_size",
    "seq_len": "seq_len",
    "max_seq_len": "max_seq_len",
    "zero_grad": "zero_grad",
    "optimizer_impl": "optimizer_impl",
    "torch_version": "torch_version",
    "cross_entropy": "cross_entropy",
    "training_stack": "training_stack",
    "gradient_checkpointing": "gradient_checkpointing",
    "training_tokens": "training_tokens",
    "lora_rank": "lora.rank",
    "lora_implementation": "lora.implementation",
    "lora_adapter_dtype": "lora.adapter_dtype",
    "lora_modules_to_save": "lora.modules_to_save",
    "distillation_teacher": "distillation.teacher",
    "distillation_mode": "distillation.mode",
    "gpus": "parallelism.gpus",
    "zero_stage": "parallelism.zero_stage",
    "tensor_parallel": "parallelism.tensor_parallel",
    "pipeline_parallel": "parallelism.pipeline_parallel",
    "virtual_pipeline": "parallelism.virtual_pipeline",
    "context_parallel": "parallelism.context_parallel",
    "expert_parallel": "parallelism.expert_parallel",
    "concurrency": "inference.concurrency",
    "context_len": "inference.context_len",
    "serving_engine": "inference.engine",
    "quant_kernel": "inference.quant_kernel",
    "quant_format": "inference.quant_format",
    "quant_group_size": "inference.quant_group_size",
    "attn_implementation": "inference.attn_implementation",
    "generate_harness": "inference.generate_harness",
    "rotary_backend": "inference.rotary_backend",
    "transformers_release": "inference.transformers_release",
    "expert_precision": "inference.expert_precision",
    "decode_attention": "inference.decode_attention",
    "traffic": "inference.traffic",
    "max_batched_tokens": "inference.max_batched_tokens",
    "eager_layer": "model.eager_layer",
    "resolution_px": "image.resolution_px",
    "steps": "image.steps",
    "train_steps": "image.train_steps",
    "runtime": "image.runtime",
    "vcpus_per_gpu": "host.vcpus_per_gpu",
    "bnb_version": "quantization.bnb_version",
    "lm_head_4bit": "quantization.lm_head_4bit",
    "bnb_storage_dtype": "quantization.bnb_storage_dtype",
    "bnb_double_quant": "quantization.nf4_double_quant",  # the image knob nf4_double_quant is image.*'s
    "prepare_kbit": "quantization.prepare_kbit",
}
# Knobs that apply only to some tasks or model kinds; the rest apply to every workload.
_TRAINING_ONLY = {
    "micro_batch_size",
    "seq_len",
    "max_seq_len",
    "zero_grad",
    "optimizer_impl",
    "torch_version",
    "cross_entropy",
    "training_stack",
    "gradient_checkpointing",
    "training_tokens",
    "distillation_teacher",
    "distillation_mode",
    "zero_stage",
    "virtual_pipeline",
    "context_parallel",
    "expert_parallel",
}
# qlora (nf4, the form's default for it): the bitsandbytes stack's memory (bnb_memory.py)
_QLORA_ONLY = {"bnb_version", "lm_head_4bit", "bnb_storage_dtype", "bnb_double_quant", "prepare_kbit"}
_ADAPTER_ONLY = {"lora_rank", "lora_implementation", "lora_adapter_dtype", "lora_modules_to_save"}
# The form's lora_modules_to_save choices and the list each states (spec.LORA_SAVED_MODULE_ALIASES)
LORA_SAVED_MODULE_CHOICES = {
    "none": [],
    "embeddings": ["embeddings"],
    "output": ["output"],
    "embeddings_and_output": ["embeddings", "output"],
}
_INFERENCE_ONLY = {
    "concurrency",
    "context_len",
    "serving_engine",
    "quant_kernel",
    "quant_format",
    "quant_group_size",
    "attn_implementation",
    "generate_harness",
    "rotary_backend",
    "transformers_release",
    "eager_layer",
    "expert_precision",
    "decode_attention",
    "traffic",
    "max_batched_tokens",
}
# Image tiers (detection, diffusion) scale with batch and resolution only (see image.py).
_IMAGE_KNOBS = {"name", "task", "preset", "precision", "micro_batch_size", "gpus", "resolution_px"}
# Image presets sized from their shapes (image_model.py) also take checkpointing, LoRA rank and run length.
_IMAGE_PRESET_KNOBS = _IMAGE_KNOBS | {
    "gradient_checkpointing",
    "lora_rank",
    "steps",
    "train_steps",
    "runtime",
}
_IMAGE_ONLY = {"steps", "train_steps", "runtime", "vcpus_per_gpu"}
# Knobs whose form value is a word, kept as text (the others are numbers); the sizing page's
# free-text inputs are the ones not marked numeric by this set
TEXT_KNOBS = {
    "name",
    "task",
    "preset",
    "precision",
    "gradient_checkpointing",
    "zero_grad",
    "optimizer_impl",
    "torch_version",
    "cross_entropy",
    "training_stack",
    "runtime",
    "lora_implementation",
    "lora_adapter_dtype",
    "lora_modules_to_save",
    "distillation_teacher",
    "distillation_mode",
    "serving_engine",
    "quant_kernel",
    "quant_format",
    "attn_implementation",
    "generate_harness",
    "rotary_backend",
    "transformers_release",
    "eager_layer",
    "expert_precision",
    "decode_attention",
    "traffic",
    "bnb_version",
    "lm_head_4bit",
    "bnb_storage_dtype",
    "bnb_double_quant",
    "prepare_kbit",
}
# Knobs left out of the document at this value (the spec's default), so the starting document stays short
_UNSTATED_DEFAULTS = {
    "zero_grad": "in_place",
    "optimizer_impl": "foreach",
    "torch_version": "current",
    "cross_entropy": "fp32_softmax",
    "training_stack": "other",
    "runtime": "optimized",
    "lora_implementation": "peft_eager",
    "lora_adapter_dtype": "base",
    "lora_modules_to_save": "none",
    "distillation_teacher": "none",  # no distillation
    "distillation_mode": "online",
    "serving_engine": "compiled",
    "quant_kernel": "unstated",
    "quant_format": "unstated",
    "attn_implementation": "unstated",
    "generate_harness": "transformers",
    "rotary_backend": "unstated",
    "transformers_release": "unstated",
    "expert_precision": "model",
    "decode_attention": "shared_kv",
    "traffic": "streams",
    "bnb_version": "current",
    "lm_head_4bit": "false",
    "bnb_storage_dtype": "unstated",
    "bnb_double_quant": "true",
    "prepare_kbit": "false",
    "eager_layer": "from_preset",  # the spec's own default: the preset's architecture (presets.PRESET_EAGER_LAYERS)
}


def _knob_value(text: str):
    """A whole number where the text is one, else the text itself, so the spec parser can name it."""
    try:
        number = float(text.replace("_", ""))
    except ValueError:
        return text
    return int(number) if number.is_integer() and abs(number) < 1e15 else number


def _applies(knob: str, task: str, is_image: bool, is_preset: bool = False) -> bool:
    if is_preset:
        if knob in ("steps", "runtime"):
            return task == "inference"
        if knob in ("train_steps", "vcpus_per_gpu"):  # the host's vCPUs feed a training step's loader
            return task != "inference"
        return knob in _IMAGE_PRESET_KNOBS and (knob != "lora_rank" or task in ("lora", "qlora"))
    if is_image:
        return knob in _IMAGE_KNOBS
    if knob == "resolution_px" or knob in _IMAGE_ONLY:
        return False
    if knob in _TRAINING_ONLY:
        return task != "inference"
    if knob in _ADAPTER_ONLY:
        return task in ("lora", "qlora")
    if knob in _QLORA_ONLY:
        return task == "qlora"
    if knob in _INFERENCE_ONLY:
        return task == "inference"
    return True


def spec_from_knobs(knobs: Mapping[str, str]) -> dict:
    """The workload spec a form of simple knobs describes (only the fields its task uses; blanks take
    the spec's defaults). Values pass through unconverted when they are not numbers, so
    `parse_workload_spec` rejects them by path, exactly as it would in a YAML document."""
    task = (knobs.get("task") or "").strip()
    preset = str(knobs.get("preset") or "").strip()
    is_preset = image_architecture(slugify(preset)) is not None
    is_image = is_preset or image_tier(preset) is not None
    spec: dict = {}
    for knob, path in KNOB_PATHS.items():
        text = str(knobs.get(knob) or "").strip()
        if not text or text == _UNSTATED_DEFAULTS.get(knob) or not _applies(knob, task, is_image, is_preset):
            continue
        value = text if knob in TEXT_KNOBS else _knob_value(text)
        if (
            knob == "lora_modules_to_save"
        ):  # a choice naming a list; an unknown text goes through to be refused
            value = LORA_SAVED_MODULE_CHOICES.get(text, [text])
        if knob in (
            "lm_head_4bit",
            "bnb_double_quant",
            "prepare_kbit",
        ):  # a yes / no choice; an unknown text goes through to be refused
            value = {"true": True, "false": False}.get(text.lower(), text)
        _set_path(spec, path, value)
    if is_preset:
        _add_image_knobs(spec, knobs, task)
    if "name" not in spec and spec.get("model", {}).get("preset"):
        spec = {"name": f"{spec['model']['preset']}-{task or 'workload'}"} | spec
    return spec


def _set_path(spec: dict, path: str, value) -> None:
    *parents, leaf = path.split(".")
    target = spec
    for parent in parents:
        target = target.setdefault(parent, {})
    target[leaf] = value


def _add_image_knobs(spec: dict, knobs: Mapping[str, str], task: str) -> None:
    """The image knobs (image_knobs.py) an image preset's task uses, where they differ from the spec's
    defaults."""
    for knob, path in IMAGE_KNOB_PATHS.items():
        value = image_knob_value(knob, str(knobs.get(knob) or "").strip())
        if value is None or not image_knob_applies(knob, task):
            continue
        _set_path(spec, path, _knob_value(str(value)) if knob in IMAGE_NUMBER_KNOBS else value)


def spec_to_yaml(spec: dict) -> str:
    """A spec dict as the YAML document the page shows (key order kept, leaf mappings inline)."""
    return yaml.safe_dump(spec, sort_keys=False, default_flow_style=None, allow_unicode=True, width=100)
