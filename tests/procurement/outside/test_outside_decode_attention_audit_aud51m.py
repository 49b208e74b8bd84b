"""aud51m (stop 51, outside audit of branch mmha): inference.decode_attention per_query_head, held out on the
TensorRT-LLM v0.8.0 table, a release the field's own documentation names ("per_query_head: TensorRT-LLM's pre-XQA
masked MHA (v0.5-v0.8 on GQA models ...)", docs/workload-spec.md), and on its neighbours (the shared_kv default on
XQA-eligible rows, a read-bound card, an MHA model).

Sources (read for this module; no row below is used by any other test: the figures grepped, the file id only in
test_outside_a100_tp8_audit_stop48.py for its first-token rows):
  [TRT8]  NVIDIA/TensorRT-LLM docs/source/performance.md, "All data was generated using version 0.8.0" (stored copy,
          read_file id 5675739753), Peak Throughput, out tok/s/GPU (Model | Batch | TP | Input | Output):
            H200 FP8: "Mistral 7B | 120 | 1 | 128 | 2048 | 8,968"; "LLaMA 70B | 64 | 1 | 2048 | 2048 | 1,461"
            H100 FP8: "Mistral 7B | 56 | 1 | 2048 | 2048 | 3,733"
            L40S FP8: "Mistral 7B | 120 | 1 | 128 | 2048 | 4,401"
            A100 FP16: "Mistral 7B | 120 | 1 | 128 | 2048 | 3,812"; "Mistral 7B | 56 | 1 | 2048 | 2048 | 1,607";
                       "Mistral 7B | 84 | 1 | 2048 | 128 | 734"; "LLaMA 70B | 32 | 4 | 2048 | 2048 | 185"
            H200 FP8: "LLaMA 7B | 56 | 1 | 2048 | 2048 | 3,530"
  [XQA071] octoml/TensorRT-LLM-release @80bc075 (tensorrt_llm/version.py "0.7.1", the last release tree stored):
          cpp/tensorrt_llm/kernels/decoderMaskedMultiheadAttention/decoderXQARunner.h:117-118 `nbQHeadsPerKV =
          nbQHeads / nbKVHeads; if (nbQHeadsPerKV != 8 || (nbKVHeads != 1 && ... != 8))` -> not XQA. Mistral 7B
          (32 query heads over 8 KV heads, group 4) never takes XQA, in any release to v0.9.0 (the ~0.8-0.9 copies
          quoted in NOTES-issue26.md fixg45 keep `nbQHeadsPerKV != 8`): its v0.8.0 decode is the masked MHA, one
          thread block a query head, exactly what per_query_head prices. Llama 2 70B (group 8, head 128; 8 KV heads
          on TP 1, 2 on TP 4) is XQA-eligible; v0.7.1 gates it behind TRTLLM_ENABLE_XQA
          (gptAttentionCommon.cpp:1271); the stored PluginConfig `enable_xqa: bool = True` (id 4882224494, ~0.8-0.9,
          not tagged) is the on-by-default one. The v0.8.0 tree itself is not stored.
The run's author's spec: trtllm_spec (the product's own TensorRT-LLM row builder) with the row's model, precision,
card, TP, batch, input / output, and inference.decode_attention as the field's documentation tells a v0.8.0 user:
per_query_head for a GQA model that does not take XQA. Bar: LLM throughput 15%.
"""

from __future__ import annotations

import pytest

from tests.procurement.outside.test_outside_serve44 import per_gpu

SPEED = 0.15
PQH = "per_query_head"
A100, H100, H200, L40S = "a100-sxm4-80gb", "h100-sxm5-80gb", "h200-sxm-141gb", "l40s"

# (model, precision, gpu, tp, batch, prompt, output): [TRT8] published out tok/s/GPU; the product's figure shared_kv
# (before mmha) and per_query_head (mmha), computed at aud51m on this branch.
ROWS = {
    ("mistral-7b", "fp16", A100, 1, 120, 128, 2048): (3812, 5180.8, 3310.3),
    ("mistral-7b", "fp16", A100, 1, 56, 2048, 2048): (1607, 1888.2, 1218.9),
    ("mistral-7b", "fp16", A100, 1, 84, 2048, 128): (734, 701.5, 615.2),
    ("mistral-7b", "fp8", H100, 1, 56, 2048, 2048): (3733, 6401.5, 2317.2),
    ("mistral-7b", "fp8", H200, 1, 120, 128, 2048): (8968, 24340.5, 6491.0),
    ("mistral-7b", "fp8", L40S, 1, 120, 128, 2048): (4401, 4435.6, 4435.6),
    ("llama-2-70b", "fp16", A100, 4, 32, 2048, 2048): (185, 203.8, 141.5),
    ("llama-2-70b", "fp8", H200, 1, 64, 2048, 2048): (1461, 1604.5, 438.7),
    # per_query_head restated by fix51m: 2,430.7 -> 3,449.5 (the term skipped at group 1, the docs' MHA contract)
    ("llama-2-7b", "fp8", H200, 1, 56, 2048, 2048): (3530, 3449.5, 3449.5),
}


