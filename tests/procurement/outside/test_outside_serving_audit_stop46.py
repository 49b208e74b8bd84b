"""aud46s (stop 46, outside serving audit of serve46): published serving rows the change did not use, run through the
product as a user would (validation.trtllm_spec -> parse_workload_spec -> size_workload, and the sizing API's
size_spec_document). Tolerance: LLM speed 15%.

Sources (opened by aud46s; the TensorRT-LLM trees read with git from the octoml/TensorRT-LLM-release mirror, whose
release/0.5.0 and release/v0.7.1 branches carry NVIDIA/TensorRT-LLM's own release commits):
  [TRT050]  NVIDIA/TensorRT-LLM docs/source/performance.md at 6b32b407b891bf8b5643de3ef4514613a1b8f0d2 (release/0.5.0,
            setup.py version='0.5.0'), the same table unchanged in the v0.6.1 tree 0268914005ad5f1f5b2467853347a2c4aa107cb7
            (tensorrt_llm/version.py "0.6.1"). "High Throughput", "Throughput (out tok/s)" (Model | Batch | TP | In |
            Out | tok/s):
              H100 FP8: LLaMA 7B 64|1|128|2048 5,367; 32|1|2048|2048 2,230. LLaMA 70B 64|4|128|128 3,317;
                        64|4|128|2048 2,616; 64|4|2048|128 843; 64|4|2048|2048 1,583. Falcon 180B 96|8|128|2048 2,073.
              A100 FP16: LLaMA 7B 32|1|128|2048 1,459; 16|1|2048|2048 592. LLaMA 70B 64|4|128|128 1,237;
                        64|4|128|2048 1,181; 64|4|2048|128 272; 64|4|2048|2048 738. Falcon 180B 64|8|128|2048 923.
            The TP rows are read as the engine's total and divided by TP: the later "updated for v0.6.1" table (per
            GPU) has H100 FP8 70B TP 4 at batch 480 128/2,048 1,486 tok/s/GPU; 2,616 per GPU at batch 64 would be
            1.76x that at 1/7.5 of the batch.
  [NOXQA]   the v0.6.1 tree 0268914: no decoderXQARunner.*, no xqa_kernel_* cubins, no "TRTLLM_ENABLE_XQA" anywhere
            (git grep -i xqa: no hit); its decode attention is masked MHA, one thread block a query head:
            cpp/tensorrt_llm/kernels/decoderMaskedMultiheadAttention/decoderMaskedMultiheadAttentionLaunch.h:190
            `dim3 grid{num_heads, batch_size, 1}`, decoderMaskedMultiheadAttentionTemplate.h:1383-1386 `hi =
            blockIdx.x; qhead_per_kv = num_heads / num_kv_heads; hi_kv = hi / qhead_per_kv` (each KV head's cache
            is walked by qhead_per_kv blocks). The release/0.5.0 tree has no xqa file either.
  [XQA070]  59f41c067d54838777351b143602ca1c4cad2fdc (version.py "0.7.0", 2023-12-20) adds decoderXQARunner.h/.cpp
            (shouldUse: FP16 compute, 8 query heads a KV head, head 128, no paged KV; cubins kvt_0/1/2 = FP16 / INT8 /
            FP8 KV) behind gptAttentionCommon.cpp:1271 getenv("TRTLLM_ENABLE_XQA"); the same commit first publishes
            the "updated for v0.6.1" table, without any XQA export in its recipes (the export of the later copy,
            read_file id 736701021 @77d24b5f, came after).
  [QW25]    QwenLM/Qwen2.5 @010c37c33b13a1ac59944b349620e13404efe97d docs/source/benchmark/speed_benchmark.rst (read_file
            id 9548273640): vLLM 0.6.3, A100 80GB, batch 1, 2,048 generated, enforce_eager=False, BF16 tokens/s at
            input 1 / 6,144 / 14,336 / 30,720: Qwen2.5-7B-Instruct 84.28 / 80.70 / 77.69 / 70.33;
            Qwen2.5-14B-Instruct 46.30 / 43.83 / 41.91 / 37.18 (the 14B 6,144 row added as a case by ttft48).
"""

