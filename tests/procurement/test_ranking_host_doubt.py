"""The host in the order (configurations.ranked_order, hostdoubt / aud51x stop 52): one host doubt, whether the host
is known and below its rule or, for production serving, not known at all; compared like for like, then by cost.

Serving Llama 3.1 8B bf16, one A100 a replica. The serving stack's host RAM a process (sizing.host.serving_host_ram,
the transformers shard-at-a-time load): min(5 GB, 8.03e9 x 2 B) = 5e9 B = 4.657 GiB of weights + 3.5 GiB runtime
= 8.157 GiB; vCPU rule 4 a GPU (the guides' rule of thumb). So an 8 GiB host is 0.157 GiB (1.9%) short of it."""

import math

import pandas as pd
import pytest

from procurement.ranking import RankingOptions, rank_workload
from procurement.sizing import parse_workload_spec
from tests.procurement.test_ranking import GPUS, NOW, QLORA_8B, _offer

NAN = math.nan
SERVE_8B = parse_workload_spec({"name": "s", "task": "inference", "model": {"preset": "llama-3.1-8b"}})
A100 = "a100-sxm4-80gb"


def offers(**prices) -> pd.DataFrame:
    hosts = {"known": (16, 64), "unknown": (NAN, NAN), "short": (8, 8), "fewcpus": (3, 64)}
    return pd.DataFrame(
        [
            _offer("p", name, A100, 1, "on_demand", price, vcpus=hosts[name][0], ram=hosts[name][1])
            for name, price in prices.items()
        ]
    )


def order(spec, frame, **options) -> list[dict]:
    return rank_workload(spec, frame, GPUS, RankingOptions(top=None, **options), now=NOW).results


def names(rows) -> list[str]:
    return [row["instance_type"] for row in rows]


def test_unknown_host_is_one_host_doubt_for_production_serving():
    """known (meets both rules) first although dearest; then the unknown and the short host, one doubt each, by cost."""
    rows = order(SERVE_8B, offers(known=2.0, unknown=1.0, short=1.2))
    assert names(rows) == ["known", "unknown", "short"]
    assert any("host's figures are not known" in reason for reason in rows[1]["reasons"])
    assert any(
        "misses the RAM its stack holds by 0.2 GiB (8 of 8.2 GiB, 1.9% short)" in r
        for r in rows[2]["reasons"]
    )


def test_unknown_and_short_hosts_are_compared_like_for_like():
    """A hair-short known host cheaper than the unknown one goes first among the doubted: same count, then cost."""
    rows = order(SERVE_8B, offers(known=2.0, unknown=1.2, short=1.0))
    assert names(rows) == ["known", "short", "unknown"]


def test_vcpu_shortfall_says_the_rule_and_by_how_much():
    rows = order(SERVE_8B, offers(known=2.0, fewcpus=1.0))
    assert names(rows) == ["known", "fewcpus"]
    assert any("misses the vCPU rule by 1 (3 of 4 vCPUs)" in reason for reason in rows[1]["reasons"])


def test_development_serving_and_training_rank_an_unknown_host_by_cost():
    """deployment development: the unknown host by cost (a known short host stays a doubt); training: the same."""
    rows = order(SERVE_8B, offers(known=2.0, unknown=1.0, short=1.2), deployment="development")
    assert names(rows) == ["unknown", "known", "short"]
    training = order(QLORA_8B, offers(known=2.0, unknown=1.0))
    assert names(training)[0] == "unknown"
    assert not any("host's figures are not known" in r for row in training for r in row["reasons"])


@pytest.mark.parametrize("deployment", ["production", "development"])
def test_known_host_that_meets_the_rules_is_no_doubt(deployment):
    rows = order(SERVE_8B, offers(known=1.0, unknown=2.0), deployment=deployment)
    assert names(rows) == ["known", "unknown"]
    assert not any("ranked below" in reason for reason in rows[0]["reasons"])
