"""Spot versus on-demand for a workload: expected cost and P50/P90 time on spot, on demand and (when
the ranking offers it) spot with on-demand fallback; the interruption band with its source and age;
the checkpoint interval advice; and the verdict with its reasons.

Built from the workload's latest stored ranking (``Recommendation.results``), so it shows the numbers
that ranking priced. Optional keys a richer spot model adds (``fallback``, ``simulation`` quantiles,
``expected_cost``) are read defensively: shown when present, said to be missing when not.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

from procurement.ranking.ties import answer_tie_note
from procurement.reports.dates import age_days, stale_by_now
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
from procurement.reports.registry import ReportInputError, ReportKind


def load_inputs(subject_id: int) -> dict[str, Any]:
    from procurement.models import Workload

    workload = Workload.objects.filter(pk=subject_id).first()
    if workload is None:
        raise ReportInputError("id", f"no workload {subject_id}")
    latest = workload.recommendations.order_by("-computed_at", "-pk").first()
    if latest is None:
        raise ReportInputError("id", f"workload {subject_id} has no stored recommendation yet: rank it first")
    return {
        "workload": {"id": workload.pk, "name": workload.name, "task": workload.task, "team": workload.team},
        "recommendation": {
            "id": latest.pk,
            "computed_at": latest.computed_at.isoformat(),
            "parameters": latest.parameters,
            "results": latest.results,
        },
    }


def _first(rows: list[dict[str, Any]], model: str) -> dict[str, Any] | None:
    return next((row for row in rows if row.get("fits") and row.get("pricing_model") == model), None)


def _best_spot(rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The cheapest feasible spot row, preferring one the ranking simulated (it has P50/P90)."""
    spot_rows = [
        row
        for row in rows
        if row.get("fits") and row.get("pricing_model") == "spot" and row.get("ranked_as") != RANKED_FALLBACK
    ]
    simulated = [row for row in spot_rows if (row.get("spot") or {}).get("simulation")]
    return (simulated or spot_rows or [None])[0]


def _offer(row: dict[str, Any]) -> str:
    return f"{row.get('provider')} {row.get('instance_type')} x{row.get('instances', 1)} {row.get('region')}"


FALLBACK_MODELS = ("spot_with_fallback", "spot_fallback", "spot_on_demand_fallback")
RANKED_FALLBACK = "spot_with_fallback"  # a spot row the ranking priced as its spot-with-fallback plan


def _ranked_fallback(rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The ranking's first row priced as the spot-with-on-demand-fallback plan (a spot row that misses the
    deadline alone, issue 26): the report shows that plan, at that row's total, as the ranking does."""
    row = next((r for r in rows if r.get("fits") and r.get("ranked_as") == RANKED_FALLBACK), None)
    if row is None:
        return None
    plan = (row.get("spot") or {}).get("deadline_plan") or {}
    wall = row.get("wall_clock") or {}
    return {
        "offer": _offer(row) + f", falling back on {_fallback_name(plan)}",
        "expected_cost": row.get("total_cost"),
        "effective_price_per_hour": row.get("effective_price_per_hour"),
        "p90_cost": plan.get("p90_cost"),
        "worst_case_cost": plan.get("worst_case_cost"),
        "p_meets_deadline": plan.get("p_meets_deadline"),
        "compute_hours": wall.get("compute_hours"),
    }


def _fallback_name(plan: dict[str, Any]) -> str:
    offer = plan.get("fallback_offer") or {}
    return (
        " ".join(str(offer.get(k, "")) for k in ("provider", "instance_type", "region")).strip()
        + " on demand"
    )


def _fallback(rows: list[dict[str, Any]], row: dict[str, Any] | None) -> dict[str, Any] | None:
    """The spot-with-on-demand-fallback figures, wherever a richer spot model puts them: an object on
    the spot row (``spot.fallback``, ``fallback``, ``spot.spot_with_fallback``) or a ranked row of its
    own pricing model."""
    ranked = _ranked_fallback(rows)
    if ranked is not None:
        return ranked
    spot = (row or {}).get("spot") or {}
    found = spot.get("fallback") or (row or {}).get("fallback") or spot.get("spot_with_fallback")
    if isinstance(found, dict):
        return found
    own_row = next((r for r in rows if r.get("fits") and r.get("pricing_model") in FALLBACK_MODELS), None)
    if own_row is None:
        return None
    simulation = (own_row.get("spot") or {}).get("simulation") or {}
    return simulation | {
        "offer": _offer(own_row),
        "expected_cost": own_row.get("total_cost"),
        "effective_price_per_hour": own_row.get("effective_price_per_hour"),
    }


