"""The plan's chart bands and request parsing: plain functions, no database."""

from __future__ import annotations

import datetime as dt

import pytest

from planning.engine.errors import PlanInputError
from planning.services.plan_requests import plan_request_parse
from planning.views.plan_charts import load_duration_svg, stacked_layers

LAYERS = [
    {"kind": "owned", "gpus": 16},
    {"kind": "on_demand", "gpus": 3},
    {"kind": "spot", "gpus": 4},
    {"kind": "committed_3y", "gpus": 2},
    {"kind": "committed_1y", "gpus": 0},
]


def test_the_bands_stack_in_the_engines_order_from_zero():
    # the engine stacks commitments first (no running cost), then owned, spot, on-demand (plan.layer_kinds)
    assert stacked_layers(LAYERS) == [
        ("3-year commitment", 0.0, 2.0),
        ("owned servers", 2.0, 18.0),
        ("spot", 18.0, 22.0),
        ("on-demand", 22.0, 25.0),
    ]


def test_the_curve_is_drawn_with_one_shaded_band_per_layer_and_is_thinned():
    svg = load_duration_svg([25.0] * 10 + [10.0] * 5000, LAYERS)
    assert svg.count("<polygon") == 4  # the empty 1-year layer draws nothing
    points = svg.split("<polyline")[1].split('points="')[1].split('"')[0].split()
    assert len(points) <= 362  # a year of hours drawn at about 360 points


def test_growth_reads_a_rate_or_yearly_multipliers():
    base = {"from": "2026-05-01", "to": "2026-11-01"}
    assert plan_request_parse(base | {"growth": "0.02"}).growth == 0.02
    assert plan_request_parse(base | {"growth": "1.2,1.4,1.6"}).growth == (1.2, 1.4, 1.6)
    request = plan_request_parse(base | {"growth": [1.1, 1.2, 1.3], "teams": ["b", "a", "a"]})
    assert (request.start, request.end, request.teams) == (
        dt.date(2026, 5, 1),
        dt.date(2026, 11, 1),
        ("a", "b"),
    )


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"to": "2026-05-07"}, "to"),
        ({"from": "May"}, "from"),
        ({"growth": "fast"}, "growth"),
        ({"growth": [1.1]}, "growth"),
        ({"horizon_months": 0}, "horizon_months"),
        ({"trials": 10_001}, "trials"),
        ({"seed": -1}, "seed"),
        ({"scenario": "worst"}, "scenario"),
        ({"teams": ["x"] * 51}, "teams"),
        ({"currency": "EURO"}, "currency"),
        ({"study": [1]}, "study"),
        ({"budget": 1}, "budget"),
    ],
)
def test_a_bad_field_is_named(change, field):
    with pytest.raises(PlanInputError) as raised:
        plan_request_parse({"from": "2026-05-01", "to": "2026-11-01"} | change)
    assert raised.value.field == field
