"""The ranking's offer table read straight into numpy columns: no model instances, no per-row Decimal.

``offer_table()`` gives the rows and columns of ``pricing.selectors.offer_frame()`` (same names; the
order of rows is not promised) with two differences that only the ranking may rely on: the money and
size columns are float64 (the ``*_float`` copies and the original names hold the same arrays;
``price_per_gpu_hour_usd``, which the ranking does not read, is a float quotient and may differ from
offer_frame()'s Decimal one in the last bit), and
the freshness columns are left out, because they depend on the clock and a cached table must not
(``with_staleness`` adds them when a context is built).

The newest published price per offer × pricing model × payment option × commitment kind is picked in SQL with the
natural-key index (``DISTINCT ON`` on PostgreSQL, ordered all descending so that it is a backward scan
of that index with no sort; ``GROUP BY`` with ``MAX`` on SQLite, whose bare columns come from the row
holding the maximum: https://www.sqlite.org/lang_select.html#bareagg). A marketplace offer marked gone
(``gone_at``, pricing/market_offers.py) has no current price, as in offer_frame(). Two prices of one offer observed
at the same instant (different sources) are a tie either query breaks arbitrarily, as offer_frame()'s
window does.
Catalog text (provider, instance type, region, GPU) is read once per catalog row and spread over the
prices by integer index.

Exactness: a USD amount is the stored 6-decimal value as the nearest float, as ``float(Decimal)``
gives. A price in another currency is multiplied by its FX rate in Decimal (exact, as offer_frame()
does) and only then rounded to float: those rows are few, so the Decimal work stays small.
"""

from __future__ import annotations

import io
from decimal import Decimal

import numpy as np
import pandas as pd
from django.db import connection

from pricing.choices import PriceStatus
from pricing.fx import fx_rates
from pricing.models import InstanceType, Offer, PriceObservation, Region
from pricing.selectors import CURRENT_KEY, FLOAT_COLUMNS, OFFER_FRAME_COLUMNS, with_quality
from scheduler.models import PriceRefresh

# Epoch microseconds: exact integers on both backends, turned into datetime64 without a parser.
_CURRENT_POSTGRESQL = """
SELECT c.id AS observation_id, c.offer_id, o.instance_type_id, o.region_id, o.zone, c.pricing_model,
       c.payment_option, c.amount, c.currency, c.observed_us AS observed, c.source,
       COALESCE(r.source, '') AS refresh_source, c.commitment_kind
FROM (
    SELECT DISTINCT ON ({key})
           p.id, p.offer_id, p.pricing_model, p.payment_option, (p.amount_per_hour * 1000000)::int8 AS amount,
           p.currency, (EXTRACT(EPOCH FROM p.observed_at) * 1000000)::int8 AS observed_us, p.source,
           p.refresh_id, p.commitment_kind
    FROM {prices} p
    WHERE p.status = %s
    ORDER BY {key_descending}, p.observed_at DESC
) c
JOIN {offers} o ON o.id = c.offer_id
LEFT JOIN {refreshes} r ON r.id = c.refresh_id
WHERE o.gone_at IS NULL
"""
_CURRENT_SQLITE = """
SELECT c.id, c.offer_id, o.instance_type_id, o.region_id, o.zone, c.pricing_model, c.payment_option,
       c.amount, c.currency, c.observed_at, c.source, COALESCE(r.source, ''), c.commitment_kind
FROM (
    SELECT p.id, p.offer_id, p.pricing_model, p.payment_option, CAST(p.amount_per_hour AS REAL) AS amount,
           p.currency, p.observed_at || '' AS observed_at, p.source, p.refresh_id, p.commitment_kind,
           MAX(p.observed_at)
    FROM {prices} p
    WHERE p.status = %s
    GROUP BY {key}
) c
JOIN {offers} o ON o.id = c.offer_id
LEFT JOIN {refreshes} r ON r.id = c.refresh_id
WHERE o.gone_at IS NULL
"""
_FIELDS = (
    "observation_id",
    "offer_id",
    "instance_type_id",
    "region_id",
    "zone",
    "pricing_model",
    "payment_option",
    "amount",
    "currency",
    "observed",
    "source",
    "refresh_source",
    "commitment_kind",
)
TEXT = object  # text columns stay object arrays: the ranking factorizes them as such


