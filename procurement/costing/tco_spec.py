"""The buy-versus-rent study file: typed spec, defaults with sources, and validation by field path.

A study arrives as YAML or JSON (docs/tco-spec.md). Parsing resolves everything the cash model
needs into plain numbers: the GPU's TDP and list price (through a lookup the caller supplies:
the Django shell uses ``GpuModel``, tests use the bundled CSV), the server price, and the rent
price of an offer (through another lookup, converted with explicit FX rates). The resolved study
is what gets stored, so a report shows the same numbers next month whatever prices do.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, replace
from decimal import Decimal
from typing import Any, Protocol

from procurement.costing.gpu_catalog import GpuEconomics
from procurement.costing.values import (
    CostInputError,
    bounded_int,
    convert_currency,
    currency_code,
    fraction,
    non_negative,
    positive,
    positive_int,
    to_decimal,
)

RENT_PRICING_MODELS = (
    "on_demand",
    "spot",
    "spot_mix",
    "reserved_1y",
    "reserved_3y",
    "savings_plan_1y",
    "savings_plan_3y",
)
RENT_REPORT_ONLY_FIELDS = ("price_stale", "price_stale_after_hours")
COMMITTED_PRICING_MODELS = frozenset({"reserved_1y", "reserved_3y", "savings_plan_1y", "savings_plan_3y"})

# The financing term's bound (the other sizes a study can set are bounded below).
MAX_FINANCING_TERM_MONTHS = 480

# Defaults, each sourced or marked as an assumption in docs/cost-model.md ("Buy versus rent").
DEFAULT_HORIZON_MONTHS = 36
# Bounds on the sizes a study sets (the engine's work grows with the horizon): 30 years of months,
# at most 64 GPUs in a server, a fleet of 100,000 servers, 30 years of depreciation.
MAX_HORIZON_MONTHS = 360
MAX_GPUS_PER_SERVER = 64
MAX_SERVERS = 100_000
MAX_DEPRECIATION_YEARS = 30
DEFAULT_DISCOUNT_RATE_ANNUAL = Decimal("0.08")
BUY_DEFAULTS: dict[str, Decimal | int] = {
    "servers": 1,
    "gpus_per_server": 8,
    "server_uplift": Decimal("0.30"),  # chassis, CPUs, RAM, NICs, storage over the GPUs' list price
    "install_cost": Decimal(0),
    "server_overhead_kw_per_gpu": Decimal("0.575"),  # DGX H100: 10.2 kW max - 8 x 0.7 kW GPUs = 4.6 kW / 8
    "average_load": Decimal("0.7"),
    "pue": Decimal("1.58"),  # Uptime Institute Global Data Center Survey 2023 average
    "maintenance_pct_per_year": Decimal("0.10"),
    "ops_fte_per_server": Decimal("0.05"),  # one administrator per 20 GPU servers
    "residual_pct": Decimal("0.20"),
    "depreciation_years": 5,
}
# Money defaults are USD figures: a study in another currency must state them.
BUY_USD_DEFAULTS: dict[str, Decimal] = {
    "electricity_per_kwh": Decimal("0.10"),
    "colocation_per_kw_month": Decimal("184"),  # CBRE North America data center trends, 2024
    "fte_cost_per_year": Decimal("150000"),
}

GpuLookup = Callable[[str], GpuEconomics | None]


@dataclass(frozen=True)
class OfferRef:
    provider: str
    instance_type: str
    region: str

    def label(self) -> str:
        return f"{self.provider}/{self.instance_type}/{self.region}"


@dataclass(frozen=True)
class RentPrice:
    """A current price an offer lookup returns: per GPU-hour, in its own currency, with its age."""

    price_per_gpu_hour: Decimal
    currency: str
    observed_at: str | None = None  # ISO 8601
    source: str = ""
    stale: bool = False  # older than twice its refresh schedule (docs/provider-prices.md)
    stale_after_hours: float | None = None
    # A stored price: its id, and for a commitment its payment option, kind and upfront fee per GPU
    # (in `currency`), so that a report can say which commitment it compared against.
    price_id: int | None = None
    payment_option: str = ""
    commitment_kind: str = ""
    upfront_per_gpu: Decimal | None = None


class UnknownOffer(LookupError):
    """Raised by an offer lookup when the offer does not exist at all (as opposed to having no current
    price of the asked pricing model, which the lookup reports by returning None)."""

    def __init__(self, part: str, message: str):
        self.part = part  # "provider", "instance_type" or "region": the field that names nothing known
        self.message = message
        super().__init__(message)


class OfferLookup(Protocol):
    """The current price of an offer in a pricing model (None: no such price), narrowed to a payment
    option (all upfront, partial, none) when one is given."""

    def __call__(
        self, offer: OfferRef, pricing_model: str, *, payment_option: str = ""
    ) -> RentPrice | None: ...


@dataclass(frozen=True)
class FinancingSpec:
    """The purchase paid over time instead of cash at month 0 (docs/cost-model.md, "Financing")."""

    kind: str  # "loan": the buyer owns the servers and pays an annuity; "lease": the lessor owns them
    rate_annual: Decimal
    term_months: int


@dataclass(frozen=True)
class ReservedAlternative:
    """A committed rent priced beside the study's rent: every hour paid, whatever the utilization."""

    pricing_model: str
    price_per_gpu_hour: Decimal
    price_source: str = ""
    price_observed_at: str | None = None
    price_id: int | None = None  # the stored commitment price read (None: a quoted rate)
    payment_option: str = ""
    commitment_kind: str = ""
    upfront_per_gpu: Decimal | None = None  # in the study currency


