"""aud51b (stop 51, outside audit of branch bw51): a language model's decode reads on GDDR6X cards (RTX 3090,
RTX 4090) at decode_read_fraction_gddr6x 0.885 of the datasheet (set on calm's Llama2 7B fp16 first-32 row), every
other memory at 0.70. Cases: batch-1 decode rows of other runtimes and other rows of calm on the two GDDR6X cards,
and the GDDR6 neighbours (RTX A6000, RTX 6000 Ada) of the same llama.cpp table, which bw51 must not move.
fix51b (this audit's fix list (1)): the 0.885 is now the RTX 4090's own measured figure (decode_read_fraction_rtx_4090,
MEASURED_DECODE_READ_FRACTIONS in assumptions.py), not every GDDR6X card's: the RTX 3090 reads at 0.70 again.

Sources (opened for this audit; none of these rows is used by another test: grep of tests/ for XiongjieDai,
llm-perf-bench, 51.85, 60.78, 44.01, "58 tok/s", "68 tok/s", "198 t/s", 204.8: none):
  [CALM]   zeux/calm @021304d664cc5335405bde8d0a19cbda3ed5f9b8 README.md (read_file id 45454667571), "Performance":
           "When using NVidia GeForce RTX 4090 ... measured with fp16, fp8 and gf4 weights at the beginning of the
           context window (first 32 tokens) and at the end (last 32 tokens with an offset ... 4000 for 4096
           contexts)": "| Llama2 7B (4096), fp16 | 67 tok/s (892 GB/s) | 58 tok/s (901 GB/s) |" and
           "| Llama2 13B (4096), fp8 | 68 tok/s (877 GB/s) | 55 tok/s (889 GB/s) |". "KV cache is using fp16 by
           default"; fp8 is e5m2 weights ("defaults to fp8"). bw51 set its fraction on the first-32 fp16 7B cell
           only; the last-32 cell (4,000 tokens of KV read a token) and the 8-bit 13B cell are held out here.
  [XDAI]   XiongjieDai/GPU-Benchmarks-on-LLM-Inference @00dd2bdeb2404263f22bd6c1cd46ce397e341db5 README.md (read_file
           id 9329217782): llama.cpp (LLAMA_CUBLAS=1), one GPU, RunPod, "snapshots in Dec 2023". "Average eval speed
           (tokens/s) by GPUs on LLaMA 2", column 7B_f16: "3090 24GB | 120.6 | 51.85", "4090 24GB | **149.37**|
           60.78", "RTX A6000 48GB | 111.57 | 44.01", "RTX 6000 Ada 48GB | 127.45 | 50.56". LLaMA 3 table ("cuda:
           12.1.1 on RunPod", May 2024), 8B F16, column tg 512: "3090 24GB ... 8B F16 | 47.40", "4090 24GB ... 8B
           F16 | 54.84". LLaMA (1) table, "RTX A6000 48GB ... 13B_f16 | 24.65 | 24.66 | 24.65" (mean 24.65; LLaMA 13B
           has Llama 2 13B's shapes). tg is llama-bench's text generation from an empty context (tg 512: 512
           tokens); the LLaMA 2 table's length is not printed: llama-bench's default tg 128 is taken.
  [MLCPB]  mlc-ai/llm-perf-bench @027460030bf1ff2dce035d671fad1b885eb960b6 README.md (read_file id 25364351728):
           "Int4-quantized, Single GPU": "| Llama2-7B | RTX 4090 | 204.8 |" (MLC LLM tok/sec); "int4-quantized
           weights, fp16 activation and compute, decoding for 256 tokens with a prompt 'What is the meaning of
           life?'"; QUANTIZATION=q4f16_1, built with --use-cuda-graph.
  [EXL2]   turboderp/exllamav2 @01d01a14feb2a3dc40a9c3a9aafbf581984bab36 README.md (read_file id 8873493656),
           "Performance": "| Llama | GPTQ | 7B | 128 | no | 177 t/s | **198** t/s |" (3090Ti, 4090): a 4-bit GPTQ
           checkpoint, group 128, no act-order, on an RTX 4090; lengths not stated (the product's defaults taken).
Engine: every runtime here runs its own loop with no Python step (calm, llama.cpp, MLC with CUDA graphs,
exllamav2's C++ extension), so `inference.engine` is the default `compiled` (a step is its GPU work).
Bar: LLM throughput 15%.
"""

