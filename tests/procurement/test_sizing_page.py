"""The sizing page reads as a report: words and units, each note once, the best card as headline."""

import re

import pytest
import yaml

from procurement.sizing.accelerators import rentable_alone_slug
from procurement.views.sizing_display import candidate_notes, memory_rows, shared_notes

REPR = re.compile(r"\bNone\b|\{'|\['|_gib\b|does_not_fit")

FORM = {
    "source": "fields",
    "name": "page",
    "task": "qlora",
    "preset": "llama-3.1-8b",
    "precision": "bf16",
    "micro_batch_size": "4",
    "seq_len": "2048",
    "gradient_checkpointing": "full",
    "training_tokens": "2.0e8",
    "lora_rank": "16",
    "gpus": "1",
    "zero_stage": "0",
    "concurrency": "8",
    "context_len": "4096",
    "resolution_px": "",
}


def _candidate(remedy="", errors=(), warnings=()):
    return {"remedy": remedy, "errors": list(errors), "warnings": list(warnings)}


def test_a_remedy_and_the_error_giving_the_same_advice_show_once():
    t4 = _candidate(
        remedy="use fp16 (Turing has no BF16) or an Ampere-or-later card",
        errors=["bf16 needs NVIDIA Ampere or later (Turing and Volta have no BF16): use fp16"],
        warnings=["consumer card.", "Consumer card"],
    )
    notes = candidate_notes(t4, shared=[])
    assert [(n["kind"], n["text"]) for n in notes] == [
        ("fix", "use fp16 (Turing has no BF16) or an Ampere-or-later card"),
        ("warning", "consumer card"),
    ]


def test_an_error_with_other_advice_is_kept_and_shared_warnings_are_left_to_the_table_note():
    row = _candidate(
        remedy="micro_batch_size 1",
        errors=["needs 4 GPUs: use tensor parallel"],
        warnings=["tier estimate: benchmark recommended", "PCIe only"],
    )
    other = _candidate(warnings=["tier estimate: benchmark recommended"])
    shared = shared_notes([row | {"remedy": None}, other])
    assert shared == ["tier estimate: benchmark recommended"]
    kinds = [(n["kind"], n["text"]) for n in candidate_notes(row, shared)]
    assert kinds == [
        ("fix", "micro_batch_size 1"),
        ("why", "needs 4 GPUs: use tensor parallel"),
        ("warning", "PCIe only"),
    ]


def test_memory_rows_leave_out_zero_parts_and_end_with_the_totals():
    memory = {
        "weights_gib": 5.0,
        "gradients_gib": 0.0,
        "optimizer_states_gib": 0.1,
        "activations_gib": 2.0,
        "kv_cache_gib": 0.0,
        "framework_overhead_gib": 1.0,
        "total_per_gpu_gib": 8.1,
        "required_per_gpu_gib": 9.0,
        "host_ram_gib": 0.0,
    }
    rows = memory_rows(memory)
    assert [r["key"] for r in rows] == [
        "weights_gib",
        "optimizer_states_gib",
        "activations_gib",
        "framework_overhead_gib",
        "total_per_gpu_gib",
        "required_per_gpu_gib",
    ]
    assert [r["total"] for r in rows][-2:] == [True, True]


@pytest.mark.django_db
def test_the_page_headlines_the_fastest_card_in_words_and_units(bundled_catalog, client_as):
    page = client_as("engineer").post("/size/", FORM)
    assert page.status_code == 200
    report = page.context["report"]
    feasible = [c for c in report["candidates"] if c["verdict"] in ("fits", "tight", "oversized")]
    # A part that cannot be rented on its own (a GB200 in its NVL72 rack) is never the headline card for one job
    # (issue 26 item 5): since moe45 prices a training GB200 at 1.025x the B200 it is the fastest row here, and the
    # headline names the fastest card that can be rented alone.
    rentable = [c for c in feasible if rentable_alone_slug(c["gpu"])]
    assert len(rentable) < len(feasible)
    fastest = max(rentable, key=lambda c: c["throughput"]["training_tokens_per_second"] or 0)
    assert report["throughput"]["gpu"] == fastest["gpu"]
    html = page.content.decode()
    headline = re.search(r'<p class="headline" id="headline">(.*?)</p>', html, re.S).group(1)
    assert f"1 × {fastest['gpu_name']}" in headline
    speed = fastest["throughput"]["training_tokens_per_second"]
    assert f"{speed:,.0f}" in headline  # e.g. 15,952 tokens/s, grouped
    assert f"{fastest['memory_utilization'] * 100:.0f}% of its memory" in headline
    assert "QLoRA fine-tuning of" in html and "billion parameters" in html
    assert "<td>Weights</td>" in html and "<td>Total per GPU</td>" in html  # the values say GiB
    assert html.count('class="headline-row"') == 1
    host = re.search(r'<p id="host">(.*?)</p>', html, re.S).group(1)
    assert re.match(r"[\d,]+ vCPUs, [\d,]+ GiB RAM", host) and re.search(r"weights [\d,]+\.\d GB", host)
    assert report["host"]["gpu"] == fastest["gpu"]  # the host is sized for the headline card
    body = html[html.index('id="sizing-summary"') : html.index('id="assumptions"')]
    assert REPR.search(body) is None, REPR.search(body)


