"""AWS legacy CUR (slash-style headers) reads as its CUR 2.0 twin (issue 22, section 1).

AWS's public legacy CUR sample is not in the project; these rows are built here in the shape the CUR
data dictionary gives each line type (https://docs.aws.amazon.com/cur/latest/userguide/
table-dictionary-cur2-*.html), and written twice: under CUR 2.0 names with a `resource_tags` map, and
under the legacy headers (column_maps.LEGACY_CUR) with one `resourceTags/user:team` column. Hand totals,
May 2026 (rates: p5.48xlarge 55.04/h and p4d.24xlarge's reservation at 13.50/h effective):
  GPU usage: p5 2 h 110.08 + p4d reserved 1 h 13.50 + g6e.xlarge under a Compute SP 0.64 = 124.22
  GPU-scoped unused: the p4d reservation's RIFee 20.25 + 6.75 = 27.00, and an EC2 Instance SP for the g6
    family with nothing used, 2.00 - 0 = 2.00;
  the Compute SP's unused 1.00 - 0.70 = 0.30, of which its used cost on GPU rows 0.64 / 0.70:
    0.30 x 0.64 / 0.70 = 0.274286 to GPU, 0.025714 unattributed;
  GPU effective = 124.22 + 29.00 + 0.274286 = 153.494286 -> 153.49 over 16 + 8 + 1 = 25 GPU-hours;
  non-GPU = m7i.large under the SP 0.06 + EBS 3.20 + tax 7.50 = 10.76; unattributed 0.03;
  153.494286 + 10.76 + 0.025714 = 164.28 = every line's effective cost.
  Utilization: reservation 13.50 / 40.50 = 33.3%, Compute SP 0.70 / 1.00 = 70.0%, g6 SP 0.0%.
  Coverage: 8 + 1 committed of 25 GPU-hours = 36.0%.
"""

from __future__ import annotations

import csv
import datetime as dt
import gzip
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from billing.imports.column_maps import LEGACY_CUR, legacy_cur_name
from billing.imports.importer import import_file, import_files
from billing.imports.records import BillingFileError
from billing.models import BillingImport
from billing.review.engine import ReviewRequest
from billing.review.service import _build_review
from tests.billing.catalog import make_catalog

