"""Issue 26 done-criterion, serving half, run afresh by an outside GPU engineer (aud50b, stop 50): five published
serving runs no test in tests/ used before (tests/ grepped for each source, model row and figure: dstackai/benchmarks,
15,711, 44.30, 30.02, 25.73, 46.17 — none), stated as the publisher ran them with only docs/workload-spec.md's
fields, ranked through the service `manage.py recommend SPEC --format json --top 5` runs (`ranked`) and sized on the
publisher's own accelerator (`size_spec_document`, calibration off), judged with the stop-48 module's helpers
(`judge`, `candidate`, `err`) and the stop-49 module's `serving`:

  (1) row 1 sensible (stated GPU count / TP honoured, fits with its margin shown, no consumer split for serving, no
      rack-scale part, latency targets met); (2) published vs ours within 15% (LLM speed);
  (3) every row's cost rebuilt by hand to the cent.

The issue's kinds covered: MoE serving with latency targets (DeepSeek-R1, TTFT / TPOT), 70B-class int4 serving
(Qwen2.5-72B AWQ), a long-context case (the same at 30,720 input tokens), a multi-accelerator tensor-parallel case on
a stated instance (8 Gaudi 3 in an HLS-Gaudi3), and an accelerator comparison (8 x MI300X against 8 x H200, one
harness, one model, one day's stack). A miss is a strict xfail "UNEXPLAINED (aud50b): ...".

Sources (verbatim where quoted):
  [QW72AWQ] QwenLM/Qwen2.5 @010c37c33b13a1ac59944b349620e13404efe97d docs/source/benchmark/speed_benchmark.rst
            (read_file id 9548273640): "The environment of the evaluation with vLLM is: NVIDIA A100 80GB ... vLLM
            0.6.3"; "We use the batch size of 1 and the least number of GPUs as possible"; "We test the speed and
            memory of generating 2048 tokens with the input lengths of 1, 6144, 14336, 30720, 63488, and 129024
            tokens"; "- 72B (vLLM)": "Qwen2.5-72B-Instruct | 1 | ... | AWQ | 2 | 44.30 | Default" and "| 30720 | ...
            | AWQ | 2 | 30.02 | Default"; "[Default Setting]=(gpu_memory_utilization=0.9 max_model_len=32768
            enforce_eager=False)". Earlier modules use this page's 7B / 14B GPTQ vLLM rows and its 72B Transformers
            rows, never the 72B vLLM table. Speed read as the stop-48 [QW25Q] rows are: 2,048 / (first token +
            2,048 decode steps). vLLM runs AWQ checkpoints in float16; 0.6.3 is the V0 engine (`vllm_v0`).
  [DSR1]    dstackai/benchmarks @7f37e6697725e58dd09b9ef190b62ce19f01d45e Deepseek-R1/raw_data/online_results.csv
            (read_file id 17009415078), with Deepseek-R1/README.md @209ca6f9 (id 17906219128): "8x NVIDIA H200 SXM5
            GPU, 141GB, 700W", "8x AMD Mi300x GPU, 192GB, 750W"; vLLM-H200 "vLLM Version: 0.7.4.dev181+gf35f8e22",
            `vllm serve deepseek-ai/DeepSeek-R1 --trust-remote-code --tensor-parallel-size 8`, VLLM_ATTENTION_BACKEND=
            FLASHMLA; vLLM-Mi300 "vLLM Version: 0.7.3.dev138+g21f6ca217", `vllm serve deepseek-ai/DeepSeek-R1
            --tensor-parallel-size 8 --trust-remote-code --max-model-len 32768`; bench_serving.py "--dataset-name
            random --num-prompts 500 --random-input 3200 --random-output 800 --random-range-ratio 1
            --max-concurrency" 4..128. CSV rows at max_concurrency 4, vllm: h200 median_ttft_ms 974.8834405,
            median_tpot_ms 25.73463239; mi300x median_ttft_ms 1288.601479, median_tpot_ms 46.16849698. DeepSeek-R1 is
            DeepSeek-V3's architecture (the `deepseek-v3` preset) in its released FP8 weights; vLLM 0.7.x runs V0.
  [GAUDI3]  intel.com/content/www/us/en/developer/platform/gaudi/model-performance.html ("Model Performance Data for
            Intel Gaudi 3 AI Accelerators ... SynapseAI* software release version 1.18.0"): "LLaMA 3.1 70B | 8 | fp8
            | 128 | 2,048 | 600 | 15,711" (tokens/sec); "System: HLS-Gaudi3 with eight Intel Gaudi 3 platform
            HL-325L mezzanine cards, two Intel Xeon Platinum 8480+ CPUs at 2.0 GHz, and 1 TB of system memory".
            (tests/ uses the Gaudi 2 pages' Llama 2 7B rows and the training pages, not this 70B row.)
"""

from __future__ import annotations

import pytest

from tests.procurement.outside.test_outside_ranking_audit_stop48 import LLM_SPEED, candidate, err, judge
from tests.procurement.outside.test_outside_ranking_audit_stop49 import serving

A100, H200, MI300X, GAUDI3 = "a100-sxm4-80gb", "h200-sxm-141gb", "mi300x", "gaudi3"
TP2 = {"gpus": 2, "tensor_parallel": 2}
TP8 = {"gpus": 8, "tensor_parallel": 8}


def qwen72_awq(prompt: int) -> dict:
    """[QW72AWQ]: batch 1, 2,048 generated, AWQ (fp16 activations), TP 2 on two A100 80GB, vLLM 0.6.3 (V0)."""
    spec = serving(
        "qwen2.5-72b", 1, prompt, 2048, precision="fp16", weight_quantization="int4", parallelism=TP2
    )
    spec["inference"]["engine"] = "vllm_v0"
    return spec


