"""Write normalized price records to the database: idempotent, set-based, all or nothing.

The natural key of an observation is (offer, pricing model, payment option, commitment kind, observed_at,
source):
ingesting the same records twice inserts nothing the second time. The records are read once, into
columns; providers, regions, instance types and offers are upserted from the few distinct values;
then the observations go in as one set. On PostgreSQL that is a binary ``COPY`` (typed fields, so no
text such as a file name can split a row or forge a field) straight into the table, or into a temporary
table and one ``INSERT … SELECT … ON CONFLICT DO NOTHING`` (a million rows in seconds); elsewhere
(SQLite in development) a filtered ``bulk_create``.

Guard rails, applied before anything is written:
- text with a NUL byte or longer than its column, a provider that is not a slug, a number beyond what
  its column holds, and an observation dated more than a day ahead stop the batch with an error naming
  the row and field;
- a price that is not above zero is rejected and counted (readers already drop them; this is the
  last line of defence, since a missing price must never be stored as free);
- a currency without an FX rate stops the batch with an error naming the currency and the row;
- a price more than 5× or under 1/5 of its reference is stored as ``suspect``: kept, shown in the
  admin, but not published (not "current") until a person accepts it. The reference is the current
  published price of the same offer, pricing model and payment option before this batch, or, for
  an offer seen for the first time, the batch's own median for it (which catches a lone outlier).

Commitment prices (reserved and savings-plan records, from any source) are stored as observations whose
amount is the effective hourly price, with the upfront fee and the recurring hourly part beside it
(pricing.models.PriceObservation says why); a record without a recurring part gets
effective − upfront ÷ term hours. A fee on a price that is not a commitment, a negative fee, or a
recurring part above the effective price stops the batch naming the row.

A live refresh passes ``refusals``: then the rows pricing.price_checks refuses (a price not above
zero or over 10x its family's median, a currency without an FX rate, a region the provider does not
document) are counted there with their reasons and left out, and the rest of the batch lands.

Each inserted price newer than its series' current one is counted as ``added`` (the series had no
price) or ``changed`` (it differs from the price before it), so a refresh says what it moved.

Instance types whose GPU name no alias maps are stored with no GPU and listed as UnmappedGpuName.
"""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal
from itertools import repeat

import numpy as np
import pandas as pd
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from gpuledger.upsert import ChangeCount, upsert_by_natural_key
from pricing.choices import COMMITMENT_TERM_YEARS, PriceStatus
from pricing.gpu_mapping import GpuNameResolver
from pricing.models import (
    FxRate,
    InstanceType,
    Offer,
    PriceObservation,
    Provider,
    Region,
    SpotAdvisory,
    UnmappedGpuName,
)
from pricing.price_checks import CheckContext, Family, Refusals, per_gpu_hour, price_records_screen
from pricing.price_version import price_version_bump
from pricing.providers.records import InstanceTypeRecord, PriceRecord, SourceRowError, SpotAdvisoryRecord
from pricing.selectors import current_price_observations

PRICE_QUANTUM = Decimal("0.000001")
SUSPECT_RATIO = 5.0  # a price over 5× or under 1/5 of its reference is held back
BASE_CURRENCY = "USD"
# A price or FX rate dated beyond now plus this clock-skew allowance is refused: it would stay
# "current" (and never stale) whatever real price came after it.
FUTURE_ALLOWANCE = dt.timedelta(days=1)
SLUG_PATTERN = re.compile(r"[-a-zA-Z0-9_]+")  # what a Provider.slug (SlugField) accepts


@dataclass
class IngestResult:
    seen: int = 0
    inserted: int = 0
    unchanged: int = 0
    rejected: int = 0
    suspect: int = 0  # inserted but held back (counted in `inserted` too)
    prices_added: int = 0  # first price of an offer × pricing model × payment option
    prices_changed: int = 0  # a new price for a series that had a different one
    catalog: ChangeCount = field(default_factory=ChangeCount)  # providers, regions, types, offers
    unmapped_gpu_names: Counter = field(default_factory=Counter)
    rejected_locations: list[str] = field(default_factory=list)

    @property
    def changed(self) -> int:
        return self.inserted + self.catalog.changed


