"""Store runner documents as BenchmarkResult rows: map the GPU, price the run, compare with the estimate,
diagnose, and hand measured speeds to the ranking.

Idempotent: the document's content hash is unique, so re-importing a file adds nothing. A document is
checked whole before anything is written (procurement.benchmarks.document).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from decimal import Decimal

from django.db import IntegrityError, transaction

from pricing.catalog_table import gpu_catalog_rows
from pricing.choices import PricingModel
from pricing.models import GpuModel, InstanceType
from pricing.price_version import price_version_bump
from pricing.selectors import current_price_observations
from procurement import models
from procurement.benchmarks import diagnostics, unit_costs
from procurement.benchmarks.document import BenchmarkDocument, BenchmarkDocumentError, load_document
from procurement.benchmarks.gpu_names import slug_for_driver_name
from procurement.sizing import FEASIBLE_VERDICTS, WorkloadSpecError, parse_workload_spec, size_workload
from procurement.sizing.gpus import gpu_spec_from_record
from procurement.sizing.spec import WorkloadSpec

SHAPE_FIELDS = (
    "params",
    "num_layers",
    "hidden_size",
    "num_attention_heads",
    "num_key_value_heads",
    "intermediate_size",
    "vocab_size",
)


@dataclass(frozen=True)
class BenchmarkImport:
    result: models.BenchmarkResult
    created: bool


def shape_key(spec: WorkloadSpec) -> str:
    """What a workload and a benchmark must share to stand in for each other: model shape, method, precision."""
    model = spec.model
    parts = [spec.task, spec.precision, spec.weight_quantization] + [
        str(getattr(model, name)) for name in SHAPE_FIELDS
    ]
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:32]


def _gpu(document: BenchmarkDocument, gpu_slug: str | None) -> GpuModel | None:
    if gpu_slug:
        gpu = GpuModel.objects.filter(slug=gpu_slug).first()
        if gpu is None:
            raise BenchmarkDocumentError([("--gpu", f"no GPU model {gpu_slug!r} in the catalog")])
        return gpu
    if document.gpu_name is None:
        return None  # a CPU path run
    slug = slug_for_driver_name(document.gpu_name)
    gpu = GpuModel.objects.filter(slug=slug).first() if slug else None
    if gpu is None:
        raise BenchmarkDocumentError(
            [("environment.gpu_name", f"GPU {document.gpu_name!r} is not in the catalog")]
        )
    return gpu


def _price(
    document: BenchmarkDocument, instance_type: InstanceType | None
) -> tuple[Decimal | None, str, str]:
    if document.price_per_hour is not None:
        return (
            Decimal(str(document.price_per_hour)).quantize(Decimal("0.000001")),
            document.currency or "USD",
            "given in the run",
        )
    if instance_type is None:
        return None, "", ""
    observation = (
        current_price_observations(offer__instance_type=instance_type, pricing_model=PricingModel.ON_DEMAND)
        .order_by("amount_per_hour")
        .first()
    )
    if observation is None:
        return None, "", ""
    return (
        observation.amount_per_hour,
        observation.currency,
        f"current on-demand catalog price ({observation.observed_at:%Y-%m-%d})",
    )


def _estimate(spec: WorkloadSpec | None, gpu: GpuModel | None, document: BenchmarkDocument) -> dict:
    """The sizing engine's uncalibrated figures for the spec's full model on as many such GPUs as the run
    used (what the measurement checks: an 8-GPU run against the 8-GPU estimate, not the 1-GPU one)."""
    if spec is None or gpu is None:
        return {}
    count = max(document.gpu_count, 1)
    sized = size_workload(spec, [gpu_spec_from_record(gpu)], [count])["candidates"][0]
    speed = sized["throughput"]
    estimated = speed.get("training_tokens_per_second") or speed.get("decode_tokens_per_second_total")
    run = document.raw.get("run", {})
    layer_share = run.get("layers_run", 1) / max(run.get("layers_in_spec", 1), 1)
    # A run of K of L layers is scaled back by K/L (step time is nearly linear in depth; embeddings and
    # the head are ignored, a small overstatement for shallow runs). Stated on the page.
    measured_full = document.tokens_per_second * layer_share
    return {
        "tokens_per_second": estimated,
        "peak_memory_gib": sized["total_per_gpu_gib"],
        "capacity_gib": sized["capacity_gib"],
        "measured_tokens_per_second_full_depth": measured_full,
        "layer_share": layer_share,
        "comparable_memory": layer_share == 1,
        "communication_share": speed.get("communication_share"),
        "exposed_communication_share": speed.get("exposed_communication_share"),
    }


def _spec(document: BenchmarkDocument) -> WorkloadSpec | None:
    data = (document.raw.get("workload") or {}).get("spec")
    if not isinstance(data, dict):
        return None
    try:
        return parse_workload_spec(data)
    except WorkloadSpecError as error:
        raise BenchmarkDocumentError([(f"workload.spec.{e.path}", e.message) for e in error.errors]) from None


def _cheaper_fit(spec: WorkloadSpec | None, gpu: GpuModel | None) -> str | None:
    """The cheapest GPU (current on-demand price per GPU-hour) that the sizing engine says holds the
    workload on one card, if it is cheaper than the measured one: the oversized rule's suggestion."""
    if spec is None or gpu is None:
        return None
    prices = {
        row["gpu"].slug: row["on_demand"].price_per_gpu_hour_usd
        for row in gpu_catalog_rows()
        if row["on_demand"] is not None
    }
    if gpu.slug not in prices:
        return None
    models_by_slug = {m.slug: m for m in GpuModel.objects.filter(slug__in=list(prices))}
    sized = size_workload(spec, [gpu_spec_from_record(m) for m in models_by_slug.values()], [1])["candidates"]
    fitting = [
        c["gpu"] for c in sized if c["verdict"] in FEASIBLE_VERDICTS and prices[c["gpu"]] < prices[gpu.slug]
    ]
    if not fitting:
        return None
    best = min(fitting, key=prices.__getitem__)
    return f"{models_by_slug[best].name} (from {prices[best]:.2f} USD per GPU-hour on demand vs {prices[gpu.slug]:.2f})"