def qwen72_awq_marlin(prompt: int) -> dict:
    """fix50b: the same run with its kernel stated: vLLM >= 0.5.3 converts a Marlin-compatible AWQ checkpoint (4-bit,
    group 128, zero points: Qwen2.5-72B-Instruct-AWQ's) to awq_marlin at load (vllm-project/vllm#6612, "[Kernel][Core]
    Add AWQ support to the Marlin kernel")."""
    spec = qwen72_awq(prompt)
    spec["inference"]["quant_kernel"] = "marlin"
    return spec


def dsr1(**inference) -> dict:
    """[DSR1]: 3,200 in / 800 out at concurrency 4, FP8 weights, TP 8, vLLM 0.7.x (V0)."""
    spec = serving("deepseek-v3", 4, 3200, 800, precision="fp8", parallelism=TP8)
    spec["inference"] |= {"engine": "vllm_v0"} | inference
    return spec


QW72_1 = qwen72_awq(1)
QW72_30K = qwen72_awq(30720)
QW72_1_MARLIN = qwen72_awq_marlin(1)
QW72_30K_MARLIN = qwen72_awq_marlin(30720)
# The targets an engineer would set from the H200 run's own medians (974.9 ms / 25.73 ms): TTFT 1.5 s, TPOT 30 ms.
DSR1_TARGETS = dsr1(ttft_ms=1500, tpot_ms=30)
DSR1_PLAIN = dsr1()
GAUDI3_70B = serving("llama-3.1-70b", 600, 128, 2048, precision="fp8", parallelism=TP8)

PUB_DSR1_TPOT = {H200: 25.73463239, MI300X: 46.16849698}


def end_to_end(spec: dict, gpu: str) -> float:
    t = candidate(spec, gpu)["throughput"]
    out = spec["inference"]["output_tokens"]
    return out / (t["time_to_first_token_seconds"] + out / t["decode_tokens_per_second_per_stream"])


def tpot_ms(spec: dict, gpu: str) -> float:
    return 1000.0 / candidate(spec, gpu)["throughput"]["decode_tokens_per_second_per_stream"]


def target_problems(rows: list[dict]) -> list[str]:
    """Rows offered as meeting TPOT 30 ms on a card whose published run of this very workload does not."""
    return [
        f"row {i} ({r['provider']} {r['instance_type']}, {r['gpu']}) is offered as meeting tpot_ms 30 while [DSR1] "
        f"measured {PUB_DSR1_TPOT[r['gpu']]:.2f} ms on it"
        for i, r in enumerate(rows, 1)
        if r["gpu"] in PUB_DSR1_TPOT and PUB_DSR1_TPOT[r["gpu"]] > 30
    ]


# The same CSV's vLLM rows at concurrency 4 / 8 / 16 / 32 / 64 (median TPOT ms) against ours (vllm_v0, this version):
#   H200   published 25.73 / 31.33 / 49.75 / 51.99 / 64.42, ours 7.86 / 10.48 / 14.86 / 21.18 / 28.19: gap 17.9-36.2 ms
#   MI300X published 46.17 / 50.56 / 54.91 / 60.82 / 76.69, ours 9.60 / 13.50 / 20.00 / 29.27 / 39.20: gap 31.5-37.5 ms
# i.e. a near-constant ~35 ms a step on MI300X that the engine does not charge (a fixed per-step cost, not a rate).
# Sized on the rows themselves, so evidence for the lead, not an explanation (explain-rules (a)).
# --- the figures as this run read them (ours at 58fdecb1) ------------------------------------------------------------
OURS = {
    "qw72_1": 36.71,  # kernel unstated (fix50m, the 16-bit lm_head at the 16-bit rate; 35.99 before)
    "qw72_30k": 26.75,  # kernel unstated (fix50m; 26.37 before)
    "qw72_1_marlin": 43.84,  # quant_kernel marlin (fix50m: 0.780, lm_head at the 16-bit rate; fix50b 44.40)
    "qw72_30k_marlin": 30.34,  # quant_kernel marlin (fix50m; fix50b 30.60)
    "dsr1_h200_tpot": 7.855,  # 1,000 / 127.30 (GPU work 6.02 ms + vllm_v0's 1.84 ms host)
    "dsr1_mi300x_tpot": 9.600,  # 1,000 / 104.17
    "gaudi3": 14871.8,
}

