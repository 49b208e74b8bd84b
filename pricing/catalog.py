"""The bundled catalog: datasheets, aliases, FX and storage rates, real price snapshots and Spot Advisor bands.

`catalog_load()` reads every file under pricing/data (and the model architectures of
procurement/data) in one transaction: a malformed row raises CatalogError naming the file, line
and column, and leaves the database exactly as it was. A second load changes nothing.
"""

from __future__ import annotations

import csv
import datetime as dt
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from django.db import transaction
from django.utils import timezone

from gpuledger.errors import LocatedInputError
from gpuledger.upsert import ChangeCount, upsert_by_natural_key
from pricing.choices import Currency, ProviderKind, StorageClass
from pricing.ingest import FUTURE_ALLOWANCE, IngestResult, ingest_price_records, spot_advisories_upsert
from pricing.models import FxRate, GpuAlias, GpuModel, Provider, StorageRate
from pricing.price_checks import Refusals
from pricing.providers.cells import decimal_or_none, required_decimal
from pricing.providers.gcp_hosts import read_gcp_instances
from pricing.providers.generic_csv import read_generic_csv
from pricing.providers.records import SourceRowError
from pricing.providers.skypilot_csv import read_skypilot_csv, with_contradicting_hosts_at_smallest
from pricing.providers.spot_advisor import read_spot_advisor, snapshot_time_from_name

log = logging.getLogger(__name__)
DATA_DIR = Path(__file__).resolve().parent / "data"

# SkyPilot catalog snapshots bundled under data/skypilot. The data date is not verifiable (see
# data/skypilot/PROVENANCE.md: 2025-2026); prices are stamped with the date they were bundled.
SKYPILOT_SNAPSHOT_AT = dt.datetime(2026, 11, 30, tzinfo=dt.UTC)
SKYPILOT_FILES = {
    "aws": "skypilot/aws/vms.gpu.csv",
    "gcp": "skypilot/gcp/vms.gpu.csv",
    "lambda": "skypilot/lambda/vms.csv",
    "cudo": "skypilot/cudo/vms.csv",
    "vast": "skypilot/vast/vms.csv",
    # added 2026-12-03 (data/skypilot/PROVENANCE.md): whole files, GPU rows and CPU-only rows alike
    "nebius": "skypilot/nebius/vms.csv",
    "hyperstack": "skypilot/hyperstack/vms.csv",
    "verda": "skypilot/verda/vms.csv",
    # added 2026-12-04: three providers gpuhunt covers, whole files (data/skypilot/PROVENANCE.md)
    "jarvislabs": "skypilot/jarvislabs/vms.csv",
    "lium": "skypilot/lium/vms.csv",
    "daytona": "skypilot/daytona/vms.csv",
    # added 2026-12-05 by the outside review of issue 32: its 15 GPU rows without a Region are refused
    # (unreadable, each named) and the other 12 GPU rows load (data/skypilot/PROVENANCE.md)
    "seeweb": "skypilot/seeweb/vms.csv",
    # OCI (issue 32): every GPU row of every region, CPU-only VM.Standard rows left out as for AWS and GCP
    # (1,134 rows, 44 regions, 54 availability domains; data/skypilot/PROVENANCE.md)
    "oci": "skypilot/oci/vms.gpu.csv",
    # RunPod (issue 32): the whole public snapshot of schema v7 (commit 0727c2bd, 2,750 rows, CPU-only rows
    # skipped by the reader); v8's file (2.1M characters) could not be read whole. Older prices than the v8
    # catalogs': the file name keeps the version on every offer's source (data/skypilot/PROVENANCE.md)
    "runpod": "skypilot/runpod/vms.v7.csv",
}
# GCP host-VM rows of the fixed-GPU machine types (a2, a3, g2), added to their GPUs' rows for whole-instance
# prices (pricing/providers/gcp_hosts.py; provenance in data/skypilot/PROVENANCE.md).
GCP_HOSTS_FILE = "skypilot/gcp/vms.hosts.csv"
# AWS Spot Advisor snapshots (data/spot_advisor/PROVENANCE.md), dated by their file names.
SPOT_ADVISOR_GLOB = "spot_advisor/spot-advisor-data-*.json"


