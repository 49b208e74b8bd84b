"""Outside audit (aud50k, stop 50) of rankpp: serving pipelines, the stated serving pipeline_parallel, the tp_mlp
gate. Cases chosen by the auditor from published runs and engine code no test of the project used before
(grep'd tests/ for each source and figure first).

Sources:
[VLLM-5675] vllm-project/vllm issue #5675 (vLLM 0.4.2): a self-quantized AWQ Qwen2-72B (intermediate_size 29,568)
    "using one gpu is fine", on two GPUs "ValueError: The input size is not aligned with the quantized weight shape.
    This can be caused by too large tensor parallel size."
[VLLM-2699] vllm-project/vllm issue #2699 (vLLM 0.2.7), Qwen-14B-Chat-Int4 at TP > 1: the same ValueError; a public
    vLLM deployment note (Qwen1.5-14B-Chat-GPTQ-Int4 / -AWQ): "--tensor-parallel-size 2 or 4 both error: ValueError:
    The input size is not aligned ...". Qwen1.5-14B config.json: hidden 5,120, 40 heads, 40 KV heads, 40 layers,
    intermediate_size 13,696 (TP 2: 6,848 = 53.5 groups of 128; TP 4: 3,424 = 26.75).
[MARLIN] vLLM model_executor/layers/quantization/utils/marlin_utils.py verify_marlin_supports_shape (the
    gptq_marlin / awq_marlin path vLLM picks on sm80+): input_size_per_partition % GPTQ_MARLIN_MIN_THREAD_K (128)
    and % group_size; output_size_per_partition % GPTQ_MARLIN_MIN_THREAD_N (64); its message suggests
    "--quantization gptq", whose gptq.py create_weights checks input_size_per_partition % group_size again. So no
    kernel path of vLLM loads a rank holding a partial group: the rule is the code's.
[QWEN-PAD] Qwen's own int4 checkpoints of the 72B width: Hugging Face Qwen/Qwen2-VL-72B-Instruct-AWQ commit 688e28d
    and Qwen2-VL-72B-Instruct-GPTQ-Int4 commit 288c348, "fix(pad zero) pad intermediate_size to 29696 to make sure
    quantized model can use 8 tensor-parallel in vllm" (config.json intermediate_size 29,696); the same padding in
    Qwen2-72B-Instruct-AWQ (the rankpp author's own citation, discussion 3). Qwen's released int4 72B checkpoints
    are the ones users serve, and they serve at TP 2 / 4 / 8.
[SUBSTRATUS] substratus.ai/blog/benchmarking-llama-3.1-70b-on-l4 (Sam Stoelinga): vLLM, neuralmagic
    Meta-Llama-3.1-70B-Instruct-FP8 on 8 x L4 in one node, --pipeline-parallel-size 4 --tensor-parallel-size 2:
    1.76 req/s, 307.61 output tok/s, 717.77 tok/s total; PP 2 x TP 4: 1.50 req/s, 261.16 output tok/s (ShareGPT,
    1,000 requests). vLLM's distributed-serving guide itself gives TP x PP for multi-node ("tensor parallel size
    the number of GPUs in each node, pipeline parallel size the number of nodes").
[V1-SCHED] vLLM v1/core/sched/scheduler.py: a running request with num_new_tokens == 0 is skipped, "(1) PP>1 and we
    have already scheduled all prompt tokens but they are not finished yet": a V1 micro-batch is whichever requests
    are not in flight, so the split is by arrival timing, not C / pp; vllm-project/vllm PR #57433 ("Balance async
    PP decode batches"): cadence groups "such as Q7/Q13/Q2/Q10", balancing them +22.95% output throughput on a
    replay. (Recorded in NOTES as a note on min(pp, concurrency); not a test: no published per-row figure.)
"""

import numpy as np
import pandas as pd
import pytest

from procurement.ranking import RankingOptions, rank_workload
from procurement.ranking.splits import tensor_parallel_splits_mlp
from procurement.sizing import parse_workload_spec
from tests.procurement.test_ranking import GPUS, NOW, _offer