R_DSR1_H200 = (
    "UNEXPLAINED (aud50b): [DSR1] DeepSeek-R1 FP8, 8 x H200, vLLM 0.7.4.dev (V0, FlashMLA), 3,200 in / 800 out at "
    "concurrency 4: published median TPOT 25.73 ms, ours {ours:.2f} ms ({e:+.1%} in time; the engine says 3.3x the "
    "measured decode speed, 127.3 against 38.9 tokens/s a stream). Median TTFT 974.9 ms published against ours 71.6 "
    "ms (not asserted: the bench's TTFT at concurrency 4 may hold queueing). The ranking then treats the stated "
    "targets (TTFT 1.5 s, TPOT 30 ms) as met by every 8-card row, among them 8 x MI300X (row 3), whose run of this "
    "same workload measured 46.17 ms. Rows: 1 nebius H200 x8 $20,840.90, 2 vast H200 x8 $13,453.30 (link unstated, "
    "ranked below a documented link), 3 runpod MI300X x8, 4 runpod H100 NVL x8 (tight, 9.7 GiB margin), 5 runpod "
    "H200 x8; every row rebuilds to the cent. Lead: the decode step of a 58-MoE-layer MLA model at batch 4 is priced "
    "as a bandwidth roofline (the experts' bytes read once) plus 1.84 ms of host; at 61 layers the published step "
    "is 0.42 ms a layer, which a per-layer fixed cost (fused_moe's fp8 block-quant Triton kernel, MLA decode, two TP "
    "all-reduces) would carry; no published per-layer breakdown sized here. The gap is near-constant over concurrency 4-64 (17.9-36.2 ms a step on H200, 31.5-37.5 on MI300X; comment above OURS). "
    "fix50b (not sized within 15%, so not EXPLAINED): held-out kernel timings say the small-batch decode layer is "
    "latency-bound, not read-bound. sgl-project/sglang#3893 (2025-02-26, H200, vLLM's block-FP8 Triton GEMM, TP 1 "
    "shapes): m = 8, N 576 / K 7,168 45.4 us (4.1 MB of weights: 91 GB/s, 2% of the card), N 32,768 / K 512 38.2 "
    "us, N 24,576 / K 1,536 70.7 us, each flat from m = 8 to 64; sgl-project/sglang#5820 (vllm column): DeepSeek-V3 "
    "N 3,072 / K 1,536 14.5 us flat over batch 1-128, N 512 / K 7,168 20.6 us at batch 1. A TP 8 layer of vLLM 0.7.x "
    "runs about six such block-FP8 GEMMs (q_a, kv_a, q_b or its absorbed form, o_proj or W_UV_O, the shared expert's "
    "gate_up and down) plus two fused_moe Triton calls, the router, per-token FP8 quantization, FlashMLA and two "
    "all-reduces: at ~15-20 us a GEMM the six alone are ~0.1 ms a layer, ~6 ms over 61 layers, which the engine "
    "prices as microseconds of bytes. Not found as text: fused_moe's batch-4 kernel time for E=256, N=256, "
    "fp8_w8a8 block [128,128] on H200 (vLLM's benchmark_moe.py output), and the TP 8 rows of #3893's vLLM column "
    "(excerpts only). Lead: a per-kernel floor for block-FP8 GEMMs and fused_moe at small M from those two tables, "
    "counted per layer from deepseek_v2.py at v0.7.4 (the vLLM snapshot was too large to fetch here). "
    "moedec (sized in part, test_the_small_m_block_fp8_gemm_floors_size_part_of_the_decode_gap): three of a "
    "layer's block-FP8 GEMMs whose TP 8 shape has a held-out H200 timing (kv_a 45.38 us, q_b 14.53 us, the shared "
    "experts' gate_up 20.61 us) add 4.63 ms a step over their bytes at the engine's rate (26% of the 17.9 ms gap); "
    "fused_moe's batch-4 time for this TP 8 shape read only on a B200 (sgl-project/sglang#11816, 79.09 us) would add "
    "1.69 ms more (35% with it). Not sized: o_proj, q_a, the shared down GEMM, six per-token-group FP8 quantizations, "
    "FlashMLA's decode, the router and grouped top-k, two all-reduces (~11 ms left). Not the cause: prefill "
    "stalls inside TPOT (vLLM 0.7.1 / 0.7.3 V0 disable chunked prefill under MLA): the CSV's own ITL columns at "
    "concurrency 4 read mean 25.82 / median 25.69 / p99 26.45 ms, so no step of the decode holds a prefill "
    "(equal lengths, --random-range-ratio 1: requests start and end in cohorts of 4, and the 974.9 ms TTFT is the "
    "cohort's batched 12,800-token prefill). The step itself grows 0.645 ms a stream from concurrency 4 to 64 "
    "published, 0.339 in the engine: sglang#11816's B200 fused_moe reads its experts at 3.3-4.0 TB/s at batch 8-16 "
    "(0.41-0.51 of the B200's 8 TB/s, against the engine's 0.70). Lead: a per-call small-M floor for block-FP8 "
    "GEMMs (inference.quant_kernel block_fp8, a new value) with the missing shapes' timings, and fused_moe's "
    "measured expert read rate on H200 / MI300X. "
    "moedec2 (test_five_sized_gemms_and_fused_moe_explain_40_percent_of_the_gap_at_concurrency_4): #3893's harness "
    "times DeepGEMM at 3.5-5.3x its own kernel time (DeepGEMM README a6d97a1) and vLLM's kernel 22.18 us a call above "
    "#5820's, so kv_a is ~23.2 us of kernel, not 45.4; adding o_proj (~15.4 us) and q_a (~28.2 us) from #3893 so "
    "corrected, five GEMMs add 5.46 ms and with fused_moe 7.15 ms: ours would read 15.00 ms (-41.7%), 40% of the gap "
    "at concurrency 4 and 15-26% at 8-64. DeepGEMM itself reads small-M block FP8 at 0.50-0.80 (median 0.71) of "
    "Hopper's bandwidth, the engine's 0.70: the floor is vLLM 0.7.4's Triton kernel, not the format, so no "
    "Hopper-wide rate follows. Lead for the ~60% left, which grows with the streams: an H200 benchmark_moe.py "
    "run of E=256, N=256 block FP8 at batch 4-64 with the early-2025 configs (fused_moe's expert read rate), and the "
    "MLA decode kernel vLLM 0.7.4.dev ran (Triton decode vs FlashMLA) timed at 3,200-4,000 tokens. The CSV's "
    "median ITLs (25.69 / 31.28 / 49.74 / 51.96 / 63.24 ms at 4 / 8 / 16 / 32 / 64) rise by steps, not by a rate "
    "(+18.5 ms from 8 to 16 streams, +2.2 from 16 to 32): a per-M kernel choice (vLLM's H200 fused_moe config for "
    "E=256, N=256 block FP8 changed between versions: BLOCK_SIZE_M 64 at M 4 / 8 and from 24, BLOCK_SIZE_N 256 / K 64 "
    "at 16, in one stored copy; 16 / 128 / 128 for M 1-512 in a later one) fits that shape better than bytes. "
    "moefloor (test_outside_moe_floor_moefloor.py): an H200 fused_moe table (sglang#11730, Qwen3-235B TP 8 fp8, "
    "batch 4 49.67 us, 27.20 over its bytes) x 58 MoE layers = 1.58 ms, within 7% of moedec2's borrowed B200 1.69 "
    "ms: that 9% share holds on the run's card; the sized share stays 40%. The two TP all-reduces a layer are "
    "already charged (20 us a call). moeshape (test_outside_moe_shape_moeshape.py): no shape rule for the Triton "
    "fused_moe (grid blocks against SMs, K-loop waves) lands the kernel tables within 20%; a per-call constant "
    "fitted on four of them reads the block-FP8 DeepSeek-R1 table (sglang#11816) 29-30% low: no engine term."
)
R_DSR1_MI300X = (
    "UNEXPLAINED (aud50b): [DSR1] the accelerator comparison. DeepSeek-R1 FP8, 8 x MI300X, vLLM 0.7.3.dev (ROCm, "
    "V0), concurrency 4: published median TPOT 46.17 ms, ours {ours:.2f} ms ({e:+.1%}); the published MI300X / H200 "
    "TPOT ratio is 1.794 (46.17 / 25.73), ours {ratio:.3f} ({er:+.1%}): the engine's MI300X serving speed is one "
    "ratio, 0.96 x H100 (measured_speed.csv, MLPerf Inference v4.1 Llama 2 70B, a dense model at large batch), "
    "which this MoE at batch 4 does not follow. Ranked on the targets spec, the MI300X row 3 (runpod 8x_MI300X_SECURE "
    "$14,942.50) is offered as meeting TPOT 30 ms. (Its link, read by aud50b as an assumed PCIe 5.0 x16, is Infinity "
    "Fabric since fix50b: test_the_runpod_8x_mi300x_row_runs_over_infinity_fabric_not_an_assumed_pcie.) "
    "Lead: a serving ratio for MoE / small-batch decode on MI300X (this CSV's sglang rows give 34.90 ms at "
    "concurrency 4, 1.36x H200 vLLM), or the per-layer fixed cost of R_DSR1_H200 measured per card. moedec2: AMD's "
    "ROCm blog 'Supercharge DeepSeek-R1 Inference on AMD Instinct MI300X' (2025-03-21) credits its AITER kernels with "
    "+2x GEMM, +3x MoE and +17x MLA decode over the kernels before them (those a vLLM 0.7.3 ROCm build ran): the "
    "MI300X step is kernel-bound, not read-bound; no time per kernel is published there, so it is not sized."
)


