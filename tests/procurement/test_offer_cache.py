"""The offer-table cache (issue 9): keyed by the price version, never served after a price change, shared
through Redis pickle-free, and the fast offer table equal to offer_frame() on what the ranking reads."""

import datetime as dt
import os
from decimal import Decimal

import numpy as np
import pandas as pd
import pytest
from django.db import transaction

from pricing.ingest import ingest_price_records
from pricing.models import FxRate, GpuModel, Offer, PriceObservation
from pricing.offer_table import offer_table
from pricing.price_version import price_version_key
from pricing.providers.records import InstanceTypeRecord, PriceRecord
from pricing.publishing import suspect_prices_publish
from pricing.selectors import offer_frame
from procurement import offer_cache
from procurement.services.recommendations import (
    RankingContext,
    ranking_options_parse,
    recommendation_compute,
)
from procurement.sizing import parse_workload_spec

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def gpu_models(db):
    """The bundled providers, GPU datasheets and aliases (g5's "A10G" maps to a10g), without the prices."""
    from pricing import catalog

    catalog._load_providers(catalog.DATA_DIR / "providers.csv")
    catalog._load_gpu_models(catalog.DATA_DIR / "gpu_specs.csv")
    catalog._load_aliases(catalog.DATA_DIR / "gpu_aliases.csv")


G5 = InstanceTypeRecord(provider="aws", name="g5.xlarge", gpu_name="A10G", gpu_count=Decimal(1))
SPEC = parse_workload_spec(
    {"name": "q", "task": "qlora", "model": {"preset": "llama-3.1-8b"}, "training_tokens": 2e8}
)
A10G_ONLY = {"gpus": ["a10g"], "providers": ["aws"], "instance_counts": [1], "top": 5}


def g5_price(price: str, day: int, currency: str = "USD") -> PriceRecord:
    return PriceRecord(
        instance=G5,
        region="us-east-1",
        zone="",
        pricing_model="on_demand",
        price_per_hour=Decimal(price),
        currency=currency,
        observed_at=dt.datetime(2026, 11, day, tzinfo=dt.UTC),
        source="test",
    )


def cheapest(options=A10G_ONLY) -> dict:
    ranking = recommendation_compute(spec=SPEC, options=ranking_options_parse(options))
    return ranking.results[0]


# --- The fast table is offer_frame() on what the ranking reads ------------------------------------------


FLOAT_COLUMNS = (
    "gpu_count",
    "vcpus",
    "memory_gib",
    "price_per_hour",
    "price_per_hour_usd",
    "price_per_hour_usd_float",
    "on_demand_usd",
    "sibling_median_usd",
    "robust_price_usd",
)


def test_it_reads_the_same_table_as_offer_frame_without_decimals(bundled_catalog):
    old = offer_frame().sort_values("observation_id").reset_index(drop=True)
    new = offer_table().sort_values("observation_id").reset_index(drop=True)
    assert len(new) == len(old) > 2000
    freshness = ("scheduled", "stale_after_hours", "stale")  # added per context: they depend on the clock
    assert list(new.columns) == [c for c in old.columns if c not in freshness]
    assert set(new["currency"]) >= {"USD", "CNY"}  # the demo provider's CNY prices go through the FX rate
    for name in FLOAT_COLUMNS:  # float(Decimal) of the exact value, as the *_float copies always were
        expected = np.array([np.nan if v is None else float(v) for v in old[name]], dtype=float)
        np.testing.assert_array_equal(new[name].to_numpy(dtype=float), expected, err_msg=name)
    for name in (
        "provider",
        "region",
        "zone",
        "instance_type",
        "gpu",
        "pricing_model",
        "payment_option",
        "source",
        "refresh_source",
        "price_quality",
        "spot_outlier_kind",
    ):
        assert new[name].tolist() == old[name].tolist(), name
    for name in ("observation_id", "offer_id", "host_priced_separately", "spot_outlier", "observed_at"):
        assert new[name].equals(old[name]), name


def test_it_prices_a_cny_row_through_the_exact_decimal_product(bundled_catalog):
    rate = FxRate.objects.filter(currency="CNY").order_by("-as_of").first().rate
    row = offer_table().query("currency == 'CNY'").iloc[0]
    stored = PriceObservation.objects.get(pk=row["observation_id"]).amount_per_hour
    assert row["price_per_hour_usd"] == float(stored * rate)


# --- Never a stale table after a price change --------------------------------------------------------


def test_it_ranks_an_imported_price_on_the_next_request():
    ingest_price_records([g5_price("1.006", 1)])
    assert cheapest()["price_per_hour"] == "1.006000"
    ingest_price_records([g5_price("0.9", 2)])  # COPY or bulk_create: no model signal, an explicit bump
    assert cheapest()["price_per_hour"] == "0.900000"


