"""Outside probes of issue 31's classes (re-test after the hardening), as an attacker with a signed-in
account would try them, on loopback through Django's test client. One test per class; each tries the
class on every route or export it applies to that the author's own tests did not reach:

1. formula injection: user-written names (a study's, a workload's) and billing tags in every column reach
   every report export (CSV zip, one-table CSV, XLSX) of every report kind as text (OWASP's rule,
   https://owasp.org/www-community/attacks/CSV_Injection);
2. bombs: a gzip of 512 MiB of empty lines (0.5 MB: the line scan was a Python step per line and held a
   worker for over 300 s), a gzip of one endless line, a JSON tag cell nested 60,000 deep (a 500 before),
   a Parquet file, a zip, each a 4xx naming the file, quickly and in bounded memory;
3. every input a 4xx: multipart text fields (the shared middleware checks query and urlencoded bodies
   only: the author's known gap), YAML anchors, huge integers, on every route of the URL conf;
4. GET changes nothing, 5. saving twice is one save (PostgreSQL, two threads at once), 6. no-store on
   spend answers including POST answers, 7. webhook targets in the forms an attacker writes them
   (decimal/octal/hex IPv4, IPv6 carrying a private IPv4), 8. benchmarks and cross-team reads.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import re
import threading
import time
import tracemalloc
import zipfile

import openpyxl
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test import Client
from django.urls import reverse
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from procurement.webhooks import check_webhook_url
from tests.gpuledger.test_authorization_matrix import RULES, all_routes, is_admin_site, world  # noqa: F401
from tests.gpuledger.test_every_route_input import ROUTES
from tests.planning.capacity_plans.conftest import demo_bills  # noqa: F401  (fixtures)
from tests.procurement.costing.conftest import h100  # noqa: F401
from tests.procurement.reports.conftest import make_ranked_workload  # noqa: F401

HEADER = (
    b"ChargePeriodStart,ChargePeriodEnd,ChargeCategory,BilledCost,EffectiveCost,BillingCurrency,ProviderName,"
    b"ConsumedQuantity,ConsumedUnit,x_UsageType,Tags\n"
)
ROW = (
    b"2026-05-01T00:00:00Z,2026-05-02T00:00:00Z,Usage,19.3152,19.3152,USD,AWS,24,Hours,"
    b'USE1-BoxUsage:g6.xlarge,"{""team"": ""research""}"\n'
)
# what an attacker writes into a name: each a formula in Excel, LibreOffice or Sheets if it starts a cell
FORMULAS = [
    '=HYPERLINK("http://evil.example","x")',
    "+1+cmd|' /C calc'!A0",
    "-2+3",
    "@SUM(1)",
    "\t=1",
    "\r=1",
]
INSIDE = 'ok,=1+2;"@x'  # a trigger after a separator inside a quoted field


def _unsafe(cell: str) -> bool:
    if re.fullmatch(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?", cell):
        return False
    return bool(re.search(r"(^|[,;\"|\t\n\r])[=+\-@\t\r]", cell))


def _csv_cells(content: bytes) -> list[str]:
    return [cell for row in csv.reader(io.StringIO(content.decode(), newline="")) for cell in row]


def _export_cells(client, url: str) -> tuple[list[str], list]:
    """(every CSV cell of the zip or CSV at url, every XLSX text cell of its xlsx sibling)."""
    answer = client.get(url)
    assert answer.status_code == 200, (url, answer.content[:200])
    content = answer.content
    if content[:2] == b"PK":
        archive = zipfile.ZipFile(io.BytesIO(content))
        cells = [cell for name in archive.namelist() for cell in _csv_cells(archive.read(name))]
    else:
        cells = _csv_cells(content)
    workbook = openpyxl.load_workbook(io.BytesIO(client.get(url.replace("/csv/", "/xlsx/")).content))
    texts = [
        cell for sheet in workbook for row in sheet.iter_rows() for cell in row if isinstance(cell.value, str)
    ]
    return cells, texts


def _assert_text_only(cells: list[str], texts: list, name: str, url: str) -> None:
    # the CSV tables hold figures; the name is in the XLSX title ("Rent or buy: <name>"), a spend name in both
    assert any(name.strip("\t\r") in text for text in cells + [cell.value for cell in texts]), url
    assert [cell for cell in cells if _unsafe(cell)] == [], url
    for cell in texts:
        if cell.value.startswith(("=", "+", "-", "@", "\t", "\r")) and cell.data_type != "f":
            assert (cell.data_type, cell.quotePrefix) == ("s", True), (url, cell.value)
        elif cell.data_type == "f":  # only the totals the report writes itself
            assert re.fullmatch(r"=SUM\([A-Z]+\d+:[A-Z]+\d+\)", cell.value), (url, cell.value)


# ---- 1. formula injection ---------------------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("name", FORMULAS + [INSIDE])
def test_a_formula_name_is_text_in_every_report_export(name, make_ranked_workload, client_as, h100):  # noqa: F811
    """A study's and a workload's name (an engineer writes them; finance opens the exports) in the
    rent-or-buy and spot reports, live and kept, CSV and XLSX."""
    from procurement.services.tco import tco_study_create
    from tests.procurement.costing.tco_fixtures import study_document

    client = client_as("engineer", team="research")
    study = tco_study_create(
        document=study_document(name=name, utilization="0.8"),
        owner=client.user,
        team=client.user.teams.first(),
    )
    workload = make_ranked_workload(name=name)
    for kind, subject in (("rent_or_buy", study.pk), ("spot", workload.pk)):
        snapshot = client.post(f"/reports/{kind}/{subject}/").context["snapshot"]
        for url in (
            f"/reports/{kind}/{subject}/download/csv/",
            f"/reports/{kind}/snapshots/{snapshot.pk}/csv/",
        ):
            cells, texts = _export_cells(client, url)
            _assert_text_only(cells, texts, name, url)


@pytest.mark.django_db
def test_hostile_text_in_every_bill_column_is_text_in_every_spend_export(tmp_path, client_as):
    """Every text column of a FOCUS row an attacker controls through a tag or a usage type, in the spend
    review CSV, its report (zip, one table, XLSX) and the kept snapshot's."""
    from django.core.management import call_command

    from tests.billing.catalog import make_catalog

    make_catalog()
    tags = {
        "team": FORMULAS[0],
        "project": FORMULAS[1],
        "account": FORMULAS[3],
        "env": INSIDE,
        "owner": "-2+3",
    }
    tag_cell = json.dumps(tags).replace('"', '""').encode()
    row = ROW.replace(b'{""team"": ""research""}', tag_cell)
    bill = tmp_path / "bill.csv"
    bill.write_bytes(HEADER + row)
    call_command("import_billing", str(bill), "--format", "focus", "--no-progress", stdout=io.StringIO())
    client = client_as("finance")
    query = "?start=2026-05-01&end=2026-06-01"
    review = _csv_cells(client.get(f"/billing/review.csv{query}").content)
    assert any(FORMULAS[0] in cell for cell in review) and [c for c in review if _unsafe(c)] == []
    snapshot = client.post(f"/reports/spend_review/{query}").context["snapshot"]
    for url in (
        f"/reports/spend_review/download/csv/{query}",
        f"/reports/spend_review/snapshots/{snapshot.pk}/csv/",
    ):
        cells, texts = _export_cells(client, url)
        _assert_text_only(cells, texts, FORMULAS[0], url)
    for table in ("by_team", "by_project"):
        one = _csv_cells(client.get(f"/reports/spend_review/download/csv/{query}&table={table}").content)
        assert [cell for cell in one if _unsafe(cell)] == [], table


