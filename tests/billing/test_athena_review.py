"""The review on Amazon Athena, against botocore's Stubber (issue 28, item 2).

The answers have the shapes Athena's API reference gives (docs.aws.amazon.com/athena/latest/APIReference:
StartQueryExecution, GetQueryExecution's QueryExecution.Status with State and StateChangeReason,
GetQueryResults' ResultSet.Rows[].Data[].VarCharValue with ResultSetMetadata.ColumnInfo, the column names
as the first row of the first page only, NextToken between pages, a NULL as a Datum without VarCharValue).
"""

from __future__ import annotations

import datetime as dt

import boto3
import pytest
from botocore.stub import Stubber

from billing.models import BillingExportSource
from billing.storage.athena import AthenaQueryError, AthenaQueryTimeout, AthenaRunner
from billing.storage.source_review import SourceNotQueryable, export_relation, source_review_sums
from billing.storage.translated_review import scoped_statements, translate

QUERY_ID = "c1d2e3f4-0a1b-4c5d-8e9f-0123456789ab"
SUBMITTED = dt.datetime(2026, 6, 2, 8, 0, tzinfo=dt.UTC)
MAY = (dt.date(2026, 5, 1), dt.date(2026, 6, 1))


def column(name: str, kind: str) -> dict:
    return {
        "CatalogName": "hive",
        "SchemaName": "",
        "TableName": "",
        "Name": name,
        "Label": name,
        "Type": kind,
        "Precision": 19 if kind == "bigint" else 2147483647,
        "Scale": 0,
        "Nullable": "UNKNOWN",
        "CaseSensitive": kind == "varchar",
    }


def results(
    rows: list[list[str | None]], columns: list[tuple[str, str]], *, header: bool, token: str = ""
) -> dict:
    cells = [[{} if value is None else {"VarCharValue": value} for value in row] for row in rows]
    if header:
        cells.insert(0, [{"VarCharValue": name} for name, _ in columns])
    answer = {
        "UpdateCount": 0,
        "ResultSet": {
            "Rows": [{"Data": row} for row in cells],
            "ResultSetMetadata": {"ColumnInfo": [column(n, k) for n, k in columns]},
        },
    }
    return answer | ({"NextToken": token} if token else {})


def execution(state: str, reason: str = "") -> dict:
    status = {"State": state, "SubmissionDateTime": SUBMITTED}
    if reason:
        status["StateChangeReason"] = reason
    return {"QueryExecution": {"QueryExecutionId": QUERY_ID, "StatementType": "DML", "Status": status}}


def stub_query(
    stub: Stubber, sql: str | None, states: list[str], pages: list[dict], reason: str = ""
) -> None:
    params = {"QueryString": sql, "QueryExecutionContext": {"Database": "cur"}, "WorkGroup": "primary"}
    stub.add_response("start_query_execution", {"QueryExecutionId": QUERY_ID}, params if sql else None)
    for state in states:
        stub.add_response("get_query_execution", execution(state, reason), {"QueryExecutionId": QUERY_ID})
    for number, page in enumerate(pages):
        expected = {"QueryExecutionId": QUERY_ID} | (
            {"NextToken": pages[number - 1]["NextToken"]} if number else {}
        )
        stub.add_response("get_query_results", page, expected)


