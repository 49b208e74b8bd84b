"""audhd (stop 52): outside audit of hostdoubt (configurations.host_unknown / ranked_order's fewest-doubts baseline), as
a platform engineer who buys GPU capacity for production LLM serving on Vast, RunPod, Lambda, AWS, GCP and neoclouds.
The question: is a row whose host figures the catalog does not know worth demoting below a dearer known host, and
does the product's "unknown" mean what a buyer would read it as?

Sources (real provider data, the captured catalogs this product ships; tests/ grepped for each model + provider pair:
no outside test ranks Mistral-7B on an RTX 4090, Llama 3.1 405B FP8 on 8 x H100, Llama 3.1 8B at 16 streams with no
card, or 70B ZeRO-3 optimizer offload on 8 x H100):

  [LIUM]  pricing/data/skypilot/lium/vms.csv (SkyPilot catalog @04a03aee, bundled 2026-12-04, PROVENANCE.md line 150)
          lines 22-24: "RTX4090_1x,RTX4090,1.0,12.0,63.0,0.35,RO", "RTX4090_1x,RTX4090,1.0,4.0,29.0,0.58,RU",
          "RTX4090_1x,RTX4090,1.0,24.0,63.0,0.28,UA" (vCPUs, RAM GiB, USD/h, region). Every region's host is known;
          they disagree, so pricing/providers/skypilot_csv.py with_contradicting_hosts_unknown stores None for all.
  [HYPS]  pricing/data/skypilot/hyperstack/vms.csv lines 12-13: "n3-H100-SXM5x8,...,8,192,1800.0" and
          "n3-H100-SXM5x8,...,8,192,960.0" (CANADA-1 / US-1): the same contradiction rule makes both unknown.
  [RPOD]  pricing/data/skypilot/runpod/vms.v7.csv line 1102: "1x_RTX4090_SECURE,RTX4090,1.0,16.0,24.0,...,0.69".
  [VASTM] Vast's own marketplace offers (the fields a buyer filters on), as captured in
          tests/pricing/providers/test_vast_market.py: 1 x RTX 4090 "cpu_ram 64414 MB" = 62.90 GiB, 16 effective
          vCPUs (line 47); 8 x H100 SXM memory_gib 503.23 (line 66), 63 GiB a GPU.
  Serving host rule (the product's, procurement/sizing/host.py serving_host_ram, which cites vLLM @0a1ee72e
  weight_utils.py safetensors_weights_iterator and TensorRT-LLM @f20d99bd runtimeUtils.cpp loadEngine): a 7-8B bf16
  process holds min(5 GB, params x 2 B) = 4.66 GiB + 3.5 GiB runtime = 8.2 GiB, and 4 vCPUs a GPU.
  [L405]  Llama 3.1 405B FP8 served on one 8 x H100 80GB node (meta-llama/Llama-3.1-405B-Instruct-FP8 model card:
          the FP8 checkpoint "to run on a single node of 8xH100"); TP 8 stated.
Judgement bar (no speed or memory figure is compared here): a row an expert would sign first must be first, and a
doubt must say something true about the row. Misses are strict xfails, UNEXPLAINED per /work/notes/explain-rules.md
(the causes are located in the product's code, so they are fixes, not EXPLAINED benchmark artefacts).
"""

from __future__ import annotations

import math

import pandas as pd
import pytest

from procurement.ranking import RankingOptions, rank_workload
from procurement.sizing import parse_workload_spec
from tests.procurement.outside.test_outside_recommendations_x26b import ranked
from tests.procurement.test_ranking import GPUS, NOW, _offer

UNKNOWN = "host's figures are not known"
RTX4090, H100 = "rtx-4090", "h100-sxm5-80gb"

