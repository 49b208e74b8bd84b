"""One capacity plan from a scope's rows: the GPU model to plan for, the demand, the study, the prices,
the engine's plan, and the result dict every shell shows (docs/capacity-plan.md, "Output")."""

from __future__ import annotations

import copy
import dataclasses
import datetime as dt
from dataclasses import replace
from decimal import Decimal
from typing import Any

import numpy as np
import pandas as pd

from planning.engine import demand as demand_engine
from planning.engine.assumptions import ONE_OFF_CORRECTIONS
from planning.engine.demand import DemandHistory, UsageRows, UtilizationRows
from planning.engine.errors import PlanInputError
from planning.engine.fleets import fleets_of, usage_of
from planning.engine.in_force import commitments_of, in_force_inputs, renewals
from planning.history import PlanScope
from planning.services.plan_combine import combine
from planning.services.plan_default_prices import ASSUMPTION as DEFAULT_PRICE_ASSUMPTION
from planning.services.plan_default_prices import (
    default_price_sentence,
    headline_fields,
    saving_on_default_price,
    server_price_quoted,
)
from planning.services.plan_engine import lay_plan, savings_sentence
from planning.services.plan_fleets import (
    HOW_TO_GIVE_ON_DEMAND,
    fleet_json,
    fleet_prices,
    gpu_form_factors,
    owned_fits,
    provider_kinds,
    study_applies,
    study_gpu,
    with_fleet,
)
from planning.services.plan_move import migration_terms, move_prices, move_scenario
from planning.services.plan_prices import TERM_OF_MODEL, PlanPrice
from planning.services.plan_requests import PlanRequest
from pricing.models import GpuModel
from procurement.costing.gpu_catalog import GpuEconomics
from procurement.costing.tco_spec import BUY_DEFAULTS, BUY_USD_DEFAULTS, parse_tco_study
from procurement.costing.values import CostInputError
from procurement.reports.kinds.rent_or_buy import DEFAULT_SOURCES
from procurement.services.tco import fx_pairs_into, gpu_economics_lookup

CURVE_DECIMALS = 3  # GPUs in use per hour, kept to a thousandth of a GPU
MAX_GAPS_SHOWN = 20
# The study's fields the plan sets itself: utilization comes from the demand each layer serves, rent
# from the catalog (or the study's typed commitment prices), the horizon from the request.
PLAN_OWNED_FIELDS = ("utilization", "horizon_months", "rent")


