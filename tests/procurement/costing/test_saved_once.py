"""Saving twice is one save (issue 31, finding 5, beyond capacity plans): the same TCO study document or
workload spec saved again by the same owner for the same team, through the API, the pages or the
command, one after the other or at once, stores one row; the API answers 200 with the stored id. The
key is the inputs' fingerprint (procurement.services.saved_once: normalized document, owner, team),
unique on first versions only, so recomputations (new rows linked to the old) still add versions."""

from __future__ import annotations

import json
from io import StringIO

import pytest
import yaml
from django.core.management import call_command
from django.db import IntegrityError, transaction

from procurement import models
from procurement.models import Recommendation, TcoStudy, Workload
from procurement.services import saved_once
from procurement.services.recommendations import workload_update_spec
from procurement.services.recompute import tco_study_recompute
from tests.procurement.costing.tco_fixtures import study_document
from tests.procurement.costing.test_recommendations import WORKLOAD, _raise_price
from tests.procurement.costing.test_tco_form_pages import FORM


def _post(client, url, body):
    return client.post(url, json.dumps(body, default=str), content_type="application/json")


def test_the_api_saves_the_same_study_once_per_owner_and_team(client_as, h100):
    client = client_as("engineer", team="research")
    first, second = _post(client, "/api/tco/", study_document()), _post(client, "/api/tco/", study_document())
    assert (first.status_code, second.status_code) == (201, 200)
    assert first.json()["id"] == second.json()["id"] and TcoStudy.objects.count() == 1
    # normalized: the same document with its keys in another order is the same save
    reordered = _post(client, "/api/tco/", dict(reversed(list(study_document().items()))))
    assert reordered.status_code == 200 and reordered.json()["id"] == first.json()["id"]
    assert _post(client, "/api/tco/", study_document(utilization="0.5")).status_code == 201
    assert TcoStudy.objects.count() == 2
    # the same document saved by another engineer of the team is theirs: another row
    colleague = client_as("engineer", team="research")
    assert _post(colleague, "/api/tco/", study_document()).status_code == 201
    assert TcoStudy.objects.filter(owner=colleague.user).count() == 1


def test_the_page_the_form_and_the_command_save_the_same_study_once(client_as, h100, tmp_path):
    client = client_as("engineer", team="research")
    text = yaml.safe_dump(study_document())
    first, second = client.post("/tco/", {"study": text}), client.post("/tco/", {"study": text})
    assert first.status_code == second.status_code == 302 and first.url == second.url
    assert TcoStudy.objects.count() == 1
    saved = [client.post("/tco/new/", FORM | {"action": "save"}) for _ in range(2)]
    assert saved[0].url == saved[1].url and TcoStudy.objects.count() == 2  # the form's document, once
    path = tmp_path / "study.yaml"
    path.write_text(text)
    ids = [json.loads(_run("tco", str(path), "--save", "--format", "json"))["id"] for _ in range(2)]
    assert ids[0] == ids[1] and TcoStudy.objects.count() == 3  # no owner, no team: its own row, once


def _run(*args) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_a_repeat_after_a_recompute_returns_the_newest_version(client_as, bundled_catalog):
    """A recompute adds a linked row with the same inputs: the constraint holds for first versions only,
    and saving the document again answers with the version the study page shows, adding nothing."""
    client = client_as("engineer", team="research")
    offer = {"provider": "aws", "instance_type": "p5.48xlarge", "region": "us-east-1"}
    document = study_document(rent__price_per_gpu_hour=None, rent__offer=offer, utilization="0.5")
    first = _post(client, "/api/tco/", document).json()["id"]
    _raise_price({"observation_id": TcoStudy.objects.get().prices_used[0]["observation_id"]}, factor=2)
    newest = tco_study_recompute(first)["study_id"]
    assert newest != first and TcoStudy.objects.get(pk=newest).previous_id == first
    again = _post(client, "/api/tco/", document)
    assert again.status_code == 200 and again.json()["id"] == newest and TcoStudy.objects.count() == 2


def test_an_edited_study_no_longer_answers_for_its_first_document(client_as, h100):
    client = client_as("engineer", team="research")
    study = TcoStudy.objects.get(pk=_post(client, "/api/tco/", study_document()).json()["id"])
    edited = client.post(f"/tco/{study.pk}/edit/", FORM | {"action": "save", "utilization": "50"})
    assert edited.status_code == 302
    study.refresh_from_db()
    assert study.input_fingerprint is None and study.spec["utilization"] == "0.5"
    # its first document is not what it holds any more: saving it is a new study
    assert _post(client, "/api/tco/", study_document()).status_code == 201 and TcoStudy.objects.count() == 2


