"""Capacity plan, for a CFO in two minutes: page 1 the recommendation and its money (servers to own,
GPUs to commit for 3 and 1 years, what is left to on-demand and spot, total cost, NPV, P90, savings
against the status quo, break-even month), page 2 the layers, assumptions and prices with their
dates. The XLSX and CSV carry the demand curve, the monthly demand and every layer by year as data.
Built from a stored CapacityPlan's result, so the numbers are the plan's, not today's prices."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

from procurement.reports.dates import age_days
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

LAYER_LABELS = {
    "in_force": "Commitments in force",
    "owned": "Owned servers",
    "committed_3y": "3-year commitment",
    "committed_1y": "1-year commitment",
    "on_demand": "On-demand",
    "spot": "Spot",
}


def load_inputs(subject_id: int) -> dict[str, Any]:
    from planning.models import CapacityPlan

    plan = CapacityPlan.objects.filter(pk=subject_id).first()
    if plan is None:
        raise ReportInputError("id", f"no capacity plan {subject_id}")
    if not plan.result:
        raise ReportInputError("id", f"capacity plan {subject_id} has no computed result")
    return {
        "id": plan.pk,
        "name": plan.name,
        "result": plan.result,
        "created_at": plan.created_at.isoformat(),
    }


def _gpus(result: dict, kind: str) -> int:
    return sum(int(layer.get("gpus") or 0) for layer in result.get("layers", []) if layer["kind"] == kind)


def _share(result: dict, kind: str) -> str:
    """The kind's share of the whole plan's GPU-hours. Each layer's share_of_demand is of its own fleet's
    demand: summed over fleets it read "300% of demand" on the demo plan."""
    layers = result.get("layers", [])
    hours = sum((Decimal(str(layer.get("hours_served") or 0)) for layer in layers), Decimal(0))
    if not hours:
        return "0"
    served = sum(
        (Decimal(str(layer.get("hours_served") or 0)) for layer in layers if layer["kind"] == kind),
        Decimal(0),
    )
    return str((served / hours).quantize(Decimal("0.000001")))


def _commit(result: dict, kind: str) -> str:
    """GPUs committed, or "not evaluated" when no fleet had a price for it (never "0 GPUs" for an option
    the plan could not weigh: docs/capacity-plan.md, "A missing price is said")."""
    evaluated = result.get("options_evaluated")
    if evaluated is not None and kind not in evaluated:
        return "not evaluated: no price (see Missing prices)"
    return f"{_gpus(result, kind)} GPUs"


def _in_force(result: dict) -> str:
    items = result.get("commitments_in_force") or []
    if not items:
        return "none in the bills"
    return (
        f"{sum(item['gpus'] for item in items):g} GPUs ({', '.join(item['commitment_id'] for item in items)})"
    )


def _summary(result: dict) -> list[Headline]:
    horizon, rate = result["horizon_months"], Decimal(str(result.get("discount_rate_annual") or "0.08"))
    servers, per_server = int(result.get("owned_servers") or 0), int(result.get("gpus_per_server") or 8)
    trials = f"{result.get('trials', 0):,} growth trials, seed {result.get('seed')}"
    month = result.get("break_even_month")
    return [
        Headline(
            "Servers to own",
            f"{servers} ({_gpus(result, 'owned')} GPUs)",
            "text",
            f"{per_server} GPUs per server",
        ),
        Headline(
            "Commitments in force", _in_force(result), "text", "bought before the plan; renewals listed"
        ),
        Headline(
            "Commit for 3 years", _commit(result, "committed_3y"), "text", "paid every hour of the term"
        ),
        Headline(
            "Commit for 1 year",
            _commit(result, "committed_1y"),
            "text",
            "the largest year's level; re-chosen each year",
        ),
        Headline(
            "Left to on-demand",
            _share(result, "on_demand"),
            "percent",
            f"of demand, peak {_gpus(result, 'on_demand')} GPUs",
        ),
        Headline(
            "Left to spot",
            _share(result, "spot"),
            "percent",
            f"of demand, peak {_gpus(result, 'spot')} GPUs; interruptible work only",
        ),
        Headline(
            f"Total cost over {horizon} months", result.get("total_cost"), "money", "cash, undiscounted"
        ),
        Headline("NPV", result.get("npv"), "money", f"present value at {rate * 100:.1f}% a year"),
        Headline("P50 total cost", result.get("p50_total_cost"), "money", trials),
        Headline("P90 total cost", result.get("p90_total_cost"), "money", "9 in 10 growth paths cost less"),
        Headline(
            "Status quo", result.get("status_quo_cost"), "money", "the same demand bought as the bills show"
        ),
        Headline(
            "Savings vs status quo", result.get("savings_vs_status_quo"), "money", "status quo - plan, cash"
        ),
        Headline("Savings share", result.get("savings_share"), "percent", "of the status quo"),
        Headline(
            "Break-even month",
            "never" if not month else f"month {month}",
            "text",
            "first month the plan's cumulative cost is at or below the status quo's",
        ),
    ]


def _layer_cost(layer: dict) -> str:
    """The layer's own total (the headline sums them to the cent); its years, each rounded apart, can
    differ by a cent a year. Plans stored before layers carried a total fall back on the years."""
    if layer.get("total_cost") is not None:
        return str(layer["total_cost"])
    return str(sum((Decimal(str(value)) for value in layer.get("cost_by_year") or []), Decimal(0)))


def _layers_table(result: dict) -> Table:
    rows = [
        {
            "layer": LAYER_LABELS.get(layer["kind"], layer["kind"]),
            "gpu_model": layer.get("gpu_model", ""),
            "priced_at": "/".join(
                part
                for part in (layer.get("provider"), layer.get("instance_type"), layer.get("region"))
                if part
            ),
            "gpus": layer.get("gpus"),
            "hours_served": str(layer.get("hours_served")),
            "share": str(layer.get("share_of_demand")),
            "cost": _layer_cost(layer),
        }
        for layer in result.get("layers", [])
    ]
    return Table(
        "layers",
        "Layers",
        [
            Column("layer", "Layer"),
            Column("gpu_model", "GPU model"),
            Column("priced_at", "Priced at"),
            Column("gpus", "GPUs", "integer"),
            Column("hours_served", "GPU-hours served", "number", total=True),
            Column("share", "Share of its fleet's demand", "percent"),
            Column("cost", "Cost over the horizon", "money", total=True),
        ],
        rows,
    )


def _models_table(result: dict) -> Table:
    rows = [
        {
            "gpu_model": item["gpu_model"],
            "spend": item["spend"],
            "plan": item["total_cost"],
            "fleets": ", ".join(item.get("fleets") or []) or "not planned",
        }
        for item in result.get("models", [])
    ]
    return Table(
        "models",
        "GPU models by spend in the bills",
        [
            Column("gpu_model", "GPU model"),
            Column("spend", "Spend in the bills", "money", total=True),
            Column("plan", "Plan over the horizon", "money", total=True),
            Column("fleets", "Fleets"),
        ],
        rows,
    )


def _missing_table(result: dict) -> Table:
    rows = [
        {"what": f"{item['price']} of {item['fleet']}", "how": item["how"]}
        for item in result.get("missing_prices", [])
    ]
    renewals = [
        {
            "what": f"renewal: {item['commitment_id']} ({item['fleet']}), ends {item['ends']}",
            "how": item["decide"],
        }
        for item in result.get("renewals", [])
    ]
    return Table(
        "missing_prices",
        "Missing prices and renewals to decide",
        [Column("what", "What"), Column("how", "How to give it / what to decide")],
        rows + renewals,
    )


def _finance_tables(result: dict) -> list[Table]:
    """Issue 27 item 6: each commitment layer's payment options, the owned tranches, the plan after tax."""
    tables = []
    options = [
        {
            "option": f"{section['fleet']} {section['kind']}: {option['payment_option'] or 'as quoted'}"
            + (" (chosen)" if option["payment_option"] == section["chosen"] else ""),
            "upfront": option["upfront_cash_month_0"],
            "total": option["total"],
            "npv": option["npv"],
            "implied": option["implied_rate_vs_no_upfront"],
        }
        for section in result.get("payment_options") or []
        for option in section["options"]
    ]
    if options:
        tables.append(
            Table(
                "payment_options",
                "Commitment payment options (the lowest NPV is chosen; a fee is paid at signing, month 0)",
                [
                    Column("option", "Layer and payment option"),
                    Column("upfront", "Paid in month 0", "money"),
                    Column("total", "Total", "money"),
                    Column("npv", "NPV", "money"),
                    Column("implied", "Rate implied by paying upfront"),
                ],
                options,
            )
        )
    rows = []
    for section in result.get("owned_tranches") or []:
        bought = "; ".join(
            f"{tranche['servers']} in month {tranche['paid_month']} for year {tranche['year']}"
            for tranche in section["tranches"]
        )
        rows.append(
            {
                "item": f"{section['fleet']}: tranches {section['lead_time_months']} months ahead: {bought}",
                "amount": None,
            }
        )
        for year, (staged, at_once) in enumerate(
            zip(
                section["in_tranches"]["cash_by_year"], section["all_at_month_0"]["cash_by_year"], strict=True
            ),
            start=1,
        ):
            rows.append(
                {"item": f"year {year} owned cash in tranches (all in month 0: {at_once})", "amount": staged}
            )
        rows.append({"item": "owned NPV in tranches", "amount": section["in_tranches"]["npv"]})
        rows.append({"item": "owned NPV all in month 0", "amount": section["all_at_month_0"]["npv"]})
    after = result.get("after_tax") or {}
    if after.get("tax_rate") is not None:
        rows.append({"item": f"after tax at {after['tax_rate']}: total", "amount": after["total_cost"]})
        rows.append({"item": f"after tax at {after['tax_rate']}: NPV", "amount": after["npv"]})
        rows.append({"item": "depreciation tax shield", "amount": after["depreciation_tax_shield"]})
    elif after:
        rows.append({"item": f"after tax: {after.get('note', '')}", "amount": None})
    if rows:
        tables.append(
            Table(
                "purchases_and_tax",
                "Owned servers in tranches and the plan after tax",
                [Column("item", "Item"), Column("amount", "Amount", "money")],
                rows,
            )
        )
    return tables