def plan_result(
    *, request: PlanRequest, scope: PlanScope, usage: UsageRows, utilization: UtilizationRows, currency: str
) -> dict[str, Any]:
    """The plan of every like-for-like fleet of the scope (planning/fleets.py), each at its own prices,
    and the headline that sums them (plan_combine.py)."""
    warnings: list[str] = []
    form_factors = gpu_form_factors()
    fleets = fleets_of(usage, form_factors)
    if request.providers:  # the scope: the bills of these providers
        fleets = [fleet for fleet in fleets if fleet.provider in request.providers]
        if not fleets:
            raise PlanInputError(
                "providers", f"no GPU usage rows of {', '.join(request.providers)} in the scope"
            )
    models_in_scope = {fleet.gpu_model for fleet in fleets}
    if request.study and not study_gpu(request.study) and len(models_in_scope) > 1:
        warnings.append(
            f"the study names no buy.gpu and the scope holds {', '.join(sorted(models_in_scope))}: "
            "its prices are used for none of them; give buy.gpu"
        )
    planned, missing, left_out, prices_shown = [], [], [], []
    commitments_found, renewals_found, fleet_assumptions = [], [], None
    for fleet in fleets:
        fleet_usage = usage_of(usage, fleet.rows)
        for_fleet = study_applies(request.study, fleet, models_in_scope)
        prices, fleet_missing = fleet_prices(
            fleet,
            fleet_usage,
            currency=currency,
            study=request.study,
            study_for_fleet=for_fleet,
            horizon_months=request.horizon_months,
        )
        missing += fleet_missing
        on_demand = next((price for price in prices if price.kind == "on_demand"), None)
        if on_demand is None:
            left_out.append(fleet_json(fleet) | {"reason": "no on-demand price (see missing_prices)"})
            continue
        fleet_warnings: list[str] = []
        study, study_items = plan_study(
            request,
            gpu=fleet.gpu_model,
            currency=currency,
            on_demand=on_demand,
            warnings=fleet_warnings,
            study_for_fleet=for_fleet,
        )
        owned_problem = owned_fits(fleet, study.buy.gpus_per_server, form_factors)
        if study.name == NO_SERVER_PRICE:
            owned_problem = "no price"
        elif owned_problem:
            fleet_warnings.append(f"{fleet.key}: owned servers left out: the server has {owned_problem}")
        elif fleet.need.fabric:
            fleet_warnings.append(
                f"{fleet.key}: the bills show {fleet.running_together} fabric instances at once; "
                "owned servers are priced as if the study's server price includes the cluster "
                "network (InfiniBand/RoCE switches and NICs)"
            )
        history = demand_engine.demand_history(
            fleet_usage,
            start_hour=scope.start_hour,
            end_hour=scope.end_hour,
            utilization=utilization,
            series=request.series,
        )
        commitments = commitments_of(fleet_usage, end_hour=scope.end_hour)
        in_force = in_force_inputs(
            commitments, history_end_hour=scope.end_hour, horizon_months=request.horizon_months
        )
        quo = demand_engine.status_quo(fleet_usage, start_hour=scope.start_hour, end_hour=scope.end_hour)
        laid = {
            "request": request,
            "history": history,
            "study": study,
            "prices": prices,
            "status_quo": quo,
            "gpu": fleet.gpu_model,
            "in_force": in_force,
        }
        plan = lay_plan(**laid, include_owned=not owned_problem)
        plan["saving_on_default_prices"] = None
        if plan.get("owned_servers") and not server_price_quoted(request.study, for_fleet):
            # only its base total is read: one growth trial, no sensitivity, to keep the second plan cheap
            without_owned = lay_plan(
                **(laid | {"request": replace(request, trials=1)}),
                include_owned=False,
                with_sensitivity=False,
            )
            plan["saving_on_default_prices"] = str(saving_on_default_price(plan, without_owned))
        plan["layers"] = with_fleet(plan["layers"], fleet, prices)
        plan["fleet"] = fleet.key
        planned.append((fleet, plan, history))
        prices_shown += [price.as_dict() | {"fleet": fleet.key} for price in prices]
        commitments_found += [_commitment_json(item, fleet) for item in commitments]
        renewals_found += [
            item | {"fleet": fleet.key}
            for item in renewals(
                commitments, history_end_hour=scope.end_hour, horizon_months=request.horizon_months
            )
        ]
        warnings += fleet_warnings
        if fleet_assumptions is None:
            fleet_assumptions = study_items
    if not planned:
        first = missing[0] if missing else {"what": "no fleet could be priced", "how": HOW_TO_GIVE_ON_DEMAND}
        raise PlanInputError("gpu", f"{first['what']}; {first['how']}")
    head = combine([plan for _, plan, _ in planned], horizon=request.horizon_months)
    head |= headline_fields(
        [plan | {"fleet": fleet.key} for fleet, plan, _ in planned], head.get("savings_vs_status_quo")
    )
    all_rows = np.zeros(len(usage), dtype=bool)
    for fleet, _, _ in planned:
        all_rows |= fleet.rows
    planned_usage = (
        usage if all_rows.all() else usage_of(usage, all_rows)
    )  # no copy when every row is planned
    history = demand_engine.demand_history(
        planned_usage,
        start_hour=scope.start_hour,
        end_hour=scope.end_hour,
        utilization=utilization,
        series=request.series,
    )
    first_plan = planned[0][1]
    quo = demand_engine.status_quo(planned_usage, start_hour=scope.start_hour, end_hour=scope.end_hour)
    head["status_quo_cost_per_gpu_hour"] = (
        str(
            (Decimal(quo.effective_cost_micros) * MICRO_DECIMAL / Decimal(repr(quo.gpu_hours))).quantize(
                MICRO_DECIMAL
            )
        )
        if quo.gpu_hours > 0
        else None
    )
    gpu = ", ".join(dict.fromkeys(fleet.gpu_model for fleet, _, _ in planned))
    evaluated = sorted(
        {layer_kind for _, plan, _ in planned for layer_kind in plan.get("options_evaluated", [])}
    )
    models = models_by_spend(planned, left_out)
    result = {
        "name": request.name or f"capacity plan, {request.start:%Y-%m} to {request.end:%Y-%m}",
        "currency": currency,
        "scope": {
            "from": request.start.isoformat(),
            "to": request.end.isoformat(),
            "teams": list(scope.teams),
            "gpu": gpu,
            "gpu_asked": request.gpu,
            "market": "the bills' own providers, regions and instance types",
        },
        "horizon_months": request.horizon_months,
        "growth": list(request.growth) if isinstance(request.growth, tuple) else request.growth,
        "scenario": request.scenario,
        "trials": request.trials,
        "seed": request.seed,
        "discount_rate_annual": first_plan.get("discount_rate_annual"),
        "gpu_model": gpu,
        "demand": demand_summary(history, start_hour=scope.start_hour) | {"gpu_models": gpu},
        "prices": prices_shown,
        "assumptions": plan_assumptions(
            request, _first_fleets(fleet_assumptions or [], planned[0][0].key, len(planned)), history
        )
        + _first_fleets(first_plan.get("assumptions", []), planned[0][0].key, len(planned))
        + _other_fleets_one_offs(planned)
        + [DEFAULT_PRICE_ASSUMPTION],
        "warnings": list(dict.fromkeys(warnings)),
        "fleets": [
            fleet_json(fleet) | {"plan": _fleet_plan(plan), "demand": _fleet_demand(fleet_history)}
            for fleet, plan, fleet_history in planned
        ],
        "models": models,
        # the models table's total (report and PDF): every printed figure is one of the JSON's
        "spend_in_bills": str(sum((Decimal(model["spend"]) for model in models), Decimal(0))),
        "fleets_not_planned": left_out,
        "missing_prices": missing,
        "commitments_in_force": commitments_found,
        "renewals": renewals_found,
        "options_evaluated": evaluated,
    } | head
    result["recommendation"] = recommendation(result, planned)
    if request.market == "move":
        result["scenarios"] = {
            "move_provider": _move(request, scope, usage, utilization, currency, planned, form_factors)
        }
    return result


