"""The showback's sums (finance/allocation.py) as SQL, beside review_sql.py and in its dialect (DuckDB),
so that translated_review.translate carries them to Spark or Athena unchanged (issue 28, items 1 and 2).

One statement answers, per team label, currency and charge month, the three sums the allocation rule
needs: the GPU spend's effective cost (usage and unused commitments, as engine.scope_masks reads a
frame without attribution), the idle part of its usage and its GPU-hours. Python converts each line's
money at the month's rate and applies the rule to the few lines; no bill line reaches Python.

{rows}: a relation of bill lines (a subquery over an import's Parquet with the period and the team
scope in its WHERE, or a Spark view, or frames in memory); {samples}: the utilization samples
(resource_id, hour, utilization_pct) of the period. {rows} is named twice, not made a CTE:
DuckDB materializes a CTE read more than once (every line of the period) where scans of the files stream;
the one CTE, `sampled_lines`, holds only the lines of resources with samples.
"""

from __future__ import annotations

from billing.storage.review_sql import GPU_USAGE

# usage rows with a GPU model and unused commitments of a GPU instance type
ALLOCATION_SPEND = "gpu <> '' AND (commitment_status = 'unused' OR charge_category = 'usage')"
# the bill-line columns the statement reads (money and hours as int64 micro-units)
ALLOCATION_READ = [
    "charge_period_start",
    "charge_period_end",
    "charge_category",
    "gpu",
    "commitment_status",
    "resource_id",
    "team",
    "currency",
    "effective_micros",
    "gpu_hours_micros",
]
# those columns of a dataset's lines: NULL text as '' and NULL amounts as 0, as the engine frame reads them
ALLOCATION_COLUMNS = {
    "charge_period_start": "charge_period_start",
    "charge_period_end": "charge_period_end",
    "charge_category": "coalesce(charge_category, '')",
    "gpu": "coalesce(gpu, '')",
    "commitment_status": "coalesce(commitment_status, '')",
    "resource_id": "coalesce(resource_id, '')",
    "team": "coalesce(team, '')",
    "currency": "coalesce(currency, '')",
    "effective_micros": "coalesce(effective_micros, 0)",
    "gpu_hours_micros": "coalesce(gpu_hours_micros, 0)",
}

