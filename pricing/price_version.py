"""The price version: what a cached offer table is keyed by (procurement/offer_cache.py).

Every write that can change a ranking's input bumps it inside the writer's transaction, so the bump
commits or rolls back with the data it describes and a reader never sees new data under an old key for
long, nor an old table under a new key. Writes go through two doors:

* single-row saves and deletes (admin edits, ``create``, ``get_or_create``) through the model signals
  connected in ``PricingConfig.ready``;
* bulk writes (COPY, ``bulk_create``, ``bulk_update``, ``QuerySet.update``) through explicit calls to
  ``price_version_bump()`` in pricing/ingest.py, gpuledger/upsert.py and pricing/publishing.py.

The key also carries the newest price observation's id, which one index lookup reads: a bulk insert of
prices that some future path forgot to bump for still changes the key.
"""

from __future__ import annotations

import uuid

from django.db import connection
from django.db.models import F
from django.db.models.signals import post_delete, post_save
from django.utils import timezone

from gpuledger.request_memo import memoized

# The models whose rows feed offer_frame(), the ranking context (GPU datasheets, storage rates, FX) or
# its spot price histories. A change to any of them changes the price version.
VERSIONED_MODELS = (
    "Provider",
    "Region",
    "GpuModel",
    "GpuAlias",
    "InstanceType",
    "Offer",
    "PriceObservation",
    "FxRate",
    "StorageRate",
    "SpotAdvisory",
    "SuspectPricePublication",
)
VERSION_ROW = 1


def price_version_bump() -> None:
    """Give the price version a new number and token (in the caller's transaction, if any)."""
    from pricing.models import PriceVersion

    token, now = uuid.uuid4().hex, timezone.now()
    updated = PriceVersion.objects.filter(pk=VERSION_ROW).update(
        number=F("number") + 1, token=token, changed_at=now
    )
    if not updated:  # a flushed test database: the row comes back with the first write
        PriceVersion.objects.bulk_create(
            [PriceVersion(pk=VERSION_ROW, number=1, token=token, changed_at=now)], ignore_conflicts=True
        )


def price_version_key() -> str:
    """The current price version as one short text (one query, once per read request: a page's parts
    are keyed to one version): number, token, newest observation id, and the database it describes
    (several databases may share one Redis)."""
    return memoized("price_version_key", _read_price_version_key)


def _read_price_version_key() -> str:
    from pricing.models import PriceObservation, PriceVersion

    version = PriceVersion._meta.db_table
    prices = PriceObservation._meta.db_table
    quote = connection.ops.quote_name
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT (SELECT {quote('number')} FROM {quote(version)} WHERE id = %s),"  # noqa: S608 (model tables)
            f" (SELECT token FROM {quote(version)} WHERE id = %s),"
            f" (SELECT MAX(id) FROM {quote(prices)})",
            [VERSION_ROW, VERSION_ROW],
        )
        number, token, newest = cursor.fetchone()
    database = connection.settings_dict.get("NAME") or ""
    return f"{database}:{number}:{token}:{newest}"


def _bump_on_change(sender, **kwargs) -> None:
    price_version_bump()


def connect_price_version_signals() -> None:
    from django.apps import apps

    for name in VERSIONED_MODELS:
        model = apps.get_model("pricing", name)
        uid = f"price_version:{name}"
        post_save.connect(_bump_on_change, sender=model, dispatch_uid=uid + ":save")
        post_delete.connect(_bump_on_change, sender=model, dispatch_uid=uid + ":delete")
