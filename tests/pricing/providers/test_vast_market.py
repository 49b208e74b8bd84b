"""Vast's offer search into price records: shape and units, refused rows, paging, throttling, error pages,
an empty answer. Recorded answers only (tests/pricing/providers/vast_responses.py), never the network."""

from __future__ import annotations

import datetime as dt
import gzip
import json
from decimal import Decimal
from pathlib import Path

import pytest

from pricing.providers import http_api
from pricing.providers.http_api import HttpAnswer, HttpSourceError
from pricing.providers.retry import RetryPolicy, TransientSourceError
from pricing.providers.vast_market import EmptyMarketAnswer, VastMarketStats, fetch_vast_market, parse_offers
from tests.pricing.providers.fake_http import no_wait_policy, throttled
from tests.pricing.providers.vast_responses import (
    A100_SXM4_80_2,
    EMPTY,
    H100_SXM_8,
    HTML_ERROR_PAGE,
    RTX_4090,
    RecordedTransport,
    answer,
    offer,
    ok_json,
)

NOW = dt.datetime(2026, 12, 3, 12, 0, tzinfo=dt.UTC)
NO_WAIT = RetryPolicy(max_retries=3, sleep=lambda seconds: None, random_fraction=lambda: 0.0)


def _fetch(transport, stats=None, **options):
    return list(fetch_vast_market(now=NOW, transport=transport, policy=NO_WAIT, stats=stats, **options))


def test_it_reads_an_offer_into_on_demand_and_interruptible_prices_with_its_host():
    (on_demand, spot) = parse_offers([RTX_4090], observed_at=NOW)
    # dph_total 0.35 $/h for the whole offer; min_bid 0.18 $/h as an interruptible rental
    assert [(r.pricing_model, r.price_per_hour, r.currency) for r in (on_demand, spot)] == [
        ("on_demand", Decimal("0.35"), "USD"),
        ("spot", Decimal("0.18"), "USD"),
    ]
    instance = on_demand.instance
    # gpu_ram 24564 MB / 1024 = 23.99 GiB; cpu_ram 64414 MB / 1024 = 62.90 GiB; 16 effective vCPUs; 512.3 GB disk
    assert instance.name == "1x-RTX_4090-24g-offer21501" and instance.gpu_name == "RTX 4090"
    assert (instance.gpu_count, instance.gpu_memory_gib, instance.vcpus, instance.memory_gib) == (
        1,
        Decimal("23.99"),
        Decimal("16.00"),
        Decimal("62.90"),
    )
    assert instance.local_disk_gb == Decimal("512.3") and instance.network == "internet down 912.5 Mb/s"
    assert (on_demand.region, on_demand.zone, on_demand.source) == ("Texas, US", "", "vast:bundles")
    assert on_demand.observed_at == NOW


def test_an_eight_gpu_offer_is_one_instance_priced_whole_and_a_zero_bid_is_no_spot_price():
    records = parse_offers([H100_SXM_8, A100_SXM4_80_2], observed_at=NOW)
    by_name = {(r.instance.name, r.pricing_model): r for r in records}
    h100 = by_name[("8x-H100_SXM-80g-offer21536", "on_demand")]
    # 16.008 $/h for 8 GPUs is 2.001 per GPU-hour; gpu_ram 81559 MB = 79.65 GiB (the name rounds to 80g)
    assert h100.price_per_hour / h100.instance.gpu_count == Decimal("2.001")
    assert h100.instance.gpu_memory_gib == Decimal("79.65") and h100.instance.memory_gib == Decimal("503.23")
    # the A100's min_bid is 0.0: no interruptible price, never a free one
    assert ("2x-A100_SXM4-80g-offer21840", "spot") not in by_name
    assert by_name[("2x-A100_SXM4-80g-offer21840", "on_demand")].region == "Norway, NO"


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        ({"dph_total": 0.0}, "dph_total: 0.0 is not a price above zero"),
        ({"dph_total": -0.2}, "dph_total: -0.2 is not a price above zero"),
        ({"dph_total": "0.35"}, "dph_total: '0.35' is not a number"),
        ({"gpu_name": ""}, "gpu_name: '' is not a name"),
        ({"num_gpus": 0}, "num_gpus: 0 is not a whole number of GPUs above zero"),
        ({"num_gpus": 1.5}, "num_gpus: 1.5 is not a whole number of GPUs above zero"),
        ({"geolocation": None}, "geolocation: None is not a name"),
        ({"id": None}, "id: None is not a positive whole number"),
        ({"cpu_ram": 1e300}, "cpu_ram: 1e+300 is not a plausible figure"),
    ],
)
def test_a_row_that_cannot_be_a_price_is_refused_with_its_reason_and_the_rest_lands(bad, reason):
    stats = VastMarketStats()
    broken = offer(30_001, "RTX 4090", 1, 0.35, 0.2) | bad
    records = list(parse_offers([broken, RTX_4090], observed_at=NOW, page=3, stats=stats))
    assert {r.instance.name for r in records} == {"1x-RTX_4090-24g-offer21501"}
    assert stats.rejected == 1 and stats.items_seen == 2 and stats.records == 2
    (why,) = stats.rejected_locations
    assert why.startswith("vast:bundles page 3 row 1") and why.endswith(reason)
    assert stats.listed == {("1x-RTX_4090-24g-offer21501", "Texas, US", "")}


