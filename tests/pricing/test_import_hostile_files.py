"""Importers never crash: each hostile file ends in one clean error naming file, line and column, the
refresh row records the failure, and nothing is stored."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pricing.models import PriceObservation, SpotAdvisory
from scheduler.models import PriceRefresh

pytestmark = pytest.mark.django_db
HEADER = "provider,region,instance_type,gpu_model,gpu_count,vcpus,memory_gib,pricing_model,price_per_hour,currency,observed_at"
GOOD = "examplecloud,us-central,h100-sxm-x8,H100-SXM,8,208,1800,on_demand,23.92,USD,2026-11-01"


def write_bytes(tmp_path: Path, data: bytes, name: str = "prices.csv") -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def csv_file(tmp_path: Path, bad_row: str | bytes) -> Path:
    bad = bad_row if isinstance(bad_row, bytes) else bad_row.encode()
    return write_bytes(tmp_path, f"{HEADER}\n{GOOD}\n".encode() + bad + b"\n")


def import_error(path: Path) -> str:
    with pytest.raises(CommandError) as caught:
        call_command("import_prices", str(path), stdout=StringIO())
    return str(caught.value)


def assert_clean_failure(message: str, expected_start: str) -> None:
    first_line = message.splitlines()[0]
    assert first_line.startswith(expected_start), first_line
    assert len(first_line) < 300  # one line, never the whole input echoed back
    assert not PriceObservation.objects.exists()
    assert not SpotAdvisory.objects.exists()
    refresh = PriceRefresh.objects.get()
    assert refresh.status == "failed"
    assert refresh.error.startswith(expected_start)


@pytest.mark.parametrize(
    ("bad_row", "where"),
    [
        (GOOD.encode().replace(b"us-central", b"us-c\xffntral"), ":3:18: column '(encoding)': byte 0xff"),
        (GOOD.replace("23.92", "1e308"), ":3: column 'price_per_hour': '1e308' is too large"),
        (GOOD.replace("23.92", "-1e308"), ":3: column 'price_per_hour': '-1e308' is too large"),
        (GOOD.replace("208", "1e30"), ":3: column 'vcpus': '1e30' is too large"),
        (
            GOOD.replace("h100-sxm-x8,H100-SXM,8,208", "big,H100-SXM,8,9999999"),
            ":3: column 'vcpus': 9999999 is out of range (at most 999999)",
        ),
        (GOOD.replace("us-central", "us\x00central"), ":3: column 'region': holds a NUL byte"),
        (GOOD.replace("us-central", "r" * 5000), ":3: column 'region': is 5000 characters long"),
        (GOOD.replace("h100-sxm-x8", "x" * 200_000), ":3:1: column '(csv)': field larger than field limit"),
        (GOOD.replace("2026-11-01", "9999-12-31"), ":3: column 'observed_at': 9999-12-31"),
    ],
)
def test_a_hostile_generic_csv_ends_in_a_clean_error_naming_the_place(tmp_path, bad_row, where):
    path = csv_file(tmp_path, bad_row)
    assert_clean_failure(import_error(path), f"{path}{where}")


def test_a_utf16_file_is_a_clean_encoding_error(tmp_path):
    path = write_bytes(tmp_path, f"{HEADER}\n{GOOD}\n".encode("utf-16"))
    assert_clean_failure(import_error(path), f"{path}:1:1: column '(encoding)': byte 0xff")


def test_a_skypilot_file_with_a_bad_byte_names_line_and_column(tmp_path):
    folder = tmp_path / "lambda"
    folder.mkdir()
    path = write_bytes(
        folder,
        b"InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region\n"
        b"gpu_1x_h100,H100,1,26,225,2.49,us-\xe9ast-1\n",
        "vms.csv",
    )
    assert_clean_failure(import_error(path), f"{path}:2:35: column '(encoding)': byte 0xe9")


def advisor(tmp_path: Path, data: bytes | str) -> Path:
    raw = data if isinstance(data, bytes) else data.encode()
    return write_bytes(tmp_path, raw, "spot-advisor-data-2026-11-01.json")


def test_a_deeply_nested_json_is_a_clean_error_not_a_recursion_crash(tmp_path):
    path = advisor(tmp_path, '{"ranges": [],\n "x": ' + "[" * 100_000 + "]" * 100_000 + "}")
    assert_clean_failure(import_error(path), f"{path}:2:38: column '(json)': nested deeper than 32 levels")


def test_brackets_inside_strings_do_not_count_as_nesting(tmp_path):
    text = json.dumps(
        {"ranges": [{"index": 0, "label": "<5%"}], "note": "[" * 100 + '\\"{', "spot_advisor": {}}
    )
    path = advisor(tmp_path, text)
    call_command("import_prices", str(path), stdout=StringIO())
    assert PriceRefresh.objects.get().status == "succeeded"


def test_an_unreadable_ranges_list_is_an_error_naming_the_field(tmp_path):
    path = advisor(tmp_path, json.dumps({"ranges": [{"index": 1e999, "label": "x"}], "spot_advisor": {}}))
    assert_clean_failure(import_error(path), f"spot-advisor:{path.name}: column 'ranges'")


@pytest.mark.parametrize(
    ("document", "field"),
    [
        (
            {
                "ranges": [{"index": 7, "label": "x"}],
                "spot_advisor": {"us-east-1": {"Linux": {"p5": {"r": 7, "s": 5}}}},
            },
            "spot_advisor.us-east-1.Linux.p5.r",
        ),
        (
            {
                "ranges": [{"index": 0, "label": "x" * 100}],
                "spot_advisor": {"us-east-1": {"Linux": {"p5": {"r": 0, "s": 5}}}},
            },
            "ranges",
        ),
        (
            {
                "ranges": [{"index": 0, "label": "x"}],
                "spot_advisor": {"r" * 500: {"Linux": {"p5": {"r": 0, "s": 5}}}},
            },
            f"spot_advisor.{'r' * 60}.Linux.p5",
        ),
    ],
)
def test_hostile_advisor_rows_are_refused_naming_the_field(tmp_path, document, field):
    path = advisor(tmp_path, json.dumps(document))
    out = StringIO()
    call_command("import_prices", str(path), stdout=out)
    refresh = PriceRefresh.objects.get()
    assert (refresh.status, refresh.rows_refused) == ("succeeded", 1)
    assert f"column {field!r}" in refresh.refused_reasons["out_of_range"]["examples"][0]
    assert "0 inserted, 0 unchanged, 1 rejected" in out.getvalue()


def test_an_advisor_file_with_a_bad_byte_names_line_and_column(tmp_path):
    path = advisor(tmp_path, b'{"ranges": [],\n  "spot_advisor": "\xc3("}')
    assert_clean_failure(import_error(path), f"{path}:2:20: column '(encoding)': byte 0xc3")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=400), keep=st.integers(min_value=0, max_value=120))
def test_random_bytes_and_truncations_never_crash_the_generic_importer(tmp_path_factory, data, keep):
    folder = tmp_path_factory.mktemp("hostile")
    good = f"{HEADER}\n{GOOD}\n".encode()
    path = write_bytes(folder, good[: len(HEADER) + 1 + keep] + data)
    out = StringIO()
    try:
        call_command("import_prices", str(path), "--format", "generic", stdout=out)
    except CommandError as error:
        assert str(error).startswith(str(path))  # a clean error that names the file
    assert not PriceRefresh.objects.filter(status="running").exists()