def _other_fleets_one_offs(planned) -> list[dict]:
    """The one-off corrections each further fleet's status quo left out: the headline's status quo sums
    every fleet's, so a CFO sees all of them, not only the first fleet's."""
    return [
        item | {"source": f"{item['source']} [fleet {fleet.key}]"}
        for fleet, plan, _ in planned[1:]
        for item in plan.get("assumptions", [])
        if item["name"] == ONE_OFF_CORRECTIONS
    ]


def _first_fleets(items: list[dict], fleet_key: str, fleets: int) -> list[dict]:
    """The first fleet's own inputs (its study, prices, status quo), said to be its own when the plan has
    more than one fleet: a CFO must not read the A100 server price as every model's."""
    if fleets < 2:
        return items
    return [item | {"source": f"{item['source']} [fleet {fleet_key} only]"} for item in items]


def _move(
    request: PlanRequest, scope: PlanScope, usage, utilization, currency: str, planned, form_factors
) -> dict:
    """Each planned fleet again over other providers' like-for-like offers (plan_move.py)."""
    kinds = provider_kinds()
    moved, kept = [], []
    for fleet, _, history in planned:
        prices = move_prices(
            fleet,
            currency=currency,
            form_factors=form_factors,
            provider_kinds=kinds,
            horizon_months=request.horizon_months,
        )
        on_demand = next((price for price in prices if price.kind == "on_demand"), None)
        if on_demand is None:
            kept.append(
                f"{fleet.key}: no like-for-like on-demand offer at another provider ({fleet.need.text()})"
            )
            continue
        fleet_usage = usage_of(usage, fleet.rows)
        study, _ = plan_study(
            request,
            gpu=fleet.gpu_model,
            currency=currency,
            on_demand=on_demand,
            warnings=[],
            study_for_fleet=False,
        )
        owned_problem = study.name == NO_SERVER_PRICE or owned_fits(
            fleet, study.buy.gpus_per_server, form_factors
        )
        commitments = commitments_of(fleet_usage, end_hour=scope.end_hour)
        in_force = in_force_inputs(
            commitments, history_end_hour=scope.end_hour, horizon_months=request.horizon_months
        )
        quo = demand_engine.status_quo(fleet_usage, start_hour=scope.start_hour, end_hour=scope.end_hour)
        plan = lay_plan(
            request=request,
            history=history,
            study=study,
            prices=prices,
            status_quo=quo,
            gpu=fleet.gpu_model,
            in_force=in_force,
            include_owned=not owned_problem,
            with_sensitivity=False,
        )
        if all(layer["kind"] in ("owned", "in_force") for layer in plan["layers"]):
            # owned servers serve it all at any provider: moving rents nothing elsewhere, and charging the
            # migration for it would show the move as a loss of a move that does not happen
            kept.append(f"{fleet.key}: its plan owns servers for all of its demand; nothing to move")
            continue
        plan["layers"] = with_fleet(plan["layers"], fleet, prices)
        plan["fleet"] = fleet.key
        moved.append((fleet, plan, [price.as_dict() for price in prices]))
    terms = {key: Decimal(value) for key, value in (request.migration or {}).items()} or migration_terms(None)
    return move_scenario(
        moved,
        kept=kept,
        terms=terms,
        currency=currency,
        combine=lambda plans: combine(plans, horizon=request.horizon_months),
    )