from __future__ import annotations

import copy

import pytest

from procurement.api.sizing import size_spec_document
from tests.procurement.outside.test_outside_serve44 import per_gpu
from tests.procurement.outside.test_outside_xqa_stop45 import _sized_and_implied

SPEED = 0.15
A100, H100 = "a100-sxm4-80gb", "h100-sxm5-80gb"


def _id(row) -> str:
    return f"{row[0]}-{row[2][:4]}-{row[1]}-tp{row[3]}-b{row[4]}-{row[5]}-{row[6]}"


# --- Case 1: [TRT050]'s MHA Llama 7B long-output rows (controls: the release's decode is sized where no GQA sharing
# is in question). By hand (aud46s): ours 5,756.5 (+7.3%), 2,239.3 (+0.4%), 1,395.9 (-4.3%), 564.4 (-4.7%).
MHA_CONTROLS = [
    ("llama-2-7b", "fp8", H100, 1, 64, 128, 2048, 5367),
    ("llama-2-7b", "fp8", H100, 1, 32, 2048, 2048, 2230),
    ("llama-2-7b", "fp16", A100, 1, 32, 128, 2048, 1459),
    ("llama-2-7b", "fp16", A100, 1, 16, 2048, 2048, 592),
]


# mmha: stated as the release ran them (inference.decode_attention per_query_head; group 1, so the visits are one
# read's elements): +7.3 -> +3.3%, +0.4 -> -3.4%, -4.3 -> -4.3%, -4.7 -> -4.7% (the A100 FP16 rows stay read-bound).
# fix51m restated: the term is skipped at group 1 (the field's MHA contract, aud51m case 9), so the H100 FP8 rows
# go back to the one read: +3.3 -> +7.3% (5,756.5), -3.4 -> +0.4% (2,239.3); the A100 rows unchanged (-4.3%, -4.7%).
PQH = "per_query_head"


@pytest.mark.parametrize("row", MHA_CONTROLS, ids=_id)
def test_pre_xqa_release_mha_llama7b_long_rows(row):
    model, precision, gpu, tp, batch, prompt, output, published = row
    ours = per_gpu(model, precision, gpu, tp, batch, prompt, output, decode_attention=PQH)
    assert ours == pytest.approx(published, rel=SPEED)