def test_it_ranks_a_published_suspect_price_on_the_next_request(admin_user):
    ingest_price_records([g5_price("1.006", 1)])
    ingest_price_records([g5_price("10.06", 2)])  # 10x the current price: held back
    assert cheapest()["price_per_hour"] == "1.006000"
    suspect = PriceObservation.objects.get(status="suspect")
    assert suspect_prices_publish([suspect.pk], user=admin_user) == 1  # a queryset update: bumped by hand
    assert cheapest()["price_per_hour"] == "10.060000"


def test_it_converts_at_an_fx_rate_edited_after_the_table_was_cached():
    FxRate.objects.create(currency="EUR", rate=Decimal("1.10"), as_of=dt.date(2026, 11, 1), source="t")
    ingest_price_records([g5_price("1.00", 1, currency="EUR")])
    assert cheapest()["price_per_hour"] == "1.100000"  # USD, the default currency of results
    rate = FxRate.objects.get(currency="EUR")
    rate.rate = Decimal("1.20")
    rate.save()  # an admin edit: the model signal
    assert cheapest()["price_per_hour"] == "1.200000"


def test_it_forgets_a_deleted_offer():
    ingest_price_records([g5_price("1.006", 1)])
    assert cheapest()["instance_type"] == "g5.xlarge"
    Offer.objects.all().delete()  # cascades to the prices (Django deletes them one signal each)
    assert not recommendation_compute(spec=SPEC, options=ranking_options_parse(A10G_ONLY)).results


def test_it_keeps_the_version_of_a_write_that_rolled_back():
    ingest_price_records([g5_price("1.006", 1)])
    before = price_version_key()
    with pytest.raises(RuntimeError), transaction.atomic():
        ingest_price_records([g5_price("0.5", 2)])
        raise RuntimeError("the import failed later on")
    assert price_version_key() == before
    assert cheapest()["price_per_hour"] == "1.006000"


def test_it_changes_the_version_on_each_kind_of_write_and_not_on_a_rerun():
    ingest_price_records([g5_price("1.006", 1)])
    seen = {price_version_key()}
    ingest_price_records([g5_price("1.006", 1)])  # the same file again: nothing written
    assert price_version_key() in seen
    writes = [
        lambda: ingest_price_records([g5_price("1.2", 3)]),
        lambda: FxRate.objects.create(
            currency="EUR", rate=Decimal("1.1"), as_of=dt.date(2026, 11, 1), source="t"
        ),
        lambda: Offer.objects.get().save(),
        lambda: GpuModel.objects.get(slug="a10g").save(),  # an admin correction of a datasheet
    ]
    for write in writes:
        write()
        key = price_version_key()
        assert key not in seen
        seen.add(key)


def test_a_catalog_reload_that_changes_nothing_keeps_the_cached_table(bundled_catalog):
    """Every deploy runs load_catalog: an unchanged one must not throw away every worker's table."""
    from pricing.catalog import catalog_load

    before = price_version_key()
    assert catalog_load().prices.inserted == 0
    assert price_version_key() == before


# --- Reuse: one context per version and minute; prepared tables per what prepare() reads -----------------


def test_it_reuses_the_context_until_prices_change(bundled_catalog, monkeypatch):
    from procurement.services import recommendations

    minute = dt.datetime(2026, 11, 2, 12, 0, 30, tzinfo=dt.UTC)  # one minute throughout, however slow
    monkeypatch.setattr(recommendations.timezone, "now", lambda: minute)
    first = RankingContext.current()
    assert RankingContext.current() is first
    ingest_price_records([g5_price("0.01", 2)])  # far below any stored price: a new cheapest offer
    assert RankingContext.current() is not first


def test_it_prepares_apart_options_that_prepare_reads(bundled_catalog):
    """include_illustrative changes which rows are rankable: two requests differing only in it must not
    share a prepared table (they did while the key held the filters only)."""
    context = RankingContext.current()
    plain = ranking_options_parse({"top": 5})
    illustrative = ranking_options_parse({"top": 5, "include_illustrative": True})
    assert len(context.prepared(illustrative).positions) > len(context.prepared(plain).positions)
    assert context.prepared(plain) is context.prepared(ranking_options_parse({"top": 7}))


def test_it_marks_prices_stale_as_of_the_minute_of_the_context(monkeypatch):
    from procurement.services import recommendations

    ingest_price_records([g5_price("1.006", 1)])
    today = dt.datetime(2026, 11, 2, tzinfo=dt.UTC)
    monkeypatch.setattr(recommendations.timezone, "now", lambda: today)
    assert not RankingContext.current().offers["stale"].any()
    today = dt.datetime(2027, 11, 2, tzinfo=dt.UTC)  # a year on: the snapshot price is past 90 days
    assert RankingContext.current().offers["stale"].all()


# --- The stored form and the shared cache -----------------------------------------------------------------


