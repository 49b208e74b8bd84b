"""Read and check a benchmark JSON document (docs/benchmark-format.md) before anything is stored.

Every problem is collected and named by its path (`summary.step_seconds_median`, `steps[3].seconds`),
so a file is fixed in one pass. Plain Python: the import service turns the result into rows.
"""

from __future__ import annotations

import codecs
import hashlib
import json
import math
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from gpuledger.errors import ROOT, InputError

SUPPORTED_SCHEMA_VERSIONS = (1,)
MAX_DOCUMENT_BYTES = 20 * 2**20
MAX_STEPS = 10_000
MAX_SAMPLES = 200_000
TASKS = ("pretrain", "full_finetune", "lora", "qlora", "inference")
# Hostile-input bounds. The runner writes a few levels of objects; the stored columns (procurement.models
# BenchmarkResult) hold tokens/s < 1e11, step seconds < 1e8, peak GiB < 1e7 and at most 32,767 GPUs, so
# the physical bounds below keep every figure storable (a 1e308 would overflow the column on PostgreSQL).
MAX_DEPTH = 32
MAX_INT_DIGITS = 30  # a longer integer literal is read as infinite, then refused where it stands
MAX_TOKENS_PER_SECOND = 1e9
MAX_STEP_SECONDS = 1e6  # 11.6 days for one step
MAX_MEMORY_GIB = 1e5
MAX_FLOPS_PER_TOKEN = 1e18  # 6 x a 1e17-parameter model
MAX_GPUS = 1024
MAX_PRICE_PER_HOUR = 1e5
MAX_COUNT = 1e6  # micro-batch size, concurrency, layer counts
FUTURE_ALLOWANCE = timedelta(days=1)  # clock skew between the measuring machine and this one


class BenchmarkDocumentError(InputError):
    """Every problem of a benchmark document, each (path or "line L, column C", message)."""

    def __init__(self, errors: list[tuple[str, str]], source: str = "benchmark"):
        self.errors, self.source = errors, source
        path, message = errors[0] if errors else ("", "")
        text = "; ".join(f"{source}: {path}: {message}" for path, message in errors)
        problems = [(path or ROOT, message) for path, message in errors]
        super().__init__(path, message, file=source, problems=problems, text=text)


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


def _place(data: bytes | str, offset: int) -> str:
    newline = b"\n" if isinstance(data, bytes) else "\n"
    line = data.count(newline, 0, offset) + 1
    return f"line {line} column {offset - (data.rfind(newline, 0, offset) + 1) + 1}"


def _decoded(data: bytes, source: str) -> str:
    """UTF-8 only (docs/benchmark-format.md): json.loads would guess UTF-16 and UTF-32 from the bytes."""
    data = data.removeprefix(codecs.BOM_UTF8)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        message = f"not UTF-8: byte 0x{data[error.start]:02x}"
        raise BenchmarkDocumentError([(_place(data, error.start), message)], source) from None
    if "\x00" in text:  # never valid JSON, even in a string; UTF-16 and UTF-32 text is full of them
        message = "a NUL byte: not UTF-8 JSON (UTF-16 or UTF-32?)"
        raise BenchmarkDocumentError([(_place(text, text.index("\x00")), message)], source)
    return text


def _int_literal(text: str) -> int | float:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        return -math.inf if text.startswith("-") else math.inf
    return int(text)


def load_document(data: bytes, source: str = "benchmark") -> BenchmarkDocument:
    if not data.strip():
        raise BenchmarkDocumentError([("", "empty file")], source)
    if len(data) > MAX_DOCUMENT_BYTES:
        raise BenchmarkDocumentError([("", f"larger than {MAX_DOCUMENT_BYTES // 2**20} MiB")], source)
    text = _decoded(data, source)
    try:
        raw = json.loads(text, parse_int=_int_literal)
    except RecursionError:
        raise BenchmarkDocumentError([("", f"nested deeper than {MAX_DEPTH} levels")], source) from None
    except json.JSONDecodeError as error:
        raise BenchmarkDocumentError([(_place(text, error.pos), error.msg)], source) from None
    return check_document(raw, source)