# ---- 2. decompression and size bombs ------------------------------------------------------------------------

UPLOADS = ("/api/billing/imports/", "/billing/upload/")


def _parquet(rows: int) -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq

    names = HEADER.decode().strip().split(",")
    values = ROW.decode().strip().split(",", 10)
    table = pa.table(
        {
            name: [value.strip('"').replace('""', '"')] * rows
            for name, value in zip(names, values, strict=True)
        }
    )
    out = io.BytesIO()
    pq.write_table(table, out, compression="zstd")
    return out.getvalue()


def _zip(data: bytes) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("bill.csv", data)
    return out.getvalue()


DEEP_TAGS = ROW.replace(b'"{""team"": ""research""}"', b'"' + b"[" * 60_000 + b"]" * 60_000 + b'"')
BOMBS = {
    # 0.5 MB of gzip: 512 MiB of empty lines (refused as a bomb: it expands over 250 times past 64 MiB)
    "empty-lines.csv.gz": (gzip.compress(HEADER + ROW + b"\n" * (512 << 20), 9), "once decompressed"),
    "one-line.csv.gz": (gzip.compress(HEADER + b"a" * (200 << 20), 9), "a line over 1024 KiB"),
    "deep-tags.csv": (HEADER + DEEP_TAGS, "nested deeper than 32 levels"),
    "bill.zip": (_zip(HEADER + ROW), "NUL byte"),  # not a format it reads: named, not a 500
}


