"""Read a SkyPilot catalog ``vms.csv`` (schema v8; v7 for RunPod) into price records.

One reader for every cloud SkyPilot publishes (AWS, GCP, Lambda, Vast, Cudo, RunPod, ...). The
format has quirks this module absorbs, so the rest of gpuledger sees clean records:

- columns come in a different order per cloud, and some clouds lack ``AvailabilityZone`` or
  ``SpotPrice``; files may have CRLF line endings;
- GCP prices GPUs in rows with an empty ``InstanceType`` (the host VM is a separate row): those
  become a synthetic instance type ``<provider>-gpu-<accelerator>-x<count>`` priced for the GPUs alone;
- an empty price, or 0.00 (Vast spot), means "no price", never free;
- ``GpuInfo`` is a Python-repr dict (single quotes), read with ``ast.literal_eval``; Verda writes it as
  JSON (double quotes, also a Python literal) and Hyperstack as a Python repr with JSON's ``null``
  (``'Manufacturer': null``), read as ``None``; schema v7 writes only the accelerator's name there;
- CPU-only rows (no accelerator) and TPU rows are skipped and counted.

On-demand prices are regional, but the catalog repeats them on every zone row: they are yielded once
per (instance type, region). Spot prices are yielded per zone.
"""

from __future__ import annotations

import ast
import datetime as dt
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from decimal import Decimal
from pathlib import Path

from pricing.price_checks import AMBIGUOUS, UNREADABLE, Refusals
from pricing.providers.cells import decimal_or_none, format_count, price_or_none, required_decimal
from pricing.providers.csv_source import CsvSource
from pricing.providers.records import InstanceTypeRecord, PriceRecord, SourceRowError
from pricing.providers.vocabulary import ON_DEMAND, SPOT

REQUIRED_COLUMNS = (
    "InstanceType",
    "AcceleratorName",
    "AcceleratorCount",
    "vCPUs",
    "MemoryGiB",
    "Price",
    "Region",
)
CATALOG_CURRENCY = "USD"  # SkyPilot catalogs are priced in US dollars
MIB_PER_GIB = Decimal(1024)

# Vast writes the memory of all GPUs of an offer into GpuInfo's per-GPU MemoryInfo; Lambda and the
# others write the memory of one GPU.
PROVIDERS_WITH_TOTAL_GPU_MEMORY = frozenset({"vast"})
# Host figures that are placeholders, not the machine's: Vast writes 32 vCPUs and 64 GiB on every row
# (a 1x RTX 3060 and an 8x H200 alike; the marketplace host decides). Read as unknown (None): the
# ranking then never refuses such an offer on a host rule and says "unknown"; for production serving an unknown
# host is one host doubt in the order (procurement/ranking/configurations.py host_unknown, aud51x), and Vast's
# marketplace offers (pricing/providers/vast_market.py) carry the machine's own figures instead. Cudo's rows are fixed
# bundles too (1x2v4gb ... 8x96v192gb), but each is a VM one can launch at exactly that size and its
# price moves with it (ice-lake-a40-compute 1x2v4gb 0.3698 $/h, 1x24v48gb 0.5876 $/h): known figures,
# so the guides' host rules of thumb warn on the small bundles (pricing/data/SOURCES.md).
PROVIDERS_WITH_PLACEHOLDER_HOST = frozenset({"vast"})


@dataclass
class SkyPilotReadStats:
    """What a read saw, for the import report (records are counted as they are yielded)."""

    rows: int = 0
    cpu_only_skipped: int = 0
    tpu_skipped: int = 0
    prices_missing: int = 0  # empty or 0.00 price cells
    duplicates_skipped: int = 0  # the same price repeated on a second row
    rows_refused: int = 0  # rows refused with their reason (read with ``refusals`` only)
    records: int = 0


def read_skypilot_csv(
    path: str | Path,
    *,
    provider: str,
    observed_at: dt.datetime,
    stats: SkyPilotReadStats | None = None,
    refusals: Refusals | None = None,
) -> Iterator[PriceRecord]:
    """Yield the on-demand and spot prices of the accelerator rows of one catalog file.

    Without ``refusals`` the first bad row raises ``SourceRowError`` (a file checked by hand). With it,
    a bad row (an empty Region, a price that is not a number, an unreadable GpuInfo, ...) is refused
    (``unreadable``, with its file, line, column and reason) and the rest of the file lands; two rows
    giving one offer different prices are both refused (``ambiguous``), so the price never depends on
    the rows' order. A file whose header lacks a required column still fails whole.
    """
    if refusals is None:
        yield from _read_strict(Path(path), provider, observed_at, stats or SkyPilotReadStats())
        return
    yield from _read_refusing(Path(path), provider, observed_at, stats or SkyPilotReadStats(), refusals)


