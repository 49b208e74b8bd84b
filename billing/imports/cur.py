"""AWS Cost and Usage Report 2.0 (CSV, gzip CSV, Parquet) to normalized spend rows.

Column names per the AWS CUR 2.0 data dictionary. How a line maps (docs/billing.md):
- `line_item_line_item_type`: Usage, DiscountedUsage (reserved instance), SavingsPlanCoveredUsage are
  usage; RIFee and SavingsPlanRecurringFee carry the commitment's unused part (committed, Unused);
  Fee, SavingsPlanUpfrontFee and SavingsPlanNegation are purchases (already amortized into the
  covered lines' effective cost, so they add nothing to effective cost); Tax, Credit, Refund as named.
- effective cost: `reservation_effective_cost` for DiscountedUsage, `savings_plan_savings_plan_effective_cost`
  for SavingsPlanCoveredUsage, the unused amortized fee on RIFee / SavingsPlanRecurringFee lines,
  0 for purchases, else `line_item_unblended_cost`.
- pricing category from the usage type: SpotUsage -> spot; DiscountedUsage / SavingsPlanCoveredUsage ->
  committed; BoxUsage -> on_demand; anything else other.
- tags from `resource_tags` (a map); CUR prefixes user tags with `user_`, which is dropped.
"""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import pandas as pd

from billing.imports import cells
from billing.imports.chunks import header, read_chunks
from billing.imports.column_maps import (
    LEGACY_CUR,
    LEGACY_TAG_PREFIX,
    file_column_errors,
    legacy_tags_json,
    looks_like_legacy_cur,
    renamed,
)
from billing.imports.providers import aws_usage_instance_type
from billing.imports.records import LINE_ID, NORMALIZED_COLUMNS

REQUIRED = [
    "line_item_usage_start_date",
    "line_item_usage_end_date",
    "line_item_line_item_type",
    "line_item_usage_type",
    "line_item_unblended_cost",
    "line_item_currency_code",
]
OPTIONAL = [
    "product_instance_type",
    "savings_plan_savings_plan_effective_cost",
    "reservation_effective_cost",
    "line_item_usage_amount",
    "resource_tags",
    "line_item_resource_id",
    "product_region_code",
    "product_region",
    "line_item_availability_zone",
    "line_item_usage_account_id",
    "bill_payer_account_id",
    "line_item_usage_account_name",
    "pricing_public_on_demand_cost",
    "line_item_product_code",
    "bill_billing_period_start_date",
    "reservation_reservation_a_r_n",
    "savings_plan_savings_plan_a_r_n",
    "reservation_unused_amortized_upfront_fee_for_billing_period",
    "reservation_unused_recurring_fee",
    "savings_plan_total_commitment_to_date",
    "savings_plan_used_commitment",
    "product_product_family",
    "reservation_end_time",
    "savings_plan_end_time",
    "savings_plan_instance_type_family",
    "savings_plan_offering_type",
    "identity_line_item_id",
]
# savings_plan_offering_type (CUR data dictionary) -> the commitment's kind as the review lists it
SAVINGS_PLAN_KINDS = {
    "ComputeSavingsPlans": "Compute Savings Plan",
    "EC2InstanceSavingsPlans": "EC2 Instance Savings Plan",
    "SageMakerSavingsPlans": "SageMaker Savings Plan",
}
LINE_TYPES = {
    "Usage": "usage",
    "DiscountedUsage": "usage",
    "SavingsPlanCoveredUsage": "usage",
    "RIFee": "usage",
    "SavingsPlanRecurringFee": "usage",
    "Fee": "purchase",
    "SavingsPlanUpfrontFee": "purchase",
    "SavingsPlanNegation": "purchase",
    "Tax": "tax",
    "Credit": "credit",
    "Refund": "credit",
    "BundledDiscount": "credit",
    "Discount": "credit",
    "EdpDiscount": "credit",
    "PrivateRateDiscount": "credit",
}
SIGNATURE = {"line_item_usage_type", "line_item_unblended_cost", "line_item_line_item_type"}  # any one
# The file's column behind each normalized one, for errors found once rows are normalized (store.py)
SOURCE_COLUMNS = {
    "charge_period_start": "line_item_usage_start_date",
    "charge_period_end": "line_item_usage_end_date",
    "billing_account_id": "bill_payer_account_id",
    "sub_account_id": "line_item_usage_account_id",
    "sub_account_name": "line_item_usage_account_name",
    "region": "product_region_code",
    "availability_zone": "line_item_availability_zone",
    "resource_id": "line_item_resource_id",
    "resource_type": "product_product_family",
    "service_category": "line_item_product_code",
    "sku_id": "line_item_usage_type",
    "instance_type": "product_instance_type",
    "commitment_discount_id": "reservation_reservation_a_r_n",
    "consumed_quantity": "line_item_usage_amount",
    "currency": "line_item_currency_code",
    "billed_cost": "line_item_unblended_cost",
}


