"""Serving speed against published measurements (issue 26, class 7; branch serve26).

The serving model (procurement/sizing/throughput.py, inference_throughput): a decode step adds the linear
layers (weights read once or 2N FLOPs per stream, whichever is slower), attention (each stream's KV cache
read at its context length) and the tensor-parallel all-reduces; total tokens/s also pays for each request's
prompt, prefilled once per output_tokens steps. Prefill and the batched GEMMs run at a fraction of the
precision's dense peak fitted on ONE published point each (assumptions.py): 16-bit Ampere 0.69 (TensorRT-LLM
v0.9.0, A100 FP16 Llama 2 7B, first token at 2,048 tokens in 132.4 ms), FP8 0.47 (same table, H100 FP8,
30.8 ms), 16-bit Hopper from TensorRT-LLM's published FP8-over-FP16 prefill speedup (1.68); Gaudi 2 FP8 0.59
(Intel, 56.31 ms, procurement/data/measured_efficiency.csv). Everything else here is a check, not a fit.

Sources:
- TRT9: NVIDIA/TensorRT-LLM docs/source/performance.md at release v0.9.0 ("All data was generated using
  version 0.9.0"; raw.githubusercontent.com/NVIDIA/TensorRT-LLM/v0.9.0/docs/source/performance.md),
  "Peak Throughput" (static batching, output tokens/s per GPU) and "Low Latency" (batch 1, first token).
- TRT5: the same file @77d24b5fa178f11ed7fafdd9833b7245e075f721 (v0.5 first tokens, v0.6.1 throughput).
- INTEL: intel.com/content/www/us/en/developer/platform/gaudi/model-performance-gaudi2-inference.html
  (SynapseAI 1.18, Llama 2 7B FP8 on one HPU).
"""

import pytest

from procurement.sizing import load_bundled_gpus, parse_workload_spec, size_workload
from procurement.sizing.assumptions import FP8_PREFILL_SPEEDUP
from procurement.sizing.throughput import prefill_efficiency, tp_allreduce_call_seconds
from procurement.sizing.validation import trtllm_spec

GPUS = {gpu.slug: gpu for gpu in load_bundled_gpus()}
# Llama 2 7B, one prompt of 2,048 tokens: 2,048 x (2 x (6,738,415,616 - the 32,000 x 4,096 input embedding, a
# lookup: moe42) + causal attention 4 x 32 x 1,024 x 4,096)
PREFILL_7B_2K = 2048 * (2 * (6_738_415_616 - 32_000 * 4096) + 4 * 32 * 1024 * 4096)


def serving(preset, precision, gpu, tp, batch, prompt, output):
    spec = parse_workload_spec({"name": "s", **trtllm_spec(preset, precision, tp, batch, prompt, output)})
    report = size_workload(spec, [GPUS[gpu]])
    return next(c for c in report["candidates"] if c["gpus"] == tp)["throughput"]


def test_fit_points_by_hand():
    # 2.816e13 FLOPs / (0.1324 s x 312 TFLOPS) = 0.682; / (0.0308 s x 1,979 TFLOPS) = 0.462 (moe42: 2.870e13, 0.695
    # and 0.471 with the input embedding counted as a matmul); the Hopper 16-bit figure is the FP8 one x 2 / 1.68
    assert PREFILL_7B_2K == pytest.approx(2.816e13, rel=1e-3)
    assert PREFILL_7B_2K / (0.1324 * 312e12) == pytest.approx(0.68, abs=0.01)
    assert PREFILL_7B_2K / (0.0308 * 1979e12) == pytest.approx(0.46, abs=0.01)
    assert float(prefill_efficiency("bf16", 80)) == 0.68
    assert float(prefill_efficiency("fp8", 90)) == 0.46
    assert float(prefill_efficiency("bf16", 90)) == pytest.approx(0.46 * 2 / 1.68)


