"""Celery tasks of the pricing app: thin wrappers that take names or ids and call one service each.

Refreshes fan out as a group of one task per (source, region). Only transient errors (throttling,
dropped connections: ``TransientSourceError`` after the in-call retries) are retried, with
exponential backoff, jitter and a maximum. Every other error fails the task at once; the run's
PriceRefresh row says why. Tasks are idempotent (natural-key upserts), so late acks are safe.
"""

from __future__ import annotations

from celery import group, shared_task

from pricing.catalog import catalog_load
from pricing.providers.retry import TransientSourceError
from pricing.sources.refresh import refresh_run
from pricing.sources.registry import SOURCES, expand_sources
from scheduler.limits import REFRESH_SOFT_TIME_LIMIT_S, REFRESH_TIME_LIMIT_S


@shared_task(name="pricing.load_bundled_catalog", acks_late=True)  # idempotent: a rerun changes nothing
def load_bundled_catalog() -> dict:
    """Load the bundled catalog; returns the change counts (JSON-serializable)."""
    report = catalog_load()
    return {
        "changes": {name: count.changed for name, count in report.changes.items()},
        "prices_inserted": report.prices.inserted if report.prices else 0,
        "total_changes": report.total_changes,
    }


@shared_task(name="pricing.refresh_prices", acks_late=True)  # re-queued refreshes skip on their lock
def refresh_prices(source: str, regions: list[str] | None = None) -> dict:
    """Queue one refresh per (source, region); `source` may be a group such as "aws". A source that is off
    (its setting unset) queues nothing and says why."""
    sources = expand_sources(source)
    off = [f"{s.name}: {s.off_reason}" for s in sources if not s.enabled()]
    jobs = [(s.name, region) for s in sources if s.enabled() for region in (regions or s.regions())]
    group(refresh_source_region.si(name, region) for name, region in jobs).apply_async()
    return {"queued": [f"{name}:{region}" for name, region in jobs]} | ({"off": off} if off else {})


@shared_task(
    name="pricing.refresh_source_region",
    autoretry_for=(TransientSourceError,),
    retry_backoff=30,
    retry_backoff_max=15 * 60,
    retry_jitter=True,
    max_retries=5,
    acks_late=True,
    soft_time_limit=REFRESH_SOFT_TIME_LIMIT_S,
    time_limit=REFRESH_TIME_LIMIT_S,
)
def refresh_source_region(source: str, region: str) -> dict:
    """Refresh one source in one region; returns what its PriceRefresh row recorded. A source switched
    off since the job was queued does nothing (no row: nothing ran)."""
    if not SOURCES[source].enabled():
        return {"status": "off", "source": source}
    refresh = refresh_run(source, region)
    return {
        "refresh_id": refresh.pk,
        "status": refresh.status,
        "rows_inserted": refresh.rows_inserted,
        "rows_unchanged": refresh.rows_unchanged,
        "rows_rejected": refresh.rows_rejected,
        "rows_suspect": refresh.rows_suspect,
        "rows_added": refresh.rows_added,
        "rows_changed": refresh.rows_changed,
        "rows_refused": refresh.rows_refused,
    }
