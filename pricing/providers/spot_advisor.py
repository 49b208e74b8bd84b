"""Read the AWS Spot Instance Advisor JSON (``spot-advisor-data.json``) into advisory records.

The file behind https://spot-bid-advisor.s3.amazonaws.com/spot-advisor-data.json gives, per region
and operating system, each instance type's interruption band (``r``, an index into the file's own
``ranges``) and its savings against on-demand in percent (``s``). Only Linux is read: gpuledger
prices Linux/UNIX everywhere else too. The band labels come from the file, not from code, so a
change on AWS's side shows up as a changed label rather than a silent mislabel.

One instance type's entry with a value out of range (a band that is not one of ``ranges``, savings
outside 0..100, a name too long to store) is refused under ``out_of_range`` with its location, and
every other band of the file lands: one bad row never costs every GPU its interruption band. Only a
file whose structure cannot be read (no ``ranges``, no ``spot_advisor`` object) fails as a whole.

A saved file carries no date of its own: ``snapshot_time`` takes it from the file name
(``spot-advisor-data-2022-07-23.json``, how the bundled snapshots are named), else from the day the
file was written (a fresh download).
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Collection, Iterator, Mapping
from pathlib import Path
from typing import Any

from gpuledger.json_depth import MAX_JSON_DEPTH, first_too_deep, line_column
from pricing.price_checks import OUT_OF_RANGE, Refusals
from pricing.providers.records import SourceRowError, SpotAdvisoryRecord

OPERATING_SYSTEM = "Linux"
MAX_BAND = 4  # the advisor's five ranges, <5% .. >20% (pricing.models.SpotAdvisory)
# Longest text the stored columns hold (pricing.models.SpotAdvisory).
TEXT_LIMITS = {"region": 50, "instance_type": 100, "label": 20}
_DATE_IN_NAME = re.compile(r"(\d{4})-(\d{2})-(\d{2})")


def snapshot_time(path: str | Path) -> dt.datetime:
    """The snapshot's date: the one in its name, else midnight UTC of the day the file was written."""
    named = snapshot_time_from_name(path)
    if named is not None:
        return named
    written = dt.datetime.fromtimestamp(Path(path).stat().st_mtime, tz=dt.UTC)
    return written.replace(hour=0, minute=0, second=0, microsecond=0)


def snapshot_time_from_name(path: str | Path) -> dt.datetime | None:
    """Midnight UTC of the last YYYY-MM-DD date in the file name, or None when it names no valid date."""
    for year, month, day in reversed(_DATE_IN_NAME.findall(Path(path).name)):
        try:
            return dt.datetime(int(year), int(month), int(day), tzinfo=dt.UTC)
        except ValueError:
            continue
    return None


def read_spot_advisor(
    path: str | Path,
    *,
    observed_at: dt.datetime,
    instance_types: Collection[str] | None = None,
    refusals: Refusals | None = None,
) -> Iterator[SpotAdvisoryRecord]:
    """Yield the Linux advisories of a saved advisor file, as of `observed_at` (the snapshot date);
    rows out of range are counted in `refusals`."""
    path = Path(path)
    data = load_json_file(path)
    yield from parse_spot_advisor(
        data,
        observed_at=observed_at,
        source=f"spot-advisor:{path.name}",
        instance_types=instance_types,
        refusals=refusals,
    )


def load_json_file(path: Path) -> Any:
    """Decode a JSON file; bad UTF-8, bad JSON and too deep nesting name the file, line and column."""
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line, column = line_column(raw, error.start)
        message = f"byte 0x{raw[error.start]:02x} is not valid UTF-8"
        raise SourceRowError(f"{path}:{line}:{column}", "(encoding)", message) from None
    too_deep = first_too_deep(text, MAX_JSON_DEPTH)
    if too_deep is not None:
        line, column = line_column(text, too_deep)
        raise SourceRowError(
            f"{path}:{line}:{column}", "(json)", f"nested deeper than {MAX_JSON_DEPTH} levels"
        )
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise SourceRowError(f"{path}:{error.lineno}:{error.colno}", "(json)", error.msg) from None


def parse_spot_advisor(
    data: Mapping[str, Any],
    *,
    observed_at: dt.datetime,
    source: str,
    instance_types: Collection[str] | None = None,
    refusals: Refusals | None = None,
) -> Iterator[SpotAdvisoryRecord]:
    """Yield advisories from the decoded JSON; `instance_types` keeps only those types. A row out of
    range is refused (counted in `refusals` under out_of_range, with its location) and skipped."""
    refusals = refusals if refusals is not None else Refusals()
    labels = _band_labels(data, source)
    regions = _mapping(data.get("spot_advisor"), source, "spot_advisor")
    for region, systems in sorted(regions.items()):
        linux = _mapping(systems, source, f"spot_advisor.{region}").get(OPERATING_SYSTEM, {})
        for instance_type, advice in sorted(_mapping(linux, source, f"spot_advisor.{region}.Linux").items()):
            if instance_types is not None and instance_type not in instance_types:
                continue
            field = f"spot_advisor.{region[:60]}.{OPERATING_SYSTEM}.{instance_type[:60]}"
            try:
                _check_length(region, "region", source, field)
                _check_length(instance_type, "instance_type", source, field)
                band, savings_pct = _advice(advice, labels, source, field)
                _check_length(labels[band], "label", source, "ranges")
            except SourceRowError as error:  # this row goes; the rest of the file lands
                refusals.refuse(OUT_OF_RANGE, str(error))
                continue
            yield SpotAdvisoryRecord(
                region=region,
                instance_type=instance_type,
                interruption_band=band,
                interruption_label=labels[band],
                savings_pct=savings_pct,
                observed_at=observed_at,
                source=source,
            )


def _band_labels(data: Mapping[str, Any], source: str) -> dict[int, str]:
    ranges = data.get("ranges")
    if not isinstance(ranges, list) or not ranges:
        raise SourceRowError(source, "ranges", "missing or empty: the band labels come from it")
    try:
        return {int(entry["index"]): str(entry["label"]) for entry in ranges}
    except (KeyError, TypeError, ValueError, OverflowError):
        raise SourceRowError(source, "ranges", "every range needs an 'index' and a 'label'") from None


def _advice(advice: Any, labels: dict[int, str], source: str, field: str) -> tuple[int, int]:
    entry = _mapping(advice, source, field)
    band, savings_pct = entry.get("r"), entry.get("s")
    if not isinstance(band, int) or band not in labels or not 0 <= band <= MAX_BAND:
        raise SourceRowError(source, f"{field}.r", f"{band!r} is not a band of 'ranges' ({sorted(labels)})")
    if not isinstance(savings_pct, int) or not 0 <= savings_pct <= 100:
        raise SourceRowError(source, f"{field}.s", f"{savings_pct!r} is not a percentage 0..100")
    return band, savings_pct


def _mapping(value: Any, source: str, field: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise SourceRowError(source, field, f"expected an object, got {type(value).__name__}")
    return value


def _check_length(text: str, kind: str, source: str, field: str) -> None:
    limit = TEXT_LIMITS[kind]
    if len(text) > limit or "\x00" in text:
        raise SourceRowError(source, field, f"the {kind} is over {limit} characters or holds a NUL byte")
