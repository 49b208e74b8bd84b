"""Dates outside 1900-01-01..2199-12-31 (gpuledger.input_bounds.YEAR_RANGE, the bound every date field
of the product's API has) in a billing file or a command option: one clean error naming file, line and
column (or the option) and the bound, nothing stored (issue 28, third outside review: a FOCUS charge
of 2300 was stored and then in its invoice but in no review; an Azure Date of 9/2/9999 and
`spend_review --from 2300-02-01` ended in pandas' OutOfBoundsDatetime). Also: without --format, a byte
that is not UTF-8 below a good header is named by its line, not taken for an unknown format.
"""

from __future__ import annotations

import csv
import datetime as dt
import hashlib
from io import StringIO
from pathlib import Path

import pyarrow as pa
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from billing.imports.importer import _checksum_checking_text, detect_format, import_files
from billing.imports.records import BillingFileError
from gpuledger.input_bounds import YEAR_RANGE, text_problem, year_problem
from tests.billing.catalog import make_catalog
from tests.billing.test_import_hostile_files import (
    CUR_ROW,
    DCGM_ROW,
    FOCUS_ROW,
    assert_error_at,
    import_outcome,
    write_csv,
    write_parquet,
)

pytestmark = pytest.mark.django_db
AZURE = Path(__file__).parent / "outside" / "data" / "azure_ea_cad_focus_converters.csv"
BOUND = "dates run from 1900 to 2199"


def test_year_bound_is_inclusive_at_both_ends_and_shared_with_request_fields():
    assert YEAR_RANGE == (1900, 2199)
    assert year_problem(1900) is None and year_problem(2199) is None
    assert year_problem(1899) == f"a date in year 1899; {BOUND}"
    assert year_problem(2200) == f"a date in year 2200; {BOUND}"
    # the request middleware's wording, unchanged: the same sentence for a query parameter and a file
    assert text_problem("2300-02-01") == year_problem(2300)


def focus_rows(**second_row) -> list[dict]:
    first = dict(FOCUS_ROW, BillingPeriodStart="2026-05-01T00:00:00Z")
    return [first, dict(first, ResourceId="i-0def", **second_row)]


@pytest.mark.parametrize(
    ("column", "value", "year"),
    [
        ("ChargePeriodStart", "2200-01-01T00:00:00Z", 2200),
        ("ChargePeriodStart", "1899-12-31T23:00:00Z", 1899),
        ("ChargePeriodEnd", "9999-12-31T00:00:00Z", 9999),
        ("BillingPeriodStart", "0001-01-01T00:00:00Z", 1),  # optional column: bounded too
    ],
)
def test_focus_date_outside_the_years_names_line_column_and_bound(tmp_path, column, value, year):
    make_catalog()
    rows = focus_rows(**{column: value})
    if column == "ChargePeriodStart" and year > 2199:
        rows[1]["ChargePeriodEnd"] = "2200-01-01T01:00:00Z"
    path = write_csv(tmp_path / "far.csv", rows)
    # data row 2 = line 3 (line 1 is the header); the format is detected
    message = assert_error_at(path, None, f"3:{column}: ")
    assert message == f"{path}:3:{column}: {value!r} is a date in year {year}; {BOUND}"


def test_focus_dates_at_both_ends_of_the_years_are_stored(tmp_path):
    make_catalog()
    first = {"ChargePeriodStart": "1900-01-01T00:00:00Z", "ChargePeriodEnd": "1900-01-01T01:00:00Z"}
    last = {"ChargePeriodStart": "2199-12-31T23:00:00Z", "ChargePeriodEnd": "2199-12-31T23:59:59Z"}
    rows = [dict(FOCUS_ROW, **first), dict(FOCUS_ROW, ResourceId="i-0def", **last)]
    result = import_outcome(write_csv(tmp_path / "ends.csv", rows), None)
    assert result.errors == [] and result.inserted == 2


