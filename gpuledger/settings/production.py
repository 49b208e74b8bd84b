"""Production settings: named in DJANGO_SETTINGS_MODULE (infra/Dockerfile, docker-compose, the load test).

Everything comes from the environment (README "Production") and a deployment that cannot work stops
at start-up with the variable it lacks: SECRET_KEY and ALLOWED_HOSTS are required while DEBUG is off.
HTTPS only (`manage.py check --deploy` passes).
"""

from django.core.exceptions import ImproperlyConfigured

from gpuledger.env import env_bool, env_int, env_list, env_str
from gpuledger.settings.base import *  # noqa: F403
from gpuledger.settings.base import REST_FRAMEWORK

DEBUG = env_bool("DEBUG", default=False)  # on only to diagnose a deployment, never to serve one

SECRET_KEY = env_str("SECRET_KEY")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured(
            "SECRET_KEY must be set when DEBUG is off (these are the production settings, "
            "DJANGO_SETTINGS_MODULE=gpuledger.settings.production; leave it unset to run locally)"
        )
    SECRET_KEY = "dev-only-insecure-key-do-not-use-in-production"  # noqa: S105 (DEBUG only)

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost"] if DEBUG else [])
if not DEBUG and not ALLOWED_HOSTS:
    raise ImproperlyConfigured("ALLOWED_HOSTS must name the host(s) this site is served on when DEBUG is off")

# Production serves HTTPS only (`manage.py check --deploy` passes): redirect plain HTTP, secure cookies,
# HSTS for a year. /healthz stays reachable over HTTP for the container's own health check. Behind a
# proxy that terminates TLS, set GPULEDGER_BEHIND_TLS_PROXY=1 so its X-Forwarded-Proto header is trusted.
if not DEBUG:
    SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", default=True)
    SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
    SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 31_536_000)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    # Submitting the domain to browsers' HSTS preload list is the operator's decision (hard to undo):
    # opt in with SECURE_HSTS_PRELOAD=1; the check that asks for it is silenced, not forgotten.
    SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", default=False)
    SILENCED_SYSTEM_CHECKS = [] if SECURE_HSTS_PRELOAD else ["security.W021"]
    if env_bool("GPULEDGER_BEHIND_TLS_PROXY", default=False):
        SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
else:
    REST_FRAMEWORK["DEFAULT_RENDERER_CLASSES"].append("rest_framework.renderers.BrowsableAPIRenderer")
