"""Outside audit aud48v (issue 26, stop 48) of ttft48: `inference.engine: vllm_v0`, vLLM's V0 loop, prices a decode
step (and the first token) as its GPU work + `vllm_v0_step_host_s` 1.84 ms, fitted on ONE row (the Qwen2.5 speed
page's vLLM 0.6.3 Qwen2.5-14B input-1 row, one A100 host). Cases here come from OTHER publishers, sized with
`vllm_v0` as a user would state the run; none is used by another test (grep of tests/ for zerollama, noooop,
benchmark_vllm_060, 21.97, 14.14: none).

Sources (opened for this audit):
  [ZL03]   noooop/zerollama @33261718f98c87ebf4a548c9d6727cd2138bcff3 tutorial/advance/0x03/README.md (read_file id
           32537998719), section "8. VLLM Gevent 实际推理速度测试", the in-process rows "vllm <size>", column
           并发数 (concurrency) 1, milliseconds a token: "vllm 0.5B 2.08 | vllm 1.8B 2.90 | vllm 4B 4.81 | vllm 7B 6.92 |
           vllm 14B 11.31 | vllm 32B 21.97". Card: "以 NVIDIA GeForce RTX 4090 为例，1008 GB/s 显存带宽" (section 1, the
           card every table of the page ran on; "24G 的 4090"). Release: the page quotes "(v0.5.0.post1) WARNING awq
           quantization is not fully optimized yet" and "vllm v0.5.0 终于支持了 ... FP8"; "vllm GPTQ 使用了 Marlin kernel".
  [ZLRUN]  the same repository, tutorial/advance/0x03/use_vllm.py @55a852e3a8a0336956507e5146969b32c8c6ba58 (read_file id
           32190807090): decoding_latency() builds EngineArgs(model=..., max_model_len=1024) (CUDA graphs: no
           enforce_eager), adds n requests of the Qwen chat template of "给我介绍一下大型语言模型。" with
           SamplingParams(ignore_eos=True, max_tokens=1000), and times every `engine.step()` of LLMEngine (wall clock,
           host and GPU together); gptq_info = Qwen/Qwen1.5-{0.5B,1.8B,4B,7B,14B,32B}-Chat-GPTQ-Int4.
  [ZLSHAPE] the same repository, tutorial/advance/0x02/parameters.py @66629cba024ac996f968ab1da2e6d2926a4a19e5 (read_file
           id 32574998221), `info` = [name, vocab, hidden, layers, intermediate, query heads a KV head]: 0.5B 151936 1024
           24 2816 1; 1.8B 151936 2048 24 5504 1; 4B 151936 2560 40 6912 1; 7B 151936 4096 32 11008 1; 14B 152064 5120
           40 13696 1; 32B 152064 5120 64 27392 5. Query heads (hidden / 128, 64 for the 0.5B): 16 / 16 / 20 / 32 / 40 /
           40 (a Qwen2-architecture 0.5B config with hidden 1024 and 16 heads, stored id 3101823743, agrees).
  [V050]   vllm-project/vllm @1473f7418a047395abed6283d6b682dc3ffbfe94 vllm/engine/llm_engine.py (read_file id 109495507,
           the 0.5.0-era file: vision_language_config, no observability_config) step(): `self.scheduler.schedule()` ->
           `self.model_executor.execute_model(...)` -> `self._process_model_outputs(...)`, one after the other: the loop
           the [ZL03] rows ran, with no asynchronous output processing (that came in 0.6).
  [V063]   vLLM 0.6.3's `LLM.__init__` signature as copied in a third-party hook ("Hooks of vllm-0.6.3 llm init", stored
           id 49182288877): `disable_async_output_proc: bool = False`: in the fit row's release the output processing
           of a step is asynchronous by default, so ttft48's docs sentence "processes the outputs one after the other
           while the GPU waits" is the 0.5 loop, not the 0.6.3 one its constant was fitted on.
  [SGL060] sgl-project/sglang @120affb9613cc3f5bcd055ec09c7621d3ced0ebc benchmark/benchmark_vllm_060/README.md (read_file
           id 55143585282): "Llama 3.1 8B Instruct 1 x A100 80G", "| 4 | 1200 | vLLM | 1691.97 | **100.48** | 14.14 |
           **129.32** |" (RPS, prompts, engine, median E2E latency, TTFT, TPOT, ITL, ms); vLLM installed as
           `pip install vllm==0.6.0`, served with `--num-scheduler-steps 10 --max_model_len 4096`; ShareGPT prompts.
  [SHAREGPT] vllm-project/vllm pull request #8050 (issues corpus): "Llama3 8B on H100 with ShareGPT dataset", 500
           requests, "Total input tokens: 100895", "Total generated tokens: 100377": 202 / 201 tokens a request, the
           lengths stated for [SGL060]'s ShareGPT rows (its own lengths are not printed).
  [QW25Q]  (fix48v) QwenLM/Qwen2.5 @010c37c33b13a1ac59944b349620e13404efe97d docs/source/benchmark/speed_benchmark.rst
           (read_file id 9548273640), the vLLM tables' GPTQ-Int4 rows: the same page, release (vLLM 0.6.3), card (A100
           80GB), batch 1 and 2,048 generated as vllm_v0_step_host_s's fit row, not used by any test before (grep of
           tests/ for 154.05, 98.02: none). Qwen2.5-7B-Instruct GPTQ-Int4 at input 1 / 6,144 / 14,336 / 30,720:
           154.05 / 141.98 / 129.35 / 108.30 tokens/s; Qwen2.5-14B-Instruct GPTQ-Int4: 98.02 / 86.10 / 76.85 / 60.91.
  [MARLIN] (fix48v) IST-DASLab/marlin @2f6d7c10e124b3c5fa29ff8d77d568bd7af3274c README.md "Benchmarks": at group size
           128 "Marlin delivers essentially ideal speedups at all batchsizes, enabling the maximum possible 3.87x
           speedup up to batchsizes around 16-32" over FP16 (a large matrix on an A10); vLLM converts a GPTQ checkpoint
           to it where it can (vllm-project/vllm @00161ce01fe64fdae0ec8ff1ae198c7b9befbdad
           vllm/model_executor/layers/quantization/gptq_marlin.py override_quantization_method /
           is_gptq_marlin_compatible: quant_method gptq, 4 / 8 bits symmetric, a group size Marlin supports).
  [V050MARLIN] (vllmq, stop 51) vllm-project/vllm vllm/model_executor/layers/quantization/gptq_marlin.py of the
           0.4.x / 0.5.0 era (stored id 340303596: GPTQ_MARLIN_* constants in the file itself, `is_marlin_compatible`,
           params dtype float16 only): a GPTQ checkpoint converts to gptq_marlin when bits in [4, 8], group_size in
           [-1, 32, 64, 128], sym True, desc_act present, and the card's capability >= get_min_capability() 80. The
           Qwen1.5 GPTQ-Int4 checkpoints (4 bits, group 128, symmetric) qualify on a 4090 (8.9), and [ZL03] says so
           ("vllm GPTQ 使用了 Marlin kernel"). The checkpoints' quantize_config.json was not opened.
Tolerance: the issue's 15% on LLM speed.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest

from procurement.api.sizing import size_spec_document
from procurement.sizing.assumptions import MARLIN_INT4_DECODE_EFFICIENCY, VLLM_V0_STEP_HOST_SECONDS

SPEED = 0.15
RTX4090 = "rtx-4090"
A100 = "a100-sxm4-80gb"  # [SGL060] says "A100 80G"; the SXM part is stated (a PCIe 80GB reads 5% slower)

# [ZLSHAPE] (layers, hidden, query heads, KV heads, intermediate, vocab); Qwen1.5 has q / k / v biases.
QWEN15 = {
    "0.5b": (24, 1024, 16, 16, 2816, 151936),
    "1.8b": (24, 2048, 16, 16, 5504, 151936),
    "4b": (40, 2560, 20, 20, 6912, 151936),
    "7b": (32, 4096, 32, 32, 11008, 151936),
    "14b": (40, 5120, 40, 40, 13696, 152064),
    "32b": (64, 5120, 40, 8, 27392, 152064),
}
# [ZL03] ms a token at concurrency 1; (ours compiled, ours vllm_v0) in ms a token, pinned below. vllmq (stop 51): the
# rows state inference.quant_kernel marlin, as run ([ZL03] "vllm GPTQ 使用了 Marlin kernel"; [V050MARLIN]): before,
# unstated (int4 at 0.617 of the 16-bit rate), vllm_v0 2.926 / 4.350 / 7.118 / 11.897 / 20.044 / 42.016 ms, compiled
# 1.086 / 2.510 / 5.278 / 10.057 / 18.204 / 40.176; after, Marlin's A100-class 0.780 (assumed on Ada, the product's
# marlin_int4_decode_bandwidth_efficiency) as below.
ZL03_MS = {"0.5b": 2.08, "1.8b": 2.90, "4b": 4.81, "7b": 6.92, "14b": 11.31, "32b": 21.97}
# vllmq's figures (the 4090 read at achieved_bandwidth_fraction 0.70), kept for the gap shares it sized
# (_sized_fraction, test_the_sized_share_of_each_4090_gap)
OURS_MS_AT_070 = {
    "0.5b": (0.982, 2.822),
    "1.8b": (2.200, 4.040),
    "4b": (4.469, 6.309),
    "7b": (8.406, 10.246),
    "14b": (14.988, 16.828),
    "32b": (32.283, 34.123),
}
# bw51 (stop 51): a GDDR6X card's decode reads at decode_read_fraction_gddr6x 0.885 (calm's RTX 4090 fp16 rows), not
# 0.70 (fix51b: keyed to the RTX 4090 alone, decode_read_fraction_rtx_4090, same 0.885; these figures do not move).
# vllm_v0 before -> after: 2.822 -> 2.617, 4.040 -> 3.581, 6.309 -> 5.375, 10.246 -> 8.488, 16.828 -> 13.695,
# 34.123 -> 27.374 ms (-26.3 / -28.2 / -23.8 / -32.5 / -32.8 / -35.6% -> -20.5 / -19.0 / -10.5 / -18.5 / -17.4 /
# -19.7%: the 4B row passes); compiled 0.982 / 2.200 / 4.469 / 8.406 / 14.988 / 32.283 -> 0.777 / 1.741 / 3.535 /
# 6.648 / 11.855 / 25.534.
OURS_MS = {
    "0.5b": (0.777, 2.617),
    "1.8b": (1.741, 3.581),
    "4b": (3.535, 5.375),
    "7b": (6.648, 8.488),
    "14b": (11.855, 13.695),
    "32b": (25.534, 27.374),
}
# [ZL03] section 7.1.2 / 7.2.1 ("对比 4090 推理理论极限 和 预填充 (Prefill) 长度等于 1 实际速度", the same host and release;
# "用户数为 1 的 解码阶段 相当于 长度为 1 预填充阶段"): Qwen1.5-7B "vllm bf16 16.59" ms and "vllm GPTQ 6.99" ms a step
ZL03_BF16_7B_MS = 16.59
ZL03_GPTQ_7B_PREFILL1_MS = 6.99
# the product on the bf16 row (engine vllm_v0 / compiled, a one-token step), pinned in test_the_quoted_4090_figures;
# bw51: (20.123, 21.963) -> (15.916, 17.756), the card's reads at 0.885 of 1,008 GB/s instead of 0.70
OURS_BF16_7B_MS = (15.916, 17.756)


def _qwen15_step_ms(size: str, engine: str) -> float:
    layers, hidden, heads, kv_heads, inter, vocab = QWEN15[size]
    spec = {
        "name": f"aud48v-qwen1.5-{size}-gptq-int4-{engine}",
        "task": "inference",
        "precision": "fp16",  # vLLM runs GPTQ checkpoints in float16
        "weight_quantization": "int4",
        "model": {
            "preset": "llama-2-7b",
            "name": f"Qwen1.5-{size.upper()}-Chat-GPTQ-Int4",
            "num_layers": layers,
            "hidden_size": hidden,
            "num_attention_heads": heads,
            "num_key_value_heads": kv_heads,
            "intermediate_size": inter,
            "vocab_size": vocab,
            "tie_word_embeddings": size == "0.5b",
            "attention_qkv_bias": True,
        },
        # [ZLRUN]: one request, the chat prompt (~24 tokens) + 1,000 generated, max_model_len 1,024
        "inference": {
            "concurrency": 1,
            "context_len": 1024,
            "output_tokens": 1000,
            "engine": engine,
            "quant_kernel": "marlin",  # [V050MARLIN]: GPTQ group 128, sym, 4-bit on capability 8.9 runs gptq_marlin
        },
    }
    report = size_spec_document(copy.deepcopy(spec), [RTX4090], calibrate=False)
    assert report["candidates"][0]["verdict"] in {"fits", "tight", "oversized"}
    return 1e3 / report["throughput"]["decode_tokens_per_second_per_stream"]


def _zl03_line() -> tuple[float, float]:
    """[ZL03]'s six batch-1 steps against the bytes a step reads ([ZLSHAPE]): int4 layers at 0.5 B a weight + a 16-bit
    scale and zero a group of 128 (0.531 B), the 16-bit lm_head (GPTQ leaves it unquantized), the 16-bit KV cache at
    its mean length (24 + 500 tokens). Returns (intercept ms, ms a GB)."""
    gb, ms = [], []
    for size, (layers, hidden, heads, kv_heads, inter, vocab) in QWEN15.items():
        group = heads // kv_heads
        layer = 2 * hidden * hidden + 2 * hidden * hidden // group + 3 * hidden * inter
        weights = layers * layer * (0.5 + 4 / 128) + hidden * vocab * 2
        kv = 2 * layers * (hidden // group) * 2 * 520
        gb.append((weights + kv) / 1e9)
        ms.append(ZL03_MS[size])
    slope, intercept = np.polyfit(gb, ms, 1)
    return float(intercept), float(slope)


def _zl03_sized_ms(size: str, fixed_ms: float) -> float:
    """A hand computation of [ZL03]'s step from the same page's own 16-bit row (no engine): the bytes of _zl03_line,
    the int4 ones at Marlin's 0.780 of the 16-bit rate (the product's A100-class value), the rest at the 16-bit rate
    this host reads Qwen1.5-7B bf16 at ([ZL03] 16.59 ms a one-token step, less the product's 1.84 ms of host time:
    14.20 GB in 14.75 ms, 962 GB/s, 0.955 of 1,008; test_the_pages_bf16_row_reads_at_0_95_of_the_card), plus
    ``fixed_ms`` a step."""
    rate = _bf16_7b_bytes() / (ZL03_BF16_7B_MS - VLLM_V0_STEP_HOST_SECONDS.value * 1e3)  # bytes a ms
    layers, hidden, heads, kv_heads, inter, vocab = QWEN15[size]
    group = heads // kv_heads
    layer = 2 * hidden * hidden + 2 * hidden * hidden // group + 3 * hidden * inter
    int4 = layers * layer * (0.5 + 4 / 128)
    sixteen = hidden * vocab * 2 + 2 * layers * (hidden // group) * 2 * 520
    return fixed_ms + (int4 / MARLIN_INT4_DECODE_EFFICIENCY.value + sixteen) / rate


def _bf16_7b_bytes() -> float:
    """Qwen1.5-7B bf16 ([ZLSHAPE]): the 32 blocks' 6.476e9 weights and the 622.3M-weight lm_head at 2 bytes."""
    layers, hidden, _, _, inter, vocab = QWEN15["7b"]
    return 2.0 * (layers * (4 * hidden * hidden + 3 * hidden * inter) + hidden * vocab)


