"""CUR 2.0, Parquet, Prometheus and FOCUS details: each source becomes the same normalized spend rows."""

from __future__ import annotations

import json
from decimal import Decimal

import pandas as pd
import pytest

from billing.imports.cur import read_cur
from billing.imports.focus import read_focus
from billing.imports.importer import import_files
from billing.imports.utilization import hourly_frame
from billing.models import GpuUtilization
from tests.billing.catalog import make_catalog
from tests.billing.stored import stored_row, stored_rows

CUR_HEADER = [
    "line_item_usage_start_date",
    "line_item_usage_end_date",
    "line_item_line_item_type",
    "line_item_usage_type",
    "product_instance_type",
    "line_item_unblended_cost",
    "savings_plan_savings_plan_effective_cost",
    "reservation_effective_cost",
    "line_item_usage_amount",
    "line_item_currency_code",
    "resource_tags",
    "line_item_resource_id",
    "product_region_code",
    "reservation_unused_amortized_upfront_fee_for_billing_period",
    "reservation_unused_recurring_fee",
]
CUR_ROWS = [
    # on-demand p5 for 2 h at 55.04
    [
        "2026-05-01T00:00:00Z",
        "2026-05-01T02:00:00Z",
        "Usage",
        "USE1-BoxUsage:p5.48xlarge",
        "p5.48xlarge",
        "110.08",
        "",
        "",
        "2",
        "USD",
        '{"user_team": "ml"}',
        "i-1",
        "us-east-1",
        "",
        "",
    ],
    # savings-plan covered p4d hour: billed 21.957642 on demand, effective 13.17
    [
        "2026-05-01T00:00:00Z",
        "2026-05-01T01:00:00Z",
        "SavingsPlanCoveredUsage",
        "USE1-BoxUsage:p4d.24xlarge",
        "p4d.24xlarge",
        "21.957642",
        "13.17",
        "",
        "1",
        "USD",
        "{}",
        "i-2",
        "us-east-1",
        "",
        "",
    ],
    # spot L40S hour
    [
        "2026-05-01T00:00:00Z",
        "2026-05-01T01:00:00Z",
        "Usage",
        "USE1-SpotUsage:g6e.xlarge",
        "g6e.xlarge",
        "0.9154",
        "",
        "",
        "1",
        "USD",
        "{}",
        "i-3",
        "us-east-1",
        "",
        "",
    ],
    # reserved instance fee: 4.00 of it unused
    [
        "2026-05-01T00:00:00Z",
        "2026-06-01T00:00:00Z",
        "RIFee",
        "USE1-HeavyUsage:p4d.24xlarge",
        "p4d.24xlarge",
        "9000",
        "",
        "",
        "720",
        "USD",
        "{}",
        "",
        "us-east-1",
        "3.00",
        "1.00",
    ],
    # negation of the covered usage's on-demand amount: a purchase-side line with no effective cost
    [
        "2026-05-01T00:00:00Z",
        "2026-05-01T01:00:00Z",
        "SavingsPlanNegation",
        "USE1-BoxUsage:p4d.24xlarge",
        "p4d.24xlarge",
        "-21.957642",
        "",
        "",
        "1",
        "USD",
        "{}",
        "i-2",
        "us-east-1",
        "",
        "",
    ],
    [
        "2026-05-01T00:00:00Z",
        "2026-06-01T00:00:00Z",
        "Tax",
        "Tax",
        "",
        "7.50",
        "",
        "",
        "",
        "USD",
        "{}",
        "",
        "",
        "",
        "",
    ],
]


def test_cur_lines_map_to_categories_and_effective_costs(tmp_path):
    path = tmp_path / "cur.csv"
    pd.DataFrame(CUR_ROWS, columns=CUR_HEADER).to_csv(path, index=False)
    frame = pd.concat(read_cur(path))
    assert list(frame["pricing_category"]) == [
        "on_demand",
        "committed",
        "spot",
        "committed",
        "other",
        "other",
    ]
    assert list(frame["effective_cost"]) == ["110.08", "13.17", "0.9154", "4.00", "0", "7.50"]
    assert list(frame["commitment_status"]) == ["", "used", "", "unused", "", ""]
    assert list(frame["charge_category"]) == ["usage", "usage", "usage", "usage", "purchase", "tax"]
    assert frame["tags"].iloc[0] == {"team": "ml"}  # CUR's user_ prefix dropped
    assert list(frame["consumed_unit"])[:4] == ["Hours", "Hours", "Hours", ""]


@pytest.mark.django_db
def test_cur_parquet_with_map_tags_imports_like_csv(tmp_path):
    make_catalog()
    frame = pd.DataFrame(CUR_ROWS, columns=CUR_HEADER)
    frame["resource_tags"] = [json.loads(t).items() for t in frame["resource_tags"]]
    frame["resource_tags"] = frame["resource_tags"].map(list)
    frame["line_item_unblended_cost"] = frame["line_item_unblended_cost"].astype(float)
    path = tmp_path / "cur.parquet"
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.schema(
        [
            (
                c,
                pa.map_(pa.string(), pa.string())
                if c == "resource_tags"
                else (pa.float64() if c == "line_item_unblended_cost" else pa.string()),
            )
            for c in CUR_HEADER
        ]
    )
    pq.write_table(pa.Table.from_pandas(frame, schema=schema, preserve_index=False), path)
    result = import_files([path], fmt="cur")
    assert (result.inserted, result.errors) == (6, [])
    p5 = stored_row(resource_id="i-1")
    assert (p5.team, p5.gpu_hours, p5.effective_cost) == ("ml", Decimal(16), Decimal("110.08"))


