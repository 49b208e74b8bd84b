"""The review's SQL written once (DuckDB) and translated with sqlglot (issue 28, item 2).

- review_sql.py's statements, scoped here, over the imports' Parquet equal duckdb_review.review_sums, the sums already proven
  equal to the review to the cent (test_storage_duckdb.py).
- The Athena relation over a CUR 2.0 table, run by DuckDB over a Parquet CUR 2.0 file typed as AWS's
  Athena table types it (timestamps, doubles, a map of tags), gives the same integers as importing that
  file: the CUR lines of test_sources.py (effective 110.08 + 13.17 + 0.9154 + 4.00 + 0 + 7.50; GPU-hours
  2 h × 8 H100 + 1 h × 8 A100 + 1 h × 1 L40S = 25).
- Every statement translates to Trino (Athena), Spark and BigQuery, and each translation parses back in
  its own dialect.
"""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import sqlglot

from billing.imports.importer import import_file
from billing.review import selectors
from billing.review.service import make_request
from billing.storage import ParquetSpendStore, review_sql
from billing.storage.duckdb_review import FRAME_COLUMNS, grouped_sql, review_sums
from billing.storage.export_relations import cur2_relation, focus_relation
from billing.storage.source_review import instance_gpus
from billing.storage.translated_review import DIALECTS, review_sums_with, scoped_statements, translate
from tests.billing.catalog import make_catalog
from tests.billing.test_sources import CUR_HEADER, CUR_ROWS

MAY = (dt.date(2026, 5, 1), dt.date(2026, 6, 1))
TIMES = {"line_item_usage_start_date", "line_item_usage_end_date"}
TEXT = {
    "line_item_line_item_type",
    "line_item_usage_type",
    "product_instance_type",
    "line_item_currency_code",
    "line_item_resource_id",
    "product_region_code",
}
EXTRA_NUMBERS = [
    "pricing_public_on_demand_cost",
    "savings_plan_total_commitment_to_date",
    "savings_plan_used_commitment",
]
GPUS = {"p5.48xlarge": ("h100", Decimal(8)), "p4d.24xlarge": ("a100", Decimal(8))}  # translation tests only


def cur2_parquet(path) -> None:
    """CUR_ROWS typed as the Data Exports Athena table types them."""
    columns = {}
    for index, name in enumerate(CUR_HEADER):
        values = [row[index] for row in CUR_ROWS]
        if name in TIMES:
            columns[name] = pa.array(
                [dt.datetime.fromisoformat(v) for v in values], pa.timestamp("us", tz="UTC")
            )
        elif name == "resource_tags":
            columns[name] = pa.array(
                [list(json.loads(v).items()) for v in values], pa.map_(pa.string(), pa.string())
            )
        elif name in TEXT:
            columns[name] = pa.array(values, pa.string())
        else:
            columns[name] = pa.array([float(v) if v else None for v in values], pa.float64())
    for name in EXTRA_NUMBERS:
        columns[name] = pa.nulls(len(CUR_ROWS), pa.float64())
    pq.write_table(pa.table(columns), path)


def duckdb_run(connection):
    return lambda sql: connection.execute(sql).fetchall()


@pytest.fixture
def imported_may(tmp_path, db):
    make_catalog()
    path = tmp_path / "cur2.parquet"
    cur2_parquet(path)
    result = import_file(path, fmt="cur")
    assert result.rows_seen == 6
    store = ParquetSpendStore(tmp_path / "store")
    store.write(selectors.spend_frame(make_request(start=MAY[0], end=MAY[1])))
    return path, store


def test_the_statements_equal_duckdb_review_on_the_imports_parquet(imported_may):
    _, store = imported_may
    expected = review_sums(store, *MAY)
    connection = duckdb.connect()
    connection.execute("SET TimeZone = 'UTC'")
    connection.execute(
        "CREATE TABLE spend_rows AS SELECT * FROM read_parquet(?)", [[str(p) for p in store.files(*MAY)]]
    )
    assert review_sums_with(duckdb_run(connection), "duckdb", *MAY) == expected
    assert expected["gpu"][3] == 25_000_000  # GPU-hours in micro-units, hand-computed above
    assert expected["all_effective"] == 135_665_400


