"""Hostile billing files: each ends in one clean error naming the file (and the line where there is
one) with the database unchanged, or in a clean import that stores the text exactly as given.

Covers every billing importer: FOCUS (CSV, gzip CSV, Parquet), AWS CUR 2.0 (CSV, Parquet) and GPU
utilization (DCGM CSV, Prometheus range-query JSON). Run on PostgreSQL too (DATABASE_URL): that is
where the COPY path's escaping of tabs, newlines, backslashes and \\N is exercised.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from billing.imports.importer import import_files
from billing.models import BillingImport, GpuUtilization
from tests.billing.catalog import make_catalog
from tests.billing.stored import stored_rows

pytestmark = pytest.mark.django_db
HYPOTHESIS = settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)

FOCUS_ROW = {
    "ChargePeriodStart": "2026-05-01T00:00:00Z",
    "ChargePeriodEnd": "2026-05-02T00:00:00Z",
    "ChargeCategory": "Usage",
    "BilledCost": "10.00",
    "EffectiveCost": "9.50",
    "BillingCurrency": "USD",
    "ProviderName": "AWS",
    "ConsumedQuantity": "24",
    "ConsumedUnit": "Hours",
    "x_UsageType": "USE1-BoxUsage:g6.xlarge",
    "BillingAccountId": "111122223333",
    "SubAccountId": "444455556666",
    "SubAccountName": "research",
    "RegionId": "us-east-1",
    "AvailabilityZone": "us-east-1a",
    "ResourceId": "i-0abc",
    "ResourceType": "Virtual Machine",
    "ServiceCategory": "Compute",
    "SkuId": "SKU1",
    "CommitmentDiscountId": "",
    "Tags": '{"team": "ml", "project": "llm"}',
}
# FOCUS text columns stored as written (the dataset column of each)
FOCUS_TEXT = {
    "BillingAccountId": "billing_account_id",
    "SubAccountId": "sub_account_id",
    "SubAccountName": "sub_account_name",
    "RegionId": "region",
    "AvailabilityZone": "availability_zone",
    "ResourceId": "resource_id",
    "ResourceType": "resource_type",
    "ServiceCategory": "service_category",
    "SkuId": "sku_id",
    "CommitmentDiscountId": "commitment_discount_id",
    "ConsumedUnit": "consumed_unit",
}
FOCUS_LIMITS = {"ResourceId": 500, "SubAccountName": 200, "RegionId": 100, "SkuId": 200, "ConsumedUnit": 50}
CUR_ROW = {
    "line_item_usage_start_date": "2026-05-01T00:00:00Z",
    "line_item_usage_end_date": "2026-05-01T01:00:00Z",
    "line_item_line_item_type": "Usage",
    "line_item_usage_type": "USE1-BoxUsage:g6.xlarge",
    "line_item_unblended_cost": "0.8048",
    "line_item_currency_code": "USD",
    "line_item_usage_amount": "1",
    "product_instance_type": "g6.xlarge",
    "line_item_resource_id": "i-0abc",
    "product_region_code": "us-east-1",
    "line_item_availability_zone": "us-east-1a",
    "line_item_usage_account_id": "444455556666",
    "bill_payer_account_id": "111122223333",
    "line_item_usage_account_name": "research",
    "line_item_product_code": "AmazonEC2",
    "product_product_family": "Compute Instance",
    "resource_tags": '{"user_team": "ml"}',
}
CUR_TEXT = {
    "line_item_resource_id": "resource_id",
    "line_item_availability_zone": "availability_zone",
    "line_item_usage_account_id": "sub_account_id",
    "bill_payer_account_id": "billing_account_id",
    "line_item_usage_account_name": "sub_account_name",
    "line_item_product_code": "service_category",
    "product_product_family": "resource_type",
    "product_region_code": "region",
}
DCGM_ROW = {
    "timestamp": "2026-05-01T00:00:00Z",
    "resource_id": "i-0abc",
    "gpu": "0",
    "DCGM_FI_DEV_GPU_UTIL": "55.5",
    "DCGM_FI_DEV_FB_USED": "1000",
}
INJECTIONS = [
    "a\tb",
    "line\nbreak",
    "cr\rlf",
    "back\\slash",
    "\\N",
    "\\",
    "trailing\\",
    '=HYPERLINK("http://x","y")',
    "+cmd|' /C calc'!A0",
    "@SUM(1+1)",
    "'; DROP TABLE billing_spendrecord; --",
    "1' OR '1'='1",
    '"quoted"',
    "comma, inside",
    "\x1f\x1e\x1d separators",
    "ünïcödé ✓ 中文",
    "  padded  ",
    "",
]
MISSING_MARKERS = {"null", "NULL", "None"}  # read as empty cells by design (chunks.py)


def write_csv(path: Path, rows: list[dict], *, gzipped: bool = False) -> Path:
    buffer = io.StringIO()
    # RFC 4180 line ends: the writer then quotes a field holding a lone \r as well as one holding \n
    writer = csv.DictWriter(buffer, fieldnames=list(rows[0]), lineterminator="\r\n")
    writer.writeheader()
    writer.writerows(rows)
    data = buffer.getvalue().encode()
    path.write_bytes(gzip.compress(data) if gzipped else data)
    return path


def write_parquet(path: Path, rows: list[dict], types: dict | None = None) -> Path:
    columns = {name: [row[name] for row in rows] for name in rows[0]}
    arrays = {name: pa.array(values, type=(types or {}).get(name)) for name, values in columns.items()}
    pq.write_table(pa.table(arrays), path)
    return path


def prometheus(values, labels=None) -> dict:
    metric = labels if labels is not None else {"instance_id": "i-0abc", "gpu": "0"}
    return {
        "status": "success",
        "data": {"resultType": "matrix", "result": [{"metric": metric, "values": values}]},
    }


def stored_counts() -> tuple[int, int, int]:
    return len(stored_rows()), BillingImport.objects.count(), GpuUtilization.objects.count()


def import_outcome(path: Path, fmt: str | None):
    """Import the file; an error must be one short line naming the file, with nothing stored."""
    before = stored_counts()
    result = import_files([path], fmt=fmt)
    if result.errors:
        assert len(result.errors) == 1
        message = result.errors[0]
        assert "\n" not in message and len(message) < 400, message
        assert message.startswith(f"{path}:"), message
        assert stored_counts() == before, message
    return result


def assert_error_at(path: Path, fmt: str | None, where: str, *fragments: str) -> str:
    result = import_outcome(path, fmt)
    assert result.errors, f"{path} imported: {result.line()}"
    message = result.errors[0]
    assert message.startswith(f"{path}:{where}"), message
    for fragment in fragments:
        assert fragment in message, message
    return message


# Random bytes and truncation ------------------------------------------------------------------


@HYPOTHESIS
@given(
    prefix=st.sampled_from(
        [b"", b"\x1f\x8b", b"PAR1", b"ChargePeriodStart,", b"timestamp,DCGM_FI_DEV_GPU_UTIL\n"]
    ),
    body=st.binary(max_size=600),
    fmt=st.sampled_from([None, "focus", "cur", "utilization"]),
    suffix=st.sampled_from([".csv", ".json", ".parquet", ".csv.gz"]),
)
def test_random_bytes_end_in_a_clean_error(tmp_path, prefix, body, fmt, suffix):
    path = tmp_path / f"random{suffix}"
    path.write_bytes(prefix + body)
    result = import_outcome(path, fmt)
    assert result.errors or result.inserted == 0  # random bytes hold no billing row


def good_files(tmp_path: Path) -> list[tuple[Path, str]]:
    focus_rows = [dict(FOCUS_ROW, ResourceId=f"i-{n}", Tags=f'{{"team": "t{n}"}}') for n in range(5)]
    cur_rows = [dict(CUR_ROW, line_item_resource_id=f"i-{n}") for n in range(5)]
    dcgm_rows = [dict(DCGM_ROW, timestamp=f"2026-05-01T0{n}:00:00Z") for n in range(5)]
    return [
        (write_csv(tmp_path / "focus.csv", focus_rows), "focus"),
        (write_csv(tmp_path / "cur.csv", cur_rows), "cur"),
        (write_csv(tmp_path / "dcgm.csv", dcgm_rows), "utilization"),
    ]


def test_a_file_cut_at_every_line_and_inside_every_line_imports_cleanly_or_fails_cleanly(tmp_path):
    for path, fmt in good_files(tmp_path):
        data = path.read_bytes()
        ends = [i + 1 for i, byte in enumerate(data) if byte == ord("\n")]
        cuts = sorted(
            {0, *ends, *(end - 7 for end in ends if end > 7), *(end - 30 for end in ends if end > 30)}
        )
        for cut in cuts:
            piece = tmp_path / f"cut-{cut}-{path.name}"
            piece.write_bytes(data[:cut])
            result = import_outcome(piece, fmt)
            if not result.errors:
                assert result.inserted + result.unchanged <= data[:cut].count(b"\n")


@pytest.mark.parametrize("kind", ["gzip", "parquet", "prometheus"])
def test_a_truncated_compressed_parquet_or_json_file_is_a_clean_error(tmp_path, kind):
    rows = [dict(FOCUS_ROW, ResourceId=f"i-{n}") for n in range(50)]
    if kind == "gzip":
        data = write_csv(tmp_path / "whole.csv.gz", rows, gzipped=True).read_bytes()
        name, fmt = "cut.csv.gz", "focus"
    elif kind == "parquet":
        data = write_parquet(tmp_path / "whole.parquet", rows).read_bytes()
        name, fmt = "cut.parquet", "focus"
    else:
        data = json.dumps(prometheus([[1777593600 + 60 * n, "50"] for n in range(50)])).encode()
        name, fmt = "cut.json", "utilization"
    for cut in range(1, len(data), max(len(data) // 25, 1)):
        path = tmp_path / name
        path.write_bytes(data[:cut])
        assert import_outcome(path, fmt).errors, cut


# Encodings and NUL bytes -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fmt", "row", "column"),
    [
        ("focus", FOCUS_ROW, "SubAccountName"),
        ("cur", CUR_ROW, "line_item_usage_account_name"),
        ("utilization", DCGM_ROW, "resource_id"),
    ],
)
def test_latin1_and_utf16_files_name_the_line(tmp_path, fmt, row, column):
    text = write_csv(tmp_path / "good.csv", [row, row, dict(row, **{column: "Zürich"})]).read_text()
    latin = tmp_path / "latin1.csv"
    latin.write_bytes(text.encode("latin-1"))  # the rest is ASCII: only line 4 differs from UTF-8
    assert_error_at(latin, fmt, "4:", "not UTF-8", "0xfc")
    utf16 = tmp_path / "utf16.csv"
    utf16.write_bytes(text.encode("utf-16"))
    assert import_outcome(utf16, fmt).errors


@pytest.mark.parametrize(
    ("fmt", "row", "column"),
    [
        ("focus", FOCUS_ROW, "ResourceId"),
        ("focus", FOCUS_ROW, "Tags"),
        ("cur", CUR_ROW, "line_item_resource_id"),
        ("utilization", DCGM_ROW, "resource_id"),
    ],
)
def test_a_nul_byte_names_the_line(tmp_path, fmt, row, column):
    value = '{"team": "m\x00l"}' if column == "Tags" else "i-\x00abc"
    path = write_csv(tmp_path / "nul.csv", [row, row, dict(row, **{column: value})])
    assert_error_at(path, fmt, "4:", "NUL")


def test_a_nul_in_a_parquet_string_or_a_json_escape_names_row_and_column(tmp_path):
    path = write_parquet(tmp_path / "nul.parquet", [FOCUS_ROW, dict(FOCUS_ROW, ResourceId="i-\x00")])
    assert_error_at(path, "focus", "3:ResourceId:", "NUL")
    escaped = write_csv(tmp_path / "escape.csv", [FOCUS_ROW, dict(FOCUS_ROW, Tags='{"team": "a\\u0000b"}')])
    assert_error_at(escaped, "focus", "3:Tags:", "NUL")
    surrogate = write_csv(tmp_path / "surrogate.csv", [dict(FOCUS_ROW, Tags='{"team": "\\ud800"}')])
    assert_error_at(surrogate, "focus", "2:Tags:", "surrogate")


# Huge numbers, NaN, infinity --------------------------------------------------------------------

HOSTILE_NUMBERS = [
    "1e308",
    "-1e308",
    "NaN",
    "nan",
    "inf",
    "-Infinity",
    "1e15",
    "9" * 80,
    "1_000",
    "0x10",
    "1e",
]


@pytest.mark.parametrize("value", HOSTILE_NUMBERS)
@pytest.mark.parametrize(
    ("fmt", "row", "column"),
    [
        ("focus", FOCUS_ROW, "BilledCost"),
        ("focus", FOCUS_ROW, "ConsumedQuantity"),
        ("cur", CUR_ROW, "line_item_unblended_cost"),
        ("cur", CUR_ROW, "line_item_usage_amount"),
        ("utilization", DCGM_ROW, "DCGM_FI_DEV_GPU_UTIL"),
        ("utilization", DCGM_ROW, "gpu"),
    ],
)
def test_a_huge_or_non_finite_number_names_row_and_column(tmp_path, fmt, row, column, value):
    path = write_csv(tmp_path / "numbers.csv", [row, dict(row, **{column: value})])
    assert_error_at(path, fmt, f"3:{column}:")


def test_a_quantity_that_overflows_gpu_hours_names_the_row(tmp_path):
    make_catalog()  # p5.48xlarge: 8 GPUs, so 2e11 instance-hours (storable) are 1.6e12 GPU-hours (not)
    row = dict(FOCUS_ROW, x_UsageType="USE1-BoxUsage:p5.48xlarge", ConsumedQuantity="200000000000")
    path = write_csv(tmp_path / "hours.csv", [FOCUS_ROW, row])
    assert_error_at(path, "focus", "3:ConsumedQuantity:", "GPU-hours")


def test_negative_hours_on_a_line_that_is_no_correction_name_the_row(tmp_path):
    path = write_csv(tmp_path / "negative.csv", [FOCUS_ROW, dict(FOCUS_ROW, ConsumedQuantity="-3")])
    assert_error_at(path, "focus", "3:ConsumedQuantity:", "negative")


def test_a_cur_line_ending_before_it_starts_names_the_row(tmp_path):
    path = write_csv(tmp_path / "cur.csv", [dict(CUR_ROW, line_item_usage_end_date="2026-04-30T00:00:00Z")])
    assert_error_at(path, "cur", "2:line_item_usage_end_date:", "ends before it starts")


def test_non_finite_parquet_floats_name_row_and_column(tmp_path):
    rows = [
        dict(FOCUS_ROW, BilledCost=10.0),
        dict(FOCUS_ROW, BilledCost=float("nan")),
        dict(FOCUS_ROW, BilledCost=float("inf")),
    ]
    path = write_parquet(tmp_path / "floats.parquet", rows, {"BilledCost": pa.float64()})
    assert_error_at(path, "focus", "3:BilledCost:", "not a number")
    path = write_parquet(
        tmp_path / "huge.parquet", [dict(FOCUS_ROW, BilledCost=1e308)], {"BilledCost": pa.float64()}
    )
    assert_error_at(path, "focus", "2:BilledCost:", "too large")


@pytest.mark.parametrize(
    "body",
    [
        prometheus([[1777593600, "NaN"]]),
        prometheus([[1777593600, "1e308"]]),
        prometheus([[1e308, "50"]]),
        prometheus([["NaN", "50"]]),
        prometheus([[1777593600]]),
        prometheus("values"),
        prometheus([[1777593600, "50"]], {"gpu": "0"}),
        prometheus([[1777593600, "50"]], {"instance_id": "i-1", "gpu": "x"}),
        prometheus([[1777593600, "50"]], {"instance_id": "i-1", "gpu": "99999999"}),
        prometheus([[1777593600, "50"]], {"instance_id": "i-\x00", "gpu": "0"}),
        prometheus([[1777593600, "50"]], {"instance_id": "r" * 501, "gpu": "0"}),
        {"data": {"result": "none"}},
        {"data": []},
        [],
        "text",
    ],
)
def test_a_hostile_prometheus_answer_is_a_clean_error(tmp_path, body):
    path = tmp_path / "prometheus.json"
    path.write_text(json.dumps(body))
    assert import_outcome(path, "utilization").errors


# Over-long text ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("column", "limit"), list(FOCUS_LIMITS.items()))
def test_over_long_text_is_refused_naming_row_and_column(tmp_path, column, limit):
    path = write_csv(tmp_path / "long.csv", [FOCUS_ROW, dict(FOCUS_ROW, **{column: "x" * (limit + 1)})])
    assert_error_at(path, "focus", f"3:{column}:", f"{limit + 1} characters long (at most {limit})")
    exact = write_csv(tmp_path / "exact.csv", [dict(FOCUS_ROW, **{column: "y" * limit})])
    assert import_outcome(exact, "focus").inserted == 1


def test_an_over_long_cur_resource_and_utilization_resource_are_refused(tmp_path):
    cur = write_csv(tmp_path / "cur.csv", [dict(CUR_ROW, line_item_resource_id="r" * 501)])
    assert_error_at(cur, "cur", "2:line_item_resource_id:", "501 characters long")
    dcgm = write_csv(tmp_path / "dcgm.csv", [DCGM_ROW, dict(DCGM_ROW, resource_id="r" * 501)])
    assert_error_at(dcgm, "utilization", "3:resource_id:", "over 500")


# Injection strings: stored exactly as written -------------------------------------------------

hostile_text = st.one_of(
    st.sampled_from(INJECTIONS),
    st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\x00"), max_size=30),
).filter(lambda text: text not in MISSING_MARKERS)


def stored(result, field: str) -> list:
    """The field of each row of the imports' datasets (every row of the file, however many were new)."""
    return [getattr(row, field) for row in stored_rows(imports=result.imports)]


