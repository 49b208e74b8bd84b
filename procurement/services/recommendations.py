"""Recommendations: parse a workload and ranking options, rank the current catalog, store dated results.

A ``RankingContext`` holds what every ranking of a batch shares (offer table, GPU datasheets, storage
rates), read once per request or per recompute chunk.
"""

from __future__ import annotations

import datetime as dt
import difflib
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from django.db import transaction
from django.utils import timezone

from pricing.models import Provider, Region, SpotAdvisory
from pricing.price_version import price_version_key
from pricing.selectors import with_staleness
from pricing.spot_selectors import spot_price_histories_usd
from procurement import models, offer_cache, selectors
from procurement.choices import Deployment
from procurement.costing.job import MAX_STORAGE_RETENTION_DAYS, retention_months
from procurement.costing.values import CostInputError, bounded_int, currency_code, non_negative, positive_int
from procurement.ranking import (
    RANKED_PRICING_MODELS,
    PreparedOffers,
    Ranking,
    RankingOptions,
    prepare,
    rank_workload,
)
from procurement.ranking.options import MAX_INSTANCES
from procurement.ranking.sizing_memo import HashedKey
from procurement.services.benchmarks import ShapeMeasurements, measurements_for_spec
from procurement.services.calibration import calibration_factors
from procurement.services.currency import UsdConversion, usd_conversion
from procurement.services.documents import plain_json
from procurement.services.saved_once import input_fingerprint, save_once
from procurement.sizing import FieldError, WorkloadSpec, WorkloadSpecError, parse_workload_spec
from procurement.sizing.host import host_requirements
from procurement.sizing.mfu import Calibration

RANKING_OPTION_FIELDS = {
    "deadline_hours",
    "budget",
    "providers",
    "regions",
    "gpus",
    "pricing_models",
    "top",
    "instance_counts",
    "currency",
    "include_infeasible",
    "include_illustrative",
    "rank_outliers_at_quote",
    "explore_parallelism",
    "deployment",
    "collapse_identical",
    "calibrate",
    "storage_retention_days",
    *("checkpoint_write_hours", "restart_hours", "storage_write_gb_per_s", "deadline_probability"),
}
# Spot timing and the deadline plan (docs/cost-model.md, "Spot timing"): field -> (lowest, highest, lowest
# allowed?). Bounded so a request cannot ask for a day-long checkpoint or a zero-bandwidth volume.
SPOT_OPTION_BOUNDS = {
    "checkpoint_write_hours": (0.0, 24.0, False),
    "restart_hours": (0.0, 24.0, True),
    "storage_write_gb_per_s": (0.0, 100.0, False),
    "deadline_probability": (0.0, 1.0, False),
}


# Bounds on the sizes a request sets, so one request is bounded work (issue 9): the ranking's rows grow
# with instance counts × offers, and `top` rows are stored with the recommendation.
MAX_TOP = 500
MAX_INSTANCE_COUNT_VALUES = 64
MAX_DEADLINE_HOURS = 10 * 8760


def _deployment(value: Any) -> str:
    """The ``deployment`` option: production (the default) or development (procurement.choices.Deployment)."""
    if value not in Deployment.values:
        raise CostInputError("deployment", f"must be one of {', '.join(Deployment.values)}")
    return str(value)


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
    if values.get("deadline_hours", 0) > MAX_DEADLINE_HOURS:
        raise CostInputError("deadline_hours", f"must be at most {MAX_DEADLINE_HOURS} (ten years)")
    if data.get("top") is not None:
        values["top"] = bounded_int(data["top"], "top", MAX_TOP)
    for key in ("providers", "regions", "gpus", "pricing_models"):
        if data.get(key):
            values[key] = tuple(_text_list(data[key], key))
    for key in (
        "include_infeasible",
        "include_illustrative",
        "rank_outliers_at_quote",
        "explore_parallelism",
    ):
        if data.get(key) is not None:
            values[key] = _flag(data[key], key)
    if data.get("deployment") is not None:
        values["deployment"] = _deployment(data["deployment"])
    if data.get("collapse_identical") is not None:  # false: every region's row, even at one price and time
        values["collapse_identical"] = _flag(data["collapse_identical"], "collapse_identical")
    if data.get("calibrate") is not None:  # false: estimates without the fitted calibration factors
        values["use_calibration"] = _flag(data["calibrate"], "calibrate")
    if data.get("storage_retention_days") is not None:
        days = non_negative(data["storage_retention_days"], "storage_retention_days")
        if days > MAX_STORAGE_RETENTION_DAYS:
            raise CostInputError(
                "storage_retention_days", f"must be at most {MAX_STORAGE_RETENTION_DAYS} days"
            )
        values["storage_tail_months"] = float(retention_months(days))
    if data.get("instance_counts"):
        counts = data["instance_counts"]
        if not isinstance(counts, list | tuple) or len(counts) > MAX_INSTANCE_COUNT_VALUES:
            raise CostInputError(
                "instance_counts", f"must be a list of at most {MAX_INSTANCE_COUNT_VALUES} whole numbers"
            )
        values["instance_counts"] = tuple(
            _instance_count(count, f"instance_counts[{i}]") for i, count in enumerate(counts)
        )
    for model in values.get("pricing_models", ()):
        if model not in RANKED_PRICING_MODELS:
            raise CostInputError("pricing_models", f"unknown pricing model {model!r}")
    if data.get("currency") is not None:
        values["currency"] = currency_code(data["currency"], "currency")
    for key, (low, high, low_allowed) in SPOT_OPTION_BOUNDS.items():
        if data.get(key) is not None:
            values[key] = _bounded(data[key], key, low, high, low_allowed)
    return RankingOptions(**values)


