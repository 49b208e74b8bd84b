"""Measured speeds scaled across GPU counts, and fitted calibration factors, in the ranking (issue 10 §2, §4)."""

import pandas as pd
import pytest

from procurement.ranking import RankingOptions, rank_workload
from procurement.ranking.measured import nearest_measured_count, scaled_hours
from procurement.sizing import load_bundled_gpus, parse_workload_spec
from procurement.sizing.mfu import CalibrationFactor
from tests.procurement.test_ranking import NOW, OFFERS
from tests.reference.ranking_loop import rank_workload_loop

GPUS = {gpu.slug: gpu for gpu in load_bundled_gpus()}
QLORA_8B = parse_workload_spec(
    {"name": "q", "task": "qlora", "model": {"preset": "llama-3.1-8b"}, "training_tokens": 2e8}
)
P5 = OFFERS[(OFFERS.instance_type == "p5.48xlarge")].reset_index(drop=True)
H100_PCIE = OFFERS[(OFFERS.instance_type == "gpu_1x_h100_pcie")].reset_index(drop=True)


def _rows(offers: pd.DataFrame, spec=QLORA_8B, **options):
    return rank_workload(spec, offers, GPUS, RankingOptions(**({"top": None} | options)), now=NOW).results


def test_the_nearest_measured_count_on_a_log_scale():
    measured = {("h100", 8): 1.0, ("h100", 1): 1.0, ("a100", 4): 1.0}
    assert nearest_measured_count(measured, "h100", 8) == 8  # its own count first
    assert nearest_measured_count(measured, "h100", 16) == 8  # |ln 2| < |ln 16|
    assert nearest_measured_count(measured, "h100", 2) == 1  # |ln 2| < |ln 1/4|
    assert nearest_measured_count(measured, "h100", 3) == 8  # |ln 3/8| = 0.98 < ln 3 = 1.10
    assert nearest_measured_count({("h100", 1): 1.0, ("h100", 4): 1.0}, "h100", 2) == 1  # a tie: the smaller
    assert nearest_measured_count(measured, "l4", 1) is None


def test_measured_hours_scale_by_the_ratio_of_modelled_hours():
    # 10 h measured at k GPUs; the model says 7 h at k and 4 h at n: 10 x 4 / 7 = 5.714 h at n
    assert float(scaled_hours(10.0, 4.0, 7.0, False)) == pytest.approx(40 / 7)
    assert float(scaled_hours(10.0, 4.0, 7.0, True)) == 10.0  # at its own count the run is used as measured


def test_a_one_gpu_run_prices_an_eight_gpu_data_parallel_plan():
    # QLoRA 8B: the data-parallel all-reduce moves only the adapters' gradients, which hide under the backward
    # pass, so the modelled hours at 8 GPUs are exactly 1/8 of those at 1 (the same step per GPU, 8x the
    # tokens). 2e8 tokens at a measured 4,096 tokens/s on one H100 = 13.5634 h; at 8 GPUs 1.6954 h.
    options = {
        "measured_tokens_per_second": {("h100-sxm5-80gb", 1): 4096.0},
        "measured_dates": {("h100-sxm5-80gb", 1): "2026-11-20"},
        "pricing_models": ("on_demand",),
    }
    rows = _rows(P5, **options)
    ddp = next(r for r in rows if r["gpus"] == 8 and r["plan"]["name"] == "data_parallel")
    assert ddp["basis"] == "measured"
    assert ddp["hours"] == pytest.approx(2e8 / 4096 / 3600 / 8, abs=1e-3)  # 1.695
    assert any("at 1 GPUs, scaled to 8 with the communication model" in r for r in ddp["reasons"])
    assert any("measured on 2026-11-20" in r for r in ddp["reasons"])
    # A tensor-parallel group of 8 does not fit in the 1-GPU run: that plan stays an estimate.
    tp = [r for r in rows if r["plan"]["name"] == "tensor_parallel"]
    assert tp and all(r["basis"] == "estimated" for r in tp)
    # The straightforward loop scales the same way.
    loop = rank_workload_loop(QLORA_8B, P5, GPUS, RankingOptions(top=None, **options))
    loop_hours = {(instances, plan): hours for _total, hours, _row, instances, plan in loop}
    assert loop_hours[(1, "data_parallel")] == pytest.approx(2e8 / 4096 / 3600 / 8, rel=1e-9)


def test_a_calibration_factor_moves_the_matching_gpu_and_method_only():
    # One H100 PCIe, no collectives: hours are inversely proportional to the MFU, so a fitted 1.25 gives
    # 1 / 1.25 = 0.8 of the uncalibrated hours; a memory factor of 1.10 scales the peak per GPU by 1.10.
    plain = _rows(H100_PCIE)[0]
    factor = CalibrationFactor(samples=3, throughput_factor=1.25, memory_factor=1.10)
    calibrated = _rows(H100_PCIE, calibration={("h100-pcie-80gb", "qlora"): factor})[0]
    assert calibrated["hours"] == pytest.approx(plain["hours"] * 0.8, abs=1e-3)
    assert calibrated["memory_per_gpu_gib"] == pytest.approx(plain["memory_per_gpu_gib"] * 1.10, abs=0.01)
    assert any(
        "speed calibrated from 3 runs (factor 1.25); memory calibrated from 3 runs (factor 1.10)" in reason
        for reason in calibrated["reasons"]
    )
    other_method = _rows(H100_PCIE, calibration={("h100-pcie-80gb", "lora"): factor})[0]
    assert other_method["hours"] == plain["hours"]
    assert not any("calibrated" in reason for reason in plain["reasons"])
    loop = rank_workload_loop(
        QLORA_8B, H100_PCIE, GPUS, RankingOptions(top=None, calibration={("h100-pcie-80gb", "qlora"): factor})
    )
    assert loop[0][1] == pytest.approx(calibrated["hours"], abs=1e-3)
