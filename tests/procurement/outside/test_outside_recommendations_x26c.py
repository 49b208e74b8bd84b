"""Issue 26, judged from outside (round x26c): published runs no earlier test used, chosen by a GPU engineer who
plans large training runs and buys cloud capacity.

Each case gives its source, the published figure, the hand computation and the tolerance. Speeds and memory go
through `size_spec_document` (what `manage.py size` runs, calibration off); rankings through the service
`manage.py recommend` uses (``workload_spec_parse`` -> ``ranking_options_parse`` -> ``recommendation_compute``).
Tolerances are the issue's class 7: throughput within 15% (run-to-run and software-version spread of these
tables is 5-10%, e.g. NeMo 24.07's GPT-3 175B at 726 vs 782 tokens/s/GPU between 128 and 512 GPUs), memory within
10%. Disagreements are strict xfails with the measured gap and the likely cause.

Sources (figures quoted where used):
  [BLOOM]   bigscience-workshop/bigscience train/tr11-176B-ml/README.md @e726b15982fa088fb6d9a4c869c19c3d4dbc84a7
            (BLOOM-176B: 384 A100 80GB, TP 4 / PP 12 / DP 8, MBS 2, GBS 2048 x 2048 tokens, bf16, ZeRO-1 via
            DeepSpeed's BF16_Optimizer, DeepSpeed activation checkpointing, pp-partition-method
            'type:transformer|embedding', the iteration log line at the end of epoch one, checkpoint sizes/times)
  [BLOOMP]  BigScience, "BLOOM: A 176B-Parameter Open-Access Multilingual Language Model", arXiv:2211.05100
            (366B training tokens)
  [NEMO2407] NVIDIA/NeMo docs/source/performance/performance_summary.md @070a0bb168d405d653b9734c0017cf5078e77c0d
            (NeMo 24.07, DGX-H100, FP8; rows not used by earlier rounds: LLAMA2-13B, LLAMA2-70B, LLAMA3-70B CP 2)
  [MB2511]  NVIDIA-NeMo/Megatron-Bridge docs/performance-summary.md @00b7660be0254ac6f95f44164ddd0c3e9cc798ed
            ("25.11 NeMo Container"; rows not used by earlier rounds: DGX-B200 LLAMA3.1_405B, DGX-GB200 LLAMA3_8B,
            LLAMA3_70B and Qwen3_30B_a3B)
  [MBCFG]   NVIDIA-NeMo/Megatron-Bridge scripts/performance/configs/llama/llama3_workload_base_configs.py
            (LLAMA3_70B_PRETRAIN_CONFIG_GB200_FP8_CS_V2: BASE_LLAMA3_70B_CONFIG_GBS256, micro_batch_size=2,
            use_megatron_fsdp=True, cpu_offloading_num_layers=40)
"""

from __future__ import annotations

import copy
import dataclasses

import pytest

from procurement.services.recommendations import (
    ranking_options_parse,
    recommendation_compute,
    workload_spec_parse,
)
from procurement.sizing.spec import WorkloadSpecError, parse_workload_spec
from tests.procurement.outside.test_outside_recommendations_x26b import (
    candidate,
    describe,
    megatron_spec,
    ranked,
    tokens_per_gpu,
)

H100 = "h100-sxm5-80gb"
A100 = "a100-sxm4-80gb"


def plan_of(row: dict) -> tuple:
    plan = row["plan"]
    return (
        row["gpus"],
        plan["tensor_parallel"],
        plan["pipeline_parallel"],
        plan["virtual_pipeline"],
        plan["context_parallel"],
        plan["zero_stage"],
    )


def uncollapsed(spec: dict, top: int = 30, **options) -> list[dict]:
    """Every region's row (docs/cost-model.md: `collapse_identical: false`), set on RankingOptions directly since
    the service refuses the option (see the last test)."""
    parsed = dataclasses.replace(ranking_options_parse({"top": top} | options), collapse_identical=False)
    return recommendation_compute(spec=workload_spec_parse(copy.deepcopy(spec)), options=parsed).as_report()[
        "results"
    ]


