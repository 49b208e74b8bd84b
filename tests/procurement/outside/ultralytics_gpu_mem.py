"""The unit of Ultralytics' GPU_mem column, by the release that printed it (yolomem, stop 52).

The train bar prints `f"{self._get_memory():.3g}G"`, torch.cuda.memory_reserved() divided by a constant that
changed between two consecutive PyPI wheels (each opened; engine/trainer.py):
  8.0.112  yolo/engine/trainer.py 343   memory_reserved() / 1E9      (GB)
  8.2.103  engine/trainer.py 491        memory / 1e9                 (GB)
  8.3.75   engine/trainer.py 496        memory / 1e9                 (GB)
  8.3.76   engine/trainer.py 496        memory / (2**30)             (GiB)
  8.3.170 / 8.3.179  engine/trainer.py 526; 8.4.115 676; 8.4.124 679   memory / 2**30   (GiB)
The bar's own comment still says "(GB)" in every one of them. So a log from 8.3.76 on prints GiB: read as GB
it is 7.4% (2**30 / 1e9) too low.

The cache clearing at an epoch's end (after validate()), bisected by aud51o over the PyPI wheels 8.3.84-8.3.165
(engine/trainer.py; fix51o took the release rows from that audit, it did not reopen the wheels):
  up to 8.3.86   `self._clear_memory()` unconditionally (8.3.86 455): the next epoch's bar starts from an empty pool;
  8.3.87         `if self._get_memory(fraction=True) > 0.9: self._clear_memory()` (8.3.87 455, 8.3.108 460);
  8.3.109        the same at `> 0.5` (8.3.109 460, 8.3.150 / 8.3.151 481);
  8.3.152 on     `_clear_memory(threshold=0.5)` also before validate() (8.3.152 459 / 482; 8.3.239 477 / 507;
                 8.4.41 520 / 550; 8.4.124 600 / 631).
So from 8.3.87 a run below the threshold keeps the validator's cached blocks (its batch is 2x the training
batch) into every later epoch's bar; epoch 1's bar precedes any validate() on every release, and is the one
reading of the training step alone once the cache is kept.
"""

from __future__ import annotations

import re

GIB = 2.0**30

# The first release whose _get_memory divides by 2**30 (8.3.75's wheel still divides by 1e9).
FIRST_GIB_RELEASE = (8, 3, 76)
# The first release that empties the cache at an epoch's end only above a fraction of the card (0.9; 0.5 from
# 8.3.109): 8.3.86's wheel still clears unconditionally (aud51o's bisection, above).
FIRST_THRESHOLD_CLEARING_RELEASE = (8, 3, 87)

_LEADING_NUMBERS = re.compile(r"v?(\d+(?:\.\d+)*)")


def release(version: str) -> tuple[int, ...]:
    """The release's leading numbers: "8.3.76.post1" and "v8.3.76" are (8, 3, 76); a suffix (".post1", "rc1",
    "+local") is not a release step, and none of the rows here depends on one."""
    match = _LEADING_NUMBERS.match(version.strip())
    if match is None:
        raise ValueError(f"not an Ultralytics release: {version!r}")
    return tuple(int(part) for part in match.group(1).split("."))


def clears_cache_each_epoch(version: str) -> bool:
    """Whether Ultralytics `version` empties the CUDA cache at every epoch's end whatever the card's fill: up to
    8.3.86 it does, so every epoch's bar holds that epoch's training alone and any epoch (or their median) reads
    the step; from 8.3.87 a run under the threshold keeps the validator's blocks, so only epoch 1's bar does."""
    return release(version) < FIRST_THRESHOLD_CLEARING_RELEASE


def gpu_mem_bytes(printed: float, version: str) -> float:
    """Bytes of memory_reserved behind a printed GPU_mem figure of Ultralytics `version`."""
    return printed * (GIB if release(version) >= FIRST_GIB_RELEASE else 1e9)


def gpu_mem_gb(printed: float, version: str) -> float:
    """A printed GPU_mem figure in GB (1e9 bytes), whatever unit its release printed."""
    return gpu_mem_bytes(printed, version) / 1e9
