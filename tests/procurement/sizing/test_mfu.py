"""The MFU an estimate uses: the A100 pretraining figure, the card defaults, and fitted calibration."""

import pytest

from procurement.sizing import gpu_by_slug, parse_workload_spec
from procurement.sizing.mfu import CalibrationFactor, default_mfu, estimate_mfu, memory_factor

A100, H100, L4090 = gpu_by_slug("a100-sxm4-80gb"), gpu_by_slug("h100-sxm5-80gb"), gpu_by_slug("rtx-4090")


def _spec(task="pretrain", **extra):
    return parse_workload_spec(
        {"task": task, "model": {"preset": "llama-2-7b"}, "training_tokens": 1e9} | extra
    )


def test_dense_pretraining_on_a100_uses_the_llama1_median_mfu():
    assert default_mfu(_spec(), A100) == 0.47  # median of 43.4, 51.4, 45.8, 47.7% (LLaMA-1 Table 15)
    assert default_mfu(_spec(), H100) == 0.40  # Hopper keeps the datacenter default (Llama 3: 38-43%)
    assert default_mfu(_spec("full_finetune"), A100) == 0.40  # fine-tunes keep the card default
    assert default_mfu(_spec(), L4090) == 0.35


def test_a_fitted_factor_multiplies_the_default_and_a_stated_mfu_wins():
    calibration = {
        ("a100-sxm4-80gb", "lora"): CalibrationFactor(samples=4, throughput_factor=1.25, memory_factor=0.9)
    }
    lora = _spec("lora")
    assert estimate_mfu(lora, A100, calibration) == pytest.approx(0.40 * 1.25)  # 0.5
    assert estimate_mfu(lora, H100, calibration) == 0.40  # another GPU model: no factor
    assert estimate_mfu(_spec("full_finetune"), A100, calibration) == 0.40  # another method: no factor
    assert estimate_mfu(_spec("lora", mfu=0.3), A100, calibration) == 0.3
    assert memory_factor(lora, A100, calibration) == 0.9
    assert memory_factor(lora, A100, None) == 1.0
    assert calibration[("a100-sxm4-80gb", "lora")].text() == "calibrated from 4 runs (factor 1.25)"
    assert calibration[("a100-sxm4-80gb", "lora")].text("memory") == "calibrated from 4 runs (factor 0.90)"
