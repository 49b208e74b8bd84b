"""The host doubt graded and its edges (fix51hd, audhd's FIX LIST, stop 52): a known host far short of its RAM rule, or
short of both rules, ranks after an unknown host; a lower bound (the smallest of the provider's listed hosts) is
checked like a known host; a plan that offloads to the CPU doubts an unknown host; a doubt every row shares is said
once and claims no rank below a known host.

Serving Llama 3.1 8B bf16 on one A100 (tests/procurement/test_ranking_host_doubt.py's module doc): the serving host
rule is min(5 GB, 8.03e9 x 2 B) = 4.657 GiB + 3.5 GiB runtime = 8.157 GiB a process, and 4 vCPUs a GPU."""

import math

import pandas as pd
import pytest

from procurement.ranking.configurations import HOST_SHORT_TOLERANCE
from procurement.ranking.rows import NO_KNOWN_HOST_TEXT
from procurement.sizing import parse_workload_spec
from tests.procurement.test_ranking import QLORA_8B, _offer
from tests.procurement.test_ranking_host_doubt import A100, NAN, SERVE_8B, names, order

SERVE_RULE_GIB = 5e9 / 2**30 + 3.5  # 8.157 GiB, by hand
LOWER_BOUND_TEXT = "the smallest of the provider's listed hosts"


def frame(hosts: dict[str, tuple], lower_bound: frozenset = frozenset()) -> pd.DataFrame:
    """One 1 x A100 offer per name: (price, vCPUs, RAM GiB)."""
    rows = []
    for name, (price, vcpus, ram) in hosts.items():
        row = _offer("p", name, A100, 1, "on_demand", price, vcpus=vcpus, ram=ram)
        row["host_figures_lower_bound"] = name in lower_bound
        rows.append(row)
    return pd.DataFrame(rows)


def reasons(row) -> str:
    return " | ".join(row["reasons"])


def test_tolerance_by_hand():
    """10% of 8.157 GiB is 0.816 GiB: 7.4 GiB is 9.3% short (one doubt), 7.3 GiB 10.5% short (two)."""
    assert HOST_SHORT_TOLERANCE == 0.10
    assert math.isclose((SERVE_RULE_GIB - 7.4) / SERVE_RULE_GIB, 0.0928, abs_tol=0.0005)
    assert math.isclose((SERVE_RULE_GIB - 7.3) / SERVE_RULE_GIB, 0.1051, abs_tol=0.0005)


def test_a_host_half_short_ranks_after_an_unknown_host():
    """audhd R_SHORT: 4 GiB of 8.157 (51.0% short) fails at load; an unknown host may not. known first, then unknown
    (one doubt), then the half-short host (two), although it is the cheapest doubted row."""
    rows = order(SERVE_8B, frame({"known": (2.0, 16, 64), "unknown": (1.2, NAN, NAN), "half": (1.0, 16, 4)}))
    assert names(rows) == ["known", "unknown", "half"]
    assert "4 of 8.2 GiB, 51.0% short" in reasons(rows[2]) and "two host doubts" in reasons(rows[2])


@pytest.mark.parametrize(("ram", "after_unknown"), [(7.4, False), (7.3, True)])
def test_the_tolerance_decides_the_grade(ram, after_unknown):
    rows = order(
        SERVE_8B, frame({"known": (2.0, 16, 64), "unknown": (1.2, NAN, NAN), "short": (1.0, 16, ram)})
    )
    assert names(rows) == (["known", "unknown", "short"] if after_unknown else ["known", "short", "unknown"])


def test_a_host_a_hair_short_of_both_rules_counts_two():
    """8 GiB (1.9% short) AND 3 of 4 vCPUs: both rules missed, two doubts, after the unknown host."""
    rows = order(SERVE_8B, frame({"known": (2.0, 16, 64), "unknown": (1.2, NAN, NAN), "both": (1.0, 3, 8)}))
    assert names(rows) == ["known", "unknown", "both"]


def test_a_vcpu_shortfall_alone_stays_one_doubt():
    rows = order(
        SERVE_8B, frame({"known": (2.0, 16, 64), "unknown": (1.2, NAN, NAN), "fewcpus": (1.0, 2, 64)})
    )
    assert names(rows) == ["known", "fewcpus", "unknown"]


