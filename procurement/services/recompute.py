"""Recomputation of stored decisions against current prices, and the change events it records.

Recomputing with unchanged prices adds nothing; a changed result adds a dated row beside the old one,
and a ChangeEvent where the cheapest feasible option, the spot verdict or the rent-or-buy
recommendation changed.
"""

from __future__ import annotations

import datetime as dt
import gc
from collections.abc import Hashable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any

import orjson
from django.db import transaction
from django.utils import timezone

from gpuledger.data_versions import bump_version
from procurement import models
from procurement.bulk_copy import copy_insert
from procurement.choices import ChangeKind
from procurement.costing.values import CostInputError
from procurement.ranking import Ranking, RankingOptions
from procurement.services.benchmarks import NO_MEASUREMENTS, ShapeMeasurements, shape_key, shape_measurements
from procurement.services.notifications import change_event_create, change_events_create
from procurement.services.recommendations import (
    RankingContext,
    ranking_options_parse,
    recommendation_compute,
    recommendation_fields,
    recommendation_fingerprint,
    recommendation_unchanged,
    workload_spec_parse,
)
from procurement.services.tco import tco_study_evaluate
from procurement.sizing import WorkloadSpec

DECISION_KEYS = ("provider", "instance_type", "region", "zone", "pricing_model", "gpu", "gpus", "instances")


def _option_key(row: dict[str, Any] | None) -> dict[str, Any] | None:
    return (
        None
        if row is None
        else {key: row.get(key) for key in DECISION_KEYS} | {"total_cost": row["total_cost"]}
    )


def _cheapest(results: list[dict[str, Any]], *, pricing_model: str | None = None) -> dict[str, Any] | None:
    rows = [
        r for r in results if r["fits"] and (pricing_model is None or r["pricing_model"] == pricing_model)
    ]
    return rows[0] if rows else None


def _same_option(before: dict[str, Any] | None, after: dict[str, Any] | None) -> bool:
    if before is None or after is None:
        return before is after
    return all(before.get(key) == after.get(key) for key in DECISION_KEYS)


def decision_changes(
    before: list[dict[str, Any]], after: list[dict[str, Any]]
) -> list[tuple[str, dict, dict]]:
    """Change events worth telling the owner: another cheapest option, or spot becoming (un)usable."""
    changes = []
    old, new = _cheapest(before), _cheapest(after)
    if not _same_option(old, new):
        changes.append((ChangeKind.CHEAPEST_OPTION, _option_key(old) or {}, _option_key(new) or {}))
    old_spot, new_spot = _cheapest(before, pricing_model="spot"), _cheapest(after, pricing_model="spot")
    if (old_spot is None) != (new_spot is None):
        before_spot = {"spot_usable": old_spot is not None, "cheapest_spot": _option_key(old_spot)}
        after_spot = {"spot_usable": new_spot is not None, "cheapest_spot": _option_key(new_spot)}
        changes.append((ChangeKind.SPOT_VERDICT, before_spot, after_spot))
    return changes


def recommendation_recompute(workload_id: int, *, context: RankingContext | None = None) -> dict[str, Any]:
    """Re-rank one stored workload with its latest parameters (see recommendations_recompute_chunk)."""
    return recommendations_recompute_chunk([workload_id], context=context)[0]


@dataclass
class _Recomputed:
    workload: models.Workload
    previous: models.Recommendation | None
    row: models.Recommendation


def _latest_recommendations(workload_ids: list[int]) -> dict[int, models.Recommendation]:
    """The newest stored recommendation per workload, without loading every old result."""
    rows = (
        models.Recommendation.objects.filter(workload_id__in=workload_ids)
        .order_by("workload_id", "-computed_at", "-pk")
        .only("pk", "workload_id", "parameters", "fingerprint", "spec", "saved_by_id")
    )
    latest: dict[int, models.Recommendation] = {}
    for row in rows:
        latest.setdefault(row.workload_id, row)
    return latest


def _own_measurements_bulk(workload_ids: list[int]) -> dict[int, ShapeMeasurements]:
    """Each workload's own benchmark runs (tokens/s and day), in one query for the chunk."""
    rows = models.BenchmarkResult.objects.filter(
        workload_id__in=workload_ids, tokens_per_second__isnull=False, gpu__isnull=False, cpu_only=False
    )
    own: dict[int, ShapeMeasurements] = {}
    for workload_id, slug, count, tokens, measured_at in rows.order_by("measured_at").values_list(
        "workload_id", "gpu__slug", "gpu_count", "tokens_per_second", "measured_at"
    ):
        entry = own.setdefault(workload_id, ShapeMeasurements({}, {}))
        entry.speeds[(slug, count)] = float(tokens)
        entry.dates[(slug, count)] = f"{measured_at:%Y-%m-%d}"
    return own


# The garbage collector's thresholds while a chunk is ranked (Python's default: 700, 10, 10). A ranking
# allocates many short-lived containers (rows, texts, Decimal breakdowns) and the worker holds ~200,000
# long-lived objects (Django, pandas, the offer table): at the default, a 600-workload chunk ran ~570
# collections that took 0.42-0.57 s of its ~4 s CPU (gc callbacks, in-process, 2026-12-05); at these,
# 16 collections and 0.05 s. Cycles are still collected, only in fewer passes; restored after the chunk.
RECOMPUTE_GC_THRESHOLDS = (20_000, 20, 10)


