"""fix51o (aud51o's FIX LIST items 1 and 4): ultralytics_gpu_mem.release() reads only a version's leading numbers,
and clears_cache_each_epoch() places the release that stopped emptying the cache every epoch at 8.3.87 (aud51o's
bisection of the PyPI wheels, engine/trainer.py: 8.3.86 455 `self._clear_memory()`; 8.3.87 455 `> 0.9`; 8.3.109
460 `> 0.5`; 8.3.152 459 / 482 also before validate()), not 8.3.170 as yolomem's docstrings had it."""

from __future__ import annotations

import pytest

from tests.procurement.outside.ultralytics_gpu_mem import clears_cache_each_epoch, gpu_mem_gb, release


@pytest.mark.parametrize(
    "version, expected",
    [
        ("8.3.76", (8, 3, 76)),
        ("8.3.76.post1", (8, 3, 76)),
        ("v8.3.76", (8, 3, 76)),
        ("8.3.76rc1", (8, 3, 76)),
        ("8.3.76+local", (8, 3, 76)),
        (" 8.4.124 ", (8, 4, 124)),
        ("8.0.112", (8, 0, 112)),
    ],
)
def test_release_parses_only_the_leading_numbers(version, expected):
    assert release(version) == expected


@pytest.mark.parametrize("version", ["", "ultralytics", "post1"])
def test_release_refuses_a_string_without_a_number(version):
    with pytest.raises(ValueError, match="not an Ultralytics release"):
        release(version)


def test_a_suffixed_version_takes_its_releases_unit():
    assert gpu_mem_gb(15.0, "8.3.75.post1") == pytest.approx(15.0)
    assert gpu_mem_gb(15.0, "v8.3.76") == pytest.approx(16.106, abs=1e-3)


@pytest.mark.parametrize(
    "version, clears",
    [
        ("8.0.112", True),  # [U3075]
        ("8.2.5", True),  # [FSL-Y8L], the control whose later epochs read as epoch 1
        ("8.3.75", True),
        ("8.3.78", True),  # [V100-Y8N]: GiB already, still cleared every epoch
        ("8.3.86", True),
        ("8.3.87", False),  # `> 0.9` of the card
        ("8.3.108", False),
        ("8.3.109", False),  # `> 0.5`
        ("8.3.170", False),  # [4070L-Y11M]
        ("8.3.179", False),  # [COLAB-Y11N]
        ("8.3.239", False),  # [FRUIT-Y8S]
        ("8.4.41", False),  # [T4-Y8N]
        ("v8.3.86.post1", True),
    ],
)
def test_clears_cache_each_epoch_changes_at_8_3_87(version, clears):
    assert clears_cache_each_epoch(version) is clears
