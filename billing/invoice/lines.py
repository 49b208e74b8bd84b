"""The invoice view (issue 28): what each provider billed per billing period, line by line, so that the
spend review ties to the invoice. Plain Python over grouped sums (invoice/selectors.py reads them).

Per provider, billing period and billing currency (an invoice is in its own currency: nothing is
converted here), the lines are the FOCUS charge categories, each its own line: usage, purchases (upfront
and recurring commitment fees: billed when bought, EffectiveCost 0 because the usage lines amortize
them), taxes, credits and discounts, refunds (CUR's Refund lines, Azure's Refund charge type, and
FOCUS's negative Usage, Purchase or Tax charges: FOCUS has no refund column, imports/focus.py), adjustments; and
corrections (FOCUS ChargeClass = Correction) as their own line whatever their category. Billed total =
the invoice; effective total = what the spend review counts for the same rows (amortized).

Billing period: FOCUS BillingPeriodStart (CUR bill_billing_period_start_date); a row without one (a
Cost Explorer pull) is in the billing period of its charge month. A row charged in an earlier billing
period than the one that bills it corrects a closed period: each is flagged in `closed_period_corrections`
with the period it corrects, since the review (which sums by charge period) counts it in that earlier
month while the invoice counts it now.
"""

from __future__ import annotations

from collections import defaultdict
from decimal import Decimal

from procurement.costing.values import round_money

LINES = (
    ("usage", "Usage"),
    ("purchase", "Purchases (upfront and recurring commitment fees)"),
    ("tax", "Taxes"),
    ("credit", "Credits and discounts"),
    ("refund", "Refunds"),
    ("adjustment", "Adjustments"),
    ("correction", "Corrections (ChargeClass Correction)"),
)


def _money(value: Decimal, currency: str) -> str:
    return str(round_money(value, currency))


def invoice_view(groups: list[dict]) -> dict:
    """`groups`: one dict per (provider, billing_period 'YYYY-MM', charge_month 'YYYY-MM', currency,
    charge_category, is_correction, is_refund) with `billed` and `effective` (Decimal) sums and `rows`."""
    periods: dict[tuple, dict] = {}
    corrections: dict[tuple, dict] = defaultdict(
        lambda: {"billed": Decimal(0), "effective": Decimal(0), "rows": 0}
    )
    for group in groups:
        key = (group["provider"], group["billing_period"], group["currency"])
        period = periods.setdefault(key, {name: [Decimal(0), Decimal(0)] for name, _ in LINES})
        line = (
            "correction"
            if group["is_correction"]
            else "refund"
            if group.get("is_refund")
            else group["charge_category"]
        )
        period[line][0] += group["billed"]
        period[line][1] += group["effective"]
        if group["charge_month"] < group["billing_period"]:
            flagged = corrections[(*key, group["charge_month"])]
            flagged["billed"] += group["billed"]
            flagged["effective"] += group["effective"]
            flagged["rows"] += group["rows"]
    invoices = []
    for (provider, billing_period, currency), sums in sorted(periods.items()):
        lines = [
            {
                "line": name,
                "label": label,
                "billed_cost": _money(sums[name][0], currency),
                "effective_cost": _money(sums[name][1], currency),
            }
            for name, label in LINES
            if sums[name][0] or sums[name][1]
        ]
        invoices.append(
            {
                "provider": provider,
                "billing_period": billing_period,
                "currency": currency,
                "lines": lines,
                "billed_total": _money(sum((s[0] for s in sums.values()), Decimal(0)), currency),
                "effective_total": _money(sum((s[1] for s in sums.values()), Decimal(0)), currency),
            }
        )
    flagged = [
        {
            "provider": provider,
            "billing_period": billing_period,
            "corrects_period": corrected,
            "currency": currency,
            "rows": sums["rows"],
            "billed_cost": _money(sums["billed"], currency),
            "effective_cost": _money(sums["effective"], currency),
        }
        for (provider, billing_period, currency, corrected), sums in sorted(corrections.items())
    ]
    return {"invoices": invoices, "closed_period_corrections": flagged}