@dataclass
class _Columns:
    """The batch, one list per column. Offers and price series are small integer codes into
    `offer_keys` / `series_keys` until the catalog is resolved: a batch of a million rows usually
    names a few thousand offers."""

    offer_index: list[int] = field(default_factory=list)
    series_index: list[int] = field(default_factory=list)
    pricing_model: list[str] = field(default_factory=list)
    payment_option: list[str] = field(default_factory=list)
    commitment_kind: list[str] = field(default_factory=list)
    amount: list[Decimal] = field(default_factory=list)
    upfront: list[Decimal | None] = field(default_factory=list)
    recurring: list[Decimal | None] = field(default_factory=list)
    currency: list[str] = field(default_factory=list)
    observed_at: list = field(default_factory=list)
    source: list[str] = field(default_factory=list)
    offer_keys: dict[tuple[str, str, str, str], int] = field(
        default_factory=dict
    )  # provider, type, region, zone
    series_keys: dict[tuple[int, str, str, str], int] = field(
        default_factory=dict
    )  # offer index, model, payment, kind
    instances: dict[tuple[str, str], InstanceTypeRecord] = field(default_factory=dict)
    first_location: dict[str, str] = field(default_factory=dict)  # currency → first row using it


def ingest_price_records(
    records: Iterable[PriceRecord], *, refresh=None, refusals: Refusals | None = None
) -> IngestResult:
    """Store `records` (all or nothing); `refresh` is the scheduler.PriceRefresh they came from; with
    `refusals`, rows failing pricing.price_checks are refused and counted there, not stored."""
    result = IngestResult()
    with transaction.atomic():
        if refusals is not None:
            records = list(records)
            passed = price_records_screen(records, _check_context(records), refusals)
            result.seen += len(records) - len(passed)  # seen, then refused with a reason
            records = passed
        columns = _read_columns(records, result)
        if not columns.amount:
            return result
        _check_currencies(columns)
        offer_id_by_index = _ensure_catalog(columns, result)
        batch = _Batch.build(columns, offer_id_by_index)
        _insert_observations(batch, refresh, result)
        if result.inserted:  # COPY and bulk_create send no signals: cached offer tables must go
            price_version_bump()
    return result


def _check_context(records: list[PriceRecord]) -> CheckContext:
    """The FX currencies and the current published prices per GPU-hour of the batch's providers."""
    currencies = frozenset(FxRate.objects.filter(base=BASE_CURRENCY).values_list("currency", flat=True))
    known: dict[Family, list[float]] = {}
    providers = {record.instance.provider for record in records}
    rows = current_price_observations(offer__instance_type__provider__slug__in=providers).values_list(
        "offer__instance_type__provider__slug",
        "offer__instance_type__gpu_name",
        "offer__instance_type__gpu_count",
        "pricing_model",
        "currency",
        "amount_per_hour",
    )
    for provider, gpu_name, gpu_count, model, currency, amount in rows:
        family = (provider, gpu_name, model, currency)
        known.setdefault(family, []).append(per_gpu_hour(float(amount), float(gpu_count)))
    return CheckContext(currencies=currencies | {BASE_CURRENCY}, known_per_gpu_hour=known)