def test_the_fetched_answers_decimals_are_read_and_refused_as_written():
    # http_api parses JSON numbers as Decimal: 0.35 is Decimal("0.35"), and a refusal names 0.0, not Decimal
    broken = offer(30_001, "RTX 4090", 1, 0.0, 0.2)
    huge = answer(offer(30_002, "RTX 4090", 1, 0.35, 0.2)).replace(b'"cpu_ram": 64414', b'"cpu_ram": 1e400')
    stats = VastMarketStats()
    transport = RecordedTransport(ok_json(answer(broken, RTX_4090)))
    records = _fetch(transport, stats)
    assert [(r.pricing_model, r.price_per_hour) for r in records] == [
        ("on_demand", Decimal("0.35")),
        ("spot", Decimal("0.18")),
    ]
    assert stats.rejected_locations == [
        "vast:bundles page 1 row 1 offer 30001: dph_total: 0.0 is not a price above zero"
    ]
    stats = VastMarketStats()
    assert _fetch(RecordedTransport(ok_json(huge)), stats) == []  # 1e400 MB: a broken row, not a host
    assert stats.rejected_locations[0].endswith("cpu_ram: 1E+400 is not a plausible figure")


def test_it_pages_by_offer_id_until_a_page_comes_back_short():
    transport = RecordedTransport(
        ok_json(answer(RTX_4090, H100_SXM_8)),
        ok_json(answer(A100_SXM4_80_2, offer(21_900, "L40S", 1, 0.6, 0.3))),
        ok_json(answer(offer(22_001, "RTX 3090", 1, 0.2, 0.1))),
    )
    stats = VastMarketStats()
    records = _fetch(transport, stats, page_size=2)
    # each page asks for the ids after the last one seen, in id order, the CLI's default filter kept
    queries = transport.queries()
    assert [q["id"] for q in queries] == [{"gt": 0}, {"gt": 21_536}, {"gt": 21_900}]
    assert all(
        q["limit"] == 2 and q["order"] == [["id", "asc"]] and q["rentable"] == {"eq": True} for q in queries
    )
    assert transport.urls[0].startswith("https://console.vast.ai/api/v0/bundles/?q=")
    # a public search: no credential is sent, the client names itself and asks for JSON
    headers = transport.calls[0][1]
    assert headers["Accept"] == "application/json" and headers["User-Agent"].startswith("gpuledger")
    assert not {"Authorization", "Cookie"} & set(headers)
    assert (stats.pages, stats.items_seen, len(stats.listed), stats.complete) == (3, 5, 5, True)
    assert len(records) == 9  # 5 on-demand + 4 interruptible (the A100's bid is 0)


def test_a_refresh_that_reaches_its_page_bound_is_not_complete():
    transport = RecordedTransport(
        ok_json(answer(RTX_4090, H100_SXM_8)), ok_json(answer(A100_SXM4_80_2, RTX_4090))
    )
    stats = VastMarketStats()
    _fetch(transport, stats, page_size=2, max_pages=2)
    assert stats.pages == 2 and stats.complete is False  # an offer not seen may be on page 3: none is gone


def test_a_throttled_page_is_retried_on_its_own_waiting_what_retry_after_asks():
    transport = RecordedTransport(
        ok_json(answer(RTX_4090, H100_SXM_8)),
        throttled("2"),
        HttpAnswer(429, b""),
        ok_json(answer(A100_SXM4_80_2)),
    )
    stats, sleeps = VastMarketStats(), []
    records = list(
        fetch_vast_market(
            now=NOW, transport=transport, policy=no_wait_policy(sleeps), stats=stats, page_size=2
        )
    )
    assert len(transport.urls) == 4 and transport.urls[1] == transport.urls[2] == transport.urls[3]
    assert stats.complete and len(records) == 5
    # the first 429 asked for 2 s (more than the 0.5 s backoff); the bare one backs off 1 s at half jitter
    assert sleeps == [2.0, 1.0]


