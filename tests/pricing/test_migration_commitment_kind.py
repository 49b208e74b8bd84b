"""0009: the AWS Price List reserved prices stored before it were standard reservations (the reader kept
no other offering class), so they become kind `standard` and keep one history with those read after it."""

import datetime as dt
from decimal import Decimal

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("pricing", "0008_marketclouds_offer_presence")]
AFTER = [("pricing", "0009_marketcommit_commitment_prices")]


def _migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


@pytest.mark.django_db(transaction=True)
def test_stored_aws_reservations_become_standard_and_the_price_version_moves():
    old = _migrate(BEFORE)
    provider = old.get_model("pricing", "Provider").objects.create(slug="aws", name="AWS")
    region = old.get_model("pricing", "Region").objects.create(provider=provider, code="us-east-1")
    itype = old.get_model("pricing", "InstanceType").objects.create(
        provider=provider, name="p5.48xlarge", gpu_name="H100", gpu_count=8
    )
    offer = old.get_model("pricing", "Offer").objects.create(instance_type=itype, region=region)
    at = dt.datetime(2026, 11, 1, tzinfo=dt.UTC)
    prices = old.get_model("pricing", "PriceObservation").objects
    for model, source in (
        ("reserved_1y", "aws:pricing.get_products"),
        ("on_demand", "aws:pricing.get_products"),
        ("reserved_3y", "file:rates.csv"),
    ):
        prices.create(
            offer=offer,
            pricing_model=model,
            amount_per_hour=Decimal(30),
            currency="USD",
            observed_at=at,
            source=source,
        )
    # the row 0007 creates is gone after an earlier transactional test's flush: put one back
    versions = old.get_model("pricing", "PriceVersion").objects
    token = (versions.first() or versions.create(pk=1, number=0, token="before-0009")).token

    new = _migrate(AFTER)
    kinds = dict(
        new.get_model("pricing", "PriceObservation").objects.values_list("pricing_model", "commitment_kind")
    )
    assert kinds == {
        "reserved_1y": "standard",
        "on_demand": "",
        "reserved_3y": "",
    }  # a rate card does not say
    assert new.get_model("pricing", "PriceVersion").objects.get().token != token

    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())  # back to the latest schema for other tests
