"""Spot sanity: quotes checked against sibling zones and on-demand (pricing/spot_sanity.py), and ranked so."""

from __future__ import annotations

import statistics
from decimal import Decimal

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from pricing.spot_sanity import _leave_one_out_median, spot_sanity
from procurement.ranking import RankingOptions, rank_workload
from tests.procurement.test_ranking import GPUS, NOW, QLORA_8B, _offer


def _spot(instance_type, zone, price, region="us-east-1", provider="aws", gpu="l4", count=1):
    offer = _offer(provider, instance_type, gpu, count, "spot", price, region=region, band=0, vcpus=8, ram=32)
    return offer | {"zone": zone}


def _on_demand(instance_type, price, region="us-east-1", provider="aws", gpu="l4", count=1, **_host):
    return _offer(provider, instance_type, gpu, count, "on_demand", price, region=region, vcpus=8, ram=32)


def test_the_atlanta_local_zone_p6_b200_quote_is_an_outlier_ranked_at_its_sibling():
    # skypilot aws/vms.gpu.csv, p6-b200.48xlarge us-east-1: on-demand 113.9328; spot 13.0338 in the Atlanta
    # Local Zone use1-atl2-az1 (1 - 13.0338/113.9328 = 88.56% off) and 21.0148 in use1-az6. 13.0338 is under
    # 2/3 x 21.0148 = 14.0099 and over 80% off on-demand: an outlier, ranked at its sibling's 21.0148.
    frame = pd.DataFrame(
        [
            _on_demand("p6-b200.48xlarge", 113.9328, gpu="b200", count=8),
            _spot("p6-b200.48xlarge", "use1-atl2-az1", 13.0338, gpu="b200", count=8),
            _spot("p6-b200.48xlarge", "use1-az6", 21.0148, gpu="b200", count=8),
        ]
    )
    sanity = spot_sanity(frame)
    atlanta, az6 = sanity.iloc[1], sanity.iloc[2]
    assert bool(atlanta["spot_outlier"]) and atlanta["spot_outlier_kind"] == "below_siblings"
    assert atlanta["sibling_median_usd"] == 21.0148 and atlanta["robust_price_usd"] == 21.0148
    assert bool(atlanta["local_zone"]) and not bool(az6["local_zone"])
    # use1-az6 is checked against Atlanta alone: 21.0148 is not under 2/3 x 13.0338
    assert not bool(az6["spot_outlier"]) and az6["robust_price_usd"] == 21.0148
    assert not sanity.iloc[0]["spot_outlier"] and np.isnan(sanity.iloc[0]["sibling_median_usd"])


def test_a_quote_at_exactly_ten_percent_of_on_demand_is_a_placeholder():
    # g4dn.xlarge-like: on-demand 0.526, one zone at 0.0526 (= 10.00%), siblings 0.20 and 0.25
    frame = pd.DataFrame(
        [
            _on_demand("g4dn.xlarge", 0.526, gpu="t4"),
            _spot("g4dn.xlarge", "use1-az1", 0.0526, gpu="t4"),
            _spot("g4dn.xlarge", "use1-az2", 0.20, gpu="t4"),
            _spot("g4dn.xlarge", "use1-az3", 0.25, gpu="t4"),
            # alone in its region, with nothing to check it against: ranked at on-demand (no saving assumed)
            _on_demand("g4dn.xlarge", 0.60, region="eu-west-1", gpu="t4"),
            _spot("g4dn.xlarge", "euw1-az1", 0.06, region="eu-west-1", gpu="t4"),
        ]
    )
    sanity = spot_sanity(frame)
    placeholder = sanity.iloc[1]
    assert placeholder["spot_outlier_kind"] == "placeholder"
    assert placeholder["robust_price_usd"] == 0.225  # the median of 0.20 and 0.25; the placeholder left out
    # 0.20's siblings are the 0.25 zone only (the placeholder is not a market price): 0.20 > 2/3 x 0.25
    assert not bool(sanity.iloc[2]["spot_outlier"]) and sanity.iloc[2]["sibling_median_usd"] == 0.25
    alone = sanity.iloc[5]
    assert alone["spot_outlier_kind"] == "placeholder" and alone["robust_price_usd"] == 0.60
    assert bool(alone["spot_no_saving"]) is False  # the quote itself is under on-demand


def test_spot_at_or_above_on_demand_saves_nothing_and_is_never_suitable():
    frame = pd.DataFrame([_on_demand("g6.2xlarge", 0.9776, vcpus=8), _spot("g6.2xlarge", "use1-az1", 0.9776)])
    assert bool(spot_sanity(frame).iloc[1]["spot_no_saving"])
    options = RankingOptions(top=None, pricing_models=("spot",))
    assert rank_workload(QLORA_8B, frame, GPUS, options, now=NOW).results == []
    shown = rank_workload(
        QLORA_8B,
        frame,
        GPUS,
        RankingOptions(top=None, pricing_models=("spot",), include_infeasible=True),
        now=NOW,
    ).results
    assert shown and not any(row["fits"] for row in shown)
    assert all(row["spot"]["verdict"] == "unsuitable" for row in shown)
    assert any("saves nothing" in reason for reason in shown[0]["reasons"])
    assert "saves nothing" in shown[0]["spot"]["why"][0]


