"""`size_workload` with no card asked for (the `size` command's memory-only answer) answers every task kind.

fix51o found an image inference spec raising IndexError there: the per-card expert-rate table was a flat empty
array when no card was given, and its column was read as if it had two.
"""

from __future__ import annotations

import pytest

from procurement.sizing import parse_workload_spec, size_workload

SPECS = {
    "sdxl-inference": {"task": "inference", "model": {"preset": "sdxl"}, "image": {"steps": 20}},
    "llama-inference": {"task": "inference", "model": {"preset": "llama-3.1-8b"}},
}


@pytest.mark.parametrize("name", sorted(SPECS))
def test_it_sizes_memory_without_a_card(name):
    report = size_workload(parse_workload_spec(SPECS[name]), [])
    assert report["memory"]["total_per_gpu_gib"] > 0
    assert report["candidates"] == []