@contextmanager
def fewer_gc_passes(thresholds: tuple[int, int, int] = RECOMPUTE_GC_THRESHOLDS) -> Iterator[None]:
    """The collector's thresholds raised (never lowered) for the block, then put back as they were; a
    threshold of 0 (automatic collection off) is left off."""
    before = gc.get_threshold()
    if before[0]:
        gc.set_threshold(*(max(old, new) for old, new in zip(before, thresholds, strict=True)))
    try:
        yield
    finally:
        gc.set_threshold(*before)


def recommendations_recompute_chunk(
    workload_ids: list[int], *, context: RankingContext | None = None
) -> list[dict[str, Any]]:
    """Re-rank stored workloads with their latest parameters. Reads are batched per chunk; only changed
    results add a dated row (beside the old one) and, where a decision changed, a ChangeEvent."""
    with fewer_gc_passes():
        return _recompute_chunk(workload_ids, context or RankingContext.current())


def _recompute_chunk(workload_ids: list[int], context: RankingContext) -> list[dict[str, Any]]:
    workloads = models.Workload.objects.in_bulk(workload_ids)
    latest, own = _latest_recommendations(workload_ids), _own_measurements_bulk(workload_ids)
    by_shape = shape_measurements()  # every same-shape benchmark, read once for the chunk
    rankings = ChunkRankings(context)
    summaries: list[dict[str, Any]] = []
    changed: list[tuple[dict[str, Any], _Recomputed]] = []
    for workload_id in workload_ids:
        summary, recomputed = _recompute_one(
            workload_id,
            workloads.get(workload_id),
            latest,
            own.get(workload_id, NO_MEASUREMENTS),
            by_shape,
            rankings,
        )
        summaries.append(summary)
        if recomputed is not None:
            changed.append((summary, recomputed))
    _store_recomputed(changed)
    return summaries


def _recompute_one(
    workload_id: int, workload, latest, own: ShapeMeasurements, by_shape, rankings: ChunkRankings
) -> tuple[dict[str, Any], _Recomputed | None]:
    """One workload's summary, and its new row when its answer changed."""
    if workload is None:
        return {"workload_id": workload_id, "skipped": "gone"}, None
    try:
        recomputed = _rerank(workload, latest.get(workload_id), own, by_shape, rankings)
    except CostInputError as error:
        return {"workload_id": workload_id, "skipped": str(error)}, None
    return {"workload_id": workload_id, "created": recomputed is not None, "events": []}, recomputed


class ChunkRankings:
    """The rankings of one recompute chunk, each computed once per distinct input: stored workloads are
    often copies of one another (the same model, task and token count under another name), and ranking
    one is most of a recompute's time (issue 26, "Speed").

    A ranking is a function of its context (one offer table and price version: the chunk's), the clock,
    the spec, the saved options and the measured speeds. The chunk ranks every workload as of one instant
    (``now``, taken when the chunk starts, as the context's stale flags are), so the key is the rest:
    the whole parsed spec except its name (which no ranking reads), the options as canonical JSON and
    the measurements. A spec or an option that differs in any field is another key; new prices are
    another context, so another ``ChunkRankings``: nothing outlives the chunk. The results are shared
    between the rows that asked for the same ranking, and nothing changes a stored row's results."""

    def __init__(self, context: RankingContext, now: dt.datetime | None = None) -> None:
        self.context, self.now = context, now or timezone.now()
        self._rankings: dict[Hashable, Ranking] = {}

    def rank(
        self,
        spec: WorkloadSpec,
        parameters: dict[str, Any],
        options: RankingOptions,
        measurements: ShapeMeasurements,
    ) -> Ranking:
        """``options``: ``parameters`` parsed."""
        key = ranking_key(spec, parameters, measurements)
        if key not in self._rankings:
            self._rankings[key] = recommendation_compute(
                spec=spec,
                options=options,
                context=self.context,
                measurements=measurements,
                now=self.now,
            )
        return self._rankings[key]


def ranking_key(spec: WorkloadSpec, parameters: dict[str, Any], measurements: ShapeMeasurements) -> Hashable:
    """Everything of a stored workload that its ranking reads, in a chunk's context and clock."""
    return (
        replace(spec, name=""),
        orjson.dumps(parameters, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS),
        frozenset(measurements.speeds.items()),
        frozenset(measurements.dates.items()),
    )


