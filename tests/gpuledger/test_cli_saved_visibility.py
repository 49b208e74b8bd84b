"""What the README's "Try it" block saves from the command line (`tco examples/tco-study.yaml --save`) has no
owner and no team: admin sees it on the page, an engineer is answered "not found" until an admin gives it a
team (README, "Try it"; x30 found an engineer's /workloads/ empty after `recommend ... --save`)."""

from __future__ import annotations

from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from procurement.models import TcoStudy

pytestmark = pytest.mark.django_db
STUDY = Path(__file__).resolve().parents[2] / "examples" / "tco-study.yaml"


def test_a_study_saved_by_the_command_is_admins_until_it_has_a_team(bundled_catalog, client_as, team_named):
    call_command("tco", str(STUDY), "--save", stdout=StringIO(), stderr=StringIO())
    study = TcoStudy.objects.get()
    assert (study.owner_id, study.team_id) == (None, None)
    engineer = client_as("engineer", team="research")
    assert client_as("admin").get(f"/tco/{study.pk}/").status_code == 200
    assert engineer.get(f"/tco/{study.pk}/").status_code == 404
    study.team = team_named("research")
    study.save(update_fields=["team"])
    assert engineer.get(f"/tco/{study.pk}/").status_code == 200
