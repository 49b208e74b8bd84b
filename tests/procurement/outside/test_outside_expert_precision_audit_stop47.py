"""Issue 26, outside audit aud47x of branch moe47 (inference.expert_precision): published MoE serving rows no test
had, each run as a user states it, with the field left at its default and, as a guard, stated 16-bit.

Sizes go through `size_spec_document` (what `manage.py size` runs, calibration off) via the x26b `candidate`
helper; specs from procurement.sizing.validation.trtllm_spec. Tolerance: LLM speed 15%, memory 10%. Neither table
states a concurrency (in-flight batching, trtllm-bench fills the KV cache), so, as x26g did for [TRT10], each row is
run at the largest power-of-two stream count (256 .. 4,096) the product keeps runnable (verdict not does_not_fit).

Sources:
  [TRT17]  NVIDIA/TensorRT-LLM @258c7540c03517def55d9a5aadfa9288af474e1b docs/source/performance/perf-overview.md
           (stored id 859048245): "All data in the table below was generated using version 0.17", engines from
           `trtllm-bench --model $model_name build --tp_size $tp_size --pp_size $pp_size --quantization FP8`, run
           with `trtllm-bench ... throughput`, kv_cache_free_gpu_mem_fraction 0.95 "in majority of cases"; the
           page's example output shows "Token Throughput (tokens/sec)" = requests/s x output length (182.86 x 128 =
           23,406), i.e. output tokens/s of the whole TP group. Mixtral 8x7B rows used: TP 2 "1000, 1000 |
           19151.19 | 15770.89" (H200 | H100), TP 2 "2048, 128 | 3383.16 | 3333.68", TP 1 "1000, 1000 | 10371.36".
  [REL]    NVIDIA/TensorRT-LLM docs/source/release-notes.md (stored id 683127886), Release 0.10.0: "Added FP8
           quantization support for Mixtral." So [TRT17]'s FP8 Mixtral engines hold FP8 experts: the case a user
           serving Mixtral FP8 on TensorRT-LLM today states (expert_precision left at `model`).
  [TRT10]  NVIDIA/TensorRT-LLM @00f37686aa854010d68bcbd0f4ab000221541ca6 docs/source/performance/perf-overview.md
           (v1.0, PyTorch backend, ModelOpt checkpoint nvidia/Qwen3-235B-A22B-FP8): Qwen3-235B-A22B "1000/1000 |
           ... | 23,789 | 14,898" (H200 TP8 FP8 | H100 TP8 FP8). The MoE recipe adds `--ep $ep_size` and
           `enable_attention_dp: true`; the row does not state the EP degree: sized as TP 8 (the product's MoE
           path). Experts FP8 in that checkpoint: my reading of ModelOpt's FP8 recipe, not quoted.
  [V090]   NVIDIA/TensorRT-LLM @250d9c293d5edbc2a45c20775b3150b1eb68b364 (v0.9.0), opened for the audit:
           tensorrt_llm/layers/moe.py `self.weight_dtype = dtype` (int8 only `if quant_mode.is_weight_only()`),
           mixtureOfExpertsPlugin.cpp init() runners half/half, float/float, half/int8|int4, bf16/bf16,
           bf16/int8|int4, else TLLM_THROW; plugin.py PluginConfig `moe_plugin: str = "float16"` and
           add_plugin_argument makes it trtllm-build's --moe_plugin default; examples/mixtral/README.md: no FP8
           recipe, OOTB "comes at a significant performance cost".
"""

from __future__ import annotations

import copy

import pytest

from procurement.sizing.validation import trtllm_spec
from tests.procurement.outside.test_outside_recommendations_x26b import candidate
from tests.procurement.sizing.test_moe_published import QWEN3_235B

H100 = "h100-sxm5-80gb"
H200 = "h200-sxm-141gb"
FEASIBLE = {"fits", "tight", "oversized"}
STEPS = (256, 512, 1024, 2048, 4096)
# Mixtral 8x7B routed experts: 32 layers x 8 experts x 3 x 4,096 x 14,336
MIXTRAL_EXPERT_PARAMS = 32 * 8 * 3 * 4096 * 14336


def stated(
    preset: str | None, tp: int, prompt: int, output: int, concurrency: int, experts: str | None
) -> dict:
    spec = trtllm_spec(preset or "mixtral-8x7b", "fp8", tp, concurrency, prompt, output)
    if preset is None:
        spec["model"] = copy.deepcopy(QWEN3_235B)
    if experts:
        spec["inference"]["expert_precision"] = experts
    return spec


def largest_runnable(preset, gpu, tp, prompt, output, experts=None) -> tuple[int, dict]:
    best = None
    for concurrency in STEPS:
        row = candidate(stated(preset, tp, prompt, output, concurrency, experts), gpu)
        if row["verdict"] in FEASIBLE:
            best = (concurrency, row)
    assert best is not None
    return best


