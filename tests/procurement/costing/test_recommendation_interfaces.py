"""Recommendations on the bundled catalog as a person reads them: infeasible rows on request, the spot
object, GPU-only prices kept out, stale flags in what is stored, and the page showing all of it."""

import json
from io import StringIO

import yaml
from django.core.management import call_command

from procurement.models import Recommendation
from procurement.ranking.options import GPU_ONLY_REASON

WORKLOAD = {"name": "q", "task": "qlora", "model": {"preset": "llama-3.1-8b"}, "training_tokens": 1e9}


def _recommend(tmp_path, *args) -> str:
    path = tmp_path / "workload.yaml"
    path.write_text(yaml.safe_dump(WORKLOAD))
    out = StringIO()
    call_command("recommend", str(path), *args, stdout=out)
    return out.getvalue()


def test_the_default_output_is_feasible_rows_cheapest_first_without_gcp_gpu_only_prices(
    tmp_path, bundled_catalog
):
    results = json.loads(_recommend(tmp_path, "--format", "json", "--top", "50"))["results"]
    assert len(results) == 50 and all(row["fits"] for row in results)
    assert [float(r["total_cost"]) for r in results] == sorted(float(r["total_cost"]) for r in results)
    assert not any(row["gpu_only_price"] or row["instance_type"].startswith("gcp-gpu-") for row in results)
    # GCP ranks with whole-instance prices (host VM + GPUs, pricing/providers/gcp_hosts.py)
    everything = json.loads(_recommend(tmp_path, "--format", "json", "--top", "500", "--provider", "gcp"))
    assert {row["instance_type"].split("-")[0] for row in everything["results"]} <= {"g2", "a2", "a3"}
    assert everything["results"] and all(row["fits"] for row in everything["results"])


def test_it_lists_the_best_infeasible_rows_with_why_on_request(tmp_path, bundled_catalog):
    results = json.loads(_recommend(tmp_path, "--format", "json", "--top", "5", "--include-infeasible"))[
        "results"
    ]
    feasible, infeasible = results[:5], results[5:]
    assert all(row["fits"] for row in feasible) and len(infeasible) == 5
    assert all(not row["fits"] and row["total_cost"] is None and row["reasons"] for row in infeasible)
    # the cheapest configurations that cannot run are GCP's GPU-only prices and hosts too small for the GPUs
    blocking = " ".join(reason for row in infeasible for reason in row["reasons"])
    assert GPU_ONLY_REASON in blocking or "host RAM too small" in blocking
    table = _recommend(tmp_path, "--top", "5", "--include-infeasible")
    assert table.count("not feasible:") == 5


def test_spot_rows_carry_their_rate_source_verdict_and_simulation(tmp_path, bundled_catalog):
    # AWS's rows, top 500: host rules of thumb only warn now, so more on-demand rows rank above the first
    # advisor-banded spot row (p4d.24xlarge); across every provider, RunPod's 1,425 bundled prices (issue 32)
    # put it past #500, and the advisor bands are AWS's alone
    results = json.loads(_recommend(tmp_path, "--format", "json", "--top", "500", "--provider", "aws"))[
        "results"
    ]
    spot = [row for row in results if row["pricing_model"] == "spot"]
    assert spot and all(row["spot"]["verdict"] == "suitable" for row in spot)
    simulated = [row for row in spot if row["spot"]["simulation"]]
    assert (
        len(simulated) == 3 and simulated == spot[:3]
    )  # only the first feasible spot rows: ranking stays fast
    first = simulated[0]["spot"]
    # the bundled catalog carries Spot Advisor bands for AWS: the row says which snapshot it read
    advised = [row["spot"] for row in spot if row["spot"]["interruption_source"] == "advisor"]
    assert advised and all(s["advisor_observed_at"] for s in advised)
    assert first["simulation"]["p90_hours"] >= first["simulation"]["p50_hours"] >= simulated[0]["hours"]
    assert "spot:" in _recommend(tmp_path, "--top", "200")


