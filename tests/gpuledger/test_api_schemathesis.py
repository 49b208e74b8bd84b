"""Hostile API input (issue 9, "Kept in CI"): schemathesis sends seeded, generated requests, valid and
invalid, to every operation of the OpenAPI schema, signed in with an API token of each role and with none.
Every answer must be documented (status, content type, body schema, headers) and none a server error.

One test per identity; each runs every operation in its own rolled-back savepoint (rows the POSTs create
are gone before the next operation, so no operation depends on another's leftovers) and counts what it
sent. Each identity must send at least REQUIRED_PER_IDENTITY requests, so the five together send at least
REQUIRED_TOTAL wherever they run (one process or split across xdist workers), and an operation that stops
generating requests fails the suite instead of shrinking it silently.
"""

from __future__ import annotations

import logging
import time
from traceback import format_exception

import pytest
from django.core import signals
from django.db import close_old_connections, transaction
from schemathesis.core.failures import FailureGroup

from tests.conftest import throttles_clear
from tests.gpuledger.api_fuzz import fuzz_operation, in_process_wsgi_app, load_schema, operations

pytestmark = pytest.mark.django_db

ROLES = ("viewer", "engineer", "finance", "admin")
IDENTITIES = (*ROLES, "anonymous")
# Up to this many requests per operation and identity (hypothesis stops sooner on an operation with few
# distinct requests, such as one without parameters).
MAX_EXAMPLES = 40
REQUIRED_TOTAL = 2000
REQUIRED_PER_IDENTITY = REQUIRED_TOTAL // len(IDENTITIES)
# An operation with parameters or a body has many distinct requests: it must get at least this many.
REQUIRED_PER_OPERATION = 10
# Fewer where one request costs a second or more: the schema is generated afresh for each request (it
# has two parameters, both enumerations). The offer list is paginated (at most 1,000 rows a page), so it
# gets the full count like every other operation.
MAX_EXAMPLES_FOR = {"GET /api/schema/": REQUIRED_PER_OPERATION}

SCHEMA = load_schema()
OPERATIONS = operations(SCHEMA)


@pytest.fixture(scope="module")
def fuzz_world(django_db_setup, django_db_blocker):
    """The bundled catalog, one API token per role and ids of objects that exist (for detail endpoints),
    made once per module in a transaction rolled back at the end."""
    with django_db_blocker.unblock(), transaction.atomic():
        world = _seed()
        yield world
        transaction.set_rollback(True)


def _seed() -> dict:
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group

    from gpuledger.accounts.models import Team
    from gpuledger.accounts.tokens import token_create
    from pricing.catalog import catalog_load
    from pricing.models import GpuModel, Offer
    from procurement.architectures import architectures_load

    catalog_load()
    architectures_load()
    team = Team.objects.get_or_create(slug="research", defaults={"name": "Research"})[0]
    headers = {"anonymous": {}}
    for role in ROLES:
        user = get_user_model().objects.create_user(username=f"fuzz-{role}", password="unused-pw")
        user.groups.add(Group.objects.get_or_create(name=role)[0])
        team.members.add(user)
        headers[role] = {"Authorization": f"Bearer {token_create(user, 'schemathesis')[1]}"}
    # Path values that exist, by parameter name: GPU slugs, and offer ids (for spot history; under
    # /api/tco/{id}/ the same numbers are studies nobody stored, a documented 404).
    known = {
        "slug": list(GpuModel.objects.order_by("slug").values_list("slug", flat=True)[:5]),
        "id": list(Offer.objects.order_by("pk").values_list("pk", flat=True)[:5]),
    }
    return {"headers": headers, "known": known}


@pytest.fixture
def wsgi_app():
    """Django's WSGI handler, with the receivers that close the database connection after each request
    disconnected (as Django's test client does), so the test's transaction spans every request."""
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    # Thousands of expected 4xx warnings would bury a 500's traceback (logged at ERROR, kept).
    request_log = logging.getLogger("django.request")
    level, request_log.level = request_log.level, logging.ERROR
    yield in_process_wsgi_app()
    request_log.level = level
    signals.request_started.connect(close_old_connections)
    signals.request_finished.connect(close_old_connections)


@pytest.mark.parametrize("identity", IDENTITIES)
def test_it_answers_generated_requests_to_every_operation_as_documented(fuzz_world, wsgi_app, identity):
    sent: dict[str, int] = {}
    seconds: dict[str, float] = {}
    failures = []
    cpu_started = time.process_time()  # CPU seconds: what this costs on one core, whatever the machine's load
    for operation in OPERATIONS:
        throttles_clear()  # each operation starts with a fresh rate budget (429s would hide the answers)
        started = time.perf_counter()
        try:
            with transaction.atomic():
                sent[operation.label] = fuzz_operation(
                    operation,
                    app=wsgi_app,
                    headers=fuzz_world["headers"][identity],
                    max_examples=MAX_EXAMPLES_FOR.get(operation.label, MAX_EXAMPLES),
                    known_path_values=fuzz_world["known"],
                )
                transaction.set_rollback(True)
        except (Exception, FailureGroup) as failure:  # every operation's failure is reported, not the first
            shown = failure if isinstance(failure, FailureGroup) else "".join(format_exception(failure)[-3:])
            failures.append(f"{operation.label} as {identity}:\n{shown}")
            print(failures[-1], flush=True)
        seconds[operation.label] = round(time.perf_counter() - started, 1)
    cpu = time.process_time() - cpu_started
    print(
        f"\n{identity}: {sum(sent.values())} requests, {cpu:.1f} CPU s; {sent}; seconds {seconds}", flush=True
    )
    assert not failures, "\n\n".join(failures)
    assert set(sent) == {operation.label for operation in OPERATIONS}
    assert sum(sent.values()) >= REQUIRED_PER_IDENTITY
    parameterised = [
        op.label
        for op in OPERATIONS
        if (op.body or op.query or op.path_parameters) and op.label not in MAX_EXAMPLES_FOR
    ]
    assert {label: sent[label] for label in parameterised if sent[label] < REQUIRED_PER_OPERATION} == {}
