"""aud51k (stop 51): outside audit of q4k's `inference.quant_kernel: fused_gemv` (a runtime's own fused
dequantize-GEMV 4-bit kernel, 4-bit weights read at fused_gemv_int4_decode_bandwidth_efficiency, 0.836 of the 16-bit
rate "on every card", set on calm's RTX 4090 rows). Cases chosen on cards other than the 4090 where possible, from
other runtimes' published batch-1 / batch-2 int4 decode. None of these sources is used elsewhere in tests/.

Sources:
  [TINYCHAT] mit-han-lab/llm-awq @048e19e1e7a982c8fa37aaf9ffb803dc4f1c8a62 tinychat/README.md "Speed Benchmarks"
             ("per-token latency for the generation stage"; AWQ W4A16 g128, "our fast W4A16 GPU kernel", MHA fused
             into one kernel, pre-allocated KV cache). "### A6000 Results": "| LLaMA-2-7B | 22.75 | 8.71 | 2.61x |",
             "| LLaMA-2-13B | 41.72 | 14.64 | 2.85x |", "| LLaMA-3-8B | 24.95 | 10.68 | 2.34x |"; "### 4090 Results":
             "| LLaMA-3-8B | 17.07 | 6.66 | 2.56x |". Footnote: LLaMA-2 rows use "a longer prompt (with > 500
             tokens)". Output length not stated.
  [EXV2-346] turboderp-org/exllamav2 issue #346 "Slow inference speed on A100?" (jingzhaoou, 2024-02-21):
             A100-SXM4-80GB, turboderp/Llama2-7B-exl2 revision 4.0bpw: "Response generated in 8.56 seconds, 1024
             tokens, 119.64 tokens/second" (prompt a file, length not stated); turboderp: "very slow CPUs (especially
             virtualized ones in server instances) can be a bottleneck".
  [EXV2-109] turboderp-org/exllamav2 issue #109 "Weird performance" (jianyuheng, 2023-10-13), A100-40G:
             "llama-30b-4bpw(33.43 tokens/s) is very close to llama-13b-4bpw(35.41 tokens/s)".
  [MODELOPT] NVIDIA/TensorRT-Model-Optimizer @06a155388edd4a240051176a67a11886b15db082 benchmark.md 1.1 (H100,
             modelopt 0.11.0, TensorRT-LLM v0.9, "Speedup ... compared to the FP16 baseline"): "|  Llama3-8B |
             2 | ... |    2.37x   |   392.99   |  1.61x  |" (INT4 AWQ, batch 2). Lengths not stated.
Engine: every runtime here runs its own decode step (TinyChat's fused kernels, exllamav2's C++ extension,
TensorRT-LLM's C++ runtime): `inference.engine` compiled, the only engine fused_gemv accepts. Bar: LLM throughput 15%.
"""

from __future__ import annotations

import copy

import pytest

from procurement.api.sizing import size_spec_document
from procurement.sizing.assumptions import FUSED_GEMV_INT4_DECODE_EFFICIENCY, INT4_DECODE_EFFICIENCY

SPEED = 0.15


def decode(preset, card, kernel, *, ctx=None, out=None, concurrency=1, quant="int4", fmt=None) -> float:
    inference = {"concurrency": concurrency, "kv_cache_dtype": "fp16"}
    if ctx is not None:
        inference["context_len"] = ctx
    if out is not None:
        inference["output_tokens"] = out
    spec = {
        "name": "aud51k",
        "task": "inference",
        "precision": "fp16",
        "model": {"preset": preset},
        "inference": inference,
    }
    if quant != "none":
        spec["weight_quantization"] = quant
        inference["quant_kernel"] = kernel
        if fmt:
            inference["quant_format"] = fmt
    report = size_spec_document(copy.deepcopy(spec), [card], calibrate=False)
    return float(report["throughput"]["decode_tokens_per_second_per_stream"])


# [TINYCHAT] rows: (preset, card, context_len, output_tokens, published ms a token, ours unstated, ours fused_gemv).
# LLaMA-2: "> 500 tokens" of prompt read as 512 + the product's default 256 generated (768); LLaMA-3: defaults.
TINYCHAT = {
    "a6000-llama2-7b": ("llama-2-7b", "rtx-a6000", 768, 256, 8.71, 88.842, 116.295),
    "a6000-llama2-13b": ("llama-2-13b", "rtx-a6000", 768, 256, 14.64, 46.601, 61.527),
    "a6000-llama3-8b": ("llama-3-8b", "rtx-a6000", None, None, 10.68, 72.180, 90.986),
    "4090-llama3-8b": ("llama-3-8b", "rtx-4090", None, None, 6.66, 119.773, 150.980),
}