def current_price_rows() -> dict[str, np.ndarray]:
    """pricing.selectors.current_price_observations() in SQL of its own, for speed: the newest published
    price per CURRENT_KEY of every listed offer."""
    tables = {
        "prices": PriceObservation._meta.db_table,
        "offers": Offer._meta.db_table,
        "refreshes": PriceRefresh._meta.db_table,
    }
    names = {k: connection.ops.quote_name(v) for k, v in tables.items()}
    # the key of pricing.selectors.current_price_observations (its model fields are their columns)
    names["key"] = ", ".join(f"p.{name}" for name in CURRENT_KEY)
    names["key_descending"] = ", ".join(f"p.{name} DESC" for name in CURRENT_KEY)
    if connection.vendor == "postgresql":
        return _postgresql_rows(_CURRENT_POSTGRESQL.format(**names))
    with connection.cursor() as cursor:
        cursor.execute(_CURRENT_SQLITE.format(**names), [PriceStatus.PUBLISHED])
        rows = cursor.fetchall()
    columns = list(zip(*rows, strict=True)) if rows else [()] * len(_FIELDS)
    data = dict(zip(_FIELDS, columns, strict=True))
    result = {name: np.array(data[name], dtype=TEXT) for name in _FIELDS}
    for name in ("observation_id", "offer_id", "instance_type_id", "region_id"):
        result[name] = np.array(data[name], dtype=np.int64)
    result["amount"] = np.array(data["amount"], dtype=float)
    result["observed_at"] = _observed(data["observed"])
    del result["observed"]
    return result


def _postgresql_rows(query: str) -> dict[str, np.ndarray]:
    """The query's rows as one CSV text built by PostgreSQL (``string_agg``; text fields quoted as CSV
    quotes them) and parsed by pandas' C reader: no Python object per field or per row. fetchall() built
    1.2 million of them at 100,000 prices, and a COPY hands its rows over one message each."""

    def text(name: str) -> str:  # a CSV-quoted field: any comma, quote or newline in it stays inside
        return f"'\"' || replace(c.{name}, '\"', '\"\"') || '\"'"

    line = " || ',' || ".join(
        [f"c.{name}::text" for name in _FIELDS[:4]]
        + [
            text("zone"),
            text("pricing_model"),
            text("payment_option"),
            "c.amount::text",
            text("currency"),
            "c.observed::text",
            text("source"),
            text("refresh_source"),
            text("commitment_kind"),
        ]
    )
    statement = f"SELECT string_agg({line}, E'\\n') FROM ({query}) c"  # noqa: S608 (our own query)
    with connection.cursor() as cursor:
        cursor.execute(statement, [PriceStatus.PUBLISHED])
        (csv_text,) = cursor.fetchone()
    text_columns = (
        "zone",
        "pricing_model",
        "payment_option",
        "currency",
        "source",
        "refresh_source",
        "commitment_kind",
    )
    numbers = {
        "observation_id": np.int64,
        "offer_id": np.int64,
        "instance_type_id": np.int64,
        "region_id": np.int64,
        "amount": np.int64,
        "observed": np.int64,
    }
    frame = pd.read_csv(
        io.StringIO(csv_text or ""),
        names=list(_FIELDS),
        header=None,
        dtype={name: object for name in text_columns} | numbers,
        keep_default_na=False,
        na_filter=False,
    )
    result = {name: frame[name].to_numpy(dtype=object) for name in text_columns}
    result |= {name: frame[name].to_numpy() for name in numbers}
    result["observed_at"] = result.pop("observed").astype("datetime64[us]")
    # Millionths as exact integers: one IEEE division of two exact doubles is correctly rounded, so this
    # is float(Decimal(amount)) (exact below 2**53 millionths, some 9 billion an hour)
    result["amount"] = result["amount"] / 1e6
    return result


def _observed(values) -> np.ndarray:
    """Observation times as naive UTC datetime64[us]: epoch microseconds (PostgreSQL) or Django's
    stored text, which is UTC (SQLite)."""
    if connection.vendor == "postgresql":
        return np.array(values, dtype=np.int64).astype("datetime64[us]")
    stamps = pd.to_datetime(pd.Series(values, dtype=TEXT), format="ISO8601", utc=True)
    return stamps.dt.tz_localize(None).to_numpy(dtype="datetime64[us]")


