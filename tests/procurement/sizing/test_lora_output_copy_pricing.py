"""optstep (issue 26, aud49e fix list 4 and 5): lora.modules_to_save's time terms.

4. The output copy's weight-gradient GEMM (2 x V x d FLOPs a token; one V x d x tokens GEMM a micro-batch) runs at
   a large-GEMM rate, not at the whole step's MFU (mfu.output_copy_gemm_efficiency): the card's measured matmul
   rate where published (fix50o: stas00/ml-engineering @b9e29720 MAMF BF16 table, A100 SXM 271.2 / 312 = 0.869,
   H100 SXM 794.5 / 989 = 0.803; procurement/data/measured_matmul_flops.csv), else the width ceiling's e
   (assumptions.training_width_peak_ampere 0.726 / _hopper 0.535, fitted on MPT's sweeps, not on these rows).
5. Under ZeRO with fp32 masters the copies' optimizer step is priced as optimizer_step prices a ZeRO rank's step:
   23 accesses an element of the rank's shard (a client torch foreach AdamW; DeepSpeed's own FusedAdam, stated
   optimizer_impl deepspeed_fused, 12.5: fix50o), at the fp32 master's 4 B
   (optimizer_step.saved_module_seconds_per_step).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from procurement.sizing import optimizer_step, parse_workload_spec, throughput
from procurement.sizing.assumptions import ACHIEVED_BANDWIDTH, TRAINING_WIDTH_PEAK_AMPERE
from procurement.sizing.gpus import gpu_by_slug
from procurement.sizing.mfu import output_copy_gemm_efficiency
from tests.procurement.outside.test_outside_audit_stop43l import MODELS, tokens_per_second
from tests.procurement.outside.test_outside_recommendations import qwen_lora_spec

V, D = 151_936, 4_096  # Qwen-7B (test_outside_audit_stop43l.MODELS)
A100_BANDWIDTH = 2039e9  # A100-SXM4-80GB, bytes/s (as test_lora_modules_to_save.py)
EMB = {"modules_to_save": ["wte", "lm_head"]}


def _emb(size="7b", seq=8192, gpus=1) -> dict:
    data = qwen_lora_spec(MODELS[size], seq, gpus)
    data["lora"] = data["lora"] | EMB
    return data


def test_the_output_copy_gemm_runs_at_the_measured_matmul_rate_else_the_width_ceilings_e():
    """fix50o: stas00/ml-engineering @b9e29720 compute/accelerator/README.md, MAMF comparison table, BF16 rows
    "NVIDIA A100 SXM | 271.2 | 312 | 86.9%" and "NVIDIA H100 SXM | 794.5 | 989 | 80.3%" (was e 0.726 / 0.535);
    no row for the H200 or the L40S: the width ceiling's e, as before."""
    a100, h100 = gpu_by_slug("a100-sxm4-80gb"), gpu_by_slug("h100-sxm5-80gb")
    spec = parse_workload_spec(_emb())
    assert (
        output_copy_gemm_efficiency(spec, a100)
        == pytest.approx(271.2 / 312)
        == pytest.approx(0.869, abs=1e-3)
    )
    assert (
        output_copy_gemm_efficiency(spec, h100)
        == pytest.approx(794.5 / 989)
        == pytest.approx(0.803, abs=1e-3)
    )
    assert output_copy_gemm_efficiency(spec, gpu_by_slug("h200-sxm-141gb")) == 0.535
    assert output_copy_gemm_efficiency(spec, gpu_by_slug("l40s")) == TRAINING_WIDTH_PEAK_AMPERE.value == 0.726
    wte_only = _emb()
    wte_only["lora"] = wte_only["lora"] | {"modules_to_save": ["wte"]}
    assert math.isnan(output_copy_gemm_efficiency(parse_workload_spec(wte_only), a100))  # no GEMM of its own
    assert throughput.output_copy_gemm_flops_per_token(spec) == pytest.approx(2.0 * V * D)


def test_the_gemm_is_charged_at_mfu_over_e_of_its_flops_by_hand():
    """7B, 8 x 8,192 tokens a step, one A100 (312 TFLOPS), mfu 0.40: 2 x V x d x 65,536 = 8.157e13 FLOPs, 0.654 s at
    the MFU, 0.360 s at e 0.726: the step's compute drops 0.294 s (no offload: _step_overhead 1)."""
    spec = parse_workload_spec(_emb())
    rows = {
        key: throughput.training_throughput(
            spec,
            peak_tflops=312.0,
            gpu_counts=1,
            interconnect_gbps=None,
            mfu=0.40,
            output_gemm_efficiency=rate,
        )["compute_seconds"]
        for key, rate in (("mfu", None), ("e", 0.726))
    }
    flops = 2.0 * V * D * 8 * 8192
    assert flops == pytest.approx(8.157e13, rel=1e-4)
    expected = flops / 312e12 * (1 / 0.40 - 1 / 0.726)
    assert float(rows["mfu"] - rows["e"]) == pytest.approx(expected, rel=1e-9)
    assert expected == pytest.approx(0.294, abs=0.001)
    # a rate below the row's MFU never slows the GEMM down
    slower = throughput.training_throughput(
        spec, peak_tflops=312.0, gpu_counts=1, interconnect_gbps=None, mfu=0.80, output_gemm_efficiency=0.726
    )["compute_seconds"]
    same = throughput.training_throughput(
        spec, peak_tflops=312.0, gpu_counts=1, interconnect_gbps=None, mfu=0.80
    )
    assert float(slower) == pytest.approx(float(same["compute_seconds"]))


