"""training_stack: the software stack sets the 16-bit Hopper width ceiling (stack26, issue 26).

The ceiling was fitted on one stack (MosaicML llm-foundry's MPT H100 sweep). NeMo / Megatron-Core runs reach more
of the peak: assumptions.TRAINING_WIDTH_PEAK_HOPPER_MEGATRON, fitted on the two NeMo 24.09 rows of docs/validation.md
(NVIDIA/dgxc-benchmarking @143b90dd91f9be958fed4773ae95d941a3356a82 llama3.1/README_8b.md and README_70b.md); the
outside tests' NeMo 24.12 rows were held out. Unstated (other), maxtext and torchtitan keep today's ceiling.
"""

import dataclasses

import pytest

from procurement.sizing import gpu_by_slug, parse_workload_spec, size_workload
from procurement.sizing.assumptions import (
    TRAINING_WIDTH_K_HOPPER,
    TRAINING_WIDTH_PEAK_HOPPER,
    TRAINING_WIDTH_PEAK_HOPPER_MEGATRON,
)
from procurement.sizing.mfu import default_mfu
from procurement.sizing.spec import WorkloadSpecError
from procurement.sizing.validation import MEGATRON_HOPPER_FITS, validation_rows

H100 = gpu_by_slug("h100-sxm5-80gb")
A100 = gpu_by_slug("a100-sxm4-80gb")


def spec(stack=None, **extra):
    data = {
        "task": "pretrain",
        "model": {"preset": "llama-3.1-8b"},
        "precision": "bf16",
        "seq_len": 8192,
        "parallelism": {"gpus": 8},
        "training_tokens": 1e10,
    } | extra
    return parse_workload_spec(data | ({"training_stack": stack} if stack else {}))


def ceiling(peak: float, width: int) -> float:
    return peak / (1 + TRAINING_WIDTH_K_HOPPER.value / width)


def test_unstated_is_other_and_keeps_the_llm_foundry_ceiling():
    assert spec().training_stack == "other"
    assert default_mfu(spec(), H100) == pytest.approx(ceiling(TRAINING_WIDTH_PEAK_HOPPER.value, 4096))
    assert default_mfu(spec(), H100) == pytest.approx(0.444, abs=1e-3)


@pytest.mark.parametrize("stack", ["other", "maxtext", "torchtitan"])
def test_stacks_without_a_fit_are_sized_as_before(stack):
    assert default_mfu(spec(stack), H100) == default_mfu(spec(), H100)


def test_megatron_dense_hopper_runs_at_its_own_ceiling():
    # moe42: refitted 0.623 -> 0.600 once the FLOP count stopped charging the input embedding (a lookup)
    assert TRAINING_WIDTH_PEAK_HOPPER_MEGATRON.value == 0.600
    assert default_mfu(spec("megatron"), H100) == pytest.approx(0.498, abs=1e-3)
    wide = spec("megatron", model={"preset": "llama-3.1-70b"})
    assert default_mfu(wide, H100) == pytest.approx(ceiling(0.600, 8192)) == pytest.approx(0.544, abs=1e-3)


def test_megatron_leaves_fp8_ampere_and_moe_alone():
    fp8 = spec("megatron", precision="fp8")
    assert default_mfu(fp8, H100) == default_mfu(dataclasses.replace(fp8, training_stack="other"), H100)
    assert default_mfu(spec("megatron"), A100) == default_mfu(spec(), A100)
    moe = spec("megatron", model={"preset": "mixtral-8x7b"}, parallelism={"gpus": 64, "expert_parallel": 8})
    assert default_mfu(moe, H100) == default_mfu(dataclasses.replace(moe, training_stack="other"), H100)


def test_the_fit_rows_are_within_10_percent():
    # stack26: 8B on 8 H100 -20.8% -> -7.7%, 70B on 64 H100 -6.7% -> +8.5% (least squares of the log errors).
    # moe42: without the input embedding's FLOPs (a lookup) they read -2.1% and +10.0% at 0.623; refitted, the same
    # least squares gives 0.600: -5.7% and +6.0%
    rows = {row.reference_id: row for row in validation_rows()}
    errors = [rows[name].error for name in MEGATRON_HOPPER_FITS]
    assert errors == [pytest.approx(-0.057, abs=0.005), pytest.approx(0.060, abs=0.005)]


def test_the_speed_basis_names_the_stack():
    row = size_workload(spec("megatron"), [H100])["candidates"][0]
    assert "training_stack megatron" in row["speed_basis"]
    assert "50%" in row["speed_basis"] and "44%" in row["speed_basis"]
    assert "training_stack" not in (size_workload(spec(), [H100])["candidates"][0]["speed_basis"] or "")


def test_unknown_stacks_are_refused():
    with pytest.raises(WorkloadSpecError):
        spec("deepspeed")