def _walk(errors: list, node, path: str = "", depth: int = 0) -> None:
    """Every value the document holds, whether this module reads it or not: it is stored whole (a JSON
    column), and PostgreSQL's jsonb refuses NUL characters, lone surrogates, NaN and Infinity."""
    if len(errors) >= 20:
        return
    if depth > MAX_DEPTH:
        errors.append((path, f"nested deeper than {MAX_DEPTH} levels"))
    elif isinstance(node, dict):
        for key, value in node.items():
            _text_ok(errors, key, f"{path} (a key)" if path else "(a key)")
            name = key[:60]  # a path names the place; it never echoes a long key back
            _walk(errors, value, f"{path}.{name}" if path else name, depth + 1)
    elif isinstance(node, list):
        for index, value in enumerate(node):
            _walk(errors, value, f"{path}[{index}]", depth + 1)
    elif isinstance(node, str):
        _text_ok(errors, node, path)
    elif isinstance(node, float) and not math.isfinite(node):
        errors.append((path, f"must be a finite number, got {node}"))


def _text_ok(errors: list, text: str, path: str) -> None:
    if "\x00" in text:
        errors.append((path, "holds a NUL character"))
    elif any("\ud800" <= char <= "\udfff" for char in text):
        errors.append((path, "holds a lone surrogate (not valid Unicode)"))


def _number(errors, raw, path, *, positive=True, optional=False, maximum=None, whole=False):
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
    if maximum is not None and node > maximum:
        errors.append((path, f"must be at most {maximum:g}, got {node:g}"))
        return None
    if whole and node != int(node):
        errors.append((path, f"must be a whole number, got {node}"))
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
        if (
            isinstance(seconds, bool)
            or not isinstance(seconds, int | float)
            or not 0 < seconds <= MAX_STEP_SECONDS
        ):
            errors.append(
                (
                    f"steps[{index}].seconds",
                    f"must be a positive number of seconds, at most {MAX_STEP_SECONDS:g}",
                )
            )


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
        gpu = sample.get("gpu")  # the GPU's index on the machine (diagnostics group samples by it)
        if gpu is not None and (isinstance(gpu, bool) or not isinstance(gpu, int) or not 0 <= gpu < MAX_GPUS):
            errors.append((f"samples[{index}].gpu", f"must be a GPU index 0..{MAX_GPUS - 1}"))
        for key in ("memory_used_gib", "memory_total_gib"):
            value = sample.get(key)
            if value is not None and (
                isinstance(value, bool)
                or not isinstance(value, int | float)
                or not 0 <= value <= MAX_MEMORY_GIB
            ):
                errors.append((f"samples[{index}].{key}", f"must be GiB 0..{MAX_MEMORY_GIB:g}"))
        if sample.get("memory_total_gib") and sample.get("memory_used_gib") is None:
            errors.append((f"samples[{index}].memory_used_gib", "required with memory_total_gib"))
        if len(errors) >= 50:  # a file is fixed in one pass, but a list of 200,000 errors helps nobody
            return


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
    _walk(errors, raw)
    if errors:  # the checks below would only repeat these
        raise BenchmarkDocumentError(errors, source)
    measured_at = None
    stamp = _text(errors, raw, "measured_at")
    if stamp:
        try:
            measured_at = datetime.fromisoformat(stamp)
            if measured_at.tzinfo is None:
                errors.append(("measured_at", "needs a UTC offset"))
            elif measured_at > datetime.now(UTC) + FUTURE_ALLOWANCE:
                errors.append(("measured_at", f"{stamp[:40]} is in the future"))
        except ValueError:
            errors.append(("measured_at", f"not an ISO 8601 time: {stamp[:40]!r}"))
    task = _text(errors, raw, "workload.task", choices=TASKS)
    name = _text(errors, raw, "workload.name")
    precision = _text(errors, raw, "run.precision")
    step_median = _number(errors, raw, "summary.step_seconds_median", maximum=MAX_STEP_SECONDS)
    tokens_per_second = _number(
        errors, raw, "summary.tokens_per_second_median", maximum=MAX_TOKENS_PER_SECOND
    )
    peak = _number(errors, raw, "summary.peak_memory_allocated_gib", optional=True, maximum=MAX_MEMORY_GIB)
    _number(errors, raw, "summary.measured_steps", optional=True, positive=False, maximum=1e9, whole=True)
    flops = _number(errors, raw, "run.flops_per_token", maximum=MAX_FLOPS_PER_TOKEN)
    for count in ("micro_batch_size", "concurrency", "layers_run", "layers_in_spec"):
        _number(errors, raw, f"run.{count}", optional=True, maximum=MAX_COUNT, whole=True)
    gpu_count = _number(errors, raw, "environment.gpus_used", positive=False, maximum=MAX_GPUS, whole=True)
    price = _number(errors, raw, "environment.price_per_hour", optional=True, maximum=MAX_PRICE_PER_HOUR)
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