@pytest.mark.django_db
def test_qwen25_72b_awq_vllm063_two_a100_input_1(bundled_catalog):
    """[QW72AWQ] input 1: published 44.30 tokens/s. aud50b read 35.99 (-18.8%) with the kernel unstated (int4 at
    int4_decode_bandwidth_efficiency 0.617, gpt-fast's group-32 kernel); fix50b states the kernel vLLM 0.6.3 runs
    this checkpoint on (awq_marlin: inference.quant_kernel marlin, the 4-bit bytes at 0.804 of the 16-bit rate from
    vllm-project/vllm#2497's Marlin bench.py run, not from this page): 44.40 (+0.2%); fix50m (0.780, the row's own 4.0
    bits; the 16-bit lm_head at the 16-bit rate): 43.84 (-1.0%), unstated 36.71 (-17.1%). Rows as aud50b ranked them: 1
    lium L40S_2x (fits, 23.4 GiB margin), consumer 2 x RTX 3090 / 4090 marked tight below it, every row rebuilds to
    the cent."""
    problems = judge(
        QW72_1_MARLIN, [("2 x A100 tokens/s, input 1", end_to_end(QW72_1_MARLIN, A100), 44.30, LLM_SPEED)]
    )
    assert not problems, problems


@pytest.mark.django_db
def test_qwen25_72b_awq_vllm063_two_a100_long_context_30720(bundled_catalog):
    """[QW72AWQ] 30,720 input tokens: published 30.02 tokens/s; kernel unstated 26.37 (-12.2%, aud50b), marlin
    stated 30.60 (+1.9%); fix50m 30.34 (+1.1%), unstated 26.75 (-10.9%): first token 13.60 s (the 30,720-token prefill on two A100s at TP 2), 38.41 tokens/s of
    decode. Row 1 lium L40S_2x (fits with 17.5 GiB margin at the 32,768-token context), every row rebuilds to the
    cent."""
    problems = judge(
        QW72_30K_MARLIN,
        [("2 x A100 tokens/s, input 30,720", end_to_end(QW72_30K_MARLIN, A100), 30.02, LLM_SPEED)],
    )
    assert not problems, problems


# Held out for the Marlin rate (fix50b): the same page's other vLLM 0.6.3 int4 rows, GPTQ-Int4 checkpoints that
# vLLM runs on gptq_marlin ([QW72AWQ]'s page, "- 7B (vLLM)", "- 14B (vLLM)", "- 72B (vLLM)"; the 7B / 14B rows are
# stop 48's [QW25Q], test_outside_vllm_v0_host_audit_stop48.py, stated there with the kernel unstated: -5..-14%).
# (preset, input tokens, GPUs): published tokens/s. The 72B row is "GPTQ-Int4 | 2 | 46.30 | Setting 2" (a setting
# the page names but does not define in the text read: stated as Default here, an indication).
MARLIN_HELD_OUT = {
    ("qwen2.5-7b", 1, 1): 154.05,
    ("qwen2.5-7b", 6144, 1): 141.98,
    ("qwen2.5-7b", 14336, 1): 129.35,
    ("qwen2.5-7b", 30720, 1): 108.30,
    ("qwen2.5-14b", 1, 1): 98.02,
    ("qwen2.5-14b", 6144, 1): 86.10,
    ("qwen2.5-14b", 14336, 1): 76.85,
    ("qwen2.5-14b", 30720, 1): 60.91,
    ("qwen2.5-72b", 1, 2): 46.30,
}