FOCUS_HEADER = "ChargePeriodStart,ChargePeriodEnd,BillingPeriodStart,ChargeCategory,ChargeClass,BilledCost,EffectiveCost,BillingCurrency,ProviderName,PricingCategory,ConsumedQuantity,ConsumedUnit,RegionId,ResourceId,SkuPriceDetails,Tags"


@pytest.mark.django_db
def test_focus_parquet_correction_and_sku_price_details(tmp_path):
    make_catalog()
    rows = [
        [
            "2026-05-01T00:00:00Z",
            "2026-05-02T00:00:00Z",
            "2026-05-01T00:00:00Z",
            "Usage",
            "",
            "766.08",
            "766.08",
            "USD",
            "Lambda",
            "Standard",
            "24",
            "Hours",
            "us-east-1",
            "node-1",
            '{"InstanceType": "gpu_8x_h100_sxm5"}',
            '{"cost-center": "ml"}',
        ],
        # billed in June, correcting May 1st: a -100 delta that belongs to May
        [
            "2026-05-01T00:00:00Z",
            "2026-05-02T00:00:00Z",
            "2026-06-01T00:00:00Z",
            "Usage",
            "Correction",
            "-100",
            "-100",
            "USD",
            "Lambda",
            "Standard",
            "0",
            "Hours",
            "us-east-1",
            "node-1",
            '{"InstanceType": "gpu_8x_h100_sxm5"}',
            '{"cost-center": "ml"}',
        ],
    ]
    path = tmp_path / "focus.parquet"
    pd.DataFrame(rows, columns=FOCUS_HEADER.split(",")).to_parquet(path, index=False)
    assert import_files([path]).inserted == 2
    records = stored_rows()
    assert [r.is_correction for r in records] == [False, True]
    assert {r.team for r in records} == {"ml"}  # team falls back to cost-center
    assert records[0].gpu == "h100-sxm5-80gb" and records[0].gpu_hours == 24 * 8
    import datetime as dt

    from billing.review.service import build_review, make_request

    may = build_review(make_request(start=dt.date(2026, 5, 1), end=dt.date(2026, 6, 1)))
    assert may["totals"]["effective_cost"] == "666.08"  # 766.08 - 100, in the charge period corrected
    assert may["totals"]["effective_cost_per_gpu_hour"] == str(
        (Decimal("666.08") / 192).quantize(Decimal("0.000001"))
    )


def test_focus_sample_derived_from_the_spec(tmp_path):
    # Derived from the FOCUS 1.2 appendix "commitment discount usage scenario 3" (FinOps Open Cost and Usage
    # Specification (FOCUS), CC-BY-4.0), with BillingCurrency and ProviderName added: 0.75 used, 0.25 unused.
    text = (
        "ChargePeriodStart,ChargePeriodEnd,ChargeCategory,PricingCategory,ResourceId,BilledCost,EffectiveCost,"
        "ConsumedQuantity,ConsumedUnit,CommitmentDiscountId,CommitmentDiscountStatus,BillingCurrency\n"
        "2023-01-01T00:00:00Z,2023-01-01T01:00:00Z,Usage,Committed,<my-resource-id>,0.00,0.75,1.00,Hour,<id>,Used,USD\n"
        "2023-01-01T00:00:00Z,2023-01-01T01:00:00Z,Usage,Committed,<id>,0.00,0.25,null,null,<id>,Unused,USD\n"
    )
    path = tmp_path / "scenario3.csv"
    path.write_text(text)
    frame = pd.concat(read_focus(path, provider="aws"))
    assert list(frame["commitment_status"]) == ["used", "unused"]
    assert list(frame["consumed_quantity"]) == ["1.00", ""]  # the literal null is a missing value


@pytest.mark.django_db
def test_prometheus_range_query_hourly_means(tmp_path):
    body = {
        "status": "success",
        "data": {
            "resultType": "matrix",
            "result": [
                {
                    "metric": {"__name__": "DCGM_FI_DEV_GPU_UTIL", "gpu": "0", "Hostname": "node-1"},
                    "values": [[1777593600, "4"], [1777595400, "8"], [1777597200, "90"]],
                },
            ],
        },
    }
    path = tmp_path / "util.json"
    path.write_text(json.dumps(body))
    hourly = hourly_frame(path)
    # 1777593600 = 2026-05-01T00:00Z: samples 4 and 8 average to 6 in hour 0, 90 in hour 1
    assert list(hourly["utilization_pct"]) == [6.0, 90.0]
    assert import_files([path]).inserted == 2
    assert import_files([path]).unchanged == 2
    assert GpuUtilization.objects.count() == 2