class CatalogError(LocatedInputError):
    """A bundled file cannot be read; the message names file, line and column."""


@dataclass
class CatalogLoadReport:
    changes: dict[str, ChangeCount] = field(default_factory=dict)
    prices: IngestResult | None = None
    # Spot Advisor rows refused (out of range) while the rest of their snapshot loaded
    spot_advisory_refusals: Refusals = field(default_factory=Refusals)
    # SkyPilot snapshot rows refused (unreadable cell, empty Region, contradicting prices) while the rest
    # of their file loaded
    price_refusals: Refusals = field(default_factory=Refusals)

    @property
    def total_changes(self) -> int:
        return sum(c.changed for c in self.changes.values()) + (self.prices.changed if self.prices else 0)


@transaction.atomic
def catalog_load(
    *, data_dir: Path = DATA_DIR, progress: Callable[[str], None] = lambda step: None
) -> CatalogLoadReport:
    report = CatalogLoadReport()
    try:
        progress("providers")
        report.changes["providers"] = _load_providers(data_dir / "providers.csv")
        progress("GPU models")
        report.changes["gpu_models"] = _load_gpu_models(data_dir / "gpu_specs.csv")
        report.changes["gpu_aliases"] = _load_aliases(data_dir / "gpu_aliases.csv")
        report.changes["fx_rates"] = _load_fx_rates(data_dir / "fx_rates.csv")
        report.changes["storage_rates"] = _load_storage_rates(data_dir / "storage_rates.csv")
        progress("prices")
        aws_instance_types: set[str] = set()
        report.prices = ingest_price_records(
            _bundled_price_records(data_dir, progress, aws_instance_types, report.price_refusals)
        )
        progress("spot advisories")
        report.changes["spot_advisories"] = _load_spot_advisories(
            data_dir, aws_instance_types, report.spot_advisory_refusals
        )
    except SourceRowError as exc:
        raise CatalogError(str(exc)) from exc
    _log_load(data_dir, report)
    return report


def _log_load(data_dir: Path, report: CatalogLoadReport) -> None:
    """One line: the price rows read from the bundled files, refused and stored, and the catalog changes."""
    prices = report.prices or IngestResult()
    changed = ", ".join(f"{name} {count.changed}" for name, count in report.changes.items() if count.changed)
    log.info(
        "bundled catalog loaded: source=%s fetched=%d refused=%d stored=%d unchanged=%d "
        "spot_advisories_refused=%d catalog_changes=(%s)",
        data_dir,
        prices.seen,
        prices.rejected,
        prices.inserted,
        prices.unchanged,
        report.spot_advisory_refusals.total,
        changed or "none",
    )


def _rows(path: Path, required: list[str]) -> Iterator[tuple[str, dict[str, str]]]:
    """(location, row) for each data row, after checking the header names every required column."""
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        missing = [c for c in required if c not in (reader.fieldnames or [])]
        if missing:
            raise CatalogError(f"{path}:1: column {missing[0]!r}: missing from the header")
        for row in reader:
            location = f"{path}:{reader.line_num}"
            short = [c for c in required if row.get(c) is None]
            if short:
                raise CatalogError(f"{location}: column {short[0]!r}: missing (the row is short)")
            yield location, row


def _choice(value: str, choices, location: str, column: str) -> str:
    if value not in choices.values:
        raise CatalogError(
            f"{location}: column {column!r}: {value!r} is not one of {', '.join(choices.values)}"
        )
    return value


def _load_providers(path: Path) -> ChangeCount:
    rows = [
        {
            "slug": row["slug"],
            "name": row["name"],
            "kind": _choice(row["kind"], ProviderKind, loc, "kind"),
            "default_currency": _choice(row["default_currency"], Currency, loc, "default_currency"),
            "website": row["website"],
        }
        for loc, row in _rows(path, ["slug", "name", "kind", "default_currency", "website"])
    ]
    return upsert_by_natural_key(Provider, ["slug"], rows)[0]