# --- Case 2: [TRT050]'s Llama 2 70B rows: GQA decoded by [NOXQA]'s per-query-head masked MHA for certain (no XQA in
# the code). (published per GPU, ours unstated (shared_kv), ours with fixa45's per-query-head term at 3.7 TB/s, ours
# stated as the run was: inference.decode_attention per_query_head, mmha). The stated figure is the product's step
# plus the query heads' element visits at assumptions.MMHA_ELEMENTS_PER_SM_CLOCK (9.23 an SM a clock) where longer
# than one read (prexqa's sizing, test_outside_mmha_rate_stop51.py, reproduced by the engine to 0.1 tok/s).
# FIT ROW: A100 FP16 2,048/2,048 sets that rate (738 / 4 = 184.5 -> 184.5, -0.0%): it checks nothing. Every other
# row here is held out. mmha, before -> after (strict xfails removed: H100 128/2,048, 2,048/128, 2,048/2,048, A100
# 128/2,048, and the fit row's, +66.2 -> -0.0%): H100 128/2,048 +84.8 -> +7.4%; 2,048/128 +17.3 -> -7.6%; 2,048/2,048 +120.3 -> -7.7%; A100 128/2,048
# +58.4 -> +14.9%; 2,048/128 +5.6 -> -4.6%; still missing: the 128/128 rows +27.9 -> +15.7% and +25.0 -> +18.8%.
PRE_XQA_70B = {
    ("llama-2-70b", "fp8", H100, 4, 64, 128, 128): (3317 / 4, 1060.6, 1002.5, 959.4),
    ("llama-2-70b", "fp8", H100, 4, 64, 128, 2048): (2616 / 4, 1208.8, 865.9, 702.2),
    ("llama-2-70b", "fp8", H100, 4, 64, 2048, 128): (843 / 4, 247.3, 215.3, 194.6),
    ("llama-2-70b", "fp8", H100, 4, 64, 2048, 2048): (1583 / 4, 872.0, 494.9, 365.2),
    ("llama-2-70b", "fp16", A100, 4, 64, 128, 128): (1237 / 4, 386.4, 373.2, 367.3),
    ("llama-2-70b", "fp16", A100, 4, 64, 128, 2048): (1181 / 4, 467.5, 371.7, 339.1),
    ("llama-2-70b", "fp16", A100, 4, 64, 2048, 128): (272 / 4, 71.8, 66.9, 64.9),
    ("llama-2-70b", "fp16", A100, 4, 64, 2048, 2048): (738 / 4, 306.7, 211.3, 184.5),  # FIT ROW (the rate's)
}
PRE_XQA_REASON = (
    "UNEXPLAINED (aud46s): [TRT050] {row}: published {published:,.1f} tok/s/GPU; ours {ours:,.1f} ({err:+.1%}), "
    "stated as run (mmha: inference.decode_attention per_query_head, the masked MHA's element visits at 9.23 an SM "
    "a clock) {stated:,.1f} ({sterr:+.1%}): the decode attention is priced now, what is left is this 128/128 row's "
    "residual with no decode attention to speak of (below). "
    "The release has no XQA ([NOXQA]: masked MHA, one block a query head), so the sign of the long rows' miss is "
    "the product's one read of a KV head a group; but fixa45's per-query-head term at 3.7 TB/s gives {sized:,.1f} "
    "({serr:+.1%}), and the same table's 70B TP 4 128/128 rows already miss by +27.9% (H100) / +24.9% (A100) with "
    "no decode attention to speak of, while its MHA Llama 7B TP 1 long rows pass (case 1): a TP 4 residual of this "
    "release plus the per-query-head reads, neither sized to 15%. serve48 (test_outside_v050_step_stop48.py, the "
    "release/0.5.0 tree 6b32b407 opened) ruled out: static batching, padding and the non-paged cache (gptSessionBenchmark "
    "gives every sequence the row's input length and an end id outside the vocab; the masked MHA loops stop at the "
    "sequence's own length), multi-block mode (off by default; the grid's 1,024 blocks already fill the SMs), one added "
    "cost a step (the 128/128 rows' published steps are 1.28x / 1.25x the product's, gaps 4.21 / 10.33 ms on the "
    "H100 / A100; a host floor is not ruled out), and one KV dtype (FP16 KV, --fp8_kv_cache being opt-in, puts the "
    "H100 long rows at -2.2% / -18.7% with the term and the MHA 7B controls at -38.4% / -43.2%). Leads: on the A100 "
    "the tensor parallelism (7B TP 1 128/128 passes at 449 us a layer against ours 430; the 70B TP 4 leaves 65 us "
    "on each of 160 all-reduces a step, the class of v0.9.0's A100 TP 8 row), on the H100 a ratio of the whole "
    "step at short contexts (its FP8 Llama 7B TP 1 128/128 row reads +35.9% too). serve48b "
    "(test_outside_a100_allreduce_stop48b.py): the A100 lead is not the all-reduce: these rows' 1 MB call would "
    "have to take ~97 us, and nccl-tests measured 1 MB on 8 A100 SXM4 at 37.9 us (one rank a GPU; 52.6 from one "
    "process), 5-20 us of the 65; v0.9.0's A100 TP 8 row passes now with its 8 MB calls at their measured 130.6 "
    "us, which no TP 4 row here has. Best lead on the A100: the TP 4 decode step's own work (504 against 375 us a "
    "layer), not its collective. trtstep (stop 49): "
    "TensorRT-LLM PR #10018, PR #3625 and the overlap-scheduler docs size no per-step host time, and the batch "
    "manager's non-overlapped loop (trtb48's [LOG70] lead) is not this release's benchmark (gptSessionBenchmark, "
    "one static session); a host floor of gptSession without CUDA graphs stays unsized"
)


