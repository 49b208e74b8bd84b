"""The spot object of ranked spot rows: rate and its source, checkpoint interval, overhead, verdict, P50/P90."""

import math

import pytest

from procurement.ranking import RankingOptions, rank_workload
from procurement.sizing import parse_workload_spec
from tests.procurement.test_ranking import GPUS, NOW, OFFERS, QLORA_8B

# Band 0 (<5% a month, midpoint 2.5%): lambda = -ln(0.975) / 730 = 3.4682e-5 per hour
BAND0_RATE = -math.log(0.975) / 730
# QLoRA Llama-3.1-8B, LoRA r=8 on q_proj (4096->4096) and v_proj (4096->1024), 32 layers:
# 32 x 8 x ((4096 + 4096) + (4096 + 1024)) = 3,407,872 adapter parameters; a resumable checkpoint keeps each
# as fp32 (4 B) plus AdamW m and v (8 B): 40,894,464 B = 0.0409 GB, written at 0.5 GB/s in 0.08 s, so the
# one-second floor applies: C = 1/3600 h.
CHECKPOINT_WRITE_HOURS = 1 / 3600
# R = provisioning 300 s + image 30 GB / 0.25 GB/s = 120 s + frozen bf16 base 8,030,261,248 x 2 B / 0.5 GB/s
# = 32.121 s + dataset 2e8 tokens x 4 B / 0.5 GB/s = 1.6 s + checkpoint 0.040894464 GB / 0.5 GB/s = 0.0818 s
RESTART_HOURS = (300 + 120 + 8_030_261_248 * 2 / 1e9 / 0.5 + 1.6 + 0.040894464 / 0.5) / 3600  # 0.126056 h
# tau = min(Young/Daly, 15 min) = 0.25 h: overhead = C/0.25 + (0.125 + R) x lambda
BAND0_OVERHEAD = CHECKPOINT_WRITE_HOURS / 0.25 + (0.125 + RESTART_HOURS) * BAND0_RATE


def _spot_rows(offers=OFFERS, spec=QLORA_8B, **options):
    options = {"top": None, "pricing_models": ("spot",)} | options
    return rank_workload(spec, offers, GPUS, RankingOptions(**options), now=NOW).results


def _l4_spot(**options):
    return next(row for row in _spot_rows(**options) if row["instance_type"] == "g6.2xlarge")


def test_it_states_the_rate_its_source_the_interval_and_the_overhead():
    spot = _l4_spot()["spot"]
    assert spot["interruption_band"] == "<5%" and spot["interruption_source"] == "advisor"
    assert spot["interruption_rate_per_hour"] == "0.000034682"  # 3.4682e-5 to 9 places
    assert (
        spot["checkpoint_interval_minutes"] == 15.0
    )  # Young/Daly sqrt(2 x (1/3600) / lambda) = 4.0 h, capped
    assert spot["optimal_interval_hours"] == pytest.approx(math.sqrt(2 * (1 / 3600) / BAND0_RATE), abs=1e-3)
    assert spot["interval_rule"].endswith(
        "capped by the guides' 15-minute ceiling (reclaims cluster in bad weeks); "
        # a one-GPU QLoRA run saves its adapters synchronously (host.checkpoint auto: async only for full
        # training on several GPUs); its 0.08 s write is floored at 1 s (docs/cost-model.md "Spot timing")
        "synchronous checkpoint: the loop waits 1 s for the whole write"
    )
    assert spot["timing"]["checkpoint_mode"] == "sync" and spot["timing"]["background_write_minutes"] == 0
    assert spot["overhead"] == f"{BAND0_OVERHEAD:.6f}" == "0.001120"
    assert spot["checkpoint_write_minutes"] == pytest.approx(1 / 60, abs=1e-3)
    assert spot["restart_hours"] == pytest.approx(RESTART_HOURS, abs=1e-4)
    assert spot["timing"]["restart_parts_minutes"]["image_pull"] == 2.0  # 30 GB at 0.25 GB/s = 120 s
    assert spot["timing"]["checkpoint_gb"] == pytest.approx(0.040894, abs=1e-6)
    assert spot["verdict"] == "suitable"
    # 0.30 x (1 + 0.0011198) = 0.300336
    assert spot["why"] == [
        "checkpointing every 15.0 min adds 0.11% paid time; effective spot price 0.300336/h"
    ]


def test_it_says_when_the_band_is_assumed_and_dates_an_advisor_band():
    assumed = OFFERS.assign(interruption_band=float("nan"))
    spot = next(r for r in _spot_rows(assumed) if r["instance_type"] == "g6.2xlarge")["spot"]
    assert (spot["interruption_source"], spot["interruption_band"], spot["advisor_observed_at"]) == (
        "assumed",
        "10-15%",
        None,
    )
    assert spot["interruption_source_text"].startswith("assumed: band 10-15% a month")
    dated = OFFERS.assign(interruption_observed_at="2026-11-20T00:00:00+00:00")
    spot = next(r for r in _spot_rows(dated) if r["instance_type"] == "g6.2xlarge")["spot"]
    assert spot["advisor_observed_at"] == "2026-11-20"
    assert spot["interruption_source_text"] == (
        "Spot Advisor band <5% of instances interrupted a month, snapshot 2026-11-20"
    )