def check_costs_and_collapse(rows: list[dict], spec: dict) -> None:
    """Compute is catalog price x instances x hours; a collapsed row's regions each sell the same offer at the same
    price and hours (checked against the uncollapsed ranking), and the reason names them."""
    every = uncollapsed(spec)
    for row in rows:
        compute = float(row["effective_price_per_hour"]) * row["instances"] * row["hours"]
        assert float(row["cost_breakdown"]["compute"]) == pytest.approx(compute, rel=2e-5), describe([row])
        for place in row.get("also_in") or []:
            region = place.split("/")[0]
            twins = [
                r
                for r in every
                if r["region"] == region
                and r["instance_type"] == row["instance_type"]
                and r["pricing_model"] == row["pricing_model"]
                and r["provider"] == row["provider"]
                and r["total_cost"] == row["total_cost"]
                and r["hours"] == row["hours"]
            ]
            assert twins, (place, describe([row]))
        if row.get("also_in"):
            assert any(reason.startswith("also in") for reason in row["reasons"]), row["reasons"]


# --- 1. BLOOM-176B on 384 A100 80GB, TP 4 PP 12 with the embeddings counted in the split ([BLOOM]) -------------
# Shape [BLOOM] "Architecture": 70 layers, hidden 14,336, 112 heads, plain GELU MLP of 4 h, vocabulary 250,880
# (padded), tied embeddings, sequence 2,048. The README's partition puts "[embed | 5 transformer blocks]" on pp
# rank 0, 6 on ranks 1-10 and "[5 transformer blocks | embed]" on rank 11: (70 + 2) / 12 = 6, which is what
# Megatron's account_for_embedding / account_for_loss state (issue 26's new spec fields).
# Published ([BLOOM] "Important checkpoints", end of epoch one): "elapsed time per iteration (s): 104.70 | ...
# global batch size: 2048 | ... TFLOPs: 149.77". Tokens/s/GPU = 2,048 x 2,048 / 104.70 / 384 = 104.33.
# Plan: DP = 384 / 48 = 8, accumulation 2,048 / (8 x 2) = 128, bubble (12 - 1) / 128 = 8.59%; "full" = DeepSpeed
# activation checkpointing (every layer's input kept, the layer recomputed).
# Product: 91.7 tokens/s/GPU (-12.1%): agree. By hand at the product's own FLOPs a token (1.426e12, which counts
# the recomputation): 91.7 x 1.426e12 = 130.8 TFLOP/s against the log's 149.77 "hardware TFLOPs" (8 x N x tokens
# plus attention): the same -12% gap, the engine's 51% of the A100's 312 TFLOPS with the bubble on top.
BLOOM_176B = {
    "name": "bloom-176b",
    "num_layers": 70,
    "hidden_size": 14336,
    "num_attention_heads": 112,
    "intermediate_size": 4 * 14336,
    "vocab_size": 250880,
    "gated_mlp": False,
    "tie_word_embeddings": True,
}
BLOOM = megatron_spec(
    BLOOM_176B,
    384,
    2048,
    4,
    12,
    global_batch=2048,
    micro_batch=2,
    precision="bf16",
    checkpointing="full",
    tokens=366e9,  # [BLOOMP]
)
BLOOM["parallelism"] |= {"account_for_embedding": True, "account_for_loss": True}
BLOOM_TOKENS_PER_GPU = 2048 * 2048 / 104.70 / 384  # 104.33


def test_bloom_partition_with_embeddings_can_be_stated():
    try:
        parse_workload_spec(copy.deepcopy(BLOOM))
    except WorkloadSpecError as error:
        pytest.fail(str(error))


@pytest.mark.django_db
def test_bloom_176b_on_384_a100_within_15_percent(bundled_catalog):
    row = candidate(BLOOM, A100)
    assert row["verdict"] != "does_not_fit", row["memory"]
    assert row["throughput"]["pipeline_bubble"] == pytest.approx(11 / 128, rel=1e-3)
    assert tokens_per_gpu(row) == pytest.approx(BLOOM_TOKENS_PER_GPU, rel=0.15)


