"""Cached reads and page fragments (issue 9, load: pricing/price_cache.py, billing/review/cache.py,
the recommendation page's fragments). A repeated request is answered from the cache with fewer queries,
and a change to what the answer depends on (a price, a billing import, a recompute, the clock) shows on
the next request: a cache that served a stale price or another team's spend would be worse than none."""

from __future__ import annotations

import datetime as dt
import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from billing.models import SpendGrant
from pricing import price_cache
from pricing.models import Offer, PriceObservation
from pricing.price_version import price_version_bump
from tests.billing.catalog import make_catalog

pytestmark = pytest.mark.django_db


def queries_of(client, *args, **kwargs):
    with CaptureQueriesContext(connection) as captured:
        response = client.get(*args, **kwargs)
    assert response.status_code == 200, response.content[:300]
    return response, len(captured)


def test_an_offer_page_is_read_once_per_price_version(viewer_client, bundled_catalog):
    url = "/api/offers/?gpu=l4&pricing_model=on_demand&limit=5"
    first, built = queries_of(viewer_client, url)
    again, cached = queries_of(viewer_client, url)
    assert again.json() == first.json() and again.headers["X-Total-Count"] == first.headers["X-Total-Count"]
    assert cached < built  # the rows and the count came from the cache
    row = first.json()[0]
    PriceObservation.objects.create(
        offer=Offer.objects.get(pk=row["offer_id"]),
        pricing_model="on_demand",
        payment_option=row["payment_option"],
        amount_per_hour=Decimal("0.123456"),
        currency="USD",
        observed_at=timezone.now(),
        source="file:test.csv",
    )
    changed = viewer_client.get(url).json()
    assert changed[0]["offer_id"] == row["offer_id"] and changed[0]["price_per_hour"] == "0.123456"


def test_an_offer_page_is_kept_until_one_of_its_prices_turns_stale(
    viewer_client, bundled_catalog, monkeypatch
):
    """No minute buckets: a cached page is exact until its first fresh price passes its limit."""
    url = "/api/offers/?gpu=l4&pricing_model=on_demand&limit=5"
    row = viewer_client.get(url).json()[0]
    now = timezone.now()
    # fresh for one more hour (the bundled snapshot's limit is 90 days, 2,160 hours)
    PriceObservation.objects.filter(pk=row["observation_id"]).update(
        observed_at=now - dt.timedelta(hours=row["stale_after_hours"] - 1)
    )
    price_version_bump()  # as every bulk writer of prices does
    fresh, built = queries_of(viewer_client, url)
    assert not fresh.json()[0]["stale"]
    monkeypatch.setattr(timezone, "now", lambda: now + dt.timedelta(minutes=59))
    still, cached = queries_of(viewer_client, url)
    assert not still.json()[0]["stale"] and cached < built
    monkeypatch.setattr(timezone, "now", lambda: now + dt.timedelta(minutes=61))
    turned, rebuilt = queries_of(viewer_client, url)
    assert turned.json()[0]["stale"] and turned.json()[0]["observation_id"] == row["observation_id"]
    assert cached < rebuilt < built  # the page was rebuilt; the total, which no clock changes, was not


def test_the_catalog_table_shows_a_new_cheapest_price_at_once(viewer_client, bundled_catalog):
    _, built = queries_of(viewer_client, "/")
    page, cached = queries_of(viewer_client, "/")
    assert cached < built and b"0.0101" not in page.content
    offer = Offer.objects.filter(instance_type__gpu__slug="l4", instance_type__gpu_count=1).first()
    PriceObservation.objects.create(
        offer=offer,
        pricing_model="on_demand",
        amount_per_hour=Decimal("0.0101"),
        currency="USD",
        observed_at=timezone.now(),
        source="file:test.csv",
    )
    assert b"0.0101" in viewer_client.get("/").content


def test_a_price_read_is_rebuilt_when_the_minute_turns(bundled_catalog, monkeypatch):
    """Staleness moves with the clock: an answer is built for its minute's start and kept within it."""
    built = []
    start = dt.datetime(2026, 12, 1, 10, 0, 30, tzinfo=dt.UTC)
    for seconds in (0, 29, 30, 95):  # 10:00:30, 10:00:59, 10:01:00, 10:02:05
        monkeypatch.setattr(timezone, "now", lambda s=seconds: start + dt.timedelta(seconds=s))
        price_cache.cached_price_read("test-read", lambda now: built.append(now) or len(built))
    assert [now.strftime("%H:%M:%S") for now in built] == ["10:00:00", "10:01:00", "10:02:00"]