def test_it_simulates_p50_and_p90_for_the_first_feasible_spot_rows():
    rows = [row for row in _spot_rows() if row["fits"]]
    simulated = [row for row in rows if row["spot"]["simulation"]]
    assert len(simulated) == min(3, len(rows)) and simulated == rows[: len(simulated)]
    row = next(row for row in simulated if row["instance_type"] == "g6.2xlarge")
    simulation, hours = row["spot"]["simulation"], row["hours"]
    # With lambda = 3.5e-5/h a job of ~H hours is interrupted with probability ~H x 3.5e-5 << 10%, so P50 and
    # P90 are the uninterrupted run: H of work plus a 1-second checkpoint after each 15-minute segment but the last.
    uninterrupted = hours + (math.ceil(hours / 0.25) - 1) / 3600
    assert simulation["p50_hours"] == simulation["p90_hours"] == pytest.approx(uninterrupted, abs=2e-3)
    assert float(simulation["p50_cost"]) == pytest.approx(uninterrupted * 0.3, abs=0.011)  # at 0.30/h spot
    assert (simulation["trials"], simulation["seed"]) == (2000, 0)
    assert _spot_rows() == _spot_rows()  # seeded: the same numbers every time


def test_it_simulates_only_the_top_rows_to_keep_ranking_fast():
    rows = [row for row in _spot_rows(spot_simulation_rows=1) if row["fits"]]
    assert [bool(row["spot"]["simulation"]) for row in rows] == [True] + [False] * (len(rows) - 1)


def test_it_gives_the_serving_verdict_in_words():
    serving = parse_workload_spec({"name": "s", "task": "inference", "model": {"preset": "llama-3.1-8b"}})
    rows = _spot_rows(spec=serving, include_infeasible=True)
    assert rows and not any(row["fits"] for row in rows)
    assert rows[0]["spot"]["verdict"] == "unsuitable"
    assert rows[0]["spot"]["why"][0].startswith("online inference: a reclaimed instance drops live requests")


def test_it_converts_the_simulated_cost_into_the_requested_currency():
    from decimal import Decimal

    usd = _l4_spot()["spot"]["simulation"]
    cny = _l4_spot(currency="CNY", fx_rate_from_usd=Decimal("7.15"))["spot"]["simulation"]
    assert float(cny["p50_cost"]) == pytest.approx(float(usd["p50_cost"]) * 7.15, abs=0.04)
    assert cny["p50_hours"] == usd["p50_hours"]


def test_an_assumed_band_widens_the_p90_to_the_worst_band():
    # A long job (2,000 h of work on one L4) so reclaims matter: at band 2 (12.5%/month, lambda 1.83e-4/h)
    # and at band 4 (25%, lambda 3.94e-4/h) a 2,000-hour run sees about 0.37 and 0.79 reclaims.
    long_job = parse_workload_spec(
        {"name": "q", "task": "qlora", "model": {"preset": "llama-3.1-8b"}, "training_tokens": 2e10}
    )
    assumed = OFFERS.assign(interruption_band=float("nan"))
    known_band_2 = OFFERS.assign(interruption_band=2.0)
    guess = next(r for r in _spot_rows(assumed, spec=long_job) if r["instance_type"] == "g6.2xlarge")["spot"]
    known = next(r for r in _spot_rows(known_band_2, spec=long_job) if r["instance_type"] == "g6.2xlarge")[
        "spot"
    ]
    assert guess["interruption_band"] == known["interruption_band"] == "10-15%"
    assert guess["simulation"]["p50_hours"] == known["simulation"]["p50_hours"]
    assert guess["simulation"]["p90_hours"] > known["simulation"]["p90_hours"]
    assert guess["simulation"]["p90_basis"].startswith("assumed band: P90 simulated at the >20% band")
    assert known["simulation"]["p90_basis"] == "simulated at the row's band"
    assert guess["warnings"] and guess["warnings"][0].startswith("assumed band")
    assert known["warnings"] == []


def test_an_advisor_band_older_than_a_year_is_flagged():
    old = OFFERS.assign(interruption_observed_at="2025-10-01T00:00:00+00:00")  # 425 days before NOW
    spot = next(r for r in _spot_rows(old) if r["instance_type"] == "g6.2xlarge")["spot"]
    assert spot["advisor_stale"] is True
    assert spot["warnings"] == [
        "Spot Advisor band observed 2025-10-01, over a year ago: interruption rates may have changed"
    ]
    recent = OFFERS.assign(interruption_observed_at="2026-01-01T00:00:00+00:00")  # 333 days
    assert (
        next(r for r in _spot_rows(recent) if r["instance_type"] == "g6.2xlarge")["spot"]["advisor_stale"]
        is False
    )


