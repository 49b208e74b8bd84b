"""Idempotent bulk upserts by natural key, counting what actually changed.

Importers call this so that running them twice changes nothing the second time, and so that the
second run can say so: only rows whose values differ are written.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from django.db import models


@dataclass
class ChangeCount:
    created: int = 0
    updated: int = 0
    unchanged: int = 0

    @property
    def changed(self) -> int:
        return self.created + self.updated

    def __add__(self, other: ChangeCount) -> ChangeCount:
        return ChangeCount(
            self.created + other.created, self.updated + other.updated, self.unchanged + other.unchanged
        )


def upsert_by_natural_key(
    model: type[models.Model], key_fields: Sequence[str], rows: Iterable[dict], *, concurrent: bool = False
) -> tuple[ChangeCount, dict[tuple, models.Model]]:
    """Create missing rows and update differing ones; return counts and every row by its key.

    Key fields that are foreign keys are given as `<name>_id` values. With `concurrent`, a row another
    transaction created meanwhile (two first imports of a new provider) is not an IntegrityError: the
    insert skips conflicts and the created rows are read back, the other transaction's included.
    """
    rows = list(rows)
    existing = {
        tuple(getattr(obj, f) for f in key_fields): obj for obj in _candidates(model, key_fields, rows)
    }
    count = ChangeCount()
    to_create, to_update, update_fields = [], [], set()
    for row in rows:
        key = tuple(row[f] for f in key_fields)
        obj = existing.get(key)
        if obj is None:
            obj = model(**row)
            to_create.append(obj)
            existing[key] = obj
            continue
        changed = [f for f, value in row.items() if f not in key_fields and getattr(obj, f) != value]
        if changed:
            for f in changed:
                setattr(obj, f, row[f])
            update_fields.update(changed)
            to_update.append(obj)
        else:
            count.unchanged += 1
    if to_create and concurrent:
        model.objects.bulk_create(to_create, batch_size=1000, ignore_conflicts=True)
        created_keys = {tuple(getattr(obj, f) for f in key_fields) for obj in to_create}
        for obj in _candidates(
            model, key_fields, [dict(zip(key_fields, k, strict=True)) for k in created_keys]
        ):
            key = tuple(getattr(obj, f) for f in key_fields)
            if key in created_keys:
                existing[key] = obj  # with its primary key, which an ignore-conflicts insert does not set
    elif to_create:
        model.objects.bulk_create(to_create, batch_size=1000)
    if to_update:
        model.objects.bulk_update(to_update, sorted(update_fields), batch_size=1000)
    count.created, count.updated = len(to_create), len(to_update)
    if count.changed:
        _bulk_written(model)
    return count, existing


def _bulk_written(model: type[models.Model]) -> None:
    """Bulk writes send no signals: a catalog or price model written here bumps the price version
    itself, so cached offer tables keyed by it are never served again (pricing/price_version.py)."""
    from pricing.price_version import VERSIONED_MODELS, price_version_bump

    if model._meta.app_label == "pricing" and model.__name__ in VERSIONED_MODELS:
        price_version_bump()


def _candidates(model, key_fields, rows):
    """Existing rows that may match: filtered on the first key field to keep the query small."""
    first = key_fields[0]
    values = {row[first] for row in rows}
    if not values:
        return model.objects.none()
    return model.objects.filter(**{f"{first}__in": values})
