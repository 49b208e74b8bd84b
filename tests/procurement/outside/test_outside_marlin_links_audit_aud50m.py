"""Outside audit of fix50b (aud50m, stop 50): inference.quant_kernel marlin and the module-only board links, judged
on cases the change's author did not use (tests/ grepped for each source and figure first: the Qwen2.5-32B vLLM
table, the page's 7B / 14B AWQ vLLM rows, the Marlin README's per-model figure, the Marlin bench.py layer lists and
vLLM's kernel selection code appear in no earlier test; [M2497] is the author's own source, re-read here).

Sources:
  [M2497]  vllm-project/vllm#2497 (Marlin integration), resorcap's comment 2024-01-24: "Test marlin in more batches
           with https://github.com/IST-DASLab/marlin/blob/master/bench.py." then "batch=0001: s=0.00014,
           TFLOP/s=004.626, GB/s=1158.601, speedup=3.12" ... "batch=0064: s=0.00029, TFLOP/s=139.662,
           GB/s=0582.332, speedup=1.47" ... "batch=4000: s=0.01776, TFLOP/s=141.124, GB/s=0045.616, speedup=0.61".
           No GPU is named.
  [BENCH]  IST-DASLab/marlin @ac6988b2 (Version 0.1, 2024-01-17; the bench.py the comment links, unchanged in
           its printing until 0f102e1 on 2024-01-26) bench.py: 'TFLOP/s' = 2 * m * k * n / s, quant 'GB/s' =
           (2 * A + 4 * B.numel() + 2 * C + 2 * s.numel()) / s with B.numel() = k * n / 8 and s of shape (k /
           groupsize, n); a model's line sums its layers' times and time-weights the rest; 'Llama13B': (5120, 3 *
           5120), (5120, 5120), (5120, 2 * 13568), (13568, 5120); ALL=True runs groupsize -1 first, then 128.
  [README] IST-DASLab/marlin README.md @2f6d7c10 and assets/models.png @ac6988b2 ("Marlin (group=128) performance
           on layer shapes of popular models - BATCHSIZE 16", speedup over FP16 PyTorch; bar heights read off the
           figure, +-0.05): A100 Llama7B 2.22, Llama13B 2.80, Llama33B 3.04, Llama65B 3.20, Falcon180B 3.64;
           A10 3.69 / 3.79 / 3.83 / 3.85 / 3.75; 3090 3.60 / 3.69 / 4.14 / 4.05 / 4.25; A6000 3.40 / 3.65 /
           3.78 / 3.87 / 3.81. README: "NVIDIA GPU with compute capability >= 8.0 (Ampere or Ada, Marlin is not yet
           optimized for Hopper)".
  [VLLMQ]  vllm-project/vllm vllm/model_executor/layers/quantization/awq_marlin.py (read_file id 51912901647;
           the selection logic below is the same since 0.5.x): AWQMarlinConfig.get_min_capability() returns 80;
           is_awq_marlin_compatible returns False when `not current_platform.is_cuda()`; override_quantization_method
           converts only when the user passes no quantization (or marlin / awq_marlin): "you specified
           quantization=awq explicitly, so forcing awq". kernels/__init__.py at the 0.6.x layout (id 1214025264):
           `_POSSIBLE_KERNELS = [MacheteLinearKernel, MarlinLinearKernel]` "in priority/performance order":
           gptq_marlin layers on a capability-90 card (H100 / H200) run Machete, not Marlin.
  [QWBENCH] QwenLM/Qwen2.5 speed_benchmark_vllm.py (read_file id 5174213362): `LLM(model=..., trust_remote_code,
           tensor_parallel_size, gpu_memory_utilization, disable_log_stats, max_model_len[, enforce_eager])`, no
           `quantization`: vLLM picks gptq_marlin / awq_marlin on the A100 (capability 80, CUDA).
  [QW25]   QwenLM/Qwen2.5 @010c37c3 docs/source/benchmark/speed_benchmark.rst (read_file id 9548273640): NVIDIA A100
           80GB, vLLM 0.6.3, batch 1, 2,048 generated tokens, gpu_memory_utilization 0.9, max_model_len 32768,
           enforce_eager False. "- 32B (vLLM)": GPTQ-Int4 1 GPU 55.83 / 49.96 / 44.79 / 35.66 and AWQ 51.92 / 46.68 /
           41.83 / 33.75 tokens/s at inputs 1 / 6144 / 14336 / 30720; "- 7B (vLLM)" AWQ 148.10 / 137.64 / 124.91 /
           104.66; "- 14B (vLLM)" AWQ 92.66 / 83.11 / 74.03 / 59.01. Qwen2.5-32B-Instruct config: 64 layers, hidden
           5,120, 40 heads, 8 KV heads, intermediate 27,648, vocab 152,064, untied, QKV bias.
"""