def _scenario_tables(result: dict) -> list[Table]:
    """The move-provider scenario, when asked for: its own totals, apart from the recommendation."""
    move = (result.get("scenarios") or {}).get("move_provider")
    if not move or not move.get("fleets_moved"):
        return []
    rows = [
        {"item": f"{fleet['fleet']} at {', '.join(fleet['priced_at'])}", "amount": fleet["total_cost"]}
        for fleet in move["fleets_moved"]
    ]
    rows += [
        {"item": "migration (egress and engineering: assumptions below)", "amount": move["migration_cost"]},
        {"item": "scenario total", "amount": move["total_cost"]},
        {"item": "status quo of the fleets moved", "amount": move.get("status_quo_cost")},
        {"item": "savings vs their status quo", "amount": move.get("savings_vs_status_quo")},
    ]
    rows += [
        {"item": f"{item['name']} = {item['value']} ({item['source']})", "amount": None}
        for item in move["assumptions"]
    ]
    rows += [{"item": f"not moved: {text}", "amount": None} for text in move.get("fleets_not_moved", [])]
    return [
        Table(
            "move_provider",
            "Scenario: move provider (like-for-like offers only; not the recommendation)",
            [Column("item", "Item"), Column("amount", "Amount", "money")],
            rows,
        )
    ]


