"""How each export spells its columns, mapped onto the names the readers use.

Two maps, one per source family (docs/billing.md, "Column maps"):

* **AWS legacy CUR** (the "Cost and Usage Reports" most accounts still export, CSV/gzip/Parquet):
  headers `category/CamelCaseName`. CUR 2.0 (AWS Data Exports) names the same columns in snake case,
  category first: `lineItem/UsageStartDate` is `line_item_usage_start_date`, `reservation/ReservationARN`
  is `reservation_reservation_a_r_n` (every capital its own word), per the AWS CUR data dictionary
  ("Migrating from CUR to Data Exports CUR 2.0", https://docs.aws.amazon.com/cur/latest/userguide/
  dataexports-migrate.html; column lists at .../table-dictionary-cur2-*.html). LEGACY_CUR is that map
  for every column cur.py reads; `legacy_cur_name` is the rule it follows (a test checks each entry).
  Legacy CUR writes each tag as its own column `resourceTags/user:team`; CUR 2.0 gathers them in the
  `resource_tags` map, keyed `user_team`: `legacy_tags_json` builds that map.
* **FOCUS** as each provider writes it: the spec's PascalCase (`BilledCost`), but also other cases and
  snake case (`billedcost`, `billed_cost`, `BILLED_COST`) from warehouses that fold or convert names.
  A header matches a FOCUS column when both are equal ignoring case and underscores (`focus_header_map`).

Errors are raised in the readers' names; `file_column_errors` puts the file's own header back into
the message so that the person fixing the file sees the column as their file spells it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

import pandas as pd

from billing.imports.codes import coded, tuple_codes
from billing.imports.records import BillingFileError

# legacy CUR header -> CUR 2.0 column (AWS CUR data dictionary; see the module docstring)
LEGACY_CUR = {
    "identity/LineItemId": "identity_line_item_id",
    "bill/PayerAccountId": "bill_payer_account_id",
    "bill/BillingPeriodStartDate": "bill_billing_period_start_date",
    "lineItem/UsageAccountId": "line_item_usage_account_id",
    "lineItem/UsageAccountName": "line_item_usage_account_name",
    "lineItem/LineItemType": "line_item_line_item_type",
    "lineItem/UsageStartDate": "line_item_usage_start_date",
    "lineItem/UsageEndDate": "line_item_usage_end_date",
    "lineItem/ProductCode": "line_item_product_code",
    "lineItem/UsageType": "line_item_usage_type",
    "lineItem/UsageAmount": "line_item_usage_amount",
    "lineItem/CurrencyCode": "line_item_currency_code",
    "lineItem/UnblendedCost": "line_item_unblended_cost",
    "lineItem/NetUnblendedCost": "line_item_net_unblended_cost",
    "lineItem/ResourceId": "line_item_resource_id",
    "lineItem/AvailabilityZone": "line_item_availability_zone",
    "product/instanceType": "product_instance_type",
    "product/region": "product_region",
    "product/regionCode": "product_region_code",
    "product/productFamily": "product_product_family",
    "pricing/term": "pricing_term",
    "pricing/publicOnDemandCost": "pricing_public_on_demand_cost",
    "reservation/ReservationARN": "reservation_reservation_a_r_n",
    "reservation/EffectiveCost": "reservation_effective_cost",
    "reservation/EndTime": "reservation_end_time",
    "reservation/UnusedAmortizedUpfrontFeeForBillingPeriod": "reservation_unused_amortized_upfront_fee_for_billing_period",
    "reservation/UnusedRecurringFee": "reservation_unused_recurring_fee",
    "savingsPlan/SavingsPlanARN": "savings_plan_savings_plan_a_r_n",
    "savingsPlan/SavingsPlanEffectiveCost": "savings_plan_savings_plan_effective_cost",
    "savingsPlan/TotalCommitmentToDate": "savings_plan_total_commitment_to_date",
    "savingsPlan/UsedCommitment": "savings_plan_used_commitment",
    "savingsPlan/EndTime": "savings_plan_end_time",
    "savingsPlan/InstanceTypeFamily": "savings_plan_instance_type_family",
    "savingsPlan/OfferingType": "savings_plan_offering_type",
}
LEGACY_TAG_PREFIX = "resourceTags/"
LEGACY_SIGNATURE = {"lineItem/UsageType", "lineItem/UnblendedCost", "lineItem/LineItemType"}  # any one


def legacy_cur_name(header: str) -> str:
    """The CUR 2.0 name of a legacy header by AWS's rule: category and name in snake case, each capital
    letter starting a word ("savingsPlan/SavingsPlanARN" -> "savings_plan_savings_plan_a_r_n")."""
    category, _, name = header.partition("/")
    words = [re.sub(r"(?<!^)([A-Z])", r"_\1", part).lower() for part in (category, name)]
    return "_".join(words)


def looks_like_legacy_cur(columns: list[str]) -> bool:
    return bool(LEGACY_SIGNATURE & set(columns))


# Oracle Cloud's own cost reports (not its FOCUS reports): `lineItem/referenceNo`, `product/service`,
# `cost/myCost` (https://docs.oracle.com/iaas/Content/Billing/Concepts/costusagereportsoverview.htm). Read
# as nothing here; said so by name, as an Azure cost details file is.
OCI_COST_REPORT_SIGNATURE = {"lineItem/referenceNo", "product/service", "cost/myCost"}


def looks_like_oci_cost_report(columns: list[str]) -> bool:
    return OCI_COST_REPORT_SIGNATURE <= {column.lstrip("\ufeff") for column in columns}


def legacy_tag_key(header: str) -> str:
    """`resourceTags/user:team` -> `user_team`, the key CUR 2.0's resource_tags map gives the tag."""
    return header.removeprefix(LEGACY_TAG_PREFIX).replace(":", "_", 1)


