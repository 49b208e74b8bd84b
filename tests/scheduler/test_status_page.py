"""The /status/ page lists refresh runs, the newest price age per source and the beat schedule."""

import datetime as dt
from decimal import Decimal

import pytest
from django.core.management import call_command

from pricing.ingest import ingest_price_records
from pricing.providers.records import InstanceTypeRecord, PriceRecord
from scheduler.models import PriceRefresh, RefreshStatus

pytestmark = pytest.mark.django_db


def test_it_shows_runs_sources_and_schedule(viewer_client):
    call_command("sync_schedule")
    PriceRefresh.objects.create(
        source="aws-spot", region="us-east-1", status=RefreshStatus.FAILED, error="AuthFailure"
    )
    instance = InstanceTypeRecord(provider="aws", name="g5.xlarge", gpu_name="A10G", gpu_count=Decimal(1))
    ingest_price_records(
        [
            PriceRecord(
                instance=instance,
                region="us-east-1",
                zone="",
                pricing_model="on_demand",
                price_per_hour=Decimal("1.006"),
                currency="USD",
                observed_at=dt.datetime(2026, 1, 1, tzinfo=dt.UTC),
                source="aws:pricing.get_products",
            )
        ]
    )
    html = viewer_client.get("/status/").content.decode()
    assert "aws:pricing.get_products" in html and "2026-01-01 00:00" in html
    assert "AuthFailure" in html and "us-east-1" in html
    assert "aws spot prices" in html and "pricing.refresh_prices" in html


def test_before_any_refresh_it_says_so_instead_of_the_last_0_runs(viewer_client):
    # x30: a new user after `make run` read "the last 0 refresh runs" and an empty table under a header
    html = viewer_client.get("/status/").content.decode()
    assert "the last 0 refresh runs" not in html
    assert "none yet: the prices are the bundled snapshot" in html
    assert "No refresh has run yet." in html
    PriceRefresh.objects.create(source="aws-spot", region="us-east-1", status=RefreshStatus.FAILED, error="x")
    html = viewer_client.get("/status/").content.decode()
    assert "the last 1 refresh run." in html and "No refresh has run yet." not in html


@pytest.mark.django_db
def test_the_page_never_shows_where_the_server_keeps_its_files(client_as):
    """Issue 31: a failed refresh's error and an imported file's source name held absolute paths; the page
    shows their last part only (the admin keeps the stored text)."""
    from django.conf import settings

    from scheduler.models import PriceRefresh, RefreshStatus

    path = f"{settings.BASE_DIR}/pricing/data/skypilot/aws/vms.gpu.csv"
    PriceRefresh.objects.create(
        source="catalog",
        status=RefreshStatus.FAILED,
        error=f"FileNotFoundError: [Errno 2] No such file or directory: '{path}'",
    )
    page = client_as("viewer").get("/status/").content.decode()
    assert "No such file or directory: &#x27;vms.gpu.csv&#x27;" in page
    assert str(settings.BASE_DIR) not in page and "/pricing/data/" not in page
    assert PriceRefresh.objects.get().error.endswith(f"'{path}'")
