"""Writes of the procurement app: evaluate and store TCO studies and ranked recommendations.

Django-side glue around the plain-Python cost engine: it resolves GPU figures from ``GpuModel``,
offer prices from the current price observations, and FX rates from ``FxRate``; the engine does
the arithmetic; the stored row keeps the resolved inputs and the prices used, so a report shows
the same numbers next month.
"""

from __future__ import annotations

import hashlib
import json
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import Any

from django.core.mail import send_mail
from django.db import transaction
from django.utils import timezone

from pricing.fx import fx_rates
from pricing.models import GpuModel
from pricing.selectors import current_price_observations
from procurement import models, selectors
from procurement.choices import ChangeKind
from procurement.costing import GpuEconomics, OfferRef, RentPrice, evaluate_tco_study, parse_tco_study
from procurement.costing.tco_spec import TcoStudy as TcoStudySpec
from procurement.costing.values import CostInputError, non_negative, positive_int
from procurement.ranking import (
    RANKED_PRICING_MODELS,
    PreparedOffers,
    Ranking,
    RankingOptions,
    prepare,
    rank_workload,
)
from procurement.sizing import WorkloadSpec, WorkloadSpecError, parse_workload_spec
from procurement.sizing.host import host_requirements


def gpu_economics_lookup(slug: str) -> GpuEconomics | None:
    gpu = GpuModel.objects.filter(slug=slug).only("slug", "tdp_w", "approx_list_price_usd").first()
    if gpu is None or gpu.tdp_w is None:
        return None
    return GpuEconomics(slug=gpu.slug, tdp_w=Decimal(gpu.tdp_w), list_price=gpu.approx_list_price_usd)


@dataclass
class OfferPriceRecorder:
    """Offer lookup for the engine that remembers every observation it handed out."""

    used: list[dict[str, Any]] = field(default_factory=list)

    def __call__(self, offer: OfferRef, pricing_model: str) -> RentPrice | None:
        observation = (
            current_price_observations(
                offer__instance_type__provider__slug=offer.provider,
                offer__instance_type__name=offer.instance_type,
                offer__region__code=offer.region,
                pricing_model=pricing_model,
            )
            .select_related("offer__instance_type")
            .order_by("amount_per_hour")  # several zones or payment options: the cheapest current one
            .first()
        )
        if observation is None:
            return None
        self.used.append(_price_used(observation, offer))
        per_gpu_hour = observation.amount_per_hour / observation.offer.instance_type.gpu_count
        return RentPrice(
            per_gpu_hour, observation.currency, observation.observed_at.isoformat(), observation.source
        )


def _price_used(observation, offer: OfferRef) -> dict[str, Any]:
    return {
        "observation_id": observation.pk,
        "offer": offer.label(),
        "zone": observation.offer.zone,
        "pricing_model": observation.pricing_model,
        "payment_option": observation.payment_option,
        "amount_per_hour": str(observation.amount_per_hour),
        "gpu_count": str(observation.offer.instance_type.gpu_count),
        "currency": observation.currency,
        "observed_at": observation.observed_at.isoformat(),
        "source": observation.source,
    }


def fx_pairs_into(currency: str) -> dict[tuple[str, str], Decimal]:
    """Stored FX rates as the engine's ``(from, to)`` table: every rate into ``currency``, plus every rate
    into USD so that the engine can also convert the other way (USD -> CNY through a CNY -> USD rate)."""
    pairs = {(source, "USD"): rate for source, rate in fx_rates(base="USD").items()}
    pairs |= {(source, currency): rate for source, rate in fx_rates(base=currency).items()}
    return pairs


@dataclass(frozen=True)
class EvaluatedStudy:
    spec: TcoStudySpec
    report: dict[str, Any]
    prices_used: list[dict[str, Any]]

    @property
    def fingerprint(self) -> str:
        """Hash of the resolved inputs (prices included): recomputing with unchanged prices adds nothing."""
        payload = json.dumps(self.report["inputs"], sort_keys=True)
        return hashlib.sha256(payload.encode()).hexdigest()


def tco_study_evaluate(*, document: object) -> EvaluatedStudy:
    """Parse, resolve and compute a study; raises CostInputError naming the field. Stores nothing."""
    currency = document.get("currency") if isinstance(document, dict) else None
    rates = fx_pairs_into(currency) if isinstance(currency, str) else {}  # the parser checks the code itself
    recorder = OfferPriceRecorder()
    spec = parse_tco_study(document, gpu_lookup=gpu_economics_lookup, offer_lookup=recorder, fx_rates=rates)
    return EvaluatedStudy(spec=spec, report=evaluate_tco_study(spec), prices_used=recorder.used)


