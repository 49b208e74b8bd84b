"""FOCUS 1.0-1.2 billing exports (CSV, gzip CSV, Parquet) to normalized spend rows.

Columns as the FinOps FOCUS specification names them (FOCUS 1.2 column list, CC-BY-4.0, "FinOps Open
Cost and Usage Specification (FOCUS)"). Mandatory here: the charge period, ChargeCategory, BilledCost,
EffectiveCost and BillingCurrency; ProviderName unless --provider names it.

The instance type of a row, in this order (docs/billing.md):
1. `SkuPriceDetails.InstanceType` where present;
2. the provider's own column: for Azure `ServiceType` in `x_SkuDetails` (or `AdditionalInfo`), the VM
   size; for AWS `x_UsageType` ("USE1-BoxUsage:p5.48xlarge", "SpotUsage:g6e.xlarge"); for Google Cloud's
   per-GPU SKUs the accelerator type their ChargeDescription names (gpu_identity.py); for AWS rows
   without x_UsageType, the instance type its EC2 usage ChargeDescription names ("$1.624 per On Demand
   Linux g5.4xlarge Instance Hour");
3. the user's mapping of SkuId to instance type (settings BILLING_INSTANCE_TYPES);
4. an OCI GPU shape in ResourceType ("BM.GPU.H100.8", gpu_identity.oci_gpu_shape);
otherwise none (the row is not GPU instance usage).

Corrections (ChargeClass = Correction) carry the difference FOCUS defines them to be, in the charge
period they correct, and are stored as such: summing a period includes them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from decimal import Decimal
from pathlib import Path

import numpy as np
import pandas as pd

from billing.imports import cells
from billing.imports.chunks import header, read_chunks
from billing.imports.codes import coded, codes_and_values, text_values, tuple_codes
from billing.imports.column_maps import file_column_errors, focus_header_map, renamed
from billing.imports.enrich import TAG_SET
from billing.imports.gpu_identity import azure_vm_size, gcp_accelerator_type, oci_gpu_shape
from billing.imports.providers import aws_description_instance_type, aws_usage_instance_type, provider_slug
from billing.imports.records import CHUNK_ROWS, NORMALIZED_COLUMNS, BillingFileError
from billing.imports.tag_formats import tag_objects_and_ids

REQUIRED = [
    "ChargePeriodStart",
    "ChargePeriodEnd",
    "ChargeCategory",
    "BilledCost",
    "EffectiveCost",
    "BillingCurrency",
]
OPTIONAL = [
    "BillingPeriodStart",
    "ChargeClass",
    "ListCost",
    "ContractedCost",
    "PricingCategory",
    "CommitmentDiscountId",
    "CommitmentDiscountStatus",
    "ConsumedQuantity",
    "ConsumedUnit",
    "ProviderName",
    "BillingAccountId",
    "SubAccountId",
    "SubAccountName",
    "RegionId",
    "Region",
    "AvailabilityZone",
    "ResourceId",
    "ResourceType",
    "ServiceCategory",
    "SkuId",
    "SkuPriceDetails",
    "Tags",
    "x_UsageType",
    "CommitmentDiscountType",
    "ChargeFrequency",
    "x_InstanceTypeFamily",
    "x_CommitmentDiscountEndDate",
    "x_SkuDetails",
    "AdditionalInfo",
    "ChargeDescription",
]
# Extension columns the reader takes when present (docs/billing.md): no provider's FOCUS export
# standardizes them. x_InstanceTypeFamily: the instance family a commitment is scoped to ("p5");
# x_CommitmentDiscountEndDate: the end of its term. Without the latter, a one-time Purchase row of a
# commitment gives its term's end: FOCUS charges an upfront purchase over the whole term
# (ChargePeriodEnd 2027-02-01 for a one-year plan bought 2026-02-01 in the spec's examples).
CHARGE_CATEGORIES = {
    "Usage": "usage",
    "Purchase": "purchase",
    "Tax": "tax",
    "Credit": "credit",
    "Adjustment": "adjustment",
}
PRICING_CATEGORIES = {"Standard": "on_demand", "Dynamic": "spot", "Committed": "committed", "Other": "other"}
COMMITMENT_STATUSES = {"Used": "used", "Unused": "unused"}
SIGNATURE = {"ChargePeriodStart", "ChargeCategory", "BillingCurrency"}  # any one: FOCUS-only names
# The file's column behind each normalized one, for errors found once rows are normalized (store.py)
SOURCE_COLUMNS = {
    "charge_period_start": "ChargePeriodStart",
    "charge_period_end": "ChargePeriodEnd",
    "provider": "ProviderName",
    "billing_account_id": "BillingAccountId",
    "sub_account_id": "SubAccountId",
    "sub_account_name": "SubAccountName",
    "region": "RegionId",
    "availability_zone": "AvailabilityZone",
    "resource_id": "ResourceId",
    "resource_type": "ResourceType",
    "service_category": "ServiceCategory",
    "sku_id": "SkuId",
    "commitment_discount_id": "CommitmentDiscountId",
    "consumed_quantity": "ConsumedQuantity",
    "consumed_unit": "ConsumedUnit",
    "currency": "BillingCurrency",
    "billed_cost": "BilledCost",
    "effective_cost": "EffectiveCost",
    "list_cost": "ListCost",
    "contracted_cost": "ContractedCost",
}


def looks_like_focus(columns: list[str]) -> bool:
    return bool(focus_header_map(columns, sorted(SIGNATURE)))


def source_columns(columns: list[str]) -> dict[str, str]:
    """SOURCE_COLUMNS as this file spells them (billed_cost, billedcost...)."""
    file_of = focus_header_map(columns, REQUIRED + OPTIONAL)
    return {column: file_of.get(name, name) for column, name in SOURCE_COLUMNS.items()}


def read_focus(
    path: Path,
    *,
    provider: str = "",
    instance_types: Mapping[str, str] | None = None,
    chunk_rows: int = CHUNK_ROWS,
) -> Iterator[pd.DataFrame]:
    """Normalized chunks (records.NORMALIZED_COLUMNS); raises BillingFileError on the first bad cell."""
    file = str(path)
    present = header(path)
    file_of = focus_header_map(present, REQUIRED + OPTIONAL)  # a column under any case or snake case
    cells.require_columns(list(file_of), REQUIRED, file=file)
    if "ProviderName" not in file_of and not provider:
        raise BillingFileError(
            file, "missing column ProviderName (or give --provider)", row=1, column="ProviderName"
        )
    mapping = dict(instance_types or {})
    wanted = [file_of.get(name, name) for name in REQUIRED + OPTIONAL]
    for first_row, raw in read_chunks(path, wanted, chunk_rows=chunk_rows, categorical=True):
        with file_column_errors(file_of):
            normalized = _normalize(
                renamed(raw, file_of), first_row=first_row, file=file, provider=provider, sku_types=mapping
            )
        yield normalized


def _normalize(
    raw: pd.DataFrame, *, first_row: int, file: str, provider: str, sku_types: dict
) -> pd.DataFrame:
    """The chunk's normalized columns, each computed once per distinct value (or tuple of values)."""
    where = {"file": file, "first_row": first_row}
    # the columns gathered in a dict, made a frame once: inserting 30 columns one by one into a DataFrame
    # rebuilt its column index each time (issue 28: a fifth of this function's time, pandas 3)
    out: dict = {}
    out["source_row"] = np.arange(first_row, first_row + len(raw))
    out["charge_period_start"] = cells.timestamps(raw, "ChargePeriodStart", **where)
    out["charge_period_end"] = cells.timestamps(raw, "ChargePeriodEnd", **where)
    backwards = (out["charge_period_end"] < out["charge_period_start"]).to_numpy()
    if backwards.any():
        row = first_row + int(backwards.argmax())
        raise BillingFileError(
            file, "ChargePeriodEnd is before ChargePeriodStart", row=row, column="ChargePeriodEnd"
        )
    out["billing_period_start"] = cells.timestamps(raw, "BillingPeriodStart", required=False, **where)
    out["charge_category"] = cells.choice(raw, "ChargeCategory", CHARGE_CATEGORIES, **where)
    codes, classes = codes_and_values(raw["ChargeClass"])
    out["is_correction"] = np.array([value.strip().lower() == "correction" for value in classes], dtype=bool)[
        codes
    ]
    out["provider"] = _providers(raw, provider, where)
    out["billing_account_id"] = raw["BillingAccountId"]
    out["sub_account_id"] = raw["SubAccountId"]
    out["sub_account_name"] = raw["SubAccountName"]
    codes, pairs = tuple_codes(raw["RegionId"], raw["Region"])
    out["region"] = coded(
        codes, [region_id if region_id != "" else region for region_id, region in pairs], raw.index
    )
    out["availability_zone"] = raw["AvailabilityZone"]
    out["resource_id"] = raw["ResourceId"]
    out["resource_type"] = raw["ResourceType"]
    out["service_category"] = raw["ServiceCategory"]
    out["sku_id"] = raw["SkuId"]
    out["instance_type"] = _instance_types(raw, where, sku_types)
    out["pricing_category"] = cells.choice(
        raw, "PricingCategory", PRICING_CATEGORIES, default="other", **where
    )
    out["commitment_discount_id"] = raw["CommitmentDiscountId"]
    out["commitment_status"] = cells.choice(
        raw, "CommitmentDiscountStatus", COMMITMENT_STATUSES, default="", **where
    )
    out["consumed_quantity"] = cells.numbers(
        raw, "ConsumedQuantity", required=False, limit=cells.QUANTITY_LIMIT, **where
    )
    out["consumed_unit"] = raw["ConsumedUnit"]
    out["billed_cost"] = cells.numbers(raw, "BilledCost", **where)
    out["effective_cost"] = cells.numbers(raw, "EffectiveCost", **where)
    out["list_cost"] = cells.numbers(raw, "ListCost", required=False, **where)
    out["contracted_cost"] = cells.numbers(raw, "ContractedCost", required=False, **where)
    out["currency"] = cells.currencies(raw, "BillingCurrency", **where)
    out["tags"], out[TAG_SET] = tag_objects_and_ids(raw, "Tags", **where)
    _commitment_terms(raw, out, where)
    out["is_refund"] = _refunds(out)
    columns = [*NORMALIZED_COLUMNS, TAG_SET]  # the tag sets' ids: enrich.tag_codes
    return pd.DataFrame({name: out[name] for name in columns}, index=raw.index, copy=False)


