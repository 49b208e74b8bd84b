"""The measured-accuracy object (issue 26 item 7) on the sizing API, the sizing page, the CLI table and
every ranking row; its numbers come from procurement/data/reference/accuracy_classes.json."""

import json
from io import StringIO

import pytest
from django.core.management import call_command

from procurement.ranking import RankingOptions, rank_workload
from procurement.sizing import parse_workload_spec
from procurement.sizing.accuracy import accuracy_classes
from tests.procurement.test_ranking import GPUS, NOW, OFFERS

LORA = {
    "name": "accuracy-lora",
    "task": "lora",
    "model": {"preset": "llama-3.1-8b"},
    "micro_batch_size": 2,
    "seq_len": 2048,
    "gradient_checkpointing": "full",
    "training_tokens": 1.0e8,
}
SDXL = {"name": "accuracy-sdxl", "task": "inference", "model": {"preset": "sdxl"}}


@pytest.mark.django_db
@pytest.mark.parametrize(("spec", "family"), [(LORA, "lora"), (SDXL, "image_diffusion")])
def test_it_states_the_class_and_its_published_errors_on_the_api(
    bundled_catalog, engineer_client, spec, family
):
    response = engineer_client.post("/api/size/?gpu=h100-sxm5-80gb", spec, content_type="application/json")
    assert response.status_code == 200
    body = response.json()
    assert {"workload", "memory", "throughput", "candidates", "host", "assumptions"} <= set(body)
    found = body["accuracy"]
    assert found["family"] == family
    for metric in ("memory", "throughput"):
        stated = accuracy_classes()[f"{family}/{metric}"]
        assert found[metric]["class"] == f"{family}/{metric}"
        assert found[metric]["cases"] == stated["cases"] > 0
        assert found[metric]["median_abs_error"] == stated["median_abs_error"]
        assert found[metric]["p90_abs_error"] == stated["p90_abs_error"]
        assert found[metric]["share_within_target"] == stated["share_within_target"]
        assert found[metric]["text"]


@pytest.mark.django_db
def test_it_renders_the_accuracy_sentence_on_the_sizing_page(bundled_catalog, engineer_client):
    page = engineer_client.post("/size/", {"spec": json.dumps(SDXL)})
    assert page.status_code == 200
    html = page.content.decode()
    speed = accuracy_classes()["image_diffusion/throughput"]
    assert 'id="accuracy"' in html
    # "Throughput: 1.23 images/s, within 25% on 13 of 13 published runs of image diffusion models (median
    # error 7%)": the headline's figure, then the class's counts from the committed table
    assert "Throughput: " in html and " images/s, within 25% on " in html
    assert (
        f"on {speed['within_target']} of {speed['cases']} published runs of image diffusion models "
        f"(median error {speed['median_abs_error']:.0%})"
    ) in html
    assert "Memory: " in html and " GiB per GPU, " in html


@pytest.mark.django_db
def test_it_says_few_published_runs_on_the_page_under_five_cases(bundled_catalog, engineer_client):
    html = engineer_client.post("/size/", {"spec": json.dumps(LORA)}).content.decode()
    cases = accuracy_classes()["lora/throughput"]["cases"]
    assert cases < 5  # today: two torchtune RTX 4090 and A6000 rows (docs/validation.md)
    assert f"tokens/s, few published runs ({cases}) of LoRA fine-tunes." in html


@pytest.mark.django_db
def test_it_prints_the_accuracy_in_the_cli_table(bundled_catalog, tmp_path):
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(SDXL))
    out = StringIO()
    call_command("size", str(path), "--gpu", "h100-sxm5-80gb", stdout=out)
    assert "Throughput: within 25% on " in out.getvalue()


def test_every_ranking_row_carries_the_class_of_its_workload():
    spec = parse_workload_spec(LORA)
    rows = rank_workload(spec, OFFERS, GPUS, RankingOptions(top=5), now=NOW).results
    assert rows
    for row in rows:
        assert row["accuracy"]["family"] == "lora"
        assert row["accuracy"]["memory"]["cases"] == accuracy_classes()["lora/memory"]["cases"]