def _diagnose(document: BenchmarkDocument, estimate: dict, cheaper_fit: str | None = None) -> list[dict]:
    run = document.raw.get("run", {})
    steps = [s["seconds"] for s in document.steps if not s.get("warmup")]
    findings = diagnostics.diagnose(
        samples=document.samples,
        step_seconds=steps,
        micro_batch_size=int(run.get("micro_batch_size") or run.get("concurrency") or 1),
        peak_gib=document.peak_memory_gib,
        capacity_gib=estimate.get("capacity_gib"),
        cheaper_fit=cheaper_fit,
        communication_share=estimate.get("communication_share"),
        exposed_communication_share=estimate.get("exposed_communication_share"),
    )
    return [finding.as_dict() for finding in findings]


def _oversized_suggestion(spec, gpu, document: BenchmarkDocument, estimate: dict) -> str | None:
    capacity = estimate.get("capacity_gib")
    if (
        not capacity
        or not document.peak_memory_gib
        or document.peak_memory_gib / capacity >= diagnostics.OVERSIZED_SHARE
    ):
        return None
    return _cheaper_fit(spec, gpu)


def benchmark_import(
    data: bytes, *, source: str, gpu_slug: str | None = None, owner=None, team=None
) -> BenchmarkImport:
    """Store a runner document once (by its content hash), owned by ``owner`` and ``team`` as a workload
    is; the same document again returns the stored row, whoever uploaded it (the caller checks that it
    may be shown)."""
    document = load_document(data, source)
    existing = models.BenchmarkResult.objects.filter(document_sha256=document.sha256).first()
    if existing:
        return BenchmarkImport(existing, False)
    spec = _spec(document)
    gpu = _gpu(document, gpu_slug)
    instance_type = (
        InstanceType.objects.filter(name=document.instance_type).first() if document.instance_type else None
    )
    price, currency, basis = _price(document, instance_type)
    estimate = _estimate(spec, gpu, document) if not document.tiny_cpu_model else {}
    summary = document.raw["summary"]
    costs = {}
    if price is not None:
        costs = unit_costs.unit_costs(
            price_per_hour=price,
            tokens_per_second=document.tokens_per_second,
            step_seconds=document.step_seconds_median,
            samples_per_step=(document.raw.get("run") or {}).get("micro_batch_size")
            if document.task != "inference"
            else None,
        )
    row = models.BenchmarkResult(
        owner=owner,
        team=team,
        gpu=gpu,
        gpu_count=max(document.gpu_count, 1),
        instance_type=instance_type,
        precision=document.precision if document.precision in ("fp32", "fp16", "bf16", "fp8") else "bf16",
        tokens_per_second=Decimal(str(round(document.tokens_per_second, 3))),
        step_time_seconds=Decimal(str(round(document.step_seconds_median, 4))),
        peak_memory_gib=Decimal(str(round(document.peak_memory_gib, 3)))
        if document.peak_memory_gib
        else None,
        peak_memory_definition="allocated" if document.peak_memory_gib else "",
        measured_at=document.measured_at,
        source=source.replace("\x00", "")[:300],  # a caller's label; PostgreSQL text holds no NUL
        document_sha256=document.sha256,
        task=document.task,
        model_name=document.model_name[:200],
        shape_key=shape_key(spec) if spec else "",
        cpu_only=gpu is None or document.tiny_cpu_model,
        price_per_hour=price,
        currency=currency,
        price_basis=basis[:120],
        unit_costs={key: str(value) for key, value in costs.items()},
        estimate=estimate,
        diagnostics=_diagnose(document, estimate, _oversized_suggestion(spec, gpu, document, estimate)),
        document=json.loads(json.dumps(document.raw)),
        notes=f"runner document; median of {summary.get('measured_steps')} steps",
    )
    try:
        with transaction.atomic():
            row.save()
            # a new run changes the calibration factors every ranking applies: the ranking context cached
            # per price version (procurement/offer_cache.py) is rebuilt, the one way caches go stale
            price_version_bump()
    except IntegrityError:  # the same document imported concurrently: the other import stored it
        return BenchmarkImport(models.BenchmarkResult.objects.get(document_sha256=document.sha256), False)
    return BenchmarkImport(row, True)