@pytest.mark.django_db
@pytest.mark.parametrize("file_name", list(BOMBS))
def test_a_bomb_upload_is_a_4xx_naming_the_file_quickly_in_bounded_memory(
    file_name, client_as, bundled_catalog
):
    data, message = BOMBS[file_name]
    client = client_as("finance")
    client.raise_request_exception = False
    for url in UPLOADS:
        tracemalloc.start()
        started = time.monotonic()
        answer = client.post(url, {"file": SimpleUploadedFile(file_name, data), "format": "focus"})
        seconds, peak = time.monotonic() - started, tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        text = answer.content.decode(errors="replace")
        assert answer.status_code == 400, (url, answer.status_code, text[:300])
        assert file_name in text and message in text, (url, text[:300])
        assert seconds < 10 and peak < 64 << 20, (url, seconds, peak >> 20)  # before: >300 s, or a 500


@pytest.mark.django_db
def test_a_parquet_bill_is_still_read(client_as, bundled_catalog):
    client = client_as("finance")
    assert (
        client.post(UPLOADS[0], {"file": SimpleUploadedFile("bill.parquet", _parquet(3))}).status_code == 201
    )


@pytest.mark.django_db
def test_a_parquet_cell_over_the_line_bound_is_refused_before_decoding(client_as, bundled_catalog):
    """A 13 KB zstd Parquet file with one 300 MiB Tags cell was decoded whole (300 MiB peak) before the tag
    check refused it: bounds._check_parquet summed the footer's row-group sizes against 16 GiB only. Now
    a row group whose rows average over the 1 MiB line bound is refused from the footer. Left open: one
    such cell among a million small rows still averages under the bound (the footer has no per-cell
    size), and a footer that lies about its sizes is trusted."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    names = HEADER.decode().strip().split(",")
    values = [value.strip('"') for value in ROW.decode().strip().split(",", 10)]
    values[10] = "x" * (300 << 20)
    out = io.BytesIO()
    pq.write_table(
        pa.table({name: [value] for name, value in zip(names, values, strict=True)}), out, compression="zstd"
    )
    client = client_as("finance")
    tracemalloc.start()
    answer = client.post(UPLOADS[0], {"file": SimpleUploadedFile("cell.parquet", out.getvalue())})
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert answer.status_code == 400 and b"cell.parquet: row group 1: rows over 1024 KiB" in answer.content
    assert peak < 64 << 20, peak >> 20


@pytest.mark.django_db
def test_a_cell_over_the_csv_field_limit_is_refused_naming_it(client_as, bundled_catalog):
    """A 200,000-character tag (over the csv module's 131,072 limit; AWS caps tag values at 256, GCP
    labels at 63) was imported as a team name: Arrow reads CSV and Parquet with no field limit."""
    row = ROW.replace(b'""research""', b'""' + b"r" * 200_000 + b'""')
    client = client_as("finance")
    answer = client.post(UPLOADS[0], {"file": SimpleUploadedFile("long.csv", HEADER + row)})
    assert b"long.csv:2:Tags: a cell over 131,072 characters" in answer.content
    just_under = ROW.replace(b'""research""', b'""' + b"r" * 131_000 + b'""')  # a line, not a cell, limit
    assert (
        client.post(UPLOADS[0], {"file": SimpleUploadedFile("ok.csv", HEADER + just_under)}).status_code
        == 201
    )
    assert answer.status_code == 400 and b"long.csv:2" in answer.content


# ---- 3. every input a 4xx: multipart text fields, YAML anchors, huge numbers -----------------------------------

BOUNDARY = "x31boundary"
HOSTILE_FIELDS = {
    "name": b"a\xed\xa0\x80b",  # a lone surrogate as a browser's bytes
    "spec": b"a: &a [1, 2]\nb: *a\nc: [*a, *a, *a]\n",  # YAML anchors (billion laughs' first step)
    "study": b"x: " + b"[" * 5000 + b"]" * 5000,
    "start": b"0001-01-01",
    "end": b"9999-12-31",
    "from": b"0001-01-01",
    "to": b"9999-12-31",
    "utilization": b"1e-400",
    "hours": b"9" * 5000,  # past int's 4,300-digit string limit
    "trials": b"99999999999999999999999",
    "team": b"x\x00y",
    "document": b"\xff\xfe not utf-8",
}


def _multipart(fields: dict[str, bytes]) -> bytes:
    parts = [
        f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n'.encode() + value + b"\r\n"
        for name, value in fields.items()
    ]
    return b"".join(parts) + f"--{BOUNDARY}--\r\n".encode()


@pytest.mark.django_db
@pytest.mark.parametrize("role", ["admin", "finance", "engineer"])
def test_hostile_multipart_text_fields_are_never_a_5xx_on_any_route(role, client_as, bundled_catalog):
    """The author's known gap: the shared middleware checked the query and urlencoded bodies, not
    multipart. On PostgreSQL a NUL in a multipart token name (POST /accounts/me/tokens/) was a 500; run
    this file with DATABASE_URL set to see it. Fixed in gpuledger/middleware.py (pages; DRF checks its own)."""

    client = client_as(role, team="research")
    client.raise_request_exception = False
    failures = []
    for route in ROUTES:
        for fields in (
            HOSTILE_FIELDS,
            {"name": HOSTILE_FIELDS["name"]},
            {"hours": HOSTILE_FIELDS["hours"]},
            {"name": b"x\x00y"},
            {"name": b"x\x00y", "action": b"save"},
        ):
            answer = client.generic(
                "POST", route, _multipart(fields), content_type=f"multipart/form-data; boundary={BOUNDARY}"
            )
            if answer.status_code >= 500:
                failures.append((route, list(fields), answer.status_code))
    assert failures == []


@pytest.mark.django_db
@pytest.mark.parametrize(
    "route", ["/api/size/", "/api/recommendations/", "/api/tco/", "/api/capacity-plans/"]
)
@pytest.mark.parametrize(
    "body",
    [
        '{"name": "a", "hours": ' + "9" * 5000 + "}",
        '{"name": "a", "trials": 99999999999999999999999, "horizon_months": 1e308}',
        '{"workload": {"name": "\\ud800"}}',
        '{"spec": "a: &a [1]\\nb: [*a, *a]"}',
        "",
        "null",
        "[]",
        '"text"',
    ],
    ids=["5000-digit-int", "huge", "escaped-surrogate", "yaml-anchor", "empty", "null", "list", "string"],
)
def test_a_hostile_json_body_is_a_4xx(route, body, client_as, bundled_catalog):
    client = client_as("admin")
    client.raise_request_exception = False
    answer = client.post(route, body, content_type="application/json")
    assert 400 <= answer.status_code < 500, (route, answer.status_code, answer.content[:200])


# ---- 4. GET changes nothing, even when the query asks for a save ---------------------------------------------

SAVE_QUERY = {
    "save": "1",
    "action": "save",
    "keep": "1",
    "from": "2026-05-01",
    "to": "2026-11-01",
    "start": "2026-05-01",
    "end": "2026-06-01",
    "gpu": "h100-sxm5-80gb",
    "trials": "50",
    "name": "x",
}


@pytest.mark.django_db
def test_no_get_writes_a_row_even_with_save_in_the_query(world):  # noqa: F811
    from tests.gpuledger.test_nothing_changes_on_get import table_counts

    users, objects = world
    before, opened = table_counts(), 0
    for role in ("finance", "admin", "engineer"):
        client = Client()
        client.force_login(users[role])
        client.raise_request_exception = False
        for name, route in all_routes():
            rule = RULES.get(name)
            if is_admin_site(name, route) or rule is None:
                continue
            kwargs = {}
            for key in rule.kwargs:
                kwargs |= objects[key]
            client.get(reverse(name, kwargs=kwargs or None), SAVE_QUERY)
            client.head(reverse(name, kwargs=kwargs or None), SAVE_QUERY)
            opened += 1
    after = table_counts()
    assert opened > 150
    assert {label: (before[label], after[label]) for label in before if before[label] != after[label]} == {}


# ---- 6. no-store on every spend answer, POST answers and errors included -----------------------------------


@pytest.mark.django_db
def test_spend_post_answers_and_their_errors_are_no_store(demo_bills, client_as):  # noqa: F811
    client = client_as("finance")
    client.raise_request_exception = False
    plan = {
        "from": "2026-05-01",
        "to": "2026-11-01",
        "gpu": "h100-sxm5-80gb",
        "providers": ["aws"],
        "trials": 50,
    }
    answers = {
        "plan saved": client.post(
            "/api/capacity-plans/", plan | {"save": True}, content_type="application/json"
        ),
        "plan computed": client.post("/api/capacity-plans/", plan, content_type="application/json"),
        "plan error": client.post("/api/capacity-plans/", {"from": "x"}, content_type="application/json"),
        "commitments": client.post("/api/commitments/", {}, content_type="application/json"),
        "plan page": client.post(
            "/plans/", {"from": "2026-05-01", "to": "2026-11-01", "gpu": "h100-sxm5-80gb"}
        ),
        "upload error": client.post("/billing/upload/", {}),
        "kept report": client.post("/reports/spend_review/?start=2026-05-01&end=2026-06-01"),
        "review 0001": client.get("/api/billing/spend-review/", {"from": "0001-01-01", "to": "9999-12-31"}),
    }
    assert answers["plan saved"].status_code == 201
    assert {
        name: a.get("Cache-Control", "")
        for name, a in answers.items()
        if "no-store" not in a.get("Cache-Control", "")
    } == {}


# ---- 8. benchmarks and every team-owned object stay within their team ----------------------------------------


@pytest.mark.django_db
def test_another_teams_engineer_reads_nothing_of_research_on_any_route(world):  # noqa: F811
    """The world: team research owns a workload "matrix job", a study, a benchmark "matrix run" (source
    "matrix"), reports of them. An engineer of team platform opens every route with research's ids, in
    HTML and JSON, and reads none of those names in any 200 answer."""
    from procurement.models import TcoStudy

    users, objects = world
    TcoStudy.objects.filter(pk=objects["study"]["pk"]).update(
        name="matrix study"
    )  # the example's name is public
    secrets = [b"matrix job", b"matrix run", b"matrix study"]
    client = Client()
    client.force_login(users["other_team_engineer"])
    client.raise_request_exception = False
    leaks, opened = [], 0
    for name, route in all_routes():
        rule = RULES.get(name)
        if is_admin_site(name, route) or rule is None:
            continue
        kwargs = {}
        for key in rule.kwargs:
            kwargs |= objects[key]
        url = reverse(name, kwargs=kwargs or None)
        for answer in (client.get(url), client.get(url, HTTP_ACCEPT="application/json")):
            opened += 1
            body = b"".join(answer.streaming_content) if answer.streaming else answer.content
            if answer.status_code == 200 and any(secret in body for secret in secrets):
                leaks.append((url, answer.status_code))
    assert opened > 100 and leaks == []
    benchmarks = client.get("/api/benchmarks/").json()
    listed = benchmarks.get("results", benchmarks) if isinstance(benchmarks, dict) else benchmarks
    assert all(row.get("model_name") != "matrix run" for row in listed)
    assert client.get(f"/benchmarks/{objects['benchmark']['pk']}/").status_code == 404


# ---- 7. webhooks in the forms an attacker writes them --------------------------------------------------------

# each reaches a loopback, private or link-local address: the resolver reads the numeric IPv4 forms
# (inet_aton), a sit tunnel the IPv4-compatible one, a NAT64 gateway (RFC 6052; AWS's NAT gateway does
# NAT64) the 64:ff9b:: ones, 6to4 relays the 2002:: one
NUMERIC_FORMS = [
    "https://2130706433/",
    "https://0x7f000001/",
    "https://0x7f.0.0.1/",
    "https://017700000001/",
    "https://0177.0.0.1/",
    "https://127.1/",
    "https://0/",
    "https://2852039166/latest/meta-data/",
    "https://[::127.0.0.1]/",
    "https://[64:ff9b::7f00:1]/",
    "https://[64:ff9b::a9fe:a9fe]/",
    "https://[64:ff9b::a00:1]/",
    "https://[2002:a9fe:a9fe::]/",
    "https://[::ffff:7f00:1]/",
    "https://[fe80::1%25eth0]/",
    "http://93.184.215.14/",
    "gopher://93.184.215.14/",
    "https://localhost./",
]


@pytest.mark.parametrize("url", NUMERIC_FORMS)
def test_every_written_form_of_an_internal_address_is_refused_at_save(url):
    from django.core.exceptions import ValidationError

    from procurement.webhooks import validate_webhook_url

    with pytest.raises(ValidationError):
        validate_webhook_url(url)


@pytest.mark.parametrize(
    "resolved",
    ["127.0.0.1", "169.254.169.254", "10.1.2.3", "::1", "fe80::1", "::ffff:10.0.0.1", "64:ff9b::a00:1"],
)
def test_a_name_resolving_to_an_internal_address_is_refused_at_send(resolved, monkeypatch):
    import socket

    from procurement import webhooks

    family = socket.AF_INET6 if ":" in resolved else socket.AF_INET
    answers = [
        (family, socket.SOCK_STREAM, 6, "", (resolved, 443)),
        (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("93.184.215.14", 443)),
    ]
    monkeypatch.setattr(socket, "getaddrinfo", lambda *args, **kwargs: answers)
    connected = []
    monkeypatch.setattr(socket, "create_connection", lambda *args, **kwargs: connected.append(args))
    assert check_webhook_url("https://hooks.example.com/x")[0] == "hooks.example.com"
    with pytest.raises(webhooks.WebhookRefused):
        webhooks.post_webhook("https://hooks.example.com/x", {"event": "probe"})
    assert connected == []


@pytest.mark.parametrize(
    "url",
    [
        "https://hooks.example.com/x",
        "https://1.1.1.1/",
        "https://[2606:4700::1111]/",
        "https://[64:ff9b::101:101]/",
    ],
)
def test_a_public_https_target_is_still_accepted(url):
    assert check_webhook_url(url)


@pytest.mark.django_db
@pytest.mark.parametrize("url", ["https://2130706433/", "https://[64:ff9b::a9fe:a9fe]/latest/"])
def test_the_admin_form_refuses_a_numeric_internal_webhook(url, client_as):
    """The admin's workload form (where an admin sets notify_webhook) runs the model field's validator."""
    from procurement.models import Workload

    admin = client_as("admin", is_staff=True, is_superuser=True)
    answer = admin.post(
        "/admin/procurement/workload/add/",
        {"name": "w", "task": "qlora", "spec": "{}", "notify_webhook": url},
    )
    # refused by the URL field (a bare number is no valid host) or by the webhook validator, never saved
    assert answer.status_code == 200 and b"errornote" in answer.content and not Workload.objects.exists()


# ---- 5. saving twice is one save ------------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_the_same_plan_saved_by_two_requests_at_once_is_one_row(require_postgres, demo_bills, client_as):  # noqa: F811
    """The author's known gap: a real race on PostgreSQL. Four threads, each its own connection and
    client, release together and POST the same plan with save; one row, every answer names it."""
    from django.db import connection as main_connection

    from planning.models import CapacityPlan

    users = [client_as("finance").user for _ in range(4)]
    body = {
        "from": "2026-05-01",
        "to": "2026-11-01",
        "gpu": "h100-sxm5-80gb",
        "providers": ["aws"],
        "trials": 100,
        "save": True,
    }
    barrier, answers = threading.Barrier(len(users)), []

    def save(user) -> None:
        client = Client()
        client.force_login(user)
        client.raise_request_exception = False
        barrier.wait()
        try:
            answer = client.post("/api/capacity-plans/", body, content_type="application/json")
            answers.append((answer.status_code, answer.json().get("id")))
        finally:
            connection.close()

    threads = [threading.Thread(target=save, args=(user,)) for user in users]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    main_connection.close()
    assert sorted(status for status, _ in answers) == [200, 200, 200, 201], answers
    assert len({plan_id for _, plan_id in answers}) == 1 and CapacityPlan.objects.count() == 1


@pytest.mark.django_db
def test_the_same_study_saved_twice_is_one_study(client_as, h100):  # noqa: F811
    from procurement.models import TcoStudy
    from tests.procurement.costing.tco_fixtures import study_document

    client = client_as("engineer", team="research")
    body = json.dumps(study_document(), default=str)
    first = client.post("/api/tco/", body, content_type="application/json")
    second = client.post("/api/tco/", body, content_type="application/json")
    assert (first.status_code, second.status_code) == (201, 200)  # the repeat stores nothing
    assert TcoStudy.objects.count() == 1 and first.json()["id"] == second.json()["id"]


@pytest.mark.django_db
def test_the_same_workload_saved_twice_is_one_workload(client_as, h100):  # noqa: F811
    """The second save stores nothing: 200 (the API's "nothing new was stored") naming the first's rows."""
    from procurement.models import Recommendation, Workload
    from tests.procurement.costing.test_recommendations import WORKLOAD

    client = client_as("engineer", team="research")
    body = json.dumps({"workload": WORKLOAD, "save": True})
    first, second = (
        client.post("/api/recommendations/", body, content_type="application/json") for _ in "12"
    )
    assert (first.status_code, second.status_code) == (201, 200), second.content[:200]
    assert (second.json()["workload_id"], second.json()["id"]) == (
        first.json()["workload_id"],
        first.json()["id"],
    )
    assert Workload.objects.count() == 1 and Recommendation.objects.count() == 1


@pytest.mark.django_db
def test_keep_this_report_twice_is_one_snapshot(make_ranked_workload, client_as):  # noqa: F811
    from procurement.models import ReportSnapshot

    client = client_as("engineer", team="research")
    workload = make_ranked_workload()
    first = client.post(f"/reports/spot/{workload.pk}/").context["snapshot"]
    second = client.post(f"/reports/spot/{workload.pk}/").context["snapshot"]
    assert first.pk == second.pk and ReportSnapshot.objects.count() == 1


@pytest.mark.django_db
def test_a_nul_in_a_multipart_page_field_is_a_400_naming_it_and_stores_nothing(client_as):
    from gpuledger.accounts.models import ApiToken

    client = client_as("engineer", team="research")
    answer = client.generic(
        "POST",
        "/accounts/me/tokens/",
        _multipart({"name": b"x\x00y"}),
        content_type=f"multipart/form-data; boundary={BOUNDARY}",
    )
    assert answer.status_code == 400 and answer.json()["errors"][0]["path"] == "name"
    assert not ApiToken.objects.exists()
    # an upload's own text fields too, and the file still reaches the upload form when they are fine
    finance = client_as("finance")
    refused = finance.post(
        "/billing/upload/", {"file": SimpleUploadedFile("b.csv", HEADER + ROW), "provider": "a\x00"}
    )
    assert refused.status_code == 400 and refused.json()["errors"][0]["path"] == "provider"


# ---- also open from the last round: the server's file paths ------------------------------------------------


@pytest.mark.django_db
def test_status_and_error_answers_show_no_server_path(client_as, bundled_catalog, settings):
    from pathlib import Path

    base = str(Path(settings.BASE_DIR).resolve()).encode()
    client = client_as("admin")
    client.raise_request_exception = False
    answers = [
        client.get("/status/"),
        client.get("/status/", HTTP_ACCEPT="application/json"),
        client.post("/billing/upload/", {"file": SimpleUploadedFile("x.csv", b"\xff\xfe")}),
        client.post("/api/billing/imports/", {"file": SimpleUploadedFile("x.csv.gz", b"\x1f\x8bjunk")}),
    ]
    for answer in answers:
        assert (
            base not in answer.content and b"/tmp/" not in answer.content and b"spool" not in answer.content
        )


@pytest.mark.django_db
def test_another_teams_engineer_changes_nothing_of_research_by_post(world):  # noqa: F811
    """Every route POSTed (form and JSON, with research's ids in the path and in the body) by team
    platform's engineer: no research object changes, no row is added on research's behalf."""
    from procurement.models import ReportSnapshot, TcoStudy, Workload
    from tests.gpuledger.test_nothing_changes_on_get import table_counts

    users, objects = world
    research_ids = {
        "workload": objects["workload"]["workload_id"],
        "workload_id": objects["workload"]["workload_id"],
        "study": objects["study"]["pk"],
        "study_id": objects["study"]["pk"],
        "subject_id": objects["workload"]["workload_id"],
        "benchmark": objects["benchmark"]["pk"],
    }
    before = table_counts()
    kept_before = {w.pk: (w.name, w.spec) for w in Workload.objects.all()}
    studies_before = {s.pk: s.name for s in TcoStudy.objects.all()}
    client = Client()
    client.force_login(users["other_team_engineer"])
    client.raise_request_exception = False
    for name, route in all_routes():
        rule = RULES.get(name)
        if is_admin_site(name, route) or rule is None or not rule.kwargs or name.startswith("account-"):
            continue
        kwargs = {}
        for key in rule.kwargs:
            kwargs |= objects[key]
        url = reverse(name, kwargs=kwargs or None)
        form = client.post(url, {key: str(value) for key, value in research_ids.items()} | {"confirm": "1"})
        as_json = client.post(url, json.dumps(research_ids), content_type="application/json")
        for answer in (
            form,
            as_json,
        ):  # a 200 (an offer page, a public catalog read) shows nothing of research
            assert answer.status_code < 500 and not (
                answer.status_code == 200 and b"matrix" in answer.content
            ), url
    after = table_counts()
    assert {label: (before[label], after[label]) for label in before if before[label] != after[label]} == {}
    assert {w.pk: (w.name, w.spec) for w in Workload.objects.all()} == kept_before
    assert {
        s.pk: s.name for s in TcoStudy.objects.all()
    } == studies_before and ReportSnapshot.objects.count() == 4


# the line scan was rewritten (C-speed find/count/regex instead of a Python step per line): it must name
# the same first over-long line as the obvious reading does, wherever the line breaks fall in the blocks
@hypothesis_settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(st.integers(0, 40), min_size=1, max_size=30), st.integers(1, 12), st.booleans())
def test_the_line_scan_names_the_first_over_long_line(tmp_path, lengths, block, gzipped):
    from django.test import override_settings

    from billing.imports import bounds

    text = b"\n".join(b"a" * length for length in lengths)
    path = tmp_path / ("f.gz" if gzipped else "f.csv")
    path.write_bytes(gzip.compress(text) if gzipped else text)
    expected = next((number for number, length in enumerate(lengths, start=1) if length > 10), None)
    original, bounds.READ_BLOCK = bounds.READ_BLOCK, block
    try:
        with override_settings(BILLING_MAX_LINE_BYTES=10):
            bounds.check_bounds(path)
        found = None
    except bounds.FileOutOfBounds as refused:
        found = refused.row
    finally:
        bounds.READ_BLOCK = original
    assert found == expected, (lengths, block)
