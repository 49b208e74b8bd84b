"""The spend review's SQL, in one place and one dialect (DuckDB), over the columns of an import's
Parquet dataset (datasets.py) or a ParquetSpendStore, and every other read of the bill lines (the
invoice, an anomaly's rows, the newest charge day...: bill lines are not PostgreSQL rows, issue 28).
The executors (duckdb_review.py) only fill in the file list, the period and the team scope as
parameters; another engine (Athena, Spark) translates these strings rather than keep its own copy.

GPU usage is what review.scope_masks calls it (usage rows with a GPU model, not an unused commitment);
sums are of exact int64 micro-units (DuckDB sums BIGINT into HUGEINT, so no sum wraps or rounds); the
breakdown labels are the review's (`(untagged)`, `unknown`, `other`).
"""

from __future__ import annotations

# {bill}: the rows read, BILL or LATEST_PULLS, as `bill_rows`; {scope}: "" or ENGINE_TEAM_SCOPE (the
# granted teams); {unique}: UNIQUE_ROWS (a condition of the WHERE) where the same rows may come from two
# imports' datasets, each key counted once. Files whose columns differ (a dataset written before a column was
# added) are read by name, the missing column as NULL.
BILL = "read_parquet($files, union_by_name = true)"
# Cost Explorer pulls (store.pull_cost_explorer): each pull is its own dataset and Cost Explorer revises
# the days it estimated, so for each charge day (UTC) only the rows of the latest pull with rows that day
# are read; $pulls lists the pulls' files, oldest pull first. Rows of other imports are all read.
LATEST_PULLS = (
    "(SELECT * EXCLUDE (filename, pull) FROM (SELECT *, coalesce(list_position($pulls, filename), 0) AS pull "
    "FROM read_parquet($files, union_by_name = true, filename = true)) AS pulled QUALIFY pull = 0 "
    "OR pull = max(pull) OVER (PARTITION BY date_trunc('day', charge_period_start)))"
)
PERIOD = "charge_period_start >= $start AND charge_period_start < $end {scope}"
# Each row key once: a key that two imports' datasets hold is read from the first of those imports only
# (`import`: the dataset's hive partition, import=<id>/). Not DISTINCT ON: DuckDB runs it as a hash
# aggregate whose first() states of the text columns live outside its buffer manager and never spill,
# so a 50M-row month of three imports ran out of its 128 MB (issue 28). The repeated keys are found once
# per query from the fixed-width keys alone (REPEATED_KEYS: a spillable aggregate, 8 s for 50M keys in
# 128 MB, kept as a temp table of the few repeated keys) and the rows matched to them by uncorrelated IN
# (hash semi joins whose build side is that table; a correlated NOT EXISTS is planned as a delim join
# that holds every outer row). {bill}, {where}: the outer query's, so that the copy kept is one it reads.
REPEATED_KEYS = (
    'CREATE TEMP TABLE repeated_keys AS SELECT row_key_hi, row_key_lo, min("import") AS kept FROM {bill} '
    "AS copies WHERE {where} GROUP BY row_key_hi, row_key_lo HAVING count(*) > 1"
)
UNIQUE_ROWS = (
    "AND ((row_key_hi, row_key_lo) NOT IN (SELECT row_key_hi, row_key_lo FROM repeated_keys) OR "
    '(row_key_hi, row_key_lo, "import") IN (SELECT row_key_hi, row_key_lo, kept FROM repeated_keys))'
)

