"""Cheaper-GPU savings use the ranking of the row's own team's workload: two teams may name their
workloads alike, and neither gets the other's (issue 8, savings kind 3)."""

from __future__ import annotations

from decimal import Decimal

import pandas as pd
import pytest

from billing.models import SpendGrant
from billing.review.selectors import cheaper_gpu_options
from procurement.models import Recommendation, Workload

pytestmark = pytest.mark.django_db


def ranking(team, cheapest: str) -> None:
    """A stored `llm-finetune` workload of `team` whose ranking prices its own p4d at 1000.00."""
    workload = Workload.objects.create(name="llm-finetune", task="training", spec={}, team=team)
    Recommendation.objects.create(
        workload=workload,
        fingerprint="t",
        results=[
            {
                "provider": "aws",
                "instance_type": "p4d.24xlarge",
                "pricing_model": "on_demand",
                "gpu": "a100-sxm4-40gb",
                "instances": 1,
                "total_cost": "1000.00",
            },
            {
                "provider": "lambda",
                "instance_type": "gpu_8x_h100_sxm5",
                "pricing_model": "on_demand",
                "gpu": "h100-sxm5-80gb",
                "instances": 1,
                "total_cost": cheapest,
            },
        ],
    )


def frame(*rows: tuple[str, str]) -> pd.DataFrame:
    """Review rows (resource, team) of p4d usage tagged workload=llm-finetune."""
    return pd.DataFrame(
        [
            {
                "resource_id": resource,
                "team": team,
                "workload": "llm-finetune",
                "provider": "aws",
                "instance_type": "p4d.24xlarge",
            }
            for resource, team in rows
        ]
    )


def test_two_teams_with_a_workload_of_the_same_name_each_get_their_own(team_named):
    ranking(team_named("research"), "600.00")
    ranking(team_named("platform"), "900.00")
    options = cheaper_gpu_options(frame(("i-1", "research"), ("i-2", "platform"), ("i-3", "vision")))
    assert {resource: option.cost_ratio for resource, option in options.items()} == {
        "i-1": Decimal("0.6"),
        "i-2": Decimal("0.9"),
    }  # vision stored no llm-finetune: none, not another team's


def test_the_team_is_the_one_the_bills_tag_as_its_grant_spells_it(team_named, user_with_role):
    research = team_named("research")
    SpendGrant.objects.create(team=research, spend_team="ml-research", granted_by=user_with_role("admin"))
    ranking(research, "600.00")
    options = cheaper_gpu_options(frame(("i-1", "ml-research"), ("i-2", "research")))
    assert {resource: option.cost_ratio for resource, option in options.items()} == {"i-1": Decimal("0.6")}


def test_a_workload_stored_before_teams_serves_any_team_and_an_unclear_resource_none(team_named):
    ranking(None, "500.00")
    options = cheaper_gpu_options(frame(("i-1", "research"), ("i-2", "platform"), ("i-2", "research")))
    assert {resource: option.cost_ratio for resource, option in options.items()} == {"i-1": Decimal("0.5")}