def looks_like_cur(columns: list[str]) -> bool:
    return bool(SIGNATURE & set(columns)) or looks_like_legacy_cur(columns)


def source_columns(columns: list[str]) -> dict[str, str]:
    """SOURCE_COLUMNS as this file spells them (a legacy CUR's slash-style headers)."""
    if not looks_like_legacy_cur(columns):
        return SOURCE_COLUMNS
    legacy = {name: header for header, name in LEGACY_CUR.items()}
    return {column: legacy.get(name, name) for column, name in SOURCE_COLUMNS.items()}


def read_cur(path: Path, *, provider: str = "aws", chunk_rows: int = 50_000) -> Iterator[pd.DataFrame]:
    file = str(path)
    present = header(path)
    if looks_like_legacy_cur(present):
        yield from _read_legacy(path, present, provider=provider, chunk_rows=chunk_rows)
        return
    cells.require_columns(present, REQUIRED, file=file)
    for first_row, raw in read_chunks(path, REQUIRED + OPTIONAL, chunk_rows=chunk_rows):
        yield _normalize(raw, first_row=first_row, file=file, provider=provider)


def _read_legacy(path: Path, present: list[str], *, provider: str, chunk_rows: int) -> Iterator[pd.DataFrame]:
    """A legacy CUR (slash-style headers) read as its CUR 2.0 twin: the columns renamed by the one
    map (column_maps.LEGACY_CUR), the `resourceTags/*` columns gathered into `resource_tags`; errors
    name the file's own headers."""
    file = str(path)
    legacy = {name: header for header, name in LEGACY_CUR.items()}
    cells.require_columns(present, [legacy[name] for name in REQUIRED], file=file)
    file_of = {LEGACY_CUR[h]: h for h in present if h in LEGACY_CUR}
    tag_headers = [h for h in present if h.startswith(LEGACY_TAG_PREFIX)]
    if tag_headers:
        file_of["resource_tags"] = tag_headers[0]
    wanted = [file_of.get(name, name) for name in REQUIRED + OPTIONAL if name != "resource_tags"]
    for first_row, raw in read_chunks(path, wanted + tag_headers, chunk_rows=chunk_rows):
        frame = renamed(raw[wanted], file_of)
        frame["resource_tags"] = legacy_tags_json(raw, tag_headers)
        with file_column_errors(file_of):
            normalized = _normalize(frame, first_row=first_row, file=file, provider=provider)
        yield normalized


def _decimal_text(series: pd.Series) -> pd.Series:
    return series.where(series != "", "0")