def _instance_count(value: object, field: str) -> int:
    """One requested instance count: a whole number from 1 to MAX_INSTANCES (ranking.options: the published
    pretraining clusters, 48 to 2,048 nodes, fit under it), the bound said in the error."""
    number = positive_int(value, field)
    if number > MAX_INSTANCES:
        raise CostInputError(
            field,
            f"must be at most {MAX_INSTANCES:,} instances (the bound a ranking row may use: Llama 3 405B's "
            f"2,048 nodes of 8 GPUs), got {number}",
        )
    return number


def _bounded(value: object, field: str, low: float, high: float, low_allowed: bool) -> float:
    number = float(non_negative(value, field))
    if number > high or (number == low and not low_allowed):
        raise CostInputError(
            field, f"must be {'>=' if low_allowed else '>'} {low:g} and <= {high:g}, got {number:g}"
        )
    return number


def _flag(value: object, field: str) -> bool:
    if not isinstance(value, bool):
        raise CostInputError(field, f"must be true or false, got {value!r}")
    return value


def _text_list(value: object, field: str) -> list[str]:
    if isinstance(value, str):
        value = [part.strip() for part in value.split(",") if part.strip()]
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise CostInputError(field, "must be a list of names")
    return value


class WorkloadSpecInputError(CostInputError):
    """A workload spec with one or more bad fields: a CostInputError naming the first (``field``) that also
    carries every one (``errors``, the sizing engine's FieldErrors), so a person can fix them all at once."""

    def __init__(self, errors: list[FieldError]):
        self.errors = errors
        problems = [(error.path, error.message) for error in errors]
        super().__init__(errors[0].path, errors[0].message, problems=problems)

    def lines(self) -> list[str]:
        return [f"{error.path}: {error.message}" for error in self.errors]


def workload_spec_parse(document: object) -> WorkloadSpec:
    """The sizing engine's parser; its errors re-raised as one WorkloadSpecInputError naming every field."""
    try:
        return parse_workload_spec(document)  # type: ignore[arg-type]
    except WorkloadSpecError as error:
        raise WorkloadSpecInputError(list(error.errors)) from None


def _measurements(workload: models.Workload | None, spec: WorkloadSpec) -> ShapeMeasurements:
    """Runs of the same shape and method (any workload), then this workload's own runs on top."""
    found = measurements_for_spec(spec)
    if workload is None:
        return found
    speeds, dates = dict(found.speeds), dict(found.dates)
    rows = workload.benchmarks.filter(tokens_per_second__isnull=False, gpu__isnull=False, cpu_only=False)
    for row in rows.order_by("measured_at").select_related("gpu"):
        speeds[(row.gpu.slug, row.gpu_count)] = float(row.tokens_per_second)
        dates[(row.gpu.slug, row.gpu_count)] = f"{row.measured_at:%Y-%m-%d}"
    return ShapeMeasurements(speeds, dates)


MAX_PREPARED = 16  # distinct option sets prepared per context (a prepared 100,000-offer table is ~10 MB)


