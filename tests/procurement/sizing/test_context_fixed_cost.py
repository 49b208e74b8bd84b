"""A request's context phase pays a fixed cost a layer (serve43; assumptions.CONTEXT_LAYER_FIXED_SECONDS).

TRT9: NVIDIA/TensorRT-LLM docs/source/performance.md at release v0.9.0, "Low Latency" (batch 1, first token in
ms), timed by benchmarks/cpp/gptSessionBenchmark.cpp (@027cd518: host clock around generate() of one output
token). The constant is a measured per-layer cost of that engine's context phase; its mechanism is not
established (aud43s: kernel launches without CUDA graphs would hide under the L40S's 343 us of reads a layer,
and TensorRT-LLM's context step never runs under CUDA graphs), and it is applied to every engine since a spec
names none.

Fit rows: the one-GPU FP8 rows at a 128-token prompt, Llama 2 7B and Mistral 7B (32 layers) on the H200, H100 and
L40S. Held out: Llama 2 70B TP 4 at 128 tokens on the H200, H100 and A100
(tests/procurement/outside/test_outside_audit_stop42a.py), the L40S 70B TP 8 row below, and every 2,048-token row
(tests/procurement/sizing/test_serving_published.py), which the fixed cost must not move.
"""

import numpy as np
import pytest

from procurement.sizing import load_bundled_gpus, parse_workload_spec
from procurement.sizing import throughput as engine
from procurement.sizing.assumptions import CONTEXT_LAYER_FIXED_SECONDS, Assumption
from procurement.sizing.efficiency import serving_efficiency
from procurement.sizing.gpus import collective_bandwidth_gbps, tensor_parallel_over_nvlink
from procurement.sizing.validation import trtllm_spec
from tests.procurement.outside.test_outside_audit_stop43s import (
    CTXFIRST_GEMM_PATH,
    GPT_J_6B,
    TTFT47_FIGURE,
    TTFT49_WAVES,
    TTFT51_RECIPE,
)

GPUS = {gpu.slug: gpu for gpu in load_bundled_gpus()}
LAYERS_7B = 32

FIT_ROWS = {
    # (preset, gpu): published first token at 128 tokens, ms (TRT9, FP8, TP 1)
    ("llama-2-7b", "h200-sxm-141gb"): 5.7,
    ("mistral-7b", "h200-sxm-141gb"): 5.9,
    ("llama-2-7b", "h100-sxm5-80gb"): 6.3,
    ("mistral-7b", "h100-sxm5-80gb"): 6.5,
    ("llama-2-7b", "l40s"): 14.1,
    ("mistral-7b", "l40s"): 15.4,
}


def served(preset, precision, gpu_slug, tp, batch, prompt, output):
    """The engine's unrounded serving figures, as validate_sizing computes them."""
    spec = parse_workload_spec({"name": "s", **trtllm_spec(preset, precision, tp, batch, prompt, output)})
    gpu = GPUS[gpu_slug]
    rows = engine.inference_throughput(
        spec,
        bandwidth_gbps=gpu.memory_bandwidth_gbps,
        peak_tflops=gpu.dense_tflops(spec.precision),
        tensor_parallel_gbps=collective_bandwidth_gbps(gpu, tp),
        tensor_parallel_nvlink=tensor_parallel_over_nvlink(gpu, tp),
        generation=gpu.generation or 0,
        compute_efficiency=serving_efficiency(spec, gpu),
    )
    return {key: float(np.asarray(value)) for key, value in rows.items() if key != "decode_bound"}


def first_token_ms(preset, precision, gpu, tp, prompt):
    return served(preset, precision, gpu, tp, 1, prompt, 1)["time_to_first_token_seconds"] * 1000


@pytest.fixture
def without_fixed_cost(monkeypatch):
    zero = Assumption(CONTEXT_LAYER_FIXED_SECONDS.key, 0.0, CONTEXT_LAYER_FIXED_SECONDS.unit, "")
    monkeypatch.setattr(engine, "CONTEXT_LAYER_FIXED_SECONDS", zero)


def test_the_constant_is_the_fit_rows_mean_gap_a_layer(without_fixed_cost):
    # published minus the read-bound forward: 3.12-3.78 ms over 32 layers, 97-118 us a layer, mean 110.3 us
    gaps = [
        (published - first_token_ms(preset, "fp8", gpu, 1, 128)) / 1000 / LAYERS_7B
        for (preset, gpu), published in FIT_ROWS.items()
    ]
    assert min(gaps) == pytest.approx(97.5e-6, abs=1e-6)
    assert max(gaps) == pytest.approx(118.2e-6, abs=1e-6)
    assert float(np.mean(gaps)) == pytest.approx(CONTEXT_LAYER_FIXED_SECONDS.value, abs=1e-6)


@pytest.mark.parametrize("row", list(FIT_ROWS), ids=lambda row: f"{row[0]}-{row[1]}")
def test_fit_rows_land_within_5_percent(row):
    # before serve43: H200 -64.9% / -64.1%, H100 -55.0% / -53.3%, L40S -22.1% / -23.6%
    preset, gpu = row
    assert first_token_ms(preset, "fp8", gpu, 1, 128) == pytest.approx(FIT_ROWS[row], rel=0.05)