# serving rule for a 7-8B bf16 process, by hand (host.py serving_host_ram, "compiled" stack): min(5e9, 7.24e9 x 2) B
SERVE_7B_RAM_GIB = 5e9 / 2**30 + 3.5  # 8.157 GiB
SERVE_VCPUS_PER_GPU = 4
# [LIUM] lines 22-24: (vCPUs, RAM GiB) of RTX4090_1x in RO, RU, UA
LIUM_4090_HOSTS = [(12.0, 63.0), (4.0, 29.0), (24.0, 63.0)]
# [HYPS] lines 12-13: n3-H100-SXM5x8 RAM GiB in CANADA-1 and US-1
HYPS_H100X8_RAM_GIB = (1800.0, 960.0)

MISTRAL_4090 = {
    "task": "inference",
    "model": {"preset": "mistral-7b"},
    "precision": "bf16",
    "inference": {"concurrency": 1, "context_len": 1024, "output_tokens": 256},
}
LLAMA8B_16 = {
    "task": "inference",
    "model": {"preset": "llama-3.1-8b"},
    "precision": "bf16",
    "inference": {"concurrency": 16, "context_len": 2048, "output_tokens": 256},
}
L405_FP8 = {
    "task": "inference",
    "model": {"preset": "llama-3.1-405b"},
    "precision": "fp8",
    "parallelism": {"gpus": 8, "tensor_parallel": 8},
    "inference": {"concurrency": 8, "context_len": 2048, "output_tokens": 256},
}
L70_TP4 = {
    "task": "inference",
    "model": {"preset": "llama-3.1-70b"},
    "precision": "bf16",
    "parallelism": {"gpus": 4, "tensor_parallel": 4},
    "inference": {"concurrency": 8, "context_len": 2048, "output_tokens": 256},
}
SDXL_SERVE = {"task": "inference", "model": {"preset": "sdxl"}, "precision": "fp16"}
T70_OFFLOAD = {
    "task": "full_finetune",
    "model": {"preset": "llama-3.1-70b"},
    "precision": "bf16",
    "seq_len": 4096,
    "micro_batch_size": 1,
    "gradient_checkpointing": "full",
    "training_tokens": 2e8,
    "parallelism": {"gpus": 8, "zero_stage": 3, "offload": "optimizer"},
}


def has(row: dict, text: str) -> bool:
    return any(text in reason for reason in row["reasons"])


def key(row: dict) -> tuple:
    return (row["provider"], row["region"], row["instance_type"], row["total_cost"])


# --- [LIUM] a host the catalog knows in every region, read as unknown ---------------------------------------------
def test_lium_4090_hosts_all_meet_the_serving_rule():
    """By hand: the smallest lium RTX4090_1x host (RU: 4 vCPUs, 29 GiB) meets the 8.2 GiB / 4 vCPU rule; so do RO, UA."""
    assert all(v >= SERVE_VCPUS_PER_GPU and ram >= SERVE_7B_RAM_GIB for v, ram in LIUM_4090_HOSTS)
    assert math.isclose(SERVE_7B_RAM_GIB, 8.157, abs_tol=0.001)


# FIXED (fix51hd): pricing/providers/skypilot_csv.py with_contradicting_hosts_at_smallest keeps the smallest listed
# figures (RU's 4 vCPUs / 29 GiB), marked a lower bound; they meet the rule, so no doubt: production row 1 is lium UA
# RTX4090_1x $213.26 (was runpod $512.56: -58.4%), the same row development leads with. The reason kept for the record.
R_LIUM = (
    "UNEXPLAINED (audhd): [LIUM] Mistral-7B bf16, one stream, production, RTX 4090 only. Row 1 runpod "
    "1x_RTX4090_SECURE $512.56 (16 vCPUs, 24 GiB), row 2 lium UA RTX4090_1x $213.26 'host's figures are not known': "
    "+140.3% for the same card. The lium host is known in all three regions ([LIUM] lines 22-24: 12/63, 4/29, 24/63) "
    "and the smallest meets the 8.2 GiB / 4 vCPU rule; it is 'unknown' only because the regions disagree "
    "(skypilot_csv.with_contradicting_hosts_unknown stores None), and host_unknown now doubts that None. aud51r's "
    "LLMFIT +41% (lium RTX4090_1x -> RTX3090_1x) is the same artefact. Fix: keep the smallest figure of the disagreeing "
    "rows as a known lower bound (or check the rule per region), so a host every region's figure clears is no doubt."
)