def _sized_fraction(size: str, fixed_ms: float) -> float:
    """The share of the gap (ours vllm_v0 - published, ms, at vllmq's 0.70) that _zl03_sized_ms accounts for."""
    ours = OURS_MS_AT_070[size][1]
    return (ours - _zl03_sized_ms(size, fixed_ms)) / (ours - ZL03_MS[size])


def _zl03_reason(size: str) -> str:
    published = ZL03_MS[size]
    compiled, v0 = OURS_MS[size]
    return (
        f"UNEXPLAINED: [ZL03] vLLM 0.5.0.post1 (V0 LLMEngine.step, [V050]) Qwen1.5-{size.upper()}-Chat-GPTQ-Int4 "
        f"on gptq_marlin ([V050MARLIN], stated: inference.quant_kernel marlin), 1 x RTX 4090, batch 1, 1,000 "
        f"generated: published {published} ms a token ({1e3 / published:.1f} tokens/s); ours with engine vllm_v0 "
        f"{v0:.2f} ms ({published / v0 - 1:+.1%} in tokens/s), with compiled {compiled:.2f} ms "
        f"({published / compiled - 1:+.1%}). bw51 (stop 51): the card's reads now run at decode_read_fraction_rtx_4090 "
        "0.885 (calm's RTX 4090 fp16 rows; bw51's decode_read_fraction_gddr6x, keyed to the card by fix51b), "
        "not 0.70: vllm_v0 "
        f"{OURS_MS_AT_070[size][1]:.2f} -> {v0:.2f} ms ({published / OURS_MS_AT_070[size][1] - 1:+.1%} -> "
        f"{published / v0 - 1:+.1%}); the same page's bf16 Qwen1.5-7B row now lands at -6.6% "
        "(test_zerollama_vllm_050_bf16_7b_row). What is left: vllmq's hand computation (_zl03_sized_ms: the bf16 "
        "row's own rate, 0.955 of the card after 1.84 ms, Marlin at 0.780 of it) sizes "
        f"{(v0 - _zl03_sized_ms(size, 1.84)) / (v0 - published):.0%} of the remaining gap with the product's 1.84 ms "
        f"a step, {(v0 - _zl03_sized_ms(size, 1.49)) / (v0 - published):.0%} with the page's own fixed part (at most "
        "1.49 ms, test_the_4090_rows_put_the_fixed_step_cost_under_the_constant); the rest is Marlin's rate on Ada "
        "(the page's 7B GPTQ / bf16 pair reads the int4 bytes at 0.88-0.93 of the host's 16-bit rate, the product "
        "assumes the A100's 0.780; no published Ada Marlin figure). Not EXPLAINED: under 80% with the constant, "
        "and neither the page's fixed part nor an Ada Marlin rate has a second source. Lead: a Marlin batch-1 "
        "figure on an Ada card, and the V0 loop's host time on this host"
    )