def test_held_out_l40s_70b_tp8_first_token_at_128_tokens():
    # TRT9 L40S FP8 Llama 2 70B TP 8, 128 tokens: 70.4 ms; 51.3 (-27.2%) before serve43, 60.1 (-14.6%) now
    assert first_token_ms("llama-2-70b", "fp8", "l40s", 8, 128) == pytest.approx(70.4, rel=0.15)


@pytest.mark.parametrize(
    ("preset", "precision", "gpu", "tp", "prompt"),
    [
        ("llama-2-7b", "fp8", "h100-sxm5-80gb", 1, 2048),
        ("llama-2-7b", "fp16", "a100-sxm4-80gb", 1, 2048),
        ("llama-2-70b", "fp8", "h200-sxm-141gb", 4, 2048),
        ("llama-2-70b", "fp16", "a100-sxm4-80gb", 8, 2048),
    ],
)
def test_compute_bound_first_tokens_and_decode_steps_do_not_move(
    preset, precision, gpu, tp, prompt, monkeypatch
):
    # the prefill efficiencies are fitted on the 2,048-token rows, which already carry the per-layer costs
    with_cost = served(preset, precision, gpu, tp, 1, prompt, 1)
    zero = Assumption(CONTEXT_LAYER_FIXED_SECONDS.key, 0.0, CONTEXT_LAYER_FIXED_SECONDS.unit, "")
    monkeypatch.setattr(engine, "CONTEXT_LAYER_FIXED_SECONDS", zero)
    without = served(preset, precision, gpu, tp, 1, prompt, 1)
    assert with_cost["time_to_first_token_seconds"] == without["time_to_first_token_seconds"]
    assert with_cost["decode_step_seconds"] == without["decode_step_seconds"]


# ttft47 (stop 47): what the published first token times, and why it is neither a decode step nor a per-call cost.
# - The figure is the host clock around one GptSession::generate() and a stream sync
#   (NVIDIA/TensorRT-LLM benchmarks/cpp/gptSessionBenchmark.cpp @027cd518e3b63809a5c5799187991e7f1164fb12; the same
#   in the later stored copy, read_file id 2618118190), run with "--input_output_len 128,1" (TRT9, "Reproducing
#   First Token Latency": "benchmark with a single output token").
# - With one new token generate() runs the context engine once, samples that token (decoderStepAsync) and blocks on
#   the finished flag; it runs no generation-phase engine: at 027cd518 (cpp/tensorrt_llm/runtime/gptSession.cpp,
#   generateSingleBatch) the step loop runs step 0 only (context) and prepares no next step ("if (step <
#   maxNewTokens - 1)"); in the later GptSession (stored copy, read_file id 2608598896) executeGenerationStep calls
#   shouldStopSync before executeContext and returns with the batch finished.
# - So no decode step belongs in the figure. Counting one would add the read-bound forward again: H200 / H100 / L40S
#   FP8 Llama 2 7B 5.50 / 6.35 / 14.50 ms -> 7.47 / 9.18 / 25.48 (+31% / +46% / +81% against 5.7 / 6.3 / 14.1).
# - The host part of generate() (decoder newBatch, sampling, finished check, finalize) is once per call. The rows
#   bound it: below, the gap over the read-bound forward of GPT-J (28 layers) and the two 7B rows (32 layers) on one
#   card gives a per-layer slope and a per-call intercept; the intercept is negative on the H200 and H100, so the
#   rows carry no per-call term to add, and the cost is per layer as CONTEXT_LAYER_FIXED_SECONDS has it.
GPTJ_FIRST_TOKEN = {"h200-sxm-141gb": 5.0, "h100-sxm5-80gb": 5.5}  # TRT9, FP8, TP 1, 128 tokens (28 layers)


@pytest.mark.parametrize("gpu", list(GPTJ_FIRST_TOKEN))
def test_the_fixed_cost_is_per_layer_not_per_call(gpu, without_fixed_cost):
    # H200: gaps 3.25 (GPT-J) / 3.75 ms (7B mean): 125 us a layer, intercept -0.25 ms.
    # H100: gaps 2.99 / 3.47 ms: 119 us a layer, intercept -0.34 ms.
    raw = trtllm_spec("llama-2-7b", "fp8", 1, 1, 128, 1)
    # GPT-J as TRT9's ckpt_config.json states it (28 layers, hidden 4,096, no gate), test_outside_audit_stop43s.py
    raw["model"] = GPT_J_6B
    gptj = parse_workload_spec({"name": "s", **raw})
    card = GPUS[gpu]
    gptj_ms = 1000 * float(
        np.asarray(
            engine.inference_throughput(
                gptj,
                bandwidth_gbps=card.memory_bandwidth_gbps,
                peak_tflops=card.dense_tflops(gptj.precision),
                tensor_parallel_gbps=collective_bandwidth_gbps(card, 1),
                tensor_parallel_nvlink=tensor_parallel_over_nvlink(card, 1),
                generation=card.generation or 0,
                compute_efficiency=serving_efficiency(gptj, card),
            )["time_to_first_token_seconds"]
        )
    )
    gptj_gap = GPTJ_FIRST_TOKEN[gpu] - gptj_ms
    gap_7b = float(
        np.mean(
            [
                FIT_ROWS[(preset, gpu)] - first_token_ms(preset, "fp8", gpu, 1, 128)
                for preset in ("llama-2-7b", "mistral-7b")
            ]
        )
    )
    per_layer_ms = (gap_7b - gptj_gap) / (LAYERS_7B - 28)
    per_call_ms = gptj_gap - 28 * per_layer_ms
    assert 0.09 < per_layer_ms < 0.14
    assert per_call_ms < 0.0