def _pre_xqa_param(case):
    published, ours, sized, stated = PRE_XQA_70B[case]
    marks = ()
    if abs(stated / published - 1) > SPEED:
        model, precision, gpu, tp, batch, prompt, output = case
        name = f"{'H100 FP8' if gpu == H100 else 'A100 FP16'} Llama 2 70B TP {tp}, batch {batch}, {prompt}/{output}"
        reason = PRE_XQA_REASON.format(
            row=name,
            published=published,
            ours=ours,
            err=ours / published - 1,
            sized=sized,
            serr=sized / published - 1,
            stated=stated,
            sterr=stated / published - 1,
        )
        marks = (pytest.mark.xfail(strict=True, reason=reason),)
    return pytest.param(case, marks=marks, id=_id((*case, 0)))


@pytest.mark.parametrize("case", [_pre_xqa_param(case) for case in PRE_XQA_70B])
def test_pre_xqa_release_llama2_70b_rows(case):
    assert per_gpu(*case, decode_attention=PQH) == pytest.approx(PRE_XQA_70B[case][0], rel=SPEED)


def test_the_per_query_head_term_on_rows_that_certainly_ran_without_xqa():
    # fixa45's term (3.7 TB/s, fitted on two v0.9.0 A100 Mistral rows), the one serve46 carries to v0.6.1: on the
    # four long-output rows of a release with no XQA it leaves +32.4 / +25.1 / +25.9 / +14.5%, three of four
    # outside 15%. The implied rates (1.93 / 2.53 / 2.00 / 2.81 TB/s) sit under its 3.7 and under v0.9.0's 3.2-5.6.
    errs = []
    for case in [c for c in PRE_XQA_70B if c[6] == 2048]:
        published = PRE_XQA_70B[case][0]
        sized, _ = _sized_and_implied(*case, published, 8)
        errs.append(round(sized / published - 1, 3))
    assert errs == pytest.approx([0.324, 0.251, 0.259, 0.145], abs=0.003)
    assert sum(abs(e) > SPEED for e in errs) == 3


# --- Case 3: [TRT050]'s Falcon 180B long-output rows (29 query heads a KV head, no XQA in any release). --------------
FALCON_PRE_XQA = {
    ("falcon-180b", "fp8", H100, 8, 96, 128, 2048): (2073 / 8, 620.5, 432.7, 357.3),
    # serve48b: 189.5 / 151.0 before its A100 TP 8 all-reduces cost what nccl-tests measured (1.9 MB a call: 54 us)
    ("falcon-180b", "fp16", A100, 8, 64, 128, 2048): (923 / 8, 191.5, 152.2, 142.1),
}
FALCON_REASON = (
    "UNEXPLAINED (aud46s): [TRT050] Falcon 180B {name} TP 8, batch {batch}, 128/2,048: published {published:,.1f} "
    "tok/s/GPU; ours {ours:,.1f} ({err:+.1%}); with fixa45's per-query-head term {sized:,.1f} ({serr:+.1%}); stated "
    "as run (mmha: inference.decode_attention per_query_head, the 70B FP16 rate of 9.23 elements an SM a clock, "
    "head 128: Falcon's head 64 runs 8 threads a key, its rate not established) {stated:,.1f} ({sterr:+.1%}). Its "
    "128/128 row misses too (H100 2,686 / 8 = 335.8, ours 471.9, +40.5%): the pre-XQA Falcon engine of this "
    "release is slower than the product beyond the per-query-head reads; not sized. serve48 "
    "(test_outside_v050_step_stop48.py): not static batching, padding, the non-paged cache or multi-block mode (the "
    "grid's 29 x {batch} blocks fill the SMs), nor one added cost a step (the 70B 128/128 rows: one ratio, "
    "1.28x / 1.25x, gaps 4.21 / 10.33 ms); leads as the 70B rows (A100: the tensor-parallel residual; H100: the "
    "release's whole-step ratio on short contexts). serve48b: the A100 row's TP 8 calls (1.9 MB) now cost what "
    "nccl-tests measured on 8 A100s (54 us), 3 us under NCCL's model: not the gap. trtstep (stop 49): "
    "TensorRT-LLM PR #10018, PR #3625 and the overlap-scheduler docs size no per-step host time, and the batch "
    "manager's non-overlapped loop (trtb48's [LOG70] lead) is not this release's benchmark (gptSessionBenchmark, "
    "one static session); a host floor of gptSession without CUDA graphs stays unsized"
)


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(
            case,
            marks=pytest.mark.xfail(
                strict=True,
                reason=FALCON_REASON.format(
                    name="H100 FP8" if case[2] == H100 else "A100 FP16",
                    batch=case[4],
                    published=vals[0],
                    ours=vals[1],
                    err=vals[1] / vals[0] - 1,
                    sized=vals[2],
                    serr=vals[2] / vals[0] - 1,
                    stated=vals[3],
                    sterr=vals[3] / vals[0] - 1,
                ),
            ),
            id=_id((*case, 0)),
        )
        for case, vals in FALCON_PRE_XQA.items()
    ],
)
def test_pre_xqa_release_falcon_180b_long_rows(case):
    assert per_gpu(*case, decode_attention=PQH) == pytest.approx(FALCON_PRE_XQA[case][0], rel=SPEED)


