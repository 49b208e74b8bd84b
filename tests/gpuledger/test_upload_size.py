"""An oversized upload is refused from its Content-Length before its body is read (issue 31): Django
used to receive a multipart upload whole (to temp disk) before the upload view saw it was over 1 GiB.
The limit is the upload's (billing.imports.uploads: 1 GiB) plus a 1 MiB multipart envelope; the
answer is a 413 in the API's one error shape, on every route, signed in or not."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.http import HttpResponse
from django.http.multipartparser import MultiPartParser
from django.test import RequestFactory

from billing.imports.uploads import MAX_UPLOAD_BYTES
from billing.models import BillingImport
from gpuledger.upload_size import MAX_REQUEST_BYTES, RefuseOversizedBodyMiddleware
from tests.billing.stored import stored_rows
from tests.billing.test_upload_bounds import HEADER, ROW

OVER = str(MAX_REQUEST_BYTES + 1)  # 1 GiB + 1 MiB + 1 byte declared
UPLOADS = ["/billing/upload/", "/api/billing/imports/"]


def test_the_limit_is_the_uploads_plus_an_envelope():
    assert MAX_UPLOAD_BYTES == 2**30 and MAX_REQUEST_BYTES == 2**30 + 2**20


@pytest.fixture
def body_never_read(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the multipart body was read")

    monkeypatch.setattr(MultiPartParser, "parse", refuse)


@pytest.mark.django_db
@pytest.mark.parametrize("url", UPLOADS)
def test_an_upload_declared_over_the_limit_is_a_413_before_its_body_is_read(url, client_as, body_never_read):
    client = client_as("finance")
    answer = client.post(url, {"file": SimpleUploadedFile("big.csv", b"x")}, CONTENT_LENGTH=OVER)
    body = answer.json()
    assert answer.status_code == 413 and answer["Connection"] == "close"
    assert (
        body["errors"][0]["path"] == "(root)"
        and "over the 1024 MiB upload limit" in body["errors"][0]["message"]
    )
    assert str(MAX_REQUEST_BYTES + 1) in body["errors"][0]["message"]
    assert not BillingImport.objects.exists() and not stored_rows()


@pytest.mark.django_db
def test_it_is_refused_on_every_route_and_before_sign_in(client, body_never_read):
    for url in ("/api/tco/", "/accounts/login/", "/billing/upload/"):
        answer = client.post(url, {"file": SimpleUploadedFile("big.csv", b"x")}, CONTENT_LENGTH=OVER)
        assert answer.status_code == 413, url


def test_a_body_at_the_limit_or_without_a_length_goes_on():
    """The bound is inclusive; a missing or malformed Content-Length is Django's (read as no body)."""
    middleware = RefuseOversizedBodyMiddleware(lambda request: HttpResponse("through"))
    factory = RequestFactory()
    for length in (str(MAX_REQUEST_BYTES), "", "12x", "-5", "٣"):  # the last: an Arabic-Indic digit
        request = factory.post("/api/billing/imports/", data=b"", content_type="text/csv")
        request.META["CONTENT_LENGTH"] = length
        assert middleware(request).content == b"through", length
    request = factory.post("/api/billing/imports/", data=b"", content_type="text/csv")
    request.META["CONTENT_LENGTH"] = OVER
    assert middleware(request).status_code == 413


@pytest.mark.django_db
def test_an_upload_within_the_limit_still_reaches_the_importer(client_as):
    """A one-row FOCUS bill at its true length is imported (eager Celery in tests), not refused."""
    client = client_as("finance")
    bill = f"{HEADER}\n{ROW}\n".encode()
    answer = client.post(
        "/api/billing/imports/", {"file": SimpleUploadedFile("small.csv", bill), "format": "focus"}
    )
    assert answer.status_code == 201, answer.content[:300]
    assert answer.json()["inserted"] == len(stored_rows()) == 1
