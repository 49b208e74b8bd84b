"""Azure cost details exports (Cost Management's actual or amortized cost, EA and MCA) to normalized rows.

Column names per Microsoft's cost details field list ("Understand cost details fields",
https://learn.microsoft.com/azure/cost-management-billing/automate/understand-usage-details-fields, and the
EA and MCA dataset schemas under .../dataset-schema/cost-usage-details-ea and -mca). EA files write them in
PascalCase (`Cost`, `BillingCurrency`), MCA files mostly in camelCase (`costInBillingCurrency`,
`billingCurrency`, `meterCategory`): a header matches in any case, with or without underscores, as FOCUS
headers do (column_maps.focus_header_map).

How a row maps follows Microsoft's "Convert Cost Management data to FOCUS"
(https://learn.microsoft.com/cloud-computing/finops/focus/convert), row by row, so that one file needs no
other to be read (docs/billing.md, "Azure cost details"):
- ChargeType: Usage, Purchase, Credit, Tax as named; UnusedReservation and UnusedSavingsPlan are usage, the
  commitment's unused part (committed, Unused); Refund is a purchase flagged as a refund (the invoice view's
  own line); RoundingAdjustment an adjustment. Any other value is an error naming row and column.
- billed cost = Cost (EA) or CostInBillingCurrency, but 0 on usage a reservation or savings plan covers
  (PricingModel Reservation / SavingsPlan: the amortized file's share of a purchase billed elsewhere) and on
  unused-commitment rows (FOCUS bills them 0: the purchase is the bill). Effective cost = the same cost, but 0
  on the purchase or refund of a reservation or savings plan (its cost reaches the amortized file's usage).
  So an actual-cost file ties to the invoice (billed), an amortized one gives the effective cost.
- the day in `Date`, written MM/DD/YYYY (Microsoft's sample files: "09/21/2023") or YYYY-MM-DD; a charge
  covers that day, [Date, Date + 1 day).
- the VM size: `ServiceType` in `AdditionalInfo` where it names a size (Standard_..., Basic_...), else for
  the `Virtual Machines` meter category the size the meter names ("NC24ads A100 v4" ->
  Standard_NC24ads_A100_v4; "D2 v3/D2s v3" -> Standard_D2_v3). VM hours: `Quantity` is counted in blocks of
  `UnitOfMeasure` ("1 Hour", "10 Hours", "100 Hours"; Microsoft's hubs take ConsumedQuantity = Quantity x
  the block size, PricingUnits.csv in microsoft/finops-toolkit), so 3 at "10 Hours" is 30 hours. Only
  Usage rows of the Virtual Machines meter category count hours; other rows keep Quantity and UnitOfMeasure
  as written (a Windows licence row of a GPU VM is GPU spend with no hours of its own).
- the service category from the meter category: Compute for the categories that bill VM time, which the
  review's "undetermined" rule reads (a Compute row naming no size cannot be told GPU or not).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import numpy as np
import pandas as pd

from billing.imports import cells
from billing.imports.chunks import header, read_chunks
from billing.imports.codes import coded, tuple_codes
from billing.imports.column_maps import file_column_errors, focus_header_map, renamed
from billing.imports.enrich import UNITS_PER_HOUR
from billing.imports.gpu_identity import azure_vm_size
from billing.imports.providers import provider_slug
from billing.imports.records import CHUNK_ROWS, NORMALIZED_COLUMNS, BillingFileError
from billing.imports.tag_formats import tag_objects
from billing.storage.datasets import HOURS_LIMIT

# Each reader name -> the export's names for it, first found wins (EA's legacy name, then the current one)
ALTERNATIVES = {
    "Cost": ["CostInBillingCurrency", "Cost"],
    "BillingCurrency": ["BillingCurrency", "BillingCurrencyCode"],
    "SkuId": ["ProductId", "MeterId"],
}
REQUIRED = ["Date", "ChargeType", "MeterCategory", "Cost", "BillingCurrency"]
OPTIONAL = [
    "BillingAccountId",
    "BillingProfileId",
    "BillingPeriodStartDate",
    "SubscriptionId",
    "SubscriptionName",
    "ResourceLocation",
    "AvailabilityZone",
    "ResourceId",
    "MeterName",
    "SkuId",
    "Quantity",
    "UnitOfMeasure",
    "PricingModel",
    "ReservationId",
    "BenefitId",
    "ProductOrderName",
    "AdditionalInfo",
    "Tags",
    "PaygCostInBillingCurrency",
]
# ChargeType -> (charge category, commitment status, refund)
CHARGE_TYPES = {
    "Usage": ("usage", "", False),
    "Purchase": ("purchase", "", False),
    "Credit": ("credit", "", False),
    "Tax": ("tax", "", False),
    "UnusedReservation": ("usage", "unused", False),
    "UnusedSavingsPlan": ("usage", "unused", False),
    "Refund": ("purchase", "", True),
    "RoundingAdjustment": ("adjustment", "", False),
    "Adjustment": ("adjustment", "", False),
}
PRICING_MODELS = {
    "OnDemand": "on_demand",
    "Spot": "spot",
    "Reservation": "committed",
    "SavingsPlan": "committed",
    "Savings Plan": "committed",
}
COMMITMENT_MODELS = frozenset({"reservation", "savingsplan", "savings plan"})
# Meter categories billing VM time (Compute); a few common others in FOCUS's service categories; any other
# category is kept as written (never Compute: a row of it is not GPU capacity).
SERVICE_CATEGORIES = {
    **dict.fromkeys(
        [
            "Virtual Machines",
            "Virtual Machines Licenses",
            "Cloud Services",
            "Container Instances",
            "Azure Container Apps",
            "Azure Dedicated Host",
            "Azure VMware Solution",
            "Azure Batch",
        ],
        "Compute",
    ),
    **dict.fromkeys(["Storage", "Azure NetApp Files", "Backup"], "Storage"),
    **dict.fromkeys(
        [
            "Bandwidth",
            "Virtual Network",
            "Load Balancer",
            "VPN Gateway",
            "ExpressRoute",
            "Azure DNS",
            "Application Gateway",
            "Azure Front Door Service",
            "Content Delivery Network",
            "Network Watcher",
            "Azure Firewall",
            "NAT Gateway",
            "Azure Bastion",
            "Traffic Manager",
        ],
        "Networking",
    ),
    **dict.fromkeys(
        [
            "SQL Database",
            "SQL Managed Instance",
            "Azure Database for MySQL",
            "Azure Database for PostgreSQL",
            "Azure Database for MariaDB",
            "Azure Cosmos DB",
            "Redis Cache",
            "Azure Cache for Redis",
        ],
        "Databases",
    ),
    **dict.fromkeys(
        [
            "Advanced Threat Protection",
            "Advanced Data Security",
            "Microsoft Defender for Cloud",
            "Key Vault",
            "Sentinel",
        ],
        "Security",
    ),
    **dict.fromkeys(
        ["Log Analytics", "Azure Monitor", "Application Insights", "Insight and Analytics"],
        "Management and Governance",
    ),
}
VM_METER_CATEGORY = "virtual machines"
_VM_SIZE = re.compile(r"^(?:standard|basic)_[a-z0-9_-]+$", re.IGNORECASE)
# A VM meter name: "NC24ads A100 v4", "D2 v3", "B1s", "NC6s v3 Spot", "D2s v3 Low Priority"
_VM_METER = re.compile(
    r"^(?P<size>[A-Z]+\d+[A-Za-z-]*(?: [A-Z]+\d+[A-Za-z]*)?(?: v\d+)?)(?: Spot| Low Priority)?$"
)
_HOUR_BLOCK = re.compile(r"^(?P<block>\d+)?\s*(?:hours?|hrs?|horas?|小时)$", re.IGNORECASE)
_RESERVED_SIZE = re.compile(r"^Reserved VM Instance,\s*(?P<size>[^,]+),", re.IGNORECASE)
_MONTH_DAY_YEAR = re.compile(r"^(\d{1,2})/(\d{1,2})/(\d{4})$")
# Columns a header names this file's own way only: signature of the format (any case)
SIGNATURE = ["Date", "MeterCategory", "AdditionalInfo"]
SOURCE_COLUMNS = {
    "charge_period_start": "Date",
    "charge_period_end": "Date",
    "billing_account_id": "BillingAccountId",
    "sub_account_id": "SubscriptionId",
    "sub_account_name": "SubscriptionName",
    "region": "ResourceLocation",
    "availability_zone": "AvailabilityZone",
    "resource_id": "ResourceId",
    "service_category": "MeterCategory",
    "sku_id": "SkuId",
    "instance_type": "AdditionalInfo",
    "commitment_discount_id": "ReservationId",
    "consumed_quantity": "Quantity",
    "consumed_unit": "UnitOfMeasure",
    "currency": "BillingCurrency",
}


def looks_like_azure_cost_details(columns: list[str]) -> bool:
    """Date, MeterCategory and AdditionalInfo (any case) and no FOCUS charge period."""
    found = focus_header_map(columns, [*SIGNATURE, "ChargePeriodStart"])
    return all(name in found for name in SIGNATURE) and "ChargePeriodStart" not in found


def header_map(present: list[str]) -> dict[str, str]:
    """Reader name -> the file's header, for the columns the file has."""
    present = [name.lstrip("\ufeff") for name in present]
    file_of = focus_header_map(present, REQUIRED + OPTIONAL)
    for name, choices in ALTERNATIVES.items():
        found = focus_header_map(present, choices)
        file_of.pop(name, None)
        for choice in choices:
            if choice in found:
                file_of[name] = found[choice]
                break
    return file_of


