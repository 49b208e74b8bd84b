"""Import of runner documents: mapping, idempotency, unit costs, the API's roles, pages, and measured ranking."""

import json
from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from procurement import models
from procurement.benchmarks.document import BenchmarkDocumentError
from procurement.services.benchmarks import benchmark_import
from procurement.services.recommendations import (
    ranking_options_parse,
    recommendation_compute,
    workload_spec_parse,
)
from tests.procurement.benchmarks.helpers import QLORA_SPEC, gpu_document

pytestmark = pytest.mark.django_db


def _bytes(document) -> bytes:
    return json.dumps(document).encode()


def test_it_imports_once_and_prices_the_run(bundled_catalog):
    first = benchmark_import(_bytes(gpu_document()), source="run.json")
    again = benchmark_import(_bytes(gpu_document()), source="run.json")
    assert first.created and not again.created and models.BenchmarkResult.objects.count() == 1
    row = first.result
    assert row.gpu.slug == "h100-sxm5-80gb" and not row.cpu_only
    # 4.00 USD/h / (4096 tokens/s x 3600) x 1e6 = 0.271267 USD per 1M tokens (given in the run)
    assert row.unit_costs["per_million_tokens"] == "0.271267" and row.price_basis == "given in the run"
    assert row.estimate["tokens_per_second"] > 0 and row.estimate["comparable_memory"] is True
    assert {finding["rule"] for finding in row.diagnostics} >= {
        "data_loading",
        "memory_fit",
        "step_variation",
    }


def test_it_rejects_an_unknown_gpu_and_stores_nothing(bundled_catalog):
    with pytest.raises(BenchmarkDocumentError, match="not in the catalog"):
        benchmark_import(_bytes(gpu_document(environment__gpu_name="NVIDIA Imaginary 9000")), source="x.json")
    assert not models.BenchmarkResult.objects.exists()


def test_a_scaled_run_is_scaled_back_to_full_depth(bundled_catalog):
    # 4 of 32 layers at 4096 tokens/s: full depth about 4096 x 4 / 32 = 512 tokens/s; memory not comparable.
    row = benchmark_import(_bytes(gpu_document(run__layers_run=4)), source="scaled.json").result
    assert row.estimate["measured_tokens_per_second_full_depth"] == pytest.approx(512.0)
    assert row.estimate["comparable_memory"] is False


def test_the_command_reports_and_fails_cleanly(bundled_catalog, tmp_path):
    path = tmp_path / "run.json"
    path.write_text(json.dumps(gpu_document()))
    out = StringIO()
    call_command("import_benchmark", str(path), str(path), stdout=out)
    assert "inserted 1, unchanged 1" in out.getvalue()
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(gpu_document(schema_version=2)))
    with pytest.raises(CommandError, match="bad.json: schema_version: unknown schema version 2"):
        call_command("import_benchmark", str(bad))


def test_a_matching_measurement_replaces_the_estimate_in_the_ranking(bundled_catalog):
    # An 8-GPU run on p5.48xlarge at 32,768 tokens/s (the only 8x H100 SXM shape in the bundled catalog).
    document = gpu_document(environment__gpus_used=8, summary__tokens_per_second_median=32768.0)
    benchmark_import(_bytes(document), source="p5-run.json")
    spec = workload_spec_parse(QLORA_SPEC)
    options = ranking_options_parse(
        {"gpus": ["h100-sxm5-80gb"], "instance_counts": [1], "providers": ["aws"]}
    )
    eight = [row for row in recommendation_compute(spec=spec, options=options).results if row["gpus"] == 8]
    assert eight and all(row["basis"] == "measured" for row in eight)
    assert any("measured on 2026-11-20" in reason for reason in eight[0]["reasons"])  # the run's date
    # 2e8 tokens at the measured 32,768 tokens/s = 1.695 h of compute (the estimate said 0.738 h)
    assert min(row["hours"] for row in eight) == pytest.approx(2e8 / 32768 / 3600, rel=0.02)


