"""The GPU spend review as one plain data object (sections, tables, figures, assumptions), and its
HTML, JSON, CSV and text renderings.

The data object is what a generic report renderer takes (PDF, XLSX later): every table is a list of
columns (key, label, kind: text | money | hours | rate) and rows of strings, every figure names its
chart and carries its SVG, every saving its assumptions. Money stays a decimal string to the end.
"""

from __future__ import annotations

import io
import json

from django.template.loader import render_to_string

from billing.finance.report import add_finance_sections, finance_text
from billing.review.charts import review_charts
from billing.review.commitment_report import commitment_figures, commitment_tables
from billing.review.fx_months import RATE_RULE
from billing.review.gpu_scope import RULE as UNDETERMINED_RULE
from gpuledger.spreadsheet import csv_writer
from gpuledger.templatetags.formatting import grouped

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


def _column(key: str, label: str, kind: str = "text") -> dict:
    return {"key": key, "label": label, "kind": kind}


def review_report_data(
    review: dict, *, start, end, filters: dict | None = None, non_gpu: list | None = None
) -> dict:
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
        {
            "id": "summary",
            "title": "Totals",
            "columns": [_column("measure", "Measure"), _column("value", f"Value ({currency})")],
            "rows": summary_rows,
        }
    ]
    for key, field, title in BREAKDOWN_TABLES:
        columns = [
            _column(field, field.replace("_", " ").title()),
            _column("effective_cost", "Effective cost", "money"),
            _column("billed_cost", "Billed cost", "money"),
            _column("gpu_hours", "GPU-hours", "hours"),
            _column("effective_cost_per_gpu_hour", "Per GPU-hour", "rate"),
        ]
        if any("previous_effective_cost" in row for row in review[key]):
            columns.append(_column("previous_effective_cost", "Previous period", "money"))
        tables.append(
            {
                "id": key,
                "title": title,
                "columns": columns,
                "rows": review[key],
                "total_of": ["effective_cost", "gpu_hours"],
            }
        )
    tables.append(
        {
            "id": "non_gpu",
            "title": "Non-GPU spend (beside GPU spend, not in cost per GPU-hour)",
            "columns": [_column("charge", "Charge"), _column("effective_cost", "Effective cost", "money")],
            "rows": non_gpu or [],
            "total_of": ["effective_cost"],
        }
    )
    tables.append(
        {
            "id": "undetermined",
            "title": "Undetermined spend: the bill cannot tell GPU from non-GPU (beside, in neither)",
            "columns": [
                _column("provider", "Provider"),
                _column("instance_type", "Instance type"),
                _column("service_category", "Service category"),
                _column("effective_cost", "Effective cost", "money"),
                _column("billed_cost", "Billed cost", "money"),
            ],
            "rows": review["undetermined"],
            "total_of": ["effective_cost"],
        }
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
        {
            "id": "savings",
            "title": "Savings opportunities (in the order applied)",
            "columns": [
                _column("kind", "Kind"),
                _column("amount", "Amount", "money"),
                _column("hours_affected", "GPU-hours affected", "hours"),
                _column("confidence", "Confidence"),
                _column("assumptions", "Assumptions"),
            ],
            "rows": savings_rows,
            "total_of": ["amount"],
        }
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
        {
            "id": "prices",
            "title": "Catalog prices the savings used (observation date and quality)",
            "columns": [
                _column("saving", "Saving"),
                _column("price", "Price"),
                _column("observed_at", "Observed at"),
                _column("quality", "Quality"),
                _column("source", "Source"),
            ],
            "rows": list(prices.values()),
            "total_of": [],
        }
    )
    tables += commitment_tables(review)
    charts = review_charts(review)
    figures = [
        {
            "id": "spend_by_month",
            "title": "Spend by month, by pricing category",
            "kind": "stacked_bar",
            "table": "by_month",
            "svg": charts["spend_by_month"],
        },
        {
            "id": "spend_by_team",
            "title": "Spend by team",
            "kind": "bar",
            "table": "by_team",
            "svg": charts["spend_by_team"],
        },
        {
            "id": "cost_per_gpu_hour",
            "title": "Cost per GPU-hour by GPU",
            "kind": "bar",
            "table": "by_gpu",
            "svg": charts["cost_per_gpu_hour"],
        },
        {
            "id": "savings_waterfall",
            "title": "Savings waterfall",
            "kind": "waterfall",
            "table": "savings",
            "svg": charts["savings_waterfall"],
        },
        *commitment_figures(review),
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
            "tables": tables,
            "figures": figures,
            "assumptions": [*REVIEW_ASSUMPTIONS, UNDETERMINED_RULE, RATE_RULE],
            "warnings": review.get("warnings", []),
            "review": review,
        }
    )


def render_json(data: dict) -> str:
    body = {k: v for k, v in data.items() if k != "figures"} | {
        "figures": [{k: v for k, v in f.items() if k != "svg"} for f in data["figures"]]
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
        writer.writerow(["table", table["id"], table["title"]])
        writer.writerow([c["label"] for c in table["columns"]])
        for row in table["rows"]:
            writer.writerow(
                ["" if row.get(c["key"]) is None else row.get(c["key"]) for c in table["columns"]]
            )
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
        "tables": {t["id"]: t for t in data["tables"]},
        "figures": {f["id"]: f for f in data["figures"]},
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