def test_throttling_that_never_stops_ends_in_a_transient_error_for_the_task_to_retry():
    transport = RecordedTransport(*[HttpAnswer(429, b"")] * 4)
    with pytest.raises(TransientSourceError, match="vast bundles page 1: still failing after 3 retries"):
        _fetch(transport)


def test_an_html_error_page_fails_at_once_naming_what_came_back():
    transport = RecordedTransport(HttpAnswer(200, HTML_ERROR_PAGE, {"Content-Type": "text/html"}))
    with pytest.raises(
        HttpSourceError,
        match="vast bundles page 1: the answer is not JSON: '<!DOCTYPE html><html><head><title>502",
    ):
        _fetch(transport)
    assert len(transport.urls) == 1  # not retried: the same page would come back
    forbidden = RecordedTransport(HttpAnswer(403, b'{"error": "forbidden"}'))
    with pytest.raises(HttpSourceError, match="vast bundles page 1: HTTP 403") as raised:
        _fetch(forbidden)
    assert "console.vast.ai" not in str(raised.value) and len(forbidden.urls) == 1


def test_a_gateway_error_page_is_retried_then_reported():
    transport = RecordedTransport(HttpAnswer(502, HTML_ERROR_PAGE), ok_json(answer(RTX_4090)))
    assert len(_fetch(transport)) == 2
    stuck = RecordedTransport(*[HttpAnswer(502, HTML_ERROR_PAGE)] * 4)
    with pytest.raises(TransientSourceError, match="after 3 retries: HTTP 502: '<!DOCTYPE html>"):
        _fetch(stuck)


def test_an_empty_answer_is_an_error_not_an_empty_market():
    with pytest.raises(EmptyMarketAnswer, match="no offers listed; nothing marked gone"):
        _fetch(RecordedTransport(ok_json(EMPTY)))
    with pytest.raises(Exception, match="no list of offers"):
        _fetch(RecordedTransport(ok_json(b'{"success": false, "msg": "bad query"}')))


def test_an_answer_over_the_body_bound_fails_the_refresh(monkeypatch):
    monkeypatch.setattr(http_api, "MAX_BODY_BYTES", 100)  # the real bound is 64 MiB (tested in test_http_api)
    transport = RecordedTransport(ok_json(answer(RTX_4090)))  # ~1.5 kB
    with pytest.raises(HttpSourceError, match="vast bundles page 1: the answer is over 100 bytes"):
        _fetch(transport)


def test_a_real_captured_search_answer_reads_whole_with_prices_kept_to_6_decimals():
    """1,396 offers of a real `vastai search offers --raw` answer (vast-ai/vast-python search.json,
    recorded/real/PROVENANCE.md; captured 2024-11-05): every offer is read, none refused; each gives an
    on-demand price (dph_total) and an interruptible one (min_bid, above zero in every row here).
    Offer 13489095 is a 1x RTX 4090 in South Korea: dph_total 0.16805555555555554 keeps 6 decimals,
    0.168056; min_bid 0.16; 12 effective vCPUs; cpu_ram 32,069 MiB = 31.32 GiB."""
    offers = json.loads(gzip.open(Path(__file__).parent / "recorded/real/vast_python_search.json.gz").read())
    stats = VastMarketStats()
    records = list(parse_offers(offers, observed_at=dt.datetime(2024, 11, 5, tzinfo=dt.UTC), stats=stats))
    assert (len(offers), stats.records, stats.rejected, len(stats.listed)) == (1396, 2792, 0, 1396)
    mine = [r for r in records if r.location.endswith("offer 13489095")]
    assert [(r.pricing_model, r.price_per_hour) for r in mine] == [
        ("on_demand", Decimal("0.168056")),
        ("spot", Decimal("0.160000")),
    ]
    instance = mine[0].instance
    assert (instance.gpu_name, instance.gpu_count, instance.vcpus, instance.memory_gib, mine[0].region) == (
        "RTX 4090",
        1,
        Decimal("12.00"),
        Decimal("15.66"),  # its share of the machine's 31.32 GiB: gpu_frac 0.5 (12 of 24 cores)
        "South Korea, KR",
    )
    assert all(r.price_per_hour == r.price_per_hour.quantize(Decimal("0.000001")) for r in records)
