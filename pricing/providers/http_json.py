"""GET a JSON document over HTTPS for the price sources that are plain web APIs (no SDK), one request.

Which answers a later attempt can fix is decided here and said by the error's class: throttling (429),
a server or gateway briefly down (500, 502, 503, 504) and a dropped or timed-out connection raise
``TransientHttpError`` (``pricing.providers.retry.call_with_retry`` retries those, with backoff and
jitter); any other status, and a body that is not JSON (an HTML error page), raise ``HttpSourceError``
at once, naming the URL, the status and the start of the body. No credentials are sent or logged.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any

from pricing.providers.retry import TransientHttpError

TRANSIENT_STATUSES = frozenset({429, 500, 502, 503, 504})
BODY_EXCERPT_CHARS = 200
MAX_BODY_BYTES = 64 * 1024 * 1024  # a bound on what one answer may hold (Vast's full market is ~10 MB)
USER_AGENT = "gpuledger price refresh (+https://github.com/gpuledger)"


class HttpSourceError(RuntimeError):
    """An answer no retry will fix: a refused request, a missing page, or a body that is not JSON."""


# (url, timeout_s) -> (status, body bytes); tests hand in recorded answers instead of the network.
Transport = Callable[[str, float], tuple[int, bytes]]


def urllib_transport(url: str, timeout_s: float) -> tuple[int, bytes]:
    """The network, through urllib (HTTPS only: the URLs are the sources' fixed https addresses)."""
    if not url.startswith("https://"):
        raise HttpSourceError(f"{url[:80]}: only https URLs are fetched")
    headers = {"Accept": "application/json", "User-Agent": USER_AGENT}
    request = urllib.request.Request(url, headers=headers)  # noqa: S310 (https checked above)
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:  # noqa: S310 (https checked)
            return response.status, response.read(MAX_BODY_BYTES + 1)
    except urllib.error.HTTPError as error:
        return error.code, error.read(BODY_EXCERPT_CHARS)
    except (urllib.error.URLError, TimeoutError, ConnectionError) as error:
        raise TransientHttpError(f"{_where(url)}: connection failed: {error}") from error


def get_json(url: str, *, transport: Transport = urllib_transport, timeout_s: float = 60.0) -> Any:
    """The JSON body of a 200 answer; the errors above otherwise."""
    status, body = transport(url, timeout_s)
    if status in TRANSIENT_STATUSES:
        raise TransientHttpError(f"{_where(url)}: HTTP {status} ({_excerpt(body)})")
    if status != 200:
        raise HttpSourceError(f"{_where(url)}: HTTP {status}: {_excerpt(body)}")
    if len(body) > MAX_BODY_BYTES:
        raise HttpSourceError(f"{_where(url)}: the answer is over {MAX_BODY_BYTES} bytes")
    try:
        return json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise HttpSourceError(f"{_where(url)}: the answer is not JSON: {_excerpt(body)}") from None


def _where(url: str) -> str:
    """The URL without its query (which may be long; no source here puts a key in it, but none is logged)."""
    return url.split("?", 1)[0]


def _excerpt(body: bytes) -> str:
    text = body[:BODY_EXCERPT_CHARS].decode("utf-8", errors="replace")
    return " ".join(text.split()) or "empty body"
