"""Imports' Parquet datasets under an S3 prefix (issue 28, item 1: "in a folder ... or an S3 prefix (a
setting)"; billing/storage/location.py).

moto's ThreadedMotoServer answers real HTTP S3 calls on 127.0.0.1, so the write (pyarrow's S3 client)
and the reads (DuckDB through pyarrow's client registered as an fsspec filesystem) cross the network
stack as they would against S3 or MinIO, offline. The expected figures are the folder location's: the
same bill imported into a folder and into S3 reviews to the same cent.
"""

from __future__ import annotations

import datetime as dt
import shutil
import uuid
from decimal import Decimal
from pathlib import Path

import boto3
import pytest
from django.core.exceptions import ImproperlyConfigured

from billing.imports.importer import import_file
from billing.imports.records import BillingFileError
from billing.models import BillingImport, BillingImportFile
from billing.review import selectors
from billing.review.service import _build_review, make_request
from billing.storage.duckdb_review import review_sums
from billing.storage.import_datasets import ImportDatasets
from gpuledger.env import env_http_url, env_s3_prefix
from tests.billing.catalog import import_demo_files, make_catalog

moto_server = pytest.importorskip("moto.server")
pytestmark = pytest.mark.django_db
AWS = Path(__file__).parent / "fixtures" / "aws_focus_export.csv"
MAY = (dt.date(2026, 5, 1), dt.date(2026, 6, 1))
TWO_MONTHS = (dt.date(2026, 5, 1), dt.date(2026, 7, 1))


@pytest.fixture(scope="module")
def s3_endpoint():
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


@pytest.fixture
def s3(s3_endpoint, settings, monkeypatch):
    return use_s3(s3_endpoint, settings, monkeypatch)


def use_s3(s3_endpoint, settings, monkeypatch):
    """A fresh bucket on the moto server, the datasets' location set to a prefix in it."""
    for name, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_EC2_METADATA_DISABLED": "true",
    }.items():
        monkeypatch.setenv(name, value)
    client = boto3.client("s3", endpoint_url=s3_endpoint, region_name="us-east-1")
    bucket = f"ledger-{uuid.uuid4().hex[:12]}"
    client.create_bucket(Bucket=bucket)
    settings.BILLING_DATASET_URL = f"s3://{bucket}/datasets"
    settings.BILLING_DATASET_S3_ENDPOINT = s3_endpoint
    settings.BILLING_DATASET_S3_REGION = "us-east-1"
    client.keys = lambda: sorted(
        item["Key"] for item in client.list_objects_v2(Bucket=bucket).get("Contents", [])
    )
    return client


def review_figures(start: dt.date, end: dt.date) -> dict:
    review = _build_review(make_request(start=start, end=end))
    return {"totals": review["totals"], "sums": review_sums(ImportDatasets(), start, end)}


def test_a_focus_bill_in_s3_reviews_to_the_cent_as_in_a_folder(tmp_path, settings, s3_endpoint, monkeypatch):
    make_catalog()
    settings.BILLING_DATASET_DIR = tmp_path / "folder"
    import_demo_files(tmp_path, months=2)
    in_folder = review_figures(*TWO_MONTHS)
    folder_rows = selectors.dataset_rows(*TWO_MONTHS)  # what planning/history.py and the finance views read
    assert Decimal(in_folder["totals"]["effective_cost"]) > 0
    BillingImport.objects.all().delete()
    shutil.rmtree(settings.BILLING_DATASET_DIR)  # nothing is read from the folder from here on

    client = use_s3(s3_endpoint, settings, monkeypatch)
    import_demo_files(tmp_path, months=2)
    records = list(BillingImportFile.objects.order_by("month"))
    assert [r.month for r in records] == [dt.date(2026, 5, 1), dt.date(2026, 6, 1)]
    assert client.keys() == [f"datasets/{r.path}" for r in records]  # the recorded files, nothing else
    assert review_figures(*TWO_MONTHS) == in_folder
    s3_rows = selectors.dataset_rows(*TWO_MONTHS)
    assert s3_rows["effective_micros"].sum() == folder_rows["effective_micros"].sum()
    assert len(s3_rows) == len(folder_rows)


def test_a_failed_import_leaves_nothing_visible(s3, tmp_path):
    make_catalog()
    rows = AWS.read_text().splitlines()
    bad = tmp_path / "bad.csv"
    bad.write_text("\n".join(rows[:-1] + [rows[-1].replace(",1.20,1.20,", ",one,1.20,", 1)]) + "\n")
    with pytest.raises(BillingFileError, match="bad.csv"):
        import_file(bad)
    assert not BillingImportFile.objects.exists()
    assert s3.keys() == []
    assert review_sums(ImportDatasets(), *MAY)["all_effective"] == 0