# FOCUS 1.0-1.2 ChargeCategory: Usage, Purchase and Tax are "positive or negative charges ... including
# refunds"; Credit is what the provider grants (promotional credits), Adjustment anything else
# (FOCUS_Spec specification/columns/chargecategory.md). A refund of a closed billing period also carries
# ChargeClass "Correction" (chargeclass.md: "e.g., refunds and credit modifications").
REFUNDED_CATEGORIES = ("usage", "purchase", "tax")


def _refunds(out: dict) -> np.ndarray:
    """FOCUS has no refund column: a refund is a negative BilledCost in a category that refunds (the
    category checked once per distinct value: a text per row cost a tenth of the chunk's normalizing)."""
    codes, values = codes_and_values(out["billed_cost"])
    negative = np.array(
        [str(v).startswith("-") and Decimal(str(v)) < 0 for v in values] + [False], dtype=bool
    )
    category_codes, categories = codes_and_values(out["charge_category"])
    refunded = np.array([str(c) in REFUNDED_CATEGORIES for c in categories] + [False], dtype=bool)
    return negative[codes] & refunded[category_codes]


def _commitment_terms(raw: pd.DataFrame, out: dict, where: dict) -> None:
    """CommitmentDiscountType, the family the commitment is scoped to (x_InstanceTypeFamily, else
    SkuPriceDetails' InstanceFamily) and its end (x_CommitmentDiscountEndDate, else a one-time
    purchase's ChargePeriodEnd), on the rows of a commitment. Each worked out once per distinct value
    (or pair of values), never per row."""
    has_commitment = _flags(raw["CommitmentDiscountId"], lambda value: value != "")
    codes, pairs = tuple_codes(raw["CommitmentDiscountId"], raw["CommitmentDiscountType"])
    out["commitment_type"] = coded(codes, [kind if key != "" else "" for key, kind in pairs], raw.index)
    details = dict(zip(text_values(raw["SkuPriceDetails"])[1], _details(raw, where), strict=True))
    codes, triples = tuple_codes(
        raw["CommitmentDiscountId"], raw["x_InstanceTypeFamily"], raw["SkuPriceDetails"]
    )
    families = [
        (family.strip() or _details_family(details[text])) if key != "" else ""
        for key, family, text in triples
    ]
    out["commitment_family"] = coded(codes, families, raw.index)
    end = cells.timestamps(raw, "x_CommitmentDiscountEndDate", required=False, **where)
    one_time = (
        _flags(out["charge_category"], lambda value: value == "purchase")
        & _flags(raw["ChargeFrequency"], lambda value: value.strip().lower() == "one-time")
        & has_commitment
    )
    end = end.where(end.notna() | ~one_time, out["charge_period_end"])
    out["commitment_end"] = end.where(has_commitment)


