"""The spend review's reads and GPU aggregates run in DuckDB over Parquet (issue 28, item 1), the SQL
taken from review_sql.py. A store is anything with `files(start, end)` (the Parquet files of the charge
months a period touches) and `may_repeat_rows(files)` (whether the same rows may be in two of them, so
each row key is counted once):
ImportDatasets, the imports' own datasets, or a ParquetSpendStore. The team scope of an engineer's
granted access is part of the WHERE clause, so other teams' rows are never read into Python.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import tempfile
from collections.abc import Sequence
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa

from billing.review import gpu_scope
from billing.review.commitment_attribution import COMMITMENT_COLUMNS, with_commitment_columns
from billing.review.engine import BREAKDOWNS, REVIEW_COLUMNS, empty_frame
from billing.storage import review_sql
from billing.storage.import_datasets import ImportDatasets
from billing.storage.location import register_datasets
from billing.storage.parquet import ParquetSpendStore

FRAME_COLUMNS = REVIEW_COLUMNS + COMMITMENT_COLUMNS
MEMORY_LIMIT = "128MB"
THREADS = max(1, min(4, os.cpu_count() or 1))
SPILL_FOLDER = Path(tempfile.gettempdir()) / "gpuledger-duckdb-spill"
TIMES = ("charge_period_start", "charge_period_end", "commitment_end")
# The grouped frame is summed by tag set (grouped_sql's by_tag_set: each tag set's JSON read once a group,
# not three times a line; the first review's DuckDB read at 1M bench lines, 8 tag sets, 0.45 -> 0.33 CPU s)
# where the rows have at most this many distinct tag sets; beyond, a tag set a resource or a line would make
# the first step's groups as many as the lines (test_duckdb_review_memory: a tag set a line, 3M lines,
# out of a 96 MB limit by tag set), and the flags are read a line.
TAG_SETS = 10_000
# The grouped frame's files read FILES_A_QUERY at a time (_file_parts). DuckDB keeps about 43 kB of every
# row group a query has read until the query ends, outside its memory_limit (duckdb 2.0.0, measured
# 2026-12-07: a count(*) over the 5M bench lines' 24 files, 384 row groups of about 17,000 rows, peaked
# 11 MiB above the same lines written as 41 row groups; over the 1M lines' 66, 2 MiB; the 24 files read
# one query each, flat), and the import writes a row group a chunk and month: so a query over the whole
# period grew the review's memory with its lines (issue 28: 286 -> 325 MiB from 1M to 5M). Four files
# hold at most 4 x datasets.ROW_GROUPS_PER_FILE row groups (under 3 MiB) however long the period.
FILES_A_QUERY = 4
# A temp table of the grouped frame read a file at a time (_grouped_by_file) is merged again (its groups
# summed, its resources made distinct) once it holds more than this many rows and twice what it held after
# its last merge: a few merges of a few MiB, however many files.
MERGED_ROWS = 10_000


def review_sums(
    store: ParquetSpendStore | ImportDatasets, start: dt.date, end: dt.date, allowed_teams: Sequence[str] = ()
) -> dict:
    """{"gpu": (billed, effective, list, gpu-hours) micro-units of GPU usage, "all_effective": the
    effective micro-units of every row, and each review breakdown name -> {label: (effective,
    gpu-hours)}} of the rows charged in [start, end)."""
    files = [str(path) for path in store.files(start, end)]
    empty = {"gpu": (0, 0, 0, 0), "all_effective": 0, **{name: {} for name in BREAKDOWNS}}
    if not files:
        return empty
    connection = _connection()
    try:
        params = {"files": files, "start": _utc(start), "end": _utc(end), **_pulls(store, files)}
        if allowed_teams:
            params["teams"] = list(allowed_teams)
        scope = review_sql.ENGINE_TEAM_SCOPE if allowed_teams else ""
        where = review_sql.PERIOD.format(scope=scope)
        spend = review_sql.SPEND.format(
            unique=repeated_rows_filter(connection, params, where) if store.may_repeat_rows(files) else "",
            columns=", ".join(review_sql.SUMS_READ),
            bill=_bill(params),
            scope=scope,
        )
        connection.execute(spend, params)
        gpu = connection.execute(review_sql.GPU_SUMS.format(gpu=review_sql.GPU_USAGE)).fetchone()
        everything = connection.execute(review_sql.ALL_EFFECTIVE).fetchone()[0]
        found = {"gpu": tuple(int(v or 0) for v in gpu), "all_effective": int(everything or 0)}
        for name, key in BREAKDOWNS.items():
            sql = review_sql.BREAKDOWN.format(
                label=review_sql.LABELS[key], key=review_sql.KEYS[key], gpu=review_sql.GPU_USAGE
            )
            rows = connection.execute(sql).fetchall()
            found[name] = {label: (int(effective), int(hours)) for label, effective, hours, _ in rows}
        return found
    finally:
        connection.close()


def engine_rows(
    store: ImportDatasets | ParquetSpendStore,
    start: dt.date,
    end: dt.date,
    allowed_teams: Sequence[str] = (),
    *,
    interruptible_tag: str,
    columns: Sequence[str] = FRAME_COLUMNS,
    grouped: bool = False,
    per_resource: bool = True,
    sampled: Sequence[str] = (),
) -> pd.DataFrame:
    """The review engine's frame (FRAME_COLUMNS, or the engine `columns` asked, in that order) of the rows
    charged in [start, end), of `allowed_teams` only when given; text as sorted categories. `grouped`:
    pre-aggregated in DuckDB (review_sql.GROUPED_ROWS), one row per distinct combination of the other
    columns with the amounts summed and a `row_count` column after `columns`; without `per_resource`,
    the resource id only where the review reads one (review_sql.REVIEW_RESOURCE: the frame grows
    with teams x GPUs x categories x days, not with resources), and then the lines of the `sampled`
    resources (with utilization samples) kept as they are (review_sql.REVIEW_SAMPLED_ROWS)."""
    files = [str(path) for path in store.files(start, end)]
    if not files:
        frame = empty_frame()
        frame = frame if list(columns) == FRAME_COLUMNS else with_commitment_columns(frame)[list(columns)]
        return frame.assign(row_count=np.zeros(0, dtype=np.int64)) if grouped else frame
    params = {"files": files, "start": _utc(start), "end": _utc(end), **_pulls(store, files)}
    if "interruptible" in columns:
        params["interruptible_path"] = '$."' + interruptible_tag.replace('"', '\\"') + '"'
    if allowed_teams:
        params["teams"] = list(allowed_teams)
    scope = review_sql.ENGINE_TEAM_SCOPE if allowed_teams else ""
    connection = _connection()
    try:
        repeats = store.may_repeat_rows(files)
        unique = (
            repeated_rows_filter(connection, params, review_sql.PERIOD.format(scope=scope)) if repeats else ""
        )
        sql = (
            review_sql.RAW_ROWS.format(unique=unique, bill=_bill(params), scope=scope)
            if grouped
            else review_sql.ENGINE_ROWS.format(
                unique=unique,
                bill=_bill(params),
                columns=", ".join(f"{review_sql.ENGINE_COLUMNS[name]} AS {name}" for name in columns),
                scope=scope,
            )
        )
        table = _rows(connection, sql, params, columns, grouped, per_resource, sampled)
    finally:
        connection.close()
    if grouped:
        columns = [*columns, review_sql.ROW_COUNT]
    if table.num_rows == 0:
        frame = with_commitment_columns(empty_frame())
        if grouped:
            frame = frame.assign(row_count=np.zeros(0, dtype=np.int64))
        return frame[list(columns)]
    return pd.DataFrame({name: _column(table.column(name), name) for name in columns}, copy=False)


def _rows(
    connection, sql: str, params: dict, columns, grouped: bool, per_resource: bool, sampled
) -> pa.Table:
    """The engine rows of `sql` (ENGINE_ROWS filled in; RAW_ROWS when `grouped`, then grouped as
    engine_rows asks, by tag set where the rows have at most TAG_SETS of them, a file at a time where
    there are several: _grouped_by_file)."""
    if not grouped:
        return connection.sql(sql, params=params).to_arrow_table()
    parts = _file_parts(connection, params)
    # each file's distinct tag sets added up: at least those of all (a file at a time, as below)
    by_tag_set = sum(_tag_sets(connection, sql, {**params, "files": part}) for part in parts) <= TAG_SETS
    sampling = bool(sampled) and not per_resource
    if sampling:
        params["sampled"] = sorted(set(sampled))
    if len(parts) > 1:
        return _grouped_by_file(
            connection,
            sql,
            params,
            columns,
            parts,
            per_resource=per_resource,
            sampled=sampling,
            by_tag_set=by_tag_set,
        )
    sql = grouped_sql(sql, columns, per_resource=per_resource, sampled=sampling, by_tag_set=by_tag_set)
    return connection.sql(sql, params=params).to_arrow_table()


def _file_parts(connection, params: dict) -> list[list[str]]:
    """The files of `params` as the lists the grouped frame reads in turn: FILES_A_QUERY files each where
    every list has the same columns (a list of files is read with its own columns only) and no Cost
    Explorer pull is among them (LATEST_PULLS picks a day's rows across files); else all of them at once.
    DuckDB keeps something of every row group a query reads until the query ends (FILES_A_QUERY)."""
    files = list(params["files"])
    if len(files) <= FILES_A_QUERY or "pulls" in params:
        return [files]
    parts = [files[first : first + FILES_A_QUERY] for first in range(0, len(files), FILES_A_QUERY)]
    described = {
        tuple(row[0] for row in connection.execute(review_sql.FILE_COLUMNS, {"files": part}).fetchall())
        for part in parts
    }
    return parts if len(described) == 1 else [files]


def _grouped_by_file(
    connection,
    rows: str,
    params: dict,
    columns,
    parts: list[list[str]],
    *,
    per_resource: bool,
    sampled: bool,
    by_tag_set: bool,
) -> pa.Table:
    """grouped_sql's rows, each of `parts` read by queries of its own: the workload-tagged resources of
    every part first (review_sql.KEPT_RESOURCES), then each part's raw groups and sampled lines into temp
    tables, then the groups summed again (GROUPED_ROWS over review_sql.FILE_GROUPS). The resources and
    the groups are merged again whenever their table has doubled since it was last merged, so that it
    holds about the distinct resources and groups of the period, not a copy of them a file."""

    def each_part(table: str, query: str, merged=None) -> None:
        """`query`'s rows of every part into the temp table `table` (made by the first part's); `merged`
        (the table's name -> a query of its rows merged) run when the table has doubled since the last
        merge (and holds more than MERGED_ROWS)."""
        kept = 0
        for number, part in enumerate(parts):
            statement = (
                f"CREATE TEMP TABLE {table} AS {query}" if number == 0 else f"INSERT INTO {table} {query}"
            )
            values = {**params, "files": part}
            connection.execute(
                statement, {n: v for n, v in values.items() if re.search(rf"\${n}\b", statement)}
            )
            if merged is None:
                continue
            held = connection.execute(f"SELECT count(*) FROM {table}").fetchall()[0][0]  # noqa: S608 (fixed SQL)
            if held > max(2 * kept, MERGED_ROWS):
                connection.execute(f"CREATE TEMP TABLE merged_rows AS {merged(table)}")
                connection.execute(f"DROP TABLE {table}")
                connection.execute(f"ALTER TABLE merged_rows RENAME TO {table}")
                kept = connection.execute(f"SELECT count(*) FROM {table}").fetchall()[0][0]  # noqa: S608 (fixed SQL)

    def merged_groups(table: str) -> str:
        names = [
            row[0]
            for row in connection.execute(f"SELECT column_name FROM (DESCRIBE {table})").fetchall()  # noqa: S608 (fixed SQL)
        ]
        summed = set(review_sql.SUMMED_COLUMNS) | {review_sql.ROW_COUNT}
        return review_sql.MERGED_GROUPS.format(
            keys=", ".join(f'"{name}"' for name in names if name not in summed),
            sums=", ".join(f'sum("{name}") AS "{name}"' for name in names if name in summed),
            table=table,
        )

    resources = None
    if not per_resource and "resource_id" in columns:
        found = review_sql.TAG_SET_WORKLOAD_RESOURCES if by_tag_set else review_sql.WORKLOAD_RESOURCES
        each_part(
            review_sql.KEPT_RESOURCES,
            f"SELECT DISTINCT resource_id FROM ({found.format(rows=rows)}) AS found",  # noqa: S608 (fixed SQL)
            lambda table: review_sql.MERGED_RESOURCES.format(table=table),
        )
        resources = f"SELECT resource_id FROM {review_sql.KEPT_RESOURCES}"  # noqa: S608 (fixed SQL)
    groups, keys, sums, lines = _grouped_parts(
        rows, columns, per_resource=per_resource, sampled=sampled, by_tag_set=by_tag_set, resources=resources
    )
    each_part(review_sql.FILE_GROUPS, groups, merged_groups)
    grouped = review_sql.GROUPED_ROWS.format(
        keys=keys,
        sums=sums,
        groups=f"SELECT * FROM {review_sql.FILE_GROUPS}",  # noqa: S608 (fixed SQL)
    )
    if lines is not None:
        each_part(review_sql.SAMPLED_LINES, lines)
        grouped = f"SELECT * FROM {review_sql.SAMPLED_LINES} UNION ALL {grouped}"  # noqa: S608 (fixed SQL)
    values = {n: v for n, v in params.items() if re.search(rf"\${n}\b", grouped)}
    return connection.sql(grouped, params=values).to_arrow_table()


def _tag_sets(connection, rows: str, params: dict) -> int:
    """About how many distinct tag sets the rows of `rows` (RAW_ROWS filled in) have (HyperLogLog: a
    fixed few kB however many)."""
    sql = review_sql.TAG_SETS.format(rows=rows)
    values = {name: value for name, value in params.items() if re.search(rf"\${name}\b", sql)}
    return int(connection.execute(sql, values).fetchall()[0][0] or 0)


def grouped_sql(
    rows: str,
    columns: Sequence[str],
    *,
    per_resource: bool = True,
    sampled: bool = False,
    by_tag_set: bool = False,
) -> str:
    """`rows` (a query of a dataset's rows, review_sql.RAW_ROWS) as the engine `columns` summed by
    review_sql.GROUPED_ROWS (over RAW_GROUPS), without `per_resource` over REVIEW_RESOURCE (the resource
    id only where the review reads one), with `sampled` too by REVIEW_SAMPLED_ROWS (the lines of the
    $sampled resources as they are). `by_tag_set`: the tags' flags read once a group of RAW_GROUPS, the
    tags as stored one of its keys (review_sql.LINE_COLUMNS: for rows of few distinct tag sets)."""
    groups, keys, sums, lines = _grouped_parts(
        rows, columns, per_resource=per_resource, sampled=sampled, by_tag_set=by_tag_set
    )
    grouped = review_sql.GROUPED_ROWS.format(keys=keys, sums=sums, groups=groups)
    if lines is None:
        return grouped
    return f"{lines} UNION ALL {grouped}"


def _grouped_parts(
    rows: str,
    columns: Sequence[str],
    *,
    per_resource: bool,
    sampled: bool,
    by_tag_set: bool,
    resources: str | None = None,
) -> tuple[str, str, str, str | None]:
    """grouped_sql's pieces: the RAW_GROUPS query, GROUPED_ROWS' keys and sums, and with `sampled` the
    sampled lines' query (REVIEW_SAMPLED_ROWS' first half), else None. `resources`: the query of the
    workload-tagged resources, where not read from `rows` itself."""
    key_names = [name for name in columns if name not in review_sql.SUMMED_COLUMNS]
    summed = [name for name in columns if name in review_sql.SUMMED_COLUMNS]
    line = () if by_tag_set else review_sql.LINE_COLUMNS
    sources = list(
        dict.fromkeys(
            f"{review_sql.ENGINE_COLUMNS[name]} AS {name}" if name in line else source
            for name in key_names
            for source in (
                ("tags",) if name in review_sql.LINE_COLUMNS else review_sql.ENGINE_SOURCES.get(name, (name,))
            )
        )
    )
    if not per_resource and "resource_id" in sources:
        if resources is not None:
            resource = review_sql.RESOURCE_KEPT.format(resources=resources)
        else:
            resource = (review_sql.TAG_SET_RESOURCE if by_tag_set else review_sql.REVIEW_RESOURCE).format(
                rows=rows
            )
        sources = [resource if name == "resource_id" else name for name in sources]
    groups = review_sql.RAW_GROUPS.format(
        sources=", ".join(sources),
        raw_sums=", ".join(review_sql.RAW_SUM.format(name=name) for name in summed),
        rows=rows,
        where=f"WHERE NOT {review_sql.SAMPLED}" if sampled else "",
    )
    keys = ", ".join(
        name if name in line else f"{review_sql.ENGINE_COLUMNS[name]} AS {name}" for name in key_names
    )
    sums = ", ".join(review_sql.GROUPED_SUM.format(name=name) for name in summed)
    if not sampled:
        return groups, keys, sums, None
    lines = ", ".join(f"{review_sql.ENGINE_COLUMNS[name]} AS {name}" for name in key_names + summed)
    return groups, keys, sums, review_sql.SAMPLED_LINES_OF.format(lines=lines, rows=rows)


def dataset_query(
    store: ImportDatasets,
    files: Sequence[str],
    sql: str,
    *,
    allowed_teams: Sequence[str] = (),
    params: dict | None = None,
    where: str = "true",
    **parts: str,
) -> list[tuple]:
    """The rows of one of review_sql's reader queries over `files` (none: no rows): {bill} the rows
    read (the latest Cost Explorer pull's of each day), {unique} filled in where the same rows may be in
    two files (`where`: the query's own conditions on the rows read, so that the copy of a row kept is
    one the query reads), {scope} where `allowed_teams` are given (then a parameter, as every value is),
    other {parts} as given; times come back as UTC datetimes."""
    if not files:
        return []
    values = {"files": list(files), **_pulls(store, files), **(params or {})}
    if allowed_teams:
        values["teams"] = list(allowed_teams)
    fill = {"scope": review_sql.ENGINE_TEAM_SCOPE if allowed_teams else "", **parts}
    connection = _connection()
    try:
        repeats = store.may_repeat_rows(files)
        unique = repeated_rows_filter(connection, values, where.format(**fill)) if repeats else ""
        sql = sql.format(bill=_bill(values), unique=unique, **fill)
        table = connection.sql(sql, params=values).to_arrow_table()  # Arrow: UTC times without pytz
    finally:
        connection.close()
    return [tuple(row.values()) for row in table.to_pylist()]


def count_new_rows(files: Sequence[str], others: Sequence[str]) -> int:
    """The rows of `files` whose row key none of `others` holds (review_sql.NEW_ROWS)."""
    if not files:
        return 0
    connection = _connection()
    try:
        if not others:
            return int(connection.execute(review_sql.ROWS, {"files": list(files)}).fetchone()[0])
        found = connection.execute(review_sql.NEW_ROWS, {"files": list(files), "others": list(others)})
        return int(found.fetchone()[0])
    finally:
        connection.close()


def daily_scope_sql() -> str:
    """The DailySpend scope of a dataset row as a SQL CASE: GPU usage and unused commitments as
    engine.scope_masks reads a frame without attribution, and the undetermined bucket by gpu_scope.py's
    own rule (its provider name patterns, case-insensitive, and the providers that name every machine)."""
    patterns = " ".join(
        f"WHEN '{provider}' THEN regexp_matches(instance_type, '(?i){rule.pattern}')"
        for provider, rule in gpu_scope.GPU_CAPABLE_NAMES.items()
    )
    always_named = ", ".join(f"'{name}'" for name in sorted(gpu_scope.MACHINES_ALWAYS_NAMED))
    undetermined = (
        "charge_category = 'usage' AND gpu = '' AND CASE WHEN instance_type <> '' THEN "
        f"(CASE provider {patterns} ELSE true END) ELSE "
        "lower(trim(service_category, chr(32) || chr(9) || chr(10) || chr(11) || chr(12) || chr(13))) "
        f"= 'compute' AND provider NOT IN ({always_named}) END"
    )
    return (
        "CASE WHEN commitment_status = 'unused' AND gpu <> '' THEN 'gpu_unused_commitment' "
        "WHEN commitment_status = 'unused' THEN 'unused_commitment' "
        "WHEN charge_category = 'usage' AND gpu <> '' THEN 'gpu' "
        f"WHEN {undetermined} THEN 'undetermined' ELSE 'non_gpu' END"
    )


def daily_spend_sums(files: Sequence[str]) -> list[tuple]:
    """(day, *review_sql.DAILY_SPEND_KEYS, scope, billed, effective, gpu-hours micro-units, rows) of the
    rows of `files` (one import's dataset: no key twice), summed in one GROUP BY."""
    if not files:
        return []
    connection = _connection()
    try:
        sql = review_sql.DAILY_SPEND.format(scope=daily_scope_sql())
        return connection.execute(sql, {"files": list(files)}).fetchall()
    finally:
        connection.close()


def billing_sources(files: Sequence[str]) -> dict[str, set[tuple[str, str]]]:
    """Each of `files` -> the (provider, billing account) pairs its rows were billed to: the billing
    sources a file holds, for `import_billing --restate` (imports/restate.py)."""
    found: dict[str, set[tuple[str, str]]] = {str(name): set() for name in files}
    if not files:
        return found
    connection = _connection()
    try:
        rows = connection.execute(
            "SELECT DISTINCT filename, provider, billing_account_id "
            "FROM read_parquet($files, filename = true)",
            {"files": list(found)},
        ).fetchall()
    finally:
        connection.close()
    for name, provider, account in rows:
        found[name].add((provider, account))
    return found


def _pulls(store, files: Sequence[str]) -> dict:
    """{"pulls": the Cost Explorer pulls' files among `files`, oldest pull first}, or {} without any."""
    pulls = store.pulls(files) if hasattr(store, "pulls") else []
    return {"pulls": pulls} if pulls else {}


def repeated_rows_filter(connection: duckdb.DuckDBPyConnection, params: dict, where: str) -> str:
    """{unique} (review_sql.UNIQUE_ROWS) for a query on `connection` whose rows read satisfy `where`:
    the keys repeated among those rows found first, into the connection's temp table repeated_keys."""
    sql = review_sql.REPEATED_KEYS.format(bill=_bill(params), where=where)
    # one thread: the aggregate spills while it reads, but finishes one whole radix partition (its rows
    # and a hash table sized to them) per thread in memory; at 50M keys two at once passed MEMORY_LIMIT
    # ("failed to allocate data of size 32.0 MiB (92.8 MiB/122.0 MiB used)"), one took 12 s in 241 MiB RSS
    connection.execute("SET threads = 1")
    connection.execute(sql, {name: value for name, value in params.items() if re.search(rf"\${name}\b", sql)})
    connection.execute(f"SET threads = {THREADS}")
    return review_sql.UNIQUE_ROWS


def _bill(params: dict) -> str:
    return review_sql.LATEST_PULLS if "pulls" in params else review_sql.BILL


def _column(values: pa.ChunkedArray, name: str):
    if pa.types.is_string(values.type) or pa.types.is_large_string(values.type):
        return _sorted_category(values)
    if name in TIMES:
        return pd.to_datetime(values.to_numpy(), utc=True).as_unit("ns")
    return values.to_numpy()


def _sorted_category(values: pa.ChunkedArray) -> pd.Categorical:
    """Text as a category with sorted categories (review.text_category's form), through Arrow's
    dictionary: the distinct values only are sorted."""
    encoded = values.combine_chunks().dictionary_encode()
    names = np.asarray(encoded.dictionary.to_numpy(zero_copy_only=False), dtype=object)
    order = np.argsort(names, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    codes = rank[encoded.indices.to_numpy(zero_copy_only=False)]
    return pd.Categorical.from_codes(codes, categories=names[order])


def _connection() -> duckdb.DuckDBPyConnection:
    connection = duckdb.connect()
    register_datasets(connection)  # the datasets' S3 prefix, when they live under one (location.py)
    connection.execute("SET TimeZone = 'UTC'")
    # a GROUP BY over millions of rows stays within this, spilling to SPILL_FOLDER past it; each thread
    # holds its own hash tables, so the threads are bounded too
    connection.execute(f"SET memory_limit = '{MEMORY_LIMIT}'")
    connection.execute(f"SET threads = {THREADS}")
    connection.execute("SET temp_directory = $folder", {"folder": str(SPILL_FOLDER)})
    return connection


def _utc(day: dt.date) -> dt.datetime:
    return dt.datetime.combine(day, dt.time(), tzinfo=dt.UTC)