@pytest.mark.django_db
@pytest.mark.parametrize(
    "size",
    [
        pytest.param(
            size,
            marks=pytest.mark.xfail(strict=True, reason=_zl03_reason(size))
            if abs(ZL03_MS[size] / OURS_MS[size][1] - 1) > SPEED
            else (),
            id=size,
        )
        for size in QWEN15
    ],
)
def test_zerollama_vllm_050_gptq_int4_rtx4090_batch1_within_15_percent(bundled_catalog, size):
    """[ZL03] / [ZLRUN]: vLLM 0.5.0.post1's V0 loop (LLMEngine.step timed in process), Qwen1.5-*-Chat-GPTQ-Int4 on
    one RTX 4090, one request, 1,000 generated: "vllm 0.5B 2.08 | 1.8B 2.90 | 4B 4.81 | 7B 6.92 | 14B 11.31 | 32B 21.97"
    ms a token (concurrency 1). Stated as run: weight_quantization int4, engine vllm_v0 (the V0 loop the docs name)."""
    ours_ms = _qwen15_step_ms(size, "vllm_v0")
    assert 1e3 / ours_ms == pytest.approx(1e3 / ZL03_MS[size], rel=SPEED)


def test_the_4090_rows_put_the_fixed_step_cost_under_the_constant():
    """Arithmetic on [ZL03] and [ZLSHAPE] alone (no engine): the six batch-1 steps of one host fit a line of 1.49 ms +
    1.13 ms a GB read (886 GB/s, 0.88 of the RTX 4090's 1,008 GB/s), every row within 0.3 ms of it. Its intercept is
    everything a step costs besides the bytes (the V0 loop's host work plus the GPU's launch floor); it sits under
    ttft48's 1.84 ms of host time alone, on a release whose loop is fully serial ([V050]). The constant is one host's
    value: on this host it over-charges a step by at least 0.35 ms (0.5B: 2.08 ms published, 0.52 GB read)."""
    intercept, slope = _zl03_line()
    assert intercept == pytest.approx(1.494, abs=0.01)
    assert 1.0 / slope == pytest.approx(0.886, abs=0.01)  # GB a ms = TB/s
    assert VLLM_V0_STEP_HOST_SECONDS.value * 1e3 - intercept > 0.34


