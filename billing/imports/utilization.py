"""GPU utilization: DCGM-exporter style CSV or a Prometheus range-query JSON, as hourly means per GPU.

CSV columns: `timestamp`, `resource_id` (or `hostname` / `Hostname`), `gpu` (or `gpu_index`),
`DCGM_FI_DEV_GPU_UTIL` (percent, 0-100) and optionally `DCGM_FI_DEV_FB_USED` (MiB). A Prometheus
`query_range` answer gives one series per GPU (`data.result[].metric` labels, `values` [[unix
time, "value"], ...]); the resource is the first present of the labels resource_id, instance_id,
Hostname, hostname, instance. Samples are averaged per clock hour; an hour with no sample is
unknown, never idle. The review joins these hours to spend rows by resource id and charge period.
"""

from __future__ import annotations

import json
import math
from decimal import Decimal
from pathlib import Path

import pandas as pd
from django.db import transaction

from billing.imports import cells
from billing.imports.chunks import read_chunks
from billing.imports.records import BillingFileError
from billing.models import BillingImport, GpuUtilization
from billing.storage.store import ImportResult, file_sha256

UTIL_COLUMN = "DCGM_FI_DEV_GPU_UTIL"
MEMORY_COLUMN = "DCGM_FI_DEV_FB_USED"
RESOURCE_COLUMNS = ("resource_id", "hostname", "Hostname")
GPU_COLUMNS = ("gpu", "gpu_index")
RESOURCE_LABELS = ("resource_id", "instance_id", "Hostname", "hostname", "instance")
MAX_PROMETHEUS_BYTES = 200 * 1024 * 1024
RESOURCE_LIMIT = 500  # GpuUtilization.resource_id
MAX_GPU_INDEX = 32767  # PositiveSmallIntegerField
MEMORY_LIMIT_MIB = 1e11  # numeric(12, 1)


def looks_like_dcgm(columns: list[str]) -> bool:
    return UTIL_COLUMN in columns and "timestamp" in columns


def hourly_frame(path: Path) -> pd.DataFrame:
    """Columns resource_id, gpu_index, hour (UTC), utilization_pct, memory_used_mib, samples."""
    samples = _prometheus_samples(path) if path.suffix.lower() == ".json" else _csv_samples(path)
    if samples.empty:
        return samples.assign(hour=pd.Series(dtype="datetime64[ns, UTC]"), samples=pd.Series(dtype=int))
    samples["hour"] = samples["timestamp"].dt.floor("h")
    grouped = samples.groupby(["resource_id", "gpu_index", "hour"], sort=True)
    hourly = grouped.agg(
        utilization_pct=("utilization", "mean"),
        memory_used_mib=("memory", "mean"),
        samples=("utilization", "size"),
    )
    return hourly.reset_index()


def _csv_samples(path: Path) -> pd.DataFrame:
    from billing.imports.chunks import header

    file, present = str(path), header(path)
    resource = next((c for c in RESOURCE_COLUMNS if c in present), None)
    gpu = next((c for c in GPU_COLUMNS if c in present), None)
    missing = [n for n, c in (("resource_id or hostname", resource), ("gpu", gpu)) if c is None]
    cells.require_columns(present, ["timestamp", UTIL_COLUMN], file=file)
    if missing:
        raise BillingFileError(
            file, f"missing required column(s): {', '.join(missing)}", row=1, column=missing[0]
        )
    parts = []
    for first_row, raw in read_chunks(path, ["timestamp", resource, gpu, UTIL_COLUMN, MEMORY_COLUMN]):
        where = {"file": file, "first_row": first_row}
        frame = pd.DataFrame({"resource_id": raw[resource].str.strip()})
        _check_resources(frame["resource_id"], file=file, first_row=first_row, column=resource)
        frame["timestamp"] = cells.timestamps(raw, "timestamp", **where)
        frame["gpu_index"] = _gpu_indexes(cells.numbers(raw, gpu, **where), column=gpu, **where)
        frame["utilization"] = pd.to_numeric(cells.numbers(raw, UTIL_COLUMN, **where))
        memory = cells.numbers(raw, MEMORY_COLUMN, required=False, limit=MEMORY_LIMIT_MIB, **where)
        frame["memory"] = pd.to_numeric(memory.where(memory != "", None))
        out_of_range = (frame["utilization"] < 0) | (frame["utilization"] > 100)
        if out_of_range.any():
            row = first_row + int(out_of_range.to_numpy().argmax())
            raise BillingFileError(
                file, "utilization must be a percentage 0-100", row=row, column=UTIL_COLUMN
            )
        parts.append(frame)
    return (
        pd.concat(parts, ignore_index=True)
        if parts
        else pd.DataFrame(columns=["resource_id", "timestamp", "gpu_index", "utilization", "memory"])
    )


