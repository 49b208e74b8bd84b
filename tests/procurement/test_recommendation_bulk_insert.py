"""Rankings bulk-inserted with one plain multi-row INSERT (issue 26, "Speed"): Django's UNNEST form made
psycopg escape every quote of ~76 KB of JSON per row in Python (procurement/json_fields.py); a recompute
chunk stores its rankings with COPY on PostgreSQL (procurement/bulk_copy.py). The stored JSON reads back
unchanged either way."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from procurement.bulk_copy import copy_insert
from procurement.models import ChangeEvent, Recommendation, Workload

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
def test_change_events_are_bulk_inserted_without_unnest_and_read_back_unchanged():
    """A recompute chunk stores up to one change event per workload in one insert: same form as its rankings."""
    workload = Workload.objects.create(name="w", task="qlora", spec=SPEC)
    before, after = {"provider": 'a "quoted" \\ name', "total_cost": "1.00"}, {"spot_usable": False}
    events = [ChangeEvent(kind="cheapest_option", workload=workload, before=before, after=after)]
    events += [ChangeEvent(kind="spot_verdict", workload=workload, before=after, after=before)]
    with CaptureQueriesContext(connection) as queries:
        ChangeEvent.objects.bulk_create(events)
    inserts = [query["sql"] for query in queries if query["sql"].startswith("INSERT")]
    assert len(inserts) == 1 and "UNNEST" not in inserts[0].upper()
    stored = ChangeEvent.objects.order_by("pk").values_list("before", "after")
    assert list(stored) == [(before, after), (after, before)]


@pytest.mark.django_db
def test_stored_rankings_are_compressed_with_lz4_on_postgresql():
    if connection.vendor != "postgresql" or connection.pg_version < 140000:
        pytest.skip("column compression is PostgreSQL's, from version 14")
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT attname, attcompression FROM pg_attribute WHERE attrelid = "
            "'procurement_recommendation'::regclass AND attname IN ('results', 'prices_used', 'first_result') "
            "ORDER BY attname"
        )
        # 0016 changed results to text, a rewrite that must keep lz4 (without it: pglz, 3x larger)
        assert cursor.fetchall() == [("first_result", "l"), ("prices_used", "l"), ("results", "l")]


@pytest.mark.django_db
def test_copy_insert_stores_what_bulk_create_stores():
    """A recompute chunk's rankings go in with COPY on PostgreSQL (procurement/bulk_copy.py): the text that
    COPY escapes (tabs, newlines, backslashes, quotes, non-ASCII) reads back unchanged, every field as the
    ORM would store it (``auto_now_add`` stamped, a missing user NULL)."""
    workloads = Workload.objects.bulk_create(
        Workload(name=f"w{i}", task="qlora", spec=SPEC) for i in range(2)
    )
    awkward = RESULTS + [{"reasons": ["tab\there", "line\nbreak", "\\N", "back\\slash", "\u00e9\u20ac"]}]
    rows = [
        Recommendation(
            workload=w,
            parameters={"top": 20},
            spec=SPEC,
            results=awkward,
            prices_used=[{"a": 1}],
            fingerprint=str(i),
        )
        for i, w in enumerate(workloads)
    ]
    copy_insert(rows)
    stored = list(
        Recommendation.objects.order_by("fingerprint").values(
            "workload_id",
            "parameters",
            "spec",
            "results",
            "prices_used",
            "fingerprint",
            "saved_by_id",
            "computed_at",
        )
    )
    assert [row.pop("computed_at") is not None for row in stored] == [True, True]
    assert stored == [
        {
            "workload_id": w.pk,
            "parameters": {"top": 20},
            "spec": SPEC,
            "results": awkward,
            "prices_used": [{"a": 1}],
            "fingerprint": str(i),
            "saved_by_id": None,
        }
        for i, w in enumerate(workloads)
    ]
    copy_insert([])  # nothing to store: no statement
    assert Recommendation.objects.count() == 2
