"""Spot economics: band rates, the Young/Daly interval, overhead, effective price and the verdict."""

import math
from decimal import Decimal

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from procurement.costing.spot import (
    GUIDE_MAX_CHECKPOINT_INTERVAL_HOURS,
    SpotJobTraits,
    band_interruption_rate_per_hour,
    job_interruption_rate_per_hour,
    monthly_to_hourly_rate,
    spot_economics,
    spot_overhead,
    spot_overhead_array,
    spot_verdict,
    young_daly_interval_hours,
)
from procurement.costing.values import CostInputError

D = Decimal


def test_it_turns_an_advisor_band_midpoint_into_an_hourly_rate():
    # band 0 "<5%" -> midpoint 2.5% a month; constant hazard: -ln(1 - 0.025) / 730 = 3.468193e-5 per hour
    assert float(band_interruption_rate_per_hour(0)) == pytest.approx(-math.log(0.975) / 730, rel=1e-12)
    # band 4 ">20%" is open-ended: we take 25% a month -> -ln(0.75) / 730
    assert float(band_interruption_rate_per_hour(4)) == pytest.approx(-math.log(0.75) / 730, rel=1e-12)


def test_it_rejects_a_band_outside_the_advisor_scale():
    with pytest.raises(CostInputError) as error:
        band_interruption_rate_per_hour(5)
    assert error.value.field == "interruption_band"


def test_it_computes_the_young_daly_interval():
    # C = 0.1 h, lambda = 0.01 /h (M = 100 h): tau* = sqrt(2 x 0.1 x 100) = sqrt(20) = 4.472136 h
    assert float(young_daly_interval_hours(D("0.1"), D("0.01"))) == pytest.approx(math.sqrt(20), rel=1e-15)


def test_it_finds_the_overhead_at_the_optimum_is_sqrt_2_c_lambda():
    # With R = 0: C/tau* + tau*/2 x lambda = 2 x sqrt(C lambda / 2) = sqrt(2 C lambda) = sqrt(0.002) = 0.0447214
    tau = young_daly_interval_hours(D("0.1"), D("0.01"))
    overhead = spot_overhead(
        interval_hours=tau, checkpoint_write_hours=D("0.1"), restart_hours=D(0), rate_per_hour=D("0.01")
    )
    assert float(overhead) == pytest.approx(math.sqrt(0.002), rel=1e-12)


def test_it_caps_the_interval_at_the_guides_15_minutes_and_prices_the_overhead():
    # band 2 (12.5%/month): lambda = -ln(0.875)/730 = 1.829197e-4 /h; C = 1 min -> tau* = sqrt(2 C / lambda)
    # = 13.5 h, capped at 0.25 h. overhead = (1/60)/0.25 + (0.125 + 0.1) x 1.829197e-4 = 0.0666667 + 0.0000412
    # = 0.0667078; effective price at 1.00/h spot = 1.066708
    rate = band_interruption_rate_per_hour(2)
    economics = spot_economics(
        spot_price_per_hour=D("1.00"),
        rate_per_hour=rate,
        checkpoint_write_hours=D(1) / D(60),
        restart_hours=D("0.1"),
    )
    assert float(economics.optimal_interval_hours) == pytest.approx(
        math.sqrt(2 / 60 / 1.829197159e-4), rel=1e-9
    )
    assert economics.interval_hours == GUIDE_MAX_CHECKPOINT_INTERVAL_HOURS
    assert float(economics.overhead) == pytest.approx(1 / 15 + 0.225 * 1.829197159240036e-4, rel=1e-9)
    assert economics.effective_price_per_hour == D("1.066708")


def test_it_uses_the_optimum_when_it_is_under_15_minutes():
    # lambda = 1 /h, C = 0.01 h: tau* = sqrt(0.02) = 0.141421 h
    economics = spot_economics(
        spot_price_per_hour=D("2"), rate_per_hour=D(1), checkpoint_write_hours=D("0.01"), restart_hours=D(0)
    )
    assert float(economics.interval_hours) == pytest.approx(math.sqrt(0.02), rel=1e-12)


def test_it_still_charges_checkpoint_writes_when_nothing_interrupts():
    economics = spot_economics(
        spot_price_per_hour=D("1"),
        rate_per_hour=D(0),
        checkpoint_write_hours=D("0.01"),
        restart_hours=D("0.1"),
    )
    assert economics.optimal_interval_hours is None
    assert economics.overhead == D("0.04")  # 0.01 / 0.25


