"""The GPU spend review's tables, built once as the report model's ``Table`` (procurement.reports.model),
and the spend review page's layout of them with its HTML, JSON, CSV and text renderings.

``review_tables`` is what both the page and the report framework's ``spend_review`` kind
(PDF, XLSX, CSV) read: typed columns (text, money, number for GPU-hours and percentages in points,
price for a rate per GPU-hour, a ``total`` flag per summed column) and rows of strings. The page adds
its sections, the figures' SVG and the assumptions around them. Money stays a decimal string to the end.
"""

from __future__ import annotations

import io
import json

from django.template.loader import render_to_string

from billing.finance.report import add_finance_sections, finance_tables, finance_text
from billing.review.commitment_report import PERCENT_POINTS, commitment_tables
from billing.review.figures import review_figures
from billing.review.fx_months import RATE_RULE
from billing.review.gpu_scope import RULE as UNDETERMINED_RULE
from gpuledger.spreadsheet import csv_writer
from gpuledger.templatetags.formatting import grouped
from procurement.reports.model import Column, Table
from procurement.reports.render.figures import figure_svg

# figure id -> the table holding its numbers (the JSON export's "table" of each figure)
FIGURE_TABLES = {
    "spend_by_month": "by_month",
    "spend_by_team": "by_team",
    "cost_per_gpu_hour": "by_gpu",
    "commitment_utilization": "commitment_utilization",
    "commitment_coverage": "commitment_by_month",
    "savings_waterfall": "savings",
}

BREAKDOWN_TABLES = [
    ("by_month", "month", "Spend by month"),
    ("by_team", "team", "Spend by team"),
    ("by_project", "project", "Spend by project"),
    ("by_provider", "provider", "Spend by provider"),
    ("by_gpu", "gpu", "Spend by GPU model"),
    ("by_pricing_category", "pricing_category", "Spend by pricing category"),
]
REVIEW_ASSUMPTIONS = [
    "GPU spend is usage of instance types the catalog maps to a GPU, plus unused commitments; storage, "
    "network, tax, support and other compute are shown as non-GPU spend and never enter cost per GPU-hour.",
    "An unused commitment is GPU spend when the commitment is scoped to GPU capacity (a GPU instance type or "
    "family), else in proportion to the part of its used cost that went to GPU rows; the rest is unattributed "
    "commitment cost, shown beside GPU spend and never in it.",
    "Effective cost (FOCUS EffectiveCost) amortizes upfront commitment purchases, so purchases add nothing again.",
    "Corrections count as deltas in the charge period they correct; the period end (--to) is exclusive.",
    "Idle: a GPU-hour whose mean utilization was under 10%; hours without utilization samples are not judged.",
    "Savings are applied in the order spot, commitment, cheaper GPU, idle, each to hours not already claimed.",
]