# --- 2. BLOOM's checkpoint, written by every node ([BLOOM] "Checkpoints", "Times") ------------------------------
# Published: "the whole checkpoint - 8 bytes for fp32 optim, 4+2 bytes for weights (fp32+bf16) - total 14 bytes
# per param: 176*10**9*14/2**30=2294.77GB" and `du -sh` 2.3T; "checkpoint saving ~40sec" on the cluster's GPFS.
# By hand: 2,294.77 GiB = 2.464e12 B. Product (spot row of aws p4de.24xlarge x 48, A100 80GB): spot.timing
# checkpoint_gb 2,467.3 (+0.1%: agree within class 7's 10%), written asynchronously by the 48 nodes, each to its own
# volume at 0.5 GB/s: 2,467.3 / (48 x 0.5) = 102.8 s = 1.713 min of background write (product 1.713), the loop
# waiting about 1 s for the copy to host memory. Against the logbook's ~40 s on GPFS the write is 2.6x slower, a
# storage assumption (a cloud volume a node), and short of the guides' 15 minutes: the checkpoint does not refuse
# the row. The row is still "spot unsuitable" for spanning 48 instances (rule 4, docs/cost-model.md), which a
# 384-GPU run on spot would indeed suffer (BigScience kept 4 spare nodes for failed ones).
@pytest.mark.django_db
def test_bloom_checkpoint_size_matches_the_logbook_and_is_written_by_48_nodes(bundled_catalog):
    rows = ranked(
        BLOOM, top=3, pricing_models=["spot"], instance_counts=[48], include_infeasible=True, gpus=[A100]
    )
    assert rows
    for row in rows:
        timing = row["spot"]["timing"]
        assert timing["checkpoint_gb"] * 1e9 == pytest.approx(2294.77 * 2**30, rel=0.10), timing
        assert timing["background_write_minutes"] * 60 == pytest.approx(
            timing["checkpoint_gb"] / (48 * 0.5), rel=0.01
        ), timing
        assert 40 / 60 <= timing["background_write_minutes"] < 15
        assert not any("checkpoint write" in reason for reason in row["reasons"]), row["reasons"]


# --- 3. BLOOM ranked: the stated plan kept, A100 hours at the published pace, first row by hand ----------------
# 366e9 tokens ([BLOOMP]) at 104.33 tokens/s/GPU x 384 = 40,062 tokens/s: 366e9 / 40,062 / 3,600 = 2,537.7 h
# (the README's "Estimated run time" at 150 TFLOPs: 120.8 days for 450B, i.e. 98 days for 366B, the same pace).
# Product top five (no deadline): nebius us-central1 gpu-b200-sxm 48 x 8 B200 on demand 527.47 h, then nebius
# H100 (1,183.55 h), nebius H200 (same hours, also in eu-west1, eu-north1), two GCP H100 types at 43.066150/h;
# every row TP 4 / PP 12 / ZeRO-1 on 384 GPUs in 48 instances. First row by hand: 44.00 USD/h x 48 x 527.468 h =
# 1,114,012.42 USD compute (product 1,114,012.92: the hours are rounded here); total 1,339,912.48 with setup
# 2,112.00 (one hour a node), storage 984.98 and the 20% rerun allowance 222,802.58 = 0.2 x compute.
# Defensible: B200 at 2.24x the H100 (1,183.55 / 527.47) is its dense BF16 ratio (2,250 / 989 TFLOPS = 2.27x),
# and 48 x 44.00 = 2,112 USD/h against 48 x 23.60 = 1,133 USD/h for the H100 still leaves it cheaper per token.
# A100 rows (the published hardware) are not in the top five; asked for (gpus=[A100]): aws p4de.24xlarge us-west-2
# (also in us-east-1) 48 x 8 at 27.447050/h, 2,913.41 h against 2,537.7 h at the published pace (+14.8%, inside
# 15%; p4de's 400 Gb/s EFA is the same 4 x 100 Gb/s the Jean Zay nodes had in Omni-Path, so like for like);
# by hand 27.447050 x 48 x 2,913.411 = 3,838,298.0 compute (product 3,838,297.97).
# Since 16-bit Hopper/Blackwell pretraining runs at the width ceiling (pipe26; 0.505 at BLOOM's d 14,336, was
# 0.40): nebius B200 424.37 h first (44.00 x 48 x 424.37 = 896,269 compute, product 896,264.79; total
# 1,078,468.92 with setup 2,112.00, storage 839.17 and reruns 179,252.96), then nebius H100 and H200 949.11 h
# and two GCP H100 rows 962.78 h: the same order, B200 over H100 still 2.24x; the A100 rows do not move.
@pytest.mark.django_db
def test_bloom_ranked_keeps_the_plan_and_first_row_costs_by_hand(bundled_catalog):
    rows = ranked(BLOOM)
    assert len(rows) == 5
    for row in rows:
        assert plan_of(row) == (384, 4, 12, 1, 1, 1), describe([row])
        assert row["instances"] * row["gpus_per_instance"] == 384 and row["interconnect"]["fabric"], describe(
            [row]
        )
    first = rows[0]
    assert float(first["cost_breakdown"]["compute"]) == pytest.approx(44.00 * 48 * first["hours"], rel=2e-5)
    check_costs_and_collapse(rows, BLOOM)


