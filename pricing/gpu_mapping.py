"""Map a source's accelerator name to one of our GPU models, or report it as unmapped.

Names are never guessed: a name maps only through an alias row (most specific first), the GPU's
own slug, or its exact datasheet name. A name is not enough where one marketing name covers two memory sizes
(Vast writes "RTX 4060 Ti" and SkyPilot's Vast catalog "RTX4060" for both the 8 GB and the 16 GB card): an
offer of whole GPUs whose stated memory per GPU is below MIN_MEMORY_SHARE of the named model's is not that
model, and stays unmapped.
"""

from __future__ import annotations

from decimal import Decimal

from pricing.models import GpuAlias, GpuModel

# Providers report the driver's total, at or above the datasheet's GB read as GiB (RTX 4080: 16,376 MiB = 15.99
# GiB against 16 GB = 14.90 GiB; RTX 3060: 12,288 MiB against 11.18 GiB); AWS's fractional g6f shares report
# their share and are not whole GPUs. Under 85% of the datasheet's is another part sold under the same name
# (Vast's 8 GB RTX 4060 Ti: 8,188 MiB = 8.00 GiB, 54% of the 16 GB card's 14.90 GiB).
MIN_MEMORY_SHARE = Decimal("0.85")
GIB_PER_GB = Decimal(10**9) / Decimal(2**30)


class GpuNameResolver:
    def __init__(self) -> None:
        self._aliases: dict[tuple[int | None, str], list[tuple[str, int]]] = {}
        for alias in GpuAlias.objects.all():
            key = (alias.provider_id, alias.alias.lower())
            self._aliases.setdefault(key, []).append((alias.instance_type_contains.lower(), alias.gpu_id))
        for patterns in self._aliases.values():
            patterns.sort(key=lambda item: -len(item[0]))  # longest pattern first; "" (any) last
        self._by_name = {}
        self._memory_gib: dict[int, Decimal] = {}
        for gpu_id, slug, name, memory_gb in GpuModel.objects.values_list("id", "slug", "name", "memory_gb"):
            self._by_name[slug.lower()] = gpu_id
            self._by_name[name.lower()] = gpu_id
            self._memory_gib[gpu_id] = Decimal(memory_gb) * GIB_PER_GB

    def resolve(
        self,
        provider_id: int,
        gpu_name: str,
        instance_type: str,
        gpu_count: Decimal | None = None,
        gpu_memory_gib: Decimal | None = None,
    ) -> int | None:
        """The GpuModel id for this name on this provider's instance type, or None (also when the offer's
        whole GPUs state less memory than that model has: another part sold under the same name)."""
        gpu_id = self._by_alias_or_name(provider_id, gpu_name, instance_type)
        if gpu_id is None or not self._smaller_part(gpu_id, gpu_count, gpu_memory_gib):
            return gpu_id
        return None

    def _by_alias_or_name(self, provider_id: int, gpu_name: str, instance_type: str) -> int | None:
        name, itype = gpu_name.lower(), instance_type.lower()
        for scope in (provider_id, None):
            for pattern, gpu_id in self._aliases.get((scope, name), ()):
                if pattern in itype:
                    return gpu_id
        return self._by_name.get(name)

    def _smaller_part(self, gpu_id: int, gpu_count: Decimal | None, gpu_memory_gib: Decimal | None) -> bool:
        """Whole GPUs (a fractional share, AWS g6f's eighth of an L4, states its share's memory) whose
        stated memory per GPU is under MIN_MEMORY_SHARE of the model's datasheet memory."""
        if gpu_memory_gib is None or gpu_count is None or gpu_count < 1 or gpu_count % 1:
            return False
        return gpu_memory_gib < MIN_MEMORY_SHARE * self._memory_gib[gpu_id]