@dataclass(frozen=True)
class RankingContext:
    """What every ranking in a batch shares: read once per request or per recompute chunk."""

    offers: Any  # pandas DataFrame from selectors.ranking_offer_frame()
    gpus: dict[str, Any]
    storage_rates: dict[str, float]
    storage_assumed: frozenset[str] = frozenset()  # providers whose storage rate is a stated default
    _prepared: dict[tuple, PreparedOffers] = field(default_factory=dict, compare=False, repr=False)
    _conversions: dict[str, UsdConversion] = field(default_factory=dict, compare=False, repr=False)

    _catalog: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)
    _spot_histories: dict[int, Any] = field(default_factory=dict, compare=False, repr=False)
    _calibration: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)
    _keys: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def current(cls) -> RankingContext:
        """The context of the current prices, shared by every request of this price version and minute
        in this process (procurement/offer_cache.py): the cached offer table with its stale flags as of
        this minute, GPU datasheets and storage rates (all covered by the price version), and what
        rankings fill in as they go (prepared tables, FX conversions, spot histories). A warm request
        reads the price version (one query) and ranks."""
        now = timezone.now()
        return offer_cache.context_for(
            price_version_key(),
            int(now.timestamp() // offer_cache.CONTEXT_S),
            build=lambda table: cls.of_table(with_staleness(table.copy(deep=False), now)),
            table=selectors.ranking_offer_table,
        )

    @classmethod
    def of_table(cls, offers) -> RankingContext:
        """A context of this offer table with the stored GPU datasheets and storage rates."""
        rates = selectors.block_storage_rates_with_sources()
        usd = {provider: rate for provider, (rate, _source) in rates.items()}
        return cls(offers, selectors.ranking_gpus(), usd, selectors.assumed_storage_providers(rates))

    def prepared(self, options: RankingOptions) -> PreparedOffers:
        """The offer table filtered for these options, prepared once per distinct set of what ``prepare``
        reads (filters, illustrative and outlier choices, storage rates, interconnect rules, datasheets)."""
        key = (
            options.providers,
            options.regions,
            options.pricing_models,
            options.gpus,
            options.include_illustrative,
            options.rank_outliers_at_quote,
            options.interconnect_rules,
            tuple(sorted(options.storage_rate_per_gb_month.items())),
            options.storage_rate_assumed,
            options.assumed_storage_rate_per_gb_month,
            self._gpus_key(),
        )
        if key not in self._prepared:
            if len(self._prepared) >= MAX_PREPARED:
                self._prepared.clear()
            self._prepared[key] = prepare(self.offers, self.gpus, options)
        return self._prepared[key]

    def _gpus_key(self) -> HashedKey:
        """The datasheets as a key, hashed once per context: hashing 33 GpuSpec dataclasses again for every
        ranking cost ~2% of a recompute (issue 26, "Speed"). The context's datasheets never change."""
        if "gpus" not in self._keys:
            self._keys["gpus"] = HashedKey(tuple(sorted(self.gpus.items())))
        return self._keys["gpus"]

    def check_filters(self, options: RankingOptions) -> None:
        """Provider, region and GPU filters must name things the catalog knows: a typo would otherwise
        rank nothing and store an empty recommendation. Raises CostInputError naming the field."""
        if not self._catalog:
            self._catalog.update(catalog_names())
        known = self._catalog
        for name in options.providers:
            if name not in known["providers"]:
                raise CostInputError("providers", _unknown("provider", name, known["providers"]))
        regions = known["regions"]
        for code in options.regions:
            owners = regions.get(code, set())
            if not owners:
                raise CostInputError("regions", _unknown("region", code, regions))
            if options.providers and not owners & set(options.providers):
                raise CostInputError(
                    "regions",
                    f"region {code!r} belongs to {', '.join(sorted(owners))}, not to the providers asked for",
                )
        for slug in options.gpus:
            if slug not in self.gpus:
                raise CostInputError("gpus", _unknown("GPU model", slug, self.gpus))

    def spot_price_histories(self, offer_ids) -> dict[int, Any]:
        """Hourly USD spot price histories for the spot Monte Carlo (``options.spot_price_history``): one
        query for the offers this batch has not read yet (the same cheap offers top most rankings)."""
        missing = [offer_id for offer_id in offer_ids if offer_id not in self._spot_histories]
        if missing:
            found = spot_price_histories_usd(missing)
            self._spot_histories.update({offer_id: found.get(offer_id) for offer_id in missing})
        return {
            offer_id: self._spot_histories[offer_id]
            for offer_id in offer_ids
            if self._spot_histories[offer_id] is not None
        }

    def calibration(self) -> Calibration:
        """The fitted calibration factors (procurement.services.calibration), read once per batch."""
        if "factors" not in self._calibration:
            self._calibration["factors"] = calibration_factors()
        return self._calibration["factors"]

    def conversion(self, currency: str) -> UsdConversion:
        """The stored FX rate from USD, read once per batch (raises CostInputError naming the currency)."""
        if currency not in self._conversions:
            self._conversions[currency] = usd_conversion(currency)
        return self._conversions[currency]


def catalog_names() -> dict[str, Any]:
    """Provider slugs, and region code -> the providers that have it (one query each)."""
    regions: dict[str, set[str]] = {}
    for code, provider in Region.objects.values_list("code", "provider__slug"):
        regions.setdefault(code, set()).add(provider)
    return {"providers": set(Provider.objects.values_list("slug", flat=True)), "regions": regions}


def _unknown(kind: str, name: str, known) -> str:
    close = difflib.get_close_matches(name, sorted(known), n=1)
    return f"unknown {kind} {name!r}" + (f" (did you mean {close[0]!r}?)" if close else "")


def advisor_dates(offers) -> list[str | None]:
    """Per offer row: the date of the Spot Advisor snapshot its interruption band comes from (None where
    the advisor has no band), so a spot row can say how old its interruption rate is."""
    newest: dict[tuple[str, str, str], str] = {}
    rows = SpotAdvisory.objects.order_by("observed_at").values_list(
        "provider__slug", "region_code", "instance_type_name", "observed_at"
    )
    for provider, region, instance, observed_at in rows:
        newest[(provider, region, instance)] = observed_at.date().isoformat()
    keys = zip(offers["provider"], offers["region"], offers["instance_type"], strict=True)
    return [newest.get(key) for key in keys]


def recommendation_compute(
    *,
    spec: WorkloadSpec,
    options: RankingOptions,
    workload: models.Workload | None = None,
    context: RankingContext | None = None,
    measurements: ShapeMeasurements | None = None,
    now: dt.datetime | None = None,
) -> Ranking:
    """Rank the current catalog for a workload: storage from the sizing engine's disk estimate,
    priced at each provider's block-storage rate; measured speeds from the workload's benchmarks.
    ``now``: the instant prices are aged at (None: the moment it ranks)."""
    context = context or RankingContext.current()
    context.check_filters(options)
    if not context.gpus:
        # An empty catalog (a fresh database before `load_catalog`) has nothing to rank or to size the disk on.
        raise CostInputError(
            "catalog", "the GPU catalog is empty: load it first (manage.py load_catalog, or a price refresh)"
        )
    measurements = _measurements(workload, spec) if measurements is None else measurements
    disk_gb = host_requirements(spec, next(iter(context.gpus.values())), 1, 0.0)["disk_gb_per_node"]
    options = replace(
        options,
        fx_rate_from_usd=context.conversion(options.currency).rate,
        storage_gb=float(disk_gb),
        storage_rate_per_gb_month=context.storage_rates,
        storage_rate_assumed=context.storage_assumed,
        measured_tokens_per_second=measurements.speeds,
        measured_dates=measurements.dates,
        calibration=context.calibration() if options.use_calibration else {},
        spot_price_history=context.spot_price_histories,
    )
    try:
        # the whole offer table goes along: a deadline plan looks up on-demand fallback prices in it
        return rank_workload(
            spec, context.offers, context.gpus, options, now=now, prepared=context.prepared(options)
        )
    except ValueError as error:  # e.g. a training workload without training_tokens
        field_name, _, message = str(error).partition(": ")
        raise CostInputError(field_name, message) from None


def ranking_prices_used(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    keys = (
        "observation_id",
        "provider",
        "instance_type",
        "region",
        "zone",
        "pricing_model",
        "price_per_hour",
        "currency",
        "price_observed_at",
        "stale",
        "price_quality",
    )
    seen, used = set(), []
    for row in results:
        if row["observation_id"] not in seen:
            seen.add(row["observation_id"])
            used.append({key: row[key] for key in keys if key in row})
    return used


def recommendation_fingerprint(parameters: dict[str, Any], results: list[dict[str, Any]]) -> str:
    """Same parameters and same ranked prices and totals -> same hash: an unchanged recompute adds nothing."""
    payload = {
        "parameters": parameters,
        "rows": [(r["observation_id"], r["instances"], r["plan"]["name"], r["total_cost"]) for r in results],
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()


def recommendation_unchanged(
    stored: models.Recommendation | None, workload: models.Workload, fingerprint: str
) -> bool:
    """The stored row already holds this answer: the same fingerprint, under the workload's current spec (or a
    row that kept no spec, {})."""
    return stored is not None and stored.fingerprint == fingerprint and stored.spec in ({}, workload.spec)


def recommendation_fields(
    workload: models.Workload, parameters: dict[str, Any], results: list[dict[str, Any]], fingerprint: str
) -> dict[str, Any]:
    """A Recommendation row's stored fields for these ranked results (who saved it is the caller's)."""
    return {
        "workload": workload,
        "parameters": parameters,
        "spec": workload.spec,
        "results": results,
        "prices_used": ranking_prices_used(results),
        "fingerprint": fingerprint,
    }


def recommendation_preview(
    *,
    workload: models.Workload,
    parameters: dict[str, Any] | None = None,
    context: RankingContext | None = None,
) -> Ranking:
    """Rank a stored workload under ad-hoc options without storing anything: a query never replaces
    the workload's saved answer (that takes ``recommendation_create``, the API's ``save: true``)."""
    options = ranking_options_parse(plain_json(parameters or {}))
    spec = workload_spec_parse(workload.spec)
    return recommendation_compute(spec=spec, options=options, workload=workload, context=context)


def recommendation_create(
    *,
    workload: models.Workload,
    parameters: dict[str, Any] | None = None,
    context: RankingContext | None = None,
    saved_by=None,
) -> tuple[models.Recommendation, bool]:
    """Rank and store a dated Recommendation as the workload's saved answer, with the options and the
    spec it was computed under; returns (row, created). Unchanged results add no row. Recompute re-ranks
    under the newest saved row's options, so these options stay the workload's until someone saves others."""
    parameters = plain_json(parameters or {})
    options = ranking_options_parse(parameters)
    spec = workload_spec_parse(workload.spec)
    ranking = recommendation_compute(spec=spec, options=options, workload=workload, context=context)
    fingerprint = recommendation_fingerprint(parameters, ranking.results)
    latest = workload.recommendations.order_by("-computed_at", "-pk").first()
    if recommendation_unchanged(latest, workload, fingerprint):
        latest.why_empty = ranking.why_empty  # not stored: said in the response when nothing ranked
        return latest, False
    row = models.Recommendation.objects.create(
        **recommendation_fields(workload, parameters, ranking.results, fingerprint),
        saved_by=saved_by if getattr(saved_by, "pk", None) else None,
    )
    row.why_empty = ranking.why_empty
    return row, True


@transaction.atomic
def workload_create_from_spec(*, document: dict[str, Any], owner=None, team=None) -> models.Workload:
    """Validate, then store. The same spec saved again for the same owner and team (one after the other
    or at once) is one save: it returns the stored workload (``workload.created`` says which), and
    ``recommendation_create`` then adds no row while its ranking is unchanged."""
    spec = workload_spec_parse(document)
    saved_from = input_fingerprint(document, owner=owner, team=team)
    workload, created = save_once(
        lambda: models.Workload.objects.filter(input_fingerprint=saved_from).first(),
        lambda: models.Workload.objects.create(
            name=spec.name,
            task=spec.task,
            spec=plain_json(document),
            owner=owner,
            team=team,
            input_fingerprint=saved_from,
        ),
    )
    workload.created = created
    return workload


@transaction.atomic
def workload_update_spec(workload: models.Workload, *, document: dict[str, Any]) -> models.Workload:
    """Replace a workload's spec (validated first: a bad spec raises and changes nothing). Saved
    answers keep the spec they ranked; the page says when the workload changed since."""
    spec = workload_spec_parse(document)
    workload.name, workload.task, workload.spec = spec.name, spec.task, plain_json(document)
    workload.input_fingerprint = None  # edited: no longer what it was saved from
    workload.save(update_fields=["name", "task", "spec", "input_fingerprint", "updated_at"])
    return workload


COPY_PREFIX = "copy of "


@transaction.atomic
def workload_duplicate(workload: models.Workload, *, owner=None, team=None) -> models.Workload:
    """A new workload with the same spec (named "copy of ..."), owned by whoever duplicated it; saved
    answers are not copied (they belong to the original)."""
    name = (COPY_PREFIX + workload.name)[: models.Workload._meta.get_field("name").max_length]
    document = dict(workload.spec) | {"name": name}
    return models.Workload.objects.create(
        name=name,
        task=workload.task,
        spec=document,
        owner=owner,
        team=team if team else workload.team,
        notify_email=workload.notify_email,
        notify_webhook=workload.notify_webhook,
    )
