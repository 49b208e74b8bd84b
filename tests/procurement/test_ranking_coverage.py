"""Storage for every provider, price quality in the ranking, derived A10G speed, explained empty rankings."""

from __future__ import annotations

from decimal import Decimal

import pandas as pd
import pytest

from procurement.costing.values import CostInputError
from procurement.ranking import RankingOptions, rank_workload
from procurement.services.recommendations import ranking_options_parse
from procurement.sizing import parse_workload_spec
from tests.procurement.test_ranking import FULL_70B, GPUS, NOW, QLORA_8B, _offer

L4 = _offer("aws", "g6.2xlarge", "l4", 1, "on_demand", 0.9776, vcpus=8, ram=32)
# 2e8 training tokens at 13,888.9 tokens/s = 4.000 h, so the hours of the hand computations are exact
FOUR_HOURS = {("l4", 1): 2e8 / (4 * 3600)}


def _rank(offers, spec=QLORA_8B, **options):
    defaults = {"top": None, "instance_counts": (1,), "measured_tokens_per_second": FOUR_HOURS}
    return rank_workload(spec, pd.DataFrame(offers), GPUS, RankingOptions(**(defaults | options)), now=NOW)


def test_storage_is_billed_for_the_run_plus_a_seven_day_retention():
    # 100 GB at 0.08 USD/GB-month for (4 h run + 1 h setup + 7 x 24 h retention) / 730 h a month:
    # 100 x 0.08 x 173 / 730 = 1.895890 -> 1.90 (a whole month would have been 8.00 + run)
    row = _rank([L4], storage_gb=100.0, storage_rate_per_gb_month={"aws": 0.08}).results[0]
    assert row["hours"] == 4.0
    assert row["cost_breakdown"]["storage"] == "1.90"
    # compute 0.9776 x 4 = 3.9104, setup 0.9776, reruns 0.2 x 3.9104 = 0.78208, storage 1.89589 -> 7.56597
    assert row["total_cost"] == "7.57"
    assert not any("assumed" in warning for warning in row["warnings"])


def test_a_provider_without_a_storage_rate_pays_the_stated_assumed_default():
    # vast has no rate in the options: 100 GB x 0.10 (ASSUMED_STORAGE_RATE_PER_GB_MONTH) x 173 / 730 = 2.369863
    vast = _offer("vast", "1x-L4", "l4", 1, "on_demand", 0.9776, vcpus=float("nan"), ram=float("nan"))
    row = _rank([vast], storage_gb=100.0, storage_rate_per_gb_month={"aws": 0.08}).results[0]
    assert row["cost_breakdown"]["storage"] == "2.37"
    assert any(w.startswith("storage priced at an assumed 0.1 USD per GB-month") for w in row["warnings"])


def test_the_retention_is_a_bounded_request_option():
    # 30 days: 30 x 24 / 730 = 0.986301 of a month
    assert ranking_options_parse({"storage_retention_days": 30}).storage_tail_months == pytest.approx(
        720 / 730
    )
    assert ranking_options_parse({}).storage_tail_months == pytest.approx(168 / 730)
    with pytest.raises(CostInputError) as error:
        ranking_options_parse({"storage_retention_days": 4000})
    assert error.value.field == "storage_retention_days"
    with pytest.raises(CostInputError):
        ranking_options_parse({"storage_retention_days": -1})
    assert ranking_options_parse({"include_illustrative": True}).include_illustrative is True
    with pytest.raises(CostInputError) as error:
        ranking_options_parse({"rank_outliers_at_quote": "yes"})
    assert error.value.field == "rank_outliers_at_quote"


def test_illustrative_prices_rank_only_when_asked_and_are_labelled():
    made_up = _offer("autodl", "l4-1x", "l4", 1, "on_demand", 0.10, vcpus=16, ram=64) | {
        "source": "file:autodl_cny.csv"
    }
    real = L4 | {"source": "skypilot:aws/vms.gpu.csv"}
    rows = _rank([made_up, real]).results
    assert [row["provider"] for row in rows] == ["aws"]
    assert rows[0]["price_quality"] == "snapshot"
    assert rows[0]["price_quality_text"] == "snapshot, data date unknown, bundled 2026-11-01"
    asked = _rank([made_up, real], include_illustrative=True).results
    assert asked[0]["provider"] == "autodl" and asked[0]["price_quality"] == "illustrative"
    assert any(w.startswith("illustrative price") for w in asked[0]["warnings"])