FLEET_PLAN_KEYS = (
    "total_cost",
    "saving_on_default_prices",
    "npv",
    "p50_total_cost",
    "p90_total_cost",
    "status_quo_cost",
    "savings_vs_status_quo",
    "break_even_month",
    "owned_servers",
    "gpus_per_server",
    "cost_by_year",
    "status_quo_by_year",
    "levels",
    "payment_options",
    "owned_tranches",
    "after_tax",
    "recommendation",
    "status_quo_cost_per_gpu_hour",
    "options_evaluated",
)


def _fleet_plan(plan: dict) -> dict:
    return {key: plan.get(key) for key in FLEET_PLAN_KEYS}


def _fleet_demand(history: DemandHistory) -> dict:
    summary = demand_engine.demand_summary(history)
    return {
        "gpu_hours": round(float(summary["gpu_hours"]), 3),
        "percentiles": {key: round(value, 3) for key, value in summary["percentiles"].items()},
        "load_duration_curve": np.round(
            demand_engine.load_duration_curve(history.demand), CURVE_DECIMALS
        ).tolist(),
    }


def _commitment_json(item, fleet) -> dict:
    return {
        "fleet": fleet.key,
        "commitment_id": item.commitment_id,
        "gpus": item.gpus,
        "rate_per_gpu_hour": f"{item.rate_per_gpu_hour:.6f}",
        "used_gpu_hours": round(item.used_gpu_hours, 3),
        "unused_gpu_hours": round(item.unused_gpu_hours, 3),
        "ends": item.end_text(),
    }


