"""Template filters that turn engine numbers into words a reader takes in at a glance.

One place for every page's money, GiB, percentages, counts and hours, so the same figure reads the
same everywhere: thousands separators, a fixed number of decimals per kind of figure, units spelled
out, and "—" for a missing value (never "None", never a Python repr). Load with
`{% load formatting %}`; each filter is also a plain function, tested in tests/gpuledger/test_formatting.py.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation

from django import template

register = template.Library()

MISSING = "—"  # em dash: the figure does not exist (not zero)

# Engine keys (sizing report, recommendations, TCO) -> the words a page shows, with their unit.
LABELS = {
    "weights_gib": "Weights (GiB)",
    "gradients_gib": "Gradients (GiB)",
    "optimizer_states_gib": "Optimizer states (GiB)",
    "activations_gib": "Activations (GiB)",
    "kv_cache_gib": "KV cache (GiB)",
    "dequantized_weights_gib": "Dequantized weights kept for backward (GiB)",
    "teacher_weights_gib": "Distillation teacher's weights (GiB)",
    "framework_overhead_gib": "Framework overhead (GiB)",
    "total_per_gpu_gib": "Total per GPU (GiB)",
    "required_per_gpu_gib": "Required with headroom (GiB)",
    "host_ram_gib": "Host RAM (GiB)",
    "training_tokens_per_second": "Training speed (tokens/s)",
    "training_hours": "Training time (hours)",
    "evaluation_hours": "Evaluation passes, part of training time (hours)",
    # comm26's definition: all traffic against compute plus traffic, hidden or not; what costs time is the
    # exposed share below (pres26: the old label read "of step time", which this share is not)
    "communication_share": "Communication, all traffic, hidden or not",
    "exposed_communication_share": "Exposed communication, share of step time",
    "exposed_communication_seconds": "Exposed communication (s per step)",
    "data_parallel_exposed_seconds": "Exposed data-parallel traffic (s per step)",
    "decode_tokens_per_second_per_stream": "Decode speed per stream (tokens/s)",
    "decode_tokens_per_second_total": "Decode speed, all streams (tokens/s)",
    "decode_tokens_per_second_upper_bound": "Decode speed upper bound (tokens/s)",
    "time_to_first_token_seconds": "Time to first token (s)",
    "decode_bound": "Decode limited by",
    "mfu": "Model FLOPs utilization",
    "flops_per_token": "FLOPs per token",
    "images_per_second": "Images per second",
    "images_per_second_per_gpu": "Images per second per GPU",
    "seconds_per_batch": "Time per batch (s)",
    "training_images_per_second": "Training speed (images/s)",
    "estimate": "Basis",
    "memory_utilization": "Memory used",
    "does_not_fit": "does not fit",
}


def _number(value) -> float | Decimal | None:
    """The value as a number, or None when it is missing or not a finite number."""
    if value is None or isinstance(value, bool) or value == "":
        return None
    if isinstance(value, Decimal):
        return value if value.is_finite() else None
    try:
        number = float(value)
    except (TypeError, ValueError):
        try:
            return Decimal(str(value))
        except InvalidOperation:
            return None
    return number if math.isfinite(number) else None


def _grouped(number: float | Decimal, digits: int) -> str:
    text = f"{number:,.{digits}f}"
    # -0.001 at 2 decimals is "0.00", not "-0.00"
    return text[1:] if text.startswith("-") and not any(c in "123456789" for c in text) else text


@register.filter
def number(value, digits: int = 0) -> str:
    """1234567.891 -> "1,234,568" (or `|number:2` -> "1,234,567.89"); missing -> "—"."""
    parsed = _number(value)
    return MISSING if parsed is None else _grouped(parsed, int(digits))


@register.filter
def money(value, currency: str = "") -> str:
    """An amount with thousands separators and two decimals: 312345.6 -> "312,345.60 USD"."""
    parsed = _number(value)
    if parsed is None:
        return MISSING
    text = _grouped(Decimal(str(parsed)), 2)
    return f"{text} {currency}" if currency else text


@register.filter
def hourly(value, currency: str = "") -> str:
    """An hourly price: up to 4 decimals, at least 2 (2.99 -> "2.99", 0.26293 -> "0.2629")."""
    parsed = _number(value)
    if parsed is None:
        return MISSING
    text = _grouped(Decimal(str(parsed)), 4)
    whole, _, fraction = text.partition(".")
    fraction = fraction.rstrip("0").ljust(2, "0")
    text = f"{whole}.{fraction}"
    return f"{text} {currency}/h" if currency else text


@register.filter
def gib(value, digits: int = 1) -> str:
    """GiB with its unit: 12.345 -> "12.3 GiB"; missing -> "—"."""
    parsed = _number(value)
    return MISSING if parsed is None else f"{_grouped(parsed, int(digits))} GiB"


@register.filter
def percent(value, digits: int = 0) -> str:
    """A fraction as a percentage: 0.8 -> "80%", `|percent:1` on 0.7594 -> "75.9%"; missing -> "—"."""
    parsed = _number(value)
    return MISSING if parsed is None else f"{_grouped(float(parsed) * 100, int(digits))}%"


@register.filter
def hours(value) -> str:
    """Hours with one decimal; a long run also in days: 130.25 -> "130.3 h (5.4 days)"."""
    parsed = _number(value)
    if parsed is None:
        return MISSING
    parsed = float(parsed)
    text = f"{_grouped(parsed, 1)} h"
    return f"{text} ({_grouped(parsed / 24, 1)} days)" if parsed >= 48 else text


@register.filter
def quantity(value) -> str:
    """A large count in words: 8030261248 -> "8.03 billion", 4.2e6 -> "4.2 million", 512 -> "512"."""
    parsed = _number(value)
    if parsed is None:
        return MISSING
    parsed = float(parsed)
    for size, word in ((1e12, "trillion"), (1e9, "billion"), (1e6, "million")):
        if abs(parsed) >= size:
            text = f"{parsed / size:.2f}".rstrip("0").rstrip(".")
            return f"{text} {word}"
    return _grouped(parsed, 0 if parsed == int(parsed) else 2)


@register.filter
def speed(value) -> str:
    """A rate or duration from the engine: 3 significant figures, grouped (12345.6 -> "12,346")."""
    parsed = _number(value)
    if parsed is None:
        return MISSING
    parsed = float(parsed)
    if parsed == 0 or abs(parsed) >= 100:
        return _grouped(parsed, 0)
    digits = max(0, 2 - int(math.floor(math.log10(abs(parsed)))))
    return _grouped(parsed, digits)


@register.filter
def label(key) -> str:
    """An engine key in words: "kv_cache_gib" -> "KV cache (GiB)"; an unknown key -> "Some key"."""
    text = str(key)
    if text in LABELS:
        return LABELS[text]
    unit = ""
    for suffix, name in (("_gib", "GiB"), ("_gb", "GB"), ("_hours", "hours"), ("_seconds", "s")):
        if text.endswith(suffix):
            text, unit = text[: -len(suffix)], f" ({name})"
            break
    words = text.replace("_", " ").strip()
    return (words[:1].upper() + words[1:] + unit) if words else MISSING


@register.filter
def words(value) -> str:
    """An engine code in words: "does_not_fit" -> "does not fit", "on_demand" -> "on demand"."""
    return MISSING if value is None or value == "" else str(value).replace("_", " ")


@register.filter
def plain(value) -> str:
    """Any stored value as text a person reads, never a Python repr: lists joined with commas,
    mappings as "key: value; …", booleans as yes/no, None as "—"."""
    if value is None or value == "":
        return MISSING
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, Mapping):
        return "; ".join(f"{words(key)}: {plain(item)}" for key, item in value.items()) or MISSING
    if isinstance(value, list | tuple | set | frozenset):
        return ", ".join(plain(item) for item in value) or MISSING
    return str(value)


NUMBER_TEXT = re.compile(r"-?\d+(\.\d+)?")


@register.filter
def grouped(value) -> str:
    """A value shown as it is, except that a plain number gets thousands separators and keeps its decimals,
    at most 4 (an hourly price kept to 6 in the data reads to 4 in a table, issue 30):
    "300000" -> "300,000", "33800.00" -> "33,800.00", "0.10" -> "0.10", "6.880000" -> "6.8800";
    other text is unchanged."""
    text = str(value)
    if not NUMBER_TEXT.fullmatch(text):
        return text
    if len(text.partition(".")[2]) > 4:
        text = str(Decimal(text).quantize(Decimal("0.0001"), rounding=ROUND_HALF_EVEN))
    whole, dot, fraction = text.partition(".")
    sign = "-" if whole.startswith("-") else ""
    return f"{sign}{int(whole.lstrip('-')):,}{dot}{fraction}"


LONG_DECIMAL_IN_TEXT = re.compile(r"(?<![\d.])(\d+)\.(\d{5,})(?![\d.])")


@register.filter
def short_decimals(value) -> str:
    """Numbers inside a sentence shown to at most 4 decimals ("6.880000 per GPU-hour" -> "6.8800 per
    GPU-hour"): tables read to 4 decimals while the JSON, exports and reports keep the full figure."""
    return LONG_DECIMAL_IN_TEXT.sub(
        lambda found: str(Decimal(found.group(0)).quantize(Decimal("0.0001"), rounding=ROUND_HALF_EVEN)),
        str(value),
    )


@register.filter
def unique(items) -> list:
    """The items once each, in their first order (a remedy repeated as a warning shows once)."""
    seen: dict = {}
    for item in items or ():
        key = str(item).strip().rstrip(".").lower()
        if key and key not in seen:
            seen[key] = item
    return list(seen.values())


FIGURES = {"speed": speed, "percent": percent, "hours": hours, "gib": gib, "money": money, "number": number}


@register.filter
def figure(value, kind: str = "speed") -> str:
    """Format by a kind named in data (`{{ row.value|figure:row.format }}`): speed, percent, hours, gib,
    money or number."""
    return FIGURES.get(kind, speed)(value)


@register.filter
def json_plain(value) -> str:
    """A stored JSON text (a beat job's kwargs) read as `plain` would: '{"region": "us-east-1"}' ->
    "region: us-east-1"; "{}" -> "—"; text that is not JSON is shown as it is."""
    if not isinstance(value, str):
        return plain(value)
    try:
        parsed = json.loads(value)
    except ValueError:
        return value
    return plain(parsed) if parsed not in ({}, [], None) else MISSING


@register.filter
def name(key) -> str:
    """`label` without its unit, for a figure whose value carries it: "kv_cache_gib" -> "KV cache"."""
    text = label(key)
    return text.rsplit(" (", 1)[0] if text.endswith(")") else text
