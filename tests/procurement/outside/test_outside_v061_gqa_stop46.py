"""serve46 (stop 46, issue 26, serving class): TensorRT-LLM v0.6.1's Llama 2 70B peak-throughput rows, held out
against fixa45's per-query-head decode-attention term. test_outside_recommendations_3.py holds two rows of this
table (H100 FP8 TP 4 batch 480 and A100 FP16 TP 4 batch 240, 128/2,048), the product +107% / +74% there; the
other five Llama 2 70B rows of the same table had no test.

Sources (stored copies opened with read_file / find_string for this module; figures quoted where used):
  [TRT061] NVIDIA/TensorRT-LLM docs/source/performance.md, the index's copy at commit 77d24b5f (read_file id
           736701021; "This data has been updated for v0.6.1, unless specified"), Peak Throughput, out tok/s/GPU (Batch | TP | Input | Output):
             H100 FP8 LLaMA 70B: 1024 | 2 | 128 | 128 | 2,657; 480 | 4 | 128 | 2048 | 1,486; 96 | 2 | 2048 | 128 | 306;
                                 64 | 2 | 2048 | 2048 | 547
             A100 FP16 LLaMA 70B: 1280 | 4 | 128 | 128 | 670; 240 | 4 | 128 | 2048 | 525; 120 | 4 | 2048 | 128 | 79
             H100 FP8 Falcon 180B: 1024 | 4 | 128 | 128 | 987; 1024 | 8 | 128 | 2048 | 724; 64 | 4 | 2048 | 128 | 112;
                                   64 | 4 | 2048 | 2048 | 264
             A100 FP16 Falcon 180B: 1024 | 8 | 128 | 128 | 232; 128 | 8 | 128 | 2048 | 180
           Falcon-180B recipe: examples/falcon/build.py --n_head 232 --n_kv_head 8 --n_embd 14848 (head 64, 29 query
           heads a KV head), --use_inflight_batching --paged_kv_cache, --fp8_kv_cache on H100.
           Its 'Benchmarking per Model' warning: the GQA kernels "are currently experimental and not enabled by
           default" (`export TRTLLM_ENABLE_XQA=1`, exported in the Llama2-70b recipe, built with examples/llama/
           build.py --n_head 64 --n_kv_head 8, no paged KV cache, --fp8_kv_cache on H100).
  [XQABLOG] the same repository's docs/source/blogs/XQA-kernel.md (stored copies ids 66213668 and 52696339484):
           "Llama-70B on H200 up to 2.4x increased throughput with XQA", 128 / 2,048, "Throughput w/o XQA
           (tok/s/GPU) 1,227 | Throughput w/ XQA 2,941 | 2.4x" on 1 GPU, "13,232 | 25,300 | 1.9x" on 8, "TensorRT-LLM
           v0.8a", and "These improvements will be published in the main branch soon, and will be included in the
           v0.8 releases": the GQA generation kernel that shares a KV head's reads across its query heads at this
           speed came after v0.6.1.
  [TRT9]   the v0.9.0 page (stored copy id 5995251461), the same card and shape: H100 FP8 70B TP 4 batch 512,
           128/2,048: 2,725 (1.83x v0.6.1's 1,486 at 480); 70B TP 2 64 2,048/2,048: 1,011 (1.85x v0.6.1's 547);
           the MHA Llama 7B rows 1.02-1.03x between the two tables (test_outside_recommendations_3.py's comment).
  [MMHA]   fixa45's term (test_outside_xqa_stop45.py): without XQA the decode step runs the masked MHA kernel, one
           thread block a query head (docs/source/gpt_attention.md, stored id 49065559), so each KV head's cache is
           worked through once for each query head of its group, at one throughput R = 3.7 TB/s over those bytes,
           fitted on the two v0.9.0 A100 FP16 Mistral 7B long-output rows. No v0.6.1 row was used: this table is
           held out.
Tolerance: LLM speed 15%.
"""

from __future__ import annotations

import pytest

from tests.procurement.outside.test_outside_serve44 import per_gpu
from tests.procurement.outside.test_outside_xqa_stop45 import _sized_and_implied

SPEED = 0.15
H100, A100 = "h100-sxm5-80gb", "a100-sxm4-80gb"