def test_fp8_prefill_is_the_published_speedup_over_bf16_not_the_datasheets_2x():
    # TensorRT-LLM fp8-quantization.md: tuned FP16 147.57 ms against tuned FP8 88.02 ms, 1.68x, on one card
    bf16 = serving("llama-2-7b", "bf16", "h100-sxm5-80gb", 1, 1, 2048, 1)["time_to_first_token_seconds"]
    fp8 = serving("llama-2-7b", "fp8", "h100-sxm5-80gb", 1, 1, 2048, 1)["time_to_first_token_seconds"]
    assert bf16 / fp8 == pytest.approx(FP8_PREFILL_SPEEDUP.value, rel=0.01)
    assert 147.57 / 88.02 == pytest.approx(1.68, abs=0.005)


FIRST_TOKEN = {
    # (preset, precision, gpu, tp, prompt): published ms               engine ms, error
    ("llama-2-7b", "fp16", "a100-sxm4-80gb", 1, 2048): 133,  # TRT5 v0.5      133.3, +0.2%
    ("llama-2-7b", "fp8", "h100-sxm5-80gb", 1, 2048): 36,  # TRT5 v0.5        30.9, -14.2%
    ("llama-2-7b", "fp8", "h200-sxm-141gb", 1, 2048): 30.2,  # TRT9           30.9, +2.3%
    ("llama-2-7b", "fp8", "l40s", 1, 2048): 80.1,  # TRT9 (Ada FP8)           83.3, +4.0%
    ("llama-2-70b", "fp8", "h200-sxm-141gb", 4, 2048): 103.0,  # TRT9        104.4, +1.4%
    ("llama-2-70b", "fp8", "gaudi2", 8, 2048): 116,  # INTEL                 118.7, +2.3%
}


@pytest.mark.parametrize(
    "case", list(FIRST_TOKEN), ids=lambda case: f"{case[0]}-{case[1]}-{case[2]}-tp{case[3]}"
)
def test_first_token_latency_within_15_percent(case):
    preset, precision, gpu, tp, prompt = case
    seconds = serving(preset, precision, gpu, tp, 1, prompt, 1)["time_to_first_token_seconds"]
    assert seconds * 1000 == pytest.approx(FIRST_TOKEN[case], rel=0.15)


@pytest.mark.parametrize(
    ("gpu", "precision", "published"),
    [
        # Was a strict xfail: A100 FP16 249.2 ms, engine 209.6 (-15.9%); H100 FP8 85.1 ms, engine 68.0 (-20.1%).
        # Now 215.3 (-13.6%) and 73.8 (-13.3%) because each TP 8 all-reduce pays NCCL's own ring cost (serve42,
        # tp_allreduce_call_seconds): the prompt's 2,048 x 8,192 x 2 B = 33.5 MB on Simple, 8.4 + 14 x 3.4 = 56 us
        # of pipeline latency on top of its bytes, where a flat 20 us was charged (160 calls: +5.8 ms).
        ("a100-sxm4-80gb", "fp16", 249.2),
        ("h100-sxm5-80gb", "fp8", 85.1),
    ],
)
def test_first_token_at_tp8_within_15_percent(gpu, precision, published):
    seconds = serving("llama-2-70b", precision, gpu, 8, 1, 2048, 1)["time_to_first_token_seconds"]
    assert seconds * 1000 == pytest.approx(published, rel=0.15)


