"""Load the bundled model architectures (procurement/data/model_architectures.json) as presets."""

from __future__ import annotations

import json
from pathlib import Path

from gpuledger.errors import LocatedInputError
from gpuledger.upsert import ChangeCount, upsert_by_natural_key
from procurement.models import ModelArchitecture
from procurement.sizing.presets import ARCHITECTURE_SHAPE_FIELDS, architecture_shape

ARCHITECTURES_FILE = Path(__file__).resolve().parent / "data" / "model_architectures.json"
REQUIRED = ["name", "params_computed", *ARCHITECTURE_SHAPE_FIELDS]


class ArchitectureFileError(LocatedInputError):
    """A bad entry of the bundled architectures file, named by file and entry."""


def architecture_slug(name: str) -> str:
    """The preset name: the model's name in lower case, e.g. 'Llama-3.1-405B' → 'llama-3.1-405b'."""
    return name.strip().lower()


def architectures_load(path: Path = ARCHITECTURES_FILE) -> ChangeCount:
    entries = json.loads(path.read_text())
    rows = [_architecture_row(path, index, entry) for index, entry in enumerate(entries)]
    return upsert_by_natural_key(ModelArchitecture, ["slug"], rows)[0]


def _architecture_row(path: Path, index: int, entry: dict) -> dict:
    missing = [key for key in REQUIRED if entry.get(key) in ("", None)]
    if missing:
        raise ArchitectureFileError(
            f"{path}: entry {index} ({entry.get('name', '?')}): field {missing[0]!r} is missing"
        )
    moe = entry.get("moe") or {}
    experts = moe.get("num_local_experts") or moe.get("num_experts") or moe.get("n_routed_experts") or 1
    return {
        "slug": architecture_slug(entry["name"]),
        "name": entry["name"],
        "hf_id": entry.get("hf_id") or "",
        "params": entry["params_computed"],
        **architecture_shape(entry),
        "max_position_embeddings": entry.get("max_position_embeddings"),
        "tie_word_embeddings": bool(entry.get("tie_word_embeddings")),
        "gated_mlp": True,
        "num_experts": experts,
        "experts_per_token": moe.get("num_experts_per_tok") or 1,
        "source": entry.get("source") or "",
    }