def test_a_ranked_outlier_row_says_so_and_can_be_ranked_at_its_quote_on_request():
    frame = pd.DataFrame(
        [
            _on_demand("g6.2xlarge", 0.9776, vcpus=8, ram=32),
            _spot("g6.2xlarge", "use1-az1", 0.09776),  # exactly 10% of on-demand
            _spot("g6.2xlarge", "use1-az2", 0.40),
            _spot("g6.2xlarge", "use1-az3", 0.44),
        ]
    )
    options = RankingOptions(top=None, pricing_models=("spot",), instance_counts=(1,))
    rows = rank_workload(QLORA_8B, frame, GPUS, options, now=NOW).results
    flagged = next(row for row in rows if row["zone"] == "use1-az1")
    assert flagged["spot"]["outlier"] is True and flagged["price_per_hour"] == "0.097760"
    assert flagged["spot"]["sibling_median_price_per_hour"] == 0.42  # median of 0.40 and 0.44
    overhead = Decimal(flagged["spot"]["overhead"])
    # ranked at 0.42 x (1 + overhead), not 0.09776 x (1 + overhead)
    assert abs(Decimal(flagged["effective_price_per_hour"]) - Decimal("0.42") * (1 + overhead)) < Decimal(
        "1e-5"
    )
    assert any(
        w.startswith("outlier: spot quote 0.0978 USD/h is exactly 10% of on-demand")
        for w in flagged["warnings"]
    )
    assert all(row["spot"]["outlier"] is False for row in rows if row["zone"] != "use1-az1")
    raw = rank_workload(
        QLORA_8B,
        frame,
        GPUS,
        RankingOptions(top=None, pricing_models=("spot",), instance_counts=(1,), rank_outliers_at_quote=True),
        now=NOW,
    ).results
    assert raw[0]["zone"] == "use1-az1"  # at its quote it is the cheapest
    assert any(w.endswith("ranked at the quote, as asked") for w in raw[0]["warnings"])


def test_a_local_zone_row_says_it_needs_opt_in():
    frame = pd.DataFrame(
        [
            _on_demand("g6.2xlarge", 0.9776, region="us-west-2", vcpus=8, ram=32),
            _spot("g6.2xlarge", "usw2-lax1-az1", 0.35, region="us-west-2"),
            _spot("g6.2xlarge", "usw2-az1", 0.36, region="us-west-2"),
        ]
    )
    rows = rank_workload(
        QLORA_8B, frame, GPUS, RankingOptions(top=None, pricing_models=("spot",)), now=NOW
    ).results
    local = next(row for row in rows if row["zone"] == "usw2-lax1-az1")
    assert any("Local Zone usw2-lax1-az1" in w and "opt" in w for w in local["warnings"])
    assert local["spot"]["local_zone"] is True


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0.01, 100.0), min_size=1, max_size=9))
def test_the_leave_one_out_median_is_the_median_of_the_others(values):
    array = np.array(values)
    found = _leave_one_out_median(
        array, np.zeros(array.size, dtype=np.int64), np.ones(array.size, dtype=bool)
    )
    for i in range(array.size):
        others = values[:i] + values[i + 1 :]
        expected = statistics.median(others) if others else float("nan")
        assert (np.isnan(found[i]) and not others) or found[i] == expected


@settings(max_examples=40, deadline=None)
@given(
    on_demand=st.floats(0.5, 50.0),
    shares=st.lists(st.floats(0.05, 0.95), min_size=1, max_size=6),
    placeholder=st.booleans(),
)
def test_a_flagged_outlier_never_ranks_at_its_raw_price_by_default(on_demand, shares, placeholder):
    prices = [round(on_demand * share, 4) for share in shares]
    if placeholder:
        prices[0] = round(on_demand * 0.10, 4)
    rows = [_on_demand("g6.2xlarge", on_demand, vcpus=8, ram=32)]
    rows += [_spot("g6.2xlarge", f"use1-az{i}", price) for i, price in enumerate(prices)]
    frame = pd.DataFrame(rows)
    options = RankingOptions(top=None, pricing_models=("spot",), instance_counts=(1,))
    sanity = spot_sanity(frame)
    for row in rank_workload(QLORA_8B, frame, GPUS, options, now=NOW).results:
        robust = float(sanity.loc[int(row["zone"][len("use1-az") :]) + 1, "robust_price_usd"])
        ranked = float(row["effective_price_per_hour"]) / (1 + float(row["spot"]["overhead"]))
        if row["spot"]["outlier"]:
            assert abs(ranked - robust) < 1e-5 * max(1.0, robust)
            assert robust != float(row["price_per_hour"]) or robust >= on_demand
        else:
            assert abs(ranked - float(row["price_per_hour"])) < 1e-5 * max(1.0, ranked)