PEAK = {
    # (preset, precision, gpu, tp, batch, input, output): published out tok/s/GPU      engine, error
    ("llama-2-7b", "fp8", "h100-sxm5-80gb", 1, 896, 128, 128): 19_854,  # TRT9        19,811, -0.2%
    ("llama-2-7b", "fp8", "h100-sxm5-80gb", 1, 120, 128, 2048): 6_944,  # TRT9         6,529, -6.0%
    ("llama-2-70b", "fp8", "h100-sxm5-80gb", 2, 1024, 128, 128): 3_214,  # TRT9        2,893, -10.0%
    ("llama-2-70b", "fp8", "h100-sxm5-80gb", 2, 96, 2048, 128): 346,  # TRT9           314, -9.3%
    ("llama-2-70b", "fp8", "h100-sxm5-80gb", 2, 64, 2048, 2048): 1_011,  # TRT9        1,050, +3.8%
    ("llama-2-70b", "fp8", "h200-sxm-141gb", 2, 512, 128, 2048): 3_963,  # TRT9        4,137, +4.4%
    ("llama-2-70b", "fp8", "h200-sxm-141gb", 1, 64, 2048, 2048): 1_458,  # TRT9        1,611, +10.5%
    ("llama-2-70b", "fp16", "a100-sxm4-80gb", 4, 1024, 128, 128): 686,  # TRT9          678, -1.2%
    ("llama-2-70b", "fp16", "a100-sxm4-80gb", 4, 64, 2048, 2048): 289,  # TRT9          307, +6.3%
    # Was a strict xfail (PEAK_MISSES): engine 3,231 (+18.6%). Now 3,120 (+14.5%) because each of the step's 160
    # all-reduces of 512 x 8,192 x 2 B = 8.4 MB pays NCCL's ring cost at TP 4 (Simple: 8.4 + 6 x 3.4 = 28.8 us
    # on top of 1.5 x 8.4 MB at 360 GB/s = 35.0 us; a flat 20 us before): +8.8 us a call, +1.4 ms a step (serve42).
    # fix42a: NCCL 2.19.3's constants, LL128 on Hopper (14 + 6 x 1.9 + 35.0 / 0.92 = 63.4 us): 3,124.5, +14.7%.
    # int42 (moe42's prefill_efficiency_fp8 0.46 rates these decode GEMMs too): 3,097, +13.7%.
    ("llama-2-70b", "fp8", "h100-sxm5-80gb", 4, 512, 128, 2048): 2_725,  # TRT9       3,097, +13.7%
    ("llama-2-7b", "fp16", "a100-sxm4-80gb", 1, 384, 128, 128): 5_586,  # TRT5 v0.6.1   5,105, -8.6%
    # Was a strict xfail (PEAK_MISSES, UNEXPLAINED): engine 813.0 (+18.9%), each of the step's 160 decode
    # all-reduces of 512 x 8,192 x 2 B = 8.39 MB (NCCL's ring: above TensorRT-LLM's 8 MB custom-kernel workspace,
    # cls45d) priced at NCCL's own cost model (LL128: 107.1 us). Now 775.9 (+13.4%) because the call costs what
    # nccl-tests measured for it on 8 A100-SXM4-80GB, one MPI rank a GPU: 130.6 us at 8,388,608 B, 1.22x the
    # model (assumptions.A100_TP8_ALLREDUCE_SECONDS; serve48b): +3.8 ms a step. The rest of the published step
    # (93.6 ms against the engine's 82.0 ms) is not found; the row is inside 15% with 1.6 points to spare.
    ("llama-2-70b", "fp16", "a100-sxm4-80gb", 8, 512, 128, 2048): 684,  # TRT9           776, +13.4%
    ("llama-2-7b", "fp8", "gaudi2", 1, 1230, 128, 128): 13_137,  # INTEL             12,161, -7.4%
    ("llama-2-7b", "fp8", "gaudi2", 1, 163, 128, 2048): 4_791,  # INTEL               4,898, +2.2%
    ("llama-2-7b", "fp8", "gaudi2", 1, 81, 2048, 2048): 1_953,  # INTEL               1,836, -6.0%
    ("llama-2-7b", "fp8", "gaudi2", 1, 94, 2048, 128): 1_449,  # INTEL                1,245, -14.1%
}
PEAK_MISSES = {
    ("llama-2-70b", "fp8", "h200-sxm-141gb", 1, 1024, 128, 128): (
        3_989,
        "UNEXPLAINED (label first: serve48): TRT9 H200 FP8 70B on one GPU at batch 1,024, 128/128: engine 3,266 "
        "(-18.1%; now 3,210.5, -19.5%); the TP 2 H100 row of the same shape is -10% (now 2,849.8, -11.3%): the FP8 "
        "GEMMs of this all-compute shape reach more than the 0.47 fitted on a batch-1 prefill. serve48: the rate is "
        "the release's, not the card's: the publisher's 'updated for v0.6.1' table (NVIDIA/TensorRT-LLM "
        "performance.md, stored id 736701021) ran the same H100 TP 2 batch-1,024 128/128 shape at 2,657, where the "
        "product's one figure (2,849.8) reads +7.3%, 1.21x below v0.9.0's 3,214 with 256 tokens of context at most "
        "(no decode attention to speak of); prefill_efficiency_fp8 x 1.22 lands this row (-2.5%) but puts that "
        "v0.6.1 row at +27.0% and this table's H100 TP 4 batch-512 128/2,048 row at +24.8% (now +13.7%): no field "
        "states the engine release",
    ),
}


