"""The benchmark importer never crashes: random bytes, every truncation, wrong encodings, huge or
non-finite numbers, deep nesting and injection strings each end in a clean error that names the field
or the line (one line, never the input echoed back) and leave the database unchanged, through the
service, `manage.py import_benchmark` and `POST /api/benchmarks/`."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pricing.catalog import DATA_DIR, _load_gpu_models
from procurement import models
from procurement.benchmarks.document import BenchmarkDocumentError
from procurement.services.benchmarks import benchmark_import
from tests.procurement.benchmarks.helpers import gpu_document

pytestmark = pytest.mark.django_db
HYPOTHESIS = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)

NUMBER_FIELDS = (
    "summary.step_seconds_median",
    "summary.tokens_per_second_median",
    "summary.peak_memory_allocated_gib",
    "summary.measured_steps",
    "run.flops_per_token",
    "run.micro_batch_size",
    "run.layers_run",
    "run.layers_in_spec",
    "environment.gpus_used",
    "environment.price_per_hour",
    "steps.3.seconds",
    "samples.2.gpu_util_pct",
    "samples.2.cpu_util_pct",
    "samples.2.memory_used_gib",
    "samples.2.memory_total_gib",
    "samples.2.gpu",
)
TEXT_FIELDS = (
    "measured_at",
    "workload.name",
    "workload.task",
    "run.precision",
    "environment.gpu_name",
    "environment.currency",
    "environment.instance_type",
)
HUGE = ("1e308", "-1e308", "1e400", "NaN", "Infinity", "-Infinity", "9" * 5000, '"12"', "true", "[]", "{}")
INJECTIONS = (
    "'; DROP TABLE procurement_benchmarkresult; --",
    '" OR 1=1 --',
    "<script>alert(1)</script>",
    "{{ 7*7 }}",
    "${jndi:ldap://x/a}",
    "../../../../etc/passwd",
    "\x00",
    "a\x00b",
    "\ud800",
    "x" * 5000,
    "=cmd|' /C calc'!A0",
    "\t\n\\N",
    "\u202eevil",
)


@pytest.fixture
def gpus(db):
    _load_gpu_models(DATA_DIR / "gpu_specs.csv")  # the GPU the document names ("NVIDIA H100 80GB HBM3")


def _set(document: dict, path: str, value) -> dict:
    node, keys = document, path.split(".")
    for key in keys[:-1]:
        node = node[int(key)] if isinstance(node, list) else node[key]
    node[int(keys[-1]) if isinstance(node, list) else keys[-1]] = value
    return document


def _json_with(path: str, literal: str) -> bytes:
    """The good document with the JSON text `literal` at `path` (so NaN, 1e400, 5000 digits are exact)."""
    marker = "__HOSTILE__"
    text = json.dumps(_set(gpu_document(), path, marker))
    return text.replace(json.dumps(marker), literal).encode()


def _rejected(data: bytes) -> BenchmarkDocumentError:
    before = models.BenchmarkResult.objects.count()
    with pytest.raises(BenchmarkDocumentError) as caught:
        benchmark_import(data, source="run.json")
    assert models.BenchmarkResult.objects.count() == before
    error = caught.value
    assert error.errors and all(message for _, message in error.errors)
    assert "\n" not in str(error) and len(str(error)) < 2000  # one line, nothing echoed back whole
    return error


def test_the_good_document_imports(gpus):
    assert benchmark_import(json.dumps(gpu_document()).encode(), source="run.json").created


@HYPOTHESIS
@given(data=st.binary(max_size=2000))
def test_random_bytes_are_a_clean_error(gpus, data):
    _rejected(data)


@HYPOTHESIS
@given(data=st.binary(min_size=1, max_size=400))
def test_random_bytes_inside_a_good_document_are_a_clean_error_or_a_clean_import(gpus, data):
    text = json.dumps(gpu_document(), indent=1).encode()
    middle = len(text) // 2
    hostile = text[:middle] + data + text[middle:]
    before = models.BenchmarkResult.objects.count()
    try:
        benchmark_import(hostile, source="run.json")
    except BenchmarkDocumentError as error:
        assert models.BenchmarkResult.objects.count() == before
        assert "\n" not in str(error)


def test_a_truncation_at_every_line_names_the_line(gpus):
    lines = json.dumps(gpu_document(), indent=1).encode().splitlines(keepends=True)
    for cut in range(1, len(lines)):
        error = _rejected(b"".join(lines[:cut]))
        assert error.errors[0][0].startswith("line "), (cut, error.errors)


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-32", "latin-1", "cp1252", "shift_jis"])
def test_a_wrong_encoding_is_a_clean_error_naming_line_and_column(gpus, encoding):
    text = json.dumps(gpu_document(workload__name="llama-8b-qlora ÿé 日本"), ensure_ascii=False, indent=1)
    data = text.encode(encoding, errors="replace")
    error = _rejected(data)
    path, message = error.errors[0]
    assert path.startswith("line ") and "UTF-8" in message, error.errors


def test_a_byte_order_mark_is_accepted(gpus):
    assert benchmark_import(b"\xef\xbb\xbf" + json.dumps(gpu_document()).encode(), source="bom.json").created


@pytest.mark.parametrize("path", NUMBER_FIELDS)
@pytest.mark.parametrize("literal", HUGE)
def test_a_huge_or_non_finite_number_is_a_clean_error_naming_the_field(gpus, path, literal):
    error = _rejected(_json_with(path, literal))
    named = path.replace(".3.", "[3].").replace("samples.2.", "samples[2].")
    assert any(field == named for field, _ in error.errors), (literal, error.errors)


@pytest.mark.parametrize("path", TEXT_FIELDS)
@pytest.mark.parametrize("text", INJECTIONS)
def test_an_injection_string_in_a_text_field_is_stored_verbatim_or_a_clean_error(gpus, path, text):
    before = models.BenchmarkResult.objects.count()
    document = _set(gpu_document(), path, text)
    try:
        outcome = benchmark_import(json.dumps(document).encode(), source=text[:300])
    except BenchmarkDocumentError as error:
        assert models.BenchmarkResult.objects.count() == before
        assert any(field == path for field, _ in error.errors), error.errors
        assert text not in str(error) or len(text) < 50
        return
    stored = models.BenchmarkResult.objects.get(pk=outcome.result.pk)
    assert _get(stored.document, path) == text  # as data, never as code
    assert models.BenchmarkResult.objects.count() == before + 1


def _get(document: dict, path: str):
    for key in path.split("."):
        document = document[key]
    return document


@pytest.mark.parametrize("text", ["\x00", "a\x00b", "\ud800"])
def test_a_nul_or_a_lone_surrogate_anywhere_is_a_clean_error(gpus, text):
    # PostgreSQL's jsonb cannot hold either: refused before anything is stored, with its place
    for path in ("notes", "run.mode", "samples.1.note"):
        error = _rejected(json.dumps(_set(gpu_document(), path, text)).encode())
        assert any("NUL" in message or "surrogate" in message for _, message in error.errors), error.errors
    error = _rejected(json.dumps(gpu_document() | {text: 1}).encode())  # a key, too
    assert error.errors[0][0] == "(a key)"


@pytest.mark.parametrize("depth", [100, 10_000, 200_000])
def test_deeply_nested_json_is_a_clean_error(gpus, depth):
    nested = "[" * depth + "]" * depth
    data = json.dumps(gpu_document() | {"notes": "__N__"}).replace('"__N__"', nested).encode()
    error = _rejected(data)
    assert any("nest" in message for _, message in error.errors), error.errors


def test_a_measurement_dated_in_the_future_is_a_clean_error(gpus):
    error = _rejected(json.dumps(gpu_document(measured_at="9999-12-31T00:00:00+00:00")).encode())
    assert [field for field, _ in error.errors] == ["measured_at"]


def test_the_command_fails_cleanly_on_hostile_files(gpus, tmp_path):
    cases = {
        "random.json": b"\x89PNG\r\n\x1a\n\x00\xff",
        "huge.json": _json_with("summary.tokens_per_second_median", "1e308"),
        "deep.json": b"[" * 200_000,
        "utf16.json": json.dumps(gpu_document()).encode("utf-16"),
    }
    for name, data in cases.items():
        path = tmp_path / name
        path.write_bytes(data)
        with pytest.raises(CommandError) as caught:
            call_command("import_benchmark", str(path), stdout=StringIO())
        assert str(caught.value).startswith(f"{name}: ") and "\n" not in str(caught.value), str(caught.value)
    assert not models.BenchmarkResult.objects.exists()


@pytest.mark.parametrize(
    ("body", "field"),
    [
        (_json_with("summary.tokens_per_second_median", "1e308"), "summary.tokens_per_second_median"),
        (_json_with("environment.gpus_used", "1e308"), "environment.gpus_used"),
        (_json_with("environment.price_per_hour", "1e308"), "environment.price_per_hour"),
        (_json_with("run.micro_batch_size", '"many"'), "run.micro_batch_size"),
        (json.dumps(gpu_document(notes="a\x00b")).encode(), "notes"),
    ],
)
def test_the_api_answers_400_naming_the_field(gpus, client_as, body, field):
    client = client_as("engineer", team="research")
    response = client.post("/api/benchmarks/", body, content_type="application/json")
    assert response.status_code == 400, response.content[:500]
    assert field in [error["path"] for error in response.json()["errors"]], response.json()
    assert not models.BenchmarkResult.objects.exists()