@transaction.atomic
def tco_study_create(*, document: dict[str, Any], owner=None) -> models.TcoStudy:
    """Evaluate first, store only a valid study: bad input raises before anything is written."""
    evaluated = tco_study_evaluate(document=document)
    return models.TcoStudy.objects.create(
        name=evaluated.spec.name,
        spec=_plain_json(document),
        result=evaluated.report,
        prices_used=evaluated.prices_used,
        fingerprint=evaluated.fingerprint,
        owner=owner,
    )


def _plain_json(document: object) -> Any:
    """The submitted document as JSON-storable data (YAML/JSON decimals become strings, exactly)."""
    return json.loads(json.dumps(document, default=str))


# --- Recommendations --------------------------------------------------------------------------------

RANKING_OPTION_FIELDS = {
    "deadline_hours",
    "budget",
    "providers",
    "regions",
    "pricing_models",
    "top",
    "instance_counts",
}


def ranking_options_parse(data: Mapping[str, Any] | None) -> RankingOptions:
    """Request/CLI options into RankingOptions; raises CostInputError naming the field."""
    data = dict(data or {})
    for key in data:
        if key not in RANKING_OPTION_FIELDS:
            raise CostInputError(key, "unknown option")
    values: dict[str, Any] = {}
    for key in ("deadline_hours", "budget"):
        if data.get(key) is not None:
            values[key] = float(non_negative(data[key], key))
    if data.get("top") is not None:
        values["top"] = positive_int(data["top"], "top")
    for key in ("providers", "regions", "pricing_models"):
        if data.get(key):
            values[key] = tuple(_text_list(data[key], key))
    if data.get("instance_counts"):
        values["instance_counts"] = tuple(
            positive_int(count, f"instance_counts[{i}]") for i, count in enumerate(data["instance_counts"])
        )
    for model in values.get("pricing_models", ()):
        if model not in RANKED_PRICING_MODELS:
            raise CostInputError("pricing_models", f"unknown pricing model {model!r}")
    return RankingOptions(**values)


def _text_list(value: object, field: str) -> list[str]:
    if isinstance(value, str):
        value = [part.strip() for part in value.split(",") if part.strip()]
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise CostInputError(field, "must be a list of names")
    return value


def workload_spec_parse(document: object) -> WorkloadSpec:
    """The sizing engine's parser, with its first error re-raised as a CostInputError (the field path)."""
    try:
        return parse_workload_spec(document)  # type: ignore[arg-type]
    except WorkloadSpecError as error:
        first = error.errors[0]
        raise CostInputError(first.path, first.message) from None


def _measured_speeds(workload: models.Workload | None) -> dict[tuple[str, int], float]:
    if workload is None:
        return {}
    rows = workload.benchmarks.filter(tokens_per_second__isnull=False).order_by("measured_at")
    return {(row.gpu.slug, row.gpu_count): float(row.tokens_per_second) for row in rows.select_related("gpu")}


@dataclass(frozen=True)
class RankingContext:
    """What every ranking in a batch shares: read once per request or per recompute chunk."""

    offers: Any  # pandas DataFrame from selectors.ranking_offer_frame()
    gpus: dict[str, Any]
    storage_rates: dict[str, float]
    _prepared: dict[tuple, PreparedOffers] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def current(cls) -> RankingContext:
        return cls(
            selectors.ranking_offer_frame(), selectors.ranking_gpus(), selectors.block_storage_rates_usd()
        )

    def prepared(self, options: RankingOptions) -> PreparedOffers:
        """The offer table filtered for these options, prepared once per distinct filter set."""
        key = (options.providers, options.regions, options.pricing_models)
        if key not in self._prepared:
            self._prepared[key] = prepare(self.offers, self.gpus, options)
        return self._prepared[key]


def recommendation_compute(
    *,
    spec: WorkloadSpec,
    options: RankingOptions,
    workload: models.Workload | None = None,
    context: RankingContext | None = None,
    measured_speeds: dict[tuple[str, int], float] | None = None,
) -> Ranking:
    """Rank the current catalog for a workload: storage from the sizing engine's disk estimate,
    priced at each provider's block-storage rate; measured speeds from the workload's benchmarks."""
    context = context or RankingContext.current()
    disk_gb = host_requirements(spec, next(iter(context.gpus.values())), 1, 0.0)["disk_gb_per_node"]
    options = replace(
        options,
        storage_gb=float(disk_gb),
        storage_rate_per_gb_month=context.storage_rates,
        measured_tokens_per_second=_measured_speeds(workload) if measured_speeds is None else measured_speeds,
    )
    try:
        return rank_workload(spec, None, context.gpus, options, prepared=context.prepared(options))
    except ValueError as error:  # e.g. a training workload without training_tokens
        field_name, _, message = str(error).partition(": ")
        raise CostInputError(field_name, message) from None


