"""Settings every gpuledger process shares, read from the environment.

Not a settings module by itself: `gpuledger.settings.local` (the default of manage.py: debug, a
development key, SQLite under var/ and in-process Celery unless DATABASE_URL/REDIS_URL say otherwise)
and `gpuledger.settings.production` (named in DJANGO_SETTINGS_MODULE by infra/ and anything served to
others: SECRET_KEY and ALLOWED_HOSTS required, HTTPS only) build on it. See README "Production".
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlsplit

import environ
from django.core.exceptions import ImproperlyConfigured

from gpuledger.env import (
    env_bool,
    env_http_url,
    env_int,
    env_list,
    env_positive_int,
    env_s3_prefix,
    env_str,
)

BASE_DIR = Path(__file__).resolve().parent.parent.parent
VAR_DIR = Path(env_str("GPULEDGER_VAR_DIR", str(BASE_DIR / "var")))

DEBUG = False  # local.py turns it on; production.py reads DEBUG from the environment

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # Swagger UI / Redoc assets served from static files, no CDN
    "django_filters",
    "django_celery_beat",
    "pricing",
    "procurement",
    "scheduler",
    "billing",
    "planning",
    "gpuledger.accounts",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "gpuledger.upload_size.RefuseOversizedBodyMiddleware",  # before anything reads the body (issue 31)
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "gpuledger.no_store.NoStoreMiddleware",  # after static files: every computed answer is no-store
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "gpuledger.accounts.middleware.SignInRequiredMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "gpuledger.security.ContentSecurityPolicyMiddleware",  # scripts and styles from static files only
    # last: GET, HEAD and OPTIONS run in autocommit, every other method in ATOMIC_REQUESTS' transaction
    "gpuledger.transactions.ReadsOutsideTransactionMiddleware",
]

ROOT_URLCONF = "gpuledger.urls"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "gpuledger" / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "gpuledger.accounts.context_processors.signed_in",
                "gpuledger.context_processors.navigation",
            ],
            # gpuledger is a project package, not an app: name its template filters here.
            "libraries": {"formatting": "gpuledger.templatetags.formatting"},
        },
    },
]

WSGI_APPLICATION = "gpuledger.wsgi.application"
ASGI_APPLICATION = "gpuledger.asgi.application"


SUPPORTED_DATABASE_SCHEMES = {"postgres", "postgresql", "pgsql", "sqlite"}


def _database_config() -> dict:
    url = env_str("DATABASE_URL")
    if not url:
        VAR_DIR.mkdir(parents=True, exist_ok=True)
        return {"ENGINE": "django.db.backends.sqlite3", "NAME": VAR_DIR / "gpuledger.sqlite3"}
    scheme = url.split(":", 1)[0]
    if scheme not in SUPPORTED_DATABASE_SCHEMES:
        raise ImproperlyConfigured(
            f"DATABASE_URL scheme {scheme!r} is not supported (use one of {', '.join(sorted(SUPPORTED_DATABASE_SCHEMES))})"
        )
    try:
        config = environ.Env.db_url_config(url)
    except Exception as exc:  # django-environ raises several types for a bad URL
        raise ImproperlyConfigured(f"DATABASE_URL is not a database URL: {exc}") from exc
    # Persistent connections: a new PostgreSQL connection forks a backend and authenticates, several
    # milliseconds of CPU per request on a small server (docs/performance.md). Each gunicorn sync worker
    # keeps one; the health check before reuse replaces one the server closed (a PostgreSQL restart).
    config["CONN_MAX_AGE"] = env_int("DATABASE_CONN_MAX_AGE", 300)
    config["CONN_HEALTH_CHECKS"] = True
    if config["ENGINE"] == "django.db.backends.postgresql":
        config["ENGINE"] = "gpuledger.db.postgresql"  # the health check looks at the socket first
    return config


DATABASES = {"default": {**_database_config(), "ATOMIC_REQUESTS": True}}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"


def _without_password(parsed) -> str:
    """The URL as it may be printed: a password is replaced by *** (start-up errors end up in logs)."""
    if parsed.password is None:
        return parsed.geturl()
    netloc = parsed.netloc.replace(f":{parsed.password}@", ":***@", 1)
    return parsed._replace(netloc=netloc).geturl()


def _redis_url() -> str:
    url = env_str("REDIS_URL")
    if not url:
        return ""
    parsed = urlsplit(url)
    shown = _without_password(parsed)
    try:
        parsed.port  # noqa: B018  (raises ValueError on a port that is not a number)
    except ValueError:
        raise ImproperlyConfigured(f"REDIS_URL={shown!r} has a port that is not a number") from None
    if parsed.scheme not in {"redis", "rediss", "unix"} or (parsed.scheme != "unix" and not parsed.hostname):
        raise ImproperlyConfigured(
            f"REDIS_URL={shown!r} is not a Redis URL (redis://host:6379/0, rediss://, unix://)"
        )
    return url


REDIS_URL = _redis_url()

if REDIS_URL:
    # A Redis outage degrades the cache to per-process memory instead of failing requests (gpuledger/cache.py).
    CACHES = {
        "default": {
            "BACKEND": "gpuledger.cache.ResilientRedisCache",
            "LOCATION": REDIS_URL,
            "OPTIONS": {"socket_connect_timeout": 2, "socket_timeout": 5},
        }
    }
    # Sessions are read on every signed-in request: from Redis, written through to the database (a
    # session outlives a Redis restart, and the cache's fallback to process memory keeps them readable).
    SESSION_ENGINE = "django.contrib.sessions.backends.cached_db"
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
# Each process's own memory, for rendered fragments whose key names every version they show (a saved
# recommendation's rows: its id, computation time and the hour): no other process can have a newer one,
# so a Redis round trip per fragment would buy nothing but sharing one render among the workers.
CACHES["local"] = {
    "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
    "LOCATION": "gpuledger-local",
    "OPTIONS": {"MAX_ENTRIES": 500},
}

# Celery: JSON only (no pickles through the broker), time limits on every task.
CELERY_BROKER_URL = REDIS_URL or "memory://"
CELERY_RESULT_BACKEND = REDIS_URL or "cache+memory://"
CELERY_TASK_ALWAYS_EAGER = not REDIS_URL
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_TASK_TIME_LIMIT = env_positive_int("CELERY_TASK_TIME_LIMIT", 15 * 60)
CELERY_TASK_SOFT_TIME_LIMIT = env_positive_int("CELERY_TASK_SOFT_TIME_LIMIT", 10 * 60)
if CELERY_TASK_SOFT_TIME_LIMIT >= CELERY_TASK_TIME_LIMIT:
    raise ImproperlyConfigured(
        "CELERY_TASK_SOFT_TIME_LIMIT must be below CELERY_TASK_TIME_LIMIT, or the soft limit never fires"
    )
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# Late-acked tasks: Redis hands an unacknowledged task to another worker once this long has passed, so
# it is the longest hard time limit (no task of this project sets a longer one; a test checks) plus a
# margin. kombu's default (an hour) left a task killed mid-run undelivered for an hour.
CELERY_VISIBILITY_MARGIN_S = env_positive_int("CELERY_VISIBILITY_MARGIN_S", 5 * 60)
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": CELERY_TASK_TIME_LIMIT + CELERY_VISIBILITY_MARGIN_S}
# A worker process killed mid-task (OOM, kill -9) puts its late-acked task back rather than acking it.
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_BEAT_SCHEDULER = "django_celery_beat.schedulers:DatabaseScheduler"
CELERY_TIMEZONE = "UTC"
CELERY_IMPORTS = [  # task modules besides the apps' tasks.py
    "billing.imports.upload_tasks",
    "billing.imports.scheduled_tasks",
]
# Uploaded billing files wait here for the worker (billing/imports/uploads.py): a folder the web
# and worker processes share; empty means one in the system's temporary folder (one host).
BILLING_SPOOL_DIR = env_str("BILLING_SPOOL_DIR", "")
# Each billing import is kept here as an immutable Parquet dataset by charge month
# (billing/storage/datasets.py); PostgreSQL records its files. Shared by the web and worker processes.
BILLING_DATASET_DIR = Path(env_str("BILLING_DATASET_DIR", str(VAR_DIR / "billing")))
# Or under an S3 prefix (s3://bucket/prefix) when BILLING_DATASET_URL is set (it wins over the folder);
# BILLING_DATASET_S3_ENDPOINT points at an S3-compatible store (MinIO, Ceph: http(s)://host:port) and
# BILLING_DATASET_S3_REGION names the bucket's region. Credentials come from AWS's usual chain
# (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, ~/.aws, an instance role): never a setting of ours.
BILLING_DATASET_URL = env_s3_prefix("BILLING_DATASET_URL")
BILLING_DATASET_S3_ENDPOINT = env_http_url("BILLING_DATASET_S3_ENDPOINT")
BILLING_DATASET_S3_REGION = env_str("BILLING_DATASET_S3_REGION", "").strip()

# Sign-in (gpuledger/accounts): every page needs it; failed sign-ins are throttled by the backend.
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "login"
AUTHENTICATION_BACKENDS = ["gpuledger.accounts.backends.ThrottledModelBackend"]
GPULEDGER_LOGIN_FAILURE_LIMIT = env_positive_int("GPULEDGER_LOGIN_FAILURE_LIMIT", 5)
GPULEDGER_LOGIN_WINDOW_SECONDS = env_positive_int("GPULEDGER_LOGIN_WINDOW_SECONDS", 15 * 60)

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]

FORMS_URLFIELD_ASSUME_HTTPS = True  # Django 6 default, opted into now

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "gpuledger" / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}

REST_FRAMEWORK = {
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["rest_framework.parsers.JSONParser"],
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.LimitOffsetPagination",
    "PAGE_SIZE": 100,
    # API tokens first: an anonymous call then gets 401 with a Bearer challenge. No Basic auth.
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "gpuledger.accounts.authentication.ApiTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    # A fallback only: every view names its roles (gpuledger.roles.role_permission).
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_THROTTLE_CLASSES": [
        "gpuledger.accounts.throttling.UserApiRateThrottle",
        "gpuledger.accounts.throttling.AnonApiRateThrottle",
    ],
    "DEFAULT_THROTTLE_RATES": {
        "user": env_str("GPULEDGER_API_RATE_USER", "1200/minute"),
        "anon": env_str("GPULEDGER_API_RATE_ANON", "60/minute"),
    },
    # Every API error as {"errors": [{"path", "message"}]} (gpuledger/api_errors.py)
    "EXCEPTION_HANDLER": "gpuledger.api_errors.api_exception_handler",
}

SPECTACULAR_SETTINGS = {
    "TITLE": "gpuledger API",
    "DESCRIPTION": "GPU sizing, prices, job cost and buy-vs-rent decisions.",
    "VERSION": "0.1.0",
    "SERVE_PERMISSIONS": ["gpuledger.roles.SignedInWithRole"],
    # /api/docs/ works without internet: Swagger UI's JavaScript and CSS come from drf-spectacular-sidecar.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    # The one error shape, as a component and as every undocumented 400/401/403/404 body.
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "gpuledger.api_errors.document_error_responses",
    ],
}

# Change-event notifications: SMTP (local.py prints them to the console instead).
EMAIL_BACKEND = env_str("EMAIL_BACKEND", "django.core.mail.backends.smtp.EmailBackend")
EMAIL_HOST = env_str("EMAIL_HOST", "localhost")
EMAIL_PORT = env_positive_int("EMAIL_PORT", 25)
EMAIL_HOST_USER = env_str("EMAIL_HOST_USER")
EMAIL_HOST_PASSWORD = env_str("EMAIL_HOST_PASSWORD")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", default=False)
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "gpuledger@localhost")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    # a PDF's layout steps and font subsetting ("Step 5 - Creating layout", "GDEF pruned") are not news
    "loggers": {name: {"level": "WARNING"} for name in ("weasyprint", "weasyprint.progress", "fontTools")},
}
if CELERY_TASK_ALWAYS_EAGER:
    # tasks run in-process (no REDIS_URL): a command's output is its answer, not "Task ... succeeded in
    # 0.005 s: {...}" or kombu's "No hostname was supplied" about the in-memory broker (issue 30)
    LOGGING["loggers"] |= {"celery.app.trace": {"level": "WARNING"}, "kombu.connection": {"level": "ERROR"}}

# Price refreshes: AWS regions refreshed by the beat schedule (each region is its own task) and how
# far back the spot history look-back reaches on a refresh.
GPULEDGER_AWS_REGIONS = env_list("GPULEDGER_AWS_REGIONS", ["us-east-1", "us-west-2", "eu-west-1"])
_bad_regions = [r for r in GPULEDGER_AWS_REGIONS if not re.fullmatch(r"[a-z]{2}(-[a-z]+)+-\d", r)]
if not GPULEDGER_AWS_REGIONS or _bad_regions:
    raise ImproperlyConfigured(
        f"GPULEDGER_AWS_REGIONS needs AWS region codes such as us-east-1; got {_bad_regions or 'nothing'}"
    )
GPULEDGER_SPOT_LOOK_BACK_HOURS = env_positive_int("GPULEDGER_SPOT_LOOK_BACK_HOURS", 7 * 24)
# Live price sources beyond AWS (docs/provider-prices.md): each is off until its setting or key is set.
# Azure's Retail Prices API is public (no key), so it is switched on explicitly; the keys are secrets,
# read from the environment only (Django's error pages hide settings named *KEY*).
GPULEDGER_AZURE_PRICES = env_bool("GPULEDGER_AZURE_PRICES", default=False)
GCP_BILLING_API_KEY = env_str("GCP_BILLING_API_KEY", "")
LAMBDA_API_KEY = env_str("LAMBDA_API_KEY", "")
# Vast's public offer search (pricing/providers/vast_market.py): no credentials, off unless set to 1.
GPULEDGER_VAST_MARKET = env_bool("GPULEDGER_VAST_MARKET", default=False)
# Providers read through gpuhunt (pricing/providers/gpuhunt_offers.py), comma-separated (e.g. "runpod,vultr"):
# each is off until named here.
GPULEDGER_GPUHUNT_PROVIDERS = env_list("GPULEDGER_GPUHUNT_PROVIDERS", [])
# AWS Savings Plans rates (pricing/sources/registry.py): on when boto3 finds credentials in the environment or
# ~/.aws; an EC2 instance role is not looked for (that asks the network), so it is switched on by this.
GPULEDGER_AWS_SAVINGS_PLANS = env_bool("GPULEDGER_AWS_SAVINGS_PLANS", default=False)
# Prices from a snapshot (bundled catalog, imported file) have no refresh schedule; they count as
# stale after this many days (scheduled refreshes use twice their schedule instead).
GPULEDGER_SNAPSHOT_STALE_DAYS = env_positive_int("GPULEDGER_SNAPSHOT_STALE_DAYS", 90)

# The currency reports are expressed in unless a study or request names another.
GPULEDGER_REPORTING_CURRENCY = env_str("GPULEDGER_REPORTING_CURRENCY", "USD")
if not re.fullmatch(r"[A-Z]{3}", GPULEDGER_REPORTING_CURRENCY):
    raise ImproperlyConfigured(
        f"GPULEDGER_REPORTING_CURRENCY={GPULEDGER_REPORTING_CURRENCY!r} is not an ISO 4217 code"
    )

# Request bounds (issue 9): a body over 1 MB is refused (forms by Django, API JSON by BoundedJSONParser
# with a 413); JSON depth is bounded; a page is at most 1,000 rows; a NUL byte in a query parameter is a 400.
DATA_UPLOAD_MAX_MEMORY_SIZE = 1024 * 1024
REST_FRAMEWORK["DEFAULT_PARSER_CLASSES"] = ["gpuledger.parsers.BoundedJSONParser"]
REST_FRAMEWORK["DEFAULT_PAGINATION_CLASS"] = "gpuledger.pagination.BoundedLimitOffsetPagination"
MIDDLEWARE.insert(
    MIDDLEWARE.index("django.middleware.common.CommonMiddleware"),
    "gpuledger.middleware.RejectNulBytesMiddleware",
)
