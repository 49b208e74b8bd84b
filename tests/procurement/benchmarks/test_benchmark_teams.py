"""Benchmarks follow the team rules (issue 31, finding 8): an uploaded run belongs to its uploader and
their team, as a workload does. Its spec, price paid and uploader reach that team's engineers and the
admins only, on every benchmark route (API list, list page, detail page); the shared calibration pools
every team's runs and says so, showing only its per-GPU factors."""

from __future__ import annotations

import pytest

from procurement.models import BenchmarkResult
from tests.procurement.benchmarks.helpers import gpu_document

pytestmark = pytest.mark.django_db


def _upload(client, **changes):
    return client.post("/api/benchmarks/", gpu_document(**changes), content_type="application/json")


def test_an_upload_belongs_to_its_uploader_and_team_and_only_they_see_it(bundled_catalog, client_as):
    research = client_as("engineer", team="research")
    platform = client_as("engineer", team="platform")
    admin = client_as("admin")
    created = _upload(research)
    assert created.status_code == 201, created.content
    body = created.json()
    assert (body["team"], body["uploaded_by"]) == ("research", research.user.get_username())
    run = BenchmarkResult.objects.get(pk=body["id"])
    assert (run.team.slug, run.owner_id) == ("research", research.user.pk)

    for client, sees in ((research, True), (admin, True), (platform, False)):
        listed = [row["id"] for row in client.get("/api/benchmarks/").json()["results"]]
        assert (run.pk in listed) is sees
        page = client.get("/benchmarks/").content.decode()
        assert (f"/benchmarks/{run.pk}/" in page) is sees
        assert client.get(f"/benchmarks/{run.pk}/").status_code == (200 if sees else 404)

    # the same document from another team: refused without showing the first team's run
    again = _upload(platform)
    assert again.status_code == 409 and "another team" in again.content.decode()
    assert str(run.price_per_hour) not in again.content.decode()
    assert _upload(research).status_code == 200  # the uploader's team: already stored


def test_the_calibration_says_what_it_pools(bundled_catalog, client_as):
    assert _upload(client_as("engineer", team="research")).status_code == 201
    assert (
        _upload(client_as("engineer", team="platform"), measured_at="2026-11-21T10:00:00+00:00").status_code
        == 201
    )
    page = client_as("engineer", team="vision").get("/benchmarks/calibration/").content.decode()
    assert "GPU runs (2 runs from 2 teams)" in page  # the engineer of a third team sees the pool
    assert "visible to its own team only" in page
