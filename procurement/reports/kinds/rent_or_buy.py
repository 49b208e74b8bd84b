"""Rent or buy, for leadership: a one-page summary first (recommendation, totals over the horizon,
NPVs, break-even month and utilization on both bases, labelled), then the cumulative cost curves,
the sensitivity tornado and the assumptions with their sources. Built from a stored TCO study's
result (docs/tco-spec.md), so the numbers are the study's, not today's prices."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

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

# Where each default comes from (docs/cost-model.md, "Buy versus rent"); a value the study states is
# labelled "stated in the study" instead.
DEFAULT_SOURCES = {
    "horizon_months": "default 36: the guides compare three years of owning with three of renting",
    "discount_rate_annual": "default 0.08: gpuledger assumption, a typical corporate hurdle rate",
    "pue": "default 1.58: Uptime Institute Global Data Center Survey 2023",
    "colocation_per_kw_month": "default 184 USD: CBRE North America Data Center Trends H2 2024",
    "depreciation_years": "default 5: hyperscaler server lives of 5-6 years",
    "server_overhead_kw": "default 0.575 kW per GPU: NVIDIA DGX H100 datasheet (10.2 kW - 8 x 0.7 kW)",
    "server_price": "default GPUs x list price x 1.30: gpuledger assumption; use a quote",
    "average_load": "default 0.7: gpuledger assumption",
    "electricity_per_kwh": "default 0.10 USD: between US EIA 2023 industrial and commercial prices",
    "maintenance_pct_per_year": "default 0.10: gpuledger assumption, hardware support contracts",
    "ops_fte": "default 0.05 per server: gpuledger assumption, one administrator per 20 servers",
    "fte_cost_per_year": "default 150,000 USD: gpuledger assumption, fully loaded",
    "residual_pct": "default 0.20: gpuledger assumption",
    "install_cost": "default 0: quote-specific",
    "gpu_tdp_w": "GPU catalog (vendor datasheet)",
    "gpu_list_price": "GPU catalog (Epoch AI hardware price dataset)",
}
SKIPPED_INPUTS = {"price_stale", "price_stale_after_hours", "offer", "price_observed_at", "price_source"}


def load_inputs(subject_id: int) -> dict[str, Any]:
    from procurement.models import TcoStudy

    study = TcoStudy.objects.filter(pk=subject_id).first()
    if study is None:
        raise ReportInputError("id", f"no TCO study {subject_id}")
    if not study.result:
        raise ReportInputError("id", f"TCO study {subject_id} has no computed result")
    return {
        "id": study.pk,
        "name": study.name,
        "spec": study.spec,
        "result": study.result,
        "prices_used": study.prices_used,
        "computed_at": study.computed_at.isoformat(),
    }


def build_report(inputs: dict[str, Any], now: dt.datetime) -> Report:
    result, currency = inputs["result"], inputs["result"]["currency"]
    horizon = result["horizon_months"]
    rate = Decimal(result.get("inputs", {}).get("discount_rate_annual", "0.08"))
    npv_basis = f"present value at {rate * 100:.1f}% a year"
    recommendation = result["recommendation"].upper()
    return Report(
        kind="rent_or_buy",
        title=f"Rent or buy: {inputs['name']}",
        subject=f"TCO study {inputs['id']}: {inputs['name']} (computed {inputs['computed_at'][:10]})",
        currency=currency,
        generated_at=now.isoformat(),
        verdict=f"Recommendation: {recommendation} ({npv_basis}): {result['recommendation_reason']}",
        summary=_summary(result, horizon, npv_basis),
        sections=[
            _curves(result, currency),
            _breakdown(result),
            _tornado(result, currency),
            _accounting(result),
        ],
        assumptions=_assumptions(inputs),
        price_dates=_price_dates(inputs, now),
    )


def _summary(result: dict[str, Any], horizon: int, npv_basis: str) -> list[Headline]:
    buy, rent = result["buy"], result["rent"]
    advantage = Decimal(rent["npv"]) - Decimal(buy["npv"])
    items = [
        Headline("Recommendation", result["recommendation"], "text", f"decided on {npv_basis}"),
        Headline(f"Buy: total over {horizon} months", buy["total"], "money", "cash, undiscounted"),
        Headline(
            f"Rent ({rent['pricing_model']}): total over {horizon} months",
            rent["total"],
            "money",
            "cash, undiscounted",
        ),
        Headline("Buy: NPV", buy["npv"], "money", npv_basis),
        Headline("Rent: NPV", rent["npv"], "money", npv_basis),
        Headline("NPV advantage of buying", str(advantage), "money", "rent NPV - buy NPV; negative: renting"),
        Headline(
            "Break-even month (cash)",
            _month(result.get("break_even_month")),
            "text",
            result.get("break_even_month_note") or "first month cumulative rent >= cumulative buy",
        ),
        Headline(
            "Break-even month (present value)",
            _month(result.get("discounted_break_even_month")),
            "text",
            result.get("discounted_break_even_month_note") or "discounted payback",
        ),
        Headline(
            "Break-even utilization (cash)",
            result.get("break_even_utilization"),
            "percent",
            "utilization at which the cash totals are equal",
        ),
        Headline(
            "Break-even utilization (present value)",
            result.get("npv_break_even_utilization"),
            "percent",
            "buy is recommended exactly above it",
        ),
        Headline("Study utilization", result["utilization"], "percent", ""),
        Headline("Buy: cost per used GPU-hour (cash)", buy["cost_per_used_gpu_hour"], "price", ""),
        Headline("Rent: cost per used GPU-hour (cash)", rent["cost_per_used_gpu_hour"], "price", ""),
    ]
    if "npv_cost_per_used_gpu_hour" in buy:
        items += [
            Headline(
                "Buy: cost per used GPU-hour (present value)",
                buy["npv_cost_per_used_gpu_hour"],
                "price",
                "NPV / present value of GPU-hours",
            ),
            Headline(
                "Rent: cost per used GPU-hour (present value)",
                rent.get("npv_cost_per_used_gpu_hour"),
                "price",
                "NPV / present value of GPU-hours",
            ),
        ]
    if "irr" in result:
        items.append(
            Headline(
                "IRR of buying instead of renting",
                result["irr"],
                "percent",
                "a year; none when buying never pays back",
            )
        )
    after_tax = result.get("after_tax")
    if after_tax:
        note = f"after {Decimal(after_tax['tax_rate']) * 100:.1f}% tax, {after_tax['depreciation_method']}"
        items += [
            Headline("Buy: NPV after tax", after_tax["buy"]["npv"], "money", note),
            Headline("Rent: NPV after tax", after_tax["rent"]["npv"], "money", note),
            Headline("Recommendation after tax", after_tax["recommendation"], "text", note),
        ]
    reserved = result.get("reserved_alternative")
    if reserved:
        stored = reserved.get("price_id")
        which = (
            f"; stored price #{stored} {reserved.get('payment_option', '')} {reserved.get('commitment_kind', '')}, "
            f"{reserved['price_source']}, observed {(reserved.get('price_observed_at') or '')[:10]}"
            if stored
            else f"; {reserved['price_source']}"
        ).replace("  ", " ")
        items.append(
            Headline(
                f"Reserved alternative ({reserved['pricing_model']}): NPV",
                reserved["npv"],
                "money",
                f"cheapest by NPV: {reserved['cheapest_by_npv']}{which}",
            )
        )
    return items


def _month(value: int | None) -> str:
    return "never" if value is None else f"month {value}"


def _curves(result: dict[str, Any], currency: str) -> Section:
    monthly = result["monthly"]
    months = monthly["month"]
    series = [
        Series("buy (cash)", [(m, float(v)) for m, v in zip(months, monthly["buy_cumulative"], strict=True)]),
        Series(
            "rent (cash)", [(m, float(v)) for m, v in zip(months, monthly["rent_cumulative"], strict=True)]
        ),
    ]
    if "buy_npv_cumulative" in monthly:
        series += [
            Series(
                "buy (present value)",
                [(m, float(v)) for m, v in zip(months, monthly["buy_npv_cumulative"], strict=True)],
            ),
            Series(
                "rent (present value)",
                [(m, float(v)) for m, v in zip(months, monthly["rent_npv_cumulative"], strict=True)],
            ),
        ]
    return Section(
        heading="Cumulative cost",
        paragraphs=["Cash paid to date in each scenario; the present-value curves discount each month."],
        figures=[
            Figure(
                "cumulative_cost",
                "line",
                "Cumulative cost: buy vs rent",
                "month",
                f"cumulative cost ({currency})",
                series,
            )
        ],
    )


def _breakdown(result: dict[str, Any]) -> Section:
    """Monthly cash flows from the cumulative series: their sums are the totals (a formula in XLSX)."""
    monthly = result["monthly"]
    rows, previous_buy, previous_rent = [], Decimal(0), Decimal(0)
    for month, buy, rent in zip(
        monthly["month"], monthly["buy_cumulative"], monthly["rent_cumulative"], strict=True
    ):
        buy_value, rent_value = Decimal(buy), Decimal(rent)
        rows.append(
            {
                "month": month,
                "buy": str(buy_value - previous_buy),
                "rent": str(rent_value - previous_rent),
                "buy_cumulative": buy,
                "rent_cumulative": rent,
            }
        )
        previous_buy, previous_rent = buy_value, rent_value
    return Section(
        heading="Cash flows by month",
        paragraphs=["Month 0 is the purchase; the residual value comes back in the last month."],
        tables=[
            Table(
                "cash_flows",
                "Cash flows by month",
                [
                    Column("month", "Month", "integer"),
                    Column("buy", "Buy cash", "money", total=True),
                    Column("rent", "Rent cash", "money", total=True),
                    Column("buy_cumulative", "Buy cumulative", "money"),
                    Column("rent_cumulative", "Rent cumulative", "money"),
                ],
                rows,
                note="The totals are the study's buy and rent totals.",
            )
        ],
    )


def _tornado(result: dict[str, Any], currency: str) -> Section:
    sensitivity = result.get("sensitivity")
    if not sensitivity:
        return Section(
            heading="Sensitivity", paragraphs=["This study was stored without a sensitivity analysis."]
        )
    rows = sensitivity["rows"]
    spread = Decimal(sensitivity.get("spread", "0.20")) * 100
    label = lambda row: row["driver"].replace("_", " ")  # noqa: E731
    return Section(
        heading="Sensitivity",
        paragraphs=[
            f"Each driver moved -{spread:.0f}% and +{spread:.0f}% on its own; the outcome is buying's "
            f"NPV advantage (rent NPV - buy NPV, base {sensitivity['base']} {currency}): positive "
            "means buying is cheaper. Rent price and utilization share one row when they are the "
            "same lever."
        ],
        figures=[
            Figure(
                "tornado",
                "tornado",
                "Sensitivity of buying's NPV advantage",
                "driver",
                f"NPV advantage ({currency})",
                [
                    Series("low", [(label(row), float(row["low"])) for row in rows]),
                    Series("high", [(label(row), float(row["high"])) for row in rows]),
                ],
                base=float(sensitivity["base"]),
            )
        ],
        tables=[
            Table(
                "sensitivity",
                "Sensitivity",
                [
                    Column("driver", "Driver"),
                    Column("low", f"-{spread:.0f}%", "money"),
                    Column("high", f"+{spread:.0f}%", "money"),
                    Column("swing", "Swing", "money"),
                ],
                [
                    {"driver": label(row), "low": row["low"], "high": row["high"], "swing": row["swing"]}
                    for row in rows
                ],
            )
        ],
    )


def _accounting(result: dict[str, Any]) -> Section:
    view = result.get("depreciation") or {}
    if not view:
        return Section(heading="Accounting view")
    return Section(
        heading="Accounting view",
        paragraphs=[
            f"Straight-line depreciation over {view['life_years']} years: {Decimal(view['per_month']):,.2f} a "
            f"month, {Decimal(view['over_horizon']):,.2f} over the horizon; book value at the horizon "
            f"{Decimal(view['book_value_at_horizon']):,.2f}; disposal gain {Decimal(view['disposal_gain']):,.2f}. "
            "Reported beside the cash view, never added to it."
        ],
    )


def _assumptions(inputs: dict[str, Any]) -> list[Assumption]:
    resolved = inputs["result"].get("inputs", {})
    spec = inputs.get("spec") or {}
    items = []
    for key in (
        "horizon_months",
        "discount_rate_annual",
        "utilization",
        "tax_rate",
        "utilization_ramp_months",
    ):
        if key in resolved:
            stated = key in spec
            items.append(
                Assumption(
                    key,
                    str(resolved[key]),
                    "stated in the study" if stated else DEFAULT_SOURCES.get(key, "default"),
                )
            )
    for section in ("buy", "rent"):
        given = spec.get(section) or {}
        for key, value in (resolved.get(section) or {}).items():
            if key in SKIPPED_INPUTS or value is None or isinstance(value, dict):
                continue
            source = "stated in the study" if key in given else DEFAULT_SOURCES.get(key, "default")
            items.append(Assumption(f"{section}.{key}", str(value), source))
    items.append(Assumption("hours in a month", "730", "8760 / 12, the cloud price sheets' convention"))
    return items


def _price_dates(inputs: dict[str, Any], now: dt.datetime) -> list[PriceDate]:
    rent = inputs["result"]["rent"]
    dates = []
    for used in inputs.get("prices_used") or []:
        observed = used.get("observed_at")
        stale = bool(used.get("stale")) or stale_by_now(observed, rent.get("price_stale_after_hours"), now)
        dates.append(
            PriceDate(
                label=f"{used.get('offer', '')} {used.get('pricing_model', '')}".strip(),
                observed_at=observed,
                source=str(used.get("source", "")),
                quality=str(used.get("quality") or ("stale" if stale else "fresh")),
                stale=stale,
                age_days=age_days(observed, now),
            )
        )
    if not dates:
        observed = rent.get("price_observed_at")
        stale = bool(rent.get("price_stale")) or stale_by_now(
            observed, rent.get("price_stale_after_hours"), now
        )
        dates.append(
            PriceDate(
                label=f"rent {rent['pricing_model']} {rent['price_per_gpu_hour']} per GPU-hour",
                observed_at=rent.get("price_observed_at"),
                source=rent.get("price_source") or "study file",
                quality="typed in the study"
                if rent.get("price_stale") is None
                else ("stale" if stale else "fresh"),
                stale=stale,
                age_days=age_days(observed, now),
            )
        )
    return dates


KIND = ReportKind(
    name="rent_or_buy",
    title="Rent or buy",
    roles=("engineer", "admin"),  # the study must be visible to the reader (its team), as on /tco/
    subject="TCO study",
    load=load_inputs,
    build=build_report,
)
