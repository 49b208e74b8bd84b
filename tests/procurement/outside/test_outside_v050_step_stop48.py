"""serve48 (stop 48, TensorRT-LLM pre-XQA serving rows): what the v0.5.0 release's own benchmark and attention
kernel rule out for [TRT050]'s Llama 2 70B / Falcon 180B misses (test_outside_serving_audit_stop46.py), pinned from
the published rows; and four [TRT050] Llama 7B rows no test had. Tolerance: LLM speed 15% (the issue's). No engine
change: nothing here is a fitted term.

Sources (opened by serve48 with git in the octoml/TensorRT-LLM-release mirror, NVIDIA's release/0.5.0 commit
6b32b407b891bf8b5643de3ef4514613a1b8f0d2, setup.py version '0.5.0'):
  [TRT050]   docs/source/performance.md, "High Throughput", "Throughput (out tok/s)": H100 FP8 LLaMA 7B 64|1|128|128
             9,193; 64|1|2048|128 2,058. A100 FP16 LLaMA 7B 64|1|128|128 3,486; 32|1|2048|128 529 (the other rows
             as test_outside_serving_audit_stop46.py quotes them).
  [CFG050]   benchmarks/python/allowed_configs.py:287-304 llama_70b num_heads=64, num_kv_heads=8 (8 query heads a KV
             head); :503-523 falcon_180b num_heads=232, num_kv_heads=8 (29 a KV head).
  [MMHA050]  cpp/tensorrt_llm/kernels/decoderMaskedMultiheadAttention/: ...Launch.h:187-188 `dim3 grid{num_heads,
             batch_size, seq_len_tile}` (seq_len_tile 1 unless multi-block, :96-98); ...Template.h:1130-1133 `hi =
             blockIdx.x; qhead_per_kv = num_heads / num_kv_heads; hi_kv = hi / qhead_per_kv`; :1166-1168 `tlength =
             length_per_sample[bi] - 1` (else timestep) and :1509-1510 the key loop ends at tlength (the value loop
             likewise): each block reads its sequence's K/V up to the current step, not the cache's max length, so
             the contiguous (non-paged) cache adds no bytes. decoderMaskedMultiheadAttention.h:151 `bool
             multi_block_mode = false;` and tensorrt_llm/functional.py:3039 `multi_block_mode: bool = False`: the
             one-block-a-(head, sequence) grid.
  [BENCH050] benchmarks/cpp/gptSessionBenchmark.cpp:54-60 beam 1, topK 1; :72-80 every sequence `maxInputLength`
             long (inputLenghtsHost(batchSize, maxInputLength)), endId 50256 (outside Llama's 32,000-token vocab);
             :171 / :250 CUDA graphs only with --enable_cuda_graph; cpp/tensorrt_llm/runtime/gptSession.cpp:287-372
             the step loop, one host sync a step (shouldStopSync, :731-750).
  [KV050]    benchmarks/python/benchmark.py:179-183 `--fp8_kv_cache` ("By default, we use dtype for KV cache"):
             the table does not say which KV cache its H100 FP8 rows kept.
"""

from __future__ import annotations

import pytest

from procurement.sizing import parse_workload_spec, size_workload
from procurement.sizing.assumptions import ACHIEVED_BANDWIDTH_FRACTION
from procurement.sizing.clocks import sm_counts
from procurement.sizing.throughput import decode_read_bytes
from procurement.sizing.validation import trtllm_spec
from tests.procurement.outside.test_outside_serve44 import GPUS, per_gpu
from tests.procurement.outside.test_outside_xqa_stop45 import PER_QUERY_HEAD_RATE, _sized_and_implied

SPEED = 0.15
A100, H100 = "a100-sxm4-80gb", "h100-sxm5-80gb"


def _step_ms(tok_per_s_per_gpu: float, tp: int, batch: int) -> float:
    """The benchmark's mean time per output step (its prefill spread over the steps), from out tok/s/GPU."""
    return batch / (tok_per_s_per_gpu * tp) * 1e3