@pytest.mark.django_db
@pytest.mark.parametrize("row", list(MARLIN_HELD_OUT), ids=[f"{p}-{n}-tp{g}" for p, n, g in MARLIN_HELD_OUT])
def test_the_marlin_rate_holds_on_the_pages_gptq_int4_rows(bundled_catalog, row):
    """Ours with marlin stated: 7B +10.8 / +11.5 / +10.6 / +8.3%, 14B +7.8 / +8.1 / +3.4 / -1.9%, 72B TP 2 -4.1%."""
    preset, prompt, gpus = row
    spec = serving(preset, 1, prompt, 2048, precision="fp16", weight_quantization="int4")
    spec["inference"] |= {"engine": "vllm_v0", "quant_kernel": "marlin"}
    if gpus > 1:
        spec["parallelism"] = {"gpus": gpus, "tensor_parallel": gpus}
    assert end_to_end(spec, A100) == pytest.approx(MARLIN_HELD_OUT[row], rel=LLM_SPEED)


@pytest.mark.django_db
@pytest.mark.xfail(
    strict=True,
    reason=R_DSR1_H200.format(
        ours=OURS["dsr1_h200_tpot"], e=err(OURS["dsr1_h200_tpot"], PUB_DSR1_TPOT[H200])
    ),
)
def test_deepseek_r1_vllm_8xh200_concurrency_4_with_latency_targets(bundled_catalog):
    ours = tpot_ms(DSR1_TARGETS, H200)
    problems = judge(DSR1_TARGETS, [("8 x H200 median TPOT ms", ours, PUB_DSR1_TPOT[H200], LLM_SPEED)])
    assert not problems, problems


@pytest.mark.django_db
@pytest.mark.xfail(
    strict=True,
    reason=R_DSR1_MI300X.format(
        ours=OURS["dsr1_mi300x_tpot"],
        e=err(OURS["dsr1_mi300x_tpot"], PUB_DSR1_TPOT[MI300X]),
        ratio=OURS["dsr1_mi300x_tpot"] / OURS["dsr1_h200_tpot"],
        er=err(OURS["dsr1_mi300x_tpot"] / OURS["dsr1_h200_tpot"], 46.16849698 / 25.73463239),
    ),
)
def test_deepseek_r1_vllm_8xmi300x_against_8xh200(bundled_catalog):
    from tests.procurement.outside.test_outside_recommendations_x26b import ranked

    mi, h = tpot_ms(DSR1_PLAIN, MI300X), tpot_ms(DSR1_PLAIN, H200)
    problems = judge(
        DSR1_PLAIN,
        [
            ("8 x MI300X median TPOT ms", mi, PUB_DSR1_TPOT[MI300X], LLM_SPEED),
            ("MI300X / H200 TPOT ratio", mi / h, PUB_DSR1_TPOT[MI300X] / PUB_DSR1_TPOT[H200], LLM_SPEED),
        ],
    )
    problems += target_problems(ranked(DSR1_TARGETS, 5))
    assert not problems, problems


# moedec: the small-M floor of DeepSeek-V3's block-FP8 GEMMs at TP 8, from held-out kernel tables (not the dstack
# rows). Per call, m <= 8 (the decode step's 4 rows), H200, vLLM's kernel column:
#   kv_a_proj_with_mqa N 576 / K 7,168 (replicated; 576 is not a multiple of 128, so vLLM's Triton
#     w8a8_block_fp8_matmul): sgl-project/sglang#3893 (2025-02-26), "fp8-gemm-performance-comparison-tp1", H200,
#     row 0 "8.0 576.0 7168.0 1.0 31.615999 45.488000 45.375999" (DeepGEMM / SGLang / vLLM, us);
#   q_b_proj N 3,072 (24,576 / 8) / K 1,536: sgl-project/sglang#5820 (2025-04-28), "deepseek-ai/DeepSeek-V3 N=3072
#     K=1536", vllm column, batch 1 "14.528000" (14.53-14.66 over batch 1-128);
#   the shared experts' gate_up N 512 (2 x 2,048 / 8) / K 7,168: the same PR, "N=512 K=7168", vllm batch 1 "20.608000".
# (#5820's card is not restated in the excerpts read; its author's #3893 tables are H200.) Shapes with no held-out
# timing read (o_proj N 7,168 / K 2,048, q_a N 1,536 / K 7,168, the shared down N 7,168 / K 256) are left out, so the
# sum is a floor. #3893's TP 8 table is not used: its vLLM column reads the replicated kv_a matrix (the same at any
# TP) at 172.6 us against 45.4 us in the TP 1 table, and N 7,168 / K 256 at 392.7 us flat in m, not a kernel's time.
# The engine prices each as its FP8 bytes at 0.70 (achieved_bandwidth_fraction) of the H200's 4,800
# GB/s. All 61 layers run MLA; the 58 MoE layers (3 dense: first_k_dense_replace) carry the shared expert.
BLOCK_FP8_SMALL_M_US = {  # name: (N, K, measured us a call, layers)
    "kv_a_proj_with_mqa": (576, 7168, 45.375999, 61),
    "q_b_proj": (3072, 1536, 14.528000, 61),
    "shared_experts_gate_up": (512, 7168, 20.608000, 58),
}
# fused_moe (E 256, N 256, fp8 w8a8 block [128, 128], top-8) at batch 4, DeepSeek-R1 TP 8: sgl-project/sglang#11816
# ("use flashinfer_trtllm moe runner backend ... on b200 fp8 dpsk"), tuning_fused_moe_triton.py before the change,
# "Batch size: 4 ... Kernel time: 79.09 us": a B200 and SGLang's copy of the Triton kernel, so indicative only.
FUSED_MOE_B200_BATCH4_US = 79.09


def block_fp8_floor_excess_ms(rate_bytes_s: float) -> float:
    """Seconds (ms) a decode step's sized block-FP8 GEMMs take over their bytes at ``rate_bytes_s``."""
    return (
        sum((us * 1e-6 - n * k / rate_bytes_s) * layers for n, k, us, layers in BLOCK_FP8_SMALL_M_US.values())
        * 1e3
    )