@pytest.mark.django_db
def test_bloom_a100_hours_match_the_published_pace(bundled_catalog):
    # stop 51 (a2net): GCP's A2 8-GPU types now carry their 100 Gb/s gVNIC fabric, so a2-ultragpu-8g 48 x 8 ranks
    # first among the A100 80GB rows (cheaper) at 3,008.6 h, on a quarter of the run's 4 x 100 Gb/s Omni-Path. Like
    # for like is the 400 Gb/s row, p4de (the comment above): it now reads 2,899.31 h (+14.2%; 2,913.41 h, +14.8%,
    # before this stop's engine changes). The test reads that row instead of the cheapest.
    rows = [row for row in ranked(BLOOM, gpus=[A100], top=10) if row["instance_type"] == "p4de.24xlarge"]
    assert rows, "no A100 80GB offer at 48 instances"
    assert rows[0]["hours"] == pytest.approx(366e9 / (BLOOM_TOKENS_PER_GPU * 384) / 3600, rel=0.15), describe(
        rows
    )


# --- 4. Llama 3.1 405B on 128 B200, TP 4 PP 8 CP 2 VP 8 ([MB2511] DGX-B200) --------------------------------------
# "LLAMA3.1_405B | 128 | FP8-CS (FP8-MX) | GBS 64 | MBS 1 | 8192 | FSDP 0 | TP 4 | PP 8 | CP 2 | VP 8 | EP 1 | GA 32 |
# 661 (624) tokens/s/GPU". DP = 128 / 64 = 2, accumulation 64 / 2 = 32, bubble 7 / (8 x 32) = 2.73%. 126 layers over
# 64 chunks: the recipe counts the embedding and the loss (as in x26b's H100 case, same model and recipe family).
# Product: 620.1 tokens/s/GPU (-6.2%): agree. Memory: peak 162.6 GiB on the 179.1 GiB B200, "tight": NVIDIA ran
# it on the B200's 180 GB: agree.
L405_B200 = megatron_spec("llama-3.1-405b", 128, 8192, 4, 8, cp=2, vp=8, global_batch=64, tokens=1e11)
L405_B200["parallelism"] |= {"account_for_embedding": True, "account_for_loss": True}


@pytest.mark.django_db
def test_llama31_405b_on_128_b200_fits_and_runs_within_15_percent(bundled_catalog):
    row = candidate(L405_B200, "b200")
    assert row["verdict"] != "does_not_fit", row["memory"]
    assert row["throughput"]["pipeline_bubble"] == pytest.approx(7 / (8 * 32), rel=1e-3)
    assert tokens_per_gpu(row) == pytest.approx(661, rel=0.15)


