"""The interconnect sentence as a person reads it: in the JSON, the command's table and the page."""

import json
from io import StringIO

import yaml
from django.core.management import call_command

# Mistral-7B full fine-tune on 1B tokens: the cheapest bundled plans are ZeRO-3 on one 8-GPU NVLink node
WORKLOAD = {"name": "ft7", "task": "full_finetune", "model": {"preset": "mistral-7b"}, "training_tokens": 1e9}


def test_rows_say_which_link_carried_the_collectives_everywhere(tmp_path, client_as, bundled_catalog):
    path = tmp_path / "workload.yaml"
    path.write_text(yaml.safe_dump(WORKLOAD))
    out = StringIO()
    call_command("recommend", str(path), "--format", "json", "--top", "3", stdout=out)
    rows = json.loads(out.getvalue())["results"]
    first = rows[0]
    assert first["gpus"] > 1 and first["instances"] == 1
    link = first["interconnect"]
    assert link["node_link_type"] == "nvlink" and link["stated"] and link["source"].startswith("https://")
    assert "FSDP all-gather" in link["summary"] or "gradient all-reduce" in link["summary"]
    assert link["summary"].endswith("of step time")
    # no multi-instance plan on a provider whose on-demand hosts are single machines
    assert not any(row["instances"] > 1 and row["provider"] in ("vast", "cudo", "lambda") for row in rows)
    table = StringIO()
    call_command("recommend", str(path), "--top", "3", stdout=table)
    assert f"    links: {link['summary']}" in table.getvalue()
    client = client_as("engineer")
    created = client.post(
        "/api/recommendations/", {"workload": WORKLOAD, "top": 3}, content_type="application/json"
    )
    assert created.status_code == 201
    assert created.json()["results"][0]["interconnect"] == link
    html = client.get(f"/workloads/{created.json()['workload_id']}/recommendations/").content.decode()
    assert f"links: {link['summary']}" in html