GPU_USAGE = "charge_category = 'usage' AND gpu <> '' AND commitment_status <> 'unused'"
UNUSED = "commitment_status = 'unused'"
# a breakdown's label of a row; a group is a label (the rename comes before the grouping, so a bill with
# both '' and a literal '(untagged)' team lists one '(untagged)' row, sqlb44), listed in the order of the
# least stored value it holds (KEYS: the label's own column; `''` first), as the review always listed them
LABELS = {
    "month": "strftime(charge_period_start, '%Y-%m')",
    "team": "CASE WHEN team = '' THEN '(untagged)' ELSE team END",
    "project": "CASE WHEN project = '' THEN '(untagged)' ELSE project END",
    "provider": "CASE WHEN provider = '' THEN 'unknown' ELSE provider END",
    "gpu": "CASE WHEN gpu = '' THEN 'unknown' ELSE gpu END",
    "pricing_category": "CASE WHEN pricing_category = '' THEN 'other' ELSE pricing_category END",
}
KEYS = {name: LABELS["month"] if name == "month" else name for name in LABELS}
SUMS_READ = [
    "charge_period_start",
    "charge_category",
    "gpu",
    "commitment_status",
    "team",
    "project",
    "provider",
    "pricing_category",
    "billed_micros",
    "effective_micros",
    "list_micros",
    "gpu_hours_micros",
]
SPEND = "CREATE TEMP TABLE spend AS SELECT {columns} FROM {bill} AS bill_rows WHERE " + PERIOD + " {unique}"  # noqa: S608 (fixed SQL; values are parameters)
# The review's sums, over `spend`: the period's rows here (SPEND, GPU_USAGE picks the GPU usage), the
# rows engine.spend_review prepared in memory there (frame_sql.py: GPU usage and the unused commitments
# attributed to GPU, in the review currency; {gpu} GPU_USAGE or UNUSED or true). One copy of each sum.
GPU_SUMS = (
    "SELECT sum(billed_micros), sum(effective_micros), sum(list_micros), sum(gpu_hours_micros) "
    "FROM spend WHERE {gpu}"
)
ALL_EFFECTIVE = "SELECT sum(effective_micros) FROM spend"
# {label}: a LABELS value, {key}: its KEYS value; label, effective, GPU-hours, billed
BREAKDOWN = (
    "SELECT {label} AS label, sum(effective_micros), sum(gpu_hours_micros), sum(billed_micros) FROM spend "  # noqa: S608 (fixed SQL)
    "WHERE {gpu} GROUP BY {label} ORDER BY min({key})"
)
# Grouped by expressions of the input columns, not by their aliases (Trino allows no alias in GROUP BY),
# and ordered by position, so that translated_review.translate carries each to every engine.
# each month's effective cost per pricing category (the report's stacked chart)
MONTH_CATEGORIES = (
    f"SELECT {LABELS['month']} AS month, {LABELS['pricing_category']} AS pricing_category, "  # noqa: S608 (fixed SQL)
    f"sum(effective_micros) FROM spend GROUP BY {LABELS['month']}, pricing_category ORDER BY 1, 2"
)
# the GPU-hours by month, team label and pricing category (commitment_coverage.py's coverage)
COVERAGE_HOURS = (
    f"SELECT {LABELS['month']} AS month, {LABELS['team']} AS team, pricing_category, "  # noqa: S608 (fixed SQL)
    f"sum(gpu_hours_micros) AS gpu_hours_micros FROM spend GROUP BY {LABELS['month']}, team, pricing_category "
    "ORDER BY 1, 2, 3"
)
# The report's non-GPU table (engine.non_gpu_breakdown), over `spend`: the non-GPU spend rows, in the
# review currency. Effective cost by charge category and, for usage, by service category ('' as 'other'),
# in the order of the labels.
NON_GPU_LABEL = (
    "CASE WHEN coalesce(charge_category, '') <> 'usage' THEN coalesce(charge_category, '') "
    "WHEN coalesce(service_category, '') = '' THEN 'other' ELSE service_category END"
)
NON_GPU_BREAKDOWN = (
    f"SELECT {NON_GPU_LABEL} AS charge, sum(effective_micros) FROM spend GROUP BY {NON_GPU_LABEL} ORDER BY 1"  # noqa: S608 (fixed SQL)
)
# the undetermined spend by provider, instance type and service category, largest first
UNDETERMINED_LINES = (
    "SELECT coalesce(provider, '') AS provider, coalesce(instance_type, '') AS instance_type, "
    "coalesce(service_category, '') AS service_category, sum(effective_micros), sum(billed_micros) "
    "FROM spend GROUP BY coalesce(provider, ''), coalesce(instance_type, ''), coalesce(service_category, '') "
    "ORDER BY 4 DESC, 1, 2, 3"
)
# Each commitment's used cost per review period and month (commitment_attribution.py's rule 3), over
# `spend`: the used rows with a commitment id, `commitment_key` numbering (commitment id, review period,
# month), `gpu_usage` whether the row is GPU usage. Its total and its GPU part, by key in key order; the
# split of an unused row by these sums stays in Python (a few rows: one per commitment and month).
COMMITMENT_USED = (
    "SELECT commitment_key, sum(effective_micros), sum(CASE WHEN gpu_usage THEN effective_micros ELSE 0 END) "
    "FROM spend GROUP BY commitment_key ORDER BY commitment_key"
)
# The commitments section's sums (commitment_coverage.py, sqlb44), over `commitments` (a row per
# commitment row of the period: its `id`, `month` and `team` labels and its used, unused, GPU-attributed,
# unattributed and used-on-GPU cost and the GPU-hours it covered, each 0 where it is not that) and
# `coverage` (COVERAGE_HOURS' rows: month, team, all GPU-hours and those priced under a commitment).
COMMITMENT_COSTS = "sum(used), sum(unused), sum(to_gpu), sum(unattributed), sum(used_gpu)"
# both sums per month or team label ({key}), a row per label either has, 0 where the other has none
COMMITMENTS_BY = (
    "SELECT coalesce(costs.label, hours.label), coalesce(used, 0), coalesce(unused, 0), coalesce(to_gpu, 0), "  # noqa: S608 (fixed SQL)
    "coalesce(unattributed, 0), coalesce(used_gpu, 0), coalesce(gpu_hours, 0), coalesce(covered_gpu_hours, 0) "
    "FROM (SELECT {key} AS label, sum(used) AS used, sum(unused) AS unused, sum(to_gpu) AS to_gpu, "
    "sum(unattributed) AS unattributed, sum(used_gpu) AS used_gpu FROM commitments WHERE {key} IS NOT NULL "
    "GROUP BY {key}) AS costs FULL OUTER JOIN (SELECT {key} AS label, sum(gpu_hours) AS gpu_hours, "
    "sum(covered_gpu_hours) AS covered_gpu_hours FROM coverage WHERE {key} IS NOT NULL GROUP BY {key}) AS hours "
    "ON costs.label = hours.label ORDER BY 1"
)
# the section's totals: the commitment sums, then all GPU-hours and those under a commitment
COMMITMENT_TOTALS = (
    "SELECT " + COMMITMENT_COSTS + " FROM commitments"  # noqa: S608 (fixed SQL)
)
COVERAGE_TOTALS = "SELECT sum(gpu_hours), sum(covered_gpu_hours) FROM coverage"
# each named commitment's sums and the GPU-hours it covered, by id
COMMITMENTS_BY_ID = (
    "SELECT id, "  # noqa: S608 (fixed SQL)
    + COMMITMENT_COSTS
    + ", sum(own_gpu_hours) FROM commitments WHERE id <> '' GROUP BY id ORDER BY id"
)
# Savings' sums (review/savings.py, sav45), over `savings_rows`: the GPU usage rows one saving reads (its
# row rule applied in Python: on-demand interruptible rows for spot, on-demand rows left for a commitment,
# committed rows for the bill's own committed rate, rows of a resource with a cheaper option, rows with idle
# hours), in the review currency, with `line` (the row's position in the review's GPU frame),
# `share_left` (the share no earlier saving claimed, a DOUBLE the groups are keyed by as they were),
# `start_ns` and `end_ns` (the charge period, int64 nanoseconds since the epoch, UTC) and `idle_micros`.
# A key with a NULL part is left out, as pandas' groupby left it out.
SAVINGS_KEYED = "provider IS NOT NULL AND instance_type IS NOT NULL AND region IS NOT NULL"
# per (provider, instance type, region), in key order: instance-hours, effective cost, GPU-hours, and the GPUs
# per instance of the group's first row
SAVINGS_BY_KEY = (
    "SELECT provider, instance_type, region, sum(instance_hours_micros), sum(effective_micros), "  # noqa: S608 (fixed SQL)
    "sum(gpu_hours_micros), arg_min(gpus_per_instance, line) FROM savings_rows WHERE " + SAVINGS_KEYED + " "
    "GROUP BY provider, instance_type, region ORDER BY 1, 2, 3"
)
# the bill's own committed rate, effective cost and instance-hours, per (provider, instance type, region)
# (`across_regions` 0) and per (provider, instance type) over all its regions (`across_regions` 1, region
# NULL: the fallback for a region whose rows hold no committed usage; a NULL region is only summed there)
SAVINGS_COMMITTED_RATES = (
    "SELECT provider, instance_type, region, CAST(grouping(region) AS INTEGER) AS across_regions, "
    "sum(effective_micros), sum(instance_hours_micros) FROM savings_rows WHERE provider IS NOT NULL AND "
    "instance_type IS NOT NULL GROUP BY GROUPING SETS ((provider, instance_type, region), (provider, "
    "instance_type)) ORDER BY 1, 2, 4, 3"
)
# The instances running each UTC day ($first_day <= day < $last_day, days since the epoch) per (provider,
# instance type, region): the instance-hours of the day / 24, floored after adding 1e-9 hours (the
# float slack the pandas version had). A row ending on the day it starts counts on that day; a longer row
# is spread evenly over the days from its start's day to its end's (ceiled). Exact integers, the same in
# any order: instance-hours in 1e-18 hours (micro-units x 10^12, HUGEINT), a spread row's share of a day
# floored at that unit (n rows lose under n x 1e-18 hours a day). Charge periods start after 1970 (`//`
# truncates). A day without rows is not listed (0 instances).
DAY_NS = 86_400 * 10**9
SAVINGS_DAILY_INSTANCES = (
    "SELECT provider, instance_type, region, day, CAST((sum(CAST(instance_hours_micros AS HUGEINT) "  # noqa: S608 (fixed SQL)
    "* 1000000000000 // covered) + 1000000000) // (CAST(24 AS HUGEINT) * 1000000000000000000) AS BIGINT) "
    "FROM (SELECT provider, instance_type, region, instance_hours_micros, covered, unnest(range(first_day, "
    f"first_day + covered)) AS day FROM (SELECT *, start_ns // {DAY_NS} AS first_day, CASE WHEN end_ns <= "
    f"(start_ns // {DAY_NS} + 1) * {DAY_NS} THEN 1 ELSE (end_ns + {DAY_NS - 1}) // {DAY_NS} - start_ns // "
    f"{DAY_NS} END AS covered FROM savings_rows WHERE " + SAVINGS_KEYED + ") AS spread) AS days "
    "WHERE day >= $first_day AND day < $last_day GROUP BY provider, instance_type, region, day ORDER BY 1, 2, 3, 4"
)
# The commitment floor where a key has lines shorter than a day (review/savings.py, fixf45): per
# (provider, instance type, region), the fewest instances running at the same time in any hour of the
# period ($first_hour <= hour < $last_hour, hours since the epoch, UTC). Each line's instance-hours are
# spread evenly over the hours its charge period touches (a line ending in the hour it starts counts in
# that hour: an hourly line of 0.5 h is half an instance there; a 00:00-12:00 line of 24 h is 2 instances
# in each of its 12 hours), summed per key and hour, floored to whole instances after adding 1e-9 hours (as
# SAVINGS_DAILY_INSTANCES), and the minimum taken over the period's hours: a key missing from an hour of
# the period ran 0 instances then, so its floor is 0 (`hours` < $last_hour - $first_hour). Exact integers
# in 1e-18 hours (HUGEINT), a line's share of an hour floored at that unit; the range is clipped to the
# period, so a line's unnest is at most the period's hours. Only keys with a line shorter than a day are
# read (a key of daily or coarser lines keeps SAVINGS_DAILY_INSTANCES' daily average). Per key with usage
# in the period, in key order: the floor and the hours of the period with usage.
# Cost (2026-12-07, this 2-core machine under load, one thread): 1M one-hour lines of 4 keys over 30 days
# 1.5-3.3 s (SAVINGS_DAILY_INSTANCES 0.5 s); savings.py skips it where every key has daily lines only.
HOUR_NS = 3_600 * 10**9
SAVINGS_HOURLY_FLOOR = (
    "SELECT provider, instance_type, region, CASE WHEN count(*) < $last_hour - $first_hour THEN 0 ELSE "  # noqa: S608 (fixed SQL)
    "CAST(min((units + 1000000000) // 1000000000000000000) AS BIGINT) END, count(*) FROM (SELECT provider, "
    "instance_type, region, hour, sum(CAST(instance_hours_micros AS HUGEINT) * 1000000000000 // covered) AS "
    "units FROM (SELECT provider, instance_type, region, instance_hours_micros, covered, unnest(range("
    "greatest(first_hour, $first_hour), least(first_hour + covered, $last_hour))) AS hour FROM (SELECT *, "
    f"start_ns // {HOUR_NS} AS first_hour, CASE WHEN end_ns <= (start_ns // {HOUR_NS} + 1) * {HOUR_NS} THEN 1 "
    f"ELSE (end_ns + {HOUR_NS - 1}) // {HOUR_NS} - start_ns // {HOUR_NS} END AS covered FROM savings_rows "
    "WHERE " + SAVINGS_KEYED + " AND (provider, instance_type, region) IN (SELECT provider, instance_type, "  # noqa: S608 (fixed SQL)
    f"region FROM savings_rows WHERE end_ns - start_ns < {DAY_NS})) AS lines) AS spread GROUP BY provider, "
    "instance_type, region, hour) AS hours GROUP BY provider, instance_type, region ORDER BY 1, 2, 3"
)
# per key (SAVINGS_KEYED), in key order: its lines, those of a day or longer, those longer than an hour
SAVINGS_LINE_GRAIN = (
    f"SELECT provider, instance_type, region, count(*), count(*) FILTER (WHERE end_ns - start_ns >= {DAY_NS}), "  # noqa: S608 (fixed SQL)
    f"count(*) FILTER (WHERE end_ns - start_ns > {HOUR_NS}) FROM savings_rows WHERE " + SAVINGS_KEYED + " "
    "GROUP BY provider, instance_type, region ORDER BY 1, 2, 3"
)
# the cheaper-GPU saving's effective cost and GPU-hours per resource and share left
SAVINGS_BY_RESOURCE = (
    "SELECT resource_id, share_left, sum(effective_micros), sum(gpu_hours_micros) FROM savings_rows "
    "WHERE resource_id IS NOT NULL GROUP BY resource_id, share_left ORDER BY 1, 2"
)
# the idle saving's idle GPU-hours per (effective cost, GPU-hours, share left): rows alike in all three have
# the same value per idle GPU-hour
SAVINGS_IDLE = (
    "SELECT effective_micros, gpu_hours_micros, share_left, sum(idle_micros) FROM savings_rows "
    "GROUP BY effective_micros, gpu_hours_micros, share_left ORDER BY 1, 2, 3"
)
# Each named commitment's facts (commitment_coverage._by_commitment, sav45), over `commitment_facts` (a row per
# commitment row of the period with an id: its position `line`, `type`, `family` and `end_ns`, its end as
# int64 nanoseconds, NaT the lowest): the first non-empty type and family in row order ('' where none)
# and the latest end, by id
COMMITMENT_FACTS = (
    "SELECT id, coalesce(arg_min(type, line) FILTER (WHERE type <> ''), ''), coalesce(arg_min(family, line) "
    "FILTER (WHERE family <> ''), ''), max(end_ns) FROM commitment_facts GROUP BY id ORDER BY id"
)
# The review's rows in a currency other than its own ($currency) per currency and charge month (UTC)
# (fx_months.missing_rates, sav45), over `fx_rows`: their bill lines ({lines}: `row_count` where the frame
# is grouped, else 1 a row) and what they billed in their own currency, in (currency, month) order;
# Python keeps the pairs without a rate (a lookup per pair, no sum)
FX_MONTHS = (
    f"SELECT currency, {LABELS['month']} AS month, sum({{lines}}), sum(billed_micros) FROM fx_rows "  # noqa: S608 (fixed SQL)
    f"WHERE currency <> $currency GROUP BY currency, {LABELS['month']} ORDER BY 1, 2"
)
# One finding per commitment with unused cost (finance/sections.py unused_commitments, issue 28: not one
# anomaly a day): over `spend`, the period's unused rows of one coverage in the review currency, the days
# (UTC) it went unused, the first and last of them and its unused cost, largest first (ties by id).
UNUSED_FINDINGS = (
    "SELECT coalesce(commitment_discount_id, '') AS commitment_id, "
    "count(DISTINCT CAST(charge_period_start AS DATE)), min(CAST(charge_period_start AS DATE)), "
    "max(CAST(charge_period_start AS DATE)), sum(effective_micros) FROM spend "
    "GROUP BY coalesce(commitment_discount_id, '') ORDER BY 5 DESC, 1"
)
# The budgets' burn (finance/sections.py budget_states, sav45b): over `budget_rows`, the month's GPU spend
# rows in the budget's currency (the daily summary's rows, or the grouped frame's where the summary cannot
# serve: both converted a row at its charge month's rate first), the effective cost per team and charge
# day (UTC), in (team, day) order. A row without a team or a charge start is left out, as pandas'
# groupby left it out.
BUDGET_DAILY = (
    "SELECT team, CAST(charge_period_start AS DATE) AS day, sum(effective_micros) FROM budget_rows "
    "WHERE team IS NOT NULL AND charge_period_start IS NOT NULL "
    "GROUP BY team, CAST(charge_period_start AS DATE) ORDER BY 1, 2"
)
# The anomaly series (finance/anomalies.py daily_series, sav45b): over `anomaly_rows` (`day`, a charge
# day at 00:00; team, provider and service labels; effective cost in the review currency), the effective
# cost per series (team, provider, service) and day, dense: every day from the series' first day with
# rows to the last day of any series, 0 on a day without rows. In (team, provider, service, day) order.
# A row with a NULL key is left out, as pandas' groupby left it out.
ANOMALY_DAILY = (
    "WITH sums AS (SELECT team, provider, service, CAST(day AS TIMESTAMP) AS day, sum(effective_micros) "
    "AS effective_micros FROM anomaly_rows WHERE team IS NOT NULL AND provider IS NOT NULL AND service IS "
    "NOT NULL AND day IS NOT NULL GROUP BY team, provider, service, CAST(day AS TIMESTAMP)), "
    "days AS (SELECT team, provider, service, unnest(range(min(day), (SELECT max(day) FROM sums) + "
    "INTERVAL 1 DAY, INTERVAL 1 DAY)) AS day FROM sums GROUP BY team, provider, service) "
    "SELECT days.team, days.provider, days.service, days.day, CAST(coalesce(sums.effective_micros, 0) AS "
    "BIGINT) FROM days LEFT JOIN sums ON sums.team = days.team AND sums.provider = days.provider AND "
    "sums.service = days.service AND sums.day = days.day ORDER BY 1, 2, 3, 4"
)