@pytest.mark.django_db
def test_lium_4090_is_first_when_every_region_meets_the_rule(bundled_catalog):
    production = ranked(MISTRAL_4090, 3, gpus=[RTX4090])
    assert production[0]["provider"] == "lium", [key(r) for r in production]


@pytest.mark.django_db
def test_lium_4090_cheaper_row_is_shown_right_below_with_its_reason(bundled_catalog):
    """What the change promised held (audhd: the cheaper row was row 2, with the reason, never dropped; development
    kept it first, $213.26). After fix51hd (R_LIUM FIXED) it is row 1 in production as in development, no longer
    'unknown', and it says its host figures are the smallest of the provider's listed hosts (a lower bound: RU's
    4 vCPUs / 29 GiB, [LIUM] line 23), the runpod row ($512.56, +140.3% by hand: 512.56 / 213.26 - 1) below it."""
    production = ranked(MISTRAL_4090, 5, gpus=[RTX4090])
    development = ranked(MISTRAL_4090, 1, gpus=[RTX4090], deployment="development")
    assert key(production[0]) == key(development[0]) == ("lium", "UA", "RTX4090_1x", "213.26")
    assert not has(production[0], UNKNOWN) and has(
        production[0], "the smallest of the provider's listed hosts"
    )
    runpod = next(r for r in production if r["provider"] == "runpod")
    premium = float(runpod["total_cost"]) / float(development[0]["total_cost"]) - 1
    assert 1.35 < premium < 1.45  # +140.3%


# --- [HYPS] Hyperstack 8 x H100: 960 or 1,800 GiB, both far over a serving rule -----------------------------------
# FIXED (fix51hd): the same lower bound (960 GiB, 192 vCPUs) meets the 65 GiB serving rule 14.7x: no doubt.
R_HYPS = (
    "UNEXPLAINED (audhd): [L405]/[HYPS] Llama 3.1 405B FP8 TP 8, production, H100 SXM only: hyperstack "
    "n3-H100-SXM5x8 (960 GiB in US-1, 1,800 in CANADA-1, 192 vCPUs) carries 'host's figures are not known' and drops "
    "out of the top 5 (development: row 3, $14,260.31), behind nebius / runpod / jarvislabs / lambda at $17,472-23,790. "
    "A serving process of 405B FP8 holds min(5 GB, ...) = 4.66 GiB + 3.5 GiB, 8 a host = 65 GiB: 960 GiB is 14.7x it. "
    "Same cause as R_LIUM (contradiction -> None -> doubt); same fix."
)


@pytest.mark.django_db
def test_hyperstack_h100x8_host_is_no_doubt_for_405b_fp8_serving(bundled_catalog):
    production = ranked(L405_FP8, 10, gpus=[H100])
    hyps = [r for r in production if r["provider"] == "hyperstack"]
    assert hyps and not any(has(r, UNKNOWN) for r in hyps), [key(r) for r in production]


# --- [VASTM] a host known to be half the rule ranks above an unlisted one -----------------------------------------
# FIXED (fix51hd): configurations.host_severe counts a known host short of its RAM rule by more than 10%
# (HOST_SHORT_TOLERANCE), or of both rules, as two host doubts: cudo 1x2v4gb (51.0% short and 2 of 4 vCPUs) moves from
# row 2 to row 10, after vast 1x-RTX_6000Ada (row 4, one doubt); the 1.9%-short cudo 1x4v8gb stays one doubt (rows
# 5-6). The test reads 12 rows (was 6) so the demoted row is in the answer it reads.
R_SHORT = (
    "UNEXPLAINED (audhd): Llama 3.1 8B bf16, 16 streams, production, no card named: row 2 cudo "
    "ice-lake-a40-graphics_1x2v4gb $279.30 (4 GiB of 8.2, 51.0% short, AND 2 of 4 vCPUs: both rules missed, one "
    "doubt), row 4 vast 1x-RTX_6000Ada $279.45 (host unlisted). A 4 GiB host cannot hold one 5 GB shard plus the "
    "runtime: it fails at load, certainly; a Vast host of a data-center-class card is unlisted, and the marketplace's "
    "own figures for such offers ([VASTM]: 62.90 GiB / 16 vCPUs for one RTX 4090, 63 GiB a GPU on 8 x H100) clear the "
    "rule 4-8x. 'Like for like' ranks the certain failure above the likely pass on 15 cents. Fix: order host doubts "
    "by severity (known short by more than a tolerance, e.g. 10%, or both rules missed, after an unknown host), or "
    "count a known host that misses both rules as two."
)


