"""int42: the joint fit of mfu_fp8_linears_hopper / _blackwell and moe_routed_bytes_fp8_share on fp826's ten rows,
re-run after moe42's FLOP count (the input embedding a lookup, the output layer never recomputed): the values in
assumptions.py are the least-squares optimum of the rows' log errors on a 0.0025 / 0.0025 / 0.01 grid (the Hopper
routed-copy cost held at moe42's 162.5 ns, fitted on two of these rows). Rows and sources: assumptions.py, the
comment above MFU_FP8_LINEARS; each row's spec is the test that judges it (named below)."""

from __future__ import annotations

import dataclasses
import math

import pytest

from procurement.sizing import mfu
from tests.procurement.outside import test_outside_recommendations_3 as r3
from tests.procurement.outside import test_outside_recommendations_x26b as x26b
from tests.procurement.outside import test_outside_recommendations_x26c as x26c
from tests.procurement.sizing import test_moe_published as moe


def _nemo(run: str) -> float:
    return r3.nemo_row(run)["throughput"]["training_tokens_per_second"] / r3.NEMO_PRETRAIN[run][0][1]


ROWS = [
    (lambda: _nemo("llama2_7b"), 16934),
    (lambda: _nemo("llama2_13b"), 8715),
    (lambda: _nemo("llama2_70b"), 1728),
    (lambda: _nemo("llama3_70b"), 1524),
    (lambda: x26b.tokens_per_gpu(x26b.candidate(x26b.LLAMA3_8B_B200, "b200")), 30624),
    (lambda: x26c.tokens_per_gpu(x26c.candidate(x26c.L405_B200, "b200")), 661),
    (lambda: moe._compute_tokens_per_gpu(moe.qwen3_235b_h100(2048)), 1575),
    (lambda: moe._compute_tokens_per_gpu(moe.qwen3_235b_h100(8192)), 1633),
    (lambda: moe.tokens_per_gpu(moe.QWEN3_235B_B200, moe.B200), 3269),
    (lambda: moe.tokens_per_gpu(moe.QWEN3_30B_GB200, moe.GB200), 23766),
]


@pytest.mark.django_db
@pytest.mark.xfail(
    strict=True,
    reason="moe45: no longer the grid optimum, by design. The tenth row (Qwen3-30B-A3B on 8 GB200, 23,766) moved off "
    "the H100 path (the GB200 is now the B200's step over NVIDIA's same-plan dense 1.025, measured_speed.csv) onto "
    "mfu_fp8_linears_blackwell, and moe_hybridep_fixed_share was refitted 0.27 -> 0.40 on its own two GB200 rows: rms "
    "of the ten at (0.42, 0.4275, 0.75) 4.71% (was 4.5%); the optimum is one step away, (0.4225, 0.425, 0.77) at "
    "4.67%, a flat minimum. Refitted there (and the share in turn to 0.36, the fp8 share to 0.78) it took two passing "
    "held-out Hopper FP8 cases out of 15%: DeepSeek-V3 FP8 on H100 (test_outside_recommendations_3, 1,543.2: -15.5%) "
    "and NeMo's Llama 3 70B FP8 LoRA (test_outside_recommendations_x26g, 2,520.6: +15.3%), for 0.04-0.11 points of "
    "rms: not landed. The rows' errors at the kept values: NeMo 7B +4.7%, 13B +7.2%, Llama 2 70B -8.6%, Llama 3 70B "
    "-4.3%, B200 8B +2.9%, 405B -3.7%, Qwen3-235B H100 as compute -0.5% / -3.1%, B200 +1.0%, Qwen3-30B GB200 +4.5%.",
)
def test_fp8_efficiencies_are_the_ten_rows_optimum(bundled_catalog, monkeypatch):
    fitted = (
        mfu.MFU_FP8_LINEARS.value,
        mfu.MFU_FP8_LINEARS_BLACKWELL.value,
        mfu.MOE_ROUTED_BYTES_FP8_SHARE.value,
    )
    assert fitted == (0.42, 0.4275, 0.75)  # moe43: (0.42, 0.43, 0.76) before the MoE cost constants' refit

    def loss(hopper: float, blackwell: float, share: float) -> float:
        for name, value in (
            ("MFU_FP8_LINEARS", hopper),
            ("MFU_FP8_LINEARS_BLACKWELL", blackwell),
            ("MOE_ROUTED_BYTES_FP8_SHARE", share),
        ):
            monkeypatch.setattr(mfu, name, dataclasses.replace(getattr(mfu, name), value=value))
        return sum(math.log(rate() / published) ** 2 for rate, published in ROWS)

    best = loss(*fitted)
    # rms 4.6% (4.8% at the fp826 values under the new count); moe43: 4.5% after the MoE cost constants' refit
    assert math.sqrt(best / len(ROWS)) == pytest.approx(0.045, abs=0.001)
    assert math.sqrt(loss(0.425, 0.44, 0.73) / len(ROWS)) == pytest.approx(0.048, abs=0.001)
    for index, step in ((0, 0.0025), (1, 0.0025), (2, 0.01)):
        for sign in (1, -1):
            moved = list(fitted)
            moved[index] += sign * step
            assert loss(*moved) > best, moved