def test_the_athena_relation_over_cur2_gives_the_imports_integers(imported_may):
    path, store = imported_may
    connection = duckdb.connect()
    connection.execute("SET TimeZone = 'UTC'")
    connection.execute("CREATE SCHEMA cur")
    connection.execute(f"CREATE VIEW cur.gpu_cur AS SELECT * FROM read_parquet('{path}')")
    relation = cur2_relation("cur.gpu_cur", instance_gpus("aws"))
    found = review_sums_with(duckdb_run(connection), "duckdb", *MAY, rows="export_rows", ctes=relation)
    assert found == review_sums(store, *MAY)


def test_a_team_scope_is_a_literal_that_cannot_change_the_statement():
    statements = scoped_statements(*MAY, allowed_teams=["ml", "x') OR (1=1"])
    tree = sqlglot.parse_one(statements["gpu"], read="duckdb")
    teams = [literal.this for literal in tree.find(sqlglot.exp.In).expressions]
    assert teams == ["ml", "x') OR (1=1"]


@pytest.mark.parametrize("engine", ["athena", "spark", "bigquery"])
def test_every_statement_translates_and_parses_back_in_its_dialect(engine):
    exports = [cur2_relation("cur.gpu_cur", GPUS), focus_relation("focus.gpu_focus", GPUS)]
    for ctes in (
        "",
        *(exports if engine != "bigquery" else []),
    ):  # BigQuery's export is neither (docs/billing.md)
        rows = "export_rows" if ctes else "spend_rows"
        for name, sql in scoped_statements(*MAY, ["ml"], rows=rows, ctes=ctes).items():
            translated = translate(sql, engine)
            assert sqlglot.parse_one(translated, read=DIALECTS[engine]) is not None, name
    month = translate(scoped_statements(*MAY)["by_month"], engine)
    assert {
        "athena": "DATE_FORMAT(charge_period_start, '%Y-%m')",
        "spark": "DATE_FORMAT(charge_period_start, 'yyyy-MM')",
        "bigquery": "FORMAT_DATE('%Y-%m', charge_period_start)",
    }[engine] in month


def test_a_missing_tag_is_null_on_athena_not_an_error():
    # Trino's map[key] fails on a missing key; DuckDB's is NULL: the translation keeps DuckDB's meaning
    translated = translate(
        "WITH " + cur2_relation("cur.gpu_cur", GPUS) + " SELECT team FROM export_rows", "athena"
    )
    assert "ELEMENT_AT(resource_tags, 'user_team')" in translated
    assert "TRY_ELEMENT_AT(resource_tags, 'user_team')" in translate(
        "WITH " + cur2_relation("t", GPUS) + " SELECT team FROM export_rows", "spark"
    )


@pytest.mark.parametrize("engine", ["athena", "spark"])
def test_the_review_frame_grouping_translates_and_parses_back(engine):
    # the review's frame summed past the resource (review_sql.REVIEW_RESOURCE) is review SQL too
    sql = grouped_sql("SELECT * FROM spend_rows_table", FRAME_COLUMNS, per_resource=False)
    translated = translate(sql, engine)
    tree = sqlglot.parse_one(translated, read=DIALECTS[engine])
    assert tree.find(sqlglot.exp.Case) is not None and tree.find(sqlglot.exp.In) is not None


@pytest.mark.parametrize("engine", ["athena", "spark", "bigquery"])
def test_the_reviews_frame_sums_and_unused_findings_translate_and_parse_back(engine):
    # sql44: the statements engine.spend_review and the unused-commitment findings run in DuckDB
    statements = {
        "unused": review_sql.GPU_SUMS.format(gpu=review_sql.UNUSED),
        "months_by_category": review_sql.MONTH_CATEGORIES,
        "coverage_hours": review_sql.COVERAGE_HOURS,
        "undetermined_lines": review_sql.UNDETERMINED_LINES,
        "unused_findings": review_sql.UNUSED_FINDINGS,
    }
    for name, sql in scoped_statements(*MAY, ["ml"], statements=statements).items():
        translated = translate(sql, engine)
        assert sqlglot.parse_one(translated, read=DIALECTS[engine]) is not None, name
