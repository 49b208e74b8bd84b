"""Recommendations end to end on the bundled catalog: CLI, API, stored rows, recompute and change events."""

import datetime as dt
import json
from io import StringIO

import pytest
import yaml
from django.core.management import CommandError, call_command

from pricing.models import PriceObservation
from procurement.choices import ChangeKind
from procurement.models import ChangeEvent, Recommendation, TcoStudy, Workload
from procurement.services.recompute import recommendation_recompute, recompute_targets, tco_study_recompute
from procurement.tasks import recompute_all
from tests.procurement.costing.tco_fixtures import study_document

WORKLOAD = {
    "name": "llama-3.1-8b-qlora",
    "task": "qlora",
    "model": {"preset": "llama-3.1-8b"},
    "training_tokens": 1e9,
}


def _run(*args) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def _raise_price(row: dict, factor: int = 10) -> None:
    """A newer observation of the same offer at a higher price: the offer is no longer cheap."""
    current = PriceObservation.objects.get(pk=row["observation_id"])
    PriceObservation.objects.create(
        offer=current.offer,
        pricing_model=current.pricing_model,
        payment_option=current.payment_option,
        amount_per_hour=current.amount_per_hour * factor,
        currency=current.currency,
        observed_at=current.observed_at + dt.timedelta(days=1),
        source="test: price rise",
    )


def test_it_ranks_the_bundled_catalog_from_the_command_line(tmp_path, bundled_catalog):
    path = tmp_path / "workload.yaml"
    path.write_text(yaml.safe_dump(WORKLOAD))
    report = json.loads(
        _run("recommend", str(path), "--format", "json", "--top", "5", "--deadline-hours", "48")
    )
    results = report["results"]
    assert len(results) == 5
    assert [float(r["total_cost"]) for r in results] == sorted(float(r["total_cost"]) for r in results)
    for row in results:
        assert row["fits"] and row["hours"] <= 48 and row["currency"] == "USD"
        assert row["basis"] == "estimated" and row["price_observed_at"] and row["reasons"]
    assert Recommendation.objects.count() == 0  # no --save: nothing stored


def test_it_stores_through_the_api_and_adds_nothing_when_prices_are_unchanged(
    engineer_client, bundled_catalog
):
    body = {"workload": WORKLOAD, "top": 5, "save": True}
    first = engineer_client.post("/api/recommendations/", body, content_type="application/json")
    assert first.status_code == 201 and first.json()["created"]
    workload_id = first.json()["workload_id"]
    again = engineer_client.post(
        "/api/recommendations/",
        {"workload_id": workload_id, "top": 5, "save": True},
        content_type="application/json",
    )
    assert again.json()["created"] is False and again.json()["id"] == first.json()["id"]
    stored = Recommendation.objects.get()
    assert (
        stored.prices_used and stored.prices_used[0]["observation_id"] == stored.results[0]["observation_id"]
    )


def test_it_names_a_bad_workload_field_and_stores_nothing(engineer_client, bundled_catalog):
    bad = WORKLOAD | {"training_tokens": -5}
    response = engineer_client.post(
        "/api/recommendations/", {"workload": bad}, content_type="application/json"
    )
    assert response.status_code == 400 and response.json()["errors"][0]["path"] == "training_tokens"
    assert Workload.objects.count() == 0 and Recommendation.objects.count() == 0
    response = engineer_client.post(
        "/api/recommendations/", {"workload": WORKLOAD, "top": 0}, content_type="application/json"
    )
    assert response.json()["errors"][0]["path"] == "top"


def test_it_recomputes_a_changed_price_into_a_new_dated_row_and_a_change_event(
    engineer_client, bundled_catalog, django_capture_on_commit_callbacks
):
    engineer_client.post(
        "/api/recommendations/",
        {"workload": WORKLOAD, "top": 3, "save": True},
        content_type="application/json",
    )
    workload = Workload.objects.get()
    assert recommendation_recompute(workload.pk)["created"] is False  # unchanged prices add nothing
    cheapest = Recommendation.objects.get().results[0]
    _raise_price(cheapest)
    with django_capture_on_commit_callbacks(execute=True):
        result = recommendation_recompute(workload.pk)
    assert result["created"] is True
    assert Recommendation.objects.filter(workload=workload).count() == 2  # the old row stays beside the new
    event = ChangeEvent.objects.get(kind=ChangeKind.CHEAPEST_OPTION)
    assert event.before["instance_type"] == cheapest["instance_type"] and event.workload == workload
    assert event.notified_at is None  # eager Celery ran the notification task, but no target is configured