# The review engine's row columns (review.REVIEW_COLUMNS + COMMITMENT_COLUMNS) from a dataset's: NULL
# amounts and GPU counts as 0, the interruptible flag and the workload from the tags (the tag named by
# the first ? as a JSON path) as review/selectors.py reads them from the database.
ENGINE_COLUMNS = {
    "charge_period_start": "charge_period_start",
    "charge_period_end": "charge_period_end",
    "charge_category": "charge_category",
    "provider": "provider",
    "region": "region",
    "resource_id": "resource_id",
    "instance_type": "instance_type",
    "gpu": "gpu",
    "gpus_per_instance": "coalesce(gpus_per_instance_micros, 0) / 1000000.0",
    "pricing_category": "pricing_category",
    "commitment_status": "commitment_status",
    "team": "team",
    "project": "project",
    "currency": "currency",
    "billed_micros": "coalesce(billed_micros, 0)",
    "effective_micros": "coalesce(effective_micros, 0)",
    "list_micros": "coalesce(list_micros, 0)",
    "instance_hours_micros": "coalesce(instance_hours_micros, 0)",
    "gpu_hours_micros": "coalesce(gpu_hours_micros, 0)",
    "interruptible": "lower(coalesce(json_extract_string(tags, $interruptible_path), '')) = 'true'",
    "workload": "coalesce(json_extract_string(tags, '$.workload'), '')",
    "service_category": "service_category",
    "commitment_discount_id": "commitment_discount_id",
    "commitment_type": "commitment_type",
    "commitment_family": "commitment_family",
    "commitment_gpu_scope": "coalesce(commitment_gpu_scope, false)",
    "commitment_end": "commitment_end",
}
ENGINE_ROWS = "SELECT {columns} FROM {bill} AS bill_rows WHERE " + PERIOD + " {unique}"  # noqa: S608 (fixed SQL)
ENGINE_TEAM_SCOPE = "AND list_contains($teams, team)"