def test_a_training_deadline_adds_the_spot_with_on_demand_fallback_plan():
    row = next(r for r in _spot_rows(deadline_hours=400.0) if r["instance_type"] == "g6.2xlarge")
    plan = row["spot"]["deadline_plan"]
    assert plan["available"] and plan["meets_target"] and plan["target_probability"] == 0.9  # the default
    assert plan["on_demand_price_per_hour"] == "0.977600"  # g6.2xlarge on-demand in us-east-1
    # band 0 over ~a few dozen hours: reclaims are rare, so the job stays on spot: expected cost ~ P50 cost
    assert float(plan["expected_cost"]) == pytest.approx(
        float(row["spot"]["simulation"]["p50_cost"]), rel=0.02
    )
    assert plan["p_meets_deadline"] >= 0.9
    assert plan["text"] == (
        f"spot with on-demand fallback: expected cost {plan['expected_cost']} USD, worst case "
        f"{plan['worst_case_cost']} USD, P(meets deadline) {plan['p_meets_deadline']:.1%}; falls back on "
        "aws g6.2xlarge us-east-1 on demand"
    )
    assert _l4_spot()["spot"]["deadline_plan"] is None  # no deadline, no plan


def test_a_spot_row_without_an_on_demand_sibling_says_so():
    alone = OFFERS[~((OFFERS["instance_type"] == "g6.2xlarge") & (OFFERS["pricing_model"] == "on_demand"))]
    row = next(r for r in _spot_rows(alone, deadline_hours=400.0) if r["instance_type"] == "g6.2xlarge")
    assert row["spot"]["deadline_plan"] == {
        "available": False,
        "why": "no on-demand price for this instance type in this region to fall back on",
    }


def test_a_checkpoint_slower_than_the_interval_refuses_spot():
    full = parse_workload_spec(
        {
            "name": "f",
            "task": "full_finetune",
            "model": {"preset": "llama-3.1-8b"},
            "training_tokens": 1e8,
            "parallelism": {"zero_stage": 3},
        }
    )
    # 8.03e9 params x 14 B = 112.4 GB; at 0.1 GB/s a write takes 1,124 s = 18.7 min > 15 min
    rows = _spot_rows(spec=full, include_infeasible=True, storage_write_gb_per_s=0.1)
    assert rows and not any(row["fits"] for row in rows)
    assert any("a checkpoint write takes 15 min or more" in " ".join(row["reasons"]) for row in rows)
    verdicts = {row["spot"]["verdict"] for row in rows}
    assert verdicts == {"unsuitable"}


def test_a_tight_deadline_keeps_spot_only_while_the_target_holds():
    # The L4 job: H = 57.56 h of work (4N + 6 L T d_attn per token), ceil(H / 0.25) = 231 segments of 15 min
    # with a 1-second checkpoint between them = H + 230 s on spot. Staying on spot needs r + R + T(W) <= D,
    # with R = 0.126056 h the on-demand restart after a reclaim (counted at the first decision too since the
    # safety fix of issue 26). A deadline R + 0.026 h past the uninterrupted run leaves too little slack for
    # the safe reserve (a whole 15-minute segment: 0.250278 + 0.126056 > 0.152056), so spot runs with no
    # reserve (0 + 0.126056 <= 0.152056); at band 0 (3.5e-5 reclaims/h) about 0.2% of trials are reclaimed,
    # each then misses the deadline, and the plan still meets the 95% target. (With 0.026 h of slack alone,
    # under R, no reclaim could be recovered and the plan is on-demand alone.)
    hours = _l4_spot()["hours"]
    on_spot = hours + (math.ceil(hours / 0.25) - 1) / 3600
    deadline = on_spot + RESTART_HOURS + 0.026
    row = next(
        r
        for r in _spot_rows(deadline_hours=deadline, deadline_probability=0.95)
        if r["instance_type"] == "g6.2xlarge"
    )
    plan = row["spot"]["deadline_plan"]
    assert plan["reserve_segments"] == 0.0 and plan["meets_target"]
    assert 0.95 <= plan["p_meets_deadline"] < 1.0
    # reclaimed trials restart on on-demand, so the mean spot hours fall a little under the uninterrupted run
    assert hours - 1 < plan["expected_spot_hours"] <= on_spot + 1e-3 and plan["expected_on_demand_hours"] > 0
    # asking for certainty: a few reclaimed trials finish after the deadline, so spot alone misses it at
    # P100, and every spot mix too (the plan is on-demand alone, which is its own row): the spot row is gone
    assert not [
        r
        for r in _spot_rows(deadline_hours=deadline, deadline_probability=1.0)
        if r["instance_type"] == "g6.2xlarge"
    ]
    assert not [r for r in _spot_rows(deadline_hours=hours - 0.8) if r["instance_type"] == "g6.2xlarge"]