@pytest.mark.parametrize(
    "role, expected", [("viewer", 403), ("finance", 403), ("engineer", 201), ("admin", 201)]
)
def test_only_engineers_and_admins_post_benchmarks(bundled_catalog, client_as, role, expected):
    response = client_as(role).post("/api/benchmarks/", gpu_document(), content_type="application/json")
    assert response.status_code == expected


def test_the_api_lists_every_error(bundled_catalog, client_as):
    document = gpu_document(summary__step_seconds_median=0)
    del document["measured_at"]
    response = client_as("engineer").post("/api/benchmarks/", document, content_type="application/json")
    assert response.status_code == 400
    assert {e["path"] for e in response.json()["errors"]} == {"measured_at", "summary.step_seconds_median"}


def test_anonymous_cannot_post(bundled_catalog, client):
    assert client.post("/api/benchmarks/", gpu_document(), content_type="application/json").status_code in (
        401,
        403,
    )


def test_pages_show_the_run_and_calibration(bundled_catalog, client_as, team_named):
    client = client_as("engineer", team="research")
    row = benchmark_import(_bytes(gpu_document()), source="run.json", team=team_named("research")).result
    detail = client.get(f"/benchmarks/{row.pk}/").content.decode()
    assert "0.271267" in detail or "0.2713" in detail
    assert "<svg" in detail and "Diagnostics" in detail
    assert "h100-sxm5-80gb" in client.get("/benchmarks/calibration/").content.decode()
    assert client_as("viewer").get(f"/benchmarks/{row.pk}/").status_code == 403


def test_a_price_from_the_catalog_when_none_is_given(bundled_catalog):
    document = gpu_document(
        environment__price_per_hour=None, environment__currency=None, environment__instance_type="p5.48xlarge"
    )
    row = benchmark_import(_bytes(document), source="p5.json").result
    assert row.instance_type is not None and row.price_per_hour > Decimal("0")
    assert row.price_basis.startswith("current on-demand catalog price")


def test_an_oversized_run_names_a_cheaper_card_that_fits(bundled_catalog):
    # QLoRA 8B peaks at 20 GiB on an 80 GB H100 (25%): oversized. The sizing engine fits it on cheaper cards;
    # the suggestion names the cheapest by current on-demand price per GPU-hour.
    row = benchmark_import(_bytes(gpu_document()), source="run.json").result
    fit = next(f for f in row.diagnostics if f["rule"] == "memory_fit")
    assert fit["triggered"] and "oversized" in fit["message"]
    assert fit["evidence"]["cheaper_fit"] and "USD per GPU-hour" in fit["evidence"]["cheaper_fit"]
    assert "H100" not in fit["evidence"]["cheaper_fit"].split(" (")[0]


def test_a_recompute_uses_same_shape_measurements_of_other_workloads(bundled_catalog):
    from procurement.services.recompute import recommendations_recompute_chunk

    document = gpu_document(environment__gpus_used=8, summary__tokens_per_second_median=32768.0)
    benchmark_import(_bytes(document), source="p5-run.json")  # measured for no workload in particular
    workload = services_workload(QLORA_SPEC)
    models.Recommendation.objects.create(
        workload=workload,
        parameters={"gpus": ["h100-sxm5-80gb"], "providers": ["aws"]},
        results=[],
        fingerprint="x",
    )
    recommendations_recompute_chunk([workload.pk])
    rows = [r for r in workload.recommendations.latest().results if r["gpus"] == 8]
    assert rows and rows[0]["basis"] == "measured"
    assert any("measured on 2026-11-20" in reason for reason in rows[0]["reasons"])
    # 2e8 tokens at the measured 32,768 tokens/s = 1.695 h
    assert rows[0]["hours"] == pytest.approx(2e8 / 32768 / 3600, rel=0.02)


def services_workload(spec: dict):
    from procurement.services.recommendations import workload_create_from_spec

    return workload_create_from_spec(document=spec)
