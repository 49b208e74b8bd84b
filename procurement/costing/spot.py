"""Spot economics: interruption rate, checkpoint interval, overhead, effective price and verdict.

Spot capacity is cheap (typically 1/3 to 1/10 of on-demand) but can be reclaimed. What an
interruption costs is the work done since the last checkpoint plus the restart. This module
turns a Spot Advisor band (or a user's own rate) into an hourly interruption rate, picks a
checkpoint interval with the Young/Daly first-order optimum, prices the overhead into an
effective spot price, and says in words whether spot suits the job at all.

C is the time the training loop blocks for a checkpoint: the whole write of a synchronous save, only the
copy to host memory of an asynchronous one (``spot_timing.py``; an asynchronous save's write to storage
overlaps training and its in-flight checkpoint is counted with R).

Formulas (docs/cost-model.md, "Spot"), with lambda = interruptions per hour and M = 1/lambda:
    tau*     = sqrt(2 C M)                      Young (1974), Daly (2006)
    lost     = tau / 2 + R                      expected work lost per interruption, hours
    overhead = C / tau + (tau / 2 + R) / M
    effective spot price = spot price x (1 + overhead)

A job on N instances is interrupted when any one of them is reclaimed. Assuming each instance is reclaimed
independently at the per-instance rate r (exponential clocks), the first reclaim among N comes at rate
N r exactly: lambda = N r. Every interruption stops all N (the restart waits for N instances again and the
work since the last checkpoint is lost on all N), so the overhead above, with lambda = N r, is paid on all
N instances' hours. A multi-instance row is priced this way, not refused, and says so in its reasons.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal, getcontext

import numpy as np

from procurement.costing.values import HOURS_PER_MONTH, CostInputError, non_negative, positive, round_price

# AWS Spot Advisor bands: share of instances interrupted in the trailing month. We take each band's
# midpoint; the open-ended ">20%" band gets 25% (our assumption, documented in docs/cost-model.md).
BAND_LABELS: tuple[str, ...] = ("<5%", "5-10%", "10-15%", "15-20%", ">20%")
BAND_MONTHLY_INTERRUPTION: tuple[Decimal, ...] = (
    Decimal("0.025"),
    Decimal("0.075"),
    Decimal("0.125"),
    Decimal("0.175"),
    Decimal("0.25"),
)
# The guides: spot fits interruptible work that checkpoints at most 15 minutes apart.
GUIDE_MAX_CHECKPOINT_INTERVAL_HOURS = Decimal("0.25")


def monthly_to_hourly_rate(monthly_interruption_share: Decimal) -> Decimal:
    """Constant hazard lambda with P(at least one interruption in 730 h) = share: -ln(1 - p) / 730."""
    if not 0 <= monthly_interruption_share < 1:
        raise CostInputError("interruption_monthly", f"must be in [0, 1), got {monthly_interruption_share}")
    return -((1 - monthly_interruption_share).ln()) / HOURS_PER_MONTH


# (band, precision, rounding) -> rate: a Decimal ln costs ~70 us and a recompute asks ~20 times a workload
_band_rates: dict[tuple[int, int, str], Decimal] = {}


def band_interruption_rate_per_hour(band: int) -> Decimal:
    if not isinstance(band, int) or isinstance(band, bool) or not 0 <= band < len(BAND_MONTHLY_INTERRUPTION):
        raise CostInputError("interruption_band", f"must be an advisor band index 0..4, got {band!r}")
    context = getcontext()  # the ln's digits depend on the context: memoized per precision and rounding
    key = (band, context.prec, context.rounding)
    rate = _band_rates.get(key)
    if rate is None:
        rate = _band_rates[key] = monthly_to_hourly_rate(BAND_MONTHLY_INTERRUPTION[band])
    return rate


def job_interruption_rate_per_hour(rate_per_instance_hour: Decimal, instances: int) -> Decimal:
    """lambda = N r: the job stops when any of its N instances is reclaimed; with independent reclaims the
    minimum of N exponential clocks of rate r is exponential of rate N r (module doc)."""
    if not isinstance(instances, int) or isinstance(instances, bool) or instances < 1:
        raise CostInputError("instances", f"must be a whole number of at least 1, got {instances!r}")
    return rate_per_instance_hour * instances


def reclaim_exposure_text(rate_per_instance_hour: Decimal, instances: int) -> str:
    """The N-fold exposure of a multi-instance spot job, in words (empty on one instance)."""
    if instances <= 1:
        return ""
    per_instance = rate_per_instance_hour.quantize(Decimal("1E-6"))
    job = job_interruption_rate_per_hour(rate_per_instance_hour, instances).quantize(Decimal("1E-6"))
    return (
        f"{instances}-fold reclaim exposure: the job spans {instances} instances and stops when any one is "
        f"reclaimed, {instances} x {per_instance} = {job} interruptions/h (independent reclaims assumed); "
        f"each restart waits for {instances} instances and loses the work since the checkpoint on all of them; "
        f"{_capacity_note(instances)}"
    )


def _capacity_note(instances: int) -> str:
    """Why a multi-instance spot row ranks after the others (procurement/ranking/configurations.py)."""
    return (
        f"ranked after rows that need no {instances} spot instances at once (that capacity is not modelled)"
    )


def young_daly_interval_hours(checkpoint_write_hours: Decimal, rate_per_hour: Decimal) -> Decimal | None:
    """tau* = sqrt(2 C M) = sqrt(2 C / lambda); None when nothing ever interrupts (no optimum)."""
    if rate_per_hour == 0:
        return None
    return (2 * checkpoint_write_hours / rate_per_hour).sqrt()


def lost_hours_per_interruption(interval_hours: Decimal, restart_hours: Decimal) -> Decimal:
    return interval_hours / 2 + restart_hours


def spot_overhead(
    *,
    interval_hours: Decimal,
    checkpoint_write_hours: Decimal,
    restart_hours: Decimal,
    rate_per_hour: Decimal,
) -> Decimal:
    """C / tau + (tau / 2 + R) / M, written with lambda = 1 / M so a zero rate needs no infinity."""
    return (
        checkpoint_write_hours / interval_hours
        + lost_hours_per_interruption(interval_hours, restart_hours) * rate_per_hour
    )


def spot_overhead_array(
    *,
    interval_hours: np.ndarray,
    checkpoint_write_hours: float,
    restart_hours: float,
    rate_per_hour: np.ndarray,
) -> np.ndarray:
    """The same overhead over many offers at once (float64, for ranking)."""
    return checkpoint_write_hours / interval_hours + (interval_hours / 2 + restart_hours) * rate_per_hour


@dataclass(frozen=True)
class SpotEconomics:
    spot_price_per_hour: Decimal
    rate_per_hour: Decimal
    optimal_interval_hours: Decimal | None
    interval_hours: Decimal  # the interval the job actually uses
    lost_hours_per_interruption: Decimal
    overhead: Decimal  # fraction of extra paid time
    checkpoint_write_hours: Decimal = Decimal(0)
    restart_hours: Decimal = Decimal(0)
    instances: int = 1  # rate_per_hour is the job's: instances x the per-instance rate (module doc)

    @property
    def rate_per_instance_hour(self) -> Decimal:
        return self.rate_per_hour / self.instances

    @property
    def mtbi_hours(self) -> Decimal | None:
        return None if self.rate_per_hour == 0 else 1 / self.rate_per_hour

    @property
    def effective_price_per_hour(self) -> Decimal:
        return round_price(self.spot_price_per_hour * (1 + self.overhead))


def interval_rule(optimal_interval_hours: Decimal | None, interval_hours: Decimal) -> str:
    """The two rules behind the interval, stated apart: Young/Daly's optimum and the guides' ceiling."""
    ceiling = GUIDE_MAX_CHECKPOINT_INTERVAL_HOURS
    if optimal_interval_hours is None:
        return "no interruptions expected: the guides' 15-minute ceiling sets the interval"
    optimum = f"Young/Daly optimum sqrt(2 C / lambda) = {optimal_interval_hours.quantize(Decimal('0.001'))} h"
    if interval_hours < optimal_interval_hours and interval_hours == ceiling:
        return optimum + "; capped by the guides' 15-minute ceiling (reclaims cluster in bad weeks)"
    return optimum + ", under the guides' 15-minute ceiling"


def chosen_interval_hours(
    optimal_interval_hours: Decimal | None, background_write_hours: Decimal = Decimal(0)
) -> Decimal:
    """Young/Daly's optimum, but never longer than the guides' 15 minutes: the advisor band is a monthly
    average and reclaims cluster, so an interval tuned to the average loses too much in a bad week. With an
    asynchronous save never shorter than its background write W either: the next save waits for the last
    one (costing/spot_timing.py). Over 15 minutes that breaks the guides' rule, and the verdict says so."""
    interval = GUIDE_MAX_CHECKPOINT_INTERVAL_HOURS
    if optimal_interval_hours is not None:
        interval = min(optimal_interval_hours, interval)
    return max(interval, background_write_hours)


