"""The rent-or-buy study as a form of fields: each field maps to one path of the study document
(docs/tco-spec.md), so the form, the YAML textarea, the API and ``manage.py tco`` share one schema
and one validator (procurement.costing.tco_spec).

People type money with thousands separators ("300,000") and shares as percentages ("80" for 80%);
the form turns them into the document's plain numbers and back. Every error is listed at once,
next to its field: the form's own checks first, then every engine error
(``procurement.services.tco.study_errors``) mapped from its path to its field.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from django import forms

from procurement.costing.tco_spec import (
    DEPRECIATION_METHODS,
    FINANCING_KINDS,
    RENT_PRICING_MODELS,
)


@dataclass(frozen=True)
class FieldSpec:
    name: str  # the form field
    path: str  # the study document's path, dots between sections
    label: str
    kind: str  # money, percent, number, integer, text, choice, bool
    help: str = ""
    required: bool = False
    choices: tuple[str, ...] = ()
    group: str = "study"


FIELDS: tuple[FieldSpec, ...] = (
    FieldSpec("name", "name", "Study name", "text", required=True),
    FieldSpec("currency", "currency", "Currency", "text", "ISO 4217, e.g. USD", required=True),
    FieldSpec(
        "utilization",
        "utilization",
        "Utilization",
        "percent",
        "% of hours the GPUs do useful work",
        required=True,
    ),
    FieldSpec("horizon_months", "horizon_months", "Horizon (months)", "integer", "default 36"),
    FieldSpec(
        "discount_rate_annual", "discount_rate_annual", "Discount rate (% a year)", "percent", "default 8%"
    ),
    FieldSpec(
        "gpu", "buy.gpu", "GPU model", "text", "catalog slug, e.g. h100-sxm5-80gb", required=True, group="buy"
    ),
    FieldSpec("gpu_tdp_w", "buy.gpu_tdp_w", "GPU TDP (W)", "number", "blank: the catalog's", group="buy"),
    FieldSpec(
        "gpu_list_price", "buy.gpu_list_price", "GPU list price", "money", "blank: the catalog's", group="buy"
    ),
    FieldSpec(
        "server_uplift",
        "buy.server_uplift",
        "Server uplift over GPU prices",
        "percent",
        "used without a server price; default 30%",
        group="buy",
    ),
    FieldSpec("servers", "buy.servers", "Servers", "integer", "default 1", group="buy"),
    FieldSpec(
        "gpus_per_server", "buy.gpus_per_server", "GPUs per server", "integer", "default 8", group="buy"
    ),
    FieldSpec(
        "server_price",
        "buy.server_price",
        "Server price",
        "money",
        "per server; blank: GPUs x list price x 1.30",
        group="buy",
    ),
    FieldSpec(
        "install_cost", "buy.install_cost", "Installation", "money", "per server, month 0", group="buy"
    ),
    FieldSpec(
        "server_overhead_kw",
        "buy.server_overhead_kw",
        "Server overhead (kW)",
        "number",
        "on top of the GPUs' TDP; default 0.575 per GPU",
        group="buy",
    ),
    FieldSpec(
        "average_load",
        "buy.average_load",
        "Average load",
        "percent",
        "% of nameplate power; default 70%",
        group="buy",
    ),
    FieldSpec("pue", "buy.pue", "PUE", "number", "default 1.58", group="buy"),
    FieldSpec(
        "electricity_per_kwh",
        "buy.electricity_per_kwh",
        "Electricity per kWh",
        "money",
        "default 0.10 USD",
        group="buy",
    ),
    FieldSpec(
        "colocation_per_kw_month",
        "buy.colocation_per_kw_month",
        "Colocation per kW-month",
        "money",
        "default 184 USD",
        group="buy",
    ),
    FieldSpec(
        "maintenance_pct_per_year",
        "buy.maintenance_pct_per_year",
        "Maintenance (% of price a year)",
        "percent",
        "default 10%",
        group="buy",
    ),
    FieldSpec(
        "ops_fte", "buy.ops_fte", "Operations staff (FTE)", "number", "default 0.05 per server", group="buy"
    ),
    FieldSpec(
        "fte_cost_per_year",
        "buy.fte_cost_per_year",
        "Cost per FTE a year",
        "money",
        "default 150,000 USD",
        group="buy",
    ),
    FieldSpec(
        "residual_pct",
        "buy.residual_pct",
        "Residual value (% of price)",
        "percent",
        "default 20%",
        group="buy",
    ),
    FieldSpec(
        "depreciation_years",
        "buy.depreciation_years",
        "Depreciation life (years)",
        "integer",
        "default 5",
        group="buy",
    ),
    FieldSpec(
        "pricing_model",
        "rent.pricing_model",
        "Rent pricing model",
        "choice",
        required=True,
        choices=RENT_PRICING_MODELS,
        group="rent",
    ),
    FieldSpec(
        "price_per_gpu_hour",
        "rent.price_per_gpu_hour",
        "Rent price per GPU-hour",
        "money",
        "or give an offer below",
        group="rent",
    ),
    FieldSpec("offer_provider", "rent.offer.provider", "Offer: provider", "text", "e.g. aws", group="rent"),
    FieldSpec(
        "offer_instance_type",
        "rent.offer.instance_type",
        "Offer: instance type",
        "text",
        "e.g. p5.48xlarge",
        group="rent",
    ),
    FieldSpec("offer_region", "rent.offer.region", "Offer: region", "text", "e.g. us-east-1", group="rent"),
    FieldSpec("spot_fraction", "rent.spot_fraction", "Spot share (spot_mix)", "percent", group="rent"),
    FieldSpec(
        "spot_price_per_gpu_hour",
        "rent.spot_price_per_gpu_hour",
        "Spot price per GPU-hour (spot_mix)",
        "money",
        group="rent",
    ),
    FieldSpec(
        "price_decline_per_year",
        "rent.price_decline_per_year",
        "Rent price decline (% a year)",
        "percent",
        "default 0",
        group="rent",
    ),
    FieldSpec(
        "reserved_model",
        "rent.reserved_alternative.pricing_model",
        "Reserved alternative: term",
        "choice",
        choices=("", "reserved_1y", "reserved_3y", "savings_plan_1y", "savings_plan_3y"),
        group="rent",
    ),
    FieldSpec(
        "reserved_price",
        "rent.reserved_alternative.price_per_gpu_hour",
        "Reserved alternative: quoted price per GPU-hour",
        "money",
        "blank: the offer's stored price",
        group="rent",
    ),
    FieldSpec(
        "reserved_payment",
        "rent.reserved_alternative.payment_option",
        "Reserved alternative: payment",
        "choice",
        "blank: the cheapest stored one",
        choices=("", "no_upfront", "partial_upfront", "all_upfront"),
        group="rent",
    ),
    FieldSpec(
        "tax_rate", "tax_rate", "Corporate tax rate", "percent", "blank: no after-tax view", group="cfo"
    ),
    FieldSpec(
        "depreciation_method",
        "buy.depreciation_method",
        "Tax depreciation",
        "choice",
        choices=("",) + DEPRECIATION_METHODS,
        group="cfo",
    ),
    FieldSpec(
        "utilization_ramp_months",
        "utilization_ramp_months",
        "Utilization ramp (months)",
        "integer",
        "months to steady state; default 0",
        group="cfo",
    ),
    FieldSpec(
        "financing_kind",
        "buy.financing.kind",
        "Financing",
        "choice",
        choices=("",) + FINANCING_KINDS,
        group="cfo",
    ),
    FieldSpec(
        "financing_rate", "buy.financing.rate_annual", "Financing rate (% a year)", "percent", group="cfo"
    ),
    FieldSpec(
        "financing_term",
        "buy.financing.term_months",
        "Financing term (months)",
        "integer",
        "a lease runs for the horizon",
        group="cfo",
    ),
    FieldSpec(
        "network_capex_per_server",
        "buy.network_capex_per_server",
        "Network capex per server",
        "money",
        group="cfo",
    ),
    FieldSpec(
        "storage_capex_per_server",
        "buy.storage_capex_per_server",
        "Storage capex per server",
        "money",
        group="cfo",
    ),
    FieldSpec(
        "annual_failure_rate", "buy.annual_failure_rate", "Servers failing a year", "percent", group="cfo"
    ),
    FieldSpec("repair_days", "buy.repair_days", "Days to repair", "number", "default 14", group="cfo"),
    FieldSpec("spare_servers", "buy.spare_servers", "Spare servers", "integer", group="cfo"),
    FieldSpec(
        "energy_follows_utilization",
        "buy.energy_follows_utilization",
        "Energy follows utilization",
        "bool",
        group="cfo",
    ),
    FieldSpec(
        "idle_load",
        "buy.idle_load",
        "Idle load",
        "percent",
        "% of nameplate when idle; default 30%",
        group="cfo",
    ),
)
BY_NAME = {spec.name: spec for spec in FIELDS}
BY_PATH = {spec.path: spec.name for spec in FIELDS}
GROUPS = (("study", "Study"), ("buy", "Buy"), ("rent", "Rent"), ("cfo", "Optional: tax, financing, risks"))
MAX_TEXT = 200  # every text a request can set is bounded


def parse_number(text: str, *, percent: bool = False) -> Decimal:
    """ "300,000" -> 300000; "80" as a percentage -> 0.8. Raises ValueError with a message for a person."""
    cleaned = text.strip().replace(",", "").replace("\u00a0", "").replace(" ", "").removesuffix("%")
    try:
        number = Decimal(cleaned)
    except InvalidOperation:
        raise ValueError(f"enter a number, got {text!r}") from None
    if not number.is_finite():
        raise ValueError(f"enter a finite number, got {text!r}")
    return number / 100 if percent else number


def show_number(value: Any, kind: str) -> str:
    """A document value as a person types it: thousands separators for money, % for shares."""
    if value is None or value == "":
        return ""
    if kind in ("text", "choice"):
        return str(value)
    if kind == "bool":
        return "on" if value else ""
    number = Decimal(str(value))
    if kind == "percent":
        number *= 100
    if kind == "money":
        return f"{number.normalize():,f}"
    return f"{number.normalize():f}"


class TcoStudyForm(forms.Form):
    """Fields built from FIELDS; ``document()`` gives the study document of the cleaned data."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for spec in FIELDS:
            if spec.kind == "bool":
                field = forms.BooleanField(required=False)
            elif spec.kind == "choice":
                field = forms.ChoiceField(
                    choices=[(c, c or "—") for c in spec.choices], required=spec.required
                )
            else:
                field = forms.CharField(max_length=MAX_TEXT, required=spec.required, strip=True)
            field.label, field.help_text = spec.label, spec.help
            self.fields[spec.name] = field

    def clean(self):
        cleaned = super().clean()
        for spec in FIELDS:
            value = cleaned.get(spec.name)
            if spec.kind in ("money", "percent", "number", "integer") and value:
                try:
                    number = parse_number(value, percent=spec.kind == "percent")
                except ValueError as problem:
                    self.add_error(spec.name, str(problem))
                    continue
                if spec.kind == "integer" and number != number.to_integral_value():
                    self.add_error(spec.name, f"enter a whole number, got {value!r}")
                    continue
                cleaned[spec.name] = int(number) if spec.kind == "integer" else str(number)
        return cleaned

    def document(self) -> dict[str, Any]:
        """The study document: only fields that were filled in (blank means the documented default)."""
        document: dict[str, Any] = {"buy": {}, "rent": {}}
        for spec in FIELDS:
            value = self.cleaned_data.get(spec.name)
            if value is None or value is False or value == "":  # 0 is a value (refused by the engine)
                continue
            target = document
            *parents, leaf = spec.path.split(".")
            for key in parents:
                target = target.setdefault(key, {})
            target[leaf] = value
        return document


