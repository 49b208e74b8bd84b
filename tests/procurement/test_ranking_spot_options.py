"""Spot timing and deadline-plan options: parsed, bounded, and refused naming the field."""

import pytest

from procurement.costing.values import CostInputError
from procurement.services.recommendations import ranking_options_parse


def test_spot_options_are_read():
    options = ranking_options_parse(
        {
            "checkpoint_write_hours": "0.05",
            "restart_hours": 0,
            "storage_write_gb_per_s": 2,
            "deadline_probability": 0.9,
        }
    )
    assert (options.checkpoint_write_hours, options.restart_hours) == (0.05, 0.0)
    assert (options.storage_write_gb_per_s, options.deadline_probability) == (2.0, 0.9)
    assert ranking_options_parse({}).checkpoint_write_hours is None  # derived from the job by default


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("checkpoint_write_hours", 0),
        ("checkpoint_write_hours", 25),
        ("restart_hours", -1),
        ("storage_write_gb_per_s", 0),
        ("storage_write_gb_per_s", 1000),
        ("deadline_probability", 1.5),
        ("deadline_probability", "often"),
    ],
)
def test_out_of_bounds_spot_options_name_the_field(field, value):
    with pytest.raises(CostInputError) as error:
        ranking_options_parse({field: value})
    assert error.value.field == field


@pytest.mark.django_db
def test_the_command_line_takes_the_spot_flags_and_names_a_bad_one(tmp_path, bundled_catalog):
    import json
    from io import StringIO

    from django.core.management import CommandError, call_command

    path = tmp_path / "qlora.json"
    path.write_text(
        json.dumps(
            {
                "name": "q",
                "task": "qlora",
                "model": {"preset": "llama-3.1-8b"},
                "training_tokens": 200_000_000,
            }
        )
    )
    out = StringIO()
    call_command(
        "recommend",
        str(path),
        "--format",
        "json",
        "--top",
        "40",
        "--provider",
        "aws",
        "--checkpoint-write-hours",
        "0.05",
        "--restart-hours",
        "0.2",
        stdout=out,
    )
    spot = [row["spot"] for row in json.loads(out.getvalue())["results"] if "spot" in row]
    assert spot and {(s["checkpoint_write_minutes"], s["restart_hours"]) for s in spot} == {(3.0, 0.2)}
    with pytest.raises(CommandError, match="--deadline-probability"):
        call_command("recommend", str(path), "--deadline-probability", "2", stdout=StringIO())