GPU_DECIMAL_COLUMNS = {
    "fp32_tflops": "fp32_tflops",
    "tf32_tflops_dense": "tf32_tflops",
    "fp16_tflops_dense": "fp16_tflops",
    "bf16_tflops_dense": "bf16_tflops",
    "fp8_tflops_dense": "fp8_tflops",
    "int8_tops_dense": "int8_tops",
    "fp4_tflops_dense": "fp4_tflops",
    "nvlink_bandwidth_gbps": "nvlink_bandwidth_gbps",
    "approx_list_price_usd": "approx_list_price_usd",
}


def _load_gpu_models(path: Path) -> ChangeCount:
    """Bundled datasheets. Two different rows for one slug are an error; a datasheet a person edited in
    the admin (``edited_at`` set) is kept as it is, counted unchanged."""
    required = [
        "slug",
        "model",
        "vendor",
        "architecture",
        "memory_gb",
        "memory_bandwidth_gbps",
        "tdp_w",
        *GPU_DECIMAL_COLUMNS,
    ]
    rows = _consistent([(loc, _gpu_row(loc, row)) for loc, row in _rows(path, required)], ["slug"])
    return _upsert_unedited(GpuModel, ["slug"], rows)


def _consistent(located: list[tuple[str, dict]], key_fields: list[str]) -> list[dict]:
    """The rows once each: a key repeated with the same values is kept once, with other values it is a
    contradiction, named with both lines (the bundle cannot say which one is right)."""
    first_seen: dict[tuple, tuple[str, dict]] = {}
    for loc, row in located:
        key = tuple(row[f] for f in key_fields)
        if key not in first_seen:
            first_seen[key] = (loc, row)
            continue
        first_loc, first = first_seen[key]
        differing = [f for f in row if row[f] != first[f]]
        if differing:
            column = differing[0]
            raise CatalogError(
                f"{loc}: column {column!r}: {row[column]!r} contradicts {first[column]!r} for the same"
                f" {', '.join(key_fields)} at line {first_loc.rsplit(':', 1)[-1]}"
            )
    return [row for _, row in first_seen.values()]


def _upsert_unedited(model, key_fields: list[str], rows: list[dict]) -> ChangeCount:
    """Upsert the bundled rows except those whose stored row a person edited (``edited_at`` set): the
    bundle never overrides an admin's correction; those count as unchanged."""
    edited = set(model.objects.filter(edited_at__isnull=False).values_list(*key_fields))
    fresh = [row for row in rows if tuple(row[f] for f in key_fields) not in edited]
    count = upsert_by_natural_key(model, key_fields, fresh)[0]
    return count + ChangeCount(unchanged=len(rows) - len(fresh))


def _gpu_row(loc: str, row: dict[str, str]) -> dict:
    gpu = {
        "slug": row["slug"],
        "name": row["model"],
        "vendor": row["vendor"],
        "architecture": row["architecture"],
        "memory_gb": required_decimal(row["memory_gb"], location=loc, field="memory_gb"),
        "memory_type": row.get("memory_type", ""),
        "memory_capacity_mib": _int_or_none(row.get("memory_capacity_mib"), loc, "memory_capacity_mib"),
        "memory_capacity_source": row.get("memory_capacity_source", ""),
        "memory_bandwidth_gbps": required_decimal(
            row["memory_bandwidth_gbps"], location=loc, field="memory_bandwidth_gbps"
        ),
        "tdp_w": _int_or_none(row["tdp_w"], loc, "tdp_w"),
        "interconnect": row.get("interconnect", ""),
        "pcie_gen": _int_or_none(row.get("pcie_gen"), loc, "pcie_gen"),
        "ecc": {"yes": True, "no": False}.get(row.get("ecc", "").strip().lower()),
        "mig_instances": _int_or_none(row.get("mig"), loc, "mig") or 0,
        "form_factor": row.get("form_factor", ""),
        "launch_year": _int_or_none(row.get("launch_year"), loc, "launch_year"),
        "price_note": row.get("price_note", ""),
        "price_source_url": row.get("price_source_url", ""),
        "source_url": row.get("source_url", ""),
        "crosscheck_url": row.get("crosscheck_url", ""),
        "notes": row.get("notes", ""),
    }
    for column, field_name in GPU_DECIMAL_COLUMNS.items():
        gpu[field_name] = decimal_or_none(row[column], location=loc, field=column)
    for column in ("memory_gb", "memory_bandwidth_gbps", "tdp_w"):
        if gpu[column] is not None and gpu[column] <= 0:
            raise CatalogError(f"{loc}: column {column!r}: must be above zero")
    return gpu


