"""The assumptions a capacity plan states with its answer: every default or model choice that decided it,
with its source (docs/capacity-plan.md lists them all)."""

from __future__ import annotations

from decimal import Decimal

from planning.engine.options import Assumption, SupplyOptions
from planning.engine.plan_model import PlanInputs
from procurement.costing.tco import DEFAULT_IDLE_LOAD
from procurement.costing.values import round_price

METHOD = "gpuledger method, docs/capacity-plan.md"


OWNED_TIMING = "owned purchase timing (the headline)"


def owned_timing_assumption(lead_time_months: int | None) -> Assumption:
    """Which owned cash the headline is: the tranches a CFO would fund, or all at month 0."""
    if lead_time_months is None:
        return Assumption(OWNED_TIMING, "all servers bought at month 0", "the TCO study's model")
    return Assumption(
        OWNED_TIMING,
        f"in tranches: each plan year's servers bought {lead_time_months} months before the year (the first "
        "in month 0), only those whose slice of demand that year needs; the total, NPV, cost by year, "
        "break-even, P50/P90 and after-tax NPV pay them so. Never more than buying all at month 0 (the same "
        "hours served, servers held for less); the level is chosen as if bought at month 0; the growth "
        "trials keep the base growth's tranches",
        "lead_time_months (docs/capacity-plan.md, owned tranches)",
    )


def engine_assumptions(inputs: PlanInputs) -> tuple[Assumption, ...]:
    samples = inputs.firm_gpus.size
    found = [
        Assumption(
            "representative year",
            f"{samples:,} hourly samples, each standing for "
            f"{8760 / samples:.4f} h of every plan year, grown by the year's multiplier",
            METHOD,
        ),
        Assumption(
            "stack order",
            "commitments (no running cost), then owned servers, then spot / on-demand; "
            "firm demand below interruptible demand",
            METHOD,
        ),
        Assumption(
            "decision basis",
            f"lowest present value at {inputs.discount_rate_annual} a year "
            "(the TCO verdict's basis); totals are cash",
            "the study's discount rate",
        ),
        Assumption(
            "growth decision",
            "levels chosen for the base growth; the trials price the plan as "
            "chosen (1-year levels as planned), so P90 is an upper bound for a plan that adapts",
            METHOD,
        ),
    ]
    if inputs.options.owned is not None:
        found.append(owned_timing_assumption(inputs.owned_lead_time_months))
    if inputs.in_force is not None:
        found.append(
            Assumption(
                "commitments in force and renewals",
                "counted through the whole months they cover; from the month one ends its GPUs are a renewal "
                "(a commitment signed that month, at most the GPUs that end) or the 1-year level or the "
                "market, whichever is cheaper: none bought twice while it runs, none left uncovered after",
                METHOD,
            )
        )
    return (
        tuple(found)
        + option_assumptions(inputs.options, inputs.horizon_months)
        + status_quo_assumptions(inputs)
    )


def option_assumptions(options: SupplyOptions, horizon_months: int) -> tuple[Assumption, ...]:
    found = [
        Assumption(
            "on-demand price",
            f"{round_price(options.on_demand.price_per_gpu_hour)} per GPU-hour"
            + _decline(options.on_demand.price_decline_per_year),
            options.on_demand.source,
        )
    ]
    if options.owned is not None:
        found += _owned(options, horizon_months)
    for option in (options.committed_3y, options.committed_1y):
        if option is not None:
            found.append(
                Assumption(
                    f"{option.kind} price",
                    f"{option.price_per_gpu_hour} per GPU-hour effective "
                    f"({option.pricing_model}), units of {option.unit_gpus} GPU(s), every hour of the term paid; "
                    "a term running past the horizon is charged in full",
                    option.source,
                )
            )
    if options.committed_1y is not None:
        found.append(Assumption("1-year commitments", "re-chosen at the start of each plan year", METHOD))
    if options.committed_3y is not None:
        found.append(
            Assumption(
                "3-year commitments",
                "one level from month 1 for the horizon, renewed at each term's end",
                METHOD,
            )
        )
    if options.spot is not None:
        spot = options.spot
        found.append(
            Assumption(
                "spot price",
                f"{spot.listed_price_per_gpu_hour} listed x (1 + {spot.overhead.quantize(Decimal('0.000001'))} "
                f"overhead) = {spot.effective_price_per_gpu_hour} per GPU-hour; interruptible demand only",
                spot.source,
            )
        )
        found.append(
            Assumption(
                "spot checkpointing",
                f"interruptions {spot.interruption_rate_per_hour.quantize(Decimal('0.0000001'))}"
                f" an hour, checkpoint every {spot.checkpoint_interval_hours.quantize(Decimal('0.001'))} h, writing "
                f"{spot.checkpoint_write_hours} h, restart {spot.restart_hours} h",
                "procurement/costing/spot.py (Young/Daly, the guides' 15-minute ceiling); defaults in "
                "docs/capacity-plan.md",
            )
        )
    return tuple(found)


def _decline(decline: Decimal) -> str:
    return f", falling {decline} a year" if decline else ""


def _owned(options: SupplyOptions, horizon_months: int) -> list[Assumption]:
    owned = options.owned
    assert owned is not None
    buy = owned.study.buy
    if buy.energy_follows_utilization:
        idle = DEFAULT_IDLE_LOAD if buy.idle_load is None else buy.idle_load
        split = (
            f"energy at idle load {idle} is fixed, energy above it (to average load {buy.average_load}) "
            "follows the GPU-hours used"
        )
    else:
        split = f"energy at average load {buy.average_load} is paid whatever the use (fixed)"
    return [
        Assumption(
            "owned servers",
            f"{owned.gpus_per_server} GPUs each ({owned.gpu_model}), bought at month 0 "
            f"and held {horizon_months} months, residual {buy.residual_pct} of the price returned at the end",
            owned.source,
        ),
        Assumption(
            "owned fixed / variable split",
            split + "; failure cover (if any) follows use; per server = "
            "the study's fleet over its working servers",
            "procurement/costing/tco.py buy_cash_flows at utilization 0 and 1",
        ),
    ]


ONE_OFF_CORRECTIONS = "status quo: one-off corrections left out"


def status_quo_assumptions(inputs: PlanInputs) -> tuple[Assumption, ...]:
    status_quo = inputs.status_quo
    if status_quo is None:
        return ()
    rate = round_price(status_quo.blended_cost_per_gpu_hour())
    parts = ", ".join(
        f"{c.category} {c.gpu_hours:,.0f} GPU-h at {round_price(c.cost_per_gpu_hour)}"
        for c in status_quo.categories
    )
    found = [
        Assumption(
            "status quo",
            f"the history's mix ({parts}) at a blended {rate} per GPU-hour used, on the plan's demand",
            status_quo.source,
        )
    ]
    if status_quo.one_off_corrections:
        found.append(
            Assumption(
                ONE_OFF_CORRECTIONS,
                f"{status_quo.one_off_corrections:.2f} of corrections with no GPU-hours (credits, "
                "re-ratings of past charges) are not projected over the horizon: they do not recur with "
                "the demand; neither the status quo's rate nor the fleet's own on-demand rate counts them",
                "gpuledger rule (docs/capacity-plan.md, Status quo)",
            )
        )
    return tuple(found)