# --- Case 4: the release step on the masked-MHA path itself. Falcon 180B never had XQA (group 29, head 64), yet the
# H100 FP8 TP 8 batch 1,024 128/2,048 row went 724 (the "v0.6.1" table, id 736701021) -> 837 (v0.9.0, id 5995251461),
# 1.156x, while the product and fixa45's term give both rows one figure (704.4: -2.7% and -15.8%). So part of the
# 70B rows' 1.83-1.85x between the two tables is not XQA, and one rate cannot fit both releases.
def test_the_mmha_path_itself_moved_between_the_two_tables():
    case = ("falcon-180b", "fp8", H100, 8, 1024, 128, 2048)
    sized_061, _ = _sized_and_implied(*case, 724, 29)
    sized_090, _ = _sized_and_implied(*case, 837, 29)
    assert sized_061 == pytest.approx(sized_090)
    assert 837 / 724 == pytest.approx(1.156, abs=0.001)
    assert sized_061 / 724 - 1 == pytest.approx(-0.027, abs=0.003)
    assert sized_090 / 837 - 1 == pytest.approx(-0.158, abs=0.003)


# --- Case 5: [QW25]'s vLLM 0.6.3 rows (GQA, CUDA graphs), end to end as the publisher measures: 2,048 / (first
# token + 2,048 decode steps). Stated as the run was, inference.engine vllm_v0 (ttft48): vLLM's V0 loop, its GPU work
# plus the loop's serial host time a step (vllm_v0_step_host_s, 1.84 ms, fitted on the 14B input-1 row; the other six
# held out, on the same host: fix48v). "compiled" (a step is its GPU work), the product's answer before, is pinned
# beside it.
def _vllm_speed(preset: str, prompt: int, engine: str = "compiled") -> float:
    spec = {
        "name": f"aud46s-{preset}-{prompt}",
        "task": "inference",
        "model": {"preset": preset},
        "precision": "bf16",
        "weight_quantization": "none",
        "inference": {
            "concurrency": 1,
            "context_len": prompt + 2048,
            "output_tokens": 2048,
            "engine": engine,
        },
    }
    t = size_spec_document(copy.deepcopy(spec), [A100], calibrate=False)["throughput"]
    return 2048 / (t["time_to_first_token_seconds"] + 2048 / t["decode_tokens_per_second_per_stream"])


# (published, ours with engine compiled, ours with engine vllm_v0)
VLLM_ROWS = {
    ("qwen2.5-7b", 1): (84.28, 100.45, 84.77),
    ("qwen2.5-7b", 6144): (80.70, 96.03, 81.61),
    ("qwen2.5-7b", 14336): (77.69, 90.20, 77.36),
    ("qwen2.5-7b", 30720): (70.33, 79.25, 69.16),
    ("qwen2.5-14b", 1): (46.30, 50.61, 46.30),  # vllm_v0_step_host_s's fit row
    ("qwen2.5-14b", 6144): (43.83, 47.55, 43.72),  # ttft48, new held-out row
    ("qwen2.5-14b", 14336): (41.91, 43.71, 40.46),
    ("qwen2.5-14b", 30720): (37.18, 37.00, 34.64),
}
VLLM_REASON = (
    "UNEXPLAINED (ttft48): [QW25] vLLM 0.6.3 {preset} BF16, 1 x A100 80GB, input {prompt:,}: published {published} "
    "tokens/s; ours with engine vllm_v0 {ours} ({err:+.1%})"
)