# Ranked (1e11 tokens): only B200 rows fit this plan (the H100's 80 GB does not hold a 405B stage at TP 4 / PP 8).
# Product: nebius us-central1 16 x 8 B200 349.98 h, 44.00 x 16 x 349.977 = 246,383.90 USD compute (by hand
# 246,383.8); aws p6-b200.48xlarge us-west-2 at 113.9328/h "also in us-east-2, us-east-1": the uncollapsed ranking
# has the same offer at the same price, hours and total (768,344.71) in those two regions: collapse correct.
# Hours at the published pace: 1e11 / (661 x 128) / 3,600 = 328.3 h; product 349.98 h (+6.6%).
@pytest.mark.django_db
def test_llama31_405b_b200_ranked_keeps_plan_collapses_regions_and_costs_by_hand(bundled_catalog):
    rows = ranked(L405_B200)
    assert rows
    for row in rows:
        assert plan_of(row) == (128, 4, 8, 8, 2, 1), describe([row])
        assert row["gpu"] == "b200"
        assert row["hours"] == pytest.approx(1e11 / (661 * 128) / 3600, rel=0.15), describe([row])
    check_costs_and_collapse(rows, L405_B200)
    aws = [row for row in rows if row["provider"] == "aws"]
    assert aws and set(aws[0]["also_in"]) == {"us-east-2", "us-east-1"}, describe(aws)


# --- 5. NeMo 24.07 on H100: Llama 2 13B (PP 4 VP 10), Llama 2 70B (TP 4 PP 4 VP 20), Llama 3 70B (CP 2) ---------
# [NEMO2407]: "LLAMA2-13B | 16 | 128 | 1 | 4096 | 1 | 4 | 1 | 10 | 8646"; "LLAMA2-70B | 64 | 128 | 1 | 4096 | 4 | 4 |
# 1 | 20 | 1707"; "LLAMA3-70B | 64 | 128 | 1 | 8192 | 4 | 4 | 2 | 5 | 1533" (tokens/s/GPU, FP8).
# Bubbles by hand: 13B DP 4, 32 micro-batches, 3 / (10 x 32) = 0.94%; 2-70B DP 4, 32, 3 / (20 x 32) = 0.47%;
# 3-70B DP 2, 64, 3 / (5 x 64) = 0.94%.
# Product: 9,434.2 (+9.1%), 1,564.1 (-8.4%), 1,476.6 (-3.7%): agree; all fit the 80 GB card (51.9, 53.9, 57.2 GiB).
NEMO_H100 = {
    "llama2-13b": (megatron_spec("llama-2-13b", 16, 4096, 1, 4, vp=10, global_batch=128), 8646, 3 / 320),
    "llama2-70b": (megatron_spec("llama-2-70b", 64, 4096, 4, 4, vp=20, global_batch=128), 1707, 3 / 640),
    "llama3-70b-cp2": (
        megatron_spec("llama-3-70b", 64, 8192, 4, 4, cp=2, vp=5, global_batch=128),
        1533,
        3 / 320,
    ),
}


@pytest.mark.parametrize("name", sorted(NEMO_H100))
@pytest.mark.django_db
def test_nemo_2407_h100_rows_within_15_percent(name, bundled_catalog):
    spec, published, bubble = NEMO_H100[name]
    row = candidate(spec, H100)
    assert row["verdict"] != "does_not_fit", row["memory"]
    assert row["throughput"]["pipeline_bubble"] == pytest.approx(bubble, rel=1e-3)
    assert tokens_per_gpu(row) == pytest.approx(published, rel=0.15)


# Llama 2 70B ranked at NeMo's plan, 1e11 tokens. Product top five: nebius B200 8 x 8 125.84 h 53,653.36; nebius
# H100 eu-north1 277.49 h; nebius H200 us-central1 "also in eu-west1, eu-north1" (75,036.75 in each, uncollapsed);
# GCP a3-megagpu-8g europe-west1 and us-east5 at different prices (own rows: right). Every row TP 4 / PP 4 / VP 20.
# By hand, first row: 44.00 x 8 x 125.84 = 44,295.7 compute. H100 hours at the published pace: 1e11 / (1,707 x 64)
# / 3,600 = 254.3 h; product 277.49 h (+9.1%).
L2_70B_RUN = NEMO_H100["llama2-70b"][0] | {"training_tokens": 1e11}