def models_by_spend(planned, left_out) -> list[dict]:
    """Each GPU model of the scope: its spend in the bills and its plan's cost, most spend first."""
    models: dict[str, dict] = {}
    for fleet, plan, _ in planned:
        entry = models.setdefault(
            fleet.gpu_model,
            {
                "gpu_model": fleet.gpu_model,
                "spend": Decimal(0),
                "gpu_hours": 0.0,
                "total_cost": Decimal(0),
                "fleets": [],
            },
        )
        entry["spend"] += Decimal(fleet.effective_cost_micros) * MICRO_DECIMAL
        entry["gpu_hours"] += fleet.gpu_hours
        entry["total_cost"] += Decimal(plan["total_cost"])
        entry["fleets"].append(fleet.key)
    for fleet in left_out:
        entry = models.setdefault(
            fleet["gpu_model"],
            {
                "gpu_model": fleet["gpu_model"],
                "spend": Decimal(0),
                "gpu_hours": 0.0,
                "total_cost": Decimal(0),
                "fleets": [],
            },
        )
        entry["spend"] += Decimal(fleet["spend"])
        entry["gpu_hours"] += fleet["gpu_hours"]
    ordered = sorted(models.values(), key=lambda entry: (-entry["spend"], entry["gpu_model"]))
    return [
        entry
        | {
            "spend": str(entry["spend"].quantize(CENT)),
            "total_cost": str(entry["total_cost"]),
            "gpu_hours": round(entry["gpu_hours"], 3),
        }
        for entry in ordered
    ]


MICRO_DECIMAL = Decimal("0.000001")
CENT = Decimal("0.01")


def recommendation(result: dict, planned) -> str:
    """The headline in words, the money first, then each fleet's own recommendation (by spend)."""
    currency = result["currency"]

    def money(value) -> str:
        return "—" if value in (None, "") else f"{Decimal(value):,.2f} {currency}"

    text = (
        f"Total {money(result.get('total_cost'))} over {result['horizon_months']} months for "
        f"{len(planned)} fleet{'s' if len(planned) != 1 else ''} priced at the bills' own providers, regions and "
        f"instance types (NPV {money(result.get('npv'))}"
    )
    if result.get("p90_total_cost"):
        text += f", P90 {money(result['p90_total_cost'])}"
    text += ")."
    if result.get("savings_vs_status_quo") not in (None, ""):
        text += savings_sentence(result["savings_vs_status_quo"], result.get("break_even_month"), currency)
        text += default_price_sentence(result)
    for fleet, plan, _ in planned:
        text += f" {fleet.key}: {plan['recommendation']}"
    return text


def bill_providers(usage: UsageRows) -> tuple[str, ...] | None:
    """The providers (catalog slugs) of the planned GPU usage rows, sorted; None when not read."""
    if usage.provider is None:
        return None
    used = usage.provider[~usage.unused_commitment]
    return tuple(sorted(set(pd.unique(used).tolist()) - {""}))


def provider_notes(
    prices: list[PlanPrice], bills: tuple[str, ...] | None, *, asked: tuple[str, ...] = ()
) -> list[str]:
    """Say when an offer the plan priced is another provider's than the bills' (`bills`, their
    providers): part of the saving is then moving provider, which the plan does not cost (egress,
    porting, a new contract). With the bills' providers unknown and none asked, the prices are the
    catalog's cheapest of any provider: say so, and whose they are."""
    offers = [(price.kind, price.offer) for price in prices if price.offer]
    if not bills:
        if asked:
            return []
        named = "; ".join(f"{kind} {offer}" for kind, offer in offers)
        return [
            f"prices are the catalog's cheapest of any provider ({named}): part of the saving may be "
            "moving provider; give providers (e.g. aws) to price the plan at the bills' own"
        ]
    elsewhere = [(kind, offer) for kind, offer in offers if offer.split("/", 1)[0] not in bills]
    if not elsewhere:
        return []
    own, moved = ", ".join(bills), ", ".join(sorted({offer.split("/", 1)[0] for _, offer in elsewhere}))
    named = "; ".join(f"{kind} {offer}" for kind, offer in elsewhere)
    note = (
        f"the bills are from {own}; the plan prices {moved} offers ({named}): part of the saving is "
        f"moving provider (from {own} to {moved})"
    )
    return [note if asked else f"{note}; give providers ({own}) to price the plan at the bills' own"]


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
    kept = {
        name: value[mask]
        if isinstance(value, np.ndarray) and name not in ("covered_start_hour", "covered_end_hour")
        else value
        for name, value in columns.items()
    }
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