def ranking_prices_used(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    keys = ("observation_id", "provider", "instance_type", "region", "zone", "pricing_model", "price_per_hour",
            "price_observed_at")  # fmt: skip
    seen, used = set(), []
    for row in results:
        if row["observation_id"] not in seen:
            seen.add(row["observation_id"])
            used.append({key: row[key] for key in keys})
    return used


def recommendation_fingerprint(parameters: dict[str, Any], results: list[dict[str, Any]]) -> str:
    """Same parameters and same ranked prices and totals -> same hash: an unchanged recompute adds nothing."""
    payload = {
        "parameters": parameters,
        "rows": [(r["observation_id"], r["instances"], r["plan"]["name"], r["total_cost"]) for r in results],
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()


def recommendation_create(
    *,
    workload: models.Workload,
    parameters: dict[str, Any] | None = None,
    context: RankingContext | None = None,
) -> tuple[models.Recommendation, bool]:
    """Rank and store a dated Recommendation; returns (row, created). Unchanged results add no row."""
    parameters = _plain_json(parameters or {})
    options = ranking_options_parse(parameters)
    spec = workload_spec_parse(workload.spec)
    ranking = recommendation_compute(spec=spec, options=options, workload=workload, context=context)
    fingerprint = recommendation_fingerprint(parameters, ranking.results)
    latest = workload.recommendations.order_by("-computed_at", "-pk").first()
    if latest is not None and latest.fingerprint == fingerprint:
        return latest, False
    row = models.Recommendation.objects.create(
        workload=workload,
        parameters=parameters,
        results=ranking.results,
        prices_used=ranking_prices_used(ranking.results),
        fingerprint=fingerprint,
    )
    return row, True


@transaction.atomic
def workload_create_from_spec(*, document: dict[str, Any], owner=None) -> models.Workload:
    spec = workload_spec_parse(document)
    return models.Workload.objects.create(
        name=spec.name, task=spec.task, spec=_plain_json(document), owner=owner
    )


# --- Recomputation --------------------------------------------------------------------------------

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
        .only("pk", "workload_id", "parameters", "fingerprint")
    )
    latest: dict[int, models.Recommendation] = {}
    for row in rows:
        latest.setdefault(row.workload_id, row)
    return latest


def _measured_speeds_bulk(workload_ids: list[int]) -> dict[int, dict[tuple[str, int], float]]:
    rows = models.BenchmarkResult.objects.filter(
        workload_id__in=workload_ids, tokens_per_second__isnull=False
    )
    speeds: dict[int, dict[tuple[str, int], float]] = {}
    for workload_id, slug, count, tokens in rows.order_by("measured_at").values_list(
        "workload_id", "gpu__slug", "gpu_count", "tokens_per_second"
    ):
        speeds.setdefault(workload_id, {})[(slug, count)] = float(tokens)
    return speeds


def recommendations_recompute_chunk(
    workload_ids: list[int], *, context: RankingContext | None = None
) -> list[dict[str, Any]]:
    """Re-rank stored workloads with their latest parameters. Reads are batched per chunk; only changed
    results add a dated row (beside the old one) and, where a decision changed, a ChangeEvent."""
    context = context or RankingContext.current()
    workloads = models.Workload.objects.in_bulk(workload_ids)
    latest, speeds = _latest_recommendations(workload_ids), _measured_speeds_bulk(workload_ids)
    summaries, changed = [], []
    for workload_id in workload_ids:
        workload = workloads.get(workload_id)
        if workload is None:
            summaries.append({"workload_id": workload_id, "skipped": "gone"})
            continue
        try:
            recomputed = _rerank(workload, latest.get(workload_id), speeds.get(workload_id, {}), context)
        except CostInputError as error:
            summaries.append({"workload_id": workload_id, "skipped": str(error)})
            continue
        summaries.append({"workload_id": workload_id, "created": recomputed is not None, "events": []})
        if recomputed is not None:
            changed.append((summaries[-1], recomputed))
    _store_recomputed(changed)
    return summaries


def _rerank(workload, previous, speeds, context: RankingContext) -> _Recomputed | None:
    parameters = previous.parameters if previous else {}
    options = ranking_options_parse(parameters)
    spec = workload_spec_parse(workload.spec)
    ranking = recommendation_compute(spec=spec, options=options, context=context, measured_speeds=speeds)
    fingerprint = recommendation_fingerprint(parameters, ranking.results)
    if previous is not None and previous.fingerprint == fingerprint:
        return None
    row = models.Recommendation(
        workload=workload, parameters=parameters, results=ranking.results,
        prices_used=ranking_prices_used(ranking.results), fingerprint=fingerprint,
    )  # fmt: skip
    return _Recomputed(workload, previous, row)


@transaction.atomic
def _store_recomputed(changed: list[tuple[dict[str, Any], _Recomputed]]) -> None:
    models.Recommendation.objects.bulk_create([recomputed.row for _, recomputed in changed])
    for summary, recomputed in changed:
        if recomputed.previous is None:
            continue
        before = models.Recommendation.objects.values_list("results", flat=True).get(
            pk=recomputed.previous.pk
        )
        for kind, old, new in decision_changes(before, recomputed.row.results):
            event = _change_event(kind=kind, workload=recomputed.workload, before=old, after=new)
            summary["events"].append(event.pk)


def tco_study_recompute(study_id: int) -> dict[str, Any]:
    """Re-price a stored study; a changed price adds a new dated row linked to the one it replaces."""
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
        new = models.TcoStudy.objects.create(
            name=study.name, spec=study.spec, result=evaluated.report, prices_used=evaluated.prices_used,
            fingerprint=evaluated.fingerprint, owner=study.owner, previous=study,
        )  # fmt: skip
        events = []
        if study.result.get("recommendation") != evaluated.report["recommendation"]:
            before = {"recommendation": study.result.get("recommendation"), "study_id": study.pk}
            after = {"recommendation": evaluated.report["recommendation"], "study_id": new.pk}
            events.append(
                _change_event(kind=ChangeKind.RENT_OR_BUY, tco_study=new, before=before, after=after)
            )
    return {"study_id": new.pk, "created": True, "events": [event.pk for event in events]}


def _change_event(
    *, kind: str, before: dict, after: dict, workload=None, tco_study=None
) -> models.ChangeEvent:
    event = models.ChangeEvent.objects.create(
        kind=kind, workload=workload, tco_study=tco_study, before=before, after=after
    )
    transaction.on_commit(lambda: _enqueue_notification(event.pk))
    return event


def _enqueue_notification(event_id: int) -> None:
    from procurement.tasks import notify_change_event

    notify_change_event.delay(event_id)


def recompute_targets(*, workload_id: int | None = None) -> tuple[list[int], list[int]]:
    """Workloads with a stored recommendation, and current TCO studies priced from an offer."""
    if workload_id is not None:
        return [workload_id], []
    workloads = models.Workload.objects.filter(recommendations__isnull=False).distinct()
    studies = models.TcoStudy.objects.filter(next_version__isnull=True, spec__rent__offer__isnull=False)
    return sorted(workloads.values_list("pk", flat=True)), sorted(studies.values_list("pk", flat=True))


def change_event_notify(event_id: int) -> str:
    """E-mail and/or webhook the owner once; the conditional update makes a retried task send nothing twice."""
    event = (
        models.ChangeEvent.objects.select_related("workload__owner", "tco_study__owner")
        .filter(pk=event_id)
        .first()
    )
    if event is None or event.notified_at is not None:
        return "skipped"
    claimed = models.ChangeEvent.objects.filter(pk=event_id, notified_at__isnull=True).update(
        notified_at=timezone.now()
    )
    if not claimed:
        return "skipped"
    subject = f"gpuledger: {event.get_kind_display()}"
    body = json.dumps(
        {"kind": event.kind, "before": event.before, "after": event.after}, indent=2, default=str
    )
    email, webhook = _notification_targets(event)
    if email:
        send_mail(subject, body, None, [email])
    if webhook:
        _post_webhook(
            webhook, {"subject": subject, "kind": event.kind, "before": event.before, "after": event.after}
        )
    return "sent" if email or webhook else "no target"


def _notification_targets(event: models.ChangeEvent) -> tuple[str, str]:
    if event.workload is not None:
        owner_email = event.workload.owner.email if event.workload.owner else ""
        return event.workload.notify_email or owner_email, event.workload.notify_webhook
    owner = event.tco_study.owner if event.tco_study else None
    return (owner.email if owner else ""), ""


def _post_webhook(url: str, payload: dict[str, Any]) -> None:
    request = urllib.request.Request(  # noqa: S310  (an owner-configured http(s) URL, validated by URLField)
        url, data=json.dumps(payload, default=str).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=10):  # noqa: S310
        pass