def _rerank(
    workload, previous, own: ShapeMeasurements, by_shape, rankings: ChunkRankings
) -> _Recomputed | None:
    # The saved options (rows are stored only by an explicit save or by a recompute that copies them),
    # never those of the last ad-hoc query.
    parameters = previous.parameters if previous else {}
    options = ranking_options_parse(parameters)
    spec = workload_spec_parse(workload.spec)
    shared = by_shape.get(shape_key(spec), NO_MEASUREMENTS)
    measurements = ShapeMeasurements(shared.speeds | own.speeds, shared.dates | own.dates)  # own runs on top
    ranking = rankings.rank(spec, parameters, options, measurements)
    fingerprint = recommendation_fingerprint(parameters, ranking.results)
    if recommendation_unchanged(previous, workload, fingerprint):
        return None
    row = models.Recommendation(
        **recommendation_fields(workload, parameters, ranking.results, fingerprint),
        saved_by_id=previous.saved_by_id if previous else None,
    )
    return _Recomputed(workload, previous, row)


@transaction.atomic
def _store_recomputed(changed: list[tuple[dict[str, Any], _Recomputed]]) -> None:
    """One COPY for the new rows (procurement/bulk_copy.py), one read of the previous results, one insert
    for the change events.

    Exactly once under concurrency: the workloads' rows are locked (in id order, so two chunks never
    deadlock), then their newest stored result is read again. A concurrent recompute that stored the
    same result first makes this one skip it; one that stored another result becomes the `previous`
    the change events compare against. Two racing ``recompute --all`` therefore store one row and one
    set of events per changed workload."""
    if not changed:
        return
    workload_ids = sorted(recomputed.workload.pk for _, recomputed in changed)
    list(
        models.Workload.objects.select_for_update()
        .filter(pk__in=workload_ids)
        .order_by("pk")
        .values_list("pk")
    )
    latest = _latest_recommendations(workload_ids)
    kept = []
    for summary, recomputed in changed:
        now_latest = latest.get(recomputed.workload.pk)
        if now_latest is not None and now_latest.fingerprint == recomputed.row.fingerprint:
            summary["created"] = False  # a concurrent run stored this very result first
            continue
        recomputed.previous = now_latest
        kept.append((summary, recomputed))
    changed = kept
    copy_insert([recomputed.row for _, recomputed in changed])
    if changed:
        bump_version("workloads")  # COPY (as bulk_create) sends no signal (gpuledger/data_versions.py)
    previous_ids = [recomputed.previous.pk for _, recomputed in changed if recomputed.previous is not None]
    before_results = dict(
        models.Recommendation.objects.filter(pk__in=previous_ids).values_list("pk", "results")
    )
    pending: list[tuple[dict[str, Any], models.ChangeEvent]] = []
    for summary, recomputed in changed:
        if recomputed.previous is None:
            continue
        before = before_results[recomputed.previous.pk]
        for kind, old, new in decision_changes(before, recomputed.row.results):
            event = models.ChangeEvent(kind=kind, workload=recomputed.workload, before=old, after=new)
            pending.append((summary, event))
    created = change_events_create([event for _, event in pending])
    for (summary, _), event in zip(pending, created, strict=True):
        summary["events"].append(event.pk)


def tco_study_recompute(study_id: int) -> dict[str, Any]:
    """Re-price a stored study; a changed price adds a new dated row linked to the one it replaces.
    Exactly once under concurrency: the study row is locked and checked again before the new version
    is written, so a second, racing recompute finds it superseded and writes nothing."""
    study = models.TcoStudy.objects.filter(pk=study_id, next_version__isnull=True).first()
    if study is None:
        return {"study_id": study_id, "skipped": "gone or superseded"}
    try:
        evaluated = tco_study_evaluate(document=study.spec)
    except CostInputError as error:  # e.g. the offer has no current price any more
        return {"study_id": study_id, "skipped": str(error)}
    if evaluated.fingerprint == study.fingerprint:
        return {"study_id": study_id, "created": False}
    with transaction.atomic():
        locked = models.TcoStudy.objects.select_for_update().filter(pk=study_id).values_list("pk").first()
        if locked is None or models.TcoStudy.objects.filter(previous_id=study_id).exists():
            return {"study_id": study_id, "skipped": "gone or superseded"}
        new = models.TcoStudy.objects.create(
            name=study.name,
            spec=study.spec,
            result=evaluated.report,
            prices_used=evaluated.prices_used,
            fingerprint=evaluated.fingerprint,
            owner=study.owner,
            team=study.team,
            previous=study,
        )
        events = []
        if study.result.get("recommendation") != evaluated.report["recommendation"]:
            before = {"recommendation": study.result.get("recommendation"), "study_id": study.pk}
            after = {"recommendation": evaluated.report["recommendation"], "study_id": new.pk}
            events.append(
                change_event_create(kind=ChangeKind.RENT_OR_BUY, tco_study=new, before=before, after=after)
            )
    return {"study_id": new.pk, "created": True, "events": [event.pk for event in events]}


def recompute_targets(*, workload_id: int | None = None) -> tuple[list[int], list[int]]:
    """Workloads with a stored recommendation, and current TCO studies priced from an offer."""
    if workload_id is not None:
        return [workload_id], []
    workloads = models.Workload.objects.filter(recommendations__isnull=False).distinct()
    studies = models.TcoStudy.objects.filter(next_version__isnull=True, spec__rent__offer__isnull=False)
    return sorted(workloads.values_list("pk", flat=True)), sorted(studies.values_list("pk", flat=True))
