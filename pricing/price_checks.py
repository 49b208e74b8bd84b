"""The bad-data rules every live price refresh applies: which rows are refused, and why.

A refresh is evidence, not truth. A row is refused, counted under its reason and kept as an example
(a few per reason) when its price is

- ``not_positive``: zero or negative (a price is never free; a negative one is a broken row);
- ``absurd``: more than ``ABSURD_RATIO`` (10) times the median price per GPU-hour of its family, the
  same provider, GPU name, pricing model and currency, taken over this refresh's rows together with
  the family's current published prices (so one broken row among a few cannot move its own median far);
- ``currency``: in a currency with no stored FX rate (it could not be compared with anything);
- ``region``: in a region its provider does not document (pricing/providers/regions.py);
- ``unit``: in a unit the reader cannot turn into an hourly price (the readers refuse these, since
  only they know their source's units, and record them here under the same name);
- ``out_of_range``: a field outside the range its source documents (a Spot Advisor band that is not one
  of the file's ``ranges``, savings outside 0..100 %), refused by the reader;
- ``unknown_form``: a row of a priced kind (a GPU SKU, a GPU size) whose description or name no rule
  of the reader recognizes: counted and shown, never dropped as an ordinary skip;
- ``ambiguous``: two rows of one offer, pricing model and payment option with different prices from
  different products: neither is taken (the price would otherwise depend on the rows' order);
- ``unreadable``: one entry of an answer that cannot be read (broken JSON, a price that is not a number).

The rest of the refresh lands. Refused rows are never written, so nothing already published changes;
a price that passes these rules but jumps more than 5x against the offer's current price is still
stored as ``suspect`` and held back by pricing.ingest.

This module is plain Python (no ORM): pricing.ingest reads the FX rates and current prices it needs.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np

from pricing.providers.records import PriceRecord
from pricing.providers.regions import region_known

ABSURD_RATIO = 10.0
MAX_EXAMPLES = 5  # examples kept per reason: enough to find the rows, never the whole answer

NOT_POSITIVE, ABSURD, CURRENCY, REGION, UNIT = "not_positive", "absurd", "currency", "region", "unit"
OUT_OF_RANGE, UNKNOWN_FORM, AMBIGUOUS, UNREADABLE = "out_of_range", "unknown_form", "ambiguous", "unreadable"
AMBIGUOUS_GPU = "ambiguous_gpu"
REASONS = {
    NOT_POSITIVE: "price zero or negative",
    ABSURD: f"price over {ABSURD_RATIO:g}x its family's median per GPU-hour",
    CURRENCY: "currency without a stored FX rate",
    REGION: "region the provider does not document",
    UNIT: "unit not readable as an hourly price",
    OUT_OF_RANGE: "value outside its documented range",
    UNKNOWN_FORM: "description or name no rule of the reader recognizes",
    AMBIGUOUS: "two products priced one offer differently",
    UNREADABLE: "row not readable (broken JSON, a price that is not a number)",
    AMBIGUOUS_GPU: "GPU name several parts share, which the row does not settle",
}

Family = tuple[str, str, str, str]  # provider, GPU name, pricing model, currency


@dataclass
class Refusals:
    """Refused rows counted per reason, with the first few examples of each."""

    counts: Counter = field(default_factory=Counter)
    examples: dict[str, list[str]] = field(default_factory=dict)

    def refuse(self, reason: str, example: str) -> None:
        self.counts[reason] += 1
        kept = self.examples.setdefault(reason, [])
        if len(kept) < MAX_EXAMPLES:
            kept.append(example[:300])

    def refuse_many(self, reason: str, count: int, examples: Iterable[str]) -> None:
        """`count` rows refused elsewhere (a reader's own counter), with what it noted of them."""
        if count <= 0:
            return
        self.counts[reason] += count
        kept = self.examples.setdefault(reason, [])
        kept.extend(example[:300] for example in list(examples)[: MAX_EXAMPLES - len(kept)])

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def as_json(self) -> dict[str, dict]:
        return {
            reason: {"count": count, "examples": self.examples.get(reason, [])}
            for reason, count in sorted(self.counts.items())
        }


@dataclass(frozen=True)
class CheckContext:
    """What the rules compare against: the currencies with an FX rate, and each family's current
    published prices per GPU-hour (before this refresh)."""

    currencies: frozenset[str]
    known_per_gpu_hour: Mapping[Family, list[float]] = field(default_factory=dict)


def family_of(record: PriceRecord) -> Family:
    instance = record.instance
    return (instance.provider, instance.gpu_name, record.pricing_model, record.currency)


def per_gpu_hour(price: float, gpu_count: float) -> float:
    return price / gpu_count if gpu_count > 0 else price


def price_records_screen(
    records: Iterable[PriceRecord], context: CheckContext, refusals: Refusals
) -> list[PriceRecord]:
    """The records that pass every rule, in order; each refused one is counted in `refusals`."""
    passed = [record for record in records if _row_reason(record, context, refusals) is None]
    absurd = _absurd_mask(passed, context)
    kept = []
    for record, is_absurd in zip(passed, absurd, strict=True):
        if is_absurd:
            refusals.refuse(ABSURD, f"{record.location}: {record.price_per_hour} {record.currency}/h")
        else:
            kept.append(record)
    return kept


def _row_reason(record: PriceRecord, context: CheckContext, refusals: Refusals) -> str | None:
    """The reason a row is refused on its own (no family needed), recorded; None when it passes."""
    reason, detail = None, ""
    if record.price_per_hour is None or record.price_per_hour <= 0:
        reason, detail = NOT_POSITIVE, f"price {record.price_per_hour}"
    elif record.currency not in context.currencies:
        reason, detail = CURRENCY, f"currency {record.currency!r}"
    elif not region_known(record.instance.provider, record.region):
        reason, detail = REGION, f"region {record.region!r} ({record.instance.provider})"
    if reason is not None:
        refusals.refuse(reason, f"{record.location}: {detail}")
    return reason


def _absurd_mask(records: list[PriceRecord], context: CheckContext) -> np.ndarray:
    """True where a row's price per GPU-hour is over ABSURD_RATIO x its family's median."""
    if not records:
        return np.zeros(0, dtype=bool)
    families = [family_of(r) for r in records]
    prices = np.array(
        [per_gpu_hour(float(r.price_per_hour), float(r.instance.gpu_count)) for r in records], dtype=float
    )
    index: dict[Family, int] = {}
    codes = np.array([index.setdefault(family, len(index)) for family in families], dtype=np.int64)
    medians = np.empty(len(index))
    for family, code in index.items():
        pool = np.concatenate([prices[codes == code], np.asarray(context.known_per_gpu_hour.get(family, []))])
        medians[code] = np.median(pool)
    return prices > ABSURD_RATIO * medians[codes]