def _read_refusing(
    path: Path, provider: str, observed_at: dt.datetime, stats: SkyPilotReadStats, refusals: Refusals
) -> Iterator[PriceRecord]:
    context = _FileContext(path=path, provider=provider, observed_at=observed_at)
    by_key: dict[tuple, list[PriceRecord]] = {}
    with CsvSource(path) as reader:
        header = _read_header(reader, path)
        for cells in reader:
            if not any(cell.strip() for cell in cells):
                continue
            stats.rows += 1
            try:
                row = _row_dict(header, cells, f"{path}:{reader.line_num}")
                records = list(_row_records(row, reader.line_num, context, stats))
            except SourceRowError as error:  # this row goes; the rest of the file lands
                stats.rows_refused += 1
                refusals.refuse(UNREADABLE, str(error))
                continue
            for record in records:
                key = (record.instance.name, record.region, record.zone, record.pricing_model)
                by_key.setdefault(key, []).append(record)
    for key, records in by_key.items():
        prices = {record.price_per_hour for record in records}
        if len(prices) > 1:
            where = "; ".join(f"{record.location} {record.price_per_hour}" for record in records)
            refusals.refuse(AMBIGUOUS, f"{' '.join(k for k in key if k)}: {where}")
            stats.rows_refused += len(records)
            continue
        stats.duplicates_skipped += len(records) - 1
        stats.records += 1
        yield records[0]


def _read_strict(
    path: Path, provider: str, observed_at: dt.datetime, stats: SkyPilotReadStats
) -> Iterator[PriceRecord]:
    context = _FileContext(path=path, provider=provider, observed_at=observed_at)
    seen: dict[tuple, tuple[Decimal, int]] = {}
    with CsvSource(path) as reader:
        header = _read_header(reader, path)
        for cells in reader:
            if not any(cell.strip() for cell in cells):
                continue  # a blank line, e.g. a trailing CRLF
            stats.rows += 1
            row = _row_dict(header, cells, f"{path}:{reader.line_num}")
            for record in _row_records(row, reader.line_num, context, stats):
                if _is_new_price(record, reader.line_num, seen, stats):
                    stats.records += 1
                    yield record


@dataclass(frozen=True)
class _FileContext:
    path: Path
    provider: str
    observed_at: dt.datetime

    @property
    def source(self) -> str:
        return f"skypilot:{self.path.parent.name}/{self.path.name}"


def _read_header(reader, path: Path) -> list[str]:
    header = [name.strip() for name in next(reader, [])]
    for column in REQUIRED_COLUMNS:
        if column not in header:
            raise SourceRowError(f"{path}:1", column, "missing column in the header")
    return header


def _row_dict(header: list[str], cells: list[str], location: str) -> dict[str, str]:
    if len(cells) < len(header):
        raise SourceRowError(location, header[len(cells)], "missing (the row is short)")
    if len(cells) > len(header):
        raise SourceRowError(location, header[-1], f"{len(cells)} cells for {len(header)} columns")
    return dict(zip(header, cells, strict=True))


def _row_records(
    row: dict[str, str], line: int, context: _FileContext, stats: SkyPilotReadStats
) -> Iterator[PriceRecord]:
    accelerator = row["AcceleratorName"].strip()
    if not accelerator:
        stats.cpu_only_skipped += 1
        return
    if accelerator.lower().startswith("tpu"):
        stats.tpu_skipped += 1
        return
    location = f"{context.path}:{line}"
    instance = _instance_record(row, accelerator, location, context.provider)
    prices = (
        (ON_DEMAND, "Price", ""),
        (SPOT, "SpotPrice", row.get("AvailabilityZone", "").strip()),
    )
    for pricing_model, column, zone in prices:
        price = price_or_none(row.get(column), location=location, field=column)
        if price is None:
            stats.prices_missing += 1
            continue
        yield PriceRecord(
            instance=instance,
            region=_required_text(row, "Region", location),
            zone=zone,
            pricing_model=pricing_model,
            price_per_hour=price,
            currency=CATALOG_CURRENCY,
            observed_at=context.observed_at,
            source=context.source,
            location=location,
        )


def _instance_record(
    row: dict[str, str], accelerator: str, location: str, provider: str
) -> InstanceTypeRecord:
    gpu_count = required_decimal(row["AcceleratorCount"], location=location, field="AcceleratorCount")
    if gpu_count <= 0:
        raise SourceRowError(location, "AcceleratorCount", f"must be positive, got {gpu_count}")
    name = row["InstanceType"].strip()
    gpu_only = not name
    if gpu_only:
        name = f"{provider}-gpu-{accelerator}-x{format_count(gpu_count)}"
    vcpus = decimal_or_none(row["vCPUs"], location=location, field="vCPUs")
    memory_gib = decimal_or_none(row["MemoryGiB"], location=location, field="MemoryGiB")
    if provider in PROVIDERS_WITH_PLACEHOLDER_HOST:
        vcpus = memory_gib = None  # checked above (a malformed cell is still an error), then not trusted
    return InstanceTypeRecord(
        provider=provider,
        name=name,
        gpu_name=accelerator,
        gpu_count=gpu_count,
        vcpus=vcpus,
        memory_gib=memory_gib,
        gpu_memory_gib=_gpu_memory_gib(
            row.get("GpuInfo", ""), gpu_count, provider, location, accelerator=accelerator
        ),
        host_priced_separately=gpu_only,
    )