def test_a_lower_bound_that_meets_the_rule_is_no_doubt_and_says_so():
    """lium's RTX4090_1x as stored: RU's 4 vCPUs / 29 GiB, the smallest of three regions ([LIUM] in
    test_outside_host_doubt_audit_audhd.py): meets 8.157 GiB / 4 vCPUs, so it is first although cheapest."""
    rows = order(SERVE_8B, frame({"known": (2.0, 16, 64), "lium": (1.0, 4, 29)}, frozenset({"lium"})))
    assert names(rows) == ["lium", "known"]
    assert LOWER_BOUND_TEXT in reasons(rows[0]) and "ranked below" not in reasons(rows[0])
    assert LOWER_BOUND_TEXT not in reasons(rows[1])


def test_every_host_unknown_is_said_once_and_no_row_claims_a_rank_below():
    rows = order(SERVE_8B, frame({"a": (1.0, NAN, NAN), "b": (2.0, NAN, NAN), "c": (3.0, NAN, NAN)}))
    assert names(rows) == ["a", "b", "c"]
    assert [sum(NO_KNOWN_HOST_TEXT in r for r in row["reasons"]) for row in rows] == [1, 0, 0]
    assert not any("ranked below" in r for row in rows for r in row["reasons"])
    # one known host among them: the unknown rows say they rank below it, and nobody says "no offer ..."
    rows = order(SERVE_8B, frame({"a": (1.0, NAN, NAN), "k": (2.0, 16, 64)}))
    assert names(rows) == ["k", "a"] and "ranked below the first row whose host is known" in reasons(rows[1])
    assert not any(NO_KNOWN_HOST_TEXT in r for row in rows for r in row["reasons"])


OFFLOAD_8B = parse_workload_spec(
    {
        "name": "offload",
        "task": "full_finetune",
        "model": {"preset": "llama-3.1-8b"},
        "precision": "bf16",
        "seq_len": 2048,
        "micro_batch_size": 1,
        "gradient_checkpointing": "full",
        "training_tokens": 1e7,
        "parallelism": {"gpus": 1, "zero_stage": 3, "offload": "optimizer"},
    }
)


def _needed_gib(row) -> float:
    text = next(r for r in row["reasons"] if "host RAM is a limit" in r)
    return float(text.split("host RAM is a limit (")[1].split(" GiB")[0])


@pytest.mark.parametrize("deployment", ["production", "development"])
def test_offload_training_doubts_an_unknown_host_and_states_the_ram_it_needs(deployment):
    """audhd: with CPU offload the host RAM is a limit (configurations.host_ram_blocking), so an unknown host is one
    host doubt in either deployment; the row states the RAM needed, the same figure the limit refuses a known host
    1 GiB under and passes one 1 GiB over."""
    rows = order(
        OFFLOAD_8B, frame({"known": (2.0, 64, 2000), "unknown": (1.0, NAN, NAN)}), deployment=deployment
    )
    assert names(rows) == ["known", "unknown"]
    needed = _needed_gib(rows[1])
    assert any(f"needs {needed:.1f} GiB of host RAM" in w for w in rows[1]["warnings"])
    # by hand: RAM >= GPU memory + offloaded state = 80 GiB (A100 80GB) + 8.03e9 params x 14 B (fp32 master weights
    # and Adam's two moments, 12 B, + bf16 gradients, 2 B, offloaded with the optimizer) = 80 + 104.70 = 184.7 GiB
    assert math.isclose(needed, 80 + 8.03e9 * 14 / 2**30, abs_tol=0.1)
    edge = order(OFFLOAD_8B, frame({"under": (1.0, 64, needed - 1), "over": (2.0, 64, needed + 1)}))
    assert names(edge) == ["over"]


def test_offload_lower_bound_under_the_limit_is_a_doubt_not_a_refusal():
    """Hyperstack's n3-H100-SXM5x8 as stored: 960 GiB, the smallest listed (CANADA-1 lists 1,800): a host under the
    limit in one region need not be in another, so the row stays, doubted, and says to check its region's host."""
    hosts = {"known": (2.0, 64, 2000), "bound": (1.0, 64, 40)}
    rows = order(OFFLOAD_8B, frame(hosts, frozenset({"bound"})))
    assert names(rows) == ["known", "bound"]
    assert "host RAM may be too small: the smallest of the provider's listed hosts has 40 GiB" in " ".join(
        rows[1]["warnings"]
    )
    assert not rows[1].get("blocking") and rows[1]["fits"]


def test_training_without_offload_still_ranks_an_unknown_host_by_cost():
    rows = order(QLORA_8B, frame({"known": (2.0, 16, 64), "unknown": (1.0, NAN, NAN)}))
    assert names(rows)[0] == "unknown"