@pytest.mark.django_db
def test_the_quoted_4090_figures(bundled_catalog):
    """The figures quoted in the strict xfails above, pinned (a drift would otherwise hide inside them)."""
    for size, (compiled, v0) in OURS_MS.items():
        assert _qwen15_step_ms(size, "compiled") == pytest.approx(compiled, rel=0.005)
        assert _qwen15_step_ms(size, "vllm_v0") == pytest.approx(v0, rel=0.005)
        assert v0 - compiled == pytest.approx(1.84, abs=0.001)
    assert _bf16_7b_step_ms("compiled") == pytest.approx(OURS_BF16_7B_MS[0], rel=0.005)
    assert _bf16_7b_step_ms("vllm_v0") == pytest.approx(OURS_BF16_7B_MS[1], rel=0.005)


def _bf16_7b_step_ms(engine: str) -> float:
    """[ZL03]'s vllm bf16 Qwen1.5-7B one-token step as a user would state it: bf16 weights, one stream, a one-token
    prompt and one token out (the product's smallest context)."""
    layers, hidden, heads, kv_heads, inter, vocab = QWEN15["7b"]
    spec = {
        "name": f"vllmq-qwen1.5-7b-bf16-{engine}",
        "task": "inference",
        "precision": "bf16",
        "model": {
            "preset": "llama-2-7b",
            "name": "Qwen1.5-7B-Chat",
            "num_layers": layers,
            "hidden_size": hidden,
            "num_attention_heads": heads,
            "num_key_value_heads": kv_heads,
            "intermediate_size": inter,
            "vocab_size": vocab,
            "attention_qkv_bias": True,
        },
        "inference": {"concurrency": 1, "context_len": 2, "output_tokens": 1, "engine": engine},
    }
    report = size_spec_document(copy.deepcopy(spec), [RTX4090], calibrate=False)
    return 1e3 / report["throughput"]["decode_tokens_per_second_per_stream"]