def _read_columns(records: Iterable[PriceRecord], result: IngestResult) -> _Columns:
    columns = _Columns()
    offer_keys, series_keys, instances = columns.offer_keys, columns.series_keys, columns.instances
    latest_allowed = timezone.now() + FUTURE_ALLOWANCE
    checked_sources: set[str] = set()
    for record in records:
        result.seen += 1
        price = record.price_per_hour
        if price is None or price <= 0:
            result.rejected += 1
            result.rejected_locations.append(f"{record.location}: price {price} is not above zero")
            continue
        if price >= MAX_PRICE:
            raise SourceRowError(
                record.location, "price_per_hour", f"{str(price)[:30]} is too large (at most {MAX_PRICE - 1})"
            )
        if record.observed_at > latest_allowed:
            raise SourceRowError(
                record.location,
                "observed_at",
                f"{record.observed_at.isoformat()} is more than {FUTURE_ALLOWANCE.days} day ahead of now"
                " (a future price would stay current for good)",
            )
        if record.source not in checked_sources:  # a batch names a few sources: check each once
            _check_text(record.location, "source", record.source)
            checked_sources.add(record.source)
        instance = record.instance
        key = (instance.provider, instance.name, record.region, record.zone)
        index = offer_keys.get(key)
        if index is None:
            _check_offer_text(record)
            index = offer_keys[key] = len(offer_keys)
            instances.setdefault((instance.provider, instance.name), instance)
        if record.currency not in columns.first_location:
            columns.first_location[record.currency] = record.location
        upfront, recurring = _commitment_parts(record)
        kind = record.commitment_kind
        series = (index, record.pricing_model, record.payment_option, kind)
        columns.series_index.append(series_keys.setdefault(series, len(series_keys)))
        columns.offer_index.append(index)
        columns.pricing_model.append(record.pricing_model)
        columns.payment_option.append(record.payment_option)
        columns.commitment_kind.append(kind)
        columns.amount.append(price.quantize(PRICE_QUANTUM))
        columns.upfront.append(upfront)
        columns.recurring.append(recurring)
        columns.currency.append(record.currency)
        columns.observed_at.append(record.observed_at)
        columns.source.append(record.source)
    return columns


def _commitment_parts(record: PriceRecord) -> tuple[Decimal | None, Decimal | None]:
    """(upfront fee, recurring per hour) of a commitment record, both None for any other price."""
    years = COMMITMENT_TERM_YEARS.get(record.pricing_model)
    upfront, recurring = record.upfront_fee, record.recurring_per_hour
    if years is None:
        if upfront is not None or recurring is not None or record.commitment_kind:
            raise SourceRowError(
                record.location, "upfront_fee", f"a {record.pricing_model} price has no upfront fee or kind"
            )
        return None, None
    if upfront is not None and not 0 <= upfront < MAX_PRICE:
        raise SourceRowError(record.location, "upfront_fee", f"{str(upfront)[:30]} is not a fee (0 or more)")
    if recurring is None:
        spread = (upfront or Decimal(0)) / (years * HOURS_PER_YEAR)
        recurring = max(record.price_per_hour - spread, Decimal(0))
    if not 0 <= recurring <= record.price_per_hour:
        raise SourceRowError(
            record.location,
            "recurring_per_hour",
            f"{str(recurring)[:30]} is not between 0 and the effective price {record.price_per_hour}",
        )
    quantize = PRICE_QUANTUM
    return (None if upfront is None else upfront.quantize(quantize)), recurring.quantize(quantize)


HOURS_PER_YEAR = 8760  # AWS bills a term as 365-day years (pricing.providers.vocabulary.TERM_HOURS)


# Longest text each stored field holds (pricing.models); a longer value is a clean error, not a 500.
TEXT_LIMITS = {
    "source": 200,
    "region": 100,
    "zone": 100,
    "instance_type": 150,
    "gpu_name": 100,
    "provider": 50,
    "network": 100,
    "interconnect": 100,
}


# Largest magnitude each stored number holds (pricing.models.InstanceType, PriceObservation).
NUMBER_LIMITS = {
    "gpu_count": 10**5,
    "vcpus": 10**6,
    "memory_gib": 10**8,
    "gpu_memory_gib": 10**8,
    "local_disk_gb": 10**9,
}
MAX_PRICE = Decimal(10**12)