# (precision, gpu, tp, batch, prompt, output): published [TRT061]. Llama 2 70B: 64 query heads over 8 KV heads, a
# group of 8 on every TP degree.
V061_70B = {
    ("fp8", H100, 2, 1024, 128, 128): 2657,
    ("fp8", H100, 4, 480, 128, 2048): 1486,
    ("fp8", H100, 2, 96, 2048, 128): 306,
    ("fp8", H100, 2, 64, 2048, 2048): 547,
    ("fp16", A100, 4, 1280, 128, 128): 670,
    ("fp16", A100, 4, 240, 128, 2048): 525,
    ("fp16", A100, 4, 120, 2048, 128): 79,
}
GROUP = 8


def _id(case) -> str:
    precision, gpu, tp, batch, prompt, output = case
    return f"{gpu}-{precision}-tp{tp}-b{batch}-{prompt}-{output}"


def _sized(case) -> float:
    precision, gpu, tp, batch, prompt, output = case
    sized, _ = _sized_and_implied(
        "llama-2-70b", precision, gpu, tp, batch, prompt, output, V061_70B[case], GROUP
    )
    return sized


# --- Case 1: the product as it is, on the v0.6.1 rows whose decode attention is small. ------------------------------
# Prefill-heavy and 128/128 rows: the KV cache a step reads is short, so the product (one read of each KV head a
# group, XQA's sharing) and the per-query-head term agree within the tolerance. By hand (serve46): ours 2,849.8
# (+7.3%), 309.6 (+1.2%), 673.0 (+0.4%), 76.3 (-3.4%); with [MMHA]'s term 2,466.1 (-7.2%), 261.1 (-14.7%), 633.8
# (-5.4%), 70.8 (-10.4%).
SHORT_DECODE = [
    ("fp8", H100, 2, 1024, 128, 128),
    ("fp8", H100, 2, 96, 2048, 128),
    ("fp16", A100, 4, 1280, 128, 128),
    ("fp16", A100, 4, 120, 2048, 128),
]


@pytest.mark.parametrize("case", SHORT_DECODE, ids=_id)
def test_v061_llama2_70b_short_decode_rows_within_15_percent(case):
    precision, gpu, tp, batch, prompt, output = case
    ours = per_gpu("llama-2-70b", precision, gpu, tp, batch, prompt, output)
    assert ours == pytest.approx(V061_70B[case], rel=SPEED)
    assert _sized(case) == pytest.approx(V061_70B[case], rel=SPEED)


# --- Case 2: the long-output rows at the per-query-head rate (held out). --------------------------------------------
# The product shares a KV head's reads across its 8 query heads (v0.8+ XQA, which the v0.9.0 rows it passes ran);
# v0.6.1's rows ran before [XQABLOG]'s kernel. With [MMHA]'s term at the rate fitted on v0.9.0's Mistral rows:
# H100 TP 4 480 128/2,048: 3,077.1 -> 1,532.3 (+107.1% -> +3.1%); H100 TP 2 64 2,048/2,048: 1,046.5 -> 546.7
# (+91.3% -> -0.1%); A100 TP 4 240 128/2,048: 912.5 -> 607.0 (+73.8% -> +15.6%, just outside; the A100 rows of the
# v0.9.0 table run 10-20% under the product too, test_serving_published.py's TP 8 batch 512 row +19.6%). The rates
# these rows imply for the per-query-head bytes: 3.52 / 3.70 / 2.81 TB/s, inside or under v0.9.0's held-out
# 3.2-5.6.
@pytest.mark.parametrize(
    "case", [("fp8", H100, 4, 480, 128, 2048), ("fp8", H100, 2, 64, 2048, 2048)], ids=_id
)
def test_v061_hopper_long_output_rows_at_the_per_query_head_rate(case):
    assert _sized(case) == pytest.approx(V061_70B[case], rel=SPEED)


def test_v061_a100_long_output_row_at_the_per_query_head_rate_is_near_15_percent():
    case = ("fp16", A100, 4, 240, 128, 2048)
    sized = _sized(case)
    assert sized / V061_70B[case] - 1 == pytest.approx(0.156, abs=0.01)