def review_tables(review: dict, non_gpu: list | None = None) -> list[Table]:
    """Every table of the review, in the page's order: totals, the breakdowns, non-GPU and undetermined
    spend, savings and the prices they used, commitments, then showback, budgets and anomalies."""
    currency = review["currency"]
    totals = review["totals"]
    summary_rows = [
        {"measure": "Effective cost", "value_kind": "money", "value": totals["effective_cost"]},
        {"measure": "Billed cost", "value_kind": "money", "value": totals["billed_cost"]},
        {"measure": "List cost", "value_kind": "money", "value": totals["list_cost"]},
        {"measure": "GPU-hours", "value_kind": "hours", "value": totals["gpu_hours"]},
        {
            "measure": "Effective cost per GPU-hour",
            "value_kind": "rate",
            "value": totals["effective_cost_per_gpu_hour"] or "n/a",
        },
        {"measure": "Unused commitments", "value_kind": "money", "value": review["unused_commitment_cost"]},
        {
            "measure": "Idle GPU-hours (<10% utilization)",
            "value_kind": "hours",
            "value": review["idle_gpu_hours"] or "no utilization data",
        },
        {
            "measure": "Non-GPU spend (beside, not included)",
            "value_kind": "money",
            "value": review["non_gpu_cost"],
        },
        {
            "measure": "Unattributed commitments (beside, not included)",
            "value_kind": "money",
            "value": review["unattributed_commitment_cost"],
        },
        {
            "measure": "Undetermined: GPU or not? (beside, not included)",
            "value_kind": "money",
            "value": review["undetermined_cost"],
        },
    ]
    tables = [
        Table(
            "summary",
            "Totals",
            [Column("measure", "Measure"), Column("value", f"Value ({currency})")],
            summary_rows,
        )
    ]
    for key, field, title in BREAKDOWN_TABLES:
        columns = [
            Column(field, field.replace("_", " ").title()),
            Column("effective_cost", "Effective cost", "money", total=True),
            Column("billed_cost", "Billed cost", "money"),
            Column("gpu_hours", "GPU-hours", "number", total=True),
            Column("effective_cost_per_gpu_hour", "Per GPU-hour", "price"),
        ]
        if any("previous_effective_cost" in row for row in review[key]):
            columns.append(Column("previous_effective_cost", "Previous period", "money"))
        tables.append(Table(key, title, columns, review[key]))
    tables.append(
        Table(
            "non_gpu",
            "Non-GPU spend (beside GPU spend, not in cost per GPU-hour)",
            [Column("charge", "Charge"), Column("effective_cost", "Effective cost", "money", total=True)],
            non_gpu or [],
        )
    )
    tables.append(
        Table(
            "undetermined",
            "Undetermined spend: the bill cannot tell GPU from non-GPU (beside, in neither)",
            [
                Column("provider", "Provider"),
                Column("instance_type", "Instance type"),
                Column("service_category", "Service category"),
                Column("effective_cost", "Effective cost", "money", total=True),
                Column("billed_cost", "Billed cost", "money"),
            ],
            review["undetermined"],
        )
    )
    savings_rows = [
        {
            "kind": s["kind"],
            "amount": s["amount"],
            "hours_affected": s["hours_affected"],
            "confidence": s.get("confidence", ""),
            "assumptions": "; ".join(s["assumptions"]),
        }
        for s in review["savings"]
    ]
    tables.append(
        Table(
            "savings",
            "Savings opportunities (in the order applied)",
            [
                Column("kind", "Kind"),
                Column("amount", "Amount", "money", total=True),
                Column("hours_affected", "GPU-hours affected", "number"),
                Column("confidence", "Confidence"),
                Column("assumptions", "Assumptions"),
            ],
            savings_rows,
        )
    )
    prices = {}
    for saving in review["savings"]:
        for price in saving.get("prices", []):
            prices.setdefault(
                (price["label"], price["observed_at"], price["source"]),
                {
                    "saving": saving["kind"],
                    "price": price["label"],
                    "observed_at": price["observed_at"] or "",
                    "quality": price["quality"],
                    "source": price["source"],
                },
            )
    tables.append(
        Table(
            "prices",
            "Catalog prices the savings used (observation date and quality)",
            [
                Column("saving", "Saving"),
                Column("price", "Price"),
                Column("observed_at", "Observed at"),
                Column("quality", "Quality"),
                Column("source", "Source"),
            ],
            list(prices.values()),
        )
    )
    return [*tables, *commitment_tables(review), *finance_tables(review)]


def review_report_data(
    review: dict, *, start, end, filters: dict | None = None, non_gpu: list | None = None
) -> dict:
    """The spend review page: its sections (table and figure ids), ``review_tables``, the figures with
    their SVG, the assumptions and warnings, and the review itself (the JSON export carries it)."""
    currency = review["currency"]
    # the report kind's own Figure objects (billing/review/figures.py), drawn as the report draws them
    figures = [
        {
            "id": figure.key,
            "title": figure.title,
            "kind": figure.kind,
            "table": FIGURE_TABLES[figure.key],
            "svg": figure_svg(figure, currency),
        }
        for figure in review_figures(review).values()
    ]
    return add_finance_sections(
        {
            "report": "spend_review",
            "title": "GPU spend review",
            "currency": currency,
            "period": {"from": start.isoformat(), "to": end.isoformat(), "to_is_exclusive": True},
            "filters": {k: v for k, v in (filters or {}).items() if v},
            "sections": [
                {
                    "id": "spend",
                    "title": "Spend",
                    "tables": ["summary", *(t[0] for t in BREAKDOWN_TABLES), "non_gpu", "undetermined"],
                    "figures": ["spend_by_month", "spend_by_team", "cost_per_gpu_hour"],
                },
                {
                    "id": "commitments",
                    "title": "Commitments: utilization, coverage, expiring",
                    "tables": [
                        "commitment_totals",
                        "commitment_utilization",
                        "commitment_by_month",
                        "commitment_by_team",
                        "commitments_expiring",
                    ],
                    "figures": ["commitment_utilization", "commitment_coverage"],
                },
                {
                    "id": "savings",
                    "title": "Savings",
                    "tables": ["savings", "prices"],
                    "figures": ["savings_waterfall"],
                },
            ],
            "tables": review_tables(review, non_gpu),
            "figures": figures,
            "assumptions": [*REVIEW_ASSUMPTIONS, UNDETERMINED_RULE, RATE_RULE],
            "warnings": review.get("warnings", []),
            "review": review,
        }
    )


# The JSON export's column kinds (its documented shape): the report model's types in the page's words
JSON_KINDS = {"text": "text", "money": "money", "number": "hours", "price": "rate"}