def test_the_throughput_does_not_take_it(monkeypatch):
    # a batch's prefill pays it once per batch (static batching): left out of tokens/s (under 0.1% of a step)
    row = ("llama-2-7b", "fp8", "h100-sxm5-80gb", 1, 120, 128, 2048)
    with_cost = served(*row)["decode_tokens_per_second_total"]
    zero = Assumption(CONTEXT_LAYER_FIXED_SECONDS.key, 0.0, CONTEXT_LAYER_FIXED_SECONDS.unit, "")
    monkeypatch.setattr(engine, "CONTEXT_LAYER_FIXED_SECONDS", zero)
    assert served(*row)["decode_tokens_per_second_total"] == with_cost


A100_SHORT_PROMPT_REASON = (
    (
        "UNEXPLAINED: [TRT9] A100 FP16, one GPU, 128-token prompt: Llama 2 7B 16.2 ms, Mistral 7B 16.3; product 12.8 (-21.0%)"
        " and 13.5 (-17.2%) with the 3.5 ms of per-layer fixed cost (9.3 / 10.0 without it, -42.6% / -38.8%). Over"
        " the read-bound forward the A100 needs 215 and 198 us a layer, and 235 on GPT-J 6B (14.8 ms, 28 layers;"
        " test_outside_audit_stop43s.py), where the FP8 cards' fit rows need 97-118: the fixed cost is not"
        " card-independent, and it is TensorRT-LLM v0.9.0's, mechanism not established. Not the ridge alone: its"
        " 16-bit forward sits at the GEMMs' ridge (weight reads 9.31 ms, FLOPs 8.03 ms at 0.68 of the peak), where"
        " max(reads, FLOPs) is most optimistic and reads + FLOPs (17.3 ms, +7%) would fit, but the H200's FP8 fit"
        " rows sit at the ridge too (Llama 2 7B reads 1.98, FLOPs 1.86 ms) and land with max(reads, FLOPs) + 110 us"
        " a layer (reads + FLOPs there: 3.8 ms, -33%, without the fixed cost; 7.4, +29%, with it); the same"
        " publisher's v0.5 table has the A100 GPT-J row 2.8 ms faster (12 ms). No published figure sizes the overlap"
        " near the ridge. UNEXPLAINED."
        " cls45d (stop 45) checked the release's engine recipe: the benchmark build.py sets the GEMM plugin only"
        " when the quantization is not FP8 (benchmarks/python/build.py @05316d33 'if args.quantization is None or"
        ' "fp8" not in args.quantization: gemm_plugin = dtype\'; the same line in the set_gemm_plugin form, stored'
        " ids 142410815 / 2730593151), so every A100 FP16 row ran its linears as cuBLAS plugin calls TensorRT"
        " cannot fuse with their neighbours, while the FP8 fit rows ran TensorRT's own FP8 GEMMs: a per-layer cost"
        " that differs by engine precision is what that recipe predicts, but the card is confounded with it (every"
        " FP16 row of the tables is an A100) and no source counts either engine's kernels. Sized, not landed: a"
        " 16-bit constant of 210 us a layer (fitted on the two v0.9.0 7B rows: -1.1% / +2.4%) holds out GPT-J 14.8"
        " at -4.6%, the 70B TP 4 45.6 at +3.5%, v0.5's 70B TP 4 47 at +0.4% and Falcon TP 8 61 at -2.6%, leaves"
        " v0.9.0's Falcon TP 8 76.5 at -22.4%, and breaks v0.5's passing A100 GPT-J 12 ms (-5.7% -> +17.6%): the"
        " same card, model and prompt 2.8 ms apart between releases, which no field states."
    )
    + TTFT47_FIGURE
    + TTFT49_WAVES
    + TTFT51_RECIPE
    + CTXFIRST_GEMM_PATH
)


@pytest.mark.xfail(strict=True, reason=A100_SHORT_PROMPT_REASON)
@pytest.mark.parametrize(("preset", "published"), [("llama-2-7b", 16.2), ("mistral-7b", 16.3)])
def test_a100_fp16_7b_first_token_at_128_tokens(preset, published):
    assert first_token_ms(preset, "fp16", "a100-sxm4-80gb", 1, 128) == pytest.approx(published, rel=0.15)