def _normalize(raw: pd.DataFrame, *, first_row: int, file: str, provider: str) -> pd.DataFrame:
    where = {"file": file, "first_row": first_row}
    line_type = raw["line_item_line_item_type"].str.strip()
    usage_type = raw["line_item_usage_type"].str.strip()
    out = pd.DataFrame(index=raw.index)
    out["source_row"] = range(first_row, first_row + len(raw))
    out["charge_period_start"] = cells.timestamps(raw, "line_item_usage_start_date", **where)
    out["charge_period_end"] = cells.timestamps(raw, "line_item_usage_end_date", **where)
    out["billing_period_start"] = cells.timestamps(
        raw, "bill_billing_period_start_date", required=False, **where
    )
    out["charge_category"] = cells.choice(raw, "line_item_line_item_type", LINE_TYPES, **where)
    out["is_correction"] = False
    out["provider"] = provider
    out["billing_account_id"] = raw["bill_payer_account_id"]
    out["sub_account_id"] = raw["line_item_usage_account_id"]
    out["sub_account_name"] = raw["line_item_usage_account_name"]
    out["region"] = raw["product_region_code"].where(raw["product_region_code"] != "", raw["product_region"])
    out["availability_zone"] = raw["line_item_availability_zone"]
    out["resource_id"] = raw["line_item_resource_id"]
    out["resource_type"] = raw["product_product_family"]
    out["service_category"] = raw["line_item_product_code"]
    out["sku_id"] = usage_type
    parsed = usage_type.map({value: aws_usage_instance_type(value) for value in pd.unique(usage_type)})
    named = raw["product_instance_type"].str.strip()
    is_instance = parsed != ""
    out["instance_type"] = named.where((named != "") & is_instance, parsed)
    spot = usage_type.str.contains("SpotUsage", regex=False)
    committed = line_type.isin(
        ["DiscountedUsage", "SavingsPlanCoveredUsage", "RIFee", "SavingsPlanRecurringFee"]
    )
    box = usage_type.str.contains("BoxUsage", regex=False) & (line_type == "Usage")
    out["pricing_category"] = "other"
    out.loc[box, "pricing_category"] = "on_demand"
    out.loc[spot, "pricing_category"] = "spot"
    out.loc[committed, "pricing_category"] = "committed"
    unused = line_type.isin(["RIFee", "SavingsPlanRecurringFee"])
    out["commitment_discount_id"] = raw["reservation_reservation_a_r_n"].where(
        raw["reservation_reservation_a_r_n"] != "", raw["savings_plan_savings_plan_a_r_n"]
    )
    out["commitment_status"] = ""
    out.loc[line_type.isin(["DiscountedUsage", "SavingsPlanCoveredUsage"]), "commitment_status"] = "used"
    out.loc[unused, "commitment_status"] = "unused"
    out["consumed_quantity"] = cells.numbers(
        raw, "line_item_usage_amount", required=False, limit=cells.QUANTITY_LIMIT, **where
    )
    out["consumed_unit"] = ""
    out.loc[is_instance & ~unused, "consumed_unit"] = "Hours"
    unblended = cells.numbers(raw, "line_item_unblended_cost", **where)
    out["billed_cost"] = unblended
    effective = unblended.copy()
    ri = _decimal_text(cells.numbers(raw, "reservation_effective_cost", required=False, **where))
    sp = _decimal_text(
        cells.numbers(raw, "savings_plan_savings_plan_effective_cost", required=False, **where)
    )
    effective[line_type == "DiscountedUsage"] = ri[line_type == "DiscountedUsage"]
    effective[line_type == "SavingsPlanCoveredUsage"] = sp[line_type == "SavingsPlanCoveredUsage"]
    effective[out["charge_category"] == "purchase"] = "0"
    if unused.any():
        effective[unused] = _unused_commitment_cost(raw, unused, where)
    out["effective_cost"] = effective
    out["list_cost"] = cells.numbers(raw, "pricing_public_on_demand_cost", required=False, **where)
    out["contracted_cost"] = ""
    out["currency"] = cells.currencies(raw, "line_item_currency_code", **where)
    tags = cells.json_objects(raw, "resource_tags", **where)
    out["tags"] = tags.map(lambda t: {str(k).removeprefix("user_"): v for k, v in t.items()})
    _commitment_terms(raw, out, where)
    out["is_refund"] = (line_type == "Refund").to_numpy(bool)  # a credit of its own on the invoice view
    out[LINE_ID] = raw["identity_line_item_id"].str.strip()  # in the row key only (keys.py)
    return out[[*NORMALIZED_COLUMNS, LINE_ID]]


def _commitment_terms(raw: pd.DataFrame, out: pd.DataFrame, where: dict) -> None:
    """Kind, scope (instance family) and end of each row's commitment: a reservation is scoped to its
    own instance type's family; a savings plan to `savings_plan_instance_type_family` (EC2 Instance
    Savings Plans; none for Compute ones)."""
    reservation = raw["reservation_reservation_a_r_n"] != ""
    plan = ~reservation & (raw["savings_plan_savings_plan_a_r_n"] != "")
    offering = raw["savings_plan_offering_type"].str.strip()
    out["commitment_type"] = ""
    out.loc[plan, "commitment_type"] = offering[plan].map(lambda o: SAVINGS_PLAN_KINDS.get(o, "Savings Plan"))
    out.loc[reservation, "commitment_type"] = "Reservation"
    out["commitment_family"] = ""
    families = out["instance_type"].astype(str).str.split(".").str[0]
    out.loc[reservation, "commitment_family"] = families[reservation]
    out.loc[plan, "commitment_family"] = raw["savings_plan_instance_type_family"].str.strip()[plan]
    ri_end = cells.timestamps(raw, "reservation_end_time", required=False, **where)
    sp_end = cells.timestamps(raw, "savings_plan_end_time", required=False, **where)
    out["commitment_end"] = ri_end.where(reservation, sp_end.where(plan))


def _unused_commitment_cost(raw: pd.DataFrame, unused: pd.Series, where: dict) -> list[str]:
    """RIFee: unused amortized upfront + unused recurring fee; SP recurring fee: commitment - used.
    Checked on the whole chunk so that a bad cell is named by its own row."""
    columns = [
        "reservation_unused_amortized_upfront_fee_for_billing_period",
        "reservation_unused_recurring_fee",
        "savings_plan_total_commitment_to_date",
        "savings_plan_used_commitment",
    ]
    upfront, recurring, total, used = (
        cells.numbers(raw, c, required=False, **where)[unused] for c in columns
    )
    costs = []
    kinds = raw["line_item_line_item_type"][unused]
    for kind, u, r, t, s in zip(kinds, upfront, recurring, total, used, strict=True):
        if kind.strip() == "RIFee":
            costs.append(str(Decimal(u or "0") + Decimal(r or "0")))
        else:
            costs.append(str(Decimal(t or "0") - Decimal(s or "0")))
    return costs
