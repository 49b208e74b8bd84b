"""Test settings: the real settings, with a throwaway secret and a fast password hasher.

DATABASE_URL and REDIS_URL still come from the environment, so `.ci/run` tests on PostgreSQL and
Redis while a bare `make test` tests on SQLite with eager Celery.
"""

import os

os.environ.setdefault("SECRET_KEY", "tests-only-secret-key")
os.environ.setdefault("ALLOWED_HOSTS", "testserver,localhost,127.0.0.1")


def _redis_url_for_this_worker(url: str, worker: str) -> str:
    """pytest-xdist worker gwN uses Redis database (the URL's + 1 + N): the suite clears cache keys and runs
    in-process Celery workers, and two workers sharing one database would clear or consume each other's."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    if not parts.scheme.startswith("redis"):  # a unix socket names its database in the query: left as is
        return url
    base = int(parts.path.strip("/") or 0)
    number = base + 1 + int(worker.removeprefix("gw"))
    if number > 15:
        raise ValueError(f"REDIS_URL database {base} leaves no database for xdist worker {worker}")
    return urlunsplit(parts._replace(path=f"/{number}"))


if os.environ.get("REDIS_URL") and os.environ.get("PYTEST_XDIST_WORKER"):
    # processes a test starts (a Celery worker on tests.settings) inherit both variables: their database
    # is derived from the suite's own URL, kept aside, so it is the same one, not one further on
    suite_url = os.environ.setdefault("GPULEDGER_SUITE_REDIS_URL", os.environ["REDIS_URL"])
    os.environ["REDIS_URL"] = _redis_url_for_this_worker(suite_url, os.environ["PYTEST_XDIST_WORKER"])

from gpuledger.settings.production import *  # noqa: E402,F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

# The test client and the browser tests' live server speak plain HTTP.
SECURE_SSL_REDIRECT = False
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = False

# Each worker's billing datasets in a folder of its own (billing/storage/datasets.py), never under var/.
import tempfile  # noqa: E402
from pathlib import Path  # noqa: E402

BILLING_DATASET_DIR = Path(
    tempfile.mkdtemp(prefix=f"gpuledger-billing-{os.environ.get('PYTEST_XDIST_WORKER', 'main')}-")
)
