"""The capacity plan's demand series summed in DuckDB over the imports' Parquet datasets (issue 28, item 1):
a month's bill lines of a plan scope as the few rows a plan tells apart (planning/usage_frame.py
COLLAPSE_KEYS), their GPU-hours and cost summed exactly, so no bill line reaches Python.

Beside review_sql.py and allocation_sql.py, in DuckDB's dialect. {bill}, {scope}, {unique} as
review_sql's readers (the team scope in the WHERE). Each line's effective cost is converted into the
plan's currency on the line ($fx_codes/$fx_rates: units of the plan's currency per unit of each other
one, as DOUBLE), rounded half to even as usage_frame._converted_micros' numpy rint does, then summed;
a line of a currency without a rate leaves its group's `missing_currency` set (the plan's error names it).

Lines of resources with utilization samples keep their resource (KEYS' resource_id), so the busy
series reads a row per sampled resource, period and key, never a bill line.

A line is `kind` 1 (GPU usage: engine.scope_masks), 2 (an unused commitment of a GPU instance type) or
0 (any other line: it only tells which charge periods the bill covers, so every key but its hours is
blank). Hours are the UTC hour indexes of usage_frame.hours_of: the start floored, the end rounded up.
`cost_only` keeps a line of cost without GPU-hours (a one-off correction) out of the usage rows' sums,
as usage_frame.collapsed does.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from decimal import Decimal

import pyarrow as pa

from billing.storage import review_sql
from billing.storage.allocation_sql import SAMPLED_RESOURCES
from billing.storage.duckdb_review import _bill, _connection, _pulls, _utc, repeated_rows_filter
from billing.storage.import_datasets import ImportDatasets
from billing.storage.parquet import ParquetSpendStore

HOUR_US = 3_600_000_000
GPU_LINE = "coalesce(gpu, '') <> ''"
UNUSED_LINE = "coalesce(commitment_status, '') = 'unused'"
KIND = (
    f"CASE WHEN coalesce(charge_category, '') = 'usage' AND {GPU_LINE} AND NOT {UNUSED_LINE} THEN 1 "
    f"WHEN {UNUSED_LINE} AND {GPU_LINE} THEN 2 ELSE 0 END"
)
CONVERTED = (
    "CASE WHEN coalesce(currency, '') = $currency THEN coalesce(effective_micros, 0) ELSE "
    "CAST(round_even(CAST(coalesce(effective_micros, 0) AS DOUBLE) * "
    "list_extract($fx_rates, list_position($fx_codes, coalesce(currency, ''))), 0) AS BIGINT) END"
)
# a demand key of a GPU line, blank on any other line
KEYS = {
    "interruptible": "lower(coalesce(json_extract_string(tags, $interruptible_path), '')) = 'true'",
    "gpu": "coalesce(gpu, '')",
    "team": "coalesce(team, '')",
    "pricing_category": "coalesce(pricing_category, '')",
    "provider": "coalesce(provider, '')",
    "instance_type": "coalesce(instance_type, '')",
    "region": "coalesce(region, '')",
    "gpus_per_instance": "CAST(coalesce(gpus_per_instance_micros, 0) AS DOUBLE) / 1000000",
    "commitment_id": "coalesce(commitment_discount_id, '')",
    "commitment_end_hour": f"coalesce((epoch_us(commitment_end) + {HOUR_US - 1}) // {HOUR_US}, -1)",
    # the resource only where the busy series reads it (demand.py _busy: GPUs x utilization per resource
    # and hour): a resource with utilization samples in the period (`samples`, joined as
    # allocation_sql.SAMPLED_RESOURCES does); every other line's is '' and summed with its likes
    "resource_id": "CASE WHEN coalesce(resource_id, '') IN ("
    + SAMPLED_RESOURCES.format(samples="samples")
    + ") THEN resource_id ELSE '' END",
}
BLANK_TEXT = "''"
BLANK = {"interruptible": "false", "gpus_per_instance": "CAST(0 AS DOUBLE)", "commitment_end_hour": "-1"}
LINES = (
    "SELECT epoch_us(charge_period_start) // {hour} AS start_hour, "  # noqa: S608 (fixed SQL; values are parameters)
    "(epoch_us(charge_period_end) + {hour_less_one}) // {hour} AS end_hour, {kind} AS kind, {keys}, "
    "coalesce(gpu_hours_micros, 0) AS gpu_hours_micros, {converted} AS converted_micros, "
    "coalesce(gpu_hours_micros, 0) = 0 AND {converted} <> 0 AS cost_only, "
    "coalesce(currency, '') AS currency FROM {{bill}} AS bill_rows WHERE "
    + review_sql.PERIOD.replace("{", "{{").replace("}", "}}")
    + " {{unique}}"
).format(
    hour=HOUR_US,
    hour_less_one=HOUR_US - 1,
    kind=KIND,
    keys=", ".join(
        f"CASE WHEN {KIND} = 0 THEN {BLANK.get(name, BLANK_TEXT)} ELSE {sql} END AS {name}"
        for name, sql in KEYS.items()
    ),
    converted=CONVERTED,
)
SERIES = (  # noqa: S608 (fixed SQL)
    "SELECT start_hour, end_hour, kind, {names}, cost_only, "
    "CAST(sum(gpu_hours_micros) AS BIGINT) AS gpu_hours_micros, CAST(sum(converted_micros) AS BIGINT) AS "
    "effective_micros, max(CASE WHEN converted_micros IS NULL THEN currency END) AS missing_currency "
    "FROM ({lines}) AS plan_lines GROUP BY ALL ORDER BY ALL"
).format(names=", ".join(KEYS), lines=LINES)


def demand_series(
    store: ImportDatasets | ParquetSpendStore,
    start: dt.date,
    end: dt.date,
    allowed_teams: Sequence[str] = (),
    *,
    interruptible_tag: str,
    currency: str,
    fx_to_currency: Mapping[str, Decimal],
    sampled: Sequence[str] = (),
) -> pa.Table:
    """SERIES over the lines charged in [start, end) of the store's files, of `allowed_teams` only when
    given (in the WHERE): a row per distinct demand key, hours and kind (an empty table without files);
    the lines of the `sampled` resources (with utilization samples in the plan's period) by resource."""
    paths = store.files(start, end)
    files = [str(path) for path in paths]
    codes = sorted(fx_to_currency)
    params = {
        "files": files,
        "start": _utc(start),
        "end": _utc(end),
        "currency": currency,
        "fx_codes": codes,
        "fx_rates": [float(Decimal(fx_to_currency[code])) for code in codes],
        "interruptible_path": '$."' + interruptible_tag.replace('"', '\\"') + '"',
        **_pulls(store, files),
    }
    if not files:
        return pa.table({})
    if allowed_teams:
        params["teams"] = list(allowed_teams)
    scope = review_sql.ENGINE_TEAM_SCOPE if allowed_teams else ""
    connection = _connection()
    try:
        where = review_sql.PERIOD.format(scope=scope)
        unique = repeated_rows_filter(connection, params, where) if store.may_repeat_rows(paths) else ""
        sql = SERIES.format(bill=_bill(params), scope=scope, unique=unique)
        samples = pa.table({"resource_id": pa.array(sorted(set(sampled)), pa.string())})
        connection.register("samples", samples)
        return connection.sql(sql, params=params).to_arrow_table()
    finally:
        connection.close()