# FIXED (bw51, stop 51): was a strict xfail (UNEXPLAINED, vllmq: "14.20 GB of weights in 16.59 ms less 1.84 ms of
# host time is 962 GB/s, 0.955 of the card's 1,008, where the product reads 16-bit weights at 0.70 of any card's
# bandwidth"). The product now reads a GDDR6X card at decode_read_fraction_gddr6x 0.885, set on calm's RTX 4090 fp16
# rows (zeux/calm README @021304d6: Llama2 7B 892 GB/s), not on this row: vllm_v0 21.963 -> 17.756 ms (-24.5% ->
# -6.6% in tokens/s), compiled 20.123 -> 15.916 ms (-17.6% -> +4.2%). fix51b: the 0.885 is now the RTX 4090's alone
# (decode_read_fraction_rtx_4090), not every GDDR6X card's; this row does not move.
@pytest.mark.django_db
def test_zerollama_vllm_050_bf16_7b_row(bundled_catalog):
    """[ZL03]: "vllm bf16 16.59" ms, Qwen1.5-7B, one-token step ("用户数为 1 的 解码阶段 相当于 长度为 1 预填充阶段")."""
    assert 1e3 / _bf16_7b_step_ms("vllm_v0") == pytest.approx(1e3 / ZL03_BF16_7B_MS, rel=SPEED)