from __future__ import annotations

import copy

import pytest

from procurement.api.sizing import size_spec_document
from procurement.ranking.interconnects import (
    CDNA3_WHITE_PAPER,
    HGX_PAGE,
    UNSTATED_SOURCE,
    bundled_rules,
    resolve,
)
from procurement.sizing.assumptions import INT4_BITS, MARLIN_INT4_DECODE_EFFICIENCY

A100 = "a100-sxm4-80gb"
LLM_SPEED = 0.15

QWEN25_32B = {
    "name": "qwen2.5-32b",
    "num_layers": 64,
    "hidden_size": 5120,
    "num_attention_heads": 40,
    "num_key_value_heads": 8,
    "intermediate_size": 27648,
    "vocab_size": 152064,
    "attention_qkv_bias": True,
}


def spec(
    model, prompt: int, kernel: str | None = "marlin", concurrency: int = 1, output: int = 2048, **extra
):
    s = {
        "task": "inference",
        "model": model if isinstance(model, dict) else {"preset": model},
        "precision": "fp16",
        "weight_quantization": "int4",
        "inference": {
            "concurrency": concurrency,
            "context_len": prompt + output,
            "output_tokens": output,
            "engine": "vllm_v0",
        },
    }
    if kernel:
        s["inference"]["quant_kernel"] = kernel
    return s | extra


def candidate(s: dict, gpu: str) -> dict:
    report = size_spec_document(copy.deepcopy(s), [gpu], calibrate=False)
    gpus = s.get("parallelism", {}).get("gpus", 1)
    return next(c for c in report["candidates"] if c["gpu"] == gpu and c["gpus"] == gpus)


def end_to_end(s: dict, gpu: str = A100) -> float:
    """The page's figure: 2,048 generated tokens over the whole generate call (first token + decode)."""
    t = candidate(s, gpu)["throughput"]
    out = s["inference"]["output_tokens"]
    return out / (t["time_to_first_token_seconds"] + out / t["decode_tokens_per_second_per_stream"])


# ---------------------------------------------------------------------------------------------------------------
# 1. Is 0.804 what [M2497] measured?  The row is Llama-13B's four layers at groupsize -1, not 'ideal' at 128.
# ---------------------------------------------------------------------------------------------------------------
M2497 = {  # batch: (s, TFLOP/s, GB/s, speedup)
    1: (0.00014, 4.626, 1158.601, 3.12),
    128: (0.00057, 140.903, 312.117, 1.01),
    4000: (0.01776, 141.124, 45.616, 0.61),
}
LLAMA13B_LAYERS = [(5120, 3 * 5120), (5120, 5120), (5120, 2 * 13568), (13568, 5120)]  # (k, n), [BENCH]
KN_13B = sum(k * n for k, n in LLAMA13B_LAYERS)  # 313,262,080 weights
K_SUM, N_SUM = sum(k for k, _ in LLAMA13B_LAYERS), sum(n for _, n in LLAMA13B_LAYERS)


