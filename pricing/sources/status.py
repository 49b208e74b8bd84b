"""Reads behind the /status/ page: recent refresh runs, the age of the newest price per source."""

from __future__ import annotations

import datetime as dt
import re

from django.db.models import Count, Max
from django_celery_beat.models import PeriodicTask

from pricing.catalog import SKYPILOT_FILES
from pricing.choices import PriceStatus
from pricing.market_offers import market_offer_counts
from pricing.models import PriceObservation
from pricing.sources.registry import SOURCES
from scheduler.models import PriceRefresh, RefreshStatus

# An absolute file path (two or more folders deep, or under the home folder) in an error or a source
# name: the page shows its last part only, never where the server keeps its files (issue 31).
_SERVER_PATH = re.compile(r"(?:~(?:/[\w.+@-]+)*|(?<![\w./])(?:/[\w.+@-]+)+)/([\w.+@-]+)")
RECENT_RUNS = 50
FAILING_AFTER = 3  # failed runs in a row after which a source (in a region) shows as failing


def source_states() -> list[dict]:
    """Each refresh source with its region(s): on or off (and how to switch it on), its last finished
    run, and whether it has failed FAILING_AFTER times in a row."""
    states = []
    for source in SOURCES.values():
        finished = PriceRefresh.objects.filter(source=source.name).exclude(
            status__in=[RefreshStatus.RUNNING, RefreshStatus.SKIPPED]
        )
        regions = finished.order_by("region").values_list("region", flat=True).distinct()
        last_runs = {
            region: finished.filter(region=region).order_by("-started_at", "-pk").first()
            for region in regions
        }
        enabled = source.enabled()
        coverage = [_coverage_rows(source.name, region, run) for region, run in sorted(last_runs.items())]
        states.append(
            {
                "coverage": [row for rows in coverage for row in rows],
                "name": source.name,
                "enabled": enabled,
                "how_to_enable": source.off_reason.removeprefix("off: "),
                "regions": [
                    {"region": region, "last": run, "failing": run.failures_in_a_row >= FAILING_AFTER}
                    for region, run in sorted(last_runs.items())
                ],
            }
        )
    return states


def _coverage_rows(source: str, region: str, last: PriceRefresh) -> list[dict]:
    """Per provider of the last run: offers, GPU types and pricing models the run before had and it has,
    with what was lost and the prices that moved (pricing.refresh_changes)."""
    before_run = (
        PriceRefresh.objects.filter(source=source, region=region, started_at__lte=last.started_at)
        .exclude(pk=last.pk)
        .exclude(status__in=[RefreshStatus.RUNNING, RefreshStatus.SKIPPED])
        .order_by("-started_at", "-pk")
        .values_list("coverage", flat=True)
        .first()
    ) or {}
    rows = []
    for provider in sorted(set(before_run) | set(last.coverage or {})):
        was, now = before_run.get(provider, {}), (last.coverage or {}).get(provider, {})
        rows.append(
            {
                "source": source,
                "region": region,
                "provider": provider,
                "offers_before": was.get("offers"),
                "offers_now": now.get("offers", 0),
                "gpu_types_before": was.get("gpu_types", []),
                "gpu_types_now": now.get("gpu_types", []),
                "models_before": was.get("pricing_models", []),
                "models_now": now.get("pricing_models", []),
                "gpu_types_gone": sorted(set(was.get("gpu_types", [])) - set(now.get("gpu_types", []))),
                "models_gone": sorted(
                    set(was.get("pricing_models", [])) - set(now.get("pricing_models", []))
                ),
                "moves": (last.changes or {}).get("count", 0),
                "skipped": last.skipped_reasons or {},
            }
        )
    return rows


def providers_not_refreshed() -> list[dict]:
    """The providers no refresh has priced yet and no whole bundled snapshot covers, each with whether its
    source is on and, when off, how to turn it on: the landing page lists them. A gpuhunt provider is
    covered once its gpuhunt source succeeded or a SkyPilot catalog of it is bundled (every bundled
    snapshot is the provider's whole offer list as published: a `vms.gpu.csv` keeps every GPU row of every
    region). A provider read by a source of our own (Azure's Retail Prices API, ...) is covered once any of
    its prices is stored, bundled or fetched; until then it is listed like the gpuhunt ones (outside review
    of issue 32, round 3: Azure, with no bundled snapshot, was named nowhere on the landing page)."""
    refreshed = set(
        PriceRefresh.objects.filter(status=RefreshStatus.SUCCEEDED, source__startswith="gpuhunt-")
        .values_list("source", flat=True)
        .distinct()
    )
    own = {source.provider for source in SOURCES.values() if not source.name.startswith("gpuhunt-")}
    priced = set(
        PriceObservation.objects.filter(offer__region__provider__slug__in=own)
        .values_list("offer__region__provider__slug", flat=True)
        .distinct()
    )
    listed, named = [], set()
    for source in SOURCES.values():
        provider = source.provider
        if source.name.startswith("gpuhunt-"):
            covered = source.name in refreshed or provider in SKYPILOT_FILES
        else:
            covered = provider in priced or provider in SKYPILOT_FILES
        if not provider or covered or provider in named:
            continue
        named.add(provider)
        listed.append(
            {
                "source": source.name,
                "provider": provider,
                "enabled": source.enabled(),
                "how_to_enable": source.off_reason.removeprefix("off: "),
            }
        )
    return listed


def status_overview(*, now: dt.datetime) -> dict:
    sources = (
        PriceObservation.objects.values("source")
        .annotate(newest=Max("observed_at"), prices=Count("id"))
        .order_by("source")
    )
    runs = list(PriceRefresh.objects.all()[:RECENT_RUNS])
    for run in runs:  # shown, not saved: the stored error keeps its full text for the admin
        run.error = without_server_paths(run.error)
    return {
        "now": now,
        "runs": runs,
        "source_states": source_states(),
        "failing_after": FAILING_AFTER,
        "sources": [
            {**row, "source": without_server_paths(row["source"]), "age": now - row["newest"]}
            for row in sources
        ],
        "suspect_waiting": PriceObservation.objects.filter(status=PriceStatus.SUSPECT).count(),
        "schedule": list(PeriodicTask.objects.exclude(name__startswith="celery.").order_by("name")),
        "markets": [_market_status("vast-market", "vast")],
    }


def _market_status(source_name: str, provider_slug: str) -> dict:
    """A marketplace source: on or off (and why), offers listed now, offers gone, the last seen and gone."""
    source = SOURCES[source_name]
    enabled = source.enabled()
    return {
        "source": source_name,
        "enabled": enabled,
        "off_reason": "" if enabled else source.off_reason,
        **market_offer_counts(provider_slug),
    }


def without_server_paths(text: str) -> str:
    """``/srv/app/pricing/data/x.csv`` -> ``x.csv``; ``~/.aws/config`` -> ``config``."""
    return _SERVER_PATH.sub(r"\1", text or "")