def plan_study(
    request: PlanRequest,
    *,
    gpu: str,
    currency: str,
    on_demand: PlanPrice,
    warnings: list[str],
    study_for_fleet: bool = True,
):
    """The TCO study the owned-server option is priced with (parsed, procurement.costing.tco_spec), and
    the assumptions it stands on: the request's study with the fields the plan sets itself replaced,
    or, without one, the TCO defaults for one server of the planned GPU (stated in a warning). A study
    for another GPU model lends a fleet its finance terms only (not its server or its prices)."""
    given = copy.deepcopy(request.study) if request.study else {}
    if given and not study_for_fleet:  # keep the site's costs (power, colocation, staff), not the server
        given = {key: value for key, value in given.items() if key != "rent"}
        if isinstance(given.get("buy"), dict):
            given["buy"] = {key: value for key, value in given["buy"].items() if key not in SERVER_FIELDS}
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
    if rent and rent.get("pricing_model") not in (*TERM_OF_MODEL, "on_demand"):
        warnings.append(
            f"study.rent ({rent.get('pricing_model')}) is not used: on-demand and spot come from the catalog"
        )
    if not (given.get("buy") or {}).get("server_price"):
        warnings.append(
            f"no study for {gpu}: owned servers are priced with the TCO defaults for one 8-GPU server (server price "
            "= GPUs x list price x 1.30, PUE 1.58, power 0.10 USD/kWh, colocation 184 USD/kW-month, "
            "maintenance 10%/year, 0.05 FTE per server at 150,000 USD, residual 20%, discount rate 8%); "
            "give --study with a quote (docs/tco-spec.md)"
        )
    try:
        study = parse_tco_study(document, gpu_lookup=gpu_economics_lookup, fx_rates=fx_pairs_into(currency))
    except CostInputError as error:
        unpriceable = error.field == "buy.server_price" or (
            error.field == "buy.gpu" and buy["gpu"] == gpu and gpu_in_catalog(gpu)
        )
        if not unpriceable or "server_price" in buy:
            raise CostInputError(f"study.{error.field}", error.message) from None
        # no server price known for the GPU (no list price, or, like AWS's A10G, a part sold only inside
        # the cloud's own instances with no published TDP): the study still carries the finance terms;
        # the caller leaves owned servers out (NO_SERVER_PRICE) and says so. The stand-in server price
        # and TDP price nothing: no owned layer is laid for such a study.
        document["buy"] = buy | {"server_price": "1"}
        study = parse_tco_study(
            document, gpu_lookup=_with_stand_in_tdp(gpu_economics_lookup), fx_rates=fx_pairs_into(currency)
        )
        if warnings and warnings[-1].startswith(f"no study for {gpu}: owned servers are priced"):
            warnings.pop()  # no owned server is priced at all: the next warning says so
        warnings.append(
            f"no server price of {gpu} (no list price known, none in the study): planned with "
            "commitments, on-demand and spot only; give study.buy.server_price to weigh owning"
        )
        # the stand-ins price nothing and are no assumption of the plan (x30: the page listed
        # "buy.server_price 1" and "buy.gpu_tdp_w 1" for the README bill's A10G)
        stand_ins = {"buy.server_price"} | (
            {"buy.gpu_tdp_w"} if gpu_economics_lookup(gpu) is None and "gpu_tdp_w" not in buy else set()
        )
        items = [item for item in study_assumptions(study, given) if item["name"] not in stand_ins]
        return replace(study, name=NO_SERVER_PRICE), items
    return study, study_assumptions(study, given)


NO_SERVER_PRICE = "(no server price)"


def gpu_in_catalog(slug: str) -> bool:
    return GpuModel.objects.filter(slug=slug).exists()


def _with_stand_in_tdp(lookup):
    """The lookup, with a catalog GPU that has no TDP given a stand-in one (only for a study whose owned
    servers are left out: NO_SERVER_PRICE)."""

    def find(slug: str) -> GpuEconomics | None:
        found = lookup(slug)
        if found is None and gpu_in_catalog(slug):
            return GpuEconomics(slug=slug, tdp_w=Decimal(1), list_price=None)
        return found

    return find


