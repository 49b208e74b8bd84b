"""Billing exports where they land in S3: which deliveries are there, read from their manifests (plain boto3).

Two layouts, both described by AWS (docs.aws.amazon.com/cur/latest/userguide/dataexports-export-delivery.html
and understanding-report-versions.html):
- **Data Exports** (CUR 2.0 and FOCUS 1.x): `<prefix>/<export>/metadata/BILLING_PERIOD=YYYY-MM/<export>-Manifest.json`
  beside `<prefix>/<export>/data/BILLING_PERIOD=YYYY-MM/…`; the manifest is rewritten at every refresh of the
  month and names the run (`executionId`), the period (`billingPeriod.start`) and the files (`dataFiles`,
  `s3://` URIs).
- **Legacy CUR**: `<prefix>/<report>/yyyymmdd-yyyymmdd/<report>-Manifest.json` with `assemblyId`,
  `billingPeriod.start` (`20231101T000000.000Z`) and `reportKeys` (keys in the bucket).

A delivery is one run of one month; only the newest manifest of each month counts (an older one was
superseded before it was read). A manifest that cannot be read is an ExportManifestError naming its key.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from dataclasses import dataclass

from gpuledger.errors import InputError

MANIFEST_SUFFIX = "Manifest.json"
PARTITION = re.compile(r"BILLING_PERIOD=(\d{4})-(\d{2})")
LEGACY_RANGE = re.compile(r"/(\d{4})(\d{2})01-\d{8}/")


class ExportManifestError(InputError):
    """A manifest that cannot be read, named by its S3 key (the file of the one input-error base)."""

    def __init__(self, key: str, message: str):
        super().__init__(message=message, file=key, text=f"{key}: {message}")
        self.key = key


@dataclass(frozen=True)
class Delivery:
    delivery_id: str  # executionId (Data Exports) or assemblyId (legacy CUR)
    month: dt.date  # first day of the billing period
    manifest_key: str
    data_keys: tuple[str, ...]  # keys in the same bucket
    last_modified: dt.datetime


def manifest_keys(s3, bucket: str, prefix: str) -> list[dict]:
    """Every `*Manifest.json` under the prefix ({"Key", "LastModified", "ETag"}), all pages."""
    found = []
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        found += [item for item in page.get("Contents", []) if item["Key"].endswith(MANIFEST_SUFFIX)]
    return found


def parse_manifest(key: str, text: bytes | str, bucket: str, last_modified: dt.datetime) -> Delivery:
    try:
        manifest = json.loads(text)
    except ValueError as error:
        raise ExportManifestError(key, f"not JSON ({error})") from error
    if not isinstance(manifest, dict):
        raise ExportManifestError(key, "not a JSON object")
    delivery_id = manifest.get("executionId") or manifest.get("assemblyId")
    if not delivery_id:
        raise ExportManifestError(key, "no executionId (Data Exports) or assemblyId (legacy CUR)")
    files = manifest.get("dataFiles") or manifest.get("reportKeys") or []
    if not files:
        raise ExportManifestError(key, "names no data files (dataFiles / reportKeys)")
    return Delivery(
        delivery_id=str(delivery_id),
        month=_month(key, manifest),
        manifest_key=key,
        data_keys=tuple(_key_in(bucket, name, key) for name in files),
        last_modified=last_modified,
    )


def latest_deliveries(s3, bucket: str, prefix: str) -> list[Delivery]:
    """The newest delivery of each billing month under the prefix, oldest month first."""
    newest: dict[dt.date, Delivery] = {}
    for item in sorted(manifest_keys(s3, bucket, prefix), key=lambda item: item["LastModified"]):
        body = s3.get_object(Bucket=bucket, Key=item["Key"])["Body"].read()
        delivery = parse_manifest(item["Key"], body, bucket, item["LastModified"])
        newest[delivery.month] = delivery  # sorted by time: a later manifest of the month wins
    return [newest[month] for month in sorted(newest)]


def _month(key: str, manifest: dict) -> dt.date:
    start = (manifest.get("billingPeriod") or {}).get("start", "")
    digits = re.match(r"(\d{4})-?(\d{2})", start)
    found = digits or PARTITION.search(key) or LEGACY_RANGE.search(key)
    if not found:
        raise ExportManifestError(
            key, "no billing period (billingPeriod.start or a BILLING_PERIOD=YYYY-MM folder)"
        )
    return dt.date(int(found.group(1)), int(found.group(2)), 1)


def _key_in(bucket: str, name: str, manifest_key: str) -> str:
    if not isinstance(name, str) or not name:
        raise ExportManifestError(manifest_key, f"a data file entry is not a key: {name!r}")
    if name.startswith("s3://"):
        file_bucket, _, key = name[len("s3://") :].partition("/")
        if file_bucket != bucket:  # the exports a source reads are all in its own bucket
            raise ExportManifestError(
                manifest_key, f"data file {name} is in bucket {file_bucket}, not {bucket}"
            )
        return key
    return name
