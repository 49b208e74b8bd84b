"""The plan after corporate tax, through the TCO engine's tax and depreciation (``tco.after_tax_flows``).

Owned servers: the study's after-tax buy flows (running costs and loan interest deducted, the tax
depreciation's shield, the sale at the residual taxed on its gain over book value) at utilization 0 and
1. They are affine in utilization, so per server and per used GPU-hour they scale to the plan's level
and hours exactly as ``options.owned_option`` scales the cash. Every other layer (commitments in force
and new, on-demand, spot) is rent: deducted when paid, as the TCO engine deducts rent, so it costs
(1 - tax) of its cash, except an upfront fee for a term over 12 months: US tax capitalises a prepayment
whose benefit runs past 12 months (Treas. Reg. 1.263(a)-4(f), the 12-month rule) and deducts it over the
term, so ``deductions`` gives the months in which each layer's cash is deducted (a 1-year term's fee,
within the rule, is deducted when paid).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from decimal import Decimal

import numpy as np

from planning.engine.options import OwnedOption, owned_option
from planning.engine.tranches import Tranche
from procurement.costing.tco import after_tax_flows, present_value, tax_depreciation
from procurement.costing.values import HOURS_PER_MONTH


@dataclass(frozen=True)
class AfterTax:
    tax_rate: Decimal
    monthly: tuple[Decimal, ...]  # months 0..last paid month
    npv: Decimal
    depreciation_tax_shield: Decimal  # undiscounted, the owned servers'

    @property
    def total(self) -> Decimal:
        return sum(self.monthly, Decimal(0))


def owned_after_tax_flows(
    owned: OwnedOption, *, servers: int, used_gpu_hours: np.ndarray, tax_rate: Decimal
) -> tuple[np.ndarray, Decimal]:
    """Months 0..H of ``servers`` owned servers serving ``used_gpu_hours`` (per month) after tax, and
    their undiscounted depreciation shield."""
    study = replace(owned.study, tax_rate=tax_rate)
    at_zero = after_tax_flows(replace(study, utilization=Decimal(0)))[0]
    at_full = after_tax_flows(replace(study, utilization=Decimal(1)))[0]
    fleet = Decimal(study.buy.servers)
    fleet_gpu_hours = fleet * study.buy.gpus_per_server * HOURS_PER_MONTH
    fixed = np.array([float(flow / fleet) for flow in at_zero])
    variable = np.array(
        [float((full - zero) / fleet_gpu_hours) for zero, full in zip(at_zero, at_full, strict=True)]
    )
    variable[0] = 0.0
    shield = tax_rate * sum(tax_depreciation(study), Decimal(0)) * servers / fleet
    return servers * fixed + variable * used_gpu_hours, shield


def tranche_after_tax_flows(
    owned: OwnedOption, tranches: Sequence[Tranche], *, used_gpu_hours: np.ndarray, tax_rate: Decimal
) -> tuple[np.ndarray, Decimal]:
    """As owned_after_tax_flows for servers bought in tranches (tranches.py): each tranche's after-tax
    buy flows over the months it is held, its purchase in the month it is paid; the cost that follows
    use as the plan's."""
    horizon = owned.horizon_months
    flows, _ = owned_after_tax_flows(owned, servers=0, used_gpu_hours=used_gpu_hours, tax_rate=tax_rate)
    shield = Decimal(0)
    for tranche in tranches:
        held = horizon - tranche.in_service_month + 1
        if held < 1:
            continue
        fixed, tranche_shield = owned_after_tax_flows(
            owned_option(owned.study, horizon_months=held),
            servers=tranche.servers,
            used_gpu_hours=np.zeros(held + 1),
            tax_rate=tax_rate,
        )
        flows[tranche.paid_month] += fixed[0]
        flows[tranche.in_service_month : tranche.in_service_month + held] += fixed[1:]
        shield += tranche_shield
    return flows, shield


def plan_after_tax(
    *,
    layer_flows: dict[str, np.ndarray],
    owned: OwnedOption | None,
    owned_servers: int,
    owned_gpu_hours: np.ndarray,
    tax_rate: Decimal,
    discount_rate_annual: Decimal,
    tranches: Sequence[Tranche] | None = None,
    deductions: dict[str, np.ndarray] | None = None,
) -> AfterTax:
    """The plan's cash by layer (planner.layer_monthly_costs) after tax; NPV at the plan's rate. With
    ``tranches`` the owned servers are bought in them, as the plan's cash buys them. A rented layer's
    cash is deducted as ``deductions`` (planner.layer_tax_deductions) says, else when paid."""
    months = next(iter(layer_flows.values())).size
    flows = np.zeros(months)
    shield = Decimal(0)
    for kind, cash in layer_flows.items():
        if kind == "owned" and owned is not None:
            used = owned_gpu_hours[: owned.horizon_months + 1]
            if tranches is not None:
                owned_flows, shield = tranche_after_tax_flows(
                    owned, tranches, used_gpu_hours=used, tax_rate=tax_rate
                )
            else:
                owned_flows, shield = owned_after_tax_flows(
                    owned, servers=owned_servers, used_gpu_hours=used, tax_rate=tax_rate
                )
            flows[: owned_flows.size] += owned_flows
        else:
            deducted = cash if deductions is None else deductions.get(kind, cash)
            flows += cash - deducted * float(tax_rate)
    monthly = [Decimal(repr(float(flow))) for flow in flows]
    return AfterTax(tax_rate, tuple(monthly), present_value(monthly, discount_rate_annual), shield)
