"""gpuledger's own provider price format: the documented example, errors naming file/line/column."""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal
from pathlib import Path

import pytest

from pricing.providers.generic_csv import GENERIC_HEADER, GenericReadStats, read_generic_csv
from pricing.providers.records import SourceRowError

DOCS = Path(__file__).resolve().parents[3] / "docs" / "provider-prices.md"
HEADER = "provider,region,instance_type,gpu_model,gpu_count,vcpus,memory_gib,pricing_model,price_per_hour,currency,observed_at"
AUTODL_4090 = "autodl,cn-north-b,rtx4090-x1,rtx-4090,1,16,60,on_demand,1.98,CNY,2025-06-01T08:00:00+08:00"


def write(tmp_path: Path, *rows: str, header: str = HEADER) -> Path:
    path = tmp_path / "prices.csv"
    path.write_text("\n".join([header, *rows]) + "\n")
    return path


def read(path: Path, **kwargs):
    return list(read_generic_csv(path, **kwargs))


def test_it_keeps_the_contract_header():
    assert ",".join(GENERIC_HEADER) == HEADER


def test_it_reads_the_example_in_the_docs(tmp_path):
    example = re.search(r"```csv\n(.*?)```", DOCS.read_text(), re.DOTALL).group(1)
    path = tmp_path / "example.csv"
    path.write_text(example)
    records = read(path)
    assert [(r.instance.provider, r.pricing_model, r.currency) for r in records] == [
        ("autodl", "on_demand", "CNY"),
        ("autodl", "on_demand", "CNY"),
        ("examplecloud", "on_demand", "USD"),
        ("examplecloud", "reserved_1y", "USD"),
        ("internal", "on_demand", "USD"),
    ]
    assert records[4].instance.gpu_count == Decimal("0.5")


def test_it_reads_a_cny_row_with_its_offset(tmp_path):
    (record,) = read(write(tmp_path, AUTODL_4090))
    assert record.price_per_hour == Decimal("1.980000")
    assert record.currency == "CNY"
    # 08:00 at +08:00 is midnight UTC.
    assert record.observed_at == dt.datetime(2025, 6, 1, 0, 0, tzinfo=dt.UTC)
    assert (record.instance.name, record.instance.gpu_name, record.instance.vcpus) == (
        "rtx4090-x1",
        "rtx-4090",
        16,
    )
    assert (record.region, record.zone, record.source) == ("cn-north-b", "", "file:prices.csv")


def test_it_reads_a_date_alone_as_midnight_utc(tmp_path):
    (record,) = read(write(tmp_path, AUTODL_4090.replace("2025-06-01T08:00:00+08:00", "2025-06-01")))
    assert record.observed_at == dt.datetime(2025, 6, 1, tzinfo=dt.UTC)


@pytest.mark.parametrize("price", ["", "0", "0.0000001", "-2"])
def test_it_rejects_and_counts_prices_that_are_not_above_zero(tmp_path, price):
    bad = AUTODL_4090.replace(",1.98,", f",{price},")
    stats = GenericReadStats()
    records = read(write(tmp_path, bad, AUTODL_4090.replace("rtx4090-x1", "rtx4090-x2")), stats=stats)
    assert [r.instance.name for r in records] == ["rtx4090-x2"]
    assert (stats.rows, stats.rejected, stats.records) == (2, 1, 1)
    assert stats.rejected_lines[0].startswith(f"{tmp_path / 'prices.csv'}:2: price_per_hour")


@pytest.mark.parametrize(
    ("replace", "by", "field", "message"),
    [
        (",1.98,", ",abc,", "price_per_hour", "'abc' is not a number"),
        (",CNY,", ",RMB,", "currency", "unknown currency 'RMB'"),
        (",CNY,", ",cny,", "currency", "not an ISO 4217 code"),
        (",on_demand,", ",hourly,", "pricing_model", "'hourly' is not one of"),
        (",1,16,", ",0,16,", "gpu_count", "must be above zero"),
        (",16,60,", ",16,-60,", "memory_gib", "must be above zero"),
        ("2025-06-01T08:00:00+08:00", "June 1st", "observed_at", "not an ISO 8601"),
        ("autodl,cn-north-b,", "autodl,,", "region", "is empty"),
    ],
)
def test_it_names_file_line_and_column_of_a_bad_row(tmp_path, replace, by, field, message):
    path = write(tmp_path, AUTODL_4090.replace("x1", "x4"), AUTODL_4090.replace(replace, by))
    with pytest.raises(SourceRowError, match=message) as error:
        read(path)
    assert (error.value.location, error.value.field) == (f"{path}:3", field)


def test_it_rejects_a_currency_without_an_fx_rate_naming_it(tmp_path):
    with pytest.raises(SourceRowError, match="unknown currency 'CNY': no FX rate") as error:
        read(write(tmp_path, AUTODL_4090), accepted_currencies=frozenset({"USD", "EUR"}))
    assert error.value.field == "currency"


def test_it_names_a_short_row(tmp_path):
    path = write(tmp_path, "autodl,cn-north-b,rtx4090-x1,rtx-4090,1")
    with pytest.raises(SourceRowError) as error:
        read(path)
    assert (error.value.location, error.value.field) == (f"{path}:2", "vcpus")


@pytest.mark.parametrize(
    ("header", "field"),
    [
        (HEADER.replace("gpu_count", "gpus"), "gpu_count"),
        (HEADER.replace(",observed_at", ""), "observed_at"),
        (HEADER + ",zone", "zone"),
    ],
)
def test_it_names_the_header_column_that_differs(tmp_path, header, field):
    path = write(tmp_path, header=header)
    with pytest.raises(SourceRowError) as error:
        read(path)
    assert (error.value.location, error.value.field) == (f"{path}:1", field)


def test_it_skips_an_exact_repeat_and_refuses_a_contradiction(tmp_path):
    stats = GenericReadStats()
    assert len(read(write(tmp_path, AUTODL_4090, AUTODL_4090), stats=stats)) == 1
    assert stats.duplicates_skipped == 1
    path = write(tmp_path, AUTODL_4090, AUTODL_4090.replace(",1.98,", ",2.10,"))
    with pytest.raises(SourceRowError, match="contradicts 1.980000 on line 2") as error:
        read(path)
    assert error.value.location == f"{path}:3"
