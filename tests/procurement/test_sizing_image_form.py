"""The sizing form's image section: every `image:` field the spec parser reads can be set on the form,
and the form builds the very spec the API takes for it (same document, same sized numbers)."""

from __future__ import annotations

import re

import pytest
import yaml

from procurement.sizing import spec as spec_module
from procurement.sizing.documents import KNOB_PATHS, spec_from_knobs
from procurement.sizing.image_knobs import IMAGE_FLAG_DEFAULTS, IMAGE_KNOB_DEFAULTS, IMAGE_KNOB_PATHS
from procurement.sizing.image_spec import DATA_PIPELINES, GUIDANCE
from procurement.sizing.spec import OPTIMIZERS, QUANTIZATIONS, parse_workload_spec
from procurement.views.sizing_image_fields import IMAGE_KNOB_LABELS, IMAGE_KNOB_OPTIONS

GIB = 2**30
H100 = "h100-sxm5-80gb"
# SDXL generation at batch 4 in fp16 on one GPU, the page's form fields (blank ones: the spec's defaults)
SDXL_BATCH_4 = {
    "source": "fields",
    "name": "sdxl batch 4",
    "task": "inference",
    "preset": "sdxl",
    "precision": "fp16",
    "micro_batch_size": "4",
    "gpus": "1",
}
# The same job as the JSON document the API takes
SDXL_BATCH_4_JSON = {
    "name": "sdxl batch 4",
    "task": "inference",
    "model": {"preset": "sdxl"},
    "precision": "fp16",
    "micro_batch_size": 4,
    "parallelism": {"gpus": 1},
}
REPR = re.compile(r"\bNone\b|\bTrue\b|\bFalse\b|\{'|\['")


def _h100(report: dict) -> dict:
    return next(c for c in report["candidates"] if c["gpu"] == H100 and c["gpus"] == 1)


def test_it_offers_every_image_field_the_parser_reads():
    on_the_form = set(KNOB_PATHS.values()) | set(IMAGE_KNOB_PATHS.values())
    parsed = {f"image.{key}" for key in spec_module._IMAGE_KEYS}
    assert parsed - on_the_form == set()
    assert IMAGE_KNOB_LABELS.keys() == IMAGE_KNOB_PATHS.keys()  # each with a label, a hint and help
    assert all(label and help_text for label, _, help_text in IMAGE_KNOB_LABELS.values())


@pytest.mark.parametrize(
    "knob, choices",
    [
        ("guidance", GUIDANCE),
        ("data_pipeline", DATA_PIPELINES),
        ("optimizer", OPTIMIZERS),
        ("weight_quantization", QUANTIZATIONS),
        ("cache_text_embeddings", ("", "true", "false")),  # blank: as image.cache_latents
    ],
)
def test_it_offers_each_choice_the_parser_takes_in_words(knob, choices):
    options = IMAGE_KNOB_OPTIONS[knob]
    assert {value for value, _ in options} == set(choices)
    assert options[0][0] == IMAGE_KNOB_DEFAULTS[knob]  # the first option is the spec's default
    assert not any(REPR.search(words) or "_" in words for _, words in options)


def _form(**knobs: str) -> dict:
    return IMAGE_KNOB_DEFAULTS | {k: v for k, v in SDXL_BATCH_4.items() if k != "source"} | knobs


