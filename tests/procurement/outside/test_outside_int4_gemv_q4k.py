"""q4k (stop 51, aud51b's fix list (3)): a purpose-built runtime's fused dequantize-GEMV 4-bit kernel,
`inference.quant_kernel: fused_gemv`, read at fused_gemv_int4_decode_bandwidth_efficiency of the 16-bit rate. SET on
one runtime's published row (calm), CHECKED on other runtimes' rows (MLC LLM, exllamav2) and against llama.cpp's
Q4 / F16 pairs on several cards, which are NOT in the class.

Sources:
  [CALM]   zeux/calm @021304d664cc5335405bde8d0a19cbda3ed5f9b8 README.md "Performance" (RTX 4090, "first 32 tokens";
           calm prints its own GB/s): "| Llama2 7B (4096), fp16 | 67 tok/s (892 GB/s) |", "| Llama2 7B (4096), gf4
           | 225 tok/s (746 GB/s) |" (the SET row pair), "| Mistral 7B (4096), fp16 | 63 tok/s (903 GB/s) |",
           "| Mistral 7B (4096), gf4 | 219 tok/s (779 GB/s) |", "| Phi 2.7B (2048), fp16 | 167 tok/s (888 GB/s) |",
           "| Phi 2.7B (2048), gf4 | 551 tok/s (735 GB/s) |". gf4: "8 values are stored in 32 bits" (4.0 bits).
  [MLCPB]  mlc-ai/llm-perf-bench @027460030bf1ff2dce035d671fad1b885eb960b6 README.md "Int4-quantized, Single GPU"
           (MLC LLM, q4f16_1, --use-cuda-graph, 256 generated after "What is the meaning of life?"): "| Llama2-13B |
           RTX 4090 | 113.5 |" (7B 204.8 is aud51b's case). The same table has RTX 3090 Ti rows (186.7 / 107.4), a
           card not in the catalog.
  [EXL2]   turboderp/exllamav2 @01d01a14feb2a3dc40a9c3a9aafbf581984bab36 README.md "Performance" (4090 column):
           "| Llama | GPTQ | 13B | 128 | no | 109 t/s | **111** t/s |", "| Llama2 | EXL2 4.0 bpw | 7B | ... |
           179 t/s | **207** t/s |" (7B GPTQ 198 is aud51b's case). Lengths not stated ("Some quick tests"). The
           repo's own speed test, test_inference.py -s (@024080186fb621ab436cb0bee098f539d8887665, read_file id
           9586932963): encodes "X", then times 128-token windows, the first "Position 1 + 127 tokens".
  [XDAI]   XiongjieDai/GPU-Benchmarks-on-LLM-Inference @00dd2bdeb2404263f22bd6c1cd46ce397e341db5 README.md
           (read_file id 9329217782), llama.cpp: LLaMA 2 "Average eval speed" 7B_q4_0 / 7B_f16: 3090 120.6 / 51.85,
           4090 149.37 / 60.78, RTX A6000 111.57 / 44.01, RTX 6000 Ada 127.45 / 50.56, A100 80GB 136.24 / 73.83,
           H100 PCIe 133.77 / 83.32; LLaMA 3 tg 512, 8B Q4_K_M / 8B F16: 3090 115.42 / 47.40, 4090 130.58 / 54.84,
           4080 108.15 / 40.58.
Engine: these runtimes run their own loops with no Python step (calm, MLC with CUDA graphs, exllamav2's C++
extension): `inference.engine` compiled. Bar: LLM throughput 15%.
"""

from __future__ import annotations

import copy

import pytest

from procurement.api.sizing import size_spec_document
from procurement.sizing.assumptions import FUSED_GEMV_INT4_DECODE_EFFICIENCY, INT4_DECODE_EFFICIENCY

SPEED = 0.15
RATE = FUSED_GEMV_INT4_DECODE_EFFICIENCY.value


def test_the_rate_is_calms_gf4_over_fp16_read():
    """[CALM] first 32 tokens (no KV to speak of): 746 / 892 GB/s, both measured by calm on the same RTX 4090."""
    assert RATE == pytest.approx(746 / 892, abs=5e-4)
    assert INT4_DECODE_EFFICIENCY.value == pytest.approx(0.617)  # the unstated default is unchanged