@pytest.fixture
def athena():
    client = boto3.client("athena", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")
    with Stubber(client) as stub:
        yield client, stub
        stub.assert_no_pending_responses()


def runner(client, sleeps: list | None = None, **kwargs) -> AthenaRunner:
    return AthenaRunner(client, database="cur", sleep=(sleeps if sleeps is not None else []).append, **kwargs)


def test_it_polls_queued_and_running_then_reads_every_page(athena):
    client, stub = athena
    columns = [("label", "varchar"), ("effective", "bigint")]
    stub_query(
        stub,
        "SELECT 1",
        ["QUEUED", "RUNNING", "SUCCEEDED"],
        [
            results([["2026-04", "5"], ["2026-05", "7"]], columns, header=True, token="page-2"),
            results([["2026-06", None]], columns, header=False),
        ],
    )
    sleeps: list = []
    rows = runner(client, sleeps, poll_s=0.5)("SELECT 1")
    assert rows == [("2026-04", "5"), ("2026-05", "7"), ("2026-06", None)]  # header dropped once; NULL kept
    assert sleeps == [0.5, 0.5]  # QUEUED, RUNNING


def test_a_failed_query_says_athenas_reason(athena):
    client, stub = athena
    reason = "COLUMN_NOT_FOUND: line 1:8: Column 'line_item_usage_start_date' cannot be resolved"
    stub_query(stub, "SELECT 1", ["RUNNING", "FAILED"], [], reason=reason)
    with pytest.raises(AthenaQueryError, match="failed: COLUMN_NOT_FOUND: line 1:8") as raised:
        runner(client)("SELECT 1")
    assert (raised.value.query_id, raised.value.state) == (QUERY_ID, "FAILED")


def test_a_cancelled_query_is_an_error_too(athena):
    client, stub = athena
    stub_query(stub, "SELECT 1", ["CANCELLED"], [], reason="Query cancelled by user")
    with pytest.raises(AthenaQueryError, match="cancelled: Query cancelled by user"):
        runner(client)("SELECT 1")


def test_a_query_past_its_time_is_stopped_and_says_so(athena):
    client, stub = athena
    now = [0.0]

    def sleep(seconds):
        now[0] += seconds

    stub_query(stub, "SELECT 1", ["RUNNING"] * 4, [])
    stub.add_response("stop_query_execution", {}, {"QueryExecutionId": QUERY_ID})
    bounded = AthenaRunner(client, database="cur", timeout_s=3, poll_s=1, sleep=sleep, clock=lambda: now[0])
    with pytest.raises(AthenaQueryTimeout, match="still RUNNING after 3 s; stopped"):
        bounded("SELECT 1")
    assert now[0] == 3  # polled at 0, 1, 2, 3 s: bounded, never forever


@pytest.mark.django_db
def test_an_athena_source_runs_the_translated_review_and_reads_its_sums(athena):
    from tests.billing.catalog import make_catalog

    make_catalog()
    client, stub = athena
    source = BillingExportSource.objects.create(
        name="cur-athena",
        export_format="cur",
        bucket="b",
        query_engine="athena",
        athena_database="cur",
        athena_table="gpu_cur",
    )
    relation = export_relation(source)
    statements = scoped_statements(*MAY, ["ml"], rows="export_rows", ctes=relation)
    numbers = [("a", "bigint"), ("b", "bigint"), ("c", "bigint"), ("d", "bigint")]
    answers = {
        "gpu": [["110080000", "110080000", None, "16000000"]],
        "all_effective": [["117580000"]],
    }
    for name, sql in statements.items():
        # a breakdown answers label, effective cost, GPU-hours and billed cost (review_sql.BREAKDOWN)
        rows = answers.get(name, [["ml" if name == "by_team" else "x", "110080000", "16000000", "110080000"]])
        stub_query(
            stub,
            translate(sql, "athena"),
            ["SUCCEEDED"],
            [results(rows, numbers[: len(rows[0])], header=True)],
        )
    sums = source_review_sums(source, *MAY, ["ml"], athena_client=client)
    assert sums["gpu"] == (110_080_000, 110_080_000, 0, 16_000_000)
    assert sums["all_effective"] == 117_580_000
    assert sums["by_team"] == {"ml": (110_080_000, 16_000_000)}
    sent = translate(statements["gpu"], "athena")
    assert (
        '"cur"."gpu_cur"' in sent
        and "team IN ('ml')" in sent
        and "ELEMENT_AT(resource_tags, 'user_team')" in sent
    )


@pytest.mark.django_db
def test_an_athena_source_without_its_table_says_which_field_is_empty():
    source = BillingExportSource(name="half", export_format="focus", bucket="b", query_engine="athena")
    with pytest.raises(SourceNotQueryable, match="half: athena_database and athena_table are empty"):
        export_relation(source)
