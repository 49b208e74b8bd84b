"""Read gpuledger's own provider price format (CSV) into price records.

This is how a user adds a provider SkyPilot does not cover: a neocloud, a CNY-priced cloud
(Alibaba, Tencent, AutoDL) or an internal chargeback rate. The format is documented with an
example in ``docs/provider-prices.md``; the header is a contract and must match exactly.

A row whose price is empty, zero or negative is rejected and counted (a price is never free);
any other malformed cell raises ``SourceRowError`` naming the file, line and column, so the caller
can refuse the whole file.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

from pricing.providers.cells import PRICE_QUANTUM, decimal_or_none, required_decimal
from pricing.providers.csv_source import CsvSource
from pricing.providers.currencies import currency_problem
from pricing.providers.records import InstanceTypeRecord, PriceRecord, SourceRowError
from pricing.providers.vocabulary import ON_DEMAND, RESERVED_1Y, RESERVED_3Y, SPOT

GENERIC_HEADER = (
    "provider",
    "region",
    "instance_type",
    "gpu_model",
    "gpu_count",
    "vcpus",
    "memory_gib",
    "pricing_model",
    "price_per_hour",
    "currency",
    "observed_at",
)
PRICING_MODELS = frozenset({ON_DEMAND, SPOT, RESERVED_1Y, RESERVED_3Y, "savings_plan_1y", "savings_plan_3y"})


@dataclass
class GenericReadStats:
    rows: int = 0
    rejected: int = 0  # empty, zero or negative prices
    rejected_lines: list[str] = field(default_factory=list)  # "file:line: why", for the report
    duplicates_skipped: int = 0
    records: int = 0


def read_generic_csv(
    path: str | Path,
    *,
    stats: GenericReadStats | None = None,
    accepted_currencies: frozenset[str] | None = None,
) -> Iterator[PriceRecord]:
    """Yield one price record per valid row of a provider price file.

    `accepted_currencies` narrows ISO 4217 to those the caller can convert (have an FX rate).
    """
    path = Path(path)
    stats = stats if stats is not None else GenericReadStats()
    seen: dict[tuple, tuple[Decimal, int]] = {}
    with CsvSource(path) as reader:
        _check_header(next(reader, []), path)
        for cells in reader:
            if not any(cell.strip() for cell in cells):
                continue
            stats.rows += 1
            location = f"{path}:{reader.line_num}"
            record = _row_record(cells, location, path.name, accepted_currencies, stats)
            if record is not None and _is_new(record, reader.line_num, seen, stats):
                stats.records += 1
                yield record


def _check_header(header: list[str], path: Path) -> None:
    names = tuple(name.strip() for name in header)
    if names == GENERIC_HEADER:
        return
    for position, expected in enumerate(GENERIC_HEADER):
        found = names[position] if position < len(names) else "(nothing)"
        if found != expected:
            raise SourceRowError(
                f"{path}:1", expected, f"header column {position + 1} is {found!r}, expected {expected!r}"
            )
    raise SourceRowError(f"{path}:1", names[len(GENERIC_HEADER)], "unexpected extra header column")


def _row_record(
    cells: list[str],
    location: str,
    file_name: str,
    accepted_currencies: frozenset[str] | None,
    stats: GenericReadStats,
) -> PriceRecord | None:
    """The row's record, or None (counted as rejected) when its price is not above zero."""
    row = _row_dict(cells, location)
    record = PriceRecord(
        instance=_instance_record(row, location),
        region=_text(row, "region", location),
        zone="",
        pricing_model=_pricing_model(row, location),
        price_per_hour=_price_or_zero(row, location),
        currency=_currency(row, location, accepted_currencies),
        observed_at=_observed_at(row, location),
        source=f"file:{file_name}",
        location=location,
    )
    if record.price_per_hour > 0:
        return record
    stats.rejected += 1
    stats.rejected_lines.append(f"{location}: price_per_hour {row['price_per_hour']!r} is not above zero")
    return None


def _price_or_zero(row: dict[str, str], location: str) -> Decimal:
    """The price to 6 places; an empty cell reads as zero so the caller rejects it like one."""
    price = decimal_or_none(row["price_per_hour"], location=location, field="price_per_hour")
    return Decimal(0) if price is None else price.quantize(PRICE_QUANTUM)


def _row_dict(cells: list[str], location: str) -> dict[str, str]:
    if len(cells) < len(GENERIC_HEADER):
        raise SourceRowError(location, GENERIC_HEADER[len(cells)], "missing (the row is short)")
    if len(cells) > len(GENERIC_HEADER):
        raise SourceRowError(
            location, GENERIC_HEADER[-1], f"{len(cells)} cells for {len(GENERIC_HEADER)} columns"
        )
    return {name: cell.strip() for name, cell in zip(GENERIC_HEADER, cells, strict=True)}


def _instance_record(row: dict[str, str], location: str) -> InstanceTypeRecord:
    gpu_count = required_decimal(row["gpu_count"], location=location, field="gpu_count")
    if gpu_count <= 0:
        raise SourceRowError(location, "gpu_count", f"must be above zero, got {row['gpu_count']!r}")
    return InstanceTypeRecord(
        provider=_text(row, "provider", location),
        name=_text(row, "instance_type", location),
        gpu_name=_text(row, "gpu_model", location),
        gpu_count=gpu_count,
        vcpus=_positive_or_none(row, "vcpus", location),
        memory_gib=_positive_or_none(row, "memory_gib", location),
    )


def _text(row: dict[str, str], column: str, location: str) -> str:
    if not row[column]:
        raise SourceRowError(location, column, "is empty")
    return row[column]


def _positive_or_none(row: dict[str, str], column: str, location: str) -> Decimal | None:
    value = decimal_or_none(row[column], location=location, field=column)
    if value is not None and value <= 0:
        raise SourceRowError(location, column, f"must be above zero or empty, got {row[column]!r}")
    return value


def _pricing_model(row: dict[str, str], location: str) -> str:
    value = row["pricing_model"]
    if value not in PRICING_MODELS:
        raise SourceRowError(
            location, "pricing_model", f"{value!r} is not one of {', '.join(sorted(PRICING_MODELS))}"
        )
    return value


def _currency(row: dict[str, str], location: str, accepted: frozenset[str] | None) -> str:
    problem = currency_problem(row["currency"], accepted)
    if problem:
        raise SourceRowError(location, "currency", problem)
    return row["currency"]


def _observed_at(row: dict[str, str], location: str) -> dt.datetime:
    """ISO 8601; a date alone means midnight, and a time without an offset means UTC."""
    text = row["observed_at"]
    try:
        value = dt.datetime.fromisoformat(text)
    except ValueError:
        raise SourceRowError(location, "observed_at", f"{text!r} is not an ISO 8601 date or time") from None
    return value if value.tzinfo else value.replace(tzinfo=dt.UTC)


def _is_new(
    record: PriceRecord, line: int, seen: dict[tuple, tuple[Decimal, int]], stats: GenericReadStats
) -> bool:
    """False for an exact repeat of an earlier row; an error when a repeat names another price."""
    key = (
        record.instance.provider,
        record.instance.name,
        record.region,
        record.pricing_model,
        record.observed_at,
    )
    if key not in seen:
        seen[key] = (record.price_per_hour, line)
        return True
    first_price, first_line = seen[key]
    if first_price != record.price_per_hour:
        raise SourceRowError(
            record.location,
            "price_per_hour",
            f"{record.price_per_hour} contradicts {first_price} on line {first_line}",
        )
    stats.duplicates_skipped += 1
    return False