def test_a10g_ranks_with_its_derived_speed_flagged_estimated():
    # a10g has no NVIDIA datasheet; its 70 TFLOPS bf16 is derived (gpu_specs.csv notes): g5 now ranks
    assert GPUS["a10g"].bf16_tflops_dense == 70.0 and GPUS["a10g"].throughput_estimated
    g5 = _offer("aws", "g5.2xlarge", "a10g", 1, "on_demand", 1.212, vcpus=8, ram=32)
    rows = _rank([g5], measured_tokens_per_second={}).results
    assert rows and rows[0]["basis"] == "estimated"
    assert any(
        w.startswith("speed estimated from derived peak figures for a10g") for w in rows[0]["warnings"]
    )


def test_an_empty_ranking_says_why_with_counts():
    # Llama-3-70B full fine-tuning on 1, 2, 4 or 8 single-L4 instances: 4 data-parallel + 3 ZeRO-3 plans
    # (ZeRO-3 over one GPU is not a plan; tensor parallel needs 2+ GPUs per instance) = 7 configurations,
    # none of which fits (ZeRO-3 over 8 x 24 GB: 70e9 x 16 B / 8 = 140 GB per GPU)
    ranking = _rank([L4], spec=FULL_70B, instance_counts=(1, 2, 4, 8), measured_tokens_per_second={})
    assert ranking.results == []
    assert ranking.why_empty == [{"reason": "does not fit in GPU memory", "count": 7}]
    assert ranking.as_report()["why_empty"] == ranking.why_empty


def test_an_empty_ranking_blames_a_tight_fit_on_the_gate_that_stops_it_not_on_memory():
    # glm (stop 51): a tight row (peak inside the card, not inside the 20% headroom) ranks, so when a budget then
    # stops it the reason is the budget; before, why_empty's memory gate was "peak + headroom > card" and said
    # "does not fit in GPU memory" for a configuration the ranking had found to fit
    spec = parse_workload_spec(
        {
            "name": "s",
            "task": "lora",
            "model": {"preset": "llama-3.1-8b"},
            "seq_len": 1024,
            "training_tokens": 1e7,
        }
    )
    row = _rank([L4], spec=spec, measured_tokens_per_second={}).results[0]
    assert row["fits"] and row["tight"] and row["required_per_gpu_gib"] > 22.0  # an L4's 24 GB is 22.35 GiB
    over = _rank([L4], spec=spec, measured_tokens_per_second={}, budget=0.01)
    assert over.results == [] and over.why_empty == [
        {"reason": "costs more than the budget of 0.01 USD", "count": 1}
    ]


def test_an_empty_ranking_names_the_budget_and_the_filters():
    over = _rank([L4], budget=0.01)
    assert over.results == [] and over.why_empty == [
        {"reason": "costs more than the budget of 0.01 USD", "count": 1}
    ]
    none = _rank([L4], providers=("gcp",))
    assert none.why_empty[0]["reason"].startswith(
        "no priced offer of a known GPU matches the filters (providers gcp"
    )
    assert none.why_empty[0]["count"] == 1


def test_the_command_prints_the_reasons_instead_of_an_empty_table():
    from procurement.management.commands.recommend import render_table

    text = render_table({"results": [], "why_empty": [{"reason": "does not fit in GPU memory", "count": 7}]})
    assert text == "No feasible configuration. Top reasons:\n         7 x does not fit in GPU memory"


def test_the_price_ranked_is_the_quote_for_ordinary_rows():
    row = _rank([L4]).results[0]
    assert row["price_per_hour"] == row["effective_price_per_hour"] == "0.977600"
    assert Decimal(row["cost_breakdown"]["total"]) == Decimal(row["total_cost"])