def _check_text(location: str, field_name: str, value: str) -> None:
    """No NUL byte (PostgreSQL text cannot hold one) and no more than the column holds."""
    if "\x00" in value:
        raise SourceRowError(location, field_name, "holds a NUL byte")
    limit = TEXT_LIMITS[field_name]
    if len(value) > limit:
        raise SourceRowError(location, field_name, f"is {len(value)} characters long (at most {limit})")


def _check_offer_text(record: PriceRecord) -> None:
    """The text fields of a new offer: provider slug, names, region and zone."""
    instance = record.instance
    if not SLUG_PATTERN.fullmatch(instance.provider):
        raise SourceRowError(
            record.location,
            "provider",
            f"{instance.provider[:60]!r} is not a slug (letters, digits, '-' or '_')",
        )
    for field_name, value in (
        ("provider", instance.provider),
        ("instance_type", instance.name),
        ("gpu_name", instance.gpu_name),
        ("network", instance.network),
        ("interconnect", instance.interconnect),
        ("region", record.region),
        ("zone", record.zone),
    ):
        _check_text(record.location, field_name, value)
    for field_name, limit in NUMBER_LIMITS.items():
        value = getattr(instance, field_name)
        if value is not None and not -limit < value < limit:
            raise SourceRowError(
                record.location, field_name, f"{str(value)[:30]} is out of range (at most {limit - 1})"
            )


def _check_currencies(columns: _Columns) -> None:
    known = set(FxRate.objects.filter(base=BASE_CURRENCY).values_list("currency", flat=True)) | {
        BASE_CURRENCY
    }
    for currency, location in columns.first_location.items():
        if currency not in known:
            raise SourceRowError(
                location,
                "currency",
                f"unknown currency {currency!r}: no FX rate to {BASE_CURRENCY} is stored",
            )


def _ensure_catalog(columns: _Columns, result: IngestResult) -> np.ndarray:
    """Upsert providers, regions, instance types and offers; the offer id of each offer index."""
    providers = _ensure_providers({p for p, _ in columns.instances}, result)
    region_keys = {(providers[p].id, region) for p, _, region, _ in columns.offer_keys}
    regions = _ensure_regions(region_keys, result)
    instance_types = _ensure_instance_types(columns.instances, providers, result)
    offer_rows = []
    for provider, name, region, zone in columns.offer_keys:
        provider_id = providers[provider].id
        offer_rows.append((instance_types[(provider_id, name)].id, regions[(provider_id, region)].id, zone))
    offers = _ensure_offers(set(offer_rows), result)
    return np.array([offers[row].id for row in offer_rows], dtype=np.int64)


def _ensure_providers(slugs: set[str], result: IngestResult) -> dict[str, Provider]:
    """The providers by slug, creating new ones. Conflicts are skipped and the rows read back, so two
    concurrent first imports of a new provider both succeed (the catalog steps below do the same)."""
    existing = {p.slug: p for p in Provider.objects.filter(slug__in=slugs)}
    missing = [Provider(slug=slug, name=slug) for slug in sorted(slugs - set(existing))]
    if missing:
        Provider.objects.bulk_create(missing, ignore_conflicts=True)
        existing.update({p.slug: p for p in Provider.objects.filter(slug__in=[p.slug for p in missing])})
    result.catalog += ChangeCount(created=len(missing), unchanged=len(slugs) - len(missing))
    return existing


def _ensure_regions(keys: set[tuple[int, str]], result: IngestResult) -> dict[tuple, Region]:
    rows = [{"provider_id": p, "code": c} for p, c in sorted(keys)]
    count, by_key = upsert_by_natural_key(Region, ["provider_id", "code"], rows, concurrent=True)
    result.catalog += count
    return by_key


