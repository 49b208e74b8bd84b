"""Cost pages: TCO studies (list, form, report with charts) and a workload's ranked recommendations."""

from __future__ import annotations

import datetime as dt

from django.http import Http404
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.functional import SimpleLazyObject

from gpuledger.accounts.teams import can_see, get_visible_or_404, team_for_new_object, visible_to
from gpuledger.charts import line_chart, scatter_chart, tornado_chart
from gpuledger.roles import ENGINEER, role_required
from gpuledger.templatetags.formatting import hourly, money
from procurement import models
from procurement.costing.documents import load_document_text
from procurement.costing.values import CostInputError
from procurement.ranking.ties import answer_tie_note
from procurement.services.recommendations import recommendation_create, recommendation_preview
from procurement.services.tco import study_errors, tco_study_create
from procurement.sizing.documents import spec_to_yaml
from procurement.views import ranking_form
from procurement.workload_heads import SavedAnswer, workload_head

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


@role_required(ENGINEER)
def tco_list_page(request):
    """The team's stored studies, newest first; POST a YAML or JSON study to evaluate and store it (owned
    by the signed-in engineer and their team)."""
    text, error, errors = EXAMPLE_STUDY, None, []
    if request.method == "POST":
        text = request.POST.get("study", "")
        document = None
        try:
            document = load_document_text(text, "study")
            study = tco_study_create(
                document=document, owner=request.user, team=team_for_new_object(request.user)
            )
        except CostInputError as problem:
            # shown above the form, every error at once; nothing was stored
            errors = [str(found) for found in study_errors(document)] if document is not None else []
            error = str(problem) if not errors else None
        else:
            return redirect("tco-detail", pk=study.pk)
    studies = visible_to(models.TcoStudy.objects, request.user).order_by("-computed_at")[:100]
    context = {"studies": studies, "text": text, "error": error, "errors": errors}
    return render(request, "procurement/tco_list.html", context)


@role_required(ENGINEER)
def tco_detail_page(request, pk: int):
    study = get_visible_or_404(models.TcoStudy.objects, request.user, pk=pk)
    report = study.result
    rent = report.get("rent", {})
    rent_price_stale = rent.get("price_stale") or stale_now(
        {
            "price_stale_after_hours": rent.get("price_stale_after_hours"),
            "price_observed_at": rent.get("price_observed_at"),
            "stale": rent.get("price_stale"),
        },
        timezone.now(),
    )
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
    rows = [
        (row["driver"].replace("_", " "), float(row["low"]) - base, float(row["high"]) - base)
        for row in sensitivity["rows"]
    ]
    return tornado_chart(
        rows,
        base_label=f"NPV advantage of buying {money(sensitivity['base'])}",
        unit=report["currency"],
        title="Sensitivity: each driver -20% / +20%",
    )


@role_required(ENGINEER)
def recommendation_page(request, workload_id: int):
    """A workload's saved answer (the spec it ranked, the options it was computed under, ranked
    configurations with a cost-versus-time scatter), and a form to re-run it with other options.

    A re-run shows its answer without storing it unless "save" is ticked: a query never replaces the
    workload's saved answer (nor the options a recompute uses) by accident."""
    # The workload and its saved answer as the page shows them, cached per workload (workload_heads.py);
    # who may see it is decided here, per request, by visible_to's rule. The saved rows are read and
    # rendered only when the page's cached rendering of them is missing or stale (rows_cache_key): they
    # and their chart are most of this page's time.
    workload = workload_head(workload_id)
    if workload is None or not can_see(request.user, team_id=workload.team_id, owner_id=workload.owner_id):
        raise Http404("No such object.")
    saved = workload.answer
    options = saved.parameters if saved else {}
    error, preview, shown = "", False, None  # shown: a re-run's results, when there is one
    computed_at = saved.computed_at if saved else None
    if request.method == "POST":
        options = ranking_form.options_from_form(request.POST)
        # a re-run works on the stored row, read and checked again (not the cached copy)
        row = get_visible_or_404(
            models.Workload.objects.select_related("team", "owner"), request.user, pk=workload_id
        )
        try:
            if request.POST.get("save"):
                recommendation_create(workload=row, parameters=options, saved_by=request.user)
                return redirect("recommendations", workload_id=row.pk)
            shown = recommendation_preview(workload=row, parameters=options).results
            preview, computed_at = True, timezone.now()
        except CostInputError as problem:
            error = f"{problem.field}: {problem.message}"  # nothing was stored

    def results() -> list[dict]:
        return shown if shown is not None else (saved.results if saved else [])

    answer = SimpleLazyObject(lambda: ranked_answer(results(), options))
    ranked_spec = saved.spec if (saved and saved.spec and not preview) else workload.spec
    return render(
        request,
        "procurement/recommend_detail.html",
        {
            "workload": workload,
            "recommendation": saved,
            "preview": preview,
            "computed_at": computed_at,
            "error": error,
            "rows": SimpleLazyObject(lambda: answer["rows"]),
            "answer": answer,
            "rows_cache_key": saved_rows_cache_key(saved) if (saved and not preview and not error) else "",
            "ranked_spec_yaml": SimpleLazyObject(lambda: spec_to_yaml(ranked_spec)),
            "spec_changed_since": bool(saved and saved.spec and saved.spec != workload.spec and not preview),
            "options_summary": SimpleLazyObject(lambda: ranking_form.options_summary(options)),
            "form": ranking_form.form_values(options),
            "pricing_model_choices": ranking_form.PRICING_MODEL_CHOICES,
        },
    )


