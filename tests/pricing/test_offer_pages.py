"""Paged offer reads (pricing/offer_pages.py, pricing/catalog_cheapest.py): the same answers as reading
the whole catalog, with reads that stay bounded as the catalog grows (issue 9: after importing 684,112
offers `/` took 17 s and `/api/offers/` timed out)."""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal

from django.utils import timezone

from pricing import catalog_cheapest
from pricing.api.serializers import OfferPriceSerializer
from pricing.models import InstanceType, Offer, PriceObservation, Region
from pricing.offer_pages import current_price_freshness
from pricing.price_version import price_version_bump
from pricing.selectors import cheapest_in_frame, offer_frame
from tests.rows_fetched import rows_fetched

LINK = re.compile(r'<([^>]+)>; rel="(\w+)"')


def links(response) -> dict[str, str]:
    return {rel: url for url, rel in LINK.findall(response.headers.get("Link", ""))}


def walk(client, url: str, params: dict) -> tuple[list[dict], list]:
    """Every row of a paged list, following rel="next" links; and each page's response."""
    rows, responses = [], [client.get(url, params)]
    while True:
        assert responses[-1].status_code == 200
        rows += responses[-1].json()
        if "next" not in links(responses[-1]):
            return rows, responses
        responses.append(client.get(links(responses[-1])["next"]))