def _data_tables(result: dict) -> list[Table]:
    demand = result.get("demand", {})
    curve = [
        {"rank": index + 1, "gpus": str(value)}
        for index, value in enumerate(demand.get("load_duration_curve", []))
    ]
    years = max(
        [len(layer.get("cost_by_year") or []) for layer in result.get("layers", [])]
        + [len(result.get("status_quo_by_year") or [])]
    )
    by_year = []
    for year in range(years):
        row = {"year": year + 1}
        for layer in result.get("layers", []):
            costs = layer.get("cost_by_year") or []
            row[layer["kind"]] = str(costs[year]) if year < len(costs) else None
        quo = result.get("status_quo_by_year") or []
        row["status_quo"] = str(quo[year]) if year < len(quo) else None
        by_year.append(row)
    kinds = [layer["kind"] for layer in result.get("layers", [])]
    sensitivity = (result.get("sensitivity") or {}).get("rows", [])
    return [
        Table(
            "demand_curve",
            "Load-duration curve: GPUs in use, hours sorted by demand",
            [Column("rank", "Hour rank", "integer"), Column("gpus", "GPUs in use", "number")],
            curve,
            data_only=True,
            note=f"{demand.get('series_used', '')} GPUs over the {demand.get('covered_hours', 0):,} covered hours",
        ),
        Table(
            "demand_by_month",
            "Demand by month",
            [
                Column("month", "Month"),
                Column("gpu_hours", "GPU-hours", "number", total=True),
                Column("covered_hours", "Covered hours", "integer"),
                Column("hours", "Hours", "integer"),
            ],
            [
                {key: str(value) if key == "gpu_hours" else value for key, value in row.items()}
                for row in demand.get("monthly_gpu_hours", [])
            ],
            data_only=True,
        ),
        Table(
            "cost_by_year",
            "Cost by year and layer, against the status quo",
            [Column("year", "Year", "integer")]
            + [Column(kind, LAYER_LABELS.get(kind, kind), "money", total=True) for kind in kinds]
            + [Column("status_quo", "Status quo", "money", total=True)],
            by_year,
            data_only=True,
        ),
        Table(
            "sensitivity",
            "Sensitivity (each driver -20% / +20%)",
            [
                Column("driver", "Driver"),
                Column("low", "Low", "money"),
                Column("high", "High", "money"),
                Column("swing", "Swing", "money"),
            ],
            [{key: row.get(key) for key in ("driver", "low", "high", "swing")} for row in sensitivity],
            data_only=True,
        ),
    ]


