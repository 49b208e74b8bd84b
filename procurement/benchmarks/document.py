"""Read and check a benchmark JSON document (docs/benchmark-format.md) before anything is stored.

Every problem is collected and named by its path (`summary.step_seconds_median`, `steps[3].seconds`),
so a file is fixed in one pass. Plain Python: the import service turns the result into rows.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from datetime import datetime

SUPPORTED_SCHEMA_VERSIONS = (1,)
MAX_DOCUMENT_BYTES = 20 * 2**20
MAX_STEPS = 10_000
MAX_SAMPLES = 200_000
TASKS = ("pretrain", "full_finetune", "lora", "qlora", "inference")


class BenchmarkDocumentError(ValueError):
    def __init__(self, errors: list[tuple[str, str]], source: str = "benchmark"):
        self.errors, self.source = errors, source
        super().__init__("; ".join(f"{source}: {path}: {message}" for path, message in errors))


@dataclass(frozen=True)
class BenchmarkDocument:
    raw: dict
    sha256: str
    measured_at: datetime
    task: str
    model_name: str
    precision: str
    gpu_name: str | None
    gpu_count: int
    tiny_cpu_model: bool
    step_seconds_median: float
    tokens_per_second: float
    peak_memory_gib: float | None
    flops_per_token: float
    price_per_hour: float | None
    currency: str | None
    instance_type: str | None

    @property
    def samples(self) -> list[dict]:
        return self.raw.get("samples", [])

    @property
    def steps(self) -> list[dict]:
        return self.raw.get("steps", [])


def document_sha256(raw: dict) -> str:
    """A content hash independent of key order and whitespace: the import's idempotency key."""
    return hashlib.sha256(json.dumps(raw, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def load_document(data: bytes, source: str = "benchmark") -> BenchmarkDocument:
    if not data.strip():
        raise BenchmarkDocumentError([("", "empty file")], source)
    if len(data) > MAX_DOCUMENT_BYTES:
        raise BenchmarkDocumentError([("", f"larger than {MAX_DOCUMENT_BYTES // 2**20} MiB")], source)
    try:
        raw = json.loads(data)
    except (UnicodeDecodeError, RecursionError) as error:
        raise BenchmarkDocumentError([("", f"not UTF-8 JSON ({type(error).__name__})")], source) from None
    except json.JSONDecodeError as error:
        raise BenchmarkDocumentError(
            [(f"line {error.lineno} column {error.colno}", error.msg)], source
        ) from None
    return check_document(raw, source)


def _number(errors, raw, path, *, positive=True, optional=False):
    node = raw
    for key in path.split("."):
        node = node.get(key) if isinstance(node, dict) else None
    if node is None:
        if not optional:
            errors.append((path, "required"))
        return None
    if isinstance(node, bool) or not isinstance(node, int | float) or not math.isfinite(node):
        errors.append((path, f"must be a finite number, got {str(node)[:40]!r}"))
        return None
    if positive and node <= 0:
        errors.append((path, f"must be positive, got {node}"))
        return None
    if not positive and node < 0:
        errors.append((path, f"must not be negative, got {node}"))
        return None
    return float(node)


def _check_steps(errors, raw) -> None:
    steps = raw.get("steps")
    if not isinstance(steps, list) or not steps:
        errors.append(("steps", "a non-empty list of step records is required"))
        return
    if len(steps) > MAX_STEPS:
        errors.append(("steps", f"at most {MAX_STEPS} steps"))
        return
    for index, step in enumerate(steps):
        seconds = step.get("seconds") if isinstance(step, dict) else None
        if isinstance(seconds, bool) or not isinstance(seconds, int | float) or not seconds > 0:
            errors.append((f"steps[{index}].seconds", "must be a positive number of seconds"))


def _check_samples(errors, raw) -> None:
    samples = raw.get("samples", [])
    if not isinstance(samples, list) or len(samples) > MAX_SAMPLES:
        errors.append(("samples", f"a list of at most {MAX_SAMPLES} samples"))
        return
    for index, sample in enumerate(samples):
        if not isinstance(sample, dict):
            errors.append((f"samples[{index}]", "must be an object"))
            continue
        for key in ("gpu_util_pct", "cpu_util_pct"):
            value = sample.get(key)
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 100
            ):
                errors.append((f"samples[{index}].{key}", "must be a percentage 0..100"))


def _text(errors, raw, path, *, optional=False, choices=None) -> str | None:
    node = raw
    for key in path.split("."):
        node = node.get(key) if isinstance(node, dict) else None
    if node is None or node == "":
        if not optional:
            errors.append((path, "required"))
        return None
    if not isinstance(node, str) or len(node) > 200 or "\x00" in node:
        errors.append((path, "must be text of at most 200 characters"))
        return None
    if choices and node not in choices:
        errors.append((path, f"must be one of {', '.join(choices)}"))
        return None
    return node


def check_document(raw, source: str = "benchmark") -> BenchmarkDocument:
    if not isinstance(raw, dict):
        raise BenchmarkDocumentError([("", "the document must be a JSON object")], source)
    version = raw.get("schema_version")
    if version not in SUPPORTED_SCHEMA_VERSIONS:
        supported = ", ".join(map(str, SUPPORTED_SCHEMA_VERSIONS))
        raise BenchmarkDocumentError(
            [("schema_version", f"unknown schema version {str(version)[:20]} (supported: {supported})")],
            source,
        )
    errors: list[tuple[str, str]] = []
    measured_at = None
    stamp = _text(errors, raw, "measured_at")
    if stamp:
        try:
            measured_at = datetime.fromisoformat(stamp)
            if measured_at.tzinfo is None:
                errors.append(("measured_at", "needs a UTC offset"))
        except ValueError:
            errors.append(("measured_at", f"not an ISO 8601 time: {stamp[:40]!r}"))
    task = _text(errors, raw, "workload.task", choices=TASKS)
    name = _text(errors, raw, "workload.name")
    precision = _text(errors, raw, "run.precision")
    step_median = _number(errors, raw, "summary.step_seconds_median")
    tokens_per_second = _number(errors, raw, "summary.tokens_per_second_median")
    peak = _number(errors, raw, "summary.peak_memory_allocated_gib", optional=True)
    flops = _number(errors, raw, "run.flops_per_token")
    gpu_count = _number(errors, raw, "environment.gpus_used", positive=False)
    price = _number(errors, raw, "environment.price_per_hour", optional=True)
    gpu_name = _text(errors, raw, "environment.gpu_name", optional=True)
    currency = _text(errors, raw, "environment.currency", optional=True)
    if currency is not None and not (len(currency) == 3 and currency.isalpha() and currency.isupper()):
        errors.append(("environment.currency", "must be an ISO 4217 code such as USD"))
        currency = None
    instance_type = _text(errors, raw, "environment.instance_type", optional=True)
    _check_steps(errors, raw)
    _check_samples(errors, raw)
    tiny = bool((raw.get("run") or {}).get("tiny_cpu_model"))
    if errors:
        raise BenchmarkDocumentError(errors, source)
    return BenchmarkDocument(
        raw=raw,
        sha256=document_sha256(raw),
        measured_at=measured_at,
        task=task,
        model_name=name,
        precision=precision,
        gpu_name=gpu_name,
        gpu_count=int(gpu_count),
        tiny_cpu_model=tiny,
        step_seconds_median=step_median,
        tokens_per_second=tokens_per_second,
        peak_memory_gib=peak,
        flops_per_token=flops,
        price_per_hour=price,
        currency=currency,
        instance_type=instance_type,
    )
