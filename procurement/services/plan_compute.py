"""One capacity plan from a scope's rows: the GPU model to plan for, the demand, the study, the prices,
the engine's plan, and the result dict every shell shows (docs/capacity-plan.md, "Output")."""

from __future__ import annotations

import copy
import dataclasses
import datetime as dt
from decimal import Decimal
from typing import Any

import numpy as np
import pandas as pd

from procurement.costing.tco_spec import BUY_DEFAULTS, BUY_USD_DEFAULTS, parse_tco_study
from procurement.costing.values import CostInputError
from procurement.planning import demand as demand_engine
from procurement.planning.demand import DemandHistory, UsageRows, UtilizationRows
from procurement.planning.errors import PlanInputError
from procurement.planning.history import PlanScope
from procurement.reports.kinds.rent_or_buy import DEFAULT_SOURCES
from procurement.services.plan_engine import lay_plan
from procurement.services.plan_prices import TERM_OF_MODEL, PlanPrice, plan_prices
from procurement.services.plan_requests import PlanRequest
from procurement.services.tco import fx_pairs_into, gpu_economics_lookup

CURVE_DECIMALS = 3  # GPUs in use per hour, kept to a thousandth of a GPU
MAX_GAPS_SHOWN = 20
# The study's fields the plan sets itself: utilization comes from the demand each layer serves, rent
# from the catalog (or the study's typed commitment prices), the horizon from the request.
PLAN_OWNED_FIELDS = ("utilization", "horizon_months", "rent")


def plan_result(
    *, request: PlanRequest, scope: PlanScope, usage: UsageRows, utilization: UtilizationRows, currency: str
) -> dict[str, Any]:
    warnings: list[str] = []
    usage, gpu = planned_gpu(usage, scope.gpu, warnings)
    history = demand_engine.demand_history(
        usage,
        start_hour=scope.start_hour,
        end_hour=scope.end_hour,
        utilization=utilization,
        series=request.series,
    )
    prices = plan_prices(gpu=gpu, currency=currency, study=request.study, providers=request.providers)
    on_demand = next((price for price in prices if price.kind == "on_demand"), None)
    if on_demand is None:
        where = f" from {', '.join(request.providers)}" if request.providers else ""
        raise PlanInputError("gpu", f"no current on-demand price of {gpu}{where} in the catalog")
    if not request.providers:
        warnings += provider_notes(prices)
    study, study_assumptions = plan_study(
        request, gpu=gpu, currency=currency, on_demand=on_demand, warnings=warnings
    )
    quo = demand_engine.status_quo(usage, start_hour=scope.start_hour, end_hour=scope.end_hour)
    plan = lay_plan(request=request, history=history, study=study, prices=prices, status_quo=quo, gpu=gpu)
    return {
        "name": request.name or f"{gpu} capacity plan, {request.start:%Y-%m} to {request.end:%Y-%m}",
        "currency": currency,
        "scope": {"from": request.start.isoformat(), "to": request.end.isoformat(), "teams": list(scope.teams),
                  "gpu": gpu, "gpu_asked": request.gpu},
        "horizon_months": request.horizon_months,
        "growth": list(request.growth) if isinstance(request.growth, tuple) else request.growth,
        "scenario": request.scenario, "trials": request.trials, "seed": request.seed,
        "discount_rate_annual": str(study.discount_rate_annual),
        "demand": demand_summary(history, start_hour=scope.start_hour),
        "prices": [price.as_dict() for price in prices],
        "assumptions": plan_assumptions(request, study_assumptions, history) + plan.get("assumptions", []),
        "warnings": warnings + plan.get("warnings", []),
    } | {key: value for key, value in plan.items() if key not in ("assumptions", "warnings")}  # fmt: skip


def provider_notes(prices: list[PlanPrice]) -> list[str]:
    """With no providers asked, the prices are the cheapest of any provider in the catalog: say whose,
    since part of a saving may then be moving provider (give providers to price at the bills' own)."""
    offers = [f"{price.kind} {price.offer}" for price in prices if price.offer]
    return [f"prices are the catalog's cheapest of any provider ({'; '.join(offers)}): part of the saving may be "
            "moving provider; give providers (e.g. aws) to price the plan at the bills' own"]  # fmt: skip