def test_the_pages_bf16_row_reads_at_0_95_of_the_card():
    """Arithmetic on [ZL03] / [ZLSHAPE] alone: Qwen1.5-7B bf16 reads 2 x (32 x (4 x 4096^2 + 3 x 4096 x 11008) +
    4096 x 151936) = 14.197 GB a step; in 16.59 - 1.84 = 14.75 ms that is 962.5 GB/s (0.955 of 1,008), in the whole
    16.59 ms 855.8 GB/s (0.849). The same page's GPTQ 7B step (6.99 ms) then reads its 3.440 GB of int4 weights
    (0.53125 B a weight) in 6.99 - 1.84 - 1.2447 GB / 962.5 GB/s = 3.857 ms: 892 GB/s, 0.927 of the host's 16-bit
    rate (0.876 with the page's own 1.49 ms fixed part and 940 GB/s), not the A100's 0.780."""
    host_ms = VLLM_V0_STEP_HOST_SECONDS.value * 1e3
    gb = _bf16_7b_bytes() / 1e9
    assert gb == pytest.approx(14.197, abs=0.001)
    rate = gb / (ZL03_BF16_7B_MS - host_ms)  # GB a ms = TB/s
    assert rate / 1.008 == pytest.approx(0.955, abs=0.001)
    assert gb / ZL03_BF16_7B_MS / 1.008 == pytest.approx(0.849, abs=0.001)
    layers, hidden, _, _, inter, vocab = QWEN15["7b"]
    int4_gb = layers * (4 * hidden * hidden + 3 * hidden * inter) * (0.5 + 4 / 128) / 1e9
    lm_head_gb = hidden * vocab * 2 / 1e9
    int4_ms = ZL03_GPTQ_7B_PREFILL1_MS - host_ms - lm_head_gb / rate
    assert int4_gb / int4_ms / rate == pytest.approx(0.927, abs=0.002)
    rate_149 = gb / (ZL03_BF16_7B_MS - 1.49)
    assert int4_gb / (ZL03_GPTQ_7B_PREFILL1_MS - 1.49 - lm_head_gb / rate_149) / rate_149 == pytest.approx(
        0.876, abs=0.002
    )


