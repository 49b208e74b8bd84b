"""Training attention at a named kernel's published speed (the spec's ``attention_kernel``).

By default the engine runs causal attention at the run's fitted efficiency, like the linears. Stated, the
kernel's published causal forward and backward TFLOPS on H100 (FlashAttention-3 paper figures, bf16, head
dim 128, by the sequence length a kernel call sees) bound it: a step whose attention the kernel cannot run
in the time the engine gives it gets the difference added. Under context parallelism each ring step calls
the kernel on one rank's s / cp query tokens against s / cp key tokens, so that is the length read off.
"""

from __future__ import annotations

import numpy as np

from procurement.sizing.assumptions import ATTENTION_KERNEL_LENGTHS, ATTENTION_KERNEL_TFLOPS_H100

# FlashAttention counts a backward as 2.5 forwards (five matmuls against two: Dao 2023, sec. 3.1).
BACKWARD_WORK = 2.5
H100_DENSE_BF16_TFLOPS = 989.5
# the dense rate of the precision over bf16's on every NVIDIA part with the format (attention stays bf16)
SIXTEEN_BIT_SHARE = {"fp8": 0.5, "fp4": 0.25}


def kernel_tflops(kernel: str, block_tokens: float) -> tuple[float, float]:
    """(causal forward, backward) TFLOPS of ``kernel`` on an H100 SXM at ``block_tokens`` a call,
    interpolated in log length between the published points and held at the last (16k) beyond it."""
    forward, backward = ATTENTION_KERNEL_TFLOPS_H100[kernel]
    lengths = np.log2(ATTENTION_KERNEL_LENGTHS)
    at = np.log2(max(float(block_tokens), 1.0))
    return float(np.interp(at, lengths, forward)), float(np.interp(at, lengths, backward))


def kernel_attention_seconds(spec, forward_flops_per_gpu, peak_tflops) -> np.ndarray:
    """Seconds the stated kernel needs for a GPU's attention of one step: its forward passes (two under full
    recomputation) and one backward of 2.5 forwards, at the H100 rates scaled by the part's 16-bit peak
    (``peak_tflops`` is the precision's, as the engine passes it)."""
    block = spec.seq_len / spec.parallelism.context_parallel
    forward_rate, backward_rate = kernel_tflops(spec.attention_kernel, block)
    sixteen_bit = np.asarray(peak_tflops, dtype=float) * SIXTEEN_BIT_SHARE.get(spec.precision, 1.0)
    scale = sixteen_bit / H100_DENSE_BF16_TFLOPS * 1e12
    forwards = 2.0 if spec.gradient_checkpointing == "full" else 1.0
    return forward_flops_per_gpu * (forwards / forward_rate + BACKWARD_WORK / backward_rate) / scale


def extra_attention_seconds(spec, forward_flops_per_gpu, engine_attention_s, peak_tflops) -> np.ndarray:
    """What the stated kernel adds to a step beyond the attention time the engine gives it (its share of
    the busy time by FLOPs, as the context-parallel overlap counts it); 0 when none is stated."""
    if spec.attention_kernel == "engine" or spec.model.is_image:
        return np.zeros_like(np.asarray(engine_attention_s, dtype=float))
    needed = kernel_attention_seconds(spec, forward_flops_per_gpu, peak_tflops)
    return np.maximum(0.0, needed - engine_attention_s)
