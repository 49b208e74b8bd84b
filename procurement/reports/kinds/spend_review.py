"""GPU spend review for a period (issue 8, section 3): the billing engine's review as a report.

The numbers come from ``billing.review.engine`` (the arithmetic) and the tables from
``billing.review.report.review_tables``, already in the report model (the spend review page shows
the same ``Table`` objects); this module arranges them into sections with their figures and words,
so the page, PDF, XLSX and CSV show exactly what ``manage.py spend_review --format json`` prints.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import replace
from decimal import Decimal
from typing import Any

from billing.review.figures import CATEGORY_ORDER, review_figures
from billing.review.report import REVIEW_ASSUMPTIONS, review_tables
from procurement.reports.dates import age_days, stale_by_now
from procurement.reports.format import display
from procurement.reports.model import (
    Assumption,
    Column,
    Figure,
    Headline,
    PriceDate,
    Report,
    Section,
    Series,
    Table,
)
from procurement.reports.registry import ReportInputError, ReportKind, ReportPeriod

SECTION_OF_TABLE = {
    "summary": "Totals",
    "by_month": "Spend by month, by pricing category",
    "by_team": "Spend by team",
    "by_project": "Spend by project",
    "by_provider": "Spend by provider",
    "by_gpu": "Spend by GPU (cost per GPU-hour)",
    "by_pricing_category": "Spend by pricing category",
}


def load_inputs(period: ReportPeriod) -> dict[str, Any]:
    """Django side: the stored spend rows reviewed by the billing service (prices, FX, utilization)."""
    from billing.review.engine import ReviewInputError
    from billing.review.service import build_review, make_request

    filters = {"team": period.team, "project": period.project, "provider": period.provider}
    try:
        review = build_review(
            make_request(start=period.start, end=period.end, **filters, allocation=period.allocation)
        )
    except ReviewInputError as problem:
        raise ReportInputError(problem.field, problem.message) from None
    return {
        "start": period.start.isoformat(),
        "end": period.end.isoformat(),
        "filters": filters,
        "review": review,
    }


def _totals(summary: Table) -> Table:
    """The page's Totals table, keyed "totals" (the CSV zip's summary.csv is the headline figures), its
    values read as numbers (words such as "n/a" stay text)."""
    measure, value = summary.columns
    return replace(summary, key="totals", columns=[measure, replace(value, type="number")])


def _by_month_stacked(table: Table) -> Table:
    """The month table with one column per pricing category (the stacked chart's numbers, with totals)."""
    columns = [Column(f"effective_cost_{c}", f"{c.replace('_', ' ')}", "money", True) for c in CATEGORY_ORDER]
    rows = [
        {key: value for key, value in row.items() if key != "effective_cost_by_pricing_category"}
        | {
            f"effective_cost_{c}": row.get("effective_cost_by_pricing_category", {}).get(c, "0")
            for c in CATEGORY_ORDER
        }
        for row in table.rows
    ]  # the category dict itself is dropped: the columns above carry it
    return replace(table, columns=[*table.columns, *columns], rows=rows)


def _figures(review: dict[str, Any]) -> dict[str, Figure]:
    """The review's figures (billing/review/figures.py: the same objects the spend review page draws),
    under this module's short names."""
    figures = review_figures(review)
    return {short: figures[key] for short, key in FIGURE_KEYS.items()}


FIGURE_KEYS = {
    "month": "spend_by_month",
    "team": "spend_by_team",
    "gpu": "cost_per_gpu_hour",
    "utilization": "commitment_utilization",
    "coverage": "commitment_coverage",
    "savings": "savings_waterfall",
}


def _finance_sections(tables: dict[str, Any], review: dict[str, Any]) -> list[Section]:
    """Allocation, budgets and anomalies (billing/finance/report.py), when the review has them."""
    if "allocation" not in tables:
        return []
    currency, allocation = review["currency"], review["allocation"]
    showback = [
        Series(part, [(t["team"], float(t[key])) for t in allocation["teams"]])
        for part, key in (
            ("direct", "direct_cost"),
            ("shared allocated", "allocated_shared_cost"),
            ("idle allocated", "allocated_idle_cost"),
        )
    ]
    budgets = [
        Series("burn", [(f"{b['team']} {b['month']}", float(b["burn"])) for b in review["budgets"]]),
        Series(
            "forecast to month end",
            [
                (f"{b['team']} {b['month']}", max(float(b["forecast"]) - float(b["burn"]), 0))
                for b in review["budgets"]
            ],
        ),
    ]
    items = review["anomalies"]["items"][:20]
    anomalies = [Series("above baseline", [(f"{a['day']} {a['team']}", float(a["excess"])) for a in items])]
    return [
        Section(
            f"Allocation (rule: {allocation['rule']})",
            [
                f"{allocation['rule_description'].capitalize()}. "
                f"Shared {display(allocation['shared_cost'], 'money', currency)}, idle "
                f"{display(allocation['idle_cost'], 'money', currency)}."
                + (f" {allocation['note']}." if allocation["note"] else "")
            ],
            [tables["allocation"]],
            [Figure("allocation", "stacked_bar", "Showback by team", "team", currency, showback)],
        ),
        Section(
            "Budgets",
            ["Forecast: linear run-rate of the days so far; one e-mail at 80% and one at 100% per budget."],
            [tables["budgets"]],
            [
                Figure(
                    "budgets",
                    "stacked_bar",
                    "Budgets: burn and forecast",
                    "budget",
                    "budget currency",
                    budgets,
                )
            ]
            if review["budgets"]
            else [],
        ),
        Section(
            "Anomalies",
            [review["anomalies"]["method"] + "."],
            [tables["anomalies"]],
            [
                Figure(
                    "anomalies", "bar", "Anomalies: spend above the 28-day median", "day", currency, anomalies
                )
            ]
            if items
            else [],
        ),
    ]


def _subject(inputs: dict[str, Any]) -> str:
    filters = ", ".join(f"{key} {value}" for key, value in inputs["filters"].items() if value)
    return f"period {inputs['start']} to {inputs['end']} (exclusive)" + (f", {filters}" if filters else "")


def build_report(inputs: dict[str, Any], now: dt.datetime) -> Report:
    review = inputs["review"]
    currency, totals = review["currency"], review["totals"]
    tables = {table.key: table for table in review_tables(review)}
    figures = _figures(review)
    savings_total = sum((Decimal(s["amount"]) for s in review["savings"]), Decimal(0))
    idle = review["idle_gpu_hours"]
    sections = [
        Section(
            SECTION_OF_TABLE["summary"],
            [f"GPU spend covers GPU instance usage and unused commitments, in {currency}."],
            [_totals(tables["summary"])],
        ),
        Section(
            SECTION_OF_TABLE["by_month"], [], [_by_month_stacked(tables["by_month"])], [figures["month"]]
        ),
        Section(SECTION_OF_TABLE["by_team"], [], [tables["by_team"]], [figures["team"]]),
        Section(SECTION_OF_TABLE["by_project"], [], [tables["by_project"]]),
        Section(SECTION_OF_TABLE["by_provider"], [], [tables["by_provider"]]),
        Section(SECTION_OF_TABLE["by_gpu"], [], [tables["by_gpu"]], [figures["gpu"]]),
        Section(SECTION_OF_TABLE["by_pricing_category"], [], [tables["by_pricing_category"]]),
        Section(
            "Unused commitments",
            [
                f"Commitments billed but not used (CommitmentDiscountStatus = Unused): "
                f"{display(review['unused_commitment_cost'], 'money', currency)}, included in GPU spend."
            ],
        ),
        Section(
            "Idle GPU-hours",
            [
                f"GPU-hours under 10% mean utilization: {display(idle, 'number')}."
                if idle is not None
                else "No utilization data for this period: idle time is not judged."
            ],
        ),
        Section(
            "Non-GPU charges",
            [
                f"Storage, network, tax, support and other compute: "
                f"{display(review['non_gpu_cost'], 'money', currency)}, shown beside GPU spend and never in cost per GPU-hour.",
                f"Undetermined (the bill cannot tell GPU from non-GPU): "
                f"{display(review.get('undetermined_cost', '0'), 'money', currency)}, beside both and in neither.",
                *review.get("warnings", []),
            ],
        ),
        Section(
            "Commitments: utilization, coverage, expiring",
            [
                f"Unused commitments not tied to GPU capacity: {display(review['unattributed_commitment_cost'], 'money', currency)} "
                "unattributed, beside GPU spend and never in it. Utilization = used / committed cost (AWS "
                "SavingsPlansUtilization); coverage = GPU-hours under a commitment / all GPU-hours (AWS CoverageHours).",
                *(
                    [review["commitments"]["expiring"]["note"]]
                    if review["commitments"]["expiring"]["note"]
                    else []
                ),
            ],
            [
                tables[key]
                for key in (
                    "commitment_utilization",
                    "commitment_by_month",
                    "commitment_by_team",
                    "commitments_expiring",
                )
            ],
            [figures["utilization"], figures["coverage"]],
        ),
        Section(
            "Savings opportunities",
            [
                "Applied in the order spot, commitment, cheaper GPU, idle, each to the "
                "hours an earlier one did not claim, so no hour is counted twice."
            ],
            [tables["savings"]],
            [figures["savings"]],
        ),
    ]
    sections += _finance_sections(tables, review)
    assumptions = [
        Assumption(f"Review rule {n}", text, "docs/billing.md")
        for n, text in enumerate(REVIEW_ASSUMPTIONS, 1)
    ]
    assumptions += [
        Assumption(f"{saving['kind']} saving", text, "billing/review/savings.py")
        for saving in review["savings"]
        for text in saving["assumptions"]
    ]
    return Report(
        kind="spend_review",
        title="GPU spend review",
        subject=_subject(inputs),
        currency=currency,
        generated_at=now.isoformat(),
        summary=[
            Headline("GPU spend (effective)", totals["effective_cost"], "money"),
            Headline("GPU-hours", totals["gpu_hours"], "number"),
            Headline("Effective cost per GPU-hour", totals["effective_cost_per_gpu_hour"], "price"),
            Headline("Unused commitments", review["unused_commitment_cost"], "money"),
            Headline("Non-GPU spend (beside, not included)", review["non_gpu_cost"], "money"),
            Headline(
                "Unattributed commitments (beside, not included)",
                review["unattributed_commitment_cost"],
                "money",
            ),
            Headline("Savings found", str(savings_total), "money", "re-priced actual usage"),
        ],
        sections=sections,
        assumptions=assumptions,
        price_dates=price_dates(review, now),
        verdict=f"{display(totals['effective_cost'], 'money', currency)} of GPU spend; "
        f"{display(savings_total, 'money', currency)} of savings found.",
    )


def price_dates(review: dict[str, Any], now: dt.datetime) -> list[PriceDate]:
    """The catalog prices the savings re-priced the usage at, each once, with its observation date,
    quality (observed, snapshot, quoted) and whether it has gone stale by `now`."""
    seen, dates = set(), []
    for saving in review["savings"]:
        for price in saving.get("prices", []):
            key = (price["label"], price["observed_at"], price["source"])
            if key in seen:
                continue
            seen.add(key)
            observed = price["observed_at"]
            dates.append(
                PriceDate(
                    label=f"{saving['kind']} saving: {price['label']}",
                    observed_at=observed,
                    source=price["source"],
                    quality=price["quality"],
                    stale=stale_by_now(observed, price.get("stale_after_hours"), now),
                    age_days=age_days(observed, now),
                )
            )
    return dates


KIND = ReportKind(
    name="spend_review",
    title="GPU spend review",
    roles=("finance", "admin"),
    subject="billing period",
    load=load_inputs,
    build=build_report,
    by_period=True,
)