def test_it_recomputes_tco_studies_priced_from_an_offer(engineer_client, bundled_catalog):
    offer = {"provider": "aws", "instance_type": "p5.48xlarge", "region": "us-east-1"}
    document = study_document(rent__price_per_gpu_hour=None, rent__offer=offer, utilization="0.5")
    study_id = engineer_client.post("/api/tco/", document, content_type="application/json").json()["id"]
    assert recompute_targets()[1] == [study_id]
    assert tco_study_recompute(study_id)["created"] is False
    study = TcoStudy.objects.get(pk=study_id)
    _raise_price({"observation_id": study.prices_used[0]["observation_id"]}, factor=2)
    summary = recompute_all.delay().get()  # the Celery path (eager in tests without Redis)
    assert summary["tco_studies"] == 1
    newest = TcoStudy.objects.get(previous=study)
    assert newest.result["rent"]["price_per_gpu_hour"] == "13.760000"  # 2 x 55.04 / 8
    assert _run("recompute", "--all").startswith("recomputed 0 recommendations and 1 TCO studies: 0 new")


BAD_FIELDS = {"task": "qlora", "model": {"preset": "llama-3.1-8b"}, "training_tokens": -5, "headroom": 7}


def test_it_names_every_bad_workload_field_through_the_api(engineer_client, bundled_catalog):
    response = engineer_client.post(
        "/api/recommendations/", {"workload": BAD_FIELDS}, content_type="application/json"
    )
    body = response.json()
    assert response.status_code == 400 and set(body) == {"errors"}
    assert {"training_tokens", "headroom"} <= {error["path"] for error in body["errors"]}
    assert Workload.objects.count() == 0 and Recommendation.objects.count() == 0


def test_the_command_names_every_bad_workload_field_and_exits_2(tmp_path, bundled_catalog):
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(BAD_FIELDS))
    with pytest.raises(CommandError) as raised:
        call_command("recommend", str(path), "--format", "json", "--save")
    assert raised.value.returncode == 2
    message = str(raised.value)
    assert message.startswith(f"{path}: invalid workload spec") and "training_tokens:" in message
    assert "headroom:" in message
    assert Workload.objects.count() == 0 and Recommendation.objects.count() == 0
    # the same exit status as `size` for the same file
    with pytest.raises(CommandError) as sized:
        call_command("size", str(path))
    assert sized.value.returncode == 2


def test_the_schema_documents_every_recommendation_field_and_the_400(engineer_client, db):
    from drf_spectacular.generators import SchemaGenerator

    from procurement.services.recommendations import RANKING_OPTION_FIELDS

    schema = SchemaGenerator().get_schema(request=None, public=True)
    request = schema["components"]["schemas"]["RecommendationRequest"]["properties"]
    assert set(request) == RANKING_OPTION_FIELDS | {"workload", "workload_id", "save", "team"}
    post = schema["paths"]["/api/recommendations/"]["post"]
    error = post["responses"]["400"]["content"]["application/json"]["schema"]["$ref"]
    assert error.endswith("/ApiErrors")  # the one error shape (gpuledger/api_errors.py)


def test_the_deadline_probability_and_explore_options_reach_the_ranking_through_cli_and_api(
    tmp_path, engineer_client, bundled_catalog
):
    # issue 26: --deadline-probability / deadline_probability (default 0.9) and explore_parallelism
    spec = WORKLOAD | {"parallelism": {"gpus": 1}}
    path = tmp_path / "workload.yaml"
    path.write_text(yaml.safe_dump(spec))
    report = json.loads(
        _run(
            "recommend",
            str(path),
            "--format",
            "json",
            "--top",
            "5",
            "--deadline-hours",
            "48",
            "--deadline-probability",
            "0.8",
        )
    )
    for row in report["results"]:
        assert row["gpus"] == 1 and row["differs_from_spec"] == []  # the stated GPU count is a contract
        assert row["wall_clock"]["probability"] == 0.8 and row["wall_clock"]["hours_at_probability"] <= 48
    response = engineer_client.post(
        "/api/recommendations/",
        {"workload": spec, "top": 20, "explore_parallelism": True},
        content_type="application/json",
    )
    assert response.status_code in (200, 201), response.content  # 201: the workload was created
    rows = response.json()["results"]
    assert {row["gpus"] for row in rows} >= {1}
    assert all(("GPUs (spec: 1)" in " ".join(row["differs_from_spec"])) == (row["gpus"] != 1) for row in rows)
    assert all(row["wall_clock"]["probability"] == 0.9 for row in rows)  # the default


def test_the_command_on_an_empty_catalog_says_to_load_it(tmp_path, db):
    """A fresh database before `load_catalog`: a clear error naming the catalog, not a StopIteration traceback
    (aud49r ran `recommend` on a fresh SQLite database and got one)."""
    path = tmp_path / "workload.yaml"
    path.write_text(yaml.safe_dump(WORKLOAD))
    with pytest.raises(CommandError, match="catalog is empty: load it first"):
        call_command("recommend", str(path), "--format", "json")
    assert Workload.objects.count() == 0 and Recommendation.objects.count() == 0
