"""A capacity-plan request (the command's options, the API's body, the page's form) checked into one
PlanRequest. Every bad field is a PlanInputError naming it (spelled as the API spells it) before
anything is read or stored; every size a request can set is bounded."""

from __future__ import annotations

import datetime as dt
from dataclasses import asdict, dataclass, field
from typing import Any

from planning.engine.demand import (
    DEFAULT_TRIALS,
    MIN_PERIOD_HOURS,
    validate_growth,
    validate_horizon,
    validate_trials,
)
from planning.engine.errors import PlanInputError
from planning.engine.tranches import DEFAULT_LEAD_TIME_MONTHS, MAX_LEAD_TIME_MONTHS
from procurement.costing.values import currency_code

DEFAULT_HORIZON_MONTHS = 36  # the three years, as the TCO study's default
DEFAULT_GROWTH = 0.0  # no growth unless asked: the history's level held over the horizon
DEFAULT_SEED = 20  # any fixed seed makes the trials repeatable; the number
SCENARIOS = ("low", "base", "high")
SERIES = ("auto", "billed", "busy")
MAX_TEAMS = 50
MAX_NAME_LENGTH = 200
MAX_TEXT_LENGTH = 100  # a team or GPU slug
MAX_SEED = 2**32 - 1
REQUEST_FIELDS = {
    "name",
    "from",
    "to",
    "teams",
    "team",
    "gpu",
    "horizon_months",
    "growth",
    "scenario",
    "trials",
    "seed",
    "currency",
    "study",
    "series",
    "save",
    "providers",
    "market",
    "migration",
    "lookback_days",
    "lead_time_months",
}
# The history as AWS Cost Explorer's and Azure Advisor's recommendations offer it: the last 7, 30 or 60
# days of the stored bills, or all of them (at most the three years a period may span)
LOOKBACKS = ("7", "30", "60", "all")
MARKETS = ("bills", "move")  # the bills' own providers; move: add the move-provider scenario


@dataclass(frozen=True)
class PlanRequest:
    start: dt.date
    end: dt.date  # exclusive
    teams: tuple[str, ...] = ()
    gpu: str = ""  # empty: the GPU model with the most GPU-hours in the scope
    horizon_months: int = DEFAULT_HORIZON_MONTHS
    growth: float | tuple[float, ...] = DEFAULT_GROWTH
    scenario: str = "base"
    trials: int = DEFAULT_TRIALS
    seed: int = DEFAULT_SEED
    currency: str = ""  # empty: the study's, else USD
    study: dict | None = None
    series: str = "auto"
    name: str = ""
    providers: tuple[str, ...] = ()  # catalog providers the prices may come from; empty: every one
    market: str = "bills"  # bills: priced at the bills' own offers; move: the move scenario as well
    migration: dict | None = None  # the move scenario's migration terms (plan_move.MIGRATION_DEFAULTS)
    # owned servers are paid this many months before the demand they serve arrives (planning/engine/tranches.py)
    lead_time_months: int = DEFAULT_LEAD_TIME_MONTHS
    stated: tuple[str, ...] = field(default=(), compare=False)  # the fields the caller gave

    def as_inputs(self) -> dict[str, Any]:
        """JSON-ready: what a stored plan keeps to be recomputed later."""
        inputs = asdict(self)
        inputs["from"], inputs["to"] = inputs.pop("start").isoformat(), inputs.pop("end").isoformat()
        inputs["teams"] = list(self.teams)
        inputs["providers"] = list(self.providers)
        inputs["growth"] = list(self.growth) if isinstance(self.growth, tuple) else self.growth
        inputs["stated"] = list(self.stated)
        return inputs


def plan_request_parse(data: object) -> PlanRequest:
    """Check a request body (or stored inputs). Raises PlanInputError naming the first bad field."""
    if not isinstance(data, dict):
        raise PlanInputError("(root)", "send a JSON object")
    unknown = sorted(set(data) - REQUEST_FIELDS - {"stated"})
    if unknown:
        raise PlanInputError(unknown[0], f"unknown field; the fields are {', '.join(sorted(REQUEST_FIELDS))}")
    start, end = _period(data)
    if (end - start).days * 24 < MIN_PERIOD_HOURS:
        raise PlanInputError("to", f"the period must be at least 7 days, got {(end - start).days} days")
    horizon = validate_horizon(data.get("horizon_months", DEFAULT_HORIZON_MONTHS))
    growth = validate_growth(_growth(data.get("growth", DEFAULT_GROWTH)), horizon_months=horizon)
    study = data.get("study")
    if study is not None and not isinstance(study, dict):
        raise PlanInputError("study", "must be a TCO study object (docs/tco-spec.md)")
    currency = data.get("currency") or ""
    if currency:
        currency = _currency(currency)
    return PlanRequest(
        start=start,
        end=end,
        teams=_teams(data),
        gpu=_text(data.get("gpu") or "", "gpu"),
        horizon_months=horizon,
        growth=tuple(growth) if isinstance(growth, list) else growth,
        scenario=_choice(data.get("scenario", "base"), "scenario", SCENARIOS),
        trials=validate_trials(data.get("trials", DEFAULT_TRIALS)),
        seed=_seed(data.get("seed", DEFAULT_SEED)),
        currency=currency,
        study=study,
        series=_choice(data.get("series", "auto"), "series", SERIES),
        name=_text(data.get("name") or "", "name", MAX_NAME_LENGTH),
        providers=_names(data, "providers"),
        market=_choice(data.get("market", "bills"), "market", MARKETS),
        migration=_migration(data.get("migration")),
        lead_time_months=_lead_time(data.get("lead_time_months", DEFAULT_LEAD_TIME_MONTHS)),
        stated=tuple(sorted(data.get("stated") or (set(data) - {"save", "stated"}))),
    )


