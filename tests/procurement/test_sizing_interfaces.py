"""The sizing CLI, API and page give the same numbers for one spec, and reject bad input alike."""

import json
from io import StringIO

import pytest
import yaml
from django.core.management import CommandError, call_command

SPEC = {
    "name": "interfaces",
    "task": "qlora",
    "model": {"preset": "llama-3.1-8b"},
    "micro_batch_size": 2,
    "seq_len": 4096,
    "gradient_checkpointing": "full",
    "training_tokens": 1.0e8,
}
GPUS = ["h100-sxm5-80gb", "l4", "t4"]
BAD_SPEC = {"task": "qlora", "model": {"preset": "llama-2-7b", "num_key_value_heads": 5}, "precision": "fp32"}
BAD_PATHS = {"model.num_key_value_heads", "precision"}


@pytest.fixture
def spec_file(tmp_path):
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(SPEC))
    return path


def _cli(path, *gpus):
    out = StringIO()
    call_command(
        "size", str(path), "--format", "json", *[arg for gpu in gpus for arg in ("--gpu", gpu)], stdout=out
    )
    return json.loads(out.getvalue())


def _numbers(report):
    return {
        "memory": report["memory"],
        "candidates": [
            (
                c["gpu"],
                c["gpus"],
                c["verdict"],
                c["memory_utilization"],
                c["throughput"]["training_tokens_per_second"],
            )
            for c in report["candidates"]
        ],
    }


@pytest.mark.django_db
def test_it_gives_the_same_numbers_on_cli_api_and_page(bundled_catalog, spec_file, engineer_client):
    cli = _cli(spec_file, *GPUS)
    api = engineer_client.post(
        "/api/size/?" + "&".join(f"gpu={g}" for g in GPUS), SPEC, content_type="application/json"
    )
    assert api.status_code == 200
    assert _numbers(api.json()) == _numbers(cli)
    page = engineer_client.post("/size/", {"spec": json.dumps(SPEC)})
    assert page.status_code == 200
    page_report = page.context["report"]
    cli_all = _cli(spec_file)
    assert _numbers(page_report) == _numbers(cli_all)
    assert len(cli_all["candidates"]) == 37  # 33 -> 37: 4 GeForce 12 / 16 GB cards added
    html = page.content.decode()
    assert "<svg" in html and 'id="candidates"' in html and "cuda_context_gib" in html


# The page's simple form for SPEC: every knob as the browser sends it (text), serving knobs included.
FORM = {
    "source": "fields",
    "name": "interfaces",
    "task": "qlora",
    "preset": "llama-3.1-8b",
    "precision": "bf16",
    "micro_batch_size": "2",
    "seq_len": "4096",
    "gradient_checkpointing": "full",
    "training_tokens": "1.0e8",
    "lora_rank": "16",
    "gpus": "1",
    "zero_stage": "0",
    "concurrency": "8",
    "context_len": "4096",
}


@pytest.mark.django_db
def test_it_sizes_the_form_built_spec_like_the_cli_and_api(bundled_catalog, engineer_client, tmp_path):
    page = engineer_client.post("/size/", FORM)
    assert page.status_code == 200 and page.context["errors"] == []
    # The textarea shows the spec the form built: SPEC plus the rank and plan knobs, no serving fields.
    built = yaml.safe_load(page.context["text"])
    assert built == SPEC | {
        "precision": "bf16",
        "training_tokens": 100_000_000,
        "lora": {"rank": 16},
        "parallelism": {"gpus": 1, "zero_stage": 0},
    }
    assert "lora: {rank: 16}" in page.content.decode()
    api = engineer_client.post("/api/size/", built, content_type="application/json")
    path = tmp_path / "built.yaml"
    path.write_text(page.context["text"])
    assert _numbers(page.context["report"]) == _numbers(api.json()) == _numbers(_cli(path))


@pytest.mark.django_db
def test_it_builds_serving_fields_for_an_inference_form(bundled_catalog, engineer_client):
    form = FORM | {"task": "inference", "gpus": "2", "zero_stage": "3", "concurrency": "16"}
    page = engineer_client.post("/size/", form)
    built = yaml.safe_load(page.context["text"])
    assert built["inference"] == {"concurrency": 16, "context_len": 4096}
    assert built["parallelism"] == {"gpus": 2}  # ZeRO applies to training only
    assert not {"micro_batch_size", "seq_len", "lora", "training_tokens"} & set(built)
    assert page.context["report"]["workload"]["parallelism"]["gpus"] == 2


@pytest.mark.django_db
def test_it_marks_bad_form_fields_by_their_spec_path(bundled_catalog, engineer_client):
    page = engineer_client.post("/size/", FORM | {"seq_len": "long", "lora_rank": "0"})
    assert {error["path"] for error in page.context["errors"]} == {"seq_len", "lora.rank"}
    marked = {field["name"] for field in page.context["form_fields"] if field["error"]}
    assert marked == {"seq_len", "lora_rank"}
    assert page.context["report"] is None