@pytest.mark.django_db
@pytest.mark.parametrize("case", list(TINYCHAT))
def test_tinychat_w4a16_decode_lands_under_fused_gemv(bundled_catalog, case):
    """PASS. TinyChat's AWQ GEMV is a fused dequantize-GEMV in the run's own step: stated fused_gemv (awq g128) lands
    all four rows, two of them on a card q4k never saw (A6000, GA102): 7B 114.81 published -> 116.295 (+1.3%),
    13B 68.31 -> 61.527 (-9.9%), LLaMA-3-8B 93.63 -> 90.986 (-2.8%); 4090 LLaMA-3-8B 150.15 -> 150.980 (+0.6%).
    Unstated (0.617) reads them 88.842 / 46.601 / 72.180 / 119.773 (-22.6 / -31.8 / -22.9 / -20.2%)."""
    preset, card, ctx, out, ms, before, after = TINYCHAT[case]
    published = 1000.0 / ms
    unstated = decode(preset, card, "unstated", ctx=ctx, out=out, fmt="awq")
    assert unstated == pytest.approx(before, rel=2e-3)
    assert unstated < published * (1 - SPEED)
    fused = decode(preset, card, "fused_gemv", ctx=ctx, out=out, fmt="awq")
    assert fused == pytest.approx(after, rel=2e-3)
    assert fused == pytest.approx(published, rel=SPEED)


def test_tinychat_a6000_13b_over_7b_is_the_byte_ratio_the_engine_prices():
    """[TINYCHAT] A6000: 13B / 7B per-token latency 14.64 / 8.71 = 1.681; the engine's fused_gemv pair
    116.295 = 1.890 (+12.4%): the 13B row is the one that sits nearest the bar (-9.9%) (hand check, no engine call)."""
    assert 14.64 / 8.71 == pytest.approx(1.681, abs=1e-3)
    assert 116.295 / 61.527 == pytest.approx(1.890, abs=1e-3)


@pytest.mark.django_db
@pytest.mark.xfail(
    strict=True,
    reason=(
        "UNEXPLAINED (aud51k): [EXV2-346] exllamav2 EXL2 4.0 bpw Llama2-7B on A100-SXM4-80GB, 1,024 generated: "
        "published 119.64 tok/s, ours fused_gemv 228.112 at the default 4,096 context (+90.7%; 307.150 at a 1-token "
        "prompt, +156.7%); unstated 184.939 (+54.6%). The gap is 8.36 - 4.38 = 3.97 ms a token; the maintainer names "
        "slow virtualized server CPUs (exllamav2 drives each module from Python), but no host time was measured: 0% "
        "sized. The rate 0.836 was set on a desktop 4090 host; the spec cannot state the host's per-token floor."
    ),
)
def test_exllamav2_a100_80gb_7b_exl2(bundled_catalog):
    ours = decode("llama-2-7b", "a100-sxm4-80gb", "fused_gemv", out=1024)
    assert ours == pytest.approx(228.112, rel=2e-3)  # the pinned figure (fails loudly if the engine moves)
    assert ours == pytest.approx(119.64, rel=SPEED)


@pytest.mark.django_db
@pytest.mark.xfail(
    strict=True,
    reason=(
        "UNEXPLAINED (aud51k): [EXV2-109] exllamav2 4 bpw LLaMA 13B on an A100 40GB (SXM4 assumed; PCIe has the "
        "same 1,555 GB/s): published 35.41 tok/s, ours fused_gemv 93.500 at defaults (+164.0%). Sibling in the same "
        "report: LLaMA 30B 4 bpw 33.43, 2.4x the bytes at 0.94x the time: a ~28 ms per-token floor independent "
        "of the weights, not a read rate; unsized (no host profile in the source)."
    ),
)
def test_exllamav2_a100_40gb_13b_4bpw(bundled_catalog):
    ours = decode("llama-2-13b", "a100-sxm4-40gb", "fused_gemv")
    assert ours == pytest.approx(93.500, rel=2e-3)
    assert ours == pytest.approx(35.41, rel=SPEED)


@pytest.mark.django_db
@pytest.mark.xfail(
    strict=True,
    reason=(
        "UNEXPLAINED (aud51k): [MODELOPT] TensorRT-LLM v0.9 INT4 AWQ Llama3-8B on H100, batch 2: published 1.61x "
        "the FP16 tokens/s; ours (fused_gemv / 16-bit, both at batch 2, default 4,096 / 256) 364.771 / 146.106 = "
        "2.497x (+55.1%; unstated 0.617: 294.296 / 146.106 = 2.014x, +25.1%). TensorRT-LLM's weight-only GEMV is a "
        "fused dequantize-GEMV in its own C++ loop, so by q4k's class text it is in the class; its H100 ratio says "
        "the rate does not hold there (even the unstated 0.617 reads +25.1%). Lengths unstated; unsized. fix51k: "
        "the class text now names TensorRT-LLM's weight-only GEMV outside fused_gemv (state it unstated); the "
        "unstated +25.1% gap stays unsized."
    ),
)
def test_trtllm_int4_awq_h100_speedup_over_fp16(bundled_catalog):
    fp16 = decode("llama-3-8b", "h100-sxm5-80gb", None, concurrency=2, quant="none")
    int4 = decode("llama-3-8b", "h100-sxm5-80gb", "fused_gemv", concurrency=2, fmt="awq")
    assert fp16 == pytest.approx(146.106, rel=2e-3)
    assert int4 == pytest.approx(364.771, rel=2e-3)
    assert int4 / fp16 == pytest.approx(1.61, rel=SPEED)


def test_the_neighbours_rates_did_not_move():
    """q4k added one entry; the unstated rate (gpt-fast A100 int4 g32, 0.617) and the class rate (calm 746 / 892)
    are what the rows above were priced at."""
    assert INT4_DECODE_EFFICIENCY.value == pytest.approx(0.617)
    assert FUSED_GEMV_INT4_DECODE_EFFICIENCY.value == pytest.approx(746 / 892, abs=5e-4)
