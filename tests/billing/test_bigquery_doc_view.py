"""docs/billing.md's BigQuery section (issue 28, item 2: "shows how BigQuery plugs in the same way"), held
to the review it claims to serve (stop-46 outside audit, fix 5: the section had no test).

The GoogleSQL view is taken out of the page itself, parsed with sqlglot's `bigquery` dialect, and every
review statement, translated for BigQuery over that view (translated_review.scoped_statements(rows=
"billing.export_rows") then translate(..., "bigquery"), as the page says to run them), must resolve each
column it reads to a column the view provides (sqlglot's qualify, validating). Leaving any one of the
view's columns out must break at least one statement: none of the twelve is dead weight.

The export columns the view reads are the Cloud Billing detailed export's (Google, "Structure of Detailed
data export", docs.cloud.google.com/billing/docs/how-to/export-data-bigquery-tables/detailed-usage:
usage_start_time, cost_type, labels (key, value), cost, credits (amount), usage.amount_in_pricing_units,
sku.description). GCP's billed amount is `cost` + credits (the schema's `cost` is "before any credits";
docs/billing.md cites it): the view's billed micro-units add the credits.
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import pytest
import sqlglot
from sqlglot import exp
from sqlglot.errors import OptimizeError
from sqlglot.optimizer.qualify import qualify

from billing.storage.review_sql import SUMS_READ
from billing.storage.translated_review import scoped_statements, translate

DOC = Path(__file__).resolve().parents[2] / "docs" / "billing.md"
HEADING = "**BigQuery (GCP's billing export) plugs in the same way.**"
# The view must give the review the columns it reads from a dataset, in that order: the review's own list,
# so that a column added to or renamed in the review fails here until the documented view follows.
VIEW_COLUMNS = list(SUMS_READ)
# the detailed export's fields the view may read (Google's schema page above); `c` is the credits alias
EXPORT_FIELDS = {"usage_start_time", "cost_type", "labels", "cost", "credits", "usage", "sku", "key", "value"}


def documented_view() -> exp.Create:
    text = DOC.read_text()
    section = text[text.index(HEADING) :]
    block = re.search(r"```sql\n(.*?)```", section, re.S)
    assert block, "the BigQuery section lost its view"
    return sqlglot.parse_one(block.group(1), read="bigquery")


def statements() -> dict[str, exp.Expression]:
    found = scoped_statements(dt.date(2026, 5, 1), dt.date(2026, 6, 1), ("ml",), rows="billing.export_rows")
    return {
        name: sqlglot.parse_one(translate(sql, "bigquery"), read="bigquery") for name, sql in found.items()
    }


def resolves(tree: exp.Expression, columns: list[str]) -> bool:
    schema = {"billing": {"export_rows": dict.fromkeys(columns, "STRING")}}
    try:
        qualify(tree.copy(), schema=schema, dialect="bigquery", validate_qualify_columns=True)
    except OptimizeError:
        return False
    return True


def test_the_documented_view_parses_as_googlesql_and_names_the_reviews_columns():
    view = documented_view()
    assert view.kind == "VIEW" and view.this.sql("bigquery") == "billing.export_rows"
    assert [column.alias_or_name for column in view.expression.selects] == VIEW_COLUMNS


def test_every_translated_statement_reads_only_columns_the_view_provides():
    columns = [column.alias_or_name for column in documented_view().expression.selects]
    found = statements()
    assert set(found) >= {"gpu", "all_effective", "by_team", "by_project", "by_gpu"}
    for name, tree in found.items():
        assert resolves(tree, columns), name


@pytest.mark.parametrize("left_out", VIEW_COLUMNS)
def test_each_of_the_views_columns_is_read_by_some_statement(left_out):
    columns = [column for column in VIEW_COLUMNS if column != left_out]
    assert not all(resolves(tree, columns) for tree in statements().values())


def test_the_view_reads_only_the_exports_documented_fields_and_bills_cost_plus_credits():
    view = documented_view()
    select = view.expression
    # the first part of each column the view reads (`sku.description` -> sku); g (its gpu_types CTE) and
    # c (a credit) are its own aliases
    read = {column.parts[0].name for column in select.find_all(exp.Column)} - {"g", "c"}
    assert read == EXPORT_FIELDS, read ^ EXPORT_FIELDS
    by_name = {column.alias_or_name: column for column in select.selects}
    for money in ("billed_micros", "effective_micros"):
        named = {column.name for column in by_name[money].find_all(exp.Column)}
        assert {"cost", "amount"} <= named, money  # cost + the row's credits.amount
        assert any(isinstance(u, exp.Unnest) for u in by_name[money].find_all(exp.Unnest)), money
