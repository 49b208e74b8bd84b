"""Parsing the workload spec: presets, defaults, and every bad-input rule of issue 3."""

import pytest
import yaml

from procurement.sizing import WorkloadSpecError, parse_workload_spec


def _errors(data) -> dict[str, str]:
    with pytest.raises(WorkloadSpecError) as caught:
        parse_workload_spec(data)
    return {error.path: error.message for error in caught.value.errors}


def test_it_resolves_a_preset_by_slug_alias_and_hf_id():
    by_alias = parse_workload_spec({"task": "inference", "model": {"preset": "llama-3.1-8b"}})
    by_hf_id = parse_workload_spec({"task": "inference", "model": {"preset": "meta-llama/Meta-Llama-3-8B"}})
    assert by_alias.model.num_key_value_heads == by_hf_id.model.num_key_value_heads == 8
    assert by_alias.model.params == 8_030_261_248


def test_it_lets_explicit_fields_override_a_preset_and_recounts_params():
    spec = parse_workload_spec({"task": "inference", "model": {"preset": "llama-2-7b", "num_layers": 16}})
    assert spec.model.num_layers == 16
    assert spec.model.params < 4e9  # half the blocks of a 6.74B model


def test_it_reads_yaml_exponents_that_pyyaml_leaves_as_strings():
    data = yaml.safe_load(
        "task: pretrain\nmodel: {preset: llama-2-7b, params: 8.03e9}\ntraining_tokens: 1.0e9\n"
    )
    assert isinstance(data["model"]["params"], str)  # YAML 1.1 needs a signed exponent for a float
    spec = parse_workload_spec(data)
    assert spec.model.params == 8.03e9 and spec.training_tokens == 1e9


def test_it_applies_documented_defaults():
    spec = parse_workload_spec({"task": "qlora", "model": {"preset": "llama-2-7b"}})
    assert spec.weight_quantization == "nf4"
    assert spec.lora.rank == 8 and spec.lora.targets == ("q_proj", "v_proj")
    assert spec.headroom == 0.2 and spec.parallelism.gpus == 1 and spec.precision == "bf16"


def test_it_defaults_head_dim_to_hidden_over_heads_and_keeps_an_explicit_one():
    shape = {
        "num_layers": 2,
        "hidden_size": 2048,
        "num_attention_heads": 32,
        "intermediate_size": 6144,
        "vocab_size": 1000,
    }
    assert parse_workload_spec({"task": "inference", "model": shape}).model.head_dim == 64
    explicit = parse_workload_spec({"task": "inference", "model": shape | {"head_dim": 128}})
    assert explicit.model.head_dim == 128  # Qwen3-style: head_dim != hidden / heads


def test_it_expands_lora_target_aliases():
    spec = parse_workload_spec(
        {"task": "lora", "model": {"preset": "llama-2-7b"}, "lora": {"targets": "all-linear"}}
    )
    assert len(spec.lora.targets) == 7
    torchtune = parse_workload_spec(
        {"task": "lora", "model": {"preset": "llama-2-7b"}, "lora": {"targets": ["output_proj", "mlp"]}}
    )
    assert torchtune.lora.targets == ("o_proj", "gate_proj", "up_proj", "down_proj")


def test_it_accepts_fsdp_as_zero_stage_3():
    spec = parse_workload_spec(
        {
            "task": "pretrain",
            "model": {"preset": "llama-2-7b"},
            "parallelism": {"gpus": 8, "zero_stage": "fsdp"},
        }
    )
    assert spec.parallelism.zero_stage == 3


def test_it_rejects_an_unknown_preset():
    errors = _errors({"task": "inference", "model": {"preset": "llama-9-1t"}})
    assert "unknown preset 'llama-9-1t'" in errors["model.preset"]


def test_it_rejects_heads_that_do_not_divide_hidden_size():
    errors = _errors({"task": "inference", "model": {"preset": "llama-2-7b", "num_attention_heads": 30}})
    assert "must divide model.hidden_size (4096)" in errors["model.num_attention_heads"]


