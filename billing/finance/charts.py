"""Charts of the showback, budget and anomaly sections (gpuledger/charts.py: server-side SVG)."""

from __future__ import annotations

from billing.finance.allocation import UNALLOCATED
from gpuledger.charts import stacked_bar_chart


def allocation_chart(allocation: dict, currency: str) -> str:
    teams = allocation["teams"]
    names = [t["team"] for t in teams] + ([UNALLOCATED] if float(allocation["unallocated_cost"]) else [])
    extra = [float(allocation["unallocated_cost"])] if len(names) > len(teams) else []
    series = {
        "direct": [float(t["direct_cost"]) for t in teams] + [0.0] * len(extra),
        "shared (allocated)": [float(t["allocated_shared_cost"]) for t in teams] + [0.0] * len(extra),
        "idle (allocated)": [float(t["allocated_idle_cost"]) for t in teams] + [0.0] * len(extra),
        "unallocated": [0.0] * len(teams) + extra,
    }
    return stacked_bar_chart(names, series, unit=currency, title=f"Showback by team ({allocation['rule']})")


def budget_chart(states: list[dict]) -> str:
    """Burn, then the rest of the forecast, per budget; the tick is the budget."""
    labels = [f"{s['team']} {s['month']} ({s['currency']})" for s in states]
    burn = [float(s["burn"]) for s in states]
    rest = [max(float(s["forecast"]) - float(s["burn"]), 0.0) for s in states]
    return stacked_bar_chart(
        labels,
        {"burn": burn, "forecast to month end": rest},
        unit="",
        title="Budgets: burn and forecast against the budget (tick)",
        reference_lines={"budget": [float(s["amount"]) for s in states]},
    )


def anomaly_chart(anomalies: dict, currency: str) -> str:
    items = anomalies["items"][:20]
    labels = [f"{a['day']} {a['team']} {a['service']}" for a in items]
    return stacked_bar_chart(
        labels,
        {
            "baseline (28-day median)": [float(a["baseline"]) for a in items],
            "above baseline": [max(float(a["excess"]), 0.0) for a in items],
        },
        unit=currency,
        title="Anomalies: the day's spend against its baseline (tick: the day's spend)",
        reference_lines={"day's spend": [float(a["amount"]) for a in items]},
    )
