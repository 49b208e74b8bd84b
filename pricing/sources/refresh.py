"""Run one refresh of a price source in one region: lock, bookkeeping, fetch, ingest.

Every run leaves a PriceRefresh row (written outside the ingest transaction, so a failed run is
recorded too). The prices of a run go in as one transaction: a run that fails half-way leaves the
previous current prices exactly as they were. A second run of the same (source, region) while one
holds the lock exits at once with status "skipped" and says so in the row.

Every run of a source records rows seen, added, changed, unchanged, refused with reasons
(pricing.price_checks: the reader's own refusals plus the ingest's), its duration, and how many runs of
this source and region have failed in a row (three or more shows as failing on /status/).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from django.db import connection, transaction
from django.utils import timezone

from pricing.ingest import ingest_price_records, ingest_spot_advisories
from pricing.price_checks import NOT_POSITIVE, Refusals
from pricing.refresh_changes import (
    MAX_MOVES_KEPT,
    MOVE_SHARE,
    CoverageTap,
    coverage_lost,
    gpu_types_gone,
    price_moves,
)
from pricing.sources.registry import SOURCES, Source
from scheduler.failures import failures_before
from scheduler.limits import REFRESH_TIME_LIMIT_S
from scheduler.locks import LockUnavailable, refresh_lock
from scheduler.models import PriceRefresh, RefreshStatus
from scheduler.run_log import refresh_logged

Progress = Callable[[Iterable[Any]], Iterable[Any]]
ERROR_MAX_CHARS = 4000


def refresh_lock_ttl_s() -> int:
    """A lock outlives no run: it expires with the task's hard time limit (plus a margin)."""
    return REFRESH_TIME_LIMIT_S + 60


def refresh_run(
    source_name: str | Source,
    region: str,
    *,
    now: dt.datetime | None = None,
    progress: Progress = lambda rows: rows,
) -> PriceRefresh:
    """Refresh `source_name` (or a Source built by hand, e.g. from a file) in `region`; returns its
    PriceRefresh row. Errors are recorded, then raised."""
    source = source_name if isinstance(source_name, Source) else SOURCES[source_name]
    try:
        refresh = _locked_run(source, region, now, progress)
    except LockUnavailable as error:  # Redis down: the run did not start, and /status/ says so
        failed = PriceRefresh.objects.create(
            source=source.name,
            region=region,
            status=RefreshStatus.FAILED,
            finished_at=timezone.now(),
            error=f"{type(error).__name__}: {error}"[:ERROR_MAX_CHARS],
            failures_in_a_row=failures_before(source.name, region) + 1,
        )
        refresh_logged(failed)
        raise
    _recompute_decisions(refresh)
    return refresh


def _locked_run(source: Source, region: str, now: dt.datetime | None, progress: Progress) -> PriceRefresh:
    with refresh_lock(source.name, region, ttl_s=refresh_lock_ttl_s()) as acquired:
        if not acquired:
            skipped = PriceRefresh.objects.create(
                source=source.name,
                region=region,
                status=RefreshStatus.SKIPPED,
                finished_at=timezone.now(),
                error="Another refresh of this source and region holds the lock; this one did nothing.",
            )
            refresh_logged(skipped)
            return skipped
        refresh = PriceRefresh.objects.create(source=source.name, region=region)
        try:
            _run(source, region, refresh, now or timezone.now(), progress)
        except BaseException as error:  # SoftTimeLimitExceeded included: record it, then let Celery see it
            if not connection.in_atomic_block:
                # a session cut outside the ingest's transaction (a database restart while the records were
                # read) leaves a dead connection: the failure is recorded on a new one
                connection.close_if_unusable_or_obsolete()
            _finish(refresh, RefreshStatus.FAILED, error=f"{type(error).__name__}: {error}"[:ERROR_MAX_CHARS])
            raise
    return refresh


def _recompute_decisions(refresh: PriceRefresh) -> None:
    """New prices (or spot bands) can change stored recommendations and TCO studies: once this refresh is
    committed, queue their recomputation (procurement.tasks.recompute_soon: one for a burst of refreshes)."""
    if refresh.status == RefreshStatus.SUCCEEDED and refresh.rows_inserted:
        from procurement.tasks import recompute_soon

        transaction.on_commit(recompute_soon)


