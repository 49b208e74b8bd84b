"""The recommendation page shows serving rows as serving and the spot deadline plan, signed in."""

import pytest

SERVING = {
    "name": "serve-8b",
    "task": "inference",
    "model": {"preset": "llama-3.1-8b"},
    "inference": {"concurrency": 8, "context_len": 4096, "requests_per_second": 2},
}


@pytest.mark.django_db
def test_a_serving_recommendation_page_plots_cost_per_month_against_tokens(client_as, bundled_catalog):
    client = client_as("engineer")
    body = {"workload": SERVING, "top": 5, "providers": ["aws", "lambda"], "save": True}
    created = client.post("/api/recommendations/", body, content_type="application/json")
    assert created.status_code == 201, created.content
    results = created.json()["results"]
    assert results and all(row["serving"]["demand_tokens_per_second"] == 512.0 for row in results)  # 2 x 256
    page = client.get(f"/workloads/{created.json()['workload_id']}/recommendations/")
    text = page.content.decode()
    assert page.status_code == 200
    assert "Cost per month versus throughput" in text
    assert "Serving: " in text and "tokens/s of demand" in text


@pytest.mark.django_db
def test_the_tie_note_is_an_answer_level_line_above_the_table(client_as, bundled_catalog):
    """audtie / fixtie: examples/lora-finetune.yaml's first two rows (verda 1x H100 spot 8.43, 1x B200 spot 8.96,
    +6.3% at the LoRA class median ±9%) are a tie; the page says so above the table, not only in the first
    row's collapsed "Why"."""
    from pathlib import Path

    import yaml

    spec = yaml.safe_load(
        (Path(__file__).resolve().parents[2] / "examples" / "lora-finetune.yaml").read_text()
    )
    client = client_as("engineer")
    created = client.post(
        "/api/recommendations/", {"workload": spec, "top": 5, "save": True}, content_type="application/json"
    )
    assert created.status_code == 201, created.content
    text = client.get(f"/workloads/{created.json()['workload_id']}/recommendations/").content.decode()
    assert 'id="tie-note"' in text and "are a tie at" in text
    assert text.index('id="tie-note"') < text.index('id="recommendations"')
