"""The showback, budget and anomaly sections of the spend review (review/report.py) and of its text
form: tables (the report model's ``Table``), figures with their SVG, the rule and methods stated."""

from __future__ import annotations

from billing.finance.allocation import UNALLOCATED
from billing.finance.charts import allocation_chart, anomaly_chart, budget_chart
from procurement.reports.model import Column, Table

FINANCE_ASSUMPTIONS = [
    "Showback: shared cost is GPU spend with no team tag; idle cost is a tagged GPU row's effective cost × "
    "(1 − its resource's mean utilization over the row's period), rows without utilization samples having none.",
    "Budget forecast: linear run-rate of the days so far (burn ÷ days so far × days in the month); the days so far "
    "reach the newest charge day stored for the month. The overrun date is the day the cumulative spend reaches "
    "the budget, or would at that run-rate within the month.",
]


def allocation_table(allocation: dict) -> Table:
    rows = [dict(team) for team in allocation["teams"]]
    if float(allocation["unallocated_cost"]):
        zero = dict.fromkeys(
            ("direct_cost", "own_idle_cost", "allocated_shared_cost", "allocated_idle_cost"), "0"
        )
        rows.append(
            zero | {"team": UNALLOCATED, "showback_cost": allocation["unallocated_cost"], "gpu_hours": "0"}
        )
    note = f"; {allocation['note']}" if allocation["note"] else ""
    return Table(
        "allocation",
        f"Showback by team, rule: {allocation['rule']} ({allocation['rule_description']}{note})",
        [
            Column("team", "Team"),
            Column("direct_cost", "Direct", "money"),
            Column("own_idle_cost", "Own idle", "money"),
            Column("allocated_shared_cost", "Shared allocated", "money"),
            Column("allocated_idle_cost", "Idle allocated", "money"),
            Column("showback_cost", "Showback", "money", total=True),
            Column("gpu_hours", "GPU-hours", "number", total=True),
        ],
        rows,
    )


def budget_table(budgets: list[dict]) -> Table:
    return Table(
        "budgets",
        "Budgets: burn, forecast to month end (linear run-rate) and overrun date",
        [
            Column("team", "Team"),
            Column("month", "Month"),
            Column("currency", "Currency"),
            Column("amount", "Budget", "money"),
            Column("burn", "Burn", "money"),
            Column("burn_pct", "Burn %"),
            Column("forecast", "Forecast", "money"),
            Column("forecast_pct", "Forecast %"),
            Column("overrun_date", "Overrun date"),
            Column("state", "State"),
        ],
        budgets,
    )


def anomaly_table(anomalies: dict) -> Table:
    rows = [
        {
            **{
                k: a[k]
                for k in (
                    "day",
                    "team",
                    "provider",
                    "service",
                    "amount",
                    "baseline",
                    "excess",
                    "excess_pct",
                    "direction",
                )
            },
            "drivers": "; ".join(
                f"{r['resource_id'] or '?'} {r['instance_type']} {r['effective_cost']}" for r in a["top_rows"]
            ),
            "rows_link": a["rows_link"],
        }
        for a in anomalies["items"]
    ]
    return Table(
        "anomalies",
        f"Spend anomalies ({anomalies['found']} found)",
        [
            Column("day", "Day"),
            Column("team", "Team"),
            Column("provider", "Provider"),
            Column("service", "Service"),
            Column("amount", "Spend", "money"),
            Column("baseline", "Baseline (median)", "money"),
            Column("excess", "Above baseline", "money"),
            Column("excess_pct", "Above baseline %"),
            Column("direction", "Direction"),
            Column("drivers", "Top rows"),
            Column("rows_link", "Rows"),
        ],
        rows,
    )


UNUSED_COMMITMENT_TABLES = {  # coverage -> (the anomalies section's list, the table's name, its title)
    "gpu": ("unused_commitments", "unused_commitment_findings", "Unused commitments"),
    "non_gpu": (
        "unused_non_gpu_commitments",
        "unused_non_gpu_commitment_findings",
        "Unused non-GPU commitments",
    ),
    "undetermined": (
        "unused_undetermined_commitments",
        "unused_undetermined_commitment_findings",
        "Unused commitments, coverage undetermined (GPU or not: the bill cannot tell)",
    ),
}


def unused_commitment_table(anomalies: dict, *, coverage: str = "gpu") -> Table:
    key, name, title = UNUSED_COMMITMENT_TABLES[coverage]
    found = anomalies.get(key, [])
    label = [Column("coverage", "Coverage")] if coverage == "undetermined" else []
    return Table(
        name,
        f"{title} ({len(found)} found, one line each)",
        [
            Column("commitment_id", "Commitment"),
            *label,
            Column("days_unused", "Days unused"),
            Column("first_day", "First day"),
            Column("last_day", "Last day"),
            Column("unused_cost", "Unused cost", "money", total=True),
        ],
        found,
    )


