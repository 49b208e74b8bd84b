"""One-at-a-time sensitivity of a capacity plan: each driver moved -20% and +20%, for a tornado chart.

The pattern of procurement/costing/tco_sensitivity.py, on the plan's NPV:
- growth: every year's demand multiplier x (1 -/+ 20%), the plan re-optimized;
- purchase_price: the study's server price x (1 -/+ 20%), owned servers re-costed by the TCO engine,
  the plan re-optimized;
- rent_price: on-demand, spot and commitment prices x (1 -/+ 20%) (one rent market), re-optimized;
- discount_rate: the study's rate x (1 -/+ 20%), re-optimized;
- owned_utilization: the plan held as chosen, the GPU-hours its owned servers deliver x (1 -/+ 20%)
  (capped at their hours and at the demand above them); hours they do not deliver are bought on
  demand, hours they deliver more displace on-demand (firm) GPU-hours. It measures the risk of the
  owned decision if the servers are used less, or more, than the history says.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from procurement.planning.plan_model import PlanInputs, SensitivityRow

DEFAULT_SPREAD = Decimal("0.20")
DRIVERS = ("growth", "purchase_price", "rent_price", "discount_rate", "owned_utilization")


def plan_sensitivity(inputs: PlanInputs, *, spread: Decimal = DEFAULT_SPREAD) -> tuple[SensitivityRow, ...]:
    """Rows widest swing first (the tornado's order); a driver that does not apply (no owned option for
    purchase_price and owned_utilization) is left out."""
    raise NotImplementedError


def sensitivity_report(
    rows: tuple[SensitivityRow, ...], *, currency: str, base_npv: Decimal
) -> dict[str, Any]:
    """{"metric": "npv", "spread", "base", "rows": [{driver, low, high, swing, low_total_cost,
    high_total_cost, note}]} with money as strings rounded to the currency's minor unit."""
    raise NotImplementedError
