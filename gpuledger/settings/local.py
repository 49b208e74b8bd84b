"""Local, embedded settings: what `manage.py` runs on when DJANGO_SETTINGS_MODULE names nothing else.

Debug on, a development-only secret key, a SQLite file under var/ and Celery tasks run in-process
(unless DATABASE_URL or REDIS_URL name real services), e-mails printed to the console. Never serve
this to anyone else: production is `gpuledger.settings.production`.
"""

from gpuledger.env import env_bool, env_list, env_str
from gpuledger.settings.base import *  # noqa: F403
from gpuledger.settings.base import REST_FRAMEWORK, STORAGES

DEBUG = env_bool("DEBUG", default=True)  # DEBUG=0 shows the production error pages, still locally

SECRET_KEY = env_str("SECRET_KEY") or "dev-only-insecure-key-do-not-use-in-production"  # noqa: S105
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]"])

# Static files straight from the apps' folders (no collectstatic needed); the browsable API for poking.
STORAGES["staticfiles"] = {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}
REST_FRAMEWORK["DEFAULT_RENDERER_CLASSES"].append("rest_framework.renderers.BrowsableAPIRenderer")

EMAIL_BACKEND = env_str("EMAIL_BACKEND", "django.core.mail.backends.console.EmailBackend")