@pytest.mark.django_db
def test_an_image_preset_says_its_tier_caveat_once_above_the_table(bundled_catalog, client_as):
    form = FORM | {"preset": "sdxl-tier", "task": "inference", "micro_batch_size": "1"}
    html = client_as("engineer").post("/size/", form).content.decode()
    assert 'id="shared-notes"' in html
    table = html[html.index('id="candidates"') : html.index("</table>", html.index('id="candidates"'))]
    assert "tier estimate: benchmark recommended" not in table.split("</thead>")[1].replace(
        '<span class="badge">tier estimate: benchmark recommended</span>', ""
    )


@pytest.mark.django_db
def test_an_image_preset_shows_its_speed_in_images(bundled_catalog, client_as):
    form = FORM | {"preset": "flux.1-schnell", "task": "inference", "micro_batch_size": "1", "steps": "4"}
    html = client_as("engineer").post("/size/", form).content.decode()
    assert "Images per second" in html and "image.steps" not in html
    assert "Decode speed" not in html and "tier estimate: benchmark recommended" not in html


# Llama-3-70B served on 4 GPUs: the form's tensor/pipeline fields split each model copy, as the API's
# parallelism fields do. Hand computation (model card: 70.55e9 parameters, 80 layers, 8 KV heads of
# 128 dims; https://huggingface.co/meta-llama/Meta-Llama-3-70B/blob/main/config.json):
#   weights bf16 = 70.55e9 x 2 B = 141.1 GB = 131.4 GiB; a quarter per GPU at TP 4 = 32.85 GiB
#   KV cache = 2 (K,V) x 80 layers x 8 heads x 128 dims x 2 B = 327,680 B per token;
#   x 4,096 tokens x 8 requests = 10.0 GiB, with 2 of the 8 KV heads on each of 4 ranks = 2.5 GiB per GPU
SERVING_70B = FORM | {
    "task": "inference",
    "preset": "llama-3-70b",
    "gpus": "4",
    "concurrency": "8",
    "context_len": "4096",
}
LLAMA3_70B_PARAMS = 70.55e9
GIB = 2**30


def _h100(report):
    return next(c for c in report["candidates"] if c["gpu"] == "h100-sxm5-80gb" and c["gpus"] == 4)


@pytest.mark.django_db
def test_the_form_splits_a_70b_model_over_4_gpus_at_tensor_parallel_4(bundled_catalog, client_as):
    client = client_as("engineer")
    page = client.post("/size/", SERVING_70B | {"tensor_parallel": "4", "pipeline_parallel": "1"})
    assert page.status_code == 200 and page.context["errors"] == []
    built = yaml.safe_load(page.context["text"])
    assert built["parallelism"] == {"gpus": 4, "tensor_parallel": 4, "pipeline_parallel": 1}
    report = page.context["report"]
    memory = _h100(report)["memory"]
    assert memory["weights_gib"] == pytest.approx(LLAMA3_70B_PARAMS * 2 / 4 / GIB, rel=0.01)  # 32.85
    assert memory["kv_cache_gib"] == pytest.approx(327_680 * 4096 * 8 / 4 / GIB, rel=0.01)  # 2.5
    assert _h100(report)["plan"]["tensor_parallel"] == 4
    # the same spec through the API gives the same numbers
    api = client.post("/api/size/?gpu=h100-sxm5-80gb", built, content_type="application/json").json()
    assert _h100(api)["memory"] == memory
    assert "split tensor parallel 4 × pipeline parallel 1" in page.content.decode()
    # without a split the 4 GPUs are replicas, each holding the whole 131 GiB: too big for an 80 GB card
    whole = client.post("/size/", SERVING_70B | {"tensor_parallel": "1"}).context["report"]
    assert _h100(whole)["memory"]["weights_gib"] == pytest.approx(LLAMA3_70B_PARAMS * 2 / GIB, rel=0.01)
    assert _h100(whole)["verdict"] == "does_not_fit"


