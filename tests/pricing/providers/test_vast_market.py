"""Vast's offer search into price records: shape and units, refused rows, paging, throttling, error pages,
an empty answer. Recorded answers only (tests/pricing/providers/vast_responses.py), never the network."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from pricing.providers.http_json import HttpSourceError
from pricing.providers.retry import RetryPolicy, TransientSourceError
from pricing.providers.vast_market import EmptyMarketAnswer, VastMarketStats, fetch_vast_market, parse_offers
from tests.pricing.providers.vast_responses import (
    A100_SXM4_80_2,
    EMPTY,
    H100_SXM_8,
    HTML_ERROR_PAGE,
    RTX_4090,
    RecordedTransport,
    answer,
    offer,
)

NOW = dt.datetime(2026, 12, 3, 12, 0, tzinfo=dt.UTC)
NO_WAIT = RetryPolicy(max_retries=3, sleep=lambda seconds: None, random_fraction=lambda: 0.0)


def _fetch(transport, stats=None, **options):
    return list(fetch_vast_market(now=NOW, transport=transport, policy=NO_WAIT, stats=stats, **options))


def test_it_reads_an_offer_into_on_demand_and_interruptible_prices_with_its_host():
    (on_demand, spot) = parse_offers([RTX_4090], observed_at=NOW)
    # dph_total 0.35 $/h for the whole offer; min_bid 0.18 $/h as an interruptible rental
    assert [(r.pricing_model, r.price_per_hour, r.currency) for r in (on_demand, spot)] == [
        ("on_demand", Decimal("0.35"), "USD"), ("spot", Decimal("0.18"), "USD")]  # fmt: skip
    instance = on_demand.instance
    # gpu_ram 24564 MB / 1024 = 23.99 GiB; cpu_ram 64414 MB / 1024 = 62.90 GiB; 16 effective vCPUs; 512.3 GB disk
    assert instance.name == "1x-RTX_4090-24g-offer21501" and instance.gpu_name == "RTX 4090"
    assert (instance.gpu_count, instance.gpu_memory_gib, instance.vcpus, instance.memory_gib) == (
        1, Decimal("23.99"), Decimal("16.00"), Decimal("62.90"))  # fmt: skip
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


def test_it_pages_by_offer_id_until_a_page_comes_back_short():
    transport = RecordedTransport(
        (200, answer(RTX_4090, H100_SXM_8)), (200, answer(A100_SXM4_80_2, offer(21_900, "L40S", 1, 0.6, 0.3))),
        (200, answer(offer(22_001, "RTX 3090", 1, 0.2, 0.1))),
    )  # fmt: skip
    stats = VastMarketStats()
    records = _fetch(transport, stats, page_size=2)
    # each page asks for the ids after the last one seen, in id order, the CLI's default filter kept
    queries = transport.queries()
    assert [q["id"] for q in queries] == [{"gt": 0}, {"gt": 21_536}, {"gt": 21_900}]
    assert all(
        q["limit"] == 2 and q["order"] == [["id", "asc"]] and q["rentable"] == {"eq": True} for q in queries
    )
    assert transport.urls[0].startswith("https://console.vast.ai/api/v0/bundles/?q=")
    assert (stats.pages, stats.items_seen, len(stats.listed), stats.complete) == (3, 5, 5, True)
    assert len(records) == 9  # 5 on-demand + 4 interruptible (the A100's bid is 0)


def test_a_refresh_that_reaches_its_page_bound_is_not_complete():
    transport = RecordedTransport(
        (200, answer(RTX_4090, H100_SXM_8)), (200, answer(A100_SXM4_80_2, RTX_4090))
    )
    stats = VastMarketStats()
    _fetch(transport, stats, page_size=2, max_pages=2)
    assert stats.pages == 2 and stats.complete is False  # an offer not seen may be on page 3: none is gone


def test_a_throttled_page_is_retried_on_its_own():
    transport = RecordedTransport(
        (200, answer(RTX_4090, H100_SXM_8)), (429, b'{"error": "rate limited"}'), (429, b""),
        (200, answer(A100_SXM4_80_2)),
    )  # fmt: skip
    stats = VastMarketStats()
    records = _fetch(transport, stats, page_size=2)
    assert len(transport.urls) == 4 and transport.urls[1] == transport.urls[2] == transport.urls[3]
    assert stats.complete and len(records) == 5


def test_throttling_that_never_stops_ends_in_a_transient_error_for_the_task_to_retry():
    transport = RecordedTransport(*[(429, b"")] * 4)
    with pytest.raises(TransientSourceError, match="vast bundles page 1: still failing after 3 retries"):
        _fetch(transport)


def test_an_html_error_page_fails_at_once_naming_what_came_back():
    transport = RecordedTransport((200, HTML_ERROR_PAGE))
    with pytest.raises(HttpSourceError, match="not JSON: <!DOCTYPE html><html><head><title>502 Bad Gateway"):
        _fetch(transport)
    assert len(transport.urls) == 1  # not retried: the same page would come back
    forbidden = RecordedTransport((403, b'{"error": "forbidden"}'))
    with pytest.raises(HttpSourceError, match="HTTP 403"):
        _fetch(forbidden)


def test_a_gateway_error_page_is_retried_then_reported():
    transport = RecordedTransport((502, HTML_ERROR_PAGE), (200, answer(RTX_4090)))
    assert len(_fetch(transport)) == 2


def test_an_empty_answer_is_an_error_not_an_empty_market():
    with pytest.raises(EmptyMarketAnswer, match="no offers listed; nothing marked gone"):
        _fetch(RecordedTransport((200, EMPTY)))
    with pytest.raises(Exception, match="no list of offers"):
        _fetch(RecordedTransport((200, b'{"success": false, "msg": "bad query"}')))


def test_only_https_is_fetched_and_throttling_counts_as_transient():
    from pricing.providers.http_json import get_json
    from pricing.providers.retry import TransientHttpError, is_transient

    with pytest.raises(HttpSourceError, match="only https URLs are fetched"):
        get_json("http://console.vast.ai/api/v0/bundles/")  # refused before any connection is made
    assert is_transient(TransientHttpError("HTTP 429")) and not is_transient(HttpSourceError("HTTP 403"))
