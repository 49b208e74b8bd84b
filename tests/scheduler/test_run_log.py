"""Each price run logs one line of what it fetched, refused and stored (scheduler/run_log.py, issue 25).

The counts asserted here are those the runs' own tests derive by hand: the stubbed AWS list prices give
12 prices in us-east-1 (tests/scheduler/test_refresh.py), and the three-row generic file has one price
of 0, refused (tests/pricing/test_import_prices.py)."""

from __future__ import annotations

import datetime as dt
import logging
from dataclasses import replace
from io import StringIO

import pytest
from django.core.management import call_command
from moto import mock_aws

from pricing.models import PriceObservation
from pricing.sources import registry as sources
from pricing.sources.refresh import refresh_run
from tests.pricing.providers.aws_responses import fake_aws_factory
from tests.pricing.test_import_prices import ROWS, write
from tests.scheduler.test_refresh import ADVISOR, NOW, _fail_after

pytestmark = pytest.mark.django_db
LOGGER = "scheduler.run_log"


@pytest.fixture
def fake_aws(monkeypatch):
    with mock_aws():
        monkeypatch.setattr(sources, "aws_client_factory", lambda: fake_aws_factory(NOW))
        monkeypatch.setattr(sources, "spot_advisor_document", lambda: ADVISOR)
        yield


def lines(caplog) -> list[tuple[int, str]]:
    return [(record.levelno, record.getMessage()) for record in caplog.records if record.name == LOGGER]


def test_a_refresh_logs_what_it_fetched_refused_and_stored_and_a_rerun_stores_nothing(fake_aws, caplog):
    caplog.set_level(logging.INFO, logger=LOGGER)
    refresh_run("aws-on-demand", "us-east-1", now=NOW)
    refresh_run("aws-on-demand", "us-east-1", now=NOW + dt.timedelta(hours=3))
    assert lines(caplog) == [
        (
            logging.INFO,
            "price run succeeded: source=aws-on-demand region=us-east-1 providers=aws fetched=12 refused=0 "
            "stored=12 unchanged=0 suspect=0",
        ),
        (
            logging.INFO,
            "price run succeeded: source=aws-on-demand region=us-east-1 providers=aws fetched=12 refused=0 "
            "stored=0 unchanged=12 suspect=0",
        ),
    ]


def test_a_failed_refresh_logs_a_warning_with_its_error(fake_aws, caplog, monkeypatch):
    original = sources.SOURCES["aws-spot"]

    def broken_fetch(region, now):
        fetched = original.fetch(region, now)
        fetched.records = _fail_after(fetched.records, 5)
        return fetched

    monkeypatch.setitem(sources.SOURCES, "aws-spot", replace(original, fetch=broken_fetch))
    caplog.set_level(logging.INFO, logger=LOGGER)
    with pytest.raises(ConnectionResetError):
        refresh_run("aws-spot", "us-east-1", now=NOW)
    [(level, message)] = lines(caplog)
    assert level == logging.WARNING
    assert message.startswith("price run failed: source=aws-spot region=us-east-1 providers=- fetched=0")
    assert message.endswith("error='ConnectionResetError: worker killed half-way'")


def test_a_file_import_logs_its_provider_and_the_row_it_refused(tmp_path, caplog):
    caplog.set_level(logging.INFO, logger=LOGGER)
    call_command("import_prices", str(write(tmp_path, *ROWS)), stdout=StringIO())
    assert lines(caplog) == [
        (
            logging.INFO,
            "price run succeeded: source=import:prices.csv region=- providers=examplecloud fetched=3 "
            "refused=1 stored=2 unchanged=0 suspect=0",
        )
    ]


def test_the_bundled_catalog_load_logs_its_counts(caplog, bundled_catalog):
    from pricing.catalog import catalog_load

    caplog.set_level(logging.INFO, logger="pricing.catalog")
    catalog_load()  # a reload: every price is there already, so nothing is stored
    [record] = [r for r in caplog.records if r.name == "pricing.catalog"]
    message = record.getMessage()
    assert (
        "bundled catalog loaded:" in message
        and " stored=0 " in message
        and "catalog_changes=(none)" in message
    )
    fetched = int(message.split(" fetched=")[1].split()[0])
    unchanged = int(message.split(" unchanged=")[1].split()[0])
    refused = int(message.split(" refused=")[1].split()[0])
    # every row read is either already stored or refused; all the stored prices came from the bundle
    assert fetched == unchanged + refused and unchanged == PriceObservation.objects.count() > 1000