def legacy_tags_json(raw: pd.DataFrame, tag_headers: list[str]) -> pd.Series:
    """The legacy tag columns of a chunk as CUR 2.0's `resource_tags` text (a JSON object of the
    non-empty tags), built once per distinct combination of tag values."""
    if not tag_headers:
        return pd.Series([""] * len(raw), index=raw.index, dtype="str")
    codes, combos = tuple_codes(*(raw[h] for h in tag_headers))
    keys = [legacy_tag_key(h) for h in tag_headers]
    texts = [
        json.dumps({k: v for k, v in zip(keys, values, strict=True) if v != ""}, sort_keys=True)
        for values in combos
    ]
    return coded(codes, texts, raw.index).astype(str)


def _folded(name: str) -> str:
    return name.replace("_", "").lower()


def focus_header_map(present: list[str], wanted: list[str]) -> dict[str, str]:
    """FOCUS column -> the file's header for it, for the `wanted` columns the file has under some
    spelling (exact names first; then equal ignoring case and underscores)."""
    exact = set(present)
    folded = {}
    for name in present:
        folded.setdefault(_folded(name), name)
    found = {}
    for name in wanted:
        if name in exact:
            found[name] = name
        elif _folded(name) in folded:
            found[name] = folded[_folded(name)]
    return found


def renamed(frame: pd.DataFrame, file_of: Mapping[str, str]) -> pd.DataFrame:
    """A chunk read under the file's headers, with the readers' names."""
    back = {file_name: name for name, file_name in file_of.items() if file_name != name}
    return frame.rename(columns=back) if back else frame


@contextmanager
def file_column_errors(file_of: Mapping[str, str]) -> Iterator[None]:
    """Re-raise a BillingFileError naming a reader's column under the file's own header."""
    try:
        yield
    except BillingFileError as error:
        header = file_of.get(error.column or "")
        if not header or header == error.column:
            raise
        raise BillingFileError(error.file, error.message, row=error.row, column=header) from None