@pytest.mark.django_db
@pytest.mark.parametrize(
    "row",
    [
        pytest.param(
            row,
            marks=(
                pytest.mark.xfail(
                    strict=True,
                    reason=VLLM_REASON.format(
                        preset=row[0],
                        prompt=row[1],
                        published=vals[0],
                        ours=vals[2],
                        err=vals[2] / vals[0] - 1,
                    ),
                ),
            )
            if abs(vals[2] / vals[0] - 1) > SPEED
            else (),
            id=f"{row[0]}-{row[1]}",
        )
        for row, vals in VLLM_ROWS.items()
    ],
)
def test_qwen25_vllm_063_rows_on_one_a100(bundled_catalog, row):
    """[QW25]'s vLLM 0.6.3 rows, stated as run (inference.engine vllm_v0).

    Was a strict xfail (aud46s) for the 7B at input 1 / 6,144 / 14,336: published 84.28 / 80.70 / 77.69 tokens/s,
    ours 100.45 / 96.03 / 90.20 (+19.2% / +19.0% / +16.1%) with the step as its GPU work alone (engine compiled);
    the run's step left ~1.9 ms a step over it at both sizes. Now 84.77 / 81.61 / 77.36 (+0.6% / +1.1% / -0.4%)
    because the stated engine vllm_v0 adds vLLM's V0 loop's serial host time a step (schedule, input preparation,
    sampling's GPU-to-CPU copy, output processing: vllm-project/vllm @0005bbd7 vllm/engine/llm_engine.py step();
    the GPU idling on it: vllm-project/vllm issue #6854), vllm_v0_step_host_s 1.84 ms fitted on the 14B input-1
    row (46.30); the other rows held out: 7B 30,720 -1.7%, 14B 6,144 -0.2%, 14,336 -3.5%, 30,720 -6.8%.

    FIXED on the [QW25] host (fix48v, after aud48v): held out across model size and context only; the 1.84 ms is
    fitted on the same page's 14B input-1 row and overstates another V0 host (<= 1.49 ms all-in a step on a desktop
    RTX 4090, vLLM 0.5.0.post1: test_outside_vllm_v0_host_audit_stop48.py). vLLM 0.6.x processes outputs
    asynchronously by default, so the 1.84 ms is what stays serial on this A100 host, not the V0 loop's value.
    """
    assert _vllm_speed(*row, engine="vllm_v0") == pytest.approx(VLLM_ROWS[row][0], rel=SPEED)


# --- The figures quoted in the reasons above, pinned outside the strict xfails (a drift there would otherwise hide
# inside an xfail).
def test_the_quoted_trtllm_figures():
    for case, (_, ours, sized, stated) in {**PRE_XQA_70B, **FALCON_PRE_XQA}.items():
        group = 29 if case[0] == "falcon-180b" else 8
        assert per_gpu(*case) == pytest.approx(ours, rel=0.005)
        assert per_gpu(*case, decode_attention=PQH) == pytest.approx(stated, rel=0.005)
        published = (PRE_XQA_70B | FALCON_PRE_XQA)[case][0]
        assert _sized_and_implied(*case, published, group)[0] == pytest.approx(sized, rel=0.005)


@pytest.mark.django_db
def test_the_quoted_vllm_figures(bundled_catalog):
    for row, (_, compiled, vllm_v0) in VLLM_ROWS.items():
        assert _vllm_speed(*row) == pytest.approx(compiled, rel=0.005)
        assert _vllm_speed(*row, engine="vllm_v0") == pytest.approx(vllm_v0, rel=0.005)
