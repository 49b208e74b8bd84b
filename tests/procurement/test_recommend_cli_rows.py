"""`manage.py recommend`'s table tells apart two rows of one instance type (x30, following the README's
"Try it" block): for examples/lora-finetune.yaml rows 2 and 4 both read "aws g6e.2xlarge eu-south-2 1x1
l40s spot" at 9.54 and 10.52 USD (two availability zones' spot prices, eus2-az3 and eus2-az2, which the page
shows and the table did not); for examples/full-finetune-8gpu.yaml rows 2 and 3 both read "verda 2B200.60V
FIN-03 1x2 b200 spot 9.91 h 64.00" (data parallel and ZeRO-3/FSDP, told apart only by their "links" line)."""

from __future__ import annotations

from procurement.management.commands.recommend import plan_text, render_table


def _row(**changes) -> dict:
    row = {
        "provider": "aws",
        "instance_type": "g6e.2xlarge",
        "region": "eu-south-2",
        "zone": "",
        "instances": 1,
        "gpus_per_instance": 1,
        "gpus": 1,
        "gpu": "l40s",
        "plan": {"name": "data_parallel", "zero_stage": 0, "tensor_parallel": 1},
        "pricing_model": "spot",
        "hours": 21.23,
        "total_cost": "9.54",
        "basis": "estimated",
        "pareto": False,
        "fits": True,
        "currency": "USD",
    }
    return row | changes


def test_the_zone_and_the_plan_are_in_the_row():
    text = render_table({"results": [_row(zone="eus2-az3"), _row(zone="eus2-az2", total_cost="10.52")]})
    first, second = text.splitlines()[1:3]
    assert "eu-south-2/eus2-az3" in first and "eu-south-2/eus2-az2" in second
    assert "region/zone" in text.splitlines()[0] and " plan " in text.splitlines()[0]


def test_plan_text_names_the_parallelism_shortly():
    assert plan_text({"name": "data_parallel", "zero_stage": 0, "tensor_parallel": 1}) == "data_parallel"
    assert plan_text({"name": "zero3_fsdp", "zero_stage": 3, "tensor_parallel": 1}) == "zero3_fsdp"
    assert (
        plan_text({"name": "data_parallel", "zero_stage": 2, "tensor_parallel": 1}) == "data_parallel zero2"
    )
    assert plan_text({"name": "tensor_parallel", "zero_stage": 0, "tensor_parallel": 4}) == "tensor tp4"
    assert plan_text(None) == "-"


def test_rows_of_one_instance_with_two_plans_differ():
    fsdp = {"name": "zero3_fsdp", "zero_stage": 3, "tensor_parallel": 1}
    text = render_table({"results": [_row(plan=fsdp), _row()]})
    first, second = text.splitlines()[1:3]
    assert first != second and "zero3_fsdp" in first and "data_parallel" in second


def test_a_spot_line_on_several_instances_states_the_reclaim_exposure():
    # spot26: 2 instances at band 1: the job's rate is 2 x 1.06797e-4 = 2.13593e-4 an hour (independent reclaims)
    from procurement.management.commands.recommend import spot_line

    spot = {
        "interruption_source_text": "Spot Advisor band 5-10% of instances interrupted a month",
        "checkpoint_interval_minutes": 15.0,
        "overhead": "0.066715",
        "verdict": "suitable",
        "instances": 2,
        "interruption_rate_per_hour": "0.000213593",
        "reclaim_exposure": "2-fold reclaim exposure: the job spans 2 instances",
    }
    line = spot_line(spot, "USD")
    assert "overhead 6.67%; suitable; 2-fold reclaim exposure (0.000213593/h for the job)" in line
    assert "reclaim exposure" not in spot_line(spot | {"reclaim_exposure": None}, "USD")