from __future__ import annotations

import copy

import pytest

from procurement.api.sizing import size_spec_document
from procurement.sizing.assumptions import ACHIEVED_BANDWIDTH, DECODE_READ_FRACTION_RTX_4090
from procurement.sizing.gpus import GpuSpec, gpu_by_slug

SPEED = 0.15
RTX4090, RTX3090, A6000, ADA6000 = "rtx-4090", "rtx-3090", "rtx-a6000", "rtx-6000-ada"

# bw51 before -> after (0.70 -> 0.885 on GDDR6X), ours vs published: calm last32 46.057 (-20.6%) -> 58.229 (+0.4%);
# calm 13B fp8 54.842 (-19.3%) -> 69.337 (+2.0%); XDAI 3090 7B 49.454 (-4.6%) -> 62.524 (+20.6%); XDAI 4090 7B 53.258
# (-12.4%) -> 67.333 (+10.8%); XDAI 3090 8B tg512 43.554 (-8.1%) -> 55.064 (+16.2%); MLC 119.054 (-41.9%) -> 150.518
# (-26.5%); exllamav2 89.102 (-55.0%) -> 112.650 (-43.1%). The GDDR6 rows do not move (A6000 7B -7.8%, 6000 Ada +0.3%,
# A6000 13B -15.3%).
# fix51b (after this audit's fix list): the 0.885 is keyed to the measured card (the RTX 4090), not to GDDR6X, so the
# RTX 3090 reads at 0.70 again: XDAI 3090 7B 62.524 (+20.6%) -> 49.454 (-4.6%), XDAI 3090 8B tg512 55.064 (+16.2%) ->
# 43.554 (-8.1%) (both FIXED, strict xfails removed); every 4090 and GDDR6 row unchanged.
# q4k (fix list (3)): the int4 rows state their runtime's kernel, inference.quant_kernel fused_gemv (a fused
# dequantize-GEMV 4-bit kernel, read at fused_gemv_int4_decode_bandwidth_efficiency 0.836 of the 16-bit rate, set on
# calm's 4090 gf4 / fp16 rows, 746 / 892 GB/s; test_outside_int4_gemv_q4k.py), and the exllamav2 row its GPTQ format
# (inference.quant_format gptq, group 128: 4.156 bits, as the README's "GPTQ ... 128" says): MLC 150.518 (-26.5%) ->
# 199.747 (-2.5%, FIXED, strict xfail removed); exllamav2 112.650 (-43.1%) -> 140.098 (-29.2%, xfail kept).
# id: (card, model preset, precision, weight_quantization, context_len, output_tokens, published tok/s, ours pinned,
#      other inference fields stated)
CASES = {
    # [CALM] last 32 tokens at offset 4000 of a 4096 context: 4,032 tokens, the last 32 generated
    "calm-4090-llama2-7b-fp16-last32": (RTX4090, "llama-2-7b", "fp16", "none", 4032, 32, 58.0, 58.229),
    # [CALM] first 32 tokens, fp8 (e5m2) weights
    "calm-4090-llama2-13b-fp8-first32": (RTX4090, "llama-2-13b", "fp8", "none", 33, 32, 68.0, 69.337),
    # [XDAI] llama.cpp, LLaMA 2 7B f16, tg 128
    "xdai-3090-llama2-7b-f16": (RTX3090, "llama-2-7b", "fp16", "none", 129, 128, 51.85, 49.454),
    "xdai-4090-llama2-7b-f16": (RTX4090, "llama-2-7b", "fp16", "none", 129, 128, 60.78, 67.333),
    "xdai-a6000-llama2-7b-f16": (A6000, "llama-2-7b", "fp16", "none", 129, 128, 44.01, 40.577),
    "xdai-6000ada-llama2-7b-f16": (ADA6000, "llama-2-7b", "fp16", "none", 129, 128, 50.56, 50.722),
    # [XDAI] llama.cpp, LLaMA 3 8B F16, tg 512
    "xdai-3090-llama3-8b-f16-tg512": (RTX3090, "llama-3-8b", "fp16", "none", 513, 512, 47.40, 43.554),
    # [XDAI] llama.cpp, LLaMA 13B f16 on the A6000 (GDDR6), tg 128
    "xdai-a6000-llama-13b-f16": (A6000, "llama-2-13b", "fp16", "none", 129, 128, 24.65, 20.872),
    # [MLCPB] MLC LLM q4f16_1 (4-bit), 256 generated after a short chat prompt (~40 tokens with the template)
    # (q4f16_1 is 4 bits + an fp16 scale per 32 = 4.5 bits; no format value states it, unstated 4.25 is priced)
    "mlc-4090-llama2-7b-q4f16": (
        RTX4090,
        "llama-2-7b",
        "fp16",
        "int4",
        296,
        256,
        204.8,
        199.747,
        {"quant_kernel": "fused_gemv"},
    ),
    # [EXL2] exllamav2 GPTQ 4-bit g128; lengths not stated: the product's defaults (4,096 / 256)
    "exl2-4090-llama-7b-gptq": (
        RTX4090,
        "llama-2-7b",
        "fp16",
        "int4",
        4096,
        256,
        198.0,
        140.098,
        {"quant_kernel": "fused_gemv", "quant_format": "gptq"},
    ),
}


