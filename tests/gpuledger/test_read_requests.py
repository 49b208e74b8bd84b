"""Requests that only read run in autocommit, writes in a transaction (gpuledger/transactions.py), and a
persistent PostgreSQL connection is checked without a round trip while its socket is quiet
(gpuledger/db/postgresql). Both took a tenth of a worker's time each under load (issue 9)."""

from __future__ import annotations

import time

import psycopg
import pytest
from django.contrib.auth.decorators import login_not_required
from django.db import connection, connections
from django.db.backends.postgresql import base as django_postgresql
from django.http import JsonResponse
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import path
from django.utils.module_loading import import_string
from django.views.decorators.csrf import csrf_exempt

from gpuledger.accounts.models import Team
from pricing.api.views import GpuModelList


@login_not_required
@csrf_exempt
def in_transaction(request):
    return JsonResponse({"atomic": connection.in_atomic_block})


@login_not_required
@csrf_exempt
def price_version_twice(request):
    """Two parts of one page, each keyed to the price version (a price read, a review's cache key)."""
    from pricing.price_version import price_version_bump, price_version_key

    first = price_version_key()
    if request.method == "POST":
        price_version_bump()  # a write request's own change shows to its later reads
    return JsonResponse({"same": first == price_version_key()})


@login_not_required
@csrf_exempt
def write_then_fail(request):
    Team.objects.create(slug="half-way", name="Half way")
    raise RuntimeError("after the first write")


urlpatterns = [
    path("probe/", in_transaction),
    path("fail/", write_then_fail),
    path("versions/", price_version_twice),
    path("api/gpus/", GpuModelList.as_view()),  # a DRF view, which answers a bad token with 401
]
pytestmark = [pytest.mark.urls(__name__), pytest.mark.django_db(transaction=True)]


def test_a_read_runs_in_autocommit_and_a_write_in_a_transaction():
    client = Client()
    assert client.get("/probe/").json() == {"atomic": False}
    assert client.head("/probe/").status_code == 200
    assert client.post("/probe/").json() == {"atomic": True}
    assert client.put("/probe/").json() == {"atomic": True}
    assert client.delete("/probe/").json() == {"atomic": True}


def test_a_write_that_fails_half_way_still_leaves_nothing():
    response = Client(raise_request_exception=False).post("/fail/")
    assert response.status_code == 500
    assert not Team.objects.filter(slug="half-way").exists()


def test_the_sign_in_rule_still_runs_before_a_read_view(settings):
    """The middleware is last, so every process_view before it (sign-in, CSRF) has had its say."""
    assert settings.MIDDLEWARE[-1] == "gpuledger.transactions.ReadsOutsideTransactionMiddleware"


def test_no_middleware_relies_on_seeing_a_read_views_exception(settings):
    """A read's view is called by the middleware, not by Django, so a `process_exception` hook would
    never see its exception: there must be none (add one, and this says why it would not work)."""
    hooked = [path for path in settings.MIDDLEWARE if hasattr(import_string(path), "process_exception")]
    assert hooked == []


@pytest.fixture
def own_connection(require_postgres):
    """A second connection to the test database, so that the test may kill it."""
    wrapper = connections.create_connection("default")
    wrapper.ensure_connection()
    yield wrapper
    wrapper.close()


def test_a_quiet_connection_is_usable_without_asking_the_server(own_connection, monkeypatch):
    def round_trip(self):
        raise AssertionError("the health check asked the server")

    monkeypatch.setattr(django_postgresql.DatabaseWrapper, "is_usable", round_trip)
    assert own_connection.is_usable()


def test_a_connection_the_server_ended_is_not_usable(own_connection):
    backend = own_connection.connection.info.backend_pid
    db = own_connection.settings_dict
    where = {
        "dbname": db["NAME"],
        "host": db["HOST"],
        "port": db["PORT"],
        "user": db["USER"],
        "password": db["PASSWORD"],
    }
    with psycopg.connect(**{k: v for k, v in where.items() if v}, autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", [backend])
    deadline = time.monotonic() + 5
    while own_connection.is_usable() and time.monotonic() < deadline:
        time.sleep(0.05)  # the server's FATAL message is on its way
    assert not own_connection.is_usable()
    own_connection.health_check_done = False  # as at the start of a request
    own_connection.close_if_health_check_failed()  # what Django does before a request's first query
    assert own_connection.connection is None


def test_a_failed_read_inside_a_callers_transaction_rolls_back_only_its_own_savepoint(user_with_role):
    """DRF marks the innermost transaction for rollback when it answers 401; a test's transaction (the
    caller's) must go on working after such a request."""
    from django.db import transaction

    with transaction.atomic():
        assert Client().get("/api/gpus/", HTTP_AUTHORIZATION="Bearer glt_not-a-token").status_code == 401
        assert Team.objects.count() >= 0  # a query after it: the caller's transaction is still usable


def test_a_read_request_reads_the_price_version_once_and_a_write_request_each_time():
    client = Client()
    with CaptureQueriesContext(connection) as queries:
        assert client.get("/versions/").json() == {"same": True}
    assert len([q for q in queries.captured_queries if "pricing_priceversion" in q["sql"]]) == 1
    assert client.post("/versions/").json() == {"same": False}
