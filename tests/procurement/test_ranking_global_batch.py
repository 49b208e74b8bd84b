"""gbrow: a ranking row at another GPU count than the spec's keeps a stated global batch (the recipe's contract)
and runs its own micro-batches a step, global / (micro_batch_size x its data-parallel ranks): Megatron-LM's
num_microbatches (NVIDIA/Megatron-LM @6337108c megatron/core/num_microbatches_calculator.py,
ConstantNumMicroBatchesCalculator, which asserts it divides). Without a stated global batch a row keeps the spec's
gradient_accumulation_steps and says its global batch changes with its GPUs."""

import pytest

from procurement.ranking import RankingOptions, rank_workload
from procurement.sizing import WorkloadSpecError, parse_workload_spec
from tests.procurement.test_ranking import GPUS, NOW, OFFERS


def _spec(**extra):
    return parse_workload_spec(
        {
            "name": "gb",
            "task": "pretrain",
            "model": {"preset": "mistral-7b"},
            "training_tokens": 1e9,
            "micro_batch_size": 4,
            "seq_len": 4096,
            "parallelism": {"gpus": "auto"},
        }
        | extra
    )


def _rows(spec, plan="zero3_fsdp"):
    rows = rank_workload(
        spec, OFFERS, GPUS, RankingOptions(top=None, include_infeasible=True), now=NOW
    ).results
    # the p5.48xlarge (8 x H100 SXM) FSDP rows on demand, one per GPU count
    return {
        row["gpus"]: row
        for row in rows
        if row["instance_type"] == "p5.48xlarge"
        and plan in ("any", row["plan"]["name"])
        and row["pricing_model"] == "on_demand"
    }


def test_rows_keep_the_stated_global_batch_and_derive_their_own_accumulation():
    rows = _rows(_spec(global_batch_size=1024))
    # 1,024 sequences / (micro 4 x 64 data-parallel ranks) = 4; / (4 x 32) = 8; both 1,024 x 4,096 = 4,194,304
    # tokens a step
    assert "global batch kept: gradient_accumulation_steps 4 (micro_batch_size 4 x 4 micro-batches x 64 " in (
        " ".join(rows[64]["reasons"])
    )
    assert "global batch kept: gradient_accumulation_steps 8 (micro_batch_size 4 x 8 micro-batches x 32 " in (
        " ".join(rows[32]["reasons"])
    )
    for gpus in (32, 64):
        assert "= 1,024 sequences (4,194,304 tokens) a step" in " ".join(rows[gpus]["reasons"])
    # the hours differ only through the plan: each row prices exactly as the spec that states its GPU count
    # (and so derives the same accumulation at parse time) prices its own row
    for gpus, accumulation in ((32, 8), (64, 4)):
        stated = _spec(global_batch_size=1024, parallelism={"gpus": gpus})
        assert stated.gradient_accumulation_steps == accumulation
        assert _rows(stated)[gpus]["hours"] == rows[gpus]["hours"]


def test_a_pipelined_row_prices_its_own_micro_batches():
    # PP 8, 1,024 sequences, micro 4: 64 GPUs hold 8 data-parallel ranks, 1,024 / (4 x 8) = 32 micro-batches; the
    # 1F1B bubble (p - 1) / m is then 7 / 32 of the work, where the spec's GA 1 left 7 / 1 (arXiv:2104.04473 sec.
    # 2.2.2): the row prices as the spec stating 64 GPUs does, and below the same spec at GA 1 (before: every row
    # kept one count)
    auto = _rows(_spec(global_batch_size=1024, parallelism={"gpus": "auto", "pipeline_parallel": 8}), "any")
    stated = _spec(global_batch_size=1024, parallelism={"gpus": 64, "pipeline_parallel": 8})
    assert stated.gradient_accumulation_steps == 32
    assert _rows(stated, "any")[64]["hours"] == auto[64]["hours"]
    one = _rows(_spec(parallelism={"gpus": "auto", "pipeline_parallel": 8}), "any")
    assert one[64]["hours"] > 2 * auto[64]["hours"]
    assert (
        "gradient_accumulation_steps 32 (micro_batch_size 4 x 32 micro-batches x 8 data-parallel"
        in " ".join(auto[64]["reasons"])
    )


def test_a_row_whose_data_parallel_ranks_do_not_divide_the_batch_is_dropped():
    # 1,000 sequences in micro-batches of 4 = 250 micro-batches: whole over 1 or 2 data-parallel ranks (250, 125),
    # not over 8, 16, 32 or 64 (31.25, ...), which Megatron-LM refuses (asserts it divides)
    rows = rank_workload(
        _spec(global_batch_size=1000),
        OFFERS,
        GPUS,
        RankingOptions(top=None, include_infeasible=True),
        now=NOW,
    ).results
    ranks = {
        row["gpus"] // (row["plan"]["tensor_parallel"] * row["plan"]["pipeline_parallel"]) for row in rows
    }
    assert ranks == {1, 2}
    # so 8 GPUs rank as TP 8 or TP 4 (one or two data-parallel ranks), never as FSDP over 8 ranks
    assert {row["plan"]["name"] for row in rows if row["gpus"] == 8} == {
        "tensor_parallel",
        "tensor_parallel_4",
    }
    # and the same job with 1,024 sequences (whole over 8 ranks: 32) keeps FSDP over 8
    kept = _rows(_spec(global_batch_size=1024))
    assert kept[8]["plan"]["name"] == "zero3_fsdp"