@pytest.mark.parametrize(
    "knobs, section",
    [
        ({"vae_slicing": "true"}, {"image": {"vae_slicing": True}}),
        ({"vae_tiling": "true"}, {"image": {"vae_tiling": True}}),
        ({"text_encoder_offload": "true"}, {"image": {"text_encoder_offload": True}}),
        (
            {"weight_quantization": "int8", "quantize_text_encoders": "true"},
            {"weight_quantization": "int8", "image": {"quantize_text_encoders": True}},
        ),
        ({"fused_kernels": "true"}, {"image": {"fused_kernels": True}}),
        ({"guidance": "distilled"}, {"image": {"guidance": "distilled"}}),
        ({"images": "10_000"}, {"image": {"images": 10_000}}),
        ({"flash_attention": "false"}, {"flash_attention": False}),
        # training knobs on an SDXL LoRA
        (
            {"task": "lora", "train_text_encoder": "true", "prior_preservation": "true"},
            {"image": {"train_text_encoder": True, "prior_preservation": True}},
        ),
        (
            {"task": "lora", "cache_latents": "true", "cache_text_embeddings": "false"},
            {"image": {"cache_latents": True, "cache_text_embeddings": False}},
        ),
        (
            {"task": "lora", "optimizer": "adamw_8bit", "optimizer_in_backward": "true"},
            {"optimizer": "adamw_8bit", "optimizer_in_backward": True},
        ),
        (
            {"task": "lora", "epochs": "2.5", "dataset_images": "400", "data_pipeline": "predecoded"},
            {"image": {"epochs": 2.5, "dataset_images": 400, "data_pipeline": "predecoded"}},
        ),
        # det47: a validation pass every epoch (diffusers examples/text_to_image/train_text_to_image_lora_sdxl.py
        # @58eb52c0: --validation_epochs 1, --num_validation_images 4 by default)
        (
            {
                "task": "lora",
                "epochs": "2",
                "dataset_images": "400",
                "eval_every_epochs": "1",
                "eval_images": "4",
            },
            {"image": {"epochs": 2, "dataset_images": 400, "eval_every_epochs": 1, "eval_images": 4}},
        ),
    ],
)
@pytest.mark.django_db
def test_it_builds_the_spec_the_api_takes_from_each_control(bundled_catalog, client_as, knobs, section):
    # a ticked checkbox posts its hidden "false" and then "true", as the browser does
    posted = {k: ["false", v] if k in IMAGE_FLAG_DEFAULTS and v == "true" else v for k, v in knobs.items()}
    client = client_as("engineer")
    page = client.post("/size/", SDXL_BATCH_4 | posted)
    assert page.context["errors"] == []
    built = yaml.safe_load(page.context["text"])
    json_spec = SDXL_BATCH_4_JSON | {"task": knobs.get("task", "inference")} | section
    assert built == json_spec
    assert parse_workload_spec(built) == parse_workload_spec(json_spec)
    api = client.post(f"/api/size/?gpu={H100}", json_spec, content_type="application/json").json()
    form_h100, api_h100 = _h100(page.context["report"]), _h100(api)
    assert form_h100["memory"] == api_h100["memory"] and form_h100["throughput"] == api_h100["throughput"]


def test_it_leaves_untouched_controls_and_other_tasks_controls_out_of_the_spec():
    assert spec_from_knobs(_form()) == SDXL_BATCH_4_JSON  # every image knob at its default
    # generation-only knobs on a training task, and any image knob on a language model, are dropped
    assert "image" not in spec_from_knobs(_form(task="lora", vae_slicing="true", images="5"))
    llama = spec_from_knobs(_form(preset="llama-3.1-8b", task="qlora", cache_latents="true"))
    assert "image" not in llama and "optimizer" not in llama


@pytest.mark.django_db
def test_it_sizes_sdxl_batch_4_with_vae_slicing_as_the_api_does(bundled_catalog, client_as):
    """SDXL batch 4 at 1024 px in fp16: diffusers upcasts the VAE decode to fp32 (force_upcast), and the
    decoder's peak is 1,088 elements per output pixel (test_image_sizing's hand count: the last
    Upsample2D's 256-channel tensors). Whole batch: 4 x 1,088 x 1024^2 x 4 B = 17.0 GiB; sliced (one image
    at a time): 4.25 GiB, above the UNet's CFG forward, so the activations fall by 3 x 1,088 x 1024^2 x 4 B =
    12.75 GiB, and the total by 1.05 x that = 13.39 GiB (memory.py adds the caching allocator's 5% of the
    tensors, assumptions.FRAGMENTATION)."""
    client = client_as("engineer")
    # the checkbox posts a hidden "false" then "true": the last value is the ticked box's
    page = client.post("/size/", SDXL_BATCH_4 | {"vae_slicing": ["false", "true"]})
    assert page.context["errors"] == []
    built = yaml.safe_load(page.context["text"])
    assert built == SDXL_BATCH_4_JSON | {"image": {"vae_slicing": True}}
    sliced = _h100(page.context["report"])["memory"]
    api = client.post(f"/api/size/?gpu={H100}", built, content_type="application/json").json()
    assert _h100(api)["memory"] == sliced
    whole = _h100(client.post("/size/", SDXL_BATCH_4 | {"vae_slicing": "false"}).context["report"])["memory"]
    decode_difference_gib = 3 * 1088 * 1024**2 * 4 / GIB  # 12.75
    assert whole["activations_gib"] == pytest.approx(4 * 1088 * 1024**2 * 4 / GIB, rel=1e-3)  # 17.0
    assert whole["activations_gib"] - sliced["activations_gib"] == pytest.approx(
        decode_difference_gib, rel=1e-3
    )
    assert whole["total_per_gpu_gib"] - sliced["total_per_gpu_gib"] == pytest.approx(
        1.05 * decode_difference_gib, rel=1e-3
    )