def source_columns(columns: list[str]) -> dict[str, str]:
    """SOURCE_COLUMNS as this file spells them."""
    file_of = header_map(columns)
    return {column: file_of.get(name, name) for column, name in SOURCE_COLUMNS.items()}


def read_azure_cost_details(
    path: Path, *, provider: str = "azure", chunk_rows: int = CHUNK_ROWS
) -> Iterator[pd.DataFrame]:
    """Normalized chunks (records.NORMALIZED_COLUMNS); raises BillingFileError on the first bad cell."""
    file = str(path)
    file_of = header_map(header(path))
    missing = [name for name in REQUIRED if name not in file_of]
    if missing:
        wanted = [" or ".join(ALTERNATIVES.get(name, [name])) for name in missing]
        raise BillingFileError(
            file, f"missing required column(s): {', '.join(wanted)}", row=1, column=wanted[0]
        )
    slug = provider_slug(provider or "azure")
    wanted = [file_of.get(name, name) for name in REQUIRED + OPTIONAL]
    for first_row, raw in read_chunks(path, wanted, chunk_rows=chunk_rows, categorical=True):
        with file_column_errors(file_of):
            normalized = _normalize(renamed(raw, file_of), first_row=first_row, file=file, provider=slug)
        yield normalized


def _normalize(raw: pd.DataFrame, *, first_row: int, file: str, provider: str) -> pd.DataFrame:
    where = {"file": file, "first_row": first_row}
    out = pd.DataFrame(index=raw.index)
    out["source_row"] = np.arange(first_row, first_row + len(raw))
    out["charge_period_start"] = _days(raw, "Date", required=True, **where)
    out["charge_period_end"] = out["charge_period_start"] + pd.Timedelta(days=1)
    out["billing_period_start"] = _days(raw, "BillingPeriodStartDate", required=False, **where)
    codes, kinds = _charge_types(raw, where)
    out["charge_category"] = coded(codes, [kind[0] for kind in kinds], raw.index)
    out["commitment_status"] = _commitment_status(raw)
    out["is_refund"] = np.array([kind[2] for kind in kinds], dtype=bool)[codes]
    out["is_correction"] = False
    out["provider"] = provider
    out["billing_account_id"] = _billing_accounts(raw)
    out["sub_account_id"] = raw["SubscriptionId"]
    out["sub_account_name"] = raw["SubscriptionName"]
    out["region"] = _lowered(raw["ResourceLocation"])
    out["availability_zone"] = raw["AvailabilityZone"]
    out["resource_id"] = raw["ResourceId"]
    out["resource_type"] = ""
    out["service_category"] = _service_categories(raw["MeterCategory"])
    out["sku_id"] = raw["SkuId"]
    out["instance_type"] = _instance_types(raw)
    out["pricing_category"] = cells.choice(raw, "PricingModel", PRICING_MODELS, default="other", **where)
    out["commitment_discount_id"] = _commitment_ids(raw)
    _quantities(raw, out, where)
    _costs(raw, out, where)
    out["list_cost"] = cells.numbers(raw, "PaygCostInBillingCurrency", required=False, **where)
    out["contracted_cost"] = ""
    out["currency"] = cells.currencies(raw, "BillingCurrency", **where)
    out["tags"] = tag_objects(raw, "Tags", **where)
    _commitment_terms(raw, out)
    return out[NORMALIZED_COLUMNS]