def test_it_matches_the_vectorized_overhead():
    rates = [D("0.001"), D("0.05")]
    exact = [
        spot_overhead(
            interval_hours=D("0.25"),
            checkpoint_write_hours=D("0.02"),
            restart_hours=D("0.1"),
            rate_per_hour=r,
        )
        for r in rates
    ]
    vectorized = spot_overhead_array(
        interval_hours=np.array([0.25, 0.25]),
        checkpoint_write_hours=0.02,
        restart_hours=0.1,
        rate_per_hour=np.array([float(r) for r in rates]),
    )
    assert vectorized == pytest.approx([float(value) for value in exact], rel=1e-12)


@given(
    write=st.decimals(min_value=D("0.001"), max_value=D("1"), places=3),
    rate=st.decimals(min_value=D("0.0001"), max_value=D("2"), places=4),
    other=st.decimals(min_value=D("0.01"), max_value=D("100"), places=2),
)
def test_it_finds_no_interval_cheaper_than_young_daly(write, rate, other):
    def overhead(interval):
        return spot_overhead(
            interval_hours=interval, checkpoint_write_hours=write, restart_hours=D("0.1"), rate_per_hour=rate
        )

    assert overhead(young_daly_interval_hours(write, rate)) <= overhead(other) + D("1e-20")


def _economics(interval=None):
    return spot_economics(
        spot_price_per_hour=D("1"),
        rate_per_hour=D("0.0001"),
        checkpoint_write_hours=D("0.01"),
        restart_hours=D("0.1"),
        checkpoint_interval_hours=interval,
    )


@pytest.mark.parametrize(
    ("traits", "words"),
    [
        (SpotJobTraits(online_inference=True), "online inference"),
        (SpotJobTraits(can_checkpoint=False), "cannot checkpoint"),
    ],
)
def test_it_says_why_spot_does_not_suit_a_job(traits, words):
    verdict = spot_verdict(traits, _economics())
    assert not verdict.suitable
    assert any(words in reason for reason in verdict.reasons)


def test_it_prices_a_job_on_four_instances_at_four_times_the_rate_and_flags_it():
    # spot26: a multi-instance job is priced, not refused. Any one of 4 instances reclaimed stops the job:
    # with independent reclaims lambda = 4 x 0.0001 = 0.0004 per hour. tau = min(sqrt(2 x 0.01 / 0.0004) =
    # 7.07 h, 0.25 h) = 0.25 h; overhead = 0.01 / 0.25 + (0.125 + 0.1) x 0.0004 = 0.04009 -> 4.01%,
    # effective 1 x 1.04009 = 1.040090/h (one instance: 4.00%, 1.040023/h)
    economics = spot_economics(
        spot_price_per_hour=D("1"),
        rate_per_hour=D("0.0001"),
        checkpoint_write_hours=D("0.01"),
        restart_hours=D("0.1"),
        instances=4,
    )
    assert economics.rate_per_hour == D("0.0004") and economics.rate_per_instance_hour == D("0.0001")
    assert economics.overhead == D("0.04009")
    verdict = spot_verdict(SpotJobTraits(instances=4), economics)
    assert verdict.suitable
    assert verdict.reasons == (
        "checkpointing every 15.0 min adds 4.01% paid time; effective spot price 1.040090/h",
        "4-fold reclaim exposure: the job spans 4 instances and stops when any one is reclaimed, "
        "4 x 0.000100 = 0.000400 interruptions/h (independent reclaims assumed); each restart waits for "
        "4 instances and loses the work since the checkpoint on all of them; ranked after rows that need no 4 "
        "spot instances at once (that capacity is not modelled)",
    )


def test_it_refuses_a_zero_instance_count():
    with pytest.raises(CostInputError):
        job_interruption_rate_per_hour(D("0.0001"), 0)


def test_it_rejects_a_30_minute_checkpoint_interval_unless_accepted():
    verdict = spot_verdict(SpotJobTraits(), _economics(interval=D("0.5")))
    assert not verdict.suitable
    assert "30.0 min" in verdict.reasons[0]
    assert spot_verdict(SpotJobTraits(accepts_long_checkpoint_interval=True), _economics(D("0.5"))).suitable


def test_it_gives_the_numbers_when_spot_suits_the_job():
    # interval capped at 15 min; overhead = 0.01/0.25 + (0.125 + 0.1) x 0.0001 = 0.0400225 -> 4.00%
    verdict = spot_verdict(SpotJobTraits(), _economics())
    assert verdict.suitable
    assert verdict.reasons == (
        "checkpointing every 15.0 min adds 4.00% paid time; effective spot price 1.040023/h",
    )


def test_it_rejects_a_monthly_share_of_one():
    with pytest.raises(CostInputError):
        monthly_to_hourly_rate(D(1))
