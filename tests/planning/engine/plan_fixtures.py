"""Builders for capacity-plan tests: options with round numbers, demand patterns, plan inputs."""

from __future__ import annotations

import math
from dataclasses import replace
from decimal import Decimal

import numpy as np

from planning.engine.options import (
    CommitmentOption,
    OnDemandOption,
    OwnedOption,
    SpotOption,
    SupplyOptions,
)
from planning.engine.plan import PlanInputs
from procurement.costing.tco_spec import parse_tco_study
from tests.procurement.costing.tco_fixtures import GPUS, study_document

D = Decimal


def worked_study(**changes):
    """The TCO worked example (one 8 x H100 server, 36 months; docs/cost-model.md) with changes."""
    return parse_tco_study(study_document(**changes), gpu_lookup=GPUS.get)


def synthetic_owned(
    *, gpus_per_server: int, capex: float, monthly: float, residual: float, variable: float, horizon: int
) -> OwnedOption:
    """An owned server with round cash flows: capex at month 0, a fixed cost every month 1..H, the
    residual returned at H, and ``variable`` per used GPU-hour (the study only labels assumptions)."""
    fixed = np.full(horizon + 1, monthly, dtype=np.float64)
    fixed[0] = capex
    fixed[horizon] -= residual
    per_hour = np.full(horizon + 1, variable, dtype=np.float64)
    per_hour[0] = 0.0
    study = worked_study()
    return OwnedOption(
        gpu_model="h100-sxm5-80gb",
        gpus_per_server=gpus_per_server,
        fixed_flows_per_server=fixed,
        variable_per_gpu_hour=per_hour,
        study=replace(study, horizon_months=horizon),
        source="test",
    )


def on_demand(price: str, decline: str = "0") -> OnDemandOption:
    return OnDemandOption(D(price), "test", D(decline))


def commitment(term_months: int, price: str, unit: int = 1) -> CommitmentOption:
    return CommitmentOption(
        term_months=term_months, price_per_gpu_hour=D(price), source="test", unit_gpus=unit
    )


def spot(effective: str) -> SpotOption:
    return SpotOption(
        listed_price_per_gpu_hour=D(effective),
        effective_price_per_gpu_hour=D(effective),
        overhead=D(0),
        interruption_rate_per_hour=D(0),
        checkpoint_interval_hours=D("0.25"),
        checkpoint_write_hours=D("0.01"),
        restart_hours=D(0),
        source="test",
    )


def tiled(pattern, samples: int = 168) -> np.ndarray:
    """A short pattern repeated over ``samples`` samples (168: the shortest history accepted)."""
    return np.resize(np.asarray(pattern, dtype=np.float64), samples)


def inputs(
    options: SupplyOptions,
    *,
    firm,
    interruptible=None,
    horizon: int = 12,
    growth=None,
    rate: str = "0",
    **extra,
) -> PlanInputs:
    firm = np.asarray(firm, dtype=np.float64)
    years = math.ceil(horizon / 12)
    return PlanInputs(
        firm_gpus=firm,
        interruptible_gpus=np.zeros_like(firm) if interruptible is None else np.asarray(interruptible, float),
        growth_by_year=np.ones(years) if growth is None else np.asarray(growth, dtype=np.float64),
        options=options,
        horizon_months=horizon,
        currency="USD",
        discount_rate_annual=D(rate),
        **extra,
    )