def test_the_sized_share_of_each_4090_gap():
    """The shares quoted in the GPTQ rows' reasons (_zl03_sized_ms, hand arithmetic against the pinned figures): with
    the product's 1.84 ms a step 52 / 52 / 80 / 68 / 73 / 71%; with the page's 1.49 ms 99 / 82 / 103 / 78 / 79 / 74%
    (0.5B .. 32B): under 80% from the 7B up, where the int4 bytes dominate and Marlin's Ada rate is not sized."""
    with_constant = [round(_sized_fraction(size, 1.84), 2) for size in QWEN15]
    with_page = [round(_sized_fraction(size, 1.49), 2) for size in QWEN15]
    assert with_constant == pytest.approx([0.52, 0.52, 0.80, 0.68, 0.73, 0.71], abs=0.011)
    assert with_page == pytest.approx([0.99, 0.82, 1.03, 0.78, 0.79, 0.74], abs=0.011)


# --- [SGL060]: vLLM 0.6.0 with multi-step scheduling (--num-scheduler-steps 10), which the docs say vllm_v0 does not
# size. Concurrency from Little's law on the row's own median E2E latency: 4 requests/s x 1.692 s = 6.8 -> 7 streams;
# ShareGPT's 202 / 201 tokens a request ([SHAREGPT]). The product's answer barely moves with the guess (4 to 10
# streams: 10.63-10.79 ms a compiled step).
SGL060_TPOT_MS = 14.14
SGL060_OURS = {"compiled": 93.36, "vllm_v0": 79.68}  # tokens/s a stream, pinned below


def _sgl060_speed(engine: str) -> float:
    spec = {
        "name": f"aud48v-sgl060-llama-3.1-8b-{engine}",
        "task": "inference",
        "model": {"preset": "llama-3.1-8b"},
        "inference": {"concurrency": 7, "context_len": 403, "output_tokens": 201, "engine": engine},
    }
    report = size_spec_document(copy.deepcopy(spec), [A100], calibrate=False)
    return report["throughput"]["decode_tokens_per_second_per_stream"]


@pytest.mark.django_db
def test_vllm_060_multi_step_row_stated_vllm_v0_lands_by_compensation(bundled_catalog):
    """[SGL060] median TPOT 14.14 ms (70.72 tokens/s) at 4 requests/s. Stated vllm_v0 (a user with a V0 0.6.0 run):
    79.68 (+12.7%), inside. Not evidence for the constant: with --num-scheduler-steps 10 the loop's host work is paid
    once per 10 steps (the median ITL, 129.32 ms, is the 10-token burst), while vllm_v0 charges 1.84 ms at every step;
    the run's TPOT also carries what the product does not price (the prefills of 4 arriving requests a second, which
    V0 0.6.0 without chunked prefill runs between decode bursts; multi-step's own per-burst cost). Two unpriced costs
    of opposite sign happen to meet inside the tolerance."""
    ours = _sgl060_speed("vllm_v0")
    assert ours == pytest.approx(1e3 / SGL060_TPOT_MS, rel=SPEED)