@dataclass(frozen=True)
class BuySpec:
    servers: int
    gpus_per_server: int
    gpu: str
    gpu_tdp_w: Decimal
    gpu_list_price: Decimal | None
    server_price: Decimal
    install_cost: Decimal  # per server
    server_overhead_kw: Decimal  # per server, on top of the GPUs' TDP
    average_load: Decimal
    pue: Decimal
    electricity_per_kwh: Decimal
    colocation_per_kw_month: Decimal
    maintenance_pct_per_year: Decimal
    ops_fte: Decimal
    fte_cost_per_year: Decimal
    residual_pct: Decimal
    depreciation_years: int
    # Optional CFO inputs (docs/cost-model.md, "Optional inputs"): None means "not given", so a study
    # stored before they existed keeps its resolved inputs (and its fingerprint) unchanged.
    depreciation_method: str | None = None  # tax depreciation: straight_line (default) or macrs_5
    network_capex_per_server: Decimal | None = None
    storage_capex_per_server: Decimal | None = None
    annual_failure_rate: Decimal | None = None
    repair_days: Decimal | None = None
    spare_servers: int | None = None
    energy_follows_utilization: bool | None = None
    idle_load: Decimal | None = None
    financing: FinancingSpec | None = None


@dataclass(frozen=True)
class RentSpec:
    pricing_model: str
    price_per_gpu_hour: Decimal  # on-demand share of a spot_mix, else the one price
    spot_price_per_gpu_hour: Decimal | None = None
    spot_fraction: Decimal | None = None
    offer: OfferRef | None = None
    price_observed_at: str | None = None
    price_source: str = ""
    # Freshness of an offer's price when the study was evaluated: reported, but not a resolved input (a
    # price that merely ages must not make a recomputation store a new study).
    price_stale: bool | None = None
    price_stale_after_hours: float | None = None
    price_decline_per_year: Decimal | None = None
    reserved_alternative: ReservedAlternative | None = None

    def blended_price_per_gpu_hour(self) -> Decimal:
        if self.pricing_model != "spot_mix":
            return self.price_per_gpu_hour
        assert self.spot_price_per_gpu_hour is not None and self.spot_fraction is not None
        return (
            1 - self.spot_fraction
        ) * self.price_per_gpu_hour + self.spot_fraction * self.spot_price_per_gpu_hour


