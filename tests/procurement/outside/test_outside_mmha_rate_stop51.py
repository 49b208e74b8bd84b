"""prexqa (stop 51): the pre-XQA masked MHA decode of TensorRT-LLM v0.5.0 / v0.6.1 sized per element a query head
visits, not per byte. An analysis of the [TRT050] strict xfails of test_outside_serving_audit_stop46.py; no engine
change (no spec field states the serving engine's release or its decode attention kernel, and the rate below is set
on one row of the table it sizes). mmha (stop 51): landed as inference.decode_attention per_query_head
(procurement/sizing/decode_attention.py, assumptions.MMHA_ELEMENTS_PER_SM_CLOCK = 9.23, still the fit below); the
engine reproduces every figure here to 0.1 tok/s (test_outside_serving_audit_stop46.py states the field).

Sources (read with git from the octoml/TensorRT-LLM-release mirror, NVIDIA's own release commits):
  [MMHA050] release/0.5.0 6b32b407 cpp/tensorrt_llm/kernels/decoderMaskedMultiheadAttention/
            decoderMaskedMultiheadAttentionLaunch.h:187 `dim3 grid{num_heads, batch_size, seq_len_tile}` (a block a
            query head) and ...Template.h:1132-1133 `qhead_per_kv = num_heads / num_kv_heads; hi_kv = hi /
            qhead_per_kv`: each of a KV head's 8 (Llama 2 70B) or 29 (Falcon 180B) query-head blocks walks its whole
            K and V cache, no sharing. Template.h:942-960 and 1006-1008: THREADS_PER_KEY / THREADS_PER_VALUE are
            `Dh_MAX * sizeof(T) / 16` of T, the 16-bit compute type, not of the cache type: an FP8 cache runs the
            same threads and instructions an element as an FP16 one, with 8-byte loads (comment at line 85) and a
            dequantization of every K and V element (load_8bits_kv_cache_vec(..., kv_scale_quant_orig), lines 1565,
            1937). So its cost is per element visited, at a rate set by the SMs' issue (SMs x clock), not per byte.
  [MMHA061] the v0.6.1 tree 0268914 (version.py 0.6.1), same file: the same grid and hi_kv, but
            MMHA_FP8_SCALE_Q_INSTEAD_OF_K / MMHA_FP8_SCALE_P_INSTEAD_OF_V (lines 47-54, 'Pre-scale Q or P to reduce
            number of instructions for dequantizing KV cache'; line 1653 'There are many more elements from K than
            elements from Q so we pre-scale Q instead'): an FP8 cache loses one multiply an element; FP16 unchanged.
  [CLK]     procurement/data/gpu_clocks.csv (the A100 / H100 whitepapers): A100 SXM4 108 SMs at 1,410 MHz, H100 SXM5
            132 SMs at 1,830 MHz.
  [TRT050] / [TRT061]: the rows of test_outside_serving_audit_stop46.py and test_outside_v061_gqa_stop46.py.

Sizing (by hand, the same arithmetic below): the product's step plus, beyond its one read of each KV head's cache at
the achieved HBM rate, the elements the query heads visit (group x batch x KV bytes a stream a step / TP / bytes an
element) at R elements an SM a clock. R = 9.23 is set on ONE row, [TRT050] A100 FP16 70B TP 4 batch 64 2,048/2,048
(the row implies it exactly: 9.23). Held out:
  [TRT050] A100 FP16 70B: 128/2,048 +58.4% -> +14.9%; 2,048/128 +5.6% -> -4.6%; 128/128 +25.0% -> +18.8%.
  [TRT050] H100 FP8 70B (other card, other cache dtype, R scaled by SMs x clock only): 128/2,048 +84.8% -> +7.4%;
            2,048/128 +17.3% -> -7.6%; 2,048/2,048 +120.3% -> -7.7%; 128/128 +27.9% -> +15.7%.
  [TRT050] MHA Llama 7B controls (group 1, same kernel): unchanged or within 15% (H100 +3.3% / -3.4%, A100 -4.3% /
            -4.7%); they bound R from below (at R 8 the H100 2,048/2,048 control reads -13.7%).
            fix51m: the engine now skips the term at group 1 (the field's MHA contract), so this lower bound
            is the hand sizing's here, not the engine's (its H100 FP8 controls read +7.3% / +0.4% stated).
  [TRT061] A100 FP16 70B (same FP16 path in [MMHA061]): 1,280 128/128 +0.4% -> -7.9%; 240 128/2,048 +73.8% -> -0.0%;
            120 2,048/128 -3.4% -> -13.3%.
  [TRT061] H100 FP8 70B: over-corrected, -28.2% at 2,048/2,048 (TP 2; its other rows -16 to -27%): the v0.6.1 FP8 path is faster per
            element than v0.5.0's, the sign [MMHA061]'s pre-scaling gives; its size (how many instructions an element
            the multiply was) is not established here.
  [TRT050] Falcon 180B (group 29, head 64: 8 threads a key, not 16): H100 +139.5% -> +37.9%, A100 +66.0% -> +23.2%:
            not landed; its 128/128 row misses by +40.5% with no decode attention to speak of.
Left: the 128/128 residual (+15.7 / +18.8% after the term) and Falcon's; a spec field naming the decode attention
kernel (shared across a KV group, or per query head at a release's rate) would be needed to apply it in the engine.
"""

