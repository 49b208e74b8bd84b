"""Issue 26, lora42: should the A100 80GB bf16 LoRA efficiency take a width form e / (1 + k / d_model)?

The row (procurement/data/measured_efficiency.csv, 0.47 since moe42) is one figure, the median of Qwen-7B's four
steps. Published steps imply it rises with width on one stack (QwenLM/Qwen README @03cd81f5 "Profiling of Memory
and Speed", one A100-SXM4-80G, HF PEFT, all linear layers, checkpointing, batch 1 x 8 accumulation). The width form
is mfu.width_ceiling's, fitted on llm-foundry's A100 sweep (assumptions.training_width_k_ampere, 621).

Fit rows (only): Qwen-7B (d 4,096) and Qwen-14B (d 5,120) at 1k / 2k / 4k / 8k tokens. Held out (never fitted):
Qwen-72B (d 8,192, ZeRO-3 on 4 A100s) at 4k and 8k, and the MLPerf reference Llama 2 70B LoRA on 8 A100s
(mlcommons/training llama2_70b_lora convergence_example.txt: 440 steps at 19.65 s, 2.40 h).

Finding (not taken into the engine): with the existing k the one free e is 0.557 (log least squares), 0.484 /
0.497 / 0.518 at d 4,096 / 5,120 / 8,192. The width term adds 2.7% from 7B to 14B where the fit rows rise 14%,
and reaches 0.518 at d 8,192 where the held-out runs imply 0.61 (MLPerf) and 0.57-0.61 (Qwen-72B 4k-8k). MLPerf
(+17%) and Qwen-72B 4k (-8.7%) come inside, mostly through the 14B rows raising the level; Qwen-72B 8k stays out
(-15.6%), 1k moves +21% -> +34%, and the 256-token out-of-sample point of the 72B fixed-cost line
(test_qwen72b_steps_are_a_fixed_cost_plus_scaled_compute, bar 7%) goes +4.3% -> +7.4%. A free k fits the eight
steps at k 6,540 with e 1.19, above the dense peak, and takes Qwen-72B 2k (passing, -6.9%) to +31%.
"""

from __future__ import annotations

import copy
import math
from dataclasses import replace

import pytest

from procurement.api.sizing import size_spec_document
from procurement.sizing import efficiency
from procurement.sizing.assumptions import TRAINING_WIDTH_K_AMPERE
from tests.procurement.outside.test_outside_recommendations import (
    CASES,
    QWEN_SECONDS_PER_STEP,
    QWEN_SHAPES,
    candidate,
    qwen_lora_spec,
)

A100 = "a100-sxm4-80gb"
KEY = (A100, "lora", "bf16")
# Qwen-7B: Llama-2-7B's shapes with Qwen's 151,936-token vocabulary (as the CSV row's fit)
QWEN_7B = {"preset": "llama-2-7b", "vocab_size": 151936, "name": "Qwen-7B"}
MODELS = {
    "7b": (QWEN_7B, 4096, 1),
    "14b": (QWEN_SHAPES["14b"], 5120, 1),
    "72b": (QWEN_SHAPES["72b"], 8192, 4),
}
# Seconds an optimizer step, QwenLM/Qwen README @03cd81f5 (the 14B and 72B ones also in
# test_outside_recommendations.QWEN_SECONDS_PER_STEP)
STEPS = {
    ("7b", 1024): 2.8,
    ("7b", 2048): 5.2,
    ("7b", 4096): 10.1,
    ("7b", 8192): 21.3,
} | {key: QWEN_SECONDS_PER_STEP[key] for key in QWEN_SECONDS_PER_STEP if key[0] == "14b" or key[1] >= 4096}
FIT = [key for key in STEPS if key[0] != "72b"]


def qwen_tokens_per_second(size: str, seq: int) -> float:
    model, _, gpus = MODELS[size]
    spec = qwen_lora_spec(model, seq, gpus)
    row = candidate(size_spec_document(spec, [A100], calibrate=False), A100, gpus)
    return row["throughput"]["training_tokens_per_second"]


def mlperf_hours() -> float:
    report = size_spec_document(
        copy.deepcopy(CASES["mlperf_lora_llama2_70b_8xa100"]["spec"]), [A100], calibrate=False
    )
    return 440 * 65536 / candidate(report, A100, 8)["throughput"]["training_tokens_per_second"] / 3600


def published(size: str, seq: int) -> float:
    return 8 * MODELS[size][2] * seq / STEPS[(size, seq)]


