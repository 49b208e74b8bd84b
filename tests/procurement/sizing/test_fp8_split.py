"""fp8 training under Transformer Engine runs its attention core and output layer in bf16 (fp826, issue 26 item 7).

Transformer Engine casts only the block linears' inputs to fp8: its recipes default to fp8_dpa False and
Megatron-Core's TransformerConfig to fp8_dot_product_attention False, and the output layer is a Megatron
ColumnParallelLinear, not a Transformer Engine module (sizing/fp8_split.py). The engine's fp8 efficiencies
(assumptions.mfu_fp8_linears_*) are the linears' own; these FLOPs take twice their fp8 time.
"""

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from procurement.sizing import fp8_split, gpu_by_slug, parse_workload_spec
from procurement.sizing.assumptions import MFU_FP8_LINEARS, MFU_FP8_LINEARS_BLACKWELL
from procurement.sizing.mfu import default_mfu, estimate_mfu
from procurement.sizing.throughput import training_flops_per_token

H100, B200, L40S = gpu_by_slug("h100-sxm5-80gb"), gpu_by_slug("b200"), gpu_by_slug("l40s")


def spec(preset="llama-3.1-8b", seq=8192, task="pretrain", **extra):
    document = {"task": task, "model": {"preset": preset}, "precision": "fp8", "seq_len": seq}
    document |= {"gradient_checkpointing": "selective", "training_tokens": 1e9}
    return parse_workload_spec(document | extra)


def test_llama3_8b_at_8k_by_hand():
    # 32 layers of 32 heads x 128 (d_attn 4,096); causal at 8,192 tokens: a token attends to 4,096 on average.
    # Attention core: 3 passes x 4 x 4,096 x 4,096 x 32 = 6.442e9; output layer: 6 x 128,256 x 4,096 = 3.152e9.
    run = spec()
    attention, head = 3 * 4 * 4096 * 4096 * 32, 6 * 128_256 * 4096
    assert fp8_split.sixteen_bit_flops_per_token(run) == pytest.approx(attention + head, rel=1e-9)
    # of 6 x (8.030e9 - the 128,256 x 4,096 input embedding, a lookup: moe42) + 6.442e9 = 51.62e9 FLOPs a token
    share = (attention + head) / training_flops_per_token(run)
    assert training_flops_per_token(run) == pytest.approx(6 * (8_030_261_248 - 128_256 * 4096) + attention)
    assert share == pytest.approx(0.1864, abs=1e-4)
    # those FLOPs at half the rate: 1 - 0.1864 + 2 x 0.1864 = 1.1864 the all-fp8 time (1.1756 with the embedding)
    assert fp8_split.time_factor(run) == pytest.approx(1.1864, abs=1e-4)
    assert default_mfu(run, H100) == pytest.approx(MFU_FP8_LINEARS.value / 1.1864, abs=1e-4)
    assert default_mfu(run, B200) == pytest.approx(MFU_FP8_LINEARS_BLACKWELL.value / 1.1864, abs=1e-4)


def test_adapters_run_the_frozen_head_forward_and_backward_only():
    # LoRA: the output layer computes no weight gradient: 4 FLOPs a weight (forward, input gradient), not 6
    lora = spec(task="lora", lora={"rank": 16})
    attention = 3 * 4 * 4096 * 4096 * 32
    assert fp8_split.sixteen_bit_flops_per_token(lora) == pytest.approx(
        attention + 4 * 128_256 * 4096, rel=1e-9
    )


def test_full_recomputation_counts_the_extra_forward():
    # the attention core's extra forward; the output layer is outside the checkpointed blocks, 6 a weight
    # either way (moe42: it was counted 8)
    full = spec(gradient_checkpointing="full")
    expected = 4 * 4 * 4096 * 4096 * 32 + 6 * 128_256 * 4096
    assert fp8_split.sixteen_bit_flops_per_token(full) == pytest.approx(expected, rel=1e-9)


def test_the_split_applies_only_to_transformer_engine_fp8_training():
    assert fp8_split.time_factor(spec()) > 1.0
    assert fp8_split.time_factor(dataclasses.replace(spec(), precision="bf16")) == 1.0
    # torchao float8 has its own split (mfu.torchao_float8_speedup)
    assert fp8_split.time_factor(spec(fp8_recipe="torchao")) == 1.0
    serving = parse_workload_spec(
        {"task": "inference", "model": {"preset": "llama-3.1-8b"}, "precision": "fp8"}
    )
    assert fp8_split.time_factor(serving) == 1.0
    # a stated MFU is the user's: neither split nor explained
    stated = spec(mfu=0.5)
    assert estimate_mfu(stated, H100) == 0.5 and fp8_split.text(stated) == ""


def test_the_report_says_which_flops_stay_bf16():
    sentence = fp8_split.text(spec())
    assert "attention core and the output layer (19% of the FLOPs) stay bf16" in sentence, sentence
    assert "1.19x its all-fp8 time" in sentence, sentence


def test_a_card_without_the_fitted_figure_keeps_its_default_for_the_linears():
    # an L40S (Ada, no NVSwitch) has no fitted fp8 figure: the workstation default, split likewise
    run = spec()
    assert default_mfu(run, L40S) == pytest.approx(L40S.default_mfu / fp8_split.time_factor(run), rel=1e-9)


@settings(max_examples=30, deadline=None)
@given(seq=st.sampled_from([1024, 2048, 4096, 8192, 16384, 32768]))
def test_longer_sequences_spend_more_of_the_step_in_bf16(seq):
    # the attention core grows with the context, the linears do not; the factor stays between 1 and 2
    shorter, longer = fp8_split.time_factor(spec(seq=seq)), fp8_split.time_factor(spec(seq=2 * seq))
    assert 1.0 < shorter < longer < 2.0
