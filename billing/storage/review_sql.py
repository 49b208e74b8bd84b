"""The spend review's SQL, written once in DuckDB's dialect and translated per engine with sqlglot
(issue 28, item 2).

The fragments are duckdb_review.py's (what GPU usage is, the breakdown labels, the sums); here they
become whole statements over one relation, `spend`, with the review's columns (money and hours as
exact int64 micro-units), the period and the team scope in the WHERE clause. Each engine gets the same
statements through `translate`: DuckDB runs them as written, Athena as Trino SQL, Spark SQL as Spark's,
BigQuery as GoogleSQL. Where `spend` comes from is the engine's business: DuckDB and Spark read the
imports' Parquet, Athena a view over the export table in S3 (export_relations.py).

Values (dates, team names) enter as SQL literals built by sqlglot, never pasted text, so a team name
cannot change a statement.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence

import sqlglot
from sqlglot import exp
from sqlglot.errors import ErrorLevel

from billing.review.engine import BREAKDOWNS
from billing.storage.duckdb_review import GPU_USAGE, LABELS, SUMS

# our name for an engine -> sqlglot's dialect
DIALECTS = {"duckdb": "duckdb", "athena": "trino", "spark": "spark", "bigquery": "bigquery"}


def scope_condition(start: dt.date, end: dt.date, allowed_teams: Sequence[str] = ()) -> str:
    """Charge days [start, end) in UTC (every engine runs in UTC) and, when given, the granted teams."""
    day = exp.cast(exp.column("charge_period_start"), exp.DataType.build("date"))
    condition = exp.and_(
        day >= exp.cast(exp.Literal.string(start.isoformat()), exp.DataType.build("date")),
        day < exp.cast(exp.Literal.string(end.isoformat()), exp.DataType.build("date")),
    )
    if allowed_teams:
        condition = exp.and_(
            condition, exp.column("team").isin(*(exp.Literal.string(str(t)) for t in allowed_teams))
        )
    return condition.sql(dialect="duckdb")


def review_statements(start: dt.date, end: dt.date, allowed_teams: Sequence[str] = ()) -> dict[str, str]:
    """Statement name -> DuckDB SQL over `spend`: "gpu" (billed, effective, list, GPU-hours of GPU
    usage), "all_effective" (every row's effective cost) and each review breakdown (label, effective,
    GPU-hours)."""
    scope = scope_condition(start, end, allowed_teams)
    statements = {
        "gpu": f"SELECT {SUMS} FROM spend WHERE {scope} AND {GPU_USAGE}",  # noqa: S608 (fixed SQL; literals built by sqlglot)
        "all_effective": f"SELECT sum(effective_micros) FROM spend WHERE {scope}",  # noqa: S608
    }
    for name, key in BREAKDOWNS.items():
        statements[name] = (
            f"SELECT {LABELS[key]} AS label, sum(effective_micros), sum(gpu_hours_micros) "  # noqa: S608
            f"FROM spend WHERE {scope} AND {GPU_USAGE} GROUP BY label ORDER BY label"
        )
    return statements


def translate(sql: str, engine: str) -> str:
    """`sql` (DuckDB) in the engine's dialect; a construct sqlglot cannot carry over raises, never
    passes through half-translated. A map lookup (`tags['team']`) is NULL for a missing key in DuckDB
    but an error in Trino: it is marked safe, which Trino writes as element_at and Spark as
    try_element_at (BigQuery has no maps: its billing export's labels are an array of key-value structs,
    docs/billing.md)."""
    tree = sqlglot.parse_one(sql, read="duckdb")
    for bracket in tree.find_all(exp.Bracket) if engine in ("athena", "spark") else ():
        bracket.set("safe", True)
    return tree.sql(dialect=DIALECTS[engine], unsupported_level=ErrorLevel.RAISE)


def review_sums_with(
    run: Callable[[str], list[tuple]],
    engine: str,
    start: dt.date,
    end: dt.date,
    allowed_teams: Sequence[str] = (),
    relation: str = "",
) -> dict:
    """duckdb_review.review_sums' answer, each statement translated for `engine` and run by `run`
    (rows as tuples; numbers as ints or their text, as Athena returns them). `relation` is a DuckDB
    `WITH spend AS (…)` prefix, for engines where `spend` is not a table already."""
    found: dict = {}
    for name, sql in review_statements(start, end, allowed_teams).items():
        rows = run(translate(f"{relation} {sql}".strip(), engine))
        if name == "gpu":
            found[name] = tuple(_int(value) for value in rows[0]) if rows else (0, 0, 0, 0)
        elif name == "all_effective":
            found[name] = _int(rows[0][0]) if rows else 0
        else:
            found[name] = {str(label): (_int(effective), _int(hours)) for label, effective, hours in rows}
    return found


def _int(value) -> int:
    return 0 if value is None or value == "" else int(value)
