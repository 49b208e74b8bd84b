"""Vast's live "RTX 4060 Ti" alias (pricing/data/gpu_aliases.csv): one name for the 16 GB and the 8 GB card.

aud51n found the row's instance pattern `RTX_4060_Ti-16g` rested on vast_market._instance's rounded memory tag
(`<GiB per GPU, rounded>g`): a 16 GB card whose driver reports under 15.5 GiB would be tagged `15g` and stay
unmapped. fix51n: the row matches the name alone and the memory guard (pricing/gpu_mapping.py MIN_MEMORY_SHARE,
85% of the datasheet's 16 GB = 14.90 GiB, i.e. 12.67 GiB) separates the 8 GB part. Hand: 15.9 GiB is 107% of
14.90 (mapped); 15.4 GiB, tagged 15g, 103% (mapped); 8,188 MB = 8.00 GiB, 54% (unmapped). The recorded search
(tests/pricing/providers/recorded/real/vast_python_search.json.gz) states gpu_ram 16,380 and 8,188 MB.
"""

from __future__ import annotations

import datetime as dt

import pytest

from pricing.gpu_mapping import GpuNameResolver
from pricing.models import GpuModel, Provider
from pricing.providers.vast_market import parse_offers
from tests.pricing.providers.vast_responses import offer

NOW = dt.datetime(2026, 12, 7, tzinfo=dt.UTC)


def _mapped_slug(gpu_ram_mb: int) -> tuple[str, str | None]:
    """The instance name vast_market writes for a one-GPU 'RTX 4060 Ti' offer and the slug it maps to."""
    (record, *_) = parse_offers(
        [offer(90_001, "RTX 4060 Ti", 1, 0.13, 0.07, gpu_ram=gpu_ram_mb)], observed_at=NOW
    )
    instance = record.instance
    gpu_id = GpuNameResolver().resolve(
        Provider.objects.get(slug="vast").id,
        instance.gpu_name,
        instance.name,
        instance.gpu_count,
        instance.gpu_memory_gib,
    )
    return instance.name, dict(GpuModel.objects.values_list("id", "slug")).get(gpu_id)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("gpu_ram_mb", "tag", "slug"),
    [
        (16_282, "16g", "rtx-4060-ti-16gb"),  # 16,282 MB / 1,024 = 15.90 GiB: a 16 GB card reporting 15.9 GiB
        (15_770, "15g", "rtx-4060-ti-16gb"),  # 15.40 GiB, tagged 15g: the old `-16g` pattern left it unmapped
        (16_380, "16g", "rtx-4060-ti-16gb"),  # the recorded search's 16 GB offers
        (8_188, "8g", None),  # the recorded search's 8 GB part: 8.00 GiB, 54% of 14.90, another card
    ],
)
def test_vast_rtx_4060_ti_maps_by_stated_memory_not_by_the_instance_tag(
    bundled_catalog, gpu_ram_mb, tag, slug
):
    name, mapped = _mapped_slug(gpu_ram_mb)
    assert f"-{tag}-" in name
    assert mapped == slug, (name, mapped)