def test_the_api_stores_infeasible_rows_and_stale_flags_and_the_page_shows_them(
    engineer_client, bundled_catalog
):
    body = {
        "workload": WORKLOAD,
        "top": 5,
        "include_infeasible": True,
        "pricing_models": ["spot"],
        "save": True,
    }
    created = engineer_client.post("/api/recommendations/", body, content_type="application/json")
    assert created.status_code == 201
    stored = Recommendation.objects.get()
    assert [row["fits"] for row in stored.results] == [True] * 5 + [False] * 5
    assert all("stale" in price for price in stored.prices_used)
    assert [bool(row["spot"]["simulation"]) for row in stored.results[:5]] == [True] * 3 + [False] * 2
    html = engineer_client.get(f"/workloads/{stored.workload_id}/recommendations/").content.decode()
    assert (
        html.count(">not feasible</span>") == 5 + 1
    )  # five rows, and the line above the table explaining it
    assert html.count("seeded trials): P50") == 3
    # every stored row with a "suitable" spot verdict shows it (the five feasible rows, and infeasible ones
    # refused for their host rather than for spot)
    suitable = sum(row["spot"]["verdict"] == "suitable" for row in stored.results)
    assert suitable >= 5 and html.count(">suitable</span>") == suitable


def test_table_json_and_page_show_each_rows_cost_breakdown(tmp_path, engineer_client, bundled_catalog):
    results = json.loads(_recommend(tmp_path, "--format", "json", "--top", "3"))["results"]
    for row in results:
        parts = row["cost_breakdown"]
        assert parts["total"] == row["total_cost"]
        assert set(row["unit_costs"]) == {"per_gpu_hour", "per_million_training_tokens"}
    first = results[0]["cost_breakdown"]
    table = _recommend(tmp_path, "--top", "3")
    assert table.count("    cost: compute ") == 3
    assert (
        f"cost: compute {first['compute']} + setup {first['setup']} + storage {first['storage']} "
        f"+ reruns {first['reruns']} = {first['total']} USD; per GPU-hour {results[0]['unit_costs']['per_gpu_hour']}"
    ) in table
    created = engineer_client.post(
        "/api/recommendations/",
        {"workload": WORKLOAD, "top": 3, "save": True},
        content_type="application/json",
    )
    html = engineer_client.get(
        f"/workloads/{created.json()['workload_id']}/recommendations/"
    ).content.decode()
    assert html.count('class="cost-bar"') == 3
    assert f"compute {first['compute']} · setup {first['setup']}" in html
    assert "per 1M training tokens" in html


def test_recommend_deployment_development_lifts_the_consumer_split_order(tmp_path, bundled_catalog):
    """rankpp (aud49k item 4): Llama-3-70B int4 at one stream, the hobby case whose 2 x RTX 3090 split is ordered
    below the first data-center row in production; `--deployment development` ranks it by cost, without the order
    reason (the warning about ECC stays)."""
    from procurement.ranking.rows import CONSUMER_SPLIT_ORDER_REASON

    serving = {
        "name": "hobby",
        "task": "inference",
        "model": {"preset": "llama-3-70b"},
        "precision": "fp16",
        "weight_quantization": "int4",
        "inference": {"concurrency": 1, "context_len": 4096, "output_tokens": 256},
    }
    path = tmp_path / "serving.yaml"
    path.write_text(yaml.safe_dump(serving))

    def rows(*args):
        out = StringIO()
        call_command("recommend", str(path), "--format", "json", "--top", "40", *args, stdout=out)
        return json.loads(out.getvalue())["results"]

    # top 40: since aud50a (stop 50) doubted rows are ordered by how many doubts they carry, so the 3-doubt
    # 2 x RTX 3090 split (tight, assumed link, consumer split) sits near row 26 in production, not row 2
    production, development = rows(), rows("--deployment", "development")
    assert any(CONSUMER_SPLIT_ORDER_REASON in row["reasons"] for row in production)
    assert not any(CONSUMER_SPLIT_ORDER_REASON in row["reasons"] for row in development)
    splits = [row for row in development if any("consumer cards" in w for w in row["warnings"])]
    assert splits and all("no ECC memory" in w for row in splits for w in row["warnings"] if "consumer" in w)

    def first_split(results):
        return next(i for i, row in enumerate(results) if any("consumer cards" in w for w in row["warnings"]))

    assert first_split(development) < first_split(production)  # one doubt fewer: ranked higher