def test_the_database_refuses_a_second_first_version_but_not_a_recomputation(client_as, h100):
    client = client_as("engineer", team="research")
    study = TcoStudy.objects.get(pk=_post(client, "/api/tco/", study_document()).json()["id"])
    copy = {
        f.name: getattr(study, f.name)
        for f in TcoStudy._meta.concrete_fields
        if f.name not in ("id", "previous")
    }
    with pytest.raises(IntegrityError), transaction.atomic():
        TcoStudy.objects.create(**copy)
    TcoStudy.objects.create(**copy | {"previous": study})  # a recomputation of the same inputs
    with pytest.raises(IntegrityError), transaction.atomic():
        Workload.objects.create(name="a", task="qlora", spec=WORKLOAD, input_fingerprint="f" * 64)
        Workload.objects.create(name="b", task="qlora", spec=WORKLOAD, input_fingerprint="f" * 64)
    # rows stored before the fingerprint (NULL) never collide: earlier double saves stay as they were
    Workload.objects.create(name="old", task="qlora", spec=WORKLOAD)
    Workload.objects.create(name="old", task="qlora", spec=WORKLOAD)


def test_a_study_save_that_loses_the_race_returns_the_winners_row(client_as, h100, monkeypatch):
    """Two saves at once: both look, find nothing, both insert; the unique constraint refuses the second
    insert (in a savepoint) and the loser answers with the winner's id."""
    client = client_as("engineer", team="research")
    winner = _post(client, "/api/tco/", study_document()).json()["id"]
    real_save_once, looks = saved_once.save_once, []

    def blind_first_look(saved, create):
        def look():  # the first look runs before the winner committed: it sees nothing
            looks.append(1)
            return None if len(looks) == 1 else saved()

        return real_save_once(look, create)

    monkeypatch.setattr("procurement.services.tco.save_once", blind_first_look)
    loser = _post(client, "/api/tco/", study_document())
    assert loser.status_code == 200 and loser.json()["id"] == winner and TcoStudy.objects.count() == 1
    assert len(looks) == 2  # looked, inserted, was refused, looked again


def test_the_same_workload_saved_twice_is_one_workload_and_one_answer(client_as, bundled_catalog):
    client = client_as("engineer", team="research")
    body = {"workload": WORKLOAD, "top": 3, "save": True}
    first, second = _post(client, "/api/recommendations/", body), _post(client, "/api/recommendations/", body)
    assert (first.status_code, second.status_code) == (201, 200)
    assert (
        second.json()["workload_id"] == first.json()["workload_id"]
        and second.json()["id"] == first.json()["id"]
    )
    assert Workload.objects.count() == 1 and Recommendation.objects.count() == 1
    # the workload page saves the same spec for the same owner and team: the same workload
    page = client.post("/workloads/new/", {"spec": yaml.safe_dump(WORKLOAD), "team": "research"})
    assert page.status_code == 302 and Workload.objects.count() == 1
    # another team's copy (the admin picks the team) is another workload
    admin = client_as("admin", team="platform")
    other = _post(admin, "/api/recommendations/", body | {"team": "platform"})
    assert other.status_code == 201 and Workload.objects.count() == 2


def test_an_edited_workload_no_longer_answers_for_its_first_spec(client_as, bundled_catalog):
    client = client_as("engineer", team="research")
    workload_id = _post(client, "/api/recommendations/", {"workload": WORKLOAD}).json()["workload_id"]
    workload_update_spec(Workload.objects.get(pk=workload_id), document=WORKLOAD | {"name": "renamed"})
    assert Workload.objects.get().input_fingerprint is None
    assert _post(client, "/api/recommendations/", {"workload": WORKLOAD}).status_code == 201
    assert Workload.objects.count() == 2


def test_the_fingerprint_is_the_normalized_document_the_owner_and_the_team(django_user_model):
    owner = django_user_model.objects.create(username="o")
    base = saved_once.input_fingerprint({"a": 1, "b": {"c": "x"}}, owner=owner, team=None)
    assert base == saved_once.input_fingerprint({"b": {"c": "x"}, "a": 1}, owner=owner, team=None)
    assert base != saved_once.input_fingerprint({"a": 1, "b": {"c": "x"}}, owner=None, team=None)
    assert len(base) == 64 and models.TcoStudy._meta.get_field("input_fingerprint").max_length == 64


@pytest.mark.django_db(transaction=True)
def test_the_same_study_saved_by_four_requests_at_once_is_one_row(require_postgres, client_as, h100):
    """A real race on PostgreSQL: four threads, each its own connection, release together and POST the
    same study as the same engineer; one row, one 201, and every answer names it."""
    import threading

    from django.db import connection
    from django.test import Client

    user = client_as("engineer", team="research").user
    body = json.dumps(study_document(), default=str)
    barrier, answers = threading.Barrier(4), []

    def save() -> None:
        client = Client()
        client.force_login(user)
        client.raise_request_exception = False
        barrier.wait()
        try:
            answer = client.post("/api/tco/", body, content_type="application/json")
            answers.append((answer.status_code, answer.json().get("id")))
        finally:
            connection.close()

    threads = [threading.Thread(target=save) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    connection.close()
    assert sorted(status for status, _ in answers) == [200, 200, 200, 201], answers
    assert len({study_id for _, study_id in answers}) == 1 and TcoStudy.objects.count() == 1
