"""Cost pages: TCO studies (list, form, report with charts) and a workload's ranked recommendations."""

from __future__ import annotations

import datetime as dt

from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone

from gpuledger.charts import line_chart, scatter_chart, tornado_chart
from procurement import models, services
from procurement.costing.documents import load_document_text
from procurement.costing.values import CostInputError

EXAMPLE_STUDY = """name: one 8xH100 server, 3 years
currency: USD
utilization: 0.8
buy:
  gpu: h100-sxm5-80gb
  server_price: 300000
  install_cost: 5000
rent:
  pricing_model: on_demand
  price_per_gpu_hour: 2.99
"""


def tco_list_page(request):
    """Stored studies, newest first; POST a YAML or JSON study to evaluate and store it."""
    text, error, errors = EXAMPLE_STUDY, None, []
    if request.method == "POST":
        text = request.POST.get("study", "")
        document = None
        try:
            document = load_document_text(text, "study")
            owner = request.user if request.user.is_authenticated else None
            study = services.tco_study_create(document=document, owner=owner)
        except CostInputError as problem:
            # shown above the form, every error at once; nothing was stored
            errors = [str(found) for found in services.study_errors(document)] if document is not None else []
            error = str(problem) if not errors else None
        else:
            return redirect("tco-detail", pk=study.pk)
    studies = models.TcoStudy.objects.order_by("-computed_at")[:100]
    context = {"studies": studies, "text": text, "error": error, "errors": errors}
    return render(request, "procurement/tco_list.html", context)


def tco_detail_page(request, pk: int):
    study = get_object_or_404(models.TcoStudy, pk=pk)
    report = study.result
    rent = report.get("rent", {})
    rent_price_stale = rent.get("price_stale") or stale_now(
        {"price_stale_after_hours": rent.get("price_stale_after_hours"),
         "price_observed_at": rent.get("price_observed_at"), "stale": rent.get("price_stale")},
        timezone.now(),
    )  # fmt: skip
    return render(
        request,
        "procurement/tco_detail.html",
        {
            "study": study,
            "report": report,
            "cost_curves_svg": cumulative_cost_chart(report),
            "tornado_svg": sensitivity_chart(report),
            "inputs": report.get("inputs", {}),
            "rent_price_stale": bool(rent_price_stale),
            "utilization_percent": percent_text(report.get("utilization")),
            "break_even_percent": percent_text(report.get("break_even_utilization")),
            "npv_break_even_percent": percent_text(report.get("npv_break_even_utilization")),
            "irr_percent": percent_text(report.get("irr")),
            "tax_percent": percent_text((report.get("after_tax") or {}).get("tax_rate")),
            "sensitivity_rows": [
                row | {"label": row["driver"].replace("_", " ")}
                for row in report.get("sensitivity", {}).get("rows", [])
            ],
        },
    )


def percent_text(share: str | None) -> str:
    """A stored share ("0.829378") as a person reads it ("82.9%"); blank when there is none."""
    if share in (None, ""):
        return ""
    return f"{float(share) * 100:,.1f}%"


def cumulative_cost_chart(report: dict) -> str:
    monthly = report["monthly"]
    series = {
        label: [(float(month), float(value)) for month, value in zip(monthly["month"], values, strict=True)]
        for label, values in (("buy", monthly["buy_cumulative"]), ("rent", monthly["rent_cumulative"]))
    }
    months = monthly["month"]
    ticks = {float(month): str(month) for month in months if month % 6 == 0 or month == months[-1]}
    return line_chart(
        series,
        x_label="month",
        y_label=f"cumulative cost ({report['currency']})",
        title="Cumulative cash cost: buy vs rent",
        x_tick_labels=ticks,
    )


def sensitivity_chart(report: dict) -> str:
    sensitivity = report["sensitivity"]
    base = float(sensitivity["base"])
    rows = [(row["driver"].replace("_", " "), float(row["low"]) - base, float(row["high"]) - base)
            for row in sensitivity["rows"]]  # fmt: skip
    return tornado_chart(
        rows,
        base_label=f"NPV advantage of buying {sensitivity['base']}",
        unit=report["currency"],
        title="Sensitivity: each driver -20% / +20%",
    )


def recommendation_page(request, workload_id: int):
    """A workload's latest ranked configurations with a cost-versus-time scatter (Pareto front larger)."""
    workload = get_object_or_404(models.Workload, pk=workload_id)
    latest = workload.recommendations.order_by("-computed_at", "-pk").first()
    now = timezone.now()
    rows = [
        row
        | {
            "stale_now": stale_now(row, now),
            "cost_segments": cost_segments(row),
            "unit_labels": unit_cost_labels(row),
        }
        for row in (latest.results if latest else [])
    ]
    currency = rows[0]["currency"] if rows else "USD"
    return render(
        request,
        "procurement/recommend_detail.html",
        {
            "workload": workload,
            "recommendation": latest,
            "rows": rows,
            "currency": currency,
            "scatter_svg": cost_time_chart(rows, currency),
        },
    )


COST_PARTS = ("compute", "setup", "storage", "reruns")
UNIT_LABELS = {
    "per_gpu_hour": "per GPU-hour",
    "per_million_training_tokens": "per 1M training tokens",
    "per_million_generated_tokens": "per 1M generated tokens",
    "per_epoch": "per epoch",
}


def cost_segments(row: dict) -> list[dict]:
    """The row's cost parts as a stacked bar: name, amount and share of the total in percent (rows stored
    before breakdowns existed, and infeasible rows, have none)."""
    parts = row.get("cost_breakdown")
    if not parts or not float(parts["total"]):
        return []
    total = float(parts["total"])
    return [
        {"name": name, "amount": parts[name], "percent": round(100 * float(parts[name]) / total, 2)}
        for name in COST_PARTS
    ]


def unit_cost_labels(row: dict) -> list[str]:
    return [f"{value} {UNIT_LABELS.get(name, name)}" for name, value in row.get("unit_costs", {}).items()]


def stale_now(row: dict, now: dt.datetime) -> bool:
    """Is the row's price stale today? A stored row says whether it was stale when ranked; a price that has
    aged past its limit since (``price_stale_after_hours``) is stale now even if nothing recomputed it."""
    limit, observed = row.get("price_stale_after_hours"), row.get("price_observed_at")
    if limit is None or not observed:
        return bool(row.get("stale"))
    return now - dt.datetime.fromisoformat(observed) > dt.timedelta(hours=limit)


def _row_label(rank: int, row: dict) -> str:
    return f"#{rank} {row['provider']} {row['instance_type']} x{row['instances']} {row['pricing_model']}"


def cost_time_chart(rows: list[dict], currency: str = "USD") -> str:
    fitting = [(rank, row) for rank, row in enumerate(rows, start=1) if row["fits"] and row["total_cost"]]
    points = [
        {
            "x": row["hours"],
            "y": float(row["total_cost"]),
            "label": _row_label(rank, row),
            "group": row["pricing_model"],
        }
        for rank, row in fitting
    ]
    front = {_row_label(rank, row) for rank, row in fitting if row.get("pareto")}
    return scatter_chart(
        points,
        x_label="hours",
        y_label=f"total job cost ({currency})",
        title="Cost versus time",
        highlight=front,
    )