def _period(data: dict) -> tuple[dt.date, dt.date]:
    """[from, to) as given, or from ``lookback_days``: the last N days before ``to`` (default the day
    after the bills' last charge), or every stored day ("all", at most MAX_LOOKBACK_DAYS)."""
    lookback = data.get("lookback_days")
    if lookback is None:
        return _date(data.get("from"), "from"), _date(data.get("to"), "to")
    lookback = _choice(str(lookback), "lookback_days", LOOKBACKS)
    if data.get("from"):
        raise PlanInputError("lookback_days", "give from or lookback_days, not both")
    first, last = stored_bill_days()
    if last is None:
        raise PlanInputError("from", "no bills stored: import some, or give from and to")
    end = _date(data["to"], "to") if data.get("to") else last + dt.timedelta(days=1)
    days = MAX_LOOKBACK_DAYS if lookback == "all" else int(lookback)
    start = end - dt.timedelta(days=days)
    if lookback == "all":
        start = max(start, first)
    return start, end


MAX_LOOKBACK_DAYS = 3 * 365  # the longest period a plan reads (demand.MAX_PERIOD_HOURS: 3 x 366 days)


def stored_bill_days() -> tuple[dt.date | None, dt.date | None]:
    """The first and last UTC days any stored spend row is charged in."""
    from billing.review.selectors import charge_range

    found = charge_range()
    if found is None:
        return None, None
    return found[0].astimezone(dt.UTC).date(), found[1].astimezone(dt.UTC).date()


def _lead_time(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_LEAD_TIME_MONTHS:
        raise PlanInputError(
            "lead_time_months",
            f"must be a whole number of months from 0 to {MAX_LEAD_TIME_MONTHS}, got {value!r}",
        )
    return value


def _migration(value: object) -> dict | None:
    if value is None:
        return None
    from planning.services.plan_move import migration_terms

    return {key: str(number) for key, number in migration_terms(value).items()}


def _date(value: object, name: str) -> dt.date:
    if isinstance(value, dt.date):
        return value
    if not isinstance(value, str) or not value:
        raise PlanInputError(name, "required, YYYY-MM-DD")
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        raise PlanInputError(name, f"must be YYYY-MM-DD, got {value[:20]!r}") from None


def _growth(value: object) -> object:
    """A number, a numeric string ("0.02"), a list, or a comma-separated list of yearly multipliers."""
    if isinstance(value, str):
        parts = [part.strip() for part in value.split(",")]
        try:
            numbers = [float(part) for part in parts]
        except ValueError:
            raise PlanInputError(
                "growth", f"must be a monthly rate or yearly multipliers, got {value[:40]!r}"
            ) from None
        return numbers[0] if len(numbers) == 1 and "," not in value else numbers
    if isinstance(value, list | tuple) and len(value) > 120:
        raise PlanInputError("growth", "at most 120 yearly multipliers")
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return value  # a list, or something validate_growth refuses with the field's name


def _teams(data: dict) -> tuple[str, ...]:
    return _names(data, "teams", data.get("teams", data.get("team", [])))


def _names(data: dict, name: str, value: object = None) -> tuple[str, ...]:
    names = data.get(name, []) if value is None else value
    if isinstance(names, str):
        names = [names] if names else []
    if not isinstance(names, list | tuple) or len(names) > MAX_TEAMS:
        raise PlanInputError(name, f"must be a list of at most {MAX_TEAMS} names")
    return tuple(sorted({_text(item, name) for item in names if item}))


def _text(value: object, name: str, limit: int = MAX_TEXT_LENGTH) -> str:
    if not isinstance(value, str) or len(value) > limit or "\x00" in value:
        raise PlanInputError(name, f"must be text of at most {limit} characters")
    return value.strip()


def _choice(value: object, name: str, options: tuple[str, ...]) -> str:
    if value not in options:
        raise PlanInputError(name, f"must be one of {', '.join(options)}, got {str(value)[:40]!r}")
    return str(value)


def _seed(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_SEED:
        raise PlanInputError("seed", f"must be a whole number 0-{MAX_SEED}, got {str(value)[:40]!r}")
    return value


def _currency(value: object) -> str:
    try:
        return currency_code(value, "currency")
    except ValueError as error:
        raise PlanInputError("currency", getattr(error, "message", str(error))) from None
