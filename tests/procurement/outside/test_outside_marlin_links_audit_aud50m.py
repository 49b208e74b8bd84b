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


@pytest.mark.xfail(
    strict=True,
    reason=(
        "UNEXPLAINED (aud50m): marlin_int4_decode_bandwidth_efficiency is 0.804 = 3.12 x 4.125 / 16, but [M2497]'s "
        "3.12x row is bench.py's Llama-13B layer list (k n = 3.133e8 from the batch-4000 row) at groupsize -1 "
        "(0.5009 bytes a weight from GB/s / TFLOP/s, where group 128 gives 0.5162): 4.0 bits moved, so the rate is "
        "3.12 x 4 / 16 = 0.780 (fp16 1,483 GB/s, Marlin 1,159 GB/s on the same card). -3% on every marlin weight "
        "read; Qwen2.5-72B AWQ TP 2 would read about 43.3 tokens/s (-2%), still within 15%. Fix: 0.780 and the "
        "shape / groupsize in the assumption's text."
    ),
)
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
    ("7b", "awq", 14336): 124.91,
    ("7b", "awq", 30720): 104.66,
    ("14b", "awq", 1): 92.66,
    ("14b", "awq", 6144): 83.11,
    ("14b", "awq", 14336): 74.03,
    ("14b", "awq", 30720): 59.01,
}
# ours (marlin stated): 32B GPTQ +0.4 / +0.5 / -2.5 / -4.7%, AWQ +7.9 / +7.5 / +4.5 / +0.7%; 7B AWQ 14336 / 30720
# +14.5 / +12.1%; 14B AWQ +14.0 / +12.0 / +7.3 / +1.3%. The 7B AWQ inputs 1 / 6144 (+15.3 / +15.0%) are below.
QW25_7B_AWQ_MISSES = {("7b", "awq", 1): 148.10, ("7b", "awq", 6144): 137.64}


def _model(size: str):
    return QWEN25_32B if size == "32b" else f"qwen2.5-{size}"


@pytest.mark.django_db
@pytest.mark.parametrize("row", list(QW25_HELD_OUT), ids=[f"{m}-{f}-{n}" for m, f, n in QW25_HELD_OUT])
def test_qwen25_vllm063_int4_rows_with_marlin_stated(bundled_catalog, row):
    size, _, prompt = row
    ours = end_to_end(spec(_model(size), prompt))
    print(f"\n{row}: published {QW25_HELD_OUT[row]}, ours {ours:.2f} ({ours / QW25_HELD_OUT[row] - 1:+.1%})")
    assert ours == pytest.approx(QW25_HELD_OUT[row], rel=LLM_SPEED)


# the AWQ rows of the 7B table read > 15% fast (+15.3 / +15.0%); 6144's +15.0% is a hair outside (158.29 / 137.64)
R_7B_AWQ = (
    "UNEXPLAINED (aud50m): [QW25] Qwen2.5-7B-Instruct-AWQ, one A100 80GB, vLLM 0.6.3 (awq_marlin: [VLLMQ], [QWBENCH]), "
    "batch 1, 2,048 out: input {n} published {pub} tokens/s, ours {ours} ({e}) with quant_kernel marlin. Leads, "
    "sized apart from the row: (1) the Marlin rate is 0.780 by [M2497]'s own bytes (test_the_2497_row_is_llama13b_"
    "layers_at_groupsize_minus_1), not 0.804: at 0.780 the row reads {fixed} and passes; (2) AWQ checkpoints carry "
    "zero points that awq_marlin dequantizes and GPTQ-Int4 (sym) ones do not: on the same page AWQ runs 3.9% / 5.5% "
    "/ 7.0% / 4.3% below GPTQ-Int4 at 7B / 14B / 32B / 72B input 1, which no spec field states (the product prices "
    "both as int4 at 4.25 bits). Against: the 16-bit lm_head is read at the Marlin rate too "
    "(test_the_16_bit_lm_head_is_read_at_the_16_bit_rate), which, fixed, speeds the 7B step up (4.7% of its weight read)."
)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("prompt", "fixed"),
    [
        pytest.param(
            1,
            "167.25 (+12.9%)",
            marks=pytest.mark.xfail(
                strict=True,
                reason=R_7B_AWQ.format(n=1, pub=148.10, ours=170.75, e="+15.3%", fixed="167.25 (+12.9%)"),
            ),
        ),
        pytest.param(
            6144,
            "155.29 (+12.8%)",
            marks=pytest.mark.xfail(
                strict=True,
                reason=R_7B_AWQ.format(n=6144, pub=137.64, ours=158.29, e="+15.0%", fixed="155.29 (+12.8%)"),
            ),
        ),
    ],
)
def test_qwen25_7b_awq_rows_the_held_out_set_misses(bundled_catalog, prompt, fixed):
    assert end_to_end(spec("qwen2.5-7b", prompt)) == pytest.approx(
        QW25_7B_AWQ_MISSES[("7b", "awq", prompt)], rel=LLM_SPEED
    )


@pytest.mark.django_db
def test_the_quoted_figures(bundled_catalog, monkeypatch):
    """The figures the reasons quote, at this version, and the same rows at 0.780 (lead 1)."""
    from procurement.sizing import throughput

    assert end_to_end(spec("qwen2.5-7b", 1)) == pytest.approx(170.75, rel=0.005)
    assert end_to_end(spec("qwen2.5-7b", 6144)) == pytest.approx(158.29, rel=0.005)
    monkeypatch.setitem(throughput.DECODE_EFFICIENCY_BY_KERNEL, ("int4", "marlin"), 0.780)
    assert end_to_end(spec("qwen2.5-7b", 1)) == pytest.approx(167.25, rel=0.005)
    assert end_to_end(spec("qwen2.5-7b", 6144)) == pytest.approx(155.29, rel=0.005)