def _row(case):
    return ROWS[case][0]


# --- Case 1 (PASS): [TRT8] A100 FP16 Mistral 7B, batch 120, 128/2,048: 3,812. The field's home ground: an FP16 cache
# (the fit row's type), group 4, masked MHA for certain ([XQA071]). shared_kv 5,180.8 (+35.9%) -> per_query_head
# 3,310.3 (-13.2%): the term fixes the sign and lands it, a held-out model, TP and group.
def test_trt8_a100_fp16_mistral_128_2048_stated_per_query_head():
    case = ("mistral-7b", "fp16", A100, 1, 120, 128, 2048)
    assert per_gpu(*case, decode_attention=PQH) == pytest.approx(_row(case), rel=SPEED)


# --- Case 2 (MISS): [TRT8] A100 FP16 Mistral 7B, batch 56, 2,048/2,048: 1,607. shared_kv 1,888.2 (+17.5%) ->
# per_query_head 1,218.9 (-24.2%): the term overshoots. The rate the row implies (the engine re-run at other values of
# MMHA_ELEMENTS_PER_SM_CLOCK, bisection) is 14.1 elements an SM a clock, 1.53x the fitted 9.23; case 1 implies 11.3.
MISTRAL_A100_LONG = (
    "UNEXPLAINED (aud51m): [TRT8] (performance.md 'version 0.8.0', id 5675739753) A100 FP16 Mistral 7B TP 1, batch "
    "56, 2,048/2,048: published 1,607 tok/s/GPU; stated as run (inference.decode_attention per_query_head: group 4 "
    "never takes XQA, decoderXQARunner.h:118 @80bc075 'nbQHeadsPerKV != 8') the product gives 1,218.9 (-24.2%); "
    "shared_kv 1,888.2 (+17.5%). The sign of the term is right (the masked MHA walks each KV head's cache 4 times), "
    "its size is not: this row implies 14.1 elements an SM a clock, the 128/2,048 row of the same card 11.3, the v0.5.0 "
    "fit row 9.23 (A100 FP16, same cache type, same card). Known: a v0.5.0 rate applied to a v0.8.0 kernel, and to a "
    "group-4 model at TP 1 where the fit was group 8 at TP 4; which of release (the masked MHA changed between 0.5 and "
    "0.8: multi-block mode, FP8 pre-scaling in 0.6.1) or group accounts for the 1.2-1.5x is not sized (0% sized)"
)


@pytest.mark.xfail(strict=True, reason=MISTRAL_A100_LONG)
def test_trt8_a100_fp16_mistral_2048_2048_stated_per_query_head():
    case = ("mistral-7b", "fp16", A100, 1, 56, 2048, 2048)
    assert per_gpu(*case, decode_attention=PQH) == pytest.approx(_row(case), rel=SPEED)


# --- Case 3 (MISS, a passing row moved out): [TRT8] A100 FP16 Mistral 7B, batch 84, 2,048/128: 734. shared_kv 701.5
# (-4.4%) -> per_query_head 615.2 (-16.2%). Even an unbounded rate leaves 701.5: the product is slow here before any
# visit, and the visits at 9.23 add 12 points. The documentation tells this run's author to state per_query_head.
MISTRAL_A100_PREFILL = (
    "UNEXPLAINED (aud51m): [TRT8] (id 5675739753) A100 FP16 Mistral 7B TP 1, batch 84, 2,048/128: published 734 "
    "tok/s/GPU; stated as run (per_query_head, group 4, no XQA: decoderXQARunner.h:118 @80bc075) 615.2 (-16.2%); "
    "shared_kv 701.5 (-4.4%, passes). The product is already slow on this prefill-heavy row without the visits (no "
    "rate makes it faster than 701.5), and the v0.5.0 rate's visits add 12 points; at the 11.3-14.1 the long rows of "
    "the same card imply it would land (not landed: those rates are fits of this table). Not sized (0%)"
)


