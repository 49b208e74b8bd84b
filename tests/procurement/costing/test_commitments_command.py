"""manage.py commitments: the commitment mix a finance user asks for, from the command line."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

PROFILE = "2,2,4,4,4,6,2,2"  # docs/cost-model.md, "Commitments": GPUs in use per 1-hour period


def _run(*args) -> str:
    out = StringIO()
    call_command("commitments", *args, stdout=out)
    return out.getvalue()


def _report(*args) -> dict:
    return json.loads(
        _run("--utilization-profile", PROFILE, "--period-hours", "1", "--format", "json", *args)
    )


def test_it_reproduces_the_documented_mix():
    # commitment 0.6 vs on-demand 1.0: discount 40%, u* = 60%. Commit to the floor k = 2:
    # 2 GPUs x 8 h x 0.6 = 9.60 committed + (0+0+2+2+2+4+0+0) x 1.0 = 10.00 on demand = 19.60, against 26.00
    report = _report("--on-demand", "1.0", "--reserved-effective", "0.6")
    assert (report["discount"], report["break_even_utilization"]) == ("0.400000", "0.600000")
    assert report["cheapest"] == {
        "committed_gpus": 2,
        "committed_cost": "9.60",
        "burst_cost": "10.00",
        "total": "19.60",
        "savings": "6.40",
        "committed_utilization": "1.000000",
    }
    assert (report["floor"], report["all_on_demand"]) == ({"committed_gpus": 2, "total": "19.60"}, "26.00")
    assert report["advice"].startswith("commit to 2 GPUs (the profile's floor)")


def test_it_computes_the_effective_rate_from_recurring_and_upfront():
    # 0.5/h recurring + 876 upfront over 1 year (8760 h) = 0.5 + 0.1 = 0.6 per GPU-hour: the same mix
    report = _report(
        "--on-demand", "1.0", "--reserved-recurring", "0.5", "--reserved-upfront", "876", "--term-years", "1"
    )
    assert report["committed_per_gpu_hour"] == "0.600000" and report["cheapest"]["total"] == "19.60"


def test_it_commits_above_the_floor_when_the_extra_gpus_are_busy_often_enough():
    # commitment 0.3 (u* = 30%): the 3rd and 4th GPUs are busy in 4 of 8 periods (50% >= 30%), the 5th and
    # 6th in 1 of 8 (12.5% < 30%): k = 4 -> 4 x 8 x 0.3 = 9.60 + (2 x 1.0) = 11.60
    report = _report("--on-demand", "1.0", "--reserved-effective", "0.3")
    assert (report["cheapest"]["committed_gpus"], report["cheapest"]["total"]) == (4, "11.60")
    assert "above the floor of 2" in report["advice"]


def test_it_bursts_on_spot_and_advises_against_a_commitment_dearer_than_spot():
    # spot 0.5 < commitment 0.6: buying every GPU-hour on spot costs 26 x 0.5 = 13.00, committing never pays
    report = _report("--on-demand", "1.0", "--reserved-effective", "0.6", "--spot", "0.5")
    assert report["burst_pricing"] == "spot" and report["cheapest"]["committed_gpus"] == 0
    assert report["cheapest"]["total"] == "13.00" and report["advice"].startswith("do not commit")


def test_it_prints_a_table_by_default():
    output = _run(
        "--on-demand",
        "1.0",
        "--reserved-effective",
        "0.6",
        "--utilization-profile",
        PROFILE,
        "--period-hours",
        "1",
    )
    assert "break-even utilization 60.0%" in output and "= 19.60 USD" in output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ("--on-demand", "1", "--reserved-effective", "0.6", "--utilization-profile", "2,-1"),
            r"--utilization-profile \(entry 2\): must be a whole number of GPUs >= 0",
        ),
        (("--on-demand", "1", "--utilization-profile", "2"), "--reserved-effective: is required"),
        (
            ("--on-demand", "1", "--reserved-effective", "-0.6", "--utilization-profile", "2"),
            "--reserved-effective: must not be negative",
        ),
        (
            (
                "--on-demand",
                "1",
                "--reserved-recurring",
                "0.5",
                "--reserved-upfront",
                "1",
                "--term-years",
                "2",
                "--utilization-profile",
                "2",
            ),
            "--term-years: must be 1 or 3",
        ),
        (
            (
                "--on-demand",
                "1",
                "--reserved-effective",
                "0.6",
                "--utilization-profile",
                "2",
                "--currency",
                "XYZ",
            ),
            "--currency: unknown currency 'XYZ'",
        ),
    ],
)
def test_it_names_the_flag_of_a_bad_value(args, message):
    with pytest.raises(CommandError, match=message):
        _run(*args)