# The review engine's frame pre-aggregated (issue 28, item 1): the rows that agree on every column the
# engine reads but the amounts are one row, their amounts summed exactly (HUGEINT, then BIGINT: an
# overflow is an error, never a wrap) and `row_count` the rows it stands for. Every review sum is a sum
# of these sums, so the frame the engine holds grows with the distinct combinations (resources x
# charge periods x tags), not with the bill's lines. {rows} is RAW_ROWS (the dataset's own columns).
# In two steps: the rows summed by the dataset columns the engine's columns are computed from
# (RAW_GROUPS), then those few groups turned into the engine's columns (ENGINE_COLUMNS) and summed again
# (GROUPED_ROWS). Each engine column is a function of its dataset columns, so the sums are the same; the
# coalesces, the GPU count's division and the casts run once a group (15,840 of a million bench lines),
# not once a line. The tags' flags (LINE_COLUMNS) are still read a line: grouping by the tags as stored
# would hold a group per distinct tag set, a line each where tags name the line (test_duckdb_review_memory).
SUMMED_COLUMNS = [
    "billed_micros",
    "effective_micros",
    "list_micros",
    "instance_hours_micros",
    "gpu_hours_micros",
]
ROW_COUNT = "row_count"
# the dataset columns an engine column is computed from (ENGINE_COLUMNS), where not its own name
ENGINE_SOURCES = {"gpus_per_instance": ("gpus_per_instance_micros",)}
# the engine columns computed from each line (ENGINE_COLUMNS) in RAW_GROUPS, then kept as they are
LINE_COLUMNS = ("interruptible", "workload")
RAW_ROWS = "SELECT * FROM {bill} AS bill_rows WHERE " + PERIOD + " {unique}"  # noqa: S608 (fixed SQL)
RAW_SUM = "sum(coalesce({name}, 0)) AS {name}"
# {sources}: the dataset columns of the engine's keys and its LINE_COLUMNS (resource_id as REVIEW_RESOURCE
# where the review sums past the resource); {raw_sums}: RAW_SUM of each summed column; {where}: "" or "WHERE ..."
RAW_GROUPS = (
    "SELECT {sources}, {raw_sums}, count(*) AS row_count FROM ({rows}) AS spend_rows {where} GROUP BY ALL"  # noqa: S608 (fixed SQL)
)
GROUPED_ROWS = (
    "SELECT {keys}, {sums}, CAST(sum(row_count) AS BIGINT) AS row_count FROM ({groups}) AS raw_groups "  # noqa: S608 (fixed SQL)
    "GROUP BY ALL"
)
GROUPED_SUM = "CAST(sum({name}) AS BIGINT) AS {name}"
# The review's own frame (selectors.spend_frame without utilization samples) grouped coarser still: the
# resource id is kept only where a step of the review reads a row per resource, elsewhere it is '' and
# the rows of every resource of the same team x GPU x category x day... are one row, so the frame grows
# with those combinations, not with resources x days (issue 28). Kept: an unused commitment's rows (an
# unused row split by commitment_attribution.py is rounded per row) and every row of a resource with a
# workload tag (the cheaper-GPU saving, savings.py, is per resource). An anomaly's driving resources
# are read apart, for its day only (finance/selectors.py anomaly_driver_rows).
# {rows} twice, not a CTE: DuckDB materializes a CTE read twice (every row of the period, spilled),
# where two scans of the files stream.
# {resources}: the resources whose rows carry a workload tag, WORKLOAD_RESOURCES (or TAG_SET_WORKLOAD_RESOURCES)
# over {rows}, or the temp table duckdb_review reads them into first when it reads the files one at a time
RESOURCE_KEPT = "CASE WHEN commitment_status = 'unused' OR resource_id IN ({resources}) THEN resource_id ELSE '' END AS resource_id"
WORKLOAD_RESOURCES = (
    "SELECT resource_id FROM ({rows}) AS tagged WHERE "  # noqa: S608 (fixed SQL)
    + ENGINE_COLUMNS["workload"]
    + " <> ''"
)
REVIEW_RESOURCE = RESOURCE_KEPT.replace("{resources}", WORKLOAD_RESOURCES)
# the distinct tag sets of RAW_ROWS, about (duckdb_review.TAG_SETS)
TAG_SETS = "SELECT approx_count_distinct(tags) FROM ({rows}) AS tag_rows"  # noqa: S608 (fixed SQL)
# the same, the workload read once a distinct tag set (grouped_sql's by_tag_set)
TAG_SET_WORKLOAD_RESOURCES = (
    "SELECT resource_id FROM ({rows}) AS tagged "  # noqa: S608 (fixed SQL)
    "WHERE tags IN (SELECT tags FROM (SELECT DISTINCT tags FROM ({rows}) AS tag_rows) AS tag_sets WHERE "
    + ENGINE_COLUMNS["workload"]
    + " <> '')"
)
TAG_SET_RESOURCE = RESOURCE_KEPT.replace("{resources}", TAG_SET_WORKLOAD_RESOURCES)
# The grouped frame read a file at a time (duckdb_review.engine_rows): each file's workload-tagged resources,
# raw groups and sampled lines into these temp tables, then the groups summed again over the table
# (GROUPED_ROWS' {groups}: every sum is a sum of exact integer sums, so the same).
KEPT_RESOURCES = "kept_resources"
FILE_GROUPS = "file_groups"
SAMPLED_LINES = "sampled_lines"
# the temp tables merged again ({table}; {keys}: every column but the sums, {sums}: sum of each summed column)
MERGED_RESOURCES = "SELECT DISTINCT resource_id FROM {table}"  # noqa: S608 (fixed SQL)
MERGED_GROUPS = "SELECT {keys}, {sums} FROM {table} GROUP BY ALL"  # noqa: S608 (fixed SQL)
# a file's column names (duckdb_review._file_parts: a file is read alone only where all have the same)
FILE_COLUMNS = "SELECT column_name FROM (DESCRIBE SELECT * FROM read_parquet($files, union_by_name = true))"
# With GPU utilization samples ($sampled: the resources with samples in the review period), their rows
# stay bill lines (idle hours are capped per line, engine.py, and idle cost rounded per line,
# allocation.py); every other row is grouped as GROUPED_ROWS over REVIEW_RESOURCE (its idle is 0 either
# way). {lines}: the engine's keys then the summed columns (ENGINE_COLUMNS), in {grouped}'s order.
SAMPLED = "coalesce(resource_id, '') IN (SELECT unnest($sampled))"
SAMPLED_LINES_OF = (
    "SELECT {lines}, CAST(1 AS BIGINT) AS row_count FROM ({rows}) AS spend_rows WHERE "  # noqa: S608 (fixed SQL)
    + SAMPLED
)
REVIEW_SAMPLED_ROWS = SAMPLED_LINES_OF + " UNION ALL {grouped}"