def _int_or_none(cell: str | None, loc: str, column: str) -> int | None:
    value = decimal_or_none(cell, location=loc, field=column)
    if value is not None and value != value.to_integral_value():
        raise CatalogError(f"{loc}: column {column!r}: {cell!r} is not a whole number")
    return None if value is None else int(value)


def _load_aliases(path: Path) -> ChangeCount:
    providers = dict(Provider.objects.values_list("slug", "id"))
    gpus = dict(GpuModel.objects.values_list("slug", "id"))
    rows = []
    for loc, row in _rows(path, ["provider", "alias", "instance_type_contains", "gpu_slug", "note"]):
        if row["provider"] and row["provider"] not in providers:
            raise CatalogError(f"{loc}: column 'provider': unknown provider {row['provider']!r}")
        if row["gpu_slug"] not in gpus:
            raise CatalogError(f"{loc}: column 'gpu_slug': unknown GPU model {row['gpu_slug']!r}")
        rows.append(
            {
                "provider_id": providers.get(row["provider"]),
                "alias": row["alias"],
                "instance_type_contains": row["instance_type_contains"],
                "gpu_id": gpus[row["gpu_slug"]],
                "note": row["note"],
            }
        )
    # alias first: the upsert finds stored rows by its first key field, and an `__in` lookup never
    # matches NULL, so keying on provider_id first would re-create every global alias (no provider).
    return upsert_by_natural_key(GpuAlias, ["alias", "instance_type_contains", "provider_id"], rows)[0]


def _load_fx_rates(path: Path) -> ChangeCount:
    """Bundled FX rates. Two different rates for one currency, base and day are an error; a rate a
    person edited in the admin (``edited_at`` set) is kept as it is, counted unchanged."""
    rows, first_seen = [], {}
    for loc, row in _rows(path, ["currency", "base", "rate", "as_of", "source"]):
        rate = required_decimal(row["rate"], location=loc, field="rate")
        if rate <= 0:
            raise CatalogError(f"{loc}: column 'rate': must be above zero")
        rows.append(
            {
                "currency": _choice(row["currency"], Currency, loc, "currency"),
                "base": _choice(row["base"], Currency, loc, "base"),
                "as_of": _not_future(_date(row["as_of"], loc, "as_of"), loc, "as_of"),
                "rate": rate,
                "source": row["source"],
            }
        )
        key = (rows[-1]["currency"], rows[-1]["base"], rows[-1]["as_of"])
        if key in first_seen and first_seen[key][1] != rate:
            raise CatalogError(
                f"{loc}: column 'rate': {rate} contradicts {first_seen[key][1]} for {key[0]}/{key[1]} on"
                f" {key[2]} at line {first_seen[key][0]}"
            )
        first_seen.setdefault(key, (loc.rsplit(":", 1)[-1], rate))
    edited = set(FxRate.objects.filter(edited_at__isnull=False).values_list("currency", "base", "as_of"))
    kept = [row for row in rows if (row["currency"], row["base"], row["as_of"]) in edited]
    fresh = [row for row in rows if (row["currency"], row["base"], row["as_of"]) not in edited]
    count = upsert_by_natural_key(FxRate, ["currency", "base", "as_of"], fresh)[0]
    return count + ChangeCount(unchanged=len(kept))


