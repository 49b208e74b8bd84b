"""Bad billing files: an error naming file, row and column; nothing of the file is stored."""

from __future__ import annotations

import gzip
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from billing.imports.importer import import_files
from billing.models import BillingImport
from pricing.models import FxRate
from tests.billing.stored import stored_row, stored_rows

pytestmark = pytest.mark.django_db
HEADER = "ChargePeriodStart,ChargePeriodEnd,ChargeCategory,BilledCost,EffectiveCost,BillingCurrency,ProviderName,ConsumedQuantity,ConsumedUnit,x_UsageType"
GOOD = "2026-05-01T00:00:00Z,2026-05-02T00:00:00Z,Usage,10.00,10.00,USD,AWS,24,Hours,USE1-BoxUsage:g6.xlarge"


def write(tmp_path, name, *lines):
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return path


def run(path, *options):
    out = StringIO()
    with pytest.raises(CommandError) as raised:
        call_command("import_billing", str(path), "--no-progress", *options, stdout=out)
    return out.getvalue().strip(), str(raised.value)


def assert_nothing_stored():
    assert len(stored_rows()) == 0
    assert BillingImport.objects.count() == 0


def test_missing_required_column_names_it(tmp_path):
    path = write(tmp_path, "a.csv", HEADER.replace(",BilledCost", ""), GOOD.replace(",10.00,10.00", ",10.00"))
    line, error = run(path)
    assert error == f"{path}:1:BilledCost: missing required column(s): BilledCost"
    assert line == "inserted 0, unchanged 0, rejected 1"
    assert_nothing_stored()


def test_bad_date_names_row_and_column_and_rolls_back_earlier_rows(tmp_path):
    bad = GOOD.replace("2026-05-02T00:00:00Z", "2026-13-45")
    path = write(tmp_path, "b.csv", HEADER, GOOD, GOOD, bad)
    line, error = run(path)
    assert error == f"{path}:4:ChargePeriodEnd: unparseable date '2026-13-45'"
    assert line == "inserted 0, unchanged 0, rejected 3"
    assert_nothing_stored()


def test_bad_cost_in_a_later_chunk_stores_nothing(tmp_path):
    path = write(tmp_path, "c.csv", HEADER, *[GOOD] * 5, GOOD.replace("10.00,10.00", "10.00,ten"))
    result = import_files([path], fmt="focus")
    assert result.errors == [f"{path}:7:EffectiveCost: not a number: 'ten'"]
    assert_nothing_stored()


def test_bad_cost_across_chunks(tmp_path, monkeypatch):
    monkeypatch.setattr("billing.imports.records.CHUNK_ROWS", 2)
    import billing.imports.chunks as chunks

    monkeypatch.setattr(chunks, "CHUNK_ROWS", 2)
    path = write(tmp_path, "c2.csv", HEADER, *[GOOD] * 5, GOOD.replace("10.00,10.00", "x,10.00"))
    from billing.imports import focus

    original = focus.read_focus
    monkeypatch.setattr(focus, "read_focus", lambda p, **kw: original(p, **(kw | {"chunk_rows": 2})))
    result = import_files([path], fmt="focus")
    assert result.errors == [f"{path}:7:BilledCost: not a number: 'x'"]
    assert_nothing_stored()


def test_unknown_currency(tmp_path):
    path = write(tmp_path, "d.csv", HEADER, GOOD, GOOD.replace(",USD,", ",XYZ,"))
    _, error = run(path)
    assert error == f"{path}:3:BillingCurrency: unknown currency 'XYZ': not an ISO 4217 code"
    assert_nothing_stored()


def test_mixed_currencies_without_fx_rate(tmp_path):
    path = write(tmp_path, "e.csv", HEADER, GOOD, GOOD.replace(",USD,", ",EUR,"))
    _, error = run(path)
    assert error.startswith(
        f"{path}:3:BillingCurrency: mixed billing currencies (EUR, USD) and no stored FX rate for EUR"
    )
    assert_nothing_stored()


