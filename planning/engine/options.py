"""The supply options a capacity plan layers: owned servers, 1- and 3-year commitments, on-demand, spot.

Each option is reduced to what the screening curve needs, built by the existing engines (never a
formula written again here; docs/capacity-plan.md, "Supply options"):

- owned: the TCO study's buy side (procurement/costing/tco.py ``buy_cash_flows``) run at utilization 0
  and at utilization 1 over the plan's horizon. Every buy cash flow is affine in utilization (the TCO
  engine's own break-even rests on it), so the flows at 0 are the fixed part (purchase or financing,
  colocation, maintenance, staff, energy unless it follows utilization, the residual returned at the
  horizon) and the difference is the variable part per used GPU-hour (energy above idle when
  ``energy_follows_utilization``, the failure cover rented on demand). Per server = the study's fleet
  divided by its working servers: spares, staff and failure cover scale with the fleet.
- committed_1y / committed_3y: an effective price per GPU-hour (``commitments.effective_hourly`` from
  recurring + upfront, or a price the caller already has: the study's reserved alternative, a stored
  commitment price), paid for every hour of the term, in whole units of ``unit_gpus``.
- on_demand: a price per used GPU-hour, no fixed cost; it may fall ``price_decline_per_year`` at each
  anniversary, the TCO study's rent rule (``tco.rent_price_factor``).
- spot: the listed spot price times (1 + overhead) of ``spot.spot_economics`` (Young/Daly checkpoint
  interval capped at the guides' 15 minutes, the checkpoint write and the restart); interruptible
  demand only.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from decimal import Decimal

import numpy as np

from planning.engine.errors import PlanInputError
from procurement.costing.commitments import effective_hourly
from procurement.costing.spot import band_interruption_rate_per_hour, spot_economics
from procurement.costing.tco import buy_cash_flows
from procurement.costing.tco_spec import COMMITTED_PRICING_MODELS, TcoStudy
from procurement.costing.values import HOURS_PER_MONTH, CostInputError, positive_int, round_price

# Spot defaults when the caller knows nothing about the jobs (docs/capacity-plan.md, "Defaults").
# Band 4 (">20%" a month, taken as 25%): the most pessimistic AWS Spot Instance Advisor band; the
# bundled advisor snapshot (July 2022) has no p5 rows, and GPU spot capacity is the most reclaimed.
DEFAULT_SPOT_INTERRUPTION_BAND = 4
# The docs' worked full fine-tune (Mistral-7B): C = 202.8 s to write a 101.4 GB checkpoint at 0.5 GB/s.
DEFAULT_CHECKPOINT_WRITE_HOURS = Decimal("0.0563")
# Restart: 5 min provisioning + a 30 GB image at 0.25 GB/s + the 101.4 GB checkpoint read at 0.5 GB/s
# = 300 + 120 + 202.8 s = 622.8 s (docs/cost-model.md, "Spot timing" defaults).
DEFAULT_RESTART_HOURS = Decimal("0.173")

OPTION_KINDS = ("owned", "committed_3y", "committed_1y", "on_demand", "spot")


@dataclass(frozen=True)
class Assumption:
    """One default or input that decided the answer, with where it comes from (shown to the user)."""

    name: str
    value: str
    source: str


@dataclass(frozen=True)
class OwnedOption:
    """Owned servers, per working server, month by month over the plan's horizon (months 0..H)."""

    gpu_model: str
    gpus_per_server: int
    fixed_flows_per_server: np.ndarray  # float64 (H+1,): cash at utilization 0, month 0 the purchase
    variable_per_gpu_hour: np.ndarray  # float64 (H+1,): cash per used GPU-hour in each month (0 at 0)
    study: TcoStudy  # the study as the plan ran it (horizon = the plan's), kept for the sensitivity
    source: str = ""

    @property
    def horizon_months(self) -> int:
        return self.fixed_flows_per_server.size - 1


