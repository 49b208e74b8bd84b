"""Data versions: the one way every cache goes stale (gpuledger/versioned_cache.py).

Each kind of data that a cache reads has a version, and each cache key names the versions its entry
was built from. A write to the data bumps its version inside the writer's transaction, so the bump
commits or rolls back with the data it describes: a reader never finds new data under an old key, nor
an old entry under a new key. No entry has to be found and deleted, by this process or another (a
drop could not reach another process's memory during a Redis outage), and no entry's correctness
rests on its time to live.

The versions:

* ``price``: prices, FX rates and the catalog (pricing/price_version.py keeps its own row and also
  names the newest observation; registered here by PricingConfig.ready);
* ``billing``: spend and utilization imports (every write of their rows creates or deletes a
  BillingImport), budgets and budget alerts;
* ``access``: users, role groups, teams and their members, spend grants: who may see what, and the
  names the pages show for owners and teams;
* ``workloads``: stored workloads and their saved answers.

Writes reach a version through two doors, as for prices: single-row saves and deletes through the
model signals that ``bump_on_write`` connects (in each app's ready()), and bulk writes (``bulk_create``,
``QuerySet.update``, raw SQL) through an explicit ``bump_version`` call next to the write.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable

from django.db import connection
from django.db.models import F
from django.db.models.signals import m2m_changed, post_delete, post_save
from django.utils import timezone

from gpuledger.request_memo import memoized

STORED_VERSIONS = ("access", "billing", "workloads")
_readers: dict[str, Callable[[], str]] = {}


def register_version_reader(name: str, reader: Callable[[], str]) -> None:
    """A version kept outside the DataVersion table (the price version: PricingConfig.ready)."""
    _readers[name] = reader


def bump_version(*names: str) -> None:
    """Give these versions a new number and token (in the caller's transaction, if any)."""
    from gpuledger.accounts.models import DataVersion

    for name in names:
        if name not in STORED_VERSIONS:
            raise KeyError(f"unknown data version {name!r} (stored: {', '.join(STORED_VERSIONS)})")
        token, now = uuid.uuid4().hex, timezone.now()
        updated = DataVersion.objects.filter(name=name).update(
            number=F("number") + 1, token=token, changed_at=now
        )
        if not updated:  # a new or flushed database: the row comes with its first write
            DataVersion.objects.bulk_create(
                [DataVersion(name=name, number=1, token=token, changed_at=now)], ignore_conflicts=True
            )


def versions_key(names: Iterable[str]) -> str:
    """The current versions of `names` as one short text, with the database they describe (several
    databases may share one Redis). The stored versions are read in one query, once per read request
    (gpuledger/request_memo.py): every part of a page is keyed to the same versions."""
    stored = memoized("data_versions", _read_stored_versions)
    parts = [str(connection.settings_dict.get("NAME") or "")]  # SQLite names its database by a Path
    for name in sorted(set(names)):
        if name in _readers:
            parts.append(f"{name}={_readers[name]()}")
        elif name in STORED_VERSIONS:
            parts.append(f"{name}={stored.get(name, '0')}")
        else:
            raise KeyError(f"unknown data version {name!r}")
    return ":".join(parts)


def _read_stored_versions() -> dict[str, str]:
    from gpuledger.accounts.models import DataVersion

    table = connection.ops.quote_name(DataVersion._meta.db_table)
    with connection.cursor() as cursor:  # a plain cursor: no queryset to compile on every request
        cursor.execute(f"SELECT name, {connection.ops.quote_name('number')}, token FROM {table}")  # noqa: S608 (model table)
        return {name: f"{number}.{token}" for name, number, token in cursor.fetchall()}


def bump_on_write(name: str, *models, deletes: bool = True, skip: Callable[..., bool] | None = None) -> None:
    """Bump version `name` whenever one of `models` is saved or (with `deletes`) deleted through the ORM.
    `skip(instance, **signal_kwargs)` leaves out saves that change nothing a cache reads (a login's
    `last_login`). No delete receiver on a model with many rows per parent: Django would then load every
    row a cascade deletes to send it the signal."""

    def bump(sender, instance=None, **kwargs) -> None:
        if skip is None or not skip(instance, **kwargs):
            bump_version(name)

    for model in models:
        uid = f"data-version:{name}:{model._meta.label}"
        post_save.connect(bump, sender=model, dispatch_uid=uid + ":save", weak=False)
        if deletes:
            post_delete.connect(bump, sender=model, dispatch_uid=uid + ":delete", weak=False)


def bump_on_members_change(name: str, *throughs) -> None:
    """Bump version `name` when a many-to-many relation (its `through` model) gains or loses rows."""

    def bump(sender, action: str, **kwargs) -> None:
        if action in ("post_add", "post_remove", "post_clear"):
            bump_version(name)

    for through in throughs:
        uid = f"data-version:{name}:m2m:{through._meta.label}"
        m2m_changed.connect(bump, sender=through, dispatch_uid=uid, weak=False)
