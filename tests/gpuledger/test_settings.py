"""Settings read the environment loudly: a bad value stops start-up instead of a silent default."""

import subprocess
import sys

import pytest
from django.core.exceptions import ImproperlyConfigured

from gpuledger.env import env_bool, env_int, env_list


def _settings_in_subprocess(
    env: dict, module: str = "gpuledger.settings.production"
) -> subprocess.CompletedProcess:
    code = (
        f"import django, os; os.environ['DJANGO_SETTINGS_MODULE']={module!r}; django.setup(); "
        "from django.conf import settings as s; "
        "print(s.DATABASES['default']['ENGINE'], s.CELERY_TASK_ALWAYS_EAGER, s.DEBUG)"
    )
    base = {
        "PATH": "/usr/bin:/bin",
        "GPULEDGER_VAR_DIR": "/tmp/gpuledger-settings-test",
        "ALLOWED_HOSTS": "example.com",
    }
    return subprocess.run(
        [sys.executable, "-c", code], env={**base, **env}, capture_output=True, text=True, timeout=60
    )


def test_it_refuses_to_start_without_a_secret_key_when_debug_is_off():
    result = _settings_in_subprocess({})
    assert result.returncode != 0
    assert "SECRET_KEY must be set" in result.stderr


def test_the_local_settings_run_embedded_on_sqlite_with_eager_celery_and_debug_when_nothing_is_set():
    result = _settings_in_subprocess({}, module="gpuledger.settings.local")
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["django.db.backends.sqlite3", "True", "True"]


def test_manage_py_runs_on_the_local_settings_with_no_variable_set(tmp_path):
    # A fresh checkout, nothing exported: the README's commands must not stop on the production rules.
    from pathlib import Path

    manage = Path(__file__).resolve().parents[2] / "manage.py"
    env = {"PATH": "/usr/bin:/bin", "GPULEDGER_VAR_DIR": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, str(manage), "diffsettings", "--output", "unified"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "+ DEBUG = True" in done.stdout
    assert "+ SETTINGS_MODULE = 'gpuledger.settings.local'" in done.stdout
    assert "+ CELERY_TASK_ALWAYS_EAGER = True" in done.stdout


def test_it_uses_postgres_and_a_real_broker_from_urls():
    result = _settings_in_subprocess(
        {
            "SECRET_KEY": "x",
            "DATABASE_URL": "postgres://u@127.0.0.1:5432/db",
            "REDIS_URL": "redis://127.0.0.1:6379/0",
        }
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [
        "gpuledger.db.postgresql",
        "False",
        "False",
    ]  # Django's, with a cheaper health check


def test_it_rejects_a_database_url_it_cannot_read():
    result = _settings_in_subprocess({"SECRET_KEY": "x", "DATABASE_URL": "nosuchdb://x"})
    assert result.returncode != 0
    assert "DATABASE_URL" in result.stderr


def test_it_rejects_a_redis_url_it_cannot_read():
    result = _settings_in_subprocess({"SECRET_KEY": "x", "REDIS_URL": "notaurl"})
    assert result.returncode != 0
    assert "REDIS_URL='notaurl' is not a Redis URL" in result.stderr


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"REDIS_URL": "redis://cache:notaport/0"}, "port that is not a number"),
        ({"ALLOWED_HOSTS": ""}, "ALLOWED_HOSTS must name the host"),
        ({"GPULEDGER_AWS_REGIONS": "us-east-1,useast2"}, "GPULEDGER_AWS_REGIONS"),
        ({"GPULEDGER_AWS_REGIONS": ""}, "GPULEDGER_AWS_REGIONS"),
        ({"GPULEDGER_SPOT_LOOK_BACK_HOURS": "0"}, "GPULEDGER_SPOT_LOOK_BACK_HOURS=0 must be a positive"),
        ({"GPULEDGER_SNAPSHOT_STALE_DAYS": "-3"}, "GPULEDGER_SNAPSHOT_STALE_DAYS"),
        ({"GPULEDGER_REPORTING_CURRENCY": "dollars"}, "not an ISO 4217 code"),
        ({"CELERY_TASK_SOFT_TIME_LIMIT": "900", "CELERY_TASK_TIME_LIMIT": "600"}, "soft limit never fires"),
    ],
)
def test_it_refuses_settings_that_cannot_work(env, message):
    result = _settings_in_subprocess({"SECRET_KEY": "x", **env})
    assert result.returncode != 0
    assert message in result.stderr