HEADER = "ChargePeriodStart,ChargePeriodEnd,ChargeCategory,BilledCost,EffectiveCost,BillingCurrency,ProviderName,RegionId,ConsumedQuantity,ConsumedUnit,x_UsageType,Tags"
# 24 g6.xlarge hours at 0.8048 = 19.3152 (research); 10 hours = 8.048 (platform)
MAY = f"""{HEADER}
2026-05-01T00:00:00Z,2026-05-02T00:00:00Z,Usage,19.3152,19.3152,USD,AWS,us-east-1,24,Hours,USE1-BoxUsage:g6.xlarge,"{{""team"": ""research""}}"
2026-05-01T00:00:00Z,2026-05-02T00:00:00Z,Usage,8.048,8.048,USD,AWS,us-east-1,10,Hours,USE1-BoxUsage:g6.xlarge,"{{""team"": ""platform""}}"
"""
# a later file of the same month: 5 more research hours, 4.024
MAY_MORE = f"""{HEADER}
2026-05-02T00:00:00Z,2026-05-03T00:00:00Z,Usage,4.024,4.024,USD,AWS,us-east-1,5,Hours,USE1-BoxUsage:g6.xlarge,"{{""team"": ""research""}}"
"""
REVIEW = "/api/billing/spend-review/?from=2026-05-01&to=2026-06-01"


def upload(client, name: str, text: str) -> None:
    bill = SimpleUploadedFile(name, text.encode(), content_type="text/csv")
    response = client.post("/api/billing/imports/", {"file": bill, "format": "focus"})
    assert response.status_code == 201, response.content


def test_the_spend_review_follows_each_import_and_each_callers_scope(user_with_role, team_named):
    make_catalog()
    research, platform = team_named("research"), team_named("platform")
    finance, engineer = Client(), Client()
    finance.force_login(user_with_role("finance", team=platform))
    granted = user_with_role("engineer", team=research)
    engineer.force_login(granted)
    upload(finance, "may.csv", MAY)

    first, built = queries_of(finance, REVIEW)
    again, cached = queries_of(finance, REVIEW)
    assert again.json() == first.json() and cached < built
    assert first.json()["totals"]["effective_cost"] == "27.36"  # 19.3152 + 8.048, rounded at the edge

    # an engineer granted their team's spend gets that team's review, not finance's cached one
    SpendGrant.objects.create(team=research, granted_by=user_with_role("admin"))
    assert engineer.get(REVIEW).json()["totals"]["effective_cost"] == "19.32"
    assert finance.get(REVIEW).json()["totals"]["effective_cost"] == "27.36"

    upload(finance, "may-more.csv", MAY_MORE)  # a new import: every cached review of the month is old
    assert finance.get(REVIEW).json()["totals"]["effective_cost"] == "31.39"  # 27.3632 + 4.024
    assert engineer.get(REVIEW).json()["totals"]["effective_cost"] == "23.34"  # 19.3152 + 4.024
    page = finance.get("/billing/?start=2026-05-01&end=2026-06-01")
    assert b"31.39" in page.content  # the page's cached body follows too


def body_rows(page) -> int:
    return (
        page.content.split(b'id="recommendations"')[1]
        .split(b"<tbody>")[1]
        .split(b"</tbody>")[0]
        .count(b"<tr>")
    )


def saved_answer_page(client, name: str) -> tuple[dict, str]:
    """A QLoRA workload saved with its top-3 answer: the API's answer and the page's URL."""
    workload = {
        "name": name,
        "task": "qlora",
        "model": {"preset": "llama-3.1-8b"},
        "seq_len": 2048,
        "lora": {"rank": 16, "targets": "all-linear"},
        "training_tokens": 2.0e8,
    }
    saved = client.post(
        "/api/recommendations/",
        json.dumps({"workload": workload, "save": True, "top": 3}),
        content_type="application/json",
    ).json()
    return saved, f"/workloads/{saved['workload_id']}/recommendations/"