def spot_economics(
    *,
    spot_price_per_hour: Decimal,
    rate_per_hour: Decimal,
    checkpoint_write_hours: Decimal,
    restart_hours: Decimal,
    checkpoint_interval_hours: Decimal | None = None,
    background_write_hours: Decimal = Decimal(0),
    instances: int = 1,
) -> SpotEconomics:
    """Effective spot price for a job that checkpoints; pass the job's own interval if it has one.
    ``rate_per_hour`` is one instance's; a job on ``instances`` is interrupted at instances x that rate.
    ``checkpoint_write_hours`` is C, what the loop blocks for (the whole write when synchronous, the copy
    to host memory when asynchronous); ``background_write_hours`` the asynchronous write to storage."""
    non_negative(spot_price_per_hour, "spot_price_per_hour")
    non_negative(rate_per_hour, "interruption_rate_per_hour")
    positive(checkpoint_write_hours, "checkpoint_write_hours")
    non_negative(restart_hours, "restart_hours")
    rate_per_hour = job_interruption_rate_per_hour(rate_per_hour, instances)
    optimal = young_daly_interval_hours(checkpoint_write_hours, rate_per_hour)
    if checkpoint_interval_hours is None:
        interval = chosen_interval_hours(
            optimal, non_negative(background_write_hours, "background_write_hours")
        )
    else:
        interval = positive(checkpoint_interval_hours, "checkpoint_interval_hours")
    return SpotEconomics(
        spot_price_per_hour=spot_price_per_hour,
        rate_per_hour=rate_per_hour,
        optimal_interval_hours=optimal,
        interval_hours=interval,
        lost_hours_per_interruption=lost_hours_per_interruption(interval, restart_hours),
        overhead=spot_overhead(
            interval_hours=interval,
            checkpoint_write_hours=checkpoint_write_hours,
            restart_hours=restart_hours,
            rate_per_hour=rate_per_hour,
        ),
        checkpoint_write_hours=checkpoint_write_hours,
        restart_hours=restart_hours,
        instances=instances,
    )


