"""The review's `commitments` section as report tables and charts (review/report.py's data object:
columns of key, label and kind; rows of strings; figures with their SVG)."""

from __future__ import annotations

from gpuledger.charts import stacked_bar_chart

PERCENT = "percent"  # a percentage as the review writes it ("50.0"): the report framework maps it


def _column(key: str, label: str, kind: str = "text") -> dict:
    return {"key": key, "label": label, "kind": kind}


MEASURES = [
    _column("used_cost", "Used", "money"),
    _column("unused_cost", "Unused", "money"),
    _column("committed_cost", "Committed", "money"),
    _column("utilization_pct", "Utilization (%)", PERCENT),
    _column("gpu_hours", "GPU-hours", "hours"),
    _column("committed_gpu_hours", "Committed GPU-hours", "hours"),
    _column("coverage_pct", "Coverage (%)", PERCENT),
]


def commitment_tables(review: dict) -> list[dict]:
    section = review["commitments"]
    totals = section["totals"]
    expiring = section["expiring"]
    return [
        {
            "id": "commitment_totals",
            "title": "Commitment utilization and GPU coverage, whole period",
            "columns": [_column("measure", "Measure"), _column("value", "Value")],
            "rows": [
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
            "total_of": [],
        },
        {
            "id": "commitment_utilization",
            "title": "Utilization and coverage by commitment",
            "columns": [
                _column("commitment_id", "Commitment"),
                _column("type", "Type"),
                _column("attribution", "Counted as GPU spend"),
                *MEASURES,
                _column("unattributed_cost", "Unattributed", "money"),
                _column("end", "Ends"),
            ],
            "rows": section["by_commitment"],
            "total_of": ["used_cost", "unused_cost", "committed_cost"],
        },
        {
            "id": "commitment_by_month",
            "title": "Utilization and coverage by month",
            "columns": [_column("month", "Month"), *MEASURES],
            "rows": section["by_month"],
            "total_of": ["used_cost", "unused_cost", "committed_cost"],
        },
        {
            "id": "commitment_by_team",
            "title": "Utilization and coverage by team",
            "columns": [_column("team", "Team"), *MEASURES],
            "rows": section["by_team"],
            "total_of": ["used_cost", "unused_cost", "committed_cost"],
        },
        {
            "id": "commitments_expiring",
            "title": f"Commitments ending within {expiring['within_days']} days of {expiring['as_of']}"
            + (f" ({expiring['note']})" if expiring["note"] else ""),
            "columns": [
                _column("commitment_id", "Commitment"),
                _column("type", "Type"),
                _column("end", "Ends"),
                _column("days_left", "Days left", "hours"),
                _column("utilization_pct", "Utilization (%)", PERCENT),
                _column("committed_cost", "Committed in the period", "money"),
            ],
            "rows": expiring["commitments"],
            "total_of": [],
        },
    ]


def short_label(commitment_id: str) -> str:
    """An ARN's last part (sp-0abc..., ri-...), so a chart's labels stay readable."""
    return commitment_id.rsplit("/", 1)[-1][-28:] or "(no id)"


def utilization_chart(review: dict) -> str:
    rows = review["commitments"]["by_commitment"]
    return stacked_bar_chart(
        [short_label(r["commitment_id"]) for r in rows],
        {"used": [float(r["used_cost"]) for r in rows], "unused": [float(r["unused_cost"]) for r in rows]},
        unit=review["currency"],
        title="Commitment utilization: used and unused cost by commitment",
    )


def coverage_chart(review: dict) -> str:
    months = review["commitments"]["by_month"]
    committed = [float(m["committed_gpu_hours"]) for m in months]
    return stacked_bar_chart(
        [m["month"] for m in months],
        {
            "under commitment": committed,
            "not committed": [float(m["gpu_hours"]) - c for m, c in zip(months, committed, strict=True)],
        },
        unit="GPU-h",
        title="GPU coverage by month: GPU-hours under a commitment and not",
    )


def commitment_figures(review: dict) -> list[dict]:
    return [
        {
            "id": "commitment_utilization",
            "title": "Commitment utilization (used and unused, by commitment)",
            "kind": "stacked_bar",
            "table": "commitment_utilization",
            "svg": utilization_chart(review),
        },
        {
            "id": "commitment_coverage",
            "title": "GPU coverage by month (GPU-hours under a commitment)",
            "kind": "stacked_bar",
            "table": "commitment_by_month",
            "svg": coverage_chart(review),
        },
    ]