def ranked_answer(results: list[dict], options: dict) -> dict:
    """The ranked rows as the page shows them, their currency and their cost-versus-time chart."""
    rows = recommendation_rows(results)
    currency = results[0]["currency"] if results else (options.get("currency") or "USD")
    return {
        "rows": rows,
        "has_rows": bool(rows),
        "currency": currency,
        "scatter_svg": cost_time_chart(rows, currency) if rows else "",
        # an answer-level line above the table, not only in the first row's collapsed "Why" (audtie)
        "tie_note": answer_tie_note(results) or "",
    }


def saved_rows_cache_key(saved: SavedAnswer) -> str:
    """What the rendered rows of a saved answer depend on: the answer itself (a recompute stores a new
    one) and the hour, since "stale today" and a price's age in days move with the clock; the fragment
    also expires after 5 minutes, so a price that turned stale shows within that time."""
    return f"{saved.pk}:{saved.computed_at.isoformat()}:{timezone.now():%Y-%m-%dT%H}"


def recommendation_rows(results: list[dict]) -> list[dict]:
    now = timezone.now()
    return [
        row
        | {
            "stale_now": stale_now(row, now),
            "cost_segments": cost_segments(row),
            "unit_labels": unit_cost_labels(row),
        }
        for row in results
    ]


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
    segments, offset = [], 0.0
    for name in COST_PARTS:
        percent = round(100 * float(parts[name]) / total, 2)
        # offset: where the part starts on the 0-100 bar (an SVG rect, so no inline style is needed)
        segments.append({"name": name, "amount": parts[name], "percent": percent, "offset": round(offset, 2)})
        offset += percent
    return segments


def unit_cost_labels(row: dict) -> list[str]:
    # per GPU-hour, per 1M tokens: prices, read with at most 4 decimals (the API keeps all 6)
    return [
        f"{hourly(value)} {UNIT_LABELS.get(name, name)}" for name, value in row.get("unit_costs", {}).items()
    ]


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
    monthly = [
        row.get("serving") and row["serving"].get("priced_as", "month") == "month" for _, row in fitting
    ]
    if fitting and all(monthly):
        # Serving rows all price the same 730 h, so hours would be one vertical line: plot the month's
        # cost against the tokens/s (an image row's images/s) the configuration serves instead. A
        # generation job (priced_as "job") has its own hours: it plots cost versus time like training.
        images = all(row["serving"].get("unit") == "image" for _, row in fitting)
        return _ranking_scatter(
            fitting,
            lambda row: float(
                row["serving"].get("images_per_second" if images else "tokens_per_second") or 0.0
            ),
            x_label="images/s" if images else "generated tokens/s",
            y_label=f"cost per month of serving ({currency})",
            title="Cost per month versus throughput",
        )
    return _ranking_scatter(
        fitting,
        lambda row: row["hours"],
        x_label="hours",
        y_label=f"total job cost ({currency})",
        title="Cost versus time",
    )


def _ranking_scatter(fitting: list[tuple[int, dict]], x_of, *, x_label: str, y_label: str, title: str) -> str:
    """Each ranked row as a point (x_of(row), total cost), grouped by pricing model, the Pareto front larger."""
    points = [
        {
            "x": x_of(row),
            "y": float(row["total_cost"]),
            "label": _row_label(rank, row),
            "group": row["pricing_model"],
        }
        for rank, row in fitting
    ]
    front = {_row_label(rank, row) for rank, row in fitting if row.get("pareto")}
    return scatter_chart(points, x_label=x_label, y_label=y_label, title=title, highlight=front)
