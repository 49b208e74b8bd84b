"""The plan agrees with the engines it is built on (the issue's consistency checks):

- a flat demand curve at utilization u (the study's GPUs busy a share u of the hours), with only owned
  servers and on-demand allowed, gives the verdict, the NPV and the break-even utilizations that
  ``manage.py tco`` prints for the same study;
- with only commitments and on-demand, the committed level ``manage.py commitments`` prints for the same
  profile (and its total).
"""

import json
from decimal import Decimal
from io import StringIO

import numpy as np
import pytest
import yaml
from django.core.management import call_command

from planning.engine.options import (
    SupplyOptions,
    commitment_option,
    on_demand_option,
    options_from_study,
)
from planning.engine.plan import capacity_plan
from procurement.services.tco import tco_study_evaluate
from tests.planning.engine.plan_fixtures import inputs
from tests.procurement.costing.tco_fixtures import study_document

D = Decimal
SAMPLES = 8760


@pytest.fixture
def h100(db):
    """The GPU row the study resolves (the bundled gpu_specs.csv row: TDP 700 W, list 33,800 USD)."""
    from pricing.models import GpuModel

    return GpuModel.objects.create(
        slug="h100-sxm5-80gb",
        name="NVIDIA H100 SXM5 80GB",
        vendor="NVIDIA",
        architecture="Hopper",
        memory_gb=D(80),
        memory_bandwidth_gbps=D(3350),
        tdp_w=700,
        approx_list_price_usd=D(33800),
    )


def _run(*args) -> dict:
    out = StringIO()
    call_command(*args, "--format", "json", stdout=out)
    return json.loads(out.getvalue())


def _flat(gpus: int, utilization: Decimal) -> np.ndarray:
    """``gpus`` GPUs busy in a share ``utilization`` of the hours, none in the others: every GPU-slice of
    the load-duration curve has capacity factor u, as in the TCO study."""
    busy = int(utilization * SAMPLES)
    assert busy == utilization * SAMPLES  # the share is a whole number of the 8,760 samples
    demand = np.zeros(SAMPLES)
    demand[:busy] = gpus
    return demand


def _money(value: Decimal) -> str:
    return str(value.quantize(D("0.01")))


STUDIES = [
    ("worked example, u = 0.5", {"utilization": "0.5"}),
    ("worked example, u = 0.75", {"utilization": "0.75"}),
    ("worked example, u = 0.9", {"utilization": "0.9"}),
    ("worked example, u = 1", {"utilization": "1"}),
    # energy that follows utilization and failure cover make the owned cost depend on use (variable > 0)
    (
        "energy follows use, failures, u = 0.9",
        {
            "utilization": "0.9",
            "buy__energy_follows_utilization": True,
            "buy__annual_failure_rate": "0.2",
            "buy__repair_days": "30",
        },
    ),
    # four servers (staff given for the fleet), a 5-year horizon and a rent price falling 10% a year
    (
        "4 servers, 60 months, decline, u = 0.8",
        {
            "utilization": "0.8",
            "horizon_months": 60,
            "buy__servers": 4,
            "buy__ops_fte": "0.3",
            "rent__price_decline_per_year": "0.1",
        },
    ),
]


@pytest.mark.parametrize(("label", "changes"), STUDIES, ids=[label for label, _ in STUDIES])
def test_it_gives_the_tco_commands_verdict_npv_and_break_evens_on_a_flat_curve(
    tmp_path, h100, label, changes
):
    document = study_document(**changes)
    path = tmp_path / "study.yaml"
    path.write_text(yaml.safe_dump(document))
    tco = _run("tco", str(path))
    study = tco_study_evaluate(document=document).spec  # the study the command resolved
    horizon, utilization = study.horizon_months, study.utilization
    gpus = study.buy.servers * study.buy.gpus_per_server
    plan = capacity_plan(
        inputs(
            options_from_study(study, horizon_months=horizon),
            firm=_flat(gpus, utilization),
            horizon=horizon,
            growth=np.ones(-(-horizon // 12)),
            rate=str(study.discount_rate_annual),
        ),
        with_sensitivity=False,
    )
    verdict = "buy" if plan.owned_servers else "rent"
    assert verdict == tco["recommendation"], label
    assert plan.owned_servers in (0, study.buy.servers)
    expected_npv = tco["buy"]["npv"] if verdict == "buy" else tco["rent"]["npv"]
    assert _money(plan.npv) == expected_npv
    owned_line = next(line for line in plan.screening if line.kind == "owned")
    assert str(owned_line.break_even_capacity_factor) == tco["npv_break_even_utilization"]
    assert str(owned_line.cash_break_even_capacity_factor) == tco["break_even_utilization"]


def test_the_flat_cases_cover_both_verdicts(tmp_path, h100):
    verdicts = set()
    for _, changes in STUDIES[:4]:
        path = tmp_path / "study.yaml"
        path.write_text(yaml.safe_dump(study_document(**changes)))
        verdicts.add(_run("tco", str(path))["recommendation"])
    assert verdicts == {"buy", "rent"}


PROFILES = [
    "2,2,4,4,4,6,2,2,3,5,1,0",
    "8,8,8,8,8,8,8,8,8,8,8,8",
    "0,0,0,0,0,0,0,0,0,0,0,12",
    "5,7,6,9,12,3,4,8,8,10,11,2",
]


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("committed", ["1.90", "2.50", "0.60"])
def test_it_commits_the_level_the_commitments_command_finds_for_the_same_profile(profile, committed):
    on_demand, term_hours = "2.99", 730
    command = _run(
        "commitments",
        "--on-demand",
        on_demand,
        "--reserved-effective",
        committed,
        "--utilization-profile",
        profile,
        "--period-hours",
        str(term_hours),
    )
    # The profile's 12 months of 730 h as 8,760 hourly samples: each period's GPUs for its 730 hours.
    demand = np.repeat(np.array([int(part) for part in profile.split(",")], dtype=np.float64), term_hours)
    for term_years, horizon in ((1, 12), (3, 36)):
        options = SupplyOptions(
            on_demand=on_demand_option(D(on_demand), source="test"),
            **{
                f"committed_{term_years}y": commitment_option(
                    term_years, source="test", effective_per_gpu_hour=D(committed)
                )
            },
        )
        plan = capacity_plan(
            inputs(options, firm=demand, horizon=horizon, growth=np.ones(horizon // 12), rate="0.08"),
            with_sensitivity=False,
        )
        level = plan.committed_1y_units_by_year[0] if term_years == 1 else plan.committed_3y_units
        assert level == command["cheapest"]["committed_gpus"], (term_years, profile, committed)
        if term_years == 1:  # a year of the profile: the command's total, to the cent
            assert _money(plan.total_cost) == command["cheapest"]["total"]
        else:  # three years of the same profile at the same level: three times it
            assert _money(plan.total_cost) == _money(3 * D(command["cheapest"]["total"]))
