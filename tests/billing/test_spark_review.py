"""Spark SQL in local mode runs the review's SQL translated by sqlglot (issue 28, item 2): over the same
Parquet, its integers equal DuckDB's (duckdb_review.review_sums, itself equal to the review to the cent,
test_storage_duckdb.py), so the totals agree to the micro-unit, a fortiori to the cent.

One local[2] session for the module (the JVM start is most of the cost: about 10-20 s), the UI off, the
driver bound to 127.0.0.1, the session's time zone UTC (the review's periods are UTC days).
Without pyspark or Java this module skips, and fails under REQUIRE_SERVICES=1 (CI installs both).
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import shutil

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from billing.finance.sections import unused_commitments, unused_rows
from billing.review import selectors
from billing.review.engine import money
from billing.review.service import make_request
from billing.storage import ParquetSpendStore, review_sql
from billing.storage.duckdb_allocation import dataset_team_sums
from billing.storage.duckdb_review import review_sums
from billing.storage.frame_sql import FrameSql
from billing.storage.translated_review import review_sums_with, scoped_statements, team_sums_with, translate
from tests.billing.catalog import import_demo_billing

pytestmark = [pytest.mark.spark, pytest.mark.django_db]
MAY_JUNE = (dt.date(2026, 5, 1), dt.date(2026, 7, 1))


def _missing() -> str:
    try:
        import pyspark  # noqa: F401
    except ImportError:
        return "pyspark is not installed (pip install -r requirements-spark.txt)"
    return "" if shutil.which("java") else "no Java runtime (apt-get install openjdk-17-jre-headless)"


@pytest.fixture(scope="module")
def spark():
    missing = _missing()
    if missing:
        if os.environ.get("REQUIRE_SERVICES") == "1":
            pytest.fail(missing)
        pytest.skip(missing)
    from pyspark.sql import SparkSession

    session = (
        SparkSession.builder.master("local[2]")
        .appName("gpuledger-review-sql")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
    logging.getLogger("py4j").setLevel(
        logging.WARNING
    )  # its connection closing logs after pytest's capture ends


def spark_sums(spark, store, start, end, teams=()):
    spark.read.parquet(*[str(path) for path in store.files(start, end)]).createOrReplaceTempView("spend_rows")
    return review_sums_with(
        lambda sql: [tuple(row) for row in spark.sql(sql).collect()], "spark", start, end, teams
    )


def test_spark_gives_duckdbs_review_sums_on_the_demo_bill_whole_and_in_one_teams_scope(spark, tmp_path):
    import_demo_billing(tmp_path, months=2)
    store = ParquetSpendStore(tmp_path / "store")
    store.write(selectors.spend_frame(make_request(start=MAY_JUNE[0], end=MAY_JUNE[1])))
    expected = review_sums(store, *MAY_JUNE)
    assert expected["gpu"][1] > 0 and len(expected["by_month"]) == 2  # two months of GPU spend, not empty
    assert spark_sums(spark, store, *MAY_JUNE) == expected
    # June only, one team's scope: the period and the scope are in Spark's WHERE clause too
    teams = sorted(expected["by_team"])[:1]
    june = (dt.date(2026, 6, 1), dt.date(2026, 7, 1))
    scoped = review_sums(store, *june, teams)
    assert set(scoped["by_team"]) == set(teams) and list(scoped["by_month"]) == ["2026-06"]
    assert spark_sums(spark, store, *june, teams) == scoped


def spark_team_sums(spark, store, start, end, utilization, teams=()):
    spark.read.parquet(*[str(path) for path in store.files(start, end)]).createOrReplaceTempView("spend_rows")
    samples = [
        (str(row.resource_id), row.hour.to_pydatetime(), float(row.utilization_pct))
        for row in utilization.itertuples()
    ]
    schema = "resource_id string, hour timestamp, utilization_pct double"
    spark.createDataFrame(samples, schema).createOrReplaceTempView("samples")
    return team_sums_with(
        lambda sql: [tuple(row) for row in spark.sql(sql).collect()], "spark", start, end, teams
    )


def test_spark_gives_duckdbs_showback_sums_with_the_utilization_join(spark, tmp_path):
    # the showback's per-team sums (allocation_sql.TEAM_SUMS: the interval join of the utilization
    # samples, idle rounded half to even per line) translated by sqlglot equal DuckDB's to the micro-unit
    import_demo_billing(tmp_path, months=2)
    request = make_request(start=MAY_JUNE[0], end=MAY_JUNE[1])
    store = ParquetSpendStore(tmp_path / "store")
    store.write(selectors.spend_frame(request))  # the sampled resources' lines kept as bill lines
    utilization = selectors.utilization_frame(request)
    expected = dataset_team_sums(store, *MAY_JUNE, utilization)
    assert sum(idle for *_, idle, _ in expected) > 0, "the demo bill has idle GPU cost to join"
    assert spark_team_sums(spark, store, *MAY_JUNE, utilization) == expected
    teams = sorted({team for team, *_ in expected if team})[:1]
    scoped = dataset_team_sums(store, *MAY_JUNE, utilization, allowed_teams=teams)
    assert {team for team, *_ in scoped} == set(teams)
    assert spark_team_sums(spark, store, *MAY_JUNE, utilization, teams) == scoped


# the review's other sums (sql44: engine.spend_review runs them in DuckDB over the rows it prepared, the
# unused-commitment findings too), each as its own statement over `spend`
FRAME_STATEMENTS = {
    "unused": review_sql.GPU_SUMS.format(gpu=review_sql.UNUSED),
    "months_by_category": review_sql.MONTH_CATEGORIES,
    "coverage_hours": review_sql.COVERAGE_HOURS,
    "undetermined_lines": review_sql.UNDETERMINED_LINES,
}


def test_spark_gives_duckdbs_months_coverage_undetermined_and_unused_findings(spark, tmp_path):
    import_demo_billing(tmp_path, months=2)
    store = ParquetSpendStore(tmp_path / "store")
    store.write(selectors.spend_frame(make_request(start=MAY_JUNE[0], end=MAY_JUNE[1])))
    files = [str(path) for path in store.files(*MAY_JUNE)]
    spark.read.parquet(*files).createOrReplaceTempView("spend_rows")
    connection = duckdb.connect()
    connection.execute("SET TimeZone = 'UTC'")
    connection.read_parquet(files).create_view("spend_rows")
    found = {}
    for name, sql in scoped_statements(*MAY_JUNE, statements=FRAME_STATEMENTS).items():
        expected = [tuple(row) for row in connection.execute(translate(sql, "duckdb")).fetchall()]
        assert [tuple(row) for row in spark.sql(translate(sql, "spark")).collect()] == expected, name
        found[name] = expected
    # not empty: the demo bill's two months, its reservation's unused hours and its coverage
    assert len(found["months_by_category"]) >= 2 and found["coverage_hours"]
    assert found["unused"][0][1] > 0


def test_spark_gives_the_reviews_unused_findings_over_the_rows_the_review_sums(spark, tmp_path):
    """UNUSED_FINDINGS in Spark over the rows the review hands DuckDB (sections.unused_rows: the period's
    unused rows attributed to GPU and converted, sqlb44; it read the raw Parquet lines before), written to
    Parquet as they are: Spark's answer equals DuckDB's over the same frame (frame_sql.py) and the review's
    own findings (sections.unused_commitments), so equality proves the review's figures."""
    import_demo_billing(tmp_path, months=2)
    request = make_request(start=MAY_JUNE[0], end=MAY_JUNE[1])
    rows = unused_rows(selectors.spend_frame(request), request)
    assert not rows.empty, "the demo bill's reservation has unused hours"
    path = tmp_path / "unused_rows.parquet"
    # microseconds, as the store writes (Spark reads no nanosecond Parquet timestamps); the charge
    # starts are whole hours, so nothing is cut
    pq.write_table(pa.Table.from_pandas(rows, preserve_index=False), path, coerce_timestamps="us")
    spark.read.parquet(str(path)).createOrReplaceTempView("spend")
    found = [tuple(row) for row in spark.sql(translate(review_sql.UNUSED_FINDINGS, "spark")).collect()]
    with FrameSql() as sql:
        assert found == sql.register("spend", rows).rows(review_sql.UNUSED_FINDINGS)
    review = [
        (x["commitment_id"], x["days_unused"], x["first_day"], x["last_day"], x["unused_cost"])
        for x in unused_commitments(selectors.spend_frame(request), request)
    ]
    assert review == [
        (
            name or "(no commitment id in the bill)",
            days,
            first.isoformat(),
            last.isoformat(),
            money(micros, "USD"),
        )
        for name, days, first, last, micros in found
    ]