# ---------------------------------------------------------------------------------------------- llm_c (train46)
# karpathy/llm.c: mfu.llm_c_efficiency counts train_gpt2.cu@a0d5dbb's memory-bound bytes (45 bf16 elements a token
# and layer per unit of d, fused_classifier's 4 B a padded logit) at achieved_bandwidth_fraction 0.70 beside the
# FLOPs at the width ceiling's e. GPT-2 124M (d 768, 12 layers, V 50,304, seq 1,024) on an A100 80GB (312 TFLOPS,
# 2,039 GB/s), by hand: bytes 90 x 12 x 768 + 4 x 50,304 = 1,030,656 a token; FLOPs 798.1e6 a token (the engine's
# count, tokens/s x step); memory / FLOP time = 1,030,656 / (0.70 x 2,039e9) / (798.1e6 / (0.726 x 312e12)) =
# 0.2044; 0.726 / 1.2044 = 0.603.
# fix46t: plus AdamW's once-a-step bytes (train_gpt2.cu@a0d5dbb adamw_kernel3 with master weights 30 B, gradient norm
# 2 B, zero-grad 2 B a parameter; no ZeRO here): 34 x 124,475,904 / 524,288 tokens a GPU a step (B 64 x T 1,024 x 8
# accumulation steps) = 8,072 B a token more: (1,030,656 + 8,072) / (0.70 x 2,039e9) / 3.5236e-6 = 0.2065;
# 0.726 / 1.2065 = 0.602.
def gpt2_124m(stack=None):
    return spec(
        stack,
        model={
            "name": "gpt2-d12",
            "num_layers": 12,
            "hidden_size": 768,
            "num_attention_heads": 12,
            "intermediate_size": 3072,
            "vocab_size": 50304,
            "gated_mlp": False,
            "tie_word_embeddings": True,
        },
        seq_len=1024,
        micro_batch_size=64,
        gradient_accumulation_steps=8,
    )


def test_llm_c_counts_its_own_passes():
    assert default_mfu(gpt2_124m("llm_c"), A100) == pytest.approx(0.6017, abs=5e-4)
    # MosaicML MPT's ceiling for the unstated stack: 0.726 / (1 + 621 / 768) = 0.401
    assert default_mfu(gpt2_124m(), A100) == pytest.approx(0.401, abs=1e-3)


def test_llm_c_moves_nothing_else():
    assert default_mfu(spec("llm_c", precision="fp8"), H100) == default_mfu(spec(precision="fp8"), H100)
    moe = spec("llm_c", model={"preset": "mixtral-8x7b"}, parallelism={"gpus": 64, "expert_parallel": 8})
    assert default_mfu(moe, H100) == default_mfu(dataclasses.replace(moe, training_stack="other"), H100)


def test_llm_c_speed_basis_names_the_stack():
    row = size_workload(gpt2_124m("llm_c"), [A100])["candidates"][0]
    assert "training_stack llm_c" in row["speed_basis"]
    assert "60%" in row["speed_basis"] and "40%" in row["speed_basis"]


# fix46t (aud46t's findings). A100 PCIe 40GB: the unstated stack's derating, mfu_workstation 0.35 over the Ampere
# ceiling 0.726 / (1 + 621 / 768) = 0.4013, is 0.872 (assumptions.mfu_workstation, training_width_*); llm_c takes it
# on the GEMMs' e (0.726 x 0.872 = 0.633) and keeps the datasheet bandwidth.
A100_PCIE = gpu_by_slug("a100-pcie-40gb")
V100 = gpu_by_slug("v100-sxm2-32gb")


def test_llm_c_takes_the_pcie_derating():
    from procurement.sizing.mfu import llm_c_part_share

    assert llm_c_part_share(gpt2_124m("llm_c"), A100) == 1.0
    assert llm_c_part_share(gpt2_124m("llm_c"), A100_PCIE) == pytest.approx(0.35 / 0.4013, abs=1e-3)
    assert default_mfu(gpt2_124m("llm_c"), A100_PCIE) < default_mfu(gpt2_124m("llm_c"), A100)


def test_llm_c_is_not_applied_before_ampere_and_says_so():
    from procurement.sizing.mfu import llm_c_note

    fp16 = dataclasses.replace(gpt2_124m("llm_c"), precision="fp16")
    # the V100 (Volta, no bf16) sizes it as the unstated stack, without raising
    assert default_mfu(fp16, V100) == default_mfu(dataclasses.replace(fp16, training_stack="other"), V100)
    assert "not applied" in llm_c_note(fp16, V100)
    assert "not applied" in llm_c_note(spec("llm_c", precision="fp8"), H100)
    assert llm_c_note(gpt2_124m("llm_c"), A100) == ""
    assert llm_c_note(gpt2_124m(), A100) == ""