def _table_json(table: Table) -> dict:
    return {
        "id": table.key,
        "title": table.title,
        "columns": [
            {
                "key": c.key,
                "label": c.label,
                "kind": "percent" if c.key in PERCENT_POINTS else JSON_KINDS[c.type],
            }
            for c in table.columns
        ],
        "rows": table.rows,
        "total_of": [c.key for c in table.columns if c.total],
    }


def render_json(data: dict) -> str:
    body = {k: v for k, v in data.items() if k != "figures"} | {
        "tables": [_table_json(table) for table in data["tables"]],
        "figures": [{k: v for k, v in f.items() if k != "svg"} for f in data["figures"]],
    }
    return json.dumps(body, indent=2)


def render_csv(data: dict) -> str:
    """Every table, one after another: a line naming the table, its header, its rows, a blank line. Names
    from billing tags reach a spreadsheet as text (the one writer, gpuledger.spreadsheet)."""
    out = io.StringIO()
    writer = csv_writer(out)
    writer.writerow(
        [
            "report",
            data["title"],
            "from",
            data["period"]["from"],
            "to (exclusive)",
            data["period"]["to"],
            "currency",
            data["currency"],
        ]
    )
    for table in data["tables"]:
        writer.writerow([])
        writer.writerow(["table", table.key, table.title])
        writer.writerow([c.label for c in table.columns])
        for row in table.rows:
            writer.writerow(["" if row.get(c.key) is None else row.get(c.key) for c in table.columns])
    writer.writerow([])
    writer.writerow(["assumptions"])
    for line in data["assumptions"]:
        writer.writerow([line])
    return out.getvalue()


def render_html(data: dict) -> str:
    return render_to_string("billing/review_report.html", _template_context(data))


def render_body(data: dict) -> str:
    """The report's body as the spend review page shows it (the HTML export wraps the same body)."""
    return render_to_string("billing/_review_body.html", _template_context(data))


def _template_context(data: dict) -> dict:
    return {
        "data": data,
        "tables": {t.key: t for t in data["tables"]},
        "figures": {f["id"]: f for f in data["figures"]},
        "percent_points": PERCENT_POINTS,
    }


def _commitment_line(review: dict) -> str:
    totals = review["commitments"]["totals"]
    expiring = review["commitments"]["expiring"]
    return (
        f"commitments: utilization {totals['utilization_pct'] or 'n/a'}% of {totals['committed_cost']} "
        f"{review['currency']}; GPU coverage {totals['coverage_pct'] or 'n/a'}% of {totals['gpu_hours']} GPU-h; "
        f"{len(expiring['commitments'])} expiring within {expiring['within_days']} days of {expiring['as_of']}"
        + (
            f" ({len(expiring['end_unknown'])} with no end date in the export)"
            if expiring["end_unknown"]
            else ""
        )
    )


def review_table_text(review: dict) -> str:
    """The review as the command prints it: amounts and GPU-hours with thousands separators (issue 30),
    each keeping its own decimals (a price per GPU-hour its six)."""
    currency, totals, g = review["currency"], review["totals"], grouped
    lines = [
        f"GPU spend {g(totals['effective_cost'])} {currency} effective ({g(totals['billed_cost'])} billed), "
        f"{g(totals['gpu_hours'])} GPU-hours, {totals['effective_cost_per_gpu_hour'] or 'n/a'} {currency}/GPU-hour",
        f"unused commitments {g(review['unused_commitment_cost'])} {currency}; idle GPU-hours "
        f"{g(review['idle_gpu_hours']) if review['idle_gpu_hours'] is not None else 'n/a (no utilization data)'}; "
        f"non-GPU spend {g(review['non_gpu_cost'])} {currency}; unattributed commitments "
        f"{g(review['unattributed_commitment_cost'])} {currency} (beside, not in GPU spend); undetermined "
        f"{g(review['undetermined_cost'])} {currency} (the bill cannot tell GPU from non-GPU; beside, in neither)",
        _commitment_line(review),
    ]
    lines[:0] = [f"warning: {warning}" for warning in review.get("warnings", [])]
    for key, field, title in BREAKDOWN_TABLES:
        lines.append("")
        lines.append(f"{title}:")
        for row in review[key]:
            lines.append(
                f"  {str(row[field]):<24} {g(row['effective_cost']):>16} {currency} {g(row['gpu_hours']):>14} GPU-h"
            )
    lines.append("")
    lines.append("Savings (applied in this order):")
    for saving in review["savings"] or []:
        lines.append(
            f"  {saving['kind']:<12} {g(saving['amount']):>14} {currency} over {g(saving['hours_affected'])} GPU-h"
        )
    if not review["savings"]:
        lines.append("  none found")
    lines += finance_text(review)
    return "\n".join(lines)
