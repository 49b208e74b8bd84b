"""Packed sequences (packed_sample_tokens): samples packed into each seq_len sequence attend only within
themselves, so a trained token's attention FLOPs are counted over its sample, not the sequence.

Source of the setting: NVIDIA/NeMo @25ec4e9894c6938c3562ebb1df3280cf5a01f4da (the commit NVIDIA/dgxc-benchmarking
ft_llama3/setup.sh pins) nemo/collections/llm/recipes/llama3_8b.py finetune_recipe, lines 279-309:
"packed_sequence = performance_mode", "seq_length = 4096 if packed_sequence else 2048",
"PackedSequenceSpecs, packed_sequence_size=seq_length". Shape: Llama 3 8B config.json (32 layers, 32 heads of
128, h 4,096).
"""

import pytest

from procurement.sizing.memory import memory_breakdown_scalar
from procurement.sizing.mfu import packed_text
from procurement.sizing.spec import WorkloadSpecError, parse_workload_spec
from procurement.sizing.throughput import attention_context_tokens, training_flops_per_token

SFT_8B = {
    "task": "full_finetune",
    "model": {"preset": "llama-3-8b"},
    "precision": "bf16",
    "seq_len": 4096,
    "gradient_checkpointing": "selective",
    "parallelism": {"gpus": 8, "zero_stage": 1},
}


def test_attention_is_counted_over_the_packed_sample():
    # causal attention, 3 passes: 3 x 4 x (L / 2) x 4,096 x 32 layers a token. Over the 4,096-token sequence
    # 3,221,225,472 FLOPs; over 2,048-token samples half of it, 1,610,612,736.
    whole = parse_workload_spec(SFT_8B)
    packed = parse_workload_spec(SFT_8B | {"packed_sample_tokens": 2048})
    assert attention_context_tokens(whole) == 4096 and attention_context_tokens(packed) == 2048
    saved = training_flops_per_token(whole) - training_flops_per_token(packed)
    assert saved == pytest.approx(3 * 4 * 1024 * 4096 * 32) == pytest.approx(1_610_612_736)


def test_packing_a_whole_sequence_changes_nothing_and_memory_is_per_token():
    whole = parse_workload_spec(SFT_8B)
    same = parse_workload_spec(SFT_8B | {"packed_sample_tokens": 4096})
    assert training_flops_per_token(same) == training_flops_per_token(whole)
    short = parse_workload_spec(SFT_8B | {"packed_sample_tokens": 256})
    assert memory_breakdown_scalar(short, 8) == pytest.approx(memory_breakdown_scalar(whole, 8))


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"packed_sample_tokens": 8192}, "must be <= seq_len (4096)"),
        ({"packed_sample_tokens": 2048, "flash_attention": False}, "flash_attention true"),
        ({"packed_sample_tokens": 0}, "packed_sample_tokens"),
    ],
)
def test_it_refuses_packing_it_cannot_count(extra, message):
    with pytest.raises(WorkloadSpecError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_workload_spec(SFT_8B | extra)


def test_it_refuses_packing_for_serving():
    serving = {"task": "inference", "model": {"preset": "llama-3-8b"}, "packed_sample_tokens": 512}
    with pytest.raises(WorkloadSpecError, match="needs a training task"):
        parse_workload_spec(serving)


def test_the_speed_basis_says_the_attention_is_counted_over_the_sample():
    assert packed_text(parse_workload_spec(SFT_8B)) == ""
    text = packed_text(parse_workload_spec(SFT_8B | {"packed_sample_tokens": 2048}))
    assert "samples of 2,048 tokens packed into each 4,096-token sequence" in text