def _charge_types(raw: pd.DataFrame, where: dict) -> tuple[np.ndarray, list[tuple[str, str, bool]]]:
    """(code per row, (category, commitment status, refund) of each distinct ChargeType)."""
    check = cells.Distinct(raw, "ChargeType", **where)
    lowered = {name.lower(): kind for name, kind in CHARGE_TYPES.items()}
    kinds = [lowered.get(value.strip().lower()) for value in check.values]
    allowed = ", ".join(CHARGE_TYPES)
    check.fail_if(
        [kind is None for kind in kinds],
        lambda at: (
            f"unknown value {check.values[at]!r} (expected one of: {allowed})"
            if check.values[at].strip()
            else "a charge type is required here"
        ),
    )
    return check.codes, [kind for kind in kinds if kind is not None]


def _is_commitment_model(value: str) -> bool:
    return value.strip().lower() in COMMITMENT_MODELS


def _commitment_status(raw: pd.DataFrame) -> pd.Series:
    """Unused on UnusedReservation / UnusedSavingsPlan rows; used on usage a commitment covers."""
    codes, pairs = tuple_codes(raw["ChargeType"], raw["PricingModel"])
    statuses = []
    lowered = {name.lower(): kind for name, kind in CHARGE_TYPES.items()}
    for charge_type, model in pairs:
        kind = lowered.get(charge_type.strip().lower())
        if kind and kind[1]:
            statuses.append(kind[1])
        elif kind and kind[0] == "usage" and _is_commitment_model(model):
            statuses.append("used")
        else:
            statuses.append("")
    return coded(codes, statuses, raw.index)