def test_the_small_m_block_fp8_gemm_floors_size_part_of_the_decode_gap():
    """moedec: the three sized GEMMs add 2.693 + 0.801 + 1.132 = 4.63 ms a step over their bytes (bytes 1.23 /
    1.40 / 1.09 us a call at 3,360 GB/s): ours 7.86 -> 12.48 ms against 25.73 published, 26% of the 17.9 ms gap.
    fused_moe at the B200's 79.09 us against the engine's 50.02 us of expert bytes (1 - (1 - 8 / 256)^4 of 256
    experts x 3 x 7,168 x 256 FP8 bytes a GPU) adds 1.69 ms over 58 layers: 14.17 ms, 35% of the gap. Not
    within 15% (>= 21.87 ms needed), so the DeepSeek-R1 xfails stay UNEXPLAINED; no engine change."""
    from procurement.sizing.assumptions import ACHIEVED_BANDWIDTH_FRACTION

    rate = ACHIEVED_BANDWIDTH_FRACTION * 4800e9  # H200 SXM datasheet 4.8 TB/s
    gemms_ms = block_fp8_floor_excess_ms(rate)
    assert gemms_ms == pytest.approx(4.625, abs=0.005)
    touched = 1 - (1 - 8 / 256) ** 4
    moe_bytes_us = touched * 256 * 3 * 7168 * 256 / rate * 1e6
    assert moe_bytes_us == pytest.approx(50.02, abs=0.01)
    moe_ms = (FUSED_MOE_B200_BATCH4_US - moe_bytes_us) * 58 / 1e3
    gap = PUB_DSR1_TPOT[H200] - OURS["dsr1_h200_tpot"]
    assert gemms_ms / gap == pytest.approx(0.259, abs=0.002)
    assert (gemms_ms + moe_ms) / gap == pytest.approx(0.353, abs=0.002)
    # even with both, ours stays outside the 15% band: explains part, not the row
    assert OURS["dsr1_h200_tpot"] + gemms_ms + moe_ms < PUB_DSR1_TPOT[H200] * (1 - LLM_SPEED)


# The held-out concurrency rows (the same CSV's vLLM H200 rows, the comment above OURS: published 25.73 / 31.33 / 49.75
# / 51.99 / 64.42 ms, ours 7.86 / 10.48 / 14.86 / 21.18 / 28.19) checked against the sized mechanism, not fitted on:
# the GEMM floors are flat in m from 1 to 64-128 in both tables, so their excess stays 4.63 ms at every concurrency;
# sglang#11816's B200 fused_moe times at batch 8 / 16 ("Kernel time: 95.47 us", "138.68 us") sit at or below the
# engine's expert bytes there (94.1 / 167.1 us), so that part vanishes from batch 8 up.
DSR1_H200_GAPS_MS = {
    4: 25.73 - 7.86,
    8: 31.33 - 10.48,
    16: 49.75 - 14.86,
    32: 51.99 - 21.18,
    64: 64.42 - 28.19,
}
FUSED_MOE_B200_US = {4: 79.09, 8: 95.47, 16: 138.68}


def test_the_sized_floors_explain_a_falling_share_of_the_gap_as_concurrency_rises():
    """moedec: share of the published-minus-ours TPOT gap the sized floors account for: 35% at 4, 23% at 8, 13% at
    16, 15% at 32, 13% at 64. The gap grows by 18 ms from concurrency 4 to 64 while the sized floors do not: the
    larger remaining cause grows with the streams (not prefill stalls: the CSV's mean ITL equals its median, see
    R_DSR1_H200; lead: fused_moe's expert read rate), so no per-call constant can land these rows."""
    from procurement.sizing.assumptions import ACHIEVED_BANDWIDTH_FRACTION

    rate = ACHIEVED_BANDWIDTH_FRACTION * 4800e9
    expert_bytes = 256 * 3 * 7168 * 256  # one FP8 expert's gate, up and down on a TP 8 rank, times E
    shares = {}
    for c, gap in DSR1_H200_GAPS_MS.items():
        moe_ms = 0.0
        if c in FUSED_MOE_B200_US:
            engine_us = (1 - (1 - 8 / 256) ** c) * expert_bytes / rate * 1e6
            moe_ms = max(0.0, FUSED_MOE_B200_US[c] - engine_us) * 58 / 1e3
        shares[c] = (block_fp8_floor_excess_ms(rate) + moe_ms) / gap
    expected = {4: 0.353, 8: 0.226, 16: 0.133, 32: 0.150, 64: 0.128}
    assert shares == pytest.approx(expected, abs=0.002)