MIN_THREAD_K = 128  # [MARLIN] GPTQ_MARLIN_MIN_THREAD_K
MIN_THREAD_N = 64  # [MARLIN] GPTQ_MARLIN_MIN_THREAD_N


def _serving(model, precision="fp16", concurrency=1, parallelism=None, **extra):
    document = {
        "task": "inference",
        "model": model,
        "precision": precision,
        "inference": {"concurrency": concurrency, "context_len": 4096, "output_tokens": 256},
    } | extra
    if parallelism:
        document["parallelism"] = parallelism
    return parse_workload_spec(document)


def _rank(spec, offers, **options):
    return rank_workload(
        spec, pd.DataFrame(offers), GPUS, RankingOptions(**({"top": None} | options)), now=NOW
    )


def _marlin_loads(width: int, tp: int, group: int = 128) -> bool:
    """[MARLIN] verify_marlin_supports_shape for the down projection (row parallel: K = width / tp) and the
    gate/up projection (column parallel: N = width / tp)."""
    if width % tp:
        return False
    per_rank = width // tp
    return per_rank % MIN_THREAD_K == 0 and per_rank % group == 0 and per_rank % MIN_THREAD_N == 0


QWEN15_14B = {
    "name": "qwen1.5-14b",
    "num_layers": 40,
    "hidden_size": 5120,
    "num_attention_heads": 40,
    "num_key_value_heads": 40,
    "intermediate_size": 13696,
    "vocab_size": 152064,
}
TWO_A100 = [_offer("y", "2xA100-80", "a100-sxm4-80gb", 2, "on_demand", 4.0)]
FOUR_A100 = [_offer("y", "4xA100-80", "a100-sxm4-80gb", 4, "on_demand", 8.0)]


def test_vllm_5675_self_quantized_qwen2_72b_awq_is_refused_at_tp2():
    """[VLLM-5675] unpadded 29,568 = 231 groups: TP 2 leaves 115.5 a rank; vLLM 0.4.2 refused it. The product's
    qwen2.5-72b preset (the same 29,568 width) gates TP 2 and names the gate."""
    # fix50k: the preset's int4 is Qwen's padded release (29,696), so a self-quantized checkpoint states its width
    spec = _serving(
        {"preset": "qwen2.5-72b", "intermediate_size": 29568},
        weight_quantization="int4",
        parallelism={"gpus": 2, "tensor_parallel": 2},
    )
    assert spec.model.intermediate_size == 29568
    assert not _marlin_loads(29568, 2)
    assert tensor_parallel_splits_mlp(spec, np.array([1, 2])).tolist() == [True, False]
    ranking = _rank(spec, TWO_A100)
    assert not ranking.results
    assert "into whole int4 groups of 128" in ranking.why_empty[0]["reason"]


def test_vllm_2699_qwen15_14b_int4_refused_at_tp2_and_tp4():
    """[VLLM-2699] Qwen1.5-14B int4 (13,696): TP 2 and TP 4 both failed in vLLM; TP 1 runs. Marlin's own checks
    refuse them too (6,848 % 128 = 64; 3,424 % 128 = 96), so no other kernel path loads them."""
    spec = _serving(QWEN15_14B, weight_quantization="int4")
    assert [_marlin_loads(13696, tp) for tp in (1, 2, 4)] == [True, False, False]
    assert tensor_parallel_splits_mlp(spec, np.array([1, 2, 4])).tolist() == [True, False, False]
    # 16-bit: 13,696 / 4 = 3,424 splits (vLLM's divide), so the gate is int4's alone
    assert tensor_parallel_splits_mlp(_serving(QWEN15_14B), np.array([2, 4])).tolist() == [True, True]