# The readers beyond the review (issue 28, item 1), over every recorded file ($files) or a period's:
# {unique} as above, {scope} ENGINE_TEAM_SCOPE or "". Each returns a few rows, never the bill's lines.

# The invoice view (invoice/selectors.py): sums by provider, billing period (BillingPeriodStart, else the
# charge month: a Cost Explorer pull has none), charge month, currency, category and correction/refund flags
INVOICE_GROUPS = (
    "SELECT provider, strftime(period, '%Y-%m') AS billing_period, strftime(charge_period_start, '%Y-%m') "
    "AS charge_month, currency, charge_category, is_correction, is_refund, sum(billed_micros), "
    "sum(effective_micros), count(*) FROM (SELECT *, date_trunc('month', coalesce("
    "billing_period_start, charge_period_start)) AS period FROM {bill} AS bill_rows WHERE true {unique}) AS spend_rows "
    "WHERE period >= $start AND period < $end GROUP BY ALL ORDER BY ALL"
)
# the billing periods (months, as INVOICE_GROUPS computes `period`) each dataset file's rows are billed
# in: the index the invoice view picks its files by (billing_periods.py). The connection runs in UTC, so
# the cast to TIMESTAMP keeps the UTC month and truncates without the time zone's calendar: 1.5 s instead
# of 3.7 s over a 5M-row file on the shared 2-core machine (fix46f, 2026-12-07)
FILE_BILLING_PERIODS = (
    "SELECT filename, strftime(date_trunc('month', CAST(coalesce(billing_period_start, charge_period_start) "
    "AS TIMESTAMP)), '%Y-%m') FROM read_parquet($files, union_by_name = true, filename = true) GROUP BY ALL"
)
# the newest charge start of [start, end), any team's (how far the bill reaches)
NEWEST_CHARGE = (
    "SELECT max(charge_period_start) FROM {bill} WHERE " + PERIOD  # noqa: S608 (fixed SQL)
)
# the first and last charge start stored, of the granted teams when scoped
CHARGE_RANGE = "SELECT min(charge_period_start), max(charge_period_start) FROM {bill} WHERE true {scope}"
# the dashboard's month: the newest charge start, and whether any row is charged in [start, end)
MONTH_HAS_ROWS = (
    "SELECT max(charge_period_start), count(*) FILTER (WHERE charge_period_start >= $start AND "
    "charge_period_start < $end) > 0 FROM {bill} WHERE true {scope}"
)
# the files (one per import and month) with rows in `currency` charged in [start, end), an earlier
# Cost Explorer pull's too (a warning may name a bill a later pull revised)
FILES_WITH_CURRENCY = (
    "SELECT DISTINCT filename FROM read_parquet($files, union_by_name = true, filename = true) "
    "WHERE currency = $currency AND charge_period_start >= $start AND charge_period_start < $end {scope}"
)
# an anomaly's rows (finance/selectors.py spend_rows): largest effective cost first (NULL first, as
# PostgreSQL orders a descending NULL), then by row key; {filters}: SPEND_ROW_FILTERS of those asked
SPEND_ROWS_WHERE = "charge_period_start >= $start AND charge_period_start < $end {filters}"
SPEND_ROWS = (
    "SELECT * FROM (SELECT charge_period_start, charge_period_end, provider, region, resource_id, "  # noqa: S608 (fixed SQL)
    "instance_type, gpu, pricing_category, commitment_status, team, project, service_category, currency, "
    "effective_micros, billed_micros, gpu_hours_micros, row_key_hi, row_key_lo FROM {bill} AS bill_rows "
    "WHERE " + SPEND_ROWS_WHERE + " {unique}) AS spend_rows "
    "ORDER BY effective_micros DESC NULLS FIRST, row_key_hi, row_key_lo LIMIT $limit"
)
SPEND_ROW_FILTERS = {
    "team": "AND team = $team",
    "provider": "AND provider = $provider",
    "service": "AND service_category = $service",
}
ROWS = "SELECT count(*) FROM read_parquet($files, union_by_name = true)"
# an import's rows no other recorded file holds (store.py: the rows it brought in, `inserted`)
NEW_ROWS = (
    "SELECT count(*) FROM read_parquet($files, union_by_name = true) AS own "
    "ANTI JOIN read_parquet($others, union_by_name = true) AS other USING (row_key_hi, row_key_lo)"
)