def _gpu_memory_gib(
    cell: str, gpu_count: Decimal, provider: str, location: str, *, accelerator: str = ""
) -> Decimal | None:
    """Memory of one GPU from the GpuInfo dict; None when the cell is empty (FPGA rows) or, as in schema v7
    catalogs (RunPod's), holds only the accelerator's name: no memory is stated there, and the GPU model's
    datasheet gives it. Any other text that is not a dict is refused."""
    text = cell.strip()
    if not text or (accelerator and text == accelerator):
        return None
    try:
        info = _gpu_info_literal(text)
        size_mib = Decimal(str(info["Gpus"][0]["MemoryInfo"]["SizeInMiB"]))
    except (ValueError, SyntaxError, KeyError, IndexError, TypeError) as error:
        raise SourceRowError(location, "GpuInfo", f"unreadable GpuInfo ({error})") from None
    if size_mib <= 0:  # Seeweb writes 'SizeInMiB': 0 for a GPU its fetcher does not know (RTX PRO 6000 96GB)
        return None
    if provider in PROVIDERS_WITH_TOTAL_GPU_MEMORY:
        size_mib /= gpu_count
    return (size_mib / MIB_PER_GIB).quantize(Decimal("0.01"))


# JSON's null as a bare word between a separator and a delimiter (Hyperstack: 'Manufacturer': null).
_BARE_NULL = re.compile(r"(?<=[:,\[\s])null(?=\s*[,\]}])")


def _gpu_info_literal(text: str):
    """The GpuInfo dict; a bare ``null`` (never inside a quoted name, which a quote precedes) is None."""
    try:
        return ast.literal_eval(text)
    except ValueError:
        return ast.literal_eval(_BARE_NULL.sub("None", text))


def _required_text(row: dict[str, str], column: str, location: str) -> str:
    text = row[column].strip()
    if not text:
        raise SourceRowError(location, column, "is empty")
    return text


def _is_new_price(
    record: PriceRecord, line: int, seen: dict[tuple, tuple[Decimal, int]], stats: SkyPilotReadStats
) -> bool:
    """False for a repeat of a price already yielded; an error when the repeat disagrees."""
    key = (record.instance.name, record.region, record.zone, record.pricing_model)
    if key not in seen:
        seen[key] = (record.price_per_hour, line)
        return True
    first_price, first_line = seen[key]
    if first_price != record.price_per_hour:
        column = "Price" if record.pricing_model == ON_DEMAND else "SpotPrice"
        raise SourceRowError(
            record.location,
            column,
            f"{record.price_per_hour} differs from {first_price} on line {first_line} "
            f"for {record.instance.name} in {record.region} {record.zone}".rstrip(),
        )
    stats.duplicates_skipped += 1
    return False


def with_contradicting_hosts_at_smallest(records: list[PriceRecord]) -> list[PriceRecord]:
    """The records, with the host figures of an instance type whose rows disagree on them set to the smallest
    listed figure, marked ``host_figures_lower_bound``.

    One instance type is one host (InstanceType is unique per provider and name), but a catalog can give
    it several: Hyperstack's n3-H100-SXM5x8 has 1800 GiB of RAM in CANADA-1 and 960 GiB in US-1; lium's
    RTX4090_1x 12 vCPUs / 63 GiB in RO, 4 / 29 in RU, 24 / 63 in UA (SkyPilot catalog @04a03aee). Each figure
    is the provider's own, so the smallest of each (vCPUs and RAM apart) is a host every listed region has at
    least: a lower bound, not unknown (outside audit audhd, stop 52: read as unknown, lium's 4090 host, which
    meets the serving rule in every region, was ranked below a dearer row as a host doubt). The store keeps one
    host per instance type, so per-region figures are not kept; the mark lets a row say its figure is the
    smallest listed. A figure missing on any row leaves that figure unknown (no bound holds for that row).
    """
    figures: dict[tuple[str, str], set] = {}
    for record in records:
        instance = record.instance
        figures.setdefault((instance.provider, instance.name), set()).add(
            (instance.vcpus, instance.memory_gib)
        )
    smallest = {
        key: tuple(_smallest(figure[i] for figure in seen) for i in (0, 1))
        for key, seen in figures.items()
        if len(seen) > 1
    }
    if not smallest:
        return records
    out = []
    for record in records:
        key = (record.instance.provider, record.instance.name)
        if key in smallest:
            vcpus, memory_gib = smallest[key]
            instance = replace(
                record.instance, vcpus=vcpus, memory_gib=memory_gib, host_figures_lower_bound=True
            )
            record = replace(record, instance=instance)
        out.append(record)
    return out


def _smallest(values) -> Decimal | None:
    values = list(values)
    return None if any(v is None for v in values) else min(values)