def test_marlin_has_no_looser_path_for_llama2_7b_int4_tp4():
    """[MARLIN] the brief's question: Llama 2 7B int4 (11,008) at TP 4 is 2,752 a rank = 21.5 groups; Marlin's
    K check (2,752 % 128 = 64) refuses it before the group check, and the suggested fallback (--quantization gptq)
    checks % group_size (also 64): vLLM really refuses. The gate agrees (TP 2: 5,504 = 43 groups, loads)."""
    assert 2752 % MIN_THREAD_K == 64 and 2752 % MIN_THREAD_N == 0
    assert [_marlin_loads(11008, tp) for tp in (2, 4)] == [True, False]
    spec = _serving({"preset": "llama-2-7b"}, weight_quantization="int4")
    assert tensor_parallel_splits_mlp(spec, np.array([2, 4])).tolist() == [True, False]


# FIXED at stop 50 (fix50k): before, TP 1 x PP 2 only (46.1 ms a token at one stream on 2 x A100 80GB); after, the
# preset's int4 is Qwen's padded release (presets.INT4_RELEASE_INTERMEDIATE_SIZE, 29,696) and TP 2 ranks (26.4 ms).
def test_qwens_padded_int4_72b_is_served_at_tp2():
    spec = _serving({"preset": "qwen2.5-72b"}, weight_quantization="int4")
    assert spec.model.intermediate_size == 29696
    rows = _rank(spec, TWO_A100).results
    plans = {
        (row["plan"]["tensor_parallel"], row["plan"]["pipeline_parallel"])
        for row in rows
        if row["gpus_per_instance"] == 2
    }
    assert (2, 1) in plans, plans


def test_a_stated_padded_width_ranks_tp2_and_is_faster_than_the_pipeline():
    """The workaround exists: model.intermediate_size 29,696 with the preset ranks TP 2 (29,696 / 2 = 14,848 = 116
    groups a rank), and TP 2 beats the PP 2 plan the unpadded width gets at one
    stream (two GPUs' bandwidth vs one)."""
    assert 29696 // 2 % 128 == 0 and _marlin_loads(29696, 8)
    padded = _serving({"preset": "qwen2.5-72b", "intermediate_size": 29696}, weight_quantization="int4")
    rows = [row for row in _rank(padded, TWO_A100).results if row["gpus_per_instance"] == 2]
    tp2 = next(row for row in rows if row["plan"]["tensor_parallel"] == 2)
    unpadded = _serving({"preset": "qwen2.5-72b", "intermediate_size": 29568}, weight_quantization="int4")
    pp2 = next(
        row
        for row in _rank(unpadded, TWO_A100).results
        if row["gpus_per_instance"] == 2 and row["plan"]["pipeline_parallel"] == 2
    )
    assert tp2["serving"]["time_per_output_token_ms"] < 0.7 * pp2["serving"]["time_per_output_token_ms"]
    # the sizes of the FIXED case above (fix50k): 26.4 ms (TP 2, padded) vs 46.1 ms (TP 1 x PP 2, unpadded)
    # 26.4 ms before fix50m read the 16-bit lm_head at the 16-bit rate (vLLM keeps it unquantized): 25.89
    assert tp2["serving"]["time_per_output_token_ms"] == pytest.approx(25.89, abs=0.05)
    # 46.1 ms before fix50m read the 16-bit lm_head at the 16-bit rate: 45.03
    assert pp2["serving"]["time_per_output_token_ms"] == pytest.approx(45.03, abs=0.05)


# FIXED at stop 50 (fix50k): before, a stated TP 2 x PP 4 was refused ("... (vLLM's guide), not both"); after, it
# ranks (TP 2 x PP 4, each stage a TP group with its all-reduces, one send between stages: ranking/splits.
# serving_pipeline_plans, sizing/throughput.serving_pipeline_batches / pipeline_send_seconds / serving_allreduce_seconds).
def test_substratus_tp2_pp4_on_8_l4_is_ranked():
    spec = _serving(
        {"preset": "llama-3-70b"},
        precision="fp8",
        concurrency=64,
        parallelism={"gpus": 8, "tensor_parallel": 2, "pipeline_parallel": 4},
    )
    ranking = _rank(spec, [_offer("x", "8xL4", "l4", 8, "on_demand", 8.0)])
    assert ranking.results, ranking.why_empty
    row = ranking.results[0]
    assert (row["plan"]["tensor_parallel"], row["plan"]["pipeline_parallel"]) == (2, 4)
    assert row["differs_from_spec"] == []
    assert any("TP 2 x PP 4: parallelism.pipeline_parallel as stated" in reason for reason in row["reasons"])
    assert row["interconnect"]["carried"][0]["collective"] == "TP all-reduce and pipeline send"