@pytest.mark.django_db
@pytest.mark.parametrize(
    "knob, value, path, message",
    [
        ("vae_slicing", "maybe", "image.vae_slicing", "must be true or false, got 'maybe'"),
        ("images", "lots", "image.images", "lots"),
        ("guidance", "twice", "image.guidance", "unknown value 'twice'"),
    ],
)
def test_it_refuses_a_bad_value_naming_the_field(bundled_catalog, client_as, knob, value, path, message):
    page = client_as("engineer").post("/size/", SDXL_BATCH_4 | {knob: value})
    assert page.context["report"] is None
    assert [error["path"] for error in page.context["errors"]] == [path]
    marked = {field["name"]: field["error"] for field in page.context["image_fields"] if field["error"]}
    assert list(marked) == [knob] and message in marked[knob]
    html = page.content.decode()
    assert f"<code>{path}</code>" in html
    assert re.search(r'<details class="image-knobs" id="image-knobs" open>', html)  # opened on the error


@pytest.mark.django_db
def test_the_image_section_reads_in_words_with_labelled_controls(client_as):
    html = client_as("engineer").get("/size/?preset=sdxl").content.decode()
    section = html[html.index('id="image-knobs"') : html.index("</details>")]
    shown = re.sub(r"<[^>]+>", " ", section)  # the words a reader sees
    assert REPR.search(shown) is None, REPR.search(shown)
    for knob in IMAGE_KNOB_PATHS:
        assert f'<label for="knob-{knob}">' in section and f'id="knob-{knob}"' in section
        assert f'aria-describedby="help-{knob}"' in section and f'id="help-{knob}"' in section
    ticked = re.findall(r'type="checkbox" name="(\w+)"[^>]*checked', section)
    assert sorted(ticked) == sorted(k for k, v in IMAGE_FLAG_DEFAULTS.items() if v == "true")
    assert 'id="image-knobs" open' in section  # an image preset opens it


@pytest.mark.django_db
def test_the_new_workload_form_saves_the_image_controls_as_the_api_would(bundled_catalog, client_as):
    from procurement.models import Workload

    client = client_as("engineer", team="research")
    page = client.get("/workloads/new/?preset=sdxl-base-1.0").content.decode()
    assert 'id="image-knobs" open' in page and '<label for="knob-vae_slicing">' in page
    form = SDXL_BATCH_4 | {"vae_slicing": ["false", "true"], "guidance": "distilled"}
    assert client.post("/workloads/new/", form).status_code == 302
    expected = SDXL_BATCH_4_JSON | {"image": {"guidance": "distilled", "vae_slicing": True}}
    assert Workload.objects.get().spec == expected  # the document the form built, as /api/ would store it
    bad = client.post("/workloads/new/", SDXL_BATCH_4 | {"name": "bad", "vae_tiling": "sometimes"})
    marked = {field["name"]: field["error"] for field in bad.context["image_fields"] if field["error"]}
    assert list(marked) == ["vae_tiling"] and Workload.objects.count() == 1