def test_a_recompute_replaces_the_cached_rows_of_a_recommendation_page(engineer_client, bundled_catalog):
    saved, url = saved_answer_page(engineer_client, "cached-page")
    first, built = queries_of(engineer_client, url)
    again, cached = queries_of(engineer_client, url)
    assert cached < built and body_rows(again) == body_rows(first) == 3
    assert first.content.count(b'<span class="badge good">front</span>') >= 1
    engineer_client.post(
        "/api/recommendations/",
        json.dumps({"workload_id": saved["workload_id"], "save": True, "top": 1}),
        content_type="application/json",
    )
    after = engineer_client.get(url)
    assert body_rows(after) == 1 < body_rows(first)  # the new answer's one row, not the old answer's three


def test_a_recommendation_pages_fragments_are_read_from_process_memory(engineer_client, bundled_catalog):
    """Their keys name the saved answer and the hour, so no other process can hold a newer rendering: a
    repeated page reads them without a round trip to the shared cache."""
    from django.core.cache import cache, caches

    _, url = saved_answer_page(engineer_client, "local-fragments")
    first = engineer_client.get(url)
    shared_reads = []
    original = cache.get
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(cache, "get", lambda key, *a, **k: shared_reads.append(key) or original(key, *a, **k))
        again = engineer_client.get(url)
    assert again.content == first.content.replace(*_csrf_tokens(first, again))
    assert not [key for key in shared_reads if "template.cache" in key]
    assert len([key for key in caches["local"]._cache if "template.cache.recommendation" in key]) == 2


def _csrf_tokens(first, again) -> tuple[bytes, bytes]:
    """The two pages' CSRF form tokens (masked anew on every render)."""

    def token(page) -> bytes:
        return page.content.split(b'name="csrfmiddlewaretoken" value="')[1].split(b'"')[0]

    return token(first), token(again)


@pytest.fixture
def one_price_version(monkeypatch):
    """A price version of this test's own (no database read): the threads below share the cache only."""
    version = f"stampede-test-{timezone.now().timestamp()}"
    monkeypatch.setattr(price_cache, "price_version_key", lambda: version)


def test_one_caller_builds_a_missing_answer_and_the_others_wait_for_it(one_price_version):
    """Six workers ask for the same missing page at once (prices just changed): one builds it. Before
    the lock each of them built it, which made the offer list's load level a measure of page builds."""
    builds = []

    def build(now):
        builds.append(now)
        time.sleep(0.3)
        return ["the page"], None

    with ThreadPoolExecutor(6) as pool:
        answers = list(pool.map(lambda _: price_cache.read_until_stale("test-stampede", build), range(6)))
    assert answers == [["the page"]] * 6
    assert len(builds) == 1


def test_a_builder_that_fails_leaves_the_next_caller_to_build(one_price_version):
    started, calls = threading.Event(), []

    def failing(now):
        calls.append("failing")
        started.set()
        time.sleep(0.2)
        raise RuntimeError("the database went away")

    def working(now):
        calls.append("working")
        return "built by the waiter", None

    with ThreadPoolExecutor(2) as pool:
        first = pool.submit(price_cache.read_until_stale, "test-failing-builder", failing)
        started.wait(5)
        second = pool.submit(price_cache.read_until_stale, "test-failing-builder", working)
        assert second.result(10) == "built by the waiter"
        with pytest.raises(RuntimeError):
            first.result(10)
    assert calls == ["failing", "working"]  # the waiter built once the lock was freed


def test_a_caller_stops_waiting_for_a_builder_that_holds_the_lock_too_long(one_price_version, monkeypatch):
    """A builder killed mid-build (kill -9) leaves its lock for BUILD_LOCK_SECONDS: the others wait no
    longer than WAIT_FOR_BUILDER_SECONDS, then build for themselves."""
    monkeypatch.setattr(price_cache, "WAIT_FOR_BUILDER_SECONDS", 0.2)
    from django.core.cache import cache

    lock = price_cache._key("test-dead-builder", (), "until-stale") + ":building"
    assert cache.add(lock, 1, 30)  # the dead builder's lock
    started = time.monotonic()
    assert (
        price_cache.read_until_stale("test-dead-builder", lambda now: ("built anyway", None))
        == "built anyway"
    )
    assert 0.2 <= time.monotonic() - started < 2
    cache.delete(lock)


def test_a_per_minute_read_is_built_once_by_concurrent_callers(one_price_version):
    builds = []

    def build(now):
        builds.append(now)
        time.sleep(0.3)
        return 42

    with ThreadPoolExecutor(4) as pool:
        answers = list(
            pool.map(lambda _: price_cache.cached_price_read("test-minute-stampede", build), range(4))
        )
    assert answers == [42] * 4 and len(builds) == 1
