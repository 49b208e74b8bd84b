"""The review's `commitments` section as report tables (the report model's ``Table``); its figures are in figures.py."""

from __future__ import annotations

from procurement.reports.model import Column, Table

# Percentages as the review writes them, in points ("50.0" is 50%): numbers in the report model (whose
# "percent" type is a fraction); the spend review page prints them as written (review/report.py).
PERCENT_POINTS = ("utilization_pct", "coverage_pct")


MEASURES = [
    Column("used_cost", "Used", "money", total=True),
    Column("unused_cost", "Unused", "money", total=True),
    Column("committed_cost", "Committed", "money", total=True),
    Column("utilization_pct", "Utilization (%)", "number"),
    Column("gpu_hours", "GPU-hours", "number"),
    Column("committed_gpu_hours", "Committed GPU-hours", "number"),
    Column("coverage_pct", "Coverage (%)", "number"),
]


def commitment_tables(review: dict) -> list[Table]:
    section = review["commitments"]
    totals = section["totals"]
    expiring = section["expiring"]
    return [
        Table(
            "commitment_totals",
            "Commitment utilization and GPU coverage, whole period",
            [Column("measure", "Measure"), Column("value", "Value")],
            [
                {
                    "measure": "Utilization (used / committed, %)",
                    "value_kind": "percent",
                    "value": totals["utilization_pct"] or "n/a",
                },
                {
                    "measure": "GPU coverage (committed / all GPU-hours, %)",
                    "value_kind": "percent",
                    "value": totals["coverage_pct"] or "n/a",
                },
                {"measure": "Committed cost", "value_kind": "money", "value": totals["committed_cost"]},
                {
                    "measure": "Unused, attributed to GPU",
                    "value_kind": "money",
                    "value": totals["gpu_attributed_unused_cost"],
                },
                {
                    "measure": "Unused, unattributed (beside GPU spend)",
                    "value_kind": "money",
                    "value": totals["unattributed_commitment_cost"],
                },
            ],
        ),
        Table(
            "commitment_utilization",
            "Utilization and coverage by commitment",
            [
                Column("commitment_id", "Commitment"),
                Column("type", "Type"),
                Column("attribution", "Counted as GPU spend"),
                *MEASURES,
                Column("unattributed_cost", "Unattributed", "money"),
                Column("end", "Ends"),
            ],
            section["by_commitment"],
        ),
        Table(
            "commitment_by_month",
            "Utilization and coverage by month",
            [Column("month", "Month"), *MEASURES],
            section["by_month"],
        ),
        Table(
            "commitment_by_team",
            "Utilization and coverage by team",
            [Column("team", "Team"), *MEASURES],
            section["by_team"],
        ),
        Table(
            "commitments_expiring",
            f"Commitments ending within {expiring['within_days']} days of {expiring['as_of']}"
            + (f" ({expiring['note']})" if expiring["note"] else ""),
            [
                Column("commitment_id", "Commitment"),
                Column("type", "Type"),
                Column("end", "Ends"),
                Column("days_left", "Days left", "number"),
                Column("utilization_pct", "Utilization (%)", "number"),
                Column("committed_cost", "Committed in the period", "money"),
            ],
            expiring["commitments"],
        ),
    ]


def short_label(commitment_id: str) -> str:
    """An ARN's last part (sp-0abc..., ri-...), so a chart's labels stay readable."""
    return commitment_id.rsplit("/", 1)[-1][-28:] or "(no id)"