@dataclass(frozen=True)
class TcoStudy:
    name: str
    horizon_months: int
    discount_rate_annual: Decimal
    currency: str
    utilization: Decimal
    buy: BuySpec
    rent: RentSpec
    tax_rate: Decimal | None = None
    utilization_ramp_months: int | None = None

    def as_dict(self) -> dict[str, Any]:
        """The resolved inputs as JSON-ready values (decimals as strings): what a stored study keeps.
        Optional inputs that were not given are left out, so older studies keep their fingerprint."""
        inputs = _jsonable(asdict(self))
        for key in RENT_REPORT_ONLY_FIELDS:
            inputs["rent"].pop(key)
        for section, keys in (
            (inputs, _OPTIONAL_STUDY),
            (inputs["buy"], _OPTIONAL_BUY),
            (inputs["rent"], _OPTIONAL_RENT),
        ):
            for key in keys:
                if section.get(key) is None:
                    section.pop(key, None)
        return inputs


_OPTIONAL_STUDY = ("tax_rate", "utilization_ramp_months")
_OPTIONAL_BUY = (
    "depreciation_method",
    "network_capex_per_server",
    "storage_capex_per_server",
    "annual_failure_rate",
    "repair_days",
    "spare_servers",
    "energy_follows_utilization",
    "idle_load",
    "financing",
)
_OPTIONAL_RENT = ("price_decline_per_year", "reserved_alternative")
DEPRECIATION_METHODS = ("straight_line", "macrs_5")
FINANCING_KINDS = ("loan", "lease")


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _jsonable(item) for key, item in value.items()}
    if isinstance(value, Decimal):
        return str(value)
    return value


class _Section:
    """One mapping of the study file; reads fields by name and reports them by full path."""

    def __init__(self, data: object, path: str):
        if not isinstance(data, Mapping):
            raise CostInputError(path or "study", f"must be a mapping of fields, got {type(data).__name__}")
        self.data = data
        self.path = path
        self.read: set[str] = set()

    def field(self, key: str) -> str:
        return f"{self.path}.{key}" if self.path else key

    def has(self, key: str) -> bool:
        return self.data.get(key) is not None

    def raw(self, key: str, default: object = None) -> Any:
        self.read.add(key)
        value = self.data.get(key)
        return default if value is None else value

    def require(self, key: str) -> Any:
        if not self.has(key):
            raise CostInputError(self.field(key), "is required")
        return self.raw(key)

    def get(self, key: str, check: Callable[[object, str], Any], default: object = None) -> Any:
        value = self.raw(key, default)
        if value is None:
            raise CostInputError(self.field(key), "is required")
        return check(value, self.field(key))

    def reject_unknown(self, allowed: set[str]) -> None:
        for key in self.data:
            if key not in allowed:
                hint = difflib.get_close_matches(str(key), sorted(allowed), n=1)
                suggestion = f" (did you mean {hint[0]!r}?)" if hint else ""
                raise CostInputError(self.field(str(key)), f"unknown field{suggestion}")