def _peak_id(case):
    preset, precision, gpu, tp, batch, prompt, output = case
    return f"{preset}-{precision}-{gpu}-tp{tp}-b{batch}-{prompt}-{output}"


@pytest.mark.parametrize(
    "case",
    [*PEAK]
    + [
        # (the A100 TP 8 row's suffix, 'the missing cost is not established', left with it: serve48b)
        pytest.param(case, marks=pytest.mark.xfail(strict=True, reason=why))
        for case, (_, why) in PEAK_MISSES.items()
    ],
    ids=_peak_id,
)
def test_peak_throughput_within_15_percent(case):
    published = PEAK[case] if case in PEAK else PEAK_MISSES[case][0]
    preset, precision, gpu, tp, batch, prompt, output = case
    rows = serving(preset, precision, gpu, tp, batch, prompt, output)
    assert rows["decode_tokens_per_second_total"] / tp == pytest.approx(published, rel=0.15)


def test_a_tp_all_reduce_costs_what_nccls_model_gives_its_fastest_ring_protocol():
    # NVIDIA/nccl src/graph/tuning.cc at tag v2.19.3-1 (8c6c5951854a57ba90c4424fa040497f6defac46; the release the
    # 2024 serving stacks ran), one node, ring: latency = baseLat + 2(t-1) x hwLat (line 57 / 67: LL 6.6 + 0.6
    # us a step, LL128 14.0 + 1.9, Simple 8.4 + 3.4 over NVLink; line 71: PCI LL 1.0, Simple 5.7), bytes at busBw
    # x 1/4 (LL, line 180), x 0.92 (LL128, line 181; on by default only over NVLink on compute capability 70, 80
    # and 90, lines 287-297) or x 1 (Simple); NCCL runs the fastest. Never below the flat 20 us (nccl-tests'
    # small-message latency) plus the bytes. (Was tuning.cc @01afd20a, 2.7.5: LL 3.6 + 0.47, LL128 10 + 1.9 on
    # cc 70 / 80 only.)
    decode_512 = 512 * 8192 * 2.0  # Llama 2 70B, one decode step of 512 streams: 8.4 MB
    h100, a100 = 450e9 * 0.8, 300e9 * 0.8  # NVLink per direction x COMM_EFFICIENCY
    bytes_h100_tp4 = 1.5 * decode_512 / h100  # 35.0 us
    # H100 TP 4: LL128 (14 + 6 x 1.9 = 25.4 us + bytes / 0.92 = 63.4 us) just beats Simple (28.8 + 35.0 us)
    assert float(tp_allreduce_call_seconds(4.0, decode_512, h100, 90)) == pytest.approx(
        25.4e-6 + bytes_h100_tp4 / 0.92, rel=1e-9
    )
    # A100 TP 8: LL128 (40.6 us + bytes / 0.92 = 107.1 us) beats Simple (56 us + 61.2 us = 117.2 us)
    bytes_a100_tp8 = 1.75 * decode_512 / a100
    ll128 = 14.0e-6 + 14 * 1.9e-6 + bytes_a100_tp8 / 0.92
    assert ll128 == pytest.approx(107.1e-6, rel=1e-3)
    # serve48b: NCCL's model on a Hopper part at the A100's link; an A100 SXM4 TP 8 group (Ampere, NVLink) pays
    # instead the call nccl-tests measured on 8 A100-SXM4-80GB, one MPI rank a GPU
    # (assumptions.A100_TP8_ALLREDUCE_SECONDS): 8,388,608 B, exactly this call, took 130.6 us, 1.22x the model
    assert float(tp_allreduce_call_seconds(8.0, decode_512, a100, 90)) == pytest.approx(ll128, rel=1e-9)
    assert decode_512 == 8_388_608
    assert float(tp_allreduce_call_seconds(8.0, decode_512, a100, 80)) == pytest.approx(130.6e-6, rel=1e-9)
    # a TP 4 A100 group has no measurement cited: NCCL's model (Simple, 8.4 + 6 x 3.4 = 28.8 us + 1.5 x bytes,
    # just under LL128's 25.4 us + 1.5 x bytes / 0.92)
    bytes_a100_tp4 = 1.5 * decode_512 / a100
    assert float(tp_allreduce_call_seconds(4.0, decode_512, a100, 80)) == pytest.approx(
        min(28.8e-6 + bytes_a100_tp4, 25.4e-6 + bytes_a100_tp4 / 0.92), rel=1e-9
    )
    # a part LL128 is not enabled on (Ada, 89): Simple
    assert float(tp_allreduce_call_seconds(8.0, decode_512, a100, 89)) == pytest.approx(
        56e-6 + bytes_a100_tp8
    )
    # over PCIe (no NVLink in the group): LL128 off, Simple at 8.4 + 14 x 5.7 = 88.2 us of hops
    assert float(tp_allreduce_call_seconds(8.0, decode_512, a100, 80, False)) == pytest.approx(
        88.2e-6 + bytes_a100_tp8
    )
    # one stream's 16 kB at TP 8: LL's 15 us + bytes / 0.25 is under the measured floor, which applies
    small = 8192 * 2.0
    assert float(tp_allreduce_call_seconds(8.0, small, h100, 90)) == pytest.approx(
        20e-6 + 1.75 * small / h100
    )
    # TP 2 at 8.4 MB: Simple's 15.2 us of hops is under the floor too, so TP 2 rows did not move
    assert float(tp_allreduce_call_seconds(2.0, decode_512, h100, 90)) == pytest.approx(
        20e-6 + decode_512 / h100
    )