def _prometheus_samples(path: Path) -> pd.DataFrame:
    file = str(path)
    if path.stat().st_size > MAX_PROMETHEUS_BYTES:
        raise BillingFileError(file, f"over {MAX_PROMETHEUS_BYTES // 2**20} MiB; split the range query")
    try:
        body = json.loads(path.read_text(encoding="utf-8"))
        series = body["data"]["result"]
    except (json.JSONDecodeError, UnicodeDecodeError, KeyError, TypeError, RecursionError) as error:
        raise BillingFileError(file, f"not a Prometheus range-query answer (data.result): {error}") from None
    if not isinstance(series, list):
        raise BillingFileError(file, "data.result must be a list of series", column="data.result")
    rows = []
    for number, item in enumerate(series):
        try:
            rows += _series_rows(item)
        except (ValueError, TypeError, KeyError, AttributeError, OverflowError) as error:
            raise BillingFileError(
                file, f"series {number}: {str(error)[:200]}", column=f"data.result[{number}]"
            ) from None
    return pd.DataFrame(rows, columns=["resource_id", "timestamp", "gpu_index", "utilization", "memory"])


def _series_rows(item: dict) -> list[tuple]:
    """One Prometheus series as sample rows; raises ValueError (or TypeError) naming what is wrong."""
    labels = item.get("metric", {})
    resource = next((labels[k] for k in RESOURCE_LABELS if labels.get(k)), None)
    if not isinstance(resource, str) or "gpu" not in labels:
        raise ValueError(f"no resource label ({', '.join(RESOURCE_LABELS)}) or gpu label")
    if len(resource) > RESOURCE_LIMIT or "\x00" in resource:
        raise ValueError(f"resource label over {RESOURCE_LIMIT} characters or holding a NUL")
    gpu = int(labels["gpu"])
    if not 0 <= gpu <= MAX_GPU_INDEX:
        raise ValueError(f"gpu label {gpu} out of range 0-{MAX_GPU_INDEX}")
    rows = []
    for stamp, value in item.get("values", []):
        utilization, seconds = float(value), float(stamp)
        if not 0 <= utilization <= 100:  # NaN compares false: refused too
            raise ValueError(f"utilization {value!r} is not a percentage 0-100")
        if not math.isfinite(seconds):
            raise ValueError(f"time {stamp!r} is not a Unix time")
        rows.append((resource, pd.Timestamp(seconds, unit="s", tz="UTC"), gpu, utilization, None))
    return rows


def _check_resources(values: pd.Series, *, file: str, first_row: int, column: str) -> None:
    too_long = (values.str.len() > RESOURCE_LIMIT).to_numpy(dtype=bool)
    if too_long.any():
        raise BillingFileError(
            file, f"over {RESOURCE_LIMIT} characters", row=first_row + int(too_long.argmax()), column=column
        )


def _gpu_indexes(text: pd.Series, *, file: str, first_row: int, column: str) -> pd.Series:
    numbers = pd.to_numeric(text)
    bad = ((numbers % 1 != 0) | (numbers < 0) | (numbers > MAX_GPU_INDEX)).to_numpy(dtype=bool)
    if bad.any():
        raise BillingFileError(
            file,
            f"a GPU index is a whole number 0-{MAX_GPU_INDEX}, not {text[bad].iloc[0]!r}",
            row=first_row + int(bad.argmax()),
            column=column,
        )
    return numbers.astype(int)


def import_utilization(path: Path, *, user=None) -> ImportResult:
    """Store the hourly means (all or nothing); an hour already stored is unchanged."""
    hourly = hourly_frame(path)
    result = ImportResult(rows_seen=len(hourly))
    with transaction.atomic():
        billing_import = BillingImport.objects.create(
            source_format="utilization",
            file_name=path.name[:500],
            file_sha256=file_sha256(path),
            imported_by=user if getattr(user, "is_authenticated", False) else None,
        )
        existing = set(
            GpuUtilization.objects.filter(resource_id__in=list(pd.unique(hourly["resource_id"]))).values_list(
                "resource_id", "gpu_index", "hour"
            )
        )
        new = []
        for row in hourly.itertuples(index=False):
            key = (row.resource_id, int(row.gpu_index), row.hour.to_pydatetime())
            if key in existing:
                result.unchanged += 1
                continue
            existing.add(key)
            memory = None if pd.isna(row.memory_used_mib) else Decimal(str(round(row.memory_used_mib, 1)))
            new.append(
                GpuUtilization(
                    billing_import=billing_import,
                    resource_id=row.resource_id,
                    gpu_index=key[1],
                    hour=key[2],
                    utilization_pct=Decimal(str(round(row.utilization_pct, 2))),
                    memory_used_mib=memory,
                    samples=int(row.samples),
                )
            )
        GpuUtilization.objects.bulk_create(new, batch_size=2000)
        result.inserted = len(new)
        billing_import.rows_seen, billing_import.inserted, billing_import.unchanged = (
            len(hourly),
            result.inserted,
            result.unchanged,
        )
        billing_import.save()
    result.imports.append(billing_import.pk)
    return result