@HYPOTHESIS
@given(
    column=st.sampled_from(sorted(FOCUS_TEXT)), text=hostile_text, kind=st.sampled_from(["csv", "parquet"])
)
def test_hostile_text_in_any_focus_text_column_is_stored_exactly(tmp_path, column, text, kind):
    rows = [dict(FOCUS_ROW, **{column: text}), dict(FOCUS_ROW, **{column: text})]
    rows[1]["ResourceId" if column == "SkuId" else "SkuId"] = "other"  # two distinct rows
    writer = write_parquet if kind == "parquet" else write_csv
    path = writer(tmp_path / f"text-{kind}.{kind}", rows)
    result = import_outcome(path, "focus")
    assert not result.errors, result.errors
    assert result.inserted + result.unchanged == 2  # unchanged: an earlier example stored the same rows
    assert stored(result, FOCUS_TEXT[column]) == [text] * 2
    again = import_outcome(path, "focus")
    assert (again.inserted, again.unchanged) == (0, 2)


@HYPOTHESIS
@given(column=st.sampled_from(sorted(CUR_TEXT)), text=hostile_text, kind=st.sampled_from(["csv", "parquet"]))
def test_hostile_text_in_any_cur_text_column_is_stored_exactly(tmp_path, column, text, kind):
    writer = write_parquet if kind == "parquet" else write_csv
    path = writer(tmp_path / f"cur.{kind}", [dict(CUR_ROW, **{column: text})])
    result = import_outcome(path, "cur")
    assert not result.errors, result.errors
    assert stored(result, CUR_TEXT[column]) == [text] * (result.inserted + result.unchanged)