def ours(case: str) -> float:
    gpu, preset, precision, quant, ctx, out, _, _, *stated = CASES[case]
    spec = {
        "name": f"aud51b-{case}",
        "task": "inference",
        "precision": precision,
        "weight_quantization": quant,
        "model": {"preset": preset},
        "inference": {
            "concurrency": 1,
            "context_len": ctx,
            "output_tokens": out,
            "kv_cache_dtype": "fp16",
            **(stated[0] if stated else {}),
        },
    }
    report = size_spec_document(copy.deepcopy(spec), [gpu], calibrate=False)
    assert report["candidates"][0]["verdict"] in {"fits", "tight", "oversized"}
    return float(report["throughput"]["decode_tokens_per_second_per_stream"])


# llama.cpp's read share of each card in [XDAI]'s LLaMA 2 7B f16 column (the product's bytes a token, from its figure:
# published / ours x the card's fraction in the product): 3090 GDDR6X 0.734, 4090 GDDR6X 0.799, RTX A6000 GDDR6 0.759,
# RTX 6000 Ada GDDR6 0.698; 13B on the A6000 0.826. One runtime, one host family: memory type does not order them.
GDDR6_13B = (
    "UNEXPLAINED (aud51b): [XDAI] llama.cpp RTX A6000 (GDDR6, 768 GB/s) LLaMA 13B f16 tg: published 24.65 tok/s, "
    "product 20.872 (-15.3%), unchanged by bw51 (GDDR6 keeps 0.70). The run reads 0.826 of the datasheet (7B on the "
    "same card 0.759): a GDDR6 card above 0.70 in a runtime that reads the GDDR6X 3090 at 0.734. bw51's note 'GDDR6 "
    "keeps 0.70, no source opened' is contradicted by this table; not sized further (one runtime, one host)."
)
EXL2_INT4 = (
    "UNEXPLAINED (aud51b; q4k): [EXL2] exllamav2 RTX 4090 Llama 7B GPTQ g128: published 198.0 tok/s, product "
    "140.098 (-29.2%; before q4k 112.650, -43.1%; before bw51 89.102, -55.0%), stated inference.quant_kernel "
    "fused_gemv (4-bit weights at 0.836 of the 16-bit rate, calm's 4090 gf4 / fp16 rows) and quant_format gptq. "
    "The README does not state the lengths; the product's defaults (4,096 / 256) read ~2 GB of KV a token. Sized: "
    "at the first window of the repo's own speed test (test_inference.py -s @02408018: position 1 + 127 tokens) the product "
    "reads 206.452 (+4.3%; 13B GPTQ 107.920 vs 111, -2.8%; EXL2 4.0 bpw 7B 202.204 vs 207, -2.3%: "
    "test_outside_int4_gemv_q4k.py), so the KV read at the default length covers the whole gap; not EXPLAINED "
    "because the run's lengths are not located in the source (the README says only 'some quick tests')."
)