# --- Case 1: static batching, padding, the non-paged cache and multi-block mode are not the gap. [BENCH050] gives
# every sequence the same input length and no end token it can emit, so the run is the product's static batch
# (trtllm_spec: concurrency = batch, output_tokens = the row's); [MMHA050]'s loops stop at the sequence's own
# length. Without multi-block mode the grid is one block a (query head, sequence); at these rows it already holds
# 7.8x (70B, 16 heads a GPU x 64) to 21x (Falcon, 29 x 96) an H100's 132 SMs: no idle SMs for multi-block to fill.
def test_the_mmha_grid_fills_the_card_without_multi_block_mode():
    blocks = {
        "llama-2-70b tp4 b64": (64 // 4) * 64,
        "falcon-180b tp8 b96": (232 // 8) * 96,
        "falcon-180b tp8 b64": (232 // 8) * 64,
    }
    assert blocks == {"llama-2-70b tp4 b64": 1024, "falcon-180b tp8 b96": 2784, "falcon-180b tp8 b64": 1856}
    # aud48a: the SMs from the catalog the engine reads (gpu_clocks.csv), not typed in
    assert min(blocks.values()) / sm_counts()[H100] > 7.7
    assert min(blocks.values()) / sm_counts()[A100] > 9.4
    # [CFG050]'s groups: the masked MHA walks a KV head's cache once for each of its query heads.
    assert 64 // 8 == 8 and 232 // 8 == 29


# --- Case 2: the short rows' miss is a ratio of the step, not one added cost a step. [TRT050]'s two 70B TP 4 batch-64
# 128/128 rows ran the same benchmark loop ([BENCH050]: one host sync a step, no CUDA graphs) and the same engine
# graph on two cards; one added per-step cost would be one figure in ms. The published steps are 1.28x / 1.25x the
# product's, the gaps 4.21 ms (H100) and 10.33 ms (A100), 2.45x apart (the two systems' hosts are not stated, so a
# host floor, the larger of the GPU's work and the host's issue time, is not ruled out by this alone). The decode
# attention is not it either (192 tokens of context on average; fixa45's per-query-head term leaves +20.9% / +20.7%; aud48a corrected the A100 figure, 373.2 against 309.25).
def test_the_70b_128_128_miss_is_a_step_ratio_not_one_added_cost():
    gaps, ratios = [], []
    for precision, gpu, published in (("fp8", H100, 3317 / 4), ("fp16", A100, 1237 / 4)):
        ours = per_gpu("llama-2-70b", precision, gpu, 4, 64, 128, 128)
        pub_ms, our_ms = _step_ms(published, 4, 64), _step_ms(ours, 4, 64)
        gaps.append(round(pub_ms - our_ms, 2))
        ratios.append(round(pub_ms / our_ms, 3))
        sized, _ = _sized_and_implied("llama-2-70b", precision, gpu, 4, 64, 128, 128, published, 8)
        assert sized / published - 1 > SPEED  # the per-query-head reads do not land it
    assert gaps == pytest.approx([4.21, 10.33], abs=0.02)
    assert ratios == pytest.approx([1.279, 1.250], abs=0.003)
    assert gaps[1] / gaps[0] > 2.4


# On the A100 the residual is the tensor parallelism's: with the product's own prefill the published decode step is
# 449 us a layer for the 7B on one GPU (ours 430: the row passes, +3.3%) and 504 us for the 70B at TP 4 (ours 375),
# 10.33 ms a step over 160 all-reduces of 1 MB = 65 us a call beyond NCCL's model, the class of v0.9.0's A100 TP 8
# batch-512 row (test_serving_published.py: 15 ms a step, about 94 us a call). On the H100 it is not: the 7B at TP 1
# leaves 188 us a layer against ours 131 (+35.9%), the 70B at TP 4 202 against 150.
def _decode_us_per_layer(model, precision, gpu, tp, batch, published_total, layers):
    """(published, ours) decode step per layer, the published run's prefill taken as the product's (128/128)."""
    spec = parse_workload_spec({"name": "s", **trtllm_spec(model, precision, tp, batch, 128, 128)})
    row = next(c for c in size_workload(spec, [GPUS[gpu]])["candidates"] if c["gpus"] == tp)["throughput"]
    ours_total_s = batch * 128 / row["decode_tokens_per_second_total"]
    step_s = 1 / row["decode_tokens_per_second_per_stream"]
    prefill_s = ours_total_s - 128 * step_s
    published_step_s = (batch * 128 / published_total - prefill_s) / 128
    return round(published_step_s / layers * 1e6), round(step_s / layers * 1e6)


def test_the_a100_short_row_residual_is_the_tensor_parallel_one_the_h100_one_is_not():
    assert _decode_us_per_layer("llama-2-7b", "fp16", A100, 1, 64, 3486, 32) == pytest.approx(
        (449, 430), abs=2
    )
    assert _decode_us_per_layer("llama-2-70b", "fp16", A100, 4, 64, 1237, 80) == pytest.approx(
        (504, 375), abs=2
    )
    assert _decode_us_per_layer("llama-2-7b", "fp8", H100, 1, 64, 9193, 32) == pytest.approx(
        (188, 131), abs=2
    )
    assert _decode_us_per_layer("llama-2-70b", "fp8", H100, 4, 64, 3317, 80) == pytest.approx(
        (202, 150), abs=2
    )
    assert 10.33e-3 / 160 == pytest.approx(65e-6, abs=1e-6)


# --- Case 3: the KV cache's dtype ([KV050]: FP8 only with --fp8_kv_cache) is not one restatement of the H100 rows.
# Stated FP16, the MHA Llama 7B long rows that pass at FP8 fall to -38.4% / -43.2%, while the 70B long rows with the
# per-query-head term read -2.2% (128/2,048) and -18.7% (2,048/2,048): no single KV dtype holds the table.
def _per_gpu_kv(model, precision, gpu, tp, batch, prompt, output, kv):
    raw = trtllm_spec(model, precision, tp, batch, prompt, output)
    raw["inference"]["kv_cache_dtype"] = kv
    report = size_workload(parse_workload_spec({"name": "s", **raw}), [GPUS[gpu]])
    row = next(c for c in report["candidates"] if c["gpus"] == tp)["throughput"]
    return row["decode_tokens_per_second_total"] / tp


def _sized_kv(model, precision, gpu, tp, batch, prompt, output, kv, group):
    """_sized_and_implied's sized figure (fixa45's per-query-head bytes at 3.7 TB/s) with the KV dtype stated."""
    raw = trtllm_spec(model, precision, tp, batch, prompt, output)
    raw["inference"]["kv_cache_dtype"] = kv
    _, kv_bytes = decode_read_bytes(parse_workload_spec({"name": "s", **raw}), float(batch))
    step = batch / (_per_gpu_kv(model, precision, gpu, tp, batch, prompt, output, kv) * tp)
    once = batch * kv_bytes / (tp * GPUS[gpu].memory_bandwidth_gbps * 1e9 * ACHIEVED_BANDWIDTH_FRACTION)
    extra = max(0.0, batch * group * kv_bytes / tp / PER_QUERY_HEAD_RATE - once)
    return batch / (step + extra) / tp


def test_an_fp16_kv_cache_breaks_the_mha_controls():
    sized_70b = [
        round(_sized_kv("llama-2-70b", "fp8", H100, 4, 64, p, 2048, "fp16", 8) / pub - 1, 3)
        for p, pub in ((128, 2616 / 4), (2048, 1583 / 4))
    ]
    assert sized_70b == pytest.approx([-0.022, -0.187], abs=0.003)
    errs = [
        round(_per_gpu_kv("llama-2-7b", "fp8", H100, 1, b, p, 2048, "fp16") / pub - 1, 3)
        for b, p, pub in ((64, 128, 5367), (32, 2048, 2230))
    ]
    assert errs == pytest.approx([-0.384, -0.432], abs=0.003)
    assert all(abs(e) > SPEED for e in errs)


# --- Case 4: [TRT050]'s Llama 7B rows no test had (held out; the long-output ones are case 1 of
# test_outside_serving_audit_stop46.py). Three pass; the H100 FP8 128/128 row reads +35.9%, so the short rows'
# miss is not the 70B's tensor parallelism alone (A100 FP16 7B 128/128 +3.3%, 70B TP 4 +25.0%).
MHA_7B_SHORT = {
    ("llama-2-7b", "fp8", H100, 1, 64, 128, 128): (9193, 12493.5),
    ("llama-2-7b", "fp8", H100, 1, 64, 2048, 128): (2058, 1916.4),
    ("llama-2-7b", "fp16", A100, 1, 64, 128, 128): (3486, 3601.8),
    ("llama-2-7b", "fp16", A100, 1, 32, 2048, 128): (529, 475.7),
}
SHORT_7B_REASON = (
    "UNEXPLAINED (serve48): [TRT050] H100 FP8 Llama 7B, batch 64, 128/128: published 9,193; ours 12,493.5 (+35.9%). "
    "The published step is 6.96 ms against the product's 5.12; the same card's 2,048/128 row passes (-6.9%) and so do "
    "its long-output rows (+7.3%, +0.4%), and the A100 FP16 128/128 row passes (+3.3%). Ruled out: one added cost a "
    "step (case 2; a host floor is not), static batching or padding and the non-paged cache ([BENCH050], [MMHA050]); stated with an "
    "FP16 KV cache ([KV050]) the row reads +7.2% but the long rows -38.4% / -43.2% (case 3). Lead: the release's "
    "FP8 path at a short context (the 70B TP 4 128/128 rows miss by the same ratio, +27.9% / +25.0%). trtstep "
    "(stop 49): "
    "TensorRT-LLM PR #10018, PR #3625 and the overlap-scheduler docs size no per-step host time, and the batch "
    "manager's non-overlapped loop (trtb48's [LOG70] lead) is not this release's benchmark (gptSessionBenchmark, "
    "one static session); a host floor of gptSession without CUDA graphs stays unsized"
)


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(
            case,
            marks=(pytest.mark.xfail(strict=True, reason=SHORT_7B_REASON),)
            if abs(vals[1] / vals[0] - 1) > SPEED
            else (),
            id=f"{case[2][:4]}-{case[1]}-b{case[4]}-{case[5]}-{case[6]}",
        )
        for case, vals in MHA_7B_SHORT.items()
    ],
)
def test_pre_xqa_release_llama7b_short_output_rows(case):
    assert per_gpu(*case) == pytest.approx(MHA_7B_SHORT[case][0], rel=SPEED)


def test_the_quoted_7b_figures():
    for case, (_, ours) in MHA_7B_SHORT.items():
        assert per_gpu(*case) == pytest.approx(ours, rel=0.005)
    assert _per_gpu_kv("llama-2-7b", "fp8", H100, 1, 64, 128, 128, "fp16") / 9193 - 1 == pytest.approx(
        0.072, abs=0.003
    )


# --- Case 5: the FP8 GEMM rate of a short-decode shape is the release's (test_serving_published.py's H200 FP8 70B
# one-GPU batch-1,024 128/128 strict xfail). The publisher's 'updated for v0.6.1' table (NVIDIA/TensorRT-LLM
# docs/source/performance.md, stored id 736701021, opened by serve48) ran H100 FP8 70B TP 2 batch 1,024 128/128 at
# 2,657; v0.9.0's table the same card and shape at 3,214 (1.21x; 256 tokens of context at most, so no decode
# attention in question). The product gives both one figure, 2,849.8 (+7.3% / -11.3%). prefill_efficiency_fp8
# x 1.22 would land the H200 row (-19.5% -> -2.5%) but put the v0.6.1 row at +27.0% and v0.9.0's passing H100 TP 4
# batch-512 128/2,048 row at +24.8%: not landable without a field for the engine release.
def test_a_higher_fp8_rate_lands_the_h200_row_only_by_moving_passing_rows(monkeypatch):
    import dataclasses

    from procurement.sizing import throughput

    h200 = ("llama-2-70b", "fp8", "h200-sxm-141gb", 1, 1024, 128, 128)
    h100_tp2 = ("llama-2-70b", "fp8", H100, 2, 1024, 128, 128)
    h100_tp4 = ("llama-2-70b", "fp8", H100, 4, 512, 128, 2048)

    def errs():
        return [
            round(per_gpu(*h200) / 3989 - 1, 3),
            round(per_gpu(*h100_tp2) / 3214 - 1, 3),
            round(per_gpu(*h100_tp2) / 2657 - 1, 3),
            round(per_gpu(*h100_tp4) / 2725 - 1, 3),
        ]

    assert 3214 / 2657 == pytest.approx(1.21, abs=0.005)
    assert errs() == pytest.approx([-0.195, -0.113, 0.073, 0.137], abs=0.003)
    rate = throughput.PREFILL_EFFICIENCY_FP8  # read only there (procurement/sizing/throughput.py)
    monkeypatch.setattr(
        throughput, "PREFILL_EFFICIENCY_FP8", dataclasses.replace(rate, value=rate.value * 1.22)
    )
    assert errs() == pytest.approx([-0.025, 0.050, 0.270, 0.248], abs=0.003)


# --- Case 6: nor is the short rows' miss this release's FP8 GEMM rate. prefill_efficiency_fp8 x 0.87 (0.40 for 0.46:
# v0.5's own 36 ms H100 FP8 7B first token at 2,048, the figure assumptions.py quotes) moves the 7B / 70B 128/128
# rows 3 points (+35.9 -> +32.3%, +27.9 -> +24.9%) while the prefill-heavy 7B 2,048/128 row goes -6.9 -> -12.9%.
def test_the_release_fp8_gemm_rate_does_not_reach_the_128_128_rows(monkeypatch):
    import dataclasses

    from procurement.sizing import throughput

    rows = (
        (("llama-2-7b", "fp8", H100, 1, 64, 128, 128), 9193),
        (("llama-2-70b", "fp8", H100, 4, 64, 128, 128), 3317 / 4),
        (("llama-2-7b", "fp8", H100, 1, 64, 2048, 128), 2058),
    )
    rate = throughput.PREFILL_EFFICIENCY_FP8
    monkeypatch.setattr(
        throughput, "PREFILL_EFFICIENCY_FP8", dataclasses.replace(rate, value=rate.value * 0.40 / 0.46)
    )
    errs = [round(per_gpu(*case) / published - 1, 3) for case, published in rows]
    assert errs == pytest.approx([0.323, 0.249, -0.129], abs=0.003)
