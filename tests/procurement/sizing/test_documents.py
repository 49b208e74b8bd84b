"""Spec documents: the sizing page's simple form builds the same spec a YAML author would write."""

import pytest
import yaml

from procurement.sizing import WorkloadSpecError, parse_workload_spec
from procurement.sizing.documents import spec_from_knobs, spec_to_yaml

TRAINING_FORM = {
    "task": "full_finetune",
    "preset": "llama-3.1-8b",
    "precision": "bf16",
    "micro_batch_size": "2",
    "seq_len": "4096",
    "gradient_checkpointing": "selective",
    "training_tokens": "1e9",
    "lora_rank": "32",
    "gpus": "8",
    "zero_stage": "fsdp",
    "concurrency": "16",
    "context_len": "8192",
    "resolution_px": "1024",
}


def test_it_builds_only_the_fields_the_task_uses():
    spec = spec_from_knobs(TRAINING_FORM)
    assert spec == {
        "name": "llama-3.1-8b-full_finetune",
        "task": "full_finetune",
        "model": {"preset": "llama-3.1-8b"},
        "precision": "bf16",
        "micro_batch_size": 2,
        "seq_len": 4096,
        "gradient_checkpointing": "selective",
        "training_tokens": 1_000_000_000,
        "parallelism": {"gpus": 8, "zero_stage": "fsdp"},
    }
    parsed = parse_workload_spec(spec)
    assert (parsed.parallelism.gpus, parsed.parallelism.zero_stage) == (8, 3)  # FSDP shards like ZeRO-3


def test_it_adds_the_rank_for_adapters_and_serving_knobs_for_inference():
    assert spec_from_knobs(TRAINING_FORM | {"task": "qlora"})["lora"] == {"rank": 32}
    serving = spec_from_knobs(TRAINING_FORM | {"task": "inference"})
    assert serving["inference"] == {"concurrency": 16, "context_len": 8192}
    assert serving["parallelism"] == {"gpus": 8}
    assert not {"micro_batch_size", "seq_len", "gradient_checkpointing", "lora"} & set(serving)


def test_it_sizes_image_tiers_by_batch_and_resolution_only():
    spec = spec_from_knobs(TRAINING_FORM | {"task": "lora", "preset": "sd1x-tier"})
    assert spec == {
        "name": "sd1x-tier-lora",
        "task": "lora",
        "model": {"preset": "sd1x-tier"},
        "precision": "bf16",
        "micro_batch_size": 2,
        "parallelism": {"gpus": 8},
        "image": {"resolution_px": 1024},
    }
    assert parse_workload_spec(spec).image_resolution_px == 1024


def test_it_leaves_blank_knobs_to_the_spec_defaults():
    spec = spec_from_knobs({"task": "lora", "preset": "llama-3.2-3b", "lora_rank": " ", "name": "mine"})
    assert spec == {"name": "mine", "task": "lora", "model": {"preset": "llama-3.2-3b"}}


def test_it_passes_bad_values_through_for_the_parser_to_name():
    spec = spec_from_knobs(TRAINING_FORM | {"seq_len": "long", "gpus": "-2"})
    with pytest.raises(WorkloadSpecError) as caught:
        parse_workload_spec(spec)
    assert {"seq_len", "parallelism.gpus"} <= {field.path for field in caught.value.errors}


def test_it_writes_yaml_that_reads_back_to_the_same_spec():
    spec = spec_from_knobs(TRAINING_FORM | {"task": "qlora"})
    text = spec_to_yaml(spec)
    assert "model: {preset: llama-3.1-8b}" in text
    assert yaml.safe_load(text) == spec


def test_image_presets_take_their_own_knobs():
    # an image preset sized from its shapes: checkpointing, LoRA rank and the run's steps apply too
    spec = spec_from_knobs(
        TRAINING_FORM | {"task": "lora", "preset": "sdxl", "train_steps": "800", "steps": "30"}
    )
    assert spec["image"] == {"resolution_px": 1024, "train_steps": 800}
    assert spec["lora"] == {"rank": 32} and "gradient_checkpointing" in spec and "seq_len" not in spec


def test_image_training_takes_the_hosts_vcpus():
    """The Colab YOLO11n run's host ('Setup complete (2 CPUs, 12.7 GB RAM)', tests/procurement/outside
    test_outside_image_workloads_3.py) stated from the form: host.vcpus_per_gpu, which feeds the loader;
    not for generation (no images decoded) or language models."""
    form = {"task": "full_finetune", "preset": "yolo11n", "micro_batch_size": "16", "vcpus_per_gpu": "2"}
    spec = spec_from_knobs(form)
    assert spec["host"] == {"vcpus_per_gpu": 2}
    assert parse_workload_spec(spec).host.vcpus_per_gpu == 2
    assert "host" not in spec_from_knobs(form | {"task": "inference", "preset": "sdxl"})
    assert "host" not in spec_from_knobs(TRAINING_FORM | {"vcpus_per_gpu": "2"})