@pytest.mark.django_db
def test_it_matches_the_engine_on_the_bundled_csv(bundled_catalog, spec_file):
    from procurement.sizing import gpu_by_slug, parse_workload_spec, size_workload

    engine = size_workload(parse_workload_spec(SPEC), [gpu_by_slug(slug) for slug in GPUS])
    assert _numbers(_cli(spec_file, *GPUS)) == _numbers(engine)


@pytest.mark.django_db
def test_it_exits_2_naming_every_bad_field_on_the_cli(bundled_catalog, tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text(json.dumps(BAD_SPEC))
    with pytest.raises(CommandError) as caught:
        call_command("size", str(path))
    assert caught.value.returncode == 2
    assert all(f"{field}:" in str(caught.value) for field in BAD_PATHS)


@pytest.mark.django_db
def test_it_names_the_line_and_column_of_a_yaml_syntax_error(bundled_catalog, tmp_path):
    path = tmp_path / "broken.yaml"
    path.write_text("task: qlora\nmodel: {preset: [\n")
    with pytest.raises(CommandError) as caught:
        call_command("size", str(path))
    assert caught.value.returncode == 2 and f"{path}:3:1" in str(caught.value)


@pytest.mark.django_db
def test_it_answers_400_with_every_bad_field_on_the_api(bundled_catalog, engineer_client):
    response = engineer_client.post("/api/size/", BAD_SPEC, content_type="application/json")
    assert response.status_code == 400
    assert BAD_PATHS <= {error["path"] for error in response.json()["errors"]}
    unknown_gpu = engineer_client.post("/api/size/?gpu=h999", SPEC, content_type="application/json")
    assert unknown_gpu.status_code == 400 and unknown_gpu.json()["errors"][0]["path"] == "gpu"


@pytest.mark.django_db
def test_it_shows_bad_fields_on_the_page_and_stores_nothing(bundled_catalog, engineer_client):
    from django.apps import apps

    counts_before = {
        model: model.objects.count() for model in apps.get_app_config("procurement").get_models()
    }
    page = engineer_client.post("/size/", {"spec": json.dumps(BAD_SPEC)})
    assert page.status_code == 200
    assert {error["path"] for error in page.context["errors"]} == BAD_PATHS
    assert {model: model.objects.count() for model in counts_before} == counts_before


@pytest.mark.django_db
def test_it_prefills_the_form_from_a_preset(bundled_catalog, engineer_client):
    page = engineer_client.get("/size/?preset=sdxl")
    # the alias selects the preset it names, so the list, the form and the YAML agree (test_sizing_page)
    assert "model: {preset: sdxl-base-1.0}" in page.content.decode()
    fields = {field["name"]: field["value"] for field in page.context["form_fields"]}
    # The form starts on the same preset and task as the YAML it loads (the tier's first task).
    preset_yaml = yaml.safe_load(page.context["text"])
    assert (fields["preset"], fields["task"]) == ("sdxl-base-1.0", preset_yaml["task"])


@pytest.mark.django_db
def test_it_writes_the_validation_table(tmp_path):
    out = StringIO()
    target = tmp_path / "validation.md"
    table = tmp_path / "accuracy_classes.json"
    call_command("validate_sizing", "--output", str(target), "--accuracy-output", str(table), stdout=out)
    assert "median absolute error, memory" in out.getvalue()
    assert target.read_text().startswith("# Sizing validation")
    assert json.loads(table.read_text())["classes"]["lora/memory"]["cases"] > 0


@pytest.mark.django_db
def test_the_api_sizes_an_image_workload_and_names_bad_image_fields(bundled_catalog, engineer_client):
    spec = {
        "task": "lora",
        "model": {"preset": "flux.1-dev"},
        "lora": {"rank": 16, "targets": ["all-linear"]},
        "gradient_checkpointing": "full",
        "image": {"cache_latents": True, "train_steps": 500},
    }
    response = engineer_client.post("/api/size/?gpu=h100-sxm5-80gb", spec, content_type="application/json")
    assert response.status_code == 200
    body = response.json()
    assert body["workload"]["image"]["preset"] == "flux.1-dev" and body["workload"]["estimate"] == "estimate"
    assert body["throughput"]["training_images_per_second"] > 0
    bad = engineer_client.post(
        "/api/size/",
        {"task": "inference", "model": {"preset": "sdxl"}, "image": {"guidance": "x", "stepz": 3}},
        content_type="application/json",
    )
    assert bad.status_code == 400
    assert {"image.guidance", "image.stepz"} <= {error["path"] for error in bad.json()["errors"]}