def _costs(raw: pd.DataFrame, out: pd.DataFrame, where: dict) -> None:
    """Billed and effective cost from the one cost column (module docstring), per distinct (cost, charge
    type, pricing model)."""
    cost = cells.numbers(raw, "Cost", **where)
    codes, triples = tuple_codes(cost, raw["ChargeType"], raw["PricingModel"])
    billed, effective = [], []
    for value, charge_type, model in triples:
        kind = charge_type.strip().lower()
        committed = _is_commitment_model(model)
        covered_usage = kind == "usage" and committed
        unused = kind in ("unusedreservation", "unusedsavingsplan")
        principal = kind in ("purchase", "refund") and committed
        billed.append("0" if covered_usage or unused else value)
        effective.append("0" if principal else value)
    out["billed_cost"] = coded(codes, billed, raw.index)
    out["effective_cost"] = coded(codes, effective, raw.index)


def _quantities(raw: pd.DataFrame, out: pd.DataFrame, where: dict) -> None:
    """VM hours on Usage rows of the Virtual Machines meters (Quantity x the unit's block of hours); other
    Usage rows' Quantity and UnitOfMeasure as written, but an hour unit the review would read as
    instance-hours ("Hours", MCA's spelling) in Azure's block form ("1 Hour"), so that a licence row of a VM
    never adds hours of its own; none on other charge types (purchases, unused commitments), as Microsoft's
    FOCUS conversion gives them none."""
    quantity = cells.numbers(raw, "Quantity", required=False, limit=cells.QUANTITY_LIMIT, **where)
    codes, tuples = tuple_codes(quantity, raw["UnitOfMeasure"], raw["MeterCategory"], raw["ChargeType"])
    quantities, units, too_large = [], [], []
    for value, unit, category, charge_type in tuples:
        usage = charge_type.strip().lower() == "usage"  # Microsoft: a consumed quantity on Usage rows only
        block = _hour_block(unit)
        is_vm_hours = (
            usage and block is not None and value != "" and category.strip().lower() == VM_METER_CATEGORY
        )
        scaled = Decimal(value) * block if is_vm_hours and block is not None else None
        if scaled is not None:
            quantities.append(format(scaled, "f"))
            units.append("Hours")
        elif usage:
            quantities.append(value)
            units.append(_block_form(unit, block) if _read_as_hours(unit) else unit)
        else:
            quantities.append("")
            units.append("")
        too_large.append(scaled is not None and abs(scaled) >= HOURS_LIMIT)  # instance-hours: int64 micros
    bad = np.array(too_large + [False], dtype=bool)[codes]
    if bad.any():
        row = where["first_row"] + int(bad.argmax())
        raise BillingFileError(
            where["file"],
            f"too large once counted in hours (under {HOURS_LIMIT:.0e} here)",
            row=row,
            column="Quantity",
        )
    out["consumed_quantity"] = coded(codes, quantities, raw.index)
    out["consumed_unit"] = coded(codes, units, raw.index)