def _case(case):
    published, pinned = CASES[case][6], CASES[case][7]
    return published, pinned


@pytest.mark.django_db
@pytest.mark.parametrize(
    "case",
    [
        "calm-4090-llama2-7b-fp16-last32",
        "calm-4090-llama2-13b-fp8-first32",
        "xdai-4090-llama2-7b-f16",
        "xdai-a6000-llama2-7b-f16",
        "xdai-6000ada-llama2-7b-f16",
        # fix51b: FIXED, strict xfails removed (0.885 keyed to the RTX 4090, the 3090 back at 0.70): 62.524 (+20.6%)
        # -> 49.454 (-4.6%) and 55.064 (+16.2%) -> 43.554 (-8.1%)
        "xdai-3090-llama2-7b-f16",
        "xdai-3090-llama3-8b-f16-tg512",
        pytest.param("xdai-a6000-llama-13b-f16", marks=pytest.mark.xfail(strict=True, reason=GDDR6_13B)),
        # q4k: FIXED, strict xfail removed (inference.quant_kernel fused_gemv stated): 150.518 (-26.5%) -> 199.747
        # (-2.5%)
        "mlc-4090-llama2-7b-q4f16",
        pytest.param("exl2-4090-llama-7b-gptq", marks=pytest.mark.xfail(strict=True, reason=EXL2_INT4)),
    ],
)
def test_batch1_decode_within_15_percent(bundled_catalog, case):
    published, pinned = _case(case)
    got = ours(case)
    assert got == pytest.approx(pinned, rel=2e-3)
    assert got == pytest.approx(published, rel=SPEED)


@pytest.mark.django_db
@pytest.mark.parametrize("case", ["xdai-3090-llama2-7b-f16", "xdai-3090-llama3-8b-f16-tg512"])
def test_the_3090_rows_were_inside_the_bar_at_070(bundled_catalog, case, monkeypatch):
    """The two 3090 misses were bw51's: at achieved_bandwidth_fraction 0.70 (before bw51, and again since fix51b)
    both are inside 15%."""
    monkeypatch.setattr(GpuSpec, "decode_read_fraction", property(lambda self: ACHIEVED_BANDWIDTH.value))
    published, _ = _case(case)
    assert ours(case) == pytest.approx(published, rel=SPEED)


def test_the_llama_cpp_table_does_not_order_read_shares_by_memory_type():
    """[XDAI] 7B f16: published / ours x the product's fraction. The GDDR6 A6000 reads a larger share of its datasheet
    than the GDDR6X 3090; neither GDDR6X card reaches calm's 0.885."""
    share = {
        case: CASES[case][6] / CASES[case][7] * gpu_by_slug(CASES[case][0]).decode_read_fraction
        for case in (
            "xdai-3090-llama2-7b-f16",
            "xdai-4090-llama2-7b-f16",
            "xdai-a6000-llama2-7b-f16",
            "xdai-6000ada-llama2-7b-f16",
        )
    }
    assert share["xdai-a6000-llama2-7b-f16"] > share["xdai-3090-llama2-7b-f16"]
    assert (
        max(share["xdai-3090-llama2-7b-f16"], share["xdai-4090-llama2-7b-f16"])
        < DECODE_READ_FRACTION_RTX_4090.value - 0.08
    )
    assert share["xdai-3090-llama2-7b-f16"] == pytest.approx(0.734, abs=0.003)
    assert share["xdai-4090-llama2-7b-f16"] == pytest.approx(0.799, abs=0.003)
    assert share["xdai-a6000-llama2-7b-f16"] == pytest.approx(0.759, abs=0.003)
