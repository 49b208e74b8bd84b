"""infra/: the compose file describes the production stack (no Docker engine runs here)."""

from pathlib import Path

import pytest
import yaml

INFRA = Path(__file__).resolve().parents[2] / "infra"


@pytest.fixture(scope="module")
def compose():
    return yaml.safe_load((INFRA / "docker-compose.yml").read_text())


def test_it_declares_the_five_services_with_healthchecks(compose):
    services = compose["services"]
    assert {"web", "worker", "beat", "postgres", "redis"} <= set(services)
    for name in ("web", "worker", "beat", "postgres", "redis"):
        assert services[name]["healthcheck"]["test"], name


def test_the_service_commands_point_at_code_that_exists(compose):
    services = compose["services"]
    assert services["web"]["command"][:2] == ["gunicorn", "gpuledger.wsgi"]
    assert services["worker"]["command"][:4] == ["celery", "-A", "gpuledger", "worker"]
    assert services["beat"]["command"][:4] == ["celery", "-A", "gpuledger", "beat"]
    root = INFRA.parent
    assert (root / "gpuledger" / "wsgi.py").exists() and (root / "gpuledger" / "celery.py").exists()
    assert "/healthz" in services["web"]["healthcheck"]["test"][-1]


def test_the_app_services_wait_for_healthy_backing_services(compose):
    for name in ("web", "worker", "beat"):
        depends = compose["services"][name]["depends_on"]
        assert depends["postgres"]["condition"] == "service_healthy"
        assert depends["redis"]["condition"] == "service_healthy"


def test_the_dockerfile_installs_the_pinned_requirements():
    dockerfile = (INFRA / "Dockerfile").read_text()
    assert "pip install -r requirements.txt" in dockerfile
    assert "FROM python:3.11" in dockerfile


@pytest.mark.django_db
def test_healthz_reports_the_database(client):
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json()["checks"]["database"] is True