@dataclass(frozen=True)
class ShapeMeasurements:
    """Measured full-depth tokens/s and the day each was measured, per (GPU slug, GPU count)."""

    speeds: dict[tuple[str, int], float]
    dates: dict[tuple[str, int], str]


NO_MEASUREMENTS = ShapeMeasurements({}, {})


def shape_measurements(shape_keys=None) -> dict[str, ShapeMeasurements]:
    """Every usable benchmark (a GPU run with a shape), per shape key, in one query; the newest run wins.
    `shape_keys=None` reads them all (a recompute chunk shares one read)."""
    rows = models.BenchmarkResult.objects.filter(
        cpu_only=False, gpu__isnull=False, tokens_per_second__isnull=False
    ).exclude(shape_key="")
    if shape_keys is not None:
        rows = rows.filter(shape_key__in=list(shape_keys))
    found: dict[str, ShapeMeasurements] = {}
    for key, slug, count, tokens, estimate, measured_at in rows.order_by("measured_at").values_list(
        "shape_key", "gpu__slug", "gpu_count", "tokens_per_second", "estimate", "measured_at"
    ):
        full = (estimate or {}).get("measured_tokens_per_second_full_depth") or float(tokens)
        entry = found.setdefault(key, ShapeMeasurements({}, {}))
        entry.speeds[(slug, count)] = float(full)
        entry.dates[(slug, count)] = f"{measured_at:%Y-%m-%d}"
    return found


def measurements_for_spec(spec: WorkloadSpec) -> ShapeMeasurements:
    """Benchmarks of the same model shape, method and precision, whichever workload they were run for."""
    key = shape_key(spec)
    return shape_measurements([key]).get(key, NO_MEASUREMENTS)