def test_mixed_currencies_with_fx_rate_import(tmp_path):
    FxRate.objects.create(currency="EUR", base="USD", rate="1.10", as_of="2026-11-30", source="test")
    path = write(tmp_path, "f.csv", HEADER, GOOD, GOOD.replace(",USD,", ",EUR,"))
    result = import_files([path])
    assert (result.inserted, result.errors) == (2, [])


def test_wrong_format_said_in_one_line(tmp_path):
    path = write(
        tmp_path,
        "cur.csv",
        "line_item_usage_start_date,line_item_usage_type,line_item_unblended_cost",
        "x,y,z",
    )
    _, error = run(path, "--format", "focus")
    assert error == f"{path}: this is an AWS CUR 2.0 export, not a FOCUS export (--format focus)"
    assert "\n" not in error
    assert_nothing_stored()


def test_one_bad_file_does_not_stop_a_good_one(tmp_path):
    good = write(tmp_path, "good.csv", HEADER, GOOD)
    bad = write(tmp_path, "bad.csv", HEADER, GOOD.replace("Usage,", "Usagex,"))
    out = StringIO()
    with pytest.raises(CommandError, match=r"bad.csv:2:ChargeCategory: unknown value 'Usagex'"):
        call_command("import_billing", str(good), str(bad), "--no-progress", stdout=out)
    assert out.getvalue().strip() == "inserted 1, unchanged 0, rejected 1"
    assert len(stored_rows()) == 1


def test_gzip_and_duplicate_rows(tmp_path):
    path = tmp_path / "g.csv.gz"
    path.write_bytes(gzip.compress(("\n".join([HEADER, GOOD, GOOD]) + "\n").encode()))
    first = import_files([path])
    again = import_files([path])
    # two identical lines are two charges (kept both); the re-import matches each to itself
    assert (first.inserted, again.inserted, again.unchanged) == (2, 0, 2)


def test_unmapped_instance_type_is_kept_and_listed(tmp_path):
    path = write(tmp_path, "h.csv", HEADER, GOOD)
    result = import_files([path])
    record = stored_row()
    assert (record.instance_type, record.gpu, record.gpu_hours) == ("g6.xlarge", "", 0)
    assert record.instance_hours == 24
    assert dict(result.unmapped) == {"aws:g6.xlarge": 1}
    assert BillingImport.objects.get().unmapped_instance_types == {"aws:g6.xlarge": 1}


def review_error(*options) -> str:
    with pytest.raises(CommandError) as raised:
        call_command(
            "spend_review", "--from", "2026-05-01", "--to", "2026-06-01", "--format", "json", *options
        )
    return str(raised.value)


def test_amounts_whose_sum_would_wrap_around_are_refused_by_the_review_not_added(tmp_path):
    """Two rows of 5 trillion each are stored (the import allows up to 1e14 a row), but their sum,
    1e19 micro-units, is beyond int64: added as they were, the total wrapped round to -8.4 trillion."""
    big = GOOD.replace("10.00,10.00", "5000000000000,5000000000000")
    path = write(
        tmp_path,
        "big.csv",
        HEADER,
        big,
        big.replace("2026-05-01T", "2026-05-02T").replace("05-02T00", "05-03T00"),
    )
    assert import_files([path]).inserted == 2
    error = review_error()
    assert error.startswith("billed: the stored rows of this period add up beyond 4.6 trillion"), error


def test_an_amount_beyond_the_exact_range_is_refused_by_the_import_naming_row_and_column(tmp_path):
    """90 trillion is 9e19 micro-units, beyond int64's 9.2e18: no exact sum could hold it."""
    path = write(tmp_path, "huge.csv", HEADER, GOOD.replace("10.00,10.00", "90000000000000,1"))
    result = import_files([path])
    assert result.errors == [
        f"{path}:2:BilledCost: 90000000000000 is beyond 9.2 trillion, where exact sums stop"
    ]
    assert_nothing_stored()