def test_a_parquet_timestamp_column_in_2300_is_refused_by_row_and_column(tmp_path):
    make_catalog()
    start = [dt.datetime(2026, 5, 1, tzinfo=dt.UTC), dt.datetime(2300, 5, 1, tzinfo=dt.UTC)]
    rows = [dict(row, ChargePeriodStart=day) for row, day in zip(focus_rows(), start, strict=True)]
    rows[1]["ChargePeriodEnd"] = "2300-05-02T00:00:00Z"
    path = write_parquet(tmp_path / "far.parquet", rows, {"ChargePeriodStart": pa.timestamp("us", tz="UTC")})
    assert_error_at(path, "focus", "3:ChargePeriodStart: ", "year 2300", BOUND)


def test_cur_and_utilization_dates_are_bounded_by_the_same_check(tmp_path):
    make_catalog()
    cur = write_csv(
        tmp_path / "cur.csv", [CUR_ROW, dict(CUR_ROW, line_item_usage_end_date="2300-05-01T01:00:00Z")]
    )
    assert_error_at(cur, "cur", "3:line_item_usage_end_date: ", "year 2300", BOUND)
    dcgm = write_csv(tmp_path / "dcgm.csv", [DCGM_ROW, dict(DCGM_ROW, timestamp="1600-05-01T00:00:00Z")])
    assert_error_at(dcgm, "utilization", "3:timestamp: ", "year 1600", BOUND)


def azure_file(path: Path, column: str, value: str, row: int = 0) -> Path:
    with AZURE.open(newline="", encoding="utf-8-sig") as handle:
        header, *rows = list(csv.reader(handle))
    rows[row][header.index(column)] = value
    with path.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle, lineterminator="\n").writerows([header, *rows])
    return path


@pytest.mark.parametrize(
    ("column", "value", "year"),
    [
        ("Date", "9/2/9999", 9999),  # past pandas' nanosecond timestamps (2262): was an OutOfBoundsDatetime
        ("Date", "2200-01-01", 2200),  # the ISO form Azure also writes
        ("BillingPeriodStartDate", "12/1/1899", 1899),
    ],
)
def test_azure_date_outside_the_years_names_line_column_and_bound(tmp_path, column, value, year):
    make_catalog()
    path = azure_file(tmp_path / "far.csv", column, value, row=4)  # data row 5 = line 6
    message = assert_error_at(path, None, f"6:{column}: ")
    assert message == f"{path}:6:{column}: {value!r} is a date in year {year}; {BOUND}"


def test_azure_last_day_of_the_years_is_read(tmp_path):
    make_catalog()
    path = azure_file(tmp_path / "last.csv", "Date", "12/31/2199")
    assert import_outcome(path, None).errors == []


def test_a_bad_byte_below_a_good_header_is_named_by_line_without_format(tmp_path):
    # the header is ASCII, line 4 holds a latin-1 u-umlaut (0xfc): detected as FOCUS, refused at line 4,
    # the same message as with --format focus
    make_catalog()
    rows = [FOCUS_ROW, FOCUS_ROW, dict(FOCUS_ROW, SubAccountName="Zürich")]
    text = write_csv(tmp_path / "good.csv", rows).read_text()
    latin = tmp_path / "latin1.csv"
    latin.write_bytes(text.encode("latin-1"))
    without = assert_error_at(latin, None, "4: not UTF-8 text: byte 0xfc")
    assert import_outcome(latin, "focus").errors == [without]


def test_a_bad_byte_in_the_header_itself_is_still_an_unknown_format(tmp_path):
    path = tmp_path / "odd.csv"
    path.write_bytes(b"Charge\xe9,Cost\n1,2\n")
    assert detect_format(path) is None
    (error,) = import_files([path]).errors
    assert "no known header" in error, error


def review_command(*args: str) -> None:
    call_command("spend_review", *args, "--format", "json", stdout=StringIO())


