"""One log line per finished price run (a source refresh, a file import, the bundled catalog): what was
fetched, refused and stored, with the source, region and providers, so an operator reading the worker's
log sees each run without opening /status/. The PriceRefresh row keeps the same counts for the pages.

Lines go through the standard logging module (logger ``scheduler.run_log``); a succeeded or skipped run
logs at INFO, a failed one at WARNING with the first line of its error.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from scheduler.models import PriceRefresh, RefreshStatus

log = logging.getLogger(__name__)


def refresh_logged(refresh: PriceRefresh, *, providers: Iterable[str] = ()) -> None:
    """Log a finished run's counts: fetched (rows the source gave), refused (with reasons), stored."""
    names = ",".join(sorted(set(providers) or set(refresh.coverage or {}))) or "-"
    if refresh.status == RefreshStatus.SKIPPED:
        log.info(
            "price run skipped: source=%s region=%s (%s)",
            refresh.source,
            refresh.region or "-",
            refresh.error,
        )
        return
    reasons = ", ".join(
        f"{reason} {entry['count']}" for reason, entry in (refresh.refused_reasons or {}).items()
    )
    failed = refresh.status == RefreshStatus.FAILED
    log.log(
        logging.WARNING if failed else logging.INFO,
        "price run %s: source=%s region=%s providers=%s fetched=%d refused=%d stored=%d unchanged=%d "
        "suspect=%d%s%s",
        refresh.status,
        refresh.source,
        refresh.region or "-",
        names,
        refresh.rows_seen,
        refresh.rows_rejected,
        refresh.rows_inserted,
        refresh.rows_unchanged,
        refresh.rows_suspect,
        f" refused_reasons=({reasons})" if reasons else "",
        f" error={refresh.error.splitlines()[0][:300]!r}" if failed and refresh.error else "",
    )
