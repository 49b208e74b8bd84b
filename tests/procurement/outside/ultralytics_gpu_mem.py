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
"""

from __future__ import annotations

GIB = 2.0**30

# The first release whose _get_memory divides by 2**30 (8.3.75's wheel still divides by 1e9).
FIRST_GIB_RELEASE = (8, 3, 76)


def release(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def gpu_mem_bytes(printed: float, version: str) -> float:
    """Bytes of memory_reserved behind a printed GPU_mem figure of Ultralytics `version`."""
    return printed * (GIB if release(version) >= FIRST_GIB_RELEASE else 1e9)


def gpu_mem_gb(printed: float, version: str) -> float:
    """A printed GPU_mem figure in GB (1e9 bytes), whatever unit its release printed."""
    return gpu_mem_bytes(printed, version) / 1e9