def _ensure_instance_types(
    instances: dict[tuple[str, str], InstanceTypeRecord], providers: dict[str, Provider], result: IngestResult
) -> dict[tuple, InstanceType]:
    resolver = GpuNameResolver()
    rows, unmapped, mapped = [], Counter(), set()
    for (provider_slug, _), inst in sorted(instances.items()):
        provider_id = providers[provider_slug].id
        gpu_id = resolver.resolve(provider_id, inst.gpu_name, inst.name, inst.gpu_count, inst.gpu_memory_gib)
        if gpu_id is None:
            unmapped[(provider_id, inst.gpu_name)] += 1
        else:
            mapped.add((provider_id, inst.gpu_name))
        rows.append(
            {
                "provider_id": provider_id,
                "name": inst.name,
                "gpu_id": gpu_id,
                "gpu_name": inst.gpu_name,
                "gpu_count": inst.gpu_count,
                "vcpus": inst.vcpus,
                "memory_gib": inst.memory_gib,
                "gpu_memory_gib": inst.gpu_memory_gib,
                "local_disk_gb": inst.local_disk_gb,
                "network": inst.network,
                "interconnect": inst.interconnect,
                "host_priced_separately": inst.host_priced_separately,
                "host_figures_lower_bound": inst.host_figures_lower_bound,
            }
        )
    _keep_stored_metadata(rows)
    count, by_key = upsert_by_natural_key(InstanceType, ["provider_id", "name"], rows, concurrent=True)
    result.catalog += count
    _record_unmapped(unmapped, mapped, providers, result)
    return by_key


METADATA_FIELDS = (
    "gpu_id",
    "vcpus",
    "memory_gib",
    "gpu_memory_gib",
    "local_disk_gb",
    "network",
    "interconnect",
)


def _keep_stored_metadata(rows: list[dict]) -> None:
    """A source that leaves a field empty does not know it: an import naming an existing instance type
    (a price file with only a name and a GPU count) keeps the catalog's vCPUs, memory, GPU model, etc."""
    stored = {
        (row["provider_id"], row["name"]): row
        for row in InstanceType.objects.filter(
            provider_id__in={r["provider_id"] for r in rows}, name__in={r["name"] for r in rows}
        ).values("provider_id", "name", *METADATA_FIELDS)
    }
    for row in rows:
        before = stored.get((row["provider_id"], row["name"]))
        if before is None:
            continue
        for name in METADATA_FIELDS:
            if row[name] in (None, "") and before[name] not in (None, ""):
                row[name] = before[name]


def _record_unmapped(
    unmapped: Counter, mapped: set[tuple[int, str]], providers: dict[str, Provider], result: IngestResult
) -> None:
    """List the names no alias maps; drop the listing of a name an alias added since then now maps
    (a name mapped on one instance type and not on another, by an instance-type pattern, stays listed)."""
    now_mapped = mapped - set(unmapped)
    listed = UnmappedGpuName.objects.filter(
        provider_id__in={pid for pid, _ in now_mapped}, name__in={name for _, name in now_mapped}
    ).values_list("pk", "provider_id", "name")
    UnmappedGpuName.objects.filter(pk__in=[pk for pk, *key in listed if tuple(key) in now_mapped]).delete()
    slug_by_id = {p.id: slug for slug, p in providers.items()}
    rows = [{"provider_id": pid, "name": name, "rows_seen": n} for (pid, name), n in sorted(unmapped.items())]
    upsert_by_natural_key(UnmappedGpuName, ["provider_id", "name"], rows, concurrent=True)
    result.unmapped_gpu_names.update({f"{slug_by_id[pid]}:{name}": n for (pid, name), n in unmapped.items()})


def _ensure_offers(keys: set[tuple[int, int, str]], result: IngestResult) -> dict[tuple, Offer]:
    rows = [{"instance_type_id": i, "region_id": g, "zone": z} for i, g, z in sorted(keys)]
    count, by_key = upsert_by_natural_key(
        Offer, ["instance_type_id", "region_id", "zone"], rows, concurrent=True
    )
    result.catalog += count
    return by_key


