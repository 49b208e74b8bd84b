"""Ingest with hostile text: a source name (a file name) can never split a row or forge a price.

The COPY into PostgreSQL is binary, so tab, newline, backslash and ``\\N`` are plain characters of the
source; NUL (which PostgreSQL text cannot hold) and over-long text are clean errors naming the field.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from pricing.ingest import ingest_price_records
from pricing.models import PriceObservation
from pricing.providers.records import InstanceTypeRecord, PriceRecord, SourceRowError
from pricing.selectors import current_price_observations

pytestmark = pytest.mark.django_db
T0 = dt.datetime(2026, 11, 1, tzinfo=dt.UTC)
P5 = InstanceTypeRecord(provider="aws", name="p5.48xlarge", gpu_name="H100", gpu_count=Decimal(8))
H200 = InstanceTypeRecord(provider="aws", name="p5e.48xlarge", gpu_name="H200", gpu_count=Decimal(8))


def on_demand(price: str, *, instance=P5, source="file:prices.csv", at=T0, location="prices.csv:2", **kw):
    fields = dict(
        instance=instance,
        region="us-east-1",
        zone="",
        pricing_model="on_demand",
        price_per_hour=Decimal(price),
        currency="USD",
        observed_at=at,
        source=source,
        location=location,
    )
    return PriceRecord(**(fields | kw))


def _forged_source(victim_offer_id: int) -> str:
    """A file name that, written unescaped into COPY text format, ends the row and adds a second,
    published row setting the victim offer's on-demand price to 0.01 USD/h the day after."""
    return (
        f"file:x\tpublished\t\\N\t2026-11-01T00:00:00+00:00\n{victim_offer_id}\ton_demand\t\t0.010000\tUSD\t"
        "2026-11-02T00:00:00+00:00\tforged"
    )


@pytest.mark.parametrize("path", ["direct", "staged"])
def test_a_forged_file_name_writes_one_row_and_leaves_other_prices_alone(require_postgres, path):
    ingest_price_records([on_demand("99.00", instance=H200)])
    victim = PriceObservation.objects.get().offer_id
    if path == "staged":  # a stored price in the batch's time range sends it through the staging table
        ingest_price_records([on_demand("30.00")])
    source = _forged_source(victim)
    result = ingest_price_records([on_demand("31.00", source=source, at=T0)])
    assert result.inserted == 1
    stored = PriceObservation.objects.get(source=source)
    assert (stored.offer.instance_type.name, stored.amount_per_hour) == ("p5.48xlarge", Decimal("31.000000"))
    victim_price = current_price_observations(offer_id=victim).get()
    assert victim_price.amount_per_hour == Decimal("99.000000")  # not 0.01: no row was forged
    assert not PriceObservation.objects.filter(amount_per_hour=Decimal("0.01")).exists()


@pytest.mark.parametrize("text", ["tab\there", "new\nline", "back\\slash", "\\N", "end\\", "\r\n\t\\."])
def test_source_text_is_stored_exactly_as_given(text):
    source = f"file:{text}"
    result = ingest_price_records([on_demand("30.00", source=source)])
    assert result.inserted == 1
    assert list(PriceObservation.objects.values_list("source", flat=True)) == [source]
    again = ingest_price_records([on_demand("30.00", source=source)])
    assert (again.inserted, again.unchanged) == (0, 1)  # the natural key matches the stored text


@pytest.mark.parametrize(
    ("record", "field"),
    [
        (on_demand("30", source="file:a\x00b"), "source"),
        (on_demand("30", region="us-east\x00-1"), "region"),
        (on_demand("30", zone="z" * 101), "zone"),
        (on_demand("30", source="file:" + "x" * 300), "source"),
        (on_demand("30", instance=InstanceTypeRecord("aws", "p5\x00", "H100", Decimal(8))), "instance_type"),
        (on_demand("30", instance=InstanceTypeRecord("a w/s", "p5", "H100", Decimal(8))), "provider"),
    ],
)
def test_nul_bytes_over_long_text_and_bad_slugs_are_errors_naming_the_field(record, field):
    ingest_price_records([on_demand("30.00")])
    with pytest.raises(SourceRowError) as caught:
        ingest_price_records([on_demand("31.00", at=T0 + dt.timedelta(hours=1)), record])
    assert caught.value.field == field
    assert str(caught.value).startswith("prices.csv:2: column")
    assert len(str(caught.value)) < 200  # the message never echoes a whole over-long value
    assert PriceObservation.objects.count() == 1  # all or nothing


def test_the_import_command_stores_a_file_name_with_tab_newline_and_backslash(tmp_path, require_postgres):
    from django.core.management import call_command

    from pricing.providers.generic_csv import GENERIC_HEADER

    name = "evil\tpublished\n1\\N.csv"
    path = tmp_path / name
    row = "acme,eu-1,h100x8,H100,8,,,on_demand,2.500000,USD,2026-11-01T00:00:00Z"
    path.write_text(",".join(GENERIC_HEADER) + "\n" + row + "\n")
    call_command("import_prices", str(path), "--format", "generic")
    assert list(PriceObservation.objects.values_list("source", flat=True)) == [f"file:{name}"]