def _load_storage_rates(path: Path) -> ChangeCount:
    """Bundled storage rates: contradictions are errors and admin-edited rates are kept (as GPU models)."""
    providers = dict(Provider.objects.values_list("slug", "id"))
    located = []
    columns = [
        "provider",
        "region",
        "storage_class",
        "price_per_gb_month",
        "currency",
        "observed_at",
        "source",
    ]
    for loc, row in _rows(path, columns):
        price = required_decimal(row["price_per_gb_month"], location=loc, field="price_per_gb_month")
        if price <= 0:
            raise CatalogError(f"{loc}: column 'price_per_gb_month': must be above zero")
        if row["provider"] not in providers:
            raise CatalogError(f"{loc}: column 'provider': unknown provider {row['provider']!r}")
        located.append(
            (
                loc,
                {
                    "provider_id": providers[row["provider"]],
                    "region_id": None,
                    "storage_class": _choice(row["storage_class"], StorageClass, loc, "storage_class"),
                    "price_per_gb_month": price,
                    "currency": _choice(row["currency"], Currency, loc, "currency"),
                    "observed_at": _datetime(row["observed_at"], loc, "observed_at"),
                    "source": row["source"],
                },
            )
        )
    key_fields = ["provider_id", "storage_class", "region_id"]
    return _upsert_unedited(StorageRate, key_fields, _consistent(located, key_fields))


def _date(text: str, loc: str, column: str) -> dt.date:
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise CatalogError(f"{loc}: column {column!r}: {text!r} is not an ISO date (YYYY-MM-DD)") from None


def _not_future(day: dt.date, loc: str, column: str) -> dt.date:
    """A rate dated ahead of today (beyond the clock-skew allowance) would be the newest for good."""
    latest = (timezone.now() + FUTURE_ALLOWANCE).date()
    if day > latest:
        raise CatalogError(f"{loc}: column {column!r}: {day.isoformat()} is in the future (after {latest})")
    return day


def _datetime(text: str, loc: str, column: str) -> dt.datetime:
    try:
        value = dt.datetime.fromisoformat(text)
    except ValueError:
        raise CatalogError(f"{loc}: column {column!r}: {text!r} is not an ISO 8601 timestamp") from None
    if value.tzinfo is None:
        raise CatalogError(f"{loc}: column {column!r}: {text!r} needs a time zone (e.g. Z)")
    return value


def _bundled_price_records(data_dir: Path, progress, aws_instance_types: set[str], refusals: Refusals):
    """Every bundled price record; fills `aws_instance_types` with the AWS types they name. A bad row of a
    SkyPilot snapshot is refused into `refusals` (with its file, line, column and reason) and the rest of
    the snapshot loads."""
    for provider, relative in SKYPILOT_FILES.items():
        progress(f"prices: {relative}")
        records = read_skypilot_csv(
            data_dir / relative, provider=provider, observed_at=SKYPILOT_SNAPSHOT_AT, refusals=refusals
        )
        for record in with_contradicting_hosts_at_smallest(list(records)):
            if provider == "aws":
                aws_instance_types.add(record.instance.name)
            yield record
    progress(f"prices: {GCP_HOSTS_FILE}")
    yield from read_gcp_instances(
        data_dir / GCP_HOSTS_FILE, data_dir / SKYPILOT_FILES["gcp"], observed_at=SKYPILOT_SNAPSHOT_AT
    )
    accepted = frozenset(FxRate.objects.values_list("currency", flat=True)) | {"USD"}
    for path in sorted((data_dir / "providers").glob("*.csv")):
        progress(f"prices: providers/{path.name}")
        yield from read_generic_csv(path, accepted_currencies=accepted)


def _load_spot_advisories(data_dir: Path, aws_instance_types: set[str], refusals: Refusals) -> ChangeCount:
    """The Linux bands of each bundled advisor snapshot, for the AWS instance types the catalog prices
    (the rankings look bands up by those; the other ~6,000 rows of a snapshot would only be ballast)."""
    count = ChangeCount()
    for path in sorted(data_dir.glob(SPOT_ADVISOR_GLOB)):
        observed_at = snapshot_time_from_name(path)
        if observed_at is None:
            raise CatalogError(
                f"{path}: the file name must carry the snapshot date (spot-advisor-data-YYYY-MM-DD.json)"
            )
        records = read_spot_advisor(
            path, observed_at=observed_at, instance_types=aws_instance_types, refusals=refusals
        )
        count += spot_advisories_upsert(records, provider_slug="aws")
    return count
