"""LoRA target names of fused-attention architectures map to the fused linear, not rejected."""

import pytest

from procurement.sizing import parse_workload_spec
from procurement.sizing.params import lora_params

# GPT-NeoX-20B: hidden 6144, 44 layers, 64 heads (multi-head: q, k, v each 6144 wide) -> config.json of
# EleutherAI/gpt-neox-20b.
NEOX_20B = {
    "params": 20.55e9,
    "num_layers": 44,
    "hidden_size": 6144,
    "num_attention_heads": 64,
    "num_key_value_heads": 64,
    "intermediate_size": 24576,
    "vocab_size": 50432,
    "gated_mlp": False,
}


def _spec(targets, model=None, rank=8):
    return parse_workload_spec(
        {
            "name": "x",
            "task": "lora",
            "model": model or NEOX_20B,
            "lora": {"rank": rank, "targets": targets},
            "training_tokens": 1e8,
        }
    )


def test_query_key_value_matches_peft_on_gpt_neox_20b():
    # PEFT's print_trainable_parameters() in the QLoRA notebook (Hugging Face blog "Making LLMs even more
    # accessible with bitsandbytes, 4-bit quantization and QLoRA", 2023): r=8, target_modules=["query_key_value"]
    # on gpt-neox-20b -> "trainable params: 8650752". By hand: 8 x (6144 + 3 x 6144) x 44 = 8,650,752.
    spec = _spec(["query_key_value"])
    assert spec.lora.targets == ("qkv_fused",)
    assert lora_params(spec.model, spec.lora) == 8_650_752


@pytest.mark.parametrize("name", ["c_attn", "Wqkv", "qkv_proj"])
def test_other_fused_names_are_the_same_linear(name):
    assert _spec([name]).lora.targets == ("qkv_fused",)


def test_fused_qkv_counts_one_a_matrix_not_three():
    # Llama-3-8B shape (GQA: q 4096, k and v 1024 each): fused r x (4096 + 6144) per layer = 81,920 at r=8;
    # three separate adapters would be 8 x (8192 + 5120 + 5120) = 147,456.
    llama = {"preset": "llama-3.1-8b"}
    fused = _spec(["query_key_value"], llama)
    separate = _spec(["q_proj", "k_proj", "v_proj"], llama)
    assert lora_params(fused.model, fused.lora) == 81_920 * 32
    assert lora_params(separate.model, separate.lora) == 147_456 * 32


def test_falcon_mlp_and_output_names_map():
    assert _spec(["dense", "dense_h_to_4h", "dense_4h_to_h"]).lora.targets == (
        "o_proj",
        "up_proj",
        "down_proj",
    )


def test_an_unknown_name_is_still_rejected_with_the_choices():
    from procurement.sizing import WorkloadSpecError

    with pytest.raises(WorkloadSpecError) as error:
        _spec(["attention_thing"])
    assert (
        error.value.errors[0].path == "lora.targets[0]" and "query_key_value" in error.value.errors[0].message
    )
