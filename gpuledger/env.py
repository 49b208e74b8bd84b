"""Typed readers for settings that come from the environment.

Each helper raises ImproperlyConfigured on a value it cannot read, so a typo in a deployment
fails at start-up instead of silently falling back to a default.
"""

from __future__ import annotations

import os
import re
from urllib.parse import urlsplit

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_str(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool = False) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name}={raw!r} is not a boolean (use 1/0, true/false, yes/no, on/off)")


def env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not an integer") from None


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None:
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


def env_positive_int(name: str, default: int) -> int:
    value = env_int(name, default)
    if value <= 0:
        raise ImproperlyConfigured(f"{name}={value} must be a positive whole number")
    return value


# S3's bucket naming rules: 3-63 characters of lowercase letters, digits, dots and hyphens, starting and
# ending with a letter or digit (https://docs.aws.amazon.com/AmazonS3/latest/userguide/bucketnamingrules.html)
_BUCKET = re.compile(r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]")


def env_s3_prefix(name: str) -> str:
    """An `s3://bucket[/prefix]` location, normalized without a trailing slash; "" when unset. A value
    that is not one (another scheme, no bucket, a bucket S3 refuses, an empty path segment) raises."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return ""
    parts = urlsplit(raw)
    prefix = parts.path.strip("/")
    problem = ""
    if parts.scheme != "s3":
        problem = "must start with s3://"
    elif not _BUCKET.fullmatch(parts.netloc or ""):
        problem = f"bucket {parts.netloc!r} is not an S3 bucket name"
    elif parts.query or parts.fragment or "//" in parts.path or prefix.startswith(".") or "/." in prefix:
        problem = "the prefix must be plain path segments (no ?, #, empty or dot-leading segments)"
    if problem:
        raise ImproperlyConfigured(f"{name}={raw!r}: {problem} (for example s3://billing-bucket/gpuledger)")
    return f"s3://{parts.netloc}" + (f"/{prefix}" if prefix else "")


def env_http_url(name: str, default: str = "") -> str:
    """An http(s)://host[:port] address (an S3-compatible store's endpoint), without a trailing slash."""
    raw = os.environ.get(name, default).strip()
    if not raw:
        return ""
    parts = urlsplit(raw)
    try:
        port_ok = parts.port is None or 0 < parts.port
    except ValueError:
        port_ok = False
    if parts.scheme not in ("http", "https") or not parts.hostname or not port_ok or parts.path.strip("/"):
        raise ImproperlyConfigured(f"{name}={raw!r} is not an http(s)://host[:port] address")
    return f"{parts.scheme}://{parts.netloc}"