def total(row: dict) -> float:
    return row["throughput"]["decode_tokens_per_second_total"]


# --- 1. TensorRT-LLM v0.17, FP8 Mixtral 8x7B (FP8 experts, [REL]) at the default expert_precision -----------------
# ours (stream count): H100 TP2 1000/1000 16,690.0 (512, +5.8%); H200 TP2 1000/1000 21,301.9 (1,024, +11.2%);
# H100 TP2 2048/128 3,279.2 (512, -1.6%); H200 TP1 1000/1000 11,687.3 (512, +12.7%).
V017_ROWS = [
    pytest.param(H100, 2, 1000, 1000, 15770.89, id="h100-tp2-1000-1000"),
    pytest.param(H200, 2, 1000, 1000, 19151.19, id="h200-tp2-1000-1000"),
    pytest.param(H100, 2, 2048, 128, 3333.68, id="h100-tp2-2048-128"),
    pytest.param(H200, 1, 1000, 1000, 10371.36, id="h200-tp1-1000-1000"),
]


@pytest.mark.django_db
@pytest.mark.parametrize(("gpu", "tp", "prompt", "output", "published"), V017_ROWS)
def test_trtllm_v017_fp8_mixtral_at_the_default_experts_within_15_percent(
    bundled_catalog, gpu, tp, prompt, output, published
):
    _, row = largest_runnable("mixtral-8x7b", gpu, tp, prompt, output)
    assert total(row) == pytest.approx(published, rel=0.15)


# Guard on moe47's field: stating 16-bit experts for today's engines (FP8 Mixtral since v0.10.0, [REL]) takes every
# [TRT17] row out of tolerance: H100 TP2 1000/1000 11,478.7 (512, -27.2%); H200 TP2 1000/1000 15,677.1 (1,024,
# -18.1%); H100 TP2 2048/128 2,003.4 (256: 512 no longer fits, -39.9%); H200 TP1 1000/1000 5,525.8 (256, -46.7%).
# The field is right only for v0.9.0's engines; docs/workload-spec.md and the form must say so (fix list).
@pytest.mark.django_db
@pytest.mark.parametrize(("gpu", "tp", "prompt", "output", "published"), V017_ROWS)
def test_stating_16bit_experts_for_v017_engines_misses_every_row(
    bundled_catalog, gpu, tp, prompt, output, published
):
    _, row = largest_runnable("mixtral-8x7b", gpu, tp, prompt, output, experts="bf16")
    assert total(row) / published - 1 < -0.15


# --- 2. TensorRT-LLM v1.0, Qwen3-235B-A22B FP8 at 1000/1000 ([TRT10]) ---------------------------------------------
@pytest.mark.django_db
def test_trtllm_v1_qwen3_235b_fp8_h200_tp8_within_15_percent(bundled_catalog):
    """Published 23,789; ours 27,184.7 at 2,048 streams ('tight'), +14.3% (at the edge; 1,024 streams 23,199.0,
    -2.5%). Stated with 16-bit experts: 18,516.3 at 1,024 streams, -22.2%."""
    _, row = largest_runnable(None, H200, 8, 1000, 1000)
    assert total(row) == pytest.approx(23789, rel=0.15)


@pytest.mark.django_db
@pytest.mark.xfail(
    strict=True,
    reason=(
        "UNEXPLAINED (aud47x): [TRT10] Qwen3-235B-A22B H100 TP8 FP8 1000/1000 published 14,898; ours 20,359.3 at "
        "1,024 streams ('tight', the largest runnable), +36.7% (512 streams: 14,539.7, -2.4%). The same row on the "
        "H200 passes (+14.3%): published H200 / H100 = 1.60 against ours 1.34 at each card's largest runnable "
        "count. Candidates not sized: the run's stream count (trtllm-bench's KV budget at 0.95 of free memory, not "
        "published), the unstated EP degree and attention DP of the MoE recipe (each GPU then holds its own "
        "requests' whole KV cache, which the product's TP 8 does not model). Not expert precision: ModelOpt's FP8 "
        "checkpoint, and stating 16-bit experts gives 6,327.8 at 256 streams (the largest runnable then), -57.5%. "
        "moe48, ruled out from trtllm-bench's code (test_outside_moe_serving_stop48.py, tensorrt_llm/bench/build/"
        "tuning.py calc_engine_setting @04cba882): the benchmark's batch cap with the FP8 KV cache is 1,280 on the "
        "H100 and 2,560 on the H200 (1,024-1,280 / 2,304-2,560 over NVML totals and 0.90-0.95), not below the "
        "product's counts; a 16-bit KV cache (cap 640, 512 runnable) lands this row (-12.2%) and the H200's (-13.3%, "
        "card ratio 1.58 against 1.60) but reads the same table's H100 2,000-4,096-token-output rows 42-53% slow; "
        "attention DP keeps the 4 KV heads unreplicated, twice the requests in the same room: faster, not slower. "
        "Lead: the row lands only if the run held at most about 700 requests (640: +10.2%, 768: +20.6%), about 15 GB "
        "a GPU less KV room than the product's memory model keeps; no source states the run's in-flight count. "
        "Wider: at a KV-bound count all 17 of the table's Qwen3-235B rows read fast or inside, 8-15 above +15% "
        "(the H200 1000/1000 row passes by the power-of-two count): the product's step for this MoE at 1,000-2,400 "
        "streams is the best lead (test_at_the_kv_bound_stream_count_the_whole_table_reads_fast)."
    ),
)
def test_trtllm_v1_qwen3_235b_fp8_h100_tp8_within_15_percent(bundled_catalog):
    _, row = largest_runnable(None, H100, 8, 1000, 1000)
    assert total(row) == pytest.approx(14898, rel=0.15)