@pytest.mark.django_db
def test_unknown_host_ranks_above_a_host_known_half_short(bundled_catalog):
    rows = ranked(LLAMA8B_16, 12)
    position = {r["instance_type"]: i for i, r in enumerate(rows)}
    assert position["1x-RTX_6000Ada-32-65536"] < position["ice-lake-a40-graphics_1x2v4gb"], [
        key(r) for r in rows
    ]


# --- the fewest-doubts baseline: every row shares the doubt (--provider vast) -------------------------------------
# FIXED (fix51hd): with every fitting row's host unknown (Configurations.host_unknown_everywhere) no row says
# "ranked below"; row 1 says once "no offer here has a known host" (rank.rank_workload). Order unchanged.
R_BASE = (
    "UNEXPLAINED (audhd): Llama 3.1 70B bf16 TP 4, production, --provider vast: every host is unknown, the baseline "
    "makes the doubt order nothing (right), and row 1 (vast 4x-H100_SXM $6,273.15) still says 'one host doubt ... "
    "ranked below the first row whose host is known and meets it' while being row 1, with no such row in the answer "
    "(every row of the top 5 carries the same sentence). The order is right; the words are false. Fix: when the baseline removes a doubt all rows share, say so "
    "once ('no offer here has a known host: the serving host rule is checked on none') and drop 'ranked below' from "
    "row 1 (rows.reasons_for reads configs.host_unknown, not the baselined count)."
)


@pytest.mark.django_db
def test_row_one_does_not_claim_it_was_ranked_below_another(bundled_catalog):
    rows = ranked(L70_TP4, 3, providers=["vast"])
    assert not any("ranked below" in reason for reason in rows[0]["reasons"]), rows[0]["reasons"]
    said = [sum("no offer here has a known host" in reason for reason in r["reasons"]) for r in rows]
    assert said == [1, 0, 0]  # once, on row 1


@pytest.mark.django_db
def test_baseline_keeps_the_host_warning_on_every_row(bundled_catalog):
    """The baseline hides nothing from the rows themselves: each vast row keeps 'host RAM and vCPUs unknown for this
    offer: not checked' among its warnings; the doubt is only taken out of the order, not out of the answer."""
    rows = ranked(L70_TP4, 5, providers=["vast"])
    assert all(any("unknown for this offer" in w for w in r["warnings"]) for r in rows)


# --- [VASTM] the NIM row (aud51x): what the unknown host would have to be to miss the rule ----------------------
def test_vast_h100_marketplace_host_clears_the_2gpu_serving_rule_7x():
    """hostdoubt moved NIM 70B fp8 TP 2 from vast 2x-H100_SXM $2,769.15 to runpod 2x_H100_SECURE $3,535.65 (+27.7%,
    and an H100 PCIe for an SXM). The rule it guards: 2 processes x (4.66 + 3.5) = 16.3 GiB. Vast's own 8 x H100 SXM
    offer ([VASTM]) carries 503.23 GiB, 62.9 GiB a GPU: a 2-GPU share is 125.8 GiB, 7.7x the rule; even 1 / 4 of the
    smallest share would clear it. The doubt is one a buyer clears with Vast's cpu_ram filter, not one worth $766 a
    month; judged in the NOTES entry (the answer should lead with the cheaper row and its caveat, or size the doubt)."""
    rule_gib = 2 * SERVE_7B_RAM_GIB
    share_gib = 503.23 * 2 / 8
    assert math.isclose(rule_gib, 16.3, abs_tol=0.05) and share_gib / rule_gib > 7.5
    assert math.isclose(3535.65 / 2769.15 - 1, 0.277, abs_tol=0.001)


