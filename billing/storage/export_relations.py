"""The review's rows over a billing export where it lands (issue 28, item 2): DuckDB-dialect CTEs ending in
`export_rows`, with the review's columns, that translated_review.py puts before each review statement
(`rows="export_rows"`), so the same statements run on Athena over the CUR 2.0 or FOCUS table a Data
Export feeds.

The mapping is the importer's (imports/cur.py, imports/focus.py, imports/enrich.py), restated in SQL:
- CUR 2.0: `line_item_line_item_type` gives the charge category and commitment status; effective cost is
  `reservation_effective_cost` (DiscountedUsage), `savings_plan_savings_plan_effective_cost`
  (SavingsPlanCoveredUsage), the unused fee (RIFee, SavingsPlanRecurringFee), 0 for purchases, else
  `line_item_unblended_cost`; team and project from `resource_tags` (`user_` keys).
- FOCUS 1.x: the FOCUS columns as named; team and project from `Tags` (`user:` keys, AWS's export).
- GPU and GPUs per instance from the catalog, passed in as a VALUES table (`gpu_types`); GPU-hours are
  hours of usage rows × GPUs per instance.
Money becomes exact micro-units per row (rounded half away from zero at 6 decimals, as NUMERIC(20, 6)
stores it) before any sum, so every engine adds the same integers.

Assumptions: the table is the one AWS's Data Exports Athena integration creates (CUR 2.0 `resource_tags`
a map<string,string>, costs as double); team and project are the first tag keys of the deployment's
mapping (`team`, `project` by default).
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal

from sqlglot import exp

CREDITS = ("Credit", "Refund", "BundledDiscount", "Discount", "EdpDiscount", "PrivateRateDiscount")
COMMITTED = ("DiscountedUsage", "SavingsPlanCoveredUsage", "RIFee", "SavingsPlanRecurringFee")
PURCHASES = ("Fee", "SavingsPlanUpfrontFee", "SavingsPlanNegation")


def dec(value: str) -> str:
    """A cost or quantity as an exact decimal (a double 21.957642 stays 21.957642), NULL as 0."""
    return f"CAST(coalesce({value}, 0) AS DECIMAL(38, 10))"


def micros(value: str) -> str:
    return f"CAST(round(({value}) * 1000000) AS BIGINT)"


def _quoted(values) -> str:
    return ", ".join(exp.Literal.string(v).sql(dialect="duckdb") for v in values)


def gpu_types(instance_gpus: Mapping[str, tuple[str, Decimal]]) -> str:
    """The catalog as a table of SELECTs joined by UNION ALL (BigQuery takes no column names on a
    VALUES alias): instance type -> (GPU slug, GPUs per instance)."""
    rows = [
        f"SELECT {exp.Literal.string(name).sql()} AS instance_type, {exp.Literal.string(gpu).sql()} AS gpu, "
        f"CAST({Decimal(count)} AS DECIMAL(10, 4)) AS gpus"
        for name, (gpu, count) in sorted(instance_gpus.items())
    ] or ["SELECT '' AS instance_type, '' AS gpu, CAST(0 AS DECIMAL(10, 4)) AS gpus"]
    return f"gpu_types AS ({' UNION ALL '.join(rows)})"


def _table(name: str) -> str:
    """A (database.)table name, quoted as an identifier: never an injection point."""
    return ".".join(exp.to_identifier(part, quoted=True).sql(dialect="duckdb") for part in name.split("."))


def cur2_relation(
    table: str,
    instance_gpus: Mapping[str, tuple[str, Decimal]],
    provider: str = "aws",
    team_tag="team",
    project_tag="project",
) -> str:
    line = "trim(line_item_line_item_type)"
    usage = "trim(line_item_usage_type)"
    category = (
        f"CASE WHEN {line} IN ('Usage', 'DiscountedUsage', 'SavingsPlanCoveredUsage', 'RIFee', "
        f"'SavingsPlanRecurringFee') THEN 'usage' WHEN {line} IN ({_quoted(PURCHASES)}) THEN 'purchase' "
        f"WHEN {line} = 'Tax' THEN 'tax' WHEN {line} IN ({_quoted(CREDITS)}) THEN 'credit' ELSE 'adjustment' END"
    )
    effective = (
        f"CASE WHEN {line} = 'DiscountedUsage' THEN {micros(dec('reservation_effective_cost'))} "
        f"WHEN {line} = 'SavingsPlanCoveredUsage' THEN {micros(dec('savings_plan_savings_plan_effective_cost'))} "
        f"WHEN {line} IN ({_quoted(PURCHASES)}) THEN 0 "
        f"WHEN {line} = 'RIFee' THEN {micros(dec('reservation_unused_amortized_upfront_fee_for_billing_period') + ' + ' + dec('reservation_unused_recurring_fee'))} "
        f"WHEN {line} = 'SavingsPlanRecurringFee' THEN {micros(dec('savings_plan_total_commitment_to_date') + ' - ' + dec('savings_plan_used_commitment'))} "
        f"ELSE {micros(dec('line_item_unblended_cost'))} END"
    )
    pricing = (
        f"CASE WHEN {line} IN ({_quoted(COMMITTED)}) THEN 'committed' WHEN {usage} LIKE '%SpotUsage%' THEN 'spot' "
        f"WHEN {usage} LIKE '%BoxUsage%' AND {line} = 'Usage' THEN 'on_demand' ELSE 'other' END"
    )
    hours_row = (
        f"{line} IN ('Usage', 'DiscountedUsage', 'SavingsPlanCoveredUsage') AND {usage} LIKE '%Usage:%'"
    )
    team, project = (exp.Literal.string(f"user_{tag}").sql() for tag in (team_tag, project_tag))
    return (
        f"{gpu_types(instance_gpus)}, export_rows AS (SELECT "  # noqa: S608 (literals and identifiers built by sqlglot)
        f"line_item_usage_start_date AS charge_period_start, {category} AS charge_category, "
        f"coalesce(g.gpu, '') AS gpu, "
        f"CASE WHEN {line} IN ('DiscountedUsage', 'SavingsPlanCoveredUsage') THEN 'used' "
        f"WHEN {line} IN ('RIFee', 'SavingsPlanRecurringFee') THEN 'unused' ELSE '' END AS commitment_status, "
        f"coalesce(resource_tags[{team}], '') AS team, coalesce(resource_tags[{project}], '') AS project, "
        f"{exp.Literal.string(provider).sql()} AS provider, {pricing} AS pricing_category, "
        f"{micros(dec('line_item_unblended_cost'))} AS billed_micros, {effective} AS effective_micros, "
        f"{micros(dec('pricing_public_on_demand_cost'))} AS list_micros, "
        f"CASE WHEN {hours_row} THEN {micros(dec('line_item_usage_amount') + ' * coalesce(g.gpus, 0)')} ELSE 0 END AS gpu_hours_micros "
        f"FROM {_table(table)} LEFT JOIN gpu_types AS g ON g.instance_type = trim(product_instance_type))"
    )


def focus_relation(
    table: str, instance_gpus: Mapping[str, tuple[str, Decimal]], team_tag="team", project_tag="project"
) -> str:
    """AWS's FOCUS 1.x export: the instance type is the part of x_UsageType after the colon."""
    instance = "split_part(x_UsageType, ':', 2)"
    pricing = (
        "CASE WHEN CommitmentDiscountStatus IS NOT NULL AND CommitmentDiscountStatus <> '' THEN 'committed' "
        "WHEN PricingCategory = 'Dynamic' THEN 'spot' WHEN PricingCategory = 'Standard' THEN 'on_demand' ELSE 'other' END"
    )
    team, project = (exp.Literal.string(f"user:{tag}").sql() for tag in (team_tag, project_tag))
    return (
        f"{gpu_types(instance_gpus)}, export_rows AS (SELECT "  # noqa: S608 (literals and identifiers built by sqlglot)
        f"ChargePeriodStart AS charge_period_start, lower(ChargeCategory) AS charge_category, "
        f"coalesce(g.gpu, '') AS gpu, lower(coalesce(CommitmentDiscountStatus, '')) AS commitment_status, "
        f"coalesce(Tags[{team}], '') AS team, coalesce(Tags[{project}], '') AS project, "
        f"lower(ProviderName) AS provider, {pricing} AS pricing_category, "
        f"{micros(dec('BilledCost'))} AS billed_micros, {micros(dec('EffectiveCost'))} AS effective_micros, "
        f"{micros(dec('ListCost'))} AS list_micros, "
        f"CASE WHEN ChargeCategory = 'Usage' AND ConsumedUnit = 'Hrs' AND coalesce(CommitmentDiscountStatus, '') <> 'Unused' "
        f"THEN {micros(dec('ConsumedQuantity') + ' * coalesce(g.gpus, 0)')} ELSE 0 END AS gpu_hours_micros "
        f"FROM {_table(table)} LEFT JOIN gpu_types AS g ON g.instance_type = {instance})"
    )


RELATIONS = {"cur": cur2_relation, "focus": focus_relation}