def bench_bytes(m: int, groupsize: int) -> float:
    """bench.py's quant byte count over the four layers: 4-bit weights, A and C in fp16, the fp16 scales."""
    scales = sum((k // (k if groupsize == -1 else groupsize)) * n for k, n in LLAMA13B_LAYERS)
    return KN_13B / 2 + 2 * m * K_SUM + 2 * m * N_SUM + 2 * scales


def test_the_2497_row_is_llama13b_layers_at_groupsize_minus_1():
    # the weights a line multiplies: 2 m k n = TFLOP/s x s; the batch-4000 row (s to 4 digits) pins it
    _, tflops, _, _ = M2497[4000]
    s4000 = M2497[4000][0]
    assert tflops * 1e12 * s4000 / (2 * 4000) == pytest.approx(
        KN_13B, rel=0.002
    )  # not 'ideal' (A100: 3.06e9)
    # bytes per weight at batch 1, independent of the rounded s: GB/s / TFLOP/s x 2 m
    _, tflops1, gbps1, _ = M2497[1]
    per_weight = gbps1 * 1e9 * 2 / (tflops1 * 1e12)  # bytes / (k n) at m = 1
    assert per_weight == pytest.approx(bench_bytes(1, -1) / KN_13B, abs=2e-4)  # 0.50086: 4.0 bits
    assert per_weight != pytest.approx(bench_bytes(1, 128) / KN_13B, abs=5e-3)  # 0.5162 at group 128
    # so the 3.12x is time(fp16) / time(4.0-bit weights): fp16 moved 2 k n bytes in 3.12 x the time
    fp16_gbps = 2 * KN_13B / (3.12 * 2 * KN_13B / (tflops1 * 1e12)) / 1e9
    assert fp16_gbps == pytest.approx(1483, rel=0.005)  # > A10 600 / 3090 936 / A6000 768: a >= 1.5 TB/s card
    assert gbps1 / fp16_gbps == pytest.approx(3.12 * 4.0 / 16, abs=0.002)  # 0.78, not 3.12 x 4.125 / 16


# FIXED (fix50m): 0.804 -> 0.780 (assumptions.MARLIN_INT4_DECODE_EFFICIENCY, the row's own 4.0 bits)
def test_the_marlin_rate_is_the_rows_own_bits():
    assert MARLIN_INT4_DECODE_EFFICIENCY.value == pytest.approx(3.12 * 4.0 / 16, abs=0.005)


# ---------------------------------------------------------------------------------------------------------------
# 2. Held-out end-to-end rows: Qwen2.5-32B GPTQ-Int4 / AWQ and the 7B / 14B AWQ rows, vLLM 0.6.3 on one A100.
# ---------------------------------------------------------------------------------------------------------------
QW25_HELD_OUT = {  # (model, format, input tokens): published tokens/s [QW25]
    ("32b", "gptq", 1): 55.83,
    ("32b", "gptq", 6144): 49.96,
    ("32b", "gptq", 14336): 44.79,
    ("32b", "gptq", 30720): 35.66,
    ("32b", "awq", 1): 51.92,
    ("32b", "awq", 6144): 46.68,
    ("32b", "awq", 14336): 41.83,
    ("32b", "awq", 30720): 33.75,
    ("7b", "awq", 30720): 104.66,
    ("14b", "awq", 1): 92.66,
    ("14b", "awq", 6144): 83.11,
    ("14b", "awq", 14336): 74.03,
    ("14b", "awq", 30720): 59.01,
}
# ours (marlin stated; fix50m: 0.780, the 16-bit lm_head at the 16-bit rate): 32B GPTQ -0.6 / -0.4 / -3.2 / -5.3%,
# AWQ +6.9 / +6.6 / +3.6 / +0.1%; 7B AWQ 30720 +13.3%; 14B AWQ +15.0 (106.55 / 92.66: 14.99%) / +12.8 / +8.0 / +1.7%
# (aud50m, 0.804: 32B GPTQ +0.4 / +0.5 / -2.5 / -4.7%, AWQ +7.9 / +7.5 / +4.5 / +0.7%; 7B AWQ 14336 / 30720 +14.5 /
# +12.1%; 14B AWQ +14.0 / +12.0 / +7.3 / +1.3%). The 7B AWQ inputs 1 / 6144 / 14336 are below.
QW25_7B_AWQ_MISSES = {("7b", "awq", 1): 148.10, ("7b", "awq", 6144): 137.64, ("7b", "awq", 14336): 124.91}
# the same page's Qwen2.5-7B-Instruct GPTQ-Int4 vLLM rows (gptq_marlin on the A100, symmetric, no zero points):
# QwenLM/Qwen2.5 @010c37c3 docs/source/benchmark/speed_benchmark.rst "- 7B (vLLM)", inputs 1 / 6144 / 14336 / 30720
# (also tests/procurement/outside/test_outside_vllm_v0_host_audit_stop48.py)
QW25_7B_GPTQ = {1: 154.05, 6144: 141.98, 14336: 129.35, 30720: 108.30}


def _model(size: str):
    return QWEN25_32B if size == "32b" else f"qwen2.5-{size}"


@pytest.mark.django_db
@pytest.mark.parametrize("row", list(QW25_HELD_OUT), ids=[f"{m}-{f}-{n}" for m, f, n in QW25_HELD_OUT])
def test_qwen25_vllm063_int4_rows_with_marlin_stated(bundled_catalog, row):
    size, _, prompt = row
    ours = end_to_end(spec(_model(size), prompt))
    print(f"\n{row}: published {QW25_HELD_OUT[row]}, ours {ours:.2f} ({ours / QW25_HELD_OUT[row] - 1:+.1%})")
    assert ours == pytest.approx(QW25_HELD_OUT[row], rel=LLM_SPEED)


R_7B_AWQ = (
    "EXPLAINED (fix50m; qfmt): [QW25] Qwen2.5-7B-Instruct-AWQ, one A100 80GB, vLLM 0.6.3 (awq_marlin: [VLLMQ], [QWBENCH]), "
    "batch 1, 2,048 out: input {n} published {pub} tokens/s, ours {ours} ({e}) with quant_kernel marlin (aud50m: "
    "{before} at 0.804; the 0.780 rate alone reads {alone}; with the 16-bit lm_head at the 16-bit rate too, both "
    "fix50m, "
    "{after}). Cause, sized on other rows of the same page and run (test_the_7b_awq_rows_run_below_the_gptq_rows): "
    "the same model's GPTQ-Int4 checkpoint (gptq_marlin, symmetric, no zero points) reads {gptq} tokens/s there, "
    "AWQ / GPTQ-Int4 = {ratio}: awq_marlin dequantizes zero points as well as scales. Ours prices both formats "
    "alike (int4, 4.25 bits) and reads {gptq_e} against the GPTQ-Int4 row, within 15%. qfmt: the row now states "
    "inference.quant_format awq and reads {awq} ({awq_e}; unstated {ours} ({e})): AWQ's bytes are 4 + (16 + 4) / 128 "
    "= 4.156 bits (vLLM v0.6.3 awq.py create_weights: qweight, qzeros, fp16 scales), not 4.25, so the read is 2.2% "
    "lighter and the gap widens. The zero points' cost is in awq_marlin's dequantization, not its bytes (4 / 128 = "
    "0.03 bits); no source measures that rate apart from these rows, so no rate is set (a kernel rate from a "
    "measurement of awq_marlin against gptq_marlin on other shapes would close it)."
)
# qfmt: the rows state inference.quant_format awq (4.15625 bits): input: (ours, error). Before (unstated, 4.25 bits):
# 173.50 / 160.67 / 144.98 (_MISS_FIGURES); after 175.60 / 162.46 / 146.44.
_AWQ_FIGURES = {1: ("175.60", "+18.6%"), 6144: ("162.46", "+18.0%"), 14336: ("146.44", "+17.2%")}
_MISS_FIGURES = {  # input: (ours, error, aud50m's, 0.780 alone, GPTQ-Int4 error)
    1: ("173.50", "+17.2%", "170.75 (+15.3%)", "167.25 (+12.9%)", "+12.6%"),
    6144: ("160.67", "+16.7%", "158.29 (+15.0%)", "155.29 (+12.8%)", "+13.2%"),
    14336: ("144.98", "+16.1%", "143.02 (+14.5%)", "140.59 (+12.6%)", "+12.1%"),
}


def _miss(prompt: int):
    ours, e, before, alone, gptq_e = _MISS_FIGURES[prompt]
    pub = QW25_7B_AWQ_MISSES[("7b", "awq", prompt)]
    reason = R_7B_AWQ.format(
        n=prompt,
        pub=pub,
        ours=ours,
        e=e,
        before=before,
        alone=alone,
        after=f"{ours} ({e})",
        gptq=QW25_7B_GPTQ[prompt],
        ratio=f"{pub / QW25_7B_GPTQ[prompt]:.3f}",
        gptq_e=gptq_e,
        awq=_AWQ_FIGURES[prompt][0],
        awq_e=_AWQ_FIGURES[prompt][1],
    )
    return pytest.param(prompt, marks=pytest.mark.xfail(strict=True, reason=reason), id=str(prompt))


@pytest.mark.django_db
@pytest.mark.parametrize("prompt", [_miss(n) for n in (1, 6144, 14336)])
def test_qwen25_7b_awq_rows_the_held_out_set_misses(bundled_catalog, prompt):
    stated = spec("qwen2.5-7b", prompt)
    stated["inference"]["quant_format"] = "awq"  # qfmt: the checkpoint's format stated
    assert end_to_end(stated) == pytest.approx(QW25_7B_AWQ_MISSES[("7b", "awq", prompt)], rel=LLM_SPEED)


@pytest.mark.django_db
def test_the_7b_awq_rows_run_below_the_gptq_rows(bundled_catalog):
    """The sized cause of the 7B AWQ misses: on the same page, card and vLLM, the AWQ checkpoint runs 3.1-3.9% below
    the GPTQ-Int4 one at every input ([QW25]), and ours (one int4 price for both) lands within 15% of GPTQ-Int4."""
    for prompt, pub in QW25_7B_GPTQ.items():
        awq = QW25_7B_AWQ_MISSES.get(("7b", "awq", prompt), 104.66)
        assert 0.96 < awq / pub < 0.97
        assert end_to_end(spec("qwen2.5-7b", prompt)) == pytest.approx(pub, rel=LLM_SPEED)


@pytest.mark.django_db
def test_the_quoted_figures(bundled_catalog, monkeypatch):
    """The figures the reasons quote, at this version, and the same rows with the lm_head read at the kernel's rate
    (0.780 alone, before fix50m's lm_head fix)."""
    from procurement.sizing import throughput

    for prompt, (ours, *_rest) in _MISS_FIGURES.items():
        assert end_to_end(spec("qwen2.5-7b", prompt)) == pytest.approx(float(ours), rel=0.005)
    for prompt, (awq, _e) in _AWQ_FIGURES.items():
        stated = spec("qwen2.5-7b", prompt)
        stated["inference"]["quant_format"] = "awq"
        assert end_to_end(stated) == pytest.approx(float(awq), rel=0.005)
    monkeypatch.setattr(throughput, "sixteen_bit_read_bytes", lambda spec: 0.0)
    for prompt, (*_head, alone, _gptq) in _MISS_FIGURES.items():
        assert end_to_end(spec("qwen2.5-7b", prompt)) == pytest.approx(float(alone.split()[0]), rel=0.005)


# ---------------------------------------------------------------------------------------------------------------
# 3. Mechanism: what the marlin rate divides.
# ---------------------------------------------------------------------------------------------------------------
# FIXED (fix50m): only the quantized layers' bytes are divided by the kernel's rate (throughput.sixteen_bit_read_bytes)
def test_the_16_bit_lm_head_is_read_at_the_16_bit_rate():
    from procurement.sizing import throughput
    from procurement.sizing.bytes_model import weights_bytes
    from procurement.sizing.spec import parse_workload_spec

    s = parse_workload_spec(spec("qwen2.5-7b", 1))
    eff = throughput.decode_efficiency(s)
    weight_read, _ = throughput.decode_read_bytes(s, 1)
    table = (
        s.model.vocab_size * s.model.hidden_size * 2.0
    )  # the untied input table (a lookup) and the lm_head
    stored = weights_bytes(s) - table  # the bytes a decode step reads, before the kernel's rate
    assert weight_read == pytest.approx((stored - table) / eff + table, rel=1e-3)


# ---------------------------------------------------------------------------------------------------------------
# 4. Does the rate hold on other cards?  [README]'s batch-16 figure against the one constant.
# ---------------------------------------------------------------------------------------------------------------
# fix50m: the rate by card (throughput.decode_efficiency with the card's generation and bandwidth): A100-class 0.780
# ([M2497]), GA102 1.0 (the README's A10 peak figure, assets/peak.png: "the maximum possible 3.87x", not models.png).
# fp16 time / marlin time at the product's 4.25 bits: 16 / 4.25 x rate (A100 2.94x, GA102 3.76x).
CARD_SLUG = {"A100": "a100-sxm4-80gb", "A10": "a10", "3090": "rtx-3090", "A6000": "rtx-a6000"}


def implied_speedup(card: str) -> float:
    from procurement.sizing import throughput
    from procurement.sizing.gpus import gpu_by_slug
    from procurement.sizing.spec import parse_workload_spec

    gpu = gpu_by_slug(CARD_SLUG[card])
    s = parse_workload_spec(spec("llama-2-13b", 1))
    return (
        16.0
        / INT4_BITS.value
        * float(throughput.decode_efficiency(s, gpu.generation, gpu.memory_bandwidth_gbps))
    )


README_BS16 = {  # (card, model shapes): Marlin's speedup over fp16 PyTorch, group 128, batch 16 ([README] figure)
    ("A100", "Llama13B"): 2.80,
    ("A100", "Llama33B"): 3.04,
    ("A100", "Llama65B"): 3.20,
    ("A100", "Llama7B"): 2.22,
    ("A100", "Falcon180B"): 3.64,
    ("A10", "Llama7B"): 3.69,
    ("A10", "Llama13B"): 3.79,
    ("A10", "Llama33B"): 3.83,
    ("A10", "Llama65B"): 3.85,
    ("A10", "Falcon180B"): 3.75,
    ("3090", "Llama7B"): 3.60,
    ("3090", "Llama13B"): 3.69,
    ("3090", "Llama33B"): 4.14,
    ("3090", "Llama65B"): 4.05,
    ("3090", "Falcon180B"): 4.25,
    ("A6000", "Llama7B"): 3.40,
    ("A6000", "Llama13B"): 3.65,
    ("A6000", "Llama33B"): 3.78,
    ("A6000", "Llama65B"): 3.87,
    ("A6000", "Falcon180B"): 3.81,
}
# fix50m: GA102 rows land at 1.0 (aud50m's A10 / 3090 / A6000 Llama13B -20..-23% -> -0.7 / +2.0 / +3.1%; the other
# GA102 bars, added, -11.4..+10.7%); the A100's narrowest and widest shapes stay apart from the one A100 rate
MISS = {("A100", "Llama7B"), ("A100", "Falcon180B")}
R_CARD = (
    "UNEXPLAINED (aud50m; fix50m: rate 0.780): [README] models.png, Marlin over fp16 PyTorch at batch 16, group "
    "128: {card} {model} {pub:.2f}x; the product's A100-class marlin rate implies 16 / 4.25 x 0.780 = 2.94x on "
    "every shape ({e:+.0%}). The A100 rises with width (Llama7B 2.22, 13B 2.80, 33B 3.04, 65B 3.20, Falcon180B "
    "3.64); the rate is [M2497]'s Llama-13B batch-1 row. Against a width term: the Qwen2.5-7B GPTQ-Int4 A100 rows "
    "at batch 1 (hidden 3,584, narrower than Llama-7B) land within 13% at 0.780 "
    "(test_the_7b_awq_rows_run_below_the_gptq_rows), so the batch-16 fall may not hold at decode's batch 1. Lead: "
    "a batch-1 Marlin measurement on an A100 across widths (bench.py's model list at batch 1)."
)


@pytest.mark.parametrize(
    "row",
    [
        pytest.param(
            r,
            marks=[
                pytest.mark.xfail(
                    strict=True,
                    reason=R_CARD.format(
                        card=r[0],
                        model=r[1],
                        pub=README_BS16[r],
                        e=16.0 / 4.25 * 0.780 / README_BS16[r] - 1,
                    ),
                )
            ]
            if r in MISS
            else [],
        )
        for r in README_BS16
    ],
    ids=[f"{c}-{m}" for c, m in README_BS16],
)
def test_the_marlin_rate_against_the_readme_per_card_figure(row):
    assert implied_speedup(row[0]) == pytest.approx(README_BS16[row], rel=LLM_SPEED)


# ---------------------------------------------------------------------------------------------------------------
# 5. Where vLLM does not run Marlin ([VLLMQ]): capability < 8.0 (T4, V100) and ROCm (MI300X).
# ---------------------------------------------------------------------------------------------------------------
# FIXED (fix50m): a marlin spec prices the unstated int4 rate where vLLM cannot run Marlin ([VLLMQ]: capability
# below 8.0, or off CUDA) and says so in the row's speed_basis (throughput.marlin_text), in the ranking too
@pytest.mark.django_db
@pytest.mark.parametrize("gpu", ["t4", "v100-sxm2-16gb", "mi300x"])
def test_marlin_is_not_priced_where_vllm_cannot_run_it(bundled_catalog, gpu):
    marlin = candidate(spec("llama-2-13b", 128, output=128), gpu)
    unstated = candidate(spec("llama-2-13b", 128, kernel=None, output=128), gpu)
    m, u = (c["throughput"]["decode_tokens_per_second_per_stream"] for c in (marlin, unstated))
    assert m == pytest.approx(u, rel=0.01) or not marlin.get("fits", True)
    assert "vLLM cannot run Marlin" in marlin["speed_basis"]


@pytest.mark.django_db
def test_marlin_moves_the_a100_as_the_change_says(bundled_catalog):
    """The counterpart on a card Marlin runs on: 0.804 against 0.617 on the weights; at concurrency 128 the step is
    compute-bound and the kernel no longer matters ([M2497]: 1.01x fp16 at batch 128; ours 1.00x of unstated)."""
    one = [candidate(spec("llama-2-13b", 1, kernel=k, output=128), A100) for k in ("marlin", None)]
    many = [
        candidate(spec("llama-2-13b", 128, kernel=k, concurrency=128, output=128), A100)
        for k in ("marlin", None)
    ]
    r1, r128 = (
        a["throughput"]["decode_tokens_per_second_per_stream"]
        / b["throughput"]["decode_tokens_per_second_per_stream"]
        for a, b in (one, many)
    )
    assert r1 > 1.15 and r128 == pytest.approx(1.0, abs=0.01)


# ---------------------------------------------------------------------------------------------------------------
# 6. The board-link rule on every bundled offer it can touch (mi300x, mi325x, b200).
# ---------------------------------------------------------------------------------------------------------------
@pytest.mark.django_db
def test_every_bundled_module_only_offer_resolves_to_its_board(bundled_catalog):
    """Bundled catalog, all offers of the three parts: MI300X (OCI BM.GPU.MI300X.8, RunPod 1/2/4/8x) take the
    CDNA 3 white paper's 7 x 64 GB/s; every B200 offer but one already had a stated NVLink 5 rule; the one that
    moves is gcp-gpu-B200-x8 (no rule names SkyPilot's GCP name; GCP's a4-highgpu-8g rule, with its 3,200 Gbps
    GPUDirect RDMA fabric, names the API type): NVLink 5 now, still no fabric, as before."""
    from pricing.models import InstanceType
    from tests.procurement.test_ranking import GPUS

    moved = {}
    for it in InstanceType.objects.select_related("provider", "gpu").filter(
        gpu__slug__in=["mi300x", "mi325x", "b200"]
    ):
        link = resolve(it.provider.slug, it.name, GPUS[it.gpu.slug])
        assert link.stated and link.node_link in ("nvlink", "infinity_fabric"), (it.provider.slug, it.name)
        if link.source_url in (CDNA3_WHITE_PAPER, HGX_PAGE) and not any(
            r.matches(it.provider.slug, it.name) for r in bundled_rules()
        ):
            moved[(it.provider.slug, it.name)] = (link.node_link, link.node_gbps_per_direction, link.fabric)
    assert moved == {
        ("oci", "BM.GPU.MI300X.8"): ("infinity_fabric", 448.0, ""),
        ("runpod", "1x_MI300X_SECURE"): ("infinity_fabric", 448.0, ""),
        ("runpod", "2x_MI300X_SECURE"): ("infinity_fabric", 448.0, ""),
        ("runpod", "4x_MI300X_SECURE"): ("infinity_fabric", 448.0, ""),
        ("runpod", "8x_MI300X_SECURE"): ("infinity_fabric", 448.0, ""),
        ("gcp", "gcp-gpu-B200-x8"): ("nvlink", 900.0, ""),
    }


@pytest.mark.django_db
def test_parts_with_a_pcie_twin_keep_the_assumed_pcie(bundled_catalog):
    """H100 SXM / H200 slugs also receive bare 'H100' / 'H200' names (PCIe H100, H100 NVL, H200 NVL exist): an
    offer no rule names stays PCIe, assumed."""
    from tests.procurement.test_ranking import GPUS

    for slug in ("h100-sxm5-80gb", "h200-sxm-141gb", "a100-sxm4-80gb", "gaudi3"):
        link = resolve("nosuchprovider", "x-8", GPUS[slug])
        assert (link.node_link, link.stated, link.source_url) == ("pcie", False, UNSTATED_SOURCE)