# --- controls: what the change must not move --------------------------------------------------------------------
@pytest.mark.django_db
def test_control_sdxl_serving_ranks_the_same_in_production_and_development(bundled_catalog):
    """Image models are outside host_unknown (spec.model.is_image): SDXL serving's top 5 is the same either way (row 1
    verda 1V100.6V $106.96; lium RTX4090_1x row 3, unknown host, not demoted). Consistent with aud44r (no host RAM
    rule is a doubt for image pipelines: host.serving_host_ram returns None for them)."""
    production = [key(r) for r in ranked(SDXL_SERVE, 5)]
    assert production == [key(r) for r in ranked(SDXL_SERVE, 5, deployment="development")]


@pytest.mark.django_db
def test_control_70b_zero3_offload_training_is_unmoved(bundled_catalog):
    """audhd: training was outside host_unknown; row 1 vast 8x-H100_SXM $284.82 (unknown host), row 2 hyperstack
    n3-H100-SXM5x8 US-1 $328.24 (unknown by contradiction). fix51hd (FIX LIST item 4) moved it on purpose: a plan that
    offloads to the CPU has a host RAM limit (1,557.1 GiB here), so an unknown host, or a lower bound under the limit
    (hyperstack's smallest listed host, 960 GiB; CANADA-1 lists 1,800), is one host doubt in either deployment. Row 1
    is aws p5.48xlarge $801.03 (2,048 GiB, known), +181.2% by hand (801.03 / 284.82 - 1); vast and hyperstack are
    rows 2 and 3 with the RAM needed stated. Production and development still agree."""
    production = ranked(T70_OFFLOAD, 3, gpus=[H100])
    keys = [key(r) for r in production]
    assert keys == [key(r) for r in ranked(T70_OFFLOAD, 3, gpus=[H100], deployment="development")]
    # fix51e2 (stop 52): ranked offers pay the offload CPU step on their own vCPUs, so vast (unknown vCPUs, the
    # assumed 6 cores) and hyperstack US-1 (its listed vCPUs) swap at rows 2 and 3; both carry the stated RAM need.
    assert keys[0][:3] == ("aws", "us-west-2", "p5.48xlarge")
    assert sorted(k[0] for k in keys[1:]) == ["hyperstack", "vast"]
    assert ("hyperstack", "US-1") in [k[:2] for k in keys[1:]]
    vast = next(r for r in production[1:] if r["provider"] == "vast")
    assert any("needs 1557.1 GiB of host RAM" in w for w in vast["warnings"])
    assert math.isclose(801.03 / 284.82 - 1, 1.812, abs_tol=0.001)


def test_control_offload_needs_more_than_hyperstack_us1_holds():
    """The product's own limit (configurations.host_ram_blocking: RAM >= GPU memory + offloaded state) on the two
    figures [HYPS] gives n3-H100-SXM5x8: 960 GiB (US-1) is infeasible for 70B ZeRO-3 optimizer offload, 1,800 GiB
    (CANADA-1) is not. So the unknown-by-contradiction US-1 row ranked 2nd above is one its own catalog line rules
    out, and training, where an unknown host matters most (a limit, not a rule of thumb), is the workload the
    change leaves ranked by cost."""
    spec = parse_workload_spec(T70_OFFLOAD | {"name": "t70"})
    frame = pd.DataFrame(
        [
            _offer("p", f"ram{int(ram)}", H100, 8, "on_demand", 20.0, vcpus=192, ram=ram)
            for ram in HYPS_H100X8_RAM_GIB
        ]
    )
    rows = rank_workload(spec, frame, GPUS, RankingOptions(top=None), now=NOW).results
    assert [r["instance_type"] for r in rows] == ["ram1800"]