def test_the_pages_add_up_to_the_whole_catalog_row_for_row(viewer_client, bundled_catalog):
    whole = OfferPriceSerializer(offer_frame().to_dict("records"), many=True).data
    rows, responses = walk(viewer_client, "/api/offers/", {"limit": 1000})
    assert len(responses) == -(-len(whole) // 1000) > 1  # ceil: several pages of the bundled catalog
    assert {int(r.headers["X-Total-Count"]) for r in responses} == {len(whole)}
    by_id = {row["observation_id"]: row for row in whole}
    assert len(rows) == len(by_id) and {row["observation_id"] for row in rows} == set(by_id)
    # spot sanity needs the sibling zones: a page reads them, so the flags match the whole-catalog read
    assert sum(row["spot_outlier"] for row in rows) == sum(row["spot_outlier"] for row in whole) > 0
    assert all(row == by_id[row["observation_id"]] for row in rows)
    keys = [(row["offer_id"], row["pricing_model"], row["payment_option"]) for row in rows]
    assert keys == sorted(keys)  # a stable order, so consecutive pages neither skip nor repeat


def test_a_page_defaults_to_100_rows_and_links_its_neighbours(viewer_client, bundled_catalog):
    first = viewer_client.get("/api/offers/", {"provider": "aws"})
    total = int(first.headers["X-Total-Count"])
    assert len(first.json()) == 100 < total and set(links(first)) == {"next"}
    assert "limit=100" in links(first)["next"] and "offset=100" in links(first)["next"]
    second = viewer_client.get(links(first)["next"])
    assert "offset=0&" in links(second)["prev"] and second.json()[0] != first.json()[0]
    last = viewer_client.get("/api/offers/", {"provider": "aws", "limit": 7, "offset": total - 3})
    assert len(last.json()) == 3 and set(links(last)) == {"prev"}
    beyond = viewer_client.get("/api/offers/", {"provider": "aws", "offset": total + 50})
    assert beyond.status_code == 200 and beyond.json() == []


def test_the_cheapest_prices_are_those_of_the_whole_catalog(bundled_catalog, monkeypatch):
    def summary(cheapest):
        return {
            key: (row.price_per_gpu_hour_usd, row.host_priced_separately) for key, row in cheapest.items()
        }

    expected = summary(cheapest_in_frame(offer_frame()))
    assert len(expected) > 30
    assert summary(catalog_cheapest.cheapest_gpu_prices()) == expected
    # one candidate per group: groups whose cheapest spot quote is an outlier must read further
    reads = []
    real = catalog_cheapest._candidates
    monkeypatch.setattr(catalog_cheapest, "CANDIDATES_PER_GROUP", 1)
    monkeypatch.setattr(catalog_cheapest, "_candidates", lambda *a: reads.append(a[1]) or real(*a))
    assert summary(catalog_cheapest.cheapest_gpu_prices()) == expected
    assert reads[:2] == [1, 4]


def test_price_freshness_is_counted_in_sql_as_the_frame_counts_it(bundled_catalog):
    now = timezone.now()
    old = PriceObservation.objects.filter(offer__instance_type__provider__slug="lambda")
    old.update(observed_at=now - dt.timedelta(days=91))  # past the 90-day snapshot limit
    frame = offer_frame(now=now)
    freshness = current_price_freshness(now)
    assert freshness["prices"] == len(frame) and freshness["newest"] == max(frame["observed_at"])
    assert freshness["stale"] == int(frame["stale"].sum()) > 0


def expensive_offers(count: int) -> int:
    """``count`` extra offers (on-demand and spot, at 900-1000 USD/h) in new regions of existing AWS
    instance types: they grow the catalog without changing any cheapest price. Returns prices added."""
    types = list(InstanceType.objects.filter(provider__slug="aws", gpu__isnull=False)[:50])
    regions = Region.objects.bulk_create(
        Region(provider=types[0].provider, code=f"zz-load-{n}") for n in range(-(-count // len(types)))
    )
    offers = Offer.objects.bulk_create(Offer(instance_type=t, region=r) for r in regions for t in types)[
        :count
    ]
    now = timezone.now()
    prices = PriceObservation.objects.bulk_create(
        PriceObservation(
            offer=offer,
            pricing_model=model,
            amount_per_hour=Decimal(900 + n % 100),
            currency="USD",
            observed_at=now,
            source="file:load-test.csv",
        )
        for n, offer in enumerate(offers)
        for model in ("on_demand", "spot")
    )
    price_version_bump()  # as every catalog writer does (bulk_create sends no signal): cached tables go
    return len(prices)


def test_pages_read_a_bounded_part_of_a_growing_catalog(
    bundled_catalog, client_as, monkeypatch, django_assert_max_num_queries
):
    from gpuledger.roles import user_roles
    from procurement.spend_summary import finance_summary

    viewer, finance = client_as("viewer"), client_as("finance")
    pages = {
        "offers": lambda: viewer.get("/api/offers/", {"limit": 50, "offset": 500}),
        "catalog": lambda: viewer.get("/"),
        "dashboard": lambda: finance.get("/dashboard/"),
        "freshness": lambda: finance_summary(),
    }

    def measure() -> dict[str, tuple[int, int]]:
        figures = {}
        for name, read in pages.items():
            with rows_fetched(monkeypatch) as counted, django_assert_max_num_queries(25) as queries:
                response = read()
            assert getattr(response, "status_code", 200) == 200
            figures[name] = (counted.rows, len(queries))
        return figures

    for client in (viewer, finance):  # roles are read once, then cached (user_facts.py): not a page's reads
        user_roles(client.user)
    # A new price version first, so that "before" builds its pages as "after" must: an earlier test of this
    # worker may have cached the same pages under the same version (the database rolls back between tests,
    # this worker's Redis does not), which made "before" a partial cache hit (11 queries against 13 in CI).
    price_version_bump()
    before = measure()
    added = expensive_offers(3000)
    assert added == 6000
    after = measure()
    for name in pages:
        rows_before, queries_before = before[name]
        rows_after, queries_after = after[name]
        # 6,000 more prices; a page that read them all would fetch thousands more rows (a GPU with
        # fewer offers than catalog_cheapest's candidates per group may take a few new ones in)
        assert rows_after <= rows_before + 200, (name, before[name], after[name])
        assert queries_after == queries_before, name
    assert after["offers"][0] < 500  # 50 rows and their siblings, not the catalog's ~9,000 prices


def test_the_catalog_page_is_paged_and_searched_in_sql(viewer_client, bundled_catalog, monkeypatch):
    from pricing import views

    monkeypatch.setattr(views, "CATALOG_PAGE_SIZE", 10)
    last = viewer_client.get("/", {"page": 4})
    assert [len(viewer_client.get("/", {"page": n}).context["rows"]) for n in (1, 2)] == [10, 10]
    # 37 bundled GPUs: 10 + 10 + 10 + 7 (was 33 and 3 before stop 51 added the RTX 4080, 4070 Ti SUPER, 4060 Ti 16GB
    # and 3060 to the catalog: cards)
    assert len(last.context["rows"]) == 7
    html = last.content.decode()
    assert "37 accelerators" in html and "Page 4 of 4" in html and 'rel="prev"' in html
    found = viewer_client.get("/", {"q": "H100"})
    assert sorted(row["gpu"].slug for row in found.context["rows"]) == [
        "h100-nvl-94gb",
        "h100-pcie-80gb",
        "h100-sxm5-80gb",
    ]
    assert "Page 1" not in found.content.decode()  # one page: no pager
