"""Decompression and size bombs (issue 31, finding 2): every billing upload (the page and the API) is
bounded by its decompressed size and its longest line while streaming, refused early with an error
naming the file and line; a field over the csv module's limit is a 400, not a 500; and the import runs
in the worker, never in the web process."""

from __future__ import annotations

import csv
import gzip
import time
import tracemalloc

import pytest
from celery.exceptions import TimeoutError as ResultTimeout
from django.core.files.uploadedfile import SimpleUploadedFile

from billing.imports.bounds import MAX_LINE_BYTES, FileOutOfBounds, check_bounds
from tests.billing.stored import stored_rows

pytestmark = pytest.mark.django_db
HEADER = "ChargePeriodStart,ChargePeriodEnd,ChargeCategory,BilledCost,EffectiveCost,BillingCurrency,ProviderName,ConsumedQuantity,ConsumedUnit,x_UsageType,Tags"
ROW = '2026-05-01T00:00:00Z,2026-05-02T00:00:00Z,Usage,19.3152,19.3152,USD,AWS,24,Hours,USE1-BoxUsage:g6.xlarge,"{""team"": ""platform""}"'
UPLOADS = ["/billing/upload/", "/api/billing/imports/"]
BOMB_BYTES = 64 << 20  # 64 MiB of one line; the finding's was 200 MB (same shape, a shorter test)


def bomb() -> bytes:
    """64 MiB of "a" and no newline: about 64 KB of gzip (ratio about 1000:1, as the finding's)."""
    return gzip.compress(HEADER.encode() + b"\n" + b"a" * BOMB_BYTES, compresslevel=9)


def _post(client, url: str, name: str, content: bytes):
    return client.post(url, {"file": SimpleUploadedFile(name, content), "format": "focus"})


def _error_text(response) -> str:
    return response.content.decode()


def test_the_bound_stops_a_bomb_after_about_one_line_limit_read(tmp_path):
    path = tmp_path / "bomb.csv.gz"
    path.write_bytes(bomb())
    tracemalloc.start()
    started = time.perf_counter()
    with pytest.raises(FileOutOfBounds) as refused:
        check_bounds(path)
    elapsed = time.perf_counter() - started
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert refused.value.row == 2 and "over 1024 KiB" in str(refused.value)  # line 2: the header is line 1
    # refused after reading about MAX_LINE_BYTES plus one block, not the 64 MiB: bounded time and memory
    assert elapsed < 1.0 and peak < 8 * MAX_LINE_BYTES <= BOMB_BYTES / 8, (elapsed, peak)


@pytest.mark.parametrize("url", UPLOADS)
def test_a_bomb_upload_is_a_400_naming_file_and_line(client_as, url):
    response = _post(client_as("finance"), url, "bomb.csv.gz", bomb())
    assert response.status_code == 400
    assert "bomb.csv.gz:2: a line over 1024 KiB" in _error_text(response)
    assert len(stored_rows()) == 0


@pytest.mark.parametrize("url", UPLOADS)
def test_a_file_over_the_decompressed_bound_is_refused(client_as, url, settings):
    settings.BILLING_MAX_DECOMPRESSED_BYTES = 1 << 20
    lines = [HEADER] + [ROW.replace("19.3152", f"{n}.5") for n in range(20_000)]  # about 3 MiB
    content = gzip.compress(("\n".join(lines) + "\n").encode())
    response = _post(client_as("finance"), url, "big.csv.gz", content)
    assert response.status_code == 400 and "big.csv.gz: over 1 MiB once decompressed" in _error_text(response)
    assert len(stored_rows()) == 0


@pytest.mark.parametrize("url", UPLOADS)
def test_a_field_over_the_csv_field_limit_is_a_400_naming_the_line(client_as, url):
    huge = "x" * (csv.field_size_limit() + 10)  # 131,082 characters, a line under the 1 MiB bound
    bad = ROW.replace('""platform""', f'""{huge}""')
    # a short line after it makes the CSV parser give up and the file be re-read line by line to name
    # what is wrong: the csv module's reader, whose field limit raised a 500 before (issue 31)
    content = f"{HEADER}\n{ROW}\n{bad}\nshort,line\n".encode()
    response = _post(client_as("finance"), url, "long-field.csv", content)
    assert response.status_code == 400, response.content[:300]
    assert "long-field.csv:3: cannot be read as CSV: field larger than field limit (131072)" in _error_text(
        response
    )
    assert len(stored_rows()) == 0


class _Running:
    """What .delay() answers for an import still running in a worker."""

    def get(self, timeout=None):
        raise ResultTimeout("still running")


def test_the_import_runs_in_the_worker_not_the_web_process(client_as, monkeypatch):
    import billing.imports.importer as importer
    from billing.imports.upload_tasks import import_upload_task

    queued = []
    monkeypatch.setattr(importer, "import_files", lambda *a, **k: pytest.fail("parsed in the web process"))
    monkeypatch.setattr(import_upload_task, "delay", lambda *args: queued.append(args) or _Running())
    client = client_as("finance")
    page = _post(client, "/billing/upload/", "bill.csv", f"{HEADER}\n{ROW}\n".encode())
    assert page.status_code == 302
    api = _post(client, "/api/billing/imports/", "bill.csv", f"{HEADER}\n{ROW}\n".encode())
    assert api.status_code == 202 and api.json()["status"] == "queued"
    assert [args[1:] for args in queued] == [("focus", "", client.user.pk)] * 2
    assert all(args[0].endswith("/bill.csv") for args in queued)  # the spooled file, name kept


def test_the_worker_imports_the_spooled_file_and_removes_it(client_as, tmp_path, settings):
    from pathlib import Path

    settings.BILLING_SPOOL_DIR = str(tmp_path / "spool")
    response = _post(client_as("finance"), "/api/billing/imports/", "bill.csv", f"{HEADER}\n{ROW}\n".encode())
    assert response.status_code == 201 and response.json()["inserted"] == 1
    assert list(Path(settings.BILLING_SPOOL_DIR).iterdir()) == []


@pytest.mark.parametrize("block", [64, 256, 4096])
@pytest.mark.parametrize("long_bytes", [150, 5_000])
@pytest.mark.parametrize("compressed", [False, True])
def test_a_long_line_is_named_by_its_number_wherever_the_blocks_cut_it(
    tmp_path, settings, monkeypatch, block, long_bytes, compressed
):
    """The scan counts no lines on its way (issue 28: that count was 80% of its time) and counts them again
    only for the refusal: the number must be the long line's own, whether the line starts and ends in one
    block, spans blocks without a newline, or runs past a block's end (36 short lines of 1 to 36 bytes
    before it: the header is line 1, the long one line 37)."""
    from billing.imports import bounds

    settings.BILLING_MAX_LINE_BYTES = 100
    monkeypatch.setattr(bounds, "READ_BLOCK", block)
    text = b"".join(b"x" * length + b"\n" for length in range(1, 37)) + b"y" * long_bytes + b"\nz\n"
    path = tmp_path / ("long.csv.gz" if compressed else "long.csv")
    path.write_bytes(gzip.compress(text) if compressed else text)
    with pytest.raises(FileOutOfBounds) as refused:
        check_bounds(path)
    assert refused.value.row == 37