# [QWEN-EMB] QwenLM/Qwen README "Profiling of Memory and Speed" (one A100-SXM4-80G, batch 1 x 8 accumulation), the
# LoRA (emb) minus LoRA step deltas aud49e read (s/it, 0.1 s resolution, so +-0.1 s): 7B 8k +0.4, 14B 8k 36.3 - 36.0
# = +0.3, 14B 4k 17.2 - 17.0 = +0.2. The GEMM alone at the A100's full 312 TFLOPS takes 0.26 / 0.33 / 0.16 s on them, so the
# 14B rows' deltas sit at or under the physical floor of the work: the README's rounding, not a rate to fit.
# Ours (LoRA (emb) - LoRA step, s): the GEMM at the step's MFU -> at e (optstep) -> at the A100 SXM's measured
# matmul rate, 271.2 / 312 = 0.869 (fix50o; stas00/ml-engineering @b9e29720 MAMF BF16 table).
DELTAS = {
    ("7b", 8192): (0.640, 0.444, 0.384),
    ("14b", 8192): (0.782, 0.555, 0.481),
    ("14b", 4096): (0.444, 0.330, 0.293),
}


@pytest.mark.parametrize(("size", "seq"), list(DELTAS))
@pytest.mark.django_db
def test_the_copies_step_delta_on_the_long_qwen_rows(size, seq, bundled_catalog):
    emb = 8 * seq / tokens_per_second(_emb(size, seq))
    lora = 8 * seq / tokens_per_second(qwen_lora_spec(MODELS[size], seq, 1))
    assert emb - lora == pytest.approx(DELTAS[(size, seq)][2], abs=0.002)


def test_under_zero_the_copies_fp32_master_step_is_priced_per_rank():
    """Qwen-7B wte + lm_head, ZeRO over 2 GPUs, DeepSpeed bf16, fp32 masters (the README's multi-GPU LoRA recipe is
    ZeRO-2: QwenLM/Qwen@14e6e69f finetune/finetune_lora_ds.sh `--deepspeed finetune/ds_config_zero2.json`; fix50o,
    aud50o; qwen_lora_spec states zero_stage 3, the same per-rank share for this term), charged as a client torch
    foreach AdamW (optimizer_impl unstated):
    23 x 1,244,659,712 x 4 B / 2 ranks = 57.25 GB at 0.70 x 2,039 GB/s = 40.1 ms a rank (was 0). On zero_stage 0 the
    copies' own 2 B: (20 + 3) x 2 x V x d x 2 B = 57.25 GB on the one GPU, the same 40.1 ms. The recipe's config
    states optimizer AdamW (ds_config_zero2.json @af22d5e0), DeepSpeed's FusedAdam: deepspeed_fused, 12.5 accesses,
    21.8 ms (test_outside_optstep_audit_aud50o)."""
    spec = parse_workload_spec(_emb(gpus=2))
    copies = 2 * V * D
    got = optimizer_step.saved_module_seconds_per_step(spec, 0.5, A100_BANDWIDTH)
    expected = 23.0 * copies * 4.0 * 0.5 / (ACHIEVED_BANDWIDTH.value * A100_BANDWIDTH)
    assert float(got) == pytest.approx(expected, rel=1e-12)
    assert expected == pytest.approx(0.0401, abs=0.0001)
    # per plan: the same spec's arrays over ZeRO 0 (one rank, 2 B copies) and ZeRO 3 (half the fp32 masters)
    rows = optimizer_step.saved_module_seconds_per_step(
        spec, np.array([1.0, 0.5]), A100_BANDWIDTH, np.array([0, 3])
    )
    assert rows == pytest.approx([23.0 * copies * 2.0 / (0.70 * A100_BANDWIDTH), expected], rel=1e-12)
    # pure 16-bit under ZeRO: the run's own term (seconds_per_step) already steps the copies with the model's states
    pure = _emb(gpus=2) | {"master_weights_fp32": False}
    assert (
        float(optimizer_step.saved_module_seconds_per_step(parse_workload_spec(pure), 0.5, A100_BANDWIDTH))
        == 0.0
    )
