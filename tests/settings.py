"""Test settings: the real settings, with a throwaway secret and a fast password hasher.

DATABASE_URL and REDIS_URL still come from the environment, so `.ci/run` tests on PostgreSQL and
Redis while a bare `make test` tests on SQLite with eager Celery.
"""

import os

os.environ.setdefault("SECRET_KEY", "tests-only-secret-key")
os.environ.setdefault("ALLOWED_HOSTS", "testserver,localhost,127.0.0.1")

from gpuledger.settings.production import *  # noqa: E402,F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

# The test client and the browser tests' live server speak plain HTTP.
SECURE_SSL_REDIRECT = False
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = False