def test_the_tp_x_pp_plan_is_no_longer_refused_and_blames_no_engine():
    """rankpp claim (2)'s refusal is gone (fix50k): both stated fields are one plan, and no reason says vLLM
    runs TP or PP 'not both'."""
    spec = _serving(
        {"preset": "llama-3-70b"},
        precision="fp8",
        parallelism={"gpus": 8, "tensor_parallel": 2, "pipeline_parallel": 4},
    )
    ranking = _rank(spec, [_offer("x", "8xL4", "l4", 8, "on_demand", 8.0)])
    assert ranking.results and not ranking.why_empty
    assert not any("not both" in reason for row in ranking.results for reason in row["reasons"])


def test_the_empty_reason_says_a_padded_checkpoint_runs_tp2():
    """aud50k item 3: the tp_mlp refusal names the padded width, 29,568 rounded up to a multiple of 128 x 8 =
    1,024 = 29,696, Qwen's own padding ([QWEN-PAD])."""
    assert -(-29568 // 1024) * 1024 == 29696
    spec = _serving(
        {"preset": "qwen2.5-72b", "intermediate_size": 29568},
        weight_quantization="int4",
        parallelism={"gpus": 2, "tensor_parallel": 2},
    )
    reason = _rank(spec, TWO_A100).why_empty[0]["reason"]
    assert "a checkpoint padded to 29,696" in reason and "state model.intermediate_size 29696" in reason, (
        reason
    )


# [SUBSTRATUS] workload as near as the spec states it: ShareGPT's 1,000 requests at once (vLLM's max_num_seqs 256
# streams), short prompts and outputs (1,024 context, 200 output tokens here: an assumption, the post gives no
# lengths). Published PP 4 x TP 2 / PP 2 x TP 4 = 307.61 / 261.16 = 1.18x. Ours (fix50k) 618.0 / 636.7 = 0.97x
# (64 streams: 278.1 / 381.6 = 0.73x); the absolute rates are not compared (the request mix is not a spec).
@pytest.mark.xfail(
    strict=True,
    reason="UNEXPLAINED (fix50k): [SUBSTRATUS] PP 4 x TP 2 served 1.18x PP 2 x TP 4 (307.61 / 261.16 output tok/s) "
    "on 8 x L4; ours ranks both (fix50k) but orders them the other way, 618.0 / 636.7 = 0.97x at 256 streams. Lead: "
    "the L4 host's link (the catalog states none; ours assumes PCIe 4.0 x16 with peer-to-peer, where a TP 4 ring "
    "over PCIe switches or host-staged copies costs more per call), and V1's uneven micro-batches, which hurt a "
    "deeper pipeline more, so the gap's sign is not from them",
)
def test_substratus_pp4_tp2_beats_pp2_tp4():
    def served(tp, pp):
        spec = parse_workload_spec(
            {
                "task": "inference",
                "model": {"preset": "llama-3.1-70b"},
                "precision": "fp8",
                "inference": {"concurrency": 256, "context_len": 1024, "output_tokens": 200},
                "parallelism": {"gpus": 8, "tensor_parallel": tp, "pipeline_parallel": pp},
            }
        )
        return _rank(spec, [_offer("x", "8xL4", "l4", 8, "on_demand", 8.0)]).results[0]["serving"][
            "tokens_per_second"
        ]

    assert served(2, 4) / served(4, 2) == pytest.approx(307.61 / 261.16, rel=0.15)