@pytest.mark.django_db
def test_llama2_70b_nemo_plan_ranked_keeps_plan_and_collapses_h200_regions(bundled_catalog):
    rows = ranked(L2_70B_RUN)
    assert len(rows) == 5
    for row in rows:
        assert plan_of(row) == (64, 4, 4, 20, 1, 1), describe([row])
    check_costs_and_collapse(rows, L2_70B_RUN)
    h100 = [row for row in rows if row["gpu"] == H100]
    assert h100 and h100[0]["hours"] == pytest.approx(1e11 / (1707 * 64) / 3600, rel=0.15), describe(h100)
    h200 = [row for row in rows if row["gpu"] == "h200-sxm-141gb" and row["provider"] == "nebius"]
    assert h200 and len(h200[0]["also_in"]) == 2, describe(h200)


# --- 6. Llama 3 8B on 8 GB200 ([MB2511] DGX-GB200) --------------------------------------------------------------
# "LLAMA3_8B | 8 | FP8-CS (FP8-MX) | 128 | 2 | 8192 | FSDP 0 | TP 1 | PP 1 | CP 1 | n/a | 1 | GA 8 | 31508 (29789)".
# Product: 31,881.9 tokens/s/GPU (+1.2%): agree.
L8_GB200 = megatron_spec("llama-3.1-8b", 8, 8192, 1, 1, micro_batch=2, global_batch=128, tokens=1e11)


@pytest.mark.django_db
def test_llama3_8b_on_8_gb200_within_15_percent(bundled_catalog):
    row = candidate(L8_GB200, "gb200")
    assert row["verdict"] != "does_not_fit"
    assert tokens_per_gpu(row) == pytest.approx(31508, rel=0.15)


# Ranked (same plan, 1e11 tokens): the top five are 8 x B200 spot rows (GB200 is rented by the NVL72 rack, not in
# 8-GPU instances: none in the catalog's 8-GPU offers). The three aws us-east-2 p6-b200 spot rows at 21.188307,
# 21.765569 and 22.601663 USD/h are three zones (use2-az3, az2, az1), each row carrying its zone: labelled, and
# rightly not collapsed (different prices); the aws us-east-1 row (use1-az6) is "also in us-east-1/use1-atl2-az1"
# at the same 21.049877. Hours 105.37 on B200 against the B200's published 30,624 tokens/s/GPU (x26b's row):
# 1e11 / (30,624 x 8) / 3,600 = 113.4 h (-7.1%). First row by hand: verda 8B200.240V spot 13.712851 x 1 x
# 105.37 = 1,444.93 USD compute.
@pytest.mark.django_db
def test_llama3_8b_ranked_spot_rows_carry_their_zone_and_collapse_only_same_prices(bundled_catalog):
    rows = ranked(L8_GB200)
    assert rows
    check_costs_and_collapse(rows, L8_GB200)
    seen = {}
    for row in rows:
        assert plan_of(row)[:3] == (8, 1, 1), describe([row])
        key = (row["provider"], row["region"], row["instance_type"], row["pricing_model"])
        if key in seen:  # two rows of one offer in one region must say which zone each is
            assert row["zone"] and seen[key] and row["zone"] != seen[key], describe([row])
        seen[key] = row["zone"]
        if row["gpu"] == "b200":
            assert row["hours"] == pytest.approx(1e11 / (30624 * 8) / 3600, rel=0.15)


# --- 7. Llama 3 70B on 64 GB200 with Megatron FSDP and activation offload ([MB2511], [MBCFG]) ------------------
# "LLAMA3_70B | 64 | FP8-CS | 256 | 2 | 8192 | FSDP 1 | TP 1 | PP 1 | CP 1 | VP 1 | EP 1 | GA 2 | 4312". Product
# at that plan: 3,803.5 tokens/s/GPU (-11.8%): agree on speed.
L70_GB200 = megatron_spec("llama-3-70b", 64, 8192, 1, 1, micro_batch=2, global_batch=256)
L70_GB200["parallelism"]["zero_stage"] = "fsdp"


@pytest.mark.django_db
def test_llama3_70b_fsdp_on_64_gb200_within_15_percent(bundled_catalog):
    row = candidate(L70_GB200, "gb200")
    assert row["plan"]["zero_stage"] == 3
    assert tokens_per_gpu(row) == pytest.approx(4312, rel=0.15)