def test_without_a_global_batch_each_row_says_its_batch_changes_with_its_gpus():
    rows = _rows(_spec(gradient_accumulation_steps=4))
    # tokens a step = micro 4 x GA 4 x DP: 64 ranks 1,024 sequences (4,194,304 tokens), 32 ranks 512 (2,097,152)
    assert (
        "global batch changes with the GPU count: gradient_accumulation_steps 4 as stated (micro_batch_size 4 x 4 "
        "micro-batches x 64 data-parallel ranks = 1,024 sequences (4,194,304 tokens) a step)"
    ) in " ".join(rows[64]["reasons"])
    assert "x 32 data-parallel ranks = 512 sequences (2,097,152 tokens) a step" in " ".join(
        rows[32]["reasons"]
    )


def test_a_stated_accumulation_with_a_global_batch_under_gpus_auto_is_refused():
    with pytest.raises(WorkloadSpecError, match="gradient_accumulation_steps"):
        _spec(global_batch_size=1024, gradient_accumulation_steps=4)


def test_exploring_from_a_stated_count_re_derives_each_rows_accumulation():
    # 64 GPUs at PP 8 stated: the spec derives 1,024 / (4 x 64 / 8) = 32; explored, the 32-GPU TP 1 row runs
    # 1,024 / (4 x 32 / 8) = 64 (before: it kept 32, a global batch of 512 sequences)
    spec = _spec(global_batch_size=1024, parallelism={"gpus": 64, "pipeline_parallel": 8})
    assert spec.gradient_accumulation_steps == 32
    rows = rank_workload(
        spec,
        OFFERS,
        GPUS,
        RankingOptions(top=None, include_infeasible=True, explore_parallelism=True),
        now=NOW,
    ).results
    row = next(
        r
        for r in rows
        if r["gpus"] == 32 and r["instance_type"] == "p5.48xlarge" and r["plan"]["tensor_parallel"] == 1
    )
    assert row["plan"]["pipeline_parallel"] == 8  # 32 / (TP 1 x PP 8) = 4 data-parallel ranks
    assert (
        "gradient_accumulation_steps 64 (micro_batch_size 4 x 64 micro-batches x 4 data-parallel ranks = 1,024"
        in (" ".join(row["reasons"]))
    )


def test_a_pipelined_partial_tp_row_names_its_pipeline_in_its_plan_text():
    # gbsize: a 32-GPU TP 2 row at PP 8 holds 32 / (2 x 8) = 2 data-parallel ranks; its hours text read
    # "TP 2 x DP 16" (32 / 2, the pipeline left out) -> "TP 2 x PP 8 x DP 2"
    spec = _spec(global_batch_size=1024, parallelism={"gpus": "auto", "pipeline_parallel": 8})
    rows = rank_workload(
        spec, OFFERS, GPUS, RankingOptions(top=None, include_infeasible=True), now=NOW
    ).results
    (row, *_) = [r for r in rows if r["gpus"] == 32 and r["plan"]["name"] == "tensor_parallel_2"]
    text = " ".join(row["reasons"])
    assert "TP 2 x PP 8 x DP 2 (TP groups within each instance)" in text
    assert "DP 16" not in text


def test_a_benchmark_at_another_count_is_scaled_with_each_counts_own_accumulation():
    # gbsize: PP 8, 1,024 sequences, micro 4, a run measured at 32 H100s (4 data-parallel ranks: 1,024 / (4 x 4)
    # = 64 micro-batches a step) priced at 64 (8 ranks: 32). scaled_hours: measured x modelled(64) / modelled(32),
    # each modelled at its own count's micro-batches, so the ratio is the two estimated rows' hours (each equal
    # to the spec stating its count: test_a_pipelined_row_prices_its_own_micro_batches). Before, modelled(32) was
    # taken at the 64-GPU row's 32 micro-batches (a 512-sequence batch), a larger 1F1B bubble (7 / 32, not 7 / 64).
    spec = _spec(global_batch_size=1024, parallelism={"gpus": "auto", "pipeline_parallel": 8})
    estimated = _rows(spec, "data_parallel")  # DP x PP 8: 32 GPUs 4 ranks, 64 GPUs 8
    tokens_per_second = 50_000.0
    options = RankingOptions(
        top=None,
        include_infeasible=True,
        measured_tokens_per_second={("h100-sxm5-80gb", 32): tokens_per_second},
        measured_dates={("h100-sxm5-80gb", 32): "2026-11-20"},
    )
    rows = rank_workload(spec, OFFERS, GPUS, options, now=NOW).results
    (row, *_) = [
        r
        for r in rows
        if r["gpus"] == 64
        and r["instance_type"] == "p5.48xlarge"
        and r["pricing_model"] == "on_demand"
        and r["plan"]["name"] == "data_parallel"
    ]
    assert row["basis"] == "measured"
    measured_hours = 1e9 / tokens_per_second / 3600  # training_tokens 1e9 at 50,000 tokens/s = 5.5556 h
    expected = measured_hours * estimated[64]["hours"] / estimated[32]["hours"]
    assert row["hours"] == pytest.approx(expected, rel=2e-3)  # the rows' hours are rounded