def _option_row(name: str, row: dict[str, Any] | None, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    if row is None and extra is None:
        return {
            "option": name,
            "offer": "not available in this ranking",
            "price": None,
            "expected_cost": None,
            "p50_hours": None,
            "p90_hours": None,
            "p50_cost": None,
            "p90_cost": None,
        }
    source = extra if extra is not None else {}
    simulation = ((row or {}).get("spot") or {}).get("simulation") or source.get("simulation") or {}
    hours = (row or {}).get("hours")
    deterministic = name == "on demand"
    return {
        "option": name,
        "offer": _offer(row) if row else str(source.get("offer", "")),
        "price": source.get("effective_price_per_hour") or (row or {}).get("effective_price_per_hour"),
        "expected_cost": source.get("expected_cost")
        or source.get("total_cost")
        or (row or {}).get("total_cost"),
        "p50_hours": source.get("p50_hours")
        or simulation.get("p50_hours")
        or (hours if deterministic else None),
        "p90_hours": source.get("p90_hours")
        or simulation.get("p90_hours")
        or (hours if deterministic else None),
        "p50_cost": source.get("p50_cost") or simulation.get("p50_cost"),
        "p90_cost": source.get("p90_cost") or simulation.get("p90_cost"),
    }


def build_report(inputs: dict[str, Any], now: dt.datetime) -> Report:
    workload, recommendation = inputs["workload"], inputs["recommendation"]
    rows = recommendation["results"] or []
    on_demand, spot_row = _first(rows, "on_demand"), _best_spot(rows)
    fallback = _fallback(rows, spot_row)
    currency = next((row.get("currency") for row in rows if row.get("currency")), "USD")
    options = [_option_row("on demand", on_demand), _option_row("spot", spot_row)]
    if fallback is not None:
        options.append(_option_row("spot with on-demand fallback", None, fallback))
    else:
        options.append(_option_row("spot with on-demand fallback", None))
    spot = (spot_row or {}).get("spot") or {}
    verdict, reasons = _verdict(on_demand, spot_row, currency)
    return Report(
        kind="spot",
        title=f"Spot vs on-demand: {workload['name']}",
        subject=f"workload {workload['id']}: {workload['name']} ({workload['task']}), ranking of "
        f"{recommendation['computed_at'][:16].replace('T', ' ')}",
        currency=currency,
        generated_at=now.isoformat(),
        verdict=verdict,
        summary=_summary(options, spot, currency),
        sections=[
            _options_section(options, currency),
            _breakdown_section(on_demand, spot_row, currency),
            _interruption_section(spot, now),
            _checkpoint_section(spot),
            Section(heading="Verdict and reasons", paragraphs=reasons + _tie_paragraphs(rows)),
        ],
        assumptions=_assumptions(spot, recommendation.get("parameters") or {}),
        price_dates=[
            _price_date(name, row, now)
            for name, row in (("on demand", on_demand), ("spot", spot_row))
            if row is not None
        ],
    )


def _verdict(on_demand, spot_row, currency: str) -> tuple[str, list[str]]:
    if spot_row is None:
        return "Stay on demand: no feasible spot option in this ranking.", [
            "The ranking has no spot row that fits this workload (spot may be refused for serving, for jobs "
            "that cannot checkpoint or whose checkpoint takes 15 minutes or more, or a spot row may miss the "
            "deadline)."
        ]
    spot = spot_row.get("spot") or {}
    reasons = [str(reason) for reason in spot.get("why") or []]
    suitable = spot.get("verdict") == "suitable"
    if not suitable:
        return "Stay on demand: spot is unsuitable for this job.", reasons
    if on_demand is None or not on_demand.get("total_cost") or not spot_row.get("total_cost"):
        return "Spot is suitable; no on-demand option to compare with.", reasons
    saving = Decimal(on_demand["total_cost"]) - Decimal(spot_row["total_cost"])
    share = saving / Decimal(on_demand["total_cost"]) * 100
    if saving <= 0:
        return "Stay on demand: spot costs no less here.", reasons
    return (
        f"Use spot: {_offer(spot_row)} saves {saving:,.2f} {currency} ({share:.0f}%) against on demand "
        f"({_offer(on_demand)}).",
        reasons,
    )


def _summary(options: list[dict[str, Any]], spot: dict[str, Any], currency: str) -> list[Headline]:
    items = []
    for option in options:
        if option["expected_cost"] is None:
            continue
        items.append(
            Headline(f"{option['option']}: expected cost", option["expected_cost"], "money", option["offer"])
        )
        if option["p90_hours"] is not None:
            items.append(
                Headline(
                    f"{option['option']}: P50 / P90 hours",
                    f"{option['p50_hours']} / {option['p90_hours']}",
                    "text",
                    "",
                )
            )
    if spot:
        items.append(
            Headline(
                "Interruption band",
                f"{spot.get('interruption_band')} a month",
                "text",
                spot.get("interruption_source_text") or spot.get("interruption_source", ""),
            )
        )
        items.append(
            Headline(
                "Checkpoint every",
                f"{spot.get('checkpoint_interval_minutes')} minutes",
                "text",
                "at most 15 minutes (the guides)",
            )
        )
    return items


def _tie_paragraphs(rows: list[dict[str, Any]]) -> list[str]:
    """The ranking's tie note, where it has one: the first two options' order is within the model's error
    (ranking/ties.py), which a buyer weighing spot against on demand reads before signing (audtie)."""
    note = answer_tie_note(rows)
    return [f"Ranking's first row: {note}."] if note else []


def _options_section(options: list[dict[str, Any]], currency: str) -> Section:
    costed = [option for option in options if option["expected_cost"] is not None]
    figures = []
    if costed:
        figures.append(
            Figure(
                "expected_cost",
                "bar",
                "Expected cost by option",
                "option",
                currency,
                [Series("expected cost", [(o["option"], float(o["expected_cost"])) for o in costed])],
            )
        )
    return Section(
        heading="Cost and time by option",
        paragraphs=[
            "Expected cost is the ranking's total (compute at the effective price, setup, storage, "
            "reruns). P50/P90 come from the seeded Monte Carlo of interruptions (spot compute only); "
            "on demand runs in its estimated hours."
        ],
        tables=[
            Table(
                "options",
                f"Options (money in {currency})",
                [
                    Column("option", "Option"),
                    Column("offer", "Offer"),
                    Column("price", "Price per hour", "price"),
                    Column("expected_cost", "Expected cost", "money"),
                    Column("p50_hours", "P50 hours", "number"),
                    Column("p90_hours", "P90 hours", "number"),
                    Column("p50_cost", "P50 spot compute", "money"),
                    Column("p90_cost", "P90 spot compute", "money"),
                ],
                options,
            )
        ],
        figures=figures,
    )


COST_PARTS = ("compute", "setup", "storage", "reruns")


def _priced_on_paragraphs(on_demand, spot_row) -> list[str]:
    """What each option's parts are priced on (the ranking row's ``cost_basis``), so a reader rebuilds them."""
    out = []
    for label, row in (("On demand", on_demand), ("Spot", spot_row)):
        basis = (row or {}).get("cost_basis")
        if basis:
            out.append(
                f"{label} priced on: "
                + "; ".join(f"{part} {basis[part]['text']}" for part in COST_PARTS if part in basis)
            )
    return out


def _breakdown_section(on_demand, spot_row, currency: str) -> Section:
    """The ranking's cost parts side by side; the parts add up to each option's total (a SUM in XLSX)."""
    parts = {
        name: (row or {}).get("cost_breakdown")
        for name, row in (("on_demand", on_demand), ("spot", spot_row))
    }
    if not any(parts.values()):
        return Section(heading="Cost breakdown", paragraphs=["This ranking has no cost breakdown."])
    rows = [
        {"part": part, **{name: (found or {}).get(part) for name, found in parts.items()}}
        for part in COST_PARTS
    ]
    return Section(
        heading="Cost breakdown",
        paragraphs=[
            "Compute at the effective hourly price, setup hours, storage and the rerun budget; "
            "the totals are the options' expected costs."
        ]
        + _priced_on_paragraphs(on_demand, spot_row),
        tables=[
            Table(
                "cost_breakdown",
                f"Cost breakdown ({currency})",
                [
                    Column("part", "Part"),
                    Column("on_demand", "On demand", "money", total=True),
                    Column("spot", "Spot", "money", total=True),
                ],
                rows,
            )
        ],
    )


def _interruption_section(spot: dict[str, Any], now: dt.datetime) -> Section:
    if not spot:
        return Section(heading="Interruptions", paragraphs=["No spot option, so no interruption data."])
    observed = spot.get("advisor_observed_at")
    age = age_days(observed, now)
    rows = [
        {"item": "band (share of instances interrupted a month)", "value": spot.get("interruption_band")},
        {"item": "source", "value": spot.get("interruption_source_text") or spot.get("interruption_source")},
        {"item": "snapshot date", "value": observed or "none (assumed band)"},
        {"item": "snapshot age (days)", "value": "" if age is None else str(age)},
        {"item": "rate per hour", "value": spot.get("interruption_rate_per_hour")},
        {"item": "mean hours between interruptions", "value": spot.get("mean_hours_between_interruptions")},
    ]
    if spot.get("reclaim_exposure"):  # several instances: the job's rate is instances x one instance's
        rows += [
            {"item": "rate per instance-hour", "value": spot.get("interruption_rate_per_instance_hour")},
            {"item": "reclaim exposure", "value": spot["reclaim_exposure"]},
        ]
    return Section(
        heading="Interruptions",
        tables=[
            Table(
                "interruptions", "Interruption rate", [Column("item", "Item"), Column("value", "Value")], rows
            )
        ],
    )


def _checkpoint_section(spot: dict[str, Any]) -> Section:
    if not spot:
        return Section(heading="Checkpoint advice")
    overhead = spot.get("overhead")
    advice = (
        f"Checkpoint every {spot.get('checkpoint_interval_minutes')} minutes (Young/Daly optimum "
        f"{spot.get('optimal_interval_hours')} h, capped at 15 minutes); with a {spot.get('checkpoint_write_minutes')}"
        f"-minute write and a {spot.get('restart_hours')} h restart the expected overhead is "
        f"{Decimal(overhead) * 100:.2f}% of the spot price."
        if overhead
        else "No checkpoint figures in this ranking."
    )
    return Section(heading="Checkpoint advice", paragraphs=[advice])


def _assumptions(spot: dict[str, Any], parameters: dict[str, Any]) -> list[Assumption]:
    items = [
        Assumption(
            "interruption model",
            "constant hazard from the advisor band midpoint (>20%: 25%)",
            "docs/cost-model.md, Spot; AWS Spot Instance Advisor",
        ),
        Assumption(
            "checkpoint interval",
            "min(Young/Daly optimum, 15 minutes)",
            "Young 1974 CACM 17(9); Daly 2006 FGCS 22(3); the guides' 15-minute rule",
        ),
        Assumption("setup hours", "1.0", "gpuledger assumption (docs/cost-model.md, Job cost)"),
        Assumption("rerun budget", "20% of compute", "gpuledger assumption (docs/cost-model.md, Job cost)"),
    ]
    simulation = spot.get("simulation") or {}
    if simulation:
        items.append(
            Assumption(
                "Monte Carlo",
                f"{simulation.get('trials')} trials, seed {simulation.get('seed')}",
                str(simulation.get("priced_at", "")),
            )
        )
    for key in ("deadline_hours", "budget", "providers", "regions", "gpus", "currency"):
        if parameters.get(key) not in (None, "", []):
            items.append(
                Assumption(f"ranking option {key}", str(parameters[key]), "the stored ranking's options")
            )
    return items


def _price_date(name: str, row: dict[str, Any], now: dt.datetime) -> PriceDate:
    observed = row.get("price_observed_at")
    stale = bool(row.get("stale")) or stale_by_now(observed, row.get("price_stale_after_hours"), now)
    return PriceDate(
        label=f"{name}: {_offer(row)} {row.get('pricing_model')}",
        observed_at=observed,
        source=str(row.get("price_source") or row.get("source") or "stored ranking"),
        quality=str(row.get("price_quality") or ("stale" if stale else "fresh")),
        stale=stale,
        age_days=age_days(observed, now),
    )


KIND = ReportKind(
    name="spot",
    title="Spot vs on-demand",
    roles=("engineer", "admin"),
    subject="workload",
    load=load_inputs,
    build=build_report,
)