@pytest.mark.xfail(strict=True, reason=MISTRAL_A100_PREFILL)
def test_trt8_a100_fp16_mistral_2048_128_stated_per_query_head():
    case = ("mistral-7b", "fp16", A100, 1, 84, 2048, 128)
    assert per_gpu(*case, decode_attention=PQH) == pytest.approx(_row(case), rel=SPEED)


# --- Cases 4-5 (MISS): [TRT8] Hopper FP8 Mistral 7B long rows. The field's documentation says the rate is "not for
# v0.6.1+ FP8 caches", but the product accepts per_query_head with an FP8 cache on any release (no release field)
# and prices it at 9.23, with no word in the speed note. H100 56 2,048/2,048: shared_kv 6,401.5 (+71.5%) ->
# 2,317.2 (-37.9%), implied rate 16.9; H200 120 128/2,048: 24,340.5 (+171.4%) -> 6,491.0 (-27.6%); H200 56
# 2,048/2,048 (not a test here) implies 16.3.
FP8_REASON = (
    "UNEXPLAINED (aud51m): [TRT8] (id 5675739753) {name}: published {pub:,} tok/s/GPU; stated as run (per_query_head: "
    "Mistral's group 4 never takes XQA, decoderXQARunner.h:118 @80bc075) {ours:,.1f} ({err:+.1%}); shared_kv "
    "{shared:,.1f} ({serr:+.1%}). The product prices an FP8 cache's visits at v0.5.0's 9.23 elements an SM a clock "
    "(the threads a key set by the 16-bit type, Template.h:942-960 @6b32b407); v0.6.1+ pre-scales Q and P for FP8 "
    "caches (MMHA_FP8_SCALE_Q_INSTEAD_OF_K / _P_INSTEAD_OF_V @0268914, 'reduce number of instructions for "
    "dequantizing'), and the Hopper FP8 long rows imply 16.3-16.9 (1.8x). Sign located, size not: one multiply fewer "
    "an element does not by itself give 1.8x (not sized, 0%). The field's documentation already says 'not for v0.6.1+ "
    "FP8 caches', yet the spec accepts it silently: a release field (or a refusal / warning for an FP8 cache) is what "
    "would express it"
)


@pytest.mark.parametrize(
    "case,name",
    [
        pytest.param(
            ("mistral-7b", "fp8", H100, 1, 56, 2048, 2048),
            "H100 SXM5 FP8 Mistral 7B TP 1, batch 56, 2,048/2,048",
            id="h100-56-2048-2048",
        ),
        pytest.param(
            ("mistral-7b", "fp8", H200, 1, 120, 128, 2048),
            "H200 FP8 Mistral 7B TP 1, batch 120, 128/2,048",
            id="h200-120-128-2048",
        ),
    ],
)
def test_trt8_hopper_fp8_mistral_long_rows_stated_per_query_head(request, case, name):
    pub, shared, ours = ROWS[case]
    request.applymarker(
        pytest.mark.xfail(
            strict=True,
            reason=FP8_REASON.format(
                name=name, pub=pub, ours=ours, err=ours / pub - 1, shared=shared, serr=shared / pub - 1
            ),
        )
    )
    assert per_gpu(*case, decode_attention=PQH) == pytest.approx(pub, rel=SPEED)


# --- Case 6 (PASS, neighbour): [TRT8] L40S FP8 Mistral 7B, batch 120, 128/2,048: 4,401. per_query_head 4,435.6
# (+0.8%) = shared_kv: the L40S's 864 GB/s keeps the one read longer than the 4 visits at 9.23 x 142 SMs x 2,490 MHz
# (gpu_clocks.csv has the card: the term is computed and loses the max, not skipped). The field does not disturb a
# read-bound card.
def test_trt8_l40s_fp8_mistral_stated_per_query_head_stays_read_bound():
    case = ("mistral-7b", "fp8", L40S, 1, 120, 128, 2048)
    ours = per_gpu(*case, decode_attention=PQH)
    assert ours == pytest.approx(_row(case), rel=SPEED)
    assert ours == pytest.approx(per_gpu(*case), rel=1e-9)