@HYPOTHESIS
@given(
    team=hostile_text.filter(lambda t: t != "" and len(t) <= 100), key=st.sampled_from(["team", "project"])
)
def test_hostile_text_in_a_tag_is_stored_exactly_in_the_tags_and_the_team(tmp_path, team, key):
    path = write_csv(tmp_path / "tags.csv", [dict(FOCUS_ROW, Tags=json.dumps({key: team, "note": team}))])
    result = import_outcome(path, "focus")
    assert not result.errors, result.errors
    for record in stored_rows(imports=result.imports):
        assert record.tags == {key: team, "note": team}
        assert getattr(record, key) == team


@HYPOTHESIS
@given(resource=hostile_text.filter(lambda t: t.strip() != "" and t == t.strip()))
def test_hostile_text_in_a_utilization_resource_is_stored_exactly(tmp_path, resource):
    path = write_csv(tmp_path / "dcgm.csv", [dict(DCGM_ROW, resource_id=resource)])
    result = import_outcome(path, "utilization")
    assert not result.errors, result.errors
    assert GpuUtilization.objects.filter(resource_id=resource).exists()


def test_rows_stored_by_an_earlier_import_are_counted_once(tmp_path):
    rows = [dict(FOCUS_ROW, ResourceId=f"i-{n}", SkuId=text) for n, text in enumerate(INJECTIONS)]
    path = write_csv(tmp_path / "focus.csv", rows)
    assert import_outcome(path, "focus").inserted == len(rows)
    extra = write_csv(tmp_path / "more.csv", [*rows, dict(FOCUS_ROW, ResourceId="i-new")])
    result = import_outcome(extra, "focus")
    assert (result.inserted, result.unchanged) == (1, len(rows))
    assert sorted(row.resource_id for row in stored_rows() if row.sku_id not in INJECTIONS) == ["i-new"]
    assert len([row for row in stored_rows() if row.sku_id in INJECTIONS]) == len(rows)