# ---------------------------------------------------------------------------------------------------------------
# 3. Mechanism: what the marlin rate divides.
# ---------------------------------------------------------------------------------------------------------------
@pytest.mark.xfail(
    strict=True,
    reason=(
        "UNEXPLAINED (aud50m): decode_read_bytes divides the whole weight read, the 16-bit lm_head included, by "
        "decode_efficiency (throughput.py `weight_read /= decode_efficiency(spec)` after only the input table is "
        "taken out). vLLM keeps an AWQ / GPTQ checkpoint's lm_head unquantized (AWQMarlinConfig lm_head_quantized "
        "defaults False: ParallelLMHead gets the unquantized method, a 16-bit GEMV), so its 1.09 GB (Qwen2.5-7B: "
        "152,064 x 3,584 x 2) should be read at the 16-bit rate: ours charges 0.27 GB more, 4.7% of the 7B's "
        "bandwidth-equivalent weight read (3.6% on 14B). Pre-existing for unstated int4 / int8 (0.617 / 0.81), "
        "inherited by marlin. Fix: divide only the quantized layers' bytes."
    ),
)
def test_the_16_bit_lm_head_is_read_at_the_16_bit_rate():
    from procurement.sizing import throughput
    from procurement.sizing.spec import parse_workload_spec

    s = parse_workload_spec(spec("qwen2.5-7b", 1))
    eff = throughput.decode_efficiency(s)
    weight_read, _ = throughput.decode_read_bytes(s, 1)
    stored = weight_read * eff  # the bytes the product reads, before the kernel's rate
    lm_head = s.model.vocab_size * s.model.hidden_size * 2.0
    assert weight_read == pytest.approx((stored - lm_head) / eff + lm_head, rel=1e-3)


# ---------------------------------------------------------------------------------------------------------------
# 4. Does the rate hold on other cards?  [README]'s batch-16 figure against the one constant.
# ---------------------------------------------------------------------------------------------------------------
IMPLIED = (
    16.0 / INT4_BITS.value * MARLIN_INT4_DECODE_EFFICIENCY.value
)  # 3.027: fp16 time / marlin time, any card
README_BS16 = {  # (card, model shapes): Marlin's speedup over fp16 PyTorch, group 128, batch 16 ([README] figure)
    ("A100", "Llama13B"): 2.80,
    ("A100", "Llama33B"): 3.04,
    ("A100", "Llama65B"): 3.20,
    ("A100", "Llama7B"): 2.22,
    ("A10", "Llama13B"): 3.79,
    ("3090", "Llama13B"): 3.69,
    ("A6000", "Llama13B"): 3.65,
}
MISS = {("A100", "Llama7B"), ("A10", "Llama13B"), ("3090", "Llama13B"), ("A6000", "Llama13B")}
R_CARD = (
    "UNEXPLAINED (aud50m): [README] models.png, Marlin over fp16 PyTorch at batch 16, group 128: {card} {model} "
    "{pub:.2f}x; the product's marlin rate implies 16 / 4.25 x 0.804 = 3.03x on every card and shape "
    "(decode_efficiency takes no GPU): {e:+.0%}. The figure's non-A100 cards (A10, 3090, A6000: Ampere GA102 / "
    "GA10x) run 3.4-4.25x, near the 3.87x ideal, and the A100 falls with width (Llama7B 2.22 .. Falcon180B 3.64). "
    "Lead: a per-architecture (or per-card) Marlin rate; the ranking's row 1 for [QW72AWQ] is an L40S (Ada), for "
    "which no Marlin figure was found here."
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
                        card=r[0], model=r[1], pub=README_BS16[r], e=IMPLIED / README_BS16[r] - 1
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
    assert IMPLIED == pytest.approx(README_BS16[row], rel=LLM_SPEED)


# ---------------------------------------------------------------------------------------------------------------
# 5. Where vLLM does not run Marlin ([VLLMQ]): capability < 8.0 (T4, V100) and ROCm (MI300X).
# ---------------------------------------------------------------------------------------------------------------
R_GATE = (
    "UNEXPLAINED (aud50m): quant_kernel marlin is accepted on {gpu} and its int4 weights read at 0.804 of the "
    "16-bit rate, 1.30x the unstated 0.617; vLLM cannot run Marlin there ([VLLMQ]: AWQMarlinConfig.get_min_"
    "capability() 80; is_awq_marlin_compatible False off CUDA; the Marlin README: capability >= 8.0): it falls back "
    "to the awq / gptq (exllama) kernels. Ranked, a marlin spec prices these rows as if Marlin ran. Fix: refuse "
    "marlin per card (does_not_fit / blocked_by inference.quant_kernel, as expert_precision is refused on Volta) "
    "or price the unstated rate there, saying so."
)


@pytest.mark.django_db
@pytest.mark.parametrize(
    "gpu",
    [
        pytest.param(g, marks=pytest.mark.xfail(strict=True, reason=R_GATE.format(gpu=g)))
        for g in ("t4", "v100-sxm2-16gb", "mi300x")
    ],
)
def test_marlin_is_not_priced_where_vllm_cannot_run_it(bundled_catalog, gpu):
    marlin = candidate(spec("llama-2-13b", 128, output=128), gpu)
    unstated = candidate(spec("llama-2-13b", 128, kernel=None, output=128), gpu)
    m, u = (c["throughput"]["decode_tokens_per_second_per_stream"] for c in (marlin, unstated))
    assert m == pytest.approx(u, rel=0.01) or not marlin.get("fits", True)


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