def planned_gpu(usage: UsageRows, asked: str, warnings: list[str]) -> tuple[UsageRows, str]:
    """The GPU model whose prices the plan uses: the one asked, or the most used one of the scope's rows
    (a family such as "h100" is priced as its most used model). With nothing asked and several models
    in the scope, only the most used model's rows are planned: GPU-hours of different cards are not
    interchangeable."""
    codes, names = pd.factorize(usage.gpu_model)  # hashing, not sorting a million strings
    known = names != ""
    hours_by_name = np.bincount(codes[codes >= 0], weights=usage.gpu_hours[codes >= 0], minlength=len(names))
    models, hours = np.asarray(names[known], dtype=str), hours_by_name[known]
    order = np.argsort(models)
    models, hours = models[order], hours[order]
    if len(models) == 0:
        raise PlanInputError("gpu", "the scope's rows name no GPU model the catalog knows")
    gpu = str(models[int(np.argmax(hours))])
    if len(models) > 1 and not asked:
        others = ", ".join(
            f"{model} ({hour:,.0f} GPU-hours)"
            for model, hour in zip(models, hours, strict=True)
            if model != gpu
        )
        warnings.append(
            f"planned {gpu}, the most used GPU model of the scope; left out: {others} (give --gpu to plan another)"
        )
        usage = rows_where(usage, usage.gpu_model == gpu)
    elif len(models) > 1:
        warnings.append(
            f"{asked} covers {', '.join(models)}: all their GPU-hours are priced as {gpu}, the most used"
        )
    return usage, gpu


def rows_where(usage: UsageRows, mask: np.ndarray) -> UsageRows:
    """The rows where ``mask`` holds (the bill's other covered intervals kept)."""
    columns = {field.name: getattr(usage, field.name) for field in dataclasses.fields(usage)}
    kept = {name: value[mask] if isinstance(value, np.ndarray) and name not in ("covered_start_hour", "covered_end_hour")
            else value for name, value in columns.items()}  # fmt: skip
    return UsageRows(**kept)


def demand_summary(history: DemandHistory, *, start_hour: int) -> dict[str, Any]:
    """demand.demand_summary (series, coverage, percentiles, months, gaps), with what the shells draw:
    the load-duration curve, the interruptible share, the gaps as readable hours."""
    summary = demand_engine.demand_summary(history)
    total = float(summary["gpu_hours"])
    gaps = summary["gaps"]
    gaps["ranges"] = [[_hour_text(a), _hour_text(b)] for a, b in gaps["ranges"][:MAX_GAPS_SHOWN]]
    return summary | {
        "uncovered_hours": history.total_hours - history.covered_hours,
        "gpu_hours": round(total, 3),
        "interruptible_share": round(summary["interruptible_gpu_hours"] / total, 4) if total else 0.0,
        "percentiles": {key: round(value, 3) for key, value in summary["percentiles"].items()},
        "load_duration_curve": np.round(
            demand_engine.load_duration_curve(history.demand), CURVE_DECIMALS
        ).tolist(),
    }


def _hour_text(hour: int) -> str:
    return (dt.datetime(1970, 1, 1, tzinfo=dt.UTC) + dt.timedelta(hours=int(hour))).strftime("%Y-%m-%d %H:00")