def initial_from_document(document: dict[str, Any]) -> dict[str, str]:
    """Form values of a stored study document (to edit or duplicate it)."""
    initial = {}
    for spec in FIELDS:
        value: Any = document
        for key in spec.path.split("."):
            value = value.get(key) if isinstance(value, dict) else None
        if value is not None:
            initial[spec.name] = value if spec.kind == "bool" else show_number(value, spec.kind)
    return initial


_PERCENT_WORDS = (
    ("greater than 0 and at most 1", "greater than 0% and at most 100%"),
    ("between 0 and 1", "between 0% and 100%"),
    ("below 1", "below 100%"),
)


def message_for_field(name: str | None, message: str) -> str:
    """An engine message in the form's units: a share the form takes as a percentage reads as one
    ("must be between 0% and 100%, got 150%", not "... 1, got 1.5")."""
    if name is None or BY_NAME[name].kind != "percent":
        return message
    for engine, person in _PERCENT_WORDS:
        message = message.replace(engine, person)
    found = re.search(r"got (-?\d+(?:\.\d+)?)$", message)
    if found:
        percent = (Decimal(found.group(1)) * 100).normalize()
        message = message[: found.start(1)] + f"{percent:f}%"
    return message


def field_for_path(path: str) -> str | None:
    """The form field an engine error path belongs to: the path itself, or its nearest parent
    (``rent.offer`` -> the offer's provider field, ``buy.financing`` -> the financing kind)."""
    if path in BY_PATH:
        return BY_PATH[path]
    for spec in FIELDS:
        if spec.path.startswith(path + "."):
            return spec.name
    return None