# One import's daily summary (models.DailySpend, storage/daily_spend.py): its dataset's rows summed per
# charge day (UTC: the connection's time zone) and the keys below. An import's own rows each have their own
# key, so nothing is counted twice within it. {scope}: the DailySpend scope of a row (daily_scope_sql:
# engine.scope_masks and gpu_scope.py's undetermined rule, in SQL). In two steps: the rows summed by their
# charge start and every column the day, the keys and the scope are computed from, as stored
# (DAILY_SPEND_SOURCES), then those groups (a few thousand a million lines) cast to the day, given their
# scope and summed again: the cast and the scope's CASE (a regular expression per line without a GPU)
# once a group, not once a line (1.5 s -> 0.6 s at 1M bench lines under load, 2026-12-06).
DAILY_SPEND_KEYS = [
    "team",
    "gpu",
    "pricing_category",
    "commitment_status",
    "provider",
    "service_category",
    "currency",
]
DAILY_SPEND_SOURCES = (
    "SELECT charge_period_start, "  # noqa: S608 (fixed SQL)
    + ", ".join(DAILY_SPEND_KEYS)
    + ", charge_category, instance_type, sum(coalesce(billed_micros, 0)) AS billed_micros, "
    "sum(coalesce(effective_micros, 0)) AS effective_micros, sum(coalesce(gpu_hours_micros, 0)) AS "
    "gpu_hours_micros, count(*) AS row_count FROM read_parquet($files, union_by_name = true) GROUP BY ALL"
)
DAILY_SPEND = (
    "SELECT CAST(charge_period_start AS DATE) AS day, "  # noqa: S608 (fixed SQL)
    + ", ".join(f"coalesce({name}, '') AS {name}" for name in DAILY_SPEND_KEYS)
    + ", {scope} AS scope, sum(billed_micros), sum(effective_micros), sum(gpu_hours_micros), sum(row_count) "
    "FROM (" + DAILY_SPEND_SOURCES + ") AS charge_starts GROUP BY ALL ORDER BY ALL"
)