@pytest.mark.parametrize(
    ("start", "end", "refused"),
    [
        ("2300-02-01", "2300-03-01", "--from: a date in year 2300"),
        ("1899-12-01", "1900-01-01", "--from: a date in year 1899"),
        ("2199-12-01", "2200-01-01", "--to: a date in year 2200"),
    ],
)
def test_spend_review_command_refuses_dates_outside_the_years_in_one_line(start, end, refused):
    with pytest.raises(CommandError) as error:
        review_command("--from", start, "--to", end)
    assert str(error.value) == f"{refused}; {BOUND}"


def test_spend_review_command_reads_the_last_month_of_the_years():
    out = StringIO()
    call_command("spend_review", "--from", "2199-12-01", "--to", "2199-12-31", "--format", "json", stdout=out)
    assert '"non_gpu_cost": "0.00"' in out.getvalue()


def test_report_command_refuses_a_period_past_2199_in_one_line(tmp_path):
    with pytest.raises(CommandError) as error:
        call_command(
            "report",
            "spend_review",
            "--from",
            "2300-02-01",
            "--to",
            "2300-03-01",
            "--format",
            "csv",
            "--output",
            str(tmp_path / "r.csv"),
        )
    assert str(error.value) == f"--from: a date in year 2300; {BOUND}"


def test_a_bad_byte_in_a_column_no_reader_reads_is_refused_by_its_line(tmp_path):
    # Found by the third outside review's follow-up (date28): a latin-1 byte 9 KB into an export, in a column
    # no reader asks Arrow for, was imported ("inserted 27"). The checksum's pass over the file now checks
    # every byte: 300 rows of about 500 bytes put the bad line far past what the header read looks at.
    make_catalog()
    rows = [dict(FOCUS_ROW, x_Note="plain") for _ in range(300)]
    rows.append(dict(FOCUS_ROW, x_Note="Zürich"))
    text = write_csv(tmp_path / "good.csv", rows).read_text()
    latin = tmp_path / "late_latin1.csv"
    latin.write_bytes(text.encode("latin-1"))
    assert latin.stat().st_size > 64 * 1024
    assert_error_at(latin, "focus", "302: not UTF-8 text: byte 0xfc")
    assert_error_at(latin, None, "302: not UTF-8 text: byte 0xfc")


def test_a_character_split_across_the_checksum_blocks_is_good_text(tmp_path):
    # The pass reads 1 MiB blocks and decodes only blocks that are not ASCII, and a block after one that ended
    # inside a character: "ü" (c3 bc) across the first block's end is good text with the file's own sha256; a
    # block ending in c3 before an ASCII block, and a lone bc after one, are bad bytes named by their line.
    block = 1 << 20
    lead = b"a,b\r\n" + b"x" * (block - 1 - len(b"a,b\r\n"))  # the block's last byte will be c3
    good = tmp_path / "split.csv"
    good.write_bytes(lead + "ü".encode() + b"\r\nc,d\r\n")
    assert good.read_bytes()[block - 1] == 0xC3
    assert _checksum_checking_text(good) == hashlib.sha256(good.read_bytes()).hexdigest()
    cut = tmp_path / "cut.csv"
    cut.write_bytes(lead + b"\xc3" + b"y\r\nc,d\r\n")  # c3 then ASCII across the blocks
    with pytest.raises(
        BillingFileError, match="not UTF-8 text: byte 0x79"
    ) as raised:  # the "y" that c3 cannot lead
        _checksum_checking_text(cut)
    assert raised.value.row == 2
    lone = tmp_path / "lone.csv"
    lone.write_bytes(b"a,b\r\n" + b"x" * block + b"\r\n\xbc,d\r\n")  # a continuation byte with no lead
    with pytest.raises(BillingFileError, match="not UTF-8 text: byte 0xbc") as raised:
        _checksum_checking_text(lone)
    assert raised.value.row == 3
