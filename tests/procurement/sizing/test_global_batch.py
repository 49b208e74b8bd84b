"""global_batch_size / global_batch_tokens derive gradient_accumulation_steps (Megatron's micro-batches a step),
and a pipelined training candidate with fewer micro-batches a step than stages says its bubble decides the answer
(aud51p FIX LIST item 1: Falcon-180B at PP 8 with gradient_accumulation_steps 1 read 53.7M GPU-hours, +667%)."""

from __future__ import annotations

import pytest

from procurement.ranking import RankingOptions, rank_workload
from procurement.sizing import WorkloadSpecError, parse_workload_spec, size_workload
from procurement.sizing.gpus import gpu_by_slug
from procurement.sizing.pipeline_bubble import bubble_share, pipeline_bubble_warning
from tests.procurement.test_ranking import GPUS, NOW, OFFERS

# Falcon-180B's plan (tiiuae/falcon-180B card: 4,096 A100, TP 8 PP 8, 2,048 sequences of 2,048 tokens a step)
FALCON_PLAN = {"gpus": 4096, "tensor_parallel": 8, "pipeline_parallel": 8, "zero_stage": 1}


def _spec(**fields):
    base = {
        "task": "pretrain",
        "model": {"preset": "llama-2-7b"},
        "seq_len": 2048,
        "parallelism": FALCON_PLAN,
    }
    return base | fields


def _errors(spec: dict) -> dict[str, str]:
    with pytest.raises(WorkloadSpecError) as error:
        parse_workload_spec(spec)
    return {e.path: e.message for e in error.value.errors}


def test_it_derives_the_accumulation_by_hand():
    # 2,048 sequences / (micro-batch 1 x 4,096 / (8 x 8) = 64 data-parallel ranks) = 32
    assert parse_workload_spec(_spec(global_batch_size=2048)).gradient_accumulation_steps == 32
    # 2,048 x 2,048 = 4,194,304 tokens / seq_len 2,048 = 2,048 sequences: the same 32
    tokens = parse_workload_spec(_spec(global_batch_tokens=4_194_304))
    assert (tokens.gradient_accumulation_steps, tokens.global_batch_size) == (32, 2048)
    # micro-batch 2, context parallel 2: 2,048 / (2 x 4,096 / (8 x 8 x 2) = 32 ranks) = 32
    cp = parse_workload_spec(
        _spec(global_batch_size=2048, micro_batch_size=2, parallelism=FALCON_PLAN | {"context_parallel": 2})
    )
    assert cp.gradient_accumulation_steps == 32
    # stated alike with gradient_accumulation_steps: accepted
    assert (
        parse_workload_spec(_spec(global_batch_size=2048, gradient_accumulation_steps=32)).global_batch_size
        == 2048
    )
    # unstated: today's behaviour
    assert parse_workload_spec(_spec()).gradient_accumulation_steps == 1
    assert parse_workload_spec(_spec()).global_batch_size is None


def test_it_refuses_a_batch_that_does_not_split():
    # 2,000 / 64 ranks is not whole
    assert "state a multiple of 64" in _errors(_spec(global_batch_size=2000))["global_batch_size"]
    assert (
        "not a whole number of seq_len 2,048"
        in _errors(_spec(global_batch_tokens=4_194_305))["global_batch_tokens"]
    )


def test_it_refuses_fields_that_disagree():
    message = _errors(_spec(global_batch_size=1024, global_batch_tokens=4_194_304))["global_batch_tokens"]
    assert "2,048 sequences of seq_len 2,048, but global_batch_size is 1,024" in message
    message = _errors(_spec(global_batch_size=2048, gradient_accumulation_steps=16))[
        "gradient_accumulation_steps"
    ]
    assert "16 disagrees with global_batch_size, which gives 32" in message


def test_it_refuses_the_batch_where_it_means_nothing():
    inference = _spec(task="inference", global_batch_size=64, parallelism={"gpus": 1})
    assert "needs a training task" in _errors(inference)["global_batch_size"]
    unstated = {"task": "pretrain", "model": {"preset": "llama-2-7b"}, "global_batch_tokens": 2048}
    assert "needs parallelism.gpus stated" in _errors(unstated)["global_batch_tokens"]


def test_the_bubble_share_by_hand():
    assert bubble_share(8, 1, 1) == pytest.approx(7 / 8)  # (p - 1) / (m + p - 1) = 7 / 8
    assert bubble_share(8, 1, 32) == pytest.approx(7 / 39)
    assert bubble_share(8, 2, 4) == pytest.approx(7 / 15)  # v m = 8


def test_the_warning_text():
    text = pipeline_bubble_warning(parse_workload_spec(_spec()), 8)
    assert text.startswith("pipeline bubble decides this answer: the spec states 1 micro-batch a step over 8")
    assert "idle 88% of every step" in text  # 7 / 8 = 87.5%
    assert "global_batch_size" in text and "global_batch_tokens" in text
    stated = pipeline_bubble_warning(parse_workload_spec(_spec(global_batch_size=256)), 8)  # 256 / 64 = 4
    assert "the stated global batch (256 sequences) gives 4 micro-batches" in stated
    assert "idle 64% of every step" in stated  # 7 / 11 = 63.6%
    # as many micro-batches as stages, no pipeline, or inference: none
    assert pipeline_bubble_warning(parse_workload_spec(_spec(global_batch_size=512)), 8) is None
    assert pipeline_bubble_warning(parse_workload_spec(_spec()), 1) is None