@dataclass(frozen=True)
class SpotJobTraits:
    """What the verdict needs to know about the job."""

    online_inference: bool = False
    can_checkpoint: bool = True
    instances: int = 1
    accepts_long_checkpoint_interval: bool = False


@dataclass(frozen=True)
class SpotVerdict:
    suitable: bool
    reasons: tuple[str, ...]


def spot_verdict(traits: SpotJobTraits, economics: SpotEconomics | None = None) -> SpotVerdict:
    """The guides' rules, each failed rule stated as a sentence; a suitable job gets its numbers instead.
    A job on several instances is not refused for it: its N-fold rate is priced in ``economics`` (module
    doc), and the exposure is stated after the verdict's other reasons, suitable or not."""
    reasons = [reason for rule in _RULES if (reason := rule(traits, economics))]
    exposure = _reclaim_exposure(traits, economics)
    if reasons:
        return SpotVerdict(suitable=False, reasons=(*reasons, *exposure))
    return SpotVerdict(suitable=True, reasons=(_suitable_reason(economics), *exposure))


def _reclaim_exposure(traits: SpotJobTraits, economics: SpotEconomics | None) -> tuple[str, ...]:
    if traits.instances <= 1:
        return ()
    if economics is None:
        return (
            f"{traits.instances}-fold reclaim exposure: the job spans {traits.instances} instances and stops "
            f"when any one is reclaimed (independent reclaims assumed); {_capacity_note(traits.instances)}",
        )
    return (reclaim_exposure_text(economics.rate_per_instance_hour, traits.instances),)


def _online_inference(traits: SpotJobTraits, _: SpotEconomics | None) -> str:
    if not traits.online_inference:
        return ""
    return "online inference: a reclaimed instance drops live requests, so serve from on-demand or reserved"


def _no_checkpoint(traits: SpotJobTraits, _: SpotEconomics | None) -> str:
    if traits.can_checkpoint:
        return ""
    return "the job cannot checkpoint: every interruption restarts it from the beginning"


def _long_interval(traits: SpotJobTraits, economics: SpotEconomics | None) -> str:
    if economics is None or traits.accepts_long_checkpoint_interval:
        return ""
    if economics.interval_hours <= GUIDE_MAX_CHECKPOINT_INTERVAL_HOURS:
        return ""
    minutes = (economics.interval_hours * 60).quantize(Decimal("0.1"))
    return (
        f"checkpoints are {minutes} min apart, over the 15 min the guides allow; "
        "checkpoint more often or accept the risk explicitly"
    )


def _write_longer_than_interval(traits: SpotJobTraits, economics: SpotEconomics | None) -> str:
    """A checkpoint that takes longer than the interval between checkpoints leaves no time for work."""
    if economics is None or economics.checkpoint_write_hours < economics.interval_hours:
        return ""
    write = (economics.checkpoint_write_hours * 60).quantize(Decimal("0.1"))
    interval = (economics.interval_hours * 60).quantize(Decimal("0.1"))
    return (
        f"a checkpoint takes {write} min to write, not less than the {interval} min between checkpoints: "
        "write to faster storage (local NVMe) or checkpoint asynchronously before using spot"
    )


_RULES = (_online_inference, _no_checkpoint, _long_interval, _write_longer_than_interval)


def _suitable_reason(economics: SpotEconomics | None) -> str:
    if economics is None:
        return "interruptible job that checkpoints"
    minutes = (economics.interval_hours * 60).quantize(Decimal("0.1"))
    overhead_pct = (economics.overhead * 100).quantize(Decimal("0.01"))
    return (
        f"checkpointing every {minutes} min adds {overhead_pct}% paid time; "
        f"effective spot price {economics.effective_price_per_hour}/h"
    )