def test_deleting_an_import_removes_its_objects_once_no_import_records_them(
    s3, django_capture_on_commit_callbacks
):
    make_catalog()
    first = import_file(AWS).imports[0]
    again = import_file(AWS).imports[0]  # the same file again records the first import's objects
    (key,) = s3.keys()
    assert key == f"datasets/import={first}/month=2026-05/part-00000.parquet"
    assert Decimal(review_sums(ImportDatasets(), *MAY)["all_effective"]) / 1_000_000 == Decimal("116.20")
    with django_capture_on_commit_callbacks(execute=True):
        BillingImport.objects.filter(pk=first).delete()
    assert s3.keys() == [key]  # still recorded by the second import
    with django_capture_on_commit_callbacks(execute=True):
        BillingImport.objects.filter(pk=again).delete()
    assert s3.keys() == []


def test_deleting_an_import_removes_its_folder_files(settings, tmp_path, django_capture_on_commit_callbacks):
    settings.BILLING_DATASET_DIR = tmp_path / "datasets"
    make_catalog()
    pk = import_file(AWS).imports[0]
    assert (tmp_path / "datasets" / f"import={pk}/month=2026-05/part-00000.parquet").is_file()
    with django_capture_on_commit_callbacks(execute=True):
        BillingImport.objects.filter(pk=pk).delete()
    assert list((tmp_path / "datasets").iterdir()) == []  # the import's and month's folders too


@pytest.mark.parametrize(
    "value, problem",
    [
        ("/var/billing", "must start with s3://"),
        ("https://bucket/prefix", "must start with s3://"),
        ("s3://", "is not an S3 bucket name"),
        ("s3://Billing_Bucket/x", "is not an S3 bucket name"),
        ("s3://billing//x", "plain path segments"),
        ("s3://billing/../x", "plain path segments"),
    ],
)
def test_a_bad_dataset_url_raises_naming_the_setting(monkeypatch, value, problem):
    monkeypatch.setenv("BILLING_DATASET_URL", value)
    with pytest.raises(ImproperlyConfigured, match=f"BILLING_DATASET_URL=.*{problem}"):
        env_s3_prefix("BILLING_DATASET_URL")


def test_a_dataset_url_is_normalized(monkeypatch):
    monkeypatch.setenv("BILLING_DATASET_URL", "s3://billing-data/gpu/ledger/")
    assert env_s3_prefix("BILLING_DATASET_URL") == "s3://billing-data/gpu/ledger"
    monkeypatch.setenv("BILLING_DATASET_URL", "")
    assert env_s3_prefix("BILLING_DATASET_URL") == ""  # unset: the folder


@pytest.mark.parametrize(
    "value", ["minio:9000", "ftp://minio:9000", "http://", "http://minio:99999", "http://m/x"]
)
def test_a_bad_endpoint_raises(monkeypatch, value):
    monkeypatch.setenv("BILLING_DATASET_S3_ENDPOINT", value)
    with pytest.raises(ImproperlyConfigured, match="BILLING_DATASET_S3_ENDPOINT"):
        env_http_url("BILLING_DATASET_S3_ENDPOINT")


def test_an_endpoint_is_kept_as_scheme_host_and_port(monkeypatch):
    monkeypatch.setenv("BILLING_DATASET_S3_ENDPOINT", "http://127.0.0.1:9000/")
    assert env_http_url("BILLING_DATASET_S3_ENDPOINT") == "http://127.0.0.1:9000"


def test_the_invoice_view_indexes_and_reads_its_billing_periods_files_in_s3(
    s3, tmp_path, django_capture_on_commit_callbacks
):
    # fix46f: DuckDB names an S3 dataset file by its s3:// URL; the billing-period index maps it back to
    # the recorded path (storage/billing_periods.py). The two demo months, each its own billing period:
    # the index written at import names each file once, and May's invoice reads May's file only, with the
    # same groups as reading both files.
    from billing.invoice.selectors import invoice_groups
    from billing.models import BillingFilePeriod
    from billing.storage import billing_periods

    make_catalog()
    with django_capture_on_commit_callbacks(execute=True):
        import_demo_files(tmp_path, months=2)
    indexed = sorted(BillingFilePeriod.objects.values_list("file__month", "billing_period"))
    may, june = dt.date(2026, 5, 1), dt.date(2026, 6, 1)
    assert indexed == [(may, may), (may, june), (june, june)]
    may_files = billing_periods.billing_period_files(*MAY)
    june_files = billing_periods.billing_period_files(june, dt.date(2026, 7, 1))
    assert [name.rsplit("/", 2)[-2] for name in may_files] == ["month=2026-05"]
    assert [name.rsplit("/", 2)[-2] for name in june_files] == ["month=2026-05", "month=2026-06"]
    assert may_files[0].startswith("s3://")
    both = invoice_groups(*TWO_MONTHS)
    assert [g for g in both if g["billing_period"] == "2026-05"] == invoice_groups(*MAY)
    assert [g for g in both if g["billing_period"] == "2026-06"] == invoice_groups(june, dt.date(2026, 7, 1))
    BillingFilePeriod.objects.all().delete()  # indexed again on the first read, from S3
    assert billing_periods.billing_period_files(*MAY) == may_files
    assert BillingFilePeriod.objects.count() == 3