@dataclass(frozen=True)
class CommitmentOption:
    """A reserved instance or savings plan: ``price_per_gpu_hour`` paid for every hour of the term."""

    term_months: int  # 12 or 36
    price_per_gpu_hour: Decimal  # effective (recurring + upfront spread over the term)
    source: str
    unit_gpus: int = 1
    pricing_model: str = ""  # reserved_1y, savings_plan_3y, ... as the price was quoted
    price_observed_at: str | None = None
    # A renewal signed at year k pays (1 - decline)^k of today's price: the rent rule of the study.
    price_decline_per_year: Decimal = Decimal(0)
    # The fee per GPU paid when a term is signed (the month before it runs: month 0 for the first), the
    # rest of the effective price monthly; None: the effective price every month (no fee known)
    upfront_per_gpu: Decimal | None = None
    payment_option: str = ""  # no_upfront, partial_upfront, all_upfront as the price was quoted

    @property
    def hourly_after_upfront(self) -> float:
        """The part of the effective price paid every month once the upfront fee is paid at signing."""
        if not self.upfront_per_gpu:
            return float(self.price_per_gpu_hour)
        return max(
            0.0, float(self.price_per_gpu_hour) - float(self.upfront_per_gpu) / (self.term_months * 730.0)
        )

    @property
    def kind(self) -> str:
        return "committed_3y" if self.term_months == 36 else "committed_1y"


@dataclass(frozen=True)
class OnDemandOption:
    price_per_gpu_hour: Decimal
    source: str
    price_decline_per_year: Decimal = Decimal(0)


@dataclass(frozen=True)
class SpotOption:
    """Spot for interruptible demand: ``effective_price_per_gpu_hour`` = listed x (1 + overhead)."""

    listed_price_per_gpu_hour: Decimal
    effective_price_per_gpu_hour: Decimal
    overhead: Decimal
    interruption_rate_per_hour: Decimal
    checkpoint_interval_hours: Decimal
    checkpoint_write_hours: Decimal
    restart_hours: Decimal
    source: str
    price_decline_per_year: Decimal = Decimal(0)


@dataclass(frozen=True)
class SupplyOptions:
    """The options a plan may use; None leaves one out. On-demand is always allowed (it is the option
    that can serve any demand at any hour)."""

    on_demand: OnDemandOption
    owned: OwnedOption | None = None
    committed_1y: CommitmentOption | None = None
    committed_3y: CommitmentOption | None = None
    spot: SpotOption | None = None
    assumptions: tuple[Assumption, ...] = field(default=())


def _plan_study(study: TcoStudy, horizon_months: int) -> TcoStudy:
    """The study over the plan's horizon, without a ramp (the plan's demand curve says the use); a lease
    runs for the horizon (the study parser's rule)."""
    financing = study.buy.financing
    if financing is not None and financing.kind == "lease":
        financing = replace(financing, term_months=horizon_months)
    return replace(
        study,
        horizon_months=horizon_months,
        utilization_ramp_months=None,
        buy=replace(study.buy, financing=financing),
    )


def owned_option(study: TcoStudy, *, horizon_months: int) -> OwnedOption:
    """Owned servers from a TCO study: fixed flows per server (the buy side at utilization 0) and the
    variable cost per used GPU-hour (buy at utilization 1 minus at 0, over the GPU-hours of a month)."""
    horizon_months = positive_int(horizon_months, "horizon_months")
    plan_study = _plan_study(study, horizon_months)
    at_zero = buy_cash_flows(replace(plan_study, utilization=Decimal(0)))
    at_full = buy_cash_flows(replace(plan_study, utilization=Decimal(1)))
    servers = Decimal(study.buy.servers)
    gpu_hours_per_month = servers * study.buy.gpus_per_server * HOURS_PER_MONTH
    fixed = np.array([float(flow / servers) for flow in at_zero])
    variable = np.array(
        [float((full - zero) / gpu_hours_per_month) for zero, full in zip(at_zero, at_full, strict=True)]
    )
    variable[0] = 0.0
    return OwnedOption(
        gpu_model=study.buy.gpu,
        gpus_per_server=study.buy.gpus_per_server,
        fixed_flows_per_server=fixed,
        variable_per_gpu_hour=variable,
        study=plan_study,
        source=f"TCO study {study.name!r}",
    )