def test_it_stores_a_table_pickle_free_and_reads_it_back_equal(bundled_catalog):
    from procurement.selectors import ranking_offer_table

    table = ranking_offer_table()
    data = offer_cache.frame_dumps(table)
    assert b"\x80\x04" not in data[:64]  # no pickle header: numpy's .npz, read with allow_pickle=False
    back = offer_cache.frame_loads(data)
    assert list(back.columns) == list(table.columns) and len(back) == len(table)
    for name in table.columns:
        left, right = table[name].to_numpy(dtype=object), back[name].to_numpy(dtype=object)
        same = [(a == b) or (pd.isna(a) and pd.isna(b)) for a, b in zip(left, right, strict=True)]
        assert all(same), name
    assert back["provider"].dtype == object and back["observed_at"].dtype == table["observed_at"].dtype


def test_it_refuses_to_store_a_column_it_could_not_read_back_exactly():
    with pytest.raises(TypeError, match="'when'"):
        offer_cache.frame_dumps(pd.DataFrame({"when": [dt.date(2026, 1, 1)]}))


class FakeRedis:
    """The four calls the cache makes, on a dict (the real-Redis test below needs REDIS_URL)."""

    def __init__(self):
        self.data: dict[str, bytes] = {}

    def get(self, key):
        return self.data.get(key)

    def set(self, key, value, nx=False, ex=None):
        if nx and key in self.data:
            return None
        self.data[key] = value
        return True

    def delete(self, key):
        self.data.pop(key, None)


@pytest.fixture
def fake_redis(monkeypatch):
    client = FakeRedis()
    monkeypatch.setattr(offer_cache, "_redis", lambda: client)
    offer_cache.cache_clear()
    yield client
    offer_cache.cache_clear()


def counting_build(frame):
    calls = []

    def build():
        calls.append(1)
        return frame

    return build, calls


def test_a_second_worker_reads_the_shared_table_instead_of_building(fake_redis):
    frame = pd.DataFrame({"provider": ["aws", None], "price": [1.5, np.nan]})
    build, calls = counting_build(frame)
    offer_cache.offer_table_for("v1", build)
    offer_cache.cache_clear()  # another process: nothing in memory, the Redis entry is there
    again = offer_cache.offer_table_for("v1", build)
    assert len(calls) == 1 and again["provider"].tolist() == ["aws", None]
    key = offer_cache.shared_key("v1")
    assert key in fake_redis.data and offer_cache.SCHEMA in key
    offer_cache.offer_table_for("v2", build)  # a new price version is a new key: built again
    assert len(calls) == 2


def test_a_request_waits_for_the_build_in_progress_then_builds_itself(fake_redis, monkeypatch):
    monkeypatch.setattr(offer_cache, "BUILD_WAIT_S", 0.05)
    fake_redis.set(offer_cache.shared_key("v1") + ":building", b"1")  # another worker is building v1
    build, calls = counting_build(pd.DataFrame({"price": [1.0]}))
    assert offer_cache.offer_table_for("v1", build)["price"].tolist() == [1.0]
    assert calls == [1]  # its entry never came: this request built it rather than fail


def test_it_builds_here_when_redis_is_down(monkeypatch):
    import redis

    class Down:
        def get(self, key):
            raise redis.ConnectionError("down")

    monkeypatch.setattr(offer_cache, "_redis", lambda: Down())
    offer_cache.cache_clear()
    build, calls = counting_build(pd.DataFrame({"price": [2.0]}))
    assert offer_cache.offer_table_for("v9", build)["price"].tolist() == [2.0] and calls == [1]
    offer_cache.cache_clear()


def test_it_shares_the_table_through_real_redis(require_redis, bundled_catalog):
    offer_cache.cache_clear()
    first = RankingContext.current()
    offer_cache.cache_clear()
    second = RankingContext.current()  # read back from Redis
    assert second is not first
    assert second.offers["observation_id"].tolist() == first.offers["observation_id"].tolist()
    offer_cache.cache_clear()


# --- Read-only commands start without system checks --------------------------------------------------


@pytest.mark.parametrize("name", ["recommend", "size", "job_cost"])
def test_read_only_commands_skip_system_checks(name):
    from django.core.management import load_command_class

    assert load_command_class("procurement", name).requires_system_checks == []


def test_sizing_and_job_cost_commands_start_without_pandas():
    """Start-up was 85% of a one-second `recommend` (issue 9): the admin imported pandas at django.setup()
    through pricing.publishing. `size` and `job_cost` never read the offer table, so never import it."""
    import subprocess
    import sys

    code = (
        "import sys, django; django.setup(); "
        "import procurement.management.commands.size, procurement.management.commands.job_cost; "
        "print('pandas' in sys.modules)"
    )
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "tests.settings"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert out.stdout.strip() == "False", out.stderr[-2000:]