@dataclass
class _Batch:
    """The rows to insert, with their offer ids and guard-rail statuses resolved."""

    columns: _Columns
    offer_id: np.ndarray  # per row
    status: np.ndarray  # per row: "published" | "suspect"
    added: int = 0
    changed: int = 0

    @classmethod
    def build(cls, columns: _Columns, offer_id_by_index: np.ndarray) -> _Batch:
        offer_id = offer_id_by_index[np.asarray(columns.offer_index, dtype=np.int64)]
        reference, reference_at = _current_prices(columns, offer_id_by_index)
        amount = _amounts(columns)
        added, changed = _changes(columns, amount, reference, reference_at)
        return cls(columns, offer_id, _statuses(columns, amount, reference), added, changed)

    def __len__(self) -> int:
        return len(self.columns.amount)


def _amounts(columns: _Columns) -> np.ndarray:
    return np.fromiter((float(a) for a in columns.amount), dtype=np.float64, count=len(columns.amount))


def _statuses(columns: _Columns, amount: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """'suspect' where a price is over 5× or under 1/5 of its reference, else 'published'.
    `amount` is each row's price, `reference` the current price per series (NaN where none)."""
    series = np.asarray(columns.series_index, dtype=np.int64)
    batch_median = pd.Series(amount).groupby(series).transform("median").to_numpy()
    ref = reference[series]
    ref = np.where(np.isnan(ref), batch_median, ref)
    suspect = (amount > SUSPECT_RATIO * ref) | (amount * SUSPECT_RATIO < ref)
    return np.where(suspect, PriceStatus.SUSPECT.value, PriceStatus.PUBLISHED.value)


def _current_prices(columns: _Columns, offer_id_by_index: np.ndarray) -> tuple[np.ndarray, list]:
    """The current published price of each series before this batch (NaN for a new series) and the
    time it was observed (None for a new series)."""
    series_by_key = {
        (int(offer_id_by_index[offer_index]), model, payment, kind): code
        for (offer_index, model, payment, kind), code in columns.series_keys.items()
    }
    reference = np.full(len(series_by_key), np.nan)
    reference_at: list = [None] * len(series_by_key)
    rows = current_price_observations(offer_id__in={key[0] for key in series_by_key}).values_list(
        "offer_id", "pricing_model", "payment_option", "commitment_kind", "amount_per_hour", "observed_at"
    )
    for offer_id, model, payment, kind, amount, observed_at in rows:
        code = series_by_key.get((offer_id, model, payment, kind))
        if code is not None:
            reference[code], reference_at[code] = float(amount), observed_at
    return reference, reference_at


def _changes(
    columns: _Columns, amount: np.ndarray, reference: np.ndarray, reference_at: list
) -> tuple[int, int]:
    """(added, changed) among the rows newer than their series' current price: a row is added when
    its series had no price before it, changed when it differs from the price before it (the current
    one, then the batch's previous row). Rows at or before the current price are known history."""
    count = len(columns.amount)
    series = np.asarray(columns.series_index, dtype=np.int64)
    at = np.fromiter((moment.timestamp() for moment in columns.observed_at), dtype=np.float64, count=count)
    before = np.array([np.nan if moment is None else moment.timestamp() for moment in reference_at])[series]
    newer = np.flatnonzero(np.isnan(before) | (at > before))
    order = newer[np.lexsort((at[newer], series[newer]))]  # by series, then time (lexsort is stable)
    ordered_series, amount = series[order], amount[order]
    first = np.ones(len(order), dtype=bool)
    first[1:] = ordered_series[1:] != ordered_series[:-1]
    previous = np.empty(len(order))
    previous[1:] = amount[:-1]
    previous[first] = reference[ordered_series[first]]
    known = ~np.isnan(previous)
    return int(np.count_nonzero(~known)), int(np.count_nonzero(known & (previous != amount)))


def _insert_observations(batch: _Batch, refresh, result: IngestResult) -> None:
    refresh_id = refresh.pk if refresh is not None else None
    if connection.vendor == "postgresql":
        inserted, suspect = _insert_with_copy(batch, refresh_id)
    else:
        inserted, suspect = _insert_with_orm(batch, refresh_id)
    result.inserted += inserted
    result.suspect += suspect
    result.prices_added += batch.added
    result.prices_changed += batch.changed
    result.unchanged += len(batch) - inserted


# Binary COPY: every field travels typed, so no text (a file name holding a tab, a newline, a
# backslash or "\\N") can split a row or forge a field, and nothing is formatted or escaped per row.
COPY_COLUMNS = (
    "offer_id",
    "pricing_model",
    "payment_option",
    "commitment_kind",
    "amount_per_hour",
    "upfront_amount",
    "recurring_per_hour",
    "currency",
    "observed_at",
    "source",
    "status",
    "refresh_id",
    "recorded_at",
)
COPY_TYPES = (
    "int8",
    "text",
    "text",
    "text",
    "numeric",
    "numeric",
    "numeric",
    "text",
    "timestamptz",
    "text",
    "text",
    "int8",
    "timestamptz",
)


def _insert_with_copy(batch: _Batch, refresh_id: int | None) -> tuple[int, int]:
    """New prices only (the usual first load): COPY straight into the table. Otherwise, or if the
    batch repeats a key within itself, COPY into a staging table and merge, skipping stored keys."""
    if not _overlaps_stored_prices(batch):
        try:
            with transaction.atomic():  # a savepoint: a duplicate key inside the batch falls through
                return _copy_into_table(batch, refresh_id)
        except IntegrityError:
            pass
    return _stage_and_merge(batch, refresh_id)


def _overlaps_stored_prices(batch: _Batch) -> bool:
    times = batch.columns.observed_at
    return PriceObservation.objects.filter(
        offer_id__in={int(i) for i in np.unique(batch.offer_id)},
        observed_at__gte=min(times),
        observed_at__lte=max(times),
    ).exists()


def _copy_into_table(batch: _Batch, refresh_id: int | None) -> tuple[int, int]:
    table = PriceObservation._meta.db_table
    with connection.cursor() as cursor, connection.wrap_database_errors:  # psycopg errors → Django's
        _copy_rows(cursor, table, batch, refresh_id, timezone.now())
    return len(batch), int(np.count_nonzero(batch.status == PriceStatus.SUSPECT.value))


def _stage_and_merge(batch: _Batch, refresh_id: int | None) -> tuple[int, int]:
    """COPY into a temporary table, then one conflict-skipping INSERT that counts what it wrote."""
    table = PriceObservation._meta.db_table
    with connection.cursor() as cursor, connection.wrap_database_errors:
        cursor.execute(
            "CREATE TEMPORARY TABLE price_stage (offer_id bigint, pricing_model text, payment_option text,"
            " commitment_kind text, amount_per_hour numeric(18, 6), upfront_amount numeric(18, 6),"
            " recurring_per_hour numeric(18, 6), currency text, observed_at timestamptz, source text, status text,"
            " refresh_id bigint, recorded_at timestamptz) ON COMMIT DROP"
        )
        _copy_rows(cursor, "price_stage", batch, refresh_id, timezone.now())
        cursor.execute(
            f"WITH written AS (INSERT INTO {table} ({', '.join(COPY_COLUMNS)})"  # noqa: S608 (table from model meta)
            f" SELECT {', '.join(COPY_COLUMNS)} FROM price_stage"
            " ON CONFLICT (offer_id, pricing_model, payment_option, commitment_kind, observed_at, source) DO NOTHING"
            " RETURNING status)"
            " SELECT count(*), count(*) FILTER (WHERE status = %s) FROM written",
            [PriceStatus.SUSPECT.value],
        )
        inserted, suspect = cursor.fetchone()
        cursor.execute("DROP TABLE price_stage")
    return inserted, suspect


def _copy_rows(cursor, table: str, batch: _Batch, refresh_id: int | None, recorded_at: dt.datetime) -> None:
    """Binary COPY of the batch into `table`, straight from the parsers' columns."""
    c = batch.columns
    count = len(batch)
    copy_sql = f"COPY {table} ({', '.join(COPY_COLUMNS)}) FROM STDIN (FORMAT BINARY)"
    with cursor.cursor.copy(copy_sql) as copy:
        copy.set_types(COPY_TYPES)
        rows = zip(
            batch.offer_id.tolist(),
            c.pricing_model,
            c.payment_option,
            c.commitment_kind,
            c.amount,
            c.upfront,
            c.recurring,
            c.currency,
            c.observed_at,
            c.source,
            batch.status.tolist(),
            repeat(refresh_id, count),
            repeat(recorded_at, count),
            strict=True,
        )
        write_row = copy.write_row
        for row in rows:
            write_row(row)


def _insert_with_orm(batch: _Batch, refresh_id: int | None) -> tuple[int, int]:
    c = batch.columns
    key_columns = ["offer_id", "pricing_model", "payment_option", "commitment_kind", "observed_at", "source"]
    offer_ids = batch.offer_id.tolist()
    existing = set(PriceObservation.objects.filter(offer_id__in=set(offer_ids)).values_list(*key_columns))
    new, seen = [], set()
    for i, offer_id in enumerate(offer_ids):
        key = (
            offer_id,
            c.pricing_model[i],
            c.payment_option[i],
            c.commitment_kind[i],
            c.observed_at[i],
            c.source[i],
        )
        if key in existing or key in seen:
            continue
        seen.add(key)
        new.append(
            PriceObservation(
                offer_id=offer_id,
                pricing_model=key[1],
                payment_option=key[2],
                commitment_kind=key[3],
                observed_at=key[4],
                source=key[5],
                amount_per_hour=c.amount[i],
                upfront_amount=c.upfront[i],
                recurring_per_hour=c.recurring[i],
                currency=c.currency[i],
                status=batch.status[i],
                refresh_id=refresh_id,
            )
        )
    PriceObservation.objects.bulk_create(new, batch_size=2000)
    return len(new), sum(o.status == PriceStatus.SUSPECT for o in new)


def ingest_spot_advisories(
    records: Iterable[SpotAdvisoryRecord], provider_slug: str = "aws"
) -> tuple[int, int, int]:
    """Upsert advisories by (provider, region, instance type, date); returns seen, written, unchanged."""
    count = spot_advisories_upsert(records, provider_slug=provider_slug)
    return count.created + count.updated + count.unchanged, count.changed, count.unchanged


@transaction.atomic
def spot_advisories_upsert(
    records: Iterable[SpotAdvisoryRecord], *, provider_slug: str = "aws"
) -> ChangeCount:
    """Upsert advisories by (provider, region, instance type, date), all or nothing: the records are read
    in full (a malformed one raises before anything is written), then written as one set."""
    provider, _ = Provider.objects.get_or_create(slug=provider_slug, defaults={"name": provider_slug})
    rows = [
        {
            "provider_id": provider.id,
            "region_code": r.region,
            "instance_type_name": r.instance_type,
            "observed_at": r.observed_at,
            "interruption_band": r.interruption_band,
            "interruption_label": r.interruption_label,
            "savings_pct": r.savings_pct,
            "source": r.source,
        }
        for r in records
    ]
    # observed_at first: the upsert reads the stored rows matching the first key field, and a batch is
    # one snapshot date, so this reads that day's rows rather than every advisory ever stored.
    keys = ["observed_at", "provider_id", "region_code", "instance_type_name"]
    count, _ = upsert_by_natural_key(SpotAdvisory, keys, rows)
    return count