# Memory: the product says does_not_fit (peak 395.6 GiB: activations 357.8 GiB = 80 layers x 16,384 tokens x
# 286,720 B). NVIDIA's recipe [MBCFG] runs it with cpu_offloading_num_layers=40, the activations of 40 of the 80
# layers held in the Grace CPU's memory over NVLink-C2C. The spec now states it (pipe26:
# parallelism.activation_offload_layers, Megatron-Core's limits: no pipeline, no full recomputation).
L70_GB200_OFFLOAD = copy.deepcopy(L70_GB200)
L70_GB200_OFFLOAD["parallelism"]["activation_offload_layers"] = 40
# The recipe's model is Megatron-Bridge's Llama3ModelProvider70B, whose base states the fused SwiGLU
# (src/megatron/bridge/models/llama/llama_provider.py @2afd2d34, class Llama3ModelProvider: "# Fusions" /
# "bias_activation_fusion: bool = True"); Megatron-Core's SwiGLUFunction then saves only its input
# (megatron/core/fusions/fused_bias_swiglu.py @d98e8a64: "ctx.save_for_backward(input_for_backward)") and
# recomputes SiLU in backward (mla26: fused_swiglu). Memory only: the speed cases above are unchanged.
L70_GB200_FUSED = copy.deepcopy(L70_GB200_OFFLOAD) | {"fused_swiglu": True}
# The recipe's FP8 is get_precision_config("fp8_cs") (scripts/performance/utils/precision.py @00b7660b, lines 29-33),
# i.e. bf16_with_fp8_current_scaling_mixed(), which sets "cfg.fp8_param_gather = True"
# (src/megatron/bridge/training/mixed_precision.py @00b7660b line 289; lines 84-85 set fp8_param from it): the
# block linears' weights are kept in fp8 (Megatron-Core fp8_param). Stated as fp8_weights (e26a).
L70_GB200_RECIPE = L70_GB200_FUSED | {"fp8_weights": True}


# The recipe's offload stated: 40 x 16,384 x 286,720 B = 175.0 GiB leave the GPU for the host (357.8 -> 182.8 GiB
# of activations; the logits stay), the speed is unchanged (the copies are not costed: NVLink-C2C).
@pytest.mark.django_db
def test_llama3_70b_gb200_recipe_offload_moves_half_the_layers_to_grace(bundled_catalog):
    kept, offloaded = candidate(L70_GB200, "gb200"), candidate(L70_GB200_OFFLOAD, "gb200")
    moved_gib = 40 * 16384 * 286720 / 2**30
    assert moved_gib == pytest.approx(175.0)
    assert kept["memory"]["activations_gib"] - offloaded["memory"]["activations_gib"] == pytest.approx(
        moved_gib, rel=1e-4
    )
    assert offloaded["memory"]["host_ram_gib"] > 0
    assert tokens_per_gpu(offloaded) == pytest.approx(tokens_per_gpu(kept), rel=1e-9)


# Was a strict xfail: "the product rules it out (peak 395.6 GiB ...)"; after pipe26 (activation_offload_layers 40)
# 211.9 GiB, after mla26 (fused_swiglu) 175.1 GiB against the 173.2 GiB card (+1.1%, does_not_fit; "the 1.9 GiB left
# is not located"). Now 173.1 GiB, 'tight' (e26a): the 1.9 GiB was the weights. The recipe's fp8_cs precision keeps
# the block linears' weights in fp8 (fp8_param_gather, L70_GB200_RECIPE above), which the spec did not state:
# weights 4.01 -> 2.07 GiB a GPU. Re-judged at fix41 (audit [SMI], test_outside_audit_stop41.py): the 173.2 GiB was
# the 186 GB rack share, not the card; the catalog now carries the driver's 189,471 MiB (185.03 GiB, usable 184.43),
# so 173.1 GiB is 'tight' with 11.4 GiB to spare, and the plan without fp8_weights (175.1 GiB) fits as well: the
# weights' 1.9 GiB was not what decided the fit.
@pytest.mark.django_db
def test_llama3_70b_fsdp_on_64_gb200_plan_fits(bundled_catalog):
    row = candidate(L70_GB200_RECIPE, "gb200")
    assert row["verdict"] != "does_not_fit"
    assert row["memory"]["total_per_gpu_gib"] == pytest.approx(173.08, abs=0.05)
    assert candidate(L70_GB200_FUSED, "gb200")["verdict"] != "does_not_fit"
    assert candidate(L70_GB200_FUSED, "gb200")["memory"]["weights_gib"] - row["memory"]["weights_gib"] == (
        pytest.approx(1.945, abs=0.01)
    )


