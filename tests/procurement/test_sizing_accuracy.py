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
        # an image workload's class names training or inference (fix47b): SDXL generation reads .../inference
        stated = accuracy_classes()[found[metric]["class"]]
        assert found[metric]["class"].split("/")[:2] == [family, metric]
        assert found[metric]["cases"] == stated["cases"] > 0
        assert found[metric]["validation"] == stated["validation"]
        assert found[metric]["outside"]["measured_on"] == stated["outside"]["measured_on"]
        assert found[metric]["median_abs_error"] == stated["median_abs_error"]
        assert found[metric]["p90_abs_error"] == stated["p90_abs_error"]
        assert found[metric]["share_within_target"] == stated["share_within_target"]
        assert found[metric]["text"]


@pytest.mark.django_db
def test_it_renders_the_accuracy_sentence_on_the_sizing_page(bundled_catalog, engineer_client):
    page = engineer_client.post("/size/", {"spec": json.dumps(SDXL)})
    assert page.status_code == 200
    html = page.content.decode()
    speed = accuracy_classes()["image_diffusion/throughput/inference"]
    assert 'id="accuracy"' in html
    # "Throughput: 1.23 images/s, within 25% on 9 of 9 held-out cases of image diffusion generation (median error
    # 9%, 90th percentile 25%): ...": the headline's figure, then the class's counts from the committed table
    assert "Throughput: " in html and " images/s, within 25% on " in html
    assert (
        f"on {speed['within_target']} of {speed['cases']} held-out cases of image diffusion generation "
        f"(median error {speed['median_abs_error']:.0%}, 90th percentile {speed['p90_abs_error']:.0%})"
    ) in html
    assert "; not counted: 2 rows the engine was fitted on" in html
    assert "Memory: " in html and " GiB per GPU, " in html


@pytest.mark.django_db
def test_it_says_how_each_run_did_on_the_page_under_five_cases(bundled_catalog, engineer_client):
    # fix47b: LoRA speed now has the outside ledger's cases; an SDXL LoRA's training speed class has four runs:
    # docs/validation.md's FLUX QLoRA on an RTX 4090 (+4.7%) and SD 1.5 LoRA on an RTX 2080 Ti (-18.3%), and the
    # outside ledger's SimpleTuner SDXL / SD 1.5 LoRA steps on an H100 (test_outside_image_workloads_8.py, +1.6% / +3.5%)
    sdxl_lora = {"name": "accuracy-sdxl-lora", "task": "lora", "model": {"preset": "sdxl"}}
    html = engineer_client.post("/size/", {"spec": json.dumps(sdxl_lora)}).content.decode()
    speed = accuracy_classes()["image_diffusion/throughput/training"]
    assert speed["cases"] == 4 and speed["validation"]["cases"] == 2 and speed["outside"]["cases"] == 2
    assert (
        "images/s, 4 published runs of image diffusion training, all within 25%: +2%, +4%, +5%, -18%." in html
    )
    lora = accuracy_classes()["lora/throughput"]
    assert lora["cases"] >= 5 and lora["validation"]["cases"] == 2


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