def _text(value: object, field: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise CostInputError(field, f"must be a non-empty text, got {value!r}")
    return value.strip()


_STUDY_FIELDS = {
    "name",
    "horizon_months",
    "discount_rate_annual",
    "currency",
    "utilization",
    "buy",
    "rent",
    *_OPTIONAL_STUDY,
}
_BUY_FIELDS = {
    "servers",
    "gpus_per_server",
    "gpu",
    "gpu_tdp_w",
    "gpu_list_price",
    "server_price",
    "server_uplift",
    "install_cost",
    "server_overhead_kw",
    "average_load",
    "pue",
    "electricity_per_kwh",
    "colocation_per_kw_month",
    "maintenance_pct_per_year",
    "ops_fte",
    "fte_cost_per_year",
    "residual_pct",
    "depreciation_years",
    *_OPTIONAL_BUY,
}
_RENT_FIELDS = {
    "pricing_model",
    "price_per_gpu_hour",
    "spot_price_per_gpu_hour",
    "spot_fraction",
    "offer",
    *_OPTIONAL_RENT,
}
_FINANCING_FIELDS = {"kind", "rate_annual", "term_months"}
_RESERVED_FIELDS = {"pricing_model", "price_per_gpu_hour", "payment_option"}
_PAYMENT_OPTIONS = ("no_upfront", "partial_upfront", "all_upfront")
_OFFER_FIELDS = {"provider", "instance_type", "region"}


def parse_tco_study(
    document: object,
    *,
    gpu_lookup: GpuLookup,
    offer_lookup: OfferLookup | None = None,
    fx_rates: Mapping[tuple[str, str], Decimal] | None = None,
) -> TcoStudy:
    """Validate a study document and resolve GPU figures and rent prices. Raises CostInputError."""
    study = _Section(document, "")
    study.reject_unknown(_STUDY_FIELDS)
    currency = study.get("currency", currency_code)
    rates = fx_rates or {}
    horizon = study.get("horizon_months", _bounded(positive_int, MAX_HORIZON_MONTHS), DEFAULT_HORIZON_MONTHS)
    buy = _parse_buy(_Section(study.require("buy"), "buy"), currency, gpu_lookup, rates, horizon)
    rent = _parse_rent(_Section(study.require("rent"), "rent"), currency, offer_lookup, rates)
    return TcoStudy(
        name=study.get("name", _text, "tco study"),
        horizon_months=horizon,
        discount_rate_annual=study.get("discount_rate_annual", non_negative, DEFAULT_DISCOUNT_RATE_ANNUAL),
        currency=currency,
        utilization=study.get("utilization", lambda v, f: fraction(v, f, allow_zero=False)),
        buy=buy,
        rent=rent,
        tax_rate=study.get("tax_rate", _tax_rate) if study.has("tax_rate") else None,
        utilization_ramp_months=(
            study.get("utilization_ramp_months", _bounded(_whole_months, horizon))
            if study.has("utilization_ramp_months")
            else None
        ),
    )


def _bounded(check: Callable[[object, str], int], maximum: int) -> Callable[[object, str], int]:
    def bounded(value: object, field: str) -> int:
        number = check(value, field)
        if number > maximum:
            raise CostInputError(field, f"must be at most {maximum:,}, got {number:,}")
        return number

    return bounded


def _tax_rate(value: object, field: str) -> Decimal:
    rate = fraction(value, field)
    if rate >= 1:
        raise CostInputError(field, f"must be below 1 (a share of profit), got {rate}")
    return rate


def _whole_months(value: object, field: str) -> int:
    number = to_decimal(value, field)
    if number != number.to_integral_value() or number < 0:
        raise CostInputError(field, f"must be a whole number of months, 0 or more, got {value!r}")
    return int(number)


def _optional(section: _Section, key: str, check: Callable[[object, str], Any]) -> Any:
    return section.get(key, check) if section.has(key) else None


def _boolean(value: object, field: str) -> bool:
    if not isinstance(value, bool):
        raise CostInputError(field, f"must be true or false, got {value!r}")
    return value


def _choice(options: tuple[str, ...]) -> Callable[[object, str], str]:
    def check(value: object, field: str) -> str:
        if value not in options:
            raise CostInputError(field, f"must be one of {', '.join(options)}, got {value!r}")
        return str(value)

    return check


def _parse_financing(section: _Section, horizon: int) -> FinancingSpec | None:
    if not section.has("financing"):
        return None
    financing = _Section(section.raw("financing"), section.field("financing"))
    financing.reject_unknown(_FINANCING_FIELDS)
    kind = financing.get("kind", _choice(FINANCING_KINDS))
    term = financing.get("term_months", _bounded(positive_int, MAX_FINANCING_TERM_MONTHS), horizon)
    if kind == "lease" and term != horizon:
        raise CostInputError(
            financing.field("term_months"),
            f"a lease must run for the study's horizon ({horizon} months), got {term}",
        )
    return FinancingSpec(kind=kind, rate_annual=financing.get("rate_annual", non_negative), term_months=term)


def _parse_buy_options(section: _Section, horizon: int) -> dict[str, Any]:
    return {
        "depreciation_method": _optional(section, "depreciation_method", _choice(DEPRECIATION_METHODS)),
        "network_capex_per_server": _optional(section, "network_capex_per_server", non_negative),
        "storage_capex_per_server": _optional(section, "storage_capex_per_server", non_negative),
        "annual_failure_rate": _optional(section, "annual_failure_rate", fraction),
        "repair_days": _optional(section, "repair_days", positive),
        "spare_servers": _optional(section, "spare_servers", _bounded(_non_negative_int, MAX_SERVERS)),
        "energy_follows_utilization": _optional(section, "energy_follows_utilization", _boolean),
        "idle_load": _optional(section, "idle_load", fraction),
        "financing": _parse_financing(section, horizon),
    }


def _non_negative_int(value: object, field: str) -> int:
    number = to_decimal(value, field)
    if number != number.to_integral_value() or number < 0:
        raise CostInputError(field, f"must be a whole number, 0 or more, got {value!r}")
    return int(number)


def _parse_buy(
    section: _Section,
    currency: str,
    gpu_lookup: GpuLookup,
    rates: Mapping[tuple[str, str], Decimal],
    horizon: int = DEFAULT_HORIZON_MONTHS,
) -> BuySpec:
    section.reject_unknown(_BUY_FIELDS)
    gpu = _lookup_gpu(section, gpu_lookup)
    servers = section.get("servers", _bounded(positive_int, MAX_SERVERS), BUY_DEFAULTS["servers"])
    gpus_per_server = section.get(
        "gpus_per_server", _bounded(positive_int, MAX_GPUS_PER_SERVER), BUY_DEFAULTS["gpus_per_server"]
    )
    list_price = _gpu_list_price(section, gpu, currency, rates)
    overhead_default = gpus_per_server * BUY_DEFAULTS["server_overhead_kw_per_gpu"]
    return BuySpec(
        servers=servers,
        gpus_per_server=gpus_per_server,
        gpu=gpu.slug,
        gpu_tdp_w=section.get("gpu_tdp_w", positive, gpu.tdp_w),
        gpu_list_price=list_price,
        server_price=_server_price(section, gpus_per_server, list_price, gpu.slug),
        install_cost=section.get("install_cost", non_negative, BUY_DEFAULTS["install_cost"]),
        server_overhead_kw=section.get("server_overhead_kw", non_negative, overhead_default),
        average_load=section.get("average_load", fraction, BUY_DEFAULTS["average_load"]),
        pue=section.get("pue", _pue, BUY_DEFAULTS["pue"]),
        electricity_per_kwh=_money_default(section, "electricity_per_kwh", currency),
        colocation_per_kw_month=_money_default(section, "colocation_per_kw_month", currency),
        maintenance_pct_per_year=section.get(
            "maintenance_pct_per_year", fraction, BUY_DEFAULTS["maintenance_pct_per_year"]
        ),
        ops_fte=section.get("ops_fte", non_negative, servers * BUY_DEFAULTS["ops_fte_per_server"]),
        fte_cost_per_year=_money_default(section, "fte_cost_per_year", currency),
        residual_pct=section.get("residual_pct", fraction, BUY_DEFAULTS["residual_pct"]),
        depreciation_years=section.get(
            "depreciation_years",
            lambda v, f: bounded_int(v, f, MAX_DEPRECIATION_YEARS),
            BUY_DEFAULTS["depreciation_years"],
        ),
        **_parse_buy_options(section, horizon),
    )


def _pue(value: object, field: str) -> Decimal:
    pue = positive(value, field)
    if pue < 1:
        raise CostInputError(field, f"a PUE is total facility power over IT power, so at least 1; got {pue}")
    return pue


def _lookup_gpu(section: _Section, gpu_lookup: GpuLookup) -> GpuEconomics:
    slug = section.get("gpu", _text)
    gpu = gpu_lookup(slug)
    if gpu is None:
        raise CostInputError(section.field("gpu"), f"unknown GPU model {slug!r}")
    return gpu


def _gpu_list_price(
    section: _Section, gpu: GpuEconomics, currency: str, rates: Mapping[tuple[str, str], Decimal]
) -> Decimal | None:
    """The per-GPU list price in the study's currency; converted only when the server price needs it."""
    if section.has("gpu_list_price"):
        return section.get("gpu_list_price", non_negative)
    if gpu.list_price is None or (section.has("server_price") and gpu.currency != currency):
        return None  # informational only when a server price is given: no FX rate needed
    return _to_study_currency(gpu.list_price, gpu.currency, currency, rates, needed_for=section.field("gpu"))


def _to_study_currency(
    amount: Decimal,
    from_currency: str,
    currency: str,
    rates: Mapping[tuple[str, str], Decimal],
    *,
    needed_for: str,
) -> Decimal:
    """Convert into the study's currency. A missing rate is the study's ``currency`` that cannot be used
    (the fix is to store a rate or pick another currency), so the error names ``currency`` and says which
    input needed the conversion."""
    try:
        return convert_currency(
            amount, from_currency=from_currency, to_currency=currency, rates=rates, field="currency"
        )
    except CostInputError as error:
        raise CostInputError("currency", f"{error.message} (needed for {needed_for})") from None


def _server_price(section: _Section, gpus_per_server: int, list_price: Decimal | None, slug: str) -> Decimal:
    uplift = section.get("server_uplift", non_negative, BUY_DEFAULTS["server_uplift"])
    if section.has("server_price"):
        return section.get("server_price", non_negative)
    if list_price is None:
        raise CostInputError(
            section.field("server_price"), f"is required: no list price is known for {slug!r}"
        )
    return gpus_per_server * list_price * (1 + uplift)


def _money_default(section: _Section, key: str, currency: str) -> Decimal:
    if section.has(key) or currency == "USD":
        return section.get(key, non_negative, BUY_USD_DEFAULTS[key])
    raise CostInputError(
        section.field(key), f"is required for a {currency} study (the default is a USD figure)"
    )


def _parse_rent(
    section: _Section,
    currency: str,
    offer_lookup: OfferLookup | None,
    rates: Mapping[tuple[str, str], Decimal],
) -> RentSpec:
    section.reject_unknown(_RENT_FIELDS)
    base = _parse_rent_price(section, currency, offer_lookup, rates)
    return replace(
        base,
        price_decline_per_year=_optional(section, "price_decline_per_year", _decline),
        reserved_alternative=_parse_reserved(section, base, currency, offer_lookup, rates),
    )


def _parse_rent_price(
    section: _Section,
    currency: str,
    offer_lookup: OfferLookup | None,
    rates: Mapping[tuple[str, str], Decimal],
) -> RentSpec:
    model = section.get("pricing_model", _pricing_model, "on_demand")
    if section.has("offer") == section.has("price_per_gpu_hour"):
        raise CostInputError(
            section.field("price_per_gpu_hour"), "give exactly one of price_per_gpu_hour or offer"
        )
    spot_fraction = section.get("spot_fraction", fraction) if model == "spot_mix" else None
    if section.has("offer"):
        return _rent_from_offer(section, model, spot_fraction, currency, offer_lookup, rates)
    # A rent price of 0 would make renting free and the break-even utilization a division by zero.
    spot_price = section.get("spot_price_per_gpu_hour", positive) if model == "spot_mix" else None
    return RentSpec(
        pricing_model=model,
        price_per_gpu_hour=section.get("price_per_gpu_hour", positive),
        spot_price_per_gpu_hour=spot_price,
        spot_fraction=spot_fraction,
        price_source="study file",
    )


def _decline(value: object, field: str) -> Decimal:
    decline = fraction(value, field)
    if decline >= 1:
        raise CostInputError(field, f"must be below 1 (a yearly share of the price), got {decline}")
    return decline


def _parse_reserved(
    section: _Section,
    rent: RentSpec,
    currency: str,
    offer_lookup: OfferLookup | None,
    rates: Mapping[tuple[str, str], Decimal],
) -> ReservedAlternative | None:
    """A quoted committed rate, or the stored reserved price of the study's offer."""
    if not section.has("reserved_alternative"):
        return None
    reserved = _Section(section.raw("reserved_alternative"), section.field("reserved_alternative"))
    reserved.reject_unknown(_RESERVED_FIELDS)
    model = reserved.get("pricing_model", _choice(tuple(sorted(COMMITTED_PRICING_MODELS))), "reserved_3y")
    if reserved.has("price_per_gpu_hour"):
        return ReservedAlternative(model, reserved.get("price_per_gpu_hour", positive), "quoted rate")
    if rent.offer is None or offer_lookup is None:
        raise CostInputError(
            reserved.field("price_per_gpu_hour"), "is required when rent has no offer to look a price up for"
        )
    payment = (
        reserved.get("payment_option", _choice(_PAYMENT_OPTIONS)) if reserved.has("payment_option") else ""
    )
    price = _offer_price(
        rent.offer, model, currency, offer_lookup, rates, reserved.field("pricing_model"), payment
    )
    return ReservedAlternative(
        model,
        price.price_per_gpu_hour,
        price.source,
        price.observed_at,
        price.price_id,
        price.payment_option,
        price.commitment_kind,
        price.upfront_per_gpu,
    )


def _pricing_model(value: object, field: str) -> str:
    if value not in RENT_PRICING_MODELS:
        raise CostInputError(field, f"must be one of {', '.join(RENT_PRICING_MODELS)}, got {value!r}")
    return str(value)


def _rent_from_offer(
    section: _Section,
    model: str,
    spot_fraction: Decimal | None,
    currency: str,
    offer_lookup: OfferLookup | None,
    rates: Mapping[tuple[str, str], Decimal],
) -> RentSpec:
    offer_section = _Section(section.raw("offer"), section.field("offer"))
    offer_section.reject_unknown(_OFFER_FIELDS)
    offer = OfferRef(*(offer_section.get(key, _text) for key in ("provider", "instance_type", "region")))
    field = section.field("offer")
    if offer_lookup is None:
        raise CostInputError(field, "offers cannot be resolved here: give price_per_gpu_hour instead")
    base_model = "on_demand" if model == "spot_mix" else model
    price = _offer_price(offer, base_model, currency, offer_lookup, rates, field)
    spot = _offer_price(offer, "spot", currency, offer_lookup, rates, field) if model == "spot_mix" else None
    limits = [found.stale_after_hours for found in (price, spot) if found and found.stale_after_hours]
    return RentSpec(
        pricing_model=model,
        price_per_gpu_hour=price.price_per_gpu_hour,
        spot_price_per_gpu_hour=None if spot is None else spot.price_per_gpu_hour,
        spot_fraction=spot_fraction,
        offer=offer,
        price_observed_at=price.observed_at,
        price_source=price.source,
        price_stale=price.stale or bool(spot and spot.stale),
        price_stale_after_hours=min(limits) if limits else None,
    )


def _offer_price(
    offer: OfferRef,
    model: str,
    currency: str,
    offer_lookup: OfferLookup,
    rates: Mapping[tuple[str, str], Decimal],
    field: str,
    payment_option: str = "",
) -> RentPrice:
    try:
        # a lookup is asked for a payment option only when the study names one (tests pass plain lambdas)
        found = (
            offer_lookup(offer, model, payment_option=payment_option)
            if payment_option
            else offer_lookup(offer, model)
        )
    except UnknownOffer as unknown:
        raise CostInputError(
            f"{field}.{unknown.part}", f"unknown offer {offer.label()}: {unknown.message}"
        ) from None
    if found is None:
        raise CostInputError(field, f"no current {model} price for offer {offer.label()}")
    if found.price_per_gpu_hour <= 0:
        raise CostInputError(field, f"the current {model} price of {offer.label()} is 0: it cannot be rented")
    converted = _to_study_currency(
        found.price_per_gpu_hour, found.currency, currency, rates, needed_for=field
    )
    upfront = found.upfront_per_gpu
    if upfront is not None:
        upfront = _to_study_currency(upfront, found.currency, currency, rates, needed_for=field)
    return RentPrice(
        converted,
        currency,
        found.observed_at,
        found.source,
        found.stale,
        found.stale_after_hours,
        found.price_id,
        found.payment_option,
        found.commitment_kind,
        upfront,
    )