# moedec2: the small-M GEMM floors checked against kernel-only timings, and the three shapes moedec left out.
# (1) DeepGEMM's own table (deepseek-ai/DeepGEMM README.md at its initial commit a6d97a1, 2025-02-25, "Normal GEMMs for
# dense models", H800 SXM5, kernel time from its profiler): M = 64 rows, DeepSeek-V3 shapes, (TFLOPS, GB/s).
DEEPGEMM_README_M64 = {  # (N, K): (TFLOPS, GB/s)
    (2112, 7168): (206, 1688),
    (24576, 1536): (289, 2455),
    (32768, 512): (219, 2143),
    (7168, 16384): (336, 2668),
    (4096, 7168): (287, 2320),
    (7168, 2048): (295, 2470),
}
H800_BYTES_S = 3.35e12  # H800 SXM5 datasheet HBM3 bandwidth (the H100 SXM's)
# (2) The same DeepGEMM kernel timed by sgl-project/sglang#3893's harness (benchmark_deepgemm_fp8_gemm.py: each timed
# call clones the weight, the activations and both scales, timed without a CUDA graph), H200, m = 64, DeepGEMM column:
# N 32,768 / K 512 (tp1 row 66) 37.471998 us, N 24,576 / K 1,536 (tp1 row 75) 58.400001, N 7,168 / K 2,048 (tp 8 row
# 102) 33.984002; and by sgl-project/sglang#5820's harness, N 32,768 / K 512, deepgemm column, batch 32: 13.088000.
SGL3893_DEEPGEMM_M64_US = {(32768, 512): 37.471998, (24576, 1536): 58.400001, (7168, 2048): 33.984002}
SGL5820_DEEPGEMM_32768_512_M32_US = 13.088000
# (3) vLLM's column for the same matrix in both PRs, N 32,768 / K 512 at m = 8: #3893 tp1 row 63 "38.208000", #5820
# ("main", "deepseek-ai/DeepSeek-V3 N=32768 K=512", vllm, batch 8) "16.031999": #3893's harness adds 22.18 us a call.
SGL3893_OVER_5820_US = 38.208000 - 16.031999
# (4) #3893's vLLM column (m = 8, H200) for the shapes moedec lacked, less that 22.18 us: o_proj N 7,168 / K 2,048
# (tp 8 row 99, "37.535999"), q_a N 1,536 / K 7,168 (not split by TP; tp 16 row 54, "50.336000"); kv_a (moedec's
# 45.38 us, tp1 row 0) corrected the same way. q_b and the shared gate_up stay #5820's (harness within ~3 us of the
# kernel, (2)). The shared experts' down (N 7,168 / K 256) has no usable timing (deepseek-ai/DeepGEMM#25's 392.7 us
# flat in m is not a kernel's time) and stays out.
BLOCK_FP8_SMALL_M_US_MOEDEC2 = {  # name: (N, K, us a call, layers)
    "kv_a_proj_with_mqa": (576, 7168, 45.375999 - SGL3893_OVER_5820_US, 61),
    "q_a_proj": (1536, 7168, 50.336000 - SGL3893_OVER_5820_US, 61),
    "q_b_proj": (3072, 1536, 14.528000, 61),
    "o_proj": (7168, 2048, 37.535999 - SGL3893_OVER_5820_US, 61),
    "shared_experts_gate_up": (512, 7168, 20.608000, 58),
}


def test_deepgemm_reads_small_m_block_fp8_at_the_engines_rate_so_the_floor_is_the_triton_kernel():
    """moedec2: a well-made block-FP8 GEMM at M = 64 on Hopper (DeepGEMM, kernel time) reads its bytes at 0.50-0.80
    of the H800's 3.35 TB/s, median 0.713, mean 0.684: the engine's 0.70 (achieved_bandwidth_fraction). So the small-M
    floors are not a property of block FP8 on Hopper but of the kernel vLLM 0.7.4 ran (Triton's w8a8_block_fp8_matmul;
    DeepGEMM was not in vLLM's linear path then, vllm-project/vllm#13917 only benchmarked it): no rate for
    'block FP8 on Hopper' follows from this table, and no engine default moves."""
    from procurement.sizing.assumptions import ACHIEVED_BANDWIDTH_FRACTION

    fractions = sorted(gbs * 1e9 / H800_BYTES_S for _, gbs in DEEPGEMM_README_M64.values())
    assert fractions[0] == pytest.approx(0.504, abs=0.001)
    assert fractions[-1] == pytest.approx(0.796, abs=0.001)
    median = (fractions[2] + fractions[3]) / 2
    assert median == pytest.approx(0.713, abs=0.001)
    assert sum(fractions) / len(fractions) == pytest.approx(0.684, abs=0.001)
    assert median == pytest.approx(ACHIEVED_BANDWIDTH_FRACTION, abs=0.015)
    # the rows' own FLOPs and times agree with their GB/s (N 2,112 / K 7,168: 9.41 us for 15.14 MB + A + D)
    us = {nk: 2 * 64 * nk[0] * nk[1] / (tf * 1e12) * 1e6 for nk, (tf, _) in DEEPGEMM_README_M64.items()}
    assert us[(2112, 7168)] == pytest.approx(9.41, abs=0.01)
    assert us[(7168, 2048)] == pytest.approx(6.37, abs=0.01)


def test_sglang_3893_harness_times_are_3_5_to_5_3_times_the_kernel():
    """moedec2: the same DeepGEMM kernel reads 3.49-5.34x its own kernel time (DeepGEMM's README, an H800, whose SMs
    and clocks the H200 shares with more bandwidth) in sglang#3893's table, and 1.33x in #5820's (an M = 32 time against
    an M = 64 kernel time, so at most that): #3893's per-call times hold 20-40 us of harness (weight clone, eager
    launches). vLLM's column for one matrix reads 22.18 us more in #3893 than in #5820, so moedec's kv_a floor (45.38
    us from #3893) is about 23.20 us of kernel."""
    readme_us = {
        nk: 2 * 64 * nk[0] * nk[1] / (DEEPGEMM_README_M64[nk][0] * 1e12) * 1e6 for nk in DEEPGEMM_README_M64
    }
    ratios = {nk: SGL3893_DEEPGEMM_M64_US[nk] / readme_us[nk] for nk in SGL3893_DEEPGEMM_M64_US}
    assert ratios == pytest.approx(
        {(32768, 512): 3.821, (24576, 1536): 3.493, (7168, 2048): 5.335}, abs=0.002
    )
    assert SGL5820_DEEPGEMM_32768_512_M32_US / readme_us[(32768, 512)] == pytest.approx(1.335, abs=0.002)
    assert SGL3893_OVER_5820_US == pytest.approx(22.176, abs=0.001)
    assert BLOCK_FP8_SMALL_M_US_MOEDEC2["kv_a_proj_with_mqa"][2] == pytest.approx(23.200, abs=0.001)


