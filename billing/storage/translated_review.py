"""The spend review's SQL (review_sql.py, DuckDB's dialect) translated per engine with sqlglot (issue 28,
item 2).

review_sql.py keeps the one copy of the statements (GPU sums, every row's effective cost, the
breakdowns), all over a relation `spend` that DuckDB fills with the period's rows of the granted teams.
Here the same statements are given a `spend` CTE of the engine's own rows, `WITH spend AS (SELECT *
FROM <rows> WHERE <period and scope>)`, then translated: Trino for Athena, Spark SQL, GoogleSQL for
BigQuery. `<rows>` is a table of the review's columns (Spark: a view over the imports' Parquet) or a CTE
over an export where it lands (export_relations.py, Athena). The period is UTC days; values (dates, team
names) are literals built by sqlglot, never pasted text, so a team name cannot change a statement.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence

import sqlglot
from sqlglot import exp
from sqlglot.errors import ErrorLevel

from billing.review.engine import BREAKDOWNS
from billing.storage import allocation_sql, review_sql

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


def review_statements() -> dict[str, str]:
    """Statement name -> review_sql's DuckDB SQL over `spend`: "gpu", "all_effective" and each breakdown."""
    statements = {
        "gpu": review_sql.GPU_SUMS.format(gpu=review_sql.GPU_USAGE),
        "all_effective": review_sql.ALL_EFFECTIVE,
    }
    for name, key in BREAKDOWNS.items():
        statements[name] = review_sql.BREAKDOWN.format(
            label=review_sql.LABELS[key], key=review_sql.KEYS[key], gpu=review_sql.GPU_USAGE
        )
    return statements


def scoped_statements(
    start: dt.date,
    end: dt.date,
    allowed_teams: Sequence[str] = (),
    *,
    rows: str = "spend_rows",
    ctes: str = "",
    statements: dict[str, str] | None = None,
) -> dict[str, str]:
    """The statements (review_statements() unless given) with `spend` as the period's rows of `rows` (a
    table, or the last of `ctes`, DuckDB CTE definitions without WITH) of the granted teams; still DuckDB
    SQL."""
    spend = f"spend AS (SELECT * FROM {rows} WHERE {scope_condition(start, end, allowed_teams)})"  # noqa: S608 (fixed SQL; literals built by sqlglot)
    prefix = f"WITH {ctes + ', ' if ctes else ''}{spend}"
    chosen = review_statements() if statements is None else statements
    return {name: f"{prefix} {sql}" for name, sql in chosen.items()}


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
    *,
    rows: str = "spend_rows",
    ctes: str = "",
) -> dict:
    """duckdb_review.review_sums' answer, each statement translated for `engine` and run by `run`
    (rows as tuples; numbers as ints or their text, as Athena returns them)."""
    found: dict = {}
    for name, sql in scoped_statements(start, end, allowed_teams, rows=rows, ctes=ctes).items():
        answer = run(translate(sql, engine))
        if name == "gpu":
            found[name] = tuple(_int(value) for value in answer[0]) if answer else (0, 0, 0, 0)
        elif name == "all_effective":
            found[name] = _int(answer[0][0]) if answer else 0
        else:
            found[name] = {
                str(label): (_int(effective), _int(hours)) for label, effective, hours, _ in answer
            }
    return found


def team_sums_statement(
    start: dt.date,
    end: dt.date,
    allowed_teams: Sequence[str] = (),
    *,
    rows: str = "spend_rows",
    samples: str = "samples",
) -> str:
    """The showback's sums (allocation_sql.TEAM_SUMS) over the period's rows of `rows` of the granted
    teams and the utilization samples in `samples` (a table of resource_id, hour, utilization_pct);
    still DuckDB SQL, for translate()."""
    scoped = f"(SELECT * FROM {rows} WHERE {scope_condition(start, end, allowed_teams)})"  # noqa: S608 (fixed SQL; literals built by sqlglot)
    return allocation_sql.team_sums_sql(scoped, samples)


def team_sums_with(
    run: Callable[[str], list[tuple]],
    engine: str,
    start: dt.date,
    end: dt.date,
    allowed_teams: Sequence[str] = (),
    *,
    rows: str = "spend_rows",
    samples: str = "samples",
) -> list[tuple[str, str, str, int, int, int]]:
    """duckdb_allocation.dataset_team_sums' answer from team_sums_statement translated for `engine`."""
    sql = translate(team_sums_statement(start, end, allowed_teams, rows=rows, samples=samples), engine)
    return [
        (str(team), str(currency), str(month), _int(effective), _int(idle), _int(hours))
        for team, currency, month, effective, idle, hours in run(sql)
    ]


def _int(value) -> int:
    return 0 if value is None or value == "" else int(value)