def market_price_factors(decline_per_year: Decimal, months: int) -> np.ndarray:
    """Price factor of months 0..months-1 under the TCO study's rent rule (``tco.rent_price_factor``):
    year k of the horizon (months 12k+1..12k+12) pays (1 - decline)^k; month 0 pays today's price.
    Written over an array because the on-demand and spot options need not come from a study;
    tests/planning/engine/test_options.py checks it equals rent_price_factor month by month."""
    month = np.arange(months)
    anniversaries = np.where(month > 0, (month - 1) // 12, 0)
    return (1.0 - float(decline_per_year)) ** anniversaries


def commitment_option(
    term_years: int,
    *,
    source: str,
    effective_per_gpu_hour: Decimal | None = None,
    recurring_per_gpu_hour: Decimal | None = None,
    upfront_per_gpu: Decimal | None = None,
    unit_gpus: int = 1,
    pricing_model: str = "",
    price_observed_at: str | None = None,
    price_decline_per_year: Decimal = Decimal(0),
    payment_option: str = "",
) -> CommitmentOption:
    """A 1- or 3-year commitment from its effective price, or from recurring + upfront through
    ``commitments.effective_hourly`` (upfront spread over 8760 h a year of the term)."""
    field_name = f"committed_{term_years}y"
    if term_years not in (1, 3):
        raise PlanInputError("term_years", f"must be 1 or 3, got {term_years!r}")
    try:
        if effective_per_gpu_hour is None:
            if recurring_per_gpu_hour is None or upfront_per_gpu is None:
                raise PlanInputError(
                    field_name, "give the effective price or the recurring and upfront parts"
                )
            effective_per_gpu_hour = effective_hourly(
                recurring_per_hour=recurring_per_gpu_hour, upfront=upfront_per_gpu, term_years=term_years
            )
        elif effective_per_gpu_hour < 0:
            raise PlanInputError(f"{field_name}.price_per_gpu_hour", "must not be negative")
        unit = positive_int(unit_gpus, "unit_gpus")
    except CostInputError as error:
        raise PlanInputError(f"{field_name}.{error.field}", error.message) from None
    return CommitmentOption(
        term_months=12 * term_years,
        price_per_gpu_hour=round_price(Decimal(effective_per_gpu_hour)),
        source=source,
        unit_gpus=unit,
        pricing_model=pricing_model or f"reserved_{term_years}y",
        price_observed_at=price_observed_at,
        price_decline_per_year=price_decline_per_year,
        upfront_per_gpu=None if upfront_per_gpu is None else Decimal(upfront_per_gpu),
        payment_option=payment_option,
    )


def on_demand_option(
    price_per_gpu_hour: Decimal, *, source: str, price_decline_per_year: Decimal = Decimal(0)
) -> OnDemandOption:
    if price_per_gpu_hour <= 0:
        raise PlanInputError(
            "on_demand.price_per_gpu_hour", f"must be greater than 0, got {price_per_gpu_hour}"
        )
    return OnDemandOption(round_price(Decimal(price_per_gpu_hour)), source, price_decline_per_year)


def spot_option(
    listed_price_per_gpu_hour: Decimal,
    *,
    source: str,
    interruption_band: int | None = None,
    interruption_rate_per_hour: Decimal | None = None,
    checkpoint_write_hours: Decimal = DEFAULT_CHECKPOINT_WRITE_HOURS,
    restart_hours: Decimal = DEFAULT_RESTART_HOURS,
    price_decline_per_year: Decimal = Decimal(0),
    billed_on_spot_share: Decimal = Decimal(0),
) -> SpotOption:
    """Spot priced with the spot model's overhead: the interruption rate from an advisor band (default
    the ">20%" band) or given, the checkpoint interval chosen by ``spot.spot_economics``.
    ``billed_on_spot_share``: the share of the interruptible demand that already ran on spot, whose
    billed hours hold the restarts and lost work: the overhead is added to the rest only (counting it
    again would price today's spot work above what the bills show)."""
    try:
        if interruption_rate_per_hour is None:
            band = DEFAULT_SPOT_INTERRUPTION_BAND if interruption_band is None else interruption_band
            interruption_rate_per_hour = band_interruption_rate_per_hour(band)
        economics = spot_economics(
            spot_price_per_hour=Decimal(listed_price_per_gpu_hour),
            rate_per_hour=Decimal(interruption_rate_per_hour),
            checkpoint_write_hours=Decimal(checkpoint_write_hours),
            restart_hours=Decimal(restart_hours),
        )
    except CostInputError as error:
        raise PlanInputError(f"spot.{error.field}", error.message) from None
    share = min(max(Decimal(billed_on_spot_share), Decimal(0)), Decimal(1))
    overhead = economics.overhead * (1 - share)
    return SpotOption(
        listed_price_per_gpu_hour=Decimal(listed_price_per_gpu_hour),
        effective_price_per_gpu_hour=round_price(Decimal(listed_price_per_gpu_hour) * (1 + overhead)),
        overhead=overhead,
        interruption_rate_per_hour=economics.rate_per_hour,
        checkpoint_interval_hours=economics.interval_hours,
        checkpoint_write_hours=economics.checkpoint_write_hours,
        restart_hours=economics.restart_hours,
        source=source,
        price_decline_per_year=price_decline_per_year,
    )


def options_from_study(
    study: TcoStudy,
    *,
    horizon_months: int,
    committed_1y: CommitmentOption | None = None,
    committed_3y: CommitmentOption | None = None,
    spot: SpotOption | None = None,
    include_owned: bool = True,
    on_demand: OnDemandOption | None = None,
) -> SupplyOptions:
    """Owned servers from the study's buy side, and its rent price as the option it is: on-demand (a
    spot mix: its blended price) with its yearly decline, a reserved or savings-plan price as the
    commitment of its term, a spot price as spot; the study's reserved alternative as the commitment of
    its term. Options given (stored prices) win over the study's. A study whose rent is not on-demand
    needs ``on_demand`` given: nothing else can serve any demand at any hour."""
    rent = study.rent
    decline = rent.price_decline_per_year or Decimal(0)
    source = rent.price_source or "study file"
    quoted = {"committed_1y": committed_1y, "committed_3y": committed_3y}
    for model, price, price_source, observed in _study_commitments(study):
        term = 3 if model.endswith("3y") else 1
        if quoted[f"committed_{term}y"] is None:
            quoted[f"committed_{term}y"] = commitment_option(
                term,
                source=price_source or "study file",
                effective_per_gpu_hour=price,
                pricing_model=model,
                price_observed_at=observed,
            )
    if rent.pricing_model == "spot" and spot is None:
        spot = spot_option(rent.price_per_gpu_hour, source=source, price_decline_per_year=decline)
    if on_demand is None:
        if rent.pricing_model not in ("on_demand", "spot_mix"):
            raise PlanInputError(
                "study", f"the study's rent is a {rent.pricing_model} price: give an on-demand price as well"
            )
        on_demand = on_demand_option(
            rent.blended_price_per_gpu_hour(), source=source, price_decline_per_year=decline
        )
    return SupplyOptions(
        on_demand=on_demand,
        owned=owned_option(study, horizon_months=horizon_months) if include_owned else None,
        committed_1y=quoted["committed_1y"],
        committed_3y=quoted["committed_3y"],
        spot=spot,
    )


def _study_commitments(study: TcoStudy) -> list[tuple[str, Decimal, str, str | None]]:
    """(pricing model, price, source, observed at) of the commitments a study names: its rent, when the
    rent is committed, and its reserved alternative."""
    rent, found = study.rent, []
    if rent.pricing_model in COMMITTED_PRICING_MODELS:
        found.append((rent.pricing_model, rent.price_per_gpu_hour, rent.price_source, rent.price_observed_at))
    reserved = rent.reserved_alternative
    if reserved is not None:
        found.append(
            (
                reserved.pricing_model,
                reserved.price_per_gpu_hour,
                reserved.price_source,
                reserved.price_observed_at,
            )
        )
    return found