# --- 8. Qwen3-30B-A3B on 8 GB200 at micro-batch 4 ([MB2511] DGX-GB200) ------------------------------------------
# "Qwen3_30B_a3B | 8 | FP8-MX | 512 | 4 | 4096 | FSDP 0 | TP 1 | PP 1 | CP 1 | VP 1 | EP 8 | GA 16 | 23766 | 547".
# The same table's DGX-B200 row (micro-batch 1, GA 64) is 9,299: GB200 at micro-batch 4 is 2.56x the B200 at 1,
# where the GB200's dense peak is 1.11x the B200's (2.5 / 2.25 PFLOPS FP8). Bigger micro-batches feed each of the
# 128 experts 4x the tokens a step: larger grouped GEMMs, fewer launches per token.
# Product: 15,994.6 tokens/s/GPU (-32.7%) and 16,988.7 on the B200 row (+83%, x26b's strict xfail): a ratio of 0.94.
# Its MoE cost (moe26) is fixed per routed element, so the achieved share of the peak (0.10-0.11) does not move
# with the micro-batch.
Q3_GB200 = megatron_spec("qwen3-30b-a3b", 8, 4096, 1, 1, ep=8, micro_batch=4, global_batch=512)
# b200x: the recipe's dispatcher, HybridEP (NVIDIA-NeMo/Megatron-Bridge @717c62de401bce92e913fd1c66c03f4e17bff265
# scripts/performance/configs/qwen3/workload_base_configs.py lines 193-200); the B200 row's recipe (lines 211-219)
# keeps the alltoall dispatcher.
Q3_GB200["parallelism"]["expert_dispatch"] = "hybridep"
Q3_B200 = megatron_spec("qwen3-30b-a3b", 8, 4096, 1, 1, ep=8, micro_batch=1, global_batch=512)


# Was a strict xfail at 15,995 (-32.7%). After moe27 (a fixed cost per MoE layer and micro-batch beside the
# routed bytes, mfu.moe_efficiency_factor): 23,094 (-2.8%). Not an independent check: moe27 chose this same
# Megatron-Bridge row as one of its four fit points before this round picked it.
@pytest.mark.django_db
def test_qwen3_moe_on_8_gb200_at_micro_batch_4_within_15_percent(bundled_catalog):
    assert tokens_per_gpu(candidate(Q3_GB200, "gb200")) == pytest.approx(23766, rel=0.15)


# Was a strict xfail at 0.94x. After moe27: 23,094 / 9,605 = 2.40x against 2.56x (-6%); the B200 row
# (+3.3%) is an outside case moe27 did not fit, the GB200 row is one of its fit points (above).
@pytest.mark.django_db
def test_qwen3_moe_micro_batch_gain_gb200_over_b200(bundled_catalog):
    gb200, b200 = candidate(Q3_GB200, "gb200"), candidate(Q3_B200, "b200")
    assert tokens_per_gpu(gb200) / tokens_per_gpu(b200) == pytest.approx(23766 / 9299, rel=0.15)


# --- 9. The documented way to see every region's row ------------------------------------------------------------
# docs/cost-model.md ("Identical rows collapse"): "`collapse_identical: false` keeps every region's row". A buyer
# comparing regions (data residency, quota) asks for it through the API or `manage.py recommend`; the service's
# option parser (procurement/services/recommendations.py RANKING_OPTION_FIELDS) does not list it and answers
# "collapse_identical: unknown option". RankingOptions has the field (used directly above).
# Was a strict xfail (CostInputError "collapse_identical: unknown option"); the option now goes through the
# service, the API (RecommendationRequest) and `manage.py recommend --every-region`.
def test_collapse_identical_false_is_accepted_by_the_service():
    options = ranking_options_parse({"collapse_identical": False})
    assert options.collapse_identical is False
