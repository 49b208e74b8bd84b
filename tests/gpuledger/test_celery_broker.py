"""One real task through the Redis broker and an in-process worker (not eager)."""

import pytest

from pricing.models import GpuModel
from pricing.tasks import load_bundled_catalog


@pytest.mark.django_db(transaction=True)
def test_it_runs_a_task_through_redis_with_a_worker(redis_worker):
    result = load_bundled_catalog.delay()
    summary = result.get(timeout=120)
    assert result.successful()
    # 29 datasheet rows plus A40, A800 80GB PCIe, GH200, V100 PCIe and 4 GeForce 12 / 16 GB cards
    # (pricing/data/SOURCES.md); 33 -> 37 when the RTX 4080, 4070 Ti SUPER, 4060 Ti 16GB, 3060 came in
    assert summary["changes"]["gpu_models"] == 37
    assert GpuModel.objects.count() == 37
    # The second run goes through the broker too, and changes nothing.
    assert load_bundled_catalog.delay().get(timeout=120)["total_changes"] == 0