def test_the_step_across_releases_moved_by_the_blogs_xqa_factor():
    # [TRT061] / [TRT9] same shape and card, and [XQABLOG]'s measured with / without XQA on the same model and shape.
    assert 2725 / 1486 == pytest.approx(1.83, abs=0.01)
    assert 1011 / 547 == pytest.approx(1.85, abs=0.01)
    assert 2941 / 1227 == pytest.approx(2.40, abs=0.01) and 25300 / 13232 == pytest.approx(1.91, abs=0.01)


# --- Case 3: the table's one untested long-output row through the product (new outside case). -----------------------
V061_TP2_LONG = (
    "EXPLAINED (serve46): [TRT061] H100 FP8 Llama 2 70B TP 2, batch 64, 2,048/2,048: published 547 tok/s/GPU; ours "
    "{ours:,.1f} ({err:+.1%}). (a) the product shares each KV head's reads across its 8 query heads, as v0.8's XQA "
    "does ([XQABLOG]: 'will be included in the v0.8 releases'; with it Llama-70B 128/2,048 ran 2.4x / 1.9x "
    "faster on H200, 1 / 8 GPUs); v0.6.1 predates that kernel (its own page calls its GQA kernels 'experimental'; "
    "which of them ran is not stated), and its rows behave as the masked MHA kernel's work, one thread block a "
    "query head, each KV head worked through once a query head ([MMHA]), sizes them; (b) sized: fixa45's per-query-head term at 3.7 TB/s (fitted on two v0.9.0 A100 "
    "Mistral rows, none of this table) puts this row at 546.7 (-0.1%) and the table's other long rows at +3.1% "
    "(H100 TP 4) and +15.6% (A100 TP 4), its four short-decode rows staying inside 15% (case 1); from the rows "
    "alone, the v0.9.0 table ran this card and shape at 1,011, 1.85x, while the MHA Llama 7B rows moved 1.02-1.03x; "
    "(c) a spec would have to state the serving engine's release, or whether its decode attention shares a KV head "
    "across the group: inference.engine says only compiled or hf_eager, no field does"
)


@pytest.mark.xfail(
    strict=True,
    reason=V061_TP2_LONG.format(ours=1046.5, err=1046.5 / 547 - 1),
)
def test_v061_h100_70b_tp2_long_output_row_within_15_percent():
    case = ("fp8", H100, 2, 64, 2048, 2048)
    precision, gpu, tp, batch, prompt, output = case
    assert per_gpu("llama-2-70b", precision, gpu, tp, batch, prompt, output) == pytest.approx(
        V061_70B[case], rel=SPEED
    )


# --- Case 4: the same table's Falcon 180B rows (held out; no test had them). -----------------------------------------
# Falcon 180B (29 query heads a KV head, head 64) is outside every XQA copy read (fixa45's [XQA]), so its decode ran
# the per-query-head kernel in v0.6.1 as in v0.9.0, whose long rows test_outside_serve44.py holds as EXPLAINED. By
# hand (serve46): ours 1,033.2 / 108.3 / 249.1 on the short-decode rows (+4.7 / -3.3 / +7.4%), and on the long rows
# 1,388.6 / 473.1 / 342.9 (+91.8 / +79.2 / +90.5%); with [MMHA]'s term 922.1 / 95.1 / 235.9 (-6.6 / -15.1 / +1.7%)
# and 704.4 / 251.3 / 234.5 (-2.7 / -4.8 / +30.3%). The H100 2,048/128 row's -15.1% with the term is the same as
# v0.9.0's prefill-heavy Falcon Hopper rows (-15.1 to -17.5%, fixg45): the term's known limit, one reason it is not
# an engine change. The A100 long row keeps +30.3% with it: the A100 decode residual again, larger here.
FALCON_V061 = {
    ("fp8", H100, 4, 1024, 128, 128): 987,
    ("fp8", H100, 8, 1024, 128, 2048): 724,
    ("fp8", H100, 4, 64, 2048, 128): 112,
    ("fp8", H100, 4, 64, 2048, 2048): 264,
    ("fp16", A100, 8, 1024, 128, 128): 232,
    ("fp16", A100, 8, 128, 128, 2048): 180,
}
FALCON_GROUP = 29


def _falcon_sized(case) -> float:
    precision, gpu, tp, batch, prompt, output = case
    sized, _ = _sized_and_implied(
        "falcon-180b", precision, gpu, tp, batch, prompt, output, FALCON_V061[case], FALCON_GROUP
    )
    return sized