from __future__ import annotations

import pytest

from procurement.sizing import parse_workload_spec
from procurement.sizing.assumptions import ACHIEVED_BANDWIDTH_FRACTION
from procurement.sizing.clocks import boost_clocks_mhz, sm_counts
from procurement.sizing.throughput import decode_read_bytes
from procurement.sizing.validation import trtllm_spec
from tests.procurement.outside.test_outside_audit_stop43s import MODELS
from tests.procurement.outside.test_outside_serve44 import GPUS, per_gpu

A100, H100 = "a100-sxm4-80gb", "h100-sxm5-80gb"


def _terms(model, precision, gpu, tp, batch, prompt, output):
    """(the product's step in s, its one read of the KV cache in s, element visits of the query heads a step)."""
    raw = trtllm_spec(model if model not in MODELS else "llama-2-7b", precision, tp, batch, prompt, output)
    if model in MODELS:
        raw["model"] = MODELS[model]
    spec = parse_workload_spec({"name": "s", **raw})
    _, kv = decode_read_bytes(spec, float(batch))
    group = spec.model.num_attention_heads // spec.model.num_key_value_heads
    step = batch / (per_gpu(model, precision, gpu, tp, batch, prompt, output) * tp)
    once = batch * kv / tp / (GPUS[gpu].memory_bandwidth_gbps * 1e9 * ACHIEVED_BANDWIDTH_FRACTION)
    visits = group * batch * kv / tp / (1 if precision == "fp8" else 2)
    return step, once, visits


def _sm_clocks(gpu):
    return sm_counts()[gpu] * boost_clocks_mhz()[gpu] * 1e6


def implied_rate(row):
    """Elements an SM a clock the published row implies."""
    *case, published = row
    step, once, visits = _terms(*case)
    return visits / (case[4] / (published * case[3]) - step + once) / _sm_clocks(case[2])


def sized(row, rate):
    *case, _ = row
    step, once, visits = _terms(*case)
    return case[4] / (step + max(0.0, visits / (rate * _sm_clocks(case[2])) - once)) / case[3]


def _ids(value):
    return "-".join(map(str, value[:7])) if isinstance(value, tuple) else ""


