"""Decode attention that does not share a KV head's cache across its query heads (inference.decode_attention).

The product's decode step reads each stream's KV cache once a KV head (shared_kv: TensorRT-LLM's XQA, FlashAttention
and FlashInfer decode). TensorRT-LLM runs the masked MHA kernel where XQA is not taken (query heads a KV head other
than 8 or head size other than 128 on any release through v0.9, decoderXQARunner.h:117-118 @80bc075; a group-8 model
only on v0.5-v0.7 or with XQA off), one thread block a query head, each block walking its KV head's whole cache (release/0.5.0 6b32b407,
decoderMaskedMultiheadAttentionLaunch.h:187 and ...Template.h:1132-1133): a group of g query heads visits every
element g times. Its threads a key come from the 16-bit compute type, not the cache's (Template.h:942-960), so an FP8
cache costs what an FP16 one does an element: the visits run at assumptions.MMHA_ELEMENTS_PER_SM_CLOCK elements an
SM a clock, not at a byte rate. The step's attention is the longer of those visits and the product's one read.
"""

from __future__ import annotations

import numpy as np

from procurement.sizing.assumptions import MMHA_ELEMENTS_PER_SM_CLOCK
from procurement.sizing.bytes_model import DTYPE_BYTES
from procurement.sizing.clocks import boost_clocks_mhz, sm_counts
from procurement.sizing.spec import WorkloadSpec


def per_query_head(spec: WorkloadSpec) -> bool:
    return spec.inference.decode_attention == "per_query_head"


def visits_priced(spec: WorkloadSpec) -> bool:
    """per_query_head stated on a grouped-KV model. At one query head a KV head (MHA) the masked MHA's walk is the
    product's one read, the kernel its MHA rows were priced on (the [TRT050] / [TRT8] MHA 7B rows land at
    shared_kv), so nothing changes there, as docs/workload-spec.md promises (aud51m case 9)."""
    return per_query_head(spec) and query_heads_per_kv_head(spec) > 1.0


def query_heads_per_kv_head(spec: WorkloadSpec) -> float:
    model = spec.model
    return float(model.num_attention_heads) / float(model.num_key_value_heads or model.num_attention_heads)


def sm_clock_hz(gpu) -> float:
    """SMs x the clock the card's peaks are stated at (clocks.py), an NVIDIA card's issue width a second; NaN where
    no row is bundled or the card is not NVIDIA's (the masked MHA kernel is TensorRT-LLM's, CUDA only)."""
    sms, mhz = sm_counts().get(gpu.slug), boost_clocks_mhz().get(gpu.slug)
    if sms is None or mhz is None or not gpu.is_nvidia:
        return float("nan")
    return sms * mhz * 1e6


def visit_seconds(spec: WorkloadSpec, batch, kv_read_bytes: float, tp, sm_clock) -> np.ndarray:
    """Seconds a decode step's query heads take to visit their KV heads' caches under per_query_head: group x batch
    x the cache's elements a stream, split over tp GPUs, at MMHA_ELEMENTS_PER_SM_CLOCK an SM a clock; 0 under
    shared_kv and for an MHA model (visits_priced), NaN where the card has no SMs x clock (the caller keeps the
    read then)."""
    if not visits_priced(spec):
        return np.zeros_like(np.asarray(tp, dtype=float))
    elements = (
        query_heads_per_kv_head(spec) * batch * kv_read_bytes / DTYPE_BYTES[spec.inference.kv_cache_dtype]
    )
    rate = np.asarray(tp, dtype=float) * np.asarray(sm_clock, dtype=float) * MMHA_ELEMENTS_PER_SM_CLOCK.value
    return elements / rate


def text(spec: WorkloadSpec, gpu) -> str:
    """The speed breakdown's clause for a stated per_query_head decode attention; "" otherwise."""
    if not per_query_head(spec):
        return ""
    group = query_heads_per_kv_head(spec)
    if group <= 1.0:
        return (
            "inference.decode_attention per_query_head: one query head a KV head (MHA), so each head's walk is the "
            "one read of the KV cache already priced: nothing changes"
        )
    clock = sm_clock_hz(gpu)
    if np.isnan(clock):
        return (
            f"inference.decode_attention per_query_head: no SM count and clock bundled for {gpu.slug} (or not an "
            "NVIDIA card), so its decode attention is priced as one read of the KV cache"
        )
    return (
        f"inference.decode_attention per_query_head: each of the {group:g} query heads a KV head walks its whole KV "
        f"cache (TensorRT-LLM pre-XQA masked MHA), at {MMHA_ELEMENTS_PER_SM_CLOCK.value:g} elements an SM a clock "
        f"({clock / 1e9 * MMHA_ELEMENTS_PER_SM_CLOCK.value:,.0f} G elements a second on {gpu.slug}, whatever the "
        "cache's bytes an element), where that is longer than one read of the cache; "
        f"{release_rate_text(spec)}"
    )


def release_rate_text(spec: WorkloadSpec) -> str:
    """Which release the rate is (aud51m fix list item 1): where the visits set the step, the figure is v0.5.0's and
    a lower bound on a later release's speed. The later rates are what [TRT8] rows imply, not set apart from the
    rows they would be checked on, so no second constant is fitted (NOTES-issue26.md fix51m)."""
    fp8 = (
        "; an FP8 cache runs faster still on v0.6.1+ (Q and P pre-scaled, a dequantizing multiply an element "
        "fewer: MMHA_FP8_SCALE_Q_INSTEAD_OF_K @0268914; the v0.8.0 Hopper FP8 rows imply 16.3-16.9)"
        if spec.inference.kv_cache_dtype == "fp8"
        else ""
    )
    return (
        f"{MMHA_ELEMENTS_PER_SM_CLOCK.value:g} is TensorRT-LLM v0.5.0's FP16 rate (fitted on one v0.5.0 A100 FP16 "
        "row); later releases run faster an element (the v0.8.0 A100 FP16 rows imply 11.3-14.1), so where these "
        f"visits set the step the figure is a lower bound on a later release's speed{fp8}"
    )