def finance_tables(review: dict) -> list[Table]:
    """The allocation, budget and anomaly tables, when the review carries them (finance.finance_review)."""
    if "allocation" not in review:
        return []
    return [
        allocation_table(review["allocation"]),
        budget_table(review["budgets"]),
        anomaly_table(review["anomalies"]),
        *(
            unused_commitment_table(review["anomalies"], coverage=coverage)
            for coverage in UNUSED_COMMITMENT_TABLES
        ),
    ]


def add_finance_sections(data: dict) -> dict:
    """`data` (review_report_data's page) with the allocation, budget and anomaly figures and sections
    added, when the review carries them (its tables are review_tables')."""
    review, currency = data["review"], data["currency"]
    if "allocation" not in review:
        return data
    figures = [
        {
            "id": "allocation",
            "title": "Showback by team",
            "kind": "stacked_bar",
            "table": "allocation",
            "svg": allocation_chart(review["allocation"], currency),
        },
        {
            "id": "budgets",
            "title": "Budgets: burn and forecast",
            "kind": "stacked_bar",
            "table": "budgets",
            "svg": budget_chart(review["budgets"]),
        },
        {
            "id": "anomalies",
            "title": "Anomalies against their baseline",
            "kind": "stacked_bar",
            "table": "anomalies",
            "svg": anomaly_chart(review["anomalies"], currency),
        },
    ]
    sections = [
        {
            "id": "allocation",
            "title": f"Allocation (rule: {review['allocation']['rule']})",
            "tables": ["allocation"],
            "figures": ["allocation"],
        },
        {"id": "budgets", "title": "Budgets", "tables": ["budgets"], "figures": ["budgets"]},
        {
            "id": "anomalies",
            "title": "Anomalies",
            "tables": ["anomalies", *(name for _, name, _ in UNUSED_COMMITMENT_TABLES.values())],
            "figures": ["anomalies"],
        },
    ]
    return data | {
        "figures": [*data["figures"], *figures],
        "sections": [*data["sections"], *sections],
        "assumptions": [*data["assumptions"], *FINANCE_ASSUMPTIONS, review["anomalies"]["method"]],
    }


def finance_text(review: dict) -> list[str]:
    """The command's table form of the three sections."""
    if "allocation" not in review:
        return []
    currency, allocation = review["currency"], review["allocation"]
    lines = ["", f"Allocation (rule {allocation['rule']}: {allocation['rule_description']}):"]
    lines.append(
        f"  shared {allocation['shared_cost']} {currency}, idle {allocation['idle_cost']} {currency}, "
        f"unallocated {allocation['unallocated_cost']} {currency}"
    )
    if allocation["note"]:
        lines.append(f"  note: {allocation['note']}")
    for team in allocation["teams"]:
        lines.append(
            f"  {team['team']:<24} {team['showback_cost']:>16} {currency} (direct {team['direct_cost']}, "
            f"shared {team['allocated_shared_cost']}, idle {team['allocated_idle_cost']})"
        )
    lines += ["", "Budgets:"] + [
        f"  {b['team']:<20} {b['month']} {b['amount']:>14} {b['currency']} burn {b['burn']} forecast {b['forecast']} "
        f"({b['forecast_pct'] or 'n/a'}%) overrun {b['overrun_date'] or '-'} {b['state']}"
        for b in review["budgets"]
    ] or ["  none"]
    lines += ["", f"Anomalies ({review['anomalies']['found']} found):"] + [
        f"  {a['day']} {a['team']:<16} {a['provider']} {a['service']}: {a['amount']} {currency} vs baseline "
        f"{a['baseline']} ({a['excess_pct'] or 'n/a'}%)"
        for a in review["anomalies"]["items"]
    ]
    lines += [
        f"  unused commitment {c['commitment_id']}: {c['days_unused']} day(s) {c['first_day']}..{c['last_day']}, "
        f"{c['unused_cost']} {currency}"
        for c in review["anomalies"].get("unused_commitments", [])
    ]
    lines += [
        f"  unused non-GPU commitment {c['commitment_id']}: {c['days_unused']} day(s) "
        f"{c['first_day']}..{c['last_day']}, {c['unused_cost']} {currency}"
        for c in review["anomalies"].get("unused_non_gpu_commitments", [])
    ]
    lines += [
        f"  unused commitment {c['commitment_id']} ({c['coverage']}): {c['days_unused']} day(s) "
        f"{c['first_day']}..{c['last_day']}, {c['unused_cost']} {currency}"
        for c in review["anomalies"].get("unused_undetermined_commitments", [])
    ]
    return lines
