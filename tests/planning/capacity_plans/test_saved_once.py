"""Saving twice is one save (issue 31, finding 5): the same capacity plan saved twice, one after the
other through the API, the page or the command, or at once (two requests racing), stores one row: saves
are idempotent by the plan's fingerprint (inputs, prices, result), as recomputations are."""

from __future__ import annotations

import json
from io import StringIO

from django.core.management import call_command

from planning.models import CapacityPlan
from planning.services import capacity_plans
from tests.planning.capacity_plans.conftest import PERIOD

H100 = "h100-sxm5-80gb"
AWS_H100 = PERIOD | {"gpu": H100, "providers": ["aws"], "trials": 100}


def _save(client, **extra):
    return client.post(
        "/api/capacity-plans/", AWS_H100 | {"save": True} | extra, content_type="application/json"
    )


def test_the_api_saves_the_same_plan_once(demo_bills, client_as):
    client = client_as("finance")
    first, second = _save(client), _save(client)
    assert (first.status_code, second.status_code) == (201, 200)
    assert first.json()["id"] == second.json()["id"] and CapacityPlan.objects.count() == 1
    other = _save(client, trials=101)  # other inputs: another plan
    assert other.status_code == 201 and CapacityPlan.objects.count() == 2


def test_the_page_and_the_command_save_the_same_plan_once(demo_bills, client_as):
    form = {
        "from": PERIOD["from"],
        "to": PERIOD["to"],
        "gpu": H100,
        "trials": "100",
        "horizon_months": "36",
        "growth": "0.01",
        "save": "1",
    }
    client = client_as("finance")
    first, second = client.post("/plans/", form), client.post("/plans/", form)
    assert first.status_code == second.status_code == 302 and first["Location"] == second["Location"]
    assert CapacityPlan.objects.count() == 1
    args = ["capacity_plan", "--from", PERIOD["from"], "--to", PERIOD["to"], "--gpu", H100, "--trials", "50"]
    for _ in range(2):
        call_command(*args, "--save", "--format", "json", stdout=StringIO())
    assert CapacityPlan.objects.count() == 2  # the page's plan and the command's (50 trials), once each


def test_a_save_that_loses_the_race_returns_the_winners_plan(demo_bills, client_as, monkeypatch):
    """Two saves at once: both look, find nothing, both insert; the unique fingerprint refuses the
    second insert and the loser returns the winner's row."""
    client = client_as("finance")
    winner = _save(client).json()
    looked = []

    def not_yet_committed(fingerprint):  # what the loser saw before the winner committed
        looked.append(fingerprint)
        return None if len(looked) == 1 else CapacityPlan.objects.get(fingerprint=fingerprint)

    monkeypatch.setattr(capacity_plans, "_saved", not_yet_committed)
    loser = _save(client)
    assert loser.status_code == 200 and loser.json()["id"] == winner["id"]
    assert CapacityPlan.objects.count() == 1 and len(looked) == 2
    assert json.loads(loser.content)["id"] == winner["id"]
