"""CapacityPlan moved from procurement to planning as state only (planning/migrations/0001_initial.py,
procurement/migrations/0013_capacity_plan_moved_to_planning.py): a plan stored before the move, with its
recomputation, is the same row after it, still under its one-save constraint, and a permission granted on
it stays granted."""

import pytest
from django.db import IntegrityError, connection, transaction
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("procurement", "0012_tco_study_and_workload_saved_once"), ("planning", None)]
AFTER = [("procurement", "0013_capacity_plan_moved_to_planning")]


def _migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state([node for node in targets if node[1]]).apps


@pytest.mark.django_db(transaction=True)
def test_it_keeps_a_stored_plan_its_recomputation_and_its_permission():
    old = _migrate(BEFORE)
    plan_model = old.get_model("procurement", "CapacityPlan")
    first = plan_model.objects.create(
        name="H100 fleet",
        scope_teams=["research"],
        inputs={"horizon_months": 36},
        prices_used=[{"source": "aws", "observed": "2026-11-01"}],
        result={"total_cost": "2647928.44"},
        fingerprint="f" * 64,
    )
    second = plan_model.objects.create(
        name="H100 fleet",
        inputs={},
        result={"total_cost": "2600000.00"},
        fingerprint="g" * 64,
        previous=first,
    )
    content_type = old.get_model("contenttypes", "ContentType").objects.get_or_create(
        app_label="procurement", model="capacityplan"
    )[0]
    permission = old.get_model("auth", "Permission").objects.create(
        content_type=content_type, codename="view_capacityplan_moved", name="view plans"
    )

    new = _migrate(AFTER)
    moved = new.get_model("planning", "CapacityPlan")
    assert moved._meta.db_table == "procurement_capacityplan"
    kept = moved.objects.get(pk=first.pk)
    assert (kept.name, kept.scope_teams, kept.inputs, kept.prices_used, kept.result) == (
        "H100 fleet",
        ["research"],
        {"horizon_months": 36},
        [{"source": "aws", "observed": "2026-11-01"}],
        {"total_cost": "2647928.44"},
    )
    assert moved.objects.get(pk=second.pk).previous_id == first.pk
    assert (
        new.get_model("auth", "Permission").objects.get(pk=permission.pk).content_type.app_label == "planning"
    )
    with pytest.raises(IntegrityError), transaction.atomic():  # saved once: a first version per fingerprint
        moved.objects.create(name="again", inputs={}, fingerprint="f" * 64)

    _migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())  # the latest schema for other tests