def plan_study(request: PlanRequest, *, gpu: str, currency: str, on_demand: PlanPrice, warnings: list[str]):
    """The TCO study the owned-server option is priced with (parsed, procurement.costing.tco_spec), and
    the assumptions it stands on: the request's study with the fields the plan sets itself replaced,
    or, without one, the TCO defaults for one server of the planned GPU (stated in a warning)."""
    given = copy.deepcopy(request.study) if request.study else {}
    document = {key: value for key, value in given.items() if key not in PLAN_OWNED_FIELDS}
    document.setdefault("name", "capacity plan study")
    document["currency"] = currency
    document["horizon_months"] = request.horizon_months
    document["utilization"] = "1"  # a stand-in: the plan sets each layer's utilization from the demand
    document["rent"] = {"pricing_model": "on_demand", "price_per_gpu_hour": str(on_demand.price_per_gpu_hour)}
    buy = document.setdefault("buy", {})
    if not isinstance(buy, dict):
        raise PlanInputError("study.buy", "must be a mapping (docs/tco-spec.md)")
    buy.setdefault("gpu", gpu)
    if buy["gpu"] != gpu:
        warnings.append(
            f"the study buys {buy['gpu']} servers for {gpu} demand: one GPU-hour of each counted as equal"
        )
    if "utilization" in given:
        warnings.append("study.utilization is not used: the plan takes each layer's use from the demand")
    rent = given.get("rent") if isinstance(given.get("rent"), dict) else {}
    if rent and rent.get("pricing_model") not in TERM_OF_MODEL:
        warnings.append(
            f"study.rent ({rent.get('pricing_model')}) is not used: on-demand and spot come from the catalog"
        )
    if not request.study:
        warnings.append(
            "no study given: owned servers are priced with the TCO defaults for one 8-GPU server (server price "
            "= GPUs x list price x 1.30, PUE 1.58, power 0.10 USD/kWh, colocation 184 USD/kW-month, "
            "maintenance 10%/year, 0.05 FTE per server at 150,000 USD, residual 20%, discount rate 8%); "
            "give --study with a quote (docs/tco-spec.md)"
        )
    try:
        study = parse_tco_study(document, gpu_lookup=gpu_economics_lookup, fx_rates=fx_pairs_into(currency))
    except CostInputError as error:
        raise CostInputError(f"study.{error.field}", error.message) from None
    return study, study_assumptions(study, given)


def study_assumptions(study, given: dict) -> list[dict[str, str]]:
    """Each finance and purchase input of the owned-server option, and whether the study stated it."""
    stated_buy = given.get("buy") if isinstance(given.get("buy"), dict) else {}
    items = [{"name": "discount_rate_annual", "value": str(study.discount_rate_annual),
              "source": "stated in the study" if "discount_rate_annual" in given else DEFAULT_SOURCES["discount_rate_annual"]}]  # fmt: skip
    for key in ("servers", "gpus_per_server", "gpu", "server_price", "install_cost", "server_overhead_kw", "average_load",
                "pue", "electricity_per_kwh", "colocation_per_kw_month", "maintenance_pct_per_year", "ops_fte",
                "fte_cost_per_year", "residual_pct", "gpu_tdp_w", "gpu_list_price"):  # fmt: skip
        value = getattr(study.buy, key)
        if value is None:
            continue
        default = DEFAULT_SOURCES.get(
            key, "default" if key in BUY_DEFAULTS or key in BUY_USD_DEFAULTS else "the plan"
        )
        items.append({"name": f"buy.{key}", "value": str(value),
                      "source": "stated in the study" if key in stated_buy else default})  # fmt: skip
    return items


def plan_assumptions(
    request: PlanRequest, study_items: list[dict], history: DemandHistory
) -> list[dict[str, str]]:
    stated = set(request.stated)

    def source(key: str, default: str) -> str:
        return "asked" if key in stated else default

    growth = request.growth
    return [
        {"name": "history", "value": f"{request.start} to {request.end} (exclusive)", "source": "asked"},
        {"name": "demand series", "value": history.series_used, "source": history.series_reason},
        {"name": "horizon_months", "value": str(request.horizon_months), "source": source("horizon_months", "default 36: three years, as the TCO study")},
        {"name": "growth", "value": str(list(growth) if isinstance(growth, tuple) else growth),
         "source": source("growth", "default 0: the history's level held over the horizon")},
        {"name": "scenario", "value": request.scenario, "source": source("scenario", "default base")},
        {"name": "growth trials", "value": f"{request.trials} (seed {request.seed})",
         "source": f"monthly rate ~ Normal(rate, {demand_engine.DEFAULT_GROWTH_SIGMA}): gpuledger assumption"},
        *study_items,
    ]  # fmt: skip


def money(value: Decimal | float) -> str:
    return str(Decimal(str(value)).quantize(Decimal("0.01")))
