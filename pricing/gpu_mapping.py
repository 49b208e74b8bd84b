"""Map a source's accelerator name to one of our GPU models, or report it as unmapped.

Names are never guessed: a name maps only through an alias row (most specific first), the GPU's
own slug, or its exact datasheet name.
"""

from __future__ import annotations

from pricing.models import GpuAlias, GpuModel


class GpuNameResolver:
    def __init__(self) -> None:
        self._aliases: dict[tuple[int | None, str], list[tuple[str, int]]] = {}
        for alias in GpuAlias.objects.all():
            key = (alias.provider_id, alias.alias.lower())
            self._aliases.setdefault(key, []).append((alias.instance_type_contains.lower(), alias.gpu_id))
        for patterns in self._aliases.values():
            patterns.sort(key=lambda item: -len(item[0]))  # longest pattern first; "" (any) last
        self._by_name = {}
        for gpu_id, slug, name in GpuModel.objects.values_list("id", "slug", "name"):
            self._by_name[slug.lower()] = gpu_id
            self._by_name[name.lower()] = gpu_id

    def resolve(self, provider_id: int, gpu_name: str, instance_type: str) -> int | None:
        """The GpuModel id for this name on this provider's instance type, or None."""
        name, itype = gpu_name.lower(), instance_type.lower()
        for scope in (provider_id, None):
            for pattern, gpu_id in self._aliases.get((scope, name), ()):
                if pattern in itype:
                    return gpu_id
        return self._by_name.get(name)