def _run(source: Source, region: str, refresh: PriceRefresh, now: dt.datetime, progress: Progress) -> None:
    fetch = source.fetch(region, now)
    records: Iterator[Any] = iter(progress(fetch.records))
    if source.kind == "spot_advisory":
        seen, inserted, unchanged = ingest_spot_advisories(records)
        refused = fetch.refusals  # rows out of range: refused one by one, the other bands land
        refresh.rows_seen, refresh.rows_inserted, refresh.rows_unchanged = (
            seen + refused.total,
            inserted,
            unchanged,
        )
        refresh.rows_rejected = refresh.rows_refused = refused.total
        refresh.refused_reasons = refused.as_json()
        _finish(refresh, RefreshStatus.SUCCEEDED)
        return
    # The reader's refusals (units, sizes) are known once its records are read: the ingest reads
    # them all before it writes anything, so reading them first here costs no more memory.
    tap = CoverageTap()
    rows = list(tap.tap(records))
    before = _current_prices(tap)
    refusals = Refusals()
    with transaction.atomic():  # the prices and what the source does after them land together
        result = ingest_price_records(rows, refresh=refresh, refusals=refusals)
        if source.after_ingest is not None:
            source.after_ingest(fetch, now)
    refusals.refuse_many(NOT_POSITIVE, fetch.stats.rejected, fetch.stats.rejected_locations)
    for reason, count in fetch.refusals.counts.items():
        refusals.refuse_many(reason, count, fetch.refusals.examples.get(reason, []))
    refresh.rows_seen = result.seen + fetch.stats.rejected + fetch.refusals.total
    refresh.rows_inserted = result.inserted
    refresh.rows_unchanged = result.unchanged
    refresh.rows_rejected = result.rejected + refusals.total
    refresh.rows_suspect = result.suspect
    refresh.rows_added, refresh.rows_changed = result.prices_added, result.prices_changed
    refresh.rows_refused, refresh.refused_reasons = refusals.total, refusals.as_json()
    refresh.skipped_reasons = dict(sorted(getattr(fetch.stats, "skipped_reasons", {}).items()))
    last = _last_coverage(source.name, region, refresh.pk)
    refresh.coverage = tap.as_json()
    moves = price_moves(tap.prices, before)
    refresh.changes = {
        "share": str(MOVE_SHARE),
        "count": len(moves),
        "moves": moves[:MAX_MOVES_KEPT],
        "gpu_types_gone": gpu_types_gone(last, refresh.coverage),
    }
    lost = coverage_lost(last, refresh.coverage, gpu_types=not source.marketplace)
    if lost:  # the prices landed; the run is failed so that /status/ shows what the source stopped producing
        _finish(
            refresh, RefreshStatus.FAILED, error="Coverage lost since the last refresh: " + "; ".join(lost)
        )
        return
    _finish(refresh, RefreshStatus.SUCCEEDED)


def _current_prices(tap: CoverageTap) -> dict:
    """The current published price of each offer series the run priced, before the run."""
    from pricing.refresh_changes import offer_key_of_row
    from pricing.selectors import current_price_observations

    rows = current_price_observations(offer__instance_type__provider__slug__in=list(tap.offers)).values_list(
        "offer__instance_type__provider__slug",
        "offer__instance_type__name",
        "offer__region__code",
        "offer__zone",
        "pricing_model",
        "payment_option",
        "amount_per_hour",
        "currency",
    )
    wanted = tap.prices
    current = {}
    for *key_parts, amount, currency in rows:
        key = offer_key_of_row(key_parts)
        if key in wanted:
            current[key] = (amount, currency)
    return current


def _last_coverage(source: str, region: str, exclude_pk: int) -> dict:
    """What the last finished run of (source, region) that recorded its coverage produced."""
    runs = (
        PriceRefresh.objects.filter(
            source=source, region=region, status__in=[RefreshStatus.SUCCEEDED, RefreshStatus.FAILED]
        )
        .exclude(pk=exclude_pk)
        .order_by("-started_at", "-pk")
        .values_list("coverage", flat=True)[:20]
    )
    return next((coverage for coverage in runs if coverage), {})


def _finish(refresh: PriceRefresh, status: str, *, error: str = "") -> None:
    refresh.status, refresh.error, refresh.finished_at = status, error, timezone.now()
    refresh.duration_s = (refresh.finished_at - refresh.started_at).total_seconds()
    if status == RefreshStatus.FAILED:
        refresh.failures_in_a_row = failures_before(refresh.source, refresh.region) + 1
    refresh.save()
    refresh_logged(refresh)