@pytest.mark.django_db
@pytest.mark.xfail(
    strict=True,
    reason=(
        "UNEXPLAINED: [SGL060] vLLM 0.6.0 --num-scheduler-steps 10, Llama 3.1 8B Instruct BF16, 1 x A100 80G, ShareGPT "
        "at 4 requests/s: median TPOT 14.14 ms (70.72 tokens/s); ours with engine compiled (the docs keep multi-step "
        "out of vllm_v0) 93.36 (+32.0%) at 7 streams (Little's law on the median E2E) and 202 / 201 tokens "
        "([SHAREGPT]). The 10-step loop pays its host work once a burst (ITL 129.32 ms for 10 tokens = 12.9 ms a "
        "step inside a burst, against the product's 10.71 ms of GPU work), and TPOT also carries the arriving "
        "requests' prefills (V0 0.6.0 without chunked prefill). Neither is sized: no field states "
        "num_scheduler_steps or the arrival rate's prefill interference; vllm_v0 lands it (+12.7%) only by charging "
        "1.84 ms at every step (test_vllm_060_multi_step_row_stated_vllm_v0_lands_by_compensation)"
    ),
)
def test_vllm_060_multi_step_row_stated_compiled(bundled_catalog):
    """[SGL060] stated as the docs steer a multi-step run: engine compiled (a step is its GPU work)."""
    assert _sgl060_speed("compiled") == pytest.approx(1e3 / SGL060_TPOT_MS, rel=SPEED)


@pytest.mark.django_db
def test_the_quoted_sgl060_figures(bundled_catalog):
    for engine, ours in SGL060_OURS.items():
        assert _sgl060_speed(engine) == pytest.approx(ours, rel=0.005)


# --- [QW25Q] (fix48v): the fit page's own vLLM 0.6.3 GPTQ-Int4 rows, stated as a user would (int4, vllm_v0; vLLM
# converts a GPTQ checkpoint to gptq_marlin where its quantize config allows, [MARLIN]; these checkpoints' configs were
# not opened). The product prices int4 at int4_decode_bandwidth_efficiency 0.617 of the 16-bit rate. Held out for both
# the host constant and the int4 rate on the fit row's host.
QW25_GPTQ_INT4 = {  # (published tokens/s, ours vllm_v0), end to end: 2,048 / (first token + 2,048 decode steps)
    ("qwen2.5-7b", 1): (154.05, 151.83),
    ("qwen2.5-7b", 6144): (141.98, 141.91),
    ("qwen2.5-7b", 14336): (129.35, 129.53),
    ("qwen2.5-7b", 30720): (108.30, 108.08),
    ("qwen2.5-14b", 1): (98.02, 90.49),
    ("qwen2.5-14b", 6144): (86.10, 81.11),
    ("qwen2.5-14b", 14336): (76.85, 70.55),
    ("qwen2.5-14b", 30720): (60.91, 54.58),
}


def _qw25_int4_speed(preset: str, prompt: int) -> float:
    spec = {
        "name": f"fix48v-{preset}-gptq-int4-{prompt}",
        "task": "inference",
        "model": {"preset": preset},
        "precision": "fp16",  # vLLM runs GPTQ checkpoints in float16
        "weight_quantization": "int4",
        "inference": {
            "concurrency": 1,
            "context_len": prompt + 2048,
            "output_tokens": 2048,
            "engine": "vllm_v0",
        },
    }
    t = size_spec_document(copy.deepcopy(spec), [A100], calibrate=False)["throughput"]
    return 2048 / (t["time_to_first_token_seconds"] + 2048 / t["decode_tokens_per_second_per_stream"])


@pytest.mark.django_db
@pytest.mark.parametrize("row", list(QW25_GPTQ_INT4), ids=[f"{p}-{n}" for p, n in QW25_GPTQ_INT4])
def test_qwen25_vllm_063_gptq_int4_rows_on_one_a100(bundled_catalog, row):
    """[QW25Q]: 7B -1.4 / -0.1 / +0.1 / -0.2%, 14B -7.7 / -5.8 / -8.2 / -10.4% (fix50m, the 16-bit lm_head at the
    16-bit rate; before: 7B -8.1 / -6.4 / -5.7 / -5.1%, 14B -13.0 / -10.7 / -12.4 / -13.6%, slow side, the 14B near the
    edge). Priced at a Marlin rate (the 4-bit bytes at the 16-bit rate, [MARLIN]) the same rows read +17..+28%
    (7B input 1 196.93, 14B input 1 125.05 tokens/s): the reason no such value was landed (fix48v)."""
    assert _qw25_int4_speed(*row) == pytest.approx(QW25_GPTQ_INT4[row][0], rel=SPEED)


@pytest.mark.django_db
def test_the_quoted_qw25_int4_figures(bundled_catalog):
    for row, (_, ours) in QW25_GPTQ_INT4.items():
        assert _qw25_int4_speed(*row) == pytest.approx(ours, rel=0.005)