@pytest.mark.django_db
def test_the_form_splits_weights_over_pipeline_stages_and_names_a_bad_split(bundled_catalog, client_as):
    client = client_as("engineer")
    page = client.post("/size/", SERVING_70B | {"tensor_parallel": "2", "pipeline_parallel": "2"})
    memory = _h100(page.context["report"])["memory"]
    assert memory["weights_gib"] == pytest.approx(LLAMA3_70B_PARAMS * 2 / 4 / GIB, rel=0.01)
    # 4 of 8 KV heads per tensor rank, half the 80 layers per stage: a quarter of the cache again
    assert memory["kv_cache_gib"] == pytest.approx(327_680 * 4096 * 8 / 4 / GIB, rel=0.01)
    bad = client.post("/size/", SERVING_70B | {"tensor_parallel": "3"})
    marked = {field["name"]: field["error"] for field in bad.context["form_fields"] if field["error"]}
    assert marked == {
        "gpus": "must be a multiple of tensor_parallel x pipeline_parallel (3 x 1), got 4",
        "tensor_parallel": "must divide model.num_attention_heads (64), got 3",
    }
    assert bad.context["report"] is None


@pytest.mark.django_db
def test_the_form_states_context_parallelism_and_names_a_bad_degree(bundled_catalog, client_as):
    # par26: Llama 3 70B pretraining at 8k on 4 GPUs, TP 2 x CP 2: each GPU keeps half the sequence's
    # activations (the page's breakdown halves against CP 1) and the sentence says the sequence is split
    client = client_as("engineer")
    training = SERVING_70B | {
        "task": "pretrain",
        "seq_len": "8192",
        "micro_batch_size": "1",
        "gradient_checkpointing": "selective",
        "training_tokens": "1e9",
        "tensor_parallel": "2",
        "pipeline_parallel": "1",
    }
    page = client.post("/size/", training | {"context_parallel": "2"})
    assert page.status_code == 200 and page.context["errors"] == []
    assert yaml.safe_load(page.context["text"])["parallelism"]["context_parallel"] == 2
    assert _h100(page.context["report"])["plan"]["context_parallel"] == 2
    whole = client.post("/size/", training).context["report"]
    split = _h100(page.context["report"])["memory"]["activations_gib"]
    assert split == pytest.approx(_h100(whole)["memory"]["activations_gib"] / 2, rel=0.01)
    assert "each sequence split over 2 GPUs (context parallel)" in page.content.decode()
    # 2 x CP 3 does not divide 8,192 tokens, and 4 GPUs are no multiple of TP 2 x CP 3: both fields marked
    bad = client.post("/size/", training | {"context_parallel": "3"})
    marked = {field["name"]: field["error"] for field in bad.context["form_fields"] if field["error"]}
    assert marked["context_parallel"] == "2 x context_parallel (6) must divide seq_len (8192)"
    assert "context_parallel (2 x 1 x 3)" in marked["gpus"]


@pytest.mark.django_db
def test_a_preset_alias_in_the_address_selects_the_preset_it_names(bundled_catalog, client_as):
    """/size/?preset=sdxl loaded SDXL's defaults while the list showed its first entry, so a submit sized
    another model (found by form29). The alias now selects its preset, sdxl-base-1.0, in the list and the
    form's spec."""
    html = client_as("engineer").get("/size/?preset=sdxl").content.decode()
    selected = re.findall(r'<option value="([^"]+)" selected>', html[html.index('id="preset"') :])
    assert selected[0] == "sdxl-base-1.0"
    assert "sdxl-base-1.0" in html[html.index("<textarea") : html.index("</textarea>")]