def test_five_sized_gemms_and_fused_moe_explain_40_percent_of_the_gap_at_concurrency_4():
    """moedec2: with kv_a corrected and o_proj and q_a added (BLOCK_FP8_SMALL_M_US_MOEDEC2), five of a layer's
    block-FP8 GEMMs add 1.340 + 1.518 + 0.801 + 0.670 + 1.132 = 5.46 ms a step over their bytes at the engine's rate
    (moedec's three: 4.63); with fused_moe's B200 batch-4 time (1.69 ms) 7.15 ms: ours would read 15.00 ms against
    25.73 published (-41.7%), 40% of the 17.9 ms gap. Held-out over concurrency (flat floors; fused_moe's B200 excess
    only at 4): 40 / 26 / 16 / 18 / 15% of the gap at 4 / 8 / 16 / 32 / 64. Not within 15% (>= 21.87 ms needed), so
    the DeepSeek-R1 xfails stay UNEXPLAINED; no engine constant (the timings are one shape each, harness-corrected)."""
    from procurement.sizing.assumptions import ACHIEVED_BANDWIDTH_FRACTION

    rate = ACHIEVED_BANDWIDTH_FRACTION * 4800e9  # H200 SXM datasheet 4.8 TB/s
    excess = {
        name: (us * 1e-6 - n * k / rate) * layers * 1e3
        for name, (n, k, us, layers) in BLOCK_FP8_SMALL_M_US_MOEDEC2.items()
    }
    assert excess == pytest.approx(
        {
            "kv_a_proj_with_mqa": 1.340,
            "q_a_proj": 1.518,
            "q_b_proj": 0.801,
            "o_proj": 0.670,
            "shared_experts_gate_up": 1.132,
        },
        abs=0.001,
    )
    gemms_ms = sum(excess.values())
    assert gemms_ms == pytest.approx(5.461, abs=0.001)
    touched = 1 - (1 - 8 / 256) ** 4
    moe_ms = (FUSED_MOE_B200_BATCH4_US - touched * 256 * 3 * 7168 * 256 / rate * 1e6) * 58 / 1e3
    ours = OURS["dsr1_h200_tpot"] + gemms_ms + moe_ms
    assert ours == pytest.approx(15.00, abs=0.01)
    assert err(ours, PUB_DSR1_TPOT[H200]) == pytest.approx(-0.417, abs=0.001)
    gap = PUB_DSR1_TPOT[H200] - OURS["dsr1_h200_tpot"]
    assert (gemms_ms + moe_ms) / gap == pytest.approx(0.400, abs=0.002)
    assert ours < PUB_DSR1_TPOT[H200] * (1 - LLM_SPEED)  # explains part, not the row
    shares = {c: (gemms_ms + (moe_ms if c == 4 else 0.0)) / g for c, g in DSR1_H200_GAPS_MS.items()}
    assert shares == pytest.approx({4: 0.400, 8: 0.262, 16: 0.157, 32: 0.177, 64: 0.151}, abs=0.002)


@pytest.mark.django_db
def test_gaudi3_llama31_70b_fp8_eight_hpu_128_in_2048_out(bundled_catalog):
    """[GAUDI3] 15,711 tokens/s at batch 600 on eight Gaudi 3 (HLS-Gaudi3): ours 14,872 (-5.3%) at TP 8. Ranked (no
    Gaudi 3 offer in the catalog): row 1 lium H100-SXM_8x $10,266.25 (fits, 17.6 GiB margin), every row rebuilds to
    the cent. Note, not a failure (the spec states no demand, so one replica is priced a month): row 3, runpod
    8x_H100_SECURE (H100 PCIe, 5,588 tokens/s by the row's own reason), ranks above row 4, hyperstack's H100 SXM5 x 8
    (15,180 tokens/s) at $58.40 a month more: 2.7x the cost a token sits one place higher."""
    t = candidate(GAUDI3_70B, GAUDI3)["throughput"]
    problems = judge(
        GAUDI3_70B, [("8 x Gaudi 3 tokens/s", t["decode_tokens_per_second_total"], 15711, LLM_SPEED)]
    )
    assert not problems, problems


@pytest.mark.django_db
def test_the_quoted_figures(bundled_catalog):
    """The figures the reasons above quote, as the engine gives them at this version."""
    assert end_to_end(QW72_1, A100) == pytest.approx(OURS["qw72_1"], rel=0.005)
    assert end_to_end(QW72_30K, A100) == pytest.approx(OURS["qw72_30k"], rel=0.005)
    assert end_to_end(QW72_1_MARLIN, A100) == pytest.approx(OURS["qw72_1_marlin"], rel=0.005)
    assert end_to_end(QW72_30K_MARLIN, A100) == pytest.approx(OURS["qw72_30k_marlin"], rel=0.005)
    assert tpot_ms(DSR1_TARGETS, H200) == pytest.approx(OURS["dsr1_h200_tpot"], rel=0.005)
    assert tpot_ms(DSR1_PLAIN, MI300X) == pytest.approx(OURS["dsr1_mi300x_tpot"], rel=0.005)
    t = candidate(GAUDI3_70B, GAUDI3)["throughput"]
    assert t["decode_tokens_per_second_total"] == pytest.approx(OURS["gaudi3"], rel=0.005)


@pytest.mark.django_db
def test_the_runpod_8x_mi300x_row_runs_over_infinity_fabric_not_an_assumed_pcie(bundled_catalog):
    """aud50b fix 2 (fix50b): the bundled catalog's runpod 8x_MI300X_SECURE states no link; before, its row
    read 'GPU link ... not stated by the catalog: PCIe 5.0 x16 64 GB/s assumed'. The MI300X is made only as an
    OAM module on AMD's 8-GPU Infinity Fabric baseboard (CDNA 3 white paper: seven links, "a fully connected
    8-GPU system", 896 GB/s aggregate P2P = 7 x 64 GB/s each way), so its TP 8 all-reduce runs at 448 GB/s."""
    from tests.procurement.outside.test_outside_recommendations_x26b import ranked

    rows = [r for r in ranked(DSR1_PLAIN, 40) if r["instance_type"] == "8x_MI300X_SECURE"]
    assert rows, "runpod 8x_MI300X_SECURE is ranked"
    link = rows[0]["interconnect"]
    assert (link["node_link_type"], link["node_link"]) == (
        "infinity_fabric",
        "Infinity Fabric, 7 x 64 GB/s each way",
    )
    assert "GPU link within 8x_MI300X_SECURE not stated by the catalog" not in str(rows[0])