# The mean utilization of the samples of a usage row's resource within its charge period [start, end):
# each distinct (resource, period) of the sampled usage rows contributes its two bounds to the resource's
# stream of samples, ordered by time with a bound before a sample of the same hour; the running sum and
# count of the samples at a bound are what lies before it, so a period's samples are the difference at
# its two bounds (two equality joins, not every row joined to every sample of its resource). The sums are
# integer micro-percent (the stored samples' two places exactly, in every engine: BIGINT sums are
# exact and faster than DECIMAL ones), the mean a DOUBLE divided once.
# The resources with samples (a sample without a resource matches no line: lines read NULL as '')
SAMPLED_RESOURCES = "SELECT resource_id FROM {samples} AS sampled WHERE resource_id IS NOT NULL"
# Only the GPU spend lines of those resources need the mean (sql28b: 46k of a 1M-line bill whose 100
# resources of 2,000 have samples, benchmarks/finance_bench.py); they are read once into `sampled_lines`
# (DuckDB materializes it, read twice, but it holds only those lines), every other line is summed with no
# join and an idle part of 0 (UNSAMPLED_LINES, the bill's second and last scan).
SAMPLED_LINES = (
    "SELECT * FROM {rows} AS spend_rows WHERE "  # noqa: S608 (fixed SQL)
    + ALLOCATION_SPEND
    + " AND resource_id IN ("
    + SAMPLED_RESOURCES
    + ")"
)
UNSAMPLED_LINES = (
    "SELECT * FROM {rows} AS spend_rows WHERE "  # noqa: S608 (fixed SQL)
    + ALLOCATION_SPEND
    + " AND resource_id NOT IN ("
    + SAMPLED_RESOURCES
    + ")"
)
SAMPLED_PERIODS = (
    "SELECT DISTINCT resource_id, charge_period_start, charge_period_end FROM sampled_lines AS usage_rows "  # noqa: S608 (fixed SQL)
    "WHERE " + GPU_USAGE
)
# a sample under this utilization is an idle GPU-hour (the review's `idle_gpu_hours`, engine.py)
IDLE_UTILIZATION_PCT = 10
IDLE_SAMPLE = f"CASE WHEN utilization_pct < {IDLE_UTILIZATION_PCT} THEN 1 ELSE 0 END"
RUNNING = (
    "OVER (PARTITION BY resource_id ORDER BY bound_at, kind ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)"
)
# idle_before: the idle samples (IDLE_SAMPLE) before a bound, the same way (the review's idle GPU-hours)
SAMPLE_BOUNDS = (
    "SELECT DISTINCT resource_id, bound_at, pct_before, samples_before, idle_before FROM (SELECT resource_id, "  # noqa: S608 (fixed SQL)
    f"bound_at, kind, sum(pct) {RUNNING} AS pct_before, sum(n) {RUNNING} AS samples_before, sum(idle) {RUNNING} "
    "AS idle_before FROM (SELECT resource_id, hour AS bound_at, 1 AS kind, CAST(round(utilization_pct * 1000000) "
    f"AS BIGINT) AS pct, 1 AS n, {IDLE_SAMPLE} AS idle "
    "FROM {samples} AS sample_rows UNION ALL SELECT resource_id, charge_period_start AS bound_at, 0 AS kind, "
    "CAST(0 AS BIGINT) AS pct, 0 AS n, 0 AS idle FROM periods UNION ALL SELECT resource_id, charge_period_end "
    "AS bound_at, 0 AS kind, CAST(0 AS BIGINT) AS pct, 0 AS n, 0 AS idle FROM periods) AS events) AS ran "
    "WHERE kind = 0"
)
PERIOD_MEANS = (
    "SELECT periods.resource_id, periods.charge_period_start, periods.charge_period_end, "
    "CAST(closing.pct_before - opening.pct_before AS DOUBLE) / (CAST(closing.samples_before - "
    "opening.samples_before AS DOUBLE) * 1000000) "
    "AS mean_pct, closing.idle_before - opening.idle_before AS idle_samples FROM periods JOIN bounds AS opening ON opening.resource_id = periods.resource_id AND "
    "opening.bound_at = periods.charge_period_start JOIN bounds AS closing ON closing.resource_id = periods.resource_id "
    "AND closing.bound_at = periods.charge_period_end WHERE closing.samples_before > opening.samples_before"
)
# idle = effective cost x (1 - mean utilization, clipped to 0..100, / 100), rounded half to even (as
# numpy's rint: the same in every engine, whatever its own round does with a half)
IDLE_SHARE = (
    "(CAST(1 AS DOUBLE) - least(greatest(mean_pct, CAST(0 AS DOUBLE)), CAST(100 AS DOUBLE)) "
    "/ CAST(100 AS DOUBLE))"
)
IDLE_EXACT = f"CAST(effective_micros AS DOUBLE) * {IDLE_SHARE}"
IDLE_MICROS = (
    f"CASE WHEN mean_pct IS NULL OR NOT ({GPU_USAGE}) THEN 0 WHEN {IDLE_EXACT} - floor({IDLE_EXACT}) = 0.5 "
    f"THEN CAST(2 * round({IDLE_EXACT} / 2) AS BIGINT) ELSE CAST(round({IDLE_EXACT}) AS BIGINT) END"
)
# each GPU spend row with its idle micro-units (finance/allocation.py idle_micros_per_row); {keys}: the
# row's columns to keep, by name
# the join itself, one text for the showback's idle cost (ROW_IDLE) and the review's idle GPU-hours
# (ROW_IDLE_HOURS): each sampled line's (resource, charge period) with its mean and its idle samples
IDLE_JOIN = (
    "WITH sampled_lines AS ("  # noqa: S608 (fixed SQL)
    + SAMPLED_LINES
    + "), periods AS ("
    + SAMPLED_PERIODS
    + "), bounds AS ("
    + SAMPLE_BOUNDS
    + "), means AS ("
    + PERIOD_MEANS
    + ")"
)
ROW_IDLE = (
    IDLE_JOIN  # noqa: S608 (fixed SQL)
    + " SELECT {keys}, "
    + IDLE_MICROS
    + " AS idle_micros FROM (SELECT sampled_lines.*, means.mean_pct FROM sampled_lines LEFT JOIN means "
    "ON means.resource_id = sampled_lines.resource_id AND means.charge_period_start = "
    "sampled_lines.charge_period_start AND means.charge_period_end = sampled_lines.charge_period_end) AS joined "
    "UNION ALL SELECT {keys}, CAST(0 AS BIGINT) AS idle_micros FROM (" + UNSAMPLED_LINES + ") AS unsampled"
)
# the showback's sums: per team label ('' untagged), currency and charge month; unused commitments count
# in the effective cost only (no idle part, no GPU-hours used)
TEAM_SUMS = (
    "SELECT team, currency, month, CAST(sum(effective_micros) AS BIGINT) AS effective_micros, "  # noqa: S608 (fixed SQL)
    "CAST(sum(idle_micros) AS BIGINT) AS idle_micros, CAST(sum(used_gpu_hours_micros) AS BIGINT) AS "
    "gpu_hours_micros FROM ("
    + ROW_IDLE.format(
        keys="team, currency, strftime(charge_period_start, '%Y-%m') AS month, effective_micros, "
        f"CASE WHEN {GPU_USAGE} THEN gpu_hours_micros ELSE 0 END AS used_gpu_hours_micros",
        rows="{rows}",
        samples="{samples}",
    )
    + ") AS team_rows GROUP BY team, currency, month ORDER BY team, currency, month"
)
# The review's idle GPU-hours (engine.idle_gpu_hours, sqlb44): per GPU usage line of a resource
# with samples in its charge period, its idle samples (one per GPU and hour under IDLE_UTILIZATION_PCT)
# as micro GPU-hours, capped at the line's GPU-hours (a line cannot idle more than it ran); {rows} carries
# `line`, the line's number; lines not listed have 0.
ROW_IDLE_HOURS = (
    IDLE_JOIN  # noqa: S608 (fixed SQL)
    + " SELECT sampled_lines.line, least(means.idle_samples * 1000000, greatest(sampled_lines.gpu_hours_micros, "
    "0)) AS idle_hours_micros FROM sampled_lines JOIN means ON means.resource_id = sampled_lines.resource_id "
    "AND means.charge_period_start = sampled_lines.charge_period_start AND means.charge_period_end = "
    "sampled_lines.charge_period_end WHERE " + GPU_USAGE + " AND means.idle_samples > 0 ORDER BY 1"
)
# ROW_IDLE_HOURS kept for two reads (engine.idle_gpu_hours, sav45): each line's idle GPU-hours (the savings'
# idle step values them per line) and their sum, the review's `idle_gpu_hours`, summed here, not in Python
ROW_IDLE_HOURS_KEPT = "CREATE OR REPLACE TEMP TABLE row_idle_hours AS " + ROW_IDLE_HOURS
IDLE_HOURS_ROWS = "SELECT line, idle_hours_micros FROM row_idle_hours ORDER BY line"
IDLE_HOURS_TOTAL = "SELECT CAST(coalesce(sum(idle_hours_micros), 0) AS BIGINT) FROM row_idle_hours"
ROW_IDLE_HOURS_DROP = "DROP TABLE IF EXISTS row_idle_hours"
# {bill}, {scope}, {unique} as review_sql's readers; {filters}: FILTERS of the review's filters asked
DATASET_ROWS = (
    "(SELECT {columns} FROM {bill} AS bill_rows WHERE charge_period_start >= $start AND "  # noqa: S608 (fixed SQL)
    "charge_period_start < $end {scope} {filters} {unique})"
)
FILTERS = {
    "team": "AND team = $team",
    "project": "AND project = $project",
    "provider": "AND provider = $provider",
}


# TEAM_SUMS' lines added up per team label (finance/allocation.py per_team_frame, sav45b), over `team_lines`
# (team, effective, idle and GPU-hours micro-units), the lines already converted into one currency: the
# rule's input, in team order ('' first)
TEAM_TOTALS = (
    "SELECT team, sum(effective_micros), sum(idle_micros), sum(gpu_hours_micros) FROM team_lines "
    "GROUP BY team ORDER BY team"
)
# the idle pool (allocation.allocate, sav45b): the tagged teams' idle cost, over `per_team` (a row per team)
IDLE_POOL = "SELECT coalesce(sum(idle_micros), 0) FROM per_team WHERE team <> ''"


def team_sums_sql(rows: str, samples: str) -> str:
    """TEAM_SUMS over the relation `rows` and the samples `samples` (DuckDB SQL)."""
    return TEAM_SUMS.format(rows=rows, samples=samples)


def dataset_columns() -> str:
    return ", ".join(f"{ALLOCATION_COLUMNS[name]} AS {name}" for name in ALLOCATION_READ)