# --- 3. Hand checks of the field on one spec (Mixtral 8x7B FP8, H100 TP 2, one stream, 128/128) --------------------
@pytest.mark.django_db
def test_16bit_experts_memory_and_read_bound_by_hand(bundled_catalog):
    """Memory: 16-bit experts add one byte a routed expert weight, 45.097e9 / 2 GPUs = 21.000 GiB a GPU (ours 21.748 ->
    42.748 GiB). Read bound (decode_tokens_per_second_upper_bound: both GPUs' datasheet 3,350 GB/s over one step's
    bytes): one stream touches 2 of 8 experts, 11.27e9 routed weights, plus 1.35e9 other linears at 1 byte and the
    LM head 0.131e9 at 2: FP8 12.88e9 B, 16-bit experts 24.16e9 B, 2 x 3.35e12 / 24.16e9 = 277.3 tok/s (ours 278.8,
    the KV cache and norms aside); the ratio 1.876 by hand against ours 525.0 / 278.8 = 1.883."""
    fp8 = candidate(stated("mixtral-8x7b", 2, 128, 128, 1, None), H100)
    b16 = candidate(stated("mixtral-8x7b", 2, 128, 128, 1, "bf16"), H100)
    added_gib = b16["memory"]["weights_gib"] - fp8["memory"]["weights_gib"]
    assert added_gib == pytest.approx(MIXTRAL_EXPERT_PARAMS / 2 / 2**30, rel=0.01)
    touched = 32 * 2 * 3 * 4096 * 14336
    other, head = 1.35e9, 32000 * 4096
    by_hand_fp8 = touched + other + 2 * head
    by_hand_16 = 2 * touched + other + 2 * head
    upper_16 = b16["throughput"]["decode_tokens_per_second_upper_bound"]
    upper_8 = fp8["throughput"]["decode_tokens_per_second_upper_bound"]
    assert upper_16 == pytest.approx(2 * 3.35e12 / by_hand_16, rel=0.02)
    assert upper_8 / upper_16 == pytest.approx(by_hand_16 / by_hand_fp8, rel=0.02)


# --- 4. The field against the card's precision check -------------------------------------------------------------
# A bf16 model on a V100 is refused by name (verdict does_not_fit, blocked_by precision, "bf16 needs NVIDIA Ampere or
# later (Turing and Volta have no BF16): use fp16"). The same Mixtral at fp16 with expert_precision bf16 (GEMMs
# priced at the card's bf16 peak, which the V100 and T4 lack) passes the check: V100 x8 'oversized', T4 x8 'tight',
# with throughput None and no error or warning naming the field (fp16 experts give 334.0 / 110.6 tok/s).
# Was a strict xfail: fp16 Mixtral with expert_precision bf16 read 'oversized' on 8 V100s and 'tight' on 8 T4s, with
# throughput None and no error or warning naming the field. Now does_not_fit, blocked_by precision, error
# "inference.expert_precision bf16: bf16 needs NVIDIA Ampere or later (Turing and Volta have no BF16): use fp16
# experts", remedy "use inference.expert_precision fp16 (... has no BF16) or an Ampere-or-later card", because
# compatibility.check_gpu (fix47x) tests the stated experts' precision with the card's supports_precision as it does
# the model's (and the ranking's shapes.incompatibility likewise).
@pytest.mark.django_db
@pytest.mark.parametrize("gpu", ["v100-sxm2-32gb", "t4"])
def test_bf16_experts_on_a_card_without_bf16_are_refused_like_a_bf16_model(bundled_catalog, gpu):
    spec = {
        "task": "inference",
        "model": {"preset": "mixtral-8x7b"},
        "precision": "fp16",
        "parallelism": {"gpus": 8, "tensor_parallel": 8},
        "inference": {
            "concurrency": 8,
            "context_len": 2048,
            "output_tokens": 128,
            "expert_precision": "bf16",
        },
    }
    row = candidate(spec, gpu)
    assert row["verdict"] == "does_not_fit"
    assert row["blocked_by"] == "precision"