FIT = ("llama-2-70b", "fp16", A100, 4, 64, 2048, 2048, 738 / 4)
# (row, before, after): before the product today, after with the per-element term at the fit row's rate
HELD_OUT = [
    (("llama-2-70b", "fp16", A100, 4, 64, 128, 2048, 1181 / 4), 0.584, 0.149),
    (("llama-2-70b", "fp16", A100, 4, 64, 2048, 128, 272 / 4), 0.056, -0.046),
    (("llama-2-70b", "fp16", A100, 4, 64, 128, 128, 1237 / 4), 0.250, 0.188),
    (("llama-2-70b", "fp8", H100, 4, 64, 128, 2048, 2616 / 4), 0.848, 0.074),
    (("llama-2-70b", "fp8", H100, 4, 64, 2048, 128, 843 / 4), 0.173, -0.076),
    (("llama-2-70b", "fp8", H100, 4, 64, 2048, 2048, 1583 / 4), 1.203, -0.077),
    (("llama-2-70b", "fp8", H100, 4, 64, 128, 128, 3317 / 4), 0.279, 0.157),
    (("llama-2-7b", "fp8", H100, 1, 64, 128, 2048, 5367), 0.073, 0.033),
    (("llama-2-7b", "fp8", H100, 1, 32, 2048, 2048, 2230), 0.004, -0.034),
    (("llama-2-7b", "fp16", A100, 1, 32, 128, 2048, 1459), -0.043, -0.043),
    (("llama-2-7b", "fp16", A100, 1, 16, 2048, 2048, 592), -0.047, -0.047),
    (("llama-2-70b", "fp16", A100, 4, 1280, 128, 128, 670), 0.004, -0.079),
    (("llama-2-70b", "fp16", A100, 4, 240, 128, 2048, 525), 0.738, -0.000),
    (("llama-2-70b", "fp16", A100, 4, 120, 2048, 128, 79), -0.034, -0.133),
    (("llama-2-70b", "fp8", H100, 2, 64, 2048, 2048, 547), 0.913, -0.282),
    (("falcon-180b", "fp8", H100, 8, 96, 128, 2048, 2073 / 8), 1.395, 0.379),
    (("falcon-180b", "fp16", A100, 8, 64, 128, 2048, 923 / 8), 0.660, 0.232),
]


def test_the_fit_row_sets_one_rate_an_sm_clock():
    assert implied_rate(FIT) == pytest.approx(9.23, abs=0.01)


@pytest.mark.parametrize("row,before,after", HELD_OUT, ids=_ids)
def test_the_per_element_rate_on_rows_not_used_to_set_it(row, before, after):
    published = row[-1]
    assert per_gpu(*row[:-1]) / published - 1 == pytest.approx(before, abs=0.001)
    assert sized(row, implied_rate(FIT)) / published - 1 == pytest.approx(after, abs=0.001)


def test_the_rate_is_per_element_not_per_byte():
    # [MMHA050]: an FP8 cache runs the FP16 thread layout. In bytes the v0.5.0 long-output rows imply alike rates
    # on the two cards (H100 FP8 / A100 FP16), in elements an SM a clock within 14% of each other at each shape;
    # a per-byte rate sized on the A100 would leave the H100 FP8 2,048/2,048 row 2x off in time, the per-element one
    # -7.7% (above).
    h100 = implied_rate(("llama-2-70b", "fp8", H100, 4, 64, 2048, 2048, 1583 / 4))
    a100 = implied_rate(FIT)
    assert h100 / a100 == pytest.approx(1.13, abs=0.01)


def test_the_v061_fp8_path_is_faster_an_element_than_v050s():
    # [MMHA061]'s pre-scaled Q / P: the v0.6.1 H100 FP8 2,048/2,048 row implies more elements an SM a clock than
    # the v0.5.0 H100 FP8 row of the same shape (batch 64, TP 2 against TP 4), the A100 FP16 v0.6.1 row lands at
    # the v0.5.0 rate (-0.0%, above).
    v061 = implied_rate(("llama-2-70b", "fp8", H100, 2, 64, 2048, 2048, 547))
    v050 = implied_rate(("llama-2-70b", "fp8", H100, 4, 64, 2048, 2048, 1583 / 4))
    assert v061 / v050 > 1.3
