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
           v0.8a". fix46s (aud46s's verdict): a blog, not the release record; it is NOT the source for when XQA
           shipped or for whether v0.6.1's rows ran without it (its "included in the v0.8 releases" is wrong about
           the first release: [XQA070]). Kept only for its own H200 pair.
  [NOXQA]  fix46s, read with git in the octoml/TensorRT-LLM-release mirror (NVIDIA's own release commits): the v0.6.1
           tree 0268914005ad5f1f5b2467853347a2c4aa107cb7 (tensorrt_llm/version.py __version__ = "0.6.1") has no XQA
           (git grep -il xqa: no file; no decoderXQARunner, no TRTLLM_ENABLE_XQA). Its decode attention is masked
           MHA, one thread block a query head: cpp/tensorrt_llm/kernels/decoderMaskedMultiheadAttention/
           decoderMaskedMultiheadAttentionLaunch.h:190 `dim3 grid{static_cast<unsigned>(params.num_heads),
           static_cast<unsigned>(params.batch_size), 1}`; decoderMaskedMultiheadAttentionTemplate.h:1383-1386
           `hi{blockIdx.x}`, `qhead_per_kv{params.num_heads / params.num_kv_heads}`, `hi_kv{hi / qhead_per_kv}`:
           each KV head's cache is worked through by each of its qhead_per_kv blocks.
  [XQA070] 59f41c067d54838777351b143602ca1c4cad2fdc ("Update TensorRT-LLM (#708)", 2023-12-20, version.py "0.7.0";
           0268914 is its ancestor): XQA first ships, decoderXQARunner.h/.cpp, behind
           cpp/tensorrt_llm/plugins/gptAttentionCommon/gptAttentionCommon.cpp:1271 `getenv("TRTLLM_ENABLE_XQA")`
           (use_xqa only if it is "1": off by default). The same commit is the first to carry [TRT061]'s "updated
           for v0.6.1" table (none of 587d063 / 8dd9c91 / 9b3e12d / 0268914 has the line), with the same figures
           as the 77d24b5f copy, and its recipes export no TRTLLM_ENABLE_XQA; the 77d24b5f copy adds
           `export TRTLLM_ENABLE_XQA=1` (Llama2-70b and Falcon-180B recipes) and "For the benchmarks below, we have
           enabled GQA where our tests displayed performance benefits" to the same, unchanged figures.
  [WHICH]  fix46s: which evidence decides whether these rows ran without XQA. Not the recipes: in both copies the
           Llama2-70b engine is built with --max_batch_size 64 and benchmarked at batch 64 (Falcon at 96 / 64), so
           no recipe in either copy is the run behind a batch-480 / 1,024 / 1,280 row; the export (and the later
           "for the benchmarks below, we have enabled GQA", about those recipes) was added beside figures that did
           not change, so it cannot date them. What decides is the table's own line, "This data has been updated for
           v0.6.1", read against the v0.6.1 release tree ([NOXQA]: no XQA code to enable); the first publication
           ([XQA070]: no export, XQA off by default even in 0.7.0's code) is consistent with it. No record gives the
           environment of the table's runs, so the reasons here claim no more than that: "v0.6.1 by the table's own
           label, a tree with no XQA", not that a run was observed without it.
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
# The product shares a KV head's reads across its 8 query heads (XQA's sharing; XQA shipped in 0.7.0 behind
# TRTLLM_ENABLE_XQA, [XQA070]); by the table's own label these rows are v0.6.1, a tree with no XQA, whose decode is
# masked MHA, one block a query head ([NOXQA]; [WHICH] for what decides it). With [MMHA]'s term at the rate fitted on v0.9.0's Mistral rows:
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


# fix46s (aud46s's verdict): was test_the_step_across_releases_moved_by_the_blogs_xqa_factor, which read the
# 1.83-1.85x between the two tables as [XQABLOG]'s XQA factor. Part of it is not XQA: the Falcon 180B H100 FP8 TP 8
# batch 1,024 128/2,048 row, whose group of 29 (head 64) no XQA build takes, moved 724 ([TRT061]) -> 837 ([TRT9],
# id 5995251461), 1.156x, with no XQA in either. What is left for the 70B rows' decode attention is 1.834 / 1.156 =
# 1.586 and 1.848 / 1.156 = 1.599, against the 2.008 / 1.914 the product puts between its XQA-sharing figure and
# fixa45's per-query-head term on the same rows: the rows alone do not confirm the term's size. And the term's error
# spreads +-20-30% across releases on rows where no XQA ran: the same Falcon row reads -2.7% (v0.6.1) and -15.8%
# (v0.9.0); the v0.5.0 table's four 70B long-output rows (the same pre-XQA code, test_outside_serving_audit_stop46.py)
# read +32.4 / +25.1 / +25.9 / +14.5%. The blog's own H200 pair is kept as arithmetic only.
def test_the_step_across_releases_is_not_all_xqa():
    assert 2725 / 1486 == pytest.approx(1.83, abs=0.01)
    assert 1011 / 547 == pytest.approx(1.85, abs=0.01)
    assert 2941 / 1227 == pytest.approx(2.40, abs=0.01) and 25300 / 13232 == pytest.approx(1.91, abs=0.01)
    falcon = ("falcon-180b", "fp8", H100, 8, 1024, 128, 2048)
    assert 837 / 724 == pytest.approx(1.156, abs=0.001)
    assert (2725 / 1486) / (837 / 724) == pytest.approx(1.586, abs=0.002)
    assert (1011 / 547) / (837 / 724) == pytest.approx(1.599, abs=0.002)
    for case, ratio in ((("fp8", H100, 4, 480, 128, 2048), 2.008), (("fp8", H100, 2, 64, 2048, 2048), 1.914)):
        ours = per_gpu("llama-2-70b", *case)
        assert ours / _sized(case) == pytest.approx(ratio, abs=0.005)
    # the term's spread across releases, on rows that ran no XQA
    assert _sized_and_implied(*falcon, 724, FALCON_GROUP)[0] / 724 - 1 == pytest.approx(-0.027, abs=0.003)
    assert _sized_and_implied(*falcon, 837, FALCON_GROUP)[0] / 837 - 1 == pytest.approx(-0.158, abs=0.003)
    # [TRT050] (test_outside_serving_audit_stop46.py's docstring): tok/s of the TP 4 engine, batch 64, x/2,048
    errs = []
    for precision, gpu, prompt, published in (
        ("fp8", H100, 128, 2616),
        ("fp8", H100, 2048, 1583),
        ("fp16", A100, 128, 1181),
        ("fp16", A100, 2048, 738),
    ):
        case = ("llama-2-70b", precision, gpu, 4, 64, prompt, 2048)
        errs.append(_sized_and_implied(*case, published / 4, GROUP)[0] / (published / 4) - 1)
    assert errs == pytest.approx([0.324, 0.251, 0.259, 0.145], abs=0.003)


# --- Case 3: the table's one untested long-output row through the product (new outside case). -----------------------
# fix46s (aud46s): relabelled from EXPLAINED, whose (a) rested on [XQABLOG] ("v0.8's XQA") and whose (b) read the
# whole 1.85x step to v0.9.0 as XQA. With the release record in (a) and the step's non-XQA 1.156x and the term's
# spread in (b), the size is not proven: UNEXPLAINED in part, the sign proven by code.
V061_TP2_LONG = (
    "UNEXPLAINED in part (sign proven by code) (fix46s; was EXPLAINED (serve46), rejected by aud46s): [TRT061] H100 "
    "FP8 Llama 2 70B TP 2, batch 64, 2,048/2,048: published 547 tok/s/GPU; ours {ours:,.1f} ({err:+.1%}). Sign: the "
    "table is v0.6.1 by its own label ('This data has been updated for v0.6.1'; first published in 59f41c06, the "
    "v0.7.0 commit, with no TRTLLM_ENABLE_XQA export in its recipes; the later 77d24b5f copy's export sits beside the "
    "same figures and recipes at batch 64 that are not these runs), and the v0.6.1 tree (0268914, version.py 0.6.1) "
    "has no XQA: its decode is masked MHA, one thread block a query head (decoderMaskedMultiheadAttentionLaunch.h:190 "
    "grid{{num_heads, batch_size}}; ...Template.h:1383-1386 hi_kv = hi / qhead_per_kv), so each KV head's cache is "
    "worked through 8 times where the product reads it once (XQA's sharing, first shipped in 0.7.0 behind "
    "TRTLLM_ENABLE_XQA, gptAttentionCommon.cpp:1271): the product must be fast here. Size not proven: fixa45's "
    "per-query-head term at 3.7 TB/s (two v0.9.0 A100 Mistral rows) gives 546.7 (-0.1%), but the same term on the "
    "held-out pre-XQA 70B rows of the v0.5.0 table (same code, TP 4, batch 64, x/2,048) reads +32.4 / +25.1 / +25.9 "
    "/ +14.5% (H100 128 and 2,048 in, A100 128 and 2,048 in; test_outside_serving_audit_stop46.py, three outside "
    "15%), and on the one Falcon row no XQA ever ran -2.7% (v0.6.1) and -15.8% (v0.9.0): a +-20-30% spread across "
    "releases; from the rows, the 1.85x to v0.9.0's 1,011 holds a 1.156x that moved the Falcon path too (724 -> "
    "837), leaving 1.60x against the product's 1.91x between sharing and per-query-head reads. (c) a spec would "
    "have to state the serving engine's release or whether its decode attention shares a KV head across the group "
    "(inference.engine says only compiled or hf_eager). mmha: stated as run (inference.decode_attention "
    "per_query_head, the v0.5.0 masked MHA's 9.23 elements an SM a clock): {stated:,.1f} ({sterr:+.1%}), "
    "over-corrected: v0.6.1 pre-scales Q and P for an FP8 cache (MMHA_FP8_SCALE_Q_INSTEAD_OF_K / "
    "_P_INSTEAD_OF_V, decoderMaskedMultiheadAttentionTemplate.h:47-54 at 0268914, 'reduce number of "
    "instructions for dequantizing'), a faster FP8 path an element than v0.5.0's; its rate is not sized (the "
    "same table's other H100 FP8 70B rows read -16.4 / -27.0 / -24.4% stated)"
)


@pytest.mark.xfail(
    strict=True,
    reason=V061_TP2_LONG.format(ours=1046.5, err=1046.5 / 547 - 1, stated=392.6, sterr=392.6 / 547 - 1),
)
def test_v061_h100_70b_tp2_long_output_row_within_15_percent():
    # mmha: stated as the release ran it (per_query_head): +91.3% -> -28.2%, still outside 15% (the reason)
    case = ("fp8", H100, 2, 64, 2048, 2048)
    precision, gpu, tp, batch, prompt, output = case
    ours = per_gpu(
        "llama-2-70b", precision, gpu, tp, batch, prompt, output, decode_attention="per_query_head"
    )
    assert ours == pytest.approx(V061_70B[case], rel=SPEED)


# mmha: the v0.6.1 A100 FP16 70B rows stated as run (inference.decode_attention per_query_head; [MMHA061] leaves the
# FP16 path as v0.5.0's, so the v0.5.0 rate applies; all three held out from its fit row): 670 128/128 +0.4% ->
# -7.9% (617.0), 525 128/2,048 +73.8% -> -0.0% (524.8), 79 2,048/128 -3.4% -> -13.3% (68.5). The H100 FP8 rows
# stated read -16.4 / -27.0 / -24.4 / -28.2% (2,220.4, 1,084.9, 231.3, 392.6): v0.6.1's pre-scaled FP8 path is
# faster an element than v0.5.0's, so they stay unstated (shared_kv) where they pass and the TP 2 long row keeps
# its xfail (above).
V061_A100_STATED = {
    ("fp16", A100, 4, 1280, 128, 128): 617.0,
    ("fp16", A100, 4, 240, 128, 2048): 524.8,
    ("fp16", A100, 4, 120, 2048, 128): 68.5,
}
V061_H100_STATED = {
    ("fp8", H100, 2, 1024, 128, 128): 2220.4,
    ("fp8", H100, 4, 480, 128, 2048): 1084.9,
    ("fp8", H100, 2, 96, 2048, 128): 231.3,
    ("fp8", H100, 2, 64, 2048, 2048): 392.6,
}


@pytest.mark.parametrize("case", list(V061_A100_STATED), ids=_id)
def test_v061_a100_70b_rows_stated_per_query_head_within_15_percent(case):
    ours = per_gpu("llama-2-70b", *case, decode_attention="per_query_head")
    assert ours == pytest.approx(V061_A100_STATED[case], rel=0.005)
    assert ours == pytest.approx(V061_70B[case], rel=SPEED)


def test_v061_h100_fp8_rows_stated_per_query_head_are_over_corrected():
    for case, stated in V061_H100_STATED.items():
        ours = per_gpu("llama-2-70b", *case, decode_attention="per_query_head")
        assert ours == pytest.approx(stated, rel=0.005)
        assert ours / V061_70B[case] - 1 < -SPEED


# --- Case 4: the same table's Falcon 180B rows (held out; no test had them). -----------------------------------------
# Falcon 180B (29 query heads a KV head, head 64) is outside every XQA copy read (fixa45's [XQA]), so its decode ran
# the per-query-head kernel in v0.6.1 as in v0.9.0, whose long rows test_outside_serve44.py holds as EXPLAINED. By
# hand (serve46): ours 1,033.2 / 108.3 / 249.1 on the short-decode rows (+4.7 / -3.3 / +7.4%), and on the long rows
# 1,388.6 / 473.1 / 342.9 (+91.8 / +79.2 / +90.5%); with [MMHA]'s term 922.1 / 95.1 / 235.9 (-6.6 / -15.1 / +1.7%)
# and 704.4 / 251.3 / 234.5 (-2.7 / -4.8 / +30.3%) (serve48b: the A100 TP 8 rows' all-reduces at the cost nccl-tests
# measured on 8 A100s put the A100 long row at 334.6, +85.9%, and 230.6, +28.1%, with the term). The H100 2,048/128 row's -15.1% with the term is the same as
# v0.9.0's prefill-heavy Falcon Hopper rows (-15.1 to -17.5%, fixg45): the term's known limit, one reason it is not
# an engine change. The A100 long row keeps +28.1% with it: the A100 decode residual again, larger here.
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
    "v0.9.0 A100 Mistral rows, none of this table) puts this row at {sized}; the term's error spreads +-20-30% "
    "across releases on rows that ran no XQA (fix46s, aud46s: the H100 TP 8 batch 1,024 128/2,048 row reads -2.7% "
    "against v0.6.1's 724 and -15.8% against v0.9.0's 837, a 1.156x release step on this never-XQA path; the v0.5.0 "
    "table's pre-XQA 70B TP 4 long rows +14.5 to +32.4%, test_outside_serving_audit_stop46.py), so this size holds "
    "for this table, not as a constant of the term; (c) no field stated whether the "
    "serving engine's decode attention shares a KV head across its query heads (inference.engine says only "
    "compiled or hf_eager). mmha: inference.decode_attention per_query_head states it now, but its rate (v0.5.0's "
    "FP16 thread layout at head 128, 9.23 elements an SM a clock) is not this row's: v0.6.1 pre-scales Q / P for an "
    "FP8 cache and Falcon's head 64 runs 8 threads a key; stated, the H100 FP8 long rows read -27.6% (524.3) and "
    "-28.3% (189.4), so the rows stay unstated and the label stands"
)
FALCON_V061_A100_LONG = (
    "UNEXPLAINED in part (serve46): [TRT061] Falcon 180B A100 FP16 TP 8, batch 128, 128/2,048: published 180; ours "
    "334.6 (+85.9%; 342.9 before serve48b priced the A100 TP 8 all-reduces of 3.8 MB at nccl-tests' measured 78 "
    "us, not NCCL's modelled 71). The masked MHA kernel's per-query-head work (29 query heads a KV head: no XQA in "
    "any release, fixa45) sized at 3.7 TB/s gives 230.6 (+28.1%): 58 of the 86 points; the rest is beyond the term, the A100 "
    "long-output residual this table's Llama 2 70B TP 4 row shows too (+15.6% with the term) and v0.9.0's A100 TP 8 "
    "70B row with XQA (+19.6%, test_serving_published.py), larger here; not sized. mmha: stated as run "
    "(inference.decode_attention per_query_head, the v0.5.0 70B rate at head 128; Falcon's head 64 not sized) it "
    "reads 208.2 (+15.7%), just outside 15%"
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
    # The prefill-heavy H100 row leaves 15% with the term (as v0.9.0's do); the A100 long row keeps +28% with it
    # (+30.3% before serve48b's measured A100 TP 8 all-reduce).
    assert _falcon_sized(("fp8", H100, 4, 64, 2048, 128)) / 112 - 1 == pytest.approx(-0.151, abs=0.01)
    assert _falcon_sized(("fp16", A100, 8, 128, 128, 2048)) / 180 - 1 == pytest.approx(0.281, abs=0.01)