pytestmark = pytest.mark.django_db
RI = "arn:aws:ec2:us-east-1:123456789012:reserved-instances/11111111-ri-p4d"
SP = "arn:aws:savingsplans::123456789012:savingsplan/sp-compute-0001"
SP_G6 = "arn:aws:savingsplans::123456789012:savingsplan/sp-ec2-g6-0002"
COLUMNS = [
    "identity_line_item_id",
    "bill_payer_account_id",
    "line_item_usage_account_id",
    "line_item_line_item_type",
    "line_item_usage_start_date",
    "line_item_usage_end_date",
    "line_item_product_code",
    "line_item_usage_type",
    "line_item_usage_amount",
    "line_item_currency_code",
    "line_item_unblended_cost",
    "line_item_net_unblended_cost",
    "line_item_resource_id",
    "product_instance_type",
    "product_region",
    "pricing_term",
    "reservation_reservation_a_r_n",
    "reservation_effective_cost",
    "reservation_end_time",
    "reservation_unused_amortized_upfront_fee_for_billing_period",
    "reservation_unused_recurring_fee",
    "savings_plan_savings_plan_a_r_n",
    "savings_plan_savings_plan_effective_cost",
    "savings_plan_total_commitment_to_date",
    "savings_plan_used_commitment",
    "savings_plan_end_time",
    "savings_plan_instance_type_family",
    "savings_plan_offering_type",
]
H0, H1, H2 = "2026-05-01T00:00:00Z", "2026-05-01T01:00:00Z", "2026-05-01T02:00:00Z"
MONTH_END = "2026-06-01T00:00:00Z"
RI_TERMS = {"reservation_reservation_a_r_n": RI, "reservation_end_time": "2026-07-15T00:00:00Z"}
SP_TERMS = {
    "savings_plan_savings_plan_a_r_n": SP,
    "savings_plan_end_time": "2027-05-01T00:00:00Z",
    "savings_plan_offering_type": "ComputeSavingsPlans",
}
G6_TERMS = {
    "savings_plan_savings_plan_a_r_n": SP_G6,
    "savings_plan_end_time": "2026-08-01T00:00:00Z",
    "savings_plan_offering_type": "EC2InstanceSavingsPlans",
    "savings_plan_instance_type_family": "g6",
}
LINES = [
    (
        {
            "line_item_line_item_type": "Usage",
            "line_item_usage_type": "USE1-BoxUsage:p5.48xlarge",
            "product_instance_type": "p5.48xlarge",
            "line_item_usage_amount": "2",
            "line_item_unblended_cost": "110.08",
            "line_item_resource_id": "i-0p5",
            "line_item_usage_end_date": H2,
            "pricing_term": "OnDemand",
        },
        "ml",
    ),
    (
        {
            "line_item_line_item_type": "DiscountedUsage",
            "line_item_usage_type": "USE1-BoxUsage:p4d.24xlarge",
            "product_instance_type": "p4d.24xlarge",
            "line_item_usage_amount": "1",
            "line_item_unblended_cost": "0",
            "reservation_effective_cost": "13.50",
            "line_item_resource_id": "i-0p4d",
            "pricing_term": "Reserved",
            **RI_TERMS,
        },
        "ml",
    ),
    (
        {
            "line_item_line_item_type": "RIFee",
            "line_item_usage_type": "USE1-HeavyUsage:p4d.24xlarge",
            "product_instance_type": "p4d.24xlarge",
            "line_item_usage_amount": "720",
            "line_item_unblended_cost": "9720",
            "reservation_unused_amortized_upfront_fee_for_billing_period": "20.25",
            "reservation_unused_recurring_fee": "6.75",
            "line_item_usage_end_date": MONTH_END,
            **RI_TERMS,
        },
        "",
    ),
    (
        {
            "line_item_line_item_type": "SavingsPlanCoveredUsage",
            "line_item_usage_type": "USE1-BoxUsage:g6e.xlarge",
            "product_instance_type": "g6e.xlarge",
            "line_item_usage_amount": "1",
            "line_item_unblended_cost": "1.861",
            "savings_plan_savings_plan_effective_cost": "0.64",
            "line_item_resource_id": "i-0g6e",
            **SP_TERMS,
        },
        "research",
    ),
    (
        {
            "line_item_line_item_type": "SavingsPlanCoveredUsage",
            "line_item_usage_type": "USE1-BoxUsage:m7i.large",
            "product_instance_type": "m7i.large",
            "line_item_usage_amount": "1",
            "line_item_unblended_cost": "0.1008",
            "savings_plan_savings_plan_effective_cost": "0.06",
            "line_item_resource_id": "i-0m7i",
            **SP_TERMS,
        },
        "web",
    ),
    (
        {
            "line_item_line_item_type": "SavingsPlanRecurringFee",
            "line_item_usage_type": "ComputeSP:1yrNoUpfront",
            "line_item_unblended_cost": "1.00",
            "savings_plan_total_commitment_to_date": "1.00",
            "savings_plan_used_commitment": "0.70",
            **SP_TERMS,
        },
        "",
    ),
    (
        {
            "line_item_line_item_type": "SavingsPlanRecurringFee",
            "line_item_usage_type": "EC2SP:g6.1yrNoUpfront",
            "line_item_unblended_cost": "2.00",
            "savings_plan_total_commitment_to_date": "2.00",
            "savings_plan_used_commitment": "0",
            **G6_TERMS,
        },
        "",
    ),
    (
        {
            "line_item_line_item_type": "Usage",
            "line_item_usage_type": "USE1-EBS:VolumeUsage.gp3",
            "line_item_product_code": "AmazonEC2",
            "line_item_usage_amount": "40",
            "line_item_unblended_cost": "3.20",
            "line_item_resource_id": "vol-0abc",
            "line_item_usage_end_date": MONTH_END,
        },
        "ml",
    ),
    (
        {
            "line_item_line_item_type": "Tax",
            "line_item_usage_type": "",
            "line_item_unblended_cost": "7.50",
            "line_item_product_code": "AmazonEC2",
            "line_item_usage_end_date": MONTH_END,
        },
        "",
    ),
]


def _rows() -> list[tuple[dict, str]]:
    common = {
        "bill_payer_account_id": "123456789012",
        "line_item_usage_account_id": "210987654321",
        "line_item_usage_start_date": H0,
        "line_item_usage_end_date": H1,
        "line_item_currency_code": "USD",
        "line_item_product_code": "AmazonEC2",
        "product_region": "us-east-1",
    }
    out = []
    for number, (line, team) in enumerate(LINES, start=1):
        row = dict.fromkeys(COLUMNS, "") | common | line | {"identity_line_item_id": f"li-{number:04d}"}
        row["line_item_net_unblended_cost"] = row["line_item_unblended_cost"]
        out.append((row, team))
    return out


def write_cur2(path):
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow([*COLUMNS, "resource_tags"])
        for row, team in _rows():
            writer.writerow([row[c] for c in COLUMNS] + [json.dumps({"user_team": team} if team else {})])
    return path


