"""What one refresh changed against the last: coverage lost, prices that moved, GPU types gone.

Plain Python over the refresh's records (pricing.providers.records.PriceRecord) and what the previous
run of the same source recorded; pricing/sources/refresh.py stores the results on the PriceRefresh row.

- **Coverage** per provider: the offers (instance type, region, zone), GPU types (the source's
  accelerator names) and pricing models a run produced. A pricing model or GPU type that the last run
  produced and this one does not is *lost coverage*: the run is recorded as failed on /status/ (its
  prices still land), because a whole pricing model vanishing (a Spot SKU form a parser no longer reads)
  is far likelier a reader gone wrong than a market change. The next run compares with this one, so a
  real disappearance fails once, loudly, and is not repeated. A source whose GPU types follow its capacity
  (Vast's hosts, Lambda's types with capacity, gpuhunt's offers) fails only on a lost pricing model; a GPU
  type gone is flagged.
- **Moves**: an offer's price in this run against its current price before the run; a move of more than
  MOVE_SHARE (25 %) either way is flagged, with both prices. 25 %: above the day-to-day drift of list
  prices (AWS/Azure/GCP change list prices a few percent at a time) and well below the 5x the ingest
  holds back as suspect (pricing.ingest.SUSPECT_RATIO), so a real repricing is flagged, not held.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from decimal import Decimal

from pricing.providers.records import PriceRecord

MOVE_SHARE = Decimal("0.25")
MAX_MOVES_KEPT = 50  # moves kept on the refresh row (the count is always whole)

OfferKey = tuple[str, str, str, str, str, str]  # provider, instance type, region, zone, model, payment


def offer_key(record: PriceRecord) -> OfferKey:
    return (
        record.instance.provider,
        record.instance.name,
        record.region,
        record.zone,
        record.pricing_model,
        record.payment_option,
    )


def offer_key_of_row(parts: Iterable) -> OfferKey:
    """The OfferKey of a stored price's (provider, type, region, zone, model, payment) columns."""
    return tuple(str(part or "") for part in parts)  # type: ignore[return-value]


@dataclass
class CoverageTap:
    """Counts what passes through, per provider, while the records flow to the ingest."""

    offers: dict[str, set] = field(default_factory=dict)
    gpu_types: dict[str, set] = field(default_factory=dict)
    pricing_models: dict[str, set] = field(default_factory=dict)
    prices: dict[OfferKey, tuple[Decimal, str]] = field(default_factory=dict)

    def tap(self, records: Iterable[PriceRecord]) -> Iterator[PriceRecord]:
        for record in records:
            provider = record.instance.provider
            self.offers.setdefault(provider, set()).add((record.instance.name, record.region, record.zone))
            self.gpu_types.setdefault(provider, set()).add(record.instance.gpu_name)
            self.pricing_models.setdefault(provider, set()).add(record.pricing_model)
            self.prices[offer_key(record)] = (record.price_per_hour, record.currency)
            yield record

    def as_json(self) -> dict[str, dict]:
        """{provider: {"offers": n, "gpu_types": [...], "pricing_models": [...]}}, sorted."""
        return {
            provider: {
                "offers": len(self.offers[provider]),
                "gpu_types": sorted(self.gpu_types[provider]),
                "pricing_models": sorted(self.pricing_models[provider]),
            }
            for provider in sorted(self.offers)
        }


def coverage_lost(
    last: Mapping[str, Mapping], now: Mapping[str, Mapping], *, gpu_types: bool = True
) -> list[str]:
    """Each pricing model (and GPU type, unless `gpu_types` is False: a marketplace's come and go with its
    hosts) a provider had last time and has not now, as a sentence."""
    kinds = [("pricing_models", "pricing model")] + ([("gpu_types", "GPU type")] if gpu_types else [])
    lost = []
    for provider, before in sorted(last.items()):
        after = now.get(provider, {})
        for kind, label in kinds:
            for name in sorted(set(before.get(kind, [])) - set(after.get(kind, []))):
                lost.append(f"{provider}: {label} {name!r} produced last time, not now")
    return lost


def gpu_types_gone(last: Mapping[str, Mapping], now: Mapping[str, Mapping]) -> dict[str, list[str]]:
    """{provider: [GPU types it had last time and not now]} (only providers with one gone)."""
    gone = {}
    for provider, before in last.items():
        names = sorted(set(before.get("gpu_types", [])) - set(now.get(provider, {}).get("gpu_types", [])))
        if names:
            gone[provider] = names
    return gone


def price_moves(
    new: Mapping[OfferKey, tuple[Decimal, str]], current: Mapping[OfferKey, tuple[Decimal, str]]
) -> list[dict]:
    """Offers whose new price differs from their current one by more than MOVE_SHARE (same currency),
    largest move first: {"offer": "provider type region zone model payment", "before", "after", "share"}."""
    moves = []
    for key, (after, currency) in new.items():
        before_entry = current.get(key)
        if before_entry is None or before_entry[1] != currency or before_entry[0] <= 0:
            continue
        before = before_entry[0]
        share = (after - before) / before
        if abs(share) > MOVE_SHARE:
            moves.append(
                {
                    "offer": " ".join(part for part in key if part),
                    "before": str(before),
                    "after": str(after),
                    "currency": currency,
                    "share": f"{share:+.1%}",
                }
            )
    moves.sort(key=lambda move: -abs(Decimal(move["share"].rstrip("%"))))
    return moves