@pytest.mark.parametrize(("gf4", "fp16"), [(779, 903), (735, 888)], ids=["mistral-7b", "phi-2.7b"])
def test_calms_other_models_read_the_same_share(gf4, fp16):
    """[CALM] Mistral 7B 0.863, Phi 2.7B 0.828: within 0.03 of the Llama2 7B pair that set the rate."""
    assert gf4 / fp16 == pytest.approx(RATE, abs=0.03)


# Held out, engine figures (RTX 4090; stated quant_kernel before -> after is unstated -> fused_gemv):
# id: (model preset, context_len, output_tokens, extra inference fields, published tok/s, ours unstated, ours fused)
CASES = {
    # [MLCPB] 13B q4f16_1 (4.5 bits a weight: a 4-bit value and an fp16 scale per 32; priced at unstated 4.25)
    "mlc-4090-llama2-13b-q4f16": ("llama-2-13b", 296, 256, {}, 113.5, 78.317, 104.596),
    # [EXL2] at test_inference.py -s's first window (position 1 + 127 tokens): how the README's lengths are read
    # here, an assumption (the README does not say); at the product's defaults (4,096 / 256) the 7B GPTQ row reads
    # -29.2% (aud51b's case, xfail kept): the KV read of a 4,096-token context is the whole difference
    "exl2-4090-llama-7b-gptq-first-window": (
        "llama-2-7b",
        128,
        127,
        {"quant_format": "gptq"},
        198.0,
        155.159,
        206.452,
    ),
    "exl2-4090-llama-13b-gptq-first-window": (
        "llama-2-13b",
        128,
        127,
        {"quant_format": "gptq"},
        111.0,
        80.623,
        107.920,
    ),
    # EXL2 4.0 bpw (its scales included in the 4.0): no format value states it; unstated 4.25 is priced
    "exl2-4090-llama2-7b-4.0bpw-first-window": ("llama-2-7b", 128, 127, {}, 207.0, 151.909, 202.204),
}


def ours(case: str, kernel: str) -> float:
    preset, ctx, out, extra, *_ = CASES[case]
    spec = {
        "name": f"q4k-{case}",
        "task": "inference",
        "precision": "fp16",
        "weight_quantization": "int4",
        "model": {"preset": preset},
        "inference": {
            "concurrency": 1,
            "context_len": ctx,
            "output_tokens": out,
            "kv_cache_dtype": "fp16",
            "quant_kernel": kernel,
            **extra,
        },
    }
    report = size_spec_document(copy.deepcopy(spec), ["rtx-4090"], calibrate=False)
    return float(report["throughput"]["decode_tokens_per_second_per_stream"])


@pytest.mark.django_db
@pytest.mark.parametrize("case", list(CASES))
def test_purpose_built_int4_decode_within_15_percent(bundled_catalog, case):
    """Unstated (0.617) reads every row 21-31% low; fused_gemv (0.836) lands them: MLC 13B 78.317 (-31.0%) ->
    104.596 (-7.8%); exllamav2 7B GPTQ 155.159 (-21.6%) -> 206.452 (+4.3%), 13B GPTQ 80.623 (-27.4%) -> 107.920
    (-2.8%), EXL2 4.0 bpw 151.909 (-26.6%) -> 202.204 (-2.3%)."""
    *_, published, before, after = CASES[case]
    unstated = ours(case, "unstated")
    assert unstated == pytest.approx(before, rel=2e-3)
    assert unstated < published * (1 - SPEED)
    fused = ours(case, "fused_gemv")
    assert fused == pytest.approx(after, rel=2e-3)
    assert fused == pytest.approx(published, rel=SPEED)


