"""The Vast market source end to end on recorded answers: history appended per offer, offers that
disappear marked gone (shown on the offer page and API, left out of current prices and rankings), a bad
answer marking nothing, off until its setting is set, and its state on /status/."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from django.utils import timezone

from pricing.models import Offer, PriceObservation
from pricing.offer_table import current_price_rows
from pricing.providers.http_api import HttpAnswer
from pricing.selectors import offer_frame
from pricing.sources import registry as sources
from pricing.sources.refresh import refresh_run
from pricing.tasks import refresh_prices
from scheduler.models import PriceRefresh, RefreshStatus
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

pytestmark = pytest.mark.django_db
H100_NAME, RTX_NAME, A100_NAME = (
    "8x-H100_SXM-80g-offer21536",
    "1x-RTX_4090-24g-offer21501",
    "2x-A100_SXM4-80g-offer21840",
)


@pytest.fixture
def vast_answers(monkeypatch):
    """Set the recorded answers the next refreshes get, in order."""
    transport = RecordedTransport()
    monkeypatch.setattr(sources, "vast_market_transport", lambda: transport)
    return transport


def _refresh(transport, body, at):
    transport.answers.append(ok_json(body) if isinstance(body, bytes) else body)
    return refresh_run("vast-market", "", now=at)


def _offer(name):
    return Offer.objects.select_related("instance_type__gpu").get(
        instance_type__provider__slug="vast", instance_type__name=name
    )


def test_an_offers_history_is_kept_and_one_that_disappears_is_gone(bundled_catalog, vast_answers, client_as):
    first, second = timezone.now() - dt.timedelta(hours=2), timezone.now() - dt.timedelta(hours=1)
    run = _refresh(vast_answers, answer(RTX_4090, H100_SXM_8, A100_SXM4_80_2), first)
    # 3 offers: 3 on-demand + 2 interruptible prices (the A100's min_bid is 0)
    assert (run.status, run.rows_seen, run.rows_inserted, run.rows_rejected) == (
        RefreshStatus.SUCCEEDED,
        5,
        5,
        0,
    )
    assert _offer(H100_NAME).instance_type.gpu.slug == "h100-sxm5-80gb"  # gpu_aliases.csv "H100 SXM"
    assert _offer(A100_NAME).instance_type.gpu.slug == "a100-sxm4-80gb"  # "A100 SXM4" with 80 GiB per GPU
    # an hour later the H100's price moved (16.008 -> 15.2 $/h) and the A100 is no longer listed
    moved = H100_SXM_8 | {"dph_total": 15.2, "min_bid": 9.1}
    run = _refresh(vast_answers, answer(RTX_4090, moved), second)
    assert run.status == RefreshStatus.SUCCEEDED and run.rows_inserted == 4
    h100 = _offer(H100_NAME)
    history = list(
        PriceObservation.objects.filter(offer=h100, pricing_model="on_demand")
        .order_by("observed_at")
        .values_list("observed_at", "amount_per_hour")
    )
    assert history == [
        (first, Decimal("16.008000")),
        (second, Decimal("15.200000")),
    ]  # appended, not overwritten
    assert (h100.last_seen_at, h100.gone_at) == (second, None)
    gone = _offer(A100_NAME)
    assert (gone.last_seen_at, gone.gone_at) == (first, second)
    # not current: neither the offer list, nor the ranking's offer table, nor the landing page counts it
    current = offer_frame(offer__instance_type__provider__slug="vast")
    assert A100_NAME not in set(current["instance_type"]) and H100_NAME in set(current["instance_type"])
    assert gone.pk not in set(current_price_rows()["offer_id"]) and h100.pk in set(
        current_price_rows()["offer_id"]
    )
    assert PriceObservation.objects.filter(offer=gone).count() == 1  # its history stays
    # the bundled SkyPilot Vast snapshot (same provider, never listed by a market refresh) is left alone
    assert not Offer.objects.filter(instance_type__name="2x-H200-32-65536").exclude(gone_at=None).exists()
    client = client_as("viewer")
    body = client.get(f"/api/offers/{gone.pk}/spot-history/").json()
    assert (body["last_seen_at"], body["gone_at"]) == (
        first.isoformat().replace("+00:00", "Z"),
        second.isoformat().replace("+00:00", "Z"),
    )
    page = client.get(f"/offers/{gone.pk}/").content.decode()
    assert 'id="market-gone"' in page and "no longer lists this offer" in page
    assert 'id="market-seen"' in client.get(f"/offers/{h100.pk}/").content.decode()
    # listed again: back, and current again
    third = timezone.now() - dt.timedelta(minutes=30)
    _refresh(vast_answers, answer(RTX_4090, moved, A100_SXM4_80_2), third)
    back = _offer(A100_NAME)
    assert (back.last_seen_at, back.gone_at) == (third, None)
    assert A100_NAME in set(offer_frame(offer__instance_type__provider__slug="vast")["instance_type"])


def test_a_bad_answer_marks_nothing_gone_and_keeps_the_prices(bundled_catalog, vast_answers):
    first = timezone.now() - dt.timedelta(hours=3)
    _refresh(vast_answers, answer(RTX_4090, H100_SXM_8), first)
    count = PriceObservation.objects.filter(source="vast:bundles").count()
    for bad, error in [
        (HTML_ERROR_PAGE, "not JSON"),
        (EMPTY, "no offers listed"),
        (HttpAnswer(403, b"{}"), "HTTP 403"),
    ]:
        with pytest.raises(Exception, match=error):
            _refresh(vast_answers, bad, timezone.now() - dt.timedelta(hours=1))
        run = PriceRefresh.objects.filter(source="vast-market").first()
        assert run.status == RefreshStatus.FAILED and error in run.error
    assert PriceObservation.objects.filter(source="vast:bundles").count() == count
    assert not Offer.objects.filter(instance_type__provider__slug="vast").exclude(gone_at=None).exists()


def test_refused_rows_are_counted_and_the_rest_lands(bundled_catalog, vast_answers):
    broken = offer(30_001, "RTX 4090", 1, 0.0, 0.2)  # dph_total 0: not a price
    run = _refresh(vast_answers, answer(broken, RTX_4090), timezone.now() - dt.timedelta(hours=1))
    assert (run.status, run.rows_seen, run.rows_inserted, run.rows_rejected) == (
        RefreshStatus.SUCCEEDED,
        3,
        2,
        1,
    )
    assert not Offer.objects.filter(instance_type__name__endswith="offer30001").exists()


def test_the_beat_task_queues_nothing_until_the_setting_is_on(settings, vast_answers, db):
    settings.GPULEDGER_VAST_MARKET = False
    result = refresh_prices("vast-market")
    assert result["queued"] == [] and result["off"][0].startswith(
        "vast-market: off: set GPULEDGER_VAST_MARKET=1"
    )
    assert not PriceRefresh.objects.exists() and vast_answers.urls == []


def test_the_status_page_shows_the_market_source(viewer_client, settings, bundled_catalog, vast_answers):
    settings.GPULEDGER_VAST_MARKET = False
    html = viewer_client.get("/status/").content.decode()
    assert 'id="markets"' in html and "off: set GPULEDGER_VAST_MARKET=1" in html
    _refresh(vast_answers, answer(RTX_4090, H100_SXM_8), timezone.now() - dt.timedelta(hours=2))
    _refresh(vast_answers, answer(RTX_4090), timezone.now() - dt.timedelta(hours=1))
    settings.GPULEDGER_VAST_MARKET = True
    html = viewer_client.get("/status/").content.decode()
    row = html.split('id="markets"', 1)[1].split("</table>", 1)[0]
    # 1 offer listed (the RTX 4090), 1 gone (the H100), and the runs in the refresh table
    assert "vast-market" in row and ">on<" in row and '<td class="num">1</td><td class="num">1</td>' in row
    assert "vast:bundles" in html