def _verdict_parts(result: dict) -> tuple[str, list[str]]:
    """The recommendation's headline (the whole plan's money) and each fleet's own part, in the order the
    recommendation gives them: page 1 opens with the headline, the fleets' parts follow the charts."""
    text = result.get("recommendation", "")
    starts = []
    for fleet in result.get("fleets", []):
        found = text.find(f" {fleet['fleet']}: ", starts[-1] + 1 if starts else 0)
        if found < 0:
            return text, []
        starts.append(found)
    if not starts:
        return text, []
    parts = [text[start:end].strip() for start, end in zip(starts, [*starts[1:], len(text)], strict=True)]
    return text[: starts[0]].strip(), parts


def _warnings_pointer(result: dict) -> list[str]:
    count = len(result.get("warnings", []))
    return (
        [f"{count} warning{'s' if count != 1 else ''} on what this plan could not weigh: see Warnings."]
        if count
        else []
    )


def _warnings(result: dict) -> list[Section]:
    """The plan's warnings, after the charts: page 1 holds the money and the two charts."""
    warnings = list(result.get("warnings", []))
    return [Section(heading="Warnings", paragraphs=warnings)] if warnings else []


def _per_fleet(result: dict) -> list[Section]:
    parts = _verdict_parts(result)[1]
    return [Section(heading="The recommendation, fleet by fleet", paragraphs=parts)] if parts else []


# the layers that hold a level of GPUs, bottom up (on-demand and spot serve what is left above them)
LEVEL_KINDS = ("in_force", "owned", "committed_3y", "committed_1y")
CURVE_POINTS = 100  # the load-duration curve drawn at every 1% of the covered hours


def _at_a_glance(result: dict) -> Section:
    """Page 1's two charts (the PDF keeps this section on the first page): the load-duration curve with
    the GPU level each layer reaches, and each year's cost by layer against the status quo."""
    return Section(
        heading="At a glance",
        figures=[_load_duration_figure(result), _cost_by_year_figure(result)],
    )