def legacy_table() -> tuple[list[str], list[list[str]]]:
    legacy = {name: header for header, name in LEGACY_CUR.items()}
    header = [legacy[c] for c in COLUMNS] + ["resourceTags/user:team"]
    return header, [[row[c] for c in COLUMNS] + [team] for row, team in _rows()]


def write_legacy(path, kind="csv"):
    header, rows = legacy_table()
    if kind == "parquet":
        pq.write_table(pa.table({name: [r[i] for r in rows] for i, name in enumerate(header)}), path)
        return path
    opener = gzip.open if kind == "gzip" else open
    with opener(path, "wt", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def review_of(path) -> dict:
    BillingImport.objects.all().delete()
    result = import_file(path)
    assert (result.inserted, result.rejected) == (len(LINES), 0)
    return _build_review(ReviewRequest(start=dt.date(2026, 5, 1), end=dt.date(2026, 6, 1)))


def test_the_map_follows_aws_naming_rule():
    """Every entry of the one map is AWS's rule (category and name in snake case, each capital a word)."""
    assert {header: legacy_cur_name(header) for header in LEGACY_CUR} == LEGACY_CUR
    assert legacy_cur_name("savingsPlan/SavingsPlanARN") == "savings_plan_savings_plan_a_r_n"


@pytest.mark.parametrize("kind", ["csv", "gzip", "parquet"])
def test_a_legacy_cur_gives_its_cur2_twin_review_to_the_cent(tmp_path, kind):
    make_catalog()
    twin = review_of(write_cur2(tmp_path / "cur2.csv"))
    legacy = review_of(write_legacy(tmp_path / f"legacy.{kind}", kind))
    assert legacy == twin
    assert twin["totals"]["effective_cost"] == "153.49"
    assert twin["totals"]["gpu_hours"] == "25.00"
    assert (twin["non_gpu_cost"], twin["unattributed_commitment_cost"]) == ("10.76", "0.03")
    assert {t["team"]: t["effective_cost"] for t in twin["by_team"]} == {
        "(untagged)": "29.27",
        "ml": "123.58",
        "research": "0.64",
    }  # 27.00 + 2.00 + 0.274286 unused; 110.08 + 13.50; 0.64
    plans = {c["commitment_id"]: c for c in twin["commitments"]["by_commitment"]}
    assert {k: (c["type"], c["utilization_pct"]) for k, c in plans.items()} == {
        RI: ("Reservation", "33.3"),
        SP: ("Compute Savings Plan", "70.0"),
        SP_G6: ("EC2 Instance Savings Plan", "0.0"),
    }
    assert plans[SP_G6]["attribution"] == "gpu capacity" and plans[SP_G6]["instance_family"] == "g6"
    assert twin["commitments"]["totals"]["coverage_pct"] == "36.0"
    expiring = twin["commitments"]["expiring"]["commitments"]
    # from 2026-06-01: the reservation ends 2026-07-15 (44 days), the g6 plan 2026-08-01 (61 days)
    assert [(c["commitment_id"], c["days_left"]) for c in expiring] == [(RI, 44), (SP_G6, 61)]


def test_a_legacy_file_missing_a_column_names_it_as_the_file_spells_it(tmp_path):
    header, rows = legacy_table()
    drop = header.index("lineItem/UsageStartDate")
    path = tmp_path / "cut.csv"
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header[:drop] + header[drop + 1 :])
        writer.writerows([r[:drop] + r[drop + 1 :] for r in rows])
    with pytest.raises(BillingFileError) as error:
        import_file(path)
    assert (
        str(error.value)
        == f"{path}:1:lineItem/UsageStartDate: missing required column(s): lineItem/UsageStartDate"
    )
    assert import_files([path], fmt="focus").errors == [
        f"{path}: this is an AWS legacy CUR export, not a FOCUS export (--format focus)"
    ]


def test_a_bad_legacy_cell_is_named_by_the_files_header_and_nothing_is_stored(tmp_path):
    make_catalog()
    header, rows = legacy_table()
    rows[3][header.index("lineItem/UsageEndDate")] = "yesterday"
    path = tmp_path / "bad.csv"
    with open(path, "w", newline="") as handle:
        csv.writer(handle).writerows([header, *rows])
    result = import_files([path])
    assert result.errors == [f"{path}:5:lineItem/UsageEndDate: unparseable date 'yesterday'"]
    assert BillingImport.objects.count() == 0


def test_an_unrecognised_file_says_so(tmp_path):
    path = tmp_path / "other.csv"
    path.write_text("date,amount\n2026-05-01,3.00\n")
    assert import_files([path]).errors == [
        f"{path}: not a FOCUS, CUR (2.0 or legacy), Azure cost details or utilization file (no known header); "
        "give --format"
    ]
