"""A recompute chunk stores its rankings with one plain multi-row INSERT (issue 26, "Speed"): Django's
UNNEST form made psycopg escape every quote of ~76 KB of JSON per row in Python
(procurement/json_fields.py). The stored JSON reads back unchanged."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from procurement.models import Recommendation, Workload

SPEC = {"name": "q", "task": "qlora", "model": {"preset": "llama-3.1-8b"}, "training_tokens": 1e9}
RESULTS = [{"provider": "aws", "reasons": ['quoted "text" and a \\ backslash', "é"], "total_cost": "12.34"}]


@pytest.mark.django_db
def test_rankings_are_bulk_inserted_without_unnest_and_read_back_unchanged():
    workloads = Workload.objects.bulk_create(
        Workload(name=f"w{i}", task="qlora", spec=SPEC) for i in range(3)
    )
    rows = [Recommendation(workload=w, results=RESULTS, prices_used=[], fingerprint="f") for w in workloads]
    with CaptureQueriesContext(connection) as queries:
        Recommendation.objects.bulk_create(rows)
    inserts = [query["sql"] for query in queries if query["sql"].startswith("INSERT")]
    assert len(inserts) == 1 and "UNNEST" not in inserts[0].upper()
    assert [row.results for row in Recommendation.objects.order_by("pk")] == [RESULTS] * 3


@pytest.mark.django_db
def test_stored_rankings_are_compressed_with_lz4_on_postgresql():
    if connection.vendor != "postgresql" or connection.pg_version < 140000:
        pytest.skip("column compression is PostgreSQL's, from version 14")
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT attname, attcompression FROM pg_attribute WHERE attrelid = "
            "'procurement_recommendation'::regclass AND attname IN ('results', 'prices_used') ORDER BY attname"
        )
        assert cursor.fetchall() == [("prices_used", "l"), ("results", "l")]
