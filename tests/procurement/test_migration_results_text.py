"""0016: stored rankings move from jsonb to JSON text (issue 26, "Speed"); each reads back the same values,
its first row is copied beside it, and the migration goes back to jsonb with the same values."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("procurement", "0015_changeevent_bulk_inserted_json")]
AFTER = [("procurement", "0016_recommendation_results_text")]
# awkward text (quotes, a backslash, a tab, non-ASCII), floats without a short decimal, an empty ranking
RANKINGS = [
    [{"provider": 'a "b" \\ c\td', "total_cost": 0.1 + 0.2, "fits": True}, {"provider": "é€", "hours": 1e-7}],
    [],
    [{"fits": False, "breakdown": {"gpu": 1e22, "storage": -0.0}}],
]


def _migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


def _column_type() -> str:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT format_type(atttypid, atttypmod) FROM pg_attribute "
            "WHERE attrelid = 'procurement_recommendation'::regclass AND attname = 'results'"
        )
        return cursor.fetchone()[0]


@pytest.mark.django_db(transaction=True)
def test_stored_rankings_read_back_the_same_after_the_move_to_text_and_back():
    if connection.vendor != "postgresql":
        pytest.skip("the jsonb -> text change is PostgreSQL's")
    try:
        old = _migrate(BEFORE)
        assert _column_type() == "jsonb"
        workload = old.get_model("procurement", "Workload").objects.create(name="w", task="qlora", spec={})
        Recommendation = old.get_model("procurement", "Recommendation")
        ids = [Recommendation.objects.create(workload=workload, results=r).pk for r in RANKINGS]

        new = _migrate(AFTER)
        assert _column_type() == "text"
        rows = new.get_model("procurement", "Recommendation").objects.in_bulk(ids)
        assert [rows[pk].results for pk in ids] == RANKINGS
        assert [rows[pk].first_result for pk in ids] == [RANKINGS[0][0], None, RANKINGS[2][0]]

        back = _migrate(BEFORE)
        assert _column_type() == "jsonb"
        rows = back.get_model("procurement", "Recommendation").objects.in_bulk(ids)
        assert [rows[pk].results for pk in ids] == RANKINGS
    finally:
        executor = MigrationExecutor(connection)
        executor.loader.build_graph()
        executor.migrate(executor.loader.graph.leaf_nodes())  # back to the latest schema for other tests
