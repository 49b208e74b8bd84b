"""Write normalized price records to the database: idempotent, set-based, one transaction.

The natural key of an observation is (offer, pricing model, payment option, observed_at, source):
ingesting the same records twice inserts nothing the second time. Instance types whose GPU name no
alias maps are stored with no GPU and listed as UnmappedGpuName for a person to map.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal

from django.db import transaction

from gpuledger.upsert import ChangeCount, upsert_by_natural_key
from pricing.gpu_mapping import GpuNameResolver
from pricing.models import InstanceType, Offer, PriceObservation, Provider, Region, UnmappedGpuName
from pricing.providers.records import PriceRecord

PRICE_QUANTUM = Decimal("0.000001")


@dataclass
class IngestResult:
    seen: int = 0
    inserted: int = 0
    unchanged: int = 0
    rejected: int = 0
    catalog: ChangeCount = field(default_factory=ChangeCount)  # providers, regions, types, offers
    unmapped_gpu_names: Counter = field(default_factory=Counter)

    @property
    def changed(self) -> int:
        return self.inserted + self.catalog.changed


@transaction.atomic
def ingest_price_records(records: Iterable[PriceRecord], *, refresh=None) -> IngestResult:
    """Store `records` (all or nothing); `refresh` is the scheduler.PriceRefresh they came from."""
    records = list(records)
    result = IngestResult(seen=len(records))
    if not records:
        return result
    providers = _ensure_providers(records, result)
    regions = _ensure_regions(records, providers, result)
    instance_types = _ensure_instance_types(records, providers, result)
    offers = _ensure_offers(records, providers, regions, instance_types, result)
    _insert_observations(records, offers, refresh, result)
    return result


def _ensure_providers(records, result) -> dict[str, Provider]:
    rows = [{"slug": slug, "name": slug} for slug in sorted({r.instance.provider for r in records})]
    existing = {p.slug: p for p in Provider.objects.filter(slug__in=[r["slug"] for r in rows])}
    missing = [Provider(**row) for row in rows if row["slug"] not in existing]
    Provider.objects.bulk_create(missing)
    result.catalog += ChangeCount(created=len(missing), unchanged=len(existing))
    existing.update({p.slug: p for p in missing})
    return existing


def _ensure_regions(records, providers, result) -> dict[tuple, Region]:
    keys = sorted({(providers[r.instance.provider].id, r.region) for r in records})
    count, by_key = upsert_by_natural_key(
        Region, ["provider_id", "code"], [{"provider_id": p, "code": c} for p, c in keys]
    )
    result.catalog += count
    return by_key


def _ensure_instance_types(records, providers, result) -> dict[tuple, InstanceType]:
    resolver = GpuNameResolver()
    rows, unmapped, mapped = {}, Counter(), set()
    for record in records:
        inst, provider = record.instance, providers[record.instance.provider]
        key = (provider.id, inst.name)
        if key in rows:
            continue
        gpu_id = resolver.resolve(provider.id, inst.gpu_name, inst.name)
        if gpu_id is None:
            unmapped[(provider.id, inst.gpu_name)] += 1
        else:
            mapped.add((provider.id, inst.gpu_name))
        rows[key] = {
            "provider_id": provider.id, "name": inst.name, "gpu_id": gpu_id, "gpu_name": inst.gpu_name,
            "gpu_count": inst.gpu_count, "vcpus": inst.vcpus, "memory_gib": inst.memory_gib,
            "gpu_memory_gib": inst.gpu_memory_gib, "local_disk_gb": inst.local_disk_gb,
            "network": inst.network, "interconnect": inst.interconnect,
        }  # fmt: skip
    count, by_key = upsert_by_natural_key(InstanceType, ["provider_id", "name"], rows.values())
    result.catalog += count
    _record_unmapped(unmapped, mapped, providers, result)
    return by_key


def _record_unmapped(unmapped: Counter, mapped: set, providers, result) -> None:
    """List names no alias maps; drop the listing of names that an alias added since now maps."""
    for provider_id, name in mapped - set(unmapped):
        UnmappedGpuName.objects.filter(provider_id=provider_id, name=name).delete()
    slug_by_id = {p.id: slug for slug, p in providers.items()}
    rows = [{"provider_id": pid, "name": name, "rows_seen": n} for (pid, name), n in sorted(unmapped.items())]
    upsert_by_natural_key(UnmappedGpuName, ["provider_id", "name"], rows)
    result.unmapped_gpu_names.update({f"{slug_by_id[pid]}:{name}": n for (pid, name), n in unmapped.items()})


def _ensure_offers(records, providers, regions, instance_types, result) -> dict[tuple, Offer]:
    keys = set()
    for r in records:
        provider_id = providers[r.instance.provider].id
        keys.add(
            (instance_types[(provider_id, r.instance.name)].id, regions[(provider_id, r.region)].id, r.zone)
        )
    rows = [{"instance_type_id": i, "region_id": g, "zone": z} for i, g, z in sorted(keys)]
    count, by_key = upsert_by_natural_key(Offer, ["instance_type_id", "region_id", "zone"], rows)
    result.catalog += count
    return by_key


def _insert_observations(records, offers, refresh, result) -> None:
    provider_ids = {
        p.slug: p.id for p in Provider.objects.filter(slug__in={r.instance.provider for r in records})
    }
    itype_ids = {
        (t.provider_id, t.name): t.id
        for t in InstanceType.objects.filter(provider_id__in=provider_ids.values())
    }
    region_ids = {
        (g.provider_id, g.code): g.id for g in Region.objects.filter(provider_id__in=provider_ids.values())
    }
    candidates = {}
    for r in records:
        pid = provider_ids[r.instance.provider]
        offer = offers[(itype_ids[(pid, r.instance.name)], region_ids[(pid, r.region)], r.zone)]
        key = (offer.id, r.pricing_model, r.payment_option, r.observed_at, r.source)
        candidates.setdefault(key, r)
    existing = set(
        PriceObservation.objects.filter(offer_id__in={k[0] for k in candidates}).values_list(
            "offer_id", "pricing_model", "payment_option", "observed_at", "source"
        )
    )
    new = [
        PriceObservation(
            offer_id=key[0],
            pricing_model=key[1],
            payment_option=key[2],
            observed_at=key[3],
            source=key[4],
            amount_per_hour=r.price_per_hour.quantize(PRICE_QUANTUM),
            currency=r.currency,
            refresh=refresh,
        )  # fmt: skip
        for key, r in candidates.items()
        if key not in existing
    ]
    PriceObservation.objects.bulk_create(new, batch_size=2000)
    result.inserted = len(new)
    result.unchanged = len(records) - len(new)