LLAMA_PP2 = {
    "task": "pretrain",
    "model": {"preset": "llama-2-7b"},
    "seq_len": 2048,
    "training_tokens": 1e9,
    "parallelism": {"gpus": 8, "pipeline_parallel": 2},
}


def test_the_size_report_and_the_ranking_rows_say_it():
    (candidate,) = size_workload(parse_workload_spec(LLAMA_PP2), [gpu_by_slug("h100-sxm5-80gb")])[
        "candidates"
    ]
    assert any(w.startswith("pipeline bubble decides this answer") for w in candidate["warnings"])
    options = RankingOptions(top=None, setup_hours=0.0, rerun_fraction=0.0, storage_gb=0.0)
    rows = rank_workload(parse_workload_spec(LLAMA_PP2), OFFERS, GPUS, options, now=NOW).results
    piped = [row for row in rows if row["plan"]["pipeline_parallel"] > 1]
    assert piped and all(any("pipeline bubble" in w for w in row["warnings"]) for row in piped)
    stated = LLAMA_PP2 | {"global_batch_size": 64}  # 64 / (1 x 4 ranks) = 16 micro-batches
    rows = rank_workload(parse_workload_spec(stated), OFFERS, GPUS, options, now=NOW).results
    assert rows and not any("pipeline bubble" in w for row in rows for w in row["warnings"])


MISTRAL_PRETRAIN = {
    "task": "pretrain",
    "model": {"preset": "mistral-7b"},
    "seq_len": 4096,
    "micro_batch_size": 4,
    "training_tokens": 1e10,
}


def _candidates(spec: dict, counts):
    report = size_workload(parse_workload_spec(spec), [gpu_by_slug("h100-sxm5-80gb")], counts)
    return {candidate["gpus"]: candidate for candidate in report["candidates"]}


def test_the_size_report_keeps_a_stated_global_batch_at_every_candidate_count():
    # gbsize: 1,024 sequences, micro 4, FSDP over 32 GPUs stated: 1,024 / (4 x 32) = 8 micro-batches; the
    # 64-GPU candidate runs 1,024 / (4 x 64) = 4 (before: the spec's 8, a 2,048-sequence batch), as the
    # ranking rows do (gbrow), with the same text
    spec = MISTRAL_PRETRAIN | {"global_batch_size": 1024, "parallelism": {"gpus": 32, "zero_stage": 3}}
    candidates = _candidates(spec, [32, 64])
    assert (candidates[32]["gradient_accumulation_steps"], candidates[64]["gradient_accumulation_steps"]) == (
        8,
        4,
    )
    assert candidates[64]["batch"] == (
        "global batch kept: gradient_accumulation_steps 4 (micro_batch_size 4 x 4 micro-batches x 64 data-parallel "
        "ranks = 1,024 sequences (4,194,304 tokens) a step)"
    )
    assert "x 8 micro-batches x 32 data-parallel ranks = 1,024 sequences" in candidates[32]["batch"]


def test_a_pipelined_candidate_prices_its_own_micro_batches():
    # PP 4 stated at 32 GPUs: 8 data-parallel ranks, 1,024 / (4 x 8) = 32 micro-batches; the 64-GPU candidate
    # has 16 ranks, 1,024 / (4 x 16) = 16 (before: 32). Its bubble (p - 1) / m = 3 / 16 of the work, not 3 / 32
    # (arXiv:2104.04473 sec. 2.2.2), so it prices exactly as the spec stating 64 GPUs (which derives 16 itself)
    # and above the 64-GPU candidate that keeps 32 (the spec without a global batch, today's figure)
    plan = {"gpus": 32, "pipeline_parallel": 4, "zero_stage": 1}
    candidates = _candidates(MISTRAL_PRETRAIN | {"global_batch_size": 1024, "parallelism": plan}, [32, 64])
    assert candidates[64]["gradient_accumulation_steps"] == 16
    own = _candidates(
        MISTRAL_PRETRAIN | {"global_batch_size": 1024, "parallelism": plan | {"gpus": 64}}, [64]
    )
    hours = candidates[64]["throughput"]["training_hours"]
    assert hours == own[64]["throughput"]["training_hours"]
    kept = _candidates(MISTRAL_PRETRAIN | {"gradient_accumulation_steps": 32, "parallelism": plan}, [32, 64])
    assert kept[64]["gradient_accumulation_steps"] == 32 and kept[64]["batch"] is None
    assert hours > kept[64]["throughput"]["training_hours"]
    # the 32-GPU candidate is the spec's own: the same figure either way
    assert candidates[32]["throughput"]["training_hours"] == kept[32]["throughput"]["training_hours"]


def test_a_candidate_whose_ranks_do_not_split_the_batch_says_so():
    # 96 sequences in micro-batches of 4 over 8 FSDP ranks: 3 micro-batches; over 16 ranks 96 / 64 = 1.5, which
    # Megatron refuses: the 16-GPU candidate keeps the spec's 3 and says the batch is not kept
    spec = MISTRAL_PRETRAIN | {"global_batch_size": 96, "parallelism": {"gpus": 8, "zero_stage": 3}}
    candidate = _candidates(spec, [8, 16])[16]
    assert candidate["gradient_accumulation_steps"] == 3
    assert candidate["batch"].startswith(
        "global batch not kept: the stated 96 sequences do not split into micro_batch_size 4 x 16 data-parallel"
    )