def _read_as_hours(unit: str) -> bool:
    """Whether enrich.py would count the unit as hours or seconds of an instance."""
    return unit.strip().lower() in UNITS_PER_HOUR


def _block_form(unit: str, block: int | None) -> str:
    """The unit as Azure writes a block of it ("Hours" -> "1 Hour"), which enrich.py does not count."""
    if block is None:
        return f"1 {unit.strip()}"
    return f"{block} Hour" if block == 1 else f"{block} Hours"


def _hour_block(unit: str) -> int | None:
    """Hours in one unit of `UnitOfMeasure` ("1 Hour" 1, "10 Hours" 10, "100 Hours" 100), None for others."""
    match = _HOUR_BLOCK.match(" ".join(unit.split()))
    if not match:
        return None
    return int(match.group("block") or 1) or None


def vm_size_of_meter(meter_name: str) -> str:
    """The VM size a Virtual Machines meter names ("NC24ads A100 v4" -> Standard_NC24ads_A100_v4; of
    "D2 v3/D2s v3" the first), or "" for a name of another form."""
    first = meter_name.split("/")[0].strip()
    match = _VM_METER.match(first)
    return "Standard_" + match.group("size").replace(" ", "_") if match else ""


def _vm_size(additional_info: str, meter_category: str, meter_name: str) -> str:
    size = azure_vm_size(additional_info)
    if _VM_SIZE.match(size):
        return size
    if meter_category.strip().lower() == VM_METER_CATEGORY:
        return vm_size_of_meter(meter_name)
    return ""


def _instance_types(raw: pd.DataFrame) -> pd.Series:
    codes, triples = tuple_codes(raw["AdditionalInfo"], raw["MeterCategory"], raw["MeterName"])
    return coded(codes, [_vm_size(*triple) for triple in triples], raw.index)


def _service_categories(meter_category: pd.Series) -> pd.Series:
    codes, (names,) = _single(meter_category)
    return coded(
        codes, [SERVICE_CATEGORIES.get(name.strip(), name.strip()) for name in names], meter_category.index
    )


def _single(column: pd.Series) -> tuple[np.ndarray, tuple[list[str]]]:
    codes, values = tuple_codes(column)
    return codes, ([value[0] for value in values],)