def test_it_rejects_kv_heads_that_do_not_divide_heads():
    errors = _errors({"task": "inference", "model": {"preset": "llama-2-7b", "num_key_value_heads": 5}})
    assert "must divide model.num_attention_heads (32)" in errors["model.num_key_value_heads"]


@pytest.mark.parametrize(
    ("data", "path"),
    [
        ({"micro_batch_size": 0}, "micro_batch_size"),
        ({"seq_len": -1}, "seq_len"),
        ({"model": {"preset": "llama-2-7b", "hidden_size": 0}}, "model.hidden_size"),
        ({"model": {"preset": "llama-2-7b", "params": -5}}, "model.params"),
        ({"parallelism": {"gpus": 0}}, "parallelism.gpus"),
        ({"inference": {"concurrency": 0}}, "inference.concurrency"),
        ({"training_tokens": 0}, "training_tokens"),
        ({"lora": {"rank": 0}}, "lora.rank"),
    ],
)
def test_it_rejects_zero_or_negative_sizes(data, path):
    base = {"task": "lora", "model": {"preset": "llama-2-7b"}}
    assert path in _errors(base | data)


def test_it_rejects_an_unknown_precision():
    errors = _errors({"task": "pretrain", "model": {"preset": "llama-2-7b"}, "precision": "fp12"})
    assert "unknown value 'fp12'" in errors["precision"]


def test_it_rejects_qlora_with_fp32_compute():
    errors = _errors({"task": "qlora", "model": {"preset": "llama-2-7b"}, "precision": "fp32"})
    assert "use bf16 or fp16" in errors["precision"]


def test_it_reports_every_offending_field_at_once():
    errors = _errors(
        {
            "task": "qlora",
            "model": {"preset": "llama-2-7b", "num_key_value_heads": 5},
            "precision": "fp32",
            "micro_batch_size": -2,
            "optimiser": "adam",
        }
    )
    assert {"model.num_key_value_heads", "micro_batch_size", "optimiser"} <= set(errors)


def test_it_rejects_unknown_fields_and_a_missing_task_or_model():
    errors = _errors({"modle": {}, "parallelism": {"gpu": 2}})
    assert {"modle", "parallelism.gpu", "task", "model"} <= set(errors)


def test_it_rejects_a_model_without_shape_or_preset():
    errors = _errors({"task": "inference", "model": {"hidden_size": 4096}})
    assert errors["model.num_layers"] == "required (or give model.preset)"


@pytest.mark.parametrize(
    ("data", "path"),
    [
        ({"parallelism": {"gpus": 6, "tensor_parallel": 4}}, "parallelism.gpus"),
        ({"parallelism": {"gpus": 3, "tensor_parallel": 3}}, "parallelism.tensor_parallel"),
        ({"parallelism": {"zero_stage": 4}}, "parallelism.zero_stage"),
        ({"parallelism": {"offload": "optimizer"}}, "parallelism.offload"),
        ({"parallelism": {"zero_stage": 2, "offload": "optimizer_and_params"}}, "parallelism.offload"),
        ({"weight_quantization": "nf4"}, "weight_quantization"),
        ({"precision": "fp4"}, "precision"),
        ({"lora": {"targets": ["qkv"]}}, "lora.targets[0]"),
    ],
)
def test_it_rejects_inconsistent_training_settings(data, path):
    task = "lora" if "lora" in data else "full_finetune"
    assert path in _errors({"task": task, "model": {"preset": "llama-2-7b"}} | data)


def test_it_rejects_an_image_tier_for_a_task_it_does_not_cover():
    errors = _errors({"task": "inference", "model": {"preset": "yolo-small"}})
    assert "covers pretrain, full_finetune" in errors["task"]


def test_it_rejects_a_spec_that_is_not_a_mapping():
    with pytest.raises(WorkloadSpecError) as caught:
        parse_workload_spec(["task"])
    assert caught.value.errors[0].path == "(root)"
