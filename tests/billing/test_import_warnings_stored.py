"""An import's warnings (a tag value that names nothing, imports/tag_formats.TagNotes) are stored on its
BillingImport (bounded: at most 21 lines of at most 500 characters) and shown wherever the import is: the
imports list of /billing/upload/ and the admin. Every import path stores them: manage.py import_billing,
the upload API (through the worker) and the scheduled S3 import; a re-import of the same file (recognized
by its checksum, not read again) keeps the first import's."""

from __future__ import annotations

import copy
from io import StringIO

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command

from billing.imports.scheduled import export_sources_sync
from billing.models import BillingImport
from billing.storage.store import MAX_WARNING_CHARS, MAX_WARNINGS, ImportResult, stored_warnings
from tests.billing.catalog import make_catalog
from tests.billing.test_scheduled_s3_import import cur_csv, deliver, s3, source  # noqa: F401 (fixtures)
from tests.billing.test_sources import CUR_ROWS
from tests.billing.test_upload_bounds import HEADER, ROW

pytestmark = pytest.mark.django_db
NESTED = ROW.replace('""team"": ""platform""', '""team"": {""lead"": ""ml""}')
WARNING = 'bill.csv:2:Tags: tag "team" is {"lead": "ml"}, a JSON object, not a name: 1 row kept untagged'


def bill(tmp_path, name="bill.csv"):
    path = tmp_path / name
    path.write_text(f"{HEADER}\n{NESTED}\n")
    return path


def listed(client) -> str:
    html = client.get("/billing/upload/").content.decode()
    return html[html.index('id="imports"') :]


def test_the_command_stores_the_warning_and_the_page_shows_it(tmp_path, client_as):
    make_catalog()
    path = bill(tmp_path)
    err = StringIO()
    call_command("import_billing", str(path), "--no-progress", stdout=StringIO(), stderr=err)
    assert f"warning: {tmp_path}/{WARNING}" in err.getvalue()  # printed naming the file as given
    stored = BillingImport.objects.get()
    assert stored.warnings == [WARNING]  # stored naming the file as the import does
    assert WARNING.replace('"', "&quot;") in listed(client_as("finance"))


def test_a_reimport_of_the_same_file_keeps_the_first_imports_warnings(tmp_path):
    make_catalog()
    path = bill(tmp_path)
    call_command("import_billing", str(path), "--no-progress", stdout=StringIO(), stderr=StringIO())
    err = StringIO()
    call_command("import_billing", str(path), "--no-progress", stdout=StringIO(), stderr=err)
    first, again = BillingImport.objects.order_by("pk")
    assert again.unchanged == 1 and again.inserted == 0
    assert again.warnings == first.warnings == [WARNING]
    assert f"warning: {WARNING}" in err.getvalue()


def test_the_upload_api_answers_and_stores_the_warning(client_as, tmp_path, settings):
    make_catalog()
    settings.BILLING_SPOOL_DIR = str(tmp_path / "spool")
    client = client_as("finance")
    upload = SimpleUploadedFile("bill.csv", f"{HEADER}\n{NESTED}\n".encode())
    response = client.post("/api/billing/imports/", {"file": upload, "format": "focus"})
    assert response.status_code == 201, response.content
    assert response.json()["warnings"] == [WARNING]  # no spool folder in it
    assert BillingImport.objects.get(pk=response.json()["imports"][0]).warnings == [WARNING]
    assert WARNING.replace('"', "&quot;") in listed(client)


def test_the_scheduled_import_stores_the_warning(s3, source, client_as):  # noqa: F811
    rows = copy.deepcopy(CUR_ROWS)
    rows[0][10] = '{"user_team": {"lead": "ml"}}'
    deliver(s3, "2026-05", "exec-1", cur_csv(rows))
    export_sources_sync(s3=s3)
    imported = BillingImport.objects.get()
    assert len(imported.warnings) == 1, imported.warnings
    assert imported.warnings[0].startswith(f"{imported.file_name}:2:resource_tags: tag ")
    assert '{"lead": "ml"}, a JSON object, not a name: 1 row kept untagged' in imported.warnings[0]
    assert "/tmp" not in imported.warnings[0]  # the download folder is not the file's name
    assert "a JSON object, not a name" in listed(client_as("finance"))


def test_stored_warnings_are_bounded_and_name_the_file_as_imported():
    lines = [f"/spool/x/bill.csv:{n}:Tags: " + "v" * 600 for n in range(30)]
    stored = stored_warnings(lines, location="/spool/x/bill.csv", file_name="bill.csv")
    assert len(stored) == MAX_WARNINGS
    assert all(len(line) <= MAX_WARNING_CHARS for line in stored)
    assert stored[0].startswith("bill.csv:0:Tags: vvv") and stored[0].endswith("…")
    assert stored[-1] == "10 more warnings not stored"


def test_one_result_type_carries_the_warnings():
    total = ImportResult()
    total.add(ImportResult(warnings=["a"]))
    total.add(ImportResult(inserted=1, warnings=["b"]))
    assert total.warnings == ["a", "b"] and total.inserted == 1


def test_the_admin_shows_the_warnings_read_only():
    from django.contrib import admin

    assert "warnings" in admin.site._registry[BillingImport].readonly_fields