# A study's fields about its server (one GPU model's): not lent to a fleet of another model
SERVER_FIELDS = ("gpu", "server_price", "gpu_list_price", "gpu_tdp_w", "gpus_per_server", "install_cost")


def study_assumptions(study, given: dict) -> list[dict[str, str]]:
    """Each finance and purchase input of the owned-server option, and whether the study stated it."""
    stated_buy = given.get("buy") if isinstance(given.get("buy"), dict) else {}
    items = [
        {
            "name": "discount_rate_annual",
            "value": str(study.discount_rate_annual),
            "source": "stated in the study"
            if "discount_rate_annual" in given
            else DEFAULT_SOURCES["discount_rate_annual"],
        }
    ]
    for key in (
        "servers",
        "gpus_per_server",
        "gpu",
        "server_price",
        "install_cost",
        "server_overhead_kw",
        "average_load",
        "pue",
        "electricity_per_kwh",
        "colocation_per_kw_month",
        "maintenance_pct_per_year",
        "ops_fte",
        "fte_cost_per_year",
        "residual_pct",
        "gpu_tdp_w",
        "gpu_list_price",
    ):
        value = getattr(study.buy, key)
        if value is None:
            continue
        default = DEFAULT_SOURCES.get(
            key, "default" if key in BUY_DEFAULTS or key in BUY_USD_DEFAULTS else "the plan"
        )
        items.append(
            {
                "name": f"buy.{key}",
                "value": str(value),
                "source": "stated in the study" if key in stated_buy else default,
            }
        )
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
        {
            "name": "horizon_months",
            "value": str(request.horizon_months),
            "source": source("horizon_months", "default 36: three years, as the TCO study"),
        },
        {
            "name": "growth",
            "value": str(list(growth) if isinstance(growth, tuple) else growth),
            "source": source("growth", "default 0: the history's level held over the horizon"),
        },
        {"name": "scenario", "value": request.scenario, "source": source("scenario", "default base")},
        {
            "name": "growth trials",
            "value": f"{request.trials} (seed {request.seed})",
            "source": f"monthly rate ~ Normal(rate, {demand_engine.DEFAULT_GROWTH_SIGMA}): gpuledger assumption",
        },
        *FINANCE_ASSUMPTIONS,
        {
            "name": "lead_time_months",
            "value": str(request.lead_time_months),
            "source": source(
                "lead_time_months",
                "default 3: gpuledger assumption, order to racked servers; each owned tranche is paid this "
                "long before the month its demand arrives (the first in month 0)",
            ),
        },
        *study_items,
    ]


# How item 6's figures are reckoned (issue 27), said once on every plan.
FINANCE_ASSUMPTIONS = (
    {
        "name": "commitment payment options",
        "value": "the one of lowest NPV at the study's discount rate; every option shown (payment_options)",
        "source": "an upfront fee is paid when a term is signed (month 0, then each renewal), the hourly "
        "part every month of the term (AWS RI and Savings Plans: no, partial, all upfront; Azure: upfront "
        "or monthly at the same total)",
    },
    {
        "name": "owned tranches",
        "value": "servers bought as the stack's demand reaches them (owned_tranches); the headline buys "
        "all in month 0",
        "source": "each tranche's cash is the TCO study's buy side over the months it is held, its residual "
        "at the study's share at the horizon (a younger server's higher resale is not counted)",
    },
    {
        "name": "after-tax NPV",
        "value": "study.tax_rate over every layer (after_tax)",
        "source": "the TCO engine's rules: running costs, interest and rent deducted when paid (an upfront "
        "fee for a term over 12 months deducted in equal monthly parts over its term, US Treas. Reg. "
        "1.263(a)-4(f), the 12-month rule; a 1-year term's fee when paid), owned servers' tax depreciation (buy.depreciation_method), the "
        "sale at the residual taxed on its gain over book value",
    },
)


def money(value: Decimal | float) -> str:
    return str(Decimal(str(value)).quantize(Decimal("0.01")))
