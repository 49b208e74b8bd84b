"""Image-model presets (procurement/data/image_architectures.json): diffusion pipelines and detection /
vision networks with their shapes. A preset is looked up by slug or alias; `ImageArchitecture` is the
hashable handle a ModelSpec carries, `image_preset(slug)` the full entry (denoiser, text encoders, VAE)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

IMAGE_ARCHITECTURES_JSON = Path(__file__).resolve().parents[1] / "data" / "image_architectures.json"
FAMILIES = ("diffusion", "detection", "vision")


@dataclass(frozen=True)
class ImageArchitecture:
    slug: str
    name: str
    family: str  # diffusion, detection or vision
    resolution_px: int
    default_batch: int
    inference_only: bool
    source: str

    @property
    def is_diffusion(self) -> bool:
        return self.family == "diffusion"


@lru_cache(maxsize=1)
def _document() -> dict:
    return json.loads(IMAGE_ARCHITECTURES_JSON.read_text(encoding="utf-8"))


def component(name: str) -> dict:
    return _document()["components"][name]


@lru_cache(maxsize=1)
def image_presets() -> dict[str, dict]:
    """Slug and alias -> preset entry."""
    presets: dict[str, dict] = {}
    for entry in _document()["presets"]:
        for key in (entry["slug"], *entry.get("aliases", ())):
            presets[key] = entry
    return presets


def image_preset(slug: str) -> dict:
    return image_presets()[slug]


def image_architecture(name: str) -> ImageArchitecture | None:
    entry = image_presets().get(name)
    if entry is None:
        return None
    return ImageArchitecture(
        slug=entry["slug"],
        name=entry["name"],
        family=entry["family"],
        resolution_px=int(entry["resolution_px"]),
        default_batch=int(entry.get("batch", 1)),
        inference_only=bool(entry.get("inference_only")),
        source=entry["source"],
    )


def image_preset_slugs() -> list[str]:
    return sorted({entry["slug"] for entry in _document()["presets"]})