@pytest.mark.django_db
def test_a_width_form_fitted_on_qwen_7b_and_14b_and_judged_on_the_wide_runs(bundled_catalog, monkeypatch):
    # lora42's finding, sized on the engine without lw44's width factor (efficiency.measured_width_factor: the same
    # k anchored at the row's own Qwen-7B width, the row kept at 0.47), which the engine now applies: switched off
    # here so the figures below stay lora42's comparison (one refitted e at every width against the single row).
    from procurement.sizing import mfu

    monkeypatch.setattr(mfu, "measured_width_factor", lambda spec, gpu: 1.0)
    row = efficiency.measured_efficiencies()[KEY]
    # one figure at every width (fixrev43: lora43's 0.56 and kernel term reverted)
    assert row.efficiency == 0.47
    # the efficiency at which the engine reproduces each fit row (a one-GPU step is compute: time ~ 1 / efficiency)
    implied = {key: row.efficiency * published(*key) / qwen_tokens_per_second(*key) for key in FIT}
    # lw44: on the spec as the README ran it (Qwen-1 targets c_attn, c_proj, w1, w2, dropout 0.05; qwen_lora_spec):
    # 0.406 / 0.448 / 0.484 / 0.501 / 0.488 / 0.522 / 0.536 / 0.546 (the all-linear Llama spec gave 0.407 / 0.449 /
    # 0.485 / 0.502 / 0.489 / 0.523 / 0.537 / 0.547: the adapters' FLOPs differ by ~0.1%); e 0.556 (0.557), 0.517 at
    # d 8,192 (0.518); the held-out figures below move by under 0.002.
    assert [round(implied[key], 3) for key in FIT] == pytest.approx(
        [0.406, 0.448, 0.484, 0.501, 0.488, 0.522, 0.536, 0.546], abs=0.002
    )
    k = TRAINING_WIDTH_K_AMPERE.value
    e = math.exp(sum(math.log(eff * (1 + k / MODELS[size][1])) for (size, _), eff in implied.items()) / 8)
    assert e == pytest.approx(0.556, abs=0.001)
    # the form's width term against the fit rows' own rise from 7B to 14B
    seven = math.exp(sum(math.log(v) for (size, _), v in implied.items() if size == "7b") / 4)
    fourteen = math.exp(sum(math.log(v) for (size, _), v in implied.items() if size == "14b") / 4)
    assert (1 + k / 4096) / (1 + k / 5120) == pytest.approx(1.027, abs=0.001)
    assert fourteen / seven == pytest.approx(1.14, abs=0.005)  # geometric means of the four steps
    assert e / (1 + k / 8192) == pytest.approx(0.517, abs=0.001)

    before = {
        "mlperf": mlperf_hours(),
        "72b-4096": qwen_tokens_per_second("72b", 4096),
        "72b-8192": qwen_tokens_per_second("72b", 8192),
    }
    table = dict(efficiency.measured_efficiencies())
    table[KEY] = replace(row, efficiency=e / (1 + k / 8192))  # every held-out case is 8,192 wide
    monkeypatch.setattr(efficiency, "measured_efficiencies", lambda: table)
    after = {
        "mlperf": mlperf_hours(),
        "72b-4096": qwen_tokens_per_second("72b", 4096),
        "72b-8192": qwen_tokens_per_second("72b", 8192),
    }
    hours = 440 * 19.65 / 3600  # 2.40 h
    assert before["mlperf"] / hours - 1 == pytest.approx(0.294, abs=0.005)  # +29%, outside 20%
    assert after["mlperf"] / hours - 1 == pytest.approx(0.174, abs=0.005)  # +17%, inside 20%
    assert before["72b-4096"] / published("72b", 4096) - 1 == pytest.approx(-0.171, abs=0.003)
    assert after["72b-4096"] / published("72b", 4096) - 1 == pytest.approx(-0.087, abs=0.003)
    assert before["72b-8192"] / published("72b", 8192) - 1 == pytest.approx(-0.234, abs=0.003)
    # still outside 15%
    assert after["72b-8192"] / published("72b", 8192) - 1 == pytest.approx(-0.156, abs=0.003)


def test_a_free_k_on_the_same_fit_rows_needs_an_efficiency_above_the_peak():
    # The eight implied efficiencies above; log least squares over e and k on a grid (k in steps of 20).
    implied = {
        4096: (0.406, 0.448, 0.484, 0.501),
        5120: (0.488, 0.522, 0.536, 0.546),
    }  # lw44: as the README ran

    def fit(k: float) -> tuple[float, float]:
        logs = [math.log(eff * (1 + k / d)) for d, effs in implied.items() for eff in effs]
        e = math.exp(sum(logs) / len(logs))
        return sum((math.log(e) - value) ** 2 for value in logs), e

    error, k = min((fit(k)[0], k) for k in range(0, 12000, 20))
    e = fit(k)[1]
    assert k == pytest.approx(6540, abs=200)
    assert e > 1.0  # above the dense peak: not a ceiling
    assert e / (1 + k / 8192) == pytest.approx(0.66, abs=0.01)  # takes Qwen-72B 2k from -6.9% to +31%