@pytest.mark.parametrize("value", ["maybe", "2", "ture"])
def test_env_bool_fails_loudly_on_a_typo(monkeypatch, value):
    monkeypatch.setenv("SOME_FLAG", value)
    with pytest.raises(ImproperlyConfigured, match="SOME_FLAG"):
        env_bool("SOME_FLAG")


def test_env_helpers_read_typed_values(monkeypatch):
    monkeypatch.setenv("A_FLAG", "yes")
    monkeypatch.setenv("A_NUMBER", "42")
    monkeypatch.setenv("A_LIST", "a.example, b.example,,")
    assert env_bool("A_FLAG") is True
    assert env_int("A_NUMBER", 0) == 42
    assert env_list("A_LIST", []) == ["a.example", "b.example"]
    monkeypatch.setenv("A_NUMBER", "4x")
    with pytest.raises(ImproperlyConfigured, match="A_NUMBER"):
        env_int("A_NUMBER", 0)


def test_production_settings_pass_the_deploy_checks():
    # `manage.py check --deploy` with DEBUG off and a long random key: no security warning (HSTS, SSL
    # redirect, secure session and CSRF cookies are set in gpuledger/settings/production.py).
    import secrets
    from pathlib import Path

    manage = Path(__file__).resolve().parents[2] / "manage.py"
    env = {
        "PATH": "/usr/bin:/bin",
        "GPULEDGER_VAR_DIR": "/tmp/gpuledger-settings-test",
        "ALLOWED_HOSTS": "example.com",
        "DJANGO_SETTINGS_MODULE": "gpuledger.settings.production",
        "SECRET_KEY": secrets.token_urlsafe(60),
        "DATABASE_URL": "sqlite:////tmp/gpuledger-deploy-check.sqlite3",
    }
    result = subprocess.run(
        [sys.executable, str(manage), "check", "--deploy"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "security.W" not in result.stdout + result.stderr


def test_a_bad_redis_url_is_named_without_its_password():
    result = _settings_in_subprocess(
        {"SECRET_KEY": "x", "REDIS_URL": "http://user:s3cret-pass@cache.internal:6379/0"}
    )
    assert result.returncode != 0 and "is not a Redis URL" in result.stderr
    assert "s3cret-pass" not in result.stderr and "user:***@cache.internal" in result.stderr
    result = _settings_in_subprocess({"SECRET_KEY": "x", "REDIS_URL": "redis://:hunter22@cache:port/0"})
    assert result.returncode != 0 and "hunter22" not in result.stderr


def test_a_bare_makemigrations_check_answers_about_migrations():
    # No environment at all (a fresh clone): every model change has its migration, and the command says so.
    from pathlib import Path

    manage = Path(__file__).resolve().parents[2] / "manage.py"
    env = {"PATH": "/usr/bin:/bin", "GPULEDGER_VAR_DIR": "/tmp/gpuledger-settings-test"}
    check = subprocess.run(
        [sys.executable, str(manage), "makemigrations", "--check", "--dry-run"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert check.returncode == 0, check.stdout + check.stderr
    assert "No changes detected" in check.stdout


def test_the_production_settings_are_named_not_defaulted_and_keep_their_rules():
    # manage.py falls back to the local settings only; the WSGI/ASGI entry points gunicorn serves fall back
    # to production, so a deployment that forgot DJANGO_SETTINGS_MODULE stops on SECRET_KEY rather than
    # serving debug pages. infra/ names production explicitly.
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    env = {"PATH": "/usr/bin:/bin", "GPULEDGER_VAR_DIR": "/tmp/gpuledger-settings-test"}
    served = subprocess.run(
        [sys.executable, "-c", "import gpuledger.wsgi"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert served.returncode != 0 and "SECRET_KEY must be set" in served.stderr
    named = subprocess.run(
        [sys.executable, str(root / "manage.py"), "check"],
        env={**env, "DJANGO_SETTINGS_MODULE": "gpuledger.settings.production"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert named.returncode != 0 and "SECRET_KEY must be set" in named.stderr
    assert (
        "DJANGO_SETTINGS_MODULE=gpuledger.settings.production" in (root / "infra" / "Dockerfile").read_text()
    )
    import yaml

    compose = yaml.safe_load((root / "infra" / "docker-compose.yml").read_text())
    for service in ("migrate", "web", "worker", "beat"):
        environment = compose["services"][service]["environment"]
        assert environment["DJANGO_SETTINGS_MODULE"] == "gpuledger.settings.production", service
