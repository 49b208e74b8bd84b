"""The MFU an estimate uses: the A100 pretraining figure, the card defaults, the width ceiling of narrow
models, and fitted calibration."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from procurement.sizing import gpu_by_slug, parse_workload_spec
from procurement.sizing.accelerators import speed_ratio
from procurement.sizing.fp8_split import time_factor
from procurement.sizing.mfu import (
    CalibrationFactor,
    default_mfu,
    estimate_mfu,
    memory_factor,
    width_ceiling,
    width_text,
)

A100, H100, L4090 = gpu_by_slug("a100-sxm4-80gb"), gpu_by_slug("h100-sxm5-80gb"), gpu_by_slug("rtx-4090")


def _spec(task="pretrain", **extra):
    return parse_workload_spec(
        {"task": task, "model": {"preset": "llama-2-7b"}, "training_tokens": 1e9} | extra
    )


def test_dense_pretraining_on_a100_uses_the_mfu_fitted_to_llama1_at_its_plans():
    # 0.51 is the MFU at which the engine, pricing each LLaMA-1 run's communication at its published plan
    # (2048 A100s, docs/validation.md), reproduces LLaMA-1 Table 15's GPU-hours on average (arXiv:2302.13971);
    # tests/procurement/sizing/test_validation.py checks that mean. Above the one-GPU fit (0.485, the mean of
    # 45.1/53.1/47.0/48.7% from 6N + 6 L T d_attn at T = 2048), which priced no communication.
    shares = [
        6 * L * 2048 * d / (6 * n)
        for L, d, n in ((32, 4096, 6.74e9), (40, 5120, 13.0e9), (60, 6656, 32.5e9), (80, 8192, 65.2e9))
    ]
    mfus = [m * (1 + s) for m, s in zip((0.434, 0.514, 0.458, 0.477), shares, strict=True)]
    assert sum(mfus) / 4 == pytest.approx(0.485, abs=0.001)
    assert default_mfu(_spec(), A100) == 0.51
    # Hopper 16-bit pretraining runs at the MPT H100 sweep's width ceiling (issue 26, pipe26): the 0.40 card
    # default was read off Llama 3 405B's end-to-end 38-43%, bubble and communication included, which the
    # engine adds itself. Llama 2 7B (d 4,096): 0.535 / (1 + 838 / 4,096) = 0.444 (MPT 7B on H100: 0.447)
    assert default_mfu(_spec(), H100) == pytest.approx(0.535 / (1 + 838 / 4096), abs=1e-9)
    assert default_mfu(_spec(), H100) == pytest.approx(0.444, abs=0.001)
    # mfu26: full fine-tunes and LoRA in 16 bits run pretraining's dense GEMMs, so they reach the same ceiling
    # (NeMo 24.07 FP8 SFT on 8 H100 at its pretraining rate: Llama 2 7B 16,891 vs 16,934 tokens/s/GPU; NeMo
    # AutoModel's BF16 LoRA rows on H100 within -8%..+4% at it); QLoRA (dequantization beside each GEMM)
    # keeps the card default.
    ceiling = 0.535 / (1 + 838 / 4096)
    assert default_mfu(_spec("full_finetune"), H100) == pytest.approx(ceiling, abs=1e-9)
    assert default_mfu(_spec("lora"), H100) == pytest.approx(ceiling, abs=1e-9)
    assert default_mfu(_spec("qlora"), H100) == 0.40
    # fp8 (fp826): the linears at mfu_fp8_linears_hopper, 0.42 of the fp8 peak (int42 refit; 0.425 before); the attention core and the
    # output layer run in bf16, at half the rate. By hand, Llama 2 7B at 2,048: attention 3 x 4 x 1,024 x 4,096 x
    # 32 = 1.611e9 and head 6 x 32,000 x 4,096 = 7.864e8 of 6 x (6.738e9 - the 32,000 x 4,096 input embedding, a
    # lookup) + 1.611e9 = 4.125e10 FLOPs a token (5.81%; moe42: 4.204e10 and 5.70% with the embedding counted)
    # take twice their fp8 time: 0.42 / 1.0581 = 0.3969
    assert default_mfu(_spec(precision="fp8"), H100) == pytest.approx(0.42 / 1.0581, abs=1e-4)
    assert default_mfu(_spec("full_finetune"), A100) == 0.40  # fine-tunes keep the card default
    assert default_mfu(_spec(), L4090) == 0.35


def test_a_fitted_factor_multiplies_the_default_and_a_stated_mfu_wins():
    calibration = {
        ("a100-sxm4-80gb", "lora"): CalibrationFactor(samples=4, throughput_factor=1.25, memory_factor=0.9)
    }
    lora = _spec("lora")
    # A100 80GB LoRA in bf16 defaults to 0.47 (procurement/data/measured_efficiency.csv, Qwen-7B LoRA; 0.52
    # before moe42's FLOP count)
    assert default_mfu(lora, A100) == 0.47
    assert estimate_mfu(lora, A100, calibration) == pytest.approx(0.47 * 1.25)  # 0.5875
    # another GPU model: no factor (the H100's 16-bit LoRA default is the width ceiling, mfu26)
    assert estimate_mfu(lora, H100, calibration) == default_mfu(lora, H100)
    assert default_mfu(lora, H100) == pytest.approx(0.444, abs=0.001)
    assert estimate_mfu(_spec("full_finetune"), A100, calibration) == 0.40  # another method: no factor
    assert estimate_mfu(_spec("lora", mfu=0.3), A100, calibration) == 0.3
    assert memory_factor(lora, A100, calibration) == 0.9
    assert memory_factor(lora, A100, None) == 1.0
    assert calibration[("a100-sxm4-80gb", "lora")].text() == "calibrated from 4 runs (factor 1.25)"
    assert calibration[("a100-sxm4-80gb", "lora")].text("memory") == "calibrated from 4 runs (factor 0.90)"


# MosaicML llm-foundry scripts/train/benchmarking/README.md @c90b9b31, "A100 80GB" table, 8 GPUs, seq 2048,
# no activation checkpointing: (d_model, layers, parameters, MFU %) of MPT 125M, 350M, 760M, 1B, 3B, 7B. MPT
# counts attention as 12 L d s FLOPs a token (3 passes of 4 L d s, no causal mask); the engine counts half.
MPT_A100_80GB_SEQ_2048 = (
    (768, 12, 125.3e6, 44.79),
    (1024, 24, 356.0e6, 51.62),
    (1536, 24, 760.5e6, 56.85),
    (2048, 24, 1316e6, 59.86),
    (2560, 32, 2652e6, 62.11),
    (4096, 32, 6659e6, 64.23),
)


def _gpt(width: int, layers: int, task: str = "pretrain", **extra):
    model = {
        "name": f"gpt-{width}",
        "num_layers": layers,
        "hidden_size": width,
        "num_attention_heads": width // 64,
        "intermediate_size": 4 * width,
        "vocab_size": 50304,
        "gated_mlp": False,
    }
    return parse_workload_spec({"task": task, "model": model, "training_tokens": 1e9} | extra)


@pytest.mark.parametrize(("width", "layers", "params", "mfu"), MPT_A100_80GB_SEQ_2048)
def test_the_width_ceiling_reproduces_mpts_a100_sweep_in_the_engines_flop_count(width, layers, params, mfu):
    seq = 2048
    engine_terms = (
        mfu / 100 * (6 * params + 6 * layers * width * seq) / (6 * params + 12 * layers * width * seq)
    )
    assert width_ceiling(_gpt(width, layers), A100) == pytest.approx(engine_terms, rel=0.02)


def test_a_narrow_model_trains_below_the_7b_fits_and_wide_ones_keep_them():
    # 0.726 / (1 + 621 / 768) = 0.401: a GPT-2 124M on an A100 gets the MPT sweep's 125M efficiency, not the
    # 0.51 fitted on LLaMA-1 7B-65B; from d ~1,470 up the fit is lower and stays (TinyLlama's d 2,048, Llama).
    assert default_mfu(_gpt(768, 12), A100) == pytest.approx(0.726 / (1 + 621 / 768), abs=1e-9)
    assert default_mfu(_gpt(768, 12), A100) == pytest.approx(0.401, abs=0.001)
    assert default_mfu(_gpt(2048, 22), A100) == 0.51
    assert default_mfu(_spec(), A100) == 0.51
    # Hopper: 0.535 / (1 + 838 / 2048) = 0.380; 16-bit pretraining follows the ceiling at every width
    # (pipe26), 4,096 wide 0.444 and Llama 3 405B's 16,384 0.509
    assert default_mfu(_gpt(2048, 24), H100) == pytest.approx(0.535 / (1 + 838 / 2048), abs=1e-9)
    assert default_mfu(_spec(), H100) == pytest.approx(0.535 / (1 + 838 / 4096), abs=1e-9)
    # below the card default the ceiling does not bind (a 4090's 0.35 at d 768: ceiling 0.40), nor in fp8
    assert default_mfu(_gpt(768, 12), L4090) == 0.35
    narrow_fp8 = _gpt(768, 12, precision="fp8")
    assert width_ceiling(narrow_fp8, H100) == 1.0
    assert default_mfu(narrow_fp8, H100) == pytest.approx(0.42 / time_factor(narrow_fp8), abs=1e-9)
    # a stated MFU is the user's: no ceiling
    assert estimate_mfu(_gpt(768, 12, mfu=0.6), A100) == 0.6


@settings(max_examples=60, deadline=None)
@given(narrow=st.integers(64, 16384), wide=st.integers(64, 16384))
def test_the_ceiling_never_falls_with_width_and_stays_under_its_peak(narrow, wide):
    narrow, wide = sorted((narrow - narrow % 64, wide - wide % 64))
    narrow, wide = max(narrow, 64), max(wide, 64)
    for gpu in (A100, H100):
        low, high = width_ceiling(_gpt(narrow, 2), gpu), width_ceiling(_gpt(wide, 2), gpu)
        assert 0 < low <= high < 0.73
        assert default_mfu(_gpt(narrow, 2), gpu) <= default_mfu(_gpt(wide, 2), gpu)


def test_an_estimate_the_width_ceiling_sets_says_so_and_others_do_not():
    narrow = _gpt(768, 12)
    text = width_text(narrow, A100)
    assert text.startswith("speed: a 768-wide model trains at no more than 40% of the a100-sxm4-80gb's")
    assert "MPT" in text
    assert speed_ratio(narrow, A100) == (None, text)  # the size report's speed_basis, the ranking's reason
    assert width_text(_spec(), A100) == ""  # 4,096 wide: the LLaMA-1 fit applies
    assert width_text(_gpt(768, 12, mfu=0.3), A100) == ""  # a stated MFU
    assert width_text(_gpt(768, 12), L4090) == ""  # the card default (0.35) is under the ceiling
    # a measured efficiency keeps its sentence first; the ceiling does not bind on a 7B LoRA
    assert speed_ratio(_spec("lora"), A100)[1].startswith("speed from: a100-sxm4-80gb lora in bf16 at 47%")


def test_16_bit_pretraining_runs_at_the_ceiling_only_on_nvswitch_hopper_and_later():
    # pipe26: Llama-2-7B (d 4,096) pretraining at 0.535 / (1 + 838 / 4,096) = 0.444 on NVSwitch Hopper and
    # Blackwell datacenter parts; a PCIe H100 keeps the workstation 0.35, a GeForce Blackwell its 0.35 too
    ceiling = 0.535 / (1 + 838 / 4096)
    for slug in ("h100-sxm5-80gb", "h200-sxm-141gb", "gh200-96gb", "b200"):
        assert default_mfu(_spec(), gpu_by_slug(slug)) == pytest.approx(ceiling, abs=1e-9), slug
        assert default_mfu(_spec(precision="fp16"), gpu_by_slug(slug)) == pytest.approx(ceiling, abs=1e-9)
    assert default_mfu(_spec(), gpu_by_slug("h100-pcie-80gb")) == 0.35
    assert default_mfu(_spec(), gpu_by_slug("rtx-5090")) == 0.35
    # Llama 3 405B's d 16,384: 0.509, the compute under Meta's 400 TFLOP/s once the engine adds the bubble
    assert default_mfu(_spec(model={"preset": "llama-3.1-405b"}), H100) == pytest.approx(
        0.535 / (1 + 838 / 16384), abs=1e-9
    )
    assert default_mfu(_spec(model={"preset": "llama-3.1-405b"}), H100) == pytest.approx(0.509, abs=0.001)