def _load_duration_figure(result: dict) -> Figure:
    curve = [float(value) for value in result.get("demand", {}).get("load_duration_curve", [])]
    points = (
        [
            (round(100 * step / CURVE_POINTS), curve[min(len(curve) - 1, len(curve) * step // CURVE_POINTS)])
            for step in range(CURVE_POINTS + 1)
        ]
        if curve
        else []
    )
    series = [Series("GPUs in use", points)]
    level = 0.0
    for kind in LEVEL_KINDS:
        gpus = float(
            sum(
                Decimal(str(layer.get("gpus") or 0))
                for layer in result.get("layers", [])
                if layer["kind"] == kind
            )
        )
        if gpus:
            level += gpus
            series.append(
                Series(f"{LAYER_LABELS[kind]}: up to {level:,.4g} GPUs", [(0, level), (100, level)])
            )
    return Figure(
        "load_duration",
        "line",
        "Load-duration curve (all fleets) and the GPUs each layer holds; on-demand and spot serve the rest",
        "share of covered hours (%)",
        "GPUs in use",
        series,
    )


def _cost_by_year_figure(result: dict) -> Figure:
    layers = result.get("layers", [])
    quo = [Decimal(str(value)) for value in result.get("status_quo_by_year") or []]
    years = max([len(layer.get("cost_by_year") or []) for layer in layers] + [len(quo)])
    bars = [
        label for year in range(1, years + 1) for label in (f"Year {year}: plan", f"Year {year}: status quo")
    ]
    series = []
    for kind in dict.fromkeys(layer["kind"] for layer in layers):
        by_year = [Decimal(0)] * years
        for layer in layers:
            if layer["kind"] == kind:
                for year, cost in enumerate(layer.get("cost_by_year") or []):
                    by_year[year] += Decimal(str(cost))
        values = [value for amount in by_year for value in (float(amount) / 1000, 0.0)]
        series.append(Series(LAYER_LABELS.get(kind, kind), list(zip(bars, values, strict=True))))
    quo_values = [
        value for year in range(years) for value in (0.0, float(quo[year]) / 1000 if year < len(quo) else 0.0)
    ]
    series.append(Series("Status quo", list(zip(bars, quo_values, strict=True))))
    return Figure(
        "cost_by_year_chart",
        "stacked_bar",
        "Cost by year: the plan's layers against the status quo",
        "",
        f"thousand {result['currency']}",  # the bars' labels are rounded: the cents are in the tables
        series,
    )


def _price_label(price: dict) -> str:
    model = "" if price["pricing_model"] == price["kind"] else f" ({price['pricing_model']})"
    return f"{price['kind']}{model}: {Decimal(price['price_per_gpu_hour']):.4f} / GPU-h"


def _is_method(item: dict) -> bool:
    """A note on how the engine works (the same for every plan), as opposed to an input of this one."""
    return str(item.get("source", "")).startswith("gpuledger method")


def _method_table(items: list[dict]) -> Table:
    return Table(
        "method",
        "Method notes (docs/capacity-plan.md)",
        [Column("name", "Note"), Column("value", "What"), Column("source", "Source")],
        [{key: str(item.get(key, "")) for key in ("name", "value", "source")} for item in items],
        data_only=True,
    )


def build_report(inputs: dict[str, Any], now: dt.datetime) -> Report:
    result = inputs["result"]
    method = [item for item in result.get("assumptions", []) if _is_method(item)]
    printed = [item for item in result.get("assumptions", []) if not _is_method(item)]
    scope, demand = result["scope"], result.get("demand", {})
    teams = ", ".join(scope.get("teams") or []) or "every team"
    return Report(
        kind="capacity_plan",
        title=f"Capacity plan: {inputs['name']}",
        subject=f"capacity plan {inputs['id']}: {scope['gpu']} demand of {teams}, {scope['from']} to {scope['to']} "
        f"(computed {inputs['created_at'][:10]})",
        currency=result["currency"],
        generated_at=now.isoformat(),
        verdict=_verdict_parts(result)[0],
        summary=_summary(result),
        notes=[
            f"Demand: {demand.get('series_used', '')} GPUs, P50 {demand.get('percentiles', {}).get('p50', 0):,.1f}, "
            f"P90 {demand.get('percentiles', {}).get('p90', 0):,.1f}, peak {demand.get('percentiles', {}).get('peak', 0):,.1f}; "
            f"{demand.get('covered_hours', 0):,} of {demand.get('total_hours', 0):,} hours covered by the bills."
        ]
        + _warnings_pointer(result),
        sections=[
            _at_a_glance(result),
            *_per_fleet(result),
            *_warnings(result),
            Section(
                heading="Layers",
                tables=[
                    _layers_table(result),
                    _models_table(result),
                    _missing_table(result),
                    *_finance_tables(result),
                    *_scenario_tables(result),
                    *_data_tables(result),
                    _method_table(method),
                ],
                paragraphs=[
                    "The demand curve, the demand by month, every layer's cost by year, the "
                    "sensitivity and the method notes are in the Excel and CSV files."
                ],
            ),
        ],
        assumptions=[Assumption(item["name"], str(item["value"]), item["source"]) for item in printed],
        price_dates=[
            PriceDate(
                label=_price_label(price),
                observed_at=(price.get("observed_at") or "")[:10] or None,
                source=price.get("offer") or price.get("source", ""),
                quality=price.get("quality", ""),
                stale=bool(price.get("stale")),
                age_days=age_days(price.get("observed_at"), now),
            )
            for price in result.get("prices", [])
        ],
    )


KIND = ReportKind(
    name="capacity_plan",
    title="Capacity plan",
    roles=("engineer", "finance", "admin"),  # spend data: an engineer only for plans of their granted teams
    subject="capacity plan",
    load=load_inputs,
    build=build_report,
)
