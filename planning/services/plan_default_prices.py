"""How much of a plan's saving rests on owned servers priced by the TCO defaults (GPUs x list price x
1.30, no quote): the project's rule is that a placeholder never silently decides an answer, and the
outside review found most of the demo's saving resting on such a price, flagged only on page 2.

The headline keeps the plan the engine found (a CFO sees the best answer the data allow), and says beside
the saving how much of it the default-priced servers bring and that a quote is needed: the saving of the
same fleets planned without owning (commitments, on-demand and spot only) is the part that stands without
a quote. A fleet whose study gives buy.server_price is quoted and adds nothing here.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

ASSUMPTION = {
    "name": "default server prices in the headline",
    "value": "saving_on_default_prices: the saving less that of the same fleets planned without owned "
    "servers, for fleets whose server price is the TCO default (no quote); said beside the saving",
    "source": "placeholders never decide silently (project standard); a CFO signs the saving without them "
    "(saving_without_default_prices) until a quote (study.buy.server_price) replaces the default",
}


def server_price_quoted(study: dict | None, study_for_fleet: bool) -> bool:
    """Whether the fleet's owned server is priced by the request's study (a quote), not the defaults."""
    buy = (study or {}).get("buy") if study_for_fleet else None
    return isinstance(buy, dict) and bool(buy.get("server_price"))


def saving_on_default_price(plan: dict, without_owned: dict) -> Decimal:
    """The fleet's saving that its default-priced owned servers bring: its cost planned without owning
    less its cost with them (both cash over the horizon, against the same status quo)."""
    return Decimal(without_owned["total_cost"]) - Decimal(plan["total_cost"])


def headline_fields(plans: list[dict], savings: str | None) -> dict[str, Any]:
    """The headline's ``saving_on_default_prices`` (summed over fleets), ``saving_without_default_prices``
    and ``default_priced_fleets`` (fleets owning default-priced servers)."""
    fleets = [plan for plan in plans if plan.get("saving_on_default_prices") is not None]
    if not fleets or savings in (None, ""):
        return {
            "saving_on_default_prices": "0.00",
            "saving_without_default_prices": savings,
            "default_priced_fleets": [],
        }
    rests = sum((Decimal(plan["saving_on_default_prices"]) for plan in fleets), Decimal(0))
    return {
        "saving_on_default_prices": str(rests),
        "saving_without_default_prices": str(Decimal(savings) - rests),
        "default_priced_fleets": [plan["fleet"] for plan in fleets],
    }


def default_price_sentence(result: dict) -> str:
    """The headline's words beside the saving: none when no saving rests on a default price."""
    rests = Decimal(result.get("saving_on_default_prices") or 0)
    if rests <= 0:
        return ""
    currency = result["currency"]
    fleets = ", ".join(result["default_priced_fleets"])
    return (
        f" Of this, {rests:,.2f} {currency} rests on owned servers priced by default (GPUs x list price "
        f"x 1.30, no quote) in {fleets}; get a server quote (study.buy.server_price) before signing; "
        f"without them the plan saves {Decimal(result['saving_without_default_prices']):,.2f} {currency}."
    )
