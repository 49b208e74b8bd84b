"""The ranking's offer table cached per price version: in this process, and in Redis for every worker.

A ranking request used to rebuild the offer table from the database first (1.7 of 1.8 s at 95,000
offers, issue 9). Now the table is built once per price version (pricing/price_version.py: every
price, FX, catalog or advisor write changes it), stored in Redis where REDIS_URL is set, and kept
deserialized in each process. A request checks the version (one query) and reuses what it finds.

* Keys carry the price version and ``SCHEMA``: a table built by older code, or for an older version,
  is never read. Entries expire after ``SHARED_TTL_S``; the process keeps the newest few.
* The stored form is numpy's ``.npz`` read with ``allow_pickle=False``: numbers as raw arrays, text as
  integer codes into a list of names. Nothing in Redis is unpickled, so a Redis another client could
  write cannot make this process run code (it could still forge prices: Redis is ours alone).
* Two cold requests: the first takes a short build lock and builds, the other waits for its entry for
  up to ``BUILD_WAIT_S`` and then builds itself. An entry is one ``SET``, so no reader sees half of it.
* Redis down: the table is built here, as without Redis; ranking never fails for want of the cache.
* Stale flags depend on the clock, so the cached table has none; a context adds them as of the minute
  it is built (``CONTEXT_S``), and the next minute builds a new context from the same table.
"""

from __future__ import annotations

import io
import json
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
from django.conf import settings

log = logging.getLogger(__name__)

SCHEMA = "offer-table-v2"  # change with offer_table()'s columns or their meaning
SHARED_TTL_S = 3600  # a superseded version's entry is garbage within the hour
PROCESS_ENTRIES = 2  # the current version, and the one before while requests on it finish
CONTEXT_S = 60
BUILD_LOCK_S = 30
BUILD_WAIT_S = 5.0
POLL_S = 0.05

_lock = threading.Lock()
_frames: OrderedDict[str, pd.DataFrame] = OrderedDict()
_contexts: OrderedDict[tuple[str, int], Any] = OrderedDict()
_redis_client = None


def cache_clear() -> None:
    """Forget this process's tables and contexts (tests; Redis entries expire on their own)."""
    with _lock:
        _frames.clear()
        _contexts.clear()


def _remember(store: OrderedDict, key, value) -> None:
    with _lock:
        store[key] = value
        store.move_to_end(key)
        while len(store) > PROCESS_ENTRIES:
            store.popitem(last=False)


def _recall(store: OrderedDict, key):
    with _lock:
        value = store.get(key)
        if value is not None:
            store.move_to_end(key)
        return value


def context_for(
    version: str, bucket: int, build: Callable[[pd.DataFrame], Any], table: Callable[[], pd.DataFrame]
):
    """This process's context for (price version, minute), built from the cached table on first use."""
    context = _recall(_contexts, (version, bucket))
    if context is None:
        context = build(offer_table_for(version, table))
        _remember(_contexts, (version, bucket), context)
    return context


def offer_table_for(version: str, build: Callable[[], pd.DataFrame]) -> pd.DataFrame:
    """The offer table of this price version: this process's copy, else Redis's, else built (and shared)."""
    frame = _recall(_frames, version)
    if frame is None:
        frame = _shared_or_built(version, build)
        _remember(_frames, version, frame)
    return frame


def shared_key(version: str) -> str:
    return f"gpuledger:{SCHEMA}:{version}"


def _shared_or_built(version: str, build: Callable[[], pd.DataFrame]) -> pd.DataFrame:
    client = _redis()
    if client is None:
        return build()
    key = shared_key(version)
    try:
        found = client.get(key)
        if found is None and not client.set(key + ":building", b"1", nx=True, ex=BUILD_LOCK_S):
            found = _wait_for(client, key)
    except _redis_errors() as error:
        log.warning("offer table cache unavailable (%s): building here", type(error).__name__)
        return build()
    if found is not None:
        return frame_loads(found)
    frame = build()
    try:
        client.set(key, frame_dumps(frame), ex=SHARED_TTL_S)
        client.delete(key + ":building")
    except _redis_errors() as error:
        log.warning("offer table not shared (%s)", type(error).__name__)
    return frame


def _wait_for(client, key: str) -> bytes | None:
    """Another request is building this version: wait a little for its entry rather than build too."""
    deadline = time.monotonic() + BUILD_WAIT_S
    while time.monotonic() < deadline:
        time.sleep(POLL_S)
        found = client.get(key)
        if found is not None:
            return found
    return None


def _redis():
    global _redis_client
    if not settings.REDIS_URL:
        return None
    if _redis_client is None:
        import redis

        _redis_client = redis.Redis.from_url(settings.REDIS_URL, socket_timeout=5, socket_connect_timeout=2)
    return _redis_client


def _redis_errors() -> tuple[type[Exception], ...]:
    import redis

    return (redis.RedisError, OSError)


# --- The stored form -------------------------------------------------------------------------------


def frame_dumps(frame: pd.DataFrame) -> bytes:
    """A table as ``.npz`` bytes, pickle-free: each column by kind (text, time in UTC, plain numpy)."""
    arrays: dict[str, np.ndarray] = {}
    manifest = []
    for position, name in enumerate(frame.columns):
        column = frame[name]
        slot = f"c{position}"
        if isinstance(column.dtype, pd.DatetimeTZDtype):
            arrays[slot] = column.dt.tz_convert("UTC").dt.tz_localize(None).to_numpy(dtype="datetime64[us]")
            manifest.append((name, "utc"))
        elif column.dtype.kind in "biuf":
            arrays[slot] = column.to_numpy()
            manifest.append((name, "plain"))
        else:
            codes, names = pd.factorize(column.to_numpy(dtype=object))  # missing: code -1
            if not all(isinstance(value, str) for value in names):
                raise TypeError(f"column {name!r}: only text, numbers and UTC times can be cached")
            arrays[slot] = codes.astype(np.int32)
            arrays[slot + "n"] = np.array(list(names), dtype=str)
            manifest.append((name, "text"))
    arrays["manifest"] = np.array(json.dumps(manifest))
    buffer = io.BytesIO()
    np.savez(buffer, allow_pickle=False, **arrays)
    return buffer.getvalue()


def frame_loads(data: bytes) -> pd.DataFrame:
    """The table ``frame_dumps`` stored; text comes back as object arrays (what the ranking hashes)."""
    with np.load(io.BytesIO(data), allow_pickle=False) as stored:
        manifest = json.loads(str(stored["manifest"]))
        columns = {}
        for position, (name, kind) in enumerate(manifest):
            values = stored[f"c{position}"]
            if kind == "text":
                names = np.append(stored[f"c{position}n"].astype(object), None)
                values = names[values]
                columns[name] = pd.Series(values, dtype=object, copy=False)
            elif kind == "utc":
                columns[name] = pd.Series(values).dt.tz_localize("UTC")
            else:
                columns[name] = pd.Series(values, dtype=values.dtype, copy=False)
    return pd.DataFrame(columns)