def _instance_types() -> pd.DataFrame:
    """One row per instance type (few hundred), indexed by id: the text and sizes every price shares."""
    rows = InstanceType.objects.values_list(
        "id",
        "provider__slug",
        "provider__name",
        "name",
        "gpu__slug",
        "gpu_count",
        "vcpus",
        "memory_gib",
        "host_priced_separately",
        "host_figures_lower_bound",
    )
    names = (
        "id",
        "provider",
        "provider_name",
        "instance_type",
        "gpu",
        "gpu_count",
        "vcpus",
        "memory_gib",
        "host_priced_separately",
        "host_figures_lower_bound",
    )
    columns = dict(zip(names, zip(*rows, strict=True), strict=True)) if rows else {n: () for n in names}
    table = {name: np.array(columns[name], dtype=TEXT) for name in names[1:5]}
    for name in ("gpu_count", "vcpus", "memory_gib"):
        table[name] = np.array([np.nan if v is None else float(v) for v in columns[name]], dtype=float)
    table["host_priced_separately"] = np.array(columns["host_priced_separately"], dtype=bool)
    table["host_figures_lower_bound"] = np.array(columns["host_figures_lower_bound"], dtype=bool)
    index = pd.Index(np.array(columns["id"], dtype=np.int64))
    return pd.DataFrame({k: pd.Series(v, dtype=v.dtype, index=index) for k, v in table.items()})


def _spread(table: pd.DataFrame, ids: np.ndarray) -> dict[str, np.ndarray]:
    """Each catalog column of ``table`` per price row, by the row's id into it."""
    position = table.index.get_indexer(ids)
    return {name: table[name].to_numpy()[position] for name in table.columns}


def _usd(amount: np.ndarray, currency: np.ndarray) -> np.ndarray:
    """Amounts in USD: USD ones as they are, others through the stored rate in Decimal; NaN where no
    rate is stored (offer_frame() keeps such prices, unconverted)."""
    rates = fx_rates(base="USD")
    usd = np.full(amount.size, np.nan)
    is_usd = currency == "USD"
    usd[is_usd] = amount[is_usd]
    for code in set(currency[~is_usd].tolist()):
        rows = np.flatnonzero(currency == code)
        if code in rates:
            rate = rates[code]
            # repr() of the float is the stored 6-decimal text again (exact up to 15 significant digits:
            # any amount under a billion an hour)
            usd[rows] = [float(Decimal(repr(value)) * rate) for value in amount[rows].tolist()]
    return usd


def offer_table(*, gpu_mapped_only: bool = True) -> pd.DataFrame:
    """offer_frame()'s rows and columns (see the module docstring for the float money columns), without
    the freshness columns, plus price quality and spot sanity."""
    prices = current_price_rows()
    types = _instance_types()
    catalog = _spread(types, prices["instance_type_id"])
    keep = (catalog["gpu"] != None) if gpu_mapped_only else np.ones(len(catalog["gpu"]), dtype=bool)  # noqa: E711
    regions = dict(Region.objects.values_list("id", "code"))
    region_code = np.array([regions.get(i) for i in prices["region_id"].tolist()], dtype=TEXT)
    usd = _usd(prices["amount"], prices["currency"])
    with np.errstate(divide="ignore", invalid="ignore"):
        per_gpu = usd / catalog["gpu_count"]
    columns = {
        "observation_id": prices["observation_id"],
        "offer_id": prices["offer_id"],
        "provider": catalog["provider"],
        "provider_name": catalog["provider_name"],
        "region": region_code,
        "zone": prices["zone"],
        "instance_type": catalog["instance_type"],
        "gpu": catalog["gpu"],
        "gpu_count": catalog["gpu_count"],
        "vcpus": catalog["vcpus"],
        "memory_gib": catalog["memory_gib"],
        "pricing_model": prices["pricing_model"],
        "payment_option": prices["payment_option"],
        "price_per_hour": prices["amount"],
        "currency": prices["currency"],
        "price_per_hour_usd": usd,
        "price_per_gpu_hour_usd": per_gpu,
        "observed_at": prices["observed_at"],
        "source": prices["source"],
        "host_priced_separately": catalog["host_priced_separately"],
        "commitment_kind": prices["commitment_kind"],
        "host_figures_lower_bound": catalog["host_figures_lower_bound"],
    }
    frame = pd.DataFrame({name: _series(columns[name][keep]) for name in OFFER_FRAME_COLUMNS})
    frame["observed_at"] = frame["observed_at"].dt.tz_localize("UTC")
    for column in FLOAT_COLUMNS:
        frame[f"{column}_float"] = frame[column].to_numpy(dtype=float)
    frame["refresh_source"] = _series(prices["refresh_source"][keep])
    return with_quality(frame)


def _series(values: np.ndarray) -> pd.Series:
    """A column keeping its numpy dtype (pandas 3 would turn an object array of text into its string
    dtype, which the ranking converts back to objects on every read)."""
    return pd.Series(values, dtype=values.dtype, copy=False)