FALCON_V061_LONG = (
    "EXPLAINED (serve46): [TRT061] Falcon 180B {row}: published {published}; ours {ours} ({err}). (a) Falcon 180B's "
    "29 query heads a KV head and head size 64 fail every XQA copy read (fixa45's [XQA]: group 8 or 1, head 128), so "
    "its decode ran the masked MHA kernel, one thread block a query head ([MMHA]), which works through each KV head "
    "once a query head, where the product reads it once a group; the v0.9.0 Falcon long rows carry the same "
    "explanation (test_outside_serve44.py); (b) sized: fixa45's per-query-head term at 3.7 TB/s (fitted on two "
    "v0.9.0 A100 Mistral rows, none of this table) puts this row at {sized}; (c) no field states whether the "
    "serving engine's decode attention shares a KV head across its query heads (inference.engine says only "
    "compiled or hf_eager)"
)
FALCON_V061_A100_LONG = (
    "UNEXPLAINED in part (serve46): [TRT061] Falcon 180B A100 FP16 TP 8, batch 128, 128/2,048: published 180; ours "
    "342.9 (+90.5%). The masked MHA kernel's per-query-head work (29 query heads a KV head: no XQA in any release, "
    "fixa45) sized at 3.7 TB/s gives 234.5 (+30.3%): 60 of the 90 points; the rest is beyond the term, the A100 "
    "long-output residual this table's Llama 2 70B TP 4 row shows too (+15.6% with the term) and v0.9.0's A100 TP 8 "
    "70B row with XQA (+19.6%, test_serving_published.py), larger here; not sized"
)


def _falcon_param(case, reason):
    published = FALCON_V061[case]
    precision, gpu, tp, batch, prompt, output = case
    marks = ()
    if reason:
        ours = {
            ("fp8", H100, 8, 1024, 128, 2048): (1388.6, "704.4 (-2.7%)"),
            ("fp8", H100, 4, 64, 2048, 2048): (473.1, "251.3 (-4.8%)"),
        }.get(case)
        if ours is not None:
            name = "H100 FP8" if gpu == H100 else "A100 FP16"
            reason = reason.format(
                row=f"{name} TP {tp}, batch {batch:,}, {prompt:,}/{output:,}",
                published=published,
                ours=f"{ours[0]:,.1f}",
                err=f"{ours[0] / published - 1:+.1%}",
                sized=ours[1],
            )
        marks = (pytest.mark.xfail(strict=True, reason=reason),)
    return pytest.param(case, marks=marks, id=_id(case))


@pytest.mark.parametrize(
    "case",
    [
        _falcon_param(("fp8", H100, 4, 1024, 128, 128), None),
        _falcon_param(("fp8", H100, 8, 1024, 128, 2048), FALCON_V061_LONG),
        _falcon_param(("fp8", H100, 4, 64, 2048, 128), None),
        _falcon_param(("fp8", H100, 4, 64, 2048, 2048), FALCON_V061_LONG),
        _falcon_param(("fp16", A100, 8, 1024, 128, 128), None),
        _falcon_param(("fp16", A100, 8, 128, 128, 2048), FALCON_V061_A100_LONG),
    ],
)
def test_v061_falcon_180b_rows_within_15_percent(case):
    precision, gpu, tp, batch, prompt, output = case
    ours = per_gpu("falcon-180b", precision, gpu, tp, batch, prompt, output)
    assert ours == pytest.approx(FALCON_V061[case], rel=SPEED)


@pytest.mark.parametrize(
    "case", [("fp8", H100, 8, 1024, 128, 2048), ("fp8", H100, 4, 64, 2048, 2048)], ids=_id
)
def test_v061_falcon_hopper_long_rows_at_the_per_query_head_rate(case):
    assert _falcon_sized(case) == pytest.approx(FALCON_V061[case], rel=SPEED)


def test_v061_falcon_terms_known_limits():
    # The prefill-heavy H100 row leaves 15% with the term (as v0.9.0's do); the A100 long row keeps +30% with it.
    assert _falcon_sized(("fp8", H100, 4, 64, 2048, 128)) / 112 - 1 == pytest.approx(-0.151, abs=0.01)
    assert _falcon_sized(("fp16", A100, 8, 128, 128, 2048)) / 180 - 1 == pytest.approx(0.303, abs=0.01)
