"""Write one billing file's normalized rows as SpendRecords: idempotent, all or nothing, in chunks.

Each chunk is enriched (catalog, tags, hours), keyed (enrich.row_keys), checked against the stored
keys and the new rows bulk-inserted; the whole file runs in one transaction, so a bad cell in the
last chunk leaves nothing of the file behind. Mixed billing currencies need a stored FX rate for
every currency but the base, since a review can only add them up converted.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

import pandas as pd
from django.conf import settings
from django.db import connection, transaction

from pricing.fx import fx_rates
from pricing.models import InstanceType
from procurement.billing.enrich import CatalogEntry, enrich, row_keys
from procurement.billing.models import BillingImport, SpendRecord
from procurement.billing.records import MAX_ROWS_PER_FILE, BillingFileError, TagMapping

KEY_QUERY_BATCH = 900  # under SQLite's 999 bound on query parameters
INSERT_BATCH = 2000


@dataclass
class ImportResult:
    inserted: int = 0
    unchanged: int = 0
    rejected: int = 0
    rows_seen: int = 0
    unmapped: Counter = field(default_factory=Counter)
    errors: list[str] = field(default_factory=list)
    imports: list[int] = field(default_factory=list)

    def line(self) -> str:
        return f"inserted {self.inserted}, unchanged {self.unchanged}, rejected {self.rejected}"

    def add(self, other: ImportResult) -> None:
        self.inserted += other.inserted
        self.unchanged += other.unchanged
        self.rejected += other.rejected
        self.rows_seen += other.rows_seen
        self.unmapped.update(other.unmapped)
        self.errors += other.errors
        self.imports += other.imports


def catalog_entries() -> dict[tuple[str, str], CatalogEntry]:
    """(provider slug, instance type) -> (GPU id, slug, GPUs per instance) for every GPU-mapped type."""
    rows = InstanceType.objects.filter(gpu__isnull=False).values_list(
        "provider__slug", "name", "gpu_id", "gpu__slug", "gpu_count"
    )
    return {(provider, name): (gpu_id, slug, count) for provider, name, gpu_id, slug, count in rows}


def tag_mapping() -> TagMapping:
    return TagMapping.from_settings(getattr(settings, "BILLING_TAG_MAPPING", None))


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def store_chunks(
    chunks: Iterable[pd.DataFrame],
    *,
    file_name: str,
    source_format: str,
    provider: str = "",
    sha256: str = "",
    user=None,
    progress: Callable[[int], None] | None = None,
    location: str = "",
) -> ImportResult:
    """Store every chunk or none (raises BillingFileError, nothing written)."""
    result = ImportResult()
    catalog, tags = catalog_entries(), tag_mapping()
    convertible = set(fx_rates(base="USD"))
    currencies_seen: dict[str, int] = {}
    seen: dict[int, int] = {}
    with transaction.atomic():
        billing_import = BillingImport.objects.create(
            source_format=source_format, file_name=file_name[:500], file_sha256=sha256, provider=provider,
            imported_by=user if getattr(user, "is_authenticated", False) else None,
        )  # fmt: skip
        for chunk in chunks:
            _check_currency_mix(chunk, currencies_seen, convertible, location or file_name)
            rows = enrich(chunk, catalog=catalog, tags=tags, unmapped=result.unmapped)
            keys = row_keys(rows, seen)
            _insert_new(rows, keys, billing_import, result)
            result.rows_seen += len(rows)
            if result.rows_seen > MAX_ROWS_PER_FILE:
                raise BillingFileError(
                    location or file_name, f"over {MAX_ROWS_PER_FILE:,} rows in one file; split the export"
                )
            if progress:
                progress(len(rows))
        billing_import.rows_seen = result.rows_seen
        billing_import.inserted, billing_import.unchanged = result.inserted, result.unchanged
        billing_import.unmapped_instance_types = dict(result.unmapped.most_common())
        billing_import.save()
    result.imports.append(billing_import.pk)
    return result


def _check_currency_mix(chunk: pd.DataFrame, seen: dict[str, int], convertible: set[str], file: str) -> None:
    for currency in pd.unique(chunk["currency"]):
        if currency not in seen:
            seen[currency] = int(chunk.loc[chunk["currency"] == currency, "source_row"].iloc[0])
    if len(seen) > 1:
        for currency, row in seen.items():
            if currency not in convertible:
                raise BillingFileError(
                    file,
                    f"mixed billing currencies ({', '.join(sorted(seen))}) and no stored FX rate for "
                    f"{currency} -> USD; add one (admin: FX rates) before importing",
                    row=row,
                    column="BillingCurrency",
                )


def _insert_new(
    rows: pd.DataFrame, keys: list[str], billing_import: BillingImport, result: ImportResult
) -> None:
    existing: set[str] = set()
    table = connection.ops.quote_name(SpendRecord._meta.db_table)
    with connection.cursor() as cursor:  # plain SQL: the ORM prepares each of a million keys on its own
        for start in range(0, len(keys), KEY_QUERY_BATCH):
            batch = keys[start : start + KEY_QUERY_BATCH]
            marks = ", ".join(["%s"] * len(batch))
            cursor.execute(f"SELECT row_key FROM {table} WHERE row_key IN ({marks})", batch)  # noqa: S608
            existing.update(key for (key,) in cursor.fetchall())
    fresh = []
    for position, key in enumerate(keys):
        if key in existing:
            result.unchanged += 1
            continue
        existing.add(key)
        fresh.append(position)
    if fresh:
        new_rows = rows.iloc[fresh]
        _bulk_insert(new_rows, [keys[i] for i in fresh], billing_import.pk)
    result.inserted += len(fresh)


# Column-wise values for one INSERT per batch. Django's bulk_create prepares every value through its
# field (tens of microseconds each) and, on SQLite, splits the batch at 999 parameters (27 rows here);
# a million-row file needs neither. Values are adapted the way the fields would: text cut to the
# field's length, datetimes through the backend's adapter, JSON dumped.
_TEXT = {
    "billing_account_id": 200, "sub_account_id": 200, "sub_account_name": 200, "region": 100,
    "availability_zone": 100, "resource_id": 500, "resource_type": 200, "service_category": 100, "sku_id": 200,
    "instance_type": 150, "commitment_discount_id": 500, "consumed_unit": 50, "provider": 100,
}  # fmt: skip


def _texts(rows: pd.DataFrame, column: str) -> list:
    # to_numpy(object) first: iterating an Arrow-backed string column element by element is slow
    return rows[column].to_numpy(dtype=object).tolist()


def _times(rows: pd.DataFrame, column: str) -> list:
    """Datetimes as the backend stores them: on SQLite the naive-UTC text Django writes, vectorized."""
    values = rows[column]
    if connection.vendor == "sqlite" and (values.dropna().dt.microsecond == 0).all():
        text = values.dt.tz_convert("UTC").dt.strftime("%Y-%m-%d %H:%M:%S")
        return [None if pd.isna(v) else v for v in text.to_numpy(dtype=object)]
    adapt = connection.ops.adapt_datetimefield_value
    return [None if pd.isna(v) else adapt(v.to_pydatetime()) for v in values]


def _decimals(rows: pd.DataFrame, column: str) -> list:
    return [Decimal(v) if v != "" else None for v in _texts(rows, column)]


def _bulk_insert(rows: pd.DataFrame, keys: list[str], import_id: int) -> None:
    count = len(rows)
    columns = {
        "billing_import_id": [import_id] * count, "row_key": keys, "source_row": rows["source_row"].astype(int).tolist(),
        "charge_period_start": _times(rows, "charge_period_start"), "charge_period_end": _times(rows, "charge_period_end"),
        "billing_period_start": _times(rows, "billing_period_start"), "charge_category": _texts(rows, "charge_category"),
        "is_correction": rows["is_correction"].astype(bool).tolist(), "gpu_id": rows["gpu_id"].tolist(),
        "gpus_per_instance": rows["gpus_per_instance"].tolist(), "pricing_category": _texts(rows, "pricing_category"),
        "commitment_status": _texts(rows, "commitment_status"), "consumed_quantity": _decimals(rows, "consumed_quantity"),
        "instance_hours": rows["instance_hours"].tolist(), "gpu_hours": rows["gpu_hours"].tolist(),
        "billed_cost": _decimals(rows, "billed_cost"), "effective_cost": _decimals(rows, "effective_cost"),
        "list_cost": _decimals(rows, "list_cost"), "contracted_cost": _decimals(rows, "contracted_cost"),
        "currency": _texts(rows, "currency"), "team": _texts(rows, "team"), "project": _texts(rows, "project"),
        "environment": _texts(rows, "environment"), "tags": _tag_texts(rows["tags"]),
    }  # fmt: skip
    for name, length in _TEXT.items():
        columns[name] = [str(v)[:length] for v in _texts(rows, name)]
    table = SpendRecord._meta.db_table
    names = list(columns)
    quoted = ", ".join(connection.ops.quote_name(n) for n in names)
    placeholders = ", ".join(["%s"] * len(names))
    sql = f"INSERT INTO {connection.ops.quote_name(table)} ({quoted}) VALUES ({placeholders})"  # noqa: S608 (names from the model)
    values = list(zip(*(columns[n] for n in names), strict=True))
    with connection.cursor() as cursor:
        for start in range(0, len(values), INSERT_BATCH):
            cursor.executemany(sql, values[start : start + INSERT_BATCH])


def _tag_texts(tags: pd.Series) -> list[str]:
    """JSON of each row's tags; rows usually share a few tag sets, so each distinct set is dumped once."""
    cache: dict[int, str] = {}
    out = []
    for value in tags.to_numpy(dtype=object):
        key = id(value)
        if key not in cache:
            cache[key] = json.dumps(value, sort_keys=True)
        out.append(cache[key])
    return out


def pull_cost_explorer(page_iter, *, start, end, tag: str = "") -> ImportResult:
    """Store a Cost Explorer pull, replacing the earlier pulls' rows of the same days (Cost Explorer
    revises estimated days); an unchanged row is kept and counted as unchanged."""
    import datetime as dt

    from procurement.billing.cost_explorer import normalized_rows

    frame = normalized_rows(list(page_iter), tag=tag)
    name = f"cost-explorer {start}..{end}" + (f" by tag {tag}" if tag else "")
    with transaction.atomic():
        keys = set(row_keys(frame, {})) if len(frame) else set()
        stale = SpendRecord.objects.filter(
            billing_import__source_format="cost_explorer",
            charge_period_start__gte=dt.datetime.combine(start, dt.time(), tzinfo=dt.UTC),
            charge_period_start__lt=dt.datetime.combine(end, dt.time(), tzinfo=dt.UTC),
        ).exclude(row_key__in=keys)
        stale.delete()
        return store_chunks(
            [frame] if len(frame) else [], file_name=name, source_format="cost_explorer", provider="aws"
        )
