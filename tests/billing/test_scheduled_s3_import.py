"""The scheduled import from where exports land (issue 28, item 3), against moto's S3.

The bucket holds AWS Data Exports' layout (docs.aws.amazon.com/cur/latest/userguide/dataexports-export-delivery.html):
`<prefix>/<export>/data/BILLING_PERIOD=YYYY-MM/…` and `<prefix>/<export>/metadata/BILLING_PERIOD=YYYY-MM/
<export>-Manifest.json` naming the run (`executionId`), the period and the files. The CUR 2.0 lines are
tests/billing/test_sources.py's, whose effective costs are hand-checked there: 110.08 + 13.17 + 0.9154
+ 4.00 + 0 + 7.50 = 135.6654 for May 2026.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
from decimal import Decimal

import boto3
import pytest
from moto import mock_aws

from billing.imports.importer import import_file
from billing.imports.s3_exports import ExportManifestError, parse_manifest
from billing.imports.scheduled import export_sources_sync
from billing.imports.scheduled_tasks import import_s3_exports
from billing.models import BillingExportDelivery, BillingExportSource, BillingImport
from billing.storage.duckdb_review import review_sums
from billing.storage.import_datasets import ImportDatasets
from scheduler.schedule import SCHEDULE
from tests.billing.catalog import make_catalog
from tests.billing.stored import stored_rows
from tests.billing.test_sources import CUR_HEADER, CUR_ROWS

pytestmark = pytest.mark.django_db
BUCKET, PREFIX, EXPORT = "billing-exports", "cur2", "gpu-cur"
WHEN = dt.datetime(2026, 6, 2, tzinfo=dt.UTC)


def cur_csv(rows) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(CUR_HEADER)
    writer.writerows(rows)
    return out.getvalue().encode()


def deliver(s3, month: str, execution_id: str, *bodies: bytes, order=None) -> None:
    """One Data Exports refresh of `month`: its data files (parts 00001, 00002, …, listed in the manifest
    in `order` of the parts, given), then its manifest rewritten in place."""
    folder = f"{PREFIX}/{EXPORT}/data/BILLING_PERIOD={month}/{execution_id}"
    keys = [f"{folder}/{EXPORT}-{number:05d}.csv" for number in range(1, len(bodies) + 1)]
    for data_key, body in zip(keys, bodies, strict=True):
        s3.put_object(Bucket=BUCKET, Key=data_key, Body=body)
    listed = [keys[number - 1] for number in order] if order else keys
    manifest = {
        "executionId": execution_id,
        "exportArn": f"arn:aws:bcm-data-exports:us-east-1:123456789012:export/{EXPORT}-0a1b",
        "exportName": EXPORT,
        "billingPeriod": {"start": f"{month}-01T00:00:00.000Z"},
        "dataFiles": [f"s3://{BUCKET}/{data_key}" for data_key in listed],
    }
    s3.put_object(
        Bucket=BUCKET,
        Key=f"{PREFIX}/{EXPORT}/metadata/BILLING_PERIOD={month}/{EXPORT}-Manifest.json",
        Body=json.dumps(manifest).encode(),
    )


@pytest.fixture
def s3(monkeypatch):
    for name, value in {
        "AWS_ACCESS_KEY_ID": "x",
        "AWS_SECRET_ACCESS_KEY": "x",
        "AWS_DEFAULT_REGION": "us-east-1",
    }.items():
        monkeypatch.setenv(name, value)
    with mock_aws():
        client = boto3.client("s3", region_name="us-east-1")
        client.create_bucket(Bucket=BUCKET)
        make_catalog()
        yield client


@pytest.fixture
def source(s3):
    return BillingExportSource.objects.create(
        name="gpu-cur", export_format="cur", bucket=BUCKET, prefix=f"{PREFIX}/{EXPORT}/", enabled=True
    )


def may_effective() -> Decimal:
    may = [
        row.effective_cost
        for row in stored_rows()
        if dt.datetime(2026, 5, 1, tzinfo=dt.UTC)
        <= row.charge_period_start
        < dt.datetime(2026, 6, 1, tzinfo=dt.UTC)
    ]
    return sum(may) if may else None


def test_it_is_off_until_a_source_is_enabled(s3):
    BillingExportSource.objects.create(name="off", export_format="cur", bucket=BUCKET)
    deliver(s3, "2026-05", "exec-1", cur_csv(CUR_ROWS))
    assert "off" in import_s3_exports()
    assert not BillingImport.objects.exists()


def test_it_is_declared_in_the_beat_schedule():
    assert any(job.task == "billing.import_s3_exports" for job in SCHEDULE)


def test_it_imports_a_month_once_and_a_second_run_imports_nothing(s3, source):
    deliver(s3, "2026-05", "exec-1", cur_csv(CUR_ROWS))
    first = export_sources_sync(s3=s3)["sources"][0]
    assert first["imported"] == ["2026-05 exec-1"] and first["restated"] == []
    assert may_effective() == Decimal("135.6654")
    imports = BillingImport.objects.count()
    second = export_sources_sync(s3=s3)["sources"][0]
    assert (second["imported"], second["known"]) == ([], 1)
    assert BillingImport.objects.count() == imports
    assert may_effective() == Decimal("135.6654")
    delivery = BillingExportDelivery.objects.get()
    assert (delivery.billing_month, delivery.rows, delivery.restated) == (dt.date(2026, 5, 1), 6, False)


def test_the_beat_task_itself_imports_once_replaces_a_restated_month_atomically_and_flags_it(
    s3, source, django_capture_on_commit_callbacks
):
    # The task as the beat runs it, in-process (the embedded default runs Celery eagerly; the suite's
    # eager_celery fixture does the same), with the enabled source above (the stop-46 outside audit, fix 2:
    # the task itself was run only with no source enabled). Figures: CUR_ROWS' May 135.6654 (hand-checked
    # in test_sources.py); June is its first line moved to June 1 (110.08, the p5 hour); the restated May
    # below 80.6254 (135.6654 - 110.08 + 55.04).
    deliver(s3, "2026-05", "exec-1", cur_csv(CUR_ROWS))
    june = [[value.replace("2026-05-01", "2026-06-01") for value in CUR_ROWS[0]]]
    deliver(s3, "2026-06", "exec-j", cur_csv(june))
    with django_capture_on_commit_callbacks(execute=True):
        first = import_s3_exports.apply().get()["sources"][0]
    assert (sorted(first["imported"]), first["restated"], first.get("error", "")) == (
        ["2026-05 exec-1", "2026-06 exec-j"],
        [],
        "",
    )
    assert may_effective() == Decimal("135.6654")
    imports = sorted(BillingImport.objects.values_list("pk", flat=True))
    with django_capture_on_commit_callbacks(execute=True):
        again = import_s3_exports.apply().get()["sources"][0]
    assert (again["imported"], again["restated"], again["known"]) == ([], [], 2)
    assert sorted(BillingImport.objects.values_list("pk", flat=True)) == imports
    # a restatement whose second part has a bad cell: the month stays whole as it was (one transaction)
    restated = [list(row) for row in CUR_ROWS]
    restated[0][1], restated[0][5], restated[0][8] = "2026-05-01T01:00:00Z", "55.04", "1"
    bad = [list(row) for row in CUR_ROWS[1:]]
    bad[1][5] = "not-a-number"
    deliver(s3, "2026-05", "exec-2", cur_csv(restated[:1]), cur_csv(bad))
    with django_capture_on_commit_callbacks(execute=True):
        failed = import_s3_exports.apply().get()["sources"][0]
    assert failed["restated"] == [] and "line_item_unblended_cost" in failed["error"]
    assert may_effective() == Decimal("135.6654")
    assert sorted(BillingImport.objects.values_list("pk", flat=True)) == imports
    may = (dt.date(2026, 5, 1), dt.date(2026, 6, 1))
    assert review_sums(ImportDatasets(), *may)["all_effective"] == 135_665_400
    # the good restatement, in two parts: replaces May whole, flagged; June untouched
    deliver(s3, "2026-05", "exec-3", cur_csv(restated[:1]), cur_csv(restated[1:]))
    with django_capture_on_commit_callbacks(execute=True):
        third = import_s3_exports.apply().get()["sources"][0]
    assert (third["imported"], third["restated"], third.get("error", "")) == (
        ["2026-05 exec-3"],
        ["2026-05 exec-3"],
        "",
    )
    assert may_effective() == Decimal("80.6254")
    assert review_sums(ImportDatasets(), *may)["all_effective"] == 80_625_400
    june_sums = review_sums(ImportDatasets(), dt.date(2026, 6, 1), dt.date(2026, 7, 1))["all_effective"]
    assert june_sums == 110_080_000
    flags = {
        d.delivery_id: (d.restated, d.replaced)
        for d in BillingExportDelivery.objects.filter(source=source, billing_month=dt.date(2026, 5, 1))
    }
    assert flags == {"exec-1": (False, True), "exec-3": (True, False)}
    with django_capture_on_commit_callbacks(execute=True):
        last = import_s3_exports.apply().get()["sources"][0]
    assert (last["imported"], last["restated"]) == ([], [])


def test_identical_lines_of_two_parts_of_a_delivery_are_two_charges_keyed_by_the_parts_own_number(
    s3, source, tmp_path
):
    # issue 28: parts 00001 and 00002 of one run hold the same lines: 2 x 135.6654 = 271.3308. Listed
    # part 2 first, they download as 00000-gpu-cur-00002.csv and 00001-gpu-cur-00001.csv: the key holds
    # the export's own part number, not the listing number before it
    deliver(s3, "2026-05", "exec-1", cur_csv(CUR_ROWS), cur_csv(CUR_ROWS), order=[2, 1])
    export_sources_sync(s3=s3)
    assert sorted(BillingImport.objects.values_list("file_name", "inserted")) == [
        ("00000-gpu-cur-00002.csv", 6),
        ("00001-gpu-cur-00001.csv", 6),
    ]
    assert may_effective() == Decimal("271.3308")
    for name, new_rows in (("gpu-cur-00002.csv", 0), ("gpu-cur-00001.csv", 0), ("gpu-cur-00003.csv", 6)):
        path = tmp_path / name  # the same lines, other bytes (a checksum of its own): read again
        path.write_bytes(cur_csv(CUR_ROWS).replace(b"\r\n", b"\n"))
        assert import_file(path, fmt="cur").inserted == new_rows, name


def test_a_restated_month_replaces_the_earlier_delivery_and_is_flagged(s3, source):
    deliver(s3, "2026-05", "exec-1", cur_csv(CUR_ROWS))
    export_sources_sync(s3=s3)
    # AWS restates May: the p5 line is now 1 h at 55.04 (135.6654 - 110.08 + 55.04 = 80.6254)
    restated = [list(row) for row in CUR_ROWS]
    restated[0][1], restated[0][5], restated[0][8] = "2026-05-01T01:00:00Z", "55.04", "1"
    deliver(s3, "2026-05", "exec-2", cur_csv(restated))
    run = export_sources_sync(s3=s3)["sources"][0]
    assert run["restated"] == ["2026-05 exec-2"]
    assert may_effective() == Decimal("80.6254")
    # the review's read path (the imports' Parquet through DuckDB) sees only the restated delivery
    may = (dt.date(2026, 5, 1), dt.date(2026, 6, 1))
    assert review_sums(ImportDatasets(), *may)["all_effective"] == 80_625_400
    old, new = BillingExportDelivery.objects.order_by("imported_at")
    assert (old.replaced, new.restated, new.replaced) == (True, True, False)
    assert not old.imports.exists()  # its import and rows are gone
    assert BillingImport.objects.count() == 1


def test_a_bad_restatement_leaves_the_month_as_it_was_and_says_why(s3, source):
    deliver(s3, "2026-05", "exec-1", cur_csv(CUR_ROWS))
    export_sources_sync(s3=s3)
    bad = [list(row) for row in CUR_ROWS]
    bad[2][5] = "not-a-number"
    deliver(s3, "2026-05", "exec-2", cur_csv(bad))
    run = export_sources_sync(s3=s3)["sources"][0]
    assert run["imported"] == [] and "line_item_unblended_cost" in run["error"]
    assert may_effective() == Decimal("135.6654")
    source.refresh_from_db()
    assert "line_item_unblended_cost" in source.last_error
    assert list(BillingExportDelivery.objects.values_list("delivery_id", "replaced")) == [("exec-1", False)]


def test_each_month_is_its_own_delivery_and_only_the_newest_manifest_counts(s3, source):
    deliver(s3, "2026-05", "exec-1", cur_csv(CUR_ROWS))
    june = [[value.replace("2026-05-01", "2026-06-01") for value in CUR_ROWS[0]]]
    deliver(s3, "2026-06", "exec-j", cur_csv(june))
    run = export_sources_sync(s3=s3)["sources"][0]
    assert sorted(run["imported"]) == ["2026-05 exec-1", "2026-06 exec-j"]


def test_a_legacy_cur_manifest_is_read_by_its_assembly_id():
    text = json.dumps(
        {
            "assemblyId": "20d5c2a1-b9f0-4a3e-8c1e-6a7d0b1f2e3c",
            "billingPeriod": {"start": "20260501T000000.000Z", "end": "20260601T000000.000Z"},
            "reportKeys": ["cur/gpu/20260501-20260601/20d5c2a1/gpu-00001.csv.gz"],
        }
    )
    delivery = parse_manifest("cur/gpu/20260501-20260601/gpu-Manifest.json", text, "b", WHEN)
    assert (delivery.delivery_id[:8], delivery.month, delivery.data_keys) == (
        "20d5c2a1",
        dt.date(2026, 5, 1),
        ("cur/gpu/20260501-20260601/20d5c2a1/gpu-00001.csv.gz",),
    )


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("{", "not JSON"),
        ('{"dataFiles": ["a"]}', "no executionId"),
        ('{"executionId": "e", "billingPeriod": {"start": "2026-05-01"}}', "names no data files"),
        (
            '{"executionId": "e", "dataFiles": ["s3://other/k"], "billingPeriod": {"start": "2026-05-01"}}',
            "bucket other",
        ),
    ],
)
def test_a_bad_manifest_names_its_key_and_what_is_wrong(text, says):
    with pytest.raises(ExportManifestError, match=says) as raised:
        parse_manifest("p/metadata/BILLING_PERIOD=2026-05/x-Manifest.json", text, "b", WHEN)
    assert str(raised.value).startswith("p/metadata/")


def test_status_and_the_import_list_show_the_source_and_the_restated_month(
    s3, source, viewer_client, client_as
):
    deliver(s3, "2026-05", "exec-1", cur_csv(CUR_ROWS))
    export_sources_sync(s3=s3)
    deliver(s3, "2026-05", "exec-2", cur_csv(CUR_ROWS[:3]))
    export_sources_sync(s3=s3)
    html = viewer_client.get("/status/").content.decode()
    section = html[html.index('id="billing-exports"') :]
    assert "gpu-cur" in section and "restated" in section and "replaced" in section
    assert "135.6654" not in html  # no money on a page every role reads
    listing = client_as("finance").get("/billing/upload/").content.decode()
    assert "gpu-cur 2026-05" in listing and "restated" in listing


def test_status_says_the_scheduled_import_is_off_without_a_source(viewer_client):
    html = viewer_client.get("/status/").content.decode()
    assert "No billing export source (off)" in html
