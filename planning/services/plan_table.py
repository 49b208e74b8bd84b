"""A capacity plan result as the command's plain-text table (money with thousands separators)."""

from __future__ import annotations

from decimal import Decimal


def _money(value, currency: str) -> str:
    return "—" if value in (None, "") else f"{Decimal(value):,.2f} {currency}"


def plan_table(result: dict) -> str:
    currency, demand = result["currency"], result["demand"]
    scope = result["scope"]
    teams = ", ".join(scope["teams"]) or "every team"
    pct = demand["percentiles"]
    lines = [
        f"{result['name']} ({currency})",
        f"history {scope['from']} to {scope['to']}, {teams}, {scope['gpu']}: {demand['series_used']} GPUs, "
        f"{demand['covered_hours']:,} of {demand['total_hours']:,} hours covered; P10 {pct['p10']:,.1f}, "
        f"P50 {pct['p50']:,.1f}, P90 {pct['p90']:,.1f}, peak {pct['peak']:,.1f} GPUs",
        "",
        result["recommendation"],
        "",
        f"{'layer':<14}{'GPUs':>8}{'GPU-hours':>16}{'share':>9}{'cost':>22}  fleet (priced at)",
    ]
    for layer in result["layers"]:
        cost = sum((Decimal(v) for v in layer.get("cost_by_year") or []), Decimal(0))
        lines.append(
            f"{layer['kind']:<14}{layer['gpus']:>8,}{float(layer['hours_served']):>16,.0f}"
            f"{float(layer['share_of_demand']) * 100:>8.1f}%{_money(cost, currency):>22}  {layer.get('fleet', '')}"
        )
    if result.get("commitments_in_force"):
        lines += ["", "commitments in force (supply already bought):"]
        lines += [
            f"  {item['commitment_id']}: {item['gpus']:g} GPUs at {item['rate_per_gpu_hour']} {currency}/GPU-h, "
            f"ends {item['ends']} ({item['fleet']})"
            for item in result["commitments_in_force"]
        ]
    if result.get("renewals"):
        lines += ["", "renewals to decide:"]
        lines += [
            f"  {item['commitment_id']} ({item['fleet']}): {item['decide']}" for item in result["renewals"]
        ]
    if result.get("missing_prices"):
        lines += ["", "missing prices:"]
        lines += [
            f"  {item['price']} of {item['fleet']}: {item['what']}; {item['how']}"
            for item in result["missing_prices"]
        ]
    lines += [
        "",
        f"total cost over {result['horizon_months']} months: {_money(result.get('total_cost'), currency)}",
        f"NPV: {_money(result.get('npv'), currency)}",
        f"P50 / P90 total cost: {_money(result.get('p50_total_cost'), currency)} / "
        f"{_money(result.get('p90_total_cost'), currency)} ({result['trials']:,} trials, seed {result['seed']})",
        f"status quo: {_money(result.get('status_quo_cost'), currency)}",
        f"savings vs status quo: {_money(result.get('savings_vs_status_quo'), currency)}",
        f"break-even month: {result.get('break_even_month') or 'never'}",
        "",
        "prices:",
    ]
    for price in result["prices"]:
        observed = f", observed {price['observed_at'][:10]}" if price.get("observed_at") else ""
        stale = ", STALE" if price.get("stale") else ""
        lines.append(
            f"  {price['kind']:<13} {price['price_per_gpu_hour']:>12} {currency}/GPU-h  "
            f"{price['offer'] or price['source']}{observed} ({price['quality']}{stale})"
        )
    sensitivity = result.get("sensitivity") or {}
    if sensitivity.get("rows"):
        lines.append(
            f"sensitivity of the {sensitivity.get('metric', 'npv')} (base {_money(sensitivity['base'], currency)}):"
        )
        for row in sensitivity["rows"]:
            lines.append(
                f"  {row['driver']:<18} low {_money(row['low'], currency):>20}   high {_money(row['high'], currency):>20}"
            )
    return "\n".join(lines)
