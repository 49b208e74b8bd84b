"""The serving-at-scale rows of docs/validation.md (issue 26, class 7), before and after.

TensorRT-LLM's published first tokens and peak throughputs (procurement/sizing/validation.py, cases
``trtllm-*``) against the engine before the serving model was rebuilt (main at cea0c8f: decode step =
max(reads, FLOPs), no prefill charged, prefill at one 0.50 of the precision's peak, the sizing page's TP
all-reduces at latency only) and live. The earlier sections' "same reference set" medians leave these rows
out (``earlier_rows``).
"""

from __future__ import annotations

import statistics

# Errors of the engine at cea0c8f on the same cases (computed with the same specs then).
SERVING_BEFORE = {
    "trtllm-v090-a100-fp16-llama2-7b-ttft": +0.390,
    "trtllm-v090-h100-fp8-llama2-7b-ttft": -0.058,
    "trtllm-v05-a100-fp16-llama2-70b-tp4-ttft": +0.233,
    "trtllm-v05-h100-fp8-llama2-70b-tp4-ttft": -0.303,
    "trtllm-v090-h100-fp8-llama2-7b-b896": +1.047,
    "trtllm-v090-h100-fp8-llama2-70b-tp2-b64-2k2k": +0.280,
    "trtllm-v090-h100-fp8-llama2-70b-tp4-b512": +1.191,
    "trtllm-v090-a100-fp16-llama2-70b-tp4-b1024": +0.620,
    "trtllm-v061-h100-fp8-llama2-7b-b768": +1.020,
    "trtllm-v061-h100-fp8-llama2-70b-tp4-b480": +2.979,
    "trtllm-v061-a100-fp16-llama2-70b-tp4-b240": +0.990,
}


def earlier_rows(rows: list) -> list:
    """The rows of the reference set before the serving rows were added."""
    return [row for row in rows if row.reference_id not in SERVING_BEFORE]


def render_serving_section(rows: list) -> str:
    now = {row.reference_id: row.error for row in rows}
    before = statistics.median(abs(error) for error in SERVING_BEFORE.values())
    after = statistics.median(abs(now[case]) for case in SERVING_BEFORE)
    lines = [
        "",
        "## Issue 26: serving at scale, before and after",
        "",
        "A decode step now adds the GEMMs (weights read once, or 2N FLOPs per stream), attention over every"
        " stream's KV cache at its context, and the tensor-parallel all-reduces; total tokens/s pays each"
        " request's prefill once per output_tokens steps; prefill and batched GEMMs run at an efficiency per"
        " precision fitted on one published first token each (A100 FP16 0.69, H100 FP8 0.47; Hopper 16-bit"
        " from the published FP8-over-FP16 prefill speedup, 1.68x). The v0.9.0 7B first tokens are the fit"
        " points; every other row checks it. Before: the step was max(reads, FLOPs), hiding the KV reads at"
        " hundreds of streams, with no prefill charged and FP8 prefill at 2x BF16.",
        "",
        f"Median absolute error of these {len(SERVING_BEFORE)} rows, before → after: {before:.1%} → {after:.1%}.",
        "",
        "| reference | error before | error after |",
        "|---|---:|---:|",
    ]
    lines += [f"| {case} | {error:+.1%} | {now[case]:+.1%} |" for case, error in SERVING_BEFORE.items()]
    return "\n".join(lines) + "\n"