# --- Case 7 (PASS, neighbour: the default): [TRT8] Llama 2 70B rows on XQA-eligible layouts (group 8, head 128;
# 2 KV heads a GPU at TP 4, 8 at TP 1), shared_kv: A100 FP16 TP 4 batch 32 2,048/2,048 185 -> 203.8 (+10.2%); H200
# FP8 TP 1 batch 64 2,048/2,048 1,461 -> 1,604.5 (+9.8%). The default is untouched by mmha and lands v0.8.0's GQA
# rows: evidence that v0.8.0 ran XQA on them.
@pytest.mark.parametrize(
    "case",
    [("llama-2-70b", "fp16", A100, 4, 32, 2048, 2048), ("llama-2-70b", "fp8", H200, 1, 64, 2048, 2048)],
    ids=["a100-tp4-b32", "h200-tp1-b64"],
)
def test_trt8_llama2_70b_long_rows_shared_kv(case):
    assert per_gpu(*case) == pytest.approx(_row(case), rel=SPEED)


# --- Case 8 (MISS): the same H200 70B row stated as the field's documentation tells a v0.8.0 user of a GQA model
# ("per_query_head: TensorRT-LLM's pre-XQA masked MHA (v0.5-v0.8 on GQA models ...)"): 438.7 (-70.0%). The A100 TP 4
# row reads 141.5 (-23.5%) the same way.
DOC_RANGE = (
    "UNEXPLAINED (aud51m): [TRT8] (id 5675739753) H200 FP8 Llama 2 70B TP 1, batch 64, 2,048/2,048: published 1,461 "
    "tok/s/GPU; stated per the field's documentation for a v0.8 GQA run (docs/workload-spec.md: 'per_query_head: "
    "TensorRT-LLM's pre-XQA masked MHA (v0.5-v0.8 on GQA models') the product gives 438.7 (-70.0%); shared_kv "
    "1,604.5 (+9.8%, passes; the A100 TP 4 sibling 203.8, +10.2%, and 141.5, -23.5%, under per_query_head). Located "
    "in part: group 8 / head 128 is XQA's layout (decoderXQARunner.h:118 @80bc075, v0.7.1 behind TRTLLM_ENABLE_XQA; "
    "PluginConfig enable_xqa True in a stored ~0.8-0.9 copy, id 4882224494, not tagged v0.8.0), so the v0.8.0 run "
    "likely shared the KV head and the documentation's 'v0.8' range is wrong for group-8 models; shared_kv accounts "
    "for the whole gap but the v0.8.0 default is not read from a tagged tree, so not EXPLAINED. The size of the miss "
    "(-70%) is also the FP8 rate of cases 4-5 (9.23 on an FP8 cache, 8 visits an element)"
)


@pytest.mark.xfail(strict=True, reason=DOC_RANGE)
def test_trt8_h200_llama2_70b_stated_per_the_documentations_v08_range():
    case = ("llama-2-70b", "fp8", H200, 1, 64, 2048, 2048)
    assert per_gpu(*case, decode_attention=PQH) == pytest.approx(_row(case), rel=SPEED)


# --- Case 9 (FIXED by fix51m; was MISS, the field's MHA contract): [TRT8] H200 FP8 LLaMA 7B (MHA, 32 KV heads), batch
# 56, 2,048/2,048: 3,530. The documentation: "an MHA model is accepted and nothing changes, one query head a KV head".
# At aud51m it changed: shared_kv 3,449.5 (-2.3%) -> per_query_head 2,430.7 (-31.1%), the group-1 visits at 9.23 an
# SM a clock on an FP8 cache (1 byte an element) being slower than the H200's read. fix51m skips the term at one query
# head a KV head (decode_attention.visits_priced: the walk is the one read the product's MHA rows were priced on):
# per_query_head 2,430.7 (-31.1%) -> 3,449.5 (-2.3%), equal to shared_kv. Strict xfail MHA_CONTRACT removed.
def test_trt8_h200_fp8_mha_llama7b_stated_per_query_head():
    case = ("llama-2-7b", "fp8", H200, 1, 56, 2048, 2048)
    ours = per_gpu(*case, decode_attention=PQH)
    assert ours == pytest.approx(_row(case), rel=SPEED)
    assert ours == pytest.approx(per_gpu(*case), rel=1e-9)


# --- The figures quoted above, pinned outside the strict xfails (a drift would otherwise hide inside one). -------
def test_the_quoted_figures():
    for case, (_, shared, pqh) in ROWS.items():
        assert per_gpu(*case) == pytest.approx(shared, rel=0.005)
        assert per_gpu(*case, decode_attention=PQH) == pytest.approx(pqh, rel=0.005)