def _details(raw: pd.DataFrame, where: dict) -> list[dict]:
    """SkuPriceDetails parsed, one object per distinct text (in text_values' order), once checked."""
    return cells.json_object_values(raw, "SkuPriceDetails", **where)[1]


def _details_family(obj: dict) -> str:
    return str(obj.get("InstanceFamily") or obj.get("x_InstanceFamily") or "")


def _flags(values: pd.Series, predicate) -> np.ndarray:
    """predicate(text) of each row, evaluated once per distinct text."""
    codes, texts = text_values(values)
    return np.array([bool(predicate(text)) for text in texts], dtype=bool)[codes]


def _providers(raw: pd.DataFrame, provider: str, where: dict) -> pd.Series:
    """Provider slugs: ProviderName, else --provider; a row with neither is an error."""
    codes, names = codes_and_values(raw["ProviderName"])
    chosen = [name if name.strip() != "" else provider for name in names]
    blank = np.array([name.strip() == "" for name in chosen] + [False], dtype=bool)[codes]
    if blank.any():
        raise BillingFileError(
            where["file"],
            "a provider name is required here (or give --provider)",
            row=where["first_row"] + int(blank.argmax()),
            column="ProviderName",
        )
    return coded(codes, [provider_slug(name) for name in chosen], raw.index)


def _instance_types(raw: pd.DataFrame, where: dict, sku_types: dict) -> pd.Series:
    """Per distinct (SkuPriceDetails, Azure details, x_UsageType, ChargeDescription, SkuId,
    ResourceType): the first that names a type (module docstring)."""
    codes, details = cells.json_object_values(raw, "SkuPriceDetails", **where)
    named = coded(codes, [str(obj.get("InstanceType") or obj.get("x_InstanceType") or "") for obj in details])
    codes, triples = tuple_codes(
        named,
        raw["x_SkuDetails"],
        raw["AdditionalInfo"],
        raw["x_UsageType"],
        raw["ChargeDescription"],
        raw["SkuId"],
        raw["ResourceType"],
    )
    types = [
        from_details
        or azure_vm_size(sku_details)
        or azure_vm_size(additional)
        or aws_usage_instance_type(usage)
        or gcp_accelerator_type(description)
        or (aws_description_instance_type(description) if not usage else "")
        or (sku_types.get(sku, "") if sku_types else "")
        or oci_gpu_shape(resource_type)
        for from_details, sku_details, additional, usage, description, sku, resource_type in triples
    ]
    return coded(codes, types, raw.index)