def _lowered(column: pd.Series) -> pd.Series:
    """ResourceLocation as a region id: lower case without spaces ("EastUS2" -> "eastus2")."""
    codes, (names,) = _single(column)
    return coded(codes, ["".join(name.lower().split()) for name in names], column.index)


def _billing_accounts(raw: pd.DataFrame) -> pd.Series:
    """EA: BillingAccountId; MCA: the billing profile (an invoice), where it differs from the account."""
    codes, pairs = tuple_codes(raw["BillingAccountId"], raw["BillingProfileId"])
    return coded(
        codes,
        [profile if profile and profile != account else account for account, profile in pairs],
        raw.index,
    )


def _commitment_ids(raw: pd.DataFrame) -> pd.Series:
    """BenefitId (Microsoft's FOCUS CommitmentDiscountId), else ReservationId (older EA files)."""
    codes, pairs = tuple_codes(raw["BenefitId"], raw["ReservationId"])
    return coded(codes, [benefit.strip() or reservation.strip() for benefit, reservation in pairs], raw.index)


def _commitment_terms(raw: pd.DataFrame, out: pd.DataFrame) -> None:
    """The commitment's kind (a savings plan by its pricing model or BenefitId, else a reservation), the VM
    size a reservation is for (`ProductOrderName` "Reserved VM Instance, Standard_DS1_v2, US East, 1 Year",
    else the row's own size; none for a savings plan: it is not scoped to a size) and no end (the file
    does not say it)."""
    codes, tuples = tuple_codes(
        out["commitment_discount_id"], raw["PricingModel"], raw["ProductOrderName"], out["instance_type"]
    )
    types, families = [], []
    for commitment, model, order, size in tuples:
        if not commitment:
            types.append("")
            families.append("")
            continue
        plan = model.strip().lower() in ("savingsplan", "savings plan") or "/microsoft.billingbenefits/" in (
            commitment.lower()
        )
        reserved = _RESERVED_SIZE.match(order.strip())
        types.append("Savings Plan" if plan else "Reservation")
        families.append("" if plan else (reserved.group("size").strip() if reserved else size))
    out["commitment_type"] = coded(codes, types, raw.index)
    out["commitment_family"] = coded(codes, families, raw.index)
    out["commitment_end"] = pd.Series(pd.NaT, index=raw.index, dtype="datetime64[ns, UTC]")


def _days(frame: pd.DataFrame, column: str, *, file: str, first_row: int, required: bool) -> pd.Series:
    """Azure's dates: MM/DD/YYYY (as Microsoft's exports write them) or ISO 8601 (YYYY-MM-DD...), at UTC
    midnight; anything else is an error naming row and column."""
    check = cells.Distinct(frame, column, file=file, first_row=first_row)
    text = check.stripped()
    parsed = [_day(value) for value in text]
    empty = text == ""
    check.fail_if(
        [day is None and not blank for day, blank in zip(parsed, empty, strict=True)],
        lambda at: f"unparseable date {text[at]!r} (Azure writes MM/DD/YYYY or YYYY-MM-DD)",
    )
    if required:
        check.fail_if(empty, "a date is required here")
    cells.refuse_far_years(
        check, np.array([np.nan if day is None else day.year for day in parsed], dtype=float)
    )
    days = pd.DatetimeIndex(
        [day if day is not None else pd.NaT for day in parsed], dtype="datetime64[ns, UTC]"
    )
    return pd.Series(days.take(check.codes), index=frame.index)


def _day(text: str) -> pd.Timestamp | None:
    if text == "":
        return None
    match = _MONTH_DAY_YEAR.match(text)
    try:
        if match:
            month, day, year = (int(part) for part in match.groups())
            return pd.Timestamp(year=year, month=month, day=day, tz="UTC")
        if re.match(r"^\d{4}-\d{2}-\d{2}", text):
            stamp = pd.Timestamp(text)
            return stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC")
    except ValueError:
        return None
    return None
