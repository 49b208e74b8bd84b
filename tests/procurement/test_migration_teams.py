"""Workload.team was free text before teams existed: the migration turns each name into a Team."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("procurement", "0002_tco_study_previous_version"), ("accounts", "0002_w11a_role_groups")]
AFTER = [("procurement", "0003_w11a_owner_team")]


@pytest.mark.django_db(transaction=True)
def test_team_names_become_teams_and_empty_names_stay_without_one():
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    old = executor.loader.project_state(BEFORE).apps
    Workload = old.get_model("procurement", "Workload")
    for name, team in (("a", "Research Lab"), ("b", "Research Lab"), ("c", "")):
        Workload.objects.create(name=name, task="qlora", spec={}, team=team)

    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(AFTER)
    new = executor.loader.project_state(AFTER).apps
    teams = {
        w.name: (w.team.slug if w.team else None)
        for w in new.get_model("procurement", "Workload").objects.all()
    }
    assert teams == {"a": "research-lab", "b": "research-lab", "c": None}
    assert list(new.get_model("accounts", "Team").objects.values_list("name", flat=True)) == ["Research Lab"]

    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())  # back to the latest schema for other tests