# llama.cpp is not in the class. Its Q4 share of its own F16 rate, bytes a token counted from the GGUF types
# (ggml-quants: Q4_0 18 bytes a 32-block = 4.5 bits, Q4_K 144 bytes a 256-block = 4.5, Q6_K 210 / 256 = 6.5625;
# llama.cpp llama_tensor_get_type: output.weight Q6_K in both files; Q4_K_M gives attn_v and ffn_down Q6_K where
# use_more_bits(i, 32): layers 0-3, 28-31 and every third from 6, 16 of 32), token_embd left out (a row lookup):
#   LLaMA 2 7B: linears 32 x (4 x 4096^2 + 3 x 4096 x 11008) = 6.476e9, output 32000 x 4096 = 1.311e8
#     F16 (6.476e9 + 1.311e8) x 2 = 13.214e9 B; Q4_0 6.476e9 x 4.5 / 8 + 1.311e8 x 6.5625 / 8 = 3.750e9 B
#   LLaMA 3 8B: linears 32 x (2 x 4096^2 + 2 x 4096 x 1024 + 3 x 4096 x 14336) = 6.979e9, output 128256 x 4096
#     = 5.253e8; F16 (6.979e9 + 5.253e8) x 2 = 15.009e9 B; Q4_K_M: 16 x (4096 x 1024 + 14336 x 4096) = 1.007e9 at
#     Q6_K + 5.972e9 at Q4_K + output at Q6_K = 0.826e9 + 3.359e9 + 0.431e9 = 4.616e9 B (4.80 bits a linear weight)
# share = tok/s(Q4) x bytes(Q4) / (tok/s(F16) x bytes(F16))
LLAMA2_7B_F16, LLAMA2_7B_Q4_0 = 13.214e9, 3.750e9
LLAMA3_8B_F16, LLAMA3_8B_Q4_K_M = 15.009e9, 4.616e9
LLAMA_CPP_PAIRS = {
    # card: (Q4 tok/s, Q4 bytes, F16 tok/s, F16 bytes, share by hand)
    "3090-7b-q4_0": (120.6, LLAMA2_7B_Q4_0, 51.85, LLAMA2_7B_F16, 0.660),
    "4090-7b-q4_0": (149.37, LLAMA2_7B_Q4_0, 60.78, LLAMA2_7B_F16, 0.697),
    "a6000-7b-q4_0": (111.57, LLAMA2_7B_Q4_0, 44.01, LLAMA2_7B_F16, 0.719),
    "6000ada-7b-q4_0": (127.45, LLAMA2_7B_Q4_0, 50.56, LLAMA2_7B_F16, 0.715),
    "3090-8b-q4_k_m": (115.42, LLAMA3_8B_Q4_K_M, 47.40, LLAMA3_8B_F16, 0.749),
    "4090-8b-q4_k_m": (130.58, LLAMA3_8B_Q4_K_M, 54.84, LLAMA3_8B_F16, 0.732),
    "4080-8b-q4_k_m": (108.15, LLAMA3_8B_Q4_K_M, 40.58, LLAMA3_8B_F16, 0.820),
    # A100 / H100 PCIe: a per-token floor (7.3-7.5 ms at 136 / 134 tok/s whatever the bytes), not a read rate
    "a100-7b-q4_0": (136.24, LLAMA2_7B_Q4_0, 73.83, LLAMA2_7B_F16, 0.524),
    "h100pcie-7b-q4_0": (133.77, LLAMA2_7B_Q4_0, 83.32, LLAMA2_7B_F16, 0.456),
}


def test_the_byte_counts_are_the_gguf_types():
    assert 6.476e9 * 4.5 / 8 + 1.311e8 * 6.5625 / 8 == pytest.approx(LLAMA2_7B_Q4_0, rel=1e-3)
    q6k = 16 * (4096 * 1024 + 14336 * 4096)
    linears = 32 * (2 * 4096**2 + 2 * 4096 * 1024 + 3 * 4096 * 14336)
    q4km = q6k * 6.5625 / 8 + (linears - q6k) * 4.5 / 8 + 128256 * 4096 * 6.5625 / 8
    assert q4km == pytest.approx(LLAMA3_8B_Q4_K_M, rel=1e-3)
    assert (q6k * 6.5625 + (linears - q6k) * 4.5) / linears == pytest.approx(4.80, abs=0.01)


@pytest.mark.parametrize("pair", list(LLAMA_CPP_PAIRS))
def test_llama_cpp_q4_reads_below_the_fused_gemv_class(pair):
    """llama.cpp (Dec 2023 / May 2024 builds) reads its Q4 weights at 0.66-0.82 of its own F16 rate on five
    GeForce / workstation cards and 0.46-0.52 on the A100 / H100 PCIe: below calm's 0.836 on every card, so
    fused_gemv does not price it (state it unstated; a llama.cpp value would need its own rate and a GGUF
    bits-per-weight format, not built)."""
    q4_tps, q4_bytes, f16_tps, f16_bytes, share = LLAMA_CPP_PAIRS[pair]
    got = q4_tps * q4_bytes / (f16_tps * f16_bytes)
    assert got == pytest.approx(share, abs=0.002)
    assert got < RATE - 0.01