def test_the_decode_step_pays_every_streams_kv_reads_on_top_of_the_gemms():
    # Llama 2 7B FP8 on one H100, 768 streams: the GEMMs are compute-bound (768 x 2N = 10.35 TFLOP at 0.47 x
    # 1,979 TFLOPS = 11.1 ms), so the old max(reads, FLOPs) hid the KV reads; now attention adds them: 768
    # streams x 192 tokens (128 + 128/2) x 262,144 fp8 bytes at 0.7 x 3,350 GB/s = 16.5 ms.
    short = serving("llama-2-7b", "fp8", "h100-sxm5-80gb", 1, 768, 128, 128)
    kv_seconds = 768 * 192 * 2 * 32 * 4096 / (0.7 * 3350e9)
    assert kv_seconds == pytest.approx(0.0165, rel=0.01)
    gemm_seconds = 768 * 2 * 6_738_415_616 / (0.47 * 1979e12)
    assert 1 / short["decode_tokens_per_second_per_stream"] == pytest.approx(
        gemm_seconds + kv_seconds, rel=0.01
    )


def test_each_requests_prompt_is_prefilled_once_per_output_tokens_steps():
    # Same batch, 128 outputs each, prompt 128 -> 2,048 tokens: the decode step grows by the longer KV reads
    # only, while the total pays 768 x 2,048 / 128 prompt tokens of prefill per step (2N + attention FLOPs
    # at 0.47 of the FP8 peak): 12,288 x 14.0 GFLOP ~ 172,000 GFLOP, about 185 ms a step.
    short = serving("llama-2-7b", "fp8", "h100-sxm5-80gb", 1, 768, 128, 128)
    long = serving("llama-2-7b", "fp8", "h100-sxm5-80gb", 1, 768, 2048, 128)
    step_short = 1 / short["decode_tokens_per_second_per_stream"]
    step_long = 1 / long["decode_tokens_per_second_per_stream"]
    prompt_flops = 2 * 6_738_415_616 + 4 * 32 * 1024 * 4096
    prefill = 768 * 2048 / 128 * prompt_flops / (0.47 * 1979e12)
    assert 768 / long["decode_tokens_per_second_total"] == pytest.approx(step_long + prefill, rel=0.01)
    assert long["decode_tokens_per_second_total"] < short["decode_tokens_per_second_total"] / 5
    assert step_long > step_short
